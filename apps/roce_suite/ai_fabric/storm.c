/* SPDX-License-Identifier: BSD-3-Clause
 *
 * §7.4's PFC storm: a NIC that keeps pausing its switch port, as a stuck or broken receiver does,
 * and the protection the fabric shows against it, seen from the end hosts alone, so that the same
 * trial runs on the virtual fabric and on a real switch tier.
 *
 * Host A writes on the lossless class to the stormer S (a host of A's own switch where there is
 * one) and to the victim's receiver C, each at half of `load` of A's link. From storm.start_s,
 * S's NIC sends PFC XOFF frames on that class for storm.duration_s (the engine's PFC generator),
 * each pausing two of its intervals, so the pause never lapses. S's switch stops sending to S;
 * A's frames for S fill that switch's buffer until it pauses A's port, and then A's frames for C
 * wait as well: the storm has spread to a flow that has nothing to do with S (head-of-line
 * blocking). A PFC watchdog that sees the queue toward S paused for its detection time drops (or
 * forwards) what it holds, A's port is let go and the victim flows again; with no watchdog A stays
 * paused for as long as the storm lasts.
 *
 * Seen from the end hosts: how long A's NIC was paused on the class, the XOFF frames it received,
 * the storm's frames S sent, what the victim received against what it offered (and the storms
 * the switches' watchdogs counted, where their counters are read); the protection:
 * "immune" (no XOFF reached A), "watchdog" (A let go while the storm went on), "none" (A paused
 * for 90 % of the storm or more).
 *
 * What the virtual fabric's settings imply, and is judged there: A is paused once the frames it
 * sent toward S fill its switch's XOFF threshold (t_fill = xoff_kb / A's rate toward S). With a
 * watchdog, A is paused at most t_fill + the detection time + a margin (10 ms and the machine's
 * longest hold-up): storm_contained_by_the_watchdog. Without one, for at least the storm's length
 * less t_fill and that margin: storm_spreads_without_a_watchdog. The bounds need S on A's switch
 * (one hop to fill). On a real tier: the user's thresholds.max_storm_paused_ms.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aif_ctx.h"
#include "config_tree.h"
#include "verdict.h"

#define PFC_QUANTUM_BITS 512.0 /* one pause quantum: 512 bit times at the link's rate */
#define MARGIN_S 0.010         /* the watchdog's polling, the queue's drain, the report's clocks */

struct storm_hosts {
	unsigned a, s, c;              /* the sender, the stormer, the victim's receiver (host indices) */
	bool same_switch;              /* S on A's switch: one hop fills A's XOFF threshold */
};

struct storm_result {
	bool ran;
	double paused_s;               /* A's NIC paused on the class over the run */
	double xoff_rx;                /* XOFF frames A's NIC received */
	double storm_frames;           /* the PFC frames S's NIC sent */
	double victim_offered_gbps, victim_received_gbps;
	double held_up_s;
	double watchdog_storms;        /* the switches' count (-1: nothing counts them) */
	struct aif_fabric_view v;
};

/* A: the first host of the first switch with two or more hosts (else host 0); S: another host of
 * that switch (else host 1); C: the first host that is neither. */
static int pick_hosts(const struct aif_ctx *x, struct storm_hosts *h)
{
	const struct fabric *f = &x->fab;

	if (f->n_hosts < 3)
		return -1;
	h->a = 0, h->s = 1, h->same_switch = false;
	for (unsigned i = 0; i < f->n_hosts && !h->same_switch; i++)
		for (unsigned j = i + 1; j < f->n_hosts && !h->same_switch; j++)
			if (f->nics[f->hosts[i].first_nic].sw == f->nics[f->hosts[j].first_nic].sw)
				h->a = i, h->s = j, h->same_switch = true;
	for (h->c = 0; h->c == h->a || h->c == h->s; h->c++)
		;
	return 0;
}

/* The storm's PFC generator on S's port: rate_pps (0: enough that the longest pause, 65,535
 * quanta at the link's rate, is refreshed four times over, and at least 1,000 a second), each
 * frame pausing two intervals. */
static void add_storm(struct aif_trial *t, const struct aif_ctx *x, const struct storm_hosts *h, double *rate_out,
		      unsigned *quanta_out)
{
	const struct aif_storm_cfg *sc = &x->c->deadlock.storm;
	double bps = x->host_gbps * 1e9, longest_s = 65535 * PFC_QUANTUM_BITS / bps;
	double rate = sc->rate_pps > 0 ? sc->rate_pps : fmax(1000, 4 / longest_s);
	unsigned quanta = (unsigned)fmin(65535, ceil(2 / rate * bps / PFC_QUANTUM_BITS));
	config_setting_t *list = config_setting_add(config_root_setting(&t->cfg), "pfc_generators", CONFIG_TYPE_LIST);
	config_setting_t *g = config_setting_add(list, NULL, CONFIG_TYPE_GROUP), *prio;

	cfg_set_string(g, "port", x->fab.nics[x->fab.hosts[h->s].first_nic].name);
	prio = config_setting_add(g, "priorities", CONFIG_TYPE_ARRAY);
	config_setting_set_int(config_setting_add(prio, NULL, CONFIG_TYPE_INT), (int)x->c->deadlock.priority);
	cfg_set_int(g, "quanta", quanta);
	cfg_set_float(g, "rate_pps", rate);
	cfg_set_float(g, "start_s", sc->start_s);
	cfg_set_int(g, "count", (long long)ceil(rate * sc->duration_s));
	*rate_out = rate;
	*quanta_out = quanta;
}

/* The storms the switches' PFC watchdogs found on the class: the virtual fabric's ports, or a real
 * tier's counters (`watchdog_storms` per direction and priority); -1 where nothing counts them. */
static double watchdog_storms(const json_t *rep, unsigned prio)
{
	const json_t *fab = json_object_get(rep, "fabric"), *e, *p, *v;
	double n = 0;
	bool counted = false;
	size_t i, k;

	json_array_foreach(json_object_get(fab, "switches"), i, e)
		json_array_foreach(json_object_get(e, "ports"), k, p)
			if ((v = json_object_get(json_object_get(p, "watchdog"), "storms"))) {
				counted = true;
				n += json_number_value(json_array_get(v, prio));
			}
	if (json_is_true(json_object_get(fab, "external")))
		json_array_foreach(json_object_get(fab, "links"), i, e)
			for (unsigned d = 0; d < 2; d++)
				if ((v = json_object_get(json_object_get(e, d ? "b_to_a" : "a_to_b"), "watchdog_storms"))) {
					counted = true;
					n += json_number_value(json_array_get(v, prio));
				}
	return counted ? n : -1;
}

/* A port's figure `key` (an array per priority) at priority p, from the trial's report. */
static double port_figure(const json_t *rep, const char *port, const char *key, unsigned p)
{
	const json_t *o;
	size_t i;

	json_array_foreach(json_object_get(rep, "ports"), i, o)
		if (!strcmp(json_string_value(json_object_get(o, "name")) ?: "", port))
			return json_number_value(json_array_get(json_object_get(o, key), p));
	return 0;
}

static void storm_trial(struct aif_ctx *x, const struct storm_hosts *h, struct storm_result *r, json_t *res)
{
	const struct aif_deadlock_cfg *dc = &x->c->deadlock;
	struct aif_flow f = { .message_size = dc->message_size, .priority = dc->priority };
	const unsigned to_s[1][2] = { { h->a, h->s } }, to_c[1][2] = { { h->a, h->c } };
	struct flow_set fs = { .names = { "ss-*", "sv-*" }, .n = 2 }, victim = aif_entry_flows("sv");
	const char *nic_a = x->fab.nics[x->fab.hosts[h->a].first_nic].name;
	const char *nic_s = x->fab.nics[x->fab.hosts[h->s].first_nic].name;
	struct metrics m, mv;
	struct aif_trial t;
	struct trial tr;
	unsigned quanta;
	double rate;

	memset(r, 0, sizeof(*r));
	f.rate_gbps = dc->load / 2 * aif_link_frame_gbps(x->host_gbps, dc->message_size);
	aif_trial_init(&t, x);
	aif_trial_pairs(&t, x, "ss", to_s, 1, 1, &f);
	aif_trial_pairs(&t, x, "sv", to_c, 1, 1, &f);
	add_storm(&t, x, h, &rate, &quanta);
	json_object_set_new(res, "storm_rate_pps", json_real(rate));
	json_object_set_new(res, "storm_quanta", json_integer(quanta));
	trial_init(&tr, "deadlock", "PFC storm from %s on class %u for %g s, %s writing to it and to %s", nic_s, dc->priority,
		   dc->storm.duration_s, nic_a, x->fab.hosts[h->c].name);
	tr.duration_s = dc->storm.start_s + dc->storm.duration_s + dc->storm.tail_s;
	if (trial_measure(x->rn, &t.cfg, &tr, &fs, &m) == 0 && metrics_read(tr.report, &victim, &mv) == 0) {
		aif_fabric_read(tr.report, &r->v);
		aif_fabric_to_json(&r->v, tr.record);
		r->paused_s = port_figure(tr.report, nic_a, "paused_ns", dc->priority) / 1e9;
		r->xoff_rx = port_figure(tr.report, nic_a, "pfc_rx_xoff", dc->priority);
		r->storm_frames = port_figure(tr.report, nic_s, "pfc_tx", dc->priority);
		r->victim_offered_gbps = f.rate_gbps;
		r->victim_received_gbps = metrics_received_gbps(&mv, aif_frame_bytes(dc->message_size));
		r->held_up_s = m.held_up_ms / 1e3;
		r->watchdog_storms = watchdog_storms(tr.report, dc->priority);
		r->ran = true;
		trial_verdict(x->rn, &tr, "info", "%s paused %.1f ms; the victim received %.4f of %.4f Gb/s", nic_a,
			      r->paused_s * 1e3, r->victim_received_gbps, r->victim_offered_gbps);
	}
	trial_release(&tr);
	aif_trial_free(&t);
}

/* The PFC threshold of A's switch, in bytes (the suite's switch group, its tier's over it), or -1. */
static double xoff_bytes(const struct aif_ctx *x, unsigned host)
{
	const struct fab_switch *sw = &x->fab.switches[x->fab.nics[x->fab.hosts[host].first_nic].sw];
	const config_setting_t *p = NULL;
	char path[64];
	double kb;

	text_printf(path, sizeof(path), "switch.%s.pfc", fabric_tier_name(sw->tier));
	if (!(p = config_lookup(&x->s->text, path)))
		p = config_lookup(&x->s->text, "switch.pfc");
	if (!p || !config_setting_get_member(p, "xoff_kb"))
		return -1;
	kb = cfg_number(p, "xoff_kb", -1);
	return kb * 1024;
}

/* "immune": no XOFF reached the sender; "none": it stayed paused for most of the storm (90 %);
 * "watchdog": it was let go while the storm went on. */
static const char *protection(const struct aif_ctx *x, const struct storm_result *r)
{
	if (r->xoff_rx == 0)
		return "immune";
	return r->paused_s < 0.9 * x->c->deadlock.storm.duration_s ? "watchdog" : "none";
}

static void judge(struct aif_ctx *x, const struct storm_hosts *h, const struct storm_result *r, json_t *res)
{
	const struct aif_storm_cfg *sc = &x->c->deadlock.storm;
	double detect_s = aif_watchdog_detect_s(x), xoff = xoff_bytes(x, h->a);
	double to_s_bps = r->victim_offered_gbps * 1e9 / 8; /* (both flows offer the same) */
	double fill_s = xoff > 0 ? xoff / to_s_bps : NAN, slack = MARGIN_S + r->held_up_s;

	json_object_set_new(res, "fill_ms", isfinite(fill_s) ? json_real(fill_s * 1e3) : json_null());
	if (x->c->external || !h->same_switch || !isfinite(fill_s))
		return;
	if (detect_s > 0)
		suite_verdict(x->rn, r->paused_s <= fill_s + detect_s + slack, "storm_contained_by_the_watchdog",
			      "the storm paused the sender %.1f ms: at most its %.1f ms to fill the XOFF threshold, the "
			      "watchdog's %.0f ms and %.1f ms", r->paused_s * 1e3, fill_s * 1e3, detect_s * 1e3, slack * 1e3);
	else
		suite_verdict(x->rn, r->paused_s >= sc->duration_s - fill_s - slack, "storm_spreads_without_a_watchdog",
			      "with no watchdog the storm paused the sender %.1f ms: at least the storm's %.0f ms less "
			      "%.1f ms to fill the XOFF threshold and %.1f ms", r->paused_s * 1e3, sc->duration_s * 1e3,
			      fill_s * 1e3, slack * 1e3);
}

json_t *aif_storm(struct aif_ctx *x)
{
	const struct aif_storm_cfg *sc = &x->c->deadlock.storm;
	struct storm_hosts h;
	struct storm_result r;
	json_t *res;
	const char *prot;

	if (pick_hosts(x, &h)) {
		aif_anomaly(x, AIF_DEADLOCK, "storm: not run: it needs three hosts");
		return json_null();
	}
	res = json_pack("{s:s,s:s,s:s,s:f,s:f}", "sender", x->fab.hosts[h.a].name, "stormer", x->fab.hosts[h.s].name,
			"victim_receiver", x->fab.hosts[h.c].name, "start_s", sc->start_s, "duration_s", sc->duration_s);
	storm_trial(x, &h, &r, res);
	json_object_set_new(res, "ran", json_boolean(r.ran));
	if (!r.ran)
		return res;
	prot = protection(x, &r);
	json_object_set_new(res, "sender_paused_ms", json_real(r.paused_s * 1e3));
	json_object_set_new(res, "sender_xoff_rx", json_real(r.xoff_rx));
	json_object_set_new(res, "storm_frames", json_real(r.storm_frames));
	json_object_set_new(res, "victim_offered_gbps", json_real(r.victim_offered_gbps));
	json_object_set_new(res, "victim_received_gbps", json_real(r.victim_received_gbps));
	json_object_set_new(res, "protection", json_string(prot));
	json_object_set_new(res, "watchdog_storms", r.watchdog_storms >= 0 ? json_real(r.watchdog_storms) : json_null());
	aif_fabric_to_json(&r.v, res);
	printf("  storm from %s for %.0f ms: %s paused %.1f ms (%.0f XOFF received), the victim %s got %.4f of %.4f Gb/s: %s\n",
	       x->fab.hosts[h.s].name, sc->duration_s * 1e3, x->fab.hosts[h.a].name, r.paused_s * 1e3, r.xoff_rx,
	       x->fab.hosts[h.c].name, r.victim_received_gbps, r.victim_offered_gbps, prot);
	if (!strcmp(prot, "none"))
		aif_anomaly(x, AIF_DEADLOCK, "a PFC storm from %s paused %s for the storm's length: no protection",
			    x->fab.hosts[h.s].name, x->fab.hosts[h.a].name);
	if (r.v.machine_limited) {
		machine_limit(x->rn, res, "storm: machine-limited (%s): the pause is partly the CPU's", aif_machine_reason(x));
		return res;
	}
	judge(x, &h, &r, res);
	aif_threshold(x, AIF_DEADLOCK, "storm_paused_ms", r.paused_s * 1e3, x->c->th.max_storm_paused_ms, true,
		      "the sender paused by a PFC storm");
	return res;
}

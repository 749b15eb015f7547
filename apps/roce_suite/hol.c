/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The hol suite, after RFC 8239's head-of-line blocking test, across priorities under PFC. Host
 * h0 sends a congestor flow (priority P) to port rx and one victim flow per victim priority to
 * port ry, which stays uncongested. In the congested trials, hosts c1..cK also send to rx at
 * priority P: rx's queue grows, and with PFC on P the switch pauses P at its ingress ports, h0's
 * included. A victim of priority P then waits behind its own host's paused congestor traffic
 * (head-of-line blocking), a victim of another priority does not. Each case (PFC on / off) runs a
 * baseline trial (no c hosts) and a congested one; the table gives each victim class's goodput in
 * both and the degradation.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab.h"
#include "metrics.h"
#include "suite.h"
#include "trial.h"
#include "verdict.h"

#define HOL_THRESHOLD_PCT 10.0    /* a victim losing more than this much goodput is blocked */

struct hol_trial {
	bool ran;
	struct metrics victim[8], cong;
	double h0_paused_ms[8];
	uint64_t xoff, dropped;
	struct machine busy;          /* the machine check (machine_of) */
};

static double congestor_gbps(const struct suite_cfg *s)
{
	return s->hol.congestor_gbps ? s->hol.congestor_gbps : 0.9 * link_frame_gbps(s->lab.link_gbps, s->hol.frame_size);
}

static double victim_gbps(const struct suite_cfg *s)
{
	return s->hol.victim_gbps ? s->hol.victim_gbps
				  : 0.5 * link_frame_gbps(s->lab.link_gbps, s->hol.frame_size) / s->hol.n_victims;
}

/* PFC on: the suite's pfc group, or one making the congested priority lossless; off: none. */
static void set_pfc(struct lab *l, const struct suite_cfg *s, bool on)
{
	config_setting_t *sw = config_lookup(&l->cfg, "switch"), *pfc, *pr;

	if (!on) {
		cfg_remove(sw, "pfc");
		return;
	}
	if (config_setting_get_member(sw, "pfc"))
		return;
	pfc = cfg_group(sw, "pfc");
	pr = config_setting_add(pfc, "priorities", CONFIG_TYPE_ARRAY);
	config_setting_set_int(config_setting_add(pr, NULL, CONFIG_TYPE_INT), (int)s->hol.congested_priority);
}

static void build(const struct suite_cfg *s, bool pfc, bool congested, struct lab *l)
{
	const struct hol_cfg *c = &s->hol;
	unsigned payload = c->frame_size - ROCE_FRAME_OVERHEAD, mtu = ib_mtu_for(payload);
	struct lab_flow f = { .from = "h0", .to = "rx", .transport = "uc", .op = "send", .message_size = payload,
			      .ib_mtu = mtu, .priority = c->congested_priority, .rate_gbps = congestor_gbps(s) };
	char host[16], name[24];

	lab_init(l, s);
	set_pfc(l, s, pfc);
	lab_add_host(l, "h0", s->lab.host_gbps);
	for (unsigned i = 1; i <= c->congestors; i++) {
		snprintf(host, sizeof(host), "c%u", i);
		lab_add_host(l, host, s->lab.host_gbps);
	}
	lab_add_host(l, "rx", s->lab.link_gbps);
	lab_add_host(l, "ry", s->lab.link_gbps);
	f.name = "cong-h0";
	lab_add_flow(l, &f);
	for (unsigned i = 1; congested && i <= c->congestors; i++) {
		snprintf(host, sizeof(host), "c%u", i);
		snprintf(name, sizeof(name), "cong-c%u", i);
		f.name = name;
		f.from = host;
		lab_add_flow(l, &f);
	}
	for (unsigned v = 0; v < c->n_victims; v++) {
		snprintf(name, sizeof(name), "victim-p%u", c->victim_priorities[v]);
		lab_add_flow(l, &(struct lab_flow){ .name = name, .from = "h0", .to = "ry", .transport = "uc",
						    .op = "send", .message_size = payload, .ib_mtu = mtu,
						    .priority = c->victim_priorities[v], .rate_gbps = victim_gbps(s) });
	}
	lab_finish(l, s);
}

static void read_trial(const struct suite_cfg *s, const json_t *rep, struct hol_trial *h)
{
	struct flow_set fs = { .n = 1 }, cong = { .n = 0 };
	char names[8][24], cnames[8][16];
	struct metrics h0;

	snprintf(cnames[0], sizeof(cnames[0]), "cong-h0");
	cong.names[cong.n++] = cnames[0];
	for (unsigned i = 1; i <= s->hol.congestors && i < 8; i++) {
		snprintf(cnames[i], sizeof(cnames[i]), "cong-c%u", i);
		cong.names[cong.n++] = cnames[i];
	}
	metrics_read(rep, &cong, &h->cong);
	for (unsigned v = 0; v < s->hol.n_victims; v++) {
		snprintf(names[v], sizeof(names[v]), "victim-p%u", s->hol.victim_priorities[v]);
		fs.names[0] = names[v];
		metrics_read(rep, &fs, &h->victim[v]);
	}
	/* h0's own paused time: the shared ingress held by PFC */
	fs.names[0] = "cong-h0";
	metrics_read(rep, &fs, &h0);
	memcpy(h->h0_paused_ms, h0.paused_ms, sizeof(h->h0_paused_ms));
	h->xoff = h0.sw_xoff;
	h->dropped = h0.sw_dropped;
}

/* What the trial's ports carried of their load, up to the link: the baseline's rx and ry (nothing
 * is congested, each should get what is offered), the congested trial's rx only (overloaded, it
 * should run at its link's rate; ry's victims are what the suite measures). The worse of the two. */
static struct machine machine_of(const struct suite_cfg *s, const struct hol_trial *h, bool congested)
{
	unsigned frame = s->hol.frame_size;
	double capacity = link_frame_gbps(s->lab.link_gbps, frame), victims = 0;
	struct machine rx = machine_judge(metrics_received_gbps(&h->cong, frame),
					  fmin((1 + (congested ? s->hol.congestors : 0)) * congestor_gbps(s), capacity),
					  &h->cong),
		       ry;

	if (congested)
		return rx;
	for (unsigned v = 0; v < s->hol.n_victims; v++)
		victims += metrics_received_gbps(&h->victim[v], frame);
	ry = machine_judge(victims, fmin(s->hol.n_victims * victim_gbps(s), capacity), &h->cong);
	return ry.pct < rx.pct ? ry : rx;
}

static struct hol_trial run(struct runner *rn, const struct suite_cfg *s, bool pfc, bool congested)
{
	struct hol_trial h = { 0 };
	struct metrics all;
	struct trial t;
	struct lab l;

	trial_init(&t, congested ? "congested" : "baseline", "PFC %s, %s", pfc ? "on" : "off",
		   congested ? "congested" : "baseline");
	json_object_set_new(t.params, "pfc", json_boolean(pfc));
	json_object_set_new(t.params, "congested", json_boolean(congested));
	json_object_set_new(t.params, "congestor_gbps", json_real(congestor_gbps(s)));
	json_object_set_new(t.params, "victim_gbps", json_real(victim_gbps(s)));
	build(s, pfc, congested, &l);
	if (!rn->stop && !trial_measure(rn, &l.cfg, &t, NULL, &all)) {
		h.ran = true;
		read_trial(s, t.report, &h);
		h.busy = machine_of(s, &h, congested);
		trial_verdict(rn, &t, "info", "victims %.3f Gb/s, congestors %.3f Gb/s, h0 paused %.1f ms at priority %u",
			      all.goodput_gbps - h.cong.goodput_gbps, h.cong.goodput_gbps,
			      h.h0_paused_ms[s->hol.congested_priority], s->hol.congested_priority);
	}
	lab_free(&l);
	trial_release(&t);
	return h;
}

static json_t *class_row(struct runner *rn, const struct suite_cfg *s, bool pfc, unsigned v, const struct hol_trial *b,
			 const struct hol_trial *c)
{
	unsigned p = s->hol.victim_priorities[v];
	double base = b->victim[v].goodput_gbps, cong = c->victim[v].goodput_gbps;
	/* goodput is payload: the offered rate in the same unit */
	double offered = victim_gbps(s) * (s->hol.frame_size - ROCE_FRAME_OVERHEAD) / s->hol.frame_size;
	double degr = b->ran && c->ran && base > 0 ? 100 * (1 - cong / base) : NAN;
	bool blocked = degr > HOL_THRESHOLD_PCT;
	/* PFC pauses the congested priority at h0's ingress, its victim with it; nothing else */
	bool expected = pfc && p == s->hol.congested_priority;
	const char *why = expected ? "blocking expected: PFC pauses this priority at h0"
			  : pfc    ? "no blocking expected: PFC pauses another priority"
				   : "no blocking expected: without PFC the congestors' excess is dropped";

	printf("  %-3s  %8u%s  %11.4f  %13.4f  %14.4f  %13.1f  %11llu  %14.1f  %s\n", pfc ? "on" : "off", p,
	       p == s->hol.congested_priority ? "*" : " ", offered, base, cong, degr,
	       (unsigned long long)c->victim[v].lost, c->h0_paused_ms[p], !(b->ran && c->ran) ? "error"
										 : blocked ? "HOL blocking"
											   : "none");
	if (b->ran && c->ran)
		suite_verdict(rn, !blocked || expected, "pfc_per_priority",
			      "PFC %s, victim priority %u: degradation %.1f %% (%s)", pfc ? "on" : "off", p, degr, why);
	return json_pack("{s:b,s:i,s:b,s:f,s:f,s:f,s:o,s:I,s:I,s:f,s:s,s:b,s:b}", "pfc", pfc, "priority", p,
			 "same_as_congestor", p == s->hol.congested_priority, "offered_goodput_gbps", offered, "baseline_gbps",
			 base, "congested_gbps", cong, "degradation_pct", isnan(degr) ? json_null() : json_real(degr),
			 "lost_baseline", (json_int_t)b->victim[v].lost, "lost_congested", (json_int_t)c->victim[v].lost,
			 "paused_ms", c->h0_paused_ms[p], "verdict", !(b->ran && c->ran) ? "error" : blocked ? "hol_blocking" : "none",
			 "expected_blocking", expected, "machine_limited", b->busy.limited || c->busy.limited);
}

int suite_hol(struct runner *rn, const struct suite_cfg *s, json_t *out)
{
	const struct hol_cfg *c = &s->hol;
	struct hol_trial base[2], cong[2];
	json_t *rows, *cases;

	for (unsigned k = 0; k < c->n_cases; k++) {
		base[k] = run(rn, s, c->pfc_cases[k], false);
		cong[k] = run(rn, s, c->pfc_cases[k], true);
	}
	if (runner_refused(rn))
		return -1;
	rows = json_array();
	cases = json_array();
	printf("\nRFC 8239 head-of-line blocking: h0 sends to congested rx (priority %u, %.3f Gb/s) and victims to idle ry;"
	       " %u host%s congest rx; Gb/s of payload\n"
	       "  PFC  priority  offered Gb/s  baseline Gb/s  congested Gb/s  degradation %%  lost (cong)  h0 paused ms  "
	       "verdict\n", c->congested_priority, congestor_gbps(s), c->congestors, c->congestors == 1 ? "" : "s");
	for (unsigned k = 0; k < c->n_cases; k++) {
		json_t *baseline = json_object(), *congested = json_object();
		const char *pfc = c->pfc_cases[k] ? "on" : "off";

		for (unsigned v = 0; v < c->n_victims; v++)
			json_array_append_new(rows, class_row(rn, s, c->pfc_cases[k], v, &base[k], &cong[k]));
		machine_record(rn, baseline, &base[k].busy, "PFC %s, baseline (rx and ry)", pfc);
		machine_record(rn, congested, &cong[k].busy, "PFC %s, congested (rx)", pfc);
		json_array_append_new(cases, json_pack("{s:b,s:f,s:f,s:I,s:I,s:I,s:o,s:o}", "pfc", c->pfc_cases[k],
						       "congestor_baseline_gbps", base[k].cong.goodput_gbps,
						       "congestor_congested_gbps", cong[k].cong.goodput_gbps, "xoff_tx",
						       (json_int_t)cong[k].xoff, "switch_dropped", (json_int_t)cong[k].dropped,
						       "congestor_lost", (json_int_t)cong[k].cong.lost, "baseline", baseline,
						       "congested", congested));
	}
	printf("  (* the congested priority)\n");
	for (unsigned k = 0; k < c->n_cases; k++)
		printf("  PFC %-3s congestors: %.4f Gb/s baseline, %.4f Gb/s congested; switch XOFF %llu, drops %llu\n",
		       c->pfc_cases[k] ? "on" : "off", base[k].cong.goodput_gbps, cong[k].cong.goodput_gbps,
		       (unsigned long long)cong[k].xoff, (unsigned long long)cong[k].dropped);
	json_object_set_new(out, "hol", json_pack("{s:i,s:i,s:f,s:f,s:f,s:o,s:o}", "congested_priority",
						  c->congested_priority, "congestors", c->congestors, "congestor_gbps",
						  congestor_gbps(s), "victim_gbps", victim_gbps(s), "threshold_pct",
						  HOL_THRESHOLD_PCT, "classes", rows, "cases", cases));
	return rn->stop ? -1 : 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * §7.2 PFC under N:1 incast: N hosts send RDMA WRITEs at their line rate, on the lossless class,
 * to one host, for each N of pfc_incast.ratios. The destination is the fabric's last host and
 * the senders are taken leaf by leaf in turn (the first other leaf's first host, the next
 * leaf's, ...), so that from N = 2 on the incast comes over the spines as well as from the
 * destination's own leaf, and a pause can spread hop by hop: the destination's leaf pauses its
 * own hosts and the spines, the spines pause the senders' leaves, those leaves their hosts.
 *
 * Per N, from the engine's fabric report: what the destination received against its link, the
 * frames the switches dropped (a lossless class drops nothing while its headroom holds), and per
 * hop (the direction of a link, named by the tiers of its two ends: "leaf->nic" is a leaf pausing
 * the hosts it receives from) the XOFF frames the receiving end sent, per second, the links it
 * paused, and the longest and mean time their senders were paused; the PFC watchdog's storms
 * where the switches have one. The storm onset is the smallest N whose trial saw a storm, and the
 * spread the number of hops that paused.
 *
 * On a real switch tier (fabric.external) the hops inside it are its own counters. Always seen:
 * the switches' pausing of the NICs ("switch->nic"), from the NICs' ports (the XOFF frames each
 * received, the time each was paused). Where external.counters_command gives a link direction's
 * `pfc_xoff_sent` (a list per priority, as the virtual fabric's links: the XOFF frames the
 * direction's receiving end sent) the tier's own hops are read from it as on the virtual fabric
 * ("spine->leaf", "leaf->nic", ...; `paused_ns` where it has one). The frames lost are the
 * flows' (sent, never received); the watchdog's storms are the switches' (null).
 *
 * What the settings imply, and is judged: the destination receives at most its link's rate; and
 * nothing is dropped, unless the machine could not keep pace (the lab's PFC is lossless only
 * while its lcore keeps up with its links: then an anomaly, not a verdict).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aif_ctx.h"
#include "verdict.h"

#define MAX_HOPS 8

struct hop {
	char name[24];                  /* "leaf->nic": the pausing end's tier, then the paused one's */
	uint64_t xoff;                  /* XOFF frames the receiving ends sent */
	unsigned links_paused, links;   /* directions of this hop that paused, and carried frames */
	double paused_max_ms, paused_sum_ms;
};

struct incast_result {
	double received_gbps, share, duration_s, drop_ppm;
	uint64_t dropped, storms;
	struct hop hops[MAX_HOPS];
	unsigned n_hops;
	struct aif_fabric_view v;
	bool ran;
};

/* The tier of a link end by its name: "nic", or its switch's tier. */
static const char *end_tier(const struct aif_ctx *x, const char *name)
{
	static const char *const tiers[] = { "nic", "leaf", "spine", "core" };
	int s = name ? fabric_switch_by_name(&x->fab, name) : -1;

	return s < 0 ? "nic" : tiers[x->fab.switches[s].tier < FAB_TIERS ? x->fab.switches[s].tier : 0];
}

static struct hop *hop_of(struct incast_result *r, const char *name)
{
	for (unsigned k = 0; k < r->n_hops; k++)
		if (!strcmp(r->hops[k].name, name))
			return &r->hops[k];
	if (r->n_hops == MAX_HOPS)
		return NULL;
	snprintf(r->hops[r->n_hops].name, sizeof(r->hops[0].name), "%s", name);
	return &r->hops[r->n_hops++];
}

/* One direction of a link into hop h: the XOFF frames its receiving end sent, its sender's paused time. */
static void hop_add(struct hop *h, uint64_t xoff, double paused_ms)
{
	h->links++;
	h->xoff += xoff;
	h->links_paused += xoff > 0;
	h->paused_max_ms = fmax(h->paused_max_ms, paused_ms);
	h->paused_sum_ms += paused_ms;
}

/* A real switch tier's pauses as the NICs saw them: each port's XOFF frames received at `prio`
 * and its paused time, one hop "switch->nic". */
static void read_nic_pauses(const json_t *rep, unsigned prio, struct incast_result *r)
{
	struct hop *h = hop_of(r, "switch->nic");
	const json_t *p;
	size_t i;

	json_array_foreach(json_object_get(rep, "ports"), i, p) {
		uint64_t xoff = (uint64_t)json_number_value(json_array_get(json_object_get(p, "pfc_rx_xoff"), prio));
		double paused_ms = json_number_value(json_array_get(json_object_get(p, "paused_ns"), prio)) / 1e6;
		if (h && (ju64(p, "tx_packets") || xoff))
			hop_add(h, xoff, paused_ms);
	}
}

/* Direction d of link l (fabric.links): its sending end (from) and receiving end (to), as the
 * virtual fabric names them, or on a real tier from the link's name (a: its switch); false if
 * unknown. */
static bool direction_ends(const struct aif_ctx *x, const json_t *l, unsigned d, const char **from, const char **to)
{
	const json_t *dir = json_object_get(l, d ? "b_to_a" : "a_to_b");
	const char *name = json_string_value(json_object_get(l, "name"));
	int k = name ? fabric_link_by_name(&x->fab, name) : -1;
	const char *a, *b;

	*from = json_string_value(json_object_get(dir, "from"));
	*to = json_string_value(json_object_get(dir, "to"));
	if (*from && *to)
		return true;
	if (k < 0)
		return false;
	a = x->fab.switches[x->fab.links[k].sw].name;
	b = x->fab.links[k].to_nic ? x->fab.nics[x->fab.links[k].b].name : x->fab.switches[x->fab.links[k].b].name;
	*from = d ? b : a;
	*to = d ? a : b;
	return true;
}

/* Every direction of every link (the virtual fabric's; a real tier's, counted, where
 * counters_command gives pfc_xoff_sent): its receiving end's XOFF at `prio`, its sender's paused
 * time; the hop named by the pausing end's tier, then the paused one's. */
static void read_hops(const struct aif_ctx *x, const json_t *rep, unsigned prio, bool counted, struct incast_result *r)
{
	const json_t *l;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(rep, "fabric"), "links"), i, l)
		for (unsigned d = 0; d < 2; d++) {
			const json_t *dir = json_object_get(l, d ? "b_to_a" : "a_to_b");
			const json_t *sent = json_object_get(dir, "pfc_xoff_sent");
			uint64_t xoff = (uint64_t)json_number_value(json_array_get(sent, prio));
			double paused_ms = json_number_value(json_array_get(json_object_get(dir, "paused_ns"), prio)) / 1e6;
			const char *from, *to;
			char name[24];
			struct hop *h;

			if ((counted && !json_is_array(sent)) || (!ju64(dir, "frames") && !ju64(dir, "bytes") && !xoff) ||
			    !direction_ends(x, l, d, &from, &to))
				continue;
			snprintf(name, sizeof(name), "%s->%s", end_tier(x, to), end_tier(x, from));
			if ((h = hop_of(r, name)))
				hop_add(h, xoff, paused_ms);
		}
}

/* The PFC watchdog's storms, every switch port and priority (0 without a watchdog). */
static uint64_t storms(const json_t *rep)
{
	const json_t *s, *p;
	size_t i, k;
	uint64_t n = 0;

	json_array_foreach(json_object_get(json_object_get(rep, "fabric"), "switches"), i, s)
		json_array_foreach(json_object_get(s, "ports"), k, p)
			n += (uint64_t)jsum(json_object_get(p, "watchdog"), "storms");
	return n;
}

static void incast_trial(struct aif_ctx *x, unsigned n, struct incast_result *r)
{
	const struct aif_pfc_incast_cfg *pc = &x->c->pfc_incast;
	struct aif_flow f = { .message_size = pc->message_size, .priority = pc->priority };
	struct flow_set fs = aif_entry_flows("incast");
	struct aif_trial t;
	struct trial tr;
	struct metrics m;
	unsigned dst;

	memset(r, 0, sizeof(*r));
	aif_trial_init(&t, x);
	dst = aif_trial_incast(&t, x, "incast", n, false, &f);
	trial_init(&tr, "pfc_incast", "%u:1 incast into %s", n, x->fab.hosts[dst].name);
	if (trial_measure(x->rn, &t.cfg, &tr, &fs, &m) == 0) {
		aif_fabric_read(tr.report, &r->v);
		aif_fabric_to_json(&r->v, tr.record);
		if (r->v.external) {
			read_nic_pauses(tr.report, pc->priority, r);
			read_hops(x, tr.report, pc->priority, true, r);
			r->dropped = m.lost;
		} else {
			read_hops(x, tr.report, pc->priority, false, r);
			r->storms = storms(tr.report);
			r->dropped = r->v.dropped;
		}
		r->duration_s = m.duration_s;
		r->received_gbps = metrics_received_gbps(&m, aif_frame_bytes(pc->message_size));
		r->share = r->received_gbps / x->host_gbps;
		r->drop_ppm = kpi_ppm((double)r->dropped, (double)m.sent);
		r->ran = true;
		trial_verdict(x->rn, &tr, "info", "%.3f Gb/s received, %llu XOFF, %llu dropped", r->received_gbps,
			      (unsigned long long)r->v.pfc_xoff, (unsigned long long)r->dropped);
	}
	trial_release(&tr);
	aif_trial_free(&t);
}

/* The hops of one incast; each also into per_hop (the category's table of every N's hops). */
static json_t *hops_json(unsigned n, const struct incast_result *r, json_t *per_hop)
{
	json_t *a = json_array();

	for (unsigned k = 0; k < r->n_hops; k++) {
		const struct hop *h = &r->hops[k];
		json_t *row = json_pack("{s:i,s:s,s:I,s:f,s:i,s:i,s:f,s:f}", "ratio", (int)n, "hop", h->name, "xoff", (json_int_t)h->xoff,
						   "xoff_per_s", r->duration_s > 0 ? (double)h->xoff / r->duration_s : 0.0,
						   "links_paused", (int)h->links_paused, "links", (int)h->links,
						   "paused_max_ms", h->paused_max_ms, "paused_mean_ms",
						   h->links ? h->paused_sum_ms / h->links : 0.0);
		json_array_append_new(per_hop, json_deep_copy(row));
		json_object_del(row, "ratio");
		json_array_append_new(a, row);
	}
	return a;
}

static unsigned hops_paused(const struct incast_result *r)
{
	unsigned n = 0;

	for (unsigned k = 0; k < r->n_hops; k++)
		n += r->hops[k].xoff > 0;
	return n;
}

static json_t *incast_row(struct aif_ctx *x, unsigned n, const struct incast_result *r, json_t *per_hop)
{
	json_t *row = json_pack("{s:i,s:b}", "ratio", (int)n, "ran", r->ran);

	if (!r->ran)
		return row;
	json_object_set_new(row, "received_gbps", json_real(r->received_gbps));
	json_object_set_new(row, "link_share", json_real(r->share));
	json_object_set_new(row, "dropped", json_integer((json_int_t)r->dropped));
	json_object_set_new(row, "drop_ppm", json_real(r->drop_ppm));
	json_object_set_new(row, "hops", hops_json(n, r, per_hop));
	json_object_set_new(row, "hops_paused", json_integer(hops_paused(r)));
	json_object_set_new(row, "watchdog_storms", r->v.external ? json_null() : json_integer((json_int_t)r->storms));
	json_object_set_new(row, "dropped_where", json_string(r->v.external ? "lost by the flows (sent, never received)"
									: "the switches' counters"));
	aif_fabric_to_json(&r->v, row);
	printf("  %5u:1  %12.4f  %6.1f %%  %8llu  %5u  %7llu\n", n, r->received_gbps, 100 * r->share,
	       (unsigned long long)r->dropped, hops_paused(r), (unsigned long long)r->storms);
	suite_verdict(x->rn, r->received_gbps <= x->host_gbps * 1.02 + 1e-9, "incast_within_link",
		      "%u:1 incast: the destination received %.4f Gb/s, at most its link's %g", n, r->received_gbps,
		      x->host_gbps);
	if (r->v.machine_limited) {
		machine_limit(x->rn, row, "%u:1 incast: machine-limited (%s): its pauses and losses are the machine's, "
			      "not the fabric's", n, aif_machine_reason(x));
		if (r->dropped)
			aif_anomaly(x, AIF_PFC_INCAST, "%u:1 incast: %llu frames dropped on the lossless class while the "
				    "machine could not keep pace", n, (unsigned long long)r->dropped);
		return row;
	}
	suite_verdict(x->rn, r->dropped == 0, "incast_lossless", "%u:1 incast on lossless priority %u: %llu frames "
		      "dropped (PFC with headroom drops none)", n, x->c->pfc_incast.priority, (unsigned long long)r->dropped);
	aif_threshold(x, AIF_PFC_INCAST, "drop_ppm", r->drop_ppm, x->c->th.max_drop_ppm, true, "N:1 incast");
	return row;
}

/* The largest N's received rate, run again for its CV. */
static void incast_repeat(struct aif_ctx *x, unsigned n, const struct incast_result *first)
{
	double v[100];
	unsigned k = 0;

	if (!first->ran)
		return;
	v[k++] = first->received_gbps;
	while (k < x->c->repeats && k < 100 && !x->rn->stop) {
		struct incast_result r;
		incast_trial(x, n, &r);
		if (!r.ran)
			break;
		v[k++] = r.received_gbps;
	}
	aif_repeatability(x, AIF_PFC_INCAST, "incast_received_gbps", "Gb/s", v, k);
}

int aif_pfc_incast(struct aif_ctx *x)
{
	const struct aif_pfc_incast_cfg *pc = &x->c->pfc_incast;
	double xs[AIF_MAX_LIST], recv[AIF_MAX_LIST], xoff_rate[MAX_HOPS][AIF_MAX_LIST];
	char hop_names[MAX_HOPS][24];
	unsigned n_rows = 0, n_hop_names = 0, last_n = 0;
	int storm_onset = -1;
	struct incast_result last = { 0 };
	json_t *rows = json_array(), *per_hop = json_array(), *g, *res;

	printf("\n§7.2 PFC under N:1 incast at line rate, lossless priority %u\n  %7s  %12s  %8s  %8s  %5s  %7s\n",
	       pc->priority, "ratio", "recv Gb/s", "of link", "dropped", "hops", "storms");
	memset(xoff_rate, 0, sizeof(xoff_rate));
	for (unsigned k = 0; k < pc->n_ratios && !x->rn->stop; k++) {
		unsigned n = pc->ratios[k];
		struct incast_result r;

		if (n >= x->fab.n_hosts) {
			aif_anomaly(x, AIF_PFC_INCAST, "%u:1 incast needs %u hosts; the fabric has %u: not run", n, n + 1,
				    x->fab.n_hosts);
			continue;
		}
		incast_trial(x, n, &r);
		json_array_append_new(rows, incast_row(x, n, &r, per_hop));
		if (!r.ran)
			continue;
		if (r.storms && storm_onset < 0)
			storm_onset = (int)n;
		xs[n_rows] = n;
		recv[n_rows] = r.received_gbps;
		for (unsigned h = 0; h < r.n_hops; h++) {
			unsigned j;
			for (j = 0; j < n_hop_names && strcmp(hop_names[j], r.hops[h].name); j++)
				;
			if (j == n_hop_names && n_hop_names < MAX_HOPS)
				snprintf(hop_names[n_hop_names++], sizeof(hop_names[0]), "%s", r.hops[h].name);
			if (j < MAX_HOPS)
				xoff_rate[j][n_rows] = r.duration_s > 0 ? (double)r.hops[h].xoff / r.duration_s : 0;
		}
		n_rows++;
		last = r;
		last_n = n;
	}
	g = aif_graph(x, "pfc_incast_pauses.png", "lines", "§7.2 PFC XOFF per second by hop under N:1 incast",
		      "incast ratio N", "XOFF frames / s");
	for (unsigned j = 0; j < n_hop_names; j++)
		aif_series(g, hop_names[j], xs, xoff_rate[j], n_rows);
	g = aif_graph(x, "pfc_incast_throughput.png", "lines", "§7.2 received by the incast's destination",
		      "incast ratio N", "Gb/s (frames, as the link carries them)");
	aif_series(g, "received", xs, recv, n_rows);
	if (last_n)
		incast_repeat(x, last_n, &last);
	res = json_pack("{s:s,s:i,s:s,s:o,s:o}", "section", "7.2", "priority", (int)pc->priority, "destination",
			x->fab.hosts[x->fab.n_hosts - 1].name, "rows", rows, "per_hop", per_hop);
	json_object_set_new(res, "storm_onset_ratio", storm_onset < 0 || x->c->external ? json_null() : json_integer(storm_onset));
	json_object_set_new(x->results, "pfc_incast", res);
	return x->rn->stop ? -1 : 0;
}

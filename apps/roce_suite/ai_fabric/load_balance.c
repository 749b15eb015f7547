/* SPDX-License-Identifier: BSD-3-Clause
 *
 * §8 load balancing: an all-to-all of RC WRITEs over every host, on the lossless class, at the
 * NICs' line rate, under each balancing of the switches:
 *   §8.1 ECMP, Q QPs per pair swept, and each Q again with the BTH destination QP in the hash;
 *   §8.2 flowlets, the gap timer swept;
 *   §8.3 packet spraying;
 *   §8.4 the JFI of the three side by side (a bar chart).
 * Per run, from the engine's fabric report: each ECMP group's (a leaf's uplinks toward another
 * leaf) flows and bytes per member, their MMR (max / mean) and JFI, the uplinks' utilisation, the
 * flows' JFI, frames out of order and RC retransmissions per frame received, and the goodput
 * against roce-fabric's plan of the same run.
 *
 * What ECMP should give: a hash spreads flows like balls thrown into bins, so each group's flow
 * MMR is held to the range the exact balls-into-bins distribution (kpi.h) gives for its flows and
 * members, its 0.5 % to 99.5 % quantiles: a hash doing worse than chance, or placing flows not by
 * their fields, falls outside. With one UDP source port for every QP (ecmp.udp_sport) and no BTH
 * hashing, a pair's QPs are one ball, not Q: the expectation counts pairs then.
 *
 * On a real switch tier (fabric.external) §8.1 runs with the switches' own hashing (no BTH-aware
 * runs), and §8.2 and §8.3 where ai_fabric.balance_command sets the switches' balancing: before
 * each trial with {mode} flowlet (and {gap_us}) or spray, after the category with {mode} restore.
 * The groups are roce-fabric's plan of the trial (each switch's equal-cost members) and, where
 * external.counters_command reads the switches' counters, each member link's bytes in the trial
 * and their MMR (worst_mmr); the flow counts per member are the switch's own (worst_mmr_flows
 * null, no balls-into-bins verdict).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aif_ctx.h"
#include "verdict.h"

#define MAX_HOSTS 64
#define Q_LO 0.005
#define Q_HI 0.995

struct lb_run {
	const char *mode;               /* ecmp, flowlet, spray */
	unsigned qps;
	bool bth_aware;
	double gap_us;
	char label[64];
};

struct lb_result {
	double goodput_gbps, plan_gbps, jfi, worst_mmr, worst_mmr_flows, ooo_rate, retransmit_rate;
	double util_min, util_mean, util_max;
	double drop_ppm;                /* frames the switches dropped per million sent */
	bool machine_limited, ran;
};

/* The uplinks' utilisation (leaf tier, both directions that carried frames). */
static void uplink_utilisation(const json_t *rep, struct lb_result *r)
{
	const json_t *l;
	unsigned n = 0;
	size_t i;

	r->util_min = INFINITY;
	json_array_foreach(json_object_get(json_object_get(rep, "fabric"), "links"), i, l) {
		if (strcmp(json_string_value(json_object_get(l, "tier")) ?: "", "leaf"))
			continue;
		for (unsigned d = 0; d < 2; d++) {
			double u = jnum(json_object_get(l, d ? "b_to_a" : "a_to_b"), "utilization");
			r->util_min = fmin(r->util_min, u);
			r->util_max = fmax(r->util_max, u);
			r->util_mean += u;
			n++;
		}
	}
	r->util_mean = n ? r->util_mean / n : 0;
	if (!n)
		r->util_min = 0;
}

/* Bytes a real tier's counters (a report's fabric.links) say switch sw sent toward its neighbour
 * m over every link between them. */
static double member_bytes(const struct aif_ctx *x, const json_t *links, const char *sw, const char *m)
{
	int s = fabric_switch_by_name(&x->fab, sw), b = fabric_switch_by_name(&x->fab, m);
	double sum = 0;

	for (unsigned k = 0; k < x->fab.n_links && s >= 0 && b >= 0; k++) {
		const struct fab_link *l = &x->fab.links[k];
		bool from_a = l->sw == (unsigned)s && l->b == (unsigned)b, from_b = l->sw == (unsigned)b && l->b == (unsigned)s;
		if (!l->to_nic && (from_a || from_b))
			sum += aif_counted_bytes(links, l->name, from_b);
	}
	return sum;
}

/* A real tier's groups: the plan's, each member's bytes from the switches' counters and their
 * MMR (the worst into *worst; 0 without counters). */
static void external_groups(const struct aif_ctx *x, const json_t *plan_groups, const json_t *rep, json_t *out,
			    double *worst)
{
	const json_t *g, *m, *links = json_object_get(json_object_get(rep, "fabric"), "links");
	size_t i, k;
	bool counted = json_array_size(links) > 0;

	*worst = 0;
	json_array_foreach(plan_groups, i, g) {
		const char *sw = json_string_value(json_object_get(g, "switch")) ?: "";
		json_t *bytes = json_array();
		double per_member[64];
		unsigned n = 0;

		json_array_foreach(json_object_get(g, "members"), k, m)
			if (n < 64) {
				per_member[n] = member_bytes(x, links, sw, json_string_value(m) ?: "");
				json_array_append_new(bytes, json_real(per_member[n++]));
			}
		json_array_append_new(out, json_pack("{s:s,s:O,s:o,s:o,s:s}", "switch", sw, "members", json_object_get(g, "members"),
						     "bytes", counted ? bytes : (json_decref(bytes), json_null()), "mmr",
						     counted ? json_real(kpi_mmr(per_member, n)) : json_null(), "from",
						     counted ? "external.counters_command" : "none: no counters_command"));
		if (counted)
			*worst = fmax(*worst, kpi_mmr(per_member, n));
	}
}

/* A real tier's balancing set through ai_fabric.balance_command ({mode}, {gap_us}), its output in
 * balance-MODE-GAP.log beside the trials: the command's exit status (-1: it did not run). */
static int set_balance(struct aif_ctx *x, enum aif_category cat, const char *mode, double gap_us)
{
	char cmd[256], log[PATH_MAX + 64];
	int st = -1;

	text_printf(log, sizeof(log), "%s/balance-%s-%g.log", x->rn->dir, mode, gap_us);
	if (aif_balance_command(x->c->lb.balance_command, mode, gap_us, cmd, sizeof(cmd)) == 0)
		st = aif_run_tool("/bin/sh", log, "-c", cmd, NULL, NULL);
	if (st != 0)
		aif_anomaly(x, cat, "balance_command (%s, %g us) failed: exit status %d: %s", mode, gap_us, st, cmd);
	return st;
}

/* After §8.2's or §8.3's trials on a real tier: the lab's own balancing back ({mode} "restore"); the
 * suite stops if it cannot be, since the next categories would run on the wrong balancing. */
static void restore_balance(struct aif_ctx *x, enum aif_category cat)
{
	if (!x->c->external || x->rn->stop || set_balance(x, cat, "restore", 0) == 0)
		return;
	x->rn->stop = true;
	text_printf(x->rn->stop_reason, sizeof(x->rn->stop_reason), "balance_command could not restore the switches' "
		    "balancing");
}

/* Each ECMP group's flow MMR against balls into bins; the groups' table into `out`. */
static void judge_groups(struct aif_ctx *x, const struct lb_run *run, const json_t *rep, json_t *out)
{
	const json_t *g;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(rep, "fabric"), "ecmp_groups"), i, g) {
		const json_t *flows = json_object_get(g, "flows");
		unsigned bins = (unsigned)json_array_size(flows), balls = 0;
		struct kpi_mmr_range e = { 0 };
		double per_member[64];
		bool one_ball_per_pair = !run->bth_aware && x->c->lb.udp_sport && run->qps > 1;
		json_t *row;

		for (unsigned k = 0; k < bins && k < 64; k++)
			balls += (unsigned)(per_member[k] = json_number_value(json_array_get(flows, k)));
		row = json_pack("{s:O,s:O,s:O,s:O,s:O,s:O,s:O}", "switch", json_object_get(g, "switch"), "prefix",
				json_object_get(g, "prefix"), "members", json_object_get(g, "members"), "flows", flows,
				"bytes", json_object_get(g, "bytes"), "mmr", json_object_get(g, "mmr"), "mmr_flows",
				json_object_get(g, "mmr_flows"));
		json_array_append_new(out, row);
		if (!balls || bins < 2 || strcmp(run->mode, "ecmp"))
			continue;
		if (kpi_bins_mmr(one_ball_per_pair ? balls / run->qps : balls, bins, Q_LO, Q_HI, &e))
			continue;
		json_object_set_new(row, "expected_mmr_flows",
				    json_pack("{s:i,s:f,s:f,s:f}", "balls", (int)(one_ball_per_pair ? balls / run->qps : balls),
					      "mean", e.expected, "q005", e.lo, "q995", e.hi));
		suite_verdict(x->rn, kpi_mmr(per_member, bins) <= e.hi + 1e-9, "ecmp_balls_into_bins",
			      "%s, %s %s: %u flows on %u members, MMR %.3f; balls into bins: mean %.3f, 99.5 %% below %.3f",
			      run->label, json_string_value(json_object_get(g, "switch")),
			      json_string_value(json_object_get(g, "prefix")), balls, bins, kpi_mmr(per_member, bins), e.expected,
			      e.hi);
	}
}

static void lb_trial(struct aif_ctx *x, const struct lb_run *run, enum aif_category cat, struct lb_result *r,
		     json_t *rows)
{
	const struct aif_lb_cfg *lc = &x->c->lb;
	struct aif_flow f = { .transport = "rc", .message_size = lc->message_size, .priority = 3,
			      .udp_sport = !strcmp(run->mode, "ecmp") ? lc->udp_sport : 0 };
	struct flow_set fs = aif_entry_flows("lb");
	struct aif_fabric_view v = { 0 };
	struct aif_trial t;
	struct aif_plan p;
	struct trial tr;
	struct metrics m;
	json_t *row, *groups = json_array(), *plan_groups = NULL;
	/* a real tier's flowlets or spraying: set through the lab's command (-2: not run) */
	int balance = x->c->external && strcmp(run->mode, "ecmp") ? set_balance(x, cat, run->mode, run->gap_us) : -2;
	char tag[64];

	memset(r, 0, sizeof(*r));
	aif_trial_init(&t, x);
	aif_trial_balance(&t, run->mode, run->gap_us, run->bth_aware);
	aif_trial_pattern(&t, x, "lb", "all_to_all", NULL, 0, -1, run->qps, &f);
	snprintf(tag, sizeof(tag), "lb-%s-%u-%s-%g", run->mode, run->qps, run->bth_aware ? "bth" : "5t", run->gap_us);
	if (aif_plan(x, &t, tag, &p) == 0) {
		r->plan_gbps = p.aggregate_gbps;
		plan_groups = json_incref(json_object_get(p.report, "ecmp_groups"));
	} else
		aif_anomaly(x, cat, "%s: no plan: %s", run->label, p.error);
	aif_plan_free(&p);
	trial_init(&tr, "load_balance", "%s", run->label);
	if (trial_measure(x->rn, &t.cfg, &tr, &fs, &m) == 0) {
		aif_fabric_read(tr.report, &v);
		aif_fabric_to_json(&v, tr.record);
		uplink_utilisation(tr.report, r);
		r->ran = true;
		r->goodput_gbps = m.goodput_gbps;
		r->jfi = v.jfi;
		r->worst_mmr = v.worst_mmr;
		r->worst_mmr_flows = v.worst_mmr_flows;
		if (v.external)
			external_groups(x, plan_groups, tr.report, groups, &r->worst_mmr);
		else
			judge_groups(x, run, tr.report, groups);
		r->ooo_rate = m.received ? (double)v.out_of_order / m.received : 0;
		r->retransmit_rate = m.received ? (double)m.retransmits / m.received : 0;
		r->drop_ppm = kpi_ppm((double)v.dropped, (double)m.sent);
		r->machine_limited = v.machine_limited;
		trial_verdict(x->rn, &tr, "info", "%.3f Gb/s, JFI %.3f, worst MMR %.3f", m.goodput_gbps, v.jfi, v.worst_mmr);
	}
	trial_release(&tr);
	aif_trial_free(&t);
	json_decref(plan_groups);
	printf("  %-28s  %9.3f  %9.3f  %6.3f  %6.3f  %6.3f  %5.2f..%4.2f  %9.2e  %9.2e\n", run->label, r->goodput_gbps,
	       r->plan_gbps, r->jfi, r->worst_mmr, r->worst_mmr_flows, r->util_min, r->util_max, r->ooo_rate,
	       r->retransmit_rate);
	row = json_pack("{s:s,s:s,s:i,s:b,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:b,s:o}", "run", run->label, "mode",
			run->mode, "qps_per_pair", (int)run->qps, "bth_aware", run->bth_aware, "flowlet_gap_us", run->gap_us,
			"goodput_gbps", r->goodput_gbps, "plan_gbps", r->plan_gbps, "jfi", r->jfi, "worst_mmr", r->worst_mmr,
			"worst_mmr_flows", r->worst_mmr_flows, "uplink_utilization_min", r->util_min,
			"uplink_utilization_mean", r->util_mean, "uplink_utilization_max", r->util_max,
			"out_of_order_rate", r->ooo_rate, "retransmit_rate", r->retransmit_rate, "drop_ppm", r->drop_ppm,
			"machine_limited",
			r->machine_limited, "ecmp_groups", groups);
	aif_fabric_to_json(&v, row); /* (docs/ai-fabric.md: every row has its trial's fabric figures) */
	if (v.external) { /* (a real tier: the groups' bytes are its counters', the rest its own) */
		json_object_set_new(row, "worst_mmr", v.switch_drops ? json_real(r->worst_mmr) : json_null());
		json_object_set_new(row, "worst_mmr_flows", json_null());
		json_object_set_new(row, "uplink_utilization_min", json_null());
		json_object_set_new(row, "uplink_utilization_mean", json_null());
		json_object_set_new(row, "uplink_utilization_max", json_null());
		json_object_set_new(row, "drop_ppm", v.switch_drops ? json_real(r->drop_ppm) : json_null());
	}
	json_array_append_new(rows, row);
	if (balance != -2) {
		json_object_set_new(row, "balance_command_status", json_integer(balance));
		suite_verdict(x->rn, balance == 0, "balance_command_succeeds", "%s: ai_fabric.balance_command exit status %d "
			      "(-1: not run)", run->label, balance);
	}
	if (!r->ran)
		return;
	if (v.switch_drops)
		aif_threshold(x, cat, "drop_ppm", r->drop_ppm, x->c->th.max_drop_ppm, true, run->label);
	if (r->machine_limited) {
		machine_limit(x->rn, row, "%s: machine-limited (%s): its byte MMR and JFI are partly the CPU's", run->label,
			      aif_machine_reason(x));
		return;
	}
	if (!v.external || v.switch_drops)
		aif_threshold(x, cat, "mmr", r->worst_mmr, x->c->th.max_mmr, true, run->label);
	aif_threshold(x, cat, "jfi", r->jfi, x->c->th.min_jfi, false, run->label);
}

static void lb_header(const char *title)
{
	printf("\n%s\n  %-28s  %9s  %9s  %6s  %6s  %6s  %10s  %9s  %9s\n", title, "run", "Gb/s", "plan Gb/s", "JFI", "MMR",
	       "MMR fl", "uplinks", "ooo/frame", "retx/fr");
}

int aif_ecmp(struct aif_ctx *x)
{
	const struct aif_lb_cfg *lc = &x->c->lb;
	json_t *rows = json_array(), *g;
	double qs[AIF_MAX_LIST], mmr[2][AIF_MAX_LIST], jfi[2][AIF_MAX_LIST];

	lb_header("§8.1 ECMP: an all-to-all, QPs per pair swept, 5-tuple and BTH-aware hashing");
	/* (a real tier hashes as it is configured: no BTH-aware runs of the suite's making) */
	for (unsigned b = 0; b < (lc->bth_aware && !x->c->external ? 2u : 1u); b++)
		for (unsigned q = 0; q < lc->n_qps && !x->rn->stop; q++) {
			struct lb_run run = { .mode = "ecmp", .qps = lc->qps[q], .bth_aware = b == 1 };
			struct lb_result r;

			snprintf(run.label, sizeof(run.label), "ecmp %s, %u QP%s", b ? "bth" : "5-tuple", run.qps,
				 run.qps == 1 ? "" : "s");
			lb_trial(x, &run, AIF_ECMP, &r, rows);
			qs[q] = run.qps;
			mmr[b][q] = x->c->external ? r.worst_mmr : r.worst_mmr_flows; /* (a real tier's: its bytes) */
			jfi[b][q] = r.jfi;
		}
	g = aif_graph(x, "ecmp_mmr.png", "lines", "§8.1 ECMP imbalance against QPs per pair", "QPs per pair",
		      x->c->external ? "worst uplink MMR (bytes, the switches' counters)" : "worst uplink MMR (flows)");
	aif_series(g, "5-tuple", qs, mmr[0], lc->n_qps);
	if (lc->bth_aware && !x->c->external)
		aif_series(g, "BTH-aware", qs, mmr[1], lc->n_qps);
	g = aif_graph(x, "ecmp_jfi.png", "lines", "§8.1 flows' JFI against QPs per pair", "QPs per pair", "JFI");
	aif_series(g, "5-tuple", qs, jfi[0], lc->n_qps);
	if (lc->bth_aware && !x->c->external)
		aif_series(g, "BTH-aware", qs, jfi[1], lc->n_qps);
	json_object_set_new(x->results, "ecmp", json_pack("{s:s,s:o,s:i,s:i}", "section", "8.1", "rows", rows, "message_size",
							  (int)lc->message_size, "udp_sport", (int)lc->udp_sport));
	return x->rn->stop ? -1 : 0;
}

int aif_flowlet(struct aif_ctx *x)
{
	const struct aif_lb_cfg *lc = &x->c->lb;
	json_t *rows = json_array(), *g;
	double gaps[AIF_MAX_LIST], mmr[AIF_MAX_LIST], ooo[AIF_MAX_LIST];

	lb_header("§8.2 flowlets: the gap timer swept");
	for (unsigned k = 0; k < lc->n_gaps && !x->rn->stop; k++) {
		struct lb_run run = { .mode = "flowlet", .qps = lc->flowlet_qps, .gap_us = lc->gaps_us[k] };
		struct lb_result r;

		snprintf(run.label, sizeof(run.label), "flowlet %g us, %u QPs", run.gap_us, run.qps);
		lb_trial(x, &run, AIF_FLOWLET, &r, rows);
		gaps[k] = run.gap_us;
		mmr[k] = r.worst_mmr;
		ooo[k] = r.ooo_rate;
	}
	g = aif_graph(x, "flowlet_gap.png", "lines", "§8.2 flowlets: imbalance and reordering against the gap", "gap (us)",
		      "value");
	aif_series(g, "worst uplink MMR (bytes)", gaps, mmr, lc->n_gaps);
	aif_series(g, "out-of-order frames per frame", gaps, ooo, lc->n_gaps);
	restore_balance(x, AIF_FLOWLET);
	json_object_set_new(x->results, "flowlet", json_pack("{s:s,s:o}", "section", "8.2", "rows", rows));
	return x->rn->stop ? -1 : 0;
}

/* §8.4: the flows' JFI of each balancing run so far, as bars. */
static void jfi_chart(struct aif_ctx *x)
{
	static const char *const cats[] = { "ecmp", "flowlet", "spray" };
	double xs[3 * AIF_MAX_LIST * 2], ys[3 * AIF_MAX_LIST * 2];
	json_t *g = aif_graph(x, "jfi_comparison.png", "bars", "§8.4 Jain's fairness index by load balancing", "run", "JFI"),
	       *labels = json_array();
	unsigned n = 0;

	for (unsigned c = 0; c < 3; c++) {
		const json_t *row;
		size_t i;
		json_array_foreach(json_object_get(json_object_get(x->results, cats[c]), "rows"), i, row) {
			if (n == sizeof(xs) / sizeof(xs[0]))
				break;
			xs[n] = n;
			ys[n++] = jnum(row, "jfi");
			json_array_append(labels, json_object_get(row, "run"));
		}
	}
	aif_series(g, "JFI", xs, ys, n);
	json_object_set_new(g, "labels", labels);
}

int aif_spray(struct aif_ctx *x)
{
	struct lb_run run = { .mode = "spray", .qps = x->c->lb.flowlet_qps };
	json_t *rows = json_array();
	struct lb_result r;

	lb_header("§8.3 packet spraying");
	snprintf(run.label, sizeof(run.label), "spray, %u QPs", run.qps);
	lb_trial(x, &run, AIF_SPRAY, &r, rows);
	restore_balance(x, AIF_SPRAY);
	if (r.ran && !x->c->external) /* (a real tier's flows per member are its own) */
		/* every frame to a random member: each flow shows on every member it used */
		suite_verdict(x->rn, r.worst_mmr_flows <= 1.0 + 1e-9, "spray_every_member",
			      "%s: each uplink group's flows counted on every member (flow MMR %.3f)", run.label,
			      r.worst_mmr_flows);
	json_object_set_new(x->results, "spray", json_pack("{s:s,s:o}", "section", "8.3", "rows", rows));
	jfi_chart(x);
	return x->rn->stop ? -1 : 0;
}

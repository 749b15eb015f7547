/* SPDX-License-Identifier: BSD-3-Clause
 *
 * §5.1 throughput: host pairs whose paths cross the spines (each NIC of the first half of the
 * hosts with one of the other half), Q QPs per pair writing messages of S bytes, uni- or
 * bidirectional; RFC 2544's binary search for the highest offered rate per QP with no loss (a
 * lossy class by default, so that a rate above what the fabric carries shows as a loss and not as
 * a pause). The expectation is roce-fabric's plan of the same trial: the max-min fair rate of
 * the slowest flow is the highest rate every flow can be offered without a link over its
 * capacity, so the zero-loss throughput is at most the plan's and, on a fabric that carries what
 * it is sent, close to it. Per (S, Q, direction): the zero-loss aggregate, its efficiency against
 * the plan, the trials searched; the graph of throughput against message size per Q.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aif_ctx.h"
#include "verdict.h"

#define MAX_PAIRS 16

struct tp_case {
	unsigned size, qps;
	bool bi;
	unsigned pairs[2 * MAX_PAIRS][2], n_pairs;
};

/* One trial at `rate` Gb/s per QP (frame bytes): its metrics and fabric view. 0 when it ran. */
static int tp_trial(struct aif_ctx *x, const struct tp_case *c, double rate, struct metrics *m,
		    struct aif_fabric_view *v)
{
	struct aif_flow f = { .message_size = c->size, .priority = x->c->throughput.priority, .rate_gbps = rate };
	struct flow_set fs = aif_entry_flows("tp");
	struct aif_trial t;
	struct trial tr;
	int rc;

	aif_trial_init(&t, x);
	aif_trial_pairs(&t, x, "tp", (const unsigned(*)[2])c->pairs, c->n_pairs, c->qps, &f);
	trial_init(&tr, "throughput", "throughput %u B x %u QPs %s at %.4f Gb/s per QP", c->size, c->qps,
		   c->bi ? "bidirectional" : "unidirectional", rate);
	json_object_set_new(tr.params, "rate_gbps_per_qp", json_real(rate));
	rc = trial_measure(x->rn, &t.cfg, &tr, &fs, m);
	if (!rc) {
		aif_fabric_read(tr.report, v);
		aif_fabric_to_json(v, tr.record);
		trial_verdict(x->rn, &tr, "info", "loss %.4f %%, %.3f Gb/s received", m->loss_pct, m->goodput_gbps);
	}
	trial_release(&tr);
	aif_trial_free(&t);
	return rc;
}

/* The plan of the case at no set rate: the slowest flow's max-min rate, in link Gb/s. */
static double tp_plan(struct aif_ctx *x, const struct tp_case *c, double *aggregate)
{
	struct aif_flow f = { .message_size = c->size, .priority = x->c->throughput.priority };
	struct aif_trial t;
	struct aif_plan p;
	char tag[64];
	double min = 0;

	aif_trial_init(&t, x);
	aif_trial_pairs(&t, x, "tp", (const unsigned(*)[2])c->pairs, c->n_pairs, c->qps, &f);
	snprintf(tag, sizeof(tag), "tp-%u-%u-%s", c->size, c->qps, c->bi ? "bi" : "uni");
	if (aif_plan(x, &t, tag, &p) == 0) {
		min = p.min_flow_gbps;
		*aggregate = p.aggregate_gbps;
	} else {
		aif_anomaly(x, AIF_THROUGHPUT, "no plan: %s", p.error);
	}
	aif_plan_free(&p);
	aif_trial_free(&t);
	return min;
}

struct tp_result {
	double zero_loss_qp_gbps;       /* the highest rate per QP that lost nothing (0: none) */
	double received_gbps;           /* its trial's goodput */
	unsigned trials, errors;        /* errors: trials that did not run (each counted as a loss) */
	bool machine_limited;           /* a lossy trial of the search lost on a machine-limited run */
	struct metrics best;
	struct aif_fabric_view best_view;
};

/* RFC 2544's search: line rate first; on a loss, halve the interval until it is below the
 * resolution. A trial that did not run counts as a loss. */
static void tp_search(struct aif_ctx *x, const struct tp_case *c, double hi, struct tp_result *r)
{
	const struct aif_throughput_cfg *tc = &x->c->throughput;
	double lo = 0, rate = hi, step = hi * tc->resolution_pct / 100;

	memset(r, 0, sizeof(*r));
	while (r->trials < tc->max_trials && !x->rn->stop) {
		struct metrics m;
		struct aif_fabric_view v = { 0 };
		bool ran = tp_trial(x, c, rate, &m, &v) == 0, pass = ran && m.loss_pct <= tc->loss_threshold_pct;

		r->trials++;
		r->errors += !ran;
		if (pass) {
			lo = rate;
			r->zero_loss_qp_gbps = rate;
			r->received_gbps = m.goodput_gbps;
			r->best = m;
			r->best_view = v;
		} else {
			hi = rate;
			r->machine_limited |= v.machine_limited;
		}
		if (hi - lo <= step || (pass && rate >= hi))
			break;
		rate = (lo + hi) / 2;
	}
}

static json_t *tp_row(struct aif_ctx *x, const struct tp_case *c, const struct tp_result *r, double plan_qp,
		      double plan_aggregate)
{
	unsigned flows = c->n_pairs * c->qps;
	double aggregate = r->zero_loss_qp_gbps * flows, expected = plan_qp * flows;
	double efficiency = expected > 0 ? aggregate / expected : 0;
	json_t *row = json_pack("{s:i,s:i,s:s,s:i,s:i,s:f,s:f,s:f,s:f,s:f,s:f,s:i}", "message_size", (int)c->size,
				"qps_per_pair", (int)c->qps, "direction", c->bi ? "bi" : "uni", "pairs", (int)c->n_pairs,
				"flows", (int)flows, "zero_loss_gbps_per_qp", r->zero_loss_qp_gbps, "zero_loss_gbps",
				aggregate, "received_gbps", r->received_gbps, "expected_gbps", expected,
				"plan_aggregate_gbps", plan_aggregate, "efficiency", efficiency, "trials", (int)r->trials);

	aif_fabric_to_json(&r->best_view, row);
	json_object_set_new(row, "loss_pct", json_real(r->best.loss_pct));
	printf("  %8u  %4u  %-4s  %5u  %12.4f  %12.4f  %12.4f  %6.1f %%  %3u\n", c->size, c->qps, c->bi ? "bi" : "uni",
	       flows, aggregate, r->received_gbps, expected, 100 * efficiency, r->trials);
	if (r->errors) {
		aif_anomaly(x, AIF_THROUGHPUT, "%u B x %u QPs %s: %u of %u trials did not run (counted as losses)", c->size,
			    c->qps, c->bi ? "bi" : "uni", r->errors, r->trials);
		return row;
	}
	if (r->machine_limited) {
		/* the loss that ended the search may be the CPU's: no verdict on the fabric */
		machine_limit(x->rn, row, "%u B x %u QPs %s: a trial that lost frames was machine-limited (%s); the "
			      "zero-loss rate is the machine's, not the fabric's", c->size, c->qps, c->bi ? "bi" : "uni",
			      aif_machine_reason(x));
		return row;
	}
	suite_verdict(x->rn, aggregate <= expected * 1.02 + 1e-9, "throughput_at_most_plan",
		      "%u B x %u QPs %s: zero-loss %.4f Gb/s, at most the plan's %.4f", c->size, c->qps,
		      c->bi ? "bi" : "uni", aggregate, expected);
	aif_threshold(x, AIF_THROUGHPUT, "efficiency", efficiency, x->c->th.min_throughput_efficiency, false,
		      "zero-loss throughput / the plan's");
	return row;
}

/* The case's own repeats: its zero-loss rate run again, the received aggregate each time. */
static void tp_repeat(struct aif_ctx *x, const struct tp_case *c, const struct tp_result *r)
{
	double v[100];
	unsigned n = 0;

	if (r->zero_loss_qp_gbps <= 0)
		return;
	v[n++] = r->received_gbps;
	while (n < x->c->repeats && n < 100 && !x->rn->stop) {
		struct metrics m;
		struct aif_fabric_view fv;
		if (tp_trial(x, c, r->zero_loss_qp_gbps, &m, &fv) == 0)
			v[n++] = m.goodput_gbps;
		else
			break;
	}
	aif_repeatability(x, AIF_THROUGHPUT, "aggregate_throughput_gbps", "Gb/s", v, n);
}

static void tp_case_pairs(struct aif_ctx *x, struct tp_case *c)
{
	unsigned half = aif_cross_pairs(x, c->pairs, MAX_PAIRS);

	c->n_pairs = half;
	for (unsigned i = 0; c->bi && i < half; i++) {
		c->pairs[half + i][0] = c->pairs[i][1];
		c->pairs[half + i][1] = c->pairs[i][0];
		c->n_pairs++;
	}
}

int aif_throughput(struct aif_ctx *x)
{
	const struct aif_throughput_cfg *tc = &x->c->throughput;
	json_t *rows = json_array(), *g;
	struct tp_case last = { 0 };
	struct tp_result last_r = { 0 };

	printf("\n§5.1 throughput: zero-loss rate of host pairs across the spines (RFC 2544 search)\n"
	       "  %8s  %4s  %-4s  %5s  %12s  %12s  %12s  %8s  %3s\n", "bytes", "QPs", "dir", "flows", "0-loss Gb/s",
	       "recv Gb/s", "plan Gb/s", "effic.", "tr");
	g = aif_graph(x, "throughput.png", "lines", "§5.1 zero-loss throughput", "message size (bytes)",
		      "aggregate Gb/s");
	for (unsigned d = 0; d < 2; d++) {
		if (!(d ? tc->bi : tc->uni))
			continue;
		for (unsigned q = 0; q < tc->n_qps && !x->rn->stop; q++) {
			double xs[AIF_MAX_LIST], ys[AIF_MAX_LIST];
			char label[48];
			unsigned n = 0;

			for (unsigned k = 0; k < tc->n_sizes && !x->rn->stop; k++) {
				struct tp_case c = { .size = tc->sizes[k], .qps = tc->qps[q], .bi = d == 1 };
				struct tp_result r;
				double plan_aggregate = 0, plan, hi;

				tp_case_pairs(x, &c);
				plan = aif_link_frame_gbps(tp_plan(x, &c, &plan_aggregate), c.size);
				hi = aif_link_frame_gbps(x->host_gbps, c.size) / c.qps;
				tp_search(x, &c, hi, &r);
				json_array_append_new(rows, tp_row(x, &c, &r, plan, plan_aggregate));
				xs[n] = c.size;
				ys[n++] = r.zero_loss_qp_gbps * c.n_pairs * c.qps;
				last = c;
				last_r = r;
			}
			snprintf(label, sizeof(label), "%s, %u QP%s", d ? "bi" : "uni", tc->qps[q], tc->qps[q] == 1 ? "" : "s");
			aif_series(g, label, xs, ys, n);
		}
	}
	tp_repeat(x, &last, &last_r);
	json_object_set_new(x->results, "throughput", json_pack("{s:s,s:o}", "section", "5.1", "rows", rows));
	return x->rn->stop ? -1 : 0;
}

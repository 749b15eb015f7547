/* SPDX-License-Identifier: BSD-3-Clause
 *
 * §10.1 synthetic job completion time: `iterations` iterations of a compute step of C then a ring
 * AllReduce of S bytes over N hosts, strictly in sequence (the engine's collective with
 * compute_us before each iteration's first phase), for each C of jct.compute_ms. The JCT is from
 * the traffic's start to the last phase's end.
 *
 * The roofline is what the network would cost at its line rate and nothing more: iterations x (C +
 * 8 S algo_factor / B), with B the link's payload rate (what a host link carries of RoCE payload in
 * the AllReduce's messages: the frames' headers, FCS, preamble and gap take the rest), so a
 * perfect network gives a JCT ratio of 1. The draft's reading (non-normative): up to 1.05
 * excellent, 1.15 and above a significant overhead. Per C also the communication time per
 * iteration (the iteration's time less C), its CV over the iterations, and the overlap fraction
 * (0 here: in sequence, nothing hides under compute).
 *
 * What the settings imply, and is judged: the JCT is at least the roofline (the network cannot
 * beat its line rate: jct_at_least_roofline) and every iteration took at least C (the compute
 * steps were kept: jct_compute_kept). thresholds.max_jct_ratio is the user's.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aif_ctx.h"
#include "verdict.h"

static const char *reading(double ratio)
{
	return ratio <= 1.05 ? "excellent" : ratio < 1.15 ? "moderate overhead" : "significant overhead";
}

static json_t *jct_row(struct aif_ctx *x, unsigned n, double compute_ms, const struct aif_coll_run *r)
{
	const struct aif_jct_cfg *jc = &x->c->jct;
	unsigned per_phase = (jc->message_size + n - 1) / n;
	double c_s = compute_ms * 1e-3, af = kpi_algo_factor(KPI_ALLREDUCE, n), b = aif_link_payload_gbps(x->host_gbps, per_phase);
	double roof = kpi_roofline_jct_s(jc->iterations, c_s, jc->message_size, af, b), ratio, comm[AIF_MAX_ITER], shortest = INFINITY;
	double comm_sum = 0;
	struct kpi_stats st;
	json_t *row = json_pack("{s:f,s:i,s:i,s:i,s:b}", "compute_ms", compute_ms, "ranks", (int)n, "message_size",
				(int)jc->message_size, "iterations", (int)jc->iterations, "ran", r->ran);

	if (!r->ran)
		return row;
	for (unsigned i = 0; i < r->iterations; i++) {
		comm[i] = r->iter_s[i] - c_s;
		comm_sum += comm[i];
		shortest = fmin(shortest, r->iter_s[i]);
	}
	kpi_stats_of(comm, r->iterations, &st);
	ratio = kpi_jct_ratio(r->total_s, roof);
	json_object_set_new(row, "iterations_completed", json_integer(r->iterations));
	json_object_set_new(row, "jct_s", json_real(r->total_s));
	json_object_set_new(row, "roofline_s", json_real(roof));
	json_object_set_new(row, "jct_ratio", json_real(ratio));
	json_object_set_new(row, "reading", json_string(reading(ratio)));
	json_object_set_new(row, "payload_gbps", json_real(b));
	json_object_set_new(row, "comm_mean_ms", json_real(st.mean * 1e3));
	json_object_set_new(row, "comm_cv", json_real(st.cv));
	json_object_set_new(row, "comm_ideal_ms", json_real(8 * jc->message_size * af / (b * 1e9) * 1e3));
	json_object_set_new(row, "overlap_fraction", json_real(kpi_overlap_fraction(r->total_s, c_s * r->iterations, comm_sum)));
	aif_fabric_to_json(&r->v, row);
	printf("  %9.1f  %4u/%-4u  %9.4f  %9.4f  %7.4f  %9.3f  %s\n", compute_ms, r->iterations, jc->iterations, r->total_s,
	       roof, ratio, st.mean * 1e3, reading(ratio));
	suite_verdict(x->rn, r->iterations == jc->iterations, "jct_completes", "C = %g ms: %u of %u iterations", compute_ms,
		      r->iterations, jc->iterations);
	/* the roofline is a floor whatever the machine did: a JCT below it would be a measuring error */
	suite_verdict(x->rn, r->iterations < jc->iterations || r->total_s >= roof * 0.999, "jct_at_least_roofline",
		      "C = %g ms: JCT %.4f s, roofline %.4f s (%u x (C + %.3f ms at %.4f Gb/s of payload))", compute_ms,
		      r->total_s, roof, jc->iterations, 8 * jc->message_size * af / (b * 1e9) * 1e3, b);
	suite_verdict(x->rn, shortest >= c_s, "jct_compute_kept", "C = %g ms: the shortest iteration took %.3f ms",
		      compute_ms, shortest * 1e3);
	if (r->iterations > 1) {
		char kpi[48];
		text_printf(kpi, sizeof(kpi), "comm_s_compute_%gms", compute_ms);
		aif_repeatability(x, AIF_JCT, kpi, "s", comm, r->iterations);
	}
	if (r->v.machine_limited) {
		machine_limit(x->rn, row, "C = %g ms: machine-limited (the lab's lcore fell behind its links): the JCT's "
			      "overhead is partly the CPU's", compute_ms);
		return row;
	}
	aif_threshold(x, AIF_JCT, "jct_ratio", ratio, x->c->th.max_jct_ratio, true, "synthetic training job");
	return row;
}

int aif_jct(struct aif_ctx *x)
{
	const struct aif_jct_cfg *jc = &x->c->jct;
	unsigned n = jc->ranks ? jc->ranks : x->fab.n_hosts;
	double xs[AIF_MAX_LIST], ys[AIF_MAX_LIST], good[AIF_MAX_LIST], bad[AIF_MAX_LIST];
	unsigned k_done = 0;
	json_t *rows = json_array(), *g;

	if (n > x->fab.n_hosts)
		n = x->fab.n_hosts;
	if (n > 16)
		n = 16;
	printf("\n§10.1 synthetic JCT: %u iterations of compute C then an AllReduce of %u bytes over %u hosts\n"
	       "  %9s  %9s  %9s  %9s  %7s  %9s  %s\n", jc->iterations, jc->message_size, n, "C ms", "iter", "JCT s",
	       "roofline", "ratio", "comm ms", "reading");
	for (unsigned k = 0; k < jc->n_compute && !x->rn->stop; k++) {
		struct aif_coll_run r;
		json_t *row;

		aif_collective_trial(x, KPI_ALLREDUCE, n, jc->message_size, jc->iterations, jc->compute_ms[k] * 1e3, NULL, &r);
		row = jct_row(x, n, jc->compute_ms[k], &r);
		if (r.ran) {
			xs[k_done] = jc->compute_ms[k];
			ys[k_done] = json_number_value(json_object_get(row, "jct_ratio"));
			good[k_done] = 1.05;
			bad[k_done++] = 1.15;
		}
		json_array_append_new(rows, row);
	}
	g = aif_graph(x, "jct_ratio.png", "lines", "§10.1 JCT ratio against the compute step", "compute per iteration C (ms)",
		      "JCT / roofline");
	aif_series(g, "measured", xs, ys, k_done);
	aif_series(g, "1.05 (excellent up to)", xs, good, k_done);
	aif_series(g, "1.15 (significant overhead)", xs, bad, k_done);
	json_object_set_new(x->results, "jct", json_pack("{s:s,s:s,s:i,s:o}", "section", "10.1", "collective",
							 "allreduce (ring)", "ranks", (int)n, "rows", rows));
	return x->rn->stop ? -1 : 0;
}

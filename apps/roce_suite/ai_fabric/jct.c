/* SPDX-License-Identifier: BSD-3-Clause
 *
 * §10.1 synthetic job completion time: `iterations` iterations of a compute step of C then a ring
 * AllReduce of S bytes over N hosts, strictly in sequence (the engine's collective with
 * compute_us before each iteration's first phase), for each N of jct.ranks, S of
 * jct.message_sizes and C of jct.compute_ms. The JCT is from the traffic's start to the last
 * phase's end; the ratio is plotted against N (the draft's graph), or against C with one N.
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

struct jct_point {
	unsigned n, bytes;
	double compute_ms;
};

/* A point's run across the cluster: its test of the job (aif_cluster_job), as a collective run. */
static void cluster_run(const struct aif_cluster_job *j, const struct jct_point *pt, struct aif_coll_run *r,
			struct aif_cluster_step *st)
{
	char name[64];

	memset(r, 0, sizeof(*r));
	memset(st, 0, sizeof(*st));
	if (!j->ran)
		return;
	aif_cluster_jct_name(pt->bytes, pt->compute_ms, name, sizeof(name));
	r->iterations = aif_cluster_iterations(j, name, r->iter_s, &r->total_s, st);
	r->v.machine_limited = st->machine_limited;
	r->ran = true;
}

/* A point's row; step: its cluster step's figures in job (NULL: a trial on the fabric). */
static json_t *jct_row(struct aif_ctx *x, const struct jct_point *pt, const struct aif_coll_run *r,
		       const struct aif_cluster_job *job, const struct aif_cluster_step *step)
{
	char what[96];
	const struct aif_jct_cfg *jc = &x->c->jct;
	unsigned n = pt->n, per_phase = (pt->bytes + n - 1) / n;
	double compute_ms = pt->compute_ms, c_s = compute_ms * 1e-3, af = kpi_algo_factor(KPI_ALLREDUCE, n);
	double b = aif_link_payload_gbps(step ? x->c->cluster.link_gbps : x->host_gbps, per_phase);
	double roof = kpi_roofline_jct_s(jc->iterations, c_s, pt->bytes, af, b), ratio, comm[AIF_MAX_ITER], shortest = INFINITY;
	double comm_sum = 0;
	struct kpi_stats st;
	json_t *row = json_pack("{s:f,s:i,s:i,s:i,s:b}", "compute_ms", compute_ms, "ranks", (int)n, "message_size",
				(int)pt->bytes, "iterations", (int)jc->iterations, "ran", r->ran);

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
	json_object_set_new(row, "comm_ideal_ms", json_real(8 * pt->bytes * af / (b * 1e9) * 1e3));
	json_object_set_new(row, "overlap_fraction", json_real(kpi_overlap_fraction(r->total_s, c_s * r->iterations, comm_sum)));
	text_printf(what, sizeof(what), "N = %u, S = %u, C = %g ms", n, pt->bytes, compute_ms);
	if (step)
		aif_cluster_step_row(x, job, step, n, what, row);
	else
		aif_fabric_to_json(&r->v, row);
	printf("  %4u  %10u  %9.1f  %4u/%-4u  %9.4f  %9.4f  %7.4f  %9.3f  %s\n", n, pt->bytes, compute_ms, r->iterations,
	       jc->iterations, r->total_s, roof, ratio, st.mean * 1e3, reading(ratio));
	suite_verdict(x->rn, r->iterations == jc->iterations, "jct_completes", "N = %u, S = %u, C = %g ms: %u of %u iterations",
		      n, pt->bytes, compute_ms, r->iterations, jc->iterations);
	/* the roofline is a floor whatever the machine did: a JCT below it would be a measuring error */
	suite_verdict(x->rn, r->iterations < jc->iterations || r->total_s >= roof * 0.999, "jct_at_least_roofline",
		      "N = %u, S = %u, C = %g ms: JCT %.4f s, roofline %.4f s (%u x (C + %.3f ms at %.4f Gb/s of payload))", n,
		      pt->bytes, compute_ms, r->total_s, roof, jc->iterations, 8 * pt->bytes * af / (b * 1e9) * 1e3, b);
	suite_verdict(x->rn, shortest >= c_s, "jct_compute_kept", "N = %u, S = %u, C = %g ms: the shortest iteration took %.3f ms",
		      n, pt->bytes, compute_ms, shortest * 1e3);
	if (r->iterations > 1) {
		char kpi[48];
		text_printf(kpi, sizeof(kpi), "comm_s_n%u_s%u_c%gms", n, pt->bytes, compute_ms);
		aif_repeatability(x, AIF_JCT, kpi, "s", comm, r->iterations);
	}
	if (r->v.machine_limited) {
		if (step)
			aif_cluster_machine_limit(x, step, what, "the JCT's overhead", row);
		else
			machine_limit(x->rn, row, "N = %u, S = %u, C = %g ms: machine-limited (%s): the JCT's "
				      "overhead is partly the CPU's", n, pt->bytes, compute_ms, aif_machine_reason(x));
		return row;
	}
	aif_threshold(x, AIF_JCT, "jct_ratio", ratio, x->c->th.max_jct_ratio, true, "synthetic training job");
	return row;
}

/* The graph: the ratio against N, a series per (S, C), with several N (the draft's); else against
 * C, a series per S. */
static void jct_graph(struct aif_ctx *x, const struct jct_point *pts, const double *ratio, unsigned n_pts)
{
	const struct aif_jct_cfg *jc = &x->c->jct;
	bool by_n = jc->n_ranks > 1;
	unsigned lines = by_n ? jc->n_sizes * jc->n_compute : jc->n_sizes;
	double xs[AIF_MAX_LIST * AIF_MAX_LIST * AIF_MAX_LIST], ys[AIF_MAX_LIST * AIF_MAX_LIST * AIF_MAX_LIST];
	json_t *g = aif_graph(x, "jct_ratio.png", "lines", by_n ? "§10.1 JCT ratio against the ranks" :
				  "§10.1 JCT ratio against the compute step", by_n ? "ranks N" : "compute per iteration C (ms)",
			      "JCT / roofline");

	for (unsigned l = 0; l < lines; l++) {
		unsigned bytes = jc->message_sizes[by_n ? l / jc->n_compute : l], k = 0;
		double c_ms = by_n ? jc->compute_ms[l % jc->n_compute] : NAN;
		char label[64];

		for (unsigned i = 0; i < n_pts; i++)
			if (pts[i].bytes == bytes && (!by_n || pts[i].compute_ms == c_ms)) {
				xs[k] = by_n ? pts[i].n : pts[i].compute_ms;
				ys[k++] = ratio[i];
			}
		if (by_n)
			text_printf(label, sizeof(label), "S = %u, C = %g ms", bytes, c_ms);
		else
			text_printf(label, sizeof(label), "S = %u", bytes);
		aif_series(g, label, xs, ys, k);
	}
	if (n_pts) { /* the reading's bounds across the x range */
		double lo = INFINITY, hi = -INFINITY, bx[2], good[2] = { 1.05, 1.05 }, bad[2] = { 1.15, 1.15 };
		for (unsigned i = 0; i < n_pts; i++) {
			double v = by_n ? pts[i].n : pts[i].compute_ms;
			lo = fmin(lo, v), hi = fmax(hi, v);
		}
		bx[0] = lo, bx[1] = hi;
		aif_series(g, "1.05 (excellent up to)", bx, good, 2);
		aif_series(g, "1.15 (significant overhead)", bx, bad, 2);
	}
}

int aif_jct(struct aif_ctx *x)
{
	const struct aif_jct_cfg *jc = &x->c->jct;
	const bool across = x->c->cluster.across[AIF_JCT];
	const struct aif_cluster_job *job = across ? aif_cluster_job(x) : NULL;
	unsigned all = across ? x->c->cluster.ranks : x->fab.n_hosts > 16 ? 16 : x->fab.n_hosts;
	unsigned n_ranks = jc->n_ranks ? jc->n_ranks : 1, done = 0;
	struct jct_point pts[AIF_MAX_LIST * AIF_MAX_LIST * AIF_MAX_LIST];
	double ratio[AIF_MAX_LIST * AIF_MAX_LIST * AIF_MAX_LIST];
	json_t *rows = json_array();

	printf("\n§10.1 synthetic JCT: %u iterations of compute C then a ring AllReduce of S bytes over N %s\n"
	       "  %4s  %10s  %9s  %9s  %9s  %9s  %7s  %9s  %s\n", jc->iterations, across ? "ranks" : "hosts", "N", "S", "C ms", "iter", "JCT s",
	       "roofline", "ratio", "comm ms", "reading");
	for (unsigned a = 0; a < n_ranks && !x->rn->stop; a++) {
		unsigned n = jc->n_ranks ? jc->ranks[a] : all;

		if (n > all) {
			aif_anomaly(x, AIF_JCT, "N = %u: not run: the fabric has %u hosts (16 at most)", n, all);
			continue;
		}
		for (unsigned b = 0; b < jc->n_sizes && !x->rn->stop; b++)
			for (unsigned k = 0; k < jc->n_compute && !x->rn->stop; k++) {
				struct jct_point pt = { n, jc->message_sizes[b], jc->compute_ms[k] };
				struct aif_coll_run r;
				struct aif_cluster_step st;
				json_t *row;

				if (across)
					cluster_run(job, &pt, &r, &st);
				else
					aif_collective_trial(x, KPI_ALLREDUCE, pt.n, pt.bytes, jc->iterations, pt.compute_ms * 1e3,
							     NULL, &r);
				row = jct_row(x, &pt, &r, job, across ? &st : NULL);
				if (r.ran) {
					pts[done] = pt;
					ratio[done++] = json_number_value(json_object_get(row, "jct_ratio"));
				}
				json_array_append_new(rows, row);
			}
	}
	jct_graph(x, pts, ratio, done);
	json_object_set_new(x->results, "jct", json_pack("{s:s,s:s,s:o,s:s}", "section", "10.1", "collective", "allreduce (ring)",
							 "rows", rows, "where", across ? "cluster" : "fabric"));
	if (across)
		json_object_set(json_object_get(x->results, "jct"), "cluster", job->summary);
	return x->rn->stop ? -1 : 0;
}

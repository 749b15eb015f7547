/* SPDX-License-Identifier: BSD-3-Clause */
#include "cluster_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "coll_model.h"

static json_t *null_matrix(unsigned n)
{
	json_t *m = json_array();

	for (unsigned i = 0; i < n; i++) {
		json_t *row = json_array();
		for (unsigned j = 0; j < n; j++)
			json_array_append_new(row, json_null());
		json_array_append_new(m, row);
	}
	return m;
}

static void set(json_t *m, unsigned i, unsigned j, double v)
{
	json_array_set_new(json_array_get(m, i), j, json_real(v));
}

static double num(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* What receiver j's summary says it got from each sender, into the matrices. */
static void add_receiver(const json_t *sum, unsigned n, const struct clock_offset *off, bool latency, json_t *bw,
			 json_t *p50, json_t *p99)
{
	unsigned j = (unsigned)json_integer_value(json_object_get(sum, "rank"));
	double secs = num(sum, "duration_s");
	const json_t *e;
	size_t k;

	if (j >= n || json_object_get(sum, "error"))
		return;
	json_array_foreach(json_object_get(sum, "rx"), k, e) {
		unsigned i = (unsigned)json_integer_value(json_object_get(e, "from"));
		/* j's clock minus i's: what a one-way latency read on j's clock of i's send time gains */
		double skew = off ? (double)(off[j].offset_ns - off[i].offset_ns) : 0;
		if (i >= n || i == j)
			continue;
		if (!latency && secs > 0)
			set(bw, i, j, num(e, "payload_bytes") * 8 / secs / 1e9);
		if (latency && num(e, "latency_count") > 0) {
			set(p50, i, j, num(e, "p50_ns") - skew);
			set(p99, i, j, num(e, "p99_ns") - skew);
		}
	}
}

static bool is(const json_t *o, const char *key, const char *value)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v && !strcmp(v, value);
}

/* The matrices of the tests (all, or the pairwise ones) into bw, p50, p99. */
static void add_tests(const json_t *tests, bool pairwise_only, unsigned n_ranks, const struct clock_offset *offset,
		      json_t *bw, json_t *p50, json_t *p99)
{
	const json_t *t, *round, *sum;
	size_t a, b, c;

	json_array_foreach(tests, a, t) {
		if (pairwise_only && !is(t, "type", "pairwise"))
			continue;
		json_array_foreach(json_object_get(t, "rounds"), b, round)
			json_array_foreach(json_object_get(round, "ranks"), c, sum)
				add_receiver(sum, n_ranks, offset, is(t, "measure", "latency"), bw, p50, p99);
	}
}

static json_t *matrices(const json_t *tests, bool pairwise_only, unsigned n_ranks, const struct clock_offset *offset)
{
	json_t *bw = null_matrix(n_ranks), *p50 = null_matrix(n_ranks), *p99 = null_matrix(n_ranks);

	add_tests(tests, pairwise_only, n_ranks, offset, bw, p50, p99);
	return json_pack("{s:o,s:{s:o,s:o}}", "bandwidth_gbps", bw, "latency_ns", "p50", p50, "p99", p99);
}

json_t *cluster_matrices(const json_t *tests, unsigned n_ranks, const struct clock_offset *offset)
{
	return matrices(tests, true, n_ranks, offset);
}

/* ---- a test's summary ------------------------------------------------------------------------ */

struct dir_stats {
	double sum, sq, lo, hi;
	unsigned n;
};

static void dir_add(struct dir_stats *d, double v)
{
	d->sum += v, d->sq += v * v, d->n++;
	d->lo = d->n == 1 || v < d->lo ? v : d->lo;
	d->hi = d->n == 1 || v > d->hi ? v : d->hi;
}

double cluster_jfi(double sum, double sum_sq, unsigned n)
{
	return n && sum_sq > 0 ? sum * sum / (n * sum_sq) : 0;
}

/* The round's aggregate (what every receiver got, Gb/s) and its directions into d. */
static double round_directions(const json_t *round, bool latency, struct dir_stats *d, double *root_rx, int root)
{
	const json_t *sum, *e;
	double total = 0;
	size_t a, b;

	json_array_foreach(json_object_get(round, "ranks"), a, sum) {
		double secs = num(sum, "duration_s");
		int me = (int)json_integer_value(json_object_get(sum, "rank"));
		if (json_object_get(sum, "error"))
			continue;
		json_array_foreach(json_object_get(sum, "rx"), b, e) {
			double v = latency ? num(e, "p50_ns") : secs > 0 ? num(e, "payload_bytes") * 8 / secs / 1e9 : 0;
			if (latency && num(e, "latency_count") <= 0)
				continue;
			dir_add(d, v);
			total += latency ? 0 : v;
			if (me == root)
				*root_rx += v;
		}
	}
	return total;
}

/* ---- a collective's ---------------------------------------------------------------------------- */

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of n sorted values. */
static double percentile(const double *v, unsigned n, double p)
{
	unsigned k = (unsigned)ceil(p / 100 * n);

	return v[k ? k - 1 : 0];
}

static json_t *stats_json(double *v, unsigned n)
{
	double sum = 0;

	if (!n)
		return json_null();
	for (unsigned i = 0; i < n; i++)
		sum += v[i];
	qsort(v, n, sizeof(*v), by_value);
	return json_pack("{s:f,s:f,s:f,s:f,s:f,s:f}", "mean", sum / n, "min", v[0], "p50", percentile(v, n, 50), "p95",
			 percentile(v, n, 95), "p99", percentile(v, n, 99), "max", v[n - 1]);
}

/* Every rank's phase ends from the round's summaries, in rank 0's time; how many ranks have them
 * (a rank without: an error, missing). `phases` points into the summaries. */
static unsigned rank_times(const json_t *round, unsigned n_ranks, const struct clock_offset *offset,
			   struct coll_rank_times *r, double **phases)
{
	const json_t *sum;
	unsigned k = 0;
	size_t i;

	json_array_foreach(json_object_get(round, "ranks"), i, sum) {
		const json_t *c = json_object_get(sum, "collective"), *e;
		unsigned rank = (unsigned)json_integer_value(json_object_get(sum, "rank"));
		size_t p;
		if (!c || rank >= n_ranks || k >= n_ranks)
			continue;
		phases[k] = calloc(json_array_size(json_object_get(c, "phase_end_us")) + 1, sizeof(double));
		json_array_foreach(json_object_get(c, "phase_end_us"), p, e)
			phases[k][p] = json_number_value(e);
		r[k] = (struct coll_rank_times){
			.start_ns = (double)json_integer_value(json_object_get(sum, "start_unix_ns")) -
				    (offset ? (double)offset[rank].offset_ns : 0),
			.phase_end_us = phases[k],
			.phases_done = (unsigned)json_integer_value(json_object_get(c, "phases_completed")) };
		k++;
	}
	return k;
}

/* Completion time and busBW per iteration over the ranks (the test's first round). */
static json_t *collective_summary(const json_t *test, unsigned n_ranks, const struct clock_offset *offset)
{
	const char *opn = json_string_value(json_object_get(test, "op"));
	enum cl_collective_op op = !opn ? CL_OP_ALLREDUCE : !strcmp(opn, "allgather") ? CL_OP_ALLGATHER
						: !strcmp(opn, "alltoall") ? CL_OP_ALLTOALL : CL_OP_ALLREDUCE;
	unsigned iters = (unsigned)json_integer_value(json_object_get(test, "iterations"));
	unsigned per = (unsigned)json_integer_value(json_object_get(test, "phases_per_iteration"));
	double size = json_number_value(json_object_get(test, "message_size"));
	struct coll_rank_times *r = calloc(n_ranks + 1, sizeof(*r));
	double **phases = calloc(n_ranks + 1, sizeof(*phases)), *t_ns = calloc(iters + 1, sizeof(double));
	double *t_us = calloc(iters + 1, sizeof(double)), *bus = calloc(iters + 1, sizeof(double)), total = 0;
	unsigned have = r && phases ? rank_times(json_array_get(json_object_get(test, "rounds"), 0), n_ranks, offset, r,
						   phases) : 0;
	unsigned done = have == n_ranks && t_ns ? coll_iteration_times(r, have, per, iters, t_ns) : 0;
	json_t *o;

	for (unsigned k = 0; k < done && t_us && bus; k++) {
		t_us[k] = t_ns[k] / 1e3;
		bus[k] = coll_busbw_gbps(op, n_ranks, size, t_ns[k]);
		total += t_ns[k];
	}
	o = json_pack("{s:i,s:i,s:i,s:f,s:f}", "ranks_reporting", (int)have, "iterations", (int)iters,
		      "iterations_completed", (int)done, "bus_factor", coll_bus_factor(op, n_ranks), "total_us", total / 1e3);
	json_object_set_new(o, "algbw_gbps", json_real(total > 0 ? size * 8 * done / total : 0));
	json_object_set_new(o, "busbw_gbps_overall", json_real(total > 0 ? coll_busbw_gbps(op, n_ranks, size, total / done) : 0));
	json_object_set_new(o, "iteration_us", json_array());
	for (unsigned k = 0; k < done; k++)
		json_array_append_new(json_object_get(o, "iteration_us"), json_real(t_us[k]));
	json_object_set_new(o, "time_us", stats_json(t_us, done));
	json_object_set_new(o, "busbw_gbps", stats_json(bus, done));
	for (unsigned k = 0; k < have; k++)
		free(phases[k]);
	free(phases), free(r), free(t_ns), free(t_us), free(bus);
	return o;
}

json_t *cluster_test_summary(const json_t *test, unsigned n_ranks, const struct clock_offset *offset)
{
	bool latency = is(test, "measure", "latency");
	int root = is(test, "type", "incast") ? (int)json_integer_value(json_object_get(test, "root")) : -1;
	struct dir_stats d = { 0 };
	double aggregate = 0, root_rx = 0;
	unsigned rounds = 0, flows = 0;
	const json_t *round;
	json_t *one = json_array(), *o;
	size_t i;

	json_array_foreach(json_object_get(test, "rounds"), i, round) {
		aggregate += round_directions(round, latency, &d, &root_rx, root);
		flows += (unsigned)json_array_size(json_object_get(round, "flows"));
		rounds++;
	}
	json_array_append(one, (json_t *)test);
	o = json_pack("{s:i,s:i,s:i,s:o}", "rounds", (int)rounds, "flows", (int)flows, "directions_measured", (int)d.n,
		      "matrix", matrices(one, false, n_ranks, offset));
	json_decref(one);
	if (latency) { /* the matrix's: less the clock offsets */
		struct dir_stats p = { 0 };
		const json_t *row, *v;
		size_t a, b;
		json_array_foreach(json_object_get(json_object_get(json_object_get(o, "matrix"), "latency_ns"), "p50"), a, row)
			json_array_foreach(row, b, v)
				if (json_is_number(v))
					dir_add(&p, json_number_value(v));
		json_object_set_new(o, "p50_ns_min", p.n ? json_real(p.lo) : json_null());
		json_object_set_new(o, "p50_ns_max", p.n ? json_real(p.hi) : json_null());
		return o;
	}
	if (is(test, "type", "collective"))
		json_object_set_new(o, "collective", collective_summary(test, n_ranks, offset));
	/* a round's flows run at once: the aggregate is a round's, averaged over the rounds */
	json_object_set_new(o, "aggregate_gbps", json_real(rounds ? aggregate / rounds : 0));
	json_object_set_new(o, "direction_gbps", json_pack("{s:o,s:o,s:o}", "min", d.n ? json_real(d.lo) : json_null(),
							    "mean", d.n ? json_real(d.sum / d.n) : json_null(), "max",
							    d.n ? json_real(d.hi) : json_null()));
	json_object_set_new(o, "jfi", json_real(cluster_jfi(d.sum, d.sq, d.n)));
	if (root >= 0)
		json_object_set_new(o, "root_rx_gbps", json_real(root_rx / (rounds ? rounds : 1)));
	return o;
}

/* The pairs of matrix m that miss a threshold (below it when `below`), worst first, into worst[]. */
static unsigned check(const json_t *m, unsigned n, double limit, bool below, const char *what, json_t *worst)
{
	unsigned misses = 0;

	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < n; j++) {
			const json_t *v = json_array_get(json_array_get(m, i), j);
			double x = json_number_value(v);
			if (!json_is_number(v) || (below ? x >= limit : x <= limit))
				continue;
			misses++;
			json_array_append_new(worst, json_pack("{s:i,s:i,s:s,s:f,s:f}", "from", (int)i, "to", (int)j, "metric",
							       what, "value", x, "threshold", limit));
		}
	return misses;
}

static int by_margin(const void *a, const void *b)
{
	const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
	double mx = fabs(num(x, "value") / num(x, "threshold") - 1), my = fabs(num(y, "value") / num(y, "threshold") - 1);

	return mx < my ? 1 : mx > my ? -1 : 0;
}

static json_t *sorted(json_t *a)
{
	size_t n = json_array_size(a);
	json_t **v = calloc(n ? n : 1, sizeof(*v)), *out = json_array();

	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(a, i);
	qsort(v, n, sizeof(*v), by_margin);
	for (size_t i = 0; i < n; i++)
		json_array_append(out, v[i]);
	free(v);
	json_decref(a);
	return out;
}

/* Each collective test's mean busBW against the threshold (the tests' summaries: set first). */
static void check_busbw(double limit, const json_t *tests, json_t *checks, bool *failed)
{
	const json_t *t;
	size_t i;

	json_array_foreach(tests, i, t) {
		const json_t *c = json_object_get(json_object_get(t, "summary"), "collective");
		const json_t *mean = json_object_get(json_object_get(c, "busbw_gbps"), "mean");
		bool ok;
		if (!is(t, "type", "collective"))
			continue;
		ok = json_is_number(mean) && json_number_value(mean) >= limit; /* no iteration done: a fail */
		json_array_append_new(checks, json_pack("{s:s,s:s?,s:f,s:O,s:s}", "check", "min_busbw_gbps", "test",
							json_string_value(json_object_get(t, "name")), "threshold", limit,
							"busbw_gbps_mean", mean ? mean : json_null(), "verdict",
							ok ? "pass" : "fail"));
		*failed |= !ok;
	}
}

json_t *cluster_sla(const struct cl_sla *sla, const json_t *matrix, const json_t *tests, unsigned n_ranks, bool *failed)
{
	json_t *worst = json_array(), *checks = json_array();
	unsigned misses;

	*failed = false;
	if (sla->min_busbw_gbps > 0)
		check_busbw(sla->min_busbw_gbps, tests, checks, failed);
	if (sla->min_pair_gbps > 0) {
		misses = check(json_object_get(matrix, "bandwidth_gbps"), n_ranks, sla->min_pair_gbps, true, "bandwidth_gbps",
			       worst);
		json_array_append_new(checks, json_pack("{s:s,s:f,s:i,s:s}", "check", "min_pair_gbps", "threshold",
							sla->min_pair_gbps, "pairs_failed", (int)misses, "verdict",
							misses ? "fail" : "pass"));
		*failed |= misses > 0;
	}
	if (sla->max_pair_p99_us > 0) {
		misses = check(json_object_get(json_object_get(matrix, "latency_ns"), "p99"), n_ranks,
			       sla->max_pair_p99_us * 1e3, false, "latency_p99_ns", worst);
		json_array_append_new(checks, json_pack("{s:s,s:f,s:i,s:s}", "check", "max_pair_p99_us", "threshold",
							sla->max_pair_p99_us, "pairs_failed", (int)misses, "verdict",
							misses ? "fail" : "pass"));
		*failed |= misses > 0;
	}
	return json_pack("{s:o,s:o,s:s}", "checks", checks, "worst_pairs", sorted(worst), "verdict",
			 !json_array_size(checks) ? "none" : *failed ? "fail" : "pass");
}

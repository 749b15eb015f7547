/* SPDX-License-Identifier: BSD-3-Clause
 *
 * §5.2 latency: one QP across the spines with every packet timestamped (the engine's one-way
 * probes: sender and receiver share its clock), at zero load (the QP alone at a trickle) and at
 * full load (every host pair across the spines, both ways, at `load` of the link, the measured QP
 * among them), each `repeats` times. The engine writes every sample (run.latency_samples); the
 * percentiles the methodology lists (min, mean, p50, p95, p99, p99.9, max) come from them
 * exactly, per trial, and are averaged over the repeats; the histogram and the CDF are of all
 * the samples of a load; the latency increase factor is loaded p99 over unloaded p99.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aif_ctx.h"
#include "config_tree.h"
#include "percentile.h"
#include "verdict.h"

#define MAX_SAMPLES (4u << 20)    /* a load's samples over its repeats; beyond: counted, not kept */
#define CDF_POINTS 200
#define HIST_BINS 40
#define MAX_PAIRS 16

struct samples {
	double *ns;
	size_t n, from;                 /* from: where this trial's samples start */
	uint64_t beyond;                /* not kept: past MAX_SAMPLES */
};

/* latency.csv: kind,port,session,flow,seq,tx_ns,rx_ns,latency_ns; the last column of each row. */
static void read_samples(const char *dir, void *arg)
{
	struct samples *s = arg;
	char path[4200], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/latency.csv", dir);
	if (!(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *last = strrchr(line, ',');
		char *end;
		double v;

		if (!last || !strncmp(line, "kind", 4))
			continue;
		v = strtod(last + 1, &end);
		if (end == last + 1)
			continue;
		if (s->n < MAX_SAMPLES)
			s->ns[s->n++] = v;
		else
			s->beyond++;
	}
	fclose(f);
}

enum { ST_MIN, ST_MEAN, ST_P50, ST_P95, ST_P99, ST_P999, ST_MAX, STATS };
static const char *const stat_names[STATS] = { "min", "mean", "p50", "p95", "p99", "p99_9", "max" };

/* The statistics of x[0..n) (sorted here), in us. */
static void stats_us(double *x, size_t n, double *out)
{
	static const double q[STATS] = { 0, -1, 0.50, 0.95, 0.99, 0.999, 1 };
	double sum = 0;

	percentile_sort(x, n);
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	for (unsigned k = 0; k < STATS; k++)
		out[k] = (k == ST_MEAN ? (n ? sum / n : 0) : percentile_of_sorted(x, n, q[k])) / 1e3;
}

/* One trial of the measured QP (with the others at load when loaded); its samples appended. */
static int lat_trial(struct aif_ctx *x, bool loaded, unsigned rep, struct samples *s, struct aif_fabric_view *v)
{
	const struct aif_latency_cfg *lc = &x->c->latency;
	unsigned pairs[2 * MAX_PAIRS][2], half = aif_cross_pairs(x, pairs, MAX_PAIRS), n = 0;
	double line = aif_link_frame_gbps(x->host_gbps, lc->message_size);
	struct aif_flow probe = { .message_size = lc->message_size, .priority = lc->priority, .latency = true,
				  .rate_gbps = loaded ? lc->load * line : fmin(lc->idle_gbps, line) };
	struct aif_flow bg = { .message_size = lc->message_size, .priority = lc->priority, .rate_gbps = lc->load * line };
	struct flow_set fs = aif_entry_flows("lat");
	struct aif_trial t;
	struct trial tr;
	struct metrics m;
	int rc;

	aif_trial_init(&t, x);
	cfg_set_string(cfg_group(config_root_setting(&t.cfg), "run"), "latency_samples", "latency.csv");
	aif_trial_pairs(&t, x, "lat", (const unsigned(*)[2])pairs, 1, 1, &probe);
	if (loaded) {
		unsigned others[2 * MAX_PAIRS][2];
		for (unsigned i = 0; i < half; i++) {
			if (i) { /* pair 0's forward direction is the probe */
				others[n][0] = pairs[i][0];
				others[n++][1] = pairs[i][1];
			}
			others[n][0] = pairs[i][1];
			others[n++][1] = pairs[i][0];
		}
		aif_trial_pairs(&t, x, "bg", (const unsigned(*)[2])others, n, 1, &bg);
	}
	trial_init(&tr, "latency", "latency %s load, repeat %u", loaded ? "full" : "zero", rep + 1);
	tr.files = read_samples;
	tr.files_arg = s;
	s->from = s->n;
	rc = trial_measure(x->rn, &t.cfg, &tr, &fs, &m);
	if (!rc) {
		aif_fabric_read(tr.report, v);
		aif_fabric_to_json(v, tr.record);
		json_object_set_new(tr.record, "samples", json_integer((json_int_t)(s->n - s->from)));
		trial_verdict(x->rn, &tr, "info", "%zu samples", s->n - s->from);
	}
	trial_release(&tr);
	aif_trial_free(&t);
	return rc;
}

struct lat_load {
	double stats[STATS];            /* us, the repeats' mean */
	double p99s[100];               /* us, each repeat's */
	unsigned repeats;
	bool machine_limited;
	size_t samples;
};

static void lat_graphs(json_t *cdf, json_t *hist, const char *label, double *ns, size_t n)
{
	double xs[CDF_POINTS], ys[CDF_POINTS], hx[HIST_BINS], hy[HIST_BINS] = { 0 };
	double lo, hi, width;

	if (!n)
		return;
	percentile_sort(ns, n);
	for (unsigned i = 0; i < CDF_POINTS; i++) {
		ys[i] = (i + 1.0) / CDF_POINTS;
		xs[i] = percentile_of_sorted(ns, n, ys[i]) / 1e3;
	}
	aif_series(cdf, label, xs, ys, CDF_POINTS);
	lo = ns[0] / 1e3;
	hi = percentile_of_sorted(ns, n, 0.999) / 1e3; /* the tail beyond p99.9 in the last bin */
	width = hi > lo ? (hi - lo) / HIST_BINS : 1;
	for (unsigned b = 0; b < HIST_BINS; b++)
		hx[b] = lo + (b + 0.5) * width;
	for (size_t i = 0; i < n; i++) {
		long b = lround(floor((ns[i] / 1e3 - lo) / width));
		hy[b < 0 ? 0 : b >= HIST_BINS ? HIST_BINS - 1 : b]++;
	}
	aif_series(hist, label, hx, hy, HIST_BINS);
}

static void lat_load_run(struct aif_ctx *x, bool loaded, struct samples *s, struct lat_load *out, json_t *cdf,
			 json_t *hist)
{
	const struct aif_latency_cfg *lc = &x->c->latency;
	size_t first = s->n;

	memset(out, 0, sizeof(*out));
	for (unsigned r = 0; r < lc->repeats && r < 100 && !x->rn->stop; r++) {
		struct aif_fabric_view v;
		double st[STATS], *copy;
		size_t k;

		if (lat_trial(x, loaded, r, s, &v))
			continue;
		out->machine_limited |= v.machine_limited;
		k = s->n - s->from;
		if (!k) {
			aif_anomaly(x, AIF_LATENCY, "%s load, repeat %u: no latency samples", loaded ? "full" : "zero", r + 1);
			continue;
		}
		if (!(copy = malloc(k * sizeof(*copy))))
			continue;
		memcpy(copy, s->ns + s->from, k * sizeof(*copy));
		stats_us(copy, k, st);
		free(copy);
		for (unsigned i = 0; i < STATS; i++)
			out->stats[i] += st[i];
		out->p99s[out->repeats++] = st[ST_P99];
	}
	for (unsigned i = 0; i < STATS && out->repeats; i++)
		out->stats[i] /= out->repeats;
	out->samples = s->n - first;
	if (s->beyond)
		aif_anomaly(x, AIF_LATENCY, "%llu samples past the %u kept were left out of the histogram",
			    (unsigned long long)s->beyond, MAX_SAMPLES);
	lat_graphs(cdf, hist, loaded ? "full load" : "zero load", s->ns + first, out->samples);
}

static json_t *lat_row(const char *load, double gbps, const struct lat_load *l)
{
	json_t *row = json_pack("{s:s,s:f,s:i,s:I,s:b}", "load", load, "offered_gbps_per_qp", gbps, "repeats",
				(int)l->repeats, "samples", (json_int_t)l->samples, "machine_limited", l->machine_limited);

	printf("  %-5s %5u", load, l->repeats);
	for (unsigned i = 0; i < STATS; i++) {
		char key[16];
		snprintf(key, sizeof(key), "%s_us", stat_names[i]);
		json_object_set_new(row, key, json_real(l->stats[i]));
		printf("  %9.2f", l->stats[i]);
	}
	printf("\n");
	return row;
}

int aif_latency(struct aif_ctx *x)
{
	const struct aif_latency_cfg *lc = &x->c->latency;
	double line = aif_link_frame_gbps(x->host_gbps, lc->message_size), factor;
	struct samples s = { .ns = malloc(MAX_SAMPLES * sizeof(double)) };
	struct lat_load zero, full;
	json_t *cdf, *hist, *rows = json_array(), *row;

	if (!s.ns) {
		aif_anomaly(x, AIF_LATENCY, "no memory for %u samples", MAX_SAMPLES);
		return 0;
	}
	cdf = aif_graph(x, "latency_cdf.png", "lines", "§5.2 one-way latency CDF", "latency (us)", "fraction of packets");
	hist = aif_graph(x, "latency_histogram.png", "hist", "§5.2 one-way latency histogram", "latency (us)", "packets");
	printf("\n§5.2 latency: one QP across the spines, one-way, us (mean of %u repeats)\n  %-5s %5s", lc->repeats, "load",
	       "reps");
	for (unsigned i = 0; i < STATS; i++)
		printf("  %9s", stat_names[i]);
	printf("\n");
	lat_load_run(x, false, &s, &zero, cdf, hist);
	json_array_append_new(rows, lat_row("zero", fmin(lc->idle_gbps, line), &zero));
	lat_load_run(x, true, &s, &full, cdf, hist);
	json_array_append_new(rows, row = lat_row("full", lc->load * line, &full));
	free(s.ns);
	factor = zero.stats[ST_P99] > 0 ? full.stats[ST_P99] / zero.stats[ST_P99] : 0;
	printf("  latency increase factor (loaded p99 / unloaded p99): %.2f\n", factor);
	aif_repeatability(x, AIF_LATENCY, "p99_latency_us_zero_load", "us", zero.p99s, zero.repeats);
	aif_repeatability(x, AIF_LATENCY, "p99_latency_us_full_load", "us", full.p99s, full.repeats);
	if (zero.machine_limited || full.machine_limited)
		machine_limit(x->rn, row, "latency: a trial was machine-limited (%s): its queueing is "
			      "partly the CPU's", aif_machine_reason(x));
	else
		aif_threshold(x, AIF_LATENCY, "latency_factor", factor, x->c->th.max_latency_factor, true,
			      "loaded p99 / unloaded p99");
	if (zero.repeats) {
		suite_verdict(x->rn, zero.stats[ST_MIN] > 0 && zero.stats[ST_MIN] <= zero.stats[ST_P50] &&
					     zero.stats[ST_P99] <= zero.stats[ST_MAX],
			      "latency_ordered", "zero load: min %.2f <= p50 %.2f, p99 %.2f <= max %.2f us",
			      zero.stats[ST_MIN], zero.stats[ST_P50], zero.stats[ST_P99], zero.stats[ST_MAX]);
		aif_threshold(x, AIF_LATENCY, "p99_us", zero.stats[ST_P99], x->c->th.max_latency_p99_us, true,
			      "zero-load p99 one-way latency");
	}
	json_object_set_new(x->results, "latency",
			    json_pack("{s:s,s:o,s:f,s:i}", "section", "5.2", "rows", rows, "latency_increase_factor", factor,
				      "message_size", (int)lc->message_size));
	return x->rn->stop ? -1 : 0;
}

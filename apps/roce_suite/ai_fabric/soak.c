/* SPDX-License-Identifier: BSD-3-Clause
 *
 * §12 soak: one engine for duration_s (the draft: 24 h), the fabric's first N hosts alternating a
 * ring AllReduce and an AlltoAll of S bytes, every KPI sampled each interval_s (the draft: 60 s).
 * The engine's repeating collectives take turns by their windows (each iteration starts only in
 * its collective's half of every 2 x interval_s) and its time series gives, per interval, each
 * collective's iterations and their mean time, every link's drops, ECN marks and PFC XOFF, the
 * hosts' received rate, and the process's resident memory (docs/monitoring.md#time-series).
 *
 * Per sample the op whose turn it was (the one with the most iterations: an iteration started at
 * a window's end spills into the next) and its busBW, S x algo_factor / the mean iteration time.
 * Anomalies, each with its start and duration (consecutive samples merged): a stall (no iteration
 * in a turn), busBW below (1 - soak.tolerance) of that op's median, frames dropped, a counter that
 * went backwards or past what a link carries (a wrap, or a reset). Memory: the least-squares slope
 * of the resident set after the warm-up (the first tenth of the run, at least 30 s, at most half
 * of it), in MB/h; a leak when it is above soak.leak_mb_per_h (the draft: 1) and the fitted growth
 * above 1 MiB (the pools' mbufs are first touched as the traffic cycles through them: on this
 * lab 1.5 MB over the first 13 s, then flat; a short run's slope is that, not a trend).
 *
 * Verdicts: no stall (soak_no_stall), memory flat (soak_memory_flat) and counters monotonic
 * (soak_counters_monotonic); the busBW and drop anomalies are the fabric's and reported, and not
 * judged when the machine limited the run. On a real switch tier (fabric.external) the links'
 * rows are the switches' own: drops and ECN marks are null, XOFF is what the NICs received.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aif_ctx.h"
#include "config_tree.h"
#include "percentile.h"
#include "verdict.h"

#define MAX_SAMPLES 100000      /* 24 h at 1 s */
#define WARMUP_SHARE 0.1       /* of the run, and at least WARMUP_MIN_S (at most half the run): the */
#define WARMUP_MIN_S 30.0       /* pools' mbufs are first touched as traffic cycles through them */
#define LEAK_MIN_MB 1.0

static const enum kpi_collective ops[2] = { KPI_ALLREDUCE, KPI_ALLTOALL };

struct sample {
	double t_s, dt_s;
	unsigned iterations[2];
	double iteration_ms[2];
	int op;                         /* the turn's: 0 AllReduce, 1 AlltoAll, -1 none */
	double busbw_gbps;              /* the turn's op's */
	double rx_gbps;                 /* every host port's received rate, summed */
	double dropped, ecn_marked, xoff;
	double rss_mb;
	bool wrapped;                   /* a counter backwards or past a link's frames */
};

struct soak_run {
	struct sample *s;
	unsigned n;
	unsigned cols[32];              /* the columns read, by the header's names */
	double link_frames_max;         /* the most frames a link carries in an interval, with margin */
	double link_gbps_max;
	bool external;                  /* a real switch tier: no link rows; XOFF as the NICs received it */
};

/* ---- the time series -------------------------------------------------------------------------------- */

enum col { C_TIME, C_KIND, C_NAME, C_TX, C_RX, C_PFC, C_ITER, C_ITER_MS, C_RSS, C_DROP, C_ECN, C_COLS };
static const char *const col_names[C_COLS] = { "time_s", "kind", "name", "tx_gbps", "rx_gbps", "pfc_rx",
					       "iterations", "iteration_ms", "rss_mb", "dropped", "ecn_marked" };

static int header(struct soak_run *r, char *line)
{
	unsigned found = 0, k = 0;

	for (char *f = strtok(line, ",\n"); f; f = strtok(NULL, ",\n"), k++)
		for (unsigned c = 0; c < C_COLS; c++)
			if (!strcmp(f, col_names[c]))
				r->cols[c] = k, found |= 1u << c;
	return found == (1u << C_COLS) - 1 ? 0 : -1;
}

/* The fields of a row (empty ones kept), at most max. */
static unsigned split(char *line, char **f, unsigned max)
{
	unsigned n = 0;

	line[strcspn(line, "\n")] = 0;
	for (char *p = line; n < max; p++) {
		f[n++] = p;
		p = strchr(p, ',');
		if (!p)
			break;
		*p = 0;
	}
	return n;
}

static struct sample *sample_at(struct soak_run *r, double t)
{
	if (r->n && fabs(r->s[r->n - 1].t_s - t) < 1e-6)
		return &r->s[r->n - 1];
	if (r->n == MAX_SAMPLES)
		return NULL;
	r->s[r->n] = (struct sample){ .t_s = t, .op = -1 };
	r->s[r->n].dt_s = r->n ? t - r->s[r->n - 1].t_s : t;
	return &r->s[r->n++];
}

static void add_row(struct soak_run *r, char **f, unsigned n)
{
	struct sample *s;
	double v;

	for (unsigned c = 0; c < C_COLS; c++)
		if (r->cols[c] >= n)
			return;
	if (!(s = sample_at(r, atof(f[r->cols[C_TIME]]))))
		return;
	if (!strcmp(f[r->cols[C_KIND]], "collective")) {
		int op = !strcmp(f[r->cols[C_NAME]], kpi_collective_names[KPI_ALLTOALL]);
		s->iterations[op] = (unsigned)atol(f[r->cols[C_ITER]]);
		s->iteration_ms[op] = atof(f[r->cols[C_ITER_MS]]);
	} else if (!strcmp(f[r->cols[C_KIND]], "process")) {
		s->rss_mb = atof(f[r->cols[C_RSS]]);
	} else if (!strcmp(f[r->cols[C_KIND]], "port")) {
		s->rx_gbps += atof(f[r->cols[C_RX]]);
		if (r->external)
			s->xoff += atof(f[r->cols[C_PFC]]);
		s->wrapped |= atof(f[r->cols[C_TX]]) > r->link_gbps_max || atof(f[r->cols[C_RX]]) > r->link_gbps_max;
	} else if (!strcmp(f[r->cols[C_KIND]], "link")) {
		s->dropped += v = atof(f[r->cols[C_DROP]]);
		s->wrapped |= v > r->link_frames_max * fmax(s->dt_s, 1e-3);
		s->ecn_marked += v = atof(f[r->cols[C_ECN]]);
		s->wrapped |= v > r->link_frames_max * fmax(s->dt_s, 1e-3);
		s->xoff += atof(f[r->cols[C_PFC]]);
		s->wrapped |= atof(f[r->cols[C_TX]]) > r->link_gbps_max;
	}
}

static void read_series(const char *dir, void *arg)
{
	struct soak_run *r = arg;
	char path[PATH_MAX], line[1024], *f[32];
	FILE *in;

	text_printf(path, sizeof(path), "%s/ts.csv", dir);
	if (!(in = fopen(path, "r")))
		return;
	if (fgets(line, sizeof(line), in) && header(r, line) == 0)
		while (fgets(line, sizeof(line), in))
			add_row(r, f, split(line, f, 32));
	fclose(in);
}

/* ---- what the samples say ---------------------------------------------------------------------------- */

static void busbw_of(const struct aif_ctx *x, unsigned n, struct sample *s)
{
	const struct aif_soak_cfg *sc = &x->c->soak;

	s->op = s->iterations[0] || s->iterations[1] ? (s->iterations[1] > s->iterations[0]) : -1;
	if (s->op >= 0 && s->iteration_ms[s->op] > 0)
		s->busbw_gbps = kpi_busbw_gbps(ops[s->op], n, sc->message_size, s->iteration_ms[s->op] * 1e-3);
}

/* The samples of op's turns with a busBW: their times (t may be NULL) and busBW, at most max. */
static unsigned op_busbw(const struct soak_run *r, int op, double *t, double *bw, unsigned max)
{
	unsigned k = 0;

	for (unsigned i = 0; i < r->n && k < max; i++)
		if (r->s[i].op == op && r->s[i].busbw_gbps > 0) {
			if (t)
				t[k] = r->s[i].t_s;
			bw[k++] = r->s[i].busbw_gbps;
		}
	return k;
}

static double median_busbw(const struct soak_run *r, int op)
{
	double *v = malloc(sizeof(double) * (r->n ? r->n : 1)), med = 0;
	unsigned k = v ? op_busbw(r, op, NULL, v, r->n) : 0;

	if (k) {
		percentile_sort(v, k);
		med = percentile_of_sorted(v, k, 0.5);
	}
	free(v);
	return med;
}

/* Least squares of rss over time after the warm-up: slope MB/h, and the growth it fits over that span. */
static void memory_slope(const struct soak_run *r, double *slope_mb_h, double *growth_mb, unsigned *first)
{
	double t_end = r->n ? r->s[r->n - 1].t_s : 0, sx = 0, sy = 0, sxx = 0, sxy = 0, m = 0, span;
	double warm = fmin(fmax(WARMUP_SHARE * t_end, WARMUP_MIN_S), t_end / 2);

	*first = 0;
	while (*first < r->n && r->s[*first].t_s < warm)
		(*first)++;
	for (unsigned i = *first; i < r->n; i++, m++) {
		sx += r->s[i].t_s, sy += r->s[i].rss_mb;
		sxx += r->s[i].t_s * r->s[i].t_s, sxy += r->s[i].t_s * r->s[i].rss_mb;
	}
	*slope_mb_h = m > 1 && m * sxx - sx * sx > 0 ? (m * sxy - sx * sy) / (m * sxx - sx * sx) * 3600 : 0;
	span = *first < r->n ? t_end - r->s[*first].t_s : 0;
	*growth_mb = *slope_mb_h * span / 3600;
}

/* Runs of consecutive samples where bad(s) holds: an anomaly each, with its time and duration. */
static unsigned anomaly_runs(struct aif_ctx *x, const struct soak_run *r, const char *what, bool (*bad)(const struct sample *,
			     const double *), const double *ref, json_t *list)
{
	unsigned runs = 0;

	for (unsigned i = 0; i < r->n; i++) {
		unsigned j = i;
		if (!bad(&r->s[i], ref))
			continue;
		while (j + 1 < r->n && bad(&r->s[j + 1], ref))
			j++;
		json_array_append_new(list, json_pack("{s:s,s:f,s:f}", "what", what, "start_s", r->s[i].t_s - r->s[i].dt_s,
						      "duration_s", r->s[j].t_s - r->s[i].t_s + r->s[i].dt_s));
		aif_anomaly(x, AIF_SOAK, "%s from %.1f s for %.1f s", what, r->s[i].t_s - r->s[i].dt_s,
			    r->s[j].t_s - r->s[i].t_s + r->s[i].dt_s);
		runs++;
		i = j;
	}
	return runs;
}

static bool stalled(const struct sample *s, const double *ref)
{
	return s->op < 0 && s->dt_s >= ref[2];
}

static bool slow(const struct sample *s, const double *ref)
{
	return s->op >= 0 && s->busbw_gbps > 0 && s->busbw_gbps < ref[s->op];
}

static bool dropping(const struct sample *s, const double *ref)
{
	(void)ref;
	return s->dropped > 0;
}

static bool wrapped(const struct sample *s, const double *ref)
{
	(void)ref;
	return s->wrapped;
}

/* ---- the trial ------------------------------------------------------------------------------------------ */

static int soak_trial(struct aif_ctx *x, unsigned n, struct soak_run *r, struct aif_fabric_view *v)
{
	const struct aif_soak_cfg *sc = &x->c->soak;
	struct aif_flow f = { .transport = "rc", .message_size = (sc->message_size + n - 1) / n, .priority = 3 };
	struct flow_set fs = { .names = { "sr-*", "sa-*" }, .n = 2 };
	unsigned hosts[AIF_MAX_HOSTS];
	config_setting_t *run;
	struct aif_trial t;
	struct trial tr;
	struct metrics m;
	int rc = -1;

	for (unsigned i = 0; i < n; i++)
		hosts[i] = i;
	aif_trial_init(&t, x);
	aif_trial_pattern(&t, x, "sr", "ring", hosts, n, -1, 1, &f);
	aif_trial_pattern(&t, x, "sa", "all_to_all", hosts, n, -1, 1, &f);
	for (unsigned k = 0; k < 2; k++) {
		config_setting_t *c = aif_add_collective(&t, x, k ? "sa" : "sr", ops[k], n, kpi_collective_phases(ops[k], n));
		config_setting_t *w = cfg_group(c, "window");

		cfg_set_bool(c, "repeat", true);
		cfg_set_float(w, "period_s", 2 * sc->interval_s);
		cfg_set_float(w, "offset_s", k * sc->interval_s);
		cfg_set_float(w, "active_s", sc->interval_s);
	}
	run = cfg_group(config_root_setting(&t.cfg), "run");
	cfg_set_string(run, "timeseries", "ts.csv");
	cfg_set_float(run, "stats_interval_s", sc->interval_s);
	trial_init(&tr, "soak", "soak: allreduce and alltoall of %u bytes over %u hosts in turns of %g s, %g s", sc->message_size,
		   n, sc->interval_s, sc->duration_s);
	tr.duration_s = sc->duration_s;
	tr.files = read_series;
	tr.files_arg = r;
	if (trial_measure(x->rn, &t.cfg, &tr, &fs, &m) == 0) {
		aif_fabric_read(tr.report, v);
		aif_fabric_to_json(v, tr.record);
		trial_verdict(x->rn, &tr, "info", "%u samples", r->n);
		rc = 0;
	}
	trial_release(&tr);
	aif_trial_free(&t);
	return rc;
}

static void soak_graphs(struct aif_ctx *x, const struct soak_run *r, unsigned first, double slope_mb_h)
{
	double *t = malloc(sizeof(double) * (r->n ? r->n : 1) * 4), *bw[2], *rss, *fit;
	unsigned k[2] = { 0, 0 };
	json_t *g;

	if (!t)
		return;
	bw[0] = t + r->n, bw[1] = bw[0] + r->n, rss = bw[1] + r->n;
	g = aif_graph(x, "soak_busbw.png", "lines", "§12 soak: busBW per sample", "time (s)", "busBW (Gb/s)");
	for (unsigned op = 0; op < 2; op++) {
		double *ts = malloc(sizeof(double) * (r->n ? r->n : 1));
		if (ts) {
			k[op] = op_busbw(r, (int)op, ts, bw[op], r->n);
			aif_series(g, kpi_collective_names[ops[op]], ts, bw[op], k[op]);
		}
		free(ts);
	}
	for (unsigned i = 0; i < r->n; i++) {
		t[i] = r->s[i].t_s;
		rss[i] = r->s[i].rss_mb;
	}
	g = aif_graph(x, "soak_memory.png", "lines", "§12 soak: the engine's resident memory", "time (s)", "resident (MB)");
	aif_series(g, "resident", t, rss, r->n);
	fit = bw[0]; /* reused: the fitted line over the judged span */
	if (first < r->n) {
		double mean_t = 0, mean_y = 0;
		for (unsigned i = first; i < r->n; i++)
			mean_t += r->s[i].t_s, mean_y += r->s[i].rss_mb;
		mean_t /= r->n - first, mean_y /= r->n - first;
		for (unsigned i = first; i < r->n; i++)
			fit[i - first] = mean_y + slope_mb_h / 3600 * (r->s[i].t_s - mean_t);
		aif_series(g, "least-squares fit after the warm-up", t + first, fit, r->n - first);
	}
	free(t);
}

int aif_soak(struct aif_ctx *x)
{
	const struct aif_soak_cfg *sc = &x->c->soak;
	unsigned n = sc->ranks ? sc->ranks : x->fab.n_hosts, first, stalls, wraps;
	struct soak_run r = { 0 };
	struct aif_fabric_view v = { 0 };
	double ref[3], med[2], slope, growth;
	json_t *anomalies = json_array(), *row;
	bool leak;

	n = n > x->fab.n_hosts ? x->fab.n_hosts : n > 16 ? 16 : n;
	printf("\n§12 soak: %g s of an AllReduce and an AlltoAll of %u bytes over %u hosts in turns, sampled every %g s\n",
	       sc->duration_s, sc->message_size, n, sc->interval_s);
	r.s = calloc(MAX_SAMPLES, sizeof(*r.s));
	/* a link's most frames in a second (64-byte frames at its rate) and rate, with a margin */
	r.external = x->c->external;
	r.link_gbps_max = 1.5 * x->host_gbps;
	for (unsigned l = 0; l < x->fab.n_links; l++)
		r.link_gbps_max = fmax(r.link_gbps_max, 1.5 * x->fab.links[l].gbps);
	r.link_frames_max = r.link_gbps_max * 1e9 / (84 * 8);
	if (!r.s || soak_trial(x, n, &r, &v) || r.n == 0) {
		aif_anomaly(x, AIF_SOAK, "not run: the soak's engine %s", r.s ? "gave no time series" : "had no memory");
		json_object_set_new(x->results, "soak", json_pack("{s:s,s:o}", "section", "12", "anomalies", anomalies));
		free(r.s);
		return x->rn->stop ? -1 : 0;
	}
	for (unsigned i = 0; i < r.n; i++)
		busbw_of(x, n, &r.s[i]);
	for (unsigned op = 0; op < 2; op++) {
		med[op] = median_busbw(&r, (int)op);
		ref[op] = (1 - sc->tolerance) * med[op];
	}
	ref[2] = 0.5 * sc->interval_s; /* the last row covers the drain: a short interval is no stall */
	memory_slope(&r, &slope, &growth, &first);
	leak = slope > sc->leak_mb_per_h && growth > LEAK_MIN_MB;
	stalls = anomaly_runs(x, &r, "a turn without an iteration (stall)", stalled, ref, anomalies);
	wraps = anomaly_runs(x, &r, "a counter backwards or past a link's rate (wrap or reset)", wrapped, ref, anomalies);
	if (!v.machine_limited) {
		anomaly_runs(x, &r, "busBW below the op's median by more than the tolerance", slow, ref, anomalies);
		if (!r.external) /* (a real tier's drops are its own) */
			anomaly_runs(x, &r, "frames dropped", dropping, ref, anomalies);
	}
	row = json_pack("{s:s,s:i,s:i,s:f,s:f,s:i,s:f,s:f,s:f,s:f,s:b,s:i,s:i,s:o}", "section", "12", "ranks", (int)n,
			"message_size", (int)sc->message_size, "duration_s", sc->duration_s, "interval_s", sc->interval_s,
			"sample_count", (int)r.n, "busbw_median_gbps_allreduce", med[0], "busbw_median_gbps_alltoall", med[1],
			"memory_slope_mb_per_h", slope, "memory_growth_mb", growth, "leak", leak, "stalls", (int)stalls,
			"counter_wraps", (int)wraps, "anomalies", anomalies);
	{
		json_t *samples = json_array();
		for (unsigned i = 0; i < r.n; i++)
			json_array_append_new(samples, json_pack("{s:f,s:s?,s:i,s:i,s:f,s:f,s:o,s:o,s:f,s:f}", "t_s", r.s[i].t_s,
								 "op", r.s[i].op < 0 ? NULL : kpi_collective_names[ops[r.s[i].op]],
								 "iterations_allreduce", (int)r.s[i].iterations[0],
								 "iterations_alltoall", (int)r.s[i].iterations[1], "busbw_gbps",
								 r.s[i].busbw_gbps, "rx_gbps", r.s[i].rx_gbps, "dropped",
								 r.external ? json_null() : json_real(r.s[i].dropped), "ecn_marked",
								 r.external ? json_null() : json_real(r.s[i].ecn_marked), "pfc_xoff",
								 r.s[i].xoff, "rss_mb", r.s[i].rss_mb));
		json_object_set_new(row, "samples", samples);
	}
	aif_fabric_to_json(&v, row);
	printf("  %u samples; busBW median %.4f Gb/s (AllReduce), %.4f (AlltoAll); resident %.1f -> %.1f MB, slope %.3f MB/h%s; "
	       "%u stalls, %u counter wraps\n", r.n, med[0], med[1], r.s[0].rss_mb, r.s[r.n - 1].rss_mb, slope,
	       leak ? " (a leak)" : "", stalls, wraps);
	for (unsigned op = 0; op < 2; op++) {
		double bw[4096];
		unsigned k = op_busbw(&r, (int)op, NULL, bw, 4096);
		if (k > 1) {
			char kpi[48];
			text_printf(kpi, sizeof(kpi), "soak_busbw_gbps_%s", kpi_collective_names[ops[op]]);
			aif_repeatability(x, AIF_SOAK, kpi, "Gb/s", bw, k);
		}
	}
	suite_verdict(x->rn, stalls == 0, "soak_no_stall", "%u turns without an iteration in %u samples", stalls, r.n);
	suite_verdict(x->rn, !leak, "soak_memory_flat", "resident memory slope %.3f MB/h after the warm-up (%.3f MB fitted "
		      "over it; a leak above %g MB/h and %g MB)", slope, growth, sc->leak_mb_per_h, LEAK_MIN_MB);
	suite_verdict(x->rn, wraps == 0, "soak_counters_monotonic", "%u samples with a counter backwards or past a link's rate",
		      wraps);
	if (v.machine_limited)
		machine_limit(x->rn, row, "machine-limited (%s): busBW and drops not judged", aif_machine_reason(x));
	soak_graphs(x, &r, first, slope);
	json_object_set_new(x->results, "soak", row);
	free(r.s);
	return x->rn->stop ? -1 : 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * perftest-style front ends: `roce-engine write_bw -s 4096 -q 4` and its five siblings take
 * perftest's flags (perftest_flags.c), make an engine configuration's text (perftest_config.c),
 * run the engine on it in a child process per size (perftest_child.c), and print perftest's
 * header and table from the engine's JSON report, time series, samples and capture
 * (perftest_results.c, perftest_capture.c, perftest_print.c). docs/perftest.md.
 *
 * Here: the work directory, the sizes one after the other, what each measured against what was
 * asked, and the exit status. By default the two ends are ports of one process joined by a ring
 * pair (ring:perftest:a / :b); the far end answers RC requests with the engine's responder, or
 * reflects UC/UD ping-pongs. --device runs on any DPDK port, --server is the far end for a client
 * on another host.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "engine.h"
#include "perftest.h"
#include "perftest_opts.h"

#define PT_SHORT_RUN_S 0.1         /* a bandwidth figure over less than this is noisy */

struct pt_work {
	char dir[PT_PATH - 32];     /* room for the file names under it */
	char report[PATH_MAX];      /* where the front end's JSON goes */
};

/* ---- the work directory ---- */

/* Files the front end writes at the end are tried before any run, as the engine tries its own. */
static int pt_check_writable(const struct pt_opts *o, const char *path)
{
	bool existed = access(path, F_OK) == 0;
	FILE *f = fopen(path, "a");

	if (!f) {
		fprintf(stderr, "%s: cannot write %s: %s\n", o->prog, path, strerror(errno));
		return -1;
	}
	fclose(f);
	if (!existed)
		unlink(path);
	return 0;
}

static int pt_work_open(const struct pt_opts *o, struct pt_work *w)
{
	const char *tmp = getenv("TMPDIR");

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (strlen(tmp) + sizeof("/roce-perftest-XXXXXX") > sizeof(w->dir)) {
		fprintf(stderr, "%s: $TMPDIR is longer than %zu characters\n", o->prog, sizeof(w->dir) - 22);
		return -1;
	}
	snprintf(w->dir, sizeof(w->dir), "%s/roce-perftest-XXXXXX", tmp);
	if (!mkdtemp(w->dir)) {
		fprintf(stderr, "%s: cannot make a work directory %s: %s\n", o->prog, w->dir, strerror(errno));
		return -1;
	}
	if (o->report)
		snprintf(w->report, sizeof(w->report), "%s", o->report);
	else
		snprintf(w->report, sizeof(w->report), "%s/report.json", w->dir);
	return pt_check_writable(o, w->report);
}

static void pt_paths_for_run(const struct pt_opts *o, const struct pt_work *w, unsigned run, struct pt_paths *p)
{
	snprintf(p->cfg, sizeof(p->cfg), "%s/run%u.cfg", w->dir, run);
	snprintf(p->report, sizeof(p->report), "%s/run%u.json", w->dir, run);
	snprintf(p->ts, sizeof(p->ts), "%s/run%u-timeseries.csv", w->dir, run);
	snprintf(p->log, sizeof(p->log), "%s/run%u.log", w->dir, run);
	p->capture[0] = p->samples[0] = 0;
	if (o->capture)
		snprintf(p->capture, sizeof(p->capture), "%s", o->capture);
	else if (o->test->verb == PT_READ && o->test->kind == PT_LAT && !o->server)
		snprintf(p->capture, sizeof(p->capture), "%s/run%u.pcapng", w->dir, run);
	if (pt_needs_probe(o) && (o->hist || o->unsorted) && !o->server)
		snprintf(p->samples, sizeof(p->samples), "%s/run%u-samples.csv", w->dir, run);
}

/* Removes what the runs left, unless --keep; the report stays when it lives there. */
static void pt_work_close(const struct pt_opts *o, const struct pt_work *w, unsigned runs)
{
	struct pt_paths p;

	if (o->keep)
		return;
	for (unsigned r = 0; r < runs; r++) {
		pt_paths_for_run(o, w, r, &p);
		unlink(p.cfg);
		unlink(p.report);
		unlink(p.ts);
		unlink(p.log);
		if (p.samples[0])
			unlink(p.samples);
		if (!o->capture && p.capture[0])
			unlink(p.capture);
	}
	rmdir(w->dir); /* fails, as it should, when the report is in it */
}

/* ---- one size ---- */

static int pt_collect(const struct pt_opts *o, const struct pt_paths *p, struct pt_run *r)
{
	json_error_t err;
	bool read = o->test->verb == PT_READ;

	r->report = json_load_file(p->report, 0, &err);
	if (!r->report) {
		fprintf(stderr, "%s: cannot read the engine's report %s: %s\n", o->prog, p->report, err.text);
		return ENGINE_EXIT_REPORT;
	}
	if (o->server || o->run_inf)
		return 0;
	if (o->test->kind == PT_BW) {
		pt_bw_from_report(o, p, r);
		if (r->iterations)
			return 0;
	} else if (!(read ? pt_lat_from_capture(o, p, r) : pt_lat_from_report(o, r))) {
		if (p->samples[0] && pt_samples_from_csv(o, p, r))
			fprintf(stderr, "%s: cannot read the latency samples %s\n", o->prog, p->samples);
		return 0;
	}
	fprintf(stderr, "%s: %" PRIu64 " bytes: nothing was measured (%s)\n", o->prog, r->size,
		o->test->kind == PT_BW ? "no message delivered" : "no round trip completed");
	return PT_EXIT_NO_RESULT;
}

/* What a run measured against what was asked: perftest's #iterations is what it asked for. */
static void pt_check_iterations(const struct pt_opts *o, const struct pt_run *r)
{
	static const char *const why[] = { "the rest were not acknowledged: see the report's runs[].flows[].rc",
					   "the rest did not reach the far end's receiver",
					   "the rest got no answer within 100 ms (counted lost)",
					   "the rest have no request and response pair in the capture" };
	const char *stopped = json_string_value(json_object_get(r->report, "stopped_by"));
	double dropped = pt_num(json_object_get(r->report, "capture"), "dropped");
	char cause[160];
	bool bw = o->test->kind == PT_BW;
	uint64_t asked = bw ? o->iters * o->qps : o->iters;
	int dirs = bw && o->bidir ? 2 : 1;

	if (o->duration_s > 0 || o->run_inf || o->server || (stopped && !strcmp(stopped, "signal")))
		return;
	for (int d = 0; d < dirs; d++) {
		uint64_t got = bw ? r->dir[d].iterations : r->iterations;
		if (got >= asked)
			continue;
		snprintf(cause, sizeof(cause), "%s", bw ? why[o->conn != PT_RC] : why[o->test->verb == PT_READ ? 3 : 2]);
		if (!bw && o->test->verb == PT_READ && dropped > 0)
			snprintf(cause, sizeof(cause), "the capture they are timed from dropped %.0f frames: the report's "
				 "runs[].capture", dropped);
		fflush(stdout);
		fprintf(stderr, "%s: warning: %" PRIu64 " bytes%s: measured %" PRIu64 " of the %" PRIu64 " iterations asked "
				"(%s)\n", o->prog, r->size, d ? " (the far end's direction)" : "", got, asked, cause);
	}
}

static int pt_run_size(const struct pt_opts *o, const struct pt_work *w, unsigned idx, struct pt_run *r,
		       struct pt_watch *watch)
{
	struct pt_paths p;
	size_t len;
	char *text;
	int rc;

	pt_paths_for_run(o, w, idx, &p);
	text = pt_config_text(o, &p, r->size, idx, &len);
	if (!text || (o->keep && pt_keep_config(o, &p, text, len))) {
		free(text);
		return ENGINE_EXIT_CONFIG;
	}
	*watch = (struct pt_watch){ .o = o, .size = r->size, .fd = -1, .rows = watch->rows,
				    .cap_rows = watch->cap_rows, .n_rows = watch->n_rows };
	rc = pt_run_engine(o, &p, text, len, watch);
	free(text);
	if (watch->fd >= 0)
		close(watch->fd);
	if (rc != ENGINE_EXIT_OK && rc != ENGINE_EXIT_SLA) {
		fprintf(stderr, "%s: the engine stopped with status %d (docs/engine.md)\n", o->prog, rc);
		pt_print_log(o, p.log);
		if (o->keep)
			fprintf(stderr, "%s: its config: %s\n", o->prog, p.cfg);
		return rc;
	}
	rc = pt_collect(o, &p, r);
	if (watch->cpu_marks == 2) { /* perftest's figure: user time over user and idle time */
		double user = (double)(watch->user[1] - watch->user[0]), idle = (double)(watch->idle[1] - watch->idle[0]);
		r->cpu_util = user + idle > 0 ? user / (user + idle) * 100 : 0;
	}
	if (rc == 0)
		pt_check_iterations(o, r);
	return rc;
}

/* ---- all sizes ---- */

static void pt_note_stderr(const struct pt_opts *o)
{
	for (unsigned i = 0; i < o->n_notes; i++)
		fprintf(stderr, "%s: note: %s\n", o->prog, o->notes[i]);
}

/* perftest's -w / -y: the run fails when BW average or MsgRate stays below the limit. */
static int pt_check_limits(const struct pt_opts *o, const struct pt_run *rows, unsigned n)
{
	int rc = 0;

	for (unsigned i = 0; i < n; i++) {
		if (o->limit_bw >= 0 && pt_bw_unit(o, rows[i].bw.avg_gbps) < o->limit_bw) {
			fprintf(stderr, "Error: BW result is below bw limit (%" PRIu64 " bytes: %.2f < %g)\n",
				rows[i].size, pt_bw_unit(o, rows[i].bw.avg_gbps), o->limit_bw);
			rc = ENGINE_EXIT_SLA;
		}
		if (o->limit_msg_rate >= 0 && rows[i].bw.msg_rate_mpps < o->limit_msg_rate) {
			fprintf(stderr, "Error: Msg rate is below msg_rate limit (%" PRIu64 " bytes: %.6f < %g Mpps)\n",
				rows[i].size, rows[i].bw.msg_rate_mpps, o->limit_msg_rate);
			rc = ENGINE_EXIT_SLA;
		}
	}
	return rc;
}

/* A bandwidth figure over a few milliseconds is mostly start-up and the main lcore's checks. */
static void pt_check_short_runs(const struct pt_opts *o, const struct pt_run *rows, unsigned n)
{
	unsigned shorter = 0;
	double shortest = 1e9;

	if (o->test->kind != PT_BW || o->server || o->run_inf)
		return;
	for (unsigned i = 0; i < n; i++)
		if (rows[i].iterations && rows[i].seconds < PT_SHORT_RUN_S) {
			shorter++;
			shortest = fmin(shortest, rows[i].seconds);
		}
	if (!shorter)
		return;
	fflush(stdout);
	if (n == 1)
		fprintf(stderr, "%s: warning: the run took %.1f ms: a bandwidth figure from less than %.0f ms is noisy "
				"(more iterations with -n, or -D)\n", o->prog, shortest * 1e3, PT_SHORT_RUN_S * 1e3);
	else
		fprintf(stderr, "%s: warning: %u of the %u sizes ran for less than %.0f ms (the shortest %.1f ms): their "
				"figures are noisy (more iterations with -n)\n", o->prog, shorter, n, PT_SHORT_RUN_S * 1e3,
			shortest * 1e3);
}

static bool pt_full(const struct pt_opts *o)
{
	return !o->json && o->output == PT_OUT_FULL;
}

static void pt_print_row_of(const struct pt_opts *o, const struct pt_run *r)
{
	if (o->json)
		return;
	if (o->server) {
		pt_print_server_summary(r);
		return;
	}
	pt_print_samples(o, r);
	pt_print_row(o, r);
}

static int pt_run_all(const struct pt_opts *o, const struct pt_work *w, struct pt_run *runs, unsigned n)
{
	struct pt_watch watch = { .fd = -1 };
	const struct pt_run *rows = runs;
	unsigned done = 0, n_rows;
	int rc = 0;

	if (pt_full(o)) {
		pt_print_header(o);
		if (!o->server)
			pt_print_heading(o);
	} else {
		pt_note_stderr(o);
	}
	for (unsigned i = 0; i < n && !pt_stop_requested(); i++) {
		rc = pt_run_size(o, w, i, &runs[i], &watch);
		if (runs[i].report)
			done = i + 1;
		if (rc && rc != ENGINE_EXIT_SLA)
			break;
		if (!o->run_inf)
			pt_print_row_of(o, &runs[i]);
		if (o->out_json && !o->server && !o->run_inf)
			pt_write_perftest_json(o, &runs[i]);
	}
	n_rows = done;
	if (o->run_inf) {
		rows = watch.rows;
		n_rows = watch.n_rows;
		if (pt_stop_requested() && pt_full(o))
			printf("\n User stopped traffic\n");
	}
	if (done) {
		int wrc = pt_write_report(o, w->report, runs, done, rows, n_rows) ? ENGINE_EXIT_REPORT : 0;
		if (pt_full(o)) {
			if (o->report_both && o->bidir && !o->run_inf)
				pt_print_bw_both(o, runs, done);
			printf(PT_LINE);
			if (!wrc)
				printf(" report: %s\n", w->report);
		}
		if (!rc)
			rc = wrc;
		if (!rc && !o->server)
			rc = pt_check_limits(o, rows, n_rows);
		pt_check_short_runs(o, rows, n_rows);
	}
	free(watch.rows);
	return rc;
}

bool perftest_is_subcommand(const char *name)
{
	return pt_find_test(name) != NULL;
}

/* -C: TSC cycles per nanosecond, measured against the monotonic clock (perftest's cycles are the
 * same counter, rdtsc, scaled by the CPU's MHz). */
static double pt_tsc_per_ns(void)
{
	const struct timespec nap = { 0, 50000000L };
	struct timespec t0, t1;
	uint64_t c0, c1;

	clock_gettime(CLOCK_MONOTONIC_RAW, &t0);
	c0 = rte_rdtsc();
	nanosleep(&nap, NULL);
	clock_gettime(CLOCK_MONOTONIC_RAW, &t1);
	c1 = rte_rdtsc();
	return (double)(c1 - c0) / ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec));
}

int perftest_main(int argc, char **argv)
{
	static struct pt_opts o;
	static struct pt_run runs[PT_MAX_RUNS];
	uint64_t sizes[PT_MAX_RUNS];
	char prog[64];
	struct pt_work w;
	unsigned n;
	int rc;

	o = (struct pt_opts){ .test = pt_find_test(argv[0]), .qps = 1, .tclass = -1, .margin_s = -1, .qp_timeout = -1,
			      .retry_count = -1, .udp_sport = -1, .limit_bw = -1, .limit_msg_rate = -1 };
	snprintf(prog, sizeof(prog), "roce-engine %s", argv[0]);
	o.prog = prog;
	argv[0] = prog; /* getopt's own messages name the program by it */
	rc = pt_parse(argc, argv, &o);
	if (rc)
		return rc > 0 ? ENGINE_EXIT_OK : ENGINE_EXIT_USAGE;
	if (o.cycles)
		o.cycles_per_ns = pt_tsc_per_ns();
	n = o.server ? 1 : pt_sizes(&o, sizes);
	for (unsigned i = 0; i < n; i++)
		runs[i] = (struct pt_run){ .size = o.server ? 0 : sizes[i] };
	if (pt_work_open(&o, &w) || (o.out_json && pt_check_writable(&o, o.out_json_file ? o.out_json_file
											    : "perftest_out.json"))) {
		rmdir(w.dir);
		return ENGINE_EXIT_REPORT;
	}
	pt_forward_signals();
	rc = pt_run_all(&o, &w, runs, n);
	pt_work_close(&o, &w, n);
	for (unsigned i = 0; i < n; i++) {
		json_decref(runs[i].report);
		json_decref(runs[i].extra);
		free(runs[i].samples);
	}
	if (o.wait_destroy_s > 0) { /* perftest waits before it destroys its QPs; the engine's are gone */
		struct timespec t = { (time_t)o.wait_destroy_s, (long)(fmod(o.wait_destroy_s, 1.0) * 1e9) };
		while (nanosleep(&t, &t) && errno == EINTR && !pt_stop_requested())
			;
	}
	return rc;
}

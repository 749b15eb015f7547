/* SPDX-License-Identifier: BSD-3-Clause
 *
 * perftest-style front ends: `roce-engine write_bw -s 4096 -q 4` and its five siblings take
 * perftest's flags (perftest_flags.c), make an engine configuration's text (perftest_config.c),
 * load it with the config library and run the engine on it (launch.h), and print perftest's
 * header and table from the engine's JSON report, time series, samples and capture
 * (perftest_results.c, perftest_capture.c, perftest_print.c). docs/perftest.md.
 *
 * Each size runs in a child process: EAL starts once per process, `-a` needs one run per size,
 * and the engine's own lines go to a log instead of the table. While a child runs, the parent
 * reads its time series as it grows: --run_infinitely prints a row per interval from it, and
 * --cpu_util samples the CPUs' times at the margins. By default the two ends are ports of one
 * process joined by a ring pair (ring:perftest:a / :b); the far end answers RC requests with the
 * engine's responder, or reflects UC/UD ping-pongs. --device runs on any DPDK port, --server is
 * the far end for a client on another host.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "config.h"
#include "drivers.h"
#include "engine.h"
#include "launch.h"
#include "perftest.h"
#include "perftest_opts.h"
#include "run_info.h"

#define PT_SHORT_RUN_S 0.1         /* a bandwidth figure over less than this is noisy */
#define PT_WATCH_NS 10000000L      /* how often the parent looks at a running child's files */

struct pt_work {
	char dir[PT_PATH - 32];     /* room for the file names under it */
	char report[PATH_MAX];      /* where the front end's JSON goes */
};

static volatile sig_atomic_t pt_child = 0, pt_stop = 0;

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

/* ---- watching a running child: its time series as it grows ---- */

/* The CPUs' user and idle times (/proc/stat's first line), perftest's --cpu_util inputs. */
static void pt_cpu_times(unsigned long long *user, unsigned long long *idle)
{
	unsigned long long u = 0, n = 0, s = 0, i = 0;
	FILE *f = fopen("/proc/stat", "r");

	if (f) {
		if (fscanf(f, "cpu %llu %llu %llu %llu", &u, &n, &s, &i) != 4)
			u = i = 0;
		fclose(f);
	}
	*user = u;
	*idle = i;
}

struct pt_watch {
	const struct pt_opts *o;
	uint64_t size;
	int fd;                     /* the time series, once the engine made it */
	char buf[8192];
	size_t len;
	double prev_t[2];
	/* --run_infinitely: the interval rows, as printed */
	struct pt_ts_row pending[2];
	bool have[2];
	struct pt_run *rows;
	unsigned n_rows, cap_rows;
	/* --cpu_util: /proc/stat at the two margins */
	unsigned long long user[2], idle[2];
	int cpu_marks;
};

/* --run_infinitely: a full interval of every direction is a row of the table. */
static void pt_watch_interval(struct pt_watch *w)
{
	const struct pt_opts *o = w->o;
	int dirs = o->bidir ? 2 : 1;
	struct pt_run r = { .size = w->size };

	for (int d = 0; d < dirs; d++)
		if (!w->have[d] || w->pending[d].t_s != w->pending[0].t_s)
			return;
	w->have[0] = w->have[1] = false;
	if (w->pending[0].dt_s < 0.99 * o->duration_s) /* the drain after a stop: not a whole interval */
		return;
	r.seconds = w->pending[0].dt_s;
	for (int d = 0; d < dirs; d++) {
		double msgs = pt_messages_in_row(o, &w->pending[d], w->size), secs = w->pending[d].dt_s;
		r.dir[d] = (struct pt_bw){ .iterations = (uint64_t)llround(msgs),
					   .avg_gbps = msgs * (double)w->size * 8 / secs / 1e9,
					   .msg_rate_mpps = msgs / secs / 1e6,
					   .peak_from = "not measured (--run_infinitely)" };
		r.bw.avg_gbps += r.dir[d].avg_gbps;
		r.bw.msg_rate_mpps += r.dir[d].msg_rate_mpps;
	}
	r.bw.iterations = r.iterations = r.dir[0].iterations;
	r.bw.peak_from = r.dir[0].peak_from; /* perftest measures no peak when it runs forever */
	if (w->n_rows == w->cap_rows) {
		unsigned cap = w->cap_rows ? 2 * w->cap_rows : 64;
		struct pt_run *rows = realloc(w->rows, cap * sizeof(*rows));
		if (!rows)
			return;
		w->rows = rows;
		w->cap_rows = cap;
	}
	w->rows[w->n_rows++] = r;
	if (!o->json)
		pt_print_row(o, &r);
	if (o->out_json)
		pt_write_perftest_json(o, &r);
}

static void pt_watch_line(struct pt_watch *w, char *line)
{
	const struct pt_opts *o = w->o;
	struct pt_ts_row row;
	double margin = pt_margin(o);

	if (!pt_ts_parse_line(line, &row, w->prev_t))
		return;
	if (o->run_inf) {
		w->pending[row.dir] = row;
		w->have[row.dir] = true;
		pt_watch_interval(w);
		return;
	}
	if (o->cpu_util && row.dir == 0 && w->cpu_marks < 2 && /* the rows nearest the margins */
	    row.t_s >= (w->cpu_marks ? o->duration_s - margin : margin) - 0.001) {
		pt_cpu_times(&w->user[w->cpu_marks], &w->idle[w->cpu_marks]);
		w->cpu_marks++;
	}
}

/* Reads what the engine added to its time series since the last look, line by line. */
static void pt_watch_poll(struct pt_watch *w, const struct pt_paths *p)
{
	ssize_t n;

	if (w->fd < 0 && (w->fd = open(p->ts, O_RDONLY)) < 0)
		return;
	while ((n = read(w->fd, w->buf + w->len, sizeof(w->buf) - 1 - w->len)) > 0) {
		char *start = w->buf, *nl;
		w->len += (size_t)n;
		w->buf[w->len] = 0;
		while ((nl = strchr(start, '\n'))) {
			*nl = 0;
			pt_watch_line(w, start);
			start = nl + 1;
		}
		w->len -= (size_t)(start - w->buf);
		memmove(w->buf, start, w->len);
		if (w->len == sizeof(w->buf) - 1) /* a line longer than the buffer: not the engine's */
			w->len = 0;
	}
}

static bool pt_watching(const struct pt_opts *o)
{
	return !o->server && (o->run_inf || (o->cpu_util && o->duration_s > 0));
}

/* ---- running the engine ---- */

static void pt_forward_signal(int sig)
{
	pt_stop = 1;
	if (pt_child > 0)
		kill((pid_t)pt_child, sig);
}

/* In the child: the engine on the generated text, as `roce-engine -f CONFIG -q` runs a file (the
 * report names the config by p->cfg, with the text's hash). */
static int pt_child_engine(const struct pt_paths *p, const char *text, size_t len)
{
	static struct engine_config cfg;
	static struct launch_eal eal;
	static struct pmd_driver_check drivers;
	struct config_env env = { .vdev_driver = pmd_drivers_check_vdev, .arg = &drivers };
	struct engine_options opt;
	char err[1024];

	launch_install_signal_handlers();
	run_info_config_text(p->cfg, text, len);
	if (config_load_string_env(text, p->cfg, &env, &cfg, err, sizeof(err))) {
		fprintf(stderr, "roce-engine: %s\n", err);
		return ENGINE_EXIT_CONFIG;
	}
	opt = launch_options_of(&cfg);
	opt.quiet = true;
	if (launch_eal_from_config(&cfg, &eal)) {
		fprintf(stderr, "roce-engine: EAL arguments too long\n");
		return ENGINE_EXIT_CONFIG;
	}
	return launch_engine(&cfg, &opt, &eal);
}

/* The child process: its lines to the log, the signals' default until the engine takes them. */
static void pt_child_run(const struct pt_paths *p, const char *text, size_t len, const sigset_t *mask)
{
	int fd = open(p->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	int rc = pt_child_engine(p, text, len);
	fflush(NULL);
	_exit(rc);
}

static void pt_print_log(const struct pt_opts *o, const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	fprintf(stderr, "%s: the engine's output (%s):\n", o->prog, path);
	while (fgets(line, sizeof(line), f))
		fputs(line, stderr);
	fclose(f);
}

/* Runs the child to its end, watching its time series when a flag needs it. */
static int pt_run_engine(const struct pt_opts *o, const struct pt_paths *p, const char *text, size_t len,
			 struct pt_watch *w)
{
	const struct timespec tick = { 0, PT_WATCH_NS };
	int status = -1;
	pid_t pid, got;

	sigset_t stop, old;

	/* a Ctrl-C between fork and pt_child would reach no child: signals wait until it is known */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	fflush(NULL);
	sigprocmask(SIG_BLOCK, &stop, &old);
	pid = fork();
	if (pid < 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		fprintf(stderr, "%s: fork: %s\n", o->prog, strerror(errno));
		return ENGINE_EXIT_INIT;
	}
	if (pid == 0)
		pt_child_run(p, text, len, &old);
	pt_child = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	while ((got = waitpid(pid, &status, pt_watching(o) ? WNOHANG : 0)) != pid) {
		if (got < 0 && errno != EINTR) {
			status = -1;
			break;
		}
		if (pt_watching(o)) {
			pt_watch_poll(w, p);
			nanosleep(&tick, NULL);
		}
	}
	pt_child = 0;
	if (pt_watching(o))
		pt_watch_poll(w, p);
	if (status == -1 || !WIFEXITED(status)) {
		fprintf(stderr, "%s: the engine's process ended abnormally\n", o->prog);
		pt_print_log(o, p->log);
		return ENGINE_EXIT_INIT;
	}
	return WEXITSTATUS(status);
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
	for (unsigned i = 0; i < n && !pt_stop; i++) {
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
		if (pt_stop && pt_full(o))
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
	signal(SIGINT, pt_forward_signal);
	signal(SIGTERM, pt_forward_signal);
	rc = pt_run_all(&o, &w, runs, n);
	pt_work_close(&o, &w, n);
	for (unsigned i = 0; i < n; i++) {
		json_decref(runs[i].report);
		json_decref(runs[i].extra);
		free(runs[i].samples);
	}
	if (o.wait_destroy_s > 0) { /* perftest waits before it destroys its QPs; the engine's are gone */
		struct timespec t = { (time_t)o.wait_destroy_s, (long)(fmod(o.wait_destroy_s, 1.0) * 1e9) };
		while (nanosleep(&t, &t) && errno == EINTR && !pt_stop)
			;
	}
	return rc;
}

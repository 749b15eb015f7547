/* SPDX-License-Identifier: BSD-3-Clause
 *
 * One size's run of the perftest front end in a child process (docs/perftest.md): EAL starts only
 * once per process, and the engine's own lines go to a log instead of the table. The child loads
 * the generated text with the config library, as `roce-engine -f CONFIG -q` loads a file, and runs
 * the engine through launch.h. While it runs, the parent reads its time series as it grows:
 * --run_infinitely prints a row per interval from it, --cpu_util samples the CPUs' times at the
 * margins. A Ctrl-C or SIGTERM to the front end is passed on to the child, which stops cleanly.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "drivers.h"
#include "engine.h"
#include "launch.h"
#include "perftest_opts.h"
#include "run_info.h"

#define PT_WATCH_NS 10000000L      /* how often the parent looks at a running child's files */

/* The child being waited for, and whether a signal asked the front end to stop: set by the
 * signal handler. */
static volatile sig_atomic_t pt_child = 0, pt_stop = 0;

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

void pt_forward_signals(void)
{
	signal(SIGINT, pt_forward_signal);
	signal(SIGTERM, pt_forward_signal);
}

bool pt_stop_requested(void)
{
	return pt_stop;
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

void pt_print_log(const struct pt_opts *o, const char *path)
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
int pt_run_engine(const struct pt_opts *o, const struct pt_paths *p, const char *text, size_t len, struct pt_watch *w)
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

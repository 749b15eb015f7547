/* SPDX-License-Identifier: BSD-3-Clause
 *
 * roce-suite: validation suites over roce-engine runs. It reads a suite config, derives a trial
 * engine config for every step of the suite (from a base config, or from the virtual lab it
 * generates), runs roce-engine on each as a child process with a deadline, and turns the trials'
 * JSON reports into tables (stdout) and one suite report (--report). docs/suites.md.
 *
 *   roce-suite [options] SUITE.cfg
 *   roce-suite --version
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "aif.h"
#include "roce_version.h"
#include "run_info.h"
#include "suite.h"
#include "trial.h"
#include "verdict.h"

struct opts {
	const char *suite, *report, *keep, *engine, *results;
	double duration_s, timeout_s;
	bool duration_set, timeout_set, quiet, check, measure_only;
};

static void usage(FILE *o)
{
	fprintf(o, "usage: roce-suite [options] SUITE.cfg\n"
		   "  -r, --report FILE.json  the suite report (every trial, every table)\n"
		   "  -k, --keep DIR          keep every trial's config, report and log in DIR/tNNN/\n"
		   "  -o, --results DIR       ai_fabric: the results folder (report.json, report.md, graphs)\n"
		   "  -e, --engine PATH       roce-engine to run (default: $ROCE_ENGINE, else the one next to roce-suite)\n"
		   "  -d, --duration S        each trial's traffic time (overrides trial.duration_s)\n"
		   "  -t, --timeout S         a trial still running after S seconds is killed (overrides trial.timeout_s)\n"
		   "  -c, --check             check the suite config (and its base with roce-engine --check), run nothing\n"
		   "  -m, --measure-only      report the verdicts, but exit 0 on a failed one (suite.measure_only)\n"
		   "  -q, --quiet             no progress line per trial (stderr)\n"
		   "  -h, --help\n"
		   "      --version           print the version and exit\n"
		   "exit status: 0 done, every verdict passed; 2 usage, 3 config refused, 4 a trial failed to run, 5 i/o,\n"
		   "             6 a verdict failed, 7 interrupted\n");
}

static int number_arg(const char *name, const char *v, double hi, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	if (errno || !*v || *end || !(*out >= 0) || *out > hi) {
		fprintf(stderr, "roce-suite: %s: '%s' is not a number of seconds (0..%g)\n", name, v, hi);
		return -1;
	}
	return 0;
}

/* 0 to run, 1 done (help, version), 2 usage error. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{ "report", required_argument, NULL, 'r' }, { "keep", required_argument, NULL, 'k' },
		{ "results", required_argument, NULL, 'o' },
		{ "engine", required_argument, NULL, 'e' }, { "duration", required_argument, NULL, 'd' },
		{ "timeout", required_argument, NULL, 't' }, { "check", no_argument, NULL, 'c' },
		{ "measure-only", no_argument, NULL, 'm' },
		{ "quiet", no_argument, NULL, 'q' },        { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },      { NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "r:k:e:d:t:o:cmqh", longs, NULL)) != -1) {
		switch (c) {
		case 'r': o->report = optarg; break;
		case 'k': o->keep = optarg; break;
		case 'o': o->results = optarg; break;
		case 'e': o->engine = optarg; break;
		case 'd':
			if (number_arg("--duration", optarg, 3600, &o->duration_s))
				return 2;
			o->duration_set = true;
			break;
		case 't':
			if (number_arg("--timeout", optarg, 86400, &o->timeout_s))
				return 2;
			o->timeout_set = true;
			break;
		case 'c': o->check = true; break;
		case 'm': o->measure_only = true; break;
		case 'q': o->quiet = true; break;
		case 'h': usage(stdout); return 1;
		case 'V': printf("roce-suite %s\n", roce_version_string()); return 1;
		default: usage(stderr); return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	o->suite = argv[optind];
	return 0;
}

/* --engine, else $ROCE_ENGINE, else roce-engine in roce-suite's own folder (the build tree's
 * apps/ or the install's bin/). */
static int find_engine(const struct opts *o, char *out, size_t len)
{
	const char *env = getenv("ROCE_ENGINE");
	char self[4096];
	ssize_t n;

	if (o->engine || (env && env[0])) {
		snprintf(out, len, "%s", o->engine ? o->engine : env);
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			return -1;
		self[n] = '\0';
		*strrchr(self, '/') = '\0';
		if ((size_t)snprintf(out, len, "%.4000s/roce-engine", self) >= len)
			return -1;
	}
	if (access(out, X_OK) || !realpath(out, self)) {
		fprintf(stderr, "roce-suite: roce-engine: cannot run '%s': %s (--engine PATH or $ROCE_ENGINE)\n", out,
			strerror(errno));
		return -1;
	}
	/* absolute: each trial runs in its own folder */
	if ((size_t)snprintf(out, len, "%s", self) >= len)
		return -1;
	return 0;
}

/* A base config is checked by the engine itself before any trial, so that its errors name the
 * base file's own lines. 0 when accepted. */
static int check_base(const char *engine, const char *base)
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, STDOUT_FILENO); /* the EAL arguments it would use: not ours to show */
		execl(engine, engine, "--check", "-f", base, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void on_signal(int sig)
{
	(void)sig;
	suite_interrupted = 1;
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int (*const suites[SUITE_TYPES])(struct runner *, const struct suite_cfg *, json_t *) = {
	suite_rfc2544, suite_microburst, suite_hol, suite_incast, suite_collective, suite_ai_fabric };

static json_t *report_head(const struct suite_cfg *s, const struct runner *rn)
{
	return json_pack("{s:i,s:o,s:s,s:s,s:s,s:o,s:s,s:f,s:f}", "version", 1, "run_info", run_info_json(), "suite",
			 s->name, "type", suite_type_names[s->type], "config", s->file, "base",
			 s->base[0] ? json_string(s->base) : json_null(), "engine", rn->engine, "trial_duration_s",
			 rn->duration_s, "trial_timeout_s", rn->timeout_s);
}

static int write_report(const char *path, json_t *r)
{
	char tmp[4200];

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	if (json_dump_file(r, tmp, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) || rename(tmp, path)) {
		fprintf(stderr, "roce-suite: cannot write the report %s: %s\n", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* The suite's errors first (they have their own codes), then its verdicts. */
static int exit_status(const struct runner *rn, bool measure_only)
{
	if (rn->exit_status)
		return rn->exit_status;
	return rn->n_failed && !measure_only ? EXIT_VERDICT : EXIT_DONE;
}

static int run_suite(const struct opts *o, const struct suite_cfg *s, const char *engine)
{
	bool measure_only = o->measure_only || s->measure_only;
	struct runner rn;
	json_t *rep;
	int status;
	struct timespec t0, t1;

	if (runner_init(&rn, s, engine, o->keep)) {
		fprintf(stderr, "roce-suite: cannot make the trials' folder %s: %s\n", rn.dir, strerror(errno));
		return EXIT_IO;
	}
	rn.quiet = o->quiet;
	rn.duration_s = o->duration_set ? o->duration_s : s->trial.duration_s;
	rn.timeout_s = o->timeout_set ? o->timeout_s : s->trial.timeout_s;
	rep = report_head(s, &rn);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	printf("suite %s (%s)%s%s\n", s->name, suite_type_names[s->type], o->keep ? ": trials in " : "",
	       o->keep ? rn.dir : "");
	fflush(stdout);
	suites[s->type](&rn, s, rep);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!runner_refused(&rn))
		verdicts_print(&rn, measure_only);
	status = exit_status(&rn, measure_only);
	if (rn.stop)
		fprintf(stderr, "roce-suite: %s: stopped: %s\n", s->name, rn.stop_reason);
	printf("\n%u trial%s, %u could not run; %.1f s\n", rn.n_trials, rn.n_trials == 1 ? "" : "s", rn.n_errors,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	json_object_set(rep, "trials", rn.trials);
	json_object_set_new(rep, "trial_errors", json_integer(rn.n_errors));
	json_object_set_new(rep, "measure_only", json_boolean(measure_only));
	json_object_set(rep, "verdicts", rn.verdicts);
	json_object_set_new(rep, "verdicts_failed", json_integer(rn.n_failed));
	json_object_set_new(rep, "machine_limited", json_integer(rn.n_machine_limited));
	json_object_set_new(rep, "stopped", rn.stop ? json_string(rn.stop_reason) : json_null());
	json_object_set_new(rep, "exit_status", json_integer(status));
	if (o->report && write_report(o->report, rep) && (!status || status == EXIT_VERDICT))
		status = EXIT_IO;
	if (s->type == SUITE_AI_FABRIC && !runner_refused(&rn) &&
	    aif_results_write(s->aif->results, rep) && (!status || status == EXIT_VERDICT))
		status = EXIT_IO;
	json_decref(rep);
	runner_finish(&rn);
	return status;
}

/* ROCE_SUITE_FILE_DIR: the suite file's folder, absolute, for the commands a suite file names (a
 * fabric's external.link_command runs in a trial's folder: "$ROCE_SUITE_FILE_DIR/..." finds what
 * lies beside the suite file). */
static void export_suite_dir(const char *suite)
{
	char path[4096], *slash;

	if (!realpath(suite, path))
		return;
	if ((slash = strrchr(path, '/')))
		*(slash == path ? slash + 1 : slash) = 0;
	setenv("ROCE_SUITE_FILE_DIR", path, 1);
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct suite_cfg s;
	char err[1400], engine[4096];
	int rc;

	run_info_start(argc, argv);
	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc == 1 ? 0 : EXIT_USAGE;
	run_info_config(o.suite); /* the suite file's bytes; its base and the trials' configs are the engine's */
	if (suite_config_load(o.suite, &s, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		suite_config_free(&s);
		return EXIT_CONFIG;
	}
	if (s.aif && o.results) /* (the categories that write beside the report use it too: a cluster job) */
		snprintf(s.aif->results, sizeof(s.aif->results), "%s", o.results);
	rc = find_engine(&o, engine, sizeof(engine)) ? EXIT_IO : EXIT_DONE;
	if (!rc && s.base[0] && check_base(engine, s.base))
		rc = EXIT_CONFIG; /* the engine printed the base's error */
	if (!rc && s.type == SUITE_AI_FABRIC && aif_engine_accepts(engine, &s, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		rc = EXIT_CONFIG;
	}
	if (!rc && o.check)
		printf("%s: suite %s (%s) is valid\n", o.suite, s.name, suite_type_names[s.type]);
	else if (!rc) {
		setvbuf(stdout, NULL, _IOLBF, 0);
		catch_signals();
		export_suite_dir(o.suite);
		rc = run_suite(&o, &s, engine);
	}
	suite_config_free(&s);
	return rc;
}

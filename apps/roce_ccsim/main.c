/* SPDX-License-Identifier: BSD-3-Clause
 *
 * roce-ccsim: a deterministic discrete-event congestion-control simulator on the engine's own
 * cc/ code (DCQCN, TIMELY, the notification point, RED, the timer wheel). docs/ccsim.md.
 *
 *   roce-ccsim [--csv FILE] [--summary FILE] [--seed N] [-q] SCENARIO.cfg
 *   roce-ccsim --version
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fab_report.h"
#include "fab_scenario.h"
#include "fabsim.h"
#include "replay.h"
#include "report.h"
#include "roce_version.h"
#include "run_info.h"
#include "scenario.h"
#include "sim.h"

struct opts {
	const char *scenario, *csv, *summary;
	bool quiet, seed_set;
	uint64_t seed;
};

static void usage(FILE *o)
{
	fprintf(o, "usage: roce-ccsim [options] SCENARIO.cfg\n"
		   "  -c, --csv FILE      samples (network) or the event trace (rp_replay) as CSV; '-' = stdout\n"
		   "                      (rp_replay writes its trace to stdout when --csv is not given)\n"
		   "  -s, --summary FILE  the summary as JSON\n"
		   "      --seed N        overrides the scenario's seed\n"
		   "  -q, --quiet         no table on stdout\n"
		   "  -h, --help\n"
		   "      --version       print the version and exit\n");
}

/* 0 to run, 1 done (help, version), 2 usage error. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{ "csv", required_argument, NULL, 'c' },   { "summary", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },  { "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },        { "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "c:s:qh", longs, NULL)) != -1) {
		switch (c) {
		case 'c': o->csv = optarg; break;
		case 's': o->summary = optarg; break;
		case 'q': o->quiet = true; break;
		case 'S':
			errno = 0;
			o->seed = strtoull(optarg, &end, 0);
			if (errno || !*optarg || *end || *optarg == '-') {
				fprintf(stderr, "roce-ccsim: --seed: '%s' is not a number (0..2^64-1)\n", optarg);
				return 2;
			}
			o->seed_set = true;
			break;
		case 'h': usage(stdout); return 1;
		case 'V': printf("roce-ccsim %s\n", roce_version_string()); return 1;
		default: usage(stderr); return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	o->scenario = argv[optind];
	return 0;
}

static FILE *open_out(const char *path)
{
	FILE *f;

	if (!strcmp(path, "-"))
		return stdout;
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "roce-ccsim: %s: cannot write: %s\n", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *path)
{
	int bad = ferror(f);

	if (f != stdout)
		bad |= fclose(f) != 0;
	else
		bad |= fflush(f) != 0;
	if (bad)
		fprintf(stderr, "roce-ccsim: %s: write failed\n", path);
	return bad ? -1 : 0;
}

static int write_summary(const struct opts *o, void (*fn)(FILE *, const void *), const void *arg)
{
	FILE *f = open_out(o->summary);

	if (!f)
		return -1;
	fn(f, arg);
	return close_out(f, o->summary);
}

static void sim_json(FILE *f, const void *arg) { report_json(f, arg); }

struct replay_json_arg {
	const struct scenario *sc;
	const struct replay_result *r;
};

static void replay_json(FILE *f, const void *arg)
{
	const struct replay_json_arg *a = arg;

	report_replay_json(f, a->sc, a->r);
}

static int run_network(const struct opts *o, const struct scenario *sc)
{
	FILE *csv = o->csv ? open_out(o->csv) : NULL;
	struct sim s;
	int rc = 0;

	if (o->csv && !csv)
		return 1;
	if (sim_init(&s, sc, csv))
		return 1;
	sim_run(&s);
	if (csv && close_out(csv, o->csv))
		rc = 1;
	if (o->summary && write_summary(o, sim_json, &s))
		rc = 1;
	if (!o->quiet)
		report_table(csv == stdout ? stderr : stdout, &s);
	sim_free(&s);
	return rc;
}

static int run_fabric(const struct opts *o, struct scenario *sc)
{
	FILE *csv = o->csv ? open_out(o->csv) : NULL, *sum = NULL;
	struct fabsim *s = calloc(1, sizeof(*s));
	char err[1600];
	int rc = 0;

	if (!s || (o->csv && !csv)) {
		free(s);
		return 1;
	}
	if (fab_flows_generate(sc, sc->seed, err, sizeof(err)) || fabsim_init(s, sc, csv, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		fabsim_free(s);
		free(s);
		return 1;
	}
	fabsim_run(s);
	if (csv && close_out(csv, o->csv))
		rc = 1;
	if (o->summary) {
		sum = open_out(o->summary);
		if (!sum || fab_report_json(sum, s) || close_out(sum, o->summary))
			rc = 1;
	}
	if (!o->quiet)
		fab_report_table(csv == stdout ? stderr : stdout, s);
	fabsim_free(s);
	free(s);
	return rc;
}

static int run_replay(const struct opts *o, const struct scenario *sc)
{
	const char *path = o->csv ? o->csv : "-";
	FILE *csv = open_out(path);
	struct replay_result r;
	struct replay_json_arg a = { sc, &r };
	int rc = 0;

	if (!csv)
		return 1;
	if (replay_run(sc, csv, &r))
		return 1;
	if (close_out(csv, path))
		rc = 1;
	if (o->summary && write_summary(o, replay_json, &a))
		rc = 1;
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct scenario sc;
	char err[1600];
	int rc;

	run_info_start(argc, argv);
	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc == 1 ? 0 : 2;
	run_info_config(o.scenario);
	if (scenario_load(o.scenario, &sc, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (o.seed_set)
		sc.seed = o.seed;
	rc = sc.type == SC_RP_REPLAY ? run_replay(&o, &sc) : sc.type == SC_FABRIC ? run_fabric(&o, &sc) : run_network(&o, &sc);
	scenario_free(&sc);
	return rc;
}

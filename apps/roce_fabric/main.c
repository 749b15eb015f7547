/* SPDX-License-Identifier: BSD-3-Clause
 *
 * roce-fabric: what a fabric is and what it carries, before a frame is sent (docs/fabric.md):
 * the topology a `fabric` group describes (switches, links, oversubscription, addresses, the
 * rail mapping), every switch's routes, and for a `traffic` list the flows' paths under each
 * switch's load balancing with their max-min fair rates, ECMP groups' balance and the links'
 * loads. Reads engine configs and roce-ccsim scenarios alike (their other settings are left to
 * their programs).
 *
 *   roce-fabric [-r REPORT.json] [--routes] [--flows] [--nics] [-q] FILE
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "config_fabric.h"
#include "fabric_report.h"
#include "roce_version.h"
#include "wire.h"
#include "run_info.h"

static void usage(FILE *o)
{
	fprintf(o, "usage: roce-fabric [options] FILE\n"
		   "  FILE                a config or scenario with a `fabric` group (and a `traffic` list)\n"
		   "  -r, --report FILE   the report as JSON\n"
		   "      --routes        every switch's routes\n"
		   "      --flows         every flow: its path and rate\n"
		   "      --nics          the NICs' addresses even on large fabrics (shown up to 64 NICs)\n"
		   "  -q, --quiet         no text on stdout\n"
		   "  -h, --help\n"
		   "      --version       print the version and exit\n");
}

/* 0 to run, 1 done (help, version), 2 usage error. */
static int parse_args(int argc, char **argv, struct fr_opts *o)
{
	static const struct option longs[] = {
		{ "report", required_argument, NULL, 'r' }, { "routes", no_argument, NULL, 'R' },
		{ "flows", no_argument, NULL, 'F' },        { "nics", no_argument, NULL, 'N' },
		{ "quiet", no_argument, NULL, 'q' },        { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },      { NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "r:qh", longs, NULL)) != -1) {
		switch (c) {
		case 'r': o->report = optarg; break;
		case 'R': o->routes = true; break;
		case 'F': o->flows = true; break;
		case 'N': o->nics = true; break;
		case 'q': o->quiet = true; break;
		case 'h': usage(stdout); return 1;
		case 'V': printf("roce-fabric %s\n", roce_version_string()); return 1;
		default: usage(stderr); return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	o->file = argv[optind];
	return 0;
}

/* ---- the traffic list ------------------------------------------------------------------------- */

/* The shared parser's entry into the analysis's (whose flows also keep their places). */
static int traffic_entry(struct config_reader *r, const config_setting_t *e, const struct fabric *f, struct an_traffic *t,
			 uint32_t next_qpn)
{
	struct cfab_traffic c;

	memset(t, 0, sizeof(*t));
	if (cfab_traffic(r, e, f, cfab_program_traffic_keys, next_qpn, &c)) { /* the programs' keys: not a plan's */
		t->pattern = c.pattern; /* its hosts are freed with the others */
		return -1;
	}
	snprintf(t->name, sizeof(t->name), "%s", c.name);
	t->pattern = c.pattern;
	t->qps_per_pair = c.qps_per_pair;
	t->qpn = c.qpn;
	t->dest_qpn = c.dest_qpn;
	t->sport_entropy = c.sport_entropy;
	t->sport = c.sport;
	t->sport_step = c.sport_step;
	t->gbps = c.gbps;
	t->line = c.line;
	return 0;
}

static int traffic_list(struct config_reader *r, const config_setting_t *s, const struct fabric *f, struct analysis *a)
{
	uint32_t next_qpn = 0x100;
	int n;

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_LIST || (n = config_setting_length(s)) < 1 || n > AN_MAX_TRAFFIC)
		return cr_fail(r, s, "must be a list of 1..%d entries ( { pattern = ...; }, ... )", AN_MAX_TRAFFIC);
	for (int i = 0; i < n; i++) {
		struct an_traffic *t = &a->traffic[i];
		if (traffic_entry(r, config_setting_get_elem(s, (unsigned)i), f, t, next_qpn)) {
			a->n_traffic = (unsigned)i + 1; /* its hosts are freed with the others */
			return -1;
		}
		a->n_traffic++;
		next_qpn = t->qpn + CFAB_QPN_ROOM; /* room for 64 K flows an entry before the next's QPNs */
	}
	return 0;
}

/* ---- main ------------------------------------------------------------------------------------- */

struct loaded {
	config_t lc;
	struct fab_spec spec;
	struct fabric f;
	struct fab_routes routes;
	struct analysis a;
};

static int load(const struct fr_opts *o, struct loaded *L)
{
	struct config_reader r;
	char err[1024];
	const config_setting_t *g;

	cr_init(&r, o->file, err, sizeof(err), "configuration");
	if (cr_parse_file(&r, o->file, &L->lc)) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	g = config_lookup(&L->lc, "fabric");
	if (!g) {
		fprintf(stderr, "%s:1: fabric: missing (the group describing the fabric: docs/fabric.md)\n", o->file);
		return -1;
	}
	if (cfab_load(&r, g, &L->spec, &L->f, &L->routes)) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	L->a.f = &L->f;
	L->a.r = &L->routes;
	if (traffic_list(&r, config_lookup(&L->lc, "traffic"), &L->f, &L->a)) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	if (L->a.n_traffic && analysis_run(&L->a, err, sizeof(err))) {
		fprintf(stderr, "roce-fabric: %s: traffic: %s\n", o->file, err);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct fr_opts o = { 0 };
	struct loaded *L = calloc(1, sizeof(*L));
	int rc;

	run_info_start(argc, argv);
	if (!L)
		return 1;
	rc = parse_args(argc, argv, &o);
	if (rc) {
		free(L);
		return rc == 1 ? 0 : 2;
	}
	run_info_config(o.file);
	rc = load(&o, L) ? 1 : 0;
	if (!rc && !o.quiet)
		fabric_report_text(stdout, &o, &L->f, &L->routes, &L->a);
	if (!rc && o.report && fabric_report_json(&o, &L->f, &L->routes, &L->a))
		rc = 1;
	analysis_free(&L->a);
	fab_routes_free(&L->routes);
	fabric_free(&L->f);
	fab_spec_free(&L->spec);
	config_destroy(&L->lc);
	free(L);
	return rc;
}

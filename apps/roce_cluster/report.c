/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Rank 0's cluster-report.json (docs/cluster.md): the ranks (host, port, clock offsets before and
 * after, missing or not), every test's rounds as the ranks summarised them, the matrices and the
 * SLA's verdicts (cluster_report.h). Written after every round ("complete": false) and at the end;
 * written whole to a temporary file and renamed, so that a reader never sees half of one. At the
 * end scripts/plot-cluster.py draws the matrices as heatmaps beside it, when python3 and
 * matplotlib are there.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cluster_report.h"
#include "job.h"
#include "run_info.h"

#ifndef ROCE_SCRIPTS_DIR
#define ROCE_SCRIPTS_DIR "scripts"
#endif

static json_t *rank_json(const struct job *j, unsigned r)
{
	const struct cl_endpoint *e = &j->ep[r];
	const struct clock_offset *b = &j->before[r], *a = &j->after[r];
	char mac[18], ip[64];

	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", e->mac[0], e->mac[1], e->mac[2], e->mac[3], e->mac[4],
		 e->mac[5]);
	cl_endpoint_ip(e, ip, sizeof(ip));
	return json_pack("{s:i,s:s,s:i,s:s,s:s,s:s,s:f,s:b,s:{s:I,s:I,s:I,s:I,s:I,s:I}}", "rank", (int)r, "host", e->host,
			 "local_rank", (int)e->local_rank, "device", e->device, "mac", mac, e->family == 6 ? "ipv6" : "ipv4", ip, "link_gbps",
			 e->link_gbps, "missing", j->missing[r], "clock", "offset_ns", (json_int_t)b->offset_ns,
			 "uncertainty_ns", (json_int_t)b->uncertainty_ns, "rtt_ns", (json_int_t)b->rtt_ns, "offset_after_ns",
			 (json_int_t)a->offset_ns, "uncertainty_after_ns", (json_int_t)a->uncertainty_ns, "drift_ns",
			 (json_int_t)(a->samples ? a->offset_ns - b->offset_ns : 0));
}

static json_t *build(const struct job *j, bool final, bool *sla_failed)
{
	const unsigned n = (unsigned)j->comm.size;
	json_t *ranks = json_array(), *missing = json_array(), *matrix, *sla;

	for (unsigned r = 0; r < n; r++) {
		json_array_append_new(ranks, rank_json(j, r));
		if (j->missing[r])
			json_array_append_new(missing, json_integer(r));
	}
	matrix = cluster_matrices(j->tests, n, j->before);
	{
		json_t *t;
		size_t i;
		json_array_foreach(j->tests, i, t)
			json_object_set_new(t, "summary", cluster_test_summary(t, n, j->before));
	}
	sla = cluster_sla(&j->cfg.sla, matrix, j->tests, n, sla_failed);
	return json_pack("{s:i,s:o,s:s,s:b,s:o,s:i,s:s,s:o,s:o,s:O,s:o,s:o}", "version", 1, "run_info", run_info_json(),
			 "cluster", j->cfg.name, "complete", final, "exit_status",
			 j->exit_status >= 0 ? json_integer(j->exit_status) : json_null(), "n_ranks", (int)n, "clock_source",
			 j->cfg.clock == CL_CLOCK_PTP ? "ptp" : "mpi", "ranks", ranks, "missing_ranks", missing, "tests",
			 j->tests, "matrix", matrix, "sla", sla);
}

static void plots(const char *dir)
{
	char cmd[8400];
	struct stat st;

	snprintf(cmd, sizeof(cmd), "%s/plot-cluster.py", ROCE_SCRIPTS_DIR);
	if (stat(cmd, &st))
		return;
	/* Debian's python3, which has python3-matplotlib (scripts/install-deps.sh) */
	snprintf(cmd, sizeof(cmd), "%s %s/plot-cluster.py '%s' > '%s/plots.log' 2>&1",
		 stat("/usr/bin/python3", &st) ? "python3" : "/usr/bin/python3", ROCE_SCRIPTS_DIR, dir, dir);
	if (system(cmd) != 0)
		fprintf(stderr, "roce-cluster: no heatmaps (scripts/plot-cluster.py failed: %s/plots.log)\n", dir);
}

int job_write_report(struct job *j, bool final, bool *sla_failed)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 48];
	json_t *root;
	int rc;

	if (mkdir(j->cfg.results, 0755) && errno != EEXIST) {
		fprintf(stderr, "roce-cluster: cannot make %s: %s\n", j->cfg.results, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/cluster-report.json", j->cfg.results);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	root = build(j, final, sla_failed);
	rc = json_dump_file(root, tmp, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
	json_decref(root);
	if (rc || rename(tmp, path)) {
		fprintf(stderr, "roce-cluster: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (final) {
		plots(j->cfg.results);
		printf("roce-cluster: report written to %s\n", path);
	}
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * One roce-cluster job, as every rank holds it: the MPI ranks (comm.h), the cluster file, every
 * rank's endpoint, the job's id and folders, the clocks' offsets to rank 0; on rank 0 also the
 * lab switch and the results gathered so far. main.c starts it (start.c: the checks every rank
 * makes before a step, the lab, the clocks), run.c runs the tests step by step, and rank 0
 * writes the report after each round (report.c) so that what was measured survives a job that
 * dies.
 */
#ifndef ROCE_CLUSTER_JOB_H
#define ROCE_CLUSTER_JOB_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include <jansson.h>

#include "clock_est.h"
#include "cluster.h"
#include "comm.h"
#include "step.h"

/* roce-cluster's exit status (docs/cluster.md) */
enum cluster_exit {
	CLUSTER_EXIT_OK = 0,
	CLUSTER_EXIT_USAGE = 2,
	CLUSTER_EXIT_CONFIG = 3,     /* the file refused, or the ranks read different files */
	CLUSTER_EXIT_INIT = 4,       /* a rank could not start (its port, its engine), or MPI failed */
	CLUSTER_EXIT_REPORT = 5,     /* the report could not be written */
	CLUSTER_EXIT_SLA = 6,        /* ran, wrote its report, and an SLA threshold was missed */
	CLUSTER_EXIT_MISSING = 7,    /* a rank went missing: the report has the others' results */
};

#define CL_COMM_TIMEOUT_S 120.0  /* a collective outside a step (a rank's config, the clocks) */

struct job {
	struct comm comm;
	const char *file;
	struct cluster_cfg cfg;
	char engine[PATH_MAX];
	char id[32];                 /* rank 0's: EAL file prefixes, the lab's sockets */
	char sock_dir[256];          /* the lab's sockets (the one host of a lab) */
	char work[PATH_MAX];         /* this rank's steps' folders */
	int main_cpu, worker_cpu;    /* this rank's engines' lcores */
	struct cl_endpoint *ep;      /* every rank's, by rank */
	struct clock_offset *before, *after; /* every rank's clock minus rank 0's, before and after the tests */
	bool *missing;               /* rank 0: ranks whose results stopped coming */
	pid_t lab_pid;               /* rank 0: the lab switch, or 0 */
	json_t *tests;               /* rank 0: the tests' rounds as they came */
	int exit_status;             /* rank 0: what the report says the job ends with */
	volatile int interrupted;
};

/* start.c: what every rank does before the tests. Each returns 0, or an enum cluster_exit after
 * saying why (rank 0 says it for everyone). */
int job_exchange_endpoints(struct job *j);
int job_start_lab(struct job *j);
int job_sync_clocks(struct job *j, struct clock_offset *out);
void job_stop_lab(struct job *j);

/* run.c: the tests, step by step; 0 or an enum cluster_exit. */
int job_run_tests(struct job *j);

/* report.c (rank 0): the report (and heatmaps) into the results folder; `final` when the tests
 * are done. Sets *sla_failed. 0 or -1 (said). */
int job_write_report(struct job *j, bool final, bool *sla_failed);

#endif

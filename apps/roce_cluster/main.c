/* SPDX-License-Identifier: BSD-3-Clause
 *
 * roce-cluster: one test across many hosts, started by the launcher a cluster already has
 * (`mpirun -np N roce-cluster CLUSTER.cfg`, `srun -n N roce-cluster CLUSTER.cfg`): one MPI rank per
 * host or NIC, each running its own engine step by step (roce-engine as a child process: EAL per
 * step, a file prefix of the job's and the rank's), MPI only to agree (endpoints, start times,
 * clocks) and to bring the results to rank 0, which writes one report (docs/cluster.md).
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine_child.h"
#include "job.h"
#include "run_info.h"
#include "roce_version.h"

static struct job job;

static void on_signal(int sig)
{
	(void)sig;
	job.interrupted = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: mpirun -np N [--host ...] roce-cluster [--engine PATH] CLUSTER.cfg\n"
		   "       srun -n N roce-cluster CLUSTER.cfg\n"
		   "One rank per host or NIC; every rank reads the same CLUSTER.cfg (docs/cluster.md).\n"
		   "  --engine PATH   roce-engine to run (default: the cluster file's, else beside roce-cluster)\n"
		   "  -h, --help      this text\n");
}

/* roce-engine: the option's, the file's, else the one beside this program. */
static void find_engine(const char *opt)
{
	char self[PATH_MAX];
	ssize_t n;

	if (opt || job.cfg.engine[0]) {
		snprintf(job.engine, sizeof(job.engine), "%s", opt ? opt : job.cfg.engine);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	snprintf(job.engine, sizeof(job.engine), "%s/roce-engine", n > 0 ? dirname(self) : ".");
}

/* The job's folders on this host: the lab's sockets and this rank's steps (under the results
 * folder when they are kept, else a temporary one). */
static int make_folders(void)
{
	char dir[PATH_MAX + 64];

	if (mkdir(job.sock_dir, 0755) && errno != EEXIST)
		return -1;
	if (job.cfg.keep) {
		snprintf(dir, sizeof(dir), "%s/rank%d", job.cfg.results, job.comm.rank);
		mkdir(job.cfg.results, 0755);
	} else {
		snprintf(dir, sizeof(dir), "%s/rank%d", job.sock_dir, job.comm.rank);
	}
	cl_text(job.work, sizeof(job.work), "%s", dir);
	return mkdir(job.work, 0755) && errno != EEXIST ? -1 : 0;
}

/* The end, the same on every rank: rank 0's verdict, broadcast (a rank that cannot hear it any
 * more keeps its own). */
static int finish(int status)
{
	bool sla = false;
	int32_t final = status;

	if (job.comm.rank == 0 && job.tests) { /* the report's last word is the job's status */
		job.exit_status = status;
		if (job_write_report(&job, status == 0, &sla))
			final = CLUSTER_EXIT_REPORT;
		else if (!final && sla) {
			final = job.exit_status = CLUSTER_EXIT_SLA;
			if (job_write_report(&job, true, &sla))
				final = CLUSTER_EXIT_REPORT;
		}
	}
	job_stop_lab(&job);
	if (status != CLUSTER_EXIT_MISSING && comm_bcast(&final, (int)sizeof(final), 0, CL_COMM_TIMEOUT_S) == 0)
		status = final;
	if (!job.cfg.keep && job.sock_dir[0])
		engine_child_rm_tree(job.sock_dir);
	if (status == CLUSTER_EXIT_MISSING) /* the others may wait for the dead: end them all (with
					     * mpirun --enable-recovery, mpirun itself then exits 0: the
					     * report's exit_status and rank 0's lines say it) */
		comm_abort(status);
	comm_finish();
	return status;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = { { "engine", required_argument, NULL, 'e' }, { "help", no_argument, NULL, 'h' },
					       { "version", no_argument, NULL, 'V' }, { NULL, 0, NULL, 0 } };
	const char *engine = NULL;
	char err[1024];
	int c, rc;

	run_info_start(argc, argv);
	if (comm_init(&argc, &argv, &job.comm)) {
		fprintf(stderr, "roce-cluster: MPI did not start\n");
		return CLUSTER_EXIT_INIT;
	}
	while ((c = getopt_long(argc, argv, "e:hV", longs, NULL)) != -1) {
		if (c == 'e') {
			engine = optarg;
		} else if (c == 'V') {
			printf("roce-cluster %s\n", ROCE_VERSION);
			comm_finish();
			return 0;
		} else {
			if (job.comm.rank == 0)
				usage(c == 'h' ? stdout : stderr);
			comm_finish();
			return c == 'h' ? 0 : CLUSTER_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		if (job.comm.rank == 0)
			usage(stderr);
		comm_finish();
		return CLUSTER_EXIT_USAGE;
	}
	job.file = argv[optind];
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (cluster_config_load(job.file, &job.cfg, err, sizeof(err))) {
		if (job.comm.rank == 0)
			fprintf(stderr, "roce-cluster: %s\n", err);
		comm_finish(); /* every rank reads the same file: each refuses it alike */
		return CLUSTER_EXIT_CONFIG;
	}
	run_info_config(job.file);
	find_engine(engine);
	job.ep = calloc((size_t)job.comm.size, sizeof(*job.ep));
	job.before = calloc((size_t)job.comm.size, sizeof(*job.before));
	job.after = calloc((size_t)job.comm.size, sizeof(*job.after));
	job.missing = calloc((size_t)job.comm.size, sizeof(*job.missing));
	if (!job.ep || !job.before || !job.after || !job.missing)
		return finish(CLUSTER_EXIT_INIT);
	if ((rc = job_exchange_endpoints(&job)))
		return finish(rc);
	if (make_folders()) {
		fprintf(stderr, "roce-cluster: rank %d (host %s): cannot make its folders: %s\n", job.comm.rank, job.comm.host,
			strerror(errno));
		return finish(CLUSTER_EXIT_INIT);
	}
	if (job.comm.rank == 0) {
		job.tests = json_array();
		job.exit_status = -1; /* (until the end) */
		printf("roce-cluster: %d ranks, %s; results in %s\n", job.comm.size,
		       job.cfg.lab.present ? "the local lab (memif into a lab switch)" : "their own ports", job.cfg.results);
	}
	if ((rc = job_start_lab(&job)) || (rc = job_sync_clocks(&job, job.before)) || (rc = job_run_tests(&job)) ||
	    (rc = job_sync_clocks(&job, job.after)))
		return finish(rc);
	return finish(0);
}

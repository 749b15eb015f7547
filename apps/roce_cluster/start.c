/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Before the tests (job.h): every rank's endpoint to every rank (MPI_Allgather), checked by rank 0
 * (the same cluster file everywhere by SHA-256, a port for every rank), the lab switch, the
 * clocks' offsets to rank 0. A decision of rank 0 reaches every rank by one broadcast, so that
 * all end together, with one line naming the rank, its host and the reason.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "job.h"
#include "lab.h"
#include "run_info.h"

/* What rank 0 decided, broadcast to all. */
struct decision {
	int32_t status;              /* enum cluster_exit */
	char message[900];
};

/* The rule's address (the one it gives) into the endpoint. */
static int parse_ip(const char *s, struct cl_endpoint *ep)
{
	return inet_pton(ep->family == 6 ? AF_INET6 : AF_INET, s, ep->family == 6 ? (void *)ep->ipv6 : (void *)ep->ipv4) == 1
		       ? 0
		       : -1;
}

static int parse_mac(const char *s, uint8_t out[6])
{
	unsigned m[6];
	char end;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5], &end) != 6)
		return -1;
	for (int i = 0; i < 6; i++) {
		if (m[i] > 255)
			return -1;
		out[i] = (uint8_t)m[i];
	}
	return 0;
}

/* This rank's port from its rule ({rank} and the others expanded); the error in ep. */
static void port_from_rule(const struct job *j, struct cl_endpoint *ep)
{
	const struct cl_port_rule *p = cluster_port_of(&j->cfg, ep->rank, j->comm.host, ep->local_rank);
	char ip[64], mac[64];

	if (!p) {
		ep->status = CLUSTER_EXIT_CONFIG;
		snprintf(ep->error, sizeof(ep->error), "%s: ports: no port for this rank (by rank, host or local_rank)", j->file);
		return;
	}
	if (cluster_expand(p->device, ep->rank, ep->local_rank, ep->device, sizeof(ep->device)) ||
	    cluster_expand(p->vdev_args, ep->rank, ep->local_rank, ep->vdev_args, sizeof(ep->vdev_args)) ||
	    cluster_expand(p->ipv4[0] ? p->ipv4 : p->ipv6, ep->rank, ep->local_rank, ip, sizeof(ip)) ||
	    cluster_expand(p->mac, ep->rank, ep->local_rank, mac, sizeof(mac)) ||
	    (ep->family = p->ipv4[0] ? 4 : 6, parse_ip(ip, ep)) || parse_mac(mac, ep->mac)) {
		ep->status = CLUSTER_EXIT_CONFIG;
		snprintf(ep->error, sizeof(ep->error), "%s:%u: ports: %s \"%s\" or mac \"%s\" is not an address for this rank",
			 j->file, p->line, p->ipv4[0] ? "ipv4" : "ipv6", ip, mac);
		return;
	}
	ep->link_gbps = p->link_gbps > 0 ? p->link_gbps : 100;
	ep->mtu = p->mtu;
}

static void my_endpoint(const struct job *j, struct cl_endpoint *ep)
{
	memset(ep, 0, sizeof(*ep));
	ep->rank = (uint32_t)j->comm.rank;
	ep->local_rank = (uint32_t)j->comm.local_rank;
	cl_text(ep->host, sizeof(ep->host), "%s", j->comm.host);
	ep->rx_qpn_base = CL_RX_QPN_BASE;
	ep->start_psn = 0;
	if (run_info_sha256_file(j->file, ep->sha256)) {
		ep->status = CLUSTER_EXIT_CONFIG;
		snprintf(ep->error, sizeof(ep->error), "%s: cannot read: %s", j->file, strerror(errno));
		return;
	}
	if (j->cfg.lab.present)
		lab_endpoint(&j->cfg, ep->rank, j->sock_dir, ep);
	else
		port_from_rule(j, ep);
}

/* Rank 0: whether every rank can go on, and if not the first reason. */
static void decide(const struct job *j, struct decision *d)
{
	const unsigned n = (unsigned)j->comm.size;

	if (j->cfg.lab.present && n > CL_LAB_MAX_RANKS) {
		d->status = CLUSTER_EXIT_CONFIG;
		snprintf(d->message, sizeof(d->message), "%s: lab: %u ranks; the lab switch has %u ports (run fewer ranks, or "
			 "real ports)", j->file, n, CL_LAB_MAX_RANKS);
		return;
	}
	for (unsigned r = 0; r < n; r++) {
		const struct cl_endpoint *e = &j->ep[r];
		if (e->status) {
			d->status = e->status;
			snprintf(d->message, sizeof(d->message), "rank %u (host %s): %s", r, e->host, e->error);
			return;
		}
		if (strcmp(e->sha256, j->ep[0].sha256)) {
			d->status = CLUSTER_EXIT_CONFIG;
			snprintf(d->message, sizeof(d->message), "rank %u (host %s) read a different %s (SHA-256 %.12s..., "
				 "rank 0's %.12s...): every rank must run the same cluster file", r, e->host, j->file, e->sha256,
				 j->ep[0].sha256);
			return;
		}
		if (e->family != j->ep[0].family) {
			d->status = CLUSTER_EXIT_CONFIG;
			snprintf(d->message, sizeof(d->message), "rank %u (host %s) has an IPv%u address, rank 0 an IPv%u one: "
				 "the ranks' ports must be of one family", r, e->host, e->family, j->ep[0].family);
			return;
		}
	}
}

/* This rank's lcores: the main one on the first CPU it may use, the worker on the next after its
 * local rank's (ranks of one host do not share a worker CPU while there are CPUs enough). */
static void pick_cpus(struct job *j)
{
	cpu_set_t set;
	int cpus[CPU_SETSIZE], n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				cpus[n++] = c;
	if (!n)
		cpus[n++] = 0;
	j->main_cpu = cpus[0];
	j->worker_cpu = cpus[(1 + j->comm.local_rank) % n];
}

int job_exchange_endpoints(struct job *j)
{
	struct cl_endpoint mine;
	struct decision d = { 0 };

	pick_cpus(j);
	/* the job's id first: the lab's sockets are named by it in every rank's endpoint */
	if (j->comm.rank == 0)
		snprintf(j->id, sizeof(j->id), "%x%04x", (unsigned)time(NULL) & 0xffffff, (unsigned)getpid() & 0xffff);
	if (comm_bcast(j->id, (int)sizeof(j->id), 0, CL_COMM_TIMEOUT_S))
		return CLUSTER_EXIT_INIT;
	snprintf(j->sock_dir, sizeof(j->sock_dir), "/tmp/roce-cluster-%s", j->id);
	my_endpoint(j, &mine);
	if (comm_allgather(&mine, j->ep, (int)sizeof(mine), CL_COMM_TIMEOUT_S)) {
		fprintf(stderr, "roce-cluster: rank %d (host %s): the ranks' endpoints did not all come within %.0f s\n",
			j->comm.rank, j->comm.host, CL_COMM_TIMEOUT_S);
		return CLUSTER_EXIT_INIT;
	}
	if (j->comm.rank == 0)
		decide(j, &d);
	if (comm_bcast(&d, (int)sizeof(d), 0, CL_COMM_TIMEOUT_S))
		return CLUSTER_EXIT_INIT;
	if (d.status) {
		if (j->comm.rank == 0)
			fprintf(stderr, "roce-cluster: %s\n", d.message);
		return d.status;
	}
	return 0;
}

int job_start_lab(struct job *j)
{
	struct decision d = { 0 };
	char dir[PATH_MAX + 8];

	if (!j->cfg.lab.present)
		return 0;
	if (j->comm.rank == 0) {
		snprintf(dir, sizeof(dir), "%s/lab", j->work);
		if (mkdir(dir, 0755) && errno != EEXIST) {
			d.status = CLUSTER_EXIT_INIT;
			cl_text(d.message, sizeof(d.message), "cannot make %s: %s", dir, strerror(errno));
		} else {
			int cpu = j->cfg.lab.cpu >= 0 ? j->cfg.lab.cpu : j->worker_cpu;
			j->lab_pid = lab_switch_start(&j->cfg, j->ep, (unsigned)j->comm.size, j->engine, dir, j->sock_dir, j->id,
						      cpu, d.message, sizeof(d.message));
			if (j->lab_pid < 0)
				d.status = CLUSTER_EXIT_INIT;
		}
	}
	if (comm_bcast(&d, (int)sizeof(d), 0, CL_COMM_TIMEOUT_S))
		return CLUSTER_EXIT_INIT;
	if (d.status && j->comm.rank == 0)
		fprintf(stderr, "roce-cluster: rank 0 (host %s): %s\n", j->comm.host, d.message);
	return d.status;
}

void job_stop_lab(struct job *j)
{
	if (j->lab_pid > 0)
		lab_switch_stop(j->lab_pid);
	j->lab_pid = 0;
}

/* Rank 0 against every other rank in turn, the others against rank 0; the offsets broadcast. */
int job_sync_clocks(struct job *j, struct clock_offset *out)
{
	const unsigned n = (unsigned)j->comm.size, k = j->cfg.clock_samples;
	long long (*s)[3] = calloc(k, sizeof(*s));
	struct clock_sample *cs = calloc(k, sizeof(*cs));
	int rc = 0;

	memset(out, 0, n * sizeof(*out));
	if (!s || !cs)
		rc = -1;
	for (unsigned r = 1; !rc && r < n && j->cfg.clock == CL_CLOCK_MPI; r++) {
		if (j->comm.rank != 0 && (unsigned)j->comm.rank != r)
			continue;
		if (comm_clock_pingpong(&j->comm, j->comm.rank == 0 ? (int)r : 0, k, s, CL_COMM_TIMEOUT_S)) {
			rc = -1;
			break;
		}
		for (unsigned i = 0; i < k; i++)
			cs[i] = (struct clock_sample){ .t0 = s[i][0], .t1 = s[i][1], .peer = s[i][2] };
		if (j->comm.rank == 0)
			clock_estimate(cs, k, &out[r]);
	}
	for (unsigned r = 0; j->cfg.clock == CL_CLOCK_PTP && r < n; r++) /* PTP-disciplined: taken as one clock */
		out[r] = (struct clock_offset){ .uncertainty_ns = (int64_t)j->cfg.ptp_uncertainty_ns };
	free(s);
	free(cs);
	if (rc || comm_bcast(out, (int)(n * sizeof(*out)), 0, CL_COMM_TIMEOUT_S)) {
		fprintf(stderr, "roce-cluster: rank %d (host %s): the clocks' exchange did not complete within %.0f s\n",
			j->comm.rank, j->comm.host, CL_COMM_TIMEOUT_S);
		return CLUSTER_EXIT_MISSING;
	}
	return 0;
}

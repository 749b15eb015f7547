/* SPDX-License-Identifier: BSD-3-Clause
 *
 * One step of a cluster test on one rank: the engine config this rank runs (its port, a UC WRITE
 * flow group to each rank it sends to this step, its start time), the engine run as a child
 * process (apps/engine_child), and what its report says, boiled down to a small JSON object that
 * goes to rank 0: what it sent to each peer, what it received from each (bytes, packets, PSNs
 * lost, one-way latency percentiles) and what the machine took (lcores held up, loop turn).
 */
#ifndef ROCE_CLUSTER_STEP_H
#define ROCE_CLUSTER_STEP_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "cluster.h"

#define CL_RX_QPN_BASE 0x10000   /* a receiver's QPs: base + (sender rank << 6 | QP) */
#define CL_TX_QPN_BASE 0x400000  /* a sender's own QPNs: base + (receiver rank << 6 | QP) */

/* What a rank tells the others (MPI_Allgather): what perftest exchanges over its socket, and what
 * the step configs need. Fixed size, no pointers. */
struct cl_endpoint {
	uint32_t rank, local_rank;
	char host[64];
	uint8_t mac[6];
	uint8_t family;              /* 4 or 6: which of the addresses is its */
	uint8_t ipv4[4];
	uint8_t ipv6[16];
	uint32_t rx_qpn_base;        /* senders to this rank use rx_qpn_base + (their rank << 6 | QP) */
	uint32_t start_psn;          /* the PSN its receivers expect first */
	char sha256[65];             /* of the cluster file this rank read */
	int32_t status;              /* 0, or why this rank cannot run (error) */
	char error[200];
	/* the port this rank drives */
	char device[128], vdev_args[256];
	double link_gbps;
	uint32_t mtu;
};

/* The endpoint's address as text (inet_ntop's). */
void cl_endpoint_ip(const struct cl_endpoint *e, char *out, size_t len);

/* Where a step runs, for every rank alike. */
struct cl_step_env {
	const struct cluster_cfg *cfg;
	const struct cl_endpoint *ep;  /* every rank's, by rank */
	unsigned n_ranks;
	const char *engine;            /* roce-engine */
	const char *work;              /* this rank's folder for its steps */
	const char *job;               /* the job's id (EAL file prefixes, sockets) */
	int main_cpu, worker_cpu;      /* this rank's engine's lcores */
	volatile int *interrupted;
	/* while the engine runs, called every 5 ms with the step's folder (NULL: nothing) */
	void (*tick)(void *arg, const char *dir);
	void *tick_arg;
};

/* A port's row of the engine's time series (its last interval): what the live lines show. */
struct step_live {
	double time_s;                 /* the interval's end, since the traffic started */
	double tx_gbps, rx_gbps;       /* frame bytes */
	double p50_ns;                 /* one-way latency of the interval's probes, 0 without */
};

#define STEP_TIMESERIES "ts.csv"     /* in the step's folder, when cluster.live_interval_s > 0 */

/* The last row of port `port` in dir's time series; 0, or -1 (none yet). */
int step_live_row(const char *dir, const char *port, struct step_live *out);

/* Whom a rank sends to and receives from in a step. */
struct cl_step_peers {
	const unsigned *to, *from;
	unsigned n_to, n_from;
};

#define CL_MAX_SENDERS 64         /* to one rank a step, with RC or congestion control: the engine's
				   * responders and peers lists (config.h: CFG_MAX_RESPONDERS) */

/* This rank's engine config for a step (text); 0, or -1 if it does not fit. */
int step_config(const struct cl_step_env *env, unsigned rank, const struct cl_test *t, unsigned step,
		const struct cl_step_peers *pe, double start_at_unix_s, char *out, size_t len);
/* Runs this rank's engine for a step and returns its summary (a new JSON object; "error" set when
 * it did not run; "report" the engine's whole report). rank's engine is not run at all when it
 * neither sends nor receives. */
json_t *step_run(const struct cl_step_env *env, unsigned rank, const struct cl_test *t, unsigned step,
		 const struct cl_step_peers *pe, double start_at_unix_s);
/* A report's summary (the part step_run adds from the report): what it sent to and received from
 * each of the step's peers (pe), and the payload that came in from ranks that are not its senders
 * this step (stray_payload_bytes: frames of an earlier step). */
json_t *step_summary(const json_t *report, const struct cl_step_env *env, unsigned rank,
		     const struct cl_step_peers *pe);

#endif

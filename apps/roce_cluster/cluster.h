/* SPDX-License-Identifier: BSD-3-Clause
 *
 * roce-cluster's configuration (docs/cluster.md): one file every rank reads, validated whole
 * before any engine starts, with the project's one error line "FILE:LINE: SETTING: what is wrong
 * (what is allowed)". It says which port each rank drives (by rank, by host name or by local
 * rank; or the built-in local lab: a memif port per rank into a lab switch in a process of its
 * own), the tests to run step by step, and the SLA thresholds.
 */
#ifndef ROCE_CLUSTER_H
#define ROCE_CLUSTER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libconfig.h>

#define CL_MAX_RANKS 1024
#define CL_MAX_TESTS 32
#define CL_MAX_PORT_RULES 64
#define CL_LAB_MAX_RANKS 16        /* the lab switch is one engine: 16 ports */
#define CL_NAME_LEN 32
#define CL_STR_LEN 256
#define CL_MAX_PEERS 256           /* a rank's engine sends to a peer by a flow group of its own */
/* what one engine's collective takes (config/config.h: CFG_MAX_PHASES, CFG_MAX_COLLECTIVE_FLOWS) */
#define CL_ENGINE_MAX_PHASES 4096
#define CL_ENGINE_MAX_COLLECTIVE_FLOWS 64
#define CL_MAX_ITERATIONS 1000     /* a collective's phases x iterations: 4096 at most (the engine's) */
#define CL_QPS_PER_PAIR_MAX 64     /* a rank's QPNs: 0x10000 + (sender rank << 6 | QP) */

enum cl_test_type { CL_TEST_PAIRWISE, CL_TEST_INCAST, CL_TEST_ALL_TO_ALL, CL_TEST_PERMUTATION, CL_TEST_COLLECTIVE };
/* A collective across the ranks (type "collective"), as NCCL runs it: AllReduce and AllGather on
 * a ring (each phase every rank sends a chunk to the next and waits for the previous one's),
 * AlltoAll directly (every rank to every other at once). */
enum cl_collective_op { CL_OP_ALLREDUCE, CL_OP_ALLGATHER, CL_OP_ALLTOALL };
enum cl_transport { CL_TRANSPORT_UC, CL_TRANSPORT_RC };
enum cl_cc { CL_CC_NONE, CL_CC_DCQCN, CL_CC_TIMELY };
enum cl_measure { CL_MEASURE_BANDWIDTH, CL_MEASURE_LATENCY };
enum cl_schedule { CL_SCHED_ROUND_ROBIN, CL_SCHED_HALF, CL_SCHED_FILE };

#define CL_MAX_FILE_PAIRS 65536

/* A pair a pairs file lists, and its line there. */
struct cl_file_pair {
	unsigned a, b, line;
};
enum cl_clock { CL_CLOCK_MPI, CL_CLOCK_PTP };
enum cl_port_by { CL_BY_RANK, CL_BY_HOST, CL_BY_LOCAL_RANK };

struct cl_test {
	char name[CL_NAME_LEN];
	enum cl_test_type type;
	enum cl_measure measure;
	enum cl_schedule schedule;   /* pairwise */
	char pairs_file[PATH_MAX];   /* pairwise, schedule "file": as given (relative: to the cluster file's folder) */
	struct cl_file_pair *pairs;  /* its pairs, in its order (allocated; cluster_config_free) */
	unsigned n_pairs;
	unsigned root;               /* incast: the rank every other sends to */
	uint64_t seed;               /* permutation: which one (every rank draws the same) */
	enum cl_collective_op op;    /* collective */
	unsigned iterations;         /* collective: how many times it runs back to back */
	double compute_ms;           /* collective: a synthetic compute step before each iteration (0: none),
				      * as training computes between its collectives */
	unsigned message_size;       /* bytes of each WRITE; a collective's: its size S (nccl-tests' "size") */
	unsigned mtu;                /* IB path MTU */
	unsigned qps_per_pair;
	enum cl_transport transport; /* of every flow: UC (no retransmission), RC (go-back-N, ACKs);
				      * a collective's default RC, the others' UC */
	enum cl_cc cc;               /* every flow's congestion control */
	double duration_s;           /* of each step */
	double rate_gbps;            /* each QP's; 0: unpaced (the link's) */
	double probe_pps;            /* latency: each QP's probes a second */
	unsigned line;
};

/* A rank's port: which ranks it is for, and the engine port settings ({rank}, {rank1} = rank + 1
 * and {local_rank} in ipv4, ipv6, mac and vdev_args stand for the rank's numbers). */
struct cl_port_rule {
	enum cl_port_by by;
	int rank, local_rank;
	char host[CL_STR_LEN];
	char device[CL_STR_LEN], vdev_args[CL_STR_LEN], ipv4[64], ipv6[80], mac[64]; /* one of ipv4, ipv6 */
	double link_gbps;
	unsigned mtu;
	unsigned line;
};

struct cl_lab {
	bool present;
	double link_gbps;            /* every rank's link into the switch */
	unsigned mtu;
	unsigned ip_version;         /* the ranks' addresses: 4 (10.77.x.y) or 6 (fd77::x) */
	int cpu;                     /* the switch's CPU; -1: the last */
	const config_setting_t *sw;  /* the switch group, copied into the switch's config */
};

struct cl_sla {
	double min_pair_gbps;        /* 0: none */
	double max_pair_p99_us;      /* 0: none */
	double min_busbw_gbps;       /* each collective test's mean busBW; 0: none */
};

struct cluster_cfg {
	char file[PATH_MAX];
	char name[CL_NAME_LEN];
	char results[CL_STR_LEN];    /* rank 0's folder */
	char engine[PATH_MAX];       /* roce-engine; "" = beside roce-cluster */
	double step_timeout_s;       /* beyond a step's duration */
	double start_margin_s;       /* a step's traffic starts this long after rank 0 says so: the
				      * engines' EAL start (about a second without hugepages, more
				      * with many of them to map) */
	double live_interval_s;      /* rank 0's live lines during a step; 0: none */
	unsigned metrics_port;       /* each rank's engine serves /metrics on this + its local rank; 0: none */
	char metrics_address[64];    /* ... on this address */
	enum cl_clock clock;
	unsigned clock_samples;
	double ptp_uncertainty_ns;
	unsigned memory_mb;
	bool keep;                   /* every rank keeps its steps' folders */
	struct cl_lab lab;
	struct cl_port_rule ports[CL_MAX_PORT_RULES];
	unsigned n_ports;
	struct cl_test tests[CL_MAX_TESTS];
	unsigned n_tests;
	struct cl_sla sla;
	config_t text;               /* kept: the lab's switch group points into it */
	bool text_ok;
};

/* 0, or -1 with the error line in err. */
int cluster_config_load(const char *path, struct cluster_cfg *c, char *err, size_t errlen);
void cluster_config_free(struct cluster_cfg *c);
/* The port rule that applies to a rank (by rank first, then host, then local rank), or NULL. */
const struct cl_port_rule *cluster_port_of(const struct cluster_cfg *c, unsigned rank, const char *host,
					    unsigned local_rank);
/* Why test t cannot run over n ranks (the engine's limits on a collective, a root or pair beyond
 * the job, too many senders to one rank), into why; left empty when it can. roce-cluster checks
 * every test so before any runs, and roce-suite a job it derives before it launches one. */
void cluster_test_fits(const struct cl_test *t, unsigned n, char *why, size_t len);
/* s with {rank}, {rank1}, {local_rank} replaced; 0, or -1 when the result does not fit. */
int cluster_expand(const char *s, unsigned rank, unsigned local_rank, char *out, size_t len);

/* snprintf where cutting a long path or message short is what we want; a function, so the
 * compiler's truncation warning is not raised at every call that means it. */
void cl_text(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

extern const char *const cl_test_type_names[];
extern const char *const cl_measure_names[];
extern const char *const cl_op_names[];
extern const char *const cl_transport_names[];
extern const char *const cl_cc_names[];

#endif

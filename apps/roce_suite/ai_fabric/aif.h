/* SPDX-License-Identifier: BSD-3-Clause
 *
 * roce-suite's AI-fabric suite (suite.type = "ai_fabric", docs/ai-fabric.md): the test categories
 * of the IETF BMWG methodology for AI training fabrics
 * (draft-calabria-bmwg-ai-fabric-training-bench-02; ../shared/spec/ai-fabric-bench.md) run as
 * roce-engine trials on the virtual fabric the suite file's `fabric` group describes, their KPIs
 * computed by kpi/, and the methodology's seven-section report (§13) written as JSON, Markdown
 * and PNG into one results folder.
 *
 * Files: aif_config.c (the suite file's ai_fabric, thresholds and dut groups), aif_lab.c (trial
 * configs on the fabric, roce-fabric's plan of them, the report's fabric figures), aif.c (the
 * categories in turn, thresholds, repeatability), report.c (the seven sections), and one file
 * per category: throughput.c (§5.1), latency.c (§5.2), burst.c (§5.3), ecn.c (§7.1), pfc_incast.c (§7.2),
 * convergence.c (§7.3), deadlock.c (§7.4), load_balance.c (§8), collectives.c (§9), jct.c (§10.1),
 * interference.c (§10.3), link_failure.c (§11.2, §11.3), soak.c (§12); cluster.c runs §9 and §10.1
 * across hosts instead, as one roce-cluster job (ai_fabric.cluster).
 */
#ifndef ROCE_SUITE_AIF_H
#define ROCE_SUITE_AIF_H

#include <limits.h>
#include <stdbool.h>

#include <jansson.h>
#include <libconfig.h>

#include "config_read.h"
#include "kpi.h"

#define AIF_MAX_LIST 8
#define AIF_IB_MTU 1024 /* every trial flow's path MTU: fits the fabric NICs' default IP MTU */

/* The categories, in the order they run (and their sections of the draft). */
enum aif_category {
	AIF_THROUGHPUT,   /* §5.1 */
	AIF_LATENCY,      /* §5.2 */
	AIF_BURST,        /* §5.3 */
	AIF_ECN,          /* §7.1 */
	AIF_PFC_INCAST,   /* §7.2 */
	AIF_CONVERGENCE,  /* §7.3 */
	AIF_DEADLOCK,     /* §7.4 */
	AIF_ECMP,         /* §8.1 */
	AIF_FLOWLET,      /* §8.2 */
	AIF_SPRAY,        /* §8.3 (and §8.4: the JFI chart over the three) */
	AIF_COLLECTIVES,  /* §9 */
	AIF_JCT,          /* §10.1 */
	AIF_INTERFERENCE, /* §10.3 */
	AIF_LINK_FAILURE, /* §11.2, §11.3 */
	AIF_SOAK,         /* §12 */
	AIF_CATEGORIES
};

extern const char *const aif_category_names[];    /* "throughput", ...; NULL-terminated */
extern const char *const aif_category_sections[]; /* "5.1", ... */

struct aif_throughput_cfg {
	unsigned sizes[AIF_MAX_LIST], n_sizes;   /* message bytes (RDMA WRITE) */
	unsigned qps[AIF_MAX_LIST], n_qps;       /* QPs per host pair */
	bool uni, bi;                            /* directions */
	double loss_threshold_pct;               /* the search's zero: 0 */
	double resolution_pct;                   /* of the host link's rate */
	unsigned max_trials;                     /* per search */
	unsigned priority;                       /* 0: a lossy class (a loss shows instead of a pause) */
};

struct aif_latency_cfg {
	unsigned message_size;
	unsigned repeats;                        /* trials averaged per load (the draft: >= 20) */
	double load;                             /* the loaded case's offered share of the host link */
	double idle_gbps;                        /* the unloaded case's one QP: this rate */
	unsigned priority;                       /* 3: the lossless class (a loaded queue pauses, not drops) */
};

struct aif_burst_cfg {
	unsigned ratios[AIF_MAX_LIST], n_ratios; /* N of the N:1 bursts */
	unsigned max_frames;                     /* the search's upper end, per sender */
	unsigned max_trials;                     /* burst lengths tried per N */
	unsigned repeats;                        /* runs of each length (the draft: 50) */
	unsigned message_size;                   /* one frame each: at most the IB MTU */
	unsigned priority;                       /* 0: a lossy class (the buffer, not PFC, absorbs) */
};

struct aif_ecn_cfg {
	unsigned ratios[AIF_MAX_LIST], n_ratios; /* N of the N:1 loads that fill the marking queue */
	bool dcqcn;                              /* the senders' cc: DCQCN (the queue wanders over the
						  * ramp), or none (it sits at PFC's thresholds) */
	unsigned message_size;
	unsigned priority;                       /* 3: the class the switches mark */
	unsigned min_frames;                     /* a depth bin with fewer is shown, not judged */
};

struct aif_pfc_incast_cfg {
	unsigned ratios[AIF_MAX_LIST], n_ratios; /* N of the N:1 incasts */
	unsigned message_size;
	unsigned priority;                       /* 3: the lossless class */
};

struct aif_convergence_cfg {
	unsigned flows[AIF_MAX_LIST], n_flows;   /* M: M flows run, M more join (2M senders) */
	double join_s;                           /* when the M more start */
	double settle_s;                         /* how long the trial runs after that */
	double window_ms;                        /* each flow's rate: its DCQCN rate averaged over windows */
	double tolerance;                        /* "within 10 % of the fair share": 0.1 */
	double hold_ms;                          /* ... and staying there this long */
	unsigned runs;                           /* engine trials per case, their times averaged */
	unsigned message_size;
	unsigned priority;                       /* 3: the lossless class, where the switches mark ECN */
	const config_setting_t *dcqcn[AIF_MAX_LIST]; /* the parameter sets swept (groups of the suite file;
						  * n_dcqcn 0: the NVIDIA defaults alone) */
	unsigned n_dcqcn;
	bool ccsim;                              /* the same scenario in roce-ccsim */
	unsigned ccsim_seeds;                    /* its runs (seeds 1..n), their times averaged */
	double ccsim_tolerance;                  /* the engine's mean within this share of ccsim's */
};

/* §7.4's PFC storm (storm.c): a NIC pausing its switch port for duration_s from start_s. */
struct aif_storm_cfg {
	bool on;
	double start_s, duration_s;
	double tail_s;                           /* the run goes on this long after it */
	double rate_pps;                         /* its XOFF frames a second (0: from the link's rate) */
};

struct aif_deadlock_cfg {
	bool patterns[2]; unsigned n_patterns;   /* each: false all_to_all, true shift */
	unsigned shift;                          /* shift: host i writes to host i + shift */
	double load;                             /* of every host's link */
	double duration_s;                       /* each trial's (0: the suite's); the draft: 300 */
	double deadlock_ms;                      /* the fabric's deadlock detector, unless the suite's sets it */
	unsigned message_size;
	unsigned priority;                       /* 3: the lossless class */
	struct aif_storm_cfg storm;
};

struct aif_lb_cfg {
	unsigned qps[AIF_MAX_LIST], n_qps;       /* ecmp: QPs per pair swept */
	bool bth_aware;                          /* ecmp: each Q again with the BTH destination QP hashed */
	unsigned udp_sport;                      /* ecmp: every QP from this source port (0: entropy) */
	double gaps_us[AIF_MAX_LIST]; unsigned n_gaps; /* flowlet: the gap timers swept */
	unsigned flowlet_qps;                    /* flowlet and spray: QPs per pair (the draft: 4) */
	unsigned message_size;
	char balance_command[256];               /* fabric.external: sets the real switches' balancing
						  * ({mode}, {gap_us}) for §8.2's and §8.3's trials */
};

struct aif_collectives_cfg {
	enum kpi_collective ops[KPI_COLLECTIVES]; unsigned n_ops;
	unsigned message_size;                   /* S: each rank's buffer, bytes */
	unsigned iterations;
	unsigned ranks;                          /* 0: every host */
};

struct aif_jct_cfg {
	double compute_ms[AIF_MAX_LIST]; unsigned n_compute; /* C: the compute step before each iteration */
	unsigned message_sizes[AIF_MAX_LIST], n_sizes;       /* S: the AllReduce's bytes per rank */
	unsigned iterations;
	unsigned ranks[AIF_MAX_LIST], n_ranks;   /* N; none: every host (at most 16) */
};

enum aif_fail_kind { AIF_FAIL_LEAF_UPLINK, AIF_FAIL_SPINE };

struct aif_link_failure_cfg {
	enum aif_fail_kind failures[2]; unsigned n_failures;
	unsigned message_size, iterations;
	unsigned fail_iteration;                 /* the failure in its middle; 0: iterations / 2 */
	unsigned ranks;                          /* 0: every host (at most 16) */
	double convergence_ms;                   /* 0: the fabric's (its default 50) */
};

struct aif_soak_cfg {
	double duration_s, interval_s;           /* the run; each sample's (and each op's turn) */
	unsigned message_size;
	unsigned ranks;                          /* 0: every host (at most 16) */
	double leak_mb_per_h;                    /* the draft's 1 */
	double tolerance;                        /* busBW below (1 - tolerance) x the op's median: an anomaly */
};

struct aif_interference_cfg {
	double overlaps[AIF_MAX_LIST]; unsigned n_overlaps; /* of job B's spine hops on job A's links, 0..1 */
	unsigned message_size;                   /* S: each job's AllReduce, bytes per rank */
	unsigned iterations;
	unsigned ranks;                          /* per job; 0: as many as the placement gives, at most 8 */
};

/* Across hosts (ai_fabric.cluster): the categories that can run as a roce-cluster job (§9
 * collectives, §10.1 JCT) over the ranks a launcher starts (docs/cluster.md), instead of on the
 * virtual fabric; one job runs them all. */
struct aif_cluster_cfg {
	char file[PATH_MAX];                     /* roce-cluster's file: its cluster, lab or ports groups
						  * ("": none); its tests and sla give way to the suite's */
	char launcher[512];                      /* the command that starts the ranks; {ranks} stands for ranks */
	unsigned ranks;
	unsigned qps_per_pair;                   /* each ring edge's QPs (a rank's chunk split over them) */
	bool across[AIF_CATEGORIES];             /* cluster.categories: collectives, jct */
	double link_gbps;                        /* the ranks' slowest link (the file's lab or ports) */
	double step_timeout_s;                   /* the file's cluster.step_timeout_s */
	bool lab;                                /* the file's local lab: every rank on this machine */
};

/* The user's thresholds (the draft sets none); NAN: not set. Each set one is a verdict. */
struct aif_thresholds {
	double min_throughput_efficiency;        /* zero-loss throughput / what the fabric's plan allows */
	double max_latency_p99_us;               /* at zero load */
	double max_latency_factor;               /* loaded p99 / unloaded p99 */
	double min_busbw_gbps;                   /* every collective's mean busBW */
	double min_busbw_efficiency;             /* busBW / host link rate */
	double max_mmr;                          /* ECMP groups' byte MMR, every balancing */
	double min_jfi;                          /* the flows' JFI, every balancing */
	double max_drop_ppm;                     /* frames lost, every trial */
	double max_deadlock_ms;                  /* §7.4: the longest PFC deadlock */
	double max_storm_paused_ms;              /* §7.4: the sender paused by a PFC storm */
	double max_jct_ratio;                    /* §10.1: JCT / roofline */
	double max_interference_factor;          /* §10.3: JCT with the other job / alone */
	double max_failure_extra_ms;             /* §11.2: the failure iteration over the steady median */
};

struct aif_cfg {
	bool run[AIF_CATEGORIES];
	bool fabric;                             /* the suite file has a fabric (needed unless every
						  * category run goes across a cluster's hosts) */
	bool external;                           /* fabric.external: its switch tier a real one */
	unsigned repeats;                        /* runs of each primary KPI's trial for its CV */
	char results[PATH_MAX];                  /* the results folder ("" : results/<suite name>) */
	unsigned memory_mb;                      /* each trial's eal.memory_mb (0: 2048) */
	struct aif_throughput_cfg throughput;
	struct aif_latency_cfg latency;
	struct aif_burst_cfg burst;
	struct aif_ecn_cfg ecn;
	struct aif_pfc_incast_cfg pfc_incast;
	struct aif_convergence_cfg conv;
	struct aif_deadlock_cfg deadlock;
	struct aif_lb_cfg lb;
	struct aif_collectives_cfg coll;
	struct aif_jct_cfg jct;
	struct aif_interference_cfg interference;
	struct aif_link_failure_cfg link_failure;
	struct aif_soak_cfg soak;
	struct aif_cluster_cfg cluster;
	struct aif_thresholds th;
};

/* ai_fabric.balance_command with {mode} ("flowlet", "spray", "restore") and {gap_us} (the
 * flowlet gap, 0 otherwise) filled in: 0, or -1 when it does not fit in len. */
int aif_balance_command(const char *template, const char *mode, double gap_us, char *out, size_t len);

struct suite_cfg;
struct loader;

/* The `ai_fabric` group g (NULL: every default) and the top-level `thresholds` and `dut` groups
 * (root) into c; the fabric group must be there (checked with the fabric's own parser). 0, or -1
 * with the error written to r. */
int aif_config_load(struct config_reader *r, const config_setting_t *root, const config_setting_t *g,
		    const char *suite_name, struct aif_cfg *c);

/* roce-engine --check on a trial of the suite's fabric (an all-to-all over every host, with the
 * most QPs per pair any category asks for): the
 * engine's own limits (its ports, a lab switch's 16 ports, memory) judged before any trial, so
 * that a suite --check accepts is one whose trials start. 0, or -1 with "FILE:LINE: fabric: what
 * the engine says" in err. */
int aif_engine_accepts(const char *engine, const struct suite_cfg *s, char *err, size_t errlen);

struct runner;

/* The suite (suite.h's entry point for type ai_fabric): the categories, and the suite report's
 * `ai_fabric` object. */
int suite_ai_fabric(struct runner *rn, const struct suite_cfg *s, json_t *out);

/* The results folder `dir` (made when missing): report.json (the whole suite report rep),
 * report.md (the seven sections) and the graphs (scripts/plot-ai-fabric.py). 0, or -1 said on
 * stderr. */
int aif_results_write(const char *dir, const json_t *rep);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What the AI-fabric suite's categories share (aif_lab.c, aif.c): the run's context, trial
 * configs on the suite's fabric, roce-fabric's fluid plan of a trial (the expectation a run is
 * held to), and what a trial's report says of its flows and of the fabric.
 *
 * A trial config is the suite file's `fabric` and `switch` groups copied as written, the engine's
 * lcores, and a `traffic` list of patterns over the fabric's NICs (docs/fabric.md): the form
 * roce-fabric plans too, so each trial's figures stand beside the plan of the same file.
 */
#ifndef ROCE_SUITE_AIF_CTX_H
#define ROCE_SUITE_AIF_CTX_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <libconfig.h>

#include "aif.h"
#include "fabric.h"
#include "metrics.h"
#include "suite.h"
#include "trial.h"

/* Across hosts: the one roce-cluster job (below). */
struct aif_cluster_job {
	bool tried, ran;
	json_t *report;                 /* rank 0's cluster-report.json */
	json_t *summary;                /* the report's description of the job (file, ranks, status) */
	int status;                     /* roce-cluster's exit status (the report's) */
	unsigned n_ranks, n_missing;
	char dir[PATH_MAX];             /* RESULTS/cluster, absolute: the report's report_file paths are in it */
	char error[768];
};

struct aif_ctx {
	struct runner *rn;
	const struct suite_cfg *s;
	const struct aif_cfg *c;
	struct fab_spec spec;           /* the suite's fabric, read with the engine's own parser */
	struct fabric fab;
	struct fab_routes routes;
	char planner[PATH_MAX];         /* roce-fabric, next to the engine */
	double host_gbps;               /* the slowest NIC link */
	json_t *results;                /* §5: per category */
	json_t *anomalies;              /* §6 */
	json_t *repeatability;          /* §7: per primary KPI */
	json_t *thresholds;             /* the user's thresholds, judged */
	json_t *graphs;                 /* what scripts/plot-ai-fabric.py draws */
	struct aif_cluster_job job;     /* across hosts (ai_fabric.cluster): run by the first category */
};

/* ---- trial configs -------------------------------------------------------------------------------- */

struct aif_trial {
	config_t cfg;
	config_setting_t *fabric, *traffic, *collectives;
	unsigned n_traffic;
};

/* The flows of a traffic entry: RDMA WRITEs of message_size. */
struct aif_flow {
	const char *transport;          /* "uc" (NULL) or "rc" */
	unsigned message_size;
	unsigned priority;              /* DSCP 8 x priority + 2 (the switches trust DSCP) */
	double rate_gbps;               /* each QP's (frame bytes, as rate_gbps); 0: its link's */
	const char *cc;                 /* "dcqcn", or NULL */
	bool latency;                   /* one-way latency: every packet carries a probe */
	unsigned stop_messages;         /* each QP stops after this many; 0: at the run's end */
	unsigned udp_sport;             /* every QP of the entry from this UDP source port; 0: from its
					 * QPN pair, as the engine and IB verbs derive it (entropy) */
	double start_s;                 /* the QPs start this long after the traffic (flows that join) */
	const config_setting_t *dcqcn;  /* with cc "dcqcn": its parameter group, copied; NULL: defaults */
};

void aif_trial_init(struct aif_trial *t, const struct aif_ctx *x);
void aif_trial_free(struct aif_trial *t);
/* Every switch's load balancing: "ecmp", "flowlet", "spray"; gap_us > 0 sets the flowlet gap;
 * bth_aware adds the BTH destination QP to the hash's fields. */
void aif_trial_balance(struct aif_trial *t, const char *mode, double gap_us, bool bth_aware);
/* A traffic entry `name` of `pattern` ("pairs": pairs[] of NIC indexes; "all_to_all", "ring":
 * the NICs hosts[], n of them; "incast": hosts[] to dst). The entry's QPs: qps_per_pair per pair. */
void aif_trial_pairs(struct aif_trial *t, const struct aif_ctx *x, const char *name, const unsigned (*pairs)[2],
		     unsigned n, unsigned qps_per_pair, const struct aif_flow *f);
void aif_trial_pattern(struct aif_trial *t, const struct aif_ctx *x, const char *name, const char *pattern,
		       const unsigned *hosts, unsigned n, int dst, unsigned qps_per_pair, const struct aif_flow *f);

#define AIF_MAX_HOSTS 64

/* A traffic entry `name`: an N:1 incast (one QP per sender) into the fabric's last host, which it
 * returns. The senders: one host of each leaf in turn, round after round; the other leaves' first
 * (the incast crosses the spines), or the destination's own leaf's first (own_leaf_first: a burst
 * meets one switch's buffer). */
unsigned aif_trial_incast(struct aif_trial *t, const struct aif_ctx *x, const char *name, unsigned n,
			  bool own_leaf_first, const struct aif_flow *f);
/* Those senders of an N:1 incast into host dst, n of them (at most AIF_MAX_HOSTS) into out: how many. */
unsigned aif_incast_senders(const struct aif_ctx *x, unsigned dst, unsigned n, bool own_leaf_first, unsigned *out);

/* The NICs of the fabric split in two halves whose paths cross the spines: pair i is NIC i of
 * the first leaves' half and NIC i of the other (hosts numbered leaf by leaf). How many pairs. */
unsigned aif_cross_pairs(const struct aif_ctx *x, unsigned (*pairs)[2], unsigned max);

/* The frame bytes (with FCS) of a WRITE's packets of message_size at the fabric NICs' MTU, and
 * the Gb/s in the engine's rate unit that a link of gbps carries of them. */
unsigned aif_frame_bytes(unsigned message_size);
double aif_link_frame_gbps(double gbps, unsigned message_size);
/* What a link of `gbps` carries of payload in messages of that size (headers, FCS, preamble, gap: the rest). */
double aif_link_payload_gbps(double gbps, unsigned message_size);

/* ---- the plan: roce-fabric on a trial config --------------------------------------------------------- */

struct aif_plan {
	bool ok;
	double min_flow_gbps;           /* the max-min fair rate of the slowest flow (link Gb/s) */
	double aggregate_gbps;          /* every flow's max-min rate summed */
	double worst_flows_per_gbps;    /* the highest flows / capacity of any directed link */
	json_t *report;                 /* roce-fabric's JSON report */
	char error[256];
};

/* The program `name` beside roce-engine (the build tree's apps/, an install's bin/) into out: 0,
 * or -1 (errno set) when it cannot be run. */
int aif_tool_path(const struct aif_ctx *x, const char *name, char *out, size_t len);
/* prog (a program beside the engine, e.g. roce-ccsim) with up to four arguments (NULL ends them),
 * its output into the file log; its exit status, or -1. */
int aif_run_tool(const char *prog, const char *log, const char *a1, const char *a2, const char *a3, const char *a4);

/* Writes the trial config beside the trials and runs roce-fabric -q -r on it. */
int aif_plan(const struct aif_ctx *x, struct aif_trial *t, const char *tag, struct aif_plan *p);
void aif_plan_free(struct aif_plan *p);

/* ---- what a trial's report says ------------------------------------------------------------------------ */

/* The fabric's view of a trial: drops, pauses, marks, out-of-order frames, the JFI of its flows,
 * and the machine's share (fabric.machine). */
struct aif_fabric_view {
	bool external;                  /* fabric.external: the end hosts' view (the groups' MMR unknown;
					 * ecn_marked, pfc_xoff as the NICs received them) */
	bool switch_drops;              /* dropped is known: the virtual fabric's, or on a real tier its
					 * counters_command's (fabric.links) */
	uint64_t dropped;               /* every link's receiving switch port, every reason */
	uint64_t ecn_marked, pfc_xoff;  /* every link */
	uint64_t out_of_order, retransmits;
	double jfi;                     /* fabric.jfi */
	double worst_mmr;               /* the ECMP groups' byte MMR, the worst */
	double worst_mmr_flows;
	bool machine_limited;           /* fabric.machine's, or a NIC ran out of mbufs (limited_by
					 * "nic_mbufs": its frames waiting in the switches held them all) */
	uint64_t mbuf_alloc_failures;   /* every port's */
	double cpu_lost_share;          /* fabric.machine.worst_cpu_lost_share */
	const char *limited_by;
};

void aif_fabric_read(const json_t *rep, struct aif_fabric_view *v);
/* The bytes a report's fabric.links (`links`: the virtual fabric's, or a real tier's from its
 * counters_command) gave link `name` in one direction (b_to_a: from its b end); 0 when absent. */
double aif_counted_bytes(const json_t *links, const char *name, bool b_to_a);
/* Why a trial of this suite is machine-limited, for its message: the lab's lcore behind its links,
 * or on a real switch tier (fabric.external) the NICs' lcore held up off its CPU. */
const char *aif_machine_reason(const struct aif_ctx *x);
/* The view's fields in a result row. */
void aif_fabric_to_json(const struct aif_fabric_view *v, json_t *row);

/* A flow set of every group of traffic entry `name` ("name-*"). */
struct flow_set aif_entry_flows(const char *name);

/* ---- the suite's records ----------------------------------------------------------------------------------- */

/* An anomaly of §6: what was seen, where (printf). */
void aif_anomaly(struct aif_ctx *x, enum aif_category cat, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A primary KPI's values over repeated trials into §7: mean, CV, flagged above 5 %. */
void aif_repeatability(struct aif_ctx *x, enum aif_category cat, const char *kpi, const char *unit, const double *v,
		       unsigned n);
/* A user threshold (set: not NAN): a verdict, and a row of the thresholds table. */
void aif_threshold(struct aif_ctx *x, enum aif_category cat, const char *kpi, double value, double limit, bool at_most,
		   const char *what);
/* A graph for the plot script: kind "lines" or "bars", its title and axes; the series are added
 * with aif_series (a point whose x or y is not finite, NAN for "none", is left out). */
json_t *aif_graph(struct aif_ctx *x, const char *file, const char *kind, const char *title, const char *xlabel,
		  const char *ylabel);
void aif_series(json_t *graph, const char *label, const double *xs, const double *ys, unsigned n);

/* ---- a collective as a trial (collectives.c: §9, and §10.1's iterations after compute steps) ---- */

#define AIF_MAX_ITER 1000

/* Links taken down together during a collective (§11.2), and what the run's fabric.events said. */
#define AIF_MAX_FAIL_LINKS 8    /* the engine's fabric.events per run */
struct aif_link_failure {
	unsigned links[AIF_MAX_FAIL_LINKS], n_links;
	char what[64];                  /* "leaf0-spine1", "spine0": the trial's label */
	double at_s;                    /* from the traffic's start */
	double convergence_ms;          /* the routes follow this long after (0: the fabric's setting) */
	/* out */
	bool applied;
	double applied_s, converged_s;  /* the first event's; the last convergence */
	double loss_duration_s;         /* from applied_s to the last frame lost */
	uint64_t frames_lost;           /* to dead links and missing routes */
	unsigned flows_hit;             /* flow groups that lost frames, ACKs or CNPs */
	int command_status;             /* fabric.external: the worst exit status of the link commands
					 * (-1: one did not run); frames_lost, flows_hit and the
					 * convergence are then the switches' own (unknown) */
	double command_s;               /* fabric.external: the longest link command's run, the links
					 * down by its end (NAN: one had not ended) */
};

/* fabric.external: every link of f brought back up through external.link_command, after its
 * trial (the engine's run ends before an up event could). 0, or -1 after an anomaly. */
int aif_external_links_up(struct aif_ctx *x, const struct aif_link_failure *f);

struct aif_coll_run {
	bool ran;
	unsigned iterations;            /* completed */
	double iter_s[AIF_MAX_ITER];    /* each: from the previous one's end (the first: the traffic's
					 * start) to its last phase's end, a compute step included */
	double total_s;
	double drop_ppm, util_mean;     /* frames dropped per million sent; the uplinks' mean utilisation */
	int busiest_uplink;             /* the leaf-tier link that carried the most bytes (-1: none) */
	const char *busiest_from;       /* who counted them: the fabric, the tier's counters or the plan */
	struct aif_fabric_view v;
};

/* A collective group in the trial's `collectives` list (made when absent): its name, type and
 * phases, and its empty `flows` array in *flows for the caller's flow names. */
config_setting_t *aif_collective_group(struct aif_trial *t, const char *name, const char *type, unsigned phases,
				       config_setting_t **flows);
/* Each iteration's time from a report's collective, from the previous one's end (the first: the
 * traffic's start, a compute step included) to its last phase's end, at most AIF_MAX_ITER; how
 * many, and the last one's end in *total_s. */
unsigned aif_iteration_times(const json_t *coll, unsigned phases, double *iter_s, double *total_s);
/* The collective op (its name kpi_collective_names[op]) over the flows of traffic entry `entry`
 * of the ring or all_to_all pattern over the fabric's first n hosts: "ENTRY-hA-hB" for each pair. */
config_setting_t *aif_add_collective(struct aif_trial *t, const struct aif_ctx *x, const char *entry,
				     enum kpi_collective op, unsigned n, unsigned phases);
/* op of `bytes` per rank over the fabric's first n hosts, `iterations` times, each iteration
 * compute_us after the previous one's end (0: none): the engine's collective over RC WRITEs on the
 * lossless class; with fail (NULL: none) its links go down at its at_s and its out fields are
 * filled. 0, or -1 when the trial did not run. */
int aif_collective_trial(struct aif_ctx *x, enum kpi_collective op, unsigned n, unsigned bytes, unsigned iterations,
			 double compute_us, struct aif_link_failure *fail, struct aif_coll_run *r);

/* ---- across hosts: one roce-cluster job (cluster.c) ---------------------------------------------------------- */

/* What the report says of one collective test's step beyond its iteration times. */
struct aif_cluster_step {
	unsigned ranks_reporting;       /* ranks whose phase ends came */
	double busbw_mean_gbps;         /* roce-cluster's own mean */
	double held_up_ms;              /* the most any rank's worker lcore was held up (off its CPU) */
	double step_s;                  /* the longest rank's run of the step */
	bool machine_limited;           /* held up over 1 % of the step: the ranks' CPUs, not the links,
					 * set the pace */
	uint64_t stray_bytes;           /* payload from ranks that were not the step's senders */
	unsigned errors;                /* ranks whose step failed */
	/* from the ranks' own engine reports (gathered by rank 0) */
	uint64_t tx_packets, retransmits; /* RC packets sent, and those sent again (NAK or timeout) */
	uint64_t pause_rx;              /* PFC XOFF frames the ranks' ports received */
	unsigned reports_read;
};

/* The job of every category that goes across, run by the first that asks: its file derived into
 * RESULTS/cluster/job.cfg, the launcher run (its output in job.log) until a deadline, rank 0's
 * report read. A job that did not run (refused, a rank that could not start, no report) is said
 * once, counted as a trial that could not run, and has ran false. */
const struct aif_cluster_job *aif_cluster_job(struct aif_ctx *x);
void aif_cluster_job_free(struct aif_cluster_job *j);
/* The job's test name of §10.1's point (S, C). */
void aif_cluster_jct_name(unsigned bytes, double compute_ms, char *out, size_t len);
/* Test `test`'s iteration times (s) as the job measured them, into iter_s (the first from the
 * earliest start, each later one from the previous one's end, compute steps included); how many
 * completed, their sum in *total_s, the step's other figures in *s. */
unsigned aif_cluster_iterations(const struct aif_cluster_job *j, const char *test, double *iter_s, double *total_s,
				struct aif_cluster_step *s);

/* A row of a test the job ran: where, ranks_reporting, held_up_ms_max, and the verdict
 * cluster_ranks_report (every one of the n ranks' phase ends came, no step failed, no rank went
 * missing), said of `what`. */
void aif_cluster_step_row(struct aif_ctx *x, const struct aif_cluster_job *j, const struct aif_cluster_step *s,
			  unsigned n, const char *what, json_t *row);
/* The row marked machine-limited by the ranks' held-up lcores: `figure` ("its busBW") is partly the CPUs'. */
void aif_cluster_machine_limit(struct aif_ctx *x, const struct aif_cluster_step *s, const char *what, const char *figure,
			       json_t *row);

/* mkdir -p; 0, or -1 with errno. */
int aif_mkdir_p(const char *dir);

/* ---- the categories ---------------------------------------------------------------------------------------------- */

int aif_throughput(struct aif_ctx *x);
int aif_latency(struct aif_ctx *x);
int aif_burst(struct aif_ctx *x);
int aif_ecn(struct aif_ctx *x);
int aif_pfc_incast(struct aif_ctx *x);
int aif_convergence(struct aif_ctx *x);
int aif_deadlock(struct aif_ctx *x);
/* §7.4's PFC storm trial (storm.c): its result. */
json_t *aif_storm(struct aif_ctx *x);
/* The PFC watchdog's detection time from the suite's switch group (the leaf tier's over it), or -1. */
double aif_watchdog_detect_s(const struct aif_ctx *x);
int aif_ecmp(struct aif_ctx *x);
int aif_flowlet(struct aif_ctx *x);
int aif_spray(struct aif_ctx *x);
int aif_collectives(struct aif_ctx *x);
int aif_jct(struct aif_ctx *x);
int aif_interference(struct aif_ctx *x);
int aif_link_failure(struct aif_ctx *x);
int aif_soak(struct aif_ctx *x);

/* The suite report's `ai_fabric` object: the methodology's seven sections, the thresholds judged
 * and the graphs to draw (report.c). */
json_t *aif_sections(struct aif_ctx *x);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What a trial measured, read from the engine's JSON report (docs/report.md) for a set of flow
 * groups: frames sent (the senders' flows[].tx_packets), received (the same flows' rx_packets,
 * counted by the local receiver), still queued in the lab switch when the run stopped
 * (switch.flows[].queued_at_end of the flows' destination QPNs) and lost = sent - received -
 * queued, so that frames still on their way are never counted as lost. Also goodput, one-way
 * latency, ECN marks, PFC and the switch's drops.
 */
#ifndef ROCE_SUITE_METRICS_H
#define ROCE_SUITE_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#define FLOW_SET_MAX 32

/* Flow groups by name (a name ending in '*': every group whose name starts with the rest);
 * n == 0: every flow of the report. */
struct flow_set {
	const char *names[FLOW_SET_MAX];
	unsigned n;
};

struct lat_summary {
	bool valid;
	uint64_t count;
	double min, mean, p50, p90, p99, p99_9, max; /* ns */
};

struct metrics {
	unsigned qps;                 /* QPs of the selected groups found in the report */
	uint64_t sent, received, queued, lost;
	double loss_pct;              /* lost / sent */
	uint64_t tx_bytes, rx_bytes;
	double duration_s;
	double sent_gbps;             /* frames + FCS sent per second: the engine's pacing unit */
	double goodput_gbps;          /* the flows' goodput_gbps summed (payload received) */
	struct lat_summary lat;       /* one-way, merged over the QPs (percentiles: the worst QP's) */
	uint64_t retransmits;         /* RC packets sent again */
	uint64_t ecn_ce;              /* CE-marked frames the selected flows' receivers saw */
	uint64_t sw_ecn_marked;       /* the switch's ECN marks, every port and class */
	uint64_t sw_xoff;             /* PFC XOFF frames the switch sent, every port and priority */
	uint64_t sw_dropped;          /* the switch's drops: buffer full, queue limit, headroom */
	uint64_t sw_max_queue;        /* the deepest any egress queue (port, class) of the switch was, bytes */
	double paused_ms[8];          /* per priority, the longest any sending port of the set was paused */
	double held_up_ms;            /* the longest any worker lcore was held up (off its CPU; report lcores[]) */
};

bool flow_set_has(const struct flow_set *fs, const char *group);
/* 0, or -1 when the report has no flow of the set. */
int metrics_read(const json_t *rep, const struct flow_set *fs, struct metrics *m);
/* The per-trial fields of the suite report: sent, received, lost, loss %, latency, ... */
void metrics_to_json(const struct metrics *m, json_t *record);
/* What the set's receivers got per second, as Gb/s of `frame`-byte frames with their FCS (the
 * engine's pacing unit, the unit of rate_gbps): received x frame x 8 / duration_s. */
double metrics_received_gbps(const struct metrics *m, unsigned frame);

/* Numbers of a report object, integer or real (0 when absent). */
double jnum(const json_t *o, const char *key);
uint64_t ju64(const json_t *o, const char *key);
/* The numbers of array member `key` of o summed (0 when absent). */
double jsum(const json_t *o, const char *key);
/* A summary {count, min, mean, p50, ...} of the engine's report. */
struct lat_summary lat_from_json(const json_t *o);
json_t *lat_to_json(const struct lat_summary *l);

/* Jain's fairness index (sum x)^2 / (n sum x^2): 1 when equal, 1/n when one has everything. */
double jain_index(const double *x, unsigned n);
/* The p-th percentile (0..100) of n values (sorted here), nearest rank (latency/percentile.h). */
double percentile(double *x, unsigned n, double p);

#endif

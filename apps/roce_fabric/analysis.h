/* SPDX-License-Identifier: BSD-3-Clause
 *
 * roce-fabric's analysis of a traffic matrix on a fabric (docs/fabric.md#roce-fabric): the flows
 * the `traffic` list makes (its patterns, QPs per pair, the QPNs and UDP source ports the engine
 * gives them), each flow's links through the routes and every switch's load balancing, the
 * max-min fair rates of all flows together (fabric/fab_fluid.h), and from them each link's load
 * and each ECMP group's balance. The same flows with every switch spraying give the reference:
 * what the fabric carries when no two flows collide.
 */
#ifndef ROCE_FABRIC_ANALYSIS_H
#define ROCE_FABRIC_ANALYSIS_H

#include <stdint.h>

#include "fab_fluid.h"
#include "fabric.h"

#define AN_MAX_FLOWS (1u << 18)
#define AN_MAX_TRAFFIC 64

struct an_traffic {
	char name[FAB_NAME_LEN];
	struct fab_pattern pattern;
	unsigned qps_per_pair;
	uint32_t qpn, dest_qpn;      /* of its first flow; each next flow + 1 */
	bool sport_entropy;          /* UDP source port from the QPN pair, as the engine's default */
	uint16_t sport, sport_step;  /* not entropy: flow i's port is sport + i * sport_step */
	double gbps;                 /* each flow's demand; 0: as much as the fabric gives */
	unsigned first_flow, n_flows, n_pairs;
	unsigned line;
};

struct an_flow {
	unsigned traffic, src, dst;  /* NICs */
	struct fab_flow_key key;
	double gbps, spread_gbps;    /* max-min rate as balanced, and with every switch spraying */
	uint32_t first_hop, n_hops;  /* into hops[] (as balanced) */
};

/* A distinct set of next-hop ports of one switch (its uplinks, usually). */
struct an_group {
	unsigned sw, n;
	uint16_t ports[64];
	double flows[64], gbps[64];
	double mmr_flows, mmr_gbps, jfi_gbps, mmr_random;
};

struct analysis {
	const struct fabric *f;
	const struct fab_routes *r;
	struct an_traffic traffic[AN_MAX_TRAFFIC];
	unsigned n_traffic;
	struct an_flow *flows;
	unsigned n_flows;
	struct fab_hop *hops;
	uint32_t *first;             /* [n_flows + 1] */
	double *dl_flows, *dl_gbps;  /* per directed link: flows (their shares) and Gb/s */
	struct an_group *groups;
	unsigned n_groups;
	double aggregate_gbps, spread_aggregate_gbps;
};

/* The flows of every traffic entry (a->traffic filled by the caller), their paths and rates.
 * 0, or -1 with err. */
int analysis_run(struct analysis *a, char *err, size_t errlen);
void analysis_free(struct analysis *a);

/* Rate statistics of the flows of traffic entry t (-1: all): min, median, mean, max, sum, JFI. */
struct an_stats {
	double min, p50, mean, max, sum, jfi;
};
struct an_stats analysis_stats(const struct analysis *a, int t, bool spread);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The fabric's fluid view, before any frame is sent: the links each flow crosses (the route and
 * each switch's load balancing applied to the flow's fields), and the max-min fair rates of all
 * flows at once over the links' capacities (progressive filling: every flow's rate grows
 * together until a link is full; the flows on it keep that rate; the others go on). What ECMP
 * collisions cost a traffic matrix, and what a topology can carry, is read off it
 * (roce-fabric); runs of the engine's lab and of roce-ccsim can only do worse. Plain C.
 *
 * Links have a direction here: dlink 2 * l is link l from its switch end (fab_link.sw) to its
 * other end, 2 * l + 1 the way back.
 */
#ifndef ROCE_FAB_FLUID_H
#define ROCE_FAB_FLUID_H

#include "fabric.h"

struct fab_hop {
	uint32_t dlink;
	double share;                /* of the flow's rate on it: 1 on an ECMP path, 1/n where n split it */
};

struct fab_tracer {
	const struct fabric *f;
	const struct fab_routes *r;
	double *mass, *next_mass;    /* [switch]: the flow's share at each switch of this hop count */
	unsigned *frontier, *next_frontier;
};

/* Switch s's local port p as a directed link, leaving s. */
uint32_t fab_dlink_out(const struct fabric *f, unsigned s, unsigned p);

int fab_tracer_init(struct fab_tracer *t, const struct fabric *f, const struct fab_routes *r);
void fab_tracer_free(struct fab_tracer *t);

/* The directed links a flow from NIC src to NIC dst crosses, with its share of each: a switch
 * balancing by ECMP sends all of it one way (fab_hash over k, fab_member), one that sprays or
 * switches flowlets splits it evenly over its next hops (the fluid limit of both). Returns how
 * many hops were written to out (at most max), or -1 when no route joins them. */
int fab_flow_links(struct fab_tracer *t, unsigned src, unsigned dst, const struct fab_flow_key *k, struct fab_hop *out,
		   unsigned max);

/* Max-min fair rates: flow i crosses hops[first[i] .. first[i + 1] - 1]; cap[d] is directed link
 * d's capacity (Gb/s); demand[i] caps flow i (NULL: none). rate[i] out. 0, or -1 out of memory. */
int fab_maxmin(unsigned n_dlinks, const double *cap, unsigned n_flows, const uint32_t *first, const struct fab_hop *hops,
	       const double *demand, double *rate);

/* Jain's fairness index (sum x)^2 / (n sum x^2), 1/n .. 1 (1 for n = 0 or all zero) and the
 * max / mean ratio (MMR, 1 at best; 0 for a zero mean). */
double fab_jfi(const double *x, unsigned n);
double fab_mmr(const double *x, unsigned n);

#endif

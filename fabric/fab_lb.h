/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A switch's choice among equal-cost next hops, frame by frame (fabric.h gives the ports):
 *   ecmp     the flow's hash picks one port, the same for all its frames (fab_member);
 *   flowlet  a flow keeps its port while its frames come closer than the gap; after a pause of
 *            at least the gap (a new flowlet, which cannot overtake the last one's frames if the
 *            gap exceeds the paths' delay difference) it goes to the least loaded port;
 *   spray    every frame to a port drawn at random: the load spreads evenly and frames of a flow
 *            arrive out of order.
 * Plain C, per switch state sized at start-up, no allocation per frame; the caller passes the
 * time and each port's queued bytes (the engine's lab switch, roce-ccsim).
 */
#ifndef ROCE_FAB_LB_H
#define ROCE_FAB_LB_H

#include <stdint.h>

#include "fabric.h"

#define FAB_FLOWLET_SLOTS 4096 /* flowlet table entries per switch, indexed by the flow hash */

struct fab_flowlet {
	uint64_t last_ns;            /* the flow's last frame */
	uint16_t port;               /* the port its flowlet took */
	uint16_t used;
};

struct fab_lb_state {
	uint64_t rng;                /* spray's draws (xorshift64), seeded per switch */
	struct fab_flowlet flowlet[FAB_FLOWLET_SLOTS];
	uint64_t flowlets;           /* new flowlets started */
};

void fab_lb_init(struct fab_lb_state *st, uint64_t seed);

/* The port (one of ports[0..n-1], n >= 1) for a frame of a flow with this hash at now_ns;
 * port_bytes[p]: the bytes queued on local port p (flowlet's load). */
uint16_t fab_lb_pick(struct fab_lb_state *st, const struct fab_lb_opts *o, uint32_t hash, const uint16_t *ports,
		     unsigned n, uint64_t now_ns, const uint64_t *port_bytes);

#endif

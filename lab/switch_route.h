/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The L3 forwarding of a fabric switch (docs/fabric.md, "The engine runs it"), as a data-centre
 * leaf or spine routes: the destination IPv4 address's longest-prefix route (DPDK's rte_lpm, filled
 * from the routes config/config_lab_fabric.c computed) gives a group of equal-cost ports; ECMP,
 * flowlet or spray (fabric/fab_lb.h, the same code roce-fabric and roce-ccsim run) picks one; the
 * frame is rewritten for the hop: destination MAC the next hop's, source MAC the egress port's,
 * TTL one less with the IPv4 checksum updated incrementally (RFC 1624: a frame that came with a
 * wrong checksum keeps a wrong one), DSCP and ECN kept. The ICRC leaves MACs, TTL and checksum out,
 * so it stays valid.
 *
 * Per switch, sized at start-up; one call per frame on the switch's lcore: no allocation, no lock.
 */
#ifndef ROCE_LAB_SWITCH_ROUTE_H
#define ROCE_LAB_SWITCH_ROUTE_H

#include <stdint.h>

#include "config.h"
#include "fab_lb.h"

struct rte_lpm;
struct wire_pkt;

/* Why a frame was not routed */
enum sw_route_verdict { SW_ROUTED, SW_NOT_IPV4, SW_NO_ROUTE, SW_TTL_EXPIRED };

/* Bytes and frames each member of a route's group carried: the ECMP balance. */
struct sw_route_load {
	uint64_t frames[CFG_FAB_MAX_SW_PORTS], bytes[CFG_FAB_MAX_SW_PORTS];
};

struct sw_route {
	struct rte_lpm *lpm;          /* destination -> index of group[] */
	unsigned n_groups;
	struct {
		uint16_t n;
		uint16_t ports[CFG_FAB_MAX_SW_PORTS];
	} group[CFG_FAB_MAX_ROUTES];
	struct sw_route_load load[CFG_FAB_MAX_ROUTES];
	struct {
		uint16_t n;
		uint16_t ports[CFG_FAB_MAX_SW_PORTS];
	} after[CFG_FAB_MAX_EVENTS][CFG_FAB_MAX_ROUTES]; /* the groups once converged after event k */
	uint8_t mac[CFG_FAB_MAX_SW_PORTS][6];      /* each port's own */
	uint8_t next_mac[CFG_FAB_MAX_SW_PORTS][6]; /* the next hop's behind each port */
	struct fab_lb_opts lb;
	struct fab_lb_state st;
};

/* The routing of switch c (index: its number in the fabric, for names and seeds), on NUMA socket. */
struct sw_route *sw_route_create(const struct cfg_fab_switch *c, unsigned index, int socket, char *err, size_t errlen);
void sw_route_free(struct sw_route *r);
/* The routes converged after link event k (config.h's cfg_fab_switch.after[k]). */
void sw_route_converge(struct sw_route *r, unsigned k);

/* The egress port of frame f (len bytes in its first segment, frame_bytes in all; parsed into p),
 * rewritten for the hop; or -1 with *why. port_bytes[k]: bytes queued on port k (flowlet's load). */
int sw_route_frame(struct sw_route *r, uint8_t *f, uint32_t len, uint32_t frame_bytes, const struct wire_pkt *p,
		   uint64_t now_ns, const uint64_t *port_bytes, enum sw_route_verdict *why);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A fabric scenario (`scenario = "fabric"`, docs/ccsim.md#fabric-scenarios): the `fabric` group
 * read by the one parser the engine and roce-fabric use (config/config_fabric.h), every switch's
 * buffer, ECN and PFC (the `switch` group, per tier), the transport's ACKs and timeout, and the
 * `traffic` list: patterns of flows that name hosts, long or sized (fixed, or drawn from a size
 * CDF), at once or arriving as a Poisson process at a load. The flows are drawn from the seed
 * (fab_flows_generate), so that --seed gives another draw of the same scenario.
 */
#ifndef ROCE_CCSIM_FAB_SCENARIO_H
#define ROCE_CCSIM_FAB_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libconfig.h>

#include "config_fabric.h"
#include "fabric.h"
#include "scenario.h"

#define FS_MAX_FLOWS (1u << 20)
#define FS_MAX_TRAFFIC 16
#define FS_MAX_CDF 256
#define FS_MAX_SWITCH_PORTS 64   /* = MMU_MAX_PORTS: what one switch's buffer accounts */
#define FS_MAX_EVENTS 64
#define FS_REORDER_MAX 256      /* fabsim's placed[] bits */
#define FS_MAX_PACKETS 0xFFFFFFFEu /* a flow's packets: PSNs are 32 bits, UINT32_MAX a long flow */

struct loader;

struct fs_cdf_point {
	uint64_t bytes;
	double percent;               /* of flows at or below bytes; ascending, the last 100 */
};

/* One entry of the traffic list. */
struct fs_traffic {
	struct cfab_traffic c;        /* name, pattern, QPs per pair, QPNs, UDP ports, gbps (a rate cap) */
	struct sc_flow proto;         /* cc and its parameters, priority, mtu_bytes, jitter; line_kbps:
				       * the cap (rate_gbps / gbps), 0: the NIC's link */
	uint64_t start_ns, stop_ns;   /* flows start at start_ns; Poisson arrivals until stop_ns */
	uint64_t size_bytes;          /* 0: as the CDF says, or long flows (sending until the end) */
	struct fs_cdf_point *cdf;
	unsigned n_cdf;
	double load;                  /* > 0: Poisson arrivals at this share of each sender's link */
	uint16_t *sports;             /* udp_sports: each flow's UDP source port, in order (NULL: c's rule) */
	unsigned n_sports, sports_line;
	unsigned first_flow, n_flows; /* fab_flows_generate's */
};

/* One flow: a QP from NIC src to NIC dst. */
struct fs_flow {
	uint32_t traffic, src, dst;
	uint32_t qpn, dest_qpn;
	struct fab_flow_key key;      /* what the switches hash */
	uint64_t start_ns;
	uint64_t size_bytes;          /* 0: sends until the end */
};

struct fab_scenario {
	struct fab_spec spec;
	struct fabric f;
	struct fab_routes routes;
	struct sc_switch tier[FAB_TIERS]; /* every switch's settings by its tier ([FAB_TIER_HOST] unused) */
	struct np_params np;
	uint32_t ack_every;           /* the receiver ACKs every this many packets in order, */
	uint64_t ack_ns;              /* or a packet in order this long after its last ACK (0: never) */
	uint64_t rto_ns;              /* the sender goes back to the oldest unacknowledged packet */
	uint32_t reorder_window;      /* packets ahead of the expected PSN a receiver places (0: go-back-N) */
	struct fs_traffic traffic[FS_MAX_TRAFFIC];
	unsigned n_traffic;
	struct fs_flow *flows;
	unsigned n_flows;
	struct cfab_event events[FS_MAX_EVENTS]; /* fabric.events: links down and up (at_s from the run's start) */
	unsigned n_events;
	uint64_t convergence_ns;      /* the routes change this long after each event */
	uint64_t flows_seed;          /* the seed the flows were drawn with */
	unsigned max_mtu;
};

extern const char *const fab_scenario_keys[];

/* The root's fabric settings into ld->sc->fab (allocated). 0, or -1 with the error written. */
int fab_scenario_parse(struct loader *ld, const config_setting_t *root);
/* The flows of every traffic entry, drawn from seed. 0, or -1 with "FILE:LINE: traffic.[i]: ..." */
int fab_flows_generate(struct scenario *sc, uint64_t seed, char *err, size_t errlen);
/* A flow size drawn from the CDF with u in [0, 1) (linear between the points, as HPCC's traffic
 * generator draws), and the CDF's mean. */
uint64_t fs_cdf_draw(const struct fs_cdf_point *cdf, unsigned n, double u);
double fs_cdf_mean(const struct fs_cdf_point *cdf, unsigned n);
void fab_scenario_free(struct fab_scenario *fs);

#endif

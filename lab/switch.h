/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The virtual lab's switch (docs/virtual-lab.md): the ports with role "switch" forward frames
 * between them the way a shared-buffer data-centre switch does, so that closed-loop DCQCN and PFC
 * experiments run with no NIC. One lcore polls every switch port:
 *
 *   RX: MAC control frames (PFC, PAUSE) pause the port's egress; other frames go by destination
 *       MAC (a table filled from the ring peers of the switch ports at start, and learned from
 *       source MACs) to an egress queue per (port, traffic class), the class from the ingress
 *       port's map (qos); the buffer (lab/switch_mmu.h) admits or drops them, and asks for PFC
 *       toward the ingress port for lossless priorities.
 *   TX: each port drains at its `link_speed_gbps` in real time (TSC): a frame leaves when the link
 *       is free and the frame has spent the link's `delay_us` in the switch; classes are served
 *       strictly (highest first), a class paused by PFC waits; at dequeue, ECN-capable frames are
 *       marked CE with RED on the queue left behind (cc/red.h, the simulator's code).
 *
 * Per flow (egress port, destination QPN) the frames admitted, dropped, sent and marked are
 * counted, so that every frame a sender sent is accounted: received, dropped, or still queued.
 * Queue depths go to a CSV (switch.trace) through a DPDK ring the main lcore drains.
 */
#ifndef ROCE_ENGINE_SWITCH_H
#define ROCE_ENGINE_SWITCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "classify.h"
#include "config.h"
#include "pfc.h"
#include "pfc_watchdog.h"
#include "qp_index.h"
#include "red.h"
#include "switch_mmu.h"

#define SW_MAX_PORTS 16             /* <= MMU_MAX_PORTS */
#define SW_WIRE_OVERHEAD 24         /* preamble 8, FCS 4, inter-frame gap 12: what a frame takes on a link
				     * beyond its bytes */
#define SW_CTL_PENDING 16           /* PFC frames a port holds while its cable is full */
#define SW_LINK_LAG_US 1000         /* how far behind a busy emulated link may fall and still catch up */
#define SW_TCS 8
#define SW_MAX_FLOWS 65536          /* the lab switch's flow table */
#define SW_FABRIC_FLOWS 4096        /* each fabric switch's */
#define SW_FDB 64

struct rte_mbuf;
struct rte_mempool;
struct rte_ring;
struct qos_map;
struct sw_route;

/* A frame in the buffer: a node of its queue's list. */
struct sw_pkt {
	struct rte_mbuf *m;
	uint64_t ready_tsc;          /* arrival + the link's delay: it may leave from then on */
	uint32_t next;               /* next in its queue, or SW_NONE */
	int32_t flow;                /* index in the flow table, -1: not a RoCE frame (or the table was full) */
	uint16_t len;
	uint8_t in, prio;
	uint8_t l3_off;              /* where the IP header is */
	uint8_t ect;                 /* ECN-capable: 4 (IPv4) or 6 (IPv6), else 0 */
};

struct sw_queue {
	uint32_t head, tail, n;
};

struct sw_port_counters {
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes;
	uint64_t drop_buffer, drop_queue, drop_headroom, drop_unknown_dst, drop_no_descriptor;
	uint64_t drop_not_ipv4, drop_no_route, drop_ttl; /* a fabric switch's routing (switch_route.h) */
	uint64_t drop_vlan;          /* tagged frames whose VLAN does not join the ingress and egress ports */
	uint64_t drop_watchdog;      /* frames for an egress queue in a PFC storm (watchdog action drop) */
	uint64_t drop_link_down;     /* frames into or out of a link that is down (fabric.events) */
	uint64_t cpu_lost_tsc;       /* time the link had frames to send but its lcore was held up for
				      * longer than the link may catch up (SW_LINK_LAG_US): the machine's, not
				      * the network's, and lost from its rate */
	uint64_t ecn_marked[SW_TCS];
	uint64_t pfc_xoff_tx[SW_TCS], pfc_xon_tx[SW_TCS], pfc_tx_failed;
	uint64_t pfc_rx[SW_TCS];
};

struct sw_port {
	char name[CFG_NAME_LEN];     /* the config port's, or on a fabric switch its peer's */
	uint16_t cfg_port, port_id, queue;
	struct rte_ring *rx_ring, *tx_ring; /* a fabric switch's cable: rings, not an ethdev port */
	double gbps;
	uint64_t delay_tsc;          /* a frame that came in here may leave this long after */
	uint8_t mac[6];
	uint64_t fp_per_byte;        /* the emulated link: TSC cycles << PACE_SHIFT per byte on the wire */
	uint64_t next_free_fp;       /* the link is busy until then */
	struct sw_queue q[SW_TCS];
	struct pfc_pause pause;      /* PFC received here pauses this port's egress */
	struct pfc_wd wd;            /* its PFC watchdog (pfc_watchdog.h) */
	bool down;                   /* its link is down: what it would send or receive is lost */
	bool carrier_lost;           /* its ethdev reports the link down (switch_port_link) */
	bool carrier_flushed;        /* ... and what was queued to it and from it has gone */
	bool to_nic;                 /* a fabric switch's port to a NIC */
	bool remote_sender;          /* its sender runs on another lcore (a NIC; a switch of another
				      * lcore's part): switch_replay takes nothing in */
	uint64_t xoff_refresh_tsc[SW_TCS]; /* when XOFF toward this port is sent again */
	const struct qos_map *map;
	struct rte_mempool *pool;    /* the port's pool (PFC frames) */
	struct rte_mbuf *pending[64];
	unsigned n_pending, pending_off;
	/* PFC frames the cable had no room for: they go first, ahead of any frame of data, as a MAC
	 * sends its control frames (a lost XOFF lets the sender fill the headroom) */
	struct rte_mbuf *ctl[SW_CTL_PENDING];
	unsigned n_ctl;
	struct sw_port_counters c;
};

/* ECT frames leaving a RED class's queue, by the depth they leave behind (the depth RED judged):
 * bins of 2^ecn_bin_shift bytes from 0, the last one open-ended. How many, how many were marked,
 * the sum of their depths (a bin's mean depth, where the ramp is evaluated): the measured marking
 * curve the AI-fabric suite's §7.1 holds to the configured ramp. */
#define SW_ECN_BINS 32
struct sw_ecn_bin {
	uint64_t frames, marked, depth_sum;
};

struct sw_flow {
	uint16_t out;
	uint32_t dqpn;
	uint64_t admitted, dropped, sent, marked;
	uint64_t dropped_queued; /* of dropped: admitted first (a dead link, the PFC watchdog) */
};

/* A row of the queue-depth trace (switch.trace). */
struct sw_trace_row {
	uint64_t time_ns;
	uint64_t queue_bytes;
	uint64_t buffer_used;
	uint64_t dropped, marked;
	uint16_t port;               /* config port index */
	uint8_t tc;
	uint8_t xoff;                /* priorities in XOFF toward this port */
	uint8_t paused;              /* priorities whose egress here is paused */
	uint8_t pad[3];
};

/* The QPs of the frames lost to link events and missing routes (the fabric notes them per event). */
#define SW_LOST_QPS 64
struct sw_lost {
	uint32_t qpn[SW_LOST_QPS];   /* destination QPNs of RoCE frames lost */
	unsigned n;
	uint64_t more;               /* frames of QPs beyond these */
};

struct switch_rt {
	char name[CFG_NAME_LEN];
	unsigned n_ports;
	struct sw_route *route;      /* a fabric switch routes at L3 (switch_route.h); NULL: the lab's L2 switch */
	struct qos_map dscp_map;     /* a fabric switch's classification of frames from other switches */
	struct sw_lost *lost;        /* where frames lost to a link event or a missing route are noted */
	unsigned rx_first;           /* the ingress port served first this poll (rotates) */
	struct sw_port port[SW_MAX_PORTS];
	int8_t port_of_cfg[64];      /* config port -> index here, -1 */
	struct switch_mmu mmu;
	bool has_red[SW_TCS];
	struct red_params red[SW_TCS];
	struct sw_ecn_bin (*ecn_depth)[SW_TCS][SW_ECN_BINS]; /* per port, with a RED class; else NULL */
	uint8_t ecn_bin_shift[SW_TCS]; /* bins of 2^shift bytes: SW_ECN_BINS of them span 0..2 kmax */
	uint64_t rng;
	uint64_t delay_tsc, refresh_tsc, tsc_hz;
	uint64_t lag_fp;             /* SW_LINK_LAG_US in TSC << PACE_SHIFT */
	uint16_t quanta;
	uint8_t pfc_priorities;
	struct pfc_wd_params wd;     /* the ports' PFC watchdog */
	uint64_t wd_every_tsc, next_wd_tsc;
	unsigned n_fdb;
	struct { uint64_t mac; uint8_t port; } fdb[SW_FDB]; /* mac: its 6 bytes as an integer (one compare) */
	bool vlans;                  /* VLAN segments configured */
	uint64_t vlan_member[SW_MAX_PORTS][64]; /* bit vid: the port belongs to VLAN vid */
	struct sw_pkt *pkts;         /* descriptors: as many as the buffer can hold frames */
	uint32_t n_pkts, free_head;
	struct qp_map *flow_index;   /* (egress port, destination QPN) -> flows[]: a flow's first frame adds it */
	struct qp_cache flow_cache;  /* in front of flow_index */
	struct sw_flow *flows;
	uint32_t flow_cap, n_flows;  /* flow_cap: the flow table's size */
	uint64_t flow_table_full;
	uint8_t tc_used[SW_MAX_PORTS]; /* classes that ever held a frame, per port (the trace's rows) */
	struct rte_ring *trace;      /* sw_trace_row elements, or NULL */
	uint64_t trace_every_tsc, next_trace_tsc, trace_dropped;
	uint64_t dropped_from_queues; /* admitted, then dropped (a dead link, the PFC watchdog) */
};

struct engine_config;
struct port_info;
struct qos_map;
/* What the switch is made from: the config's switch and roles, the ports as brought up (indexed
 * as the config's), their QoS maps and the TSC rate. */
struct switch_env {
	const struct engine_config *cfg;
	const struct port_info *ports;
	const struct qos_map *qos_map;
	uint64_t tsc_hz;
};
/* The switch of the config, on the lcore of its roles; NULL with err on failure. */
struct switch_rt *switch_create(const struct switch_env *env, unsigned lcore, char *err, size_t errlen);
/* Switch `index` of the config's fabric: its port k is cabled by the rings rx[k] (what arrives)
 * and tx[k] (what it sends); its PFC frames come from pool. NULL with err on failure. */
struct switch_rt *switch_create_fabric(const struct switch_env *env, unsigned index, struct rte_ring *const rx[],
				       struct rte_ring *const tx[], struct rte_mempool *pool, unsigned lcore, char *err,
				       size_t errlen);
void switch_free(struct switch_rt *s);
/* The lcore loop: receive, forward, drain the egress links, PFC refreshes, trace. */
void switch_poll(struct switch_rt *s, uint64_t now_tsc);
/* A moment t in the past lived through after the lcore was held up (fabric_lab_poll): as
 * switch_poll, but nothing comes in from the ports of remote senders (the NICs, and switches on
 * other lcores): what their cables hold now they sent after t, and it arrives at the poll of now. */
void switch_replay(struct switch_rt *s, uint64_t t);
/* The lcore was held up until t and the time before t will not be lived through: each busy
 * link's time up to t is lost (cpu_lost) and it sends from t on, not SW_LINK_LAG_US before. */
void switch_lose_time_until(struct switch_rt *s, uint64_t t);
/* Main lcore: the link of config port cfg_port as its ethdev reports it. When it goes down (a
 * peer process that left its memif cable), the switch's next poll drops what is queued to that
 * port and what came in from it, wherever it waits (counted as that port's drop_link_down): kept,
 * frames of a process that left would reach the next one to connect on that port, and their
 * buffer would hold PFC XOFF on the ports they came from. Frames that arrive for a port while it
 * is down wait for its next peer, as for a slow one. */
void switch_port_link(struct switch_rt *s, unsigned cfg_port, bool up);
/* After the lcores stopped: the frames still queued go back to their pools (counted per flow as
 * queued at the end). */
void switch_flush(struct switch_rt *s);
/* Main lcore: the trace rows waiting in the ring, as CSV lines. */
unsigned switch_trace_drain(struct switch_rt *s, const struct engine_config *cfg, FILE *csv);
void switch_trace_header(FILE *csv);

#endif

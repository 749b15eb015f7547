/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What the lcores counted, read from their work areas (snapshot.c is the only telemetry code
 * that walks them): per port, per receiver QP, per flow and per lcore, each read into a struct
 * of its own that live lines, report, metrics, time series, SLA and control then use. Relaxed
 * reads of single-writer counters: a figure may be a burst behind another. Control commands
 * reach the lcores' egress schedulers through snapshot_egress_next.
 */
#ifndef ROCE_TELEMETRY_SNAPSHOT_H
#define ROCE_TELEMETRY_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#include "run_view.h"

/* Totals, summed over lcores (relaxed reads of single-writer counters). */
struct port_totals {
	uint64_t tx_packets, tx_bytes;
	uint64_t rx_frames, rx_bytes, rx_malformed;
	uint64_t mbuf_alloc_fail, tx_ring_full, tx_unsent;
	uint64_t reflected, reflect_dropped; /* reflect roles: frames sent back, refused by the PMD */
	struct rx_port_counters rx;    /* every RX counter of the port */
};

void snapshot_port_totals(const struct run_view *run, unsigned port, struct port_totals *t);
/* ECN-CE marks received per port (the receiver QPs' counts, over the RX lcores). */
void snapshot_ecn_ce_per_port(const struct run_view *run, uint64_t out[CFG_MAX_PORTS]);
/* PFC a port sent (generators and threshold XOFF/XON) and its time paused per priority at now. */
struct port_pfc {
	uint64_t pfc_tx[8], paused_ns[8];
	uint64_t pause_tx;            /* 802.3x PAUSE frames from generators */
	uint64_t generator_frames;
};
void snapshot_port_pfc(const struct run_view *run, unsigned port, uint64_t now_tsc, struct port_pfc *out);
/* Receiver counters of (port, qpn) summed over RX lcores; false when no frame arrived. */
bool snapshot_rx_qp(const struct run_view *run, unsigned port, uint32_t qpn, struct rx_qp_counters *out);
/* The local port a flow group's frames are for (its fabric `dst`, or the port of its dst_mac), or -1. */
int snapshot_flow_dst_port(const struct run_view *run, const struct cfg_flow_group *g);
/* Config index of the local port whose MAC is `mac`, or -1 (the flow goes elsewhere). */
int snapshot_local_port_of_mac(const struct run_view *run, const uint8_t mac[6]);
/* Latency statistics merged over the lcores that measured them into *out (initialised here);
 * each returns the sample count. A flow's one-way times are its receiver's (a local port), its
 * round trips (UC/UD ping-pong) or request -> ACK times (RC) its own. */
uint64_t snapshot_lat_port(const struct run_view *run, unsigned port, enum lat_kind kind, struct lat_stats *out);
uint64_t snapshot_lat_flow(const struct run_view *run, const struct qp_tx *qp, enum lat_kind kind,
			   struct lat_stats *out);
uint64_t snapshot_lat_rx_qp(const struct run_view *run, unsigned port, uint32_t qpn, struct lat_stats *out);

/* RC answers each port's responders could not send (over the lcores). */
uint64_t snapshot_responses_dropped(const struct run_view *run, unsigned port);
/* The egress scheduler's classes, summed over the port's TX roles. */
void snapshot_egress_classes(const struct run_view *run, unsigned port, uint64_t bytes[8], uint64_t packets[8]);
/* Link time the port's egress schedulers lost to their lcores (egress.h: cpu_lost_tsc), in TSC. */
uint64_t snapshot_egress_cpu_lost(const struct run_view *run, unsigned port);
/* run.cc_trace rows lost to a full ring, over the lcores. */
uint64_t snapshot_cc_trace_dropped(const struct run_view *run);

/* Time an lcore was kept from its CPU (datapath/lcore.h), in TSC cycles. */
struct lcore_held_up {
	uint64_t tsc, times, max_tsc;
	uint64_t turns; /* of its loop */
};
/* Lcore l's, false when it has no work area. */
bool snapshot_lcore_held_up(const struct run_view *run, unsigned l, struct lcore_held_up *out);

/* The process's resident memory, bytes (/proc/self/statm; 0 when unreadable). */
long snapshot_resident_bytes(void);

/* A walk over the lcores' receiver QPs, TX pools or egress schedulers: start at {0}. */
struct lcore_walk {
	unsigned lcore, i;
};
/* The next receiver QP (lcore by lcore, in each lcore's order), NULL after the last. */
const struct rx_qp *snapshot_rx_qp_next(const struct run_view *run, struct lcore_walk *at);
/* The next TX role's mbuf pool and its config port, NULL after the last. */
struct rte_mempool *snapshot_tx_pool_next(const struct run_view *run, struct lcore_walk *at, unsigned *port);
/* The next egress scheduler of a TX role on `port`, NULL after the last (control writes its
 * weights and shapes: relaxed stores the lcore picks up). */
struct egress *snapshot_egress_next(const struct run_view *run, unsigned port, struct lcore_walk *at);

#endif

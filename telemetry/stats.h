/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What the lcores counted, read from their work areas (this is the code that reads them: relaxed
 * reads of single-writer counters, so a figure may be a burst behind), the live lines and the
 * final summary (stats.c), and the JSON report (report.c).
 */
#ifndef ROCE_TELEMETRY_STATS_H
#define ROCE_TELEMETRY_STATS_H

#include <stddef.h>

#include "run_view.h"

/* Reads every port's rte_eth_stats and xstats into run (before the ports close). */
void stats_capture_pmd(struct run_view *run);

/* Totals, summed over lcores (relaxed reads of single-writer counters). */
struct port_totals {
	uint64_t tx_packets, tx_bytes;
	uint64_t rx_frames, rx_bytes, rx_malformed;
	uint64_t mbuf_alloc_fail, tx_ring_full, tx_unsent;
	uint64_t reflected, reflect_dropped; /* reflect roles: frames sent back, refused by the PMD */
	struct rx_port_counters rx;    /* every RX counter of the port */
};

void stats_port_totals(const struct run_view *run, unsigned port, struct port_totals *t);
/* The PMD's counters of a port: live while it runs, the captured ones after. */
void stats_port_hw(const struct run_view *run, unsigned port, struct rte_eth_stats *hw);
/* What the report calls a port's rx_dropped: malformed, no room in the RX QP table, the PMD's
 * missed and no-mbuf counts. */
static inline uint64_t stats_rx_dropped(const struct port_totals *t, const struct rte_eth_stats *hw)
{
	return t->rx_malformed + t->rx.rx_qp_table_full + hw->imissed + hw->rx_nombuf;
}
/* ECN-CE marks received per port (the receiver QPs' counts, over the RX lcores). */
void stats_ecn_ce_per_port(const struct run_view *run, uint64_t out[CFG_MAX_PORTS]);
/* PFC a port sent (generators and threshold XOFF/XON) and its time paused per priority at now. */
struct port_pfc {
	uint64_t pfc_tx[8], paused_ns[8];
	uint64_t pause_tx;            /* 802.3x PAUSE frames from generators */
	uint64_t generator_frames;
};
void stats_port_pfc(const struct run_view *run, unsigned port, uint64_t now_tsc, struct port_pfc *out);
/* Receiver counters of (port, qpn) summed over RX lcores; false when no frame arrived. */
bool stats_rx_qp(const struct run_view *run, unsigned port, uint32_t qpn, struct rx_qp_counters *out);
/* Config index of the local port whose MAC is `mac`, or -1 (the flow goes elsewhere). */
int stats_local_port_of_mac(const struct run_view *run, const uint8_t mac[6]);
/* Latency statistics merged over the lcores that measured them into *out (initialised here);
 * each returns the sample count. A flow's one-way times are its receiver's (a local port), its
 * round trips (UC/UD ping-pong) or request -> ACK times (RC) its own. */
uint64_t stats_lat_port(const struct run_view *run, unsigned port, enum lat_kind kind, struct lat_stats *out);
uint64_t stats_lat_flow(const struct run_view *run, const struct qp_tx *qp, enum lat_kind kind, struct lat_stats *out);
uint64_t stats_lat_rx_qp(const struct run_view *run, unsigned port, uint32_t qpn, struct lat_stats *out);

/* One live line per port since the previous call; `prev` keeps what the previous line saw. */
struct live_prev {
	struct port_totals t;
	uint64_t imissed, rx_nombuf;   /* the PMD's */
	uint64_t capture_dropped;      /* copies of the port's frames the capture dropped */
};
void stats_print_interval(const struct run_view *run, double t_s, double dt_s, struct live_prev *prev);
void stats_print_summary(const struct run_view *run);

/* Writes the JSON report atomically (temporary file, then rename). 0 or -1 with err. */
int report_write(const struct run_view *run, const char *path, char *err, size_t errlen);
/* Checks at start-up that the report's directory is writable. */
int report_check_path(const char *path, char *err, size_t errlen);


#endif

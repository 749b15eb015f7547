/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The engine's run-time state, shared by engine.c (life cycle), stats.c (live lines and totals)
 * and report.c (the JSON report). Not part of the public API.
 */
#ifndef ROCE_ENGINE_STATE_H
#define ROCE_ENGINE_STATE_H

#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "collective.h"
#include "config.h"
#include "congestion.h"
#include "inject.h"
#include "counters.h"
#include "latency.h"
#include "lcore.h"
#include "port.h"
#include "receiver.h"
#include "requester.h"

#define ENGINE_MAX_XSTATS 256
#define ENGINE_LIVE_LAT_QPS 16 /* latency QPs that get a live line of their own */
#define ENGINE_MAX_LINK_EVENTS 64 /* per port; later changes are counted, not listed */

/* A port's link as the main lcore saw it (port_link_up, polled while the run goes). */
struct link_track {
	int state;                     /* 1 up, 0 down, -1 not known (yet) */
	uint64_t since_tsc;            /* when the state began */
	uint64_t down_tsc;             /* time down during the run, up to the last poll */
	uint64_t changes;              /* every change seen (the first state is not one) */
	unsigned n_events;
	struct { uint64_t tsc; bool up; } ev[ENGINE_MAX_LINK_EVENTS]; /* the first state, then changes */
};

struct engine {
	const struct engine_config *cfg;
	struct port_info ports[CFG_MAX_PORTS];
	unsigned n_ports;
	struct qp_tx *qps;
	unsigned n_qps;
	uint8_t *qp_extra;             /* the QPs' shapes and RC message logs */
	struct pace_slot *heap_slots;  /* backing store of the TX roles' heaps, then of their backlogs */
	struct collective_rt *collectives; /* one per config collective */
	struct qp_index *qp_index;     /* the local QPs by (port, QPN), read-only once running */
	struct resp_table *responders; /* the RC responders' states (in qp_index), or NULL */
	struct lcore_work *work[RTE_MAX_LCORE];
	unsigned n_work;
	struct lcore_stop stop;        /* the main lcore's stop requests to the workers */
	uint64_t tsc_hz, start_tsc, end_tsc;
	const char *stopped_by;        /* "duration", "flows_done", "signal" */
	bool finished;                 /* the lcores stopped: the numbers are final (run.http_linger_s) */
	/* latency */
	uint16_t session;              /* this run's, in every probe it sends */
	unsigned n_pingpong;           /* UC/UD ping-pong QPs (their round trips, per RX lcore) */
	unsigned n_ack;                /* RC QPs measuring request -> ACK */
	struct lat_stats *lat_ack;     /* [n_ack], each written by the QP's owner lcore */
	FILE *lat_csv;                 /* raw samples, or NULL */
	uint64_t lat_csv_rows;
	struct lat_stats *lat_live;    /* [n_ports][2]: one-way and RTT at the previous live line */
	struct lat_stats *lat_live_qp; /* [ENGINE_LIVE_LAT_QPS][LAT_KIND_COUNT]: the same for the first latency QPs */
	/* congestion control and event injection */
	struct dcqcn_params dcqcn_live[CFG_MAX_FLOW_GROUPS]; /* per group: what its QPs use (the control */
	struct timely_params timely_live[CFG_MAX_FLOW_GROUPS]; /* interface changes them while running) */
	struct qp_cc *cc_states;       /* the QPs' with cc, in QP order */
	unsigned n_cc;
	struct qp_inject *inj_states;  /* the QPs' with injection rules */
	unsigned n_inj;
	struct timeseries *ts;         /* run.timeseries, or NULL */
	unsigned long ts_rows;
	struct rte_pcapng *pcapng;     /* --capture, or NULL */
	int capture_fd;                /* the file, opened at start, until rte_pcapng takes it (-1) */
	uint64_t capture_written, capture_dropped, capture_write_errors;
	struct exporter *http;         /* run.http, or NULL */
	struct switch_rt *sw;          /* the virtual lab's switch, or NULL */
	FILE *sw_csv;                  /* switch.trace, or NULL */
	uint64_t sw_csv_rows;
	FILE *cc_csv;                  /* run.cc_trace, or NULL */
	uint64_t cc_csv_rows;
	/* QoS and PFC */
	struct qos_map qos_map[CFG_MAX_PORTS];
	struct pfc_pause pause[CFG_MAX_PORTS]; /* written by the lcore receiving the port's MAC control */
	struct pfc_gen pfc_gen[CFG_MAX_PFC_GENERATORS];
	struct pfc_watch watch[CFG_MAX_PORTS]; /* PFC from RX thresholds (ports with qos.pfc_xoff) */
	bool watch_taken[CFG_MAX_PORTS];
	uint64_t rate_gbps[CFG_MAX_FLOW_GROUPS]; /* live per-QP rate of each group, in kb/s (control.c) */
	/* phases: when each started (and when the last ended), and the counters then */
	unsigned phases_started;
	uint64_t phase_tsc[CFG_MAX_PHASE_LIST + 1];
	uint64_t phase_group_bytes[CFG_MAX_PHASE_LIST + 1][CFG_MAX_FLOW_GROUPS];
	uint64_t phase_tc_bytes[CFG_MAX_PHASE_LIST + 1][CFG_MAX_PORTS][8];
	unsigned pool_size[CFG_MAX_PORTS];
	unsigned pool_in_use_at_exit[CFG_MAX_PORTS];
	struct link_track link[CFG_MAX_PORTS]; /* link states and changes, per port */
	/* the PMDs' own counters, read when the lcores have stopped and before the ports close */
	struct rte_eth_stats hw[CFG_MAX_PORTS];
	bool pmd_captured;             /* hw[] holds the final counters (the ports may be closed) */
	unsigned n_xstats[CFG_MAX_PORTS];
	struct rte_eth_xstat_name xstat_names[CFG_MAX_PORTS][ENGINE_MAX_XSTATS];
	uint64_t xstat_values[CFG_MAX_PORTS][ENGINE_MAX_XSTATS];
};

/* Reads every port's rte_eth_stats and xstats into the engine state. */
void stats_capture_pmd(struct engine *e);

/* Totals, summed over lcores (relaxed reads of single-writer counters). */
struct port_totals {
	uint64_t tx_packets, tx_bytes;
	uint64_t rx_frames, rx_bytes, rx_malformed;
	uint64_t mbuf_alloc_fail, tx_ring_full, tx_unsent;
	uint64_t reflected, reflect_dropped; /* reflect roles: frames sent back, refused by the PMD */
	struct rx_port_counters rx;    /* every RX counter of the port */
};

void stats_port_totals(const struct engine *e, unsigned port, struct port_totals *t);
/* The PMD's counters of a port: live while it runs, the captured ones after. */
void stats_port_hw(const struct engine *e, unsigned port, struct rte_eth_stats *hw);
/* What the report calls a port's rx_dropped: malformed, no room in the RX QP table, the PMD's
 * missed and no-mbuf counts. */
static inline uint64_t stats_rx_dropped(const struct port_totals *t, const struct rte_eth_stats *hw)
{
	return t->rx_malformed + t->rx.rx_qp_table_full + hw->imissed + hw->rx_nombuf;
}
/* ECN-CE marks received per port (the receiver QPs' counts, over the RX lcores). */
void stats_ecn_ce_per_port(const struct engine *e, uint64_t out[CFG_MAX_PORTS]);
/* PFC a port sent (generators and threshold XOFF/XON) and its time paused per priority at now. */
struct port_pfc {
	uint64_t pfc_tx[8], paused_ns[8];
	uint64_t pause_tx;            /* 802.3x PAUSE frames from generators */
	uint64_t generator_frames;
};
void stats_port_pfc(const struct engine *e, unsigned port, uint64_t now_tsc, struct port_pfc *out);
/* Receiver counters of (port, qpn) summed over RX lcores; false when no frame arrived. */
bool stats_rx_qp(const struct engine *e, unsigned port, uint32_t qpn, struct rx_qp_counters *out);
/* Config index of the local port whose MAC is `mac`, or -1 (the flow goes elsewhere). */
int stats_local_port_of_mac(const struct engine *e, const uint8_t mac[6]);
/* Latency statistics merged over the lcores that measured them into *out (initialised here);
 * each returns the sample count. A flow's one-way times are its receiver's (a local port), its
 * round trips (UC/UD ping-pong) or request -> ACK times (RC) its own. */
uint64_t stats_lat_port(const struct engine *e, unsigned port, enum lat_kind kind, struct lat_stats *out);
uint64_t stats_lat_flow(const struct engine *e, const struct qp_tx *qp, enum lat_kind kind, struct lat_stats *out);
uint64_t stats_lat_rx_qp(const struct engine *e, unsigned port, uint32_t qpn, struct lat_stats *out);

/* One live line per port since the previous call; `prev` keeps what the previous line saw. */
struct live_prev {
	struct port_totals t;
	uint64_t imissed, rx_nombuf;   /* the PMD's */
	uint64_t capture_dropped;      /* copies of the port's frames the capture dropped */
};
void stats_print_interval(const struct engine *e, double t_s, double dt_s, struct live_prev *prev);
void stats_print_summary(const struct engine *e);

/* Writes the JSON report atomically (temporary file, then rename). 0 or -1 with err. */
int report_write(const struct engine *e, const char *path, char *err, size_t errlen);
/* Checks at start-up that the report's directory is writable. */
int report_check_path(const char *path, char *err, size_t errlen);


#endif

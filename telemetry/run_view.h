/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The run as telemetry sees it. The engine plans the run into it (config, ports, QPs, the
 * lcores' work areas, the lab's switch, PFC state), keeps its times, links and phases current
 * while it supervises, and hands it to telemetry — live lines, report, metrics, control, time
 * series, capture writer, SLA — which never sees struct engine (engine/engine_state.h embeds
 * this as its `run`). The lcores' counters in it have one writer each; telemetry reads them
 * relaxed (stats.h). The last part is telemetry's own: what it keeps of the run.
 */
#ifndef ROCE_RUN_VIEW_H
#define ROCE_RUN_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "collective.h"
#include "config.h"
#include "congestion.h"
#include "counters.h"
#include "latency.h"
#include "lcore.h"
#include "port.h"
#include "receiver.h"
#include "requester.h"

#define RUN_MAX_XSTATS 256
#define RUN_LIVE_LAT_QPS 16 /* latency QPs that get a live line of their own */
#define RUN_MAX_LINK_EVENTS 64 /* per port; later changes are counted, not listed */

/* A port's link as the main lcore saw it (port_link_up, polled while the run goes). */
struct link_track {
	int state;                     /* 1 up, 0 down, -1 not known (yet) */
	uint64_t since_tsc;            /* when the state began */
	uint64_t down_tsc;             /* time down during the run, up to the last poll */
	uint64_t changes;              /* every change seen (the first state is not one) */
	unsigned n_events;
	struct { uint64_t tsc; bool up; } ev[RUN_MAX_LINK_EVENTS]; /* the first state, then changes */
};

/* A fabric.external link event's command (engine/link_commands.c). */
struct link_command_rt {
	bool started, ended;
	int pid;
	uint64_t started_tsc, ended_tsc;
	int status;                    /* its exit status; 128 + N killed by signal N; -1 not started */
	int spawn_errno;               /* why it could not start (0: it did) */
};

struct run_view {
	/* what the engine planned */
	const struct engine_config *cfg;
	struct port_info ports[CFG_MAX_PORTS];
	unsigned n_ports;
	struct qp_tx *qps;
	unsigned n_qps;
	struct collective_rt *collectives; /* one per config collective */
	struct qp_index *qp_index;     /* the local QPs by (port, QPN), read-only once running */
	struct lcore_work *work[RTE_MAX_LCORE]; /* the lcores' work areas (read only through stats.h) */
	struct qp_cc *cc_states;       /* the QPs' with cc, in QP order */
	unsigned n_cc;
	struct switch_rt *sw;          /* the virtual lab's switch, or NULL */
	struct fabric_lab *fab;        /* the virtual fabric, or NULL */
	struct pfc_pause pause[CFG_MAX_PORTS]; /* written by the lcore receiving the port's MAC control */
	struct pfc_gen pfc_gen[CFG_MAX_PFC_GENERATORS];
	struct pfc_watch watch[CFG_MAX_PORTS]; /* PFC from RX thresholds (ports with qos.pfc_xoff) */
	unsigned pool_size[CFG_MAX_PORTS];
	unsigned pool_in_use_at_exit[CFG_MAX_PORTS];
	FILE *cc_csv;                  /* run.cc_trace, or NULL */
	uint64_t cc_csv_rows;
	uint64_t sw_csv_rows;          /* switch.trace's */
	/* what the engine keeps current while it supervises */
	uint64_t tsc_hz, start_tsc, end_tsc;
	const char *stopped_by;        /* "duration", "flows_done", "signal" */
	bool finished;                 /* the lcores stopped: the numbers are final (run.http_linger_s) */
	struct link_track link[CFG_MAX_PORTS]; /* link states and changes, per port */
	struct link_command_rt link_cmd[CFG_FAB_MAX_EVENTS]; /* fabric.external's events, as they ran */
	json_t *dut_links[2];          /* fabric.external.counters_command's links before and after the run */
	char dut_error[512];           /* why one of its readings gave none */
	/* phases: when each started (and when the last ended), and the counters then */
	unsigned phases_started;
	uint64_t phase_tsc[CFG_MAX_PHASE_LIST + 1];
	uint64_t phase_group_bytes[CFG_MAX_PHASE_LIST + 1][CFG_MAX_FLOW_GROUPS];
	uint64_t phase_tc_bytes[CFG_MAX_PHASE_LIST + 1][CFG_MAX_PORTS][8];
	/* what control commands (and phases) change while running: the lcores read them */
	struct dcqcn_params dcqcn_live[CFG_MAX_FLOW_GROUPS]; /* per group: what its QPs use */
	struct timely_params timely_live[CFG_MAX_FLOW_GROUPS];
	uint64_t rate_gbps[CFG_MAX_FLOW_GROUPS]; /* live per-QP rate of each group, in kb/s (control.c) */
	/* telemetry's own */
	struct lat_stats *lat_live;    /* [n_ports][2]: one-way and RTT at the previous live line */
	struct lat_stats *lat_live_qp; /* [RUN_LIVE_LAT_QPS][LAT_KIND_COUNT]: the same for the first latency QPs */
	struct timeseries *ts;         /* run.timeseries, or NULL */
	struct rte_pcapng *pcapng;     /* --capture, or NULL */
	struct capture_lcore *taps[RTE_MAX_LCORE]; /* each lcore's copies of its frames, or NULL */
	int capture_fd;                /* the file, opened at start, until rte_pcapng takes it (-1) */
	uint64_t capture_written, capture_dropped, capture_write_errors;
	/* the PMDs' own counters, read when the lcores have stopped and before the ports close */
	struct rte_eth_stats hw[CFG_MAX_PORTS];
	bool pmd_captured;             /* hw[] holds the final counters (the ports may be closed) */
	unsigned n_xstats[CFG_MAX_PORTS];
	struct rte_eth_xstat_name xstat_names[CFG_MAX_PORTS][RUN_MAX_XSTATS];
	uint64_t xstat_values[CFG_MAX_PORTS][RUN_MAX_XSTATS];
};

#endif

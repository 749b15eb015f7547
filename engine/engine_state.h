/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The engine's run-time state, engine.c's (life cycle). What telemetry reads of it is its `run`
 * (telemetry/run_view.h), which the engine hands to telemetry; the rest is the engine's own.
 */
#ifndef ROCE_ENGINE_STATE_H
#define ROCE_ENGINE_STATE_H

#include <stdint.h>
#include <stdio.h>

#include "inject.h"
#include "run_view.h"
#include "sla.h"
#include "stats.h"

struct engine {
	struct run_view run;           /* what telemetry sees of the run */
	uint8_t *qp_extra;             /* the QPs' shapes and RC message logs */
	struct pace_slot *heap_slots;  /* backing store of the TX roles' heaps, then of their backlogs */
	unsigned n_work;
	struct resp_table *responders; /* the RC responders' states (in run.qp_index), or NULL */
	struct lcore_stop stop;        /* the main lcore's stop requests to the workers */
	/* latency */
	uint16_t session;              /* this run's, in every probe it sends */
	unsigned n_pingpong;           /* UC/UD ping-pong QPs (their round trips, per RX lcore) */
	unsigned n_ack;                /* RC QPs measuring request -> ACK */
	struct lat_stats *lat_ack;     /* [n_ack], each written by the QP's owner lcore */
	struct qp_latency **lat_of_flow; /* [run.n_qps]: each QP's latency state (or NULL), for the RX lcores */
	FILE *lat_csv;                 /* raw samples, or NULL */
	uint64_t lat_csv_rows;
	/* event injection */
	struct qp_inject *inj_states;  /* the QPs' with injection rules */
	unsigned n_inj;
	unsigned long ts_rows;
	struct exporter *http;         /* run.http, or NULL */
	FILE *sw_csv;                  /* switch.trace, or NULL */
	/* QoS and PFC */
	struct qos_map qos_map[CFG_MAX_PORTS];
	bool watch_taken[CFG_MAX_PORTS];
	struct sla_checks sla;         /* the finished run's checks, for the verdict and the report */
};

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What one worker lcore does: its TX roles (a port queue and the QPs it paces) and its RX roles
 * (a port queue whose frames it accounts), polled in one loop, in the manner of DPDK's l2fwd.
 */
#ifndef ROCE_ENGINE_LCORE_H
#define ROCE_ENGINE_LCORE_H

#include <stdbool.h>
#include <stdint.h>

#include "classify.h"
#include "config.h"
#include "congestion.h"
#include "inject.h"
#include "latency.h"
#include "pfc.h"
#include "pfc_watch.h"
#include "qp_index.h"
#include "receiver.h"
#include "reflector.h"
#include "requester.h"
#include "responder.h"
#include "tx_role.h"

#define LCORE_MAX_ROLES 16

struct switch_rt;
struct fabric_lab;
struct capture_lcore;

/* A PFC (or PAUSE) frame generator on a TX role (config pfc_generators). */
struct pfc_gen {
	uint8_t frame[64];
	uint16_t len;
	uint8_t class_enable;     /* priorities the frames name (PAUSE: all) */
	bool pause;
	uint64_t next_fp, interval_fp; /* TSC << PACE_SHIFT */
	uint64_t left;            /* frames still to send (UINT64_MAX: no limit) */
	uint64_t sent, refused;   /* read by the main lcore */
};

struct rx_role {
	uint16_t port;
	uint16_t port_id;
	uint16_t queue;
	uint32_t drop_below;      /* loss injection: drop when a 32-bit random draw is below this */
};

/* Stop requests from the main lcore: TX first, then RX after the in-flight frames drained. One
 * per run, written by the main lcore, read by every worker. */
struct lcore_stop {
	bool tx, rx;
};

struct lcore_work {
	unsigned lcore;
	const struct lcore_stop *stop; /* the run's */
	unsigned n_tx, n_rx, n_reflect;
	struct tx_role tx[LCORE_MAX_ROLES];
	struct rx_role rx[LCORE_MAX_ROLES];
	struct reflect_role reflect[LCORE_MAX_ROLES];
	struct rx_ctx *rx_ctx;
	struct lat_rx *lat;       /* probes received here (NULL when no flow measures latency) */
	struct lat_samples *samples; /* raw latency samples of this lcore for the CSV, or NULL */
	const struct port_clock *clock[CFG_MAX_PORTS]; /* per config port: where RX times come from */
	const struct qos_map *map[CFG_MAX_PORTS];      /* per config port: frame -> priority */
	struct pfc_pause *pause[CFG_MAX_PORTS];        /* per port: PFC/PAUSE received here pause its TX */
	struct pfc_watch *watch[CFG_MAX_PORTS];        /* per port: RX backlog that makes it send PFC */
	uint64_t pfc_tx[CFG_MAX_PORTS][QOS_PRIORITIES]; /* PFC frames sent for those, per priority */
	uint8_t mac[CFG_MAX_PORTS][6];                 /* the ports' addresses (PFC frames' source) */
	const struct cfg_port *cport[CFG_MAX_PORTS];   /* per config port: its notification point settings */
	uint32_t rx_ps_per_byte[CFG_MAX_PORTS];        /* per config port: a wire byte's time at its link speed */
	struct port_inject *rx_inject[CFG_MAX_PORTS];  /* per port: its rx_inject rules, or NULL */
	struct cc_lcore *cc;      /* congestion control of this lcore's QPs (timers, trace), or NULL */
	struct switch_rt *sw;     /* the virtual lab's switch, when its ports are polled here */
	struct fabric_lab *fab;   /* the virtual fabric, when some of its switches run here: */
	unsigned fab_part;        /* its part this lcore polls */
	struct capture_lcore *cap; /* pcapng copies of this lcore's frames (--capture), or NULL */
	bool tx_finished;         /* every QP of every TX role stopped (read by the main lcore) */
	/* Turns of the loop that came more than held_up_min_tsc after the one before: the lcore was
	 * off its CPU (other work shares it) or a turn took that long. Written here only; the main
	 * lcore reads them relaxed (the report, the summary). */
	uint64_t held_up_min_tsc;
	uint64_t fabric_first_tsc; /* a gap this long (shorter than a hold-up: the host took the CPU
				    * for a moment) and the fabric polls first (fabric_first) */
	uint64_t held_up_tsc, held_up_times, held_up_max_tsc;
	uint64_t turns;           /* turns of the loop until the TX stop: the run's time not held up over
				   * them is a turn's length (the drain's turns, quick, are not counted) */
	uint64_t rng;             /* loss injection draws */
	/* RC responders answered from this lcore: one output per port, READs still being answered */
	struct resp_out resp[CFG_MAX_PORTS];
	unsigned n_resp;          /* the config's ports: resp[0 .. n_resp) are in use */
	unsigned n_reads;
	struct resp_qp *reads[256];
	uint8_t scratch[WIRE_MAX_FRAME]; /* multi-segment frames are copied here to be parsed */
	/* the engine's local QPs (completer, responder, notification point): last, so that the
	 * fields above keep the cache lines they had */
	const struct qp_index *qp_index;
};

void lcore_request_tx_stop(struct lcore_stop *s);
void lcore_request_rx_stop(struct lcore_stop *s);
void lcore_reset_stop(struct lcore_stop *s);

/* Builds the heap of a TX role once its QPs are attached. */
void tx_role_init_heap(struct tx_role *r);
/* The worker loop (rte_eal_remote_launch). */
int lcore_main(void *work);

#endif

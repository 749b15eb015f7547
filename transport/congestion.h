/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The reaction point in the engine: each QP with congestion control (`cc = "dcqcn" | "timely"`)
 * has a cc/ state, owned like the QP by its TX lcore. CNPs reach it as completer events (the RX
 * lcore that receives a CNP posts it on the owner's ring), RTT samples from its own RC ACKs, the
 * byte counter from what it sends; the rate the algorithm sets goes straight into the QP's pacing
 * (cc_tx_link.fp_per_byte), so a cut applies from the QP's next packet.
 *
 * DCQCN's timers (the end of a decrease period, the increase timer) are on no wheel: the QP
 * record keeps when the next one is due (cc_tx_link.due_tsc) and the QP runs them, in time order
 * and at their own times, when it next sends (congestion_catch_up from qp_tx_fill), so a QP's
 * cut and all the increases since its last packet cost one visit of its state instead of one
 * per timer (65,536 QPs: a cache miss each). The rate a packet is paced with is the same as if
 * the timers had fired on time: a rate change only ever applies from the QP's next packet.
 * What others read between a QP's packets (control, metrics) may lag by up to one of its
 * inter-packet times; traced QPs are brought up to date for each trace row, and every QP of an
 * lcore when its TX ends (congestion_finish), so reports are exact. docs/cc.md.
 *
 * Traced QPs (run.cc_trace) write a row at every CNP and every cc_trace_interval_us into a
 * single-producer ring the main lcore turns into CSV.
 */
#ifndef ROCE_ENGINE_CONGESTION_H
#define ROCE_ENGINE_CONGESTION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "dcqcn.h"
#include "timely.h"
#include "timer_wheel.h"

struct qp_tx;

struct cc_lcore;

/* The few words of a QP's sending state its reaction point reads and writes. The QP's record
 * (struct qp_tx, requester.h) embeds it, so that sending touches no cc state (65,536 QPs: a cache
 * miss per packet), and the reaction point reaches it through qp_cc.tx without knowing the rest
 * of the QP (requester.h includes this header, not the other way round). */
struct cc_tx_link {
	/* DCQCN's byte counter: bytes sent since the reaction point last saw them, and how many it
	 * needs before its next byte event (UINT64_MAX: none, e.g. before the first CNP) */
	uint64_t bytes, bytes_due;
	uint64_t due_tsc;             /* its next DCQCN timer (congestion_catch_up), UINT64_MAX: none */
	uint64_t *fp_per_byte;        /* the QP's pacing rate (pace_time.h), stored atomically */
};

struct qp_cc {
	struct qp_tx *qp;             /* its QP (not read here: the engine's and telemetry's) */
	struct cc_tx_link *tx;        /* in its QP's record */
	struct cc_lcore *lcore;       /* the owner lcore's */
	uint8_t algo;                 /* enum cfg_cc */
	bool traced;
	uint32_t index;               /* the QP's index in the engine (trace rows) */
	uint64_t line_kbps;
	uint64_t applied_kbps;        /* the rate the QP's pacing has now */
	uint64_t cnp_rx;              /* CNPs that reached this QP */
	uint64_t rate_changes;
	uint64_t min_kbps;            /* the lowest rate it was set to */
	union {
		struct dcqcn_qp d;
		struct timely_qp t;
	} u;
};

/* One row of the trace CSV */
enum cc_trace_event { CC_EV_INTERVAL, CC_EV_CNP, CC_EV_RTT, CC_EV_START };
struct cc_trace_row {
	uint64_t time_ns;
	uint32_t qp;
	uint8_t event;
	uint8_t stage;
	uint16_t pad;
	uint64_t rate_kbps, target_kbps;
	uint32_t alpha_ppm;           /* α in millionths (DCQCN), or 0 */
	uint32_t pad2;
	uint64_t cnps, cuts;
};

#define CC_TRACE_RING 16384
struct cc_trace_ring {
	uint64_t head, tail, dropped;  /* dropped: rows lost to a full ring (run.cc_trace) */
	struct cc_trace_row row[CC_TRACE_RING];
};

/* A TX lcore's congestion-control context. */
struct cc_lcore {
	uint64_t tsc_hz;
	struct cc_trace_ring *trace;  /* NULL: nothing traced here */
	uint64_t trace_every_ns, next_trace_ns;
	unsigned n_traced;
	struct qp_cc **traced;
	/* the span of its QPs' states in the engine's array (with other lcores' between them) */
	const char *states_lo, *states_hi;
};

/* The QP's rate limit when congestion control drives it: the flow's rate_gbps, else the NVIDIA
 * rpg_max_rate (DCQCN), else the port's link speed (virtual devices without one: 100 Gb/s). */
uint64_t congestion_line_kbps(const struct cfg_flow_group *g, double link_gbps);
/* Prepares c for the QP `qp` whose record holds `tx` (the QP's pacing already set up), with
 * algorithm `algo` (enum cfg_cc), starting at line rate. */
void congestion_qp_init(struct qp_cc *c, struct qp_tx *qp, struct cc_tx_link *tx, unsigned algo, uint32_t index,
			uint64_t line_kbps, uint64_t now_ns, const struct dcqcn_params *dcqcn,
			const struct timely_params *timely);
/* The lcore's context. */
void congestion_lcore_init(struct cc_lcore *l, uint64_t tsc_hz);

/* A hint before c is handled: its state starts its way to the cache (65,536 QPs: a miss each),
 * e.g. while a CNP waits in a ring. (The lines of its QP's record it uses, qp_cc.tx and the rate
 * it points at, are the caller's to prefetch: c may not be in cache yet.) */
void congestion_prefetch(const struct qp_cc *c);
/* Owner lcore: a CNP for the QP arrived (posted by an RX lcore). */
void congestion_on_cnp(struct cc_lcore *l, struct qp_cc *c, uint64_t now_tsc);
/* Owner lcore: the QP's sent bytes (tx->bytes) reached tx->bytes_due: the byte counter. */
void congestion_on_sent(struct cc_lcore *l, struct qp_cc *c, uint64_t now_tsc);
/* Owner lcore: an RTT sample (a message's request -> ACK time). */
void congestion_on_rtt(struct cc_lcore *l, struct qp_cc *c, uint64_t rtt_ns, uint64_t now_tsc);
/* Owner lcore, before the QP sends when now_tsc >= tx->due_tsc: runs its timers due by now and
 * applies the rate they leave. */
void congestion_catch_up(struct cc_lcore *l, struct qp_cc *c, uint64_t now_tsc);
/* Owner lcore, once its TX has ended: every QP's timers due by now (the report's final values). */
void congestion_finish(struct cc_lcore *l, uint64_t now_tsc);
/* Owner lcore, every loop: trace rows when they are due. */
void congestion_poll(struct cc_lcore *l, uint64_t now_tsc);

/* Main lcore: writes the trace rows waiting in r as CSV; returns how many. */
unsigned congestion_trace_drain(struct cc_trace_ring *r, FILE *csv);
void congestion_trace_header(FILE *csv);

/* Reading from another thread (relaxed): current and target rates, α (fraction), stage. */
struct cc_view {
	uint64_t rate_kbps, target_kbps;
	double alpha;
	uint8_t stage;
	uint64_t cnps, cuts, increases;
};
void congestion_view(const struct qp_cc *c, struct cc_view *v);
const char *congestion_algo_name(unsigned algo);
const char *congestion_stage_name(unsigned stage);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The network simulation: senders (one flow each) -> one switch (an output queue per egress port
 * and class, a shared buffer, RED/ECN at dequeue, PFC toward the senders) -> receivers (the
 * DCQCN notification point, ACKs for TIMELY). Discrete events in integer ns; docs/ccsim.md
 * describes the model and its limits.
 */
#ifndef ROCE_CCSIM_SIM_H
#define ROCE_CCSIM_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dcqcn.h"
#include "heap.h"
#include "np.h"
#include "scenario.h"
#include "timely.h"
#include "timer_wheel.h"

#define SIM_TICK_NS 1000 /* the timer wheel's tick, as in the engine */

struct pkt {
	uint64_t send_ns;             /* when the sender started it (TIMELY's RTT) */
	uint32_t flow;
	uint32_t bytes;
	uint8_t flags;                /* PKT_* */
};

struct fifo {
	struct pkt *a;
	uint32_t cap, head, n;        /* a ring; cap is a power of two */
	uint64_t bytes;
};

/* An egress port of the switch, toward one receiver. */
struct port {
	const struct sc_receiver *cfg;
	uint64_t free_ps;             /* the transmitter is busy until then */
	bool busy;
	struct fifo q[SC_CLASSES];
	uint64_t max_q[SC_CLASSES];   /* the largest each queue has been, bytes */
	uint64_t tx_pkts, marked_pkts;
};

struct flow {
	const struct sc_flow *cfg;
	struct dcqcn_qp dcqcn;
	struct timely_qp timely;
	struct np_qp np;              /* the receiver's notification point for this flow */
	/* sender */
	bool started, done, paused;
	bool send_pending;            /* an EV_SEND of generation send_gen is in the heap */
	uint64_t send_gen;
	uint64_t rate_kbps;           /* the pacing rate now */
	uint64_t next_ps;             /* pacing: the nominal start of the next packet */
	uint64_t jit_ps;              /* this packet's random delay after next_ps (jitter_us) */
	uint64_t nic_free_ps;         /* the NIC finishes serialising the last packet */
	uint64_t last_start_ps;       /* nominal */
	uint32_t last_bytes;
	uint64_t to_send;             /* bytes not sent yet (UINT64_MAX: unlimited) */
	uint64_t seg_bytes;           /* TIMELY: bytes since the last ACK request */
	/* switch ingress (one flow per ingress port) */
	uint64_t ingress_bytes;
	bool xoff;                    /* the switch has sent XOFF (and no XON since) */
	/* counters */
	uint64_t sent_bytes, sent_pkts, rx_bytes, rx_pkts, drop_bytes, drop_pkts, ce_pkts;
	uint64_t cnp_rx, acks, pauses, paused_ns, paused_since;
	uint64_t win_rx_bytes, rate_samples;
	double rate_sum_gbps;
	uint64_t completion_ns;       /* UINT64_MAX: not complete */
	/* at the end of the run */
	uint64_t queued_bytes, in_flight_bytes;
};

struct sim {
	const struct scenario *sc;
	struct evheap h;
	struct timer_wheel *w;
	bool tick_pending;
	uint64_t now;                 /* ns */
	uint64_t rng;                 /* red_rand's state */
	struct flow *f;
	unsigned nf;
	struct port *p;
	unsigned np;
	uint64_t buf_used, buf_max;
	FILE *csv;                    /* NULL: no samples written */
	uint64_t events;
};

/* 0, or -1 (out of memory, message on stderr). csv may be NULL. */
int sim_init(struct sim *s, const struct scenario *sc, FILE *csv);
void sim_run(struct sim *s);
void sim_free(struct sim *s);

/* When the wheel runs next: its next tick boundary, or now if that has passed. Both simulations
 * run the wheel at tick boundaries while it holds timers, as the engine polls it. */
static inline uint64_t sim_next_tick_ns(const struct timer_wheel *w, uint64_t now)
{
	uint64_t t = w->next_tick * SIM_TICK_NS;

	return t > now ? t : now;
}

/* The xorshift state for a seed (never 0). */
uint64_t sim_rng_seed(uint64_t seed);

#endif

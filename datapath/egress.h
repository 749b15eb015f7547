/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Egress scheduling of a TX role whose port has `qos.egress`: the role's output is shaped to the
 * port's egress rate, and the traffic classes (class = priority) share it — the `strict` classes
 * first, highest first, then the others by ETS weights (deficit round robin over bytes), each
 * class optionally under its own shaper. Classes paused by PFC are skipped. The scheduler picks a
 * class, then one of its QPs in turn, and has that QP write what it may send (its own pacing,
 * window and stop conditions still apply): nothing is queued, packets are made when chosen.
 * docs/qos.md says why this and not rte_sched.
 */
#ifndef ROCE_ENGINE_EGRESS_H
#define ROCE_ENGINE_EGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "classify.h"

struct tx_role;
struct rte_mbuf;
struct cfg_port;

#define EGRESS_QUANTUM_BYTES 4096 /* what a weight of 1 is worth in a DRR round */
#define EGRESS_WIRE_OVERHEAD 24   /* preamble 8 + inter-frame gap 12 + FCS 4, per frame on the link */

struct tc_queue {
	struct pace_slot *slots;  /* the class's QPs (a slice of the role's slot array) */
	unsigned n, rr;
	int64_t deficit;          /* bytes it may still send in its DRR turn */
	uint32_t quantum;
	uint64_t next_fp, fp_per_byte; /* the class's shaper (fp_per_byte 0: none) */
	uint64_t bytes, packets;  /* sent (read by the main lcore) */
};

struct egress {
	uint64_t link_next_fp, link_fp_per_byte;
	uint64_t burst_fp;        /* how far a busy link may fall behind and catch up (an idle one keeps none) */
	uint64_t frame_fp;        /* a full-size frame's time on the link */
	uint8_t strict;           /* bit n: class n is strict */
	unsigned cur;             /* the ETS class whose DRR turn it is */
	bool busy;                /* the last burst ended with a frame ready and no link time for it */
	uint64_t cpu_lost_tsc;    /* link time a busy link could not catch up: the lcore came too late
				   * (held up, a slow loop turn, or its peer's ring full); read by the
				   * main lcore (the fabric's machine share) */
	struct tc_queue tc[QOS_PRIORITIES];
};

/* Rounds a pick may take: a visit may leave a class up to 8 frames of 9 KB below zero, 18 quanta
 * of weight 1, which its next turns pay back before it sends again. */
#define EGRESS_PICK_ROUNDS 64

/* The class that sends next: the strict classes first, highest first; then the ETS classes by
 * deficit round robin over bytes (Shreedhar and Varghese): the class whose turn it is sends while
 * its deficit is above zero (the caller takes what it sent off the deficit, which may go below
 * zero and is carried into its next turn), then the turn passes and the next class with QPs
 * gains its quantum. Rounds go on while some class could send: one that went a quantum or more
 * below zero sends again after the rounds that pay it back (two rounds at most, before, returned
 * -1 then: the link was taken for idle and lost its time). A class that cannot send when its
 * turn comes keeps no credit. eligible(ctx, c) says whether class c may send now; -1: none may.
 * Inline, so that the data path's eligible is inlined too; the unit tests pass their own. */
static inline __attribute__((always_inline)) int
egress_pick_class(struct egress *eg, bool (*eligible)(const void *ctx, unsigned c), const void *ctx)
{
	bool could = false; /* some ETS class could send in this round */

	for (int c = QOS_PRIORITIES - 1; c >= 0; c--)
		if (eg->strict >> c & 1 && eligible(ctx, (unsigned)c))
			return c;
	for (unsigned i = 0; i < EGRESS_PICK_ROUNDS * QOS_PRIORITIES; i++) {
		struct tc_queue *q = &eg->tc[eg->cur];
		bool ets = !(eg->strict >> eg->cur & 1);

		if (ets && eligible(ctx, eg->cur)) {
			if (q->deficit > 0)
				return (int)eg->cur;
			could = true;
		} else {
			q->deficit = 0; /* a class with nothing to send keeps no credit */
		}
		eg->cur = (eg->cur + 1) % QOS_PRIORITIES;
		if (!(eg->strict >> eg->cur & 1) && eg->tc[eg->cur].n) /* (the control thread may change it) */
			eg->tc[eg->cur].deficit += __atomic_load_n(&eg->tc[eg->cur].quantum, __ATOMIC_RELAXED);
		if (i % QOS_PRIORITIES == QOS_PRIORITIES - 1) {
			if (!could)
				return -1;
			could = false;
		}
	}
	return -1;
}

/* Sets up the role's classes from its port's settings; sorts its slots by class. */
void egress_init(struct egress *eg, struct tx_role *r, const struct cfg_port *cp, uint64_t tsc_hz);
/* Fills up to a burst; returns how many packets. */
unsigned egress_build_burst(struct tx_role *r, struct rte_mbuf **burst, uint64_t now_tsc);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "config.h"
#include "counters.h"
#include "egress.h"
#include "pace_time.h"
#include "pfc.h"
#include "requester.h"
#include "tx_role.h"

static int by_class(const void *a, const void *b)
{
	const struct pace_slot *x = a, *y = b;

	return (int)x->qp->tc - (int)y->qp->tc;
}

void egress_init(struct egress *eg, struct tx_role *r, const struct cfg_port *cp, uint64_t tsc_hz)
{
	unsigned start = 0;

	eg->link_fp_per_byte = pace_fp_per_byte(cp->egress_gbps, tsc_hz);
	eg->burst_fp = (uint64_t)ENGINE_BURST * 1500 * eg->link_fp_per_byte;
	eg->frame_fp = ((uint64_t)cp->mtu + 18 + EGRESS_WIRE_OVERHEAD) * eg->link_fp_per_byte; /* + Ethernet, VLAN */
	eg->strict = cp->strict_tcs;
	qsort(r->pq.heap, r->n_qps, sizeof(r->pq.heap[0]), by_class);
	for (unsigned c = 0; c < QOS_PRIORITIES; c++) {
		struct tc_queue *q = &eg->tc[c];
		q->slots = r->pq.heap + start;
		while (start < r->n_qps && r->pq.heap[start].qp->tc == c)
			start++;
		q->n = (unsigned)(r->pq.heap + start - q->slots);
		q->quantum = cp->ets_weight[c] * EGRESS_QUANTUM_BYTES;
		q->fp_per_byte = pace_fp_per_byte(cp->tc_shape_gbps[c], tsc_hz);
	}
}

static bool qp_ready(const struct tx_role *r, const struct qp_tx *qp, uint64_t now_tsc, uint64_t now_fp)
{
	return !qp->done && qp->next_fp <= now_fp && !(r->pause && pfc_paused(r->pause, qp->prio, now_tsc));
}

/* QP k leaves its class: it is done. */
static void leave_class(struct tx_role *r, struct tc_queue *q, unsigned k)
{
	q->slots[k] = q->slots[--q->n];
	r->pq.heap_n--;
	if (q->rr >= q->n)
		q->rr = 0;
}

/* Whether the class may send now: its shaper allows and it has a QP that is not done, is due
 * (or unpaced) and whose priority is not paused. A few of its QPs are looked at, from its cursor.
 * A QP found done leaves the class here: one that became done outside its own visit (a
 * collective's last phase acknowledged) is never ready, so nothing else would visit it, and its
 * role would never finish (the run would not end when its flows are done). */
static bool eligible(struct tx_role *r, struct tc_queue *q, uint64_t now_tsc, uint64_t now_fp)
{
	if (q->n == 0 || (__atomic_load_n(&q->fp_per_byte, __ATOMIC_RELAXED) && q->next_fp > now_fp))
		return false;
	for (unsigned i = 0, k = q->rr; i < 8 && q->n; i++) {
		if (q->slots[k].qp->done) {
			leave_class(r, q, k);
			k = k < q->n ? k : 0;
			continue;
		}
		if (qp_ready(r, q->slots[k].qp, now_tsc, now_fp))
			return true;
		k = k + 1 < q->n ? k + 1 : 0;
	}
	return false;
}

/* What egress_pick_class asks of a class: may it send now (shaper, a due QP not paused). */
struct pick_ctx {
	struct tx_role *r;
	struct egress *eg;
	uint64_t now_tsc, now_fp;
};

static inline bool class_eligible(const void *arg, unsigned c)
{
	const struct pick_ctx *x = arg;

	return eligible(x->r, &x->eg->tc[c], x->now_tsc, x->now_fp);
}

/* The class's next QP writes what it may; a QP that is done leaves the class. */
static unsigned visit(struct tx_role *r, struct tc_queue *q, struct rte_mbuf **m, unsigned max, uint64_t now_tsc,
		      uint64_t now_fp)
{
	struct qp_tx *qp = q->slots[q->rr].qp;
	unsigned n = 0;

	if (qp_ready(r, qp, now_tsc, now_fp)) {
		/* time paused earns no credit (as on the heap's path, lcore.c): the QP's rate counts
		 * from the end of its priority's last pause, not in a burst of the time it missed */
		uint64_t resumed_fp = r->pause ? pfc_until(r->pause, qp->prio) << PACE_SHIFT : 0;
		if (qp->next_fp < resumed_fp)
			qp->next_fp = resumed_fp;
		n = qp_tx_fill(qp, m, max, now_tsc, now_fp);
		if (n == 0 && !qp->done && qp->next_fp < now_fp) /* RC window full, RNR wait: no credit either */
			qp->next_fp = now_fp;
	}
	if (qp->done) {
		leave_class(r, q, q->rr);
	} else if (++q->rr >= q->n) {
		q->rr = 0;
	}
	return n;
}

/* Frames the link may start by now (full-size ones counted), at least one, at most `most`: what a
 * burst asks the pool for, and what a visit may write. A NIC honours a pause between frames; a
 * visit writing 8 frames ahead of the link (8 jumbo frames: 66 us at 4 Gb/s) would put them all
 * on the wire past an XOFF. */
static inline unsigned frames_by_now(const struct egress *eg, uint64_t now_fp, unsigned most)
{
	unsigned k = 1;

	for (uint64_t t = eg->link_next_fp + eg->frame_fp; k < most && t <= now_fp; t += eg->frame_fp)
		k++;
	return k;
}

unsigned egress_build_burst(struct tx_role *r, struct rte_mbuf **burst, uint64_t now_tsc)
{
	struct egress *eg = r->egress;
	uint64_t now_fp = now_tsc << PACE_SHIFT;
	const struct pick_ctx ctx = {.r = r, .eg = eg, .now_tsc = now_tsc, .now_fp = now_fp};
	uint64_t behind_fp = 0;
	unsigned n = 0, want;
	bool idle = false;

	if (r->pq.heap_n == 0) {
		eg->busy = false;
		return 0;
	}
	if (eg->link_next_fp + eg->burst_fp < now_fp) { /* a busy link catches up no more than a burst */
		behind_fp = now_fp - eg->burst_fp - eg->link_next_fp;
		eg->link_next_fp = now_fp - eg->burst_fp;
	}
	if (eg->link_next_fp > now_fp)
		return 0;
	want = frames_by_now(eg, now_fp, ENGINE_BURST); /* (no more mbufs from the pool than that) */
	if (rte_mempool_get_bulk(r->pool, (void **)burst, want) != 0) {
		STAT_ADD(r->mbuf_alloc_fail, 1);
		return 0;
	}
	for (unsigned looks = 0; n < want && eg->link_next_fp <= now_fp && looks < 4 * ENGINE_BURST; looks++) {
		int c = egress_pick_class(eg, class_eligible, &ctx);
		struct tc_queue *q;
		uint64_t bytes = 0, per_byte;
		unsigned k;

		if (c < 0) {
			/* nothing may go (paused, or no QP due): the link is idle and keeps no credit. A
			 * paused NIC that banked it would put a burst at once into the switch after XON,
			 * faster than its link: XOFF again at once, every time */
			if (n == 0 && eg->link_next_fp < now_fp)
				eg->link_next_fp = now_fp;
			idle = true;
			break;
		}
		q = &eg->tc[c];
		k = visit(r, q, burst + n, RTE_MIN(frames_by_now(eg, now_fp, 8), want - n), now_tsc, now_fp);
		for (unsigned i = 0; i < k; i++)
			bytes += burst[n + i]->pkt_len;
		n += k;
		q->deficit -= (int64_t)bytes;
		per_byte = __atomic_load_n(&q->fp_per_byte, __ATOMIC_RELAXED);
		if (per_byte)
			q->next_fp = RTE_MAX(q->next_fp, now_fp - eg->burst_fp) + bytes * per_byte;
		eg->link_next_fp += (bytes + (uint64_t)k * EGRESS_WIRE_OVERHEAD) * eg->link_fp_per_byte;
		STAT_ADD(q->bytes, bytes);
		STAT_ADD(q->packets, k);
	}
	if (n < want)
		rte_mempool_put_bulk(r->pool, (void **)(burst + n), want - n);
	/* busy at the last call and still sending now: the time it could not catch up was the
	 * lcore's, not the link's (an idle link's gap is its own) */
	if (eg->busy && n > 0)
		STAT_ADD(eg->cpu_lost_tsc, behind_fp >> PACE_SHIFT);
	eg->busy = !idle && (n == want || eg->link_next_fp > now_fp); /* stopped by the burst or the link */
	return n;
}

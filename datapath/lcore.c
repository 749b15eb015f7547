/* SPDX-License-Identifier: BSD-3-Clause */
#include <stddef.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "clock.h"
#include "completer.h"
#include "counters.h"
#include "egress.h"
#include "lcore.h"
#include "frame_tap.h"
#include "notification.h"
#include "fabric_lab.h"
#include "switch.h"

_Static_assert(LAT_BATCH >= ENGINE_BURST, "a burst's probes fit a lat_batch");

void lcore_request_tx_stop(struct lcore_stop *s) { __atomic_store_n(&s->tx, true, __ATOMIC_RELEASE); }
void lcore_request_rx_stop(struct lcore_stop *s) { __atomic_store_n(&s->rx, true, __ATOMIC_RELEASE); }
void lcore_reset_stop(struct lcore_stop *s)
{
	__atomic_store_n(&s->tx, false, __ATOMIC_RELEASE);
	__atomic_store_n(&s->rx, false, __ATOMIC_RELEASE);
}


/* ---- the pacing order ------------------------------------------------------------------- */

void tx_role_init_heap(struct tx_role *r)
{
	r->pq.heap_n = r->n_qps;
	r->rr = 0;
	r->unpaced = r->n_qps > 0;
	for (unsigned i = 0; i < r->n_qps; i++)
		if (qp_tx_paced(r->pq.heap[i].qp))
			r->unpaced = false;
	if (r->egress) /* the scheduler keeps its own order (classes); no heap */
		return;
	pace_queue_init(&r->pq);
}

/* ---- TX ------------------------------------------------------------------------------------ */

/* Sends what the PMD refused last time; true when nothing is left pending. */
static bool flush_pending(struct tx_role *r)
{
	uint16_t sent;

	if (r->n_pending == 0)
		return true;
	sent = rte_eth_tx_burst(r->port_id, r->queue, r->pending + r->pending_off, (uint16_t)r->n_pending);
	r->pending_off += sent;
	r->n_pending -= sent;
	if (r->n_pending)
		return false;
	r->pending_off = 0;
	/* the time the role could not send does not count against its QPs' ping-pong timeouts */
	r->stalled_tsc += rte_rdtsc() - r->pending_since_tsc;
	return true;
}

/* Packets a QP may send in one visit: enough to pay for the visit, few enough that QPs due
 * together interleave. */
#define QUANTUM 8u

/* The four cache lines the QP's next visit reads (struct pace_slot). */
static inline void prefetch_qp(const struct pace_slot *slot)
{
	const char *p = (const char *)slot->qp;

	rte_prefetch0(p);
	rte_prefetch0(p + RTE_CACHE_LINE_SIZE);
	rte_prefetch0(slot->more);
	rte_prefetch0((const char *)slot->more + RTE_CACHE_LINE_SIZE);
}

/* The next QP to visit, its state and its first shape prefetched (the loads start while the
 * loop decides whether it is due). */
static inline struct pace_slot *first_prefetched(struct pace_queue *q, uint64_t now_fp)
{
	struct pace_slot *first = pace_queue_first(q, now_fp);

	if (first)
		prefetch_qp(first);
	return first;
}

/* Fills up to a burst with the packets of QPs that are due: those on schedule earliest first,
 * then the lcore-bound ones in turn (pace_queue.h). */
static unsigned build_burst(struct tx_role *r, struct rte_mbuf **burst, uint64_t now_tsc)
{
	uint64_t now_fp = now_tsc << PACE_SHIFT;
	struct pace_slot *first = pace_queue_first(&r->pq, now_fp);
	unsigned n = 0;

	if (first == NULL || first->next_fp > now_fp)
		return 0;
	if (rte_mempool_get_bulk(r->pool, (void **)burst, ENGINE_BURST) != 0) {
		STAT_ADD(r->mbuf_alloc_fail, 1);
		return 0;
	}
	for (unsigned looks = 0; n < ENGINE_BURST && first && first->next_fp <= now_fp && looks < 4 * ENGINE_BURST;
	     looks++, first = first_prefetched(&r->pq, now_fp)) {
		struct qp_tx *qp = first->qp;

		if (qp->done) {
			pace_queue_remove_first(&r->pq, first);
			continue;
		}
		if (r->pause && pfc_paused(r->pause, qp->prio, now_tsc)) {
			/* its priority is paused: it looks again when the pause ends or a little later
			 * (an XON may end it sooner), and the time paused earns it no credit (it
			 * resumes at its rate, not in a burst). The QPs looked at in one call would all
			 * get the same key: `looks` keeps them in the order of this visit, so that when
			 * the pause ends they go in turn, those not served since the last pause first
			 * (with equal keys the heap's shape would pick the same few every time, and
			 * under frequent pauses the others would never send) */
			uint64_t until_fp = pfc_until(r->pause, qp->prio) << PACE_SHIFT;
			if (qp->next_fp < now_fp)
				qp->next_fp = now_fp;
			pace_queue_requeue(&r->pq, first, RTE_MIN(until_fp, now_fp + r->wait_fp) + looks, false);
			continue;
		}
		if (!qp_tx_can_send(qp, now_tsc)) { /* RC window full, RNR wait, phase: look again later */
			/* time spent waiting earns no credit: the rate resumes from now, without a burst
			 * (and in the order of this visit, as above) */
			if (qp->next_fp < now_fp)
				qp->next_fp = now_fp;
			pace_queue_requeue(&r->pq, first, qp->done ? 0 : now_fp + r->wait_fp + looks, false);
			continue;
		}
		unsigned quantum = QUANTUM;
		bool lcore_bound = qp->next_fp + r->lag_max_fp < now_fp;
		if (lcore_bound) {
			/* stalled: it resumes from at most LAG_MAX behind, so no burst of old credit; and
			 * as the lcore, not the rate, holds it back, it may fill a whole burst this visit
			 * and then waits in the backlog, in turn, without a sift through the heap */
			qp->next_fp = now_fp - r->lag_max_fp;
			quantum = ENGINE_BURST;
		}
		/* what is due of it, up to a quantum, while its state is in cache */
		n += qp_tx_fill(qp, burst + n, RTE_MIN(quantum, ENGINE_BURST - n), now_tsc, now_fp);
		/* to the backlog only while still far behind: its entries are all due, and in the
		 * order of their keys give or take what one visit sent (its pattern may have moved its
		 * time on: an off period, the end of a phase) */
		if (qp->done)
			pace_queue_remove_first(&r->pq, first);
		else
			pace_queue_requeue(&r->pq, first, qp->next_fp,
					   lcore_bound && qp->next_fp + r->lag_max_fp / 2 < now_fp);
	}
	if (n < ENGINE_BURST)
		rte_mempool_put_bulk(r->pool, (void **)(burst + n), ENGINE_BURST - n);
	return n;
}

/* Unpaced QPs (no rate): each in turn, no heap to keep in order. As for a stalled paced QP, the
 * lcore and not a rate holds them back, so each fills up to a whole burst a visit: the visit's
 * work (the QP's lines, its shapes made its own) is paid once per burst, not once per QUANTUM. */
static unsigned build_burst_rr(struct tx_role *r, struct rte_mbuf **burst, uint64_t now_tsc)
{
	unsigned n = 0;

	/* not before the run's start (the QPs' first send time) */
	if (r->pq.heap_n == 0 || r->pq.heap[r->rr].qp->next_fp > now_tsc << PACE_SHIFT)
		return 0;
	if (rte_mempool_get_bulk(r->pool, (void **)burst, ENGINE_BURST) != 0) {
		STAT_ADD(r->mbuf_alloc_fail, 1);
		return 0;
	}
	for (unsigned looks = 0; n < ENGINE_BURST && r->pq.heap_n && looks < 4 * ENGINE_BURST; looks++) {
		struct qp_tx *qp = r->pq.heap[r->rr].qp;

		if (!r->pause || !pfc_paused(r->pause, qp->prio, now_tsc)) /* a paused priority waits */
			n += qp_tx_fill(qp, burst + n, ENGINE_BURST - n, now_tsc, UINT64_MAX);
		if (qp->done) { /* finished: the last QP takes its place */
			r->pq.heap[r->rr] = r->pq.heap[--r->pq.heap_n];
		} else {
			r->rr++;
		}
		if (r->rr >= r->pq.heap_n)
			r->rr = 0;
		if (r->pq.heap_n)
			prefetch_qp(&r->pq.heap[r->rr + 1 < r->pq.heap_n ? r->rr + 1 : 0]);
	}
	if (n < ENGINE_BURST)
		rte_mempool_put_bulk(r->pool, (void **)(burst + n), ENGINE_BURST - n);
	return n;
}

/* PFC frames due from the role's generator, sent on their own (MAC-control frames are never
 * paused). A generator far behind (the lcore was descheduled) skips ahead rather than burst. */
static void pfc_gen_poll(struct tx_role *r, struct pfc_gen *g, uint64_t now_tsc)
{
	struct rte_mbuf *m[8];
	uint64_t now_fp = now_tsc << PACE_SHIFT;
	unsigned n = 0;
	uint16_t sent;

	if (g->left && g->next_fp + r->lag_max_fp < now_fp)
		g->next_fp = now_fp;
	for (; n < 8 && g->left && g->next_fp <= now_fp; n++) {
		g->next_fp += g->interval_fp;
		if (g->left != UINT64_MAX)
			g->left--;
	}
	if (n == 0)
		return;
	if (rte_mempool_get_bulk(r->pool, (void **)m, n) != 0) {
		STAT_ADD(g->refused, n);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		memcpy(rte_pktmbuf_mtod(m[i], uint8_t *), g->frame, g->len);
		m[i]->data_len = g->len;
		m[i]->pkt_len = g->len;
		m[i]->ol_flags = 0;
	}
	if (unlikely(r->cap != NULL))
		capture_burst(r->cap, r->port_id, r->queue, m, n, true, now_tsc);
	sent = rte_eth_tx_burst(r->port_id, r->queue, m, (uint16_t)n);
	STAT_ADD(g->sent, sent);
	if (sent < n) {
		STAT_ADD(g->refused, n - sent);
		rte_mempool_put_bulk(r->pool, (void **)(m + sent), n - sent);
	}
}

static void tx_role_poll(struct tx_role *r, uint64_t now_tsc)
{
	struct rte_mbuf *burst[ENGINE_BURST];
	unsigned n, first;
	uint16_t sent;

	if (r->comp_ring)
		completer_drain(r->comp_ring, r->qps, now_tsc);
	if (r->gen)
		pfc_gen_poll(r, r->gen, now_tsc);
	if (!flush_pending(r))
		return;
	n = r->egress	 ? egress_build_burst(r, burst, now_tsc)
	    : r->unpaced ? build_burst_rr(r, burst, now_tsc)
			 : build_burst(r, burst, now_tsc);
	if (n == 0)
		return;
	if (unlikely(r->cap != NULL)) /* copied once, when built (what the PMD refuses now goes later) */
		capture_burst(r->cap, r->port_id, r->queue, burst, n, true, now_tsc);
	/* a packet to be sent at a given time must lead its burst: what is before it goes first, the
	 * rest waits as pending for the next call */
	first = n;
	for (unsigned i = 1; r->sched_flag && i < n; i++)
		if (burst[i]->ol_flags & r->sched_flag) {
			first = i;
			break;
		}
	sent = rte_eth_tx_burst(r->port_id, r->queue, burst, (uint16_t)first);
	if (sent < n) {
		if (sent < first)
			STAT_ADD(r->tx_ring_full, 1);
		for (unsigned i = sent; i < n; i++)
			r->pending[i - sent] = burst[i];
		r->n_pending = n - sent;
		r->pending_since_tsc = now_tsc;
	}
}

static bool tx_role_finished(const struct tx_role *r)
{
	/* a generator without a count runs as long as the run: it keeps nothing alive */
	return pace_queue_size(&r->pq) == 0 && r->n_pending == 0 && (!r->gen || r->gen->left == 0 || r->gen->left == UINT64_MAX);
}

/* At stop: give the PMD a moment for what is pending, then free it (never leak an mbuf). */
static void tx_role_drain(struct tx_role *r)
{
	uint64_t until = rte_rdtsc() + rte_get_tsc_hz() / 100;

	while (!flush_pending(r) && rte_rdtsc() < until)
		;
	if (r->n_pending) { /* built and counted as sent by their QPs, but never taken by the PMD */
		STAT_ADD(r->tx_unsent, r->n_pending);
		rte_pktmbuf_free_bulk(r->pending + r->pending_off, r->n_pending);
	}
	r->n_pending = 0;
	r->pending_off = 0;
}

/* ---- RX ------------------------------------------------------------------------------------ */

/* RC frames go on to the responder (requests) or the completer (ACKs, NAKs, READ responses). */
static void dispatch_rc(struct lcore_work *w, uint16_t port, const uint8_t *frame, const struct wire_pkt *p)
{
	struct resp_qp *q;

	if (p->kind != WIRE_KIND_ROCE || p->bth.opcode >= WIRE_TRANSPORT_UC || p->roce_version != 2)
		return;
	if (p->op->flags & WIRE_OPF_RESPONSE) {
		if (!completer_post(w->qp_index, port, frame, p))
			rx_count_rc_unknown(w->rx_ctx, port);
		return;
	}
	q = responder_find(w->qp_index, port, p->bth.dqpn);
	if (!q)
		return;
	responder_request(q, frame, p, &w->resp[port]);
	if (q->rd_active && w->n_reads < sizeof(w->reads) / sizeof(w->reads[0]))
		w->reads[w->n_reads++] = q;
}

/* Pending READ answers, then everything queued for the PMD. */
static void answer(struct lcore_work *w)
{
	for (unsigned i = 0; i < w->n_reads;)
		if (responder_pump(w->reads[i], &w->resp[w->reads[i]->port]))
			i++;
		else
			w->reads[i] = w->reads[--w->n_reads];
	/* (every loop: a glance at the ports in use, the flush only with something queued; a resp_out
	 * is 4 KB, so each one looked at is a cache line and a page of its own) */
	for (unsigned p = 0; p < w->n_resp; p++)
		if (w->resp[p].n)
			resp_out_flush(&w->resp[p]);
}

/* The burst's latency probes, in arrival order: each one's statistics resolved and their lines
 * prefetched now, recorded once the frames are acted on (lat_batch_commit). `sw`: every frame
 * takes the burst's time (the loop is compiled once for it, once for per-frame times). */
static inline __attribute__((always_inline)) void
rx_probes_loop(struct lat_rx *l, struct lat_batch *b, uint16_t port, const uint8_t *const f[],
	       struct rte_mbuf *const ms[], const struct wire_pkt pkts[], struct rx_qp *const qps[], unsigned n,
	       uint64_t burst_ns, const struct port_clock *pc, bool sw)
{
	struct lat_gather g;

	lat_batch_start(l, b, &g, port);
	for (unsigned i = 0; i < n; i++) {
		const struct wire_pkt *p = &pkts[i];
		const uint8_t *pl;

		if (p->kind != WIRE_KIND_ROCE || !(p->op->flags & WIRE_OPF_PAYLOAD))
			continue;
		pl = f[i] + p->payload_off;
		if (lat_probe_is(pl, p->payload_len))
			lat_batch_add(l, b, &g, qps[i] ? &qps[i]->lat_slot : NULL, pl,
				      sw ? burst_ns : port_clock_rx_ns(pc, ms[i], burst_ns));
	}
	lat_batch_end(b, &g);
}

/* Out of the frames' loop: a function of its own keeps the gathering state in registers. */
static __attribute__((noinline)) void rx_probes(struct lcore_work *w, uint16_t port, const uint8_t *const f[],
						struct rte_mbuf *const ms[], const struct wire_pkt pkts[],
						struct rx_qp *const qps[], unsigned n, uint64_t burst_ns,
						struct lat_batch *b)
{
	const struct port_clock *pc = w->clock[port];

	if (pc->source == PORT_TS_TSC)
		rx_probes_loop(w->lat, b, port, f, ms, pkts, qps, n, burst_ns, pc, true);
	else
		rx_probes_loop(w->lat, b, port, f, ms, pkts, qps, n, burst_ns, pc, false);
}

/* A PFC or PAUSE frame for a port that honours them: its TX stops on the named priorities. */
static void honour_pause(struct lcore_work *w, uint16_t port, const struct wire_pkt *p)
{
	if (!w->pause[port])
		return;
	if (p->kind == WIRE_KIND_PFC)
		pfc_pause_frame(w->pause[port], p->pfc_enable, p->quanta, rte_rdtsc());
	else
		pfc_pause_all(w->pause[port], p->quanta[0], rte_rdtsc());
}

/* PFC from the port's RX backlog: one frame naming the priorities to stop (the configured
 * quanta) and those to resume (0), sent with the lcore's RC answers on the port. */
static void send_pfc(struct lcore_work *w, uint16_t port, uint8_t xoff, uint8_t xon)
{
	struct resp_out *out = &w->resp[port];
	uint16_t quanta[QOS_PRIORITIES];
	struct rte_mbuf *m = resp_out_mbuf(out);

	if (!m)
		return;
	for (unsigned i = 0; i < QOS_PRIORITIES; i++)
		quanta[i] = xoff >> i & 1 ? w->watch[port]->quanta : 0;
	resp_out_queue(out, m, wire_build_pfc(w->mac[port], NULL, (uint8_t)(xoff | xon), quanta,
					      rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m)));
	for (unsigned i = 0; i < QOS_PRIORITIES; i++)
		if ((xoff | xon) >> i & 1)
			STAT_ADD(w->pfc_tx[port][i], 1);
}

/* The port's rx_inject rules on an arriving frame (a frame in the mbuf, or the scratch copy of a
 * multi-segment one); false when it is to be dropped. */
static bool rx_injected(struct lcore_work *w, uint16_t port, uint8_t *f, uint32_t len)
{
	int a = inject_rx(w->rx_inject[port], f, len);

	if (a >= 0)
		rx_count_inject(w->rx_ctx, port, a);
	return a != CFG_INJECT_DROP;
}

/* What the frames of one RX burst share: its time, and the PFC decisions they add up to. */
struct rx_burst {
	uint64_t burst_ns; /* software RX time: when the burst came out of the PMD (0: not yet read) */
	uint64_t now_tsc;  /* 0 until a frame needs it */
	uint8_t xoff, xon;
	bool spaced;       /* wire_after[] filled */
	uint32_t wire_after[ENGINE_BURST]; /* wire bytes of the burst's frames after each one */
};

/* When frame i of a burst arrived, as its link carried them: one poll reads what came since the
 * last at once, but the frames came one after the other at the port's rate, the last one by the
 * burst's time. A notification point spacing its CNPs by arrival (min_time_between_cnps) must see
 * them as far apart as the wire had them: at the read time, a QP's marked frames of one poll look
 * simultaneous and all but the first go unanswered (at 1 Gb/s in the fabric lab: half the marks). */
static uint64_t arrival_ns(const struct lcore_work *w, uint16_t port, struct rx_burst *b, const uint32_t len[],
			   unsigned n, unsigned i)
{
	if (!b->burst_ns)
		b->burst_ns = clock_tsc_to_ns(rte_rdtsc());
	if (!b->spaced) {
		uint32_t after = 0;
		for (unsigned k = n; k-- > 0;) {
			b->wire_after[k] = after;
			after += len[k] + 24; /* preamble, FCS, gap */
		}
		b->spaced = true;
	}
	return b->burst_ns - (uint64_t)b->wire_after[i] * w->rx_ps_per_byte[port] / 1000;
}

/* Accounts n single-buffer frames (in arrival order) and acts on each: priority counters and
 * backlog, PAUSE/PFC, latency, RC answers, CNPs and the notification point. */
static void rx_frames(struct lcore_work *w, const struct rx_role *r, const uint8_t *const f[], const uint32_t len[],
		      struct rte_mbuf *const ms[], unsigned n, struct rx_burst *b)
{
	struct pfc_watch *watch = w->watch[r->port];
	struct wire_pkt pkts[ENGINE_BURST];
	struct rx_qp *qps[ENGINE_BURST];
	struct lat_batch lb;

	if (n == 0)
		return;
	b->spaced = false; /* (a burst may come in parts: a multi-segment frame alone) */
	rx_account_burst(w->rx_ctx, r->port, f, len, n, pkts, qps);
	if (w->lat)
		rx_probes(w, r->port, f, ms, pkts, qps, n, b->burst_ns, &lb);
	for (unsigned i = 0; i < n; i++) {
		const struct wire_pkt *p = &pkts[i];

		if (p->kind == WIRE_KIND_ROCE || p->kind == WIRE_KIND_CNP) {
			uint8_t prio = qos_priority(w->map[r->port], p->ip.dscp, p->l2.vlan, p->l2.pcp);
			rx_count_priority(w->rx_ctx, r->port, prio, len[i]);
			if (watch) {
				if (!b->now_tsc)
					b->now_tsc = rte_rdtsc();
				pfc_watch_arrival(watch, prio, len[i], b->now_tsc, &b->xoff, &b->xon);
			}
		} else if (unlikely(p->kind == WIRE_KIND_PFC || p->kind == WIRE_KIND_PAUSE))
			honour_pause(w, r->port, p);
		dispatch_rc(w, r->port, f[i], p);
		if (unlikely(p->kind == WIRE_KIND_CNP) && !completer_post_cnp(w->qp_index, r->port, p->bth.dqpn))
			rx_count_rc_unknown(w->rx_ctx, r->port);
		else if (unlikely(p->ip.ecn == WIRE_ECN_CE) && p->kind == WIRE_KIND_ROCE)
			notification_on_frame(w->qp_index, w->cport[r->port], r->port, f[i], p, qps[i], w->rx_ctx,
					      &w->resp[r->port], arrival_ns(w, r->port, b, len, n, i));
	}
	if (w->lat)
		lat_batch_commit(w->lat, &lb);
}

static inline void prefetch_frame(const struct rte_mbuf *m)
{
	const char *f = rte_pktmbuf_mtod(m, const char *);

	rte_prefetch0(f);
	if (m->data_len > RTE_CACHE_LINE_SIZE)
		rte_prefetch0(f + m->data_len - 1);
}

/* Frames are gathered and accounted together (rx_frames); a multi-segment frame is copied to the
 * lcore's one scratch buffer, so the frames before it are accounted first, then it alone. */
static uint16_t rx_role_poll(struct lcore_work *w, const struct rx_role *r)
{
	struct pfc_watch *watch = w->watch[r->port];
	struct rte_mbuf *burst[ENGINE_BURST], *ms[ENGINE_BURST];
	const uint8_t *f[ENGINE_BURST];
	uint32_t len[ENGINE_BURST];
	unsigned k = 0;
	uint16_t n = rte_eth_rx_burst(r->port_id, r->queue, burst, ENGINE_BURST);
	struct rx_burst b = {.burst_ns = w->lat && n ? clock_tsc_to_ns(rte_rdtsc()) : 0};

	if (unlikely(w->cap != NULL) && n)
		capture_burst(w->cap, r->port_id, r->queue, burst, n, false, rte_rdtsc());

	/* every mbuf of the burst at once, then each frame's head and tail (the ICRC) a frame ahead:
	 * written by another CPU (a switch's lcore, a NIC's DMA), each read alone was a full miss */
	for (uint16_t i = 0; i < n; i++)
		rte_prefetch0(burst[i]);
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = burst[i];

		if (i + 1 < n)
			prefetch_frame(burst[i + 1]);
		if (r->drop_below && rng32(&w->rng) < r->drop_below) {
			rx_count_injected_drop(w->rx_ctx, r->port);
			continue;
		}
		if (m->nb_segs == 1) {
			f[k] = rte_pktmbuf_mtod(m, const uint8_t *);
			len[k] = m->data_len;
		} else if (m->pkt_len <= sizeof(w->scratch)) {
			rx_frames(w, r, f, len, ms, k, &b); /* the scratch holds one frame */
			k = 0;
			len[0] = m->pkt_len;
			f[0] = rte_pktmbuf_read(m, 0, len[0], w->scratch);
		} else { /* longer than any RoCE frame can be: counted, dropped, never read */
			rx_account_oversize(w->rx_ctx, r->port, m->pkt_len);
			continue;
		}
		if (unlikely(w->rx_inject[r->port] != NULL) &&
		    !rx_injected(w, r->port, (uint8_t *)(uintptr_t)f[k], len[k]))
			continue;
		ms[k++] = m;
		if (m->nb_segs > 1) { /* accounted before the scratch is used again */
			rx_frames(w, r, f, len, ms, k, &b);
			k = 0;
		}
	}
	rx_frames(w, r, f, len, ms, k, &b);
	if (n)
		rte_pktmbuf_free_bulk(burst, n);
	if (watch) { /* the backlog drains and XOFF is refreshed between arrivals too */
		pfc_watch_tick(watch, b.now_tsc ? b.now_tsc : rte_rdtsc(), &b.xoff, &b.xon);
		if (b.xoff | b.xon)
			send_pfc(w, r->port, b.xoff, b.xon);
	}
	return n;
}

/* After the virtual fabric replayed a hold-up (fabric_lab_poll), the hosts' cables hold what
 * the switches sent them meanwhile: the receivers read on until their rings are empty, or a PFC
 * frame behind that backlog would reach its host turns later, and the host would send into the
 * headroom what a NIC, reading PFC as it arrives, does not. */
#define RX_CATCH_UP_BURSTS 32 /* a cable's 1,024 descriptors */

static void rx_roles_poll(struct lcore_work *w)
{
	unsigned bursts = w->fab && w->fab->part[w->fab_part].replayed ? RX_CATCH_UP_BURSTS : 1;

	for (unsigned i = 0; i < w->n_rx; i++)
		for (unsigned k = 0; k < bursts && rx_role_poll(w, &w->rx[i]) == ENGINE_BURST; k++)
			;
}

/* ---- the loop ------------------------------------------------------------------------------- */

/* A turn that came late: how long the lcore was away, for the report and the summary (a
 * poll-mode lcore that the host deschedules sends and emulates nothing meanwhile). */
static void __rte_noinline held_up(struct lcore_work *w, uint64_t gap)
{
	STAT_ADD(w->held_up_tsc, gap);
	STAT_ADD(w->held_up_times, 1);
	if (gap > w->held_up_max_tsc)
		__atomic_store_n(&w->held_up_max_tsc, gap, __ATOMIC_RELAXED);
}

/* After a hold-up, before the hosts send again: the fabric lives through the missed time and the
 * hosts read what it sent them meanwhile, PFC among it. Sending first, a host would take a pause
 * that its switch refreshed in the missed time for one that lapsed, and send into the headroom. */
static void fabric_first(struct lcore_work *w, uint64_t now)
{
	fabric_lab_poll(w->fab, w->fab_part, now);
	rx_roles_poll(w);
}

int lcore_main(void *arg)
{
	struct lcore_work *w = arg;
	bool tx_done = w->n_tx == 0;
	uint64_t last = rte_rdtsc();

	while (!__atomic_load_n(&w->stop->rx, __ATOMIC_ACQUIRE)) {
		uint64_t now = rte_rdtsc();

		if (unlikely(now - last > w->held_up_min_tsc))
			held_up(w, now - last);
		if (unlikely(w->fab != NULL && now - last > w->fabric_first_tsc))
			fabric_first(w, now);
		last = now;
		if (!__atomic_load_n(&w->stop->tx, __ATOMIC_RELAXED)) /* the run's turns, not the drain's */
			STAT_ADD(w->turns, 1);

		if (w->cc && !tx_done)
			congestion_poll(w->cc, now);
		if (!tx_done) {
			bool all = true;
			for (unsigned i = 0; i < w->n_tx; i++) {
				tx_role_poll(&w->tx[i], now);
				all &= tx_role_finished(&w->tx[i]);
			}
			if (all || __atomic_load_n(&w->stop->tx, __ATOMIC_ACQUIRE)) {
				for (unsigned i = 0; i < w->n_tx; i++)
					tx_role_drain(&w->tx[i]);
				tx_done = true;
				if (w->cc)
					congestion_finish(w->cc, now);
				__atomic_store_n(&w->tx_finished, true, __ATOMIC_RELEASE);
			}
		}
		rx_roles_poll(w);
		for (unsigned i = 0; i < w->n_reflect; i++)
			reflect_poll(&w->reflect[i]);
		if (w->sw)
			switch_poll(w->sw, now);
		if (w->fab)
			fabric_lab_poll(w->fab, w->fab_part, now);
		answer(w);
		if (tx_done && w->n_rx == 0 && w->n_reflect == 0 && !w->sw && !w->fab)
			break;
	}
	/* answers the PMD never took go back to their pool */
	for (unsigned p = 0; p < CFG_MAX_PORTS; p++) {
		if (w->resp[p].n)
			rte_pktmbuf_free_bulk(w->resp[p].buf, w->resp[p].n);
		w->resp[p].n = 0;
	}
	return 0;
}

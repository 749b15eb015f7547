/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The fabric simulation, see fabsim.h. The rules, as implemented:
 *
 * NIC: its QPs wait in a ring per class once their pacing time has come; the transmitter takes
 * the highest class that is not paused and in it the QPs in turn (round-robin), one packet each
 * (QPs that start at the same ns: in their order from the first, each once before any twice).
 * A QP is paced from the start of its last packet (a QP that waited for the NIC does not catch
 * up), at its DCQCN / TIMELY rate, capped at its own line rate.
 * Switch: a packet arriving by port `in` is routed by the destination NIC (fab_next_ports), one
 * of equal-cost ports picked by the switch's load balancing (fab_lb_pick, on the MMU's per-port
 * queued bytes), admitted by the MMU into the egress queue of its priority (or dropped: buffer,
 * queue, headroom, counted on the egress link), and sent when the port's transmitter is free:
 * strict priority over the classes not paused, RED/ECN on the queue it leaves behind. An XOFF /
 * XON of the MMU reaches the transmitter behind port `in` one link delay later.
 * Receiver: the PSN it expects is accepted (CE: the notification point may send a CNP); a gap
 * sends one NAK until the expected PSN arrives (go-back-N, as RC responders do), unless the
 * packet is within transport.reorder_window of it (then placed, as a NIC placing out of order
 * does, and the expected PSN moves past it once the gap fills); duplicates are counted; an ACK every ack_every packets or ack_ns after the last, at the flow's end and for
 * TIMELY's RTT requests.
 * ACKs, NAKs and CNPs come back after the path's propagation delay, not queued. The sender goes
 * back to the NAK's PSN, or to its oldest unacknowledged packet when rto_ns passes without
 * progress.
 */
#include "fabsim.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fab_fluid.h"
#include "red.h"
#include "sim.h"

enum {
	EV_START = 1, /* idx qp */
	EV_SEND,      /* idx qp, x generation */
	EV_TX_DONE,   /* idx dlink */
	EV_ARRIVE,    /* idx qp, aux dlink: a packet reaches a switch */
	EV_RX,        /* idx qp: a packet reaches its receiver */
	EV_PFC,       /* idx dlink (the paused transmitter), aux priority, flags 1 XOFF / 0 XON */
	EV_CNP,       /* idx qp */
	EV_ACK,       /* idx qp, psn: the receiver's expected PSN, x: send time, flags 1: an RTT sample */
	EV_NAK,       /* idx qp, psn */
	EV_RTO,       /* idx qp */
	EV_TICK,
	EV_SAMPLE,
	EV_LINK,      /* idx: fabric.events[idx] happens */
	EV_CONVERGE,  /* idx: the routes after it */
	EV_NIC_PICK,  /* idx nic: an idle NIC takes its next QP once this ns's starts are in its rings */
};

#define container_of(p, type, member) ((type *)(void *)((char *)(p) - offsetof(type, member)))
#define FS_NO_PKTS UINT32_MAX

static inline uint64_t ceil_ns(uint64_t ps) { return (ps + 999) / 1000; }
static inline uint64_t ser_ps(uint64_t bytes, uint64_t kbps) { return bytes * 8000000000ULL / (kbps ? kbps : 1); }
static inline uint64_t now_ps(const struct fabsim *s) { return s->now * 1000; }

static void push(struct fabsim *s, struct ev e) { heap_push(&s->h, e); }

/* ---- queues ------------------------------------------------------------------------------------ */

static int grow(void **a, uint32_t *cap, uint32_t head, uint32_t n, size_t elem)
{
	uint32_t c = *cap ? *cap * 2 : 64;
	char *b = malloc(c * elem);

	if (!b) {
		fprintf(stderr, "roce-ccsim: out of memory (a queue of %u)\n", n);
		exit(1);
	}
	for (uint32_t i = 0; i < n; i++)
		memcpy(b + i * elem, (char *)*a + ((head + i) & (*cap - 1)) * elem, elem);
	free(*a);
	*a = b;
	*cap = c;
	return 0;
}

static void fifo_push(struct fs_fifo *q, const struct fs_pkt *p)
{
	if (q->n == q->cap) {
		grow((void **)&q->a, &q->cap, q->head, q->n, sizeof(*q->a));
		q->head = 0;
	}
	q->a[(q->head + q->n++) & (q->cap - 1)] = *p;
}

static struct fs_pkt fifo_pop(struct fs_fifo *q)
{
	struct fs_pkt p = q->a[q->head];

	q->head = (q->head + 1) & (q->cap - 1);
	q->n--;
	return p;
}

static void ring_push(struct fs_ring *r, uint32_t v)
{
	if (r->n == r->cap) {
		grow((void **)&r->a, &r->cap, r->head, r->n, sizeof(*r->a));
		r->head = 0;
	}
	r->a[(r->head + r->n++) & (r->cap - 1)] = v;
}

static uint32_t ring_pop(struct fs_ring *r)
{
	uint32_t v = r->a[r->head];

	r->head = (r->head + 1) & (r->cap - 1);
	r->n--;
	return v;
}

/* ---- links ------------------------------------------------------------------------------------- */

static void nic_tx(struct fabsim *s, unsigned nic, bool back_to_back);
static void port_tx(struct fabsim *s, uint32_t d, bool back_to_back);

static void tx_next(struct fabsim *s, uint32_t d, bool back_to_back)
{
	if (s->dl[d].from_nic)
		nic_tx(s, s->dl[d].from, back_to_back);
	else
		port_tx(s, d, back_to_back);
}

/* Puts packet p on link d: it is serialised from the transmitter's free time (back to back) or
 * now, and reaches the far end one delay after its last bit. Returns its start, ps. */
/* A frame of flow `flow` lost to a dead link: counted on the link, the flow and the event. */
static void lose(struct fabsim *s, struct fs_dlink *l, uint32_t flow)
{
	struct fs_qp *q = &s->qp[flow];

	l->drop_link_down++;
	q->drops++;
	if (s->cur_event < 0)
		return;
	s->ev[s->cur_event].lost++;
	s->ev[s->cur_event].last_loss_ns = s->now;
	if (q->hit_event != s->cur_event + 1) {
		q->hit_event = (uint16_t)(s->cur_event + 1);
		s->ev[s->cur_event].flows_hit++;
	}
}

static uint64_t transmit(struct fabsim *s, uint32_t d, const struct fs_pkt *p, bool back_to_back)
{
	struct fs_dlink *l = &s->dl[d];
	uint64_t start = back_to_back || l->free_ps > now_ps(s) ? l->free_ps : now_ps(s);

	l->free_ps = start + ser_ps(p->bytes, l->kbps);
	l->busy = true;
	push(s, (struct ev){ .t = ceil_ns(l->free_ps), .type = EV_TX_DONE, .idx = d });
	if (l->down) { /* the port sends into a dead link: the frame is lost */
		lose(s, l, p->flow);
		return start;
	}
	l->bytes += p->bytes;
	l->pkts++;
	push(s, (struct ev){ .t = ceil_ns(l->free_ps + l->delay_ns * 1000), .type = l->to_nic ? EV_RX : EV_ARRIVE,
			     .idx = p->flow, .aux = d, .psn = p->psn, .bytes = p->bytes, .flags = p->flags,
			     .x = p->send_ns });
	return start;
}

/* PFC from switch sw's port `port` for priority prio: toward the transmitter behind that port. */
static void pfc_send(struct fabsim *s, unsigned sw, unsigned port, unsigned prio, bool xoff)
{
	uint32_t out = s->sw[sw].out[port], in = s->dl[out].back;

	if (xoff)
		s->dl[in].xoff_tx++;
	push(s, (struct ev){ .t = s->now + s->dl[out].delay_ns, .type = EV_PFC, .idx = in, .aux = prio, .flags = xoff });
}

static void ev_pfc(struct fabsim *s, uint32_t d, unsigned prio, bool xoff)
{
	struct fs_dlink *l = &s->dl[d];
	uint8_t bit = (uint8_t)(1u << prio);

	if (l->down)
		return; /* the PFC frame was lost with its link */
	if (xoff && !(l->paused & bit)) {
		l->paused |= bit;
		l->pause_rx[prio]++;
		l->paused_since[prio] = s->now;
	} else if (!xoff && (l->paused & bit)) {
		l->paused &= (uint8_t)~bit;
		l->paused_ns[prio] += s->now - l->paused_since[prio];
		if (!l->busy)
			tx_next(s, d, false);
	}
}

/* ---- sender ------------------------------------------------------------------------------------ */

static struct fs_ring *ready_ring(struct fabsim *s, const struct fs_qp *q)
{
	return &s->nic[q->cfg->src].ready[q->cc->priority];
}

static bool has_more(const struct fs_qp *q) { return q->started && q->snd_nxt < q->n_pkts && !q->done; }

static void schedule_send(struct fabsim *s, struct fs_qp *q, uint64_t due_ps)
{
	q->send_pending = true;
	push(s, (struct ev){ .t = ceil_ns(due_ps), .type = EV_SEND, .idx = (uint32_t)(q - s->qp), .x = ++q->send_gen });
}

/* The QP's next packet is due at next_ps (+ its jitter): into its NIC's ring when that time has
 * come or comes before the NIC is free, else a send event then. */
static void kick(struct fabsim *s, struct fs_qp *q)
{
	const struct fs_dlink *l = &s->dl[s->nic[q->cfg->src].out];
	uint64_t due;

	if (!has_more(q) || q->in_ring || q->send_pending)
		return;
	due = q->next_ps + q->jit_ps;
	if (due > now_ps(s) && !(l->busy && due <= l->free_ps)) {
		schedule_send(s, q, due);
		return;
	}
	q->in_ring = true;
	ring_push(ready_ring(s, q), (uint32_t)(q - s->qp));
	if (!l->busy)
		nic_tx(s, q->cfg->src, false);
}

static void set_rate(struct fabsim *s, struct fs_qp *q, uint64_t kbps)
{
	q->rate_kbps = kbps ? kbps : 1;
	if (!q->last_bytes)
		return;
	q->next_ps = q->last_start_ps + ser_ps(q->last_bytes, q->rate_kbps);
	if (q->next_ps < now_ps(s))
		q->next_ps = now_ps(s);
	if (q->send_pending) {
		q->send_pending = false; /* the event in the heap is stale now */
		kick(s, q);
	}
}

static void ev_send(struct fabsim *s, struct fs_qp *q, uint64_t gen)
{
	if (gen != q->send_gen || !q->send_pending)
		return;
	q->send_pending = false;
	kick(s, q);
}

static void arm_rto(struct fabsim *s, struct fs_qp *q)
{
	if (q->rto_pending)
		return;
	q->rto_pending = true;
	q->rto_una = q->snd_una;
	push(s, (struct ev){ .t = s->now + s->fs->rto_ns, .type = EV_RTO, .idx = (uint32_t)(q - s->qp) });
}

static uint8_t ack_request(struct fs_qp *q, uint32_t bytes)
{
	if (q->cc->cc != CC_TIMELY)
		return 0;
	q->seg_bytes += bytes;
	if (q->seg_bytes < q->cc->timely_segment_bytes && q->snd_nxt + 1 < q->n_pkts)
		return 0;
	q->seg_bytes = 0;
	return FS_PKT_ACKREQ;
}

/* The QP's next packet onto the NIC's link, its pacing moved on. */
static void qp_send(struct fabsim *s, struct fs_qp *q, uint32_t d, bool back_to_back)
{
	struct fs_pkt p = { .flow = (uint32_t)(q - s->qp), .psn = q->snd_nxt };
	uint64_t start;

	p.bytes = q->snd_nxt + 1 == q->n_pkts ? q->last_pkt_bytes : q->cc->mtu_bytes;
	p.flags = ack_request(q, p.bytes);
	start = back_to_back || s->dl[d].free_ps > now_ps(s) ? s->dl[d].free_ps : now_ps(s);
	p.send_ns = start / 1000;
	transmit(s, d, &p, back_to_back);
	if (q->snd_nxt < q->snd_max)
		q->retx_pkts++;
	q->sent_pkts++;
	if (++q->snd_nxt > q->snd_max)
		q->snd_max = q->snd_nxt;
	q->last_start_ps = start;
	q->last_bytes = p.bytes;
	q->next_ps = start + ser_ps(p.bytes, q->rate_kbps);
	q->jit_ps = q->cc->jitter_ns ? (uint32_t)(red_rand(&s->rng) % (q->cc->jitter_ns * 1000 + 1)) : 0;
	if (q->cc->cc == CC_DCQCN && dcqcn_on_bytes(&q->dcqcn, s->w, p.bytes, s->now))
		set_rate(s, q, q->dcqcn.rc_kbps);
	arm_rto(s, q);
}

/* The NIC's transmitter is free: the next ready QP of the highest class not paused. A QP whose
 * pacing time moved later while it waited (a rate cut) leaves the ring for a send event. */
static void nic_tx(struct fabsim *s, unsigned nic, bool back_to_back)
{
	struct fs_nic *n = &s->nic[nic];
	struct fs_dlink *l = &s->dl[n->out];
	uint64_t start = back_to_back || l->free_ps > now_ps(s) ? l->free_ps : now_ps(s);

	l->busy = false;
	for (int c = 7; c >= 0; c--) {
		struct fs_ring *r = &n->ready[c];

		if (l->paused & (1u << c))
			continue;
		while (r->n) {
			struct fs_qp *q = &s->qp[ring_pop(r)];

			q->in_ring = false;
			if (!has_more(q))
				continue;
			if (q->next_ps + q->jit_ps > start) {
				schedule_send(s, q, q->next_ps + q->jit_ps);
				continue;
			}
			qp_send(s, q, n->out, back_to_back);
			kick(s, q);
			return;
		}
	}
}

/* A QP that starts joins its NIC's ring. When others of its NIC start at the same ns (a
 * pattern's flows at start_us), an idle NIC picks after all their starts (an event pushed now
 * runs after them), so that they go in turn from the first: picking at once would send the
 * first, put it back in the ring ahead of the QPs starting next and send it twice in a row (an
 * all-to-all's first destination got two packets from every sender). A QP starting alone is
 * sent at once, as kick() does. */
static void qp_join(struct fabsim *s, struct fs_qp *q)
{
	struct fs_nic *n = &s->nic[q->cfg->src];

	if (!has_more(q))
		return;
	q->in_ring = true;
	ring_push(ready_ring(s, q), (uint32_t)(q - s->qp));
	if (s->dl[n->out].busy || n->pick_pending)
		return;
	if (!q->together) {
		nic_tx(s, q->cfg->src, false);
		return;
	}
	n->pick_pending = true;
	push(s, (struct ev){ .t = s->now, .type = EV_NIC_PICK, .idx = q->cfg->src });
}

static void ev_nic_pick(struct fabsim *s, unsigned nic)
{
	s->nic[nic].pick_pending = false;
	if (!s->dl[s->nic[nic].out].busy)
		nic_tx(s, nic, false);
}

static void qp_start(struct fabsim *s, struct fs_qp *q)
{
	const struct sc_flow *c = q->cc;

	q->started = true;
	q->next_ps = now_ps(s);
	switch (c->cc) {
	case CC_DCQCN:
		dcqcn_init(&q->dcqcn, &c->dcqcn, q->line_kbps, s->now);
		q->rate_kbps = q->dcqcn.rc_kbps;
		break;
	case CC_TIMELY:
		timely_init(&q->timely, &c->timely, q->line_kbps,
			    c->timely_start_kbps < q->line_kbps ? c->timely_start_kbps : q->line_kbps);
		q->rate_kbps = q->timely.rate_kbps;
		break;
	case CC_NONE:
		q->rate_kbps = q->line_kbps;
		break;
	}
	qp_join(s, q);
}

static void qp_finish(struct fabsim *s, struct fs_qp *q)
{
	q->done = true;
	if (q->cc->cc == CC_DCQCN)
		dcqcn_stop(&q->dcqcn, s->w);
}

static void ev_ack(struct fabsim *s, struct fs_qp *q, uint32_t epsn, uint64_t send_ns, bool rtt)
{
	if (epsn > q->snd_una)
		q->snd_una = epsn;
	if (q->done)
		return;
	if (q->snd_una >= q->n_pkts) {
		qp_finish(s, q);
		return;
	}
	if (rtt && q->cc->cc == CC_TIMELY && timely_on_rtt(&q->timely, s->now - send_ns))
		set_rate(s, q, q->timely.rate_kbps);
}

/* Go-back-N: the sender resends from the PSN the receiver expects. */
static void ev_nak(struct fabsim *s, struct fs_qp *q, uint32_t epsn)
{
	q->naks++;
	if (epsn > q->snd_una)
		q->snd_una = epsn;
	if (q->done || q->snd_nxt <= epsn)
		return;
	q->snd_nxt = epsn;
	kick(s, q);
}

static void ev_rto(struct fabsim *s, struct fs_qp *q)
{
	q->rto_pending = false;
	if (q->done || q->snd_una >= q->snd_nxt)
		return; /* nothing outstanding: the next packet arms it again */
	if (q->snd_una == q->rto_una) {
		q->timeouts++;
		q->snd_nxt = q->snd_una;
		kick(s, q);
	}
	arm_rto(s, q);
}

static void ev_cnp(struct fabsim *s, struct fs_qp *q)
{
	q->cnp_rx++;
	if (q->cc->cc == CC_DCQCN && !q->done && dcqcn_on_cnp(&q->dcqcn, s->w, s->now))
		set_rate(s, q, q->dcqcn.rc_kbps);
}

/* ---- switch ------------------------------------------------------------------------------------ */

static void port_tx(struct fabsim *s, uint32_t d, bool back_to_back)
{
	struct fs_dlink *l = &s->dl[d];
	struct fs_switch *w = &s->sw[l->from];
	const struct sc_switch *c = w->cfg;
	bool change;
	struct fs_pkt p;
	int tc;

	for (tc = 7; tc >= 0 && (!l->q[tc].n || (l->paused & (1u << tc))); tc--)
		;
	if (tc < 0) {
		l->busy = false;
		return;
	}
	p = fifo_pop(&l->q[tc]);
	mmu_dequeue(&w->mmu, p.in_port, (unsigned)tc, l->from_port, (unsigned)tc, p.bytes, &change);
	if (change)
		pfc_send(s, l->from, p.in_port, (unsigned)tc, false);
	if (c->ecn[tc] && red_should_mark(&c->red[tc], w->mmu.queue[l->from_port][tc], &s->rng)) {
		p.flags |= FS_PKT_CE;
		l->marked++;
	}
	transmit(s, d, &p, back_to_back);
}

static void count_drop(struct fs_dlink *l, enum mmu_verdict v)
{
	if (v == MMU_DROP_BUFFER)
		l->drop_buffer++;
	else if (v == MMU_DROP_QUEUE)
		l->drop_queue++;
	else
		l->drop_headroom++;
}

static void ev_arrive(struct fabsim *s, const struct ev *e)
{
	struct fs_dlink *in = &s->dl[e->aux];
	struct fs_qp *q = &s->qp[e->idx];
	unsigned sw = in->to, prio = q->cc->priority, out;
	struct fs_switch *w = &s->sw[sw];
	const uint16_t *ports;
	unsigned n = fab_next_ports(s->f, s->routes, sw, q->cfg->dst, &ports);
	struct fs_pkt p = { .send_ns = e->x, .flow = e->idx, .psn = e->psn, .bytes = e->bytes,
			    .in_port = (uint16_t)in->to_port, .flags = e->flags };
	enum mmu_verdict v;
	struct fs_dlink *l;
	bool change;

	if (in->down) { /* it was on the wire when the link died */
		lose(s, in, e->idx);
		return;
	}
	if (n == 0) {
		s->dl[e->aux].drop_no_route++;
		q->drops++;
		return;
	}
	out = n == 1 ? ports[0]
		     : fab_lb_pick(&w->st, &w->lb, fab_hash(&w->lb.hash, &q->cfg->key), ports, n, s->now,
				   w->mmu.port_queue);
	l = &s->dl[w->out[out]];
	v = mmu_enqueue(&w->mmu, in->to_port, prio, out, prio, p.bytes, &change);
	if (v != MMU_ADMIT) {
		count_drop(l, v);
		q->drops++;
		return;
	}
	if (change)
		pfc_send(s, sw, in->to_port, prio, true);
	fifo_push(&l->q[prio], &p);
	if (w->mmu.queue[out][prio] > l->max_q[prio])
		l->max_q[prio] = w->mmu.queue[out][prio];
	if (!l->busy && !(l->paused & (1u << prio)))
		port_tx(s, w->out[out], false);
}

/* ---- receiver ---------------------------------------------------------------------------------- */

static void reply(struct fabsim *s, const struct fs_qp *q, uint8_t type, uint32_t psn, uint64_t x, uint8_t flags)
{
	push(s, (struct ev){ .t = s->now + q->back_ns, .type = type, .idx = (uint32_t)(q - s->qp), .psn = psn, .x = x,
			     .flags = flags });
}

/* A packet the receiver takes: its bytes count (goodput) when it is placed. */
static void place(struct fabsim *s, struct fs_qp *q, uint32_t bytes)
{
	q->rx_bytes += bytes;
	q->rx_pkts++;
	if (s->now >= s->sc->win_start_ns && s->now <= s->sc->win_end_ns)
		q->win_rx_bytes += bytes;
}

static bool placed(const struct fs_qp *q, uint32_t psn) { return q->placed[psn / 64 % 4] >> (psn % 64) & 1; }
static void set_placed(struct fs_qp *q, uint32_t psn, bool v)
{
	uint64_t bit = 1ULL << (psn % 64);

	q->placed[psn / 64 % 4] = v ? q->placed[psn / 64 % 4] | bit : q->placed[psn / 64 % 4] & ~bit;
}

/* A packet ahead of the expected one: placed when it is within transport.reorder_window (a NIC
 * placing frames out of order), else a gap that sends one NAK until the expected packet comes. */
static void ahead(struct fabsim *s, struct fs_qp *q, const struct ev *e)
{
	q->ooo_pkts++;
	if (e->psn - q->rcv_epsn < s->fs->reorder_window) {
		if (placed(q, e->psn)) {
			q->dup_pkts++;
			return;
		}
		set_placed(q, e->psn, true);
		place(s, q, e->bytes);
		return;
	}
	if (!q->nak_sent) {
		q->nak_sent = true;
		reply(s, q, EV_NAK, q->rcv_epsn, 0, 0);
	}
}

static void ev_rx(struct fabsim *s, const struct ev *e)
{
	struct fs_qp *q = &s->qp[e->idx];
	bool rtt = e->flags & FS_PKT_ACKREQ;
	uint32_t before = q->rcv_epsn;

	if (s->dl[e->aux].down) {
		lose(s, &s->dl[e->aux], e->idx);
		return;
	}
	if (e->flags & FS_PKT_CE) {
		q->ce_pkts++;
		if (q->cc->cc == CC_DCQCN && np_on_ce(&q->np, &s->fs->np, s->now))
			reply(s, q, EV_CNP, 0, 0, 0);
	}
	if (e->psn > q->rcv_epsn) {
		ahead(s, q, e);
		return;
	}
	if (e->psn < q->rcv_epsn) { /* a duplicate (the sender went back further): ACK where we are */
		q->dup_pkts++;
		reply(s, q, EV_ACK, q->rcv_epsn, e->x, 0);
		return;
	}
	place(s, q, e->bytes);
	q->rcv_epsn++;
	while (s->fs->reorder_window && placed(q, q->rcv_epsn)) { /* what was placed ahead follows */
		set_placed(q, q->rcv_epsn, false);
		q->rcv_epsn++;
	}
	q->nak_sent = false;
	if (q->rcv_epsn == q->n_pkts)
		q->completion_ns = s->now;
	if (rtt || q->rcv_epsn / s->fs->ack_every != before / s->fs->ack_every || q->rcv_epsn == q->n_pkts ||
	    (s->fs->ack_ns && s->now - q->last_ack_ns >= s->fs->ack_ns)) {
		q->last_ack_ns = s->now;
		reply(s, q, EV_ACK, q->rcv_epsn, e->x, rtt);
	}
}

/* ---- timers and samples ------------------------------------------------------------------------ */

static void on_timer(struct tw_timer *t, uint64_t due_ns, void *arg)
{
	struct fabsim *s = arg;
	struct fs_qp *q = container_of(dcqcn_qp_of_timer(t), struct fs_qp, dcqcn);

	if (dcqcn_on_timer(&q->dcqcn, s->w, t, due_ns))
		set_rate(s, q, q->dcqcn.rc_kbps);
}

static void ensure_tick(struct fabsim *s)
{
	if (s->tick_pending || !s->w->armed)
		return;
	push(s, (struct ev){ .t = sim_next_tick_ns(s->w, s->now), .type = EV_TICK });
	s->tick_pending = true;
}

static uint64_t port_queue(const struct fabsim *s, const struct fs_dlink *l)
{
	return l->from_nic ? 0 : s->sw[l->from].mmu.port_queue[l->from_port];
}

/* Each link direction's share of its rate over the interval that ends now. */
static void ev_sample(struct fabsim *s)
{
	uint64_t span = s->sc->sample_ns;

	for (unsigned d = 0; d < s->n_dl && s->n_samples < s->max_samples; d++) {
		struct fs_dlink *l = &s->dl[d];
		double gbps = (double)(l->bytes - l->sample_bytes) * 8 / (double)span;

		l->util[s->n_samples] = (float)(gbps * 1e6 / (double)l->kbps);
		l->sample_bytes = l->bytes;
		if (s->csv)
			fprintf(s->csv, "%llu.%03llu,%s,%s,%.3f,%llu,%u\n", (unsigned long long)(s->now / 1000),
				(unsigned long long)(s->now % 1000), s->f->links[d / 2].name, d & 1 ? "b_to_a" : "a_to_b",
				gbps, (unsigned long long)port_queue(s, l), l->paused);
	}
	s->n_samples++;
	if (s->now + span <= s->sc->duration_ns)
		push(s, (struct ev){ .t = s->now + span, .type = EV_SAMPLE });
}

/* ---- link events ------------------------------------------------------------------------------- */

/* A link goes down or up, both ways at once; a dead link's transmitters forget the pauses they
 * had (no XON will come over it), as a port that loses its link does. */
static void ev_link(struct fabsim *s, unsigned k)
{
	const struct cfab_event *e = &s->fs->events[k];

	s->cur_event = (int)k;
	for (unsigned d = 2 * e->link; d < 2 * e->link + 2; d++) {
		struct fs_dlink *l = &s->dl[d];

		l->down = !e->up;
		for (unsigned c = 0; c < 8 && l->down; c++)
			if (l->paused & (1u << c))
				l->paused_ns[c] += s->now - l->paused_since[c];
		if (l->down)
			l->paused = 0;
		else if (!l->busy)
			tx_next(s, d, false);
	}
	push(s, (struct ev){ .t = s->now + s->fs->convergence_ns, .type = EV_CONVERGE, .idx = k });
}

/* The routes over the links up now (a destination no route reaches: its frames are dropped). */
static void ev_converge(struct fabsim *s, unsigned k)
{
	bool *down = calloc(s->f->n_links, sizeof(*down));
	struct fab_routes r;
	char err[256];

	s->ev[k].converged = true;
	s->ev[k].converged_ns = s->now;
	if (!down)
		return;
	for (unsigned l = 0; l < s->f->n_links; l++)
		down[l] = s->dl[2 * l].down;
	if (fabric_routes(s->f, down, true, &r, err, sizeof(err)) == 0) {
		if (s->have_converged)
			fab_routes_free(&s->converged);
		s->converged = r;
		s->have_converged = true;
		s->routes = &s->converged;
	}
	free(down);
}

/* ---- the loop ---------------------------------------------------------------------------------- */

static void dispatch(struct fabsim *s, const struct ev *e)
{
	struct fs_qp *q = &s->qp[e->idx];

	switch (e->type) {
	case EV_START: qp_start(s, q); break;
	case EV_SEND: ev_send(s, q, e->x); break;
	case EV_TX_DONE: tx_next(s, e->idx, true); break;
	case EV_ARRIVE: ev_arrive(s, e); break;
	case EV_RX: ev_rx(s, e); break;
	case EV_PFC: ev_pfc(s, e->idx, e->aux, e->flags); break;
	case EV_CNP: ev_cnp(s, q); break;
	case EV_ACK: ev_ack(s, q, e->psn, e->x, e->flags); break;
	case EV_NAK: ev_nak(s, q, e->psn); break;
	case EV_RTO: ev_rto(s, q); break;
	case EV_TICK:
		s->tick_pending = false;
		tw_advance(s->w, s->now, on_timer, s);
		break;
	case EV_SAMPLE: ev_sample(s); break;
	case EV_LINK: ev_link(s, e->idx); break;
	case EV_CONVERGE: ev_converge(s, e->idx); break;
	case EV_NIC_PICK: ev_nic_pick(s, e->idx); break;
	}
}

void fabsim_run(struct fabsim *s)
{
	struct ev e;

	while (heap_top(&s->h) && heap_top(&s->h)->t <= s->sc->duration_ns) {
		heap_pop(&s->h, &e);
		s->now = e.t;
		s->events++;
		dispatch(s, &e);
		ensure_tick(s);
	}
	s->now = s->sc->duration_ns;
	for (unsigned d = 0; d < s->n_dl; d++)
		for (unsigned c = 0; c < 8; c++)
			if (s->dl[d].paused & (1u << c))
				s->dl[d].paused_ns[c] += s->now - s->dl[d].paused_since[c];
}

/* ---- set-up ------------------------------------------------------------------------------------ */

void fabsim_mmu_params(const struct fabric *f, unsigned s, const struct sc_switch *c, unsigned max_mtu,
		       struct mmu_params *p)
{
	const struct fab_switch *w = &f->switches[s];
	double bdp = 0;

	memset(p, 0, sizeof(*p));
	p->buffer_bytes = c->buffer_bytes ? c->buffer_bytes : 1ULL << 40;
	p->queue_limit = c->queue_limit_bytes;
	p->alpha = c->alpha;
	if (!c->pfc)
		return;
	p->pfc_priorities = c->pfc_prio_mask;
	p->xoff_bytes = c->xoff_bytes;
	p->xon_bytes = c->xon_bytes;
	for (unsigned k = 0; k < w->n_ports; k++) {
		const struct fab_link *l = &f->links[f->ports[w->first_port + k].link];
		double b = 2 * l->delay_us * 1e-6 * l->gbps * 1e9 / 8;

		if (b > bdp)
			bdp = b;
	}
	p->headroom_bytes = c->headroom_set ? c->headroom_bytes : (uint64_t)bdp + 2 * (max_mtu + 64);
}

static int init_switches(struct fabsim *s, char *err, size_t errlen)
{
	const struct fabric *f = s->f;

	for (unsigned i = 0; i < f->n_switches; i++) {
		struct fs_switch *w = &s->sw[i];
		struct mmu_params p;
		const char *bad, *why = "";

		w->cfg = &s->fs->tier[f->switches[i].tier];
		fabsim_mmu_params(f, i, w->cfg, s->fs->max_mtu, &p);
		if ((bad = mmu_params_check(&p, &why))) {
			snprintf(err, errlen, "%s: switch %s: %s: %s", s->sc->file, f->switches[i].name, bad, why);
			return -1;
		}
		mmu_init(&w->mmu, &p, f->switches[i].n_ports);
		w->lb = f->switches[i].lb;
		fab_lb_init(&w->st, sim_rng_seed(s->sc->seed + i + 1));
		w->out = calloc(f->switches[i].n_ports, sizeof(*w->out));
		if (!w->out)
			return -1;
		for (unsigned k = 0; k < f->switches[i].n_ports; k++)
			w->out[k] = fab_dlink_out(f, i, k);
	}
	return 0;
}

static void init_links(struct fabsim *s)
{
	const struct fabric *f = s->f;

	for (unsigned l = 0; l < f->n_links; l++) {
		const struct fab_link *k = &f->links[l];
		struct fs_dlink *a = &s->dl[2 * l], *b = &s->dl[2 * l + 1];

		a->kbps = b->kbps = (uint64_t)(k->gbps * 1e6 + 0.5);
		a->delay_ns = b->delay_ns = (uint64_t)(k->delay_us * 1000 + 0.5);
		a->from = k->sw, a->from_port = k->port, a->to_nic = k->to_nic, a->to = k->b, a->to_port = k->b_port;
		b->from_nic = k->to_nic, b->from = k->b, b->from_port = k->b_port, b->to = k->sw, b->to_port = k->port;
		a->back = 2 * l + 1, b->back = 2 * l;
	}
	for (unsigned n = 0; n < f->n_nics; n++) {
		s->nic[n].out = 2 * f->nics[n].link + 1;
		s->dl[s->nic[n].out].from_port = 0;
	}
}

/* The path's propagation (the reverse path's too) and the flow's completion time alone in the
 * fabric: its first packet stored and forwarded over every hop, the rest at the slowest link. */
static int init_path(struct fabsim *s, struct fab_tracer *t, struct fs_qp *q, struct fab_hop *hops, unsigned max)
{
	int n = fab_flow_links(t, q->cfg->src, q->cfg->dst, &q->cfg->key, hops, max);
	double prop = 0, first = 0, slowest = 0, size = (double)q->cfg->size_bytes;
	double pkt1 = size && size < q->cc->mtu_bytes ? size : q->cc->mtu_bytes;

	if (n < 0)
		return -1;
	for (int h = 0; h < n; h++) {
		const struct fs_dlink *l = &s->dl[hops[h].dlink];
		double kbps = (double)(l->kbps < q->line_kbps ? l->kbps : q->line_kbps);

		s->dl[hops[h].dlink].flows++;
		prop += hops[h].share * (double)l->delay_ns;
		first += hops[h].share * pkt1 * 8e6 / kbps;
		if (slowest == 0 || kbps < slowest)
			slowest = kbps;
	}
	q->back_ns = (uint64_t)(prop + 0.5);
	q->ideal_ns = (uint64_t)(prop + first + (size - pkt1 > 0 ? (size - pkt1) * 8e6 / slowest : 0) + 0.5);
	return 0;
}

static int by_nic_and_start(const void *a, const void *b, void *arg)
{
	const struct fs_flow *f = arg, *x = &f[*(const uint32_t *)a], *y = &f[*(const uint32_t *)b];

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Marks the QPs that start at the same ns as another of their NIC (qp_join). */
static int mark_together(struct fabsim *s)
{
	uint32_t *o = malloc(sizeof(*o) * (s->n_qp ? s->n_qp : 1));

	if (!o)
		return -1;
	for (uint32_t i = 0; i < s->n_qp; i++)
		o[i] = i;
	qsort_r(o, s->n_qp, sizeof(*o), by_nic_and_start, s->fs->flows);
	for (uint32_t i = 1; i < s->n_qp; i++)
		if (!by_nic_and_start(&o[i - 1], &o[i], s->fs->flows))
			s->qp[o[i - 1]].together = s->qp[o[i]].together = true;
	free(o);
	return 0;
}

static int init_qps(struct fabsim *s, char *err, size_t errlen)
{
	const struct fab_scenario *fs = s->fs;
	struct fab_tracer t;
	struct fab_hop *hops = malloc(sizeof(*hops) * 4 * (s->f->n_links + 1));
	int rc = 0;

	if (!hops || fab_tracer_init(&t, s->f, &fs->routes)) {
		free(hops);
		return -1;
	}
	for (unsigned i = 0; i < s->n_qp && !rc; i++) {
		struct fs_qp *q = &s->qp[i];
		const struct fs_flow *c = &fs->flows[i];
		uint64_t nic_kbps = s->dl[s->nic[c->src].out].kbps;

		q->cfg = c;
		q->cc = &fs->traffic[c->traffic].proto;
		q->line_kbps = q->cc->line_kbps && q->cc->line_kbps < nic_kbps ? q->cc->line_kbps : nic_kbps;
		q->n_pkts = c->size_bytes ? (uint32_t)((c->size_bytes + q->cc->mtu_bytes - 1) / q->cc->mtu_bytes) : FS_NO_PKTS;
		q->last_pkt_bytes = c->size_bytes ? (uint32_t)(c->size_bytes - (uint64_t)(q->n_pkts - 1) * q->cc->mtu_bytes)
						  : q->cc->mtu_bytes;
		q->completion_ns = UINT64_MAX;
		if (init_path(s, &t, q, hops, 4 * (s->f->n_links + 1))) {
			snprintf(err, errlen, "%s: no route from %s to %s", s->sc->file, s->f->nics[c->src].name,
				 s->f->nics[c->dst].name);
			rc = -1;
		}
		push(s, (struct ev){ .t = c->start_ns, .type = EV_START, .idx = i });
	}
	fab_tracer_free(&t);
	free(hops);
	return rc ? rc : mark_together(s);
}

int fabsim_init(struct fabsim *s, const struct scenario *sc, FILE *csv, char *err, size_t errlen)
{
	const struct fabric *f = &sc->fab->f;

	memset(s, 0, sizeof(*s));
	s->sc = sc;
	s->fs = sc->fab;
	s->f = f;
	s->csv = csv;
	s->rng = sim_rng_seed(sc->seed);
	heap_init(&s->h);
	s->n_dl = 2 * f->n_links;
	s->n_qp = sc->fab->n_flows;
	s->max_samples = (unsigned)(sc->duration_ns / sc->sample_ns) + 1;
	s->w = malloc(sizeof(*s->w));
	s->dl = calloc(s->n_dl, sizeof(*s->dl));
	s->sw = calloc(f->n_switches, sizeof(*s->sw));
	s->nic = calloc(f->n_nics, sizeof(*s->nic));
	s->qp = calloc(s->n_qp, sizeof(*s->qp));
	snprintf(err, errlen, "roce-ccsim: out of memory");
	if (!s->w || !s->dl || !s->sw || !s->nic || !s->qp)
		return -1;
	for (unsigned d = 0; d < s->n_dl; d++)
		if (!(s->dl[d].util = calloc(s->max_samples, sizeof(float))))
			return -1;
	tw_init(s->w, SIM_TICK_NS, 0);
	init_links(s);
	if (init_switches(s, err, errlen) || init_qps(s, err, errlen))
		return -1;
	s->routes = &sc->fab->routes;
	s->cur_event = -1;
	s->ev = calloc(sc->fab->n_events + 1, sizeof(*s->ev));
	if (!s->ev)
		return -1;
	for (unsigned k = 0; k < sc->fab->n_events; k++)
		push(s, (struct ev){ .t = (uint64_t)(sc->fab->events[k].at_s * 1e9 + 0.5), .type = EV_LINK, .idx = k });
	if (csv)
		fprintf(csv, "time_us,link,direction,gbps,queue_bytes,paused_classes\n");
	push(s, (struct ev){ .t = sc->sample_ns, .type = EV_SAMPLE });
	return 0;
}

void fabsim_free(struct fabsim *s)
{
	for (unsigned d = 0; s->dl && d < s->n_dl; d++) {
		for (unsigned c = 0; c < 8; c++)
			free(s->dl[d].q[c].a);
		free(s->dl[d].util);
	}
	for (unsigned i = 0; s->sw && i < s->f->n_switches; i++)
		free(s->sw[i].out);
	for (unsigned n = 0; s->nic && n < s->f->n_nics; n++)
		for (unsigned c = 0; c < 8; c++)
			free(s->nic[n].ready[c].a);
	if (s->have_converged)
		fab_routes_free(&s->converged);
	free(s->ev);
	free(s->qp);
	free(s->nic);
	free(s->sw);
	free(s->dl);
	free(s->w);
	heap_free(&s->h);
	memset(s, 0, sizeof(*s));
}

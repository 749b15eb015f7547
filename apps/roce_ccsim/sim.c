/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The network simulation, see sim.h. Time is integer: events in ns, link arithmetic in ps (a
 * 1 KB packet at 100 Gb/s takes 81.92 ns; rounding each to a whole ns would run the links 0.1 %
 * slow), events at the ns at or after the exact ps. All randomness is red_rand from one seeded
 * state, drawn in event order, and events of one ns run in the order they were scheduled: the
 * same scenario and seed give the same bytes of output.
 */
#include "sim.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "red.h"

enum {
	EV_START = 1,   /* idx flow */
	EV_SEND,        /* idx flow, x generation */
	EV_SW_ARRIVE,   /* a packet reaches the switch */
	EV_PORT_FREE,   /* idx port: its transmitter is done */
	EV_RX,          /* a packet reaches its receiver */
	EV_CNP,         /* idx flow: a CNP reaches the sender */
	EV_ACK,         /* idx flow, x send time: a TIMELY ACK reaches the sender */
	EV_PAUSE,       /* idx flow, flags 1 XOFF / 0 XON reaches the sender */
	EV_TICK,        /* the timer wheel */
	EV_SAMPLE,
};

enum { PKT_CE = 1, PKT_ACKREQ = 2 };

#define container_of(p, type, member) ((type *)(void *)((char *)(p) - offsetof(type, member)))

static inline uint64_t ceil_ns(uint64_t ps) { return (ps + 999) / 1000; }

/* Serialisation time of `bytes` at `kbps`, in ps. */
static inline uint64_t ser_ps(uint64_t bytes, uint64_t kbps)
{
	return bytes * 8000000000ULL / (kbps ? kbps : 1);
}

static void push(struct sim *s, uint64_t t, uint8_t type, uint32_t idx, uint64_t x)
{
	heap_push(&s->h, (struct ev){ .t = t, .type = type, .idx = idx, .x = x });
}

static void push_pkt(struct sim *s, uint64_t t, uint8_t type, const struct pkt *p)
{
	heap_push(&s->h, (struct ev){ .t = t, .type = type, .idx = p->flow, .bytes = p->bytes, .flags = p->flags,
				      .x = p->send_ns });
}

uint64_t sim_rng_seed(uint64_t seed)
{
	/* splitmix64: nearby seeds give unrelated streams */
	uint64_t z = seed + 0x9E3779B97F4A7C15ULL;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	z ^= z >> 31;
	return z ? z : 1;
}

/* ---- queues ---------------------------------------------------------------------------------- */

static void fifo_push(struct fifo *q, const struct pkt *p)
{
	if (q->n == q->cap) {
		uint32_t cap = q->cap ? q->cap * 2 : 256;
		struct pkt *a = malloc(cap * sizeof(*a));

		if (!a) {
			fprintf(stderr, "roce-ccsim: out of memory (queue of %u packets)\n", q->n);
			exit(1);
		}
		for (uint32_t i = 0; i < q->n; i++)
			a[i] = q->a[(q->head + i) & (q->cap - 1)];
		free(q->a);
		q->a = a;
		q->cap = cap;
		q->head = 0;
	}
	q->a[(q->head + q->n) & (q->cap - 1)] = *p;
	q->n++;
	q->bytes += p->bytes;
}

static struct pkt fifo_pop(struct fifo *q)
{
	struct pkt p = q->a[q->head];

	q->head = (q->head + 1) & (q->cap - 1);
	q->n--;
	q->bytes -= p.bytes;
	return p;
}

/* ---- sender ---------------------------------------------------------------------------------- */

/* With jitter_us, each packet starts a random 0..jitter after its pacing time, but the pacing
 * itself goes on from the nominal times: the mean rate stays exact, and identical senders lose
 * the lock-step that lets a deterministic simulation hand one of them every free buffer slot. */
static void schedule_send(struct sim *s, struct flow *f)
{
	uint64_t jitter_ps = f->cfg->jitter_ns * 1000;

	if (!f->started || f->done || f->paused)
		return;
	f->send_gen++;
	f->send_pending = true;
	f->jit_ps = jitter_ps ? red_rand(&s->rng) % (jitter_ps + 1) : 0;
	push(s, ceil_ns(f->next_ps + f->jit_ps), EV_SEND, (uint32_t)(f - s->f), f->send_gen);
}

/* A new pacing rate applies at once: the gap after the last packet is recomputed from its start,
 * and a send already scheduled moves (earlier or later). */
static void set_rate(struct sim *s, struct flow *f, uint64_t kbps)
{
	uint64_t now_ps = s->now * 1000;

	f->rate_kbps = kbps ? kbps : 1;
	if (!f->last_bytes)
		return;
	f->next_ps = f->last_start_ps + ser_ps(f->last_bytes, f->rate_kbps);
	if (f->next_ps < now_ps)
		f->next_ps = now_ps;
	if (f->send_pending)
		schedule_send(s, f);
}

static void flow_start(struct sim *s, struct flow *f)
{
	const struct sc_flow *c = f->cfg;

	f->started = true;
	f->to_send = c->size_bytes ? c->size_bytes : UINT64_MAX;
	f->next_ps = f->nic_free_ps = s->now * 1000;
	switch (c->cc) {
	case CC_DCQCN:
		dcqcn_init(&f->dcqcn, &c->dcqcn, c->line_kbps, s->now);
		f->rate_kbps = f->dcqcn.rc_kbps;
		break;
	case CC_TIMELY:
		timely_init(&f->timely, &c->timely, c->line_kbps, c->timely_start_kbps);
		f->rate_kbps = f->timely.rate_kbps;
		break;
	case CC_NONE:
		f->rate_kbps = c->line_kbps;
		break;
	}
	schedule_send(s, f);
}

/* TIMELY asks for an ACK at the end of each segment (and of the flow). */
static uint8_t ack_flag(struct flow *f, uint32_t bytes)
{
	if (f->cfg->cc != CC_TIMELY)
		return 0;
	f->seg_bytes += bytes;
	if (f->seg_bytes < f->cfg->timely_segment_bytes && f->to_send > bytes)
		return 0;
	f->seg_bytes = 0;
	return PKT_ACKREQ;
}

static void ev_send(struct sim *s, struct flow *f, uint64_t gen)
{
	const struct sc_flow *c = f->cfg;
	uint64_t start = f->next_ps + f->jit_ps > f->nic_free_ps ? f->next_ps + f->jit_ps : f->nic_free_ps;
	struct pkt p = { .send_ns = start / 1000, .flow = (uint32_t)(f - s->f) };

	if (gen != f->send_gen || !f->send_pending || f->paused || f->done)
		return; /* superseded by a rate change or a pause */
	f->send_pending = false;
	p.bytes = (uint32_t)(f->to_send < c->mtu_bytes ? f->to_send : c->mtu_bytes);
	p.flags = ack_flag(f, p.bytes);
	f->nic_free_ps = start + ser_ps(p.bytes, c->line_kbps);
	push_pkt(s, ceil_ns(f->nic_free_ps + c->delay_ns * 1000), EV_SW_ARRIVE, &p);
	f->sent_bytes += p.bytes;
	f->sent_pkts++;
	if (f->to_send != UINT64_MAX)
		f->to_send -= p.bytes;
	/* Pacing goes on from the nominal start even when jitter or the busy NIC delayed this packet:
	 * the lag stays bounded (by the jitter) instead of adding up. */
	f->last_start_ps = f->next_ps;
	f->last_bytes = p.bytes;
	f->next_ps = f->last_start_ps + ser_ps(p.bytes, f->rate_kbps);
	if (c->cc == CC_DCQCN && dcqcn_on_bytes(&f->dcqcn, s->w, p.bytes, s->now))
		set_rate(s, f, f->dcqcn.rc_kbps);
	if (f->to_send == 0) {
		f->done = true;
		if (c->cc == CC_DCQCN)
			dcqcn_stop(&f->dcqcn, s->w);
		return;
	}
	schedule_send(s, f);
}

static void ev_cnp(struct sim *s, struct flow *f)
{
	f->cnp_rx++;
	if (f->cfg->cc != CC_DCQCN || f->done)
		return;
	if (dcqcn_on_cnp(&f->dcqcn, s->w, s->now))
		set_rate(s, f, f->dcqcn.rc_kbps);
}

static void ev_ack(struct sim *s, struct flow *f, uint64_t send_ns)
{
	f->acks++;
	if (f->done)
		return;
	if (timely_on_rtt(&f->timely, s->now - send_ns))
		set_rate(s, f, f->timely.rate_kbps);
}

/* PFC at the sender: XOFF stops the flow before its next packet (the one on the wire finishes);
 * XON lets it go on at its pacing time, or now if that has passed. */
static void ev_pause(struct sim *s, struct flow *f, bool xoff)
{
	if (xoff && !f->paused) {
		f->paused = true;
		f->send_pending = false;
		f->pauses++;
		f->paused_since = s->now;
	} else if (!xoff && f->paused) {
		f->paused = false;
		f->paused_ns += s->now - f->paused_since;
		if (f->next_ps < s->now * 1000)
			f->next_ps = s->now * 1000;
		schedule_send(s, f);
	}
}

/* ---- switch ---------------------------------------------------------------------------------- */

/* PFC per ingress port and priority; each flow has its own ingress port. The frame reaches the
 * sender one propagation delay later. */
static void pfc_check(struct sim *s, struct flow *f)
{
	const struct sc_switch *sw = &s->sc->sw;
	uint32_t idx = (uint32_t)(f - s->f);

	if (!sw->pfc || !(sw->pfc_prio_mask & (1u << f->cfg->priority)))
		return;
	if (!f->xoff && f->ingress_bytes > sw->xoff_bytes) {
		f->xoff = true;
		heap_push(&s->h, (struct ev){ .t = s->now + f->cfg->delay_ns, .type = EV_PAUSE, .idx = idx, .flags = 1 });
	} else if (f->xoff && f->ingress_bytes <= sw->xon_bytes) {
		f->xoff = false;
		heap_push(&s->h, (struct ev){ .t = s->now + f->cfg->delay_ns, .type = EV_PAUSE, .idx = idx, .flags = 0 });
	}
}

/* Dequeues the next packet (strict priority, highest class first) and starts sending it; RED
 * marks it on the queue it leaves behind (the instantaneous queue at dequeue). back_to_back: the
 * transmitter just finished, so this packet starts at that exact ps. */
static void port_start(struct sim *s, struct port *pt, bool back_to_back)
{
	const struct sc_switch *sw = &s->sc->sw;
	uint64_t start;
	struct flow *f;
	struct pkt p;
	int c;

	for (c = SC_CLASSES - 1; c >= 0 && !pt->q[c].n; c--)
		;
	if (c < 0) {
		pt->busy = false;
		return;
	}
	p = fifo_pop(&pt->q[c]);
	f = &s->f[p.flow];
	s->buf_used -= p.bytes;
	f->ingress_bytes -= p.bytes;
	pfc_check(s, f);
	if (sw->ecn[c] && red_should_mark(&sw->red[c], pt->q[c].bytes, &s->rng)) {
		p.flags |= PKT_CE;
		pt->marked_pkts++;
		f->ce_pkts++;
	}
	start = back_to_back ? pt->free_ps : s->now * 1000;
	pt->free_ps = start + ser_ps(p.bytes, pt->cfg->rate_kbps);
	pt->busy = true;
	pt->tx_pkts++;
	push(s, ceil_ns(pt->free_ps), EV_PORT_FREE, (uint32_t)(pt - s->p), 0);
	push_pkt(s, ceil_ns(pt->free_ps + pt->cfg->delay_ns * 1000), EV_RX, &p);
}

static void ev_sw_arrive(struct sim *s, const struct pkt *p)
{
	struct flow *f = &s->f[p->flow];
	struct port *pt = &s->p[f->cfg->receiver];
	struct fifo *q = &pt->q[f->cfg->priority];
	uint64_t limit = s->sc->sw.buffer_bytes;

	if (limit && s->buf_used + p->bytes > limit) {
		f->drop_pkts++;
		f->drop_bytes += p->bytes;
		return;
	}
	fifo_push(q, p);
	s->buf_used += p->bytes;
	if (s->buf_used > s->buf_max)
		s->buf_max = s->buf_used;
	if (q->bytes > pt->max_q[f->cfg->priority])
		pt->max_q[f->cfg->priority] = q->bytes;
	f->ingress_bytes += p->bytes;
	pfc_check(s, f);
	if (!pt->busy)
		port_start(s, pt, false);
}

/* ---- receiver -------------------------------------------------------------------------------- */

static void ev_rx(struct sim *s, const struct pkt *p)
{
	struct flow *f = &s->f[p->flow];
	const struct sc_receiver *r = &s->sc->rx[f->cfg->receiver];
	uint64_t back = s->now + r->delay_ns + f->cfg->delay_ns; /* the reverse path does not queue */

	f->rx_bytes += p->bytes;
	f->rx_pkts++;
	if (s->now >= s->sc->win_start_ns && s->now <= s->sc->win_end_ns)
		f->win_rx_bytes += p->bytes;
	if (f->cfg->size_bytes && f->rx_bytes == f->cfg->size_bytes)
		f->completion_ns = s->now;
	if ((p->flags & PKT_CE) && f->cfg->cc == CC_DCQCN && np_on_ce(&f->np, &r->np, s->now))
		push(s, back, EV_CNP, p->flow, 0);
	if (p->flags & PKT_ACKREQ)
		push(s, back, EV_ACK, p->flow, p->send_ns);
}

/* ---- timers and samples ---------------------------------------------------------------------- */

static void on_timer(struct tw_timer *t, uint64_t due_ns, void *arg)
{
	struct sim *s = arg;
	struct flow *f = container_of(dcqcn_qp_of_timer(t), struct flow, dcqcn);

	if (dcqcn_on_timer(&f->dcqcn, s->w, t, due_ns))
		set_rate(s, f, f->dcqcn.rc_kbps);
}

/* The wheel runs at tick boundaries while it holds timers, as the engine polls it: a timer fires
 * at the first boundary at or after its due time (the cc code gets the exact due time). */
static void ensure_tick(struct sim *s)
{
	if (s->tick_pending || !s->w->armed)
		return;
	push(s, sim_next_tick_ns(s->w, s->now), EV_TICK, 0, 0);
	s->tick_pending = true;
}

static void sample_flow(struct sim *s, struct flow *f)
{
	const struct sc_flow *c = f->cfg;
	bool active = f->started && !f->done;
	uint64_t rate = active ? f->rate_kbps : 0, target = rate;
	double alpha = 0;

	if (c->cc == CC_DCQCN && f->started) {
		alpha = dcqcn_alpha_fraction(&f->dcqcn, dcqcn_alpha(&f->dcqcn, s->now));
		if (active)
			target = f->dcqcn.rt_kbps;
	}
	if (s->now >= s->sc->win_start_ns && s->now <= s->sc->win_end_ns) {
		f->rate_sum_gbps += (double)rate / 1e6;
		f->rate_samples++;
	}
	if (s->csv)
		fprintf(s->csv, "%llu.%03llu,%u,%llu.%06llu,%llu.%06llu,%.6f,%llu,%llu,%d\n",
			(unsigned long long)(s->now / 1000), (unsigned long long)(s->now % 1000),
			(unsigned)(f - s->f), (unsigned long long)(rate / 1000000),
			(unsigned long long)(rate % 1000000), (unsigned long long)(target / 1000000),
			(unsigned long long)(target % 1000000), alpha,
			(unsigned long long)s->p[c->receiver].q[c->priority].bytes, (unsigned long long)f->cnp_rx,
			f->paused ? 1 : 0);
}

static void ev_sample(struct sim *s)
{
	for (unsigned i = 0; i < s->nf; i++)
		sample_flow(s, &s->f[i]);
	if (s->now + s->sc->sample_ns <= s->sc->duration_ns)
		push(s, s->now + s->sc->sample_ns, EV_SAMPLE, 0, 0);
}

/* ---- the loop -------------------------------------------------------------------------------- */

static void dispatch(struct sim *s, const struct ev *e)
{
	struct pkt p = { .send_ns = e->x, .flow = e->idx, .bytes = e->bytes, .flags = e->flags };

	switch (e->type) {
	case EV_START: flow_start(s, &s->f[e->idx]); break;
	case EV_SEND: ev_send(s, &s->f[e->idx], e->x); break;
	case EV_SW_ARRIVE: ev_sw_arrive(s, &p); break;
	case EV_PORT_FREE: port_start(s, &s->p[e->idx], true); break;
	case EV_RX: ev_rx(s, &p); break;
	case EV_CNP: ev_cnp(s, &s->f[e->idx]); break;
	case EV_ACK: ev_ack(s, &s->f[e->idx], e->x); break;
	case EV_PAUSE: ev_pause(s, &s->f[e->idx], e->flags); break;
	case EV_TICK:
		s->tick_pending = false;
		tw_advance(s->w, s->now, on_timer, s);
		break;
	case EV_SAMPLE: ev_sample(s); break;
	}
}

/* What is left when the clock stops: packets in the switch's queues and on the wires. */
static void account_leftovers(struct sim *s)
{
	for (unsigned i = 0; i < s->np; i++)
		for (unsigned c = 0; c < SC_CLASSES; c++) {
			const struct fifo *q = &s->p[i].q[c];

			for (uint32_t k = 0; k < q->n; k++) {
				const struct pkt *p = &q->a[(q->head + k) & (q->cap - 1)];

				s->f[p->flow].queued_bytes += p->bytes;
			}
		}
	for (size_t k = 0; k < s->h.n; k++) {
		const struct ev *e = &s->h.a[k];

		if (e->type == EV_SW_ARRIVE || e->type == EV_RX)
			s->f[e->idx].in_flight_bytes += e->bytes;
	}
	for (unsigned i = 0; i < s->nf; i++)
		if (s->f[i].paused)
			s->f[i].paused_ns += s->sc->duration_ns - s->f[i].paused_since;
}

void sim_run(struct sim *s)
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
	account_leftovers(s);
}

int sim_init(struct sim *s, const struct scenario *sc, FILE *csv)
{
	memset(s, 0, sizeof(*s));
	s->sc = sc;
	s->csv = csv;
	s->rng = sim_rng_seed(sc->seed);
	heap_init(&s->h);
	s->w = malloc(sizeof(*s->w));
	s->f = calloc(sc->n_flows, sizeof(*s->f));
	s->p = calloc(sc->n_rx, sizeof(*s->p));
	if (!s->w || !s->f || !s->p) {
		fprintf(stderr, "roce-ccsim: out of memory\n");
		sim_free(s);
		return -1;
	}
	tw_init(s->w, SIM_TICK_NS, 0);
	s->nf = sc->n_flows;
	s->np = sc->n_rx;
	for (unsigned i = 0; i < s->np; i++)
		s->p[i].cfg = &sc->rx[i];
	for (unsigned i = 0; i < s->nf; i++) {
		s->f[i].cfg = &sc->flows[i];
		s->f[i].completion_ns = UINT64_MAX;
		push(s, sc->flows[i].start_ns, EV_START, i, 0);
	}
	if (csv)
		fprintf(csv, "time_us,flow,rate_gbps,target_gbps,alpha,queue_bytes,cnp_rx,paused\n");
	push(s, 0, EV_SAMPLE, 0, 0);
	return 0;
}

void sim_free(struct sim *s)
{
	for (unsigned i = 0; s->p && i < s->np; i++)
		for (unsigned c = 0; c < SC_CLASSES; c++)
			free(s->p[i].q[c].a);
	free(s->p);
	free(s->f);
	free(s->w);
	heap_free(&s->h);
	memset(s, 0, sizeof(*s));
}

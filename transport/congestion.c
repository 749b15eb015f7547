/* SPDX-License-Identifier: BSD-3-Clause */
#include <stddef.h>

#include <rte_prefetch.h>

#include "clock.h"
#include "congestion.h"
#include "counters.h"
#include "pace_time.h"

uint64_t congestion_line_kbps(const struct cfg_flow_group *g, double link_gbps)
{
	if (g->rate_gbps > 0)
		return (uint64_t)(g->rate_gbps * 1e6 + 0.5);
	if (g->cc == CFG_CC_DCQCN && g->dcqcn.profile == DCQCN_NVIDIA && g->dcqcn.rpg_max_rate)
		return (uint64_t)g->dcqcn.rpg_max_rate * 1000;
	return (uint64_t)((link_gbps > 0 ? link_gbps : 100.0) * 1e6 + 0.5);
}

static uint64_t rate_of(const struct qp_cc *c)
{
	return c->algo == CFG_CC_DCQCN ? __atomic_load_n(&c->u.d.rc_kbps, __ATOMIC_RELAXED)
				       : __atomic_load_n(&c->u.t.rate_kbps, __ATOMIC_RELAXED);
}

/* The algorithm's rate into the QP's pacing (a double division per rate change, never per
 * packet). */
static void apply_rate(struct cc_lcore *l, struct qp_cc *c)
{
	uint64_t kbps = rate_of(c);

	if (kbps == c->applied_kbps)
		return;
	__atomic_store_n(c->tx->fp_per_byte, pace_fp_per_byte((double)kbps * 1e-6, l->tsc_hz), __ATOMIC_RELAXED);
	__atomic_store_n(&c->applied_kbps, kbps, __ATOMIC_RELAXED);
	STAT_ADD(c->rate_changes, 1);
	if (kbps < c->min_kbps)
		__atomic_store_n(&c->min_kbps, kbps, __ATOMIC_RELAXED);
}

/* The bytes the QP sent since the reaction point last saw them go to its byte counter. */
static void flush_bytes(struct qp_cc *c, uint64_t now_ns)
{
	uint64_t bytes = c->tx->bytes;

	c->tx->bytes = 0;
	while (bytes && c->algo == CFG_CC_DCQCN) { /* in steps that fit the event's 32-bit count */
		uint32_t step = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
		dcqcn_on_bytes(&c->u.d, NULL, step, now_ns);
		bytes -= step;
	}
}

/* How many more bytes the QP may send before the byte counter has something to do. */
static void sync_bytes_due(struct qp_cc *c)
{
	const struct dcqcn_qp *q = &c->u.d;
	uint64_t th;

	if (c->algo != CFG_CC_DCQCN || !q->seen_cnp || (th = dcqcn_byte_threshold(q)) == 0)
		c->tx->bytes_due = UINT64_MAX;
	else
		c->tx->bytes_due = th > q->bytes ? th - q->bytes : 1;
}

/* When the QP's next timer is due, on the TSC (rounded up: at that TSC time the timer is due). */
static void sync_due(struct qp_cc *c)
{
	uint64_t due = c->algo == CFG_CC_DCQCN ? dcqcn_next_due(&c->u.d) : UINT64_MAX;

	c->tx->due_tsc = due == UINT64_MAX ? UINT64_MAX : clock_ns_to_tsc(due) + 1;
}

/* After every event: what the sending side checks (rate, byte count, next timer). */
static void sync_qp(struct cc_lcore *l, struct qp_cc *c)
{
	apply_rate(l, c);
	sync_bytes_due(c);
	sync_due(c);
}

void congestion_qp_init(struct qp_cc *c, struct qp_tx *qp, struct cc_tx_link *tx, unsigned algo, uint32_t index,
			uint64_t line_kbps, uint64_t now_ns, const struct dcqcn_params *dcqcn,
			const struct timely_params *timely)
{
	c->qp = qp;
	c->tx = tx;
	c->algo = (uint8_t)algo;
	c->index = index;
	c->line_kbps = line_kbps;
	if (algo == CFG_CC_DCQCN)
		dcqcn_init(&c->u.d, dcqcn, line_kbps, now_ns);
	else
		timely_init(&c->u.t, timely, line_kbps, line_kbps);
	c->applied_kbps = 0;
	c->min_kbps = UINT64_MAX;
	tx->bytes = 0;
	sync_bytes_due(c);
	sync_due(c);
	if (c->lcore) { /* the lcore's states span (the engine sets c->lcore first) */
		if (!c->lcore->states_lo || (const char *)c < c->lcore->states_lo)
			c->lcore->states_lo = (const char *)c;
		if ((const char *)(c + 1) > c->lcore->states_hi)
			c->lcore->states_hi = (const char *)(c + 1);
	}
}

void congestion_prefetch(const struct qp_cc *c)
{
	const char *p = (const char *)c, *end = p + sizeof(*c);

	for (p = (const char *)((uintptr_t)p & ~(uintptr_t)(RTE_CACHE_LINE_SIZE - 1)); p < end; p += RTE_CACHE_LINE_SIZE)
		rte_prefetch0(p);
}

void congestion_lcore_init(struct cc_lcore *l, uint64_t tsc_hz)
{
	l->tsc_hz = tsc_hz;
}

static void trace_put(struct cc_lcore *l, struct qp_cc *c, uint8_t event, uint64_t now_ns)
{
	struct cc_trace_ring *r = l->trace;
	struct cc_view v;
	struct cc_trace_row *row;
	uint64_t head = r->head;

	if (head - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) >= CC_TRACE_RING) {
		STAT_ADD(r->dropped, 1);
		return;
	}
	congestion_view(c, &v);
	if (c->algo == CFG_CC_DCQCN) /* the owner may bring α up to date */
		v.alpha = dcqcn_alpha_fraction(&c->u.d, dcqcn_alpha(&c->u.d, now_ns));
	row = &r->row[head % CC_TRACE_RING];
	*row = (struct cc_trace_row){.time_ns = now_ns, .qp = c->index, .event = event, .stage = v.stage,
				     .rate_kbps = v.rate_kbps, .target_kbps = v.target_kbps,
				     .alpha_ppm = (uint32_t)(v.alpha * 1e6 + 0.5), .cnps = v.cnps, .cuts = v.cuts};
	__atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
}

void congestion_on_cnp(struct cc_lcore *l, struct qp_cc *c, uint64_t now_tsc)
{
	uint64_t now_ns = clock_tsc_to_ns(now_tsc);

	STAT_ADD(c->cnp_rx, 1);
	if (c->algo != CFG_CC_DCQCN)
		return; /* TIMELY reacts to delay, not to CNPs (they are still counted) */
	flush_bytes(c, now_ns); /* what was sent before the CNP counts before it */
	dcqcn_on_cnp(&c->u.d, NULL, now_ns); /* (the timers due before it run first) */
	sync_qp(l, c);
	if (c->traced && l->trace)
		trace_put(l, c, CC_EV_CNP, now_ns);
}

void congestion_on_sent(struct cc_lcore *l, struct qp_cc *c, uint64_t now_tsc)
{
	flush_bytes(c, clock_tsc_to_ns(now_tsc));
	sync_qp(l, c);
}

void congestion_catch_up(struct cc_lcore *l, struct qp_cc *c, uint64_t now_tsc)
{
	uint64_t now_ns = clock_tsc_to_ns(now_tsc);

	if (c->algo != CFG_CC_DCQCN)
		return;
	flush_bytes(c, now_ns); /* sent before the timers' times: a cut among them clears it */
	dcqcn_catch_up(&c->u.d, NULL, now_ns);
	sync_qp(l, c);
}

void congestion_finish(struct cc_lcore *l, uint64_t now_tsc)
{
	for (const char *p = l->states_lo; p && p < l->states_hi; p += sizeof(struct qp_cc)) {
		struct qp_cc *c = (struct qp_cc *)(uintptr_t)p;

		if (c->lcore == l)
			congestion_catch_up(l, c, now_tsc);
	}
}

void congestion_on_rtt(struct cc_lcore *l, struct qp_cc *c, uint64_t rtt_ns, uint64_t now_tsc)
{
	if (c->algo != CFG_CC_TIMELY)
		return;
	if (timely_on_rtt(&c->u.t, rtt_ns))
		apply_rate(l, c);
	if (c->traced && l->trace)
		trace_put(l, c, CC_EV_RTT, clock_tsc_to_ns(now_tsc));
}

void congestion_poll(struct cc_lcore *l, uint64_t now_tsc)
{
	uint64_t now_ns;

	if (!l->trace)
		return;
	now_ns = clock_tsc_to_ns(now_tsc);
	if (now_ns >= l->next_trace_ns) {
		for (unsigned i = 0; i < l->n_traced; i++) {
			congestion_catch_up(l, l->traced[i], now_tsc); /* its timers due by now */
			trace_put(l, l->traced[i], l->next_trace_ns == 0 ? CC_EV_START : CC_EV_INTERVAL, now_ns);
		}
		l->next_trace_ns = (l->next_trace_ns ? l->next_trace_ns : now_ns) + l->trace_every_ns;
		if (l->next_trace_ns < now_ns) /* far behind: no catching up in a burst of rows */
			l->next_trace_ns = now_ns + l->trace_every_ns;
	}
}

void congestion_view(const struct qp_cc *c, struct cc_view *v)
{
	*v = (struct cc_view){.rate_kbps = rate_of(c), .cnps = __atomic_load_n(&c->cnp_rx, __ATOMIC_RELAXED)};
	if (c->algo == CFG_CC_DCQCN) {
		const struct dcqcn_qp *q = &c->u.d;
		v->target_kbps = __atomic_load_n(&q->rt_kbps, __ATOMIC_RELAXED);
		v->alpha = dcqcn_alpha_fraction(q, __atomic_load_n(&q->alpha, __ATOMIC_RELAXED));
		v->stage = __atomic_load_n(&q->stage, __ATOMIC_RELAXED);
		v->cuts = __atomic_load_n(&q->c.cuts, __ATOMIC_RELAXED);
		v->increases = __atomic_load_n(&q->c.fast, __ATOMIC_RELAXED) +
			       __atomic_load_n(&q->c.additive, __ATOMIC_RELAXED) +
			       __atomic_load_n(&q->c.hyper, __ATOMIC_RELAXED);
	} else {
		const struct timely_qp *q = &c->u.t;
		v->target_kbps = v->rate_kbps;
		v->cuts = __atomic_load_n(&q->c.decreases, __ATOMIC_RELAXED);
		v->increases = __atomic_load_n(&q->c.increases, __ATOMIC_RELAXED);
	}
}

const char *congestion_algo_name(unsigned algo)
{
	return algo == CFG_CC_DCQCN ? "dcqcn" : algo == CFG_CC_TIMELY ? "timely" : "none";
}

const char *congestion_stage_name(unsigned stage)
{
	static const char *const names[] = { "none", "fast_recovery", "additive", "hyper" };

	return stage < 4 ? names[stage] : "?";
}

void congestion_trace_header(FILE *csv)
{
	fprintf(csv, "time_ns,qp,event,rate_gbps,target_gbps,alpha,stage,cnps,cuts\n");
}

unsigned congestion_trace_drain(struct cc_trace_ring *r, FILE *csv)
{
	static const char *const ev[] = { "interval", "cnp", "rtt", "start" };
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE), tail = r->tail;
	unsigned n = 0;

	for (; tail != head; tail++, n++) {
		const struct cc_trace_row *x = &r->row[tail % CC_TRACE_RING];
		fprintf(csv, "%llu,%u,%s,%.6f,%.6f,%.6f,%s,%llu,%llu\n", (unsigned long long)x->time_ns, x->qp,
			ev[x->event & 3], (double)x->rate_kbps * 1e-6, (double)x->target_kbps * 1e-6,
			(double)x->alpha_ppm * 1e-6, congestion_stage_name(x->stage), (unsigned long long)x->cnps,
			(unsigned long long)x->cuts);
	}
	__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
	return n;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The requester's sending side: the group's and a QP's state set up, pacing, which message comes
 * next (sizes and operations drawn, RC's sent again), whether a QP may send, and the loops that
 * fill a TX role's mbufs (packet by packet, or whole calls of shapes for fast QPs). The packets'
 * bytes come from tx_template.c and tx_shapes.c, RC's log is rc_log.c's (requester_internal.h).
 */
#include <string.h>

#include <rte_mbuf.h>

#include "clock.h"
#include "congestion.h"
#include "counters.h"
#include "exp_table.h" /* exp_q16[]: exponential variates by lookup (generated) */
#include "inject.h"
#include "requester_internal.h"
#include "tx_payload.h"

/* Group constants of pacing, stop and the RC timers. */
static void init_group_pacing(struct qp_group_tx *sh, const struct cfg_flow_group *g, uint64_t tsc_hz,
			      uint64_t start_tsc)
{
	double one = (double)(1u << PACE_SHIFT);

	if (g->rate_pps > 0)
		sh->fp_per_pkt = (uint64_t)((double)tsc_hz / g->rate_pps * one);
	if (g->pattern == CFG_PATTERN_ONOFF) {
		sh->onoff_on_fp = (uint64_t)(g->on_us * 1e-6 * (double)tsc_hz * one);
		sh->onoff_off_fp = (uint64_t)(g->off_us * 1e-6 * (double)tsc_hz * one);
	}
	sh->start_tsc = start_tsc + (uint64_t)(g->start_s * (double)tsc_hz);
	sh->stop_tsc = g->stop_seconds > 0 ? sh->start_tsc + (uint64_t)(g->stop_seconds * (double)tsc_hz) : 0;
	sh->rel = (struct rc_rel_params){.timeout_tsc = (uint64_t)(g->retry_timeout_us * 1e-6 * (double)tsc_hz),
					 .tsc_per_us = tsc_hz / 1000000,
					 .retry_limit = g->retry_limit,
					 .max_outstanding = g->max_outstanding};
	sh->latency_timeout_tsc = (uint64_t)(g->latency_timeout_us * 1e-6 * (double)tsc_hz);
}

static void init_pacing(struct qp_tx *qp, const struct cfg_flow_group *g, uint64_t tsc_hz)
{
	const struct qp_group_tx *sh = qp->sh;

	qp->next_fp = sh->start_tsc << PACE_SHIFT;
	if (g->rate_gbps > 0)
		qp->fp_per_byte = pace_fp_per_byte(g->rate_gbps, tsc_hz);
	/* stagger the group's QPs over one packet time, so that thousands of slow QPs do not all
	 * fall due at the same instant at start-up */
	if (g->count > 1) {
		uint32_t typical = (g->msg_size.max < g->ib_mtu ? g->msg_size.max : g->ib_mtu) + 90;
		uint64_t gap = sh->fp_per_pkt + qp->fp_per_byte * typical;
		qp->next_fp += (uint64_t)((double)gap * qp->index / g->count);
	}
	if (sh->onoff_on_fp)
		qp->x->onoff_end_fp = qp->next_fp + sh->onoff_on_fp;
}

/* The pacing time a shape's packet takes at a time per byte (frame + FCS), at least one tick:
 * unpaced QPs of a role then take turns instead of the first one staying at the top of the heap. */
static inline uint64_t shape_gap(const struct qp_group_tx *sh, uint64_t per_byte, const struct qp_shape *s)
{
	uint64_t gap = sh->fp_per_pkt + per_byte * s->wire_len;

	return gap ? gap : 1;
}

void qp_tx_set_rate(struct qp_tx *qp, double gbps, uint64_t tsc_hz)
{
	__atomic_store_n(&qp->fp_per_byte, pace_fp_per_byte(gbps, tsc_hz), __ATOMIC_RELAXED);
}

void qp_tx_shift_time(struct qp_tx *qp, uint64_t delta_tsc)
{
	qp->next_fp += delta_tsc << PACE_SHIFT;
	if (qp->index == 0) { /* the group's, once */
		qp->sh->start_tsc += delta_tsc;
		if (qp->sh->stop_tsc)
			qp->sh->stop_tsc += delta_tsc;
	}
	if (qp->x) {
		if (qp->sh->onoff_on_fp)
			qp->x->onoff_end_fp += delta_tsc << PACE_SHIFT;
		qp->x->rel.progress_tsc += delta_tsc;
	}
}

static uint32_t pick_size(struct qp_tx *qp, const struct cfg_size *sz)
{
	uint64_t v;

	switch (sz->dist) {
	case CFG_SIZE_UNIFORM:
		return sz->min + rng_below(&qp->x->rng, sz->max - sz->min + 1);
	case CFG_SIZE_EXPONENTIAL:
		v = ((uint64_t)sz->mean * exp_q16[rng_below(&qp->x->rng, EXP_Q16_N)]) >> 16;
		return v < sz->min ? sz->min : v > sz->max ? sz->max : (uint32_t)v;
	case CFG_SIZE_FIXED:
	default:
		return sz->fixed;
	}
}

static uint8_t pick_op(struct qp_tx *qp)
{
	const unsigned *w = qp->group->op_weight;
	unsigned total = 0, r;

	if (qp->sh->only_op >= 0) /* one operation: no draw */
		return (uint8_t)qp->sh->only_op;
	for (int i = 0; i < CFG_OP_COUNT; i++)
		total += w[i];
	r = rng_below(&qp->x->rng, total);
	for (int i = 0; i < CFG_OP_COUNT; i++) {
		if (r < w[i])
			return (uint8_t)i;
		r -= w[i];
	}
	return CFG_OP_SEND;
}

static uint32_t npsn_of(uint8_t op, uint32_t len, uint32_t mtu)
{
	if (op == CFG_OP_FETCH_ADD || op == CFG_OP_COMPARE_SWAP)
		return 1;
	/* SEND/WRITE: one PSN per packet; a READ one per response packet: the same count */
	return len ? (len + mtu - 1) / mtu : 1;
}

/* The next message: the one to send again after a rewind, else a new one (logged for RC). */
static void start_message(struct qp_tx *qp)
{
	bool rc = qp->group->transport == CFG_RC;

	if (rc && qp->x->cur < qp->log_n) {
		const struct qp_msg *m = log_at(qp, qp->x->cur);
		qp->msg_op = m->op;
		qp->msg_len = m->len;
		qp->psn = m->first_psn;
	} else {
		qp->msg_op = pick_op(qp);
		qp->msg_len = qp->msg_op >= CFG_OP_FETCH_ADD ? ATOMIC_LEN : pick_size(qp, &qp->group->msg_size);
		if (rc) {
			*log_at(qp, qp->log_n) = (struct qp_msg){.first_psn = qp->psn, .len = qp->msg_len, .op = qp->msg_op,
								 .npsn = npsn_of(qp->msg_op, qp->msg_len, qp->group->ib_mtu),
								 .sent_tsc = 0};
			qp->x->cur = qp->log_n++;
		}
	}
	qp->msg_off = 0;
	qp->in_message = true;
}

/* Time the packet just sent occupies at the flow's rate, and the ON/OFF gaps. */
static void advance_pacing(struct qp_tx *qp, uint16_t frame_len)
{
	const struct qp_group_tx *sh = qp->sh;
	uint64_t gap = sh->fp_per_pkt + qp->fp_per_byte * (uint64_t)(frame_len + 4);

	if (qp->group->pattern == CFG_PATTERN_POISSON)
		gap = (gap >> 8) * exp_q16[rng_below(&qp->x->rng, EXP_Q16_N)] >> 8;
	/* at least one tick: unpaced QPs of a role then take turns instead of the first one
	 * staying at the top of the heap */
	qp->next_fp += gap ? gap : 1;
	if (sh->onoff_on_fp && qp->next_fp >= qp->x->onoff_end_fp) {
		qp->next_fp = qp->x->onoff_end_fp + sh->onoff_off_fp;
		qp->x->onoff_end_fp = qp->next_fp + sh->onoff_on_fp;
	}
}

static void check_stop(struct qp_tx *qp, uint64_t now_tsc)
{
	const struct cfg_flow_group *g = qp->group;

	if ((g->stop_messages && qp->c.messages >= g->stop_messages) ||
	    (qp->sh->coll && !qp->sh->coll->cfg->repeat && qp->c.messages >= qp->sh->coll->cfg->phases) ||
	    (g->stop_bytes && qp->c.payload_bytes >= g->stop_bytes) || (qp->sh->stop_tsc && now_tsc >= qp->sh->stop_tsc))
		qp->stopping = true;
	/* an RC QP is done when everything it sent has been acknowledged, a ping-pong QP when its
	 * last message is back (or lost) */
	qp->done = qp->stopping && (g->transport != CFG_RC || qp->log_n == 0) && !(qp->lat && qp->lat->waiting);
}

/* ---- one packet --------------------------------------------------------------------------- */

static void plan_packet(const struct qp_tx *qp, struct pkt_plan *pp)
{
	uint32_t mtu = qp->group->ib_mtu, left = qp->msg_len - qp->msg_off;

	if (single_request(qp->msg_op)) {
		pp->pos = POS_ONLY;
		pp->payload = 0;
	} else {
		pp->payload = left < mtu ? left : mtu;
		pp->pos = (enum seg_pos)wire_pos_of(qp->msg_off == 0, left <= mtu);
	}
	pp->opcode = qp->sh->opcode[qp->msg_op][pp->pos];
	pp->ackreq = qp->group->transport == CFG_RC && (pp->pos == POS_LAST || pp->pos == POS_ONLY);
}

static inline struct qp_ids qp_ids(const struct qp_tx *qp)
{
	return (struct qp_ids){.qpn = qp->qpn, .dest_qpn = qp->dest_qpn, .flow = qp->lat ? qp->lat->flow : 0,
			       .sport = qp->sport};
}

/* ---- start-up ----------------------------------------------------------------------------- */

static uint32_t log_entries(const struct cfg_flow_group *g)
{
	uint32_t n = 1;

	while (n < g->max_outstanding)
		n <<= 1;
	return g->transport == CFG_RC ? n : 0;
}

static int8_t only_op_of(const struct cfg_flow_group *g)
{
	int8_t only = -1;

	for (int op = 0, n = 0; op < CFG_OP_COUNT; op++)
		if (g->op_weight[op] && n++ == 0)
			only = (int8_t)op;
		else if (g->op_weight[op])
			only = -1;
	return only;
}

/* Whether the group's QPs keep a struct qp_tx_cold: RC (window, log, timers), draws (sizes, an
 * operation mix, Poisson gaps) and ON/OFF. Nothing else may touch qp->x. */
static bool needs_cold(const struct cfg_flow_group *g)
{
	return g->transport == CFG_RC || g->msg_size.dist != CFG_SIZE_FIXED || g->pattern != CFG_PATTERN_CONSTANT ||
	       only_op_of(g) < 0;
}

#define COLD_SIZE ((sizeof(struct qp_tx_cold) + 63) & ~(size_t)63)

size_t qp_tx_extra_size(const struct cfg_flow_group *g)
{
	size_t bytes = (needs_cold(g) ? COLD_SIZE : 0) + log_entries(g) * sizeof(struct qp_msg) +
		       (g->latency != CFG_LAT_OFF ? sizeof(struct qp_latency) : 0);

	return (bytes + 63) & ~(size_t)63;
}

size_t qp_tx_group_size(const struct cfg_flow_group *g)
{
	return sizeof(struct qp_group_tx) + tx_shapes_field_bytes(g);
}

/* Whether every packet of the group's QPs can come from a shape in whole calls (qp_tx_fill): RC
 * (window, retransmission), READs and atomics (PSN per response, one request), size and
 * operation draws, and Poisson or ON/OFF gaps need the general path. */
static void init_fast(struct qp_group_tx *sh)
{
	const struct cfg_flow_group *g = sh->group;
	uint32_t size = g->msg_size.fixed;
	int op = sh->only_op;

	sh->fast = g->transport != CFG_RC && g->msg_size.dist == CFG_SIZE_FIXED && g->pattern == CFG_PATTERN_CONSTANT &&
		   op >= 0 && !single_request((uint8_t)op) && g->latency != CFG_LAT_PINGPONG;
	if (!sh->fast)
		return;
	if (size <= g->ib_mtu)
		sh->fast = sh->shape_of[op][POS_ONLY] >= 0;
	else
		sh->fast = sh->shape_of[op][POS_FIRST] >= 0 && sh->shape_of[op][POS_LAST] >= 0 &&
			   (size <= 2 * g->ib_mtu || sh->shape_of[op][POS_MIDDLE] >= 0);
	/* a fixed size turns a byte budget into a message count (a zero-byte flow never reaches one) */
	sh->fast_stop_msgs = g->stop_messages;
	if (g->stop_bytes && size) {
		uint64_t by_bytes = (g->stop_bytes + size - 1) / size;
		if (!sh->fast_stop_msgs || by_bytes < sh->fast_stop_msgs)
			sh->fast_stop_msgs = by_bytes;
	}
}

void qp_tx_group_init(struct qp_group_tx *sh, const struct cfg_flow_group *g, const struct cfg_port *port,
		      const uint8_t src_mac[6], uint64_t tsc_hz, uint64_t start_tsc, uint16_t session)
{
	memset(sh, 0, sizeof(*sh));
	sh->group = g;
	sh->transport = (uint8_t)g->transport;
	sh->mtu = g->ib_mtu;
	sh->fixed_len = g->msg_size.dist == CFG_SIZE_FIXED ? g->msg_size.fixed : 0;
	sh->session = session;
	sh->only_op = only_op_of(g);
	sh->cold = needs_cold(g);
	tx_template_build(sh, g, port, src_mac);
	init_group_pacing(sh, g, tsc_hz, start_tsc);
	tx_shapes_build(sh);
	init_fast(sh);
}

void qp_tx_set_collective(struct qp_tx *qp, struct collective_rt *coll)
{
	qp->sh->coll = coll;
	qp->fast = qp->sh->fast && !coll;
}

void qp_tx_init(struct qp_tx *qp, struct qp_group_tx *sh, uint32_t index, uint64_t tsc_hz, uint64_t start_tsc,
		void *extra, uint32_t flow)
{
	const struct cfg_flow_group *g = sh->group;
	struct qp_ids id = tx_ids_of(g, index, flow);
	struct qp_msg *log;
	struct own_bytes o;

	memset(qp, 0, sizeof(*qp));
	qp->sh = sh;
	qp->cc_link.fp_per_byte = &qp->fp_per_byte; /* where a reaction point's rate goes (congestion.h) */
	qp->group = g;
	qp->index = index;
	qp->qpn = id.qpn;
	qp->dest_qpn = id.dest_qpn;
	qp->sport = id.sport;
	qp->psn = g->start_psn;
	log = (struct qp_msg *)((char *)extra + (sh->cold ? COLD_SIZE : 0));
	if (sh->cold) {
		qp->x = extra;
		qp->x->log = log_entries(g) ? log : NULL;
		qp->x->log_mask = log_entries(g) ? log_entries(g) - 1 : 0;
		rc_rel_init(&qp->x->rel, g->start_psn, start_tsc);
		qp->x->rng = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)qp->qpn << 20) ^ index;
	}
	if (g->latency != CFG_LAT_OFF) {
		qp->lat = (struct qp_latency *)(log + log_entries(g));
		qp->lat->flow = flow;
		qp->lat->session = sh->session;
		qp->lat->pingpong = g->latency == CFG_LAT_PINGPONG;
		qp->lat->pp = -1; /* the engine numbers UC/UD ping-pong QPs */
		qp->lat->wait_seq = qp->lat->back = UINT32_MAX; /* no probe has that seq before 2^32 are sent */
		qp->lat->timeout_tsc = sh->latency_timeout_tsc;
	}
	init_pacing(qp, g, tsc_hz);
	own_prepare(qp, &o);
	for (unsigned i = 0; i < sh->n_shapes; i++)
		qp->icrc_qp[i] = tx_shape_own_icrc(sh, i, &o);
	qp->fast = sh->fast && !sh->coll;
	if (qp->fast)
		qp->msg_len = sh->fixed_len;
}

/* UC/UD ping-pong: whether the message out came back (an RX lcore saw its last probe), or
 * timed out (counted lost); either way the next one may go. */
static bool pong_arrived(struct qp_tx *qp, uint64_t now_tsc)
{
	struct qp_latency *l = qp->lat;

	if (__atomic_load_n(&l->back, __ATOMIC_ACQUIRE) != l->wait_seq) {
		/* time the message could not leave (the PMD refused it) does not count */
		uint64_t stalled = l->stalled ? *l->stalled - l->stall_base : 0;
		if (now_tsc < l->deadline_tsc + stalled)
			return false;
		STAT_ADD(l->lost, 1);
	}
	l->waiting = false;
	return true;
}

/* A collective's next phase is not released yet: the QP's next message waits. Once it is, the
 * message is paced from now (time spent at the barrier earns no credit). */
static inline bool collective_gate_open(struct qp_tx *qp, uint64_t now_tsc)
{
	if (!collective_may_start(qp->sh->coll, qp->c.messages, now_tsc))
		return false;
	if (qp->next_fp < now_tsc << PACE_SHIFT)
		qp->next_fp = now_tsc << PACE_SHIFT;
	return true;
}

bool qp_tx_can_send(struct qp_tx *qp, uint64_t now_tsc)
{
	const struct qp_group_tx *sh = qp->sh;
	struct rc_rel_actions timer;
	struct qp_tx_cold *x;

	if (sh->transport != CFG_RC) {
		if (sh->coll && !qp->in_message && !collective_gate_open(qp, now_tsc))
			return false;
		if (qp->lat && qp->lat->waiting && !pong_arrived(qp, now_tsc))
			return false;
		if (qp->stopping && !qp->in_message) {
			qp->done = true;
			return false;
		}
		return true;
	}
	if (qp->done)
		return false;
	/* RC: the retry timer first, also while a collective holds the next message back: the tail
	 * of the last phase's message may have been lost, and only the timer sends it again (the
	 * phase waits for its acknowledgement) */
	x = qp->x;
	timer = rc_rel_on_timer(&x->rel, &sh->rel, qp->log_n != 0, now_tsc);
	if (timer.what && !rc_log_apply(qp, &timer, now_tsc))
		return false;
	if (!rc_rel_may_send(&x->rel, now_tsc))
		return false;
	if (qp->in_message || x->cur < qp->log_n)
		return true;
	if (sh->coll && !collective_gate_open(qp, now_tsc))
		return false;
	return !qp->stopping && rc_rel_window_open(&sh->rel, qp->log_n);
}

/* The probe of the packet being written: stamped now, or at the NIC time it is to be sent at
 * where the port schedules sends (ping-pong probes), so that the stamp is the sending time. */
static struct latency_probe next_probe(struct qp_tx *qp, struct rte_mbuf *m, uint64_t now_tsc)
{
	struct qp_latency *l = qp->lat;
	/* a ping goes out alone, right after it is written: the TSC now; other packets wait for
	 * their burst, which started at now_tsc */
	uint64_t tx_ns = clock_tsc_to_ns(l->pingpong ? rte_rdtsc() : now_tsc);

	if (l->clock && l->pingpong) {
		/* the message's first packet is sent at a NIC time (it must lead a burst); the rest
		 * follow it at once and carry the same time */
		if (qp->msg_off == 0) {
			l->sched_ns = tx_ns + l->clock->tx_lead_ns;
			port_clock_schedule_tx(l->clock, m, l->sched_ns);
		}
		tx_ns = l->sched_ns;
	}
	return (struct latency_probe){.flags = l->pingpong ? LATENCY_PROBE_PINGPONG : 0, .session = l->session,
				      .flow = l->flow, .seq = l->seq, .tx_ns = tx_ns};
}

/* UC/UD ping-pong: the message is out; the QP waits until its last probe is back. */
static void ping_out(struct qp_tx *qp, uint64_t now_tsc)
{
	struct qp_latency *l = qp->lat;

	l->waiting = true;
	l->deadline_tsc = now_tsc + l->timeout_tsc;
	l->stall_base = l->stalled ? *l->stalled : 0;
	STAT_ADD(l->pings, 1);
	__atomic_store_n(&l->wait_seq, l->seq - 1, __ATOMIC_RELEASE);
}

uint16_t qp_tx_next(struct qp_tx *qp, struct rte_mbuf *m, uint64_t now_tsc)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t mtu = qp->sh->mtu, left, next_psn;
	bool rc = qp->sh->transport == CFG_RC, resend;
	struct latency_probe probe;
	struct pkt_plan pp;
	bool has_probe;
	int8_t shape;
	uint16_t len;

	if (!qp->in_message)
		start_message(qp);
	plan_packet(qp, &pp);
	if (rc)
		pp.ackreq = rc_rel_ackreq(&qp->x->rel, pp.ackreq);
	shape = qp->sh->shape_of[qp->msg_op][pp.pos];
	m->ol_flags = 0; /* the role's pool keeps mbuf headers: clear a scheduled send's flag */
	has_probe = qp->lat && !single_request(qp->msg_op) && pp.payload >= LATENCY_PROBE_LEN;
	if (has_probe)
		probe = next_probe(qp, m, now_tsc);
	if (qp->clean_payload) /* this path writes every byte up to the ICRC: only the old ICRC to clear */
		tx_payload_forget(m);
	if (shape >= 0) {
		const struct qp_shape *s = &qp->sh->shapes[shape];
		len = write_from_shape(qp, (unsigned)shape, qp->psn, pp.ackreq, f);
		if (has_probe && s->probe_off)
			stamp_probe(s, f, probe.seq, probe.tx_ns, probe_tx_delta(s->tx_field, probe.tx_ns));
	} else {
		struct qp_ids id = qp_ids(qp);
		len = tx_write_generic(qp->sh, &id, qp->msg_len, &pp, qp->psn, has_probe ? &probe : NULL, f);
	}
	if (qp->clean_payload)
		tx_payload_remember(m, f, (uint16_t)(len - WIRE_ICRC_LEN));
	if (len < WIRE_MIN_FRAME) {
		memset(f + len, 0, WIRE_MIN_FRAME - len);
		len = WIRE_MIN_FRAME;
	}
	m->data_len = len;
	m->pkt_len = len;

	/* a READ request consumes one PSN per response packet it asks for (an atomic, like a SEND
	 * or WRITE packet, takes one PSN); only RC sends a PSN again */
	left = qp->msg_len - qp->msg_off;
	next_psn = wire_psn_add(qp->psn, qp->msg_op == CFG_OP_READ ? npsn_of(CFG_OP_READ, left, mtu) : 1);
	resend = rc && rc_rel_on_sent(&qp->x->rel, qp->psn, next_psn);
	qp->psn = next_psn;
	qp->msg_off += single_request(qp->msg_op) ? left : pp.payload;
	STAT_ADD(qp->c.tx_packets, 1);
	STAT_ADD(qp->c.tx_bytes, len);
	if (resend)
		STAT_ADD(qp->c.retransmits, 1);
	else if (rc && (pp.pos == POS_FIRST || pp.pos == POS_ONLY))
		log_at(qp, qp->x->cur)->sent_tsc = now_tsc;
	if (has_probe)
		qp->lat->seq++;
	if ((pp.pos == POS_LAST || pp.pos == POS_ONLY) && !resend && qp->lat && qp->lat->pp >= 0)
		ping_out(qp, now_tsc);
	if (pp.pos == POS_LAST || pp.pos == POS_ONLY) {
		qp->in_message = false;
		if (rc)
			qp->x->cur++;
		if (!resend) {
			STAT_ADD(qp->c.messages, 1);
			STAT_ADD(qp->c.payload_bytes, qp->msg_len);
			/* UC and UD complete a message by sending it */
			if (qp->sh->coll && !rc)
				collective_completed(qp->sh->coll, (uint32_t)(qp->c.messages - 1), now_tsc);
		}
		check_stop(qp, now_tsc);
	}
	advance_pacing(qp, len);
	return len;
}

/* ---- fast QPs: whole calls of shapes -------------------------------------------------------- */

/* What a call prepares once: the group's shapes made the QP's own (its bytes written over a copy,
 * its ICRC term and its pacing time at its rate now folded in), so that each packet is a plain
 * copy, as if the QP had shapes of its own. (Writing its bytes into every packet instead cost
 * more: five narrow stores a packet against eight wide ones a call.) */
static inline __attribute__((always_inline)) void fast_shapes_make(const struct qp_tx *qp, uint64_t per_byte,
								   uint8_t own_shape[][QP_SHAPE_COPY], uint32_t *base,
								   uint64_t *gap)
{
	const struct qp_group_tx *sh = qp->sh;
	struct own_bytes own;

	own_prepare(qp, &own);
	for (unsigned i = 0; i < sh->n_shapes; i++) {
		const struct qp_shape *s = &sh->shapes[i];
		memcpy(own_shape[i], s->bytes, QP_SHAPE_COPY);
		own_write(sh, s, &own, own_shape[i], false);
		base[i] = s->icrc_base ^ qp->icrc_qp[i]; /* the shape's ICRC with the QP's term */
		gap[i] = shape_gap(sh, per_byte, s);      /* its pacing time at the QP's rate now */
	}
}

/* A fast packet into f: the QP's shape, its PSN (AckReq 0: UC and UD); in a clean pool the
 * payload's zeros are there already. Returns its ICRC, moved from the shape's by the PSN. */
static inline __attribute__((always_inline)) uint32_t fast_write(struct rte_mbuf *m, uint8_t *f, const struct qp_shape *s,
								 const uint8_t *bytes, uint32_t base, uint32_t psn,
								 const bool clean)
{
	if (clean) {
		tx_payload_prepare(m, f, s->icrc_off);
		memcpy(f, bytes, QP_SHAPE_COPY);
	} else {
		copy_shape_from(bytes, s, f);
	}
	wire_put32(f + s->bth_off + 8, psn);
	return base ^ s->psn_field->table[1][(psn >> 16) & 0xFF] ^ s->psn_field->table[2][(psn >> 8) & 0xFF] ^
	       s->psn_field->table[3][psn & 0xFF];
}

/* The probes of a call: one TX time for its packets, the burst's (they reach the PMD together
 * when it is complete, so a TSC read per packet or per visit would not be nearer their hand-over
 * than the time the burst began); its ICRC change worked out once per layout. */
struct fast_probes {
	uint64_t tx_ns;
	const struct wire_icrc_field *tx_field;
	uint32_t tx_delta;
	uint32_t seq;
	struct count_delta seq_delta;
};

/* Stamps the packet's probe (seq, TX time); returns its ICRC change. */
static inline __attribute__((always_inline)) uint32_t fast_stamp(struct fast_probes *pr, const struct qp_shape *s,
								 uint8_t *f)
{
	uint8_t *p = f + s->probe_off;

	if (s->tx_field != pr->tx_field) {
		pr->tx_field = s->tx_field;
		pr->tx_delta = probe_tx_delta(pr->tx_field, pr->tx_ns);
	}
	probe_put32(p + LATENCY_PROBE_SEQ_OFF, pr->seq);
	probe_put64(p + LATENCY_PROBE_TX_OFF, pr->tx_ns);
	return pr->tx_delta ^ count_icrc_delta(&pr->seq_delta, s->seq_field, pr->seq++);
}

/* The frame's lengths and flags in its mbuf (the role's pool keeps headers: no scheduled-send
 * flag left over). */
static inline __attribute__((always_inline)) void fast_mbuf_set(struct rte_mbuf *m, uint16_t frame_len)
{
	m->data_len = frame_len;
	m->pkt_len = frame_len;
	m->ol_flags = 0;
}

/* A call's counters, once; UC and UD are done once the last message has gone. */
static inline __attribute__((always_inline)) void fast_count(struct qp_tx *qp, unsigned n, uint64_t bytes, uint64_t msgs,
							     uint32_t len)
{
	STAT_ADD(qp->c.tx_packets, n);
	STAT_ADD(qp->c.tx_bytes, bytes);
	STAT_ADD(qp->c.messages, msgs);
	STAT_ADD(qp->c.payload_bytes, msgs * len);
}

/* mbufs whose headers are asked for ahead of their frame: freed by another lcore (the peer's RX
 * on another CPU), each is a miss; one frame ahead left most of that miss in the loop */
#define FAST_PREFETCH_AHEAD 4

/* Fast QPs: only the message position changes from packet to packet (every message has the same
 * size), so a call runs the stop checks at message starts and the counters and pacing once. */
static inline __attribute__((always_inline)) unsigned fill_fast(struct qp_tx *qp, struct rte_mbuf **m, unsigned max,
								uint64_t now_tsc, uint64_t until_fp, const bool probes)
{
	const struct qp_group_tx *sh = qp->sh;
	const int8_t *shape_of = sh->shape_of[sh->only_op];
	uint32_t psn = qp->psn, off = qp->msg_off, len = qp->msg_len, mtu = sh->mtu;
	uint64_t next = qp->next_fp, bytes = 0, msgs = 0;
	uint64_t may_start = sh->fast_stop_msgs ? sh->fast_stop_msgs - qp->c.messages : UINT64_MAX;
	uint64_t per_byte = __atomic_load_n(&qp->fp_per_byte, __ATOMIC_RELAXED), gap[QP_MAX_SHAPES];
	uint8_t own_shape[QP_MAX_SHAPES][QP_SHAPE_COPY] __attribute__((aligned(16)));
	uint32_t base[QP_MAX_SHAPES];
	struct qp_latency *lat = probes ? qp->lat : NULL; /* a constant NULL compiles the probe work out */
	const bool clean = qp->clean_payload;
	struct fast_probes pr = {.tx_ns = lat ? clock_tsc_to_ns(now_tsc) : 0, .seq = lat ? lat->seq : 0};
	unsigned n = 0;

	if (qp->stopping)
		may_start = 0;
	if (likely(next <= until_fp))
		fast_shapes_make(qp, per_byte, own_shape, base, gap);
	for (unsigned k = 0; k < max && k < FAST_PREFETCH_AHEAD; k++)
		rte_prefetch0(m[k]);
	for (; n < max && next <= until_fp; n++) {
		uint32_t left = len - off, icrc;
		const struct qp_shape *s;
		unsigned si;
		uint8_t *f;

		if (off == 0 && msgs >= may_start)
			break;
		si = (unsigned)shape_of[wire_pos_of(off == 0, left <= mtu)];
		s = &sh->shapes[si];
		if (n + FAST_PREFETCH_AHEAD < max) /* a later mbuf's header, read to find its data */
			rte_prefetch0(m[n + FAST_PREFETCH_AHEAD]);
		f = rte_pktmbuf_mtod(m[n], uint8_t *);
		icrc = fast_write(m[n], f, s, own_shape[si], base[si], psn, clean);
		if (lat && s->probe_off)
			icrc ^= fast_stamp(&pr, s, f);
		wire_icrc_store(f + s->icrc_off, icrc);
		fast_mbuf_set(m[n], s->frame_len);
		bytes += s->frame_len;
		next += gap[si];
		psn = wire_psn_add(psn, 1);
		off += s->payload;
		if (off >= len) {
			off = 0;
			msgs++;
		}
	}
	qp->psn = psn;
	if (lat)
		lat->seq = pr.seq;
	qp->next_fp = next;
	qp->msg_off = off;
	qp->in_message = off != 0;
	fast_count(qp, n, bytes, msgs, len);
	if (msgs >= may_start && off == 0)
		qp->stopping = qp->done = true;
	return n;
}

/* What congestion control and event injection see of a call's packets (only QPs that have them). */
static unsigned after_fill(struct qp_tx *qp, struct rte_mbuf **m, unsigned n, uint64_t bytes, uint64_t now_tsc)
{
	if (qp->inj && n)
		n = inject_tx(qp->inj, m, n, now_tsc);
	qp->cc_link.bytes += bytes;
	if (qp->cc && qp->cc_link.bytes >= qp->cc_link.bytes_due)
		congestion_on_sent(qp->cc->lcore, qp->cc, now_tsc);
	return n;
}

unsigned qp_tx_fill(struct qp_tx *qp, struct rte_mbuf **m, unsigned max, uint64_t now_tsc, uint64_t until_fp)
{
	uint64_t bytes = qp->c.tx_bytes;
	unsigned n = 0;

	if (qp->done)
		return 0;
	if (unlikely(qp->cc != NULL) && now_tsc >= qp->cc_link.due_tsc) /* its timers due by now first */
		congestion_catch_up(qp->cc->lcore, qp->cc, now_tsc);
	if (qp->fast) {
		if (qp->sh->stop_tsc && now_tsc >= qp->sh->stop_tsc)
			qp->stopping = true;
		/* two copies of the loop: with probes, and without a trace of them */
		n = qp->lat ? fill_fast(qp, m, max, now_tsc, until_fp, true)
			    : fill_fast(qp, m, max, now_tsc, until_fp, false);
	} else {
		while (n < max && qp->next_fp <= until_fp && !qp->done && qp_tx_can_send(qp, now_tsc))
			qp_tx_next(qp, m[n++], now_tsc);
	}
	if (unlikely(qp->cc || qp->inj))
		return after_fill(qp, m, n, qp->c.tx_bytes - bytes, now_tsc);
	return n;
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include <math.h>
#include <string.h>

#include <rte_mbuf.h>

#include "clock.h"
#include "congestion.h"
#include "counters.h"
#include "inject.h"
#include "latency.h"
#include "requester.h"
#include "tx_payload.h"


/* READ requests and atomics are one packet without payload, whatever the message size. */
static inline bool single_request(uint8_t op) { return op >= CFG_OP_READ; }
#define ATOMIC_LEN 8

static const uint8_t transport_base[] = {[CFG_RC] = WIRE_TRANSPORT_RC, [CFG_UC] = WIRE_TRANSPORT_UC,
					 [CFG_UD] = WIRE_TRANSPORT_UD};
/* What each configured operation is on the wire; the opcode table gives its opcodes. */
static const struct {
	uint8_t oper; /* enum wire_oper */
	bool imm;
} op_wire[CFG_OP_COUNT] = {
	[CFG_OP_SEND] = {WIRE_OPER_SEND, false},       [CFG_OP_SEND_IMM] = {WIRE_OPER_SEND, true},
	[CFG_OP_WRITE] = {WIRE_OPER_WRITE, false},     [CFG_OP_WRITE_IMM] = {WIRE_OPER_WRITE, true},
	[CFG_OP_READ] = {WIRE_OPER_READ_REQUEST, false}, [CFG_OP_FETCH_ADD] = {WIRE_OPER_FETCH_ADD, false},
	[CFG_OP_COMPARE_SWAP] = {WIRE_OPER_COMPARE_SWAP, false},
};

/* The opcode of an operation's packet at `pos` (a one-packet request is ONLY wherever it is;
 * the immediate rides on a message's last packet); 0 for an operation the transport lacks,
 * which the config loader refuses. */
static uint8_t opcode_for(enum cfg_transport t, uint8_t op, enum seg_pos pos)
{
	enum wire_pos wp = single_request(op) ? WIRE_POS_ONLY : (enum wire_pos)pos;
	bool imm = op_wire[op].imm && (wp == WIRE_POS_LAST || wp == WIRE_POS_ONLY);
	int code = wire_opcode_select(transport_base[t], (enum wire_oper)op_wire[op].oper, wp, imm);

	return code < 0 ? 0 : (uint8_t)code;
}

static void init_group_opcodes(struct qp_group_tx *sh, const struct cfg_flow_group *g)
{
	for (int op = 0; op < CFG_OP_COUNT; op++)
		for (int pos = 0; pos < POS_COUNT; pos++)
			sh->opcode[op][pos] = opcode_for(g->transport, (uint8_t)op, (enum seg_pos)pos);
}

/* -ln((i + 0.5) / 1024) in Q16: exponential variates by table lookup, for Poisson gaps and
 * exponential message sizes without a logarithm per packet. */
static uint32_t exp_q16[1024];

static void init_exp_table(void)
{
	if (exp_q16[0])
		return;
	for (int i = 0; i < 1024; i++)
		exp_q16[i] = (uint32_t)(-log((i + 0.5) / 1024.0) * 65536.0);
}


uint32_t qp_max_frame(const struct cfg_flow_group *g)
{
	uint32_t ip = g->ip_version == 6 ? WIRE_IPV6_HLEN : WIRE_IPV4_HLEN;

	return WIRE_ETH_HLEN + WIRE_VLAN_HLEN + ip + WIRE_UDP_HLEN + WIRE_BTH_LEN + WIRE_RETH_LEN + WIRE_IMMDT_LEN +
	       WIRE_DETH_LEN + g->ib_mtu + 3 + WIRE_ICRC_LEN;
}

/* What names a QP in its frames, from its place in the group: its QPNs, UDP source port and the
 * flow id its latency probes carry. */
struct qp_ids {
	uint32_t qpn, dest_qpn, flow;
	uint16_t sport;
};

static inline uint64_t qp_va(uint32_t qpn) { return 0x100000000ULL + (uint64_t)qpn * 0x10000000ULL; }
static inline uint32_t qp_rkey(uint32_t qpn) { return 0x1000 + qpn; }

static uint16_t qp_sport(const struct cfg_flow_group *g, uint32_t index, uint32_t qpn, uint32_t dest_qpn)
{
	return g->sport_entropy ? wire_udp_sport_from_flow_label(wire_flow_label_from_qpns(qpn, dest_qpn))
				: (uint16_t)(g->sport + index * g->sport_step);
}

static struct qp_ids ids_of(const struct cfg_flow_group *g, uint32_t index, uint32_t flow)
{
	struct qp_ids id = {.qpn = g->qpn + index * g->qpn_step, .dest_qpn = g->dest_qpn + index * g->dest_qpn_step,
			    .flow = flow};

	id.sport = qp_sport(g, index, id.qpn, id.dest_qpn);
	return id;
}

/* The L2 + IP + UDP part of every frame of the group, lengths patched per packet; the UDP source
 * port and the IPv6 flow label are 0 there (each QP writes its own). */
static void build_template(struct qp_group_tx *sh, const struct cfg_flow_group *g, const struct cfg_port *port,
			   const uint8_t src_mac[6])
{
	struct wire_roce_spec s = {0};
	uint8_t frame[128];

	memcpy(s.l2.src, src_mac, 6);
	memcpy(s.l2.dst, g->dst_mac, 6);
	s.l2.vlan = g->has_vlan;
	s.l2.vid = g->vlan;
	s.l2.pcp = g->pcp;
	s.ip.version = g->ip_version;
	s.ip.dscp = g->dscp;
	s.ip.ecn = g->ecn;
	s.ip.ttl = 64;
	s.ip.df = true;
	s.ip.flow_label = 0;
	memcpy(s.ip.src, g->ip_version == 6 ? port->ipv6 : port->ipv4, g->ip_version == 6 ? 16 : 4);
	memcpy(s.ip.dst, g->dst_ip, 16);
	s.udp.sport = 0;
	s.bth.opcode = WIRE_OP_RC_ACK; /* any: only the headers before the BTH are kept */
	s.bth.pkey = g->pkey;
	wire_build_roce(&s, frame, sizeof(frame));
	sh->ipv6 = g->ip_version == 6;
	sh->l3_off = (uint16_t)(WIRE_ETH_HLEN + (g->has_vlan ? WIRE_VLAN_HLEN : 0));
	sh->hdr_len = (uint16_t)(sh->l3_off + (g->ip_version == 6 ? WIRE_IPV6_HLEN : WIRE_IPV4_HLEN) + WIRE_UDP_HLEN);
	sh->sport_off = (uint16_t)(sh->hdr_len - WIRE_UDP_HLEN);
	memcpy(sh->hdr, frame, sh->hdr_len);
}

/* The template's QP fields: UDP source port, and IPv6's flow label (the QPN pair's, as verbs do). */
static void template_write_own(const struct qp_group_tx *sh, const struct qp_ids *id, uint8_t *f)
{
	wire_put16(f + sh->sport_off, id->sport);
	if (sh->ipv6)
		wire_put32(f + sh->l3_off, wire_get32(sh->hdr + sh->l3_off) | wire_flow_label_from_qpns(id->qpn, id->dest_qpn));
}

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
	sh->stop_tsc = g->stop_seconds > 0 ? start_tsc + (uint64_t)(g->stop_seconds * (double)tsc_hz) : 0;
	sh->rel = (struct rc_rel_params){.timeout_tsc = (uint64_t)(g->retry_timeout_us * 1e-6 * (double)tsc_hz),
					 .tsc_per_us = tsc_hz / 1000000,
					 .retry_limit = g->retry_limit,
					 .max_outstanding = g->max_outstanding};
	sh->latency_timeout_tsc = (uint64_t)(g->latency_timeout_us * 1e-6 * (double)tsc_hz);
}

static void init_pacing(struct qp_tx *qp, const struct cfg_flow_group *g, uint64_t tsc_hz, uint64_t start_tsc)
{
	const struct qp_group_tx *sh = qp->sh;

	qp->next_fp = start_tsc << PACE_SHIFT;
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
	if (qp->index == 0 && qp->sh->stop_tsc) /* the group's, once */
		qp->sh->stop_tsc += delta_tsc;
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
		v = ((uint64_t)sz->mean * exp_q16[rng_below(&qp->x->rng, 1024)]) >> 16;
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

static inline struct qp_msg *log_at(struct qp_tx *qp, unsigned i)
{
	return &qp->x->log[(qp->x->log_head + i) & qp->x->log_mask];
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
		gap = (gap >> 8) * exp_q16[rng_below(&qp->x->rng, 1024)] >> 8;
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
	    (qp->sh->coll && qp->c.messages >= qp->sh->coll->cfg->phases) ||
	    (g->stop_bytes && qp->c.payload_bytes >= g->stop_bytes) || (qp->sh->stop_tsc && now_tsc >= qp->sh->stop_tsc))
		qp->stopping = true;
	/* an RC QP is done when everything it sent has been acknowledged, a ping-pong QP when its
	 * last message is back (or lost) */
	qp->done = qp->stopping && (g->transport != CFG_RC || qp->log_n == 0) && !(qp->lat && qp->lat->waiting);
}


/* ---- one packet --------------------------------------------------------------------------- */

struct pkt_plan {
	enum seg_pos pos;
	uint8_t opcode;
	bool ackreq;
	uint32_t payload;
};

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

/* IPv4 header checksum after the total length changed from the template's (RFC 1624). */
static void ipv4_len_update(uint8_t *ip, uint16_t old_len, uint16_t new_len)
{
	uint32_t sum = (uint16_t)~wire_get16(ip + 10) + (uint16_t)~old_len + new_len;

	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	wire_put16(ip + 2, new_len);
	wire_put16(ip + 10, (uint16_t)~sum);
}

/* Any packet, from the L2-L4 template: BTH and extended headers written, payload zeroed, the
 * ICRC computed over the whole packet. Returns the frame length before Ethernet padding. */
static uint16_t write_generic(const struct qp_group_tx *sh, const struct qp_ids *id, uint32_t msg_len,
			      const struct pkt_plan *pp, uint32_t psn, const struct latency_probe *probe, uint8_t *f)
{
	const struct cfg_flow_group *g = sh->group;
	const struct wire_opcode_info *info = wire_opcode_info(pp->opcode);
	struct wire_ext_hdrs ext = {0};
	struct wire_bth bth = {0};
	uint8_t *l3 = f + sh->l3_off, *p = f + sh->hdr_len;
	uint64_t va = qp_va(id->qpn);
	uint32_t rkey = qp_rkey(id->qpn);
	uint16_t udp_len;

	bth.opcode = pp->opcode;
	bth.pad = (uint8_t)((4 - (pp->payload & 3)) & 3);
	bth.pkey = g->pkey;
	bth.dqpn = id->dest_qpn;
	bth.psn = psn;
	bth.ackreq = pp->ackreq;
	bth.se = (info->flags & WIRE_OPF_IMM) != 0;
	ext.reth = (struct wire_reth){.va = va, .rkey = rkey, .dma_len = msg_len};
	/* fetch-add adds 1; compare-swap swaps 0 for the QPN (once: later compares fail) */
	ext.atomic = (struct wire_atomiceth){.va = va, .rkey = rkey,
					     .swap_add = pp->opcode == WIRE_OP_RC_FETCH_ADD ? 1 : id->qpn, .compare = 0};
	ext.immdt = id->qpn;
	ext.deth = (struct wire_deth){.qkey = g->qkey, .src_qp = id->qpn};

	memcpy(f, sh->hdr, sh->hdr_len);
	template_write_own(sh, id, f);
	wire_bth_write(p, &bth);
	wire_ext_write(p, info, &ext);
	p += info->hdr_len;
	memset(p, 0, pp->payload + bth.pad);
	if (probe && pp->payload >= LATENCY_PROBE_LEN)
		latency_probe_write(p, probe);
	p += pp->payload + bth.pad;
	udp_len = (uint16_t)(p - (f + sh->hdr_len) + WIRE_UDP_HLEN + WIRE_ICRC_LEN);
	if (!sh->ipv6)
		ipv4_len_update(l3, wire_get16(sh->hdr + sh->l3_off + 2), (uint16_t)(WIRE_IPV4_HLEN + udp_len));
	else
		wire_put16(l3 + 4, udp_len);
	wire_put16(f + sh->hdr_len - WIRE_UDP_HLEN + 4, udp_len);
	wire_icrc_store(p, wire_icrc(l3, (size_t)(p - l3)));
	return (uint16_t)(p + WIRE_ICRC_LEN - f);
}

static inline struct qp_ids qp_ids(const struct qp_tx *qp)
{
	return (struct qp_ids){.qpn = qp->qpn, .dest_qpn = qp->dest_qpn, .flow = qp->lat ? qp->lat->flow : 0,
			       .sport = qp->sport};
}

/* A QP's own bytes in a shape's packet, in network order, ready to store (worked out once per call). */
struct own_bytes {
	uint64_t va;
	uint32_t dqpn;         /* BTH bytes 4..7: 0, then the destination QPN */
	uint32_t rkey;
	uint32_t qpn;          /* ImmDt */
	uint32_t src_qp;       /* DETH bytes 4..7: 0, then the source QP */
	uint32_t flow;         /* the latency probe's */
	uint32_t ip6w0;        /* IPv6's first word: version, class, the QP's flow label */
	uint16_t sport;
};

static inline void own_prepare(const struct qp_tx *qp, struct own_bytes *o)
{
	const struct qp_group_tx *sh = qp->sh;

	o->va = rte_cpu_to_be_64(qp_va(qp->qpn));
	o->dqpn = rte_cpu_to_be_32(qp->dest_qpn & WIRE_QPN_MASK);
	o->rkey = rte_cpu_to_be_32(qp_rkey(qp->qpn));
	o->qpn = rte_cpu_to_be_32(qp->qpn);
	o->src_qp = rte_cpu_to_be_32(qp->qpn & WIRE_QPN_MASK);
	o->flow = rte_cpu_to_be_32(qp->lat ? qp->lat->flow : 0);
	o->sport = rte_cpu_to_be_16(qp->sport);
	o->ip6w0 = sh->ipv6 ? rte_cpu_to_be_32(wire_get32(sh->hdr + sh->l3_off) |
					       wire_flow_label_from_qpns(qp->qpn, qp->dest_qpn))
			    : 0;
}

/* Writes the QP's own bytes over a shape's copy (its ICRC change is qp->icrc_qp[shape]). */
static inline __attribute__((always_inline)) void own_write(const struct qp_group_tx *sh, const struct qp_shape *s,
								const struct own_bytes *o, uint8_t *f, const bool atomics)
{
	memcpy(f + sh->sport_off, &o->sport, 2);
	memcpy(f + s->bth_off + 4, &o->dqpn, 4);
	if (sh->ipv6)
		memcpy(f + sh->l3_off, &o->ip6w0, 4);
	if (s->reth_off) {
		memcpy(f + s->reth_off, &o->va, 8);
		memcpy(f + s->reth_off + 8, &o->rkey, 4);
	}
	if (s->imm_off)
		memcpy(f + s->imm_off, &o->qpn, 4);
	if (s->deth_off)
		memcpy(f + s->deth_off + 4, &o->src_qp, 4);
	if (s->probe_off)
		memcpy(f + s->probe_off + 8, &o->flow, 4);
	if (atomics && s->atomic_off) {
		memcpy(f + s->atomic_off, &o->va, 8);
		memcpy(f + s->atomic_off + 8, &o->rkey, 4);
		if (f[s->bth_off] == WIRE_OP_RC_COMPARE_SWAP) /* swaps in the QPN */
			wire_put64(f + s->atomic_off + 12, rte_be_to_cpu_32(o->qpn));
	}
}

/* A packet whose every byte but BTH bytes 8..11 (AckReq, PSN) is known in advance: the shape's
 * bytes, the QP's own, the rest of the zero payload, and the ICRC moved from the shape's (made
 * with PSN 0) by the QP's term and one table lookup per byte of that word. */
static inline void copy_shape_from(const uint8_t *bytes, const struct qp_shape *s, uint8_t *f)
{
	/* a fixed-size copy compiles to a few vector moves (the mbuf has the room; bytes past the
	 * frame are not sent); only payloads reaching past it need their zeros written */
	memcpy(f, bytes, QP_SHAPE_COPY);
	if (s->icrc_off <= QP_SHAPE_COPY)
		return;
	if (s->icrc_off <= QP_SHAPE_COPY + 64) /* small payloads: one fixed-size store, no call */
		memset(f + QP_SHAPE_COPY, 0, 64);
	else
		memset(f + QP_SHAPE_COPY, 0, (size_t)(s->icrc_off - QP_SHAPE_COPY));
}

static uint16_t write_from_shape(const struct qp_tx *qp, unsigned shape, uint32_t psn, bool ackreq, uint8_t *f)
{
	const struct qp_shape *s = &qp->sh->shapes[shape];
	const uint8_t *was = s->bytes + s->bth_off + 8;
	uint8_t now[4] = {(uint8_t)(ackreq ? 0x80 : 0), (uint8_t)(psn >> 16), (uint8_t)(psn >> 8), (uint8_t)psn};
	struct own_bytes o;

	own_prepare(qp, &o);
	copy_shape_from(s->bytes, s, f);
	own_write(qp->sh, s, &o, f, true);
	memcpy(f + s->bth_off + 8, now, 4);
	wire_icrc_store(f + s->icrc_off,
			wire_icrc_field_update(s->psn_field, s->icrc_base ^ qp->icrc_qp[shape], was, now));
	return s->frame_len;
}

/* A 4-byte field that counts up by one from packet to packet (a probe's seq) moves the ICRC by
 * T0[b0] ^ T1[b1] ^ T2[b2] ^ T3[b3]: the first three terms change once in 256 packets, so they are
 * kept (for one table) and a packet pays one lookup. (For the PSN, whose high byte is in the
 * shape, the three plain lookups measured faster than the check.) */
struct count_delta {
	const struct wire_icrc_field *t;
	uint32_t key;          /* value >> 8 the kept terms are for */
	uint32_t hi;
};

static inline uint32_t count_icrc_delta(struct count_delta *c, const struct wire_icrc_field *t, uint32_t v)
{
	if (unlikely(t != c->t || (v >> 8) != c->key)) {
		c->t = t;
		c->key = v >> 8;
		c->hi = t->table[0][v >> 24] ^ t->table[1][(v >> 16) & 0xFF] ^ t->table[2][(v >> 8) & 0xFF];
	}
	return c->hi ^ t->table[3][v & 0xFF];
}

/* The ICRC change of a probe's seq and TX time written into a shape's packet (which holds 0 for
 * both): one table lookup per byte, CRC being linear. */
static inline uint32_t probe_seq_delta(const struct wire_icrc_field *t, uint32_t seq)
{
	return t->table[0][seq >> 24] ^ t->table[1][(seq >> 16) & 0xFF] ^ t->table[2][(seq >> 8) & 0xFF] ^
	       t->table[3][seq & 0xFF];
}

static inline uint32_t probe_tx_delta(const struct wire_icrc_field *t, uint64_t tx_ns)
{
	uint32_t d = 0;

	for (unsigned i = 0; i < 8; i++)
		d ^= t->table[i][(tx_ns >> (56 - 8 * i)) & 0xFF];
	return d;
}

static inline void stamp_probe(const struct qp_shape *s, uint8_t *f, uint32_t seq, uint64_t tx_ns, uint32_t tx_delta)
{
	uint8_t *p = f + s->probe_off;

	probe_put32(p + LATENCY_PROBE_SEQ_OFF, seq);
	probe_put64(p + LATENCY_PROBE_TX_OFF, tx_ns);
	wire_icrc_store(f + s->icrc_off, wire_icrc_load(f + s->icrc_off) ^ probe_seq_delta(s->seq_field, seq) ^ tx_delta);
}

/* ---- shapes: built at start-up for fixed-size flows ----------------------------------------- */

/* ICRC field tables depend only on the field's width and how many covered bytes follow it: shared
 * by every shape with the same layout, filled at start-up (single-threaded), read-only after. PSN
 * tables (BTH bytes 8..11) and the latency probe's seq (4) and TX time (8). */
#define MAX_FIELD_TABLES 64
static struct wire_icrc_field field_tables[MAX_FIELD_TABLES];
static size_t field_table_tail[MAX_FIELD_TABLES];
static unsigned n_field_tables;

static const struct wire_icrc_field *field_table_for(unsigned width, size_t tail)
{
	for (unsigned i = 0; i < n_field_tables; i++)
		if (field_table_tail[i] == tail && field_tables[i].width == width)
			return &field_tables[i];
	if (n_field_tables == MAX_FIELD_TABLES)
		return NULL;
	wire_icrc_field_init(&field_tables[n_field_tables], width, tail);
	field_table_tail[n_field_tables] = tail;
	return &field_tables[n_field_tables++];
}

/* How many shapes a fixed-size flow's messages take: per operation, ONLY, or FIRST [MIDDLE]
 * LAST. Capped at QP_MAX_SHAPES (further ones go the general way). */
static unsigned shapes_needed(const struct cfg_flow_group *g)
{
	uint32_t size = g->msg_size.fixed, mtu = g->ib_mtu;
	unsigned n = 0;

	if (g->msg_size.dist != CFG_SIZE_FIXED)
		return 0;
	for (int op = 0; op < CFG_OP_COUNT; op++)
		if (g->op_weight[op])
			n += single_request((uint8_t)op) || size <= mtu ? 1 : size > 2 * mtu ? 3 : 2;
	return n < QP_MAX_SHAPES ? n : QP_MAX_SHAPES;
}

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
	(void)g;
	return sizeof(struct qp_group_tx);
}

/* The plan of a shape's packet. */
static struct pkt_plan shape_plan(const struct cfg_flow_group *g, enum cfg_op op, enum seg_pos pos)
{
	struct pkt_plan pp = {.pos = pos};
	uint32_t mtu = g->ib_mtu, size = g->msg_size.fixed;

	pp.payload = single_request((uint8_t)op) ? 0 : pos == POS_FIRST || pos == POS_MIDDLE ? mtu
					  : pos == POS_LAST ? size - mtu * ((size - 1) / mtu) : size;
	pp.opcode = opcode_for(g->transport, (uint8_t)op, pos);
	pp.ackreq = g->transport == CFG_RC && (pos == POS_LAST || pos == POS_ONLY);
	return pp;
}

static struct latency_probe shape_probe(const struct qp_group_tx *sh, uint32_t flow)
{
	return (struct latency_probe){.flags = sh->group->latency == CFG_LAT_PINGPONG ? LATENCY_PROBE_PINGPONG : 0,
				      .session = sh->session, .flow = flow};
}

/* The group's shape for (op, pos), built with the neutral QP fields (QPNs, port, flow 0). */
static bool add_shape(struct qp_group_tx *sh, enum cfg_op op, enum seg_pos pos)
{
	static uint8_t scratch[WIRE_MAX_FRAME];
	const struct cfg_flow_group *g = sh->group;
	struct pkt_plan pp = shape_plan(g, op, pos);
	const struct wire_opcode_info *info = wire_opcode_info(pp.opcode);
	const struct qp_ids neutral = {0};
	struct latency_probe probe = shape_probe(sh, 0);
	bool lat = g->latency != CFG_LAT_OFF;
	struct qp_shape *s;
	uint16_t len;

	if (sh->n_shapes == shapes_needed(g))
		return false;
	s = &sh->shapes[sh->n_shapes];
	/* bytes past the frame are copied too (as padding or zeros the payload writes over) */
	memset(scratch, 0, QP_SHAPE_COPY > WIRE_MIN_FRAME ? QP_SHAPE_COPY : WIRE_MIN_FRAME);
	len = write_generic(sh, &neutral, g->msg_size.fixed, &pp, 0, lat ? &probe : NULL, scratch);
	s->icrc_off = (uint16_t)(len - WIRE_ICRC_LEN);
	s->frame_len = len < WIRE_MIN_FRAME ? WIRE_MIN_FRAME : len;
	s->wire_len = (uint32_t)s->frame_len + 4;
	s->hdr_len = (uint16_t)(sh->hdr_len + info->hdr_len);
	s->bth_off = sh->hdr_len;
	s->payload = pp.payload;
	s->icrc_base = wire_icrc_load(scratch + s->icrc_off);
	s->psn_field = field_table_for(4, (size_t)(s->icrc_off - (s->bth_off + 12)));
#define EXT_AT(e) (info->ext_mask & WIRE_EXT_BIT(e) ? (uint16_t)(s->bth_off + info->offset[e]) : 0)
	s->reth_off = EXT_AT(WIRE_EXT_RETH);
	s->atomic_off = EXT_AT(WIRE_EXT_ATOMICETH);
	s->imm_off = EXT_AT(WIRE_EXT_IMMDT);
	s->deth_off = EXT_AT(WIRE_EXT_DETH);
#undef EXT_AT
	if (lat && pp.payload >= LATENCY_PROBE_LEN) { /* the probe's constant part, seq and time 0 */
		s->probe_off = s->hdr_len;
		s->seq_field = field_table_for(4, (size_t)(s->icrc_off - (s->probe_off + LATENCY_PROBE_SEQ_OFF + 4)));
		s->tx_field = field_table_for(8, (size_t)(s->icrc_off - (s->probe_off + LATENCY_PROBE_TX_OFF + 8)));
		if (!s->seq_field || !s->tx_field || s->probe_off + LATENCY_PROBE_LEN > QP_SHAPE_COPY)
			return false;
	}
	if (!s->psn_field || s->hdr_len > QP_SHAPE_COPY)
		return false;
	memcpy(s->bytes, scratch, QP_SHAPE_COPY);
	/* a QP's own bytes lie from the UDP source port to the end of the headers or probe, all
	 * within the copy and before the ICRC */
	sh->qp_shift[sh->n_shapes] =
		wire_crc_shift_for((size_t)(s->icrc_off - (s->icrc_off < QP_SHAPE_COPY ? s->icrc_off : QP_SHAPE_COPY)));
	sh->shape_of[op][pos] = (int8_t)sh->n_shapes++;
	return true;
}

/* The ICRC change of a QP's own bytes in shape i (CRC being linear: the CRC of the bytes that
 * differ from the shape's, shifted past the rest of the packet). */
static uint32_t own_icrc(const struct qp_group_tx *sh, unsigned i, const struct own_bytes *o)
{
	const struct qp_shape *s = &sh->shapes[i];
	uint8_t f[QP_SHAPE_COPY];
	size_t from = sh->sport_off, to = s->icrc_off < QP_SHAPE_COPY ? s->icrc_off : QP_SHAPE_COPY;

	memcpy(f, s->bytes, QP_SHAPE_COPY);
	own_write(sh, s, o, f, true);
	return wire_icrc_patch(0, s->bytes + from, f + from, to - from, sh->qp_shift[i]);
}

/* Every (operation, position) a fixed message size can give: READ one request; others ONLY, or
 * FIRST, MIDDLE (when more than two packets) and LAST. */
static void build_shapes(struct qp_group_tx *sh)
{
	const struct cfg_flow_group *g = sh->group;
	uint32_t size = g->msg_size.fixed, mtu = g->ib_mtu;

	memset(sh->shape_of, -1, sizeof(sh->shape_of));
	if (g->msg_size.dist != CFG_SIZE_FIXED)
		return;
	for (int op = 0; op < CFG_OP_COUNT; op++) {
		if (!g->op_weight[op])
			continue;
		if (single_request((uint8_t)op) || size <= mtu) {
			add_shape(sh, (enum cfg_op)op, POS_ONLY);
			continue;
		}
		add_shape(sh, (enum cfg_op)op, POS_FIRST);
		if (size > 2 * mtu)
			add_shape(sh, (enum cfg_op)op, POS_MIDDLE);
		add_shape(sh, (enum cfg_op)op, POS_LAST);
	}
}

/* Checks that a shape with a QP's own bytes written over it and its ICRC term is the packet the
 * general path writes for that QP, for the group's first, second and last QP; on a mismatch the
 * group builds every packet the general way. */
static void check_shapes(struct qp_group_tx *sh)
{
	static uint8_t want[WIRE_MAX_FRAME];
	const struct cfg_flow_group *g = sh->group;
	uint32_t which[3] = {0, g->count > 1 ? 1 : 0, g->count ? g->count - 1 : 0};

	for (unsigned k = 0; k < 3; k++) {
		struct qp_ids id = ids_of(g, which[k], 0x01020304u + which[k]);
		struct qp_tx qp = {.sh = sh, .qpn = id.qpn, .dest_qpn = id.dest_qpn, .sport = id.sport};
		struct qp_latency lat = {.flow = id.flow};
		struct latency_probe probe = shape_probe(sh, id.flow);
		struct own_bytes o;

		if (g->latency != CFG_LAT_OFF)
			qp.lat = &lat;
		own_prepare(&qp, &o);
		for (int op = 0; op < CFG_OP_COUNT; op++)
			for (int pos = 0; pos < POS_COUNT; pos++) {
				int i = sh->shape_of[op][pos];
				const struct qp_shape *s = &sh->shapes[i < 0 ? 0 : i];
				struct pkt_plan pp = shape_plan(g, (enum cfg_op)op, (enum seg_pos)pos);
				uint8_t got[QP_SHAPE_COPY];
				size_t n = s->icrc_off < QP_SHAPE_COPY ? s->icrc_off : QP_SHAPE_COPY;
				uint16_t len;

				if (i < 0)
					continue;
				memset(want, 0, QP_SHAPE_COPY);
				len = write_generic(sh, &id, g->msg_size.fixed, &pp, 0, qp.lat ? &probe : NULL, want);
				memcpy(got, s->bytes, QP_SHAPE_COPY);
				own_write(sh, s, &o, got, true);
				if (len != s->icrc_off + WIRE_ICRC_LEN || memcmp(got, want, n) != 0 ||
				    wire_icrc_load(want + s->icrc_off) != (s->icrc_base ^ own_icrc(sh, (unsigned)i, &o))) {
					sh->n_shapes = 0;
					memset(sh->shape_of, -1, sizeof(sh->shape_of));
					return;
				}
			}
	}
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
	init_exp_table();
	memset(sh, 0, sizeof(*sh));
	sh->group = g;
	sh->transport = (uint8_t)g->transport;
	sh->mtu = g->ib_mtu;
	sh->fixed_len = g->msg_size.dist == CFG_SIZE_FIXED ? g->msg_size.fixed : 0;
	sh->session = session;
	sh->only_op = only_op_of(g);
	sh->cold = needs_cold(g);
	init_group_opcodes(sh, g);
	build_template(sh, g, port, src_mac);
	init_group_pacing(sh, g, tsc_hz, start_tsc);
	build_shapes(sh);
	check_shapes(sh);
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
	struct qp_ids id = ids_of(g, index, flow);
	struct qp_msg *log;
	struct own_bytes o;

	memset(qp, 0, sizeof(*qp));
	qp->sh = sh;
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
	init_pacing(qp, g, tsc_hz, start_tsc);
	own_prepare(qp, &o);
	for (unsigned i = 0; i < sh->n_shapes; i++)
		qp->icrc_qp[i] = own_icrc(sh, i, &o);
	qp->fast = sh->fast && !sh->coll;
	if (qp->fast)
		qp->msg_len = sh->fixed_len;
}

/* ---- RC: the message log under the reliability state machine (rc_reliability.h) ------------ */

/* Sends again from `psn` on: the logged message that holds it becomes the current one. */
static void rewind_to(struct qp_tx *qp, uint32_t psn)
{
	for (unsigned i = 0; i < qp->log_n; i++) {
		const struct qp_msg *m = log_at(qp, i);
		uint32_t off = wire_psn_offset(psn, m->first_psn);

		if (off >= m->npsn)
			continue;
		qp->x->cur = (uint8_t)i;
		qp->msg_op = m->op;
		qp->msg_len = m->len;
		if (single_request(m->op)) { /* a READ is asked again whole, an atomic is one packet */
			qp->psn = m->first_psn;
			qp->msg_off = 0;
		} else {
			qp->psn = psn;
			qp->msg_off = off * qp->group->ib_mtu;
		}
		qp->in_message = true;
		return;
	}
}

static void qp_error(struct qp_tx *qp)
{
	STAT_ADD(qp->c.errors, 1);
	qp->stopping = true;
	qp->done = true;
}

/* RC latency: from a message's first transmission to the ACK that retires it. */
static void record_ack(struct qp_tx *qp, uint64_t sent_tsc, uint64_t now_tsc)
{
	uint64_t tx_ns = clock_tsc_to_ns(sent_tsc), rx_ns = clock_tsc_to_ns(now_tsc);

	lat_record(qp->lat->ack, (int64_t)(rx_ns - tx_ns));
	lat_sample_put(qp->lat->samples, &(struct lat_sample){.tx_ns = tx_ns, .rx_ns = rx_ns, .flow = qp->lat->flow,
								.port = qp->port, .session = qp->lat->session,
								.kind = LAT_ACK});
}

/* Everything up to and including `psn` is acknowledged (the reliability state moved una past
 * it): retire the messages it covers; a message being sent again that an ACK overtook is not
 * sent further, nor its acknowledged part. */
static void retire_through(struct qp_tx *qp, uint32_t psn, uint64_t now_tsc)
{
	struct qp_tx_cold *x = qp->x;
	unsigned popped = 0;

	while (qp->log_n) {
		struct qp_msg *m = log_at(qp, 0);
		uint32_t last = wire_psn_add(m->first_psn, m->npsn - 1);
		if (wire_psn_before(psn, last))
			break;
		if (qp->lat && qp->lat->ack && m->sent_tsc)
			record_ack(qp, m->sent_tsc, now_tsc);
		if (qp->cc && m->sent_tsc) /* TIMELY's RTT sample */
			congestion_on_rtt(qp->cc->lcore, qp->cc, clock_tsc_to_ns(now_tsc) - clock_tsc_to_ns(m->sent_tsc),
					  now_tsc);
		x->log_head = (uint8_t)((x->log_head + 1) & x->log_mask);
		qp->log_n--;
		popped++;
		STAT_ADD(qp->c.completions, 1);
		if (qp->sh->coll)
			collective_completed(qp->sh->coll, (uint32_t)(qp->c.completions - 1), now_tsc);
	}
	if (x->cur >= popped) {
		x->cur = (uint8_t)(x->cur - popped);
	} else { /* the message being sent again was acknowledged meanwhile */
		x->cur = 0;
		qp->in_message = false;
		qp->psn = x->rel.psn_high;
	}
	if (qp->in_message && wire_psn_before(qp->psn, x->rel.una))
		rewind_to(qp, x->rel.una);
	qp->done = qp->stopping && qp->log_n == 0;
}

/* Applies what the reliability state machine decided; false when the QP failed. */
static bool apply_actions(struct qp_tx *qp, const struct rc_rel_actions *a, uint64_t now_tsc)
{
	if (a->what & RC_REL_RETIRE)
		retire_through(qp, a->acked_psn, now_tsc);
	if (a->what & RC_REL_TIMEOUT)
		STAT_ADD(qp->c.timeouts, 1);
	if (a->what & RC_REL_FAIL) {
		qp_error(qp);
		return false;
	}
	if (a->what & RC_REL_RESEND)
		rewind_to(qp, a->resend_psn);
	return true;
}

/* The completer's event, counted, then given to the reliability state machine. */
static void count_event(struct qp_tx *qp, const struct comp_event *ev, uint64_t now_tsc)
{
	switch (ev->kind) {
	case COMP_ACK:
		STAT_ADD(qp->c.acks_rx, 1);
		if (ev->read_resp)
			STAT_ADD(qp->c.read_resp_rx, 1);
		break;
	case COMP_NAK_SEQ:
		STAT_ADD(qp->c.naks_rx, 1);
		if (qp->inj)
			inject_on_nak(qp->inj, now_tsc);
		break;
	case COMP_RNR_NAK:
		STAT_ADD(qp->c.rnr_naks_rx, 1);
		break;
	case COMP_NAK_FATAL:
	default:
		STAT_ADD(qp->c.naks_rx, 1);
		break;
	}
}

void qp_tx_complete(struct qp_tx *qp, const struct comp_event *ev, uint64_t now_tsc)
{
	struct rc_rel_event rev = {.kind = ev->kind, .syndrome = ev->syndrome, .psn = ev->psn};
	struct rc_rel_actions a;

	if (qp->done || qp->sh->transport != CFG_RC) /* only RC QPs have a completer */
		return;
	count_event(qp, ev, now_tsc);
	a = rc_rel_on_event(&qp->x->rel, &qp->sh->rel, &rev, now_tsc);
	apply_actions(qp, &a, now_tsc);
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

bool qp_tx_can_send(struct qp_tx *qp, uint64_t now_tsc)
{
	const struct qp_group_tx *sh = qp->sh;
	bool rc = sh->transport == CFG_RC;
	bool new_message = !qp->in_message && (!rc || qp->x->cur >= qp->log_n);
	struct rc_rel_actions timer;
	struct qp_tx_cold *x;

	/* a collective's next phase is not released yet; once it is, the message is paced from now
	 * (time spent at the barrier earns no credit) */
	if (sh->coll && new_message) {
		if (!collective_may_start(sh->coll, qp->c.messages))
			return false;
		if (qp->next_fp < now_tsc << PACE_SHIFT)
			qp->next_fp = now_tsc << PACE_SHIFT;
	}
	if (!rc) {
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
	x = qp->x;
	timer = rc_rel_on_timer(&x->rel, &sh->rel, qp->log_n != 0, now_tsc);
	if (timer.what && !apply_actions(qp, &timer, now_tsc))
		return false;
	if (!rc_rel_may_send(&x->rel, now_tsc))
		return false;
	if (qp->in_message || x->cur < qp->log_n)
		return true;
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
		len = write_generic(qp->sh, &id, qp->msg_len, &pp, qp->psn, has_probe ? &probe : NULL, f);
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
	/* the group's shapes made the QP's own once per call (its bytes written over a copy, its
	 * ICRC term and its pacing time at its rate now folded in): each packet is then a plain copy,
	 * as if the QP had shapes of its own. (Writing its bytes into every packet instead cost more:
	 * five narrow stores a packet against eight wide ones a call.) */
	uint8_t own_shape[QP_MAX_SHAPES][QP_SHAPE_COPY] __attribute__((aligned(16)));
	uint32_t base[QP_MAX_SHAPES];
	struct own_bytes own;
	struct qp_latency *lat = probes ? qp->lat : NULL; /* a constant NULL compiles the probe work out */
	const bool clean = qp->clean_payload;
	const struct wire_icrc_field *tx_field = NULL;
	uint32_t seq = lat ? lat->seq : 0, tx_delta = 0;
	/* the burst's time: its packets reach the PMD together when it is complete, so a TSC read per
	 * packet or per visit would not be nearer their hand-over than the time the burst began */
	uint64_t tx_ns = lat ? clock_tsc_to_ns(now_tsc) : 0;
	struct count_delta seq_delta = {0};
	unsigned n = 0;
	uint32_t icrc;
	uint8_t *f;

	if (qp->stopping)
		may_start = 0;
	if (likely(next <= until_fp)) {
		own_prepare(qp, &own);
		for (unsigned i = 0; i < sh->n_shapes; i++) {
			const struct qp_shape *s = &sh->shapes[i];
			memcpy(own_shape[i], s->bytes, QP_SHAPE_COPY);
			own_write(sh, s, &own, own_shape[i], false);
			base[i] = s->icrc_base ^ qp->icrc_qp[i];
			gap[i] = shape_gap(sh, per_byte, s); /* its pacing time at the QP's rate now */
		}
	}
	for (; n < max && next <= until_fp; n++) {
		uint32_t left = len - off;
		enum seg_pos pos;
		const struct qp_shape *s;
		unsigned si;

		if (off == 0 && msgs >= may_start)
			break;
		pos = (enum seg_pos)wire_pos_of(off == 0, left <= mtu);
		si = (unsigned)shape_of[pos];
		s = &sh->shapes[si];
		if (n + 1 < max) /* the next mbuf's header, read to find its data */
			rte_prefetch0(m[n + 1]);
		f = rte_pktmbuf_mtod(m[n], uint8_t *);
		/* the shape, its PSN (AckReq 0: UC and UD), and the ICRC moved from the shape's; in a
		 * clean pool the payload's zeros are there already */
		if (clean) {
			tx_payload_prepare(m[n], f, s->icrc_off);
			memcpy(f, own_shape[si], QP_SHAPE_COPY);
		} else {
			copy_shape_from(own_shape[si], s, f);
		}
		wire_put32(f + s->bth_off + 8, psn);
		icrc = base[si] ^ s->psn_field->table[1][(psn >> 16) & 0xFF] ^ s->psn_field->table[2][(psn >> 8) & 0xFF] ^
		       s->psn_field->table[3][psn & 0xFF];
		if (lat && s->probe_off) {
			uint8_t *p = f + s->probe_off;
			/* one time for the call's packets: its ICRC change is worked out once per layout */
			if (s->tx_field != tx_field) {
				tx_field = s->tx_field;
				tx_delta = probe_tx_delta(tx_field, tx_ns);
			}
			probe_put32(p + LATENCY_PROBE_SEQ_OFF, seq);
			probe_put64(p + LATENCY_PROBE_TX_OFF, tx_ns);
			icrc ^= tx_delta ^ count_icrc_delta(&seq_delta, s->seq_field, seq++);
		}
		wire_icrc_store(f + s->icrc_off, icrc);
		m[n]->data_len = s->frame_len;
		m[n]->pkt_len = s->frame_len;
		m[n]->ol_flags = 0; /* the role's pool keeps headers: no scheduled-send flag left over */
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
		lat->seq = seq;
	qp->next_fp = next;
	qp->msg_off = off;
	qp->in_message = off != 0;
	STAT_ADD(qp->c.tx_packets, n);
	STAT_ADD(qp->c.tx_bytes, bytes);
	STAT_ADD(qp->c.messages, msgs);
	STAT_ADD(qp->c.payload_bytes, msgs * len);
	/* UC and UD are done once the last message has gone */
	if (msgs >= may_start && off == 0)
		qp->stopping = qp->done = true;
	return n;
}

/* What congestion control and event injection see of a call's packets (only QPs that have them). */
static unsigned after_fill(struct qp_tx *qp, struct rte_mbuf **m, unsigned n, uint64_t bytes, uint64_t now_tsc)
{
	if (qp->inj && n)
		n = inject_tx(qp->inj, m, n, now_tsc);
	qp->cc_bytes += bytes;
	if (qp->cc && qp->cc_bytes >= qp->cc_bytes_due)
		congestion_on_sent(qp->cc->lcore, qp->cc, now_tsc);
	return n;
}

unsigned qp_tx_fill(struct qp_tx *qp, struct rte_mbuf **m, unsigned max, uint64_t now_tsc, uint64_t until_fp)
{
	uint64_t bytes = qp->c.tx_bytes;
	unsigned n = 0;

	if (qp->done)
		return 0;
	if (unlikely(qp->cc != NULL) && now_tsc >= qp->cc_due_tsc) /* its timers due by now first */
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

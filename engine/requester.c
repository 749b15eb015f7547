/* SPDX-License-Identifier: BSD-3-Clause */
#include <math.h>
#include <string.h>

#include <rte_mbuf.h>

#include "requester.h"

enum seg_pos { POS_FIRST, POS_MIDDLE, POS_LAST, POS_ONLY };

/* Opcode (low 5 bits) per operation and position in the message; the transport base is added.
 * READ is a single request packet whatever the length. */
static const uint8_t op_code[CFG_OP_COUNT][4] = {
	[CFG_OP_SEND] = {0x00, 0x01, 0x02, 0x04},
	[CFG_OP_SEND_IMM] = {0x00, 0x01, 0x03, 0x05},
	[CFG_OP_WRITE] = {0x06, 0x07, 0x08, 0x0A},
	[CFG_OP_WRITE_IMM] = {0x06, 0x07, 0x09, 0x0B},
	[CFG_OP_READ] = {0x0C, 0x0C, 0x0C, 0x0C},
};

static const uint8_t transport_base[] = {[CFG_RC] = WIRE_TRANSPORT_RC, [CFG_UC] = WIRE_TRANSPORT_UC,
					 [CFG_UD] = WIRE_TRANSPORT_UD};

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

static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [0, n) by multiply-shift (Lemire), no division. */
static inline uint32_t rng_below(uint64_t *s, uint32_t n) { return (uint32_t)(((rng_next(s) >> 32) * n) >> 32); }

uint32_t qp_max_frame(const struct cfg_flow_group *g)
{
	uint32_t ip = g->ip_version == 6 ? WIRE_IPV6_HLEN : WIRE_IPV4_HLEN;

	return WIRE_ETH_HLEN + WIRE_VLAN_HLEN + ip + WIRE_UDP_HLEN + WIRE_BTH_LEN + WIRE_RETH_LEN + WIRE_IMMDT_LEN +
	       WIRE_DETH_LEN + g->ib_mtu + 3 + WIRE_ICRC_LEN;
}

/* The L2 + IP + UDP part of every frame of the QP, lengths patched per packet. */
static void build_template(struct qp_tx *qp, const struct cfg_flow_group *g, const struct cfg_port *port,
			   const uint8_t src_mac[6])
{
	struct wire_roce_spec s = {0};
	uint8_t frame[128];
	uint32_t fl = wire_flow_label_from_qpns(qp->qpn, qp->dest_qpn);

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
	s.ip.flow_label = fl;
	memcpy(s.ip.src, g->ip_version == 6 ? port->ipv6 : port->ipv4, g->ip_version == 6 ? 16 : 4);
	memcpy(s.ip.dst, g->dst_ip, 16);
	s.udp.sport = g->sport_entropy ? wire_udp_sport_from_flow_label(fl)
				       : (uint16_t)(g->sport + qp->index * g->sport_step);
	s.bth.opcode = WIRE_OP_RC_ACK; /* any: only the headers before the BTH are kept */
	s.bth.pkey = g->pkey;
	wire_build_roce(&s, frame, sizeof(frame));
	qp->l3_off = (uint16_t)(WIRE_ETH_HLEN + (g->has_vlan ? WIRE_VLAN_HLEN : 0));
	qp->hdr_len = (uint16_t)(qp->l3_off + (g->ip_version == 6 ? WIRE_IPV6_HLEN : WIRE_IPV4_HLEN) + WIRE_UDP_HLEN);
	memcpy(qp->hdr, frame, qp->hdr_len);
}

static void init_pacing(struct qp_tx *qp, const struct cfg_flow_group *g, uint64_t tsc_hz, uint64_t start_tsc)
{
	double one = (double)(1u << PACE_SHIFT);

	qp->next_fp = start_tsc << PACE_SHIFT;
	if (g->rate_gbps > 0)
		qp->fp_per_byte = (uint64_t)((double)tsc_hz * 8.0 / (g->rate_gbps * 1e9) * one);
	if (g->rate_pps > 0)
		qp->fp_per_pkt = (uint64_t)((double)tsc_hz / g->rate_pps * one);
	if (g->pattern == CFG_PATTERN_ONOFF) {
		qp->onoff_on_fp = (uint64_t)(g->on_us * 1e-6 * (double)tsc_hz * one);
		qp->onoff_off_fp = (uint64_t)(g->off_us * 1e-6 * (double)tsc_hz * one);
		qp->onoff_end_fp = qp->next_fp + qp->onoff_on_fp;
	}
	qp->stop_tsc = g->stop_seconds > 0 ? start_tsc + (uint64_t)(g->stop_seconds * (double)tsc_hz) : 0;
}

void qp_tx_init(struct qp_tx *qp, const struct cfg_flow_group *g, uint32_t index, const struct cfg_port *port,
		const uint8_t src_mac[6], uint64_t tsc_hz, uint64_t start_tsc)
{
	init_exp_table();
	memset(qp, 0, sizeof(*qp));
	qp->group = g;
	qp->index = index;
	qp->qpn = g->qpn + index * g->qpn_step;
	qp->dest_qpn = g->dest_qpn + index * g->dest_qpn_step;
	qp->psn = g->start_psn;
	qp->rng = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)qp->qpn << 20) ^ index;
	qp->va = 0x100000000ULL + (uint64_t)qp->qpn * 0x10000000ULL;
	qp->rkey = 0x1000 + qp->qpn;
	qp->imm = qp->qpn;
	build_template(qp, g, port, src_mac);
	init_pacing(qp, g, tsc_hz, start_tsc);
}

static uint32_t pick_size(struct qp_tx *qp, const struct cfg_size *sz)
{
	uint64_t v;

	switch (sz->dist) {
	case CFG_SIZE_UNIFORM:
		return sz->min + rng_below(&qp->rng, sz->max - sz->min + 1);
	case CFG_SIZE_EXPONENTIAL:
		v = ((uint64_t)sz->mean * exp_q16[rng_below(&qp->rng, 1024)]) >> 16;
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

	for (int i = 0; i < CFG_OP_COUNT; i++)
		total += w[i];
	r = rng_below(&qp->rng, total);
	for (int i = 0; i < CFG_OP_COUNT; i++) {
		if (r < w[i])
			return (uint8_t)i;
		r -= w[i];
	}
	return CFG_OP_SEND;
}

static void start_message(struct qp_tx *qp)
{
	qp->msg_op = pick_op(qp);
	qp->msg_len = pick_size(qp, &qp->group->msg_size);
	qp->msg_off = 0;
	qp->in_message = true;
}

/* Time the packet just sent occupies at the flow's rate, and the ON/OFF gaps. */
static void advance_pacing(struct qp_tx *qp, uint16_t frame_len)
{
	uint64_t gap = qp->fp_per_pkt + qp->fp_per_byte * (uint64_t)(frame_len + 4);

	if (qp->group->pattern == CFG_PATTERN_POISSON)
		gap = (gap >> 8) * exp_q16[rng_below(&qp->rng, 1024)] >> 8;
	/* at least one tick: unpaced QPs of a role then take turns instead of the first one
	 * staying at the top of the heap */
	qp->next_fp += gap ? gap : 1;
	if (qp->onoff_on_fp && qp->next_fp >= qp->onoff_end_fp) {
		qp->next_fp = qp->onoff_end_fp + qp->onoff_off_fp;
		qp->onoff_end_fp = qp->next_fp + qp->onoff_on_fp;
	}
}

static void check_stop(struct qp_tx *qp, uint64_t now_tsc)
{
	const struct cfg_flow_group *g = qp->group;

	if ((g->stop_messages && qp->c.messages >= g->stop_messages) ||
	    (g->stop_bytes && qp->c.payload_bytes >= g->stop_bytes) || (qp->stop_tsc && now_tsc >= qp->stop_tsc))
		qp->done = true;
}

/* Counters are read by the main lcore while this lcore writes them: single writer, relaxed. */
#define STAT_ADD(field, v) __atomic_store_n(&(field), (field) + (v), __ATOMIC_RELAXED)

uint16_t qp_tx_next(struct qp_tx *qp, struct rte_mbuf *m, uint64_t now_tsc)
{
	const struct cfg_flow_group *g = qp->group;
	const struct wire_opcode_info *info;
	struct wire_ext_hdrs ext = {0};
	struct wire_bth bth = {0};
	uint32_t mtu = g->ib_mtu, left, payload;
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *), *p;
	enum seg_pos pos;
	uint16_t udp_len, len;

	if (!qp->in_message)
		start_message(qp);
	left = qp->msg_len - qp->msg_off;
	if (qp->msg_op == CFG_OP_READ) {
		pos = POS_ONLY;
		payload = 0;
	} else {
		payload = left < mtu ? left : mtu;
		pos = qp->msg_off == 0 ? (left <= mtu ? POS_ONLY : POS_FIRST) : (left <= mtu ? POS_LAST : POS_MIDDLE);
	}
	bth.opcode = (uint8_t)(transport_base[g->transport] + op_code[qp->msg_op][pos]);
	info = wire_opcode_info(bth.opcode);
	bth.pad = (uint8_t)((4 - (payload & 3)) & 3);
	bth.pkey = g->pkey;
	bth.dqpn = qp->dest_qpn;
	bth.psn = qp->psn;
	bth.ackreq = g->transport == CFG_RC && (pos == POS_LAST || pos == POS_ONLY);
	bth.se = (info->flags & WIRE_OPF_IMM) != 0;
	ext.reth = (struct wire_reth){.va = qp->va, .rkey = qp->rkey, .dma_len = qp->msg_len};
	ext.immdt = qp->imm;
	ext.deth = (struct wire_deth){.qkey = g->qkey, .src_qp = qp->qpn};

	memcpy(f, qp->hdr, qp->hdr_len);
	p = f + qp->hdr_len;
	wire_bth_write(p, &bth);
	wire_ext_write(p, info, &ext);
	p += info->hdr_len;
	memset(p, 0, payload + bth.pad);
	p += payload + bth.pad;
	udp_len = (uint16_t)(p - (f + qp->hdr_len) + WIRE_UDP_HLEN + WIRE_ICRC_LEN);
	wire_set_ip_udp_len(f + qp->l3_off, udp_len);
	wire_icrc_store(p, wire_icrc(f + qp->l3_off, (size_t)(p - (f + qp->l3_off))));
	len = (uint16_t)(p + WIRE_ICRC_LEN - f);
	if (len < WIRE_MIN_FRAME) {
		memset(f + len, 0, WIRE_MIN_FRAME - len);
		len = WIRE_MIN_FRAME;
	}
	m->data_len = len;
	m->pkt_len = len;

	/* a READ request consumes one PSN per response packet it asks for */
	qp->psn = (qp->psn + (qp->msg_op == CFG_OP_READ ? (left ? (left + mtu - 1) / mtu : 1) : 1)) & 0xFFFFFF;
	qp->msg_off += qp->msg_op == CFG_OP_READ ? left : payload;
	STAT_ADD(qp->c.tx_packets, 1);
	STAT_ADD(qp->c.tx_bytes, len);
	if (pos == POS_LAST || pos == POS_ONLY) {
		qp->in_message = false;
		STAT_ADD(qp->c.messages, 1);
		STAT_ADD(qp->c.payload_bytes, qp->msg_len);
		check_stop(qp, now_tsc);
	}
	advance_pacing(qp, len);
	return len;
}

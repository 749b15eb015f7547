/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Between the requester's files, not included outside transport/: requester.c (init, pacing,
 * message choice, can-send, the fill loops), tx_template.c (opcodes, the L2-L4 template, packets
 * written the general way), tx_shapes.c (the shapes of fixed-size flows and their ICRC terms) and
 * rc_log.c (the RC message log under the reliability state machine).
 *
 * What the fill loops do per packet is here as static inline (a shape's copy, the QP's own bytes
 * over it, the ICRC moved by table lookups): the build has no LTO, so a per-packet helper in
 * another file would be a call; what runs per message or at start-up is out of line.
 */
#ifndef ROCE_ENGINE_REQUESTER_INTERNAL_H
#define ROCE_ENGINE_REQUESTER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>

#include "latency.h"
#include "requester.h"

/* READ requests and atomics are one packet without payload, whatever the message size. */
static inline bool single_request(uint8_t op) { return op >= CFG_OP_READ; }
#define ATOMIC_LEN 8

/* What names a QP in its frames, from its place in the group: its QPNs, UDP source port and the
 * flow id its latency probes carry. */
struct qp_ids {
	uint32_t qpn, dest_qpn, flow;
	uint16_t sport;
};

static inline uint64_t qp_va(uint32_t qpn) { return 0x100000000ULL + (uint64_t)qpn * 0x10000000ULL; }
static inline uint32_t qp_rkey(uint32_t qpn) { return 0x1000 + qpn; }

/* A packet's place in its message, its opcode and its payload. */
struct pkt_plan {
	enum seg_pos pos;
	uint8_t opcode;
	bool ackreq;
	uint32_t payload;
};

/* RC: the logged message i places after the oldest one in flight. */
static inline struct qp_msg *log_at(struct qp_tx *qp, unsigned i)
{
	return &qp->x->log[(qp->x->log_head + i) & qp->x->log_mask];
}

/* ---- tx_template.c: opcodes, the L2-L4 template, packets written the general way ----------- */

/* The opcode of an operation's packet at `pos` (0 for an operation the transport lacks). */
uint8_t tx_opcode_for(enum cfg_transport t, uint8_t op, enum seg_pos pos);
/* The group's opcode table and its L2 + IP + UDP template (lengths patched per packet; the UDP
 * source port and the IPv6 flow label 0 there, each QP writes its own). */
void tx_template_build(struct qp_group_tx *sh, const struct cfg_flow_group *g, const struct cfg_port *port,
		       const uint8_t src_mac[6]);
/* What names QP `index` of the group (flow: its index in the engine). */
struct qp_ids tx_ids_of(const struct cfg_flow_group *g, uint32_t index, uint32_t flow);
/* Any packet, from the template: BTH and extended headers written, payload zeroed, the ICRC
 * computed over the whole packet. Returns the frame length before Ethernet padding. */
uint16_t tx_write_generic(const struct qp_group_tx *sh, const struct qp_ids *id, uint32_t msg_len,
			  const struct pkt_plan *pp, uint32_t psn, const struct latency_probe *probe, uint8_t *f);

/* ---- a QP's own bytes over a shape (per packet: inline) ------------------------------------ */

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

/* ---- tx_shapes.c: the shapes of fixed-size flows ------------------------------------------- */

/* The bytes the group's ICRC field tables take after its struct qp_group_tx (qp_tx_group_size). */
size_t tx_shapes_field_bytes(const struct cfg_flow_group *g);
/* Builds the group's shapes (every (operation, position) a fixed message size gives) and checks
 * them against the general path; on a mismatch the group has none. */
void tx_shapes_build(struct qp_group_tx *sh);
/* The ICRC change of a QP's own bytes in shape i (qp_tx.icrc_qp[i]). */
uint32_t tx_shape_own_icrc(const struct qp_group_tx *sh, unsigned i, const struct own_bytes *o);

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

static inline uint16_t write_from_shape(const struct qp_tx *qp, unsigned shape, uint32_t psn, bool ackreq, uint8_t *f)
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

/* ---- rc_log.c: the RC message log under the reliability state machine ---------------------- */

/* Applies what the reliability state machine decided (retire, count a timeout, fail, rewind);
 * false when the QP failed. */
bool rc_log_apply(struct qp_tx *qp, const struct rc_rel_actions *a, uint64_t now_tsc);

#endif

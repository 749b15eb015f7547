/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <rte_ethdev.h>
#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "classify.h"
#include "counters.h"
#include "pfc.h"
#include "frame_tap.h"
#include "local_port.h"
#include "responder.h"


/* The responder QPs' states, entered in the QP index. */
struct resp_table {
	unsigned n, cap;
	struct resp_qp q[] __rte_cache_aligned;
};

/* One responder QP; -1 when the index or the table is full. A key named again is the same QP
 * (made anew: the last one named wins). */
static int add_responder(struct qp_index *ix, struct resp_table *t, uint16_t port, uint32_t qpn, uint32_t peer_qpn,
			 uint32_t mtu, uint32_t ack_every, uint16_t pkey, uint32_t start_psn)
{
	struct qp_roles *r = qp_index_add(ix, port, qpn);
	struct resp_qp *q;

	if (!r || (!r->responder && t->n == t->cap))
		return -1;
	q = r->responder ? r->responder : &t->q[t->n++];
	r->responder = q;
	memset(q, 0, sizeof(*q));
	q->port = port;
	q->qpn = qpn;
	q->peer_qpn = peer_qpn;
	q->mtu = mtu;
	q->ack_every = ack_every;
	q->pkey = pkey;
	q->epsn = start_psn;
	for (int pos = 0; pos < WIRE_POS_COUNT; pos++)
		q->rd_opcode[pos] = (uint8_t)wire_opcode_select(WIRE_TRANSPORT_RC, WIRE_OPER_READ_RESPONSE,
								 (enum wire_pos)pos, false);
	return 0;
}

/* The config's `responders`: QPs answering requesters of another process. */
static int add_configured(struct qp_index *ix, struct resp_table *t, const struct engine_config *cfg)
{
	for (unsigned i = 0; i < cfg->n_responders; i++) {
		const struct cfg_responder *r = &cfg->responders[i];

		for (unsigned k = 0; k < r->count; k++)
			if (add_responder(ix, t, (uint16_t)r->port, r->qpn + k * r->qpn_step, r->peer_qpn + k * r->peer_qpn_step,
					  r->ib_mtu, r->ack_every, r->pkey, r->start_psn))
				return -1;
	}
	return 0;
}

unsigned responder_table_need(const struct engine_config *cfg, const uint8_t port_macs[][6], unsigned n_ports)
{
	unsigned n = 0;

	for (unsigned g = 0; g < cfg->n_groups; g++)
		if (cfg->groups[g].transport == CFG_RC && flow_dst_port(&cfg->groups[g], port_macs, n_ports) >= 0)
			n += cfg->groups[g].count;
	for (unsigned i = 0; i < cfg->n_responders; i++)
		n += cfg->responders[i].count;
	return n;
}

int responder_table_build(struct qp_index *ix, const struct engine_config *cfg, const uint8_t port_macs[][6],
			  unsigned n_ports, struct resp_table **out)
{
	unsigned cap = responder_table_need(cfg, port_macs, n_ports);
	struct resp_table *t;

	*out = NULL;
	if (cap == 0)
		return 0;
	t = rte_zmalloc("rc_responders", sizeof(*t) + sizeof(struct resp_qp) * cap, RTE_CACHE_LINE_SIZE);
	if (!t)
		return -1;
	t->cap = cap;
	*out = t;
	for (unsigned g = 0; g < cfg->n_groups; g++) {
		const struct cfg_flow_group *grp = &cfg->groups[g];
		int port = flow_dst_port(grp, port_macs, n_ports);

		if (grp->transport != CFG_RC || port < 0)
			continue;
		for (unsigned i = 0; i < grp->count; i++)
			if (add_responder(ix, t, (uint16_t)port, grp->dest_qpn + i * grp->dest_qpn_step,
					  grp->qpn + i * grp->qpn_step, grp->ib_mtu, grp->ack_every, grp->pkey, grp->start_psn))
				return -1;
	}
	return add_configured(ix, t, cfg);
}

void responder_table_free(struct resp_table *t) { rte_free(t); }

struct resp_qp *responder_find(const struct qp_index *ix, uint16_t port, uint32_t qpn)
{
	const struct qp_roles *r = qp_index_find(ix, port, qpn);

	return r ? r->responder : NULL;
}

/* ---- answers ------------------------------------------------------------------------------- */

/* The answers' headers: the request's, with addresses swapped, to the peer QP. */
static void learn_peer(struct resp_qp *q, const struct wire_pkt *p)
{
	struct wire_roce_spec *r = &q->reply;

	memset(r, 0, sizeof(*r));
	memcpy(r->l2.src, p->l2.dst, 6);
	memcpy(r->l2.dst, p->l2.src, 6);
	r->l2.vlan = p->l2.vlan;
	r->l2.vid = p->l2.vid;
	r->l2.pcp = p->l2.pcp;
	r->ip = p->ip;
	memcpy(r->ip.src, p->ip.dst, 16);
	memcpy(r->ip.dst, p->ip.src, 16);
	r->ip.ttl = 64;
	r->ip.ecn = p->ip.ecn == WIRE_ECN_CE ? WIRE_ECN_ECT0 : p->ip.ecn;
	r->ip.df = true;
	r->udp.sport = p->udp.sport;
	r->bth.pkey = q->pkey;
	r->bth.dqpn = q->peer_qpn;
	q->have_peer = true;
}

static void emit(struct resp_qp *q, struct resp_out *out, uint8_t opcode, uint32_t psn, uint8_t syndrome,
		 uint32_t payload, uint64_t atomic_orig)
{
	struct wire_roce_spec s = q->reply;
	struct rte_mbuf *m = resp_out_mbuf(out);

	if (!m)
		return;
	s.bth.opcode = opcode;
	s.bth.psn = psn & WIRE_PSN_MASK;
	s.ext.aeth = (struct wire_aeth){.syndrome = syndrome, .msn = q->msn & WIRE_MSN_MASK};
	s.ext.atomic_ack_orig = atomic_orig;
	s.payload_len = payload;
	resp_out_queue(out, m, wire_build_roce(&s, rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m)));
}

static void ack(struct resp_qp *q, struct resp_out *out, uint32_t psn)
{
	emit(q, out, WIRE_OP_RC_ACK, psn, wire_aeth_ack(WIRE_AETH_CREDITS_INVALID), 0, 0);
	STAT_ADD(q->c.acks_tx, 1);
	q->since_ack = 0;
}

bool responder_pump(struct resp_qp *q, struct resp_out *out)
{
	while (q->rd_active && out->n < RESP_OUT_MAX) {
		uint32_t sent = q->rd_len - q->rd_left, chunk = q->rd_left < q->mtu ? q->rd_left : q->mtu;
		bool first = sent == 0, last = q->rd_left <= q->mtu;

		emit(q, out, q->rd_opcode[wire_pos_of(first, last)], q->rd_psn, wire_aeth_ack(WIRE_AETH_CREDITS_INVALID),
		     chunk, 0);
		STAT_ADD(q->c.read_resp_tx, 1);
		q->rd_psn = wire_psn_add(q->rd_psn, 1);
		q->rd_left -= chunk;
		q->rd_active = !last;
	}
	return q->rd_active;
}

static void start_read(struct resp_qp *q, struct resp_out *out, uint32_t psn, uint32_t len)
{
	q->rd_active = true;
	q->rd_psn = psn;
	q->rd_len = q->rd_left = len;
	if (len == 0) { /* a zero-length READ still gets its one response */
		emit(q, out, WIRE_OP_RC_READ_RESP_ONLY, psn, wire_aeth_ack(WIRE_AETH_CREDITS_INVALID), 0, 0);
		STAT_ADD(q->c.read_resp_tx, 1);
		q->rd_active = false;
		return;
	}
	responder_pump(q, out);
}

static uint64_t do_atomic(struct resp_qp *q, uint8_t opcode, const struct wire_ext_hdrs *e)
{
	uint64_t orig = q->atomic_mem;

	if (opcode == WIRE_OP_RC_FETCH_ADD)
		q->atomic_mem += e->atomic.swap_add;
	else if (q->atomic_mem == e->atomic.compare)
		q->atomic_mem = e->atomic.swap_add;
	return orig;
}

/* A request behind ePSN: answer it again (rxe's duplicate_request). */
static void duplicate(struct resp_qp *q, const struct wire_pkt *p, const struct wire_ext_hdrs *e, struct resp_out *out)
{
	STAT_ADD(q->c.duplicates, 1);
	if (p->bth.opcode == WIRE_OP_RC_READ_REQUEST)
		start_read(q, out, p->bth.psn, e->reth.dma_len);
	else if ((p->bth.opcode == WIRE_OP_RC_FETCH_ADD || p->bth.opcode == WIRE_OP_RC_COMPARE_SWAP) && q->have_atomic &&
		 p->bth.psn == q->last_atomic_psn) /* the same answer again; the atomic is not redone */
		emit(q, out, WIRE_OP_RC_ATOMIC_ACK, p->bth.psn, wire_aeth_ack(WIRE_AETH_CREDITS_INVALID), 0,
		     q->last_atomic_orig);
	else if (p->bth.ackreq || (p->op->flags & WIRE_OPF_END))
		ack(q, out, wire_psn_sub(q->epsn, 1));
}

void responder_request(struct resp_qp *q, const uint8_t *frame, const struct wire_pkt *p, struct resp_out *out)
{
	struct wire_ext_hdrs e;
	int32_t d = wire_psn_diff(p->bth.psn, q->epsn);

	if (!q->have_peer)
		learn_peer(q, p);
	wire_ext_read(frame + p->bth_off, p->op, &e);
	if (d > 0) { /* a gap: one NAK, then silence until ePSN comes */
		STAT_ADD(q->c.out_of_sequence, 1);
		if (!q->nak_sent) {
			emit(q, out, WIRE_OP_RC_ACK, q->epsn, wire_aeth_nak(WIRE_NAK_PSN_SEQ_ERR), 0, 0);
			STAT_ADD(q->c.naks_tx, 1);
			q->nak_sent = true;
		}
		return;
	}
	if (d < 0) {
		duplicate(q, p, &e, out);
		return;
	}
	q->nak_sent = false;
	switch (p->bth.opcode) {
	case WIRE_OP_RC_READ_REQUEST:
		q->epsn = wire_psn_add(q->epsn, e.reth.dma_len ? (e.reth.dma_len + q->mtu - 1) / q->mtu : 1);
		q->msn++;
		STAT_ADD(q->c.delivered_messages, 1);
		start_read(q, out, p->bth.psn, e.reth.dma_len);
		return;
	case WIRE_OP_RC_COMPARE_SWAP:
	case WIRE_OP_RC_FETCH_ADD:
		q->epsn = wire_psn_add(q->epsn, 1);
		q->msn++;
		STAT_ADD(q->c.delivered_messages, 1);
		q->last_atomic_orig = do_atomic(q, p->bth.opcode, &e);
		q->last_atomic_psn = p->bth.psn;
		q->have_atomic = true;
		emit(q, out, WIRE_OP_RC_ATOMIC_ACK, p->bth.psn, wire_aeth_ack(WIRE_AETH_CREDITS_INVALID), 0,
		     q->last_atomic_orig);
		STAT_ADD(q->c.atomic_acks_tx, 1);
		return;
	default: /* SEND, WRITE */
		q->epsn = wire_psn_add(q->epsn, 1);
		STAT_ADD(q->c.delivered_bytes, p->payload_len);
		if (p->op->flags & WIRE_OPF_END) {
			q->msn++;
			STAT_ADD(q->c.delivered_messages, 1);
		}
		q->since_ack++;
		if (p->bth.ackreq || (q->ack_every && q->since_ack >= q->ack_every))
			ack(q, out, p->bth.psn);
	}
}

struct rte_mbuf *resp_out_mbuf(struct resp_out *out)
{
	struct rte_mbuf *m = NULL;

	if (!out->has_queue || out->n == RESP_OUT_MAX || !(m = rte_pktmbuf_alloc(out->pool)))
		STAT_ADD(out->dropped, 1);
	return m;
}

void resp_out_queue(struct resp_out *out, struct rte_mbuf *m, int len)
{
	if (len < 0) {
		rte_pktmbuf_free(m);
		STAT_ADD(out->dropped, 1);
		return;
	}
	m->data_len = m->pkt_len = (uint32_t)len;
	out->buf[out->n++] = m;
	if (unlikely(out->cap != NULL))
		capture_burst(out->cap, out->port_id, out->queue, &m, 1, true, rte_rdtsc());
}

/* The priority of a frame the lcore built (RoCE over IPv4 or IPv6, with or without a tag); -1 for
 * MAC-control frames, which PFC never pauses. */
static int frame_priority(const struct qos_map *map, const uint8_t *f)
{
	unsigned off = 12;
	bool tagged = f[12] == 0x81 && f[13] == 0x00;
	uint8_t pcp = tagged ? f[14] >> 5 : 0, dscp;

	if (tagged)
		off += 4;
	if (f[off] == 0x88 && f[off + 1] == 0x08)
		return -1;
	dscp = f[off + 2] >> 4 == 6 ? (uint8_t)(((f[off + 2] & 0x0F) << 2) | (f[off + 3] >> 6)) /* IPv6 traffic class */
				    : (uint8_t)(f[off + 3] >> 2);                                    /* IPv4 TOS */
	return qos_priority(map, dscp, tagged, pcp);
}

/* Answers of paused priorities stay queued, in order, behind the others (which go now). */
static unsigned hold_paused(struct resp_out *out, struct rte_mbuf **held)
{
	uint64_t now = rte_rdtsc();
	unsigned kept = 0, n_held = 0;

	for (unsigned i = 0; i < out->n; i++) {
		int prio = frame_priority(out->map, rte_pktmbuf_mtod(out->buf[i], const uint8_t *));
		if (prio >= 0 && pfc_paused(out->pause, (unsigned)prio, now))
			held[n_held++] = out->buf[i];
		else
			out->buf[kept++] = out->buf[i];
	}
	out->n = kept;
	return n_held;
}

void resp_out_flush(struct resp_out *out)
{
	struct rte_mbuf *held[RESP_OUT_MAX];
	unsigned n_held = 0;
	uint64_t bytes = 0;
	uint16_t sent;

	if (out->n && out->pause)
		n_held = hold_paused(out, held);
	if (out->n == 0)
		goto keep_held;
	for (unsigned i = 0; i < out->n; i++)
		bytes += out->buf[i]->pkt_len;
	sent = rte_eth_tx_burst(out->port_id, out->queue, out->buf, (uint16_t)out->n);
	for (unsigned i = sent; i < out->n; i++) /* still ours: not sent yet */
		bytes -= out->buf[i]->pkt_len;
	STAT_ADD(out->tx_packets, sent);
	STAT_ADD(out->tx_bytes, bytes);
	if (sent && sent < out->n)
		memmove(out->buf, out->buf + sent, (out->n - sent) * sizeof(out->buf[0]));
	out->n -= sent;
keep_held:
	for (unsigned i = 0; i < n_held; i++)
		out->buf[out->n++] = held[i];
}

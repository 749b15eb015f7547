/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <rte_mbuf.h>

#include "counters.h"
#include "local_port.h"
#include "notification.h"
#include "np.h"

static int add_peer(struct qp_index *ix, uint16_t port, uint32_t qpn, uint32_t peer)
{
	struct qp_roles *r = qp_index_add(ix, port, qpn);

	if (!r)
		return -1;
	r->peer_qpn = (int32_t)(peer & WIRE_QPN_MASK);
	return 0;
}

/* The QPN pairs of `responders` and `peers` entries. */
static int add_pairs(struct qp_index *ix, const struct cfg_responder *list, unsigned n)
{
	for (unsigned r = 0; r < n; r++)
		for (unsigned i = 0; i < list[r].count; i++)
			if (add_peer(ix, (uint16_t)list[r].port, list[r].qpn + i * list[r].qpn_step,
				     list[r].peer_qpn + i * list[r].peer_qpn_step))
				return -1;
	return 0;
}

unsigned notification_table_need(const struct engine_config *cfg, const uint8_t port_macs[][6], unsigned n_ports)
{
	unsigned n = 0;

	for (unsigned g = 0; g < cfg->n_groups; g++)
		if (flow_dst_port(&cfg->groups[g], port_macs, n_ports) >= 0)
			n += cfg->groups[g].count;
	for (unsigned i = 0; i < cfg->n_responders; i++)
		n += cfg->responders[i].count;
	for (unsigned i = 0; i < cfg->n_peers; i++)
		n += cfg->peers[i].count;
	return n;
}

int notification_table_build(struct qp_index *ix, const struct engine_config *cfg, const uint8_t port_macs[][6],
			     unsigned n_ports)
{
	for (unsigned g = 0; g < cfg->n_groups; g++) {
		const struct cfg_flow_group *grp = &cfg->groups[g];
		int port = flow_dst_port(grp, port_macs, n_ports);

		for (unsigned i = 0; port >= 0 && i < grp->count; i++)
			if (add_peer(ix, (uint16_t)port, grp->dest_qpn + i * grp->dest_qpn_step, grp->qpn + i * grp->qpn_step))
				return -1;
	}
	if (add_pairs(ix, cfg->responders, cfg->n_responders) || add_pairs(ix, cfg->peers, cfg->n_peers))
		return -1;
	return 0;
}

/* The sender's QPN, or -1. */
static int64_t sender_qpn(const struct qp_index *ix, uint16_t port, const uint8_t *frame, const struct wire_pkt *p)
{
	const struct qp_roles *r;

	if (p->op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_DETH)) /* UD: the DETH names it */
		return wire_get32(frame + p->bth_off + p->op->offset[WIRE_EXT_DETH] + 4) & WIRE_QPN_MASK;
	r = qp_index_find(ix, port, p->bth.dqpn);
	return r ? r->peer_qpn : -1;
}

static int build_cnp(const struct np_params *np, const struct wire_pkt *p, uint32_t dqpn, uint8_t *buf, size_t cap)
{
	struct wire_roce_spec s;

	memset(&s, 0, sizeof(s));
	memcpy(s.l2.src, p->l2.dst, 6);
	memcpy(s.l2.dst, p->l2.src, 6);
	s.l2.vlan = p->l2.vlan;
	s.l2.vid = p->l2.vid;
	s.l2.pcp = np->cnp_802p_prio;
	s.ip = p->ip;
	memcpy(s.ip.src, p->ip.dst, 16);
	memcpy(s.ip.dst, p->ip.src, 16);
	s.ip.dscp = np->cnp_dscp;
	s.ip.ecn = WIRE_ECN_NOT_ECT;
	s.ip.ttl = 64;
	s.ip.df = true;
	s.ip.id = 0;
	s.udp.sport = p->udp.sport;
	s.bth.opcode = WIRE_OP_CNP;
	s.bth.becn = true;
	s.bth.pkey = WIRE_DEFAULT_PKEY;
	s.bth.dqpn = dqpn;
	return wire_build_roce(&s, buf, cap);
}

void notification_on_frame(const struct qp_index *ix, const struct cfg_port *cp, uint16_t port, const uint8_t *frame,
			   const struct wire_pkt *p, struct rx_qp *q, struct rx_ctx *ctx, struct resp_out *out,
			   uint64_t now_ns)
{
	struct rte_mbuf *m;
	int64_t dqpn;

	if (p->ip.ecn != WIRE_ECN_CE || !q || (p->op->flags & WIRE_OPF_RESPONSE) || !cp->np_enabled)
		return;
	if (!np_on_ce(&q->np, &cp->np, now_ns)) {
		STAT_ADD(q->c.cnp_suppressed, 1);
		rx_count_np(ctx, port, RX_NP_SUPPRESSED);
		return;
	}
	if ((dqpn = sender_qpn(ix, port, frame, p)) < 0) {
		rx_count_np(ctx, port, RX_NP_NO_PEER);
		return;
	}
	m = resp_out_mbuf(out);
	if (!m) {
		rx_count_np(ctx, port, RX_NP_FAILED);
		return;
	}
	resp_out_queue(out, m, build_cnp(&cp->np, p, (uint32_t)dqpn, rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m)));
	STAT_ADD(q->c.cnp_tx, 1);
	rx_count_np(ctx, port, RX_NP_SENT);
}

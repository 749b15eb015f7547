/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The requester's packets the general way: which opcode each (operation, position) takes, the
 * group's L2-L4 template, what names a QP in its frames, and any packet written in full from the
 * template (with its ICRC computed over it). The shapes (tx_shapes.c) are built with it and checked
 * against it; packets without a shape are written by it (requester_internal.h).
 */
#include <string.h>

#include "requester_internal.h"

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

/* A one-packet request is ONLY wherever it is; the immediate rides on a message's last packet;
 * an operation the transport lacks is refused by the config loader. */
uint8_t tx_opcode_for(enum cfg_transport t, uint8_t op, enum seg_pos pos)
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
			sh->opcode[op][pos] = tx_opcode_for(g->transport, (uint8_t)op, (enum seg_pos)pos);
}

uint32_t qp_max_frame(const struct cfg_flow_group *g)
{
	uint32_t ip = g->ip_version == 6 ? WIRE_IPV6_HLEN : WIRE_IPV4_HLEN;

	return WIRE_ETH_HLEN + WIRE_VLAN_HLEN + ip + WIRE_UDP_HLEN + WIRE_BTH_LEN + WIRE_RETH_LEN + WIRE_IMMDT_LEN +
	       WIRE_DETH_LEN + g->ib_mtu + 3 + WIRE_ICRC_LEN;
}

static uint16_t qp_sport(const struct cfg_flow_group *g, uint32_t index, uint32_t qpn, uint32_t dest_qpn)
{
	return g->sport_entropy ? wire_udp_sport_from_flow_label(wire_flow_label_from_qpns(qpn, dest_qpn))
				: (uint16_t)(g->sport + index * g->sport_step);
}

struct qp_ids tx_ids_of(const struct cfg_flow_group *g, uint32_t index, uint32_t flow)
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

void tx_template_build(struct qp_group_tx *sh, const struct cfg_flow_group *g, const struct cfg_port *port,
		       const uint8_t src_mac[6])
{
	init_group_opcodes(sh, g);
	build_template(sh, g, port, src_mac);
}

/* The template's QP fields: UDP source port, and IPv6's flow label (the QPN pair's, as verbs do). */
static void template_write_own(const struct qp_group_tx *sh, const struct qp_ids *id, uint8_t *f)
{
	wire_put16(f + sh->sport_off, id->sport);
	if (sh->ipv6)
		wire_put32(f + sh->l3_off, wire_get32(sh->hdr + sh->l3_off) | wire_flow_label_from_qpns(id->qpn, id->dest_qpn));
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

uint16_t tx_write_generic(const struct qp_group_tx *sh, const struct qp_ids *id, uint32_t msg_len,
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

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Frame parser: classifies a frame as RoCEv2 (or RoCEv1), CNP, PFC, PAUSE or other, decodes its
 * headers, and gives malformed frames a reason. Every read is checked against the length the
 * caller gave; the parser never looks past it.
 */
#include <string.h>

#include <rte_ip.h>

#include "wire.h"

static enum wire_kind malformed(struct wire_pkt *o, enum wire_error e)
{
	o->kind = WIRE_KIND_MALFORMED;
	o->error = (uint8_t)e;
	return WIRE_KIND_MALFORMED;
}

static enum wire_kind done(struct wire_pkt *o, enum wire_kind k)
{
	o->kind = (uint8_t)k;
	return k;
}

/* The last check of a well-formed RoCE or CNP frame: its ICRC (the costliest, so it comes after
 * every header check, and wire_parse_burst runs it for a whole burst at once). */
static void icrc_verdict(struct wire_pkt *o, uint32_t icrc)
{
	o->icrc_calc = icrc;
	o->icrc_checked = true;
	if (o->icrc_calc != o->icrc_wire)
		malformed(o, WIRE_ERR_ICRC);
}

static void check_icrc(const uint8_t *f, struct wire_pkt *o)
{
	size_t covered = o->icrc_off - o->l3_off;

	icrc_verdict(o, o->roce_version == 1 ? wire_icrc_v1(f + o->l3_off, covered) : wire_icrc(f + o->l3_off, covered));
}

/* Which packets may carry a pad: those with a payload that end a message. IBA sizes first and
 * middle packets to the path MTU, a multiple of four, so their pad count is zero. */
static bool pad_allowed(const struct wire_opcode_info *op, uint8_t pad)
{
	if (pad == 0)
		return true;
	return (op->flags & WIRE_OPF_PAYLOAD) && (op->flags & WIRE_OPF_END);
}

/* BTH .. ICRC at [bth_off, end). Shared by RoCEv2 and RoCEv1. */
static enum wire_kind parse_transport(const uint8_t *f, size_t bth_off, size_t end, unsigned flags,
				      struct wire_pkt *o)
{
	size_t avail = end - bth_off, rest;
	const struct wire_opcode_info *op;

	o->bth_off = (uint32_t)bth_off;
	o->frame_len = (uint32_t)end;
	if (avail < WIRE_BTH_LEN + WIRE_ICRC_LEN)
		return malformed(o, WIRE_ERR_TRUNCATED_BTH);
	wire_bth_read(f + bth_off, &o->bth);
	o->icrc_off = (uint32_t)(end - WIRE_ICRC_LEN);
	if (!(flags & WIRE_PARSE_HEADERS_ONLY) || (flags & WIRE_PARSE_CHECK_ICRC))
		o->icrc_wire = wire_icrc_load(f + o->icrc_off);
	if (o->bth.tver != 0)
		return malformed(o, WIRE_ERR_BAD_BTH_VERSION);
	op = wire_opcode_info(o->bth.opcode);
	if (op == NULL)
		return malformed(o, WIRE_ERR_UNKNOWN_OPCODE);
	o->op = op;
	if (avail < (size_t)op->hdr_len + WIRE_ICRC_LEN)
		return malformed(o, WIRE_ERR_TRUNCATED_BTH);
	if (avail & 3)
		return malformed(o, WIRE_ERR_BAD_LENGTH);
	rest = avail - op->hdr_len - WIRE_ICRC_LEN; /* payload + pad */
	o->payload_off = (uint32_t)(bth_off + op->hdr_len);
	if ((op->flags & WIRE_OPF_CNP) && rest != 0)
		return malformed(o, WIRE_ERR_BAD_CNP);
	if (!(op->flags & WIRE_OPF_PAYLOAD) && rest != 0)
		return malformed(o, WIRE_ERR_BAD_LENGTH);
	if (o->bth.pad > rest || !pad_allowed(op, o->bth.pad))
		return malformed(o, WIRE_ERR_BAD_PAD);
	o->payload_len = (uint32_t)(rest - o->bth.pad);
	done(o, (op->flags & WIRE_OPF_CNP) ? WIRE_KIND_CNP : WIRE_KIND_ROCE);
	if (flags & WIRE_PARSE_CHECK_ICRC)
		check_icrc(f, o);
	return (enum wire_kind)o->kind;
}

/* UDP header at l4 with `ip_payload` bytes available per the IP header. */
static enum wire_kind parse_udp(const uint8_t *f, size_t l4, size_t ip_payload, unsigned flags, struct wire_pkt *o)
{
	o->l4_off = (uint32_t)l4;
	if (ip_payload < WIRE_UDP_HLEN)
		return malformed(o, WIRE_ERR_UDP_LEN);
	o->udp.sport = wire_get16(f + l4);
	o->udp.dport = wire_get16(f + l4 + 2);
	o->udp.len = wire_get16(f + l4 + 4);
	if (o->udp.dport != WIRE_ROCEV2_UDP_PORT)
		return done(o, WIRE_KIND_OTHER);
	if (o->udp.len != ip_payload)
		return malformed(o, WIRE_ERR_UDP_LEN);
	o->roce_version = 2;
	return parse_transport(f, l4 + WIRE_UDP_HLEN, l4 + ip_payload, flags, o);
}

static void read_ecn_dscp(struct wire_ip *ip, uint8_t tclass)
{
	ip->dscp = tclass >> 2;
	ip->ecn = tclass & 3;
}

static enum wire_kind parse_ipv4(const uint8_t *f, size_t len, size_t off, unsigned flags, struct wire_pkt *o)
{
	const uint8_t *h = f + off;
	size_t ihl, total;
	uint16_t frag;

	if (len - off < WIRE_IPV4_HLEN)
		return malformed(o, WIRE_ERR_TRUNCATED_L3);
	o->ip.version = h[0] >> 4;
	if (o->ip.version != 4)
		return malformed(o, WIRE_ERR_BAD_IP_VERSION);
	ihl = (size_t)(h[0] & 0x0F) * 4;
	if (ihl < WIRE_IPV4_HLEN)
		return malformed(o, WIRE_ERR_BAD_IP_HLEN);
	read_ecn_dscp(&o->ip, h[1]);
	total = wire_get16(h + 2);
	o->ip.id = wire_get16(h + 4);
	frag = wire_get16(h + 6);
	o->ip.df = (frag & 0x4000) != 0;
	o->ip.ttl = h[8];
	memcpy(o->ip.src, h + 12, 4);
	memcpy(o->ip.dst, h + 16, 4);
	if (total < ihl || total > len - off)
		return malformed(o, WIRE_ERR_IP_LEN);
	if (h[9] != WIRE_IPPROTO_UDP || (frag & 0x1FFF) != 0) /* not UDP, or a later fragment */
		return done(o, WIRE_KIND_OTHER);
	if (total - ihl >= WIRE_UDP_HLEN && wire_get16(h + ihl + 2) == WIRE_ROCEV2_UDP_PORT) {
		if (frag & 0x2000)
			return malformed(o, WIRE_ERR_IP_FRAGMENT);
		if (ihl != WIRE_IPV4_HLEN)
			return malformed(o, WIRE_ERR_IP_OPTIONS);
		/* RFC 1071: the sum of the header's words, its checksum included, is 0xFFFF (in any
		 * byte order, which lets DPDK add native-order words) */
		if ((flags & WIRE_PARSE_CHECK_IP_CSUM) && rte_raw_cksum(h, WIRE_IPV4_HLEN) != 0xFFFF)
			return malformed(o, WIRE_ERR_IP_CHECKSUM);
	}
	return parse_udp(f, off + ihl, total - ihl, flags, o);
}

static void read_ipv6_like(const uint8_t *h, struct wire_ip *ip)
{
	uint32_t w = wire_get32(h);

	ip->version = (uint8_t)(w >> 28);
	read_ecn_dscp(ip, (uint8_t)(w >> 20));
	ip->flow_label = w & 0xFFFFF;
	ip->ttl = h[7];
	memcpy(ip->src, h + 8, 16);
	memcpy(ip->dst, h + 24, 16);
}

/* The IPv6 header, or the GRH of RoCEv1 (same layout): checks version and payload length. */
static enum wire_error read_ipv6_header(const uint8_t *f, size_t len, size_t off, struct wire_pkt *o, size_t *payload)
{
	if (len - off < WIRE_IPV6_HLEN)
		return WIRE_ERR_TRUNCATED_L3;
	read_ipv6_like(f + off, &o->ip);
	if (o->ip.version != 6)
		return WIRE_ERR_BAD_IP_VERSION;
	*payload = wire_get16(f + off + 4);
	if (*payload > len - off - WIRE_IPV6_HLEN)
		return WIRE_ERR_IP_LEN;
	return WIRE_ERR_NONE;
}

static enum wire_kind parse_ipv6(const uint8_t *f, size_t len, size_t off, unsigned flags, struct wire_pkt *o)
{
	size_t payload = 0;
	enum wire_error e = read_ipv6_header(f, len, off, o, &payload);

	if (e != WIRE_ERR_NONE)
		return malformed(o, e);
	if (f[off + 6] != WIRE_IPPROTO_UDP) /* extension headers: not RoCEv2 as RNICs send it */
		return done(o, WIRE_KIND_OTHER);
	return parse_udp(f, off + WIRE_IPV6_HLEN, payload, flags, o);
}

/* RoCEv1: a GRH (IPv6-shaped, next header 0x1B) followed directly by the BTH. */
static enum wire_kind parse_grh(const uint8_t *f, size_t len, size_t off, unsigned flags, struct wire_pkt *o)
{
	size_t payload = 0;
	enum wire_error e = read_ipv6_header(f, len, off, o, &payload);

	if (e != WIRE_ERR_NONE)
		return malformed(o, e);
	if (f[off + 6] != WIRE_GRH_NEXT_HDR_BTH)
		return done(o, WIRE_KIND_OTHER);
	o->roce_version = 1;
	return parse_transport(f, off + WIRE_IPV6_HLEN, off + WIRE_IPV6_HLEN + payload, flags, o);
}

static enum wire_kind parse_mac_control(const uint8_t *f, size_t len, size_t off, struct wire_pkt *o)
{
	if (len - off < 2)
		return malformed(o, WIRE_ERR_TRUNCATED_MAC_CTRL);
	o->mac_ctrl_opcode = wire_get16(f + off);
	switch (o->mac_ctrl_opcode) {
	case WIRE_MAC_CONTROL_PFC:
		if (len - off < 4 + 2 * WIRE_PFC_PRIORITIES)
			return malformed(o, WIRE_ERR_TRUNCATED_MAC_CTRL);
		if (f[off + 2] != 0) /* the vector's high byte is reserved */
			return malformed(o, WIRE_ERR_BAD_MAC_CTRL);
		o->pfc_enable = f[off + 3];
		for (int i = 0; i < WIRE_PFC_PRIORITIES; i++)
			o->quanta[i] = wire_get16(f + off + 4 + 2 * i);
		o->frame_len = (uint32_t)(off + 4 + 2 * WIRE_PFC_PRIORITIES);
		return done(o, WIRE_KIND_PFC);
	case WIRE_MAC_CONTROL_PAUSE:
		if (len - off < 4)
			return malformed(o, WIRE_ERR_TRUNCATED_MAC_CTRL);
		o->quanta[0] = wire_get16(f + off + 2);
		o->frame_len = (uint32_t)(off + 4);
		return done(o, WIRE_KIND_PAUSE);
	default: /* other MAC control opcodes (EPON GATE, ...) are not ours */
		return done(o, WIRE_KIND_OTHER);
	}
}

/* Every field a parse may leave unset reads zero. A plain memset of the whole record compiles to
 * `rep stos`, whose start-up costs more than the rest of a RoCE frame's header checks; a
 * structure assignment from a zeroed constant becomes a few vector moves. */
static const struct wire_pkt zero_pkt;

enum wire_kind wire_parse(const uint8_t *f, size_t len, unsigned flags, struct wire_pkt *o)
{
	size_t off = WIRE_ETH_HLEN;

	*o = zero_pkt;
	o->frame_len = (uint32_t)len;
	if (len < WIRE_ETH_HLEN)
		return malformed(o, WIRE_ERR_TRUNCATED_L2);
	memcpy(o->l2.dst, f, 6);
	memcpy(o->l2.src, f + 6, 6);
	o->ethertype = wire_get16(f + 12);
	if (o->ethertype == WIRE_ETHERTYPE_VLAN) {
		uint16_t tci;

		if (len < WIRE_ETH_HLEN + WIRE_VLAN_HLEN)
			return malformed(o, WIRE_ERR_TRUNCATED_L2);
		tci = wire_get16(f + 14);
		o->l2.vlan = true;
		o->l2.pcp = (uint8_t)(tci >> 13);
		o->l2.dei = (tci >> 12) & 1;
		o->l2.vid = tci & 0xFFF;
		o->ethertype = wire_get16(f + 16);
		off += WIRE_VLAN_HLEN;
	}
	o->l3_off = (uint32_t)off;
	switch (o->ethertype) {
	case WIRE_ETHERTYPE_IPV4:
		return parse_ipv4(f, len, off, flags, o);
	case WIRE_ETHERTYPE_IPV6:
		return parse_ipv6(f, len, off, flags, o);
	case WIRE_ETHERTYPE_ROCEV1:
		return parse_grh(f, len, off, flags, o);
	case WIRE_ETHERTYPE_MAC_CONTROL:
		return parse_mac_control(f, len, off, o);
	default:
		return done(o, WIRE_KIND_OTHER);
	}
}

void wire_parse_burst(const uint8_t *const frames[], const uint32_t lens[], unsigned n, unsigned flags,
		      struct wire_pkt out[])
{
	for (unsigned i = 0; i < n; i++)
		wire_parse(frames[i], lens[i], flags & ~WIRE_PARSE_CHECK_ICRC, &out[i]);
	if (!(flags & WIRE_PARSE_CHECK_ICRC))
		return;
	for (unsigned first = 0; first < n; first += WIRE_ICRC_MANY_MAX) {
		const uint8_t *l3[WIRE_ICRC_MANY_MAX];
		uint32_t covered[WIRE_ICRC_MANY_MAX], icrc[WIRE_ICRC_MANY_MAX];
		bool rocev1[WIRE_ICRC_MANY_MAX];
		unsigned which[WIRE_ICRC_MANY_MAX], k = 0;

		for (unsigned i = first; i < n && i < first + WIRE_ICRC_MANY_MAX; i++) {
			struct wire_pkt *o = &out[i];

			if (o->kind != WIRE_KIND_ROCE && o->kind != WIRE_KIND_CNP)
				continue;
			l3[k] = frames[i] + o->l3_off;
			covered[k] = o->icrc_off - o->l3_off;
			rocev1[k] = o->roce_version == 1;
			which[k++] = i;
		}
		wire_icrc_many(l3, covered, rocev1, k, icrc);
		for (unsigned j = 0; j < k; j++)
			icrc_verdict(&out[which[j]], icrc[j]);
	}
}

static const char *const kind_names[WIRE_KIND_COUNT] = {
	[WIRE_KIND_OTHER] = "other", [WIRE_KIND_ROCE] = "roce",   [WIRE_KIND_CNP] = "cnp",
	[WIRE_KIND_PFC] = "pfc",     [WIRE_KIND_PAUSE] = "pause", [WIRE_KIND_MALFORMED] = "malformed",
};

static const char *const error_names[WIRE_ERR_COUNT] = {
	[WIRE_ERR_NONE] = "none",
	[WIRE_ERR_TRUNCATED_L2] = "truncated_l2",
	[WIRE_ERR_TRUNCATED_L3] = "truncated_l3",
	[WIRE_ERR_BAD_IP_VERSION] = "bad_ip_version",
	[WIRE_ERR_BAD_IP_HLEN] = "bad_ip_hlen",
	[WIRE_ERR_IP_OPTIONS] = "ip_options",
	[WIRE_ERR_IP_LEN] = "ip_len",
	[WIRE_ERR_IP_FRAGMENT] = "ip_fragment",
	[WIRE_ERR_IP_CHECKSUM] = "ip_checksum",
	[WIRE_ERR_UDP_LEN] = "udp_len",
	[WIRE_ERR_TRUNCATED_BTH] = "truncated_bth",
	[WIRE_ERR_BAD_BTH_VERSION] = "bad_bth_version",
	[WIRE_ERR_UNKNOWN_OPCODE] = "unknown_opcode",
	[WIRE_ERR_BAD_LENGTH] = "bad_length",
	[WIRE_ERR_BAD_PAD] = "bad_pad",
	[WIRE_ERR_BAD_CNP] = "bad_cnp",
	[WIRE_ERR_ICRC] = "icrc",
	[WIRE_ERR_TRUNCATED_MAC_CTRL] = "truncated_mac_ctrl",
	[WIRE_ERR_BAD_MAC_CTRL] = "bad_mac_ctrl",
	[WIRE_ERR_OVERSIZE] = "oversize",
};

const char *wire_kind_name(enum wire_kind k) { return (unsigned)k < WIRE_KIND_COUNT ? kind_names[k] : "?"; }

const char *wire_error_name(enum wire_error e) { return (unsigned)e < WIRE_ERR_COUNT ? error_names[e] : "?"; }

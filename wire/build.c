/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Frame builders: RoCEv2 (every opcode of the table, IPv4/IPv6, optional 802.1Q tag), PFC and
 * PAUSE. Builders run at set-up time (templates) and in tools, not per packet: the data path
 * patches a built template and updates its ICRC incrementally.
 */
#include <string.h>

#include "wire.h"

static const uint8_t mac_control_dst[6] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};

static size_t l2_len(const struct wire_l2 *l2) { return WIRE_ETH_HLEN + (l2->vlan ? WIRE_VLAN_HLEN : 0); }

static size_t ip_len(const struct wire_ip *ip) { return ip->version == 6 ? WIRE_IPV6_HLEN : WIRE_IPV4_HLEN; }

static uint8_t pad_for(uint32_t payload_len) { return (uint8_t)((4 - (payload_len & 3)) & 3); }

/* Bytes from the UDP header to the end of the ICRC. */
static size_t udp_len(const struct wire_roce_spec *s, const struct wire_opcode_info *op)
{
	return WIRE_UDP_HLEN + op->hdr_len + s->payload_len + pad_for(s->payload_len) + WIRE_ICRC_LEN;
}

size_t wire_roce_frame_len(const struct wire_roce_spec *s)
{
	const struct wire_opcode_info *op = wire_opcode_info(s->bth.opcode);

	if (op == NULL)
		return 0;
	return l2_len(&s->l2) + ip_len(&s->ip) + udp_len(s, op);
}

static bool spec_valid(const struct wire_roce_spec *s)
{
	return (s->ip.version == 4 || s->ip.version == 6) && s->l2.pcp <= 7 && s->l2.vid <= 0xFFF &&
	       s->ip.dscp <= 63 && s->ip.ecn <= 3 && s->ip.flow_label <= 0xFFFFF &&
	       s->bth.dqpn <= 0xFFFFFF && s->bth.psn <= 0xFFFFFF && s->bth.tver <= 0xF &&
	       s->ext.aeth.msn <= 0xFFFFFF && s->ext.deth.src_qp <= 0xFFFFFF;
}

/* Writes the Ethernet header (and the tag) for `ethertype`; returns bytes written. */
static size_t put_l2(uint8_t *p, const struct wire_l2 *l2, uint16_t ethertype)
{
	memcpy(p, l2->dst, 6);
	memcpy(p + 6, l2->src, 6);
	if (l2->vlan) {
		wire_put16(p + 12, WIRE_ETHERTYPE_VLAN);
		wire_put16(p + 14, (uint16_t)(l2->pcp << 13 | (l2->dei ? 1 : 0) << 12 | l2->vid));
		wire_put16(p + 16, ethertype);
		return WIRE_ETH_HLEN + WIRE_VLAN_HLEN;
	}
	wire_put16(p + 12, ethertype);
	return WIRE_ETH_HLEN;
}

/* RFC 1071 ones' complement sum, folded. */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	for (; len > 1; p += 2, len -= 2)
		sum += wire_get16(p);
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}

uint16_t wire_ipv4_checksum(const uint8_t *ip)
{
	uint32_t sum = csum_add(0, ip, 10);

	return csum_fold(csum_add(sum, ip + 12, WIRE_IPV4_HLEN - 12));
}

void wire_set_ip_udp_len(uint8_t *l3, uint16_t udp_len)
{
	size_t ip_hlen = (l3[0] >> 4) == 6 ? WIRE_IPV6_HLEN : WIRE_IPV4_HLEN;

	wire_put16(l3 + ip_hlen + 4, udp_len);
	if (ip_hlen == WIRE_IPV6_HLEN) {
		wire_put16(l3 + 4, udp_len);
		return;
	}
	wire_put16(l3 + 2, (uint16_t)(WIRE_IPV4_HLEN + udp_len));
	wire_put16(l3 + 10, wire_ipv4_checksum(l3));
}

static size_t put_ip(uint8_t *p, const struct wire_ip *ip, size_t l4_len)
{
	uint8_t tclass = (uint8_t)(ip->dscp << 2 | ip->ecn);

	if (ip->version == 6) {
		wire_put32(p, 6u << 28 | (uint32_t)tclass << 20 | ip->flow_label);
		wire_put16(p + 4, (uint16_t)l4_len);
		p[6] = WIRE_IPPROTO_UDP;
		p[7] = ip->ttl;
		memcpy(p + 8, ip->src, 16);
		memcpy(p + 24, ip->dst, 16);
		return WIRE_IPV6_HLEN;
	}
	p[0] = 0x45;
	p[1] = tclass;
	wire_put16(p + 2, (uint16_t)(WIRE_IPV4_HLEN + l4_len));
	wire_put16(p + 4, ip->id);
	wire_put16(p + 6, ip->df ? 0x4000 : 0);
	p[8] = ip->ttl;
	p[9] = WIRE_IPPROTO_UDP;
	wire_put16(p + 10, 0);
	memcpy(p + 12, ip->src, 4);
	memcpy(p + 16, ip->dst, 4);
	wire_put16(p + 10, wire_ipv4_checksum(p));
	return WIRE_IPV4_HLEN;
}

/* RFC 768 / RFC 8200 checksum over the pseudo-header and the whole datagram (ICRC included). */
static void put_udp_checksum(uint8_t *l3, uint8_t version, size_t l4_len)
{
	size_t ip_hlen = version == 6 ? WIRE_IPV6_HLEN : WIRE_IPV4_HLEN;
	uint8_t *udp = l3 + ip_hlen;
	uint32_t sum;
	uint16_t csum;

	if (version == 6)
		sum = csum_add(0, l3 + 8, 32); /* source and destination addresses */
	else
		sum = csum_add(0, l3 + 12, 8);
	sum += WIRE_IPPROTO_UDP + (uint32_t)l4_len;
	sum = csum_add(sum, udp, l4_len);
	csum = csum_fold(sum);
	wire_put16(udp + 6, csum ? csum : 0xFFFF); /* 0 would mean "no checksum" */
}

int wire_build_roce(const struct wire_roce_spec *s, uint8_t *buf, size_t cap)
{
	const struct wire_opcode_info *op = wire_opcode_info(s->bth.opcode);
	struct wire_bth bth;
	size_t len, l4, off;
	uint8_t *bthp;

	if (op == NULL)
		return -WIRE_BUILD_BAD_OPCODE;
	if (!spec_valid(s))
		return -WIRE_BUILD_BAD_FIELD;
	if (s->payload_len && !(op->flags & WIRE_OPF_PAYLOAD))
		return -WIRE_BUILD_NO_PAYLOAD;
	if (pad_for(s->payload_len) && !(op->flags & WIRE_OPF_END))
		return -WIRE_BUILD_BAD_PAD;
	len = wire_roce_frame_len(s);
	if (s->payload_len > WIRE_MAX_FRAME || len > WIRE_MAX_FRAME)
		return -WIRE_BUILD_TOO_LONG;
	if (cap < len || cap < WIRE_MIN_FRAME)
		return -WIRE_BUILD_NO_ROOM;

	l4 = udp_len(s, op);
	off = put_l2(buf, &s->l2, s->ip.version == 6 ? WIRE_ETHERTYPE_IPV6 : WIRE_ETHERTYPE_IPV4);
	size_t l3_off = off;
	off += put_ip(buf + off, &s->ip, l4);

	wire_put16(buf + off, s->udp.sport);
	wire_put16(buf + off + 2, s->udp.dport ? s->udp.dport : WIRE_ROCEV2_UDP_PORT);
	wire_put16(buf + off + 4, (uint16_t)l4);
	wire_put16(buf + off + 6, 0); /* zero: RoCEv2 leaves it to the ICRC (masked out of it) */
	off += WIRE_UDP_HLEN;

	bthp = buf + off;
	bth = s->bth;
	bth.pad = pad_for(s->payload_len);
	wire_bth_write(bthp, &bth);
	wire_ext_write(bthp, op, &s->ext);
	off += op->hdr_len;

	if (s->payload)
		memcpy(buf + off, s->payload, s->payload_len);
	else
		memset(buf + off, 0, s->payload_len);
	off += s->payload_len;
	memset(buf + off, 0, bth.pad);
	off += bth.pad;

	wire_icrc_store(buf + off, wire_icrc(buf + l3_off, off - l3_off));
	off += WIRE_ICRC_LEN;
	if (s->udp_checksum)
		put_udp_checksum(buf + l3_off, s->ip.version, l4);
	if (off < WIRE_MIN_FRAME) {
		memset(buf + off, 0, WIRE_MIN_FRAME - off);
		off = WIRE_MIN_FRAME;
	}
	return (int)off;
}

/* Common part of PFC and PAUSE: header, opcode, zero padding to the minimum frame. */
static int put_mac_control(const uint8_t src[6], const uint8_t *dst, uint16_t opcode, uint8_t *buf, size_t cap)
{
	if (cap < WIRE_MIN_FRAME)
		return -WIRE_BUILD_NO_ROOM;
	memset(buf, 0, WIRE_MIN_FRAME);
	memcpy(buf, dst ? dst : mac_control_dst, 6);
	memcpy(buf + 6, src, 6);
	wire_put16(buf + 12, WIRE_ETHERTYPE_MAC_CONTROL);
	wire_put16(buf + 14, opcode);
	return WIRE_MIN_FRAME;
}

int wire_build_pfc(const uint8_t src[6], const uint8_t *dst, uint8_t class_enable,
		   const uint16_t quanta[WIRE_PFC_PRIORITIES], uint8_t *buf, size_t cap)
{
	int len = put_mac_control(src, dst, WIRE_MAC_CONTROL_PFC, buf, cap);

	if (len < 0)
		return len;
	wire_put16(buf + 16, class_enable);
	for (int i = 0; i < WIRE_PFC_PRIORITIES; i++)
		wire_put16(buf + 18 + 2 * i, quanta[i]);
	return len;
}

int wire_build_pause(const uint8_t src[6], const uint8_t *dst, uint16_t quanta, uint8_t *buf, size_t cap)
{
	int len = put_mac_control(src, dst, WIRE_MAC_CONTROL_PAUSE, buf, cap);

	if (len < 0)
		return len;
	wire_put16(buf + 16, quanta);
	return len;
}

const char *wire_build_error_name(int err)
{
	static const char *const names[] = {
		[WIRE_BUILD_OK] = "ok",
		[WIRE_BUILD_NO_ROOM] = "buffer too small",
		[WIRE_BUILD_BAD_OPCODE] = "opcode not supported",
		[WIRE_BUILD_BAD_FIELD] = "field out of range",
		[WIRE_BUILD_TOO_LONG] = "frame longer than the largest jumbo frame",
		[WIRE_BUILD_NO_PAYLOAD] = "payload on an opcode that carries none",
		[WIRE_BUILD_BAD_PAD] = "first/middle packet payload not a multiple of 4 (only last/only packets pad)",
	};

	if (err < 0)
		err = -err;
	return (size_t)err < sizeof(names) / sizeof(names[0]) ? names[err] : "unknown error";
}

uint16_t wire_udp_sport_from_flow_label(uint32_t fl)
{
	return (uint16_t)(((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14)) | 0xC000);
}

uint32_t wire_flow_label_from_qpns(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;

	v ^= v >> 20;
	v ^= v >> 40;
	return (uint32_t)(v & 0xFFFFF);
}

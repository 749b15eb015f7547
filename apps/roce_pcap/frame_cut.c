/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Frames a capture cut short. The captured bytes are copied into a frame of the length the frame
 * had, zeros where the capture stopped, and parsed as it: the lengths the parser compares (IP
 * total, UDP, transport) are then the frame's own. A check is only as good as the bytes it read,
 * so the verdict stands when everything it read was captured; otherwise the frame is decoded as
 * far as its captured headers go. The ICRC is checked only from the captured bytes themselves.
 */
#include <string.h>

#include "frame_cut.h"

/* The longest frame the parser can tell from a longer one: an IP datagram of 65,535 bytes past
 * a 40-byte header, VLAN-tagged. A cut frame is rebuilt to at most this. */
#define WHOLE_MAX (WIRE_ETH_HLEN + WIRE_VLAN_HLEN + WIRE_IPV6_HLEN + 65535)
#define UDP_PORTS_LEN 4  /* what tells RoCEv2 from other UDP: the destination port */
#define UDP_CHECKED_LEN 6 /* the ports and the length the parser compares with the IP header's */

/* End of what the parser reads at l3_off: IPv4's fixed 20 bytes (it reads no options), IPv6's
 * or the GRH's 40, a MAC control frame's opcode and its fields; nothing for other EtherTypes. */
static uint32_t l3_end(const struct wire_pkt *p)
{
	switch (p->ethertype) {
	case WIRE_ETHERTYPE_IPV4:
		return p->l3_off + WIRE_IPV4_HLEN;
	case WIRE_ETHERTYPE_IPV6:
	case WIRE_ETHERTYPE_ROCEV1:
		return p->l3_off + WIRE_IPV6_HLEN;
	case WIRE_ETHERTYPE_MAC_CONTROL:
		if (p->kind == WIRE_KIND_PFC)
			return p->l3_off + 4 + 2 * WIRE_PFC_PRIORITIES;
		return p->l3_off + (p->kind == WIRE_KIND_PAUSE || p->error == WIRE_ERR_BAD_MAC_CTRL ? 4 : 2);
	default:
		return p->l3_off;
	}
}

/* Bytes of the frame that the verdict in *p rests on: the end of the last header its checks read
 * (0: only the frame's length). An IPv4 header's options or fragment verdict needs the UDP port
 * after it too, which zeros never spell: the parser got no further without it. */
static uint32_t verdict_reads(const struct wire_pkt *p)
{
	if (p->kind == WIRE_KIND_MALFORMED) {
		switch (p->error) {
		case WIRE_ERR_TRUNCATED_L2: /* too short for the header, or for the tag its EtherType announces */
			return p->ethertype == WIRE_ETHERTYPE_VLAN ? WIRE_ETH_HLEN : 0;
		case WIRE_ERR_TRUNCATED_L3:
			return p->l3_off;
		case WIRE_ERR_TRUNCATED_BTH:
			if (!p->op) /* shorter than any BTH and ICRC: the lengths said so */
				return p->bth_off;
			return p->bth_off + WIRE_BTH_LEN;
		default: /* the header the parser was in: the deepest it had reached */
			if (p->bth_off)
				return p->bth_off + WIRE_BTH_LEN;
			if (p->l4_off)
				return p->l4_off + UDP_CHECKED_LEN;
			return l3_end(p);
		}
	}
	if (p->kind == WIRE_KIND_ROCE || p->kind == WIRE_KIND_CNP)
		return p->bth_off + WIRE_BTH_LEN;
	if (p->kind == WIRE_KIND_OTHER && p->l4_off) /* UDP to another port */
		return p->l4_off + UDP_PORTS_LEN;
	return l3_end(p);
}

/* Where caplen falls among the headers *p found, a UDP header counting as `udp_len` bytes (the
 * whole header, or what the parser reads of it). */
static enum frame_cut_place place_of(const struct wire_pkt *p, uint32_t caplen, uint32_t udp_len)
{
	bool roce = p->kind == WIRE_KIND_ROCE || p->kind == WIRE_KIND_CNP || p->bth_off;

	if (caplen < (p->l3_off ? p->l3_off : WIRE_ETH_HLEN))
		return CUT_L2;
	if (caplen < l3_end(p))
		return CUT_L3;
	if (p->l4_off && caplen < p->l4_off + udp_len)
		return CUT_L4;
	if (p->bth_off && caplen < p->bth_off + WIRE_BTH_LEN)
		return CUT_BTH;
	if (p->op && !(p->op->flags & WIRE_OPF_CNP) && caplen < p->bth_off + p->op->hdr_len)
		return CUT_EXT; /* a CNP's 16 reserved bytes are its body, not an extended header */
	return roce ? CUT_PAYLOAD : CUT_AFTER;
}

/* Drops from *p what lies at `place` and after it, and what was decided from it: the frame is
 * what its captured headers say (RoCEv2 when the UDP port says so, else other). */
static void forget_from(struct wire_pkt *p, enum frame_cut_place place, const uint8_t *frame, uint32_t caplen)
{
	p->kind = place == CUT_BTH ? WIRE_KIND_ROCE : WIRE_KIND_OTHER;
	p->error = WIRE_ERR_NONE;
	p->op = NULL;
	p->bth_off = p->payload_off = p->icrc_off = p->payload_len = p->icrc_wire = 0;
	memset(&p->bth, 0, sizeof(p->bth));
	if (place == CUT_BTH)
		return;
	p->roce_version = 0;
	p->l4_off = 0;
	memset(&p->udp, 0, sizeof(p->udp));
	if (place == CUT_L4)
		return;
	memset(&p->ip, 0, sizeof(p->ip));
	p->mac_ctrl_opcode = 0;
	p->pfc_enable = 0;
	memset(p->quanta, 0, sizeof(p->quanta));
	if (place == CUT_L3)
		return;
	p->l3_off = 0; /* the tag, or the EtherType itself, was cut */
	p->l2.vlan = p->l2.dei = false;
	p->l2.pcp = 0;
	p->l2.vid = 0;
	p->ethertype = caplen >= WIRE_ETH_HLEN ? wire_get16(frame + 12) : 0;
	if (caplen < 12)
		memset(&p->l2, 0, sizeof(p->l2));
}

void frame_cut_parse(const uint8_t *frame, uint32_t caplen, uint32_t len, unsigned flags, struct wire_pkt *p,
		     struct frame_cut *cut)
{
	static uint8_t whole[WHOLE_MAX];
	uint32_t n = len < WHOLE_MAX ? len : WHOLE_MAX;

	cut->caplen = caplen;
	cut->len = len;
	if (caplen >= n) { /* whole, or everything the parser could tell apart */
		wire_parse(frame, caplen, flags, p);
		cut->place = cut->unchecked = caplen < len ? CUT_AFTER : CUT_NONE;
		return;
	}
	memcpy(whole, frame, caplen);
	memset(whole + caplen, 0, n - caplen);
	wire_parse(whole, n, flags & ~WIRE_PARSE_CHECK_ICRC, p);
	if ((p->kind == WIRE_KIND_ROCE || p->kind == WIRE_KIND_CNP) && p->icrc_off + WIRE_ICRC_LEN <= caplen) {
		wire_parse(frame, caplen, flags, p); /* only what follows the datagram was cut: check it all */
		cut->place = cut->unchecked = CUT_AFTER;
		return;
	}
	cut->place = place_of(p, caplen, WIRE_UDP_HLEN);
	cut->unchecked = place_of(p, caplen, UDP_CHECKED_LEN); /* the UDP checksum is not checked */
	/* a verdict read from the zeros stands for nothing; nor do the fields of a UDP header cut
	 * short that decided nothing (another port's) */
	if (verdict_reads(p) > caplen || cut->unchecked == CUT_L4)
		forget_from(p, cut->unchecked, frame, caplen);
	else if (p->kind == WIRE_KIND_ROCE || p->kind == WIRE_KIND_CNP)
		p->icrc_wire = 0; /* not captured */
}

static const char *const place_text[CUT_PLACE_COUNT] = {
	[CUT_NONE] = "nothing", [CUT_AFTER] = "after the checked bytes", [CUT_PAYLOAD] = "the payload or ICRC",
	[CUT_EXT] = "the extended headers", [CUT_BTH] = "the BTH", [CUT_L4] = "the UDP header",
	[CUT_L3] = "the network header", [CUT_L2] = "the Ethernet header",
};
static const char *const place_name[CUT_PLACE_COUNT] = {
	[CUT_NONE] = "none", [CUT_AFTER] = "after", [CUT_PAYLOAD] = "payload", [CUT_EXT] = "ext",
	[CUT_BTH] = "bth",   [CUT_L4] = "udp",      [CUT_L3] = "l3",           [CUT_L2] = "l2",
};
static const char *const unchecked[CUT_PLACE_COUNT] = {
	[CUT_NONE] = "", [CUT_AFTER] = "",
	[CUT_PAYLOAD] = "the ICRC and the payload",
	[CUT_EXT] = "the extended headers, the ICRC and the payload",
	[CUT_BTH] = "the transport headers, the ICRC and the payload",
	[CUT_L4] = "the UDP header and what it carries",
	[CUT_L3] = "the network header and what it carries",
	[CUT_L2] = "the frame's type and all it carries",
};

const char *frame_cut_place_text(enum frame_cut_place place)
{
	return (unsigned)place < CUT_PLACE_COUNT ? place_text[place] : "?";
}

const char *frame_cut_place_name(enum frame_cut_place place)
{
	return (unsigned)place < CUT_PLACE_COUNT ? place_name[place] : "?";
}

const char *frame_cut_unchecked(enum frame_cut_place place)
{
	return (unsigned)place < CUT_PLACE_COUNT ? unchecked[place] : "?";
}

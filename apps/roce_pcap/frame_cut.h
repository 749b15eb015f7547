/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Frames a capture cut short (a snap length: caplen < len): what can be checked of them. The wire
 * parser judges a frame by its lengths (IP, UDP, transport), which are the frame's, not the
 * capture's: so the captured bytes are parsed as the frame they came from, every check whose
 * bytes were captured stands, and the cut says what could not be checked (docs/tools.md).
 */
#ifndef ROCE_PCAP_FRAME_CUT_H
#define ROCE_PCAP_FRAME_CUT_H

#include <stdint.h>

#include "wire.h"

/* Where the capture cut a frame, outermost last: what lies there and after it is not checked. */
enum frame_cut_place {
	CUT_NONE = 0,  /* the frame is whole */
	CUT_AFTER,     /* after every byte a check reads (Ethernet padding, a non-RoCE payload) */
	CUT_PAYLOAD,   /* RoCE: the headers are whole; the payload and the ICRC are not */
	CUT_EXT,       /* RoCE: in the extended headers (RETH, AETH, ...); the BTH is whole */
	CUT_BTH,       /* RoCEv2 by its UDP port; the BTH is not whole */
	CUT_L4,        /* in the UDP header */
	CUT_L3,        /* in the IP header (or GRH, or MAC control) */
	CUT_L2,        /* in the Ethernet header or its VLAN tag */
	CUT_PLACE_COUNT
};

struct frame_cut {
	uint32_t caplen, len;      /* bytes captured, bytes the frame had */
	enum frame_cut_place place; /* where the cut is */
	enum frame_cut_place unchecked; /* the first header not checked (past `place` when the checks
					 * read none of its cut bytes: a UDP checksum) */
};

/* Parses the captured bytes frame[0..caplen) of a frame of `len` bytes into *p (reading none
 * beyond caplen) and says where it was cut. A whole frame (caplen >= len) is wire_parse()'s. A cut
 * one keeps every verdict its captured bytes decide: malformed when a captured header is, and
 * otherwise the kind and headers as far as captured (headers past the cut are left out of *p:
 * no BTH when it is cut, and so on); its ICRC is checked only when all it covers was captured. */
void frame_cut_parse(const uint8_t *frame, uint32_t caplen, uint32_t len, unsigned flags, struct wire_pkt *p,
		     struct frame_cut *cut);

/* "the payload", "the BTH", ...: where a frame was cut, for "cut at N of M bytes, in ..." */
const char *frame_cut_place_text(enum frame_cut_place place);
/* "payload", "bth", ...: the same for JSON */
const char *frame_cut_place_name(enum frame_cut_place place);
/* What is not checked from `unchecked` on, e.g. "the ICRC and the payload" */
const char *frame_cut_unchecked(enum frame_cut_place unchecked);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Frame descriptions as users type them: KIND[:key=value[,key=value...]], e.g.
 *   rc_write_first:ip=6,vlan=100,pcp=3,dqpn=0x12,psn=7,va=0x1000,rkey=5,dmalen=4096,payload=1024
 *   cnp:dqpn=0x118      pfc:enable=0x08,q3=0xffff      pause:quanta=100
 */
#ifndef ROCE_PCAP_FRAME_DESC_H
#define ROCE_PCAP_FRAME_DESC_H

#include "wire.h"

enum frame_desc_kind { FRAME_DESC_ROCE, FRAME_DESC_PFC, FRAME_DESC_PAUSE };

struct frame_desc {
	enum frame_desc_kind kind;
	struct wire_roce_spec spec; /* RoCE: everything; PFC/PAUSE: l2.src and l2.dst */
	bool dmac_set;              /* PFC/PAUSE default to 01-80-C2-00-00-01 */
	bool bad_icrc;              /* write the correct ICRC xor 0xFFFFFFFF */
	uint8_t pfc_enable;
	uint16_t quanta[WIRE_PFC_PRIORITIES]; /* PAUSE uses quanta[0] */
};

/* Parses one description; on error writes a message naming the offending key into err. */
int frame_desc_parse(const char *text, struct frame_desc *d, char *err, size_t errlen);
/* Builds the frame; returns its length or a negative wire_build_error. */
int frame_desc_build(const struct frame_desc *d, uint8_t *buf, size_t cap);
/* The list `roce-pcap write --all` writes: every opcode x {IPv4, IPv6} x {untagged, tagged},
 * then a CNP, a PFC and a PAUSE frame. Returns how many descriptions were filled (<= max). */
size_t frame_desc_all(struct frame_desc *out, size_t max);
/* Checks a parsed frame against the description it was built from; returns NULL when every
 * field matches, else the name of the first field that differs. */
const char *frame_desc_compare(const struct frame_desc *d, const uint8_t *frame, const struct wire_pkt *p);

#endif

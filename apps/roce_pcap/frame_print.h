/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_PCAP_FRAME_PRINT_H
#define ROCE_PCAP_FRAME_PRINT_H

#include <stdio.h>

#include "frame_cut.h"
#include "wire.h"

/* "#3 len 78 roce IPv4 192.168.1.1 > 192.168.1.2 dscp 26 ecn 2 RC_SEND_ONLY dqpn 0x000012 ... icrc ok",
 * and for a frame the capture cut, " | cut at N of M bytes, in the payload or ICRC: ... not checked".
 * `frame` holds cut->caplen bytes, `p` what frame_cut_parse() made of them. */
void frame_print_text(FILE *out, unsigned index, const uint8_t *frame, const struct frame_cut *cut,
		      const struct wire_pkt *p);
/* One JSON object on one line. */
void frame_print_json(FILE *out, unsigned index, const uint8_t *frame, const struct frame_cut *cut,
		      const struct wire_pkt *p);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * RoCEv2 frames for the unit tests that feed a role what the network would: a wire builder's
 * spec between two hosts of one IPv4 subnet, the rest for the test to fill.
 */
#ifndef ROCE_TEST_FRAME_H
#define ROCE_TEST_FRAME_H

#include <string.h>

#include "wire.h"

/* From host `from` to host `to`: MACs 02:00:00:00:00:<host>, addresses 10.0.0.<host>, UDP source
 * port 0xC000, the default P_Key; opcode, QPN, PSN and payload are the caller's. */
static inline void test_frame_spec(struct wire_roce_spec *s, uint8_t from, uint8_t to)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->l2.src, (uint8_t[6]){0x02, 0, 0, 0, 0, from}, 6);
	memcpy(s->l2.dst, (uint8_t[6]){0x02, 0, 0, 0, 0, to}, 6);
	s->ip.version = 4;
	s->ip.ttl = 64;
	memcpy(s->ip.src, (uint8_t[4]){10, 0, 0, from}, 4);
	memcpy(s->ip.dst, (uint8_t[4]){10, 0, 0, to}, 4);
	s->udp.sport = 0xC000;
	s->bth.pkey = WIRE_DEFAULT_PKEY;
}

/* A request of 64 payload bytes from host 1 to host 2, with the caller's opcode, destination QPN
 * and PSN, built into buf (WIRE_MAX_FRAME bytes): its length, or 0 when the builder refused it. */
static inline uint32_t test_frame_request(uint8_t *buf, uint8_t opcode, uint32_t dqpn, uint32_t psn)
{
	struct wire_roce_spec s;
	int n;

	test_frame_spec(&s, 1, 2);
	s.bth.opcode = opcode;
	s.bth.dqpn = dqpn;
	s.bth.psn = psn;
	s.payload_len = 64;
	n = wire_build_roce(&s, buf, WIRE_MAX_FRAME);
	return n > 0 ? (uint32_t)n : 0;
}

#endif

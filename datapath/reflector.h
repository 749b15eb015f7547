/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The reflect role: every frame its queue receives goes back out of the same queue with the
 * Ethernet addresses swapped, nothing else touched (the ICRC stays valid: it does not cover the
 * MACs), as dpdk-testpmd's macswap forwarding does. The far end of a ping-pong latency test.
 */
#ifndef ROCE_ENGINE_REFLECTOR_H
#define ROCE_ENGINE_REFLECTOR_H

#include <stdint.h>

struct reflect_role {
	uint16_t port;            /* config index */
	uint16_t port_id;
	uint16_t queue;
	uint64_t reflected;       /* frames sent back */
	uint64_t dropped;         /* frames the TX queue refused (freed) */
};

/* One poll: a burst in, swapped, out. Returns how many frames it received. */
unsigned reflect_poll(struct reflect_role *r);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Clean payloads: a TX role's mbufs keep their data rooms zeroed from one frame to the next, so
 * a packet's payload (zeros but for the latency probe, which lies in the first QP_SHAPE_COPY
 * bytes the shape copy rewrites) needs no stores, whatever its size: the TX cost stops growing
 * with the payload (4 KB payloads otherwise cost 4 KB of stores per packet).
 *
 * The invariant, per mbuf of such a pool: every byte of the data room from QP_SHAPE_COPY on is
 * zero except the ICRC the mbuf last carried, whose place is kept in a dynamic field of the mbuf
 * (its second cache line, which freeing the mbuf reads anyway: a private area would be one more
 * line a packet, and its 8 bytes would misalign every frame's data against the cache lines).
 * Before a frame is written, that old ICRC is cleared (4 stores) unless the new one goes to the
 * same place. It holds as long as nobody else writes into the frames: the pool is the TX role's
 * own (only it allocates; PMDs only read and free), and the engine turns the mode off on ports
 * whose frames may be received and changed in this process (the `ring:` cable and net_ring: the
 * reflect role swaps MACs, RX injection rewrites ICRCs, the lab switch re-tags). Ports through a
 * copying PMD (net_null, pcap, af_packet, memif, tap) or to a NIC (mlx5's DMA reads) keep it on.
 */
#ifndef ROCE_ENGINE_TX_PAYLOAD_H
#define ROCE_ENGINE_TX_PAYLOAD_H

#include <stdint.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "requester.h"

/* The offset of the mbuf's dynamic field (a uint16_t): where in its buffer the last ICRC went (0:
 * nowhere to clear; rte_pktmbuf_init zeroes it). Registered once by tx_payload_register. */
extern int tx_payload_dirty_off;

/* Registers the field (once, after EAL start-up, before the TX pools); -1 with rte_errno. */
int tx_payload_register(void);

static inline uint16_t *tx_payload_dirty(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, tx_payload_dirty_off, uint16_t *);
}

/* Clears what the mbuf's previous frame left past the shape copy, unless the new frame's ICRC
 * lands exactly there; then remembers where the new ICRC goes (icrc_off from frame start f).
 * Called before anything of the new frame is written. */
static inline void tx_payload_prepare(struct rte_mbuf *m, uint8_t *f, uint16_t icrc_off)
{
	uint16_t *dirty = tx_payload_dirty(m);
	uint16_t at = (uint16_t)(f - (uint8_t *)m->buf_addr) + icrc_off;

	if (*dirty == at)
		return;
	if (*dirty)
		memset((uint8_t *)m->buf_addr + *dirty, 0, 4);
	*dirty = icrc_off + 4 > QP_SHAPE_COPY ? at : 0;
}

/* The same when the ICRC's place is only known after writing: clear the old one first, then
 * (tx_payload_remember) note the new one. */
static inline void tx_payload_forget(struct rte_mbuf *m)
{
	uint16_t *dirty = tx_payload_dirty(m);

	if (*dirty)
		memset((uint8_t *)m->buf_addr + *dirty, 0, 4);
	*dirty = 0;
}

static inline void tx_payload_remember(struct rte_mbuf *m, uint8_t *f, uint16_t icrc_off)
{
	*tx_payload_dirty(m) = icrc_off + 4 > QP_SHAPE_COPY ? (uint16_t)(f - (uint8_t *)m->buf_addr) + icrc_off : 0;
}

#endif

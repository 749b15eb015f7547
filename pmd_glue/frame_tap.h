/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The capture's tap at the PMD boundary (`--capture`, docs/monitoring.md): each lcore copies the
 * frames it hands to the PMD (TX: the QPs' bursts, RC answers and CNPs, PFC frames) or takes from
 * it (RX, before any processing) — all, or one in `every` per port and direction — with DPDK's
 * rte_pcapng into its own copy pools, and passes the copies over a single-producer ring to the
 * main lcore, whose writer (telemetry/capture.c) writes them and frees them back to the pools.
 * A full ring or an empty copy pool drops the copy, counted per port, never the traffic.
 */
#ifndef ROCE_FRAME_TAP_H
#define ROCE_FRAME_TAP_H

#include <stdbool.h>
#include <stdint.h>

#define CAPTURE_MAX_PORTS 64 /* DPDK port ids a capture can copy from */
#define CAPTURE_SMALL_COPY 256u /* bytes captured that a small copy holds */
#define CAPTURE_DRAIN_BURST 64u /* copies the writer takes at a time */

struct rte_mbuf;
struct rte_mempool;
struct rte_ring;

/* One lcore's capture state. */
struct capture_lcore {
	struct rte_mempool *small;    /* copies of frames of which up to 256 bytes are captured */
	struct rte_mempool *large;    /* of longer ones (NULL when snaplen keeps no more) */
	unsigned n_small, n_large;    /* their copies */
	struct rte_ring *ring;        /* to the main lcore: room for them all */
	uint32_t snaplen;
	uint32_t every;               /* one frame in `every` per port and direction */
	uint32_t countdown[CAPTURE_MAX_PORTS][2]; /* per DPDK port, per direction (0 rx, 1 tx) */
	uint64_t copied;              /* read by the main lcore */
	uint64_t dropped[CAPTURE_MAX_PORTS]; /* per DPDK port: full ring or no copy buffer */
	uint64_t port_mask;           /* DPDK ports captured */
};

/* What an lcore's tap copies: bytes of each frame (0: whole frames), one in `every`, from the
 * DPDK ports in `port_mask`; `buffer_snap` is the most bytes a copy holds (whole frames: the
 * largest a port carries). `lcores` share the EAL heap's room for copies. */
struct capture_tap_params {
	uint32_t snaplen, buffer_snap, every;
	uint64_t port_mask;
	unsigned lcores;
};

/* The frames m[0..n) on (port_id, queue), received (tx false) or about to be sent. */
void capture_burst(struct capture_lcore *c, uint16_t port_id, uint16_t queue, struct rte_mbuf *const *m, unsigned n,
		   bool tx, uint64_t tsc);

/* Lcore l's tap, its pools on l's socket; NULL when out of memory (even at the fewest copies). */
struct capture_lcore *capture_tap_create(unsigned l, const struct capture_tap_params *p);
/* Up to n copies waiting in c's ring into m (the main lcore); the caller frees them. */
unsigned capture_tap_take(struct capture_lcore *c, struct rte_mbuf **m, unsigned n);
/* Copies waiting in c's ring now. */
unsigned capture_tap_waiting(const struct capture_lcore *c);
/* Copies of DPDK port `port_id`'s frames c dropped so far (any time: a relaxed read). */
uint64_t capture_tap_dropped(const struct capture_lcore *c, uint16_t port_id);
/* An lcore's capture state, its copies and ring freed (NULL: nothing). */
void capture_free(struct capture_lcore *c);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Captures to pcapng (`--capture FILE.pcapng`, run.capture*): the frames the engine's lcores send
 * and receive — all, or one in `capture_every` per port and direction — copied with DPDK's
 * rte_pcapng (each with its port as the interface, its direction and the TSC time of the burst),
 * passed over a single-producer ring per lcore to the main lcore, which writes them and frees them
 * back to the lcore's pool. A full ring or an empty copy pool drops the copy, counted per port,
 * never the traffic. Frames are copied where they
 * are handed to the PMD (TX: the QPs' bursts, RC answers and CNPs, PFC frames) or taken from it
 * (RX, before any processing). docs/monitoring.md.
 */
#ifndef ROCE_ENGINE_CAPTURE_H
#define ROCE_ENGINE_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

#define CAPTURE_MAX_PORTS 64 /* DPDK port ids a capture can copy from */

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

/* The frames m[0..n) on (port_id, queue), received (tx false) or about to be sent. */
void capture_burst(struct capture_lcore *c, uint16_t port_id, uint16_t queue, struct rte_mbuf *const *m, unsigned n,
		   bool tx, uint64_t tsc);

struct engine;
/* Opens the file first thing (a path that cannot be written stops the run before anything else,
 * as a bad report path does). 0, or -1 with err. */
int capture_open(struct engine *e, char *err, size_t errlen);
/* Once the ports exist (the file's interface blocks name them), gives every lcore its state. */
int capture_start(struct engine *e, char *err, size_t errlen);
/* Main lcore: writes what the rings hold. */
void capture_drain(struct engine *e);
/* After the lcores stopped: the last frames, the file closed, e->capture_dropped summed. */
void capture_finish(struct engine *e);
/* An lcore's capture state, its copies and ring freed (NULL: nothing). */
void capture_free(struct capture_lcore *c);
/* Copies of DPDK port `port_id`'s frames dropped so far, over the lcores (any time: relaxed reads). */
uint64_t capture_dropped_on(const struct engine *e, uint16_t port_id);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The latency probe: the first LATENCY_PROBE_LEN bytes of the payload of every data packet of a
 * flow with latency enabled (and room for it). Network byte order:
 *
 *    0  magic     4  "RoLa" (0x526F4C61): tells a probe from any other payload
 *    4  version   1  1
 *    5  flags     1  LATENCY_PROBE_PINGPONG: the sender waits for it to come back
 *    6  session   2  the sending process's run (random at start): its own probes, when they
 *                    come back, are told from another process's
 *    8  flow      4  the sending QP (its index in the sender's QP table)
 *   12  seq       4  the QP's probe count, from 0
 *   16  tx_ns     8  when it was sent: nanoseconds of the sender's time base (UNIX epoch,
 *                    kept by the TSC; see docs/latency.md)
 *
 * The ICRC covers the probe like any payload; the engine moves it incrementally (seq and tx_ns
 * only change from packet to packet).
 */
#ifndef ROCE_LATENCY_PROBE_H
#define ROCE_LATENCY_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#define LATENCY_PROBE_LEN 24
#define LATENCY_PROBE_MAGIC 0x526F4C61u
#define LATENCY_PROBE_VERSION 1
#define LATENCY_PROBE_PINGPONG 0x01
#define LATENCY_PROBE_SEQ_OFF 12
#define LATENCY_PROBE_TX_OFF 16

struct latency_probe {
	uint8_t flags;
	uint16_t session;
	uint32_t flow;
	uint32_t seq;
	uint64_t tx_ns;
};

static inline uint32_t probe_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void probe_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void probe_put64(uint8_t *p, uint64_t v)
{
	probe_put32(p, (uint32_t)(v >> 32));
	probe_put32(p + 4, (uint32_t)v);
}

/* Writes a whole probe at p (LATENCY_PROBE_LEN bytes). */
static inline void latency_probe_write(uint8_t *p, const struct latency_probe *pr)
{
	probe_put32(p, LATENCY_PROBE_MAGIC);
	p[4] = LATENCY_PROBE_VERSION;
	p[5] = pr->flags;
	p[6] = (uint8_t)(pr->session >> 8);
	p[7] = (uint8_t)pr->session;
	probe_put32(p + 8, pr->flow);
	probe_put32(p + LATENCY_PROBE_SEQ_OFF, pr->seq);
	probe_put64(p + LATENCY_PROBE_TX_OFF, pr->tx_ns);
}

/* Reads a probe from a payload of `len` bytes; false when it holds none. */
static inline bool latency_probe_read(const uint8_t *p, uint32_t len, struct latency_probe *pr)
{
	if (len < LATENCY_PROBE_LEN || probe_get32(p) != LATENCY_PROBE_MAGIC || p[4] != LATENCY_PROBE_VERSION)
		return false;
	pr->flags = p[5];
	pr->session = (uint16_t)(p[6] << 8 | p[7]);
	pr->flow = probe_get32(p + 8);
	pr->seq = probe_get32(p + LATENCY_PROBE_SEQ_OFF);
	pr->tx_ns = (uint64_t)probe_get32(p + LATENCY_PROBE_TX_OFF) << 32 | probe_get32(p + LATENCY_PROBE_TX_OFF + 4);
	return true;
}

#endif

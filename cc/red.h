/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The DCQCN congestion point's ECN marking, RED-style on the instantaneous queue at dequeue:
 * p = 0 below kmin, pmax·(q − kmin)/(kmax − kmin) up to kmax, 1 above. Shared by the simulator
 * (apps/roce_ccsim) and the virtual lab's switch. The draw comes from the caller's generator
 * (red_rand), so a seeded run repeats exactly.
 */
#ifndef ROCE_CC_RED_H
#define ROCE_CC_RED_H

#include <stdbool.h>
#include <stdint.h>

struct red_params {
	uint64_t kmin_bytes, kmax_bytes;  /* kmin <= kmax */
	uint32_t pmax_q16;                /* marking probability at kmax, 1.0 = 65536 */
};

/* xorshift64*: the deterministic generator the simulator and switch draw from (state != 0). */
static inline uint64_t red_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Marking probability at queue length q, 1.0 = 65536 (integer: the same on every machine). */
static inline uint32_t red_prob_q16(const struct red_params *r, uint64_t q)
{
	if (q <= r->kmin_bytes)
		return 0;
	if (q > r->kmax_bytes)
		return 65536;
	if (r->kmax_bytes == r->kmin_bytes)
		return 65536;
	return (uint32_t)((uint64_t)r->pmax_q16 * (q - r->kmin_bytes) / (r->kmax_bytes - r->kmin_bytes));
}

/* Whether a packet leaving a queue of q bytes is marked CE. */
static inline bool red_should_mark(const struct red_params *r, uint64_t q, uint64_t *rng)
{
	uint32_t p = red_prob_q16(r, q);

	if (p == 0)
		return false;
	if (p >= 65536)
		return true;
	return (red_rand(rng) >> 48) < p;
}

#endif

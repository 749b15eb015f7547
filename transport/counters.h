/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Counters and random draws of the data path. Every counter has one writer (the lcore that owns
 * it) and is read by the main lcore while it runs: the writer stores relaxed (a plain add and
 * store on x86), the reader loads relaxed. Random draws are xorshift64*: per-owner state, no
 * division.
 */
#ifndef ROCE_ENGINE_COUNTERS_H
#define ROCE_ENGINE_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#define STAT_ADD(field, v) __atomic_store_n(&(field), (field) + (v), __ATOMIC_RELAXED)

static inline uint64_t stat_read(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }

/* dst[i] += src[i] for structs made only of uint64_t counters */
static inline void stat_sum(uint64_t *dst, const uint64_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] += stat_read(&src[i]);
}

static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static inline uint32_t rng32(uint64_t *s) { return (uint32_t)(rng_next(s) >> 32); }

/* Uniform in [0, n) by multiply-shift (Lemire), no division. */
static inline uint32_t rng_below(uint64_t *s, uint32_t n) { return (uint32_t)(((uint64_t)rng32(s) * n) >> 32); }

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A log-linear latency histogram, HDR-style, in plain C (no DPDK).
 *
 * Scheme. Values are nanoseconds (uint64_t).
 *   - v < 128: bucket v. Exact, 1 ns resolution where it matters most for short RTTs.
 *   - v >= 128: msb = 63 - clz(v); sub = v >> (msb - 6), which lies in [64, 127];
 *     index = (msb - 6) * 64 + sub. That is 64 sub-buckets per power of two, and it continues
 *     the exact region without a gap (128 -> bucket 128, 255 -> 191, 256 -> 192).
 *   - v >= HIST_MAX_NS = 2^34 ns (~17.2 s) goes to the last bucket (msb 33, sub 127) and is also
 *     counted in `overflow`; min, max, sum and sum_sq still take the true value.
 * Resolution. A bucket [lo, lo + w) with w = 2^(msb-6) has lo >= 64 w, so reporting it as
 * lo + (w - 1) / 2 is off by at most w / 2 <= lo / 128: a relative error <= 1/128 (0.78 %) for
 * any value in it. Percentiles are further clamped into [min, max] and the lowest and highest
 * ranks report min and max themselves.
 * Size. HIST_BUCKETS = 27 * 64 + 128 = 1856 counters of 8 bytes, ~14.5 KB per histogram, so one
 * per (lcore, flow) is affordable and merging is a 1856-add loop.
 *
 * Concurrency. One writer (the lcore that measures) calls hist_record; others may read the same
 * histogram at the same time: the writer publishes every counter with a relaxed atomic store, so
 * a reader sees no torn 64-bit word, only a record that is partly in (a bucket counted but not
 * yet `count`, say). To report from a live histogram, hist_merge it into a private one first
 * (hist_merge takes its count from the buckets it read, so the copy is self-consistent), then
 * call hist_percentile / hist_summarize on the copy.
 */
#ifndef ROCE_LATENCY_HISTOGRAM_H
#define ROCE_LATENCY_HISTOGRAM_H

#include <stdint.h>

#define HIST_SUB_BITS 6                               /* 64 sub-buckets per octave */
#define HIST_MAX_MSB 33                               /* the highest octave kept: [2^33, 2^34) */
#define HIST_MAX_NS (UINT64_C(1) << (HIST_MAX_MSB + 1)) /* 2^34 ns ~ 17.2 s: here overflow starts */
#define HIST_BUCKETS ((HIST_MAX_MSB - HIST_SUB_BITS) * 64 + 128) /* 1856 */

/* __extension__: gnu11 has unsigned __int128, but -Wpedantic would name it. */
__extension__ typedef unsigned __int128 hist_u128;

struct hist {
	uint64_t count, overflow, min, max;
	uint64_t sum;                 /* ns; 2^64 ns is 584 years, so no saturation */
	union {
		hist_u128 sum_sq;     /* sum of ns^2, for the standard deviation */
		/* the same two words: x86-64 has no plain 16-byte atomic store (GCC would call
		 * libatomic), so the writer stores the halves (low, then high) one by one */
		uint64_t sum_sq_w[2];
	};
	uint64_t buckets[HIST_BUCKETS];
};

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HIST_SQ_LO 0
#else
#define HIST_SQ_LO 1
#endif

/* A sum of squares' two words as a writer on another thread stores them (low, then high): the
 * high word is read on both sides of the low one, again (a few times at most) if it moved, so a
 * carry half done is not seen. */
hist_u128 hist_load_u128(const uint64_t w[2]);

/* Bucket of a value. Branch-free: values past the range are clamped (a cmov), and `| 127` makes
 * every v < 128 look like msb 6, where the shift is 0 and the index is v itself. */
static inline unsigned hist_index(uint64_t ns)
{
	uint64_t v = ns < HIST_MAX_NS ? ns : HIST_MAX_NS - 1;
	unsigned shift = (unsigned)(63 - __builtin_clzll(v | 127)) - HIST_SUB_BITS;

	return shift * 64 + (unsigned)(v >> shift);
}

/* Hot path, a single writer: no division, no floating point, no loop; branches only for the rare
 * (a new minimum or maximum, an overflow). Each counter is
 * read plainly (only this thread writes it) and published with a relaxed store, which compiles
 * to an ordinary mov: there is no locked read-modify-write. */
static inline void hist_record(struct hist *h, uint64_t ns)
{
	unsigned i = hist_index(ns);
	hist_u128 sq = h->sum_sq + (hist_u128)ns * ns;

	__atomic_store_n(&h->buckets[i], h->buckets[i] + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&h->count, h->count + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&h->sum, h->sum + ns, __ATOMIC_RELAXED);
	__atomic_store_n(&h->sum_sq_w[HIST_SQ_LO], (uint64_t)sq, __ATOMIC_RELAXED);
	__atomic_store_n(&h->sum_sq_w[1 - HIST_SQ_LO], (uint64_t)(sq >> 64), __ATOMIC_RELAXED);
	/* new extremes and overflows are rare: a predictable branch is cheaper than a store each */
	if (__builtin_expect(ns < h->min, 0))
		__atomic_store_n(&h->min, ns, __ATOMIC_RELAXED);
	if (__builtin_expect(ns > h->max, 0))
		__atomic_store_n(&h->max, ns, __ATOMIC_RELAXED);
	if (__builtin_expect(ns >= HIST_MAX_NS, 0))
		__atomic_store_n(&h->overflow, h->overflow + 1, __ATOMIC_RELAXED);
}

/* Empty: every counter 0, min UINT64_MAX (so the first record sets it). */
void hist_init(struct hist *h);

/* A bucket's bounds, both inclusive (the last bucket's hi is HIST_MAX_NS - 1, although it also
 * holds the overflow), and its representative value lo + (hi - lo) / 2: the value itself below
 * 128, within 1/128 of anything in the bucket above. An index past the end means the last
 * bucket. */
uint64_t hist_bucket_lo(unsigned index);
uint64_t hist_bucket_hi(unsigned index);
uint64_t hist_bucket_value(unsigned index);

/* dst += src. Reads src with relaxed loads, so src may be live (being recorded into); dst must
 * be the caller's alone. dst->count grows by the sum of the buckets read, not by src->count, so
 * that a copy of a live histogram stays consistent for percentiles. */
void hist_merge(struct hist *dst, const struct hist *src);

/* Nearest rank of pct (clamped to [0, 100]; NaN counts as 0) among count samples:
 * ceil(pct / 100 * count), at least 1; 0 when count is 0. A product within a relative 1e-13 of
 * an integer is taken as that integer, so that 99.9 % of 200000 is rank 199800 even though the
 * double 99.9 is a hair above 99.9. */
uint64_t hist_rank(uint64_t count, double pct);

/* The value of rank hist_rank(count, pct): its bucket's representative, clamped into [min, max];
 * rank 1 is min and rank count is max, exactly. 0 when empty. */
uint64_t hist_percentile(const struct hist *h, double pct);

struct hist_summary {
	uint64_t count, overflow, min, max, p50, p90, p99, p999, p9999;
	double mean, stddev;          /* ns; stddev of the population (divided by count) */
};

/* Everything at once (one pass over the buckets); all zeros when empty. */
void hist_summarize(const struct hist *h, struct hist_summary *s);

#endif

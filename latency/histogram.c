/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The cold side of the latency histogram: bucket bounds, merge, percentiles, summary. The scheme
 * and the hot path are in histogram.h. Every read of a histogram here is a relaxed atomic load,
 * since its writer may be recording at the same moment.
 */
#include <math.h>
#include <string.h>

#include "histogram.h"

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

uint64_t hist_bucket_lo(unsigned index)
{
	unsigned shift;

	if (index >= HIST_BUCKETS)
		index = HIST_BUCKETS - 1;
	if (index < 128)
		return index;
	/* index = shift * 64 + sub with sub in [64, 127] */
	shift = index / 64 - 1;
	return (uint64_t)(index - shift * 64) << shift;
}

uint64_t hist_bucket_hi(unsigned index)
{
	if (index >= HIST_BUCKETS)
		index = HIST_BUCKETS - 1;
	if (index < 128)
		return index;
	return hist_bucket_lo(index) + (UINT64_C(1) << (index / 64 - 1)) - 1;
}

uint64_t hist_bucket_value(unsigned index)
{
	uint64_t lo = hist_bucket_lo(index);

	return lo + (hist_bucket_hi(index) - lo) / 2;
}

hist_u128 hist_load_u128(const uint64_t w[2])
{
	uint64_t hi, lo;

	for (int tries = 0;; tries++) {
		hi = LOAD(w[1 - HIST_SQ_LO]);
		lo = LOAD(w[HIST_SQ_LO]);
		if (LOAD(w[1 - HIST_SQ_LO]) == hi || tries == 3)
			break;
	}
	return (hist_u128)hi << 64 | lo;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	uint64_t n = 0, min, max;

	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		uint64_t b = LOAD(src->buckets[i]);

		dst->buckets[i] += b;
		n += b;
	}
	dst->count += n;
	dst->overflow += LOAD(src->overflow);
	dst->sum += LOAD(src->sum);
	dst->sum_sq += hist_load_u128(src->sum_sq_w);
	min = LOAD(src->min);
	max = LOAD(src->max);
	if (min < dst->min)
		dst->min = min;
	if (max > dst->max)
		dst->max = max;
}

uint64_t hist_rank(uint64_t count, double pct)
{
	double x;
	uint64_t r;

	if (count == 0)
		return 0;
	if (!(pct > 0)) /* also NaN */
		return 1;
	if (pct >= 100)
		return count;
	x = pct / 100.0 * (double)count;
	/* pct, the division and the product each round by <= 2^-53: well inside 1e-13 */
	r = (uint64_t)ceil(x - x * 1e-13);
	return r < 1 ? 1 : r > count ? count : r;
}

/* Values at ascending ranks (each in [1, count]), in one walk over the buckets. */
static void values_at_ranks(const struct hist *h, uint64_t count, uint64_t min, uint64_t max,
			    const uint64_t *ranks, uint64_t *out, unsigned n)
{
	uint64_t cum = 0;
	unsigned k = 0;

	for (unsigned i = 0; i < HIST_BUCKETS && k < n; i++) {
		cum += LOAD(h->buckets[i]);
		for (; k < n && ranks[k] <= cum; k++) {
			uint64_t v = hist_bucket_value(i);

			if (ranks[k] == 1 || v < min)
				v = min;
			if (ranks[k] == count || v > max)
				v = max;
			out[k] = v;
		}
	}
	/* only when h is live and its buckets lag its count */
	for (; k < n; k++)
		out[k] = max;
}

uint64_t hist_percentile(const struct hist *h, double pct)
{
	uint64_t count = LOAD(h->count), rank, v;

	if (count == 0)
		return 0;
	rank = hist_rank(count, pct);
	values_at_ranks(h, count, LOAD(h->min), LOAD(h->max), &rank, &v, 1);
	return v;
}

/* Population variance without cancellation: with sum = q n + r (0 <= r < n),
 *   n var = sum_sq - sum^2 / n = (sum_sq - q^2 n - 2 q r) - r^2 / n,
 * where the bracket is an exact non-negative integer (Cauchy-Schwarz) and r^2 / n < n. A constant
 * series gives exactly 0; the double rounding comes only after the subtraction. */
static double population_stddev(uint64_t n, uint64_t sum, hist_u128 sum_sq)
{
	uint64_t q = sum / n, r = sum % n;
	hist_u128 qq = (hist_u128)q * q, sub;
	double var;

	if (qq > sum_sq / n) /* inconsistent fields of a live histogram */
		return 0;
	sub = qq * n + (hist_u128)2 * q * r;
	if (sub > sum_sq)
		return 0;
	var = ((double)(sum_sq - sub) - (double)r * ((double)r / (double)n)) / (double)n;
	return var > 0 ? sqrt(var) : 0;
}

void hist_summarize(const struct hist *h, struct hist_summary *s)
{
	static const double pcts[] = {50, 90, 99, 99.9, 99.99};
	uint64_t ranks[5], vals[5];
	uint64_t sum;

	memset(s, 0, sizeof(*s));
	s->count = LOAD(h->count);
	if (s->count == 0)
		return;
	s->overflow = LOAD(h->overflow);
	s->min = LOAD(h->min);
	s->max = LOAD(h->max);
	for (unsigned k = 0; k < 5; k++)
		ranks[k] = hist_rank(s->count, pcts[k]);
	values_at_ranks(h, s->count, s->min, s->max, ranks, vals, 5);
	s->p50 = vals[0];
	s->p90 = vals[1];
	s->p99 = vals[2];
	s->p999 = vals[3];
	s->p9999 = vals[4];
	sum = LOAD(h->sum);
	s->mean = (double)sum / (double)s->count;
	s->stddev = population_stddev(s->count, sum, hist_load_u128(h->sum_sq_w));
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Unit tests of the latency histogram, without EAL: the bucket scheme against a reference written
 * straight from its definition, the 1/128 relative error bound on every bucket, nearest ranks,
 * percentiles of several distributions against the exact ones (qsort), mean and stddev against a
 * double two-pass computation, merge, overflow and the empty histogram. No timing here.
 */
#include <math.h>

#include "histogram.h"
#include "testlib.h"

#define N_SAMPLES 200000

/* The scheme exactly as documented, branchy on purpose. */
static unsigned ref_index(uint64_t v)
{
	unsigned msb, sub;

	if (v >= HIST_MAX_NS)
		return (HIST_MAX_MSB - 6) * 64 + 127;
	if (v < 128)
		return (unsigned)v;
	msb = 63 - (unsigned)__builtin_clzll(v);
	sub = (unsigned)(v >> (msb - 6));
	return (msb - 6) * 64 + sub;
}

/* |rep - v| / v <= 1/128, in integers; exact below 128 */
static int close_enough(uint64_t rep, uint64_t v)
{
	uint64_t d = rep > v ? rep - v : v - rep;

	return v < 128 ? rep == v : d * 128 <= v;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* uniform in (0, 1] */
static double unit_rand(void)
{
	return (double)((test_rand() >> 11) + 1) * 0x1p-53;
}

static double normal_rand(void)
{
	return sqrt(-2 * log(unit_rand())) * cos(2 * M_PI * unit_rand());
}

static struct hist *hist_new(void)
{
	struct hist *h = malloc(sizeof(*h));

	hist_init(h);
	return h;
}

static void test_constants(void)
{
	CHECK_EQ(HIST_BUCKETS, 1856);
	CHECK_EQ(HIST_MAX_NS, UINT64_C(1) << 34);
	CHECK(sizeof(((struct hist *)0)->buckets) == 1856 * 8);
	CHECK_EQ(hist_index(127), 127);
	CHECK_EQ(hist_index(128), 128);
	CHECK_EQ(hist_index(255), 191);
	CHECK_EQ(hist_index(256), 192);
	CHECK_EQ(hist_index(HIST_MAX_NS - 1), HIST_BUCKETS - 1);
	CHECK_EQ(hist_index(HIST_MAX_NS), HIST_BUCKETS - 1);
	CHECK_EQ(hist_index(UINT64_MAX), HIST_BUCKETS - 1);
}

/* Every bucket: contiguous bounds from 0 to HIST_MAX_NS - 1, both ends index to it, the one below
 * lo to the previous bucket, and the representative is within 1/128 of both ends (the error is
 * largest there). */
static void test_bucket_bounds(void)
{
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		uint64_t lo = hist_bucket_lo(i), hi = hist_bucket_hi(i), rep = hist_bucket_value(i);

		CHECK(lo <= hi);
		CHECK_EQ(lo, i == 0 ? 0 : hist_bucket_hi(i - 1) + 1);
		CHECK_EQ(hist_index(lo), i);
		CHECK_EQ(hist_index(hi), i);
		if (i > 0)
			CHECK_EQ(hist_index(lo - 1), i - 1);
		CHECK(lo <= rep && rep <= hi);
		CHECK(close_enough(rep, lo));
		CHECK(close_enough(rep, hi));
		if (i < 128)
			CHECK(lo == i && hi == i && rep == i);
		else
			CHECK_EQ(hi - lo + 1, UINT64_C(1) << (i / 64 - 1));
	}
	CHECK_EQ(hist_bucket_hi(HIST_BUCKETS - 1), HIST_MAX_NS - 1);
	CHECK_EQ(hist_bucket_lo(HIST_BUCKETS - 1), UINT64_C(127) << 27);
}

static void check_value(uint64_t v, unsigned *prev_idx)
{
	unsigned i = hist_index(v);

	CHECK_EQ(i, ref_index(v));
	CHECK(i < HIST_BUCKETS);
	if (prev_idx) {
		CHECK(i >= *prev_idx);
		*prev_idx = i;
	}
	if (v < HIST_MAX_NS) {
		CHECK(hist_bucket_lo(i) <= v && v <= hist_bucket_hi(i));
		CHECK(close_enough(hist_bucket_value(i), v));
	}
}

/* All v < 4096 in order, then random values of every bit length (sorted, so monotonicity is
 * checked across them too), including past HIST_MAX_NS. */
static void test_index_value_consistency(void)
{
	enum { N = 400000 };
	uint64_t *v = malloc(N * sizeof(*v));
	unsigned prev = 0;

	for (uint64_t x = 0; x < 4096; x++)
		check_value(x, &prev);
	for (unsigned k = 0; k < N; k++) {
		unsigned bits = (unsigned)test_rand_below(65);

		v[k] = bits == 0 ? 0 : test_rand() >> (64 - bits);
	}
	qsort(v, N, sizeof(*v), cmp_u64);
	prev = 0;
	for (unsigned k = 0; k < N; k++)
		check_value(v[k], &prev);
	/* around every power of two */
	for (unsigned b = 1; b < 64; b++) {
		uint64_t p = UINT64_C(1) << b;

		check_value(p - 1, NULL);
		check_value(p, NULL);
		check_value(p + 1, NULL);
		CHECK(hist_index(p - 1) <= hist_index(p));
	}
	free(v);
}

/* Nearest rank, against integer arithmetic, including the decimal percentages a double cannot
 * hold exactly (99.9 is a hair above 99.9). */
static void test_rank(void)
{
	CHECK_EQ(hist_rank(0, 50), 0);
	CHECK_EQ(hist_rank(1, 0), 1);
	CHECK_EQ(hist_rank(1, 100), 1);
	CHECK_EQ(hist_rank(3, 50), 2);
	CHECK_EQ(hist_rank(2, 50), 1);
	CHECK_EQ(hist_rank(1000, 99.9), 999);
	CHECK_EQ(hist_rank(200000, 99.9), 199800);
	CHECK_EQ(hist_rank(200000, 99.99), 199980);
	CHECK_EQ(hist_rank(100, 50.5), 51);
	CHECK_EQ(hist_rank(10, -5), 1);
	CHECK_EQ(hist_rank(10, 150), 10);
	CHECK_EQ(hist_rank(10, NAN), 1);
	/* pct = k / 10 for every n up to 2000, and k / 100 for n = 200000 and 1e9 */
	for (uint64_t n = 1; n <= 2000; n++)
		for (uint64_t k = 0; k <= 1000; k++) {
			uint64_t want = (k * n + 999) / 1000;

			CHECK_EQ(hist_rank(n, (double)k / 10), want ? want : 1);
		}
	for (uint64_t k = 0; k <= 10000; k++) {
		uint64_t want = (k * 200000 + 9999) / 10000;

		CHECK_EQ(hist_rank(200000, (double)k / 100), want ? want : 1);
		want = (k * 1000000000 + 9999) / 10000;
		CHECK_EQ(hist_rank(1000000000, (double)k / 100), want ? want : 1);
	}
}

/* Records the samples, then compares with the sorted samples: p0..p100 within 1/128 (exact for
 * small values, min and max exact), the summary, mean exactly as sum / count, stddev against a
 * two-pass double computation. */
static void check_distribution(const char *name, uint64_t *x, size_t n)
{
	static const uint64_t ppm[] = {0, 500000, 900000, 990000, 999000, 999900, 1000000};
	struct hist *h = hist_new();
	struct hist_summary s;
	uint64_t sum = 0, got[7];
	double mean, var = 0;
	int failed_before = testlib_case_failed;

	for (size_t i = 0; i < n; i++) {
		hist_record(h, x[i]);
		sum += x[i];
	}
	qsort(x, n, sizeof(*x), cmp_u64);
	CHECK_EQ(h->count, n);
	CHECK_EQ(h->sum, sum);
	CHECK_EQ(h->min, x[0]);
	CHECK_EQ(h->max, x[n - 1]);
	CHECK_EQ(h->overflow, 0);
	for (unsigned k = 0; k < 7; k++) {
		uint64_t rank = (ppm[k] * n + 999999) / 1000000;
		uint64_t want = x[(rank ? rank : 1) - 1];

		got[k] = hist_percentile(h, (double)ppm[k] / 10000);
		CHECK(close_enough(got[k], want));
		if (!close_enough(got[k], want))
			printf("  %s: p%g = %" PRIu64 ", exact %" PRIu64 "\n", name,
			       (double)ppm[k] / 10000, got[k], want);
	}
	CHECK_EQ(got[0], x[0]);
	CHECK_EQ(got[6], x[n - 1]);

	hist_summarize(h, &s);
	CHECK_EQ(s.count, n);
	CHECK_EQ(s.overflow, 0);
	CHECK_EQ(s.min, x[0]);
	CHECK_EQ(s.max, x[n - 1]);
	CHECK_EQ(s.p50, got[1]);
	CHECK_EQ(s.p90, got[2]);
	CHECK_EQ(s.p99, got[3]);
	CHECK_EQ(s.p999, got[4]);
	CHECK_EQ(s.p9999, got[5]);
	CHECK(s.mean == (double)sum / (double)n);
	mean = (double)sum / (double)n;
	for (size_t i = 0; i < n; i++)
		var += ((double)x[i] - mean) * ((double)x[i] - mean);
	var /= (double)n;
	CHECK(fabs(s.stddev - sqrt(var)) <= 1e-6 * sqrt(var) + 1e-9);
	if (testlib_case_failed != failed_before)
		printf("  (%s: n %zu, mean %.3f, stddev %.3f vs %.3f)\n", name, n, s.mean, s.stddev,
		       sqrt(var));
	free(h);
}

static void test_percentiles_uniform_small(void)
{
	uint64_t *x = malloc(N_SAMPLES * sizeof(*x));

	for (size_t i = 0; i < N_SAMPLES; i++)
		x[i] = test_rand_below(1001);
	check_distribution("uniform 0..1000 ns", x, N_SAMPLES);
	free(x);
}

static void test_percentiles_uniform_wide(void)
{
	uint64_t *x = malloc(N_SAMPLES * sizeof(*x));

	for (size_t i = 0; i < N_SAMPLES; i++)
		x[i] = 1000 + test_rand_below(10000000 - 1000 + 1);
	check_distribution("uniform 1 us..10 ms", x, N_SAMPLES);
	free(x);
}

static void test_percentiles_exponential(void)
{
	uint64_t *x = malloc(N_SAMPLES * sizeof(*x));

	for (size_t i = 0; i < N_SAMPLES; i++)
		x[i] = (uint64_t)(-5000.0 * log(unit_rand()));
	check_distribution("exponential, mean 5 us", x, N_SAMPLES);
	free(x);
}

static void test_percentiles_lognormal(void)
{
	uint64_t *x = malloc(N_SAMPLES * sizeof(*x));

	/* median 20 us, sigma 1.5: p99.99 near 5 ms */
	for (size_t i = 0; i < N_SAMPLES; i++)
		x[i] = (uint64_t)exp(log(20000.0) + 1.5 * normal_rand());
	check_distribution("log-normal", x, N_SAMPLES);
	free(x);
}

static void test_percentiles_pareto(void)
{
	uint64_t *x = malloc(N_SAMPLES * sizeof(*x));

	/* x_m 10 us, alpha 1.1, truncated at 10 s: the top samples are in seconds */
	for (size_t i = 0; i < N_SAMPLES; i++) {
		double v;

		do
			v = 10000.0 * pow(unit_rand(), -1 / 1.1);
		while (v > 1e10);
		x[i] = (uint64_t)v;
	}
	check_distribution("pareto 1.1", x, N_SAMPLES);
	CHECK(x[N_SAMPLES - 1] > 100000000); /* sorted by now: the tail did reach 100 ms+ */
	free(x);
}

static void test_percentiles_bimodal(void)
{
	uint64_t *x = malloc(N_SAMPLES * sizeof(*x));

	/* 70 % at 2 us +- 50 ns, 30 % at 800 us +- 2 us */
	for (size_t i = 0; i < N_SAMPLES; i++)
		x[i] = test_rand_below(10) < 7 ? 1950 + test_rand_below(101)
					       : 798000 + test_rand_below(4001);
	check_distribution("bimodal", x, N_SAMPLES);
	free(x);
}

static void test_percentiles_constant(void)
{
	uint64_t *x = malloc(N_SAMPLES * sizeof(*x));
	struct hist *h = hist_new();
	struct hist_summary s;

	for (size_t i = 0; i < N_SAMPLES; i++)
		x[i] = 12345;
	check_distribution("constant", x, N_SAMPLES);
	/* nearly constant far from 0: stddev 2 ns at 10 s, where sum_sq / n - mean^2 in doubles
	 * would cancel to noise */
	for (size_t i = 0; i < N_SAMPLES; i++)
		x[i] = 10000000000 + test_rand_below(7);
	check_distribution("10 s +- 3 ns", x, N_SAMPLES);
	/* clamping makes every percentile exact, and the variance is exactly 0 */
	for (size_t i = 0; i < N_SAMPLES; i++)
		hist_record(h, 12345);
	hist_summarize(h, &s);
	CHECK(s.p50 == 12345 && s.p90 == 12345 && s.p99 == 12345 && s.p999 == 12345 &&
	      s.p9999 == 12345);
	CHECK(s.mean == 12345.0);
	CHECK(s.stddev == 0.0);
	free(h);
	free(x);
}

static void test_percentiles_tiny(void)
{
	uint64_t one[] = {777777}, two[] = {5000000000, 7}, three[] = {1000003, 99, 250000};
	struct hist *h = hist_new();

	check_distribution("1 sample", one, 1);
	check_distribution("2 samples", two, 2);
	check_distribution("3 samples", three, 3);
	/* one sample: every percentile is it, exactly */
	hist_record(h, 777777);
	CHECK_EQ(hist_percentile(h, 0), 777777);
	CHECK_EQ(hist_percentile(h, 37.5), 777777);
	CHECK_EQ(hist_percentile(h, 100), 777777);
	/* two: the lower up to 50 %, the upper above; out-of-range pct clamps */
	hist_record(h, 1000);
	CHECK_EQ(hist_percentile(h, 50), 1000);
	CHECK_EQ(hist_percentile(h, 50.001), 777777);
	CHECK_EQ(hist_percentile(h, -1), 1000);
	CHECK_EQ(hist_percentile(h, 1000), 777777);
	free(h);
}

/* Two halves (split at random) merged equal the whole, field by field and bucket by bucket; an
 * empty source changes nothing. */
static void test_merge(void)
{
	struct hist *a = hist_new(), *b = hist_new(), *all = hist_new(), *m = hist_new();

	for (unsigned i = 0; i < 100000; i++) {
		uint64_t v = test_rand() >> (30 + test_rand_below(34));

		hist_record(test_rand() & 1 ? a : b, v);
		hist_record(all, v);
	}
	hist_record(a, 3 * HIST_MAX_NS); /* an overflow on one side */
	hist_record(all, 3 * HIST_MAX_NS);
	hist_merge(m, a);
	hist_merge(m, b);
	CHECK_EQ(m->count, all->count);
	CHECK_EQ(m->count, a->count + b->count);
	CHECK_EQ(m->overflow, 1);
	CHECK_EQ(m->min, all->min);
	CHECK_EQ(m->max, all->max);
	CHECK_EQ(m->sum, all->sum);
	CHECK(m->sum_sq == all->sum_sq);
	CHECK(memcmp(m->buckets, all->buckets, sizeof(m->buckets)) == 0);

	hist_init(b);
	hist_merge(m, b);
	CHECK(memcmp(m, all, sizeof(*m)) == 0);
	/* merging into an empty one copies */
	hist_init(b);
	hist_merge(b, all);
	CHECK(memcmp(b, all, sizeof(*b)) == 0);
	free(a);
	free(b);
	free(all);
	free(m);
}

/* At and above 2^34 ns: counted in overflow and in the last bucket; min, max, sum stay true. */
static void test_overflow(void)
{
	struct hist *h = hist_new();
	struct hist_summary s;
	const uint64_t big = UINT64_C(1) << 50;

	hist_record(h, HIST_MAX_NS - 1); /* the last bucket, not an overflow */
	hist_record(h, HIST_MAX_NS);
	hist_record(h, 50000000000);
	hist_record(h, big);
	CHECK_EQ(h->count, 4);
	CHECK_EQ(h->overflow, 3);
	CHECK_EQ(h->buckets[HIST_BUCKETS - 1], 4);
	CHECK_EQ(h->min, HIST_MAX_NS - 1);
	CHECK_EQ(h->max, big);
	CHECK_EQ(h->sum, HIST_MAX_NS - 1 + HIST_MAX_NS + 50000000000 + big);
	CHECK_EQ(hist_percentile(h, 100), big);
	CHECK_EQ(hist_percentile(h, 0), HIST_MAX_NS - 1);
	hist_summarize(h, &s);
	CHECK_EQ(s.overflow, 3);
	CHECK_EQ(s.max, big);
	CHECK_EQ(s.count, 4);
	for (unsigned i = 0; i < HIST_BUCKETS - 1; i++)
		CHECK_EQ(h->buckets[i], 0);
	free(h);
}

static void test_empty(void)
{
	struct hist *h = hist_new(), *m = hist_new();
	struct hist_summary s;

	memset(&s, 0xA5, sizeof(s));
	CHECK_EQ(h->count, 0);
	CHECK_EQ(h->min, UINT64_MAX);
	CHECK_EQ(h->max, 0);
	CHECK_EQ(hist_percentile(h, 0), 0);
	CHECK_EQ(hist_percentile(h, 50), 0);
	CHECK_EQ(hist_percentile(h, 100), 0);
	hist_summarize(h, &s);
	CHECK(s.count == 0 && s.overflow == 0 && s.min == 0 && s.max == 0);
	CHECK(s.p50 == 0 && s.p90 == 0 && s.p99 == 0 && s.p999 == 0 && s.p9999 == 0);
	CHECK(s.mean == 0.0 && s.stddev == 0.0);
	hist_merge(m, h);
	CHECK(memcmp(m, h, sizeof(*m)) == 0);
	free(h);
	free(m);
}

int main(void)
{
	RUN(test_constants);
	RUN(test_bucket_bounds);
	RUN(test_index_value_consistency);
	RUN(test_rank);
	RUN(test_percentiles_uniform_small);
	RUN(test_percentiles_uniform_wide);
	RUN(test_percentiles_exponential);
	RUN(test_percentiles_lognormal);
	RUN(test_percentiles_pareto);
	RUN(test_percentiles_bimodal);
	RUN(test_percentiles_constant);
	RUN(test_percentiles_tiny);
	RUN(test_merge);
	RUN(test_overflow);
	RUN(test_empty);
	return testlib_finish("test_histogram");
}

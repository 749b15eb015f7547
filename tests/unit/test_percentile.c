/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Unit tests of latency/percentile.c: nearest-rank percentiles of exact samples, against values
 * worked out by hand from the definition (rank ceil(q * n), 1-based), at the quantiles its users
 * ask for (0, 0.5, 0.99, 0.999, 1) and at the edges (one value, even counts, ranks that fall on a
 * whole number).
 */
#include <math.h>

#include "percentile.h"
#include "testlib.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static void test_sort(void)
{
	double x[] = { 5, -1, 3.5, 3.5, 0, 10 };
	const double want[] = { -1, 0, 3.5, 3.5, 5, 10 };

	percentile_sort(x, N_OF(x));
	for (size_t i = 0; i < N_OF(x); i++)
		CHECK(x[i] == want[i]);
	percentile_sort(x, 0); /* nothing to do, nothing read */
}

static void test_empty_is_zero(void)
{
	CHECK(percentile_of_sorted(NULL, 0, 0.5) == 0);
	CHECK(percentile_of_sorted(NULL, 0, 1) == 0);
}

static void test_one_value(void)
{
	const double x[] = { 42 };

	CHECK(percentile_of_sorted(x, 1, 0) == 42);
	CHECK(percentile_of_sorted(x, 1, 0.5) == 42);
	CHECK(percentile_of_sorted(x, 1, 0.999) == 42);
	CHECK(percentile_of_sorted(x, 1, 1) == 42);
}

/* 1..10: p50 is rank ceil(5) = 5, the lower middle (no averaging of the two middle values);
 * p99 rank ceil(9.9) = 10; p0 rank 0, taken as 1; p25 rank ceil(2.5) = 3. */
static void test_ten_values(void)
{
	const double x[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };

	CHECK(percentile_of_sorted(x, 10, 0) == 1);
	CHECK(percentile_of_sorted(x, 10, 0.25) == 3);
	CHECK(percentile_of_sorted(x, 10, 0.5) == 5);
	CHECK(percentile_of_sorted(x, 10, 0.9) == 9);
	CHECK(percentile_of_sorted(x, 10, 0.99) == 10);
	CHECK(percentile_of_sorted(x, 10, 1) == 10);
}

/* An odd count: 7 values, p50 rank ceil(3.5) = 4, the middle one. */
static void test_odd_count(void)
{
	const double x[] = { 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5 };

	CHECK(percentile_of_sorted(x, 7, 0.5) == 3.5);
	CHECK(percentile_of_sorted(x, 7, 0.99) == 6.5);
}

/* 1000 values i + 1: p99 rank ceil(990) = 990 exactly (not 991), p99.9 rank ceil(999) = 999,
 * p50 rank 500; with 1001 values p99 rank ceil(990.99) = 991 and p99.9 ceil(999.999) = 1000. */
static void test_whole_ranks(void)
{
	static double x[1001];

	for (size_t i = 0; i < N_OF(x); i++)
		x[i] = (double)(i + 1);
	CHECK(percentile_of_sorted(x, 1000, 0.5) == 500);
	CHECK(percentile_of_sorted(x, 1000, 0.99) == 990);
	CHECK(percentile_of_sorted(x, 1000, 0.999) == 999);
	CHECK(percentile_of_sorted(x, 1000, 1) == 1000);
	CHECK(percentile_of_sorted(x, 1001, 0.99) == 991);
	CHECK(percentile_of_sorted(x, 1001, 0.999) == 1000);
}

/* roce-suite asks in percent (99 / 100.0): the same ranks as the fraction written out. */
static void test_percent_form(void)
{
	const double x[] = { 10, 20, 30, 40 };

	CHECK(percentile_of_sorted(x, 4, 99 / 100.0) == percentile_of_sorted(x, 4, 0.99));
	CHECK(percentile_of_sorted(x, 4, 50 / 100.0) == 20); /* rank 2 */
	CHECK(percentile_of_sorted(x, 4, 100 / 100.0) == 40);
	CHECK(percentile_of_sorted(x, 4, 0 / 100.0) == 10);
}

/* Unsorted samples with repeats, sorted first: 3 3 7 7 7 9 12 (n = 7). */
static void test_sorted_repeats(void)
{
	double x[] = { 7, 12, 3, 7, 9, 3, 7 };

	percentile_sort(x, N_OF(x));
	CHECK(percentile_of_sorted(x, 7, 0.1) == 3);  /* rank ceil(0.7) = 1 */
	CHECK(percentile_of_sorted(x, 7, 0.25) == 3); /* rank ceil(1.75) = 2 */
	CHECK(percentile_of_sorted(x, 7, 0.4) == 7);  /* rank ceil(2.8) = 3 */
	CHECK(percentile_of_sorted(x, 7, 0.5) == 7);  /* rank 4 */
	CHECK(percentile_of_sorted(x, 7, 0.8) == 9);  /* rank ceil(5.6) = 6 */
	CHECK(percentile_of_sorted(x, 7, 0.99) == 12);
}

int main(void)
{
	RUN(test_sort);
	RUN(test_empty_is_zero);
	RUN(test_one_value);
	RUN(test_ten_values);
	RUN(test_odd_count);
	RUN(test_whole_ranks);
	RUN(test_percent_form);
	RUN(test_sorted_repeats);
	return testlib_finish("test_percentile");
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Unit tests of TIMELY (cc/timely.c): the four branches of the update with values worked out by
 * hand from timely.h (defaults α 0.875, β 0.8, T_low 50 µs, T_high 500 µs, minRTT 20 µs,
 * δ 10 Mb/s, HAI N = 5 after 5), the hyper-increase run, the clamps and the first sample.
 */
#include <math.h>

#include "testlib.h"
#include "timely.h"

#define US 1000ull
#define LINE 10000000ull /* 10 Gb/s in kb/s */

static struct timely_params P;
static struct timely_qp Q;

/* Defaults, 10 Gb/s line, starting at 1 Gb/s, and a first sample of `rtt_us` */
static void start(uint64_t start_kbps, uint64_t rtt_us)
{
	timely_init(&Q, &P, LINE, start_kbps);
	CHECK(!timely_on_rtt(&Q, rtt_us * US));
}

static void test_defaults(void)
{
	timely_params_default(&P);
	CHECK(P.alpha == 0.875);
	CHECK(P.beta == 0.8);
	CHECK_EQ(P.t_low_us, 50);
	CHECK_EQ(P.t_high_us, 500);
	CHECK_EQ(P.min_rtt_us, 20);
	CHECK_EQ(P.delta_mbps, 10);
	CHECK_EQ(P.hai_after, 5);
	CHECK_EQ(P.hai_n, 5);
	CHECK_EQ(P.min_rate_mbps, 10);
	CHECK_EQ(P.max_rate_mbps, 0);
	CHECK(timely_params_check(&P, NULL) == NULL);
}

static void expect_bad(const char *name, const char *allowed)
{
	const char *why = NULL, *bad = timely_params_check(&P, &why);

	CHECK(bad && strcmp(bad, name) == 0);
	CHECK(why && strcmp(why, allowed) == 0);
}

static void test_params_check(void)
{
#define BAD(field, value, name, allowed) \
	(timely_params_default(&P), P.field = (value), expect_bad(name, allowed))
	BAD(alpha, -0.1, "alpha", "[0, 1]");
	BAD(alpha, 1.5, "alpha", "[0, 1]");
	BAD(alpha, NAN, "alpha", "[0, 1]");
	BAD(beta, 2, "beta", "[0, 1]");
	BAD(t_high_us, 0, "t_high_us", ">= 1");
	BAD(t_low_us, 501, "t_low_us", "<= t_high_us");
	BAD(min_rtt_us, 0, "min_rtt_us", ">= 1");
	BAD(hai_after, 0, "hai_after", ">= 1");
	BAD(hai_n, 0, "hai_n", ">= 1");
	timely_params_default(&P);
	P.max_rate_mbps = 5;
	expect_bad("min_rate_mbps", "<= max_rate_mbps (when max_rate_mbps is set)");
#undef BAD
}

/* The first sample only sets prev_rtt, whatever its value. */
static void test_first_sample(void)
{
	timely_params_default(&P);
	timely_init(&Q, &P, LINE, 1000000);
	CHECK_EQ(Q.rate_kbps, 1000000);
	CHECK(!timely_on_rtt(&Q, 2000 * US)); /* far above T_high: no decrease yet */
	CHECK_EQ(Q.rate_kbps, 1000000);
	CHECK_EQ(Q.prev_rtt_ns, 2000 * US);
	CHECK(Q.rtt_diff_ns == 0);
	CHECK_EQ(Q.c.samples, 1);
	CHECK_EQ(Q.c.decreases + Q.c.increases, 0);
	/* the start rate is clamped too: 1 Mb/s -> min 10 Mb/s = 10000 kb/s, 20 Gb/s -> line */
	timely_init(&Q, &P, LINE, 1000);
	CHECK_EQ(Q.rate_kbps, 10000);
	timely_init(&Q, &P, LINE, 2 * LINE);
	CHECK_EQ(Q.rate_kbps, LINE);
}

/* rtt < T_low: rate += δ (10 Mb/s = 10000 kb/s), whatever the gradient. */
static void test_below_t_low(void)
{
	timely_params_default(&P);
	start(1000000, 20);
	CHECK(timely_on_rtt(&Q, 40 * US)); /* gradient > 0 (RTT rising), but 40 < 50 */
	CHECK_EQ(Q.rate_kbps, 1010000);
	CHECK_EQ(Q.c.below_t_low, 1);
	CHECK_EQ(Q.c.increases, 1);
	/* rtt_diff = 0.875·20000 = 17500 ns, gradient = 17500/20000 = 0.875 */
	CHECK(fabs(Q.rtt_diff_ns - 17500) < 1e-9);
	CHECK(fabs(Q.gradient - 0.875) < 1e-12);
}

/* rtt > T_high: rate ·= 1 − β·(1 − T_high/rtt); 1000 µs: 1 − 0.8·(1 − 0.5) = 0.6,
 * 1000000 -> 600000. */
static void test_above_t_high(void)
{
	timely_params_default(&P);
	start(1000000, 1000);
	CHECK(timely_on_rtt(&Q, 1000 * US)); /* gradient 0, but 1000 > 500 */
	CHECK_EQ(Q.rate_kbps, 600000);
	CHECK_EQ(Q.c.above_t_high, 1);
	CHECK_EQ(Q.c.decreases, 1);
	/* 800 µs: 1 − 0.8·(1 − 500/800) = 1 − 0.8·0.375 = 0.7: 600000 -> 420000 */
	CHECK(timely_on_rtt(&Q, 800 * US));
	CHECK_EQ(Q.rate_kbps, 420000);
}

/* Between the thresholds, gradient > 0: rate ·= 1 − β·gradient. 100 -> 110 µs:
 * rtt_diff = 0.875·10000 = 8750, gradient = 8750/20000 = 0.4375, 1 − 0.8·0.4375 = 0.65:
 * 1000001 -> 650000.65 -> 650001. Next 120 µs: rtt_diff = 0.125·8750 + 0.875·10000 =
 * 1093.75 + 8750 = 9843.75, gradient 0.4921875, 1 − 0.39375 = 0.60625:
 * 650001 -> 394063.106 -> 394063. */
static void test_gradient_positive(void)
{
	timely_params_default(&P);
	start(1000001, 100);
	CHECK(timely_on_rtt(&Q, 110 * US));
	CHECK(fabs(Q.gradient - 0.4375) < 1e-12);
	CHECK_EQ(Q.rate_kbps, 650001);
	CHECK(timely_on_rtt(&Q, 120 * US));
	CHECK(fabs(Q.rtt_diff_ns - 9843.75) < 1e-9);
	CHECK_EQ(Q.rate_kbps, 394063);
	CHECK_EQ(Q.c.decreases, 2);
	/* a gradient above 1/β would make the factor negative: it stops at 0, then the minimum
	 * rate: 100 -> 300 µs: gradient 0.875·200000/20000 = 8.75 */
	start(1000000, 100);
	CHECK(timely_on_rtt(&Q, 300 * US));
	CHECK_EQ(Q.rate_kbps, 10000);
}

/* Between the thresholds, gradient <= 0: rate += N·δ, N = 1 for the first hai_after (5) such
 * samples in a row, then hai_n (5): the sixth adds 50000 kb/s. */
static void test_gradient_negative_and_hai(void)
{
	uint64_t expect = 1000000;

	timely_params_default(&P);
	start(1000000, 100);
	for (int i = 1; i <= 5; i++) {
		CHECK(timely_on_rtt(&Q, 100 * US)); /* the same RTT: gradient 0 */
		expect += 10000;
		CHECK_EQ(Q.rate_kbps, expect);
		CHECK_EQ(Q.neg_run, i);
	}
	CHECK_EQ(Q.c.hyper, 0);
	CHECK(timely_on_rtt(&Q, 100 * US));
	expect += 50000;
	CHECK_EQ(Q.rate_kbps, expect); /* 1000000 + 5·10000 + 50000 = 1100000 */
	CHECK_EQ(Q.rate_kbps, 1100000);
	CHECK_EQ(Q.c.hyper, 1);
	/* falling RTT: 100 -> 90 µs, rtt_diff −8750: gradient < 0, still hyper */
	CHECK(timely_on_rtt(&Q, 90 * US));
	CHECK(Q.gradient < 0);
	CHECK_EQ(Q.rate_kbps, 1150000);
	/* a sample below T_low neither extends nor ends the run */
	CHECK(timely_on_rtt(&Q, 40 * US));
	CHECK_EQ(Q.rate_kbps, 1160000);
	CHECK_EQ(Q.neg_run, 7);
	/* a decrease ends it: 40 -> 1000 µs (above T_high), 1160000·0.6 = 696000. rtt_diff was
	 * 0.125·(−8750) + 0.875·(−50000) = −44843.75 at 40 µs, 0.125·(−44843.75) + 0.875·960000 =
	 * 834394.53 at 1000 µs; 1000 -> 400 µs: 0.125·834394.53 + 0.875·(−600000) = −420700.68,
	 * gradient < 0 between the thresholds, the run starts over: N = 1 */
	CHECK(timely_on_rtt(&Q, 1000 * US));
	CHECK_EQ(Q.rate_kbps, 696000);
	CHECK_EQ(Q.neg_run, 0);
	CHECK(timely_on_rtt(&Q, 400 * US));
	CHECK_EQ(Q.rate_kbps, 706000);
	CHECK_EQ(Q.neg_run, 1);
}

/* Clamps: [min_rate, max_rate or line]. */
static void test_clamps(void)
{
	timely_params_default(&P);
	/* min 10 Mb/s: 12000 ·0.6 = 7200 -> 10000; returns true (12000 -> 10000) */
	start(12000, 1000);
	CHECK(timely_on_rtt(&Q, 1000 * US));
	CHECK_EQ(Q.rate_kbps, 10000);
	CHECK(!timely_on_rtt(&Q, 1000 * US)); /* at the floor: no change */
	CHECK_EQ(Q.rate_kbps, 10000);
	/* line: 9995000 + 10000 -> 10000000 */
	start(9995000, 20);
	CHECK(timely_on_rtt(&Q, 20 * US));
	CHECK_EQ(Q.rate_kbps, LINE);
	CHECK(!timely_on_rtt(&Q, 20 * US));
	/* max_rate_mbps 1000 below the line: 995000 + 10000 -> 1000000 */
	P.max_rate_mbps = 1000;
	start(995000, 20);
	CHECK(timely_on_rtt(&Q, 20 * US));
	CHECK_EQ(Q.rate_kbps, 1000000);
	/* max_rate_mbps above the line: the line */
	P.max_rate_mbps = 20000;
	start(9995000, 20);
	CHECK(timely_on_rtt(&Q, 20 * US));
	CHECK_EQ(Q.rate_kbps, LINE);
}

/* Other parameters: hai_after 2, hai_n 3, δ 1 Mb/s. */
static void test_hai_parameters(void)
{
	timely_params_default(&P);
	P.hai_after = 2;
	P.hai_n = 3;
	P.delta_mbps = 1;
	start(1000000, 100);
	timely_on_rtt(&Q, 100 * US);
	timely_on_rtt(&Q, 100 * US);
	CHECK_EQ(Q.rate_kbps, 1002000); /* 2·1000 */
	timely_on_rtt(&Q, 100 * US);
	CHECK_EQ(Q.rate_kbps, 1005000); /* + 3·1000 */
	/* a positive gradient ends the run: 100 -> 101 µs: rtt_diff 875, gradient 0.04375,
	 * 1 − 0.035 = 0.965: 1005000·0.965 = 969825 */
	timely_on_rtt(&Q, 101 * US);
	CHECK_EQ(Q.rate_kbps, 969825);
	CHECK_EQ(Q.neg_run, 0);
}

int main(void)
{
	RUN(test_defaults);
	RUN(test_params_check);
	RUN(test_first_sample);
	RUN(test_below_t_low);
	RUN(test_above_t_high);
	RUN(test_gradient_positive);
	RUN(test_gradient_negative_and_hai);
	RUN(test_clamps);
	RUN(test_hai_parameters);
	return testlib_finish("test_timely");
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * kpi/: each formula of the AI-fabric methodology against a case computed by hand (the draft's own
 * busBW example among them), and the exact balls-into-bins distribution against binomial sums
 * written out and a Monte Carlo of the hashing it stands for.
 */
#include <math.h>
#include <stdint.h>

#include "kpi.h"
#include "testlib.h"

#define NEAR(a, b, tol) (fabs((a) - (b)) <= (tol))

/* The draft's worked example: n = 8, 1 GB AllReduce in 10 ms -> 175 GB/s = 1,400 Gb/s. */
static void busbw_matches_the_drafts_example(void)
{
	CHECK(NEAR(kpi_algo_factor(KPI_ALLREDUCE, 8), 1.75, 1e-12));
	CHECK(NEAR(kpi_busbw_gbps(KPI_ALLREDUCE, 8, 1e9, 0.010), 1400, 1e-9));
	CHECK(NEAR(kpi_busbw_gbps(KPI_ALLREDUCE, 8, 1e9, 0.010) / 8, 175, 1e-9)); /* GB/s */
	/* (n-1)/n for the others: 4 ranks, 1 GB in 1 s -> 0.75 GB/s = 6 Gb/s */
	CHECK(NEAR(kpi_busbw_gbps(KPI_ALLGATHER, 4, 1e9, 1), 6, 1e-12));
	CHECK(NEAR(kpi_busbw_gbps(KPI_ALLTOALL, 4, 1e9, 1), 6, 1e-12));
	CHECK(NEAR(kpi_busbw_gbps(KPI_REDUCESCATTER, 4, 1e9, 1), 6, 1e-12));
	CHECK(kpi_algo_factor(KPI_ALLREDUCE, 1) == 0);   /* one rank: nothing crosses a link */
	CHECK(kpi_busbw_gbps(KPI_ALLREDUCE, 8, 1e9, 0) == 0);
	CHECK(NEAR(kpi_algbw_gbps(1e9, 0.010), 800, 1e-9));
	/* phases an iteration: ring AllReduce 2(n-1), ring AllGather n-1, direct AlltoAll 1 */
	CHECK(kpi_collective_phases(KPI_ALLREDUCE, 8) == 14 && kpi_collective_phases(KPI_ALLGATHER, 8) == 7);
	CHECK(kpi_collective_phases(KPI_REDUCESCATTER, 4) == 3 && kpi_collective_phases(KPI_ALLTOALL, 16) == 1);
	CHECK(kpi_collective_phases(KPI_ALLREDUCE, 1) == 0);
}

/* 10 iterations of 10 ms compute and a 1 GB AllReduce over 8 at 400 Gb/s: the collective's link
 * bytes 1.75 GB take 35 ms, the roofline is 10 x 45 ms = 0.45 s; 0.495 s measured is 1.10. */
static void roofline_jct_and_its_ratio(void)
{
	double roof = kpi_roofline_jct_s(10, 0.010, 1e9, 1.75, 400);

	CHECK(NEAR(roof, 0.45, 1e-12));
	CHECK(NEAR(kpi_jct_ratio(0.495, roof), 1.10, 1e-12));
	CHECK(kpi_roofline_jct_s(10, 0.010, 1e9, 1.75, 0) == 0);
	CHECK(kpi_jct_ratio(1, 0) == 0);
	/* 1.0 s JCT, 0.8 s compute, 0.5 s communication: 0.2 s shows, 60 % hidden */
	CHECK(NEAR(kpi_overlap_fraction(1.0, 0.8, 0.5), 0.6, 1e-12));
	/* in sequence, all of it shows: 1 - 0.30000000000000004 / 0.3 is -2.2e-16 unclamped */
	CHECK(kpi_overlap_fraction(1.0, 0.7, 0.3) == 0);
	CHECK(kpi_overlap_fraction(0.7, 0.7, 0.3) == 1);
}

static void jain_and_max_over_mean(void)
{
	const double even[] = { 1, 1, 1, 1 }, one[] = { 1, 0, 0, 0 }, ramp[] = { 1, 2, 3 }, none[] = { 0, 0 };
	const double uplinks[] = { 3, 13 }; /* the fabric example's worst ECMP group (docs/fabric.md) */

	CHECK(NEAR(kpi_jfi(even, 4), 1, 1e-12));
	CHECK(NEAR(kpi_jfi(one, 4), 0.25, 1e-12));
	CHECK(NEAR(kpi_jfi(ramp, 3), 36.0 / 42, 1e-12)); /* 6^2 / (3 x 14) */
	CHECK(kpi_jfi(none, 2) == 0 && kpi_jfi(ramp, 0) == 0);
	CHECK(NEAR(kpi_mmr(uplinks, 2), 13.0 / 8, 1e-12));
	CHECK(NEAR(kpi_mmr(even, 4), 1, 1e-12));
	CHECK(NEAR(kpi_mmr(one, 4), 4, 1e-12));
	CHECK(kpi_mmr(none, 2) == 0);
}

/* Small cases counted by hand: 2 balls in 2 bins, max 1 or 2 with 1/2 each; 3 in 3: all apart
 * 3!/27, all in one 3/27, else 2; 16 in 2: P(max <= 8) = C(16,8)/2^16, P(max <= 9) = (C(16,7) +
 * C(16,8) + C(16,9))/2^16. */
static void balls_into_bins_exact_small_cases(void)
{
	double cdf[17];
	struct kpi_mmr_range r;

	CHECK(kpi_bins_max_cdf(2, 2, cdf) == 0);
	CHECK(NEAR(cdf[0], 0, 1e-12) && NEAR(cdf[1], 0.5, 1e-12) && NEAR(cdf[2], 1, 1e-12));
	CHECK(kpi_bins_mmr(2, 2, 0.01, 0.99, &r) == 0);
	CHECK(NEAR(r.expected, 1.5, 1e-12) && NEAR(r.lo, 1, 1e-12) && NEAR(r.hi, 2, 1e-12));
	CHECK(kpi_bins_max_cdf(3, 3, cdf) == 0);
	CHECK(NEAR(cdf[1], 6.0 / 27, 1e-12) && NEAR(cdf[2], 24.0 / 27, 1e-12) && NEAR(cdf[3], 1, 1e-12));
	CHECK(kpi_bins_mmr(3, 3, 0.5, 0.99, &r) == 0);
	CHECK(NEAR(r.expected, 17.0 / 9, 1e-12)); /* (1 x 6 + 2 x 18 + 3 x 3) / 27, mean 1 */
	CHECK(kpi_bins_max_cdf(16, 2, cdf) == 0);
	CHECK(NEAR(cdf[7], 0, 1e-12));
	CHECK(NEAR(cdf[8], 12870.0 / 65536, 1e-12));
	CHECK(NEAR(cdf[9], 35750.0 / 65536, 1e-12));
	CHECK(NEAR(cdf[16], 1, 1e-12));
	CHECK(kpi_bins_max_cdf(3, 0, cdf) == -1);
	CHECK(kpi_bins_max_cdf(KPI_BINS_MAX_BALLS + 1, 2, cdf) == -1);
}

/* The distribution stands for a hash spreading flows: a Monte Carlo of 200,000 throws of 48
 * flows on 4 links (xorshift, the testlib's) agrees with the exact mean maximum to 0.5 % and
 * with P(max <= 14) to 0.01. */
static void balls_into_bins_agrees_with_a_monte_carlo(void)
{
	double cdf[49], e_exact = 0, e_mc = 0, at_most_14 = 0;
	const unsigned throws = 200000;

	CHECK(kpi_bins_max_cdf(48, 4, cdf) == 0);
	for (unsigned k = 0; k <= 48; k++)
		e_exact += 1 - cdf[k];
	for (unsigned t = 0; t < throws; t++) {
		unsigned bins[4] = { 0 }, max = 0;
		for (unsigned b = 0; b < 48; b++)
			bins[(test_rand() >> 20) % 4]++;
		for (unsigned i = 0; i < 4; i++)
			max = bins[i] > max ? bins[i] : max;
		e_mc += (double)max / throws;
		at_most_14 += (max <= 14) / (double)throws;
	}
	printf("  48 flows on 4 links: E[max] exact %.4f, Monte Carlo %.4f; P(max <= 14) %.4f / %.4f\n", e_exact,
	       e_mc, cdf[14], at_most_14);
	CHECK(fabs(e_exact - e_mc) / e_exact < 0.005);
	CHECK(fabs(cdf[14] - at_most_14) < 0.01);
}

/* {2, 4, 4, 4, 5, 5, 7, 9}: mean 5, squared deviations 32, sample sd sqrt(32/7). */
static void statistics_and_the_cv_flag(void)
{
	const double x[] = { 2, 4, 4, 4, 5, 5, 7, 9 }, same[] = { 3, 3, 3 };
	struct kpi_stats s;

	kpi_stats_of(x, 8, &s);
	CHECK(s.n == 8 && NEAR(s.mean, 5, 1e-12) && NEAR(s.min, 2, 0) && NEAR(s.max, 9, 0));
	CHECK(NEAR(s.stddev, sqrt(32.0 / 7), 1e-12));
	CHECK(NEAR(s.cv, sqrt(32.0 / 7) / 5, 1e-12));
	CHECK(s.cv > KPI_CV_FLAG);
	kpi_stats_of(same, 3, &s);
	CHECK(s.stddev == 0 && s.cv == 0 && s.cv <= KPI_CV_FLAG);
	kpi_stats_of(x, 1, &s);
	CHECK(s.stddev == 0 && s.mean == 2);
	CHECK(NEAR(kpi_ppm(3, 1e6), 3, 1e-12) && kpi_ppm(1, 0) == 0);
	CHECK(NEAR(kpi_per_s(50, 0.5), 100, 1e-12) && kpi_per_s(1, 0) == 0);
}

/* Two flows, fair share 5, the second joins at 2 ms: out of the band until 5 ms, in at 6, out
 * again at 7 (5.6 is 12 % over), in from 8 ms to the end: converged 6 ms after the onset. */
static void convergence_time_on_a_synthetic_trace(void)
{
	const double t[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	const double rates[] = { 10, 0, 10, 0, 9, 1, 8, 2, 7, 3, 6, 4, 5.2, 4.7, 5.6, 4.4, 5.4, 4.6, 4.9, 5.1, 5, 5 };
	const double late[] = { 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 8, 2 };

	CHECK(NEAR(kpi_convergence_s(t, rates, 11, 2, 5, 0.10, 2), 6, 1e-12));
	/* a 15 % band takes the 6 ms sample's neighbours in: settled from 6 ms on, 4 ms */
	CHECK(NEAR(kpi_convergence_s(t, rates, 11, 2, 5, 0.15, 2), 4, 1e-12));
	/* already within the band at the onset: 0 */
	CHECK(NEAR(kpi_convergence_s(t, late, 10, 2, 5, 0.10, 2), 0, 1e-12));
	/* out of the band at the end: never converged */
	CHECK(kpi_convergence_s(t, late, 11, 2, 5, 0.10, 2) == -1);
	/* no sample after the onset */
	CHECK(kpi_convergence_s(t, rates, 11, 2, 5, 0.10, 11) == -1);
	/* held: in at 6 ms but out at 7, so a 2 ms hold starts at 8 (8, 9, 10 in): 6 ms after the onset */
	CHECK(NEAR(kpi_convergence_held_s(t, rates, 11, 2, 5, 0.10, 2, 2), 6, 1e-12));
	/* a hold of 0: the first sample in the band, 6 ms, is 4 ms after the onset */
	CHECK(NEAR(kpi_convergence_held_s(t, rates, 11, 2, 5, 0.10, 2, 0), 4, 1e-12));
	/* the late trace leaves the band at its end, but was held from the onset for 5 ms: 0 */
	CHECK(NEAR(kpi_convergence_held_s(t, late, 11, 2, 5, 0.10, 2, 5), 0, 1e-12));
	/* a hold longer than the trace after the run starts: never */
	CHECK(kpi_convergence_held_s(t, rates, 11, 2, 5, 0.10, 2, 3) == -1);
}

int main(void)
{
	RUN(busbw_matches_the_drafts_example);
	RUN(roofline_jct_and_its_ratio);
	RUN(jain_and_max_over_mean);
	RUN(balls_into_bins_exact_small_cases);
	RUN(balls_into_bins_agrees_with_a_monte_carlo);
	RUN(statistics_and_the_cv_flag);
	RUN(convergence_time_on_a_synthetic_trace);
	return testlib_finish("kpi");
}

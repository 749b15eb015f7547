/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The KPIs of the IETF BMWG methodology for AI training fabrics
 * (draft-calabria-bmwg-ai-fabric-training-bench-02, §4; ../shared/spec/ai-fabric-bench.md), as
 * pure functions of what a run measured: roce-suite's AI-fabric suite and roce-cluster compute
 * their figures here, and tests/unit/test_kpi.c holds each against a hand-computed case. Plain C,
 * no EAL, libc and libm only. Units are in the names: bytes, seconds, Gb/s (1e9 bit/s).
 */
#ifndef ROCE_KPI_H
#define ROCE_KPI_H

#include <stdbool.h>
#include <stddef.h>

/* ---- collectives (§4.1, §9) ---------------------------------------------------------------------- */

enum kpi_collective { KPI_ALLREDUCE, KPI_ALLGATHER, KPI_REDUCESCATTER, KPI_ALLTOALL, KPI_COLLECTIVES };

extern const char *const kpi_collective_names[]; /* "allreduce", ...; NULL-terminated */

/* The bytes each rank's link carries for an S-byte collective over n ranks, as a multiple of S:
 * 2(n-1)/n for AllReduce (a reduce-scatter, then an all-gather), (n-1)/n for the others. 0 when
 * n < 2 (nothing crosses a link). */
double kpi_algo_factor(enum kpi_collective op, unsigned n);

/* The phases of one iteration of op over n ranks as NCCL runs it, each a step in which every rank
 * sends one chunk: 2(n-1) for the ring AllReduce, n-1 for the ring AllGather and ReduceScatter, 1
 * for the direct AlltoAll. 0 when n < 2. (The suite's trials and roce-cluster's ranks both count so.) */
unsigned kpi_collective_phases(enum kpi_collective op, unsigned n);

/* BusBW in Gb/s: S x algo_factor x 8 / t, the figure comparable with a NIC's line rate whatever
 * n (nccl-tests' definition, the methodology's). 0 when t <= 0. n = 8, S = 1 GB in 10 ms: 1,400
 * Gb/s = 175 GB/s, the draft's worked example. */
double kpi_busbw_gbps(enum kpi_collective op, unsigned n, double bytes, double seconds);

/* Algorithm bandwidth (S x 8 / t), Gb/s. */
double kpi_algbw_gbps(double bytes, double seconds);

/* ---- job completion (§10) ------------------------------------------------------------------------ */

/* The roofline JCT of `iterations` iterations of compute_s then a collective of `bytes` whose
 * link traffic is algo_factor x bytes, at the accelerator's NIC rate (summed over its rails):
 * iterations x (C + 8 S algo_factor / B). 0 when the rate is not positive. */
double kpi_roofline_jct_s(unsigned iterations, double compute_s, double bytes, double algo_factor, double nic_gbps);

/* measured / roofline (1: the network cost nothing beyond its line rate); 0 when roofline <= 0. */
double kpi_jct_ratio(double measured_s, double roofline_s);

/* 1 - (JCT - C_total) / comm_time: the share of communication hidden under compute (1 when none
 * shows in the JCT, 0 when all of it does), clamped to [0, 1]. 0 when comm_s <= 0. */
double kpi_overlap_fraction(double jct_s, double compute_total_s, double comm_s);

/* ---- balance and fairness (§4.2, §8) -------------------------------------------------------------- */

/* Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all are equal, 1/n when one has it all.
 * 0 when n is 0 or every x is 0. */
double kpi_jfi(const double *x, size_t n);

/* Max / mean imbalance ratio of parallel links' loads (flow counts or bytes): 1 when even, n when
 * one link has it all. 0 when n is 0 or every x is 0. */
double kpi_mmr(const double *x, size_t n);

/* The exact distribution of the fullest of `bins` bins when `balls` balls fall into them
 * uniformly and independently (ECMP's hash over equal-cost links, one flow per ball): P(max <= k)
 * for k = 0..balls into cdf (room for balls + 1). A DP over the bins, each taking a binomial share
 * of the balls still to place, probabilities only (no factorial overflows). 0, or -1 when
 * bins is 0 or balls above KPI_BINS_MAX_BALLS. */
#define KPI_BINS_MAX_BALLS 1024
int kpi_bins_max_cdf(unsigned balls, unsigned bins, double *cdf);

/* What balls-into-bins predicts for the MMR of flow counts (max / mean, the mean balls / bins):
 * its expectation and the q_lo and q_hi quantiles (e.g. 0.01 and 0.99). -1 as above. */
struct kpi_mmr_range {
	double expected, lo, hi;
};
int kpi_bins_mmr(unsigned balls, unsigned bins, double q_lo, double q_hi, struct kpi_mmr_range *out);

/* ---- statistics and repeatability (§13) ------------------------------------------------------------ */

struct kpi_stats {
	size_t n;
	double mean, stddev; /* the sample standard deviation (n - 1); 0 when n < 2 */
	double cv;           /* stddev / |mean|: the coefficient of variation; 0 when the mean is 0 */
	double min, max;
};

#define KPI_CV_FLAG 0.05 /* the methodology recommends a CV below 5 % per primary KPI */

void kpi_stats_of(const double *x, size_t n, struct kpi_stats *out);

/* Events per second and parts per million, 0 when the denominator is 0. */
double kpi_per_s(double count, double seconds);
double kpi_ppm(double part, double whole);

/* ---- congestion-control convergence (§4.2, §7.3) ----------------------------------------------------- */

/* A trace of n_flows flows' rates sampled together at n_samples times (rates row by row:
 * rates[i * n_flows + f] is flow f at t_s[i], ascending times). The convergence time from onset_s:
 * the first sample time t >= onset_s from which every later sample has every flow within
 * tolerance (0.1: 10 %) of fair, less onset_s. -1 when the trace never settles (the last sample
 * is out of the band, or no sample follows the onset). */
double kpi_convergence_s(const double *t_s, const double *rates, size_t n_samples, size_t n_flows, double fair,
			 double tolerance, double onset_s);
/* The same with a hold time instead of "every later sample": the first sample time t >= onset_s
 * from which every flow stays within the band through t + hold_s (the samples up to that time; the
 * trace must reach it), less onset_s; -1 when no such run of samples is there. A rate that
 * saw-tooths across the band's edge late in a long trace then does not undo a convergence held
 * for hold_s (the draft's "time until all are within 10 %"). */
double kpi_convergence_held_s(const double *t_s, const double *rates, size_t n_samples, size_t n_flows, double fair,
			      double tolerance, double onset_s, double hold_s);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Percentiles of exact samples (doubles), for the programs that keep every sample rather than a
 * histogram: the perftest front end's READ round trips (from a capture) and roce-suite's
 * per-trial tables. Plain C, no EAL.
 *
 * Definition: nearest rank, as the engine's histograms define theirs (histogram.h): the q-th
 * quantile of n sorted values is the value of rank ceil(q * n) (1-based; rank 0 is taken as 1), so
 * that q = 0 gives the smallest value and q = 1 the largest. linux-rdma/perftest reads its sorted
 * array at index ceil(n * q) from 0, one rank higher; the front end keeps the histograms' rule so
 * that its figures and the engine's agree (docs/perftest.md).
 */
#ifndef ROCE_LATENCY_PERCENTILE_H
#define ROCE_LATENCY_PERCENTILE_H

#include <stddef.h>

/* Sorts x ascending (NaNs are not expected). */
void percentile_sort(double *x, size_t n);

/* The q-th quantile (0..1) of n ascending values, nearest rank; 0 when n is 0. */
double percentile_of_sorted(const double *sorted, size_t n, double q);

#endif

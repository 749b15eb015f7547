/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A rank's clock against rank 0's, from ping-pong samples (plain C, no MPI: unit-tested by hand):
 * rank 0 reads its clock (t0), sends; the rank answers with its own clock (t_peer); rank 0 reads
 * its clock again (t1). If the answer was read half-way through the round trip, the offset is
 * t_peer - (t0 + t1) / 2, wrong by at most half the round trip whatever the asymmetry. The
 * sample with the shortest round trip is the least disturbed (the min-RTT filter NTP and PTP's
 * servo use): its offset is the estimate, half its round trip the uncertainty.
 */
#ifndef ROCE_CLUSTER_CLOCK_EST_H
#define ROCE_CLUSTER_CLOCK_EST_H

#include <stdint.h>

struct clock_sample {
	int64_t t0, t1;    /* rank 0's clock when it sent and when the answer came (ns) */
	int64_t peer;      /* the rank's clock in its answer (ns) */
};

struct clock_offset {
	int64_t offset_ns;      /* the rank's clock minus rank 0's */
	int64_t uncertainty_ns; /* half the chosen sample's round trip */
	int64_t rtt_ns;         /* the shortest round trip */
	unsigned samples;       /* how many were taken */
};

/* The min-RTT estimate of n >= 1 samples (samples with t1 < t0 are skipped); samples 0 when none
 * is usable. */
void clock_estimate(const struct clock_sample *s, unsigned n, struct clock_offset *out);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Rank 0's report (docs/cluster.md): every step's per-rank summaries (step.h) as they came, and
 * from them the matrices, row the sender, column the receiver:
 *   matrix.bandwidth_gbps[i][j]   what j received from i (payload) over j's run of that step;
 *   matrix.latency_ns.p50 / .p99  j's one-way latency of i's probes, less the clock offset
 *                                 between them (j's clock minus i's), so that it is the wire's;
 * null where the pair was not measured (the diagonal, a missing rank). Plain JSON in and out,
 * no MPI: the unit tests build it from summaries made by hand.
 */
#ifndef ROCE_CLUSTER_REPORT_H
#define ROCE_CLUSTER_REPORT_H

#include <stdbool.h>

#include <jansson.h>

#include "cluster.h"
#include "clock_est.h"

/* The matrices of the pairwise tests' steps (tests: [{"type", "measure", "rounds": [{"ranks":
 * [summary...]}]}]; a pair measured alone), with the clock offsets of every rank
 * (offset[r].offset_ns: r's clock minus rank 0's). */
json_t *cluster_matrices(const json_t *tests, unsigned n_ranks, const struct clock_offset *offset);
/* One test's summary: rounds, flows, directions measured, its own matrices; bandwidth tests the
 * aggregate Gb/s of a round (the sum over its directions; the mean over rounds), the directions'
 * min/mean/max and Jain's index over them (incast: also what the root received); latency tests
 * the directions' p50 range. */
json_t *cluster_test_summary(const json_t *test, unsigned n_ranks, const struct clock_offset *offset);
/* Jain's fairness index (sum x)^2 / (n sum x^2); 0 without data. */
double cluster_jfi(double sum, double sum_sq, unsigned n);
/* The SLA's verdicts over the matrices and the collective tests' busBW (their summaries set):
 * {"checks": [...], "worst_pairs": [...], "verdict"}; *failed when a threshold was missed. */
json_t *cluster_sla(const struct cl_sla *sla, const json_t *matrix, const json_t *tests, unsigned n_ranks,
		    bool *failed);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A cluster collective's arithmetic (cluster.h, type "collective"), plain functions for every rank
 * and the unit tests:
 *   phases:  a ring AllReduce is a reduce-scatter and an all-gather, 2(N-1) phases of S/N bytes
 *            from each rank to the next; a ring AllGather N-1 such phases; AlltoAll one phase in
 *            which each rank sends S/N to every other;
 *   busBW:   S x factor / t (the IETF AI-fabric methodology's and nccl-tests'), factor 2(N-1)/N
 *            for AllReduce and (N-1)/N for AllGather and AlltoAll: the bytes a rank's link carries
 *            for the collective, over its time, comparable with the link's rate whatever N;
 *   timing:  each rank's engine reports when each of its phases ended on its own clock; in rank
 *            0's time (less each rank's clock offset) an iteration ends when its last phase ends
 *            on the last rank, and takes the time since the previous iteration's end (the first:
 *            since the common start).
 */
#ifndef ROCE_CLUSTER_COLL_MODEL_H
#define ROCE_CLUSTER_COLL_MODEL_H

#include <stdint.h>

#include "cluster.h"
#include "kpi.h"

/* The cluster's op of a methodology collective (kpi.h): ReduceScatter, which the cluster does not
 * run, as the AllGather it mirrors (the same ring, phases and bytes). */
enum cl_collective_op coll_op_of_kpi(enum kpi_collective op);
/* Phases of one iteration over n ranks. */
unsigned coll_phases(enum cl_collective_op op, unsigned n);
/* Bytes each of a flow's QPs writes a phase: S / n split over the QPs (rounded up; at least 1). */
unsigned coll_message_per_qp(const struct cl_test *t, unsigned n);
/* The busBW factor. */
double coll_bus_factor(enum cl_collective_op op, unsigned n);
/* busBW in Gb/s of S bytes over n ranks done in t_ns. */
double coll_busbw_gbps(enum cl_collective_op op, unsigned n, double size_bytes, double t_ns);

/* One rank's phases as its report gives them: its start (ns, rank 0's clock) and each completed
 * phase's end (us after its start). */
struct coll_rank_times {
	double start_ns;
	const double *phase_end_us;
	unsigned phases_done;
};

/* The iterations every rank completed and their times (ns) into iter_ns (room for `iterations`);
 * how many. */
unsigned coll_iteration_times(const struct coll_rank_times *r, unsigned n_ranks, unsigned phases_per_iteration,
			      unsigned iterations, double *iter_ns);

#endif

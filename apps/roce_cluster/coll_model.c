/* SPDX-License-Identifier: BSD-3-Clause */
#include "coll_model.h"

#include "kpi.h"

unsigned coll_message_per_qp(const struct cl_test *t, unsigned n)
{
	uint64_t chunk = ((uint64_t)t->message_size + n - 1) / n;
	uint64_t per_qp = (chunk + t->qps_per_pair - 1) / t->qps_per_pair;

	return per_qp ? (unsigned)per_qp : 1;
}

/* The methodology's formulas are kpi/'s; the cluster's op names map onto them. */
static enum kpi_collective kpi_op(enum cl_collective_op op)
{
	return op == CL_OP_ALLREDUCE ? KPI_ALLREDUCE : op == CL_OP_ALLGATHER ? KPI_ALLGATHER : KPI_ALLTOALL;
}

unsigned coll_phases(enum cl_collective_op op, unsigned n)
{
	return kpi_collective_phases(kpi_op(op), n);
}

enum cl_collective_op coll_op_of_kpi(enum kpi_collective op)
{
	return op == KPI_ALLREDUCE ? CL_OP_ALLREDUCE : op == KPI_ALLTOALL ? CL_OP_ALLTOALL : CL_OP_ALLGATHER;
}

double coll_bus_factor(enum cl_collective_op op, unsigned n)
{
	return kpi_algo_factor(kpi_op(op), n);
}

double coll_busbw_gbps(enum cl_collective_op op, unsigned n, double size_bytes, double t_ns)
{
	return kpi_busbw_gbps(kpi_op(op), n, size_bytes, t_ns / 1e9);
}

unsigned coll_iteration_times(const struct coll_rank_times *r, unsigned n_ranks, unsigned phases_per_iteration,
			      unsigned iterations, double *iter_ns)
{
	unsigned done = iterations;
	double prev = 0;

	if (!n_ranks || !phases_per_iteration)
		return 0;
	for (unsigned i = 0; i < n_ranks; i++) {
		unsigned d = r[i].phases_done / phases_per_iteration;
		done = d < done ? d : done;
		prev = i == 0 || r[i].start_ns < prev ? r[i].start_ns : prev; /* the common start: the first */
	}
	for (unsigned k = 0; k < done; k++) {
		unsigned last = (k + 1) * phases_per_iteration - 1;
		double end = 0;
		for (unsigned i = 0; i < n_ranks; i++) {
			double e = r[i].start_ns + r[i].phase_end_us[last] * 1e3;
			end = i == 0 || e > end ? e : end;
		}
		iter_ns[k] = end - prev;
		prev = end;
	}
	return done;
}

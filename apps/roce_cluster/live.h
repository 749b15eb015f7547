/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Rank 0's live lines while a step runs: every cluster.live_interval_s each rank reads its
 * engine's last time-series row for its port (step_live_row) and posts it to rank 0 (fire and
 * forget: a post still under way drops the next, a step never waits for them); rank 0 prints one
 * line for all the ranks: how many reported, their TX and RX together, the least and most a rank
 * received, and the highest one-way p50 (on the receivers' clocks, before the offsets).
 */
#ifndef ROCE_CLUSTER_LIVE_H
#define ROCE_CLUSTER_LIVE_H

#include "job.h"

struct live_sample {
	int32_t rank, step;
	double time_s, tx_gbps, rx_gbps, p50_ns;
};

struct live {
	struct job *j;
	const struct cl_test *t;
	unsigned step, round, rounds;
	double next_s;                  /* when this rank looks next */
	double sent_time_s;             /* the engine time of the last row posted (or taken, rank 0) */
	struct live_sample *latest;     /* rank 0: each rank's last, by rank */
	double printed_time_s;
};

/* For one step; 0, or -1 (no memory: no live lines). */
int live_begin(struct live *l, struct job *j, const struct cl_test *t, unsigned step, unsigned round, unsigned rounds);
/* The step's tick (cl_step_env.tick): arg a struct live; dir NULL when this rank runs no engine. */
void live_tick(void *arg, const char *dir);
void live_end(struct live *l);

#endif

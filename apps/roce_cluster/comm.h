/* SPDX-License-Identifier: BSD-3-Clause
 *
 * MPI as roce-cluster uses it: every wait has a deadline, so that a rank that died or hangs makes
 * a step time out (and rank 0 report it missing) instead of hanging the job. Collectives are the
 * non-blocking ones (MPI_Ibarrier, MPI_Iallgather, MPI_Ibcast) polled to the deadline; results go
 * to rank 0 point to point, each rank's on its own, so that the others' still arrive.
 */
#ifndef ROCE_CLUSTER_COMM_H
#define ROCE_CLUSTER_COMM_H

#include <stdbool.h>
#include <stddef.h>

struct comm {
	int rank, size;
	int local_rank, local_size;  /* on this host (MPI_COMM_TYPE_SHARED) */
	char host[256];
};

/* MPI_Init, errors returned (not fatal), the rank's numbers and host. 0, or -1. */
int comm_init(int *argc, char ***argv, struct comm *c);
void comm_finish(void);
/* Ends the job from any rank (MPI_Abort), after a message on stderr. */
void comm_abort(int status) __attribute__((noreturn));
double comm_now_s(void);

/* Each returns 0, or -1 when timeout_s passed first (or MPI failed). */
int comm_barrier(double timeout_s);
int comm_allgather(const void *mine, void *all, int bytes, double timeout_s);
int comm_bcast(void *buf, int bytes, int root, double timeout_s);
/* Rank 0: every other rank's string sent with comm_send_string(tag), into out[r] (malloc'ed, NULL
 * for a rank that sent none by the deadline); out[0] is left alone. The others: nothing. */
int comm_gather_strings(const struct comm *c, int tag, char **out, double timeout_s);
/* Any rank but 0: its string to rank 0. */
int comm_send_string(const char *s, int tag, double timeout_s);
/* Live numbers while a step runs, fire and forget: any rank but 0 posts `bytes` to rank 0 unless
 * its previous post is still under way (then this one is dropped: 0 posted, 1 dropped, -1 error);
 * rank 0 takes one that has come (1, into buf; 0 none). */
int comm_post_live(const void *buf, int bytes, int tag);
int comm_take_live(void *buf, int bytes, int tag);
/* The last post, finished or cancelled before MPI ends. */
void comm_end_live(void);
/* Ping-pong with rank 0, for clock_est.h: rank 0 calls it with every other rank in turn (peer),
 * the rank with peer 0; n samples of rank 0's send and receive times and the peer's answer,
 * CLOCK_REALTIME in ns. 0, or -1. */
int comm_clock_pingpong(const struct comm *c, int peer, unsigned n, long long (*samples)[3], double timeout_s);

#endif

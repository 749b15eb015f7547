/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Which ranks meet in each round of a cluster test: plain functions of the rank count (no MPI),
 * so that every rank computes the same schedule and the unit tests check it by hand.
 *
 *   round robin: a tournament by the circle method (rank n-1 fixed, the others rotating; with n
 *                odd a dummy makes n even and its partner sits the round out): n-1 rounds (n odd:
 *                n), each rank in at most one pair a round, every pair in exactly one round;
 *   half:        one round of n/2 disjoint pairs, rank i with rank i + n/2;
 *   file:        a pairs file's pairs in its order, each in the round after the last one that
 *                holds either of its ranks (so each rank meets its partners in the file's order);
 * and the other tests are one round of directed flows:
 *   incast:      every rank but the root sends to the root;
 *   all_to_all:  every rank sends to every other;
 *   permutation: rank i sends to dst[i], a permutation of one cycle through all the ranks
 *                (Sattolo's shuffle from the test's seed): nobody sends to itself, everybody
 *                sends once and receives once;
 *   collective:  a ring (i to i+1, the last to 0) for AllReduce and AllGather; AlltoAll every
 *                rank to every other.
 * A pair is directed for a measurement by its order: (a, b) sends from a to b; pairwise tests
 * measure both directions of each pair in its round.
 */
#ifndef ROCE_CLUSTER_SCHEDULE_H
#define ROCE_CLUSTER_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster.h"

struct cl_pair {
	unsigned a, b;
};

/* Rounds of a round-robin tournament of n ranks (n >= 2): n - 1 when n is even, n when odd. */
unsigned schedule_rounds(unsigned n);
/* The pairs of round r (0 <= r < schedule_rounds(n)) into out (room for n / 2); how many. The
 * smaller rank first. */
unsigned schedule_round_robin(unsigned n, unsigned r, struct cl_pair *out);
/* The one round of n/2 disjoint pairs (i, i + n/2); how many. */
unsigned schedule_half(unsigned n, struct cl_pair *out);
/* Whether every rank of the k pairs is below n, no pair is a rank with itself and no rank is in
 * two pairs. */
bool schedule_round_valid(unsigned n, const struct cl_pair *p, unsigned k);

/* The first-fit rounds of a pairs file: round_of[i] for pair i; how many rounds. Pairs whose
 * ranks are not below n get no round (the caller refuses them first: schedule_file_check). */
unsigned schedule_file_rounds(const struct cl_file_pair *p, unsigned k, unsigned n, unsigned *round_of);
/* The first pair of a file with a rank not below n, or NULL. */
const struct cl_file_pair *schedule_file_check(const struct cl_file_pair *p, unsigned k, unsigned n);
/* dst[i] for every rank i < n (n >= 2): Sattolo's shuffle of 0..n-1 by a generator seeded with `seed`. */
void schedule_permutation(unsigned n, uint64_t seed, unsigned *dst);

/* A test over n ranks as rounds of directed flows (sender a, receiver b). */
unsigned schedule_test_rounds(const struct cl_test *t, unsigned n);
/* Room the flows of one of its rounds need. */
size_t schedule_max_flows(const struct cl_test *t, unsigned n);
/* The flows of round r into out (room for schedule_max_flows()); how many. */
unsigned schedule_test_flows(const struct cl_test *t, unsigned n, unsigned r, struct cl_pair *out);

#endif

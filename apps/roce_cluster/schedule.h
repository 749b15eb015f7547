/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Which ranks meet in each round of a cluster test: plain functions of the rank count (no MPI),
 * so that every rank computes the same schedule and the unit tests check it by hand.
 *
 *   round robin: a tournament by the circle method (rank n-1 fixed, the others rotating; with n
 *                odd a dummy makes n even and its partner sits the round out): n-1 rounds (n odd:
 *                n), each rank in at most one pair a round, every pair in exactly one round;
 *   half:        one round of n/2 disjoint pairs, rank i with rank i + n/2;
 *   pairs:       the rounds given (a file's), checked: no rank twice in a round.
 * A pair is directed for a measurement by its order: (a, b) sends from a to b; bandwidth tests
 * measure both directions of each pair in its round.
 */
#ifndef ROCE_CLUSTER_SCHEDULE_H
#define ROCE_CLUSTER_SCHEDULE_H

#include <stdbool.h>

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

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
#include "schedule.h"

#include <stdlib.h>
#include <string.h>

#include "fabric.h"

unsigned schedule_rounds(unsigned n)
{
	return n < 2 ? 0 : n % 2 ? n : n - 1;
}

/* The circle method on m = n rounded up to even: position 0 holds player m-1 (fixed); positions
 * 1..m-1 hold players (k + r) mod (m-1), k = 0..m-2; position p meets position m-p ... written as
 * the classic pairing of i with (r - i) mod (m-1) for the rotating players, and the one player
 * whose pair is itself (2i = r mod (m-1)) meets the fixed one. With n odd, the fixed "player" is
 * the dummy: its partner sits out. */
unsigned schedule_round_robin(unsigned n, unsigned r, struct cl_pair *out)
{
	unsigned m = n % 2 ? n + 1 : n, k = 0;

	if (n < 2 || r >= schedule_rounds(n))
		return 0;
	for (unsigned i = 0; i < m - 1; i++) {
		unsigned j = (r + (m - 1) - i) % (m - 1); /* i + j = r (mod m-1) */
		if (j == i) {
			if (m - 1 < n) /* the fixed player is real */
				out[k++] = (struct cl_pair){ i, m - 1 };
		} else if (i < j) {
			out[k++] = (struct cl_pair){ i, j };
		}
	}
	return k;
}

unsigned schedule_half(unsigned n, struct cl_pair *out)
{
	for (unsigned i = 0; i < n / 2; i++)
		out[i] = (struct cl_pair){ i, i + n / 2 };
	return n / 2;
}

bool schedule_round_valid(unsigned n, const struct cl_pair *p, unsigned k)
{
	unsigned char seen[4096];

	if (n > sizeof(seen))
		return false;
	memset(seen, 0, n);
	for (unsigned i = 0; i < k; i++) {
		if (p[i].a >= n || p[i].b >= n || p[i].a == p[i].b || seen[p[i].a] || seen[p[i].b])
			return false;
		seen[p[i].a] = seen[p[i].b] = 1;
	}
	return true;
}

unsigned schedule_file_rounds(const struct cl_file_pair *p, unsigned k, unsigned n, unsigned *round_of)
{
	unsigned *busy_until = calloc(n ? n : 1, sizeof(*busy_until)); /* a rank's next free round */
	unsigned rounds = 0;

	for (unsigned i = 0; i < k; i++) {
		unsigned r;

		round_of[i] = UINT32_MAX;
		if (!busy_until || p[i].a >= n || p[i].b >= n)
			continue;
		/* the first round after the last one either rank is in keeps the file's order per rank */
		r = busy_until[p[i].a] > busy_until[p[i].b] ? busy_until[p[i].a] : busy_until[p[i].b];
		round_of[i] = r;
		busy_until[p[i].a] = busy_until[p[i].b] = r + 1;
		rounds = r + 1 > rounds ? r + 1 : rounds;
	}
	free(busy_until);
	return rounds;
}

const struct cl_file_pair *schedule_file_check(const struct cl_file_pair *p, unsigned k, unsigned n)
{
	for (unsigned i = 0; i < k; i++)
		if (p[i].a >= n || p[i].b >= n)
			return &p[i];
	return NULL;
}

void schedule_permutation(unsigned n, uint64_t seed, unsigned *dst)
{
	fab_permutation(n, seed, dst); /* the fabric's permutation pattern's: one function */
}

unsigned schedule_test_rounds(const struct cl_test *t, unsigned n)
{
	if (t->type != CL_TEST_PAIRWISE)
		return 1;
	if (t->schedule == CL_SCHED_HALF)
		return 1;
	if (t->schedule == CL_SCHED_FILE) {
		unsigned *round_of = malloc(sizeof(*round_of) * (t->n_pairs ? t->n_pairs : 1)), r;
		r = round_of ? schedule_file_rounds(t->pairs, t->n_pairs, n, round_of) : 0;
		free(round_of);
		return r;
	}
	return schedule_rounds(n);
}

size_t schedule_max_flows(const struct cl_test *t, unsigned n)
{
	bool all = t->type == CL_TEST_ALL_TO_ALL || (t->type == CL_TEST_COLLECTIVE && t->op == CL_OP_ALLTOALL);

	return all ? (size_t)n * (n - 1) : n + 1;
}

/* Both directions of each pair of round r. */
static unsigned pairwise_flows(const struct cl_test *t, unsigned n, unsigned r, struct cl_pair *out)
{
	struct cl_pair *p = calloc(n / 2 + 1, sizeof(*p));
	unsigned k = 0, m = 0;

	if (!p)
		return 0;
	if (t->schedule == CL_SCHED_HALF) {
		k = schedule_half(n, p);
	} else if (t->schedule == CL_SCHED_ROUND_ROBIN) {
		k = schedule_round_robin(n, r, p);
	} else {
		unsigned *round_of = malloc(sizeof(*round_of) * t->n_pairs);
		if (round_of) {
			schedule_file_rounds(t->pairs, t->n_pairs, n, round_of);
			for (unsigned i = 0; i < t->n_pairs && k < n / 2; i++)
				if (round_of[i] == r)
					p[k++] = (struct cl_pair){ t->pairs[i].a, t->pairs[i].b };
		}
		free(round_of);
	}
	for (unsigned i = 0; i < k; i++) {
		out[m++] = p[i];
		out[m++] = (struct cl_pair){ p[i].b, p[i].a };
	}
	free(p);
	return m;
}

unsigned schedule_test_flows(const struct cl_test *t, unsigned n, unsigned r, struct cl_pair *out)
{
	unsigned m = 0;

	if (n < 2 || r >= schedule_test_rounds(t, n))
		return 0;
	switch (t->type) {
	case CL_TEST_PAIRWISE:
		return pairwise_flows(t, n, r, out);
	case CL_TEST_INCAST:
		for (unsigned i = 0; i < n; i++)
			if (i != t->root && t->root < n)
				out[m++] = (struct cl_pair){ i, t->root };
		return m;
	case CL_TEST_COLLECTIVE:
		if (t->op != CL_OP_ALLTOALL) { /* the ring */
			for (unsigned i = 0; i < n; i++)
				out[m++] = (struct cl_pair){ i, (i + 1) % n };
			return m;
		}
		/* AlltoAll sends to every other rank */
		__attribute__((fallthrough));
	case CL_TEST_ALL_TO_ALL:
		for (unsigned i = 0; i < n; i++)
			for (unsigned j = 0; j < n; j++)
				if (i != j)
					out[m++] = (struct cl_pair){ i, j };
		return m;
	case CL_TEST_PERMUTATION: {
		unsigned *dst = malloc(sizeof(*dst) * n);
		if (!dst)
			return 0;
		schedule_permutation(n, t->seed, dst);
		for (unsigned i = 0; i < n; i++)
			out[m++] = (struct cl_pair){ i, dst[i] };
		free(dst);
		return m;
	}
	}
	return 0;
}

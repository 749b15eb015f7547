/* SPDX-License-Identifier: BSD-3-Clause */
#include "schedule.h"

#include <string.h>

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

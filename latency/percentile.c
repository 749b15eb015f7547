/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Nearest-rank percentiles of exact samples (percentile.h).
 */
#include "percentile.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void percentile_sort(double *x, size_t n)
{
	qsort(x, n, sizeof(*x), cmp_double);
}

double percentile_of_sorted(const double *sorted, size_t n, double q)
{
	size_t rank;

	if (!n)
		return 0;
	rank = (size_t)ceil(q * (double)n);
	if (rank > n) /* q above 1 */
		rank = n;
	return sorted[rank ? rank - 1 : 0];
}

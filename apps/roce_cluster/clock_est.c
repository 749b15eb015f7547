/* SPDX-License-Identifier: BSD-3-Clause */
#include "clock_est.h"

void clock_estimate(const struct clock_sample *s, unsigned n, struct clock_offset *out)
{
	const struct clock_sample *best = 0;

	*out = (struct clock_offset){ 0 };
	for (unsigned i = 0; i < n; i++)
		if (s[i].t1 >= s[i].t0 && (!best || s[i].t1 - s[i].t0 < best->t1 - best->t0))
			best = &s[i];
	if (!best)
		return;
	out->rtt_ns = best->t1 - best->t0;
	/* t0 + rtt / 2, without summing two epoch times */
	out->offset_ns = best->peer - (best->t0 + out->rtt_ns / 2);
	out->uncertainty_ns = (out->rtt_ns + 1) / 2;
	out->samples = n;
}

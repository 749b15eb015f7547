/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What a DCQCN QP's catch-up costs after a silence. The engine runs a QP's DCQCN timers only when
 * the QP next sends (cc/dcqcn.h, dcqcn_catch_up): a QP that was paused (PFC) or idle for long
 * runs every timer event of the silence at once, on its lcore, before its next packet. This
 * measures that one-time cost per QP, for both profiles (default parameters, 400 Gb/s line, five
 * CNPs 60 µs apart, then silences of 1 ms to 1 s): the time of 2,000 QPs' catch-ups over 2,000.
 * Usage: bench_dcqcn_catchup [QPS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dcqcn.h"

#define LINE_KBPS 400000000ull

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 2000;
	struct dcqcn_qp *q = calloc(n ? n : 1, sizeof(*q));
	static const uint64_t silences_ns[] = {1000000, 10000000, 100000000, 1000000000};
	static const char *const names[] = {"nvidia", "paper"};

	if (!q || n == 0)
		return 1;
	for (int prof = 0; prof < 2; prof++) {
		struct dcqcn_params p;

		dcqcn_params_default(&p, prof == 0 ? DCQCN_NVIDIA : DCQCN_PAPER);
		for (unsigned s = 0; s < sizeof(silences_ns) / sizeof(silences_ns[0]); s++) {
			uint64_t events = 0, at = 1000000 + silences_ns[s];
			double t0, t1;

			for (unsigned i = 0; i < n; i++) {
				dcqcn_init(&q[i], &p, LINE_KBPS, 0);
				for (int c = 0; c < 5; c++)
					dcqcn_on_cnp(&q[i], NULL, 1000 + c * 60000ull);
				events -= q[i].c.timer_events;
			}
			t0 = now_s();
			for (unsigned i = 0; i < n; i++)
				dcqcn_catch_up(&q[i], NULL, at);
			t1 = now_s();
			for (unsigned i = 0; i < n; i++)
				events += q[i].c.timer_events;
			printf("%s, silence %.3f s: %.2f us per QP (%.0f increase events each), rate then %.1f Gb/s\n",
			       names[prof], (double)silences_ns[s] * 1e-9, (t1 - t0) / n * 1e6, (double)events / n,
			       (double)q[0].rc_kbps / 1e6);
			printf("RESULT bench=dcqcn_catchup profile=%s silence_ns=%llu us_per_qp=%.3f\n", names[prof],
			       (unsigned long long)silences_ns[s], (t1 - t0) / n * 1e6);
		}
	}
	free(q);
	return 0;
}

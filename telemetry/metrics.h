/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The running engine's state in the Prometheus text exposition format (version 0.0.4): the build,
 * ports, priorities (PFC), flow groups, latency histograms, congestion control and the lab
 * switch. The HTTP exporter serves it at /metrics; the live dashboard reads the same page. Every
 * name, label and unit is in docs/monitoring.md#metrics.
 */
#ifndef ROCE_ENGINE_METRICS_H
#define ROCE_ENGINE_METRICS_H

#include <stdbool.h>
#include <stddef.h>

struct run_view;

/* A growing text; on allocation failure `failed` is set and later appends do nothing. */
struct metrics_text {
	char *buf;
	size_t len, cap;
	bool failed;
};

/* Where a page's numbers are gathered (about 80 KB, sized for the config's limits), so that a
 * scrape allocates nothing but its text; one page at a time. NULL when out of memory. */
struct metrics_work;
struct metrics_work *metrics_work_new(void);
void metrics_work_free(struct metrics_work *w);

/* Appends the whole exposition for `run`; `finished`: the run has ended (the numbers are final). */
void metrics_write(struct metrics_text *t, const struct run_view *run, bool finished, struct metrics_work *w);
void metrics_text_free(struct metrics_text *t);

#endif

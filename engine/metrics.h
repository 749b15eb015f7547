/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The running engine's state in the Prometheus text exposition format (version 0.0.4): ports,
 * priorities (PFC), flow groups, latency quantiles, congestion control and the lab switch. The
 * HTTP exporter serves it at /metrics; the live dashboard reads the same page. Every name and
 * label is in docs/monitoring.md#prometheus.
 */
#ifndef ROCE_ENGINE_METRICS_H
#define ROCE_ENGINE_METRICS_H

#include <stdbool.h>
#include <stddef.h>

struct engine;

/* A growing text; on allocation failure `failed` is set and later appends do nothing. */
struct metrics_text {
	char *buf;
	size_t len, cap;
	bool failed;
};

/* Appends the whole exposition for `e`; `finished`: the run has ended (the numbers are final). */
void metrics_write(struct metrics_text *t, const struct engine *e, bool finished);
void metrics_text_free(struct metrics_text *t);

#endif

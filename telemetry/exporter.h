/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The engine's HTTP server (libmicrohttpd, one thread of its own, never an lcore): off unless
 * run.http / --http asks for it, on 127.0.0.1 unless told otherwise.
 *   /metrics         Prometheus text exposition (metrics.h)
 *   /                the live dashboard (files of run.http_dashboard, default the built-in
 *                    folder), which charts /metrics every second
 *   /api/run         JSON: the run's name, state, ports and flow groups (the dashboard's layout)
 * It reads the running engine through control_enter/control_leave, so a run ending under a
 * request is safe. docs/monitoring.md#prometheus and #dashboard.
 */
#ifndef ROCE_ENGINE_EXPORTER_H
#define ROCE_ENGINE_EXPORTER_H

#include <stddef.h>

struct engine_config;
struct exporter;

/* Listens on cfg->http_addr:cfg->http_port; NULL with err when it cannot (port taken, bad
 * dashboard folder). */
struct exporter *exporter_start(const struct engine_config *cfg, char *err, size_t errlen);
/* Requests served so far (the linger message, tests). */
unsigned long exporter_requests(const struct exporter *x);
void exporter_stop(struct exporter *x);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The engine: from a validated configuration and an initialised EAL, brings the ports up,
 * expands flow groups into QPs, launches the lcore roles, prints live statistics, stops on
 * duration / flows done / a signal, drains, and writes the report.
 */
#ifndef ROCE_ENGINE_ENGINE_H
#define ROCE_ENGINE_ENGINE_H

#include <stdbool.h>

#include "config.h"

/* Exit codes of roce-engine (docs/engine.md). */
enum engine_exit {
	ENGINE_EXIT_OK = 0,          /* ran and wrote its report (also after SIGINT/SIGTERM) */
	ENGINE_EXIT_USAGE = 2,       /* bad command line */
	ENGINE_EXIT_CONFIG = 3,      /* configuration rejected */
	ENGINE_EXIT_INIT = 4,        /* EAL, port or memory set-up failed */
	ENGINE_EXIT_REPORT = 5,      /* the report could not be written */
	ENGINE_EXIT_SLA = 6,         /* ran, wrote its report, and an SLA check failed */
};

struct engine_options {
	const char *report_path;     /* NULL: none */
	double duration_s;           /* 0: until every flow stops, or a signal */
	double stats_interval_s;
	bool quiet;                  /* no live lines */
};

/* Runs the engine; returns an enum engine_exit. EAL must be initialised. */
int engine_run(const struct engine_config *cfg, const struct engine_options *opt);
/* Asks a running engine to stop (async-signal-safe). */
void engine_request_stop(void);

#endif

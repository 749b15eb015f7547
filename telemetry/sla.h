/* SPDX-License-Identifier: BSD-3-Clause
 *
 * SLA verdicts (the config's `sla` list, docs/report.md#sla): after the run, every check is
 * measured — for a flow group, on each of its QPs, the worst one standing for the group; for a
 * port, on the port's totals — and compared with its limit. The report gets an `sla` object, the
 * summary a line per check, and roce-engine exits with ENGINE_EXIT_SLA when any check failed, so
 * that a CI pipeline can gate on it.
 */
#ifndef ROCE_ENGINE_SLA_H
#define ROCE_ENGINE_SLA_H

#include <stdbool.h>

#include <jansson.h>

#include "config.h"

struct run_view;

struct sla_result {
	char subject[64]; /* "flow f0[3]", "port b" */
	double measured;
	bool has_data;    /* false: nothing to measure (no samples, receiver elsewhere) */
	bool pass;
};

/* Every result of every check, in order (a "*" check gives one per group or port), with the
 * check each belongs to. ~1.5 MB: part of the caller's (allocated) state, not its stack. */
#define SLA_MAX_RESULTS (CFG_MAX_SLA * CFG_MAX_FLOW_GROUPS)
struct sla_checks {
	unsigned n;
	struct sla_result result[SLA_MAX_RESULTS];
	const struct cfg_sla *of[SLA_MAX_RESULTS];
};

/* Measures every check of the finished run into out. */
void sla_measure(const struct run_view *run, struct sla_checks *out);
/* true when every check passed (or there are none); prints one line per check unless quiet. */
bool sla_verdict(const struct sla_checks *checks, bool print);
/* The report's `sla` object, or NULL without checks. */
json_t *sla_json(const struct run_view *run, const struct sla_checks *checks);

#endif

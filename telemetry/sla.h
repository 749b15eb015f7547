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

struct run_view;

/* true when every check passed (or there are none); prints one line per check unless quiet. */
bool sla_verdict(const struct run_view *run, bool print);
/* The report's `sla` object, or NULL without checks. */
json_t *sla_json(const struct run_view *run);

#endif

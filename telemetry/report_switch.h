/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The report's `switch` (the virtual lab's switch) and `fabric` (the virtual fabric: its
 * switches, its links in both directions, its ECMP groups' balance) sections; docs/report.md.
 */
#ifndef ROCE_TELEMETRY_REPORT_SWITCH_H
#define ROCE_TELEMETRY_REPORT_SWITCH_H

#include <jansson.h>
#include <stdint.h>

#include "run_view.h"

struct switch_rt;

json_t *report_switch_json(const struct run_view *run, const struct switch_rt *s);
/* secs: the run's duration (links' rates and utilisation) */
json_t *report_fabric_json(const struct run_view *run, double secs);
/* [v0, v1, ...] (report.c) */
json_t *u64_array(const uint64_t *v, unsigned n);

#endif

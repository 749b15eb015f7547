/* SPDX-License-Identifier: BSD-3-Clause
 *
 * roce-fabric's output: the text on stdout and the JSON report (docs/fabric.md#the-report).
 */
#ifndef ROCE_FABRIC_REPORT_H
#define ROCE_FABRIC_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "analysis.h"
#include "fabric.h"

struct fr_opts {
	const char *file, *report;
	bool routes, flows, nics, quiet;
};

void fabric_report_text(FILE *o, const struct fr_opts *opts, const struct fabric *f, const struct fab_routes *r,
			const struct analysis *a);
/* 0, or -1 after a message on stderr. */
int fabric_report_json(const struct fr_opts *opts, const struct fabric *f, const struct fab_routes *r,
		       const struct analysis *a);

#endif

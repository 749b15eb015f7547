/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A fabric simulation's summaries (docs/ccsim.md#fabric-output): the JSON (--summary) and the
 * table. The same measurements as the engine's fabric report (links' utilisation, drops by
 * reason, ECN marks, PFC pauses; ECMP groups' MMR and JFI; switches' buffer and queues; Jain's
 * index over the flows) and flow completion times with the slowdown per size bucket, as HPCC's
 * analysis prints them. Fixed formats: the same run gives the same bytes (run_info aside).
 */
#ifndef ROCE_CCSIM_FAB_REPORT_H
#define ROCE_CCSIM_FAB_REPORT_H

#include <stdio.h>

#include "fabsim.h"

/* 0, or -1 out of memory. */
int fab_report_json(FILE *o, const struct fabsim *s);
void fab_report_table(FILE *o, const struct fabsim *s);

#endif

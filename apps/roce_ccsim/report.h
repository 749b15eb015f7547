/* SPDX-License-Identifier: BSD-3-Clause
 *
 * roce-ccsim's summaries: JSON (--summary) and the human table, from a finished simulation.
 */
#ifndef ROCE_CCSIM_REPORT_H
#define ROCE_CCSIM_REPORT_H

#include <stdio.h>

#include "replay.h"
#include "sim.h"

void report_json(FILE *o, const struct sim *s);
void report_table(FILE *o, const struct sim *s);
void report_replay_json(FILE *o, const struct scenario *sc, const struct replay_result *r);

#endif

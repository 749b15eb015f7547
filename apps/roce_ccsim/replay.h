/* SPDX-License-Identifier: BSD-3-Clause
 *
 * rp_replay: one DCQCN reaction point driven by listed CNP times (see replay.c, docs/ccsim.md).
 */
#ifndef ROCE_CCSIM_REPLAY_H
#define ROCE_CCSIM_REPLAY_H

#include <stdio.h>

#include "dcqcn.h"
#include "scenario.h"

struct replay_result {
	uint64_t rc_kbps, rt_kbps;
	double alpha;
	struct dcqcn_counters c;
	uint64_t lines;               /* CSV lines after the header */
};

/* Writes the CSV to out; 0, or -1 (out of memory). res (may be NULL) gets the end state. */
int replay_run(const struct scenario *sc, FILE *out, struct replay_result *res);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Collectives at run time: the phase barrier shared by the QPs of a collective's flows and the
 * receiver QPs it watches. A QP starts its message k only when phase k is released. Phase k counts
 * n_qps local completions (RC: acknowledged; UC/UD: sent) and n_rx receipts (message k of each
 * watched receiver QP: a peer's chunk, possibly from another process) on ONE atomic counter, so
 * that whichever event is the last releases phase k+1 itself (no lock, no main-lcore round trip),
 * whatever their order; the phase's end time is the latest event.
 */
#ifndef ROCE_ENGINE_COLLECTIVE_H
#define ROCE_ENGINE_COLLECTIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

struct collective_rt {
	const struct cfg_collective *cfg;
	unsigned n_qps;           /* local QPs: one completion each per phase */
	unsigned n_rx;            /* watched receiver QPs (the receives' counts summed): one receipt each per phase */
	uint32_t released;        /* phases that may start (1..phases) */
	uint32_t *done_count;     /* per phase: completions and receipts counted (complete at n_qps + n_rx) */
	uint64_t *start_tsc;      /* per phase: when it may start (the previous phase's end, plus the compute
				   * step before an iteration's first phase) */
	uint64_t compute_tsc;     /* cfg->compute_us */
	uint64_t *end_tsc;        /* per phase: the latest completion or receipt */
};

/* Runtime state for every collective of the config; QP counts from the groups, receipts from the
 * receives. -1: no memory. */
int collectives_create(const struct engine_config *cfg, uint64_t start_tsc, struct collective_rt **out);
void collectives_free(struct collective_rt *c, unsigned n);

/* Message `message_index` of a QP may start: its phase is released and its start time (after a
 * compute step) has come. */
static inline bool collective_may_start(const struct collective_rt *c, uint64_t message_index, uint64_t now_tsc)
{
	return message_index < __atomic_load_n(&c->released, __ATOMIC_ACQUIRE) &&
	       (!c->compute_tsc || now_tsc >= c->start_tsc[message_index]);
}
/* A local QP completed its message `phase` (0-based) at `now_tsc`. */
void collective_completed(struct collective_rt *c, uint32_t phase, uint64_t now_tsc);
/* A watched receiver QP received its message `phase` (0-based) at `now_tsc`. It may come before
 * the phase is released here (the peer is ahead): it is counted, and the phase still needs the
 * local completions, which wait for the release. Indices past the last phase are ignored. */
void collective_received(struct collective_rt *c, uint32_t phase, uint64_t now_tsc);
/* Phases whose every completion and receipt was counted. */
unsigned collective_phases_done(const struct collective_rt *c);

#endif

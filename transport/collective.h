/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Collectives at run time: the phase barrier shared by the QPs of a collective's flows and the
 * receiver QPs it watches. A QP starts its message k only when phase k is released. Phase k counts
 * n_qps local completions (RC: acknowledged; UC/UD: sent) and n_rx receipts (message k of each
 * watched receiver QP: a peer's chunk, possibly from another process) on ONE atomic counter, so
 * that whichever event is the last releases phase k+1 itself (no lock, no main-lcore round trip),
 * whatever their order; the phase's end time is the latest event.
 *
 * A repeating collective (cfg repeat, a soak) goes on past its last phase: global phase g uses
 * slot g for the first round (what the report shows) and phases + g % phases after it, a slot
 * reset by the event that releases it (every event of its previous use came before: the
 * barrier). A window holds each iteration's first phase until the collective's turn comes.
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
	uint32_t released;        /* phases that may start (1..phases; repeating: counts on) */
	uint32_t *done_count;     /* per slot: completions and receipts counted (complete at n_qps + n_rx) */
	uint64_t *start_tsc;      /* per phase of the first round: when it may start (the previous phase's
				   * end, plus the compute step and the window's wait before an iteration) */
	uint64_t compute_tsc;     /* cfg->compute_us */
	uint64_t *end_tsc;        /* per slot: the latest completion or receipt */
	uint64_t base_tsc;        /* the traffic's start: the windows' and the report's zero */
	unsigned iteration_phases; /* cfg's, or every phase when it is 0 (a config built in code) */
	uint64_t period_tsc, offset_tsc, active_tsc; /* the window; period 0: none */
	uint64_t cur_start_tsc;   /* when the last released phase may start (the gate's) */
	/* iterations completed: their time from their first phase's start to their last phase's end */
	uint64_t iter_start_tsc, iterations, iter_sum_tsc, iter_max_tsc;
};

/* Runtime state for every collective of the config; QP counts from the groups, receipts from the
 * receives. -1: no memory. */
int collectives_create(const struct engine_config *cfg, uint64_t start_tsc, struct collective_rt **out);
void collectives_free(struct collective_rt *c, unsigned n);

/* Message `message_index` of a QP may start: its phase is released and its start time (after a
 * compute step) has come. */
static inline bool collective_may_start(const struct collective_rt *c, uint64_t message_index, uint64_t now_tsc)
{
	/* a QP waits at the released phase only: it completed the one before, which released it; only
	 * a compute step or a window can put its start after the release */
	return message_index < __atomic_load_n(&c->released, __ATOMIC_ACQUIRE) &&
	       ((!c->compute_tsc && !c->period_tsc) || now_tsc >= __atomic_load_n(&c->cur_start_tsc, __ATOMIC_RELAXED));
}
/* A local QP completed its message `phase` (0-based) at `now_tsc`. */
void collective_completed(struct collective_rt *c, uint32_t phase, uint64_t now_tsc);
/* A watched receiver QP received its message `phase` (0-based) at `now_tsc`. It may come before
 * the phase is released here (the peer is ahead): it is counted, and the phase still needs the
 * local completions, which wait for the release. Indices past the last phase are ignored. */
void collective_received(struct collective_rt *c, uint32_t phase, uint64_t now_tsc);
/* Phases of the first round whose every completion and receipt was counted. */
unsigned collective_phases_done(const struct collective_rt *c);
/* Move every time of the collective by delta TSC cycles (the run's start, set late). */
void collective_shift_time(struct collective_rt *c, uint64_t delta);
/* Iterations completed and their times summed and the longest, TSC cycles (a consistent enough
 * view for a sample: each is read atomically). */
void collective_iterations(const struct collective_rt *c, uint64_t *n, uint64_t *sum_tsc, uint64_t *max_tsc);

#endif

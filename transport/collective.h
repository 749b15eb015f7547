/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Collectives at run time: the phase barrier shared by the QPs of a collective's flows. A QP
 * starts its message k only when phase k is released; the QP whose completion of phase k is the
 * last one releases phase k+1 itself (an atomic count, no lock, no main-lcore round trip) and
 * the phase's end time is the latest completion.
 */
#ifndef ROCE_ENGINE_COLLECTIVE_H
#define ROCE_ENGINE_COLLECTIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

struct collective_rt {
	const struct cfg_collective *cfg;
	unsigned n_qps;
	uint32_t released;        /* phases that may start (1..phases) */
	uint32_t *done_count;     /* per phase: QPs that completed it */
	uint64_t *start_tsc;      /* per phase: when it was released */
	uint64_t *end_tsc;        /* per phase: the last completion */
};

/* Runtime state for every collective of the config; QP counts from the groups. -1: no memory. */
int collectives_create(const struct engine_config *cfg, uint64_t start_tsc, struct collective_rt **out);
void collectives_free(struct collective_rt *c, unsigned n);

static inline bool collective_may_start(const struct collective_rt *c, uint64_t message_index)
{
	return message_index < __atomic_load_n(&c->released, __ATOMIC_ACQUIRE);
}
/* A QP completed its message `phase` (0-based) at `now_tsc`. */
void collective_completed(struct collective_rt *c, uint32_t phase, uint64_t now_tsc);
/* Phases every QP completed. */
unsigned collective_phases_done(const struct collective_rt *c);

#endif

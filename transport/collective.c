/* SPDX-License-Identifier: BSD-3-Clause */
#include <rte_cycles.h>
#include <rte_malloc.h>

#include "collective.h"

int collectives_create(const struct engine_config *cfg, uint64_t start_tsc, struct collective_rt **out)
{
	struct collective_rt *c;

	*out = NULL;
	if (cfg->n_collectives == 0)
		return 0;
	c = rte_zmalloc("collectives", sizeof(*c) * cfg->n_collectives, RTE_CACHE_LINE_SIZE);
	if (!c)
		return -1;
	*out = c;
	for (unsigned i = 0; i < cfg->n_collectives; i++) {
		const struct cfg_collective *cc = &cfg->collectives[i];
		unsigned ph = cc->phases;

		c[i].cfg = cc;
		for (unsigned f = 0; f < cc->n_flows; f++)
			c[i].n_qps += cfg->groups[cc->flows[f]].count;
		for (unsigned r = 0; r < cc->n_receives; r++)
			c[i].n_rx += cc->receives[r].count;
		c[i].done_count = rte_zmalloc("coll_done", sizeof(uint32_t) * ph, RTE_CACHE_LINE_SIZE);
		c[i].start_tsc = rte_zmalloc("coll_start", sizeof(uint64_t) * ph, RTE_CACHE_LINE_SIZE);
		c[i].end_tsc = rte_zmalloc("coll_end", sizeof(uint64_t) * ph, RTE_CACHE_LINE_SIZE);
		if (!c[i].done_count || !c[i].start_tsc || !c[i].end_tsc)
			return -1;
		c[i].compute_tsc = (uint64_t)(cc->compute_us * 1e-6 * (double)rte_get_tsc_hz());
		c[i].start_tsc[0] = start_tsc + c[i].compute_tsc;
		c[i].released = 1;
	}
	return 0;
}

void collectives_free(struct collective_rt *c, unsigned n)
{
	if (!c)
		return;
	for (unsigned i = 0; i < n; i++) {
		rte_free(c[i].done_count);
		rte_free(c[i].start_tsc);
		rte_free(c[i].end_tsc);
	}
	rte_free(c);
}

/* One event of phase `phase` (a completion or a receipt): the phase's end is the latest event;
 * the event that makes the count whole releases the next phase, which starts at that end. */
static void phase_event(struct collective_rt *c, uint32_t phase, uint64_t now_tsc)
{
	uint64_t end;

	if (phase >= c->cfg->phases)
		return;
	end = __atomic_load_n(&c->end_tsc[phase], __ATOMIC_RELAXED);
	while (end < now_tsc &&
	       !__atomic_compare_exchange_n(&c->end_tsc[phase], &end, now_tsc, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	/* ACQ_REL: the last event sees every other's end time (each was stored before its add) */
	if (__atomic_add_fetch(&c->done_count[phase], 1, __ATOMIC_ACQ_REL) == c->n_qps + c->n_rx &&
	    phase + 1 < c->cfg->phases) {
		c->start_tsc[phase + 1] = __atomic_load_n(&c->end_tsc[phase], __ATOMIC_RELAXED) +
					  (c->compute_tsc && (phase + 1) % c->cfg->iteration_phases == 0 ? c->compute_tsc : 0);
		__atomic_store_n(&c->released, phase + 2, __ATOMIC_RELEASE);
	}
}

void collective_completed(struct collective_rt *c, uint32_t phase, uint64_t now_tsc)
{
	phase_event(c, phase, now_tsc);
}

void collective_received(struct collective_rt *c, uint32_t phase, uint64_t now_tsc)
{
	phase_event(c, phase, now_tsc);
}

unsigned collective_phases_done(const struct collective_rt *c)
{
	unsigned n = 0;

	while (n < c->cfg->phases && __atomic_load_n(&c->done_count[n], __ATOMIC_ACQUIRE) >= c->n_qps + c->n_rx)
		n++;
	return n;
}

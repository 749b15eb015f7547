/* SPDX-License-Identifier: BSD-3-Clause */
#include <rte_cycles.h>
#include <rte_malloc.h>

#include "collective.h"

static uint64_t tsc_of(double s) { return (uint64_t)(s * (double)rte_get_tsc_hz()); }

/* The first time from t at which the collective's window is open (t itself without a window). */
static uint64_t window_next(const struct collective_rt *c, uint64_t t)
{
	uint64_t first = c->base_tsc + c->offset_tsc, k, pos;

	if (!c->period_tsc)
		return t;
	if (t < first)
		return first;
	k = (t - first) / c->period_tsc;
	pos = t - first - k * c->period_tsc;
	return pos < c->active_tsc ? t : first + (k + 1) * c->period_tsc;
}

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
		unsigned ph = cc->phases, slots = cc->repeat ? 2 * ph : ph;

		c[i].cfg = cc;
		for (unsigned f = 0; f < cc->n_flows; f++)
			c[i].n_qps += cfg->groups[cc->flows[f]].count;
		for (unsigned r = 0; r < cc->n_receives; r++)
			c[i].n_rx += cc->receives[r].count;
		c[i].done_count = rte_zmalloc("coll_done", sizeof(uint32_t) * slots, RTE_CACHE_LINE_SIZE);
		c[i].start_tsc = rte_zmalloc("coll_start", sizeof(uint64_t) * ph, RTE_CACHE_LINE_SIZE);
		c[i].end_tsc = rte_zmalloc("coll_end", sizeof(uint64_t) * slots, RTE_CACHE_LINE_SIZE);
		if (!c[i].done_count || !c[i].start_tsc || !c[i].end_tsc)
			return -1;
		c[i].iteration_phases = cc->iteration_phases ? cc->iteration_phases : ph;
		c[i].compute_tsc = tsc_of(cc->compute_us * 1e-6);
		c[i].base_tsc = start_tsc;
		c[i].period_tsc = tsc_of(cc->window_period_s);
		c[i].offset_tsc = tsc_of(cc->window_offset_s);
		c[i].active_tsc = tsc_of(cc->window_active_s);
		c[i].start_tsc[0] = window_next(&c[i], start_tsc + c[i].compute_tsc);
		c[i].cur_start_tsc = c[i].iter_start_tsc = c[i].start_tsc[0];
		c[i].released = 1;
	}
	return 0;
}

void collective_shift_time(struct collective_rt *c, uint64_t delta)
{
	c->start_tsc[0] += delta;
	c->base_tsc += delta;
	c->cur_start_tsc += delta;
	c->iter_start_tsc += delta;
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

/* Global phase g's slot: the first round's own, then one reused slot per phase. */
static inline unsigned slot_of(const struct collective_rt *c, uint32_t g)
{
	return g < c->cfg->phases ? g : c->cfg->phases + g % c->cfg->phases;
}

/* Phase g ended at end: an iteration's last phase adds the iteration to the counts. */
static void count_iteration(struct collective_rt *c, uint32_t g, uint64_t end)
{
	uint64_t t;

	if ((g + 1) % c->iteration_phases)
		return;
	t = end > c->iter_start_tsc ? end - c->iter_start_tsc : 0;
	__atomic_store_n(&c->iter_sum_tsc, c->iter_sum_tsc + t, __ATOMIC_RELAXED);
	if (t > c->iter_max_tsc)
		__atomic_store_n(&c->iter_max_tsc, t, __ATOMIC_RELAXED);
	__atomic_store_n(&c->iterations, c->iterations + 1, __ATOMIC_RELEASE);
}

/* Phase g + 1 may start at `start` (an iteration's first: after the compute step, in the window). */
static void release_next(struct collective_rt *c, uint32_t g, uint64_t end)
{
	uint32_t next = g + 1;
	uint64_t start = end;

	if (next % c->iteration_phases == 0) {
		start = window_next(c, end + c->compute_tsc);
		c->iter_start_tsc = start;
	}
	if (next < c->cfg->phases) {
		c->start_tsc[next] = start;
	} else { /* a later round: its slot's previous use is over (every event of it came before) */
		c->done_count[slot_of(c, next)] = 0;
		c->end_tsc[slot_of(c, next)] = 0;
	}
	__atomic_store_n(&c->cur_start_tsc, start, __ATOMIC_RELAXED);
	__atomic_store_n(&c->released, next + 1, __ATOMIC_RELEASE);
}

/* One event of phase `phase` (a completion or a receipt): the phase's end is the latest event;
 * the event that makes the count whole releases the next phase, which starts at that end. */
static void phase_event(struct collective_rt *c, uint32_t phase, uint64_t now_tsc)
{
	unsigned slot;
	uint64_t end;

	if (phase >= c->cfg->phases && !c->cfg->repeat)
		return;
	slot = slot_of(c, phase);
	end = __atomic_load_n(&c->end_tsc[slot], __ATOMIC_RELAXED);
	while (end < now_tsc &&
	       !__atomic_compare_exchange_n(&c->end_tsc[slot], &end, now_tsc, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	/* ACQ_REL: the last event sees every other's end time (each was stored before its add) */
	if (__atomic_add_fetch(&c->done_count[slot], 1, __ATOMIC_ACQ_REL) != c->n_qps + c->n_rx)
		return;
	end = __atomic_load_n(&c->end_tsc[slot], __ATOMIC_RELAXED);
	count_iteration(c, phase, end);
	if (c->cfg->repeat || phase + 1 < c->cfg->phases)
		release_next(c, phase, end);
}

void collective_completed(struct collective_rt *c, uint32_t phase, uint64_t now_tsc)
{
	phase_event(c, phase, now_tsc);
}

void collective_received(struct collective_rt *c, uint32_t phase, uint64_t now_tsc)
{
	phase_event(c, phase, now_tsc);
}

void collective_iterations(const struct collective_rt *c, uint64_t *n, uint64_t *sum_tsc, uint64_t *max_tsc)
{
	*n = __atomic_load_n(&c->iterations, __ATOMIC_ACQUIRE);
	*sum_tsc = __atomic_load_n(&c->iter_sum_tsc, __ATOMIC_RELAXED);
	*max_tsc = __atomic_load_n(&c->iter_max_tsc, __ATOMIC_RELAXED);
}

unsigned collective_phases_done(const struct collective_rt *c)
{
	unsigned n = 0;

	while (n < c->cfg->phases && __atomic_load_n(&c->done_count[n], __ATOMIC_ACQUIRE) >= c->n_qps + c->n_rx)
		n++;
	return n;
}

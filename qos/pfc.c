/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "pfc.h"

void pfc_pause_init(struct pfc_pause *p, double link_gbps, uint64_t tsc_hz)
{
	memset(p, 0, sizeof(*p));
	p->tsc_hz = tsc_hz;
	/* 512 bit times = 512 / (link_gbps x 1e9) s, in cycles << 32, rounded */
	p->cycles_per_quantum_q32 =
		link_gbps > 0 ? (uint64_t)(512.0 / (link_gbps * 1e9) * (double)tsc_hz * 4294967296.0 + 0.5) : 0;
}

/* A pause that ran out is added to the total once (its start then moves to its end). */
static void fold_expired(struct pfc_pause *p, unsigned prio, uint64_t now)
{
	uint64_t until = p->until[prio], since = p->since[prio];

	if (now >= until && until > since) {
		__atomic_store_n(&p->paused_cycles[prio], p->paused_cycles[prio] + (until - since), __ATOMIC_RELAXED);
		__atomic_store_n(&p->since[prio], until, __ATOMIC_RELAXED);
	}
}

/* One priority's timer reloaded at now with `quanta` (0: resume). The time paused is the union
 * of the pauses: a reload while paused extends (or cuts short) the one in progress. */
static void reload(struct pfc_pause *p, unsigned prio, uint16_t quanta, uint64_t now)
{
	/* (a frame's rate: no concern for a 128-bit multiply) */
	uint64_t next = now + (uint64_t)(((unsigned __int128)quanta * p->cycles_per_quantum_q32 + (1ULL << 31)) >> 32);
	bool paused;

	fold_expired(p, prio, now);
	paused = now < p->until[prio];
	if (quanta == 0) {
		if (paused) { /* resume now: the pause in progress counts up to here */
			__atomic_store_n(&p->paused_cycles[prio], p->paused_cycles[prio] + (now - p->since[prio]),
					 __ATOMIC_RELAXED);
			__atomic_store_n(&p->since[prio], now, __ATOMIC_RELAXED);
			__atomic_store_n(&p->until[prio], now, __ATOMIC_RELEASE);
		}
		return;
	}
	__atomic_store_n(&p->xoff[prio], p->xoff[prio] + 1, __ATOMIC_RELAXED);
	if (!paused)
		__atomic_store_n(&p->since[prio], now, __ATOMIC_RELAXED);
	__atomic_store_n(&p->until[prio], next, __ATOMIC_RELEASE);
}

void pfc_pause_frame(struct pfc_pause *p, uint8_t class_enable, const uint16_t quanta[QOS_PRIORITIES], uint64_t now)
{
	for (unsigned i = 0; i < QOS_PRIORITIES; i++) {
		if (!(class_enable >> i & 1))
			continue;
		__atomic_store_n(&p->frames[i], p->frames[i] + 1, __ATOMIC_RELAXED);
		reload(p, i, quanta[i], now);
	}
}

void pfc_pause_all(struct pfc_pause *p, uint16_t quanta, uint64_t now)
{
	for (unsigned i = 0; i < QOS_PRIORITIES; i++)
		reload(p, i, quanta, now);
}

uint64_t pfc_paused_ns(const struct pfc_pause *p, unsigned prio, uint64_t now)
{
	uint64_t done = __atomic_load_n(&p->paused_cycles[prio], __ATOMIC_RELAXED);
	uint64_t since = __atomic_load_n(&p->since[prio], __ATOMIC_RELAXED);
	uint64_t until = __atomic_load_n(&p->until[prio], __ATOMIC_ACQUIRE);
	uint64_t open = 0;

	/* the pause in progress, or one that ran out and was not yet folded in by a later frame */
	if (until > since)
		open = (now < until ? now : until) - since;
	return (uint64_t)((double)(done + open) * 1e9 / (double)p->tsc_hz);
}

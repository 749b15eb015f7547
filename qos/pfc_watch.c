/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "pfc_watch.h"

#define ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

void pfc_watch_init(struct pfc_watch *w, uint8_t priorities, uint64_t xoff_bytes, uint64_t xon_bytes, uint16_t quanta,
		    double refresh_us, double drain_gbps, double link_gbps, uint64_t tsc_hz)
{
	double pause_s = link_gbps > 0 ? quanta * 512.0 / (link_gbps * 1e9) : 0;

	memset(w, 0, sizeof(*w));
	w->priorities = priorities;
	w->quanta = quanta;
	w->xoff_bytes = xoff_bytes;
	w->xon_bytes = xon_bytes;
	w->tsc_hz = tsc_hz;
	/* refreshed before the peer's timer runs out: by default at half of it */
	w->refresh_cycles = (uint64_t)((refresh_us > 0 ? refresh_us * 1e-6 : pause_s / 2) * (double)tsc_hz);
	w->drain_q32 = (uint64_t)(drain_gbps * 1e9 / 8 / (double)tsc_hz * 4294967296.0 + 0.5);
}

static void drain(const struct pfc_watch *w, struct pfc_watch_prio *p, uint64_t now)
{
	uint64_t gone;

	if (now <= p->last_tsc)
		return;
	gone = (uint64_t)(((unsigned __int128)(now - p->last_tsc) * w->drain_q32) >> 32);
	if (gone == 0 && p->backlog)
		return; /* too soon to drain a byte: keep the time for later */
	ST(p->backlog, p->backlog > gone ? p->backlog - gone : 0);
	p->last_tsc = now;
}

/* The backlog against the thresholds: start or refresh an episode, or end it. */
static void decide(const struct pfc_watch *w, struct pfc_watch_prio *p, unsigned i, uint64_t now, uint8_t *xoff,
		   uint8_t *xon)
{
	if (!p->xoff) {
		if (p->backlog <= w->xoff_bytes)
			return;
		p->xoff = true;
		p->episode_tsc = now;
		p->episode_bytes = 0;
		p->episode_last = now;
		ST(p->episodes, p->episodes + 1);
	} else if (p->backlog <= w->xon_bytes) {
		uint64_t cycles = p->episode_last - p->episode_tsc;
		p->xoff = false;
		ST(p->response_bytes, p->episode_bytes);
		ST(p->response_cycles, cycles);
		if (p->episode_bytes > p->response_bytes_max)
			ST(p->response_bytes_max, p->episode_bytes);
		if (cycles > p->response_cycles_max)
			ST(p->response_cycles_max, cycles);
		ST(p->xon_sent, p->xon_sent + 1);
		*xon |= (uint8_t)(1u << i);
		return;
	} else if (now < p->next_refresh) {
		return;
	}
	ST(p->xoff_sent, p->xoff_sent + 1);
	p->next_refresh = now + w->refresh_cycles;
	*xoff |= (uint8_t)(1u << i);
}

void pfc_watch_arrival(struct pfc_watch *w, unsigned prio, uint32_t bytes, uint64_t now, uint8_t *xoff, uint8_t *xon)
{
	struct pfc_watch_prio *p = &w->prio[prio];

	if (!(w->priorities >> prio & 1))
		return;
	drain(w, p, now);
	if (p->backlog == 0)
		p->last_tsc = now;
	ST(p->backlog, p->backlog + bytes);
	if (p->backlog > p->max_backlog)
		ST(p->max_backlog, p->backlog);
	if (p->xoff) { /* arriving after our XOFF: the peer's response */
		p->episode_bytes += bytes;
		p->episode_last = now;
	}
	decide(w, p, prio, now, xoff, xon);
}

void pfc_watch_tick(struct pfc_watch *w, uint64_t now, uint8_t *xoff, uint8_t *xon)
{
	for (unsigned i = 0; i < QOS_PRIORITIES; i++) {
		struct pfc_watch_prio *p = &w->prio[i];

		if (!(w->priorities >> i & 1) || (!p->xoff && p->backlog == 0))
			continue;
		drain(w, p, now);
		decide(w, p, i, now, xoff, xon);
	}
}

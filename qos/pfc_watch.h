/* SPDX-License-Identifier: BSD-3-Clause
 *
 * PFC generated from RX-side thresholds, and the pause response measured. The receiving port
 * keeps, per watched priority, a backlog: the bytes of that priority received and not yet
 * drained at `drain_gbps` (the speed of a slower consumer, or of a congested egress the engine
 * stands in for). Above Xoff it sends XOFF (the configured quanta) and sends it again every
 * refresh interval while the backlog stays above Xon; at or below Xon it sends XON (quanta 0).
 *
 * Pause response: from the XOFF that starts an episode, the bytes of that priority that still
 * arrive and the time of the last of them — what the peer (a switch or NIC) sends after being
 * told to stop, i.e. the headroom it needs. Kept per episode (the last one) and as maxima.
 *
 * Times are TSC cycles; one writer (the port's RX lcore), readers relaxed. Plain C, no EAL.
 */
#ifndef ROCE_QOS_PFC_WATCH_H
#define ROCE_QOS_PFC_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "classify.h"

struct pfc_watch_prio {
	uint64_t backlog;        /* bytes */
	uint64_t max_backlog;
	uint64_t last_tsc;       /* when the backlog was last drained to */
	bool xoff;               /* the peer was told to stop (an episode is open) */
	uint64_t next_refresh;
	uint64_t episode_tsc;    /* the episode's first XOFF */
	uint64_t episode_bytes;  /* arrivals since then */
	uint64_t episode_last;   /* the last such arrival */
	/* counters (relaxed, read by the main lcore) */
	uint64_t xoff_sent, xon_sent, episodes;
	uint64_t response_bytes, response_cycles;         /* the last completed episode */
	uint64_t response_bytes_max, response_cycles_max;
};

struct pfc_watch {
	uint8_t priorities;      /* bit n: priority n is watched */
	uint16_t quanta;
	uint64_t xoff_bytes, xon_bytes;
	uint64_t refresh_cycles;
	uint64_t drain_q32;      /* bytes drained per TSC cycle << 32 */
	uint64_t tsc_hz;
	struct pfc_watch_prio prio[QOS_PRIORITIES];
};

/* refresh_us 0: half the pause time of `quanta` at link_gbps. */
void pfc_watch_init(struct pfc_watch *w, uint8_t priorities, uint64_t xoff_bytes, uint64_t xon_bytes, uint16_t quanta,
		    double refresh_us, double drain_gbps, double link_gbps, uint64_t tsc_hz);

/* A frame of `bytes` of priority `prio` arrived at now. Sets bits in *xoff / *xon for the
 * priorities whose PFC frame must be sent now. */
void pfc_watch_arrival(struct pfc_watch *w, unsigned prio, uint32_t bytes, uint64_t now, uint8_t *xoff, uint8_t *xon);
/* Draining and refreshing without arrivals (call every poll, or so). */
void pfc_watch_tick(struct pfc_watch *w, uint64_t now, uint8_t *xoff, uint8_t *xon);

#endif

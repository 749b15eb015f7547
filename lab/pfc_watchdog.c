/* SPDX-License-Identifier: BSD-3-Clause */
#include "counters.h"
#include "pfc_watchdog.h"

uint8_t pfc_wd_check(struct pfc_wd *w, const struct pfc_wd_params *p, const struct pfc_pause *pause, uint64_t now)
{
	uint8_t began = 0;

	if (p->action == PFC_WD_OFF)
		return 0;
	for (unsigned k = 0; k < QOS_PRIORITIES; k++) {
		uint64_t xoff = __atomic_load_n(&pause->xoff[k], __ATOMIC_RELAXED);
		bool paused = pfc_paused(pause, k, now);

		if (xoff != w->xoff_seen[k]) {
			w->xoff_seen[k] = xoff;
			w->last_xoff_tsc[k] = now;
		}
		if (!(w->storm >> k & 1)) {
			/* paused without a break since the pause in progress began */
			if (paused && now - __atomic_load_n(&pause->since[k], __ATOMIC_RELAXED) >= p->detect_tsc) {
				w->storm |= (uint8_t)(1u << k);
				w->storm_tsc[k] = now;
				STAT_ADD(w->storms[k], 1);
				began |= (uint8_t)(1u << k);
			}
		} else if (now - w->last_xoff_tsc[k] >= p->restore_tsc && !paused) {
			w->storm &= (uint8_t)~(1u << k);
			STAT_ADD(w->restores[k], 1);
			STAT_ADD(w->storm_cycles[k], now - w->storm_tsc[k]);
		}
	}
	return began;
}

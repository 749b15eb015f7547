/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The PFC watchdog of a lab or fabric switch port (docs/fabric.md, "PFC watchdog and deadlock"),
 * as switch operating systems have it (SONiC's pfcwd, Arista's and Cisco's PFC watchdogs): an
 * egress queue whose priority has been paused without a break for `detect` is in a PFC storm (a
 * peer that never stops pausing, or a deadlock). Its action then applies to the priority's frames
 * on that port until the storm ends, which is when no XOFF has arrived for `restore`:
 *   drop     the queue's frames and whatever joins them are dropped (the storm no longer holds
 *            the buffer, and through it the ingress ports' PFC);
 *   forward  the queue ignores the pause and sends at its link rate.
 * Plain C on the PFC timer state (qos/pfc.h): unit-tested alone (tests/unit/test_switch.c).
 */
#ifndef ROCE_LAB_PFC_WATCHDOG_H
#define ROCE_LAB_PFC_WATCHDOG_H

#include <stdbool.h>
#include <stdint.h>

#include "pfc.h"

enum pfc_wd_action { PFC_WD_OFF, PFC_WD_DROP, PFC_WD_FORWARD };

struct pfc_wd_params {
	enum pfc_wd_action action;
	uint64_t detect_tsc, restore_tsc;
};

struct pfc_wd {
	uint8_t storm;                       /* bit n: priority n is in a storm */
	uint64_t xoff_seen[QOS_PRIORITIES];  /* the pause's XOFF count when last looked at */
	uint64_t last_xoff_tsc[QOS_PRIORITIES]; /* when an XOFF last arrived (as far as seen) */
	uint64_t storm_tsc[QOS_PRIORITIES];  /* when the storm in progress began */
	/* counters (the main lcore reads them) */
	uint64_t storms[QOS_PRIORITIES], restores[QOS_PRIORITIES];
	uint64_t storm_cycles[QOS_PRIORITIES]; /* finished storms' time */
	uint64_t dropped[QOS_PRIORITIES];    /* frames the drop action dropped */
};

/* The watchdog's look at a port's pause state at now (every few hundred microseconds). Returns
 * the priorities whose storm began now (the caller drops their queued frames in drop mode). */
uint8_t pfc_wd_check(struct pfc_wd *w, const struct pfc_wd_params *p, const struct pfc_pause *pause, uint64_t now);

/* Whether the priority's frames on the port are dropped, or sent through its pause. */
static inline bool pfc_wd_drops(const struct pfc_wd *w, const struct pfc_wd_params *p, unsigned prio)
{
	return p->action == PFC_WD_DROP && (w->storm >> prio & 1);
}
static inline bool pfc_wd_ignores_pause(const struct pfc_wd *w, const struct pfc_wd_params *p, unsigned prio)
{
	return p->action == PFC_WD_FORWARD && (w->storm >> prio & 1);
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * PFC honoured: the pause state of one port's transmit side, per priority, as IEEE 802.1Qbb has a
 * receiver keep it. A PFC frame pauses each priority whose class-enable bit is set for its quanta
 * x 512 bit times at the port's link speed (quanta 0: resume at once); a later frame reloads the
 * timer; the timer running out resumes. An 802.3x PAUSE frame does the same for every priority.
 * Times are TSC cycles. Plain C, no EAL.
 *
 * One writer (the lcore that receives the port's MAC-control frames) and any number of readers
 * (the port's TX lcores, the main lcore): `until` is published with release stores and read
 * with acquire loads; the time-paused accounting is the writer's and read relaxed.
 */
#ifndef ROCE_QOS_PFC_H
#define ROCE_QOS_PFC_H

#include <stdbool.h>
#include <stdint.h>

#include "classify.h"

struct pfc_pause {
	uint64_t until[QOS_PRIORITIES];      /* TX of the priority waits while now < until */
	uint64_t since[QOS_PRIORITIES];      /* start of the pause in progress (or the last one) */
	uint64_t paused_cycles[QOS_PRIORITIES]; /* finished pauses, summed */
	uint64_t frames[QOS_PRIORITIES];     /* frames that named the priority (enable bit set) */
	uint64_t xoff[QOS_PRIORITIES];       /* ... with a non-zero time */
	uint64_t cycles_per_quantum_q32;     /* 512 bit times at the link speed, in TSC cycles << 32 */
	uint64_t tsc_hz;
};

void pfc_pause_init(struct pfc_pause *p, double link_gbps, uint64_t tsc_hz);

/* A PFC frame (class_enable, quanta[8]) received at now. */
void pfc_pause_frame(struct pfc_pause *p, uint8_t class_enable, const uint16_t quanta[QOS_PRIORITIES], uint64_t now);
/* An 802.3x PAUSE frame: every priority, one time. */
void pfc_pause_all(struct pfc_pause *p, uint16_t quanta, uint64_t now);

static inline bool pfc_paused(const struct pfc_pause *p, unsigned prio, uint64_t now)
{
	return now < __atomic_load_n(&p->until[prio], __ATOMIC_ACQUIRE);
}

/* The TSC time until which the priority is paused (0 or past: not paused). */
static inline uint64_t pfc_until(const struct pfc_pause *p, unsigned prio)
{
	return __atomic_load_n(&p->until[prio], __ATOMIC_ACQUIRE);
}

/* Time the priority has spent paused up to now, in nanoseconds. */
uint64_t pfc_paused_ns(const struct pfc_pause *p, unsigned prio, uint64_t now);

#endif

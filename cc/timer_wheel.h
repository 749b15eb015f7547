/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A hashed timing wheel (Varghese & Lauck, scheme 6): TW_SLOTS lists, one per tick, a timer in
 * the list of (its tick mod TW_SLOTS). Arming and cancelling are O(1); advancing visits each
 * elapsed tick's list once and fires the timers that are due (a timer more than one turn away
 * stays in its list until its turn comes). Times are nanoseconds on the caller's clock; the
 * wheel never reads a clock itself, so the engine (TSC time) and the simulator (simulated time)
 * drive the same code.
 *
 * Timers are embedded in their owner's state (intrusive lists: no allocation). A timer remembers
 * its exact due time, and the fire callback gets it, so periodic timers keep their phase however
 * late the wheel is advanced. One wheel belongs to one thread.
 */
#ifndef ROCE_CC_TIMER_WHEEL_H
#define ROCE_CC_TIMER_WHEEL_H

#include <stdbool.h>
#include <stdint.h>

#define TW_SLOTS 4096u /* a power of two: 4.096 ms of 1 µs ticks per turn */

struct tw_timer {
	struct tw_timer *next, *prev; /* in its slot's list; next == NULL: not armed */
	uint64_t due_ns;              /* exact due time */
	uint64_t due_tick;            /* due_ns rounded up to a tick */
	uint8_t kind;                 /* the owner's label, for the fire callback */
};

struct timer_wheel {
	uint64_t tick_ns;
	uint64_t next_tick;           /* the first tick not yet processed */
	uint64_t armed;               /* timers in the wheel */
	uint64_t fired;               /* timers fired since tw_init (statistics) */
	/* a bit per slot, set when a timer goes in, cleared when it is found empty: empty ticks are
	 * skipped without reading their list heads (160 KB of them, mostly out of cache) */
	uint64_t occupied[TW_SLOTS / 64];
	struct tw_timer slot[TW_SLOTS]; /* list heads (circular, the head is a sentinel) */
};

/* The wheel starts at now_ns; tick_ns > 0 (the engine uses 1000: 1 µs). */
void tw_init(struct timer_wheel *w, uint64_t tick_ns, uint64_t now_ns);
/* A timer never armed (its owner's state may also be zeroed: all-zero is "not armed"). */
static inline void tw_timer_init(struct tw_timer *t, uint8_t kind)
{
	t->next = t->prev = 0;
	t->kind = kind;
}
static inline bool tw_armed(const struct tw_timer *t) { return t->next != 0; }
/* Arms (or re-arms) t for due_ns; a time already past fires with the next tick processed (at
 * most one tick late, like every timer). With w NULL the timer is armed on no wheel: it only
 * keeps its due time, and its owner checks it itself (the engine runs DCQCN's timers when a QP
 * next sends: docs/cc.md). A timer is used with one wheel or with none, never both. */
void tw_arm(struct timer_wheel *w, struct tw_timer *t, uint64_t due_ns);
/* Disarms t (nothing if it is not armed); w as it was armed with. */
void tw_cancel(struct timer_wheel *w, struct tw_timer *t);

/* Fires every timer due at or before now_ns, in tick order (within a tick, in arming order); the
 * callback gets the timer's exact due time and may arm timers again (a timer re-armed for a time
 * already past fires in the same call). Returns how many fired. */
typedef void (*tw_fire_fn)(struct tw_timer *t, uint64_t due_ns, void *arg);
unsigned tw_advance(struct timer_wheel *w, uint64_t now_ns, tw_fire_fn fire, void *arg);
/* The earliest due time of an armed timer, or UINT64_MAX (the simulator's next event; O(slots)). */
uint64_t tw_next_due(const struct timer_wheel *w);

#endif

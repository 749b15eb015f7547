/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Hashed timing wheel: see timer_wheel.h.
 */
#include "timer_wheel.h"

#include <stddef.h>

#define TW_MASK (TW_SLOTS - 1)

/* ns -> ticks; the engine's 1 µs tick divides by a constant (a multiply) */
static inline uint64_t ns_to_tick(const struct timer_wheel *w, uint64_t ns)
{
	return w->tick_ns == 1000 ? ns / 1000 : ns / w->tick_ns;
}

void tw_init(struct timer_wheel *w, uint64_t tick_ns, uint64_t now_ns)
{
	w->tick_ns = tick_ns ? tick_ns : 1;
	w->next_tick = now_ns / w->tick_ns;
	w->armed = 0;
	w->fired = 0;
	for (unsigned i = 0; i < TW_SLOTS; i++)
		w->slot[i].next = w->slot[i].prev = &w->slot[i];
	for (unsigned i = 0; i < TW_SLOTS / 64; i++)
		w->occupied[i] = 0;
}

static void list_add_tail(struct tw_timer *head, struct tw_timer *t)
{
	t->prev = head->prev;
	t->next = head;
	head->prev->next = t;
	head->prev = t;
}

static void list_del(struct tw_timer *t)
{
	t->prev->next = t->next;
	t->next->prev = t->prev;
	t->next = t->prev = 0;
}

void tw_arm(struct timer_wheel *w, struct tw_timer *t, uint64_t due_ns)
{
	uint64_t tick;

	if (!w) { /* on no wheel: armed is a link to itself */
		t->next = t->prev = t;
		t->due_ns = due_ns;
		t->due_tick = 0;
		return;
	}
	tick = ns_to_tick(w, due_ns + w->tick_ns - 1);
	if (tw_armed(t))
		list_del(t);
	else
		w->armed++;
	/* A time already past goes to the tick being (or next to be) processed. */
	if (tick < w->next_tick)
		tick = w->next_tick;
	t->due_ns = due_ns;
	t->due_tick = tick;
	list_add_tail(&w->slot[tick & TW_MASK], t);
	w->occupied[(tick & TW_MASK) >> 6] |= UINT64_C(1) << (tick & 63);
}

void tw_cancel(struct timer_wheel *w, struct tw_timer *t)
{
	if (!tw_armed(t))
		return;
	if (!w) {
		t->next = t->prev = 0;
		return;
	}
	list_del(t);
	w->armed--;
}

/* Fires the due timers of one tick. The list is detached first, so that a callback arming a
 * timer into this same slot (for this tick or a later turn) does not disturb the walk; the loop
 * repeats while the slot received timers due now. */
static unsigned fire_tick(struct timer_wheel *w, uint64_t tick, tw_fire_fn fire, void *arg)
{
	struct tw_timer *head = &w->slot[tick & TW_MASK];
	struct tw_timer local;
	unsigned n = 0;
	bool again = true;

	while (again && head->next != head) {
		again = false;
		/* move the whole list to `local` */
		local.next = head->next;
		local.prev = head->prev;
		local.next->prev = &local;
		local.prev->next = &local;
		head->next = head->prev = head;
		while (local.next != &local) {
			struct tw_timer *t = local.next;

			list_del(t);
			if (t->due_tick > tick) { /* a later turn of the wheel */
				list_add_tail(head, t);
				continue;
			}
			w->armed--;
			w->fired++;
			n++;
			fire(t, t->due_ns, arg);
			if (tw_armed(t) && t->due_tick <= tick)
				again = true;
		}
		/* timers a callback armed for this tick are in `head` now */
		for (struct tw_timer *t = head->next; t != head && !again; t = t->next)
			if (t->due_tick <= tick)
				again = true;
	}
	return n;
}

/* The first tick in [tick, last] whose slot may hold timers, or last + 1. */
static uint64_t next_occupied(const struct timer_wheel *w, uint64_t tick, uint64_t last)
{
	while (tick <= last) {
		unsigned s = (unsigned)(tick & TW_MASK);
		uint64_t bits = w->occupied[s >> 6] >> (s & 63);

		if (bits)
			return tick + (uint64_t)__builtin_ctzll(bits);
		tick += 64 - (s & 63);
	}
	return tick;
}

unsigned tw_advance(struct timer_wheel *w, uint64_t now_ns, tw_fire_fn fire, void *arg)
{
	uint64_t now_tick = ns_to_tick(w, now_ns);
	unsigned n = 0;

	if (w->armed == 0) {
		if (now_tick + 1 > w->next_tick)
			w->next_tick = now_tick + 1;
		return 0;
	}
	/* A tick is processed once its whole interval lies at or before now: timers due within
	 * (tick-1, tick] ticks' time fire when now reaches tick·tick_ns. */
	while (w->next_tick <= now_tick) {
		uint64_t tick = next_occupied(w, w->next_tick, now_tick);
		struct tw_timer *head;

		if (tick > now_tick) { /* nothing in the rest */
			w->next_tick = now_tick + 1;
			break;
		}
		w->next_tick = tick; /* what a callback arms for a time already past goes here */
		head = &w->slot[tick & TW_MASK];
		if (head->next != head)
			n += fire_tick(w, tick, fire, arg);
		if (head->next == head) /* (a timer of a later turn keeps the bit) */
			w->occupied[(tick & TW_MASK) >> 6] &= ~(UINT64_C(1) << (tick & 63));
		w->next_tick = tick + 1;
		if (w->armed == 0) {
			w->next_tick = now_tick + 1;
			break;
		}
	}
	return n;
}

uint64_t tw_next_due(const struct timer_wheel *w)
{
	uint64_t best = UINT64_MAX;

	if (w->armed == 0)
		return best;
	for (unsigned i = 0; i < TW_SLOTS; i++)
		for (const struct tw_timer *t = w->slot[i].next; t != &w->slot[i]; t = t->next)
			if (t->due_ns < best)
				best = t->due_ns;
	return best;
}

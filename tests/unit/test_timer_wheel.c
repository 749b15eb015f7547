/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Unit tests of the hashed timing wheel (cc/timer_wheel.c), without EAL: timers fire at or after
 * their due time and at most one tick late, in due order across ticks, timers several turns away
 * wait for their turn, cancelling and re-arming, times in the past, periodic timers keeping their
 * phase when the wheel is advanced late, and a random workload against a naive reference.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "testlib.h"
#include "timer_wheel.h"

#define N_RAND 5000

struct rec {
	uint64_t when[64];   /* now_ns of the advance that fired it */
	uint64_t due[64];
	int kinds[64];
	unsigned n;
	uint64_t now;
};

static void record(struct tw_timer *t, uint64_t due_ns, void *arg)
{
	struct rec *r = arg;

	if (r->n < 64) {
		r->when[r->n] = r->now;
		r->due[r->n] = due_ns;
		r->kinds[r->n] = t->kind;
	}
	r->n++;
}

static unsigned advance(struct timer_wheel *w, struct rec *r, uint64_t now)
{
	r->now = now;
	return tw_advance(w, now, record, r);
}

static struct timer_wheel w; /* 64 KB: not on the stack */

static void test_fires_when_due(void)
{
	struct tw_timer a, b;
	struct rec r = { 0 };

	tw_init(&w, 1000, 5000);
	tw_timer_init(&a, 1);
	tw_timer_init(&b, 2);
	CHECK(!tw_armed(&a));
	tw_arm(&w, &a, 7500); /* tick 8 */
	tw_arm(&w, &b, 7000); /* tick 7 */
	CHECK(tw_armed(&a));
	CHECK_EQ(w.armed, 2);
	CHECK_EQ(advance(&w, &r, 6999), 0);
	CHECK_EQ(advance(&w, &r, 7000), 1);
	CHECK_EQ(r.kinds[0], 2);
	CHECK_EQ(r.due[0], 7000);
	CHECK_EQ(advance(&w, &r, 7999), 0); /* 7500 is due, but its tick ends at 8000 */
	CHECK_EQ(advance(&w, &r, 8000), 1);
	CHECK_EQ(r.kinds[1], 1);
	CHECK_EQ(r.due[1], 7500); /* the exact due time, not the tick's */
	CHECK(!tw_armed(&a));
	CHECK_EQ(w.armed, 0);
	CHECK_EQ(w.fired, 2);
}

static void test_order_across_ticks(void)
{
	struct tw_timer t[5];
	struct rec r = { 0 };
	uint64_t dues[5] = { 9000, 3000, 7000, 3000, 5000 };

	tw_init(&w, 1000, 0);
	for (int i = 0; i < 5; i++) {
		tw_timer_init(&t[i], (uint8_t)i);
		tw_arm(&w, &t[i], dues[i]);
	}
	CHECK_EQ(advance(&w, &r, 100000), 5);
	/* tick order; within tick 3, arming order (1 before 3) */
	CHECK_EQ(r.kinds[0], 1);
	CHECK_EQ(r.kinds[1], 3);
	CHECK_EQ(r.kinds[2], 4);
	CHECK_EQ(r.kinds[3], 2);
	CHECK_EQ(r.kinds[4], 0);
}

static void test_several_turns_away(void)
{
	struct tw_timer far, near;
	struct rec r = { 0 };
	uint64_t far_due = 3ull * TW_SLOTS * 1000 + 1000; /* same slot as near, three turns later */

	tw_init(&w, 1000, 0);
	tw_timer_init(&far, 1);
	tw_timer_init(&near, 2);
	tw_arm(&w, &far, far_due);
	tw_arm(&w, &near, 1000);
	CHECK_EQ(advance(&w, &r, 1000), 1);
	CHECK_EQ(r.kinds[0], 2);
	CHECK_EQ(advance(&w, &r, far_due - 1), 0);
	CHECK(tw_armed(&far));
	CHECK_EQ(advance(&w, &r, far_due), 1);
	CHECK_EQ(r.due[1], far_due);
	CHECK_EQ(tw_next_due(&w), UINT64_MAX);
}

static void test_cancel_and_rearm(void)
{
	struct tw_timer a;
	struct rec r = { 0 };

	tw_init(&w, 1000, 0);
	tw_timer_init(&a, 1);
	tw_arm(&w, &a, 4000);
	tw_cancel(&w, &a);
	CHECK(!tw_armed(&a));
	tw_cancel(&w, &a); /* twice: nothing */
	CHECK_EQ(w.armed, 0);
	CHECK_EQ(advance(&w, &r, 10000), 0);
	tw_arm(&w, &a, 20000);
	tw_arm(&w, &a, 15000); /* moves it */
	CHECK_EQ(w.armed, 1);
	CHECK_EQ(tw_next_due(&w), 15000);
	CHECK_EQ(advance(&w, &r, 15000), 1);
	CHECK_EQ(advance(&w, &r, 30000), 0);
}

static void test_past_due_fires_next_advance(void)
{
	struct tw_timer a;
	struct rec r = { 0 };

	tw_init(&w, 1000, 50000);
	advance(&w, &r, 60000);
	tw_timer_init(&a, 1);
	tw_arm(&w, &a, 10000); /* long past */
	CHECK_EQ(advance(&w, &r, 60500), 0); /* tick 60 was processed already */
	CHECK_EQ(advance(&w, &r, 61000), 1); /* with tick 61 */
	CHECK_EQ(r.due[0], 10000);
}

/* A periodic timer re-arms itself at due + period: advanced late, it fires once per period it
 * missed, with the exact due times, in one call. */
struct periodic {
	struct tw_timer t;
	struct timer_wheel *w;
	uint64_t period;
	uint64_t dues[16];
	unsigned n;
};

static void periodic_fire(struct tw_timer *t, uint64_t due_ns, void *arg)
{
	struct periodic *p = arg;

	(void)t;
	if (p->n < 16)
		p->dues[p->n] = due_ns;
	p->n++;
	tw_arm(p->w, &p->t, due_ns + p->period);
}

static void test_periodic_keeps_phase(void)
{
	struct periodic p = { .w = &w, .period = 4000 };

	tw_init(&w, 1000, 0);
	tw_timer_init(&p.t, 1);
	tw_arm(&w, &p.t, 4000);
	CHECK_EQ(tw_advance(&w, 17500, periodic_fire, &p), 4); /* 4000 8000 12000 16000 */
	CHECK_EQ(p.dues[0], 4000);
	CHECK_EQ(p.dues[3], 16000);
	CHECK_EQ(p.t.due_ns, 20000);
	/* sub-tick period: re-armed into the tick being processed, still fired in the same call */
	p.period = 300;
	p.n = 0;
	tw_arm(&w, &p.t, 18000);
	CHECK_EQ(tw_advance(&w, 19000, periodic_fire, &p), 4); /* 18000 18300 18600 18900 */
	CHECK_EQ(p.dues[3], 18900);
}

/* Random arms, cancels and advances against a list of (due, armed) checked by brute force: each
 * timer fires exactly once, never before its due time, and no later than the first advance
 * whose tick covers it. */
static struct tw_timer rt[N_RAND];
static uint64_t rdue[N_RAND], rfired_at[N_RAND];
static int rstate[N_RAND]; /* 0 idle, 1 armed, 2 fired, 3 cancelled */
static uint64_t rnow;

static void rand_fire(struct tw_timer *t, uint64_t due_ns, void *arg)
{
	size_t i = (size_t)(t - rt);

	(void)arg;
	if (rstate[i] != 1 || due_ns != rdue[i])
		rstate[i] = 9; /* wrong */
	else
		rstate[i] = 2;
	rfired_at[i] = rnow;
}

static void test_random_against_reference(void)
{
	uint64_t now = 0;
	unsigned bad = 0, late = 0, armed = 0;

	tw_init(&w, 1000, 0);
	for (int i = 0; i < N_RAND; i++) {
		tw_timer_init(&rt[i], 0);
		rstate[i] = 0;
	}
	for (int step = 0; step < 40000; step++) {
		unsigned i = (unsigned)(test_rand() % N_RAND);
		uint64_t op = test_rand() % 10;

		if (op < 5 && rstate[i] != 1) {
			/* up to ~3 turns ahead */
			rdue[i] = now + test_rand() % (3ull * TW_SLOTS * 1000);
			tw_arm(&w, &rt[i], rdue[i]);
			rstate[i] = 1;
		} else if (op < 6 && rstate[i] == 1) {
			tw_cancel(&w, &rt[i]);
			rstate[i] = 3;
		} else {
			now += test_rand() % 5000;
			rnow = now;
			tw_advance(&w, now, rand_fire, NULL);
			for (int k = 0; k < N_RAND; k++) {
				if (rstate[k] == 1 && (rdue[k] + 999) / 1000 * 1000 <= now)
					late++;   /* its tick passed: it should have fired */
				if (rstate[k] == 2 && rfired_at[k] < rdue[k])
					bad++;    /* fired early */
			}
		}
	}
	for (int k = 0; k < N_RAND; k++) {
		if (rstate[k] == 9)
			bad++;
		if (rstate[k] == 1)
			armed++;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(late, 0);
	CHECK_EQ(w.armed, armed);
}

/* Empty ticks are skipped (the occupancy bits): a callback arming a time already past still
 * fires in the same advance, from the tick being processed, not from a skipped one. */
static struct tw_timer late_b;
static unsigned late_n;

static void arm_past(struct tw_timer *t, uint64_t due_ns, void *arg)
{
	(void)due_ns;
	(void)arg;
	late_n++;
	if (t != &late_b)
		tw_arm(&w, &late_b, 5000);
}

static void test_skipped_ticks_past_arm(void)
{
	struct tw_timer a;

	tw_init(&w, 1000, 0);
	tw_timer_init(&a, 1);
	tw_timer_init(&late_b, 2);
	late_n = 0;
	tw_arm(&w, &a, 100000);
	CHECK_EQ(tw_advance(&w, 200000, arm_past, NULL), 2);
	CHECK_EQ(late_n, 2);
	CHECK_EQ(w.armed, 0);
	CHECK_EQ(w.next_tick, 201);
	/* bits of cancelled timers are cleared when their tick comes, nothing fires */
	tw_arm(&w, &a, 300000);
	tw_cancel(&w, &a);
	CHECK_EQ(tw_advance(&w, 400000, arm_past, NULL), 0);
	tw_arm(&w, &a, 450000);
	CHECK_EQ(tw_advance(&w, 449999, arm_past, NULL), 0);
	CHECK_EQ(tw_advance(&w, 450000, arm_past, NULL), 2);
}

/* A timer on no wheel keeps its due time and reads as armed until cancelled (no wheel touched). */
static void test_no_wheel(void)
{
	struct tw_timer t;

	tw_init(&w, 1000, 0);
	tw_timer_init(&t, 3);
	tw_arm(NULL, &t, 12345);
	CHECK(tw_armed(&t));
	CHECK_EQ(t.due_ns, 12345);
	tw_arm(NULL, &t, 999);
	CHECK(tw_armed(&t));
	CHECK_EQ(t.due_ns, 999);
	CHECK_EQ(t.kind, 3);
	CHECK_EQ(w.armed, 0);
	tw_cancel(NULL, &t);
	CHECK(!tw_armed(&t));
	tw_cancel(NULL, &t);
	CHECK(!tw_armed(&t));
}

int main(void)
{
	RUN(test_fires_when_due);
	RUN(test_order_across_ticks);
	RUN(test_several_turns_away);
	RUN(test_cancel_and_rearm);
	RUN(test_past_due_fires_next_advance);
	RUN(test_periodic_keeps_phase);
	RUN(test_random_against_reference);
	RUN(test_skipped_ticks_past_arm);
	RUN(test_no_wheel);
	return testlib_finish("test_timer_wheel");
}

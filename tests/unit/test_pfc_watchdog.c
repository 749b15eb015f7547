/* SPDX-License-Identifier: BSD-3-Clause
 *
 * lab/pfc_watchdog.c against hand-worked timelines of one port's PFC timers (qos/pfc.c), with a
 * 1 GHz TSC and a 1 Gb/s link: one quantum is 512 ns, 65535 quanta 33.55 ms. Detection 10 ms,
 * restoration 20 ms.
 */
#include "pfc.h"
#include "pfc_watchdog.h"
#include "testlib.h"

#define MS 1000000ull /* cycles */

static const struct pfc_wd_params drop = {.action = PFC_WD_DROP, .detect_tsc = 10 * MS, .restore_tsc = 20 * MS};
static const uint16_t xoff[8] = {[3] = 65535}, xon[8] = {0};

static void setup(struct pfc_pause *p, struct pfc_wd *w)
{
	pfc_pause_init(p, 1.0, 1000000000ull);
	*w = (struct pfc_wd){0};
}

static void test_storm_after_detect_time_without_a_break(void)
{
	struct pfc_pause p;
	struct pfc_wd w;

	setup(&p, &w);
	pfc_pause_frame(&p, 1u << 3, xoff, 1 * MS);          /* paused from 1 ms */
	CHECK_EQ(pfc_wd_check(&w, &drop, &p, 10 * MS), 0);   /* 9 ms paused */
	pfc_pause_frame(&p, 1u << 3, xoff, 10 * MS);         /* refreshed: the pause goes on, no break */
	CHECK_EQ(pfc_wd_check(&w, &drop, &p, 11 * MS), 1u << 3);
	CHECK(pfc_wd_drops(&w, &drop, 3) && !pfc_wd_drops(&w, &drop, 2) && !pfc_wd_ignores_pause(&w, &drop, 3));
	CHECK_EQ(w.storms[3], 1);
	CHECK_EQ(pfc_wd_check(&w, &drop, &p, 12 * MS), 0);   /* began once */
}

static void test_a_break_restarts_detection(void)
{
	struct pfc_pause p;
	struct pfc_wd w;

	setup(&p, &w);
	pfc_pause_frame(&p, 1u << 3, xoff, 1 * MS);
	pfc_pause_frame(&p, 1u << 3, xon, 8 * MS);           /* XON: a break */
	pfc_pause_frame(&p, 1u << 3, xoff, 9 * MS);          /* paused again from 9 ms */
	CHECK_EQ(pfc_wd_check(&w, &drop, &p, 18 * MS), 0);   /* 9 ms without a break */
	CHECK_EQ(pfc_wd_check(&w, &drop, &p, 19 * MS), 1u << 3);
}

static void test_restored_after_quiet_time(void)
{
	struct pfc_pause p;
	struct pfc_wd w;

	setup(&p, &w);
	pfc_pause_frame(&p, 1u << 3, xoff, 0);
	CHECK_EQ(pfc_wd_check(&w, &drop, &p, 10 * MS), 1u << 3);
	pfc_pause_frame(&p, 1u << 3, xoff, 15 * MS);         /* the storm goes on: last XOFF at 15 ms */
	CHECK_EQ(pfc_wd_check(&w, &drop, &p, 16 * MS), 0);
	/* quiet from 16 ms as seen (the watchdog notes the XOFF when it looks), and the pause of
	 * 33.55 ms from 15 ms runs out at 48.55 ms: restored at the first look after both */
	pfc_wd_check(&w, &drop, &p, 40 * MS);
	CHECK(w.storm >> 3 & 1);                              /* quiet 24 ms, but still paused */
	pfc_wd_check(&w, &drop, &p, 49 * MS);
	CHECK(!(w.storm >> 3 & 1));
	CHECK_EQ(w.restores[3], 1);
	CHECK_EQ(w.storm_cycles[3], 39 * MS);
}

static void test_forward_ignores_the_pause_and_off_does_nothing(void)
{
	const struct pfc_wd_params fwd = {.action = PFC_WD_FORWARD, .detect_tsc = 10 * MS, .restore_tsc = 20 * MS};
	const struct pfc_wd_params off = {.action = PFC_WD_OFF, .detect_tsc = 10 * MS, .restore_tsc = 20 * MS};
	struct pfc_pause p;
	struct pfc_wd w, w_off;

	setup(&p, &w);
	w_off = w;
	pfc_pause_frame(&p, 1u << 3, xoff, 0);
	CHECK_EQ(pfc_wd_check(&w, &fwd, &p, 10 * MS), 1u << 3);
	CHECK(pfc_wd_ignores_pause(&w, &fwd, 3) && !pfc_wd_drops(&w, &fwd, 3));
	CHECK_EQ(pfc_wd_check(&w_off, &off, &p, 30 * MS), 0);
	CHECK(!pfc_wd_drops(&w_off, &off, 3) && !pfc_wd_ignores_pause(&w_off, &off, 3));
}

int main(void)
{
	RUN(test_storm_after_detect_time_without_a_break);
	RUN(test_a_break_restarts_detection);
	RUN(test_restored_after_quiet_time);
	RUN(test_forward_ignores_the_pause_and_off_does_nothing);
	return testlib_finish("test_pfc_watchdog");
}

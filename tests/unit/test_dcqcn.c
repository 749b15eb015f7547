/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Unit tests of the DCQCN reaction point (cc/dcqcn.c), both profiles, without EAL. Time runs on a
 * real timer wheel (1 µs ticks) whose callback hands the QP's timers to dcqcn_on_timer, as the
 * engine does. Every expected rate and α is worked out by hand from the formulas in dcqcn.h (the
 * arithmetic is in the comment next to it); the lazy NVIDIA α is also compared with a naive
 * period-by-period model on random CNP sequences.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "dcqcn.h"
#include "testlib.h"
#include "timer_wheel.h"

#define US 1000ull                     /* ns */
#define G100 100000000ull              /* 100 Gb/s in kb/s */

static struct timer_wheel wheel;
static struct dcqcn_params P;
static struct dcqcn_qp Q;
static unsigned rate_changes;           /* dcqcn_on_timer returned true */

static void fire(struct tw_timer *t, uint64_t due_ns, void *arg)
{
	(void)arg;
	if (dcqcn_on_timer(dcqcn_qp_of_timer(t), &wheel, t, due_ns))
		rate_changes++;
}

static void run_to_us(double us)
{
	tw_advance(&wheel, (uint64_t)(us * US), fire, NULL);
}

/* A CNP at `us`, the wheel advanced there first (as the engine's loop does) */
static bool cnp_at(double us)
{
	run_to_us(us);
	return dcqcn_on_cnp(&Q, &wheel, (uint64_t)(us * US));
}

static bool bytes_at(double us, uint32_t bytes)
{
	run_to_us(us);
	return dcqcn_on_bytes(&Q, &wheel, bytes, (uint64_t)(us * US));
}

static void setup(enum dcqcn_profile profile)
{
	dcqcn_params_default(&P, profile);
	tw_init(&wheel, 1000, 0);
	rate_changes = 0;
}

static void start(uint64_t line_kbps)
{
	dcqcn_init(&Q, &P, line_kbps, 0);
}

/* NVIDIA defaults, 100 Gb/s, first CNP at 0 and a second at 1 µs: the first cut at 4 µs.
 * α: 1023 at 0; at 1 µs one period without CNP (the first CNP marks nothing):
 * 1019·1023/1024 = 1042437/1024 = 1018; the period [1, 2) has the CNP; at 4 µs three periods:
 * CNP 1019·1018/1024 + 5 = 1013 + 5 = 1018, then 1019·1018/1024 = 1013, 1019·1013/1024 = 1008.
 * Cut: R_C·α >> 11 = 100000000·1008/2048 = 49218750 < R_C·50/100 = 50000000, so
 * R_C = 100000000 − 49218750 = 50781250; R_T stays 100000000 (no clamp: no increase yet). */
#define CUT1_RC 50781250ull
static void nvidia_first_cut(void)
{
	cnp_at(0);
	cnp_at(1);
	run_to_us(4);
}

/* ---- parameters ---- */

static void test_defaults(void)
{
	setup(DCQCN_NVIDIA);
	CHECK_EQ(P.profile, DCQCN_NVIDIA);
	CHECK_EQ(P.dce_tcp_g, 1019);
	CHECK_EQ(P.dce_tcp_rtt, 1);
	CHECK_EQ(P.initial_alpha_value, 1023);
	CHECK_EQ(P.rate_to_set_on_first_cnp, 0);
	CHECK_EQ(P.rpg_min_dec_fac, 50);
	CHECK_EQ(P.rpg_min_rate, 1);
	CHECK_EQ(P.rpg_gd, 11);
	CHECK_EQ(P.rate_reduce_monitor_period, 4);
	CHECK(!P.clamp_tgt_rate);
	CHECK(P.clamp_tgt_rate_after_time_inc);
	CHECK_EQ(P.rpg_time_reset, 300);
	CHECK_EQ(P.rpg_byte_reset, 32767);
	CHECK_EQ(P.rpg_threshold, 1);
	CHECK_EQ(P.rpg_max_rate, 0);
	CHECK_EQ(P.rpg_ai_rate, 5);
	CHECK_EQ(P.rpg_hai_rate, 50);
	CHECK(dcqcn_params_check(&P, NULL) == NULL);
	setup(DCQCN_PAPER);
	CHECK_EQ(P.profile, DCQCN_PAPER);
	CHECK(P.g == 1.0 / 256);
	CHECK_EQ(P.k_us, 55);
	CHECK_EQ(P.t_us, 55);
	CHECK_EQ(P.b_bytes, 10000000);
	CHECK_EQ(P.f, 5);
	CHECK_EQ(P.r_ai_mbps, 40);
	CHECK_EQ(P.r_hai_mbps, 200);
	CHECK_EQ(P.min_rate_mbps, 100);
	CHECK(P.initial_alpha == 1.0);
	CHECK(!P.alpha_before_cut);
	CHECK(P.ns3_stages);
	CHECK(!P.hyper_linear);
	CHECK(dcqcn_params_check(&P, NULL) == NULL);
}

/* One bad setting: the check names it and says what is allowed. */
static void expect_bad(const char *name, const char *allowed)
{
	const char *why = NULL, *bad = dcqcn_params_check(&P, &why);

	CHECK(bad && strcmp(bad, name) == 0);
	CHECK(why && strcmp(why, allowed) == 0);
	if (!bad || strcmp(bad, name))
		printf("  expected %s, got %s\n", name, bad ? bad : "NULL");
}

static void test_params_check(void)
{
#define NV(field, value, name, allowed) \
	(dcqcn_params_default(&P, DCQCN_NVIDIA), P.field = (value), expect_bad(name, allowed))
#define PA(field, value, name, allowed) \
	(dcqcn_params_default(&P, DCQCN_PAPER), P.field = (value), expect_bad(name, allowed))
	NV(dce_tcp_g, 1024, "dce_tcp_g", "0..1023");
	NV(dce_tcp_rtt, 0, "dce_tcp_rtt", "1..131071");
	NV(dce_tcp_rtt, 131072, "dce_tcp_rtt", "1..131071");
	NV(initial_alpha_value, 1024, "initial_alpha_value", "0..1023");
	NV(rpg_min_dec_fac, 101, "rpg_min_dec_fac", "0..100");
	NV(rpg_gd, 0, "rpg_gd", "1..31");
	NV(rpg_gd, 32, "rpg_gd", "1..31");
	NV(rate_reduce_monitor_period, 0, "rate_reduce_monitor_period", ">= 1");
	NV(rpg_time_reset, 0, "rpg_time_reset", ">= 1");
	NV(rpg_threshold, 0, "rpg_threshold", ">= 1");
	NV(profile, (enum dcqcn_profile)7, "profile", "nvidia or paper");
	dcqcn_params_default(&P, DCQCN_NVIDIA);
	P.rpg_max_rate = 100;
	P.rpg_min_rate = 200;
	expect_bad("rpg_min_rate", "<= rpg_max_rate (when rpg_max_rate is set)");
	PA(g, 0, "g", "(0, 1]");
	PA(g, 1.5, "g", "(0, 1]");
	PA(g, NAN, "g", "(0, 1]");
	PA(k_us, 0, "k_us", ">= 1");
	PA(t_us, 0, "t_us", ">= 1");
	PA(f, 0, "f", ">= 1");
	PA(initial_alpha, -0.1, "initial_alpha", "[0, 1]");
	PA(initial_alpha, 1.1, "initial_alpha", "[0, 1]");
	PA(hyper_linear, true, "hyper_linear", "false with ns3_stages (whose hyper step grows already); "
					       "set ns3_stages = false for R_HAI·(min(T, BC) − F)");
#undef NV
#undef PA
	/* the other profile's settings are not looked at; g = 1 and α 0 or 1 are allowed */
	dcqcn_params_default(&P, DCQCN_PAPER);
	P.rpg_gd = 0;
	P.g = 1;
	P.initial_alpha = 0;
	CHECK(dcqcn_params_check(&P, NULL) == NULL);
	P.ns3_stages = false; /* the kept forms: counts before the event, constant or linear step */
	P.hyper_linear = true;
	CHECK(dcqcn_params_check(&P, NULL) == NULL);
	dcqcn_params_default(&P, DCQCN_NVIDIA);
	P.hyper_linear = true; /* a paper setting: not looked at */
	P.f = 0;
	P.dce_tcp_g = 0;
	P.rpg_min_dec_fac = 100;
	CHECK(dcqcn_params_check(&P, NULL) == NULL);
}

/* ---- NVIDIA profile ---- */

static void test_init(void)
{
	setup(DCQCN_NVIDIA);
	start(G100);
	CHECK_EQ(Q.rc_kbps, G100);
	CHECK_EQ(Q.rt_kbps, G100);
	CHECK_EQ(dcqcn_max_kbps(&Q), G100);
	CHECK_EQ(Q.alpha, 1023);
	CHECK(!Q.seen_cnp);
	CHECK_EQ(wheel.armed, 0);
	/* no byte events before congestion */
	CHECK(!bytes_at(1, 32767 * 64 * 3));
	CHECK_EQ(Q.c.byte_events, 0);
	CHECK(fabs(dcqcn_alpha_fraction(&Q, 512) - 0.5) < 1e-12);
	/* rpg_max_rate 40000 Mb/s below the 100 Gb/s line: the QP starts at 40000000 kb/s */
	P.rpg_max_rate = 40000;
	start(G100);
	CHECK_EQ(dcqcn_max_kbps(&Q), 40000000);
	CHECK_EQ(Q.rc_kbps, 40000000);
	CHECK_EQ(Q.rt_kbps, 40000000);
}

/* First CNP, rate_to_set_on_first_cnp = 0: α = initial_alpha_value, the rate stays, nothing is
 * armed (no cut at the end of its period: the first CNP marks no period). */
static void test_first_cnp_keeps_rate(void)
{
	setup(DCQCN_NVIDIA);
	start(G100);
	CHECK(!cnp_at(10));
	CHECK(Q.seen_cnp);
	CHECK_EQ(Q.alpha, 1023);
	CHECK_EQ(Q.rc_kbps, G100);
	CHECK_EQ(Q.rt_kbps, G100);
	CHECK_EQ(wheel.armed, 0);
	run_to_us(1000);
	CHECK_EQ(Q.c.cuts, 0);
	CHECK_EQ(Q.rc_kbps, G100);
	/* α decays from the first CNP on: 10.999 µs still 1023; 13 µs three periods:
	 * 1019·1023/1024 = 1018, 1019·1018/1024 = 1013, 1019·1013/1024 = 1008 */
	setup(DCQCN_NVIDIA);
	start(G100);
	cnp_at(10);
	CHECK_EQ(dcqcn_alpha(&Q, 10999), 1023);
	CHECK_EQ(dcqcn_alpha(&Q, 11000), 1018);
	CHECK_EQ(dcqcn_alpha(&Q, 13000), 1008);
	CHECK_EQ(Q.c.cnps, 1);
}

/* First CNP, rate_to_set_on_first_cnp = 40000 Mb/s: R_C = R_T = 40000000 kb/s, the increase
 * timer starts (rpg_time_reset 300 µs). */
static void test_first_cnp_sets_rate(void)
{
	setup(DCQCN_NVIDIA);
	P.rate_to_set_on_first_cnp = 40000;
	start(G100);
	CHECK(cnp_at(10));
	CHECK_EQ(Q.rc_kbps, 40000000);
	CHECK_EQ(Q.rt_kbps, 40000000);
	CHECK_EQ(Q.alpha, 1023);
	CHECK(tw_armed(&Q.t_inc));
	CHECK_EQ(Q.t_inc.due_ns, 310 * US);
	CHECK(!tw_armed(&Q.t_dec));
	/* 310 µs: T = 0 < threshold 1: fast recovery, R_C = (40000000 + 40000000)/2 = 40000000 */
	run_to_us(310);
	CHECK_EQ(Q.stage, DCQCN_STAGE_FAST);
	CHECK_EQ(Q.rc_kbps, 40000000);
	/* 610 µs: T = 1 >= 1: additive, R_T = 40000000 + 5000 = 40005000,
	 * R_C = 40005000 − (40005000 − 40000000)/2 = 40002500 */
	run_to_us(610);
	CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
	CHECK_EQ(Q.rt_kbps, 40005000);
	CHECK_EQ(Q.rc_kbps, 40002500);
	/* above the line: min(200000000, 100000000) kb/s, at the maximum: nothing armed */
	setup(DCQCN_NVIDIA);
	P.rate_to_set_on_first_cnp = 200000;
	start(G100);
	CHECK(!cnp_at(10));
	CHECK_EQ(Q.rc_kbps, G100);
	CHECK_EQ(wheel.armed, 0);
}

/* A CNP after the first: one cut when its decrease period ends (periods from the first CNP). */
static void test_cut_at_period_end(void)
{
	setup(DCQCN_NVIDIA);
	start(G100);
	cnp_at(10);
	/* 11.5 µs: period [10, 14) of rate_reduce_monitor_period 4 µs; α at 11.5: one period
	 * without CNP, 1019·1023/1024 = 1018 */
	CHECK(!cnp_at(11.5));
	CHECK(tw_armed(&Q.t_dec));
	CHECK_EQ(Q.t_dec.due_ns, 14 * US);
	CHECK_EQ(Q.alpha, 1018);
	run_to_us(13.999);
	CHECK_EQ(Q.c.cuts, 0);
	/* 14 µs: α over [11, 14): CNP period 1019·1018/1024 + 5 = 1013 + 5 = 1018, then decay
	 * 1019·1018/1024 = 1013, 1019·1013/1024 = 1008. Cut 100000000·1008 >> 11 = 49218750
	 * (< 50000000 of min_dec_fac), R_C = 50781250, R_T = 100000000 (no clamp). */
	run_to_us(14);
	CHECK_EQ(Q.c.cuts, 1);
	CHECK_EQ(rate_changes, 1);
	CHECK_EQ(Q.alpha, 1008);
	CHECK_EQ(Q.rc_kbps, CUT1_RC);
	CHECK_EQ(Q.rt_kbps, G100);
	CHECK(!Q.cnp_in_dec_period);
	CHECK(!tw_armed(&Q.t_dec));
	CHECK(tw_armed(&Q.t_inc));
	CHECK_EQ(Q.t_inc.due_ns, 314 * US); /* 14 + rpg_time_reset 300 */
}

/* Several CNPs in a period make one cut; a CNP at the boundary belongs to the next period, and
 * is handled the same when it arrives before the wheel reached the boundary. */
static void test_one_cut_per_period(void)
{
	for (int late_wheel = 0; late_wheel < 2; late_wheel++) {
		setup(DCQCN_NVIDIA);
		start(G100);
		cnp_at(10);
		cnp_at(11.5);
		cnp_at(12);
		cnp_at(13.9);
		if (late_wheel) /* the wheel still at 13.9 µs: the CNP runs the cut due at 14 first */
			dcqcn_on_cnp(&Q, &wheel, 14 * US);
		else
			cnp_at(14);
		/* every α period in [11, 14) saw a CNP: 1018 -> 1019·1018/1024 + 5 = 1013 + 5 = 1018
		 * three times; cut 100000000·1018 >> 11 = 101800000000/2048 = 49707031,
		 * R_C = 100000000 − 49707031 = 50292969 */
		CHECK_EQ(Q.c.cuts, 1);
		CHECK_EQ(Q.rc_kbps, 50292969);
		CHECK_EQ(Q.c.cnps, 5);
		CHECK(tw_armed(&Q.t_dec));
		CHECK_EQ(Q.t_dec.due_ns, 18 * US);
		/* 18 µs: α from 1018 at 14: [14, 15) had the CNP: 1019·1018/1024 + 5 = 1018; then
		 * 1013, 1008, 1019·1008/1024 = 1027152/1024 = 1003. Cut 50292969·1003 >> 11 =
		 * 50443847907/2048 = 24630785 (< 25146484 of min_dec_fac), R_C = 25662184 */
		run_to_us(18);
		CHECK_EQ(Q.c.cuts, 2);
		CHECK_EQ(Q.alpha, 1003);
		CHECK_EQ(Q.rc_kbps, 25662184);
		run_to_us(100);
		CHECK_EQ(Q.c.cuts, 2);
	}
}

/* α with a CNP in the period: G·α/1024 + (1024 − G), capped at 1023; without: G·α/1024. */
static void test_alpha_cnp_formula(void)
{
	setup(DCQCN_NVIDIA);
	P.initial_alpha_value = 100;
	start(G100);
	cnp_at(5);
	/* 6.2 µs: [5, 6) without CNP: 1019·100/1024 = 101900/1024 = 99 */
	cnp_at(6.2);
	CHECK_EQ(Q.alpha, 99);
	/* 7 µs: [6, 7) with the CNP: 1019·99/1024 + 5 = 100881/1024 + 5 = 98 + 5 = 103 */
	CHECK_EQ(dcqcn_alpha(&Q, 7 * US), 103);
	/* 8 µs: decay 1019·103/1024 = 104957/1024 = 102 */
	CHECK_EQ(dcqcn_alpha(&Q, 8 * US), 102);
	/* G = 1019 at α 1023 with a CNP: 1019·1023/1024 + 5 = 1018 + 5 = 1023 (no cap needed) */
	setup(DCQCN_NVIDIA);
	start(G100);
	cnp_at(5);
	cnp_at(5.5);
	CHECK_EQ(dcqcn_alpha(&Q, 6 * US), 1023);
	/* G = 0: a CNP period gives 0 + 1024, capped at 1023; a period without gives 0 */
	setup(DCQCN_NVIDIA);
	P.dce_tcp_g = 0;
	start(G100);
	cnp_at(5);
	cnp_at(6.5);
	CHECK_EQ(Q.alpha, 0);
	CHECK_EQ(dcqcn_alpha(&Q, 7 * US), 1023);
	CHECK_EQ(dcqcn_alpha(&Q, 8 * US), 0);
}

/* Decay over many periods, by hand with G = 512 (α halves, rounding down) and dce_tcp_rtt 3 µs. */
static void test_alpha_decay_many_periods(void)
{
	setup(DCQCN_NVIDIA);
	P.dce_tcp_g = 512;
	P.dce_tcp_rtt = 3;
	start(G100);
	cnp_at(0);
	/* 1023 -> 511 -> 255 -> 127 after three periods (9 µs), 8.999 µs only two */
	CHECK_EQ(dcqcn_alpha(&Q, 8999), 255);
	CHECK_EQ(dcqcn_alpha(&Q, 9 * US), 127);
	/* 63, 31, 15, 7, 3, 1 after nine periods, 0 after ten */
	CHECK_EQ(dcqcn_alpha(&Q, 27 * US), 1);
	CHECK_EQ(dcqcn_alpha(&Q, 30 * US), 0);
	CHECK_EQ(dcqcn_alpha(&Q, 3600000000000ull), 0); /* an hour later */
	/* G = 1019 from 1023, 100 periods in one step (1019·a/1024 iterated 100 times = 590),
	 * 1023 periods or more give 0 (each period lowers a non-zero α by at least 1) */
	setup(DCQCN_NVIDIA);
	start(G100);
	cnp_at(0);
	CHECK_EQ(dcqcn_alpha(&Q, 100 * US), 590);
	setup(DCQCN_NVIDIA);
	start(G100);
	cnp_at(0);
	CHECK_EQ(dcqcn_alpha(&Q, 1023 * US), 0);
	CHECK_EQ(Q.alpha_period_ns, 1023 * US);
}

/* The naive model: every α period applied one by one. */
struct naive {
	uint32_t g, alpha, init;
	uint64_t period, start;
	bool seen, flag;
};

static void naive_to(struct naive *n, uint64_t t)
{
	if (!n->seen)
		return;
	while (n->start + n->period <= t) {
		if (n->flag) {
			n->alpha = n->g * n->alpha / 1024 + 1024 - n->g;
			if (n->alpha > 1023)
				n->alpha = 1023;
		} else {
			n->alpha = n->g * n->alpha / 1024;
		}
		n->flag = false;
		n->start += n->period;
	}
}

static void naive_cnp(struct naive *n, uint64_t t)
{
	naive_to(n, t);
	if (!n->seen) {
		n->seen = true;
		n->alpha = n->init;
		n->start = t;
		n->flag = false;
	} else {
		n->flag = true;
	}
}

/* Random CNP sequences on three QPs with different G at once (the decay tables of two G values
 * are kept per thread, so the third forces rebuilds), queries at random times; the wheel is
 * advanced before each event on some rounds and left behind on others. */
static void test_alpha_lazy_random(void)
{
	static struct dcqcn_params pp[3];
	static struct dcqcn_qp qq[3];
	struct naive nv[3];
	unsigned mismatches = 0, queries = 0;

	for (int round = 0; round < 40; round++) {
		uint64_t now = 0;
		bool advance = round & 1;

		tw_init(&wheel, 1000, 0);
		for (int i = 0; i < 3; i++) {
			dcqcn_params_default(&pp[i], DCQCN_NVIDIA);
			pp[i].dce_tcp_g = round < 4 ? 1019 : (uint32_t)test_rand_below(1024);
			pp[i].dce_tcp_rtt = 1 + (uint32_t)test_rand_below(4);
			pp[i].initial_alpha_value = (uint32_t)test_rand_below(1024);
			pp[i].rate_to_set_on_first_cnp = (uint32_t)test_rand_below(2) * 50000;
			dcqcn_init(&qq[i], &pp[i], G100, 0);
			nv[i] = (struct naive){ .g = pp[i].dce_tcp_g, .init = pp[i].initial_alpha_value,
						.alpha = pp[i].initial_alpha_value,
						.period = pp[i].dce_tcp_rtt * US };
		}
		for (int e = 0; e < 400; e++) {
			int i = (int)test_rand_below(3);
			uint64_t r = test_rand_below(100);

			/* mostly short gaps, some long silences (up to 3 ms) */
			now += r < 90 ? test_rand_below(3000) : test_rand_below(3000000);
			if (advance)
				tw_advance(&wheel, now, fire, NULL);
			if (test_rand_below(2)) {
				dcqcn_on_cnp(&qq[i], &wheel, now);
				naive_cnp(&nv[i], now);
			} else {
				naive_to(&nv[i], now);
				queries++;
				if (dcqcn_alpha(&qq[i], now) != nv[i].alpha && mismatches++ < 5)
					printf("  round %d event %d: qp %d alpha %u, naive %u\n", round, e, i,
					       dcqcn_alpha(&qq[i], now), nv[i].alpha);
			}
		}
		for (int i = 0; i < 3; i++)
			dcqcn_stop(&qq[i], &wheel);
		CHECK_EQ(wheel.armed, 0);
	}
	CHECK_EQ(mismatches, 0);
	CHECK(queries > 5000);
}

/* rpg_min_dec_fac bounds a cut. α stays at 1023 (α period 1000 µs: no update before the cut at
 * 4 µs); 100 Gb/s. */
static void test_min_dec_fac(void)
{
	static const struct {
		uint32_t mdf, gd;
		uint64_t rc;
	} cases[] = {
		/* 100000000·1023 >> 11 = 49951171; bound 100000000·50/100 = 50000000: R_C = 50048829 */
		{ 50, 11, 50048829 },
		/* bound 100000000·20/100 = 20000000 < 49951171: R_C = 80000000 */
		{ 80, 11, 80000000 },
		/* bound 0: no decrease at all (the cut still counts) */
		{ 100, 11, G100 },
		/* gd 10: 100000000·1023 >> 10 = 99902343; bound 50000000: R_C = 50000000 */
		{ 50, 10, 50000000 },
		/* mdf 0: bound 100000000·100/100 = 100000000; gd 1: 100000000·1023 >> 1 = 51150000000
		 * is larger, so the cut is the bound: R_C = 0, floored at rpg_min_rate 1 Mb/s = 1000 */
		{ 0, 1, 1000 },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setup(DCQCN_NVIDIA);
		P.dce_tcp_rtt = 1000;
		P.rpg_min_dec_fac = cases[i].mdf;
		P.rpg_gd = cases[i].gd;
		start(G100);
		nvidia_first_cut();
		CHECK_EQ(Q.c.cuts, 1);
		CHECK_EQ(Q.alpha, 1023);
		CHECK_EQ(Q.rc_kbps, cases[i].rc);
	}
}

/* rpg_min_rate floors a cut: 60000 Mb/s above the 50781250 kb/s the cut gives */
static void test_min_rate_floor(void)
{
	setup(DCQCN_NVIDIA);
	P.rpg_min_rate = 60000;
	start(G100);
	nvidia_first_cut();
	CHECK_EQ(Q.c.cuts, 1);
	CHECK_EQ(Q.rc_kbps, 60000000);
}

/* R_T = R_C at a cut when clamp_tgt_rate, or a byte-counter increase happened since the last cut,
 * or (clamp_tgt_rate_after_time_inc and) a timer increase did. After the first cut (4 µs,
 * R_C 50781250, R_T 100000000) a second cut at 8 µs or 308 µs. */
static void test_clamp_flags(void)
{
	uint64_t before;

	/* none of the three: R_T stays 100000000 */
	setup(DCQCN_NVIDIA);
	P.clamp_tgt_rate_after_time_inc = false;
	start(G100);
	nvidia_first_cut();
	cnp_at(5);
	run_to_us(8);
	CHECK_EQ(Q.c.cuts, 2);
	CHECK_EQ(Q.rt_kbps, G100);
	/* clamp_tgt_rate: R_T = the R_C before the cut, 50781250 */
	setup(DCQCN_NVIDIA);
	P.clamp_tgt_rate = true;
	start(G100);
	nvidia_first_cut();
	cnp_at(5);
	run_to_us(8);
	CHECK_EQ(Q.c.cuts, 2);
	CHECK_EQ(Q.rt_kbps, CUT1_RC);
	/* a byte event (rpg_byte_reset·64 bytes) since the cut, clamp_tgt_rate_after_time_inc off:
	 * fast recovery R_C = 100000000 − 49218750/2 = 75390625, then R_T = 75390625 */
	setup(DCQCN_NVIDIA);
	P.clamp_tgt_rate_after_time_inc = false;
	start(G100);
	nvidia_first_cut();
	CHECK(bytes_at(5, 32767 * 64));
	CHECK_EQ(Q.c.byte_events, 1);
	CHECK_EQ(Q.rc_kbps, 75390625);
	cnp_at(6);
	run_to_us(8);
	CHECK_EQ(Q.c.cuts, 2);
	CHECK_EQ(Q.rt_kbps, 75390625);
	/* a timer event (304 µs, fast recovery: R_C = 75390625): clamped only with
	 * clamp_tgt_rate_after_time_inc */
	for (int flag = 0; flag < 2; flag++) {
		setup(DCQCN_NVIDIA);
		P.clamp_tgt_rate_after_time_inc = flag;
		start(G100);
		nvidia_first_cut();
		run_to_us(304);
		CHECK_EQ(Q.c.timer_events, 1);
		before = Q.rc_kbps;
		CHECK_EQ(before, 75390625);
		cnp_at(305);
		run_to_us(308);
		CHECK_EQ(Q.c.cuts, 2);
		CHECK_EQ(Q.rt_kbps, flag ? before : G100);
	}
}

/* rpg_threshold 3: three fast-recovery steps (T = 0, 1, 2), then additive (T = 3). R_T is at the
 * line already, so the additive step is capped there. */
static void test_fast_recovery(void)
{
	setup(DCQCN_NVIDIA);
	P.rpg_threshold = 3;
	start(G100);
	nvidia_first_cut();
	/* 304: gap 100000000 − 50781250 = 49218750, R_C = 100000000 − 49218750/2 = 75390625 */
	run_to_us(304);
	CHECK_EQ(Q.stage, DCQCN_STAGE_FAST);
	CHECK_EQ(Q.rc_kbps, 75390625);
	/* 604: gap 24609375, R_C = 100000000 − 12304687 = 87695313 */
	run_to_us(604);
	CHECK_EQ(Q.rc_kbps, 87695313);
	/* 904: gap 12304687, R_C = 100000000 − 6152343 = 93847657 */
	run_to_us(904);
	CHECK_EQ(Q.rc_kbps, 93847657);
	CHECK_EQ(Q.rt_kbps, G100);
	CHECK_EQ(Q.c.fast, 3);
	CHECK_EQ(Q.c.additive, 0);
	/* 1204: additive, R_T = min(100000000 + 5000, 100000000); gap 6152343,
	 * R_C = 100000000 − 3076171 = 96923829 */
	run_to_us(1204);
	CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
	CHECK_EQ(Q.c.additive, 1);
	CHECK_EQ(Q.rt_kbps, G100);
	CHECK_EQ(Q.rc_kbps, 96923829);
	CHECK_EQ(rate_changes, 5); /* the cut and four increases */
}

/* Additive increase below the maximum: rate_to_set_on_first_cnp 40000, clamp_tgt_rate, so the
 * cut at 4 µs sets R_T = 40000000 and R_C = 40000000 − 40000000·1008 >> 11 = 40000000 − 19687500
 * = 20312500. */
static void first_cut_at_40g(void)
{
	P.rate_to_set_on_first_cnp = 40000;
	P.clamp_tgt_rate = true;
	start(G100);
	nvidia_first_cut();
}

static void test_additive(void)
{
	setup(DCQCN_NVIDIA);
	first_cut_at_40g();
	CHECK_EQ(Q.rt_kbps, 40000000);
	CHECK_EQ(Q.rc_kbps, 20312500);
	/* the increase timer armed at the first CNP (300 µs) restarted at the cut: 304 µs */
	run_to_us(303);
	CHECK_EQ(Q.c.timer_events, 0);
	/* 304: fast, gap 19687500: R_C = 40000000 − 9843750 = 30156250 */
	run_to_us(304);
	CHECK_EQ(Q.rc_kbps, 30156250);
	/* 604: T = 1: additive, R_T = 40005000, gap 9848750: R_C = 40005000 − 4924375 = 35080625 */
	run_to_us(604);
	CHECK_EQ(Q.rt_kbps, 40005000);
	CHECK_EQ(Q.rc_kbps, 35080625);
	/* 904: T = 2, but min(T, BC) = 0: additive, R_T = 40010000, gap 4929375:
	 * R_C = 40010000 − 2464687 = 37545313 */
	run_to_us(904);
	CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
	CHECK_EQ(Q.rt_kbps, 40010000);
	CHECK_EQ(Q.rc_kbps, 37545313);
}

/* Hyper increase needs both counts above rpg_threshold (1): min(T, BC) > 1. Byte events every
 * rpg_byte_reset 16 · 64 = 1024 bytes. */
static void test_hyper_bytes_and_timer(void)
{
	setup(DCQCN_NVIDIA);
	P.rpg_byte_reset = 16;
	first_cut_at_40g();
	/* 10 µs: T 0, BC 0: fast, R_C = 40000000 − 19687500/2 = 30156250 */
	CHECK(!bytes_at(10, 1000));
	CHECK_EQ(Q.c.byte_events, 0); /* 1000 < 1024 */
	CHECK(bytes_at(10, 24));
	CHECK_EQ(Q.c.byte_events, 1);
	CHECK_EQ(Q.stage, DCQCN_STAGE_FAST);
	CHECK_EQ(Q.rc_kbps, 30156250);
	/* 20 µs: 2048 bytes, two events in one call:
	 * T 0, BC 1: additive, R_T 40005000, R_C = 40005000 − 9848750/2 = 35080625;
	 * T 0, BC 2: additive, R_T 40010000, R_C = 40010000 − 4929375/2 = 37545313 */
	CHECK(bytes_at(20, 2048));
	CHECK_EQ(Q.c.byte_events, 3);
	CHECK_EQ(Q.rt_kbps, 40010000);
	CHECK_EQ(Q.rc_kbps, 37545313);
	CHECK_EQ(Q.bytes, 0);
	/* 304 µs timer: T 0, BC 3: min 0: additive, R_T 40015000,
	 * R_C = 40015000 − 2469687/2 = 40015000 − 1234843 = 38780157 */
	run_to_us(304);
	CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
	CHECK_EQ(Q.rc_kbps, 38780157);
	/* 604: T 1, BC 3: min 1, not > 1: additive, R_T 40020000,
	 * R_C = 40020000 − 1239843/2 = 40020000 − 619921 = 39400079 */
	run_to_us(604);
	CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
	CHECK_EQ(Q.rt_kbps, 40020000);
	CHECK_EQ(Q.rc_kbps, 39400079);
	/* 610 bytes: T 2, BC 3: min 2 > 1: hyper, R_T += rpg_hai_rate 50 Mb/s = 40070000,
	 * R_C = 40070000 − 669921/2 = 40070000 − 334960 = 39735040 */
	CHECK(bytes_at(610, 1024));
	CHECK_EQ(Q.stage, DCQCN_STAGE_HYPER);
	CHECK_EQ(Q.rt_kbps, 40070000);
	CHECK_EQ(Q.rc_kbps, 39735040);
	CHECK_EQ(Q.c.hyper, 1);
	CHECK_EQ(Q.c.fast, 1);
	CHECK_EQ(Q.c.additive, 4);
	CHECK_EQ(Q.c.timer_events, 2);
	CHECK_EQ(Q.c.byte_events, 4);
	/* the next cut starts over: counts and byte count reset */
	cnp_at(611);
	run_to_us(612);
	CHECK_EQ(Q.c.cuts, 2);
	CHECK_EQ(Q.t_cnt, 0);
	CHECK_EQ(Q.bc_cnt, 0);
	CHECK_EQ(Q.bytes, 0);
}

/* The stage is decided by max(T, BC) and min(T, BC), whichever counter is which: threshold 2,
 * T 3 and BC 0 is additive (max >= 2, min 0); BC 3 too makes it hyper (min 3 > 2). */
static void test_stage_min_max(void)
{
	setup(DCQCN_NVIDIA);
	P.rpg_threshold = 2;
	P.rpg_byte_reset = 16;
	first_cut_at_40g();
	run_to_us(904); /* T 0, 1 fast; T 2 additive */
	CHECK_EQ(Q.t_cnt, 3);
	CHECK_EQ(Q.c.fast, 2);
	CHECK_EQ(Q.c.additive, 1);
	bytes_at(905, 1024); /* T 3, BC 0: max 3 >= 2, min 0: additive */
	CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
	bytes_at(906, 1024); /* BC 1 */
	CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
	bytes_at(907, 1024); /* BC 2: min 2, not > 2 */
	CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
	bytes_at(908, 1024); /* BC 3: min 3 > 2: hyper */
	CHECK_EQ(Q.stage, DCQCN_STAGE_HYPER);
	CHECK_EQ(Q.c.hyper, 1);
	/* the mirror image: bytes first */
	setup(DCQCN_NVIDIA);
	P.rpg_threshold = 2;
	P.rpg_byte_reset = 16;
	first_cut_at_40g();
	bytes_at(5, 3 * 1024); /* BC 0, 1 fast; BC 2 additive */
	CHECK_EQ(Q.c.fast, 2);
	CHECK_EQ(Q.c.additive, 1);
	run_to_us(904); /* T 0, 1, 2 with BC 3: max 3: additive */
	CHECK_EQ(Q.c.additive, 4);
	CHECK_EQ(Q.c.hyper, 0);
	run_to_us(1204); /* T 3, BC 3: hyper */
	CHECK_EQ(Q.stage, DCQCN_STAGE_HYPER);
}

/* rpg_byte_reset 0: no byte events; the timer count alone sets the stage (T 2 > 1: hyper). */
static void test_byte_counter_off(void)
{
	setup(DCQCN_NVIDIA);
	P.rpg_byte_reset = 0;
	first_cut_at_40g();
	CHECK(!bytes_at(5, 100000000));
	CHECK_EQ(Q.c.byte_events, 0);
	/* 304 fast: R_C 30156250; 604 additive: R_T 40005000, R_C 35080625;
	 * 904 hyper: R_T = 40005000 + 50000 = 40055000, gap 4974375:
	 * R_C = 40055000 − 2487187 = 37567813 */
	run_to_us(904);
	CHECK_EQ(Q.stage, DCQCN_STAGE_HYPER);
	CHECK_EQ(Q.rt_kbps, 40055000);
	CHECK_EQ(Q.rc_kbps, 37567813);
}

/* rpg_max_rate caps R_T: 50000 Mb/s on a 100 Gb/s line. Cut at 4 µs:
 * 50000000·1008 >> 11 = 24609375, R_C = 25390625, R_T 50000000. */
static void test_max_rate_cap(void)
{
	setup(DCQCN_NVIDIA);
	P.rpg_max_rate = 50000;
	start(G100);
	CHECK_EQ(Q.rc_kbps, 50000000);
	nvidia_first_cut();
	CHECK_EQ(Q.rc_kbps, 25390625);
	/* 304 fast: R_C = 50000000 − 24609375/2 = 50000000 − 12304687 = 37695313 */
	run_to_us(304);
	CHECK_EQ(Q.rc_kbps, 37695313);
	/* 604 additive: R_T = min(50005000, 50000000) = 50000000;
	 * R_C = 50000000 − 12304687/2 = 50000000 − 6152343 = 43847657 */
	run_to_us(604);
	CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
	CHECK_EQ(Q.rt_kbps, 50000000);
	CHECK_EQ(Q.rc_kbps, 43847657);
}

/* R_C reaches R_T (halfway rounded toward R_T) and then the increase timer stops. 100 Mb/s line:
 * cut 100000·1008 >> 11 = 49218, R_C = 50782. The gap 49218 halves (rounding down) to 24609,
 * 12304, 6152, 3076, 1538, 769, 384, 192, 96, 48, 24, 12, 6, 3, 1, 0: sixteen events, the last at
 * 304 + 15·300 = 4804 µs. */
static void test_increase_stops_at_max(void)
{
	setup(DCQCN_NVIDIA);
	start(100000);
	nvidia_first_cut();
	CHECK_EQ(Q.rc_kbps, 50782);
	run_to_us(4803);
	CHECK_EQ(Q.c.timer_events, 15);
	CHECK_EQ(Q.rc_kbps, 99999);
	CHECK(tw_armed(&Q.t_inc));
	run_to_us(4804);
	CHECK_EQ(Q.c.timer_events, 16);
	CHECK_EQ(Q.rc_kbps, 100000);
	CHECK_EQ(Q.rt_kbps, 100000);
	CHECK(!tw_armed(&Q.t_inc));
	CHECK_EQ(wheel.armed, 0);
	run_to_us(100000);
	CHECK_EQ(Q.c.timer_events, 16);
	/* a byte event at the maximum changes nothing and arms nothing */
	CHECK(!bytes_at(100001, 32767 * 64));
	CHECK_EQ(Q.c.byte_events, 1);
	CHECK_EQ(wheel.armed, 0);
	/* the next cut starts it again */
	cnp_at(100002);
	run_to_us(100004);
	CHECK_EQ(Q.c.cuts, 2);
	CHECK(tw_armed(&Q.t_inc));
	CHECK_EQ(Q.t_inc.due_ns, 100304 * US); /* 100004 + 300 */
}

/* Same way with a byte event closing the gap: the pending timer is cancelled. */
static void test_bytes_reach_max_cancel_timer(void)
{
	setup(DCQCN_NVIDIA);
	P.rpg_byte_reset = 1; /* 64 bytes */
	start(100000);
	nvidia_first_cut();
	CHECK(tw_armed(&Q.t_inc));
	bytes_at(10, 64 * 16); /* sixteen byte events: the gap is 0 (see above) */
	CHECK_EQ(Q.c.byte_events, 16);
	CHECK_EQ(Q.rc_kbps, 100000);
	CHECK(!tw_armed(&Q.t_inc));
	CHECK_EQ(wheel.armed, 0);
}

/* A cut restarts the increase timer: the one due at 304 µs moves to 200 + 300 = 500 µs. */
static void test_cut_restarts_increase_timer(void)
{
	setup(DCQCN_NVIDIA);
	start(G100);
	nvidia_first_cut();
	cnp_at(197);
	run_to_us(200);
	CHECK_EQ(Q.c.cuts, 2);
	run_to_us(499);
	CHECK_EQ(Q.c.timer_events, 0);
	run_to_us(500);
	CHECK_EQ(Q.c.timer_events, 1);
}

/* An increase and a cut due at the same time (304 µs, with rpg_time_reset 300 a multiple of the
 * 4 µs period): the increase comes first, so the cut clamps R_T (clamp_tgt_rate_after_time_inc).
 * The same when the CNP comes at 305 µs before the wheel was advanced past 300 µs. */
static void test_increase_before_cut_at_same_time(void)
{
	for (int late_wheel = 0; late_wheel < 2; late_wheel++) {
		setup(DCQCN_NVIDIA);
		start(G100);
		nvidia_first_cut();
		cnp_at(301);
		CHECK_EQ(Q.t_dec.due_ns, 304 * US);
		CHECK_EQ(Q.t_inc.due_ns, 304 * US);
		if (late_wheel)
			dcqcn_on_cnp(&Q, &wheel, 305 * US);
		else
			run_to_us(304);
		/* increase: fast, R_C = 75390625 (see test_clamp_flags); cut: R_T = 75390625.
		 * α at 304 from 1008 at 4 µs: 297 periods without CNP to 301 µs (1019·a/1024
		 * iterated: 166), [301, 302) had the CNP: 1019·166/1024 + 5 = 165 + 5 = 170, then
		 * 1019·170/1024 = 169, 1019·169/1024 = 168. Cut 75390625·168 >> 11 =
		 * 12665625000/2048 = 6184387, R_C = 75390625 − 6184387 = 69206238 */
		CHECK_EQ(Q.c.timer_events, 1);
		CHECK_EQ(Q.c.cuts, 2);
		CHECK_EQ(Q.rt_kbps, 75390625);
		CHECK_EQ(Q.rc_kbps, 69206238);
		if (!late_wheel)
			CHECK_EQ(Q.alpha, 168);
	}
}

static void test_stop(void)
{
	setup(DCQCN_NVIDIA);
	start(G100);
	nvidia_first_cut();
	cnp_at(5);
	CHECK(tw_armed(&Q.t_dec));
	CHECK(tw_armed(&Q.t_inc));
	dcqcn_stop(&Q, &wheel);
	CHECK_EQ(wheel.armed, 0);
	run_to_us(10000);
	CHECK_EQ(Q.c.cuts, 1);
}

/* ---- timers on no wheel ---- */

static void random_params(struct dcqcn_params *p, enum dcqcn_profile profile)
{
	dcqcn_params_default(p, profile);
	if (profile == DCQCN_NVIDIA) {
		p->dce_tcp_g = 1000 + (uint32_t)test_rand_below(24);
		p->dce_tcp_rtt = 1 + (uint32_t)test_rand_below(5);
		p->rate_to_set_on_first_cnp = (uint32_t)test_rand_below(3) == 0 ? 40000 : 0;
		p->rate_reduce_monitor_period = 1 + (uint32_t)test_rand_below(10);
		p->clamp_tgt_rate = test_rand_below(2);
		p->clamp_tgt_rate_after_time_inc = test_rand_below(2);
		p->rpg_time_reset = 5 + (uint32_t)test_rand_below(300);
		p->rpg_byte_reset = (uint32_t)test_rand_below(4) == 0 ? 0 : 16 + (uint32_t)test_rand_below(1024);
		p->rpg_threshold = 1 + (uint32_t)test_rand_below(5);
		p->rpg_ai_rate = 5 + (uint32_t)test_rand_below(2000);
		p->rpg_hai_rate = 50 + (uint32_t)test_rand_below(20000);
	} else {
		p->k_us = 5 + (uint32_t)test_rand_below(100);
		p->t_us = 5 + (uint32_t)test_rand_below(100);
		p->b_bytes = test_rand_below(4) == 0 ? 0 : 1000 + test_rand_below(100000);
		p->f = 1 + (uint32_t)test_rand_below(6);
		p->r_ai_mbps = 40 + (uint32_t)test_rand_below(2000);
		p->r_hai_mbps = 200 + (uint32_t)test_rand_below(20000);
		p->alpha_before_cut = test_rand_below(2);
		/* the stage forms: the authors' (default), counts before with a constant or linear step */
		p->ns3_stages = test_rand_below(3) == 0;
		p->hyper_linear = !p->ns3_stages && test_rand_below(2);
	}
}

static bool same_timer(const struct tw_timer *a, const struct tw_timer *b)
{
	return tw_armed(a) == tw_armed(b) && (!tw_armed(a) || a->due_ns == b->due_ns);
}

/* Whether the wheel-driven QP a and the QP b whose timers are on no wheel are in the same state at
 * `now` (a tick boundary, the wheel advanced there, b caught up). */
static bool same_state(struct dcqcn_qp *a, struct dcqcn_qp *b, uint64_t now)
{
	return a->rc_kbps == b->rc_kbps && a->rt_kbps == b->rt_kbps &&
	       dcqcn_alpha(a, now) == dcqcn_alpha(b, now) && a->t_cnt == b->t_cnt && a->bc_cnt == b->bc_cnt &&
	       a->bytes == b->bytes && a->seen_cnp == b->seen_cnp && a->stage == b->stage &&
	       memcmp(&a->c, &b->c, sizeof(a->c)) == 0 && same_timer(&a->t_alpha, &b->t_alpha) &&
	       same_timer(&a->t_inc, &b->t_inc) && same_timer(&a->t_dec, &b->t_dec) &&
	       dcqcn_next_due(b) == (tw_armed(&b->t_alpha) || tw_armed(&b->t_inc) || tw_armed(&b->t_dec)
					     ? dcqcn_next_due(a) : UINT64_MAX);
}

/* Paper-profile increase events of lazy_against_wheel's rounds by stage form (ns3_stages, counts
 * before with a constant step, with a linear one) and stage (enum dcqcn_stage): each form's
 * stages must all have been run. */
static uint64_t form_stage_events[3][4];

static unsigned stage_form(const struct dcqcn_params *p) { return p->ns3_stages ? 0 : p->hyper_linear ? 2 : 1; }

/* Random CNPs, bytes and silences (one event in five up to `silence_max` ns), random
 * parameters: a QP driven by a wheel and one whose timers run only when it is caught up (before
 * its bytes, at CNPs, at the samples: the engine's way) go through the same states. Returns the
 * samples where they differed. */
static unsigned lazy_against_wheel(int rounds, int per_round, uint64_t silence_max, bool paper_only,
				   unsigned *samples, uint64_t *events)
{
	static struct dcqcn_params pp;
	static struct dcqcn_qp a, b;
	unsigned mismatches = 0;

	for (int round = 0; round < rounds; round++) {
		uint64_t now = 0;

		random_params(&pp, paper_only || (round & 1) ? DCQCN_PAPER : DCQCN_NVIDIA);
		if (paper_only && round % 4) /* α's decay by other g: its subtraction stretch comes sooner */
			pp.g = 1.0 / (double)(2 + test_rand_below(2000));
		if (paper_only) { /* small steps: thousands of increases before the maximum */
			pp.r_ai_mbps = 1 + (uint32_t)test_rand_below(50);
			pp.r_hai_mbps = 1 + (uint32_t)test_rand_below(200);
		}
		tw_init(&wheel, 1000, 0);
		dcqcn_init(&a, &pp, G100, 0);
		dcqcn_init(&b, &pp, G100, 0);
		for (int e = 0; e < per_round && !mismatches; e++) {
			uint64_t r = test_rand_below(100);

			now += r < 80 ? test_rand_below(20000) : test_rand_below(silence_max);
			tw_advance(&wheel, now, fire, NULL);
			if (r % 3 == 0) {
				dcqcn_on_cnp(&a, &wheel, now);
				dcqcn_on_cnp(&b, NULL, now);
			} else if (r % 3 == 1) {
				uint32_t bytes = 64 + (uint32_t)test_rand_below(100000);

				/* the bytes go after the timers due by now (the wheel fires those of the current
				 * tick only at its end) */
				dcqcn_catch_up(&a, &wheel, now);
				dcqcn_on_bytes(&a, &wheel, bytes, now);
				dcqcn_catch_up(&b, NULL, now);
				dcqcn_on_bytes(&b, NULL, bytes, now);
			} else { /* a sample at the next tick boundary */
				now = (now / US + 1) * US;
				tw_advance(&wheel, now, fire, NULL);
				dcqcn_catch_up(&b, NULL, now);
				(*samples)++;
				if (!same_state(&a, &b, now) && mismatches++ < 3)
					printf("  alpha %u/%u t %u/%u bc %u/%u bytes %llu/%llu stage %u/%u due %llu/%llu inc %d/%d dec %d/%d al %d/%d\n",
					       dcqcn_alpha(&a, now), dcqcn_alpha(&b, now), a.t_cnt, b.t_cnt, a.bc_cnt, b.bc_cnt,
					       (unsigned long long)a.bytes, (unsigned long long)b.bytes, a.stage, b.stage,
					       (unsigned long long)dcqcn_next_due(&a), (unsigned long long)dcqcn_next_due(&b),
					       tw_armed(&a.t_inc), tw_armed(&b.t_inc), tw_armed(&a.t_dec), tw_armed(&b.t_dec),
					       tw_armed(&a.t_alpha), tw_armed(&b.t_alpha)),
					printf("  round %d event %d: rc %llu/%llu rt %llu/%llu cuts %llu/%llu inc %llu/%llu\n",
					       round, e, (unsigned long long)a.rc_kbps, (unsigned long long)b.rc_kbps,
					       (unsigned long long)a.rt_kbps, (unsigned long long)b.rt_kbps,
					       (unsigned long long)a.c.cuts, (unsigned long long)b.c.cuts,
					       (unsigned long long)(a.c.timer_events + a.c.byte_events),
					       (unsigned long long)(b.c.timer_events + b.c.byte_events));
			}
		}
		*events += a.c.timer_events + a.c.byte_events + a.c.cuts;
		if (pp.profile == DCQCN_PAPER) {
			form_stage_events[stage_form(&pp)][DCQCN_STAGE_FAST] += a.c.fast;
			form_stage_events[stage_form(&pp)][DCQCN_STAGE_ADDITIVE] += a.c.additive;
			form_stage_events[stage_form(&pp)][DCQCN_STAGE_HYPER] += a.c.hyper;
		}
		dcqcn_stop(&a, &wheel);
		dcqcn_stop(&b, NULL);
		CHECK_EQ(wheel.armed, 0);
		CHECK_EQ(dcqcn_next_due(&b), UINT64_MAX);
	}
	return mismatches;
}

static void test_lazy_timers_match_wheel(void)
{
	unsigned samples = 0;
	uint64_t events = 0;

	memset(form_stage_events, 0, sizeof(form_stage_events));
	CHECK_EQ(lazy_against_wheel(200, 300, 3000000, false, &samples, &events), 0);
	CHECK(samples > 10000);
	CHECK(events > 10000); /* the timers had work to do */
	for (unsigned f = 0; f < 3; f++)
		for (unsigned st = DCQCN_STAGE_FAST; st <= DCQCN_STAGE_HYPER; st++)
			CHECK(form_stage_events[f][st] > 100);
}

/* The paper profile's catch-up after silences of up to 0.3 s (α's decay to 0 with its
 * subtraction stretch, increases told many at once up to the maximum rate) against the wheel's
 * events one at a time. */
static void test_lazy_long_silences_match_wheel(void)
{
	unsigned samples = 0;
	uint64_t events = 0;

	memset(form_stage_events, 0, sizeof(form_stage_events));
	CHECK_EQ(lazy_against_wheel(40, 40, 300000000, true, &samples, &events), 0);
	CHECK(samples > 300);
	CHECK(events > 50000);
	for (unsigned f = 0; f < 3; f++) /* long silences reach hyper increases in every form */
		CHECK(form_stage_events[f][DCQCN_STAGE_HYPER] > 100);
}

/* Where the closed form of many timer increases must stop: a stage boundary or a change of the
 * hyper step inside a silence, after the gap R_T − R_C has settled (which takes a couple of dozen
 * events after a cut, so large F). Paper profile, every stage form, F 20..44, the byte count set
 * before the silence below, at and above F, small steps (R_T far from the line); a wheel-driven
 * QP against one caught up only every 5..13 timer periods, so that a catch-up's last event falls
 * on each boundary in some run. */
static void test_lazy_stage_boundaries_match_wheel(void)
{
	static struct dcqcn_params pp;
	static struct dcqcn_qp a, b;
	unsigned runs = 0, mismatches = 0;

	static const int bcs[] = { -1, 0, 1, 2, 5, 12 }; /* byte events before the silence: f + bc − 1 */

	for (unsigned form = 0; form < 3; form++)
		for (uint32_t f = 20; f < 45; f += 3)
			for (size_t k = 0; k < sizeof(bcs) / sizeof(bcs[0]) * 9; k++) {
				int bc = bcs[k / 9];
				uint64_t every = (5 + k % 9) * 55 * US; /* timer events per catch-up: 5..13 */
				uint32_t byte_events = bc < 0 ? 0 : f + (uint32_t)bc - 1;

				dcqcn_params_default(&pp, DCQCN_PAPER);
				pp.ns3_stages = form == 0;
				pp.hyper_linear = form == 2;
				pp.f = f;
				pp.b_bytes = 1000;
				pp.r_ai_mbps = 1;
				pp.r_hai_mbps = 3;
				tw_init(&wheel, 1000, 0);
				dcqcn_init(&a, &pp, G100, 0);
				dcqcn_init(&b, &pp, G100, 0);
				for (uint64_t t = 10 * US; t <= 20 * US; t += 10 * US) { /* R_T below the line */
					tw_advance(&wheel, t, fire, NULL);
					dcqcn_on_cnp(&a, &wheel, t);
					dcqcn_on_cnp(&b, NULL, t);
				}
				dcqcn_on_bytes(&a, &wheel, byte_events * 1000, 21 * US);
				dcqcn_on_bytes(&b, NULL, byte_events * 1000, 21 * US);
				for (uint64_t now = 21 * US + every; now <= 60000 * US; now += every) {
					tw_advance(&wheel, now, fire, NULL);
					dcqcn_catch_up(&b, NULL, now);
					if (!same_state(&a, &b, now) && mismatches++ < 3)
						printf("  form %u f %u bc %d at %llu us: rt %llu/%llu rc %llu/%llu t %u/%u stage %u/%u\n",
						       form, f, bc, (unsigned long long)(now / US), (unsigned long long)a.rt_kbps,
						       (unsigned long long)b.rt_kbps, (unsigned long long)a.rc_kbps,
						       (unsigned long long)b.rc_kbps, a.t_cnt, b.t_cnt, a.stage, b.stage);
				}
				/* hyper once T reaches F: with BC >= F (the authors'), BC > F (counts before) */
				CHECK((a.c.hyper > 0) == (bc >= (form == 0 ? 1 : 2)));
				dcqcn_stop(&a, &wheel);
				runs++;
			}
	CHECK_EQ(mismatches, 0);
	CHECK_EQ(runs, 3 * 9 * 6 * 9);
}

/* A QP on no wheel: a CNP arms the cut only in the QP, dcqcn_next_due names it, a catch-up just
 * before does nothing and one at it cuts, then the increase timer is next (NVIDIA defaults). */
static void test_lazy_next_due(void)
{
	setup(DCQCN_NVIDIA);
	start(G100);
	CHECK_EQ(dcqcn_next_due(&Q), UINT64_MAX);
	dcqcn_on_cnp(&Q, NULL, 0);
	CHECK_EQ(dcqcn_next_due(&Q), UINT64_MAX); /* at line rate: nothing to increase yet */
	dcqcn_on_cnp(&Q, NULL, 1 * US);
	CHECK_EQ(dcqcn_next_due(&Q), 4 * US); /* the decrease period's end */
	CHECK_EQ(wheel.armed, 0);
	CHECK(!dcqcn_catch_up(&Q, NULL, 4 * US - 1));
	CHECK_EQ(Q.rc_kbps, G100);
	CHECK(dcqcn_catch_up(&Q, NULL, 4 * US));
	CHECK_EQ(Q.rc_kbps, CUT1_RC);
	CHECK_EQ(dcqcn_next_due(&Q), 304 * US); /* the cut restarted the increase timer */
	CHECK(dcqcn_catch_up(&Q, NULL, 904 * US - 1)); /* two increases */
	CHECK_EQ(Q.c.timer_events, 2);
	CHECK_EQ(dcqcn_next_due(&Q), 904 * US);
}

/* ---- paper profile ---- */

/* α 0.5 = 524288 (Q20); g = 1/256 = 4096. Old α: cut 100000000·524288 >> 21 = 25000000,
 * R_C 75000000, R_T 100000000; then α = (524288·(1048576 − 4096) >> 20) + 4096 = 522240 + 4096 =
 * 526336. */
static void paper_first_cnp(void)
{
	P.initial_alpha = 0.5;
	start(G100);
	CHECK_EQ(Q.alpha, 524288);
	CHECK(cnp_at(10));
}

static void test_paper_cut_old_alpha(void)
{
	setup(DCQCN_PAPER);
	paper_first_cnp();
	CHECK_EQ(Q.rc_kbps, 75000000);
	CHECK_EQ(Q.rt_kbps, G100);
	CHECK_EQ(Q.alpha, 526336);
	CHECK_EQ(Q.c.cuts, 1);
	CHECK(tw_armed(&Q.t_inc));
	CHECK_EQ(Q.t_inc.due_ns, 65 * US);   /* T 55 µs */
	CHECK(tw_armed(&Q.t_alpha));
	CHECK_EQ(Q.t_alpha.due_ns, 65 * US); /* K 55 µs */
	CHECK(!tw_armed(&Q.t_dec));
	CHECK(fabs(dcqcn_alpha_fraction(&Q, Q.alpha) - 526336.0 / 1048576) < 1e-12);
}

/* alpha_before_cut: α = 526336 first, cut 100000000·526336 >> 21 = 52633600000000/2097152 =
 * 25097656, R_C 74902344. */
static void test_paper_alpha_before_cut(void)
{
	setup(DCQCN_PAPER);
	P.alpha_before_cut = true;
	paper_first_cnp();
	CHECK_EQ(Q.alpha, 526336);
	CHECK_EQ(Q.rc_kbps, 74902344);
	/* α = 1 stays 1: (1048576·1044480 >> 20) + 4096 = 1048576; cut R_C/2 */
	setup(DCQCN_PAPER);
	start(G100);
	CHECK_EQ(Q.alpha, 1048576);
	cnp_at(10);
	CHECK_EQ(Q.alpha, 1048576);
	CHECK_EQ(Q.rc_kbps, 50000000);
}

/* α decays every K = 55 µs without a CNP: 526336·1044480 >> 20 = 524280 at 65 µs,
 * 524280·1044480 >> 20 = 522232 at 120 µs; a CNP restarts the K period. */
static void test_paper_alpha_decay(void)
{
	setup(DCQCN_PAPER);
	paper_first_cnp();
	run_to_us(64);
	CHECK_EQ(Q.alpha, 526336);
	run_to_us(65);
	CHECK_EQ(Q.alpha, 524280);
	run_to_us(120);
	CHECK_EQ(Q.alpha, 522232);
	/* CNP at 150: cut with 522232, α = (522232·1044480 >> 20) + 4096 = 520192 + 4096 = 524288
	 * (522232·1044480 = 545460879360, >> 20 = 520192.0...); next decay at 205, not 175 */
	cnp_at(150);
	CHECK_EQ(Q.alpha, 524288);
	run_to_us(204);
	CHECK_EQ(Q.alpha, 524288);
	run_to_us(205);
	CHECK_EQ(Q.alpha, 522240); /* 524288·1044480 >> 20 */
	/* α reaches 0 after a long quiet time and the α timer stops */
	run_to_us(10000000);
	CHECK_EQ(Q.alpha, 0);
	CHECK(!tw_armed(&Q.t_alpha));
	CHECK_EQ(dcqcn_alpha(&Q, 10000000 * US), 0);
}

/* The stages with ns3_stages = false (the counts before the event, as the NVIDIA profile): two
 * CNPs (10, 20 µs) so that R_T is below the line, then F = 5 fast-recovery steps and additive
 * steps of R_AI 40 Mb/s. Second cut: R_T = 75000000, cut 75000000·526336 >> 21 = 18823242,
 * R_C = 56176758. */
static void test_paper_counts_before_fast_recovery_and_additive(void)
{
	uint64_t gaps[5] = { 9411621, 4705810, 2352905, 1176452, 588226 };

	setup(DCQCN_PAPER);
	P.ns3_stages = false;
	paper_first_cnp();
	cnp_at(20);
	CHECK_EQ(Q.rt_kbps, 75000000);
	CHECK_EQ(Q.rc_kbps, 56176758);
	/* timer every 55 µs from 20: 75, 130, 185, 240, 295 fast (T 0..4): the gap 18823242 halves
	 * (rounding down) to 9411621, 4705810, 2352905, 1176452, 588226 */
	for (int i = 0; i < 5; i++) {
		run_to_us(75 + 55 * i);
		CHECK_EQ(Q.stage, DCQCN_STAGE_FAST);
		CHECK_EQ(Q.rt_kbps, 75000000);
		CHECK_EQ(Q.rc_kbps, 75000000 - gaps[i]);
	}
	/* 350 µs, T 5 >= F: additive, R_T = 75040000, gap 75040000 − 74411774 = 628226,
	 * R_C = 75040000 − 314113 = 74725887 */
	run_to_us(350);
	CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
	CHECK_EQ(Q.rt_kbps, 75040000);
	CHECK_EQ(Q.rc_kbps, 74725887);
	/* 405 µs, T 6, BC 0 (B = 10 MB not reached): min 0, still additive, R_T 75040000 + 40000 */
	run_to_us(405);
	CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
	CHECK_EQ(Q.rt_kbps, 75080000);
	CHECK_EQ(Q.c.fast, 5);
	CHECK_EQ(Q.c.additive, 2);
}

/* ns3_stages = false, hyper with F = 1, B = 1000 bytes: min(T, BC) > 1. The step is R_HAI
 * 200 Mb/s, or with hyper_linear R_HAI·(min(T, BC) − F). */
static void test_paper_counts_before_hyper(void)
{
	for (int linear = 0; linear < 2; linear++) {
		uint64_t rt;

		setup(DCQCN_PAPER);
		P.ns3_stages = false;
		P.f = 1;
		P.b_bytes = 1000;
		P.hyper_linear = linear;
		paper_first_cnp();
		cnp_at(20); /* R_T 75000000 */
		bytes_at(21, 3000); /* BC 0 fast, BC 1 and 2 additive: R_T 75080000 */
		CHECK_EQ(Q.c.fast, 1);
		CHECK_EQ(Q.rt_kbps, 75080000);
		run_to_us(130); /* T 0 (BC 3): additive; T 1: min 1, additive: R_T 75160000 */
		CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
		CHECK_EQ(Q.rt_kbps, 75160000);
		run_to_us(185); /* T 2, BC 3: min 2 > 1: hyper, 200000 either way (2 − 1 = 1) */
		CHECK_EQ(Q.stage, DCQCN_STAGE_HYPER);
		CHECK_EQ(Q.rt_kbps, 75360000);
		rt = Q.rt_kbps;
		bytes_at(186, 1000); /* T 3, BC 3: min 3: 200000, linear 200000·(3 − 1) = 400000 */
		CHECK_EQ(Q.rt_kbps - rt, linear ? 400000 : 200000);
		rt = Q.rt_kbps;
		run_to_us(240); /* T 3, BC 4: min 3 again */
		CHECK_EQ(Q.rt_kbps - rt, linear ? 400000 : 200000);
		rt = Q.rt_kbps;
		bytes_at(241, 1000); /* T 4, BC 4: min 4: linear 600000 */
		CHECK_EQ(Q.rt_kbps - rt, linear ? 600000 : 200000);
		CHECK_EQ(Q.c.hyper, 4);
	}
}

/* ---- paper profile: the authors' increase stages (ns3_stages, the default) ----
 *
 * Expected values follow the DCQCN authors' ns-3 code, bobzhuyb/ns3-rdma @ e8a27d0,
 * src/point-to-point/model/qbb-net-device.cc, event by event:
 *   timer:  rpr_timer_wrapper -> rpr_fast_time (l. 1307: m_rpTimeStage++, then fast recovery
 *           while m_rpTimeStage < m_rpgThreshold, else rpr_active_select), rpr_active_time
 *           (l. 1279: ++, rpr_active_select), rpr_hyper_time (l. 1331: ++, rpr_hyper_increase);
 *   bytes:  rpr_fast_byte (l. 1290: m_rpByteStage++, the same test), rpr_active_byte (l. 1271:
 *           ++, rpr_active_increase, never hyper), rpr_hyper_byte (l. 1322: ++, hyper);
 *   rpr_active_select (l. 1342): additive if either count < F, else rpr_hyper_increase (l. 1353):
 *           R_T += m_rhai·(min(m_rpByteStage, m_rpTimeStage) − m_rpgThreshold + 1);
 *   AdjustRates (l. 1361): R_C = R_C/2 + R_T/2 (here rounded toward R_T, see dcqcn.c).
 * Not modelled (outside the stages; docs/cc.md): the hyper stage's halved timer and byte
 * counter, AdjustRates' R_T /= 8 when R_T > 10·R_C on a first event, R_T above the line rate.
 * Start as test_paper_counts_before_*: CNPs at 10 and 20 µs leave R_T 75000000, R_C 56176758,
 * both counts 0; the increase timer fires at 75, 130, 185, ... µs. */

/* F = 5, timer only: rpr_fast_time counts first, so T = 1..4 are fast recovery (F − 1 = 4
 * steps, not 5): the gap 18823242 halves to 9411621, 4705810, 2352905, 1176452 (R_C 73823548).
 * At 295 µs T = 5 = F: rpr_active_select with BC 0 < 5: additive, R_T = 75040000, gap
 * 75040000 − 73823548 = 1216452, R_C = 75040000 − 608226 = 74431774. At 350 µs T = 6,
 * rpr_active_time -> rpr_active_select, BC still 0: additive, R_T = 75080000, gap 648226,
 * R_C = 75080000 − 324113 = 74755887. */
static void test_paper_ns3_fast_recovery_is_f_minus_1_steps(void)
{
	uint64_t gaps[4] = { 9411621, 4705810, 2352905, 1176452 };

	setup(DCQCN_PAPER);
	paper_first_cnp();
	cnp_at(20);
	CHECK_EQ(Q.rc_kbps, 56176758);
	for (int i = 0; i < 4; i++) {
		run_to_us(75 + 55 * i);
		CHECK_EQ(Q.stage, DCQCN_STAGE_FAST);
		CHECK_EQ(Q.rt_kbps, 75000000);
		CHECK_EQ(Q.rc_kbps, 75000000 - gaps[i]);
	}
	run_to_us(295);
	CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
	CHECK_EQ(Q.rt_kbps, 75040000);
	CHECK_EQ(Q.rc_kbps, 74431774);
	run_to_us(350);
	CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
	CHECK_EQ(Q.rt_kbps, 75080000);
	CHECK_EQ(Q.rc_kbps, 74755887);
	CHECK_EQ(Q.c.fast, 4);
	CHECK_EQ(Q.c.additive, 2);
	CHECK_EQ(Q.t_cnt, 6);
}

/* F = 1, B = 1000 bytes, R_AI 40, R_HAI 200 Mb/s.
 * 21 µs, 3000 bytes: rpr_fast_byte BC = 1 >= F, rpr_active_select: T 0 < 1: additive, R_T
 *   75040000, R_C = 75040000 − 18863242/2 = 65608379; then rpr_active_byte twice: additive, R_T
 *   75080000 (R_C 70344190), 75120000 (R_C = 75120000 − 4775810/2 = 72732095). No fast step
 *   (the counts-before form: BC 0 fast, 1 and 2 additive).
 * 75 µs: rpr_active_time T = 1, rpr_active_select: BC 3, T 1, both >= 1: rpr_hyper_increase,
 *   200·(min(3, 1) − 1 + 1) = 200 Mb/s: R_T 75320000, R_C = 75320000 − 2587905/2 = 74026048.
 * 76 µs, 1000 bytes: rpr_hyper_byte BC = 4: 200·(min(4, 1) − 1 + 1) = 200: R_T 75520000.
 * 130 µs: T = 2: 200·(min(4, 2) − 0) = 400: 75920000. 185 µs: T = 3: 600: 76520000.
 * 186 µs, BC = 5: min(5, 3) = 3: 600: 77120000. 240 µs: T = 4: 800: 77920000,
 *   R_C = 77920000 − (77920000 − 76526628)/2 = 77920000 − 696686 = 77223314. */
static void test_paper_ns3_hyper_step_min_minus_f_plus_1(void)
{
	static const struct { double us; uint32_t bytes; uint64_t rt; } ev[] = {
		{ 75, 0, 75320000 }, { 76, 1000, 75520000 }, { 130, 0, 75920000 },
		{ 185, 0, 76520000 }, { 186, 1000, 77120000 }, { 240, 0, 77920000 },
	};

	setup(DCQCN_PAPER);
	P.f = 1;
	P.b_bytes = 1000;
	paper_first_cnp();
	cnp_at(20);
	bytes_at(21, 3000);
	CHECK_EQ(Q.c.fast, 0);
	CHECK_EQ(Q.c.additive, 3);
	CHECK_EQ(Q.rt_kbps, 75120000);
	CHECK_EQ(Q.rc_kbps, 72732095);
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		if (ev[i].bytes)
			bytes_at(ev[i].us, ev[i].bytes);
		else
			run_to_us(ev[i].us);
		CHECK_EQ(Q.stage, DCQCN_STAGE_HYPER);
		CHECK_EQ(Q.rt_kbps, ev[i].rt);
		if (i == 0)
			CHECK_EQ(Q.rc_kbps, 74026048);
	}
	CHECK_EQ(Q.rc_kbps, 77223314);
	CHECK_EQ(Q.c.hyper, 6);
	CHECK_EQ(Q.t_cnt, 4);
	CHECK_EQ(Q.bc_cnt, 5);
}

/* F = 2, B = 1000: a byte event after an additive one stays additive (rpr_active_byte calls
 * rpr_active_increase whatever the counts); only the timer's rpr_active_select moves to hyper.
 * 75 µs: T = 1 < 2: fast, R_C = 75000000 − 9411621 = 65588379. 130 µs: T = 2, BC 0:
 * additive, R_T 75040000, R_C = 75040000 − 9451621/2 = 70314190. 131 µs, 2000 bytes: BC 1 and
 * BC 2 additive (at BC 2 both counts are >= F: a test of the counts alone would say hyper),
 * R_T 75080000, 75120000; 132 µs, BC 3 additive again: R_T 75160000. 185 µs: T = 3,
 * rpr_active_select, BC 3: hyper, 200·(min(3, 3) − 2 + 1) = 400 Mb/s: R_T 75560000, R_C =
 * 75560000 − (75560000 − 74534274)/2 = 75047137. 186 µs: rpr_hyper_byte BC 4: min(4, 3) = 3:
 * 400 again: R_T 75960000. */
static void test_paper_ns3_bytes_stay_additive(void)
{
	setup(DCQCN_PAPER);
	P.f = 2;
	P.b_bytes = 1000;
	paper_first_cnp();
	cnp_at(20);
	run_to_us(75);
	CHECK_EQ(Q.stage, DCQCN_STAGE_FAST);
	CHECK_EQ(Q.rc_kbps, 65588379);
	run_to_us(130);
	CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
	CHECK_EQ(Q.rt_kbps, 75040000);
	CHECK_EQ(Q.rc_kbps, 70314190);
	bytes_at(131, 2000);
	CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
	CHECK_EQ(Q.rt_kbps, 75120000);
	bytes_at(132, 1000);
	CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
	CHECK_EQ(Q.rt_kbps, 75160000);
	CHECK_EQ(Q.c.additive, 4);
	run_to_us(185);
	CHECK_EQ(Q.stage, DCQCN_STAGE_HYPER);
	CHECK_EQ(Q.rt_kbps, 75560000);
	CHECK_EQ(Q.rc_kbps, 75047137);
	bytes_at(186, 1000);
	CHECK_EQ(Q.stage, DCQCN_STAGE_HYPER);
	CHECK_EQ(Q.rt_kbps, 75960000);
	CHECK_EQ(Q.c.fast, 1);
	CHECK_EQ(Q.c.hyper, 2);
}

/* b_bytes 0: the timer count stands for both, the byte count one event behind (dcqcn.c). T = 1..4
 * fast (4 steps); the fifth event (T 5, BC 4: one count < F) additive, R_T 75040000 as in the
 * timer-only case above; then (T, BC) = (6, 5), (7, 6), (8, 7): hyper, 200·(min − 5 + 1) = 200,
 * 400, 600 Mb/s: R_T 75240000 (350 µs), 75640000 (405), 76240000 (460 µs, R_C = 76240000 −
 * (76240000 − 75237944)/2 = 75738972). */
static void test_paper_ns3_byte_counter_off(void)
{
	setup(DCQCN_PAPER);
	P.b_bytes = 0;
	paper_first_cnp();
	cnp_at(20);
	run_to_us(240);
	CHECK_EQ(Q.c.fast, 4);
	run_to_us(295);
	CHECK_EQ(Q.stage, DCQCN_STAGE_ADDITIVE);
	CHECK_EQ(Q.rt_kbps, 75040000);
	run_to_us(350);
	CHECK_EQ(Q.stage, DCQCN_STAGE_HYPER);
	CHECK_EQ(Q.rt_kbps, 75240000);
	run_to_us(405);
	CHECK_EQ(Q.rt_kbps, 75640000);
	run_to_us(460);
	CHECK_EQ(Q.rt_kbps, 76240000);
	CHECK_EQ(Q.rc_kbps, 75738972);
	CHECK_EQ(Q.c.additive, 1);
	CHECK_EQ(Q.c.hyper, 3);
}

/* R_min: 150 Mb/s line, α 1: cut to 75000 kb/s, floored at min_rate_mbps 100 = 100000 kb/s. */
static void test_paper_min_rate(void)
{
	setup(DCQCN_PAPER);
	start(150000);
	CHECK(cnp_at(10));
	CHECK_EQ(Q.rc_kbps, 100000);
	CHECK_EQ(Q.rt_kbps, 150000);
	CHECK(!cnp_at(20)); /* at the floor already: no change */
	CHECK_EQ(Q.rc_kbps, 100000);
	CHECK_EQ(Q.rt_kbps, 100000);
	CHECK_EQ(Q.c.cuts, 2);
}

int main(void)
{
	RUN(test_defaults);
	RUN(test_params_check);
	RUN(test_init);
	RUN(test_first_cnp_keeps_rate);
	RUN(test_first_cnp_sets_rate);
	RUN(test_cut_at_period_end);
	RUN(test_one_cut_per_period);
	RUN(test_alpha_cnp_formula);
	RUN(test_alpha_decay_many_periods);
	RUN(test_alpha_lazy_random);
	RUN(test_min_dec_fac);
	RUN(test_min_rate_floor);
	RUN(test_clamp_flags);
	RUN(test_fast_recovery);
	RUN(test_additive);
	RUN(test_hyper_bytes_and_timer);
	RUN(test_stage_min_max);
	RUN(test_byte_counter_off);
	RUN(test_max_rate_cap);
	RUN(test_increase_stops_at_max);
	RUN(test_bytes_reach_max_cancel_timer);
	RUN(test_cut_restarts_increase_timer);
	RUN(test_increase_before_cut_at_same_time);
	RUN(test_stop);
	RUN(test_lazy_timers_match_wheel);
	RUN(test_lazy_long_silences_match_wheel);
	RUN(test_lazy_stage_boundaries_match_wheel);
	RUN(test_lazy_next_due);
	RUN(test_paper_cut_old_alpha);
	RUN(test_paper_alpha_before_cut);
	RUN(test_paper_alpha_decay);
	RUN(test_paper_counts_before_fast_recovery_and_additive);
	RUN(test_paper_counts_before_hyper);
	RUN(test_paper_ns3_fast_recovery_is_f_minus_1_steps);
	RUN(test_paper_ns3_hyper_step_min_minus_f_plus_1);
	RUN(test_paper_ns3_bytes_stay_additive);
	RUN(test_paper_ns3_byte_counter_off);
	RUN(test_paper_min_rate);
	return testlib_finish("test_dcqcn");
}

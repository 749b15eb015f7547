/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Unit tests of the lab switch's shared-buffer MMU (lab/switch_mmu.c): static and dynamic (alpha)
 * queue thresholds, the shared buffer, PFC hysteresis and headroom of lossless priorities,
 * counters and maxima (and each port's queued bytes, every class), and a random enqueue/dequeue
 * run against a reference model. Values are worked out by hand in the comments; "lossy" is
 * priority 0, "lossless" priority 3 unless said.
 */
#include <math.h>

#include "switch_mmu.h"
#include "testlib.h"

#define LOSSY 0
#define LOSSLESS 3

static struct mmu_params P;
static struct switch_mmu M;

/* 100 KB buffer, static threshold = the buffer, priority 3 lossless: xoff 20 KB, xon 10 KB,
 * headroom 5 KB; 4 ports. Cases change what they need, then start(). */
static void defaults(void)
{
	memset(&P, 0, sizeof(P));
	P.buffer_bytes = 100000;
	P.pfc_priorities = 1 << LOSSLESS;
	P.xoff_bytes = 20000;
	P.xon_bytes = 10000;
	P.headroom_bytes = 5000;
}

static void start(void)
{
	const char *why = NULL, *bad = mmu_params_check(&P, &why);

	CHECK(bad == NULL);
	if (bad)
		printf("  params: %s: %s\n", bad, why);
	mmu_init(&M, &P, 4);
}

/* enqueue without caring about pfc_change */
static enum mmu_verdict enq(unsigned in, unsigned prio, unsigned out, unsigned tc, uint32_t bytes)
{
	bool change = true;
	enum mmu_verdict v = mmu_enqueue(&M, in, prio, out, tc, bytes, &change);

	if (v != MMU_ADMIT)
		CHECK(!change); /* a refused packet never changes PFC */
	return v;
}

/* queue_limit 3000: a lossy queue takes 3000 bytes exactly; other queues are not affected. */
static void test_static_threshold_drop(void)
{
	defaults();
	P.queue_limit = 3000;
	start();
	CHECK_EQ(mmu_queue_limit(&M), 3000);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(enq(0, LOSSY, 1, 0, 1000), MMU_ADMIT); /* 1000, 2000, 3000 <= 3000 */
	CHECK_EQ(enq(0, LOSSY, 1, 0, 1000), MMU_DROP_QUEUE); /* 4000 > 3000 */
	CHECK_EQ(enq(0, LOSSY, 1, 0, 1), MMU_DROP_QUEUE);    /* 3001 > 3000 */
	CHECK_EQ(M.queue[1][0], 3000);
	CHECK_EQ(enq(0, LOSSY, 2, 0, 3000), MMU_ADMIT); /* another port */
	CHECK_EQ(enq(0, LOSSY, 1, 1, 3000), MMU_ADMIT); /* another class of the same port */
	mmu_dequeue(&M, 0, LOSSY, 1, 0, 1000, NULL);
	CHECK_EQ(enq(0, LOSSY, 1, 0, 1000), MMU_ADMIT); /* 3000 again */
	CHECK_EQ(M.c.dropped_queue, 2);
	CHECK_EQ(M.c.admitted, 6);
	CHECK_EQ(M.used, 9000);
	/* the static limit does not move with the buffer's use; 0 means the buffer */
	CHECK_EQ(mmu_queue_limit(&M), 3000);
	P.queue_limit = 0;
	start();
	CHECK_EQ(mmu_queue_limit(&M), 100000);
}

/* alpha 1, 10 KB buffer: limit = free buffer, taken before the packet is charged. */
static void test_dynamic_alpha_1(void)
{
	defaults();
	P.buffer_bytes = 10000;
	P.pfc_priorities = 0;
	P.xoff_bytes = P.xon_bytes = 0;
	P.headroom_bytes = 0;
	P.alpha = 1;
	start();
	CHECK_EQ(M.alpha_q16, 65536);
	CHECK_EQ(mmu_queue_limit(&M), 10000);
	/* queue (1,0), alone in the buffer (q == used): 500 first, then 1000s. Limits before each
	 * 1000: 9500, 8500, 7500, 6500, 5500 — the last one admits 4500 + 1000 = 5500 <= 5500
	 * (a limit computed after charging, 4500, would have refused it). */
	CHECK_EQ(enq(0, LOSSY, 1, 0, 500), MMU_ADMIT);
	static const uint64_t limit[] = {9500, 8500, 7500, 6500, 5500};
	for (unsigned i = 0; i < 5; i++) {
		CHECK_EQ(mmu_queue_limit(&M), limit[i]);
		CHECK_EQ(enq(0, LOSSY, 1, 0, 1000), MMU_ADMIT);
	}
	CHECK_EQ(M.queue[1][0], 5500);
	CHECK_EQ(mmu_queue_limit(&M), 4500);            /* the limit shrank below the queue */
	CHECK_EQ(enq(0, LOSSY, 1, 0, 1000), MMU_DROP_QUEUE); /* 6500 > 4500 */
	CHECK_EQ(enq(0, LOSSY, 1, 0, 1), MMU_DROP_QUEUE);    /* 5501 > 4500 */
	/* a second queue (2,0): used = 5500 + q2, limit = 4500 − q2: q2 0 -> 1000 (1000 <= 4500),
	 * 1000 -> 2000 (2000 <= 3500), then 3000 > 2500: refused */
	CHECK_EQ(enq(1, LOSSY, 2, 0, 1000), MMU_ADMIT);
	CHECK_EQ(enq(1, LOSSY, 2, 0, 1000), MMU_ADMIT);
	CHECK_EQ(mmu_queue_limit(&M), 2500);
	CHECK_EQ(enq(1, LOSSY, 2, 0, 1000), MMU_DROP_QUEUE);
	CHECK_EQ(M.used, 7500);
	CHECK_EQ(M.c.dropped_queue, 3);
	CHECK_EQ(M.c.dropped_buffer, 0);
	/* dequeuing frees buffer: the limit grows back */
	mmu_dequeue(&M, 0, LOSSY, 1, 0, 1000, NULL);
	CHECK_EQ(mmu_queue_limit(&M), 3500);
}

/* alpha 0.5, 12 KB buffer: one queue alone settles at alpha·B/(1+alpha) = 4000. */
static void test_dynamic_alpha_half(void)
{
	defaults();
	P.buffer_bytes = 12000;
	P.pfc_priorities = 0;
	P.xoff_bytes = P.xon_bytes = 0;
	P.headroom_bytes = 0;
	P.alpha = 0.5;
	start();
	CHECK_EQ(M.alpha_q16, 32768);
	/* q + 1000 <= (12000 − q) / 2: limits 6000, 5500, 5000, 4500 admit q = 1000 .. 4000 */
	static const uint64_t limit[] = {6000, 5500, 5000, 4500};
	for (unsigned i = 0; i < 4; i++) {
		CHECK_EQ(mmu_queue_limit(&M), limit[i]);
		CHECK_EQ(enq(0, LOSSY, 1, 0, 1000), MMU_ADMIT);
	}
	CHECK_EQ(mmu_queue_limit(&M), 4000);
	CHECK_EQ(enq(0, LOSSY, 1, 0, 1000), MMU_DROP_QUEUE); /* 5000 > 4000 */
	CHECK_EQ(M.queue[1][0], 4000);
	/* a second queue: limit = (8000 − q2) / 2: 4000, 3500, 3000 admit q2 = 1000 .. 3000;
	 * then 4000 > 2500 */
	for (int i = 0; i < 3; i++)
		CHECK_EQ(enq(0, LOSSY, 2, 5, 1000), MMU_ADMIT);
	CHECK_EQ(enq(0, LOSSY, 2, 5, 1000), MMU_DROP_QUEUE);
	CHECK_EQ(mmu_queue_limit(&M), 2500);
	/* floor: one more byte elsewhere leaves 4999 free, limit 2499 */
	CHECK_EQ(enq(0, LOSSY, 3, 0, 1), MMU_ADMIT);
	CHECK_EQ(mmu_queue_limit(&M), 2499);
	CHECK_EQ(M.used, 7001);
}

/* Q16: exact for 1/8 and 64, rounded to nearest otherwise; no overflow at the largest buffer. */
static void test_alpha_fixed_point(void)
{
	defaults();
	P.alpha = 0.125;
	start();
	CHECK_EQ(M.alpha_q16, 8192);
	CHECK_EQ(mmu_queue_limit(&M), 12500); /* 100000 / 8 */
	P.alpha = 0.3;                          /* 19660.8 */
	start();
	CHECK_EQ(M.alpha_q16, 19661);
	CHECK_EQ(mmu_queue_limit(&M), 30000); /* floor(100000 · 19661 / 65536) = floor(30000.3) */
	P.alpha = 1.0 / 65536;
	start();
	CHECK_EQ(M.alpha_q16, 1);
	P.alpha = 64;
	P.buffer_bytes = 1ULL << 40;
	start();
	CHECK_EQ(M.alpha_q16, 64 << 16);
	CHECK_EQ(mmu_queue_limit(&M), 1ULL << 46);
}

/* Rule 1 refuses lossy and lossless alike; it comes before the queue and headroom rules. */
static void test_buffer_full(void)
{
	defaults();
	P.buffer_bytes = 10000;
	P.xoff_bytes = 8000;
	P.xon_bytes = 4000;
	P.headroom_bytes = 10000;
	start();
	for (int i = 0; i < 9; i++)
		CHECK_EQ(enq(0, LOSSY, 1, 0, 1000), MMU_ADMIT);   /* used 9000 */
	CHECK_EQ(enq(0, LOSSY, 1, 0, 1001), MMU_DROP_BUFFER);   /* 10001 > 10000 (queue too: buffer first) */
	CHECK_EQ(enq(1, LOSSLESS, 2, 3, 1001), MMU_DROP_BUFFER); /* ingress (1,3) empty: only the buffer */
	CHECK_EQ(enq(1, LOSSLESS, 2, 3, 1000), MMU_ADMIT);      /* exactly full */
	CHECK_EQ(M.used, 10000);
	CHECK_EQ(enq(2, LOSSLESS, 3, 3, 1), MMU_DROP_BUFFER);
	CHECK_EQ(enq(2, LOSSY, 3, 0, 1), MMU_DROP_BUFFER);
	CHECK_EQ(M.c.dropped_buffer, 4);
	CHECK_EQ(M.c.dropped_queue, 0);
	CHECK_EQ(M.c.dropped_headroom, 0);
	CHECK_EQ(M.c.admitted, 10);
	CHECK_EQ(M.max_used, 10000);
	/* buffer first when the headroom is exceeded too: headroom 2000, so xoff + headroom =
	 * 10000 = the buffer; ingress (1,3) and used at 9000 */
	P.headroom_bytes = 2000;
	start();
	for (int i = 0; i < 9; i++)
		CHECK_EQ(enq(1, LOSSLESS, 2, 3, 1000), MMU_ADMIT);
	/* 9000 + 1001 > 10000 for both the buffer and xoff + headroom: the buffer is named */
	CHECK_EQ(enq(1, LOSSLESS, 2, 3, 1001), MMU_DROP_BUFFER);
	CHECK_EQ(M.c.dropped_headroom, 0);
}

/* XOFF on the byte that takes the ingress counter above xoff; XON on the dequeue that takes it
 * to xon; each reported once. */
static void test_xoff_xon_hysteresis(void)
{
	bool change;

	defaults();
	P.xoff_bytes = 8000;
	P.xon_bytes = 4000;
	P.headroom_bytes = 4000;
	start();
	for (int i = 0; i < 8; i++) { /* 1000 .. 8000: not above xoff */
		CHECK_EQ(mmu_enqueue(&M, 0, LOSSLESS, 1, 3, 1000, &change), MMU_ADMIT);
		CHECK(!change);
	}
	CHECK(!mmu_xoff(&M, 0, LOSSLESS));
	CHECK_EQ(mmu_enqueue(&M, 0, LOSSLESS, 1, 3, 1, &change), MMU_ADMIT); /* 8001 */
	CHECK(change);
	CHECK(mmu_xoff(&M, 0, LOSSLESS));
	CHECK_EQ(M.xoff_events[0][LOSSLESS], 1);
	CHECK_EQ(mmu_enqueue(&M, 0, LOSSLESS, 1, 3, 1000, &change), MMU_ADMIT); /* 9001: stays */
	CHECK(!change);
	CHECK_EQ(M.xoff_events[0][LOSSLESS], 1);
	/* down: 9000, 8000 .. 5000 (below xoff, above xon: XOFF stays), 4001 */
	mmu_dequeue(&M, 0, LOSSLESS, 1, 3, 1, &change);
	CHECK(!change);
	for (int i = 0; i < 4; i++) {
		mmu_dequeue(&M, 0, LOSSLESS, 1, 3, 1000, &change);
		CHECK(!change);
		CHECK(mmu_xoff(&M, 0, LOSSLESS));
	}
	CHECK_EQ(M.ingress[0][LOSSLESS], 5000);
	mmu_dequeue(&M, 0, LOSSLESS, 1, 3, 999, &change); /* 4001 > 4000 */
	CHECK(!change);
	CHECK(mmu_xoff(&M, 0, LOSSLESS));
	mmu_dequeue(&M, 0, LOSSLESS, 1, 3, 1, &change); /* 4000 <= 4000: XON */
	CHECK(change);
	CHECK(!mmu_xoff(&M, 0, LOSSLESS));
	CHECK_EQ(M.xon_events[0][LOSSLESS], 1);
	mmu_dequeue(&M, 0, LOSSLESS, 1, 3, 1000, &change); /* 3000: no second XON */
	CHECK(!change);
	CHECK_EQ(M.xon_events[0][LOSSLESS], 1);
	/* back up to 8000: no XOFF; 8001: the second one */
	CHECK_EQ(mmu_enqueue(&M, 0, LOSSLESS, 1, 3, 5000, &change), MMU_ADMIT);
	CHECK(!change);
	CHECK_EQ(mmu_enqueue(&M, 0, LOSSLESS, 1, 3, 1, &change), MMU_ADMIT);
	CHECK(change);
	CHECK_EQ(M.xoff_events[0][LOSSLESS], 2);

	/* xon == xoff (no hysteresis band): XOFF above 5000, XON back at 5000 */
	P.xoff_bytes = P.xon_bytes = 5000;
	start();
	CHECK_EQ(mmu_enqueue(&M, 0, LOSSLESS, 1, 3, 5000, &change), MMU_ADMIT);
	CHECK(!change);
	CHECK_EQ(mmu_enqueue(&M, 0, LOSSLESS, 1, 3, 1, &change), MMU_ADMIT);
	CHECK(change);
	mmu_dequeue(&M, 0, LOSSLESS, 1, 3, 1, &change);
	CHECK(change);
	CHECK(!mmu_xoff(&M, 0, LOSSLESS));
	/* pfc_change may be NULL */
	CHECK_EQ(mmu_enqueue(&M, 0, LOSSLESS, 1, 3, 1, NULL), MMU_ADMIT);
	CHECK(mmu_xoff(&M, 0, LOSSLESS));
}

/* xoff 8000 + headroom 2000: the ingress counter stops at 10000. */
static void test_headroom_overflow(void)
{
	bool change;

	defaults();
	P.xoff_bytes = 8000;
	P.xon_bytes = 4000;
	P.headroom_bytes = 2000;
	start();
	for (int i = 0; i < 10; i++) /* the 9th (9000) raises XOFF, the 10th fills the headroom */
		CHECK_EQ(enq(0, LOSSLESS, 1, 3, 1000), MMU_ADMIT);
	CHECK(mmu_xoff(&M, 0, LOSSLESS));
	CHECK_EQ(M.ingress[0][LOSSLESS], 10000);
	CHECK_EQ(mmu_enqueue(&M, 0, LOSSLESS, 1, 3, 1000, &change), MMU_DROP_HEADROOM); /* 11000 */
	CHECK(!change);
	CHECK_EQ(enq(0, LOSSLESS, 1, 3, 1), MMU_DROP_HEADROOM); /* 10001 */
	CHECK_EQ(M.c.dropped_headroom, 2);
	CHECK_EQ(M.ingress[0][LOSSLESS], 10000);
	CHECK_EQ(M.used, 10000);
	/* the same priority from another port has its own headroom, to the same egress queue */
	CHECK_EQ(enq(1, LOSSLESS, 1, 3, 1000), MMU_ADMIT);
	/* a packet bigger than what is left from below xoff to beyond the headroom: dropped, and
	 * XOFF is not raised (the counter stays at 7500 <= xoff) */
	CHECK_EQ(enq(2, LOSSLESS, 1, 3, 7500), MMU_ADMIT);
	CHECK_EQ(mmu_enqueue(&M, 2, LOSSLESS, 1, 3, 3000, &change), MMU_DROP_HEADROOM); /* 10500 */
	CHECK(!change);
	CHECK(!mmu_xoff(&M, 2, LOSSLESS));
	CHECK_EQ(M.c.dropped_headroom, 3);
	/* a lossy priority from the same port has no headroom limit: 20 KB is fine */
	CHECK_EQ(enq(0, LOSSY, 1, 0, 20000), MMU_ADMIT);
	/* dequeuing makes room in the headroom again */
	mmu_dequeue(&M, 0, LOSSLESS, 1, 3, 1000, NULL);
	CHECK_EQ(enq(0, LOSSLESS, 1, 3, 1000), MMU_ADMIT);
}

/* Rule 2 does not apply to lossless priorities, static or dynamic. */
static void test_lossless_ignores_queue_threshold(void)
{
	defaults();
	P.queue_limit = 2000;
	P.headroom_bytes = 10000;
	start();
	for (int i = 0; i < 10; i++) /* 10000 in queue (1,3), five times its limit */
		CHECK_EQ(enq(0, LOSSLESS, 1, 3, 1000), MMU_ADMIT);
	CHECK_EQ(M.queue[1][3], 10000);
	/* a lossy packet into the same queue is refused: the queue is over its threshold */
	CHECK_EQ(enq(0, LOSSY, 1, 3, 1000), MMU_DROP_QUEUE);
	CHECK_EQ(M.c.dropped_queue, 1);

	/* dynamic, alpha 1/8: 3 ports × 10000 lossless (each under xoff 20000) into (3,3):
	 * queue 30000 while the limit falls to (100000 − 30000) / 8 = 8750 */
	P.queue_limit = 0;
	P.alpha = 0.125;
	start();
	for (unsigned in = 0; in < 3; in++)
		for (int i = 0; i < 10; i++)
			CHECK_EQ(enq(in, LOSSLESS, 3, 3, 1000), MMU_ADMIT);
	CHECK_EQ(M.queue[3][3], 30000);
	CHECK_EQ(mmu_queue_limit(&M), 8750);
	CHECK_EQ(enq(0, LOSSY, 3, 3, 64), MMU_DROP_QUEUE);
	CHECK_EQ(enq(0, LOSSY, 2, 0, 1000), MMU_ADMIT); /* 1000 <= 8750 */
	CHECK_EQ(M.c.dropped_queue, 1);
	CHECK_EQ(M.c.admitted, 31);
}

/* Counters, maxima (kept on dequeue), and lossy priorities charged but not driving PFC. */
static void test_counters_maxima(void)
{
	defaults();
	P.queue_limit = 50000;
	start();
	CHECK_EQ(enq(0, LOSSY, 1, 0, 30000), MMU_ADMIT);
	CHECK_EQ(enq(0, LOSSY, 1, 0, 30000), MMU_DROP_QUEUE); /* 60000 > 50000 */
	CHECK_EQ(enq(2, LOSSY, 3, 0, 15000), MMU_ADMIT);
	CHECK_EQ(enq(2, LOSSLESS, 3, 3, 25000), MMU_ADMIT);    /* 25000 <= 20000 + 5000 */
	CHECK_EQ(enq(2, LOSSLESS, 3, 3, 1), MMU_DROP_HEADROOM);
	CHECK_EQ(enq(1, LOSSY, 0, 1, 30001), MMU_DROP_BUFFER); /* 70000 + 30001 */
	/* lossy ingress (0,0) holds 30000 > xoff: counted, but no XOFF for a lossy priority */
	CHECK_EQ(M.ingress[0][LOSSY], 30000);
	CHECK(!mmu_xoff(&M, 0, LOSSY));
	CHECK_EQ(M.xoff_events[0][LOSSY], 0);
	CHECK(mmu_xoff(&M, 2, LOSSLESS));
	CHECK_EQ(M.c.admitted, 3);
	CHECK_EQ(M.c.dropped_queue, 1);
	CHECK_EQ(M.c.dropped_headroom, 1);
	CHECK_EQ(M.c.dropped_buffer, 1);
	CHECK_EQ(M.used, 70000);
	/* drain everything: the maxima stay */
	mmu_dequeue(&M, 0, LOSSY, 1, 0, 30000, NULL);
	mmu_dequeue(&M, 2, LOSSY, 3, 0, 15000, NULL);
	mmu_dequeue(&M, 2, LOSSLESS, 3, 3, 25000, NULL);
	CHECK_EQ(M.used, 0);
	CHECK_EQ(M.max_used, 70000);
	CHECK_EQ(M.max_queue[1][0], 30000);
	CHECK_EQ(M.max_queue[3][0], 15000);
	CHECK_EQ(M.max_queue[3][3], 25000);
	CHECK_EQ(M.max_ingress[0][LOSSY], 30000);
	CHECK_EQ(M.max_ingress[2][LOSSY], 15000);
	CHECK_EQ(M.max_ingress[2][LOSSLESS], 25000);
	CHECK_EQ(M.max_ingress[1][1], 0); /* the refused packet left no trace */
	CHECK_EQ(M.max_queue[0][1], 0);
	CHECK(!mmu_xoff(&M, 2, LOSSLESS));
	CHECK_EQ(M.xon_events[2][LOSSLESS], 1);
}

/* Each (ingress port, priority) has its own PFC state; each (egress port, class) its own queue. */
static void test_per_port_independence(void)
{
	bool change;

	defaults();
	P.pfc_priorities = 1 << 3 | 1 << 4;
	P.queue_limit = 5000;
	start();
	/* (0,3) over xoff: only it */
	CHECK_EQ(mmu_enqueue(&M, 0, 3, 1, 3, 20001, &change), MMU_ADMIT);
	CHECK(change);
	for (unsigned in = 0; in < 4; in++)
		for (unsigned pr = 0; pr < MMU_PRIORITIES; pr++)
			CHECK_EQ(mmu_xoff(&M, in, pr), in == 0 && pr == 3);
	/* (0,4) and (1,3) just at xoff: no XOFF; then over: their own */
	CHECK_EQ(mmu_enqueue(&M, 0, 4, 1, 4, 20000, &change), MMU_ADMIT);
	CHECK(!change);
	CHECK_EQ(mmu_enqueue(&M, 1, 3, 1, 3, 20000, &change), MMU_ADMIT);
	CHECK(!change);
	CHECK_EQ(mmu_enqueue(&M, 1, 3, 2, 3, 1, &change), MMU_ADMIT);
	CHECK(change);
	CHECK(mmu_xoff(&M, 1, 3));
	CHECK(!mmu_xoff(&M, 0, 4));
	/* XON of (0,3) leaves (1,3) in XOFF */
	mmu_dequeue(&M, 0, 3, 1, 3, 20001, &change);
	CHECK(change);
	CHECK(!mmu_xoff(&M, 0, 3));
	CHECK(mmu_xoff(&M, 1, 3));
	CHECK_EQ(M.xoff_events[1][3], 1);
	CHECK_EQ(M.xon_events[1][3], 0);
	/* a full lossy queue (2,0) does not close (2,1) or (3,0) */
	CHECK_EQ(enq(0, LOSSY, 2, 0, 5000), MMU_ADMIT);
	CHECK_EQ(enq(0, LOSSY, 2, 0, 1), MMU_DROP_QUEUE);
	CHECK_EQ(enq(0, LOSSY, 2, 1, 5000), MMU_ADMIT);
	CHECK_EQ(enq(0, LOSSY, 3, 0, 5000), MMU_ADMIT);
	/* the ingress counters of one port add up across egress queues: (1,3) went to 1 and 2 */
	CHECK_EQ(M.ingress[1][3], 20001);
	CHECK_EQ(M.queue[1][3], 20000);
	CHECK_EQ(M.queue[2][3], 1);
	CHECK_EQ(M.ingress[0][LOSSY], 15000);
}

/* One bad setting: the check names it and says what is allowed. */
static void expect_bad(const char *name, const char *allowed)
{
	const char *why = NULL, *bad = mmu_params_check(&P, &why);

	CHECK(bad && strcmp(bad, name) == 0);
	CHECK(why && strcmp(why, allowed) == 0);
	if (!bad || strcmp(bad, name))
		printf("  expected %s, got %s\n", name, bad ? bad : "NULL");
}

static void test_params_check(void)
{
#define BAD(field, value, name, allowed) (defaults(), P.field = (value), expect_bad(name, allowed))
#define GOOD(field, value)                                                                         \
	do {                                                                                       \
		defaults();                                                                        \
		P.field = (value);                                                                 \
		CHECK(mmu_params_check(&P, NULL) == NULL);                                         \
	} while (0)
	defaults();
	CHECK(mmu_params_check(&P, NULL) == NULL);
	BAD(buffer_bytes, 0, "buffer_bytes", "1 .. 2^40");
	BAD(buffer_bytes, (1ULL << 40) + 1, "buffer_bytes", "1 .. 2^40");
	GOOD(buffer_bytes, 1ULL << 40);
	BAD(queue_limit, 100001, "queue_limit", "<= buffer_bytes (0: the buffer)");
	GOOD(queue_limit, 100000);
	BAD(alpha, -0.5, "alpha", "0 (static threshold) or [1/65536, 64]");
	BAD(alpha, 64.001, "alpha", "0 (static threshold) or [1/65536, 64]");
	BAD(alpha, 1e-6, "alpha", "0 (static threshold) or [1/65536, 64]"); /* 0 in Q16 */
	BAD(alpha, NAN, "alpha", "0 (static threshold) or [1/65536, 64]");
	BAD(alpha, INFINITY, "alpha", "0 (static threshold) or [1/65536, 64]");
	GOOD(alpha, 64);
	GOOD(alpha, 1.0 / 65536);
	BAD(xon_bytes, 20001, "xon_bytes", "<= xoff_bytes");
	GOOD(xon_bytes, 20000);
	defaults();
	P.xoff_bytes = P.xon_bytes = 0;
	expect_bad("xoff_bytes", "> 0 when pfc_priorities is set");
	P.pfc_priorities = 0; /* no lossless priority: thresholds unused */
	CHECK(mmu_params_check(&P, NULL) == NULL);
	BAD(xoff_bytes, 100001, "xoff_bytes", "<= buffer_bytes");
	GOOD(xoff_bytes, 100000);
	BAD(headroom_bytes, 100001, "headroom_bytes", "<= buffer_bytes");
	GOOD(headroom_bytes, 0); /* allowed: a lossless packet that would pass xoff is dropped, no XOFF */
	/* the first bad parameter is named; why may be NULL */
	defaults();
	P.buffer_bytes = 0;
	P.alpha = -1;
	CHECK(mmu_params_check(&P, NULL) && strcmp(mmu_params_check(&P, NULL), "buffer_bytes") == 0);
#undef BAD
#undef GOOD
}

/* The random run's reference model: the rules of switch_mmu.h written out again, with the dynamic
 * limit in double (exact for the alphas used: powers of two times a small integer). */
struct pkt {
	unsigned in, prio, out, tc;
	uint32_t bytes;
};

#define INFLIGHT 8192

static struct pkt inflight[INFLIGHT];

static void check_invariants(const bool ref_xoff[MMU_MAX_PORTS][MMU_PRIORITIES], unsigned n_ports)
{
	uint64_t sum_q = 0, sum_in = 0;

	for (unsigned p = 0; p < n_ports; p++) {
		uint64_t port_q = 0;

		for (unsigned i = 0; i < MMU_PRIORITIES; i++)
			port_q += M.queue[p][i];
		CHECK_EQ(M.port_queue[p], port_q); /* a port's load, every class (the flowlet choice's) */
	}
	for (unsigned p = 0; p < n_ports; p++)
		for (unsigned i = 0; i < MMU_PRIORITIES; i++) {
			sum_q += M.queue[p][i];
			sum_in += M.ingress[p][i];
			CHECK_EQ(M.xoff[p][i], ref_xoff[p][i]);
			CHECK(M.max_queue[p][i] >= M.queue[p][i]);
			CHECK(M.max_ingress[p][i] >= M.ingress[p][i]);
			if (P.pfc_priorities >> i & 1)
				CHECK(M.ingress[p][i] <= P.xoff_bytes + P.headroom_bytes);
			else
				CHECK(!M.xoff[p][i]);
		}
	CHECK_EQ(M.used, sum_q);
	CHECK_EQ(M.used, sum_in);
	CHECK(M.used <= P.buffer_bytes);
	CHECK(M.max_used >= M.used);
}

static enum mmu_verdict ref_verdict(const struct pkt *k)
{
	bool pfc = P.pfc_priorities >> k->prio & 1;
	uint64_t limit = P.alpha > 0 ? (uint64_t)(P.alpha * (double)(P.buffer_bytes - M.used))
				     : P.queue_limit ? P.queue_limit : P.buffer_bytes;

	if (M.used + k->bytes > P.buffer_bytes)
		return MMU_DROP_BUFFER;
	if (!pfc && M.queue[k->out][k->tc] + k->bytes > limit)
		return MMU_DROP_QUEUE;
	if (pfc && M.ingress[k->in][k->prio] + k->bytes > P.xoff_bytes + P.headroom_bytes)
		return MMU_DROP_HEADROOM;
	return MMU_ADMIT;
}

static void random_run(uint64_t seed, uint64_t verdicts[4], uint64_t *transitions)
{
	const unsigned n_ports = 4;
	bool ref_xoff[MMU_MAX_PORTS][MMU_PRIORITIES] = {{0}};
	uint64_t ref_ingress[MMU_MAX_PORTS][MMU_PRIORITIES] = {{0}};
	unsigned n = 0, enqueues = 0;

	testlib_rng_state = seed;
	mmu_init(&M, &P, n_ports);
	for (unsigned step = 0; step < 40000; step++) {
		/* phases of 1000 steps, alternately filling (70 % enqueues) and draining (30 %) */
		bool fill = (step / 1000) % 2 == 0;

		if (n < INFLIGHT && (n == 0 || test_rand_below(100) < (fill ? 70u : 30u))) {
			struct pkt k;
			enum mmu_verdict want, got;
			uint64_t used = M.used;
			bool change = false, want_change = false;

			k.in = (unsigned)test_rand_below(n_ports);
			/* half of them lossless (3 or 4), so that PFC has work */
			k.prio = test_rand_below(2) ? 3 + (unsigned)test_rand_below(2)
						    : (unsigned)test_rand_below(MMU_PRIORITIES);
			k.out = (unsigned)test_rand_below(n_ports);
			k.tc = (unsigned)test_rand_below(MMU_PRIORITIES);
			k.bytes = (uint32_t)(64 + test_rand_below(4033)); /* 64 .. 4096 */
			want = ref_verdict(&k);
			got = mmu_enqueue(&M, k.in, k.prio, k.out, k.tc, k.bytes, &change);
			CHECK_EQ(got, want);
			verdicts[got]++;
			enqueues++;
			if (got == MMU_ADMIT) {
				inflight[n++] = k;
				ref_ingress[k.in][k.prio] += k.bytes;
				if ((P.pfc_priorities >> k.prio & 1) && !ref_xoff[k.in][k.prio] &&
				    ref_ingress[k.in][k.prio] > P.xoff_bytes)
					ref_xoff[k.in][k.prio] = want_change = true;
				CHECK_EQ(M.used, used + k.bytes);
			} else {
				CHECK_EQ(M.used, used);
			}
			CHECK_EQ(change, want_change);
		} else {
			unsigned j = (unsigned)test_rand_below(n);
			struct pkt k = inflight[j];
			bool change = false, want_change = false;

			inflight[j] = inflight[--n];
			mmu_dequeue(&M, k.in, k.prio, k.out, k.tc, k.bytes, &change);
			ref_ingress[k.in][k.prio] -= k.bytes;
			if (ref_xoff[k.in][k.prio] && ref_ingress[k.in][k.prio] <= P.xon_bytes) {
				ref_xoff[k.in][k.prio] = false;
				want_change = true;
			}
			CHECK_EQ(change, want_change);
		}
		check_invariants(ref_xoff, n_ports);
		if (testlib_case_failed) {
			printf("  seed 0x%" PRIx64 " step %u\n", seed, step);
			return;
		}
	}
	for (unsigned p = 0; p < n_ports; p++)
		for (unsigned i = 0; i < MMU_PRIORITIES; i++) {
			CHECK_EQ(M.ingress[p][i], ref_ingress[p][i]);
			*transitions += M.xoff_events[p][i] + M.xon_events[p][i];
		}
	CHECK_EQ(M.c.admitted + M.c.dropped_buffer + M.c.dropped_queue + M.c.dropped_headroom, enqueues);
	/* drain: everything back to 0, every XOFF released */
	while (n) {
		struct pkt k = inflight[--n];

		mmu_dequeue(&M, k.in, k.prio, k.out, k.tc, k.bytes, NULL);
	}
	CHECK_EQ(M.used, 0);
	for (unsigned p = 0; p < n_ports; p++)
		for (unsigned i = 0; i < MMU_PRIORITIES; i++) {
			CHECK(!M.xoff[p][i]);
			CHECK_EQ(M.xoff_events[p][i], M.xon_events[p][i]);
		}
}

/* 64 KB buffer, 4 ports, priorities 3 and 4 lossless (xoff 8000, xon 4000, headroom 6000: the
 * 8 lossless ingress counters can hold 112 KB, more than the buffer), under static and dynamic
 * thresholds; every verdict and PFC transition has to occur. */
static void test_random_invariants(void)
{
	static const double alphas[] = {0, 0, 0.125, 0.5, 1, 2, 8};
	uint64_t verdicts[4] = {0}, transitions = 0;

	for (unsigned c = 0; c < sizeof(alphas) / sizeof(alphas[0]); c++) {
		memset(&P, 0, sizeof(P));
		P.buffer_bytes = 65536;
		P.queue_limit = c == 0 ? 12000 : 0;
		P.alpha = alphas[c];
		P.pfc_priorities = 1 << 3 | 1 << 4;
		P.xoff_bytes = 8000;
		P.xon_bytes = 4000;
		P.headroom_bytes = 6000;
		CHECK(mmu_params_check(&P, NULL) == NULL);
		random_run(0x5EED0000 + c, verdicts, &transitions);
		if (testlib_case_failed)
			return;
	}
	for (unsigned v = 0; v < 4; v++)
		CHECK(verdicts[v] > 100);
	CHECK(transitions > 100);
}

int main(void)
{
	RUN(test_static_threshold_drop);
	RUN(test_dynamic_alpha_1);
	RUN(test_dynamic_alpha_half);
	RUN(test_alpha_fixed_point);
	RUN(test_buffer_full);
	RUN(test_xoff_xon_hysteresis);
	RUN(test_headroom_overflow);
	RUN(test_lossless_ignores_queue_threshold);
	RUN(test_counters_maxima);
	RUN(test_per_port_independence);
	RUN(test_params_check);
	RUN(test_random_invariants);
	return testlib_finish("test_switch_mmu");
}

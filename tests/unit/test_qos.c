/* SPDX-License-Identifier: BSD-3-Clause
 *
 * qos/: the classification map and the PFC pause state (IEEE 802.1Qbb receiver semantics), with
 * a made-up clock: 1 GHz "TSC" so that cycles are nanoseconds.
 */
#include "classify.h"
#include "pfc.h"
#include "pfc_watch.h"
#include "testlib.h"

#define HZ 1000000000ULL

static void test_default_map(void)
{
	struct qos_map m;

	qos_map_default(&m);
	CHECK_EQ(qos_priority(&m, 26, false, 0), 3); /* RoCE data */
	CHECK_EQ(qos_priority(&m, 48, false, 0), 6); /* CNP */
	CHECK_EQ(qos_priority(&m, 0, true, 5), 0);   /* trust dscp ignores PCP */
	m.trust = QOS_TRUST_PCP;
	CHECK_EQ(qos_priority(&m, 26, true, 5), 5);
	CHECK_EQ(qos_priority(&m, 26, false, 5), 0); /* untagged under trust pcp */
	for (unsigned p = 0; p < 8; p++)
		CHECK_EQ(m.prio_to_tc[p], p);
}

static void test_quanta_to_time(void)
{
	struct pfc_pause p;
	uint16_t q[8] = {0};

	/* 100 Gb/s: a quantum is 5.12 ns; 0xFFFF quanta ~ 335.5 us */
	pfc_pause_init(&p, 100.0, HZ);
	q[3] = 0xFFFF;
	pfc_pause_frame(&p, 1 << 3, q, 1000);
	CHECK(pfc_paused(&p, 3, 1000));
	CHECK(!pfc_paused(&p, 2, 1000));
	CHECK(pfc_until(&p, 3) >= 1000 + 335539 && pfc_until(&p, 3) <= 1000 + 335541);
	/* 10 Gb/s: 51.2 ns a quantum */
	pfc_pause_init(&p, 10.0, HZ);
	q[3] = 1000;
	pfc_pause_frame(&p, 1 << 3, q, 0);
	CHECK(pfc_until(&p, 3) >= 51199 && pfc_until(&p, 3) <= 51201);
}

static void test_enable_bits_and_reload(void)
{
	struct pfc_pause p;
	uint16_t q[8] = {100, 100, 100, 100, 100, 100, 100, 100};

	pfc_pause_init(&p, 1.0, HZ); /* 512 ns a quantum */
	pfc_pause_frame(&p, 0x28, q, 0); /* priorities 3 and 5 */
	for (unsigned i = 0; i < 8; i++)
		CHECK_EQ(pfc_paused(&p, i, 1), i == 3 || i == 5);
	CHECK_EQ(p.frames[3], 1);
	CHECK_EQ(p.frames[0], 0);
	/* a later frame reloads the timer from its own arrival */
	q[3] = 10;
	pfc_pause_frame(&p, 0x08, q, 1000);
	CHECK_EQ(pfc_until(&p, 3), 1000 + 5120);
	CHECK_EQ(pfc_until(&p, 5), 51200);
	/* quanta 0 resumes at once */
	q[5] = 0;
	pfc_pause_frame(&p, 0x20, q, 2000);
	CHECK(!pfc_paused(&p, 5, 2000));
	CHECK_EQ(p.xoff[5], 1);
	CHECK_EQ(p.frames[5], 2);
	CHECK_EQ(pfc_paused_ns(&p, 5, 1000000), 2000);
}

static void test_paused_time_is_the_union(void)
{
	struct pfc_pause p;
	uint16_t q[8] = {0};

	pfc_pause_init(&p, 1.0, HZ);
	q[0] = 10; /* 5120 ns */
	pfc_pause_frame(&p, 1, q, 0);
	pfc_pause_frame(&p, 1, q, 1000);   /* refresh: paused 0 .. 6120 */
	CHECK_EQ(pfc_paused_ns(&p, 0, 3000), 3000);
	CHECK_EQ(pfc_paused_ns(&p, 0, 100000), 6120);
	pfc_pause_frame(&p, 1, q, 10000);  /* a second pause, after a gap: 10000 .. 15120 */
	CHECK_EQ(pfc_paused_ns(&p, 0, 100000), 6120 + 5120);
	pfc_pause_frame(&p, 1, q, 200000); /* the earlier one folded once, not twice */
	CHECK_EQ(pfc_paused_ns(&p, 0, 200000), 6120 + 5120);
	CHECK_EQ(pfc_paused_ns(&p, 0, 300000), 6120 + 5120 + 5120);
}

static void test_classic_pause(void)
{
	struct pfc_pause p;

	pfc_pause_init(&p, 25.0, HZ); /* 20.48 ns a quantum */
	pfc_pause_all(&p, 1000, 0);
	for (unsigned i = 0; i < 8; i++) {
		CHECK(pfc_paused(&p, i, 20479));
		CHECK(!pfc_paused(&p, i, 20481));
	}
	pfc_pause_all(&p, 0, 100);
	for (unsigned i = 0; i < 8; i++)
		CHECK(!pfc_paused(&p, i, 100));
}

/* 1 GHz clock, drain 0.8 Gb/s = 0.1 byte a ns; 1,000-byte frames every 100 ns. */
static void test_watch_xoff_refresh_xon(void)
{
	struct pfc_watch w;
	uint8_t xoff = 0, xon = 0;
	uint64_t t = 0;
	unsigned n_xoff = 0, first_xoff = 0;

	/* 1 Gb/s link: 65535 quanta = 33.55 ms; refresh given: 10 us */
	pfc_watch_init(&w, 1 << 3, 10000, 5000, 65535, 10.0, 0.8, 1.0, HZ);
	for (unsigned i = 0; i < 12; i++, t += 100) {
		xoff = xon = 0;
		pfc_watch_arrival(&w, 3, 1000, t, &xoff, &xon);
		if (xoff && !first_xoff)
			first_xoff = i + 1;
		n_xoff += xoff != 0;
		CHECK_EQ(xon, 0);
	}
	/* backlog after k arrivals: 1000 + (k-1) * 990; above 10,000 at the 11th (t = 1000) */
	CHECK_EQ(first_xoff, 11);
	CHECK_EQ(n_xoff, 1);
	CHECK_EQ(w.prio[3].episodes, 1);
	CHECK_EQ(w.prio[3].max_backlog, 1000 + 11 * 990);
	/* arrivals of another priority are not watched */
	xoff = 0;
	pfc_watch_arrival(&w, 2, 100000, t, &xoff, &xon);
	CHECK_EQ(xoff, 0);
	/* still above Xon one refresh interval after the XOFF: sent again */
	xoff = xon = 0;
	pfc_watch_tick(&w, 1000 + 10000, &xoff, &xon);
	CHECK_EQ(xoff, 1 << 3);
	CHECK_EQ(w.prio[3].xoff_sent, 2);
	CHECK_EQ(w.prio[3].backlog, 11890 - 990);
	/* drained to 2,000 <= Xon: XON */
	xoff = xon = 0;
	pfc_watch_tick(&w, 100000, &xoff, &xon);
	CHECK_EQ(xon, 1 << 3);
	CHECK_EQ(xoff, 0);
	CHECK_EQ(w.prio[3].xon_sent, 1);
	CHECK_EQ(w.prio[3].backlog, 2000);
	/* the response: the one frame that arrived after the XOFF (the 12th), 100 ns after it */
	CHECK_EQ(w.prio[3].response_bytes, 1000);
	CHECK_EQ(w.prio[3].response_cycles, 100);
}

static void test_watch_default_refresh(void)
{
	struct pfc_watch w;

	/* 100 Gb/s, 0xFFFF quanta: 335.5 us pause, refreshed at half: 167.8 us */
	pfc_watch_init(&w, 0xFF, 1, 0, 0xFFFF, 0, 10.0, 100.0, HZ);
	CHECK(w.refresh_cycles >= 167768 && w.refresh_cycles <= 167771);
}

int main(void)
{
	RUN(test_default_map);
	RUN(test_quanta_to_time);
	RUN(test_enable_bits_and_reload);
	RUN(test_paused_time_is_the_union);
	RUN(test_classic_pause);
	RUN(test_watch_xoff_refresh_xon);
	RUN(test_watch_default_refresh);
	return testlib_finish("test_qos");
}

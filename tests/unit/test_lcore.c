/* SPDX-License-Identifier: BSD-3-Clause
 *
 * datapath/lcore.c, the worker loop, on a ring cable between two ports "a" and "b": the run is
 * planned from a config text by the engine's own planning (engine/plan.c) and lcore_main runs on
 * worker lcore 1 as the engine launches it, while the main lcore waits, stops it and reads the
 * counters. What is checked is counted, not timed: frames and bytes as computed by hand, what the
 * RX role accounted, that the loop ends (the egress case bounds what was sent by the time that
 * passed, as measured: upper bounds, which a busy machine only loosens).
 *
 * Each case runs in a child process of its own, with an EAL of its own (no hugepages, PCI or
 * shared files, a file prefix of its own): a plan names its pools, rings and tables, and two
 * plans in one EAL would collide.
 */
#include <sys/wait.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "egress.h"
#include "engine_internal.h"
#include "lcore.h"
#include "test_eal.h"
#include "testlib.h"

#define WORKER 1
#define TIMEOUT_S 20 /* a busy machine: generous, never reached when the loop works */

/* Two ports on one cable; `roles` and `flows` are the config's lists. */
#define CONFIG(roles, flows)                                                                               \
	"eal = { lcores = \"0-1\"; };\n"                                                                   \
	"ports = (\n"                                                                                      \
	"  { name = \"a\"; device = \"ring:tl:a\"; mac = \"02:00:00:00:00:01\"; ipv4 = \"10.0.0.1\";\n"   \
	"    link_speed_gbps = 100.0; rx_desc = 256; tx_desc = 256; },\n"                                  \
	"  { name = \"b\"; device = \"ring:tl:b\"; mac = \"02:00:00:00:00:02\"; ipv4 = \"10.0.0.2\";\n"   \
	"    link_speed_gbps = 100.0; rx_desc = 256; tx_desc = 256; });\n"                                 \
	"lcores = (" roles ");\n"                                                                          \
	"flows = (" flows ");\n"

/* UC WRITE, 10 messages of 3000 bytes at an IB MTU of 1024, unpaced: per message a WRITE_FIRST
 * (BTH + RETH) of 1024, a MIDDLE of 1024 and a LAST of 952 payload bytes, each frame with
 * Ethernet 14, IPv4 20, UDP 8, BTH 12 and ICRC 4: 3 x 58 + 16 + 3000 = 3190 bytes. */
#define WRITE_FLOW(transport, messages)                                                                  \
	"{ name = \"w\"; port = \"a\"; dst_mac = \"02:00:00:00:00:02\"; dst_ip = \"10.0.0.2\";\n"         \
	"  transport = \"" transport "\"; ops = { write = 1; }; message_size = 3000; mtu = 1024;\n"         \
	"  qpn = 0x100; dest_qpn = 0x200; stop = { messages = " messages "; }; }"
#define UC_FLOW WRITE_FLOW("uc", "10")
#define UC_FRAMES 30
#define UC_BYTES (10 * 3190)

static struct engine *e;
static struct engine_config cfg;

static double seconds(uint64_t tsc) { return (double)tsc / (double)rte_get_tsc_hz(); }

/* The run planned as engine.c's prepare plans it, without its printing, capture or memif gate. */
static int plan(const char *text)
{
	char err[512] = "";

	e = calloc(1, sizeof(*e));
	if (!e || config_load_string(text, "t.cfg", &cfg, err, sizeof(err)))
		goto failed;
	e->run.cfg = &cfg;
	e->run.tsc_hz = rte_get_tsc_hz();
	clock_time_base_init(e->run.tsc_hz);
	e->session = 1;
	if (engine_setup_ports(e, err, sizeof(err)))
		goto failed;
	for (unsigned i = 0; i < cfg.n_roles; i++)
		if (engine_add_role(e, &cfg.roles[i], err, sizeof(err)))
			goto failed;
	e->run.start_tsc = rte_rdtsc() + e->run.tsc_hz / 100;
	if (engine_plan_switch(e, err, sizeof(err)) || engine_plan_qps(e, err, sizeof(err)))
		goto failed;
	engine_start_after_planning(e);
	if (engine_setup_pfc_generators(e, err, sizeof(err)))
		goto failed;
	return 0;
failed:
	printf("  plan: %s\n", err);
	return -1;
}

static struct lcore_work *worker(void) { return e->run.work[WORKER]; }

/* Waits up to TIMEOUT_S for done(); whether it came. */
static bool wait_for(bool (*done)(void))
{
	uint64_t start = rte_rdtsc();

	while (!done()) {
		if (seconds(rte_rdtsc() - start) > TIMEOUT_S)
			return false;
		rte_delay_us_sleep(1000);
	}
	return true;
}

static bool tx_finished(void) { return __atomic_load_n(&worker()->tx_finished, __ATOMIC_ACQUIRE); }
static bool loop_returned(void) { return rte_eal_get_lcore_state(WORKER) != RUNNING; }

/* (net_ring counts packets, not bytes) */
static struct rte_eth_stats port_stats(unsigned port)
{
	struct rte_eth_stats st;

	memset(&st, 0, sizeof(st));
	rte_eth_stats_get(e->run.ports[port].port_id, &st);
	return st;
}

/* The frames waiting in a port's RX ring taken and freed: added to *frames and *bytes. */
static void drain_frames(unsigned port, uint64_t *frames, uint64_t *bytes)
{
	struct rte_mbuf *m[32];
	uint16_t n;

	while ((n = rte_eth_rx_burst(e->run.ports[port].port_id, 0, m, 32)) > 0) {
		for (uint16_t i = 0; i < n; i++)
			*bytes += m[i]->pkt_len;
		*frames += n;
		rte_pktmbuf_free_bulk(m, n);
	}
}

static const struct rx_port_counters *rx_of(unsigned port) { return rx_port_counters(worker()->rx_ctx, (uint16_t)port); }

static uint64_t rx_frames_b(void) { return __atomic_load_n(&rx_of(1)->frames, __ATOMIC_RELAXED); }
static uint64_t expected_at_b;
static bool b_has_all(void) { return rx_frames_b() >= expected_at_b; }

/* The loop returned (its status 0); a loop that does not return ends the case's process. */
static void join(void)
{
	if (!wait_for(loop_returned)) {
		printf("  %s:%d: lcore_main did not return\n", __FILE__, __LINE__);
		fflush(stdout);
		_exit(1);
	}
	CHECK_EQ(rte_eal_wait_lcore(WORKER), 0);
}

/* The main lcore's stop, as the engine's supervisor does it: TX, then RX once what was sent has
 * arrived; the loop must return. */
static void stop_and_join(void)
{
	lcore_request_tx_stop(&e->stop);
	CHECK(wait_for(tx_finished));
	expected_at_b = port_stats(0).opackets;
	if (worker()->rx_ctx)
		CHECK(wait_for(b_has_all));
	lcore_request_rx_stop(&e->stop);
	join();
}

static bool launch(void)
{
	bool ok = worker() && rte_eal_remote_launch(lcore_main, worker(), WORKER) == 0;

	CHECK(ok);
	return ok;
}

/* The run of the config text planned and its loop launched on the worker lcore. */
static bool plan_and_launch(const char *text)
{
	bool planned = plan(text) == 0;

	CHECK(planned);
	return planned && launch();
}

/* ---- the cases (each in its own process) ------------------------------------------------------ */

/* A flow of 10 UC WRITE messages leaves exactly its 30 frames and 31,900 bytes, the TX role then
 * counts as finished, and the RX role of b accounts each frame to the receiver QP. */
static void case_flow_frames_and_bytes(void)
{
	const struct rx_qp *q;

	if (!plan_and_launch(CONFIG("{ lcore = 1; port = \"a\"; role = \"tx\"; }, { lcore = 1; port = \"b\"; role = \"rx\"; }", UC_FLOW)))
		return;
	CHECK(wait_for(tx_finished));
	expected_at_b = UC_FRAMES;
	CHECK(wait_for(b_has_all));
	stop_and_join();
	CHECK_EQ(port_stats(0).opackets, UC_FRAMES);
	CHECK_EQ(rx_of(1)->frames, UC_FRAMES);
	CHECK_EQ(rx_of(1)->bytes, UC_BYTES);
	CHECK_EQ(rx_of(1)->kind[WIRE_KIND_ROCE], UC_FRAMES);
	CHECK_EQ(rx_of(1)->kind[WIRE_KIND_MALFORMED], 0);
	CHECK_EQ(rx_of(1)->prio_frames[26 >> 3], UC_FRAMES); /* DSCP 26 (the default): priority 3 */
	q = rx_qp_find(worker()->rx_ctx, 1, 0x200);
	CHECK(q != NULL);
	if (q) {
		CHECK_EQ(q->c.packets, UC_FRAMES);
		CHECK_EQ(q->c.messages, 10);
		CHECK_EQ(q->c.payload_bytes, 10 * 3000);
		CHECK_EQ(q->c.lost, 0);
		CHECK_EQ(q->c.icrc_errors, 0);
	}
	CHECK_EQ(worker()->tx[0].tx_unsent, 0);
	CHECK_EQ(worker()->tx[0].mbuf_alloc_fail, 0);
}

/* An lcore with only TX roles returns by itself once its flows are done: no stop request. */
static void case_tx_only_lcore_returns_when_done(void)
{
	uint64_t frames = 0, bytes = 0;

	if (!plan_and_launch(CONFIG("{ lcore = 1; port = \"a\"; role = \"tx\"; }", UC_FLOW)))
		return;
	join();
	CHECK(tx_finished());
	CHECK_EQ(port_stats(0).opackets, UC_FRAMES);
	drain_frames(1, &frames, &bytes); /* waiting at b: nobody polls it */
	CHECK_EQ(frames, UC_FRAMES);
	CHECK_EQ(bytes, UC_BYTES);
}

/* A full TX ring: what the PMD refused waits as pending and goes first once there is room, so
 * that every frame of 100 messages arrives, none lost or sent twice. b's ring holds
 * 255 frames and is not read until the TX role found it full. */
static bool ring_was_full(void) { return __atomic_load_n(&worker()->tx[0].tx_ring_full, __ATOMIC_RELAXED) > 0; }

static void case_full_ring_frames_wait_as_pending(void)
{
	uint64_t frames = 0, bytes = 0, start;

	if (!plan_and_launch(CONFIG("{ lcore = 1; port = \"a\"; role = \"tx\"; }", WRITE_FLOW("uc", "100"))))
		return;
	CHECK(wait_for(ring_was_full));
	start = rte_rdtsc();
	while (!loop_returned() && seconds(rte_rdtsc() - start) < TIMEOUT_S)
		drain_frames(1, &frames, &bytes);
	join();
	drain_frames(1, &frames, &bytes);
	CHECK_EQ(frames, 10 * UC_FRAMES);
	CHECK_EQ(bytes, 10 * UC_BYTES);
	CHECK_EQ(port_stats(0).opackets, 10 * UC_FRAMES);
	CHECK_EQ(worker()->tx[0].tx_unsent, 0);
}

/* A flow without a stop runs until the main lcore's TX stop: then no frame more leaves, every
 * one sent arrives and is accounted, and the RX stop ends the loop. With held_up_min_tsc 0 every
 * turn of the loop counts as held up: the gaps add up to no more than the time it ran. */
static void case_stop_requests_end_the_loop(void)
{
	uint64_t sent, launched;

	if (plan(CONFIG("{ lcore = 1; port = \"a\"; role = \"tx\"; }, { lcore = 1; port = \"b\"; role = \"rx\"; }",
			"{ name = \"u\"; port = \"a\"; dst_mac = \"02:00:00:00:00:02\"; dst_ip = \"10.0.0.2\";\n"
			"  transport = \"ud\"; message_size = 256; mtu = 1024; rate_pps = 20000.0;\n"
			"  qpn = 0x100; dest_qpn = 0x200; }"))) {
		CHECK(0);
		return;
	}
	worker()->held_up_min_tsc = 0;
	launched = rte_rdtsc();
	if (!launch())
		return;
	expected_at_b = 10;
	CHECK(wait_for(b_has_all));
	CHECK(!tx_finished()); /* no stop of its own */
	lcore_request_tx_stop(&e->stop);
	CHECK(wait_for(tx_finished));
	sent = port_stats(0).opackets;
	rte_delay_us_sleep(20000); /* the loop still runs (RX), TX sends no more */
	CHECK_EQ(port_stats(0).opackets, sent);
	CHECK(!loop_returned());
	stop_and_join(); /* (TX already stopped) */
	CHECK(worker()->held_up_times > 0);
	CHECK(worker()->held_up_max_tsc > 0 && worker()->held_up_max_tsc <= worker()->held_up_tsc);
	CHECK(worker()->held_up_tsc <= rte_rdtsc() - launched);
	CHECK(sent >= 10);
	CHECK_EQ(port_stats(0).opackets, sent);
	CHECK_EQ(rx_of(1)->frames, sent);
	/* UD SEND of 256 bytes: 14 + 20 + 8 + 12 + DETH 8 + 256 + 4 */
	CHECK_EQ(rx_of(1)->bytes, sent * 322);
}

/* RC: b's RX role hands the requests to its responder, whose ACKs leave from b's TX queue on the
 * same lcore; a's RX role posts them to the completer, and the QP finishes only when its last
 * message is acknowledged. */
static void case_rc_acks_through_the_loop(void)
{
	const struct rx_qp *q;

	if (!plan_and_launch(CONFIG("{ lcore = 1; port = \"a\"; role = \"txrx\"; }, { lcore = 1; port = \"b\"; role = \"txrx\"; }",
			  WRITE_FLOW("rc", "10"))))
		return;
	CHECK(wait_for(tx_finished));
	stop_and_join();
	CHECK_EQ(port_stats(0).opackets, UC_FRAMES); /* no loss: no retransmission */
	CHECK_EQ(rx_of(1)->bytes, UC_BYTES);        /* RC WRITE frames are UC's size */
	q = rx_qp_find(worker()->rx_ctx, 1, 0x200);
	CHECK(q != NULL && q->c.packets == UC_FRAMES && q->c.messages == 10);
	CHECK(port_stats(1).opackets > 0); /* the ACKs */
	CHECK_EQ(rx_of(0)->frames, port_stats(1).opackets);
	CHECK_EQ(rx_of(0)->kind[WIRE_KIND_ROCE], port_stats(1).opackets);
	CHECK_EQ(rx_of(0)->rc_unknown_qp, 0);
	CHECK(e->run.qps[0].done);
}

/* The egress scheduler (qos.egress) after a PFC pause: time paused earns no credit. Port a is
 * shaped to its link's 1 Gb/s, its one QP paced at 0.2 Gb/s; b sends a real PFC frame pausing
 * the QP's priority for 25 ms (a's RX role honours it). Nothing leaves while paused; after XON
 * the QP resumes at its own rate from the pause's end: by any time t it sent at most
 * rate x (t - end) and a burst. (A QP that earned credit while paused sent at the link's rate
 * until it had caught up the 25 ms: ~600 KB in the 5 ms after XON, not ~125.) And the paused,
 * idle link keeps no credit: its next send time follows the clock (it used to stay a burst
 * behind, a burst to go at once after XON). That lag is seen only while the lcore runs, so the
 * pause is repeated (up to 8 times) until the main lcore saw it run; the pause's first
 * millisecond is not looked at (the link may still have been busy). */
/* a shaped to its 1 Gb/s link, b on the other end of the cable; a UC WRITE flow from a to b */
#define SHAPED_PORTS                                                                                       \
	"eal = { lcores = \"0-1\"; };\n"                                                                   \
	"ports = (\n"                                                                                      \
	"  { name = \"a\"; device = \"ring:tl:a\"; mac = \"02:00:00:00:00:01\"; ipv4 = \"10.0.0.1\";\n"   \
	"    link_speed_gbps = 1.0; rx_desc = 256; tx_desc = 256; qos = { egress = { shape_gbps = 1.0; }; }; },\n" \
	"  { name = \"b\"; device = \"ring:tl:b\"; mac = \"02:00:00:00:00:02\"; ipv4 = \"10.0.0.2\";\n"   \
	"    link_speed_gbps = 1.0; rx_desc = 256; tx_desc = 256; });\n"
#define AB_FLOW(name, gbps, qpn, dest_qpn)                                                                 \
	"{ name = \"" name "\"; port = \"a\"; dst_mac = \"02:00:00:00:00:02\"; dst_ip = \"10.0.0.2\";\n" \
	"  transport = \"uc\"; ops = { write = 1; }; message_size = 1024; mtu = 1024; rate_gbps = " gbps ";\n" \
	"  qpn = " qpn "; dest_qpn = " dest_qpn "; }"
#define PACED_RATE_GBPS 0.2 /* the flow's rate_gbps */
#define PACED_FRAME 1098 /* UC WRITE_ONLY of 1024: 14 + 20 + 8 + 12 + RETH 16 + 1024 + 4 */

static struct rte_mempool *pfc_pool;

/* One pause of 25 ms from b and the 5 ms (at least) after it; the link's least lag while paused
 * taken into *min_lag. */
static void pause_and_resume(const struct qp_tx *qp, const struct egress *eg, uint64_t *min_lag)
{
	static const uint8_t b_mac[6] = {2, 0, 0, 0, 0, 2};
	const struct pfc_pause *pause = &e->run.pause[0];
	const uint64_t hz = rte_get_tsc_hz(), last = pfc_until(pause, qp->prio);
	uint16_t quanta[QOS_PRIORITIES] = {0};
	struct rte_mbuf *m = rte_pktmbuf_alloc(pfc_pool);
	uint64_t until, before, during, after = 0, now, window, bound;
	bool resumed = false;

	CHECK(m != NULL);
	if (!m)
		return;
	quanta[qp->prio] = 48828; /* x 512 ns at 1 Gb/s: 25 ms */
	m->data_len = m->pkt_len = (uint32_t)wire_build_pfc(b_mac, NULL, (uint8_t)(1u << qp->prio), quanta,
								rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m));
	CHECK_EQ(rte_eth_tx_burst(e->run.ports[1].port_id, 0, &m, 1), 1);
	now = rte_rdtsc();
	while ((until = pfc_until(pause, qp->prio)) == last && seconds(rte_rdtsc() - now) < TIMEOUT_S)
		;
	CHECK(until != last);
	before = during = __atomic_load_n(&eg->tc[qp->tc].bytes, __ATOMIC_RELAXED);
	for (;;) {
		uint64_t link_fp = __atomic_load_n(&eg->link_next_fp, __ATOMIC_RELAXED);
		uint64_t bytes = __atomic_load_n(&eg->tc[qp->tc].bytes, __ATOMIC_RELAXED);

		now = rte_rdtsc();
		if (now >= until)
			break;
		during = bytes; /* read before the pause's end */
		if (now > __atomic_load_n(&pause->since[qp->prio], __ATOMIC_RELAXED) + hz / 1000)
			*min_lag = RTE_MIN(*min_lag, (now << PACE_SHIFT) > link_fp ? (now << PACE_SHIFT) - link_fp : 0);
	}
	CHECK_EQ(during, before);
	while (!resumed || now < until + hz / 200) {
		after = __atomic_load_n(&eg->tc[qp->tc].bytes, __ATOMIC_RELAXED);
		now = rte_rdtsc(); /* (after the read: the bound only loosens) */
		resumed = after > before;
		if (seconds(now - until) > TIMEOUT_S)
			break;
	}
	CHECK(resumed);
	window = now - until;
	bound = (uint64_t)(PACED_RATE_GBPS * 1e9 / 8 * seconds(window)) + (ENGINE_BURST + 4) * PACED_FRAME;
	printf("  after XON: %" PRIu64 " bytes in %.2f ms (bound %" PRIu64 "); the idle link's least lag %.1f us (a burst: %.1f us)\n",
	       after - before, seconds(window) * 1e3, bound, seconds(*min_lag >> PACE_SHIFT) * 1e6,
	       seconds(eg->burst_fp >> PACE_SHIFT) * 1e6);
	CHECK(after - before <= bound);
}

static void case_egress_resumes_at_its_rate_after_pfc(void)
{
	uint64_t min_lag = UINT64_MAX;
	struct egress *eg;

	if (!plan_and_launch(
		    SHAPED_PORTS
		    "lcores = ({ lcore = 1; port = \"a\"; role = \"txrx\"; }, { lcore = 1; port = \"b\"; role = \"rx\"; });\n"
		    "flows = (" AB_FLOW("w", "0.2", "0x100", "0x200") ");\n"))
		return;
	eg = worker()->tx[0].egress;
	pfc_pool = test_eal_mbuf_pool("pfc", 63);
	CHECK(eg != NULL && pfc_pool != NULL);
	expected_at_b = 50; /* running (~2 ms), then 10 ms more at its rate */
	CHECK(wait_for(b_has_all));
	rte_delay_us_sleep(10000);
	for (unsigned i = 0; eg && pfc_pool && i < 8 && min_lag >= eg->burst_fp / 2; i++)
		pause_and_resume(&e->run.qps[0], eg, &min_lag);
	CHECK(eg && min_lag < eg->burst_fp / 2); /* (before the change: a burst or more) */
	stop_and_join();
}

/* A QP that becomes done outside its own turn leaves the egress scheduler: an RC QP is done when
 * its last message is acknowledged, on the RX side, not when the scheduler visits it (a
 * collective's QPs the same, at their last phase). The scheduler used to look only for QPs that
 * were not done, so a done one stayed in its class, the role never finished and the run never
 * ended by itself (a fabric's collectives ran to their duration). */
#define RC_STOP_FLOW                                                                                       \
	"{ name = \"r\"; port = \"a\"; dst_mac = \"02:00:00:00:00:02\"; dst_ip = \"10.0.0.2\";\n"         \
	"  transport = \"rc\"; ops = { write = 1; }; message_size = 1024; mtu = 1024; rate_gbps = 0.5;\n"   \
	"  qpn = 0x100; dest_qpn = 0x200; stop = { messages = 20; }; }"

static void case_egress_lets_a_qp_acknowledged_later_finish(void)
{
	const struct qp_tx *qp;

	if (!plan_and_launch(
		    SHAPED_PORTS
		    "lcores = ({ lcore = 1; port = \"a\"; role = \"txrx\"; }, { lcore = 1; port = \"b\"; role = \"txrx\"; });\n"
		    "flows = (" RC_STOP_FLOW ");\n"))
		return;
	CHECK(worker()->tx[0].egress != NULL);
	CHECK(wait_for(tx_finished)); /* by itself: no stop request */
	qp = &e->run.qps[0];
	CHECK(qp->done);
	CHECK_EQ(qp->c.messages, 20);
	CHECK_EQ(qp->c.completions, 20);
	CHECK_EQ(worker()->tx[0].pq.heap_n, 0);
	stop_and_join();
}

/* The egress scheduler's lost link time (egress.h: cpu_lost_tsc, the fabric's machine share): a's
 * link busy at 1 Gb/s into b's ring, which nobody reads: once it is full the role cannot send,
 * and when the test takes the frames 20 ms later, the time the busy link could not catch up is
 * counted: most of the hold, at most the time since launch. What a busy machine took from the
 * lcore before the ring was full is counted before and left out. */
static uint64_t lost_tsc(const struct egress *eg) { return __atomic_load_n(&eg->cpu_lost_tsc, __ATOMIC_RELAXED); }

static void case_egress_counts_the_link_time_it_could_not_use(void)
{
	uint64_t frames = 0, bytes = 0, launched = rte_rdtsc(), full, start, before;
	struct egress *eg;

	if (!plan_and_launch(
		    SHAPED_PORTS
		    "lcores = ({ lcore = 1; port = \"a\"; role = \"tx\"; });\n"
		    "flows = (" AB_FLOW("w", "0.8", "0x100", "0x200") ", " AB_FLOW("v", "0.8", "0x101", "0x201") ");\n"))
		return;
	eg = worker()->tx[0].egress;
	CHECK(eg != NULL && wait_for(ring_was_full));
	full = rte_rdtsc();
	/* what a busy machine took from the lcore before the ring was full is counted already */
	before = lost_tsc(eg);
	rte_delay_us_sleep(20000);
	CHECK_EQ(lost_tsc(eg), before); /* nothing went since: nothing counted since */
	drain_frames(1, &frames, &bytes);
	start = rte_rdtsc();
	while (lost_tsc(eg) == before && seconds(rte_rdtsc() - start) < 1)
		drain_frames(1, &frames, &bytes);
	/* the lag may be counted in more than one turn (a busy machine preempts the worker between
	 * them): a few ms more of draining takes them all in */
	for (uint64_t t = rte_rdtsc(); seconds(rte_rdtsc() - t) < 0.005;)
		drain_frames(1, &frames, &bytes);
	printf("  lost %.2f ms of a link held up %.2f ms (%.2f before it; %.2f since launch)\n",
	       seconds(lost_tsc(eg) - before) * 1e3, seconds(start - full) * 1e3, seconds(before) * 1e3,
	       seconds(rte_rdtsc() - launched) * 1e3);
	/* the hold, less the burst a busy link may catch up (0.4 ms) and a little; never more than
	 * the time since launch (before the counter existed: 0) */
	CHECK(lost_tsc(eg) - before >= (start - full) * 9 / 10 && lost_tsc(eg) <= rte_rdtsc() - launched);
	lcore_request_tx_stop(&e->stop);
	CHECK(wait_for(tx_finished));
	lcore_request_rx_stop(&e->stop);
	join();
}

/* ---- each case in a child with its own EAL ---------------------------------------------------- */

static int child(void (*body)(void))
{
	if (test_eal_start("test_lcore", "0-1"))
		return 1;
	body();
	fflush(stdout);
	test_eal_stop(); /* the ports, pools and tables go with the process */
	return testlib_case_failed ? 1 : 0;
}

static void in_child(void (*body)(void))
{
	int status = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(child(body));
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_flow_frames_and_bytes(void) { in_child(case_flow_frames_and_bytes); }
static void test_tx_only_lcore_returns_when_done(void) { in_child(case_tx_only_lcore_returns_when_done); }
static void test_full_ring_frames_wait_as_pending(void) { in_child(case_full_ring_frames_wait_as_pending); }
static void test_stop_requests_end_the_loop(void) { in_child(case_stop_requests_end_the_loop); }
static void test_rc_acks_through_the_loop(void) { in_child(case_rc_acks_through_the_loop); }
static void test_egress_resumes_at_its_rate_after_pfc(void) { in_child(case_egress_resumes_at_its_rate_after_pfc); }
static void test_egress_lets_a_qp_acknowledged_later_finish(void)
{
	in_child(case_egress_lets_a_qp_acknowledged_later_finish);
}
static void test_egress_counts_the_link_time_it_could_not_use(void)
{
	in_child(case_egress_counts_the_link_time_it_could_not_use);
}

int main(void)
{
	RUN(test_flow_frames_and_bytes);
	RUN(test_tx_only_lcore_returns_when_done);
	RUN(test_full_ring_frames_wait_as_pending);
	RUN(test_stop_requests_end_the_loop);
	RUN(test_rc_acks_through_the_loop);
	RUN(test_egress_resumes_at_its_rate_after_pfc);
	RUN(test_egress_lets_a_qp_acknowledged_later_finish);
	RUN(test_egress_counts_the_link_time_it_could_not_use);
	return testlib_finish("test_lcore");
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * transport/collective.c: a collective's phase k+1 is released when phase k has all its events,
 * the local QPs' completions and the watched receiver QPs' receipts, in whichever order they
 * come, counted on one counter per phase; receipts of a later phase may come before it is
 * released here. And transport/receiver.c's side: a watched receiver QP turns each request
 * message it counts (not a middle packet, not a duplicate) into the receipt of phase n for its
 * n-th message. The runtime state is rte_malloc'd: EAL without hugepages, PCI or shared files.
 */
#include <rte_memory.h>

#include "collective.h"
#include "config.h"
#include "receiver.h"
#include "test_eal.h"
#include "test_frame.h"
#include "testlib.h"
#include "wire.h"

#define QPS 2   /* the collective's local QPs (one flow group of 2) */
#define RX 3    /* the receiver QPs it watches (one range of 3) */
#define WATCHED 0x400

#define NOW UINT64_MAX /* without a compute step the time does not matter */

static struct engine_config cfg; /* large: keep it off the stack */

/* One collective of `phases` phases over a flow group of QPS QPs, watching `rx` receiver QPs of
 * port 1 from WATCHED. */
static struct collective_rt *make(unsigned phases, unsigned rx)
{
	struct collective_rt *c = NULL;

	memset(&cfg, 0, sizeof(cfg));
	cfg.n_groups = 1;
	cfg.groups[0].count = QPS;
	cfg.n_collectives = 1;
	cfg.collectives[0] = (struct cfg_collective){.name = "c", .n_flows = 1, .flows = {0}, .phases = phases};
	if (rx) {
		cfg.collectives[0].n_receives = 1;
		cfg.collectives[0].receives[0] = (struct cfg_coll_receive){.port = 1, .qpn = WATCHED, .count = rx};
	}
	CHECK_EQ(collectives_create(&cfg, 1000, &c), 0);
	CHECK(c != NULL);
	return c;
}

static void sends(struct collective_rt *c, uint32_t phase, uint64_t tsc)
{
	for (unsigned i = 0; i < QPS; i++)
		collective_completed(c, phase, tsc + i);
}

static void receipts(struct collective_rt *c, uint32_t phase, uint64_t tsc)
{
	for (unsigned i = 0; i < RX; i++)
		collective_received(c, phase, tsc + i);
}

static void test_counts_from_the_config(void)
{
	struct collective_rt *c = make(4, RX);

	if (!c)
		return;
	CHECK_EQ(c->n_qps, QPS);
	CHECK_EQ(c->n_rx, RX);
	CHECK(collective_may_start(c, 0, NOW));
	CHECK(!collective_may_start(c, 1, NOW));
	CHECK_EQ(collective_phases_done(c), 0);
	collectives_free(c, 1);
}

/* Sends first: the phase waits for the last receipt, which releases the next one and is its end. */
static void test_sends_then_receipts(void)
{
	struct collective_rt *c = make(3, RX);

	if (!c)
		return;
	sends(c, 0, 2000);
	CHECK(!collective_may_start(c, 1, NOW));
	CHECK_EQ(collective_phases_done(c), 0);
	collective_received(c, 0, 3000);
	collective_received(c, 0, 3100);
	CHECK(!collective_may_start(c, 1, NOW));
	CHECK_EQ(collective_phases_done(c), 0);
	collective_received(c, 0, 3200);
	CHECK(collective_may_start(c, 1, NOW));
	CHECK(!collective_may_start(c, 2, NOW));
	CHECK_EQ(collective_phases_done(c), 1);
	CHECK_EQ(c->end_tsc[0], 3200);
	CHECK_EQ(c->start_tsc[1], 3200); /* phase 1 starts at phase 0's end */
	collectives_free(c, 1);
}

/* Receipts first (the peer is ahead): the phase waits for the last local completion. */
static void test_receipts_then_sends(void)
{
	struct collective_rt *c = make(3, RX);

	if (!c)
		return;
	receipts(c, 0, 2000);
	CHECK(!collective_may_start(c, 1, NOW));
	collective_completed(c, 0, 5000);
	CHECK(!collective_may_start(c, 1, NOW));
	CHECK_EQ(collective_phases_done(c), 0);
	collective_completed(c, 0, 5100);
	CHECK(collective_may_start(c, 1, NOW));
	CHECK_EQ(collective_phases_done(c), 1);
	CHECK_EQ(c->end_tsc[0], 5100);
	CHECK_EQ(c->start_tsc[1], 5100);
	collectives_free(c, 1);
}

/* The end is the latest event even when it is not the one counted last (events of several lcores,
 * each with its own TSC read), and the next phase starts there. */
static void test_end_is_the_latest_event(void)
{
	struct collective_rt *c = make(2, RX);

	if (!c)
		return;
	sends(c, 0, 9000);
	receipts(c, 0, 4000);
	CHECK(collective_may_start(c, 1, NOW));
	CHECK_EQ(c->end_tsc[0], 9000 + QPS - 1);
	CHECK_EQ(c->start_tsc[1], 9000 + QPS - 1);
	collectives_free(c, 1);
}

/* The peer's message of phase 1 comes while phase 0 is still open here: counted for phase 1,
 * which then completes with its local completions alone, and releases phase 2. */
static void test_early_receipts_of_the_next_phase(void)
{
	struct collective_rt *c = make(4, RX);

	if (!c)
		return;
	sends(c, 0, 2000);
	receipts(c, 1, 2500); /* the peer's phase 1 before its phase 0 (another QP of its) arrived */
	CHECK(!collective_may_start(c, 1, NOW));
	CHECK_EQ(collective_phases_done(c), 0);
	receipts(c, 0, 3000);
	CHECK(collective_may_start(c, 1, NOW));
	CHECK(!collective_may_start(c, 2, NOW));
	CHECK_EQ(collective_phases_done(c), 1);
	collective_completed(c, 1, 4000);
	CHECK(!collective_may_start(c, 2, NOW));
	collective_completed(c, 1, 4100);
	CHECK(collective_may_start(c, 2, NOW));
	CHECK_EQ(collective_phases_done(c), 2);
	CHECK_EQ(c->start_tsc[1], 3000 + RX - 1);
	CHECK_EQ(c->end_tsc[1], 4100);
	CHECK_EQ(c->start_tsc[2], 4100);
	/* phases done counts from the first: a later phase's events alone do not make it done */
	receipts(c, 3, 4200);
	CHECK_EQ(collective_phases_done(c), 2);
	collectives_free(c, 1);
}

/* Every phase to the last; events past it (a peer with more phases) are ignored. */
static void test_all_phases_and_past_the_last(void)
{
	enum { PHASES = 5 };
	struct collective_rt *c = make(PHASES, RX);

	if (!c)
		return;
	for (uint32_t k = 0; k < PHASES; k++) {
		CHECK(collective_may_start(c, k, NOW));
		sends(c, k, 10000 * (k + 1));
		receipts(c, k, 10000 * (k + 1) + 50);
		CHECK_EQ(collective_phases_done(c), k + 1);
	}
	CHECK(!collective_may_start(c, PHASES, NOW));
	receipts(c, PHASES, 99999);
	collective_completed(c, PHASES + 10, 99999);
	CHECK_EQ(collective_phases_done(c), PHASES);
	CHECK_EQ(c->released, PHASES);
	collectives_free(c, 1);
}

/* Without receives the barrier is the local completions alone, as before. */
static void test_no_receives(void)
{
	struct collective_rt *c = make(2, 0);

	if (!c)
		return;
	CHECK_EQ(c->n_rx, 0);
	collective_completed(c, 0, 2000);
	CHECK(!collective_may_start(c, 1, NOW));
	collective_completed(c, 0, 2100);
	CHECK(collective_may_start(c, 1, NOW));
	CHECK_EQ(collective_phases_done(c), 1);
	collectives_free(c, 1);
}

/* ---- the receiver's side: watched QPs turn their messages into receipts ----------------------- */

/* One UC SEND packet (`op`: ONLY, FIRST, MIDDLE or LAST) for (port, dqpn) with `psn`. */
static void receive(struct rx_ctx *ctx, uint16_t port, uint32_t dqpn, uint32_t psn, uint8_t op)
{
	static uint8_t buf[WIRE_MAX_FRAME];
	const uint8_t *frames[1] = {buf};
	uint32_t lens[1] = {test_frame_request(buf, op, dqpn, psn)};
	struct wire_pkt p[1];
	struct rx_qp *q[1];

	CHECK(lens[0] > 0);
	rx_account_burst(ctx, port, frames, lens, 1, p, q);
}

static uint32_t count_of(const struct collective_rt *c, unsigned phase)
{
	return __atomic_load_n(&c->done_count[phase], __ATOMIC_ACQUIRE);
}

static void test_receiver_counts_watched_messages(void)
{
	struct collective_rt *c = make(4, RX);
	struct rx_ctx *ctx = rx_ctx_create(0, 2, 64, SOCKET_ID_ANY);

	CHECK(ctx != NULL);
	if (!c || !ctx)
		goto out;
	CHECK_EQ(rx_ctx_watch_messages(ctx, 1, WATCHED, RX, c), 0);
	/* a message of one packet on the range's first QP: phase 0 */
	receive(ctx, 1, WATCHED, 0, WIRE_OP_UC_SEND_ONLY);
	CHECK_EQ(count_of(c, 0), 1);
	CHECK(rx_qp_find(ctx, 1, WATCHED)->coll == c);
	/* the same QPN on the other port, and QPNs just outside the range: no receipt */
	receive(ctx, 0, WATCHED, 0, WIRE_OP_UC_SEND_ONLY);
	receive(ctx, 1, WATCHED - 1, 0, WIRE_OP_UC_SEND_ONLY);
	receive(ctx, 1, WATCHED + RX, 0, WIRE_OP_UC_SEND_ONLY);
	CHECK_EQ(count_of(c, 0), 1);
	CHECK(rx_qp_find(ctx, 0, WATCHED)->coll == NULL);
	CHECK(rx_qp_find(ctx, 1, WATCHED + RX)->coll == NULL);
	/* a duplicate of the counted packet: no second receipt */
	receive(ctx, 1, WATCHED, 0, WIRE_OP_UC_SEND_ONLY);
	CHECK_EQ(count_of(c, 0), 1);
	CHECK_EQ(count_of(c, 1), 0);
	/* the QP's second message, of three packets: counted at its last one, for phase 1 */
	receive(ctx, 1, WATCHED, 1, WIRE_OP_UC_SEND_FIRST);
	receive(ctx, 1, WATCHED, 2, WIRE_OP_UC_SEND_MIDDLE);
	CHECK_EQ(count_of(c, 1), 0);
	receive(ctx, 1, WATCHED, 3, WIRE_OP_UC_SEND_LAST);
	CHECK_EQ(count_of(c, 1), 1);
	/* the range's last QP: its first message is phase 0's */
	receive(ctx, 1, WATCHED + RX - 1, 7, WIRE_OP_UC_SEND_ONLY);
	CHECK_EQ(count_of(c, 0), 2);
	CHECK_EQ(collective_phases_done(c), 0);
out:
	rx_ctx_free(ctx);
	collectives_free(c, 1);
}

/* A whole phase from the wire: the local completions and one message on each watched QP. */
static void test_receipts_release_the_next_phase(void)
{
	struct collective_rt *c = make(2, RX);
	struct rx_ctx *ctx = rx_ctx_create(0, 2, 64, SOCKET_ID_ANY);

	CHECK(ctx != NULL);
	if (!c || !ctx)
		goto out;
	CHECK_EQ(rx_ctx_watch_messages(ctx, 1, WATCHED, RX, c), 0);
	sends(c, 0, 2000);
	for (unsigned i = 0; i < RX; i++) {
		CHECK(!collective_may_start(c, 1, NOW));
		receive(ctx, 1, WATCHED + i, 0, WIRE_OP_UC_SEND_ONLY);
	}
	CHECK(collective_may_start(c, 1, NOW));
	CHECK_EQ(collective_phases_done(c), 1);
	CHECK(c->start_tsc[1] == c->end_tsc[0] && c->end_tsc[0] > 2000); /* the receipt's TSC, now */
out:
	rx_ctx_free(ctx);
	collectives_free(c, 1);
}

static void test_watch_table_is_bounded(void)
{
	struct rx_ctx *ctx = rx_ctx_create(0, 1, 8, SOCKET_ID_ANY);
	int rc = 0;

	CHECK(ctx != NULL);
	if (!ctx)
		return;
	for (unsigned i = 0; i < RX_MAX_WATCHES; i++)
		rc |= rx_ctx_watch_messages(ctx, 0, 0x10 + i, 1, NULL);
	CHECK_EQ(rc, 0);
	CHECK_EQ(rx_ctx_watch_messages(ctx, 0, 0xFFFF, 1, NULL), -1);
	rx_ctx_free(ctx);
}

/* A compute step of 1 ms before each iteration of 2 phases: phase 0 may start 1 ms after the
 * traffic's start, phase 1 as soon as phase 0 ends, phase 2 (the next iteration) 1 ms after
 * phase 1's end. */
static void test_compute_steps_before_each_iteration(void)
{
	struct collective_rt *c;
	uint64_t ms, end;

	memset(&cfg, 0, sizeof(cfg));
	cfg.n_groups = 1;
	cfg.groups[0].count = QPS;
	cfg.n_collectives = 1;
	cfg.collectives[0] = (struct cfg_collective){.name = "c", .n_flows = 1, .flows = {0}, .phases = 4,
						     .compute_us = 1000, .iteration_phases = 2};
	if (collectives_create(&cfg, 1000, &c) || !c)
		return;
	ms = rte_get_tsc_hz() / 1000;
	CHECK_EQ(c->compute_tsc, ms);
	CHECK_EQ(c->start_tsc[0], 1000 + ms);
	CHECK(!collective_may_start(c, 0, 1000 + ms - 1));
	CHECK(collective_may_start(c, 0, 1000 + ms));
	end = 1000 + ms + 5000;
	sends(c, 0, end - QPS + 1);                          /* the last completion at `end` */
	CHECK_EQ(c->start_tsc[1], end);                      /* within an iteration: no compute */
	CHECK(collective_may_start(c, 1, end));
	sends(c, 1, end + 100);
	CHECK_EQ(c->start_tsc[2], end + 100 + QPS - 1 + ms); /* the next iteration computes first */
	CHECK(!collective_may_start(c, 2, end + 100 + ms));
	CHECK(collective_may_start(c, 2, c->start_tsc[2]));
	CHECK(!collective_may_start(c, 3, UINT64_MAX));      /* not released */
	collectives_free(c, 1);
}

/* A repeating collective of 2 phases (1 an iteration) goes on past its last phase, each round's
 * slots reset; the iterations are counted from each one's start to its end. */
static void test_repeat_goes_on_in_rounds(void)
{
	struct collective_rt *c;
	uint64_t n, sum, max;

	memset(&cfg, 0, sizeof(cfg));
	cfg.n_groups = 1;
	cfg.groups[0].count = QPS;
	cfg.n_collectives = 1;
	cfg.collectives[0] = (struct cfg_collective){.name = "c", .n_flows = 1, .flows = {0}, .phases = 2,
						     .iteration_phases = 1, .repeat = true};
	if (collectives_create(&cfg, 1000, &c) || !c)
		return;
	for (uint32_t g = 0; g < 7; g++) {                     /* 3.5 rounds */
		CHECK(collective_may_start(c, g, 1000 + 100 * g));
		CHECK(!collective_may_start(c, g + 1, UINT64_MAX));
		sends(c, g, 1000 + 100 * g + 100 - QPS + 1);     /* phase g ends at 1000 + 100 (g + 1) */
	}
	CHECK(collective_may_start(c, 7, UINT64_MAX));
	CHECK_EQ(collective_phases_done(c), 2);                 /* the first round's, as reported */
	CHECK_EQ(c->end_tsc[1], 1200);                          /* the first round kept */
	collective_iterations(c, &n, &sum, &max);
	CHECK_EQ(n, 7);
	CHECK_EQ(sum, 700);
	CHECK_EQ(max, 100);
	collectives_free(c, 1);
}

/* A window of period 1 ms, offset 0.25 ms, active 0.5 ms (q: a quarter of a ms). The first
 * iteration waits for the window; one that ends inside it starts at once; one that ends after it
 * waits for the next period's. */
static void test_window_holds_iterations_for_their_turn(void)
{
	struct collective_rt *c;
	uint64_t ms = rte_get_tsc_hz() / 1000, q = ms / 4, t0 = 1000;

	memset(&cfg, 0, sizeof(cfg));
	cfg.n_groups = 1;
	cfg.groups[0].count = QPS;
	cfg.n_collectives = 1;
	cfg.collectives[0] = (struct cfg_collective){.name = "c", .n_flows = 1, .flows = {0}, .phases = 3,
						     .iteration_phases = 1, .window_period_s = 1e-3,
						     .window_offset_s = 0.25e-3, .window_active_s = 0.5e-3};
	if (collectives_create(&cfg, t0, &c) || !c)
		return;
	CHECK_EQ(c->start_tsc[0], t0 + q);
	CHECK(!collective_may_start(c, 0, t0 + q - 1));
	CHECK(collective_may_start(c, 0, t0 + q));
	sends(c, 0, t0 + 2 * q - QPS + 1);                      /* ends inside the window */
	CHECK_EQ(c->start_tsc[1], t0 + 2 * q);
	sends(c, 1, t0 + 3 * q + 10 - QPS + 1);                 /* ends after it (it closed at 3q) */
	CHECK_EQ(c->start_tsc[2], t0 + q + ms);
	CHECK(!collective_may_start(c, 2, t0 + q + ms - 1));
	collectives_free(c, 1);
}

int main(void)
{
	if (test_eal_start("test_collective", "0"))
		return 1;
	RUN(test_counts_from_the_config);
	RUN(test_compute_steps_before_each_iteration);
	RUN(test_repeat_goes_on_in_rounds);
	RUN(test_window_holds_iterations_for_their_turn);
	RUN(test_sends_then_receipts);
	RUN(test_receipts_then_sends);
	RUN(test_end_is_the_latest_event);
	RUN(test_early_receipts_of_the_next_phase);
	RUN(test_all_phases_and_past_the_last);
	RUN(test_no_receives);
	RUN(test_receiver_counts_watched_messages);
	RUN(test_receipts_release_the_next_phase);
	RUN(test_watch_table_is_bounded);
	test_eal_stop();
	return testlib_finish("test_collective");
}

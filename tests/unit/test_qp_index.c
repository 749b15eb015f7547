/* SPDX-License-Identifier: BSD-3-Clause
 *
 * transport/qp_index: the (port, QPN) maps every role finds its QPs in. rte_hash needs EAL: it
 * is started without hugepages, PCI or shared files, under a file prefix of this process's own.
 */
#include <pthread.h>

#include <rte_memory.h>

#include "qp_index.h"
#include "receiver.h"
#include "test_eal.h"
#include "test_frame.h"
#include "testlib.h"
#include "wire.h"

static void test_insert_find_miss(void)
{
	struct qp_map *m = qp_map_create("t_basic", 64, SOCKET_ID_ANY);
	int32_t a, b;

	CHECK(m != NULL);
	if (!m)
		return;
	CHECK_EQ(qp_map_find(m, 0, 0x100), -1);
	a = qp_map_add(m, 0, 0x100);
	b = qp_map_add(m, 1, 0x100); /* same QPN, another port: another QP */
	CHECK(a >= 0 && b >= 0 && a != b);
	CHECK_EQ(qp_map_find(m, 0, 0x100), a);
	CHECK_EQ(qp_map_find(m, 1, 0x100), b);
	CHECK_EQ(qp_map_add(m, 0, 0x100), a); /* a key added again keeps its position */
	CHECK_EQ(qp_map_find(m, 0, 0x101), -1);
	CHECK_EQ(qp_map_find(m, 2, 0x100), -1);
	qp_map_free(m);
	qp_map_free(NULL);
}

/* Positions are handed out in insertion order: the report lists the switch's flows and the
 * receiver's QPs by position. */
static void test_positions_in_insertion_order(void)
{
	struct qp_map *m = qp_map_create("t_order", 1000, SOCKET_ID_ANY);

	CHECK(m != NULL);
	for (int32_t i = 0; m && i < 1000; i++)
		CHECK_EQ(qp_map_add(m, (uint16_t)(i % 3), 0xABCDEFu - (uint32_t)i * 7), i);
	qp_map_free(m);
}

static void test_many_ports_and_qpns(void)
{
	enum { PORTS = 64, QPNS = 500 };
	struct qp_map *m = qp_map_create("t_many", PORTS * QPNS, SOCKET_ID_ANY);
	static uint8_t seen[PORTS * QPNS];

	CHECK(m != NULL);
	if (!m)
		return;
	memset(seen, 0, sizeof(seen));
	for (unsigned p = 0; p < PORTS; p++)
		for (unsigned q = 0; q < QPNS; q++) {
			int32_t pos = qp_map_add(m, (uint16_t)p, 2 + q * 4099); /* spread over the 24 bits */
			CHECK(pos >= 0 && pos < PORTS * QPNS);
			if (pos >= 0 && pos < PORTS * QPNS)
				CHECK_EQ(seen[pos]++, 0);
		}
	for (unsigned p = 0; p < PORTS; p++)
		for (unsigned q = 0; q < QPNS; q++) {
			int32_t pos = qp_map_find(m, (uint16_t)p, 2 + q * 4099);
			CHECK(pos >= 0 && pos < PORTS * QPNS);
			CHECK_EQ(qp_map_find(m, (uint16_t)p, 3 + q * 4099), -1);
		}
	CHECK_EQ(qp_map_find(m, PORTS, 2), -1);
	qp_map_free(m);
}

/* QPNs are 24 bits and ports the key's top byte: the edges do not run into each other. */
static void test_qpn_and_port_edges(void)
{
	struct qp_map *m = qp_map_create("t_edges", 16, SOCKET_ID_ANY);
	int32_t top, next, last;

	CHECK(m != NULL);
	if (!m)
		return;
	top = qp_map_add(m, 0, 0xFFFFFF);
	next = qp_map_add(m, 1, 0);
	last = qp_map_add(m, 255, 0xFFFFFF);
	CHECK(top >= 0 && next >= 0 && last >= 0 && top != next && next != last && top != last);
	CHECK_EQ(qp_map_find(m, 0, 0xFFFFFF), top);
	CHECK_EQ(qp_map_find(m, 1, 0), next);
	CHECK_EQ(qp_map_find(m, 255, 0xFFFFFF), last);
	CHECK_EQ(qp_map_find(m, 0, 0), -1);
	CHECK_EQ(qp_map_find(m, 1, 0xFFFFFF), -1);
	CHECK_EQ(qp_map_find(m, 0, 0x1FFFFFF), top); /* the bits above a QPN's 24 are not its */
	CHECK_EQ(qp_map_add(m, 256, 0), -1);          /* would be (0, 0) */
	CHECK_EQ(qp_map_find(m, 256, 0xFFFFFF), -1);
	qp_map_free(m);
}

/* Exactly `capacity` keys fit, whatever buckets they hash to; the one after is refused, and the
 * keys already in are still found (and added again) after a refusal. */
static void check_full_at(unsigned capacity)
{
	struct qp_map *m = qp_map_create("t_full", capacity, SOCKET_ID_ANY);

	CHECK(m != NULL);
	if (!m)
		return;
	CHECK_EQ(qp_map_capacity(m), capacity);
	for (unsigned i = 0; i < capacity; i++)
		CHECK_EQ(qp_map_add(m, (uint16_t)(i & 7), 0x10000 + i), i);
	CHECK_EQ(qp_map_add(m, 9, 0x42), -1);
	CHECK_EQ(qp_map_add(m, 9, 0x42), -1);
	CHECK_EQ(qp_map_find(m, 9, 0x42), -1);
	for (unsigned i = 0; i < capacity; i++) {
		CHECK_EQ(qp_map_find(m, (uint16_t)(i & 7), 0x10000 + i), i);
		CHECK_EQ(qp_map_add(m, (uint16_t)(i & 7), 0x10000 + i), i);
	}
	qp_map_free(m);
}

static void test_table_full(void)
{
	static const unsigned caps[] = {8, 9, 100, 1024, 4097, 65536};
	struct qp_map *m;

	for (unsigned i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		check_full_at(caps[i]);
	m = qp_map_create("t_small", 1, SOCKET_ID_ANY); /* rte_hash's least: one bucket */
	CHECK(m != NULL);
	if (m)
		CHECK_EQ(qp_map_capacity(m), QP_INDEX_MIN_CAPACITY);
	qp_map_free(m);
}

/* A shared map's keys are each found where they were put, all the while the writer adds more (and
 * rte_hash moves keys between buckets to make room): another thread's lookups, as telemetry's are. */
enum { SHARED_KEYS = 1 << 16 };
struct shared_reader {
	const struct qp_map *m;
	uint32_t published;     /* keys 0..published-1 are in (the writer's release store) */
	uint64_t lookups, wrong;
};

static uint32_t shared_qpn(uint32_t i) { return (i * 2654435761u) & WIRE_QPN_MASK; }

static void *look_up_while_written(void *arg)
{
	struct shared_reader *r = arg;
	uint32_t n;

	do {
		n = __atomic_load_n(&r->published, __ATOMIC_ACQUIRE);
		for (uint32_t i = 0; i < n; i += 1 + (i & 7)) {
			r->wrong += qp_map_find(r->m, (uint16_t)(i & 3), shared_qpn(i)) != (int32_t)i;
			r->lookups++;
		}
	} while (n < SHARED_KEYS);
	return NULL;
}

static void check_found_while_written(struct qp_map *m)
{
	struct shared_reader r = {.m = m};
	pthread_t reader;

	CHECK(m != NULL);
	if (!m)
		return;
	CHECK_EQ(pthread_create(&reader, NULL, look_up_while_written, &r), 0);
	for (uint32_t i = 0; i < SHARED_KEYS; i++) {
		CHECK_EQ(qp_map_add(m, (uint16_t)(i & 3), shared_qpn(i)), i);
		__atomic_store_n(&r.published, i + 1, __ATOMIC_RELEASE);
	}
	pthread_join(reader, NULL);
	CHECK(r.lookups > 0);
	CHECK_EQ(r.wrong, 0);
	qp_map_free(m);
}

static void test_shared_map_read_while_written(void)
{
	check_found_while_written(qp_map_create_shared("t_shared", SHARED_KEYS, SOCKET_ID_ANY));
}

static void test_shared_map_full(void)
{
	struct qp_map *m = qp_map_create_shared("t_shared_full", 1000, SOCKET_ID_ANY);

	CHECK(m != NULL);
	for (unsigned i = 0; m && i < 1000; i++)
		CHECK_EQ(qp_map_add(m, 1, 0x500 + i), i);
	if (m) {
		CHECK_EQ(qp_map_add(m, 1, 0x42), -1);
		CHECK_EQ(qp_map_find(m, 1, 0x500 + 999), 999);
	}
	qp_map_free(m);
}

static void test_names_are_the_callers(void)
{
	struct qp_map *a = qp_map_create("t_name", 8, SOCKET_ID_ANY);
	struct qp_map *b = qp_map_create("t_name", 8, SOCKET_ID_ANY); /* rte_hash refuses the name twice */
	struct qp_map *c = qp_map_create("t_name2", 8, SOCKET_ID_ANY);

	CHECK(a != NULL);
	CHECK(b == NULL);
	CHECK(c != NULL);
	qp_map_free(a);
	qp_map_free(b);
	qp_map_free(c);
	a = qp_map_create("t_name", 8, SOCKET_ID_ANY); /* free gives the name back */
	CHECK(a != NULL);
	qp_map_free(a);
}

/* The engine's index: each role fills its part of one entry per QP. */
static void test_index_roles(void)
{
	struct qp_index *ix = qp_index_create(4, SOCKET_ID_ANY);
	struct qp_roles *r, *again;
	const struct qp_roles *found;

	CHECK(ix != NULL);
	if (!ix)
		return;
	CHECK(qp_index_find(ix, 0, 0x100) == NULL);
	CHECK(qp_index_find(NULL, 0, 0x100) == NULL);
	r = qp_index_add(ix, 0, 0x100);
	CHECK(r != NULL);
	if (!r)
		goto out;
	CHECK(r->requester == NULL && r->responder == NULL);
	CHECK_EQ(r->peer_qpn, -1);
	r->requester_pos = 7;
	again = qp_index_add(ix, 0, 0x100); /* another role's builder: the same QP, its parts kept */
	CHECK(again == r);
	again->peer_qpn = 0x200;
	found = qp_index_find(ix, 0, 0x100);
	CHECK(found == r);
	if (found) {
		CHECK_EQ(found->requester_pos, 7);
		CHECK_EQ(found->peer_qpn, 0x200);
	}
	CHECK(qp_index_find(ix, 1, 0x100) == NULL);
	CHECK(qp_index_find(ix, 0, 0x101) == NULL);
	/* sized at start-up: QP_INDEX_MIN_CAPACITY entries, then full */
	for (unsigned i = 1; i < QP_INDEX_MIN_CAPACITY; i++)
		CHECK(qp_index_add(ix, 2, 0xFFFFFF - i) != NULL);
	CHECK(qp_index_add(ix, 3, 1) == NULL);
	CHECK(qp_index_add(ix, 0, 0x100) == r);
	CHECK(qp_index_find(ix, 2, 0xFFFFFF - 1) != NULL);
out:
	qp_index_free(ix);
	qp_index_free(NULL);
}

/* ---- the receiver's run-time inserts ---------------------------------------------------------- */

static uint32_t build_frame(uint8_t *buf, uint32_t dqpn, uint32_t psn)
{
	uint32_t n = test_frame_request(buf, WIRE_OP_UC_SEND_ONLY, dqpn, psn);

	CHECK(n > 0);
	return n;
}

/* One frame for (port, dqpn); returns the receiver QP it was counted to, or NULL. */
static struct rx_qp *receive(struct rx_ctx *ctx, uint16_t port, uint32_t dqpn, uint32_t psn)
{
	static uint8_t buf[WIRE_MAX_FRAME];
	const uint8_t *frames[1] = {buf};
	uint32_t lens[1] = {build_frame(buf, dqpn, psn)};
	struct wire_pkt p[1];
	struct rx_qp *q[1];

	rx_account_burst(ctx, port, frames, lens, 1, p, q);
	return q[0];
}

/* A receiver QP is made on its first frame; once the table is full, frames of new QPs are counted
 * as rx_qp_table_full (and to no QP) while the QPs already in go on being counted. */
static void test_receiver_inserts_at_run_time(void)
{
	enum { MAX = 8 };
	struct rx_ctx *ctx = rx_ctx_create(0, 2, MAX, SOCKET_ID_ANY);
	struct rx_qp *first[MAX];

	CHECK(ctx != NULL);
	if (!ctx)
		return;
	CHECK_EQ(rx_qp_count(ctx), MAX);
	CHECK(rx_qp_find(ctx, 0, 0x10) == NULL);
	for (unsigned i = 0; i < MAX; i++) {
		first[i] = receive(ctx, (uint16_t)(i & 1), 0x10 + i, 0);
		CHECK(first[i] != NULL);
		CHECK(rx_qp_find(ctx, (uint16_t)(i & 1), 0x10 + i) == first[i]);
		CHECK(rx_qp_at(ctx, i) == first[i]);
	}
	CHECK(receive(ctx, 0, 0xFFFFFF, 0) == NULL);
	CHECK(receive(ctx, 1, 0xFFFFFF, 1) == NULL);
	CHECK_EQ(rx_port_counters(ctx, 0)->rx_qp_table_full, 1);
	CHECK_EQ(rx_port_counters(ctx, 1)->rx_qp_table_full, 1);
	CHECK(rx_qp_find(ctx, 0, 0xFFFFFF) == NULL);
	for (unsigned i = 0; i < MAX; i++)
		CHECK(receive(ctx, (uint16_t)(i & 1), 0x10 + i, 1) == first[i]);
	for (unsigned i = 0; i < MAX && first[i]; i++) {
		CHECK_EQ(first[i]->c.packets, 2);
		CHECK_EQ(first[i]->port, i & 1);
		CHECK_EQ(first[i]->qpn, 0x10 + i);
	}
	CHECK_EQ(rx_port_counters(ctx, 0)->rx_qp_table_full, 1);
	CHECK_EQ(rx_port_counters(ctx, 0)->frames, MAX + 1);
	rx_ctx_free(ctx);
}

int main(void)
{
	if (test_eal_start("test_qp_index", "0"))
		return 1;
	RUN(test_insert_find_miss);
	RUN(test_positions_in_insertion_order);
	RUN(test_many_ports_and_qpns);
	RUN(test_qpn_and_port_edges);
	RUN(test_table_full);
	RUN(test_shared_map_read_while_written);
	RUN(test_shared_map_full);
	RUN(test_names_are_the_callers);
	RUN(test_index_roles);
	RUN(test_receiver_inserts_at_run_time);
	test_eal_stop();
	return testlib_finish("test_qp_index");
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The TX roles' pacing order (engine/pace_queue.h): a heap of QPs their rate holds back and a FIFO
 * of QPs the lcore holds back, visited earliest first. Checked against a plain array of keys. */
#include <stdbool.h>

#include "pace_queue.h"
#include "testlib.h"

#define N_MAX 1024

/* Stand-ins: only the address of a QP matters to the queue. */
struct qp_tx {
	unsigned id;
};

static struct qp_tx qps[N_MAX];
static struct pace_slot heap[N_MAX], backlog[N_MAX];

static void queue_fill(struct pace_queue *q, unsigned n, const uint64_t *keys)
{
	memset(q, 0, sizeof(*q));
	q->heap = heap;
	q->backlog = backlog;
	q->cap = n;
	q->heap_n = n;
	for (unsigned i = 0; i < n; i++) {
		qps[i].id = i;
		heap[i] = (struct pace_slot){.next_fp = keys[i], .qp = &qps[i], .more = NULL};
	}
	pace_queue_init(q);
}

/* Every QP still queued is there once, with the key the model has; the heap is a heap. */
static int queue_matches(const struct pace_queue *q, const uint64_t *keys, const bool *gone, unsigned n)
{
	unsigned seen[N_MAX] = {0}, live = 0;

	for (unsigned i = 0; i < n; i++)
		live += !gone[i];
	if (pace_queue_size(q) != live)
		return 0;
	for (unsigned i = 0; i < q->heap_n; i++) {
		unsigned id = q->heap[i].qp->id;
		if (gone[id] || q->heap[i].next_fp != keys[id] || seen[id]++)
			return 0;
		if (i > 0 && q->heap[(i - 1) / 2].next_fp > q->heap[i].next_fp)
			return 0;
	}
	for (unsigned k = 0; k < q->backlog_n; k++) {
		const struct pace_slot *s = &q->backlog[(q->backlog_head + k) % q->cap];
		unsigned id = s->qp->id;
		if (gone[id] || s->next_fp != keys[id] || seen[id]++)
			return 0;
	}
	return 1;
}

static uint64_t min_live_key(const uint64_t *keys, const bool *gone, unsigned n)
{
	uint64_t m = UINT64_MAX;

	for (unsigned i = 0; i < n; i++)
		if (!gone[i] && keys[i] < m)
			m = keys[i];
	return m;
}

/* Random rounds of the engine's use: the first QP is always the earliest while the backlog takes
 * keys in order (as lcore-bound QPs' clamped times are), and nothing is lost or doubled. */
static void test_random_against_model(void)
{
	for (unsigned round = 0; round < 200; round++) {
		unsigned n = 1 + (unsigned)(test_rand() % N_MAX);
		uint64_t keys[N_MAX], now = 1000000, last_backlog = 0;
		bool gone[N_MAX] = {false};
		struct pace_queue q;
		int ok = 1, earliest = 1;

		for (unsigned i = 0; i < n; i++)
			keys[i] = now + test_rand() % 5000;
		queue_fill(&q, n, keys);
		ok &= queue_matches(&q, keys, gone, n);
		for (unsigned step = 0; step < 20 * n && pace_queue_size(&q); step++) {
			struct pace_slot *first = pace_queue_first(&q);
			unsigned id = first->qp->id;
			unsigned what = (unsigned)(test_rand() % 100);

			earliest &= first->next_fp == min_live_key(keys, gone, n);
			now = (now > first->next_fp ? now : first->next_fp) + test_rand() % 50;
			if (what < 2) {
				pace_queue_remove_first(&q, first);
				gone[id] = true;
			} else if (what < 50 && now >= last_backlog) {
				/* lcore-bound: clamped to now - lag, which only grows */
				keys[id] = now - 100;
				if (keys[id] < first->next_fp)
					keys[id] = first->next_fp;
				last_backlog = keys[id];
				pace_queue_requeue(&q, first, keys[id], true);
			} else {
				/* its rate holds it back: a later key (times never go back) */
				keys[id] = first->next_fp + 1 + test_rand() % 3000;
				pace_queue_requeue(&q, first, keys[id], false);
			}
			if ((step & 63) == 0)
				ok &= queue_matches(&q, keys, gone, n);
		}
		ok &= queue_matches(&q, keys, gone, n);
		CHECK(ok);
		CHECK(earliest);
		if (!ok || !earliest) {
			printf("  round %u, %u QPs\n", round, n);
			return;
		}
	}
}

/* The steady state of a lcore that cannot keep up: every QP ends in the backlog and the heap is
 * empty; the QPs then take turns, each once per round, in a fixed order. */
static void test_lcore_bound_round_robin(void)
{
	enum { N = 100 };
	uint64_t keys[N];
	unsigned order[N], now = 0;
	struct pace_queue q;
	int turns_ok = 1;

	for (unsigned i = 0; i < N; i++)
		keys[i] = i % 7;
	queue_fill(&q, N, keys);
	for (unsigned v = 0; v < N; v++) {
		struct pace_slot *first = pace_queue_first(&q);
		pace_queue_requeue(&q, first, 10 + now++, true);
	}
	CHECK_EQ(q.heap_n, 0u);
	CHECK_EQ(q.backlog_n, (unsigned)N);
	for (unsigned v = 0; v < N; v++)
		order[v] = q.backlog[(q.backlog_head + v) % N].qp->id;
	for (unsigned round = 0; round < 5; round++)
		for (unsigned v = 0; v < N; v++) {
			struct pace_slot *first = pace_queue_first(&q);
			turns_ok &= first->qp->id == order[v];
			pace_queue_requeue(&q, first, 10 + now++, true);
		}
	CHECK(turns_ok);
	/* a QP that caught up goes back to the heap and is first again when its time is earliest */
	{
		struct pace_slot *first = pace_queue_first(&q);
		unsigned id = first->qp->id;
		pace_queue_requeue(&q, first, 0, false);
		CHECK_EQ(q.heap_n, 1u);
		CHECK_EQ(pace_queue_first(&q)->qp->id, id);
		CHECK(pace_queue_first(&q) == &q.heap[0]);
	}
}

/* On equal keys the heap's QP goes first; the backlog's head when it is earlier. */
static void test_tie_and_order_between_the_two(void)
{
	uint64_t keys[2] = {5, 5};
	struct pace_queue q;

	queue_fill(&q, 2, keys);
	pace_queue_requeue(&q, pace_queue_first(&q), 7, true); /* one QP to the backlog at 7 */
	pace_queue_requeue(&q, pace_queue_first(&q), 7, false); /* the other stays in the heap at 7 */
	CHECK(pace_queue_first(&q) == &q.heap[0]);
	pace_queue_requeue(&q, pace_queue_first(&q), 8, false);
	CHECK(pace_queue_first(&q) == &q.backlog[q.backlog_head]);
	CHECK_EQ(pace_queue_first(&q)->next_fp, 7u);
	pace_queue_remove_first(&q, pace_queue_first(&q));
	CHECK_EQ(pace_queue_size(&q), 1u);
	pace_queue_remove_first(&q, pace_queue_first(&q));
	CHECK(pace_queue_first(&q) == NULL);
}

/* The ring wraps: pushes and pops around its end keep the order. */
static void test_backlog_wraps(void)
{
	enum { N = 5 };
	uint64_t keys[N] = {0, 1, 2, 3, 4};
	struct pace_queue q;
	unsigned expect = 0;
	int ok = 1;

	queue_fill(&q, N, keys);
	for (unsigned v = 0; v < 3 * N + 2; v++) {
		struct pace_slot *first = pace_queue_first(&q);
		ok &= first->qp->id == expect;
		expect = (expect + 1) % N;
		pace_queue_requeue(&q, first, 100 + v, true);
	}
	CHECK(ok);
	CHECK(q.backlog_head < N);
}

int main(void)
{
	RUN(test_random_against_model);
	RUN(test_lcore_bound_round_robin);
	RUN(test_tie_and_order_between_the_two);
	RUN(test_backlog_wraps);
	return testlib_finish("test_pace_queue");
}

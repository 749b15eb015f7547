/* SPDX-License-Identifier: BSD-3-Clause */
/* The TX roles' pacing order (datapath/pace_queue.h): a heap of QPs their rate holds back and a FIFO
 * of QPs the lcore holds back; QPs on schedule go first, earliest first, then the lcore-bound ones
 * in turn. Checked against a plain array of keys and where each QP is. */
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

/* The model's next QP at now: the earliest due QP of the heap, else the backlog's oldest entry
 * (order[] counts pushes), else the heap's earliest. */
static int model_first(const uint64_t *keys, const bool *gone, const bool *backlogged, const uint64_t *order,
		       unsigned n, uint64_t now)
{
	int heap_min = -1, oldest = -1;

	for (unsigned i = 0; i < n; i++) {
		if (gone[i])
			continue;
		if (backlogged[i]) {
			if (oldest < 0 || order[i] < order[oldest])
				oldest = (int)i;
		} else if (heap_min < 0 || keys[i] < keys[heap_min]) {
			heap_min = (int)i;
		}
	}
	if (heap_min >= 0 && (keys[heap_min] <= now || oldest < 0))
		return heap_min;
	return oldest;
}

/* Random rounds of the engine's use: the first QP is the model's (QPs on schedule before the
 * backlog, whose keys come in order as lcore-bound QPs' clamped times do), and nothing is lost or
 * doubled. Keys of the heap are unique, so that the model's earliest is one QP. */
static void test_random_against_model(void)
{
	for (unsigned round = 0; round < 200; round++) {
		unsigned n = 1 + (unsigned)(test_rand() % N_MAX);
		uint64_t keys[N_MAX], order[N_MAX] = {0}, now = 1000000, last_backlog = 0, pushes = 0;
		bool gone[N_MAX] = {false}, backlogged[N_MAX] = {false};
		struct pace_queue q;
		int ok = 1, as_model = 1;

		for (unsigned i = 0; i < n; i++)
			keys[i] = (now + test_rand() % 5000) * N_MAX + i;
		now *= N_MAX;
		queue_fill(&q, n, keys);
		ok &= queue_matches(&q, keys, gone, n);
		for (unsigned step = 0; step < 20 * n && pace_queue_size(&q); step++) {
			struct pace_slot *first = pace_queue_first(&q, now);
			unsigned id = first->qp->id;
			unsigned what = (unsigned)(test_rand() % 100);

			as_model &= (int)id == model_first(keys, gone, backlogged, order, n, now);
			now = (now > first->next_fp ? now : first->next_fp) + test_rand() % (50 * N_MAX);
			if (what < 2) {
				pace_queue_remove_first(&q, first);
				gone[id] = true;
			} else if (what < 50 && now >= last_backlog + 100 * N_MAX) {
				/* lcore-bound: clamped to now - lag, which only grows, and due */
				keys[id] = (now - 100 * N_MAX) / N_MAX * N_MAX + id;
				if (keys[id] < last_backlog)
					keys[id] = last_backlog;
				last_backlog = keys[id];
				backlogged[id] = true;
				order[id] = ++pushes;
				pace_queue_requeue(&q, first, keys[id], true);
			} else {
				/* its rate holds it back: a later key (times never go back) */
				keys[id] = (first->next_fp / N_MAX + 1 + test_rand() % 3000) * N_MAX + id;
				backlogged[id] = false;
				pace_queue_requeue(&q, first, keys[id], false);
			}
			if ((step & 63) == 0)
				ok &= queue_matches(&q, keys, gone, n);
		}
		ok &= queue_matches(&q, keys, gone, n);
		CHECK(ok);
		CHECK(as_model);
		if (!ok || !as_model) {
			printf("  round %u, %u QPs\n", round, n);
			return;
		}
	}
}

#define NOW UINT64_MAX /* every key is due */

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
		struct pace_slot *first = pace_queue_first(&q, NOW);
		pace_queue_requeue(&q, first, 10 + now++, true);
	}
	CHECK_EQ(q.heap_n, 0u);
	CHECK_EQ(q.backlog_n, (unsigned)N);
	for (unsigned v = 0; v < N; v++)
		order[v] = q.backlog[(q.backlog_head + v) % N].qp->id;
	for (unsigned round = 0; round < 5; round++)
		for (unsigned v = 0; v < N; v++) {
			struct pace_slot *first = pace_queue_first(&q, NOW);
			turns_ok &= first->qp->id == order[v];
			pace_queue_requeue(&q, first, 10 + now++, true);
		}
	CHECK(turns_ok);
	/* a QP that caught up goes back to the heap and is first again when its time is earliest */
	{
		struct pace_slot *first = pace_queue_first(&q, NOW);
		unsigned id = first->qp->id;
		pace_queue_requeue(&q, first, 0, false);
		CHECK_EQ(q.heap_n, 1u);
		CHECK_EQ(pace_queue_first(&q, NOW)->qp->id, id);
		CHECK(pace_queue_first(&q, NOW) == &q.heap[0]);
	}
}

/* The heap's root goes first when it is due, even beside an earlier backlog; the backlog's head
 * when the root is not due yet; the root (not due) when the backlog is empty. */
static void test_due_heap_before_the_backlog(void)
{
	uint64_t keys[2] = {5, 5};
	struct pace_queue q;

	queue_fill(&q, 2, keys);
	pace_queue_requeue(&q, pace_queue_first(&q, 5), 7, true); /* one QP to the backlog at 7 */
	pace_queue_requeue(&q, pace_queue_first(&q, 5), 7, false); /* the other stays in the heap at 7 */
	CHECK(pace_queue_first(&q, 7) == &q.heap[0]);
	pace_queue_requeue(&q, pace_queue_first(&q, 7), 9, false);
	CHECK(pace_queue_first(&q, 8) == &q.backlog[q.backlog_head]); /* the root is not due at 8 */
	CHECK_EQ(pace_queue_first(&q, 8)->next_fp, 7u);
	CHECK(pace_queue_first(&q, 9) == &q.heap[0]); /* due at 9: before the backlog's earlier 7 */
	pace_queue_remove_first(&q, pace_queue_first(&q, 8));
	CHECK_EQ(pace_queue_size(&q), 1u);
	CHECK(pace_queue_first(&q, 0) == &q.heap[0]); /* not due, but the only one: its key says when */
	pace_queue_remove_first(&q, pace_queue_first(&q, 9));
	CHECK(pace_queue_first(&q, 9) == NULL);
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
		struct pace_slot *first = pace_queue_first(&q, NOW);
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
	RUN(test_due_heap_before_the_backlog);
	RUN(test_backlog_wraps);
	return testlib_finish("test_pace_queue");
}

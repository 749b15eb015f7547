/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The order in which a TX role's paced QPs are visited: the earliest next send time first.
 *
 * Two places hold the QPs. A min-heap keyed by next send time holds those their rate holds back.
 * A FIFO ring, the backlog, holds those the lcore holds back: QPs more than LAG_MAX behind their
 * schedule, whose time was clamped to "now - LAG_MAX" when last visited. Such a QP's key is the
 * time of that visit (minus the same LAG_MAX, plus the few packets it sent), so QPs enter the
 * backlog in the order of their keys and every one of them is due; a lcore-bound QP's visit
 * costs a ring slot instead of a sift through the heap's every level (10 levels and their
 * mispredicted branches at 1,024 QPs: 7 % of a paced lcore's time).
 *
 * The next QP is the heap's root when it is due, else the backlog's head: a QP the lcore can
 * give its rate is sent on time, and the lcore-bound QPs share what is left, in turn. Taking the
 * earlier key of the two instead would keep a rate-held QP beside lcore-bound ones LAG_MAX late
 * for good (the backlog's keys are that far behind), at the edge of the clamp, so that any
 * moment the lcore is off its CPU is lost from its rate rather than caught up.
 *
 * Plain C without EAL (tests/unit/test_pace_queue.c). Hot path: no allocation; the two arrays
 * are sized for every QP of the role at start-up.
 */
#ifndef ENGINE_PACE_QUEUE_H
#define ENGINE_PACE_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct qp_tx;

/* Entries carry the key, so that ordering them touches no QP (1,024 QPs: 24 KB). */
struct pace_slot {
	uint64_t next_fp;
	struct qp_tx *qp;
	/* the two more cache lines a visit of the QP reads, prefetched with its first two without a
	 * dependent load: its group's shapes, or (QPs with congestion control, injection or RC
	 * state) the last two lines of its record */
	const void *more;
};

struct pace_queue {
	struct pace_slot *heap;    /* min-heap by next_fp: QPs their rate holds back */
	struct pace_slot *backlog; /* ring: QPs the lcore holds back, in the order of their visits */
	unsigned heap_n;
	unsigned backlog_head, backlog_n;
	unsigned cap;              /* both arrays' size: the role's QPs */
};

static inline void pace_heap_sift_down(struct pace_slot *h, unsigned n, unsigned i)
{
	struct pace_slot x = h[i];

	for (;;) {
		unsigned c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && h[c + 1].next_fp < h[c].next_fp)
			c++;
		if (h[c].next_fp >= x.next_fp)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

/* A QP back from the backlog usually has a late key: it rises few levels. */
static inline void pace_heap_push(struct pace_queue *q, struct pace_slot s)
{
	unsigned i = q->heap_n++;

	while (i > 0) {
		unsigned parent = (i - 1) / 2;
		if (q->heap[parent].next_fp <= s.next_fp)
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = s;
}

static inline void pace_backlog_push(struct pace_queue *q, struct pace_slot s)
{
	unsigned i = q->backlog_head + q->backlog_n++;

	if (i >= q->cap)
		i -= q->cap;
	q->backlog[i] = s;
}

static inline void pace_backlog_pop(struct pace_queue *q)
{
	if (++q->backlog_head == q->cap)
		q->backlog_head = 0;
	q->backlog_n--;
}

/* Starts from heap[0 .. heap_n) in any order (the slots were filled by the caller): every QP in
 * the heap, none in the backlog. */
static inline void pace_queue_init(struct pace_queue *q)
{
	q->backlog_head = 0;
	q->backlog_n = 0;
	for (unsigned i = q->heap_n / 2; i-- > 0;)
		pace_heap_sift_down(q->heap, q->heap_n, i);
}

static inline unsigned pace_queue_size(const struct pace_queue *q)
{
	return q->heap_n + q->backlog_n;
}

/* The QP to visit next: the heap's root when due at now_fp (the heap's order among QPs on
 * schedule), else the backlog's head (all due, in turn), else the heap's root not yet due (its key
 * says when), or NULL when none is left. */
static inline struct pace_slot *pace_queue_first(struct pace_queue *q, uint64_t now_fp)
{
	if (q->heap_n && (q->heap[0].next_fp <= now_fp || q->backlog_n == 0))
		return &q->heap[0];
	return q->backlog_n ? &q->backlog[q->backlog_head] : NULL;
}

/* The first QP (as pace_queue_first returned it) takes its next key: to the backlog when the lcore
 * holds it back (its time was just clamped), else to the heap. */
static inline void pace_queue_requeue(struct pace_queue *q, struct pace_slot *first, uint64_t next_fp,
				      bool lcore_bound)
{
	struct pace_slot s = *first;

	s.next_fp = next_fp;
	if (first != q->heap) { /* from the backlog */
		pace_backlog_pop(q);
		if (lcore_bound)
			pace_backlog_push(q, s);
		else
			pace_heap_push(q, s);
	} else if (lcore_bound) {
		q->heap[0] = q->heap[--q->heap_n];
		if (q->heap_n)
			pace_heap_sift_down(q->heap, q->heap_n, 0);
		pace_backlog_push(q, s);
	} else {
		q->heap[0].next_fp = next_fp;
		pace_heap_sift_down(q->heap, q->heap_n, 0);
	}
}

/* The first QP leaves (it finished). */
static inline void pace_queue_remove_first(struct pace_queue *q, struct pace_slot *first)
{
	if (first != q->heap) {
		pace_backlog_pop(q);
		return;
	}
	q->heap[0] = q->heap[--q->heap_n];
	if (q->heap_n)
		pace_heap_sift_down(q->heap, q->heap_n, 0);
}

#endif

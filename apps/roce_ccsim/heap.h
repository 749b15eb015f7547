/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The simulator's event queue: a binary min-heap keyed by (time, sequence number). The sequence
 * number is the order of insertion, so events due at the same nanosecond run in the order they
 * were scheduled, and a run never depends on the heap's internal layout: same inputs, same order.
 */
#ifndef ROCE_CCSIM_HEAP_H
#define ROCE_CCSIM_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ev {
	uint64_t t;                   /* ns */
	uint64_t seq;                 /* set by heap_push */
	uint64_t x;                   /* per type: a generation, a send time */
	uint32_t idx;                 /* flow or port */
	uint32_t bytes;
	uint32_t aux;                 /* the fabric's: the directed link a packet arrives by, a priority */
	uint32_t psn;                 /* the fabric's: a packet's or an ACK's sequence number */
	uint8_t type;
	uint8_t flags;
};

struct evheap {
	struct ev *a;
	size_t n, cap;
	uint64_t next_seq;
};

void heap_init(struct evheap *h);
void heap_free(struct evheap *h);
/* Exits the process when memory runs out (a simulation cannot go on without its events). */
void heap_push(struct evheap *h, struct ev e);
static inline const struct ev *heap_top(const struct evheap *h) { return h->n ? &h->a[0] : NULL; }
bool heap_pop(struct evheap *h, struct ev *out);

#endif

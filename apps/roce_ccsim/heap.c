/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Binary min-heap of events, see heap.h.
 */
#include "heap.h"

#include <stdio.h>
#include <stdlib.h>

static inline bool before(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

void heap_init(struct evheap *h)
{
	h->a = NULL;
	h->n = h->cap = 0;
	h->next_seq = 0;
}

void heap_free(struct evheap *h)
{
	free(h->a);
	heap_init(h);
}

void heap_push(struct evheap *h, struct ev e)
{
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 1024;
		struct ev *a = realloc(h->a, cap * sizeof(*a));

		if (!a) {
			fprintf(stderr, "roce-ccsim: out of memory (%zu events)\n", h->n);
			exit(1);
		}
		h->a = a;
		h->cap = cap;
	}
	e.seq = h->next_seq++;
	/* sift up: move parents down into the hole until e's place is found */
	for (i = h->n++; i > 0; i = (i - 1) / 2) {
		size_t parent = (i - 1) / 2;

		if (!before(&e, &h->a[parent]))
			break;
		h->a[i] = h->a[parent];
	}
	h->a[i] = e;
}

bool heap_pop(struct evheap *h, struct ev *out)
{
	struct ev last;
	size_t i = 0;

	if (!h->n)
		return false;
	*out = h->a[0];
	last = h->a[--h->n];
	/* sift down the last element from the root */
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(&h->a[c + 1], &h->a[c]))
			c++;
		if (!before(&h->a[c], &last))
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n)
		h->a[i] = last;
	return true;
}

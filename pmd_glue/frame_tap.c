/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>

#include <rte_ether.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>
#include <rte_ring.h>

#include "clock.h"
#include "frame_tap.h"

/* The tap's counters have one writer, its lcore; the main lcore reads them while it runs. */
#define TAP_ADD(field, v) __atomic_store_n(&(field), (field) + (v), __ATOMIC_RELAXED)

/* Each lcore's copies wait in its ring while the main lcore is away: it drains every millisecond,
 * but a loaded machine can keep it from its CPU for tens. So each lcore gets as many copies as
 * CAPTURE_MEMORY holds (less when the EAL heap is short): small ones (up to SMALL_COPY bytes
 * captured: ACKs, CNPs, READ requests, short frames, any 128-byte snap) and, when frames are kept
 * longer, large ones of the largest frame's size, half the memory each. 128-byte snaps: 65,536
 * copies; whole frames of 1,500-byte ports: 27,962 small and 8,981 large; 9,000-byte ports:
 * 27,962 small and 3,584 large (the least of each kind, whatever the memory). */
#define CAPTURE_MEMORY (32ull << 20)
#define COPIES_MIN 3584u        /* with the pool's slack, no more than the 4,607 copies of old */
#define COPIES_MAX 65536u
#define SMALL_COPY CAPTURE_SMALL_COPY
#define COPY_OVERHEAD (sizeof(struct rte_mbuf) + RTE_CACHE_LINE_SIZE) /* beside its data: the mbuf, the pool's */
#define COPY_BURST 64            /* copies capture_burst makes before it enqueues them */
#define POOL_CACHE 256
/* Copies of a pool that are neither in the ring nor free to take: a burst being made, a burst
 * being written, and what the two lcores' mempool caches hold (up to 1.5 times their size each). */
#define POOL_SLACK (COPY_BURST + CAPTURE_DRAIN_BURST + 2 * (POOL_CACHE * 3 / 2))

/* The enhanced packet block's time, from the engine's own time base (the latency probes' clock):
 * DPDK 22.11's conversion of the TSC multiplies before it divides and overflows once the process
 * is some seconds old (its timestamps land centuries ahead). The block starts the copy: type,
 * length, interface, then the time's high and low 32 bits, in host order like the whole file. */
static void set_time(struct rte_mbuf *copy, uint64_t ns)
{
	uint32_t *epb = rte_pktmbuf_mtod(copy, uint32_t *);

	epb[3] = (uint32_t)(ns >> 32);
	epb[4] = (uint32_t)ns;
}

/* A copy of m: a small one when what is captured of it fits (or no small copy is left), else a
 * large one; NULL when there is none. */
static struct rte_mbuf *copy_of(struct capture_lcore *c, uint16_t port_id, uint16_t queue, const struct rte_mbuf *m,
				enum rte_pcapng_direction dir, uint64_t tsc)
{
	struct rte_mbuf *copy = NULL;

	if (c->small && (!c->large || RTE_MIN(rte_pktmbuf_pkt_len(m), c->snaplen) <= SMALL_COPY))
		copy = rte_pcapng_copy(port_id, queue, m, c->small, c->snaplen, tsc, dir);
	if (!copy && c->large)
		copy = rte_pcapng_copy(port_id, queue, m, c->large, c->snaplen, tsc, dir);
	return copy;
}

void capture_burst(struct capture_lcore *c, uint16_t port_id, uint16_t queue, struct rte_mbuf *const *m, unsigned n,
		   bool tx, uint64_t tsc)
{
	struct rte_mbuf *copy[COPY_BURST];
	unsigned k = 0, sent;
	uint32_t *left;

	if (port_id >= CAPTURE_MAX_PORTS || !(c->port_mask >> port_id & 1))
		return;
	left = &c->countdown[port_id][tx];
	for (unsigned i = 0; i < n && k < COPY_BURST; i++) {
		if (--*left)
			continue;
		*left = c->every;
		copy[k] = copy_of(c, port_id, queue, m[i], tx ? RTE_PCAPNG_DIRECTION_OUT : RTE_PCAPNG_DIRECTION_IN, tsc);
		if (copy[k])
			set_time(copy[k], clock_tsc_to_ns(tsc)), k++;
		else
			TAP_ADD(c->dropped[port_id], 1);
	}
	if (!k)
		return;
	sent = rte_ring_sp_enqueue_burst(c->ring, (void **)copy, k, NULL);
	TAP_ADD(c->copied, sent);
	if (sent < k) {
		TAP_ADD(c->dropped[port_id], k - sent);
		rte_pktmbuf_free_bulk(copy + sent, k - sent);
	}
}

/* Copies of `room` bytes that `bytes` of memory hold, within [COPIES_MIN, COPIES_MAX]. */
static unsigned copies_in(uint64_t bytes, uint32_t room)
{
	uint64_t n = bytes / (COPY_OVERHEAD + room);

	return n < COPIES_MIN ? COPIES_MIN : n > COPIES_MAX ? COPIES_MAX : (unsigned)n;
}

static struct rte_mempool *copy_pool(const char *kind, unsigned l, unsigned copies, uint32_t room)
{
	char name[RTE_MEMPOOL_NAMESIZE];

	snprintf(name, sizeof(name), "cap_%s_%u", kind, l);
	return rte_pktmbuf_pool_create(name, copies + POOL_SLACK, POOL_CACHE, 0, (uint16_t)room,
				       (int)rte_lcore_to_socket_id(l));
}

static void free_buffers(struct capture_lcore *c)
{
	rte_ring_free(c->ring);
	rte_mempool_free(c->small);
	rte_mempool_free(c->large);
	c->ring = NULL;
	c->small = c->large = NULL;
}

/* The lcore's pools and ring for `budget` bytes of copies of up to `snap` bytes; `small_too`
 * false: only COPIES_MIN large ones (the least a run starts with). 0, or -1 with none of them. */
static int make_buffers(struct capture_lcore *c, unsigned l, uint32_t snap, uint64_t budget, bool small_too)
{
	uint32_t small_room = rte_pcapng_mbuf_size(RTE_MIN(snap, SMALL_COPY) + RTE_VLAN_HLEN);
	uint32_t large_room = RTE_MIN(rte_pcapng_mbuf_size(snap + RTE_VLAN_HLEN), (uint32_t)UINT16_MAX);
	char name[RTE_RING_NAMESIZE];

	if (snap <= SMALL_COPY)
		c->n_small = copies_in(budget, small_room), c->n_large = 0;
	else if (small_too)
		c->n_small = copies_in(budget / 2, small_room), c->n_large = copies_in(budget / 2, large_room);
	else
		c->n_small = 0, c->n_large = COPIES_MIN;
	c->small = c->n_small ? copy_pool("small", l, c->n_small, small_room) : NULL;
	c->large = c->n_large ? copy_pool("large", l, c->n_large, large_room) : NULL;
	snprintf(name, sizeof(name), "cap_ring_%u", l);
	c->ring = rte_ring_create(name, rte_align32pow2(c->n_small + c->n_large + 1), (int)rte_lcore_to_socket_id(l),
				  RING_F_SP_ENQ | RING_F_SC_DEQ);
	if ((c->small || !c->n_small) && (c->large || !c->n_large) && c->ring)
		return 0;
	free_buffers(c);
	return -1;
}

/* As many copies as CAPTURE_MEMORY holds, or half the EAL heap left shared by the `lcores` that
 * capture; fewer while the pools cannot be made, down to COPIES_MIN of each kind, then only
 * COPIES_MIN large ones. */
static int size_buffers(struct capture_lcore *c, unsigned l, uint32_t snap, unsigned lcores)
{
	struct rte_malloc_socket_stats heap;
	uint64_t budget = CAPTURE_MEMORY;

	if (!rte_malloc_get_socket_stats((int)rte_lcore_to_socket_id(l), &heap) &&
	    heap.heap_freesz_bytes / 2 / lcores < budget)
		budget = heap.heap_freesz_bytes / 2 / lcores;
	for (;; budget /= 2) {
		if (!make_buffers(c, l, snap, budget, true))
			return 0;
		if (c->n_small == COPIES_MIN && c->n_large <= COPIES_MIN)
			break;
	}
	return snap > SMALL_COPY ? make_buffers(c, l, snap, 0, false) : -1;
}

struct capture_lcore *capture_tap_create(unsigned l, const struct capture_tap_params *p)
{
	struct capture_lcore *c = rte_zmalloc("capture", sizeof(*c), RTE_CACHE_LINE_SIZE);

	if (!c || size_buffers(c, l, p->buffer_snap, p->lcores)) {
		capture_free(c);
		return NULL;
	}
	c->snaplen = p->snaplen ? p->snaplen : UINT32_MAX;
	c->every = p->every;
	for (unsigned port = 0; port < CAPTURE_MAX_PORTS; port++)
		c->countdown[port][0] = c->countdown[port][1] = 1;
	c->port_mask = p->port_mask;
	return c;
}

unsigned capture_tap_take(struct capture_lcore *c, struct rte_mbuf **m, unsigned n)
{
	return rte_ring_sc_dequeue_burst(c->ring, (void **)m, n, NULL);
}

unsigned capture_tap_waiting(const struct capture_lcore *c)
{
	return rte_ring_count(c->ring);
}

uint64_t capture_tap_dropped(const struct capture_lcore *c, uint16_t port_id)
{
	return port_id < CAPTURE_MAX_PORTS ? __atomic_load_n(&c->dropped[port_id], __ATOMIC_RELAXED) : 0;
}

void capture_free(struct capture_lcore *c)
{
	if (!c)
		return;
	free_buffers(c);
	rte_free(c);
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>
#include <rte_ring.h>
#include <rte_version.h>

#include "out_file.h"
#include "capture.h"
#include "clock.h"
#include "counters.h"
#include "engine_state.h"

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
#define SMALL_COPY 256u
#define COPY_OVERHEAD (sizeof(struct rte_mbuf) + RTE_CACHE_LINE_SIZE) /* beside its data: the mbuf, the pool's */
#define COPY_BURST 64            /* copies capture_burst makes before it enqueues them */
#define DRAIN_BURST 64u
#define POOL_CACHE 256
/* Copies of a pool that are neither in the ring nor free to take: a burst being made, a burst
 * being written, and what the two lcores' mempool caches hold (up to 1.5 times their size each). */
#define POOL_SLACK (COPY_BURST + DRAIN_BURST + 2 * (POOL_CACHE * 3 / 2))

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
			STAT_ADD(c->dropped[port_id], 1);
	}
	if (!k)
		return;
	sent = rte_ring_sp_enqueue_burst(c->ring, (void **)copy, k, NULL);
	STAT_ADD(c->copied, sent);
	if (sent < k) {
		STAT_ADD(c->dropped[port_id], k - sent);
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

static int lcore_state(struct engine *e, unsigned l, unsigned lcores, struct capture_lcore **out)
{
	const struct engine_config *cfg = e->cfg;
	struct capture_lcore *c;
	uint32_t snap = cfg->capture_snaplen, mtu = 0;

	for (unsigned p = 0; p < cfg->n_ports; p++) /* whole frames: the largest a port carries */
		mtu = cfg->ports[p].mtu > mtu ? cfg->ports[p].mtu : mtu;
	if (!snap)
		snap = mtu + 14 + 4 + 4;

	c = rte_zmalloc("capture", sizeof(*c), RTE_CACHE_LINE_SIZE);
	*out = c;
	if (!c || size_buffers(c, l, snap, lcores))
		return -1;
	c->snaplen = cfg->capture_snaplen ? cfg->capture_snaplen : UINT32_MAX;
	c->every = cfg->capture_every;
	for (unsigned p = 0; p < CAPTURE_MAX_PORTS; p++)
		c->countdown[p][0] = c->countdown[p][1] = 1;
	for (unsigned p = 0; p < e->n_ports; p++)
		if (!cfg->capture_ports || (cfg->capture_ports >> p & 1))
			c->port_mask |= 1ull << e->ports[p].port_id;
	return 0;
}

int capture_open(struct engine *e, char *err, size_t errlen)
{
	e->capture_fd = -1;
	if (!e->cfg->capture[0])
		return 0;
	e->capture_fd = out_make_dirs(e->cfg->capture) ? -1 : open(e->cfg->capture, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (e->capture_fd < 0) {
		snprintf(err, errlen, "run.capture: cannot write %s: %s", e->cfg->capture, strerror(errno));
		return -1;
	}
	return 0;
}

/* Every lcore's copies, then a line saying how many (the fewest an lcore got). */
static int lcores_state(struct engine *e, char *err, size_t errlen)
{
	unsigned lcores = 0, small = COPIES_MAX, large = COPIES_MAX;

	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		lcores += e->work[l] != NULL;
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		struct capture_lcore *c;
		if (!e->work[l])
			continue;
		if (lcore_state(e, l, lcores, &e->work[l]->cap)) {
			snprintf(err, errlen, "out of memory for the capture's copies (raise eal.memory_mb)");
			return -1;
		}
		c = e->work[l]->cap;
		small = RTE_MIN(small, c->n_small);
		large = RTE_MIN(large, c->n_large);
	}
	if (!lcores)
		return 0;
	printf("roce-engine: capture to %s: %u copies per lcore", e->cfg->capture, small + large);
	if (small && large)
		printf(" (%u of up to %u captured bytes, %u of more)", small, SMALL_COPY, large);
	printf("\n");
	return 0;
}

int capture_start(struct engine *e, char *err, size_t errlen)
{
	const struct engine_config *cfg = e->cfg;
	int fd = e->capture_fd;

	if (fd < 0)
		return 0;
	e->capture_fd = -1; /* the library owns it now (rte_pcapng_close closes it) */
	e->pcapng = rte_pcapng_fdopen(fd, NULL, NULL, "roce-engine (" RTE_VER_PREFIX ")", "RoCEv2 traffic engine capture");
	if (!e->pcapng) {
		close(fd);
		snprintf(err, errlen, "run.capture: rte_pcapng cannot open %s: %s", cfg->capture, rte_strerror(rte_errno));
		return -1;
	}
	return lcores_state(e, err, errlen);
}

/* Writes what one lcore's ring held when called, no more: a lcore that copies as fast as this
 * writes would keep the main lcore here for good (no live lines, no end of the run). */
static void drain_lcore(struct engine *e, struct capture_lcore *c)
{
	struct rte_mbuf *m[DRAIN_BURST];
	unsigned left = rte_ring_count(c->ring), n;

	for (; left && (n = rte_ring_sc_dequeue_burst(c->ring, (void **)m, RTE_MIN(left, DRAIN_BURST), NULL)) > 0;
	     left -= n) {
		if (rte_pcapng_write_packets(e->pcapng, m, (uint16_t)n) < 0)
			e->capture_write_errors += n;
		else
			e->capture_written += n;
		/* DPDK 22.11's header says the copies are freed; its code does not (dumpcap frees them) */
		rte_pktmbuf_free_bulk(m, n);
	}
}

void capture_drain(struct engine *e)
{
	if (!e->pcapng)
		return;
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		if (e->work[l] && e->work[l]->cap)
			drain_lcore(e, e->work[l]->cap);
}

void capture_finish(struct engine *e)
{
	if (!e->pcapng)
		return;
	capture_drain(e);
	rte_pcapng_close(e->pcapng);
	e->pcapng = NULL;
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		struct capture_lcore *c = e->work[l] ? e->work[l]->cap : NULL;
		for (unsigned p = 0; c && p < CAPTURE_MAX_PORTS; p++)
			e->capture_dropped += c->dropped[p];
	}
}

void capture_free(struct capture_lcore *c)
{
	if (!c)
		return;
	free_buffers(c);
	rte_free(c);
}

uint64_t capture_dropped_on(const struct engine *e, uint16_t port_id)
{
	uint64_t n = 0;

	for (unsigned l = 0; port_id < CAPTURE_MAX_PORTS && l < RTE_MAX_LCORE; l++)
		if (e->work[l] && e->work[l]->cap)
			n += stat_read(&e->work[l]->cap->dropped[port_id]);
	return n;
}

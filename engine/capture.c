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

#include "capture.h"
#include "clock.h"
#include "counters.h"
#include "engine_state.h"

/* Each lcore's ring holds what its frames need of copies while the main lcore is away (it drains
 * every millisecond, but a loaded machine can keep it from its CPU for tens): as many copies as
 * CAPTURE_MEMORY holds, a power of two in [CAPTURE_RING_MIN, CAPTURE_RING_MAX]; fewer if memory is
 * short. 128-byte snaps: 65,536 copies (26 MB); whole 1,500-byte frames: 16,384; 9,000-byte
 * frames: 4,096 (38 MB). */
#define CAPTURE_MEMORY (32u << 20)
#define CAPTURE_RING_MIN 4096u
#define CAPTURE_RING_MAX 65536u
#define COPY_BURST 64            /* copies capture_burst makes before it enqueues them */
#define DRAIN_BURST 64u
#define POOL_CACHE 256
/* Copies that are neither in the ring nor free to take: a burst being made, a burst being
 * written, and what the two lcores' mempool caches hold (up to 1.5 times their size each). */
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
		copy[k] = rte_pcapng_copy(port_id, queue, m[i], c->pool, c->snaplen, tsc,
					  tx ? RTE_PCAPNG_DIRECTION_OUT : RTE_PCAPNG_DIRECTION_IN);
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

/* The lcore's copy pool and a ring of `ring` slots (it holds ring - 1). 0, or -1 with neither. */
static int make_buffers(struct capture_lcore *c, unsigned l, unsigned ring, uint16_t room)
{
	int socket = (int)rte_lcore_to_socket_id(l);
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "cap_pool_%u", l);
	c->pool = rte_pktmbuf_pool_create(name, ring + POOL_SLACK, POOL_CACHE, 0, room, socket);
	snprintf(name, sizeof(name), "cap_ring_%u", l);
	c->ring = c->pool ? rte_ring_create(name, ring, socket, RING_F_SP_ENQ | RING_F_SC_DEQ) : NULL;
	if (c->ring)
		return 0;
	rte_mempool_free(c->pool);
	c->pool = NULL;
	return -1;
}

/* The largest ring (and pool) that CAPTURE_MEMORY holds, smaller while memory is short, down to
 * CAPTURE_RING_MIN (below that the run does not start). The ring's size, or 0. */
static unsigned size_buffers(struct capture_lcore *c, unsigned l, uint32_t snap)
{
	uint32_t room = rte_pcapng_mbuf_size(snap);
	uint64_t copy_bytes = sizeof(struct rte_mbuf) + (uint64_t)room;
	unsigned ring = CAPTURE_RING_MAX;

	if (room > UINT16_MAX)
		room = UINT16_MAX;
	while (ring > CAPTURE_RING_MIN && ring * copy_bytes > CAPTURE_MEMORY)
		ring /= 2;
	for (; ring >= CAPTURE_RING_MIN; ring /= 2)
		if (!make_buffers(c, l, ring, (uint16_t)room))
			return ring;
	return 0;
}

static int lcore_state(struct engine *e, unsigned l, struct capture_lcore **out)
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
	if (!c || !(c->ring_size = size_buffers(c, l, snap)))
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
	e->capture_fd = open(e->cfg->capture, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (e->capture_fd < 0) {
		snprintf(err, errlen, "run.capture: cannot write %s: %s", e->cfg->capture, strerror(errno));
		return -1;
	}
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
	unsigned queued = UINT32_MAX; /* the smallest ring's (memory may have run short for some) */
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		if (!e->work[l])
			continue;
		if (lcore_state(e, l, &e->work[l]->cap)) {
			snprintf(err, errlen, "out of memory for the capture's copies (raise eal.memory_mb)");
			return -1;
		}
		if (e->work[l]->cap->ring_size - 1 < queued)
			queued = e->work[l]->cap->ring_size - 1;
	}
	if (queued != UINT32_MAX)
		printf("roce-engine: capture to %s: up to %u copies queued per lcore\n", cfg->capture, queued);
	return 0;
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

uint64_t capture_dropped_on(const struct engine *e, uint16_t port_id)
{
	uint64_t n = 0;

	for (unsigned l = 0; port_id < CAPTURE_MAX_PORTS && l < RTE_MAX_LCORE; l++)
		if (e->work[l] && e->work[l]->cap)
			n += stat_read(&e->work[l]->cap->dropped[port_id]);
	return n;
}

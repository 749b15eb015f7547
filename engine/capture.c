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

#define CAPTURE_RING 4096        /* copies on their way to the main lcore (drained every ms), per lcore */
#define CAPTURE_POOL 4607        /* copies in flight per lcore: the ring's, and a write burst */
#define DRAIN_BURST 64

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
	struct rte_mbuf *copy[64];
	unsigned k = 0, sent;
	uint32_t *left;

	if (port_id >= 64 || !(c->port_mask >> port_id & 1))
		return;
	left = &c->countdown[port_id][tx];
	for (unsigned i = 0; i < n && k < 64; i++) {
		if (--*left)
			continue;
		*left = c->every;
		copy[k] = rte_pcapng_copy(port_id, queue, m[i], c->pool, c->snaplen, tsc,
					  tx ? RTE_PCAPNG_DIRECTION_OUT : RTE_PCAPNG_DIRECTION_IN);
		if (copy[k])
			set_time(copy[k], clock_tsc_to_ns(tsc)), k++;
		else
			STAT_ADD(c->dropped, 1);
	}
	if (!k)
		return;
	sent = rte_ring_sp_enqueue_burst(c->ring, (void **)copy, k, NULL);
	STAT_ADD(c->copied, sent);
	if (sent < k) {
		STAT_ADD(c->dropped, k - sent);
		rte_pktmbuf_free_bulk(copy + sent, k - sent);
	}
}

static int lcore_state(struct engine *e, unsigned l, struct capture_lcore **out)
{
	const struct engine_config *cfg = e->cfg;
	char name[RTE_RING_NAMESIZE];
	struct capture_lcore *c;
	uint32_t snap = cfg->capture_snaplen, mtu = 0;

	for (unsigned p = 0; p < cfg->n_ports; p++) /* whole frames: the largest a port carries */
		mtu = cfg->ports[p].mtu > mtu ? cfg->ports[p].mtu : mtu;
	if (!snap)
		snap = mtu + 14 + 4 + 4;

	c = rte_zmalloc("capture", sizeof(*c), RTE_CACHE_LINE_SIZE);
	if (!c)
		return -1;
	snprintf(name, sizeof(name), "cap_pool_%u", l);
	uint32_t room = rte_pcapng_mbuf_size(snap);

	c->pool = rte_pktmbuf_pool_create(name, CAPTURE_POOL, 256, 0, (uint16_t)(room < UINT16_MAX ? room : UINT16_MAX),
					  (int)rte_lcore_to_socket_id(l));
	snprintf(name, sizeof(name), "cap_ring_%u", l);
	c->ring = rte_ring_create(name, CAPTURE_RING, (int)rte_lcore_to_socket_id(l), RING_F_SP_ENQ | RING_F_SC_DEQ);
	*out = c;
	if (!c->pool || !c->ring)
		return -1;
	c->snaplen = cfg->capture_snaplen ? cfg->capture_snaplen : UINT32_MAX;
	c->every = cfg->capture_every;
	for (unsigned p = 0; p < 64; p++)
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
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		if (e->work[l] && lcore_state(e, l, &e->work[l]->cap)) {
			snprintf(err, errlen, "out of memory for the capture's copies (raise eal.memory_mb)");
			return -1;
		}
	return 0;
}

void capture_drain(struct engine *e)
{
	struct rte_mbuf *m[DRAIN_BURST];

	if (!e->pcapng)
		return;
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		struct capture_lcore *c = e->work[l] ? e->work[l]->cap : NULL;
		unsigned n;
		while (c && (n = rte_ring_sc_dequeue_burst(c->ring, (void **)m, DRAIN_BURST, NULL)) > 0) {
			if (rte_pcapng_write_packets(e->pcapng, m, (uint16_t)n) < 0)
				e->capture_write_errors += n;
			else
				e->capture_written += n;
		}
	}
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
		if (!c)
			continue;
		e->capture_dropped += c->dropped;
	}
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>
#include <rte_version.h>

#include "out_file.h"
#include "capture.h"
#include "engine_state.h"

/* What lcore taps copy: the config's frames (whole ones: the largest a port carries) of its
 * ports. */
static struct capture_tap_params tap_params(const struct engine *e, unsigned lcores)
{
	const struct engine_config *cfg = e->cfg;
	struct capture_tap_params p = { .snaplen = cfg->capture_snaplen, .every = cfg->capture_every, .lcores = lcores };
	uint32_t mtu = 0;

	for (unsigned i = 0; i < cfg->n_ports; i++)
		mtu = cfg->ports[i].mtu > mtu ? cfg->ports[i].mtu : mtu;
	p.buffer_snap = cfg->capture_snaplen ? cfg->capture_snaplen : mtu + 14 + 4 + 4;
	for (unsigned i = 0; i < e->n_ports; i++)
		if (!cfg->capture_ports || (cfg->capture_ports >> i & 1))
			p.port_mask |= 1ull << e->ports[i].port_id;
	return p;
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
	unsigned lcores = 0, small = UINT_MAX, large = UINT_MAX;
	struct capture_tap_params params;

	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		lcores += e->work[l] != NULL;
	params = tap_params(e, lcores);
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		struct capture_lcore *c;
		if (!e->work[l])
			continue;
		c = e->work[l]->cap = capture_tap_create(l, &params);
		if (!c) {
			snprintf(err, errlen, "out of memory for the capture's copies (raise eal.memory_mb)");
			return -1;
		}
		small = RTE_MIN(small, c->n_small);
		large = RTE_MIN(large, c->n_large);
	}
	if (!lcores)
		return 0;
	printf("roce-engine: capture to %s: %u copies per lcore", e->cfg->capture, small + large);
	if (small && large)
		printf(" (%u of up to %u captured bytes, %u of more)", small, CAPTURE_SMALL_COPY, large);
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
	struct rte_mbuf *m[CAPTURE_DRAIN_BURST];
	unsigned left = capture_tap_waiting(c), n;

	for (; left && (n = capture_tap_take(c, m, RTE_MIN(left, CAPTURE_DRAIN_BURST))) > 0; left -= n) {
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

	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		if (e->work[l] && e->work[l]->cap)
			n += capture_tap_dropped(e->work[l]->cap, port_id);
	return n;
}

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
#include "stats.h"

/* What lcore taps copy: the config's frames (whole ones: the largest a port carries) of its
 * ports. */
static struct capture_tap_params tap_params(const struct run_view *run, unsigned lcores)
{
	const struct engine_config *cfg = run->cfg;
	struct capture_tap_params p = { .snaplen = cfg->capture_snaplen, .every = cfg->capture_every, .lcores = lcores };
	uint32_t mtu = 0;

	for (unsigned i = 0; i < cfg->n_ports; i++)
		mtu = cfg->ports[i].mtu > mtu ? cfg->ports[i].mtu : mtu;
	p.buffer_snap = cfg->capture_snaplen ? cfg->capture_snaplen : mtu + 14 + 4 + 4;
	for (unsigned i = 0; i < run->n_ports; i++)
		if (!cfg->capture_ports || (cfg->capture_ports >> i & 1))
			p.port_mask |= 1ull << run->ports[i].port_id;
	return p;
}

int capture_open(struct run_view *run, char *err, size_t errlen)
{
	run->capture_fd = -1;
	if (!run->cfg->capture[0])
		return 0;
	run->capture_fd = out_make_dirs(run->cfg->capture) ? -1 : open(run->cfg->capture, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (run->capture_fd < 0) {
		snprintf(err, errlen, "run.capture: cannot write %s: %s", run->cfg->capture, strerror(errno));
		return -1;
	}
	return 0;
}

/* Every lcore's copies, then a line saying how many (the fewest an lcore got). */
static int lcores_state(struct run_view *run, char *err, size_t errlen)
{
	unsigned lcores = 0, small = UINT_MAX, large = UINT_MAX;
	struct capture_tap_params params;

	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		lcores += run->work[l] != NULL;
	params = tap_params(run, lcores);
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		struct capture_lcore *c;
		if (!run->work[l])
			continue;
		c = run->taps[l] = capture_tap_create(l, &params);
		if (!c) {
			snprintf(err, errlen, "out of memory for the capture's copies (raise eal.memory_mb)");
			return -1;
		}
		small = RTE_MIN(small, c->n_small);
		large = RTE_MIN(large, c->n_large);
	}
	if (!lcores)
		return 0;
	printf("roce-engine: capture to %s: %u copies per lcore", run->cfg->capture, small + large);
	if (small && large)
		printf(" (%u of up to %u captured bytes, %u of more)", small, CAPTURE_SMALL_COPY, large);
	printf("\n");
	return 0;
}

int capture_start(struct run_view *run, char *err, size_t errlen)
{
	const struct engine_config *cfg = run->cfg;
	int fd = run->capture_fd;

	if (fd < 0)
		return 0;
	run->capture_fd = -1; /* the library owns it now (rte_pcapng_close closes it) */
	run->pcapng = rte_pcapng_fdopen(fd, NULL, NULL, "roce-engine (" RTE_VER_PREFIX ")", "RoCEv2 traffic engine capture");
	if (!run->pcapng) {
		close(fd);
		snprintf(err, errlen, "run.capture: rte_pcapng cannot open %s: %s", cfg->capture, rte_strerror(rte_errno));
		return -1;
	}
	return lcores_state(run, err, errlen);
}

/* Writes what one lcore's ring held when called, no more: a lcore that copies as fast as this
 * writes would keep the main lcore here for good (no live lines, no end of the run). */
static void drain_lcore(struct run_view *run, struct capture_lcore *c)
{
	struct rte_mbuf *m[CAPTURE_DRAIN_BURST];
	unsigned left = capture_tap_waiting(c), n;

	for (; left && (n = capture_tap_take(c, m, RTE_MIN(left, CAPTURE_DRAIN_BURST))) > 0; left -= n) {
		if (rte_pcapng_write_packets(run->pcapng, m, (uint16_t)n) < 0)
			run->capture_write_errors += n;
		else
			run->capture_written += n;
		/* DPDK 22.11's header says the copies are freed; its code does not (dumpcap frees them) */
		rte_pktmbuf_free_bulk(m, n);
	}
}

void capture_drain(struct run_view *run)
{
	if (!run->pcapng)
		return;
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		if (run->taps[l])
			drain_lcore(run, run->taps[l]);
}

void capture_finish(struct run_view *run)
{
	if (!run->pcapng)
		return;
	capture_drain(run);
	rte_pcapng_close(run->pcapng);
	run->pcapng = NULL;
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		const struct capture_lcore *c = run->taps[l];
		for (unsigned p = 0; c && p < CAPTURE_MAX_PORTS; p++)
			run->capture_dropped += c->dropped[p];
	}
}

uint64_t capture_dropped_on(const struct run_view *run, uint16_t port_id)
{
	uint64_t n = 0;

	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		if (run->taps[l])
			n += capture_tap_dropped(run->taps[l], port_id);
	return n;
}

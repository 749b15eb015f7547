/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "clock.h"
#include "config.h"

struct time_base clock_time_base;

#define TIME_BASE_SAMPLES 64

void clock_time_base_init(uint64_t tsc_hz)
{
	struct time_base *b = &clock_time_base;
	uint64_t best = UINT64_MAX;

	/* The TSC read on both sides of the clock_gettime: the middle is its instant, wrong by at
	 * most half the bracket. A process preempted inside it (a busy machine) would put its whole
	 * time base, and every one-way latency and start time another process compares with it,
	 * milliseconds off: the narrowest of a few brackets is kept. */
	for (unsigned i = 0; i < TIME_BASE_SAMPLES; i++) {
		struct timespec ts;
		uint64_t t0 = rte_rdtsc(), t1;

		clock_gettime(CLOCK_REALTIME, &ts);
		t1 = rte_rdtsc();
		if (t1 - t0 < best) {
			best = t1 - t0;
			b->tsc0 = t0 + (t1 - t0) / 2;
			b->ns0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		}
	}
	b->tsc_hz = tsc_hz;
	b->mult = (uint64_t)(((unsigned __int128)1000000000u << 32) / tsc_hz);
}

/* ---- reading the NIC clock ------------------------------------------------------------------ */

static int read_nic(const struct port_clock *pc, uint64_t *ticks)
{
	struct timespec ts;

	if (pc->read_clock)
		return rte_eth_read_clock(pc->port_id, ticks);
	if (rte_eth_timesync_read_time(pc->port_id, &ts))
		return -1;
	*ticks = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return 0;
}

/* One (TSC, NIC) pair: the best of a few tries, the TSC at the middle of the narrowest read. */
static int sample_pair(const struct port_clock *pc, uint64_t *tsc, uint64_t *nic)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 5; i++) {
		uint64_t t0 = rte_rdtsc(), v, t1;

		if (read_nic(pc, &v))
			return -1;
		t1 = rte_rdtsc();
		if (t1 - t0 < best) {
			best = t1 - t0;
			*tsc = t0 + (t1 - t0) / 2;
			*nic = v;
		}
	}
	return 0;
}

static void publish(struct port_clock *pc, uint64_t tsc, uint64_t nic)
{
	double tick_ns = 1e9 / pc->nic_hz;

	rte_seqlock_write_lock(&pc->lock);
	pc->map.nic0 = nic;
	pc->map.host0 = clock_tsc_to_ns(tsc);
	pc->map.ns_per_tick_q32 = (int64_t)(tick_ns * 4294967296.0);
	rte_seqlock_write_unlock(&pc->lock);
}

void port_clock_sample(struct port_clock *pc)
{
	uint64_t tsc = 0, nic = 0;
	double secs;

	if (pc->source != PORT_TS_NIC || sample_pair(pc, &tsc, &nic))
		return;
	/* how far the map drifted since the last sample, before it is refitted */
	pc->last_residual_ns = (double)(int64_t)(port_clock_nic_to_ns(pc, nic) - clock_tsc_to_ns(tsc));
	secs = (double)(tsc - pc->first_tsc) / (double)clock_time_base.tsc_hz;
	if (secs > 0.001 && nic != pc->first_nic)
		pc->nic_hz = (double)(nic - pc->first_nic) / secs; /* over the longest baseline */
	publish(pc, tsc, nic);
	pc->samples++;
}

/* ---- set-up --------------------------------------------------------------------------------- */

int port_clock_plan(const struct cfg_port *cp, const char *driver, const struct rte_eth_dev_info *info,
		    struct rte_eth_conf *conf, struct port_clock *pc, char *err, size_t errlen)
{
	memset(pc, 0, sizeof(*pc));
	rte_seqlock_init(&pc->lock);
	pc->source = PORT_TS_TSC;
	pc->how = "TSC at RX burst";
	pc->ts_offset = -1;
	if (cp->timestamps != CFG_TS_SOFTWARE) {
		if (!strcmp(driver, "net_pcap")) {
			/* net_pcap stamps every frame it reads with the capture's time (it registers the
			 * field itself and does not list the offload) */
			pc->source = PORT_TS_PCAP;
			pc->how = "capture timestamps (net_pcap)";
			pc->resolution_ns = 1000;
		} else if (info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP) {
			conf->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
			pc->source = PORT_TS_NIC;
			pc->how = "NIC RX timestamps";
		} else if (cp->timestamps == CFG_TS_HARDWARE) {
			snprintf(err, errlen, "port %s: timestamps = \"hardware\", but %s offers no RX timestamps "
				 "(RTE_ETH_RX_OFFLOAD_TIMESTAMP; use \"auto\" or \"software\")", cp->name, driver);
			return -1;
		}
	}
	if (cp->tx_schedule_lead_us > 0 && (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_SEND_ON_TIMESTAMP)) {
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_SEND_ON_TIMESTAMP;
		pc->tx_schedule = true;
		pc->tx_lead_ns = (uint64_t)(cp->tx_schedule_lead_us * 1000.0);
	}
	if (pc->source == PORT_TS_TSC)
		pc->resolution_ns = 1e9 / (double)clock_time_base.tsc_hz;
	return 0;
}

int port_clock_start(uint16_t port_id, struct port_clock *pc, char *err, size_t errlen)
{
	uint64_t tsc0 = 0, nic0 = 0, tsc1 = 0, nic1 = 0;
	int rc;

	pc->port_id = port_id;
	if (pc->source == PORT_TS_PCAP || pc->source == PORT_TS_NIC) {
		rc = rte_mbuf_dyn_rx_timestamp_register(&pc->ts_offset, &pc->ts_flag);
		if (rc) {
			snprintf(err, errlen, "cannot register the mbuf RX timestamp field: %s", rte_strerror(rte_errno));
			return -1;
		}
	}
	if (pc->tx_schedule && rte_mbuf_dyn_tx_timestamp_register(&pc->tx_ts_offset, &pc->tx_ts_flag)) {
		snprintf(err, errlen, "cannot register the mbuf TX timestamp field: %s", rte_strerror(rte_errno));
		return -1;
	}
	if (pc->source != PORT_TS_NIC && !pc->tx_schedule)
		return 0;
	/* the NIC clock: rte_eth_read_clock where the PMD has it, else the IEEE 1588 clock */
	pc->read_clock = rte_eth_read_clock(port_id, &nic0) == 0;
	if (!pc->read_clock)
		pc->timesync = rte_eth_timesync_enable(port_id) == 0 && read_nic(pc, &nic0) == 0;
	if (!pc->read_clock && !pc->timesync) {
		/* RX timestamps with no way to read the clock: they cannot be put on the time base */
		pc->source = PORT_TS_TSC;
		pc->how = "TSC at RX burst (the NIC stamps, but its clock cannot be read)";
		pc->resolution_ns = 1e9 / (double)clock_time_base.tsc_hz;
		pc->tx_schedule = false;
		return 0;
	}
	/* the frequency over 20 ms, refined at every later sample */
	if (sample_pair(pc, &tsc0, &nic0))
		goto unreadable;
	rte_delay_us_block(20000);
	if (sample_pair(pc, &tsc1, &nic1) || nic1 == nic0)
		goto unreadable;
	pc->first_tsc = tsc0;
	pc->first_nic = nic0;
	pc->nic_hz = (double)(nic1 - nic0) * (double)clock_time_base.tsc_hz / (double)(tsc1 - tsc0);
	pc->resolution_ns = 1e9 / pc->nic_hz;
	pc->how = pc->read_clock ? "NIC RX timestamps, clock read with rte_eth_read_clock"
				 : "NIC RX timestamps, IEEE 1588 clock";
	publish(pc, tsc1, nic1);
	pc->samples = 2;
	return 0;
unreadable:
	snprintf(err, errlen, "the NIC clock of port %u cannot be read or does not advance", port_id);
	return -1;
}

void port_clock_schedule_tx(const struct port_clock *pc, struct rte_mbuf *m, uint64_t at_ns)
{
	struct nic_map map;
	uint32_t sn;
	uint64_t ticks;

	do {
		sn = rte_seqlock_read_begin(&pc->lock);
		map = pc->map;
	} while (rte_seqlock_read_retry(&pc->lock, sn));
	/* the inverse map: ticks = nic0 + (ns - host0) / ns_per_tick (a division: probes only) */
	ticks = map.nic0 + (uint64_t)(int64_t)(((__int128)(int64_t)(at_ns - map.host0) << 32) / map.ns_per_tick_q32);
	*RTE_MBUF_DYNFIELD(m, pc->tx_ts_offset, rte_mbuf_timestamp_t *) = ticks;
	m->ol_flags |= pc->tx_ts_flag;
}

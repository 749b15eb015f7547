/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Time: the engine's time base (nanoseconds since the UNIX epoch, kept by the invariant TSC) and,
 * per port, where RX times come from:
 *   - "nic":  the NIC's RX timestamps (RTE_ETH_RX_OFFLOAD_TIMESTAMP, the mbuf's dynamic timestamp
 *             field), in NIC clock ticks mapped onto the time base by pairs of (TSC, NIC clock)
 *             samples taken at start and every stats interval (rte_eth_read_clock, else the IEEE
 *             1588 clock through rte_eth_timesync_read_time);
 *   - "pcap": net_pcap's capture timestamps (microseconds since the epoch in DPDK 22.11);
 *   - "tsc":  the TSC when the burst was received.
 * docs/latency.md says how each works and what its errors are.
 */
#ifndef ROCE_PMD_GLUE_CLOCK_H
#define ROCE_PMD_GLUE_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_seqlock.h>

struct cfg_port;
struct rte_eth_conf;
struct rte_eth_dev_info;

/* ns = ns0 + (tsc - tsc0) * mult >> 32 */
struct time_base {
	uint64_t tsc0;
	uint64_t ns0;
	uint64_t mult;
	uint64_t tsc_hz;
};
extern struct time_base clock_time_base;

/* Once, at start-up: CLOCK_REALTIME and the TSC read together. */
void clock_time_base_init(uint64_t tsc_hz);

static inline uint64_t clock_tsc_to_ns(uint64_t tsc)
{
	const struct time_base *b = &clock_time_base;

	return b->ns0 + (uint64_t)(((unsigned __int128)(tsc - b->tsc0) * b->mult) >> 32);
}

static inline uint64_t clock_ns_to_tsc(uint64_t ns)
{
	const struct time_base *b = &clock_time_base;

	return b->tsc0 + (uint64_t)(((unsigned __int128)(ns - b->ns0) * b->tsc_hz) / 1000000000u);
}

enum port_ts_source { PORT_TS_TSC, PORT_TS_NIC, PORT_TS_PCAP };

/* A NIC clock's ticks onto the time base: ns = host0 + (ticks - nic0) * ns_per_tick_q32 >> 32,
 * republished by the main lcore at each sample, read by RX lcores under a seqlock. */
struct nic_map {
	uint64_t nic0, host0;
	int64_t ns_per_tick_q32;
};

struct port_clock {
	enum port_ts_source source;
	double resolution_ns;
	const char *how;              /* one phrase for the start-up line and the report */
	int ts_offset;                /* the mbuf timestamp field and RX flag (source nic or pcap) */
	uint64_t ts_flag;
	/* the NIC clock (source nic) */
	bool read_clock, timesync;    /* how it is read: rte_eth_read_clock, else IEEE 1588 */
	uint16_t port_id;
	double nic_hz;                /* measured against the TSC */
	uint64_t first_tsc, first_nic;/* the first sample: frequency over the longest baseline */
	rte_seqlock_t lock;
	struct nic_map map;
	uint64_t samples;
	double last_residual_ns;      /* how far the newest sample was from the previous map */
	/* scheduled sending of probes (RTE_ETH_TX_OFFLOAD_SEND_ON_TIMESTAMP) */
	bool tx_schedule;
	int tx_ts_offset;
	uint64_t tx_ts_flag;
	uint64_t tx_lead_ns;
};

/* Before rte_eth_dev_configure: picks the source from the config and what the PMD offers, adds
 * the offloads to conf. Returns -1 with a reason when `timestamps = "hardware"` cannot be had. */
int port_clock_plan(const struct cfg_port *cp, const char *driver, const struct rte_eth_dev_info *info,
		    struct rte_eth_conf *conf, struct port_clock *pc, char *err, size_t errlen);
/* After the port started: the dynamic fields, the clock's first samples and its frequency. */
int port_clock_start(uint16_t port_id, struct port_clock *pc, char *err, size_t errlen);
/* The main lcore, every stats interval: a new (TSC, NIC) sample, the map refitted. */
void port_clock_sample(struct port_clock *pc);

static inline uint64_t port_clock_nic_to_ns(const struct port_clock *pc, uint64_t ticks)
{
	struct nic_map m;
	uint32_t sn;

	do {
		sn = rte_seqlock_read_begin(&pc->lock);
		m = pc->map;
	} while (rte_seqlock_read_retry(&pc->lock, sn));
	return m.host0 + (uint64_t)(int64_t)(((__int128)(int64_t)(ticks - m.nic0) * m.ns_per_tick_q32) >> 32);
}

/* When frame m was received, on the time base; sw_ns is the software time of its burst. */
static inline uint64_t port_clock_rx_ns(const struct port_clock *pc, const struct rte_mbuf *m, uint64_t sw_ns)
{
	uint64_t v;

	if (pc->source == PORT_TS_TSC || !(m->ol_flags & pc->ts_flag))
		return sw_ns;
	v = *RTE_MBUF_DYNFIELD(m, pc->ts_offset, const rte_mbuf_timestamp_t *);
	if (pc->source == PORT_TS_PCAP)
		return v * 1000;
	return port_clock_nic_to_ns(pc, v);
}

/* Scheduled sending: asks the PMD to send m at time-base time `at_ns` (in NIC ticks). */
void port_clock_schedule_tx(const struct port_clock *pc, struct rte_mbuf *m, uint64_t at_ns);

#endif

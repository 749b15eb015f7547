/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Prometheus exposition of the engine's state. A family's samples must be contiguous in the
 * text, so each part gathers its numbers once into the work area and then writes family by
 * family. Names follow prometheus.io's conventions (docs/monitoring.md#metrics): base units
 * (bytes, seconds; rates in bytes per second), roce_<object>_<tx|rx>_<what>_total for counters,
 * static attributes in _info metrics. Label values are the config's names ([A-Za-z0-9_-]);
 * strings from elsewhere (drivers, pools, the version) go through label_value's escaping.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_mempool.h>

#include "stats.h"
#include "metrics.h"
#include "roce_version.h"
#include "fabric_lab.h"
#include "report_switch.h"
#include "switch.h"

#define BYTES_PER_KBPS (1000.0 / 8) /* a rate in kb/s, as congestion control keeps it, in bytes/s */
#define BYTES_PER_GBPS (1e9 / 8)

/* ---- text ----------------------------------------------------------------------------------- */

static void put(struct metrics_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct metrics_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->failed)
		return;
	for (;;) {
		size_t room = t->cap - t->len;
		va_start(ap, fmt);
		n = vsnprintf(t->buf ? t->buf + t->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = true;
			return;
		}
		if ((size_t)n < room) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = t->cap ? t->cap * 2 : 64 * 1024;
		while (cap - t->len <= (size_t)n)
			cap *= 2;
		char *b = realloc(t->buf, cap);
		if (!b) {
			t->failed = true;
			return;
		}
		t->buf = b;
		t->cap = cap;
	}
}

void metrics_text_free(struct metrics_text *t)
{
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

static void family(struct metrics_text *t, const char *name, const char *type, const char *help)
{
	put(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Nanoseconds as seconds, exactly (a decimal with 9 places): no rounding in sums that grow. */
static void put_seconds(struct metrics_text *t, uint64_t ns)
{
	put(t, "%" PRIu64 ".%09" PRIu64 "\n", ns / 1000000000, ns % 1000000000);
}

/* A label value from outside the config (a driver's or pool's name, the version): '\', '"' and a
 * line feed escaped as the exposition format says; cut at 127 bytes. */
static const char *label_value(const char *s, char out[128])
{
	size_t n = 0;

	for (; *s && n < 125; s++) {
		if (*s == '\\' || *s == '"' || *s == '\n')
			out[n++] = '\\';
		out[n++] = *s == '\n' ? 'n' : *s;
	}
	out[n] = '\0';
	return out;
}

/* ---- the work area: every scrape's numbers, sized at start-up ------------------------------- */

struct port_numbers {
	struct port_totals t;
	struct rte_eth_stats hw;
	struct port_pfc pfc;
	uint64_t ecn_ce;
	uint64_t tx_prio_packets[8], tx_prio_bytes[8];
};

enum flow_counter {
	FC_TX_PACKETS, FC_TX_BYTES, FC_MESSAGES, FC_RETRANSMITS, FC_RX_PACKETS, FC_RX_BYTES, FC_RX_PAYLOAD, FC_LOST,
	FC_ECN_CE, FC_CNP_TX, FC_CNP_RX, FC_COUNT
};

struct cc_numbers {
	uint64_t sum, lo, hi, cnps, cuts, n;
};

/* Latency bounds (le) of the histograms: 1-2-5 from 100 ns to 10 s, as Go formats them (so that
 * Prometheus's own formatting of le gives the same strings). */
static const struct {
	uint64_t ns;
	const char *le;
} lat_bounds[] = {
	{100, "1e-07"},         {200, "2e-07"},         {500, "5e-07"},         {1000, "1e-06"},
	{2000, "2e-06"},        {5000, "5e-06"},        {10000, "1e-05"},       {20000, "2e-05"},
	{50000, "5e-05"},       {100000, "0.0001"},     {200000, "0.0002"},     {500000, "0.0005"},
	{1000000, "0.001"},     {2000000, "0.002"},     {5000000, "0.005"},     {10000000, "0.01"},
	{20000000, "0.02"},     {50000000, "0.05"},     {100000000, "0.1"},     {200000000, "0.2"},
	{500000000, "0.5"},     {1000000000, "1"},      {2000000000, "2"},      {5000000000, "5"},
	{10000000000, "10"},
};
#define LAT_BOUNDS (sizeof(lat_bounds) / sizeof(lat_bounds[0]))

/* A histogram in Prometheus's buckets: counts per bound (not yet cumulative), the rest (+Inf). */
struct lat_buckets {
	uint64_t n[LAT_BOUNDS + 1];
	uint64_t sum_ns;
};

struct metrics_work {
	struct port_numbers ports[CFG_MAX_PORTS];
	uint64_t flows[CFG_MAX_FLOW_GROUPS][FC_COUNT];
	struct cc_numbers cc[CFG_MAX_FLOW_GROUPS];
	unsigned cut[LAT_BOUNDS];      /* the first HDR bucket each bound leaves out */
	struct lat_stats one;          /* one QP's or port's histogram merged over the lcores */
	size_t last_len;               /* the previous page's length: the next one's first buffer */
};

/* An HDR bucket counts below bound B when all of it does (its hi <= B): a sample is never counted
 * below a bound it exceeds. Below 128 ns buckets are single values (exact); above, the samples of
 * the one bucket that straddles B (within B/64 below it) count in the next bound. */
static unsigned first_bucket_above(uint64_t ns)
{
	unsigned i = hist_index(ns);

	return hist_bucket_hi(i) <= ns ? i + 1 : i;
}

struct metrics_work *metrics_work_new(void)
{
	struct metrics_work *w = aligned_alloc(64, sizeof(*w)); /* lat_stats wants its cache line */

	if (!w)
		return NULL;
	memset(w, 0, sizeof(*w));
	for (unsigned b = 0; b < LAT_BOUNDS; b++)
		w->cut[b] = first_bucket_above(lat_bounds[b].ns);
	return w;
}

void metrics_work_free(struct metrics_work *w) { free(w); }

/* ---- ports ---------------------------------------------------------------------------------- */

enum port_counter {
	PC_TX_PACKETS, PC_TX_BYTES, PC_RX_PACKETS, PC_RX_BYTES, PC_RX_DROPPED, PC_RX_MALFORMED, PC_RX_CNP,
	PC_RX_ECN_CE, PC_RX_PAUSE, PC_TX_CNP, PC_TX_CNP_SUPPRESSED, PC_TX_QUEUE_FULL, PC_MBUF_FAIL, PC_COUNT
};

static const struct {
	const char *name, *help;
} port_counters[PC_COUNT] = {
	[PC_TX_PACKETS] = {"roce_port_tx_packets_total", "Frames the engine sent on the port."},
	[PC_TX_BYTES] = {"roce_port_tx_bytes_total", "Bytes (L2 frames, no FCS) the engine sent on the port."},
	[PC_RX_PACKETS] = {"roce_port_rx_packets_total", "Frames received on the port."},
	[PC_RX_BYTES] = {"roce_port_rx_bytes_total", "Bytes (L2 frames, no FCS) received on the port."},
	[PC_RX_DROPPED] = {"roce_port_rx_dropped_packets_total",
			   "Frames dropped on receive: malformed, RX QP table full, PMD missed or no mbuf."},
	[PC_RX_MALFORMED] = {"roce_port_rx_malformed_packets_total", "Frames that failed parsing or the ICRC."},
	[PC_RX_CNP] = {"roce_port_rx_cnp_packets_total", "CNPs received on the port."},
	[PC_RX_ECN_CE] = {"roce_port_rx_ecn_ce_packets_total", "RoCE packets received with ECN CE."},
	[PC_RX_PAUSE] = {"roce_port_rx_pause_packets_total", "802.3x PAUSE frames received."},
	[PC_TX_CNP] = {"roce_port_tx_cnp_packets_total", "CNPs the port's notification point sent."},
	[PC_TX_CNP_SUPPRESSED] = {"roce_port_tx_cnp_suppressed_total",
				  "CE marks answered by no CNP (min_time_between_cnps, no peer, failed)."},
	[PC_TX_QUEUE_FULL] = {"roce_port_tx_queue_full_packets_total", "Frames the PMD's TX queue refused at first."},
	[PC_MBUF_FAIL] = {"roce_port_mbuf_alloc_failures_total", "mbuf allocation failures."},
};

static uint64_t port_counter_value(const struct port_numbers *n, enum port_counter c)
{
	const struct rx_port_counters *rx = &n->t.rx;

	switch (c) {
	case PC_TX_PACKETS: return n->t.tx_packets;
	case PC_TX_BYTES: return n->t.tx_bytes;
	case PC_RX_PACKETS: return n->t.rx_frames;
	case PC_RX_BYTES: return n->t.rx_bytes;
	case PC_RX_DROPPED: return stats_rx_dropped(&n->t, &n->hw);
	case PC_RX_MALFORMED: return n->t.rx_malformed;
	case PC_RX_CNP: return rx->kind[WIRE_KIND_CNP];
	case PC_RX_ECN_CE: return n->ecn_ce;
	case PC_RX_PAUSE: return rx->pause_rx;
	case PC_TX_CNP: return rx->np_cnp_tx;
	case PC_TX_CNP_SUPPRESSED: return rx->np_suppressed + rx->np_no_peer + rx->np_failed;
	case PC_TX_QUEUE_FULL: return n->t.tx_ring_full;
	case PC_MBUF_FAIL: return n->t.mbuf_alloc_fail;
	default: return 0;
	}
}

static void gather_ports(const struct run_view *run, struct port_numbers *n, uint64_t now)
{
	uint64_t ecn_ce[CFG_MAX_PORTS];

	memset(n, 0, sizeof(*n) * run->n_ports);
	snapshot_ecn_ce_per_port(run, ecn_ce);
	for (unsigned p = 0; p < run->n_ports; p++) {
		snapshot_port_totals(run, p, &n[p].t);
		stats_port_hw(run, p, &n[p].hw);
		snapshot_port_pfc(run, p, now, &n[p].pfc);
		n[p].ecn_ce = ecn_ce[p];
	}
	for (unsigned q = 0; q < run->n_qps; q++) {
		const struct qp_tx *qp = &run->qps[q];
		n[qp->port].tx_prio_packets[qp->prio] += stat_read(&qp->c.tx_packets);
		n[qp->port].tx_prio_bytes[qp->prio] += stat_read(&qp->c.tx_bytes);
	}
}

/* A per-(port, priority) counter family; `pick` returns the 8 values of a port (`ns`: nanoseconds,
 * written as seconds). */
static void priority_family(struct metrics_text *t, const struct run_view *run, const struct port_numbers *n,
			    const char *name, const char *help, const uint64_t *(*pick)(const struct port_numbers *),
			    bool ns)
{
	family(t, name, "counter", help);
	for (unsigned p = 0; p < run->n_ports; p++) {
		const uint64_t *v = pick(&n[p]);
		for (unsigned k = 0; k < 8; k++) {
			put(t, "%s{port=\"%s\",priority=\"%u\"} ", name, run->cfg->ports[p].name, k);
			if (ns)
				put_seconds(t, v[k]);
			else
				put(t, "%" PRIu64 "\n", v[k]);
		}
	}
}

static const uint64_t *pick_pfc_rx(const struct port_numbers *n) { return n->t.rx.pfc_rx; }
static const uint64_t *pick_pfc_xoff_rx(const struct port_numbers *n) { return n->t.rx.pfc_xoff_rx; }
static const uint64_t *pick_pfc_tx(const struct port_numbers *n) { return n->pfc.pfc_tx; }
static const uint64_t *pick_paused(const struct port_numbers *n) { return n->pfc.paused_ns; }
static const uint64_t *pick_rx_prio_packets(const struct port_numbers *n) { return n->t.rx.prio_frames; }
static const uint64_t *pick_rx_prio_bytes(const struct port_numbers *n) { return n->t.rx.prio_bytes; }
static const uint64_t *pick_tx_prio_packets(const struct port_numbers *n) { return n->tx_prio_packets; }
static const uint64_t *pick_tx_prio_bytes(const struct port_numbers *n) { return n->tx_prio_bytes; }

static void write_ports(struct metrics_text *t, const struct run_view *run, struct port_numbers *n, uint64_t now)
{
	char v[128];

	gather_ports(run, n, now);
	family(t, "roce_port_info", "gauge", "The port's static attributes (value 1): its PMD's driver.");
	for (unsigned p = 0; p < run->n_ports; p++)
		put(t, "roce_port_info{port=\"%s\",driver=\"%s\"} 1\n", run->cfg->ports[p].name,
		    label_value(run->ports[p].driver, v));
	family(t, "roce_port_link_speed_bytes_per_second", "gauge",
	       "The port's link speed (configured or from the PMD), in bytes per second.");
	for (unsigned p = 0; p < run->n_ports; p++)
		put(t, "roce_port_link_speed_bytes_per_second{port=\"%s\"} %.17g\n", run->cfg->ports[p].name,
		    run->ports[p].link_speed_gbps * BYTES_PER_GBPS);
	family(t, "roce_port_link_up", "gauge", "The port's link as the main lcore last saw it: 1 up, 0 down, -1 unknown.");
	for (unsigned p = 0; p < run->n_ports; p++)
		put(t, "roce_port_link_up{port=\"%s\"} %d\n", run->cfg->ports[p].name,
		    __atomic_load_n(&run->link[p].state, __ATOMIC_RELAXED));
	family(t, "roce_port_link_changes_total", "counter", "Link state changes seen during the run.");
	for (unsigned p = 0; p < run->n_ports; p++)
		put(t, "roce_port_link_changes_total{port=\"%s\"} %" PRIu64 "\n", run->cfg->ports[p].name,
		    __atomic_load_n(&run->link[p].changes, __ATOMIC_RELAXED));
	for (unsigned c = 0; c < PC_COUNT; c++) {
		family(t, port_counters[c].name, "counter", port_counters[c].help);
		for (unsigned p = 0; p < run->n_ports; p++)
			put(t, "%s{port=\"%s\"} %" PRIu64 "\n", port_counters[c].name, run->cfg->ports[p].name,
			    port_counter_value(&n[p], (enum port_counter)c));
	}
	priority_family(t, run, n, "roce_port_rx_pfc_packets_total", "PFC frames received naming the priority.",
			pick_pfc_rx, false);
	priority_family(t, run, n, "roce_port_rx_pfc_xoff_packets_total",
			"PFC frames received with a non-zero quanta for the priority.", pick_pfc_xoff_rx, false);
	priority_family(t, run, n, "roce_port_tx_pfc_packets_total", "PFC frames the port sent for the priority.",
			pick_pfc_tx, false);
	priority_family(t, run, n, "roce_port_tx_pfc_paused_seconds_total",
			"Time the priority's transmission was held by PFC received.", pick_paused, true);
	priority_family(t, run, n, "roce_port_rx_priority_packets_total", "Frames received per priority.",
			pick_rx_prio_packets, false);
	priority_family(t, run, n, "roce_port_rx_priority_bytes_total", "Bytes received per priority.", pick_rx_prio_bytes,
			false);
	priority_family(t, run, n, "roce_port_tx_priority_packets_total", "Frames the flows sent per priority.",
			pick_tx_prio_packets, false);
	priority_family(t, run, n, "roce_port_tx_priority_bytes_total", "Bytes the flows sent per priority.",
			pick_tx_prio_bytes, false);
}

/* ---- flow groups ---------------------------------------------------------------------------- */

static const struct {
	const char *name, *help;
} flow_counters[FC_COUNT] = {
	[FC_TX_PACKETS] = {"roce_flow_tx_packets_total", "Packets the group's QPs sent."},
	[FC_TX_BYTES] = {"roce_flow_tx_bytes_total", "Bytes (L2 frames) the group's QPs sent."},
	[FC_MESSAGES] = {"roce_flow_tx_messages_total", "Messages the group's QPs started."},
	[FC_RETRANSMITS] = {"roce_flow_tx_retransmitted_packets_total", "Packets the group's QPs sent again (RC)."},
	[FC_RX_PACKETS] = {"roce_flow_rx_packets_total", "Packets of the group received by a local port."},
	[FC_RX_BYTES] = {"roce_flow_rx_bytes_total", "Bytes of the group received by a local port."},
	[FC_RX_PAYLOAD] = {"roce_flow_rx_payload_bytes_total",
			   "Payload bytes of the group received by a local port (goodput)."},
	[FC_LOST] = {"roce_flow_rx_lost_packets_total", "Packets the receiver counted lost (PSN gaps)."},
	[FC_ECN_CE] = {"roce_flow_rx_ecn_ce_packets_total", "Packets of the group received with ECN CE."},
	[FC_CNP_TX] = {"roce_flow_tx_cnp_packets_total",
		       "CNPs sent for the group: by the notification point of its local receiver."},
	[FC_CNP_RX] = {"roce_flow_rx_cnp_packets_total", "CNPs received by the group's QPs."},
};

static void gather_flow(const struct run_view *run, unsigned g, uint64_t v[FC_COUNT])
{
	const struct cfg_flow_group *grp = &run->cfg->groups[g];
	int dst = snapshot_flow_dst_port(run, grp);

	memset(v, 0, sizeof(uint64_t) * FC_COUNT);
	for (unsigned q = 0; q < run->n_qps; q++) {
		const struct qp_tx *qp = &run->qps[q];
		struct rx_qp_counters rx;
		if (qp->group != grp)
			continue;
		v[FC_TX_PACKETS] += stat_read(&qp->c.tx_packets);
		v[FC_TX_BYTES] += stat_read(&qp->c.tx_bytes);
		v[FC_MESSAGES] += stat_read(&qp->c.messages);
		v[FC_RETRANSMITS] += stat_read(&qp->c.retransmits);
		if (dst >= 0 && snapshot_rx_qp(run, (unsigned)dst, qp->dest_qpn, &rx)) {
			v[FC_RX_PACKETS] += rx.packets;
			v[FC_RX_BYTES] += rx.bytes;
			v[FC_RX_PAYLOAD] += rx.payload_bytes;
			v[FC_LOST] += rx.lost;
			v[FC_ECN_CE] += rx.ecn_ce;
			v[FC_CNP_TX] += rx.cnp_tx;
		}
		if (snapshot_rx_qp(run, qp->port, qp->qpn, &rx))
			v[FC_CNP_RX] += rx.cnp;
	}
}

static void write_flows(struct metrics_text *t, const struct run_view *run, uint64_t (*v)[FC_COUNT])
{
	unsigned n = run->cfg->n_groups;

	for (unsigned g = 0; g < n; g++)
		gather_flow(run, g, v[g]);
	family(t, "roce_flow_info", "gauge",
	       "The flow group's static attributes (value 1): the port it sends from, its congestion control.");
	for (unsigned g = 0; g < n; g++)
		put(t, "roce_flow_info{flow=\"%s\",port=\"%s\",cc=\"%s\"} 1\n", run->cfg->groups[g].name,
		    run->cfg->ports[run->cfg->groups[g].port].name, congestion_algo_name(run->cfg->groups[g].cc));
	family(t, "roce_flow_qps", "gauge", "QPs in the flow group.");
	for (unsigned g = 0; g < n; g++)
		put(t, "roce_flow_qps{flow=\"%s\"} %u\n", run->cfg->groups[g].name, run->cfg->groups[g].count);
	family(t, "roce_flow_rate_setting_bytes_per_second", "gauge",
	       "The per-QP rate set for the group, in bytes per second (0: unpaced or paced per packet).");
	for (unsigned g = 0; g < n; g++) /* rate_gbps[] holds kb/s */
		put(t, "roce_flow_rate_setting_bytes_per_second{flow=\"%s\"} %.17g\n", run->cfg->groups[g].name,
		    (double)__atomic_load_n(&run->rate_gbps[g], __ATOMIC_RELAXED) * BYTES_PER_KBPS);
	for (unsigned c = 0; c < FC_COUNT; c++) {
		family(t, flow_counters[c].name, "counter", flow_counters[c].help);
		for (unsigned g = 0; g < n; g++)
			put(t, "%s{flow=\"%s\"} %" PRIu64 "\n", flow_counters[c].name, run->cfg->groups[g].name, v[g][c]);
	}
}

/* ---- latency -------------------------------------------------------------------------------- */

/* Adds a histogram's buckets to b, in one walk: HDR buckets below cut[0] to the first bound, and
 * so on; those from the last cut up (the overflow bucket too) to +Inf. */
static void add_buckets(struct lat_buckets *b, const unsigned cut[LAT_BOUNDS], const struct lat_stats *l)
{
	unsigned k = 0;

	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		while (k < LAT_BOUNDS && i >= cut[k])
			k++;
		b->n[k] += l->h.buckets[i];
	}
	b->sum_ns += l->h.sum;
}

/* A histogram's samples: cumulative buckets with le in seconds, +Inf, _sum (seconds, exact: ns
 * written as a decimal) and _count, which equals +Inf. `labels`: `flow="x"` or `port="x"`. */
static void latency_histogram(struct metrics_text *t, const char *name, const char *labels, const char *kind,
			      const struct lat_buckets *b)
{
	uint64_t cum = 0;

	for (unsigned k = 0; k < LAT_BOUNDS; k++) {
		cum += b->n[k];
		put(t, "%s_bucket{%s,kind=\"%s\",le=\"%s\"} %" PRIu64 "\n", name, labels, kind, lat_bounds[k].le, cum);
	}
	cum += b->n[LAT_BOUNDS];
	put(t, "%s_bucket{%s,kind=\"%s\",le=\"+Inf\"} %" PRIu64 "\n", name, labels, kind, cum);
	put(t, "%s_sum{%s,kind=\"%s\"} ", name, labels, kind);
	put_seconds(t, b->sum_ns);
	put(t, "%s_count{%s,kind=\"%s\"} %" PRIu64 "\n", name, labels, kind, cum);
}

/* A group's QPs' histograms of one kind, in Prometheus's buckets. */
static uint64_t group_buckets(const struct run_view *run, struct metrics_work *w, unsigned g, enum lat_kind k,
			      struct lat_buckets *b)
{
	uint64_t n = 0;

	memset(b, 0, sizeof(*b));
	for (unsigned q = 0; q < run->n_qps; q++) {
		const struct qp_tx *qp = &run->qps[q];
		if (qp->group != &run->cfg->groups[g] || !qp->lat)
			continue;
		if (snapshot_lat_flow(run, qp, k, &w->one)) {
			add_buckets(b, w->cut, &w->one);
			n++;
		}
	}
	return n;
}

static void write_latency(struct metrics_text *t, const struct run_view *run, struct metrics_work *w)
{
	struct lat_buckets b;
	char labels[64];

	family(t, "roce_flow_latency_seconds", "histogram",
	       "Latency of the flow group: kind oneway (probe to receiver), rtt (ping-pong), ack (RC request to ACK).");
	for (unsigned g = 0; g < run->cfg->n_groups; g++) {
		if (run->cfg->groups[g].latency == CFG_LAT_OFF)
			continue;
		snprintf(labels, sizeof(labels), "flow=\"%s\"", run->cfg->groups[g].name);
		for (int k = 0; k < LAT_KIND_COUNT; k++)
			if (group_buckets(run, w, g, (enum lat_kind)k, &b))
				latency_histogram(t, "roce_flow_latency_seconds", labels, lat_kind_name[k], &b);
	}
	family(t, "roce_port_latency_seconds", "histogram",
	       "Latency measured on the port: one-way at the receiver, ping-pong round trips.");
	for (unsigned p = 0; p < run->n_ports; p++) {
		snprintf(labels, sizeof(labels), "port=\"%s\"", run->cfg->ports[p].name);
		for (int k = 0; k < 2; k++) {
			enum lat_kind kind = k ? LAT_RTT : LAT_ONEWAY;
			if (!snapshot_lat_port(run, p, kind, &w->one))
				continue;
			memset(&b, 0, sizeof(b));
			add_buckets(&b, w->cut, &w->one);
			latency_histogram(t, "roce_port_latency_seconds", labels, lat_kind_name[kind], &b);
		}
	}
}

/* ---- congestion control ----------------------------------------------------------------------- */

#define METRICS_CC_QPS 8 /* QPs per group exported one by one */

static void write_cc(struct metrics_text *t, const struct run_view *run, struct cc_numbers *c)
{
	unsigned n = run->cfg->n_groups;
	struct cc_view v;

	memset(c, 0, sizeof(*c) * n);
	for (unsigned g = 0; g < n; g++)
		c[g].lo = UINT64_MAX;
	for (unsigned i = 0; i < run->n_cc; i++) { /* the QPs with cc, in QP order: group by group */
		const struct qp_cc *q = &run->cc_states[i];
		struct cc_numbers *x = &c[q->qp->group - run->cfg->groups];
		congestion_view(q, &v);
		x->sum += v.rate_kbps;
		x->lo = v.rate_kbps < x->lo ? v.rate_kbps : x->lo;
		x->hi = v.rate_kbps > x->hi ? v.rate_kbps : x->hi;
		x->cnps += v.cnps;
		x->cuts += v.cuts;
		x->n++;
	}
	static const char *const gauges[3][2] = {
		{"roce_cc_rate_sum_bytes_per_second", "Sum of the current rates of the group's QPs (congestion control)."},
		{"roce_cc_rate_min_bytes_per_second", "Lowest current rate among the group's QPs."},
		{"roce_cc_rate_max_bytes_per_second", "Highest current rate among the group's QPs."},
	};
	for (unsigned f = 0; f < 3; f++) {
		family(t, gauges[f][0], "gauge", gauges[f][1]);
		for (unsigned g = 0; g < n; g++)
			if (c[g].n)
				put(t, "%s{flow=\"%s\"} %.17g\n", gauges[f][0], run->cfg->groups[g].name,
				    (double)(f == 0 ? c[g].sum : f == 1 ? c[g].lo : c[g].hi) * BYTES_PER_KBPS);
	}
	family(t, "roce_cc_cnps_total", "counter", "CNPs the group's reaction points handled.");
	for (unsigned g = 0; g < n; g++)
		if (c[g].n)
			put(t, "roce_cc_cnps_total{flow=\"%s\"} %" PRIu64 "\n", run->cfg->groups[g].name, c[g].cnps);
	family(t, "roce_cc_cuts_total", "counter", "Rate decreases of the group's QPs.");
	for (unsigned g = 0; g < n; g++)
		if (c[g].n)
			put(t, "roce_cc_cuts_total{flow=\"%s\"} %" PRIu64 "\n", run->cfg->groups[g].name, c[g].cuts);

	/* the first QPs of each group one by one (no stage label: a label that changes makes a new series) */
	static const char *const qp_gauges[4][2] = {
		{"roce_cc_qp_rate_bytes_per_second", "A QP's current rate (the first 8 QPs of each group)."},
		{"roce_cc_qp_target_bytes_per_second", "A QP's target rate (DCQCN)."},
		{"roce_cc_qp_alpha", "A QP's DCQCN alpha (0..1)."},
		{"roce_cc_qp_stage", "A QP's rate-increase stage: 0 none, 1 fast recovery, 2 additive, 3 hyper."},
	};
	for (unsigned f = 0; f < 4; f++) {
		unsigned shown[CFG_MAX_FLOW_GROUPS] = {0};
		family(t, qp_gauges[f][0], "gauge", qp_gauges[f][1]);
		for (unsigned i = 0; i < run->n_cc; i++) {
			const struct qp_cc *q = &run->cc_states[i];
			unsigned g = (unsigned)(q->qp->group - run->cfg->groups);
			if (shown[g]++ >= METRICS_CC_QPS)
				continue;
			congestion_view(q, &v);
			put(t, "%s{flow=\"%s\",qp=\"%u\"} %.17g\n", qp_gauges[f][0], run->cfg->groups[g].name, q->qp->index,
			    f == 0 ? (double)v.rate_kbps * BYTES_PER_KBPS
			    : f == 1 ? (double)v.target_kbps * BYTES_PER_KBPS
			    : f == 2 ? v.alpha : (double)v.stage);
		}
	}
}

/* ---- the lab switch ------------------------------------------------------------------------- */

static uint64_t rd(const uint64_t *v) { return __atomic_load_n(v, __ATOMIC_RELAXED); }

static void switch_tc_family(struct metrics_text *t, const struct run_view *run, const char *name, const char *type,
			     const char *help, unsigned what)
{
	const struct switch_rt *s = run->sw;

	family(t, name, type, help);
	for (unsigned i = 0; i < s->n_ports; i++) {
		const struct sw_port *p = &s->port[i];
		for (unsigned tc = 0; tc < SW_TCS; tc++) {
			uint64_t v = what == 0 ? rd(&s->mmu.queue[i][tc]) : what == 1 ? rd(&p->c.ecn_marked[tc])
				   : what == 2 ? rd(&p->c.pfc_xoff_tx[tc]) : what == 3 ? rd(&s->mmu.max_queue[i][tc])
				   : what == 4 ? rd(&p->wd.storms[tc]) : rd(&p->wd.dropped[tc]);
			put(t, "%s{port=\"%s\",tc=\"%u\"} %" PRIu64 "\n", name, run->cfg->ports[p->cfg_port].name, tc, v);
		}
	}
}

static void write_switch(struct metrics_text *t, const struct run_view *run)
{
	const struct switch_rt *s = run->sw;
	static const char *const reasons[6] = {"buffer_full", "queue_limit", "headroom", "unknown_dst", "no_descriptor",
					       "vlan"};

	family(t, "roce_switch_buffer_used_bytes", "gauge", "Bytes of the lab switch's shared buffer in use.");
	put(t, "roce_switch_buffer_used_bytes %" PRIu64 "\n", rd(&s->mmu.used));
	family(t, "roce_switch_buffer_bytes", "gauge", "Size of the lab switch's shared buffer.");
	put(t, "roce_switch_buffer_bytes %" PRIu64 "\n", (uint64_t)s->mmu.p.buffer_bytes);
	switch_tc_family(t, run, "roce_switch_queue_bytes", "gauge", "Bytes queued for an egress port and class.", 0);
	switch_tc_family(t, run, "roce_switch_queue_max_bytes", "gauge", "Deepest the egress queue has been.", 3);
	switch_tc_family(t, run, "roce_switch_tx_ecn_marked_packets_total", "counter",
			 "Frames the switch marked CE as it sent them (at dequeue).", 1);
	switch_tc_family(t, run, "roce_switch_tx_pfc_xoff_packets_total", "counter",
			 "XOFF frames the switch sent toward the port.", 2);
	if (s->wd.action != PFC_WD_OFF) {
		switch_tc_family(t, run, "roce_switch_watchdog_storms_total", "counter",
				 "PFC storms the port's watchdog found on its egress queue (paused past detect_ms).", 4);
		switch_tc_family(t, run, "roce_switch_watchdog_dropped_packets_total", "counter",
				 "Frames the port's watchdog dropped from its stormed egress queue (action drop).", 5);
	}
	family(t, "roce_switch_tx_bytes_total", "counter", "Bytes the switch sent out of the port.");
	for (unsigned i = 0; i < s->n_ports; i++)
		put(t, "roce_switch_tx_bytes_total{port=\"%s\"} %" PRIu64 "\n", run->cfg->ports[s->port[i].cfg_port].name,
		    rd(&s->port[i].c.tx_bytes));
	family(t, "roce_switch_rx_dropped_packets_total", "counter",
	       "Frames the switch dropped at the ingress port, by reason.");
	for (unsigned i = 0; i < s->n_ports; i++) {
		const struct sw_port *p = &s->port[i];
		const uint64_t v[6] = {rd(&p->c.drop_buffer), rd(&p->c.drop_queue), rd(&p->c.drop_headroom),
				       rd(&p->c.drop_unknown_dst), rd(&p->c.drop_no_descriptor), rd(&p->c.drop_vlan)};
		for (unsigned r = 0; r < 6; r++)
			put(t, "roce_switch_rx_dropped_packets_total{port=\"%s\",reason=\"%s\"} %" PRIu64 "\n",
			    run->cfg->ports[p->cfg_port].name, reasons[r], v[r]);
	}
}

/* ---- the virtual fabric ------------------------------------------------------------------------ */

/* Every link direction's counters (report_switch.h's view of it), one family at a time. */
enum link_metric { LINK_BYTES, LINK_FRAMES, LINK_ECN, LINK_PAUSED, LINK_XOFF, LINK_DROPPED, LINK_METRICS };

static uint64_t link_value(const struct fab_link_dir *x, enum link_metric m)
{
	uint64_t sum = 0;

	switch (m) {
	case LINK_BYTES: return x->bytes;
	case LINK_FRAMES: return x->frames;
	case LINK_ECN: return x->marked;
	case LINK_DROPPED: return x->dropped;
	case LINK_PAUSED:
	case LINK_XOFF:
		for (unsigned k = 0; k < 8; k++)
			sum += m == LINK_PAUSED ? x->paused_ns[k] : x->xoff_sent[k];
		return sum;
	case LINK_METRICS: break;
	}
	return 0;
}

/* dirs[2l + d]: link l's direction a -> b (d 0) and b -> a, as counted for this page */
static void fabric_link_family(struct metrics_text *t, const struct run_view *run, const struct fab_link_dir *dirs,
			       enum link_metric m)
{
	static const char *const names[LINK_METRICS][3] = {
		{"roce_fabric_link_tx_bytes_total", "counter", "Bytes sent over the link in this direction."},
		{"roce_fabric_link_tx_frames_total", "counter", "Frames sent over the link in this direction."},
		{"roce_fabric_link_ecn_marked_total", "counter", "Frames the sending switch marked CE on the link."},
		{"roce_fabric_link_paused_seconds_total", "counter", "Time the sender was paused by PFC, all priorities."},
		{"roce_fabric_link_pfc_xoff_sent_total", "counter", "XOFF frames the receiving switch sent back."},
		{"roce_fabric_link_rx_dropped_total", "counter", "Frames the receiving switch dropped, every reason."},
	};
	const struct fabric_lab *fl = run->fab;

	family(t, names[m][0], names[m][1], names[m][2]);
	for (unsigned i = 0; i < 2 * fl->cfg->n_links; i++) {
		const struct fab_link_dir *x = &dirs[i];
		if ((m == LINK_XOFF || m == LINK_DROPPED) && !x->to_switch)
			continue; /* a NIC receives: its port's own families have it */
		put(t, "%s{link=\"%s\",from=\"%s\",to=\"%s\"} ", names[m][0], fl->cfg->links[i / 2].name, x->from, x->to);
		if (m == LINK_PAUSED)
			put_seconds(t, link_value(x, m));
		else
			put(t, "%" PRIu64 "\n", link_value(x, m));
	}
}

static void write_fabric(struct metrics_text *t, const struct run_view *run, uint64_t now)
{
	const struct fabric_lab *fl = run->fab;
	struct fab_link_dir *dirs = malloc(sizeof(*dirs) * 2 * fl->cfg->n_links + 1);

	if (!dirs) {
		t->failed = true;
		return;
	}
	for (unsigned i = 0; i < 2 * fl->cfg->n_links; i++) /* each direction counted once for every family */
		report_fabric_link_dir(run, i / 2, i % 2 == 0, now, &dirs[i]);
	for (enum link_metric m = 0; m < LINK_METRICS; m++)
		fabric_link_family(t, run, dirs, m);
	free(dirs);
	family(t, "roce_fabric_switch_buffer_used_bytes", "gauge", "Bytes of the switch's shared buffer in use.");
	for (unsigned s = 0; s < fl->n_switches; s++)
		put(t, "roce_fabric_switch_buffer_used_bytes{switch=\"%s\"} %" PRIu64 "\n", fl->sw[s]->name,
		    rd(&fl->sw[s]->mmu.used));
	family(t, "roce_fabric_queue_bytes", "gauge", "Bytes queued at a switch port for a traffic class (classes in use).");
	for (unsigned s = 0; s < fl->n_switches; s++)
		for (unsigned k = 0; k < fl->sw[s]->n_ports; k++)
			for (unsigned tc = 0; tc < SW_TCS; tc++)
				if (fl->sw[s]->tc_used[k] >> tc & 1)
					put(t, "roce_fabric_queue_bytes{switch=\"%s\",port=\"%s\",tc=\"%u\"} %" PRIu64 "\n",
					    fl->sw[s]->name, fl->sw[s]->port[k].name, tc, rd(&fl->sw[s]->mmu.queue[k][tc]));
	family(t, "roce_fabric_watchdog_storms_total", "counter", "PFC storms the port's watchdog found, all priorities.");
	for (unsigned s = 0; s < fl->n_switches; s++)
		for (unsigned k = 0; k < fl->sw[s]->n_ports; k++) {
			uint64_t n = 0;
			for (unsigned p = 0; p < 8; p++)
				n += rd(&fl->sw[s]->port[k].wd.storms[p]);
			put(t, "roce_fabric_watchdog_storms_total{switch=\"%s\",port=\"%s\"} %" PRIu64 "\n", fl->sw[s]->name,
			    fl->sw[s]->port[k].name, n);
		}
	family(t, "roce_fabric_deadlocks_total", "counter", "Deadlocks found (no frame moved while paused queues held frames).");
	put(t, "roce_fabric_deadlocks_total %u\n", report_fabric_deadlocks(run));
	family(t, "roce_fabric_link_events_total", "counter", "Link events (fabric.events) applied so far.");
	put(t, "roce_fabric_link_events_total %u\n", __atomic_load_n(&fl->events_done, __ATOMIC_ACQUIRE));
}

/* ---- memory: the process's resident set and the mbuf pools (the soak test watches both) --------- */

enum pool_what { POOL_INFO, POOL_IN_USE, POOL_SIZE };

static void pool_sample(struct metrics_text *t, const char *name, const struct rte_mempool *mp, const char *port,
			enum pool_what what)
{
	char v[128];

	if (!mp)
		return;
	if (what == POOL_INFO)
		put(t, "%s{pool=\"%s\",port=\"%s\"} 1\n", name, label_value(mp->name, v), port);
	else
		put(t, "%s{pool=\"%s\"} %u\n", name, label_value(mp->name, v),
		    what == POOL_IN_USE ? rte_mempool_in_use_count(mp) : mp->size);
}

/* One sample per mbuf pool: the RX pool of each port, the TX pool of each TX role. */
static void pool_samples(struct metrics_text *t, const struct run_view *run, const char *name, enum pool_what what)
{
	struct rte_mempool *mp;
	unsigned port;

	for (unsigned p = 0; p < run->n_ports; p++)
		pool_sample(t, name, run->ports[p].pool, run->cfg->ports[p].name, what);
	for (struct lcore_walk at = {0}; (mp = snapshot_tx_pool_next(run, &at, &port)) != NULL;)
		pool_sample(t, name, mp, run->cfg->ports[port].name, what);
}

static void write_memory(struct metrics_text *t, const struct run_view *run, bool finished)
{
	family(t, "process_resident_memory_bytes", "gauge", "Resident memory of the engine process.");
	put(t, "process_resident_memory_bytes %ld\n", snapshot_resident_bytes());
	if (finished) /* the pools may be freed or drained by then: their last state is in the report */
		return;
	family(t, "roce_mempool_info", "gauge", "An mbuf pool's static attributes (value 1): the port it serves.");
	pool_samples(t, run, "roce_mempool_info", POOL_INFO);
	family(t, "roce_mempool_in_use", "gauge", "mbufs taken from the pool (in flight, cached per lcore, held).");
	pool_samples(t, run, "roce_mempool_in_use", POOL_IN_USE);
	family(t, "roce_mempool_size", "gauge", "mbufs in the pool.");
	pool_samples(t, run, "roce_mempool_size", POOL_SIZE);
}

/* ---- the page ------------------------------------------------------------------------------- */

static void write_run(struct metrics_text *t, const struct run_view *run, bool finished, uint64_t now)
{
	char version[128], describe[128];

	family(t, "roce_build_info", "gauge", "The engine's build (value 1): its version and git describe.");
	put(t, "roce_build_info{version=\"%s\",git_describe=\"%s\"} 1\n", label_value(ROCE_VERSION, version),
	    label_value(ROCE_GIT_DESCRIBE, describe));
	family(t, "roce_run_active", "gauge", "1 while traffic runs, 0 once the run ended (the numbers are final).");
	put(t, "roce_run_active %d\n", finished ? 0 : 1);
	family(t, "roce_run_elapsed_seconds", "gauge", "Time since the run started.");
	put(t, "roce_run_elapsed_seconds %.9f\n",
	    now > run->start_tsc ? (double)(now - run->start_tsc) / (double)run->tsc_hz : 0);
}

void metrics_write(struct metrics_text *t, const struct run_view *run, bool finished, struct metrics_work *w)
{
	uint64_t now = finished ? run->end_tsc : rte_rdtsc();

	if (!t->buf && w->last_len) { /* one buffer of the size the last page needed */
		t->cap = w->last_len + w->last_len / 8 + 4096;
		if (!(t->buf = malloc(t->cap)))
			t->cap = 0;
	}
	write_run(t, run, finished, now);
	write_ports(t, run, w->ports, now);
	write_flows(t, run, w->flows);
	write_latency(t, run, w);
	write_cc(t, run, w->cc);
	if (run->sw)
		write_switch(t, run);
	if (run->fab)
		write_fabric(t, run, now);
	write_memory(t, run, finished);
	if (!t->failed)
		w->last_len = t->len;
}

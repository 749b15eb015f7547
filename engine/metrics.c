/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Prometheus exposition of the engine's state. A family's samples must be contiguous in the
 * text, so each part gathers its numbers once into arrays and then writes family by family.
 * Label values are the config's names, which allow only [A-Za-z0-9_-]: nothing to escape.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_mempool.h>

#include "engine_state.h"
#include "metrics.h"
#include "switch.h"

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

/* ---- ports ---------------------------------------------------------------------------------- */

struct port_numbers {
	struct port_totals t;
	struct rte_eth_stats hw;
	struct port_pfc pfc;
	uint64_t ecn_ce;
	uint64_t tx_prio_packets[8], tx_prio_bytes[8];
};

enum port_counter {
	PC_TX_PACKETS, PC_TX_BYTES, PC_RX_PACKETS, PC_RX_BYTES, PC_RX_DROPPED, PC_RX_MALFORMED, PC_RX_CNP,
	PC_RX_ECN_CE, PC_CNP_TX, PC_CNP_SUPPRESSED, PC_TX_QUEUE_FULL, PC_MBUF_FAIL, PC_PAUSE_RX, PC_COUNT
};

static const struct {
	const char *name, *help;
} port_counters[PC_COUNT] = {
	[PC_TX_PACKETS] = {"roce_port_tx_packets_total", "Frames the engine sent on the port."},
	[PC_TX_BYTES] = {"roce_port_tx_bytes_total", "Bytes (L2 frames, no CRC) the engine sent on the port."},
	[PC_RX_PACKETS] = {"roce_port_rx_packets_total", "Frames received on the port."},
	[PC_RX_BYTES] = {"roce_port_rx_bytes_total", "Bytes received on the port."},
	[PC_RX_DROPPED] = {"roce_port_rx_dropped_total",
			   "Frames dropped on receive: malformed, RX QP table full, PMD missed or no mbuf."},
	[PC_RX_MALFORMED] = {"roce_port_rx_malformed_total", "Frames that failed parsing or the ICRC."},
	[PC_RX_CNP] = {"roce_port_rx_cnp_total", "CNPs received on the port."},
	[PC_RX_ECN_CE] = {"roce_port_rx_ecn_ce_total", "RoCE packets received with ECN CE."},
	[PC_CNP_TX] = {"roce_port_cnp_tx_total", "CNPs the port's notification point sent."},
	[PC_CNP_SUPPRESSED] = {"roce_port_cnp_suppressed_total",
			       "CE marks with no CNP (min_time_between_cnps, no peer, failed)."},
	[PC_TX_QUEUE_FULL] = {"roce_port_tx_queue_full_total", "Frames the PMD's TX queue refused at first."},
	[PC_MBUF_FAIL] = {"roce_port_mbuf_alloc_failures_total", "mbuf allocation failures."},
	[PC_PAUSE_RX] = {"roce_port_pause_rx_total", "802.3x PAUSE frames received."},
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
	case PC_CNP_TX: return rx->np_cnp_tx;
	case PC_CNP_SUPPRESSED: return rx->np_suppressed + rx->np_no_peer + rx->np_failed;
	case PC_TX_QUEUE_FULL: return n->t.tx_ring_full;
	case PC_MBUF_FAIL: return n->t.mbuf_alloc_fail;
	case PC_PAUSE_RX: return rx->pause_rx;
	default: return 0;
	}
}

static void gather_ports(const struct engine *e, struct port_numbers *n, uint64_t now)
{
	uint64_t ecn_ce[CFG_MAX_PORTS];

	stats_ecn_ce_per_port(e, ecn_ce);
	for (unsigned p = 0; p < e->n_ports; p++) {
		stats_port_totals(e, p, &n[p].t);
		stats_port_hw(e, p, &n[p].hw);
		stats_port_pfc(e, p, now, &n[p].pfc);
		n[p].ecn_ce = ecn_ce[p];
	}
	for (unsigned q = 0; q < e->n_qps; q++) {
		const struct qp_tx *qp = &e->qps[q];
		n[qp->port].tx_prio_packets[qp->prio] += stat_read(&qp->c.tx_packets);
		n[qp->port].tx_prio_bytes[qp->prio] += stat_read(&qp->c.tx_bytes);
	}
}

/* A per-(port, priority) counter family; `pick` returns the 8 values of a port. */
static void priority_family(struct metrics_text *t, const struct engine *e, const struct port_numbers *n,
			    const char *name, const char *help, const uint64_t *(*pick)(const struct port_numbers *),
			    double scale)
{
	family(t, name, "counter", help);
	for (unsigned p = 0; p < e->n_ports; p++) {
		const uint64_t *v = pick(&n[p]);
		for (unsigned k = 0; k < 8; k++)
			put(t, "%s{port=\"%s\",priority=\"%u\"} %.9g\n", name, e->cfg->ports[p].name, k, (double)v[k] * scale);
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

static void write_ports(struct metrics_text *t, const struct engine *e, uint64_t now)
{
	struct port_numbers *n = calloc(CFG_MAX_PORTS, sizeof(*n));

	if (!n) {
		t->failed = true;
		return;
	}
	gather_ports(e, n, now);
	family(t, "roce_port_link_speed_gbps", "gauge", "The port's link speed (configured or from the PMD).");
	for (unsigned p = 0; p < e->n_ports; p++)
		put(t, "roce_port_link_speed_gbps{port=\"%s\",driver=\"%s\"} %.9g\n", e->cfg->ports[p].name,
		    e->ports[p].driver, e->ports[p].link_speed_gbps);
	family(t, "roce_port_link_up", "gauge", "The port's link as the main lcore last saw it: 1 up, 0 down, -1 unknown.");
	for (unsigned p = 0; p < e->n_ports; p++)
		put(t, "roce_port_link_up{port=\"%s\"} %d\n", e->cfg->ports[p].name,
		    __atomic_load_n(&e->link[p].state, __ATOMIC_RELAXED));
	family(t, "roce_port_link_changes_total", "counter", "Link state changes seen during the run.");
	for (unsigned p = 0; p < e->n_ports; p++)
		put(t, "roce_port_link_changes_total{port=\"%s\"} %llu\n", e->cfg->ports[p].name,
		    (unsigned long long)__atomic_load_n(&e->link[p].changes, __ATOMIC_RELAXED));
	for (unsigned c = 0; c < PC_COUNT; c++) {
		family(t, port_counters[c].name, "counter", port_counters[c].help);
		for (unsigned p = 0; p < e->n_ports; p++)
			put(t, "%s{port=\"%s\"} %llu\n", port_counters[c].name, e->cfg->ports[p].name,
			    (unsigned long long)port_counter_value(&n[p], (enum port_counter)c));
	}
	priority_family(t, e, n, "roce_pfc_rx_frames_total", "PFC frames received naming the priority.", pick_pfc_rx, 1);
	priority_family(t, e, n, "roce_pfc_xoff_rx_total", "PFC frames received with a non-zero quanta for the priority.",
			pick_pfc_xoff_rx, 1);
	priority_family(t, e, n, "roce_pfc_tx_frames_total", "PFC frames the port sent for the priority.", pick_pfc_tx, 1);
	priority_family(t, e, n, "roce_pfc_paused_seconds_total", "Time the priority's transmission was paused by PFC.",
			pick_paused, 1e-9);
	priority_family(t, e, n, "roce_port_rx_priority_packets_total", "Frames received per priority.",
			pick_rx_prio_packets, 1);
	priority_family(t, e, n, "roce_port_rx_priority_bytes_total", "Bytes received per priority.", pick_rx_prio_bytes, 1);
	priority_family(t, e, n, "roce_port_tx_priority_packets_total", "Frames the flows sent per priority.",
			pick_tx_prio_packets, 1);
	priority_family(t, e, n, "roce_port_tx_priority_bytes_total", "Bytes the flows sent per priority.",
			pick_tx_prio_bytes, 1);
	free(n);
}

/* ---- flow groups ---------------------------------------------------------------------------- */

enum flow_counter {
	FC_TX_PACKETS, FC_TX_BYTES, FC_MESSAGES, FC_RX_PACKETS, FC_RX_BYTES, FC_RX_PAYLOAD, FC_LOST, FC_RETRANSMITS,
	FC_ECN_CE, FC_CNP_TX, FC_CNP_RX, FC_COUNT
};

static const struct {
	const char *name, *help;
} flow_counters[FC_COUNT] = {
	[FC_TX_PACKETS] = {"roce_flow_tx_packets_total", "Packets the group's QPs sent."},
	[FC_TX_BYTES] = {"roce_flow_tx_bytes_total", "Bytes (L2 frames) the group's QPs sent."},
	[FC_MESSAGES] = {"roce_flow_messages_total", "Messages the group's QPs started."},
	[FC_RX_PACKETS] = {"roce_flow_rx_packets_total", "Packets of the group received by a local port."},
	[FC_RX_BYTES] = {"roce_flow_rx_bytes_total", "Bytes of the group received by a local port."},
	[FC_RX_PAYLOAD] = {"roce_flow_rx_payload_bytes_total",
			   "Payload bytes of the group received by a local port (goodput)."},
	[FC_LOST] = {"roce_flow_lost_total", "Packets the receiver counted lost (PSN gaps)."},
	[FC_RETRANSMITS] = {"roce_flow_retransmits_total", "Packets sent again (RC)."},
	[FC_ECN_CE] = {"roce_flow_ecn_ce_total", "Packets of the group received with ECN CE."},
	[FC_CNP_TX] = {"roce_flow_cnp_tx_total", "CNPs sent back to the group's QPs by a local receiver."},
	[FC_CNP_RX] = {"roce_flow_cnp_rx_total", "CNPs received by the group's QPs."},
};

static void gather_flow(const struct engine *e, unsigned g, uint64_t v[FC_COUNT])
{
	const struct cfg_flow_group *grp = &e->cfg->groups[g];
	int dst = stats_local_port_of_mac(e, grp->dst_mac);

	memset(v, 0, sizeof(uint64_t) * FC_COUNT);
	for (unsigned q = 0; q < e->n_qps; q++) {
		const struct qp_tx *qp = &e->qps[q];
		struct rx_qp_counters rx;
		if (qp->group != grp)
			continue;
		v[FC_TX_PACKETS] += stat_read(&qp->c.tx_packets);
		v[FC_TX_BYTES] += stat_read(&qp->c.tx_bytes);
		v[FC_MESSAGES] += stat_read(&qp->c.messages);
		v[FC_RETRANSMITS] += stat_read(&qp->c.retransmits);
		if (dst >= 0 && stats_rx_qp(e, (unsigned)dst, qp->dest_qpn, &rx)) {
			v[FC_RX_PACKETS] += rx.packets;
			v[FC_RX_BYTES] += rx.bytes;
			v[FC_RX_PAYLOAD] += rx.payload_bytes;
			v[FC_LOST] += rx.lost;
			v[FC_ECN_CE] += rx.ecn_ce;
			v[FC_CNP_TX] += rx.cnp_tx;
		}
		if (stats_rx_qp(e, qp->port, qp->qpn, &rx))
			v[FC_CNP_RX] += rx.cnp;
	}
}

static void write_flows(struct metrics_text *t, const struct engine *e)
{
	unsigned n = e->cfg->n_groups;
	uint64_t (*v)[FC_COUNT] = n ? calloc(n, sizeof(*v)) : NULL;

	if (n && !v) {
		t->failed = true;
		return;
	}
	for (unsigned g = 0; g < n; g++)
		gather_flow(e, g, v[g]);
	family(t, "roce_flow_qps", "gauge", "QPs in the flow group.");
	for (unsigned g = 0; g < n; g++)
		put(t, "roce_flow_qps{flow=\"%s\",port=\"%s\"} %u\n", e->cfg->groups[g].name,
		    e->cfg->ports[e->cfg->groups[g].port].name, e->cfg->groups[g].count);
	family(t, "roce_flow_rate_setting_gbps", "gauge", "The per-QP rate set for the group (0: unpaced).");
	for (unsigned g = 0; g < n; g++)
		put(t, "roce_flow_rate_setting_gbps{flow=\"%s\"} %.9g\n", e->cfg->groups[g].name,
		    (double)__atomic_load_n(&e->rate_gbps[g], __ATOMIC_RELAXED) / 1e6);
	for (unsigned c = 0; c < FC_COUNT; c++) {
		family(t, flow_counters[c].name, "counter", flow_counters[c].help);
		for (unsigned g = 0; g < n; g++)
			put(t, "%s{flow=\"%s\"} %llu\n", flow_counters[c].name, e->cfg->groups[g].name,
			    (unsigned long long)v[g][c]);
	}
	free(v);
}

/* ---- latency -------------------------------------------------------------------------------- */

/* Summary samples of one histogram, in seconds. `labels`: `flow="x"` or `port="x"`. */
static void latency_samples(struct metrics_text *t, const char *name, const char *labels, const char *kind,
			    const struct lat_stats *l)
{
	struct hist_summary h;
	static const char *const q[4] = {"0.5", "0.9", "0.99", "0.999"};

	hist_summarize(&l->h, &h);
	if (!h.count)
		return;
	const uint64_t v[4] = {h.p50, h.p90, h.p99, h.p999};
	for (unsigned i = 0; i < 4; i++)
		put(t, "%s{%s,kind=\"%s\",quantile=\"%s\"} %.9g\n", name, labels, kind, q[i], (double)v[i] * 1e-9);
	put(t, "%s_sum{%s,kind=\"%s\"} %.9g\n", name, labels, kind, h.mean * (double)h.count * 1e-9);
	put(t, "%s_count{%s,kind=\"%s\"} %llu\n", name, labels, kind, (unsigned long long)h.count);
}

/* A group's QPs' histograms of one kind merged into s->sum. */
static uint64_t merge_group(const struct engine *e, unsigned g, enum lat_kind k, struct lat_stats *one,
			    struct lat_stats *sum)
{
	lat_stats_init(sum);
	for (unsigned q = 0; q < e->n_qps; q++) {
		const struct qp_tx *qp = &e->qps[q];
		if (qp->group != &e->cfg->groups[g] || !qp->lat)
			continue;
		stats_lat_flow(e, qp, k, one);
		lat_stats_merge(sum, one);
	}
	return sum->h.count;
}

static void write_latency(struct metrics_text *t, const struct engine *e)
{
	struct lat_stats *s = aligned_alloc(64, 2 * sizeof(*s)); /* 15 KB each: off the stack */
	char labels[64];

	if (!s) {
		t->failed = true;
		return;
	}
	family(t, "roce_flow_latency_seconds", "summary",
	       "Latency of the flow group: kind oneway (probe to receiver), rtt (ping-pong), ack (RC request to ACK).");
	for (unsigned g = 0; g < e->cfg->n_groups; g++) {
		if (e->cfg->groups[g].latency == CFG_LAT_OFF)
			continue;
		snprintf(labels, sizeof(labels), "flow=\"%s\"", e->cfg->groups[g].name);
		for (int k = 0; k < LAT_KIND_COUNT; k++)
			if (merge_group(e, g, (enum lat_kind)k, &s[0], &s[1]))
				latency_samples(t, "roce_flow_latency_seconds", labels, lat_kind_name[k], &s[1]);
	}
	family(t, "roce_port_latency_seconds", "summary", "Latency measured on the port: one-way at the receiver, ping-pong round trips.");
	for (unsigned p = 0; p < e->n_ports; p++) {
		snprintf(labels, sizeof(labels), "port=\"%s\"", e->cfg->ports[p].name);
		for (int k = 0; k < 2; k++) {
			enum lat_kind kind = k ? LAT_RTT : LAT_ONEWAY;
			if (stats_lat_port(e, p, kind, &s[0]))
				latency_samples(t, "roce_port_latency_seconds", labels, lat_kind_name[kind], &s[0]);
		}
	}
	free(s);
}

/* ---- congestion control ----------------------------------------------------------------------- */

#define METRICS_CC_QPS 8 /* QPs per group exported one by one */

struct cc_numbers {
	uint64_t sum, lo, hi, cnps, cuts, n;
};

static void write_cc(struct metrics_text *t, const struct engine *e)
{
	unsigned n = e->cfg->n_groups;
	struct cc_numbers *c = n ? calloc(n, sizeof(*c)) : NULL;
	struct cc_view v;

	if (n && !c) {
		t->failed = true;
		return;
	}
	for (unsigned g = 0; g < n; g++)
		c[g].lo = UINT64_MAX;
	for (unsigned i = 0; i < e->n_cc; i++) { /* the QPs with cc, in QP order: group by group */
		const struct qp_cc *q = &e->cc_states[i];
		struct cc_numbers *x = &c[q->qp->group - e->cfg->groups];
		congestion_view(q, &v);
		x->sum += v.rate_kbps;
		x->lo = v.rate_kbps < x->lo ? v.rate_kbps : x->lo;
		x->hi = v.rate_kbps > x->hi ? v.rate_kbps : x->hi;
		x->cnps += v.cnps;
		x->cuts += v.cuts;
		x->n++;
	}
	static const char *const gauges[3][2] = {
		{"roce_cc_rate_sum_gbps", "Sum of the current rates of the group's QPs (congestion control)."},
		{"roce_cc_rate_min_gbps", "Lowest current rate among the group's QPs."},
		{"roce_cc_rate_max_gbps", "Highest current rate among the group's QPs."},
	};
	for (unsigned f = 0; f < 3; f++) {
		family(t, gauges[f][0], "gauge", gauges[f][1]);
		for (unsigned g = 0; g < n; g++)
			if (c[g].n)
				put(t, "%s{flow=\"%s\",algorithm=\"%s\"} %.9g\n", gauges[f][0], e->cfg->groups[g].name,
				    congestion_algo_name(e->cfg->groups[g].cc),
				    (double)(f == 0 ? c[g].sum : f == 1 ? c[g].lo : c[g].hi) * 1e-6);
	}
	family(t, "roce_cc_cnps_total", "counter", "CNPs the group's reaction points handled.");
	for (unsigned g = 0; g < n; g++)
		if (c[g].n)
			put(t, "roce_cc_cnps_total{flow=\"%s\"} %llu\n", e->cfg->groups[g].name, (unsigned long long)c[g].cnps);
	family(t, "roce_cc_cuts_total", "counter", "Rate decreases of the group's QPs.");
	for (unsigned g = 0; g < n; g++)
		if (c[g].n)
			put(t, "roce_cc_cuts_total{flow=\"%s\"} %llu\n", e->cfg->groups[g].name, (unsigned long long)c[g].cuts);
	free(c);

	/* the first QPs of each group one by one (no stage label: a label that changes makes a new series) */
	static const char *const qp_gauges[4][2] = {
		{"roce_cc_qp_rate_gbps", "A QP's current rate (the first 8 QPs of each group)."},
		{"roce_cc_qp_target_gbps", "A QP's target rate (DCQCN)."},
		{"roce_cc_qp_alpha", "A QP's DCQCN alpha (0..1)."},
		{"roce_cc_qp_stage", "A QP's rate-increase stage: 0 none, 1 fast recovery, 2 additive, 3 hyper."},
	};
	for (unsigned f = 0; f < 4; f++) {
		unsigned shown[CFG_MAX_FLOW_GROUPS] = {0};
		family(t, qp_gauges[f][0], "gauge", qp_gauges[f][1]);
		for (unsigned i = 0; i < e->n_cc; i++) {
			const struct qp_cc *q = &e->cc_states[i];
			unsigned g = (unsigned)(q->qp->group - e->cfg->groups);
			if (shown[g]++ >= METRICS_CC_QPS)
				continue;
			congestion_view(q, &v);
			put(t, "%s{flow=\"%s\",qp=\"%u\"} %.9g\n", qp_gauges[f][0], e->cfg->groups[g].name, q->qp->index,
			    f == 0 ? (double)v.rate_kbps * 1e-6 : f == 1 ? (double)v.target_kbps * 1e-6 : f == 2 ? v.alpha
												       : (double)v.stage);
		}
	}
}

/* ---- the lab switch ------------------------------------------------------------------------- */

static uint64_t rd(const uint64_t *v) { return __atomic_load_n(v, __ATOMIC_RELAXED); }

static void switch_tc_family(struct metrics_text *t, const struct engine *e, const char *name, const char *type,
			     const char *help, unsigned what)
{
	const struct switch_rt *s = e->sw;

	family(t, name, type, help);
	for (unsigned i = 0; i < s->n_ports; i++) {
		const struct sw_port *p = &s->port[i];
		for (unsigned tc = 0; tc < SW_TCS; tc++) {
			uint64_t v = what == 0 ? rd(&s->mmu.queue[i][tc]) : what == 1 ? rd(&p->c.ecn_marked[tc])
				   : what == 2 ? rd(&p->c.pfc_xoff_tx[tc]) : rd(&s->mmu.max_queue[i][tc]);
			put(t, "%s{port=\"%s\",tc=\"%u\"} %llu\n", name, e->cfg->ports[p->cfg_port].name, tc,
			    (unsigned long long)v);
		}
	}
}

static void write_switch(struct metrics_text *t, const struct engine *e)
{
	const struct switch_rt *s = e->sw;
	static const char *const reasons[6] = {"buffer_full", "queue_limit", "headroom", "unknown_dst", "no_descriptor",
					       "vlan"};

	family(t, "roce_switch_buffer_used_bytes", "gauge", "Bytes of the lab switch's shared buffer in use.");
	put(t, "roce_switch_buffer_used_bytes %llu\n", (unsigned long long)rd(&s->mmu.used));
	family(t, "roce_switch_buffer_bytes", "gauge", "Size of the lab switch's shared buffer.");
	put(t, "roce_switch_buffer_bytes %llu\n", (unsigned long long)s->mmu.p.buffer_bytes);
	switch_tc_family(t, e, "roce_switch_queue_bytes", "gauge", "Bytes queued for an egress port and class.", 0);
	switch_tc_family(t, e, "roce_switch_queue_max_bytes", "gauge", "Deepest the egress queue has been.", 3);
	switch_tc_family(t, e, "roce_switch_ecn_marked_total", "counter", "Frames the switch marked CE at dequeue.", 1);
	switch_tc_family(t, e, "roce_switch_pfc_xoff_tx_total", "counter", "XOFF frames the switch sent toward the port.", 2);
	family(t, "roce_switch_tx_bytes_total", "counter", "Bytes the switch sent out of the port.");
	for (unsigned i = 0; i < s->n_ports; i++)
		put(t, "roce_switch_tx_bytes_total{port=\"%s\"} %llu\n", e->cfg->ports[s->port[i].cfg_port].name,
		    (unsigned long long)rd(&s->port[i].c.tx_bytes));
	family(t, "roce_switch_dropped_total", "counter", "Frames the switch dropped at the ingress port, by reason.");
	for (unsigned i = 0; i < s->n_ports; i++) {
		const struct sw_port *p = &s->port[i];
		const uint64_t v[6] = {rd(&p->c.drop_buffer), rd(&p->c.drop_queue), rd(&p->c.drop_headroom),
				       rd(&p->c.drop_unknown_dst), rd(&p->c.drop_no_descriptor), rd(&p->c.drop_vlan)};
		for (unsigned r = 0; r < 6; r++)
			put(t, "roce_switch_dropped_total{port=\"%s\",reason=\"%s\"} %llu\n", e->cfg->ports[p->cfg_port].name,
			    reasons[r], (unsigned long long)v[r]);
	}
}

/* ---- memory: the process's resident set and the mbuf pools (the soak test watches both) --------- */

static void pool_sample(struct metrics_text *t, const char *name, const struct rte_mempool *mp, const char *port,
			bool in_use)
{
	if (mp)
		put(t, "%s{pool=\"%s\",port=\"%s\"} %u\n", name, mp->name, port,
		    in_use ? rte_mempool_in_use_count(mp) : mp->size);
}

/* One sample per mbuf pool: the RX pool of each port, the TX pool of each TX role. */
static void pool_samples(struct metrics_text *t, const struct engine *e, const char *name, bool in_use)
{
	for (unsigned p = 0; p < e->n_ports; p++)
		pool_sample(t, name, e->ports[p].pool, e->cfg->ports[p].name, in_use);
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		for (unsigned i = 0; e->work[l] && i < e->work[l]->n_tx; i++)
			pool_sample(t, name, e->work[l]->tx[i].pool, e->cfg->ports[e->work[l]->tx[i].port].name, in_use);
}

static void write_memory(struct metrics_text *t, const struct engine *e, bool finished)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	family(t, "process_resident_memory_bytes", "gauge", "Resident memory of the engine process.");
	put(t, "process_resident_memory_bytes %ld\n", resident * sysconf(_SC_PAGESIZE));
	if (finished) /* the pools may be freed or drained by then: their last state is in the report */
		return;
	family(t, "roce_mempool_in_use", "gauge", "mbufs taken from the pool (in flight, cached per lcore, held).");
	pool_samples(t, e, "roce_mempool_in_use", true);
	family(t, "roce_mempool_size", "gauge", "mbufs in the pool.");
	pool_samples(t, e, "roce_mempool_size", false);
}

void metrics_write(struct metrics_text *t, const struct engine *e, bool finished)
{
	uint64_t now = finished ? e->end_tsc : rte_rdtsc();

	family(t, "roce_run_active", "gauge", "1 while traffic runs, 0 once the run ended (the numbers are final).");
	put(t, "roce_run_active %d\n", finished ? 0 : 1);
	family(t, "roce_run_elapsed_seconds", "gauge", "Time since the run started.");
	put(t, "roce_run_elapsed_seconds %.6f\n", now > e->start_tsc ? (double)(now - e->start_tsc) / (double)e->tsc_hz : 0);
	write_ports(t, e, now);
	write_flows(t, e);
	write_latency(t, e);
	write_cc(t, e);
	if (e->sw)
		write_switch(t, e);
	write_memory(t, e, finished);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The JSON report (schema: docs/report.md), built with jansson and written atomically: to a
 * temporary file beside the target, then renamed over it, so a reader never sees half a report.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <rte_ethdev.h>

#include "out_file.h"
#include "egress.h"
#include "stats.h"
#include "responder.h"
#include "run_info.h"
#include "sla.h"
#include "timeseries.h"
#include "report_switch.h"

json_t *u64_array(const uint64_t *v, unsigned n)
{
	json_t *a = json_array();

	for (unsigned i = 0; i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)v[i]));
	return a;
}

static json_t *xstats_of(const struct run_view *run, unsigned p)
{
	json_t *o = json_object();

	for (unsigned i = 0; i < run->n_xstats[p]; i++)
		json_object_set_new(o, run->xstat_names[p][i].name, json_integer((json_int_t)run->xstat_values[p][i]));
	return o;
}

/* ---- latency ------------------------------------------------------------------------------- */

static json_t *lat_summary_json(const struct lat_stats *l)
{
	struct hist_summary h;

	hist_summarize(&l->h, &h);
	return json_pack("{s:I,s:I,s:f,s:f,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:I,s:I,s:I}", "count", (json_int_t)h.count, "min",
			 (json_int_t)h.min, "mean", h.mean, "stddev", h.stddev, "p50", (json_int_t)h.p50, "p90",
			 (json_int_t)h.p90, "p99", (json_int_t)h.p99, "p99_9", (json_int_t)h.p999, "p99_99",
			 (json_int_t)h.p9999, "max", (json_int_t)h.max, "jitter", (double)l->jitter16 / 16.0,
			 "p99_minus_p50", (json_int_t)(h.p99 - h.p50), "overflow", (json_int_t)h.overflow,
			 "clock_disagreements", (json_int_t)l->negative);
}

/* {"oneway": {...}, "rtt": {...}, "ack": {...}}: the kinds that have samples, or NULL if none. */
static json_t *flow_latency_json(const struct run_view *run, const struct qp_tx *qp)
{
	static struct lat_stats l; /* 15 KB: not on the stack */
	json_t *o;

	if (!qp->lat)
		return NULL;
	o = json_object();
	for (int k = 0; k < LAT_KIND_COUNT; k++)
		if (snapshot_lat_flow(run, qp, (enum lat_kind)k, &l))
			json_object_set_new(o, lat_kind_name[k], lat_summary_json(&l));
	json_object_set_new(o, "mode", json_string(qp->lat->pingpong ? "pingpong" : "oneway"));
	if (qp->lat->pingpong && qp->group->transport != CFG_RC)
		json_object_set_new(o, "pingpong", json_pack("{s:I,s:I}", "sent", (json_int_t)qp->lat->pings, "lost",
							     (json_int_t)qp->lat->lost));
	json_object_set_new(o, "probes_sent", json_integer((json_int_t)qp->lat->seq));
	return o;
}

static json_t *port_latency_json(const struct run_view *run, unsigned p)
{
	static struct lat_stats l;
	json_t *o = json_object();
	const struct port_clock *c = &run->ports[p].clock;

	for (int k = 0; k < 2; k++)
		if (run->lat_live && snapshot_lat_port(run, p, k ? LAT_RTT : LAT_ONEWAY, &l))
			json_object_set_new(o, lat_kind_name[k ? LAT_RTT : LAT_ONEWAY], lat_summary_json(&l));
	json_object_set_new(o, "clock", json_pack("{s:s,s:s,s:f,s:f,s:I,s:f,s:b}", "source",
						  c->source == PORT_TS_NIC ? "nic" : c->source == PORT_TS_PCAP ? "pcap" : "tsc",
						  "how", c->how, "resolution_ns", c->resolution_ns, "nic_hz", c->nic_hz,
						  "samples", (json_int_t)c->samples, "last_residual_ns", c->last_residual_ns,
						  "tx_schedule", c->tx_schedule));
	return o;
}

static json_t *watch_json(const struct pfc_watch *w)
{
	uint64_t v[9][WIRE_PFC_PRIORITIES];
	static const char *const names[9] = {"xoff_sent", "xon_sent", "episodes", "max_backlog_bytes", "response_bytes",
					     "response_ns", "response_bytes_max", "response_ns_max", "backlog_bytes"};
	json_t *o = json_object();
	double ns_per_cycle = 1e9 / (double)w->tsc_hz;

	for (unsigned k = 0; k < WIRE_PFC_PRIORITIES; k++) {
		const struct pfc_watch_prio *p = &w->prio[k];
		v[0][k] = stat_read(&p->xoff_sent);
		v[1][k] = stat_read(&p->xon_sent);
		v[2][k] = stat_read(&p->episodes);
		v[3][k] = stat_read(&p->max_backlog);
		v[4][k] = stat_read(&p->response_bytes);
		v[5][k] = (uint64_t)((double)stat_read(&p->response_cycles) * ns_per_cycle);
		v[6][k] = stat_read(&p->response_bytes_max);
		v[7][k] = (uint64_t)((double)stat_read(&p->response_cycles_max) * ns_per_cycle);
		v[8][k] = stat_read(&p->backlog);
	}
	for (unsigned i = 0; i < 9; i++)
		json_object_set_new(o, names[i], u64_array(v[i], WIRE_PFC_PRIORITIES));
	return o;
}

/* The egress scheduler's classes, summed over the port's TX roles. */
static json_t *egress_json(const struct run_view *run, unsigned p)
{
	const struct cfg_port *cp = &run->cfg->ports[p];
	uint64_t bytes[WIRE_PFC_PRIORITIES], pkts[WIRE_PFC_PRIORITIES], w[WIRE_PFC_PRIORITIES];
	json_t *o = json_object(), *strict = json_array();

	snapshot_egress_classes(run, p, bytes, pkts);
	for (unsigned c = 0; c < WIRE_PFC_PRIORITIES; c++) {
		w[c] = cp->ets_weight[c];
		if (cp->strict_tcs >> c & 1)
			json_array_append_new(strict, json_integer(c));
	}
	json_object_set_new(o, "shape_gbps", json_real(cp->egress_gbps));
	json_object_set_new(o, "strict", strict);
	json_object_set_new(o, "weights", u64_array(w, WIRE_PFC_PRIORITIES));
	json_object_set_new(o, "tc_bytes", u64_array(bytes, WIRE_PFC_PRIORITIES));
	json_object_set_new(o, "tc_packets", u64_array(pkts, WIRE_PFC_PRIORITIES));
	json_object_set_new(o, "cpu_lost_ms", json_real((double)snapshot_egress_cpu_lost(run, p) * 1e3 / (double)run->tsc_hz));
	return o;
}

/* PFC sent (generators and RX thresholds) and received, time paused, and frames by priority. */
static void qos_port_json(const struct run_view *run, unsigned p, const struct port_totals *t, json_t *o)
{
	uint64_t tx_frames[WIRE_PFC_PRIORITIES] = {0}, tx_bytes[WIRE_PFC_PRIORITIES] = {0};
	struct port_pfc pfc;

	snapshot_port_pfc(run, p, run->end_tsc, &pfc);
	if (run->cfg->ports[p].xoff_priorities)
		json_object_set_new(o, "pfc_xoff", watch_json(&run->watch[p]));
	if (run->cfg->ports[p].egress_gbps > 0)
		json_object_set_new(o, "egress", egress_json(run, p));
	for (unsigned q = 0; q < run->n_qps; q++)
		if (run->qps[q].port == p) {
			tx_frames[run->qps[q].prio] += stat_read(&run->qps[q].c.tx_packets);
			tx_bytes[run->qps[q].prio] += stat_read(&run->qps[q].c.tx_bytes);
		}
	json_object_set_new(o, "pfc_tx", u64_array(pfc.pfc_tx, WIRE_PFC_PRIORITIES));
	json_object_set_new(o, "pfc_rx", u64_array(t->rx.pfc_rx, WIRE_PFC_PRIORITIES));
	json_object_set_new(o, "pfc_rx_xoff", u64_array(t->rx.pfc_xoff_rx, WIRE_PFC_PRIORITIES));
	json_object_set_new(o, "paused_ns", u64_array(pfc.paused_ns, WIRE_PFC_PRIORITIES));
	json_object_set_new(o, "pause_tx", json_integer((json_int_t)pfc.pause_tx));
	json_object_set_new(o, "pause_rx", json_integer((json_int_t)t->rx.pause_rx));
	json_object_set_new(o, "honour_pfc", json_boolean(run->cfg->ports[p].honour_pfc));
	json_object_set_new(o, "nic_pfc", json_string(run->ports[p].nic_pfc_state[0] ? run->ports[p].nic_pfc_state : "off"));
	json_object_set_new(o, "tx_priority_packets", u64_array(tx_frames, WIRE_PFC_PRIORITIES));
	json_object_set_new(o, "tx_priority_bytes", u64_array(tx_bytes, WIRE_PFC_PRIORITIES));
	json_object_set_new(o, "rx_priority_packets", u64_array(t->rx.prio_frames, WIRE_PFC_PRIORITIES));
	json_object_set_new(o, "rx_priority_bytes", u64_array(t->rx.prio_bytes, WIRE_PFC_PRIORITIES));
}

/* The port's link as the main lcore polled it: the first state (at the traffic's start, or when
 * it was first known), then every change, with its time from the start. */
static json_t *link_events_json(const struct run_view *run, unsigned p)
{
	const struct link_track *l = &run->link[p];
	json_t *a = json_array();

	for (unsigned i = 0; i < l->n_events; i++)
		json_array_append_new(a, json_pack("{s:f,s:s}", "t_s",
						   (double)(l->ev[i].tsc - run->start_tsc) / (double)run->tsc_hz, "state",
						   l->ev[i].up ? "up" : "down"));
	return a;
}

static json_t *port_json(const struct run_view *run, unsigned p, const struct rte_eth_stats *hw)
{
	struct port_totals t;
	json_t *o = json_object();

	snapshot_port_totals(run, p, &t);
	json_object_set_new(o, "name", json_string(run->ports[p].name));
	json_object_set_new(o, "device", json_string(run->cfg->ports[p].device));
	json_object_set_new(o, "driver", json_string(run->ports[p].driver));
	json_object_set_new(o, "link_speed_gbps", json_real(run->ports[p].link_speed_gbps));
	json_object_set_new(o, "link_events", link_events_json(run, p));
	json_object_set_new(o, "link_changes", json_integer((json_int_t)run->link[p].changes));
	json_object_set_new(o, "link_down_s", json_real((double)run->link[p].down_tsc / (double)run->tsc_hz));
	json_object_set_new(o, "tx_packets", json_integer((json_int_t)t.tx_packets));
	json_object_set_new(o, "tx_bytes", json_integer((json_int_t)t.tx_bytes));
	json_object_set_new(o, "rx_packets", json_integer((json_int_t)t.rx_frames));
	json_object_set_new(o, "rx_bytes", json_integer((json_int_t)t.rx_bytes));
	json_object_set_new(o, "rx_dropped",
			    json_integer((json_int_t)stats_rx_dropped(&t, hw)));
	json_object_set_new(o, "rx_malformed", json_integer((json_int_t)t.rx_malformed));
	json_object_set_new(o, "rx_other", json_integer((json_int_t)t.rx.kind[WIRE_KIND_OTHER]));
	json_object_set_new(o, "rx_cnp", json_integer((json_int_t)t.rx.kind[WIRE_KIND_CNP]));
	qos_port_json(run, p, &t, o);
	json_object_set_new(o, "mbuf_alloc_failures", json_integer((json_int_t)t.mbuf_alloc_fail));
	json_object_set_new(o, "rx_injected_drops", json_integer((json_int_t)t.rx.injected_drops));
	json_object_set_new(o, "rc_unknown_qp", json_integer((json_int_t)t.rx.rc_unknown_qp));
	json_object_set_new(o, "np", json_pack("{s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "enabled", run->cfg->ports[p].np_enabled,
		"min_time_between_cnps_us", (json_int_t)run->cfg->ports[p].np.min_time_between_cnps, "cnp_dscp",
		(json_int_t)run->cfg->ports[p].np.cnp_dscp, "cnp_802p_prio", (json_int_t)run->cfg->ports[p].np.cnp_802p_prio,
		"cnp_tx", (json_int_t)t.rx.np_cnp_tx, "suppressed", (json_int_t)t.rx.np_suppressed, "no_peer",
		(json_int_t)t.rx.np_no_peer, "failed", (json_int_t)t.rx.np_failed));
	if (run->cfg->ports[p].n_rx_inject)
		json_object_set_new(o, "rx_inject", json_pack("{s:I,s:I,s:I}", "ce_marked", (json_int_t)t.rx.inject_ce,
			"dropped", (json_int_t)t.rx.inject_drop, "corrupted", (json_int_t)t.rx.inject_corrupt));
	json_object_set_new(o, "responses_dropped", json_integer((json_int_t)snapshot_responses_dropped(run, p)));
	json_object_set_new(o, "tx_queue_full", json_integer((json_int_t)t.tx_ring_full));
	json_object_set_new(o, "tx_unsent", json_integer((json_int_t)t.tx_unsent));
	json_object_set_new(o, "reflected", json_integer((json_int_t)t.reflected));
	json_object_set_new(o, "reflect_dropped", json_integer((json_int_t)t.reflect_dropped));
	json_object_set_new(o, "mbufs", json_integer((json_int_t)run->pool_size[p]));
	json_object_set_new(o, "mbufs_in_use_at_exit", json_integer((json_int_t)run->pool_in_use_at_exit[p]));
	json_object_set_new(o, "pmd", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "ipackets", (json_int_t)hw->ipackets,
						"opackets", (json_int_t)hw->opackets, "ibytes", (json_int_t)hw->ibytes,
						"obytes", (json_int_t)hw->obytes, "imissed", (json_int_t)hw->imissed,
						"ierrors", (json_int_t)hw->ierrors, "oerrors", (json_int_t)hw->oerrors,
						"rx_nombuf", (json_int_t)hw->rx_nombuf));
	json_object_set_new(o, "xstats", xstats_of(run, p));
	json_object_set_new(o, "latency_ns", port_latency_json(run, p));
	return o;
}

/* CNPs that arrived for the QP (counted by the receiver table of its own port). */
static uint64_t cnps_to(const struct run_view *run, const struct qp_tx *qp)
{
	struct rx_qp_counters c;

	return snapshot_rx_qp(run, qp->port, qp->qpn, &c) ? c.cnp : 0;
}

static json_t *flow_cc_json(const struct qp_cc *c)
{
	struct cc_view v;
	json_t *o;

	congestion_view(c, &v);
	o = json_pack("{s:s,s:f,s:f,s:f,s:f,s:f,s:s,s:I,s:I,s:I,s:I}", "algorithm", congestion_algo_name(c->algo),
		      "line_gbps", (double)c->line_kbps * 1e-6, "rate_gbps", (double)v.rate_kbps * 1e-6,
		      "target_gbps", (double)v.target_kbps * 1e-6, "min_rate_gbps",
		      c->min_kbps == UINT64_MAX ? (double)c->line_kbps * 1e-6 : (double)c->min_kbps * 1e-6, "alpha",
		      v.alpha, "stage", congestion_stage_name(v.stage), "cnps", (json_int_t)v.cnps, "cuts",
		      (json_int_t)v.cuts, "increases", (json_int_t)v.increases, "rate_changes",
		      (json_int_t)c->rate_changes);
	if (c->algo == CFG_CC_DCQCN) {
		const struct dcqcn_counters *d = &c->u.d.c;
		json_object_set_new(o, "profile", json_string(c->u.d.p->profile == DCQCN_PAPER ? "paper" : "nvidia"));
		json_object_set_new(o, "increase_events", json_pack("{s:I,s:I,s:I,s:I,s:I}", "timer",
			(json_int_t)d->timer_events, "byte_counter", (json_int_t)d->byte_events, "fast_recovery",
			(json_int_t)d->fast, "additive", (json_int_t)d->additive, "hyper", (json_int_t)d->hyper));
	} else {
		const struct timely_counters *t = &c->u.t.c;
		json_object_set_new(o, "rtt_samples", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "samples",
			(json_int_t)t->samples, "increases", (json_int_t)t->increases, "hyper", (json_int_t)t->hyper,
			"decreases", (json_int_t)t->decreases, "below_t_low", (json_int_t)t->below_t_low,
			"above_t_high", (json_int_t)t->above_t_high));
	}
	return o;
}

static json_t *delay_json(const struct delay_summary *d)
{
	if (d->n == 0)
		return json_pack("{s:I}", "count", (json_int_t)0);
	return json_pack("{s:I,s:I,s:f,s:I}", "count", (json_int_t)d->n, "min", (json_int_t)d->min_ns, "mean",
			 (double)d->sum_ns / (double)d->n, "max", (json_int_t)d->max_ns);
}

static json_t *flow_inject_json(const struct qp_inject *in)
{
	static const char *const names[] = { "ce", "drop", "corrupt" };
	json_t *ev = json_array();
	json_t *o = json_pack("{s:I,s:I,s:I}", "ce_marked", (json_int_t)in->ce_marked, "dropped", (json_int_t)in->dropped,
			      "corrupted", (json_int_t)in->corrupted);

	json_object_set_new(o, "cnp_delay_ns", delay_json(&in->cnp_delay));
	json_object_set_new(o, "cnp_spacing_ns", delay_json(&in->cnp_spacing));
	json_object_set_new(o, "nak_delay_ns", delay_json(&in->nak_delay));
	for (unsigned i = 0; i < in->n_events; i++) {
		const struct inject_event *x = &in->ev[i];
		json_t *j = json_pack("{s:s,s:I,s:I}", "action", names[x->action % 3], "psn", (json_int_t)x->psn,
				      "tx_ns", (json_int_t)x->tx_ns);
		json_object_set_new(j, "answer_delay_ns", x->answered ? json_integer((json_int_t)x->delay_ns) : json_null());
		json_array_append_new(ev, j);
	}
	json_object_set_new(o, "events", ev);
	return o;
}

/* run.cc_trace: rows written, and rows lost to a full ring */
static json_t *cc_trace_json(const struct run_view *run)
{
	return json_pack("{s:s,s:I,s:I}", "path", run->cfg->cc_trace, "rows", (json_int_t)run->cc_csv_rows, "dropped",
			 (json_int_t)snapshot_cc_trace_dropped(run));
}

/* Jain's fairness index of the flows' goodputs (the report's, as printed): the fabric's fairness
 * over every QP; 1 when all are equal. */
static double goodput_jfi(const json_t *flows)
{
	double sum = 0, sq = 0;
	size_t i;
	const json_t *f;

	json_array_foreach (flows, i, f) {
		double x = json_real_value(json_object_get(f, "goodput_gbps"));
		sum += x;
		sq += x * x;
	}
	return sq > 0 ? sum * sum / ((double)json_array_size(flows) * sq) : 1.0;
}

static const char *transport_name(enum cfg_transport t) { return t == CFG_RC ? "rc" : t == CFG_UC ? "uc" : "ud"; }

static json_t *flow_json(const struct run_view *run, const struct qp_tx *qp, double secs)
{
	const struct cfg_flow_group *g = qp->group;
	struct rx_qp_counters rx = {0};
	int dst_port = snapshot_flow_dst_port(run, g);
	bool local = dst_port >= 0 && snapshot_rx_qp(run, (unsigned)dst_port, qp->dest_qpn, &rx);
	uint64_t goodput_bytes = local ? rx.payload_bytes : qp->c.payload_bytes;
	char name[CFG_NAME_LEN + 16];
	json_t *o = json_object();

	if (g->count > 1)
		snprintf(name, sizeof(name), "%s[%u]", g->name, qp->index);
	else
		snprintf(name, sizeof(name), "%s", g->name);
	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "group", json_string(g->name));
	json_object_set_new(o, "port", json_string(run->cfg->ports[qp->port].name));
	json_object_set_new(o, "transport", json_string(transport_name(g->transport)));
	json_object_set_new(o, "qpn", json_integer(qp->qpn));
	json_object_set_new(o, "dest_qpn", json_integer(qp->dest_qpn));
	json_object_set_new(o, "tx_packets", json_integer((json_int_t)qp->c.tx_packets));
	json_object_set_new(o, "tx_bytes", json_integer((json_int_t)qp->c.tx_bytes));
	json_object_set_new(o, "messages", json_integer((json_int_t)qp->c.messages));
	json_object_set_new(o, "message_bytes", json_integer((json_int_t)qp->c.payload_bytes));
	json_object_set_new(o, "receiver", local ? json_string(run->cfg->ports[dst_port].name) : json_null());
	json_object_set_new(o, "rx_packets", json_integer((json_int_t)rx.packets));
	json_object_set_new(o, "rx_bytes", json_integer((json_int_t)rx.bytes));
	json_object_set_new(o, "rx_messages", json_integer((json_int_t)rx.messages));
	json_object_set_new(o, "goodput_gbps", json_real(secs > 0 ? (double)goodput_bytes * 8 / secs / 1e9 : 0));
	json_object_set_new(o, "lost", json_integer((json_int_t)rx.lost));
	json_object_set_new(o, "out_of_order", json_integer((json_int_t)rx.out_of_order));
	json_object_set_new(o, "duplicates", json_integer((json_int_t)rx.duplicates));
	json_object_set_new(o, "retransmits", json_integer((json_int_t)qp->c.retransmits));
	json_object_set_new(o, "icrc_errors", json_integer((json_int_t)rx.icrc_errors));
	json_object_set_new(o, "ecn_ce", json_integer((json_int_t)rx.ecn_ce));
	json_object_set_new(o, "cnp_tx", json_integer((json_int_t)rx.cnp_tx));
	json_object_set_new(o, "cnp_suppressed", json_integer((json_int_t)rx.cnp_suppressed));
	json_object_set_new(o, "cnp_rx", json_integer((json_int_t)cnps_to(run, qp)));
	if (qp->cc)
		json_object_set_new(o, "cc", flow_cc_json(qp->cc));
	if (qp->inj)
		json_object_set_new(o, "inject", flow_inject_json(qp->inj));
	if (qp->lat)
		json_object_set_new(o, "latency_ns", flow_latency_json(run, qp));
	if (g->transport == CFG_RC) {
		const struct resp_qp *rq = local ? responder_find(run->qp_index, (uint16_t)dst_port, qp->dest_qpn) : NULL;
		json_object_set_new(o, "rc", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b}",
			"completions", (json_int_t)qp->c.completions, "retransmits", (json_int_t)qp->c.retransmits,
			"timeouts", (json_int_t)qp->c.timeouts, "acks_rx", (json_int_t)qp->c.acks_rx,
			"naks_rx", (json_int_t)qp->c.naks_rx, "rnr_naks_rx", (json_int_t)qp->c.rnr_naks_rx,
			"read_responses_rx", (json_int_t)qp->c.read_resp_rx, "outstanding", (json_int_t)qp->log_n,
			"error", qp->c.errors != 0));
		if (rq) {
			json_object_set_new(o, "responder", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
				"delivered_messages", (json_int_t)rq->c.delivered_messages,
				"delivered_bytes", (json_int_t)rq->c.delivered_bytes, "acks_tx", (json_int_t)rq->c.acks_tx,
				"naks_tx", (json_int_t)rq->c.naks_tx, "read_responses_tx", (json_int_t)rq->c.read_resp_tx,
				"atomic_acks_tx", (json_int_t)rq->c.atomic_acks_tx, "duplicates", (json_int_t)rq->c.duplicates,
				"out_of_sequence", (json_int_t)rq->c.out_of_sequence, "atomic_value",
				(json_int_t)rq->atomic_mem));
			/* RC: delivered means accepted in sequence by the responder, each message once */
			json_object_set_new(o, "rx_messages", json_integer((json_int_t)rq->c.delivered_messages));
		}
	}
	return o;
}

static json_t *rx_qp_json(const struct run_view *run, const struct rx_qp *q)
{
	static struct lat_stats l;
	json_t *o = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "port", run->cfg->ports[q->port].name,
			 "qpn",
			 (json_int_t)q->qpn, "packets", (json_int_t)q->c.packets, "bytes", (json_int_t)q->c.bytes,
			 "messages", (json_int_t)q->c.messages, "payload_bytes", (json_int_t)q->c.payload_bytes, "lost",
			 (json_int_t)q->c.lost, "out_of_order", (json_int_t)q->c.out_of_order, "duplicates",
			 (json_int_t)q->c.duplicates, "icrc_errors", (json_int_t)q->c.icrc_errors, "ecn_ce",
			 (json_int_t)q->c.ecn_ce, "cnp_rx", (json_int_t)q->c.cnp);
	json_object_set_new(o, "cnp_tx", json_integer((json_int_t)q->c.cnp_tx));
	json_object_set_new(o, "cnp_suppressed", json_integer((json_int_t)q->c.cnp_suppressed));

	if (q->lat_slot && snapshot_lat_rx_qp(run, q->port, q->qpn, &l))
		json_object_set_new(o, "latency_ns", json_pack("{s:o}", "oneway", lat_summary_json(&l)));
	return o;
}

static json_t *errors_json(const struct run_view *run)
{
	json_t *o = json_object();
	uint64_t table_full = 0;

	for (int r = 1; r < WIRE_ERR_COUNT; r++) {
		uint64_t n = 0;
		for (unsigned p = 0; p < run->n_ports; p++) {
			struct port_totals t;
			snapshot_port_totals(run, p, &t);
			n += t.rx.error[r];
			if (r == 1)
				table_full += t.rx.rx_qp_table_full;
		}
		json_object_set_new(o, wire_error_name((enum wire_error)r), json_integer((json_int_t)n));
	}
	json_object_set_new(o, "rx_qp_table_full", json_integer((json_int_t)table_full));
	return o;
}

static const char *const coll_type_names[] = {"ring", "incast", "all_to_all", "custom"};

static json_t *collectives_json(const struct run_view *run)
{
	json_t *a = json_array();
	double us_per_tsc = 1e6 / (double)run->tsc_hz;

	for (unsigned i = 0; i < run->cfg->n_collectives; i++) {
		const struct collective_rt *c = &run->collectives[i];
		unsigned done = collective_phases_done(c);
		uint64_t base = c->base_tsc, iters, iter_sum, iter_max; /* the traffic's start */
		json_t *o = json_object(), *flows = json_array(), *times = json_array(), *starts = json_array(),
		       *ends = json_array();

		for (unsigned f = 0; f < c->cfg->n_flows; f++)
			json_array_append_new(flows, json_string(run->cfg->groups[c->cfg->flows[f]].name));
		for (unsigned p = 0; p < done; p++) {
			json_array_append_new(times, json_real((double)(c->end_tsc[p] - c->start_tsc[p]) * us_per_tsc));
			json_array_append_new(starts, json_real((double)(c->start_tsc[p] - base) * us_per_tsc));
			json_array_append_new(ends, json_real((double)(c->end_tsc[p] - base) * us_per_tsc));
		}
		json_object_set_new(o, "name", json_string(c->cfg->name));
		json_object_set_new(o, "type", json_string(coll_type_names[c->cfg->type]));
		json_object_set_new(o, "flows", flows);
		json_object_set_new(o, "qps", json_integer(c->n_qps));
		json_object_set_new(o, "receives_per_phase", json_integer(c->n_rx));
		json_object_set_new(o, "phases", json_integer(c->cfg->phases));
		json_object_set_new(o, "phases_completed", json_integer(done));
		json_object_set_new(o, "phase_completion_us", times);
		json_object_set_new(o, "phase_start_us", starts);
		json_object_set_new(o, "phase_end_us", ends);
		json_object_set_new(o, "total_us",
				    json_real(done ? (double)(c->end_tsc[done - 1] - base) * us_per_tsc : 0));
		json_object_set_new(o, "compute_us", json_real(c->cfg->compute_us));
		json_object_set_new(o, "iteration_phases", json_integer(c->cfg->iteration_phases ?: c->cfg->phases));
		json_object_set_new(o, "repeat", json_boolean(c->cfg->repeat));
		if (c->cfg->window_period_s > 0)
			json_object_set_new(o, "window", json_pack("{s:f,s:f,s:f}", "period_s", c->cfg->window_period_s,
								   "offset_s", c->cfg->window_offset_s, "active_s",
								   c->cfg->window_active_s));
		collective_iterations(c, &iters, &iter_sum, &iter_max);
		json_object_set_new(o, "iterations_completed", json_integer((json_int_t)iters));
		json_object_set_new(o, "iteration_us_mean", json_real(iters ? (double)iter_sum / iters * us_per_tsc : 0));
		json_object_set_new(o, "iteration_us_max", json_real((double)iter_max * us_per_tsc));
		json_array_append_new(a, o);
	}
	return a;
}

/* Each phase that started: its span and what each flow group and traffic class sent in it. */
static json_t *phases_json(const struct run_view *run)
{
	json_t *a = json_array();

	for (unsigned k = 0; k < run->phases_started; k++) {
		double t0 = (double)(run->phase_tsc[k] - run->start_tsc) / (double)run->tsc_hz;
		double t1 = (double)(run->phase_tsc[k + 1] - run->start_tsc) / (double)run->tsc_hz, dt = t1 - t0;
		json_t *o = json_object(), *flows = json_object(), *ports = json_object();

		json_object_set_new(o, "name", json_string(run->cfg->phases[k].name));
		json_object_set_new(o, "start_s", json_real(t0));
		json_object_set_new(o, "end_s", json_real(t1));
		for (unsigned g = 0; g < run->cfg->n_groups; g++) {
			uint64_t b = run->phase_group_bytes[k + 1][g] - run->phase_group_bytes[k][g];
			json_object_set_new(flows, run->cfg->groups[g].name,
					    json_pack("{s:I,s:f}", "tx_bytes", (json_int_t)b, "gbps",
						      dt > 0 ? (double)b * 8 / dt / 1e9 : 0.0));
		}
		for (unsigned p = 0; p < run->n_ports; p++) {
			uint64_t tc[8];
			if (!(run->cfg->ports[p].egress_gbps > 0))
				continue;
			for (unsigned c = 0; c < 8; c++)
				tc[c] = run->phase_tc_bytes[k + 1][p][c] - run->phase_tc_bytes[k][p][c];
			json_object_set_new(ports, run->ports[p].name, json_pack("{s:o}", "tc_bytes", u64_array(tc, 8)));
		}
		json_object_set_new(o, "flows", flows);
		json_object_set_new(o, "ports", ports);
		json_array_append_new(a, o);
	}
	return a;
}

/* The worker lcores, the time each was held up (datapath/lcore.h: off its CPU, or a turn that
 * long) and its loop's mean turn over the rest of the run: what a reader needs to tell a machine
 * that lost time, or a loop too slow for its links, from a result. */
static json_t *lcores_json(const struct run_view *run, double secs)
{
	json_t *a = json_array();
	double ms = 1e3 / (double)run->tsc_hz;

	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		struct lcore_held_up h;
		double busy_s;
		if (!snapshot_lcore_held_up(run, l, &h))
			continue;
		busy_s = secs - (double)h.tsc * ms / 1e3;
		json_array_append_new(a, json_pack("{s:i,s:f,s:I,s:f,s:I,s:f}", "lcore", (int)l, "held_up_ms",
						   (double)h.tsc * ms, "held_up_times", (json_int_t)h.times,
						   "longest_held_up_ms", (double)h.max_tsc * ms, "loop_turns",
						   (json_int_t)h.turns, "loop_turn_us",
						   h.turns && busy_s > 0 ? busy_s * 1e6 / (double)h.turns : 0.0));
	}
	return a;
}

static json_t *build(const struct run_view *run, const struct sla_checks *sla)
{
	double secs = (double)(run->end_tsc - run->start_tsc) / (double)run->tsc_hz;
	json_t *root = json_object(), *ports = json_array(), *flows = json_array(), *rxqps = json_array();
	const struct rx_qp *q;

	json_object_set_new(root, "version", json_integer(1));
	json_object_set_new(root, "run_info", run_info_json());
	json_object_set_new(root, "config", json_string(run->cfg->file));
	json_object_set_new(root, "duration_s", json_real(secs));
	/* when the traffic started, on the engine's time base (CLOCK_REALTIME): runs of several
	 * processes (run.start_at_unix_s) are held against each other by it */
	json_object_set_new(root, "start_unix_ns", json_integer((json_int_t)clock_tsc_to_ns(run->start_tsc)));
	json_object_set_new(root, "stopped_by", json_string(run->stopped_by ? run->stopped_by : "unknown"));
	json_object_set_new(root, "icrc_crc_algorithm", json_string(wire_crc_alg_name()));
	for (unsigned p = 0; p < run->n_ports; p++)
		json_array_append_new(ports, port_json(run, p, &run->hw[p]));
	for (unsigned q = 0; q < run->n_qps; q++)
		json_array_append_new(flows, flow_json(run, &run->qps[q], secs));
	for (struct lcore_walk at = {0}; (q = snapshot_rx_qp_next(run, &at)) != NULL;)
		json_array_append_new(rxqps, rx_qp_json(run, q));
	json_object_set_new(root, "ports", ports);
	json_object_set_new(root, "flows", flows);
	json_object_set_new(root, "rx_qps", rxqps);
	json_object_set_new(root, "lcores", lcores_json(run, secs));
	json_object_set_new(root, "errors", errors_json(run));
	json_object_set_new(root, "collectives", collectives_json(run));
	json_object_set_new(root, "phases", phases_json(run));
	if (run->cc_csv)
		json_object_set_new(root, "cc_trace", cc_trace_json(run));
	if (run->sw)
		json_object_set_new(root, "switch", report_switch_json(run, run->sw));
	if (run->fab || run->cfg->fab.external) {
		json_t *fab = run->fab ? report_fabric_json(run, secs) : report_fabric_external_json(run);
		json_object_set_new(fab, "jfi", json_real(goodput_jfi(flows)));
		json_object_set_new(root, "fabric", fab);
	}
	if (run->cfg->n_sla)
		json_object_set_new(root, "sla", sla_json(run, sla));
	if (run->ts)
		json_object_set_new(root, "timeseries", json_pack("{s:s,s:I}", "path", run->cfg->timeseries, "rows",
								  (json_int_t)timeseries_count(run->ts)));
	if (run->cfg->capture[0])
		json_object_set_new(root, "capture", json_pack("{s:s,s:I,s:I,s:I,s:I}", "path", run->cfg->capture, "every",
			(json_int_t)run->cfg->capture_every, "frames", (json_int_t)run->capture_written, "dropped",
			(json_int_t)run->capture_dropped, "write_errors", (json_int_t)run->capture_write_errors));
	return root;
}

/* At start-up, before any traffic: the report can be written where asked. The temporary file
 * report_write uses is made and removed (so a missing directory, a parent that is a file, a
 * read-only or pseudo file system, or missing rights all show now), and the target must not be a
 * directory or a special file (a rename would replace a device node such as /dev/null). */
int report_check_path(const char *path, char *err, size_t errlen)
{
	char tmp[CFG_STR_LEN * 4 + 32];
	struct stat st;
	int fd;

	if (!path[0]) {
		snprintf(err, errlen, "report: the path is empty");
		return -1;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "report %s: %s", path,
			 S_ISDIR(st.st_mode) ? "is a directory" : "exists and is not a regular file");
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	fd = out_make_dirs(path) ? -1 : open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "report %s: not writable: cannot create %s: %s (its folder is made when missing; "
			 "it must then be writable)", path, tmp, strerror(errno));
		return -1;
	}
	close(fd);
	unlink(tmp);
	return 0;
}

int report_write(const struct run_view *run, const struct sla_checks *sla, const char *path, char *err,
		 size_t errlen)
{
	char tmp[CFG_STR_LEN * 4 + 32];
	json_t *root = build(run, sla);
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	rc = json_dump_file(root, tmp, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	json_decref(root);
	if (rc != 0 || rename(tmp, path) != 0) {
		snprintf(err, errlen, "cannot write report %s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

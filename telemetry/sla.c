/* SPDX-License-Identifier: BSD-3-Clause */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"
#include "histogram.h"
#include "sla.h"

static double run_seconds(const struct run_view *run)
{
	return (double)(run->end_tsc - run->start_tsc) / (double)run->tsc_hz;
}

/* The latency samples a flow's QP has: one-way from a local receiver, else its round trips (UC/UD
 * ping-pong) or request -> ACK times (RC). */
static bool qp_latency(const struct run_view *run, const struct qp_tx *qp, enum cfg_sla_metric m, double *out)
{
	static struct lat_stats l; /* 15 KB: not on the stack */
	static const enum lat_kind order[] = { LAT_ONEWAY, LAT_RTT, LAT_ACK };
	struct hist_summary h;

	if (!qp->lat)
		return false;
	for (unsigned k = 0; k < 3; k++) {
		if (!snapshot_lat_flow(run, qp, order[k], &l))
			continue;
		hist_summarize(&l.h, &h);
		*out = (double)(m == SLA_P50_NS ? h.p50 : m == SLA_P99_NS ? h.p99 : m == SLA_P999_NS ? h.p999 : h.max);
		return true;
	}
	return false;
}

static bool qp_metric(const struct run_view *run, const struct qp_tx *qp, enum cfg_sla_metric m, double *out)
{
	const struct cfg_flow_group *g = qp->group;
	struct rx_qp_counters rx = {0};
	int dst = snapshot_flow_dst_port(run, g);
	bool local = dst >= 0 && snapshot_rx_qp(run, (unsigned)dst, qp->dest_qpn, &rx);

	switch (m) {
	case SLA_GOODPUT_GBPS:
		*out = (double)(local ? rx.payload_bytes : qp->c.payload_bytes) * 8 / run_seconds(run) / 1e9;
		return true;
	case SLA_LOSS: /* what the receiver saw missing, of what was sent */
		if (!local || !qp->c.tx_packets)
			return false;
		*out = (double)rx.lost / (double)qp->c.tx_packets;
		return true;
	case SLA_RETRANSMITS:
		*out = (double)qp->c.retransmits;
		return true;
	default:
		return qp_latency(run, qp, m, out);
	}
}

static bool port_metric(const struct run_view *run, unsigned p, const struct cfg_sla *c, double *out)
{
	double secs = run_seconds(run);
	struct port_totals t;
	uint64_t n = 0;

	snapshot_port_totals(run, p, &t);
	switch (c->metric) {
	case SLA_PAUSE_PERCENT:
		*out = 0;
		for (unsigned pr = 0; pr < QOS_PRIORITIES; pr++)
			if (c->priority < 0 || (int)pr == c->priority)
				*out = fmax(*out, (double)pfc_paused_ns(&run->pause[p], pr, run->end_tsc) / 1e9 / secs * 100);
		return true;
	case SLA_PFC_RX_PER_S: /* PFC frames of any priority received per second: a storm shows here */
		for (unsigned pr = 0; pr < QOS_PRIORITIES; pr++)
			n += t.rx.pfc_rx[pr];
		*out = (double)(n + t.rx.pause_rx) / secs;
		return true;
	case SLA_RX_GBPS:
		*out = (double)t.rx_bytes * 8 / secs / 1e9;
		return true;
	case SLA_TX_GBPS:
		*out = (double)t.tx_bytes * 8 / secs / 1e9;
		return true;
	default: /* SLA_RX_DROPPED: as the report's rx_dropped */
		*out = (double)stats_rx_dropped(&t, &run->hw[p]);
		return true;
	}
}

static bool within(const struct cfg_sla *c, double v)
{
	return (!c->has_min || v >= c->min) && (!c->has_max || v <= c->max);
}

/* Worse of two values for this check: the lower against a minimum, the higher against a maximum. */
static bool worse(const struct cfg_sla *c, double a, double b)
{
	return c->has_min && !c->has_max ? a < b : a > b;
}

static void qp_name(const struct qp_tx *qp, char *buf, size_t len)
{
	if (qp->group->count > 1)
		snprintf(buf, len, "flow %s[%u]", qp->group->name, qp->index);
	else
		snprintf(buf, len, "flow %s", qp->group->name);
}

/* One check of a flow group (every QP must pass; the result names the worst QP). */
static void check_group(const struct run_view *run, const struct cfg_sla *c, unsigned g, struct sla_result *r)
{
	snprintf(r->subject, sizeof(r->subject), "flow %s", run->cfg->groups[g].name);
	r->pass = true;
	for (unsigned q = 0; q < run->n_qps; q++) {
		const struct qp_tx *qp = &run->qps[q];
		double v;
		if (qp->group != &run->cfg->groups[g] || !qp_metric(run, qp, c->metric, &v))
			continue;
		if (!r->has_data || worse(c, v, r->measured)) {
			r->measured = v;
			if (qp->group->count > 1)
				qp_name(qp, r->subject, sizeof(r->subject));
		}
		r->has_data = true;
		r->pass &= within(c, v);
	}
	r->pass &= r->has_data; /* nothing measured is not a pass */
}

void sla_measure(const struct run_view *run, struct sla_checks *out)
{
	unsigned n = 0;

	for (unsigned i = 0; i < run->cfg->n_sla; i++) {
		const struct cfg_sla *c = &run->cfg->sla[i];
		unsigned count = c->port ? run->n_ports : run->cfg->n_groups;

		for (unsigned k = 0; k < count && n < SLA_MAX_RESULTS; k++) {
			struct sla_result *r = &out->result[n];
			if (c->target >= 0 && (int)k != c->target)
				continue;
			memset(r, 0, sizeof(*r));
			if (c->port) {
				snprintf(r->subject, sizeof(r->subject), "port %s", run->cfg->ports[k].name);
				r->has_data = port_metric(run, k, c, &r->measured);
				r->pass = r->has_data && within(c, r->measured);
			} else {
				check_group(run, c, k, r);
			}
			out->of[n++] = c;
		}
	}
	out->n = n;
}

static void limit_text(const struct cfg_sla *c, char *buf, size_t len)
{
	if (c->has_min && c->has_max)
		snprintf(buf, len, "%g..%g", c->min, c->max);
	else if (c->has_min)
		snprintf(buf, len, ">= %g", c->min);
	else
		snprintf(buf, len, "<= %g", c->max);
}

bool sla_verdict(const struct sla_checks *s, bool print)
{
	const struct sla_result *results = s->result;
	const struct cfg_sla *const *result_of = s->of;
	bool pass = true;

	for (unsigned i = 0; i < s->n; i++) {
		char lim[64];
		pass &= results[i].pass;
		if (!print)
			continue;
		limit_text(result_of[i], lim, sizeof(lim));
		if (results[i].has_data)
			printf("sla: %s %s %s %.6g (%s)\n", results[i].pass ? "PASS" : "FAIL", results[i].subject,
			       cfg_sla_metric_name[result_of[i]->metric], results[i].measured, lim);
		else
			printf("sla: FAIL %s %s: nothing measured (%s)\n", results[i].subject,
			       cfg_sla_metric_name[result_of[i]->metric], lim);
	}
	return pass;
}

json_t *sla_json(const struct run_view *run, const struct sla_checks *s)
{
	const struct sla_result *results = s->result;
	const struct cfg_sla *const *result_of = s->of;
	json_t *checks;
	bool pass = true;

	if (!run->cfg->n_sla)
		return NULL;
	checks = json_array();
	for (unsigned i = 0; i < s->n; i++) {
		const struct cfg_sla *c = result_of[i];
		unsigned line;
		const char *file = cr_source(&run->cfg->src, c->line, &line);
		json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:I}", "subject", results[i].subject, "metric",
				      cfg_sla_metric_name[c->metric], "verdict", results[i].pass ? "pass" : "fail", "file",
				      file ? file : run->cfg->file, "line", (json_int_t)line);
		json_object_set_new(o, "measured", results[i].has_data ? json_real(results[i].measured) : json_null());
		json_object_set_new(o, "min", c->has_min ? json_real(c->min) : json_null());
		json_object_set_new(o, "max", c->has_max ? json_real(c->max) : json_null());
		if (c->priority >= 0)
			json_object_set_new(o, "priority", json_integer(c->priority));
		json_array_append_new(checks, o);
		pass &= results[i].pass;
	}
	return json_pack("{s:s,s:o}", "verdict", pass ? "pass" : "fail", "checks", checks);
}

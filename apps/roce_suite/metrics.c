/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Reading a trial's engine report (metrics.h). Field names are docs/report.md's.
 */
#include "metrics.h"

#include "kpi.h"
#include "percentile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FCS_BYTES 4

double jnum(const json_t *o, const char *key)
{
	const json_t *v = o ? json_object_get(o, key) : NULL;

	return v && json_is_number(v) ? json_number_value(v) : 0;
}

uint64_t ju64(const json_t *o, const char *key)
{
	const json_t *v = o ? json_object_get(o, key) : NULL;

	return v && json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

static double jelem(const json_t *o, const char *key, unsigned i)
{
	const json_t *a = o ? json_object_get(o, key) : NULL;
	const json_t *v = json_is_array(a) ? json_array_get(a, i) : NULL;

	return v && json_is_number(v) ? json_number_value(v) : 0;
}

double jsum(const json_t *o, const char *key)
{
	const json_t *a = o ? json_object_get(o, key) : NULL;
	double s = 0;

	for (size_t i = 0; json_is_array(a) && i < json_array_size(a); i++)
		s += json_number_value(json_array_get(a, i));
	return s;
}

bool flow_set_has(const struct flow_set *fs, const char *group)
{
	if (!fs || !fs->n)
		return true;
	for (unsigned i = 0; i < fs->n; i++) {
		size_t len = strlen(fs->names[i]);
		if (!group)
			continue;
		if (len && fs->names[i][len - 1] == '*' ? !strncmp(fs->names[i], group, len - 1) : !strcmp(fs->names[i], group))
			return true;
	}
	return false;
}

struct lat_summary lat_from_json(const json_t *o)
{
	struct lat_summary l = { 0 };

	if (!json_is_object(o) || !(l.count = ju64(o, "count")))
		return l;
	l.valid = true;
	l.min = jnum(o, "min");
	l.mean = jnum(o, "mean");
	l.p50 = jnum(o, "p50");
	l.p90 = jnum(o, "p90");
	l.p99 = jnum(o, "p99");
	l.p99_9 = jnum(o, "p99_9");
	l.max = jnum(o, "max");
	return l;
}

json_t *lat_to_json(const struct lat_summary *l)
{
	if (!l->valid)
		return json_null();
	return json_pack("{s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "count", (json_int_t)l->count, "min", l->min, "mean",
			 l->mean, "p50", l->p50, "p90", l->p90, "p99", l->p99, "p99_9", l->p99_9, "max", l->max);
}

/* QPs of one group merged: exact count, min, max and mean; for the percentiles the worst QP's
 * (a bound: the histograms themselves are not in the report). */
static void lat_merge(struct lat_summary *into, const struct lat_summary *l)
{
	if (!l->valid)
		return;
	if (!into->valid) {
		*into = *l;
		return;
	}
	into->mean = (into->mean * (double)into->count + l->mean * (double)l->count) / (double)(into->count + l->count);
	into->count += l->count;
	into->min = fmin(into->min, l->min);
	into->max = fmax(into->max, l->max);
	into->p50 = fmax(into->p50, l->p50);
	into->p90 = fmax(into->p90, l->p90);
	into->p99 = fmax(into->p99, l->p99);
	into->p99_9 = fmax(into->p99_9, l->p99_9);
}

static const json_t *port_named(const json_t *rep, const char *name)
{
	const json_t *ports = json_object_get(rep, "ports"), *p;
	size_t i;

	json_array_foreach(ports, i, p)
		if (name && !strcmp(json_string_value(json_object_get(p, "name")) ?: "", name))
			return p;
	return NULL;
}

static void add_flow(struct metrics *m, const json_t *rep, const json_t *f)
{
	const json_t *lat = json_object_get(json_object_get(f, "latency_ns"), "oneway");
	const json_t *port = port_named(rep, json_string_value(json_object_get(f, "port")));
	struct lat_summary l = lat_from_json(lat);

	m->qps++;
	m->sent += ju64(f, "tx_packets");
	m->received += ju64(f, "rx_packets");
	m->tx_bytes += ju64(f, "tx_bytes");
	m->rx_bytes += ju64(f, "rx_bytes");
	m->goodput_gbps += jnum(f, "goodput_gbps");
	m->ecn_ce += ju64(f, "ecn_ce");
	m->retransmits += ju64(f, "retransmits");
	lat_merge(&m->lat, &l);
	for (unsigned p = 0; p < 8; p++)
		m->paused_ms[p] = fmax(m->paused_ms[p], jelem(port, "paused_ns", p) / 1e6);
}

/* The lab switch's view: frames of the set's destination QPNs still queued, and its totals. */
static void add_switch(struct metrics *m, const json_t *rep, const uint64_t *dqpn, unsigned n_dqpn)
{
	const json_t *sw = json_object_get(rep, "switch"), *x;
	size_t i;

	if (!sw)
		return;
	json_array_foreach(json_object_get(sw, "flows"), i, x)
		for (unsigned k = 0; k < n_dqpn; k++)
			if (ju64(x, "dest_qpn") == dqpn[k]) {
				m->queued += ju64(x, "queued_at_end");
				break;
			}
	json_array_foreach(json_object_get(sw, "ports"), i, x) {
		m->sw_ecn_marked += (uint64_t)jsum(x, "ecn_marked");
		m->sw_xoff += (uint64_t)jsum(x, "pfc_xoff_tx");
		for (unsigned c = 0; c < 8; c++)
			m->sw_max_queue = (uint64_t)fmax((double)m->sw_max_queue, jelem(x, "max_queue_bytes", c));
	}
	m->sw_dropped = ju64(sw, "dropped_buffer_full") + ju64(sw, "dropped_queue_limit") + ju64(sw, "dropped_headroom");
}

int metrics_read(const json_t *rep, const struct flow_set *fs, struct metrics *m)
{
	const json_t *f;
	uint64_t dqpn[256];
	unsigned n_dqpn = 0;
	size_t i;

	memset(m, 0, sizeof(*m));
	m->duration_s = jnum(rep, "duration_s");
	json_array_foreach(json_object_get(rep, "lcores"), i, f)
		m->held_up_ms = fmax(m->held_up_ms, jnum(f, "held_up_ms"));
	json_array_foreach(json_object_get(rep, "flows"), i, f) {
		if (!flow_set_has(fs, json_string_value(json_object_get(f, "group"))))
			continue;
		add_flow(m, rep, f);
		if (n_dqpn < sizeof(dqpn) / sizeof(dqpn[0]))
			dqpn[n_dqpn++] = ju64(f, "dest_qpn");
	}
	if (!m->qps)
		return -1;
	add_switch(m, rep, dqpn, n_dqpn);
	m->lost = m->sent > m->received + m->queued ? m->sent - m->received - m->queued : 0;
	m->loss_pct = m->sent ? 100.0 * (double)m->lost / (double)m->sent : 0;
	if (m->duration_s > 0)
		m->sent_gbps = (double)(m->tx_bytes + FCS_BYTES * m->sent) * 8 / m->duration_s / 1e9;
	return 0;
}

void metrics_to_json(const struct metrics *m, json_t *r)
{
	json_t *paused = json_array();

	for (unsigned p = 0; p < 8; p++)
		json_array_append_new(paused, json_real(m->paused_ms[p]));
	json_object_set_new(r, "duration_s", json_real(m->duration_s));
	json_object_set_new(r, "sent", json_integer((json_int_t)m->sent));
	json_object_set_new(r, "received", json_integer((json_int_t)m->received));
	json_object_set_new(r, "queued_at_end", json_integer((json_int_t)m->queued));
	json_object_set_new(r, "lost", json_integer((json_int_t)m->lost));
	json_object_set_new(r, "loss_pct", json_real(m->loss_pct));
	json_object_set_new(r, "sent_gbps", json_real(m->sent_gbps));
	json_object_set_new(r, "goodput_gbps", json_real(m->goodput_gbps));
	json_object_set_new(r, "latency_ns", lat_to_json(&m->lat));
	json_object_set_new(r, "retransmits", json_integer((json_int_t)m->retransmits));
	json_object_set_new(r, "ecn_ce", json_integer((json_int_t)m->ecn_ce));
	json_object_set_new(r, "switch_ecn_marked", json_integer((json_int_t)m->sw_ecn_marked));
	json_object_set_new(r, "switch_xoff_tx", json_integer((json_int_t)m->sw_xoff));
	json_object_set_new(r, "switch_dropped", json_integer((json_int_t)m->sw_dropped));
	json_object_set_new(r, "switch_max_queue_bytes", json_integer((json_int_t)m->sw_max_queue));
	json_object_set_new(r, "paused_ms", paused);
	json_object_set_new(r, "held_up_ms", json_real(m->held_up_ms));
}

double metrics_received_gbps(const struct metrics *m, unsigned frame)
{
	return m->duration_s > 0 ? (double)m->received * frame * 8 / m->duration_s / 1e9 : 0;
}

double jain_index(const double *x, unsigned n)
{
	return kpi_jfi(x, n);
}

double percentile(double *x, unsigned n, double p)
{
	percentile_sort(x, n);
	return percentile_of_sorted(x, n, p / 100.0);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The fabric simulation's summaries, see fab_report.h. Goodput is what each receiver accepted in
 * order within the window (window_us); utilisation is per sample interval (sample_us); the
 * slowdown of a sized flow is its completion time over fabsim's ideal (alone in the fabric).
 */
#include "fab_report.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fab_fluid.h"
#include "run_info.h"

#define FR_FLOWS_LISTED 100000  /* the summary lists every flow up to this many */
#define FR_BUCKETS 20           /* slowdown by flow-size 5 % step, as HPCC's analysis */

static double us(uint64_t ns) { return (double)ns / 1000; }
static double win_ns(const struct fabsim *s) { return (double)(s->sc->win_end_ns - s->sc->win_start_ns); }
static double goodput(const struct fabsim *s, const struct fs_qp *q) { return (double)q->win_rx_bytes * 8 / win_ns(s); }
static bool in_window(const struct fabsim *s, const struct fs_qp *q) { return q->cfg->start_ns < s->sc->win_end_ns; }
static bool completed(const struct fs_qp *q) { return q->completion_ns != UINT64_MAX; }

static double slowdown(const struct fs_qp *q)
{
	double x = (double)(q->completion_ns - q->cfg->start_ns) / (double)(q->ideal_ns ? q->ideal_ns : 1);

	return x < 1 ? 1 : x;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The p-th percentile of sorted x[0..n-1] (nearest rank). */
static double pct(const double *x, unsigned n, double p)
{
	unsigned k = (unsigned)ceil(p / 100 * n);

	return n ? x[k ? k - 1 : 0] : 0;
}

static json_t *stats_json(double *x, unsigned n)
{
	double sum = 0;

	qsort(x, n, sizeof(*x), cmp_double);
	for (unsigned i = 0; i < n; i++)
		sum += x[i];
	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f}", "min", n ? x[0] : 0, "p50", pct(x, n, 50), "mean",
			 n ? sum / n : 0, "p99", pct(x, n, 99), "max", n ? x[n - 1] : 0, "sum", sum);
}

/* ---- per traffic entry -------------------------------------------------------------------------- */

struct sized {
	uint64_t bytes;
	double slowdown, fct_us;
};

static int cmp_sized(const void *a, const void *b)
{
	const struct sized *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? -1 : 1;
	return cmp_double(&x->slowdown, &y->slowdown);
}

static json_t *percentiles(double *x, unsigned n)
{
	qsort(x, n, sizeof(*x), cmp_double);
	return json_pack("{s:f, s:f, s:f}", "p50", pct(x, n, 50), "p95", pct(x, n, 95), "p99", pct(x, n, 99));
}

/* HPCC's table: the completed flows by size, in deciles of their count (a bucket ends at its
 * largest size; deciles of one size merge), each with its slowdown percentiles. */
static json_t *fct_buckets(struct sized *z, unsigned n, double *tmp)
{
	json_t *a = json_array();
	unsigned from = 0;

	qsort(z, n, sizeof(*z), cmp_sized);
	for (unsigned b = 1; b <= FR_BUCKETS && from < n; b++) {
		unsigned to = (unsigned)((uint64_t)n * b / FR_BUCKETS), m;

		while (to < n && to > 0 && z[to].bytes == z[to - 1].bytes)
			to++;
		if (to <= from)
			continue;
		for (m = 0; m < to - from; m++)
			tmp[m] = z[from + m].slowdown;
		json_array_append_new(a, json_pack("{s:I, s:I, s:I, s:o}", "min_bytes", (json_int_t)z[from].bytes,
						   "max_bytes", (json_int_t)z[to - 1].bytes, "flows", (json_int_t)m,
						   "slowdown", percentiles(tmp, m)));
		from = to;
	}
	return a;
}

static json_t *traffic_json(const struct fabsim *s, unsigned t, double *tmp, struct sized *z)
{
	const struct fs_traffic *tr = &s->fs->traffic[t];
	unsigned n = 0, nz = 0, sized = 0;
	json_t *o, *fct;

	for (unsigned i = tr->first_flow; i < tr->first_flow + tr->n_flows; i++) {
		const struct fs_qp *q = &s->qp[i];

		if (in_window(s, q))
			tmp[n++] = goodput(s, q);
		if (q->cfg->size_bytes)
			sized++;
		if (q->cfg->size_bytes && completed(q))
			z[nz++] = (struct sized){ q->cfg->size_bytes, slowdown(q),
						  (double)(q->completion_ns - q->cfg->start_ns) / 1000 };
	}
	o = json_pack("{s:s, s:s, s:s, s:I, s:f}", "name", tr->c.name, "pattern", fab_pattern_name(tr->c.pattern.kind),
		      "cc", sc_cc_name(tr->proto.cc), "flows", (json_int_t)tr->n_flows, "jfi", fab_jfi(tmp, n));
	json_object_set_new(o, "goodput_gbps", stats_json(tmp, n));
	json_object_set_new(o, "sized_flows", json_integer(sized));
	json_object_set_new(o, "completed", json_integer(nz));
	if (!nz)
		return o;
	for (unsigned i = 0; i < nz; i++)
		tmp[i] = z[i].fct_us;
	fct = json_pack("{s:o}", "fct_us", percentiles(tmp, nz));
	for (unsigned i = 0; i < nz; i++)
		tmp[i] = z[i].slowdown;
	json_object_set_new(fct, "slowdown", percentiles(tmp, nz));
	json_object_set_new(fct, "buckets", fct_buckets(z, nz, tmp));
	json_object_set_new(o, "fct", fct);
	return o;
}

/* ---- links, ECMP groups, switches ----------------------------------------------------------------- */

static json_t *direction_json(const struct fabsim *s, const struct fs_dlink *l, double *tmp)
{
	double sum = 0;
	json_t *o, *pfc = json_array(), *paused = json_array();

	for (unsigned k = 0; k < s->n_samples; k++)
		sum += tmp[k] = l->util[k];
	qsort(tmp, s->n_samples, sizeof(*tmp), cmp_double);
	for (unsigned c = 0; c < 8; c++) {
		json_array_append_new(pfc, json_integer((json_int_t)l->pause_rx[c]));
		json_array_append_new(paused, json_real(us(l->paused_ns[c])));
	}
	o = json_pack("{s:I, s:I, s:{s:f, s:f, s:f}, s:I}", "bytes", (json_int_t)l->bytes, "frames", (json_int_t)l->pkts,
		      "utilization", "mean", s->n_samples ? sum / s->n_samples : 0, "p95", pct(tmp, s->n_samples, 95),
		      "max", s->n_samples ? tmp[s->n_samples - 1] : 0, "ecn_marked", (json_int_t)l->marked);
	json_object_set_new(o, "dropped", json_pack("{s:I, s:I, s:I, s:I, s:I}", "buffer", (json_int_t)l->drop_buffer,
						    "queue", (json_int_t)l->drop_queue, "headroom", (json_int_t)l->drop_headroom,
						    "no_route", (json_int_t)l->drop_no_route, "link_down",
						    (json_int_t)l->drop_link_down));
	json_object_set_new(o, "pauses_received", pfc);
	json_object_set_new(o, "paused_us", paused);
	return o;
}

static json_t *links_json(const struct fabsim *s, double *tmp)
{
	json_t *a = json_array();

	for (unsigned i = 0; i < s->f->n_links; i++) {
		const struct fab_link *k = &s->f->links[i];
		json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:f, s:f}", "name", k->name, "a", s->f->switches[k->sw].name,
				      "b", k->to_nic ? s->f->nics[k->b].name : s->f->switches[k->b].name, "tier",
				      fabric_tier_name(k->tier), "gbps", k->gbps, "delay_us", k->delay_us);

		json_object_set_new(o, "a_to_b", direction_json(s, &s->dl[2 * i], tmp));
		json_object_set_new(o, "b_to_a", direction_json(s, &s->dl[2 * i + 1], tmp));
		json_array_append_new(a, o);
	}
	return a;
}

static bool same_group(const struct fab_routes *r, const struct fab_group *a, const struct fab_group *b)
{
	return a->n == b->n && !memcmp(&r->members[a->first], &r->members[b->first], a->n * sizeof(*r->members));
}

static json_t *ecmp_group_json(const struct fabsim *s, unsigned sw, const struct fab_group *g)
{
	const struct fab_routes *r = &s->fs->routes;
	double bytes[FS_MAX_SWITCH_PORTS], flows[FS_MAX_SWITCH_PORTS];
	json_t *names = json_array(), *b = json_array(), *fl = json_array();

	for (unsigned m = 0; m < g->n; m++) {
		unsigned p = r->members[g->first + m];
		const struct fs_dlink *l = &s->dl[s->sw[sw].out[p]];

		bytes[m] = (double)l->bytes;
		flows[m] = l->flows;
		json_array_append_new(names, json_string(fabric_peer_name(s->f, &s->f->ports[s->f->switches[sw].first_port + p])));
		json_array_append_new(b, json_integer((json_int_t)l->bytes));
		json_array_append_new(fl, json_integer((json_int_t)l->flows));
	}
	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:f, s:f, s:f}", "switch", s->f->switches[sw].name, "load_balance",
			 fabric_lb_name(s->f->switches[sw].lb.lb), "members", names, "bytes", b, "flows", fl, "mmr",
			 fab_mmr(bytes, g->n), "mmr_flows", fab_mmr(flows, g->n),
			 "jfi", fab_jfi(bytes, g->n));
}

/* The distinct groups of two or more next hops of every switch (a leaf's uplinks). */
static json_t *ecmp_groups_json(const struct fabsim *s)
{
	const struct fab_routes *r = &s->fs->routes;
	json_t *a = json_array();

	for (unsigned sw = 0; sw < r->n_switches; sw++)
		for (unsigned d = 0; d < r->n_dst; d++) {
			const struct fab_group *g = &r->group[(size_t)sw * r->n_dst + d];
			bool seen = g->n < 2;

			for (unsigned e = 0; e < d && !seen; e++)
				seen = same_group(r, g, &r->group[(size_t)sw * r->n_dst + e]);
			if (!seen)
				json_array_append_new(a, ecmp_group_json(s, sw, g));
		}
	return a;
}

static json_t *switches_json(const struct fabsim *s)
{
	json_t *a = json_array();

	for (unsigned i = 0; i < s->f->n_switches; i++) {
		const struct fs_switch *w = &s->sw[i];
		const struct fab_switch *fw = &s->f->switches[i];
		json_t *queues = json_array();
		uint64_t xoff = 0, xon = 0;

		for (unsigned p = 0; p < fw->n_ports; p++)
			for (unsigned c = 0; c < 8; c++) {
				xoff += w->mmu.xoff_events[p][c];
				xon += w->mmu.xon_events[p][c];
				if (w->mmu.max_queue[p][c])
					json_array_append_new(queues, json_pack("{s:s, s:i, s:I}", "port",
						fabric_peer_name(s->f, &s->f->ports[fw->first_port + p]), "class", (int)c,
						"max_bytes", (json_int_t)w->mmu.max_queue[p][c]));
			}
		json_array_append_new(a, json_pack("{s:s, s:s, s:I, s:I, s:{s:I, s:I, s:I}, s:I, s:I, s:I, s:o}", "name",
			fw->name, "tier", fabric_tier_name(fw->tier), "buffer_bytes", (json_int_t)w->mmu.p.buffer_bytes,
			"buffer_peak_bytes", (json_int_t)w->mmu.max_used, "dropped", "buffer",
			(json_int_t)w->mmu.c.dropped_buffer, "queue", (json_int_t)w->mmu.c.dropped_queue, "headroom",
			(json_int_t)w->mmu.c.dropped_headroom, "xoff_sent", (json_int_t)xoff, "xon_sent", (json_int_t)xon,
			"flowlets", (json_int_t)w->st.flowlets, "queues", queues));
	}
	return a;
}

/* Each link event: when, which link, what it cost until the next event. */
static json_t *events_json(const struct fabsim *s)
{
	json_t *a = json_array();

	for (unsigned k = 0; k < s->fs->n_events; k++) {
		const struct cfab_event *e = &s->fs->events[k];
		const struct fs_event_cost *c = &s->ev[k];
		uint64_t at = (uint64_t)(e->at_s * 1e9 + 0.5);
		json_t *o = json_pack("{s:f, s:s, s:s, s:I, s:I, s:f}", "at_us", us(at), "link", s->f->links[e->link].name,
				      "state", e->up ? "up" : "down", "frames_lost", (json_int_t)c->lost, "flows_hit",
				      (json_int_t)c->flows_hit, "loss_duration_us", c->lost ? us(c->last_loss_ns - at) : 0.0);

		json_object_set_new(o, "converged_us", c->converged ? json_real(us(c->converged_ns)) : json_null());
		json_array_append_new(a, o);
	}
	return a;
}

/* ---- flows and totals --------------------------------------------------------------------------- */

struct totals {
	uint64_t sent, retx, ooo, dup, naks, timeouts, drops, ce, cnps, pauses, completed, sized;
	double goodput;
};

static struct totals totals(const struct fabsim *s)
{
	struct totals t = { 0 };

	for (unsigned i = 0; i < s->n_qp; i++) {
		const struct fs_qp *q = &s->qp[i];

		t.sent += q->sent_pkts, t.retx += q->retx_pkts, t.ooo += q->ooo_pkts, t.dup += q->dup_pkts;
		t.naks += q->naks, t.timeouts += q->timeouts, t.drops += q->drops, t.ce += q->ce_pkts;
		t.cnps += q->cnp_rx, t.sized += q->cfg->size_bytes != 0, t.completed += completed(q);
		t.goodput += goodput(s, q);
	}
	for (unsigned d = 0; d < s->n_dl; d++)
		for (unsigned c = 0; c < 8; c++)
			t.pauses += s->dl[d].pause_rx[c];
	return t;
}

static json_t *flow_json(const struct fabsim *s, unsigned i)
{
	const struct fs_qp *q = &s->qp[i];
	const struct fs_flow *c = q->cfg;
	json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:I, s:i, s:I, s:f, s:f, s:I}", "flow", (json_int_t)i, "traffic",
			      s->fs->traffic[c->traffic].c.name, "src", s->f->nics[c->src].name, "dst",
			      s->f->nics[c->dst].name, "qpn", (json_int_t)c->qpn, "udp_sport", (int)c->key.sport,
			      "size_bytes", (json_int_t)c->size_bytes, "start_us", us(c->start_ns), "goodput_gbps",
			      goodput(s, q), "rx_bytes", (json_int_t)q->rx_bytes);

	json_object_set_new(o, "completion_us", completed(q) ? json_real(us(q->completion_ns - c->start_ns)) : json_null());
	json_object_set_new(o, "ideal_us", json_real(us(q->ideal_ns)));
	json_object_set_new(o, "slowdown", completed(q) ? json_real(slowdown(q)) : json_null());
	json_object_set_new(o, "counters", json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "sent", (json_int_t)q->sent_pkts,
		"retransmitted", (json_int_t)q->retx_pkts, "out_of_order", (json_int_t)q->ooo_pkts, "duplicates",
		(json_int_t)q->dup_pkts, "naks", (json_int_t)q->naks, "timeouts", (json_int_t)q->timeouts, "dropped",
		(json_int_t)q->drops, "ce_marked", (json_int_t)q->ce_pkts, "cnps", (json_int_t)q->cnp_rx));
	return o;
}

static json_t *totals_json(const struct fabsim *s, const struct totals *t)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "flows", (json_int_t)s->n_qp,
			 "sized_flows", (json_int_t)t->sized, "completed", (json_int_t)t->completed, "sent",
			 (json_int_t)t->sent, "retransmitted", (json_int_t)t->retx, "out_of_order", (json_int_t)t->ooo,
			 "duplicates", (json_int_t)t->dup, "naks", (json_int_t)t->naks, "timeouts", (json_int_t)t->timeouts,
			 "dropped", (json_int_t)t->drops, "ce_marked", (json_int_t)t->ce, "pauses", (json_int_t)t->pauses);
}

static double flows_jfi(const struct fabsim *s, double *tmp)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->n_qp; i++)
		if (in_window(s, &s->qp[i]))
			tmp[n++] = goodput(s, &s->qp[i]);
	return fab_jfi(tmp, n);
}

int fab_report_json(FILE *out, const struct fabsim *s)
{
	size_t n = s->n_qp > s->n_samples ? s->n_qp : s->n_samples;
	double *tmp = malloc((n + 1) * sizeof(*tmp));
	struct sized *z = malloc((s->n_qp + 1) * sizeof(*z));
	struct totals t = totals(s);
	json_t *o, *fab, *tr, *flows;

	if (!tmp || !z) {
		free(tmp);
		free(z);
		return -1;
	}
	o = json_pack("{s:s, s:s, s:I, s:I, s:f, s:[f, f], s:f, s:I}", "scenario", s->sc->file, "type", "fabric", "seed",
		      (json_int_t)s->sc->seed, "flows_seed", (json_int_t)s->fs->flows_seed, "duration_us",
		      us(s->sc->duration_ns), "window_us", us(s->sc->win_start_ns), us(s->sc->win_end_ns), "sample_us",
		      us(s->sc->sample_ns), "events", (json_int_t)s->events);
	json_object_set_new(o, "run_info", run_info_json());
	fab = json_pack("{s:s, s:I, s:I, s:I, s:f, s:f}", "kind", fabric_kind_name(s->f->kind), "switches",
			(json_int_t)s->f->n_switches, "nics", (json_int_t)s->f->n_nics, "links", (json_int_t)s->f->n_links,
			"goodput_gbps", t.goodput, "jfi", flows_jfi(s, tmp));
	json_object_set_new(fab, "links", links_json(s, tmp));
	json_object_set_new(fab, "ecmp_groups", ecmp_groups_json(s));
	json_object_set_new(fab, "switches", switches_json(s));
	json_object_set_new(fab, "events", events_json(s));
	json_object_set_new(o, "fabric", fab);
	tr = json_array();
	for (unsigned i = 0; i < s->fs->n_traffic; i++)
		json_array_append_new(tr, traffic_json(s, i, tmp, z));
	json_object_set_new(o, "traffic", tr);
	json_object_set_new(o, "totals", totals_json(s, &t));
	flows = json_array();
	for (unsigned i = 0; i < s->n_qp && s->n_qp <= FR_FLOWS_LISTED; i++)
		json_array_append_new(flows, flow_json(s, i));
	json_object_set_new(o, "flows_listed", json_boolean(s->n_qp <= FR_FLOWS_LISTED));
	json_object_set_new(o, "flows", flows);
	json_dumpf(o, out, JSON_INDENT(1) | JSON_REAL_PRECISION(9));
	fputc('\n', out);
	json_decref(o);
	free(tmp);
	free(z);
	return 0;
}

/* ---- the table ------------------------------------------------------------------------------------ */

void fab_report_table(FILE *o, const struct fabsim *s)
{
	size_t n = s->n_qp > s->n_samples ? s->n_qp : s->n_samples;
	double *tmp = malloc((n + 1) * sizeof(*tmp));
	struct sized *z = malloc((s->n_qp + 1) * sizeof(*z));
	struct totals t = totals(s);

	if (!tmp || !z) {
		free(tmp);
		free(z);
		return;
	}
	fprintf(o, "fabric %s: %u switches, %u NICs, %u links; %.1f us simulated, %llu events\n",
		fabric_kind_name(s->f->kind), s->f->n_switches, s->f->n_nics, s->f->n_links, us(s->sc->duration_ns),
		(unsigned long long)s->events);
	for (unsigned i = 0; i < s->fs->n_traffic; i++) {
		json_t *tr = traffic_json(s, i, tmp, z), *g = json_object_get(tr, "goodput_gbps"), *fct;

		fprintf(o, "traffic %s (%s, %s): %lld flows\n", s->fs->traffic[i].c.name,
			json_string_value(json_object_get(tr, "pattern")), json_string_value(json_object_get(tr, "cc")),
			json_integer_value(json_object_get(tr, "flows")));
		fprintf(o, "  goodput Gb/s in [%.0f, %.0f] us: min %.2f  p50 %.2f  mean %.2f  max %.2f  sum %.1f  JFI %.3f\n",
			us(s->sc->win_start_ns), us(s->sc->win_end_ns), json_real_value(json_object_get(g, "min")),
			json_real_value(json_object_get(g, "p50")), json_real_value(json_object_get(g, "mean")),
			json_real_value(json_object_get(g, "max")), json_real_value(json_object_get(g, "sum")),
			json_real_value(json_object_get(tr, "jfi")));
		if ((fct = json_object_get(tr, "fct"))) {
			size_t k;
			json_t *b;

			fprintf(o, "  completed %lld of %lld sized flows; slowdown by size (flows: p50 p95 p99):\n",
				json_integer_value(json_object_get(tr, "completed")),
				json_integer_value(json_object_get(tr, "sized_flows")));
			json_array_foreach(json_object_get(fct, "buckets"), k, b) {
				json_t *sd = json_object_get(b, "slowdown");

				fprintf(o, "    <= %10lld B  %6lld: %7.2f %7.2f %7.2f\n",
					json_integer_value(json_object_get(b, "max_bytes")),
					json_integer_value(json_object_get(b, "flows")),
					json_real_value(json_object_get(sd, "p50")), json_real_value(json_object_get(sd, "p95")),
					json_real_value(json_object_get(sd, "p99")));
			}
		}
		json_decref(tr);
	}
	fprintf(o, "fabric: goodput %.1f Gb/s, JFI %.3f over %u flows\n", t.goodput, flows_jfi(s, tmp), s->n_qp);
	fprintf(o, "totals: %llu packets sent, %llu retransmitted, %llu out of order, %llu NAKs, %llu timeouts, "
		   "%llu dropped, %llu ECN-marked, %llu CNPs, %llu PFC pauses\n",
		(unsigned long long)t.sent, (unsigned long long)t.retx, (unsigned long long)t.ooo,
		(unsigned long long)t.naks, (unsigned long long)t.timeouts, (unsigned long long)t.drops,
		(unsigned long long)t.ce, (unsigned long long)t.cnps, (unsigned long long)t.pauses);
	free(tmp);
	free(z);
}

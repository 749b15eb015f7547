/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Summaries of a finished simulation. Numbers are printed with fixed formats, so the same run
 * gives the same bytes (the JSON's run_info aside: when, where and how it was run). The averaging
 * window is the scenario's window_us: a flow's mean rate is the mean of its sampled pacing rate
 * there, its throughput the bytes its receiver got there.
 */
#include "report.h"

#include <string.h>

#include "run_info.h"

struct flow_summary {
	double mean_rate_gbps, throughput_gbps;
};

static double win_us(const struct scenario *sc)
{
	return (double)(sc->win_end_ns - sc->win_start_ns) / 1000;
}

static struct flow_summary flow_summary(const struct sim *s, const struct flow *f)
{
	struct flow_summary r = { 0 };

	if (f->rate_samples)
		r.mean_rate_gbps = f->rate_sum_gbps / (double)f->rate_samples;
	/* bytes·8 / ns = Gb/s */
	r.throughput_gbps = (double)f->win_rx_bytes * 8 / (double)(s->sc->win_end_ns - s->sc->win_start_ns);
	return r;
}

/* Jain's index (Σx)² / (n·Σx²) over the flows that started before the window ends. */
static double jain(const struct sim *s, bool by_throughput)
{
	double sum = 0, sq = 0;
	unsigned n = 0;

	for (unsigned i = 0; i < s->nf; i++) {
		struct flow_summary fs = flow_summary(s, &s->f[i]);
		double x = by_throughput ? fs.throughput_gbps : fs.mean_rate_gbps;

		if (s->f[i].cfg->start_ns >= s->sc->win_end_ns)
			continue;
		sum += x;
		sq += x * x;
		n++;
	}
	return n && sq > 0 ? sum * sum / (n * sq) : 0;
}

static uint64_t max_queue(const struct sim *s)
{
	uint64_t m = 0;

	for (unsigned i = 0; i < s->np; i++)
		for (unsigned c = 0; c < SC_CLASSES; c++)
			if (s->p[i].max_q[c] > m)
				m = s->p[i].max_q[c];
	return m;
}

/* The latest completion, or -1 when a sized flow did not complete, or no flow has a size. */
static double last_completion_us(const struct sim *s)
{
	double last = -1;

	for (unsigned i = 0; i < s->nf; i++) {
		const struct flow *f = &s->f[i];

		if (!f->cfg->size_bytes)
			continue;
		if (f->completion_ns == UINT64_MAX)
			return -1;
		if ((double)(f->completion_ns - f->cfg->start_ns) / 1000 > last)
			last = (double)(f->completion_ns - f->cfg->start_ns) / 1000;
	}
	return last;
}

static void json_str(FILE *o, const char *s)
{
	fputc('"', o);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(o, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(o, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, o);
	}
	fputc('"', o);
}

/* The second line of both summaries: "run_info": {...} on one line (docs/report.md). */
static void json_run_info(FILE *o)
{
	json_t *ri = run_info_json();

	fprintf(o, "  \"run_info\": ");
	json_dumpf(ri, o, JSON_REAL_PRECISION(10));
	fprintf(o, ",\n");
	json_decref(ri);
}

static double us(uint64_t ns) { return (double)ns / 1000; }
static double gbps(uint64_t kbps) { return (double)kbps / 1e6; }

static void json_flow(FILE *o, const struct sim *s, const struct flow *f)
{
	const struct sc_flow *c = f->cfg;
	struct flow_summary fs = flow_summary(s, f);

	fprintf(o, "    {\"flow\": %u, \"name\": ", (unsigned)(f - s->f));
	json_str(o, c->name);
	fprintf(o, ", \"cc\": \"%s\", \"receiver\": ", sc_cc_name(c->cc));
	json_str(o, s->sc->rx[c->receiver].name);
	fprintf(o, ", \"priority\": %u, \"line_gbps\": %.6f, \"start_us\": %.3f,\n", c->priority, gbps(c->line_kbps),
		us(c->start_ns));
	fprintf(o, "     \"mean_rate_gbps\": %.6f, \"throughput_gbps\": %.6f, \"final_rate_gbps\": %.6f,\n",
		fs.mean_rate_gbps, fs.throughput_gbps, f->started && !f->done ? gbps(f->rate_kbps) : 0.0);
	fprintf(o, "     \"cnps\": %llu, \"cuts\": %llu, \"ce_marked\": %llu, \"acks\": %llu, \"pauses\": %llu, "
		"\"paused_us\": %.3f,\n", (unsigned long long)f->cnp_rx,
		(unsigned long long)(c->cc == CC_DCQCN ? f->dcqcn.c.cuts : 0), (unsigned long long)f->ce_pkts,
		(unsigned long long)f->acks, (unsigned long long)f->pauses, us(f->paused_ns));
	fprintf(o, "     \"sent_bytes\": %llu, \"sent_packets\": %llu, \"rx_bytes\": %llu, \"rx_packets\": %llu, "
		"\"dropped_bytes\": %llu, \"dropped_packets\": %llu, \"queued_bytes\": %llu, \"in_flight_bytes\": %llu,\n",
		(unsigned long long)f->sent_bytes, (unsigned long long)f->sent_pkts, (unsigned long long)f->rx_bytes,
		(unsigned long long)f->rx_pkts, (unsigned long long)f->drop_bytes, (unsigned long long)f->drop_pkts,
		(unsigned long long)f->queued_bytes, (unsigned long long)f->in_flight_bytes);
	if (c->cc == CC_DCQCN)
		fprintf(o, "     \"dcqcn\": {\"target_gbps\": %.6f, \"timer_events\": %llu, \"byte_events\": %llu, "
			"\"fast\": %llu, \"additive\": %llu, \"hyper\": %llu},\n", gbps(f->dcqcn.rt_kbps),
			(unsigned long long)f->dcqcn.c.timer_events, (unsigned long long)f->dcqcn.c.byte_events,
			(unsigned long long)f->dcqcn.c.fast, (unsigned long long)f->dcqcn.c.additive,
			(unsigned long long)f->dcqcn.c.hyper);
	fprintf(o, "     \"size_bytes\": %llu, \"completion_us\": ", (unsigned long long)c->size_bytes);
	if (f->completion_ns == UINT64_MAX)
		fprintf(o, "null}");
	else
		fprintf(o, "%.3f}", us(f->completion_ns - c->start_ns));
}

static void json_ports(FILE *o, const struct sim *s)
{
	fprintf(o, "  \"ports\": [\n");
	for (unsigned i = 0; i < s->np; i++) {
		const struct port *p = &s->p[i];
		uint64_t m = 0;

		for (unsigned c = 0; c < SC_CLASSES; c++)
			m = p->max_q[c] > m ? p->max_q[c] : m;
		fprintf(o, "    {\"receiver\": ");
		json_str(o, p->cfg->name);
		fprintf(o, ", \"rate_gbps\": %.6f, \"max_queue_bytes\": %llu, \"tx_packets\": %llu, "
			"\"marked_packets\": %llu}%s\n", gbps(p->cfg->rate_kbps), (unsigned long long)m,
			(unsigned long long)p->tx_pkts, (unsigned long long)p->marked_pkts, i + 1 < s->np ? "," : "");
	}
	fprintf(o, "  ],\n");
}

static void json_totals(FILE *o, const struct sim *s)
{
	uint64_t dp = 0, db = 0, pauses = 0, cnps = 0;
	double last = last_completion_us(s);

	for (unsigned i = 0; i < s->nf; i++) {
		dp += s->f[i].drop_pkts;
		db += s->f[i].drop_bytes;
		pauses += s->f[i].pauses;
		cnps += s->f[i].cnp_rx;
	}
	fprintf(o, "  \"jain\": %.6f, \"jain_rate\": %.6f,\n", jain(s, true), jain(s, false));
	fprintf(o, "  \"max_queue_bytes\": %llu, \"max_buffer_bytes\": %llu,\n", (unsigned long long)max_queue(s),
		(unsigned long long)s->buf_max);
	fprintf(o, "  \"dropped_packets\": %llu, \"dropped_bytes\": %llu, \"pauses\": %llu, \"cnps\": %llu,\n",
		(unsigned long long)dp, (unsigned long long)db, (unsigned long long)pauses, (unsigned long long)cnps);
	if (last < 0)
		fprintf(o, "  \"last_completion_us\": null,\n");
	else
		fprintf(o, "  \"last_completion_us\": %.3f,\n", last);
	fprintf(o, "  \"events\": %llu\n", (unsigned long long)s->events);
}

void report_json(FILE *o, const struct sim *s)
{
	const struct scenario *sc = s->sc;

	fprintf(o, "{\n");
	json_run_info(o);
	fprintf(o, "  \"scenario\": ");
	json_str(o, sc->file);
	fprintf(o, ",\n  \"type\": \"network\", \"seed\": %llu, \"duration_us\": %.3f, \"sample_us\": %.3f, "
		"\"window_us\": [%.3f, %.3f],\n", (unsigned long long)sc->seed, us(sc->duration_ns), us(sc->sample_ns),
		us(sc->win_start_ns), us(sc->win_end_ns));
	fprintf(o, "  \"flows\": [\n");
	for (unsigned i = 0; i < s->nf; i++) {
		json_flow(o, s, &s->f[i]);
		fprintf(o, "%s\n", i + 1 < s->nf ? "," : "");
	}
	fprintf(o, "  ],\n");
	json_ports(o, s);
	json_totals(o, s);
	fprintf(o, "}\n");
}

void report_table(FILE *o, const struct sim *s)
{
	const struct scenario *sc = s->sc;
	double last = last_completion_us(s);

	fprintf(o, "%s: %.3f us simulated, seed %llu, %llu events; window %.3f..%.3f us (%.3f us)\n", sc->file,
		us(sc->duration_ns), (unsigned long long)sc->seed, (unsigned long long)s->events, us(sc->win_start_ns),
		us(sc->win_end_ns), win_us(sc));
	fprintf(o, "%4s %-12s %-6s %10s %10s %8s %8s %7s %10s %9s %12s %12s\n", "flow", "name", "cc", "rate_gbps",
		"thru_gbps", "cnps", "cuts", "pauses", "paused_us", "drops", "sent_bytes", "done_us");
	for (unsigned i = 0; i < s->nf; i++) {
		const struct flow *f = &s->f[i];
		struct flow_summary fs = flow_summary(s, f);
		char done[32] = "-";

		if (f->completion_ns != UINT64_MAX)
			snprintf(done, sizeof(done), "%.3f", us(f->completion_ns - f->cfg->start_ns));
		fprintf(o, "%4u %-12s %-6s %10.3f %10.3f %8llu %8llu %7llu %10.1f %9llu %12llu %12s\n", i, f->cfg->name,
			sc_cc_name(f->cfg->cc), fs.mean_rate_gbps, fs.throughput_gbps, (unsigned long long)f->cnp_rx,
			(unsigned long long)(f->cfg->cc == CC_DCQCN ? f->dcqcn.c.cuts : 0),
			(unsigned long long)f->pauses, us(f->paused_ns), (unsigned long long)f->drop_pkts,
			(unsigned long long)f->sent_bytes, done);
	}
	fprintf(o, "Jain %.4f (throughput), %.4f (rate); max queue %llu B, max buffer %llu B", jain(s, true),
		jain(s, false), (unsigned long long)max_queue(s), (unsigned long long)s->buf_max);
	if (last >= 0)
		fprintf(o, "; last completion %.3f us", last);
	fprintf(o, "\n");
}

void report_replay_json(FILE *o, const struct scenario *sc, const struct replay_result *r)
{
	fprintf(o, "{\n");
	json_run_info(o);
	fprintf(o, "  \"scenario\": ");
	json_str(o, sc->file);
	fprintf(o, ",\n  \"type\": \"rp_replay\", \"duration_us\": %.3f, \"cnps_listed\": %u, \"lines\": %llu,\n",
		us(sc->duration_ns), sc->rp.n_cnp, (unsigned long long)r->lines);
	fprintf(o, "  \"rate_gbps\": %.6f, \"target_gbps\": %.6f, \"alpha\": %.6f,\n", gbps(r->rc_kbps),
		gbps(r->rt_kbps), r->alpha);
	fprintf(o, "  \"cnps\": %llu, \"cuts\": %llu, \"timer_events\": %llu, \"byte_events\": %llu, "
		"\"fast\": %llu, \"additive\": %llu, \"hyper\": %llu\n}\n", (unsigned long long)r->c.cnps,
		(unsigned long long)r->c.cuts, (unsigned long long)r->c.timer_events,
		(unsigned long long)r->c.byte_events, (unsigned long long)r->c.fast, (unsigned long long)r->c.additive,
		(unsigned long long)r->c.hyper);
}

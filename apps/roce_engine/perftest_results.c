/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The numbers of perftest's table, from what the engine wrote (docs/perftest.md):
 *   bw average  iterations: RC acknowledged messages x size over the report's duration_s (READ
 *               data flows back, unseen by the far end's receiver), UC/UD the report's goodput;
 *               -D with a margin: the messages sent between the engine's snapshots at the margins
 *   bw peak     the best 0.1 s interval of the run's time series, never below the average
 *   write/send latency  half the report's round trip (RC: request -> ACK; UC/UD: ping-pong);
 *                       -H/-U each iteration's from the raw samples (run.latency_samples)
 *   read latency        perftest_capture.c
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perftest_opts.h"

double pt_num(const json_t *obj, const char *key)
{
	return json_number_value(json_object_get(obj, key));
}

static const char *const pt_group[2] = { PT_FLOW, PT_FLOW_BACK };

/* The port a direction's requests leave from: its READ responses come back there. */
static const char *pt_requester_port(const struct pt_opts *o, int dir)
{
	if (o->device)
		return "local";
	return dir == 1 || (o->reversed && !o->bidir) ? "remote" : "local";
}

/* ---- the time series ---- */

/* Splits a CSV line (time_s,kind,name,tx_gbps,tx_mpps,rx_gbps,rx_mpps,goodput_gbps,...) in place. */
static unsigned pt_csv_fields(char *line, char **field, unsigned max)
{
	unsigned n = 0;

	for (char *s = line, *tok; n < max && (tok = strsep(&s, ",\n")) != NULL;)
		field[n++] = tok;
	return n;
}

/* A flow row of one of the run's groups, with the length of the interval it covers (rows of a
 * group come in time order; prev_t holds the last time seen per group). */
int pt_ts_parse_line(char *line, struct pt_ts_row *row, double *prev_t)
{
	char *field[16];
	unsigned n = pt_csv_fields(line, field, 16);

	if (n < 8 || strcmp(field[1], "flow"))
		return 0;
	for (int d = 0; d < 2; d++)
		if (!strcmp(field[2], pt_group[d])) {
			row->dir = d;
			row->t_s = strtod(field[0], NULL);
			row->dt_s = row->t_s - prev_t[d];
			row->tx_gbps = strtod(field[3], NULL);
			prev_t[d] = row->t_s;
			return row->dt_s > 0;
		}
	return 0;
}

/* Messages a row's interval saw sent: its frame bytes over the bytes a message takes. */
double pt_messages_in_row(const struct pt_opts *o, const struct pt_ts_row *row, uint64_t size)
{
	return row->tx_gbps * 1e9 / 8 * row->dt_s / pt_frame_bytes_per_message(o, size);
}

/* The best interval of one direction: goodput of its flow group, or for READs its requester
 * port's RX rate scaled by the share of payload in what it received. The last row (the drain
 * after TX stopped) covers a partial interval and is left out. */
static double pt_peak_from_timeseries(const struct pt_opts *o, const char *path, int dir, double payload_share)
{
	char line[512];
	double best = 0, pending = -1;
	bool read = o->test->verb == PT_READ;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *field[16];
		if (pt_csv_fields(line, field, 16) < 8)
			continue;
		bool ours = read ? !strcmp(field[1], "port") && !strcmp(field[2], pt_requester_port(o, dir))
				 : !strcmp(field[1], "flow") && !strcmp(field[2], pt_group[dir]);
		if (!ours || !*field[read ? 5 : 7])
			continue;
		if (pending > best) /* the row before this one was not the last */
			best = pending;
		pending = strtod(field[read ? 5 : 7], NULL) * (read ? payload_share : 1.0);
	}
	fclose(f);
	return best;
}

/* -D with a margin: perftest counts only what completes between the margins. The engine's
 * snapshot of the "measured" phase (pt_config_margin_phases): what each direction's flow group
 * sent from the margin to duration - margin, over the time between the two snapshots. */
static bool pt_bw_within_margins(const struct pt_opts *o, const json_t *report, uint64_t size, double *msgs,
				 double *secs)
{
	const json_t *ph;
	size_t i;

	msgs[0] = msgs[1] = secs[0] = secs[1] = 0;
	json_array_foreach (json_object_get(report, "phases"), i, ph) {
		const char *name = json_string_value(json_object_get(ph, "name"));
		if (!name || strcmp(name, PT_PHASE_MEASURED))
			continue;
		for (int d = 0; d < 2; d++) {
			const json_t *g = json_object_get(json_object_get(ph, "flows"), pt_group[d]);
			if (!g)
				continue;
			msgs[d] = pt_num(g, "tx_bytes") / pt_frame_bytes_per_message(o, size);
			secs[d] = pt_num(ph, "end_s") - pt_num(ph, "start_s");
		}
	}
	return secs[0] > 0;
}

/* ---- bandwidth ---- */

static void pt_bw_direction(const struct pt_opts *o, const struct pt_paths *p, struct pt_run *r, int dir)
{
	double secs = pt_num(r->report, "duration_s"), gbps = 0, messages = 0, rx_bytes = 0;
	struct pt_bw *b = &r->dir[dir];
	const json_t *fl;
	size_t i;

	json_array_foreach (json_object_get(r->report, "flows"), i, fl) {
		const char *group = json_string_value(json_object_get(fl, "group"));
		bool local = json_is_string(json_object_get(fl, "receiver"));
		if (!group || strcmp(group, pt_group[dir]))
			continue;
		if (o->conn == PT_RC) { /* acknowledged, as perftest counts completions */
			messages += pt_num(json_object_get(fl, "rc"), "completions");
		} else { /* what the local receiver got, else what was sent */
			messages += pt_num(fl, local ? "rx_messages" : "messages");
			gbps += pt_num(fl, "goodput_gbps");
		}
	}
	if (o->conn == PT_RC) /* READ data flows back with the answers: the receiver saw none of it */
		gbps = secs > 0 ? messages * (double)r->size * 8 / secs / 1e9 : 0;
	json_array_foreach (json_object_get(r->report, "ports"), i, fl) {
		const char *name = json_string_value(json_object_get(fl, "name"));
		if (name && !strcmp(name, pt_requester_port(o, dir)))
			rx_bytes = pt_num(fl, "rx_bytes");
	}
	b->iterations = (uint64_t)messages;
	b->avg_gbps = gbps;
	b->msg_rate_mpps = secs > 0 ? messages / secs / 1e6 : 0;
	b->peak_gbps = pt_peak_from_timeseries(o, p->ts, dir, rx_bytes > 0 ? messages * (double)r->size / rx_bytes : 0);
	b->peak_from = "best 0.1 s interval";
	if (!(b->peak_gbps > b->avg_gbps)) { /* the whole run is a window too */
		b->peak_gbps = b->avg_gbps;
		b->peak_from = "average";
	}
	r->seconds = secs;
}

/* Every direction's numbers, and the table's: their sum (perftest adds the far end's with -b). */
void pt_bw_from_report(const struct pt_opts *o, const struct pt_paths *p, struct pt_run *r)
{
	double msgs[2], secs[2];
	int dirs = o->bidir ? 2 : 1;
	bool margins = o->duration_s > 0 && pt_margin(o) > 0 && pt_bw_within_margins(o, r->report, r->size, msgs, secs);

	r->bw = (struct pt_bw){ .peak_from = "average" };
	for (int d = 0; d < dirs; d++) {
		struct pt_bw *b = &r->dir[d];
		pt_bw_direction(o, p, r, d);
		if (margins && secs[d] > 0) {
			b->iterations = (uint64_t)llround(msgs[d]);
			b->avg_gbps = msgs[d] * (double)r->size * 8 / secs[d] / 1e9;
			b->msg_rate_mpps = msgs[d] / secs[d] / 1e6;
			if (b->peak_gbps < b->avg_gbps)
				b->peak_gbps = b->avg_gbps;
			r->seconds = secs[0];
		}
		if (o->no_peak) {
			b->peak_gbps = 0;
			b->peak_from = "not measured (-N)";
		}
		r->bw.avg_gbps += b->avg_gbps;
		r->bw.peak_gbps += b->peak_gbps;
		r->bw.msg_rate_mpps += b->msg_rate_mpps;
		r->bw.peak_from = b->peak_from;
	}
	r->bw.iterations = r->dir[0].iterations; /* perftest: this end's iterations, the far end's BW added */
	r->iterations = r->bw.iterations;
}

/* ---- latency ---- */

/* Write and send: the report's round trip, halved as perftest halves its ping-pong. */
int pt_lat_from_report(const struct pt_opts *o, struct pt_run *r)
{
	const json_t *fl = json_array_get(json_object_get(r->report, "flows"), 0);
	const char *kind = o->conn == PT_RC ? "ack" : "rtt";
	const json_t *s = json_object_get(json_object_get(fl, "latency_ns"), kind);

	if (!s || pt_num(s, "count") < 1)
		return -1;
	r->iterations = (uint64_t)pt_num(s, "count");
	r->t_min = pt_num(s, "min") / 2;
	r->t_max = pt_num(s, "max") / 2;
	r->t_typical = pt_num(s, "p50") / 2;
	r->t_avg = pt_num(s, "mean") / 2;
	r->t_stdev = pt_num(s, "stddev") / 2;
	r->t_99 = pt_num(s, "p99") / 2;
	r->t_99_9 = pt_num(s, "p99_9") / 2;
	r->lat_source = o->conn == PT_RC ? "flows[0].latency_ns.ack / 2 (request -> ACK, halved)"
					 : "flows[0].latency_ns.rtt / 2 (ping-pong round trip, halved)";
	return 0;
}

static int pt_push_sample(struct pt_run *r, size_t *cap, double v)
{
	if (r->n_samples == *cap) {
		size_t n = *cap ? *cap * 2 : 1024;
		double *s = realloc(r->samples, n * sizeof(*s));
		if (!s)
			return -1;
		r->samples = s;
		*cap = n;
	}
	r->samples[r->n_samples++] = v;
	return 0;
}

/* -H / -U for write and send: the raw samples (kind,port,session,flow,seq,tx_ns,rx_ns,latency_ns)
 * of the table's kind, halved as the table is. */
int pt_samples_from_csv(const struct pt_opts *o, const struct pt_paths *p, struct pt_run *r)
{
	const char *kind = o->conn == PT_RC ? "ack" : "rtt";
	char line[512];
	size_t cap = 0;
	FILE *f = fopen(p->samples, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *field[10];
		if (pt_csv_fields(line, field, 10) >= 8 && !strcmp(field[0], kind) &&
		    pt_push_sample(r, &cap, strtod(field[7], NULL) / 2)) {
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

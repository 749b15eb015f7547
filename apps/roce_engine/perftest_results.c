/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The numbers of perftest's table, from what the engine wrote (docs/perftest.md):
 *   bw average  iterations: RC acknowledged messages x size over the report's duration_s (READ
 *               data flows back, unseen by the far end's receiver), UC/UD the report's goodput;
 *               -D with a margin: the messages the time series saw sent between the margins
 *   bw peak     the best 0.1 s interval of the run's time series, never below the average
 *   write/send latency  half the report's round trip (RC: request -> ACK; UC/UD: ping-pong);
 *                       -H/-U each iteration's from the raw samples (run.latency_samples)
 *   read latency        READ request -> last response, from a capture of the requester's port
 *                       (the engine's histograms record no READ round trips)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "percentile.h"
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

/* -D with a margin: perftest counts only what completes between the margins. The rows whose
 * interval lies within [margin, duration - margin] (1 ms of slack for the main lcore's tick). */
static bool pt_bw_within_margins(const struct pt_opts *o, const struct pt_paths *p, uint64_t size, double *msgs,
				 double *secs)
{
	double margin = pt_margin(o), prev_t[2] = { 0, 0 };
	char line[512];
	struct pt_ts_row row;
	FILE *f = fopen(p->ts, "r");

	msgs[0] = msgs[1] = secs[0] = secs[1] = 0;
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (pt_ts_parse_line(line, &row, prev_t) && row.t_s - row.dt_s >= margin - 0.001 &&
		    row.t_s <= o->duration_s - margin + 0.001) {
			msgs[row.dir] += pt_messages_in_row(o, &row, size);
			secs[row.dir] += row.dt_s;
		}
	fclose(f);
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
	bool margins = o->duration_s > 0 && pt_margin(o) > 0 && pt_bw_within_margins(o, p, r->size, msgs, secs);

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
/* ---- READ latency from the capture ---- */

struct pt_pcapng {
	FILE *f;
	double tick_ns[8];          /* per interface: nanoseconds per timestamp unit */
	unsigned n_if;
};

/* if_tsresol: 10^-v seconds, or 2^-v with the top bit set; default microseconds. */
static double pt_tick_ns(const uint8_t *opts, uint32_t len)
{
	for (uint32_t at = 0; at + 4 <= len;) {
		uint16_t code, olen;
		memcpy(&code, opts + at, 2);
		memcpy(&olen, opts + at + 2, 2);
		if (code == 0)
			break;
		if (code == 9 && olen >= 1 && at + 5 <= len) {
			uint8_t v = opts[at + 4];
			return v & 0x80 ? 1e9 / ldexp(1.0, v & 0x7f) : 1e9 / pow(10.0, v);
		}
		at += 4 + ((olen + 3u) & ~3u);
	}
	return 1000.0;
}

/* READ request -> last response of a QP, one in flight: the request's PSN and its response
 * count give the last response's PSN, so a copy the capture lost cannot pair wrong times. */
struct pt_read_pairing {
	uint32_t packets_per_read;  /* responses per READ: ceil(size / mtu) */
	bool pending;
	uint32_t last_psn;
	uint64_t sent;              /* the request's time, in the capture's units */
	double *samples;
	size_t n, cap;
};

/* t: the frame's time in the interface's units (integers: nanoseconds since 1970 do not fit a
 * double's mantissa), tick_ns: their length. */
static int pt_pair_frame(struct pt_read_pairing *pr, const uint8_t *d, uint32_t len, uint64_t t, double tick_ns)
{
	uint32_t off = 14;
	uint16_t type;

	if (len < 14)
		return 0;
	type = (uint16_t)(d[12] << 8 | d[13]);
	if (type == 0x8100 && len >= 18) {
		type = (uint16_t)(d[16] << 8 | d[17]);
		off = 18;
	}
	if (type == 0x0800 && len >= off + 20)
		off += (d[off] & 0xf) * 4u;
	else if (type == 0x86DD)
		off += 40;
	else
		return 0;
	if (len < off + 8 + 12 || (d[off + 2] << 8 | d[off + 3]) != 4791)
		return 0;
	const uint8_t *bth = d + off + 8;
	uint8_t opcode = bth[0];
	uint32_t psn = (uint32_t)(bth[9] << 16 | bth[10] << 8 | bth[11]);
	if (opcode == 0x0C) { /* RC RDMA READ request; a retransmission keeps the first time */
		if (!pr->pending || pr->last_psn != ((psn + pr->packets_per_read - 1) & 0xFFFFFF))
			pr->sent = t;
		pr->pending = true;
		pr->last_psn = (psn + pr->packets_per_read - 1) & 0xFFFFFF;
	} else if ((opcode == 0x0F || opcode == 0x10) && pr->pending && psn == pr->last_psn) { /* LAST, ONLY */
		if (pr->n == pr->cap) {
			size_t cap = pr->cap ? pr->cap * 2 : 1024;
			double *s = realloc(pr->samples, cap * sizeof(*s));
			if (!s)
				return -1;
			pr->samples = s;
			pr->cap = cap;
		}
		pr->samples[pr->n++] = (double)(t - pr->sent) * tick_ns;
		pr->pending = false;
	}
	return 0;
}

/* One block of the pcapng file the engine wrote (host byte order, as rte_pcapng writes it). */
static int pt_pcapng_block(struct pt_pcapng *pc, struct pt_read_pairing *pr, uint8_t *buf, uint32_t type,
			   uint32_t body)
{
	if (type == 1 && body >= 8) { /* interface description */
		if (pc->n_if < 8)
			pc->tick_ns[pc->n_if] = pt_tick_ns(buf + 8, body - 8);
		pc->n_if++;
	} else if (type == 6 && body >= 20) { /* enhanced packet */
		uint32_t ifc, hi, lo, caplen;
		memcpy(&ifc, buf, 4);
		memcpy(&hi, buf + 4, 4);
		memcpy(&lo, buf + 8, 4);
		memcpy(&caplen, buf + 12, 4);
		if (caplen > body - 20 || ifc >= pc->n_if || ifc >= 8)
			return -1;
		return pt_pair_frame(pr, buf + 20, caplen, (uint64_t)hi << 32 | lo, pc->tick_ns[ifc]);
	}
	return 0;
}

static int pt_read_capture(const char *path, struct pt_read_pairing *pr)
{
	struct pt_pcapng pc = { .f = fopen(path, "rb") };
	uint8_t *buf = NULL;
	uint32_t hdr[2];
	int rc = 0;

	if (!pc.f)
		return -1;
	while (rc == 0 && fread(hdr, 4, 2, pc.f) == 2) {
		if (hdr[1] < 12 || hdr[1] % 4 || hdr[1] > (1u << 24)) {
			rc = -1;
			break;
		}
		uint8_t *b = realloc(buf, hdr[1]);
		if (!b || fread(b, 1, hdr[1] - 8, pc.f) != hdr[1] - 8) {
			buf = b ? b : buf;
			rc = -1;
			break;
		}
		buf = b;
		uint32_t magic;
		memcpy(&magic, buf, 4);
		if (hdr[0] == 0x0A0D0D0A && magic != 0x1A2B3C4D) {
			rc = -1; /* a section in the other byte order: not the engine's */
			break;
		}
		rc = pt_pcapng_block(&pc, pr, buf, hdr[0], hdr[1] - 12);
	}
	free(buf);
	fclose(pc.f);
	return rc;
}

static void pt_stats_from_samples(struct pt_run *r, double *s, size_t n)
{
	double sum = 0, sq = 0;

	percentile_sort(s, n);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	r->t_avg = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (s[i] - r->t_avg) * (s[i] - r->t_avg);
	r->iterations = n;
	r->t_min = s[0];
	r->t_max = s[n - 1];
	r->t_typical = percentile_of_sorted(s, n, 0.5);
	r->t_stdev = sqrt(sq / (double)n);
	r->t_99 = percentile_of_sorted(s, n, 0.99);
	r->t_99_9 = percentile_of_sorted(s, n, 0.999);
	r->lat_source = "perftest.results[].latency_ns: READ request -> last response, from a capture of the "
			"requester's port (full round trip)";
	r->extra = json_pack("{s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:s}", "count", (json_int_t)n, "min", r->t_min, "max",
			     r->t_max, "mean", r->t_avg, "stddev", r->t_stdev, "p50", r->t_typical, "p99", r->t_99,
			     "p99_9", r->t_99_9, "source", "capture");
}

int pt_lat_from_capture(const struct pt_opts *o, const struct pt_paths *p, struct pt_run *r)
{
	struct pt_read_pairing pr = { .packets_per_read = (uint32_t)((r->size + o->mtu - 1) / o->mtu) };
	int rc;

	if (!pr.packets_per_read)
		pr.packets_per_read = 1;
	rc = pt_read_capture(p->capture, &pr);
	if (rc == 0 && pr.n > 0) {
		if (o->hist || o->unsorted) { /* -U prints them in the order measured */
			r->samples = malloc(pr.n * sizeof(*r->samples));
			if (!r->samples) {
				free(pr.samples);
				return -1;
			}
			memcpy(r->samples, pr.samples, pr.n * sizeof(*r->samples));
			r->n_samples = pr.n;
		}
		pt_stats_from_samples(r, pr.samples, pr.n);
	} else {
		rc = -1;
	}
	free(pr.samples);
	return rc;
}

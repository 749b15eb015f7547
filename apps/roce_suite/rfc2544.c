/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The rfc2544 suite, after RFC 2544 §26.1-26.3, per frame size: throughput (the highest offered
 * rate whose frame loss is at or below the threshold, by binary search between min_gbps and
 * max_gbps), one-way latency at fractions of that throughput, and the frame loss rate from
 * max_gbps down in steps until two steps in a row lose nothing. Rates are the engine's pacing
 * unit: Gb/s of frames with their FCS, no preamble or gap; the table also gives frames/s.
 * The trials' flows send one UC (or the base flow's transport) SEND per frame.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab.h"
#include "metrics.h"
#include "suite.h"
#include "trial.h"
#include "verdict.h"

#define MAX_CURVE_STEPS 40
#define PROBE_BYTES 24            /* a one-way latency probe needs this much payload */
#define OFFER_TOLERANCE 0.98      /* senders below this share of the offered rate: not a valid trial */

struct rate_result {
	bool ran, pass;
	bool short_of_rate;           /* the senders could not offer the rate (their lcore's limit) */
	double gbps;
	struct metrics m;
};

/* Frame bytes (with FCS) around a base flow's payload: its transport, address family, tag. */
static unsigned base_overhead(const config_setting_t *f)
{
	const char *tr = "rc", *ip = "";

	config_setting_lookup_string(f, "transport", &tr);
	config_setting_lookup_string(f, "dst_ip", &ip);
	return ROCE_FRAME_OVERHEAD + (strcmp(tr, "ud") ? 0 : 8) + (strchr(ip, ':') ? 20 : 0) +
	       (config_setting_get_member(f, "vlan") ? 4 : 0);
}

static unsigned selected_qps(config_t *cfg, const config_setting_t *names)
{
	config_setting_t *flows = config_lookup(cfg, "flows");
	unsigned n = 0;

	for (int i = 0; flows && i < config_setting_length(flows); i++) {
		const config_setting_t *f = config_setting_get_elem(flows, (unsigned)i);
		if (base_flow_selected(f, names))
			n += (unsigned)cfg_number(f, "count", 1);
	}
	return n;
}

/* The measured flows of a base config: one SEND per frame of `frame` bytes, paced so that all
 * their QPs together offer gbps; nothing else of theirs (patterns, stops, congestion control)
 * may change the offered load. */
static void base_flows_at(config_t *cfg, const struct rfc2544_cfg *c, unsigned frame, double gbps)
{
	config_setting_t *flows = config_lookup(cfg, "flows");
	unsigned qps = selected_qps(cfg, c->flows);
	static const char *const drop[] = { "rate_pps", "pattern", "stop", "cc", "dcqcn", "timely", "inject", "ops" };

	for (int i = 0; flows && i < config_setting_length(flows); i++) {
		config_setting_t *f = config_setting_get_elem(flows, (unsigned)i);
		unsigned payload = frame > base_overhead(f) ? frame - base_overhead(f) : 1;
		if (!base_flow_selected(f, c->flows))
			continue;
		for (unsigned k = 0; k < sizeof(drop) / sizeof(drop[0]); k++)
			cfg_remove(f, drop[k]);
		cfg_set_int(cfg_group(f, "ops"), "send", 1);
		cfg_set_int(f, "message_size", payload);
		cfg_set_int(f, "mtu", ib_mtu_for(payload));
		cfg_set_float(f, "rate_gbps", gbps / qps);
		cfg_remove(f, "latency");
		if (payload >= PROBE_BYTES)
			cfg_set_string(cfg_group(f, "latency"), "mode", "oneway");
	}
}

/* The generated lab: lab.senders hosts h0.. at host_gbps into one receiver r behind the
 * bottleneck (its switch port at link_gbps), one UC flow each. */
static int build(const struct suite_cfg *s, unsigned frame, double gbps, struct lab *l, char *err, size_t errlen)
{
	unsigned payload = frame - ROCE_FRAME_OVERHEAD;
	char name[16], flow[16];

	if (s->base[0]) {
		memset(l, 0, sizeof(*l));
		if (base_load(s->base, &l->cfg, err, errlen))
			return -1;
		base_merge_switch(&l->cfg, s);
		base_flows_at(&l->cfg, &s->rfc2544, frame, gbps);
		return 0;
	}
	lab_init(l, s);
	for (unsigned i = 0; i < s->lab.senders; i++) {
		snprintf(name, sizeof(name), "h%u", i);
		lab_add_host(l, name, s->lab.host_gbps);
	}
	lab_add_host(l, "r", s->lab.link_gbps);
	for (unsigned i = 0; i < s->lab.senders; i++) {
		snprintf(name, sizeof(name), "h%u", i);
		snprintf(flow, sizeof(flow), "f%u", i);
		lab_add_flow(l, &(struct lab_flow){ .name = flow, .from = name, .to = "r", .transport = "uc", .op = "send",
						    .message_size = payload, .ib_mtu = ib_mtu_for(payload), .priority = 3,
						    .rate_gbps = gbps / s->lab.senders,
						    .latency = payload >= PROBE_BYTES });
	}
	lab_finish(l, s);
	return 0;
}

static void flow_set_of(const struct suite_cfg *s, struct flow_set *fs)
{
	memset(fs, 0, sizeof(*fs));
	for (int i = 0; s->rfc2544.flows && i < config_setting_length(s->rfc2544.flows) && i < FLOW_SET_MAX; i++)
		fs->names[fs->n++] = config_setting_get_string_elem(s->rfc2544.flows, i);
}

/* One offered rate; a search trial that fails is run again up to trial.retries times (the
 * lab's links are emulated by a CPU that other processes share: a scheduling gap can lose
 * frames that a real link would not). */
static struct rate_result at_rate(struct runner *rn, const struct suite_cfg *s, const char *kind, unsigned frame,
				  double gbps)
{
	const struct rfc2544_cfg *c = &s->rfc2544;
	unsigned tries = strcmp(kind, "search") ? 1 : s->trial.retries + 1;
	struct rate_result r = { .gbps = gbps };
	struct flow_set fs;
	char err[1024];

	flow_set_of(s, &fs);
	for (unsigned a = 0; a < tries && !rn->stop; a++) {
		struct trial t;
		struct lab l;

		trial_init(&t, kind, "%u B at %.4f Gb/s%s", frame, gbps, a ? " (again)" : "");
		json_object_set_new(t.params, "frame_size", json_integer(frame));
		json_object_set_new(t.params, "offered_gbps", json_real(gbps));
		json_object_set_new(t.params, "offered_fps", json_real(gbps * 1e9 / (frame * 8.0)));
		json_object_set_new(t.params, "attempt", json_integer(a + 1));
		if (build(s, frame, gbps, &l, err, sizeof(err))) {
			snprintf(rn->stop_reason, sizeof(rn->stop_reason), "%s", err);
			rn->stop = true;
			rn->exit_status = EXIT_CONFIG;
			trial_release(&t);
			break;
		}
		if (!trial_measure(rn, &l.cfg, &t, &fs, &r.m)) {
			r.ran = true;
			/* a rate the senders did not reach was not offered: it cannot pass */
			r.short_of_rate = r.m.sent_gbps < OFFER_TOLERANCE * gbps;
			r.pass = !r.short_of_rate &&
				 (c->loss_threshold_pct > 0 ? r.m.loss_pct <= c->loss_threshold_pct : r.m.lost == 0);
			json_object_set_new(t.record, "sender_short", json_boolean(r.short_of_rate));
			trial_verdict(rn, &t, strcmp(kind, "search") ? "info" : r.pass ? "pass" : "fail",
				      "sent %llu (%.4f Gb/s%s), received %llu, lost %llu (%.3f %%), p99 %.0f ns",
				      (unsigned long long)r.m.sent, r.m.sent_gbps, r.short_of_rate ? ", short of the rate" : "",
				      (unsigned long long)r.m.received, (unsigned long long)r.m.lost, r.m.loss_pct, r.m.lat.p99);
		}
		lab_free(&l);
		trial_release(&t);
		if (r.pass)
			break;
	}
	return r;
}

/* Binary search: max first (a pass ends it), then halves until hi - lo is within the resolution
 * or max_trials; a trial that could not run counts as a failure. Returns the throughput (Gb/s),
 * 0 when not even min_gbps passed. */
struct search_result {
	double gbps;                  /* the throughput; 0: not even min_gbps passed */
	unsigned trials;
	double short_at;              /* the lowest rate the senders fell short of (0: none) */
	double carried_gbps;          /* what the receivers got in the first trial (max_gbps), frame Gb/s */
	struct metrics first;         /* that trial's */
};

static void note_short(struct search_result *x, const struct rate_result *r)
{
	if (r->short_of_rate && (!x->short_at || r->gbps < x->short_at))
		x->short_at = r->gbps;
}

static struct search_result search(struct runner *rn, const struct suite_cfg *s, unsigned frame)
{
	const struct rfc2544_cfg *c = &s->rfc2544;
	double lo = c->min_gbps, hi = c->max_gbps, step = c->resolution_pct / 100 * c->max_gbps;
	struct search_result x = { .trials = 1 };
	struct rate_result r = at_rate(rn, s, "search", frame, hi);

	note_short(&x, &r);
	x.carried_gbps = r.ran ? metrics_received_gbps(&r.m, frame) : 0;
	x.first = r.m;
	if (r.pass)
		return x.gbps = hi, x;
	while (x.trials < c->max_trials && hi - lo > step && !rn->stop) {
		double mid = (lo + hi) / 2;
		r = at_rate(rn, s, "search", frame, mid);
		note_short(&x, &r);
		x.trials++;
		if (r.pass)
			x.gbps = lo = mid;
		else
			hi = mid;
	}
	if (!x.gbps && x.trials < c->max_trials && !rn->stop) { /* nothing passed: is even the minimum too much? */
		r = at_rate(rn, s, "search", frame, c->min_gbps);
		note_short(&x, &r);
		x.trials++;
		x.gbps = r.pass ? c->min_gbps : 0;
	}
	return x;
}

/* The first trial (max_gbps) against its load up to the bottleneck's frame capacity: below it,
 * the lab's lcore did not get its CPU, and every figure of the row is the machine's. */
static json_t *throughput_row(struct runner *rn, const struct suite_cfg *s, unsigned frame,
			      const struct search_result *x)
{
	double expected = s->rfc2544.expected_gbps ? link_frame_gbps(s->rfc2544.expected_gbps, frame) : 0, best = x->gbps;
	struct machine busy = machine_judge(x->carried_gbps, expected ? fmin(s->rfc2544.max_gbps, expected) : 0,
					    &x->first);
	json_t *row;

	printf("  %7u  %13.4f  %15.4f  %12.0f  %8.1f  %6u", frame, expected, best, best * 1e9 / (frame * 8.0),
	       expected ? 100 * best / expected : NAN, x->trials);
	if (busy.judged)
		printf("  %9.1f", busy.pct);
	printf("\n");
	row = json_pack("{s:i,s:f,s:f,s:f,s:f,s:o,s:i,s:o}", "frame_size", frame, "throughput_gbps", best,
			"throughput_fps", best * 1e9 / (frame * 8.0), "expected_gbps", expected, "expected_fps",
			expected ? expected * 1e9 / (frame * 8.0) : 0.0, "pct_of_expected",
			expected ? json_real(100 * best / expected) : json_null(), "trials", x->trials, "sender_short_gbps",
			x->short_at ? json_real(x->short_at) : json_null());
	machine_record(rn, row, &busy, "%u B frames at %.4f Gb/s (the search's first trial)", frame, s->rfc2544.max_gbps);
	if (x->short_at)
		machine_limit(rn, row, "senders short of %.4f Gb/s: the result may be theirs (their lcore's limit)",
			      x->short_at);
	return row;
}

static void latency_rows(struct runner *rn, const struct suite_cfg *s, unsigned frame, double best, json_t *rows)
{
	for (unsigned i = 0; i < s->rfc2544.n_lat && best > 0 && !rn->stop; i++) {
		double f = s->rfc2544.lat_fractions[i];
		struct rate_result r = at_rate(rn, s, "latency", frame, f * best);
		const struct lat_summary *l = &r.m.lat;
		json_t *row = json_pack("{s:i,s:f,s:f,s:b}", "frame_size", frame, "fraction", f, "offered_gbps", f * best,
					"ran", r.ran);

		json_object_set_new(row, "latency_ns", lat_to_json(l));
		json_object_set_new(row, "loss_pct", json_real(r.m.loss_pct));
		json_array_append_new(rows, row);
	}
}

static void print_latency(const json_t *rows)
{
	const json_t *row;
	size_t i;

	printf("\nRFC 2544 latency (one-way, ns) at fractions of the throughput\n"
	       "  frame B  fraction  offered Gb/s        p50        p99      p99.9        max       mean  loss %%\n");
	json_array_foreach(rows, i, row) {
		const json_t *l = json_object_get(row, "latency_ns");
		printf("  %7d  %8.2f  %12.4f", (int)ju64(row, "frame_size"), jnum(row, "fraction"), jnum(row, "offered_gbps"));
		if (json_is_object(l))
			printf("  %9.0f  %9.0f  %9.0f  %9.0f  %9.0f", jnum(l, "p50"), jnum(l, "p99"), jnum(l, "p99_9"),
			       jnum(l, "max"), jnum(l, "mean"));
		else
			printf("  %9s  %9s  %9s  %9s  %9s", "-", "-", "-", "-", "-");
		printf("  %6.3f\n", jnum(row, "loss_pct"));
	}
}

/* The loss curve's machine checks, one per row, judged when the rows are printed. */
struct curve_checks {
	struct machine busy[SUITE_MAX_LIST * MAX_CURVE_STEPS];
	unsigned n;
};

/* RFC 2544 §26.3: from the maximum down in steps until two trials in a row lose nothing. Each
 * step's machine check: what the receivers got against its load up to the bottleneck's frame
 * capacity (a step that overloads the link loses what the link cannot carry, and no more, unless
 * the lab's lcore was held up). */
static void loss_curve(struct runner *rn, const struct suite_cfg *s, unsigned frame, json_t *rows,
		       struct curve_checks *checks)
{
	const struct rfc2544_cfg *c = &s->rfc2544;
	double capacity = c->expected_gbps ? link_frame_gbps(c->expected_gbps, frame) : 0;
	unsigned clean = 0;

	for (unsigned k = 0; k < MAX_CURVE_STEPS && clean < 2 && !rn->stop; k++) {
		double pct = 100 - k * c->step_pct, gbps = pct / 100 * c->max_gbps;
		struct rate_result r;

		if (pct <= 0)
			break;
		r = at_rate(rn, s, "loss", frame, gbps);
		clean = r.ran && r.m.lost == 0 ? clean + 1 : 0;
		json_array_append_new(rows, json_pack("{s:i,s:f,s:f,s:f,s:b,s:I,s:I,s:I,s:f}", "frame_size", frame,
						      "offered_gbps", gbps, "sent_gbps", r.m.sent_gbps, "pct_of_max", pct,
						      "ran", r.ran, "sent", (json_int_t)r.m.sent, "received",
						      (json_int_t)r.m.received, "lost", (json_int_t)r.m.lost, "loss_pct",
						      r.m.loss_pct));
		checks->busy[checks->n++] = machine_judge(r.ran ? metrics_received_gbps(&r.m, frame) : 0,
							  r.ran && capacity ? fmin(gbps, capacity) : 0, &r.m);
	}
}

static void print_loss(struct runner *rn, json_t *rows, const struct curve_checks *checks)
{
	json_t *row;
	size_t i;

	printf("\nRFC 2544 frame loss rate\n"
	       "  frame B  offered Gb/s  %% of max  sent Gb/s        sent    received        lost   loss %%\n");
	json_array_foreach(rows, i, row) {
		printf("  %7d  %12.4f  %8.1f  %9.4f  %10llu  %10llu  %10llu  %7.3f%s\n", (int)ju64(row, "frame_size"),
		       jnum(row, "offered_gbps"), jnum(row, "pct_of_max"), jnum(row, "sent_gbps"),
		       (unsigned long long)ju64(row, "sent"),
		       (unsigned long long)ju64(row, "received"), (unsigned long long)ju64(row, "lost"), jnum(row, "loss_pct"),
		       json_is_true(json_object_get(row, "ran")) ? "" : "  (trial failed)");
		if (i < checks->n)
			machine_record(rn, row, &checks->busy[i], "%d B frames at %.4f Gb/s (a loss-curve step)",
				       (int)ju64(row, "frame_size"), jnum(row, "offered_gbps"));
	}
}

int suite_rfc2544(struct runner *rn, const struct suite_cfg *s, json_t *out)
{
	const struct rfc2544_cfg *c = &s->rfc2544;
	json_t *tput = json_array(), *lat = json_array(), *loss = json_array();
	struct search_result x[SUITE_MAX_LIST] = { { 0 } };
	static struct curve_checks checks;

	checks.n = 0;
	for (unsigned i = 0; i < c->n_frames && !rn->stop; i++) {
		x[i] = search(rn, s, c->frame_sizes[i]);
		latency_rows(rn, s, c->frame_sizes[i], x[i].gbps, lat);
		loss_curve(rn, s, c->frame_sizes[i], loss, &checks);
	}
	if (runner_refused(rn)) {
		json_decref(tput);
		json_decref(lat);
		json_decref(loss);
		return -1;
	}
	printf("\nRFC 2544 throughput (frame loss <= %g %%, trials of %g s; Gb/s of frames with FCS)\n"
	       "  frame B  expected Gb/s  throughput Gb/s      frames/s  %% of exp  trials  carried %%\n",
	       c->loss_threshold_pct, rn->duration_s);
	for (unsigned i = 0; i < c->n_frames && x[i].trials; i++) {
		json_array_append_new(tput, throughput_row(rn, s, c->frame_sizes[i], &x[i]));
		if (x[i].gbps > 0)
			suite_verdict(rn, true, "throughput", "%u B: %.4f Gb/s within the loss threshold (min_gbps %g)",
				      c->frame_sizes[i], x[i].gbps, c->min_gbps);
		else
			suite_verdict(rn, false, "throughput", "%u B: frame loss above the threshold even at min_gbps %g",
				      c->frame_sizes[i], c->min_gbps);
	}
	print_latency(lat);
	print_loss(rn, loss, &checks);
	json_object_set_new(out, "rfc2544", json_pack("{s:f,s:f,s:f,s:f,s:o,s:o,s:o}", "loss_threshold_pct",
						      c->loss_threshold_pct, "min_gbps", c->min_gbps, "max_gbps",
						      c->max_gbps, "resolution_pct", c->resolution_pct, "throughput", tput,
						      "latency", lat, "loss_curve", loss));
	return rn->stop ? -1 : 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The collective suite: runs a base config with `collectives` (ring, incast, all-to-all ...;
 * configs/ring-allreduce-4.cfg) `repeat` times and tabulates, for each collective, the engine's
 * per-phase times (report collectives[]: phase_start_us, phase_end_us, phase_completion_us), their
 * summary (min, p50, p99, max, mean over the phases) and the algorithm bandwidth: the bytes one
 * phase moves (every QP of the collective's flows sends one message per phase) over its
 * completion time. The figure an AI-training job waits on.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab.h"
#include "metrics.h"
#include "suite.h"
#include "trial.h"
#include "verdict.h"

#define PRINT_PHASES 32           /* rows printed per collective; the report has every one */
#define MAX_PHASES 4096
#define MAX_RECEIVERS 16          /* an engine config's ports */

/* A flow group's message size: fixed, or the distribution's mean (docs/config.md). */
static double message_bytes(const config_setting_t *f)
{
	const config_setting_t *m = config_setting_get_member(f, "message_size");
	const char *dist = "fixed";

	if (!m)
		return 4096; /* the engine's default */
	if (!config_setting_is_group(m))
		return cfg_number(f, "message_size", 0);
	config_setting_lookup_string(m, "dist", &dist);
	if (!strcmp(dist, "fixed"))
		return cfg_number(m, "size", 0);
	if (!strcmp(dist, "uniform"))
		return (cfg_number(m, "min", 0) + cfg_number(m, "max", 0)) / 2;
	return cfg_number(m, "mean", 0);
}

/* Bytes one phase of the collective moves: for each of its flows, count x message size. */
static double phase_bytes(config_t *cfg, const json_t *coll)
{
	const json_t *name;
	double bytes = 0;
	size_t i;

	json_array_foreach(json_object_get(coll, "flows"), i, name) {
		config_setting_t *f = base_flow(cfg, json_string_value(name));
		if (f)
			bytes += cfg_number(f, "count", 1) * message_bytes(f);
	}
	return bytes;
}

struct receiver {
	const config_setting_t *port;
	double bits;                  /* a phase's, with every frame's headers, preamble and gap */
};

/* Adds a flow group's phase to its receiver's share (a local port with the flow's dst_mac). */
static void add_to_receiver(config_t *cfg, const config_setting_t *f, double bits, struct receiver *rx, unsigned *n)
{
	const char *mac = NULL;
	const config_setting_t *port;
	unsigned i;

	config_setting_lookup_string(f, "dst_mac", &mac);
	if (!(port = base_port(cfg, "mac", mac)))
		return;
	for (i = 0; i < *n && rx[i].port != port; i++)
		;
	if (i == *n && *n == MAX_RECEIVERS)
		return;
	if (i == *n)
		rx[(*n)++] = (struct receiver){ .port = port };
	rx[i].bits += bits;
}

/* The shortest a phase can take at what its flows may send: each QP's message, with its frames'
 * headers, at its flow's rate_gbps (unpaced: its port's link), and each receiver's share of the
 * phase at its port's link speed; the longest of those, in us. 0 when a rate or link is unknown
 * (no machine check then). Round trips and the barrier are not in it. */
static double phase_floor_us(config_t *cfg, const json_t *coll)
{
	struct receiver rx[MAX_RECEIVERS];
	unsigned n_rx = 0;
	double floor_us = 0;
	const json_t *name;
	size_t i;

	json_array_foreach(json_object_get(coll, "flows"), i, name) {
		config_setting_t *f = base_flow(cfg, json_string_value(name));
		const char *port_name = NULL;
		double msg, frames, bytes, link, rate;

		if (!f)
			return 0;
		config_setting_lookup_string(f, "port", &port_name);
		msg = message_bytes(f);
		frames = ceil(msg / cfg_number(f, "mtu", 1024));
		bytes = msg + frames * ROCE_FRAME_OVERHEAD; /* frames with their FCS: rate_gbps's unit */
		link = cfg_number(base_port(cfg, "name", port_name), "link_speed_gbps", 0);
		rate = cfg_number(f, "rate_gbps", 0) ?: link * bytes / (bytes + frames * WIRE_GAP_BYTES);
		if (!(rate > 0))
			return 0;
		/* bits / (Gb/s) = ns */
		floor_us = fmax(floor_us, bytes * 8 / rate / 1e3);
		add_to_receiver(cfg, f, cfg_number(f, "count", 1) * (bytes + frames * WIRE_GAP_BYTES) * 8, rx, &n_rx);
	}
	for (unsigned r = 0; r < n_rx; r++) {
		double link = cfg_number(rx[r].port, "link_speed_gbps", 0);

		if (!(link > 0))
			return 0;
		floor_us = fmax(floor_us, rx[r].bits / link / 1e3);
	}
	return floor_us;
}

static json_t *summary(const json_t *times)
{
	double x[MAX_PHASES], mean = 0;
	unsigned n = 0;

	for (size_t i = 0; i < json_array_size(times) && n < MAX_PHASES; i++)
		x[n++] = json_number_value(json_array_get(times, i));
	for (unsigned i = 0; i < n; i++)
		mean += x[i] / n;
	return json_pack("{s:i,s:f,s:f,s:f,s:f,s:f}", "phases", n, "min_us", percentile(x, n, 0), "p50_us",
			 percentile(x, n, 50), "p99_us", percentile(x, n, 99), "max_us", percentile(x, n, 100), "mean_us",
			 mean);
}

static double gbps(double bytes, double us)
{
	return us > 0 ? bytes * 8 / us / 1e3 : 0;
}

/* One collective of one run: its table (stdout) and object (report), its verdict (every phase
 * completed) and its machine check: the median phase's bandwidth (the first includes every QP's
 * start) against what its flows' rates and receivers' links allow. */
static json_t *collective_table(struct runner *rn, config_t *cfg, const json_t *coll, unsigned run,
				const struct metrics *m)
{
	const json_t *done = json_object_get(coll, "phase_completion_us"), *st = json_object_get(coll, "phase_start_us"),
		     *end = json_object_get(coll, "phase_end_us");
	const char *name = json_string_value(json_object_get(coll, "name"));
	size_t n = json_array_size(done);
	json_t *phases = json_array(), *sum = summary(done), *table;
	double total = jnum(coll, "total_us"), bytes = phase_bytes(cfg, coll), floor_us = phase_floor_us(cfg, coll);
	struct machine busy = machine_judge(gbps(bytes, jnum(sum, "p50_us")), n && floor_us ? gbps(bytes, floor_us) : 0, m);

	printf("\ncollective %s (%s), run %u: %llu QPs, %zu of %llu phases completed, %.0f bytes per phase\n"
	       "  phase      start us        end us  completion us  algbw Gb/s\n",
	       name, json_string_value(json_object_get(coll, "type")), run,
	       (unsigned long long)ju64(coll, "qps"), n, (unsigned long long)ju64(coll, "phases"), bytes);
	for (size_t k = 0; k < n; k++) {
		double s = json_number_value(json_array_get(st, k)), e = json_number_value(json_array_get(end, k)),
		       c = json_number_value(json_array_get(done, k));
		if (k < PRINT_PHASES)
			printf("  %5zu  %12.1f  %12.1f  %13.1f  %10.3f\n", k, s, e, c, gbps(bytes, c));
		json_array_append_new(phases, json_pack("{s:i,s:f,s:f,s:f,s:f}", "phase", (int)k, "start_us", s, "end_us", e,
							"completion_us", c, "algbw_gbps", gbps(bytes, c)));
	}
	if (n > PRINT_PHASES)
		printf("  ... %zu more phases in the report\n", n - PRINT_PHASES);
	/* phase k + 1 starts where phase k ends: the mean phase's bandwidth is the whole run's */
	printf("  completion us: min %.1f  p50 %.1f  p99 %.1f  max %.1f  mean %.1f;  total %.1f us;  algbw %.3f Gb/s "
	       "(bytes per phase / mean completion)\n",
	       jnum(sum, "min_us"), jnum(sum, "p50_us"), jnum(sum, "p99_us"), jnum(sum, "max_us"), jnum(sum, "mean_us"),
	       total, gbps(bytes, jnum(sum, "mean_us")));
	table = json_pack("{s:i,s:O,s:O,s:I,s:I,s:I,s:f,s:o,s:o,s:f,s:f,s:f}", "run", run, "name",
			  json_object_get(coll, "name"), "type", json_object_get(coll, "type"), "qps",
			  (json_int_t)ju64(coll, "qps"), "phases", (json_int_t)ju64(coll, "phases"), "phases_completed",
			  (json_int_t)n, "bytes_per_phase", bytes, "per_phase", phases, "summary", sum, "total_us", total,
			  "algbw_gbps", gbps(bytes, jnum(sum, "mean_us")), "phase_floor_us", floor_us);
	machine_record(rn, table, &busy, "run %u, %s's median phase", run, name);
	suite_verdict(rn, n == ju64(coll, "phases"), "phases", "run %u, %s: %zu of %llu phases completed", run, name, n,
		      (unsigned long long)ju64(coll, "phases"));
	return table;
}

int suite_collective(struct runner *rn, const struct suite_cfg *s, json_t *out)
{
	json_t *tables = json_array();
	char err[1024];

	for (unsigned r = 1; r <= s->collective.repeat && !rn->stop; r++) {
		const json_t *coll;
		struct metrics m;
		struct trial t;
		struct lab l;
		size_t i;

		memset(&l, 0, sizeof(l));
		if (base_load(s->base, &l.cfg, err, sizeof(err))) {
			text_printf(rn->stop_reason, sizeof(rn->stop_reason), "%s", err);
			rn->stop = true;
			rn->exit_status = EXIT_CONFIG;
			lab_free(&l);
			break;
		}
		base_merge_switch(&l.cfg, s);
		trial_init(&t, "collective", "run %u of %s", r, s->base);
		/* 0: the config's own duration (the phases usually end the run) */
		t.duration_s = rn->duration_s;
		json_object_set_new(t.params, "run", json_integer(r));
		if (!trial_measure(rn, &l.cfg, &t, NULL, &m)) {
			size_t n = json_array_size(json_object_get(t.report, "collectives"));

			json_array_foreach(json_object_get(t.report, "collectives"), i, coll)
				json_array_append_new(tables, collective_table(rn, &l.cfg, coll, r, &m));
			trial_verdict(rn, &t, n ? "info" : "fail", "%zu collective(s), stopped by %s", n,
				      json_string_value(json_object_get(t.report, "stopped_by")) ?: "?");
			if (!n)
				suite_verdict(rn, false, "phases", "run %u: the engine's report has no collectives", r);
		}
		lab_free(&l);
		trial_release(&t);
	}
	json_object_set_new(out, "collective", json_pack("{s:i,s:o}", "repeat", s->collective.repeat, "collectives", tables));
	return rn->stop ? -1 : 0;
}

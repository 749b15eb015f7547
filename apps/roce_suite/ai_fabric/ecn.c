/* SPDX-License-Identifier: BSD-3-Clause
 *
 * §7.1 ECN marking against the configured RED ramp. For each N of ecn.ratios, N hosts write to
 * the fabric's last host on the marking class (the destination's own leaf's hosts first, one UC
 * QP each, DCQCN by default so that the queue wanders over the ramp rather than sitting at PFC's
 * thresholds), and every switch counts the ECN-capable frames leaving each queue by the depth they
 * leave behind, in bins, with the marked ones and the bin's mean depth (the report's
 * ports[].ecn_depth; RED decides at dequeue on that depth).
 *
 * What the settings imply, and is judged bin by bin (bins with at least min_frames frames, on
 * one piece of the ramp): at or below kmin nothing is marked; above kmax everything is; in
 * between a frame is marked with p = pmax (q - kmin) / (kmax - kmin), linear in q, so a bin's
 * expected share is p at its mean depth and its marked count is binomial: within 4 standard
 * deviations (verdict ecn_follows_the_ramp over every port of every switch). A bin that straddles
 * kmin or kmax is shown, not judged. The real-switch method of the draft, the CE share of the
 * frames received against the offered load, is in each row too (ce_ratio; the offered load is N
 * links' worth into one). On a real switch tier (fabric.external) it is the only one: the rows and
 * the graph are the CE share against the offered load, as the NICs received them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aif_ctx.h"
#include "verdict.h"

#define MAX_SHOWN 32

struct ramp {
	double kmin, kmax, pmax;
};

struct bin_check {
	unsigned judged, failed;
	double worst_z;
	json_t *bins;                   /* the destination port's bins, for the table */
};

/* The ramp of class tc in switch sw's report (red[]), or false. */
static bool ramp_of(const json_t *sw, unsigned tc, struct ramp *r)
{
	const json_t *e;
	size_t i;

	json_array_foreach(json_object_get(sw, "red"), i, e)
		if (json_integer_value(json_object_get(e, "tc")) == (json_int_t)tc) {
			*r = (struct ramp){ json_number_value(json_object_get(e, "kmin_bytes")),
					    json_number_value(json_object_get(e, "kmax_bytes")),
					    json_number_value(json_object_get(e, "pmax")) };
			return true;
		}
	return false;
}

/* The bin [lo, hi] on one piece of the ramp: its expected share at mean depth q (-1: it
 * straddles kmin or kmax). */
static double expected_share(const struct ramp *r, double lo, double hi, double q)
{
	if (hi <= r->kmin)
		return 0;
	if (lo > r->kmax)
		return 1;
	if (lo >= r->kmin && hi <= r->kmax) /* (the ramp is 0 at kmin, as below it) */
		return r->pmax * (q - r->kmin) / (r->kmax - r->kmin);
	return -1;
}

/* One port's bins of class tc: each judged bin's z, the failures; the destination's into c->bins. */
static void check_port(const json_t *e, const struct ramp *r, unsigned min_frames, bool keep, struct bin_check *c)
{
	double w = json_number_value(json_object_get(e, "bin_bytes"));
	const json_t *fr = json_object_get(e, "frames"), *mk = json_object_get(e, "marked");
	const json_t *dp = json_object_get(e, "mean_depth_bytes");
	size_t nb = json_array_size(fr);

	for (size_t k = 0; k < nb; k++) {
		double n = json_number_value(json_array_get(fr, k)), m = json_number_value(json_array_get(mk, k));
		double q = json_number_value(json_array_get(dp, k)), lo = k * w, hi = k + 1 < nb ? (k + 1) * w - 1 : INFINITY;
		double p = expected_share(r, lo, hi, q), z = 0;
		bool judged = n >= min_frames && p >= 0, ok = true;

		if (judged) {
			if (p <= 0 || p >= 1)
				ok = m == n * p;    /* exact: RED draws nothing off the ramp */
			else
				ok = fabs(z = (m - n * p) / sqrt(n * p * (1 - p))) <= 4;
			c->judged++;
			c->failed += !ok;
			c->worst_z = fmax(c->worst_z, fabs(z));
		}
		if (keep && n > 0)
			json_array_append_new(c->bins, json_pack("{s:f,s:f,s:I,s:I,s:f,s:f,s:o,s:f,s:b}", "from_kb", lo / 1024,
								  "to_kb", isinf(hi) ? -1.0 : (hi + 1) / 1024, "frames",
								  (json_int_t)n, "marked", (json_int_t)m, "mean_depth_kb",
								  q / 1024, "measured", m / n, "expected",
								  p >= 0 ? json_real(p) : json_null(), "z", z, "judged", judged));
	}
}

struct ecn_result {
	bool ran, limited;
	double ce_ratio, offered_load;
	struct ramp ramp;
	bool has_ramp;
	struct bin_check c;
	uint64_t marked;
};

static void ecn_trial(struct aif_ctx *x, unsigned n, struct ecn_result *r)
{
	const struct aif_ecn_cfg *ec = &x->c->ecn;
	struct aif_flow f = { .message_size = ec->message_size, .priority = ec->priority, .cc = ec->dcqcn ? "dcqcn" : NULL,
			      .rate_gbps = aif_link_frame_gbps(x->host_gbps, ec->message_size) };
	const char *dst_name = x->fab.hosts[x->fab.n_hosts - 1].name;
	struct flow_set fs = aif_entry_flows("ecn");
	struct aif_trial t;
	struct trial tr;
	struct metrics m;

	memset(r, 0, sizeof(*r));
	r->c.bins = json_array();
	aif_trial_init(&t, x);
	aif_trial_incast(&t, x, "ecn", n, true, &f);
	trial_init(&tr, "ecn", "%u:1 into %s on class %u (%s)", n, dst_name, ec->priority, f.cc ? "DCQCN" : "no cc");
	if (trial_measure(x->rn, &t.cfg, &tr, &fs, &m) == 0) {
		struct aif_fabric_view v;
		const json_t *sw, *p, *e, *fl;
		size_t i, j, k;
		double ce = 0, rx = 0;

		aif_fabric_read(tr.report, &v);
		aif_fabric_to_json(&v, tr.record);
		json_array_foreach(json_object_get(json_object_get(tr.report, "fabric"), "switches"), i, sw) {
			struct ramp rp;
			if (!ramp_of(sw, ec->priority, &rp))
				continue;
			r->ramp = rp;
			r->has_ramp = true;
			json_array_foreach(json_object_get(sw, "ports"), j, p)
				json_array_foreach(json_object_get(p, "ecn_depth"), k, e)
					if (json_integer_value(json_object_get(e, "tc")) == (json_int_t)ec->priority)
						check_port(e, &rp, ec->min_frames,
							   !strcmp(json_string_value(json_object_get(p, "port")) ?: "", dst_name) &&
								   !json_array_size(r->c.bins),
							   &r->c);
		}
		json_array_foreach(json_object_get(tr.report, "flows"), i, fl) {
			ce += json_number_value(json_object_get(fl, "ecn_ce"));
			rx += json_number_value(json_object_get(fl, "rx_packets"));
		}
		r->ce_ratio = rx > 0 ? ce / rx : 0;
		r->offered_load = n;
		r->marked = v.ecn_marked;
		r->limited = v.machine_limited;
		r->ran = true;
		trial_verdict(x->rn, &tr, "info", "%u bins judged, %u off the ramp (worst |z| %.1f); CE on %.1f %% of the "
			      "frames received", r->c.judged, r->c.failed, r->c.worst_z, 100 * r->ce_ratio);
	}
	trial_release(&tr);
	aif_trial_free(&t);
}

/* The configured ramp as a line, and the destination port's measured shares as points. */
static void ramp_graph(struct aif_ctx *x, const struct ecn_result *r, unsigned n, json_t *g, bool ramp_too)
{
	double xs[MAX_SHOWN], ys[MAX_SHOWN];
	unsigned k = 0;
	const json_t *b;
	size_t i;
	char label[32];

	if (ramp_too && r->has_ramp) {
		const double rx[] = { 0, r->ramp.kmin / 1024, r->ramp.kmax / 1024, r->ramp.kmax / 1024, 2 * r->ramp.kmax / 1024 };
		const double ry[] = { 0, 0, r->ramp.pmax, 1, 1 };
		aif_series(g, "configured RED ramp", rx, ry, 5);
	}
	json_array_foreach(r->c.bins, i, b)
		if (k < MAX_SHOWN) {
			xs[k] = json_number_value(json_object_get(b, "mean_depth_kb"));
			ys[k++] = json_number_value(json_object_get(b, "measured"));
		}
	text_printf(label, sizeof(label), "measured, %u:1", n);
	aif_series(g, label, xs, ys, k);
	(void)x;
}

int aif_ecn(struct aif_ctx *x)
{
	const struct aif_ecn_cfg *ec = &x->c->ecn;
	json_t *rows = json_array(), *bins = json_array(), *g, *res;
	double xs[AIF_MAX_LIST], ys[AIF_MAX_LIST];
	unsigned n_ext = 0;
	bool drawn = false;

	printf("\n§7.1 ECN marking on class %u against its RED ramp, by the depth each frame left behind\n"
	       "  %5s  %6s  %7s  %7s  %9s  %8s\n", ec->priority, "ratio", "bins", "failed", "worst z", "CE share", "limited");
	g = x->c->external ? NULL
			   : aif_graph(x, "ecn_marking.png", "lines", "§7.1 ECN marking against the queue depth (destination port)",
				       "queue depth left behind (KB)", "share of frames marked CE");
	for (unsigned k = 0; k < ec->n_ratios && !x->rn->stop; k++) {
		unsigned n = ec->ratios[k];
		struct ecn_result r;
		json_t *row;

		if (n >= x->fab.n_hosts) {
			aif_anomaly(x, AIF_ECN, "%u:1 needs %u hosts; the fabric has %u: not run", n, n + 1, x->fab.n_hosts);
			continue;
		}
		ecn_trial(x, n, &r);
		row = json_pack("{s:i,s:b}", "ratio", (int)n, "ran", r.ran);
		if (r.ran) {
			json_object_set_new(row, "offered_load", json_real(r.offered_load));
			json_object_set_new(row, "ce_ratio", json_real(r.ce_ratio));
			json_object_set_new(row, "ecn_marked", json_integer((json_int_t)r.marked));
			json_object_set_new(row, "bins_judged", json_integer(r.c.judged));
			json_object_set_new(row, "bins_off_the_ramp", json_integer(r.c.failed));
			json_object_set_new(row, "worst_z", json_real(r.c.worst_z));
			if (r.has_ramp)
				json_object_set_new(row, "ramp", json_pack("{s:f,s:f,s:f}", "kmin_kb", r.ramp.kmin / 1024,
									   "kmax_kb", r.ramp.kmax / 1024, "pmax", r.ramp.pmax));
			for (size_t i = 0; i < json_array_size(r.c.bins); i++) { /* the category's bins table */
				json_t *b = json_array_get(r.c.bins, i);
				json_object_set_new(b, "ratio", json_integer(n));
				json_array_append(bins, b);
			}
			printf("  %4u:1  %6u  %7u  %7.1f  %8.1f %%  %8s\n", n, r.c.judged, r.c.failed, r.c.worst_z,
			       100 * r.ce_ratio, r.limited ? "yes" : "no");
			if (g)
				ramp_graph(x, &r, n, g, !drawn);
			drawn = drawn || r.has_ramp;
			if (x->c->external) {
				xs[n_ext] = r.offered_load;
				ys[n_ext++] = r.ce_ratio;
				if (!r.marked)
					aif_anomaly(x, AIF_ECN, "%u:1: no frame arrived CE-marked on class %u (does the switch "
						    "tier mark it?)", n, ec->priority);
			} else if (!r.has_ramp)
				aif_anomaly(x, AIF_ECN, "%u:1: no switch marks ECN on class %u (the switch group's ecn list)", n,
					    ec->priority);
			else if (!r.c.judged)
				aif_anomaly(x, AIF_ECN, "%u:1: no bin of the ramp saw %u frames: nothing to judge", n,
					    ec->min_frames);
			else
				/* RED's draw does not depend on the CPU: judged whatever the machine did */
				suite_verdict(x->rn, r.c.failed == 0, "ecn_follows_the_ramp",
					      "%u:1 on class %u: %u bins of the queue depth judged against kmin %.0f KB, kmax "
					      "%.0f KB, pmax %g; %u off it (worst |z| %.1f, 4 allowed)", n, ec->priority,
					      r.c.judged, r.ramp.kmin / 1024, r.ramp.kmax / 1024, r.ramp.pmax, r.c.failed,
					      r.c.worst_z);
		}
		json_decref(r.c.bins);
		json_array_append_new(rows, row);
	}
	if (x->c->external) /* (a real switch: the draft's CE share against the offered load) */
		aif_series(aif_graph(x, "ecn_marking.png", "lines", "§7.1 CE-marked share of the frames received",
				     "offered load (N links into one)", "share of frames marked CE"),
			   "received CE", xs, ys, n_ext);
	res = json_pack("{s:s,s:i,s:s,s:s,s:o,s:o}", "section", "7.1", "priority", (int)ec->priority, "destination",
			x->fab.hosts[x->fab.n_hosts - 1].name, "cc", ec->dcqcn ? "dcqcn" : "none", "rows", rows,
			"destination_bins", bins);
	json_object_set_new(x->results, "ecn", res);
	return x->rn->stop ? -1 : 0;
}

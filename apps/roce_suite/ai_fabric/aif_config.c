/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The AI-fabric suite's settings (docs/ai-fabric.md): the `ai_fabric` group (the categories to
 * run and each one's parameters), the user's `thresholds` and the `dut` description (§13's
 * first section), checked completely before any trial; the `fabric` group is read with the
 * engine's own parser (config/config_fabric.c), so a fabric the suite accepts is one the engine
 * builds. Errors: one line "FILE:LINE: SETTING: what is wrong (what is allowed)".
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aif.h"
#include "cluster.h"
#include "coll_model.h"
#include "cc_params.h"
#include "config_fabric.h"
#include "dcqcn.h"
#include "suite.h"

const char *const aif_category_names[] = { "throughput", "latency", "burst", "ecn",   "pfc_incast", "convergence",
					   "deadlock",	 "ecmp",    "flowlet", "spray", "collectives", "jct", "interference", "link_failure", "soak", NULL };
const char *const aif_category_sections[] = { "5.1", "5.2", "5.3", "7.1", "7.2", "7.3",
					      "7.4", "8.1", "8.2", "8.3", "9",   "10.1", "10.3", "11.2", "12" };

#define AIF_MAX_MESSAGE (64u << 20)

static void defaults(struct aif_cfg *c)
{
	*c = (struct aif_cfg){
		.repeats = 3,
		.throughput = { .sizes = { 65536 }, .n_sizes = 1, .qps = { 1, 4 }, .n_qps = 2, .uni = true, .bi = true,
				.resolution_pct = 5, .max_trials = 6 },
		.latency = { .message_size = 4096, .repeats = 3, .load = 0.9, .idle_gbps = 0.05, .priority = 3 },
		.burst = { .ratios = { 2, 4, 8, 16, 32 }, .n_ratios = 5, .max_frames = 1000, .max_trials = 8, .repeats = 1,
			   .message_size = 1024, .priority = 0 },
		.ecn = { .ratios = { 2, 4, 8 }, .n_ratios = 3, .dcqcn = true, .message_size = 65536, .priority = 3, .min_frames = 50 },
		.pfc_incast = { .ratios = { 2, 4, 8, 16, 32 }, .n_ratios = 5, .message_size = 65536, .priority = 3 },
		.conv = { .flows = { 4, 16 }, .n_flows = 2, .join_s = 0.1, .settle_s = 0.4, .window_ms = 5, .tolerance = 0.1,
			  .hold_ms = 20, .runs = 10, .message_size = 65536, .priority = 3, .ccsim = true, .ccsim_seeds = 20,
			  .ccsim_tolerance = 0.2 },
		.deadlock = { .patterns = { false }, .n_patterns = 1, .shift = 1, .load = 0.9, .deadlock_ms = 10,
			      .message_size = 65536, .priority = 3,
			      .storm = { .start_s = 0.2, .duration_s = 0.5, .tail_s = 0.2 } },
		.lb = { .qps = { 1, 4, 8 }, .n_qps = 3, .bth_aware = true, .gaps_us = { 10, 50, 200 }, .n_gaps = 3,
			.flowlet_qps = 4, .message_size = 65536 },
		.coll = { .ops = { KPI_ALLREDUCE, KPI_ALLGATHER, KPI_ALLTOALL }, .n_ops = 3, .message_size = 1u << 20,
			  .iterations = 10 },
		.jct = { .compute_ms = { 10, 50, 100, 500 }, .n_compute = 4, .message_sizes = { 1u << 20 }, .n_sizes = 1,
			 .iterations = 10 },
		.interference = { .overlaps = { 0, 0.25, 0.5, 0.75 }, .n_overlaps = 4, .message_size = 1u << 20,
				  .iterations = 10 },
		.link_failure = { .failures = { AIF_FAIL_LEAF_UPLINK, AIF_FAIL_SPINE }, .n_failures = 2,
				  .message_size = 1u << 20, .iterations = 20 },
		.soak = { .duration_s = 600, .interval_s = 10, .message_size = 1u << 20, .leak_mb_per_h = 1, .tolerance = 0.2 },
		.th = { NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN },
	};
	for (unsigned k = 0; k < AIF_CATEGORIES; k++)
		c->run[k] = true;
}

/* categories = ["throughput", ...]: only these, in the suite's own order. */
static int load_categories(struct config_reader *r, const config_setting_t *g, struct aif_cfg *c)
{
	const config_setting_t *a;
	int n = suite_opt_array(r, g, "categories", 1, AIF_CATEGORIES, &a);

	if (n <= 0)
		return n;
	for (unsigned k = 0; k < AIF_CATEGORIES; k++)
		c->run[k] = false;
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(a, (unsigned)i);
		int k = cr_pick(r, e, aif_category_names, NULL);
		if (k < 0)
			return -1;
		if (c->run[k])
			return cr_fail(r, e, "'%s' is listed twice", aif_category_names[k]);
		c->run[k] = true;
	}
	return 0;
}

/* directions = ["uni", "bi"] */
static int load_directions(struct config_reader *r, const config_setting_t *g, struct aif_throughput_cfg *t)
{
	static const char *const names[] = { "uni", "bi", NULL };
	const config_setting_t *a;
	int n = suite_opt_array(r, g, "directions", 1, 2, &a);

	if (n <= 0)
		return n;
	t->uni = t->bi = false;
	for (int i = 0; i < n; i++) {
		int d = cr_pick(r, config_setting_get_elem(a, (unsigned)i), names, NULL);
		if (d < 0)
			return -1;
		*(d ? &t->bi : &t->uni) = true;
	}
	return 0;
}

static int load_throughput(struct config_reader *r, const config_setting_t *g, struct aif_throughput_cfg *t)
{
	static const char *const keys[] = { "message_sizes", "qps_per_pair", "directions", "loss_threshold_pct",
					    "resolution_pct", "max_trials", "priority", NULL };

	return !g ? 0
		  : cr_known_keys(r, g, keys) ||
				    suite_opt_uint_list(r, g, "message_sizes", 64, AIF_MAX_MESSAGE, AIF_MAX_LIST, t->sizes,
							&t->n_sizes) < 0 ||
				    suite_opt_uint_list(r, g, "qps_per_pair", 1, 256, AIF_MAX_LIST, t->qps, &t->n_qps) < 0 ||
				    load_directions(r, g, t) < 0 ||
				    cr_opt_float(r, g, "loss_threshold_pct", 0, false, 100, &t->loss_threshold_pct) < 0 ||
				    cr_opt_float(r, g, "resolution_pct", 0, true, 50, &t->resolution_pct) < 0 ||
				    cr_opt_u32(r, g, "max_trials", 1, 64, &t->max_trials) < 0 ||
				    cr_opt_u32(r, g, "priority", 0, 7, &t->priority) < 0
			  ? -1
			  : 0;
}

static int load_latency(struct config_reader *r, const config_setting_t *g, struct aif_latency_cfg *l)
{
	static const char *const keys[] = { "message_size", "repeats", "load", "idle_gbps", "priority", NULL };

	return !g ? 0
		  : cr_known_keys(r, g, keys) || cr_opt_u32(r, g, "message_size", 64, AIF_MAX_MESSAGE, &l->message_size) < 0 ||
				    cr_opt_u32(r, g, "repeats", 1, 1000, &l->repeats) < 0 ||
				    cr_opt_float(r, g, "load", 0, true, 1, &l->load) < 0 ||
				    cr_opt_float(r, g, "idle_gbps", 0, true, 1600, &l->idle_gbps) < 0 ||
				    cr_opt_u32(r, g, "priority", 0, 7, &l->priority) < 0
			  ? -1
			  : 0;
}

static int load_burst(struct config_reader *r, const config_setting_t *g, struct aif_burst_cfg *b)
{
	static const char *const keys[] = { "ratios", "max_frames", "max_trials", "repeats", "message_size", "priority",
					    NULL };

	return !g ? 0
		  : cr_known_keys(r, g, keys) ||
				    suite_opt_uint_list(r, g, "ratios", 1, 1023, AIF_MAX_LIST, b->ratios, &b->n_ratios) < 0 ||
				    cr_opt_u32(r, g, "max_frames", 1, 1000000, &b->max_frames) < 0 ||
				    cr_opt_u32(r, g, "max_trials", 1, 64, &b->max_trials) < 0 ||
				    cr_opt_u32(r, g, "repeats", 1, 1000, &b->repeats) < 0 ||
				    cr_opt_u32(r, g, "message_size", 64, AIF_IB_MTU, &b->message_size) < 0 ||
				    cr_opt_u32(r, g, "priority", 0, 7, &b->priority) < 0
			  ? -1
			  : 0;
}

static int load_ecn(struct config_reader *r, const config_setting_t *g, struct aif_ecn_cfg *e)
{
	static const char *const keys[] = { "ratios", "cc", "message_size", "priority", "min_frames", NULL };
	static const char *const ccs[] = { "none", "dcqcn", NULL };
	const config_setting_t *cc;
	int k;

	if (!g)
		return 0;
	if (cr_known_keys(r, g, keys) || suite_opt_uint_list(r, g, "ratios", 1, 1023, AIF_MAX_LIST, e->ratios, &e->n_ratios) < 0 ||
	    cr_opt_u32(r, g, "message_size", 64, AIF_MAX_MESSAGE, &e->message_size) < 0 ||
	    cr_opt_u32(r, g, "priority", 0, 7, &e->priority) < 0 || cr_opt_u32(r, g, "min_frames", 1, 1u << 30, &e->min_frames) < 0)
		return -1;
	if ((cc = config_setting_get_member(g, "cc"))) {
		if ((k = cr_pick(r, cc, ccs, NULL)) < 0)
			return -1;
		e->dcqcn = k == 1;
	}
	return 0;
}

static int load_pfc_incast(struct config_reader *r, const config_setting_t *g, struct aif_pfc_incast_cfg *p)
{
	static const char *const keys[] = { "ratios", "message_size", "priority", NULL };

	return !g ? 0
		  : cr_known_keys(r, g, keys) ||
				    suite_opt_uint_list(r, g, "ratios", 1, 1023, AIF_MAX_LIST, p->ratios, &p->n_ratios) < 0 ||
				    cr_opt_u32(r, g, "message_size", 64, AIF_MAX_MESSAGE, &p->message_size) < 0 ||
				    cr_opt_u32(r, g, "priority", 0, 7, &p->priority) < 0
			  ? -1
			  : 0;
}

/* One DCQCN parameter set: { profile = "nvidia" | "paper"; <parameter> = value; ... }, the names
 * and ranges of docs/cc.md (cc/cc_params.h's table, as the engine and roce-ccsim read them), the
 * whole set checked as the engine checks it; kept as written for the trials' flows. */
static int load_dcqcn_set(struct config_reader *r, const config_setting_t *g)
{
	const config_setting_t *p = config_setting_get_member(g, "profile");
	struct dcqcn_params d;
	const char *bad, *why = NULL;
	int profile = DCQCN_NVIDIA;

	if (cr_want_type(r, g, CONFIG_TYPE_GROUP, "a group { profile = ...; <parameter> = value; ... } (docs/cc.md)"))
		return -1;
	if (p && (profile = cr_pick(r, p, cc_dcqcn_profile_names, NULL)) < 0)
		return -1;
	dcqcn_params_default(&d, (enum dcqcn_profile)profile);
	for (int i = 0; i < config_setting_length(g); i++) {
		const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
		const struct cc_param *c = cc_param_find(cc_dcqcn_params, config_setting_name(m));
		int type = config_setting_type(m);
		double v;

		if (m == p)
			continue;
		if (!c || (c->profile >= 0 && c->profile != profile))
			return cr_fail(r, m, "not a parameter of DCQCN's %s profile (docs/cc.md)", cc_dcqcn_profile_names[profile]);
		if (type != CONFIG_TYPE_INT && type != CONFIG_TYPE_INT64 && type != CONFIG_TYPE_FLOAT && type != CONFIG_TYPE_BOOL)
			return cr_fail(r, m, "must be a number (or true / false)");
		v = type == CONFIG_TYPE_BOOL ? config_setting_get_bool(m) : type == CONFIG_TYPE_FLOAT ? config_setting_get_float(m)
											      : (double)config_setting_get_int64(m);
		if (!(v >= c->lo && v <= c->hi) || (c->type != CC_PARAM_DOUBLE && v != floor(v)))
			return cr_fail(r, m, "%g is out of range (%g..%g)", v, c->lo, c->hi);
		cc_param_store(c, &d, v);
	}
	if ((bad = dcqcn_params_check(&d, &why)))
		return cr_fail(r, g, "%s: %s", bad, why ? why : "out of range");
	return 0;
}

static int load_convergence(struct config_reader *r, const config_setting_t *g, struct aif_convergence_cfg *c)
{
	static const char *const keys[] = { "flows", "join_s", "settle_s", "window_ms", "tolerance", "hold_ms", "runs",
					    "message_size", "priority", "dcqcn", "ccsim", "ccsim_seeds", "ccsim_tolerance", NULL };
	const config_setting_t *sets;

	if (!g)
		return 0;
	if (cr_known_keys(r, g, keys) || suite_opt_uint_list(r, g, "flows", 1, 511, AIF_MAX_LIST, c->flows, &c->n_flows) < 0 ||
	    cr_opt_float(r, g, "join_s", 0, true, 3600, &c->join_s) < 0 ||
	    cr_opt_float(r, g, "settle_s", 0, true, 3600, &c->settle_s) < 0 ||
	    cr_opt_float(r, g, "window_ms", 0.1, false, 1e5, &c->window_ms) < 0 ||
	    cr_opt_float(r, g, "tolerance", 0, true, 1, &c->tolerance) < 0 ||
	    cr_opt_float(r, g, "hold_ms", 0, false, 1e6, &c->hold_ms) < 0 || cr_opt_u32(r, g, "runs", 1, 100, &c->runs) < 0 ||
	    cr_opt_u32(r, g, "message_size", 64, AIF_MAX_MESSAGE, &c->message_size) < 0 ||
	    cr_opt_u32(r, g, "priority", 0, 7, &c->priority) < 0 || cr_opt_bool(r, g, "ccsim", &c->ccsim) < 0 ||
	    cr_opt_u32(r, g, "ccsim_seeds", 1, 100, &c->ccsim_seeds) < 0 ||
	    cr_opt_float(r, g, "ccsim_tolerance", 0, true, 10, &c->ccsim_tolerance) < 0)
		return -1;
	if (c->window_ms * 1e-3 >= c->settle_s)
		return cr_fail_member(r, g, "window_ms", "%g ms is not shorter than settle_s %g s", c->window_ms, c->settle_s);
	if (c->hold_ms * 1e-3 >= c->settle_s)
		return cr_fail_member(r, g, "hold_ms", "%g ms is not shorter than settle_s %g s", c->hold_ms, c->settle_s);
	if (!(sets = config_setting_get_member(g, "dcqcn")))
		return 0;
	if (!config_setting_is_list(sets) || config_setting_length(sets) < 1 || config_setting_length(sets) > AIF_MAX_LIST)
		return cr_fail(r, sets, "must be a list of 1..%d parameter sets ( { profile = ...; ... }, ... )", AIF_MAX_LIST);
	for (int i = 0; i < config_setting_length(sets); i++) {
		c->dcqcn[i] = config_setting_get_elem(sets, (unsigned)i);
		if (load_dcqcn_set(r, c->dcqcn[i]))
			return -1;
	}
	c->n_dcqcn = (unsigned)config_setting_length(sets);
	return 0;
}

/* storm = { start_s; duration_s; rate_pps; }: §7.4's PFC storm trial (storm.c). */
static int load_storm(struct config_reader *r, const config_setting_t *g, struct aif_storm_cfg *s)
{
	static const char *const keys[] = { "start_s", "duration_s", "rate_pps", NULL };
	const config_setting_t *st;
	int rc = cr_opt_group(r, g, "storm", &st);

	if (rc <= 0)
		return rc;
	s->on = true;
	return cr_known_keys(r, st, keys) || cr_opt_float(r, st, "start_s", 0, true, 60, &s->start_s) < 0 ||
			       cr_opt_float(r, st, "duration_s", 0, true, 3600, &s->duration_s) < 0 ||
			       cr_opt_float(r, st, "rate_pps", 0, true, 1e6, &s->rate_pps) < 0
		       ? -1
		       : 0;
}

static int load_deadlock(struct config_reader *r, const config_setting_t *g, struct aif_deadlock_cfg *d)
{
	static const char *const keys[] = { "patterns", "shift", "load", "duration_s", "deadlock_ms", "message_size",
					    "priority", "storm", NULL };
	static const char *const names[] = { "all_to_all", "shift", NULL };
	const config_setting_t *a;
	int n;

	if (!g)
		return 0;
	if (cr_known_keys(r, g, keys) || cr_opt_u32(r, g, "shift", 1, 1u << 20, &d->shift) < 0 ||
	    cr_opt_float(r, g, "load", 0, true, 1, &d->load) < 0 || cr_opt_float(r, g, "duration_s", 0, true, 86400, &d->duration_s) < 0 ||
	    cr_opt_float(r, g, "deadlock_ms", 0, true, 60000, &d->deadlock_ms) < 0 ||
	    cr_opt_u32(r, g, "message_size", 64, AIF_MAX_MESSAGE, &d->message_size) < 0 ||
	    cr_opt_u32(r, g, "priority", 0, 7, &d->priority) < 0 || load_storm(r, g, &d->storm) < 0 ||
	    (n = suite_opt_array(r, g, "patterns", 1, 2, &a)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		int k = cr_pick(r, config_setting_get_elem(a, (unsigned)i), names, NULL);
		if (k < 0)
			return -1;
		if (i == 1 && d->patterns[0] == (k == 1))
			return cr_fail(r, config_setting_get_elem(a, 1), "'%s' is listed twice", names[k]);
		d->patterns[i] = k == 1;
	}
	if (n)
		d->n_patterns = (unsigned)n;
	return 0;
}

static int opt_text(struct config_reader *r, const config_setting_t *g, const char *key, const char *what, char *out,
		    size_t len);

int aif_balance_command(const char *template, const char *mode, double gap_us, char *out, size_t len)
{
	static const char *const names[] = { "mode", "gap_us" };
	char gap[32];
	const char *const values[] = { mode, gap };

	snprintf(gap, sizeof(gap), "%.10g", gap_us);
	return cfab_fill(template, names, values, 2, out, len);
}

/* balance_command: its longest filling must fit the 255 characters a command may have. */
static int load_balance_command(struct config_reader *r, const config_setting_t *g, struct aif_lb_cfg *b)
{
	char filled[sizeof(b->balance_command)];
	int rc = opt_text(r, g, "balance_command", "a shell command with {mode} and {gap_us}", b->balance_command,
			  sizeof(b->balance_command));

	if (rc <= 0)
		return rc;
	/* (the longest mode, and a gap as long as %.10g prints one of 0.1..1e6 us) */
	if (aif_balance_command(b->balance_command, "restore", 0.1234567891, filled, sizeof(filled)))
		return cr_fail_member(r, g, "balance_command", "is longer than %zu characters once {mode} and {gap_us} are "
				      "filled in", sizeof(filled) - 1);
	return 0;
}

/* ecmp = { qps_per_pair; bth_aware; message_size; }, flowlet = { gaps_us; qps_per_pair; },
 * spray = { qps_per_pair; }: one struct, the groups' own keys; and balance_command. */
static int load_lb(struct config_reader *r, const config_setting_t *root, struct aif_lb_cfg *b)
{
	static const char *const ecmp_keys[] = { "qps_per_pair", "bth_aware", "message_size", "udp_sport", NULL };
	static const char *const flowlet_keys[] = { "gaps_us", "qps_per_pair", NULL };
	static const char *const spray_keys[] = { "qps_per_pair", NULL };
	const config_setting_t *e, *f, *s;

	if (cr_opt_group(r, root, "ecmp", &e) < 0 || cr_opt_group(r, root, "flowlet", &f) < 0 ||
	    cr_opt_group(r, root, "spray", &s) < 0 || load_balance_command(r, root, b) < 0)
		return -1;
	if (e && (cr_known_keys(r, e, ecmp_keys) ||
		  suite_opt_uint_list(r, e, "qps_per_pair", 1, 256, AIF_MAX_LIST, b->qps, &b->n_qps) < 0 ||
		  cr_opt_bool(r, e, "bth_aware", &b->bth_aware) < 0 ||
		  cr_opt_u32(r, e, "message_size", 64, AIF_MAX_MESSAGE, &b->message_size) < 0 ||
		  cr_opt_u32(r, e, "udp_sport", 1, 65535, &b->udp_sport) < 0))
		return -1;
	if (f && (cr_known_keys(r, f, flowlet_keys) ||
		  suite_opt_float_list(r, f, "gaps_us", 0.1, false, 1e6, AIF_MAX_LIST, b->gaps_us, &b->n_gaps) < 0 ||
		  cr_opt_u32(r, f, "qps_per_pair", 1, 256, &b->flowlet_qps) < 0))
		return -1;
	if (f && !b->n_gaps)
		return cr_fail_member(r, f, "gaps_us", "is empty (at least one gap timer in us)");
	if (s) {
		unsigned q = b->flowlet_qps;
		if (cr_known_keys(r, s, spray_keys) || cr_opt_u32(r, s, "qps_per_pair", 1, 256, &q) < 0)
			return -1;
		if (f && config_setting_get_member(f, "qps_per_pair") && config_setting_get_member(s, "qps_per_pair") &&
		    q != b->flowlet_qps)
			return cr_fail_member(r, s, "qps_per_pair", "%u is not flowlet's %u (the JFI chart compares the "
					      "balancings on one load)", q, b->flowlet_qps);
		b->flowlet_qps = q;
	}
	return 0;
}

/* A string member of 1..len-1 characters into out: 1 copied, 0 absent, -1 after an error. */
static int opt_text(struct config_reader *r, const config_setting_t *g, const char *key, const char *what, char *out,
		    size_t len)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	const char *v;

	if (!s)
		return 0;
	if (cr_want_type(r, s, CONFIG_TYPE_STRING, what))
		return -1;
	v = config_setting_get_string(s);
	if (!v[0] || strlen(v) >= len)
		return cr_fail(r, s, "must be 1..%zu characters (%s)", len - 1, what);
	snprintf(out, len, "%s", v);
	return 1;
}

/* The ranks' slowest link: the lab's, or the least of the port rules' (100 Gb/s when unsaid). */
static double cluster_link_gbps(const struct cluster_cfg *cc)
{
	double g = cc->lab.present ? cc->lab.link_gbps : INFINITY;

	for (unsigned i = 0; !cc->lab.present && i < cc->n_ports; i++)
		g = fmin(g, cc->ports[i].link_gbps > 0 ? cc->ports[i].link_gbps : 100);
	return isinf(g) ? 100 : g;
}

/* A collective test of the suite's roce-cluster job against roce-cluster's own rule for N ranks
 * (cluster_test_fits): a job --check accepts is one that starts. */
static int cluster_fits(struct config_reader *r, const config_setting_t *g, const struct aif_cluster_cfg *k,
			enum kpi_collective op, unsigned bytes, unsigned iterations, const char *what)
{
	struct cl_test t = { .type = CL_TEST_COLLECTIVE, .op = coll_op_of_kpi(op), .iterations = iterations, .message_size = bytes,
			     .qps_per_pair = k->qps_per_pair, .transport = CL_TRANSPORT_RC };
	char why[300];

	cluster_test_fits(&t, k->ranks, why, sizeof(why));
	return why[0] ? cr_fail(r, g, "%s across the cluster's %u ranks: %s (roce-cluster's limit)", what, k->ranks, why) : 0;
}

/* Every collective the job will run, fitted to its ranks; jct's N is the cluster's. */
static int cluster_jobs_fit(struct config_reader *r, const config_setting_t *g, const struct aif_cfg *c)
{
	const struct aif_cluster_cfg *k = &c->cluster;

	for (unsigned i = 0; k->across[AIF_COLLECTIVES] && i < c->coll.n_ops; i++)
		if (cluster_fits(r, g, k, c->coll.ops[i], c->coll.message_size, c->coll.iterations,
				 kpi_collective_names[c->coll.ops[i]]))
			return -1;
	for (unsigned i = 0; k->across[AIF_JCT] && i < c->jct.n_sizes; i++)
		if (cluster_fits(r, g, k, KPI_ALLREDUCE, c->jct.message_sizes[i], c->jct.iterations, "jct's allreduce"))
			return -1;
	return 0;
}

/* cluster.categories = ["collectives", "jct"]: those that go across (default: both). */
static int load_across(struct config_reader *r, const config_setting_t *g, struct aif_cluster_cfg *k)
{
	static const char *const names[] = { "collectives", "jct", NULL };
	static const enum aif_category cats[] = { AIF_COLLECTIVES, AIF_JCT };
	const config_setting_t *a;
	int n = suite_opt_array(r, g, "categories", 1, 2, &a);

	k->across[AIF_COLLECTIVES] = k->across[AIF_JCT] = n == 0;
	for (int i = 0; i < n; i++) {
		int j = cr_pick(r, config_setting_get_elem(a, (unsigned)i), names, NULL);
		if (j < 0)
			return -1;
		k->across[cats[j]] = true;
	}
	return n < 0 ? -1 : 0;
}

/* cluster = { file; ranks; launcher; qps_per_pair; categories; }: collectives and JCT through
 * roce-cluster. The file is read with roce-cluster's own loader (its errors are its lines). */
static int load_cluster(struct config_reader *r, const config_setting_t *ai, struct aif_cfg *c)
{
	static const char *const keys[] = { "file", "ranks", "launcher", "qps_per_pair", "categories", NULL };
	struct aif_cluster_cfg *k = &c->cluster;
	const config_setting_t *g, *f;
	struct cluster_cfg cc;
	char name[PATH_MAX], err[1024];
	const char *slash = strrchr(r->file, '/');
	int rc = ai ? cr_opt_group(r, ai, "cluster", &g) : 0;

	if (rc <= 0)
		return rc;
	k->ranks = 4;
	k->qps_per_pair = 2;
	snprintf(k->launcher, sizeof(k->launcher), "mpirun --oversubscribe -np {ranks}");
	if (cr_known_keys(r, g, keys) || !(f = cr_required(r, g, "file", "roce-cluster's file: its lab or ports")) ||
	    opt_text(r, g, "file", "a file's path", name, sizeof(name)) < 0 ||
	    opt_text(r, g, "launcher", "the command that starts the ranks", k->launcher, sizeof(k->launcher)) < 0 ||
	    cr_opt_u32(r, g, "ranks", 2, CL_MAX_RANKS, &k->ranks) < 0 ||
	    cr_opt_u32(r, g, "qps_per_pair", 1, CL_QPS_PER_PAIR_MAX, &k->qps_per_pair) < 0 || load_across(r, g, k))
		return -1;
	if (name[0] == '/' || !slash)
		text_printf(k->file, sizeof(k->file), "%s", name);
	else
		text_printf(k->file, sizeof(k->file), "%.*s/%s", (int)(slash - r->file), r->file, name);
	if (cluster_config_load(k->file, &cc, err, sizeof(err))) {
		cluster_config_free(&cc); /* (its text was set up before the error) */
		return cr_fail(r, f, "%s", err);
	}
	k->lab = cc.lab.present;
	k->link_gbps = cluster_link_gbps(&cc);
	k->step_timeout_s = cc.step_timeout_s;
	cluster_config_free(&cc);
	if (k->lab && k->ranks > CL_LAB_MAX_RANKS)
		return cr_fail_member(r, g, "ranks", "%u: the file's local lab takes %d ranks at most", k->ranks,
				      CL_LAB_MAX_RANKS);
	if (k->across[AIF_JCT] && c->jct.n_ranks)
		return cr_fail(r, config_setting_get_member(config_setting_get_member(ai, "jct"), "ranks"),
			       "not with the cluster's jct (its N is cluster.ranks)");
	for (unsigned j = 0; j < AIF_CATEGORIES; j++)
		k->across[j] = k->across[j] && c->run[j];
	return cluster_jobs_fit(r, g, c);
}

static int load_collectives(struct config_reader *r, const config_setting_t *g, struct aif_collectives_cfg *c)
{
	static const char *const keys[] = { "ops", "message_size", "iterations", "ranks", NULL };
	const config_setting_t *a;
	int n;

	if (!g)
		return 0;
	if (cr_known_keys(r, g, keys) || cr_opt_u32(r, g, "message_size", 1024, AIF_MAX_MESSAGE, &c->message_size) < 0 ||
	    cr_opt_u32(r, g, "iterations", 1, 1000, &c->iterations) < 0 || cr_opt_u32(r, g, "ranks", 2, 16, &c->ranks) < 0 ||
	    (n = suite_opt_array(r, g, "ops", 1, 3, &a)) < 0)
		return -1;
	if (n) {
		static const char *const ops[] = { "allreduce", "allgather", "alltoall", NULL };
		static const enum kpi_collective kinds[] = { KPI_ALLREDUCE, KPI_ALLGATHER, KPI_ALLTOALL };
		c->n_ops = 0;
		for (int i = 0; i < n; i++) {
			int k = cr_pick(r, config_setting_get_elem(a, (unsigned)i), ops, NULL);
			if (k < 0)
				return -1;
			for (unsigned j = 0; j < c->n_ops; j++)
				if (c->ops[j] == kinds[k])
					return cr_fail(r, config_setting_get_elem(a, (unsigned)i), "'%s' is listed twice", ops[k]);
			c->ops[c->n_ops++] = kinds[k];
		}
	}
	return 0;
}

static int load_jct(struct config_reader *r, const config_setting_t *g, struct aif_jct_cfg *j)
{
	static const char *const keys[] = { "compute_ms", "message_sizes", "iterations", "ranks", NULL };

	return !g ? 0
		  : cr_known_keys(r, g, keys) ||
				    suite_opt_float_list(r, g, "compute_ms", 0, false, 1e6, AIF_MAX_LIST, j->compute_ms, &j->n_compute) < 0 ||
				    suite_opt_uint_list(r, g, "message_sizes", 1024, AIF_MAX_MESSAGE, AIF_MAX_LIST, j->message_sizes,
							&j->n_sizes) < 0 ||
				    cr_opt_u32(r, g, "iterations", 1, 1000, &j->iterations) < 0 ||
				    suite_opt_uint_list(r, g, "ranks", 2, 16, AIF_MAX_LIST, j->ranks, &j->n_ranks) < 0
			  ? -1
			  : 0;
}

static int load_interference(struct config_reader *r, const config_setting_t *g, struct aif_interference_cfg *c)
{
	static const char *const keys[] = { "overlaps", "message_size", "iterations", "ranks", NULL };

	return !g ? 0
		  : cr_known_keys(r, g, keys) ||
				    suite_opt_float_list(r, g, "overlaps", 0, false, 1, AIF_MAX_LIST, c->overlaps, &c->n_overlaps) < 0 ||
				    cr_opt_u32(r, g, "message_size", 1024, AIF_MAX_MESSAGE, &c->message_size) < 0 ||
				    cr_opt_u32(r, g, "iterations", 1, 1000, &c->iterations) < 0 ||
				    cr_opt_u32(r, g, "ranks", 2, 8, &c->ranks) < 0
			  ? -1
			  : 0;
}

static int load_link_failure(struct config_reader *r, const config_setting_t *g, struct aif_link_failure_cfg *c)
{
	static const char *const keys[] = { "failures", "message_size", "iterations", "fail_iteration", "ranks",
					    "convergence_ms", NULL };
	static const char *const kinds[] = { "leaf_uplink", "spine", NULL };
	const config_setting_t *a;
	int n;

	if (!g)
		return 0;
	if (cr_known_keys(r, g, keys) || cr_opt_u32(r, g, "message_size", 1024, AIF_MAX_MESSAGE, &c->message_size) < 0 ||
	    cr_opt_u32(r, g, "iterations", 2, 1000, &c->iterations) < 0 ||
	    cr_opt_u32(r, g, "ranks", 2, 16, &c->ranks) < 0 ||
	    cr_opt_float(r, g, "convergence_ms", 0, true, 60000, &c->convergence_ms) < 0 ||
	    cr_opt_u32(r, g, "fail_iteration", 1, c->iterations - 1, &c->fail_iteration) < 0 ||
	    (n = suite_opt_array(r, g, "failures", 1, 2, &a)) < 0)
		return -1;
	if (n)
		c->n_failures = 0;
	for (int i = 0; i < n; i++) {
		int k = cr_pick(r, config_setting_get_elem(a, (unsigned)i), kinds, NULL);
		if (k < 0)
			return -1;
		for (unsigned j = 0; j < c->n_failures; j++)
			if (c->failures[j] == (enum aif_fail_kind)k)
				return cr_fail(r, config_setting_get_elem(a, (unsigned)i), "'%s' is listed twice", kinds[k]);
		c->failures[c->n_failures++] = (enum aif_fail_kind)k;
	}
	return 0;
}

static int load_soak(struct config_reader *r, const config_setting_t *g, struct aif_soak_cfg *c)
{
	static const char *const keys[] = { "duration_s", "interval_s", "message_size", "ranks", "leak_mb_per_h", "tolerance",
					    NULL };

	if (!g)
		return 0;
	if (cr_known_keys(r, g, keys) || cr_opt_float(r, g, "duration_s", 1, false, 30 * 86400.0, &c->duration_s) < 0 ||
	    cr_opt_float(r, g, "interval_s", 0.1, false, 3600, &c->interval_s) < 0 ||
	    cr_opt_u32(r, g, "message_size", 1024, AIF_MAX_MESSAGE, &c->message_size) < 0 ||
	    cr_opt_u32(r, g, "ranks", 2, 16, &c->ranks) < 0 ||
	    cr_opt_float(r, g, "leak_mb_per_h", 0, true, 1e6, &c->leak_mb_per_h) < 0 ||
	    cr_opt_float(r, g, "tolerance", 0, true, 1, &c->tolerance) < 0)
		return -1;
	/* two turns at least, and every sample a whole one */
	if (c->duration_s < 2 * c->interval_s)
		return cr_fail_member(r, g, "interval_s", "%g leaves fewer than two turns in duration_s %g", c->interval_s,
				      c->duration_s);
	return 0;
}

static int load_thresholds(struct config_reader *r, const config_setting_t *root, struct aif_thresholds *t)
{
	static const char *const keys[] = { "min_throughput_efficiency", "max_latency_p99_us", "max_latency_factor",
					    "min_busbw_gbps", "min_busbw_efficiency", "max_mmr", "min_jfi", "max_drop_ppm", "max_deadlock_ms", "max_jct_ratio",
					    "max_interference_factor", "max_failure_extra_ms", "max_storm_paused_ms",
					    NULL };
	const config_setting_t *g;
	int rc = cr_opt_group(r, root, "thresholds", &g);

	if (rc <= 0)
		return rc;
	return cr_known_keys(r, g, keys) ||
			       cr_opt_float(r, g, "min_throughput_efficiency", 0, false, 1, &t->min_throughput_efficiency) < 0 ||
			       cr_opt_float(r, g, "max_latency_p99_us", 0, true, 1e9, &t->max_latency_p99_us) < 0 ||
			       cr_opt_float(r, g, "max_latency_factor", 1, false, 1e6, &t->max_latency_factor) < 0 ||
			       cr_opt_float(r, g, "min_busbw_gbps", 0, false, 1e6, &t->min_busbw_gbps) < 0 ||
			       cr_opt_float(r, g, "min_busbw_efficiency", 0, false, 1, &t->min_busbw_efficiency) < 0 ||
			       cr_opt_float(r, g, "max_mmr", 1, false, 1e6, &t->max_mmr) < 0 ||
			       cr_opt_float(r, g, "min_jfi", 0, false, 1, &t->min_jfi) < 0 ||
			       cr_opt_float(r, g, "max_drop_ppm", 0, false, 1e6, &t->max_drop_ppm) < 0 ||
			       cr_opt_float(r, g, "max_deadlock_ms", 0, false, 1e9, &t->max_deadlock_ms) < 0 ||
			       cr_opt_float(r, g, "max_jct_ratio", 1, false, 1e6, &t->max_jct_ratio) < 0 ||
			       cr_opt_float(r, g, "max_interference_factor", 1, false, 1e6, &t->max_interference_factor) < 0 ||
			       cr_opt_float(r, g, "max_failure_extra_ms", 0, false, 1e9, &t->max_failure_extra_ms) < 0 ||
			       cr_opt_float(r, g, "max_storm_paused_ms", 0, false, 1e9, &t->max_storm_paused_ms) < 0
		       ? -1
		       : 0;
}

/* dut = { name = "..."; asic = "..."; ... }: §13's device description, strings as written. */
static int load_dut(struct config_reader *r, const config_setting_t *root)
{
	static const char *const keys[] = { "name", "asic", "nos", "port_speed", "buffer", "optics", "nic", "host", "notes",
					    NULL };
	const config_setting_t *g;
	int rc = cr_opt_group(r, root, "dut", &g);

	if (rc <= 0)
		return rc;
	if (cr_known_keys(r, g, keys))
		return -1;
	for (int i = 0; i < config_setting_length(g); i++)
		if (cr_want_type(r, config_setting_get_elem(g, (unsigned)i), CONFIG_TYPE_STRING, "a string"))
			return -1;
	return 0;
}

/* The fabric, read as the engine reads it: a suite whose fabric the engine would refuse stops here. */
static int check_fabric(struct config_reader *r, const config_setting_t *root)
{
	const config_setting_t *g = cr_required(r, root, "fabric", "the fabric the trials run on: a group { kind = ...; }");
	struct fab_spec spec;
	struct fabric f;
	struct fab_routes routes;
	int rc;

	if (!g || cr_want_type(r, g, CONFIG_TYPE_GROUP, "a group { kind = ...; }"))
		return -1;
	if ((rc = cfab_load(r, g, &spec, &f, &routes)) == 0) {
		if (f.n_hosts < 2)
			rc = cr_fail(r, g, "has %u host (the suite's categories need at least two)", f.n_hosts);
		fab_routes_free(&routes);
		fabric_free(&f);
		fab_spec_free(&spec);
	}
	return rc;
}

/* fabric.external: the switch tier is a real one (docs/ai-fabric.md, "Real ports and a real
 * switch"). The categories judged from end-host figures alone run on it; the others need the
 * virtual switches' own settings (the watchdog, the balancing each trial sets; link events without
 * external.link_command): listed, they are refused; by default, not run. */
static const bool runs_external[AIF_CATEGORIES] = { [AIF_THROUGHPUT] = true, [AIF_LATENCY] = true, [AIF_BURST] = true,
						   [AIF_ECN] = true, [AIF_PFC_INCAST] = true, [AIF_COLLECTIVES] = true,
						   [AIF_CONVERGENCE] = true, [AIF_ECMP] = true, [AIF_JCT] = true, [AIF_SOAK] = true,
						   [AIF_INTERFERENCE] = true };

static int external_categories(struct config_reader *r, const config_setting_t *g, const config_setting_t *ext,
			       struct aif_cfg *c)
{
	const config_setting_t *a = g ? config_setting_get_member(g, "categories") : NULL;
	const config_setting_t *lf = g ? config_setting_get_member(g, "link_failure") : NULL;
	const config_setting_t *dl = g ? config_setting_get_member(g, "deadlock") : NULL;
	bool link_command = config_setting_get_member(ext, "link_command") != NULL;

	if (c->run[AIF_LINK_FAILURE] && link_command && lf && config_setting_get_member(lf, "convergence_ms"))
		return cr_fail_member(r, lf, "convergence_ms", "not with fabric.external: the switches converge as they do");
	for (unsigned k = 0; k < AIF_CATEGORIES; k++) {
		/* §11.2 on a real tier: its links fail through the lab's own command; §7.4: its PFC storm */
		if (!c->run[k] || runs_external[k] || c->cluster.across[k] || (k == AIF_LINK_FAILURE && link_command))
			continue;
		if ((k == AIF_FLOWLET || k == AIF_SPRAY) && c->lb.balance_command[0])
			continue; /* (its balancing set through the lab's command) */
		if (k == AIF_DEADLOCK && c->deadlock.storm.on) {
			if (config_setting_get_member(dl, "patterns"))
				return cr_fail_member(r, dl, "patterns", "not with fabric.external: a real tier's deadlocks are "
						      "seen only inside its switches (deadlock.storm runs there)");
			continue;
		}
		if (!a) {
			c->run[k] = false;
			continue;
		}
		for (int i = 0; i < config_setting_length(a); i++)
			if (!strcmp(config_setting_get_string_elem(a, (unsigned)i) ?: "", aif_category_names[k]))
				return cr_fail(r, config_setting_get_elem(a, (unsigned)i), "'%s' is not run with fabric.external: "
					       "it judges from the virtual switches' own counters or settings (on a real "
					       "switch tier: throughput, latency, burst, ecn, pfc_incast, convergence, ecmp, "
					       "collectives, jct, interference, soak; link_failure with external.link_command; "
					       "deadlock with deadlock.storm; flowlet and spray with ai_fabric.balance_command)",
					       aif_category_names[k]);
	}
	return 0;
}

int aif_config_load(struct config_reader *r, const config_setting_t *root, const config_setting_t *g,
		    const char *suite_name, struct aif_cfg *c)
{
	static const char *const keys[] = { "categories", "repeats", "results", "memory_mb", "cluster", "balance_command", "throughput", "latency",
					    "burst", "ecn", "pfc_incast", "convergence", "deadlock", "ecmp", "flowlet", "spray", "collectives", "jct", "interference", "link_failure", "soak",
					    NULL };
	const config_setting_t *tp = NULL, *lat = NULL, *bu = NULL, *ecn = NULL, *inc = NULL, *conv = NULL, *dl = NULL;
	const config_setting_t *coll = NULL, *jct = NULL, *itf = NULL, *lf = NULL, *sk = NULL;
	const config_setting_t *res;

	defaults(c);
	snprintf(c->results, sizeof(c->results), "results/%s", suite_name);
	if (load_thresholds(r, root, &c->th) || load_dut(r, root))
		return -1;
	if (g && (cr_known_keys(r, g, keys) || load_categories(r, g, c) || cr_opt_u32(r, g, "repeats", 1, 100, &c->repeats) < 0 ||
	    cr_opt_u32(r, g, "memory_mb", 256, 65536, &c->memory_mb) < 0 || cr_opt_group(r, g, "throughput", &tp) < 0 ||
	    cr_opt_group(r, g, "latency", &lat) < 0 || cr_opt_group(r, g, "burst", &bu) < 0 ||
	    cr_opt_group(r, g, "pfc_incast", &inc) < 0 || load_burst(r, bu, &c->burst) ||
	    cr_opt_group(r, g, "convergence", &conv) < 0 || load_convergence(r, conv, &c->conv) ||
	    cr_opt_group(r, g, "ecn", &ecn) < 0 || load_ecn(r, ecn, &c->ecn) ||
	    cr_opt_group(r, g, "deadlock", &dl) < 0 || load_deadlock(r, dl, &c->deadlock) ||
	    cr_opt_group(r, g, "jct", &jct) < 0 || load_jct(r, jct, &c->jct) ||
	    cr_opt_group(r, g, "interference", &itf) < 0 || load_interference(r, itf, &c->interference) ||
	    cr_opt_group(r, g, "link_failure", &lf) < 0 || load_link_failure(r, lf, &c->link_failure) ||
	    cr_opt_group(r, g, "soak", &sk) < 0 || load_soak(r, sk, &c->soak) ||
	    cr_opt_group(r, g, "collectives", &coll) < 0 || load_throughput(r, tp, &c->throughput) ||
	    load_latency(r, lat, &c->latency) || load_pfc_incast(r, inc, &c->pfc_incast) || load_lb(r, g, &c->lb) ||
	    load_collectives(r, coll, &c->coll) || load_cluster(r, g, c)))
		return -1;
	/* the fabric: required unless every category run goes across a cluster's hosts */
	for (unsigned k = 0; k < AIF_CATEGORIES; k++)
		c->fabric |= c->run[k] && !c->cluster.across[k];
	if ((c->fabric || config_setting_get_member(root, "fabric")) && check_fabric(r, root))
		return -1;
	c->fabric = config_setting_get_member(root, "fabric") != NULL;
	c->external = c->fabric && config_setting_get_member(config_setting_get_member(root, "fabric"), "external");
	if (c->external && external_categories(r, g, config_setting_get_member(config_setting_get_member(root, "fabric"),
											       "external"), c))
		return -1;
	if (!c->external && c->lb.balance_command[0])
		return cr_fail_member(r, g, "balance_command", "only with fabric.external: on the virtual fabric each trial "
				      "sets its switches' balancing itself");
	if (g && (res = config_setting_get_member(g, "results"))) {
		if (cr_want_type(r, res, CONFIG_TYPE_STRING, "a folder's path"))
			return -1;
		if (!config_setting_get_string(res)[0])
			return cr_fail(r, res, "is empty (a folder's path)");
		snprintf(c->results, sizeof(c->results), "%s", config_setting_get_string(res));
	}
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Scenario loader: libconfig text -> struct scenario, validated completely before the simulation
 * starts. Every error is one line "FILE:LINE: SETTING: what is wrong (what is allowed)": the
 * messages, typed getters and prescan are config/config_read*.c's, shared with the engine's
 * config loader (plain C + libconfig, so the simulator does not depend on EAL), and the cc
 * parameters are cc/cc_params.c's tables. Setting by setting: docs/ccsim.md.
 */
#include "scenario.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libconfig.h>

#include "cc_params.h"
#include "config_read.h"
#include "fab_scenario.h"
#include "scenario_parse.h"



const char *sc_cc_name(enum sc_cc cc)
{
	return cc == CC_DCQCN ? "dcqcn" : cc == CC_TIMELY ? "timely" : "none";
}

/* ---- values in simulator units, names, lists ------------------------------------------------ */

/* Simulator units: µs -> ns and Gb/s -> kb/s, rounded to the nearest unit. */
uint64_t sc_us_to_ns(double us) { return (uint64_t)(us * 1000.0 + 0.5); }
uint64_t sc_gbps_to_kbps(double g) { return (uint64_t)(g * 1e6 + 0.5); }

int sc_opt_us(struct loader *ld, const config_setting_t *g, const char *key, double lo, bool lo_open, double hi,
		  uint64_t *ns)
{
	double v = 0;
	int rc = cr_opt_float(&ld->r, g, key, lo, lo_open, hi, &v);

	if (rc == 1)
		*ns = sc_us_to_ns(v);
	return rc;
}

/* A rate: > 0, at most MAX_RATE_GBPS, and at least 1 kb/s once converted. */
int sc_opt_gbps(struct loader *ld, const config_setting_t *g, const char *key, uint64_t *kbps)
{
	double v = 0;
	int rc = cr_opt_float(&ld->r, g, key, 0, true, MAX_RATE_GBPS, &v);

	if (rc == 1 && sc_gbps_to_kbps(v) == 0)
		return cr_fail_member(&ld->r, g, key, "%g is below the simulator's unit of 1 kb/s (1e-6 Gb/s)", v);
	if (rc == 1)
		*kbps = sc_gbps_to_kbps(v);
	return rc;
}

static int opt_name(struct loader *ld, const config_setting_t *g, const char *key, char *out, size_t len)
{
	return cr_opt_name(&ld->r, g, key, out, len);
}

/* A member that must be a list ( {...}, ... ) of groups, with 1..max of them. */
int sc_group_list(struct loader *ld, const config_setting_t *s, unsigned max)
{
	int n = config_setting_length(s);

	if (config_setting_type(s) != CONFIG_TYPE_LIST)
		return cr_fail(&ld->r, s, "must be a list ( { ... }, ... ), not %s", cr_type_name(s));
	if (n < 1 || (unsigned)n > max)
		return cr_fail(&ld->r, s, "has %d entries (allowed: 1..%u)", n, max);
	for (int i = 0; i < n; i++)
		if (cr_want_type(&ld->r, config_setting_get_elem(s, (unsigned)i), CONFIG_TYPE_GROUP, "a group { ... }"))
			return -1;
	return n;
}

/* An array or list of numbers: each element through float_range. Returns the count or -1. */
int sc_number_list(struct loader *ld, const config_setting_t *s, unsigned max)
{
	int n = config_setting_length(s);

	if (config_setting_type(s) != CONFIG_TYPE_ARRAY && config_setting_type(s) != CONFIG_TYPE_LIST)
		return cr_fail(&ld->r, s, "must be an array [ ... ] of numbers, not %s", cr_type_name(s));
	if ((unsigned)n > max)
		return cr_fail(&ld->r, s, "has %d entries (at most %u)", n, max);
	return n;
}

/* A list of priorities/classes [p, ...] -> bit mask. */
static int class_mask(struct loader *ld, const config_setting_t *s, uint8_t *mask)
{
	int n = sc_number_list(ld, s, 64);
	long long v = 0;

	if (n < 0)
		return -1;
	if (n == 0)
		return cr_fail(&ld->r, s, "is empty (allowed: 0..7, at least one)");
	*mask = 0;
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

		if (cr_int_range(&ld->r, e, 0, SC_CLASSES - 1, false, &v))
			return -1;
		*mask |= (uint8_t)(1u << v);
	}
	return 0;
}

/* ---- cc parameter groups: any field name of struct dcqcn_params / timely_params --------------- */

/* The value of member s for parameter d (cc_params.h). The ranges checked here are only the C
 * types'; the cc library's *_params_check() says the rest, with the parameter's own words. */
static int set_param(struct loader *ld, const config_setting_t *s, const struct cc_param *d, void *params)
{
	long long v = 0;
	double f = 0;

	switch (d->type) {
	case CC_PARAM_U32:
	case CC_PARAM_U64:
		if (cr_int_range(&ld->r, s, 0, d->type == CC_PARAM_U32 ? UINT32_MAX : LLONG_MAX, false, &v))
			return -1;
		cc_param_store_int(d, params, (uint64_t)v);
		return 0;
	case CC_PARAM_BOOL:
		if (cr_want_type(&ld->r, s, CONFIG_TYPE_BOOL, "true or false"))
			return -1;
		cc_param_store(d, params, config_setting_get_bool(s));
		return 0;
	case CC_PARAM_DOUBLE:
		if (cr_float_value(&ld->r, s, &f))
			return -1;
		cc_param_store(d, params, f);
		return 0;
	}
	return -1;
}

/* extra[], then the parameters of `profile` in the table d: the members a group may have. */
static void param_names(const struct cc_param *d, int profile, const char *const extra[], char *buf, size_t len)
{
	buf[0] = '\0';
	for (unsigned i = 0; extra && extra[i]; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? ", " : "", extra[i]);
	for (; d->name; d++)
		if (d->profile < 0 || d->profile == profile)
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? ", " : "", d->name);
}

static const char *profile_name(int profile)
{
	return cc_dcqcn_profile_names[profile == DCQCN_NVIDIA ? DCQCN_NVIDIA : DCQCN_PAPER];
}

/* Every member of g is either one of extra[] (the caller reads those) or a parameter in table[]
 * of the group's profile (-1: no profiles). */
static int set_params(struct loader *ld, const config_setting_t *g, const struct cc_param *table, int profile,
		      const char *const extra[], void *params)
{
	int n = config_setting_length(g);

	for (int i = 0; i < n; i++) {
		const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
		const char *name = config_setting_name(m);
		const struct cc_param *d = cc_param_find(table, name);
		bool is_extra = false;
		char allowed[900];

		for (unsigned k = 0; extra && extra[k]; k++)
			is_extra |= !strcmp(extra[k], name);
		if (is_extra)
			continue;
		if (!d) {
			param_names(table, profile, extra, allowed, sizeof(allowed));
			return cr_fail(&ld->r, m, "unknown setting '%s' (allowed: %s)", name, allowed);
		}
		if (d->profile >= 0 && d->profile != profile)
			return cr_fail(&ld->r, m, "is a parameter of profile \"%s\" (this group's profile is \"%s\")",
				       profile_name(d->profile), profile_name(profile));
		if (set_param(ld, m, d, params))
			return -1;
	}
	return 0;
}

/* g may be NULL (all defaults). */
static int parse_dcqcn(struct loader *ld, const config_setting_t *g, struct dcqcn_params *p)
{
	static const char *const extra[] = { "profile", NULL };
	const config_setting_t *s = g ? config_setting_get_member(g, "profile") : NULL;
	int profile = DCQCN_NVIDIA;
	const char *bad, *why = "";

	if (s && (profile = cr_pick(&ld->r, s, cc_dcqcn_profile_names, NULL)) < 0)
		return -1;
	dcqcn_params_default(p, (enum dcqcn_profile)profile);
	if (!g)
		return 0;
	if (set_params(ld, g, cc_dcqcn_params, profile, extra, p))
		return -1;
	bad = dcqcn_params_check(p, &why);
	if (bad)
		return cr_fail_member(&ld->r, g, bad, "%s", why ? why : "invalid");
	return 0;
}

static int parse_timely(struct loader *ld, const config_setting_t *g, struct sc_flow *f)
{
	static const char *const extra[] = { "start_gbps", "segment_bytes", NULL };
	const char *bad, *why = "";

	timely_params_default(&f->timely);
	f->timely_start_kbps = f->line_kbps;
	f->timely_segment_bytes = 16384;
	if (!g)
		return 0;
	if (set_params(ld, g, cc_timely_params, -1, extra, &f->timely))
		return -1;
	if (sc_opt_gbps(ld, g, "start_gbps", &f->timely_start_kbps) < 0 ||
	    cr_opt_u32(&ld->r, g, "segment_bytes", 1, 1LL << 30, &f->timely_segment_bytes) < 0)
		return -1;
	if (f->timely_start_kbps > f->line_kbps)
		return cr_fail_member(&ld->r, g, "start_gbps", "is above the flow's rate_gbps (allowed: up to %g)",
				      (double)f->line_kbps / 1e6);
	bad = timely_params_check(&f->timely, &why);
	if (bad)
		return cr_fail_member(&ld->r, g, bad, "%s", why ? why : "invalid");
	return 0;
}

/* ---- top level: times --------------------------------------------------------------------------- */

static int parse_times(struct loader *ld, const config_setting_t *root)
{
	struct scenario *sc = ld->sc;
	const config_setting_t *w;
	double a = 0, b = 0;

	if (!cr_required(&ld->r, root, "duration_us", "simulated time, µs") ||
	    sc_opt_us(ld, root, "duration_us", 0, true, MAX_DURATION_US, &sc->duration_ns) < 0)
		return -1;
	if (sc->duration_ns == 0)
		return cr_fail_member(&ld->r, root, "duration_us", "rounds to 0 ns (allowed: at least 0.001)");
	sc->sample_ns = 10000;
	if (sc_opt_us(ld, root, "sample_us", 0, true, MAX_DURATION_US, &sc->sample_ns) < 0)
		return -1;
	if (sc->sample_ns == 0 || sc->sample_ns > sc->duration_ns)
		return cr_fail_member(&ld->r, root, "sample_us", "must be 0.001 .. duration_us (%g)",
				      (double)sc->duration_ns / 1000);
	sc->win_start_ns = sc->duration_ns / 2;
	sc->win_end_ns = sc->duration_ns;
	w = config_setting_get_member(root, "window_us");
	if (!w)
		return 0;
	if (sc_number_list(ld, w, 2) < 0)
		return -1;
	if (config_setting_length(w) != 2)
		return cr_fail(&ld->r, w, "must be [start, end] (two numbers, µs)");
	if (cr_float_range(&ld->r, config_setting_get_elem(w, 0), 0, false, MAX_DURATION_US, &a) ||
	    cr_float_range(&ld->r, config_setting_get_elem(w, 1), 0, false, MAX_DURATION_US, &b))
		return -1;
	if (!(a < b) || sc_us_to_ns(b) > sc->duration_ns || sc_us_to_ns(a) == sc_us_to_ns(b))
		return cr_fail(&ld->r, w, "[%g, %g] is not a window (allowed: 0 <= start < end <= duration_us = %g)",
			       a, b, (double)sc->duration_ns / 1000);
	sc->win_start_ns = sc_us_to_ns(a);
	sc->win_end_ns = sc_us_to_ns(b);
	return 0;
}

/* ---- switch ------------------------------------------------------------------------------------- */

/* switch.pfc; fabric scenarios may also give headroom_bytes (the shared MMU's). */
static int parse_pfc(struct loader *ld, const config_setting_t *g, struct sc_switch *sw, bool fabric)
{
	static const char *const keys[] = { "enabled", "priorities", "xoff_bytes", "xon_bytes", NULL };
	static const char *const fab_keys[] = { "enabled", "priorities", "xoff_bytes", "xon_bytes", "headroom_bytes", NULL };
	const config_setting_t *p;

	sw->pfc = true;
	sw->pfc_prio_mask = 0xFF;
	if (cr_known_keys(&ld->r, g, fabric ? fab_keys : keys) || cr_opt_bool(&ld->r, g, "enabled", &sw->pfc) < 0)
		return -1;
	if (!sw->pfc)
		return 0;
	p = config_setting_get_member(g, "priorities");
	if (p && class_mask(ld, p, &sw->pfc_prio_mask))
		return -1;
	if (!cr_required(&ld->r, g, "xoff_bytes", "bytes of an ingress port's priority that send XOFF") ||
	    !cr_required(&ld->r, g, "xon_bytes", "bytes at or below which XON is sent") ||
	    cr_opt_u64(&ld->r, g, "xoff_bytes", 1, LLONG_MAX, &sw->xoff_bytes) < 0 ||
	    cr_opt_u64(&ld->r, g, "xon_bytes", 0, LLONG_MAX, &sw->xon_bytes) < 0 ||
	    cr_opt_u64(&ld->r, g, "headroom_bytes", 0, LLONG_MAX, &sw->headroom_bytes) < 0)
		return -1;
	sw->headroom_set = config_setting_get_member(g, "headroom_bytes") != NULL;
	if (sw->xon_bytes > sw->xoff_bytes)
		return cr_fail_member(&ld->r, g, "xon_bytes", "%llu is above xoff_bytes (allowed: 0..%llu)",
				      (unsigned long long)sw->xon_bytes, (unsigned long long)sw->xoff_bytes);
	return 0;
}

/* One ECN group: { classes = [...]; kmin_bytes; kmax_bytes; pmax }. */
static int parse_ecn_group(struct loader *ld, const config_setting_t *g, struct sc_switch *sw)
{
	static const char *const keys[] = { "classes", "kmin_bytes", "kmax_bytes", "pmax", NULL };
	struct red_params r = { 0 };
	const config_setting_t *c = config_setting_get_member(g, "classes");
	uint8_t mask = 0xFF;
	double pmax = 0;

	if (cr_known_keys(&ld->r, g, keys) || (c && class_mask(ld, c, &mask)))
		return -1;
	if (!cr_required(&ld->r, g, "kmin_bytes", "bytes, no marking at or below") ||
	    !cr_required(&ld->r, g, "kmax_bytes", "bytes, marking with probability pmax there, always above") ||
	    !cr_required(&ld->r, g, "pmax", "marking probability at kmax_bytes, 0 < pmax <= 1") ||
	    cr_opt_u64(&ld->r, g, "kmin_bytes", 0, LLONG_MAX, &r.kmin_bytes) < 0 ||
	    cr_opt_u64(&ld->r, g, "kmax_bytes", 0, LLONG_MAX, &r.kmax_bytes) < 0 ||
	    cr_opt_float(&ld->r, g, "pmax", 0, true, 1, &pmax) < 0)
		return -1;
	if (r.kmax_bytes < r.kmin_bytes)
		return cr_fail_member(&ld->r, g, "kmax_bytes", "%llu is below kmin_bytes (allowed: >= %llu)",
				      (unsigned long long)r.kmax_bytes, (unsigned long long)r.kmin_bytes);
	r.pmax_q16 = (uint32_t)(pmax * 65536 + 0.5);
	for (unsigned k = 0; k < SC_CLASSES; k++) {
		if (!(mask & (1u << k)))
			continue;
		if (sw->ecn[k])
			return cr_fail(&ld->r, c ? c : g,
				       "class %u already has ECN settings (each class in one group)", k);
		sw->ecn[k] = true;
		sw->red[k] = r;
	}
	return 0;
}

/* switch.ecn: one group (for its classes) or a list of groups. */
static int parse_ecn(struct loader *ld, const config_setting_t *e, struct sc_switch *sw)
{
	int n;

	memset(sw->ecn, 0, sizeof(sw->ecn)); /* a tier's ecn replaces the switch group's */
	if (config_setting_type(e) == CONFIG_TYPE_GROUP)
		return parse_ecn_group(ld, e, sw);
	if ((n = sc_group_list(ld, e, SC_CLASSES)) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (parse_ecn_group(ld, config_setting_get_elem(e, (unsigned)i), sw))
			return -1;
	return 0;
}

int sc_parse_switch_group(struct loader *ld, const config_setting_t *g, struct sc_switch *sw, bool fabric,
			  const char *const *tier_keys)
{
	static const char *const keys[] = { "buffer_bytes", "pfc", "ecn", NULL };
	const char *fab_keys[16] = { "buffer_bytes", "pfc", "ecn", "alpha", "queue_limit_bytes", NULL };
	const config_setting_t *p, *e;
	int rc;

	for (unsigned i = 0, k = 5; tier_keys && tier_keys[i] && k < 15; i++)
		fab_keys[k++] = tier_keys[i];
	if (cr_known_keys(&ld->r, g, fabric ? fab_keys : keys) ||
	    cr_opt_u64(&ld->r, g, "buffer_bytes", 0, LLONG_MAX, &sw->buffer_bytes) < 0 ||
	    cr_opt_u64(&ld->r, g, "queue_limit_bytes", 0, LLONG_MAX, &sw->queue_limit_bytes) < 0 ||
	    cr_opt_float(&ld->r, g, "alpha", 0, false, 64, &sw->alpha) < 0)
		return -1;
	if ((rc = cr_opt_group(&ld->r, g, "pfc", &p)) < 0 || (rc == 1 && parse_pfc(ld, p, sw, fabric)))
		return -1;
	e = config_setting_get_member(g, "ecn");
	if (e && parse_ecn(ld, e, sw))
		return -1;
	return 0;
}

static int parse_switch(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *g;
	int rc;

	ld->sc->sw.buffer_bytes = 12000000;
	if ((rc = cr_opt_group(&ld->r, root, "switch", &g)) <= 0)
		return rc;
	return sc_parse_switch_group(ld, g, &ld->sc->sw, false, NULL);
}

/* ---- receivers ---------------------------------------------------------------------------------- */

static int parse_receiver(struct loader *ld, const config_setting_t *g, unsigned idx)
{
	static const char *const keys[] = { "name", "rate_gbps", "delay_us", "np", NULL };
	static const char *const np_keys[] = { "min_time_between_cnps", NULL };
	struct sc_receiver *r = &ld->sc->rx[idx];
	const config_setting_t *np;
	int rc;

	snprintf(r->name, sizeof(r->name), "r%u", idx);
	r->delay_ns = 1000;
	np_params_default(&r->np);
	if (cr_known_keys(&ld->r, g, keys) || opt_name(ld, g, "name", r->name, sizeof(r->name)) < 0 ||
	    !cr_required(&ld->r, g, "rate_gbps", "the switch port's rate toward this receiver, Gb/s") ||
	    sc_opt_gbps(ld, g, "rate_gbps", &r->rate_kbps) < 0 ||
	    sc_opt_us(ld, g, "delay_us", 0, false, MAX_DELAY_US, &r->delay_ns) < 0)
		return -1;
	for (unsigned i = 0; i < idx; i++)
		if (!strcmp(ld->sc->rx[i].name, r->name))
			return cr_fail_member(&ld->r, g, "name", "'%s' is the name of receivers.[%u] too", r->name, i);
	if ((rc = cr_opt_group(&ld->r, g, "np", &np)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, np, np_keys) ||
	    cr_opt_u32(&ld->r, np, "min_time_between_cnps", 0, 1000000, &r->np.min_time_between_cnps) < 0)
		return -1;
	return 0;
}

static int parse_receivers(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *l = cr_required(&ld->r, root, "receivers",
						"a list of receivers ( { rate_gbps = ...; } )");
	int n;

	if (!l || (n = sc_group_list(ld, l, SC_MAX_RECEIVERS)) < 0)
		return -1;
	ld->sc->rx = calloc((size_t)n, sizeof(*ld->sc->rx));
	if (!ld->sc->rx)
		return cr_fail(&ld->r, l, "out of memory");
	ld->sc->n_rx = (unsigned)n;
	for (int i = 0; i < n; i++)
		if (parse_receiver(ld, config_setting_get_elem(l, (unsigned)i), (unsigned)i))
			return -1;
	return 0;
}

/* ---- flows -------------------------------------------------------------------------------------- */

static int flow_receiver(struct loader *ld, const config_setting_t *g, unsigned *out)
{
	const config_setting_t *s = config_setting_get_member(g, "receiver");
	const struct scenario *sc = ld->sc;
	long long v = 0;
	char buf[64];

	*out = 0;
	if (!s)
		return 0;
	if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		for (unsigned i = 0; i < sc->n_rx; i++)
			if (!strcmp(sc->rx[i].name, config_setting_get_string(s))) {
				*out = i;
				return 0;
			}
		return cr_fail(&ld->r, s, "no receiver is named '%s' (receivers[].name)",
			       cr_shown(config_setting_get_string(s), buf));
	}
	if (cr_int_range(&ld->r, s, 0, sc->n_rx - 1, false, &v))
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* A flow's congestion control and packets: cc (default dcqcn) with its dcqcn / timely group,
 * priority, mtu_bytes, jitter_us. f->line_kbps is set (TIMELY's start rate is checked against it). */
int sc_parse_flow_cc(struct loader *ld, const config_setting_t *g, struct sc_flow *f)
{
	static const char *const ccs[] = { "none", "dcqcn", "timely", NULL };
	static const enum sc_cc cc_of[] = { CC_NONE, CC_DCQCN, CC_TIMELY };
	const config_setting_t *s = config_setting_get_member(g, "cc"), *dq, *tm;
	int k;

	f->cc = CC_DCQCN;
	if (s) {
		if ((k = cr_pick(&ld->r, s, ccs, NULL)) < 0)
			return -1;
		f->cc = cc_of[k];
	}
	f->priority = 3;
	f->mtu_bytes = 1024;
	if (cr_opt_u32(&ld->r, g, "priority", 0, SC_CLASSES - 1, &f->priority) < 0 ||
	    cr_opt_u32(&ld->r, g, "mtu_bytes", 64, 65535, &f->mtu_bytes) < 0 ||
	    sc_opt_us(ld, g, "jitter_us", 0, false, 1000, &f->jitter_ns) < 0 ||
	    cr_opt_group(&ld->r, g, "dcqcn", &dq) < 0 || cr_opt_group(&ld->r, g, "timely", &tm) < 0)
		return -1;
	if (dq && f->cc != CC_DCQCN)
		return cr_fail(&ld->r, dq, "only with cc = \"dcqcn\" (this flow's cc is \"%s\")", sc_cc_name(f->cc));
	if (tm && f->cc != CC_TIMELY)
		return cr_fail(&ld->r, tm, "only with cc = \"timely\" (this flow's cc is \"%s\")", sc_cc_name(f->cc));
	if (parse_dcqcn(ld, dq, &f->dcqcn) || (f->cc == CC_TIMELY && parse_timely(ld, tm, f)))
		return -1;
	return 0;
}

/* The settings shared by the `count` copies of a flow entry. */
static int flow_common(struct loader *ld, const config_setting_t *g, struct sc_flow *f)
{
	f->delay_ns = 1000;
	if (flow_receiver(ld, g, &f->receiver) ||
	    !cr_required(&ld->r, g, "rate_gbps", "the sender's line rate, Gb/s") ||
	    sc_opt_gbps(ld, g, "rate_gbps", &f->line_kbps) < 0 ||
	    sc_opt_us(ld, g, "delay_us", 0, false, MAX_DELAY_US, &f->delay_ns) < 0 ||
	    cr_opt_u64(&ld->r, g, "size_bytes", 0, LLONG_MAX, &f->size_bytes) < 0)
		return -1;
	return sc_parse_flow_cc(ld, g, f);
}

static bool flow_name_taken(const struct scenario *sc, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(sc->flows[i].name, name))
			return true;
	return false;
}

/* One entry of flows: `count` flows, each from its own sender; names get the copy's index. */
static int parse_flow_entry(struct loader *ld, const config_setting_t *g, unsigned *n_flows)
{
	static const char *const keys[] = { "name", "count", "cc", "receiver", "priority", "rate_gbps", "mtu_bytes",
					    "start_us", "start_step_us", "size_bytes", "delay_us", "jitter_us", "dcqcn",
					    "timely", NULL };
	struct scenario *sc = ld->sc;
	struct sc_flow f = { 0 };
	uint64_t count = 1, start = 0, step = 0;
	char base[SC_NAME_LEN] = "";

	if (cr_known_keys(&ld->r, g, keys) || opt_name(ld, g, "name", base, sizeof(base) - 6) < 0 ||
	    cr_opt_u64(&ld->r, g, "count", 1, SC_MAX_FLOWS, &count) < 0 ||
	    sc_opt_us(ld, g, "start_us", 0, false, MAX_DURATION_US, &start) < 0 ||
	    sc_opt_us(ld, g, "start_step_us", 0, false, MAX_DURATION_US, &step) < 0 || flow_common(ld, g, &f))
		return -1;
	if (*n_flows + count > SC_MAX_FLOWS)
		return cr_fail_member(&ld->r, g, "count", "makes more than %u flows in all", SC_MAX_FLOWS);
	for (uint64_t k = 0; k < count; k++) {
		struct sc_flow *d = &sc->flows[*n_flows];

		*d = f;
		if (!base[0])
			snprintf(d->name, sizeof(d->name), "f%u", *n_flows);
		else if (count == 1)
			snprintf(d->name, sizeof(d->name), "%s", base);
		else
			snprintf(d->name, sizeof(d->name), "%s%u", base, (unsigned)k);
		if (flow_name_taken(sc, *n_flows, d->name))
			return cr_fail_member(&ld->r, g, "name", "'%s' names another flow too", d->name);
		d->start_ns = start + k * step;
		(*n_flows)++;
	}
	return 0;
}

static int parse_flows(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *l = cr_required(&ld->r, root, "flows", "a list of flows ( { rate_gbps = ...; } )");
	unsigned total = 0;
	int n;

	if (!l || (n = sc_group_list(ld, l, SC_MAX_FLOWS)) < 0)
		return -1;
	ld->sc->flows = calloc(SC_MAX_FLOWS, sizeof(*ld->sc->flows));
	if (!ld->sc->flows)
		return cr_fail(&ld->r, l, "out of memory");
	for (int i = 0; i < n; i++)
		if (parse_flow_entry(ld, config_setting_get_elem(l, (unsigned)i), &total))
			return -1;
	ld->sc->n_flows = total;
	for (unsigned i = 0; i < total; i++)
		if (ld->sc->flows[i].start_ns >= ld->sc->duration_ns)
			return cr_fail(&ld->r, l, "flow %s starts at %g µs, not before duration_us (%g)",
				       ld->sc->flows[i].name, (double)ld->sc->flows[i].start_ns / 1000,
				       (double)ld->sc->duration_ns / 1000);
	return 0;
}

/* ---- rp_replay ---------------------------------------------------------------------------------- */

static int parse_cnp_times(struct loader *ld, const config_setting_t *rp)
{
	struct sc_replay *r = &ld->sc->rp;
	const config_setting_t *l = config_setting_get_member(rp, "cnp_times_us");
	int n;
	double v = 0;

	if (!l)
		return 0;
	if ((n = sc_number_list(ld, l, SC_MAX_CNP_TIMES)) < 0)
		return -1;
	r->cnp_ns = calloc((size_t)n + 1, sizeof(*r->cnp_ns));
	if (!r->cnp_ns)
		return cr_fail(&ld->r, l, "out of memory");
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(l, (unsigned)i);

		if (cr_float_range(&ld->r, e, 0, false, (double)ld->sc->duration_ns / 1000, &v))
			return -1;
		r->cnp_ns[i] = sc_us_to_ns(v);
		if (i && r->cnp_ns[i] < r->cnp_ns[i - 1])
			return cr_fail(&ld->r, e,
				       "%g comes before the time listed ahead of it (allowed: ascending times)", v);
	}
	r->n_cnp = (unsigned)n;
	return 0;
}

static int parse_rp(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "rate_gbps", "cnp_times_us", "send_gbps", "mtu_bytes", "dcqcn", NULL };
	struct sc_replay *r = &ld->sc->rp;
	const config_setting_t *g = cr_required(&ld->r, root, "rp", "the reaction point { rate_gbps = ...; ... }"), *dq;
	double send = 0;

	r->packet_bytes = 1024;
	if (!g || cr_want_type(&ld->r, g, CONFIG_TYPE_GROUP, "a group { ... }") || cr_known_keys(&ld->r, g, keys) ||
	    !cr_required(&ld->r, g, "rate_gbps", "the QP's line rate, Gb/s") ||
	    sc_opt_gbps(ld, g, "rate_gbps", &r->line_kbps) < 0 ||
	    cr_opt_float(&ld->r, g, "send_gbps", 0, false, MAX_RATE_GBPS, &send) < 0 ||
	    cr_opt_u32(&ld->r, g, "mtu_bytes", 64, 65535, &r->packet_bytes) < 0 || parse_cnp_times(ld, g) ||
	    cr_opt_group(&ld->r, g, "dcqcn", &dq) < 0 || parse_dcqcn(ld, dq, &r->dcqcn))
		return -1;
	r->send_kbps = sc_gbps_to_kbps(send);
	return 0;
}

/* ---- entry points --------------------------------------------------------------------------- */

static int parse_kind(struct loader *ld, const config_setting_t *root)
{
	static const char *const types[] = { "network", "rp_replay", "fabric", NULL };
	static const char *const net_keys[] = { "scenario", "seed", "duration_us", "sample_us", "window_us",
						"switch", "receivers", "flows", NULL };
	static const char *const rp_keys[] = { "scenario", "seed", "duration_us", "rp", NULL };
	const config_setting_t *s = config_setting_get_member(root, "scenario");
	int t = SC_NETWORK;
	long long seed = 0;

	if (s && (t = cr_pick(&ld->r, s, types, NULL)) < 0)
		return -1;
	ld->sc->type = (enum sc_type)t;
	if (cr_known_keys(&ld->r, root, t == SC_NETWORK ? net_keys : t == SC_RP_REPLAY ? rp_keys : fab_scenario_keys))
		return -1;
	ld->sc->seed = 1;
	if (cr_opt_int(&ld->r, root, "seed", 0, LLONG_MAX, false, &seed) < 0)
		return -1;
	if (config_setting_get_member(root, "seed"))
		ld->sc->seed = (uint64_t)seed;
	return 0;
}

static int load_root(void *arg, const config_setting_t *root)
{
	struct loader *ld = arg;

	if (parse_kind(ld, root) || parse_times(ld, root))
		return -1;
	if (ld->sc->type == SC_RP_REPLAY)
		return parse_rp(ld, root);
	if (ld->sc->type == SC_FABRIC)
		return fab_scenario_parse(ld, root);
	return parse_switch(ld, root) || parse_receivers(ld, root) || parse_flows(ld, root) ? -1 : 0;
}

void scenario_free(struct scenario *sc)
{
	free(sc->rx);
	free(sc->flows);
	free(sc->rp.cnp_ns);
	fab_scenario_free(sc->fab);
	free(sc->fab);
	memset(sc, 0, sizeof(*sc));
}

/* One load, of a file (text NULL: its includes found beside it) or of text. */
static int load(const char *path, const char *text, struct scenario *sc, char *err, size_t errlen)
{
	struct loader ld = { .sc = sc };
	int rc;

	cr_init(&ld.r, path, err, errlen, "scenario");
	memset(sc, 0, sizeof(*sc));
	snprintf(sc->file, sizeof(sc->file), "%s", ld.r.file);
	rc = text ? cr_load_text(&ld.r, text, load_root, &ld) : cr_load_file(&ld.r, path, load_root, &ld);
	if (rc)
		scenario_free(sc);
	snprintf(sc->file, sizeof(sc->file), "%s", ld.r.file);
	return rc;
}

int scenario_load_string(const char *text, const char *name, struct scenario *sc, char *err, size_t errlen)
{
	return load(name, text, sc, err, errlen);
}

int scenario_load(const char *path, struct scenario *sc, char *err, size_t errlen)
{
	return load(path, NULL, sc, err, errlen);
}

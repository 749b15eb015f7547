/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Congestion control and event injection: a flow's cc, dcqcn and timely settings (read through
 * cc/'s parameter tables), a port's notification point (np), and the inject / rx_inject lists.
 */
#include "config_internal.h"

#include <stdio.h>
#include <string.h>

#include "cc_params.h"

/* The np group's integer settings: the member of struct np_params, its size (4 or 1 bytes) and
 * range. */
static const struct np_desc { const char *name; size_t off; size_t size; double lo, hi; } np_descs[] = {
	{ "min_time_between_cnps", offsetof(struct np_params, min_time_between_cnps), 4, 0, 1e7 },
	{ "cnp_dscp", offsetof(struct np_params, cnp_dscp), 1, 0, 63 },
	{ "cnp_802p_prio", offsetof(struct np_params, cnp_802p_prio), 1, 0, 7 },
};

/* One parameter from the member of g named d->name, in d's range; absent: left as it is. */
static int set_param(struct loader *ld, const config_setting_t *g, const struct cc_param *d, void *params)
{
	long long v = 0;
	double f = 0;
	bool b = false;
	int rc;

	switch (d->type) {
	case CC_PARAM_BOOL:
		if ((rc = cr_opt_bool(&ld->r, g, d->name, &b)) == 1)
			cc_param_store(d, params, b);
		return rc;
	case CC_PARAM_DOUBLE:
		if ((rc = cr_opt_float(&ld->r, g, d->name, d->lo, false, d->hi, &f)) == 1)
			cc_param_store(d, params, f);
		return rc;
	default:
		if ((rc = cr_opt_int(&ld->r, g, d->name, (long long)d->lo, (long long)d->hi, false, &v)) == 1)
			cc_param_store_int(d, params, (uint64_t)v);
		return rc;
	}
}

/* Sets the members of g named in table[] into params; other members are refused, except those in
 * extra[] (handled by the caller). */
static int set_params(struct loader *ld, const config_setting_t *g, const struct cc_param *table, void *params,
		      const char *const extra[])
{
	const char *keys[40];
	unsigned k = 0;

	for (unsigned i = 0; extra && extra[i]; i++)
		keys[k++] = extra[i];
	for (const struct cc_param *d = table; d->name; d++)
		keys[k++] = d->name;
	keys[k] = NULL;
	if (cr_known_keys(&ld->r, g, keys))
		return -1;
	for (const struct cc_param *d = table; d->name; d++)
		if (set_param(ld, g, d, params) < 0)
			return -1;
	return 0;
}

/* dcqcn = { profile = "nvidia" | "paper"; <parameters> }: the profile's defaults, then these. */
static int flow_dcqcn(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	static const char *const extra[] = { "profile", NULL };
	const config_setting_t *ds, *s;
	const char *bad, *why;
	int rc, i;

	dcqcn_params_default(&g->dcqcn, DCQCN_NVIDIA);
	if ((rc = cr_opt_group(&ld->r, fs, "dcqcn", &ds)) <= 0)
		return rc;
	if (g->cc != CFG_CC_DCQCN)
		return cr_fail_member(&ld->r, fs, "dcqcn",
				      "parameters for cc = \"dcqcn\", but the flow's cc is not dcqcn");
	if ((s = config_setting_get_member(ds, "profile"))) {
		if ((i = cr_pick(&ld->r, s, cc_dcqcn_profile_names, NULL)) < 0)
			return -1;
		dcqcn_params_default(&g->dcqcn, (enum dcqcn_profile)i);
	}
	if (set_params(ld, ds, cc_dcqcn_params, &g->dcqcn, extra))
		return -1;
	if ((bad = dcqcn_params_check(&g->dcqcn, &why)))
		return cr_fail_member(&ld->r, ds, bad, "%s%s", why ? "must be " : "", why ? why : "out of range");
	return 0;
}

static int flow_timely(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	const config_setting_t *ts;
	const char *bad, *why;
	int rc;

	timely_params_default(&g->timely);
	if ((rc = cr_opt_group(&ld->r, fs, "timely", &ts)) <= 0)
		return rc;
	if (g->cc != CFG_CC_TIMELY)
		return cr_fail_member(&ld->r, fs, "timely",
				      "parameters for cc = \"timely\", but the flow's cc is not timely");
	if (set_params(ld, ts, cc_timely_params, &g->timely, NULL))
		return -1;
	if ((bad = timely_params_check(&g->timely, &why)))
		return cr_fail_member(&ld->r, ts, bad, "%s%s", why ? "must be " : "", why ? why : "out of range");
	return 0;
}

/* cc = "dcqcn" | "timely" | "none" */
int ld_flow_cc(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	static const char *const algos[] = { "none", "dcqcn", "timely", NULL };
	const config_setting_t *s = config_setting_get_member(fs, "cc");
	int i;

	if (s) {
		if ((i = cr_pick(&ld->r, s, algos, NULL)) < 0)
			return -1;
		g->cc = (enum cfg_cc)i;
	}
	if (g->cc == CFG_CC_TIMELY && g->transport != CFG_RC)
		return cr_fail(&ld->r, s, "timely needs RTT samples, which come from RC ACKs (transport rc)");
	if (g->cc != CFG_CC_NONE && g->rate_pps > 0)
		return cr_fail(&ld->r, s,
			       "congestion control sets a rate in Gb/s: use rate_gbps (or none), not rate_pps");
	if (g->cc != CFG_CC_NONE && g->pattern != CFG_PATTERN_CONSTANT)
		return cr_fail(&ld->r, s, "congestion control paces the QP itself: pattern must be constant");
	return flow_dcqcn(ld, fs, g) || flow_timely(ld, fs, g) ? -1 : 0;
}

/* The table of algo's parameters (anything but dcqcn reads as timely, as config.h allows). */
static const struct cc_param *cc_table(enum cfg_cc algo)
{
	return algo == CFG_CC_DCQCN ? cc_dcqcn_params : cc_timely_params;
}

/* The control interface's /roce/cc_set (telemetry/control.c) calls this, but it stays with the
 * loader: it applies the file's own rules (the table's ranges, then the algorithm's check of the
 * whole set), so that a value set at run time passes exactly what the file would have. */
int config_cc_param_set(enum cfg_cc algo, void *params, const char *name, double value, char *err, size_t errlen)
{
	const struct cc_param *d = cc_param_find(cc_table(algo), name);
	union {
		struct dcqcn_params d;
		struct timely_params t;
	} copy;
	const char *bad, *why = NULL;

	if (!d) {
		snprintf(err, errlen, "%s has no parameter '%s' (docs/cc.md)", algo == CFG_CC_DCQCN ? "dcqcn" : "timely", name);
		return -1;
	}
	if (!(value >= d->lo && value <= d->hi) || (d->type != CC_PARAM_DOUBLE && value != (double)(long long)value)) {
		snprintf(err, errlen, "%s: %g is out of range (%s%g..%g)", name, value,
			 d->type == CC_PARAM_DOUBLE ? "" : "integers ", d->lo, d->hi);
		return -1;
	}
	/* checked on a copy, so that the live parameters change only to a set that passes */
	memcpy(&copy, params, algo == CFG_CC_DCQCN ? sizeof(copy.d) : sizeof(copy.t));
	cc_param_store(d, &copy, value);
	bad = algo == CFG_CC_DCQCN ? dcqcn_params_check(&copy.d, &why) : timely_params_check(&copy.t, &why);
	if (bad) {
		snprintf(err, errlen, "%s: %s", bad, why ? why : "out of range");
		return -1;
	}
	cc_param_store(d, params, value);
	return 0;
}

/* np = { enabled; min_time_between_cnps; cnp_dscp; cnp_802p_prio; }: the port's notification
 * point, on by default as on ConnectX ports. */
int ld_port_np(struct loader *ld, const config_setting_t *ps, struct cfg_port *p)
{
	static const char *const keys[] = { "enabled", "min_time_between_cnps", "cnp_dscp", "cnp_802p_prio", NULL };
	const config_setting_t *ns;
	int rc;

	p->np_enabled = true;
	np_params_default(&p->np);
	if ((rc = cr_opt_group(&ld->r, ps, "np", &ns)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, ns, keys) || cr_opt_bool(&ld->r, ns, "enabled", &p->np_enabled) < 0)
		return -1;
	for (unsigned i = 0; i < sizeof(np_descs) / sizeof(np_descs[0]); i++) {
		long long v;

		rc = cr_opt_int(&ld->r, ns, np_descs[i].name, (long long)np_descs[i].lo, (long long)np_descs[i].hi,
				false, &v);
		if (rc < 0)
			return -1;
		if (rc == 1 && np_descs[i].size == 4)
			*(uint32_t *)((char *)&p->np + np_descs[i].off) = (uint32_t)v;
		else if (rc == 1)
			*((uint8_t *)&p->np + np_descs[i].off) = (uint8_t)v;
	}
	return 0;
}

/* ---- event injection ------------------------------------------------------------------------ */

/* One entry of an `inject` list: { action = "ce" | "drop" | "corrupt"; psn | every | probability;
 * qp; count; } */
static int parse_inject(struct loader *ld, const config_setting_t *is, struct cfg_inject *in, bool tx,
			unsigned qps)
{
	static const char *const tx_keys[] = { "action", "qp", "psn", "every", "probability", "count", NULL };
	static const char *const rx_keys[] = { "action", "every", "probability", "count", NULL };
	static const char *const actions[] = { "ce", "drop", "corrupt", NULL };
	const config_setting_t *s;
	long long v;
	int i, rc, ways = 0;

	if (cr_want_type(&ld->r, is, CONFIG_TYPE_GROUP, "a group { action = ...; every = ...; }") ||
	    cr_known_keys(&ld->r, is, tx ? tx_keys : rx_keys))
		return -1;
	memset(in, 0, sizeof(*in));
	in->qp = -1;
	in->psn = -1;
	in->line = config_setting_source_line(is);
	s = cr_required(&ld->r, is, "action", "ce, drop or corrupt");
	if (!s || (i = cr_pick(&ld->r, s, actions, NULL)) < 0)
		return -1;
	in->action = (enum cfg_inject_action)i;
	if ((rc = cr_opt_int(&ld->r, is, "qp", 0, (long long)qps - 1, false, &v)) < 0)
		return -1;
	if (rc == 1)
		in->qp = (int)v;
	if ((rc = cr_opt_int(&ld->r, is, "psn", 0, 0xFFFFFF, false, &v)) < 0)
		return -1;
	if (rc == 1) {
		in->psn = v;
		ways++;
	}
	if ((rc = cr_opt_int(&ld->r, is, "every", 1, 1000000000, false, &v)) < 0)
		return -1;
	if (rc == 1) {
		in->every = (uint64_t)v;
		ways++;
	}
	if ((rc = cr_opt_float(&ld->r, is, "probability", 0, true, 1, &in->probability)) < 0)
		return -1;
	ways += rc == 1;
	if ((rc = cr_opt_int(&ld->r, is, "count", 1, (long long)1e15, false, &v)) < 0)
		return -1;
	if (rc == 1)
		in->count = (uint64_t)v;
	if (ways != 1)
		return cr_fail(&ld->r, is, "choose the packets one way: %s",
			       tx ? "psn, every or probability" : "every or probability");
	return 0;
}

int ld_inject_list(struct loader *ld, const config_setting_t *parent, const char *key, struct cfg_inject *out,
		   unsigned *n_out, bool tx, unsigned qps)
{
	const config_setting_t *ls = config_setting_get_member(parent, key);
	int n;

	*n_out = 0;
	if (!ls)
		return 0;
	if (!config_setting_is_list(ls))
		return cr_fail(&ld->r, ls, "must be a list ( { action = ...; ... }, ... )");
	n = config_setting_length(ls);
	if (n > CFG_MAX_INJECT)
		return cr_fail(&ld->r, ls, "%d entries (at most %d)", n, CFG_MAX_INJECT);
	for (int i = 0; i < n; i++)
		if (parse_inject(ld, config_setting_get_elem(ls, (unsigned)i), &out[i], tx, qps))
			return -1;
	*n_out = (unsigned)n;
	return 0;
}

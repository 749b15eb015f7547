/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Quality of service: a port's qos group (trust, DSCP and priority maps, PFC watch, egress
 * scheduling) and the `pfc_generators` list.
 */
#include "config_internal.h"

/* An array of 8 numbers in [lo, hi] (integers when `ints`). */
static int eight_numbers(struct loader *ld, const config_setting_t *s, double lo, double hi, bool ints, double out[8])
{
	if (config_setting_type(s) != CONFIG_TYPE_ARRAY || config_setting_length(s) != 8)
		return cr_fail(&ld->r, s, "must be an array of 8 values, one per traffic class 0..7");
	for (unsigned i = 0; i < 8; i++) {
		const config_setting_t *e = config_setting_get_elem(s, i);
		int t = config_setting_type(e);
		double v = t == CONFIG_TYPE_FLOAT ? config_setting_get_float(e) : (double)config_setting_get_int64(e);
		if ((t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64 && (ints || t != CONFIG_TYPE_FLOAT)) || v < lo || v > hi)
			return cr_fail(&ld->r, s, "element %u must be %s %g..%g", i, ints ? "an integer" : "a number",
				       lo, hi);
		out[i] = v;
	}
	return 0;
}

/* egress = { shape_gbps; strict = [..]; weights = [8]; tc_shape_gbps = [8]; } */
static int port_egress(struct loader *ld, const config_setting_t *qs, struct cfg_port *p)
{
	static const char *const keys[] = { "shape_gbps", "strict", "weights", "tc_shape_gbps", NULL };
	const config_setting_t *es, *s;
	double v[8];
	long long k;
	int rc;

	if ((rc = cr_opt_group(&ld->r, qs, "egress", &es)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, es, keys))
		return -1;
	if (!cr_required(&ld->r, es, "shape_gbps", "the port's egress rate in Gb/s, > 0 (the classes share it)") ||
	    cr_opt_float(&ld->r, es, "shape_gbps", 0, true, 800, &p->egress_gbps) < 0)
		return -1;
	if ((s = config_setting_get_member(es, "strict"))) {
		if (config_setting_type(s) != CONFIG_TYPE_ARRAY)
			return cr_fail(&ld->r, s,
				       "must be an array of traffic classes 0..7 served strictly, e.g. [6, 7]");
		for (int i = 0; i < config_setting_length(s); i++) {
			if (cr_int_range(&ld->r, config_setting_get_elem(s, (unsigned)i), 0, 7, false, &k))
				return -1;
			p->strict_tcs |= (uint8_t)(1u << k);
		}
	}
	if ((s = config_setting_get_member(es, "weights"))) {
		if (eight_numbers(ld, s, 1, 1000, true, v))
			return -1;
		for (unsigned i = 0; i < 8; i++)
			p->ets_weight[i] = (unsigned)v[i];
	}
	if ((s = config_setting_get_member(es, "tc_shape_gbps")) &&
	    eight_numbers(ld, s, 0, 800, false, p->tc_shape_gbps))
		return -1;
	return 0;
}

/* A non-empty array of priorities 0..7 as a bit mask. */
int ld_priority_mask(struct loader *ld, const config_setting_t *s, uint8_t *mask)
{
	long long v;

	if (config_setting_type(s) != CONFIG_TYPE_ARRAY || config_setting_length(s) < 1)
		return cr_fail(&ld->r, s, "must be a non-empty array of priorities 0..7, e.g. [3]");
	for (int k = 0; k < config_setting_length(s); k++) {
		if (cr_int_range(&ld->r, config_setting_get_elem(s, (unsigned)k), 0, 7, false, &v))
			return -1;
		*mask |= (uint8_t)(1u << v);
	}
	return 0;
}

/* pfc_xoff = { priorities = [..]; xoff_bytes; xon_bytes; quanta; refresh_us; drain_gbps; } */
static int port_pfc_xoff(struct loader *ld, const config_setting_t *qs, struct cfg_port *p)
{
	static const char *const keys[] = { "priorities", "xoff_bytes", "xon_bytes", "quanta", "refresh_us", "drain_gbps",
					    NULL };
	const config_setting_t *xs, *s;
	long long v;
	unsigned quanta = 0xFFFF;
	int rc;

	if ((rc = cr_opt_group(&ld->r, qs, "pfc_xoff", &xs)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, xs, keys))
		return -1;
	s = cr_required(&ld->r, xs, "priorities", "an array of priorities 0..7 whose backlog is watched, e.g. [3]");
	if (!s)
		return -1;
	if (ld_priority_mask(ld, s, &p->xoff_priorities))
		return -1;
	if (!cr_required(&ld->r, xs, "xoff_bytes", "bytes of backlog above which XOFF is sent") ||
	    cr_opt_int(&ld->r, xs, "xoff_bytes", 1, (long long)1 << 40, false, &v) < 0)
		return -1;
	p->xoff_bytes = (uint64_t)v;
	if (!cr_required(&ld->r, xs, "xon_bytes", "bytes of backlog at or below which XON is sent") ||
	    cr_opt_int(&ld->r, xs, "xon_bytes", 0, (long long)1 << 40, false, &v) < 0)
		return -1;
	p->xon_bytes = (uint64_t)v;
	if (p->xon_bytes >= p->xoff_bytes)
		return cr_fail_member(&ld->r, xs, "xon_bytes", "%llu is not below xoff_bytes %llu",
				      (unsigned long long)p->xon_bytes, (unsigned long long)p->xoff_bytes);
	if (cr_opt_u32(&ld->r, xs, "quanta", 1, 0xFFFF, &quanta) < 0 ||
	    cr_opt_float(&ld->r, xs, "refresh_us", 0, false, 1e7, &p->xoff_refresh_us) < 0)
		return -1;
	p->xoff_quanta = (uint16_t)quanta;
	if (!cr_required(&ld->r, xs, "drain_gbps", "how fast the watched backlog drains (Gb/s), > 0") ||
	    cr_opt_float(&ld->r, xs, "drain_gbps", 0, true, 800, &p->xoff_drain_gbps) < 0)
		return -1;
	return 0;
}

/* qos = { trust = "dscp" | "pcp"; dscp_to_priority = [64 priorities]; honour_pfc = true; pfc_xoff = {...}; } */
int ld_port_qos(struct loader *ld, const config_setting_t *ps, struct cfg_port *p)
{
	static const char *const keys[] = { "trust", "dscp_to_priority", "honour_pfc", "pfc_xoff", "nic_pfc", "egress",
					    "priority_to_tc", "tc_to_queue", NULL };
	static const char *const trusts[] = { "dscp", "pcp", NULL };
	const config_setting_t *qs, *s;
	int rc, i;

	for (unsigned d = 0; d < 64; d++)
		p->dscp_to_priority[d] = (uint8_t)(d >> 3);
	for (unsigned i = 0; i < 8; i++) {
		p->priority_to_tc[i] = (uint8_t)i;
		p->ets_weight[i] = 1; /* the egress scheduler's, also where the fabric paces a NIC */
	}
	p->honour_pfc = true;
	if ((rc = cr_opt_group(&ld->r, ps, "qos", &qs)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, qs, keys) || cr_opt_bool(&ld->r, qs, "honour_pfc", &p->honour_pfc) < 0 ||
	    cr_opt_bool(&ld->r, qs, "nic_pfc", &p->nic_pfc) < 0)
		return -1;
	if ((s = config_setting_get_member(qs, "trust"))) {
		if ((i = cr_pick(&ld->r, s, trusts, NULL)) < 0)
			return -1;
		p->trust_pcp = i == 1;
	}
	if ((s = config_setting_get_member(qs, "dscp_to_priority"))) {
		if (config_setting_type(s) != CONFIG_TYPE_ARRAY || config_setting_length(s) != 64)
			return cr_fail(&ld->r, s, "must be an array of 64 priorities 0..7 (index: the DSCP)");
		for (unsigned d = 0; d < 64; d++) {
			const config_setting_t *e = config_setting_get_elem(s, d);
			if (config_setting_type(e) != CONFIG_TYPE_INT || config_setting_get_int(e) < 0 ||
			    config_setting_get_int(e) > 7)
				return cr_fail(&ld->r, s, "element %u (DSCP %u) must be a priority 0..7", d, d);
			p->dscp_to_priority[d] = (uint8_t)config_setting_get_int(e);
		}
	}
	if ((s = config_setting_get_member(qs, "priority_to_tc"))) {
		double v[8];
		if (eight_numbers(ld, s, 0, 7, true, v))
			return -1;
		for (unsigned i = 0; i < 8; i++)
			p->priority_to_tc[i] = (uint8_t)v[i];
	}
	if ((s = config_setting_get_member(qs, "tc_to_queue"))) {
		double v[8];
		if (eight_numbers(ld, s, 0, p->tx_queues - 1, true, v))
			return -1;
		for (unsigned i = 0; i < 8; i++)
			p->tc_to_queue[i] = (uint8_t)v[i];
		p->has_tc_to_queue = true;
	}
	return port_pfc_xoff(ld, qs, p) || port_egress(ld, qs, p) ? -1 : 0;
}

/* ---- PFC generators ------------------------------------------------------------------------- */

static int parse_pfc_generator(struct loader *ld, const config_setting_t *gs, struct cfg_pfc_generator *g)
{
	static const char *const keys[] = { "port", "priorities", "quanta", "pause", "rate_pps", "count", "start_s",
					    NULL };
	const config_setting_t *s;
	unsigned quanta = 0xFFFF;
	long long v;
	int i;

	if (cr_want_type(&ld->r, gs, CONFIG_TYPE_GROUP,
			 "a group { port = ...; priorities = [...]; rate_pps = ...; }") ||
	    cr_known_keys(&ld->r, gs, keys))
		return -1;
	g->line = config_setting_source_line(gs);
	if ((i = ld_port_ref(ld, gs)) < 0)
		return -1;
	g->port = (unsigned)i;
	if (cr_opt_bool(&ld->r, gs, "pause", &g->pause) < 0 || cr_opt_u32(&ld->r, gs, "quanta", 0, 0xFFFF, &quanta) < 0)
		return -1;
	g->quanta = (uint16_t)quanta;
	s = config_setting_get_member(gs, "priorities");
	if (s && g->pause)
		return cr_fail(&ld->r, s,
			       "an 802.3x PAUSE frame (pause = true) pauses every priority: no priorities here");
	if (!s && !g->pause)
		return cr_fail_member(&ld->r, gs, "priorities",
				      "missing (required: an array of priorities 0..7, e.g. [3])");
	if (s) {
		if (config_setting_type(s) != CONFIG_TYPE_ARRAY || config_setting_length(s) < 1)
			return cr_fail(&ld->r, s, "must be a non-empty array of priorities 0..7, e.g. [3, 4]");
		for (int k = 0; k < config_setting_length(s); k++) {
			const config_setting_t *e = config_setting_get_elem(s, (unsigned)k);
			if (cr_int_range(&ld->r, e, 0, 7, false, &v))
				return -1;
			g->class_enable |= (uint8_t)(1u << v);
		}
	}
	s = cr_required(&ld->r, gs, "rate_pps", "frames per second, > 0 (e.g. 1000; a storm: 1e6)");
	if (!s || cr_opt_float(&ld->r, gs, "rate_pps", 0, true, 1e8, &g->rate_pps) < 0)
		return -1;
	if (cr_opt_int(&ld->r, gs, "count", 0, (long long)1 << 40, false, &v) < 0 ||
	    cr_opt_float(&ld->r, gs, "start_s", 0, false, 1e6, &g->start_s) < 0)
		return -1;
	if (config_setting_get_member(gs, "count"))
		g->count = (uint64_t)v;
	for (unsigned r = 0; r < ld->cfg->n_roles; r++)
		if (ld->cfg->roles[r].port == g->port && ld->cfg->roles[r].role == (ld->cfg->roles[r].role & CFG_ROLE_TXRX) &&
		    (ld->cfg->roles[r].role & CFG_ROLE_TX))
			return 0;
	return cr_fail_member(&ld->r, gs, "port", "port '%s' has no tx role in lcores (the generator sends from it)",
			      ld->cfg->ports[g->port].name);
}

int ld_parse_pfc_generators(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *s = config_setting_get_member(root, "pfc_generators");
	int n;

	if (!s)
		return 0;
	if ((n = ld_list_length(ld, s, "( { port = ...; priorities = [...]; rate_pps = ...; }, ... )", "generators", 0,
				CFG_MAX_PFC_GENERATORS)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (parse_pfc_generator(ld, config_setting_get_elem(s, (unsigned)i), &ld->cfg->pfc_generators[i]))
			return -1;
		ld->cfg->n_pfc_generators++;
	}
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The `switch` group: the virtual lab's software switch (docs/virtual-lab.md), its buffer, PFC,
 * ECN marking, forwarding table and VLANs, and the lcore roles that poll its ports.
 */
#include "config_internal.h"

#include <string.h>

/* ecn = ( { tc; kmin_kb; kmax_kb; pmax; }, ... ): RED marking per traffic class */
static int switch_ecn(struct loader *ld, const config_setting_t *ss, struct cfg_switch *w)
{
	static const char *const keys[] = { "tc", "kmin_kb", "kmax_kb", "pmax", NULL };
	const config_setting_t *ls = config_setting_get_member(ss, "ecn");
	double kmin, kmax;
	unsigned tc;

	if (!ls)
		return 0;
	if (!config_setting_is_list(ls))
		return cr_fail(&ld->r, ls, "must be a list ( { tc = N; kmin_kb = X; kmax_kb = Y; pmax = P; }, ... )");
	memset(w->has_red, 0, sizeof(w->has_red)); /* a tier's list replaces the switch group's */
	for (int i = 0; i < config_setting_length(ls); i++) {
		const config_setting_t *e = config_setting_get_elem(ls, (unsigned)i);
		if (cr_want_type(&ld->r, e, CONFIG_TYPE_GROUP, "a group { tc; kmin_kb; kmax_kb; pmax; }") ||
		    cr_known_keys(&ld->r, e, keys) || !cr_required(&ld->r, e, "tc", "a traffic class 0..7") ||
		    cr_opt_u32(&ld->r, e, "tc", 0, 7, &tc) < 0 || !cr_required(&ld->r, e, "kmin_kb", "KB, >= 0") ||
		    cr_opt_float(&ld->r, e, "kmin_kb", 0, false, 1e9, &kmin) < 0 ||
		    !cr_required(&ld->r, e, "kmax_kb", "KB, >= kmin_kb") ||
		    cr_opt_float(&ld->r, e, "kmax_kb", 0, false, 1e9, &kmax) < 0)
			return -1;
		if (kmax < kmin)
			return cr_fail_member(&ld->r, e, "kmax_kb", "%g is below kmin_kb %g", kmax, kmin);
		if (w->has_red[tc])
			return cr_fail_member(&ld->r, e, "tc", "class %u already has ECN marking (one entry per class)", tc);
		w->red[tc].pmax = 1.0;
		if (cr_opt_float(&ld->r, e, "pmax", 0, false, 1, &w->red[tc].pmax) < 0)
			return -1;
		w->has_red[tc] = true;
		w->red[tc].kmin_bytes = (uint64_t)(kmin * 1024);
		w->red[tc].kmax_bytes = (uint64_t)(kmax * 1024);
	}
	return 0;
}

/* pfc.watchdog = { action = "drop" | "forward"; detect_ms; restore_ms; } */
static int switch_watchdog(struct loader *ld, const config_setting_t *ps, struct cfg_switch *w)
{
	static const char *const keys[] = { "action", "detect_ms", "restore_ms", NULL };
	static const char *const actions[] = { "drop", "forward", NULL };
	const config_setting_t *ws, *s;
	int rc, a;

	w->wd_detect_ms = 100;
	w->wd_restore_ms = 200;
	if ((rc = cr_opt_group(&ld->r, ps, "watchdog", &ws)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, ws, keys) || !(s = cr_required(&ld->r, ws, "action", "drop or forward")) ||
	    (a = cr_pick(&ld->r, s, actions, NULL)) < 0 ||
	    cr_opt_float(&ld->r, ws, "detect_ms", 0, true, 60000, &w->wd_detect_ms) < 0 ||
	    cr_opt_float(&ld->r, ws, "restore_ms", 0, true, 60000, &w->wd_restore_ms) < 0)
		return -1;
	w->wd_action = (unsigned)a + 1;
	return 0;
}

/* pfc = { priorities = [3]; xoff_kb; xon_kb; headroom_kb; quanta; watchdog; } */
static int switch_pfc(struct loader *ld, const config_setting_t *ss, struct cfg_switch *w)
{
	static const char *const keys[] = { "priorities", "xoff_kb", "xon_kb", "headroom_kb", "quanta", "watchdog", NULL };
	const config_setting_t *ps, *s;
	double xoff = 100, xon = 80, headroom = 100;
	unsigned quanta = 0xFFFF;
	int rc;

	if ((rc = cr_opt_group(&ld->r, ss, "pfc", &ps)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, ps, keys) ||
	    !(s = cr_required(&ld->r, ps, "priorities", "an array of lossless priorities 0..7, e.g. [3]")) ||
	    ld_priority_mask(ld, s, &w->pfc_priorities) || cr_opt_float(&ld->r, ps, "xoff_kb", 0, true, 1e9, &xoff) < 0 ||
	    cr_opt_float(&ld->r, ps, "xon_kb", 0, false, 1e9, &xon) < 0 ||
	    cr_opt_float(&ld->r, ps, "headroom_kb", 0, false, 1e9, &headroom) < 0 ||
	    cr_opt_u32(&ld->r, ps, "quanta", 1, 0xFFFF, &quanta) < 0 || switch_watchdog(ld, ps, w))
		return -1;
	if (xon > xoff)
		return cr_fail_member(&ld->r, ps, "xon_kb", "%g is above xoff_kb %g", xon, xoff);
	w->xoff_bytes = (uint64_t)(xoff * 1024);
	w->xon_bytes = (uint64_t)(xon * 1024);
	w->headroom_bytes = (uint64_t)(headroom * 1024);
	w->pfc_quanta = (uint16_t)quanta;
	return 0;
}

/* fdb = ( { mac = "..."; port = "s4"; }, ... ): hosts the switch knows before they send (those on
 * its ring cables it knows anyway; others are learned from their source MACs). */
static int switch_fdb(struct loader *ld, const config_setting_t *ss, struct cfg_switch *w)
{
	static const char *const keys[] = { "mac", "port", NULL };
	const config_setting_t *ls = config_setting_get_member(ss, "fdb"), *s;
	int p;

	if (!ls)
		return 0;
	if (!config_setting_is_list(ls) || config_setting_length(ls) > CFG_MAX_FDB)
		return cr_fail(&ld->r, ls, "must be a list of up to %d { mac = \"...\"; port = \"...\"; }", CFG_MAX_FDB);
	for (int i = 0; i < config_setting_length(ls); i++) {
		const config_setting_t *e = config_setting_get_elem(ls, (unsigned)i);
		if (cr_want_type(&ld->r, e, CONFIG_TYPE_GROUP, "a group { mac; port; }") || cr_known_keys(&ld->r, e, keys) ||
		    !(s = cr_required(&ld->r, e, "mac", "the host's MAC address")) || ld_mac_value(ld, s, w->fdb[i].mac) ||
		    (p = ld_port_ref(ld, e)) < 0)
			return -1;
		if (!ld->cfg->ports[p].is_switch_port)
			return cr_fail_member(&ld->r, e, "port", "port '%s' is not a switch port (role \"switch\")",
					      ld->cfg->ports[p].name);
		w->fdb[i].port = (unsigned)p;
	}
	w->n_fdb = (unsigned)config_setting_length(ls);
	return 0;
}

/* vlans = ( { vid = 100; ports = ["s0", "s1"]; }, ... ): a tagged frame goes only between ports of
 * its VLAN; untagged frames go anywhere. */
static int switch_vlans(struct loader *ld, const config_setting_t *ss, struct cfg_switch *w)
{
	static const char *const keys[] = { "vid", "ports", NULL };
	const config_setting_t *ls = config_setting_get_member(ss, "vlans"), *ps;
	unsigned vid;

	if (!ls)
		return 0;
	if (!config_setting_is_list(ls) || config_setting_length(ls) > CFG_MAX_VLANS)
		return cr_fail(&ld->r, ls, "must be a list of up to %d { vid = N; ports = [\"s0\", ...]; }", CFG_MAX_VLANS);
	for (int i = 0; i < config_setting_length(ls); i++) {
		const config_setting_t *e = config_setting_get_elem(ls, (unsigned)i);
		if (cr_want_type(&ld->r, e, CONFIG_TYPE_GROUP, "a group { vid; ports; }") || cr_known_keys(&ld->r, e, keys) ||
		    !cr_required(&ld->r, e, "vid", "1..4094") || cr_opt_u32(&ld->r, e, "vid", 1, 4094, &vid) < 0 ||
		    !(ps = cr_required(&ld->r, e, "ports", "an array of switch ports' names")))
			return -1;
		for (int j = 0; j < i; j++)
			if (w->vlans[j].vid == vid)
				return cr_fail_member(&ld->r, e, "vid", "VLAN %u is already listed (one entry per VLAN)", vid);
		if (config_setting_type(ps) != CONFIG_TYPE_ARRAY || config_setting_length(ps) < 1)
			return cr_fail(&ld->r, ps, "must be a non-empty array of switch ports' names");
		w->vlans[i].vid = (uint16_t)vid;
		for (int k = 0; k < config_setting_length(ps); k++) {
			const config_setting_t *n = config_setting_get_elem(ps, (unsigned)k);
			int p = config_setting_type(n) == CONFIG_TYPE_STRING
					? config_port_index(ld->cfg, config_setting_get_string(n)) : -1;
			if (p < 0 || !ld->cfg->ports[p].is_switch_port)
				return cr_fail(&ld->r, ps, "element %d is not the name of a switch port", k);
			w->vlans[i].ports |= (uint16_t)(1u << p);
		}
	}
	w->n_vlans = (unsigned)config_setting_length(ls);
	return 0;
}

/* The switch roles: all on one lcore, and only where a `switch` group says how to switch. */
/* The most any fabric switch buffers (its tier's or the switch group's). */
static uint64_t fabric_buffer_bytes(const struct engine_config *c)
{
	uint64_t most = c->sw.buffer_bytes;

	for (unsigned t = 0; t < FAB_TIERS; t++)
		if (c->fab.tier_set >> t & 1 && c->fab.tier_sw[t].buffer_bytes > most)
			most = c->fab.tier_sw[t].buffer_bytes;
	return most;
}

static int switch_roles(struct loader *ld, const config_setting_t *root)
{
	struct engine_config *c = ld->cfg;
	int first = -1;

	for (unsigned i = 0; i < c->n_roles; i++) {
		if (c->roles[i].role != CFG_ROLE_SWITCH)
			continue;
		if (c->fab.present)
			return cr_fail(&ld->r, config_setting_get_elem(config_setting_get_member(root, "lcores"), i),
				       "role \"switch\" with a fabric: the fabric's switches poll their own cables (the "
				       "`switch` group gives their buffer, ECN and PFC; fabric.lcore their lcore)");
		if (!c->sw.present)
			return cr_fail_member(&ld->r, root, "switch", "missing: lcores.[%u] has role \"switch\" (add a "
					      "switch = { buffer_kb = ...; } group)", i);
		if (first < 0)
			first = (int)i;
		else if (c->roles[i].lcore != c->roles[first].lcore)
			return cr_fail(&ld->r, config_setting_get_elem(config_setting_get_member(root, "lcores"), i),
				       "switch ports are all polled by one lcore (lcore %u at %s, here lcore %u)",
				       c->roles[first].lcore, cr_at(&ld->r, c->roles[first].line, (char[CR_AT_LEN]){ 0 }),
				       c->roles[i].lcore);
		c->sw.n_ports++;
		c->ports[c->roles[i].port].is_switch_port = true;
	}
	/* frames wait in the switch's buffer in the mbufs they came in: on a ring cable the sender's
	 * own (its TX pools), elsewhere the switch port's; sized for 512-byte frames on average */
	for (unsigned p = 0; c->sw.present && p < c->n_ports; p++) {
		int peer = config_ring_peer(c, p);
		if (c->ports[p].is_switch_port || (peer >= 0 && c->ports[peer].is_switch_port))
			c->ports[p].extra_mbufs = (unsigned)(c->sw.buffer_bytes / 512);
	}
	/* a fabric NIC's frames wait in the switches in its own mbufs: one buffer's worth of them.
	 * More would need this NIC alone to fill more than a switch's buffer at once (its leaf's, a
	 * spine's and the far leaf's are shared with every other NIC): sizing for that (three
	 * buffers, as before) tripled every fabric run's start, the pools' pages being most of it.
	 * A NIC that still runs short counts mbuf_alloc_failures and sends less, and says so. */
	for (unsigned n = 0; c->fab.present && !c->fab.external && n < c->fab.n_nics; n++)
		c->ports[c->fab.first_port + n].extra_mbufs = (unsigned)(fabric_buffer_bytes(c) / 512);
	if (c->sw.present && !c->fab.present && c->sw.n_ports < 2)
		return cr_fail_member(&ld->r, root, "switch", "a switch needs at least two ports with role \"switch\" in "
				      "lcores (it has %u)", c->sw.n_ports);
	return 0;
}

/* buffer_kb, queue_limit_kb, alpha, pfc, ecn of group ss, over what w holds (the defaults, or
 * for a fabric tier the switch group's): what is not given stays. */
static int switch_buffer(struct loader *ld, const config_setting_t *ss, struct cfg_switch *w)
{
	double buffer = (double)w->buffer_bytes / 1024, limit = (double)w->queue_limit_bytes / 1024;

	if (cr_opt_float(&ld->r, ss, "buffer_kb", 1, false, 1 << 20, &buffer) < 0 ||
	    cr_opt_float(&ld->r, ss, "queue_limit_kb", 0, false, 1 << 20, &limit) < 0 ||
	    cr_opt_float(&ld->r, ss, "alpha", 0, false, 64, &w->alpha) < 0 || switch_pfc(ld, ss, w) || switch_ecn(ld, ss, w))
		return -1;
	if (limit > buffer)
		return cr_fail_member(&ld->r, ss, "queue_limit_kb", "%g is above buffer_kb %g", limit, buffer);
	w->buffer_bytes = (uint64_t)(buffer * 1024);
	w->queue_limit_bytes = (uint64_t)(limit * 1024);
	if (w->pfc_priorities && w->xoff_bytes + w->headroom_bytes > w->buffer_bytes)
		return cr_fail_member(&ld->r, ss, "pfc", "xoff_kb + headroom_kb exceed buffer_kb: one port could fill the "
				      "buffer before its PFC takes effect");
	return 0;
}

/* switch.leaf / spine / core = { buffer_kb; queue_limit_kb; alpha; pfc; ecn; }: the switches of a
 * fabric tier, over the switch group's settings. */
static int switch_tiers(struct loader *ld, const config_setting_t *ss)
{
	static const char *const names[FAB_TIERS] = { [FAB_TIER_LEAF] = "leaf", [FAB_TIER_SPINE] = "spine",
						      [FAB_TIER_CORE] = "core" };
	static const char *const keys[] = { "buffer_kb", "queue_limit_kb", "alpha", "pfc", "ecn", NULL };
	struct cfg_fabric *f = &ld->cfg->fab;

	for (unsigned t = FAB_TIER_LEAF; t < FAB_TIERS; t++) {
		const config_setting_t *ts;
		unsigned n = 0;
		int rc;

		if ((rc = cr_opt_group(&ld->r, ss, names[t], &ts)) <= 0) {
			if (rc < 0)
				return -1;
			continue;
		}
		if (!f->present)
			return cr_fail(&ld->r, ts, "a fabric tier's settings, but the file has no fabric");
		for (unsigned s = 0; s < f->n_switches; s++)
			n += f->sw[s].tier == t;
		if (!n)
			return cr_fail(&ld->r, ts, "the fabric has no %s switches", names[t]);
		f->tier_sw[t] = ld->cfg->sw;
		f->tier_sw[t].line = config_setting_source_line(ts);
		if (cr_known_keys(&ld->r, ts, keys) || switch_buffer(ld, ts, &f->tier_sw[t]))
			return -1;
		f->tier_set |= (uint8_t)(1u << t);
	}
	return 0;
}

const struct cfg_switch *config_fabric_switch(const struct engine_config *cfg, unsigned s)
{
	unsigned tier = cfg->fab.sw[s].tier;

	return tier < FAB_TIERS && cfg->fab.tier_set >> tier & 1 ? &cfg->fab.tier_sw[tier] : &cfg->sw;
}

#define RING_FRAMES_MIN 64 /* two bursts of a switch port or a NIC's TX role */

unsigned config_fabric_ring_frames(const struct engine_config *cfg, unsigned rx_sw, unsigned most)
{
	const struct cfg_switch *t = config_fabric_switch(cfg, rx_sw);
	uint64_t frame = (uint64_t)cfg->ports[cfg->fab.first_port].mtu + 22; /* Ethernet, VLAN tag, FCS */
	uint64_t n = t->headroom_bytes / 2 / frame;

	if (!t->pfc_priorities || n > most)
		return most;
	return n < RING_FRAMES_MIN ? RING_FRAMES_MIN : (unsigned)n;
}

/* A fabric NIC's cable holds what its leaf's lossless headroom can take in at once
 * (config_fabric_ring_frames): more, sent while the leaf's lcore was held up, would overflow it. */
static void fabric_cables(struct engine_config *c)
{
	for (unsigned l = 0; c->fab.present && l < c->fab.n_links; l++) {
		const struct cfg_fab_link *k = &c->fab.links[l];
		struct cfg_port *p = &c->ports[k->b];
		if (k->to_nic)
			p->cable_frames = config_fabric_ring_frames(c, k->sw, p->rx_desc > p->tx_desc ? p->rx_desc : p->tx_desc);
	}
}

/* switch = { buffer_kb; queue_limit_kb; alpha; pfc = {...}; ecn = (...); delay_us; trace;
 * trace_interval_us; seed; leaf / spine / core = { ... }; } */
int ld_parse_switch(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "buffer_kb", "queue_limit_kb", "alpha", "pfc", "ecn", "delay_us", "trace",
					    "trace_interval_us", "seed", "fdb", "vlans", "leaf", "spine", "core", NULL };
	struct cfg_switch *w = &ld->cfg->sw;
	const config_setting_t *ss;
	long long seed;
	int rc;

	/* the defaults stand also without the group: a fabric's switches take them */
	w->delay_us = 1;
	w->trace_interval_us = 100;
	w->seed = 1;
	w->buffer_bytes = 2048 * 1024;
	if ((rc = cr_opt_group(&ld->r, root, "switch", &ss)) < 0)
		return -1;
	if (rc == 1 && ld->cfg->fab.external)
		return cr_fail(&ld->r, ss, "not with fabric.external: the fabric's switches are outside the engine (their "
			       "buffers, ECN and PFC are the real switches' settings)");
	if (rc == 1) {
		w->present = true;
		w->line = config_setting_source_line(ss);
		if (cr_known_keys(&ld->r, ss, keys) || switch_buffer(ld, ss, w) ||
		    cr_opt_float(&ld->r, ss, "delay_us", 0, false, 1e6, &w->delay_us) < 0 ||
		    ld_opt_str(ld, ss, "trace", w->trace, sizeof(w->trace)) < 0 ||
		    cr_opt_float(&ld->r, ss, "trace_interval_us", 1, false, 1e9, &w->trace_interval_us) < 0 ||
		    (rc = cr_opt_int(&ld->r, ss, "seed", 1, (long long)1 << 62, false, &seed)) < 0 || switch_tiers(ld, ss))
			return -1;
		if (rc == 1)
			w->seed = (uint64_t)seed;
	}
	if (switch_roles(ld, root))
		return -1;
	if (w->present && ld->cfg->fab.present)
		for (const char *const *k = (const char *const[]){ "trace", "fdb", "vlans", NULL }; *k; k++)
			if (config_setting_get_member(ss, *k))
				return cr_fail_member(&ld->r, ss, *k, "not with a fabric: its switches route at L3 (the "
						      "report's fabric.links[] and fabric.switches[] give every link's and "
						      "queue's counters)");
	fabric_cables(ld->cfg);
	return w->present ? switch_fdb(ld, ss, w) || switch_vlans(ld, ss, w) : 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The `flows` list (each group's transport, operations, message sizes, addresses, QPNs, header
 * fields, rate, pattern, stop, RC and latency settings, expansion into QPs; QPNs that must not
 * overlap on a port) and the `collectives` list, which groups flows and the receiver QPs whose
 * messages their phases wait for.
 */
#include "config_internal.h"

#include <arpa/inet.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

#define MAX_MSG_SIZE (1u << 30)
#define MAX_QPN 0xFFFFFFu

static const char *const transport_names[] = { "rc", "uc", "ud", NULL };

static int flow_ops(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	static const char *const keys[] = { "send", "send_imm", "write", "write_imm", "read", "fetch_add",
					    "compare_swap", NULL };
	const config_setting_t *ops;
	unsigned total = 0;

	if (cr_opt_group(&ld->r, fs, "ops", &ops) < 0)
		return -1;
	if (!ops)
		return 0; /* send = 1 */
	if (cr_known_keys(&ld->r, ops, keys))
		return -1;
	memset(g->op_weight, 0, sizeof(g->op_weight));
	for (int op = 0; op < CFG_OP_COUNT; op++) {
		if (cr_opt_u32(&ld->r, ops, keys[op], 0, 1000, &g->op_weight[op]) < 0)
			return -1;
		total += g->op_weight[op];
		if (!g->op_weight[op])
			continue;
		if (g->transport == CFG_UD && op >= CFG_OP_WRITE)
			return cr_fail_member(&ld->r, ops, keys[op], "UD has no %s (UD allows only send and send_imm)",
					      keys[op]);
		if (g->transport == CFG_UC && op >= CFG_OP_READ)
			return cr_fail_member(&ld->r, ops, keys[op], "UC has no %s (UC allows send, send_imm, write, "
					      "write_imm)", keys[op]);
	}
	if (!total)
		return cr_fail(&ld->r, ops,
			       "every weight is 0 (at least one of send, send_imm, write, write_imm, read, "
			       "fetch_add, compare_swap must be 1..1000)");
	return 0;
}

static int size_member(struct loader *ld, const config_setting_t *ms, const char *key, uint32_t *out)
{
	const config_setting_t *s = cr_required(&ld->r, ms, key, "a size in bytes, 0..1073741824");
	long long v;

	if (!s || cr_int_range(&ld->r, s, 0, MAX_MSG_SIZE, false, &v))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* message_size: an integer (fixed) or a group naming a distribution. */
static int flow_size_group(struct loader *ld, const config_setting_t *ms, struct cfg_size *z)
{
	static const char *const dists[] = { "fixed", "uniform", "exponential", NULL };
	static const char *const keys[][5] = { { "dist", "size", NULL }, { "dist", "min", "max", NULL },
					       { "dist", "mean", "min", "max", NULL } };
	const config_setting_t *s = cr_required(&ld->r, ms, "dist", "fixed, uniform or exponential");
	int d;

	if (!s || (d = cr_pick(&ld->r, s, dists, NULL)) < 0 || cr_known_keys(&ld->r, ms, keys[d]))
		return -1;
	z->dist = (enum cfg_size_dist)d;
	if (d == CFG_SIZE_FIXED) {
		if (size_member(ld, ms, "size", &z->fixed))
			return -1;
		z->min = z->max = z->mean = z->fixed;
		return 0;
	}
	if (size_member(ld, ms, "min", &z->min) || size_member(ld, ms, "max", &z->max))
		return -1;
	if (z->max < z->min)
		return cr_fail_member(&ld->r, ms, "max", "max %u is below min %u (1 <= min <= max)", z->max, z->min);
	if (d == CFG_SIZE_UNIFORM) {
		z->mean = (uint32_t)(((uint64_t)z->min + z->max) / 2);
		return 0;
	}
	if (size_member(ld, ms, "mean", &z->mean))
		return -1;
	if (z->mean < z->min || z->mean > z->max)
		return cr_fail_member(&ld->r, ms, "mean", "mean %u is outside min..max %u..%u (min <= mean <= max)",
				      z->mean, z->min, z->max);
	return 0;
}

static int flow_size(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	const config_setting_t *ms = config_setting_get_member(fs, "message_size");
	struct cfg_size *z = &g->msg_size;
	long long v;

	/* default: one full packet per message */
	z->dist = CFG_SIZE_FIXED;
	z->fixed = z->min = z->max = z->mean = g->ib_mtu;
	if (ms && config_setting_type(ms) == CONFIG_TYPE_GROUP) {
		if (flow_size_group(ld, ms, z))
			return -1;
	} else if (ms) {
		if (config_setting_type(ms) != CONFIG_TYPE_INT && config_setting_type(ms) != CONFIG_TYPE_INT64)
			return cr_fail(&ld->r, ms, "must be an integer or a group { dist = ...; }, not %s",
				       cr_type_name(ms));
		if (cr_int_range(&ld->r, ms, 0, MAX_MSG_SIZE, false, &v))
			return -1;
		z->fixed = z->min = z->max = z->mean = (uint32_t)v;
	}
	if (g->transport == CFG_UD && z->max > g->ib_mtu)
		return cr_fail_member(&ld->r, fs, "message_size",
				      "UD messages are single packets: %u bytes is above the "
				      "flow's mtu %u (every size <= mtu)", z->max, g->ib_mtu);
	return 0;
}

static int flow_mtu(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	const struct cfg_port *p = &ld->cfg->ports[g->port];
	unsigned need;
	int rc;

	rc = cr_opt_u32(&ld->r, fs, "mtu", 256, 4096, &g->ib_mtu);
	if (rc < 0)
		return -1;
	if (g->ib_mtu & (g->ib_mtu - 1))
		return cr_fail_member(&ld->r, fs, "mtu", "%u is not an IB MTU (256, 512, 1024, 2048 or 4096)",
				      g->ib_mtu);
	/* the largest packet: payload + IP + UDP + BTH + the longest extended header + ICRC */
	need = g->ib_mtu + (g->ip_version == 4 ? WIRE_IPV4_HLEN : WIRE_IPV6_HLEN) + WIRE_UDP_HLEN + WIRE_BTH_LEN +
	       WIRE_ATOMICETH_LEN + WIRE_ICRC_LEN;
	if (need > p->mtu)
		return cr_fail_member(&ld->r, fs, "mtu", "IB MTU %u needs an IP MTU of at least %u, port '%s' has %u "
				      "(lower mtu or raise the port's mtu)", g->ib_mtu, need, p->name, p->mtu);
	return 0;
}

static int flow_addresses(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	const struct cfg_port *p = &ld->cfg->ports[g->port];
	const config_setting_t *s;
	char buf[64];
	const char *v;

	if (config_setting_get_member(fs, "dst"))
		return ld_flow_fabric_dst(ld, fs, g);
	s = cr_required(&ld->r, fs, "dst_mac", "the destination MAC, e.g. 02:00:00:00:00:02");
	if (!s || ld_mac_value(ld, s, g->dst_mac))
		return -1;
	s = cr_required(&ld->r, fs, "dst_ip", "an IPv4 or IPv6 address");
	if (!s || cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a string"))
		return -1;
	v = config_setting_get_string(s);
	if (inet_pton(AF_INET, v, g->dst_ip) == 1)
		g->ip_version = 4;
	else if (inet_pton(AF_INET6, v, g->dst_ip) == 1)
		g->ip_version = 6;
	else
		return cr_fail(&ld->r, s, "'%s' is not an IPv4 or IPv6 address", cr_shown(v, buf));
	if ((g->ip_version == 4 && !p->has_ipv4) || (g->ip_version == 6 && !p->has_ipv6))
		return cr_fail(&ld->r, s, "an IPv%u destination, but port '%s' has no ipv%u address (give the port "
			       "one, or use an IPv%u destination)", g->ip_version, p->name, g->ip_version,
			       g->ip_version == 4 ? 6 : 4);
	return 0;
}

/* qpn and dest_qpn (when qpns: a traffic entry gives them to its flows), start_psn, pkey, qkey */
static int flow_ids(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g, bool qpns)
{
	const char *const keys[] = { "qpn", "dest_qpn" };
	uint32_t *out[] = { &g->qpn, &g->dest_qpn };
	const config_setting_t *s;
	long long v;
	int rc;

	for (int i = 0; qpns && i < 2; i++) {
		s = cr_required(&ld->r, fs, keys[i], "a QP number 0x2..0xffffff");
		if (!s || cr_int_range(&ld->r, s, 2, MAX_QPN, true, &v))
			return -1;
		*out[i] = (uint32_t)v;
	}
	rc = cr_opt_int(&ld->r, fs, "start_psn", 0, MAX_QPN, true, &v);
	if (rc < 0)
		return -1;
	if (rc == 1)
		g->start_psn = (uint32_t)v;
	rc = cr_opt_int(&ld->r, fs, "pkey", 0, 0xFFFF, true, &v);
	if (rc < 0)
		return -1;
	if (rc == 1)
		g->pkey = (uint16_t)v;
	rc = cr_opt_int(&ld->r, fs, "qkey", 0, 0xFFFFFFFFLL, true, &v);
	if (rc < 0)
		return -1;
	if (rc == 1 && g->transport != CFG_UD)
		return cr_fail_member(&ld->r, fs, "qkey", "qkey applies only to UD (this flow is %s)",
				      transport_names[g->transport]);
	if (rc == 1)
		g->qkey = (uint32_t)v;
	return 0;
}

static int flow_header_fields(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	static const char *const ecn_names[] = { "not-ect", "ect1", "ect0", "ce", NULL };
	const config_setting_t *s;
	long long v;
	int rc;

	s = config_setting_get_member(fs, "udp_sport");
	if (s && config_setting_type(s) == CONFIG_TYPE_STRING) {
		static const char *const entropy[] = { "entropy", NULL };

		if (cr_pick(&ld->r, s, entropy, ", or a port 1..65535") < 0)
			return -1;
	} else if (s) {
		if (cr_int_range(&ld->r, s, 1, 65535, false, &v))
			return -1;
		g->sport_entropy = false;
		g->sport = (uint16_t)v;
	}
	if ((rc = cr_opt_int(&ld->r, fs, "dscp", 0, 63, false, &v)) < 0)
		return -1;
	if (rc == 1)
		g->dscp = (uint8_t)v;
	s = config_setting_get_member(fs, "ecn");
	if (s && config_setting_type(s) == CONFIG_TYPE_STRING) {
		if ((rc = cr_pick(&ld->r, s, ecn_names, ", or 0..3")) < 0)
			return -1;
		g->ecn = (uint8_t)rc;
	} else if (s) {
		if (cr_int_range(&ld->r, s, 0, 3, false, &v))
			return -1;
		g->ecn = (uint8_t)v;
	}
	/* VID 4095 is reserved by 802.1Q (0 is a priority tag) */
	if ((rc = cr_opt_int(&ld->r, fs, "vlan", 0, 4094, false, &v)) < 0)
		return -1;
	if (rc == 1)
		g->has_vlan = true, g->vlan = (uint16_t)v;
	if ((rc = cr_opt_int(&ld->r, fs, "pcp", 0, 7, false, &v)) < 0)
		return -1;
	if (rc == 1 && !g->has_vlan)
		return cr_fail_member(&ld->r, fs, "pcp",
				      "pcp without vlan (the PCP is a field of the VLAN tag: set vlan "
				      "too, 0 for priority tagging)");
	if (rc == 1)
		g->pcp = (uint8_t)v;
	return 0;
}

static int flow_rate(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	const struct cfg_port *p = &ld->cfg->ports[g->port];
	double max = p->link_speed_gbps > 0 ? p->link_speed_gbps : 800;
	int rg, rp;

	rg = cr_opt_float(&ld->r, fs, "rate_gbps", 0, true, 800, &g->rate_gbps);
	if (rg < 0)
		return -1;
	if (rg == 1 && g->rate_gbps > max)
		return cr_fail_member(&ld->r, fs, "rate_gbps", "%g Gb/s per QP is above port '%s''s link speed %g Gb/s "
				      "(> 0 and <= %g)", g->rate_gbps, p->name, max, max);
	rp = cr_opt_float(&ld->r, fs, "rate_pps", 0, true, 1e9, &g->rate_pps);
	if (rp < 0)
		return -1;
	if (rg == 1 && rp == 1)
		return cr_fail_member(&ld->r, fs, "rate_pps", "rate_gbps and rate_pps are both set (set one of them)");
	return 0;
}

static int flow_pattern(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	static const char *const names[] = { "constant", "poisson", NULL };
	static const char *const keys[] = { "type", "on_us", "off_us", NULL };
	static const char *const onoff[] = { "onoff", NULL };
	const config_setting_t *s = config_setting_get_member(fs, "pattern");
	const config_setting_t *t;
	int i;

	if (!s)
		return 0;
	if (config_setting_type(s) == CONFIG_TYPE_GROUP) {
		t = cr_required(&ld->r, s, "type", "onoff");
		if (cr_known_keys(&ld->r, s, keys) || !t || cr_pick(&ld->r, t, onoff, NULL) < 0)
			return -1;
		if (!config_setting_get_member(s, "on_us") || !config_setting_get_member(s, "off_us"))
			return cr_fail_member(&ld->r, s, config_setting_get_member(s, "on_us") ? "off_us" : "on_us",
					      "missing (required: microseconds > 0)");
		if (cr_opt_float(&ld->r, s, "on_us", 0, true, 1e9, &g->on_us) < 0 ||
		    cr_opt_float(&ld->r, s, "off_us", 0, true, 1e9, &g->off_us) < 0)
			return -1;
		g->pattern = CFG_PATTERN_ONOFF;
	} else {
		if (config_setting_type(s) != CONFIG_TYPE_STRING)
			return cr_fail(&ld->r, s, "must be a string or a group { type = \"onoff\"; ... }, not %s",
				       cr_type_name(s));
		i = cr_pick(&ld->r, s, names, ", or a group { type = \"onoff\"; on_us = ...; off_us = ...; }");
		if (i < 0)
			return -1;
		g->pattern = i ? CFG_PATTERN_POISSON : CFG_PATTERN_CONSTANT;
	}
	if (g->pattern != CFG_PATTERN_CONSTANT && g->rate_gbps == 0 && g->rate_pps == 0)
		return cr_fail(&ld->r, s, "%s pattern needs a rate (set rate_gbps or rate_pps)",
			       g->pattern == CFG_PATTERN_POISSON ? "a poisson" : "an onoff");
	return 0;
}

static int flow_stop(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	static const char *const keys[] = { "messages", "bytes", "seconds", NULL };
	const config_setting_t *st;
	long long v;
	int rc;

	if ((rc = cr_opt_group(&ld->r, fs, "stop", &st)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, st, keys))
		return -1;
	if ((rc = cr_opt_int(&ld->r, st, "messages", 0, LLONG_MAX, false, &v)) < 0)
		return -1;
	if (rc == 1)
		g->stop_messages = (uint64_t)v;
	if ((rc = cr_opt_int(&ld->r, st, "bytes", 0, LLONG_MAX, false, &v)) < 0)
		return -1;
	if (rc == 1)
		g->stop_bytes = (uint64_t)v;
	return cr_opt_float(&ld->r, st, "seconds", 0, false, 1e9, &g->stop_seconds) < 0 ? -1 : 0;
}

/* start_s: a group that joins the traffic later (its QPs' first packet is due then) */
static int flow_start(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	return cr_opt_float(&ld->r, fs, "start_s", 0, false, 1e6, &g->start_s) < 0 ? -1 : 0;
}

/* count and steps; the last QP's numbers must stay within their fields */
static int flow_expansion(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	long long v;
	uint64_t last;
	int rc;

	if (cr_opt_u32(&ld->r, fs, "count", 1, CFG_MAX_QPS_PER_GROUP, &g->count) < 0)
		return -1;
	if ((rc = cr_opt_int(&ld->r, fs, "qpn_step", 1, MAX_QPN, false, &v)) < 0)
		return -1;
	if (rc == 1)
		g->qpn_step = (uint32_t)v;
	if ((rc = cr_opt_int(&ld->r, fs, "dest_qpn_step", 1, MAX_QPN, false, &v)) < 0)
		return -1;
	if (rc == 1)
		g->dest_qpn_step = (uint32_t)v;
	if ((rc = cr_opt_int(&ld->r, fs, "sport_step", 0, 65535, false, &v)) < 0)
		return -1;
	if (rc == 1)
		g->sport_step = (uint16_t)v;
	last = g->qpn + (uint64_t)(g->count - 1) * g->qpn_step;
	if (last > MAX_QPN)
		return cr_fail_member(&ld->r, fs, "count",
				      "the last QPN would be 0x%llx (qpn + (count-1) * qpn_step must "
				      "be <= 0xffffff)", (unsigned long long)last);
	last = g->dest_qpn + (uint64_t)(g->count - 1) * g->dest_qpn_step;
	if (last > MAX_QPN)
		return cr_fail_member(&ld->r, fs, "count", "the last dest_qpn would be 0x%llx (dest_qpn + (count-1) * "
				      "dest_qpn_step must be <= 0xffffff)", (unsigned long long)last);
	last = g->sport + (uint64_t)(g->count - 1) * g->sport_step;
	if (!g->sport_entropy && last > 65535)
		return cr_fail_member(&ld->r, fs, "count", "the last udp_sport would be %llu (udp_sport + (count-1) * "
				      "sport_step must be <= 65535)", (unsigned long long)last);
	return 0;
}

static int flow_needs_tx_role(struct loader *ld, const config_setting_t *fs, const struct cfg_flow_group *g)
{
	for (unsigned i = 0; i < ld->cfg->n_roles; i++)
		if (ld->cfg->roles[i].port == g->port && ld->cfg->roles[i].role == (ld->cfg->roles[i].role & CFG_ROLE_TXRX) &&
		    (ld->cfg->roles[i].role & CFG_ROLE_TX))
			return 0;
	return cr_fail_member(&ld->r, fs, "port",
			      "port '%s' has no tx role in lcores (add { lcore = ...; port = \"%s\"; "
			      "role = \"tx\"; })", ld->cfg->ports[g->port].name, ld->cfg->ports[g->port].name);
}

static void flow_defaults(struct cfg_flow_group *g)
{
	memset(g, 0, sizeof(*g));
	g->transport = CFG_RC;
	g->op_weight[CFG_OP_SEND] = 1;
	g->ib_mtu = 1024;
	g->pkey = WIRE_DEFAULT_PKEY;
	g->qkey = 0x11111111;
	g->sport_entropy = true;
	g->dscp = 26;
	g->ecn = WIRE_ECN_ECT0;
	g->pattern = CFG_PATTERN_CONSTANT;
	g->count = 1;
	g->qpn_step = g->dest_qpn_step = 1;
	g->sport_step = 1;
	g->retry_timeout_us = 67108.864; /* IB's usual local ACK timeout 14: 4.096 us x 2^14 */
	g->retry_limit = 7;
	g->max_outstanding = 32;
	g->latency_timeout_us = 1e6;
}

/* rc = { retry_timeout_us; retry_limit; max_outstanding; ack_every; }: RC only. */
static int flow_reliability(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	static const char *const keys[] = { "retry_timeout_us", "retry_limit", "max_outstanding", "ack_every", NULL };
	const config_setting_t *rs;
	int rc;

	if ((rc = cr_opt_group(&ld->r, fs, "rc", &rs)) <= 0)
		return rc;
	if (g->transport != CFG_RC)
		return cr_fail_member(&ld->r, fs, "rc", "only for transport rc (reliability settings)");
	if (cr_known_keys(&ld->r, rs, keys))
		return -1;
	return cr_opt_float(&ld->r, rs, "retry_timeout_us", 1, false, 1e8, &g->retry_timeout_us) < 0 ||
			       cr_opt_u32(&ld->r, rs, "retry_limit", 0, 1000, &g->retry_limit) < 0 ||
			       cr_opt_u32(&ld->r, rs, "max_outstanding", 1, 128, &g->max_outstanding) < 0 ||
			       cr_opt_u32(&ld->r, rs, "ack_every", 0, 1000000, &g->ack_every) < 0
		       ? -1
		       : 0;
}

/* latency = { mode = "oneway" | "pingpong"; timeout_us; }: packets need room for the probe. */
static int flow_latency(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	static const char *const keys[] = { "mode", "timeout_us", NULL };
	static const char *const modes[] = { "off", "oneway", "pingpong", NULL };
	const config_setting_t *ls, *s;
	uint32_t smallest;
	int rc, i;

	if ((rc = cr_opt_group(&ld->r, fs, "latency", &ls)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, ls, keys))
		return -1;
	s = cr_required(&ld->r, ls, "mode", "oneway or pingpong (or off)");
	if (!s || (i = cr_pick(&ld->r, s, modes, NULL)) < 0)
		return -1;
	g->latency = (enum cfg_latency)i;
	if (cr_opt_float(&ld->r, ls, "timeout_us", 1, false, 1e8, &g->latency_timeout_us) < 0)
		return -1;
	if (g->latency == CFG_LAT_OFF)
		return 0;
	if (!g->op_weight[CFG_OP_SEND] && !g->op_weight[CFG_OP_SEND_IMM] && !g->op_weight[CFG_OP_WRITE] &&
	    !g->op_weight[CFG_OP_WRITE_IMM])
		return cr_fail(&ld->r, s, "probes travel in SEND or WRITE payloads: the flow's ops have neither");
	smallest = g->msg_size.dist == CFG_SIZE_FIXED ? g->msg_size.fixed : g->msg_size.min;
	if (smallest < CFG_PROBE_MIN_PAYLOAD)
		return cr_fail(&ld->r, s,
			       "messages of %u bytes have no room for the %d-byte probe (message_size >= %d)",
			       smallest, CFG_PROBE_MIN_PAYLOAD, CFG_PROBE_MIN_PAYLOAD);
	if (g->latency == CFG_LAT_PINGPONG && g->transport == CFG_RC)
		g->max_outstanding = 1; /* one message in flight, its ACK the return */
	return 0;
}

static int flow_transport(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	const config_setting_t *s = config_setting_get_member(fs, "transport");
	int i;

	if (s && (i = cr_pick(&ld->r, s, transport_names, NULL)) < 0)
		return -1;
	if (s)
		g->transport = (enum cfg_transport)i;
	return 0;
}

/* What follows a group's name, port, transport, destination and QPNs (the settings a traffic
 * entry's `flow` template gives too). */
static int flow_settings(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	return flow_mtu(ld, fs, g) || flow_ops(ld, fs, g) || flow_size(ld, fs, g) || flow_header_fields(ld, fs, g) ||
			       flow_rate(ld, fs, g) || flow_pattern(ld, fs, g) || flow_stop(ld, fs, g) || flow_start(ld, fs, g) ||
			       flow_reliability(ld, fs, g) || flow_latency(ld, fs, g) || flow_expansion(ld, fs, g) ||
			       ld_flow_cc(ld, fs, g) ||
			       ld_inject_list(ld, fs, "inject", g->inject, &g->n_inject, true, g->count)
		       ? -1
		       : 0;
}

static int parse_flow(struct loader *ld, const config_setting_t *fs, unsigned idx)
{
	static const char *const keys[] = { "name", "port", "dst_mac", "dst_ip", "dst", "transport", "ops",
					    "message_size", "mtu", "qpn", "dest_qpn", "start_psn", "pkey", "qkey",
					    "udp_sport", "dscp", "ecn", "vlan", "pcp", "rate_gbps", "rate_pps",
					    "pattern", "stop", "start_s", "count", "qpn_step", "dest_qpn_step", "sport_step",
					    "rc", "latency", "cc", "dcqcn", "timely", "inject", NULL };
	struct cfg_flow_group *g = &ld->cfg->groups[idx];
	const config_setting_t *s;
	int i;

	flow_defaults(g);
	if (cr_want_type(&ld->r, fs, CONFIG_TYPE_GROUP, "a group { name = ...; port = ...; ... }") ||
	    cr_known_keys(&ld->r, fs, keys))
		return -1;
	g->line = config_setting_source_line(fs);
	if (!(s = ld_name(ld, fs, "a unique name of 1..31 A-Z a-z 0-9 _ -", g->name)))
		return -1;
	for (unsigned j = 0; j < idx; j++)
		if (!strcmp(ld->cfg->groups[j].name, g->name))
			return cr_fail(&ld->r, s, "duplicate flow name '%s' (also at %s; names must be unique)",
				       g->name, cr_at(&ld->r, ld->cfg->groups[j].line, (char[CR_AT_LEN]){ 0 }));
	if ((i = ld_port_ref(ld, fs)) < 0)
		return -1;
	g->port = (unsigned)i;
	if (flow_needs_tx_role(ld, fs, g) || flow_transport(ld, fs, g) || flow_addresses(ld, fs, g) ||
	    flow_ids(ld, fs, g, true))
		return -1;
	return flow_settings(ld, fs, g);
}

void ld_flow_defaults(struct cfg_flow_group *g) { flow_defaults(g); }

int ld_flow_template(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	static const char *const keys[] = { "transport", "ops", "message_size", "mtu", "start_psn", "pkey", "qkey",
					    "dscp", "ecn", "vlan", "pcp", "rate_gbps", "rate_pps", "pattern", "stop", "start_s",
					    "rc", "latency", "cc", "dcqcn", "timely", "inject", NULL };

	if (cr_want_type(&ld->r, fs, CONFIG_TYPE_GROUP, "a group of a flow's settings { transport = ...; ... }") ||
	    cr_known_keys(&ld->r, fs, keys))
		return -1;
	g->line = config_setting_source_line(fs);
	return flow_transport(ld, fs, g) || flow_ids(ld, fs, g, false) || flow_settings(ld, fs, g) ? -1 : 0;
}

static bool group_has_qpn(const struct cfg_flow_group *g, uint32_t q)
{
	return q >= g->qpn && (q - g->qpn) % g->qpn_step == 0 && (q - g->qpn) / g->qpn_step < g->count;
}

/* QPNs identify QPs on a port (ACKs and responses come back addressed to them), so the QPs of
 * all groups on one port must not share one. Exact, with a 2 MiB bit map of the 24-bit space. */
static int check_qpn_overlap(struct loader *ld)
{
	const struct engine_config *c = ld->cfg;
	uint8_t *used = NULL;
	int rc = 0;

	for (unsigned port = 0; port < c->n_ports && !rc; port++) {
		unsigned on_port = 0;

		for (unsigned k = 0; k < c->n_groups; k++)
			on_port += c->groups[k].port == port;
		if (on_port < 2)
			continue;
		if (!used && !(used = malloc((MAX_QPN + 1) / 8)))
			return cr_fail(&ld->r, ld->group_setting[0], "out of memory checking QPNs");
		memset(used, 0, (MAX_QPN + 1) / 8);
		for (unsigned k = 0; k < c->n_groups && !rc; k++) {
			const struct cfg_flow_group *g = &c->groups[k];

			for (unsigned i = 0; g->port == port && i < g->count && !rc; i++) {
				uint32_t q = g->qpn + i * g->qpn_step;

				if (!(used[q / 8] & (1u << (q % 8)))) {
					used[q / 8] |= (uint8_t)(1u << (q % 8));
					continue;
				}
				for (unsigned j = 0; j < k; j++)
					if (c->groups[j].port == port && group_has_qpn(&c->groups[j], q)) {
						rc = cr_fail_member(&ld->r, ld->group_setting[k], "qpn",
							"QPN 0x%x of flow '%s' is also a QPN of flow '%s' at %s on "
							"port '%s' (the QPNs of one port must not overlap)", q, g->name,
							c->groups[j].name, cr_at(&ld->r, c->groups[j].line, (char[CR_AT_LEN]){ 0 }),
							c->ports[port].name);
						break;
					}
			}
		}
	}
	free(used);
	return rc;
}

int ld_parse_flows(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *s = config_setting_get_member(root, "flows");
	int n;

	if (s && (n = ld_list_length(ld, s, "( { name = ...; port = ...; ... }, ... )", "flow groups", 0,
				     CFG_MAX_FLOW_GROUPS)) < 0)
		return -1;
	for (int i = 0; s && i < n; i++) {
		ld->group_setting[i] = config_setting_get_elem(s, (unsigned)i);
		if (parse_flow(ld, ld->group_setting[i], (unsigned)i))
			return -1;
		ld->cfg->n_groups++;
	}
	/* a fabric's traffic patterns become flow groups after the listed ones */
	if (ld_traffic_groups(ld, root))
		return -1;
	return check_qpn_overlap(ld); /* none: receive only */
}

/* ---- collectives ---------------------------------------------------------------------------- */

static const char *const collective_types[] = {"ring", "incast", "all_to_all", "custom", NULL};

static int collective_flows(struct loader *ld, const config_setting_t *cs, struct cfg_collective *c, unsigned idx)
{
	const config_setting_t *fl = cr_required(&ld->r, cs, "flows", "a list of flow names [\"a\", \"b\", ...]");
	char buf[64];
	int n;

	if (!fl)
		return -1;
	if (config_setting_type(fl) != CONFIG_TYPE_ARRAY && config_setting_type(fl) != CONFIG_TYPE_LIST)
		return cr_fail(&ld->r, fl, "must be an array of flow names [\"a\", \"b\"], not %s", cr_type_name(fl));
	n = config_setting_length(fl);
	if (n < 1 || n > CFG_MAX_COLLECTIVE_FLOWS)
		return cr_fail(&ld->r, fl, "%d flows (allowed: 1..%d)", n, CFG_MAX_COLLECTIVE_FLOWS);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(fl, (unsigned)i);
		const char *name = config_setting_get_string(e);
		unsigned g;

		if (!name)
			return cr_fail(&ld->r, e, "element %d is not a string (a flow name)", i);
		for (g = 0; g < ld->cfg->n_groups && strcmp(ld->cfg->groups[g].name, name); g++)
			;
		if (g == ld->cfg->n_groups)
			return cr_fail(&ld->r, e, "no flow named '%s' (flows are declared in the flows list)",
				       cr_shown(name, buf));
		if (ld->cfg->group_collective[g] >= 0)
			return cr_fail(&ld->r, e,
				       "flow '%s' is already in collective '%s' (a flow belongs to one collective)",
				       name, ld->cfg->collectives[ld->cfg->group_collective[g]].name);
		if (cfg_group_has_stop(&ld->cfg->groups[g]))
			return cr_fail(&ld->r, e,
				       "flow '%s' has a stop condition (%s); in a collective the phases stop it",
				       name, cr_at(&ld->r, ld->cfg->groups[g].line, (char[CR_AT_LEN]){ 0 }));
		if (ld->cfg->groups[g].start_s > 0)
			return cr_fail(&ld->r, e, "flow '%s' has a start_s (%s); in a collective the phases start it",
				       name, cr_at(&ld->r, ld->cfg->groups[g].line, (char[CR_AT_LEN]){ 0 }));
		ld->cfg->group_collective[g] = (int)idx;
		c->flows[c->n_flows++] = g;
	}
	return 0;
}

/* Whether group g has a QPN in lo..hi (its QPNs: qpn + i * qpn_step, i < count); the first in *q. */
static bool group_qpn_in(const struct cfg_flow_group *g, uint32_t lo, uint32_t hi, uint32_t *q)
{
	uint64_t i = lo <= g->qpn ? 0 : ((uint64_t)lo - g->qpn + g->qpn_step - 1) / g->qpn_step;
	uint64_t first = g->qpn + i * g->qpn_step;

	if (i >= g->count || first > hi)
		return false;
	*q = (uint32_t)first;
	return true;
}

/* The port of a receive range must be polled by an rx or txrx role: receipts are counted there. */
static bool port_has_rx_role(const struct engine_config *c, unsigned port)
{
	for (unsigned i = 0; i < c->n_roles; i++)
		if (c->roles[i].port == port && (c->roles[i].role == CFG_ROLE_RX || c->roles[i].role == CFG_ROLE_TXRX))
			return true;
	return false;
}

/* A receive range r (complete but for these checks) against what it must not overlap: the ranges
 * read before it (a receiver QP counts for one collective), and the port's local requester QPNs
 * (frames to those are answers to the local flows, not the messages of a peer). */
static int receive_overlaps(struct loader *ld, const config_setting_t *rs, const struct cfg_coll_receive *r)
{
	const struct engine_config *c = ld->cfg;
	uint32_t last = r->qpn + r->count - 1, q;

	for (unsigned k = 0; k <= c->n_collectives; k++) { /* the one being read is collectives[n_collectives] */
		const struct cfg_collective *o = &c->collectives[k];
		for (unsigned j = 0; j < o->n_receives; j++) {
			const struct cfg_coll_receive *x = &o->receives[j];
			if (x != r && x->port == r->port && x->qpn <= last && r->qpn <= x->qpn + x->count - 1)
				return cr_fail_member(&ld->r, rs, "qpn", "QPNs 0x%x..0x%x on port '%s' overlap the receives "
						      "of collective '%s' at %s (a receiver QP counts for one collective)",
						      r->qpn, last, c->ports[r->port].name, o->name,
						      cr_at(&ld->r, x->line, (char[CR_AT_LEN]){ 0 }));
		}
	}
	for (unsigned g = 0; g < c->n_groups; g++)
		if (c->groups[g].port == r->port && group_qpn_in(&c->groups[g], r->qpn, last, &q))
			return cr_fail_member(&ld->r, rs, "qpn", "QPN 0x%x is a QPN of flow '%s' at %s on port '%s' "
					      "(frames to it answer that flow's requests; receives are QPNs a peer's "
					      "requests arrive at)", q, c->groups[g].name,
					      cr_at(&ld->r, c->groups[g].line, (char[CR_AT_LEN]){ 0 }), c->ports[r->port].name);
	return 0;
}

/* One `receives` entry: { port = "p"; qpn = 0x...; count = N; }. */
static int parse_receive(struct loader *ld, const config_setting_t *rs, struct cfg_coll_receive *r)
{
	static const char *const keys[] = {"port", "qpn", "count", NULL};
	const config_setting_t *s;
	long long v;
	int i;

	if (cr_want_type(&ld->r, rs, CONFIG_TYPE_GROUP, "a group { port = ...; qpn = ...; count = N; }") ||
	    cr_known_keys(&ld->r, rs, keys) || (i = ld_port_ref(ld, rs)) < 0)
		return -1;
	r->line = config_setting_source_line(rs);
	r->port = (unsigned)i;
	r->count = 1;
	if (!port_has_rx_role(ld->cfg, r->port))
		return cr_fail_member(&ld->r, rs, "port", "port '%s' has no rx or txrx role in lcores (receipts are "
				      "counted where the port is polled)", ld->cfg->ports[r->port].name);
	s = cr_required(&ld->r, rs, "qpn", "the first receiver QPN, 0x2..0xffffff");
	if (!s || cr_int_range(&ld->r, s, 2, MAX_QPN, true, &v) ||
	    cr_opt_u32(&ld->r, rs, "count", 1, CFG_MAX_QPS_PER_GROUP, &r->count) < 0)
		return -1;
	r->qpn = (uint32_t)v;
	if ((uint64_t)r->qpn + r->count - 1 > MAX_QPN)
		return cr_fail_member(&ld->r, rs, "count", "the last QPN would be 0x%llx (qpn + count - 1 must be "
				      "<= 0xffffff)", (unsigned long long)r->qpn + r->count - 1);
	return receive_overlaps(ld, rs, r);
}

/* `receives`: the receiver QPs whose messages the phases also wait for (optional). */
static int collective_receives(struct loader *ld, const config_setting_t *cs, struct cfg_collective *c)
{
	const config_setting_t *s = config_setting_get_member(cs, "receives");
	int n;

	if (!s)
		return 0;
	if ((n = ld_list_length(ld, s, "( { port = ...; qpn = ...; count = N; }, ... )", "receive ranges", 0,
				CFG_MAX_COLLECTIVE_RECEIVES)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (parse_receive(ld, config_setting_get_elem(s, (unsigned)i), &c->receives[i]))
			return -1;
		c->n_receives++;
	}
	return 0;
}

/* window = { period_s; offset_s; active_s; }: when an iteration may start. */
static int collective_window(struct loader *ld, const config_setting_t *cs, struct cfg_collective *c)
{
	static const char *const keys[] = {"period_s", "offset_s", "active_s", NULL};
	const config_setting_t *w = config_setting_get_member(cs, "window");

	if (!w)
		return 0;
	if (cr_want_type(&ld->r, w, CONFIG_TYPE_GROUP, "a group { period_s = ...; offset_s = ...; active_s = ...; }") ||
	    cr_known_keys(&ld->r, w, keys) || !cr_required(&ld->r, w, "period_s", "seconds, 1e-3..1e6") ||
	    cr_opt_float(&ld->r, w, "period_s", 1e-3, false, 1e6, &c->window_period_s) < 0 ||
	    !cr_required(&ld->r, w, "active_s", "seconds, up to period_s") ||
	    cr_opt_float(&ld->r, w, "active_s", 0, true, c->window_period_s, &c->window_active_s) < 0 ||
	    cr_opt_float(&ld->r, w, "offset_s", 0, false, 1e6, &c->window_offset_s) < 0)
		return -1;
	if (c->window_offset_s >= c->window_period_s)
		return cr_fail_member(&ld->r, w, "offset_s", "%g is not below period_s %g", c->window_offset_s,
				      c->window_period_s);
	return 0;
}

static int parse_collective(struct loader *ld, const config_setting_t *cs, unsigned idx)
{
	static const char *const keys[] = {"name", "type", "flows", "phases", "compute_us", "iteration_phases", "receives",
					   "repeat", "window", NULL};
	struct cfg_collective *c = &ld->cfg->collectives[idx];
	const config_setting_t *s;
	int i;

	if (cr_want_type(&ld->r, cs, CONFIG_TYPE_GROUP, "a group { name = ...; flows = [...]; phases = N; }") ||
	    cr_known_keys(&ld->r, cs, keys))
		return -1;
	c->line = config_setting_source_line(cs);
	c->type = CFG_COLL_CUSTOM;
	if (!(s = ld_name(ld, cs, "a unique name of 1..31 A-Z a-z 0-9 _ -", c->name)))
		return -1;
	for (unsigned j = 0; j < idx; j++)
		if (!strcmp(ld->cfg->collectives[j].name, c->name))
			return cr_fail(&ld->r, s, "duplicate collective name '%s' (also at %s)", c->name,
				       cr_at(&ld->r, ld->cfg->collectives[j].line, (char[CR_AT_LEN]){ 0 }));
	s = config_setting_get_member(cs, "type");
	if (s && (i = cr_pick(&ld->r, s, collective_types, NULL)) < 0)
		return -1;
	if (s)
		c->type = (enum cfg_collective_type)i;
	if (!cr_required(&ld->r, cs, "phases", "the number of phases, 1..4096"))
		return -1;
	if (cr_opt_u32(&ld->r, cs, "phases", 1, CFG_MAX_PHASES, &c->phases) < 0)
		return -1;
	c->iteration_phases = c->phases;
	if (cr_opt_float(&ld->r, cs, "compute_us", 0, false, 1e9, &c->compute_us) < 0 ||
	    cr_opt_u32(&ld->r, cs, "iteration_phases", 1, c->phases, &c->iteration_phases) < 0)
		return -1;
	if (c->phases % c->iteration_phases)
		return cr_fail_member(&ld->r, cs, "iteration_phases", "%u does not divide phases %u (whole iterations)",
				      c->iteration_phases, c->phases);
	if (cr_opt_bool(&ld->r, cs, "repeat", &c->repeat) < 0 || collective_window(ld, cs, c))
		return -1;
	if (collective_flows(ld, cs, c, idx) || collective_receives(ld, cs, c))
		return -1;
	/* a peer's receipt of round r + 1 could arrive before round r's phase is reset: a stall */
	if (c->repeat && c->n_receives)
		return cr_fail_member(&ld->r, cs, "repeat", "and receives: a repeating collective counts its own "
				      "completions only (no receives)");
	return 0;
}

int ld_parse_collectives(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *s = config_setting_get_member(root, "collectives");
	int n;

	if (!s)
		return 0;
	if ((n = ld_list_length(ld, s, "( { name = ...; flows = [...]; phases = N; }, ... )", "collectives", 0,
				CFG_MAX_COLLECTIVES)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (parse_collective(ld, config_setting_get_elem(s, (unsigned)i), (unsigned)i))
			return -1;
		ld->cfg->n_collectives++;
	}
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The `fabric` group and traffic patterns (config_fabric.h). Each kind has its own sizes; a size
 * of another kind is an error, not ignored, so that "leaves = 4" in a rail fabric is never
 * silently dropped. The build's own errors ("SETTING: what") are put at that setting's line.
 */
#include "config_fabric.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GBPS 1600.0
#define MAX_DELAY_US 1e6
#define MAX_SIZE 65536

static const char *const kind_names[] = { "leaf-spine", "rail", "fat-tree", "custom", NULL };
static const char *const lb_names[] = { "ecmp", "flowlet", "spray", NULL };
static const char *const hash_fn_names[] = { "crc32", "crc16", NULL };
static const char *const field_names[] = { "src_ip", "dst_ip", "udp_sport", "udp_dport", "dest_qp", NULL };
static const char *const tier_names[] = { "host", "leaf", "spine", "core", NULL };
static const char *const pattern_names[] = { "pairs", "incast", "all_to_all", "permutation", "ring", NULL };

/* The sizes each kind takes (the other settings apply to every kind). */
static const char *const kind_sizes[][8] = {
	[FAB_LEAF_SPINE] = { "leaves", "spines", "hosts_per_leaf", "uplinks", NULL },
	[FAB_RAIL] = { "hosts", "rails", "spines", "uplinks", NULL },
	[FAB_FAT_TREE] = { "k", "core_gbps", "core_delay_us", NULL },
	[FAB_CUSTOM] = { "switches", "hosts", "links", NULL },
};
static const char *const all_sizes[] = { "leaves", "spines", "hosts_per_leaf", "uplinks", "hosts", "rails", "k",
					 "core_gbps", "core_delay_us", "links", NULL };
static const char *const fabric_keys[] = { "kind", "leaves", "spines", "hosts_per_leaf", "uplinks", "hosts", "rails",
					   "k", "host_gbps", "uplink_gbps", "core_gbps", "host_delay_us",
					   "uplink_delay_us", "core_delay_us", "subnet", "subnet_len", "load_balance",
					   "hash", "flowlet_gap_us", "switches", "links",
					   /* the engine's (config_lab_fabric.c); roce-fabric and roce-ccsim leave them */
					   "lcore", "lcores", "host_lcores", "nic", "deadlock_ms", "events", "convergence_ms", "sample_ms",
					   "external", NULL };

static bool listed(const char *const *names, const char *key)
{
	for (; *names; names++)
		if (!strcmp(*names, key))
			return true;
	return false;
}

/* A size of another kind is an error: it would change nothing. */
static int sizes_of_kind(struct config_reader *r, const config_setting_t *g, enum fab_kind kind)
{
	for (const char *const *k = all_sizes; *k; k++)
		if (config_setting_get_member(g, *k) && !listed(kind_sizes[kind], *k) &&
		    !(kind == FAB_CUSTOM && !strcmp(*k, "switches")))
			return cr_fail_member(r, g, *k, "not a setting of a %s fabric (its sizes: %s%s%s%s%s%s%s)",
					      kind_names[kind], kind_sizes[kind][0], kind_sizes[kind][1] ? ", " : "",
					      kind_sizes[kind][1] ? kind_sizes[kind][1] : "", kind_sizes[kind][2] ? ", " : "",
					      kind_sizes[kind][2] ? kind_sizes[kind][2] : "", kind_sizes[kind][3] ? ", " : "",
					      kind_sizes[kind][3] ? kind_sizes[kind][3] : "");
	return 0;
}

static int opt_pick(struct config_reader *r, const config_setting_t *g, const char *key, const char *const names[],
		    int *out)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	int v;

	if (!s)
		return 0;
	if ((v = cr_pick(r, s, names, NULL)) < 0)
		return -1;
	*out = v;
	return 1;
}

/* "A.B.C.D/LEN", the host bits zero. */
static int opt_subnet(struct config_reader *r, const config_setting_t *g, struct fab_spec *sp)
{
	const config_setting_t *s = config_setting_get_member(g, "subnet");
	char buf[64];
	struct in_addr a;
	const char *v, *slash;
	char *end;
	long len;

	if (!s)
		return 0;
	if (cr_want_type(r, s, CONFIG_TYPE_STRING, "a string \"A.B.C.D/LEN\""))
		return -1;
	v = config_setting_get_string(s);
	slash = strchr(v, '/');
	if (!slash || (size_t)(slash - v) >= sizeof(buf))
		return cr_fail(r, s, "'%s' is not an IPv4 subnet \"A.B.C.D/LEN\"", cr_shown(v, (char[64]){ 0 }));
	memcpy(buf, v, (size_t)(slash - v));
	buf[slash - v] = '\0';
	len = strtol(slash + 1, &end, 10);
	if (inet_pton(AF_INET, buf, &a) != 1 || *end || end == slash + 1 || len < 1 || len > 30)
		return cr_fail(r, s, "'%s' is not an IPv4 subnet \"A.B.C.D/LEN\" (LEN 1..30)", cr_shown(v, (char[64]){ 0 }));
	sp->pool = ntohl(a.s_addr);
	sp->pool_len = (uint8_t)len;
	if (sp->pool & ((1u << (32 - len)) - 1))
		return cr_fail(r, s, "'%s' has host bits set (the subnet's first address, e.g. %s/%ld)", cr_shown(v, (char[64]){ 0 }),
			       fabric_ip_str(sp->pool & ~((1u << (32 - len)) - 1), buf), len);
	return 1;
}

static int hash_fields(struct config_reader *r, const config_setting_t *s, uint8_t *fields)
{
	int n;

	if (config_setting_type(s) != CONFIG_TYPE_ARRAY || (n = config_setting_length(s)) < 1)
		return cr_fail(r, s, "must be an array of field names [\"src_ip\", ...] (src_ip, dst_ip, udp_sport, udp_dport, "
				     "dest_qp)");
	*fields = 0;
	for (int i = 0; i < n; i++) {
		int f = cr_pick(r, config_setting_get_elem(s, (unsigned)i), field_names, NULL);
		if (f < 0)
			return -1;
		if (*fields & (1u << f))
			return cr_fail(r, config_setting_get_elem(s, (unsigned)i), "'%s' is listed twice", field_names[f]);
		*fields |= (uint8_t)(1u << f);
	}
	return 0;
}

/* load_balance, hash { function, seed, fields }, flowlet_gap_us: of the fabric or of a switch. */
static int lb_opts(struct config_reader *r, const config_setting_t *g, struct fab_lb_opts *o, bool *set)
{
	static const char *const hash_keys[] = { "function", "seed", "fields", "seed_per_switch", NULL };
	const config_setting_t *h = NULL, *fs;
	double gap;
	int v = 0, rc;

	if ((rc = opt_pick(r, g, "load_balance", lb_names, &v)) < 0)
		return -1;
	if (rc)
		o->lb = (enum fab_lb)v, *set = true;
	if (cr_opt_group(r, g, "hash", &h) < 0)
		return -1;
	if (h) {
		*set = true;
		if (cr_known_keys(r, h, hash_keys) || opt_pick(r, h, "function", hash_fn_names, &v) < 0)
			return -1;
		if (config_setting_get_member(h, "function"))
			o->hash.fn = (enum fab_hash_fn)v;
		if (cr_opt_u32(r, h, "seed", 0, UINT32_MAX, &o->hash.seed) < 0)
			return -1;
		if ((fs = config_setting_get_member(h, "fields")) && hash_fields(r, fs, &o->hash.fields))
			return -1;
		if (cr_opt_bool(r, h, "seed_per_switch", &o->hash.per_switch) < 0)
			return -1;
	}
	if ((rc = cr_opt_float(r, g, "flowlet_gap_us", 0, true, 1e6, &gap)) < 0)
		return -1;
	if (rc)
		o->flowlet_gap_ns = (uint32_t)(gap * 1000 + 0.5), *set = true;
	return 0;
}

static int size(struct config_reader *r, const config_setting_t *g, const char *key, unsigned lo, unsigned *out)
{
	uint32_t v;
	int rc = cr_opt_u32(r, g, key, lo, MAX_SIZE, &v);

	if (rc == 1)
		*out = v;
	return rc < 0 ? -1 : 0;
}

static int rates(struct config_reader *r, const config_setting_t *g, struct fab_spec *sp)
{
	return cr_opt_float(r, g, "host_gbps", 0, true, MAX_GBPS, &sp->host_gbps) < 0 ||
	       cr_opt_float(r, g, "uplink_gbps", 0, true, MAX_GBPS, &sp->uplink_gbps) < 0 ||
	       cr_opt_float(r, g, "core_gbps", 0, true, MAX_GBPS, &sp->core_gbps) < 0 ||
	       cr_opt_float(r, g, "host_delay_us", 0, false, MAX_DELAY_US, &sp->host_delay_us) < 0 ||
	       cr_opt_float(r, g, "uplink_delay_us", 0, false, MAX_DELAY_US, &sp->uplink_delay_us) < 0 ||
	       cr_opt_float(r, g, "core_delay_us", 0, false, MAX_DELAY_US, &sp->core_delay_us) < 0
		       ? -1
		       : 0;
}

/* A list ( { ... }, ... ) of 1..max groups, or -1. */
static int group_list(struct config_reader *r, const config_setting_t *s, unsigned max, const char *what)
{
	int n = config_setting_length(s);

	if (config_setting_type(s) != CONFIG_TYPE_LIST || n < 1 || (unsigned)n > max)
		return cr_fail(r, s, "must be a list of 1..%u groups ( %s, ... )", max, what);
	for (int i = 0; i < n; i++)
		if (cr_want_type(r, config_setting_get_elem(s, (unsigned)i), CONFIG_TYPE_GROUP, what))
			return -1;
	return n;
}

/* `switches`: a custom fabric's switches, or overrides of a built one's (by name). */
static int switch_list(struct config_reader *r, const config_setting_t *g, struct fab_spec *sp)
{
	static const char *const keys[] = { "name", "tier", "load_balance", "hash", "flowlet_gap_us", NULL };
	const config_setting_t *s = config_setting_get_member(g, "switches");
	int n;

	if (!s)
		return 0;
	if ((n = group_list(r, s, FAB_MAX_SWITCHES, "{ name = ...; load_balance = ...; }")) < 0)
		return -1;
	sp->switches = calloc((size_t)n, sizeof(*sp->switches));
	if (!sp->switches)
		return cr_fail(r, s, "out of memory");
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		struct fab_spec_switch *w = &sp->switches[i];
		int tier = 0;

		w->lb = sp->lb;
		w->line = (unsigned)config_setting_source_line(e);
		if (cr_known_keys(r, e, keys) || !cr_required(r, e, "name", "the switch's name") ||
		    cr_opt_name(r, e, "name", w->name, sizeof(w->name)) < 0 || opt_pick(r, e, "tier", tier_names, &tier) < 0 ||
		    lb_opts(r, e, &w->lb, &w->has_lb))
			return -1;
		if (config_setting_get_member(e, "tier") && (sp->kind != FAB_CUSTOM || tier == FAB_TIER_HOST))
			return cr_fail_member(r, e, "tier", sp->kind != FAB_CUSTOM ? "the %s fabric gives its switches' tiers"
										: "a switch stands at leaf, spine or core",
					      kind_names[sp->kind]);
		w->tier = (unsigned)tier;
		for (int j = 0; j < i; j++)
			if (!strcmp(sp->switches[j].name, w->name))
				return cr_fail_member(r, e, "name", "'%s' is named twice (first at line %u)", w->name,
						      sp->switches[j].line);
		sp->n_switches++;
	}
	return 0;
}

static int host_list(struct config_reader *r, const config_setting_t *g, struct fab_spec *sp)
{
	const config_setting_t *s = config_setting_get_member(g, "hosts");
	int n;

	if (!s)
		return cr_fail(r, g, "hosts: missing (a custom fabric lists its hosts: [\"h0\", \"h1\", ...])");
	if (config_setting_type(s) != CONFIG_TYPE_ARRAY || (n = config_setting_length(s)) < 1 || n > FAB_MAX_NICS)
		return cr_fail(r, s, "must be an array of 1..%u host names [\"h0\", ...]", FAB_MAX_NICS);
	sp->host_names = calloc((size_t)n, sizeof(*sp->host_names));
	if (!sp->host_names)
		return cr_fail(r, s, "out of memory");
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		const char *v = config_setting_get_string(e);
		if (!v || !v[0] || strlen(v) >= FAB_NAME_LEN)
			return cr_fail(r, e, "a host name of 1..%d characters", FAB_NAME_LEN - 1);
		snprintf(sp->host_names[i], FAB_NAME_LEN, "%s", v);
		for (int j = 0; j < i; j++)
			if (!strcmp(sp->host_names[j], v))
				return cr_fail(r, e, "'%s' is listed twice", cr_shown(v, (char[64]){ 0 }));
		for (unsigned w = 0; w < sp->n_switches; w++)
			if (!strcmp(sp->switches[w].name, v))
				return cr_fail(r, e, "'%s' is also a switch's name", cr_shown(v, (char[64]){ 0 }));
		sp->n_host_names++;
	}
	return 0;
}

static int link_list(struct config_reader *r, const config_setting_t *g, struct fab_spec *sp)
{
	static const char *const keys[] = { "a", "b", "gbps", "delay_us", "count", NULL };
	const config_setting_t *s = config_setting_get_member(g, "links");
	int n;

	if (!s)
		return cr_fail(r, g, "links: missing (a custom fabric lists its links: ( { a = ...; b = ...; }, ... ))");
	if ((n = group_list(r, s, FAB_MAX_LINKS, "{ a = ...; b = ...; gbps = ...; }")) < 0)
		return -1;
	sp->links = calloc((size_t)n, sizeof(*sp->links));
	if (!sp->links)
		return cr_fail(r, s, "out of memory");
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		struct fab_spec_link *l = &sp->links[i];

		l->gbps = sp->host_gbps;
		l->delay_us = sp->host_delay_us;
		l->count = 1;
		l->line = (unsigned)config_setting_source_line(e);
		if (cr_known_keys(r, e, keys) || !cr_required(r, e, "a", "a switch's name") ||
		    !cr_required(r, e, "b", "a switch's or a host's name") || cr_opt_name(r, e, "a", l->a, sizeof(l->a)) < 0 ||
		    cr_opt_name(r, e, "b", l->b, sizeof(l->b)) < 0 ||
		    cr_opt_float(r, e, "gbps", 0, true, MAX_GBPS, &l->gbps) < 0 ||
		    cr_opt_float(r, e, "delay_us", 0, false, MAX_DELAY_US, &l->delay_us) < 0 ||
		    cr_opt_u32(r, e, "count", 1, 64, &l->count) < 0)
			return -1;
		sp->n_links++;
	}
	return 0;
}

static int parse_kind_sizes(struct config_reader *r, const config_setting_t *g, struct fab_spec *sp)
{
	switch (sp->kind) {
	case FAB_LEAF_SPINE:
		if (!cr_required(r, g, "leaves", "the number of leaves") ||
		    !cr_required(r, g, "hosts_per_leaf", "hosts on each leaf"))
			return -1;
		return size(r, g, "leaves", 1, &sp->leaves) || size(r, g, "spines", 0, &sp->spines) ||
		       size(r, g, "hosts_per_leaf", 1, &sp->hosts_per_leaf) || size(r, g, "uplinks", 1, &sp->uplinks);
	case FAB_RAIL:
		if (!cr_required(r, g, "hosts", "the number of hosts") ||
		    !cr_required(r, g, "rails", "NICs per host, one leaf each") || !cr_required(r, g, "spines", "the spines"))
			return -1;
		return size(r, g, "hosts", 1, &sp->hosts) || size(r, g, "rails", 1, &sp->rails) ||
		       size(r, g, "spines", 1, &sp->spines) || size(r, g, "uplinks", 1, &sp->uplinks);
	case FAB_FAT_TREE:
		if (!cr_required(r, g, "k", "the switches' port count, even"))
			return -1;
		if (size(r, g, "k", 2, &sp->k))
			return -1;
		if (sp->k % 2 || sp->k > 64)
			return cr_fail_member(r, g, "k", "%u: a fat-tree's k is even, 2..64", sp->k);
		return 0;
	case FAB_CUSTOM:
		if (!cr_required(r, g, "switches", "( { name = ...; }, ... )"))
			return -1;
		return 0; /* the lists come after the common settings (links take their defaults) */
	}
	return 0;
}

/* Puts an error of fabric_build() ("SETTING: what") at that setting: a member of g, or an entry
 * of one of its lists ("links.[3]"). */
static int build_error(struct config_reader *r, const config_setting_t *g, const char *msg)
{
	char key[64];
	const char *colon = strstr(msg, ": ");
	size_t n = colon ? (size_t)(colon - msg) : 0;
	const char *bracket;

	if (!colon || n >= sizeof(key))
		return cr_fail(r, g, "%s", msg);
	memcpy(key, msg, n);
	key[n] = '\0';
	if ((bracket = strstr(key, ".[")) != NULL) { /* "links.[3]" or "switches.[0].name" */
		const config_setting_t *list, *e;
		char *rest;
		unsigned idx = (unsigned)strtoul(bracket + 2, &rest, 10);
		key[bracket - key] = '\0';
		list = config_setting_get_member(g, key);
		e = list ? config_setting_get_elem(list, idx) : NULL;
		if (e && rest[0] == ']' && rest[1] == '.')
			return cr_fail_member(r, e, rest + 2, "%s", colon + 2);
		if (e)
			return cr_fail(r, e, "%s", colon + 2);
	}
	if (config_setting_get_member(g, key))
		return cr_fail_member(r, g, key, "%s", colon + 2);
	return cr_fail(r, g, "%s", msg);
}

static int parse_spec(struct config_reader *r, const config_setting_t *g, struct fab_spec *sp)
{
	bool set = false;
	int kind = FAB_LEAF_SPINE;
	uint32_t subnet_len = 0;

	fab_spec_defaults(sp);
	if (cr_want_type(r, g, CONFIG_TYPE_GROUP, "a group { kind = ...; ... }") || cr_known_keys(r, g, fabric_keys) ||
	    !cr_required(r, g, "kind", "leaf-spine, rail, fat-tree or custom") || opt_pick(r, g, "kind", kind_names, &kind) < 0)
		return -1;
	sp->kind = (enum fab_kind)kind;
	if (sizes_of_kind(r, g, sp->kind) || parse_kind_sizes(r, g, sp) || rates(r, g, sp) || opt_subnet(r, g, sp) < 0 ||
	    cr_opt_u32(r, g, "subnet_len", 1, 30, &subnet_len) < 0 || lb_opts(r, g, &sp->lb, &set) || switch_list(r, g, sp))
		return -1;
	sp->subnet_len = (uint8_t)subnet_len;
	if (sp->kind == FAB_CUSTOM && (host_list(r, g, sp) || link_list(r, g, sp)))
		return -1;
	return 0;
}

int cfab_load(struct config_reader *r, const config_setting_t *g, struct fab_spec *spec, struct fabric *f,
	      struct fab_routes *routes)
{
	char err[512];

	memset(f, 0, sizeof(*f));
	memset(routes, 0, sizeof(*routes));
	if (parse_spec(r, g, spec)) {
		fab_spec_free(spec);
		return -1;
	}
	if (fabric_build(spec, f, err, sizeof(err))) {
		fab_spec_free(spec);
		return build_error(r, g, err);
	}
	if (fabric_routes(f, NULL, false, routes, err, sizeof(err))) {
		fabric_free(f);
		fab_spec_free(spec);
		return build_error(r, g, err);
	}
	return 0;
}

/* ---- patterns ------------------------------------------------------------------------------- */

const char *const cfab_pattern_keys[] = { "pattern", "hosts", "dst", "seed", "rail", "pairs", NULL };

const char *const cfab_engine_traffic_keys[] = { "flow", NULL };
const char *const cfab_ccsim_traffic_keys[] = { "cc",       "dcqcn",    "timely",  "priority",   "mtu_bytes", "jitter_us",
						"rate_gbps", "start_us", "stop_us", "size_bytes", "size_cdf",  "load", "udp_sports",
						NULL };
const char *const cfab_program_traffic_keys[] = { "flow",      "cc",       "dcqcn",   "timely",     "priority", "mtu_bytes",
						  "jitter_us", "rate_gbps", "start_us", "stop_us", "size_bytes", "size_cdf",
						  "load",      NULL };

static int host_named(struct config_reader *r, const config_setting_t *s, const struct fabric *f, unsigned *out)
{
	const char *v = config_setting_get_string(s);
	int h = v ? fabric_host_by_name(f, v) : -1;

	if (!v)
		return cr_fail(r, s, "must be a host's name, not %s", cr_type_name(s));
	if (h < 0)
		return cr_fail(r, s, "'%s' is not a host of the fabric (%s .. %s)", cr_shown(v, (char[64]){ 0 }), f->hosts[0].name,
			       f->hosts[f->n_hosts - 1].name);
	*out = (unsigned)h;
	return 0;
}

static int pattern_hosts(struct config_reader *r, const config_setting_t *s, const struct fabric *f, struct fab_pattern *p)
{
	int n = config_setting_length(s);

	if (config_setting_type(s) != CONFIG_TYPE_ARRAY || n < 1)
		return cr_fail(r, s, "must be an array of host names [\"h0\", ...]");
	p->hosts = calloc((size_t)n, sizeof(*p->hosts));
	if (!p->hosts)
		return cr_fail(r, s, "out of memory");
	for (int i = 0; i < n; i++)
		if (host_named(r, config_setting_get_elem(s, (unsigned)i), f, &p->hosts[i]))
			return -1;
	p->n_hosts = (unsigned)n;
	return 0;
}

static int pattern_pairs(struct config_reader *r, const config_setting_t *s, const struct fabric *f, struct fab_pattern *p)
{
	int n = config_setting_length(s);

	if (config_setting_type(s) != CONFIG_TYPE_LIST || n < 1 || n > FAB_MAX_PATTERN_PAIRS)
		return cr_fail(r, s, "must be a list of 1..%d pairs ( [\"h0\", \"h1\"], ... )", FAB_MAX_PATTERN_PAIRS);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		if (config_setting_type(e) != CONFIG_TYPE_ARRAY || config_setting_length(e) != 2)
			return cr_fail(r, e, "must be a pair [\"SRC\", \"DST\"] of host names");
		if (host_named(r, config_setting_get_elem(e, 0), f, &p->pairs[i].src) ||
		    host_named(r, config_setting_get_elem(e, 1), f, &p->pairs[i].dst))
			return -1;
		if (p->pairs[i].src == p->pairs[i].dst)
			return cr_fail(r, e, "a host to itself");
	}
	p->n_pairs = (unsigned)n;
	return 0;
}

int cfab_pattern(struct config_reader *r, const config_setting_t *g, const struct fabric *f, struct fab_pattern *p)
{
	const config_setting_t *s;
	int kind = 0;
	long long rail = -1;
	uint64_t seed = 1;

	memset(p, 0, sizeof(*p));
	p->rail = -1;
	if (!cr_required(r, g, "pattern", "pairs, incast, all_to_all, permutation or ring") ||
	    opt_pick(r, g, "pattern", pattern_names, &kind) < 0)
		return -1;
	p->kind = (enum fab_pattern_kind)kind;
	if ((s = config_setting_get_member(g, "hosts")) && pattern_hosts(r, s, f, p))
		return -1;
	if (p->kind == FAB_PAT_INCAST) {
		if (!(s = cr_required(r, g, "dst", "the host every sender sends to")) || host_named(r, s, f, &p->dst))
			return -1;
	} else if (config_setting_get_member(g, "dst")) {
		return cr_fail_member(r, g, "dst", "only an incast has one destination");
	}
	if (p->kind == FAB_PAT_PAIRS) {
		if (!(s = cr_required(r, g, "pairs", "( [\"SRC\", \"DST\"], ... )")) || pattern_pairs(r, s, f, p))
			return -1;
	} else if (config_setting_get_member(g, "pairs")) {
		return cr_fail_member(r, g, "pairs", "only pattern \"pairs\" lists its pairs");
	}
	if (config_setting_get_member(g, "seed") && p->kind != FAB_PAT_PERMUTATION)
		return cr_fail_member(r, g, "seed", "only a permutation is drawn at random");
	if (cr_opt_u64(r, g, "seed", 0, INT64_MAX, &seed) < 0 || cr_opt_int(r, g, "rail", 0, FAB_MAX_RAILS - 1, false, &rail) < 0)
		return -1;
	p->seed = seed;
	p->rail = (int)rail;
	if (p->rail >= 0 && (unsigned)p->rail >= f->rails)
		return cr_fail_member(r, g, "rail", "%d, but the fabric's hosts have %u NIC%s (rails 0..%u)", p->rail, f->rails,
				      f->rails == 1 ? "" : "s", f->rails - 1);
	return 0;
}

/* ---- traffic entries ------------------------------------------------------------------------- */

static const char *const traffic_keys[] = { "name", "qps_per_pair", "qpn", "dest_qpn", "udp_sport", "sport_step", "gbps",
					    NULL };

static int traffic_known_keys(struct config_reader *r, const config_setting_t *e, const char *const *extra)
{
	const char *keys[32];
	unsigned k = 0;

	for (const char *const *l[] = { traffic_keys, cfab_pattern_keys, extra }, *const **p = l; p < l + 3; p++)
		for (const char *const *n = *p; n && *n && k < 31; n++)
			keys[k++] = *n;
	keys[k] = NULL;
	return cr_known_keys(r, e, keys);
}

static int traffic_sport(struct config_reader *r, const config_setting_t *e, struct cfab_traffic *t)
{
	const config_setting_t *sp = config_setting_get_member(e, "udp_sport");
	const char *v = sp ? config_setting_get_string(sp) : NULL;
	long long port;

	if (!sp)
		return 0;
	if (v && !strcmp(v, "entropy"))
		return config_setting_get_member(e, "sport_step")
			       ? cr_fail_member(r, e, "sport_step", "only with a udp_sport number (entropy derives each port)")
			       : 0;
	if (cr_int_range(r, sp, 1, 65535, false, &port))
		return -1;
	t->sport_entropy = false;
	t->sport = (uint16_t)port;
	return 0;
}

int cfab_traffic(struct config_reader *r, const config_setting_t *e, const struct fabric *f,
		 const char *const *extra_keys, uint32_t next_qpn, struct cfab_traffic *t)
{
	uint32_t step = 1;

	memset(t, 0, sizeof(*t));
	t->line = (unsigned)config_setting_source_line(e);
	t->qps_per_pair = 1;
	t->qpn = t->dest_qpn = next_qpn;
	t->sport_entropy = true;
	if (cr_want_type(r, e, CONFIG_TYPE_GROUP, "{ pattern = ...; ... }") || traffic_known_keys(r, e, extra_keys) ||
	    cfab_pattern(r, e, f, &t->pattern))
		return -1;
	snprintf(t->name, sizeof(t->name), "%s", fab_pattern_name(t->pattern.kind));
	if (cr_opt_name(r, e, "name", t->name, sizeof(t->name)) < 0 ||
	    cr_opt_u32(r, e, "qps_per_pair", 1, 256, &t->qps_per_pair) < 0 ||
	    cr_opt_u32(r, e, "qpn", 2, 0xFFFFFF, &t->qpn) < 0 || cr_opt_u32(r, e, "dest_qpn", 2, 0xFFFFFF, &t->dest_qpn) < 0 ||
	    cr_opt_float(r, e, "gbps", 0, true, 1600, &t->gbps) < 0 || cr_opt_u32(r, e, "sport_step", 0, 65535, &step) < 0)
		return -1;
	t->sport_step = (uint16_t)step;
	return traffic_sport(r, e, t);
}

/* ---- link events ------------------------------------------------------------------------------ */

static int event_entry(struct config_reader *r, const config_setting_t *e, const struct fabric *f, struct cfab_event *ev)
{
	static const char *const keys[] = { "at_s", "link", "state", NULL };
	static const char *const states[] = { "down", "up", NULL };
	const config_setting_t *s;
	char buf[64];
	int l, st;

	if (cr_want_type(r, e, CONFIG_TYPE_GROUP, "a group { at_s; link; state; }") || cr_known_keys(r, e, keys) ||
	    !cr_required(r, e, "at_s", "seconds after the flows start") || cr_opt_float(r, e, "at_s", 0, false, 1e6, &ev->at_s) < 0 ||
	    !(s = cr_required(r, e, "link", "a link's name, e.g. \"leaf0-spine1\"")) ||
	    cr_want_type(r, s, CONFIG_TYPE_STRING, "a link's name") || !cr_required(r, e, "state", "down or up") ||
	    (st = cr_pick(r, config_setting_get_member(e, "state"), states, NULL)) < 0)
		return -1;
	if ((l = fabric_link_by_name(f, config_setting_get_string(s))) < 0)
		return cr_fail(r, s, "no link '%s' in the fabric (names as roce-fabric lists them: %s, ...)",
			       cr_shown(config_setting_get_string(s), buf), f->links[0].name);
	ev->link = (unsigned)l;
	ev->up = st == 1;
	ev->line = (unsigned)config_setting_source_line(e);
	return 0;
}

int cfab_events(struct config_reader *r, const config_setting_t *g, const struct fabric *f, struct cfab_event *out,
		unsigned max, double *convergence_ms)
{
	const config_setting_t *ls = config_setting_get_member(g, "events");
	int n;

	*convergence_ms = 50;
	if (cr_opt_float(r, g, "convergence_ms", 0, false, 60000, convergence_ms) < 0)
		return -1;
	if (!ls)
		return 0;
	if (config_setting_type(ls) != CONFIG_TYPE_LIST)
		return cr_fail(r, ls, "must be a list ( { at_s = ...; link = ...; state = \"down\"; }, ... ), not %s",
			       cr_type_name(ls));
	n = config_setting_length(ls);
	if (n < 1 || (unsigned)n > max)
		return cr_fail(r, ls, "%d events (allowed: 1..%u)", n, max);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(ls, (unsigned)i);

		if (event_entry(r, e, f, &out[i]))
			return -1;
		if (i && out[i].at_s < out[i - 1].at_s)
			return cr_fail_member(r, e, "at_s", "%g is before the event above (%g): list them in time order",
					      out[i].at_s, out[i - 1].at_s);
	}
	return n;
}

int cfab_fill(const char *template, const char *const *names, const char *const *values, unsigned n, char *out,
	      size_t len)
{
	size_t used = 0;

	for (const char *c = template; *c; c++) {
		const char *put = NULL;
		size_t skip = 0, k;
		for (unsigned i = 0; i < n && !put; i++) {
			size_t l = strlen(names[i]);
			if (c[0] == '{' && !strncmp(c + 1, names[i], l) && c[1 + l] == '}')
				put = values[i], skip = l + 1;
		}
		k = put ? strlen(put) : 1;
		if (used + k >= len)
			return -1;
		memcpy(out + used, put ? put : c, k);
		used += k;
		c += skip;
	}
	out[used] = 0;
	return 0;
}

int cfab_link_command(const char *template, const char *link, const char *state, char *out, size_t len)
{
	static const char *const names[] = { "link", "state" };
	const char *const values[] = { link, state };

	return cfab_fill(template, names, values, 2, out, len);
}

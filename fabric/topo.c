/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A fabric from its description: the switches and hosts a kind implies (or the custom lists),
 * the links between them, then the ports (each switch's in the order of its links), the subnets
 * (one per switch with NICs, carved from the pool), the NICs' addresses and everyone's MACs.
 *
 * Built in two passes so that nothing grows: the kind gives every count first (plan_*), the
 * arrays are allocated once, then filled (wire_*).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"

struct builder {
	const struct fab_spec *s;
	struct fabric *f;
	char *err;
	size_t errlen;
};

int fab_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

#define fail(b, ...) fab_error((b)->err, (b)->errlen, __VA_ARGS__)

void fab_spec_defaults(struct fab_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->kind = FAB_LEAF_SPINE;
	s->uplinks = 1;
	s->rails = 1;
	s->host_gbps = s->uplink_gbps = 100;
	s->host_delay_us = s->uplink_delay_us = s->core_delay_us = 1;
	s->pool = FAB_DEFAULT_POOL;
	s->pool_len = FAB_DEFAULT_POOL_LEN;
	s->lb.lb = FAB_LB_ECMP;
	s->lb.hash.fn = FAB_HASH_CRC32;
	s->lb.hash.fields = FAB_FIELDS_5TUPLE;
	s->lb.flowlet_gap_ns = 50000;
}

void fab_spec_free(struct fab_spec *s)
{
	free(s->switches);
	free(s->host_names);
	free(s->links);
	s->switches = NULL;
	s->host_names = NULL;
	s->links = NULL;
	s->n_switches = s->n_host_names = s->n_links = 0;
}

void fabric_free(struct fabric *f)
{
	free(f->hosts);
	free(f->nics);
	free(f->switches);
	free(f->ports);
	free(f->links);
	memset(f, 0, sizeof(*f));
}

/* ---- counts --------------------------------------------------------------------------------- */

struct plan {
	unsigned switches, hosts, nics, links;
};

static int plan_custom(struct builder *b, struct plan *p)
{
	const struct fab_spec *s = b->s;

	p->switches = s->n_switches;
	p->hosts = s->n_host_names;
	for (unsigned i = 0; i < s->n_links; i++) {
		p->links += s->links[i].count;
		for (unsigned h = 0; h < s->n_host_names; h++)
			if (!strcmp(s->links[i].a, s->host_names[h]) || !strcmp(s->links[i].b, s->host_names[h]))
				p->nics += s->links[i].count;
	}
	return 0;
}

static int plan(struct builder *b, struct plan *p)
{
	const struct fab_spec *s = b->s;
	uint64_t sw = 0, hosts = 0, nics = 0, links = 0;

	memset(p, 0, sizeof(*p));
	switch (s->kind) {
	case FAB_LEAF_SPINE:
		sw = (uint64_t)s->leaves + s->spines;
		hosts = nics = (uint64_t)s->leaves * s->hosts_per_leaf;
		links = nics + (uint64_t)s->leaves * s->spines * s->uplinks;
		break;
	case FAB_RAIL:
		sw = (uint64_t)s->rails + s->spines;
		hosts = s->hosts;
		nics = (uint64_t)s->hosts * s->rails;
		links = nics + (uint64_t)s->rails * s->spines * s->uplinks;
		break;
	case FAB_FAT_TREE:
		if (s->k < 2 || s->k % 2)
			return fail(b, "k: %u is not an even number of ports of at least 2", s->k);
		sw = (uint64_t)s->k * s->k + (uint64_t)(s->k / 2) * (s->k / 2);
		hosts = nics = (uint64_t)s->k * s->k * s->k / 4;
		links = nics + 2 * (uint64_t)s->k * (s->k / 2) * (s->k / 2);
		break;
	case FAB_CUSTOM:
		return plan_custom(b, p);
	}
	if (sw > FAB_MAX_SWITCHES)
		return fail(b, "%s: %llu switches (allowed: up to %u)", fabric_kind_name(s->kind), (unsigned long long)sw,
			    FAB_MAX_SWITCHES);
	if (nics > FAB_MAX_NICS)
		return fail(b, "%s: %llu host NICs (allowed: up to %u)", fabric_kind_name(s->kind), (unsigned long long)nics,
			    FAB_MAX_NICS);
	p->switches = (unsigned)sw;
	p->hosts = (unsigned)hosts;
	p->nics = (unsigned)nics;
	p->links = (unsigned)links;
	return 0;
}

/* ---- switches, hosts and links -------------------------------------------------------------- */

static unsigned add_switch(struct fabric *f, unsigned tier, unsigned pod, const char *fmt, unsigned i)
{
	struct fab_switch *w = &f->switches[f->n_switches];

	snprintf(w->name, sizeof(w->name), fmt, i);
	w->tier = tier;
	w->pod = pod;
	return f->n_switches++;
}

static unsigned add_host(struct fabric *f, const char *name, unsigned nics)
{
	struct fab_host *h = &f->hosts[f->n_hosts];

	snprintf(h->name, sizeof(h->name), "%s", name);
	h->first_nic = f->n_nics;
	h->n_nics = nics;
	for (unsigned r = 0; r < nics; r++) {
		struct fab_nic *n = &f->nics[f->n_nics++];
		n->host = f->n_hosts;
		n->rail = r;
		if (nics == 1)
			snprintf(n->name, sizeof(n->name), "%s", name);
		else
			snprintf(n->name, sizeof(n->name), "%.24s-r%u", name, (uint8_t)r);
	}
	return f->n_hosts++;
}

/* A link from switch sw to a NIC or another switch; ports are numbered later (wire_ports). The
 * name is "A-B", ".N" added for the N-th of parallel links between the same ends. */
static void add_link(struct fabric *f, unsigned sw, bool to_nic, unsigned b, unsigned tier, double gbps, double delay_us,
		     unsigned parallel)
{
	struct fab_link *l = &f->links[f->n_links++];
	const char *bn = to_nic ? f->nics[b].name : f->switches[b].name;

	l->sw = sw;
	l->to_nic = to_nic;
	l->b = b;
	l->tier = tier;
	l->gbps = gbps;
	l->delay_us = delay_us;
	if (to_nic)
		snprintf(l->name, sizeof(l->name), "%s-%s", bn, f->switches[sw].name);
	else if (parallel)
		snprintf(l->name, sizeof(l->name), "%s-%s.%u", f->switches[sw].name, bn, parallel);
	else
		snprintf(l->name, sizeof(l->name), "%s-%s", f->switches[sw].name, bn);
}

static void hosts_named(struct fabric *f, unsigned n, unsigned nics)
{
	char name[FAB_NAME_LEN];

	for (unsigned h = 0; h < n; h++) {
		snprintf(name, sizeof(name), "h%u", h);
		add_host(f, name, nics);
	}
}

static void uplinks(struct fabric *f, const struct fab_spec *s, unsigned leaves, unsigned first_spine)
{
	for (unsigned l = 0; l < leaves; l++)
		for (unsigned sp = 0; sp < s->spines; sp++)
			for (unsigned u = 0; u < s->uplinks; u++)
				add_link(f, l, false, first_spine + sp, FAB_TIER_LEAF, s->uplink_gbps, s->uplink_delay_us, u);
}

static void wire_leaf_spine(struct fabric *f, const struct fab_spec *s)
{
	for (unsigned l = 0; l < s->leaves; l++)
		add_switch(f, FAB_TIER_LEAF, 0, "leaf%u", l);
	for (unsigned sp = 0; sp < s->spines; sp++)
		add_switch(f, FAB_TIER_SPINE, 0, "spine%u", sp);
	hosts_named(f, s->leaves * s->hosts_per_leaf, 1);
	for (unsigned n = 0; n < f->n_nics; n++)
		add_link(f, n / s->hosts_per_leaf, true, n, FAB_TIER_HOST, s->host_gbps, s->host_delay_us, 0);
	uplinks(f, s, s->leaves, s->leaves);
}

/* Rail-optimised: NIC r of every host on leaf r, so that traffic between NICs of one rail stays
 * on its leaf; the spines join the rails. */
static void wire_rail(struct fabric *f, const struct fab_spec *s)
{
	for (unsigned r = 0; r < s->rails; r++)
		add_switch(f, FAB_TIER_LEAF, 0, "leaf%u", r);
	for (unsigned sp = 0; sp < s->spines; sp++)
		add_switch(f, FAB_TIER_SPINE, 0, "spine%u", sp);
	hosts_named(f, s->hosts, s->rails);
	for (unsigned r = 0; r < s->rails; r++)
		for (unsigned h = 0; h < s->hosts; h++)
			add_link(f, r, true, h * s->rails + r, FAB_TIER_HOST, s->host_gbps, s->host_delay_us, 0);
	uplinks(f, s, s->rails, s->rails);
}

/* The k-ary fat-tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge and k/2 aggregation
 * switches, edge and aggregation fully meshed in a pod, aggregation switch j of every pod wired
 * to cores j*k/2 .. j*k/2 + k/2 - 1; k/2 hosts per edge switch. */
static void wire_fat_tree(struct fabric *f, const struct fab_spec *s)
{
	unsigned k = s->k, half = k / 2, edges = k * half, cores = half * half;

	for (unsigned e = 0; e < edges; e++)
		add_switch(f, FAB_TIER_LEAF, e / half, "edge%u", e);
	for (unsigned a = 0; a < edges; a++)
		add_switch(f, FAB_TIER_SPINE, a / half, "agg%u", a);
	for (unsigned c = 0; c < cores; c++)
		add_switch(f, FAB_TIER_CORE, 0, "core%u", c);
	hosts_named(f, edges * half, 1);
	for (unsigned n = 0; n < f->n_nics; n++)
		add_link(f, n / half, true, n, FAB_TIER_HOST, s->host_gbps, s->host_delay_us, 0);
	for (unsigned e = 0; e < edges; e++)
		for (unsigned j = 0; j < half; j++)
			add_link(f, e, false, edges + (e / half) * half + j, FAB_TIER_LEAF, s->uplink_gbps, s->uplink_delay_us, 0);
	for (unsigned a = 0; a < edges; a++)
		for (unsigned j = 0; j < half; j++)
			add_link(f, edges + a, false, 2 * edges + (a % half) * half + j, FAB_TIER_SPINE,
				 s->core_gbps > 0 ? s->core_gbps : s->uplink_gbps, s->core_delay_us, 0);
}

static int custom_end(const struct fabric *f, const char *name, bool *is_host)
{
	int i = fabric_switch_by_name(f, name);

	*is_host = i < 0;
	return i >= 0 ? i : fabric_host_by_name(f, name);
}

/* The custom lists: hosts get a NIC per link that names them, in the order of the links. */
static int wire_custom(struct builder *b)
{
	const struct fab_spec *s = b->s;
	struct fabric *f = b->f;
	unsigned *next_nic = calloc(s->n_host_names ? s->n_host_names : 1, sizeof(*next_nic));
	unsigned *nics_of = calloc(s->n_host_names ? s->n_host_names : 1, sizeof(*nics_of));
	int rc = -1;

	if (!next_nic || !nics_of) {
		fail(b, "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < s->n_switches; i++) {
		snprintf(f->switches[i].name, FAB_NAME_LEN, "%s", s->switches[i].name);
		f->switches[i].tier = s->switches[i].tier;
		f->n_switches++;
	}
	for (unsigned i = 0; i < s->n_links; i++)
		for (unsigned h = 0; h < s->n_host_names; h++)
			if (!strcmp(s->links[i].a, s->host_names[h]) || !strcmp(s->links[i].b, s->host_names[h]))
				nics_of[h] += s->links[i].count;
	for (unsigned h = 0; h < s->n_host_names; h++) {
		if (!nics_of[h]) {
			fail(b, "hosts: %s has no link (every host needs one to a switch)", s->host_names[h]);
			goto out;
		}
		if (nics_of[h] > FAB_MAX_RAILS) {
			fail(b, "hosts: %s has %u links (allowed: up to %u NICs)", s->host_names[h], nics_of[h], FAB_MAX_RAILS);
			goto out;
		}
		next_nic[h] = f->n_nics;
		add_host(f, s->host_names[h], nics_of[h]);
		if (nics_of[h] > f->rails)
			f->rails = nics_of[h];
	}
	for (unsigned i = 0; i < s->n_links; i++) {
		const struct fab_spec_link *sl = &s->links[i];
		bool a_host, b_host;
		int a = custom_end(f, sl->a, &a_host), e = custom_end(f, sl->b, &b_host);

		if (a < 0 || e < 0) {
			fail(b, "links.[%u]: %s is neither a switch nor a host of this fabric", i, a < 0 ? sl->a : sl->b);
			goto out;
		}
		if (a_host && b_host) {
			fail(b, "links.[%u]: %s to %s joins two hosts (a link has a switch at one end at least)", i, sl->a, sl->b);
			goto out;
		}
		if (!a_host && !b_host && a == e) {
			fail(b, "links.[%u]: %s to itself", i, sl->a);
			goto out;
		}
		for (unsigned c = 0; c < sl->count; c++) {
			if (a_host || b_host) {
				unsigned h = (unsigned)(a_host ? a : e);
				add_link(f, (unsigned)(a_host ? e : a), true, next_nic[h]++, FAB_TIER_HOST, sl->gbps, sl->delay_us, 0);
			} else {
				unsigned lo = f->switches[a].tier <= f->switches[e].tier ? (unsigned)a : (unsigned)e;
				unsigned hi = lo == (unsigned)a ? (unsigned)e : (unsigned)a;
				add_link(f, lo, false, hi, f->switches[lo].tier, sl->gbps, sl->delay_us, c);
			}
		}
	}
	rc = 0;
out:
	free(next_nic);
	free(nics_of);
	return rc;
}

/* ---- ports, subnets, addresses -------------------------------------------------------------- */

static int wire_ports(struct builder *b)
{
	struct fabric *f = b->f;
	unsigned *used = calloc(f->n_switches ? f->n_switches : 1, sizeof(*used));

	if (!used)
		return fail(b, "out of memory");
	for (unsigned l = 0; l < f->n_links; l++) {
		f->switches[f->links[l].sw].n_ports++;
		if (!f->links[l].to_nic)
			f->switches[f->links[l].b].n_ports++;
	}
	for (unsigned s = 0; s < f->n_switches; s++) {
		if (f->switches[s].n_ports > FAB_MAX_SWITCH_PORTS) {
			free(used);
			return fail(b, "%s has %u ports (allowed: up to %u)", f->switches[s].name, f->switches[s].n_ports,
				    FAB_MAX_SWITCH_PORTS);
		}
		f->switches[s].first_port = f->n_ports;
		f->n_ports += f->switches[s].n_ports;
	}
	f->ports = calloc(f->n_ports ? f->n_ports : 1, sizeof(*f->ports));
	if (!f->ports) {
		free(used);
		return fail(b, "out of memory");
	}
	for (unsigned l = 0; l < f->n_links; l++) {
		struct fab_link *k = &f->links[l];
		struct fab_port *pa;

		k->port = used[k->sw]++;
		pa = &f->ports[f->switches[k->sw].first_port + k->port];
		pa->link = l;
		pa->to_nic = k->to_nic;
		pa->peer = k->b;
		if (k->to_nic) {
			f->nics[k->b].sw = k->sw;
			f->nics[k->b].port = k->port;
			f->nics[k->b].link = l;
		} else {
			struct fab_port *pb;
			k->b_port = used[k->b]++;
			pb = &f->ports[f->switches[k->b].first_port + k->b_port];
			pb->link = l;
			pb->peer = k->sw;
			pb->peer_port = k->port;
			pa->peer_port = k->b_port;
		}
	}
	free(used);
	for (unsigned s = 0; s < f->n_switches; s++)
		for (unsigned p = 0; p < f->switches[s].n_ports; p++) {
			uint8_t *m = f->ports[f->switches[s].first_port + p].mac;
			m[0] = 0x02, m[1] = 0xfb, m[2] = (uint8_t)(s >> 8), m[3] = (uint8_t)s, m[4] = (uint8_t)(p >> 8),
			m[5] = (uint8_t)p;
		}
	return 0;
}

/* Custom switches without a tier: one above the nearest switch with hosts (a leaf has hosts). */
static void custom_tiers(struct fabric *f)
{
	bool changed = true;

	for (unsigned s = 0; s < f->n_switches; s++)
		if (!f->switches[s].tier)
			f->switches[s].tier = FAB_TIERS; /* unknown yet */
	for (unsigned n = 0; n < f->n_nics; n++)
		if (f->switches[f->nics[n].sw].tier == FAB_TIERS)
			f->switches[f->nics[n].sw].tier = FAB_TIER_LEAF;
	while (changed) {
		changed = false;
		for (unsigned l = 0; l < f->n_links; l++) {
			struct fab_switch *a = &f->switches[f->links[l].sw], *c;
			if (f->links[l].to_nic)
				continue;
			c = &f->switches[f->links[l].b];
			if (a->tier < FAB_TIERS && c->tier == FAB_TIERS)
				c->tier = a->tier + 1 < FAB_TIERS ? a->tier + 1 : FAB_TIER_CORE, changed = true;
			else if (c->tier < FAB_TIERS && a->tier == FAB_TIERS)
				a->tier = c->tier + 1 < FAB_TIERS ? c->tier + 1 : FAB_TIER_CORE, changed = true;
		}
	}
	for (unsigned s = 0; s < f->n_switches; s++)
		if (f->switches[s].tier == FAB_TIERS)
			f->switches[s].tier = FAB_TIER_SPINE; /* joins nothing with hosts: fabric_routes() says so */
	for (unsigned l = 0; l < f->n_links; l++)
		if (!f->links[l].to_nic) {
			unsigned ta = f->switches[f->links[l].sw].tier, tb = f->switches[f->links[l].b].tier;
			f->links[l].tier = ta < tb ? ta : tb;
		}
}

static unsigned prefix_holding(unsigned addresses)
{
	unsigned len = 30;

	while (len > 0 && (1ull << (32 - len)) < addresses)
		len--;
	return len;
}

/* One subnet per switch with NICs, in switch order, all of one size: /24 (198.18.L.H, easy to
 * read) when the pool has room for them, else the longest prefix that holds the busiest switch's
 * NICs, its gateway, network and broadcast addresses. The NICs get .2 on, the switch .1. */
static int wire_addresses(struct builder *b)
{
	struct fabric *f = b->f;
	const struct fab_spec *s = b->s;
	unsigned *on = calloc(f->n_switches ? f->n_switches : 1, sizeof(*on)), most = 0, owners = 0, len;
	uint64_t pool_size = 1ull << (32 - s->pool_len), block;
	char ip[16];
	int rc = 0;

	if (!on)
		return fail(b, "out of memory");
	for (unsigned n = 0; n < f->n_nics; n++)
		if (on[f->nics[n].sw]++ == 0)
			owners++;
	for (unsigned w = 0; w < f->n_switches; w++)
		most = on[w] > most ? on[w] : most;
	len = prefix_holding(most + 3);
	if (s->subnet_len) {
		if (s->subnet_len > len || s->subnet_len < s->pool_len) {
			rc = fail(b, "subnet_len: /%u does not hold %u NICs with a gateway (allowed: /%u../%u)", s->subnet_len,
				  most, s->pool_len, len);
			goto out;
		}
		len = s->subnet_len;
	} else if (len >= 24 && owners * (1ull << 8) <= pool_size) {
		len = 24;
	}
	block = 1ull << (32 - len);
	if (len < s->pool_len || owners * block > pool_size) {
		rc = fail(b, "subnet: more hosts than addresses: %u switches with hosts need %u subnets of /%u (up to %u NICs "
			     "each), %s/%u holds %llu such subnets",
			  owners, owners, len, most, fabric_ip_str(s->pool, ip), s->pool_len,
			  (unsigned long long)(len < s->pool_len ? 0 : pool_size / block));
		goto out;
	}
	owners = 0;
	for (unsigned w = 0; w < f->n_switches; w++)
		if (on[w]) {
			f->switches[w].subnet = s->pool + (uint32_t)(owners++ * block);
			f->switches[w].prefix_len = (uint8_t)len;
		}
	memset(on, 0, sizeof(*on) * f->n_switches);
	for (unsigned n = 0; n < f->n_nics; n++) {
		struct fab_nic *c = &f->nics[n];
		const struct fab_switch *w = &f->switches[c->sw];
		c->gateway = w->subnet + 1;
		c->ip = w->subnet + 2 + on[c->sw]++;
		c->prefix_len = w->prefix_len;
		c->mac[0] = 0x02, c->mac[1] = 0xfa, c->mac[2] = 0, c->mac[3] = (uint8_t)(n >> 16), c->mac[4] = (uint8_t)(n >> 8),
		c->mac[5] = (uint8_t)n;
	}
out:
	free(on);
	return rc;
}

/* Every switch the kind's default; then the overrides, by name. */
static int apply_lb(struct builder *b)
{
	const struct fab_spec *s = b->s;
	struct fabric *f = b->f;

	for (unsigned w = 0; w < f->n_switches; w++) {
		f->switches[w].lb = s->lb;
		if (s->lb.hash.per_switch)
			f->switches[w].lb.hash.seed = s->lb.hash.seed + w * 0x9E3779B1u;
	}
	for (unsigned i = 0; i < s->n_switches; i++) {
		int w = fabric_switch_by_name(f, s->switches[i].name);
		if (w < 0)
			return fail(b, "switches.[%u].name: no switch %s in this %s fabric (its switches: %s .. %s)", i,
				    s->switches[i].name, fabric_kind_name(s->kind), f->switches[0].name,
				    f->switches[f->n_switches - 1].name);
		if (s->switches[i].has_lb)
			f->switches[w].lb = s->switches[i].lb;
	}
	return 0;
}

static int check_sizes(struct builder *b)
{
	const struct fab_spec *s = b->s;

	switch (s->kind) {
	case FAB_LEAF_SPINE:
		if (!s->leaves || !s->hosts_per_leaf)
			return fail(b, "%s: leaves and hosts_per_leaf must be at least 1", !s->leaves ? "leaves" : "hosts_per_leaf");
		if (s->leaves > 1 && !s->spines)
			return fail(b, "spines: %u leaves need at least one spine to join them", s->leaves);
		break;
	case FAB_RAIL:
		if (!s->hosts || !s->rails)
			return fail(b, "%s: must be at least 1", !s->hosts ? "hosts" : "rails");
		if (s->rails > FAB_MAX_RAILS)
			return fail(b, "rails: %u (allowed: up to %u NICs per host)", s->rails, FAB_MAX_RAILS);
		break;
	case FAB_FAT_TREE:
		break;
	case FAB_CUSTOM:
		if (!s->n_switches || !s->n_host_names)
			return fail(b, "%s: a custom fabric lists its switches and hosts", !s->n_switches ? "switches" : "hosts");
		break;
	}
	return 0;
}

int fabric_build(const struct fab_spec *s, struct fabric *f, char *err, size_t errlen)
{
	struct builder b = { .s = s, .f = f, .err = err, .errlen = errlen };
	struct plan p;

	memset(f, 0, sizeof(*f));
	if (check_sizes(&b) || plan(&b, &p))
		return -1;
	f->kind = s->kind;
	f->rails = s->kind == FAB_RAIL ? s->rails : 1;
	f->pool = s->pool;
	f->pool_len = s->pool_len;
	f->switches = calloc(p.switches ? p.switches : 1, sizeof(*f->switches));
	f->hosts = calloc(p.hosts ? p.hosts : 1, sizeof(*f->hosts));
	f->nics = calloc(p.nics ? p.nics : 1, sizeof(*f->nics));
	f->links = calloc(p.links ? p.links : 1, sizeof(*f->links));
	if (!f->switches || !f->hosts || !f->nics || !f->links) {
		fabric_free(f);
		return fail(&b, "out of memory");
	}
	switch (s->kind) {
	case FAB_LEAF_SPINE:
		wire_leaf_spine(f, s);
		break;
	case FAB_RAIL:
		wire_rail(f, s);
		break;
	case FAB_FAT_TREE:
		wire_fat_tree(f, s);
		break;
	case FAB_CUSTOM:
		if (wire_custom(&b)) {
			fabric_free(f);
			return -1;
		}
		break;
	}
	if (wire_ports(&b) || (s->kind == FAB_CUSTOM ? (custom_tiers(f), 0) : 0) || wire_addresses(&b) || apply_lb(&b)) {
		fabric_free(f);
		return -1;
	}
	return 0;
}

/* ---- queries -------------------------------------------------------------------------------- */

int fabric_switch_by_name(const struct fabric *f, const char *name)
{
	for (unsigned i = 0; i < f->n_switches; i++)
		if (!strcmp(f->switches[i].name, name))
			return (int)i;
	return -1;
}

int fabric_host_by_name(const struct fabric *f, const char *name)
{
	for (unsigned i = 0; i < f->n_hosts; i++)
		if (!strcmp(f->hosts[i].name, name))
			return (int)i;
	return -1;
}

int fabric_nic_by_name(const struct fabric *f, const char *name)
{
	for (unsigned i = 0; i < f->n_nics; i++)
		if (!strcmp(f->nics[i].name, name))
			return (int)i;
	return -1;
}

int fabric_link_by_name(const struct fabric *f, const char *name)
{
	for (unsigned i = 0; i < f->n_links; i++)
		if (!strcmp(f->links[i].name, name))
			return (int)i;
	return -1;
}

const char *fabric_peer_name(const struct fabric *f, const struct fab_port *p)
{
	return p->to_nic ? f->nics[p->peer].name : f->switches[p->peer].name;
}

double fabric_oversubscription(const struct fabric *f, unsigned s)
{
	double down = 0, up = 0;
	const struct fab_switch *w = &f->switches[s];

	for (unsigned p = 0; p < w->n_ports; p++) {
		const struct fab_port *q = &f->ports[w->first_port + p];
		double g = f->links[q->link].gbps;
		if (!q->to_nic && f->switches[q->peer].tier > w->tier)
			up += g;
		else
			down += g;
	}
	return up > 0 ? down / up : 0;
}

const char *fabric_kind_name(enum fab_kind k)
{
	static const char *const names[] = { "leaf-spine", "rail", "fat-tree", "custom" };
	return (unsigned)k < 4 ? names[k] : "?";
}

const char *fabric_tier_name(unsigned tier)
{
	static const char *const names[] = { "host", "leaf", "spine", "core" };
	return tier < FAB_TIERS ? names[tier] : "?";
}

const char *fabric_lb_name(enum fab_lb lb)
{
	static const char *const names[] = { "ecmp", "flowlet", "spray" };
	return (unsigned)lb < 3 ? names[lb] : "?";
}

const char *fabric_ip_str(uint32_t ip, char buf[16])
{
	snprintf(buf, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
	return buf;
}

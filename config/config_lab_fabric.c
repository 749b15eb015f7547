/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The `fabric` group of an engine config (docs/fabric.md, "The engine runs it"): the topology is
 * read by config_fabric.h (the parser roce-fabric and roce-ccsim use), then made into what the
 * engine's lab runs, so that a fabric that loads is one the engine can start:
 *   - a port per NIC, named as the NIC ("h3", "h0-r1"), on the in-process cable "ring:fabN:a"
 *     whose other end its switch polls; MAC, IPv4 address and link speed from the fabric, the
 *     other settings from `nic = { mtu; rx_desc; tx_desc; timestamps; qos; np; }`;
 *   - a txrx role per NIC, on `host_lcores` in turn (default: the switches' lcores);
 *   - the switches on `lcore` (default: the last worker lcore), or dealt in turn over `lcores`,
 *     their ports and routes (struct cfg_fabric), within the fixed sizes of config.h.
 * The fabric's own keys are read by cfab_load(); `lcore`, `lcores`, `host_lcores` and `nic` are
 * the engine's.
 */
#include "config_internal.h"
#include "config_fabric.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NIC_KEYS_N 7
static const char *const nic_keys[NIC_KEYS_N] = { "mtu", "rx_desc", "tx_desc", "timestamps", "qos", "np", NULL };

/* What the engine can run: the fixed sizes of struct cfg_fabric and of the port and role tables. */
static int fits_the_engine(struct loader *ld, const config_setting_t *g, const struct fabric *f)
{
	const struct engine_config *c = ld->cfg;
	const char *plan = "plan larger fabrics with roce-fabric, or simulate them in roce-ccsim";

	if (config_setting_get_member(g, "external")) /* only the NICs run here */
		goto nics;
	if (f->n_switches > CFG_FAB_MAX_SWITCHES)
		return cr_fail(&ld->r, g, "%u switches, but the engine's lab runs at most %d (%s)", f->n_switches,
			       CFG_FAB_MAX_SWITCHES, plan);
	if (f->n_links > CFG_FAB_MAX_LINKS)
		return cr_fail(&ld->r, g, "%u links, but the engine's lab runs at most %d (%s)", f->n_links,
			       CFG_FAB_MAX_LINKS, plan);
	for (unsigned s = 0; s < f->n_switches; s++)
		if (f->switches[s].n_ports > CFG_FAB_MAX_SW_PORTS)
			return cr_fail(&ld->r, g, "switch %s has %u ports, but a lab switch's buffer accounts at most %d (%s)",
				       f->switches[s].name, f->switches[s].n_ports, CFG_FAB_MAX_SW_PORTS, plan);
nics:
	if (c->n_ports + f->n_nics > CFG_MAX_PORTS)
		return cr_fail(&ld->r, g, "%u NICs%s%u ports listed, but the engine runs at most %d ports (%s)", f->n_nics,
			       c->n_ports ? " and " : " (", c->n_ports, CFG_MAX_PORTS, plan);
	if (c->n_roles + f->n_nics > CFG_MAX_ROLES)
		return cr_fail(&ld->r, g, "%u NICs need a role each and lcores lists %u: more than %d roles", f->n_nics,
			       c->n_roles, CFG_MAX_ROLES);
	return 0;
}

/* `lcores = [1, 2]`: the switches dealt over these in turn (leaves, spines, cores as listed). */
static int switch_lcores(struct loader *ld, const config_setting_t *ls, const struct fabric *f)
{
	struct cfg_fabric *fb = &ld->cfg->fab;
	int n = config_setting_length(ls);

	if (config_setting_type(ls) != CONFIG_TYPE_ARRAY || n < 1 || n > CFG_FAB_MAX_LCORES)
		return cr_fail(&ld->r, ls, "must be an array of 1..%d lcores, e.g. [1, 2] (the switches are dealt over them "
			       "in turn)", CFG_FAB_MAX_LCORES);
	if ((unsigned)n > f->n_switches)
		return cr_fail(&ld->r, ls, "%d lcores for %u switches: an lcore would have none (list at most %u)", n,
			       f->n_switches, f->n_switches);
	for (int i = 0; i < n; i++) {
		if (ld_worker_lcore(ld, config_setting_get_elem(ls, (unsigned)i), &fb->lcores[i]))
			return -1;
		for (int j = 0; j < i; j++)
			if (fb->lcores[j] == fb->lcores[i])
				return cr_fail(&ld->r, config_setting_get_elem(ls, (unsigned)i),
					       "lcore %u is listed twice (one lcore polls its switches in one loop)",
					       fb->lcores[i]);
	}
	fb->n_lcores = (unsigned)n;
	return 0;
}

/* The switches' lcore (`lcore`, default the last worker lcore) or lcores (`lcores`). */
static int fabric_switch_lcores(struct loader *ld, const config_setting_t *g, const struct fabric *f)
{
	const config_setting_t *s = config_setting_get_member(g, "lcore"), *ls = config_setting_get_member(g, "lcores");
	struct cfg_fabric *fb = &ld->cfg->fab;
	int last = ld_last_worker_lcore(ld);

	if (s && ls)
		return cr_fail(&ld->r, ls, "give lcore (every switch on one lcore) or lcores (the switches dealt over "
			       "several), not both");
	if (ls)
		return switch_lcores(ld, ls, f);
	fb->n_lcores = 1;
	if (s)
		return ld_worker_lcore(ld, s, &fb->lcores[0]);
	if (last < 0)
		return cr_fail(&ld->r, g, "eal.lcores \"%s\" has no lcore besides the main one for the fabric's switches",
			       ld->cfg->eal.lcores);
	fb->lcores[0] = (unsigned)last;
	return 0;
}

/* The lcores: `lcore` or `lcores` for the switches, `host_lcores` for the NICs' roles. */
static int fabric_lcores(struct loader *ld, const config_setting_t *g, const struct fabric *f, unsigned *host,
			 unsigned *n_host)
{
	const config_setting_t *hs;

	if (fabric_switch_lcores(ld, g, f))
		return -1;
	ld->cfg->fab.deadlock_ms = 50;
	ld->cfg->fab.sample_ms = 10;
	if (cr_opt_float(&ld->r, g, "deadlock_ms", 0, true, 60000, &ld->cfg->fab.deadlock_ms) < 0 ||
	    cr_opt_float(&ld->r, g, "sample_ms", 0.1, false, 60000, &ld->cfg->fab.sample_ms) < 0)
		return -1;
	*n_host = ld->cfg->fab.n_lcores;
	memcpy(host, ld->cfg->fab.lcores, *n_host * sizeof(*host));
	if (!(hs = config_setting_get_member(g, "host_lcores")))
		return 0;
	if (config_setting_type(hs) != CONFIG_TYPE_ARRAY || config_setting_length(hs) < 1 ||
	    config_setting_length(hs) > CFG_MAX_PORTS)
		return cr_fail(&ld->r, hs, "must be an array of 1..%d lcores, e.g. [1, 2] (the NICs' roles take them in turn)",
			       CFG_MAX_PORTS);
	*n_host = (unsigned)config_setting_length(hs);
	for (unsigned i = 0; i < *n_host; i++)
		if (ld_worker_lcore(ld, config_setting_get_elem(hs, i), &host[i]))
			return -1;
	return 0;
}

/* Port `idx` for NIC n: its cable, addresses and speed from the fabric, the rest from `nic`. */
static int nic_port(struct loader *ld, const config_setting_t *g, const config_setting_t *t, const struct fabric *f,
		    unsigned n, unsigned idx)
{
	struct engine_config *c = ld->cfg;
	struct cfg_port *p = &c->ports[idx];
	const struct fab_nic *nic = &f->nics[n];

	memset(p, 0, sizeof(*p));
	if (ld_port_settings(ld, t, p))
		return -1;
	snprintf(p->name, sizeof(p->name), "%s", nic->name);
	snprintf(p->device, sizeof(p->device), "ring:fab%u:a", n);
	p->line = config_setting_source_line(g);
	for (unsigned j = 0; j < idx; j++) {
		if (!strcmp(c->ports[j].name, p->name))
			return cr_fail(&ld->r, g, "the fabric's NIC %s has the name of the port at %s (rename that port)",
				       p->name, cr_at(&ld->r, c->ports[j].line, (char[CR_AT_LEN]){ 0 }));
		if (!strncmp(c->ports[j].device, p->device, strlen(p->device) - 1))
			return cr_fail(&ld->r, g, "the port at %s uses device %.*s, the fabric's cable of NIC %s (use another "
				       "ring name)", cr_at(&ld->r, c->ports[j].line, (char[CR_AT_LEN]){ 0 }),
				       (int)strlen(p->device) - 2, p->device, nic->name);
	}
	p->has_mac = p->has_ipv4 = true;
	memcpy(p->mac, nic->mac, 6);
	for (int b = 0; b < 4; b++)
		p->ipv4[b] = (uint8_t)(nic->ip >> (24 - 8 * b));
	p->link_speed_gbps = f->links[nic->link].gbps;
	/* a NIC cannot send faster than its link: its QPs share the link's rate (the egress
	 * scheduler, docs/qos.md), or a shape below it that `nic.qos.egress` asks for. Unpaced, 15
	 * QPs at line rate each would put 15 links' worth into the leaf's ingress buffer. */
	if (!(p->egress_gbps > 0) || p->egress_gbps > p->link_speed_gbps)
		p->egress_gbps = p->link_speed_gbps;
	snprintf(c->fab.nic[n].host, sizeof(c->fab.nic[n].host), "%s", f->hosts[nic->host].name);
	c->fab.nic[n].rail = nic->rail;
	memcpy(c->fab.nic[n].gateway_mac, f->ports[f->switches[nic->sw].first_port + nic->port].mac, 6);
	return 0;
}

static void add_role(struct engine_config *c, unsigned lcore, unsigned port, unsigned line)
{
	c->roles[c->n_roles++] =
		(struct cfg_lcore_role){.lcore = lcore, .port = port, .queue = 0, .role = CFG_ROLE_TXRX, .line = line};
}

/* A switch's port k: where it leads, the link's rate and delay, the MACs of both ends. */
static void switch_port(const struct fabric *f, unsigned first_nic_port, const struct fab_switch *fs, unsigned k,
			struct cfg_fab_port *o)
{
	const struct fab_port *fp = &f->ports[fs->first_port + k];
	const struct fab_link *l = &f->links[fp->link];

	o->to_nic = fp->to_nic;
	o->peer = fp->to_nic ? first_nic_port + fp->peer : fp->peer;
	o->peer_port = fp->to_nic ? 0 : fp->peer_port;
	o->link = fp->link;
	o->gbps = l->gbps;
	o->delay_us = l->delay_us;
	memcpy(o->mac, fp->mac, 6);
	memcpy(o->next_mac, fp->to_nic ? f->nics[fp->peer].mac : f->ports[f->switches[fp->peer].first_port + fp->peer_port].mac, 6);
}

/* Switch s's equal-cost ports toward switch d's subnet in r, into ports: how many (0: no route). */
static uint8_t group_ports(const struct fab_routes *r, unsigned s, unsigned d, uint8_t ports[CFG_FAB_MAX_SW_PORTS])
{
	const struct fab_group *grp = &r->group[(size_t)s * r->n_dst + (unsigned)r->dst_of_switch[d]];

	for (unsigned m = 0; m < grp->n; m++)
		ports[m] = (uint8_t)r->members[grp->first + m];
	return (uint8_t)grp->n;
}

/* Switch s's routes: a /32 per NIC cabled to it, then every other switch's subnet with its group. */
static int switch_routes(struct loader *ld, const config_setting_t *g, const struct fabric *f,
			 const struct fab_routes *r, unsigned s, struct cfg_fab_switch *o)
{
	const struct fab_switch *fs = &f->switches[s];

	for (unsigned k = 0; k < fs->n_ports; k++) {
		const struct fab_port *fp = &f->ports[fs->first_port + k];
		if (fp->to_nic && o->n_routes < CFG_FAB_MAX_ROUTES)
			o->routes[o->n_routes++] = (struct cfg_fab_route){.prefix = f->nics[fp->peer].ip, .len = 32, .n = 1,
									  .ports = {(uint8_t)k}, .dst_switch = -1,
									  .nic_link = fp->link};
	}
	for (unsigned d = 0; d < f->n_switches; d++) {
		struct cfg_fab_route e = {.prefix = f->switches[d].subnet, .len = f->switches[d].prefix_len, .dst_switch = (int)d};
		if (d == s || r->dst_of_switch[d] < 0 || !(e.n = group_ports(r, s, d, e.ports)))
			continue;
		if (o->n_routes == CFG_FAB_MAX_ROUTES)
			return cr_fail(&ld->r, g, "switch %s needs more than %d routes (the engine's lab holds %d per switch; "
				       "plan larger fabrics with roce-fabric)", fs->name, CFG_FAB_MAX_ROUTES, CFG_FAB_MAX_ROUTES);
		o->routes[o->n_routes++] = e;
	}
	return 0;
}

/* The routes of every switch once they converged after event k, over the links down then. */
static int routes_after(struct loader *ld, const config_setting_t *e, const struct fabric *f, const bool *down, unsigned k)
{
	struct cfg_fabric *o = &ld->cfg->fab;
	struct fab_routes r;
	char err[256];

	if (fabric_routes(f, down, true, &r, err, sizeof(err)))
		return cr_fail(&ld->r, e, "%s", err);
	for (unsigned s = 0; s < o->n_switches; s++)
		for (unsigned i = 0; i < o->sw[s].n_routes; i++) {
			const struct cfg_fab_route *rt = &o->sw[s].routes[i];
			struct cfg_fab_next *nx = &o->sw[s].after[k][i];
			if (rt->dst_switch < 0) { /* a NIC cabled here: reachable while its link is up */
				nx->n = down[rt->nic_link] ? 0 : 1;
				nx->ports[0] = rt->ports[0];
			} else {
				nx->n = group_ports(&r, s, (unsigned)rt->dst_switch, nx->ports);
			}
		}
	fab_routes_free(&r);
	return 0;
}

/* events = ( { at_s = 1.0; link = "leaf0-spine1"; state = "down"; }, ... ), in time order (the
 * shared parser's), each with the routes once converged after it */
static int fabric_events(struct loader *ld, const config_setting_t *g, const struct fabric *f)
{
	struct cfg_fabric *o = &ld->cfg->fab;
	struct cfab_event ev[CFG_FAB_MAX_EVENTS];
	bool down[CFG_FAB_MAX_LINKS] = {false};
	int n = cfab_events(&ld->r, g, f, ev, CFG_FAB_MAX_EVENTS, &o->convergence_ms);

	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		o->events[i] = (struct cfg_fab_event){ .at_s = ev[i].at_s, .link = ev[i].link, .up = ev[i].up, .line = ev[i].line };
		down[ev[i].link] = !ev[i].up;
		if (routes_after(ld, config_setting_get_elem(config_setting_get_member(g, "events"), (unsigned)i), f, down,
				 (unsigned)i))
			return -1;
		o->n_events++;
	}
	return 0;
}

static void copy_links(const struct fabric *f, struct cfg_fabric *o)
{
	o->n_links = f->n_links;
	for (unsigned l = 0; l < f->n_links; l++) {
		const struct fab_link *fl = &f->links[l];
		struct cfg_fab_link *cl = &o->links[l];
		snprintf(cl->name, sizeof(cl->name), "%s", fl->name);
		cl->tier = fl->tier;
		cl->gbps = fl->gbps;
		cl->sw = fl->sw;
		cl->port = fl->port;
		cl->to_nic = fl->to_nic;
		cl->b = fl->to_nic ? o->first_port + fl->b : fl->b;
		cl->b_port = fl->to_nic ? 0 : fl->b_port;
	}
}

static int make_switches(struct loader *ld, const config_setting_t *g, const struct fabric *f, const struct fab_routes *r)
{
	struct cfg_fabric *o = &ld->cfg->fab;

	o->n_switches = f->n_switches;
	for (unsigned s = 0; s < f->n_switches; s++) {
		const struct fab_switch *fs = &f->switches[s];
		struct cfg_fab_switch *cs = &o->sw[s];
		snprintf(cs->name, sizeof(cs->name), "%s", fs->name);
		cs->tier = fs->tier;
		cs->lb = fs->lb;
		cs->n_ports = fs->n_ports;
		for (unsigned k = 0; k < fs->n_ports; k++)
			switch_port(f, o->first_port, fs, k, &cs->ports[k]);
		if (switch_routes(ld, g, f, r, s, cs))
			return -1;
	}
	copy_links(f, o);
	return fabric_events(ld, g, f);
}

/* The NICs' ports and roles, after the ports and roles the file lists. */
static int make_nics(struct loader *ld, const config_setting_t *g, const struct fabric *f)
{
	struct engine_config *c = ld->cfg;
	const config_setting_t *t = NULL;
	unsigned host[CFG_MAX_PORTS], n_host;
	int rc;

	if ((rc = cr_opt_group(&ld->r, g, "nic", &t)) < 0 || (rc == 1 && cr_known_keys(&ld->r, t, nic_keys)) ||
	    fabric_lcores(ld, g, f, host, &n_host))
		return -1;
	/* without `nic`, the fabric group itself stands for an empty one: it has none of nic's keys */
	if (rc == 0)
		t = g;
	c->fab.first_port = c->n_ports;
	c->fab.n_nics = f->n_nics;
	for (unsigned n = 0; n < f->n_nics; n++) {
		if (nic_port(ld, g, t, f, n, c->n_ports))
			return -1;
		add_role(c, host[n % n_host], c->n_ports, config_setting_source_line(g));
		c->n_ports++;
	}
	return ld_fabric_external(ld, g, f, c->fab.first_port) < 0 ? -1 : 0;
}

int ld_parse_fabric(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *g = config_setting_get_member(root, "fabric");
	struct fab_spec spec;
	struct fab_routes r;
	struct fabric *f;
	int rc;

	if (!g)
		return 0;
	/* kept until the load ends (config_load.c frees it): the traffic patterns name its hosts */
	if (!(f = ld->fabric = calloc(1, sizeof(*f))))
		return cr_fail(&ld->r, g, "out of memory");
	if (cfab_load(&ld->r, g, &spec, f, &r)) {
		free(f);
		ld->fabric = NULL;
		return -1;
	}
	ld->cfg->fab.present = true;
	ld->cfg->fab.kind = f->kind;
	ld->cfg->fab.line = config_setting_source_line(g);
	rc = fits_the_engine(ld, g, f) || make_nics(ld, g, f) || (!ld->cfg->fab.external && make_switches(ld, g, f, &r)) ? -1 : 0;
	fab_routes_free(&r);
	fab_spec_free(&spec);
	return rc;
}

/* ---- a flow's `dst` ------------------------------------------------------------------------------- */

/* The NIC a flow from port `src` reaches when its `dst` names `name`: a NIC by its name, or a host
 * (its only NIC, or on a rail fabric the NIC on the source's rail). Its index, or -1 after an error. */
static int dst_nic(struct loader *ld, const config_setting_t *s, unsigned src, const char *name)
{
	const struct cfg_fabric *fb = &ld->cfg->fab;
	int found = -1, on_rail = -1;
	unsigned n_host = 0, src_rail = fb->nic[src - fb->first_port].rail;
	char buf[64];

	for (unsigned n = 0; n < fb->n_nics; n++) {
		if (!strcmp(ld->cfg->ports[fb->first_port + n].name, name))
			return (int)n;
		if (strcmp(fb->nic[n].host, name))
			continue;
		n_host++;
		found = (int)n;
		if (fb->nic[n].rail == src_rail)
			on_rail = (int)n;
	}
	if (n_host == 1)
		return found;
	if (on_rail >= 0)
		return on_rail;
	if (n_host)
		return cr_fail(&ld->r, s, "host %s has %u NICs and none on the rail of port %s: name one (%s-r0 ..)",
			       name, n_host, ld->cfg->ports[src].name, name);
	return cr_fail(&ld->r, s, "'%s' is not a host or NIC of the fabric (%s .. %s)", cr_shown(name, buf),
		       ld->cfg->ports[fb->first_port].name, ld->cfg->ports[fb->first_port + fb->n_nics - 1].name);
}

int ld_flow_fabric_dst(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	const config_setting_t *s = config_setting_get_member(fs, "dst");
	const struct cfg_fabric *fb = &ld->cfg->fab;
	int n;

	if (cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a string (a host of the fabric)"))
		return -1;
	if (!fb->present)
		return cr_fail(&ld->r, s, "names a host, but the file has no fabric (give dst_mac and dst_ip)");
	if (config_setting_get_member(fs, "dst_mac") || config_setting_get_member(fs, "dst_ip"))
		return cr_fail(&ld->r, s, "with dst_mac or dst_ip: the fabric gives both (leave them out)");
	if (g->port < fb->first_port || g->port >= fb->first_port + fb->n_nics)
		return cr_fail(&ld->r, s, "names a host of the fabric, but port '%s' is not one of the fabric's NICs",
			       ld->cfg->ports[g->port].name);
	if ((n = dst_nic(ld, s, g->port, config_setting_get_string(s))) < 0)
		return -1;
	if (fb->first_port + (unsigned)n == g->port)
		return cr_fail(&ld->r, s, "the flow's own NIC (port '%s')", ld->cfg->ports[g->port].name);
	memcpy(g->dst_mac, fb->bridged ? ld->cfg->ports[fb->first_port + (unsigned)n].mac : fb->nic[g->port - fb->first_port].gateway_mac, 6);
	memcpy(g->dst_ip, ld->cfg->ports[fb->first_port + (unsigned)n].ipv4, 4);
	g->ip_version = 4;
	g->has_dst_port = true;
	g->dst_port = fb->first_port + (unsigned)n;
	return 0;
}

/* ---- the traffic list: patterns into flow groups --------------------------------------------------- */

/* The group of pair k (NICs src -> dst) of entry t, from the template. */
static int pair_group(struct loader *ld, const config_setting_t *e, const struct cfab_traffic *t,
		      const struct cfg_flow_group *tmpl, unsigned k, const struct fab_pair *pair)
{
	struct engine_config *c = ld->cfg;
	const struct cfg_fabric *fb = &c->fab;
	uint64_t first = (uint64_t)k * t->qps_per_pair, last_sport;
	struct cfg_flow_group *g;
	char name[CFG_NAME_LEN];

	if (c->n_groups == CFG_MAX_FLOW_GROUPS)
		return cr_fail(&ld->r, e, "%s: its pairs make more than %d flow groups with the listed flows (a group "
			       "per pair; fewer hosts, or pairs)", t->name, CFG_MAX_FLOW_GROUPS);
	if (t->qpn + first + t->qps_per_pair - 1 > 0xFFFFFF || t->dest_qpn + first + t->qps_per_pair - 1 > 0xFFFFFF)
		return cr_fail(&ld->r, e, "%s: pair %u's QPNs pass 0xffffff (lower qpn or dest_qpn)", t->name, k);
	snprintf(name, sizeof(name), "%.13s-%.8s-%.8s", t->name, c->ports[fb->first_port + pair->src].name,
		 c->ports[fb->first_port + pair->dst].name);
	g = &c->groups[c->n_groups];
	*g = *tmpl;
	memcpy(g->name, name, sizeof(name));
	for (unsigned j = 0; j < c->n_groups; j++)
		if (!strcmp(c->groups[j].name, g->name))
			return cr_fail(&ld->r, e, "the flow group of %s's pair %s -> %s would be called '%s', as the one at "
				       "%s (rename one)", t->name, c->ports[fb->first_port + pair->src].name,
				       c->ports[fb->first_port + pair->dst].name, g->name,
				       cr_at(&ld->r, c->groups[j].line, (char[CR_AT_LEN]){ 0 }));
	g->port = fb->first_port + pair->src;
	memcpy(g->dst_mac, fb->bridged ? c->ports[fb->first_port + pair->dst].mac : fb->nic[pair->src].gateway_mac, 6);
	memcpy(g->dst_ip, c->ports[fb->first_port + pair->dst].ipv4, 4);
	g->ip_version = 4;
	g->has_dst_port = true;
	g->dst_port = fb->first_port + pair->dst;
	g->qpn = t->qpn + (uint32_t)first;
	g->dest_qpn = t->dest_qpn + (uint32_t)first;
	g->line = t->line;
	if (!t->sport_entropy) {
		g->sport = (uint16_t)(t->sport + first * t->sport_step);
		last_sport = t->sport + (first + t->qps_per_pair - 1) * t->sport_step;
		if (last_sport > 65535)
			return cr_fail(&ld->r, e, "%s: pair %u's UDP source ports pass 65535 (lower udp_sport or sport_step)",
				       t->name, k);
	}
	ld->group_setting[c->n_groups++] = e;
	return 0;
}

/* The template every pair's group copies: the entry's `flow` settings on its first pair's port. */
static int entry_template(struct loader *ld, const config_setting_t *e, const struct cfab_traffic *t, unsigned port,
			  struct cfg_flow_group *tmpl)
{
	const config_setting_t *fs = cr_required(&ld->r, e, "flow", "the flows' settings { transport = ...; ops = ...; }");

	if (!fs)
		return -1;
	ld_flow_defaults(tmpl);
	tmpl->port = port;
	tmpl->count = t->qps_per_pair;
	tmpl->qpn = t->qpn;
	tmpl->dest_qpn = t->dest_qpn;
	tmpl->sport_entropy = t->sport_entropy;
	tmpl->sport = t->sport;
	tmpl->sport_step = t->sport_step;
	tmpl->ip_version = 4;
	if (ld_flow_template(ld, fs, tmpl))
		return -1;
	if (t->gbps > 0 && (config_setting_get_member(fs, "rate_gbps") || config_setting_get_member(fs, "rate_pps")))
		return cr_fail_member(&ld->r, e, "gbps", "and the flow's own rate: give one");
	if (t->gbps > 0)
		tmpl->rate_gbps = t->gbps;
	return 0;
}

static int traffic_entry(struct loader *ld, const config_setting_t *e, uint32_t *next_qpn)
{
	struct cfab_traffic t;
	struct fab_pair *pairs = calloc(FAB_MAX_PATTERN_PAIRS, sizeof(*pairs));
	struct cfg_flow_group tmpl;
	char err[256];
	int n = -1, rc = -1;

	if (!pairs)
		return cr_fail(&ld->r, e, "out of memory");
	if (cfab_traffic(&ld->r, e, ld->fabric, cfab_engine_traffic_keys, *next_qpn, &t))
		goto out;
	if ((n = fab_pattern_pairs(ld->fabric, &t.pattern, pairs, FAB_MAX_PATTERN_PAIRS, err, sizeof(err))) < 0) {
		cr_fail(&ld->r, e, "%s", err);
		goto out;
	}
	if (n == 0) {
		cr_fail(&ld->r, e, "%s: the pattern has no pair of hosts", t.name);
		goto out;
	}
	if (entry_template(ld, e, &t, ld->cfg->fab.first_port + pairs[0].src, &tmpl))
		goto out;
	for (int k = 0; k < n; k++)
		if (pair_group(ld, e, &t, &tmpl, (unsigned)k, &pairs[k]))
			goto out;
	*next_qpn = t.qpn + CFAB_QPN_ROOM;
	rc = 0;
out:
	free(t.pattern.hosts);
	free(pairs);
	return rc;
}

int ld_traffic_groups(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *s = config_setting_get_member(root, "traffic");
	uint32_t next_qpn = 0x100;
	int n;

	if (!s)
		return 0;
	if (!ld->cfg->fab.present)
		return cr_fail(&ld->r, s, "needs a fabric: its patterns name the fabric's hosts (add fabric = { ... })");
	if ((n = ld_list_length(ld, s, "( { pattern = ...; flow = { ... }; }, ... )", "traffic entries", 1, 64)) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (traffic_entry(ld, config_setting_get_elem(s, (unsigned)i), &next_qpn))
			return -1;
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * roce-fabric's text and JSON (fabric_report.h).
 */
#include "fabric_report.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "run_info.h"

#define TEXT_MAX_ROWS 64

/* ---- names ------------------------------------------------------------------------------------ */

/* The node a directed link leads to, and the one it leaves. */
static const char *dlink_to(const struct fabric *f, uint32_t d)
{
	const struct fab_link *l = &f->links[d / 2];

	if (d % 2)
		return f->switches[l->sw].name;
	return l->to_nic ? f->nics[l->b].name : f->switches[l->b].name;
}

static const char *dlink_from(const struct fabric *f, uint32_t d)
{
	return dlink_to(f, d ^ 1);
}

static const char *mac_str(const uint8_t *m, char buf[18])
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}

static const char *fields_str(uint8_t fields, char *buf, size_t len)
{
	static const char *const names[] = { "src_ip", "dst_ip", "udp_sport", "udp_dport", "dest_qp" };
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < 5; i++)
		if (fields & (1u << i))
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? "," : "", names[i]);
	return buf;
}

static const char *lb_str(const struct fab_lb_opts *lb, char *buf, size_t len)
{
	char fields[64];

	if (lb->lb == FAB_LB_SPRAY)
		snprintf(buf, len, "spray");
	else if (lb->lb == FAB_LB_FLOWLET)
		snprintf(buf, len, "flowlet gap %g us, %s seed %u %s", lb->flowlet_gap_ns / 1e3,
			 lb->hash.fn == FAB_HASH_CRC16 ? "crc16" : "crc32", lb->hash.seed, fields_str(lb->hash.fields, fields, 64));
	else
		snprintf(buf, len, "ecmp %s seed %u %s", lb->hash.fn == FAB_HASH_CRC16 ? "crc16" : "crc32", lb->hash.seed,
			 fields_str(lb->hash.fields, fields, 64));
	return buf;
}

/* Host-facing and upward capacity of a switch. */
static void switch_bw(const struct fabric *f, unsigned s, unsigned *n_down, double *down, unsigned *n_up, double *up)
{
	const struct fab_switch *w = &f->switches[s];

	*n_down = *n_up = 0;
	*down = *up = 0;
	for (unsigned p = 0; p < w->n_ports; p++) {
		const struct fab_port *q = &f->ports[w->first_port + p];
		if (!q->to_nic && f->switches[q->peer].tier > w->tier)
			(*n_up)++, *up += f->links[q->link].gbps;
		else
			(*n_down)++, *down += f->links[q->link].gbps;
	}
}

/* ---- text ------------------------------------------------------------------------------------- */

static void text_topology(FILE *o, const struct fabric *f)
{
	unsigned tiers[FAB_TIERS] = { 0 };
	char ip[16], lb[160];

	for (unsigned s = 0; s < f->n_switches; s++)
		tiers[f->switches[s].tier]++;
	fprintf(o, "fabric: %s, %u hosts (%u NICs), %u switches (%u leaf, %u spine, %u core), %u links\n",
		fabric_kind_name(f->kind), f->n_hosts, f->n_nics, f->n_switches, tiers[FAB_TIER_LEAF], tiers[FAB_TIER_SPINE],
		tiers[FAB_TIER_CORE], f->n_links);
	fprintf(o, "  %-12s %-5s %5s  %-18s %-14s %-14s %8s  %s\n", "switch", "tier", "ports", "subnet", "down Gb/s",
		"up Gb/s", "oversub", "balancing");
	for (unsigned s = 0; s < f->n_switches && s < TEXT_MAX_ROWS; s++) {
		const struct fab_switch *w = &f->switches[s];
		unsigned nd, nu;
		double d, u, os = fabric_oversubscription(f, s);
		char sub[24] = "-", dn[24], up[24];
		switch_bw(f, s, &nd, &d, &nu, &u);
		if (w->prefix_len)
			snprintf(sub, sizeof(sub), "%s/%u", fabric_ip_str(w->subnet, ip), w->prefix_len);
		snprintf(dn, sizeof(dn), "%u x %g", nd, nd ? d / nd : 0);
		snprintf(up, sizeof(up), "%u x %g", nu, nu ? u / nu : 0);
		fprintf(o, "  %-12s %-5s %5u  %-18s %-14s %-14s %7.2f:1  %s\n", w->name, fabric_tier_name(w->tier), w->n_ports,
			sub, dn, nu ? up : "-", os, lb_str(&w->lb, lb, sizeof(lb)));
	}
	if (f->n_switches > TEXT_MAX_ROWS)
		fprintf(o, "  ... %u more (the report has them all)\n", f->n_switches - TEXT_MAX_ROWS);
}

static void text_nics(FILE *o, const struct fabric *f, bool all)
{
	char ip[16], mac[18];

	if (f->n_nics > TEXT_MAX_ROWS && !all)
		return;
	fprintf(o, "  %-12s %-12s %4s  %-18s %-17s  %s\n", "NIC", "host", "rail", "address", "MAC", "switch port");
	for (unsigned n = 0; n < f->n_nics; n++) {
		const struct fab_nic *c = &f->nics[n];
		char addr[24];
		snprintf(addr, sizeof(addr), "%s/%u", fabric_ip_str(c->ip, ip), c->prefix_len);
		fprintf(o, "  %-12s %-12s %4u  %-18s %-17s  %s %u\n", c->name, f->hosts[c->host].name, c->rail, addr,
			mac_str(c->mac, mac), f->switches[c->sw].name, c->port);
	}
}

static void text_routes(FILE *o, const struct fabric *f, const struct fab_routes *r)
{
	char ip[16];

	fprintf(o, "routes:\n");
	for (unsigned s = 0; s < f->n_switches; s++) {
		fprintf(o, "  %s:\n", f->switches[s].name);
		for (unsigned n = 0; n < f->n_nics; n++)
			if (f->nics[n].sw == s)
				fprintf(o, "    %s/32 port %u (%s)\n", fabric_ip_str(f->nics[n].ip, ip), f->nics[n].port, f->nics[n].name);
		for (unsigned d = 0; d < f->n_switches; d++) {
			int di = r->dst_of_switch[d];
			const struct fab_group *g;
			if (di < 0 || d == s)
				continue;
			g = &r->group[(size_t)s * r->n_dst + (unsigned)di];
			fprintf(o, "    %s/%u", fabric_ip_str(f->switches[d].subnet, ip), f->switches[d].prefix_len);
			if (!g->n)
				fprintf(o, " unreachable");
			for (unsigned m = 0; m < g->n; m++) {
				const struct fab_port *q = &f->ports[f->switches[s].first_port + r->members[g->first + m]];
				fprintf(o, "%s %s", m ? "," : " via", fabric_peer_name(f, q));
			}
			fprintf(o, " (%u hops)\n", g->hops);
		}
	}
}

static void text_stats(FILE *o, const char *what, struct an_stats st)
{
	fprintf(o, "    %s Gb/s per flow: min %.2f  p50 %.2f  mean %.2f  max %.2f;  sum %.1f  JFI %.3f\n", what, st.min, st.p50,
		st.mean, st.max, st.sum, st.jfi);
}

static void text_traffic(FILE *o, const struct analysis *a)
{
	fprintf(o, "traffic:\n");
	for (unsigned t = 0; t < a->n_traffic; t++) {
		const struct an_traffic *tr = &a->traffic[t];
		fprintf(o, "  %s (%s): %u NIC pairs x %u QP%s = %u flows\n", tr->name, fab_pattern_name(tr->pattern.kind),
			tr->n_pairs, tr->qps_per_pair, tr->qps_per_pair == 1 ? "" : "s", tr->n_flows);
		text_stats(o, "balanced:", analysis_stats(a, (int)t, false));
		text_stats(o, "sprayed: ", analysis_stats(a, (int)t, true));
	}
	fprintf(o, "  all %u flows: %.1f Gb/s, %.1f %% of the %.1f Gb/s they get when every switch sprays\n", a->n_flows,
		a->aggregate_gbps, a->spread_aggregate_gbps > 0 ? 100 * a->aggregate_gbps / a->spread_aggregate_gbps : 0,
		a->spread_aggregate_gbps);
}

static void text_groups(FILE *o, const struct fabric *f, const struct analysis *a)
{
	unsigned shown = 0;

	fprintf(o, "ECMP groups (flows and Gb/s leaving by each next hop; MMR = max / mean; random: balls into bins):\n");
	for (unsigned i = 0; i < a->n_groups && shown < TEXT_MAX_ROWS; i++) {
		const struct an_group *g = &a->groups[i];
		double total = 0;
		for (unsigned m = 0; m < g->n; m++)
			total += g->flows[m];
		if (total <= 0)
			continue;
		shown++;
		fprintf(o, "  %s ->", f->switches[g->sw].name);
		for (unsigned m = 0; m < g->n; m++)
			fprintf(o, " %s %.0f/%.1f", fabric_peer_name(f, &f->ports[f->switches[g->sw].first_port + g->ports[m]]),
				g->flows[m], g->gbps[m]);
		fprintf(o, "  MMR flows %.2f (random %.2f) Gb/s %.2f  JFI %.3f\n", g->mmr_flows, g->mmr_random, g->mmr_gbps, g->jfi_gbps);
	}
}

static int cmp_load(const void *x, const void *y, void *arg)
{
	const double *g = arg;
	double a = g[*(const uint32_t *)x], b = g[*(const uint32_t *)y];

	return a < b ? 1 : a > b ? -1 : 0;
}

static void text_links(FILE *o, const struct fabric *f, const struct analysis *a)
{
	unsigned n = 2 * f->n_links, shown = 0;
	uint32_t *order = malloc(sizeof(*order) * (n ? n : 1));

	if (!order)
		return;
	for (unsigned d = 0; d < n; d++)
		order[d] = d;
	qsort_r(order, n, sizeof(*order), cmp_load, a->dl_gbps);
	fprintf(o, "busiest links:\n");
	for (unsigned i = 0; i < n && shown < 10 && a->dl_gbps[order[i]] > 0; i++, shown++) {
		uint32_t d = order[i];
		double cap = f->links[d / 2].gbps;
		fprintf(o, "  %-24s %s -> %s: %.1f flows, %.1f of %g Gb/s (%.0f %%)\n", f->links[d / 2].name, dlink_from(f, d),
			dlink_to(f, d), a->dl_flows[d], a->dl_gbps[d], cap, 100 * a->dl_gbps[d] / cap);
	}
	free(order);
}

static void text_flows(FILE *o, const struct fabric *f, const struct analysis *a)
{
	fprintf(o, "flows:\n");
	for (unsigned i = 0; i < a->n_flows; i++) {
		const struct an_flow *fl = &a->flows[i];
		fprintf(o, "  %s %s -> %s qp 0x%x sport %u: %.2f Gb/s (sprayed %.2f):", a->traffic[fl->traffic].name,
			f->nics[fl->src].name, f->nics[fl->dst].name, fl->key.dest_qp, fl->key.sport, fl->gbps, fl->spread_gbps);
		for (uint32_t h = fl->first_hop; h < fl->first_hop + fl->n_hops; h++)
			if (a->hops[h].share > 0.999999)
				fprintf(o, " %s", dlink_to(f, a->hops[h].dlink));
			else
				fprintf(o, " %s(%.2f)", dlink_to(f, a->hops[h].dlink), a->hops[h].share);
		fprintf(o, "\n");
	}
}

void fabric_report_text(FILE *o, const struct fr_opts *opts, const struct fabric *f, const struct fab_routes *r,
			const struct analysis *a)
{
	text_topology(o, f);
	text_nics(o, f, opts->nics);
	if (opts->routes)
		text_routes(o, f, r);
	if (!a->n_traffic)
		return;
	text_traffic(o, a);
	text_groups(o, f, a);
	text_links(o, f, a);
	if (opts->flows)
		text_flows(o, f, a);
}

/* ---- JSON ------------------------------------------------------------------------------------- */

static json_t *ip_json(uint32_t ip)
{
	char buf[16];

	return json_string(fabric_ip_str(ip, buf));
}

static json_t *switches_json(const struct fabric *f)
{
	json_t *arr = json_array();
	char ip[16], sub[24], fields[64];

	for (unsigned s = 0; s < f->n_switches; s++) {
		const struct fab_switch *w = &f->switches[s];
		unsigned nd, nu;
		double d, u;
		switch_bw(f, s, &nd, &d, &nu, &u);
		snprintf(sub, sizeof(sub), "%s/%u", fabric_ip_str(w->subnet, ip), w->prefix_len);
		json_array_append_new(
			arr, json_pack("{s:s,s:s,s:i,s:i,s:o,s:f,s:f,s:f,s:{s:s,s:s,s:I,s:s,s:f}}", "name", w->name, "tier",
				       fabric_tier_name(w->tier), "pod", (int)w->pod, "ports", (int)w->n_ports, "subnet",
				       w->prefix_len ? json_string(sub) : json_null(), "down_gbps", d, "up_gbps", u,
				       "oversubscription", fabric_oversubscription(f, s), "load_balance", "mode",
				       fabric_lb_name(w->lb.lb), "hash", w->lb.hash.fn == FAB_HASH_CRC16 ? "crc16" : "crc32", "seed",
				       (json_int_t)w->lb.hash.seed, "fields", fields_str(w->lb.hash.fields, fields, sizeof(fields)),
				       "flowlet_gap_us", w->lb.flowlet_gap_ns / 1e3));
	}
	return arr;
}

static json_t *nics_json(const struct fabric *f)
{
	json_t *arr = json_array();
	char mac[18];

	for (unsigned n = 0; n < f->n_nics; n++) {
		const struct fab_nic *c = &f->nics[n];
		json_array_append_new(arr, json_pack("{s:s,s:s,s:i,s:o,s:i,s:o,s:s,s:s,s:i,s:s}", "name", c->name, "host",
						     f->hosts[c->host].name, "rail", (int)c->rail, "ip", ip_json(c->ip),
						     "prefix_len", (int)c->prefix_len, "gateway", ip_json(c->gateway), "mac",
						     mac_str(c->mac, mac), "switch", f->switches[c->sw].name, "port", (int)c->port,
						     "link", f->links[c->link].name));
	}
	return arr;
}

static json_t *links_json(const struct fabric *f, const struct analysis *a)
{
	json_t *arr = json_array();

	for (unsigned l = 0; l < f->n_links; l++) {
		const struct fab_link *k = &f->links[l];
		json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:f,s:f}", "name", k->name, "a", f->switches[k->sw].name, "b",
				      k->to_nic ? f->nics[k->b].name : f->switches[k->b].name, "tier", fabric_tier_name(k->tier),
				      "gbps", k->gbps, "delay_us", k->delay_us);
		if (a->n_traffic)
			for (unsigned dir = 0; dir < 2; dir++)
				json_object_set_new(o, dir ? "b_to_a" : "a_to_b",
						    json_pack("{s:f,s:f,s:f}", "flows", a->dl_flows[2 * l + dir], "gbps",
							      a->dl_gbps[2 * l + dir], "utilization",
							      a->dl_gbps[2 * l + dir] / k->gbps));
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *routes_json(const struct fabric *f, const struct fab_routes *r)
{
	json_t *all = json_object();
	char ip[16], pre[24];

	for (unsigned s = 0; s < f->n_switches; s++) {
		json_t *arr = json_array();
		for (unsigned d = 0; d < f->n_switches; d++) {
			int di = r->dst_of_switch[d];
			const struct fab_group *g;
			json_t *via;
			if (di < 0 || d == s)
				continue;
			g = &r->group[(size_t)s * r->n_dst + (unsigned)di];
			via = json_array();
			for (unsigned m = 0; m < g->n; m++)
				json_array_append_new(via, json_string(fabric_peer_name(
							   f, &f->ports[f->switches[s].first_port + r->members[g->first + m]])));
			snprintf(pre, sizeof(pre), "%s/%u", fabric_ip_str(f->switches[d].subnet, ip), f->switches[d].prefix_len);
			json_array_append_new(arr, json_pack("{s:s,s:s,s:o,s:i}", "prefix", pre, "switch", f->switches[d].name,
							     "via", via, "hops", (int)g->hops));
		}
		json_object_set_new(all, f->switches[s].name, arr);
	}
	return all;
}

static json_t *stats_json(struct an_stats st)
{
	return json_pack("{s:f,s:f,s:f,s:f,s:f,s:f}", "min", st.min, "p50", st.p50, "mean", st.mean, "max", st.max, "sum",
			 st.sum, "jfi", st.jfi);
}

static json_t *traffic_json(const struct analysis *a)
{
	json_t *arr = json_array();

	for (unsigned t = 0; t < a->n_traffic; t++) {
		const struct an_traffic *tr = &a->traffic[t];
		json_array_append_new(arr, json_pack("{s:s,s:s,s:i,s:i,s:i,s:I,s:I,s:o,s:o}", "name", tr->name, "pattern",
						     fab_pattern_name(tr->pattern.kind), "pairs", (int)tr->n_pairs,
						     "qps_per_pair", (int)tr->qps_per_pair, "flows", (int)tr->n_flows, "qpn",
						     (json_int_t)tr->qpn, "dest_qpn", (json_int_t)tr->dest_qpn, "gbps",
						     stats_json(analysis_stats(a, (int)t, false)), "sprayed_gbps",
						     stats_json(analysis_stats(a, (int)t, true))));
	}
	return arr;
}

static json_t *flows_json(const struct fabric *f, const struct analysis *a)
{
	json_t *arr = json_array();

	for (unsigned i = 0; i < a->n_flows; i++) {
		const struct an_flow *fl = &a->flows[i];
		json_t *path = json_array();
		for (uint32_t h = fl->first_hop; h < fl->first_hop + fl->n_hops; h++)
			json_array_append_new(path, json_pack("{s:s,s:s,s:s,s:f}", "link", f->links[a->hops[h].dlink / 2].name,
							      "from", dlink_from(f, a->hops[h].dlink), "to",
							      dlink_to(f, a->hops[h].dlink), "share", a->hops[h].share));
		json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:o,s:o,s:I,s:i,s:i,s:f,s:f,s:o}", "traffic",
						     a->traffic[fl->traffic].name, "src", f->nics[fl->src].name, "dst",
						     f->nics[fl->dst].name, "src_ip", ip_json(fl->key.src_ip), "dst_ip",
						     ip_json(fl->key.dst_ip), "dest_qpn", (json_int_t)fl->key.dest_qp, "udp_sport",
						     (int)fl->key.sport, "udp_dport", (int)fl->key.dport, "gbps", fl->gbps,
						     "sprayed_gbps", fl->spread_gbps, "path", path));
	}
	return arr;
}

static json_t *doubles(const double *x, unsigned n)
{
	json_t *arr = json_array();

	for (unsigned i = 0; i < n; i++)
		json_array_append_new(arr, json_real(x[i]));
	return arr;
}

static json_t *groups_json(const struct fabric *f, const struct analysis *a)
{
	json_t *arr = json_array();

	for (unsigned i = 0; i < a->n_groups; i++) {
		const struct an_group *g = &a->groups[i];
		json_t *members = json_array();
		for (unsigned m = 0; m < g->n; m++)
			json_array_append_new(members,
					      json_string(fabric_peer_name(f, &f->ports[f->switches[g->sw].first_port + g->ports[m]])));
		json_array_append_new(arr, json_pack("{s:s,s:o,s:o,s:o,s:f,s:f,s:f,s:f}", "switch", f->switches[g->sw].name,
						     "members", members, "flows", doubles(g->flows, g->n), "gbps",
						     doubles(g->gbps, g->n), "mmr_flows", g->mmr_flows, "mmr_gbps", g->mmr_gbps,
						     "jfi_gbps", g->jfi_gbps, "mmr_random_expected", g->mmr_random));
	}
	return arr;
}

int fabric_report_json(const struct fr_opts *opts, const struct fabric *f, const struct fab_routes *r,
		       const struct analysis *a)
{
	json_t *root = json_object();
	int rc;

	json_object_set_new(root, "run_info", run_info_json());
	json_object_set_new(root, "fabric",
			    json_pack("{s:s,s:i,s:i,s:i,s:i,s:o,s:o,s:o}", "kind", fabric_kind_name(f->kind), "hosts",
				      (int)f->n_hosts, "nics", (int)f->n_nics, "rails", (int)f->rails, "switch_count",
				      (int)f->n_switches, "switches", switches_json(f), "nic_list", nics_json(f), "links",
				      links_json(f, a)));
	if (opts->routes) /* a k = 32 fat-tree has 655,360 routes: asked for, not by default */
		json_object_set_new(root, "routes", routes_json(f, r));
	if (a->n_traffic) {
		json_object_set_new(root, "traffic", traffic_json(a));
		json_object_set_new(root, "flows", flows_json(f, a));
		json_object_set_new(root, "ecmp_groups", groups_json(f, a));
		json_object_set_new(root, "summary",
				    json_pack("{s:i,s:f,s:f,s:f,s:o,s:o}", "flows", (int)a->n_flows, "aggregate_gbps",
					      a->aggregate_gbps, "sprayed_aggregate_gbps", a->spread_aggregate_gbps, "efficiency",
					      a->spread_aggregate_gbps > 0 ? a->aggregate_gbps / a->spread_aggregate_gbps : 0.0,
					      "gbps", stats_json(analysis_stats(a, -1, false)), "sprayed_gbps",
					      stats_json(analysis_stats(a, -1, true))));
	}
	rc = json_dump_file(root, opts->report, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
	json_decref(root);
	if (rc)
		fprintf(stderr, "roce-fabric: %s: cannot write: %s\n", opts->report, strerror(errno));
	return rc ? -1 : 0;
}

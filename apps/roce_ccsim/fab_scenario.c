/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The fabric scenario's loader and its flows (fab_scenario.h). Errors are one line
 * "FILE:LINE: SETTING: what is wrong (what is allowed)", config/config_read.h's, as everywhere.
 */
#include "fab_scenario.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "red.h"
#include "scenario_parse.h"
#include "sim.h"
#include "wire.h"

const char *const fab_scenario_keys[] = { "scenario", "seed",      "duration_us", "sample_us", "window_us", "fabric",
					  "switch",   "np",        "transport",   "traffic",   NULL };

static const char *const tier_keys[] = { "leaf", "spine", "core", NULL };
static const unsigned tier_of_key[] = { FAB_TIER_LEAF, FAB_TIER_SPINE, FAB_TIER_CORE };

/* ---- fabric, switch, np, transport ------------------------------------------------------------- */

/* The fabric group's settings that only the engine's lab runs (config_lab_fabric.c): a scenario
 * that gives one would silently lose it here. */
static int engine_only(struct loader *ld, const config_setting_t *g)
{
	static const char *const keys[] = { "lcore", "lcores", "host_lcores", "nic", "deadlock_ms", "sample_ms", NULL };

	for (unsigned i = 0; keys[i]; i++)
		if (config_setting_get_member(g, keys[i]))
			return cr_fail_member(&ld->r, g, keys[i], "is the engine's lab setting; roce-ccsim does not simulate it "
				"(docs/ccsim.md#limits)");
	return 0;
}

static int parse_fabric(struct loader *ld, const config_setting_t *root)
{
	struct fab_scenario *fs = ld->sc->fab;
	const config_setting_t *g = cr_required(&ld->r, root, "fabric", "the fabric's group (docs/fabric.md)");
	double conv_ms = 0;
	int n;

	if (!g || cfab_load(&ld->r, g, &fs->spec, &fs->f, &fs->routes) || engine_only(ld, g))
		return -1;
	if ((n = cfab_events(&ld->r, g, &fs->f, fs->events, FS_MAX_EVENTS, &conv_ms)) < 0)
		return -1;
	fs->n_events = (unsigned)n;
	fs->convergence_ns = sc_us_to_ns(conv_ms * 1000);
	for (unsigned i = 0; i < fs->n_events; i++)
		if (sc_us_to_ns(fs->events[i].at_s * 1e6) >= ld->sc->duration_ns)
			return cr_fail(&ld->r, config_setting_get_elem(config_setting_get_member(g, "events"), i),
				       "at_s = %g is not before duration_us (%g)", fs->events[i].at_s,
				       (double)ld->sc->duration_ns / 1000);
	for (unsigned s = 0; s < fs->f.n_switches; s++)
		if (fs->f.switches[s].n_ports > FS_MAX_SWITCH_PORTS)
			return cr_fail(&ld->r, g, "switch %s has %u ports; roce-ccsim's switches have at most %u",
				       fs->f.switches[s].name, fs->f.switches[s].n_ports, FS_MAX_SWITCH_PORTS);
	return 0;
}

static bool fabric_has_tier(const struct fabric *f, unsigned tier)
{
	for (unsigned s = 0; s < f->n_switches; s++)
		if (f->switches[s].tier == tier)
			return true;
	return false;
}

/* switch = { the settings of every switch; leaf / spine / core = { that tier's, over them } } */
static int parse_switches(struct loader *ld, const config_setting_t *root)
{
	struct fab_scenario *fs = ld->sc->fab;
	struct sc_switch base = { .buffer_bytes = 12000000 };
	const config_setting_t *g, *t;
	int rc;

	if ((rc = cr_opt_group(&ld->r, root, "switch", &g)) < 0 ||
	    (rc == 1 && sc_parse_switch_group(ld, g, &base, true, tier_keys)))
		return -1;
	for (unsigned k = 0; k < FAB_TIERS; k++)
		fs->tier[k] = base;
	for (unsigned k = 0; rc == 1 && tier_keys[k]; k++) {
		int trc = cr_opt_group(&ld->r, g, tier_keys[k], &t);

		if (trc < 0)
			return -1;
		if (trc == 0)
			continue;
		if (!fabric_has_tier(&fs->f, tier_of_key[k]))
			return cr_fail(&ld->r, t, "this fabric has no %s switches", tier_keys[k]);
		if (sc_parse_switch_group(ld, t, &fs->tier[tier_of_key[k]], true, NULL))
			return -1;
	}
	return 0;
}

static int parse_np_transport(struct loader *ld, const config_setting_t *root)
{
	static const char *const np_keys[] = { "min_time_between_cnps", NULL };
	static const char *const tr_keys[] = { "ack_every", "ack_us", "rto_us", "reorder_window", NULL };
	struct fab_scenario *fs = ld->sc->fab;
	const config_setting_t *g;
	int rc;

	np_params_default(&fs->np);
	fs->ack_every = 16;
	fs->ack_ns = 8000;
	fs->rto_ns = 4000000;
	if ((rc = cr_opt_group(&ld->r, root, "np", &g)) < 0 ||
	    (rc == 1 && (cr_known_keys(&ld->r, g, np_keys) ||
			 cr_opt_u32(&ld->r, g, "min_time_between_cnps", 0, 1000000, &fs->np.min_time_between_cnps) < 0)))
		return -1;
	if ((rc = cr_opt_group(&ld->r, root, "transport", &g)) < 0 ||
	    (rc == 1 && (cr_known_keys(&ld->r, g, tr_keys) ||
			 cr_opt_u32(&ld->r, g, "ack_every", 1, 65536, &fs->ack_every) < 0 ||
			 sc_opt_us(ld, g, "ack_us", 0, false, MAX_DURATION_US, &fs->ack_ns) < 0 ||
			 sc_opt_us(ld, g, "rto_us", 1, false, MAX_DURATION_US, &fs->rto_ns) < 0 ||
			 cr_opt_u32(&ld->r, g, "reorder_window", 0, FS_REORDER_MAX, &fs->reorder_window) < 0)))
		return -1;
	return 0;
}

/* ---- traffic ------------------------------------------------------------------------------------ */

/* size_cdf = ( [bytes, percent], ... ): ascending in both, from 0 % or more to 100 %. */
static int parse_cdf(struct loader *ld, const config_setting_t *l, struct fs_traffic *t)
{
	int n = config_setting_length(l);

	if (config_setting_type(l) != CONFIG_TYPE_LIST || n < 2 || n > FS_MAX_CDF)
		return cr_fail(&ld->r, l, "must be a list of 2..%d points ( [bytes, percent], ... )", FS_MAX_CDF);
	t->cdf = calloc((size_t)n, sizeof(*t->cdf));
	if (!t->cdf)
		return cr_fail(&ld->r, l, "out of memory");
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(l, (unsigned)i);
		double bytes = 0, pct = 0;

		if (config_setting_type(e) != CONFIG_TYPE_ARRAY || config_setting_length(e) != 2)
			return cr_fail(&ld->r, e, "must be [bytes, percent]");
		if (cr_float_range(&ld->r, config_setting_get_elem(e, 0), 0, false, 1e15, &bytes) ||
		    cr_float_range(&ld->r, config_setting_get_elem(e, 1), 0, false, 100, &pct))
			return -1;
		t->cdf[i] = (struct fs_cdf_point){ (uint64_t)(bytes + 0.5), pct };
		if (i && (t->cdf[i].bytes < t->cdf[i - 1].bytes || pct < t->cdf[i - 1].percent))
			return cr_fail(&ld->r, e, "comes before the point ahead of it (allowed: ascending bytes and percent)");
	}
	t->n_cdf = (unsigned)n;
	if (t->cdf[n - 1].percent != 100)
		return cr_fail(&ld->r, l, "ends at %g %% (allowed: the last point at 100)", t->cdf[n - 1].percent);
	if (fs_cdf_mean(t->cdf, t->n_cdf) < 1)
		return cr_fail(&ld->r, l, "gives flows of less than a byte on average");
	return 0;
}

static double max_host_gbps(const struct fabric *f)
{
	double g = 0;

	for (unsigned n = 0; n < f->n_nics; n++)
		if (f->links[f->nics[n].link].gbps > g)
			g = f->links[f->nics[n].link].gbps;
	return g;
}

/* udp_sports: each flow's UDP source port in the entry's order, so that a hash on the port puts
 * every flow on the path a trace or another simulator chose (bench/run-ccsim-htsim.sh pins
 * htsim's ECMP paths so). Its count is checked against the flows once the pattern expands. */
static int parse_sports(struct loader *ld, const config_setting_t *e, struct fs_traffic *t)
{
	const config_setting_t *l = config_setting_get_member(e, "udp_sports");
	int n = l ? config_setting_length(l) : 0;
	long long port;

	if (!l)
		return 0;
	if (config_setting_get_member(e, "udp_sport"))
		return cr_fail_member(&ld->r, e, "udp_sports", "and udp_sport both give the ports (give one)");
	if (config_setting_type(l) != CONFIG_TYPE_ARRAY || n < 1 || (unsigned)n > FS_MAX_FLOWS)
		return cr_fail(&ld->r, l, "must be an array of 1..%u UDP source ports [49152, ...], one per flow", FS_MAX_FLOWS);
	if (!(t->sports = malloc(sizeof(*t->sports) * (size_t)n)))
		return cr_fail(&ld->r, l, "out of memory");
	for (int i = 0; i < n; i++) {
		if (cr_int_range(&ld->r, config_setting_get_elem(l, (unsigned)i), 1, 65535, false, &port))
			return -1;
		t->sports[i] = (uint16_t)port;
	}
	t->n_sports = (unsigned)n;
	t->sports_line = (unsigned)config_setting_source_line(l);
	return 0;
}

static int parse_traffic_entry(struct loader *ld, const config_setting_t *e, uint32_t next_qpn, struct fs_traffic *t)
{
	struct fab_scenario *fs = ld->sc->fab;
	const config_setting_t *cdf;
	double load = 0;

	if (cfab_traffic(&ld->r, e, &fs->f, cfab_ccsim_traffic_keys, next_qpn, &t->c) || parse_sports(ld, e, t))
		return -1;
	t->proto.line_kbps = sc_gbps_to_kbps(t->c.gbps > 0 ? t->c.gbps : max_host_gbps(&fs->f));
	if (sc_opt_gbps(ld, e, "rate_gbps", &t->proto.line_kbps) < 0)
		return -1;
	if (t->c.gbps > 0 && config_setting_get_member(e, "rate_gbps"))
		return cr_fail_member(&ld->r, e, "rate_gbps", "and gbps say the same (give one)");
	t->stop_ns = ld->sc->duration_ns;
	if (sc_parse_flow_cc(ld, e, &t->proto) ||
	    sc_opt_us(ld, e, "start_us", 0, false, MAX_DURATION_US, &t->start_ns) < 0 ||
	    sc_opt_us(ld, e, "stop_us", 0, false, MAX_DURATION_US, &t->stop_ns) < 0 ||
	    cr_opt_u64(&ld->r, e, "size_bytes", 1, LLONG_MAX, &t->size_bytes) < 0 ||
	    cr_opt_float(&ld->r, e, "load", 0, true, 1, &load) < 0)
		return -1;
	if (t->size_bytes / t->proto.mtu_bytes >= FS_MAX_PACKETS)
		return cr_fail_member(&ld->r, e, "size_bytes", "is %llu packets of mtu_bytes %u (allowed: fewer than 2^32 - 1)",
				      (unsigned long long)(t->size_bytes / t->proto.mtu_bytes), t->proto.mtu_bytes);
	if (t->start_ns >= ld->sc->duration_ns)
		return cr_fail_member(&ld->r, e, "start_us", "is not before duration_us (%g)",
				      (double)ld->sc->duration_ns / 1000);
	if (t->stop_ns <= t->start_ns || t->stop_ns > ld->sc->duration_ns)
		return cr_fail_member(&ld->r, e, "stop_us", "must be after start_us and at most duration_us (%g)",
				      (double)ld->sc->duration_ns / 1000);
	if ((cdf = config_setting_get_member(e, "size_cdf"))) {
		if (t->size_bytes)
			return cr_fail_member(&ld->r, e, "size_cdf", "and size_bytes both give the flows' size (give one)");
		if (parse_cdf(ld, cdf, t))
			return -1;
		if (t->cdf[t->n_cdf - 1].bytes / t->proto.mtu_bytes >= FS_MAX_PACKETS)
			return cr_fail_member(&ld->r, e, "size_cdf", "goes up to %llu packets of mtu_bytes %u (allowed: fewer than 2^32 - 1)",
					      (unsigned long long)(t->cdf[t->n_cdf - 1].bytes / t->proto.mtu_bytes),
					      t->proto.mtu_bytes);
	}
	t->load = load;
	if (load > 0 && !t->size_bytes && !t->n_cdf)
		return cr_fail_member(&ld->r, e, "load", "needs the flows' size (size_bytes or size_cdf)");
	if (load > 0 && t->sports)
		return cr_fail_member(&ld->r, e, "udp_sports", "lists the flows' ports, but with a load the flows arrive at random");
	if (fs->max_mtu < t->proto.mtu_bytes)
		fs->max_mtu = t->proto.mtu_bytes;
	return 0;
}

static int parse_traffic(struct loader *ld, const config_setting_t *root)
{
	struct fab_scenario *fs = ld->sc->fab;
	const config_setting_t *l = cr_required(&ld->r, root, "traffic", "a list of traffic patterns ( { pattern = ...; } )");
	uint32_t next_qpn = 0x100;
	int n;

	if (!l || (n = sc_group_list(ld, l, FS_MAX_TRAFFIC)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		struct fs_traffic *t = &fs->traffic[i];

		fs->n_traffic = (unsigned)i + 1; /* its pattern's hosts are freed with the others */
		if (parse_traffic_entry(ld, config_setting_get_elem(l, (unsigned)i), next_qpn, t))
			return -1;
		next_qpn = t->c.qpn + CFAB_QPN_ROOM;
	}
	return 0;
}

int fab_scenario_parse(struct loader *ld, const config_setting_t *root)
{
	ld->sc->fab = calloc(1, sizeof(*ld->sc->fab));
	if (!ld->sc->fab)
		return cr_fail(&ld->r, root, "out of memory");
	return parse_fabric(ld, root) || parse_switches(ld, root) || parse_np_transport(ld, root) ||
			       parse_traffic(ld, root)
		       ? -1
		       : 0;
}

void fab_scenario_free(struct fab_scenario *fs)
{
	if (!fs)
		return;
	for (unsigned i = 0; i < fs->n_traffic; i++) {
		free(fs->traffic[i].c.pattern.hosts);
		free(fs->traffic[i].cdf);
		free(fs->traffic[i].sports);
	}
	free(fs->flows);
	fab_routes_free(&fs->routes);
	fabric_free(&fs->f);
	fab_spec_free(&fs->spec);
	memset(fs, 0, sizeof(*fs));
}

/* ---- sizes -------------------------------------------------------------------------------------- */

uint64_t fs_cdf_draw(const struct fs_cdf_point *cdf, unsigned n, double u)
{
	double y = u * 100;
	unsigned i = 1;

	if (y <= cdf[0].percent)
		return cdf[0].bytes;
	while (i < n - 1 && cdf[i].percent <= y)
		i++;
	if (cdf[i].percent <= cdf[i - 1].percent)
		return cdf[i].bytes;
	return cdf[i - 1].bytes + (uint64_t)((double)(cdf[i].bytes - cdf[i - 1].bytes) * (y - cdf[i - 1].percent) /
					     (cdf[i].percent - cdf[i - 1].percent));
}

double fs_cdf_mean(const struct fs_cdf_point *cdf, unsigned n)
{
	double m = (double)cdf[0].bytes * cdf[0].percent / 100;

	for (unsigned i = 1; i < n; i++)
		m += (double)(cdf[i - 1].bytes + cdf[i].bytes) / 2 * (cdf[i].percent - cdf[i - 1].percent) / 100;
	return m;
}

/* ---- the flows ---------------------------------------------------------------------------------- */

struct gen {
	struct scenario *sc;
	uint64_t rng;
	char *err;
	size_t errlen;
};

static double uniform(uint64_t *rng) { return (double)(red_rand(rng) >> 11) * 0x1p-53; }

static uint64_t draw_size(struct gen *g, const struct fs_traffic *t)
{
	uint64_t b;

	if (t->size_bytes || !t->n_cdf)
		return t->size_bytes;
	b = fs_cdf_draw(t->cdf, t->n_cdf, uniform(&g->rng));
	return b ? b : 1; /* a drawn flow has a byte at least (0 would be a long flow) */
}

static int too_many(struct gen *g, const struct fs_traffic *t, unsigned i)
{
	snprintf(g->err, g->errlen, "%s:%u: traffic.[%u]: makes more than %u flows in all (fewer pairs, QPs or a lower load)",
		 g->sc->file, t->c.line, i, FS_MAX_FLOWS);
	return -1;
}

/* Flow k's UDP source port: udp_sports[k], or from the QPN pair (as the engine's flows and IB
 * verbs derive it), or the entry's port + k x its step. */
static uint16_t flow_sport(const struct fs_traffic *t, unsigned k, uint32_t qpn, uint32_t dest_qpn)
{
	if (t->sports)
		return t->sports[k];
	if (t->c.sport_entropy)
		return wire_udp_sport_from_flow_label(wire_flow_label_from_qpns(qpn, dest_qpn));
	return (uint16_t)(t->c.sport + k * t->c.sport_step);
}

/* Flow k of entry t, from NIC pair p: the QPNs count up from the entry's, the UDP source port as
 * flow_sport says. */
static int add_flow(struct gen *g, unsigned ti, const struct fab_pair *p, uint64_t start_ns)
{
	struct fab_scenario *fs = g->sc->fab;
	const struct fs_traffic *t = &fs->traffic[ti];
	unsigned k = fs->n_flows - t->first_flow;
	struct fs_flow *fl;

	if (fs->n_flows >= FS_MAX_FLOWS)
		return too_many(g, t, ti);
	fl = &fs->flows[fs->n_flows++];
	fl->traffic = ti;
	fl->src = p->src;
	fl->dst = p->dst;
	fl->qpn = (t->c.qpn + k) & WIRE_QPN_MASK;
	fl->dest_qpn = (t->c.dest_qpn + k) & WIRE_QPN_MASK;
	fl->key = (struct fab_flow_key){
		.src_ip = fs->f.nics[p->src].ip,
		.dst_ip = fs->f.nics[p->dst].ip,
		.sport = flow_sport(t, k, fl->qpn, fl->dest_qpn),
		.dport = WIRE_ROCEV2_UDP_PORT,
		.dest_qp = fl->dest_qpn,
	};
	fl->start_ns = start_ns;
	fl->size_bytes = draw_size(g, t);
	return 0;
}

/* Poisson arrivals per sender: exponential gaps of mean size x 8 / (load x its link's rate), each
 * flow to one of the sender's pattern destinations drawn uniformly. */
static int gen_poisson(struct gen *g, unsigned ti, const struct fab_pair *pairs, unsigned n)
{
	struct fab_scenario *fs = g->sc->fab;
	const struct fs_traffic *t = &fs->traffic[ti];
	double mean = t->size_bytes ? (double)t->size_bytes : fs_cdf_mean(t->cdf, t->n_cdf);

	for (unsigned a = 0; a < n;) {
		unsigned b = a;
		double gbps, gap_ns, at;

		while (b < n && pairs[b].src == pairs[a].src)
			b++;
		gbps = fs->f.links[fs->f.nics[pairs[a].src].link].gbps;
		gap_ns = mean * 8 / (t->load * gbps);
		at = (double)t->start_ns;
		for (;;) {
			at += -log(1 - uniform(&g->rng)) * gap_ns;
			if (at >= (double)t->stop_ns)
				break;
			if (add_flow(g, ti, &pairs[a + (unsigned)(uniform(&g->rng) * (b - a))], (uint64_t)at))
				return -1;
		}
		a = b;
	}
	return 0;
}

static int cmp_pair_src(const void *x, const void *y)
{
	const struct fab_pair *a = x, *b = y;

	return a->src != b->src ? (a->src < b->src ? -1 : 1) : (a->dst < b->dst ? -1 : a->dst > b->dst);
}

static int gen_entry(struct gen *g, unsigned ti, struct fab_pair *pairs)
{
	struct fab_scenario *fs = g->sc->fab;
	struct fs_traffic *t = &fs->traffic[ti];
	char why[256];
	int n = fab_pattern_pairs(&fs->f, &t->c.pattern, pairs, FS_MAX_FLOWS, why, sizeof(why));

	if (n < 0) {
		snprintf(g->err, g->errlen, "%s:%u: traffic.[%u]: %s", g->sc->file, t->c.line, ti, why);
		return -1;
	}
	if (t->sports && t->n_sports != (unsigned)n * t->c.qps_per_pair) {
		snprintf(g->err, g->errlen, "%s:%u: traffic.[%u].udp_sports: %u ports for %u flows (%d pairs x qps_per_pair %u)",
			 g->sc->file, t->sports_line, ti, t->n_sports, (unsigned)n * t->c.qps_per_pair, n, t->c.qps_per_pair);
		return -1;
	}
	t->first_flow = fs->n_flows;
	if (t->load > 0) {
		qsort(pairs, (size_t)n, sizeof(*pairs), cmp_pair_src);
		if (gen_poisson(g, ti, pairs, (unsigned)n))
			return -1;
	} else {
		for (int p = 0; p < n; p++)
			for (unsigned q = 0; q < t->c.qps_per_pair; q++)
				if (add_flow(g, ti, &pairs[p], t->start_ns))
					return -1;
	}
	t->n_flows = fs->n_flows - t->first_flow;
	return 0;
}

int fab_flows_generate(struct scenario *sc, uint64_t seed, char *err, size_t errlen)
{
	struct fab_scenario *fs = sc->fab;
	struct gen g = { .sc = sc, .rng = sim_rng_seed(seed ^ 0xF10F5ULL), .err = err, .errlen = errlen };
	struct fab_pair *pairs = malloc(sizeof(*pairs) * FS_MAX_FLOWS);
	int rc = 0;

	free(fs->flows);
	fs->n_flows = 0;
	fs->flows = malloc(sizeof(*fs->flows) * FS_MAX_FLOWS);
	if (!pairs || !fs->flows) {
		free(pairs);
		snprintf(err, errlen, "roce-ccsim: out of memory (flows)");
		return -1;
	}
	fs->flows_seed = seed;
	for (unsigned t = 0; !rc && t < fs->n_traffic; t++)
		rc = gen_entry(&g, t, pairs);
	free(pairs);
	if (!rc && !fs->n_flows) {
		snprintf(err, errlen, "%s: traffic: no flows (the loads are too low for the time given)", sc->file);
		rc = -1;
	}
	return rc;
}

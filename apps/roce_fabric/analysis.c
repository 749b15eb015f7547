/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The flows of a traffic list, their paths, their max-min fair rates, the links' loads and the
 * ECMP groups' balance (analysis.h).
 */
#include "analysis.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

#define fail fab_error

void analysis_free(struct analysis *a)
{
	for (unsigned t = 0; t < a->n_traffic; t++)
		free(a->traffic[t].pattern.hosts);
	free(a->flows);
	free(a->hops);
	free(a->first);
	free(a->dl_flows);
	free(a->dl_gbps);
	free(a->groups);
	a->flows = NULL, a->hops = NULL, a->first = NULL, a->dl_flows = a->dl_gbps = NULL, a->groups = NULL;
	a->n_traffic = a->n_flows = a->n_groups = 0;
}

/* ---- the flows -------------------------------------------------------------------------------- */

/* Flow i of a traffic entry: the QPNs count up from the entry's, the UDP source port as the
 * engine's flows have it (from the QPN pair, or the entry's port + i x its step). */
static struct fab_flow_key flow_key(const struct fabric *f, const struct an_traffic *t, const struct fab_pair *p,
				    unsigned i)
{
	uint32_t qpn = (t->qpn + i) & WIRE_QPN_MASK, dqpn = (t->dest_qpn + i) & WIRE_QPN_MASK;

	return (struct fab_flow_key){
		.src_ip = f->nics[p->src].ip,
		.dst_ip = f->nics[p->dst].ip,
		.sport = t->sport_entropy ? wire_udp_sport_from_flow_label(wire_flow_label_from_qpns(qpn, dqpn))
					  : (uint16_t)(t->sport + i * t->sport_step),
		.dport = WIRE_ROCEV2_UDP_PORT,
		.dest_qp = dqpn,
	};
}

static int make_flows(struct analysis *a, char *err, size_t errlen)
{
	struct fab_pair *pairs = malloc(sizeof(*pairs) * AN_MAX_FLOWS);

	a->flows = malloc(sizeof(*a->flows) * AN_MAX_FLOWS);
	if (!pairs || !a->flows) {
		free(pairs);
		return fail(err, errlen, "out of memory");
	}
	for (unsigned t = 0; t < a->n_traffic; t++) {
		struct an_traffic *tr = &a->traffic[t];
		int n = fab_pattern_pairs(a->f, &tr->pattern, pairs, AN_MAX_FLOWS, err, errlen);
		if (n < 0 || (uint64_t)a->n_flows + (uint64_t)n * tr->qps_per_pair > AN_MAX_FLOWS) {
			if (n >= 0)
				fail(err, errlen, "traffic: more than %u flows", AN_MAX_FLOWS);
			free(pairs);
			return -1;
		}
		tr->first_flow = a->n_flows;
		tr->n_pairs = (unsigned)n;
		for (unsigned p = 0; p < (unsigned)n; p++)
			for (unsigned q = 0; q < tr->qps_per_pair; q++) {
				struct an_flow *fl = &a->flows[a->n_flows++];
				memset(fl, 0, sizeof(*fl));
				fl->traffic = t;
				fl->src = pairs[p].src;
				fl->dst = pairs[p].dst;
				fl->key = flow_key(a->f, tr, &pairs[p], p * tr->qps_per_pair + q);
			}
		tr->n_flows = a->n_flows - tr->first_flow;
	}
	free(pairs);
	return 0;
}

/* ---- paths and rates -------------------------------------------------------------------------- */

/* Every flow's links on fabric f (the given one, or its copy where every switch sprays). */
static int trace_all(struct analysis *a, const struct fabric *f, struct fab_hop **hops, uint32_t *first, char *err,
		     size_t errlen)
{
	struct fab_tracer t;
	unsigned room = f->n_ports + 2, cap = a->n_flows * 4 + room, used = 0;
	struct fab_hop *h = malloc(sizeof(*h) * cap);

	if (!h || fab_tracer_init(&t, f, a->r)) {
		free(h);
		return fail(err, errlen, "out of memory");
	}
	for (unsigned i = 0; i < a->n_flows; i++) {
		int n;
		if (cap - used < room) {
			struct fab_hop *more = realloc(h, sizeof(*h) * (cap *= 2));
			if (!more) {
				free(h);
				fab_tracer_free(&t);
				return fail(err, errlen, "out of memory");
			}
			h = more;
		}
		first[i] = used;
		n = fab_flow_links(&t, a->flows[i].src, a->flows[i].dst, &a->flows[i].key, h + used, room);
		if (n < 0) {
			fail(err, errlen, "no route from %s to %s", f->nics[a->flows[i].src].name, f->nics[a->flows[i].dst].name);
			free(h);
			fab_tracer_free(&t);
			return -1;
		}
		used += (unsigned)n;
	}
	first[a->n_flows] = used;
	fab_tracer_free(&t);
	*hops = h;
	return 0;
}

/* Max-min rates of the flows over their hops, each capped by its entry's demand. */
static int rates(struct analysis *a, const struct fab_hop *hops, const uint32_t *first, double *rate)
{
	const struct fabric *f = a->f;
	unsigned n_dl = 2 * f->n_links;
	double *cap = malloc(sizeof(*cap) * (n_dl ? n_dl : 1)), *demand = malloc(sizeof(*demand) * (a->n_flows ? a->n_flows : 1));
	int rc = -1;

	if (cap && demand) {
		for (unsigned l = 0; l < f->n_links; l++)
			cap[2 * l] = cap[2 * l + 1] = f->links[l].gbps;
		for (unsigned i = 0; i < a->n_flows; i++) {
			double g = a->traffic[a->flows[i].traffic].gbps;
			demand[i] = g > 0 ? g : DBL_MAX;
		}
		rc = fab_maxmin(n_dl, cap, a->n_flows, first, hops, demand, rate);
	}
	free(cap);
	free(demand);
	return rc;
}

/* The reference: the same flows with every switch spraying (no two flows collide on a path). */
static int spread_rates(struct analysis *a, double *rate, char *err, size_t errlen)
{
	struct fabric sprayed = *a->f;
	struct fab_hop *hops = NULL;
	uint32_t *first = malloc(sizeof(*first) * (a->n_flows + 1));
	int rc = -1;

	sprayed.switches = malloc(sizeof(*sprayed.switches) * a->f->n_switches);
	if (!first || !sprayed.switches) {
		fail(err, errlen, "out of memory");
		goto out;
	}
	memcpy(sprayed.switches, a->f->switches, sizeof(*sprayed.switches) * a->f->n_switches);
	for (unsigned s = 0; s < sprayed.n_switches; s++)
		sprayed.switches[s].lb.lb = FAB_LB_SPRAY;
	if (trace_all(a, &sprayed, &hops, first, err, errlen))
		goto out;
	rc = rates(a, hops, first, rate);
	if (rc)
		fail(err, errlen, "out of memory");
out:
	free(hops);
	free(first);
	free(sprayed.switches);
	return rc;
}

/* ---- links and ECMP groups -------------------------------------------------------------------- */

static void link_loads(struct analysis *a)
{
	for (unsigned i = 0; i < a->n_flows; i++)
		for (uint32_t h = a->first[i]; h < a->first[i + 1]; h++) {
			a->dl_flows[a->hops[h].dlink] += a->hops[h].share;
			a->dl_gbps[a->hops[h].dlink] += a->hops[h].share * a->flows[i].gbps;
		}
}

/* E[max] / mean of `balls` flows hashed uniformly onto n members (balls into bins), by drawing:
 * what ECMP with a good hash should give, to compare a group's MMR with. */
static double mmr_random(unsigned balls, unsigned n)
{
	uint64_t s = 0x243F6A8885A308D3ull ^ ((uint64_t)balls << 20) ^ n;
	unsigned bins[64], trials = 2000;
	double sum_max = 0;

	if (!balls || n < 2)
		return balls ? 1 : 0;
	for (unsigned t = 0; t < trials; t++) {
		unsigned max = 0;
		memset(bins, 0, sizeof(bins));
		for (unsigned b = 0; b < balls; b++) {
			s ^= s << 13, s ^= s >> 7, s ^= s << 17;
			unsigned k = (unsigned)(((s >> 32) * n) >> 32);
			if (++bins[k] > max)
				max = bins[k];
		}
		sum_max += max;
	}
	return sum_max / trials / ((double)balls / n);
}

static bool same_group(const struct an_group *g, unsigned s, const uint16_t *ports, unsigned n)
{
	return g->sw == s && g->n == n && !memcmp(g->ports, ports, n * sizeof(*ports));
}

/* Per switch, each distinct set of more than one next hop, with the flows and Gb/s leaving by
 * each member. */
static int ecmp_groups(struct analysis *a)
{
	const struct fabric *f = a->f;
	const struct fab_routes *r = a->r;
	unsigned cap = 64;

	a->groups = malloc(sizeof(*a->groups) * cap);
	if (!a->groups)
		return -1;
	for (unsigned s = 0; s < f->n_switches; s++) {
		unsigned first_of_switch = a->n_groups;
		for (unsigned d = 0; d < r->n_dst; d++) {
			const struct fab_group *g = &r->group[(size_t)s * r->n_dst + d];
			const uint16_t *ports = r->members + g->first;
			bool seen = false;
			struct an_group *e;
			if (g->n < 2 || g->n > 64)
				continue;
			for (unsigned k = first_of_switch; k < a->n_groups && !seen; k++)
				seen = same_group(&a->groups[k], s, ports, g->n);
			if (seen)
				continue;
			if (a->n_groups == cap) {
				struct an_group *more = realloc(a->groups, sizeof(*more) * (cap *= 2));
				if (!more)
					return -1;
				a->groups = more;
			}
			e = &a->groups[a->n_groups++];
			memset(e, 0, sizeof(*e));
			e->sw = s;
			e->n = g->n;
			memcpy(e->ports, ports, g->n * sizeof(*ports));
			for (unsigned m = 0; m < g->n; m++) {
				uint32_t dl = fab_dlink_out(f, s, ports[m]);
				e->flows[m] = a->dl_flows[dl];
				e->gbps[m] = a->dl_gbps[dl];
			}
			e->mmr_flows = fab_mmr(e->flows, e->n);
			e->mmr_gbps = fab_mmr(e->gbps, e->n);
			e->jfi_gbps = fab_jfi(e->gbps, e->n);
			double total = 0;
			for (unsigned m = 0; m < e->n; m++)
				total += e->flows[m];
			e->mmr_random = f->switches[s].lb.lb == FAB_LB_ECMP ? mmr_random((unsigned)(total + 0.5), e->n) : 1;
		}
	}
	return 0;
}

int analysis_run(struct analysis *a, char *err, size_t errlen)
{
	unsigned n_dl = 2 * a->f->n_links;
	double *spread;

	if (make_flows(a, err, errlen))
		return -1;
	a->first = malloc(sizeof(*a->first) * (a->n_flows + 1));
	a->dl_flows = calloc(n_dl ? n_dl : 1, sizeof(double));
	a->dl_gbps = calloc(n_dl ? n_dl : 1, sizeof(double));
	spread = malloc(sizeof(*spread) * (a->n_flows ? a->n_flows : 1));
	if (!a->first || !a->dl_flows || !a->dl_gbps || !spread) {
		free(spread);
		return fail(err, errlen, "out of memory");
	}
	if (trace_all(a, a->f, &a->hops, a->first, err, errlen) || spread_rates(a, spread, err, errlen)) {
		free(spread);
		return -1;
	}
	double *rate = malloc(sizeof(*rate) * (a->n_flows ? a->n_flows : 1));
	if (!rate || rates(a, a->hops, a->first, rate)) {
		free(rate);
		free(spread);
		return fail(err, errlen, "out of memory");
	}
	a->aggregate_gbps = a->spread_aggregate_gbps = 0;
	for (unsigned i = 0; i < a->n_flows; i++) {
		a->flows[i].gbps = rate[i];
		a->flows[i].spread_gbps = spread[i];
		a->flows[i].first_hop = a->first[i];
		a->flows[i].n_hops = a->first[i + 1] - a->first[i];
		a->aggregate_gbps += rate[i];
		a->spread_aggregate_gbps += spread[i];
	}
	free(rate);
	free(spread);
	link_loads(a);
	return ecmp_groups(a) ? fail(err, errlen, "out of memory") : 0;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

struct an_stats analysis_stats(const struct analysis *a, int t, bool spread)
{
	unsigned first = t < 0 ? 0 : a->traffic[t].first_flow, n = t < 0 ? a->n_flows : a->traffic[t].n_flows;
	double *x = malloc(sizeof(*x) * (n ? n : 1));
	struct an_stats st = { 0 };

	if (!x || !n) {
		free(x);
		return st;
	}
	for (unsigned i = 0; i < n; i++)
		x[i] = spread ? a->flows[first + i].spread_gbps : a->flows[first + i].gbps, st.sum += x[i];
	st.jfi = fab_jfi(x, n);
	qsort(x, n, sizeof(*x), cmp_double);
	st.min = x[0];
	st.max = x[n - 1];
	st.p50 = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
	st.mean = st.sum / n;
	free(x);
	return st;
}

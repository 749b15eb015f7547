/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Paths and max-min fair rates (fab_fluid.h).
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "fab_fluid.h"

#include "kpi.h"

int fab_tracer_init(struct fab_tracer *t, const struct fabric *f, const struct fab_routes *r)
{
	size_t n = f->n_switches ? f->n_switches : 1;

	t->f = f;
	t->r = r;
	t->mass = calloc(n, sizeof(*t->mass));
	t->next_mass = calloc(n, sizeof(*t->next_mass));
	t->frontier = malloc(n * sizeof(*t->frontier));
	t->next_frontier = malloc(n * sizeof(*t->next_frontier));
	if (t->mass && t->next_mass && t->frontier && t->next_frontier)
		return 0;
	fab_tracer_free(t);
	return -1;
}

void fab_tracer_free(struct fab_tracer *t)
{
	free(t->mass);
	free(t->next_mass);
	free(t->frontier);
	free(t->next_frontier);
	memset(t, 0, sizeof(*t));
}

uint32_t fab_dlink_out(const struct fabric *f, unsigned s, unsigned p)
{
	unsigned l = f->ports[f->switches[s].first_port + p].link;

	return 2 * l + (f->links[l].sw == s && f->links[l].port == p ? 0 : 1);
}

struct trace {
	struct fab_hop *out;
	unsigned n, max;
	unsigned n_next;
};

static int hop(struct trace *tr, uint32_t dlink, double share)
{
	if (tr->n == tr->max)
		return -1;
	tr->out[tr->n++] = (struct fab_hop){ .dlink = dlink, .share = share };
	return 0;
}

/* Switch s's share m of the flow, sent on: to the NIC, or to the next switches. */
static int forward(struct fab_tracer *t, struct trace *tr, unsigned s, double m, unsigned dst, uint32_t hash)
{
	const struct fabric *f = t->f;
	const struct fab_switch *w = &f->switches[s];
	const uint16_t *ports;
	unsigned n = fab_next_ports(f, t->r, s, dst, &ports);

	if (n == 0)
		return -1;
	if (f->nics[dst].sw == s)
		return hop(tr, fab_dlink_out(f, s, ports[0]), m);
	for (unsigned i = 0; i < n; i++) {
		unsigned p, peer;
		double share = m / n;
		if (w->lb.lb == FAB_LB_ECMP) {
			if (i > 0)
				break;
			p = ports[fab_member(w->lb.hash.fn, hash, n)];
			share = m;
		} else {
			p = ports[i];
		}
		peer = f->ports[w->first_port + p].peer;
		if (hop(tr, fab_dlink_out(f, s, p), share))
			return -1;
		if (t->next_mass[peer] == 0)
			t->next_frontier[tr->n_next++] = peer;
		t->next_mass[peer] += share;
	}
	return 0;
}

int fab_flow_links(struct fab_tracer *t, unsigned src, unsigned dst, const struct fab_flow_key *k, struct fab_hop *out,
		   unsigned max)
{
	const struct fabric *f = t->f;
	struct trace tr = { .out = out, .max = max };
	unsigned n_front = 1, guard = 0;
	int rc = 0;

	if (hop(&tr, 2 * f->nics[src].link + 1, 1.0))
		return -1;
	t->frontier[0] = f->nics[src].sw;
	t->mass[f->nics[src].sw] = 1.0;
	while (n_front && rc == 0) {
		tr.n_next = 0;
		for (unsigned i = 0; i < n_front && rc == 0; i++) {
			unsigned s = t->frontier[i];
			rc = forward(t, &tr, s, t->mass[s], dst, fab_hash(&f->switches[s].lb.hash, k));
			t->mass[s] = 0;
		}
		for (unsigned i = 0; i < tr.n_next; i++) { /* the next hop count's switches */
			t->frontier[i] = t->next_frontier[i];
			t->mass[t->frontier[i]] = t->next_mass[t->frontier[i]];
			t->next_mass[t->frontier[i]] = 0;
		}
		n_front = rc == 0 ? tr.n_next : 0;
		if (++guard > f->n_switches) /* routes only ever get closer: a loop is a bug, not a path */
			rc = -1;
	}
	for (unsigned i = 0; rc && i < f->n_switches; i++)
		t->mass[i] = t->next_mass[i] = 0;
	return rc ? -1 : (int)tr.n;
}

/* ---- max-min fair rates ----------------------------------------------------------------------- */

struct filling {
	double *load, *weight;        /* per directed link: rate carried; shares of the flows still growing */
	bool *frozen;
};

static void freeze(struct filling *fl, unsigned i, const uint32_t *first, const struct fab_hop *hops)
{
	fl->frozen[i] = true;
	for (uint32_t h = first[i]; h < first[i + 1]; h++)
		fl->weight[hops[h].dlink] -= hops[h].share;
}

int fab_maxmin(unsigned n_dlinks, const double *cap, unsigned n_flows, const uint32_t *first, const struct fab_hop *hops,
	       const double *demand, double *rate)
{
	struct filling fl = { calloc(n_dlinks ? n_dlinks : 1, sizeof(double)), calloc(n_dlinks ? n_dlinks : 1, sizeof(double)),
			      calloc(n_flows ? n_flows : 1, sizeof(bool)) };
	unsigned growing = n_flows;

	if (!fl.load || !fl.weight || !fl.frozen) {
		free(fl.load), free(fl.weight), free(fl.frozen);
		return -1;
	}
	for (unsigned i = 0; i < n_flows; i++) {
		rate[i] = 0;
		for (uint32_t h = first[i]; h < first[i + 1]; h++)
			fl.weight[hops[h].dlink] += hops[h].share;
	}
	while (growing) {
		double inc = DBL_MAX;
		bool unbound;
		for (unsigned d = 0; d < n_dlinks; d++)
			if (fl.weight[d] > 1e-12 && (cap[d] - fl.load[d]) / fl.weight[d] < inc)
				inc = (cap[d] - fl.load[d]) / fl.weight[d];
		for (unsigned i = 0; demand && i < n_flows; i++)
			if (!fl.frozen[i] && demand[i] - rate[i] < inc)
				inc = demand[i] - rate[i];
		unbound = inc == DBL_MAX; /* flows that cross no link: nothing gives them a rate */
		if (unbound)
			inc = 0;
		for (unsigned d = 0; d < n_dlinks; d++)
			fl.load[d] += inc * fl.weight[d];
		for (unsigned i = 0; i < n_flows; i++)
			if (!fl.frozen[i])
				rate[i] += inc;
		for (unsigned i = 0; i < n_flows; i++) {
			bool full = unbound || (demand && rate[i] >= demand[i] * (1 - 1e-12));
			for (uint32_t h = first[i]; !full && !fl.frozen[i] && h < first[i + 1]; h++)
				full = cap[hops[h].dlink] - fl.load[hops[h].dlink] <= cap[hops[h].dlink] * 1e-9;
			if (full && !fl.frozen[i]) {
				freeze(&fl, i, first, hops);
				growing--;
			}
		}
	}
	free(fl.load), free(fl.weight), free(fl.frozen);
	return 0;
}

/* kpi/'s formulas; an empty or idle set is fair here (1), kpi_jfi says 0 */
double fab_jfi(const double *x, unsigned n)
{
	double j = kpi_jfi(x, n);

	return j > 0 ? j : 1;
}

double fab_mmr(const double *x, unsigned n)
{
	return kpi_mmr(x, n);
}

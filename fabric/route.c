/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Routes from the topology, as a data-centre fabric's routing protocol converges to them: for
 * every switch that has NICs (a destination subnet), a breadth-first search over the links that
 * are up gives each switch its distance in hops; a switch's next hops toward it are the ports
 * whose far switch is one hop closer. In a leaf-spine or fat-tree these are the up-down paths,
 * every spine an equal-cost choice; a custom fabric gets its shortest paths. A NIC's own switch
 * delivers on the NIC's port.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"

#define FAB_FAR UINT16_MAX

void fab_routes_free(struct fab_routes *r)
{
	free(r->dst_of_switch);
	free(r->group);
	free(r->members);
	free(r->nic_port);
	free(r->down);
	memset(r, 0, sizeof(*r));
}

static bool link_up(const bool *down, unsigned l)
{
	return !down || !down[l];
}

/* Hops from every switch to switch d over the links that are up (FAB_FAR: not joined). */
static void distances(const struct fabric *f, const bool *down, unsigned d, uint16_t *dist, unsigned *queue)
{
	unsigned head = 0, tail = 0;

	for (unsigned s = 0; s < f->n_switches; s++)
		dist[s] = FAB_FAR;
	dist[d] = 0;
	queue[tail++] = d;
	while (head < tail) {
		const struct fab_switch *w = &f->switches[queue[head]];
		uint16_t next = (uint16_t)(dist[queue[head++]] + 1);
		for (unsigned p = 0; p < w->n_ports; p++) {
			const struct fab_port *q = &f->ports[w->first_port + p];
			if (q->to_nic || !link_up(down, q->link) || dist[q->peer] != FAB_FAR)
				continue;
			dist[q->peer] = next;
			queue[tail++] = q->peer;
		}
	}
}

/* Switch s's ports one hop closer to the destination, appended to members. */
static unsigned closer_ports(const struct fabric *f, const bool *down, unsigned s, const uint16_t *dist, uint16_t *out)
{
	const struct fab_switch *w = &f->switches[s];
	unsigned n = 0;

	for (unsigned p = 0; p < w->n_ports; p++) {
		const struct fab_port *q = &f->ports[w->first_port + p];
		if (!q->to_nic && link_up(down, q->link) && dist[q->peer] + 1 == dist[s])
			out[n++] = (uint16_t)p;
	}
	return n;
}

/* The members' array grows as the groups are found (rarely: its first size is a leaf-spine's). */
static int members_room(struct fab_routes *r, unsigned *cap, unsigned more)
{
	uint16_t *m;

	if (r->n_members + more <= *cap)
		return 0;
	if ((uint64_t)r->n_members + more > FAB_MAX_ROUTE_MEMBERS)
		return -1;
	while (*cap < r->n_members + more)
		*cap = *cap > FAB_MAX_ROUTE_MEMBERS / 2 ? FAB_MAX_ROUTE_MEMBERS : *cap * 2;
	m = realloc(r->members, sizeof(*m) * *cap);
	if (!m)
		return -1;
	r->members = m;
	return 0;
}

static int routes_alloc(const struct fabric *f, struct fab_routes *r, unsigned *cap, char *err, size_t errlen)
{
	unsigned n_dst = 0;

	r->n_switches = f->n_switches;
	r->dst_of_switch = malloc(sizeof(*r->dst_of_switch) * (f->n_switches ? f->n_switches : 1));
	r->nic_port = malloc(sizeof(*r->nic_port) * (f->n_nics ? f->n_nics : 1));
	r->down = calloc(f->n_links ? f->n_links : 1, sizeof(*r->down));
	if (!r->dst_of_switch || !r->nic_port || !r->down)
		return -1;
	for (unsigned s = 0; s < f->n_switches; s++)
		r->dst_of_switch[s] = f->switches[s].prefix_len ? (int32_t)n_dst++ : -1;
	r->n_dst = n_dst;
	if ((uint64_t)f->n_switches * n_dst > FAB_MAX_ROUTE_GROUPS) {
		fab_error(err, errlen, "routes: %u switches x %u subnets need %llu route groups (allowed: up to %u)",
			  f->n_switches, n_dst, (unsigned long long)f->n_switches * n_dst, FAB_MAX_ROUTE_GROUPS);
		return -1;
	}
	r->group = calloc((size_t)f->n_switches * (n_dst ? n_dst : 1), sizeof(*r->group));
	*cap = 4096;
	r->members = malloc(sizeof(*r->members) * *cap);
	if (!r->group || !r->members) {
		fab_error(err, errlen, "routes: out of memory");
		return -1;
	}
	return 0;
}

/* The first NIC cabled to switch d, for messages. */
static const char *a_nic_of(const struct fabric *f, unsigned d)
{
	for (unsigned n = 0; n < f->n_nics; n++)
		if (f->nics[n].sw == d)
			return f->nics[n].name;
	return "?";
}

int fabric_routes(const struct fabric *f, const bool *link_down, bool allow_unreachable, struct fab_routes *r,
		  char *err, size_t errlen)
{
	uint16_t *dist = malloc(sizeof(*dist) * (f->n_switches ? f->n_switches : 1));
	unsigned *queue = malloc(sizeof(*queue) * (f->n_switches ? f->n_switches : 1)), cap = 0;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (!dist || !queue) {
		snprintf(err, errlen, "routes: out of memory");
		goto out;
	}
	if (routes_alloc(f, r, &cap, err, errlen))
		goto out;
	for (unsigned l = 0; link_down && l < f->n_links; l++)
		r->down[l] = link_down[l];
	for (unsigned n = 0; n < f->n_nics; n++)
		r->nic_port[n] = (uint16_t)f->nics[n].port;
	for (unsigned d = 0; d < f->n_switches; d++) {
		int di = r->dst_of_switch[d];
		if (di < 0)
			continue;
		distances(f, link_down, d, dist, queue);
		for (unsigned s = 0; s < f->n_switches; s++) {
			struct fab_group *g = &r->group[(size_t)s * r->n_dst + (unsigned)di];
			if (dist[s] == FAB_FAR && !allow_unreachable) {
				snprintf(err, errlen, "links: switch %s has no route to %s (on %s): no path of links joins them",
					 f->switches[s].name, a_nic_of(f, d), f->switches[d].name);
				goto out;
			}
			if (members_room(r, &cap, f->switches[s].n_ports)) {
				snprintf(err, errlen, "routes: more than %u next hops in all (allowed: up to %u): a smaller fabric",
					 r->n_members, FAB_MAX_ROUTE_MEMBERS);
				goto out;
			}
			g->first = r->n_members;
			g->hops = dist[s];
			g->n = s == d || dist[s] == FAB_FAR ? 0 : (uint16_t)closer_ports(f, link_down, s, dist, r->members + r->n_members);
			r->n_members += g->n;
		}
	}
	rc = 0;
out:
	free(dist);
	free(queue);
	if (rc)
		fab_routes_free(r);
	return rc;
}

unsigned fab_next_ports(const struct fabric *f, const struct fab_routes *r, unsigned s, unsigned nic,
			const uint16_t **ports)
{
	const struct fab_nic *n = &f->nics[nic];
	const struct fab_group *g;

	if (n->sw == s) {
		*ports = &r->nic_port[nic];
		return r->down[n->link] ? 0 : 1;
	}
	g = &r->group[(size_t)s * r->n_dst + (unsigned)r->dst_of_switch[n->sw]];
	*ports = r->members + g->first;
	return g->n;
}

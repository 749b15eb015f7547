/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Traffic patterns written once for many hosts (fabric.h, fab_pattern): the host pairs a pattern
 * means, then for each pair the NIC pairs (NIC r to NIC r, every rail or one).
 *   pairs        the pairs listed
 *   incast       every host taking part but the receiver, to the receiver
 *   all_to_all   every ordered pair of distinct hosts
 *   permutation  each host to one other, each receiving from one: a random cyclic permutation
 *                (Sattolo's algorithm, seeded: the same seed, the same pairs, and no host sends
 *                to itself)
 *   ring         host i to host i + 1, the last to the first
 */
#include <stdio.h>
#include <stdlib.h>

#include "fabric.h"

struct expander {
	const struct fabric *f;
	const struct fab_pattern *p;
	struct fab_pair *out;
	unsigned n, max;
	char *err;
	size_t errlen;
};

#define fail(x, ...) fab_error((x)->err, (x)->errlen, __VA_ARGS__)

const char *fab_pattern_name(enum fab_pattern_kind k)
{
	static const char *const names[] = { "pairs", "incast", "all_to_all", "permutation", "ring" };
	return (unsigned)k < 5 ? names[k] : "?";
}

/* Host a to host b: their NICs of each rail in use. */
static int add_hosts(struct expander *x, unsigned a, unsigned b)
{
	const struct fab_host *ha = &x->f->hosts[a], *hb = &x->f->hosts[b];
	unsigned rails = ha->n_nics < hb->n_nics ? ha->n_nics : hb->n_nics;

	for (unsigned r = 0; r < rails; r++) {
		if (x->p->rail >= 0 && (unsigned)x->p->rail != r)
			continue;
		if (x->n == x->max)
			return fail(x, "%s: more than %u NIC pairs", fab_pattern_name(x->p->kind), x->max);
		x->out[x->n++] = (struct fab_pair){ .src = ha->first_nic + r, .dst = hb->first_nic + r };
	}
	return 0;
}

static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

void fab_permutation(unsigned n, uint64_t seed, unsigned *to)
{
	for (unsigned i = 0; i < n; i++)
		to[i] = i;
	for (unsigned i = n ? n - 1 : 0; i > 0; i--) { /* Sattolo: j < i, so the result is one cycle */
		unsigned j = (unsigned)(next_rand(&seed) % i), t = to[i];
		to[i] = to[j];
		to[j] = t;
	}
}

static int permutation(struct expander *x, const unsigned *hosts, unsigned n)
{
	unsigned *to = malloc(sizeof(*to) * n);
	int rc = 0;

	if (!to)
		return fail(x, "permutation: out of memory");
	fab_permutation(n, x->p->seed, to);
	for (unsigned i = 0; i < n && !rc; i++)
		rc = add_hosts(x, hosts[i], hosts[to[i]]);
	free(to);
	return rc;
}

static int expand(struct expander *x, const unsigned *hosts, unsigned n)
{
	const struct fab_pattern *p = x->p;
	int rc = 0;

	switch (p->kind) {
	case FAB_PAT_PAIRS:
		for (unsigned i = 0; i < p->n_pairs && !rc; i++)
			rc = add_hosts(x, p->pairs[i].src, p->pairs[i].dst);
		return rc;
	case FAB_PAT_INCAST:
		for (unsigned i = 0; i < n && !rc; i++)
			if (hosts[i] != p->dst)
				rc = add_hosts(x, hosts[i], p->dst);
		return rc;
	case FAB_PAT_ALL_TO_ALL:
		for (unsigned i = 0; i < n && !rc; i++)
			for (unsigned j = 0; j < n && !rc; j++)
				if (i != j)
					rc = add_hosts(x, hosts[i], hosts[j]);
		return rc;
	case FAB_PAT_PERMUTATION:
		return permutation(x, hosts, n);
	case FAB_PAT_RING:
		for (unsigned i = 0; i < n && !rc; i++)
			rc = add_hosts(x, hosts[i], hosts[(i + 1) % n]);
		return rc;
	}
	return fail(x, "unknown pattern");
}

static int check_hosts(struct expander *x, const unsigned *hosts, unsigned n)
{
	const struct fab_pattern *p = x->p;
	bool dst_in = false, *seen = calloc(x->f->n_hosts ? x->f->n_hosts : 1, sizeof(*seen));

	if (!seen)
		return fail(x, "out of memory");
	for (unsigned i = 0; i < n; i++) {
		if (hosts[i] >= x->f->n_hosts || seen[hosts[i]]) {
			free(seen);
			return hosts[i] >= x->f->n_hosts ? fail(x, "hosts: host %u of a fabric of %u", hosts[i], x->f->n_hosts)
							 : fail(x, "hosts: %s is listed twice", x->f->hosts[hosts[i]].name);
		}
		seen[hosts[i]] = true;
		dst_in |= hosts[i] == p->dst;
	}
	free(seen);
	if (p->kind == FAB_PAT_INCAST && !dst_in)
		return fail(x, "dst: %s is not one of the hosts taking part", p->dst < x->f->n_hosts ? x->f->hosts[p->dst].name : "?");
	if (p->kind != FAB_PAT_PAIRS && n < 2)
		return fail(x, "hosts: %s needs at least two hosts", fab_pattern_name(p->kind));
	if (p->rail >= 0 && (unsigned)p->rail >= x->f->rails)
		return fail(x, "rail: %d, but the hosts have %u NIC%s", p->rail, x->f->rails, x->f->rails == 1 ? "" : "s");
	for (unsigned i = 0; p->kind == FAB_PAT_PAIRS && i < p->n_pairs; i++)
		if (p->pairs[i].src == p->pairs[i].dst || p->pairs[i].src >= x->f->n_hosts || p->pairs[i].dst >= x->f->n_hosts)
			return fail(x, "pairs.[%u]: a pair of two hosts of the fabric, not one host to itself", i);
	return 0;
}

int fab_pattern_pairs(const struct fabric *f, const struct fab_pattern *p, struct fab_pair *out, unsigned max,
		      char *err, size_t errlen)
{
	struct expander x = { .f = f, .p = p, .out = out, .max = max, .err = err, .errlen = errlen };
	unsigned *all = NULL, n = p->hosts ? p->n_hosts : f->n_hosts;
	const unsigned *hosts = p->hosts;
	int rc;

	if (!hosts) {
		all = malloc(sizeof(*all) * (n ? n : 1));
		if (!all)
			return fail(&x, "out of memory");
		for (unsigned i = 0; i < n; i++)
			all[i] = i;
		hosts = all;
	}
	rc = check_hosts(&x, hosts, n) || expand(&x, hosts, n) ? -1 : (int)x.n;
	free(all);
	return rc;
}

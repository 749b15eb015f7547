/* SPDX-License-Identifier: BSD-3-Clause
 *
 * ECMP, flowlet and spray choices (fab_lb.h).
 */
#include <string.h>

#include "fab_lb.h"

void fab_lb_init(struct fab_lb_state *st, uint64_t seed)
{
	memset(st, 0, sizeof(*st));
	st->rng = seed ? seed : 0x9E3779B97F4A7C15ull;
}

static uint32_t draw(struct fab_lb_state *st)
{
	st->rng ^= st->rng << 13;
	st->rng ^= st->rng >> 7;
	st->rng ^= st->rng << 17;
	return (uint32_t)(st->rng >> 32);
}

static int member_of(const uint16_t *ports, unsigned n, uint16_t port)
{
	for (unsigned i = 0; i < n; i++)
		if (ports[i] == port)
			return (int)i;
	return -1;
}

/* The least loaded port, ties broken from the hash's own member on (so that idle ports do not
 * all go to the first one). */
static uint16_t least_loaded(const uint16_t *ports, unsigned n, unsigned from, const uint64_t *port_bytes)
{
	unsigned best = from;

	for (unsigned i = 1; i < n; i++) {
		unsigned m = from + i < n ? from + i : from + i - n;
		if (port_bytes[ports[m]] < port_bytes[ports[best]])
			best = m;
	}
	return ports[best];
}

static uint16_t flowlet_pick(struct fab_lb_state *st, const struct fab_lb_opts *o, uint32_t hash, const uint16_t *ports,
			     unsigned n, uint64_t now_ns, const uint64_t *port_bytes)
{
	struct fab_flowlet *fl = &st->flowlet[hash & (FAB_FLOWLET_SLOTS - 1)];

	if (!fl->used || now_ns - fl->last_ns >= o->flowlet_gap_ns || member_of(ports, n, fl->port) < 0) {
		fl->port = least_loaded(ports, n, fab_member(o->hash.fn, hash, n), port_bytes);
		fl->used = 1;
		st->flowlets++;
	}
	fl->last_ns = now_ns;
	return fl->port;
}

uint16_t fab_lb_pick(struct fab_lb_state *st, const struct fab_lb_opts *o, uint32_t hash, const uint16_t *ports,
		     unsigned n, uint64_t now_ns, const uint64_t *port_bytes)
{
	if (n == 1)
		return ports[0];
	switch (o->lb) {
	case FAB_LB_SPRAY:
		return ports[fab_member(FAB_HASH_CRC32, draw(st), n)];
	case FAB_LB_FLOWLET:
		return flowlet_pick(st, o, hash, ports, n, now_ns, port_bytes);
	case FAB_LB_ECMP:
		break;
	}
	return ports[fab_member(o->hash.fn, hash, n)];
}

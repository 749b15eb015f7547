/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <rte_mbuf.h>

#include "clock.h"
#include "counters.h"
#include "inject.h"

static void rules_init(struct inject_rule_state *st, unsigned *n_out, const struct cfg_inject *rules, unsigned n,
		       int qp_index)
{
	*n_out = 0;
	for (unsigned i = 0; i < n; i++) {
		if (qp_index >= 0 && rules[i].qp >= 0 && rules[i].qp != qp_index)
			continue;
		st[*n_out] = (struct inject_rule_state){.cfg = &rules[i],
							.below = (uint32_t)(rules[i].probability * 4294967295.0)};
		(*n_out)++;
	}
}

void qp_inject_init(struct qp_inject *in, const struct cfg_flow_group *g, uint32_t qp_index, uint64_t seed)
{
	memset(in, 0, sizeof(*in));
	rules_init(in->rule, &in->n_rules, g->inject, g->n_inject, (int)qp_index);
	in->rng = seed | 1;
	in->ce_pending_ev = in->gap_ev = in->nak_ev = -1;
}

void port_inject_init(struct port_inject *in, const struct cfg_port *p, uint64_t seed)
{
	memset(in, 0, sizeof(*in));
	rules_init(in->rule, &in->n_rules, p->rx_inject, p->n_rx_inject, -1);
	in->rng = seed | 1;
}

/* The first rule that picks this packet, or -1. Every rule sees every packet (their counts of
 * packets seen stay independent). */
static int choose(struct inject_rule_state *st, unsigned n, uint64_t *rng, uint32_t psn)
{
	int hit = -1;

	for (unsigned i = 0; i < n; i++) {
		struct inject_rule_state *r = &st[i];
		const struct cfg_inject *c = r->cfg;
		bool pick;

		r->seen++;
		if (c->count && r->done >= c->count)
			continue;
		if (c->psn >= 0)
			pick = !r->psn_done && psn == (uint32_t)c->psn;
		else if (c->every)
			pick = r->seen % c->every == 0;
		else
			pick = rng32(rng) < r->below;
		if (pick && hit < 0) {
			r->done++;
			if (c->psn >= 0)
				r->psn_done = true;
			hit = (int)i;
		}
	}
	return hit;
}

/* ECN-CE in the IP header. The ICRC leaves the IP ToS / traffic class out, so it stays right;
 * the IPv4 header checksum is written again. */
static void mark_ce(uint8_t *f, const struct wire_pkt *p)
{
	uint8_t *ip = f + p->l3_off;

	if (p->ip.version == 4) {
		ip[1] |= WIRE_ECN_CE;
		wire_put16(ip + 10, wire_ipv4_checksum(ip));
	} else {
		ip[1] |= WIRE_ECN_CE << 4;
	}
}

static void corrupt_icrc(uint8_t *f, const struct wire_pkt *p)
{
	f[p->icrc_off] ^= 0x01;
}

static void apply(uint8_t *f, const struct wire_pkt *p, enum cfg_inject_action a)
{
	if (a == CFG_INJECT_CE)
		mark_ce(f, p);
	else if (a == CFG_INJECT_CORRUPT)
		corrupt_icrc(f, p);
}

static int log_event(struct qp_inject *in, uint64_t now_tsc, uint32_t psn, uint8_t action)
{
	unsigned i = in->n_events;

	if (i >= INJECT_MAX_EVENTS)
		return -1;
	in->ev[i] = (struct inject_event){.tx_ns = clock_tsc_to_ns(now_tsc), .psn = psn, .action = action};
	__atomic_store_n(&in->n_events, i + 1, __ATOMIC_RELEASE);
	return (int)i;
}

static void count_action(uint64_t *ce, uint64_t *drop, uint64_t *corrupt, enum cfg_inject_action a)
{
	if (a == CFG_INJECT_CE)
		STAT_ADD(*ce, 1);
	else if (a == CFG_INJECT_DROP)
		STAT_ADD(*drop, 1);
	else
		STAT_ADD(*corrupt, 1);
}

/* One TX frame: returns false when it is dropped. */
static bool tx_one(struct qp_inject *in, uint8_t *f, uint32_t len, uint64_t now_tsc)
{
	struct wire_pkt p;
	enum cfg_inject_action a;
	int hit, ev;

	if (wire_parse(f, len, 0, &p) != WIRE_KIND_ROCE)
		return true;
	if (in->gap_pending) { /* this packet shows the receiver the gap: a NAK is awaited from now */
		in->gap_pending = false;
		in->nak_from_tsc = now_tsc;
		in->nak_ev = in->gap_ev;
	}
	hit = choose(in->rule, in->n_rules, &in->rng, p.bth.psn);
	if (hit < 0)
		return true;
	a = in->rule[hit].cfg->action;
	count_action(&in->ce_marked, &in->dropped, &in->corrupted, a);
	ev = log_event(in, now_tsc, p.bth.psn, (uint8_t)a);
	if (a == CFG_INJECT_CE) {
		if (!in->ce_pending_tsc) {
			in->ce_pending_tsc = now_tsc;
			in->ce_pending_ev = ev;
		}
	} else {
		in->gap_pending = true;
		in->gap_ev = ev;
	}
	apply(f, &p, a);
	return a != CFG_INJECT_DROP;
}

unsigned inject_tx(struct qp_inject *in, struct rte_mbuf **m, unsigned n, uint64_t now_tsc)
{
	for (unsigned i = 0; i < n;) {
		struct rte_mbuf *x = m[i];

		if (tx_one(in, rte_pktmbuf_mtod(x, uint8_t *), x->data_len, now_tsc)) {
			i++;
			continue;
		}
		/* dropped: the later frames keep their order, the mbuf goes to the end, unsent */
		memmove(&m[i], &m[i + 1], (n - i - 1) * sizeof(m[0]));
		m[--n] = x;
	}
	return n;
}

int inject_rx(struct port_inject *in, uint8_t *frame, uint32_t len)
{
	struct wire_pkt p;
	enum cfg_inject_action a;
	int hit;

	/* a datagram with a wrong IPv4 checksum is left as it came: CE's checksum rewrite would mend it */
	if (wire_parse(frame, len, WIRE_PARSE_CHECK_IP_CSUM, &p) != WIRE_KIND_ROCE)
		return -1;
	hit = choose(in->rule, in->n_rules, &in->rng, p.bth.psn);
	if (hit < 0)
		return -1;
	a = in->rule[hit].cfg->action;
	apply(frame, &p, a);
	return (int)a;
}

static void summarize(struct delay_summary *s, uint64_t ns)
{
	if (s->n == 0 || ns < s->min_ns)
		__atomic_store_n(&s->min_ns, ns, __ATOMIC_RELAXED);
	if (ns > s->max_ns)
		__atomic_store_n(&s->max_ns, ns, __ATOMIC_RELAXED);
	STAT_ADD(s->sum_ns, ns);
	STAT_ADD(s->n, 1);
}

static uint64_t tsc_ns(uint64_t from, uint64_t to)
{
	return clock_tsc_to_ns(to) - clock_tsc_to_ns(from);
}

static void answer_event(struct qp_inject *in, int ev, uint64_t delay_ns)
{
	if (ev < 0)
		return;
	in->ev[ev].delay_ns = delay_ns;
	__atomic_store_n(&in->ev[ev].answered, 1, __ATOMIC_RELEASE);
}

void inject_on_cnp(struct qp_inject *in, uint64_t now_tsc)
{
	if (in->last_cnp_tsc)
		summarize(&in->cnp_spacing, tsc_ns(in->last_cnp_tsc, now_tsc));
	in->last_cnp_tsc = now_tsc;
	if (!in->ce_pending_tsc)
		return;
	summarize(&in->cnp_delay, tsc_ns(in->ce_pending_tsc, now_tsc));
	answer_event(in, in->ce_pending_ev, tsc_ns(in->ce_pending_tsc, now_tsc));
	in->ce_pending_tsc = 0;
	in->ce_pending_ev = -1;
}

void inject_on_nak(struct qp_inject *in, uint64_t now_tsc)
{
	if (!in->nak_from_tsc)
		return;
	summarize(&in->nak_delay, tsc_ns(in->nak_from_tsc, now_tsc));
	answer_event(in, in->nak_ev, tsc_ns(in->nak_from_tsc, now_tsc));
	in->nak_from_tsc = 0;
	in->nak_ev = -1;
}

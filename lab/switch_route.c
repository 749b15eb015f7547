/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_lpm.h>
#include <rte_malloc.h>

#include "counters.h"
#include "switch_route.h"
#include "wire.h"

#define TBL8S 64 /* a tbl8 per /24 with longer routes in it: each leaf's subnet with its hosts' /32s */

struct sw_route *sw_route_create(const struct cfg_fab_switch *c, unsigned index, int socket, char *err, size_t errlen)
{
	struct rte_lpm_config lc = {.max_rules = CFG_FAB_MAX_ROUTES, .number_tbl8s = TBL8S};
	struct sw_route *r = rte_zmalloc_socket("sw_route", sizeof(*r), RTE_CACHE_LINE_SIZE, socket);
	char name[RTE_MEMZONE_NAMESIZE];

	if (!r) {
		snprintf(err, errlen, "out of memory for switch %s's routes (raise eal.memory_mb)", c->name);
		return NULL;
	}
	snprintf(name, sizeof(name), "fab_lpm%u", index);
	r->lpm = rte_lpm_create(name, socket, &lc);
	if (!r->lpm) {
		snprintf(err, errlen, "switch %s: cannot create its route table: %s", c->name, rte_strerror(rte_errno));
		sw_route_free(r);
		return NULL;
	}
	for (unsigned i = 0; i < c->n_routes; i++) {
		const struct cfg_fab_route *e = &c->routes[i];
		int rc = rte_lpm_add(r->lpm, e->prefix, e->len, i);
		if (rc) {
			snprintf(err, errlen, "switch %s: cannot add route %u.%u.%u.%u/%u: %s", c->name, e->prefix >> 24,
				 e->prefix >> 16 & 255, e->prefix >> 8 & 255, e->prefix & 255, e->len, rte_strerror(-rc));
			sw_route_free(r);
			return NULL;
		}
		r->group[i].n = e->n;
		for (unsigned m = 0; m < e->n; m++)
			r->group[i].ports[m] = e->ports[m];
	}
	r->n_groups = c->n_routes;
	for (unsigned k = 0; k < CFG_FAB_MAX_EVENTS; k++)
		for (unsigned i = 0; i < c->n_routes; i++) {
			r->after[k][i].n = c->after[k][i].n;
			for (unsigned m = 0; m < c->after[k][i].n; m++)
				r->after[k][i].ports[m] = c->after[k][i].ports[m];
		}
	for (unsigned k = 0; k < c->n_ports; k++) {
		memcpy(r->mac[k], c->ports[k].mac, 6);
		memcpy(r->next_mac[k], c->ports[k].next_mac, 6);
	}
	r->lb = c->lb;
	fab_lb_init(&r->st, 0x5DEECE66Dull + index * 0x9E3779B97F4A7C15ull);
	return r;
}

void sw_route_free(struct sw_route *r)
{
	if (!r)
		return;
	rte_lpm_free(r->lpm);
	rte_free(r);
}

void sw_route_converge(struct sw_route *r, unsigned k)
{
	/* the LPM entries stay: every prefix keeps its group, whose ports change (none: unreachable) */
	for (unsigned i = 0; i < r->n_groups; i++) {
		r->group[i].n = r->after[k][i].n;
		memcpy(r->group[i].ports, r->after[k][i].ports, sizeof(r->group[i].ports));
	}
}

/* The fields the hash may cover, as fabric/'s fab_hash takes them (the frame's, host order). */
static void flow_key(const uint8_t *ip, const struct wire_pkt *p, struct fab_flow_key *k)
{
	bool roce = p->kind == WIRE_KIND_ROCE || p->kind == WIRE_KIND_CNP;

	k->src_ip = wire_get32(ip + 12);
	k->dst_ip = wire_get32(ip + 16);
	k->sport = roce ? p->udp.sport : 0;
	k->dport = roce ? p->udp.dport : 0;
	k->dest_qp = roce ? p->bth.dqpn : 0;
}

/* TTL - 1, and the checksum moved by the change of the 16-bit word (TTL, protocol): RFC 1624's
 * HC' = ~(~HC + ~m + m'). */
static void decrement_ttl(uint8_t *ip)
{
	uint16_t m = wire_get16(ip + 8), m2 = (uint16_t)(m - 0x0100);
	uint32_t sum = (uint32_t)(~wire_get16(ip + 10) & 0xFFFF) + (uint32_t)(~m & 0xFFFF) + m2;

	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	ip[8]--;
	wire_put16(ip + 10, (uint16_t)~sum);
}

int sw_route_frame(struct sw_route *r, uint8_t *f, uint32_t len, uint32_t frame_bytes, const struct wire_pkt *p,
		   uint64_t now_ns, const uint64_t *port_bytes, enum sw_route_verdict *why)
{
	unsigned l3 = p->l2.vlan ? 18 : 14;
	uint8_t *ip = f + l3;
	uint32_t g;
	struct fab_flow_key key;
	unsigned out, m = 0;

	if (p->ethertype != 0x0800 || len < l3 + 20 || (ip[0] >> 4) != 4) {
		*why = SW_NOT_IPV4;
		return -1;
	}
	if (rte_lpm_lookup(r->lpm, wire_get32(ip + 16), &g) != 0 || r->group[g].n == 0) {
		*why = SW_NO_ROUTE;
		return -1;
	}
	if (ip[8] <= 1) {
		*why = SW_TTL_EXPIRED;
		return -1;
	}
	if (r->group[g].n > 1) {
		uint16_t port;
		flow_key(ip, p, &key);
		port = fab_lb_pick(&r->st, &r->lb, fab_hash(&r->lb.hash, &key), r->group[g].ports, r->group[g].n, now_ns,
				   port_bytes);
		while (r->group[g].ports[m] != port)
			m++;
	}
	out = r->group[g].ports[m];
	STAT_ADD(r->load[g].frames[m], 1);
	STAT_ADD(r->load[g].bytes[m], frame_bytes);
	memcpy(f, r->next_mac[out], 6);
	memcpy(f + 6, r->mac[out], 6);
	decrement_ttl(ip);
	*why = SW_ROUTED;
	return (int)out;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Unit tests of fabric/ (the virtual fabric's model): the switches, links, ports and addresses
 * each kind builds, the routes (every switch's next hops, worked out by hand for each kind), the
 * ECMP hashes against the CRCs' published check values, the member a hash picks, polarisation on
 * a 3-tier fat-tree and what a seed per switch does to it, flowlet and spray choices, the traffic
 * patterns, and max-min fair rates, JFI and MMR against hand-computed cases.
 */
#include <math.h>

#include "fab_fluid.h"
#include "fab_lb.h"
#include "fabric.h"
#include "testlib.h"

static char err[512];

/* The fabric and its routes, or a failed check (and false). */
static bool built(struct fab_spec *s, struct fabric *f, struct fab_routes *r)
{
	if (fabric_build(s, f, err, sizeof(err))) {
		printf("  build: %s\n", err);
		CHECK(0);
		return false;
	}
	if (fabric_routes(f, NULL, false, r, err, sizeof(err))) {
		printf("  routes: %s\n", err);
		fabric_free(f);
		CHECK(0);
		return false;
	}
	return true;
}

static struct fab_spec leaf_spine(unsigned leaves, unsigned spines, unsigned hosts)
{
	struct fab_spec s;

	fab_spec_defaults(&s);
	s.leaves = leaves;
	s.spines = spines;
	s.hosts_per_leaf = hosts;
	return s;
}

/* The peer's name of switch s's next hops toward NIC n, joined ("spine0,spine1"). */
static const char *next_hops(const struct fabric *f, const struct fab_routes *r, unsigned s, unsigned n, char *buf)
{
	const uint16_t *ports;
	unsigned k = fab_next_ports(f, r, s, n, &ports);
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < k; i++)
		len += (size_t)sprintf(buf + len, "%s%s", i ? "," : "",
				       fabric_peer_name(f, &f->ports[f->switches[s].first_port + ports[i]]));
	return buf;
}

/* 4 leaves x 4 hosts, 2 spines: 6 switches, 16 + 8 links, /24 per leaf from 198.18.0.0. */
static void test_leaf_spine_topology(void)
{
	struct fab_spec s = leaf_spine(4, 2, 4);
	struct fabric f;
	struct fab_routes r;
	char ip[16];

	if (!built(&s, &f, &r))
		return;
	CHECK_EQ(f.n_switches, 6);
	CHECK_EQ(f.n_hosts, 16);
	CHECK_EQ(f.n_nics, 16);
	CHECK_EQ(f.n_links, 16 + 8);
	CHECK_EQ(f.switches[0].n_ports, 6);  /* 4 hosts, 2 spines */
	CHECK_EQ(f.switches[4].n_ports, 4);  /* a spine: 4 leaves */
	CHECK(!strcmp(f.switches[4].name, "spine0"));
	CHECK_EQ(f.switches[4].tier, FAB_TIER_SPINE);
	/* h5 is leaf1's second host: 198.18.1.3, gateway .1 */
	CHECK(!strcmp(fabric_ip_str(f.nics[5].ip, ip), "198.18.1.3"));
	CHECK(!strcmp(fabric_ip_str(f.nics[5].gateway, ip), "198.18.1.1"));
	CHECK_EQ(f.nics[5].prefix_len, 24);
	CHECK_EQ(f.nics[5].sw, 1);
	CHECK_EQ(f.nics[5].port, 1);
	CHECK_EQ(f.nics[5].mac[5], 5);
	CHECK(fabric_link_by_name(&f, "leaf2-spine1") >= 0);
	CHECK(fabric_link_by_name(&f, "h5-leaf1") >= 0);
	CHECK(fabs(fabric_oversubscription(&f, 0) - 2.0) < 1e-12); /* 400 Gb/s down, 200 up */
	CHECK(fabric_oversubscription(&f, 4) == 0);               /* a spine has nothing above it */
	/* ports: the links of each end point at each other */
	for (unsigned l = 0; l < f.n_links; l++) {
		const struct fab_link *k = &f.links[l];
		const struct fab_port *a = &f.ports[f.switches[k->sw].first_port + k->port];
		CHECK_EQ(a->link, l);
		CHECK_EQ(a->peer, k->b);
		if (!k->to_nic) {
			const struct fab_port *b = &f.ports[f.switches[k->b].first_port + k->b_port];
			CHECK_EQ(b->peer, k->sw);
			CHECK_EQ(b->peer_port, k->port);
		}
	}
	fab_routes_free(&r);
	fabric_free(&f);
}

/* Routes: a leaf reaches its own hosts on their ports, other leaves' hosts over both spines; a
 * spine reaches every host through that host's leaf. */
static void test_leaf_spine_routes(void)
{
	struct fab_spec s = leaf_spine(4, 2, 4);
	struct fabric f;
	struct fab_routes r;
	char buf[256];

	if (!built(&s, &f, &r))
		return;
	CHECK(!strcmp(next_hops(&f, &r, 0, 2, buf), "h2"));
	CHECK(!strcmp(next_hops(&f, &r, 0, 7, buf), "spine0,spine1"));
	CHECK(!strcmp(next_hops(&f, &r, 4, 7, buf), "leaf1"));
	CHECK(!strcmp(next_hops(&f, &r, 5, 15, buf), "leaf3"));
	CHECK_EQ(r.group[0 * r.n_dst + 1].hops, 2); /* leaf0 to leaf1: spine, leaf */
	CHECK_EQ(r.n_dst, 4);
	fab_routes_free(&r);
	/* spine0 - leaf1 down: leaf0 reaches leaf1 over spine1 only, spine0 over another leaf */
	bool down[24] = { false };
	down[fabric_link_by_name(&f, "leaf1-spine0")] = true;
	CHECK(fabric_routes(&f, down, false, &r, err, sizeof(err)) == 0);
	CHECK(!strcmp(next_hops(&f, &r, 0, 7, buf), "spine1"));
	CHECK(!strcmp(next_hops(&f, &r, 0, 15, buf), "spine0,spine1"));
	CHECK(!strcmp(next_hops(&f, &r, 4, 7, buf), "leaf0,leaf2,leaf3")); /* down to a leaf, back up to spine1 */
	CHECK_EQ(r.group[4 * r.n_dst + 1].hops, 3);
	fab_routes_free(&r);
	/* a host's own link down: its leaf has no route to it, which is allowed only after a failure */
	memset(down, 0, sizeof(down));
	down[fabric_link_by_name(&f, "h5-leaf1")] = true;
	CHECK(fabric_routes(&f, down, true, &r, err, sizeof(err)) == 0);
	const uint16_t *ports;
	CHECK_EQ(fab_next_ports(&f, &r, 1, 5, &ports), 0);
	fab_routes_free(&r);
	/* both uplinks of leaf3 down: the others cannot reach its hosts */
	memset(down, 0, sizeof(down));
	down[fabric_link_by_name(&f, "leaf3-spine0")] = down[fabric_link_by_name(&f, "leaf3-spine1")] = true;
	CHECK(fabric_routes(&f, down, false, &r, err, sizeof(err)) == -1);
	CHECK(strstr(err, "switch leaf3 has no route to h0 (on leaf0)") != NULL);
	CHECK(fabric_routes(&f, down, true, &r, err, sizeof(err)) == 0);
	CHECK_EQ(fab_next_ports(&f, &r, 0, 12, &ports), 0);
	fab_routes_free(&r);
	fabric_free(&f);
}

/* Rail: 4 hosts of 2 NICs, NIC r on leaf r; NIC names HOST-rR; same-rail traffic stays on its
 * leaf, cross-rail goes over the spines. */
static void test_rail(void)
{
	struct fab_spec s;
	struct fabric f;
	struct fab_routes r;
	char buf[256], ip[16];

	fab_spec_defaults(&s);
	s.kind = FAB_RAIL;
	s.hosts = 4;
	s.rails = 2;
	s.spines = 2;
	if (!built(&s, &f, &r))
		return;
	CHECK_EQ(f.n_hosts, 4);
	CHECK_EQ(f.n_nics, 8);
	CHECK_EQ(f.rails, 2);
	CHECK_EQ(f.n_switches, 4);
	CHECK_EQ(f.n_links, 8 + 4);
	int n = fabric_nic_by_name(&f, "h2-r1");
	CHECK(n >= 0);
	if (n >= 0) {
		CHECK_EQ(f.nics[n].host, 2);
		CHECK_EQ(f.nics[n].rail, 1);
		CHECK_EQ(f.nics[n].sw, 1);  /* leaf1: rail 1 */
		CHECK(!strcmp(fabric_ip_str(f.nics[n].ip, ip), "198.18.1.4"));
	}
	/* h0-r0 (nic 0) to h3-r0 (nic 6): leaf0 delivers; h0-r0 to h3-r1 (nic 7): over the spines */
	CHECK(!strcmp(next_hops(&f, &r, 0, 6, buf), "h3-r0"));
	CHECK(!strcmp(next_hops(&f, &r, 0, 7, buf), "spine0,spine1"));
	fab_routes_free(&r);
	fabric_free(&f);
}

/* k = 4 fat-tree: 8 edge, 8 aggregation, 4 core switches, 16 hosts, 48 links; aggregation switch
 * j of a pod goes to cores 2j and 2j+1. */
static void test_fat_tree(void)
{
	struct fab_spec s;
	struct fabric f;
	struct fab_routes r;
	char buf[256];

	fab_spec_defaults(&s);
	s.kind = FAB_FAT_TREE;
	s.k = 4;
	if (!built(&s, &f, &r))
		return;
	CHECK_EQ(f.n_switches, 20);
	CHECK_EQ(f.n_hosts, 16);
	CHECK_EQ(f.n_links, 16 + 16 + 16);
	CHECK(!strcmp(f.switches[8].name, "agg0"));
	CHECK(!strcmp(f.switches[16].name, "core0"));
	CHECK_EQ(f.switches[16].tier, FAB_TIER_CORE);
	for (unsigned sw = 0; sw < 20; sw++)
		CHECK_EQ(f.switches[sw].n_ports, 4); /* k ports everywhere */
	/* h0 on edge0 (pod 0) to h15 on edge7 (pod 3): edge0 -> agg0,agg1; agg1 -> core2,core3;
	 * core2 -> agg7 (pod 3's aggregation switch 1); agg7 -> edge7 */
	CHECK(!strcmp(next_hops(&f, &r, 0, 15, buf), "agg0,agg1"));
	CHECK(!strcmp(next_hops(&f, &r, 9, 15, buf), "core2,core3"));
	CHECK(!strcmp(next_hops(&f, &r, 18, 15, buf), "agg7"));
	CHECK(!strcmp(next_hops(&f, &r, 15, 15, buf), "edge7"));
	/* within a pod: edge0 to edge1's h2 over either aggregation switch, which goes straight down */
	CHECK(!strcmp(next_hops(&f, &r, 0, 2, buf), "agg0,agg1"));
	CHECK(!strcmp(next_hops(&f, &r, 8, 2, buf), "edge1"));
	CHECK_EQ(r.group[0 * r.n_dst + 7].hops, 4);
	fab_routes_free(&r);
	fabric_free(&f);
	s.k = 16; /* 1,024 hosts, 320 switches */
	if (!built(&s, &f, &r))
		return;
	CHECK_EQ(f.n_hosts, 1024);
	CHECK_EQ(f.n_switches, 320);
	CHECK_EQ(f.nics[1023].prefix_len, 24);
	fab_routes_free(&r);
	fabric_free(&f);
}

/* Custom: a triangle s0-s1-s2 with h0 on s0 and h1 on s2 (and h1 dual-homed to s1): shortest
 * paths, tiers from the hosts up, and the errors of a fabric that does not hang together. */
static void test_custom(void)
{
	struct fab_spec s;
	struct fabric f;
	struct fab_routes r;
	struct fab_spec_switch sw[3] = { { .name = "s0" }, { .name = "s1" }, { .name = "s2" } };
	char hosts[2][FAB_NAME_LEN] = { "h0", "h1" };
	struct fab_spec_link links[5] = {
		{ "s0", "h0", 100, 1, 1, 0 }, { "h1", "s2", 100, 1, 1, 0 }, { "s0", "s1", 100, 1, 1, 0 },
		{ "s1", "s2", 100, 1, 2, 0 }, { "s1", "h1", 100, 1, 1, 0 },
	};
	char buf[256];

	fab_spec_defaults(&s);
	s.kind = FAB_CUSTOM;
	s.switches = sw;
	s.n_switches = 3;
	s.host_names = hosts;
	s.n_host_names = 2;
	s.links = links;
	s.n_links = 5;
	if (!built(&s, &f, &r))
		return;
	CHECK_EQ(f.n_nics, 3);       /* h1 has two links: two NICs h1-r0, h1-r1 */
	CHECK_EQ(f.n_links, 6);      /* s1-s2 twice */
	CHECK(fabric_nic_by_name(&f, "h1-r1") >= 0);
	CHECK(fabric_link_by_name(&f, "s1-s2.1") >= 0);
	CHECK_EQ(f.switches[0].tier, FAB_TIER_LEAF);
	CHECK_EQ(f.switches[1].tier, FAB_TIER_LEAF); /* h1-r1 is on s1 */
	/* s0 to h1-r0 (on s2): via s1, which has two parallel links to s2 */
	int n = fabric_nic_by_name(&f, "h1-r0");
	CHECK(!strcmp(next_hops(&f, &r, 0, (unsigned)n, buf), "s1"));
	CHECK(!strcmp(next_hops(&f, &r, 1, (unsigned)n, buf), "s2,s2"));
	fab_routes_free(&r);
	fabric_free(&f);
	/* s1-s2 removed and h1's link to s1 too: s2 is an island */
	s.n_links = 3;
	CHECK(fabric_build(&s, &f, err, sizeof(err)) == 0);
	CHECK(fabric_routes(&f, NULL, false, &r, err, sizeof(err)) == -1);
	CHECK(strstr(err, "has no route to") != NULL);
	fabric_free(&f);
	/* a link to a switch that is not there */
	struct fab_spec_link bad[3] = { { "s0", "h0", 100, 1, 1, 0 }, { "s2", "h1", 100, 1, 1, 0 }, { "s0", "s9", 100, 1, 1, 0 } };
	s.links = bad;
	s.n_links = 3;
	CHECK(fabric_build(&s, &f, err, sizeof(err)) == -1);
	CHECK(strstr(err, "links.[2]: s9 is neither a switch nor a host") != NULL);
	/* a host without a link */
	s.n_links = 1;
	CHECK(fabric_build(&s, &f, err, sizeof(err)) == -1);
	CHECK(strstr(err, "hosts: h1 has no link") != NULL);
}

/* Addresses: /24 blocks while the pool has room, else the longest prefix that holds a leaf;
 * beyond that, an error naming both counts. */
static void test_addresses(void)
{
	struct fab_spec s = leaf_spine(4, 2, 4);
	struct fabric f;
	char ip[16];

	s.pool = 0x0A000000; /* 10.0.0.0/26: 64 addresses, 4 leaves of 4 hosts need /29 each (8) */
	s.pool_len = 26;
	CHECK(fabric_build(&s, &f, err, sizeof(err)) == 0);
	CHECK_EQ(f.nics[0].prefix_len, 29);
	CHECK(!strcmp(fabric_ip_str(f.nics[4].ip, ip), "10.0.0.10")); /* leaf1: 10.0.0.8/29, .9 its gateway */
	CHECK(!strcmp(fabric_ip_str(f.nics[4].gateway, ip), "10.0.0.9"));
	fabric_free(&f);
	s.pool_len = 28; /* 16 addresses: not enough for 4 blocks of 8 */
	CHECK(fabric_build(&s, &f, err, sizeof(err)) == -1);
	CHECK(strstr(err, "subnet: more hosts than addresses: 4 switches with hosts need 4 subnets of /29") != NULL);
	s.pool_len = 15;
	s.subnet_len = 30; /* 4 addresses cannot hold 4 hosts, a gateway, network and broadcast */
	CHECK(fabric_build(&s, &f, err, sizeof(err)) == -1);
	CHECK(strstr(err, "subnet_len: /30 does not hold 4 NICs") != NULL);
	s = leaf_spine(3, 0, 1);
	CHECK(fabric_build(&s, &f, err, sizeof(err)) == -1);
	CHECK(strstr(err, "spines: 3 leaves need at least one spine") != NULL);
}

/* CRC-32 and CRC-16/CCITT: the catalogue's check values over "123456789". */
static void test_crc_check_values(void)
{
	CHECK_EQ(fab_crc32(0, "123456789", 9), 0xCBF43926);       /* CRC-32 (zlib) */
	CHECK_EQ(fab_crc16(0, "123456789", 9), 0x31C3);           /* CRC-16/XMODEM: seed 0 */
	CHECK_EQ(fab_crc16(0xFFFF, "123456789", 9), 0x29B1);      /* CRC-16/CCITT-FALSE: seed 0xFFFF */
	/* the hash's byte layout: fields in network order, src_ip first */
	struct fab_flow_key k = { .src_ip = 0x01020304, .dst_ip = 0x05060708, .sport = 0x090A, .dport = 0x0B0C,
				  .dest_qp = 0x0D0E0F };
	uint8_t bytes[15] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
	struct fab_hash h = { .fn = FAB_HASH_CRC32, .seed = 7, .fields = 0x1F };
	CHECK_EQ(fab_hash(&h, &k), fab_crc32(7, bytes, 15));
	h.fields = FAB_FIELD_DST_IP | FAB_FIELD_DEST_QP;
	uint8_t some[7] = { 5, 6, 7, 8, 13, 14, 15 };
	CHECK_EQ(fab_hash(&h, &k), fab_crc32(7, some, 7));
	h.fn = FAB_HASH_CRC16;
	CHECK_EQ(fab_hash(&h, &k), fab_crc16(7, some, 7));
}

/* fab_member: the hash's bits scaled to n; uniform over members for random flows. */
static void test_member_spread(void)
{
	CHECK_EQ(fab_member(FAB_HASH_CRC32, 0, 4), 0);
	CHECK_EQ(fab_member(FAB_HASH_CRC32, 0xFFFFFFFF, 4), 3);
	CHECK_EQ(fab_member(FAB_HASH_CRC32, 0x80000000, 2), 1);
	CHECK_EQ(fab_member(FAB_HASH_CRC16, 0x7FFF, 2), 0);
	CHECK_EQ(fab_member(FAB_HASH_CRC16, 0xFFFF8000, 2), 1); /* the low 16 bits */
	/* 60,000 random flows over 6 members, both hashes: each member within 4 % of 10,000 */
	for (int fn = 0; fn < 2; fn++) {
		unsigned count[6] = { 0 };
		struct fab_hash h = { .fn = (enum fab_hash_fn)fn, .seed = 0, .fields = FAB_FIELDS_5TUPLE | FAB_FIELD_DEST_QP };
		for (unsigned i = 0; i < 60000; i++) {
			struct fab_flow_key k = { .src_ip = (uint32_t)test_rand(), .dst_ip = (uint32_t)test_rand(),
						  .sport = (uint16_t)test_rand(), .dport = 4791,
						  .dest_qp = (uint32_t)test_rand() & 0xFFFFFF };
			count[fab_member(h.fn, fab_hash(&h, &k), 6)]++;
		}
		for (unsigned m = 0; m < 6; m++)
			CHECK(count[m] > 9600 && count[m] < 10400);
	}
}

/* Polarisation on the k = 4 fat-tree: with one function and seed everywhere, the flows an edge
 * switch sent to aggregation switch j all pick member j again at that switch, so of the four
 * cores only core0 (agg0's first) and core3 (agg1's second) carry traffic; a seed per switch
 * uses all four. Flows from pod 0 to pod 3, many source ports. */
static unsigned cores_used(struct fabric *f, struct fab_routes *r, bool seed_per_switch)
{
	unsigned used = 0;
	double load[4] = { 0 };
	struct fab_tracer t;
	struct fab_hop hops[32];

	for (unsigned s = 0; s < f->n_switches; s++)
		f->switches[s].lb.hash.seed = seed_per_switch ? 0x1000193u * (s + 1) : 0;
	CHECK(fab_tracer_init(&t, f, r) == 0);
	for (unsigned i = 0; i < 400; i++) {
		unsigned src = i % 4, dst = 12 + (i / 4) % 4;
		struct fab_flow_key k = { .src_ip = f->nics[src].ip, .dst_ip = f->nics[dst].ip,
					  .sport = (uint16_t)(0xC000 + i * 7), .dport = 4791, .dest_qp = 0x100 + i };
		int n = fab_flow_links(&t, src, dst, &k, hops, 32);
		CHECK_EQ(n, 6); /* NIC, edge, agg, core, agg, edge, NIC: six links */
		for (int h = 0; h < n; h++) {
			const struct fab_link *l = &f->links[hops[h].dlink / 2];
			if (l->tier == FAB_TIER_SPINE && hops[h].dlink % 2 == 0) /* agg -> core */
				load[l->b - 16] += hops[h].share;
		}
	}
	fab_tracer_free(&t);
	for (unsigned c = 0; c < 4; c++)
		used += load[c] > 0;
	if (!seed_per_switch)
		CHECK(load[1] == 0 && load[2] == 0 && load[0] > 0 && load[3] > 0);
	return used;
}

static void test_polarisation(void)
{
	struct fab_spec s;
	struct fabric f;
	struct fab_routes r;

	fab_spec_defaults(&s);
	s.kind = FAB_FAT_TREE;
	s.k = 4;
	if (!built(&s, &f, &r))
		return;
	CHECK_EQ(cores_used(&f, &r, false), 2);
	CHECK_EQ(cores_used(&f, &r, true), 4);
	fab_routes_free(&r);
	fabric_free(&f);
}

/* Flowlets: frames closer than the gap stay on their port whatever the load; after a gap the
 * flow moves to the least loaded port. Spray: every port about as often. ECMP: the hash's. */
static void test_load_balancing(void)
{
	static struct fab_lb_state st;
	struct fab_lb_opts o = { .lb = FAB_LB_FLOWLET, .hash = { .fn = FAB_HASH_CRC32, .fields = FAB_FIELDS_5TUPLE }, .flowlet_gap_ns = 1000 };
	uint16_t ports[3] = { 4, 5, 6 };
	uint64_t bytes[8] = { 0 };
	unsigned hits[8] = { 0 };

	fab_lb_init(&st, 1);
	bytes[4] = 100, bytes[5] = 50, bytes[6] = 200;
	CHECK_EQ(fab_lb_pick(&st, &o, 0x12345678, ports, 3, 10000, bytes), 5);  /* new: least loaded */
	bytes[5] = 1000;
	CHECK_EQ(fab_lb_pick(&st, &o, 0x12345678, ports, 3, 10900, bytes), 5);  /* 900 ns later: same flowlet */
	CHECK_EQ(fab_lb_pick(&st, &o, 0x12345678, ports, 3, 11800, bytes), 5);  /* gaps of 900: still */
	CHECK_EQ(fab_lb_pick(&st, &o, 0x12345678, ports, 3, 12800, bytes), 4);  /* a 1,000 ns gap: a new flowlet */
	CHECK_EQ(st.flowlets, 2);
	uint16_t two[2] = { 5, 6 }; /* port 4 left the group (a route change): a new flowlet at once */
	CHECK_EQ(fab_lb_pick(&st, &o, 0x12345678, two, 2, 12900, bytes), 6);
	o.lb = FAB_LB_SPRAY;
	for (unsigned i = 0; i < 30000; i++)
		hits[fab_lb_pick(&st, &o, 0x12345678, ports, 3, i, bytes)]++;
	for (unsigned p = 4; p < 7; p++)
		CHECK(hits[p] > 9500 && hits[p] < 10500);
	o.lb = FAB_LB_ECMP;
	CHECK_EQ(fab_lb_pick(&st, &o, 0xC0000000, ports, 3, 0, bytes), ports[fab_member(FAB_HASH_CRC32, 0xC0000000, 3)]);
	CHECK_EQ(fab_lb_pick(&st, &o, 0xC0000000, ports, 1, 0, bytes), 4);
}

/* Patterns on 6 hosts: counts, the permutation a derangement and the same for the same seed,
 * rails, and the errors. */
static void test_patterns(void)
{
	struct fab_spec s = leaf_spine(3, 1, 2);
	struct fabric f;
	static struct fab_pattern p;
	struct fab_pair out[64], again[64];
	unsigned some[3] = { 1, 3, 5 };

	CHECK(fabric_build(&s, &f, err, sizeof(err)) == 0);
	memset(&p, 0, sizeof(p));
	p.rail = -1;
	p.kind = FAB_PAT_ALL_TO_ALL;
	CHECK_EQ(fab_pattern_pairs(&f, &p, out, 64, err, sizeof(err)), 30);
	p.kind = FAB_PAT_RING;
	CHECK_EQ(fab_pattern_pairs(&f, &p, out, 64, err, sizeof(err)), 6);
	CHECK(out[5].src == 5 && out[5].dst == 0);
	p.kind = FAB_PAT_INCAST;
	p.dst = 2;
	CHECK_EQ(fab_pattern_pairs(&f, &p, out, 64, err, sizeof(err)), 5);
	for (unsigned i = 0; i < 5; i++)
		CHECK(out[i].dst == 2 && out[i].src != 2);
	p.hosts = some;
	p.n_hosts = 3;
	CHECK_EQ(fab_pattern_pairs(&f, &p, out, 64, err, sizeof(err)), -1); /* host 2 does not take part */
	CHECK(strstr(err, "dst: h2 is not one of the hosts") != NULL);
	p.dst = 3;
	CHECK_EQ(fab_pattern_pairs(&f, &p, out, 64, err, sizeof(err)), 2);
	p.hosts = NULL;
	p.kind = FAB_PAT_PERMUTATION;
	for (uint64_t seed = 1; seed < 50; seed++) {
		bool to[6] = { false };
		p.seed = seed;
		CHECK_EQ(fab_pattern_pairs(&f, &p, out, 64, err, sizeof(err)), 6);
		for (unsigned i = 0; i < 6; i++) {
			CHECK(out[i].src == i && out[i].dst != i && !to[out[i].dst]);
			to[out[i].dst] = true;
		}
		CHECK_EQ(fab_pattern_pairs(&f, &p, again, 64, err, sizeof(err)), 6);
		CHECK(!memcmp(out, again, sizeof(out[0]) * 6));
	}
	p.kind = FAB_PAT_ALL_TO_ALL;
	CHECK_EQ(fab_pattern_pairs(&f, &p, out, 20, err, sizeof(err)), -1);
	CHECK(strstr(err, "more than 20 NIC pairs") != NULL);
	fabric_free(&f);
	/* rails: 3 hosts x 2 NICs, a ring on every rail is 6 NIC pairs, on rail 1 three */
	fab_spec_defaults(&s);
	s.kind = FAB_RAIL;
	s.hosts = 3;
	s.rails = 2;
	s.spines = 1;
	CHECK(fabric_build(&s, &f, err, sizeof(err)) == 0);
	p.kind = FAB_PAT_RING;
	CHECK_EQ(fab_pattern_pairs(&f, &p, out, 64, err, sizeof(err)), 6);
	p.rail = 1;
	CHECK_EQ(fab_pattern_pairs(&f, &p, out, 64, err, sizeof(err)), 3);
	CHECK(out[0].src == 1 && out[0].dst == 3); /* h0-r1 to h1-r1 */
	fabric_free(&f);
}

/* Max-min by hand. One link of 10 and two flows: 5 each. Links l1 = 10, l2 = 20; A crosses both,
 * B l1, C l2: A and B share l1 (5 each), C gets what A leaves of l2 (15). A flow split in halves
 * over two links of 10 beside a flow alone on the first: the split flow x, the other y; link 1:
 * x/2 + y = 10, link 2: x/2 <= 10; progressive filling stops at x = y = 20/3 on link 1, and the
 * split flow cannot grow past it (it needs link 1 too). A demand caps a flow below its share. */
static void test_maxmin(void)
{
	double cap[2] = { 10, 20 }, rate[3], demand[3] = { 2, 1e9, 1e9 };
	struct fab_hop one[2] = { { 0, 1 }, { 0, 1 } };
	uint32_t first2[3] = { 0, 1, 2 };
	struct fab_hop abc[4] = { { 0, 1 }, { 1, 1 }, { 0, 1 }, { 1, 1 } };
	uint32_t first3[4] = { 0, 2, 3, 4 };
	struct fab_hop split[3] = { { 0, 0.5 }, { 1, 0.5 }, { 0, 1 } };
	uint32_t first_s[3] = { 0, 2, 3 };
	double cap10[2] = { 10, 10 };

	CHECK(fab_maxmin(2, cap, 2, first2, one, NULL, rate) == 0);
	CHECK(fabs(rate[0] - 5) < 1e-9 && fabs(rate[1] - 5) < 1e-9);
	CHECK(fab_maxmin(2, cap, 3, first3, abc, NULL, rate) == 0);
	CHECK(fabs(rate[0] - 5) < 1e-9 && fabs(rate[1] - 5) < 1e-9 && fabs(rate[2] - 15) < 1e-9);
	CHECK(fab_maxmin(2, cap10, 2, first_s, split, NULL, rate) == 0);
	CHECK(fabs(rate[0] - 20.0 / 3) < 1e-9 && fabs(rate[1] - 20.0 / 3) < 1e-9);
	CHECK(fab_maxmin(2, cap, 3, first3, abc, demand, rate) == 0);
	CHECK(fabs(rate[0] - 2) < 1e-9 && fabs(rate[1] - 8) < 1e-9 && fabs(rate[2] - 18) < 1e-9);
}

/* JFI (x) = (sum x)^2 / (n sum x^2); MMR = max / mean. */
static void test_jfi_mmr(void)
{
	double even[4] = { 5, 5, 5, 5 }, one[4] = { 8, 0, 0, 0 }, mix[3] = { 1, 2, 3 };

	CHECK(fabs(fab_jfi(even, 4) - 1) < 1e-12);
	CHECK(fabs(fab_jfi(one, 4) - 0.25) < 1e-12);
	CHECK(fabs(fab_jfi(mix, 3) - 36.0 / 42) < 1e-12);   /* 6^2 / (3 x 14) */
	CHECK(fabs(fab_mmr(even, 4) - 1) < 1e-12);
	CHECK(fabs(fab_mmr(one, 4) - 4) < 1e-12);
	CHECK(fabs(fab_mmr(mix, 3) - 1.5) < 1e-12);         /* 3 / 2 */
	CHECK(fab_mmr(even, 0) == 0 && fab_jfi(even, 0) == 1);
}

/* A flow on a leaf-spine with every switch spraying: half over each spine, all of it on the
 * destination's downlink. */
static void test_spray_path(void)
{
	struct fab_spec s = leaf_spine(2, 2, 1);
	struct fabric f;
	struct fab_routes r;
	struct fab_tracer t;
	struct fab_hop hops[16];
	struct fab_flow_key k = { 0 };

	s.lb.lb = FAB_LB_SPRAY;
	if (!built(&s, &f, &r))
		return;
	CHECK(fab_tracer_init(&t, &f, &r) == 0);
	int n = fab_flow_links(&t, 0, 1, &k, hops, 16);
	CHECK_EQ(n, 6); /* h0->leaf0, leaf0->spine0, leaf0->spine1, spine0->leaf1, spine1->leaf1, leaf1->h1 */
	double to_h1 = 0, up = 0;
	for (int h = 0; h < n; h++) {
		if (f.links[hops[h].dlink / 2].tier == FAB_TIER_LEAF && hops[h].dlink % 2 == 0) {
			CHECK(fabs(hops[h].share - 0.5) < 1e-12);
			up += hops[h].share;
		}
		if (hops[h].dlink == 2 * f.nics[1].link)
			to_h1 += hops[h].share;
	}
	CHECK(fabs(up - 1) < 1e-12 && fabs(to_h1 - 1) < 1e-12);
	CHECK_EQ(fab_flow_links(&t, 0, 1, &k, hops, 3), -1); /* no room: an error, not a cut path */
	fab_tracer_free(&t);
	fab_routes_free(&r);
	fabric_free(&f);
}

int main(void)
{
	RUN(test_leaf_spine_topology);
	RUN(test_leaf_spine_routes);
	RUN(test_rail);
	RUN(test_fat_tree);
	RUN(test_custom);
	RUN(test_addresses);
	RUN(test_crc_check_values);
	RUN(test_member_spread);
	RUN(test_polarisation);
	RUN(test_load_balancing);
	RUN(test_patterns);
	RUN(test_maxmin);
	RUN(test_jfi_mmr);
	RUN(test_spray_path);
	return testlib_finish("test_fabric");
}

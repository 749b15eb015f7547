/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The virtual fabric's description (docs/fabric.md): the switches, the hosts and their NICs, the
 * links between them, their addresses, and the routes each switch computes from the topology.
 * Plain C on libc, no EAL and no libconfig, so that the engine's lab, roce-ccsim and roce-fabric
 * build on one model; the `fabric` group of a file is read into a struct fab_spec by
 * config/config_fabric.h.
 *
 *   struct fab_spec   what the file says: a kind and its sizes, or the switches and links listed
 *       | fabric_build()
 *   struct fabric     switches, their ports, the links, the hosts' NICs with addresses and MACs
 *       | fabric_routes()
 *   struct fab_routes per switch and destination NIC: the ports of the equal-cost next hops
 *       | fab_hash() + fab_member() (ECMP), fab_lb.h (flowlet, spray)
 *   one egress port
 *
 * Every index here is a position in the fabric's arrays (switch s, NIC n, link l); a switch's
 * ports are numbered from 0 locally, their entries are ports[first_port + local].
 */
#ifndef ROCE_FABRIC_H
#define ROCE_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FAB_NAME_LEN 32
#define FAB_MAX_SWITCHES 4096
#define FAB_MAX_NICS 65536
#define FAB_MAX_RAILS 16             /* NICs per host */
#define FAB_MAX_SWITCH_PORTS 512
#define FAB_MAX_LINKS (4 * FAB_MAX_NICS)
/* The routing tables: a group per (switch, destination subnet), up to every port of a switch in
 * a group. 2^24 groups and 2^25 members (96 MB at most): a k = 32 fat-tree (8,192 hosts) fits. */
#define FAB_MAX_ROUTE_GROUPS (1u << 24)
#define FAB_MAX_ROUTE_MEMBERS (1u << 25)
#define FAB_DEFAULT_POOL 0xC6120000u /* 198.18.0.0/15: RFC 2544's benchmark range (RFC 6815) */
#define FAB_DEFAULT_POOL_LEN 15

enum fab_kind { FAB_LEAF_SPINE, FAB_RAIL, FAB_FAT_TREE, FAB_CUSTOM };
/* Tiers, from the hosts up: what a link joins, or where a switch stands. */
enum fab_tier { FAB_TIER_HOST, FAB_TIER_LEAF, FAB_TIER_SPINE, FAB_TIER_CORE, FAB_TIERS };

/* ---- load balancing among equal-cost next hops ------------------------------------------------ */

enum fab_lb { FAB_LB_ECMP, FAB_LB_FLOWLET, FAB_LB_SPRAY };
enum fab_hash_fn { FAB_HASH_CRC32, FAB_HASH_CRC16 };
/* The header fields an ECMP hash covers (bits of fab_hash.fields). */
enum {
	FAB_FIELD_SRC_IP = 1 << 0,
	FAB_FIELD_DST_IP = 1 << 1,
	FAB_FIELD_UDP_SPORT = 1 << 2,
	FAB_FIELD_UDP_DPORT = 1 << 3,
	FAB_FIELD_DEST_QP = 1 << 4, /* the BTH's destination QP: "BTH-aware" hashing */
	FAB_FIELDS_5TUPLE = FAB_FIELD_SRC_IP | FAB_FIELD_DST_IP | FAB_FIELD_UDP_SPORT | FAB_FIELD_UDP_DPORT,
};

struct fab_hash {
	enum fab_hash_fn fn;
	uint32_t seed;
	uint8_t fields;
	bool per_switch;             /* each switch's seed: seed + its index x 0x9E3779B1 (less polarisation:
				      * a CRC's seed XORs one constant into every hash, docs/fabric.md) */
};

struct fab_lb_opts {
	enum fab_lb lb;
	struct fab_hash hash;
	uint32_t flowlet_gap_ns;     /* FAB_LB_FLOWLET: a pause this long starts a new flowlet */
};

/* ---- what the file says ------------------------------------------------------------------------ */

/* A switch of a custom fabric, or the override of a built one's switch (by name). */
struct fab_spec_switch {
	char name[FAB_NAME_LEN];
	unsigned tier;               /* custom: FAB_TIER_LEAF.. (what its report rows say) */
	bool has_lb;                 /* an override: lb replaces the fabric's */
	struct fab_lb_opts lb;
	unsigned line;               /* where the file says it (0: nowhere) */
};

/* A link of a custom fabric: a to b, b a switch or a host (a host's links are its NICs, in order). */
struct fab_spec_link {
	char a[FAB_NAME_LEN], b[FAB_NAME_LEN];
	double gbps, delay_us;
	unsigned count;              /* parallel links */
	unsigned line;
};

struct fab_spec {
	enum fab_kind kind;
	/* leaf-spine: leaves x hosts_per_leaf hosts, every leaf wired to every spine by `uplinks`
	 * links; rail: `hosts` hosts of `rails` NICs, NIC r on leaf r, every leaf to every spine;
	 * fat-tree: k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores, k^3/4 hosts */
	unsigned leaves, spines, hosts_per_leaf, hosts, rails, k, uplinks;
	double host_gbps, uplink_gbps, core_gbps;    /* core: fat-tree aggregation-core links */
	double host_delay_us, uplink_delay_us, core_delay_us;
	uint32_t pool;               /* the hosts' addresses: one subnet per switch with hosts */
	uint8_t pool_len;
	uint8_t subnet_len;          /* 0: /24, or the longest prefix that holds a switch's NICs */
	struct fab_lb_opts lb;       /* every switch's, unless overridden */
	struct fab_spec_switch *switches; /* custom: the switches; other kinds: overrides */
	unsigned n_switches;
	char (*host_names)[FAB_NAME_LEN]; /* custom: the hosts */
	unsigned n_host_names;
	struct fab_spec_link *links; /* custom */
	unsigned n_links;
};

void fab_spec_defaults(struct fab_spec *s);
void fab_spec_free(struct fab_spec *s);

/* ---- the fabric built from it --------------------------------------------------------------------- */

struct fab_host {
	char name[FAB_NAME_LEN];
	unsigned first_nic, n_nics;
};

struct fab_nic {
	char name[FAB_NAME_LEN];     /* the host's name, or HOST-rR on hosts with several NICs */
	unsigned host, rail;
	unsigned sw, port;           /* the switch it is cabled to, and that switch's local port */
	unsigned link;
	uint32_t ip, gateway;        /* host order; the gateway is the switch's address in the subnet */
	uint8_t prefix_len;
	uint8_t mac[6];
};

struct fab_port {
	unsigned link;
	bool to_nic;                 /* peer is a NIC index, else a switch index */
	unsigned peer, peer_port;    /* peer_port: the peer switch's local port (switches only) */
	uint8_t mac[6];
};

struct fab_switch {
	char name[FAB_NAME_LEN];
	unsigned tier, pod;          /* pod: fat-tree pods, else 0 */
	unsigned first_port, n_ports;
	uint32_t subnet;             /* of the NICs cabled to it (0 and prefix_len 0: none) */
	uint8_t prefix_len;
	struct fab_lb_opts lb;
};

struct fab_link {
	char name[2 * FAB_NAME_LEN + 12];
	unsigned sw, port;           /* end a: always a switch */
	bool to_nic;                 /* end b: a NIC or another switch */
	unsigned b, b_port;
	unsigned tier;               /* FAB_TIER_HOST: a host's link; LEAF: leaf-spine; SPINE: spine-core */
	double gbps, delay_us;
};

struct fabric {
	enum fab_kind kind;
	unsigned rails;              /* NICs per host (1 but for rail fabrics and custom hosts) */
	struct fab_host *hosts;
	struct fab_nic *nics;
	struct fab_switch *switches;
	struct fab_port *ports;
	struct fab_link *links;
	unsigned n_hosts, n_nics, n_switches, n_ports, n_links;
	uint32_t pool;
	uint8_t pool_len;
};

/* The fabric the spec describes, or -1 with "SETTING: what is wrong (what is allowed)" in err
 * (the caller adds the file and line). Free with fabric_free(). */
int fabric_build(const struct fab_spec *s, struct fabric *f, char *err, size_t errlen);
void fabric_free(struct fabric *f);

int fabric_switch_by_name(const struct fabric *f, const char *name);
int fabric_host_by_name(const struct fabric *f, const char *name);
int fabric_nic_by_name(const struct fabric *f, const char *name);
/* A link by name, or by its ends ("leaf0-spine1": the first between them); -1 when unknown. */
int fabric_link_by_name(const struct fabric *f, const char *name);
/* The far end's name of a switch port. */
const char *fabric_peer_name(const struct fabric *f, const struct fab_port *p);
/* Hosts' bandwidth over uplink bandwidth of switch s (1 at a spine; 0 without uplinks). */
double fabric_oversubscription(const struct fabric *f, unsigned s);
const char *fabric_kind_name(enum fab_kind k);
const char *fabric_tier_name(unsigned tier);
const char *fabric_lb_name(enum fab_lb lb);
/* printf into err (errlen bytes); returns -1, so that `return fab_error(...)` reports and fails. */
int fab_error(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "198.18.1.2" into buf (16 bytes) */
const char *fabric_ip_str(uint32_t ip, char buf[16]);

/* ---- routes --------------------------------------------------------------------------------------- */

/* The next hops of one switch toward one destination switch: ports of equal cost (shortest
 * paths in hops over the links that are up). */
struct fab_group {
	uint32_t first;              /* into members[] */
	uint16_t n;                  /* 0: no route */
	uint16_t hops;               /* switch hops left to the destination switch */
};

struct fab_routes {
	unsigned n_switches, n_dst;  /* n_dst: the switches with NICs */
	int32_t *dst_of_switch;      /* switch -> destination index, -1 without NICs */
	struct fab_group *group;     /* [s * n_dst + d] */
	uint16_t *members;           /* local port numbers */
	unsigned n_members;
	uint16_t *nic_port;          /* [nic]: its switch's port toward it */
	bool *down;                  /* [link]: the link state the routes were computed for */
};

/* Routes over the links not marked in link_down (NULL: all up). A switch that cannot reach a NIC
 * is an error ("switch X has no route to NIC Y") unless allow_unreachable (after a link failed:
 * those frames are lost). Free with fab_routes_free(). */
int fabric_routes(const struct fabric *f, const bool *link_down, bool allow_unreachable, struct fab_routes *r,
		  char *err, size_t errlen);
void fab_routes_free(struct fab_routes *r);

/* The ports switch s may send a frame for NIC nic out of: its own port when the NIC is cabled to
 * it, else the group toward the NIC's switch. Returns how many (0: no route), *ports the first. */
unsigned fab_next_ports(const struct fabric *f, const struct fab_routes *r, unsigned s, unsigned nic,
			const uint16_t **ports);

/* ---- ECMP ------------------------------------------------------------------------------------------ */

/* The fields of a frame the hash may cover, host order. */
struct fab_flow_key {
	uint32_t src_ip, dst_ip;
	uint16_t sport, dport;
	uint32_t dest_qp;            /* 24 bits */
};

/* The hash of the fields h->fields selects, in this order and in network byte order: source IP
 * (4 bytes), destination IP (4), UDP source port (2), UDP destination port (2), BTH destination
 * QP (3). CRC32: IEEE 802.3's CRC-32 of those bytes from the seed (zlib's crc32(seed, key));
 * CRC16: CRC-16/CCITT (polynomial 0x1021, not reflected) from the seed's low 16 bits, as
 * Python's binascii.crc_hqx(key, seed). Table-driven: a byte per table lookup. */
uint32_t fab_hash(const struct fab_hash *h, const struct fab_flow_key *k);

/* The two CRCs alone, over any bytes (the standard check values: tests/unit/test_fabric.c). */
uint32_t fab_crc32(uint32_t seed, const void *buf, unsigned n);
uint16_t fab_crc16(uint16_t seed, const void *buf, unsigned n);

/* The member of n a hash picks: its bits scaled to n (multiply and shift, no division), so that
 * the same function and seed on two tiers pick correlated members (polarisation). */
static inline unsigned fab_member(enum fab_hash_fn fn, uint32_t hash, unsigned n)
{
	return fn == FAB_HASH_CRC16 ? (unsigned)(((uint64_t)(hash & 0xFFFF) * n) >> 16)
				    : (unsigned)(((uint64_t)hash * n) >> 32);
}

/* ---- traffic patterns ------------------------------------------------------------------------------ */

enum fab_pattern_kind { FAB_PAT_PAIRS, FAB_PAT_INCAST, FAB_PAT_ALL_TO_ALL, FAB_PAT_PERMUTATION, FAB_PAT_RING };

struct fab_pair {
	unsigned src, dst;           /* NICs */
};

#define FAB_MAX_PATTERN_PAIRS 4096

struct fab_pattern {
	enum fab_pattern_kind kind;
	unsigned *hosts;             /* the hosts taking part, in order; NULL: every host */
	unsigned n_hosts;
	unsigned dst;                /* incast: the receiving host */
	uint64_t seed;               /* permutation */
	int rail;                    /* -1: NIC r to NIC r on every rail; else that rail only */
	struct { unsigned src, dst; } pairs[FAB_MAX_PATTERN_PAIRS]; /* FAB_PAT_PAIRS: hosts */
	unsigned n_pairs;
};

const char *fab_pattern_name(enum fab_pattern_kind k);
/* The NIC pairs of a pattern (host pairs, then per rail NIC r to NIC r), at most max; returns how
 * many, or -1 with err (a host twice, an incast onto a host not taking part, more than max). */
/* to[i] for i < n: a random permutation of one cycle (Sattolo's shuffle driven by splitmix64 from
 * `seed`), so that nobody maps to itself; the same seed, the same permutation (the fabric's
 * `permutation` pattern and roce-cluster's). */
void fab_permutation(unsigned n, uint64_t seed, unsigned *to);

int fab_pattern_pairs(const struct fabric *f, const struct fab_pattern *p, struct fab_pair *out, unsigned max,
		      char *err, size_t errlen);

#endif

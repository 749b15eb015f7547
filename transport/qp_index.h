/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Finding a QP by (port, QPN), the key every RoCE frame carries (the port it came in on or goes
 * out of, its BTH destination QPN). Two kinds, one key and one hash underneath (rte_hash, a key
 * of port << 24 | QPN):
 *
 * - qp_map: (port, QPN) -> a position in [0, capacity) of a table the caller keeps by position.
 *   Its capacity is fixed when it is made and exactly that many keys fit, whatever their hash.
 *   One writer, which may add keys while it runs: the receiver's QPs of one RX lcore and the lab
 *   switch's flows take a position on their first frame, and a full map refuses the key (counted
 *   by the caller: rx_qp_table_full, flow_table_full). Positions are taken in insertion order.
 *   Other threads may look up only in a map made by qp_map_create_shared.
 *
 * - qp_index: the engine's local QPs and what each role keeps of them (struct qp_roles): the
 *   requester the completer posts ACKs and CNPs to, the RC responder's state, the QP that sends
 *   to it (the notification point's CNPs). Built by the main lcore before the lcores launch and
 *   read-only while they run, so any lcore looks up without a lock. Handed to its users (the
 *   lcores' work areas, the report), never kept at file scope.
 */
#ifndef ROCE_ENGINE_QP_INDEX_H
#define ROCE_ENGINE_QP_INDEX_H

#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_hash.h>

#include "wire.h" /* WIRE_QPN_MASK */

#define QP_INDEX_PORTS 256       /* ports 0..255: the key's top byte */
#define QP_INDEX_QPN_MASK WIRE_QPN_MASK
#define QP_INDEX_MIN_CAPACITY 8  /* rte_hash's least (one bucket) */

struct qp_map;

/* A map with room for `capacity` keys (at least QP_INDEX_MIN_CAPACITY) on NUMA `socket`; `name`
 * must be unique in the process (rte_hash's names are). NULL when out of memory. */
struct qp_map *qp_map_create(const char *name, unsigned capacity, int socket);
/* The same, for a map other threads look up in while its owner adds keys (the receiver's QPs,
 * which telemetry reads while the RX lcore runs): rte_hash's lock-free readers. A plain map's
 * lookup may miss a key the writer is moving between its two buckets, or read a half-written
 * one; this one's lookups retry instead, at the cost of a few atomic loads each. */
struct qp_map *qp_map_create_shared(const char *name, unsigned capacity, int socket);
void qp_map_free(struct qp_map *m);
unsigned qp_map_capacity(const struct qp_map *m);
/* The position of (port, qpn), or -1. (Inline below: a frame's lookup.) */
static inline int32_t qp_map_find(const struct qp_map *m, uint16_t port, uint32_t qpn);
/* The position of (port, qpn), taken now when the key is new; -1 when the map is full (or the
 * port is out of range). The owner's lcore only. */
int32_t qp_map_add(struct qp_map *m, uint16_t port, uint32_t qpn);

/* A direct-mapped cache in front of a qp_map, owned by one lcore: flows number their QPs
 * consecutively, so (mostly) one slot per QP, and a hit costs one load and one compare instead of
 * a hash lookup. Slot (QPN + port x 0x9E3779B1) mod size; size a power of two >= the QPs it is
 * for, at most QP_CACHE_MAX. */
struct qp_cache_slot {
	uint32_t key; /* qp_map_key */
	int32_t pos;  /* the map's position; -1: empty */
};
#define QP_CACHE_MAX 65536
struct qp_cache {
	struct qp_cache_slot *slots;
	uint32_t mask;
};

int qp_cache_init(struct qp_cache *c, unsigned qps, int socket);
void qp_cache_free(struct qp_cache *c);
/* The cached position of (port, qpn), or -1: look it up in the map, then qp_cache_fill. */
static inline int32_t qp_cache_find(const struct qp_cache *c, uint16_t port, uint32_t qpn);
static inline void qp_cache_fill(struct qp_cache *c, uint16_t port, uint32_t qpn, int32_t pos);

struct qp_tx;
struct resp_qp;

/* One local QP, by role; each role's builder fills its part (the last one named wins, as a key
 * named twice in the config). */
struct qp_roles {
	struct qp_tx *requester;    /* its sending side: ACKs, NAKs, READ responses, CNPs go to it */
	uint32_t requester_pos;     /* its position in the engine's QPs (its owner's events name it) */
	int32_t peer_qpn;           /* the QPN sending to it (the CNPs' destination), -1: unknown */
	struct resp_qp *responder;  /* its RC responder, or NULL */
};

struct qp_index;

/* An index with room for `capacity` QPs. NULL when out of memory. */
struct qp_index *qp_index_create(unsigned capacity, int socket);
void qp_index_free(struct qp_index *ix);
/* Start-up only: the roles of (port, qpn), empty (no requester, responder or peer) when new.
 * NULL when the index is full. */
struct qp_roles *qp_index_add(struct qp_index *ix, uint16_t port, uint32_t qpn);
/* The roles of (port, qpn), or NULL (none, or no index). (Inline below: a frame's lookup.) */
static inline const struct qp_roles *qp_index_find(const struct qp_index *ix, uint16_t port, uint32_t qpn);

/* ---- the lookups, inline: out of line they cost a frame 3 cycles more than rte_hash_lookup's
 * own 23 (measured), which the index's users did not pay before. Fields: the module's only. -- */

struct qp_map {
	struct rte_hash *hash; /* key: port << 24 | qpn */
	unsigned capacity;
};

struct qp_index {
	struct qp_map *map;
	struct qp_roles *roles; /* by position */
};

static inline uint32_t qp_map_key(uint16_t port, uint32_t qpn) { return (uint32_t)port << 24 | (qpn & QP_INDEX_QPN_MASK); }

static inline int32_t qp_map_find(const struct qp_map *m, uint16_t port, uint32_t qpn)
{
	uint32_t key = qp_map_key(port, qpn);
	int32_t pos;

	if (unlikely(port >= QP_INDEX_PORTS))
		return -1;
	pos = rte_hash_lookup(m->hash, &key);
	return pos >= 0 ? pos : -1;
}

static inline const struct qp_roles *qp_index_find(const struct qp_index *ix, uint16_t port, uint32_t qpn)
{
	int32_t pos;

	if (!ix || (pos = qp_map_find(ix->map, port, qpn)) < 0)
		return NULL;
	return &ix->roles[pos];
}

static inline struct qp_cache_slot *qp_cache_slot(const struct qp_cache *c, uint16_t port, uint32_t qpn)
{
	return &c->slots[(qpn + port * 0x9E3779B1u) & c->mask];
}

static inline int32_t qp_cache_find(const struct qp_cache *c, uint16_t port, uint32_t qpn)
{
	const struct qp_cache_slot *slot = qp_cache_slot(c, port, qpn);

	return slot->key == qp_map_key(port, qpn) ? slot->pos : -1;
}

static inline void qp_cache_fill(struct qp_cache *c, uint16_t port, uint32_t qpn, int32_t pos)
{
	*qp_cache_slot(c, port, qpn) = (struct qp_cache_slot){.key = qp_map_key(port, qpn), .pos = pos};
}

#endif

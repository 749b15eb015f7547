/* SPDX-License-Identifier: BSD-3-Clause */
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_malloc.h>

#include "qp_index.h"

static struct qp_map *map_create(const char *name, unsigned capacity, int socket, uint8_t flags)
{
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = capacity < QP_INDEX_MIN_CAPACITY ? QP_INDEX_MIN_CAPACITY : capacity,
		/* every key up to the capacity must fit: a full bucket chains instead of refusing it */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE | flags,
		.key_len = sizeof(uint32_t),
		.hash_func = rte_jhash,
		.socket_id = socket,
	};
	struct qp_map *m = rte_zmalloc_socket("qp_map", sizeof(*m), 0, socket);

	if (!m)
		return NULL;
	m->capacity = hp.entries;
	m->hash = rte_hash_create(&hp);
	if (!m->hash) {
		rte_free(m);
		return NULL;
	}
	return m;
}

struct qp_map *qp_map_create(const char *name, unsigned capacity, int socket)
{
	return map_create(name, capacity, socket, 0);
}

/* Keys are never deleted, so the lock-free mode's need to know when a deleted key's slot may be
 * reused (RCU) does not arise. */
struct qp_map *qp_map_create_shared(const char *name, unsigned capacity, int socket)
{
	return map_create(name, capacity, socket, RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF);
}

void qp_map_free(struct qp_map *m)
{
	if (!m)
		return;
	rte_hash_free(m->hash);
	rte_free(m);
}

unsigned qp_map_capacity(const struct qp_map *m) { return m->capacity; }

int32_t qp_map_add(struct qp_map *m, uint16_t port, uint32_t qpn)
{
	uint32_t key = qp_map_key(port, qpn);
	int32_t pos;

	if (port >= QP_INDEX_PORTS)
		return -1;
	pos = rte_hash_add_key(m->hash, &key); /* a key already in keeps its position */
	return pos >= 0 ? pos : -1;
}

/* ---- the engine's local QPs ----------------------------------------------------------------- */

struct qp_index *qp_index_create(unsigned capacity, int socket)
{
	struct qp_index *ix = rte_zmalloc_socket("qp_index", sizeof(*ix), 0, socket);

	if (!ix)
		return NULL;
	ix->map = qp_map_create("qp_index", capacity, socket);
	if (ix->map)
		ix->roles = rte_zmalloc_socket("qp_roles", sizeof(struct qp_roles) * qp_map_capacity(ix->map),
					       RTE_CACHE_LINE_SIZE, socket);
	if (!ix->map || !ix->roles) {
		qp_index_free(ix);
		return NULL;
	}
	return ix;
}

void qp_index_free(struct qp_index *ix)
{
	if (!ix)
		return;
	qp_map_free(ix->map);
	rte_free(ix->roles);
	rte_free(ix);
}

struct qp_roles *qp_index_add(struct qp_index *ix, uint16_t port, uint32_t qpn)
{
	int32_t pos = qp_map_find(ix->map, port, qpn);

	if (pos >= 0)
		return &ix->roles[pos];
	pos = qp_map_add(ix->map, port, qpn);
	if (pos < 0)
		return NULL;
	ix->roles[pos] = (struct qp_roles){.peer_qpn = -1};
	return &ix->roles[pos];
}

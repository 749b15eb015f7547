/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <rte_common.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "qp_index.h"

/* rte_hash compares keys of other lengths than its 16, 32, ... bytes with memcmp: for the 4-byte
 * key, one integer compare instead (a frame's lookups are the switch's and the RX path's). */
static int key_differs(const void *a, const void *b, size_t len)
{
	uint32_t x, y;

	(void)len;
	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return x != y;
}

static struct qp_map *map_create(const char *name, unsigned capacity, int socket, uint8_t flags)
{
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = capacity < QP_INDEX_MIN_CAPACITY ? QP_INDEX_MIN_CAPACITY : capacity,
		/* every key up to the capacity must fit: a full bucket chains instead of refusing it */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE | flags,
		.key_len = sizeof(uint32_t),
		.hash_func = rte_hash_crc, /* CRC32 instructions where the CPU has them (SSE4.2, ARMv8) */
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
	rte_hash_set_cmp_func(m->hash, key_differs);
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

int qp_cache_init(struct qp_cache *c, unsigned qps, int socket)
{
	c->mask = rte_align32pow2(RTE_MIN(RTE_MAX(qps, 64u), (unsigned)QP_CACHE_MAX)) - 1;
	c->slots = rte_malloc_socket("qp_cache", sizeof(*c->slots) * (c->mask + 1), RTE_CACHE_LINE_SIZE, socket);
	if (!c->slots)
		return -1;
	for (uint32_t i = 0; i <= c->mask; i++)
		c->slots[i] = (struct qp_cache_slot){.key = 0, .pos = -1};
	return 0;
}

void qp_cache_free(struct qp_cache *c)
{
	rte_free(c->slots);
	c->slots = NULL;
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

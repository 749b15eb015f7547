/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_memzone.h>

#include "mbuf_pool.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

static void free_zone(struct rte_mempool_memhdr *hdr, void *opaque)
{
	(void)hdr;
	rte_memzone_free(opaque);
}

/* The zone's whole pages, written in by the kernel in one call (an old kernel says EINVAL: the
 * pool's writes fault them in instead, as always). */
static void populate(const struct rte_memzone *mz)
{
	const uintptr_t pg = (uintptr_t)getpagesize();
	uintptr_t start = ((uintptr_t)mz->addr + pg - 1) & ~(pg - 1), end = ((uintptr_t)mz->addr + mz->len) & ~(pg - 1);

	if (end > start)
		(void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
}

/* The pool's objects packed in one memory zone, reserved and populated first. */
static int populate_pool(struct rte_mempool *mp, unsigned n)
{
	const size_t obj = mp->header_size + mp->elt_size + mp->trailer_size;
	char name[RTE_MEMZONE_NAMESIZE];
	const struct rte_memzone *mz;
	int added;

	snprintf(name, sizeof(name), "MPP_%s", mp->name);
	mz = rte_memzone_reserve_aligned(name, (size_t)n * obj + RTE_CACHE_LINE_SIZE, mp->socket_id,
					 0, RTE_CACHE_LINE_SIZE);
	if (!mz)
		return -rte_errno;
	populate(mz);
	added = rte_mempool_populate_iova(mp, mz->addr, mz->iova, mz->len, free_zone, (void *)(uintptr_t)mz);
	if (added < 0 || (unsigned)added < n) {
		if (added < 0)
			rte_memzone_free(mz);
		return added < 0 ? added : -ENOMEM;
	}
	return 0;
}

struct rte_mempool *mbuf_pool_create(const char *name, unsigned n, unsigned cache_size, uint16_t data_room_size,
				     int socket_id)
{
	struct rte_pktmbuf_pool_private priv = { .mbuf_data_room_size = data_room_size, .mbuf_priv_size = 0 };
	struct rte_mempool *mp;
	int rc;

	if (rte_eal_has_hugepages() || rte_eal_iova_mode() != RTE_IOVA_VA)
		return rte_pktmbuf_pool_create(name, n, cache_size, 0, data_room_size, socket_id);
	mp = rte_mempool_create_empty(name, n, (unsigned)sizeof(struct rte_mbuf) + data_room_size, cache_size,
				      sizeof(priv), socket_id, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (!mp)
		return NULL;
	if ((rc = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL)) == 0) {
		rte_pktmbuf_pool_init(mp, &priv);
		rc = populate_pool(mp, n);
	}
	if (rc) {
		rte_mempool_free(mp);
		rte_errno = -rc;
		return NULL;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	return mp;
}

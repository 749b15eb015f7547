/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Packet mbuf pools for EAL without hugepages, packed and faulted in at once. There, EAL's memory
 * is 4 KiB pages, and rte_pktmbuf_pool_create keeps every object inside one page (IOVA-contiguous
 * objects): a 2,368-byte mbuf took a page of its own, and the pool's creation faulted each page in
 * as it wrote the object's header. On a virtual machine that was most of a fabric run's start (a
 * page fault costs microseconds there). Here the objects are packed (RTE_MEMPOOL_F_NO_IOVA_CONTIG:
 * with IOVA as VA, as EAL runs without hugepages, an mbuf across two pages is still contiguous in
 * IOVA; the virtual devices copy frames by address anyway), about 40 % fewer pages, and one
 * madvise(MADV_POPULATE_WRITE) over their memory zone makes them in the kernel in one call, about
 * twice as fast as faulting. With hugepages (EAL maps them whole at start-up, and a real NIC's DMA
 * wants its mbufs as DPDK lays them out) this is rte_pktmbuf_pool_create; a kernel without
 * MADV_POPULATE_WRITE (before 5.14) faults the pages in as before.
 */
#ifndef ROCE_PMD_GLUE_MBUF_POOL_H
#define ROCE_PMD_GLUE_MBUF_POOL_H

#include <stdint.h>

struct rte_mempool;

/* rte_pktmbuf_pool_create's arguments (no private area); NULL with rte_errno on failure. */
struct rte_mempool *mbuf_pool_create(const char *name, unsigned n, unsigned cache_size, uint16_t data_room_size,
				     int socket_id);

#endif

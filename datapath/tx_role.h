/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A TX role: a port queue, the QPs it paces and what it keeps between its bursts. Its own header,
 * so that the loop that polls it (lcore.c) and the egress scheduler that may build its bursts
 * (egress.c) both depend on it and not on each other.
 */
#ifndef ROCE_ENGINE_TX_ROLE_H
#define ROCE_ENGINE_TX_ROLE_H

#include <stdbool.h>
#include <stdint.h>

#include "pace_queue.h"

#define ENGINE_BURST 32

struct rte_mempool;
struct rte_mbuf;
struct rte_ring;
struct qp_tx;
struct pfc_pause;
struct pfc_gen;
struct egress;
struct capture_lcore;

struct tx_role {
	uint16_t port;            /* config index */
	uint16_t port_id;         /* DPDK port */
	uint16_t queue;
	struct rte_mempool *pool;  /* the role's own (port_tx_pool_create): raw gets, headers set once */
	bool clean_payload;       /* the pool's payloads stay zeroed (tx_payload.h) */
	/* the role's QPs in the order of their next send times (paced QPs), or pq.heap[0 .. heap_n)
	 * as a plain array (round robin of unpaced QPs; egress scheduling's classes) */
	struct pace_queue pq;
	unsigned n_qps;
	bool unpaced;             /* no QP has a rate: plain round robin over pq.heap[], no ordering */
	unsigned rr;              /* round-robin cursor */
	struct rte_mbuf *pending[ENGINE_BURST]; /* built but refused by the PMD: sent first next time */
	unsigned n_pending, pending_off;
	uint64_t lag_max_fp;      /* a QP further behind than this is not allowed to catch up */
	uint64_t wait_fp;         /* an RC QP whose window is full looks again this much later */
	struct rte_ring *comp_ring; /* completer events for this role's RC QPs */
	struct qp_tx *qps;        /* the engine's QP array (events name QPs by index) */
	uint64_t sched_flag;      /* the port's scheduled-send mbuf flag, when it schedules probes */
	const struct pfc_pause *pause; /* the port's PFC state (NULL: the port does not honour PFC) */
	struct pfc_gen *gen;      /* a PFC frame generator sending from this role, or NULL */
	struct egress *egress;    /* the port's egress scheduling (qos.egress), or NULL */
	uint64_t pending_since_tsc; /* when frames last started waiting in pending[] */
	uint64_t stalled_tsc;     /* total time frames waited there (ping-pong timeouts skip it) */
	struct capture_lcore *cap; /* --capture: the lcore's, or NULL */
	uint64_t mbuf_alloc_fail; /* read by the main lcore */
	uint64_t tx_ring_full;
	uint64_t tx_unsent;       /* frames still refused by the PMD at stop, freed */
};

#endif

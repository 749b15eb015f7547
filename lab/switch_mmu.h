/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The buffer of the virtual lab's switch (docs/virtual-lab.md), as switch ASICs account it: one
 * shared buffer; every packet is charged to its ingress (port, priority) for PFC and to its
 * egress (port, traffic class) queue for admission and ECN. Plain C, no EAL, no allocation: the
 * switch role (lab/switch.c) calls it per packet on one lcore; the unit tests drive it alone.
 *
 * Admission (at enqueue), in order:
 *   1. the shared buffer is full (used + bytes > buffer_bytes): drop;
 *   2. the egress queue is over its threshold: drop (lossy classes) — static: queue_bytes + bytes
 *      > queue_limit; dynamic (alpha > 0): queue_bytes + bytes > alpha · (buffer_bytes − used),
 *      the Broadcom / SONiC dynamic threshold;
 *   3. lossless priorities (pfc_priorities) are never dropped by 2: their ingress (port, priority)
 *      counter may grow past xoff into the headroom; beyond xoff + headroom the packet is dropped
 *      and counted as a headroom overflow (PFC came too late: the headroom is too small).
 * PFC: when an ingress (port, priority) counter of a lossless priority rises above xoff_bytes the
 * port must send XOFF for it (refreshed by the caller while it stays); when it falls to xon_bytes
 * or below, XON. Counters fall at dequeue.
 */
#ifndef ROCE_QOS_SWITCH_MMU_H
#define ROCE_QOS_SWITCH_MMU_H

#include <stdbool.h>
#include <stdint.h>

/* Ports one buffer accounts: the lab's switches have up to 16 (lab/switch.h), roce-ccsim's fabric
 * switches up to 64 (a 1,024-host leaf-spine's leaf: 32 hosts and 16 or more spines). */
#define MMU_MAX_PORTS 64
#define MMU_PRIORITIES 8

struct mmu_params {
	uint64_t buffer_bytes;        /* the shared buffer */
	uint64_t queue_limit;         /* static per-queue threshold (alpha == 0); 0 = the buffer */
	double alpha;                 /* dynamic threshold factor (0 = static); e.g. 1/8 .. 8 */
	uint8_t pfc_priorities;       /* bit n: priority n is lossless (PFC) */
	uint64_t xoff_bytes;          /* per ingress (port, priority) */
	uint64_t xon_bytes;           /* <= xoff_bytes */
	uint64_t headroom_bytes;      /* above xoff, what may still arrive after XOFF */
};

/* Why a packet was refused */
enum mmu_verdict { MMU_ADMIT, MMU_DROP_BUFFER, MMU_DROP_QUEUE, MMU_DROP_HEADROOM };

struct mmu_counters {
	uint64_t admitted, dropped_buffer, dropped_queue, dropped_headroom;
};

struct switch_mmu {
	struct mmu_params p;
	unsigned n_ports;
	uint32_t alpha_q16;                                 /* p.alpha · 2^16, rounded (mmu_init); 0: static */
	uint64_t used, max_used;
	uint64_t queue[MMU_MAX_PORTS][MMU_PRIORITIES];     /* egress (port, tc) bytes */
	uint64_t port_queue[MMU_MAX_PORTS];               /* egress port bytes, every class (flowlets' load) */
	uint64_t max_queue[MMU_MAX_PORTS][MMU_PRIORITIES];
	uint64_t ingress[MMU_MAX_PORTS][MMU_PRIORITIES];   /* ingress (port, priority) bytes */
	uint64_t max_ingress[MMU_MAX_PORTS][MMU_PRIORITIES];
	bool xoff[MMU_MAX_PORTS][MMU_PRIORITIES];          /* XOFF in force toward the ingress port */
	uint64_t xoff_events[MMU_MAX_PORTS][MMU_PRIORITIES], xon_events[MMU_MAX_PORTS][MMU_PRIORITIES];
	struct mmu_counters c;
};

/* NULL when usable, else the name of the bad parameter (why: what is allowed). */
const char *mmu_params_check(const struct mmu_params *p, const char **why);
void mmu_init(struct switch_mmu *m, const struct mmu_params *p, unsigned n_ports);

/* A packet of `bytes` from ingress port `in` with priority `prio`, for egress queue (out, tc).
 * On MMU_ADMIT it is charged; *pfc_change is set when the ingress (in, prio) counter crossed
 * xoff (the caller sends XOFF for prio on port in; see mmu_xoff()). */
enum mmu_verdict mmu_enqueue(struct switch_mmu *m, unsigned in, unsigned prio, unsigned out, unsigned tc,
			     uint32_t bytes, bool *pfc_change);
/* The packet left (out, tc); it had been charged to (in, prio). *pfc_change is set when the
 * ingress counter fell to xon (the caller sends XON). */
void mmu_dequeue(struct switch_mmu *m, unsigned in, unsigned prio, unsigned out, unsigned tc, uint32_t bytes,
		 bool *pfc_change);
/* Whether XOFF is in force toward ingress port `in` for priority `prio`. */
static inline bool mmu_xoff(const struct switch_mmu *m, unsigned in, unsigned prio) { return m->xoff[in][prio]; }
/* The byte limit of every lossy egress queue right now (static, or dynamic with the buffer's use). */
uint64_t mmu_queue_limit(const struct switch_mmu *m);

#endif

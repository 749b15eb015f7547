/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The shared-buffer MMU of the virtual lab's switch (see switch_mmu.h). The rules, as implemented:
 *
 * Admission of `bytes` from ingress (in, prio) to egress queue (out, tc), in this order:
 *   1. used + bytes > buffer_bytes: MMU_DROP_BUFFER, lossy or lossless alike (the only way the
 *      shared buffer refuses a lossless packet: with PFC sized right it does not happen);
 *   2. lossy prio only: queue[out][tc] + bytes > the queue limit: MMU_DROP_QUEUE. The limit is
 *      queue_limit (0: buffer_bytes) when alpha == 0, else floor(alpha · (buffer_bytes − used))
 *      with `used` as it is before this packet (Broadcom / SONiC dynamic threshold), alpha in
 *      Q16 so that no floating point runs per packet;
 *   3. lossless prio only: ingress[in][prio] + bytes > xoff_bytes + headroom_bytes:
 *      MMU_DROP_HEADROOM (the XOFF came too late for the peer, or the headroom is too small).
 *      A lossless packet is never refused by the queue threshold (rule 2): PFC holds it back.
 * Whether a priority is lossless is decided by its ingress priority `prio` (pfc_priorities), not
 * by the egress class `tc`. When both 1 and 3 apply, the verdict is MMU_DROP_BUFFER.
 *
 * An admitted packet is charged to used, queue[out][tc] and ingress[in][prio] (lossy priorities
 * too, for the report; only lossless ones drive PFC), and the maxima are updated.
 *
 * PFC hysteresis per ingress (port, lossless priority):
 *   XOFF when, after charging at enqueue, ingress > xoff_bytes (and XOFF was not in force);
 *   XON when, after a dequeue, ingress <= xon_bytes (and XOFF was in force).
 * *pfc_change is true exactly on these two transitions (once each; refreshing a standing XOFF
 * is the caller's, from mmu_xoff()) and false otherwise, drops included; it may be NULL.
 * A packet that would jump from below xoff to beyond xoff + headroom in one go (headroom smaller
 * than the packet) is dropped by rule 3 without raising XOFF: the counter stays at or below xoff.
 *
 * Ports, priorities and classes are the caller's to keep in range (asserted in debug builds), and
 * every dequeue must mirror an admitted enqueue with the same (in, prio, out, tc, bytes).
 */
#include <assert.h>
#include <string.h>

#include "switch_mmu.h"

/* Bounds that keep the per-packet integer arithmetic exact: alpha_q16 <= 2^22, the free buffer
 * <= 2^40, their product < 2^63; used + bytes < 2^41; xoff + headroom <= 2^41. */
#define MMU_BUFFER_MAX (1ULL << 40)
#define MMU_ALPHA_MAX 64.0
#define MMU_ALPHA_MIN (1.0 / 65536) /* the smallest alpha Q16 can hold */

#define BAD(name, text)                                                                            \
	do {                                                                                       \
		if (why)                                                                           \
			*why = (text);                                                             \
		return (name);                                                                     \
	} while (0)

const char *mmu_params_check(const struct mmu_params *p, const char **why)
{
	if (p->buffer_bytes < 1 || p->buffer_bytes > MMU_BUFFER_MAX)
		BAD("buffer_bytes", "1 .. 2^40");
	if (p->queue_limit > p->buffer_bytes)
		BAD("queue_limit", "<= buffer_bytes (0: the buffer)");
	if (!(p->alpha == 0 || (p->alpha >= MMU_ALPHA_MIN && p->alpha <= MMU_ALPHA_MAX)))
		BAD("alpha", "0 (static threshold) or [1/65536, 64]");
	if (p->xon_bytes > p->xoff_bytes)
		BAD("xon_bytes", "<= xoff_bytes");
	if (p->pfc_priorities && p->xoff_bytes < 1)
		BAD("xoff_bytes", "> 0 when pfc_priorities is set");
	if (p->xoff_bytes > p->buffer_bytes)
		BAD("xoff_bytes", "<= buffer_bytes");
	if (p->headroom_bytes > p->buffer_bytes)
		BAD("headroom_bytes", "<= buffer_bytes");
	return NULL;
}

#undef BAD

void mmu_init(struct switch_mmu *m, const struct mmu_params *p, unsigned n_ports)
{
	assert(n_ports <= MMU_MAX_PORTS);
	memset(m, 0, sizeof(*m));
	m->p = *p;
	m->n_ports = n_ports;
	/* the one floating-point step: alpha to Q16, rounded to nearest (0.5 and 1/8 are exact) */
	m->alpha_q16 = p->alpha > 0 ? (uint32_t)(p->alpha * 65536.0 + 0.5) : 0;
}

uint64_t mmu_queue_limit(const struct switch_mmu *m)
{
	if (m->alpha_q16)
		return (m->alpha_q16 * (m->p.buffer_bytes - m->used)) >> 16;
	return m->p.queue_limit ? m->p.queue_limit : m->p.buffer_bytes;
}

static inline bool lossless(const struct switch_mmu *m, unsigned prio) { return m->p.pfc_priorities >> prio & 1; }

enum mmu_verdict mmu_enqueue(struct switch_mmu *m, unsigned in, unsigned prio, unsigned out, unsigned tc,
			     uint32_t bytes, bool *pfc_change)
{
	bool pfc = lossless(m, prio), change = false;
	enum mmu_verdict v = MMU_ADMIT;

	assert(in < m->n_ports && out < m->n_ports && prio < MMU_PRIORITIES && tc < MMU_PRIORITIES);
	if (m->used + bytes > m->p.buffer_bytes) {
		v = MMU_DROP_BUFFER;
		m->c.dropped_buffer++;
	} else if (!pfc && m->queue[out][tc] + bytes > mmu_queue_limit(m)) {
		v = MMU_DROP_QUEUE;
		m->c.dropped_queue++;
	} else if (pfc && m->ingress[in][prio] + bytes > m->p.xoff_bytes + m->p.headroom_bytes) {
		v = MMU_DROP_HEADROOM;
		m->c.dropped_headroom++;
	} else {
		m->c.admitted++;
		m->used += bytes;
		m->queue[out][tc] += bytes;
		m->port_queue[out] += bytes;
		m->ingress[in][prio] += bytes;
		if (m->used > m->max_used)
			m->max_used = m->used;
		if (m->queue[out][tc] > m->max_queue[out][tc])
			m->max_queue[out][tc] = m->queue[out][tc];
		if (m->ingress[in][prio] > m->max_ingress[in][prio])
			m->max_ingress[in][prio] = m->ingress[in][prio];
		if (pfc && !m->xoff[in][prio] && m->ingress[in][prio] > m->p.xoff_bytes) {
			m->xoff[in][prio] = true;
			m->xoff_events[in][prio]++;
			change = true;
		}
	}
	if (pfc_change)
		*pfc_change = change;
	return v;
}

void mmu_dequeue(struct switch_mmu *m, unsigned in, unsigned prio, unsigned out, unsigned tc, uint32_t bytes,
		 bool *pfc_change)
{
	bool change = false;

	assert(in < m->n_ports && out < m->n_ports && prio < MMU_PRIORITIES && tc < MMU_PRIORITIES);
	assert(m->used >= bytes && m->queue[out][tc] >= bytes && m->ingress[in][prio] >= bytes);
	m->used -= bytes;
	m->queue[out][tc] -= bytes;
	m->port_queue[out] -= bytes;
	m->ingress[in][prio] -= bytes;
	/* xoff is only ever set for lossless priorities: no need to test pfc_priorities here */
	if (m->xoff[in][prio] && m->ingress[in][prio] <= m->p.xon_bytes) {
		m->xoff[in][prio] = false;
		m->xon_events[in][prio]++;
		change = true;
	}
	if (pfc_change)
		*pfc_change = change;
}

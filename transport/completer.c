/* SPDX-License-Identifier: BSD-3-Clause */
#include <rte_prefetch.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "completer.h"
#include "congestion.h"
#include "inject.h"

#define DRAIN_BURST 64

/* The QPs the RX side posts to: RC requesters get ACKs; QPs with congestion control or injection
 * get CNPs. */
static bool gets_completions(const struct qp_tx *qp)
{
	return qp->group->transport == CFG_RC || qp->cc || qp->inj;
}

unsigned completer_index_need(const struct qp_tx *qps, unsigned n_qps)
{
	unsigned n = 0;

	for (unsigned i = 0; i < n_qps; i++)
		n += gets_completions(&qps[i]);
	return n;
}

int completer_index_build(struct qp_index *ix, struct qp_tx *qps, unsigned n_qps)
{
	for (unsigned i = 0; i < n_qps; i++) {
		struct qp_roles *r;

		if (!gets_completions(&qps[i]))
			continue;
		r = qp_index_add(ix, qps[i].port, qps[i].qpn);
		if (!r)
			return -1;
		r->requester = &qps[i];
		r->requester_pos = i;
	}
	return 0;
}

struct rte_ring *completer_ring_create(const char *name, unsigned size, int socket)
{
	return rte_ring_create_elem(name, sizeof(struct comp_event), size, socket, RING_F_SC_DEQ);
}

/* The AETH syndrome's meaning for the requester. */
static enum comp_kind kind_of(uint8_t syndrome)
{
	if (wire_aeth_is_ack(syndrome))
		return COMP_ACK;
	if (wire_aeth_is_rnr_nak(syndrome))
		return COMP_RNR_NAK;
	return syndrome == WIRE_AETH_NAK_PSN_SEQ_ERR ? COMP_NAK_SEQ : COMP_NAK_FATAL;
}

bool completer_post(const struct qp_index *ix, uint16_t port, const uint8_t *frame, const struct wire_pkt *p)
{
	const struct qp_roles *qp = qp_index_find(ix, port, p->bth.dqpn);
	struct comp_event ev = {.psn = p->bth.psn, .kind = COMP_ACK};

	if (!qp || !qp->requester)
		return false;
	ev.qp = qp->requester_pos;
	if (p->op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_AETH)) {
		ev.syndrome = frame[p->bth_off + p->op->offset[WIRE_EXT_AETH]];
		ev.kind = (uint8_t)kind_of(ev.syndrome);
	}
	ev.read_resp = p->op->oper == WIRE_OPER_READ_RESPONSE;
	/* a READ response MIDDLE/FIRST acknowledges the PSNs before it, the LAST/ONLY its own */
	return rte_ring_enqueue_elem(qp->requester->comp_ring, &ev, sizeof(ev)) == 0;
}

/* The lines of the QP's record its reaction point uses (congestion_prefetch's caller's part): the
 * cc link and the rate it points at. */
static inline void prefetch_cc_lines(const struct qp_tx *qp)
{
	rte_prefetch0(&qp->cc_link);
	rte_prefetch0(&qp->fp_per_byte);
}

bool completer_post_cnp(const struct qp_index *ix, uint16_t port, uint32_t qpn)
{
	const struct qp_roles *qp = qp_index_find(ix, port, qpn);
	struct qp_tx *req = qp ? qp->requester : NULL;
	struct comp_event ev = {.kind = COMP_CNP};

	if (!req)
		return true; /* not ours to react to (counted per receiver QP anyway) */
	if (!req->cc && !req->inj)
		return true;
	ev.qp = qp->requester_pos;
	/* the owner handles it within a loop or so: its records start their way to the cache now */
	if (req->cc) {
		congestion_prefetch(req->cc);
		prefetch_cc_lines(req);
	}
	return rte_ring_enqueue_elem(req->comp_ring, &ev, sizeof(ev)) == 0;
}

/* A CNP reaches the QP's reaction point and its injection's delay measurement. */
static void cnp_arrived(struct qp_tx *qp, uint64_t now_tsc)
{
	if (qp->cc)
		congestion_on_cnp(qp->cc->lcore, qp->cc, now_tsc);
	if (qp->inj)
		inject_on_cnp(qp->inj, now_tsc);
}

void completer_drain(struct rte_ring *r, struct qp_tx *qps, uint64_t now_tsc)
{
	struct comp_event ev[DRAIN_BURST];
	unsigned n = rte_ring_dequeue_burst_elem(r, ev, sizeof(ev[0]), DRAIN_BURST, NULL);

	/* With thousands of QPs their records are out of cache: the burst's misses overlap. */
	for (unsigned i = 0; i < n; i++) {
		rte_prefetch0(&qps[ev[i].qp]);
		rte_prefetch0(&qps[ev[i].qp].cc);
	}
	for (unsigned i = 0; i < n; i++)
		if (ev[i].kind == COMP_CNP) {
			const struct qp_tx *qp = &qps[ev[i].qp];

			if (qp->cc) {
				congestion_prefetch(qp->cc);
				prefetch_cc_lines(qp);
			}
			if (qp->inj)
				rte_prefetch0(qp->inj);
		}
	for (unsigned i = 0; i < n; i++)
		if (ev[i].kind == COMP_CNP)
			cnp_arrived(&qps[ev[i].qp], now_tsc);
		else
			qp_tx_complete(&qps[ev[i].qp], &ev[i], now_tsc);
}

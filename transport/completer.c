/* SPDX-License-Identifier: BSD-3-Clause */
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "completer.h"
#include "congestion.h"
#include "inject.h"

#define DRAIN_BURST 64

static struct rte_hash *index_by_qpn; /* (port << 24 | qpn) -> position; read-only once running */
static uint32_t *qp_of_position;
static struct qp_tx *all_qps;

int completer_index_build(struct qp_tx *qps, unsigned n_qps)
{
	struct rte_hash_parameters hp = {
		.name = "rc_requesters",
		.entries = n_qps < 8 ? 8 : n_qps,
		/* every key must fit: a full bucket chains instead of refusing the key */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
		.key_len = sizeof(uint32_t),
		.hash_func = rte_jhash,
		.socket_id = SOCKET_ID_ANY,
	};

	all_qps = qps;
	index_by_qpn = rte_hash_create(&hp);
	qp_of_position = rte_zmalloc("rc_requester_pos", sizeof(uint32_t) * hp.entries, 0);
	if (!index_by_qpn || !qp_of_position)
		return -1;
	for (unsigned i = 0; i < n_qps; i++) {
		uint32_t key = (uint32_t)qps[i].port << 24 | qps[i].qpn;
		int32_t pos;

		/* RC requesters get ACKs; QPs with congestion control or injection get CNPs */
		if (qps[i].group->transport != CFG_RC && !qps[i].cc && !qps[i].inj)
			continue;
		pos = rte_hash_add_key(index_by_qpn, &key);
		if (pos < 0)
			return -1;
		qp_of_position[pos] = i;
	}
	return 0;
}

void completer_index_free(void)
{
	rte_hash_free(index_by_qpn);
	rte_free(qp_of_position);
	index_by_qpn = NULL;
	qp_of_position = NULL;
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

bool completer_post(uint16_t port, const uint8_t *frame, const struct wire_pkt *p)
{
	uint32_t key = (uint32_t)port << 24 | p->bth.dqpn;
	struct comp_event ev = {.psn = p->bth.psn, .kind = COMP_ACK};
	int32_t pos;

	if (!index_by_qpn || (pos = rte_hash_lookup(index_by_qpn, &key)) < 0)
		return false;
	ev.qp = qp_of_position[pos];
	if (p->op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_AETH)) {
		ev.syndrome = frame[p->bth_off + p->op->offset[WIRE_EXT_AETH]];
		ev.kind = (uint8_t)kind_of(ev.syndrome);
	}
	ev.read_resp = p->op->oper == WIRE_OPER_READ_RESPONSE;
	/* a READ response MIDDLE/FIRST acknowledges the PSNs before it, the LAST/ONLY its own */
	return rte_ring_enqueue_elem(all_qps[ev.qp].comp_ring, &ev, sizeof(ev)) == 0;
}

bool completer_post_cnp(uint16_t port, uint32_t qpn)
{
	uint32_t key = (uint32_t)port << 24 | qpn;
	struct comp_event ev = {.kind = COMP_CNP};
	int32_t pos;

	if (!index_by_qpn || (pos = rte_hash_lookup(index_by_qpn, &key)) < 0)
		return true; /* not ours to react to (counted per receiver QP anyway) */
	ev.qp = qp_of_position[pos];
	if (!all_qps[ev.qp].cc && !all_qps[ev.qp].inj)
		return true;
	/* the owner handles it within a loop or so: its records start their way to the cache now */
	if (all_qps[ev.qp].cc)
		congestion_prefetch(all_qps[ev.qp].cc, &all_qps[ev.qp]);
	return rte_ring_enqueue_elem(all_qps[ev.qp].comp_ring, &ev, sizeof(ev)) == 0;
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

			if (qp->cc)
				congestion_prefetch(qp->cc, qp);
			if (qp->inj)
				rte_prefetch0(qp->inj);
		}
	for (unsigned i = 0; i < n; i++)
		if (ev[i].kind == COMP_CNP)
			cnp_arrived(&qps[ev[i].qp], now_tsc);
		else
			qp_tx_complete(&qps[ev[i].qp], &ev[i], now_tsc);
}

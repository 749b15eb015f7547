/* SPDX-License-Identifier: BSD-3-Clause
 *
 * RC: the requester's message log under the reliability state machine (rc_reliability.h). The
 * state machine decides from an event (the completer's ACK, NAK, READ response) or its timer what
 * is acknowledged and where to send again from; this file does it to the QP: retires the
 * messages an ACK covers (their request -> ACK latency, TIMELY's RTT sample, a collective's
 * completion), rewinds the log to a PSN, puts the QP in error.
 */
#include "clock.h"
#include "congestion.h"
#include "counters.h"
#include "inject.h"
#include "requester_internal.h"

/* Sends again from `psn` on: the logged message that holds it becomes the current one. */
static void rewind_to(struct qp_tx *qp, uint32_t psn)
{
	for (unsigned i = 0; i < qp->log_n; i++) {
		const struct qp_msg *m = log_at(qp, i);
		uint32_t off = wire_psn_offset(psn, m->first_psn);

		if (off >= m->npsn)
			continue;
		qp->x->cur = (uint8_t)i;
		qp->msg_op = m->op;
		qp->msg_len = m->len;
		if (single_request(m->op)) { /* a READ is asked again whole, an atomic is one packet */
			qp->psn = m->first_psn;
			qp->msg_off = 0;
		} else {
			qp->psn = psn;
			qp->msg_off = off * qp->group->ib_mtu;
		}
		qp->in_message = true;
		return;
	}
}

static void qp_error(struct qp_tx *qp)
{
	STAT_ADD(qp->c.errors, 1);
	qp->stopping = true;
	qp->done = true;
}

/* RC latency: from a message's first transmission to the ACK that retires it. */
static void record_ack(struct qp_tx *qp, uint64_t sent_tsc, uint64_t now_tsc)
{
	uint64_t tx_ns = clock_tsc_to_ns(sent_tsc), rx_ns = clock_tsc_to_ns(now_tsc);

	lat_record(qp->lat->ack, (int64_t)(rx_ns - tx_ns));
	lat_sample_put(qp->lat->samples, &(struct lat_sample){.tx_ns = tx_ns, .rx_ns = rx_ns, .flow = qp->lat->flow,
								.port = qp->port, .session = qp->lat->session,
								.kind = LAT_ACK});
}

/* Everything up to and including `psn` is acknowledged (the reliability state moved una past
 * it): retire the messages it covers; a message being sent again that an ACK overtook is not
 * sent further, nor its acknowledged part. */
static void retire_through(struct qp_tx *qp, uint32_t psn, uint64_t now_tsc)
{
	struct qp_tx_cold *x = qp->x;
	unsigned popped = 0;

	while (qp->log_n) {
		struct qp_msg *m = log_at(qp, 0);
		uint32_t last = wire_psn_add(m->first_psn, m->npsn - 1);
		if (wire_psn_before(psn, last))
			break;
		if (qp->lat && qp->lat->ack && m->sent_tsc)
			record_ack(qp, m->sent_tsc, now_tsc);
		if (qp->cc && m->sent_tsc) /* TIMELY's RTT sample */
			congestion_on_rtt(qp->cc->lcore, qp->cc, clock_tsc_to_ns(now_tsc) - clock_tsc_to_ns(m->sent_tsc),
					  now_tsc);
		x->log_head = (uint8_t)((x->log_head + 1) & x->log_mask);
		qp->log_n--;
		popped++;
		STAT_ADD(qp->c.completions, 1);
		if (qp->sh->coll)
			collective_completed(qp->sh->coll, (uint32_t)(qp->c.completions - 1), now_tsc);
	}
	if (x->cur >= popped) {
		x->cur = (uint8_t)(x->cur - popped);
	} else { /* the message being sent again was acknowledged meanwhile */
		x->cur = 0;
		qp->in_message = false;
		qp->psn = x->rel.psn_high;
	}
	if (qp->in_message && wire_psn_before(qp->psn, x->rel.una))
		rewind_to(qp, x->rel.una);
	qp->done = qp->stopping && qp->log_n == 0;
}

bool rc_log_apply(struct qp_tx *qp, const struct rc_rel_actions *a, uint64_t now_tsc)
{
	if (a->what & RC_REL_RETIRE)
		retire_through(qp, a->acked_psn, now_tsc);
	if (a->what & RC_REL_TIMEOUT)
		STAT_ADD(qp->c.timeouts, 1);
	if (a->what & RC_REL_FAIL) {
		qp_error(qp);
		return false;
	}
	if (a->what & RC_REL_RESEND)
		rewind_to(qp, a->resend_psn);
	return true;
}

/* The completer's event, counted, then given to the reliability state machine. */
static void count_event(struct qp_tx *qp, const struct comp_event *ev, uint64_t now_tsc)
{
	switch (ev->kind) {
	case COMP_ACK:
		STAT_ADD(qp->c.acks_rx, 1);
		if (ev->read_resp)
			STAT_ADD(qp->c.read_resp_rx, 1);
		break;
	case COMP_NAK_SEQ:
		STAT_ADD(qp->c.naks_rx, 1);
		if (qp->inj)
			inject_on_nak(qp->inj, now_tsc);
		break;
	case COMP_RNR_NAK:
		STAT_ADD(qp->c.rnr_naks_rx, 1);
		break;
	case COMP_NAK_FATAL:
	default:
		STAT_ADD(qp->c.naks_rx, 1);
		break;
	}
}

void qp_tx_complete(struct qp_tx *qp, const struct comp_event *ev, uint64_t now_tsc)
{
	struct rc_rel_event rev = {.kind = ev->kind, .syndrome = ev->syndrome, .psn = ev->psn};
	struct rc_rel_actions a;

	if (qp->done || qp->sh->transport != CFG_RC) /* only RC QPs have a completer */
		return;
	count_event(qp, ev, now_tsc);
	a = rc_rel_on_event(&qp->x->rel, &qp->sh->rel, &rev, now_tsc);
	rc_log_apply(qp, &a, now_tsc);
}

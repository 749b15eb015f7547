/* SPDX-License-Identifier: BSD-3-Clause
 *
 * RC reliability at the sender (IBA 9.7, the requester's side): which acknowledgements count,
 * when to go back and send again, and from which PSN (go back N), when to wait (RNR NAK), when
 * to give up (retry limit, fatal NAK), when a message may start (the window), which packets
 * carry AckReq. Written as functions of (the QP's reliability state, an event, the time) that
 * return actions; the requester (requester.c) owns the messages and applies the actions to
 * them: it retires the messages an ACK covers, rewinds its message log to a PSN, stops the QP.
 *
 * Plain C, no EAL and no allocation: unit-tested alone (tests/unit/test_rc_reliability.c).
 * Times are TSC cycles on the caller's clock; PSNs are 24-bit (wire.h's PSN arithmetic).
 *
 *   event                        state change                        actions
 *   ACK p (new, within sent)     una = p + 1, retries = 0, progress  RETIRE through p
 *   ACK p (old or beyond sent)   none                                none
 *   NAK PSN sequence error p     as ACK p - 1; retries + 1           RETIRE through p - 1 (if new);
 *                                                                    RESEND from p, or FAIL past
 *                                                                    the retry limit
 *   RNR NAK p, timer code t      no sending until now + table 45 (t)  RESEND from p
 *   other NAK                    none                                FAIL
 *   timer: outstanding and no    retries + 1, progress = now         TIMEOUT; RESEND from una, or
 *   progress for timeout_tsc                                         FAIL past the retry limit
 */
#ifndef ROCE_TRANSPORT_RC_RELIABILITY_H
#define ROCE_TRANSPORT_RC_RELIABILITY_H

#include <stdbool.h>
#include <stdint.h>

#include "wire.h"

/* A flow group's constants. */
struct rc_rel_params {
	uint64_t timeout_tsc;      /* retransmit timer: no progress for longer than this */
	uint64_t tsc_per_us;       /* RNR NAK timer codes are in microseconds */
	uint32_t retry_limit;      /* retries in a row (NAKs, timeouts) beyond which the QP fails */
	uint32_t max_outstanding;  /* messages in flight (sent, not acknowledged) */
};

/* rxe's rule: AckReq on the last packet of a message, and on any packet after more than this
 * many without one, so long messages are acknowledged as they go. */
#define RC_REL_ACKREQ_EVERY 64

/* One QP's state. */
struct rc_rel {
	uint64_t progress_tsc;     /* last time una moved (or a retry started) */
	uint64_t rnr_until_tsc;    /* an RNR NAK's wait ends then */
	uint32_t una;              /* oldest unacknowledged PSN */
	uint32_t psn_high;         /* one past the highest PSN ever sent */
	uint16_t retries;          /* in a row, since una last moved */
	uint16_t since_ackreq;     /* packets sent since the last with AckReq */
};

/* What the responder said, as the completer classified it (the AETH syndrome). */
enum rc_rel_event_kind {
	RC_REL_ACK,       /* ACK, READ response or atomic ACK with PSN p: all through p arrived */
	RC_REL_NAK_SEQ,   /* PSN sequence error: the responder expects p, all before it arrived */
	RC_REL_NAK_FATAL, /* invalid request, remote access or operation error, ...: no recovery */
	RC_REL_RNR_NAK,   /* receiver not ready for p: wait the syndrome's timer, then p again */
	RC_REL_EVENT_COUNT
};
struct rc_rel_event {
	uint8_t kind;     /* enum rc_rel_event_kind */
	uint8_t syndrome; /* the AETH's (RNR NAK: its timer code) */
	uint32_t psn;
};

/* Actions, applied in this order. */
#define RC_REL_RETIRE 0x01  /* everything through acked_psn is acknowledged: retire what it covers */
#define RC_REL_TIMEOUT 0x02 /* the retransmit timer expired (to count) */
#define RC_REL_FAIL 0x04    /* the QP goes to the error state (no RESEND then) */
#define RC_REL_RESEND 0x08  /* go back: send again from resend_psn (nothing, if no message holds it) */
struct rc_rel_actions {
	uint8_t what;         /* RC_REL_* */
	uint32_t acked_psn;   /* RETIRE: the last PSN acknowledged (una - 1) */
	uint32_t resend_psn;  /* RESEND */
};

/* A QP whose first PSN is start_psn, starting at now_tsc (its retransmit timer counts from it). */
void rc_rel_init(struct rc_rel *s, uint32_t start_psn, uint64_t now_tsc);
/* An ACK or NAK from the completer. */
struct rc_rel_actions rc_rel_on_event(struct rc_rel *s, const struct rc_rel_params *p, const struct rc_rel_event *ev,
				      uint64_t now_tsc);
/* The retransmit timer, checked before sending: `outstanding` when messages wait for an ACK. */
struct rc_rel_actions rc_rel_timer_expired(struct rc_rel *s, const struct rc_rel_params *p, uint64_t now_tsc);
static inline struct rc_rel_actions rc_rel_on_timer(struct rc_rel *s, const struct rc_rel_params *p, bool outstanding,
						    uint64_t now_tsc)
{
	/* signed: a QP whose times were moved ahead of now (planning) has not timed out */
	if (!outstanding || (int64_t)(now_tsc - s->progress_tsc) <= (int64_t)p->timeout_tsc)
		return (struct rc_rel_actions){0};
	return rc_rel_timer_expired(s, p, now_tsc);
}
/* Whether an RNR NAK's wait is over. */
static inline bool rc_rel_may_send(const struct rc_rel *s, uint64_t now_tsc) { return s->rnr_until_tsc <= now_tsc; }
/* Whether a new message may start with `in_flight` messages unacknowledged. */
static inline bool rc_rel_window_open(const struct rc_rel_params *p, unsigned in_flight)
{
	return in_flight < p->max_outstanding;
}
/* Per packet, so inline: */
/* A packet with PSN psn went out, the next PSN is next_psn (a READ request takes one PSN per
 * response packet); returns whether it was sent before (a retransmission). */
static inline bool rc_rel_on_sent(struct rc_rel *s, uint32_t psn, uint32_t next_psn)
{
	bool resend = wire_psn_before(psn, s->psn_high);

	if (!wire_psn_before(next_psn, s->psn_high))
		s->psn_high = next_psn & WIRE_PSN_MASK;
	return resend;
}
/* Whether the packet about to go out carries AckReq (`end_of_message`: it is a message's last
 * or only packet). */
static inline bool rc_rel_ackreq(struct rc_rel *s, bool end_of_message)
{
	bool want = ++s->since_ackreq >= RC_REL_ACKREQ_EVERY || end_of_message;

	if (want)
		s->since_ackreq = 0;
	return want;
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The RC sender's reliability state machine: see rc_reliability.h for the table of events,
 * state changes and actions. One handler per event kind, chosen by table.
 */
#include "rc_reliability.h"
#include "wire.h"

void rc_rel_init(struct rc_rel *s, uint32_t start_psn, uint64_t now_tsc)
{
	*s = (struct rc_rel){.progress_tsc = now_tsc, .una = start_psn & WIRE_PSN_MASK,
			     .psn_high = start_psn & WIRE_PSN_MASK};
}

/* Everything through psn arrived. An ACK for what was acknowledged already (a duplicate, or
 * one overtaken by a later ACK) or for what was never sent changes nothing. */
static void acknowledge(struct rc_rel *s, uint32_t psn, uint64_t now_tsc, struct rc_rel_actions *a)
{
	uint32_t next = wire_psn_add(psn, 1);

	if (!wire_psn_before(s->una, next) || wire_psn_before(s->psn_high, next))
		return;
	s->una = next;
	s->retries = 0;
	s->progress_tsc = now_tsc;
	a->what |= RC_REL_RETIRE;
	a->acked_psn = psn & WIRE_PSN_MASK;
}

/* A retry, from psn: it counts against the limit, which, passed, fails the QP. */
static void retry_from(struct rc_rel *s, const struct rc_rel_params *p, uint32_t psn, struct rc_rel_actions *a)
{
	if (++s->retries > p->retry_limit) {
		a->what |= RC_REL_FAIL;
		return;
	}
	a->what |= RC_REL_RESEND;
	a->resend_psn = psn & WIRE_PSN_MASK;
}

static void on_ack(struct rc_rel *s, const struct rc_rel_params *p, const struct rc_rel_event *ev, uint64_t now_tsc,
		   struct rc_rel_actions *a)
{
	(void)p;
	acknowledge(s, ev->psn, now_tsc, a);
}

/* The responder expects ev->psn: everything before it arrived, go back to it (go back N). */
static void on_nak_seq(struct rc_rel *s, const struct rc_rel_params *p, const struct rc_rel_event *ev,
		       uint64_t now_tsc, struct rc_rel_actions *a)
{
	acknowledge(s, wire_psn_sub(ev->psn, 1), now_tsc, a);
	retry_from(s, p, ev->psn, a);
}

/* Receiver not ready: wait the time its timer code says, then send ev->psn again. Not a retry
 * (no RNR retry count is kept). */
static void on_rnr_nak(struct rc_rel *s, const struct rc_rel_params *p, const struct rc_rel_event *ev,
		       uint64_t now_tsc, struct rc_rel_actions *a)
{
	s->rnr_until_tsc = now_tsc + p->tsc_per_us * wire_aeth_rnr_timer_us(ev->syndrome);
	a->what |= RC_REL_RESEND;
	a->resend_psn = ev->psn & WIRE_PSN_MASK;
}

static void on_nak_fatal(struct rc_rel *s, const struct rc_rel_params *p, const struct rc_rel_event *ev,
			 uint64_t now_tsc, struct rc_rel_actions *a)
{
	(void)s, (void)p, (void)ev, (void)now_tsc;
	a->what |= RC_REL_FAIL;
}

typedef void event_handler(struct rc_rel *s, const struct rc_rel_params *p, const struct rc_rel_event *ev,
			   uint64_t now_tsc, struct rc_rel_actions *a);
static event_handler *const handler_of[RC_REL_EVENT_COUNT] = {
	[RC_REL_ACK] = on_ack,
	[RC_REL_NAK_SEQ] = on_nak_seq,
	[RC_REL_NAK_FATAL] = on_nak_fatal,
	[RC_REL_RNR_NAK] = on_rnr_nak,
};

struct rc_rel_actions rc_rel_on_event(struct rc_rel *s, const struct rc_rel_params *p, const struct rc_rel_event *ev,
				      uint64_t now_tsc)
{
	struct rc_rel_actions a = {0};

	/* an unknown kind is a NAK the requester cannot recover from */
	(ev->kind < RC_REL_EVENT_COUNT ? handler_of[ev->kind] : on_nak_fatal)(s, p, ev, now_tsc, &a);
	return a;
}

/* No progress for longer than the timeout with messages outstanding (rc_rel_on_timer). */
struct rc_rel_actions rc_rel_timer_expired(struct rc_rel *s, const struct rc_rel_params *p, uint64_t now_tsc)
{
	struct rc_rel_actions a = {.what = RC_REL_TIMEOUT};

	retry_from(s, p, s->una, &a);
	if (!(a.what & RC_REL_FAIL))
		s->progress_tsc = now_tsc;
	return a;
}

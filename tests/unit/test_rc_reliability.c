/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Unit tests of the RC sender's reliability state machine (transport/rc_reliability.h), without
 * EAL: ACKs new, duplicate, old and beyond what was sent; go back N after a PSN sequence NAK;
 * RNR NAK waits; the retransmit timer and the retry limit; the 24-bit PSN wrap; the window.
 */
#include "rc_reliability.h"
#include "testlib.h"
#include "wire.h"

#define US 1000ull /* TSC cycles per microsecond in these tests (a 1 GHz clock) */
static const struct rc_rel_params params = {
	.timeout_tsc = 100 * US, .tsc_per_us = US, .retry_limit = 3, .max_outstanding = 4};

/* Sends PSNs [from, from + n) one packet each; returns how many were retransmissions. */
static unsigned send_psns(struct rc_rel *s, uint32_t from, unsigned n)
{
	unsigned resent = 0;

	for (unsigned i = 0; i < n; i++)
		resent += rc_rel_on_sent(s, wire_psn_add(from, i), wire_psn_add(from, i + 1));
	return resent;
}

static struct rc_rel_actions event(struct rc_rel *s, uint8_t kind, uint32_t psn, uint8_t syndrome, uint64_t now)
{
	struct rc_rel_event ev = {.kind = kind, .syndrome = syndrome, .psn = psn};
	return rc_rel_on_event(s, &params, &ev, now);
}

static void test_init(void)
{
	struct rc_rel s;

	rc_rel_init(&s, 0x123456, 7);
	CHECK_EQ(s.una, 0x123456);
	CHECK_EQ(s.psn_high, 0x123456);
	CHECK_EQ(s.progress_tsc, 7);
	CHECK_EQ(s.retries, 0);
	CHECK(rc_rel_may_send(&s, 0));
	rc_rel_init(&s, 0x1000005, 0); /* bits above 24 dropped */
	CHECK_EQ(s.una, 5);
}

/* An ACK for PSN p acknowledges everything through p: una = p + 1, the retry count resets and
 * the timer restarts. */
static void test_ack_retires(void)
{
	struct rc_rel s;
	struct rc_rel_actions a;

	rc_rel_init(&s, 100, 0);
	CHECK_EQ(send_psns(&s, 100, 10), 0);
	CHECK_EQ(s.psn_high, 110);
	s.retries = 2;
	a = event(&s, RC_REL_ACK, 104, wire_aeth_ack(WIRE_AETH_CREDITS_INVALID), 50 * US);
	CHECK_EQ(a.what, RC_REL_RETIRE);
	CHECK_EQ(a.acked_psn, 104);
	CHECK_EQ(s.una, 105);
	CHECK_EQ(s.retries, 0);
	CHECK_EQ(s.progress_tsc, 50 * US);
	a = event(&s, RC_REL_ACK, 109, 0, 60 * US); /* the last PSN sent */
	CHECK_EQ(a.what, RC_REL_RETIRE);
	CHECK_EQ(a.acked_psn, 109);
	CHECK_EQ(s.una, 110);
}

/* A duplicate ACK, an ACK older than una, and an ACK for a PSN never sent change nothing. */
static void test_duplicate_and_old_acks_ignored(void)
{
	struct rc_rel s;
	struct rc_rel_actions a;

	rc_rel_init(&s, 0, 0);
	send_psns(&s, 0, 8);
	CHECK_EQ(event(&s, RC_REL_ACK, 5, 0, 10).what, RC_REL_RETIRE);
	s.retries = 1;
	a = event(&s, RC_REL_ACK, 5, 0, 20); /* the same again */
	CHECK_EQ(a.what, 0);
	a = event(&s, RC_REL_ACK, 2, 0, 30); /* overtaken by the later one */
	CHECK_EQ(a.what, 0);
	a = event(&s, RC_REL_ACK, 8, 0, 40); /* PSN 8 was never sent */
	CHECK_EQ(a.what, 0);
	a = event(&s, RC_REL_ACK, 0x800000, 0, 40); /* half the PSN space away */
	CHECK_EQ(a.what, 0);
	CHECK_EQ(s.una, 6);
	CHECK_EQ(s.retries, 1);       /* no progress: the count stays */
	CHECK_EQ(s.progress_tsc, 10); /* nor does the timer restart */
}

/* A PSN sequence NAK carrying p: everything before p arrived, p did not: go back to p and send
 * everything from there again (go back N). */
static void test_go_back_n_after_nak(void)
{
	struct rc_rel s;
	struct rc_rel_actions a;

	rc_rel_init(&s, 10, 0);
	send_psns(&s, 10, 10); /* 10..19 */
	a = event(&s, RC_REL_NAK_SEQ, 15, wire_aeth_nak(WIRE_NAK_PSN_SEQ_ERR), 5 * US);
	CHECK_EQ(a.what, RC_REL_RETIRE | RC_REL_RESEND);
	CHECK_EQ(a.acked_psn, 14);
	CHECK_EQ(a.resend_psn, 15);
	CHECK_EQ(s.una, 15);
	CHECK_EQ(s.retries, 1); /* the progress reset it, the NAK counts one retry */
	CHECK_EQ(s.progress_tsc, 5 * US);
	/* 15..19 go again (retransmissions), then 20 is new */
	CHECK_EQ(send_psns(&s, 15, 5), 5);
	CHECK_EQ(send_psns(&s, 20, 1), 0);
	CHECK_EQ(s.psn_high, 21);
	/* a NAK at una itself: nothing new acknowledged, still a retry */
	a = event(&s, RC_REL_NAK_SEQ, 15, WIRE_AETH_NAK_PSN_SEQ_ERR, 6 * US);
	CHECK_EQ(a.what, RC_REL_RESEND);
	CHECK_EQ(a.resend_psn, 15);
	CHECK_EQ(s.retries, 2);
	CHECK_EQ(s.progress_tsc, 5 * US);
}

/* NAKs without progress count up to the retry limit; one more fails the QP (no resend then). */
static void test_nak_retry_limit(void)
{
	struct rc_rel s;
	struct rc_rel_actions a;

	rc_rel_init(&s, 0, 0);
	send_psns(&s, 0, 4);
	for (unsigned i = 1; i <= params.retry_limit; i++) {
		a = event(&s, RC_REL_NAK_SEQ, 0, WIRE_AETH_NAK_PSN_SEQ_ERR, i);
		CHECK_EQ(a.what, RC_REL_RESEND);
		CHECK_EQ(s.retries, i);
	}
	a = event(&s, RC_REL_NAK_SEQ, 0, WIRE_AETH_NAK_PSN_SEQ_ERR, 10);
	CHECK_EQ(a.what, RC_REL_FAIL);
	/* progress in between starts the count again */
	rc_rel_init(&s, 0, 0);
	send_psns(&s, 0, 8);
	for (uint32_t p = 1; p < 8; p++) {
		a = event(&s, RC_REL_NAK_SEQ, p, WIRE_AETH_NAK_PSN_SEQ_ERR, p);
		CHECK_EQ(a.what, RC_REL_RETIRE | RC_REL_RESEND);
		CHECK_EQ(s.retries, 1);
	}
}

/* An RNR NAK: no sending until its timer (IBA table 45) runs out, then p again; not a retry. */
static void test_rnr_nak_waits(void)
{
	struct rc_rel s;
	struct rc_rel_actions a;
	uint64_t now = 1000 * US;

	rc_rel_init(&s, 0, 0);
	send_psns(&s, 0, 4);
	a = event(&s, RC_REL_RNR_NAK, 2, wire_aeth_rnr_nak(14), now); /* code 14: 1.28 ms */
	CHECK_EQ(a.what, RC_REL_RESEND);
	CHECK_EQ(a.resend_psn, 2);
	CHECK_EQ(s.rnr_until_tsc, now + 1280 * US);
	CHECK(!rc_rel_may_send(&s, now));
	CHECK(!rc_rel_may_send(&s, now + 1280 * US - 1));
	CHECK(rc_rel_may_send(&s, now + 1280 * US));
	CHECK_EQ(s.una, 0); /* an RNR NAK acknowledges nothing */
	CHECK_EQ(s.retries, 0);
	a = event(&s, RC_REL_RNR_NAK, 0, wire_aeth_rnr_nak(0), now); /* code 0: the longest, 655.36 ms */
	CHECK_EQ(s.rnr_until_tsc, now + 655360 * US);
	a = event(&s, RC_REL_RNR_NAK, 0, wire_aeth_rnr_nak(1), now); /* a later NAK replaces the wait */
	CHECK_EQ(s.rnr_until_tsc, now + 10 * US);
}

/* Other NAKs (invalid request, remote access or operation error), and kinds unknown here, fail
 * the QP at once. */
static void test_fatal_naks(void)
{
	static const uint8_t fatal[] = {WIRE_AETH_NAK_INVALID_REQ, WIRE_AETH_NAK_REM_ACCESS_ERR,
					WIRE_AETH_NAK_REM_OP_ERR, WIRE_AETH_NAK_INV_RD_REQ};
	struct rc_rel s;

	for (size_t i = 0; i < sizeof(fatal); i++) {
		rc_rel_init(&s, 0, 0);
		send_psns(&s, 0, 2);
		CHECK_EQ(event(&s, RC_REL_NAK_FATAL, 1, fatal[i], 1).what, RC_REL_FAIL);
		CHECK_EQ(s.una, 0);
	}
	CHECK_EQ(event(&s, RC_REL_EVENT_COUNT, 1, 0, 1).what, RC_REL_FAIL);
	CHECK_EQ(event(&s, 200, 1, 0, 1).what, RC_REL_FAIL);
}

/* With messages outstanding and no progress for longer than timeout_tsc, send again from the
 * oldest unacknowledged PSN; each expiry is a retry, past the limit the QP fails. */
static void test_timeouts_with_retry_count(void)
{
	struct rc_rel s;
	struct rc_rel_actions a;
	uint64_t t = 0;

	rc_rel_init(&s, 50, 0);
	send_psns(&s, 50, 6);
	CHECK_EQ(event(&s, RC_REL_ACK, 51, 0, 0).what, RC_REL_RETIRE);
	CHECK_EQ(rc_rel_on_timer(&s, &params, true, 100 * US).what, 0); /* exactly the timeout: not yet */
	CHECK_EQ(rc_rel_on_timer(&s, &params, false, 500 * US).what, 0); /* nothing outstanding */
	for (unsigned i = 1; i <= params.retry_limit; i++) {
		t += 100 * US + 1;
		a = rc_rel_on_timer(&s, &params, true, t);
		CHECK_EQ(a.what, RC_REL_TIMEOUT | RC_REL_RESEND);
		CHECK_EQ(a.resend_psn, 52);
		CHECK_EQ(s.retries, i);
		CHECK_EQ(s.progress_tsc, t); /* the timer restarts with each retry */
		CHECK_EQ(rc_rel_on_timer(&s, &params, true, t + 100 * US).what, 0);
	}
	t += 100 * US + 1;
	a = rc_rel_on_timer(&s, &params, true, t);
	CHECK_EQ(a.what, RC_REL_TIMEOUT | RC_REL_FAIL);
	/* an ACK between timeouts resets the count */
	rc_rel_init(&s, 0, 0);
	send_psns(&s, 0, 4);
	CHECK_EQ(rc_rel_on_timer(&s, &params, true, 101 * US).what, RC_REL_TIMEOUT | RC_REL_RESEND);
	CHECK_EQ(rc_rel_on_timer(&s, &params, true, 202 * US).what, RC_REL_TIMEOUT | RC_REL_RESEND);
	CHECK_EQ(s.retries, 2);
	CHECK_EQ(event(&s, RC_REL_ACK, 0, 0, 250 * US).what, RC_REL_RETIRE);
	CHECK_EQ(s.retries, 0);
	CHECK_EQ(rc_rel_on_timer(&s, &params, true, 350 * US).what, 0);
	CHECK_EQ(rc_rel_on_timer(&s, &params, true, 351 * US).what, RC_REL_TIMEOUT | RC_REL_RESEND);
	/* a timer moved ahead of now (start-up planning) has not expired */
	rc_rel_init(&s, 0, 1000 * US);
	send_psns(&s, 0, 1);
	CHECK_EQ(rc_rel_on_timer(&s, &params, true, 0).what, 0);
}

/* PSNs wrap at 2^24: ACKs, NAKs and retransmissions across the wrap. */
static void test_psn_wrap(void)
{
	struct rc_rel s;
	struct rc_rel_actions a;

	rc_rel_init(&s, 0xFFFFF0, 0);
	CHECK_EQ(send_psns(&s, 0xFFFFF0, 32), 0); /* 0xFFFFF0 .. 0x00000F */
	CHECK_EQ(s.psn_high, 0x10);
	a = event(&s, RC_REL_ACK, 0xFFFFFF, 0, 1);
	CHECK_EQ(a.what, RC_REL_RETIRE);
	CHECK_EQ(s.una, 0); /* una wrapped */
	a = event(&s, RC_REL_ACK, 0xFFFFF8, 0, 2); /* behind una, across the wrap */
	CHECK_EQ(a.what, 0);
	a = event(&s, RC_REL_NAK_SEQ, 0x000004, WIRE_AETH_NAK_PSN_SEQ_ERR, 3);
	CHECK_EQ(a.what, RC_REL_RETIRE | RC_REL_RESEND);
	CHECK_EQ(a.acked_psn, 3);
	CHECK_EQ(a.resend_psn, 4);
	CHECK_EQ(s.una, 4);
	/* a NAK right at the wrap acknowledges through 0xFFFFFF */
	rc_rel_init(&s, 0xFFFFFE, 0);
	send_psns(&s, 0xFFFFFE, 4);
	a = event(&s, RC_REL_NAK_SEQ, 0, WIRE_AETH_NAK_PSN_SEQ_ERR, 1);
	CHECK_EQ(a.what, RC_REL_RETIRE | RC_REL_RESEND);
	CHECK_EQ(a.acked_psn, 0xFFFFFF);
	CHECK_EQ(s.una, 0);
	CHECK_EQ(send_psns(&s, 0, 2), 2); /* 0, 1 again */
	CHECK_EQ(send_psns(&s, 2, 1), 0);
	CHECK_EQ(s.psn_high, 3);
	/* a READ request takes a PSN per response packet, across the wrap */
	rc_rel_init(&s, 0xFFFFFD, 0);
	CHECK(!rc_rel_on_sent(&s, 0xFFFFFD, wire_psn_add(0xFFFFFD, 5)));
	CHECK_EQ(s.psn_high, 2);
	CHECK_EQ(event(&s, RC_REL_ACK, 1, 0, 1).what, RC_REL_RETIRE);
	CHECK_EQ(s.una, 2);
}

/* A new message may start while fewer than max_outstanding are unacknowledged. */
static void test_window_full_and_empty(void)
{
	CHECK(rc_rel_window_open(&params, 0));
	CHECK(rc_rel_window_open(&params, params.max_outstanding - 1));
	CHECK(!rc_rel_window_open(&params, params.max_outstanding));
	CHECK(!rc_rel_window_open(&params, params.max_outstanding + 1));
	struct rc_rel_params one = params;
	one.max_outstanding = 1;
	CHECK(rc_rel_window_open(&one, 0) && !rc_rel_window_open(&one, 1));
}

/* AckReq on a message's last packet, and after RC_REL_ACKREQ_EVERY packets without one. */
static void test_ackreq(void)
{
	struct rc_rel s;
	unsigned asked = 0;

	rc_rel_init(&s, 0, 0);
	for (unsigned i = 1; i < RC_REL_ACKREQ_EVERY; i++)
		asked += rc_rel_ackreq(&s, false);
	CHECK_EQ(asked, 0);
	CHECK(rc_rel_ackreq(&s, false)); /* the 64th */
	CHECK(!rc_rel_ackreq(&s, false));
	CHECK(rc_rel_ackreq(&s, true)); /* a message's end, and the count starts again */
	for (unsigned i = 1; i < RC_REL_ACKREQ_EVERY; i++)
		asked += rc_rel_ackreq(&s, false);
	CHECK_EQ(asked, 0);
	CHECK(rc_rel_ackreq(&s, false));
}

int main(void)
{
	RUN(test_init);
	RUN(test_ack_retires);
	RUN(test_duplicate_and_old_acks_ignored);
	RUN(test_go_back_n_after_nak);
	RUN(test_nak_retry_limit);
	RUN(test_rnr_nak_waits);
	RUN(test_fatal_naks);
	RUN(test_timeouts_with_retry_count);
	RUN(test_psn_wrap);
	RUN(test_window_full_and_empty);
	RUN(test_ackreq);
	return testlib_finish("test_rc_reliability");
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Egress class choice (datapath/egress.h, egress_pick_class): strict classes first, highest first,
 * then deficit round robin over bytes among the ETS classes (M. Shreedhar and G. Varghese,
 * "Efficient fair queueing using deficit round robin", SIGCOMM 1995). Checked with hand-computed
 * turns and the DRR bound: after k turns a class has sent k quanta, less its deficit, which
 * lies in (-packet, 0] since a turn ends at the first send that takes the deficit to 0 or below. */
#include <stdbool.h>

#include "egress.h"
#include "testlib.h"

#define PKT 1000 /* bytes a send takes off the deficit in these cases */

/* Which classes may send now: bit c. */
struct may_send {
	uint8_t mask;
};

static bool may(const void *ctx, unsigned c)
{
	return ((const struct may_send *)ctx)->mask >> c & 1;
}

/* Classes present with QPs (mask), ETS with quanta in units of EGRESS_QUANTUM_BYTES. */
static void classes(struct egress *eg, uint8_t present, uint8_t strict, const unsigned weight[QOS_PRIORITIES])
{
	memset(eg, 0, sizeof(*eg));
	eg->strict = strict;
	for (unsigned c = 0; c < QOS_PRIORITIES; c++) {
		eg->tc[c].n = present >> c & 1;
		eg->tc[c].quantum = weight[c] * EGRESS_QUANTUM_BYTES;
	}
}

static void strict_highest_first(void)
{
	static const unsigned w[QOS_PRIORITIES] = {1, 1, 1, 1, 1, 1, 1, 1};
	struct egress eg;

	classes(&eg, 0x2a, 0x28, w); /* classes 1, 3, 5 present; 3 and 5 strict */
	CHECK_EQ(egress_pick_class(&eg, may, &(struct may_send){0x2a}), 5);
	CHECK_EQ(egress_pick_class(&eg, may, &(struct may_send){0x0a}), 3);
	/* no strict class can send: the ETS class 1 gets its turn and its quantum */
	CHECK_EQ(egress_pick_class(&eg, may, &(struct may_send){0x02}), 1);
	CHECK_EQ(eg.tc[1].deficit, EGRESS_QUANTUM_BYTES);
	CHECK_EQ(eg.tc[3].deficit, 0); /* strict classes gain no quantum */
	CHECK_EQ(eg.tc[5].deficit, 0);
	CHECK_EQ(egress_pick_class(&eg, may, &(struct may_send){0x00}), (uint64_t)-1);
}

/* Weights 1 and 3, both always sending: class 1 goes first (the turn starts at class 0 with no
 * credit), 13 sends of 1,000 bytes take its 12,288 to -712; then class 0's 4,096 make 5 sends
 * (-904); then class 1 again with 11,576: 12 sends. Over k turns each: k quanta within a packet. */
static void drr_shares_by_weight(void)
{
	static const unsigned w[QOS_PRIORITIES] = {1, 3, 1, 1, 1, 1, 1, 1};
	const struct may_send both = {0x03};
	unsigned turns[QOS_PRIORITIES] = {0}, sends_in_turn[8] = {0}, n_turns = 0;
	uint64_t sent[QOS_PRIORITIES] = {0};
	const unsigned K = 100;
	struct egress eg;
	int last = -1;

	classes(&eg, 0x03, 0, w);
	for (unsigned i = 0; i < 100000; i++) {
		int c = egress_pick_class(&eg, may, &both);

		CHECK(c == 0 || c == 1);
		if (c != last) {
			if (last == 0 && turns[0] == K)
				break;
			turns[c]++;
			n_turns++;
			last = c;
		}
		if (n_turns <= 8)
			sends_in_turn[n_turns - 1]++;
		sent[c] += PKT;
		eg.tc[c].deficit -= PKT;
	}
	CHECK_EQ(sends_in_turn[0], 13);
	CHECK_EQ(sends_in_turn[1], 5);
	CHECK_EQ(sends_in_turn[2], 12);
	CHECK_EQ(turns[0], K);
	CHECK_EQ(turns[1], K);
	CHECK(sent[0] >= (uint64_t)K * 4096 && sent[0] < (uint64_t)K * 4096 + PKT);
	CHECK(sent[1] >= (uint64_t)K * 12288 && sent[1] < (uint64_t)K * 12288 + PKT);
}

/* A class that cannot send when its turn comes keeps no credit (DRR: an empty queue's deficit
 * is reset), so it cannot save up a burst while it is paused. */
static void idle_class_keeps_no_credit(void)
{
	static const unsigned w[QOS_PRIORITIES] = {1, 1, 1, 1, 1, 1, 1, 1};
	struct egress eg;

	classes(&eg, 0x03, 0, w);
	CHECK_EQ(egress_pick_class(&eg, may, &(struct may_send){0x02}), 1);
	eg.tc[1].deficit -= PKT;
	CHECK_EQ(eg.tc[1].deficit, EGRESS_QUANTUM_BYTES - PKT);
	/* class 1 paused: its turn ends with its deficit dropped; class 0 gains its quantum */
	CHECK_EQ(egress_pick_class(&eg, may, &(struct may_send){0x01}), 0);
	CHECK_EQ(eg.tc[1].deficit, 0);
	CHECK_EQ(eg.tc[0].deficit, EGRESS_QUANTUM_BYTES);
	/* nothing can send: -1 after a round; no class kept credit but the one whose turn comes
	 * next, which holds the one quantum of that turn */
	CHECK_EQ(egress_pick_class(&eg, may, &(struct may_send){0x00}), (uint64_t)-1);
	for (unsigned c = 0; c < QOS_PRIORITIES; c++)
		CHECK_EQ(eg.tc[c].deficit, c == eg.cur ? EGRESS_QUANTUM_BYTES : 0);
}

/* A visit sends up to 8 frames, which may take a class several quanta below zero (8 x 1,078
 * bytes: 2.1 quanta; 8 jumbo frames: 18). While it is the only class that can send, the rounds
 * go on until they paid it back: it sends (before, two rounds and -1, and the egress took the
 * busy link for idle and lost its time). Another class that can send has the turns meanwhile. */
static void overdrawn_class_sends_after_paying_back(void)
{
	static const unsigned w[QOS_PRIORITIES] = {1, 1, 1, 1, 1, 1, 1, 1};
	const int64_t q = EGRESS_QUANTUM_BYTES;
	struct egress eg;

	classes(&eg, 0x0a, 0, w); /* classes 1 and 3 */
	eg.cur = 3;
	eg.tc[3].deficit = -3 * q - 1;
	CHECK_EQ(egress_pick_class(&eg, may, &(struct may_send){0x08}), 3); /* class 1 paused */
	CHECK_EQ(eg.tc[3].deficit, q - 1);                                  /* four rounds' quanta */
	eg.tc[3].deficit = -18 * q;                                          /* 8 frames of 9,216 bytes */
	CHECK_EQ(egress_pick_class(&eg, may, &(struct may_send){0x08}), 3);
	CHECK_EQ(eg.tc[3].deficit, q);
	eg.tc[3].deficit = -3 * q - 1;
	CHECK_EQ(egress_pick_class(&eg, may, &(struct may_send){0x0a}), 1); /* both can: class 1's turn */
	CHECK_EQ(eg.tc[1].deficit, q);
}

/* Classes without QPs are passed over and gain nothing; a weight changed while running (the
 * control interface) counts from the class's next turn. */
static void absent_classes_and_new_weights(void)
{
	static const unsigned w[QOS_PRIORITIES] = {1, 1, 1, 1, 1, 1, 1, 1};
	const struct may_send all = {0xff};
	struct egress eg;

	classes(&eg, 0x11, 0, w); /* classes 0 and 4 */
	CHECK_EQ(egress_pick_class(&eg, may, &all), 4);
	for (unsigned c = 1; c < QOS_PRIORITIES; c++)
		if (c != 4)
			CHECK_EQ(eg.tc[c].deficit, 0);
	eg.tc[0].quantum = 2 * EGRESS_QUANTUM_BYTES;
	eg.tc[4].deficit = 0; /* its turn ends */
	CHECK_EQ(egress_pick_class(&eg, may, &all), 0);
	CHECK_EQ(eg.tc[0].deficit, 2 * EGRESS_QUANTUM_BYTES);
}

int main(void)
{
	RUN(strict_highest_first);
	RUN(drr_shares_by_weight);
	RUN(idle_class_keeps_no_credit);
	RUN(absent_classes_and_new_weights);
	RUN(overdrawn_class_sends_after_paying_back);
	return testlib_finish("test_egress");
}

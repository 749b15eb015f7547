/* SPDX-License-Identifier: BSD-3-Clause
 *
 * transport/requester: the frames a QP sends, checked against expectations computed by hand and
 * read back with wire's parser (the RX side's), ICRC included: the opcode sequence of a message
 * segmented by the path MTU, consecutive 24-bit PSNs across the wrap, payload lengths, AckReq on
 * an RC message's last packet; the shapes' fast path against the general path; the RC window, an
 * ACK that retires messages, a NAK that sends again from its PSN. Flow groups come from config
 * texts; mbufs from a small pool, so EAL runs (no hugepages, PCI or shared files).
 */
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "config.h"
#include "requester.h"
#include "test_eal.h"
#include "testlib.h"
#include "wire.h"

/* One port "a" and one flow whose members are `flow` (name, port and addresses are given). */
#define CONFIG(flow)                                                                                       \
	"ports = ( { name = \"a\"; device = \"ring:tr:a\"; mac = \"02:00:00:00:00:01\"; ipv4 = \"10.0.0.1\"; link_speed_gbps = 100.0; } );\n" \
	"eal = { lcores = \"0-1\"; };\n"                                                               \
	"lcores = ( { lcore = 1; port = \"a\"; role = \"tx\"; } );\n"                                    \
	"flows = ( { name = \"f\"; port = \"a\"; dst_mac = \"02:00:00:00:00:02\"; dst_ip = \"10.0.0.2\";\n" \
	"  qpn = 0x100; dest_qpn = 0x200; " flow " } );\n"

/* Frame overhead of an IPv4 RoCEv2 packet without extended headers: Ethernet 14, IPv4 20,
 * UDP 8, BTH 12, ICRC 4. */
#define BASE_OVERHEAD 58

static struct rte_mempool *pool;

/* A flow group's QP 0, made the way the engine makes it. */
struct rig {
	struct engine_config cfg;
	struct qp_group_tx *sh;
	struct qp_tx *qp;
	void *extra;
};

static void *zalloc64(size_t bytes)
{
	size_t rounded = (bytes + 63) & ~(size_t)63;
	void *p = aligned_alloc(64, rounded ? rounded : 64);

	if (p)
		memset(p, 0, rounded ? rounded : 64);
	return p;
}

static bool rig_open(struct rig *r, const char *text)
{
	char err[512] = "";
	const struct cfg_flow_group *g;

	memset(r, 0, sizeof(*r));
	if (config_load_string(text, "test", &r->cfg, err, sizeof(err))) {
		printf("  config: %s\n", err);
		CHECK(!"config loads");
		return false;
	}
	g = &r->cfg.groups[0];
	r->sh = zalloc64(qp_tx_group_size(g));
	r->qp = zalloc64(sizeof(*r->qp));
	r->extra = zalloc64(qp_tx_extra_size(g));
	CHECK(r->sh && r->qp && r->extra);
	if (!r->sh || !r->qp || !r->extra)
		return false;
	qp_tx_group_init(r->sh, g, &r->cfg.ports[g->port], r->cfg.ports[g->port].mac, rte_get_tsc_hz(), 0, 1);
	qp_tx_init(r->qp, r->sh, 0, rte_get_tsc_hz(), 0, r->extra, 0);
	return true;
}

static void rig_close(struct rig *r)
{
	free(r->sh);
	free(r->qp);
	free(r->extra);
}

/* A sent frame as the receiving side reads it. */
struct seen {
	bool ok;               /* RoCE, ICRC checked and right */
	uint8_t opcode;
	uint32_t psn, dqpn;
	bool ackreq;
	uint32_t payload_len;
	uint32_t frame_len;
	uint32_t dma_len;      /* RETH's, where the opcode carries one */
};

static struct seen parse(const uint8_t *f, uint16_t len)
{
	struct wire_pkt p;
	struct wire_ext_hdrs ext;
	struct seen s = {0};

	if (wire_parse(f, len, WIRE_PARSE_CHECK_ICRC | WIRE_PARSE_CHECK_IP_CSUM, &p) != WIRE_KIND_ROCE) {
		printf("  frame of %u bytes: %s %s\n", len, wire_kind_name((enum wire_kind)p.kind),
		       wire_error_name((enum wire_error)p.error));
		return s;
	}
	s.ok = p.icrc_checked && p.icrc_calc == p.icrc_wire;
	s.opcode = p.bth.opcode;
	s.psn = p.bth.psn;
	s.dqpn = p.bth.dqpn;
	s.ackreq = p.bth.ackreq;
	s.payload_len = p.payload_len;
	s.frame_len = len;
	if (p.op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_RETH)) {
		wire_ext_read(f + p.bth_off, p.op, &ext);
		s.dma_len = ext.reth.dma_len;
	}
	return s;
}

/* The QP's next packet, general path, parsed. */
static struct seen next(struct rig *r, uint8_t copy[WIRE_MAX_FRAME])
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct seen s = {0};
	uint16_t len;

	CHECK(m != NULL);
	if (!m)
		return s;
	len = qp_tx_next(r->qp, m, 0);
	CHECK_EQ(m->data_len, len);
	s = parse(rte_pktmbuf_mtod(m, const uint8_t *), len);
	if (copy)
		memcpy(copy, rte_pktmbuf_mtod(m, const uint8_t *), len);
	rte_pktmbuf_free(m);
	return s;
}

/* A packet that should be (opcode, psn, payload) with AckReq `ackreq`. */
static void expect(struct seen s, uint8_t opcode, uint32_t psn, uint32_t payload, bool ackreq)
{
	CHECK(s.ok);
	CHECK_EQ(s.opcode, opcode);
	CHECK_EQ(s.psn, psn);
	CHECK_EQ(s.payload_len, payload);
	CHECK_EQ(s.ackreq, ackreq);
	CHECK_EQ(s.dqpn, 0x200);
}

/* 3000 bytes at an MTU of 1024: FIRST 1024 (with a RETH naming all 3000), MIDDLE 1024, LAST 952,
 * PSNs consecutive across 0xFFFFFF -> 0; the next message goes on from there. */
static void test_uc_write_segments_across_psn_wrap(void)
{
	struct rig r;
	struct seen s;

	if (!rig_open(&r, CONFIG("transport = \"uc\"; ops = { write = 1; }; message_size = 3000; mtu = 1024;"
				 "start_psn = 0xFFFFFE;"))) {
		rig_close(&r);
		return;
	}
	for (uint32_t msg = 0, psn = 0xFFFFFE; msg < 3; msg++, psn = (psn + 3) & 0xFFFFFF) {
		s = next(&r, NULL);
		expect(s, WIRE_OP_UC_WRITE_FIRST, psn, 1024, false);
		CHECK_EQ(s.dma_len, 3000);
		CHECK_EQ(s.frame_len, BASE_OVERHEAD + WIRE_RETH_LEN + 1024);
		s = next(&r, NULL);
		expect(s, WIRE_OP_UC_WRITE_MIDDLE, (psn + 1) & 0xFFFFFF, 1024, false);
		CHECK_EQ(s.frame_len, BASE_OVERHEAD + 1024);
		s = next(&r, NULL);
		expect(s, WIRE_OP_UC_WRITE_LAST, (psn + 2) & 0xFFFFFF, 952, false);
		CHECK_EQ(s.frame_len, BASE_OVERHEAD + 952);
	}
	CHECK_EQ(r.qp->c.messages, 3);
	CHECK_EQ(r.qp->c.tx_packets, 9);
	CHECK_EQ(r.qp->c.payload_bytes, 9000);
	rig_close(&r);
}

/* Messages up to the MTU are one ONLY packet each; a payload of 101 bytes is padded to 104 but
 * read back as 101; a frame below the Ethernet minimum is padded to 60. */
static void test_small_messages_are_only(void)
{
	static const struct {
		const char *flow;
		uint8_t opcode;
		uint32_t payload, frame_len;
	} cases[] = {
		{CONFIG("transport = \"uc\"; ops = { send = 1; }; message_size = 101;"), WIRE_OP_UC_SEND_ONLY, 101,
		 BASE_OVERHEAD + 104},
		{CONFIG("transport = \"uc\"; ops = { send = 1; }; message_size = 1024; mtu = 1024;"), WIRE_OP_UC_SEND_ONLY,
		 1024, BASE_OVERHEAD + 1024},
		{CONFIG("transport = \"uc\"; ops = { write = 1; }; message_size = 8;"), WIRE_OP_UC_WRITE_ONLY, 8,
		 BASE_OVERHEAD + WIRE_RETH_LEN + 8},
		{CONFIG("transport = \"uc\"; ops = { send = 1; }; message_size = 0;"), WIRE_OP_UC_SEND_ONLY, 0,
		 WIRE_MIN_FRAME},
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rig r;

		if (!rig_open(&r, cases[i].flow)) {
			rig_close(&r);
			continue;
		}
		for (uint32_t k = 0; k < 4; k++) {
			struct seen s = next(&r, NULL);
			expect(s, cases[i].opcode, k, cases[i].payload, false);
			CHECK_EQ(s.frame_len, cases[i].frame_len);
		}
		CHECK_EQ(r.qp->c.messages, 4);
		rig_close(&r);
	}
}

/* Frames of the QP's next n packets: through qp_tx_fill (the fast path, for a fast QP) or one by
 * one through qp_tx_next. */
enum { SAME_PKTS = 12 };
static unsigned frames_of(struct rig *r, bool fill, uint8_t frames[][WIRE_MAX_FRAME], uint16_t lens[])
{
	struct rte_mbuf *m[SAME_PKTS];
	unsigned n = SAME_PKTS;

	if (rte_pktmbuf_alloc_bulk(pool, m, SAME_PKTS)) {
		CHECK(!"mbufs");
		return 0;
	}
	if (fill)
		n = qp_tx_fill(r->qp, m, SAME_PKTS, 0, UINT64_MAX);
	for (unsigned i = 0; i < SAME_PKTS; i++) {
		if (!fill)
			qp_tx_next(r->qp, m[i], 0);
		lens[i] = m[i]->data_len;
		memcpy(frames[i], rte_pktmbuf_mtod(m[i], const uint8_t *), lens[i]);
	}
	rte_pktmbuf_free_bulk(m, SAME_PKTS);
	return n;
}

/* A fixed size (every packet a shape copy: for UC in whole calls, the fast path; RC packet by
 * packet) and the same size as a uniform distribution of one size (no shapes: every packet
 * written field by field) send frames that are right and the same, byte for byte. */
static void check_paths_agree(const char *transport, const char *ops, uint32_t size, uint32_t mtu, uint8_t first_op)
{
	static uint8_t fast_f[SAME_PKTS][WIRE_MAX_FRAME], slow_f[SAME_PKTS][WIRE_MAX_FRAME];
	uint16_t fast_len[SAME_PKTS], slow_len[SAME_PKTS];
	char fast_cfg[1024], slow_cfg[1024];
	struct rig fast, slow;
	uint32_t per_msg = size > mtu ? (size + mtu - 1) / mtu : 1;
	bool uc = !strcmp(transport, "uc");

	snprintf(fast_cfg, sizeof(fast_cfg),
		 CONFIG("transport = \"%s\"; ops = { %s = 1; }; message_size = %u; mtu = %u; start_psn = 0xFFFFF8;"),
		 transport, ops,
		 size, mtu);
	snprintf(slow_cfg, sizeof(slow_cfg),
		 CONFIG("transport = \"%s\"; ops = { %s = 1; }; message_size = { dist = \"uniform\"; min = %u; max = %u; };"
			"mtu = %u; start_psn = 0xFFFFF8;"),
		 transport, ops, size, size, mtu);
	memset(&slow, 0, sizeof(slow));
	if (!rig_open(&fast, fast_cfg) || !rig_open(&slow, slow_cfg))
		goto out;
	CHECK_EQ(fast.qp->fast, uc);
	CHECK(!slow.qp->fast);
	CHECK_EQ(frames_of(&fast, uc, fast_f, fast_len), SAME_PKTS);
	frames_of(&slow, false, slow_f, slow_len);
	for (uint32_t i = 0; i < SAME_PKTS; i++) {
		struct seen a = parse(fast_f[i], fast_len[i]), b = parse(slow_f[i], slow_len[i]);
		uint32_t at = i % per_msg, payload = per_msg == 1 ? size : at + 1 < per_msg ? mtu : size - at * mtu;
		uint8_t op = per_msg == 1 ? first_op + 4 : at == 0 ? first_op : at + 1 < per_msg ? first_op + 1 : first_op + 2;

		bool ackreq = !uc && at + 1 == per_msg;

		expect(a, op, (0xFFFFF8 + i) & 0xFFFFFF, payload, ackreq);
		expect(b, op, (0xFFFFF8 + i) & 0xFFFFFF, payload, ackreq);
		CHECK_EQ(a.frame_len, b.frame_len);
		CHECK(a.frame_len == b.frame_len && !memcmp(fast_f[i], slow_f[i], a.frame_len));
	}
	CHECK_EQ(fast.qp->c.tx_packets, slow.qp->c.tx_packets);
	CHECK_EQ(fast.qp->c.messages, slow.qp->c.messages);
	CHECK_EQ(fast.qp->c.messages, SAME_PKTS / per_msg);
out:
	rig_close(&fast);
	rig_close(&slow);
}

static void test_fast_and_general_paths_agree(void)
{
	check_paths_agree("uc", "write", 2500, 1024, WIRE_OP_UC_WRITE_FIRST); /* FIRST MIDDLE LAST */
	check_paths_agree("uc", "send", 1500, 1024, WIRE_OP_UC_SEND_FIRST);   /* FIRST LAST */
	check_paths_agree("uc", "send", 200, 1024, WIRE_OP_UC_SEND_FIRST);    /* ONLY */
	check_paths_agree("uc", "write", 64, 256, WIRE_OP_UC_WRITE_FIRST);    /* ONLY with a RETH */
	check_paths_agree("rc", "write", 2500, 1024, WIRE_OP_RC_WRITE_FIRST);
	check_paths_agree("rc", "send", 1500, 1024, WIRE_OP_RC_SEND_FIRST);
	check_paths_agree("rc", "send", 200, 1024, WIRE_OP_RC_SEND_FIRST);
}

#define RC_FLOW(ops, size, window)                                                                         \
	CONFIG("transport = \"rc\"; ops = { " ops " = 1; }; message_size = " size "; mtu = 1024;"         \
	       "start_psn = 0xFFFFFC; rc = { max_outstanding = " window "; };")

/* RC: the same segmentation with RC opcodes, and AckReq on each message's last packet only. */
static void test_rc_ackreq_on_last(void)
{
	struct rig r;

	if (!rig_open(&r, RC_FLOW("write", "3000", "8"))) {
		rig_close(&r);
		return;
	}
	for (uint32_t msg = 0, psn = 0xFFFFFC; msg < 3; msg++, psn = (psn + 3) & 0xFFFFFF) {
		CHECK(qp_tx_can_send(r.qp, 0));
		expect(next(&r, NULL), WIRE_OP_RC_WRITE_FIRST, psn, 1024, false);
		expect(next(&r, NULL), WIRE_OP_RC_WRITE_MIDDLE, (psn + 1) & 0xFFFFFF, 1024, false);
		expect(next(&r, NULL), WIRE_OP_RC_WRITE_LAST, (psn + 2) & 0xFFFFFF, 952, true);
	}
	rig_close(&r);
	if (!rig_open(&r, RC_FLOW("send", "100", "8"))) {
		rig_close(&r);
		return;
	}
	for (uint32_t k = 0; k < 5; k++)
		expect(next(&r, NULL), WIRE_OP_RC_SEND_ONLY, (0xFFFFFC + k) & 0xFFFFFF, 100, true);
	CHECK_EQ(r.qp->c.retransmits, 0);
	rig_close(&r);
}

/* A message of 100 packets: AckReq also on the 64th (none in the 63 before it: rxe's rule, so
 * long messages are acknowledged as they go), then on the last. */
static void test_rc_ackreq_every_64(void)
{
	struct rig r;

	if (rig_open(&r, CONFIG("transport = \"rc\"; ops = { send = 1; }; message_size = 25600; mtu = 256;"
				"start_psn = 0xFFFFF0;"))) {
		for (uint32_t i = 0; i < 100; i++) {
			uint8_t op = i == 0 ? WIRE_OP_RC_SEND_FIRST : i == 99 ? WIRE_OP_RC_SEND_LAST : WIRE_OP_RC_SEND_MIDDLE;
			expect(next(&r, NULL), op, (0xFFFFF0 + i) & 0xFFFFFF, 256, i == 63 || i == 99);
		}
		CHECK_EQ(r.qp->c.messages, 1);
	}
	rig_close(&r);
}

/* Sends while the QP may; returns the packets sent (at most `max`), their PSNs in psns[]. */
static unsigned send_while_allowed(struct rig *r, unsigned max, uint32_t psns[])
{
	unsigned n = 0;

	while (n < max && qp_tx_can_send(r->qp, 0)) {
		struct seen s = next(r, NULL);
		CHECK(s.ok);
		psns[n++] = s.psn;
	}
	return n;
}

static void ack(struct rig *r, uint8_t kind, uint32_t psn)
{
	struct comp_event ev = {.qp = 0, .psn = psn, .kind = kind,
				.syndrome = kind == COMP_NAK_SEQ ? WIRE_AETH_NAK_PSN_SEQ_ERR : wire_aeth_ack(WIRE_AETH_CREDITS_INVALID)};

	qp_tx_complete(r->qp, &ev, 0);
}

/* An RC READ is one request naming the whole length, and takes a PSN per response packet it
 * asks for: 2500 bytes at an MTU of 1024, three; the next request starts three PSNs on. */
static void test_rc_read_request_takes_response_psns(void)
{
	struct rig r;
	struct seen s;

	if (rig_open(&r, RC_FLOW("read", "2500", "8"))) {
		for (uint32_t k = 0; k < 3; k++) {
			s = next(&r, NULL);
			expect(s, WIRE_OP_RC_READ_REQUEST, (0xFFFFFC + 3 * k) & 0xFFFFFF, 0, true);
			CHECK_EQ(s.dma_len, 2500);
			CHECK_EQ(s.frame_len, BASE_OVERHEAD + WIRE_RETH_LEN);
		}
		CHECK_EQ(r.qp->c.messages, 3);
		ack(&r, COMP_ACK, 0xFFFFFE); /* the first READ's last response */
		CHECK_EQ(r.qp->c.completions, 1);
	}
	rig_close(&r);
}

/* max_outstanding = 4: four messages, then no more until an ACK retires some; an ACK of the
 * second message's PSN retires two, and two more go. */
static void test_rc_window_and_ack(void)
{
	uint32_t psns[16];
	struct rig r;

	if (!rig_open(&r, RC_FLOW("send", "100", "4"))) {
		rig_close(&r);
		return;
	}
	CHECK_EQ(send_while_allowed(&r, 16, psns), 4);
	for (uint32_t i = 0; i < 4; i++)
		CHECK_EQ(psns[i], (0xFFFFFC + i) & 0xFFFFFF);
	CHECK(!qp_tx_can_send(r.qp, 0));
	ack(&r, COMP_ACK, 0xFFFFFD);
	CHECK_EQ(r.qp->c.completions, 2);
	CHECK_EQ(r.qp->c.acks_rx, 1);
	CHECK_EQ(send_while_allowed(&r, 16, psns), 2);
	CHECK_EQ(psns[0], 0);
	CHECK_EQ(psns[1], 1);
	ack(&r, COMP_ACK, 0xFFFFFD); /* old: nothing more to retire, still shut */
	CHECK_EQ(r.qp->c.completions, 2);
	CHECK(!qp_tx_can_send(r.qp, 0));
	ack(&r, COMP_ACK, 1); /* everything */
	CHECK_EQ(r.qp->c.completions, 6);
	CHECK_EQ(send_while_allowed(&r, 16, psns), 4);
	CHECK_EQ(psns[0], 2);
	CHECK_EQ(r.qp->c.retransmits, 0);
	CHECK_EQ(r.qp->c.messages, 10);
	rig_close(&r);
}

/* A NAK (PSN sequence error) for the middle of the second message: the first is acknowledged,
 * and sending goes back to that PSN: the second message's MIDDLE and LAST, then the third and
 * fourth again (8 retransmitted packets), then a new message at the PSN after the highest sent. */
static void test_rc_nak_rewinds(void)
{
	uint32_t psns[16];
	struct rig r;
	struct seen s;

	if (!rig_open(&r, RC_FLOW("write", "3000", "4"))) {
		rig_close(&r);
		return;
	}
	CHECK_EQ(send_while_allowed(&r, 16, psns), 12); /* 4 messages of 3 packets: 0xFFFFFC .. 7 */
	CHECK(!qp_tx_can_send(r.qp, 0));
	ack(&r, COMP_NAK_SEQ, 0); /* the second message is 0xFFFFFF, 0, 1 */
	CHECK_EQ(r.qp->c.naks_rx, 1);
	CHECK_EQ(r.qp->c.completions, 1);
	CHECK(qp_tx_can_send(r.qp, 0));
	expect(next(&r, NULL), WIRE_OP_RC_WRITE_MIDDLE, 0, 1024, false);
	expect(next(&r, NULL), WIRE_OP_RC_WRITE_LAST, 1, 952, true);
	CHECK_EQ(r.qp->c.retransmits, 2);
	for (uint32_t psn = 2; psn < 8; psn += 3) {
		CHECK(qp_tx_can_send(r.qp, 0));
		s = next(&r, NULL);
		expect(s, WIRE_OP_RC_WRITE_FIRST, psn, 1024, false);
		CHECK_EQ(s.dma_len, 3000);
		expect(next(&r, NULL), WIRE_OP_RC_WRITE_MIDDLE, psn + 1, 1024, false);
		expect(next(&r, NULL), WIRE_OP_RC_WRITE_LAST, psn + 2, 952, true);
	}
	CHECK_EQ(r.qp->c.retransmits, 8);
	CHECK_EQ(r.qp->c.messages, 4); /* messages count first transmissions */
	CHECK(qp_tx_can_send(r.qp, 0)); /* three in flight: a fourth may start */
	expect(next(&r, NULL), WIRE_OP_RC_WRITE_FIRST, 8, 1024, false);
	CHECK_EQ(r.qp->c.retransmits, 8);
	rig_close(&r);
}

int main(void)
{
	if (test_eal_start("test_requester", "0"))
		return 1;
	wire_crc_init();
	pool = test_eal_mbuf_pool("t_req", 256);
	if (!pool)
		return 1;
	RUN(test_uc_write_segments_across_psn_wrap);
	RUN(test_small_messages_are_only);
	RUN(test_fast_and_general_paths_agree);
	RUN(test_rc_ackreq_on_last);
	RUN(test_rc_ackreq_every_64);
	RUN(test_rc_read_request_takes_response_psns);
	RUN(test_rc_window_and_ack);
	RUN(test_rc_nak_rewinds);
	rte_mempool_free(pool);
	test_eal_stop();
	return testlib_finish("test_requester");
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * transport/responder: RC requests built with wire's builder, fed to a responder QP made from a
 * config text (an RC flow to the local port itself), its answers read back with wire's parser,
 * ICRC included: ACKs with the request's PSN and the MSN, a duplicate acknowledged again, one NAK
 * per PSN gap, READ responses segmented by the path MTU with one PSN each. The QP index and the
 * answers' mbufs need EAL (no hugepages, PCI or shared files).
 */
#include <rte_mbuf.h>

#include "config.h"
#include "qp_index.h"
#include "responder.h"
#include "test_eal.h"
#include "test_frame.h"
#include "testlib.h"
#include "wire.h"

#define REQ_QPN 0x100  /* the requester's */
#define RESP_QPN 0x200 /* the responder's */

/* An RC flow from the port to itself (`rc`: its reliability settings, or ""): its responder
 * QP is REQ_QPN's peer. */
#define CONFIG_RC(start_psn, rc)                                                                          \
	"eal = { lcores = \"0-1\"; };\n"                                                                   \
	"ports = ( { name = \"a\"; device = \"ring:tresp:a\"; mac = \"02:00:00:00:00:01\"; ipv4 = \"10.0.0.1\";" \
	" link_speed_gbps = 100.0; } );\n"                                                                 \
	"lcores = ( { lcore = 1; port = \"a\"; role = \"tx\"; } );\n"                                    \
	"flows = ( { name = \"f\"; port = \"a\"; dst_mac = \"02:00:00:00:00:01\"; dst_ip = \"10.0.0.1\";\n" \
	"  transport = \"rc\"; ops = { write = 1; }; message_size = 2500; mtu = 1024;\n"                  \
	"  qpn = 0x100; dest_qpn = 0x200; start_psn = " start_psn "; " rc " } );\n"
#define CONFIG(start_psn) CONFIG_RC(start_psn, "")

static struct rte_mempool *pool;

struct rig {
	struct engine_config cfg;
	struct qp_index *ix;
	struct resp_table *table;
	struct resp_qp *q;
	struct resp_out out;
};

static bool rig_open(struct rig *r, const char *text)
{
	char err[512] = "";

	memset(r, 0, sizeof(*r));
	if (config_load_string(text, "test", &r->cfg, err, sizeof(err))) {
		printf("  config: %s\n", err);
		CHECK(!"config loads");
		return false;
	}
	r->ix = qp_index_create(4, SOCKET_ID_ANY);
	CHECK(r->ix != NULL);
	if (!r->ix)
		return false;
	CHECK_EQ(responder_table_build(r->ix, &r->cfg, (const uint8_t(*)[6])r->cfg.ports[0].mac, 1, &r->table), 0);
	r->q = responder_find(r->ix, 0, RESP_QPN);
	CHECK(r->q != NULL);
	r->out.pool = pool;
	r->out.has_queue = true;
	return r->q != NULL;
}

static void rig_close(struct rig *r)
{
	for (unsigned i = 0; i < r->out.n; i++)
		rte_pktmbuf_free(r->out.buf[i]);
	responder_table_free(r->table);
	qp_index_free(r->ix);
}

/* A request as the requester sends it. */
struct req {
	uint8_t opcode;
	uint32_t psn;
	bool ackreq;
	uint32_t payload;
	uint32_t dma_len; /* RETH's, where the opcode carries one */
};

static void request(struct rig *r, struct req q)
{
	static uint8_t buf[WIRE_MAX_FRAME];
	struct wire_roce_spec s;
	struct wire_pkt p;
	int n;

	test_frame_spec(&s, 2, 1); /* from the requester's host to the port */
	s.bth.opcode = q.opcode;
	s.bth.dqpn = RESP_QPN;
	s.bth.psn = q.psn & WIRE_PSN_MASK;
	s.bth.ackreq = q.ackreq;
	s.ext.reth.dma_len = q.dma_len;
	s.ext.reth.rkey = 0x1234;
	s.payload_len = q.payload;
	n = wire_build_roce(&s, buf, sizeof(buf));
	CHECK(n > 0);
	if (n <= 0)
		return;
	CHECK_EQ(wire_parse(buf, (size_t)n, WIRE_PARSE_CHECK_ICRC, &p), WIRE_KIND_ROCE);
	responder_request(r->q, buf, &p, &r->out);
}

/* An answer as the requester reads it. */
struct answer {
	bool ok;          /* RoCE, to the requester's QP, ICRC checked and right */
	uint8_t opcode;
	uint32_t psn;
	bool has_aeth;
	uint8_t syndrome;
	uint32_t msn;
	uint32_t payload;
};

enum { MAX_ANSWERS = 16 };

/* Takes the answers queued since the last call (at most MAX_ANSWERS); returns how many. */
static unsigned answers(struct rig *r, struct answer a[MAX_ANSWERS])
{
	unsigned n = r->out.n;

	CHECK(n <= MAX_ANSWERS);
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *f = rte_pktmbuf_mtod(r->out.buf[i], const uint8_t *);
		struct wire_pkt p;
		struct wire_ext_hdrs ext;

		if (i < MAX_ANSWERS && wire_parse(f, r->out.buf[i]->data_len, WIRE_PARSE_CHECK_ICRC | WIRE_PARSE_CHECK_IP_CSUM,
						  &p) == WIRE_KIND_ROCE) {
			a[i] = (struct answer){.ok = p.icrc_checked && p.icrc_calc == p.icrc_wire && p.bth.dqpn == REQ_QPN,
					       .opcode = p.bth.opcode, .psn = p.bth.psn, .payload = p.payload_len};
			a[i].has_aeth = p.op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_AETH);
			if (a[i].has_aeth) {
				wire_ext_read(f + p.bth_off, p.op, &ext);
				a[i].syndrome = ext.aeth.syndrome;
				a[i].msn = ext.aeth.msn;
			}
		} else if (i < MAX_ANSWERS) {
			a[i] = (struct answer){0};
		}
		rte_pktmbuf_free(r->out.buf[i]);
	}
	r->out.n = 0;
	return n < MAX_ANSWERS ? n : MAX_ANSWERS;
}

static void expect_ack(struct answer a, uint32_t psn, uint32_t msn)
{
	CHECK(a.ok);
	CHECK_EQ(a.opcode, WIRE_OP_RC_ACK);
	CHECK_EQ(a.psn, psn & WIRE_PSN_MASK);
	CHECK(a.has_aeth && wire_aeth_is_ack(a.syndrome));
	CHECK_EQ(a.msn, msn);
}

static void expect_nak_seq(struct answer a, uint32_t psn, uint32_t msn)
{
	CHECK(a.ok);
	CHECK_EQ(a.opcode, WIRE_OP_RC_ACK);
	CHECK_EQ(a.psn, psn & WIRE_PSN_MASK);
	CHECK_EQ(a.syndrome, WIRE_AETH_NAK_PSN_SEQ_ERR);
	CHECK_EQ(a.msn, msn);
}

#define START 0xFFFFFE /* the wrap is crossed within the first messages */

/* In order: a SEND ONLY with AckReq is acknowledged at its PSN with MSN 1; a WRITE's FIRST and
 * MIDDLE without AckReq get nothing, its LAST with AckReq an ACK at its PSN with MSN 2. */
static void test_in_order_acked(void)
{
	struct answer a[MAX_ANSWERS];
	struct rig r;

	if (rig_open(&r, CONFIG("0xFFFFFE"))) {
		request(&r, (struct req){WIRE_OP_RC_SEND_ONLY, START, true, 100, 0});
		CHECK_EQ(answers(&r, a), 1);
		expect_ack(a[0], START, 1);
		request(&r, (struct req){WIRE_OP_RC_WRITE_FIRST, START + 1, false, 1024, 2500});
		request(&r, (struct req){WIRE_OP_RC_WRITE_MIDDLE, START + 2, false, 1024, 0});
		CHECK_EQ(answers(&r, a), 0);
		request(&r, (struct req){WIRE_OP_RC_WRITE_LAST, START + 3, true, 452, 0});
		CHECK_EQ(answers(&r, a), 1);
		expect_ack(a[0], START + 3, 2);
		CHECK_EQ(r.q->c.delivered_messages, 2);
		CHECK_EQ(r.q->c.delivered_bytes, 100 + 2500);
		CHECK_EQ(r.q->c.acks_tx, 2);
		CHECK_EQ(r.q->epsn, (START + 4) & WIRE_PSN_MASK);
	}
	rig_close(&r);
}

/* A request behind ePSN is acknowledged again (at ePSN - 1, what has arrived) and not delivered
 * twice. */
static void test_duplicate_acked_again(void)
{
	struct answer a[MAX_ANSWERS];
	struct rig r;

	if (rig_open(&r, CONFIG("0xFFFFFE"))) {
		request(&r, (struct req){WIRE_OP_RC_SEND_ONLY, START, true, 100, 0});
		request(&r, (struct req){WIRE_OP_RC_SEND_ONLY, START + 1, true, 100, 0});
		CHECK_EQ(answers(&r, a), 2);
		request(&r, (struct req){WIRE_OP_RC_SEND_ONLY, START, true, 100, 0});
		CHECK_EQ(answers(&r, a), 1);
		expect_ack(a[0], START + 1, 2);
		CHECK_EQ(r.q->c.duplicates, 1);
		CHECK_EQ(r.q->c.delivered_messages, 2);
		request(&r, (struct req){WIRE_OP_RC_SEND_ONLY, START + 2, true, 100, 0}); /* goes on in order */
		CHECK_EQ(answers(&r, a), 1);
		expect_ack(a[0], START + 2, 3);
	}
	rig_close(&r);
}

/* A PSN gap: one NAK carrying ePSN, none for the requests after it in the same gap (dropped, not
 * delivered); once ePSN comes everything is acknowledged again; a later gap gets its own NAK. */
static void test_gap_gets_one_nak(void)
{
	struct answer a[MAX_ANSWERS];
	struct rig r;

	if (rig_open(&r, CONFIG("0xFFFFFE"))) {
		request(&r, (struct req){WIRE_OP_RC_SEND_ONLY, START, true, 100, 0});
		CHECK_EQ(answers(&r, a), 1);
		request(&r, (struct req){WIRE_OP_RC_SEND_ONLY, START + 2, true, 100, 0}); /* START + 1 lost */
		CHECK_EQ(answers(&r, a), 1);
		expect_nak_seq(a[0], START + 1, 1);
		request(&r, (struct req){WIRE_OP_RC_SEND_ONLY, START + 3, true, 100, 0});
		request(&r, (struct req){WIRE_OP_RC_SEND_ONLY, START + 4, true, 100, 0});
		CHECK_EQ(answers(&r, a), 0);
		CHECK_EQ(r.q->c.naks_tx, 1);
		CHECK_EQ(r.q->c.out_of_sequence, 3);
		CHECK_EQ(r.q->c.delivered_messages, 1);
		for (uint32_t psn = START + 1; psn <= START + 4; psn++) { /* go back N */
			request(&r, (struct req){WIRE_OP_RC_SEND_ONLY, psn, true, 100, 0});
			CHECK_EQ(answers(&r, a), 1);
			expect_ack(a[0], psn, psn - START + 1);
		}
		CHECK_EQ(r.q->c.delivered_messages, 5);
		request(&r, (struct req){WIRE_OP_RC_SEND_ONLY, START + 7, true, 100, 0});
		CHECK_EQ(answers(&r, a), 1);
		expect_nak_seq(a[0], START + 5, 5);
		CHECK_EQ(r.q->c.naks_tx, 2);
	}
	rig_close(&r);
}

/* rc.ack_every = 2: an ACK also after every second packet without AckReq, at that packet's PSN;
 * an AckReq packet is acknowledged at once and starts the count again. */
static void test_ack_every(void)
{
	struct answer a[MAX_ANSWERS];
	struct rig r;

	if (rig_open(&r, CONFIG_RC("5", "rc = { ack_every = 2; };"))) {
		request(&r, (struct req){WIRE_OP_RC_WRITE_FIRST, 5, false, 1024, 4096});
		CHECK_EQ(answers(&r, a), 0);
		request(&r, (struct req){WIRE_OP_RC_WRITE_MIDDLE, 6, false, 1024, 0});
		CHECK_EQ(answers(&r, a), 1);
		expect_ack(a[0], 6, 0); /* the message is not complete yet */
		request(&r, (struct req){WIRE_OP_RC_WRITE_MIDDLE, 7, true, 1024, 0});
		CHECK_EQ(answers(&r, a), 1);
		expect_ack(a[0], 7, 0);
		request(&r, (struct req){WIRE_OP_RC_WRITE_LAST, 8, false, 1024, 0});
		CHECK_EQ(answers(&r, a), 0);
		request(&r, (struct req){WIRE_OP_RC_SEND_ONLY, 9, false, 64, 0});
		CHECK_EQ(answers(&r, a), 1);
		expect_ack(a[0], 9, 2);
	}
	rig_close(&r);
}

/* A READ of `len` at `psn` answered with these opcodes and payloads, PSNs from psn on, the AETH
 * on all but MIDDLE, carrying the MSN `msn`. */
static void check_read(struct rig *r, uint32_t psn, uint32_t len, const uint8_t *ops, const uint32_t *payloads,
		       unsigned n, uint32_t msn)
{
	struct answer a[MAX_ANSWERS];

	request(r, (struct req){WIRE_OP_RC_READ_REQUEST, psn, true, 0, len});
	CHECK_EQ(answers(r, a), n);
	for (unsigned i = 0; i < n && i < MAX_ANSWERS; i++) {
		CHECK(a[i].ok);
		CHECK_EQ(a[i].opcode, ops[i]);
		CHECK_EQ(a[i].psn, (psn + i) & WIRE_PSN_MASK);
		CHECK_EQ(a[i].payload, payloads[i]);
		CHECK_EQ(a[i].has_aeth, ops[i] != WIRE_OP_RC_READ_RESP_MIDDLE);
		if (a[i].has_aeth) {
			CHECK(wire_aeth_is_ack(a[i].syndrome));
			CHECK_EQ(a[i].msn, msn);
		}
	}
}

/* READs of 2500 (FIRST 1024, MIDDLE 1024, LAST 452: three PSNs, across the wrap), 1024 and 0
 * (ONLY); the request takes as many PSNs as its responses: the next request in order is
 * acknowledged; a READ asked again (a duplicate) is answered again. */
static void test_read_responses(void)
{
	static const uint8_t three[] = {WIRE_OP_RC_READ_RESP_FIRST, WIRE_OP_RC_READ_RESP_MIDDLE, WIRE_OP_RC_READ_RESP_LAST};
	static const uint32_t three_len[] = {1024, 1024, 452};
	static const uint8_t only[] = {WIRE_OP_RC_READ_RESP_ONLY};
	static const uint32_t full[] = {1024}, empty[] = {0};
	struct answer a[MAX_ANSWERS];
	struct rig r;

	if (rig_open(&r, CONFIG("0xFFFFFE"))) {
		check_read(&r, START, 2500, three, three_len, 3, 1);
		check_read(&r, START + 3, 1024, only, full, 1, 2);
		check_read(&r, START + 4, 0, only, empty, 1, 3);
		request(&r, (struct req){WIRE_OP_RC_SEND_ONLY, START + 5, true, 100, 0});
		CHECK_EQ(answers(&r, a), 1);
		expect_ack(a[0], START + 5, 4);
		CHECK_EQ(r.q->c.read_resp_tx, 5);
		check_read(&r, START, 2500, three, three_len, 3, 4); /* again: the same answer */
		CHECK_EQ(r.q->c.duplicates, 1);
		CHECK_EQ(r.q->c.delivered_messages, 4);
	}
	rig_close(&r);
}

int main(void)
{
	if (test_eal_start("test_responder", "0"))
		return 1;
	wire_crc_init();
	pool = test_eal_mbuf_pool("t_resp", 256);
	if (!pool)
		return 1;
	RUN(test_in_order_acked);
	RUN(test_duplicate_acked_again);
	RUN(test_gap_gets_one_nak);
	RUN(test_ack_every);
	RUN(test_read_responses);
	rte_mempool_free(pool);
	test_eal_stop();
	return testlib_finish("test_responder");
}

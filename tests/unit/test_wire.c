/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Unit tests of the wire library, without EAL: golden ICRC vectors, the opcode table against the
 * IBA header sizes, build/parse round trips of every opcode, full versus incremental ICRC on
 * randomised packets, and every malformed-frame verdict. Buffers handed to the parser are
 * exactly as long as the frame, so the ASan build catches any read past the length.
 */
#include <rte_net_crc.h>
#include <zlib.h>

#include "testlib.h"
#include "wire.h"

#define RX_FLAGS (WIRE_PARSE_CHECK_ICRC | WIRE_PARSE_CHECK_IP_CSUM) /* the engine's RX path */

static size_t unhex(const char *hex, uint8_t *out)
{
	size_t n = 0;
	for (; hex[0] && hex[1]; hex += 2)
		sscanf(hex, "%2hhx", &out[n++]);
	return n;
}

/* Independent reference: the annex masking written out again, CRC by zlib only. */
static uint32_t ref_icrc(const uint8_t *l3, size_t covered)
{
	uint8_t *m = malloc(covered + 8);
	bool v6 = (l3[0] >> 4) == 6;
	size_t iplen = v6 ? 40 : 20;
	uint32_t crc;

	memset(m, 0xFF, 8);
	memcpy(m + 8, l3, covered);
	if (v6) {
		m[8 + 0] |= 0x0F;
		m[8 + 1] = m[8 + 2] = m[8 + 3] = 0xFF;
		m[8 + 7] = 0xFF;
	} else {
		m[8 + 1] = 0xFF;
		m[8 + 8] = 0xFF;
		m[8 + 10] = m[8 + 11] = 0xFF;
	}
	m[8 + iplen + 6] = m[8 + iplen + 7] = 0xFF;
	m[8 + iplen + 8 + 4] = 0xFF;
	crc = (uint32_t)crc32(0, m, (uInt)(covered + 8));
	free(m);
	return crc;
}

/* The three vectors of shared/spec/icrc_ref.py: IP packet through ICRC. */
static const char *const golden[] = {
	"4589003C98C64000201169271616160816161607DBAE12B7002800008100FFFF400000D2"
	"0000000000000000000000000000000000000000DAFC1BEF",
	"456a003c000140004011b6f2c0a80101c0a80102c00112b7002800000400ffff00000011"
	"80000100000102030405060708090a0b0c0d0e0f5806c50c",
	"66a1234500281140fe800000000000000000000000000001fe8000000000000000000000"
	"00000002c00112b7002800000400ffff0000001180000100000102030405060708090a0b"
	"0c0d0e0f07d339ce",
};

static void test_crc32_check_value(void)
{
	CHECK_EQ(wire_crc32("123456789", 9), 0xCBF43926); /* CRC-32/ISO-HDLC check value */
	CHECK(strlen(wire_crc_alg_name()) > 0);
}

/* The shifts gen_icrc_tables.py computed at build time are zlib's, for every length (and past
 * WIRE_MAX_FRAME, where icrc.c asks zlib itself). */
static void test_crc_shift_table_matches_zlib(void)
{
	for (size_t n = 0; n <= WIRE_MAX_FRAME + 2; n++)
		CHECK_EQ(wire_crc_shift_for(n), (uint32_t)crc32_combine_gen64((z_off64_t)n));
}

static void test_icrc_golden_vectors(void)
{
	uint8_t pkt[256];

	for (size_t i = 0; i < sizeof(golden) / sizeof(golden[0]); i++) {
		size_t n = unhex(golden[i], pkt);
		CHECK_EQ(wire_icrc(pkt, n - 4), wire_icrc_load(pkt + n - 4));
		CHECK_EQ(ref_icrc(pkt, n - 4), wire_icrc_load(pkt + n - 4));
	}
}

/* Every rte_net_crc implementation (set_alg falls back to scalar where the CPU lacks one) gives
 * the reference ICRC on the golden vectors and on random lengths that take the copy path and the
 * combine path. */
static void test_icrc_every_crc_algorithm(void)
{
	static const enum rte_net_crc_alg algs[] = {RTE_NET_CRC_SCALAR, RTE_NET_CRC_SSE42, RTE_NET_CRC_AVX512};
	static uint8_t pkt[4200];

	for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
		rte_net_crc_set_alg(algs[a]);
		for (size_t i = 0; i < sizeof(golden) / sizeof(golden[0]); i++) {
			size_t n = unhex(golden[i], pkt);
			CHECK_EQ(wire_icrc(pkt, n - 4), wire_icrc_load(pkt + n - 4));
		}
		for (int rep = 0; rep < 200; rep++) {
			size_t covered = 60 + test_rand_below(sizeof(pkt) - 60);
			for (size_t i = 0; i < covered; i++)
				pkt[i] = (uint8_t)test_rand();
			pkt[0] = (uint8_t)(rep & 1 ? 0x60 | (pkt[0] & 0x0F) : 0x45);
			CHECK_EQ(wire_icrc(pkt, covered), ref_icrc(pkt, covered));
		}
	}
	wire_crc_init(); /* back to the fastest */
}

static void test_icrc_masked_fields_ignored(void)
{
	uint8_t pkt[256];
	size_t n = unhex(golden[1], pkt);
	uint32_t icrc = wire_icrc(pkt, n - 4);

	pkt[1] ^= 0xFF;  /* DSCP + ECN */
	pkt[8] ^= 0x3C;  /* TTL */
	pkt[10] ^= 0x12; /* IP checksum */
	pkt[26] ^= 0x55; /* UDP checksum */
	pkt[32] ^= 0xC0; /* FECN, BECN */
	CHECK_EQ(wire_icrc(pkt, n - 4), icrc);
	pkt[31] ^= 1; /* P_Key low byte: covered */
	CHECK(wire_icrc(pkt, n - 4) != icrc);
}

/* Header lengths per IBA: BTH 12, RETH 16, AETH 4, DETH 8, ImmDt 4, IETH 4, AtomicETH 28,
 * AtomicAckETH 8, CNP 16 reserved. */
static void test_opcode_table(void)
{
	static const struct {
		uint8_t op;
		uint8_t hdr_len;
		int off_reth, off_aeth, off_imm, off_deth;
	} want[] = {
		{WIRE_OP_RC_SEND_FIRST, 12, -1, -1, -1, -1},
		{WIRE_OP_RC_SEND_LAST_IMM, 16, -1, -1, 12, -1},
		{WIRE_OP_RC_WRITE_FIRST, 28, 12, -1, -1, -1},
		{WIRE_OP_RC_WRITE_ONLY_IMM, 32, 12, -1, 28, -1},
		{WIRE_OP_RC_READ_REQUEST, 28, 12, -1, -1, -1},
		{WIRE_OP_RC_READ_RESP_FIRST, 16, -1, 12, -1, -1},
		{WIRE_OP_RC_READ_RESP_MIDDLE, 12, -1, -1, -1, -1},
		{WIRE_OP_RC_ACK, 16, -1, 12, -1, -1},
		{WIRE_OP_RC_ATOMIC_ACK, 24, -1, 12, -1, -1},
		{WIRE_OP_RC_COMPARE_SWAP, 40, -1, -1, -1, -1},
		{WIRE_OP_RC_FETCH_ADD, 40, -1, -1, -1, -1},
		{WIRE_OP_RC_SEND_ONLY_INV, 16, -1, -1, -1, -1},
		{WIRE_OP_UC_WRITE_ONLY_IMM, 32, 12, -1, 28, -1},
		{WIRE_OP_UD_SEND_ONLY, 20, -1, -1, -1, 12},
		{WIRE_OP_UD_SEND_ONLY_IMM, 24, -1, -1, 20, 12},
		{WIRE_OP_CNP, 28, -1, -1, -1, -1},
	};
	int defined = 0;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct wire_opcode_info *op = wire_opcode_info(want[i].op);
		CHECK(op != NULL);
		if (!op)
			continue;
		CHECK_EQ(op->hdr_len, want[i].hdr_len);
		if (want[i].off_reth >= 0)
			CHECK_EQ(op->offset[WIRE_EXT_RETH], want[i].off_reth);
		if (want[i].off_aeth >= 0)
			CHECK_EQ(op->offset[WIRE_EXT_AETH], want[i].off_aeth);
		if (want[i].off_imm >= 0)
			CHECK_EQ(op->offset[WIRE_EXT_IMMDT], want[i].off_imm);
		if (want[i].off_deth >= 0)
			CHECK_EQ(op->offset[WIRE_EXT_DETH], want[i].off_deth);
	}
	CHECK_EQ(wire_opcode_info(WIRE_OP_RC_ATOMIC_ACK)->offset[WIRE_EXT_ATOMICACKETH], 16);
	for (int op = 0; op < 256; op++)
		defined += wire_opcode_info((uint8_t)op) != NULL;
	CHECK_EQ(defined, 23 + 12 + 2 + 1); /* RC 23, UC 12, UD 2, CNP */
	CHECK(wire_opcode_info(0x15) == NULL && wire_opcode_info(0x80) == NULL && wire_opcode_info(0x2C) == NULL);
	CHECK_EQ(wire_opcode_by_name("rc-send-only"), WIRE_OP_RC_SEND_ONLY);
	CHECK_EQ(wire_opcode_by_name("UD_SEND_ONLY_IMM"), WIRE_OP_UD_SEND_ONLY_IMM);
	CHECK_EQ(wire_opcode_by_name("cnp"), WIRE_OP_CNP);
	CHECK_EQ(wire_opcode_by_name("rc_send"), -1);
}

static void random_spec(struct wire_roce_spec *s, uint8_t opcode, uint8_t *payload)
{
	const struct wire_opcode_info *op = wire_opcode_info(opcode);

	memset(s, 0, sizeof(*s));
	for (int i = 0; i < 6; i++) {
		s->l2.src[i] = (uint8_t)test_rand();
		s->l2.dst[i] = (uint8_t)test_rand();
	}
	s->l2.vlan = test_rand() & 1;
	s->l2.pcp = (uint8_t)test_rand_below(8);
	s->l2.dei = test_rand() & 1;
	s->l2.vid = (uint16_t)test_rand_below(4096);
	s->ip.version = test_rand() & 1 ? 6 : 4;
	s->ip.dscp = (uint8_t)test_rand_below(64);
	s->ip.ecn = (uint8_t)test_rand_below(4);
	s->ip.ttl = (uint8_t)test_rand();
	s->ip.id = (uint16_t)test_rand();
	s->ip.df = test_rand() & 1;
	s->ip.flow_label = (uint32_t)test_rand_below(1 << 20);
	for (int i = 0; i < 16; i++) {
		s->ip.src[i] = (uint8_t)test_rand();
		s->ip.dst[i] = (uint8_t)test_rand();
	}
	if (s->ip.version == 4) {
		memset(s->ip.src + 4, 0, 12);
		memset(s->ip.dst + 4, 0, 12);
	}
	s->udp.sport = (uint16_t)test_rand();
	s->bth = (struct wire_bth){.opcode = opcode, .se = test_rand() & 1, .mig = test_rand() & 1,
				   .pkey = (uint16_t)test_rand(), .fecn = test_rand() & 1, .becn = test_rand() & 1,
				   .dqpn = (uint32_t)test_rand_below(1 << 24), .ackreq = test_rand() & 1,
				   .psn = (uint32_t)test_rand_below(1 << 24)};
	s->ext.reth = (struct wire_reth){test_rand(), (uint32_t)test_rand(), (uint32_t)test_rand()};
	s->ext.aeth = (struct wire_aeth){(uint8_t)test_rand(), (uint32_t)test_rand_below(1 << 24)};
	s->ext.deth = (struct wire_deth){(uint32_t)test_rand(), (uint32_t)test_rand_below(1 << 24)};
	s->ext.atomic = (struct wire_atomiceth){test_rand(), (uint32_t)test_rand(), test_rand(), test_rand()};
	s->ext.atomic_ack_orig = test_rand();
	s->ext.immdt = (uint32_t)test_rand();
	s->ext.ieth_rkey = (uint32_t)test_rand();
	if (op->flags & WIRE_OPF_PAYLOAD) {
		/* first/middle packets are PMTU-sized in practice: keep them 4-byte aligned */
		bool end = op->flags & WIRE_OPF_END;
		s->payload_len = (uint32_t)test_rand_below(test_rand() & 1 ? 64 : 4200);
		if (!end)
			s->payload_len &= ~3u;
		for (uint32_t i = 0; i < s->payload_len; i++)
			payload[i] = (uint8_t)test_rand();
		s->payload = payload;
	}
}

static void check_roundtrip(const struct wire_roce_spec *s, const uint8_t *frame, const struct wire_pkt *p)
{
	const struct wire_opcode_info *op = wire_opcode_info(s->bth.opcode);
	struct wire_ext_hdrs e;

	CHECK_EQ(p->kind, op->flags & WIRE_OPF_CNP ? WIRE_KIND_CNP : WIRE_KIND_ROCE);
	CHECK_EQ(p->error, WIRE_ERR_NONE);
	CHECK(!memcmp(p->l2.src, s->l2.src, 6) && !memcmp(p->l2.dst, s->l2.dst, 6));
	CHECK_EQ(p->l2.vlan, s->l2.vlan);
	if (s->l2.vlan)
		CHECK(p->l2.pcp == s->l2.pcp && p->l2.dei == s->l2.dei && p->l2.vid == s->l2.vid);
	CHECK_EQ(p->ip.version, s->ip.version);
	CHECK(p->ip.dscp == s->ip.dscp && p->ip.ecn == s->ip.ecn && p->ip.ttl == s->ip.ttl);
	CHECK(!memcmp(p->ip.src, s->ip.src, 16) && !memcmp(p->ip.dst, s->ip.dst, 16));
	if (s->ip.version == 6)
		CHECK_EQ(p->ip.flow_label, s->ip.flow_label);
	else
		CHECK(p->ip.id == s->ip.id && p->ip.df == s->ip.df);
	CHECK(p->udp.sport == s->udp.sport && p->udp.dport == WIRE_ROCEV2_UDP_PORT);
	CHECK(p->bth.opcode == s->bth.opcode && p->bth.se == s->bth.se && p->bth.mig == s->bth.mig);
	CHECK(p->bth.pkey == s->bth.pkey && p->bth.fecn == s->bth.fecn && p->bth.becn == s->bth.becn);
	CHECK(p->bth.dqpn == s->bth.dqpn && p->bth.ackreq == s->bth.ackreq && p->bth.psn == s->bth.psn);
	CHECK_EQ(p->bth.pad, (4 - (s->payload_len & 3)) & 3);
	CHECK_EQ(p->payload_len, s->payload_len);
	if (s->payload_len)
		CHECK(!memcmp(frame + p->payload_off, s->payload, s->payload_len));
	wire_ext_read(frame + p->bth_off, op, &e);
	if (op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_RETH))
		CHECK(e.reth.va == s->ext.reth.va && e.reth.rkey == s->ext.reth.rkey && e.reth.dma_len == s->ext.reth.dma_len);
	if (op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_AETH))
		CHECK(e.aeth.syndrome == s->ext.aeth.syndrome && e.aeth.msn == s->ext.aeth.msn);
	if (op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_DETH))
		CHECK(e.deth.qkey == s->ext.deth.qkey && e.deth.src_qp == s->ext.deth.src_qp);
	if (op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_ATOMICETH))
		CHECK(!memcmp(&e.atomic, &s->ext.atomic, sizeof(e.atomic)));
	if (op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_ATOMICACKETH))
		CHECK_EQ(e.atomic_ack_orig, s->ext.atomic_ack_orig);
	if (op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_IMMDT))
		CHECK_EQ(e.immdt, s->ext.immdt);
	if (op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_IETH))
		CHECK_EQ(e.ieth_rkey, s->ext.ieth_rkey);
	CHECK(p->icrc_checked && p->icrc_calc == p->icrc_wire);
	CHECK_EQ(p->icrc_wire, ref_icrc(frame + p->l3_off, p->icrc_off - p->l3_off));
}

/* Builds a frame into a heap buffer of exactly its length (so ASan sees over-reads). */
static uint8_t *build_exact(const struct wire_roce_spec *s, size_t *len)
{
	static uint8_t tmp[WIRE_MAX_FRAME];
	int n = wire_build_roce(s, tmp, sizeof(tmp));
	uint8_t *f;

	*len = 0;
	if (n <= 0)
		return NULL;
	f = malloc((size_t)n);
	memcpy(f, tmp, (size_t)n);
	*len = (size_t)n;
	return f;
}

static void test_roundtrip_every_opcode(void)
{
	static uint8_t payload[WIRE_MAX_FRAME];

	for (int op = 0; op < 256; op++) {
		if (!wire_opcode_info((uint8_t)op))
			continue;
		for (int rep = 0; rep < 40; rep++) {
			struct wire_roce_spec s;
			struct wire_pkt p;
			size_t len;
			uint8_t *f;

			random_spec(&s, (uint8_t)op, payload);
			f = build_exact(&s, &len);
			CHECK(f != NULL);
			if (!f)
				continue;
			CHECK_EQ(len, wire_roce_frame_len(&s) < WIRE_MIN_FRAME ? WIRE_MIN_FRAME : wire_roce_frame_len(&s));
			wire_parse(f, len, WIRE_PARSE_CHECK_ICRC, &p);
			check_roundtrip(&s, f, &p);
			free(f);
		}
	}
}

/* WIRE_PARSE_HEADERS_ONLY (a switch's parse) leaves every field as a plain parse does but the
 * ICRC it never loads; with WIRE_PARSE_CHECK_ICRC as well the check wins. */
static void test_headers_only_parse(void)
{
	static uint8_t payload[WIRE_MAX_FRAME];

	for (int op = 0; op < 256; op++) {
		if (!wire_opcode_info((uint8_t)op))
			continue;
		for (int rep = 0; rep < 8; rep++) {
			struct wire_roce_spec s;
			struct wire_pkt full, hdr, both;
			size_t len;
			uint8_t *f;

			random_spec(&s, (uint8_t)op, payload);
			f = build_exact(&s, &len);
			CHECK(f != NULL);
			if (!f)
				continue;
			memset(&full, 0, sizeof(full)); /* the padding compares equal too */
			memset(&hdr, 0, sizeof(hdr));
			wire_parse(f, len, 0, &full);
			wire_parse(f, len, WIRE_PARSE_HEADERS_ONLY, &hdr);
			wire_parse(f, len, WIRE_PARSE_HEADERS_ONLY | WIRE_PARSE_CHECK_ICRC, &both);
			CHECK(full.icrc_wire != 0 || ref_icrc(f + full.l3_off, full.icrc_off - full.l3_off) == 0);
			CHECK_EQ(hdr.icrc_wire, 0u);
			hdr.icrc_wire = full.icrc_wire;
			CHECK(memcmp(&hdr, &full, sizeof(full)) == 0);
			CHECK(both.icrc_checked && both.icrc_calc == both.icrc_wire && both.icrc_wire == full.icrc_wire);
			free(f);
		}
	}
}

/* wire_icrc_many against the zlib reference (and wire_icrc_v1 for RoCEv1), for batches of every
 * size up to beyond WIRE_ICRC_MANY_MAX with lengths on both sides of what a lane takes, IPv4 and
 * IPv6 mixed, and every covered length from 60 to 300 in one batch. */
static void test_icrc_many_matches_reference(void)
{
	enum { N = WIRE_ICRC_MANY_MAX + 6, MAXC = 300 };
	static uint8_t pkt[N][MAXC];
	const uint8_t *l3[N];
	uint32_t covered[N], out[N];
	bool v1[N];

	printf("  wire_icrc_many: %s\n", wire_icrc_method());
	for (int rep = 0; rep < 400; rep++) {
		unsigned n = rep < N ? (unsigned)rep + 1 : 1 + test_rand_below(N);
		for (unsigned i = 0; i < n; i++) {
			covered[i] = 60 + test_rand_below(MAXC - 60 + 1);
			for (size_t b = 0; b < covered[i]; b++)
				pkt[i][b] = (uint8_t)test_rand();
			v1[i] = test_rand_below(5) == 0;
			pkt[i][0] = (uint8_t)(v1[i] || test_rand_below(2) ? 0x60 | (pkt[i][0] & 0x0F) : 0x45);
			l3[i] = pkt[i];
		}
		wire_icrc_many(l3, covered, v1, n, out);
		for (unsigned i = 0; i < n; i++)
			CHECK_EQ(out[i], v1[i] ? wire_icrc_v1(l3[i], covered[i]) : ref_icrc(l3[i], covered[i]));
	}
	for (unsigned c = 60; c <= MAXC; c += N) {
		unsigned n = 0;
		for (unsigned len = c; len <= MAXC && n < N; len++, n++) {
			covered[n] = len;
			v1[n] = false;
			l3[n] = pkt[n];
			pkt[n][0] = 0x45;
		}
		wire_icrc_many(l3, covered, v1, n, out);
		for (unsigned i = 0; i < n; i++)
			CHECK_EQ(out[i], ref_icrc(l3[i], covered[i]));
	}
}

/* wire_parse_burst leaves exactly what wire_parse does, frame by frame: valid frames of every
 * opcode, frames with a flipped bit (ICRC errors or header verdicts, IPv4 checksums with the RX
 * path's flags), truncated frames, PFC. */
static void test_parse_burst_matches_parse(void)
{
	enum { N = 40 };
	static uint8_t payload[WIRE_MAX_FRAME];

	for (int rep = 0; rep < 300; rep++) {
		uint8_t *frames[N];
		uint32_t lens[N];
		struct wire_pkt burst[N], one;
		unsigned n = 1 + test_rand_below(N), flags = rep & 1 ? RX_FLAGS : WIRE_PARSE_CHECK_ICRC;

		for (unsigned i = 0; i < n; i++) {
			struct wire_roce_spec sp;
			size_t len = 0;
			uint8_t op;

			do
				op = (uint8_t)test_rand();
			while (!wire_opcode_info(op));
			random_spec(&sp, op, payload);
			if (test_rand_below(2))
				sp.payload_len = sp.payload_len > 200 ? 200 : sp.payload_len;
			frames[i] = build_exact(&sp, &len);
			lens[i] = (uint32_t)len;
			switch (test_rand_below(4)) {
			case 0: /* a flipped bit anywhere */
				frames[i][test_rand_below((uint32_t)len)] ^= (uint8_t)(1u << test_rand_below(8));
				break;
			case 1: /* cut short */
				lens[i] = test_rand_below((uint32_t)len);
				break;
			default:
				break;
			}
		}
		wire_parse_burst((const uint8_t *const *)frames, lens, n, flags, burst);
		for (unsigned i = 0; i < n; i++) {
			wire_parse(frames[i], lens[i], flags, &one);
			CHECK(memcmp(&one, &burst[i], sizeof(one)) == 0);
			free(frames[i]);
		}
	}
}

static void test_build_rejects_bad_specs(void)
{
	struct wire_roce_spec s;
	uint8_t buf[WIRE_MAX_FRAME];
	static uint8_t payload[WIRE_MAX_FRAME];

	random_spec(&s, WIRE_OP_RC_ACK, payload);
	s.bth.opcode = 0x15;
	CHECK_EQ(wire_build_roce(&s, buf, sizeof(buf)), -WIRE_BUILD_BAD_OPCODE);
	random_spec(&s, WIRE_OP_RC_ACK, payload);
	s.payload_len = 4;
	CHECK_EQ(wire_build_roce(&s, buf, sizeof(buf)), -WIRE_BUILD_NO_PAYLOAD);
	random_spec(&s, WIRE_OP_RC_WRITE_MIDDLE, payload);
	s.payload_len = 1021;
	CHECK_EQ(wire_build_roce(&s, buf, sizeof(buf)), -WIRE_BUILD_BAD_PAD);
	s.payload_len = 1024;
	CHECK(wire_build_roce(&s, buf, sizeof(buf)) > 0);
	random_spec(&s, WIRE_OP_RC_SEND_ONLY, payload);
	s.ip.version = 5;
	CHECK_EQ(wire_build_roce(&s, buf, sizeof(buf)), -WIRE_BUILD_BAD_FIELD);
	s.ip.version = 4;
	s.bth.psn = 1u << 24;
	CHECK_EQ(wire_build_roce(&s, buf, sizeof(buf)), -WIRE_BUILD_BAD_FIELD);
	s.bth.psn = 0;
	s.l2.pcp = 8;
	CHECK_EQ(wire_build_roce(&s, buf, sizeof(buf)), -WIRE_BUILD_BAD_FIELD);
	s.l2.pcp = 0;
	s.payload_len = 9100;
	CHECK_EQ(wire_build_roce(&s, buf, sizeof(buf)), -WIRE_BUILD_TOO_LONG);
	s.payload_len = 100;
	CHECK_EQ(wire_build_roce(&s, buf, 59), -WIRE_BUILD_NO_ROOM);
	CHECK_EQ(wire_build_roce(&s, buf, wire_roce_frame_len(&s) - 1), -WIRE_BUILD_NO_ROOM);
	CHECK((size_t)wire_build_roce(&s, buf, wire_roce_frame_len(&s)) == wire_roce_frame_len(&s));
}

/* Full and incremental ICRC agree: PSN rewrite plus a few payload bytes (a timestamp). */
static void test_incremental_matches_full(void)
{
	static uint8_t payload[WIRE_MAX_FRAME];

	for (int op = 0; op < 256; op++) {
		if (!wire_opcode_info((uint8_t)op))
			continue;
		for (int rep = 0; rep < 30; rep++) {
			struct wire_roce_spec s;
			struct wire_icrc_field psn_field, ts_field;
			struct wire_pkt p;
			uint8_t old_psn[3], old_ts[8], new_ts[8];
			size_t len, psn_off, ts_off = 0, tail;
			uint32_t icrc, icrc_tab;
			uint8_t *f;

			random_spec(&s, (uint8_t)op, payload);
			f = build_exact(&s, &len);
			wire_parse(f, len, 0, &p);
			psn_off = p.bth_off + 9;
			tail = p.icrc_off - (psn_off + 3);
			icrc = icrc_tab = p.icrc_wire;
			CHECK(wire_icrc_field_init(&psn_field, 3, tail) == 0);
			memcpy(old_psn, f + psn_off, 3);
			wire_bth_set_psn(f + p.bth_off, (uint32_t)test_rand());
			icrc = wire_icrc_patch(icrc, old_psn, f + psn_off, 3, wire_crc_shift_for(tail));
			icrc_tab = wire_icrc_field_update(&psn_field, icrc_tab, old_psn, f + psn_off);
			if (p.payload_len >= 8) {
				ts_off = p.payload_off + test_rand_below(p.payload_len - 7);
				tail = p.icrc_off - (ts_off + 8);
				CHECK(wire_icrc_field_init(&ts_field, 8, tail) == 0);
				memcpy(old_ts, f + ts_off, 8);
				wire_put64(new_ts, test_rand());
				memcpy(f + ts_off, new_ts, 8);
				icrc = wire_icrc_patch(icrc, old_ts, new_ts, 8, wire_crc_shift_for(tail));
				icrc_tab = wire_icrc_field_update(&ts_field, icrc_tab, old_ts, new_ts);
			}
			CHECK_EQ(icrc, wire_icrc(f + p.l3_off, p.icrc_off - p.l3_off));
			CHECK_EQ(icrc_tab, icrc);
			free(f);
		}
	}
	struct wire_icrc_field f;
	CHECK(wire_icrc_field_init(&f, 0, 10) == -1 && wire_icrc_field_init(&f, 9, 10) == -1);
}

/* A long changed region (more than the patch's 64-byte chunk) still agrees. */
static void test_incremental_long_region(void)
{
	static uint8_t payload[WIRE_MAX_FRAME];
	struct wire_roce_spec s;
	struct wire_pkt p;
	size_t len;
	uint8_t *f, old[300];

	random_spec(&s, WIRE_OP_RC_SEND_ONLY, payload);
	s.payload_len = 1000;
	f = build_exact(&s, &len);
	wire_parse(f, len, 0, &p);
	memcpy(old, f + p.payload_off + 100, sizeof(old));
	for (size_t i = 0; i < sizeof(old); i++)
		f[p.payload_off + 100 + i] = (uint8_t)test_rand();
	CHECK_EQ(wire_icrc_patch(p.icrc_wire, old, f + p.payload_off + 100, sizeof(old),
				 wire_crc_shift_for(p.icrc_off - (p.payload_off + 100 + sizeof(old)))),
		 wire_icrc(f + p.l3_off, p.icrc_off - p.l3_off));
	free(f);
}

static void test_pfc_and_pause_bytes(void)
{
	static const uint8_t src[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
	const uint16_t q[8] = {0, 0, 0, 0xFFFF, 0, 0, 0x1234, 0};
	uint8_t buf[64], *exact;
	struct wire_pkt p;

	CHECK_EQ(wire_build_pfc(src, NULL, 0x48, q, buf, sizeof(buf)), 60);
	CHECK(!memcmp(buf, "\x01\x80\xc2\x00\x00\x01\x02\x11\x22\x33\x44\x55\x88\x08\x01\x01\x00\x48", 18));
	CHECK(buf[18 + 6] == 0xFF && buf[18 + 7] == 0xFF && buf[18 + 12] == 0x12 && buf[18 + 13] == 0x34);
	for (int i = 34; i < 60; i++)
		CHECK_EQ(buf[i], 0);
	exact = malloc(60);
	memcpy(exact, buf, 60);
	CHECK_EQ(wire_parse(exact, 60, 0, &p), WIRE_KIND_PFC);
	CHECK(p.pfc_enable == 0x48 && !memcmp(p.quanta, q, sizeof(q)));
	CHECK_EQ(wire_build_pause(src, NULL, 0xABCD, buf, sizeof(buf)), 60);
	CHECK(!memcmp(buf + 12, "\x88\x08\x00\x01\xab\xcd", 6));
	memcpy(exact, buf, 60);
	CHECK_EQ(wire_parse(exact, 60, 0, &p), WIRE_KIND_PAUSE);
	CHECK_EQ(p.quanta[0], 0xABCD);
	CHECK_EQ(wire_build_pfc(src, NULL, 0, q, buf, 59), -WIRE_BUILD_NO_ROOM);
	free(exact);
}

static void test_udp_sport_entropy(void)
{
	/* rdma_flow_label_to_udp_sport / rdma_calc_flow_label, worked by hand */
	CHECK_EQ(wire_udp_sport_from_flow_label(0), 0xC000);
	CHECK_EQ(wire_udp_sport_from_flow_label(0xFFFFF), 0xC000 | (0x3FFF ^ 0x3F));
	CHECK_EQ(wire_flow_label_from_qpns(0x11, 0x12), 0x132);
	/* v = 0x123456 * 0xABCDEF = 0xC379A59BA4A; v ^= v >> 20 gives 0xC379A9AC3EF;
	 * v ^= v >> 40 flips the low bits by 0xC: low 20 bits 0xAC3EF ^ 0xC = 0xAC3E3 */
	CHECK_EQ(wire_flow_label_from_qpns(0x123456, 0xABCDEF), 0xAC3E3);
}

/* ---- malformed frames ------------------------------------------------------------------------ */

static uint8_t base_frame[WIRE_MAX_FRAME];
static size_t base_len;

static void make_base(uint8_t opcode, uint8_t ipver, uint32_t payload_len)
{
	struct wire_roce_spec s = {.ip = {.version = ipver, .ttl = 64}, .bth = {.opcode = opcode, .pkey = 0xFFFF},
				   .payload_len = payload_len};
	base_len = (size_t)wire_build_roce(&s, base_frame, sizeof(base_frame));
}

/* Parses a copy of the base frame, mutated, in an exact-size heap buffer. */
static struct wire_pkt parse_mutated(size_t len, size_t at, uint8_t value, bool reseal)
{
	uint8_t *f = malloc(len ? len : 1);
	struct wire_pkt p;

	memcpy(f, base_frame, len);
	if (at < len)
		f[at] = value;
	if (reseal) {
		wire_parse(f, len, 0, &p);
		wire_icrc_seal(f, &p);
	}
	wire_parse(f, len, WIRE_PARSE_CHECK_ICRC, &p);
	free(f);
	return p;
}

#define EXPECT_ERR(p, e)                                                                            \
	do {                                                                                        \
		struct wire_pkt p_ = (p);                                                           \
		CHECK_EQ(p_.kind, WIRE_KIND_MALFORMED);                                             \
		CHECK_EQ(p_.error, e);                                                              \
	} while (0)

static void test_malformed_ipv4(void)
{
	make_base(WIRE_OP_RC_SEND_ONLY, 4, 40); /* eth 14 | ip 20 | udp 8 | bth 12 | 40 | icrc 4 = 98 */
	CHECK_EQ(parse_mutated(base_len, 999, 0, false).kind, WIRE_KIND_ROCE);
	EXPECT_ERR(parse_mutated(13, 999, 0, false), WIRE_ERR_TRUNCATED_L2);
	EXPECT_ERR(parse_mutated(30, 999, 0, false), WIRE_ERR_TRUNCATED_L3);
	EXPECT_ERR(parse_mutated(base_len, 14, 0x65, false), WIRE_ERR_BAD_IP_VERSION);
	EXPECT_ERR(parse_mutated(base_len, 14, 0x44, false), WIRE_ERR_BAD_IP_HLEN);
	EXPECT_ERR(parse_mutated(base_len, 16, 0x01, false), WIRE_ERR_IP_LEN);      /* total length + 256 */
	EXPECT_ERR(parse_mutated(base_len - 10, 999, 0, false), WIRE_ERR_IP_LEN);  /* frame cut short */
	EXPECT_ERR(parse_mutated(base_len, 20, 0x20, false), WIRE_ERR_IP_FRAGMENT); /* MF */
	/* UDP at 34 (length at 38), BTH at 42 (opcode 42, SE/M/pad/tver 43), payload at 54 */
	EXPECT_ERR(parse_mutated(base_len, 38, 0x01, false), WIRE_ERR_UDP_LEN);     /* UDP length + 256 */
	EXPECT_ERR(parse_mutated(base_len, 39, 0x09, false), WIRE_ERR_UDP_LEN);     /* UDP length 9 */
	EXPECT_ERR(parse_mutated(base_len, 39, 0x04, false), WIRE_ERR_UDP_LEN);     /* below a header */
	EXPECT_ERR(parse_mutated(base_len, 60, 0x77, false), WIRE_ERR_ICRC);        /* payload byte */
	EXPECT_ERR(parse_mutated(base_len, base_len - 1, 0x5A, false), WIRE_ERR_ICRC);
	EXPECT_ERR(parse_mutated(base_len, 43, 0x01, true), WIRE_ERR_BAD_BTH_VERSION);
	EXPECT_ERR(parse_mutated(base_len, 42, 0x15, true), WIRE_ERR_UNKNOWN_OPCODE); /* reserved */
	EXPECT_ERR(parse_mutated(base_len, 42, 0x80, true), WIRE_ERR_UNKNOWN_OPCODE);
	EXPECT_ERR(parse_mutated(base_len, 42, WIRE_OP_RC_SEND_FIRST, false), WIRE_ERR_ICRC);
	CHECK_EQ(parse_mutated(base_len, 42, WIRE_OP_RC_SEND_FIRST, true).kind, WIRE_KIND_ROCE);
	CHECK_EQ(parse_mutated(base_len, 37, 0x12, false).kind, WIRE_KIND_OTHER); /* dport 0x12b7 -> 0x1212 */
	CHECK_EQ(parse_mutated(base_len, 23, 6, false).kind, WIRE_KIND_OTHER);    /* TCP */
	CHECK_EQ(parse_mutated(base_len, 12, 0x86, false).kind, WIRE_KIND_OTHER); /* unknown EtherType */
}

/* Parses f (len bytes) in an exact-size heap copy. */
static struct wire_pkt parse_copy(const uint8_t *f, size_t len, unsigned flags)
{
	uint8_t *g = malloc(len);
	struct wire_pkt p;

	memcpy(g, f, len);
	wire_parse(g, len, flags, &p);
	free(g);
	return p;
}

/* The IPv4 header checksum, WIRE_PARSE_CHECK_IP_CSUM. Golden vector 2 (scapy's): the header's
 * words but the checksum, 456a 003c 0001 4000 4011 c0a8 0101 c0a8 0102, sum to 0x2490b, folded
 * 0x490d, so the checksum is ~0x490d = 0xb6f2, as scapy wrote it; with it the sum is 0x2fffd,
 * folded 0xffff: valid. The ICRC masks the checksum, TTL and ToS, so it cannot see their errors. */
static void test_ipv4_header_checksum(void)
{
	static const uint8_t fields[] = {1, 4, 5, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
	uint8_t f[14 + 60] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00};
	size_t len = 14 + unhex(golden[1], f + 14);
	struct wire_pkt p;

	CHECK_EQ(wire_get16(f + 24), 0xb6f2);
	CHECK_EQ(parse_copy(f, len, RX_FLAGS).kind, WIRE_KIND_ROCE);
	f[25] = 0xf3;
	p = parse_copy(f, len, RX_FLAGS);
	CHECK_EQ(p.kind, WIRE_KIND_MALFORMED);
	CHECK_EQ(p.error, WIRE_ERR_IP_CHECKSUM);
	CHECK(!p.icrc_checked); /* the header checks come first */
	CHECK_EQ(parse_copy(f, len, WIRE_PARSE_CHECK_ICRC).kind, WIRE_KIND_ROCE); /* the defect: ICRC fine */
	f[25] = 0xf2;
	/* one flipped bit anywhere in the fields a flip leaves a RoCEv2 datagram (ToS, ID, TTL,
	 * checksum, addresses): a ones'-complement sum sees every single-bit error */
	for (size_t i = 0; i < sizeof(fields); i++)
		for (int bit = 0; bit < 8; bit++) {
			f[14 + fields[i]] ^= (uint8_t)(1u << bit);
			p = parse_copy(f, len, WIRE_PARSE_CHECK_IP_CSUM);
			CHECK_EQ(p.kind, WIRE_KIND_MALFORMED);
			CHECK_EQ(p.error, WIRE_ERR_IP_CHECKSUM);
			CHECK_EQ(parse_copy(f, len, 0).kind, WIRE_KIND_ROCE);
			f[14 + fields[i]] ^= (uint8_t)(1u << bit);
		}

	/* Ones' complement has two zeros. make_base's header, 4500 0054 0000 0000 4011 csum and
	 * zero addresses (84 bytes, ID 0, TTL 64, UDP): the words sum to 0x8565, so ID 0x7a9a makes
	 * them 0xffff and the checksum ~0xffff = 0x0000. Stored as 0xffff (the other zero) the
	 * sum is 0xffff + 0xffff = 0x1fffe, folded 0xffff: valid too, as Linux's ip_fast_csum and
	 * Wireshark take it (tests/oracle); 0x0001 is not. */
	make_base(WIRE_OP_RC_SEND_ONLY, 4, 40);
	wire_put16(base_frame + 18, 0x7a9a);
	CHECK_EQ(wire_ipv4_checksum(base_frame + 14), 0x0000);
	wire_put16(base_frame + 24, 0x0000);
	p = parse_copy(base_frame, base_len, 0);
	wire_icrc_seal(base_frame, &p); /* the ID is covered by the ICRC */
	CHECK_EQ(parse_copy(base_frame, base_len, RX_FLAGS).kind, WIRE_KIND_ROCE);
	wire_put16(base_frame + 24, 0xffff);
	CHECK_EQ(parse_copy(base_frame, base_len, RX_FLAGS).kind, WIRE_KIND_ROCE);
	wire_put16(base_frame + 24, 0x0001);
	CHECK_EQ(parse_copy(base_frame, base_len, RX_FLAGS).error, WIRE_ERR_IP_CHECKSUM);

	/* the checks run outside in: a first fragment is that whatever its checksum, and the header's
	 * checksum comes before the UDP length */
	make_base(WIRE_OP_RC_SEND_ONLY, 4, 40);
	base_frame[25] ^= 1;
	CHECK_EQ(parse_mutated(base_len, 999, 0, false).kind, WIRE_KIND_ROCE); /* ICRC only: accepted */
	CHECK_EQ(parse_copy(base_frame, base_len, RX_FLAGS).error, WIRE_ERR_IP_CHECKSUM);
	base_frame[39] ^= 4; /* and a wrong UDP length: the IP header is checked first */
	CHECK_EQ(parse_copy(base_frame, base_len, RX_FLAGS).error, WIRE_ERR_IP_CHECKSUM);
	base_frame[39] ^= 4;
	base_frame[20] |= 0x20; /* a first fragment is that, whatever its checksum */
	CHECK_EQ(parse_copy(base_frame, base_len, RX_FLAGS).error, WIRE_ERR_IP_FRAGMENT);
	base_frame[20] &= (uint8_t)~0x20;
	wire_put16(base_frame + 36, 4792); /* not RoCEv2: not checked, other traffic */
	CHECK_EQ(parse_copy(base_frame, base_len, RX_FLAGS).kind, WIRE_KIND_OTHER);
	make_base(WIRE_OP_CNP, 4, 0); /* a CNP is checked as any RoCEv2 datagram */
	base_frame[22] ^= 0x80;       /* TTL: masked in the ICRC */
	CHECK_EQ(parse_copy(base_frame, base_len, WIRE_PARSE_CHECK_ICRC).kind, WIRE_KIND_CNP);
	CHECK_EQ(parse_copy(base_frame, base_len, RX_FLAGS).error, WIRE_ERR_IP_CHECKSUM);
}

/* IPv6 has no header checksum: the flag changes nothing, whatever the bytes where an IPv4
 * header keeps its checksum (hop limit, flow label, addresses). */
static void test_ipv6_unaffected_by_ip_checksum(void)
{
	for (int rep = 0; rep < 64; rep++) {
		struct wire_pkt a, b;

		make_base(rep & 1 ? WIRE_OP_RC_SEND_ONLY : WIRE_OP_CNP, 6, rep & 1 ? 4 * (uint32_t)rep : 0);
		for (int i = 15; i < 14 + 40; i++)
			if (i != 14 + 4 && i != 14 + 5 && i != 14 + 6) /* not the payload length, next header */
				base_frame[i] = (uint8_t)test_rand();
		base_frame[14] = (uint8_t)(0x60 | (base_frame[14] & 0x0F));
		a = parse_copy(base_frame, base_len, 0);
		wire_icrc_seal(base_frame, &a);
		a = parse_copy(base_frame, base_len, RX_FLAGS);
		b = parse_copy(base_frame, base_len, WIRE_PARSE_CHECK_ICRC);
		CHECK(a.kind == WIRE_KIND_ROCE || a.kind == WIRE_KIND_CNP);
		CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	}
}

/* RoCEv2 over an IPv4 header with options: the ICRC rules assume a 20-byte header. */
static void test_ipv4_options_rejected(void)
{
	uint8_t *f;
	struct wire_pkt p;

	make_base(WIRE_OP_RC_SEND_ONLY, 4, 40);
	f = malloc(base_len + 4);
	memcpy(f, base_frame, 34);
	memset(f + 34, 0x01, 4); /* four NOP options */
	memcpy(f + 38, base_frame + 34, base_len - 34);
	f[14] = 0x46;
	wire_put16(f + 16, (uint16_t)(wire_get16(f + 16) + 4));
	CHECK_EQ(wire_parse(f, base_len + 4, WIRE_PARSE_CHECK_ICRC, &p), WIRE_KIND_MALFORMED);
	CHECK_EQ(p.error, WIRE_ERR_IP_OPTIONS);
	f[14 + 6] = 0x20; /* and a first fragment: reported as such */
	wire_parse(f, base_len + 4, 0, &p);
	CHECK_EQ(p.error, WIRE_ERR_IP_FRAGMENT);
	free(f);
}

static void test_malformed_transport(void)
{
	make_base(WIRE_OP_RC_ACK, 4, 0); /* BTH at 42, AETH at 54, ICRC at 58; len 62 */
	CHECK_EQ(parse_mutated(base_len, 999, 0, false).kind, WIRE_KIND_ROCE);
	EXPECT_ERR(parse_mutated(base_len, 43, 0x10, true), WIRE_ERR_BAD_PAD);   /* pad 1 on an ACK */
	make_base(WIRE_OP_RC_SEND_ONLY, 6, 2);
	/* payload 2 + pad 2: claim pad 3 -> still within, pad 3 > 2 bytes? rest is 4: allowed */
	CHECK_EQ(parse_mutated(base_len, 14 + 40 + 8 + 1, 0x30, true).kind, WIRE_KIND_ROCE);
	make_base(WIRE_OP_RC_SEND_ONLY, 6, 0);
	EXPECT_ERR(parse_mutated(base_len, 14 + 40 + 8 + 1, 0x10, true), WIRE_ERR_BAD_PAD); /* pad 1, nothing */
	make_base(WIRE_OP_RC_SEND_FIRST, 4, 64);
	EXPECT_ERR(parse_mutated(base_len, 43, 0x10, true), WIRE_ERR_BAD_PAD); /* pad on a FIRST */
	make_base(WIRE_OP_RC_WRITE_FIRST, 4, 0);                                 /* BTH+RETH = 28 */
	EXPECT_ERR(parse_mutated(base_len, 42, WIRE_OP_RC_COMPARE_SWAP, false), WIRE_ERR_TRUNCATED_BTH);
	make_base(WIRE_OP_CNP, 4, 0);
	CHECK_EQ(parse_mutated(base_len, 999, 0, false).kind, WIRE_KIND_CNP);
	EXPECT_ERR(parse_mutated(base_len, 42, WIRE_OP_RC_ACK, true), WIRE_ERR_BAD_LENGTH); /* ACK + 12 bytes */
	make_base(WIRE_OP_RC_SEND_ONLY, 4, 20);
	EXPECT_ERR(parse_mutated(base_len, 42, WIRE_OP_CNP, true), WIRE_ERR_BAD_CNP); /* CNP + 4 bytes */
	make_base(WIRE_OP_RC_SEND_ONLY, 4, 16);
	CHECK_EQ(parse_mutated(base_len, 42, WIRE_OP_CNP, true).kind, WIRE_KIND_CNP); /* same length as a CNP */
}

static void test_malformed_lengths_not_multiple_of_4(void)
{
	make_base(WIRE_OP_UD_SEND_ONLY, 4, 8);
	/* shrink IP total and UDP length by 2: transport length no longer a multiple of 4 */
	uint8_t *f = malloc(base_len);
	struct wire_pkt p;

	memcpy(f, base_frame, base_len);
	wire_put16(f + 16, (uint16_t)(wire_get16(f + 16) - 2));
	wire_put16(f + 38, (uint16_t)(wire_get16(f + 38) - 2));
	wire_parse(f, base_len, WIRE_PARSE_CHECK_ICRC, &p);
	CHECK_EQ(p.kind, WIRE_KIND_MALFORMED);
	CHECK_EQ(p.error, WIRE_ERR_BAD_LENGTH);
	free(f);
}

/* Every prefix of every kind of frame parses without reading past its end, and a cut frame is
 * never taken for a valid RoCE packet. */
static void test_every_truncation(void)
{
	static uint8_t payload[WIRE_MAX_FRAME];

	for (int op = 0; op < 256; op++) {
		struct wire_roce_spec s;
		struct wire_pkt p;
		size_t len;
		uint8_t *f;

		if (!wire_opcode_info((uint8_t)op))
			continue;
		random_spec(&s, (uint8_t)op, payload);
		s.payload_len = s.payload_len > 100 ? 100 : s.payload_len & ~3u;
		f = build_exact(&s, &len);
		for (size_t cut = 0; cut < wire_roce_frame_len(&s); cut++) {
			uint8_t *g = malloc(cut ? cut : 1);
			memcpy(g, f, cut);
			wire_parse(g, cut, WIRE_PARSE_CHECK_ICRC, &p);
			CHECK(p.kind == WIRE_KIND_MALFORMED);
			free(g);
		}
		free(f);
	}
	uint8_t pfc[60];
	const uint16_t q[8] = {0};
	wire_build_pfc((const uint8_t *)"\2\0\0\0\0\1", NULL, 1, q, pfc, sizeof(pfc));
	for (size_t cut = 14; cut < 34; cut++) {
		struct wire_pkt p;
		uint8_t *g = malloc(cut);
		memcpy(g, pfc, cut);
		CHECK_EQ(wire_parse(g, cut, 0, &p), WIRE_KIND_MALFORMED);
		CHECK_EQ(p.error, WIRE_ERR_TRUNCATED_MAC_CTRL);
		free(g);
	}
	pfc[16] = 1; /* reserved high byte of the class-enable vector */
	struct wire_pkt p;
	CHECK_EQ(wire_parse(pfc, 60, 0, &p), WIRE_KIND_MALFORMED);
	CHECK_EQ(p.error, WIRE_ERR_BAD_MAC_CTRL);
}

/* IPv4 total length 0xfffc in a 65,550-byte buffer: the ICRC lies past offset 65,535. The
 * parser must keep its offsets right (ASan checks it reads nothing outside the buffer). */
static void test_frame_beyond_64k(void)
{
	static const uint8_t hdr[58] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x81, 0x00, 0x00, 0x07, 0x08, 0x00, /* VLAN 7, IPv4 */
		0x45, 0x00, 0xff, 0xfc, 0, 0, 0x40, 0, 0x40, 0x11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0xc0, 0x00, 0x12, 0xb7, 0xff, 0xe8, 0, 0,                               /* UDP 4791 */
		0x04, 0x00, 0xff, 0xff, 0, 0, 0, 0x12, 0, 0, 0, 0};                       /* SEND_ONLY */
	size_t len = 65550;
	uint8_t *f = calloc(1, len);
	struct wire_pkt p;

	memcpy(f, hdr, sizeof(hdr));
	CHECK_EQ(wire_parse(f, len, WIRE_PARSE_CHECK_ICRC, &p), WIRE_KIND_MALFORMED);
	CHECK_EQ(p.error, WIRE_ERR_ICRC);
	CHECK_EQ(p.icrc_off, 18 + 0xfffc - 4);
	CHECK_EQ(p.payload_len, 0xffe8 - 8 - 12 - 4);
	wire_icrc_seal(f, &p);
	CHECK_EQ(wire_parse(f, len, WIRE_PARSE_CHECK_ICRC, &p), WIRE_KIND_ROCE);
	CHECK_EQ(p.icrc_wire, ref_icrc(f + 18, 0xfffc - 4));
	free(f);
}

static void test_other_frames(void)
{
	uint8_t arp[60] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06};
	uint8_t vlan_short[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x81, 0x00, 0x60, 0x64};
	struct wire_pkt p;

	CHECK_EQ(wire_parse(arp, sizeof(arp), 0, &p), WIRE_KIND_OTHER);
	CHECK_EQ(p.ethertype, 0x0806);
	CHECK_EQ(wire_parse(vlan_short, sizeof(vlan_short), 0, &p), WIRE_KIND_MALFORMED);
	CHECK_EQ(p.error, WIRE_ERR_TRUNCATED_L2);
	for (int k = 0; k < WIRE_KIND_COUNT; k++)
		CHECK(strcmp(wire_kind_name((enum wire_kind)k), "?") != 0);
	for (int e = 0; e < WIRE_ERR_COUNT; e++)
		CHECK(wire_error_name((enum wire_error)e) != NULL && strcmp(wire_error_name((enum wire_error)e), "?") != 0);
}

/* PSNs are 24-bit and circular (IBA 9.7.1): arithmetic wraps at 2^24, order is by signed
 * distance below 2^23. */
static void test_psn_arithmetic(void)
{
	CHECK_EQ(WIRE_PSN_MASK, 0xFFFFFF);
	CHECK_EQ(wire_psn_add(0xFFFFFE, 1), 0xFFFFFF);
	CHECK_EQ(wire_psn_add(0xFFFFFF, 1), 0);
	CHECK_EQ(wire_psn_add(0xFFFFF0, 0x20), 0x10);
	CHECK_EQ(wire_psn_sub(0, 1), 0xFFFFFF);
	CHECK_EQ(wire_psn_sub(0x10, 0x20), 0xFFFFF0);
	CHECK_EQ(wire_psn_diff(0, 0xFFFFFF), 1);
	CHECK_EQ(wire_psn_diff(0xFFFFFF, 0), (uint64_t)(int64_t)-1);
	CHECK_EQ(wire_psn_diff(0x10, 0xFFFFF0), 0x20);
	CHECK_EQ(wire_psn_diff(0x7FFFFF, 0), 0x7FFFFF);        /* 2^23 - 1 ahead: after */
	CHECK_EQ(wire_psn_diff(0x800000, 0), (uint64_t)(int64_t)-0x800000); /* 2^23: read as behind */
	CHECK_EQ(wire_psn_offset(2, 0xFFFFFE), 4);
	CHECK_EQ(wire_psn_offset(0xFFFFFE, 2), 0xFFFFFC);
	CHECK(wire_psn_before(0xFFFFFF, 0));
	CHECK(wire_psn_after(0, 0xFFFFFF));
	CHECK(!wire_psn_before(5, 5) && !wire_psn_after(5, 5));
	CHECK(wire_psn_before(0x100, 0x101) && !wire_psn_before(0x101, 0x100));
	CHECK(wire_psn_after(0x400000, 0) && wire_psn_before(0xC00001, 0));
	/* the inputs' bits above 24 do not matter */
	CHECK_EQ(wire_psn_add(0x1FFFFFF, 1), 0);
	CHECK_EQ(wire_psn_diff(0x1000005, 5), 0);
}

/* Opcodes chosen from the table match IBA table 38. */
static void test_opcode_select(void)
{
	static const struct {
		uint8_t transport, oper, pos;
		bool imm;
		int opcode;
	} cases[] = {
		{WIRE_TRANSPORT_RC, WIRE_OPER_SEND, WIRE_POS_FIRST, false, 0x00},
		{WIRE_TRANSPORT_RC, WIRE_OPER_SEND, WIRE_POS_MIDDLE, false, 0x01},
		{WIRE_TRANSPORT_RC, WIRE_OPER_SEND, WIRE_POS_LAST, false, 0x02},
		{WIRE_TRANSPORT_RC, WIRE_OPER_SEND, WIRE_POS_LAST, true, 0x03},
		{WIRE_TRANSPORT_RC, WIRE_OPER_SEND, WIRE_POS_ONLY, false, 0x04},
		{WIRE_TRANSPORT_RC, WIRE_OPER_SEND, WIRE_POS_ONLY, true, 0x05},
		{WIRE_TRANSPORT_RC, WIRE_OPER_WRITE, WIRE_POS_FIRST, false, 0x06},
		{WIRE_TRANSPORT_RC, WIRE_OPER_WRITE, WIRE_POS_MIDDLE, false, 0x07},
		{WIRE_TRANSPORT_RC, WIRE_OPER_WRITE, WIRE_POS_LAST, false, 0x08},
		{WIRE_TRANSPORT_RC, WIRE_OPER_WRITE, WIRE_POS_LAST, true, 0x09},
		{WIRE_TRANSPORT_RC, WIRE_OPER_WRITE, WIRE_POS_ONLY, false, 0x0A},
		{WIRE_TRANSPORT_RC, WIRE_OPER_WRITE, WIRE_POS_ONLY, true, 0x0B},
		{WIRE_TRANSPORT_RC, WIRE_OPER_READ_REQUEST, WIRE_POS_ONLY, false, 0x0C},
		{WIRE_TRANSPORT_RC, WIRE_OPER_READ_RESPONSE, WIRE_POS_FIRST, false, 0x0D},
		{WIRE_TRANSPORT_RC, WIRE_OPER_READ_RESPONSE, WIRE_POS_MIDDLE, false, 0x0E},
		{WIRE_TRANSPORT_RC, WIRE_OPER_READ_RESPONSE, WIRE_POS_LAST, false, 0x0F},
		{WIRE_TRANSPORT_RC, WIRE_OPER_READ_RESPONSE, WIRE_POS_ONLY, false, 0x10},
		{WIRE_TRANSPORT_RC, WIRE_OPER_ACK, WIRE_POS_ONLY, false, 0x11},
		{WIRE_TRANSPORT_RC, WIRE_OPER_ATOMIC_ACK, WIRE_POS_ONLY, false, 0x12},
		{WIRE_TRANSPORT_RC, WIRE_OPER_COMPARE_SWAP, WIRE_POS_ONLY, false, 0x13},
		{WIRE_TRANSPORT_RC, WIRE_OPER_FETCH_ADD, WIRE_POS_ONLY, false, 0x14},
		{WIRE_TRANSPORT_RC, WIRE_OPER_SEND_INV, WIRE_POS_LAST, false, 0x16},
		{WIRE_TRANSPORT_RC, WIRE_OPER_SEND_INV, WIRE_POS_ONLY, false, 0x17},
		{WIRE_TRANSPORT_UC, WIRE_OPER_SEND, WIRE_POS_FIRST, false, 0x20},
		{WIRE_TRANSPORT_UC, WIRE_OPER_SEND, WIRE_POS_ONLY, true, 0x25},
		{WIRE_TRANSPORT_UC, WIRE_OPER_WRITE, WIRE_POS_FIRST, false, 0x26},
		{WIRE_TRANSPORT_UC, WIRE_OPER_WRITE, WIRE_POS_ONLY, false, 0x2A},
		{WIRE_TRANSPORT_UC, WIRE_OPER_WRITE, WIRE_POS_ONLY, true, 0x2B},
		{WIRE_TRANSPORT_UD, WIRE_OPER_SEND, WIRE_POS_ONLY, false, 0x64},
		{WIRE_TRANSPORT_UD, WIRE_OPER_SEND, WIRE_POS_ONLY, true, 0x65},
		{WIRE_TRANSPORT_CNP, WIRE_OPER_CNP, WIRE_POS_ONLY, false, 0x81},
		/* what IBA does not define */
		{WIRE_TRANSPORT_RC, WIRE_OPER_READ_REQUEST, WIRE_POS_FIRST, false, -1},
		{WIRE_TRANSPORT_RC, WIRE_OPER_SEND, WIRE_POS_FIRST, true, -1},
		{WIRE_TRANSPORT_RC, WIRE_OPER_SEND, WIRE_POS_MIDDLE, true, -1},
		{WIRE_TRANSPORT_UC, WIRE_OPER_READ_REQUEST, WIRE_POS_ONLY, false, -1},
		{WIRE_TRANSPORT_UC, WIRE_OPER_ACK, WIRE_POS_ONLY, false, -1},
		{WIRE_TRANSPORT_UD, WIRE_OPER_SEND, WIRE_POS_FIRST, false, -1},
		{WIRE_TRANSPORT_UD, WIRE_OPER_WRITE, WIRE_POS_ONLY, false, -1},
		{WIRE_TRANSPORT_RC, WIRE_OPER_NONE, WIRE_POS_ONLY, false, -1},
		{0x07, WIRE_OPER_SEND, WIRE_POS_ONLY, false, -1}, /* not a transport base */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = wire_opcode_select(cases[i].transport, (enum wire_oper)cases[i].oper,
					     (enum wire_pos)cases[i].pos, cases[i].imm);
		if (got != cases[i].opcode)
			printf("  case %zu: 0x%x\n", i, (unsigned)got);
		CHECK_EQ(got, cases[i].opcode);
	}
	CHECK_EQ(wire_pos_of(true, false), WIRE_POS_FIRST);
	CHECK_EQ(wire_pos_of(false, false), WIRE_POS_MIDDLE);
	CHECK_EQ(wire_pos_of(false, true), WIRE_POS_LAST);
	CHECK_EQ(wire_pos_of(true, true), WIRE_POS_ONLY);
	/* every row is found again from what it does: selection and the table agree */
	for (int op = 0; op < 256; op++) {
		const struct wire_opcode_info *row = wire_opcode_info((uint8_t)op);
		if (!row)
			continue;
		CHECK(row->oper != WIRE_OPER_NONE && row->oper < WIRE_OPER_COUNT);
		CHECK_EQ(wire_opcode_select((uint8_t)(op & 0xE0), (enum wire_oper)row->oper, wire_opcode_pos(row),
					    (row->flags & WIRE_OPF_IMM) != 0), op);
	}
}

/* AETH syndromes (IBA 9.7.5.2.1): ACK 0x00-0x1F (credit code), RNR NAK 0x20-0x3F (timer
 * code), NAK 0x60-0x7F (NAK code). */
static void test_aeth_syndromes(void)
{
	CHECK_EQ(wire_aeth_ack(0), 0x00);
	CHECK_EQ(wire_aeth_ack(WIRE_AETH_CREDITS_INVALID), 0x1F);
	CHECK_EQ(wire_aeth_rnr_nak(0), 0x20);
	CHECK_EQ(wire_aeth_rnr_nak(14), 0x2E);
	CHECK_EQ(wire_aeth_rnr_nak(31), 0x3F);
	CHECK_EQ(wire_aeth_nak(WIRE_NAK_PSN_SEQ_ERR), 0x60);
	CHECK_EQ(wire_aeth_nak(WIRE_NAK_INVALID_REQ), 0x61);
	CHECK_EQ(wire_aeth_nak(WIRE_NAK_REM_ACCESS_ERR), 0x62);
	CHECK_EQ(wire_aeth_nak(WIRE_NAK_REM_OP_ERR), 0x63);
	CHECK_EQ(wire_aeth_nak(WIRE_NAK_INV_RD_REQ), 0x64);
	CHECK_EQ(WIRE_AETH_NAK_PSN_SEQ_ERR, 0x60);
	CHECK_EQ(WIRE_AETH_NAK_INV_RD_REQ, 0x64);
	for (unsigned s = 0; s < 256; s++) {
		uint8_t syn = (uint8_t)s;
		CHECK_EQ(wire_aeth_is_ack(syn), s <= 0x1F);
		CHECK_EQ(wire_aeth_is_rnr_nak(syn), s >= 0x20 && s <= 0x3F);
		CHECK_EQ(wire_aeth_is_nak(syn), s >= 0x60 && s <= 0x7F);
		CHECK_EQ(wire_aeth_value(syn), s & 0x1F);
		CHECK_EQ(wire_aeth_type(syn), s & 0xE0);
	}
	CHECK(!strcmp(wire_aeth_syndrome_name(0x1F), "ACK"));
	CHECK(!strcmp(wire_aeth_syndrome_name(0x2E), "RNR_NAK"));
	CHECK(!strcmp(wire_aeth_syndrome_name(0x60), "NAK_PSN_SEQ_ERR"));
	CHECK(!strcmp(wire_aeth_syndrome_name(0x65), "NAK_RESERVED"));
	CHECK(!strcmp(wire_aeth_syndrome_name(0x40), "RESERVED"));
	/* IBA table 45: RNR timer codes (microseconds) */
	CHECK_EQ(wire_aeth_rnr_timer_us(0x20), 655360);
	CHECK_EQ(wire_aeth_rnr_timer_us(0x21), 10);
	CHECK_EQ(wire_aeth_rnr_timer_us(0x25), 60);
	CHECK_EQ(wire_aeth_rnr_timer_us(0x2E), 1280);
	CHECK_EQ(wire_aeth_rnr_timer_us(0x32), 5120);  /* code 18: 5.12 ms */
	CHECK_EQ(wire_aeth_rnr_timer_us(0x34), 10240); /* code 20: 10.24 ms */
	CHECK_EQ(wire_aeth_rnr_timer_us(0x3F), 491520);
	CHECK_EQ(wire_aeth_rnr_timer_us(14), 1280); /* a bare timer code reads the same */
	/* IBA table 44: credit counts */
	CHECK_EQ(wire_aeth_credits(0), 0);
	CHECK_EQ(wire_aeth_credits(4), 4);
	CHECK_EQ(wire_aeth_credits(5), 6);
	CHECK_EQ(wire_aeth_credits(7), 12);
	CHECK_EQ(wire_aeth_credits(10), 32);
	CHECK_EQ(wire_aeth_credits(20), 1024);
	CHECK_EQ(wire_aeth_credits(30), 32768);
	CHECK_EQ(wire_aeth_credits(WIRE_AETH_CREDITS_INVALID), UINT32_MAX);
	/* the 4-byte header: syndrome, then the 24-bit MSN */
	uint8_t b[4];
	wire_aeth_put(b, (struct wire_aeth){.syndrome = 0x60, .msn = 0x1ABCDEF});
	CHECK(b[0] == 0x60 && b[1] == 0xAB && b[2] == 0xCD && b[3] == 0xEF);
	struct wire_aeth a = wire_aeth_get(b);
	CHECK(a.syndrome == 0x60 && a.msn == 0xABCDEF);
}

int main(void)
{
	wire_crc_init();
	RUN(test_crc32_check_value);
	RUN(test_crc_shift_table_matches_zlib);
	RUN(test_icrc_golden_vectors);
	RUN(test_icrc_every_crc_algorithm);
	RUN(test_icrc_masked_fields_ignored);
	RUN(test_opcode_table);
	RUN(test_psn_arithmetic);
	RUN(test_opcode_select);
	RUN(test_aeth_syndromes);
	RUN(test_roundtrip_every_opcode);
	RUN(test_headers_only_parse);
	RUN(test_icrc_many_matches_reference);
	RUN(test_parse_burst_matches_parse);
	RUN(test_build_rejects_bad_specs);
	RUN(test_incremental_matches_full);
	RUN(test_incremental_long_region);
	RUN(test_pfc_and_pause_bytes);
	RUN(test_udp_sport_entropy);
	RUN(test_malformed_ipv4);
	RUN(test_ipv4_header_checksum);
	RUN(test_ipv6_unaffected_by_ip_checksum);
	RUN(test_ipv4_options_rejected);
	RUN(test_malformed_transport);
	RUN(test_malformed_lengths_not_multiple_of_4);
	RUN(test_every_truncation);
	RUN(test_frame_beyond_64k);
	RUN(test_other_frames);
	return testlib_finish("test_wire");
}

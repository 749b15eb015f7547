/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target for wire_parse(): any byte string is a frame. Beyond the sanitizers' own
 * checks (the input sits in an exactly-sized heap buffer, so ASan catches any read past it):
 *  - every verdict is self-consistent (kind/error, offsets, lengths, opcode row);
 *  - a RoCEv2 frame whose ICRC verified comes back byte-identical from wire_icrc_seal();
 *  - every rte_net_crc implementation (scalar, SSE4.2, AVX-512) gives the same ICRC;
 *  - without the IPv4 header checksum check the verdict is the same, byte for byte, unless it was
 *    ip_checksum, which only a RoCEv2 datagram over IPv4 whose header words do not sum to 0xffff
 *    gets (the sum computed here, byte by byte);
 *  - parsed again without the ICRC check, the verdict is the same but for ICRC mismatches, and
 *    a RoCE/CNP frame sealed with wire_icrc_seal() then parses as such with its ICRC verified
 *    (this lets mutated headers reach the RoCE paths without the fuzzer forging CRCs);
 *  - wire_icrc_patch() and wire_icrc_field_update() agree with a full ICRC after a PSN rewrite;
 *  - wire_parse_burst() (the RX path's, ICRCs of short frames eight at a time) leaves the same
 *    record as wire_parse().
 * Every violated invariant prints itself and traps.
 *
 * Build: see tests/fuzz/meson.build (-Dfuzzing=true, clang). Replay inputs:
 *   build-fuzz/tests/fuzz/fuzz_parse FILE...
 * Fuzz (never point it at tests/fuzz/corpus/parse itself: libFuzzer writes into it):
 *   tests/fuzz/run_fuzz.sh build-fuzz/tests/fuzz/fuzz_parse tests/fuzz/corpus/parse -max_total_time=600
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_net_crc.h>
#include <rte_vect.h>

#include "wire.h"

#include "fuzz_require.h"
#include "fuzz_sanitizers.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static enum rte_net_crc_alg default_alg = RTE_NET_CRC_SCALAR;

#define RX_FLAGS (WIRE_PARSE_CHECK_ICRC | WIRE_PARSE_CHECK_IP_CSUM) /* as the engine's RX path parses */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *name;

	(void)argc;
	(void)argv;
	/* Without rte_eal_init() EAL's SIMD limit reads as 0 and rte_net_crc refuses every vector
	 * implementation; raise it so the fuzzer exercises the ones the CPU has. */
	rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
	name = wire_crc_init();
	fprintf(stderr, "fuzz_parse: rte_net_crc algorithm %s\n", name);
	if (strcmp(name, "avx512") == 0)
		default_alg = RTE_NET_CRC_AVX512;
	else if (strcmp(name, "sse42") == 0)
		default_alg = RTE_NET_CRC_SSE42;
#ifdef RTE_ARCH_ARM64
	else if (strcmp(name, "neon") == 0)
		default_alg = RTE_NET_CRC_NEON;
#endif
	return 0;
}

/* Things that must hold of any RoCE / CNP verdict; `checked`: parsed with WIRE_PARSE_CHECK_ICRC. */
static void check_transport(const uint8_t *buf, size_t size, const struct wire_pkt *p, bool checked)
{
	struct wire_ext_hdrs ext;

	REQUIRE(p->roce_version == 1 || p->roce_version == 2);
	REQUIRE(p->bth_off < p->payload_off);
	REQUIRE(p->payload_off <= p->icrc_off);
	REQUIRE((size_t)p->icrc_off + WIRE_ICRC_LEN <= size);
	REQUIRE(p->frame_len == (uint32_t)p->icrc_off + WIRE_ICRC_LEN);
	REQUIRE((size_t)p->payload_off + p->payload_len + p->bth.pad == p->icrc_off);
	REQUIRE(p->op != NULL && p->op->name != NULL);
	REQUIRE(p->op == wire_opcode_info(p->bth.opcode));
	REQUIRE(p->op->hdr_len == p->payload_off - p->bth_off);
	REQUIRE(((p->op->flags & WIRE_OPF_CNP) != 0) == (p->kind == WIRE_KIND_CNP));
	REQUIRE(p->bth.pad <= 3);
	REQUIRE(p->icrc_wire == wire_icrc_load(buf + p->icrc_off));
	if (checked) {
		REQUIRE(p->icrc_checked);
		REQUIRE(p->icrc_calc == p->icrc_wire);
	} else {
		REQUIRE(!p->icrc_checked);
	}
	if (p->roce_version == 2) {
		REQUIRE(p->l3_off < p->l4_off && p->l4_off + WIRE_UDP_HLEN == p->bth_off);
		REQUIRE(p->udp.dport == WIRE_ROCEV2_UDP_PORT);
		REQUIRE((size_t)p->l4_off + p->udp.len == p->frame_len);
	} else {
		REQUIRE(p->l3_off + WIRE_IPV6_HLEN == p->bth_off);
	}

	/* The extended headers lie between the BTH and the payload: ASan catches a stray read. */
	wire_ext_read(buf + p->bth_off, p->op, &ext);
	for (unsigned e = 0; e < WIRE_EXT_COUNT; e++) {
		if (p->op->ext_mask & WIRE_EXT_BIT(e)) {
			REQUIRE(p->op->offset[e] >= WIRE_BTH_LEN);
			REQUIRE(p->op->offset[e] + wire_ext_len((enum wire_ext)e) <= p->op->hdr_len);
			REQUIRE(wire_ext_name((enum wire_ext)e) != NULL);
		}
	}
	(void)wire_aeth_syndrome_name(ext.aeth.syndrome);
}

static uint32_t full_icrc(const uint8_t *frame, const struct wire_pkt *p)
{
	size_t covered = (size_t)p->icrc_off - p->l3_off;

	return p->roce_version == 1 ? wire_icrc_v1(frame + p->l3_off, covered) : wire_icrc(frame + p->l3_off, covered);
}

/* Re-sealing a frame whose ICRC verified must not change a byte (RoCEv2). */
static void check_reseal_identity(const uint8_t *buf, size_t size, const struct wire_pkt *p)
{
	uint8_t *copy = malloc(size);

	REQUIRE(copy != NULL);
	memcpy(copy, buf, size);
	wire_icrc_seal(copy, p);
	REQUIRE(memcmp(copy, buf, size) == 0);
	free(copy);
}

/* A frame that is RoCE / CNP but for its ICRC becomes exactly that once sealed: same verdict,
 * same offsets, ICRC verified; only the four ICRC bytes change. */
static void check_seal_then_parse(const uint8_t *buf, size_t size, const struct wire_pkt *p)
{
	uint8_t *copy = malloc(size);
	struct wire_pkt q;

	REQUIRE(copy != NULL);
	memcpy(copy, buf, size);
	wire_icrc_seal(copy, p);
	REQUIRE(memcmp(copy, buf, p->icrc_off) == 0);
	REQUIRE(memcmp(copy + p->icrc_off + WIRE_ICRC_LEN, buf + p->icrc_off + WIRE_ICRC_LEN,
		       size - p->icrc_off - WIRE_ICRC_LEN) == 0);
	REQUIRE(wire_parse(copy, size, WIRE_PARSE_CHECK_ICRC, &q) == (enum wire_kind)p->kind);
	REQUIRE(q.icrc_checked && q.icrc_calc == q.icrc_wire);
	REQUIRE(q.icrc_calc == full_icrc(copy, p));
	REQUIRE(q.bth_off == p->bth_off && q.payload_off == p->payload_off && q.icrc_off == p->icrc_off);
	REQUIRE(q.payload_len == p->payload_len && q.op == p->op && q.roce_version == p->roce_version);
	free(copy);
}

/* The incremental update agrees with a full recomputation: rewrite the PSN (RoCEv2). */
static void check_incremental(const uint8_t *buf, size_t size, const struct wire_pkt *p)
{
	uint8_t *copy = malloc(size);
	uint8_t old[3], *psn;
	size_t tail = (size_t)p->icrc_off - (p->bth_off + 9u + 3u);
	uint32_t before, patched;
	struct wire_icrc_field f;

	REQUIRE(copy != NULL);
	memcpy(copy, buf, size);
	before = full_icrc(copy, p);
	psn = copy + p->bth_off + 9;
	memcpy(old, psn, 3);
	wire_bth_set_psn(copy + p->bth_off, (p->bth.psn + 0x5A5A5) & WIRE_PSN_MASK);
	patched = wire_icrc_patch(before, old, psn, 3, wire_crc_shift_for(tail));
	REQUIRE(patched == full_icrc(copy, p));
	REQUIRE(wire_icrc_field_init(&f, 3, tail) == 0);
	REQUIRE(wire_icrc_field_update(&f, before, old, psn) == patched);
	free(copy);
}

/* The ICRC must not depend on which rte_net_crc implementation computed it. */
static void check_crc_algs(const uint8_t *buf, const struct wire_pkt *p, uint32_t expect)
{
	static const enum rte_net_crc_alg algs[] = {RTE_NET_CRC_SCALAR, RTE_NET_CRC_SSE42, RTE_NET_CRC_AVX512};

	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
		/* an algorithm this CPU lacks falls back to another; the result must still agree */
		rte_net_crc_set_alg(algs[i]);
		REQUIRE(full_icrc(buf, p) == expect);
	}
	rte_net_crc_set_alg(default_alg); /* back to wire_crc_init()'s choice */
}

/* Invariants of any verdict. */
static void check_common(enum wire_kind k, const struct wire_pkt *p, size_t size)
{
	REQUIRE(k == (enum wire_kind)p->kind);
	REQUIRE(p->kind < WIRE_KIND_COUNT);
	REQUIRE(p->error < WIRE_ERR_COUNT);
	REQUIRE((p->error == WIRE_ERR_NONE) == (p->kind != WIRE_KIND_MALFORMED));
	REQUIRE(wire_kind_name((enum wire_kind)p->kind) != NULL);
	REQUIRE(wire_error_name((enum wire_error)p->error) != NULL);
	REQUIRE(strcmp(wire_kind_name((enum wire_kind)p->kind), "?") != 0);
	REQUIRE(strcmp(wire_error_name((enum wire_error)p->error), "?") != 0);
	REQUIRE(p->l2.pcp <= 7 && p->l2.vid <= 0xFFF);
	REQUIRE(p->ip.dscp <= 63 && p->ip.ecn <= 3 && p->ip.flow_label <= 0xFFFFF);
	REQUIRE(p->bth.psn <= WIRE_PSN_MASK && p->bth.dqpn <= WIRE_QPN_MASK);
	switch (p->kind) {
	case WIRE_KIND_PFC:
	case WIRE_KIND_PAUSE:
		REQUIRE(p->frame_len <= size);
		REQUIRE(p->op == NULL);
		break;
	case WIRE_KIND_OTHER:
		REQUIRE(p->op == NULL);
		break;
	default:
		break;
	}
}

/* RFC 1071 over the 20 bytes at ip, written out again (the parser uses DPDK's rte_raw_cksum). */
static bool ipv4_sum_ok(const uint8_t *ip)
{
	uint32_t sum = 0;

	for (int i = 0; i < WIRE_IPV4_HLEN; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return sum == 0xFFFF;
}

/* p: with the IPv4 checksum check; c: the same frame without it. */
static void check_ip_checksum(const uint8_t *buf, size_t size, const struct wire_pkt *p, const struct wire_pkt *c)
{
	bool v4_roce = c->ip.version == 4 && c->ethertype == WIRE_ETHERTYPE_IPV4 && c->l4_off == c->l3_off + WIRE_IPV4_HLEN &&
		       c->udp.dport == WIRE_ROCEV2_UDP_PORT && (size_t)c->l3_off + WIRE_IPV4_HLEN <= size;

	if (p->error != WIRE_ERR_IP_CHECKSUM) {
		REQUIRE(memcmp(p, c, sizeof(*p)) == 0);
		/* a RoCEv2 IPv4 datagram that got past the check has a good sum */
		if (v4_roce && (c->kind == WIRE_KIND_ROCE || c->kind == WIRE_KIND_CNP))
			REQUIRE(ipv4_sum_ok(buf + c->l3_off));
		return;
	}
	REQUIRE(p->kind == WIRE_KIND_MALFORMED && !p->icrc_checked);
	REQUIRE(v4_roce && !ipv4_sum_ok(buf + c->l3_off));
	REQUIRE(c->kind != WIRE_KIND_OTHER);
}

static void check_burst(const uint8_t *buf, size_t size, const struct wire_pkt *p, const struct wire_pkt *unchecked)
{
	const uint8_t *frames[2] = {buf, buf};
	uint32_t lens[2] = {(uint32_t)size, (uint32_t)size};
	struct wire_pkt burst[2], sealed_p;
	uint8_t *sealed = NULL;
	unsigned n = 1;

	if (unchecked) {
		sealed = malloc(size);
		REQUIRE(sealed != NULL);
		memcpy(sealed, buf, size);
		wire_icrc_seal(sealed, unchecked);
		frames[1] = sealed;
		n = 2;
	}
	wire_parse_burst(frames, lens, n, RX_FLAGS, burst);
	REQUIRE(memcmp(&burst[0], p, sizeof(*p)) == 0);
	if (sealed) {
		wire_parse(sealed, size, RX_FLAGS, &sealed_p);
		REQUIRE(memcmp(&burst[1], &sealed_p, sizeof(sealed_p)) == 0);
		free(sealed);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_pkt r, p, u;
	uint8_t *buf = malloc(size ? size : 1);
	enum wire_kind k, ku;

	if (buf == NULL)
		return 0;
	if (size)
		memcpy(buf, data, size);

	/* 0. As the receive path parses: the IPv4 checksum, then the ICRC. */
	check_common(wire_parse(buf, size, RX_FLAGS, &r), &r, size);

	/* 1. With the ICRC check only. */
	k = wire_parse(buf, size, WIRE_PARSE_CHECK_ICRC, &p);
	check_common(k, &p, size);
	check_ip_checksum(buf, size, &r, &p);
	if (p.kind == WIRE_KIND_ROCE || p.kind == WIRE_KIND_CNP) {
		check_transport(buf, size, &p, true);
		if (p.roce_version == 2 && p.kind == WIRE_KIND_ROCE)
			check_reseal_identity(buf, size, &p);
		if (size < 2048) /* keeps the run fast; large frames are covered by the seeds */
			check_crc_algs(buf, &p, p.icrc_calc);
	} else if (p.kind == WIRE_KIND_MALFORMED && p.error == WIRE_ERR_ICRC) {
		REQUIRE(p.icrc_checked && p.icrc_calc != p.icrc_wire);
	}

	/* 2. Without it: mutated headers reach the RoCE paths without the fuzzer forging a CRC. The
	 * verdict is the same except that an ICRC mismatch is no longer seen. */
	ku = wire_parse(buf, size, 0, &u);
	check_common(ku, &u, size);
	REQUIRE(!u.icrc_checked);
	if (p.kind == WIRE_KIND_MALFORMED && p.error == WIRE_ERR_ICRC)
		REQUIRE(u.kind == WIRE_KIND_ROCE || u.kind == WIRE_KIND_CNP);
	else
		REQUIRE(u.kind == p.kind && u.error == p.error);
	if (u.kind == WIRE_KIND_ROCE || u.kind == WIRE_KIND_CNP) {
		check_transport(buf, size, &u, false);
		check_seal_then_parse(buf, size, &u);
		if (u.roce_version == 2 && u.kind == WIRE_KIND_ROCE)
			check_incremental(buf, size, &u);
	}

	/* 3. As the engine's RX path parses a burst: the same record as (0), byte for byte, whether the
	 * ICRC came from a lane of wire_icrc_many or from wire_icrc (the frame alone in a burst, and
	 * beside a sealed copy of itself, which reaches the RoCE paths). */
	check_burst(buf, size, &r, (u.kind == WIRE_KIND_ROCE || u.kind == WIRE_KIND_CNP) ? &u : NULL);

	free(buf);
	return 0;
}

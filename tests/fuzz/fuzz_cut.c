/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target for roce-pcap's reading of frames a capture cut short (frame_cut_parse(),
 * apps/roce_pcap/frame_cut.c): any byte string is a frame, cut at every length up to 160 bytes
 * and at its last eight. For each cut:
 *  - only the captured bytes are read: they sit in an exactly-sized heap buffer (ASan);
 *  - a cut never invents a defect: a cut frame is malformed only if the whole frame is, with the
 *    same error, so a well-formed frame cut anywhere is not malformed; its ICRC is checked only
 *    when all of the datagram was captured;
 *  - what the cut leaves out is not reported: no BTH once the cut is in or before it, no UDP
 *    header before the parser's six bytes of it, no IP header before its end; what it keeps of
 *    a RoCE frame is the whole frame's (kind, BTH), or RoCEv2 by its UDP port alone.
 * A frame whose headers are RoCE's but whose ICRC is wrong is sealed first (wire_icrc_seal), so
 * the well-formed paths are reached without the fuzzer forging CRCs. Every violated invariant
 * prints itself and traps.
 *
 * Build: see tests/fuzz/meson.build (-Dfuzzing=true, clang). Replay inputs:
 *   build-fuzz/tests/fuzz/fuzz_cut FILE...
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_vect.h>

#include "frame_cut.h"
#include "wire.h"

#include "fuzz_require.h"
#include "fuzz_sanitizers.h"

#define CUT_EVERY_BYTE_UP_TO 160

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
	wire_crc_init();
	return 0;
}

static void check_cut(const uint8_t *frame, uint32_t len, uint32_t caplen, const struct wire_pkt *whole)
{
	uint8_t *captured = malloc(caplen ? caplen : 1);
	struct frame_cut cut;
	struct wire_pkt p;

	REQUIRE(captured != NULL);
	memcpy(captured, frame, caplen);
	frame_cut_parse(captured, caplen, len, WIRE_PARSE_CHECK_ICRC, &p, &cut);
	free(captured);
	REQUIRE(cut.caplen == caplen && cut.len == len);
	REQUIRE((cut.place == CUT_NONE) == (caplen >= len));
	/* what the checks read of a UDP header are its first six bytes: a cut in its checksum */
	REQUIRE(cut.unchecked == cut.place ||
		(cut.place == CUT_L4 && (cut.unchecked == CUT_BTH || cut.unchecked == CUT_AFTER)));
	if (cut.place == CUT_NONE) {
		REQUIRE(p.kind == whole->kind && p.error == whole->error);
		return;
	}
	if (p.kind == WIRE_KIND_MALFORMED) {
		REQUIRE(whole->kind == WIRE_KIND_MALFORMED && p.error == whole->error);
		return;
	}
	if (p.icrc_checked) /* only from the datagram itself */
		REQUIRE(cut.place == CUT_AFTER && (uint64_t)p.icrc_off + WIRE_ICRC_LEN <= caplen);
	if (p.bth_off)
		REQUIRE(p.bth_off + WIRE_BTH_LEN <= caplen && p.bth_off == whole->bth_off);
	if (p.l4_off)
		REQUIRE(p.l4_off + 6 <= caplen && p.l4_off == whole->l4_off);
	if (p.ip.version == 4)
		REQUIRE(p.l3_off + WIRE_IPV4_HLEN <= caplen);
	if (p.ip.version == 6)
		REQUIRE(p.l3_off + WIRE_IPV6_HLEN <= caplen);
	if (whole->kind == WIRE_KIND_ROCE || whole->kind == WIRE_KIND_CNP) {
		if (caplen >= whole->bth_off + WIRE_BTH_LEN)
			REQUIRE(p.kind == whole->kind && p.bth.psn == whole->bth.psn && p.bth.dqpn == whole->bth.dqpn);
		else if (caplen >= whole->l4_off + 6 && whole->roce_version == 2)
			REQUIRE(p.kind == WIRE_KIND_ROCE && !p.bth_off && cut.unchecked == CUT_BTH);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *frame;
	struct wire_pkt whole;
	uint32_t len;

	if (size > 65536)
		return 0;
	len = (uint32_t)size;
	frame = malloc(size ? size : 1);
	REQUIRE(frame != NULL);
	memcpy(frame, data, size);
	wire_parse(frame, size, WIRE_PARSE_CHECK_ICRC, &whole);
	if (whole.kind == WIRE_KIND_MALFORMED && whole.error == WIRE_ERR_ICRC) {
		wire_icrc_seal(frame, &whole);
		wire_parse(frame, size, WIRE_PARSE_CHECK_ICRC, &whole);
		REQUIRE(whole.kind == WIRE_KIND_ROCE || whole.kind == WIRE_KIND_CNP);
	}
	for (uint32_t n = 0; n <= len && n <= CUT_EVERY_BYTE_UP_TO; n++)
		check_cut(frame, len, n, &whole);
	for (uint32_t n = len > 8 ? len - 8 : 0; n <= len; n++)
		if (n > CUT_EVERY_BYTE_UP_TO)
			check_cut(frame, len, n, &whole);
	free(frame);
	return 0;
}

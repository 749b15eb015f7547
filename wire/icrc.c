/* SPDX-License-Identifier: BSD-3-Clause
 *
 * ICRC (InfiniBand invariant CRC as RoCEv2 carries it, IBA Annex A17):
 *   CRC-32/IEEE 802.3 over  8 x 0xFF | IP header (variant fields = 1s) | UDP (checksum = 1s) |
 *                           BTH (byte 4 = 1s) | extended headers | payload | pad
 * stored least-significant byte first.
 *
 * The bulk CRC is DPDK's rte_net_crc (SIMD when EAL allows). rte_net_crc has no seed argument,
 * so the masked prefix is CRC'd from a small scratch copy and the rest in place, and the two are
 * joined with zlib's crc32_combine_op (CRC(A|B) = CRC(A)*x^(8|B|) ^ CRC(B)): no payload copy.
 */
#include <string.h>

#include <rte_cpuflags.h>
#include <rte_net_crc.h>
#include <rte_vect.h>
#include <zlib.h>

#include "icrc_internal.h"
#include "wire.h"

/* Longest masked prefix: pseudo-LRH + IPv6 + UDP + BTH. */
#define MASKED_PREFIX_MAX (ICRC_PSEUDO_LRH_LEN + WIRE_IPV6_HLEN + WIRE_UDP_HLEN + WIRE_BTH_LEN)
/* Below this many bytes after the prefix, one copy and one CRC beat CRC + combine. */
#define COPY_THRESHOLD 192

static const char *crc_alg_name = "scalar";

/* x^(8n) mod P comes from icrc_shift_by_len (built at compile time) for every length a frame
 * can have after the masked prefix: saves the ~30 ns crc32_combine_gen64 would cost per ICRC. */
static uint32_t shift_for_len(size_t n)
{
	if (n <= WIRE_MAX_FRAME)
		return icrc_shift_by_len[n];
	return (uint32_t)crc32_combine_gen64((z_off64_t)n);
}

static const char *pick_crc_alg(uint16_t simd);

const char *wire_crc_init(void)
{
	uint16_t simd = rte_vect_get_max_simd_bitwidth();

	if (simd == 0) {
		/* Before rte_eal_init (tools, unit tests) EAL has no SIMD policy yet and the limit
		 * reads 0: allow what the CPU has rather than fall back to the byte-wise table. */
		if (rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512) == 0)
			simd = RTE_VECT_SIMD_512;
	}
	icrc_lanes_init(simd);
	return pick_crc_alg(simd);
}

/* Mirrors rte_net_crc's own admission rules so the name we report is the one it uses. */
static const char *pick_crc_alg(uint16_t simd)
{
#ifdef RTE_ARCH_X86
	if (simd >= RTE_VECT_SIMD_512 && rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512F) > 0 &&
	    rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512BW) > 0 &&
	    rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512DQ) > 0 &&
	    rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512VL) > 0 &&
	    rte_cpu_get_flag_enabled(RTE_CPUFLAG_VPCLMULQDQ) > 0) {
		rte_net_crc_set_alg(RTE_NET_CRC_AVX512);
		crc_alg_name = "avx512";
		return crc_alg_name;
	}
	if (simd >= RTE_VECT_SIMD_128 && rte_cpu_get_flag_enabled(RTE_CPUFLAG_PCLMULQDQ) > 0) {
		rte_net_crc_set_alg(RTE_NET_CRC_SSE42);
		crc_alg_name = "sse42";
		return crc_alg_name;
	}
#elif defined(RTE_ARCH_ARM64)
	if (simd >= RTE_VECT_SIMD_128 && rte_cpu_get_flag_enabled(RTE_CPUFLAG_PMULL) > 0) {
		rte_net_crc_set_alg(RTE_NET_CRC_NEON);
		crc_alg_name = "neon";
		return crc_alg_name;
	}
#endif
	(void)simd;
	rte_net_crc_set_alg(RTE_NET_CRC_SCALAR);
	crc_alg_name = "scalar";
	return crc_alg_name;
}

const char *wire_crc_alg_name(void) { return crc_alg_name; }

uint32_t wire_crc32(const void *data, size_t len)
{
	return rte_net_crc_calc(data, (uint32_t)len, RTE_NET_CRC32_ETH);
}

static uint32_t icrc_common(const uint8_t *l3, size_t covered, bool rocev1)
{
	uint8_t buf[MASKED_PREFIX_MAX + COPY_THRESHOLD];
	size_t prefix = icrc_masked_prefix(buf, l3, rocev1);
	size_t done = prefix - ICRC_PSEUDO_LRH_LEN;
	size_t rest = covered > done ? covered - done : 0;

	if (rest <= COPY_THRESHOLD) {
		memcpy(buf + prefix, l3 + done, rest);
		return wire_crc32(buf, prefix + rest);
	}
	return (uint32_t)crc32_combine_op(wire_crc32(buf, prefix), wire_crc32(l3 + done, rest), shift_for_len(rest));
}

uint32_t wire_icrc(const uint8_t *l3, size_t covered) { return icrc_common(l3, covered, false); }

uint32_t wire_icrc_v1(const uint8_t *grh, size_t covered) { return icrc_common(grh, covered, true); }

void wire_icrc_many(const uint8_t *const l3[], const uint32_t covered[], const bool rocev1[], unsigned n,
		    uint32_t out[])
{
	const uint8_t *lane_l3[WIRE_ICRC_MANY_MAX];
	uint32_t lane_cov[WIRE_ICRC_MANY_MAX], lane_out[WIRE_ICRC_MANY_MAX];
	bool lane_v1[WIRE_ICRC_MANY_MAX];
	unsigned lane_of[WIRE_ICRC_MANY_MAX], k = 0;

	for (unsigned i = 0; i < n; i++) {
		if (covered[i] > ICRC_LANE_COVERED_MAX || k == WIRE_ICRC_MANY_MAX) {
			out[i] = icrc_common(l3[i], covered[i], rocev1[i]);
			continue;
		}
		lane_l3[k] = l3[i];
		lane_cov[k] = covered[i];
		lane_v1[k] = rocev1[i];
		lane_of[k++] = i;
	}
	if (k == 0)
		return;
	if (!icrc_lanes(lane_l3, lane_cov, lane_v1, k, lane_out)) /* no lanes on this machine */
		for (unsigned j = 0; j < k; j++)
			lane_out[j] = icrc_common(lane_l3[j], lane_cov[j], lane_v1[j]);
	for (unsigned j = 0; j < k; j++)
		out[lane_of[j]] = lane_out[j];
}

const char *wire_icrc_method(void) { return icrc_lanes_available() ? "8 frames at a time (AVX2 + VPCLMULQDQ)" : "one frame at a time"; }

void wire_icrc_seal(uint8_t *frame, const struct wire_pkt *p)
{
	size_t covered = (size_t)p->icrc_off - p->l3_off;
	uint32_t icrc = p->roce_version == 1 ? wire_icrc_v1(frame + p->l3_off, covered)
					      : wire_icrc(frame + p->l3_off, covered);
	wire_icrc_store(frame + p->icrc_off, icrc);
}

/* ---- incremental ------------------------------------------------------------------------- */

wire_crc_shift wire_crc_shift_for(size_t tail) { return shift_for_len(tail); }

/* CRC register contents after feeding `bytes` into a zero register, no final inversion: the
 * linear part of the CRC, which is what a difference of two messages contributes. */
static uint32_t raw_crc(const uint8_t *bytes, size_t k)
{
	return ~(uint32_t)crc32(0xFFFFFFFFUL, bytes, (uInt)k);
}

static uint32_t shift_raw(uint32_t raw, wire_crc_shift shift)
{
	return (uint32_t)crc32_combine_op(raw, 0, shift);
}

uint32_t wire_icrc_patch(uint32_t icrc, const uint8_t *old_bytes, const uint8_t *new_bytes, size_t k,
			 wire_crc_shift shift)
{
	uint8_t delta[64];
	uint32_t raw = 0;

	while (k > 0) {
		size_t n = k < sizeof(delta) ? k : sizeof(delta);
		for (size_t i = 0; i < n; i++)
			delta[i] = old_bytes[i] ^ new_bytes[i];
		raw = ~(uint32_t)crc32(~raw & 0xFFFFFFFFUL, delta, (uInt)n); /* continue the raw CRC */
		k -= n;
		old_bytes += n;
		new_bytes += n;
	}
	return icrc ^ shift_raw(raw, shift);
}

int wire_icrc_field_init(struct wire_icrc_field *f, unsigned width, size_t tail)
{
	if (width == 0 || width > WIRE_ICRC_FIELD_MAX)
		return -1;
	f->width = (uint8_t)width;
	for (unsigned i = 0; i < width; i++) {
		/* byte i of the field is followed by (width - 1 - i) field bytes and the tail */
		wire_crc_shift s = wire_crc_shift_for(tail + width - 1 - i);
		for (unsigned v = 0; v < 256; v++) {
			uint8_t b = (uint8_t)v;
			f->table[i][v] = shift_raw(raw_crc(&b, 1), s);
		}
	}
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The ICRCs of several short frames at once. One CRC over a 128-byte frame is a chain of seven
 * dependent carry-less multiplies (a few cycles each): the multiplier sits idle most of the
 * time. Here eight frames run side by side, two per 256-bit register (AVX2 + VPCLMULQDQ), so
 * the chains overlap. Used by wire_parse_burst for every frame whose covered bytes fit a lane.
 *
 * The method (carry-less folding, as in Intel's "Fast CRC Computation for Generic Polynomials
 * Using PCLMULQDQ", with bit-reflected operands), with the constants wire/gen_icrc_tables.py
 * derives at build time (icrc_tables.c):
 *  - the standard CRC of M (initial register all ones, final inversion) is the inverted "raw"
 *    CRC (register starting at zero) of M with its first four bytes inverted; the ICRC's
 *    message starts with eight 0xFF bytes, so that is 00 00 00 00 FF FF FF FF | rest;
 *  - a raw CRC ignores leading zero bytes, so every lane is zero-padded in front to the same
 *    number of 16-byte blocks;
 *  - a 128-bit accumulator X moves one block further as X.lo * (x^191 mod P) ^ X.hi *
 *    (x^127 mod P) ^ next block (the exponents are one short of 192/128 because a reflected
 *    carry-less product comes out one bit low);
 *  - the last block is reduced to 64 bits with x^95 and x^63, and the last 32 bits of the raw
 *    CRC are a 4-byte table CRC of the high half xor the low half.
 * tests/unit/test_wire.c checks it against zlib's crc32 and against wire_icrc on every length.
 * Only the masked prefix (icrc_internal.h) is shared with icrc.c, which calls this file.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <rte_cpuflags.h>
#include <rte_vect.h>

#include "icrc_internal.h"
#include "wire.h"

#define LANES 8
#define LANE_BYTES ICRC_LANE_BYTES /* the longest message a lane takes: covered bytes + 4 */
#define HEADROOM 16    /* the message may start up to 4 bytes before the lane's first block */

/* The one thing decided at run time: whether this CPU has AVX2 + VPCLMULQDQ and EAL's SIMD limit
 * allows 256 bits. Asked once (wire_crc_init) because rte_cpu_get_flag_enabled runs CPUID, which
 * serialises the core (and exits to the hypervisor in a VM): too dear per burst. */
static bool lanes_ok;

void icrc_lanes_init(unsigned simd_bitwidth)
{
#ifdef RTE_ARCH_X86
	lanes_ok = simd_bitwidth >= RTE_VECT_SIMD_256 && rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX2) > 0 &&
		   rte_cpu_get_flag_enabled(RTE_CPUFLAG_PCLMULQDQ) > 0 &&
		   rte_cpu_get_flag_enabled(RTE_CPUFLAG_VPCLMULQDQ) > 0;
#else
	(void)simd_bitwidth;
	lanes_ok = false;
#endif
}

bool icrc_lanes_available(void) { return lanes_ok; }

#ifdef RTE_ARCH_X86
#include <immintrin.h>

/* Raw CRCs (not inverted) of eight messages of nb 16-byte blocks each. */
__attribute__((target("avx2,vpclmulqdq,pclmul,sse4.1"))) static void
fold_lanes(const uint8_t *const lane[LANES], unsigned nb, uint32_t raw[LANES])
{
	const long long fold_lo = (long long)icrc_k_fold_lo, fold_hi = (long long)icrc_k_fold_hi;
	const __m256i k = _mm256_set_epi64x(fold_hi, fold_lo, fold_hi, fold_lo);
	const __m128i k96 = _mm_set_epi64x(0, (long long)icrc_k_reduce_96);
	const __m128i k64 = _mm_set_epi64x(0, (long long)icrc_k_reduce_64);
	__m256i x[LANES / 2];

	for (unsigned i = 0; i < LANES / 2; i++)
		x[i] = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const void *)lane[2 * i])),
					       _mm_loadu_si128((const void *)lane[2 * i + 1]), 1);
	for (unsigned j = 1; j < nb; j++)
		for (unsigned i = 0; i < LANES / 2; i++) {
			__m256i d = _mm256_inserti128_si256(
				_mm256_castsi128_si256(_mm_loadu_si128((const void *)(lane[2 * i] + 16 * j))),
				_mm_loadu_si128((const void *)(lane[2 * i + 1] + 16 * j)), 1);
			x[i] = _mm256_xor_si256(_mm256_xor_si256(_mm256_clmulepi64_epi128(x[i], k, 0x00),
								 _mm256_clmulepi64_epi128(x[i], k, 0x11)),
						d);
		}
	for (unsigned i = 0; i < LANES; i++) {
		__m128i a = i & 1 ? _mm256_extracti128_si256(x[i / 2], 1) : _mm256_castsi256_si128(x[i / 2]);
		/* 128 -> 96 bits: the low half times x^96, the high half moved 32 bits down */
		__m128i w = _mm_xor_si128(_mm_clmulepi64_si128(a, k96, 0x00),
					  _mm_slli_si128(_mm_unpackhi_epi64(a, _mm_setzero_si128()), 4));
		/* 96 -> 64 bits */
		__m128i u = _mm_xor_si128(_mm_clmulepi64_si128(w, k64, 0x00), w);
		uint64_t v = (uint64_t)_mm_extract_epi64(u, 1);
		uint32_t hi = (uint32_t)v;

		raw[i] = icrc_byte_crc[3][hi & 0xFF] ^ icrc_byte_crc[2][hi >> 8 & 0xFF] ^
			 icrc_byte_crc[1][hi >> 16 & 0xFF] ^ icrc_byte_crc[0][hi >> 24] ^ (uint32_t)(v >> 32);
	}
}

/* Writes frame i's message (see the top) right-aligned in a lane of nb blocks. */
static void fill_lane(uint8_t *lane, unsigned nb, const uint8_t *l3, size_t covered, bool rocev1)
{
	/* where the eight 0xFF bytes go: up to 4 bytes before the lane (HEADROOM precedes it) */
	ptrdiff_t start = (ptrdiff_t)nb * 16 - (ptrdiff_t)(covered + 8);
	uint8_t *m = lane + start;
	size_t prefix = icrc_masked_prefix(m, l3, rocev1);
	size_t done = prefix - ICRC_PSEUDO_LRH_LEN;

	memcpy(m + prefix, l3 + done, covered - done);
	memset(lane, 0, (size_t)(start + 4)); /* the padding, and the four 0xFF bytes that became zeros */
}
#endif

bool icrc_lanes(const uint8_t *const l3[], const uint32_t covered[], const bool rocev1[], unsigned n, uint32_t out[])
{
#ifdef RTE_ARCH_X86
	static const uint8_t zeros[LANE_BYTES];
	uint8_t buf[LANES][HEADROOM + LANE_BYTES] __attribute__((aligned(64)));
	const uint8_t *lane[LANES];
	uint32_t raw[LANES];

	if (!lanes_ok)
		return false;
	for (unsigned first = 0; first < n; first += LANES) {
		unsigned m = n - first < LANES ? n - first : LANES, nb = 0;

		for (unsigned i = 0; i < m; i++) {
			unsigned blocks = (covered[first + i] + 4 + 15) / 16;
			nb = blocks > nb ? blocks : nb;
		}
		for (unsigned i = 0; i < LANES; i++) {
			if (i < m) {
				fill_lane(buf[i] + HEADROOM, nb, l3[first + i], covered[first + i], rocev1[first + i]);
				lane[i] = buf[i] + HEADROOM;
			} else {
				lane[i] = zeros;
			}
		}
		fold_lanes(lane, nb, raw);
		for (unsigned i = 0; i < m; i++)
			out[first + i] = ~raw[i];
	}
	return true;
#else
	(void)l3, (void)covered, (void)rocev1, (void)n, (void)out;
	return false;
#endif
}

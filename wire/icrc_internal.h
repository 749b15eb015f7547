/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Shared inside the wire library: the ICRC's masked prefix (here, for both ICRC paths) and the
 * multi-frame ICRC (icrc_lanes.c), which icrc.c uses, and the tables both read (generated
 * icrc_tables.c). icrc_lanes.c calls nothing in icrc.c.
 */
#ifndef ROCE_WIRE_ICRC_INTERNAL_H
#define ROCE_WIRE_ICRC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wire.h"

/* The ICRC's message starts with a pseudo-LRH of eight 0xFF bytes (IBA Annex A17). */
#define ICRC_PSEUDO_LRH_LEN 8

/* Writes 8 x 0xFF and the masked IP/UDP (or GRH) + BTH headers of the frame at l3 to dst;
 * returns the bytes written (8 + the headers' length). */
static inline size_t icrc_masked_prefix(uint8_t *dst, const uint8_t *l3, bool rocev1)
{
	size_t l3_len;

	memset(dst, 0xFF, ICRC_PSEUDO_LRH_LEN);
	dst += ICRC_PSEUDO_LRH_LEN;
	if ((l3[0] >> 4) == 6 || rocev1) {
		l3_len = WIRE_IPV6_HLEN + (rocev1 ? 0 : WIRE_UDP_HLEN);
		memcpy(dst, l3, l3_len + WIRE_BTH_LEN);
		dst[0] |= 0x0F;                   /* traffic class, high nibble */
		dst[1] = dst[2] = dst[3] = 0xFF; /* traffic class low nibble + flow label */
		dst[7] = 0xFF;                    /* hop limit */
	} else {
		l3_len = WIRE_IPV4_HLEN + WIRE_UDP_HLEN;
		memcpy(dst, l3, l3_len + WIRE_BTH_LEN);
		dst[1] = 0xFF;                 /* DSCP + ECN */
		dst[8] = 0xFF;                 /* TTL */
		dst[10] = dst[11] = 0xFF;      /* header checksum */
	}
	if (!rocev1)
		dst[l3_len - 2] = dst[l3_len - 1] = 0xFF; /* UDP checksum */
	dst[l3_len + 4] = 0xFF;                         /* BTH FECN, BECN, resv6 */
	return ICRC_PSEUDO_LRH_LEN + l3_len + WIRE_BTH_LEN;
}

/* Built at compile time by gen_icrc_tables.py (icrc_tables.c; what each holds is said there):
 * x^(8n) mod P for icrc.c's CRC joins, and icrc_lanes.c's byte table and folding constants. */
extern const uint32_t icrc_shift_by_len[WIRE_MAX_FRAME + 1];
extern const uint32_t icrc_byte_crc[4][256];
extern const uint64_t icrc_k_fold_lo, icrc_k_fold_hi, icrc_k_reduce_96, icrc_k_reduce_64;

/* Decides from the CPU and EAL's SIMD limit whether icrc_lanes may run (wire_crc_init calls it). */
void icrc_lanes_init(unsigned simd_bitwidth);
bool icrc_lanes_available(void);
/* The most covered bytes a frame may have to fit a lane (its message is 4 bytes longer). */
#define ICRC_LANE_BYTES 256
#define ICRC_LANE_COVERED_MAX (ICRC_LANE_BYTES - 4)
/* The ICRCs of n frames that all fit a lane, eight at a time; false (out[] untouched) where
 * the CPU, EAL's SIMD limit or the architecture has no lanes: the caller computes them then. */
bool icrc_lanes(const uint8_t *const l3[], const uint32_t covered[], const bool rocev1[], unsigned n, uint32_t out[]);

#endif

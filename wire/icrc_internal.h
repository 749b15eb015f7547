/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Shared inside the wire library: the ICRC's masked prefix (icrc.c) and the multi-frame ICRC
 * (icrc_lanes.c).
 */
#ifndef ROCE_WIRE_ICRC_INTERNAL_H
#define ROCE_WIRE_ICRC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes 8 x 0xFF and the masked IP/UDP (or GRH) + BTH headers of the frame at l3 to dst;
 * returns the bytes written (8 + the headers' length). */
size_t icrc_masked_prefix(uint8_t *dst, const uint8_t *l3, bool rocev1);

/* Derives the folding constants and tables, and decides from the CPU and EAL's SIMD limit
 * whether icrc_lanes may run (wire_crc_init calls it). */
void icrc_lanes_init(unsigned simd_bitwidth);
bool icrc_lanes_available(void);
/* The most covered bytes a frame may have to fit a lane (its message is 4 bytes longer). */
#define ICRC_LANE_BYTES 256
#define ICRC_LANE_COVERED_MAX (ICRC_LANE_BYTES - 4)
/* The ICRCs of n frames that all fit a lane, eight at a time. */
void icrc_lanes(const uint8_t *const l3[], const uint32_t covered[], const bool rocev1[], unsigned n, uint32_t out[]);

#endif

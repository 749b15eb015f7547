/* SPDX-License-Identifier: BSD-3-Clause
 *
 * AETH syndromes: what the 5-bit value of an ACK (credit count code) and of an RNR NAK (timer
 * code) stand for, and the syndromes' names. The codes are logarithmic, so both are tables.
 */
#include "wire.h"

/* IBA table 45: RNR NAK timer codes in microseconds (code 0 is 655.36 ms, the longest). */
static const uint32_t rnr_timer_us[32] = {
	655360, 10,    20,    30,    40,    60,     80,     120,    160,    240,    320,
	480,    640,   960,   1280,  1920,  2560,   3840,   5120,   7680,   10240,  15360,
	20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520};

/* IBA table 44: end-to-end credit counts of ACK credit codes 0..30 (31: invalid). */
static const uint16_t credit_count[31] = {0,   1,   2,   3,    4,    6,    8,    12,   16,    24,    32,
					   48,  64,  96,  128,  192,  256,  384,  512,  768,   1024,  1536,
					   2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768};

uint32_t wire_aeth_rnr_timer_us(uint8_t syndrome) { return rnr_timer_us[wire_aeth_value(syndrome)]; }

uint32_t wire_aeth_credits(uint8_t syndrome)
{
	uint8_t code = wire_aeth_value(syndrome);

	return code == WIRE_AETH_CREDITS_INVALID ? UINT32_MAX : credit_count[code];
}

const char *wire_aeth_syndrome_name(uint8_t syndrome)
{
	switch (syndrome & WIRE_AETH_TYPE_MASK) {
	case WIRE_AETH_ACK:
		return "ACK";
	case WIRE_AETH_RNR_NAK:
		return "RNR_NAK";
	case WIRE_AETH_NAK:
		switch (syndrome) {
		case WIRE_AETH_NAK_PSN_SEQ_ERR:
			return "NAK_PSN_SEQ_ERR";
		case WIRE_AETH_NAK_INVALID_REQ:
			return "NAK_INVALID_REQ";
		case WIRE_AETH_NAK_REM_ACCESS_ERR:
			return "NAK_REM_ACCESS_ERR";
		case WIRE_AETH_NAK_REM_OP_ERR:
			return "NAK_REM_OP_ERR";
		case WIRE_AETH_NAK_INV_RD_REQ:
			return "NAK_INV_RD_REQ";
		default:
			return "NAK_RESERVED";
		}
	default:
		return "RESERVED";
	}
}

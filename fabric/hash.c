/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The ECMP hash a fabric switch computes over a frame's fields (fabric.h, fab_hash): the selected
 * fields laid out in network byte order, then a CRC over them, a table lookup per byte (the
 * tables are generated at build time: gen_hash_tables.py). Switch ASICs offer CRC-16 and CRC-32
 * variants with a seed; the same function, fields and seed on every switch send the flows that
 * one tier put on one next hop to the same next hop of the next tier too (polarisation), which
 * is why operators set a seed per switch.
 */
#include "fabric.h"

extern const uint32_t fab_crc32_table[256];
extern const uint16_t fab_crc16_table[256];

/* The fields' bytes, in the order fabric.h gives; returns how many (at most 15). */
static unsigned key_bytes(uint8_t fields, const struct fab_flow_key *k, uint8_t *out)
{
	unsigned n = 0;

	if (fields & FAB_FIELD_SRC_IP)
		out[n++] = (uint8_t)(k->src_ip >> 24), out[n++] = (uint8_t)(k->src_ip >> 16), out[n++] = (uint8_t)(k->src_ip >> 8),
		out[n++] = (uint8_t)k->src_ip;
	if (fields & FAB_FIELD_DST_IP)
		out[n++] = (uint8_t)(k->dst_ip >> 24), out[n++] = (uint8_t)(k->dst_ip >> 16), out[n++] = (uint8_t)(k->dst_ip >> 8),
		out[n++] = (uint8_t)k->dst_ip;
	if (fields & FAB_FIELD_UDP_SPORT)
		out[n++] = (uint8_t)(k->sport >> 8), out[n++] = (uint8_t)k->sport;
	if (fields & FAB_FIELD_UDP_DPORT)
		out[n++] = (uint8_t)(k->dport >> 8), out[n++] = (uint8_t)k->dport;
	if (fields & FAB_FIELD_DEST_QP)
		out[n++] = (uint8_t)(k->dest_qp >> 16), out[n++] = (uint8_t)(k->dest_qp >> 8), out[n++] = (uint8_t)k->dest_qp;
	return n;
}

/* zlib's crc32(seed, buf, n): the register starts at ~seed and ends inverted. */
static uint32_t crc32_bytes(uint32_t seed, const uint8_t *b, unsigned n)
{
	uint32_t c = ~seed;

	for (unsigned i = 0; i < n; i++)
		c = fab_crc32_table[(c ^ b[i]) & 0xFF] ^ (c >> 8);
	return ~c;
}

/* CRC-16/CCITT from the seed, no reflection, no final inversion (binascii.crc_hqx). */
static uint16_t crc16_bytes(uint16_t seed, const uint8_t *b, unsigned n)
{
	uint16_t c = seed;

	for (unsigned i = 0; i < n; i++)
		c = (uint16_t)(fab_crc16_table[((c >> 8) ^ b[i]) & 0xFF] ^ (c << 8));
	return c;
}

uint32_t fab_hash(const struct fab_hash *h, const struct fab_flow_key *k)
{
	uint8_t key[16];
	unsigned n = key_bytes(h->fields, k, key);

	return h->fn == FAB_HASH_CRC16 ? crc16_bytes((uint16_t)h->seed, key, n) : crc32_bytes(h->seed, key, n);
}

uint32_t fab_crc32(uint32_t seed, const void *buf, unsigned n)
{
	return crc32_bytes(seed, buf, n);
}

uint16_t fab_crc16(uint16_t seed, const void *buf, unsigned n)
{
	return crc16_bytes(seed, buf, n);
}

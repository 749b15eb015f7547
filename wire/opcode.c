/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The opcode table: one row per supported BTH opcode saying which extended headers follow the
 * BTH and at which offsets. Offsets are derived at compile time from the header mask, so a row
 * only names its headers; the IBA order (DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt,
 * IETH) lives in the OFF_* chain below and nowhere else.
 */
#include <ctype.h>
#include <string.h>

#include "wire.h"

#define B(e) WIRE_EXT_BIT(WIRE_EXT_##e)
#define HAS(m, e, len) (((m) & B(e)) ? (len) : 0)

#define OFF_DETH(m) WIRE_BTH_LEN
#define OFF_RETH(m) (OFF_DETH(m) + HAS(m, DETH, WIRE_DETH_LEN))
#define OFF_ATOMICETH(m) (OFF_RETH(m) + HAS(m, RETH, WIRE_RETH_LEN))
#define OFF_AETH(m) (OFF_ATOMICETH(m) + HAS(m, ATOMICETH, WIRE_ATOMICETH_LEN))
#define OFF_ATOMICACKETH(m) (OFF_AETH(m) + HAS(m, AETH, WIRE_AETH_LEN))
#define OFF_IMMDT(m) (OFF_ATOMICACKETH(m) + HAS(m, ATOMICACKETH, WIRE_ATOMICACKETH_LEN))
#define OFF_IETH(m) (OFF_IMMDT(m) + HAS(m, IMMDT, WIRE_IMMDT_LEN))
#define OFF_CNP_RSVD(m) (OFF_IETH(m) + HAS(m, IETH, WIRE_IETH_LEN))
#define HDR_LEN(m) (OFF_CNP_RSVD(m) + HAS(m, CNP_RSVD, WIRE_CNP_RSVD_LEN))

#define ROW(op, nm, o, m, f)                                                                        \
	[op] = {.name = nm,                                                                         \
		.ext_mask = (m),                                                                    \
		.flags = (f),                                                                       \
		.hdr_len = HDR_LEN(m),                                                              \
		.oper = WIRE_OPER_##o,                                                              \
		.offset = {[WIRE_EXT_DETH] = OFF_DETH(m),                                           \
			   [WIRE_EXT_RETH] = OFF_RETH(m),                                           \
			   [WIRE_EXT_ATOMICETH] = OFF_ATOMICETH(m),                                 \
			   [WIRE_EXT_AETH] = OFF_AETH(m),                                           \
			   [WIRE_EXT_ATOMICACKETH] = OFF_ATOMICACKETH(m),                           \
			   [WIRE_EXT_IMMDT] = OFF_IMMDT(m),                                         \
			   [WIRE_EXT_IETH] = OFF_IETH(m),                                           \
			   [WIRE_EXT_CNP_RSVD] = OFF_CNP_RSVD(m)}}

#define P WIRE_OPF_PAYLOAD
#define S WIRE_OPF_START
#define M WIRE_OPF_MIDDLE
#define E WIRE_OPF_END
#define RQ WIRE_OPF_REQUEST
#define RS WIRE_OPF_RESPONSE
#define I WIRE_OPF_IMM

/* SEND and RDMA WRITE rows are the same for RC and UC: only the transport base differs. */
#define SEND_WRITE_ROWS(base, T)                                                                    \
	ROW(base + 0x00, T "_SEND_FIRST", SEND, 0, P | S | RQ),                                    \
	ROW(base + 0x01, T "_SEND_MIDDLE", SEND, 0, P | M | RQ),                                   \
	ROW(base + 0x02, T "_SEND_LAST", SEND, 0, P | E | RQ),                                     \
	ROW(base + 0x03, T "_SEND_LAST_IMM", SEND, B(IMMDT), P | E | RQ | I),                      \
	ROW(base + 0x04, T "_SEND_ONLY", SEND, 0, P | S | E | RQ),                                 \
	ROW(base + 0x05, T "_SEND_ONLY_IMM", SEND, B(IMMDT), P | S | E | RQ | I),                  \
	ROW(base + 0x06, T "_WRITE_FIRST", WRITE, B(RETH), P | S | RQ),                            \
	ROW(base + 0x07, T "_WRITE_MIDDLE", WRITE, 0, P | M | RQ),                                 \
	ROW(base + 0x08, T "_WRITE_LAST", WRITE, 0, P | E | RQ),                                   \
	ROW(base + 0x09, T "_WRITE_LAST_IMM", WRITE, B(IMMDT), P | E | RQ | I),                    \
	ROW(base + 0x0A, T "_WRITE_ONLY", WRITE, B(RETH), P | S | E | RQ),                         \
	ROW(base + 0x0B, T "_WRITE_ONLY_IMM", WRITE, B(RETH) | B(IMMDT), P | S | E | RQ | I)

static const struct wire_opcode_info opcode_table[256] = {
	SEND_WRITE_ROWS(WIRE_TRANSPORT_RC, "RC"),
	ROW(WIRE_OP_RC_READ_REQUEST, "RC_READ_REQUEST", READ_REQUEST, B(RETH), S | E | RQ),
	ROW(WIRE_OP_RC_READ_RESP_FIRST, "RC_READ_RESP_FIRST", READ_RESPONSE, B(AETH), P | S | RS),
	ROW(WIRE_OP_RC_READ_RESP_MIDDLE, "RC_READ_RESP_MIDDLE", READ_RESPONSE, 0, P | M | RS),
	ROW(WIRE_OP_RC_READ_RESP_LAST, "RC_READ_RESP_LAST", READ_RESPONSE, B(AETH), P | E | RS),
	ROW(WIRE_OP_RC_READ_RESP_ONLY, "RC_READ_RESP_ONLY", READ_RESPONSE, B(AETH), P | S | E | RS),
	ROW(WIRE_OP_RC_ACK, "RC_ACK", ACK, B(AETH), S | E | RS),
	ROW(WIRE_OP_RC_ATOMIC_ACK, "RC_ATOMIC_ACK", ATOMIC_ACK, B(AETH) | B(ATOMICACKETH), S | E | RS),
	ROW(WIRE_OP_RC_COMPARE_SWAP, "RC_COMPARE_SWAP", COMPARE_SWAP, B(ATOMICETH), S | E | RQ),
	ROW(WIRE_OP_RC_FETCH_ADD, "RC_FETCH_ADD", FETCH_ADD, B(ATOMICETH), S | E | RQ),
	ROW(WIRE_OP_RC_SEND_LAST_INV, "RC_SEND_LAST_INV", SEND_INV, B(IETH), P | E | RQ),
	ROW(WIRE_OP_RC_SEND_ONLY_INV, "RC_SEND_ONLY_INV", SEND_INV, B(IETH), P | S | E | RQ),
	SEND_WRITE_ROWS(WIRE_TRANSPORT_UC, "UC"),
	ROW(WIRE_OP_UD_SEND_ONLY, "UD_SEND_ONLY", SEND, B(DETH), P | S | E | RQ),
	ROW(WIRE_OP_UD_SEND_ONLY_IMM, "UD_SEND_ONLY_IMM", SEND, B(DETH) | B(IMMDT), P | S | E | RQ | I),
	ROW(WIRE_OP_CNP, "CNP", CNP, B(CNP_RSVD), WIRE_OPF_CNP),
};

const struct wire_opcode_info *wire_opcode_info(uint8_t opcode)
{
	const struct wire_opcode_info *row = &opcode_table[opcode];
	return row->name ? row : NULL;
}

enum wire_pos wire_opcode_pos(const struct wire_opcode_info *op)
{
	bool start = op->flags & WIRE_OPF_START, end = op->flags & WIRE_OPF_END;

	if (op->flags & WIRE_OPF_MIDDLE)
		return WIRE_POS_MIDDLE;
	return start || end ? wire_pos_of(start, end) : WIRE_POS_ONLY; /* a CNP: one packet */
}

/* The table is the only place that knows opcodes: selection reads it back. Opcodes of a
 * transport occupy its 32 codes from the base (IBA table 38). */
int wire_opcode_select(uint8_t transport, enum wire_oper oper, enum wire_pos pos, bool imm)
{
	if (transport & 0x1F || oper == WIRE_OPER_NONE)
		return -1;
	for (unsigned op = transport; op < transport + 32u; op++) {
		const struct wire_opcode_info *row = &opcode_table[op];
		if (row->name && row->oper == oper && wire_opcode_pos(row) == pos &&
		    !!(row->flags & WIRE_OPF_IMM) == imm)
			return (int)op;
	}
	return -1;
}

/* Compares "rc-send-only" with "RC_SEND_ONLY": case-insensitive, '-' equals '_'. */
static bool name_matches(const char *user, const char *table)
{
	for (; *user && *table; user++, table++) {
		char c = (char)toupper((unsigned char)*user);
		if (c == '-')
			c = '_';
		if (c != *table)
			return false;
	}
	return *user == '\0' && *table == '\0';
}

int wire_opcode_by_name(const char *name)
{
	for (int op = 0; op < 256; op++)
		if (opcode_table[op].name && name_matches(name, opcode_table[op].name))
			return op;
	return -1;
}

static const struct {
	const char *name;
	uint8_t len;
} ext_desc[WIRE_EXT_COUNT] = {
	[WIRE_EXT_DETH] = {"DETH", WIRE_DETH_LEN},
	[WIRE_EXT_RETH] = {"RETH", WIRE_RETH_LEN},
	[WIRE_EXT_ATOMICETH] = {"AtomicETH", WIRE_ATOMICETH_LEN},
	[WIRE_EXT_AETH] = {"AETH", WIRE_AETH_LEN},
	[WIRE_EXT_ATOMICACKETH] = {"AtomicAckETH", WIRE_ATOMICACKETH_LEN},
	[WIRE_EXT_IMMDT] = {"ImmDt", WIRE_IMMDT_LEN},
	[WIRE_EXT_IETH] = {"IETH", WIRE_IETH_LEN},
	[WIRE_EXT_CNP_RSVD] = {"CNP reserved", WIRE_CNP_RSVD_LEN},
};

const char *wire_ext_name(enum wire_ext e) { return e < WIRE_EXT_COUNT ? ext_desc[e].name : "?"; }
uint8_t wire_ext_len(enum wire_ext e) { return e < WIRE_EXT_COUNT ? ext_desc[e].len : 0; }

/* ---- BTH and extended headers ------------------------------------------------------------ */

void wire_bth_read(const uint8_t *bth, struct wire_bth *out)
{
	out->opcode = bth[0];
	out->se = bth[1] >> 7;
	out->mig = (bth[1] >> 6) & 1;
	out->pad = (bth[1] >> 4) & 3;
	out->tver = bth[1] & 0x0F;
	out->pkey = wire_get16(bth + 2);
	out->fecn = bth[4] >> 7;
	out->becn = (bth[4] >> 6) & 1;
	out->resv6 = bth[4] & 0x3F;
	out->dqpn = wire_get24(bth + 5);
	out->ackreq = bth[8] >> 7;
	out->resv7 = bth[8] & 0x7F;
	out->psn = wire_get24(bth + 9);
}

void wire_bth_write(uint8_t *bth, const struct wire_bth *in)
{
	bth[0] = in->opcode;
	bth[1] = (uint8_t)(in->se << 7 | in->mig << 6 | (in->pad & 3) << 4 | (in->tver & 0x0F));
	wire_put16(bth + 2, in->pkey);
	bth[4] = (uint8_t)(in->fecn << 7 | in->becn << 6 | (in->resv6 & 0x3F));
	wire_put24(bth + 5, in->dqpn & WIRE_QPN_MASK);
	bth[8] = (uint8_t)(in->ackreq << 7 | (in->resv7 & 0x7F));
	wire_put24(bth + 9, in->psn & WIRE_PSN_MASK);
}

#define HAS_EXT(op, e) ((op)->ext_mask & WIRE_EXT_BIT(e))

void wire_ext_read(const uint8_t *bth, const struct wire_opcode_info *op, struct wire_ext_hdrs *out)
{
	const uint8_t *p;

	memset(out, 0, sizeof(*out));
	if (HAS_EXT(op, WIRE_EXT_DETH)) {
		p = bth + op->offset[WIRE_EXT_DETH];
		out->deth.qkey = wire_get32(p);
		out->deth.src_qp = wire_get24(p + 5);
	}
	if (HAS_EXT(op, WIRE_EXT_RETH)) {
		p = bth + op->offset[WIRE_EXT_RETH];
		out->reth.va = wire_get64(p);
		out->reth.rkey = wire_get32(p + 8);
		out->reth.dma_len = wire_get32(p + 12);
	}
	if (HAS_EXT(op, WIRE_EXT_ATOMICETH)) {
		p = bth + op->offset[WIRE_EXT_ATOMICETH];
		out->atomic.va = wire_get64(p);
		out->atomic.rkey = wire_get32(p + 8);
		out->atomic.swap_add = wire_get64(p + 12);
		out->atomic.compare = wire_get64(p + 20);
	}
	if (HAS_EXT(op, WIRE_EXT_AETH))
		out->aeth = wire_aeth_get(bth + op->offset[WIRE_EXT_AETH]);
	if (HAS_EXT(op, WIRE_EXT_ATOMICACKETH))
		out->atomic_ack_orig = wire_get64(bth + op->offset[WIRE_EXT_ATOMICACKETH]);
	if (HAS_EXT(op, WIRE_EXT_IMMDT))
		out->immdt = wire_get32(bth + op->offset[WIRE_EXT_IMMDT]);
	if (HAS_EXT(op, WIRE_EXT_IETH))
		out->ieth_rkey = wire_get32(bth + op->offset[WIRE_EXT_IETH]);
}

void wire_ext_write(uint8_t *bth, const struct wire_opcode_info *op, const struct wire_ext_hdrs *in)
{
	uint8_t *p;

	if (HAS_EXT(op, WIRE_EXT_DETH)) {
		p = bth + op->offset[WIRE_EXT_DETH];
		wire_put32(p, in->deth.qkey);
		p[4] = 0;
		wire_put24(p + 5, in->deth.src_qp & WIRE_QPN_MASK);
	}
	if (HAS_EXT(op, WIRE_EXT_RETH)) {
		p = bth + op->offset[WIRE_EXT_RETH];
		wire_put64(p, in->reth.va);
		wire_put32(p + 8, in->reth.rkey);
		wire_put32(p + 12, in->reth.dma_len);
	}
	if (HAS_EXT(op, WIRE_EXT_ATOMICETH)) {
		p = bth + op->offset[WIRE_EXT_ATOMICETH];
		wire_put64(p, in->atomic.va);
		wire_put32(p + 8, in->atomic.rkey);
		wire_put64(p + 12, in->atomic.swap_add);
		wire_put64(p + 20, in->atomic.compare);
	}
	if (HAS_EXT(op, WIRE_EXT_AETH))
		wire_aeth_put(bth + op->offset[WIRE_EXT_AETH], in->aeth);
	if (HAS_EXT(op, WIRE_EXT_ATOMICACKETH))
		wire_put64(bth + op->offset[WIRE_EXT_ATOMICACKETH], in->atomic_ack_orig);
	if (HAS_EXT(op, WIRE_EXT_IMMDT))
		wire_put32(bth + op->offset[WIRE_EXT_IMMDT], in->immdt);
	if (HAS_EXT(op, WIRE_EXT_IETH))
		wire_put32(bth + op->offset[WIRE_EXT_IETH], in->ieth_rkey);
	if (HAS_EXT(op, WIRE_EXT_CNP_RSVD))
		memset(bth + op->offset[WIRE_EXT_CNP_RSVD], 0, WIRE_CNP_RSVD_LEN);
}

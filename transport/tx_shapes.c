/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The shapes of a fixed-size flow (struct qp_shape, requester.h): each packet its messages can
 * take, written once at start-up the general way (tx_template.c) with the group's neutral QP
 * fields, with the ICRC field tables that move its ICRC for a PSN or a probe's seq and TX time,
 * then checked against the general path for a few of the group's QPs. Per packet the fill loops
 * copy a shape and patch it (requester_internal.h).
 */
#include <string.h>

#include "requester_internal.h"

/* How many shapes a fixed-size flow's messages take: per operation, ONLY, or FIRST [MIDDLE]
 * LAST. Capped at QP_MAX_SHAPES (further ones go the general way). */
static unsigned shapes_needed(const struct cfg_flow_group *g)
{
	uint32_t size = g->msg_size.fixed, mtu = g->ib_mtu;
	unsigned n = 0;

	if (g->msg_size.dist != CFG_SIZE_FIXED)
		return 0;
	for (int op = 0; op < CFG_OP_COUNT; op++)
		if (g->op_weight[op])
			n += single_request((uint8_t)op) || size <= mtu ? 1 : size > 2 * mtu ? 3 : 2;
	return n < QP_MAX_SHAPES ? n : QP_MAX_SHAPES;
}

/* ICRC field tables depend only on the field's width and how many covered bytes follow it: shared
 * by the group's shapes with the same layout, kept after its struct qp_group_tx (filled at
 * start-up, read-only after). A shape has a PSN table (BTH bytes 8..11) and, with latency, tables
 * for the probe's seq (4) and TX time (8). */
static unsigned field_tables_needed(const struct cfg_flow_group *g)
{
	return shapes_needed(g) * (g->latency != CFG_LAT_OFF ? 3 : 1);
}

size_t tx_shapes_field_bytes(const struct cfg_flow_group *g)
{
	return (field_tables_needed(g) * sizeof(struct wire_icrc_field) + 63) & ~(size_t)63;
}

static const struct wire_icrc_field *field_table_for(struct qp_group_tx *sh, unsigned width, size_t tail)
{
	struct wire_icrc_field *t;

	for (unsigned i = 0; i < sh->n_fields; i++)
		if (sh->field_tail[i] == tail && sh->fields[i].width == width)
			return &sh->fields[i];
	if (sh->n_fields == sh->max_fields)
		return NULL;
	t = &sh->fields[sh->n_fields];
	wire_icrc_field_init(t, width, tail);
	sh->field_tail[sh->n_fields++] = (uint16_t)tail;
	return t;
}

/* The plan of a shape's packet. */
static struct pkt_plan shape_plan(const struct cfg_flow_group *g, enum cfg_op op, enum seg_pos pos)
{
	struct pkt_plan pp = {.pos = pos};
	uint32_t mtu = g->ib_mtu, size = g->msg_size.fixed;

	pp.payload = single_request((uint8_t)op) ? 0 : pos == POS_FIRST || pos == POS_MIDDLE ? mtu
					  : pos == POS_LAST ? size - mtu * ((size - 1) / mtu) : size;
	pp.opcode = tx_opcode_for(g->transport, (uint8_t)op, pos);
	pp.ackreq = g->transport == CFG_RC && (pos == POS_LAST || pos == POS_ONLY);
	return pp;
}

static struct latency_probe shape_probe(const struct qp_group_tx *sh, uint32_t flow)
{
	return (struct latency_probe){.flags = sh->group->latency == CFG_LAT_PINGPONG ? LATENCY_PROBE_PINGPONG : 0,
				      .session = sh->session, .flow = flow};
}

/* The group's shape for (op, pos), built with the neutral QP fields (QPNs, port, flow 0). */
static bool add_shape(struct qp_group_tx *sh, enum cfg_op op, enum seg_pos pos)
{
	uint8_t scratch[WIRE_MAX_FRAME];
	const struct cfg_flow_group *g = sh->group;
	struct pkt_plan pp = shape_plan(g, op, pos);
	const struct wire_opcode_info *info = wire_opcode_info(pp.opcode);
	const struct qp_ids neutral = {0};
	struct latency_probe probe = shape_probe(sh, 0);
	bool lat = g->latency != CFG_LAT_OFF;
	struct qp_shape *s;
	uint16_t len;

	if (sh->n_shapes == shapes_needed(g))
		return false;
	s = &sh->shapes[sh->n_shapes];
	/* bytes past the frame are copied too (as padding or zeros the payload writes over) */
	memset(scratch, 0, QP_SHAPE_COPY > WIRE_MIN_FRAME ? QP_SHAPE_COPY : WIRE_MIN_FRAME);
	len = tx_write_generic(sh, &neutral, g->msg_size.fixed, &pp, 0, lat ? &probe : NULL, scratch);
	s->icrc_off = (uint16_t)(len - WIRE_ICRC_LEN);
	s->frame_len = len < WIRE_MIN_FRAME ? WIRE_MIN_FRAME : len;
	s->wire_len = (uint32_t)s->frame_len + 4;
	s->hdr_len = (uint16_t)(sh->hdr_len + info->hdr_len);
	s->bth_off = sh->hdr_len;
	s->payload = pp.payload;
	s->icrc_base = wire_icrc_load(scratch + s->icrc_off);
	s->psn_field = field_table_for(sh, 4, (size_t)(s->icrc_off - (s->bth_off + 12)));
#define EXT_AT(e) (info->ext_mask & WIRE_EXT_BIT(e) ? (uint16_t)(s->bth_off + info->offset[e]) : 0)
	s->reth_off = EXT_AT(WIRE_EXT_RETH);
	s->atomic_off = EXT_AT(WIRE_EXT_ATOMICETH);
	s->imm_off = EXT_AT(WIRE_EXT_IMMDT);
	s->deth_off = EXT_AT(WIRE_EXT_DETH);
#undef EXT_AT
	if (lat && pp.payload >= LATENCY_PROBE_LEN) { /* the probe's constant part, seq and time 0 */
		s->probe_off = s->hdr_len;
		s->seq_field = field_table_for(sh, 4, (size_t)(s->icrc_off - (s->probe_off + LATENCY_PROBE_SEQ_OFF + 4)));
		s->tx_field = field_table_for(sh, 8, (size_t)(s->icrc_off - (s->probe_off + LATENCY_PROBE_TX_OFF + 8)));
		if (!s->seq_field || !s->tx_field || s->probe_off + LATENCY_PROBE_LEN > QP_SHAPE_COPY)
			return false;
	}
	if (!s->psn_field || s->hdr_len > QP_SHAPE_COPY)
		return false;
	memcpy(s->bytes, scratch, QP_SHAPE_COPY);
	/* a QP's own bytes lie from the UDP source port to the end of the headers or probe, all
	 * within the copy and before the ICRC */
	sh->qp_shift[sh->n_shapes] =
		wire_crc_shift_for((size_t)(s->icrc_off - (s->icrc_off < QP_SHAPE_COPY ? s->icrc_off : QP_SHAPE_COPY)));
	sh->shape_of[op][pos] = (int8_t)sh->n_shapes++;
	return true;
}

/* CRC being linear: the CRC of the bytes that differ from the shape's, shifted past the rest of
 * the packet. */
uint32_t tx_shape_own_icrc(const struct qp_group_tx *sh, unsigned i, const struct own_bytes *o)
{
	const struct qp_shape *s = &sh->shapes[i];
	uint8_t f[QP_SHAPE_COPY];
	size_t from = sh->sport_off, to = s->icrc_off < QP_SHAPE_COPY ? s->icrc_off : QP_SHAPE_COPY;

	memcpy(f, s->bytes, QP_SHAPE_COPY);
	own_write(sh, s, o, f, true);
	return wire_icrc_patch(0, s->bytes + from, f + from, to - from, sh->qp_shift[i]);
}

/* Every (operation, position) a fixed message size can give: READ one request; others ONLY, or
 * FIRST, MIDDLE (when more than two packets) and LAST. */
static void build_shapes(struct qp_group_tx *sh)
{
	const struct cfg_flow_group *g = sh->group;
	uint32_t size = g->msg_size.fixed, mtu = g->ib_mtu;

	memset(sh->shape_of, -1, sizeof(sh->shape_of));
	if (g->msg_size.dist != CFG_SIZE_FIXED)
		return;
	for (int op = 0; op < CFG_OP_COUNT; op++) {
		if (!g->op_weight[op])
			continue;
		if (single_request((uint8_t)op) || size <= mtu) {
			add_shape(sh, (enum cfg_op)op, POS_ONLY);
			continue;
		}
		add_shape(sh, (enum cfg_op)op, POS_FIRST);
		if (size > 2 * mtu)
			add_shape(sh, (enum cfg_op)op, POS_MIDDLE);
		add_shape(sh, (enum cfg_op)op, POS_LAST);
	}
}

/* Checks that a shape with a QP's own bytes written over it and its ICRC term is the packet the
 * general path writes for that QP, for the group's first, second and last QP; on a mismatch the
 * group builds every packet the general way. */
static void check_shapes(struct qp_group_tx *sh)
{
	uint8_t want[WIRE_MAX_FRAME];
	const struct cfg_flow_group *g = sh->group;
	uint32_t which[3] = {0, g->count > 1 ? 1 : 0, g->count ? g->count - 1 : 0};

	for (unsigned k = 0; k < 3; k++) {
		struct qp_ids id = tx_ids_of(g, which[k], 0x01020304u + which[k]);
		struct qp_tx qp = {.sh = sh, .qpn = id.qpn, .dest_qpn = id.dest_qpn, .sport = id.sport};
		struct qp_latency lat = {.flow = id.flow};
		struct latency_probe probe = shape_probe(sh, id.flow);
		struct own_bytes o;

		if (g->latency != CFG_LAT_OFF)
			qp.lat = &lat;
		own_prepare(&qp, &o);
		for (int op = 0; op < CFG_OP_COUNT; op++)
			for (int pos = 0; pos < POS_COUNT; pos++) {
				int i = sh->shape_of[op][pos];
				const struct qp_shape *s = &sh->shapes[i < 0 ? 0 : i];
				struct pkt_plan pp = shape_plan(g, (enum cfg_op)op, (enum seg_pos)pos);
				uint8_t got[QP_SHAPE_COPY];
				size_t n = s->icrc_off < QP_SHAPE_COPY ? s->icrc_off : QP_SHAPE_COPY;
				uint16_t len;

				if (i < 0)
					continue;
				memset(want, 0, QP_SHAPE_COPY);
				len = tx_write_generic(sh, &id, g->msg_size.fixed, &pp, 0, qp.lat ? &probe : NULL, want);
				memcpy(got, s->bytes, QP_SHAPE_COPY);
				own_write(sh, s, &o, got, true);
				if (len != s->icrc_off + WIRE_ICRC_LEN || memcmp(got, want, n) != 0 ||
				    wire_icrc_load(want + s->icrc_off) != (s->icrc_base ^ tx_shape_own_icrc(sh, (unsigned)i, &o))) {
					sh->n_shapes = 0;
					memset(sh->shape_of, -1, sizeof(sh->shape_of));
					return;
				}
			}
	}
}

void tx_shapes_build(struct qp_group_tx *sh)
{
	sh->fields = (struct wire_icrc_field *)(sh + 1); /* tx_shapes_field_bytes(group) there */
	sh->max_fields = (uint8_t)field_tables_needed(sh->group);
	build_shapes(sh);
	check_shapes(sh);
}

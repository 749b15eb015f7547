/* SPDX-License-Identifier: BSD-3-Clause
 *
 * One frame, decoded, as a one-line summary or as one JSON object (docs/tools.md lists the keys).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>

#include "frame_print.h"

static void format_mac(const uint8_t m[6], char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static void format_addr(const struct wire_ip *ip, const uint8_t *a, char out[INET6_ADDRSTRLEN])
{
	inet_ntop(ip->version == 4 ? AF_INET : AF_INET6, a, out, INET6_ADDRSTRLEN);
}

static bool has_ip(const struct wire_pkt *p)
{
	return p->ip.version == 4 || p->ip.version == 6;
}

static bool has_bth(const struct wire_pkt *p) { return p->roce_version != 0 && p->bth_off != 0 && p->icrc_off != 0; }

static bool has_ext(const struct wire_pkt *p, enum wire_ext e)
{
	return p->op && (p->op->ext_mask & WIRE_EXT_BIT(e));
}

/* The extended headers were captured whole (they are read from the frame itself). */
static bool ext_captured(const struct wire_pkt *p, const struct frame_cut *cut)
{
	return p->op && p->bth_off + p->op->hdr_len <= cut->caplen;
}

/* ---- text ------------------------------------------------------------------------------------ */

static void print_text_roce(FILE *out, const uint8_t *frame, const struct frame_cut *cut, const struct wire_pkt *p)
{
	struct wire_ext_hdrs ext;

	fprintf(out, " %s dqpn 0x%06x psn %u", p->op ? p->op->name : "?", p->bth.dqpn, p->bth.psn);
	if (p->bth.fecn || p->bth.becn)
		fprintf(out, "%s%s", p->bth.fecn ? " FECN" : "", p->bth.becn ? " BECN" : "");
	if (p->bth.ackreq)
		fprintf(out, " ackreq");
	if (p->op && ext_captured(p, cut)) {
		wire_ext_read(frame + p->bth_off, p->op, &ext);
		if (has_ext(p, WIRE_EXT_RETH))
			fprintf(out, " va 0x%" PRIx64 " rkey 0x%x len %u", ext.reth.va, ext.reth.rkey, ext.reth.dma_len);
		if (has_ext(p, WIRE_EXT_AETH))
			fprintf(out, " %s(0x%02x) msn %u", wire_aeth_syndrome_name(ext.aeth.syndrome), ext.aeth.syndrome,
				ext.aeth.msn);
	}
	if (p->op && (p->op->flags & WIRE_OPF_PAYLOAD))
		fprintf(out, " payload %u pad %u", p->payload_len, p->bth.pad);
	if (p->icrc_checked)
		fprintf(out, " icrc %s", p->icrc_calc == p->icrc_wire ? "ok" : "BAD");
}

/* " | cut at 128 of 1098 bytes, in the payload or ICRC: the ICRC and the payload not checked" */
static void print_text_cut(FILE *out, const struct frame_cut *cut)
{
	if (cut->place == CUT_NONE)
		return;
	fprintf(out, " | cut at %u of %u bytes", cut->caplen, cut->len);
	if (cut->place == CUT_AFTER)
		fprintf(out, ", after the checked bytes");
	else
		fprintf(out, ", in %s: %s not checked", frame_cut_place_text(cut->place),
			frame_cut_unchecked(cut->unchecked));
}

void frame_print_text(FILE *out, unsigned index, const uint8_t *frame, const struct frame_cut *cut,
		      const struct wire_pkt *p)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];

	fprintf(out, "#%u len %u %s", index, cut->len, wire_kind_name((enum wire_kind)p->kind));
	if (p->kind == WIRE_KIND_MALFORMED)
		fprintf(out, "(%s)", wire_error_name((enum wire_error)p->error));
	if (p->l2.vlan)
		fprintf(out, " vlan %u pcp %u", p->l2.vid, p->l2.pcp);
	if (p->kind == WIRE_KIND_PFC) {
		fprintf(out, " enable 0x%02x quanta", p->pfc_enable);
		for (int i = 0; i < WIRE_PFC_PRIORITIES; i++)
			fprintf(out, "%c%u", i ? ',' : ' ', p->quanta[i]);
	} else if (p->kind == WIRE_KIND_PAUSE) {
		fprintf(out, " quanta %u", p->quanta[0]);
	} else if (has_ip(p)) {
		format_addr(&p->ip, p->ip.src, a);
		format_addr(&p->ip, p->ip.dst, b);
		fprintf(out, " %s %s > %s dscp %u ecn %u", p->roce_version == 1 ? "RoCEv1" : p->ip.version == 6 ? "IPv6" : "IPv4",
			a, b, p->ip.dscp, p->ip.ecn);
		if (has_bth(p))
			print_text_roce(out, frame, cut, p);
	} else {
		fprintf(out, " ethertype 0x%04x", p->ethertype);
	}
	print_text_cut(out, cut);
	fputc('\n', out);
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void json_ext(FILE *out, const uint8_t *frame, const struct wire_pkt *p)
{
	struct wire_ext_hdrs e;

	wire_ext_read(frame + p->bth_off, p->op, &e);
	if (has_ext(p, WIRE_EXT_RETH))
		fprintf(out, ",\"reth\":{\"va\":%" PRIu64 ",\"rkey\":%u,\"dmalen\":%u}", e.reth.va, e.reth.rkey, e.reth.dma_len);
	if (has_ext(p, WIRE_EXT_AETH))
		fprintf(out, ",\"aeth\":{\"syndrome\":%u,\"msn\":%u,\"name\":\"%s\"}", e.aeth.syndrome, e.aeth.msn,
			wire_aeth_syndrome_name(e.aeth.syndrome));
	if (has_ext(p, WIRE_EXT_DETH))
		fprintf(out, ",\"deth\":{\"qkey\":%u,\"srcqp\":%u}", e.deth.qkey, e.deth.src_qp);
	if (has_ext(p, WIRE_EXT_IMMDT))
		fprintf(out, ",\"imm\":%u", e.immdt);
	if (has_ext(p, WIRE_EXT_IETH))
		fprintf(out, ",\"ieth\":%u", e.ieth_rkey);
	if (has_ext(p, WIRE_EXT_ATOMICETH))
		fprintf(out, ",\"atomic\":{\"va\":%" PRIu64 ",\"rkey\":%u,\"swap\":%" PRIu64 ",\"cmp\":%" PRIu64 "}",
			e.atomic.va, e.atomic.rkey, e.atomic.swap_add, e.atomic.compare);
	if (has_ext(p, WIRE_EXT_ATOMICACKETH))
		fprintf(out, ",\"atomic_ack\":{\"orig\":%" PRIu64 "}", e.atomic_ack_orig);
}

static void json_l3(FILE *out, const struct wire_pkt *p)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];

	if (!has_ip(p)) {
		fprintf(out, ",\"ip\":null,\"udp\":null");
		return;
	}
	format_addr(&p->ip, p->ip.src, a);
	format_addr(&p->ip, p->ip.dst, b);
	fprintf(out, ",\"ip\":{\"version\":%u,\"src\":\"%s\",\"dst\":\"%s\",\"dscp\":%u,\"ecn\":%u,\"ttl\":%u,\"id\":%u,"
		     "\"df\":%u,\"flow_label\":%u}",
		p->ip.version, a, b, p->ip.dscp, p->ip.ecn, p->ip.ttl, p->ip.id, p->ip.df, p->ip.flow_label);
	if (p->l4_off)
		fprintf(out, ",\"udp\":{\"sport\":%u,\"dport\":%u,\"len\":%u}", p->udp.sport, p->udp.dport, p->udp.len);
	else
		fprintf(out, ",\"udp\":null");
}

static void json_transport(FILE *out, const uint8_t *frame, const struct frame_cut *cut, const struct wire_pkt *p)
{
	const struct wire_bth *t = &p->bth;

	if (!has_bth(p)) {
		fprintf(out, ",\"bth\":null");
		return;
	}
	fprintf(out, ",\"bth\":{\"opcode\":%u,\"name\":\"%s\",\"se\":%u,\"mig\":%u,\"pad\":%u,\"tver\":%u,\"pkey\":%u,"
		     "\"fecn\":%u,\"becn\":%u,\"dqpn\":%u,\"ackreq\":%u,\"psn\":%u}",
		t->opcode, p->op ? p->op->name : "", t->se, t->mig, t->pad, t->tver, t->pkey, t->fecn, t->becn, t->dqpn,
		t->ackreq, t->psn);
	if (p->op && p->payload_off) {
		if (ext_captured(p, cut))
			json_ext(out, frame, p);
		fprintf(out, ",\"payload_len\":%u", p->payload_len);
	}
	if (cut->place > CUT_AFTER) /* the trailer was not captured */
		fprintf(out, ",\"icrc\":{\"wire\":null,\"calc\":null,\"ok\":null}");
	else if (p->icrc_checked)
		fprintf(out, ",\"icrc\":{\"wire\":%u,\"calc\":%u,\"ok\":%s}", p->icrc_wire, p->icrc_calc,
			p->icrc_calc == p->icrc_wire ? "true" : "false");
	else
		fprintf(out, ",\"icrc\":{\"wire\":%u,\"calc\":null,\"ok\":null}", p->icrc_wire);
}

void frame_print_json(FILE *out, unsigned index, const uint8_t *frame, const struct frame_cut *cut,
		      const struct wire_pkt *p)
{
	char dst[18], src[18];

	format_mac(p->l2.dst, dst);
	format_mac(p->l2.src, src);
	fprintf(out, "{\"frame\":%u,\"len\":%u,\"caplen\":%u,\"kind\":\"%s\",\"error\":\"%s\",\"roce_version\":%u", index,
		cut->len, cut->caplen, wire_kind_name((enum wire_kind)p->kind), wire_error_name((enum wire_error)p->error),
		p->roce_version);
	if (cut->place == CUT_NONE)
		fprintf(out, ",\"cut\":null");
	else
		fprintf(out, ",\"cut\":{\"in\":\"%s\",\"unchecked\":\"%s\"}", frame_cut_place_name(cut->place),
			cut->unchecked == CUT_AFTER ? "none" : frame_cut_place_name(cut->unchecked));
	fprintf(out, ",\"eth\":{\"dst\":\"%s\",\"src\":\"%s\",\"type\":%u}", dst, src, p->ethertype);
	if (p->l2.vlan)
		fprintf(out, ",\"vlan\":{\"pcp\":%u,\"dei\":%u,\"vid\":%u}", p->l2.pcp, p->l2.dei, p->l2.vid);
	else
		fprintf(out, ",\"vlan\":null");
	json_l3(out, p);
	json_transport(out, frame, cut, p);
	if (p->kind == WIRE_KIND_PFC) {
		fprintf(out, ",\"pfc\":{\"enable\":%u,\"quanta\":[", p->pfc_enable);
		for (int i = 0; i < WIRE_PFC_PRIORITIES; i++)
			fprintf(out, "%s%u", i ? "," : "", p->quanta[i]);
		fprintf(out, "]}");
	} else if (p->kind == WIRE_KIND_PAUSE) {
		fprintf(out, ",\"pause\":{\"quanta\":%u}", p->quanta[0]);
	}
	fprintf(out, "}\n");
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame_desc.h"

static const uint8_t default_smac[6] = {0x02, 0, 0, 0, 0, 0x01};
static const uint8_t default_dmac[6] = {0x02, 0, 0, 0, 0, 0x02};

enum key_type { KEY_UINT, KEY_MAC, KEY_ADDR };

struct key {
	const char *name;
	enum key_type type;
	size_t off;  /* into struct frame_desc */
	size_t size; /* of the field, for KEY_UINT */
	uint64_t max;
};

#define FIELD_SIZE(f) sizeof(((struct frame_desc *)0)->f)
#define UINT_KEY(n, f, m) {n, KEY_UINT, offsetof(struct frame_desc, f), FIELD_SIZE(f), m}

static const struct key keys[] = {
	{"smac", KEY_MAC, offsetof(struct frame_desc, spec.l2.src), 6, 0},
	{"dmac", KEY_MAC, offsetof(struct frame_desc, spec.l2.dst), 6, 0},
	{"sip", KEY_ADDR, offsetof(struct frame_desc, spec.ip.src), 16, 0},
	{"dip", KEY_ADDR, offsetof(struct frame_desc, spec.ip.dst), 16, 0},
	UINT_KEY("vlan", spec.l2.vid, 4095),
	UINT_KEY("pcp", spec.l2.pcp, 7),
	UINT_KEY("dei", spec.l2.dei, 1),
	UINT_KEY("ip", spec.ip.version, 6),
	UINT_KEY("dscp", spec.ip.dscp, 63),
	UINT_KEY("ecn", spec.ip.ecn, 3),
	UINT_KEY("ttl", spec.ip.ttl, 255),
	UINT_KEY("ipid", spec.ip.id, 0xFFFF),
	UINT_KEY("df", spec.ip.df, 1),
	UINT_KEY("flowlabel", spec.ip.flow_label, 0xFFFFF),
	UINT_KEY("sport", spec.udp.sport, 0xFFFF),
	UINT_KEY("dport", spec.udp.dport, 0xFFFF),
	UINT_KEY("se", spec.bth.se, 1),
	UINT_KEY("mig", spec.bth.mig, 1),
	UINT_KEY("pkey", spec.bth.pkey, 0xFFFF),
	UINT_KEY("fecn", spec.bth.fecn, 1),
	UINT_KEY("becn", spec.bth.becn, 1),
	UINT_KEY("dqpn", spec.bth.dqpn, 0xFFFFFF),
	UINT_KEY("ackreq", spec.bth.ackreq, 1),
	UINT_KEY("psn", spec.bth.psn, 0xFFFFFF),
	UINT_KEY("va", spec.ext.reth.va, UINT64_MAX),
	UINT_KEY("rkey", spec.ext.reth.rkey, UINT32_MAX),
	UINT_KEY("dmalen", spec.ext.reth.dma_len, UINT32_MAX),
	UINT_KEY("syndrome", spec.ext.aeth.syndrome, 0xFF),
	UINT_KEY("msn", spec.ext.aeth.msn, 0xFFFFFF),
	UINT_KEY("qkey", spec.ext.deth.qkey, UINT32_MAX),
	UINT_KEY("srcqp", spec.ext.deth.src_qp, 0xFFFFFF),
	UINT_KEY("imm", spec.ext.immdt, UINT32_MAX),
	UINT_KEY("ieth", spec.ext.ieth_rkey, UINT32_MAX),
	UINT_KEY("swap", spec.ext.atomic.swap_add, UINT64_MAX),
	UINT_KEY("cmp", spec.ext.atomic.compare, UINT64_MAX),
	UINT_KEY("orig", spec.ext.atomic_ack_orig, UINT64_MAX),
	UINT_KEY("payload", spec.payload_len, WIRE_MAX_FRAME),
	UINT_KEY("badicrc", bad_icrc, 1),
	UINT_KEY("udpcsum", spec.udp_checksum, 1),
	UINT_KEY("enable", pfc_enable, 0xFF),
	UINT_KEY("quanta", quanta[0], 0xFFFF),
	UINT_KEY("q0", quanta[0], 0xFFFF),
	UINT_KEY("q1", quanta[1], 0xFFFF),
	UINT_KEY("q2", quanta[2], 0xFFFF),
	UINT_KEY("q3", quanta[3], 0xFFFF),
	UINT_KEY("q4", quanta[4], 0xFFFF),
	UINT_KEY("q5", quanta[5], 0xFFFF),
	UINT_KEY("q6", quanta[6], 0xFFFF),
	UINT_KEY("q7", quanta[7], 0xFFFF),
};

static void store_uint(void *field, size_t size, uint64_t v)
{
	switch (size) {
	case 1: *(uint8_t *)field = (uint8_t)v; break;
	case 2: *(uint16_t *)field = (uint16_t)v; break;
	case 4: *(uint32_t *)field = (uint32_t)v; break;
	default: *(uint64_t *)field = v; break;
	}
}

static int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	if (*s == '\0' || *s == '-')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return (errno || *end || *out > max) ? -1 : 0;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char tail;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
		return -1;
	for (int i = 0; i < 6; i++) {
		if (v[i] > 0xFF)
			return -1;
		mac[i] = (uint8_t)v[i];
	}
	return 0;
}

/* Addresses are checked against the IP version once the whole description is read. */
static int parse_addr(const char *s, uint8_t addr[16], uint8_t *family_seen)
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1) {
		*family_seen = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		*family_seen = 6;
		return 0;
	}
	return -1;
}

static void set_defaults(struct frame_desc *d, enum frame_desc_kind kind, int opcode)
{
	memset(d, 0, sizeof(*d));
	d->kind = kind;
	memcpy(d->spec.l2.src, default_smac, 6);
	memcpy(d->spec.l2.dst, default_dmac, 6);
	d->spec.ip.version = 4;
	d->spec.ip.dscp = 26;
	d->spec.ip.ecn = WIRE_ECN_ECT0;
	d->spec.ip.ttl = 64;
	d->spec.ip.df = true;
	d->spec.udp.sport = 0xC000;
	d->spec.udp.dport = WIRE_ROCEV2_UDP_PORT;
	d->spec.bth.opcode = (uint8_t)(opcode < 0 ? 0 : opcode);
	d->spec.bth.pkey = WIRE_DEFAULT_PKEY;
	d->spec.bth.dqpn = 0x12;
	if (opcode == WIRE_OP_CNP) {
		d->spec.ip.dscp = 48;
		d->spec.bth.becn = true;
	}
}

static void default_addrs(struct wire_ip *ip, uint8_t sip_family, uint8_t dip_family)
{
	static const uint8_t v4s[4] = {192, 168, 1, 1}, v4d[4] = {192, 168, 1, 2};
	static const uint8_t v6s[16] = {0xfd, [15] = 1}, v6d[16] = {0xfd, [15] = 2};

	if (!sip_family)
		memcpy(ip->src, ip->version == 6 ? v6s : v4s, ip->version == 6 ? 16 : 4);
	if (!dip_family)
		memcpy(ip->dst, ip->version == 6 ? v6d : v4d, ip->version == 6 ? 16 : 4);
}

static int parse_kind(const char *kind, struct frame_desc *d)
{
	int op;

	if (!strcasecmp(kind, "pfc")) {
		set_defaults(d, FRAME_DESC_PFC, -1);
		return 0;
	}
	if (!strcasecmp(kind, "pause")) {
		set_defaults(d, FRAME_DESC_PAUSE, -1);
		return 0;
	}
	op = wire_opcode_by_name(kind);
	if (op < 0)
		return -1;
	set_defaults(d, FRAME_DESC_ROCE, op);
	return 0;
}

static const struct key *find_key(const char *name)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

static int apply_key(struct frame_desc *d, const char *name, const char *value, uint8_t fam[2], char *err,
		     size_t errlen)
{
	const struct key *k = find_key(name);
	void *field;
	uint64_t v;
	int rc = 0;

	if (k == NULL) {
		snprintf(err, errlen, "unknown key '%s'", name);
		return -1;
	}
	field = (char *)d + k->off;
	switch (k->type) {
	case KEY_MAC:
		rc = parse_mac(value, field);
		if (!strcmp(name, "dmac"))
			d->dmac_set = true;
		break;
	case KEY_ADDR:
		rc = parse_addr(value, field, &fam[!strcmp(name, "dip")]);
		break;
	case KEY_UINT:
		rc = parse_uint(value, k->max, &v);
		if (rc == 0)
			store_uint(field, k->size, v);
		if (!strcmp(name, "vlan"))
			d->spec.l2.vlan = true;
		if (rc == 0 && !strcmp(name, "ip") && v != 4 && v != 6)
			rc = -1;
		break;
	}
	if (rc)
		snprintf(err, errlen, "bad value '%s' for key '%s'", value, name);
	return rc;
}

int frame_desc_parse(const char *text, struct frame_desc *d, char *err, size_t errlen)
{
	char buf[1024], *colon, *item, *save = NULL;
	uint8_t fam[2] = {0, 0}; /* family seen in sip, dip */

	if (strlen(text) >= sizeof(buf)) {
		snprintf(err, errlen, "description too long");
		return -1;
	}
	strcpy(buf, text);
	colon = strchr(buf, ':');
	if (colon)
		*colon = '\0';
	if (parse_kind(buf, d)) {
		snprintf(err, errlen, "unknown frame kind '%s' (an opcode name such as rc_send_only, or cnp, pfc, pause)", buf);
		return -1;
	}
	for (item = colon ? strtok_r(colon + 1, ",", &save) : NULL; item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		if (!eq) {
			snprintf(err, errlen, "expected key=value, got '%s'", item);
			return -1;
		}
		*eq = '\0';
		if (apply_key(d, item, eq + 1, fam, err, errlen))
			return -1;
	}
	if ((fam[0] && fam[0] != d->spec.ip.version) || (fam[1] && fam[1] != d->spec.ip.version)) {
		snprintf(err, errlen, "address family of sip/dip differs from ip=%u", d->spec.ip.version);
		return -1;
	}
	default_addrs(&d->spec.ip, fam[0], fam[1]);
	/* va and rkey name the target of whichever of RETH / AtomicETH the opcode carries */
	d->spec.ext.atomic.va = d->spec.ext.reth.va;
	d->spec.ext.atomic.rkey = d->spec.ext.reth.rkey;
	if (d->kind == FRAME_DESC_ROCE && d->spec.payload_len &&
	    !(wire_opcode_info(d->spec.bth.opcode)->flags & WIRE_OPF_PAYLOAD)) {
		snprintf(err, errlen, "opcode %s carries no payload", wire_opcode_info(d->spec.bth.opcode)->name);
		return -1;
	}
	return 0;
}

int frame_desc_build(const struct frame_desc *d, uint8_t *buf, size_t cap)
{
	const uint8_t *dst = d->dmac_set ? d->spec.l2.dst : NULL;
	uint8_t payload_pattern[WIRE_MAX_FRAME]; /* byte i = i & 0xff, so any reader can check them */
	struct wire_roce_spec spec;
	struct wire_pkt p;
	int len;

	switch (d->kind) {
	case FRAME_DESC_PFC:
		return wire_build_pfc(d->spec.l2.src, dst, d->pfc_enable, d->quanta, buf, cap);
	case FRAME_DESC_PAUSE:
		return wire_build_pause(d->spec.l2.src, dst, d->quanta[0], buf, cap);
	case FRAME_DESC_ROCE:
		break;
	}
	for (size_t i = 0; i < sizeof(payload_pattern); i++)
		payload_pattern[i] = (uint8_t)i;
	spec = d->spec;
	spec.payload = payload_pattern;
	len = wire_build_roce(&spec, buf, cap);
	if (len > 0 && d->bad_icrc) {
		wire_parse(buf, (size_t)len, 0, &p);
		wire_icrc_store(buf + p.icrc_off, ~p.icrc_wire);
	}
	return len;
}

/* ---- --all --------------------------------------------------------------------------------- */

static void vary_fields(struct frame_desc *d, unsigned n)
{
	const struct wire_opcode_info *op = wire_opcode_info(d->spec.bth.opcode);
	struct wire_roce_spec *s = &d->spec;

	s->bth.dqpn = 0x010000 + n;
	s->bth.psn = 0xFFFFF0 + (n & 0xF); /* near the 24-bit wrap */
	s->bth.ackreq = (op->flags & WIRE_OPF_END) != 0;
	s->bth.se = (op->flags & WIRE_OPF_IMM) != 0;
	s->udp.sport = wire_udp_sport_from_flow_label(wire_flow_label_from_qpns(0x11, s->bth.dqpn));
	s->ip.id = (uint16_t)n;
	s->ip.flow_label = 0x12345;
	s->ext.reth = (struct wire_reth){.va = 0x7fee260fb000ULL + n, .rkey = 0x2b8, .dma_len = 0x10000};
	s->ext.atomic = (struct wire_atomiceth){.va = 0x1000 + 8ULL * n, .rkey = 0x77, .swap_add = 0x0102030405060708ULL, .compare = 0x1122334455667788ULL};
	s->ext.aeth = (struct wire_aeth){.syndrome = (uint8_t)(n % 3 == 0 ? 0x1F : n % 3 == 1 ? WIRE_AETH_NAK_PSN_SEQ_ERR : WIRE_AETH_RNR_NAK | 0x0E), .msn = 0x000100 + n};
	s->ext.deth = (struct wire_deth){.qkey = 0x80010000, .src_qp = 0x000042};
	s->ext.atomic_ack_orig = 0xCAFEBABEDEADBEEFULL;
	s->ext.immdt = 0xA5A5A5A5;
	s->ext.ieth_rkey = 0x1234;
	if (op->flags & WIRE_OPF_PAYLOAD)
		s->payload_len = (op->flags & WIRE_OPF_END) ? 37 : 64; /* END packets exercise the pad */
}

size_t frame_desc_all(struct frame_desc *out, size_t max)
{
	size_t n = 0;

	for (int op = 0; op < 256; op++) {
		if (!wire_opcode_info((uint8_t)op) || op == WIRE_OP_CNP)
			continue;
		for (int variant = 0; variant < 4 && n < max; variant++, n++) {
			set_defaults(&out[n], FRAME_DESC_ROCE, op);
			out[n].spec.ip.version = variant & 1 ? 6 : 4;
			out[n].spec.l2.vlan = variant & 2;
			out[n].spec.l2.vid = 100;
			out[n].spec.l2.pcp = 3;
			default_addrs(&out[n].spec.ip, 0, 0);
			vary_fields(&out[n], (unsigned)n);
		}
	}
	if (n < max) {
		set_defaults(&out[n], FRAME_DESC_ROCE, WIRE_OP_CNP);
		default_addrs(&out[n].spec.ip, 0, 0);
		out[n++].spec.bth.dqpn = 0x118;
	}
	if (n < max) {
		set_defaults(&out[n], FRAME_DESC_PFC, -1);
		out[n].pfc_enable = 0x48;
		out[n].quanta[3] = 0xFFFF;
		out[n++].quanta[6] = 0x0100;
	}
	if (n < max) {
		set_defaults(&out[n], FRAME_DESC_PAUSE, -1);
		out[n++].quanta[0] = 0x2000;
	}
	return n;
}

/* ---- comparison ----------------------------------------------------------------------------- */

#define CHECK(cond, name)                                                                           \
	do {                                                                                        \
		if (!(cond))                                                                        \
			return name;                                                                \
	} while (0)

static const char *compare_l3(const struct wire_roce_spec *s, const struct wire_pkt *p)
{
	size_t alen = s->ip.version == 6 ? 16 : 4;

	CHECK(p->ip.version == s->ip.version, "ip.version");
	CHECK(p->ip.dscp == s->ip.dscp, "ip.dscp");
	CHECK(p->ip.ecn == s->ip.ecn, "ip.ecn");
	CHECK(p->ip.ttl == s->ip.ttl, "ip.ttl");
	CHECK(!memcmp(p->ip.src, s->ip.src, alen), "ip.src");
	CHECK(!memcmp(p->ip.dst, s->ip.dst, alen), "ip.dst");
	if (s->ip.version == 4) {
		CHECK(p->ip.id == s->ip.id, "ip.id");
		CHECK(p->ip.df == s->ip.df, "ip.df");
	} else {
		CHECK(p->ip.flow_label == s->ip.flow_label, "ip.flow_label");
	}
	CHECK(p->udp.sport == s->udp.sport, "udp.sport");
	CHECK(p->udp.dport == (s->udp.dport ? s->udp.dport : WIRE_ROCEV2_UDP_PORT), "udp.dport");
	return NULL;
}

static const char *compare_transport(const struct wire_roce_spec *s, const uint8_t *frame, const struct wire_pkt *p)
{
	struct wire_ext_hdrs ext;

	CHECK(p->bth.opcode == s->bth.opcode, "bth.opcode");
	CHECK(p->bth.se == s->bth.se && p->bth.mig == s->bth.mig, "bth.se/mig");
	CHECK(p->bth.pad == ((4 - (s->payload_len & 3)) & 3), "bth.pad");
	CHECK(p->bth.pkey == s->bth.pkey, "bth.pkey");
	CHECK(p->bth.fecn == s->bth.fecn && p->bth.becn == s->bth.becn, "bth.fecn/becn");
	CHECK(p->bth.dqpn == s->bth.dqpn, "bth.dqpn");
	CHECK(p->bth.ackreq == s->bth.ackreq, "bth.ackreq");
	CHECK(p->bth.psn == s->bth.psn, "bth.psn");
	CHECK(p->payload_len == s->payload_len, "payload_len");
	for (uint32_t i = 0; i < p->payload_len; i++)
		CHECK(frame[p->payload_off + i] == (uint8_t)i, "payload");
	wire_ext_read(frame + p->bth_off, p->op, &ext);
	if (p->op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_RETH))
		CHECK(!memcmp(&ext.reth, &s->ext.reth, sizeof(ext.reth)), "reth");
	if (p->op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_ATOMICETH))
		CHECK(!memcmp(&ext.atomic, &s->ext.atomic, sizeof(ext.atomic)), "atomiceth");
	if (p->op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_AETH))
		CHECK(ext.aeth.syndrome == s->ext.aeth.syndrome && ext.aeth.msn == s->ext.aeth.msn, "aeth");
	if (p->op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_DETH))
		CHECK(ext.deth.qkey == s->ext.deth.qkey && ext.deth.src_qp == s->ext.deth.src_qp, "deth");
	if (p->op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_ATOMICACKETH))
		CHECK(ext.atomic_ack_orig == s->ext.atomic_ack_orig, "atomicacketh");
	if (p->op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_IMMDT))
		CHECK(ext.immdt == s->ext.immdt, "immdt");
	if (p->op->ext_mask & WIRE_EXT_BIT(WIRE_EXT_IETH))
		CHECK(ext.ieth_rkey == s->ext.ieth_rkey, "ieth");
	return NULL;
}

const char *frame_desc_compare(const struct frame_desc *d, const uint8_t *frame, const struct wire_pkt *p)
{
	const struct wire_roce_spec *s = &d->spec;
	const char *diff;

	switch (d->kind) {
	case FRAME_DESC_PFC:
		CHECK(p->kind == WIRE_KIND_PFC, "kind");
		CHECK(p->pfc_enable == d->pfc_enable, "pfc.enable");
		CHECK(!memcmp(p->quanta, d->quanta, sizeof(d->quanta)), "pfc.quanta");
		return NULL;
	case FRAME_DESC_PAUSE:
		CHECK(p->kind == WIRE_KIND_PAUSE, "kind");
		CHECK(p->quanta[0] == d->quanta[0], "pause.quanta");
		return NULL;
	case FRAME_DESC_ROCE:
		break;
	}
	if (d->bad_icrc)
		CHECK(p->kind == WIRE_KIND_MALFORMED && p->error == WIRE_ERR_ICRC, "verdict");
	else
		CHECK(p->kind == (s->bth.opcode == WIRE_OP_CNP ? WIRE_KIND_CNP : WIRE_KIND_ROCE), "kind");
	CHECK(!memcmp(p->l2.src, s->l2.src, 6) && !memcmp(p->l2.dst, s->l2.dst, 6), "eth.addr");
	CHECK(p->l2.vlan == s->l2.vlan, "vlan");
	if (s->l2.vlan)
		CHECK(p->l2.vid == s->l2.vid && p->l2.pcp == s->l2.pcp && p->l2.dei == s->l2.dei, "vlan.tci");
	diff = compare_l3(s, p);
	return diff ? diff : compare_transport(s, frame, p);
}

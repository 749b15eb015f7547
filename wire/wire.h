/* SPDX-License-Identifier: BSD-3-Clause
 *
 * wire: the RoCEv2 / PFC frame layer.
 *
 * Build and parse Ethernet [802.1Q] IPv4|IPv6 UDP(4791) BTH ext-headers payload pad ICRC,
 * RoCEv2 CNPs, IEEE 802.1Qbb PFC and IEEE 802.3x PAUSE frames; compute the ICRC in full
 * (DPDK rte_net_crc) or incrementally (cost proportional to the changed bytes). The opcode table
 * also chooses opcodes (transport, operation, position); 24-bit PSN arithmetic and AETH
 * syndromes are here too, so the transport neither masks a PSN nor writes an opcode in hex.
 *
 * No EAL calls and no allocation: plain buffers in, verdicts out. Multi-byte fields are
 * big-endian on the wire except the ICRC, which is stored least-significant byte first.
 */
#ifndef ROCE_WIRE_H
#define ROCE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sizes and constants ---------------------------------------------------------------- */
#define WIRE_ROCEV2_UDP_PORT 4791
#define WIRE_ETH_HLEN 14
#define WIRE_VLAN_HLEN 4
#define WIRE_IPV4_HLEN 20
#define WIRE_IPV6_HLEN 40
#define WIRE_UDP_HLEN 8
#define WIRE_BTH_LEN 12
#define WIRE_RETH_LEN 16
#define WIRE_AETH_LEN 4
#define WIRE_DETH_LEN 8
#define WIRE_IMMDT_LEN 4
#define WIRE_IETH_LEN 4
#define WIRE_ATOMICETH_LEN 28
#define WIRE_ATOMICACKETH_LEN 8
#define WIRE_CNP_RSVD_LEN 16
#define WIRE_ICRC_LEN 4
#define WIRE_MIN_FRAME 60 /* without FCS */
/* Largest frame the builder accepts (jumbo, 9000-byte IP MTU + L2 + VLAN). */
#define WIRE_MAX_FRAME 9022

#define WIRE_ETHERTYPE_IPV4 0x0800
#define WIRE_ETHERTYPE_IPV6 0x86DD
#define WIRE_ETHERTYPE_VLAN 0x8100
#define WIRE_ETHERTYPE_MAC_CONTROL 0x8808
#define WIRE_ETHERTYPE_ROCEV1 0x8915
#define WIRE_MAC_CONTROL_PAUSE 0x0001
#define WIRE_MAC_CONTROL_PFC 0x0101
#define WIRE_PFC_PRIORITIES 8
#define WIRE_IPPROTO_UDP 17
#define WIRE_GRH_NEXT_HDR_BTH 0x1B

#define WIRE_DEFAULT_PKEY 0xFFFF
#define WIRE_ECN_NOT_ECT 0
#define WIRE_ECN_ECT1 1
#define WIRE_ECN_ECT0 2
#define WIRE_ECN_CE 3

/* ---- opcodes ---------------------------------------------------------------------------- */
#define WIRE_TRANSPORT_RC 0x00
#define WIRE_TRANSPORT_UC 0x20
#define WIRE_TRANSPORT_UD 0x60
#define WIRE_TRANSPORT_CNP 0x80

enum wire_opcode {
	WIRE_OP_RC_SEND_FIRST = 0x00,
	WIRE_OP_RC_SEND_MIDDLE = 0x01,
	WIRE_OP_RC_SEND_LAST = 0x02,
	WIRE_OP_RC_SEND_LAST_IMM = 0x03,
	WIRE_OP_RC_SEND_ONLY = 0x04,
	WIRE_OP_RC_SEND_ONLY_IMM = 0x05,
	WIRE_OP_RC_WRITE_FIRST = 0x06,
	WIRE_OP_RC_WRITE_MIDDLE = 0x07,
	WIRE_OP_RC_WRITE_LAST = 0x08,
	WIRE_OP_RC_WRITE_LAST_IMM = 0x09,
	WIRE_OP_RC_WRITE_ONLY = 0x0A,
	WIRE_OP_RC_WRITE_ONLY_IMM = 0x0B,
	WIRE_OP_RC_READ_REQUEST = 0x0C,
	WIRE_OP_RC_READ_RESP_FIRST = 0x0D,
	WIRE_OP_RC_READ_RESP_MIDDLE = 0x0E,
	WIRE_OP_RC_READ_RESP_LAST = 0x0F,
	WIRE_OP_RC_READ_RESP_ONLY = 0x10,
	WIRE_OP_RC_ACK = 0x11,
	WIRE_OP_RC_ATOMIC_ACK = 0x12,
	WIRE_OP_RC_COMPARE_SWAP = 0x13,
	WIRE_OP_RC_FETCH_ADD = 0x14,
	WIRE_OP_RC_SEND_LAST_INV = 0x16,
	WIRE_OP_RC_SEND_ONLY_INV = 0x17,
	WIRE_OP_UC_SEND_FIRST = 0x20,
	WIRE_OP_UC_SEND_MIDDLE = 0x21,
	WIRE_OP_UC_SEND_LAST = 0x22,
	WIRE_OP_UC_SEND_LAST_IMM = 0x23,
	WIRE_OP_UC_SEND_ONLY = 0x24,
	WIRE_OP_UC_SEND_ONLY_IMM = 0x25,
	WIRE_OP_UC_WRITE_FIRST = 0x26,
	WIRE_OP_UC_WRITE_MIDDLE = 0x27,
	WIRE_OP_UC_WRITE_LAST = 0x28,
	WIRE_OP_UC_WRITE_LAST_IMM = 0x29,
	WIRE_OP_UC_WRITE_ONLY = 0x2A,
	WIRE_OP_UC_WRITE_ONLY_IMM = 0x2B,
	WIRE_OP_UD_SEND_ONLY = 0x64,
	WIRE_OP_UD_SEND_ONLY_IMM = 0x65,
	WIRE_OP_CNP = 0x81,
};

/* Extended transport headers, in the order IBA places them after the BTH. */
enum wire_ext {
	WIRE_EXT_DETH,
	WIRE_EXT_RETH,
	WIRE_EXT_ATOMICETH,
	WIRE_EXT_AETH,
	WIRE_EXT_ATOMICACKETH,
	WIRE_EXT_IMMDT,
	WIRE_EXT_IETH,
	WIRE_EXT_CNP_RSVD, /* the 16 reserved bytes of a RoCEv2 CNP */
	WIRE_EXT_COUNT
};
#define WIRE_EXT_BIT(e) (1u << (e))

/* Opcode flags */
#define WIRE_OPF_PAYLOAD 0x0001  /* carries a payload (and may carry pad) */
#define WIRE_OPF_START 0x0002    /* first or only packet of a message */
#define WIRE_OPF_MIDDLE 0x0004
#define WIRE_OPF_END 0x0008      /* last or only packet of a message */
#define WIRE_OPF_REQUEST 0x0010  /* sent by a requester */
#define WIRE_OPF_RESPONSE 0x0020 /* sent by a responder (ACK, read response, atomic ACK) */
#define WIRE_OPF_IMM 0x0040      /* carries immediate data */
#define WIRE_OPF_CNP 0x0080

/* One row of the opcode table: which headers the opcode carries and where, in the manner of
 * the Linux soft-RoCE driver's rxe_opcode[] table. Offsets count from the start of the BTH. */
struct wire_opcode_info {
	const char *name;   /* e.g. "RC_SEND_ONLY"; NULL for an undefined opcode */
	uint16_t ext_mask;  /* WIRE_EXT_BIT() of each extended header present */
	uint16_t flags;     /* WIRE_OPF_* */
	uint8_t hdr_len;    /* BTH plus extended headers = offset of the payload */
	uint8_t oper;       /* enum wire_oper */
	uint8_t offset[WIRE_EXT_COUNT];
};

/* Table row for an opcode, or NULL when the opcode is reserved or unsupported. */
const struct wire_opcode_info *wire_opcode_info(uint8_t opcode);
/* Opcode for a name such as "RC_SEND_ONLY" or "rc-send-only"; -1 when unknown. */
int wire_opcode_by_name(const char *name);
const char *wire_ext_name(enum wire_ext e);
uint8_t wire_ext_len(enum wire_ext e);

/* ---- opcode selection --------------------------------------------------------------------- */
/* What an opcode does, whatever its transport, position and immediate (the table's .oper). */
enum wire_oper {
	WIRE_OPER_NONE = 0, /* reserved or unsupported opcode */
	WIRE_OPER_SEND,
	WIRE_OPER_SEND_INV, /* SEND with invalidate (IETH) */
	WIRE_OPER_WRITE,
	WIRE_OPER_READ_REQUEST,
	WIRE_OPER_READ_RESPONSE,
	WIRE_OPER_ACK,
	WIRE_OPER_ATOMIC_ACK,
	WIRE_OPER_COMPARE_SWAP,
	WIRE_OPER_FETCH_ADD,
	WIRE_OPER_CNP,
	WIRE_OPER_COUNT
};
/* A packet's place in its message; a one-packet operation (READ request, ACK, atomic) is ONLY.
 * The order is IBA's (table 38 lists FIRST, MIDDLE, LAST, ONLY). */
enum wire_pos { WIRE_POS_FIRST, WIRE_POS_MIDDLE, WIRE_POS_LAST, WIRE_POS_ONLY, WIRE_POS_COUNT };
static inline enum wire_pos wire_pos_of(bool first, bool last)
{
	return first ? (last ? WIRE_POS_ONLY : WIRE_POS_FIRST) : (last ? WIRE_POS_LAST : WIRE_POS_MIDDLE);
}
/* The opcode that does `oper` at `pos` (with immediate data when `imm`) on `transport`
 * (WIRE_TRANSPORT_RC, _UC, _UD, _CNP), found in the opcode table; -1 when IBA defines none
 * (UD WRITE, RC READ FIRST, ...). Scans the transport's 32 rows: callers on a hot path keep
 * its answers. */
int wire_opcode_select(uint8_t transport, enum wire_oper oper, enum wire_pos pos, bool imm);
/* The position of an opcode's row (ONLY for one-packet operations). */
enum wire_pos wire_opcode_pos(const struct wire_opcode_info *op);

/* ---- PSN arithmetic ---------------------------------------------------------------------- */
/* PSNs (and QPNs, MSNs) are 24-bit; PSN order is circular: a is after b when a - b, as a signed
 * 24-bit number, is positive (IBA 9.7.1; rxe's psn_compare). */
#define WIRE_PSN_MASK 0xFFFFFFu
#define WIRE_QPN_MASK 0xFFFFFFu
#define WIRE_MSN_MASK 0xFFFFFFu
static inline uint32_t wire_psn_add(uint32_t psn, uint32_t n) { return (psn + n) & WIRE_PSN_MASK; }
static inline uint32_t wire_psn_sub(uint32_t psn, uint32_t n) { return (psn - n) & WIRE_PSN_MASK; }
/* Signed distance a - b of two 24-bit PSNs (positive when a is ahead by less than 2^23). */
static inline int32_t wire_psn_diff(uint32_t a, uint32_t b) { return (int32_t)((a - b) << 8) >> 8; }
/* How far psn is past base, 0 .. 2^24 - 1 (a PSN's place in a message that starts at base). */
static inline uint32_t wire_psn_offset(uint32_t psn, uint32_t base) { return (psn - base) & WIRE_PSN_MASK; }
static inline bool wire_psn_before(uint32_t a, uint32_t b) { return wire_psn_diff(a, b) < 0; }
static inline bool wire_psn_after(uint32_t a, uint32_t b) { return wire_psn_diff(a, b) > 0; }

/* ---- AETH ------------------------------------------------------------------------------------ */
/* Syndrome: bits 7:5 its type, bits 4:0 its value: a credit count code (ACK), an RNR timer code
 * (RNR NAK) or a NAK code (IBA 9.7.5.2.1). */
#define WIRE_AETH_TYPE_MASK 0xE0
#define WIRE_AETH_VALUE_MASK 0x1F
#define WIRE_AETH_ACK 0x00
#define WIRE_AETH_RNR_NAK 0x20
#define WIRE_AETH_NAK 0x60
#define WIRE_AETH_CREDITS_INVALID 0x1F /* no end-to-end credit count (e.g. SRQ) */
enum wire_nak_code {
	WIRE_NAK_PSN_SEQ_ERR = 0,
	WIRE_NAK_INVALID_REQ = 1,
	WIRE_NAK_REM_ACCESS_ERR = 2,
	WIRE_NAK_REM_OP_ERR = 3,
	WIRE_NAK_INV_RD_REQ = 4,
};
#define WIRE_AETH_NAK_PSN_SEQ_ERR (WIRE_AETH_NAK | WIRE_NAK_PSN_SEQ_ERR)
#define WIRE_AETH_NAK_INVALID_REQ (WIRE_AETH_NAK | WIRE_NAK_INVALID_REQ)
#define WIRE_AETH_NAK_REM_ACCESS_ERR (WIRE_AETH_NAK | WIRE_NAK_REM_ACCESS_ERR)
#define WIRE_AETH_NAK_REM_OP_ERR (WIRE_AETH_NAK | WIRE_NAK_REM_OP_ERR)
#define WIRE_AETH_NAK_INV_RD_REQ (WIRE_AETH_NAK | WIRE_NAK_INV_RD_REQ)
static inline uint8_t wire_aeth_ack(uint8_t credit_code) { return WIRE_AETH_ACK | (credit_code & WIRE_AETH_VALUE_MASK); }
static inline uint8_t wire_aeth_rnr_nak(uint8_t timer_code) { return WIRE_AETH_RNR_NAK | (timer_code & WIRE_AETH_VALUE_MASK); }
static inline uint8_t wire_aeth_nak(enum wire_nak_code code) { return (uint8_t)(WIRE_AETH_NAK | (code & WIRE_AETH_VALUE_MASK)); }
static inline uint8_t wire_aeth_type(uint8_t syndrome) { return syndrome & WIRE_AETH_TYPE_MASK; }
static inline uint8_t wire_aeth_value(uint8_t syndrome) { return syndrome & WIRE_AETH_VALUE_MASK; }
static inline bool wire_aeth_is_ack(uint8_t syndrome) { return wire_aeth_type(syndrome) == WIRE_AETH_ACK; }
static inline bool wire_aeth_is_rnr_nak(uint8_t syndrome) { return wire_aeth_type(syndrome) == WIRE_AETH_RNR_NAK; }
static inline bool wire_aeth_is_nak(uint8_t syndrome) { return wire_aeth_type(syndrome) == WIRE_AETH_NAK; }
/* The wait an RNR NAK asks for, in microseconds, from its syndrome (or timer code): IBA table 45
 * (code 0 is the longest, 655.36 ms). */
uint32_t wire_aeth_rnr_timer_us(uint8_t syndrome);
/* The credit count an ACK's credit code stands for (IBA table 44: 0, 1, 2, 3, 4, 6, 8, 12, ...,
 * 32768); UINT32_MAX for WIRE_AETH_CREDITS_INVALID. */
uint32_t wire_aeth_credits(uint8_t syndrome);
/* Human name of a syndrome ("ACK", "RNR_NAK", "NAK_PSN_SEQ_ERR", ...). */
const char *wire_aeth_syndrome_name(uint8_t syndrome);

/* ---- big-endian accessors ---------------------------------------------------------------- */
static inline uint16_t wire_get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t wire_get24(const uint8_t *p) { return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2]; }
static inline uint32_t wire_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t wire_get64(const uint8_t *p) { return (uint64_t)wire_get32(p) << 32 | wire_get32(p + 4); }
static inline void wire_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void wire_put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16); p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)v;
}
static inline void wire_put32(uint8_t *p, uint32_t v) { wire_put16(p, (uint16_t)(v >> 16)); wire_put16(p + 2, (uint16_t)v); }
static inline void wire_put64(uint8_t *p, uint64_t v) { wire_put32(p, (uint32_t)(v >> 32)); wire_put32(p + 4, (uint32_t)v); }

/* ---- decoded headers ------------------------------------------------------------------- */
struct wire_l2 {
	uint8_t dst[6];
	uint8_t src[6];
	bool vlan;    /* one 802.1Q tag present */
	uint8_t pcp;  /* 0..7 */
	bool dei;
	uint16_t vid; /* 0..4095 */
};

struct wire_ip {
	uint8_t version;     /* 4 or 6 */
	uint8_t dscp;        /* 0..63 */
	uint8_t ecn;         /* WIRE_ECN_* */
	uint8_t ttl;         /* IPv4 TTL or IPv6 hop limit */
	uint16_t id;         /* IPv4 identification */
	bool df;             /* IPv4 don't-fragment */
	uint32_t flow_label; /* IPv6, 20 bits */
	uint8_t src[16];     /* IPv4 uses the first 4 bytes */
	uint8_t dst[16];
};

struct wire_udp {
	uint16_t sport;
	uint16_t dport; /* 0 in a build spec means 4791 */
	uint16_t len;   /* filled by the parser; computed by the builder */
};

struct wire_bth {
	uint8_t opcode;
	bool se;
	bool mig;
	uint8_t pad;  /* 0..3; the builder computes it from the payload length */
	uint8_t tver; /* 0 */
	uint16_t pkey;
	bool fecn;
	bool becn;
	uint8_t resv6; /* low 6 bits of byte 4; 0 when sending, ignored (but reported) when parsing */
	uint32_t dqpn; /* 24 bits */
	bool ackreq;
	uint8_t resv7; /* low 7 bits of byte 8 */
	uint32_t psn;  /* 24 bits */
};

struct wire_reth {
	uint64_t va;
	uint32_t rkey;
	uint32_t dma_len;
};

struct wire_aeth {
	uint8_t syndrome;
	uint32_t msn; /* 24 bits */
};
/* The 4-byte AETH at p. */
static inline struct wire_aeth wire_aeth_get(const uint8_t *p) { return (struct wire_aeth){p[0], wire_get24(p + 1)}; }
static inline void wire_aeth_put(uint8_t *p, struct wire_aeth a)
{
	p[0] = a.syndrome;
	wire_put24(p + 1, a.msn & WIRE_MSN_MASK);
}

struct wire_deth {
	uint32_t qkey;
	uint32_t src_qp; /* 24 bits */
};

struct wire_atomiceth {
	uint64_t va;
	uint32_t rkey;
	uint64_t swap_add;
	uint64_t compare;
};

/* Values of every extended header; only those the opcode carries are used or filled. */
struct wire_ext_hdrs {
	struct wire_reth reth;
	struct wire_aeth aeth;
	struct wire_deth deth;
	struct wire_atomiceth atomic;
	uint64_t atomic_ack_orig;
	uint32_t immdt;
	uint32_t ieth_rkey;
};

/* Raw BTH access for templates in the data path. */
void wire_bth_read(const uint8_t *bth, struct wire_bth *out);
void wire_bth_write(uint8_t *bth, const struct wire_bth *in);
static inline void wire_bth_set_psn(uint8_t *bth, uint32_t psn) { wire_put24(bth + 9, psn & WIRE_PSN_MASK); }
/* Extended headers at `bth` for the opcode's table row. */
void wire_ext_read(const uint8_t *bth, const struct wire_opcode_info *op, struct wire_ext_hdrs *out);
void wire_ext_write(uint8_t *bth, const struct wire_opcode_info *op, const struct wire_ext_hdrs *in);

/* ---- building ---------------------------------------------------------------------------- */
struct wire_roce_spec {
	struct wire_l2 l2;
	struct wire_ip ip;
	struct wire_udp udp;
	struct wire_bth bth; /* bth.pad is ignored: computed from payload_len */
	struct wire_ext_hdrs ext;
	const uint8_t *payload; /* NULL: payload of zeros */
	uint32_t payload_len;   /* bytes before padding; must be 0 for opcodes without payload */
	bool udp_checksum;      /* compute the UDP checksum; RNICs send 0 (outside the ICRC) */
};

/* Error codes returned (negated) by the builders. */
enum wire_build_error {
	WIRE_BUILD_OK = 0,
	WIRE_BUILD_NO_ROOM = 1,      /* buffer too small */
	WIRE_BUILD_BAD_OPCODE = 2,   /* opcode not in the table */
	WIRE_BUILD_BAD_FIELD = 3,    /* a field out of range (version, PCP, VID, DSCP, ECN, QPN, PSN...) */
	WIRE_BUILD_TOO_LONG = 4,     /* frame larger than WIRE_MAX_FRAME */
	WIRE_BUILD_NO_PAYLOAD = 5,   /* payload given to an opcode that carries none */
	WIRE_BUILD_BAD_PAD = 6,      /* first/middle packet whose payload is not a multiple of 4:
				      * IBA lets only the last or only packet of a message pad */
};

/* Text for a builder's error code (positive or negated). */
const char *wire_build_error_name(int err);
/* Length of the frame wire_build_roce() would write (no FCS, before Ethernet padding). */
size_t wire_roce_frame_len(const struct wire_roce_spec *s);
/* Writes the frame into buf with a correct ICRC, pads it with zeros to WIRE_MIN_FRAME, and
 * returns its length, or -(enum wire_build_error). */
int wire_build_roce(const struct wire_roce_spec *s, uint8_t *buf, size_t cap);

/* 802.1Qbb PFC: class-enable vector bit n = priority n; quanta[n] in 512-bit-time units.
 * dst NULL means 01-80-C2-00-00-01. Returns 60 or -(enum wire_build_error). */
int wire_build_pfc(const uint8_t src[6], const uint8_t *dst, uint8_t class_enable,
		   const uint16_t quanta[WIRE_PFC_PRIORITIES], uint8_t *buf, size_t cap);
/* 802.3x PAUSE (all priorities). Returns 60 or -(enum wire_build_error). */
int wire_build_pause(const uint8_t src[6], const uint8_t *dst, uint16_t quanta, uint8_t *buf, size_t cap);

/* IPv4 header checksum of a 20-byte header (its checksum field is ignored). */
uint16_t wire_ipv4_checksum(const uint8_t *ip);
/* Writes the IP and UDP length fields of a frame's headers for a UDP datagram of udp_len bytes,
 * and the IPv4 header checksum. `l3` points at the IP header. */
void wire_set_ip_udp_len(uint8_t *l3, uint16_t udp_len);

/* RoCEv2 UDP source port from the 20-bit flow label (IB verbs' rdma_flow_label_to_udp_sport),
 * and the flow label both ends derive from a QPN pair (rdma_calc_flow_label). */
uint16_t wire_udp_sport_from_flow_label(uint32_t flow_label);
uint32_t wire_flow_label_from_qpns(uint32_t lqpn, uint32_t rqpn);

/* ---- parsing ------------------------------------------------------------------------------ */
enum wire_kind {
	WIRE_KIND_OTHER = 0, /* well-formed, but not RoCE, PFC or PAUSE (ARP, TCP, ...) */
	WIRE_KIND_ROCE,      /* RoCEv2 (or RoCEv1) transport packet */
	WIRE_KIND_CNP,       /* RoCEv2 congestion notification packet */
	WIRE_KIND_PFC,
	WIRE_KIND_PAUSE,
	WIRE_KIND_MALFORMED, /* see wire_pkt.error */
	WIRE_KIND_COUNT
};

/* Why a frame is malformed; callers count drops by these. */
enum wire_error {
	WIRE_ERR_NONE = 0,
	WIRE_ERR_TRUNCATED_L2,      /* shorter than Ethernet (+VLAN) header */
	WIRE_ERR_TRUNCATED_L3,      /* shorter than the IP header */
	WIRE_ERR_BAD_IP_VERSION,    /* EtherType IPv4/IPv6 but another version nibble */
	WIRE_ERR_BAD_IP_HLEN,       /* IPv4 IHL < 5 */
	WIRE_ERR_IP_OPTIONS,        /* RoCEv2 over IPv4 with options (ICRC undefined) */
	WIRE_ERR_IP_LEN,            /* IP total/payload length beyond the frame or below its header */
	WIRE_ERR_IP_FRAGMENT,       /* fragment of a RoCEv2 datagram */
	WIRE_ERR_IP_CHECKSUM,       /* RoCEv2 over IPv4 whose header checksum is wrong (only with
				     * WIRE_PARSE_CHECK_IP_CSUM) */
	WIRE_ERR_UDP_LEN,           /* UDP length disagrees with the IP length */
	WIRE_ERR_TRUNCATED_BTH,     /* too short for BTH + headers of its opcode + ICRC */
	WIRE_ERR_BAD_BTH_VERSION,   /* TVer != 0 */
	WIRE_ERR_UNKNOWN_OPCODE,    /* reserved or unsupported opcode */
	WIRE_ERR_BAD_LENGTH,        /* transport length not a multiple of 4, or bytes after the
				     * headers of an opcode that carries no payload */
	WIRE_ERR_BAD_PAD,           /* pad count larger than payload, or on a packet that may not pad */
	WIRE_ERR_BAD_CNP,           /* CNP whose length differs from BTH + 16 + ICRC */
	WIRE_ERR_ICRC,              /* ICRC mismatch */
	WIRE_ERR_TRUNCATED_MAC_CTRL,/* MAC control frame too short */
	WIRE_ERR_BAD_MAC_CTRL,      /* PFC whose reserved class-enable byte is not zero */
	WIRE_ERR_OVERSIZE,          /* not from wire_parse (which takes any length): the engine's RX
				     * verdict for a frame longer than WIRE_MAX_FRAME, left unread */
	WIRE_ERR_COUNT
};

const char *wire_kind_name(enum wire_kind k);
const char *wire_error_name(enum wire_error e);

/* Parse flags */
#define WIRE_PARSE_CHECK_ICRC 0x1u
/* The IPv4 header checksum of RoCEv2 datagrams and CNPs (IPv6 has none; other traffic is not
 * checked). A receiver's IP layer drops a datagram whose checksum is wrong before any transport
 * sees it (Linux ip_rcv, which soft-RoCE sits behind, counts it in InHdrErrors). */
#define WIRE_PARSE_CHECK_IP_CSUM 0x2u
/* Headers only, a forwarding hop's view: the ICRC at the frame's end is not loaded (icrc_wire
 * stays 0) unless WIRE_PARSE_CHECK_ICRC asks for it. A switch whose frames another CPU wrote
 * took a cache miss per frame on that one load (bench/run-fabric.sh). */
#define WIRE_PARSE_HEADERS_ONLY 0x4u

struct wire_pkt {
	uint8_t kind;    /* enum wire_kind */
	uint8_t error;   /* enum wire_error, WIRE_ERR_NONE unless kind is MALFORMED */
	uint8_t roce_version; /* 2 for RoCEv2, 1 for RoCEv1 (GRH), 0 otherwise */
	bool icrc_checked;
	uint16_t ethertype;   /* after the VLAN tag, if any */
	/* Offsets are 32-bit: an IPv6 payload length of 65,535 puts the ICRC past 65,535. */
	uint32_t l3_off;      /* offset of the IP header (or GRH) */
	uint32_t l4_off;      /* offset of the UDP header */
	uint32_t bth_off;
	uint32_t payload_off;
	uint32_t icrc_off;
	uint32_t payload_len; /* excluding pad */
	uint32_t frame_len;   /* bytes of the frame that belong to it (L2 .. ICRC) */
	const struct wire_opcode_info *op; /* NULL unless ROCE or CNP */
	struct wire_l2 l2;
	struct wire_ip ip;
	struct wire_udp udp;
	struct wire_bth bth;
	uint32_t icrc_wire;
	uint32_t icrc_calc;   /* valid when icrc_checked */
	/* MAC control */
	uint16_t mac_ctrl_opcode;
	uint8_t pfc_enable;
	uint16_t quanta[WIRE_PFC_PRIORITIES]; /* PAUSE: quanta[0] only */
};

/* Classifies and decodes one frame (starting at the destination MAC, without FCS). Never reads
 * outside [frame, frame+len). Returns out->kind. */
enum wire_kind wire_parse(const uint8_t *frame, size_t len, unsigned flags, struct wire_pkt *out);
/* wire_parse of n frames, out[i] exactly as wire_parse would leave it for frames[i] (the same
 * flags); with WIRE_PARSE_CHECK_ICRC the ICRCs are computed after all the headers, in one pass
 * (faster). */
void wire_parse_burst(const uint8_t *const frames[], const uint32_t lens[], unsigned n, unsigned flags,
		      struct wire_pkt out[]);

/* ---- ICRC ---------------------------------------------------------------------------------- */
/* Selects the fastest rte_net_crc algorithm this CPU and EAL's SIMD limit allow, and fills the
 * table of CRC shift operators the full ICRC uses; call once at start-up (after rte_eal_init,
 * whose --force-max-simd-bitwidth decides whether AVX512 may run). Returns the algorithm's name.
 * Called before rte_eal_init (tools, tests), when EAL has no SIMD limit yet, it allows whatever
 * the CPU supports. Without any call, rte_net_crc picks its own default. */
const char *wire_crc_init(void);
/* Name of the rte_net_crc algorithm in use. */
const char *wire_crc_alg_name(void);
/* CRC-32 (IEEE 802.3) of a buffer, through rte_net_crc. */
uint32_t wire_crc32(const void *data, size_t len);

/* ICRC of a RoCEv2 packet: `l3` points at the IPv4 or IPv6 header, `covered` is the number of
 * bytes from there up to (not including) the ICRC. */
uint32_t wire_icrc(const uint8_t *l3, size_t covered);
/* ICRC of a RoCEv1 packet: `grh` points at the GRH. */
uint32_t wire_icrc_v1(const uint8_t *grh, size_t covered);
static inline uint32_t wire_icrc_load(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void wire_icrc_store(uint8_t *p, uint32_t icrc)
{
	p[0] = (uint8_t)icrc; p[1] = (uint8_t)(icrc >> 8); p[2] = (uint8_t)(icrc >> 16); p[3] = (uint8_t)(icrc >> 24);
}
/* The ICRCs of n frames, out[i] = wire_icrc(l3[i], covered[i]) (wire_icrc_v1 where rocev1[i]).
 * Short frames (up to 252 covered bytes) are computed eight at a time when the CPU has AVX2 and
 * VPCLMULQDQ and EAL's SIMD limit allows 256 bits (after wire_crc_init); the CRC of one short
 * frame is a chain of dependent multiplies, eight chains keep the multiplier busy. */
#define WIRE_ICRC_MANY_MAX 64 /* frames beyond these are computed one at a time */
void wire_icrc_many(const uint8_t *const l3[], const uint32_t covered[], const bool rocev1[], unsigned n,
		    uint32_t out[]);
/* How wire_icrc_many runs on this machine, for start-up logs. */
const char *wire_icrc_method(void);
/* Recomputes and stores the ICRC of a parsed RoCE/CNP frame (after its fields were edited). */
void wire_icrc_seal(uint8_t *frame, const struct wire_pkt *p);

/* ---- incremental ICRC ----------------------------------------------------------------------- */
/* The CRC is linear: for two covered regions of equal length, icrc(A) ^ icrc(B) depends only on
 * A ^ B. A change of k bytes followed by `tail` unchanged covered bytes moves the ICRC by the
 * raw CRC of the k xor-bytes multiplied by x^(8*tail) mod P. */
typedef uint32_t wire_crc_shift; /* x^(8*tail) mod P, precomputed per template */
wire_crc_shift wire_crc_shift_for(size_t tail);
/* New ICRC after bytes old[0..k) became new[0..k), `shift` for the bytes after them. O(k). */
uint32_t wire_icrc_patch(uint32_t icrc, const uint8_t *old_bytes, const uint8_t *new_bytes, size_t k,
			 wire_crc_shift shift);

/* Fastest form, for a field at a fixed place in a template (PSN, a timestamp): one 256-entry
 * table per byte of the field, so an update costs one lookup and one XOR per changed byte. */
#define WIRE_ICRC_FIELD_MAX 8
struct wire_icrc_field {
	uint8_t width;
	uint32_t table[WIRE_ICRC_FIELD_MAX][256];
};
/* Prepares `f` for a field of `width` bytes followed by `tail` covered bytes. Returns 0, or -1
 * when width is 0 or above WIRE_ICRC_FIELD_MAX. */
int wire_icrc_field_init(struct wire_icrc_field *f, unsigned width, size_t tail);
static inline uint32_t wire_icrc_field_update(const struct wire_icrc_field *f, uint32_t icrc,
					      const uint8_t *old_bytes, const uint8_t *new_bytes)
{
	for (unsigned i = 0; i < f->width; i++)
		icrc ^= f->table[i][old_bytes[i] ^ new_bytes[i]];
	return icrc;
}

#ifdef __cplusplus
}
#endif
#endif /* ROCE_WIRE_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The requester side of a QP: turns a flow's operation mix and message sizes into a stream of
 * packets (SEND / RDMA WRITE segmented into first/middle/last/only by the path MTU, RDMA READ
 * requests, UD SENDs), with consecutive PSNs, paced to the flow's rate.
 *
 * A QP is owned by one TX lcore; nothing here is shared.
 */
#ifndef ROCE_ENGINE_REQUESTER_H
#define ROCE_ENGINE_REQUESTER_H

#include <stdbool.h>
#include <stdint.h>

#include "collective.h"
#include "config.h"
#include "congestion.h"
#include "latency.h"
#include "pace_time.h"
#include "rc_reliability.h"
#include "wire.h"

struct rte_mbuf;

struct qp_counters {
	uint64_t tx_packets;
	uint64_t tx_bytes;     /* Ethernet frame bytes without FCS */
	uint64_t messages;     /* messages whose last packet was sent (first transmission) */
	uint64_t payload_bytes;
	/* RC requester and completer */
	uint64_t completions;  /* messages acknowledged (or READ responses all received) */
	uint64_t retransmits;  /* packets sent again after a NAK or a timeout */
	uint64_t timeouts;
	uint64_t acks_rx, naks_rx, rnr_naks_rx;
	uint64_t read_resp_rx;
	uint64_t errors;       /* 1 when the QP went to the error state */
};

/* An RC message in flight, kept until acknowledged so that it can be sent again. A QP keeps at
 * most flows.rc.max_outstanding (<= 128, so log_n, log_head and cur fit a byte) of them. */
struct qp_msg {
	uint32_t first_psn;
	uint32_t npsn;         /* PSNs it takes: its packets, or a READ's response packets */
	uint32_t len;
	uint8_t op;
	uint64_t sent_tsc;     /* its first packet's first transmission (request -> ACK latency) */
};

/* What the receiving lcore tells the QP's owner (over a ring): an RC reliability event, or a CNP. */
enum comp_kind {
	COMP_ACK = RC_REL_ACK,
	COMP_NAK_SEQ = RC_REL_NAK_SEQ,
	COMP_NAK_FATAL = RC_REL_NAK_FATAL,
	COMP_RNR_NAK = RC_REL_RNR_NAK,
	COMP_CNP = RC_REL_EVENT_COUNT
};
struct comp_event {
	uint32_t qp;           /* index in the engine's QP array */
	uint32_t psn;
	uint8_t kind;          /* enum comp_kind */
	uint8_t syndrome;
	uint8_t read_resp;     /* a READ response packet (counted) */
	uint8_t pad;
};

/* A packet's place in its message: wire's positions, by the requester's short names. */
enum seg_pos {
	POS_FIRST = WIRE_POS_FIRST,
	POS_MIDDLE = WIRE_POS_MIDDLE,
	POS_LAST = WIRE_POS_LAST,
	POS_ONLY = WIRE_POS_ONLY,
	POS_COUNT = WIRE_POS_COUNT
};

/* A packet a fixed-size flow sends again and again, identical but for its PSN (and AckReq) and the
 * few bytes that name the QP: the frame's first QP_SHAPE_COPY bytes ready to copy (headers, then
 * the payload's zeros and any Ethernet padding) and the ICRC it has with PSN 0. Shapes are shared
 * by every QP of a flow group (struct qp_group_tx); the bytes that differ from QP to QP (UDP
 * source port, destination QPN, RETH address and rkey, immediate, DETH source QP, the probe's
 * flow, IPv6 flow label) are written over the copy per packet, and their ICRC change, constant
 * per QP, is kept in the QP (qp_tx.icrc_qp), so the TX path needs no CRC over the packet. */
#define QP_MAX_SHAPES 4
#define QP_SHAPE_COPY 128 /* > Ethernet + VLAN + IPv6 + UDP + BTH + RETH + ImmDt = 106 */
struct qp_shape {
	uint8_t bytes[QP_SHAPE_COPY];
	uint16_t frame_len;     /* on the wire (padded to the Ethernet minimum), without FCS */
	uint16_t icrc_off;      /* where the ICRC goes: the payload's zeros end here */
	uint16_t hdr_len;       /* up to the end of the extended headers */
	uint16_t bth_off;
	uint32_t icrc_base;     /* with PSN 0 and the group's neutral QP fields */
	uint32_t payload;       /* payload bytes it carries */
	const struct wire_icrc_field *psn_field;
	/* where the QP's own fields go (0: not in this packet) */
	uint16_t reth_off;      /* RETH (READ request too): VA, rkey */
	uint16_t atomic_off;    /* AtomicETH: VA, rkey, swap/add */
	uint16_t imm_off;       /* ImmDt */
	uint16_t deth_off;      /* DETH: source QP */
	uint32_t wire_len;      /* frame_len + FCS: the pacing time is fp_per_pkt + fp_per_byte * this */
	/* latency: the probe at the start of the payload (its flow per QP, its seq and TX time per packet) */
	uint16_t probe_off;     /* 0: this packet carries none */
	const struct wire_icrc_field *seq_field, *tx_field;
};

struct qp_cc;
struct qp_inject;

/* What the QPs of a flow group share (one per group, built by qp_tx_group_init): the L2-L4
 * template, the shapes, the pacing and stop constants. Read-only once the QPs run but for coll. */
struct qp_group_tx {
	const struct cfg_flow_group *group;
	struct collective_rt *coll; /* the collective whose phases gate the group's QPs, or NULL */
	uint64_t fp_per_pkt;   /* rate in packets/s: time per packet */
	uint64_t onoff_on_fp, onoff_off_fp; /* ON/OFF bursts */
	uint64_t start_tsc;    /* the group's first packets are due (the traffic's start + start_s) */
	uint64_t stop_tsc;     /* 0: none (both moved with the group's QP 0: qp_tx_shift_time) */
	uint64_t fast_stop_msgs; /* fast QPs: the message count that stops them (0: none) */
	struct rc_rel_params rel; /* RC: timers, retry limit, window */
	uint64_t latency_timeout_tsc;
	uint32_t mtu;          /* the group's IB path MTU */
	uint32_t fixed_len;    /* fixed-size flows: every message's size */
	uint8_t transport;     /* enum cfg_transport */
	int8_t only_op;        /* the flow's single operation, or -1 for a weighted mix */
	bool fast;             /* every packet from a shape, whole calls of them: see qp_tx_fill */
	bool cold;             /* its QPs keep a struct qp_tx_cold (RC, draws, ON/OFF) */
	uint8_t n_shapes;
	int8_t shape_of[CFG_OP_COUNT][POS_COUNT]; /* index into shapes[], -1: built the general way */
	uint8_t opcode[CFG_OP_COUNT][POS_COUNT];  /* from the opcode table (wire_opcode_select) */
	uint16_t session;      /* the run's, in latency probes */
	/* the L2 + IP + UDP part of every frame, lengths patched per packet, the QP's UDP source
	 * port (and IPv6 flow label) written over it */
	uint16_t hdr_len;
	uint16_t l3_off;
	uint16_t sport_off;
	bool ipv6;
	uint8_t hdr[WIRE_ETH_HLEN + WIRE_VLAN_HLEN + WIRE_IPV6_HLEN + WIRE_UDP_HLEN];
	wire_crc_shift qp_shift[QP_MAX_SHAPES]; /* for a QP's ICRC term: past its last own byte */
	struct qp_shape shapes[QP_MAX_SHAPES];
	/* the shapes' ICRC field tables (their psn_field, seq_field, tx_field point there): in the
	 * group's bytes after this struct (qp_tx_group_size), shared by shapes of one layout */
	struct wire_icrc_field *fields;
	uint16_t field_tail[QP_MAX_SHAPES * 3]; /* covered bytes after each table's field */
	uint8_t n_fields, max_fields;
} __attribute__((aligned(64)));

/* What only QPs that draw (operation mix, sizes, Poisson gaps), pulse (ON/OFF) or are reliable
 * (RC) keep, out of line: a UC or UD QP with a fixed message, one operation and a constant rate
 * has none (qp_tx.x is NULL). */
struct qp_tx_cold {
	uint64_t rng;
	uint64_t onoff_end_fp;
	/* RC: what has been acknowledged, retries, the RNR wait (rc_reliability.h) */
	struct rc_rel rel;
	/* RC: messages in flight, oldest first (ring) */
	struct qp_msg *log;    /* RC: a ring of log_mask + 1 entries (a power of two >= max_outstanding) */
	uint32_t log_mask;
	uint8_t log_head;
	uint8_t cur;           /* message being sent, relative to log_head (== log_n: a new one) */
};

/* A QP's sending state: 256 bytes (four cache lines), laid out by use. A visit of a fast QP
 * (qp_tx_fill) reads and writes lines 0 and 1 only (pacing, PSN, its ICRC terms, flags; the
 * out-of-line pointers and its TX counters); line 2 is the RC counters, line 3 what DCQCN, RC
 * and the control side use. The rest is per group (sh) or out of line (x, lat). */
struct qp_tx {
	/* line 0 */
	uint64_t next_fp;      /* when the next packet may go, TSC << PACE_SHIFT */
	uint64_t fp_per_byte;  /* rate in Gb/s: time per frame byte (frame + FCS) */
	struct qp_group_tx *sh; /* what the group's QPs share */
	uint32_t psn;
	uint32_t msg_len;      /* bytes of the current message */
	uint32_t msg_off;      /* bytes already sent; msg_len when the next message must start */
	uint32_t icrc_qp[QP_MAX_SHAPES]; /* the ICRC change of this QP's own bytes, per shape */
	uint16_t sport;        /* UDP source port */
	uint8_t msg_op;        /* enum cfg_op */
	bool in_message;
	bool stopping;         /* stop condition reached: no new message */
	bool done;             /* stopping and nothing left to acknowledge, or in error */
	bool fast;             /* sh->fast and no collective */
	bool clean_payload;    /* its TX pool keeps payloads zeroed (tx_payload.h): no zeros to write */
	uint8_t log_n;         /* RC: messages in flight */
	uint8_t prio;          /* its priority on that port (qos/classify.h): PFC pauses it */
	uint8_t tc;            /* its traffic class there (egress scheduling, TX queue) */
	/* line 1 */
	struct qp_latency *lat;
	struct qp_cc *cc;      /* congestion control (transport/congestion.h), or NULL */
	struct qp_inject *inj; /* event injection (transport/inject.h), or NULL */
	uint32_t qpn, dest_qpn;
	struct qp_counters c;  /* its TX counters end line 1, the RC ones fill line 2 */
	/* line 3 */
	/* what its reaction point reads and writes (DCQCN's byte counter, its next timer, where the
	 * rate goes), kept here so that sending touches no cc state (congestion.h) */
	struct cc_tx_link cc_link;
	const struct cfg_flow_group *group;
	struct qp_tx_cold *x;  /* RC, draws, ON/OFF: see struct qp_tx_cold; NULL otherwise */
	struct rte_ring *comp_ring; /* completer events for this QP's owner lcore */
	uint32_t index;        /* QP's index within its group */
	uint16_t port;         /* index into the config's ports */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct qp_tx) == 256, "a QP's sending state is four cache lines");

/* Whether a QP has a rate (or ON/OFF pattern) to pace it. */
static inline bool qp_tx_paced(const struct qp_tx *qp)
{
	return qp->fp_per_byte || qp->sh->fp_per_pkt || qp->sh->onoff_on_fp;
}

/* The group's shared state: qp_tx_group_size(group) zeroed, 64-byte-aligned bytes (the struct,
 * then its shapes' ICRC tables), prepared once
 * before its QPs (qp_tx_init) for a port with this MAC and address. `session` is the run's,
 * written into latency probes. */
size_t qp_tx_group_size(const struct cfg_flow_group *group);
void qp_tx_group_init(struct qp_group_tx *sh, const struct cfg_flow_group *group, const struct cfg_port *port,
		      const uint8_t src_mac[6], uint64_t tsc_hz, uint64_t start_tsc, uint16_t session);
/* The group's QPs wait for this collective's phases (call before the run, for each QP). */
void qp_tx_set_collective(struct qp_tx *qp, struct collective_rt *coll);
/* Memory a QP of the group needs beyond struct qp_tx (RC's or a drawing QP's struct qp_tx_cold
 * and message log, its latency state), which the caller provides to qp_tx_init: sized at
 * start-up, so a QP carries only what its flow uses (a UC QP of fixed-size messages without
 * latency: nothing). */
size_t qp_tx_extra_size(const struct cfg_flow_group *group);
/* Prepares QP `index` of the group whose shared state is `sh` (qp_tx_group_init); `extra` points
 * at qp_tx_extra_size(group) zeroed, 64-byte-aligned bytes. `flow` is the QP's index in the
 * engine, written into its latency probes. */
void qp_tx_init(struct qp_tx *qp, struct qp_group_tx *sh, uint32_t index, uint64_t tsc_hz, uint64_t start_tsc,
		void *extra, uint32_t flow);
/* Writes the QP's next packet into m (which must have room for a full frame) and advances its
 * state and pacing; returns the frame length. */
uint16_t qp_tx_next(struct qp_tx *qp, struct rte_mbuf *m, uint64_t now_tsc);
/* Writes up to `max` packets of the QP into m[] (mbufs with room for a full frame) while its next
 * send time is at most until_fp (TSC << PACE_SHIFT; UINT64_MAX when unpaced); returns how many.
 * For fast QPs (a fixed message size, one SEND or WRITE operation, UC or UD, a constant rate or
 * none, no collective) the message, stop, pacing and counter work is done once per call and each
 * packet is a shape copy, a PSN and three table lookups; other QPs go packet by packet. */
unsigned qp_tx_fill(struct qp_tx *qp, struct rte_mbuf **m, unsigned max, uint64_t now_tsc, uint64_t until_fp);
/* A new rate for a QP paced in Gb/s, from another thread (the control interface): its time per
 * byte is stored atomically; the owner lcore uses it from its next packet. */
void qp_tx_set_rate(struct qp_tx *qp, double gbps, uint64_t tsc_hz);
/* Moves every time of the QP `delta` cycles later (planning took longer than foreseen); the
 * group's shared times move with its QP 0: call it for every QP of the group. */
void qp_tx_shift_time(struct qp_tx *qp, uint64_t delta_tsc);
/* RC: whether the QP may send now (window, RNR wait, error); also runs the retransmit timer. */
bool qp_tx_can_send(struct qp_tx *qp, uint64_t now_tsc);
/* RC completer: applies an ACK / NAK / READ response event from the receiving side. */
void qp_tx_complete(struct qp_tx *qp, const struct comp_event *ev, uint64_t now_tsc);
/* Largest frame the group can produce (for mbuf sizing checks). */
uint32_t qp_max_frame(const struct cfg_flow_group *group);

#endif

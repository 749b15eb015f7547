/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The receiving side, per RX lcore: every frame is classified by the wire parser; RoCE frames
 * are accounted to a receiver QP keyed by (port, destination QPN) with PSN tracking (lost,
 * duplicate, out of order), ICRC errors and ECN-CE marks; malformed frames are counted by
 * reason and dropped; PFC and PAUSE frames are counted per priority.
 *
 * Receiver QPs come from a table sized at start-up (a qp_map, qp_index.h); a QPN seen for the
 * first time takes a free entry, and when none is left the frame is counted as `rx_qp_table_full`.
 * A direct-mapped cache of (port, QPN) -> entry in front of it spares most frames the hash lookup.
 *
 * A collective with `receives` watches ranges of receiver QPNs: a watched QP takes its collective
 * when it is made, and each request message it counts (its last packet, duplicates excluded) is a
 * receipt of the phase of that message's index on the QP.
 */
#ifndef ROCE_ENGINE_RECEIVER_H
#define ROCE_ENGINE_RECEIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "np.h"
#include "wire.h"

#define RX_PSN_WINDOW 128 /* PSNs behind the highest seen that are told apart: late or duplicate */
#define RX_MAX_WATCHES (CFG_MAX_COLLECTIVES * CFG_MAX_COLLECTIVE_RECEIVES) /* every receive range of a config */

struct collective_rt;

struct rx_qp_counters {
	uint64_t packets, bytes; /* bytes: Ethernet frame bytes without FCS */
	uint64_t messages;       /* last/only packets of requests received */
	uint64_t payload_bytes;
	uint64_t lost;           /* PSNs skipped and not (yet) seen */
	uint64_t out_of_order;   /* arrived after a later PSN */
	uint64_t duplicates;
	uint64_t icrc_errors;
	uint64_t ecn_ce;
	uint64_t cnp;            /* CNPs addressed to this QPN */
	uint64_t cnp_tx;         /* CNPs the notification point sent for its CE marks */
	uint64_t cnp_suppressed; /* CE marks within min_time_between_cnps of the last CNP */
};

struct rx_qp {
	uint16_t port;
	uint32_t qpn;
	bool started;
	bool resync;             /* the next PSN is taken as is (after a READ request) */
	uint32_t next_psn;       /* one past the highest PSN seen */
	uint64_t window[RX_PSN_WINDOW / 64]; /* bit i: PSN next_psn - 1 - i was received */
	uint32_t lat_slot;       /* its one-way latency statistics in the lcore's lat_rx (0: none yet) */
	struct np_qp np;         /* notification point: when it last sent a CNP */
	struct collective_rt *coll; /* a collective that waits for this QP's messages (its n-th: phase n), or NULL */
	struct rx_qp_counters c;
};

struct rx_port_counters {
	uint64_t frames, bytes;
	uint64_t kind[WIRE_KIND_COUNT];
	uint64_t error[WIRE_ERR_COUNT];
	uint64_t pfc_rx[WIRE_PFC_PRIORITIES]; /* PFC frames with the priority's enable bit set */
	uint64_t pfc_xoff_rx[WIRE_PFC_PRIORITIES]; /* ... and a non-zero pause time */
	uint64_t pause_rx;
	uint64_t rx_qp_table_full;
	uint64_t not_contiguous; /* multi-segment mbufs, copied before parsing */
	uint64_t injected_drops; /* dropped on purpose (rx_drop_probability) */
	uint64_t rc_unknown_qp;  /* ACKs/NAKs/READ responses for no local requester, or its ring full */
	uint64_t prio_frames[WIRE_PFC_PRIORITIES]; /* RoCE and CNP frames by priority (the port's map) */
	uint64_t prio_bytes[WIRE_PFC_PRIORITIES];
	/* notification point (np) */
	uint64_t np_cnp_tx;      /* CNPs queued for sending */
	uint64_t np_suppressed;  /* CE marks within min_time_between_cnps */
	uint64_t np_no_peer;     /* CE marks for a receiver QP whose sender's QPN is unknown */
	uint64_t np_failed;      /* CNPs that found no TX queue, mbuf or room */
	/* events injected on arrival (rx_inject) */
	uint64_t inject_ce, inject_drop, inject_corrupt;
};

struct rx_ctx;

/* A context for one lcore: room for `max_qps` receiver QPs over `n_ports` ports. NULL on error. */
struct rx_ctx *rx_ctx_create(unsigned lcore, unsigned n_ports, unsigned max_qps, int socket);
void rx_ctx_free(struct rx_ctx *ctx);
/* Before the run: receiver QPs qpn_first .. qpn_first + count - 1 of config port `port` deliver
 * their messages to collective `coll` (collective_received, message n for phase n), from the first
 * frame that makes each QP. 0, or -1 when RX_MAX_WATCHES ranges are already watched. */
int rx_ctx_watch_messages(struct rx_ctx *ctx, uint16_t port, uint32_t qpn_first, uint32_t count,
			  struct collective_rt *coll);
/* Accounts n frames received on config port `port`, in order; the parsed
 * frames are left in p[], and qps[i] is the receiver QP frame i was counted to, or NULL (not
 * RoCE, malformed, a duplicate, or the table full). The ICRCs are computed back to back. */
void rx_account_burst(struct rx_ctx *ctx, uint16_t port, const uint8_t *const frames[], const uint32_t lens[],
		      unsigned n, struct wire_pkt p[], struct rx_qp *qps[]);
/* A frame longer than WIRE_MAX_FRAME: counted (malformed, `oversize`), not parsed. */
void rx_account_oversize(struct rx_ctx *ctx, uint16_t port, uint32_t len);
/* Counters the lcore loop keeps in the same table. */
void rx_count_injected_drop(struct rx_ctx *ctx, uint16_t port);
void rx_count_rc_unknown(struct rx_ctx *ctx, uint16_t port);
void rx_count_priority(struct rx_ctx *ctx, uint16_t port, uint8_t prio, uint32_t len);
enum rx_np_count { RX_NP_SENT, RX_NP_SUPPRESSED, RX_NP_NO_PEER, RX_NP_FAILED };
void rx_count_np(struct rx_ctx *ctx, uint16_t port, enum rx_np_count what);
/* An event rx_inject made (enum cfg_inject_action). */
void rx_count_inject(struct rx_ctx *ctx, uint16_t port, int action);
/* Reading (from another lcore, relaxed): the port's counters and the receiver QPs. */
const struct rx_port_counters *rx_port_counters(const struct rx_ctx *ctx, uint16_t port);
unsigned rx_qp_count(const struct rx_ctx *ctx);
const struct rx_qp *rx_qp_at(const struct rx_ctx *ctx, unsigned i);
/* The receiver QP for (port, qpn), or NULL. */
const struct rx_qp *rx_qp_find(const struct rx_ctx *ctx, uint16_t port, uint32_t qpn);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The RC responder, after the Linux soft-RoCE driver's: checks each request's PSN against the
 * expected one (ePSN); in sequence it delivers the request and acknowledges it (AckReq, or every
 * `ack_every` packets), answers READ requests with READ responses and atomics with an atomic ACK;
 * ahead of sequence it sends one NAK (PSN sequence error, carrying ePSN) and drops until ePSN
 * arrives; behind it (a duplicate) it acknowledges again, or re-executes the READ.
 *
 * Responder QPs are made at start-up for the RC flows whose destination is a local port; each
 * is driven by the RX lcore that receives its requests, and answers through that lcore's TX
 * queue on the same port.
 */
#ifndef ROCE_ENGINE_RESPONDER_H
#define ROCE_ENGINE_RESPONDER_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "qp_index.h"
#include "wire.h"

struct rte_mbuf;
struct rte_mempool;

struct resp_counters {
	uint64_t delivered_messages; /* in sequence, each once */
	uint64_t delivered_bytes;
	uint64_t acks_tx, naks_tx, read_resp_tx, atomic_acks_tx;
	uint64_t duplicates;         /* requests behind ePSN (answered again) */
	uint64_t out_of_sequence;    /* requests ahead of ePSN (dropped after one NAK) */
};

struct resp_qp {
	uint16_t port;               /* config index where requests arrive */
	uint32_t qpn, peer_qpn;
	uint32_t mtu, ack_every;
	uint16_t pkey;
	uint32_t epsn;               /* next PSN expected */
	uint32_t msn;                /* messages completed, 24-bit, carried in every AETH */
	uint32_t since_ack;
	bool nak_sent;
	bool have_peer;              /* the reply headers were learned from a request */
	uint64_t atomic_mem;         /* the 8 bytes atomics operate on */
	bool have_atomic;            /* the last atomic's answer, replayed for a duplicate of it */
	uint32_t last_atomic_psn;
	uint64_t last_atomic_orig;
	/* READ responses still to send */
	bool rd_active;
	uint32_t rd_psn, rd_left, rd_len;
	uint8_t rd_opcode[WIRE_POS_COUNT]; /* READ response opcodes by position, from the opcode table */
	struct wire_roce_spec reply; /* L2/IP/UDP of answers: the request's, swapped */
	struct resp_counters c;
};

/* Where one RX lcore's answers for one port go. */
#define RESP_OUT_MAX 512
struct qos_map;
struct pfc_pause;

struct resp_out {
	struct rte_mempool *pool;
	uint16_t port_id, queue;
	bool has_queue;              /* the lcore has a TX role on the port */
	unsigned n;
	uint64_t dropped;            /* answers that could not be queued (no queue, no mbuf, full) */
	uint64_t tx_packets, tx_bytes; /* answers the PMD took */
	const struct qos_map *map;   /* the port's classification, and its PFC state (NULL: not honoured): */
	const struct pfc_pause *pause; /* answers of a paused priority wait */
	struct capture_lcore *cap;   /* --capture: answers are copied when queued */
	struct rte_mbuf *buf[RESP_OUT_MAX];
};

/* Start-up: responder QPs for every RC flow whose destination MAC is a local port's and for the
 * config's `responders`: how many, then their states (*out, NULL when none), each entered in the
 * index as its QP's responder. -1: out of memory, or the index full. */
struct resp_table;
unsigned responder_table_need(const struct engine_config *cfg, const uint8_t port_macs[][6], unsigned n_ports);
int responder_table_build(struct qp_index *ix, const struct engine_config *cfg, const uint8_t port_macs[][6],
			  unsigned n_ports, struct resp_table **out);
void responder_table_free(struct resp_table *t);
/* The responder QP for requests to `qpn` arriving on `port`, or NULL. */
struct resp_qp *responder_find(const struct qp_index *ix, uint16_t port, uint32_t qpn);
/* One request received (the frame was parsed and its ICRC verified). */
void responder_request(struct resp_qp *q, const uint8_t *frame, const struct wire_pkt *p, struct resp_out *out);
/* Sends more of a pending READ answer; true while some remains. */
bool responder_pump(struct resp_qp *q, struct resp_out *out);
/* An mbuf for an answer, or NULL, counted as dropped (no TX queue on the lcore, buffer full,
 * pool empty). */
struct rte_mbuf *resp_out_mbuf(struct resp_out *out);
/* Queues m, into which a builder wrote a frame of `len` bytes; len < 0 (the builder failed):
 * frees it, counted as dropped. */
void resp_out_queue(struct resp_out *out, struct rte_mbuf *m, int len);
/* Hands the queued answers to the PMD (what it refuses stays queued). */
void resp_out_flush(struct resp_out *out);

#endif

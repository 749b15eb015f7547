/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The completer's plumbing: ACKs, NAKs and READ responses arrive on the RX lcore of the
 * requester's port, but a QP's state belongs to its TX lcore. The RX side finds the QP in the
 * engine's QP index (qp_index.h: read-only once running) and posts an event on the owner's ring;
 * the owner applies the events it finds there before it sends (qp_tx_complete).
 */
#ifndef ROCE_ENGINE_COMPLETER_H
#define ROCE_ENGINE_COMPLETER_H

#include <stdint.h>

#include "qp_index.h"
#include "requester.h"
#include "wire.h"

struct rte_ring;

/* Start-up: the QPs the RX side posts to (RC requesters, QPs with congestion control or
 * injection), how many, then entered in the index as requesters. 0, or -1 when it is full. */
unsigned completer_index_need(const struct qp_tx *qps, unsigned n_qps);
int completer_index_build(struct qp_index *ix, struct qp_tx *qps, unsigned n_qps);
/* One ring per TX role (events from any RX lcore, read by the owner only). */
struct rte_ring *completer_ring_create(const char *name, unsigned size, int socket);
/* RX side: an ACK / NAK / READ response / atomic ACK received on `port` for requester `qpn`.
 * Returns false when no local requester has that QPN, or its ring is full (counted by caller). */
bool completer_post(const struct qp_index *ix, uint16_t port, const uint8_t *frame, const struct wire_pkt *p);
/* RX side: a CNP received on `port` for local QP `qpn`: posted to the owner when the QP has
 * congestion control or injection. False when the owner's ring is full. */
bool completer_post_cnp(const struct qp_index *ix, uint16_t port, uint32_t qpn);
/* TX side: applies up to `max` pending events of the ring. */
void completer_drain(struct rte_ring *r, struct qp_tx *qps, uint64_t now_tsc);

#endif

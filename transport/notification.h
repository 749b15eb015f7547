/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The notification point in the engine (cc/np.h decides, this builds and sends): a CE-marked
 * request arriving for a receiver QP makes a CNP toward the QP that sent it, unless one went for
 * that receiver QP within the port's np.min_time_between_cnps. The CNP goes out with the RX
 * lcore's RC answers on the same port: the data packet's addresses swapped, DSCP np.cnp_dscp,
 * the 802.1Q priority np.cnp_802p_prio when the data packet was tagged, BECN set, destination QP
 * the sender's.
 *
 * The sender's QPN is not in a RC or UC packet (the receiving NIC knows it from its QP context):
 * the engine knows it for flows whose destination is a local port and for the `responders` of
 * the config; a UD packet names it in its DETH. Others are counted as `cnp_no_peer`.
 */
#ifndef ROCE_ENGINE_NOTIFICATION_H
#define ROCE_ENGINE_NOTIFICATION_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "qp_index.h"
#include "receiver.h"
#include "responder.h"
#include "wire.h"

/* Start-up: the local QPs whose sender's QPN the config tells (flows to a local port, the
 * `responders` and `peers` entries): how many, then each entered in the index with its peer.
 * 0, or -1 when the index is full. */
unsigned notification_table_need(const struct engine_config *cfg, const uint8_t port_macs[][6], unsigned n_ports);
int notification_table_build(struct qp_index *ix, const struct engine_config *cfg, const uint8_t port_macs[][6],
			     unsigned n_ports);

/* RX lcore: a RoCE frame accounted to receiver QP q on `port` (already counted). Sends a CNP when
 * it is a CE-marked request and the spacing allows. */
void notification_on_frame(const struct qp_index *ix, const struct cfg_port *cp, uint16_t port, const uint8_t *frame,
			   const struct wire_pkt *p, struct rx_qp *q, struct rx_ctx *ctx, struct resp_out *out,
			   uint64_t now_ns);

#endif

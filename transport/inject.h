/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Event injection (config `inject = ( ... )` on a flow, `rx_inject = ( ... )` on a port): chosen
 * packets are marked ECN-CE, dropped, or given a wrong ICRC, chosen by PSN, every Nth packet or
 * with a probability. On TX it also measures how the far end answers each event: a CE mark by a
 * CNP (CNP delay: from sending the marked packet to the CNP's arrival; and the spacing of the
 * CNPs that come back), a drop or a bad ICRC (RC) by a NAK (NAK delay: from sending the packet
 * after the gap, which shows the gap, to the NAK's arrival). Against a RoCE NIC as the receiver
 * that is its CNP generation and NAK behaviour; in the virtual lab it tests our own endpoints.
 *
 * Per-QP state out of line (only QPs of flows with rules have it), owned by the QP's TX lcore;
 * per-port RX state owned by the lcore receiving the port (one RX lcore per port queue: each has
 * its own). docs/cc.md.
 */
#ifndef ROCE_ENGINE_INJECT_H
#define ROCE_ENGINE_INJECT_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "wire.h"

struct rte_mbuf;
struct qp_tx;

struct inject_rule_state {
	const struct cfg_inject *cfg;
	uint32_t below;               /* probability as a 32-bit threshold */
	uint64_t seen;                /* packets looked at (every Nth) */
	uint64_t done;                /* events made */
	bool psn_done;
};

struct delay_summary {
	uint64_t n, sum_ns, min_ns, max_ns;
};

#define INJECT_MAX_EVENTS 256
struct inject_event {
	uint64_t tx_ns;               /* when the packet went (or would have gone) */
	uint32_t psn;
	uint8_t action;               /* enum cfg_inject_action */
	uint8_t answered;             /* the CNP / NAK it drew came */
	uint16_t pad;
	uint64_t delay_ns;            /* CNP or NAK delay, when answered */
};

struct qp_inject {
	unsigned n_rules;
	struct inject_rule_state rule[CFG_MAX_INJECT];
	uint64_t rng;
	uint64_t ce_marked, dropped, corrupted;
	/* the answers */
	uint64_t ce_pending_tsc;      /* the oldest CE mark no CNP answered yet (0: none) */
	int ce_pending_ev;            /* its event, or -1 */
	bool gap_pending;             /* a packet was dropped or corrupted: the next one shows the gap */
	int gap_ev;
	uint64_t nak_from_tsc;        /* that next packet's send time (0: no NAK awaited) */
	int nak_ev;
	uint64_t last_cnp_tsc;
	struct delay_summary cnp_delay, cnp_spacing, nak_delay;
	unsigned n_events;            /* the first INJECT_MAX_EVENTS are kept */
	struct inject_event ev[INJECT_MAX_EVENTS];
};

/* Per port and RX lcore: the port's rx_inject rules. */
struct port_inject {
	unsigned n_rules;
	struct inject_rule_state rule[CFG_MAX_INJECT];
	uint64_t rng;
};

void qp_inject_init(struct qp_inject *in, const struct cfg_flow_group *g, uint32_t qp_index, uint64_t seed);
void port_inject_init(struct port_inject *in, const struct cfg_port *p, uint64_t seed);
/* TX: applies the rules to the n frames the QP just wrote in m[]; dropped frames move to the end
 * (their mbufs stay the caller's, unsent). Returns the frames left to send. */
unsigned inject_tx(struct qp_inject *in, struct rte_mbuf **m, unsigned n, uint64_t now_tsc);
/* RX: applies the port's rules to a frame about to be accounted; returns the action taken
 * (enum cfg_inject_action; CFG_INJECT_DROP: do not account it) or -1. */
int inject_rx(struct port_inject *in, uint8_t *frame, uint32_t len);
/* Owner lcore: a CNP / a NAK reached the QP. */
void inject_on_cnp(struct qp_inject *in, uint64_t now_tsc);
void inject_on_nak(struct qp_inject *in, uint64_t now_tsc);

#endif

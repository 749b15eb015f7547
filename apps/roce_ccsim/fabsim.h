/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The fabric simulation (docs/ccsim.md#fabric-scenarios): a fabric_build()'s switches, each with
 * the engine lab switch's shared-buffer MMU (lab/switch_mmu.h: admission, per-class egress
 * queues, PFC XOFF/XON with headroom per ingress port and priority) and its load balancing among
 * equal-cost next hops (fabric/fab_lb.h: ECMP, flowlet, spray); RED/ECN at dequeue (cc/red.h);
 * PFC hop by hop (a switch pauses the transmitter behind its ingress port: a NIC or another
 * switch's port); NICs that send their QPs round-robin at the link's rate, each QP paced by its
 * own DCQCN or TIMELY (cc/), and receivers with the notification point and go-back-N (NAK on a
 * gap, coalesced ACKs, a retransmission timeout). Discrete events in integer ns, link arithmetic
 * in ps, one seeded generator: the same scenario and seed give the same bytes of output.
 *
 * Links have a direction: dlink 2l is link l from its switch end, 2l + 1 back (fab_fluid.h).
 */
#ifndef ROCE_CCSIM_FABSIM_H
#define ROCE_CCSIM_FABSIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dcqcn.h"
#include "fab_lb.h"
#include "fab_scenario.h"
#include "heap.h"
#include "np.h"
#include "switch_mmu.h"
#include "timely.h"
#include "timer_wheel.h"

/* A data packet waiting in a switch's egress queue. */
struct fs_pkt {
	uint64_t send_ns;             /* when its NIC started it (TIMELY's RTT) */
	uint32_t flow, psn;
	uint32_t bytes;
	uint16_t in_port;             /* the switch port it came in by (the MMU's ingress counter) */
	uint8_t flags;                /* FS_PKT_* */
};

struct fs_fifo {
	struct fs_pkt *a;
	uint32_t cap, head, n;        /* a ring; cap is a power of two */
};

/* Flow ids a NIC may send next for one class: each ready flow once, round-robin. */
struct fs_ring {
	uint32_t *a;
	uint32_t cap, head, n;
};

/* A directed link and the transmitter at its start (a switch's egress port or a NIC). */
struct fs_dlink {
	uint64_t kbps, delay_ns;
	bool from_nic, to_nic;
	bool down;                    /* fabric.events: what is sent into it, or on it, is lost */
	uint32_t from, from_port;     /* switch and local port, or the NIC (port 0) */
	uint32_t to, to_port;
	uint32_t back;                /* the dlink the other way (PFC toward this transmitter comes by it) */
	/* transmitter */
	uint64_t free_ps;
	bool busy;
	uint8_t paused;               /* classes the far end paused (PFC) */
	struct fs_fifo q[8];          /* a switch port's egress queues, by class */
	/* counters */
	uint64_t bytes, pkts, marked, win_bytes;
	uint64_t drop_buffer, drop_queue, drop_headroom, drop_no_route, drop_link_down;
	uint64_t pause_rx[8], paused_ns[8], paused_since[8];
	uint64_t xoff_tx;             /* XOFF frames the far end sent toward this transmitter */
	uint64_t max_q[8];
	uint32_t flows;               /* flows whose path crosses it (a sprayed flow: each it may take) */
	uint64_t sample_bytes;        /* at the last sample */
	float *util;                  /* per sample interval: the share of the link's rate it carried */
};

struct fs_switch {
	const struct sc_switch *cfg;
	struct switch_mmu mmu;
	struct fab_lb_opts lb;
	struct fab_lb_state st;
	uint32_t *out;                /* [local port]: its dlink */
	uint64_t flowlets_at_start;
};

struct fs_nic {
	uint32_t out;                 /* its dlink to the switch */
	bool pick_pending;            /* an EV_NIC_PICK is due this ns (QPs starting together) */
	struct fs_ring ready[8];      /* by class */
};

enum { FS_PKT_CE = 1, FS_PKT_ACKREQ = 2 };

struct fs_qp {
	const struct fs_flow *cfg;
	const struct sc_flow *cc;     /* its traffic entry's */
	struct dcqcn_qp dcqcn;
	struct timely_qp timely;
	struct np_qp np;
	uint64_t line_kbps, rate_kbps;
	uint64_t next_ps, last_start_ps;
	uint32_t last_bytes, jit_ps;
	uint64_t send_gen;
	uint32_t n_pkts;              /* packets in the flow (UINT32_MAX: sends until the end) */
	uint32_t last_pkt_bytes;
	uint32_t snd_nxt, snd_una, snd_max; /* sender: next PSN, oldest unacknowledged, highest sent + 1 */
	uint32_t rcv_epsn;            /* receiver: the PSN it expects */
	uint64_t placed[4];           /* PSNs placed ahead of it (transport.reorder_window), by PSN mod 256 */
	uint32_t rto_una;
	uint64_t seg_bytes;
	uint64_t back_ns;             /* the reverse path's propagation (ACK, NAK, CNP) */
	uint64_t last_ack_ns;         /* the receiver's last ACK */
	uint64_t ideal_ns;            /* the flow's completion time alone in the fabric */
	bool started, in_ring, send_pending, rto_pending, nak_sent, done;
	bool together;                /* another QP of its NIC starts at the same ns */
	/* counters */
	uint64_t sent_pkts, retx_pkts, rx_bytes, rx_pkts, ooo_pkts, dup_pkts, drops, ce_pkts;
	uint64_t cnp_rx, naks, timeouts, win_rx_bytes;
	uint64_t completion_ns;       /* UINT64_MAX: not complete */
	uint16_t hit_event;           /* 1 + the last link event whose window it lost frames in */
};

/* What each link event cost: frames lost from it to the next event, the flows that lost any,
 * the last loss, and when the routes converged. */
struct fs_event_cost {
	uint64_t lost, flows_hit, last_loss_ns, converged_ns;
	bool converged;
};

struct fabsim {
	const struct scenario *sc;
	const struct fab_scenario *fs;
	const struct fabric *f;
	struct evheap h;
	struct timer_wheel *w;
	bool tick_pending;
	uint64_t now, rng, events;
	struct fs_dlink *dl;
	unsigned n_dl;
	struct fs_switch *sw;
	struct fs_nic *nic;
	struct fs_qp *qp;
	unsigned n_qp;
	const struct fab_routes *routes; /* the scenario's, or after a link event the converged ones */
	struct fab_routes converged;
	bool have_converged;
	struct fs_event_cost *ev;
	int cur_event;                /* the last link event so far, -1 before the first */
	unsigned n_samples, max_samples;
	FILE *csv;
};

/* 0, or -1 (out of memory or a bad switch setting: message in err). csv may be NULL. */
int fabsim_init(struct fabsim *s, const struct scenario *sc, FILE *csv, char *err, size_t errlen);
void fabsim_run(struct fabsim *s);
void fabsim_free(struct fabsim *s);

/* The MMU parameters of a switch with the scenario's settings for its tier (headroom, when the
 * file gives none: 2 x the longest delay x the fastest rate of its links + 2 frames). */
void fabsim_mmu_params(const struct fabric *f, unsigned s, const struct sc_switch *c, unsigned max_mtu,
		       struct mmu_params *p);

#endif

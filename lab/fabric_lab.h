/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The virtual fabric in the engine (docs/fabric.md, "The engine runs it"): every switch of the
 * config's `fabric` (struct cfg_fabric) as a lab switch (switch.h) that routes at L3
 * (switch_route.h), polled in turn by one lcore, or dealt over several (fabric.lcores: each
 * lcore polls its part of them, part 0 also keeps the fabric's clock of samples, deadlock checks
 * and link events). A NIC's cable is the in-process ring cable of
 * its port ("ring:fabN:a", the switch holding end b's rings); a link between two switches is a
 * pair of rings of its own. Every switch port emulates its link (rate, delay), queues per traffic
 * class in the switch's shared buffer, marks ECN and sends PFC toward the port a frame came in
 * on: so a congested leaf pauses the spines, whose queues then fill and pause the other leaves,
 * hop by hop, with real PFC frames on the links.
 */
#ifndef ROCE_LAB_FABRIC_LAB_H
#define ROCE_LAB_FABRIC_LAB_H

#include <stdint.h>

#include <rte_common.h>
#include <rte_spinlock.h>

#include "config.h"
#include "switch.h"

struct rte_mempool;
struct rte_ring;

#define FAB_MAX_DEADLOCKS 16
#define FAB_DEADLOCK_QUEUES 8

/* A deadlock: no frame left any switch for fabric.deadlock_ms while the buffers held frames and
 * queues holding them were paused (a cyclic buffer dependency stops exactly so). */
struct fab_deadlock {
	uint64_t start_tsc, end_tsc;  /* start: the last frame sent before it; end 0: on at the end */
	uint64_t bytes_held;          /* in the switches' buffers when found */
	unsigned n_paused;            /* paused queues holding frames then */
	struct { uint16_t sw, port; uint8_t tc; } paused[FAB_DEADLOCK_QUEUES]; /* the first of them */
};

/* A link event as it ran: when, when the routes converged, what it cost. */
struct fab_event_rt {
	uint64_t at_tsc, converged_tsc; /* 0: not yet */
	uint64_t lost_at_start;       /* the fabric's lost frames when it happened */
	uint64_t lost;                /* frames lost since, until the next event */
	uint64_t last_loss_tsc;       /* the last of them (a millisecond's resolution) */
	struct sw_lost qps[CFG_FAB_MAX_LCORES]; /* their QPs, as each lcore's switches noted them */
};

/* A link direction's utilisation sampled every sample interval: a histogram of 1 % bins. */
#define FAB_UTIL_BINS 102             /* 0 .. 100 %, and above (a lagging link catching up) */
struct fab_link_samples {
	const uint64_t *frames, *bytes;   /* the sender's counters (or its receiver's, for a NIC) */
	uint64_t last_frames, last_bytes;
	double per_wire_byte;             /* percent of the link one byte on the wire is, per sample */
	uint32_t hist[FAB_UTIL_BINS];
	uint32_t n, max_pct;
};

/* The switches one lcore polls: its own clock for living through a hold-up of that lcore, and the
 * link events and route changes as far as it has applied them to its switches (each switch's
 * state is written by its own lcore only; part 0 decides when an event happens). */
struct fab_part {
	unsigned lcore, n_sw;
	uint16_t sw[CFG_FAB_MAX_SWITCHES];
	uint64_t last_poll_tsc;
	unsigned replay_steps;        /* at most REPLAY_MAX_STEPS (fewer on a slow machine) */
	bool replayed;                /* the last poll replayed a hold-up: the NICs' cables hold a backlog */
	unsigned events_applied, routes_converged;
	struct sw_lost lost_before;   /* QPs of frames lost before any event (no route) */
} __rte_cache_aligned;

struct fabric_lab {
	const struct cfg_fabric *cfg;
	unsigned n_switches;
	struct switch_rt *sw[CFG_FAB_MAX_SWITCHES];
	struct rte_ring *ring[CFG_FAB_MAX_LINKS][2]; /* a link between switches: [0] a -> b, [1] b -> a */
	struct rte_mempool *pool;                    /* the switches' PFC frames */
	uint64_t in_flight_at_end;                   /* frames still on the links between switches */
	/* the deadlock detector (the switches' lcore writes, the main lcore reads once it stopped) */
	uint64_t check_every_tsc, next_check_tsc, window_tsc, last_progress_tsc, last_tx;
	bool in_deadlock;
	unsigned n_deadlocks;                        /* found; the first FAB_MAX_DEADLOCKS recorded */
	struct fab_deadlock deadlock[FAB_MAX_DEADLOCKS];
	/* link events (fabric.events), in time from *start_tsc (the run's start) */
	const uint64_t *start_tsc;
	uint64_t convergence_tsc, lost_total;
	struct cfg_fab_event ev[CFG_FAB_MAX_EVENTS]; /* fabric.events, then those a command adds */
	unsigned n_events;                           /* published with release, read with acquire */
	rte_spinlock_t ev_lock;                      /* the commands adding events, one at a time */
	unsigned events_done, converged;             /* events that happened; routes converged up to
						      * (part 0 writes them with release, parts apply them) */
	struct fab_event_rt event[CFG_FAB_MAX_EVENTS];
	/* every link direction's utilisation, sampled every sample_tsc ([2l]: a -> b, [2l+1]: b -> a) */
	uint64_t sample_tsc, next_sample_tsc;
	struct fab_link_samples util[2 * CFG_FAB_MAX_LINKS];
	/* after an lcore's hold-up its switches replay the missed time in steps (fabric_lab_poll) */
	uint64_t step_tsc, replay_tsc;
	unsigned n_parts;                            /* cfg->n_lcores */
	uint8_t part_of[CFG_FAB_MAX_SWITCHES];       /* switch s is polled by part[part_of[s]] */
	struct fab_part part[CFG_FAB_MAX_LCORES];
};

/* Percentile q (0..1) of a link direction's samples, in percent of its rate (-1: none yet). */
int fabric_lab_util_percentile(const struct fab_link_samples *u, double q);

/* The fabric of env->cfg, once the NICs' ports are up (their cables exist): switch s in part
 * s % n, polled by lcore cfg->fab.lcores[s % n]. NULL with err on failure. */
struct fabric_lab *fabric_lab_create(const struct switch_env *env, char *err, size_t errlen);
/* A link goes down or up now (the control command /roce/link): the event after those listed,
 * with the routes over the links up once it has happened, computed here (any thread) and taken
 * by every switch convergence_ms later, as a listed event's. Refused (-1, why) before the flows
 * start, while a listed event is still to come, for a link already in that state, or when the
 * run's CFG_FAB_MAX_EVENTS events are used up. 0: *k is the event's index. */
int fabric_lab_link_event(struct fabric_lab *fl, unsigned link, bool up, uint64_t now_tsc, unsigned *k, char *why,
			  size_t len);
/* Whether link l is up after the events applied so far. */
bool fabric_lab_link_up(const struct fabric_lab *fl, unsigned l);
/* Switch s's routes (cfg's, by index) over the links up in `up`: shortest paths in switch hops,
 * the ports toward the next switches in port order, as fabric_routes() computes them at load. */
void fabric_lab_routes_over(const struct cfg_fabric *c, const bool *up, unsigned s, struct cfg_fab_next *out);
/* Link events are timed from *start_tsc (the run's start, final once the flows start). */
void fabric_lab_set_start(struct fabric_lab *fl, const uint64_t *start_tsc);
void fabric_lab_free(struct fabric_lab *fl);
/* The lcore loop of part `part` (its lcore's): each of its switches in turn; part 0 also samples
 * the links, looks for deadlocks and times the link events. */
void fabric_lab_poll(struct fabric_lab *fl, unsigned part, uint64_t now_tsc);
/* After the lcores stopped: what the switches hold and the links between them carry goes back to
 * its pools (counted). */
void fabric_lab_flush(struct fabric_lab *fl);
/* The switch ports a link direction leaves (tx) and enters (rx), and their switches; NULL for the
 * end that is a NIC (a NIC's link: its end b). */
struct fab_dir_ports {
	const struct switch_rt *tx_sw, *rx_sw;
	const struct sw_port *tx, *rx;
};
void fabric_lab_dir_ports(const struct fabric_lab *fl, unsigned link, bool a_to_b, struct fab_dir_ports *d);

#endif

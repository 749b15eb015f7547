/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "fabric_lab.h"
#include "switch_route.h"

/* Frames a link between switches holds: the far switch polls it every turn. One producer (the
 * sending switch) and one consumer (the receiving one), on one lcore or on two. */
#define LINK_RING 1024
#define PFC_POOL 4095
#define PFC_DATA 256    /* a PFC frame is 64 bytes */
#define REPLAY_STEP_US 5      /* a held-up lcore's missed time is replayed in steps this long, */
#define REPLAY_MAX_STEPS 64   /* or longer when it would take more than this many */

/* The frames a link toward a switch may hold. Between two lcores, when the receiving one is held
 * up (another thread took its CPU) the sender goes on filling the ring and the receiver takes it
 * all in when it is back, before any XOFF of its can have reached the sender: with a lossless
 * class that burst must fit the headroom, so the ring holds half the headroom's full-size frames
 * (the other half: what the sender sends before it reads the XOFF; config_fabric_ring_frames).
 * A full ring keeps the sender's frames in its queues (its link's time is lost to the CPU, not a
 * frame). A NIC's cable is sized so too (config/config_lab.c). */
static int link_rings(struct fabric_lab *fl, const struct engine_config *cfg, unsigned socket, char *err,
		      size_t errlen)
{
	char name[RTE_RING_NAMESIZE];

	for (unsigned l = 0; l < fl->cfg->n_links; l++) {
		const struct cfg_fab_link *k = &fl->cfg->links[l];
		if (k->to_nic)
			continue;
		for (int d = 0; d < 2; d++) { /* d 0: a -> b */
			snprintf(name, sizeof(name), "fl%u_%s", l, d ? "ba" : "ab");
			fl->ring[l][d] = rte_ring_create(name, config_fabric_ring_frames(cfg, d ? k->sw : k->b, LINK_RING), (int)socket,
							 RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
			if (!fl->ring[l][d]) {
				snprintf(err, errlen, "fabric: link %s: cannot create ring %s: %s", fl->cfg->links[l].name, name,
					 rte_strerror(rte_errno));
				return -1;
			}
		}
	}
	return 0;
}

/* The rings of switch s's port k: a NIC's cable (the NIC's port made it; the switch is end b), or
 * its link's pair (end a sends on [0]). */
static int port_rings(const struct fabric_lab *fl, unsigned s, unsigned k, struct rte_ring **rx, struct rte_ring **tx,
		      char *err, size_t errlen)
{
	const struct cfg_fab_port *cp = &fl->cfg->sw[s].ports[k];
	const struct cfg_fab_link *l = &fl->cfg->links[cp->link];
	char ab[RTE_RING_NAMESIZE], ba[RTE_RING_NAMESIZE];
	bool end_a = l->sw == s && l->port == k;

	if (!cp->to_nic) {
		*tx = fl->ring[cp->link][end_a ? 0 : 1];
		*rx = fl->ring[cp->link][end_a ? 1 : 0];
		return 0;
	}
	/* "ring:fabN:a" is made of the rings fabN_ab0 (what the NIC sends) and fabN_ba0 (pmd_glue/port.c) */
	snprintf(ab, sizeof(ab), "fab%u_ab0", cp->peer - fl->cfg->first_port);
	snprintf(ba, sizeof(ba), "fab%u_ba0", cp->peer - fl->cfg->first_port);
	*rx = rte_ring_lookup(ab);
	*tx = rte_ring_lookup(ba);
	if (!*rx || !*tx) {
		snprintf(err, errlen, "fabric: switch %s: the cable of NIC port %u is missing (ring %s)", fl->cfg->sw[s].name,
			 cp->peer, !*rx ? ab : ba);
		return -1;
	}
	return 0;
}

/* ---- link utilisation samples ---------------------------------------------------------------- */

static void init_samples(struct fabric_lab *fl, double sample_s)
{
	for (unsigned l = 0; l < fl->cfg->n_links; l++)
		for (int d = 0; d < 2; d++) {
			struct fab_link_samples *u = &fl->util[2 * l + d];
			struct fab_dir_ports x;
			fabric_lab_dir_ports(fl, l, d == 0, &x);
			/* what the sending switch port sent, or (a NIC sends) what its leaf's port received */
			u->frames = x.tx ? &x.tx->c.tx_frames : &x.rx->c.rx_frames;
			u->bytes = x.tx ? &x.tx->c.tx_bytes : &x.rx->c.rx_bytes;
			u->per_wire_byte = 8.0 * 100.0 / (sample_s * fl->cfg->links[l].gbps * 1e9);
		}
}

/* Each link direction's use since the last look, into its histogram when record (the first look
 * only takes the counters' start). */
static void sample_links(struct fabric_lab *fl, bool record)
{
	for (unsigned i = 0; i < 2 * fl->cfg->n_links; i++) {
		struct fab_link_samples *u = &fl->util[i];
		uint64_t f = *u->frames, b = *u->bytes;
		double pct = (double)(b - u->last_bytes + SW_WIRE_OVERHEAD * (f - u->last_frames)) * u->per_wire_byte;
		unsigned bin = pct >= FAB_UTIL_BINS - 1 ? FAB_UTIL_BINS - 1 : (unsigned)(pct + 0.5);
		u->last_frames = f;
		u->last_bytes = b;
		if (!record)
			continue;
		__atomic_store_n(&u->hist[bin], u->hist[bin] + 1, __ATOMIC_RELAXED);
		if ((uint32_t)(pct + 0.5) > u->max_pct)
			__atomic_store_n(&u->max_pct, (uint32_t)(pct + 0.5), __ATOMIC_RELAXED);
		__atomic_store_n(&u->n, u->n + 1, __ATOMIC_RELEASE);
	}
}

/* Switch s to part s % n_lcores; a port whose sender another lcore runs (a NIC, or a switch of
 * another part) takes nothing in while its switch replays a hold-up (switch_replay). */
static void deal_switches(struct fabric_lab *fl)
{
	const struct cfg_fabric *c = fl->cfg;

	fl->n_parts = c->n_lcores ? c->n_lcores : 1;
	for (unsigned i = 0; i < fl->n_parts; i++) {
		fl->part[i].lcore = c->lcores[i];
		fl->part[i].replay_steps = REPLAY_MAX_STEPS;
	}
	for (unsigned s = 0; s < c->n_switches; s++) {
		struct fab_part *p = &fl->part[s % fl->n_parts];
		fl->part_of[s] = (uint8_t)(s % fl->n_parts);
		p->sw[p->n_sw++] = (uint16_t)s;
	}
}

static void mark_remote_senders(struct fabric_lab *fl)
{
	for (unsigned s = 0; s < fl->n_switches; s++)
		for (unsigned k = 0; k < fl->sw[s]->n_ports; k++) {
			const struct cfg_fab_port *cp = &fl->cfg->sw[s].ports[k];
			fl->sw[s]->port[k].remote_sender = cp->to_nic || fl->part_of[cp->peer] != fl->part_of[s];
		}
}

struct fabric_lab *fabric_lab_create(const struct switch_env *env, char *err, size_t errlen)
{
	const struct cfg_fabric *c = &env->cfg->fab;
	unsigned socket = rte_lcore_to_socket_id(c->lcores[0]);
	struct fabric_lab *fl = rte_zmalloc_socket("fabric_lab", sizeof(*fl), RTE_CACHE_LINE_SIZE, (int)socket);

	if (!fl) {
		snprintf(err, errlen, "out of memory for the fabric (raise eal.memory_mb)");
		return NULL;
	}
	fl->cfg = c;
	deal_switches(fl);
	fl->window_tsc = (uint64_t)(c->deadlock_ms * 1e-3 * (double)env->tsc_hz);
	fl->check_every_tsc = env->tsc_hz / 1000; /* a look every millisecond */
	fl->step_tsc = env->tsc_hz * REPLAY_STEP_US / 1000000;
	fl->replay_tsc = env->tsc_hz * SW_LINK_LAG_US / 1000000;
	fl->convergence_tsc = (uint64_t)(c->convergence_ms * 1e-3 * (double)env->tsc_hz);
	memcpy(fl->ev, c->events, sizeof(fl->ev));
	fl->n_events = c->n_events;
	rte_spinlock_init(&fl->ev_lock);
	/* multi-producer, multi-consumer (the default): every part's switches send and free them */
	fl->pool = rte_pktmbuf_pool_create("fab_pfc", PFC_POOL, 32, 0, RTE_PKTMBUF_HEADROOM + PFC_DATA, (int)socket);
	if (!fl->pool) {
		snprintf(err, errlen, "fabric: cannot create the pool of PFC frames: %s", rte_strerror(rte_errno));
		goto fail;
	}
	if (link_rings(fl, env->cfg, socket, err, errlen))
		goto fail;
	for (unsigned s = 0; s < c->n_switches; s++) {
		struct rte_ring *rx[CFG_FAB_MAX_SW_PORTS], *tx[CFG_FAB_MAX_SW_PORTS];
		unsigned part = fl->part_of[s];
		for (unsigned k = 0; k < c->sw[s].n_ports; k++)
			if (port_rings(fl, s, k, &rx[k], &tx[k], err, errlen))
				goto fail;
		fl->sw[s] = switch_create_fabric(env, s, rx, tx, fl->pool, fl->part[part].lcore, err, errlen);
		if (!fl->sw[s])
			goto fail;
		fl->sw[s]->lost = &fl->part[part].lost_before;
		fl->n_switches++;
	}
	mark_remote_senders(fl);
	fl->sample_tsc = (uint64_t)(c->sample_ms * 1e-3 * (double)env->tsc_hz);
	init_samples(fl, c->sample_ms * 1e-3);
	return fl;
fail:
	fabric_lab_free(fl);
	return NULL;
}

void fabric_lab_free(struct fabric_lab *fl)
{
	if (!fl)
		return;
	for (unsigned s = 0; s < fl->n_switches; s++)
		switch_free(fl->sw[s]);
	for (unsigned l = 0; l < CFG_FAB_MAX_LINKS; l++)
		for (int d = 0; d < 2; d++)
			rte_ring_free(fl->ring[l][d]);
	rte_mempool_free(fl->pool);
	rte_free(fl);
}

/* The queues holding frames that are paused now (the first FAB_DEADLOCK_QUEUES noted in d). */
static unsigned paused_queues(const struct fabric_lab *fl, uint64_t now, struct fab_deadlock *d)
{
	unsigned n = 0;

	for (unsigned s = 0; s < fl->n_switches; s++)
		for (unsigned k = 0; k < fl->sw[s]->n_ports; k++) {
			const struct sw_port *p = &fl->sw[s]->port[k];
			for (unsigned tc = 0; tc < SW_TCS; tc++) {
				if (!p->q[tc].n || !pfc_paused(&p->pause, fl->sw[s]->pkts[p->q[tc].head].prio, now))
					continue;
				if (n < FAB_DEADLOCK_QUEUES)
					d->paused[n].sw = (uint16_t)s, d->paused[n].port = (uint16_t)k, d->paused[n].tc = (uint8_t)tc;
				n++;
			}
		}
	return n;
}

/* Progress is a frame leaving any switch; none for the window, with paused queues holding
 * frames, is a deadlock, which ends with the next frame sent. */
static void deadlock_check(struct fabric_lab *fl, uint64_t now)
{
	uint64_t tx = 0, held = 0;
	struct fab_deadlock d = {0};

	for (unsigned s = 0; s < fl->n_switches; s++) {
		for (unsigned k = 0; k < fl->sw[s]->n_ports; k++)
			tx += fl->sw[s]->port[k].c.tx_frames;
		held += fl->sw[s]->mmu.used;
	}
	if (tx != fl->last_tx || !held) {
		fl->last_tx = tx;
		fl->last_progress_tsc = now;
		if (fl->in_deadlock && fl->n_deadlocks <= FAB_MAX_DEADLOCKS)
			__atomic_store_n(&fl->deadlock[fl->n_deadlocks - 1].end_tsc, now, __ATOMIC_RELEASE);
		fl->in_deadlock = false;
		return;
	}
	if (fl->in_deadlock || now - fl->last_progress_tsc < fl->window_tsc || !(d.n_paused = paused_queues(fl, now, &d)))
		return;
	d.start_tsc = fl->last_progress_tsc;
	d.bytes_held = held;
	if (fl->n_deadlocks < FAB_MAX_DEADLOCKS)
		fl->deadlock[fl->n_deadlocks] = d;
	__atomic_store_n(&fl->n_deadlocks, fl->n_deadlocks + 1, __ATOMIC_RELEASE);
	fl->in_deadlock = true;
}

int fabric_lab_util_percentile(const struct fab_link_samples *u, double q)
{
	uint32_t n = __atomic_load_n(&u->n, __ATOMIC_ACQUIRE), seen = 0;
	uint64_t rank = (uint64_t)(q * (double)n + 0.999999);

	if (!n)
		return -1;
	for (unsigned b = 0; b < FAB_UTIL_BINS; b++) {
		seen += __atomic_load_n(&u->hist[b], __ATOMIC_RELAXED);
		if (seen >= rank)
			return (int)b;
	}
	return FAB_UTIL_BINS - 1;
}

void fabric_lab_set_start(struct fabric_lab *fl, const uint64_t *start_tsc) { fl->start_tsc = start_tsc; }

/* Frames lost to dead links and missing routes, fabric-wide. */
static uint64_t lost_now(const struct fabric_lab *fl)
{
	uint64_t n = 0;

	for (unsigned s = 0; s < fl->n_switches; s++)
		for (unsigned k = 0; k < fl->sw[s]->n_ports; k++)
			n += fl->sw[s]->port[k].c.drop_link_down + fl->sw[s]->port[k].c.drop_no_route;
	return n;
}

/* Switch s's ends of link l (a NIC's link: the switch's end) go down or up. */
static void set_link_ends(struct fabric_lab *fl, unsigned s, unsigned l, bool up)
{
	const struct cfg_fab_link *cl = &fl->cfg->links[l];

	if (cl->sw == s)
		fl->sw[s]->port[cl->port].down = !up;
	if (!cl->to_nic && cl->b == s)
		fl->sw[s]->port[cl->b_port].down = !up;
}

static void note_losses(struct fabric_lab *fl, uint64_t now)
{
	uint64_t lost = lost_now(fl);
	struct fab_event_rt *ev = fl->events_done ? &fl->event[fl->events_done - 1] : NULL;

	if (lost != fl->lost_total && ev) {
		__atomic_store_n(&ev->lost, lost - ev->lost_at_start, __ATOMIC_RELAXED);
		__atomic_store_n(&ev->last_loss_tsc, now, __ATOMIC_RELAXED);
	}
	fl->lost_total = lost;
}

/* Part 0: the next event happens when its time has come, the routes converge convergence_ms
 * after each; every part applies them to its switches (apply_events). */
static void link_events(struct fabric_lab *fl, uint64_t now)
{
	uint64_t start = __atomic_load_n(fl->start_tsc, __ATOMIC_ACQUIRE);

	if (fl->events_done < __atomic_load_n(&fl->n_events, __ATOMIC_ACQUIRE)) {
		const struct cfg_fab_event *e = &fl->ev[fl->events_done];
		if (now >= start + (uint64_t)(e->at_s * (double)fl->sw[0]->tsc_hz)) {
			struct fab_event_rt *ev = &fl->event[fl->events_done];
			note_losses(fl, now); /* what came before is the previous event's */
			ev->lost_at_start = fl->lost_total;
			ev->at_tsc = now;
			__atomic_store_n(&fl->events_done, fl->events_done + 1, __ATOMIC_RELEASE);
		}
	}
	if (fl->converged < fl->events_done && now >= fl->event[fl->converged].at_tsc + fl->convergence_tsc) {
		__atomic_store_n(&fl->event[fl->converged].converged_tsc, now, __ATOMIC_RELEASE);
		__atomic_store_n(&fl->converged, fl->converged + 1, __ATOMIC_RELEASE);
	}
}

/* The events and route changes part 0 published, on this part's switches: their ends of the
 * link, where they note the frames lost from now on, their routes. */
static void apply_events(struct fabric_lab *fl, struct fab_part *p)
{
	unsigned done = __atomic_load_n(&fl->events_done, __ATOMIC_ACQUIRE);
	unsigned converged = __atomic_load_n(&fl->converged, __ATOMIC_ACQUIRE);
	unsigned part = (unsigned)(p - fl->part);

	for (; p->events_applied < done; p->events_applied++) {
		const struct cfg_fab_event *e = &fl->ev[p->events_applied];
		for (unsigned i = 0; i < p->n_sw; i++) {
			set_link_ends(fl, p->sw[i], e->link, e->up);
			fl->sw[p->sw[i]]->lost = &fl->event[p->events_applied].qps[part];
		}
	}
	for (; p->routes_converged < converged; p->routes_converged++)
		for (unsigned i = 0; i < p->n_sw; i++)
			sw_route_converge(fl->sw[p->sw[i]]->route, p->routes_converged);
}

/* ---- link events from a command ---------------------------------------------------------------- */

void fabric_lab_routes_over(const struct cfg_fabric *c, const bool *up, unsigned s, struct cfg_fab_next *out)
{
	static const uint16_t far = UINT16_MAX;
	uint16_t dist[CFG_FAB_MAX_SWITCHES];
	unsigned queue[CFG_FAB_MAX_SWITCHES];

	for (unsigned i = 0; i < c->sw[s].n_routes; i++) {
		const struct cfg_fab_route *rt = &c->sw[s].routes[i];
		unsigned head = 0, tail = 0, m = 0;

		if (rt->dst_switch < 0) { /* a NIC cabled here: reachable while its link is up */
			out[i].n = up[rt->nic_link] ? 1 : 0;
			out[i].ports[0] = rt->ports[0];
			continue;
		}
		for (unsigned w = 0; w < c->n_switches; w++) /* hops to the destination, breadth first */
			dist[w] = far;
		dist[rt->dst_switch] = 0;
		queue[tail++] = (unsigned)rt->dst_switch;
		while (head < tail) {
			unsigned w = queue[head++];
			for (unsigned k = 0; k < c->sw[w].n_ports; k++) {
				const struct cfg_fab_port *p = &c->sw[w].ports[k];
				if (!p->to_nic && up[p->link] && dist[p->peer] == far) {
					dist[p->peer] = (uint16_t)(dist[w] + 1);
					queue[tail++] = p->peer;
				}
			}
		}
		for (unsigned k = 0; k < c->sw[s].n_ports && dist[s] != far; k++) {
			const struct cfg_fab_port *p = &c->sw[s].ports[k];
			if (!p->to_nic && up[p->link] && dist[p->peer] + 1 == dist[s])
				out[i].ports[m++] = (uint8_t)k;
		}
		out[i].n = (uint8_t)m;
	}
}

static void set_after(struct sw_route *r, const struct cfg_fabric *c, const bool *up, unsigned s, unsigned k)
{
	struct cfg_fab_next next[CFG_FAB_MAX_ROUTES];

	fabric_lab_routes_over(c, up, s, next);
	for (unsigned i = 0; i < c->sw[s].n_routes; i++) {
		r->after[k][i].n = next[i].n;
		for (unsigned m = 0; m < next[i].n; m++)
			r->after[k][i].ports[m] = next[i].ports[m];
	}
}

bool fabric_lab_link_up(const struct fabric_lab *fl, unsigned l)
{
	unsigned n = __atomic_load_n(&fl->events_done, __ATOMIC_ACQUIRE);
	bool up = true;

	for (unsigned k = 0; k < n; k++)
		if (fl->ev[k].link == l)
			up = fl->ev[k].up;
	return up;
}

static int refuse(char *why, size_t len, const char *text)
{
	snprintf(why, len, "%s", text);
	return -1;
}

int fabric_lab_link_event(struct fabric_lab *fl, unsigned link, bool up, uint64_t now_tsc, unsigned *k, char *why,
			  size_t len)
{
	uint64_t start = fl->start_tsc ? __atomic_load_n(fl->start_tsc, __ATOMIC_ACQUIRE) : 0;
	bool link_up[CFG_FAB_MAX_LINKS];
	unsigned n;
	int rc = 0;

	if (link >= fl->cfg->n_links)
		return refuse(why, len, "no such link");
	if (!start || now_tsc < start)
		return refuse(why, len, "the flows have not started");
	rte_spinlock_lock(&fl->ev_lock);
	n = fl->n_events;
	if (__atomic_load_n(&fl->events_done, __ATOMIC_ACQUIRE) < n)
		rc = refuse(why, len, "an event is still to happen (fabric.events or the last command's): try again after it");
	else if (n == CFG_FAB_MAX_EVENTS)
		rc = refuse(why, len, "the run's link events are used up (8 in all, fabric.events included)");
	else if (fabric_lab_link_up(fl, link) == up)
		rc = refuse(why, len, up ? "the link is up already" : "the link is down already");
	if (rc == 0) {
		for (unsigned l = 0; l < fl->cfg->n_links; l++)
			link_up[l] = fabric_lab_link_up(fl, l);
		link_up[link] = up;
		for (unsigned s = 0; s < fl->n_switches; s++) /* slot n: no switch reads it before n_events says so */
			set_after(fl->sw[s]->route, fl->cfg, link_up, s, n);
		fl->ev[n] = (struct cfg_fab_event){ .at_s = (double)(now_tsc - start) / (double)fl->sw[0]->tsc_hz,
						    .link = link, .up = up };
		__atomic_store_n(&fl->n_events, n + 1, __ATOMIC_RELEASE);
		*k = n;
	}
	rte_spinlock_unlock(&fl->ev_lock);
	return rc;
}

static void poll_switches(struct fabric_lab *fl, const struct fab_part *p, uint64_t now)
{
	for (unsigned i = 0; i < p->n_sw; i++)
		switch_poll(fl->sw[p->sw[i]], now);
}

/* A replay that took more than a quarter of the time it replayed (a slow machine, a sanitizer's
 * build) would leave the lcore further behind each time: fewer steps next time; more again, up
 * to REPLAY_MAX_STEPS, while it takes less than a sixteenth. */
static void fit_replay_steps(struct fab_part *p, uint64_t replayed, uint64_t took)
{
	if (took > replayed / 4 && p->replay_steps > 4)
		p->replay_steps /= 2;
	else if (took < replayed / 16 && p->replay_steps < REPLAY_MAX_STEPS)
		p->replay_steps *= 2;
}

/* When the lcore was held up (the host took the CPU), each link would catch up on its own, all at
 * once: one switch sends a millisecond's frames before the next has drained any, and queues, PFC
 * and headroom see a burst the network never made (a fabric effect the CPU caused). Instead the
 * lcore's switches live through the missed time together, in steps of REPLAY_STEP_US or more, as
 * far back as a link may catch up (SW_LINK_LAG_US); time before that is lost to every link alike
 * (counted as cpu_lost). At most p->replay_steps polls: a replay must take less time than it
 * replays. What other lcores sent meanwhile is not replayed (switch_replay): the NICs' frames
 * (the hosts on this lcore sent them after the hold-up) and those of another part's switches
 * come in at the poll of now, as many as one poll takes. */
static bool replay_held_up_time(struct fabric_lab *fl, struct fab_part *p, uint64_t now)
{
	uint64_t t = p->last_poll_tsc, step = fl->step_tsc;

	if (!t || now - t <= 2 * step)
		return false;
	if (now - t > fl->replay_tsc) {
		t = now - fl->replay_tsc;
		for (unsigned i = 0; i < p->n_sw; i++)
			switch_lose_time_until(fl->sw[p->sw[i]], t);
	}
	const uint64_t replayed = now - t, began = rte_rdtsc();
	if (replayed / p->replay_steps > step)
		step = replayed / p->replay_steps;
	for (t += step; t < now; t += step)
		for (unsigned i = 0; i < p->n_sw; i++)
			switch_replay(fl->sw[p->sw[i]], t);
	fit_replay_steps(p, replayed, rte_rdtsc() - began);
	return true;
}

/* Part 0's look at the whole fabric: link samples every sample interval; deadlocks, losses and
 * link events every millisecond. The other parts' counters are read as they stand. */
static void lead(struct fabric_lab *fl, uint64_t now)
{
	if (fl->start_tsc && now >= fl->next_sample_tsc && now >= __atomic_load_n(fl->start_tsc, __ATOMIC_ACQUIRE)) {
		sample_links(fl, fl->next_sample_tsc != 0);
		fl->next_sample_tsc = (fl->next_sample_tsc ? fl->next_sample_tsc : now) + fl->sample_tsc;
		if (fl->next_sample_tsc < now) /* held up: no catching up with empty samples */
			fl->next_sample_tsc = now + fl->sample_tsc;
	}
	if (now >= fl->next_check_tsc) {
		deadlock_check(fl, now);
		if (__atomic_load_n(&fl->n_events, __ATOMIC_RELAXED)) {
			note_losses(fl, now);
			if (fl->start_tsc)
				link_events(fl, now);
		}
		fl->next_check_tsc = now + fl->check_every_tsc;
	}
}

void fabric_lab_poll(struct fabric_lab *fl, unsigned part, uint64_t now)
{
	struct fab_part *p = &fl->part[part];

	p->replayed = replay_held_up_time(fl, p, now);
	poll_switches(fl, p, now);
	p->last_poll_tsc = now;
	if (part == 0)
		lead(fl, now);
	if (__atomic_load_n(&fl->events_done, __ATOMIC_RELAXED) != p->events_applied ||
	    __atomic_load_n(&fl->converged, __ATOMIC_RELAXED) != p->routes_converged)
		apply_events(fl, p);
}

void fabric_lab_flush(struct fabric_lab *fl)
{
	struct rte_mbuf *m[64];
	unsigned n;

	for (unsigned s = 0; s < fl->n_switches; s++)
		switch_flush(fl->sw[s]);
	for (unsigned l = 0; l < CFG_FAB_MAX_LINKS; l++)
		for (int d = 0; d < 2; d++)
			while (fl->ring[l][d] && (n = rte_ring_sc_dequeue_burst(fl->ring[l][d], (void **)m, 64, NULL)) > 0) {
				rte_pktmbuf_free_bulk(m, n);
				fl->in_flight_at_end += n;
			}
}

void fabric_lab_dir_ports(const struct fabric_lab *fl, unsigned link, bool a_to_b, struct fab_dir_ports *d)
{
	const struct cfg_fab_link *l = &fl->cfg->links[link];
	const struct switch_rt *a = fl->sw[l->sw], *b = l->to_nic ? NULL : fl->sw[l->b];
	const struct sw_port *ap = &a->port[l->port], *bp = b ? &b->port[l->b_port] : NULL;

	*d = a_to_b ? (struct fab_dir_ports){.tx_sw = a, .tx = ap, .rx_sw = b, .rx = bp}
		    : (struct fab_dir_ports){.tx_sw = b, .tx = bp, .rx_sw = a, .rx = ap};
}

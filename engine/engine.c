/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_random.h>
#include <rte_ring.h>

#include "out_file.h"
#include "collective.h"
#include "completer.h"
#include "control.h"
#include "egress.h"
#include "engine.h"
#include "engine_state.h"
#include "capture.h"
#include "exporter.h"
#include "tx_payload.h"
#include "timeseries.h"
#include "notification.h"
#include "sla.h"
#include "switch.h"
#include "responder.h"

#define RX_QPS_PER_LCORE 65536
#define DRAIN_QUIET_MS 50   /* RX is stopped once nothing arrived for this long after TX stopped */
#define DRAIN_MAX_MS 2000
#define HELD_UP_MIN_US 1000 /* a loop turn this long after the last: the lcore was held up (no turn takes 1 ms) */
#define LAG_MAX_US 10000    /* a QP more than 10 ms behind its schedule skips ahead, no burst */
#define WAIT_NS 2000        /* an RC QP with a full window looks again 2 us later */
#define COMP_RING_SIZE 16384

/* Signals received (async-signal-safe: one writer, the handler, whose signals are masked while it
 * runs); a run stops at the first, a second one cuts the final drain short. */
static volatile sig_atomic_t stop_requested;

void engine_request_stop(void)
{
	if (stop_requested < 1000)
		stop_requested = stop_requested + 1;
}

/* ---- set-up -------------------------------------------------------------------------------- */

/* A port's classification map and PFC state, from its config and link speed. */
static void setup_qos(struct engine *e, unsigned p)
{
	const struct cfg_port *cp = &e->run.cfg->ports[p];
	struct qos_map *m = &e->qos_map[p];

	qos_map_default(m);
	m->trust = cp->trust_pcp ? QOS_TRUST_PCP : QOS_TRUST_DSCP;
	memcpy(m->dscp_to_prio, cp->dscp_to_priority, sizeof(m->dscp_to_prio));
	memcpy(m->prio_to_tc, cp->priority_to_tc, sizeof(m->prio_to_tc));
	pfc_pause_init(&e->run.pause[p], e->run.ports[p].link_speed_gbps, e->run.tsc_hz);
	if (cp->xoff_priorities)
		pfc_watch_init(&e->run.watch[p], cp->xoff_priorities, cp->xoff_bytes, cp->xon_bytes, cp->xoff_quanta,
			       cp->xoff_refresh_us, cp->xoff_drain_gbps, e->run.ports[p].link_speed_gbps, e->run.tsc_hz);
}

static int setup_ports(struct engine *e, char *err, size_t errlen)
{
	unsigned n_lcores = rte_lcore_count();

	for (unsigned i = 0; i < e->run.cfg->n_ports; i++) {
		if (port_setup(&e->run.cfg->ports[i], n_lcores, &e->run.ports[i], err, errlen))
			return -1;
		setup_qos(e, i);
		e->run.pool_size[i] = port_pool_size(&e->run.cfg->ports[i], n_lcores);
		e->run.n_ports++;
	}
	return 0;
}

static struct lcore_work *work_of(struct engine *e, unsigned lcore, char *err, size_t errlen)
{
	if (!e->run.work[lcore]) {
		if (!rte_lcore_is_enabled(lcore) || lcore == rte_get_main_lcore()) {
			snprintf(err, errlen, "lcore %u is not a worker lcore of this EAL (check eal.lcores, or -l / --lcores)", lcore);
			return NULL;
		}
		e->run.work[lcore] = rte_zmalloc_socket("lcore_work", sizeof(struct lcore_work), RTE_CACHE_LINE_SIZE,
						    (int)rte_lcore_to_socket_id(lcore));
		if (!e->run.work[lcore]) {
			snprintf(err, errlen, "out of memory for lcore %u", lcore);
			return NULL;
		}
		e->run.work[lcore]->stop = &e->stop;
		e->run.work[lcore]->lcore = lcore;
		e->run.work[lcore]->held_up_min_tsc = e->run.tsc_hz * HELD_UP_MIN_US / 1000000;
		e->n_work++;
	}
	return e->run.work[lcore];
}

static int add_role(struct engine *e, const struct cfg_lcore_role *r, char *err, size_t errlen)
{
	struct lcore_work *w = work_of(e, r->lcore, err, errlen);
	const struct port_info *p = &e->run.ports[r->port];

	if (!w)
		return -1;
	w->clock[r->port] = &p->clock;
	w->map[r->port] = &e->qos_map[r->port];
	memcpy(w->mac[r->port], p->mac, 6);
	if (e->run.cfg->ports[r->port].honour_pfc)
		w->pause[r->port] = &e->run.pause[r->port];
	if (r->role == CFG_ROLE_SWITCH) /* the switch is made once every role is known (plan_switch) */
		return 0;
	if (r->role == CFG_ROLE_REFLECT) {
		if (w->n_reflect < LCORE_MAX_ROLES)
			w->reflect[w->n_reflect++] =
				(struct reflect_role){.port = (uint16_t)r->port, .port_id = p->port_id, .queue = (uint16_t)r->queue};
		return 0;
	}
	if (rte_lcore_to_socket_id(r->lcore) != p->socket)
		printf("roce-engine: warning: lcore %u (NUMA node %u) polls port %s on node %u: every frame crosses "
		       "the interconnect (pin the port's roles to lcores of its node)\n",
		       r->lcore, rte_lcore_to_socket_id(r->lcore), p->name, p->socket);
	if ((r->role & CFG_ROLE_TX) && w->n_tx < LCORE_MAX_ROLES) {
		struct tx_role *t = &w->tx[w->n_tx++];
		t->port = (uint16_t)r->port;
		t->port_id = p->port_id;
		t->queue = (uint16_t)r->queue;
		t->clean_payload = !port_frames_stay_local(&e->run.cfg->ports[r->port]);
		if (t->clean_payload && tx_payload_register()) {
			snprintf(err, errlen, "cannot register an mbuf field for clean TX payloads: %s", rte_strerror(rte_errno));
			return -1;
		}
		t->pool = port_tx_pool_create(&e->run.cfg->ports[r->port], r->lcore, w->n_tx - 1, rte_lcore_to_socket_id(r->lcore),
					      t->clean_payload);
		if (!t->pool) {
			snprintf(err, errlen, "lcore %u: cannot create a TX mempool of %u mbufs for port %s: %s (raise eal.memory_mb)",
				 r->lcore, port_tx_pool_size(&e->run.cfg->ports[r->port]), p->name, rte_strerror(rte_errno));
			return -1;
		}
		e->run.pool_size[r->port] += port_tx_pool_size(&e->run.cfg->ports[r->port]);
		t->lag_max_fp = (e->run.tsc_hz * LAG_MAX_US / 1000000) << PACE_SHIFT;
		t->sched_flag = p->clock.tx_schedule ? p->clock.tx_ts_flag : 0;
		t->pause = e->run.cfg->ports[r->port].honour_pfc ? &e->run.pause[r->port] : NULL;
		t->wait_fp = (e->run.tsc_hz * WAIT_NS / 1000000000) << PACE_SHIFT;
	}
	/* one lcore keeps a port's RX backlog: the first that receives on it */
	if ((r->role & CFG_ROLE_RX) && e->run.cfg->ports[r->port].xoff_priorities && !e->watch_taken[r->port]) {
		w->watch[r->port] = &e->run.watch[r->port];
		e->watch_taken[r->port] = true;
	}
	if ((r->role & CFG_ROLE_RX) && w->n_rx < LCORE_MAX_ROLES) {
		struct rx_role *x = &w->rx[w->n_rx++];
		x->port = (uint16_t)r->port;
		x->port_id = p->port_id;
		x->queue = (uint16_t)r->queue;
		x->drop_below = (uint32_t)(e->run.cfg->ports[r->port].rx_drop_probability * 4294967295.0);
		w->rng = 0x9E3779B97F4A7C15ULL ^ r->lcore;
		if (!w->rx_ctx)
			w->rx_ctx = rx_ctx_create(r->lcore, e->run.cfg->n_ports, RX_QPS_PER_LCORE,
						  (int)rte_lcore_to_socket_id(r->lcore));
		if (!w->rx_ctx) {
			snprintf(err, errlen, "lcore %u: cannot create the receiver table (%u QPs)", r->lcore, RX_QPS_PER_LCORE);
			return -1;
		}
	}
	return 0;
}

/* The TX roles of a port, in lcore order: QPs of the port's flows are dealt to them in turn. */
static unsigned tx_roles_of_port(struct engine *e, unsigned port, struct tx_role **out)
{
	unsigned n = 0;

	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		for (unsigned i = 0; e->run.work[l] && i < e->run.work[l]->n_tx; i++)
			if (e->run.work[l]->tx[i].port == port)
				out[n++] = &e->run.work[l]->tx[i];
	return n;
}

/* The local QPs by (port, QPN), sized for what each role enters: the requesters the completer
 * posts to, the responders, the notification point's peers (a QP in several is one entry). */
static int build_qp_index(struct engine *e, const uint8_t macs[][6])
{
	unsigned need = completer_index_need(e->run.qps, e->run.n_qps) +
			responder_table_need(e->run.cfg, macs, e->run.n_ports) +
			notification_table_need(e->run.cfg, macs, e->run.n_ports);

	e->run.qp_index = qp_index_create(need, SOCKET_ID_ANY);
	if (!e->run.qp_index)
		return -1;
	return completer_index_build(e->run.qp_index, e->run.qps, e->run.n_qps) ||
	       responder_table_build(e->run.qp_index, e->run.cfg, macs, e->run.n_ports, &e->responders) ||
	       notification_table_build(e->run.qp_index, e->run.cfg, macs, e->run.n_ports) ? -1 : 0;
}

/* RC: a completer ring per TX role, the index the RX side finds requesters in, responders for
 * the flows whose destination is local, and where each lcore's answers go. */
static int plan_rc(struct engine *e, char *err, size_t errlen)
{
	uint8_t macs[CFG_MAX_PORTS][6];

	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		struct lcore_work *w = e->run.work[l];
		for (unsigned i = 0; w && i < w->n_tx; i++) {
			struct tx_role *t = &w->tx[i];
			char name[RTE_RING_NAMESIZE];

			t->qps = e->run.qps;
			snprintf(name, sizeof(name), "comp_%u_%u", l, i);
			t->comp_ring = completer_ring_create(name, COMP_RING_SIZE, (int)rte_lcore_to_socket_id(l));
			if (!t->comp_ring) {
				snprintf(err, errlen, "cannot create completer ring %s", name);
				return -1;
			}
			for (unsigned q = 0; q < t->n_qps; q++)
				t->pq.heap[q].qp->comp_ring = t->comp_ring;
		}
		if (w)
			w->n_resp = e->run.n_ports;
		for (unsigned p = 0; w && p < e->run.n_ports; p++) {
			w->resp[p].pool = e->run.ports[p].pool;
			w->resp[p].map = &e->qos_map[p];
			w->resp[p].pause = e->run.cfg->ports[p].honour_pfc ? &e->run.pause[p] : NULL;
			w->resp[p].port_id = e->run.ports[p].port_id;
			for (unsigned i = 0; i < w->n_tx; i++)
				if (w->tx[i].port == p) {
					w->resp[p].queue = w->tx[i].queue;
					w->resp[p].has_queue = true;
					break;
				}
		}
	}
	for (unsigned p = 0; p < e->run.n_ports; p++)
		memcpy(macs[p], e->run.ports[p].mac, 6);
	if (build_qp_index(e, (const uint8_t(*)[6])macs)) {
		snprintf(err, errlen, "out of memory for the RC tables (raise eal.memory_mb)");
		return -1;
	}
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		if (e->run.work[l])
			e->run.work[l]->qp_index = e->run.qp_index;
	return 0;
}

static struct lat_stats *lat_stats_array(const char *name, unsigned n, int socket)
{
	struct lat_stats *a = rte_zmalloc_socket(name, sizeof(*a) * (n ? n : 1), RTE_CACHE_LINE_SIZE, socket);

	for (unsigned i = 0; a && i < n; i++)
		lat_stats_init(&a[i]);
	return a;
}

/* Latency: statistics for every QP that measures (UC/UD ping-pong round trips per RX lcore, RC
 * request -> ACK on the owner lcore), per RX lcore the one-way statistics of receiver QPs and
 * ports, the raw-sample rings, and the clock of scheduled sends. */
static int plan_latency(struct engine *e, char *err, size_t errlen)
{
	const struct engine_config *cfg = e->run.cfg;
	unsigned n_lat = 0;

	for (unsigned q = 0; q < e->run.n_qps; q++) {
		struct qp_latency *l = e->run.qps[q].lat;
		if (!l)
			continue;
		n_lat++;
		if (e->run.qps[q].group->transport == CFG_RC)
			e->n_ack++;
		else if (l->pingpong)
			l->pp = (int32_t)e->n_pingpong++;
		if (e->run.ports[e->run.qps[q].port].clock.tx_schedule)
			l->clock = &e->run.ports[e->run.qps[q].port].clock;
	}
	if (n_lat == 0 && cfg->latency_foreign_qps == 0)
		return 0;
	e->lat_ack = lat_stats_array("lat_ack", e->n_ack, SOCKET_ID_ANY);
	if (!e->lat_ack)
		goto nomem;
	for (unsigned q = 0, a = 0; q < e->run.n_qps; q++)
		if (e->run.qps[q].lat && e->run.qps[q].group->transport == CFG_RC)
			e->run.qps[q].lat->ack = &e->lat_ack[a++];
	for (unsigned lc = 0; lc < RTE_MAX_LCORE; lc++) {
		struct lcore_work *w = e->run.work[lc];
		int socket = (int)rte_lcore_to_socket_id(lc);

		if (!w)
			continue;
		for (unsigned i = 0; i < w->n_tx; i++) /* ping-pong timeouts skip the time a role could not send */
			for (unsigned k = 0; k < w->tx[i].n_qps; k++)
				if (w->tx[i].pq.heap[k].qp->lat)
					w->tx[i].pq.heap[k].qp->lat->stalled = &w->tx[i].stalled_tsc;
		if (cfg->latency_samples[0]) {
			w->samples = rte_zmalloc_socket("lat_samples", sizeof(*w->samples), RTE_CACHE_LINE_SIZE, socket);
			if (!w->samples)
				goto nomem;
			w->samples->every = cfg->latency_sample_every;
			w->samples->countdown = 1;
			for (unsigned i = 0; i < w->n_tx; i++)
				for (unsigned k = 0; k < w->tx[i].n_qps; k++)
					if (w->tx[i].pq.heap[k].qp->lat)
						w->tx[i].pq.heap[k].qp->lat->samples = w->samples;
		}
		if (w->n_rx == 0)
			continue;
		w->lat = rte_zmalloc_socket("lat_rx", sizeof(*w->lat), RTE_CACHE_LINE_SIZE, socket);
		if (!w->lat)
			goto nomem;
		w->lat->session = e->session;
		w->lat->qps = e->run.qps;
		w->lat->n_qps = e->run.n_qps;
		w->lat->n_slots = n_lat + cfg->latency_foreign_qps;
		w->lat->slots = lat_stats_array("lat_slots", w->lat->n_slots, socket);
		w->lat->rtt = lat_stats_array("lat_rtt", e->n_pingpong, socket);
		w->lat->slot_port = rte_zmalloc_socket("lat_slot_port", sizeof(uint16_t) * (w->lat->n_slots + 1), 0, socket);
		if (!w->lat->slots || !w->lat->rtt || !w->lat->slot_port)
			goto nomem;
		for (unsigned p = 0; p < CFG_MAX_PORTS; p++)
			lat_stats_init(&w->lat->no_slot[p]);
		w->lat->samples = w->samples;
	}
	e->run.lat_live = lat_stats_array("lat_live", e->run.n_ports * 2, SOCKET_ID_ANY);
	e->run.lat_live_qp = lat_stats_array("lat_live_qp", RUN_LIVE_LAT_QPS * LAT_KIND_COUNT, SOCKET_ID_ANY);
	if (!e->run.lat_live || !e->run.lat_live_qp)
		goto nomem;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory for the latency statistics (%u QPs measure latency; raise eal.memory_mb)",
		 n_lat);
	return -1;
}

/* The TX roles a group's QPs are dealt to: those of its port, or, when the port maps traffic
 * classes to TX queues, those polling its class's queue. */
static unsigned roles_for_group(struct engine *e, const struct cfg_flow_group *g, struct tx_role **out)
{
	const struct cfg_port *cp = &e->run.cfg->ports[g->port];
	unsigned n = tx_roles_of_port(e, g->port, out), k = 0;
	uint8_t queue;

	if (!cp->has_tc_to_queue)
		return n;
	queue = cp->tc_to_queue[e->qos_map[g->port].prio_to_tc[qos_priority(&e->qos_map[g->port], g->dscp, g->has_vlan,
										    g->pcp)]];
	for (unsigned i = 0; i < n; i++)
		if (out[i]->queue == queue)
			out[k++] = out[i];
	return k;
}

/* The lcore each QP is dealt to (its TX role's), in QP order: one pass over the roles' heaps. */
static struct lcore_work **qp_owners(struct engine *e)
{
	struct lcore_work **owner = calloc(e->run.n_qps, sizeof(*owner));

	for (unsigned l = 0; owner && l < RTE_MAX_LCORE; l++)
		for (unsigned i = 0; e->run.work[l] && i < e->run.work[l]->n_tx; i++)
			for (unsigned k = 0; k < e->run.work[l]->tx[i].n_qps; k++)
				owner[e->run.work[l]->tx[i].pq.heap[k].qp - e->run.qps] = e->run.work[l];
	return owner;
}

/* A TX lcore's congestion-control context, made when its first QP with cc is dealt to it. */
static struct cc_lcore *cc_lcore_of(struct engine *e, struct lcore_work *w)
{
	if (!w->cc) {
		w->cc = rte_zmalloc_socket("cc_lcore", sizeof(*w->cc), RTE_CACHE_LINE_SIZE,
					   (int)rte_lcore_to_socket_id(w->lcore));
		if (w->cc)
			congestion_lcore_init(w->cc, e->run.tsc_hz);
	}
	return w->cc;
}

/* The traced QPs: the first cc_trace_qps QPs with cc, every cc_trace_step-th. */
static int plan_cc_trace(struct engine *e)
{
	const struct engine_config *cfg = e->run.cfg;
	unsigned taken = 0;

	for (unsigned i = 0; i < e->run.n_cc && taken < cfg->cc_trace_qps; i += cfg->cc_trace_step, taken++)
		e->run.cc_states[i].traced = true;
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		struct cc_lcore *c = e->run.work[l] ? e->run.work[l]->cc : NULL;
		unsigned n = 0;

		if (!c)
			continue;
		for (unsigned i = 0; i < e->run.n_cc; i++)
			n += e->run.cc_states[i].traced && e->run.cc_states[i].lcore == c;
		if (n == 0)
			continue;
		c->traced = rte_zmalloc("cc_traced", sizeof(*c->traced) * n, 0);
		c->trace = rte_zmalloc("cc_trace", sizeof(*c->trace), RTE_CACHE_LINE_SIZE);
		if (!c->traced || !c->trace)
			return -1;
		for (unsigned i = 0; i < e->run.n_cc; i++)
			if (e->run.cc_states[i].traced && e->run.cc_states[i].lcore == c)
				c->traced[c->n_traced++] = &e->run.cc_states[i];
		c->trace_every_ns = (uint64_t)(cfg->cc_trace_interval_us * 1000.0);
	}
	return 0;
}

/* Congestion control and event injection, before the heaps are ordered (a QP driven by cc is
 * paced from its first packet, at its line rate) and before the completer index (CNPs must find
 * these QPs). */
static int plan_cc(struct engine *e, char *err, size_t errlen)
{
	const struct engine_config *cfg = e->run.cfg;
	struct lcore_work **owner = NULL;
	unsigned k = 0, j = 0;

	for (unsigned q = 0; q < e->run.n_qps; q++) {
		e->run.n_cc += e->run.qps[q].group->cc != CFG_CC_NONE;
		e->n_inj += e->run.qps[q].group->n_inject > 0;
	}
	if (e->run.n_cc)
		e->run.cc_states = rte_zmalloc("cc_states", sizeof(struct qp_cc) * e->run.n_cc, RTE_CACHE_LINE_SIZE);
	if (e->n_inj)
		e->inj_states = rte_zmalloc("inj_states", sizeof(struct qp_inject) * e->n_inj, RTE_CACHE_LINE_SIZE);
	if (e->run.n_cc)
		owner = qp_owners(e);
	if ((e->run.n_cc && (!e->run.cc_states || !owner)) || (e->n_inj && !e->inj_states))
		goto nomem;
	for (unsigned g = 0; g < cfg->n_groups; g++) { /* what the control interface may change */
		e->run.dcqcn_live[g] = cfg->groups[g].dcqcn;
		e->run.timely_live[g] = cfg->groups[g].timely;
	}
	for (unsigned q = 0; q < e->run.n_qps; q++) {
		struct qp_tx *qp = &e->run.qps[q];
		const struct cfg_flow_group *g = qp->group;

		if (g->n_inject) {
			qp_inject_init(&e->inj_states[j], g, qp->index, rte_rand());
			if (e->inj_states[j].n_rules)
				qp->inj = &e->inj_states[j];
			j++;
		}
		if (g->cc != CFG_CC_NONE) {
			struct qp_cc *c = &e->run.cc_states[k++];
			uint64_t line = congestion_line_kbps(g, e->run.ports[qp->port].link_speed_gbps);
			unsigned gi = (unsigned)(g - cfg->groups);

			if (!owner[q] || !(c->lcore = cc_lcore_of(e, owner[q])))
				goto nomem;
			congestion_qp_init(c, qp, q, line, clock_tsc_to_ns(rte_rdtsc()), &e->run.dcqcn_live[gi], &e->run.timely_live[gi]);
			qp_tx_set_rate(qp, (double)line * 1e-6, e->run.tsc_hz);
			c->applied_kbps = line;
			qp->cc = c;
		}
	}
	free(owner);
	if (cfg->cc_trace[0] && e->run.n_cc && plan_cc_trace(e))
		goto nomem;
	return 0;
nomem:
	free(owner);
	snprintf(err, errlen, "out of memory for congestion control / event injection (raise eal.memory_mb)");
	return -1;
}

/* rx_inject rules of each port, per RX lcore (each draws and counts its own). */
static int plan_rx_inject(struct engine *e, char *err, size_t errlen)
{
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		struct lcore_work *w = e->run.work[l];
		for (unsigned p = 0; w && p < e->run.n_ports; p++) {
			w->cport[p] = &e->run.cfg->ports[p];
			if (!e->run.cfg->ports[p].n_rx_inject)
				continue;
			w->rx_inject[p] = rte_zmalloc("rx_inject", sizeof(struct port_inject), RTE_CACHE_LINE_SIZE);
			if (!w->rx_inject[p]) {
				snprintf(err, errlen, "out of memory for rx_inject");
				return -1;
			}
			port_inject_init(w->rx_inject[p], &e->run.cfg->ports[p], rte_rand());
		}
	}
	return 0;
}

static int plan_qps(struct engine *e, char *err, size_t errlen)
{
	const struct engine_config *cfg = e->run.cfg;
	struct tx_role *roles[RTE_MAX_LCORE * LCORE_MAX_ROLES];
	unsigned next_slot = 0, deal[CFG_MAX_PORTS] = {0};
	size_t extra_bytes = 0;
	uint8_t *extra;

	for (unsigned g = 0; g < cfg->n_groups; g++)
		e->run.n_qps += cfg->groups[g].count;
	if (plan_rx_inject(e, err, errlen))
		return -1;
	if (e->run.n_qps == 0) /* receive only: still the responders of the config's `responders`, and latency */
		return plan_rc(e, err, errlen) || plan_latency(e, err, errlen) ? -1 : 0;
	for (unsigned g = 0; g < cfg->n_groups; g++) /* each group's shared part, then its QPs' */
		extra_bytes += qp_tx_group_size(&cfg->groups[g]) + qp_tx_extra_size(&cfg->groups[g]) * cfg->groups[g].count;
	e->run.qps = rte_zmalloc("qps", sizeof(struct qp_tx) * e->run.n_qps, RTE_CACHE_LINE_SIZE);
	e->qp_extra = rte_zmalloc("qp_extra", extra_bytes ? extra_bytes : 64, RTE_CACHE_LINE_SIZE);
	/* per QP: its heap slot, and one in its role's backlog ring (pace_queue.h) */
	e->heap_slots = rte_zmalloc("qp_heaps", 2 * sizeof(struct pace_slot) * e->run.n_qps, RTE_CACHE_LINE_SIZE);
	if (!e->run.qps || !e->qp_extra || !e->heap_slots) {
		snprintf(err, errlen, "out of memory for %u QPs (raise eal.memory_mb)", e->run.n_qps);
		return -1;
	}
	/* size each role's heap first, then fill */
	for (unsigned g = 0, q = 0; g < cfg->n_groups; g++) {
		const struct cfg_flow_group *grp = &cfg->groups[g];
		unsigned n = roles_for_group(e, grp, roles);

		if (n == 0) {
			snprintf(err, errlen, "%s: flows.%s: port %s has no TX role%s",
				 config_where(cfg, grp->line, (char[CR_AT_LEN]){ 0 }, CR_AT_LEN), grp->name,
				 cfg->ports[grp->port].name,
				 cfg->ports[grp->port].has_tc_to_queue ? " on the queue its traffic class maps to (qos.tc_to_queue)"
								      : "");
			return -1;
		}
		for (unsigned i = 0; i < grp->count; i++, q++)
			roles[deal[grp->port]++ % n]->n_qps++;
	}
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		for (unsigned i = 0; e->run.work[l] && i < e->run.work[l]->n_tx; i++) {
			struct tx_role *t = &e->run.work[l]->tx[i];
			t->pq.heap = e->heap_slots + next_slot;
			t->pq.backlog = e->heap_slots + e->run.n_qps + next_slot;
			t->pq.cap = t->n_qps;
			next_slot += t->n_qps;
			t->n_qps = 0;
		}
	memset(deal, 0, sizeof(deal));
	extra = e->qp_extra;
	for (unsigned g = 0, q = 0; g < cfg->n_groups; g++) {
		const struct cfg_flow_group *grp = &cfg->groups[g];
		unsigned n = roles_for_group(e, grp, roles);
		struct qp_group_tx *sh = (struct qp_group_tx *)extra;

		qp_tx_group_init(sh, grp, &cfg->ports[grp->port], e->run.ports[grp->port].mac, e->run.tsc_hz, e->run.start_tsc,
				 e->session);
		extra += qp_tx_group_size(grp);
		for (unsigned i = 0; i < grp->count; i++, q++) {
			struct tx_role *t = roles[deal[grp->port]++ % n];
			qp_tx_init(&e->run.qps[q], sh, i, e->run.tsc_hz, e->run.start_tsc, extra, q);
			extra += qp_tx_extra_size(grp);
			e->run.qps[q].port = (uint16_t)grp->port;
			e->run.qps[q].prio = qos_priority(&e->qos_map[grp->port], grp->dscp, grp->has_vlan, grp->pcp);
			e->run.qps[q].tc = e->qos_map[grp->port].prio_to_tc[e->run.qps[q].prio];
			e->run.qps[q].clean_payload = t->clean_payload;
			t->pq.heap[t->n_qps++] =
				(struct pace_slot){.next_fp = e->run.qps[q].next_fp, .qp = &e->run.qps[q], .more = sh->shapes};
		}
	}
	if (plan_cc(e, err, errlen))
		return -1;
	/* the heap prefetches a QP's first two cache lines and the two at `more`: the group's
	 * shapes, which are in cache anyway, unless the QP also uses its record's last two lines
	 * (congestion control, injection, RC state: known once plan_cc has run) */
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		for (unsigned i = 0; e->run.work[l] && i < e->run.work[l]->n_tx; i++)
			for (unsigned k = 0; k < e->run.work[l]->tx[i].n_qps; k++) {
				struct pace_slot *slot = &e->run.work[l]->tx[i].pq.heap[k];
				if (slot->qp->cc || slot->qp->inj || slot->qp->x)
					slot->more = (const char *)slot->qp + 2 * RTE_CACHE_LINE_SIZE;
			}
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		for (unsigned i = 0; e->run.work[l] && i < e->run.work[l]->n_tx; i++) {
			struct tx_role *t = &e->run.work[l]->tx[i];
			const struct cfg_port *cp = &cfg->ports[t->port];
			if (cp->egress_gbps > 0) { /* egress scheduling: classes instead of one heap */
				t->egress = rte_zmalloc("egress", sizeof(*t->egress), RTE_CACHE_LINE_SIZE);
				if (!t->egress) {
					snprintf(err, errlen, "out of memory for the egress scheduler");
					return -1;
				}
				egress_init(t->egress, t, cp, e->run.tsc_hz);
			}
			tx_role_init_heap(t);
		}
	if (collectives_create(cfg, e->run.start_tsc, &e->run.collectives)) {
		snprintf(err, errlen, "out of memory for the collectives");
		return -1;
	}
	for (unsigned q = 0; q < e->run.n_qps; q++) {
		int c = cfg->group_collective[e->run.qps[q].group - cfg->groups];
		qp_tx_set_collective(&e->run.qps[q], c >= 0 ? &e->run.collectives[c] : NULL);
	}
	return plan_rc(e, err, errlen) || plan_latency(e, err, errlen) ? -1 : 0;
}

/* The virtual lab's switch, on the lcore of its roles. */
static int plan_switch(struct engine *e, char *err, size_t errlen)
{
	unsigned lcore = 0;

	if (!e->run.cfg->sw.present)
		return 0;
	for (unsigned i = 0; i < e->run.cfg->n_roles; i++)
		if (e->run.cfg->roles[i].role == CFG_ROLE_SWITCH)
			lcore = e->run.cfg->roles[i].lcore;
	e->run.sw = switch_create(&(struct switch_env){.cfg = e->run.cfg, .ports = e->run.ports, .qos_map = e->qos_map,
						       .tsc_hz = e->run.tsc_hz},
				  lcore, err, errlen);
	if (!e->run.sw)
		return -1;
	e->run.work[lcore]->sw = e->run.sw;
	if (e->run.cfg->sw.trace[0]) {
		e->sw_csv = out_fopen(e->run.cfg->sw.trace);
		if (!e->sw_csv) {
			snprintf(err, errlen, "switch.trace: cannot write %s: %s", e->run.cfg->sw.trace, strerror(errno));
			return -1;
		}
		switch_trace_header(e->sw_csv);
	}
	return 0;
}

/* --capture: every TX role and RC answer output of an lcore copies to the lcore's ring. */
static void plan_capture(struct engine *e)
{
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		struct lcore_work *w = e->run.work[l];
		if (!w || !e->run.taps[l])
			continue;
		w->cap = e->run.taps[l];
		for (unsigned i = 0; i < w->n_tx; i++)
			w->tx[i].cap = w->cap;
		for (unsigned p = 0; p < CFG_MAX_PORTS; p++)
			w->resp[p].cap = w->cap;
	}
}

/* Planning 65,536 QPs takes a while: the schedules start from when it is done, not before (a
 * QP behind its schedule at start would be clamped, losing its first packets' time). */
static void start_after_planning(struct engine *e)
{
	uint64_t start = rte_rdtsc() + e->run.tsc_hz / 100;
	uint64_t delta = start > e->run.start_tsc ? start - e->run.start_tsc : 0;

	if (delta == 0)
		return;
	for (unsigned q = 0; q < e->run.n_qps; q++)
		qp_tx_shift_time(&e->run.qps[q], delta);
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		for (unsigned i = 0; e->run.work[l] && i < e->run.work[l]->n_tx; i++) {
			struct tx_role *t = &e->run.work[l]->tx[i];
			for (unsigned q = 0; q < t->n_qps; q++)
				t->pq.heap[q].next_fp = t->pq.heap[q].qp->next_fp;
			tx_role_init_heap(t);
		}
	for (unsigned c = 0; c < e->run.cfg->n_collectives; c++)
		e->run.collectives[c].start_tsc[0] += delta;
	e->run.start_tsc = start;
}

/* PFC generators: each on a TX role of its port (one per role), its frame built once, its first
 * frame start_s after the run starts. */
static int setup_pfc_generators(struct engine *e, char *err, size_t errlen)
{
	struct tx_role *roles[RTE_MAX_LCORE * LCORE_MAX_ROLES];

	for (unsigned i = 0; i < e->run.cfg->n_pfc_generators; i++) {
		const struct cfg_pfc_generator *c = &e->run.cfg->pfc_generators[i];
		struct pfc_gen *g = &e->run.pfc_gen[i];
		uint16_t quanta[WIRE_PFC_PRIORITIES];
		unsigned n = tx_roles_of_port(e, c->port, roles), k;
		int len;

		for (k = 0; k < n && roles[k]->gen; k++)
			;
		if (k == n) {
			snprintf(err, errlen, "%s: pfc_generators.[%u]: port %s has no TX role left for it (one generator "
				 "per TX role)", config_where(e->run.cfg, c->line, (char[CR_AT_LEN]){ 0 }, CR_AT_LEN), i,
				 e->run.cfg->ports[c->port].name);
			return -1;
		}
		for (unsigned q = 0; q < WIRE_PFC_PRIORITIES; q++)
			quanta[q] = c->class_enable >> q & 1 ? c->quanta : 0;
		len = c->pause ? wire_build_pause(e->run.ports[c->port].mac, NULL, c->quanta, g->frame, sizeof(g->frame))
			       : wire_build_pfc(e->run.ports[c->port].mac, NULL, c->class_enable, quanta, g->frame, sizeof(g->frame));
		if (len < 0) {
			snprintf(err, errlen, "pfc_generators.[%u]: cannot build the frame (%s)", i, wire_build_error_name(-len));
			return -1;
		}
		g->len = (uint16_t)len;
		g->pause = c->pause;
		g->class_enable = c->pause ? 0xFF : c->class_enable;
		g->interval_fp = (uint64_t)((double)e->run.tsc_hz / c->rate_pps * (double)(1u << PACE_SHIFT));
		g->next_fp = (e->run.start_tsc + (uint64_t)(c->start_s * (double)e->run.tsc_hz)) << PACE_SHIFT;
		g->left = c->count ? c->count : UINT64_MAX;
		roles[k]->gen = g;
	}
	return 0;
}

/* ---- running --------------------------------------------------------------------------------- */

static void launch(struct engine *e)
{
	lcore_reset_stop(&e->stop);
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		if (e->run.work[l])
			rte_eal_remote_launch(lcore_main, e->run.work[l], l);
}

static bool counted_generators(const struct engine *e)
{
	for (unsigned i = 0; i < e->run.cfg->n_pfc_generators; i++)
		if (e->run.cfg->pfc_generators[i].count)
			return true;
	return false;
}

static bool all_tx_finished(const struct engine *e)
{
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		if (e->run.work[l] && e->run.work[l]->n_tx && !__atomic_load_n(&e->run.work[l]->tx_finished, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

static uint64_t rx_frames_total(const struct engine *e)
{
	struct port_totals t;
	uint64_t n = 0;

	for (unsigned p = 0; p < e->run.n_ports; p++) {
		snapshot_port_totals(&e->run, p, &t);
		n += t.rx_frames;
	}
	return n;
}

/* Counters at a phase boundary: bytes sent per flow group and per port and traffic class. */
static void phase_snapshot(struct engine *e, unsigned k, uint64_t now)
{
	e->run.phase_tsc[k] = now;
	memset(e->run.phase_group_bytes[k], 0, sizeof(e->run.phase_group_bytes[k]));
	memset(e->run.phase_tc_bytes[k], 0, sizeof(e->run.phase_tc_bytes[k]));
	for (unsigned q = 0; q < e->run.n_qps; q++)
		e->run.phase_group_bytes[k][e->run.qps[q].group - e->run.cfg->groups] += stat_read(&e->run.qps[q].c.tx_bytes);
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		for (unsigned i = 0; e->run.work[l] && i < e->run.work[l]->n_tx; i++)
			for (unsigned c = 0; e->run.work[l]->tx[i].egress && c < 8; c++)
				e->run.phase_tc_bytes[k][e->run.work[l]->tx[i].port][c] +=
					stat_read(&e->run.work[l]->tx[i].egress->tc[c].bytes);
}

/* The config's phases whose time has come: their changes applied, their start recorded. */
static void run_phases(struct engine *e, uint64_t now)
{
	while (e->run.phases_started < e->run.cfg->n_phases &&
	       now >= e->run.start_tsc + (uint64_t)(e->run.cfg->phases[e->run.phases_started].at_s * (double)e->run.tsc_hz)) {
		const struct cfg_phase *ph = &e->run.cfg->phases[e->run.phases_started];

		for (unsigned i = 0; i < ph->n_egress; i++)
			control_set_egress(&e->run, ph->egress[i].port, ph->egress[i].tc, ph->egress[i].weight, ph->egress[i].has_shape,
					   ph->egress[i].shape_gbps);
		for (unsigned i = 0; i < ph->n_rates; i++)
			control_set_flow_rate(&e->run, ph->rates[i].group, ph->rates[i].gbps);
		phase_snapshot(e, e->run.phases_started++, now);
	}
}

/* What the lcores' rings hold for files — capture copies, the switch's queue trace, the cc trace —
 * written out (every millisecond: a cc trace ring holds 16,384 rows). */
static void drain_to_files(struct engine *e)
{
	capture_drain(&e->run);
	if (e->sw_csv)
		e->run.sw_csv_rows += switch_trace_drain(e->run.sw, e->run.cfg, e->sw_csv);
	for (unsigned l = 0; e->run.cc_csv && l < RTE_MAX_LCORE; l++)
		if (e->run.work[l] && e->run.work[l]->cc && e->run.work[l]->cc->trace)
			e->run.cc_csv_rows += congestion_trace_drain(e->run.work[l]->cc->trace, e->run.cc_csv);
}

/* Every stats interval on the main lcore: NIC clocks sampled against the TSC, raw latency
 * samples written out. */
static void housekeeping(struct engine *e)
{
	for (unsigned p = 0; p < e->run.n_ports; p++)
		port_clock_sample(&e->run.ports[p].clock);
	for (unsigned l = 0; e->lat_csv && l < RTE_MAX_LCORE; l++)
		if (e->run.work[l] && e->run.work[l]->samples)
			e->lat_csv_rows += lat_samples_drain(e->run.work[l]->samples, e->lat_csv);
	if (e->lat_csv)
		fflush(e->lat_csv);
	drain_to_files(e);
	if (e->run.cc_csv)
		fflush(e->run.cc_csv);
}

/* The ports' links, polled on the main lcore: the first state, then every change, as events (the
 * report's link_events) and as a line (printed even with -q: a link going down is news). */
static void poll_links(struct engine *e, uint64_t now)
{
	for (unsigned p = 0; p < e->run.n_ports; p++) {
		struct link_track *l = &e->run.link[p];
		int up = port_link_up(&e->run.ports[p]);
		uint64_t at = now > e->run.start_tsc ? now : e->run.start_tsc;

		if (up < 0 || up == l->state)
			continue;
		if (l->state == 0)
			l->down_tsc += at - l->since_tsc;
		if (l->state >= 0)
			l->changes++;
		if (l->state >= 0 || !up) {
			printf("[%7.1fs] %-8s link %s%s\n", (double)(at - e->run.start_tsc) / (double)e->run.tsc_hz, e->run.ports[p].name,
			       up ? "up" : "down", l->state < 0 ? " (at start)" : "");
			fflush(stdout);
		}
		l->state = up;
		l->since_tsc = at;
		if (l->n_events < RUN_MAX_LINK_EVENTS)
			l->ev[l->n_events++] = (typeof(l->ev[0])){.tsc = at, .up = up != 0};
	}
}

/* The time each port spent down, up to the end of the run. */
static void close_links(struct engine *e, uint64_t end)
{
	for (unsigned p = 0; p < e->run.n_ports; p++) {
		struct link_track *l = &e->run.link[p];
		if (l->state == 0 && end > l->since_tsc)
			l->down_tsc += end - l->since_tsc;
		l->since_tsc = end;
	}
}

#define GATE_PERIOD_MS 5    /* net_memif: the interrupt thread gets a window this often (port.h) */
#define LINK_POLL_MS 100    /* links are polled this often, or at each live line if that is sooner */

struct ticks {
	uint64_t next_gate, next_link, link_every;
};

/* What the main lcore does every millisecond or so, whatever the phase of the run: the memif
 * gate's window, and the links. */
static void main_tick(struct engine *e, struct ticks *t, uint64_t now)
{
	if (now >= t->next_gate) {
		port_gate_window();
		t->next_gate = now + e->run.tsc_hz * GATE_PERIOD_MS / 1000;
	}
	if (now >= t->next_link) {
		poll_links(e, now);
		t->next_link = now + t->link_every;
	}
}

#define NAP_BUSY_US 1000    /* the main lcore's sleep between ticks while something must keep pace */
#define NAP_IDLE_US 10000   /* ... and otherwise */

/* Whether something the main lcore does all run long needs it every millisecond: QPs,
 * collectives or PFC generators with an end of their own (the run's end is timed by their
 * finishing), pcapng / switch / cc trace rings to drain, memif's gate windows. Known at start. */
static bool main_keeps_pace(const struct engine *e)
{
	if (e->run.cfg->n_collectives || counted_generators(e) || e->run.pcapng || e->sw_csv || e->run.cc_csv ||
	    port_gate_active())
		return true;
	for (unsigned g = 0; g < e->run.cfg->n_groups; g++)
		if (cfg_group_has_stop(&e->run.cfg->groups[g]))
			return true;
	return false;
}

/* The main lcore's sleep before its next tick. Each wake-up takes the CPU from a worker lcore
 * that shares it (eal.lcores "0@0,1@0,2@1" on two CPUs): about 70 us a wake-up on a VM, 7 % of
 * that worker at one a millisecond. So it wakes every millisecond only while something needs it
 * to (main_keeps_pace, or phases still to start); else every 10 ms, never past `until` (the
 * deadline or the next live line). */
static unsigned main_nap_us(const struct engine *e, bool keep_pace, uint64_t now, uint64_t until)
{
	uint64_t us = e->run.tsc_hz / 1000000;

	if (keep_pace || e->run.phases_started < e->run.cfg->n_phases || until <= now)
		return NAP_BUSY_US;
	if (until - now < us * NAP_IDLE_US)
		return RTE_MAX((unsigned)((until - now) / us) + 1, (unsigned)NAP_BUSY_US);
	return NAP_IDLE_US;
}

/* Main lcore: live lines until the run ends, then TX stop, RX drain, RX stop. */
static void supervise(struct engine *e, const struct engine_options *opt)
{
	struct live_prev prev[CFG_MAX_PORTS] = {0};
	uint64_t interval = (uint64_t)(opt->stats_interval_s * (double)e->run.tsc_hz);
	uint64_t deadline = opt->duration_s > 0 ? e->run.start_tsc + (uint64_t)(opt->duration_s * (double)e->run.tsc_hz) : 0;
	uint64_t next_line = e->run.start_tsc + interval, last_line = e->run.start_tsc;
	struct ticks ticks = {.link_every = RTE_MIN(interval, e->run.tsc_hz * LINK_POLL_MS / 1000)};
	bool keep_pace = main_keeps_pace(e);
	sig_atomic_t signals;

	for (;;) {
		uint64_t now = rte_rdtsc();
		main_tick(e, &ticks, now);
		if (stop_requested) {
			e->run.stopped_by = "signal";
			break;
		}
		run_phases(e, now);
		if (deadline && now >= deadline) {
			e->run.stopped_by = "duration";
			break;
		}
		if ((e->run.n_qps || counted_generators(e)) && all_tx_finished(e)) {
			e->run.stopped_by = "flows_done";
			break;
		}
		if (now >= next_line) {
			housekeeping(e);
			timeseries_rows(e->run.ts, &e->run, (double)(now - e->run.start_tsc) / (double)e->run.tsc_hz);
			if (!opt->quiet)
				stats_print_interval(&e->run, (double)(now - e->run.start_tsc) / (double)e->run.tsc_hz,
						     (double)(now - last_line) / (double)e->run.tsc_hz, prev);
			last_line = now;
			next_line += interval;
		}
		drain_to_files(e);
		rte_delay_us_sleep(main_nap_us(e, keep_pace, now, deadline && deadline < next_line ? deadline : next_line));
	}
	signals = stop_requested;
	lcore_request_tx_stop(&e->stop);
	e->run.end_tsc = rte_rdtsc();
	if (e->run.end_tsc < e->run.start_tsc) /* stopped before the traffic's start time (a signal at start-up) */
		e->run.end_tsc = e->run.start_tsc;
	phase_snapshot(e, e->run.phases_started, e->run.end_tsc); /* the end of the last phase */
	/* RX goes on until the frames in flight (rings, queues) have arrived; another signal ends it */
	uint64_t quiet = e->run.tsc_hz * DRAIN_QUIET_MS / 1000, stop_at = rte_rdtsc() + e->run.tsc_hz * DRAIN_MAX_MS / 1000;
	uint64_t seen = rx_frames_total(e), since = rte_rdtsc();
	while (rte_rdtsc() < stop_at && rte_rdtsc() - since < quiet && stop_requested == signals) {
		for (unsigned k = 0; k < 5; k++) {
			main_tick(e, &ticks, rte_rdtsc());
			capture_drain(&e->run); /* RX goes on: its copies would fill the capture's rings */
			rte_delay_us_sleep(1000);
		}
		uint64_t n = rx_frames_total(e);
		if (n != seen) {
			seen = n;
			since = rte_rdtsc();
		}
	}
	if (stop_requested != signals)
		printf("roce-engine: signal during the drain: RX stops now\n");
	poll_links(e, rte_rdtsc());
	close_links(e, rte_rdtsc());
	lcore_request_rx_stop(&e->stop);
	rte_eal_mp_wait_lcore();
	port_gate_stop(); /* no worker polls any more: the interrupt thread runs freely */
	housekeeping(e);
	capture_finish(&e->run);
	/* the last stretch */
	timeseries_rows(e->run.ts, &e->run, (double)(rte_rdtsc() - e->run.start_tsc) / (double)e->run.tsc_hz);
}

/* Frees whatever a PMD still holds and records the mbufs not back in their pool. */
static void teardown(struct engine *e)
{
	port_gate_stop();
	if (e->run.sw)
		switch_flush(e->run.sw);
	for (unsigned p = 0; p < e->run.n_ports; p++)
		port_teardown(&e->run.ports[p]);
	for (unsigned p = 0; p < e->run.n_ports; p++)
		e->run.pool_in_use_at_exit[p] = e->run.ports[p].pool ? rte_mempool_in_use_count(e->run.ports[p].pool) : 0;
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		for (unsigned i = 0; e->run.work[l] && i < e->run.work[l]->n_tx; i++)
			if (e->run.work[l]->tx[i].pool) /* NULL when set-up failed before making it */
				e->run.pool_in_use_at_exit[e->run.work[l]->tx[i].port] += rte_mempool_in_use_count(e->run.work[l]->tx[i].pool);
}

static void release(struct engine *e)
{
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		if (!e->run.work[l])
			continue;
		for (unsigned i = 0; i < e->run.work[l]->n_tx; i++) {
			rte_ring_free(e->run.work[l]->tx[i].comp_ring);
			rte_free(e->run.work[l]->tx[i].egress);
			rte_mempool_free(e->run.work[l]->tx[i].pool);
		}
		rx_ctx_free(e->run.work[l]->rx_ctx);
		if (e->run.work[l]->lat) {
			rte_free(e->run.work[l]->lat->slots);
			rte_free(e->run.work[l]->lat->rtt);
			rte_free(e->run.work[l]->lat->slot_port);
			rte_free(e->run.work[l]->lat);
		}
		rte_free(e->run.work[l]->samples);
		capture_free(e->run.taps[l]); /* the lcore's cap (NULL: none) */
		if (e->run.work[l]->cc) {
			rte_free(e->run.work[l]->cc->traced);
			rte_free(e->run.work[l]->cc->trace);
			rte_free(e->run.work[l]->cc);
		}
		for (unsigned p = 0; p < CFG_MAX_PORTS; p++)
			rte_free(e->run.work[l]->rx_inject[p]);
		rte_free(e->run.work[l]);
	}
	qp_index_free(e->run.qp_index);
	e->run.qp_index = NULL;
	responder_table_free(e->responders);
	e->responders = NULL;
	e->ts_rows = timeseries_close(e->run.ts);
	e->run.ts = NULL;
	switch_free(e->run.sw);
	if (e->sw_csv)
		fclose(e->sw_csv);
	rte_free(e->run.cc_states);
	rte_free(e->inj_states);
	if (e->run.cc_csv)
		fclose(e->run.cc_csv);
	collectives_free(e->run.collectives, e->run.cfg->n_collectives);
	rte_free(e->run.qps);
	rte_free(e->qp_extra);
	rte_free(e->heap_slots);
	rte_free(e->lat_ack);
	rte_free(e->run.lat_live);
	rte_free(e->run.lat_live_qp);
	if (e->lat_csv)
		fclose(e->lat_csv);
	for (unsigned p = 0; p < e->run.n_ports; p++)
		rte_mempool_free(e->run.ports[p].pool);
}

/* run.http_linger_s: the HTTP server goes on serving the final numbers (a last scrape, the
 * dashboard's last look) until the time is up or a signal comes. */
static void linger(struct engine *e)
{
	uint64_t end;

	if (!e->http || e->run.cfg->http_linger_s <= 0)
		return;
	printf("roce-engine: serving the final numbers over HTTP for %.3g s (Ctrl-C ends it)\n", e->run.cfg->http_linger_s);
	fflush(stdout);
	stop_requested = 0;
	control_attach_final(&e->run);
	end = rte_rdtsc() + (uint64_t)(e->run.cfg->http_linger_s * (double)e->run.tsc_hz);
	while (!stop_requested && rte_rdtsc() < end)
		rte_delay_us_sleep(10000);
	control_detach();
}

int engine_run(const struct engine_config *cfg, const struct engine_options *opt)
{
	static struct engine e;
	char err[512];
	int rc = ENGINE_EXIT_OK;

	memset(&e, 0, sizeof(e));
	e.run.cfg = cfg;
	e.run.tsc_hz = rte_get_tsc_hz();
	clock_time_base_init(e.run.tsc_hz);
	e.session = (uint16_t)rte_rand();
	if (opt->report_path && report_check_path(opt->report_path, err, sizeof(err))) {
		fprintf(stderr, "roce-engine: %s\n", err);
		return ENGINE_EXIT_REPORT;
	}
	if (cfg->latency_samples[0]) { /* opened now: a path that cannot be written stops the run before traffic */
		e.lat_csv = out_fopen(cfg->latency_samples);
		if (!e.lat_csv) {
			fprintf(stderr, "roce-engine: run.latency_samples: cannot write %s: %s\n", cfg->latency_samples,
				strerror(errno));
			return ENGINE_EXIT_REPORT;
		}
		lat_samples_csv_header(e.lat_csv);
	}
	if (capture_open(&e.run, err, sizeof(err))) {
		fprintf(stderr, "roce-engine: %s\n", err);
		return ENGINE_EXIT_REPORT;
	}
	{
		int failed;
		e.run.ts = timeseries_open(&e.run, err, sizeof(err), &failed);
		if (failed) {
			fprintf(stderr, "roce-engine: %s\n", err);
			return ENGINE_EXIT_REPORT;
		}
	}
	if (cfg->cc_trace[0]) { /* the same: a bad path stops the run before traffic */
		e.run.cc_csv = out_fopen(cfg->cc_trace);
		if (!e.run.cc_csv) {
			fprintf(stderr, "roce-engine: run.cc_trace: cannot write %s: %s\n", cfg->cc_trace, strerror(errno));
			return ENGINE_EXIT_REPORT;
		}
		congestion_trace_header(e.run.cc_csv);
	}
	if (cfg->http_port) { /* before any traffic: a port already taken stops the run here */
		e.http = exporter_start(cfg, err, sizeof(err));
		if (!e.http)
			goto init_failed;
		char base[96]; /* http://ADDRESS:PORT, an IPv6 address in brackets */
		bool v6 = strchr(cfg->http_addr, ':') != NULL;
		snprintf(base, sizeof(base), "http://%s%s%s:%u", v6 ? "[" : "", cfg->http_addr, v6 ? "]" : "", cfg->http_port);
		printf("roce-engine: metrics at %s/metrics, dashboard at %s/\n", base, base);
	}
	const char *crc_alg = wire_crc_init(); /* before wire_icrc_method, which it sets up */
	printf("roce-engine: ICRC with rte_net_crc %s; RX checks %s\n", crc_alg, wire_icrc_method());
	if (setup_ports(&e, err, sizeof(err)))
		goto init_failed;
	for (unsigned p = 0; p < e.run.n_ports; p++)
		port_print_capabilities(&e.run.ports[p]);
	for (unsigned i = 0; i < cfg->n_roles; i++)
		if (add_role(&e, &cfg->roles[i], err, sizeof(err)))
			goto init_failed;
	e.run.start_tsc = rte_rdtsc() + e.run.tsc_hz / 100; /* 10 ms to let every lcore start */
	if (plan_switch(&e, err, sizeof(err)) || plan_qps(&e, err, sizeof(err)))
		goto init_failed;
	/* the capture's pools take a while to make: before the schedules are set to start */
	if (capture_start(&e.run, err, sizeof(err)) || (plan_capture(&e), 0))
		goto init_failed;
	start_after_planning(&e);
	if (setup_pfc_generators(&e, err, sizeof(err)))
		goto init_failed;
	printf("roce-engine: %u QPs on %u lcores; duration %s\n", e.run.n_qps, e.n_work,
	       opt->duration_s > 0 ? "set" : "until the flows stop or a signal");
	if (port_gate_start(err, sizeof(err))) /* net_memif ports: before any worker polls them */
		goto init_failed;
	control_attach(&e.run);
	/* each port's state at the traffic's start: polled now, just before the lcores are launched
	 * (the main lcore's first tick may come after the start on a busy machine) */
	for (unsigned p = 0; p < e.run.n_ports; p++)
		e.run.link[p].state = -1;
	poll_links(&e, e.run.start_tsc);
	launch(&e);
	supervise(&e, opt);
	control_detach();
	stats_capture_pmd(&e.run);
	e.run.finished = true;
	teardown(&e);
	stats_print_summary(&e.run);
	if (!sla_verdict(&e.run, true))
		rc = ENGINE_EXIT_SLA;
	if (opt->report_path) {
		if (report_write(&e.run, opt->report_path, err, sizeof(err))) {
			fprintf(stderr, "roce-engine: %s\n", err);
			rc = ENGINE_EXIT_REPORT;
		} else {
			printf("roce-engine: report written to %s\n", opt->report_path);
		}
	}
	linger(&e);
	exporter_stop(e.http);
	release(&e);
	return rc;

init_failed:
	exporter_stop(e.http);
	if (e.run.capture_fd >= 0)
		close(e.run.capture_fd);
	fprintf(stderr, "roce-engine: %s\n", err);
	teardown(&e);
	release(&e);
	return ENGINE_EXIT_INIT;
}

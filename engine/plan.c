/* SPDX-License-Identifier: BSD-3-Clause */
/* The run planned from the config: ports, lcore roles, QPs and their indexes, latency, congestion
 * control, the switch, captures, PFC generators; the schedules set to start. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include "out_file.h"
#include "completer.h"
#include "egress.h"
#include "tx_payload.h"
#include "notification.h"
#include "fabric_lab.h"
#include "switch.h"
#include "engine_internal.h"

#define RX_QPS_PER_LCORE 65536
#define HELD_UP_MIN_US 1000 /* a loop turn this long after the last: the lcore was held up (no turn takes 1 ms) */
#define FABRIC_FIRST_US 100 /* a gap this long: the fabric lives through it before the hosts send */
#define LAG_MAX_US 10000    /* a QP more than 10 ms behind its schedule skips ahead, no burst */
#define WAIT_NS 2000        /* an RC QP with a full window looks again 2 us later */
#define COMP_RING_SIZE 16384

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

int engine_setup_ports(struct engine *e, char *err, size_t errlen)
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
		e->run.work[lcore]->fabric_first_tsc = e->run.tsc_hz * FABRIC_FIRST_US / 1000000;
		e->n_work++;
	}
	return e->run.work[lcore];
}

int engine_add_role(struct engine *e, const struct cfg_lcore_role *r, char *err, size_t errlen)
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
		l->port = e->run.qps[q].port;
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
	/* the RX lcores reach a probe's QP by its flow (the QP's index) */
	e->lat_of_flow = rte_zmalloc("lat_of_flow", sizeof(*e->lat_of_flow) * (e->run.n_qps + 1), RTE_CACHE_LINE_SIZE);
	if (!e->lat_ack || !e->lat_of_flow)
		goto nomem;
	for (unsigned q = 0; q < e->run.n_qps; q++)
		e->lat_of_flow[q] = e->run.qps[q].lat;
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
		w->lat->lat_of_flow = e->lat_of_flow;
		w->lat->n_flows = e->run.n_qps;
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
			congestion_qp_init(c, qp, &qp->cc_link, g->cc, q, line, clock_tsc_to_ns(rte_rdtsc()), &e->run.dcqcn_live[gi],
					   &e->run.timely_live[gi]);
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

/* Each port's settings as every lcore reads them on RX: its config (notification point), a wire
 * byte's time (arrival times within a burst), its rx_inject rules (each lcore draws and counts its
 * own). */
static int plan_rx_ports(struct engine *e, char *err, size_t errlen)
{
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		struct lcore_work *w = e->run.work[l];
		for (unsigned p = 0; w && p < e->run.n_ports; p++) {
			w->cport[p] = &e->run.cfg->ports[p];
			w->rx_ps_per_byte[p] = e->run.ports[p].link_speed_gbps > 0
				? (uint32_t)(8000.0 / e->run.ports[p].link_speed_gbps + 0.5) : 0;
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

/* The QPs' records, their groups' shared parts and extras, and the pacing slots: one block each. */
static int alloc_qps(struct engine *e, char *err, size_t errlen)
{
	const struct engine_config *cfg = e->run.cfg;
	size_t extra_bytes = 0;

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
	return 0;
}

/* How many QPs each TX role gets (a group's QPs dealt over its port's roles in turn), and each
 * role's slice of the pacing slots. */
static int size_role_heaps(struct engine *e, char *err, size_t errlen)
{
	const struct engine_config *cfg = e->run.cfg;
	struct tx_role *roles[RTE_MAX_LCORE * LCORE_MAX_ROLES];
	unsigned next_slot = 0, deal[CFG_MAX_PORTS] = {0};

	for (unsigned g = 0; g < cfg->n_groups; g++) {
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
		for (unsigned i = 0; i < grp->count; i++)
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
	return 0;
}

/* Each group's shared part and QPs made, in config order, each QP in the heap of the role it was
 * dealt to (the same deal as size_role_heaps). */
static void init_qps(struct engine *e)
{
	const struct engine_config *cfg = e->run.cfg;
	struct tx_role *roles[RTE_MAX_LCORE * LCORE_MAX_ROLES];
	unsigned deal[CFG_MAX_PORTS] = {0};
	uint8_t *extra = e->qp_extra;

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
}

/* The heap prefetches a QP's first two cache lines and the two at `more`: the group's shapes,
 * which are in cache anyway, unless the QP also uses its record's last two lines (congestion
 * control, injection, RC state: known once plan_cc has run). */
static void set_prefetch(struct engine *e)
{
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		for (unsigned i = 0; e->run.work[l] && i < e->run.work[l]->n_tx; i++)
			for (unsigned k = 0; k < e->run.work[l]->tx[i].n_qps; k++) {
				struct pace_slot *slot = &e->run.work[l]->tx[i].pq.heap[k];
				if (slot->qp->cc || slot->qp->inj || slot->qp->x)
					slot->more = (const char *)slot->qp + 2 * RTE_CACHE_LINE_SIZE;
			}
}

/* Each TX role's pacing order built, or its egress scheduler's classes on a port with egress. */
static int init_schedulers(struct engine *e, char *err, size_t errlen)
{
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		for (unsigned i = 0; e->run.work[l] && i < e->run.work[l]->n_tx; i++) {
			struct tx_role *t = &e->run.work[l]->tx[i];
			const struct cfg_port *cp = &e->run.cfg->ports[t->port];
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
	return 0;
}

/* Whether lcore work w receives on config port `port`. */
static bool polls_port(const struct lcore_work *w, unsigned port)
{
	for (unsigned i = 0; i < w->n_rx; i++)
		if (w->rx[i].port == port)
			return true;
	return false;
}

/* Each collective's receive ranges watched by every RX lcore polling their port: whichever lcore a
 * watched QP's frames reach counts its messages (made before launch: the tables are read-only
 * while running). */
static int watch_receives(struct engine *e, char *err, size_t errlen)
{
	const struct engine_config *cfg = e->run.cfg;

	for (unsigned c = 0; c < cfg->n_collectives; c++)
		for (unsigned r = 0; r < cfg->collectives[c].n_receives; r++) {
			const struct cfg_coll_receive *rv = &cfg->collectives[c].receives[r];
			for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
				struct lcore_work *w = e->run.work[l];
				if (!w || !w->rx_ctx || !polls_port(w, rv->port))
					continue;
				if (rx_ctx_watch_messages(w->rx_ctx, (uint16_t)rv->port, rv->qpn, rv->count,
							  &e->run.collectives[c])) {
					snprintf(err, errlen, "lcore %u: more than %u receive ranges to watch", l, RX_MAX_WATCHES);
					return -1;
				}
			}
		}
	return 0;
}

/* The collectives' phase barriers, each QP's, and the receiver QPs they wait for. */
static int plan_collectives(struct engine *e, char *err, size_t errlen)
{
	const struct engine_config *cfg = e->run.cfg;

	if (collectives_create(cfg, e->run.start_tsc, &e->run.collectives)) {
		snprintf(err, errlen, "out of memory for the collectives");
		return -1;
	}
	for (unsigned q = 0; q < e->run.n_qps; q++) {
		int c = cfg->group_collective[e->run.qps[q].group - cfg->groups];
		qp_tx_set_collective(&e->run.qps[q], c >= 0 ? &e->run.collectives[c] : NULL);
	}
	return watch_receives(e, err, errlen);
}

int engine_plan_qps(struct engine *e, char *err, size_t errlen)
{
	const struct engine_config *cfg = e->run.cfg;

	for (unsigned g = 0; g < cfg->n_groups; g++)
		e->run.n_qps += cfg->groups[g].count;
	if (plan_rx_ports(e, err, errlen))
		return -1;
	if (e->run.n_qps == 0) /* receive only: still the responders of the config's `responders`, and latency */
		return plan_rc(e, err, errlen) || plan_latency(e, err, errlen) ? -1 : 0;
	if (alloc_qps(e, err, errlen) || size_role_heaps(e, err, errlen))
		return -1;
	init_qps(e);
	if (plan_cc(e, err, errlen))
		return -1;
	set_prefetch(e);
	if (init_schedulers(e, err, errlen) || plan_collectives(e, err, errlen))
		return -1;
	return plan_rc(e, err, errlen) || plan_latency(e, err, errlen) ? -1 : 0;
}

/* The virtual fabric's switches, each part on its lcore of fabric.lcores. */
static int plan_fabric(struct engine *e, char *err, size_t errlen)
{
	const struct cfg_fabric *c = &e->run.cfg->fab;

	for (unsigned i = 0; i < c->n_lcores; i++)
		if (!work_of(e, c->lcores[i], err, errlen))
			return -1;
	e->run.fab = fabric_lab_create(&(struct switch_env){.cfg = e->run.cfg, .ports = e->run.ports,
							    .qos_map = e->qos_map, .tsc_hz = e->run.tsc_hz},
				       err, errlen);
	if (!e->run.fab)
		return -1;
	fabric_lab_set_start(e->run.fab, &e->run.start_tsc);
	for (unsigned i = 0; i < c->n_lcores; i++) {
		e->run.work[c->lcores[i]]->fab = e->run.fab;
		e->run.work[c->lcores[i]]->fab_part = i;
	}
	return 0;
}

/* The virtual lab's switch, on the lcore of its roles; or the fabric's. */
int engine_plan_switch(struct engine *e, char *err, size_t errlen)
{
	unsigned lcore = 0;

	if (e->run.cfg->fab.present && !e->run.cfg->fab.external) /* else the switches are outside */
		return plan_fabric(e, err, errlen);
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
void engine_plan_capture(struct engine *e)
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

/* run.start_at_unix_s as a TSC time, when it is after `soonest`; else soonest (late: said). */
static uint64_t start_at(const struct engine *e, uint64_t soonest)
{
	const uint64_t tsc = rte_rdtsc();
	const double ahead_s = e->run.cfg->start_at_unix_s - (double)clock_tsc_to_ns(tsc) / 1e9;
	const uint64_t at = ahead_s > 0 ? tsc + (uint64_t)(ahead_s * (double)e->run.tsc_hz) : 0;

	if (at >= soonest)
		return at;
	printf("roce-engine: run.start_at_unix_s %.6f is %.1f ms behind the time the engine could start: "
	       "starting now\n", e->run.cfg->start_at_unix_s,
	       (double)(soonest - tsc) * 1e3 / (double)e->run.tsc_hz - ahead_s * 1e3);
	return soonest;
}

/* Planning 65,536 QPs takes a while: the schedules start from when it is done, not before (a
 * QP behind its schedule at start would be clamped, losing its first packets' time); or at
 * run.start_at_unix_s, the time the processes of a cluster test start together. */
void engine_start_after_planning(struct engine *e)
{
	uint64_t start = rte_rdtsc() + e->run.tsc_hz / 100;
	uint64_t delta;

	if (e->run.cfg->start_at_unix_s > 0)
		start = start_at(e, start);
	delta = start > e->run.start_tsc ? start - e->run.start_tsc : 0;

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
		collective_shift_time(&e->run.collectives[c], delta);
	e->run.start_tsc = start;
}

/* PFC generators: each on a TX role of its port (one per role), its frame built once, its first
 * frame start_s after the run starts. */
int engine_setup_pfc_generators(struct engine *e, char *err, size_t errlen)
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

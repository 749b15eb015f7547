/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "clock.h"
#include "config.h"
#include "counters.h"
#include "pace_time.h"
#include "port.h"
#include "qp_index.h"
#include "switch.h"
#include "switch_route.h"
#include "wire.h"

_Static_assert(SW_MAX_PORTS <= MMU_MAX_PORTS, "every lab switch port needs its buffer accounting");
_Static_assert(CFG_FAB_MAX_SW_PORTS == SW_MAX_PORTS, "a fabric switch of the lab is a lab switch");

#define SW_NONE UINT32_MAX
#define SW_BURST 32
#define TRACE_RING 65536

/* A port's cable: an ethdev queue (the lab switch), or a pair of rings (a fabric switch's). */
static inline uint16_t port_rx(const struct sw_port *p, struct rte_mbuf **b, uint16_t n)
{
	return p->rx_ring ? (uint16_t)rte_ring_sc_dequeue_burst(p->rx_ring, (void **)b, n, NULL)
			  : rte_eth_rx_burst(p->port_id, p->queue, b, n);
}

static inline uint16_t port_tx(const struct sw_port *p, struct rte_mbuf **b, uint16_t n)
{
	return p->tx_ring ? (uint16_t)rte_ring_sp_enqueue_burst(p->tx_ring, (void **)b, n, NULL)
			  : rte_eth_tx_burst(p->port_id, p->queue, b, n);
}

#define SW_PREFETCH_AHEAD 3 /* frames: l3fwd's PREFETCH_OFFSET */

/* ---- set-up ------------------------------------------------------------------------------------ */

/* A MAC as one integer: the table is scanned per frame twice (learn, look up), a compare each. */
static inline uint64_t mac_key(const uint8_t mac[6])
{
	uint16_t hi;
	uint32_t lo;

	memcpy(&lo, mac, 4);
	memcpy(&hi, mac + 4, 2);
	return (uint64_t)hi << 32 | lo;
}

static void fdb_add(struct switch_rt *s, const uint8_t mac[6], unsigned port)
{
	uint64_t key = mac_key(mac);

	for (unsigned i = 0; i < s->n_fdb; i++)
		if (s->fdb[i].mac == key) {
			s->fdb[i].port = (uint8_t)port; /* a host moved */
			return;
		}
	if (s->n_fdb < SW_FDB) {
		s->fdb[s->n_fdb].mac = key;
		s->fdb[s->n_fdb++].port = (uint8_t)port;
	}
}

static int fdb_find(const struct switch_rt *s, const uint8_t mac[6])
{
	uint64_t key = mac_key(mac);

	for (unsigned i = 0; i < s->n_fdb; i++)
		if (s->fdb[i].mac == key)
			return s->fdb[i].port;
	return -1;
}

static int create_tables(struct switch_rt *s, const struct cfg_switch *c, unsigned socket, bool trace)
{
	char name[64];

	/* the buffer holds at most one frame per 60 bytes (the Ethernet minimum) */
	s->n_pkts = (uint32_t)(c->buffer_bytes / 60 + SW_BURST);
	s->pkts = rte_zmalloc_socket("sw_pkts", sizeof(*s->pkts) * s->n_pkts, RTE_CACHE_LINE_SIZE, (int)socket);
	s->flows = rte_zmalloc_socket("sw_flows", sizeof(*s->flows) * s->flow_cap, RTE_CACHE_LINE_SIZE, (int)socket);
	snprintf(name, sizeof(name), "swf_%s", s->name);
	s->flow_index = qp_map_create(name, s->flow_cap, (int)socket);
	if (!s->pkts || !s->flows || !s->flow_index || qp_cache_init(&s->flow_cache, s->flow_cap, (int)socket))
		return -1;
	for (uint32_t i = 0; i < s->n_pkts; i++)
		s->pkts[i].next = i + 1 < s->n_pkts ? i + 1 : SW_NONE;
	s->free_head = 0;
	for (unsigned t = 0; t < SW_TCS; t++)
		if (c->has_red[t] && !s->ecn_depth &&
		    !(s->ecn_depth = rte_zmalloc_socket("sw_ecn_depth", sizeof(*s->ecn_depth) * s->n_ports, RTE_CACHE_LINE_SIZE,
							(int)socket)))
			return -1;
	if (trace && c->trace[0]) {
		s->trace = rte_ring_create_elem("sw_trace", sizeof(struct sw_trace_row), TRACE_RING, (int)socket,
						RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (!s->trace)
			return -1;
	}
	return 0;
}

static void init_port(struct switch_rt *s, const struct switch_env *env, unsigned idx, unsigned cfg_port, unsigned queue)
{
	struct sw_port *p = &s->port[idx];
	const struct port_info *pi = &env->ports[cfg_port];

	snprintf(p->name, sizeof(p->name), "%s", env->cfg->ports[cfg_port].name);
	p->cfg_port = (uint16_t)cfg_port;
	p->port_id = pi->port_id;
	p->queue = (uint16_t)queue;
	memcpy(p->mac, pi->mac, 6);
	p->gbps = pi->link_speed_gbps;
	p->delay_tsc = s->delay_tsc;
	p->map = &env->qos_map[cfg_port];
	p->pool = pi->pool;
	s->port_of_cfg[cfg_port] = (int8_t)idx;
}

/* The emulated link of each port, from its rate: set once the ports are. */
static void init_links(struct switch_rt *s, uint64_t tsc_hz)
{
	for (unsigned i = 0; i < s->n_ports; i++) {
		struct sw_port *p = &s->port[i];
		p->fp_per_byte = pace_fp_per_byte(p->gbps, tsc_hz);
		pfc_pause_init(&p->pause, p->gbps, tsc_hz);
		for (unsigned t = 0; t < SW_TCS; t++)
			p->q[t] = (struct sw_queue){.head = SW_NONE, .tail = SW_NONE};
	}
}

static struct switch_rt *switch_alloc(const struct switch_env *env, const char *name, unsigned socket)
{
	struct switch_rt *s = rte_zmalloc_socket("switch", sizeof(*s), RTE_CACHE_LINE_SIZE, (int)socket);

	if (!s)
		return NULL;
	snprintf(s->name, sizeof(s->name), "%s", name);
	memset(s->port_of_cfg, -1, sizeof(s->port_of_cfg));
	s->tsc_hz = env->tsc_hz;
	s->delay_tsc = (uint64_t)(env->cfg->sw.delay_us * 1e-6 * (double)env->tsc_hz);
	return s;
}

/* What every switch has once its ports are set: the buffer, RED, PFC's timing, the tables (from
 * c: the switch group, or a fabric tier's settings). */
static int switch_common(struct switch_rt *s, const struct switch_env *env, const struct cfg_switch *c, unsigned socket,
			 bool trace, char *err, size_t errlen)
{
	const struct engine_config *cfg = env->cfg;
	struct mmu_params mp = {.buffer_bytes = c->buffer_bytes, .queue_limit = c->queue_limit_bytes, .alpha = c->alpha,
				.pfc_priorities = c->pfc_priorities, .xoff_bytes = c->xoff_bytes,
				.xon_bytes = c->xon_bytes, .headroom_bytes = c->headroom_bytes};
	const char *bad, *why = NULL;
	double slowest = 800;

	init_links(s, env->tsc_hz);
	if ((bad = mmu_params_check(&mp, &why))) {
		snprintf(err, errlen, "%s: switch: %s: %s", config_where(cfg, c->line, (char[CR_AT_LEN]){ 0 }, CR_AT_LEN), bad,
			 why ? why : "out of range");
		return -1;
	}
	mmu_init(&s->mmu, &mp, s->n_ports);
	for (unsigned t = 0; t < SW_TCS; t++) {
		s->has_red[t] = c->has_red[t];
		s->red[t] = (struct red_params){.kmin_bytes = c->red[t].kmin_bytes, .kmax_bytes = c->red[t].kmax_bytes,
						.pmax_q16 = (uint32_t)(c->red[t].pmax * 65536.0 + 0.5)};
		while (((2 * s->red[t].kmax_bytes) >> s->ecn_bin_shift[t]) > SW_ECN_BINS) /* 0..2 kmax in the bins */
			s->ecn_bin_shift[t]++;
	}
	s->rng = c->seed;
	s->lag_fp = (env->tsc_hz * SW_LINK_LAG_US / 1000000) << PACE_SHIFT;
	s->quanta = c->pfc_quanta;
	s->pfc_priorities = c->pfc_priorities;
	/* XOFF again after half its pause time at the slowest port (the pause must not lapse) */
	for (unsigned i = 0; i < s->n_ports; i++)
		if (s->port[i].gbps < slowest)
			slowest = s->port[i].gbps;
	s->refresh_tsc = (uint64_t)((double)c->pfc_quanta * 512.0 / (slowest * 1e9) / 2 * (double)env->tsc_hz);
	s->wd = (struct pfc_wd_params){.action = (enum pfc_wd_action)c->wd_action,
				       .detect_tsc = (uint64_t)(c->wd_detect_ms * 1e-3 * (double)env->tsc_hz),
				       .restore_tsc = (uint64_t)(c->wd_restore_ms * 1e-3 * (double)env->tsc_hz)};
	s->wd_every_tsc = env->tsc_hz / 10000; /* a look every 100 us: detection within 0.1 ms of its time */
	if (create_tables(s, c, socket, trace)) {
		snprintf(err, errlen, "out of memory for switch %s (%llu-byte buffer; raise eal.memory_mb)", s->name,
			 (unsigned long long)c->buffer_bytes);
		return -1;
	}
	s->trace_every_tsc = (uint64_t)(c->trace_interval_us * 1e-6 * (double)env->tsc_hz);
	return 0;
}

struct switch_rt *switch_create(const struct switch_env *env, unsigned lcore, char *err, size_t errlen)
{
	const struct engine_config *cfg = env->cfg;
	const struct cfg_switch *c = &cfg->sw;
	unsigned socket = rte_lcore_to_socket_id(lcore);
	struct switch_rt *s = switch_alloc(env, "switch", socket);

	if (!s) {
		snprintf(err, errlen, "out of memory for the switch (raise eal.memory_mb)");
		return NULL;
	}
	s->flow_cap = SW_MAX_FLOWS;
	for (unsigned i = 0; i < cfg->n_roles; i++)
		if (cfg->roles[i].role == CFG_ROLE_SWITCH && s->n_ports < SW_MAX_PORTS)
			init_port(s, env, s->n_ports++, cfg->roles[i].port, cfg->roles[i].queue);
	if (switch_common(s, env, c, socket, true, err, errlen)) {
		switch_free(s);
		return NULL;
	}
	/* hosts on the switch's ring cables are known from the start; others are learned */
	for (unsigned i = 0; i < s->n_ports; i++) {
		int peer = config_ring_peer(cfg, s->port[i].cfg_port);
		if (peer >= 0)
			fdb_add(s, env->ports[peer].mac, i);
	}
	for (unsigned i = 0; i < c->n_fdb; i++)
		fdb_add(s, c->fdb[i].mac, (unsigned)s->port_of_cfg[c->fdb[i].port]);
	for (unsigned v = 0; v < c->n_vlans; v++)
		for (unsigned p = 0; p < cfg->n_ports; p++)
			if (c->vlans[v].ports >> p & 1) {
				s->vlan_member[s->port_of_cfg[p]][c->vlans[v].vid >> 6] |= 1ull << (c->vlans[v].vid & 63);
				s->vlans = true;
			}
	return s;
}

/* Port k of fabric switch c: its cable's rings, the link's rate and delay, its peer's name. */
static void init_fabric_port(struct switch_rt *s, const struct switch_env *env, const struct cfg_fab_switch *c,
			     unsigned k, struct rte_ring *rx, struct rte_ring *tx, struct rte_mempool *pool)
{
	const struct cfg_fab_port *cp = &c->ports[k];
	struct sw_port *p = &s->port[k];

	snprintf(p->name, sizeof(p->name), "%s", cp->to_nic ? env->cfg->ports[cp->peer].name : env->cfg->fab.sw[cp->peer].name);
	p->cfg_port = UINT16_MAX;
	p->rx_ring = rx;
	p->tx_ring = tx;
	memcpy(p->mac, cp->mac, 6);
	p->gbps = cp->gbps;
	p->delay_tsc = (uint64_t)(cp->delay_us * 1e-6 * (double)env->tsc_hz);
	p->to_nic = p->remote_sender = cp->to_nic;
	/* a NIC's frames are classified as its port's QoS map says; between switches, by DSCP */
	p->map = cp->to_nic ? &env->qos_map[cp->peer] : &s->dscp_map;
	p->pool = pool;
}

struct switch_rt *switch_create_fabric(const struct switch_env *env, unsigned index, struct rte_ring *const rx[],
				       struct rte_ring *const tx[], struct rte_mempool *pool, unsigned lcore, char *err,
				       size_t errlen)
{
	const struct cfg_fab_switch *c = &env->cfg->fab.sw[index];
	unsigned socket = rte_lcore_to_socket_id(lcore);
	struct switch_rt *s = switch_alloc(env, c->name, socket);

	if (!s) {
		snprintf(err, errlen, "out of memory for switch %s (raise eal.memory_mb)", c->name);
		return NULL;
	}
	s->flow_cap = SW_FABRIC_FLOWS;
	s->n_ports = c->n_ports;
	qos_map_default(&s->dscp_map);
	for (unsigned k = 0; k < c->n_ports; k++)
		init_fabric_port(s, env, c, k, rx[k], tx[k], pool);
	if (switch_common(s, env, config_fabric_switch(env->cfg, index), socket, false, err, errlen) ||
	    !(s->route = sw_route_create(c, index, (int)socket, err, errlen))) {
		switch_free(s);
		return NULL;
	}
	return s;
}

void switch_free(struct switch_rt *s)
{
	if (!s)
		return;
	sw_route_free(s->route);
	qp_map_free(s->flow_index);
	qp_cache_free(&s->flow_cache);
	rte_ring_free(s->trace);
	rte_free(s->ecn_depth);
	rte_free(s->flows);
	rte_free(s->pkts);
	rte_free(s);
}

/* ---- PFC toward an ingress port ---------------------------------------------------------------- */

/* The PFC frames a full cable held back, first: true when none is left. */
static bool flush_ctl(struct sw_port *p)
{
	unsigned sent;

	if (!p->n_ctl)
		return true;
	sent = port_tx(p, p->ctl, (uint16_t)p->n_ctl);
	memmove(p->ctl, p->ctl + sent, (p->n_ctl - sent) * sizeof(p->ctl[0]));
	p->n_ctl -= sent;
	return p->n_ctl == 0;
}

/* One PFC frame on port i: XOFF (the configured quanta) or XON (0) for priority prio. MAC control
 * frames go out at once, ahead of the port's queues, as a switch's do; when the cable is full
 * (its far end's lcore behind), they wait ahead of every frame of data (flush_ctl). */
static void send_pfc(struct switch_rt *s, unsigned i, unsigned prio, bool xoff, uint64_t now)
{
	struct sw_port *p = &s->port[i];
	uint16_t quanta[WIRE_PFC_PRIORITIES] = {0};
	struct rte_mbuf *m = p->n_ctl < SW_CTL_PENDING ? rte_pktmbuf_alloc(p->pool) : NULL;
	int len;

	if (!m) {
		STAT_ADD(p->c.pfc_tx_failed, 1);
		return;
	}
	quanta[prio] = xoff ? s->quanta : 0;
	len = wire_build_pfc(p->mac, NULL, (uint8_t)(1u << prio), quanta, rte_pktmbuf_mtod(m, uint8_t *),
			     rte_pktmbuf_tailroom(m));
	if (len <= 0) {
		rte_pktmbuf_free(m);
		STAT_ADD(p->c.pfc_tx_failed, 1);
		return;
	}
	m->data_len = m->pkt_len = (uint32_t)len;
	p->ctl[p->n_ctl++] = m;
	flush_ctl(p);
	if (xoff) {
		STAT_ADD(p->c.pfc_xoff_tx[prio], 1);
		p->xoff_refresh_tsc[prio] = now + s->refresh_tsc;
	} else {
		STAT_ADD(p->c.pfc_xon_tx[prio], 1);
	}
}

/* XOFF in force is sent again before the last one's pause runs out. */
static void refresh_xoff(struct switch_rt *s, uint64_t now)
{
	for (unsigned i = 0; i < s->n_ports; i++)
		for (unsigned pr = 0; s->pfc_priorities && pr < SW_TCS; pr++)
			if (mmu_xoff(&s->mmu, i, pr) && now >= s->port[i].xoff_refresh_tsc[pr])
				send_pfc(s, i, pr, true, now);
}

/* ---- RX: classify, admit, queue ---------------------------------------------------------------- */

static int32_t flow_of(struct switch_rt *s, unsigned out, const struct wire_pkt *p)
{
	int32_t pos;

	if (p->kind != WIRE_KIND_ROCE && p->kind != WIRE_KIND_CNP)
		return -1;
	if ((pos = qp_cache_find(&s->flow_cache, (uint16_t)out, p->bth.dqpn)) >= 0)
		return pos;
	pos = qp_map_find(s->flow_index, (uint16_t)out, p->bth.dqpn);
	if (pos < 0) {
		pos = qp_map_add(s->flow_index, (uint16_t)out, p->bth.dqpn);
		if (pos < 0) {
			STAT_ADD(s->flow_table_full, 1);
			return -1;
		}
		s->flows[pos] = (struct sw_flow){.out = (uint16_t)out, .dqpn = p->bth.dqpn};
		__atomic_store_n(&s->n_flows, s->n_flows + 1, __ATOMIC_RELEASE);
	}
	qp_cache_fill(&s->flow_cache, (uint16_t)out, p->bth.dqpn, pos);
	return pos;
}

static void count_drop(struct switch_rt *s, struct sw_port *in, enum mmu_verdict v, int32_t flow)
{
	if (v == MMU_DROP_BUFFER)
		STAT_ADD(in->c.drop_buffer, 1);
	else if (v == MMU_DROP_QUEUE)
		STAT_ADD(in->c.drop_queue, 1);
	else
		STAT_ADD(in->c.drop_headroom, 1);
	if (flow >= 0)
		STAT_ADD(s->flows[flow].dropped, 1);
}

static void enqueue(struct switch_rt *s, unsigned out, unsigned tc, uint32_t d)
{
	struct sw_queue *q = &s->port[out].q[tc];

	s->pkts[d].next = SW_NONE;
	if (q->tail == SW_NONE)
		q->head = d;
	else
		s->pkts[q->tail].next = d;
	q->tail = d;
	q->n++;
	s->tc_used[out] |= (uint8_t)(1u << tc);
}

static bool in_vlan(const struct switch_rt *s, unsigned port, uint16_t vid)
{
	return s->vlan_member[port][vid >> 6] >> (vid & 63) & 1;
}

/* The lab switch's egress port for a frame from port i: by destination MAC. */
static int bridge(struct switch_rt *s, unsigned i, const struct wire_pkt *p)
{
	int out;

	fdb_add(s, p->l2.src, i);
	out = fdb_find(s, p->l2.dst);
	if (out < 0 || out == (int)i) {
		STAT_ADD(s->port[i].c.drop_unknown_dst, 1);
		return -1;
	}
	return out;
}

/* A frame lost to a link event or a missing route: its QP noted for the event's report. */
static void note_lost(struct switch_rt *s, const struct wire_pkt *p)
{
	struct sw_lost *l = s->lost;

	if (!l || (p->kind != WIRE_KIND_ROCE && p->kind != WIRE_KIND_CNP))
		return;
	for (unsigned i = 0; i < l->n; i++)
		if (l->qpn[i] == p->bth.dqpn)
			return;
	if (l->n < SW_LOST_QPS)
		l->qpn[l->n++] = p->bth.dqpn;
	else
		l->more++;
}

/* A fabric switch's: by the route to the destination IP (the frame rewritten for the hop). */
static int route(struct switch_rt *s, struct sw_port *in, struct rte_mbuf *m, const struct wire_pkt *p, uint64_t now)
{
	enum sw_route_verdict why;
	int out;

	/* a flowlet goes to the least loaded member: the bytes queued on each port, every class */
	out = sw_route_frame(s->route, rte_pktmbuf_mtod(m, uint8_t *), m->data_len, m->pkt_len, p, clock_tsc_to_ns(now),
			     s->mmu.port_queue, &why);
	if (why == SW_NOT_IPV4)
		STAT_ADD(in->c.drop_not_ipv4, 1);
	else if (why == SW_NO_ROUTE)
		STAT_ADD(in->c.drop_no_route, 1), note_lost(s, p);
	else if (why == SW_TTL_EXPIRED)
		STAT_ADD(in->c.drop_ttl, 1);
	return out;
}

/* One received frame (not MAC control) of port i. */
static void forward(struct switch_rt *s, unsigned i, struct rte_mbuf *m, uint64_t now)
{
	struct sw_port *in = &s->port[i];
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	struct wire_pkt p;
	enum mmu_verdict v;
	unsigned prio = 0, tc;
	bool ip, pfc_change = false;
	int out;
	int32_t flow;
	uint32_t d;

	wire_parse(f, m->data_len, WIRE_PARSE_HEADERS_ONLY, &p);
	out = s->route ? route(s, in, m, &p, now) : bridge(s, i, &p);
	if (out < 0) {
		rte_pktmbuf_free(m);
		return;
	}
	if (s->vlans && p.l2.vlan && p.l2.vid && !(in_vlan(s, i, p.l2.vid) && in_vlan(s, (unsigned)out, p.l2.vid))) {
		STAT_ADD(in->c.drop_vlan, 1); /* another segment's host: a switch would not forward it */
		rte_pktmbuf_free(m);
		return;
	}
	ip = p.kind == WIRE_KIND_ROCE || p.kind == WIRE_KIND_CNP;
	if (ip)
		prio = qos_priority(in->map, p.ip.dscp, p.l2.vlan, p.l2.pcp);
	tc = in->map->prio_to_tc[prio];
	flow = flow_of(s, (unsigned)out, &p);
	if (unlikely(pfc_wd_drops(&s->port[out].wd, &s->wd, prio))) { /* its queue is in a PFC storm */
		STAT_ADD(s->port[out].c.drop_watchdog, 1);
		STAT_ADD(s->port[out].wd.dropped[prio], 1);
		if (flow >= 0)
			STAT_ADD(s->flows[flow].dropped, 1);
		rte_pktmbuf_free(m);
		return;
	}
	v = mmu_enqueue(&s->mmu, i, prio, (unsigned)out, tc, m->pkt_len, &pfc_change);
	if (pfc_change)
		send_pfc(s, i, prio, true, now);
	if (v == MMU_ADMIT && s->free_head == SW_NONE) { /* cannot happen with a descriptor per 60 bytes */
		mmu_dequeue(&s->mmu, i, prio, (unsigned)out, tc, m->pkt_len, &pfc_change);
		if (pfc_change)
			send_pfc(s, i, prio, false, now);
		STAT_ADD(in->c.drop_no_descriptor, 1);
		rte_pktmbuf_free(m);
		return;
	}
	if (v != MMU_ADMIT) {
		count_drop(s, in, v, flow);
		rte_pktmbuf_free(m);
		return;
	}
	d = s->free_head;
	s->free_head = s->pkts[d].next;
	s->pkts[d] = (struct sw_pkt){.m = m, .ready_tsc = now + in->delay_tsc, .flow = flow, .len = (uint16_t)m->pkt_len,
				     .in = (uint8_t)i, .prio = (uint8_t)prio, .l3_off = (uint8_t)p.l3_off,
				     .ect = ip && p.ip.ecn != WIRE_ECN_NOT_ECT ? p.ip.version : 0};
	if (flow >= 0)
		STAT_ADD(s->flows[flow].admitted, 1);
	enqueue(s, (unsigned)out, tc, d);
}

static void rx_port(struct switch_rt *s, unsigned i, uint64_t now)
{
	struct sw_port *in = &s->port[i];
	struct rte_mbuf *burst[SW_BURST];
	uint16_t n = port_rx(in, burst, SW_BURST);
	uint64_t bytes = 0;

	/* the frames' headers are read a few frames ahead, as l3fwd does: the first read of each
	 * was the loop's costliest load. Before that, every mbuf of the burst: when another lcore
	 * wrote them (a NIC or a switch on another CPU) each is a miss on the other CPU's cache,
	 * and reading one to find its data was 80 % of this loop unless all are asked for at once */
	for (uint16_t k = 0; k < n; k++)
		rte_prefetch0(burst[k]);
	for (uint16_t k = 0; k < n && k < SW_PREFETCH_AHEAD; k++)
		rte_prefetch0(rte_pktmbuf_mtod(burst[k], void *));
	for (uint16_t k = 0; k < n; k++) {
		struct rte_mbuf *m = burst[k];
		const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);

		if (k + SW_PREFETCH_AHEAD < n)
			rte_prefetch0(rte_pktmbuf_mtod(burst[k + SW_PREFETCH_AHEAD], void *));

		bytes += m->pkt_len;
		if (unlikely(in->down)) { /* sent into a dead link */
			struct wire_pkt p;
			wire_parse(f, m->data_len, WIRE_PARSE_HEADERS_ONLY, &p);
			STAT_ADD(in->c.drop_link_down, 1);
			note_lost(s, &p);
			rte_pktmbuf_free(m);
			continue;
		}
		if (m->data_len >= 14 && f[12] == 0x88 && f[13] == 0x08) { /* MAC control: PFC or PAUSE */
			struct wire_pkt p;
			if (wire_parse(f, m->data_len, WIRE_PARSE_HEADERS_ONLY, &p) == WIRE_KIND_PFC) {
				pfc_pause_frame(&in->pause, p.pfc_enable, p.quanta, now);
				for (unsigned pr = 0; pr < SW_TCS; pr++)
					if (p.pfc_enable >> pr & 1)
						STAT_ADD(in->c.pfc_rx[pr], 1);
			} else if (p.kind == WIRE_KIND_PAUSE) {
				pfc_pause_all(&in->pause, p.quanta[0], now);
			}
			rte_pktmbuf_free(m);
			continue;
		}
		forward(s, i, m, now);
	}
	STAT_ADD(in->c.rx_frames, n);
	STAT_ADD(in->c.rx_bytes, bytes);
}

/* ---- the PFC watchdog -------------------------------------------------------------------------- */

/* The frames queued on port out of the priorities in mask (and that came in at port `from`, when
 * it is not -1) go, counted in *total and per priority in per_prio[] (when given), their QPs
 * noted as lost when note. */
static void drop_queued(struct switch_rt *s, unsigned out, uint8_t mask, int from, uint64_t now, uint64_t *total,
			uint64_t *per_prio, bool note)
{
	struct sw_port *o = &s->port[out];

	for (unsigned tc = 0; tc < SW_TCS; tc++) {
		uint32_t d = o->q[tc].head;

		o->q[tc] = (struct sw_queue){.head = SW_NONE, .tail = SW_NONE}; /* what stays is queued again */
		while (d != SW_NONE) {
			struct sw_pkt *x = &s->pkts[d];
			uint32_t next = x->next;
			bool pfc_change = false;

			if ((mask >> x->prio & 1) && (from < 0 || x->in == (unsigned)from)) {
				mmu_dequeue(&s->mmu, x->in, x->prio, out, tc, x->len, &pfc_change);
				if (pfc_change)
					send_pfc(s, x->in, x->prio, false, now);
				STAT_ADD(*total, 1);
				STAT_ADD(s->dropped_from_queues, 1);
				if (per_prio)
					STAT_ADD(per_prio[x->prio], 1);
				if (note) {
					struct wire_pkt p;
					wire_parse(rte_pktmbuf_mtod(x->m, const uint8_t *), x->m->data_len, WIRE_PARSE_HEADERS_ONLY, &p);
					note_lost(s, &p);
				}
				if (x->flow >= 0) {
					STAT_ADD(s->flows[x->flow].dropped, 1);
					STAT_ADD(s->flows[x->flow].dropped_queued, 1);
				}
				rte_pktmbuf_free(x->m);
				x->next = s->free_head;
				s->free_head = d;
			} else {
				enqueue(s, out, tc, d);
			}
			d = next;
		}
	}
}

static void watchdog(struct switch_rt *s, uint64_t now)
{
	for (unsigned i = 0; i < s->n_ports; i++) {
		uint8_t began = pfc_wd_check(&s->port[i].wd, &s->wd, &s->port[i].pause, now);
		if (began && s->wd.action == PFC_WD_DROP)
			drop_queued(s, i, began, -1, now, &s->port[i].c.drop_watchdog, s->port[i].wd.dropped, false);
	}
}

/* ---- TX: the emulated link ----------------------------------------------------------------------- */

/* ECN-CE into a frame's IP header (the ICRC leaves ToS / traffic class out). */
static void mark_ce(struct sw_pkt *x)
{
	uint8_t *ip = rte_pktmbuf_mtod(x->m, uint8_t *) + x->l3_off;

	if (x->ect == 4) {
		ip[1] |= WIRE_ECN_CE;
		wire_put16(ip + 10, wire_ipv4_checksum(ip));
	} else {
		ip[1] |= WIRE_ECN_CE << 4;
	}
}

/* The class to serve now: the highest whose head may leave (arrived its delay ago, not paused). */
static int pick_class(const struct switch_rt *s, const struct sw_port *o, uint64_t now)
{
	for (int tc = SW_TCS - 1; tc >= 0; tc--) {
		const struct sw_queue *q = &o->q[tc];
		const struct sw_pkt *h;
		if (!q->n)
			continue;
		h = &s->pkts[q->head];
		if (h->ready_tsc <= now &&
		    (!pfc_paused(&o->pause, h->prio, now) || pfc_wd_ignores_pause(&o->wd, &s->wd, h->prio)))
			return tc;
	}
	return -1;
}

/* An ECT frame leaving queue (out, tc) of a RED class: marked at the ramp's probability for the
 * depth it leaves behind, and counted in that depth's bin. */
static void red_at_dequeue(struct switch_rt *s, struct sw_pkt *x, unsigned out, unsigned tc)
{
	uint64_t q = s->mmu.queue[out][tc], bin = q >> s->ecn_bin_shift[tc];
	struct sw_ecn_bin *b = &s->ecn_depth[out][tc][bin < SW_ECN_BINS ? bin : SW_ECN_BINS - 1];
	bool mark = red_should_mark(&s->red[tc], q, &s->rng);

	if (mark) {
		mark_ce(x);
		STAT_ADD(s->port[out].c.ecn_marked[tc], 1);
		if (x->flow >= 0)
			STAT_ADD(s->flows[x->flow].marked, 1);
	}
	STAT_ADD(b->frames, 1);
	STAT_ADD(b->marked, mark);
	STAT_ADD(b->depth_sum, q);
}

static struct rte_mbuf *dequeue(struct switch_rt *s, unsigned out, unsigned tc, uint64_t now)
{
	struct sw_port *o = &s->port[out];
	struct sw_queue *q = &o->q[tc];
	uint32_t d = q->head;
	struct sw_pkt *x = &s->pkts[d];
	struct rte_mbuf *m = x->m;
	bool pfc_change = false;

	q->head = x->next;
	if (q->head == SW_NONE)
		q->tail = SW_NONE;
	q->n--;
	mmu_dequeue(&s->mmu, x->in, x->prio, out, tc, x->len, &pfc_change);
	if (pfc_change)
		send_pfc(s, x->in, x->prio, false, now);
	/* RED on the queue the frame leaves behind, at dequeue (DCQCN's congestion point) */
	if (x->ect && s->has_red[tc])
		red_at_dequeue(s, x, out, tc);
	if (x->flow >= 0)
		STAT_ADD(s->flows[x->flow].sent, 1);
	o->next_free_fp += o->fp_per_byte * (uint64_t)(x->len + SW_WIRE_OVERHEAD);
	x->next = s->free_head;
	s->free_head = d;
	return m;
}

static bool flush_pending(struct sw_port *o)
{
	uint16_t sent;

	if (!o->n_pending)
		return true;
	sent = port_tx(o, o->pending + o->pending_off, (uint16_t)o->n_pending);
	o->pending_off += sent;
	o->n_pending -= sent;
	if (o->n_pending)
		return false;
	o->pending_off = 0;
	return true;
}

/* A port whose link is down loses what is queued to it (counted, and its QPs noted). */
static void drop_queued_to_dead_link(struct switch_rt *s, unsigned out, uint64_t now)
{
	struct sw_port *o = &s->port[out];

	if (o->n_pending)
		rte_pktmbuf_free_bulk(o->pending + o->pending_off, o->n_pending);
	STAT_ADD(o->c.drop_link_down, o->n_pending);
	o->n_pending = o->pending_off = 0;
	if (o->n_ctl) /* (PFC frames: not data, not counted as its losses) */
		rte_pktmbuf_free_bulk(o->ctl, o->n_ctl);
	o->n_ctl = 0;
	drop_queued(s, out, 0xFF, -1, now, &o->c.drop_link_down, NULL, true);
}

static void tx_port(struct switch_rt *s, unsigned out, uint64_t now)
{
	struct sw_port *o = &s->port[out];
	uint64_t now_fp = now << PACE_SHIFT, bytes = 0;
	struct rte_mbuf *burst[SW_BURST];
	unsigned n = 0;
	uint16_t sent;
	int tc;

	if (unlikely(o->down)) {
		drop_queued_to_dead_link(s, out, now);
		return;
	}
	if (unlikely(__atomic_load_n(&o->carrier_lost, __ATOMIC_RELAXED)))
		return; /* no peer on the cable: its frames wait in its queues (where a departure's flush
			 * finds them), not in a burst the cable refuses */
	if (!flush_ctl(o) || !flush_pending(o))
		return;
	/* An idle link keeps no credit, and a link with nothing it may send is idle: its queues
	 * empty, paused by PFC, or their frames not yet through the link's delay (a paused link that
	 * banked credit would burst a millisecond's worth the moment XON came). A busy one whose lcore
	 * was held up (the host took the CPU) sends what the link would have sent meanwhile, up to
	 * SW_LINK_LAG_US: resetting it to now would make the link slower than its rate whenever a loop
	 * turn takes longer than a frame's time. */
	if (o->next_free_fp < now_fp) {
		if (pick_class(s, o, now) < 0) {
			o->next_free_fp = now_fp;
		} else if (o->next_free_fp + s->lag_fp < now_fp) { /* the link's time the CPU took: lost */
			STAT_ADD(o->c.cpu_lost_tsc, (now_fp - s->lag_fp - o->next_free_fp) >> PACE_SHIFT);
			o->next_free_fp = now_fp - s->lag_fp;
		}
	}
	/* frames whose transmission starts by now (the link is free at next_free) */
	while (n < SW_BURST && o->next_free_fp <= now_fp + (o->fp_per_byte * 64) && (tc = pick_class(s, o, now)) >= 0) {
		burst[n] = dequeue(s, out, (unsigned)tc, now);
		bytes += burst[n]->pkt_len;
		n++;
	}
	if (!n)
		return;
	STAT_ADD(o->c.tx_frames, n);
	STAT_ADD(o->c.tx_bytes, bytes);
	sent = port_tx(o, burst, (uint16_t)n);
	for (unsigned k = sent; k < n; k++) /* the peer's ring is full: they go first next time */
		o->pending[o->n_pending++] = burst[k];
}

/* A port whose ethdev link went down since the last poll (a process on its cable left): what is
 * queued to it goes, and what came in from it, wherever it waits. Frames for it that arrive
 * while it is down wait for the next peer as for a slow one. */
static void flush_departed(struct switch_rt *s, unsigned port, uint64_t now)
{
	drop_queued_to_dead_link(s, port, now);
	for (unsigned o = 0; o < s->n_ports; o++)
		if (o != port)
			drop_queued(s, o, 0xFF, (int)port, now, &s->port[port].c.drop_link_down, NULL, true);
}

static void check_carriers(struct switch_rt *s, uint64_t now)
{
	for (unsigned i = 0; i < s->n_ports; i++) {
		bool lost = __atomic_load_n(&s->port[i].carrier_lost, __ATOMIC_RELAXED);
		if (lost && !s->port[i].carrier_flushed)
			flush_departed(s, i, now);
		s->port[i].carrier_flushed = lost;
	}
}

void switch_port_link(struct switch_rt *s, unsigned cfg_port, bool up)
{
	for (unsigned i = 0; i < s->n_ports; i++)
		if (!s->port[i].tx_ring && s->port[i].cfg_port == cfg_port)
			__atomic_store_n(&s->port[i].carrier_lost, !up, __ATOMIC_RELAXED);
}

/* ---- trace ------------------------------------------------------------------------------------- */

static void trace(struct switch_rt *s, uint64_t now)
{
	uint64_t ns = clock_tsc_to_ns(now);

	for (unsigned i = 0; i < s->n_ports; i++) {
		struct sw_port *p = &s->port[i];
		uint8_t xoff = 0, paused = 0;
		uint64_t dropped = p->c.drop_buffer + p->c.drop_queue + p->c.drop_headroom;

		for (unsigned pr = 0; pr < SW_TCS; pr++) {
			xoff |= (uint8_t)(mmu_xoff(&s->mmu, i, pr) << pr);
			paused |= (uint8_t)(pfc_paused(&p->pause, pr, now) << pr);
		}
		for (unsigned tc = 0; tc < SW_TCS; tc++) {
			struct sw_trace_row r = {.time_ns = ns, .queue_bytes = s->mmu.queue[i][tc],
						 .buffer_used = s->mmu.used, .dropped = dropped,
						 .marked = p->c.ecn_marked[tc], .port = p->cfg_port, .tc = (uint8_t)tc,
						 .xoff = xoff, .paused = paused};
			if (!(s->tc_used[i] >> tc & 1))
				continue;
			if (rte_ring_sp_enqueue_elem(s->trace, &r, sizeof(r)) != 0)
				STAT_ADD(s->trace_dropped, 1);
		}
	}
}

static void poll_at(struct switch_rt *s, uint64_t now, bool from_remote)
{
	/* ingress ports take turns at going first, as a switch's ingress arbitration does: with one
	 * fixed order the first port would win every slot a full queue frees */
	s->rx_first = s->rx_first + 1 < s->n_ports ? s->rx_first + 1 : 0;
	for (unsigned k = 0, i = s->rx_first; k < s->n_ports; k++, i = i + 1 < s->n_ports ? i + 1 : 0)
		if (from_remote || !s->port[i].remote_sender)
			rx_port(s, i, now);
	check_carriers(s, now);
	for (unsigned i = 0; i < s->n_ports; i++)
		tx_port(s, i, now);
	if (s->pfc_priorities)
		refresh_xoff(s, now);
	if (s->wd.action != PFC_WD_OFF && now >= s->next_wd_tsc) {
		watchdog(s, now);
		s->next_wd_tsc = now + s->wd_every_tsc;
	}
	if (s->trace && now >= s->next_trace_tsc) {
		trace(s, now);
		s->next_trace_tsc = (s->next_trace_tsc ? s->next_trace_tsc : now) + s->trace_every_tsc;
		if (s->next_trace_tsc < now)
			s->next_trace_tsc = now + s->trace_every_tsc;
	}
}

void switch_poll(struct switch_rt *s, uint64_t now)
{
	poll_at(s, now, true);
}

void switch_replay(struct switch_rt *s, uint64_t t)
{
	poll_at(s, t, false);
}

void switch_lose_time_until(struct switch_rt *s, uint64_t t)
{
	const uint64_t t_fp = t << PACE_SHIFT;

	for (unsigned i = 0; i < s->n_ports; i++) {
		struct sw_port *o = &s->port[i];
		if (o->next_free_fp < t_fp && pick_class(s, o, t) >= 0) {
			STAT_ADD(o->c.cpu_lost_tsc, (t_fp - o->next_free_fp) >> PACE_SHIFT);
			o->next_free_fp = t_fp;
		}
	}
}

void switch_flush(struct switch_rt *s)
{
	for (unsigned i = 0; i < s->n_ports; i++) {
		struct sw_port *o = &s->port[i];
		if (o->n_pending)
			rte_pktmbuf_free_bulk(o->pending + o->pending_off, o->n_pending);
		o->n_pending = 0;
		if (o->n_ctl)
			rte_pktmbuf_free_bulk(o->ctl, o->n_ctl);
		o->n_ctl = 0;
		for (unsigned tc = 0; tc < SW_TCS; tc++)
			for (uint32_t d = o->q[tc].head; d != SW_NONE; d = s->pkts[d].next)
				rte_pktmbuf_free(s->pkts[d].m); /* counted: admitted - sent = still queued */
	}
}

void switch_trace_header(FILE *csv)
{
	fprintf(csv, "time_ns,port,tc,queue_bytes,buffer_bytes,xoff,paused,dropped,ecn_marked\n");
}

unsigned switch_trace_drain(struct switch_rt *s, const struct engine_config *cfg, FILE *csv)
{
	struct sw_trace_row r;
	unsigned n = 0;

	while (s->trace && rte_ring_sc_dequeue_elem(s->trace, &r, sizeof(r)) == 0) {
		fprintf(csv, "%llu,%s,%u,%llu,%llu,0x%02x,0x%02x,%llu,%llu\n", (unsigned long long)r.time_ns,
			cfg->ports[r.port].name, r.tc, (unsigned long long)r.queue_bytes,
			(unsigned long long)r.buffer_used, r.xoff, r.paused, (unsigned long long)r.dropped,
			(unsigned long long)r.marked);
		n++;
	}
	return n;
}

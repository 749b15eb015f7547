/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include "counters.h"
#include "fab_fluid.h"
#include "fabric_lab.h"
#include "report_switch.h"
#include "snapshot.h"
#include "switch.h"
#include "switch_route.h"
#include "wire.h"


static uint64_t sent_total(const struct switch_rt *s)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < s->n_ports; i++)
		n += s->port[i].c.tx_frames;
	return n;
}

static json_t *drops_json(const struct switch_rt *s, const struct sw_port_counters *c)
{
	json_t *o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "buffer_full", (json_int_t)c->drop_buffer, "queue_limit",
			      (json_int_t)c->drop_queue, "headroom", (json_int_t)c->drop_headroom, "unknown_dst",
			      (json_int_t)c->drop_unknown_dst, "no_descriptor", (json_int_t)c->drop_no_descriptor, "vlan",
			      (json_int_t)c->drop_vlan);

	json_object_set_new(o, "watchdog", json_integer((json_int_t)c->drop_watchdog));
	json_object_set_new(o, "link_down", json_integer((json_int_t)c->drop_link_down));
	if (s->route) {
		json_object_set_new(o, "not_ipv4", json_integer((json_int_t)c->drop_not_ipv4));
		json_object_set_new(o, "no_route", json_integer((json_int_t)c->drop_no_route));
		json_object_set_new(o, "ttl_expired", json_integer((json_int_t)c->drop_ttl));
	}
	return o;
}

static uint64_t drops_total(const struct sw_port_counters *c)
{
	return c->drop_buffer + c->drop_queue + c->drop_headroom + c->drop_unknown_dst + c->drop_no_descriptor +
	       c->drop_vlan + c->drop_not_ipv4 + c->drop_no_route + c->drop_ttl + c->drop_watchdog + c->drop_link_down;
}

/* The port's PFC watchdog: storms per priority, their time, what the drop action dropped. */
static json_t *watchdog_json(const struct run_view *run, const struct switch_rt *s, const struct sw_port *p)
{
	uint64_t ms[SW_TCS];

	for (unsigned k = 0; k < SW_TCS; k++) {
		uint64_t c = stat_read(&p->wd.storm_cycles[k]);
		if ((p->wd.storm >> k & 1) && run->end_tsc > p->wd.storm_tsc[k]) /* still on at the end: up to the end */
			c += run->end_tsc - p->wd.storm_tsc[k];
		ms[k] = c * 1000 / s->tsc_hz;
	}
	return json_pack("{s:o,s:o,s:o,s:o,s:i}", "storms", u64_array(p->wd.storms, SW_TCS), "restores",
			 u64_array(p->wd.restores, SW_TCS), "storm_ms", u64_array(ms, SW_TCS), "dropped",
			 u64_array(p->wd.dropped, SW_TCS), "in_storm_at_end", (int)p->wd.storm);
}

/* Per RED class that saw ECT frames leave port i: the frames, the marked ones and their mean depth
 * by the depth they left behind (lab/switch.h, struct sw_ecn_bin). */
static json_t *ecn_depth_json(const struct switch_rt *s, unsigned i)
{
	json_t *a = json_array();

	for (unsigned t = 0; s->ecn_depth && t < SW_TCS; t++) {
		const struct sw_ecn_bin *b = s->ecn_depth[i][t];
		json_t *frames = json_array(), *marked = json_array(), *depth = json_array();
		uint64_t any = 0;

		for (unsigned k = 0; k < SW_ECN_BINS; k++) {
			uint64_t n = stat_read(&b[k].frames);
			any += n;
			json_array_append_new(frames, json_integer((json_int_t)n));
			json_array_append_new(marked, json_integer((json_int_t)stat_read(&b[k].marked)));
			json_array_append_new(depth, json_real(n ? (double)stat_read(&b[k].depth_sum) / (double)n : 0.0));
		}
		if (!s->has_red[t] || !any) {
			json_decref(frames);
			json_decref(marked);
			json_decref(depth);
			continue;
		}
		json_array_append_new(a, json_pack("{s:i,s:I,s:o,s:o,s:o}", "tc", (int)t, "bin_bytes",
						   (json_int_t)(1ull << s->ecn_bin_shift[t]), "frames", frames, "marked",
						   marked, "mean_depth_bytes", depth));
	}
	return a;
}

/* The RED ramps of the switch's classes. */
static json_t *red_json(const struct switch_rt *s)
{
	json_t *a = json_array();

	for (unsigned t = 0; t < SW_TCS; t++)
		if (s->has_red[t])
			json_array_append_new(a, json_pack("{s:i,s:I,s:I,s:f}", "tc", (int)t, "kmin_bytes",
							   (json_int_t)s->red[t].kmin_bytes, "kmax_bytes",
							   (json_int_t)s->red[t].kmax_bytes, "pmax",
							   (double)s->red[t].pmax_q16 / 65536.0));
	return a;
}

static json_t *switch_port_json(const struct run_view *run, const struct switch_rt *s, unsigned i)
{
	const struct sw_port *p = &s->port[i];
	uint64_t qb[SW_TCS], mq[SW_TCS], paused[SW_TCS], xoff_ev[SW_TCS];
	json_t *o;

	for (unsigned t = 0; t < SW_TCS; t++) {
		qb[t] = s->mmu.queue[i][t];
		mq[t] = s->mmu.max_queue[i][t];
		paused[t] = pfc_paused_ns(&p->pause, t, run->end_tsc);
		xoff_ev[t] = s->mmu.xoff_events[i][t];
	}
	o = json_pack("{s:s,s:f,s:I,s:I,s:I,s:I}", "port", p->name, "link_gbps", p->gbps, "rx_frames",
		      (json_int_t)p->c.rx_frames, "rx_bytes", (json_int_t)p->c.rx_bytes, "tx_frames",
		      (json_int_t)p->c.tx_frames, "tx_bytes", (json_int_t)p->c.tx_bytes);
	json_object_set_new(o, "dropped", drops_json(s, &p->c));
	json_object_set_new(o, "queue_bytes", u64_array(qb, SW_TCS));
	json_object_set_new(o, "max_queue_bytes", u64_array(mq, SW_TCS));
	json_object_set_new(o, "ecn_marked", u64_array(p->c.ecn_marked, SW_TCS));
	json_object_set_new(o, "pfc_xoff_tx", u64_array(p->c.pfc_xoff_tx, SW_TCS));
	json_object_set_new(o, "pfc_xon_tx", u64_array(p->c.pfc_xon_tx, SW_TCS));
	json_object_set_new(o, "xoff_episodes", u64_array(xoff_ev, SW_TCS));
	json_object_set_new(o, "pfc_rx", u64_array(p->c.pfc_rx, SW_TCS));
	json_object_set_new(o, "paused_ns", u64_array(paused, SW_TCS));
	json_object_set_new(o, "pfc_tx_failed", json_integer((json_int_t)p->c.pfc_tx_failed));
	json_object_set_new(o, "cpu_lost_ms", json_real((double)stat_read(&p->c.cpu_lost_tsc) * 1e3 / (double)s->tsc_hz));
	if (s->wd.action != PFC_WD_OFF)
		json_object_set_new(o, "watchdog", watchdog_json(run, s, p));
	if (s->ecn_depth)
		json_object_set_new(o, "ecn_depth", ecn_depth_json(s, i));
	return o;
}

/* A switch: per port, per flow (egress port, destination QPN), the buffer. */
json_t *report_switch_json(const struct run_view *run, const struct switch_rt *s)
{
	json_t *ports = json_array(), *flows = json_array(), *o;
	const struct mmu_counters *m = &s->mmu.c;

	for (unsigned i = 0; i < s->n_ports; i++)
		json_array_append_new(ports, switch_port_json(run, s, i));
	for (uint32_t i = 0; i < s->flow_cap; i++) {
		const struct sw_flow *f = &s->flows[i];
		if (!f->admitted && !f->dropped)
			continue;
		json_array_append_new(flows, json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I}", "egress", s->port[f->out].name,
			"dest_qpn", (json_int_t)f->dqpn, "admitted", (json_int_t)f->admitted, "dropped",
			(json_int_t)f->dropped, "sent", (json_int_t)f->sent, "ecn_marked", (json_int_t)f->marked,
			"queued_at_end", (json_int_t)(f->admitted - f->sent - f->dropped_queued)));
	}
	o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:I}", "buffer_bytes", (json_int_t)s->mmu.p.buffer_bytes,
		      "max_buffer_used", (json_int_t)s->mmu.max_used, "admitted", (json_int_t)m->admitted,
		      "dropped_buffer_full", (json_int_t)m->dropped_buffer, "dropped_queue_limit", (json_int_t)m->dropped_queue,
		      "dropped_headroom", (json_int_t)m->dropped_headroom, "flow_table_full", (json_int_t)s->flow_table_full,
		      "ports", ports, "flows", flows, "queued_at_end_frames",
		      (json_int_t)(m->admitted - sent_total(s) - s->dropped_from_queues));
	/* the lossy queues' admission threshold: static (0: the buffer), or alpha x free buffer */
	json_object_set_new(o, "queue_limit_bytes", json_integer((json_int_t)s->mmu.p.queue_limit));
	json_object_set_new(o, "alpha", json_real(s->mmu.p.alpha));
	json_object_set_new(o, "red", red_json(s));
	if (!s->route) {
		json_object_set_new(o, "trace_rows", json_integer((json_int_t)run->sw_csv_rows));
		json_object_set_new(o, "trace", json_string(run->cfg->sw.trace));
		json_object_set_new(o, "trace_dropped", json_integer((json_int_t)s->trace_dropped));
	}
	return o;
}

/* ---- the fabric ---------------------------------------------------------------------------------- */

void report_fabric_link_dir(const struct run_view *run, unsigned link, bool a_to_b, uint64_t now, struct fab_link_dir *d)
{
	const struct cfg_fab_link *cl = &run->fab->cfg->links[link];
	struct fab_dir_ports x;
	const struct sw_port *t, *r;

	fabric_lab_dir_ports(run->fab, link, a_to_b, &x);
	t = x.tx; /* NULL: a NIC sends (then: what its switch port received) */
	r = x.rx;
	memset(d, 0, sizeof(*d));
	d->from = t ? x.tx_sw->name : run->cfg->ports[cl->b].name;
	d->to = r ? x.rx_sw->name : run->cfg->ports[cl->b].name;
	d->to_switch = r != NULL;
	d->from_switch = t != NULL;
	d->frames = t ? stat_read(&t->c.tx_frames) : stat_read(&r->c.rx_frames);
	d->bytes = t ? stat_read(&t->c.tx_bytes) : stat_read(&r->c.rx_bytes);
	for (unsigned k = 0; k < SW_TCS; k++) {
		/* the sender's pauses: a switch port's, or the NIC's port (PFC it honours) */
		d->paused_ns[k] = t ? pfc_paused_ns(&t->pause, k, now) : pfc_paused_ns(&run->pause[cl->b], k, now);
		d->marked += t ? stat_read(&t->c.ecn_marked[k]) : 0;
		d->xoff_sent[k] = r ? stat_read(&r->c.pfc_xoff_tx[k]) : 0;
		d->queue_bytes += t ? __atomic_load_n(&x.tx_sw->mmu.queue[t - x.tx_sw->port][k], __ATOMIC_RELAXED) : 0;
	}
	d->dropped = r ? drops_total(&r->c) : 0;
	d->rx_sw = r ? x.rx_sw : NULL;
	d->rx_port = r;
	d->cpu_lost_tsc = t ? stat_read(&t->c.cpu_lost_tsc) : snapshot_egress_cpu_lost(run, cl->b);
}

double fabric_link_utilization(uint64_t frames, uint64_t bytes, double secs, double gbps)
{
	return secs > 0 && gbps > 0 ? (double)(bytes + SW_WIRE_OVERHEAD * frames) * 8 / secs / (gbps * 1e9) : 0.0;
}

static json_t *direction_json(const struct run_view *run, unsigned l, bool a_to_b, double secs)
{
	double gbps = run->fab->cfg->links[l].gbps;
	struct fab_link_dir d;
	json_t *o;

	report_fabric_link_dir(run, l, a_to_b, run->end_tsc, &d);
	o = json_pack("{s:s,s:s,s:I,s:I,s:f,s:f,s:I}", "from", d.from, "to", d.to, "frames", (json_int_t)d.frames, "bytes",
		      (json_int_t)d.bytes, "gbps", secs > 0 ? (double)d.bytes * 8 / secs / 1e9 : 0.0, "utilization",
		      fabric_link_utilization(d.frames, d.bytes, secs, gbps), "ecn_marked", (json_int_t)d.marked);
	{ /* the utilisation's distribution over the sample intervals */
		const struct fab_link_samples *u = &run->fab->util[2 * l + (a_to_b ? 0 : 1)];
		int p95 = fabric_lab_util_percentile(u, 0.95);
		json_object_set_new(o, "utilization_p95", p95 < 0 ? json_null() : json_real(p95 / 100.0));
		json_object_set_new(o, "utilization_max", u->n ? json_real(u->max_pct / 100.0) : json_null());
		json_object_set_new(o, "samples", json_integer(u->n));
	}
	/* the share of the run the sender (a switch port, or a NIC's egress) could not send for its
	 * lcore (not the network) */
	json_object_set_new(o, "cpu_lost_share", json_real(secs > 0 ? (double)d.cpu_lost_tsc / (double)run->tsc_hz / secs : 0));
	json_object_set_new(o, "paused_ns", u64_array(d.paused_ns, SW_TCS));
	/* PFC the receiving switch sent back to stop this direction (a NIC's own PFC is in its port's report) */
	json_object_set_new(o, "pfc_xoff_sent", d.to_switch ? u64_array(d.xoff_sent, SW_TCS) : json_null());
	json_object_set_new(o, "dropped", d.to_switch ? json_integer((json_int_t)d.dropped) : json_null());
	json_object_set_new(o, "drops", d.to_switch ? drops_json(d.rx_sw, &d.rx_port->c) : json_null()); /* by reason */
	return o;
}

static json_t *link_json(const struct run_view *run, const struct fabric_lab *fl, unsigned l, double secs)
{
	const struct cfg_fab_link *cl = &fl->cfg->links[l];

	return json_pack("{s:s,s:s,s:s,s:s,s:f,s:o,s:o}", "name", cl->name, "tier", fabric_tier_name(cl->tier), "a",
			 fl->cfg->sw[cl->sw].name, "b", cl->to_nic ? run->cfg->ports[cl->b].name : fl->cfg->sw[cl->b].name,
			 "gbps", cl->gbps, "a_to_b", direction_json(run, l, true, secs), "b_to_a",
			 direction_json(run, l, false, secs));
}

static const char *prefix_str(const struct cfg_fab_route *e, char buf[24])
{
	snprintf(buf, 24, "%u.%u.%u.%u/%u", e->prefix >> 24, e->prefix >> 16 & 255, e->prefix >> 8 & 255, e->prefix & 255,
		 e->len);
	return buf;
}

/* Whether the run has a QP sending to destination QP dqpn at an address inside the route's
 * prefix: what tells a switch's (port, destination QP) entry of a data flow the route carried. */
static bool route_carries_qp(const struct run_view *run, const struct cfg_fab_route *e, uint32_t dqpn)
{
	uint32_t mask = e->len ? ~0u << (32 - e->len) : 0;

	for (unsigned q = 0; q < run->n_qps; q++) {
		const struct qp_tx *qp = &run->qps[q];
		if (qp->dest_qpn == dqpn && qp->group->ip_version == 4 && (wire_get32(qp->group->dst_ip) & mask) == e->prefix)
			return true;
	}
	return false;
}

/* How many of the run's data flows left by each member of route g (a flow sprayed counts on each
 * member it used; answers, CNPs and other switches' flows are not counted). */
static void flows_per_member(const struct run_view *run, const struct switch_rt *sw, const struct cfg_fab_route *e,
			     uint64_t flows[])
{
	for (unsigned m = 0; m < e->n; m++)
		flows[m] = 0;
	for (uint32_t i = 0; i < sw->flow_cap; i++) {
		const struct sw_flow *f = &sw->flows[i];
		if (!f->admitted)
			continue;
		for (unsigned m = 0; m < e->n; m++)
			if (f->out == e->ports[m] && route_carries_qp(run, e, f->dqpn))
				flows[m]++;
	}
}

/* Each route of more than one port: what each member carried, and how evenly. */
static void ecmp_groups_json(const struct run_view *run, const struct fabric_lab *fl, unsigned s, json_t *out)
{
	const struct cfg_fab_switch *c = &fl->cfg->sw[s];
	const struct switch_rt *sw = fl->sw[s];
	char buf[24];

	for (unsigned g = 0; g < c->n_routes; g++) {
		const struct cfg_fab_route *e = &c->routes[g];
		uint64_t bytes[CFG_FAB_MAX_SW_PORTS], frames[CFG_FAB_MAX_SW_PORTS], flows[CFG_FAB_MAX_SW_PORTS];
		double b[CFG_FAB_MAX_SW_PORTS], fw[CFG_FAB_MAX_SW_PORTS];
		json_t *members, *o;
		if (e->n < 2)
			continue;
		members = json_array();
		for (unsigned m = 0; m < e->n; m++) {
			bytes[m] = stat_read(&sw->route->load[g].bytes[m]);
			frames[m] = stat_read(&sw->route->load[g].frames[m]);
			json_array_append_new(members, json_string(sw->port[e->ports[m]].name));
		}
		flows_per_member(run, sw, e, flows);
		o = json_pack("{s:s,s:s,s:o,s:o,s:o,s:o}", "switch", c->name, "prefix", prefix_str(e, buf), "members",
			      members, "bytes", u64_array(bytes, e->n), "frames", u64_array(frames, e->n), "flows",
			      u64_array(flows, e->n));
		/* max over mean and Jain's index as roce-fabric computes them (fabric/fab_fluid.h) */
		for (unsigned m = 0; m < e->n; m++)
			b[m] = (double)bytes[m], fw[m] = (double)flows[m];
		json_object_set_new(o, "mmr", json_real(fab_mmr(b, e->n)));
		json_object_set_new(o, "mmr_flows", json_real(fab_mmr(fw, e->n)));
		json_object_set_new(o, "jfi", json_real(fab_jfi(b, e->n)));
		json_array_append_new(out, o);
	}
}

static const char *mac_str(const uint8_t m[6], char buf[18])
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}

/* The NICs: their ports' names, addresses and the switch each is cabled to. */
static json_t *nics_json(const struct run_view *run, const struct fabric_lab *fl)
{
	json_t *a = json_array();
	char mac[18], gw[18], ip[16];

	for (unsigned l = 0; l < fl->cfg->n_links; l++) {
		const struct cfg_fab_link *cl = &fl->cfg->links[l];
		const struct cfg_port *p = &run->cfg->ports[cl->b];
		if (!cl->to_nic)
			continue;
		snprintf(ip, sizeof(ip), "%u.%u.%u.%u", p->ipv4[0], p->ipv4[1], p->ipv4[2], p->ipv4[3]);
		unsigned n = cl->b - fl->cfg->first_port;
		json_array_append_new(a, json_pack("{s:s,s:s,s:i,s:s,s:s,s:s,s:s}", "name", p->name, "host",
			fl->cfg->nic[n].host, "rail", (int)fl->cfg->nic[n].rail, "mac", mac_str(p->mac, mac), "ipv4", ip, "switch", fl->cfg->sw[cl->sw].name,
			"gateway_mac", mac_str(fl->cfg->sw[cl->sw].ports[cl->port].mac, gw)));
	}
	return a;
}

static double since_start_s(const struct run_view *run, uint64_t tsc)
{
	return tsc > run->start_tsc ? (double)(tsc - run->start_tsc) / (double)run->tsc_hz : 0.0;
}

/* Deadlocks found: when, how long (until the run's end if still on), what was held and paused.
 * The switches are polled on while the run drains: a deadlock that ended then was on at the
 * run's end, and one found then is not the run's. */
static json_t *deadlocks_json(const struct run_view *run, const struct fabric_lab *fl)
{
	json_t *a = json_array();
	char name[2 * CFG_NAME_LEN + 16];

	for (unsigned i = 0; i < fl->n_deadlocks && i < FAB_MAX_DEADLOCKS; i++) {
		const struct fab_deadlock *d = &fl->deadlock[i];
		if (d->start_tsc >= run->end_tsc)
			continue;
		bool on_at_end = !d->end_tsc || d->end_tsc > run->end_tsc;
		uint64_t end = on_at_end ? run->end_tsc : d->end_tsc;
		json_t *q = json_array();
		for (unsigned k = 0; k < d->n_paused && k < FAB_DEADLOCK_QUEUES; k++) {
			const struct switch_rt *s = fl->sw[d->paused[k].sw];
			snprintf(name, sizeof(name), "%s:%s:tc%u", s->name, s->port[d->paused[k].port].name, d->paused[k].tc);
			json_array_append_new(q, json_string(name));
		}
		json_array_append_new(a, json_pack("{s:f,s:o,s:f,s:b,s:I,s:i,s:o}", "start_s", since_start_s(run, d->start_tsc),
			"end_s", on_at_end ? json_null() : json_real(since_start_s(run, d->end_tsc)), "duration_s",
			end > d->start_tsc ? (double)(end - d->start_tsc) / (double)run->tsc_hz : 0.0, "on_at_end", on_at_end,
			"bytes_held", (json_int_t)d->bytes_held, "paused_queues", (int)d->n_paused, "first_paused", q));
	}
	return a;
}

unsigned report_fabric_deadlocks(const struct run_view *run)
{
	const struct fabric_lab *fl = run->fab;
	unsigned n = 0, found = __atomic_load_n(&fl->n_deadlocks, __ATOMIC_ACQUIRE);

	for (unsigned i = 0; i < found; i++)
		n += i >= FAB_MAX_DEADLOCKS || !run->end_tsc || fl->deadlock[i].start_tsc < run->end_tsc;
	return n;
}

static bool in_range(uint32_t q, uint32_t first, uint32_t step, unsigned count)
{
	return q >= first && (q - first) % step == 0 && (q - first) / step < count;
}

static bool lost_in_group(const struct cfg_flow_group *fg, const struct sw_lost *l)
{
	for (unsigned i = 0; i < l->n; i++)
		if (in_range(l->qpn[i], fg->dest_qpn, fg->dest_qpn_step, fg->count) ||
		    in_range(l->qpn[i], fg->qpn, fg->qpn_step, fg->count))
			return true;
	return false;
}

/* The flow groups a lost frame's destination QP belongs to: its data (the destination QPs), or
 * the ACKs and CNPs back to its requesters (their QPs); as any lcore's switches noted them. */
static json_t *groups_hit(const struct run_view *run, const struct fabric_lab *fl, const struct fab_event_rt *ev)
{
	json_t *a = json_array();

	for (unsigned g = 0; g < run->cfg->n_groups; g++)
		for (unsigned p = 0; p < fl->n_parts; p++)
			if (lost_in_group(&run->cfg->groups[g], &ev->qps[p])) {
				json_array_append_new(a, json_string(run->cfg->groups[g].name));
				break;
			}
	return a;
}

static uint64_t lost_beyond_list(const struct fabric_lab *fl, const struct fab_event_rt *ev)
{
	uint64_t n = 0;

	for (unsigned p = 0; p < fl->n_parts; p++)
		n += ev->qps[p].more;
	return n;
}

/* Link events as they ran: when applied and converged, the frames lost and for how long. */
static json_t *events_json(const struct run_view *run, const struct fabric_lab *fl)
{
	json_t *a = json_array();

	unsigned n = __atomic_load_n(&fl->n_events, __ATOMIC_ACQUIRE);

	for (unsigned k = 0; k < n; k++) {
		const struct cfg_fab_event *e = &fl->ev[k];
		const struct fab_event_rt *ev = &fl->event[k];
		bool ran = k < fl->events_done;
		json_t *o = json_pack("{s:f,s:s,s:s,s:b,s:s}", "at_s", e->at_s, "link", fl->cfg->links[e->link].name, "state",
				      e->up ? "up" : "down", "applied", ran, "from", k < fl->cfg->n_events ? "config" : "command");
		if (ran) {
			json_object_set_new(o, "applied_s", json_real(since_start_s(run, ev->at_tsc)));
			json_object_set_new(o, "converged_s",
					    ev->converged_tsc ? json_real(since_start_s(run, ev->converged_tsc)) : json_null());
			json_object_set_new(o, "frames_lost", json_integer((json_int_t)ev->lost));
			json_object_set_new(o, "loss_duration_s", json_real(ev->lost && ev->last_loss_tsc > ev->at_tsc
				? (double)(ev->last_loss_tsc - ev->at_tsc) / (double)run->tsc_hz : 0.0));
			json_object_set_new(o, "flows_hit", groups_hit(run, fl, ev));
			json_object_set_new(o, "qps_hit_beyond_list", json_integer((json_int_t)lost_beyond_list(fl, ev)));
		}
		json_array_append_new(a, o);
	}
	return a;
}

#define MACHINE_LOST_SHARE 0.01   /* a link direction lost more of the run than this to its lcore */
#define MACHINE_TURN_SHARE 0.25   /* a loop turn's bytes on a link are more of the smallest ECN kmin
				   * or PFC xoff than this */

/* The smallest queue threshold that acts on switch s's frames (ECN kmin, PFC xoff), 0: none. */
static uint64_t smallest_threshold(const struct engine_config *cfg, unsigned s)
{
	const struct cfg_switch *t = config_fabric_switch(cfg, s);
	uint64_t least = t->pfc_priorities ? t->xoff_bytes : 0;

	for (unsigned tc = 0; tc < SW_TCS; tc++)
		if (t->has_red[tc] && t->red[tc].kmin_bytes && (!least || t->red[tc].kmin_bytes < least))
			least = t->red[tc].kmin_bytes;
	return least;
}

/* A poll-mode switch takes in what its ingress links carried since its lcore's last turn at
 * once, and its queues move in steps of a turn's bytes: where that step is a good part of the
 * thresholds that mark and pause, the marks and pauses are partly the poll's, not the network's.
 * The switch whose step is the largest share of its smallest threshold. */
static json_t *worst_turn_json(const struct run_view *run, const struct fabric_lab *fl, double secs)
{
	double worst = -1;
	json_t *o = json_null();

	for (unsigned s = 0; s < fl->n_switches; s++) {
		const struct cfg_fab_switch *c = &fl->cfg->sw[s];
		unsigned lcore = fl->part[fl->part_of[s]].lcore;
		uint64_t least = smallest_threshold(run->cfg, s);
		struct lcore_held_up h;
		double gbps = 0, turn_us, turn_bytes, busy_s;

		if (!least || !snapshot_lcore_held_up(run, lcore, &h) || !h.turns)
			continue;
		for (unsigned k = 0; k < c->n_ports; k++)
			gbps = c->ports[k].gbps > gbps ? c->ports[k].gbps : gbps;
		busy_s = secs - (double)h.tsc / (double)run->tsc_hz;
		turn_us = busy_s > 0 ? busy_s * 1e6 / (double)h.turns : 0;
		turn_bytes = turn_us * gbps * 1e3 / 8;
		if (turn_bytes / (double)least > worst) {
			worst = turn_bytes / (double)least;
			json_decref(o);
			o = json_pack("{s:s,s:i,s:f,s:f,s:f,s:f,s:f}", "switch", c->name, "lcore", (int)lcore, "loop_turn_us",
				      turn_us, "link_gbps", gbps, "turn_kb", turn_bytes / 1024, "threshold_kb",
				      (double)least / 1024, "share", worst);
		}
	}
	return o;
}

/* What the machine took from the fabric, and whether a rate or a queue may be the CPU's, not the
 * network's (docs/fabric.md, "The machine's share"): the worst link direction's time lost to its
 * lcore (over 1 % of the run), or the switch whose loop turn carries the largest share of its
 * thresholds (over a quarter). Results should then be read with it. */
static json_t *machine_json(const struct run_view *run, const struct fabric_lab *fl, double secs)
{
	double worst = 0, turn_share;
	const char *where = NULL;
	static char buf[2 * CFG_NAME_LEN + 8];
	json_t *turn = worst_turn_json(run, fl, secs), *why = json_array();

	for (unsigned l = 0; secs > 0 && l < fl->cfg->n_links; l++)
		for (int ab = 1; ab >= 0; ab--) {
			struct fab_link_dir d;
			double share;
			report_fabric_link_dir(run, l, ab, run->end_tsc, &d);
			share = (double)d.cpu_lost_tsc / (double)run->tsc_hz / secs;
			if (share > worst) {
				worst = share;
				snprintf(buf, sizeof(buf), "%s:%s", d.from, d.to);
				where = buf;
			}
		}
	turn_share = json_is_object(turn) ? json_real_value(json_object_get(turn, "share")) : 0;
	if (worst > MACHINE_LOST_SHARE)
		json_array_append_new(why, json_string("cpu_lost"));
	if (turn_share > MACHINE_TURN_SHARE)
		json_array_append_new(why, json_string("loop_turn"));
	return json_pack("{s:f,s:s?,s:o,s:b,s:o}", "worst_cpu_lost_share", worst, "worst_port", where, "worst_turn", turn,
			 "machine_limited", json_array_size(why) > 0, "limited_by", why);
}

/* fabric.external's link events: each command, when it started (from the traffic's start) and
 * how it ended. */
static json_t *external_events_json(const struct run_view *run)
{
	const struct cfg_fabric *fb = &run->cfg->fab;
	json_t *a = json_array();

	for (unsigned k = 0; k < fb->n_events; k++) {
		const struct link_command_rt *c = &run->link_cmd[k];
		json_t *o = json_pack("{s:f,s:s,s:s,s:s,s:b}", "at_s", fb->events[k].at_s, "link", fb->events[k].link_name,
				      "state", fb->events[k].up ? "up" : "down", "command", fb->events[k].command, "applied",
				      c->started && !c->spawn_errno);
		if (c->started) {
			json_object_set_new(o, "applied_s", json_real(since_start_s(run, c->started_tsc)));
			json_object_set_new(o, "exit_status", c->ended ? json_integer(c->status) : json_null());
			json_object_set_new(o, "command_ms", c->ended ? json_real((double)(c->ended_tsc - c->started_tsc) * 1e3 /
										  (double)run->tsc_hz) : json_null());
		}
		if (c->spawn_errno)
			json_object_set_new(o, "error", json_string(strerror(c->spawn_errno)));
		json_array_append_new(a, o);
	}
	return a;
}

/* One counter's difference, after less before: null where it went backwards (a reset or a wrap),
 * as read where it was missing before. Integers exactly (a byte counter passes 2^53 on a long run
 * at 400G). */
static json_t *counter_diff(const json_t *v, const json_t *was)
{
	bool whole = json_is_integer(v) && (!was || json_is_integer(was));
	json_int_t di = json_integer_value(v) - json_integer_value(was);
	double dd = json_number_value(v) - json_number_value(was);

	return (whole ? di < 0 : dd < 0) ? json_null() : json_integer(whole ? di : (json_int_t)dd);
}

/* A counter per priority (a list of numbers, PFC's): each element's difference. */
static json_t *counter_list_diff(const json_t *v, const json_t *was)
{
	json_t *a = json_array(), *e;
	size_t i;

	json_array_foreach(v, i, e)
		json_array_append_new(a, json_is_number(e) ? counter_diff(e, json_array_get(was, i)) : json_null());
	return a;
}

/* counters_command's links: each direction's every numeric counter (or list of them, one per
 * priority) after the run less before it (a link or counter missing before: as read). */
static json_t *dut_links_json(const struct run_view *run)
{
	json_t *out = json_array(), *l, *b;
	size_t i, k;

	json_array_foreach(run->dut_links[1], i, l) {
		json_t *o = json_pack("{s:O*}", "name", json_object_get(l, "name"));
		const json_t *before = NULL;
		json_array_foreach(run->dut_links[0], k, b)
			if (json_equal(json_object_get(b, "name"), json_object_get(l, "name")))
				before = b;
		for (unsigned d = 0; d < 2; d++) {
			const char *dir = d ? "b_to_a" : "a_to_b";
			json_t *diff = json_object(), *v;
			const char *key;
			json_object_foreach(json_object_get(l, dir), key, v) {
				const json_t *was = json_object_get(json_object_get(before, dir), key);
				if (json_is_number(v))
					json_object_set_new(diff, key, counter_diff(v, was));
				else if (json_is_array(v))
					json_object_set_new(diff, key, counter_list_diff(v, json_is_array(was) ? was : NULL));
			}
			json_object_set_new(o, dir, diff);
		}
		json_array_append_new(out, o);
	}
	return out;
}

/* fabric.external: the NICs on their devices; the switches are outside, their counters the DUT's. */
json_t *report_fabric_external_json(const struct run_view *run)
{
	const struct cfg_fabric *fb = &run->cfg->fab;
	json_t *a = json_array();
	char mac[18], gw[18], ip[16];

	for (unsigned n = 0; n < fb->n_nics; n++) {
		const struct cfg_port *p = &run->cfg->ports[fb->first_port + n];
		snprintf(ip, sizeof(ip), "%u.%u.%u.%u", p->ipv4[0], p->ipv4[1], p->ipv4[2], p->ipv4[3]);
		json_array_append_new(a, json_pack("{s:s,s:s,s:i,s:s,s:s,s:s,s:o}", "name", p->name, "host", fb->nic[n].host,
						   "rail", (int)fb->nic[n].rail, "mac", mac_str(p->mac, mac), "ipv4", ip,
						   "device", p->device, "gateway_mac",
						   fb->bridged ? json_null() : json_string(mac_str(fb->nic[n].gateway_mac, gw))));
	}
	json_t *o = json_pack("{s:s,s:b,s:b,s:o,s:o}", "kind", fabric_kind_name(fb->kind), "external", 1, "bridged",
			      fb->bridged, "nics", a, "events", external_events_json(run));

	if (fb->counters_command[0]) {
		json_object_set_new(o, "counters_command", json_pack("{s:s,s:s*}", "command", fb->counters_command, "error",
								     run->dut_error[0] ? run->dut_error : NULL));
		if (run->dut_links[0] && run->dut_links[1])
			json_object_set_new(o, "links", dut_links_json(run));
	}
	return o;
}

json_t *report_fabric_json(const struct run_view *run, double secs)
{
	const struct fabric_lab *fl = run->fab;
	json_t *switches = json_array(), *links = json_array(), *groups = json_array();

	for (unsigned s = 0; s < fl->n_switches; s++) {
		json_t *o = report_switch_json(run, fl->sw[s]);
		json_object_set_new(o, "name", json_string(fl->sw[s]->name));
		json_object_set_new(o, "tier", json_string(fabric_tier_name(fl->cfg->sw[s].tier)));
		json_object_set_new(o, "lcore", json_integer(fl->part[fl->part_of[s]].lcore));
		json_object_set_new(o, "load_balance", json_string(fabric_lb_name(fl->cfg->sw[s].lb.lb)));
		json_object_set_new(o, "flowlets", json_integer((json_int_t)fl->sw[s]->route->st.flowlets));
		json_array_append_new(switches, o);
		ecmp_groups_json(run, fl, s, groups);
	}
	for (unsigned l = 0; l < fl->cfg->n_links; l++)
		json_array_append_new(links, link_json(run, fl, l, secs));
	json_t *lcores = json_array();
	for (unsigned p = 0; p < fl->n_parts; p++)
		json_array_append_new(lcores, json_integer(fl->part[p].lcore));
	return json_pack("{s:s,s:i,s:o,s:o,s:o,s:o,s:o,s:I,s:f,s:i,s:o,s:o,s:f,s:f,s:o}", "kind", fabric_kind_name(fl->cfg->kind), "lcore",
			 (int)fl->part[0].lcore, "lcores", lcores, "nics", nics_json(run, fl), "switches", switches, "links", links, "ecmp_groups",
			 groups, "in_flight_at_end", (json_int_t)fl->in_flight_at_end, "deadlock_ms", fl->cfg->deadlock_ms,
			 "deadlocks_found", (int)report_fabric_deadlocks(run), "deadlocks", deadlocks_json(run, fl), "events",
			 events_json(run, fl), "convergence_ms", fl->cfg->convergence_ms, "sample_ms", fl->cfg->sample_ms,
			 "machine", machine_json(run, fl, secs));
}

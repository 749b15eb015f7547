/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The lcores' work areas as telemetry reads them: this is the only telemetry code that walks
 * them. Counters have one writer each (the lcore that owns them); these are relaxed reads, so a
 * figure may be a burst behind the others.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "egress.h"
#include "snapshot.h"
#include "switch.h"

void snapshot_port_totals(const struct run_view *run, unsigned port, struct port_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (unsigned q = 0; q < run->n_qps; q++) {
		if (run->qps[q].port != port)
			continue;
		t->tx_packets += stat_read(&run->qps[q].c.tx_packets);
		t->tx_bytes += stat_read(&run->qps[q].c.tx_bytes);
	}
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		const struct lcore_work *w = run->work[l];
		if (!w)
			continue;
		for (unsigned i = 0; i < w->n_tx; i++) {
			if (w->tx[i].port != port)
				continue;
			t->mbuf_alloc_fail += stat_read(&w->tx[i].mbuf_alloc_fail);
			t->tx_ring_full += stat_read(&w->tx[i].tx_ring_full);
			t->tx_unsent += stat_read(&w->tx[i].tx_unsent);
			if (w->tx[i].gen) { /* PFC/PAUSE frames it generated */
				uint64_t n = stat_read(&w->tx[i].gen->sent);
				t->tx_packets += n;
				t->tx_bytes += n * w->tx[i].gen->len;
			}
		}
		for (unsigned i = 0; i < w->n_reflect; i++) {
			if (w->reflect[i].port != port)
				continue;
			t->reflected += stat_read(&w->reflect[i].reflected);
			t->reflect_dropped += stat_read(&w->reflect[i].dropped);
		}
		if (w->rx_ctx)
			stat_sum((uint64_t *)&t->rx, (const uint64_t *)rx_port_counters(w->rx_ctx, (uint16_t)port),
				 sizeof(t->rx) / sizeof(uint64_t));
		/* RC answers (ACKs, NAKs, READ responses) sent from this lcore */
		t->tx_packets += stat_read(&w->resp[port].tx_packets);
		t->tx_bytes += stat_read(&w->resp[port].tx_bytes);
	}
	t->rx_frames = t->rx.frames;
	t->rx_bytes = t->rx.bytes;
	t->rx_malformed = t->rx.kind[WIRE_KIND_MALFORMED];
	if (run->sw && run->sw->port_of_cfg[port] >= 0) { /* a port of the lab's switch: its own counts */
		const struct sw_port_counters *c = &run->sw->port[run->sw->port_of_cfg[port]].c;
		t->tx_packets = stat_read(&c->tx_frames);
		t->tx_bytes = stat_read(&c->tx_bytes);
		t->rx_frames = stat_read(&c->rx_frames);
		t->rx_bytes = stat_read(&c->rx_bytes);
	}
}

bool snapshot_rx_qp(const struct run_view *run, unsigned port, uint32_t qpn, struct rx_qp_counters *out)
{
	bool found = false;

	memset(out, 0, sizeof(*out));
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		const struct rx_qp *q;
		if (!run->work[l] || !run->work[l]->rx_ctx)
			continue;
		q = rx_qp_find(run->work[l]->rx_ctx, (uint16_t)port, qpn);
		if (!q)
			continue;
		found = true;
		stat_sum((uint64_t *)out, (const uint64_t *)&q->c, sizeof(*out) / sizeof(uint64_t));
	}
	return found;
}

/* A port's statistics are those of its receiver QPs (one-way) or its ping-pong QPs (round
 * trips), merged: each packet is recorded once, in its QP's histogram. */
uint64_t snapshot_lat_port(const struct run_view *run, unsigned port, enum lat_kind kind, struct lat_stats *out)
{
	lat_stats_init(out);
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		const struct lat_rx *lr = run->work[l] ? run->work[l]->lat : NULL;
		unsigned used;

		if (!lr)
			continue;
		if (kind == LAT_RTT) {
			for (unsigned q = 0; q < run->n_qps; q++)
				if (run->qps[q].port == port && run->qps[q].lat && run->qps[q].lat->pp >= 0)
					lat_stats_merge(out, &lr->rtt[run->qps[q].lat->pp]);
			continue;
		}
		used = __atomic_load_n(&lr->used_slots, __ATOMIC_ACQUIRE);
		for (unsigned s = 0; s < used; s++)
			if (lr->slot_port[s] == port)
				lat_stats_merge(out, &lr->slots[s]);
		lat_stats_merge(out, &lr->no_slot[port]);
	}
	return out->h.count;
}

uint64_t snapshot_lat_rx_qp(const struct run_view *run, unsigned port, uint32_t qpn, struct lat_stats *out)
{
	lat_stats_init(out);
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		const struct lat_rx *lr = run->work[l] ? run->work[l]->lat : NULL;
		const struct rx_qp *q = lr ? rx_qp_find(run->work[l]->rx_ctx, (uint16_t)port, qpn) : NULL;
		uint32_t slot = q ? __atomic_load_n(&q->lat_slot, __ATOMIC_RELAXED) : 0;
		if (slot)
			lat_stats_merge(out, &lr->slots[slot - 1]);
	}
	return out->h.count;
}

uint64_t snapshot_lat_flow(const struct run_view *run, const struct qp_tx *qp, enum lat_kind kind,
			   struct lat_stats *out)
{
	int dst;

	lat_stats_init(out);
	if (!qp->lat)
		return 0;
	switch (kind) {
	case LAT_ONEWAY:
		dst = snapshot_flow_dst_port(run, qp->group);
		return dst < 0 ? 0 : snapshot_lat_rx_qp(run, (unsigned)dst, qp->dest_qpn, out);
	case LAT_RTT:
		for (unsigned l = 0; qp->lat->pp >= 0 && l < RTE_MAX_LCORE; l++)
			if (run->work[l] && run->work[l]->lat)
				lat_stats_merge(out, &run->work[l]->lat->rtt[qp->lat->pp]);
		return out->h.count;
	case LAT_ACK:
	default:
		if (qp->lat->ack)
			lat_stats_merge(out, qp->lat->ack);
		return out->h.count;
	}
}

void snapshot_ecn_ce_per_port(const struct run_view *run, uint64_t out[CFG_MAX_PORTS])
{
	memset(out, 0, sizeof(uint64_t) * CFG_MAX_PORTS);
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		const struct rx_ctx *ctx = run->work[l] ? run->work[l]->rx_ctx : NULL;
		for (unsigned i = 0, n = ctx ? rx_qp_count(ctx) : 0; i < n; i++) {
			const struct rx_qp *q = rx_qp_at(ctx, i);
			if (q && q->port < run->n_ports)
				out[q->port] += stat_read(&q->c.ecn_ce);
		}
	}
}

void snapshot_port_pfc(const struct run_view *run, unsigned port, uint64_t now_tsc, struct port_pfc *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < run->cfg->n_pfc_generators; i++) {
		const struct pfc_gen *g = &run->pfc_gen[i];
		uint64_t sent = stat_read(&g->sent);
		if (run->cfg->pfc_generators[i].port != port)
			continue;
		out->generator_frames += sent;
		if (g->pause)
			out->pause_tx += sent;
		for (unsigned k = 0; !g->pause && k < 8; k++)
			if (g->class_enable >> k & 1)
				out->pfc_tx[k] += sent;
	}
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) /* threshold XOFF/XON frames */
		for (unsigned k = 0; run->work[l] && k < 8; k++)
			out->pfc_tx[k] += stat_read(&run->work[l]->pfc_tx[port][k]);
	for (unsigned k = 0; k < 8; k++)
		out->paused_ns[k] = pfc_paused_ns(&run->pause[port], k, now_tsc);
}

int snapshot_flow_dst_port(const struct run_view *run, const struct cfg_flow_group *g)
{
	if (g->has_dst_port)
		return (int)g->dst_port;
	return snapshot_local_port_of_mac(run, g->dst_mac);
}

int snapshot_local_port_of_mac(const struct run_view *run, const uint8_t mac[6])
{
	for (unsigned p = 0; p < run->n_ports; p++)
		if (!memcmp(run->ports[p].mac, mac, 6))
			return (int)p;
	return -1;
}


uint64_t snapshot_responses_dropped(const struct run_view *run, unsigned port)
{
	uint64_t n = 0;

	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		if (run->work[l])
			n += stat_read(&run->work[l]->resp[port].dropped);
	return n;
}

void snapshot_egress_classes(const struct run_view *run, unsigned port, uint64_t bytes[8], uint64_t packets[8])
{
	memset(bytes, 0, 8 * sizeof(uint64_t));
	memset(packets, 0, 8 * sizeof(uint64_t));
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		for (unsigned i = 0; run->work[l] && i < run->work[l]->n_tx; i++) {
			const struct tx_role *r = &run->work[l]->tx[i];
			for (unsigned c = 0; r->port == port && r->egress && c < 8; c++) {
				bytes[c] += stat_read(&r->egress->tc[c].bytes);
				packets[c] += stat_read(&r->egress->tc[c].packets);
			}
		}
}

uint64_t snapshot_cc_trace_dropped(const struct run_view *run)
{
	uint64_t dropped = 0;

	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		if (run->work[l] && run->work[l]->cc && run->work[l]->cc->trace)
			dropped += __atomic_load_n(&run->work[l]->cc->trace->dropped, __ATOMIC_RELAXED);
	return dropped;
}

bool snapshot_lcore_held_up(const struct run_view *run, unsigned l, struct lcore_held_up *out)
{
	const struct lcore_work *w = run->work[l];

	if (!w)
		return false;
	out->tsc = stat_read(&w->held_up_tsc);
	out->times = stat_read(&w->held_up_times);
	out->max_tsc = stat_read(&w->held_up_max_tsc);
	out->turns = stat_read(&w->turns);
	return true;
}

const struct rx_qp *snapshot_rx_qp_next(const struct run_view *run, struct lcore_walk *at)
{
	for (; at->lcore < RTE_MAX_LCORE; at->lcore++, at->i = 0) {
		const struct rx_ctx *ctx = run->work[at->lcore] ? run->work[at->lcore]->rx_ctx : NULL;
		while (ctx && at->i < rx_qp_count(ctx)) {
			const struct rx_qp *q = rx_qp_at(ctx, at->i++);
			if (q)
				return q;
		}
	}
	return NULL;
}

/* The next TX role of the lcores' (on `port`, or any when port is CFG_MAX_PORTS), NULL after the last. */
static struct tx_role *next_tx_role(const struct run_view *run, unsigned port, struct lcore_walk *at)
{
	for (; at->lcore < RTE_MAX_LCORE; at->lcore++, at->i = 0) {
		struct lcore_work *w = run->work[at->lcore];
		while (w && at->i < w->n_tx) {
			struct tx_role *r = &w->tx[at->i++];
			if (port == CFG_MAX_PORTS || r->port == port)
				return r;
		}
	}
	return NULL;
}

struct rte_mempool *snapshot_tx_pool_next(const struct run_view *run, struct lcore_walk *at, unsigned *port)
{
	struct tx_role *r = next_tx_role(run, CFG_MAX_PORTS, at);

	if (!r)
		return NULL;
	*port = r->port;
	return r->pool;
}

struct egress *snapshot_egress_next(const struct run_view *run, unsigned port, struct lcore_walk *at)
{
	struct tx_role *r;

	while ((r = next_tx_role(run, port, at)) != NULL)
		if (r->egress)
			return r->egress;
	return NULL;
}

uint64_t snapshot_egress_cpu_lost(const struct run_view *run, unsigned port)
{
	uint64_t tsc = 0;
	struct egress *eg;

	for (struct lcore_walk at = {0}; (eg = snapshot_egress_next(run, port, &at)) != NULL;)
		tsc += stat_read(&eg->cpu_lost_tsc);
	return tsc;
}

long snapshot_resident_bytes(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * sysconf(_SC_PAGESIZE);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Totals over lcores, live lines and the final summary. Counters have one writer each (the
 * lcore that owns them); the main lcore reads them relaxed, so a line may be a burst behind.
 */
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "capture.h"
#include "stats.h"
#include "switch.h"

void stats_port_totals(const struct run_view *run, unsigned port, struct port_totals *t)
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

bool stats_rx_qp(const struct run_view *run, unsigned port, uint32_t qpn, struct rx_qp_counters *out)
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
uint64_t stats_lat_port(const struct run_view *run, unsigned port, enum lat_kind kind, struct lat_stats *out)
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

uint64_t stats_lat_rx_qp(const struct run_view *run, unsigned port, uint32_t qpn, struct lat_stats *out)
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

uint64_t stats_lat_flow(const struct run_view *run, const struct qp_tx *qp, enum lat_kind kind, struct lat_stats *out)
{
	int dst;

	lat_stats_init(out);
	if (!qp->lat)
		return 0;
	switch (kind) {
	case LAT_ONEWAY:
		dst = stats_local_port_of_mac(run, qp->group->dst_mac);
		return dst < 0 ? 0 : stats_lat_rx_qp(run, (unsigned)dst, qp->dest_qpn, out);
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

void stats_capture_pmd(struct run_view *run)
{
	static struct rte_eth_xstat xs[ENGINE_MAX_XSTATS];

	for (unsigned p = 0; p < run->n_ports; p++) {
		uint16_t id = run->ports[p].port_id;
		int n = rte_eth_xstats_get(id, xs, ENGINE_MAX_XSTATS);

		rte_eth_stats_get(id, &run->hw[p]);
		run->n_xstats[p] = 0;
		if (n <= 0 || n > ENGINE_MAX_XSTATS ||
		    rte_eth_xstats_get_names(id, run->xstat_names[p], ENGINE_MAX_XSTATS) != n)
			continue;
		for (int i = 0; i < n; i++)
			run->xstat_values[p][xs[i].id] = xs[i].value;
		run->n_xstats[p] = (unsigned)n;
	}
	run->pmd_captured = true;
}

void stats_port_hw(const struct run_view *run, unsigned port, struct rte_eth_stats *hw)
{
	if (run->pmd_captured)
		*hw = run->hw[port];
	else if (rte_eth_stats_get(run->ports[port].port_id, hw))
		memset(hw, 0, sizeof(*hw));
}

void stats_ecn_ce_per_port(const struct run_view *run, uint64_t out[CFG_MAX_PORTS])
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

void stats_port_pfc(const struct run_view *run, unsigned port, uint64_t now_tsc, struct port_pfc *out)
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

int stats_local_port_of_mac(const struct run_view *run, const uint8_t mac[6])
{
	for (unsigned p = 0; p < run->n_ports; p++)
		if (!memcmp(run->ports[p].mac, mac, 6))
			return (int)p;
	return -1;
}

static double per_s(uint64_t now, uint64_t before, double dt) { return dt > 0 ? (double)(now - before) / dt : 0; }

/* " | KIND p50 X us p99 Y us (N)" for the samples of `now` since `before`, which becomes `now`. */
static size_t interval_text(struct lat_stats *before, const struct lat_stats *now, enum lat_kind kind, char *out,
			    size_t len)
{
	static struct hist iv;

	lat_hist_interval(&iv, &now->h, &before->h);
	*before = *now;
	if (iv.count == 0 || len == 0)
		return 0;
	return (size_t)snprintf(out, len, " | %s p50 %.3f us p99 %.3f us (%llu)", lat_kind_name[kind],
				(double)hist_percentile(&iv, 50) / 1e3, (double)hist_percentile(&iv, 99) / 1e3,
				(unsigned long long)iv.count);
}

/* The port's latency since the previous line (one-way and round trips), as " | ..." text. */
static void latency_since(const struct run_view *run, unsigned p, char *out, size_t len)
{
	static struct lat_stats now;
	size_t used = 0;

	out[0] = 0;
	for (int k = 0; run->lat_live && k < 2 && used < len; k++) {
		enum lat_kind kind = k ? LAT_RTT : LAT_ONEWAY;

		stats_lat_port(run, p, kind, &now);
		used += interval_text(&run->lat_live[p * 2 + k], &now, kind, out + used, len - used);
	}
}

/* A line for each of the first latency QPs that measured something in the interval. */
static void flow_latency_lines(const struct run_view *run, double t_s)
{
	static struct lat_stats now;
	char text[256];

	for (unsigned q = 0, shown = 0; run->lat_live_qp && q < run->n_qps && shown < ENGINE_LIVE_LAT_QPS; q++) {
		const struct qp_tx *qp = &run->qps[q];
		size_t used = 0;

		if (!qp->lat)
			continue;
		for (int k = 0; k < LAT_KIND_COUNT && used < sizeof(text); k++) {
			stats_lat_flow(run, qp, (enum lat_kind)k, &now);
			used += interval_text(&run->lat_live_qp[shown * LAT_KIND_COUNT + (unsigned)k], &now, (enum lat_kind)k,
					      text + used, sizeof(text) - used);
		}
		shown++;
		if (used)
			printf("[%7.1fs] flow %s[%u]%s\n", t_s, qp->group->name, qp->index, text);
	}
}

/* " | drops ..." for what went wrong in the interval: frames the PMD refused (tx_queue_full:
 * bursts, kept and retried), TX bursts without mbufs, the PMD's missed and no-mbuf RX drops;
 * " | capture dropped N" for copies of the port's frames the capture could not keep; and
 * " | link down" while it is. Nothing when all is well. */
static void trouble_since(const struct run_view *run, unsigned p, const struct port_totals *t, const struct rte_eth_stats *hw,
			  uint64_t cap_dropped, const struct live_prev *prev, char *out, size_t len)
{
	uint64_t full = t->tx_ring_full - prev->t.tx_ring_full, nombuf = t->mbuf_alloc_fail - prev->t.mbuf_alloc_fail;
	uint64_t missed = hw->imissed - prev->imissed, rx_nombuf = hw->rx_nombuf - prev->rx_nombuf;
	size_t used = 0;

	out[0] = 0;
	if (full | nombuf | missed | rx_nombuf)
		used = (size_t)snprintf(out, len, " | drops: tx_queue_full %llu, mbuf_alloc_failures %llu, imissed %llu, "
					"rx_nombuf %llu", (unsigned long long)full, (unsigned long long)nombuf,
					(unsigned long long)missed, (unsigned long long)rx_nombuf);
	if (cap_dropped != prev->capture_dropped && used < len)
		used += (size_t)snprintf(out + used, len - used, " | capture dropped %llu",
					 (unsigned long long)(cap_dropped - prev->capture_dropped));
	if (run->link[p].state == 0 && used < len)
		snprintf(out + used, len - used, " | link down");
}

void stats_print_interval(const struct run_view *run, double t_s, double dt_s, struct live_prev *prev)
{
	char lat[160], trouble[192];

	for (unsigned p = 0; p < run->n_ports; p++) {
		uint64_t cap_dropped = capture_dropped_on(run, run->ports[p].port_id);
		struct port_totals t;
		struct rte_eth_stats hw;

		stats_port_totals(run, p, &t);
		stats_port_hw(run, p, &hw);
		latency_since(run, p, lat, sizeof(lat));
		trouble_since(run, p, &t, &hw, cap_dropped, &prev[p], trouble, sizeof(trouble));
		printf("[%7.1fs] %-8s tx %8.3f Mpps %8.3f Gb/s | rx %8.3f Mpps %8.3f Gb/s | malformed %llu%s%s\n", t_s,
		       run->ports[p].name, per_s(t.tx_packets, prev[p].t.tx_packets, dt_s) / 1e6,
		       per_s(t.tx_bytes, prev[p].t.tx_bytes, dt_s) * 8 / 1e9, per_s(t.rx_frames, prev[p].t.rx_frames, dt_s) / 1e6,
		       per_s(t.rx_bytes, prev[p].t.rx_bytes, dt_s) * 8 / 1e9, (unsigned long long)t.rx_malformed, lat, trouble);
		prev[p].t = t;
		prev[p].imissed = hw.imissed;
		prev[p].rx_nombuf = hw.rx_nombuf;
		prev[p].capture_dropped = cap_dropped;
	}
	flow_latency_lines(run, t_s);
	fflush(stdout);
}

/* A worker lcore held up for more than 1 % of the run (datapath/lcore.h) made less than it was
 * asked: paced QPs lost what they could not catch up (more than 10 ms behind), shapers and the
 * lab's emulated links the whole time. Said where a reader of the figures looks. */
static void held_up_lines(const struct run_view *run, double secs)
{
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		const struct lcore_work *w = run->work[l];
		double held = w ? (double)stat_read(&w->held_up_tsc) / (double)run->tsc_hz : 0;

		if (!w || held <= 0.01 * secs)
			continue;
		printf("summary: lcore %u held up %llu times, %.3f s in all (longest %.1f ms) of %.3f s: other work "
		       "shares its CPU; rates, shapers and the lab's links lost that time\n",
		       l, (unsigned long long)stat_read(&w->held_up_times), held,
		       (double)stat_read(&w->held_up_max_tsc) * 1e3 / (double)run->tsc_hz, secs);
	}
}

/* The capture's line: frames written, copies dropped (per port when some were) and, then, what
 * keeps a capture up with the run. */
static void capture_summary(const struct run_view *run)
{
	char every[48] = "", ports[256] = "";
	size_t used = 0;

	if (!run->cfg->capture[0])
		return;
	if (run->cfg->capture_every > 1)
		snprintf(every, sizeof(every), " (one in %u per port and direction)", run->cfg->capture_every);
	for (unsigned p = 0; run->capture_dropped && p < run->n_ports && used < sizeof(ports); p++) {
		uint64_t n = capture_dropped_on(run, run->ports[p].port_id);
		if (n)
			used += (size_t)snprintf(ports + used, sizeof(ports) - used, "%s%s %llu", used ? ", " : " (port ",
						 run->ports[p].name, (unsigned long long)n);
	}
	if (used && used < sizeof(ports))
		snprintf(ports + used, sizeof(ports) - used, ")");
	printf("summary: capture %s: %llu frames written%s, %llu dropped%s", run->cfg->capture,
	       (unsigned long long)run->capture_written, every, (unsigned long long)run->capture_dropped, ports);
	if (run->capture_write_errors)
		printf(", %llu lost to write errors", (unsigned long long)run->capture_write_errors);
	printf("\n");
	if (run->capture_dropped)
		printf("summary: capture did not keep up: capture fewer frames or bytes (run.capture_every, "
		       "capture_snaplen, capture_ports; docs/monitoring.md, Captures)\n");
}

void stats_print_summary(const struct run_view *run)
{
	double secs = (double)(run->end_tsc - run->start_tsc) / (double)run->tsc_hz;
	uint64_t msgs = 0, lost = 0, ooo = 0, dup = 0;

	for (unsigned q = 0; q < run->n_qps; q++)
		msgs += stat_read(&run->qps[q].c.messages);
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		if (!run->work[l] || !run->work[l]->rx_ctx)
			continue;
		for (unsigned i = 0; i < rx_qp_count(run->work[l]->rx_ctx); i++) {
			const struct rx_qp *q = rx_qp_at(run->work[l]->rx_ctx, i);
			if (!q)
				continue;
			lost += q->c.lost;
			ooo += q->c.out_of_order;
			dup += q->c.duplicates;
		}
	}
	printf("summary: %.3f s (stopped by %s), %u QPs, %llu messages sent; receivers: lost %llu, out of order %llu, "
	       "duplicates %llu\n",
	       secs, run->stopped_by ? run->stopped_by : "?", run->n_qps, (unsigned long long)msgs, (unsigned long long)lost,
	       (unsigned long long)ooo, (unsigned long long)dup);
	held_up_lines(run, secs);
	for (unsigned p = 0; p < run->n_ports; p++) {
		struct port_totals t;
		stats_port_totals(run, p, &t);
		printf("summary: port %-8s tx %llu frames %llu bytes (%.3f Gb/s) | rx %llu frames %llu bytes | malformed "
		       "%llu | mbufs not returned %u\n",
		       run->ports[p].name, (unsigned long long)t.tx_packets, (unsigned long long)t.tx_bytes,
		       secs > 0 ? (double)t.tx_bytes * 8 / secs / 1e9 : 0, (unsigned long long)t.rx_frames,
		       (unsigned long long)t.rx_bytes, (unsigned long long)t.rx_malformed, run->pool_in_use_at_exit[p]);
		{
			struct rte_eth_stats hw;
			stats_port_hw(run, p, &hw);
			if (t.tx_ring_full || t.mbuf_alloc_fail || t.tx_unsent || hw.imissed || hw.rx_nombuf)
				printf("summary: port %-8s drops: tx_queue_full %llu, mbuf_alloc_failures %llu, tx_unsent %llu, "
				       "imissed %llu, rx_nombuf %llu\n",
				       run->ports[p].name, (unsigned long long)t.tx_ring_full, (unsigned long long)t.mbuf_alloc_fail,
				       (unsigned long long)t.tx_unsent, (unsigned long long)hw.imissed,
				       (unsigned long long)hw.rx_nombuf);
		}
		if (run->link[p].changes || run->link[p].state == 0)
			printf("summary: port %-8s link: %llu changes, down %.3f s in all, %s at the end\n", run->ports[p].name,
			       (unsigned long long)run->link[p].changes, (double)run->link[p].down_tsc / (double)run->tsc_hz,
			       run->link[p].state == 0 ? "down" : "up");
		if (t.reflected || t.reflect_dropped)
			printf("summary: port %-8s reflected %llu frames, %llu refused by the PMD\n", run->ports[p].name,
			       (unsigned long long)t.reflected, (unsigned long long)t.reflect_dropped);
		for (int k = 0; run->lat_live && k < 2; k++) {
			static struct lat_stats l;
			struct hist_summary h;
			enum lat_kind kind = k ? LAT_RTT : LAT_ONEWAY;

			if (!stats_lat_port(run, p, kind, &l))
				continue;
			hist_summarize(&l.h, &h);
			printf("summary: port %-8s %s latency: %llu samples, min %.3f us, p50 %.3f us, p99 %.3f us, "
			       "p99.9 %.3f us, max %.3f us, jitter %.3f us\n",
			       run->ports[p].name, lat_kind_name[kind], (unsigned long long)h.count, (double)h.min / 1e3,
			       (double)h.p50 / 1e3, (double)h.p99 / 1e3, (double)h.p999 / 1e3, (double)h.max / 1e3,
			       (double)l.jitter16 / 16e3);
		}
	}
	capture_summary(run);
}

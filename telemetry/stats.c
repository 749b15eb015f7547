/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The PMDs' counters, live lines and the final summary, from what snapshot.h reads of the lcores
 * (relaxed reads of single-writer counters: a line may be a burst behind).
 */
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "capture.h"
#include "stats.h"
#include "switch.h"

void stats_capture_pmd(struct run_view *run)
{
	static struct rte_eth_xstat xs[RUN_MAX_XSTATS];

	for (unsigned p = 0; p < run->n_ports; p++) {
		uint16_t id = run->ports[p].port_id;
		int n = rte_eth_xstats_get(id, xs, RUN_MAX_XSTATS);

		rte_eth_stats_get(id, &run->hw[p]);
		run->n_xstats[p] = 0;
		if (n <= 0 || n > RUN_MAX_XSTATS ||
		    rte_eth_xstats_get_names(id, run->xstat_names[p], RUN_MAX_XSTATS) != n)
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

		snapshot_lat_port(run, p, kind, &now);
		used += interval_text(&run->lat_live[p * 2 + k], &now, kind, out + used, len - used);
	}
}

/* A line for each of the first latency QPs that measured something in the interval. */
static void flow_latency_lines(const struct run_view *run, double t_s)
{
	static struct lat_stats now;
	char text[256];

	for (unsigned q = 0, shown = 0; run->lat_live_qp && q < run->n_qps && shown < RUN_LIVE_LAT_QPS; q++) {
		const struct qp_tx *qp = &run->qps[q];
		size_t used = 0;

		if (!qp->lat)
			continue;
		for (int k = 0; k < LAT_KIND_COUNT && used < sizeof(text); k++) {
			snapshot_lat_flow(run, qp, (enum lat_kind)k, &now);
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
static void trouble_since(const struct run_view *run, unsigned p, const struct port_totals *t,
			  const struct rte_eth_stats *hw, uint64_t cap_dropped, const struct live_prev *prev, char *out, size_t len)
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

		snapshot_port_totals(run, p, &t);
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
		struct lcore_held_up h;
		double held;

		if (!snapshot_lcore_held_up(run, l, &h) || (held = (double)h.tsc / (double)run->tsc_hz) <= 0.01 * secs)
			continue;
		printf("summary: lcore %u held up %llu times, %.3f s in all (longest %.1f ms) of %.3f s: other work "
		       "shares its CPU; rates, shapers and the lab's links lost that time\n",
		       l, (unsigned long long)h.times, held, (double)h.max_tsc * 1e3 / (double)run->tsc_hz, secs);
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
	const struct rx_qp *q;

	for (unsigned qi = 0; qi < run->n_qps; qi++)
		msgs += stat_read(&run->qps[qi].c.messages);
	for (struct lcore_walk at = {0}; (q = snapshot_rx_qp_next(run, &at)) != NULL;) {
		lost += q->c.lost;
		ooo += q->c.out_of_order;
		dup += q->c.duplicates;
	}
	printf("summary: %.3f s (stopped by %s), %u QPs, %llu messages sent; receivers: lost %llu, out of order %llu, "
	       "duplicates %llu\n",
	       secs, run->stopped_by ? run->stopped_by : "?", run->n_qps, (unsigned long long)msgs, (unsigned long long)lost,
	       (unsigned long long)ooo, (unsigned long long)dup);
	held_up_lines(run, secs);
	for (unsigned p = 0; p < run->n_ports; p++) {
		struct port_totals t;
		snapshot_port_totals(run, p, &t);
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

			if (!snapshot_lat_port(run, p, kind, &l))
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

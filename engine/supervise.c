/* SPDX-License-Identifier: BSD-3-Clause */
/* The main lcore while the workers run: launch, phases, links, live lines, the stop and the drain;
 * signals; the HTTP linger after the report. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_launch.h>

#include "control.h"
#include "egress.h"
#include "capture.h"
#include "timeseries.h"
#include "switch.h"
#include "engine_internal.h"

#define DRAIN_QUIET_MS 50   /* RX is stopped once nothing arrived for this long after TX stopped */
#define DRAIN_MAX_MS 2000

/* Signals received (async-signal-safe: one writer, the handler, whose signals are masked while it
 * runs); a run stops at the first, a second one cuts the final drain short. */
static volatile sig_atomic_t stop_requested;

void engine_request_stop(void)
{
	if (stop_requested < 1000)
		stop_requested = stop_requested + 1;
}

/* ---- running --------------------------------------------------------------------------------- */

void engine_launch(struct engine *e)
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

/* Whether every collective that waits for receipts has them all: when the local TX is done, a
 * peer's last chunks may still be on their way (a peer that never sends: the run's duration ends
 * it, its report shows the phases completed). */
static bool collectives_received_all(const struct engine *e)
{
	for (unsigned c = 0; e->run.collectives && c < e->run.cfg->n_collectives; c++) {
		const struct collective_rt *k = &e->run.collectives[c];
		if (k->n_rx && collective_phases_done(k) < k->cfg->phases)
			return false;
	}
	return true;
}

/* Frames received that belong to the run: not the "other" kind (no RoCE, CNP, PFC or PAUSE), which
 * a port may receive without end (net_null makes frames at every poll; a real port hears ARP, LLDP and
 * its neighbours): the drain waits for the run's own frames in flight, not for those. */
static uint64_t rx_frames_total(const struct engine *e)
{
	struct port_totals t;
	uint64_t n = 0;

	for (unsigned p = 0; p < e->run.n_ports; p++) {
		snapshot_port_totals(&e->run, p, &t);
		n += t.rx_frames - t.rx.kind[WIRE_KIND_OTHER];
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
void engine_poll_links(struct engine *e, uint64_t now)
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
		if (e->run.sw)
			switch_port_link(e->run.sw, p, up != 0);
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
#define SWITCH_LINK_POLL_MS 10 /* with a lab switch: a port whose peer left is flushed this soon */

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
		engine_poll_links(e, now);
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

	if (keep_pace || e->run.phases_started < e->run.cfg->n_phases || link_commands_pending(e) || until <= now)
		return NAP_BUSY_US;
	if (until - now < us * NAP_IDLE_US)
		return RTE_MAX((unsigned)((until - now) / us) + 1, (unsigned)NAP_BUSY_US);
	return NAP_IDLE_US;
}

/* Main lcore: live lines until the run ends, then TX stop, RX drain, RX stop. */
void engine_supervise(struct engine *e, const struct engine_options *opt)
{
	struct live_prev prev[CFG_MAX_PORTS] = {0};
	uint64_t interval = (uint64_t)(opt->stats_interval_s * (double)e->run.tsc_hz);
	uint64_t deadline = opt->duration_s > 0 ? e->run.start_tsc + (uint64_t)(opt->duration_s * (double)e->run.tsc_hz) : 0;
	uint64_t next_line = e->run.start_tsc + interval, last_line = e->run.start_tsc;
	struct ticks ticks = {.link_every = RTE_MIN(interval, e->run.tsc_hz * (e->run.sw ? SWITCH_LINK_POLL_MS : LINK_POLL_MS) / 1000)};
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
		link_commands_tick(e, now);
		if (deadline && now >= deadline) {
			e->run.stopped_by = "duration";
			break;
		}
		if ((e->run.n_qps || counted_generators(e)) && all_tx_finished(e) && collectives_received_all(e)) {
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
	engine_poll_links(e, rte_rdtsc());
	close_links(e, rte_rdtsc());
	link_commands_finish(e);
	lcore_request_rx_stop(&e->stop);
	rte_eal_mp_wait_lcore();
	port_gate_stop(); /* no worker polls any more: the interrupt thread runs freely */
	housekeeping(e);
	capture_finish(&e->run);
	/* the last stretch */
	timeseries_rows(e->run.ts, &e->run, (double)(rte_rdtsc() - e->run.start_tsc) / (double)e->run.tsc_hz);
}

/* run.http_linger_s: the HTTP server goes on serving the final numbers (a last scrape, the
 * dashboard's last look) until the time is up or a signal comes. */
void engine_linger(struct engine *e)
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

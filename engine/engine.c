/* SPDX-License-Identifier: BSD-3-Clause */
/* The engine's life cycle (engine.h): outputs opened, the run planned (plan.c), supervised
 * (supervise.c), its ports and memory released, the summary and the report. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_random.h>
#include <rte_ring.h>

#include "out_file.h"
#include "control.h"
#include "capture.h"
#include "exporter.h"
#include "timeseries.h"
#include "sla.h"
#include "fabric_lab.h"
#include "switch.h"
#include "engine_internal.h"

/* Frees whatever a PMD still holds and records the mbufs not back in their pool. */
static void teardown(struct engine *e)
{
	port_gate_stop();
	if (e->run.sw)
		switch_flush(e->run.sw);
	if (e->run.fab)
		fabric_lab_flush(e->run.fab);
	for (unsigned p = 0; p < e->run.n_ports; p++)
		port_teardown(&e->run.ports[p]);
	for (unsigned p = 0; p < e->run.n_ports; p++)
		e->run.pool_in_use_at_exit[p] = e->run.ports[p].pool ? rte_mempool_in_use_count(e->run.ports[p].pool) : 0;
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		for (unsigned i = 0; e->run.work[l] && i < e->run.work[l]->n_tx; i++)
			if (e->run.work[l]->tx[i].pool) /* NULL when set-up failed before making it */
				e->run.pool_in_use_at_exit[e->run.work[l]->tx[i].port] += rte_mempool_in_use_count(e->run.work[l]->tx[i].pool);
}

/* Everything the engine made, whatever of it was made: also after a failure part way (never made:
 * NULL, and capture_fd -1, as engine_run sets them first). */
static void release(struct engine *e)
{
	json_decref(e->run.dut_links[0]);
	json_decref(e->run.dut_links[1]);
	if (e->run.capture_fd >= 0) /* opened, never handed to rte_pcapng */
		close(e->run.capture_fd);
	e->run.capture_fd = -1;
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		if (!e->run.work[l])
			continue;
		for (unsigned i = 0; i < e->run.work[l]->n_tx; i++) {
			rte_ring_free(e->run.work[l]->tx[i].comp_ring);
			rte_free(e->run.work[l]->tx[i].egress);
			/* (the TX pool: with the ports' pools, below) */
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
	/* (the lab switch and the fabric's switches: with the pools, below) */
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
	rte_free(e->lat_of_flow);
	rte_free(e->run.lat_live);
	rte_free(e->run.lat_live_qp);
	if (e->lat_csv)
		fclose(e->lat_csv);
	/* The mbuf pools, the lab switch and the fabric's switches are not freed one by one: the
	 * process ends next, and rte_eal_cleanup() gives all of EAL's memory back at once. DPDK's
	 * rte_free zeroes what it frees, page by page, also pages never used: a fabric switch's route
	 * table (rte_lpm: 64 MB, of which a few pages hold routes) and a NIC's pools (three switch
	 * buffers' worth) made every engine's exit a second or more of page faults and memset, 40 %
	 * of a short run's CPU time (0.5 s of a 1.5 s run on one ring cable, 1.2 s of a fabric's). */
}

/* run.ready_file: written now as NAME.part (a path that cannot be written stops the run before
 * it starts; an earlier run's NAME goes) and renamed to NAME by ready_file_publish. */
static int ready_file_prepare(const struct engine_config *cfg, char *err, size_t errlen)
{
	char part[CFG_STR_LEN + 8];
	FILE *f;

	if (!cfg->ready_file[0])
		return 0;
	snprintf(part, sizeof(part), "%s.part", cfg->ready_file);
	if (remove(cfg->ready_file) && errno != ENOENT) {
		snprintf(err, errlen, "run.ready_file: cannot remove an earlier %s: %s", cfg->ready_file, strerror(errno));
		return -1;
	}
	if (!(f = out_fopen(part)) || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f)) {
		snprintf(err, errlen, "run.ready_file: cannot write %s: %s", part, strerror(errno));
		return -1;
	}
	return 0;
}

/* The ports are started (a memif server accepts its clients only from then on: DPDK 22.11's
 * client that comes earlier is refused and never retries) and the lcores launched. */
static void ready_file_publish(const struct engine_config *cfg)
{
	char part[CFG_STR_LEN + 8];

	if (!cfg->ready_file[0])
		return;
	snprintf(part, sizeof(part), "%s.part", cfg->ready_file);
	if (rename(part, cfg->ready_file))
		fprintf(stderr, "roce-engine: run.ready_file: cannot rename %s to %s: %s\n", part, cfg->ready_file,
			strerror(errno));
}

/* The files the run writes as it goes, opened before any traffic: a path that cannot be written
 * stops the run here, with its message printed. 0, or -1. */
static int open_outputs(struct engine *e, const struct engine_options *opt)
{
	const struct engine_config *cfg = e->run.cfg;
	char err[512];
	int failed;

	if (opt->report_path && report_check_path(opt->report_path, err, sizeof(err)))
		goto failed;
	if (ready_file_prepare(cfg, err, sizeof(err)))
		goto failed;
	if (cfg->latency_samples[0]) {
		e->lat_csv = out_fopen(cfg->latency_samples);
		if (!e->lat_csv) {
			snprintf(err, sizeof(err), "run.latency_samples: cannot write %s: %s", cfg->latency_samples,
				 strerror(errno));
			goto failed;
		}
		lat_samples_csv_header(e->lat_csv);
	}
	if (capture_open(&e->run, err, sizeof(err)))
		goto failed;
	e->run.ts = timeseries_open(&e->run, err, sizeof(err), &failed);
	if (failed)
		goto failed;
	if (cfg->cc_trace[0]) {
		e->run.cc_csv = out_fopen(cfg->cc_trace);
		if (!e->run.cc_csv) {
			snprintf(err, sizeof(err), "run.cc_trace: cannot write %s: %s", cfg->cc_trace, strerror(errno));
			goto failed;
		}
		congestion_trace_header(e->run.cc_csv);
	}
	return 0;
failed:
	fprintf(stderr, "roce-engine: %s\n", err);
	return -1;
}

/* run.http, before any traffic: a port already taken stops the run here. 0, or -1 with err. */
static int start_http(struct engine *e, char *err, size_t errlen)
{
	const struct engine_config *cfg = e->run.cfg;
	char base[96]; /* http://ADDRESS:PORT, an IPv6 address in brackets */
	bool v6 = strchr(cfg->http_addr, ':') != NULL;

	if (!cfg->http_port)
		return 0;
	e->http = exporter_start(cfg, err, errlen);
	if (!e->http)
		return -1;
	snprintf(base, sizeof(base), "http://%s%s%s:%u", v6 ? "[" : "", cfg->http_addr, v6 ? "]" : "", cfg->http_port);
	printf("roce-engine: metrics at %s/metrics, dashboard at %s/\n", base, base);
	return 0;
}

/* Everything before the lcores are launched: the ports, the roles, the plan, the capture's pools,
 * the schedules set to start, PFC generators, the memif gate. 0, or -1 with err. */
static int prepare(struct engine *e, const struct engine_options *opt, char *err, size_t errlen)
{
	const struct engine_config *cfg = e->run.cfg;
	const char *crc_alg = wire_crc_init(); /* before wire_icrc_method, which it sets up */

	printf("roce-engine: ICRC with rte_net_crc %s; RX checks %s\n", crc_alg, wire_icrc_method());
	if (engine_setup_ports(e, err, errlen))
		return -1;
	for (unsigned p = 0; p < e->run.n_ports; p++)
		port_print_capabilities(&e->run.ports[p]);
	for (unsigned i = 0; i < cfg->n_roles; i++)
		if (engine_add_role(e, &cfg->roles[i], err, errlen))
			return -1;
	e->run.start_tsc = rte_rdtsc() + e->run.tsc_hz / 100; /* 10 ms to let every lcore start */
	if (engine_plan_switch(e, err, errlen) || engine_plan_qps(e, err, errlen))
		return -1;
	/* the capture's pools take a while to make: before the schedules are set to start */
	if (capture_start(&e->run, err, errlen))
		return -1;
	engine_plan_capture(e);
	dut_counters_read(e, 0); /* (the switches' counters: before the schedules are set to start) */
	engine_start_after_planning(e);
	if (engine_setup_pfc_generators(e, err, errlen))
		return -1;
	printf("roce-engine: %u QPs on %u lcores; duration %s\n", e->run.n_qps, e->n_work,
	       opt->duration_s > 0 ? "set" : "until the flows stop or a signal");
	return port_gate_start(err, errlen); /* net_memif ports: before any worker polls them */
}

/* The lcores launched and supervised until the run ends; then the numbers are final: the
 * summary, the SLA verdict and the report. The exit status. */
static int run_and_report(struct engine *e, const struct engine_options *opt)
{
	char err[512];
	int rc = ENGINE_EXIT_OK;

	control_attach(&e->run);
	/* each port's state at the traffic's start: polled now, just before the lcores are launched
	 * (the main lcore's first tick may come after the start on a busy machine) */
	for (unsigned p = 0; p < e->run.n_ports; p++)
		e->run.link[p].state = -1;
	engine_poll_links(e, e->run.start_tsc);
	engine_launch(e);
	ready_file_publish(e->run.cfg);
	engine_supervise(e, opt);
	dut_counters_read(e, 1);
	control_detach();
	stats_capture_pmd(&e->run);
	e->run.finished = true;
	teardown(e);
	stats_print_summary(&e->run);
	sla_measure(&e->run, &e->sla);
	if (!sla_verdict(&e->sla, true))
		rc = ENGINE_EXIT_SLA;
	if (opt->report_path) {
		if (report_write(&e->run, &e->sla, opt->report_path, err, sizeof(err))) {
			fprintf(stderr, "roce-engine: %s\n", err);
			rc = ENGINE_EXIT_REPORT;
		} else {
			printf("roce-engine: report written to %s\n", opt->report_path);
		}
	}
	engine_linger(e);
	return rc;
}

int engine_run(const struct engine_config *cfg, const struct engine_options *opt)
{
	struct engine *e = calloc(1, sizeof(*e)); /* large (the PMDs' xstats): not on the stack */
	char err[512];
	int rc;

	if (!e) {
		fprintf(stderr, "roce-engine: out of memory for the engine's state\n");
		return ENGINE_EXIT_INIT;
	}
	e->run.cfg = cfg;
	e->run.tsc_hz = rte_get_tsc_hz();
	clock_time_base_init(e->run.tsc_hz);
	e->session = (uint16_t)rte_rand();
	e->run.capture_fd = -1; /* none yet: release closes only a file capture_open made */
	if (open_outputs(e, opt)) {
		release(e); /* the outputs opened before the one that failed */
		free(e);
		return ENGINE_EXIT_REPORT;
	}
	if (start_http(e, err, sizeof(err)) || prepare(e, opt, err, sizeof(err))) {
		exporter_stop(e->http);
		fprintf(stderr, "roce-engine: %s\n", err);
		teardown(e);
		release(e);
		free(e);
		return ENGINE_EXIT_INIT;
	}
	rc = run_and_report(e, opt);
	exporter_stop(e->http);
	release(e);
	free(e);
	return rc;
}

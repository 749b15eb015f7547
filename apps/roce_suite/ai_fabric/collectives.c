/* SPDX-License-Identifier: BSD-3-Clause
 *
 * §9 collectives: AllReduce, AllGather and AlltoAll of S bytes over N hosts of the fabric, run by
 * the engine's collectives (docs/config.md#collectives-optional-list-of-groups) over RC WRITEs on
 * the lossless class, `iterations` times in a row:
 *   ring AllReduce: 2(N-1) phases, in each every host writes S/N to the next (a reduce-scatter,
 *                   then an all-gather, as NCCL's ring);
 *   ring AllGather: N-1 such phases;
 *   AlltoAll:       one phase, in which every host writes S/N to every other (the worst case: N
 *                   to 1 at every host at once).
 * One engine runs every host, so a phase is released by a barrier over all of them (each QP's
 * message acknowledged): barriers are reproduced, stragglers only as the fabric makes them. An
 * iteration's time is from the previous one's end to its last phase's end; its busBW (kpi.h) is
 * S x algo_factor / t. Per collective: busBW avg, p50, p95, p99 over the iterations, the ECN marks,
 * PFC pauses and the uplinks' utilisation, and the algorithm run.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aif_ctx.h"
#include "config_tree.h"
#include "percentile.h"
#include "verdict.h"

#define MAX_RANKS 16

static const char *const op_algorithm[] = {
	[KPI_ALLREDUCE] = "ring: 2(N-1) phases, each host writes S/N to the next; phases released by a barrier over every host",
	[KPI_ALLGATHER] = "ring: N-1 phases, each host writes S/N to the next; phases released by a barrier over every host",
	[KPI_REDUCESCATTER] = "ring: N-1 phases",
	[KPI_ALLTOALL] = "pairwise: one phase, each host writes S/N to every other at once; phases released by a barrier",
};

config_setting_t *aif_collective_group(struct aif_trial *t, const char *name, const char *type, unsigned phases,
				       config_setting_t **flows)
{
	config_setting_t *list = config_lookup(&t->cfg, "collectives"), *c;

	if (!list)
		list = config_setting_add(config_root_setting(&t->cfg), "collectives", CONFIG_TYPE_LIST);
	c = config_setting_add(list, NULL, CONFIG_TYPE_GROUP);
	cfg_set_string(c, "name", name);
	cfg_set_string(c, "type", type);
	cfg_set_int(c, "phases", phases);
	*flows = config_setting_add(c, "flows", CONFIG_TYPE_ARRAY);
	return c;
}

config_setting_t *aif_add_collective(struct aif_trial *t, const struct aif_ctx *x, const char *entry,
				     enum kpi_collective op, unsigned n, unsigned phases)
{
	config_setting_t *flows, *c = aif_collective_group(t, kpi_collective_names[op], op == KPI_ALLTOALL ? "all_to_all" : "ring",
							   phases, &flows);
	char name[64];

	for (unsigned a = 0; a < n; a++)
		for (unsigned b = 0; b < n; b++) {
			if (op == KPI_ALLTOALL ? a == b : b != (a + 1) % n)
				continue;
			snprintf(name, sizeof(name), "%.13s-%.8s-%.8s", entry, x->fab.hosts[a].name, x->fab.hosts[b].name);
			config_setting_set_string(config_setting_add(flows, NULL, CONFIG_TYPE_STRING), name);
		}
	return c;
}

struct coll_result {
	double busbw[AIF_MAX_ITER];
	unsigned iterations;
	double mean, p50, p95, p99, total_s;
	struct aif_fabric_view v;
	double util_mean;
	double drop_ppm;
	bool ran;
	bool across;                    /* run by roce-cluster across its ranks */
	struct aif_cluster_step step;   /* ... and what its report said of the step */
};

unsigned aif_iteration_times(const json_t *coll, unsigned phases, double *iter_s, double *total_s)
{
	const json_t *end = json_object_get(coll, "phase_end_us");
	unsigned done = (unsigned)json_array_size(end) / phases, n = 0;
	double prev = 0;

	for (; n < done && n < AIF_MAX_ITER; n++) {
		double e = json_number_value(json_array_get(end, (n + 1) * phases - 1));
		iter_s[n] = (e - prev) / 1e6;
		prev = e;
	}
	*total_s = prev / 1e6;
	return n;
}

static void busbw_stats(struct coll_result *r)
{
	double sorted[AIF_MAX_ITER];
	struct kpi_stats st;

	kpi_stats_of(r->busbw, r->iterations, &st);
	memcpy(sorted, r->busbw, r->iterations * sizeof(double));
	percentile_sort(sorted, r->iterations);
	r->mean = st.mean;
	r->p50 = percentile_of_sorted(sorted, r->iterations, 0.50);
	r->p95 = percentile_of_sorted(sorted, r->iterations, 0.95);
	r->p99 = percentile_of_sorted(sorted, r->iterations, 0.99);
}

static double mean_uplink_utilisation(const json_t *rep)
{
	const json_t *l;
	double sum = 0;
	unsigned n = 0;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(rep, "fabric"), "links"), i, l)
		if (!strcmp(json_string_value(json_object_get(l, "tier")) ?: "", "leaf"))
			for (unsigned d = 0; d < 2; d++, n++)
				sum += jnum(json_object_get(l, d ? "b_to_a" : "a_to_b"), "utilization");
	return n ? sum / n : 0;
}

/* The leaf-tier link that carried the most bytes, both directions, as trial rep's fabric.links
 * counted them (the virtual fabric's, or a real tier's counters_command). -1: none counted. */
static int busiest_uplink(const struct aif_ctx *x, const json_t *rep)
{
	const json_t *links = json_object_get(json_object_get(rep, "fabric"), "links");
	double most = 0;
	int best = -1;

	for (unsigned k = 0; k < x->fab.n_links; k++) {
		const struct fab_link *l = &x->fab.links[k];
		double b = l->tier != FAB_TIER_LEAF ? 0 : aif_counted_bytes(links, l->name, false) + aif_counted_bytes(links, l->name, true);
		if (b > most) {
			most = b;
			best = (int)k;
		}
	}
	return best;
}

/* The failure's links down at its at_s, in the trial's fabric group (replacing any events there). */
static void add_failure(struct aif_trial *t, const struct aif_ctx *x, const struct aif_link_failure *f)
{
	config_setting_t *list;

	cfg_remove(t->fabric, "events");
	list = config_setting_add(t->fabric, "events", CONFIG_TYPE_LIST);
	for (unsigned i = 0; i < f->n_links; i++) {
		config_setting_t *e = config_setting_add(list, NULL, CONFIG_TYPE_GROUP);
		cfg_set_float(e, "at_s", f->at_s);
		cfg_set_string(e, "link", x->fab.links[f->links[i]].name);
		cfg_set_string(e, "state", "down");
	}
	if (f->convergence_ms > 0 && !x->c->external)
		cfg_set_float(t->fabric, "convergence_ms", f->convergence_ms);
}

/* The events as they ran: taken together, the first one's time, the last convergence, the frames
 * lost and the flow groups hit over all of them. */
static void read_failure(const json_t *rep, struct aif_link_failure *f)
{
	const json_t *e, *h;
	json_t *hit = json_object();
	double loss_end = 0;
	size_t i, k;

	json_array_foreach(json_object_get(json_object_get(rep, "fabric"), "events"), i, e) {
		double at;
		if (!json_is_true(json_object_get(e, "applied")))
			continue;
		at = jnum(e, "applied_s");
		f->applied_s = f->applied ? fmin(f->applied_s, at) : at;
		f->applied = true;
		f->converged_s = fmax(f->converged_s, jnum(e, "converged_s"));
		f->frames_lost += (uint64_t)jnum(e, "frames_lost");
		if (jnum(e, "frames_lost") > 0)
			loss_end = fmax(loss_end, at + jnum(e, "loss_duration_s"));
		json_array_foreach(json_object_get(e, "flows_hit"), k, h)
			json_object_set(hit, json_string_value(h) ?: "", json_true());
	}
	f->loss_duration_s = loss_end > f->applied_s ? loss_end - f->applied_s : 0;
	f->flows_hit = (unsigned)json_object_size(hit);
	json_decref(hit);
	f->command_status = 0;
	if (!json_is_true(json_object_get(json_object_get(rep, "fabric"), "external")))
		return;
	f->converged_s = f->applied_s; /* (a real tier's convergence is its own) */
	f->command_s = 0;
	json_array_foreach(json_object_get(json_object_get(rep, "fabric"), "events"), i, e) {
		const json_t *st = json_object_get(e, "exit_status"), *ms = json_object_get(e, "command_ms");
		int s = json_is_true(json_object_get(e, "applied")) && json_is_integer(st) ? (int)json_integer_value(st) : -1;
		if (s < 0)
			f->command_status = -1;
		else if (f->command_status >= 0 && s > f->command_status)
			f->command_status = s;
		if (!json_is_number(ms)) /* (still going at the run's end) */
			f->command_s = NAN;
		else if (!isnan(f->command_s))
			f->command_s = fmax(f->command_s, json_number_value(ms) / 1e3);
	}
}

/* A real switch tier's busiest leaf uplink without its counters: as roce-fabric's plan of trial t
 * hashes the flows (the switches hash their own way: it may carry less). -1: none. */
static int plan_busiest_uplink(const struct aif_ctx *x, struct aif_trial *t)
{
	struct aif_plan p;
	const json_t *l;
	double most = 0;
	int best = -1;
	size_t i;

	if (aif_plan(x, t, "link-failure-steady", &p) == 0)
		json_array_foreach(json_object_get(json_object_get(p.report, "fabric"), "links"), i, l) {
			double g = jnum(json_object_get(l, "a_to_b"), "gbps") + jnum(json_object_get(l, "b_to_a"), "gbps");
			if (!strcmp(json_string_value(json_object_get(l, "tier")) ?: "", "leaf") && g > most) {
				most = g;
				best = fabric_link_by_name(&x->fab, json_string_value(json_object_get(l, "name")) ?: "");
			}
		}
	aif_plan_free(&p);
	return best;
}

int aif_collective_trial(struct aif_ctx *x, enum kpi_collective op, unsigned n, unsigned bytes, unsigned iterations,
			 double compute_us, struct aif_link_failure *fail, struct aif_coll_run *r)
{
	unsigned phases = kpi_collective_phases(op, n), hosts[MAX_RANKS];
	unsigned per_phase = (bytes + n - 1) / n; /* S/N: each message of a phase */
	struct aif_flow f = { .transport = "rc", .message_size = per_phase, .priority = 3 };
	double cap_s = 10 + 1e-9 * 8 * bytes * 2.0 * iterations / x->host_gbps * 20 + 2e-6 * compute_us * iterations;
	config_setting_t *c;
	struct aif_trial t;
	struct trial tr;
	struct metrics m;
	struct flow_set fs = aif_entry_flows("cl");

	memset(r, 0, sizeof(*r));
	r->busiest_uplink = -1;
	if (fail) {
		fail->applied = false;
		fail->applied_s = fail->converged_s = fail->loss_duration_s = fail->command_s = 0;
		fail->frames_lost = 0;
		fail->flows_hit = 0;
	}
	for (unsigned i = 0; i < n; i++)
		hosts[i] = i;
	aif_trial_init(&t, x);
	aif_trial_pattern(&t, x, "cl", op == KPI_ALLTOALL ? "all_to_all" : "ring", hosts, n, -1, 1, &f);
	c = aif_add_collective(&t, x, "cl", op, n, phases * iterations);
	if (compute_us > 0) {
		cfg_set_float(c, "compute_us", compute_us);
		cfg_set_int(c, "iteration_phases", phases);
	}
	if (fail)
		add_failure(&t, x, fail);
	/* the phases end the run; the duration only bounds a collective that stalls */
	cfg_set_float(cfg_group(config_root_setting(&t.cfg), "run"), "duration_s", cap_s);
	trial_init(&tr, fail ? "link_failure" : compute_us > 0 ? "jct" : "collective", "%s of %u bytes over %u hosts, %u iterations%s%s%s",
		   kpi_collective_names[op], bytes, n, iterations, compute_us > 0 ? " after compute steps" : "",
		   fail ? ", down: " : "", fail ? fail->what : "");
	tr.duration_s = 0;
	if (compute_us > 0)
		json_object_set_new(tr.params, "compute_ms", json_real(compute_us / 1e3));
	if (trial_measure(x->rn, &t.cfg, &tr, &fs, &m) == 0) {
		const json_t *coll = json_array_get(json_object_get(tr.report, "collectives"), 0);

		aif_fabric_read(tr.report, &r->v);
		aif_fabric_to_json(&r->v, tr.record);
		r->util_mean = mean_uplink_utilisation(tr.report);
		r->drop_ppm = kpi_ppm((double)r->v.dropped, (double)m.sent);
		r->iterations = aif_iteration_times(coll, phases, r->iter_s, &r->total_s);
		r->busiest_uplink = busiest_uplink(x, tr.report);
		r->busiest_from = !x->c->external ? "fabric" : "external.counters_command";
		if (r->busiest_uplink < 0 && x->c->external && !fail) {
			r->busiest_uplink = plan_busiest_uplink(x, &t);
			r->busiest_from = "plan: roce-fabric's hashing (no leaf-tier bytes counted)";
		}
		if (fail)
			read_failure(tr.report, fail);
		r->ran = true;
		trial_verdict(x->rn, &tr, r->iterations == iterations ? "info" : "fail", "%u of %u iterations in %.3f s",
			      r->iterations, iterations, r->total_s);
	}
	trial_release(&tr);
	aif_trial_free(&t);
	return r->ran ? 0 : -1;
}

static void coll_trial(struct aif_ctx *x, enum kpi_collective op, unsigned n, struct coll_result *r)
{
	const struct aif_collectives_cfg *cc = &x->c->coll;
	struct aif_coll_run run;

	memset(r, 0, sizeof(*r));
	if (aif_collective_trial(x, op, n, cc->message_size, cc->iterations, 0, NULL, &run))
		return;
	for (unsigned i = 0; i < run.iterations; i++)
		r->busbw[r->iterations++] = kpi_busbw_gbps(op, n, cc->message_size, run.iter_s[i]);
	r->total_s = run.total_s;
	r->v = run.v;
	r->util_mean = run.util_mean;
	r->drop_ppm = run.drop_ppm;
	busbw_stats(r);
	r->ran = true;
}

/* op's row of a roce-cluster job (run once for every op): busBW per iteration from the job's
 * iteration times, by the suite's own formula. */
static void cluster_result(const struct aif_cluster_job *j, enum kpi_collective op, unsigned n,
			   const struct aif_collectives_cfg *cc, struct coll_result *r)
{
	double it[AIF_MAX_ITER];
	unsigned k;

	memset(r, 0, sizeof(*r));
	r->across = true;
	if (!j->ran)
		return;
	k = aif_cluster_iterations(j, kpi_collective_names[op], it, &r->total_s, &r->step);
	for (unsigned i = 0; i < k; i++)
		if (it[i] > 0)
			r->busbw[r->iterations++] = kpi_busbw_gbps(op, n, cc->message_size, it[i]);
	r->v.machine_limited = r->step.machine_limited;
	r->v.pfc_xoff = r->step.pause_rx; /* (the table's XOFF column: those the ranks' ports received) */
	busbw_stats(r);
	r->ran = true;
}

/* The cluster's own figures in op's row, and the verdicts only a cluster job has. */
static void cluster_row(struct aif_ctx *x, const struct aif_cluster_job *j, enum kpi_collective op, unsigned n,
			const struct coll_result *r, json_t *row)
{
	json_object_set_new(row, "barriers", json_false());
	json_object_set_new(row, "algorithm", json_string(op == KPI_ALLTOALL ? "direct: one phase, each rank writes S/N to every other; "
							  "a rank's phase released by its sends and its receipts"
							: "ring: each rank writes S/N to the next; a rank's phase released by its "
							  "sends and its predecessor's receipt (no barrier)"));
	json_object_set_new(row, "stragglers", json_string("as the ranks' hosts and the fabric make them"));
	json_object_set_new(row, "cluster_busbw_mean_gbps", json_real(r->step.busbw_mean_gbps));
	json_object_set_new(row, "uplink_utilization_mean", json_null()); /* (the switches' counters: the DUT's) */
	json_object_set_new(row, "drop_ppm", json_null());
	json_object_set_new(row, "tx_packets", json_integer((json_int_t)r->step.tx_packets));
	json_object_set_new(row, "retransmits", json_integer((json_int_t)r->step.retransmits));
	json_object_set_new(row, "retransmit_ppm", json_real(kpi_ppm((double)r->step.retransmits, (double)r->step.tx_packets)));
	json_object_set_new(row, "pause_rx", json_integer((json_int_t)r->step.pause_rx));
	json_object_set_new(row, "rank_reports_read", json_integer(r->step.reports_read));
	json_object_set_new(row, "stray_payload_bytes", json_integer((json_int_t)r->step.stray_bytes));
	if (!r->ran)
		return;
	aif_cluster_step_row(x, j, &r->step, n, kpi_collective_names[op], row);
	if (r->step.stray_bytes)
		aif_anomaly(x, AIF_COLLECTIVES, "%s across the cluster: %llu bytes of payload from ranks that were not the "
			    "step's senders (an earlier step's frames)", kpi_collective_names[op],
			    (unsigned long long)r->step.stray_bytes);
}

static json_t *coll_row(struct aif_ctx *x, enum kpi_collective op, unsigned n, const struct coll_result *r)
{
	const struct aif_collectives_cfg *cc = &x->c->coll;
	const double link_gbps = r->across ? x->c->cluster.link_gbps : x->host_gbps;
	double efficiency = r->mean / link_gbps;
	json_t *iters = json_array(), *row;

	for (unsigned i = 0; i < r->iterations; i++)
		json_array_append_new(iters, json_real(r->busbw[i]));
	printf("  %-10s %5u  %10u  %4u/%-4u  %9.4f  %9.4f  %9.4f  %9.4f  %6.1f %%  %8llu  %8llu\n", kpi_collective_names[op], n,
	       cc->message_size, r->iterations, cc->iterations, r->mean, r->p50, r->p95, r->p99, 100 * efficiency,
	       (unsigned long long)r->v.ecn_marked, (unsigned long long)r->v.pfc_xoff);
	row = json_pack("{s:s,s:i,s:i,s:i,s:i,s:i,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:o,s:f}", "op", kpi_collective_names[op],
			"ranks", (int)n, "message_size", (int)cc->message_size, "phases_per_iteration",
			(int)kpi_collective_phases(op, n), "iterations", (int)cc->iterations, "iterations_completed", (int)r->iterations,
			"algo_factor", kpi_algo_factor(op, n), "busbw_mean_gbps", r->mean, "busbw_p50_gbps", r->p50,
			"busbw_p95_gbps", r->p95, "busbw_p99_gbps", r->p99, "busbw_efficiency", efficiency, "total_s",
			r->total_s, "busbw_per_iteration_gbps", iters, "link_gbps", link_gbps);
	if (!r->across) { /* (a cluster job's row: cluster_row) */
		json_object_set_new(row, "algorithm", json_string(op_algorithm[op]));
		/* (on a real switch tier, fabric.external, its links and drops are its own counters) */
		json_object_set_new(row, "uplink_utilization_mean", r->v.external ? json_null() : json_real(r->util_mean));
		json_object_set_new(row, "drop_ppm", r->v.switch_drops ? json_real(r->drop_ppm) : json_null());
		json_object_set_new(row, "barriers", json_true());
		json_object_set_new(row, "stragglers", json_string("none injected: only those the fabric makes"));
		aif_fabric_to_json(&r->v, row);
	}
	if (!r->ran)
		return row;
	if (!r->across && r->v.switch_drops) /* (a cluster job's, or a real tier's without counters_command:
					      * RC retransmits what is lost; its frames are not counted here) */
		aif_threshold(x, AIF_COLLECTIVES, "drop_ppm", r->drop_ppm, x->c->th.max_drop_ppm, true, kpi_collective_names[op]);
	suite_verdict(x->rn, r->iterations == cc->iterations, "collective_completes", "%s over %u %s: %u of %u iterations",
		      kpi_collective_names[op], n, r->across ? "ranks" : "hosts", r->iterations, cc->iterations);
	/* a host's link carries algo_factor x S per iteration: busBW above the link is impossible */
	suite_verdict(x->rn, r->mean <= link_gbps * 1.001, "busbw_at_most_link", "%s: busBW %.4f Gb/s, link %.4f Gb/s",
		      kpi_collective_names[op], r->mean, link_gbps);
	aif_repeatability(x, AIF_COLLECTIVES, op == KPI_ALLREDUCE   ? "busbw_gbps_allreduce"
					      : op == KPI_ALLGATHER ? "busbw_gbps_allgather"
								    : "busbw_gbps_alltoall",
			  "Gb/s", r->busbw, r->iterations);
	if (r->v.machine_limited) {
		if (r->across)
			aif_cluster_machine_limit(x, &r->step, kpi_collective_names[op], "its busBW", row);
		else
			machine_limit(x->rn, row, "%s: machine-limited (%s): its busBW is partly the CPU's",
				      kpi_collective_names[op], aif_machine_reason(x));
		return row;
	}
	aif_threshold(x, AIF_COLLECTIVES, "busbw_gbps", r->mean, x->c->th.min_busbw_gbps, false, kpi_collective_names[op]);
	aif_threshold(x, AIF_COLLECTIVES, "busbw_efficiency", efficiency, x->c->th.min_busbw_efficiency, false,
		      kpi_collective_names[op]);
	return row;
}

int aif_collectives(struct aif_ctx *x)
{
	const struct aif_collectives_cfg *cc = &x->c->coll;
	const bool across = x->c->cluster.across[AIF_COLLECTIVES];
	unsigned n = across ? x->c->cluster.ranks : cc->ranks ? cc->ranks : x->fab.n_hosts;
	const struct aif_cluster_job *job = across ? aif_cluster_job(x) : NULL;
	json_t *rows = json_array(), *bars, *lines, *out;
	double xs[KPI_COLLECTIVES], ys[KPI_COLLECTIVES];

	if (!across && (n > MAX_RANKS || n > x->fab.n_hosts))
		n = x->fab.n_hosts < MAX_RANKS ? x->fab.n_hosts : MAX_RANKS;
	printf("\n§9 collectives over %u %s: busBW per iteration, Gb/s\n", n, across ? "ranks" : "hosts");
	printf("  %-10s %5s  %10s  %9s  %9s  %9s  %9s  %9s  %8s  %8s  %8s\n", "op", "N", "bytes", "iter", "mean", "p50", "p95",
	       "p99", "effic.", "ECN", "XOFF");
	bars = aif_graph(x, "collectives_busbw.png", "bars", "§9 busBW by collective", "collective", "mean busBW (Gb/s)");
	lines = aif_graph(x, "collectives_iterations.png", "lines", "§9 busBW per iteration", "iteration", "busBW (Gb/s)");
	json_object_set_new(bars, "labels", json_array());
	for (unsigned k = 0; k < cc->n_ops && !x->rn->stop; k++) {
		struct coll_result r;
		double it[AIF_MAX_ITER];
		json_t *row;

		if (across)
			cluster_result(job, cc->ops[k], n, cc, &r);
		else
			coll_trial(x, cc->ops[k], n, &r);
		row = coll_row(x, cc->ops[k], n, &r);
		if (across)
			cluster_row(x, job, cc->ops[k], n, &r, row);
		json_array_append_new(rows, row);
		xs[k] = k;
		ys[k] = r.mean;
		json_array_append_new(json_object_get(bars, "labels"), json_string(kpi_collective_names[cc->ops[k]]));
		for (unsigned i = 0; i < r.iterations; i++)
			it[i] = i + 1;
		aif_series(lines, kpi_collective_names[cc->ops[k]], it, r.busbw, r.iterations);
	}
	aif_series(bars, "mean busBW", xs, ys, cc->n_ops);
	out = json_pack("{s:s,s:o,s:f,s:s}", "section", "9", "rows", rows, "link_gbps",
			across ? x->c->cluster.link_gbps : x->host_gbps, "where", across ? "cluster" : "fabric");
	if (across)
		json_object_set(out, "cluster", job->summary);
	json_object_set_new(x->results, "collectives", out);
	return x->rn->stop ? -1 : 0;
}

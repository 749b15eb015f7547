/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The tests, step by step (job.h). A step: rank 0 names the start (its clock, a margin ahead),
 * every rank runs its engine from that time on its own clock (rank 0's time plus its offset), and
 * sends its step's summary to rank 0, which waits for each until the step's deadline and marks
 * the ranks whose summary did not come as missing. A test is rounds of directed flows
 * (schedule.h): a pairwise test steps through the rounds of its schedule, each rank in one pair a
 * round, both directions of each pair at once; incast, all_to_all and permutation are one round.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "coll_model.h"
#include "job.h"
#include "live.h"
#include "schedule.h"

#define TAG_STEP 100 /* + the step's number */

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A rank's whole engine report, out of its summary into rank 0's results folder
 * (reports/TEST-rROUND-rankR.json), the summary naming the file. */
static json_t *keep_report(const struct job *j, const struct cl_test *t, unsigned round, json_t *s)
{
	const json_t *rep = json_object_get(s, "report");
	char rel[128], path[PATH_MAX + 160];

	if (!rep)
		return s;
	snprintf(rel, sizeof(rel), "reports/%s-r%u-rank%d.json", t->name, round,
		 (int)json_integer_value(json_object_get(s, "rank")));
	cl_text(path, sizeof(path), "%s/reports", j->cfg.results);
	mkdir(j->cfg.results, 0755);
	mkdir(path, 0755);
	cl_text(path, sizeof(path), "%s/%s", j->cfg.results, rel);
	if (json_dump_file(rep, path, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) == 0)
		json_object_set_new(s, "report_file", json_string(rel));
	json_object_del(s, "report");
	return s;
}

/* How far apart the round's engines started their traffic (in rank 0's time: each rank's start
 * less its clock offset), ms; a rank whose engine started late (its start margin too short)
 * shows here. */
static double start_spread_ms(const struct job *j, const json_t *ranks)
{
	double lo = 0, hi = 0;
	bool any = false;
	const json_t *s;
	size_t i;

	json_array_foreach(ranks, i, s) {
		int r = (int)json_integer_value(json_object_get(s, "rank"));
		const json_t *ns = json_object_get(s, "start_unix_ns");
		double t;
		if (!json_is_integer(ns) || !json_integer_value(ns) || r < 0 || r >= j->comm.size)
			continue;
		t = (double)json_integer_value(ns) - (double)j->before[r].offset_ns;
		lo = !any || t < lo ? t : lo;
		hi = !any || t > hi ? t : hi;
		any = true;
	}
	return (hi - lo) / 1e6;
}

/* Rank 0's summary of a round: its flows (and a pairwise round's pairs), the summaries gathered,
 * the ranks missing. */
static json_t *round_record(struct job *j, const struct cl_test *t, unsigned r, const struct cl_pair *f, unsigned k,
			    char **got, json_t *mine, double start_at)
{
	json_t *pairs = json_array(), *flows = json_array(), *ranks = json_array();

	for (unsigned i = 0; i < k; i++) {
		json_array_append_new(flows, json_pack("[i,i]", (int)f[i].a, (int)f[i].b));
		if (t->type == CL_TEST_PAIRWISE && i % 2 == 0) /* (a, b) then (b, a) */
			json_array_append_new(pairs, json_pack("[i,i]", (int)f[i].a, (int)f[i].b));
	}
	json_array_append_new(ranks, keep_report(j, t, r, mine));
	for (int q = 1; q < j->comm.size; q++) {
		json_error_t e;
		json_t *s = got[q] ? json_loads(got[q], 0, &e) : NULL;
		if (!s) {
			j->missing[q] = true;
			s = json_pack("{s:i,s:s}", "rank", q, "error", "missing: no summary by the step's deadline");
		}
		json_array_append_new(ranks, keep_report(j, t, r, s));
		free(got[q]);
	}
	{
		json_t *rec = json_pack("{s:i,s:o,s:f,s:f,s:o}", "round", (int)r, "flows", flows, "start_unix_s", start_at,
					"start_spread_ms", start_spread_ms(j, ranks), "ranks", ranks);
		if (t->type == CL_TEST_PAIRWISE)
			json_object_set_new(rec, "pairs", pairs);
		else
			json_decref(pairs);
		return rec;
	}
}

/* The round's rates as one line: the directions measured and their spread. */
static void live_line(const struct job *j, const struct cl_test *t, unsigned r, unsigned rounds, const json_t *rec)
{
	double lo = 1e18, hi = 0, sum = 0;
	unsigned dirs = 0, errors = 0;
	const json_t *s, *e;
	size_t a, b;

	json_array_foreach(json_object_get(rec, "ranks"), a, s) {
		double secs = json_number_value(json_object_get(s, "duration_s"));
		errors += json_object_get(s, "error") != NULL;
		json_array_foreach(json_object_get(s, "rx"), b, e) {
			double v = t->measure == CL_MEASURE_LATENCY
					   ? json_number_value(json_object_get(e, "p50_ns")) / 1e3
					   : secs > 0 ? json_number_value(json_object_get(e, "payload_bytes")) * 8 / secs / 1e9 : 0;
			lo = v < lo ? v : lo, hi = v > hi ? v : hi, sum += v, dirs++;
		}
	}
	if (t->measure == CL_MEASURE_LATENCY)
		printf("[%s] round %u/%u: %u directions, one-way p50 us %.3f..%.3f (mean %.3f)", t->name, r + 1, rounds,
		       dirs, dirs ? lo : 0, hi, dirs ? sum / dirs : 0);
	else
		printf("[%s] round %u/%u: %u directions, Gb/s %.3f..%.3f (mean %.3f, all %.3f)", t->name, r + 1, rounds, dirs,
		       dirs ? lo : 0, hi, dirs ? sum / dirs : 0, sum);
	printf("%s", errors ? "; ranks with errors: see the report" : "");
	{ /* engines that started late: the comparison between ranks is off by that much */
		double spread = json_number_value(json_object_get(rec, "start_spread_ms"));
		if (spread > t->duration_s * 1e3 / 10)
			printf("; the engines started %.0f ms apart: raise cluster.start_margin_s", spread);
	}
	printf("\n");
	fflush(stdout);
	(void)j;
}

/* Whom this rank sends to and receives from in the round's flows (to and from: room for n). */
static void my_flows(const struct cl_pair *f, unsigned k, unsigned me, unsigned *to, unsigned *from,
		     struct cl_step_peers *pe)
{
	*pe = (struct cl_step_peers){ .to = to, .from = from };
	for (unsigned i = 0; i < k; i++) {
		if (f[i].a == me)
			to[pe->n_to++] = f[i].b;
		if (f[i].b == me)
			from[pe->n_from++] = f[i].a;
	}
}

/* Rank 0 sits this round out: it still prints the others' live lines until the round's end. */
static void live_while_sitting_out(struct live *live, const struct job *j, double until_unix_s)
{
	while (!j->interrupted && wall_s() < until_unix_s) {
		live_tick(live, NULL);
		nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000 * 1000 }, NULL);
	}
}

/* One round of a test on this rank; rank 0 keeps the record. 0, or an exit status. */
static int run_round(struct job *j, const struct cl_test *t, unsigned step, unsigned r, json_t *rounds)
{
	const unsigned n = (unsigned)j->comm.size, me = (unsigned)j->comm.rank;
	struct live live;
	bool live_on = j->cfg.live_interval_s > 0 && live_begin(&live, j, t, step, r, schedule_test_rounds(t, n)) == 0;
	const struct cl_step_env env = { .cfg = &j->cfg, .ep = j->ep, .n_ranks = n, .engine = j->engine, .work = j->work,
					 .job = j->id, .main_cpu = j->main_cpu, .worker_cpu = j->worker_cpu,
					 .interrupted = &j->interrupted, .tick = live_on ? live_tick : NULL,
					 .tick_arg = live_on ? &live : NULL };
	struct cl_pair *f = calloc(schedule_max_flows(t, n), sizeof(*f));
	unsigned *to = calloc(n, sizeof(*to)), *from = calloc(n, sizeof(*from));
	unsigned k = f ? schedule_test_flows(t, n, r, f) : 0;
	struct cl_step_peers pe;
	double start_at = me == 0 ? wall_s() + j->cfg.start_margin_s : 0;
	double wait = j->cfg.start_margin_s + t->duration_s + j->cfg.step_timeout_s + 10;
	json_t *mine;
	char *text;
	int rc = 0;

	if (!f || !to || !from || comm_bcast(&start_at, (int)sizeof(start_at), 0, CL_COMM_TIMEOUT_S)) {
		rc = f && to && from ? CLUSTER_EXIT_MISSING : CLUSTER_EXIT_INIT;
		goto out;
	}
	my_flows(f, k, me, to, from, &pe);
	if (me == 0 && live_on && !pe.n_to && !pe.n_from)
		live_while_sitting_out(&live, j, start_at + t->duration_s + j->cfg.live_interval_s);
	mine = step_run(&env, me, t, step, &pe, start_at + (double)j->before[me].offset_ns / 1e9);
	if (me != 0) {
		text = json_dumps(mine, JSON_COMPACT);
		json_decref(mine);
		if (!text || comm_send_string(text, TAG_STEP + (int)step, wait))
			rc = CLUSTER_EXIT_MISSING;
		free(text);
		goto out;
	}
	{
		char **got = calloc(n, sizeof(*got));
		json_t *rec;
		comm_gather_strings(&j->comm, TAG_STEP + (int)step, got, wait); /* the missing: marked below */
		rec = round_record(j, t, r, f, k, got, mine, start_at);
		free(got);
		live_line(j, t, r, schedule_test_rounds(t, n), rec);
		json_array_append_new(rounds, rec);
	}
out:
	if (live_on)
		live_end(&live);
	free(f);
	free(to);
	free(from);
	return rc;
}

/* A rank whose engine refused its config or could not start (exit 3 or 4: a bad port, a missing
 * device) ends the job: one line naming it, its host and the engine's reason. */
static int cannot_start(const json_t *rounds)
{
	const json_t *rec = json_array_get(rounds, json_array_size(rounds) - 1), *s;
	size_t i;

	json_array_foreach(json_object_get(rec, "ranks"), i, s) {
		json_int_t code = json_integer_value(json_object_get(s, "exit_code"));
		if (json_object_get(s, "error") && (code == 3 || code == 4)) {
			fprintf(stderr, "roce-cluster: rank %d (host %s) cannot start its engine: %s\n",
				(int)json_integer_value(json_object_get(s, "rank")),
				json_string_value(json_object_get(s, "host")), json_string_value(json_object_get(s, "error")));
			return CLUSTER_EXIT_INIT;
		}
	}
	return 0;
}

/* Rank 0: whether a rank went missing, each named once. */
static bool any_missing(const struct job *j)
{
	bool any = false;

	for (int r = 0; r < j->comm.size; r++)
		if (j->missing[r]) {
			fprintf(stderr, "roce-cluster: rank %d (host %s) is missing: no summary of its step by the deadline; "
				"the report has the others' results\n", r, j->ep[r].host);
			any = true;
		}
	return any;
}

/* What a test needs of the job's ranks, checked before any runs (every rank alike; rank 0 says
 * it): 0 or CLUSTER_EXIT_CONFIG. */
static int check_test(const struct job *j, const struct cl_test *t)
{
	char why[300];

	cluster_test_fits(t, (unsigned)j->comm.size, why, sizeof(why));
	if (!why[0])
		return 0;
	if (j->comm.rank == 0)
		fprintf(stderr, "roce-cluster: %s:%u: tests: %s: %s\n", j->file, t->line, t->name, why);
	return CLUSTER_EXIT_CONFIG;
}

/* The test's entry in the report, its rounds to come. */
static json_t *test_record(const struct cl_test *t, unsigned n, json_t *rounds)
{
	json_t *o = json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:s,s:s,s:f,s:O}", "name", t->name, "type",
			      cl_test_type_names[t->type], "measure", cl_measure_names[t->measure], "message_size",
			      (int)t->message_size, "mtu", (int)t->mtu, "qps_per_pair", (int)t->qps_per_pair, "transport",
			      cl_transport_names[t->transport], "cc", cl_cc_names[t->cc], "duration_s", t->duration_s,
			      "rounds", rounds);
	static const char *const sched[] = { "round_robin", "half", "file" };

	if (t->type == CL_TEST_PAIRWISE)
		json_object_set_new(o, "schedule", json_string(sched[t->schedule]));
	if (t->schedule == CL_SCHED_FILE)
		json_object_set_new(o, "pairs_file", json_string(t->pairs_file));
	if (t->type == CL_TEST_INCAST)
		json_object_set_new(o, "root", json_integer(t->root));
	if (t->type == CL_TEST_PERMUTATION)
		json_object_set_new(o, "seed", json_integer((json_int_t)t->seed));
	if (t->type == CL_TEST_COLLECTIVE) {
		json_object_del(o, "measure");
		json_object_set_new(o, "op", json_string(cl_op_names[t->op]));
		json_object_set_new(o, "algorithm", json_string(t->op == CL_OP_ALLTOALL ? "direct" : "ring"));
		json_object_set_new(o, "iterations", json_integer(t->iterations));
		json_object_set_new(o, "phases_per_iteration", json_integer(coll_phases(t->op, n)));
		json_object_set_new(o, "message_per_qp", json_integer(coll_message_per_qp(t, n)));
		json_object_set_new(o, "compute_ms", json_real(t->compute_ms));
	}
	return o;
}

int job_run_tests(struct job *j)
{
	unsigned step = 0;
	bool sla;
	int rc;

	for (unsigned i = 0; i < j->cfg.n_tests; i++)
		if ((rc = check_test(j, &j->cfg.tests[i])))
			return rc;
	for (unsigned i = 0; i < j->cfg.n_tests; i++) {
		const struct cl_test *t = &j->cfg.tests[i];
		const unsigned rounds_n = schedule_test_rounds(t, (unsigned)j->comm.size);
		json_t *rounds = json_array();
		if (j->comm.rank == 0)
			json_array_append_new(j->tests, test_record(t, (unsigned)j->comm.size, rounds));
		for (unsigned r = 0; r < rounds_n; r++) {
			int32_t go = run_round(j, t, step++, r, rounds);
			if (go)
				return go;
			if (j->comm.rank == 0) { /* whether the job goes on: rank 0 says, for every rank */
				job_write_report(j, false, &sla); /* what was measured survives a job that dies */
				go = cannot_start(rounds);
				if (!go && any_missing(j))
					go = CLUSTER_EXIT_MISSING;
			}
			if (comm_bcast(&go, (int)sizeof(go), 0, CL_COMM_TIMEOUT_S))
				return CLUSTER_EXIT_MISSING;
			if (go)
				return go;
		}
		json_decref(rounds);
	}
	return 0;
}

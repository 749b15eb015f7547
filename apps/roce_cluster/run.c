/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The tests, step by step (job.h). A step: rank 0 names the start (its clock, a margin ahead),
 * every rank runs its engine from that time on its own clock (rank 0's time plus its offset), and
 * sends its step's summary to rank 0, which waits for each until the step's deadline and marks
 * the ranks whose summary did not come as missing. A pairwise test steps through the rounds of
 * its schedule (schedule.h), each rank in one pair a round, both directions of each pair at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "job.h"
#include "schedule.h"

#define TAG_STEP 100 /* + the step's number */

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* This rank's partner in the round's pairs, or -1. */
static int partner(const struct cl_pair *p, unsigned k, unsigned rank)
{
	for (unsigned i = 0; i < k; i++)
		if (p[i].a == rank || p[i].b == rank)
			return (int)(p[i].a == rank ? p[i].b : p[i].a);
	return -1;
}

static unsigned round_pairs(const struct job *j, const struct cl_test *t, unsigned r, struct cl_pair *out)
{
	const unsigned n = (unsigned)j->comm.size;

	return t->schedule == CL_SCHED_HALF ? schedule_half(n, out) : schedule_round_robin(n, r, out);
}

static unsigned rounds_of(const struct job *j, const struct cl_test *t)
{
	return t->schedule == CL_SCHED_HALF ? 1 : schedule_rounds((unsigned)j->comm.size);
}

/* Rank 0's summary of a round: the summaries gathered, the ranks missing, a live line. */
static json_t *round_record(struct job *j, unsigned r, const struct cl_pair *p, unsigned k, char **got, json_t *mine,
			    double start_at)
{
	json_t *pairs = json_array(), *ranks = json_array();

	for (unsigned i = 0; i < k; i++)
		json_array_append_new(pairs, json_pack("[i,i]", (int)p[i].a, (int)p[i].b));
	json_array_append_new(ranks, mine);
	for (int q = 1; q < j->comm.size; q++) {
		json_error_t e;
		json_t *s = got[q] ? json_loads(got[q], 0, &e) : NULL;
		if (!s) {
			j->missing[q] = true;
			s = json_pack("{s:i,s:s}", "rank", q, "error", "missing: no summary by the step's deadline");
		}
		json_array_append_new(ranks, s);
		free(got[q]);
	}
	return json_pack("{s:i,s:o,s:f,s:o}", "round", (int)r, "pairs", pairs, "start_unix_s", start_at, "ranks", ranks);
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
	printf("[%s] round %u/%u: %u directions, %s %.3f..%.3f (mean %.3f)%s%s\n", t->name, r + 1, rounds, dirs,
	       t->measure == CL_MEASURE_LATENCY ? "one-way p50 us" : "Gb/s", dirs ? lo : 0, hi, dirs ? sum / dirs : 0,
	       errors ? "; ranks with errors: " : "", errors ? "see the report" : "");
	fflush(stdout);
	(void)j;
}

/* One round of a pairwise test on this rank; rank 0 keeps the record. 0, or an exit status. */
static int run_round(struct job *j, const struct cl_test *t, unsigned step, unsigned r, json_t *rounds)
{
	const struct cl_step_env env = { .cfg = &j->cfg, .ep = j->ep, .n_ranks = (unsigned)j->comm.size,
					 .engine = j->engine, .work = j->work, .job = j->id, .main_cpu = j->main_cpu,
					 .worker_cpu = j->worker_cpu, .interrupted = &j->interrupted };
	struct cl_pair *p = calloc((size_t)j->comm.size / 2 + 1, sizeof(*p));
	unsigned k = round_pairs(j, t, r, p), to;
	int other = partner(p, k, (unsigned)j->comm.rank);
	double start_at = j->comm.rank == 0 ? wall_s() + CL_START_MARGIN_S : 0;
	double wait = CL_START_MARGIN_S + t->duration_s + j->cfg.step_timeout_s + 10;
	json_t *mine;
	char *text;

	if (comm_bcast(&start_at, (int)sizeof(start_at), 0, CL_COMM_TIMEOUT_S)) {
		free(p);
		return CLUSTER_EXIT_MISSING;
	}
	to = other >= 0 ? (unsigned)other : 0;
	mine = step_run(&env, (unsigned)j->comm.rank, t, step, &to, other >= 0, other >= 0,
			start_at + (double)j->before[j->comm.rank].offset_ns / 1e9);
	if (j->comm.rank != 0) {
		text = json_dumps(mine, JSON_COMPACT);
		json_decref(mine);
		free(p);
		if (!text || comm_send_string(text, TAG_STEP + (int)step, wait)) {
			free(text);
			return CLUSTER_EXIT_MISSING;
		}
		free(text);
		return 0;
	}
	{
		char **got = calloc((size_t)j->comm.size, sizeof(*got));
		json_t *rec;
		comm_gather_strings(&j->comm, TAG_STEP + (int)step, got, wait); /* the missing: marked below */
		rec = round_record(j, r, p, k, got, mine, start_at);
		free(got);
		live_line(j, t, r, rounds_of(j, t), rec);
		json_array_append_new(rounds, rec);
	}
	free(p);
	return 0;
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

int job_run_tests(struct job *j)
{
	unsigned step = 0;
	bool sla;

	for (unsigned i = 0; i < j->cfg.n_tests; i++) {
		const struct cl_test *t = &j->cfg.tests[i];
		json_t *rounds = json_array();
		if (j->comm.rank == 0)
			json_array_append_new(j->tests, json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:f,s:O}", "name", t->name, "type",
								  cl_test_type_names[t->type], "measure",
								  cl_measure_names[t->measure], "schedule",
								  t->schedule == CL_SCHED_HALF ? "half" : "round_robin",
								  "message_size", (int)t->message_size, "qps_per_pair",
								  (int)t->qps_per_pair, "duration_s", t->duration_s,
								  "rounds", rounds));
		for (unsigned r = 0; r < rounds_of(j, t); r++) {
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

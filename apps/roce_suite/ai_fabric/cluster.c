/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Across hosts (ai_fabric.cluster): the categories that can go across a cluster (§9 collectives,
 * §10.1 JCT) as one roce-cluster job (docs/cluster.md) over the ranks the user's launcher starts
 * (mpirun, srun), on the ports or the local lab of the user's cluster file. The suite derives the
 * job's file from that one: its cluster, lab and ports groups as written, a collective test per
 * op of §9 and per (S, C) of §10.1 in place of its tests, no sla (the suite judges). The first
 * category that needs the job launches it and waits for it with a deadline; each category then
 * reads its tests from rank 0's cluster-report.json: each iteration's time there (the ranks'
 * phase ends moved onto rank 0's clock by their offsets) becomes its busBW or JCT by the suite's
 * own formulas (kpi.h), in the same tables as the fabric's.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aif_ctx.h"
#include "cluster.h"
#include "coll_model.h"
#include "config_tree.h"
#include "engine_child.h"
#include "verdict.h"

#define JOB_START_S 60.0    /* MPI's start, the lab switch's, the clock ping-pongs: beyond the steps */
#define JOB_STOP_GRACE_S 20.0 /* a stopped job's ranks stop their engines and the lab switch, and write the report */
#define MACHINE_SHARE 0.01  /* a rank whose lcores were held up longer than this share of its step */

/* A step's duration: what bounds a collective that stalls (its phases end the step sooner), as the
 * fabric's collective trials bound theirs, compute steps included. */
static double step_bound_s(unsigned bytes, unsigned iterations, double compute_ms, double link_gbps)
{
	return 10 + 1e-9 * 8 * bytes * 2.0 * iterations / link_gbps * 20 + 2e-3 * compute_ms * iterations;
}

void aif_cluster_jct_name(unsigned bytes, double compute_ms, char *out, size_t len)
{
	text_printf(out, len, "jct%u-%g", bytes, compute_ms);
}

static void add_test(config_setting_t *tests, const struct aif_cluster_cfg *k, const char *name, enum kpi_collective op,
		     unsigned bytes, unsigned iterations, double compute_ms, double *bound_s)
{
	config_setting_t *t = config_setting_add(tests, NULL, CONFIG_TYPE_GROUP);
	double d = step_bound_s(bytes, iterations, compute_ms, k->link_gbps);

	cfg_set_string(t, "name", name);
	cfg_set_string(t, "type", "collective");
	cfg_set_string(t, "op", cl_op_names[coll_op_of_kpi(op)]);
	cfg_set_int(t, "message_size", bytes);
	cfg_set_int(t, "mtu", AIF_IB_MTU);
	cfg_set_int(t, "qps_per_pair", k->qps_per_pair);
	cfg_set_string(t, "transport", "rc");
	cfg_set_int(t, "iterations", iterations);
	if (compute_ms > 0)
		cfg_set_float(t, "compute_ms", compute_ms);
	cfg_set_float(t, "duration_s", d);
	*bound_s += d + k->step_timeout_s + 10;
}

/* The tests of every category that goes across: §9's ops, §10.1's (S, C) points. */
static void add_tests(const struct aif_ctx *x, config_setting_t *tests, double *bound_s)
{
	const struct aif_cluster_cfg *k = &x->c->cluster;
	const struct aif_collectives_cfg *cc = &x->c->coll;
	const struct aif_jct_cfg *jc = &x->c->jct;
	char name[CL_NAME_LEN];

	for (unsigned i = 0; k->across[AIF_COLLECTIVES] && i < cc->n_ops; i++)
		add_test(tests, k, kpi_collective_names[cc->ops[i]], cc->ops[i], cc->message_size, cc->iterations, 0, bound_s);
	for (unsigned b = 0; k->across[AIF_JCT] && b < jc->n_sizes; b++)
		for (unsigned c = 0; c < jc->n_compute; c++) {
			aif_cluster_jct_name(jc->message_sizes[b], jc->compute_ms[c], name, sizeof(name));
			add_test(tests, k, name, KPI_ALLREDUCE, jc->message_sizes[b], jc->iterations, jc->compute_ms[c], bound_s);
		}
}

/* The user's file with the suite's tests in place of its own, into path, and the job's deadline
 * beyond its start in *bound_s; 0, or -1 with why. */
static int derive_file(const struct aif_ctx *x, const char *dir, const char *path, double *bound_s, char *why, size_t len)
{
	const struct aif_cluster_cfg *k = &x->c->cluster;
	struct config_reader r;
	config_t c;
	config_setting_t *root, *cl;
	char abs[PATH_MAX], err[1024];
	int rc = 0;

	cr_init(&r, k->file, err, sizeof(err), "cluster configuration");
	if (cr_parse_file(&r, k->file, &c)) {
		text_printf(why, len, "%s", err);
		config_destroy(&c);
		return -1;
	}
	root = config_root_setting(&c);
	cfg_remove(root, "tests");
	cfg_remove(root, "sla");
	cl = cfg_group(root, "cluster");
	cfg_set_string(cl, "results", dir);
	if (!config_setting_get_member(cl, "engine") || !config_setting_get_string(config_setting_get_member(cl, "engine"))[0])
		cfg_set_string(cl, "engine", realpath(x->rn->engine, abs) ? abs : x->rn->engine);
	*bound_s = JOB_START_S;
	add_tests(x, config_setting_add(root, "tests", CONFIG_TYPE_LIST), bound_s);
	if (config_write_file(&c, path) != CONFIG_TRUE) {
		text_printf(why, len, "cannot write %s: %s", path, strerror(errno));
		rc = -1;
	}
	config_destroy(&c);
	return rc;
}

/* s as one shell word: in single quotes, each ' in it as '\'' ; 0, or -1 when it does not fit. */
static int shell_word(const char *s, char *out, size_t len, size_t *n)
{
	if (*n + 1 >= len)
		return -1;
	out[(*n)++] = '\'';
	for (; *s; s++) {
		const char *piece = *s == '\'' ? "'\\''" : NULL;
		size_t k = piece ? strlen(piece) : 1;
		if (*n + k + 2 >= len)
			return -1;
		memcpy(out + *n, piece ? piece : s, k);
		*n += k;
	}
	out[(*n)++] = '\'';
	out[*n] = '\0';
	return 0;
}

/* "exec LAUNCHER 'ROCE-CLUSTER' 'FILE'", {ranks} replaced (exec: the shell becomes the launcher,
 * so that the launcher is what a stop or roce-suite's end signals); 0, or -1 when it does not fit. */
static int command_line(const struct aif_ctx *x, const char *prog, const char *file, char *out, size_t len)
{
	const char *l = x->c->cluster.launcher, *at;
	size_t n = strlen("exec ");
	int w;

	memcpy(out, "exec ", n + 1);

	while ((at = strstr(l, "{ranks}"))) {
		w = snprintf(out + n, len - n, "%.*s%u", (int)(at - l), l, x->c->cluster.ranks);
		if (w < 0 || (size_t)w >= len - n)
			return -1;
		n += (size_t)w;
		l = at + strlen("{ranks}");
	}
	w = snprintf(out + n, len - n, "%s ", l);
	if (w < 0 || (size_t)w >= len - n)
		return -1;
	n += (size_t)w;
	if (shell_word(prog, out, len, &n) || n + 1 >= len)
		return -1;
	out[n++] = ' ';
	return shell_word(file, out, len, &n);
}

/* The command by /bin/sh, as engine_child runs an engine: its own process group (a deadline or a
 * Ctrl-C stops every rank it started: SIGTERM, which mpirun passes to the ranks, so that they stop
 * their engines and rank 0 its lab switch and writes the report so far; SIGKILL after
 * JOB_STOP_GRACE_S), SIGTERM when roce-suite dies, its output into log. Its wait status, or -1
 * with why. */
static int launch(const char *cmd, const char *log, double timeout_s, char *why, size_t len)
{
	const char *const argv[] = { "/bin/sh", "-c", cmd, NULL };
	bool timed_out, interrupted;
	pid_t pid = engine_child_spawn(argv, ".", log);
	int st;

	if (pid < 0) {
		text_printf(why, len, "cannot start the launcher: %s", strerror(errno));
		return -1;
	}
	st = engine_child_await_grace(pid, engine_child_now_s() + timeout_s, &suite_interrupted, JOB_STOP_GRACE_S,
				      &timed_out, &interrupted);
	if (timed_out || interrupted) {
		text_printf(why, len, "%s (the deadline: %.0f s; its output: %s)",
			    interrupted ? "interrupted" : "stopped at its deadline", timeout_s, log);
		return -1;
	}
	return st;
}

/* Why the job ended, from its output: roce-cluster's first line (its ranks say why they stop
 * there), else the launcher's last, else the last line. */
static void log_reason(const char *log, char *out, size_t len)
{
	FILE *f = fopen(log, "r");
	char line[1024];
	bool own = false;

	text_printf(out, len, "no output");
	if (!f)
		return;
	while (!own && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		own = !strncmp(line, "roce-cluster", 12);
		if (line[0] && (own || strstr(line, "mpirun") || strstr(line, "srun") || strstr(line, "ERROR")))
			text_printf(out, len, "%s", line);
	}
	fclose(f);
}

static int job_run(struct aif_ctx *x, struct aif_cluster_job *j)
{
	char dir[PATH_MAX], file[PATH_MAX + 16], log[PATH_MAX + 16], rep[PATH_MAX + 32], prog[PATH_MAX], cmd[4 * PATH_MAX];
	char why[600];
	double timeout_s;
	json_error_t jerr;
	int st;

	text_printf(dir, sizeof(dir), "%s/cluster", x->c->results);
	if (aif_mkdir_p(dir) || !realpath(dir, prog)) {
		text_printf(j->error, sizeof(j->error), "cannot make %s: %s", dir, strerror(errno));
		return -1;
	}
	text_printf(dir, sizeof(dir), "%s", prog);
	text_printf(j->dir, sizeof(j->dir), "%s", dir);
	text_printf(file, sizeof(file), "%s/job.cfg", dir);
	text_printf(log, sizeof(log), "%s/job.log", dir);
	text_printf(rep, sizeof(rep), "%s/cluster-report.json", dir);
	if (aif_tool_path(x, "roce-cluster", prog, sizeof(prog))) {
		text_printf(j->error, sizeof(j->error), "cannot run %s (beside roce-engine; built with Open MPI): %s", prog,
			    strerror(errno));
		return -1;
	}
	if (derive_file(x, dir, file, &timeout_s, j->error, sizeof(j->error)))
		return -1;
	if (command_line(x, prog, file, cmd, sizeof(cmd))) {
		text_printf(j->error, sizeof(j->error), "the launcher's command line is too long");
		return -1;
	}
	unlink(rep);
	printf("  %s\n", cmd);
	fflush(stdout);
	if ((st = launch(cmd, log, timeout_s, j->error, sizeof(j->error))) == -1)
		return -1;
	if (!(j->report = json_load_file(rep, 0, &jerr))) {
		log_reason(log, why, sizeof(why));
		text_printf(j->error, sizeof(j->error), "no report from roce-cluster (exit status %d): %s (%s)",
			    WIFEXITED(st) ? WEXITSTATUS(st) : -1, why, log);
		return -1;
	}
	j->status = json_is_integer(json_object_get(j->report, "exit_status"))
			    ? (int)json_integer_value(json_object_get(j->report, "exit_status"))
			    : (WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	j->n_ranks = (unsigned)jnum(j->report, "n_ranks");
	j->n_missing = (unsigned)json_array_size(json_object_get(j->report, "missing_ranks"));
	if (j->status == 3 || j->status == 4) { /* refused, or a rank could not start: nothing ran */
		log_reason(log, why, sizeof(why));
		text_printf(j->error, sizeof(j->error), "roce-cluster exit status %d: %s (%s)", j->status, why, log);
		return -1;
	}
	j->ran = true;
	return 0;
}

/* The job's lines; a job that did not run is the suite's error, as a trial that did not run. */
static void job_said(struct aif_ctx *x, struct aif_cluster_job *j)
{
	const struct aif_cluster_cfg *k = &x->c->cluster;

	if (j->ran) {
		if (j->n_ranks != k->ranks)
			aif_anomaly(x, AIF_COLLECTIVES, "the launcher started %u ranks; the suite asked for %u", j->n_ranks, k->ranks);
		j->summary = json_pack("{s:s,s:s,s:i,s:i,s:i,s:f,s:b,s:s}", "file", k->file, "launcher", k->launcher, "ranks",
				       (int)j->n_ranks, "missing_ranks", (int)j->n_missing, "exit_status", j->status,
				       "link_gbps", k->link_gbps, "local_lab", k->lab, "report", "cluster/cluster-report.json");
		return;
	}
	fprintf(stderr, "[ai_fabric] the roce-cluster job: %s\n", j->error);
	x->rn->n_errors++;
	if (suite_interrupted) {
		x->rn->stop = true;
		x->rn->exit_status = EXIT_INTERRUPTED;
		text_printf(x->rn->stop_reason, sizeof(x->rn->stop_reason), "interrupted (roce-suite got a signal)");
	} else if (!x->rn->exit_status) {
		x->rn->exit_status = EXIT_TRIAL;
	}
	aif_anomaly(x, k->across[AIF_COLLECTIVES] ? AIF_COLLECTIVES : AIF_JCT, "the roce-cluster job did not run: %s", j->error);
	j->summary = json_pack("{s:s,s:s,s:s}", "file", k->file, "launcher", k->launcher, "error", j->error);
}

const struct aif_cluster_job *aif_cluster_job(struct aif_ctx *x)
{
	if (!x->job.tried) {
		const struct aif_cluster_cfg *k = &x->c->cluster;
		printf("\nacross %u ranks (roce-cluster, %s; links %g Gb/s):%s%s\n", k->ranks, k->file, k->link_gbps,
		       k->across[AIF_COLLECTIVES] ? " §9 collectives" : "", k->across[AIF_JCT] ? " §10.1 JCT" : "");
		job_run(x, &x->job);
		x->job.tried = true;
		job_said(x, &x->job);
	}
	return &x->job;
}

void aif_cluster_job_free(struct aif_cluster_job *j)
{
	json_decref(j->report);
	json_decref(j->summary);
	j->report = j->summary = NULL;
}

/* The test `name` in the job's report, or NULL. */
static const json_t *test_of(const struct aif_cluster_job *j, const char *name)
{
	const json_t *t;
	size_t i;

	json_array_foreach(json_object_get(j->report, "tests"), i, t)
		if (!strcmp(json_string_value(json_object_get(t, "name")) ?: "", name))
			return t;
	return NULL;
}

/* A rank's own engine report of the step (its path relative to the job's folder): its RC packets
 * sent and sent again, and the PFC XOFF frames its port received, added to s. */
static void rank_report(const struct aif_cluster_job *j, const char *file, struct aif_cluster_step *s)
{
	char path[PATH_MAX + 64];
	const json_t *e;
	json_t *rep;
	size_t i;

	if (!file)
		return;
	text_printf(path, sizeof(path), "%s/%s", j->dir, file);
	if (!(rep = json_load_file(path, 0, NULL)))
		return;
	json_array_foreach(json_object_get(rep, "flows"), i, e) {
		s->tx_packets += (uint64_t)jnum(e, "tx_packets");
		s->retransmits += (uint64_t)jnum(e, "retransmits");
	}
	json_array_foreach(json_object_get(rep, "ports"), i, e)
		s->pause_rx += (uint64_t)jsum(e, "pfc_rx_xoff"); /* (per priority) */
	s->reports_read++;
	json_decref(rep);
}

unsigned aif_cluster_iterations(const struct aif_cluster_job *j, const char *test, double *iter_s, double *total_s,
				struct aif_cluster_step *s)
{
	const json_t *t = test_of(j, test), *summary = json_object_get(t, "summary"), *c = json_object_get(summary, "collective");
	const json_t *ranks = json_object_get(json_array_get(json_object_get(t, "rounds"), 0), "ranks"), *r, *v;
	unsigned n = 0;
	size_t i;

	memset(s, 0, sizeof(*s));
	*total_s = 0;
	json_array_foreach(json_object_get(c, "iteration_us"), i, v)
		if (n < AIF_MAX_ITER) {
			iter_s[n++] = json_number_value(v) / 1e6;
			*total_s += json_number_value(v) / 1e6;
		}
	s->ranks_reporting = (unsigned)jnum(c, "ranks_reporting");
	s->busbw_mean_gbps = jnum(json_object_get(c, "busbw_gbps"), "mean");
	json_array_foreach(ranks, i, r) {
		rank_report(j, json_string_value(json_object_get(r, "report_file")), s);
		s->held_up_ms = fmax(s->held_up_ms, jnum(r, "held_up_ms"));
		s->step_s = fmax(s->step_s, jnum(r, "duration_s"));
		s->stray_bytes += (uint64_t)jnum(r, "stray_payload_bytes");
		if (json_object_get(r, "error"))
			s->errors++;
	}
	s->machine_limited = s->held_up_ms > MACHINE_SHARE * 1e3 * s->step_s;
	return n;
}

void aif_cluster_step_row(struct aif_ctx *x, const struct aif_cluster_job *j, const struct aif_cluster_step *s,
			  unsigned n, const char *what, json_t *row)
{
	json_object_set_new(row, "where", json_string("cluster"));
	json_object_set_new(row, "ranks_reporting", json_integer(s->ranks_reporting));
	json_object_set_new(row, "held_up_ms_max", json_real(s->held_up_ms));
	suite_verdict(x->rn, s->ranks_reporting == n && !s->errors && !j->n_missing, "cluster_ranks_report",
		      "%s: %u of %u ranks reported, %u failed steps, %u missing", what, s->ranks_reporting, n, s->errors,
		      j->n_missing);
}

void aif_cluster_machine_limit(struct aif_ctx *x, const struct aif_cluster_step *s, const char *what, const char *figure,
			       json_t *row)
{
	machine_limit(x->rn, row, "%s: machine-limited (a rank's lcore was held up %.0f ms, its step %.3f s): %s is partly "
		      "the CPUs'", what, s->held_up_ms, s->step_s, figure);
}

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
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aif_ctx.h"
#include "cluster.h"
#include "config_tree.h"
#include "engine_child.h"

#define JOB_START_S 60.0    /* MPI's start, the lab switch's, the clock ping-pongs: beyond the steps */
#define JOB_STOP_GRACE_S 20.0 /* a stopped job's ranks stop their engines and the lab switch, and write the report */
#define MACHINE_SHARE 0.01  /* a rank whose lcores were held up longer than this share of its step */

/* A step's duration: what bounds a collective that stalls (its phases end the step sooner), as the
 * fabric's collective trials bound theirs, compute steps included. */
static double step_bound_s(unsigned bytes, unsigned iterations, double compute_ms, double link_gbps)
{
	return 10 + 1e-9 * 8 * bytes * 2.0 * iterations / link_gbps * 20 + 2e-3 * compute_ms * iterations;
}

static const char *cluster_op(enum kpi_collective op)
{
	return op == KPI_ALLTOALL ? "alltoall" : op == KPI_ALLREDUCE ? "allreduce" : "allgather";
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
	cfg_set_string(t, "op", cluster_op(op));
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

/* Waits for the launcher until the deadline or a Ctrl-C, then stops its group: SIGTERM (mpirun
 * passes it to the ranks, which stop their engines and rank 0 its lab switch, and write the report
 * so far), SIGKILL after JOB_STOP_GRACE_S. Its wait status; *stopped says why it was stopped. */
static int await_job(pid_t pid, double deadline, const char **stopped)
{
	double kill_at = 0;
	int st = 0;

	*stopped = NULL;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		double now = engine_child_now_s();
		if (w == pid || (w < 0 && errno != EINTR))
			return st;
		if (!*stopped && (suite_interrupted || now > deadline)) {
			*stopped = suite_interrupted ? "interrupted" : "stopped at its deadline";
			kill(-pid, SIGTERM);
			kill_at = now + JOB_STOP_GRACE_S;
		} else if (*stopped && kill_at > 0 && now > kill_at) {
			kill(-pid, SIGKILL);
			kill_at = 0;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 20000000L }, NULL);
	}
}

/* The command in its own process group (so that a deadline or a Ctrl-C stops every rank it
 * started), its output into log; its wait status, or -1 with why. */
static int launch(const char *cmd, const char *log, double timeout_s, char *why, size_t len)
{
	pid_t parent = getpid(), pid = fork();
	const char *stopped;
	int st;

	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM); /* (roce-suite killed outright: the job ends too) */
		if (getppid() != parent)
			_exit(127);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (pid < 0) {
		text_printf(why, len, "cannot start the launcher: %s", strerror(errno));
		return -1;
	}
	setpgid(pid, pid);
	st = await_job(pid, engine_child_now_s() + timeout_s, &stopped);
	if (stopped) {
		text_printf(why, len, "%s (the deadline: %.0f s; its output: %s)", stopped, timeout_s, log);
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
	text_printf(prog, sizeof(prog), "%s", x->rn->engine);
	text_printf(prog, sizeof(prog), "%s/roce-cluster", dirname(strcpy(cmd, prog)));
	if (access(prog, X_OK)) {
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

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The trial runner (trial.h). Each trial gets a folder tNNN/ in the trials' folder holding
 * trial.cfg (config_write_file of the trial's tree), report.json and engine.log, and runs
 * `roce-engine -f trial.cfg -q -r report.json [-d S]` there, so that relative paths of the config
 * (traces) land in it too, as a child process (engine_child.h): a Ctrl-C at the terminal reaches
 * roce-suite only, which stops the trial itself (SIGTERM: the engine still writes its report) and
 * then ends the suite.
 */
#include "trial.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine_child.h"
#include "lab.h"
#include "verdict.h"

volatile int suite_interrupted;

static const char *const status_names[] = { "ok", "timeout", "crashed", "failed", "no report", "config refused",
					    "not run", "interrupted" };

const char *trial_status_name(enum trial_status st)
{
	return status_names[st];
}

int runner_init(struct runner *rn, const struct suite_cfg *s, const char *engine, const char *keep_dir)
{
	const char *tmp = getenv("TMPDIR");

	memset(rn, 0, sizeof(*rn));
	rn->engine = engine;
	rn->s = s;
	rn->trials = json_array();
	rn->verdicts = json_array();
	if (keep_dir) {
		rn->keep = true;
		text_printf(rn->dir, sizeof(rn->dir), "%s", keep_dir);
		return mkdir(keep_dir, 0755) && errno != EEXIST ? -1 : 0;
	}
	text_printf(rn->dir, sizeof(rn->dir), "%s/roce-suite-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	return mkdtemp(rn->dir) ? 0 : -1;
}

bool runner_refused(const struct runner *rn)
{
	return rn->stop && rn->exit_status == EXIT_CONFIG;
}

void runner_finish(struct runner *rn)
{
	if (!rn->keep && rn->dir[0])
		engine_child_rm_tree(rn->dir);
	json_decref(rn->trials);
	json_decref(rn->verdicts);
	rn->trials = rn->verdicts = NULL;
}

void trial_init(struct trial *t, const char *kind, const char *fmt, ...)
{
	va_list ap;

	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->duration_s = -1;
	t->params = json_object();
	va_start(ap, fmt);
	vsnprintf(t->label, sizeof(t->label), fmt, ap);
	va_end(ap);
}

void trial_release(struct trial *t)
{
	json_decref(t->report);
	json_decref(t->params);
	t->report = t->params = NULL;
}

/* ---- what went wrong ---------------------------------------------------------------------------- */

/* "trial.cfg:LINE: SETTING: message" -> the suite file's (or the base's) line of SETTING, so that
 * the user sees which of their settings the engine refused. */
static void refused_reason(const struct runner *rn, const char *line, unsigned id, char *out, size_t len)
{
	const char *p = strchr(line, ' '), *q, *at = NULL;
	char setting[256], where[CR_AT_LEN];

	if (!p || !(q = strstr(p + 1, ": ")) || (size_t)(q - p - 1) >= sizeof(setting)) {
		text_printf(out, len, "roce-engine refused trial %u's config: %s", id, line);
		return;
	}
	text_printf(setting, sizeof(setting), "%.*s", (int)(q - p - 1), p + 1);
	if (!strncmp(setting, "switch", 6))
		at = suite_config_where(rn->s, setting, where, sizeof(where));
	if (at)
		text_printf(out, len, "%s: %s: %s (roce-engine, of the switch group this file gives the trials)", at,
			 setting, q + 2);
	else
		text_printf(out, len, "roce-engine refused trial %u's config (made from %s): %s", id,
			 rn->s->base[0] ? rn->s->base : rn->s->file, line);
}

static void classify(struct runner *rn, struct trial *t, int st, bool timed_out, bool interrupted, unsigned id,
		     const char *tdir)
{
	char log[4200], rep[4200], why[1024];
	json_error_t jerr;

	text_printf(log, sizeof(log), "%s/engine.log", tdir);
	text_printf(rep, sizeof(rep), "%s/report.json", tdir);
	engine_child_log_reason(log, "trial.cfg", why, sizeof(why));
	t->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? WTERMSIG(st) : -1;
	if (interrupted) {
		t->status = TRIAL_INTERRUPTED;
		text_printf(t->error, sizeof(t->error), "interrupted (roce-suite got a signal)");
	} else if (timed_out) {
		t->status = TRIAL_TIMEOUT;
		text_printf(t->error, sizeof(t->error), "no end after %.1f s: killed", t->wall_s);
	} else if (WIFSIGNALED(st)) {
		t->status = TRIAL_CRASHED;
		text_printf(t->error, sizeof(t->error), "killed by signal %d (%s): %s", t->exit_code, strsignal(t->exit_code), why);
	} else if (t->exit_code == 3) {
		t->status = TRIAL_REFUSED;
		refused_reason(rn, why, id, t->error, sizeof(t->error));
	} else if (t->exit_code != 0 && t->exit_code != 6) {
		t->status = TRIAL_FAILED;
		text_printf(t->error, sizeof(t->error), "exit status %d: %s", t->exit_code, why);
	} else if (!(t->report = json_load_file(rep, 0, &jerr))) {
		t->status = TRIAL_NO_REPORT;
		text_printf(t->error, sizeof(t->error), "no report (%s): %s", jerr.text, why);
	} else {
		t->status = TRIAL_OK;
	}
}

/* A --keep folder may hold an earlier run's tNNN/: its report must not pass for this trial's. */
static int clear_old_report(const char *tdir)
{
	char path[4300];

	text_printf(path, sizeof(path), "%s/report.json", tdir);
	return unlink(path) && errno != ENOENT ? -1 : 0;
}

/* ---- one trial ---------------------------------------------------------------------------------- */

static void record_start(struct runner *rn, struct trial *t, unsigned id)
{
	t->record = json_object();
	json_object_set_new(t->record, "id", json_integer(id));
	json_object_set_new(t->record, "label", json_string(t->label));
	json_object_set_new(t->record, "kind", json_string(t->kind));
	json_object_set(t->record, "params", t->params);
	json_array_append_new(rn->trials, t->record);
}

static void record_end(struct runner *rn, struct trial *t, const char *tdir)
{
	char path[4200];

	json_object_set_new(t->record, "status", json_string(trial_status_name(t->status)));
	json_object_set_new(t->record, "exit_code", json_integer(t->exit_code));
	json_object_set_new(t->record, "wall_s", json_real(t->wall_s));
	if (t->error[0])
		json_object_set_new(t->record, "error", json_string(t->error));
	if (rn->keep) {
		text_printf(path, sizeof(path), "%s/trial.cfg", tdir);
		json_object_set_new(t->record, "config", json_string(path));
		text_printf(path, sizeof(path), "%s/report.json", tdir);
		json_object_set_new(t->record, "report", t->report ? json_string(path) : json_null());
	}
}

/* After a trial that did not run: counted, and the suite stops when it cannot go on. */
static void trial_failed(struct runner *rn, struct trial *t)
{
	rn->n_errors++;
	if (t->status == TRIAL_REFUSED || t->status == TRIAL_NOT_RUN || suite_interrupted) {
		rn->stop = true;
		text_printf(rn->stop_reason, sizeof(rn->stop_reason), "%s", t->error);
		rn->exit_status = suite_interrupted ? EXIT_INTERRUPTED
				  : t->status == TRIAL_REFUSED ? EXIT_CONFIG : EXIT_IO;
	} else if (!rn->exit_status) {
		rn->exit_status = EXIT_TRIAL;
	}
	if (!rn->quiet)
		fprintf(stderr, "[%s] t%03u %s: %s: %s\n", suite_type_names[rn->s->type], t->id, t->label,
			trial_status_name(t->status), t->error);
	json_object_set_new(t->record, "verdict", json_string("error"));
}

/* A trial whose config has SLA checks (a base config's sla group): the engine's verdict is one of
 * the suite's (its exit status 6 said it failed; the report is valid either way). */
static void sla_verdict(struct runner *rn, struct trial *t)
{
	const json_t *sla = json_object_get(t->report, "sla");
	const char *v = json_string_value(json_object_get(sla, "verdict"));

	if (!sla)
		return;
	json_object_set_new(t->record, "sla", json_string(v ? v : "?"));
	suite_verdict(rn, v && !strcmp(v, "pass"), "sla", "t%03u %s: the engine's SLA checks (the config's sla group)",
		      t->id, t->label);
}

int trial_run(struct runner *rn, config_t *cfg, struct trial *t)
{
	unsigned id = ++rn->n_trials;
	char tdir[4200], path[4300], prefix[64];
	double dur = t->duration_s >= 0 ? t->duration_s : rn->duration_s, t0, timeout;
	bool timed_out = false, interrupted = false;
	pid_t pid;
	int st;

	t->id = id;
	record_start(rn, t, id);
	text_printf(tdir, sizeof(tdir), "%s/t%03u", rn->dir, id);
	text_printf(path, sizeof(path), "%s/trial.cfg", tdir);
	/* a unique EAL file prefix: trials never share a runtime folder, nor with other engines */
	text_printf(prefix, sizeof(prefix), "roce-suite-%d-%u", (int)getpid(), id);
	cfg_set_string(cfg_group(config_root_setting(cfg), "eal"), "file_prefix", prefix);
	if (rn->stop || suite_interrupted) {
		t->status = TRIAL_NOT_RUN;
		text_printf(t->error, sizeof(t->error), "not run: %s", suite_interrupted ? "interrupted" : rn->stop_reason);
	} else if ((mkdir(tdir, 0755) && errno != EEXIST) || config_write_file(cfg, path) != CONFIG_TRUE ||
		   clear_old_report(tdir)) {
		t->status = TRIAL_NOT_RUN;
		text_printf(t->error, sizeof(t->error), "cannot write %s: %s", path, strerror(errno));
	} else if ((pid = engine_child_start(&(struct engine_child){ .engine = rn->engine, .dir = tdir,
			.config = "trial.cfg", .report = "report.json", .log = "engine.log", .duration_s = dur })) < 0) {
		t->status = TRIAL_NOT_RUN;
		text_printf(t->error, sizeof(t->error), "cannot start %s: %s", rn->engine, strerror(errno));
	} else {
		timeout = rn->timeout_s > 0 ? rn->timeout_s : dur > 0 ? 3 * dur + 20 : 60;
		t0 = engine_child_now_s();
		st = engine_child_await(pid, t0 + timeout, &suite_interrupted, &timed_out, &interrupted);
		t->wall_s = engine_child_now_s() - t0;
		engine_child_remove_runtime_dir(prefix);
		classify(rn, t, st, timed_out, interrupted, id, tdir);
	}
	record_end(rn, t, tdir);
	if (t->status == TRIAL_OK && t->files)
		t->files(tdir, t->files_arg);
	if (!rn->keep)
		engine_child_rm_tree(tdir);
	if (t->status == TRIAL_OK) {
		sla_verdict(rn, t);
		return 0;
	}
	trial_failed(rn, t);
	return -1;
}

void trial_verdict(struct runner *rn, struct trial *t, const char *verdict, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	json_object_set_new(t->record, "verdict", json_string(verdict));
	if (!rn->quiet)
		fprintf(stderr, "[%s] t%03u %s: %s: %s (%.1f s)\n", suite_type_names[rn->s->type], t->id, t->label,
			text, verdict, t->wall_s);
}

int trial_measure(struct runner *rn, config_t *cfg, struct trial *t, const struct flow_set *fs, struct metrics *m)
{
	memset(m, 0, sizeof(*m));
	if (trial_run(rn, cfg, t))
		return -1;
	if (metrics_read(t->report, fs, m)) {
		text_printf(t->error, sizeof(t->error), "the report has none of the trial's flows");
		json_object_set_new(t->record, "error", json_string(t->error));
		trial_verdict(rn, t, "error", "%s", t->error);
		rn->n_errors++;
		if (!rn->exit_status)
			rn->exit_status = EXIT_TRIAL;
		return -1;
	}
	metrics_to_json(m, t->record);
	return 0;
}

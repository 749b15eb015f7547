/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The trial runner: one roce-engine child process per trial, with its own config file, EAL file
 * prefix, log and report in the trials' folder, and a deadline. A trial that outlives its
 * timeout gets SIGTERM, then SIGKILL, and is reported as an error; so does one that crashes or
 * leaves no report. The suite goes on either way; only a trial config the engine refuses (a
 * setting of the suite file the engine does not accept) or a signal to roce-suite stops it.
 */
#ifndef ROCE_SUITE_TRIAL_H
#define ROCE_SUITE_TRIAL_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>
#include <libconfig.h>

#include "metrics.h"
#include "suite.h"

enum trial_status {
	TRIAL_OK,         /* ran, report read */
	TRIAL_TIMEOUT,    /* killed at its deadline */
	TRIAL_CRASHED,    /* ended by a signal it did not ask for */
	TRIAL_FAILED,     /* exit status other than 0 (and 6, an SLA verdict: the report is valid) */
	TRIAL_NO_REPORT,  /* exited 0 but its report is missing or not JSON */
	TRIAL_REFUSED,    /* the engine refused the config (exit 3): the suite stops */
	TRIAL_NOT_RUN,    /* could not write the config or start the engine */
	TRIAL_INTERRUPTED /* stopped because roce-suite got SIGINT / SIGTERM */
};

struct runner {
	const char *engine;           /* roce-engine */
	char dir[4096];               /* the trials' folder */
	bool keep;                    /* --keep: the folder and every trial's files stay */
	bool quiet;
	const struct suite_cfg *s;
	double duration_s, timeout_s; /* of every trial (the suite's, after command-line overrides) */
	unsigned n_trials, n_errors;
	json_t *trials;               /* the suite report's "trials" */
	bool stop;                    /* refused config or interrupted: no further trials */
	char stop_reason[1024];
	int exit_status;              /* what the suite's errors make it exit with so far (verdicts aside) */
	json_t *verdicts;             /* the suite report's "verdicts" (verdict.h) */
	unsigned n_failed;            /* verdicts that failed */
	unsigned n_machine_limited;   /* results the machine check flagged */
};

struct trial {
	char label[96];               /* for the progress line and the report */
	const char *kind;             /* "search", "latency", "loss", "burst", "baseline", ... */
	json_t *params;               /* the trial's parameters (offered rate, burst, ...); the record takes it */
	double duration_s;            /* < 0: the runner's; 0: no -d (the config's own duration) */
	/* files the trial's config writes (latency samples, traces), read in its folder before the
	 * folder is removed: files(dir, files_arg), when the trial ran (NULL: none) */
	void (*files)(const char *dir, void *arg);
	void *files_arg;
	/* results */
	unsigned id;                  /* tNNN: its folder's number */
	enum trial_status status;
	int exit_code;                /* or the signal for TRIAL_CRASHED */
	double wall_s;
	json_t *report;               /* the engine's report, when status is TRIAL_OK */
	json_t *record;               /* this trial's entry in rn->trials */
	char error[512];
};

extern volatile int suite_interrupted; /* set by SIGINT / SIGTERM (main.c) */

/* The trials' folder: keep_dir (made if missing) or a new temporary one. 0, or -1 with errno. */
int runner_init(struct runner *rn, const struct suite_cfg *s, const char *engine, const char *keep_dir);
/* The engine refused a trial config (or one could not be made): the suite's results mean
 * nothing, its tables are not printed. */
bool runner_refused(const struct runner *rn);
/* Removes the temporary folder (not a kept one). */
void runner_finish(struct runner *rn);

/* Initialises t for one trial: label (printf), kind, a fresh params object. */
void trial_init(struct trial *t, const char *kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Writes cfg, runs the engine on it, reads the report. 0 when t->report is there; -1 otherwise
 * (t->status and t->error say why; rn->stop when the suite cannot go on). */
int trial_run(struct runner *rn, config_t *cfg, struct trial *t);
/* The trial's verdict ("pass", "fail", "error" or "info") and its progress line (unless quiet). */
void trial_verdict(struct runner *rn, struct trial *t, const char *verdict, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void trial_release(struct trial *t);

struct metrics;
struct flow_set;
/* trial_run, then the metrics of the flow set into *m and the trial's record. 0, or -1 when the
 * trial did not run or its report lacks the flows (the verdict is then "error"). */
int trial_measure(struct runner *rn, config_t *cfg, struct trial *t, const struct flow_set *fs, struct metrics *m);

const char *trial_status_name(enum trial_status st);

#endif

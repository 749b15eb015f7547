/* SPDX-License-Identifier: BSD-3-Clause
 *
 * roce-engine as a child process, for the programs that run it step by step (roce-suite's trials,
 * roce-cluster's test steps; and roce-suite's cluster jobs, a launcher as the child): started in
 * a folder of its own with its config, report and log there, in a process group of its own (a
 * Ctrl-C at the terminal reaches the parent only, which stops the child itself), awaited until a
 * deadline, then SIGTERM (the engine still writes its report) and SIGKILL after a grace. No EAL
 * here: the child has its own.
 */
#ifndef ROCE_APPS_ENGINE_CHILD_H
#define ROCE_APPS_ENGINE_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define ENGINE_CHILD_KILL_GRACE_S 3.0 /* after SIGTERM, how long the engine may take to write its report */

/* What a child is run with; its files are named relative to dir. */
struct engine_child {
	const char *engine;      /* roce-engine's path */
	const char *dir;         /* its working folder */
	const char *config;      /* "-f" (in dir) */
	const char *report;      /* "-r" (in dir) */
	const char *log;         /* stdout and stderr (in dir) */
	double duration_s;       /* "-d", when > 0 */
};

/* CLOCK_MONOTONIC in seconds. */
double engine_child_now_s(void);
/* Forks and executes argv (argv[0] a path) in dir, in a process group of its own, its output into
 * log (in dir), SIGTERM to it when its parent dies; the child's pid, or -1. */
pid_t engine_child_spawn(const char *const argv[], const char *dir, const char *log);
/* engine_child_spawn of `engine -f config -q -r report [-d S]`. */
pid_t engine_child_start(const struct engine_child *c);
/* Waits for the child until `deadline` (engine_child_now_s's clock) or until *interrupt becomes
 * non-zero, then stops its group: SIGTERM, SIGKILL after the grace. Returns the wait status;
 * *timed_out and *interrupted say whether it was stopped, and why. */
int engine_child_await(pid_t pid, double deadline, const volatile int *interrupt, bool *timed_out, bool *interrupted);
/* The same with a grace of grace_s before SIGKILL (a child that has children of its own to stop). */
int engine_child_await_grace(pid_t pid, double deadline, const volatile int *interrupt, double grace_s, bool *timed_out,
			     bool *interrupted);
/* The same, calling tick(arg) at every look at the child (every 5 ms) while it runs: the
 * parent's own work meanwhile (roce-cluster's live numbers). */
int engine_child_await_ticking(pid_t pid, double deadline, const volatile int *interrupt, bool *timed_out,
			       bool *interrupted, void (*tick)(void *arg), void *arg);
/* The engine's complaint in its log: the first line naming `config` ("CONFIG:LINE: ..."), else
 * the last line that says "roce-engine:" or "ERROR", else the last line. */
void engine_child_log_reason(const char *log_path, const char *config, char *out, size_t len);
/* EAL's runtime folder of a killed engine with this file prefix (a clean exit removes it). */
void engine_child_remove_runtime_dir(const char *file_prefix);
/* Removes a folder this program made, with what is in it. */
void engine_child_rm_tree(const char *path);

#endif

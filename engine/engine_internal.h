/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Between the engine's files: engine.c (the life cycle) calls plan.c to plan the run and
 * supervise.c to run it. Not part of the public API (engine.h).
 */
#ifndef ROCE_ENGINE_INTERNAL_H
#define ROCE_ENGINE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine.h"
#include "engine_state.h"

/* plan.c: each returns 0, or -1 with err. */
int engine_setup_ports(struct engine *e, char *err, size_t errlen);
int engine_add_role(struct engine *e, const struct cfg_lcore_role *r, char *err, size_t errlen);
int engine_plan_switch(struct engine *e, char *err, size_t errlen);
int engine_plan_qps(struct engine *e, char *err, size_t errlen);
/* The capture's taps handed to their lcores. */
void engine_plan_capture(struct engine *e);
/* The schedules moved to start 10 ms from now (planning took its time). */
void engine_start_after_planning(struct engine *e);
int engine_setup_pfc_generators(struct engine *e, char *err, size_t errlen);

/* supervise.c */
void engine_launch(struct engine *e);
/* Each port's link state at now (changes recorded as link events). */
void engine_poll_links(struct engine *e, uint64_t now);
/* Until the run ends (duration, flows done, a signal); then TX stops, RX drains, RX stops. */
void engine_supervise(struct engine *e, const struct engine_options *opt);
/* run.http_linger_s after the report. */
void engine_linger(struct engine *e);

/* A shell command (/bin/sh -c cmd) in a process group of its own, so that it and what it starts
 * can be killed together; its standard output to out_fd (-1: the engine's), close_fd closed in
 * it (-1: none). 0, or the errno of posix_spawn (link_commands.c). */
int engine_shell_spawn(const char *cmd, int out_fd, int close_fd, pid_t *pid);
/* A waitpid status as a shell gives it: the exit status, or 128 + N when killed by signal N. */
int engine_shell_status(int wait_status);

/* link_commands.c: fabric.external's link events. Each tick starts the commands whose time came
 * and reaps those that ended; pending: one has not ended; finish: after the run, a grace, then
 * SIGKILL for those still going. */
void link_commands_tick(struct engine *e, uint64_t now);
bool link_commands_pending(const struct engine *e);
void link_commands_finish(struct engine *e);

/* dut_counters.c: fabric.external.counters_command read before the traffic (snap 0) and after
 * it drained (1), into run.dut_links[snap] (or run.dut_error). */
void dut_counters_read(struct engine *e, unsigned snap);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A real switch tier's link events (fabric.external, docs/fabric.md): at each event's time the
 * main lcore starts its command (`/bin/sh -c`, link_command with {link} and {state} filled in)
 * and goes on supervising; the command's end is reaped on later ticks. Nothing here is on a
 * worker lcore: the commands take a switch port down through whatever the lab uses (ssh, gNMI,
 * ip link in a namespace), and the end hosts see what follows. After the run the commands still
 * going get LINK_COMMAND_GRACE_S, then SIGKILL to their process group, so that no run ends with
 * one (or what it started) left behind.
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "engine_internal.h"

#define LINK_COMMAND_GRACE_S 10

extern char **environ;

int engine_shell_spawn(const char *cmd, int out_fd, int close_fd, pid_t *pid)
{
	char *argv[] = { "sh", "-c", (char *)cmd, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int rc;

	posix_spawn_file_actions_init(&fa);
	if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
	if (close_fd >= 0)
		posix_spawn_file_actions_addclose(&fa, close_fd);
	/* its own process group: what the command starts goes with it if it must be killed */
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	rc = posix_spawn(pid, "/bin/sh", &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	return rc;
}

int engine_shell_status(int wait_status)
{
	return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

static void start(struct run_view *run, unsigned k, uint64_t now)
{
	struct link_command_rt *c = &run->link_cmd[k];
	pid_t pid;
	int rc = engine_shell_spawn(run->cfg->fab.events[k].command, -1, -1, &pid);

	c->started = true;
	c->started_tsc = now;
	if (rc) {
		c->spawn_errno = rc;
		c->ended = true;
		c->ended_tsc = now;
		c->status = -1;
		return;
	}
	c->pid = pid;
}

static void reap(struct link_command_rt *c, bool wait, uint64_t now)
{
	int st;

	if (!c->started || c->ended || waitpid(c->pid, &st, wait ? 0 : WNOHANG) != c->pid)
		return;
	c->ended = true;
	c->ended_tsc = now;
	c->status = engine_shell_status(st);
}

void link_commands_tick(struct engine *e, uint64_t now)
{
	struct run_view *run = &e->run;

	for (unsigned k = 0; run->cfg->fab.external && k < run->cfg->fab.n_events; k++) {
		if (!run->link_cmd[k].started &&
		    now >= run->start_tsc + (uint64_t)(run->cfg->fab.events[k].at_s * (double)run->tsc_hz))
			start(run, k, now);
		reap(&run->link_cmd[k], false, now);
	}
}

bool link_commands_pending(const struct engine *e)
{
	for (unsigned k = 0; e->run.cfg->fab.external && k < e->run.cfg->fab.n_events; k++)
		if (!e->run.link_cmd[k].ended)
			return true;
	return false;
}

void link_commands_finish(struct engine *e)
{
	struct run_view *run = &e->run;
	uint64_t until = rte_rdtsc() + LINK_COMMAND_GRACE_S * run->tsc_hz;

	for (unsigned k = 0; run->cfg->fab.external && k < run->cfg->fab.n_events; k++) {
		struct link_command_rt *c = &run->link_cmd[k];
		if (!c->started) { /* the run ended before its time */
			c->status = -1;
			continue;
		}
		while (!c->ended && rte_rdtsc() < until) {
			reap(c, false, rte_rdtsc());
			if (!c->ended)
				rte_delay_us_sleep(10000);
		}
		if (!c->ended) {
			kill(-c->pid, SIGKILL); /* its group: the shell and what it started */
			reap(c, true, rte_rdtsc());
		}
	}
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include "engine_child.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define POLL_NS 5000000L /* how often the deadline is looked at */

double engine_child_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

pid_t engine_child_spawn(const char *const argv[], const char *dir, const char *log)
{
	pid_t parent = getpid(), pid = fork();

	if (pid != 0)
		return pid;
	/* the child: its own process group (the parent stops it, not the terminal), output to the log */
	setpgid(0, 0);
	/* ... and gone with its parent: a parent killed outright (SIGKILL, a launcher ending its job)
	 * cannot stop it, and an engine left polling would hold a CPU and its ports */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(127);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (chdir(dir) == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
	}
	_exit(127);
}

pid_t engine_child_start(const struct engine_child *c)
{
	char dur[32];
	const char *argv[] = { c->engine, "-f", c->config, "-q", "-r", c->report, "-d", dur, NULL };

	snprintf(dur, sizeof(dur), "%.6f", c->duration_s);
	if (!(c->duration_s > 0))
		argv[6] = NULL;
	return engine_child_spawn(argv, c->dir, c->log);
}

static int await_child(pid_t pid, double deadline, const volatile int *interrupt, double grace_s, bool *timed_out,
		       bool *interrupted, void (*tick)(void *arg), void *arg)
{
	double term_at = 0;
	int st = 0;

	*timed_out = *interrupted = false;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		double now = engine_child_now_s();
		bool stop = interrupt && *interrupt;

		if (w == pid || (w < 0 && errno != EINTR))
			return st;
		if (!term_at && (now > deadline || stop)) {
			*timed_out = !stop;
			*interrupted = stop;
			kill(-pid, SIGTERM);
			term_at = now;
		}
		if (term_at && now > term_at + grace_s)
			kill(-pid, SIGKILL);
		if (tick)
			tick(arg);
		nanosleep(&(struct timespec){ .tv_nsec = POLL_NS }, NULL);
	}
}

int engine_child_await(pid_t pid, double deadline, const volatile int *interrupt, bool *timed_out, bool *interrupted)
{
	return await_child(pid, deadline, interrupt, ENGINE_CHILD_KILL_GRACE_S, timed_out, interrupted, NULL, NULL);
}

int engine_child_await_grace(pid_t pid, double deadline, const volatile int *interrupt, double grace_s, bool *timed_out,
			     bool *interrupted)
{
	return await_child(pid, deadline, interrupt, grace_s, timed_out, interrupted, NULL, NULL);
}

int engine_child_await_ticking(pid_t pid, double deadline, const volatile int *interrupt, bool *timed_out,
			       bool *interrupted, void (*tick)(void *arg), void *arg)
{
	return await_child(pid, deadline, interrupt, ENGINE_CHILD_KILL_GRACE_S, timed_out, interrupted, tick, arg);
}

void engine_child_log_reason(const char *log_path, const char *config, char *out, size_t len)
{
	FILE *f = fopen(log_path, "r");
	char line[1024], last[1024] = "", eng[1024] = "", named[300];

	snprintf(out, len, "(no output)");
	if (!f)
		return;
	snprintf(named, sizeof(named), "%s:", config);
	while (fgets(line, sizeof(line), f)) {
		const char *at = strstr(line, named);
		line[strcspn(line, "\r\n")] = '\0';
		if (at) {
			snprintf(out, len, "%s", at);
			fclose(f);
			return;
		}
		if (strstr(line, "roce-engine:") || strstr(line, "ERROR"))
			snprintf(eng, sizeof(eng), "%s", line);
		if (line[0])
			snprintf(last, sizeof(last), "%s", line);
	}
	fclose(f);
	snprintf(out, len, "%s", eng[0] ? eng : last[0] ? last : "(no output)");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

void engine_child_rm_tree(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* EAL's own rule: root's runtime folders under /var/run, others' under $XDG_RUNTIME_DIR or /tmp.
 * Only our own prefix is ever named. */
void engine_child_remove_runtime_dir(const char *file_prefix)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char path[4200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/dpdk/%s", getuid() == 0 ? "/var/run" : xdg ? xdg : "/tmp", file_prefix);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		engine_child_rm_tree(path);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A real switch tier's own counters (fabric.external.counters_command, docs/fabric.md): the
 * command prints the switches' cumulative counters per fabric link as JSON,
 *   { "links": [ { "name": "leaf0-spine1", "a_to_b": { "frames": N, "dropped": N, ... },
 *                  "b_to_a": { ... } }, ... ] }
 * (a: the link's first end as the fabric names it, a switch), read by the main lcore before the
 * traffic starts and after it drained. The report's fabric.links[] are the differences, every
 * numeric counter of each direction, so that a lab's SNMP or gNMI script gives the run the
 * switches' drops, ECN marks and pauses per link as the virtual fabric's counters do. Nothing
 * here is on a worker lcore; a command that fails, hangs (DUT_COUNTERS_TIMEOUT_S, then its
 * process group is killed) or prints no such JSON is said in the report, and the run goes on.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "engine_internal.h"

#define DUT_COUNTERS_TIMEOUT_S 30
#define DUT_COUNTERS_MAX_BYTES (4u << 20)

/* The command's standard output into a malloc'ed string (*out), within the timeout. Its exit
 * status, or -1 with why. */
static int run_command(const char *cmd, char **out, char *why, size_t len)
{
	char *buf = malloc(DUT_COUNTERS_MAX_BYTES + 1);
	uint64_t until = rte_rdtsc() + DUT_COUNTERS_TIMEOUT_S * rte_get_tsc_hz();
	size_t n = 0;
	int fd[2], st = 0, rc;
	pid_t pid;

	*out = NULL;
	if (!buf || pipe(fd)) {
		free(buf);
		snprintf(why, len, "%s", strerror(errno));
		return -1;
	}
	rc = engine_shell_spawn(cmd, fd[1], fd[0], &pid);
	close(fd[1]);
	if (rc) {
		close(fd[0]);
		free(buf);
		snprintf(why, len, "cannot start it: %s", strerror(rc));
		return -1;
	}
	for (;;) { /* until EOF (it closed its output) or the deadline */
		struct pollfd p = { .fd = fd[0], .events = POLLIN };
		ssize_t k;
		if (rte_rdtsc() >= until) {
			kill(-pid, SIGKILL);
			snprintf(why, len, "no end of its output after %d s: killed", DUT_COUNTERS_TIMEOUT_S);
			rc = -1;
			break;
		}
		if (poll(&p, 1, 100) <= 0)
			continue;
		k = read(fd[0], buf + n, DUT_COUNTERS_MAX_BYTES - n);
		if (k <= 0 || (n += (size_t)k) == DUT_COUNTERS_MAX_BYTES)
			break;
	}
	close(fd[0]);
	waitpid(pid, &st, 0);
	buf[n] = 0;
	*out = buf;
	if (rc)
		return -1;
	return engine_shell_status(st);
}

/* One reading into snap (0: before, 1: after): its `links`, or the reason there are none. */
void dut_counters_read(struct engine *e, unsigned snap)
{
	struct run_view *run = &e->run;
	const char *cmd = run->cfg->fab.counters_command;
	char why[256] = "", *text;
	json_error_t jerr;
	json_t *doc = NULL;
	int st;

	if (!run->cfg->fab.external || !cmd[0])
		return;
	st = run_command(cmd, &text, why, sizeof(why));
	if (st > 0)
		snprintf(why, sizeof(why), "exit status %d", st);
	else if (st == 0 && !(doc = json_loads(text, 0, &jerr)))
		snprintf(why, sizeof(why), "its output is not JSON: %s (line %d)", jerr.text, jerr.line);
	else if (st == 0 && !json_is_array(json_object_get(doc, "links")))
		snprintf(why, sizeof(why), "its output has no \"links\" list");
	else if (st == 0)
		run->dut_links[snap] = json_incref(json_object_get(doc, "links"));
	json_decref(doc);
	free(text);
	if (why[0] && !run->dut_error[0])
		snprintf(run->dut_error, sizeof(run->dut_error), "%s (%s): %s", snap ? "after the run" : "before the run", cmd,
			 why);
}

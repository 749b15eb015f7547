/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Verdicts and the machine check (verdict.h).
 */
#include "verdict.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "metrics.h"
#include "trial.h"

void suite_verdict(struct runner *rn, bool pass, const char *check, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	json_array_append_new(rn->verdicts, json_pack("{s:s,s:s,s:s}", "check", check, "verdict", pass ? "pass" : "fail",
						      "what", what));
	rn->n_failed += !pass;
}

struct machine machine_judge(double carried, double expected, const struct metrics *trial)
{
	struct machine m = { .judged = expected > 0 };

	m.pct = m.judged ? 100 * carried / expected : 0;
	m.limited = m.judged && m.pct < 100 * BUSY_SHARE;
	m.held_up_pct = trial && trial->duration_s > 0 ? trial->held_up_ms / 10 / trial->duration_s : 0;
	return m;
}

void machine_record(struct runner *rn, json_t *row, const struct machine *m, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	json_object_set_new(row, "carried_pct", m->judged ? json_real(m->pct) : json_null());
	json_object_set_new(row, "machine_limited", json_boolean(m->limited));
	if (!m->limited)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	printf("  ! busy machine: %s carried %.1f %% of its load (up to its link's capacity", what, m->pct);
	if (m->held_up_pct >= 1)
		printf("; the lcore was held up %.0f %% of the run", m->held_up_pct);
	printf("): the engine's lcore did not get the CPU it needed, these figures are the machine's, not the fabric's\n");
	rn->n_machine_limited++;
}

void machine_limit(struct runner *rn, json_t *row, const char *fmt, ...)
{
	va_list ap;

	printf("  ! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!json_is_true(json_object_get(row, "machine_limited")))
		rn->n_machine_limited++;
	json_object_set_new(row, "machine_limited", json_true());
}

void verdicts_print(const struct runner *rn, bool measure_only)
{
	size_t n = json_array_size(rn->verdicts), i;
	const json_t *v;

	if (n) {
		printf("\nverdicts: %zu pass, %u fail%s\n", n - rn->n_failed, rn->n_failed,
		       !rn->n_failed ? ""
		       : measure_only ? " (measure only: the exit status does not count them)"
				      : " (exit status 6; --measure-only to only measure)");
		json_array_foreach(rn->verdicts, i, v)
			printf("  %-4s  %s: %s\n", strcmp(json_string_value(json_object_get(v, "verdict")), "pass") ? "FAIL" : "pass",
			       json_string_value(json_object_get(v, "check")), json_string_value(json_object_get(v, "what")));
	}
	if (rn->n_machine_limited)
		printf("%u result%s limited by the machine (the '! busy machine' lines): read them as the machine's, not "
		       "the fabric's\n", rn->n_machine_limited, rn->n_machine_limited == 1 ? "" : "s");
}

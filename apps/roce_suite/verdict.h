/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What a suite judges (docs/suites.md, "Verdicts and the machine check"):
 *
 *  - verdicts: did the device do what its settings and the protocol promise (the switch absorbs
 *    the burst its queue has room for, PFC pauses only its own priority, a lossless class loses
 *    nothing, every round completes ...). Each is one entry of the suite report's verdicts[]; a
 *    failing one makes roce-suite exit 6, as the engine's failed SLA does, unless the suite only
 *    measures (--measure-only, suite.measure_only).
 *  - the machine check: did a trial's bottleneck carry what it should have, its offered load up
 *    to its link's capacity? The lab's links are emulated by an lcore: on a busy machine it falls
 *    behind, and the figures are then the machine's, not the fabric's. rfc2544's `carried %`
 *    judgement, made here for every suite whose figures depend on it, printed on a line of its own
 *    under the row and recorded in the row (carried_pct, machine_limited).
 */
#ifndef ROCE_SUITE_VERDICT_H
#define ROCE_SUITE_VERDICT_H

#include <stdbool.h>

#include <jansson.h>

#define BUSY_SHARE 0.95           /* a bottleneck carrying less than this share of its load: the machine's limit */

struct runner;

/* One verdict: check (e.g. "throughput", "pfc_per_priority") and what was judged (printf). */
void suite_verdict(struct runner *rn, bool pass, const char *check, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

struct metrics;

struct machine {
	bool judged;                  /* there was a load to judge against */
	double pct;                   /* carried, % of what it should have */
	bool limited;                 /* pct below BUSY_SHARE */
	double held_up_pct;           /* the trial's lcore held up (off its CPU), % of its run: the evidence */
};

/* The machine check of one result: carried against expected, the load offered into the
 * bottleneck up to what its link carries (both in one unit; expected 0: nothing to judge), of the
 * trial whose metrics are m (for its lcores' held-up time; NULL: not known). */
struct machine machine_judge(double carried, double expected, const struct metrics *m);
/* Its fields in the result's row (carried_pct, null when not judged, and machine_limited) and,
 * when limited, the warning line naming `what` (printf), under the row just printed. */
void machine_record(struct runner *rn, json_t *row, const struct machine *m, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A machine limit found otherwise (senders short of their rate): the row's machine_limited and
 * the line "  ! WHAT" under it. */
void machine_limit(struct runner *rn, json_t *row, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* After the suite's tables: the verdicts (each failing one on its line), the machine-limited
 * results, and what that means for the exit status. */
void verdicts_print(const struct runner *rn, bool measure_only);

#endif

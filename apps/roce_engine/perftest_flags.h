/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What the perftest front end's command-line files share (docs/perftest.md): the flag table's
 * rows (perftest_flag_table.c), the parser's messages and notes (perftest_flags.c), and the
 * defaults and rules between flags (perftest_rules.c).
 */
#ifndef ROCE_ENGINE_PERFTEST_FLAGS_H
#define ROCE_ENGINE_PERFTEST_FLAGS_H

#include <getopt.h>
#include <sched.h>
#include <stdio.h>

#include "perftest_opts.h"

enum pt_flag_kind { PT_CARRIED, PT_NOOP, PT_REFUSED, PT_OWN };

/* Flags with an effect, by what they do. */
enum pt_flag_id {
	F_NONE, F_ALL, F_BIDIR, F_CONN, F_CYCLES, F_DEVICE, F_DURATION, F_MARGIN, F_HELP, F_HIST, F_MTU, F_ITERS,
	F_NO_PEAK, F_OUTS, F_QPS, F_SIZE, F_TX_DEPTH, F_TOS, F_QP_TIMEOUT, F_UNSORTED, F_VERSION, F_LIMIT_BW,
	F_LIMIT_MSG_RATE, F_SRC_MAC, F_DST_MAC, F_DST_IP, F_SRC_IP, F_SPORT, F_DPORT, F_SERVER, F_FORCE_LINK,
	F_RUN_INF, F_GBITS, F_REPORT_BOTH, F_REVERSED, F_RATE, F_RATE_TYPE, F_RATE_UNITS, F_BURST, F_OUTPUT,
	F_CPU_UTIL, F_OUT_JSON, F_OUT_JSON_FILE, F_LATENCY_GAP, F_RETRY_COUNT, F_IPV6, F_HUGE, F_TCLASS,
	F_WAIT_DESTROY, F_WRITE_IMM, F_SEND_IMM, F_PIN_CORES, F_NUMA_NODE,
	/* roce-engine's own */
	F_REPORT, F_JSON, F_CAPTURE, F_LCORES, F_KEEP, F_VDEV_ARGS, F_LINK, F_PORT_MTU, F_QPN, F_DEST_QPN,
	F_EAL_ARG,
};

struct pt_flag {
	const char *name;           /* the long option, as perftest spells it */
	char letter;                /* its short option, or 0 */
	const char *arg;            /* the argument's name in the usage text; NULL: none */
	enum pt_flag_kind kind;
	enum pt_flag_id id;
	const char *text;           /* carried: the usage line; no-op or refused: why */
};

/* perftest_flag_table.c */
/* The row of a getopt_long result (a letter, or a long option's row + 256), or NULL. */
const struct pt_flag *pt_flag_of(int ch);
/* getopt's tables, made once from the rows: returns the short options, *longopts the long. */
const char *pt_getopt_tables(const struct option **longopts);
/* The name a message gives a flag: "-s/--size" or "--tclass" (a static buffer). */
const char *pt_flag_name(const struct pt_flag *f);
void pt_usage(FILE *out, const char *test);

/* perftest_flags.c: messages, each returning -1 (pt_note: a line printed with the header) */
int pt_bad(const struct pt_opts *o, const char *flag, const char *value, const char *allowed);
int pt_usage_error(const struct pt_opts *o, const char *msg);
void __attribute__((format(printf, 2, 3))) pt_note(struct pt_opts *o, const char *fmt, ...);
/* The main lcore and the workers: the first two CPUs of want (NULL: any) this process may use. */
int pt_lcores_from_set(struct pt_opts *o, const cpu_set_t *want, const char *what);

/* perftest_rules.c: after the flags, perftest's defaults and the rules between flags; 0 or -1. */
int pt_apply_defaults(struct pt_opts *o);

#endif

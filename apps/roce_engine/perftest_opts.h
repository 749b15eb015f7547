/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What the perftest front end's files share (docs/perftest.md): the options a command line
 * becomes, one size's results, and the functions each file offers the others.
 *
 *   perftest_flag_table.c  the six tests, perftest's flag table, the usage text
 *   perftest_flags.c    the parser (perftest_flags.h: what the three flag files share)
 *   perftest_rules.c    defaults, the rules between flags, what the options derive
 *   perftest_config.c   the engine configuration a run is
 *   perftest_results.c  numbers from the engine's report, time series and samples
 *   perftest_capture.c  read_lat's numbers, from a capture (libpcap)
 *   perftest_print.c    perftest's header, table, JSON file; the front end's JSON report
 *   perftest_child.c    one size's run in a child process, watching its time series
 *   perftest.c          the runs: work directory, the sizes, the exit status
 *
 * None of them includes engine internals: the engine is reached through its configuration text
 * (the config library loads it), launch.h (EAL and engine_run, in a child process) and its
 * output files.
 */
#ifndef ROCE_ENGINE_PERFTEST_OPTS_H
#define ROCE_ENGINE_PERFTEST_OPTS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define PT_EXIT_NO_RESULT 7        /* the run finished but measured nothing (docs/perftest.md) */
#define PT_PROBE_BYTES 24          /* latency probes ride in the payload (docs/latency.md) */
#define PT_MAX_SIZE 1073741824ULL  /* the engine's largest message */
#define PT_ALL_MAX_SIZE (1u << 23) /* perftest's -a goes up to 8 MiB */
#define PT_MAX_EAL_ARGS 16
#define PT_MAX_RUNS 32
#define PT_MAX_NOTES 64
#define PT_ENGINE_WINDOW 128       /* the engine's largest RC window (flows.rc.max_outstanding) */
#define PT_INTERVAL_S 0.1          /* stats interval: the time series' resolution for BW peak */
#define PT_QPN 0x100
#define PT_DEST_QPN 0x200
#define PT_PATH 256                /* the engine takes paths of up to 255 characters */
#define PT_LINE "---------------------------------------------------------------------------------------\n"

enum pt_verb { PT_SEND, PT_WRITE, PT_READ };
enum pt_kind { PT_BW, PT_LAT };
enum pt_conn { PT_RC, PT_UC, PT_UD };
enum pt_output { PT_OUT_FULL, PT_OUT_BW, PT_OUT_MSG_RATE, PT_OUT_LAT }; /* --output */
enum pt_rate_units { PT_RATE_GBPS, PT_RATE_MIBPS, PT_RATE_MPS };      /* --rate_units g, M, p */

struct pt_test {
	const char *name;
	enum pt_verb verb;
	enum pt_kind kind;
};

/* Everything the flags say, after defaults. */
struct pt_opts {
	const struct pt_test *test;
	const char *prog;           /* "roce-engine write_bw", for messages */
	bool imm;                   /* --write_with_imm, --send_with_imm */
	uint64_t size, iters;
	bool size_set, iters_set, all, gbits, json, server, keep, huge;
	/* run length: iterations, -D (measured between the margins), or --run_infinitely */
	double duration_s;          /* 0: iterations */
	double margin_s;            /* -f; < 0: perftest's default (duration / 4, whole seconds) */
	bool run_inf;
	unsigned qps, mtu;
	unsigned tx_depth;          /* -t as asked (after perftest's cap at -n) */
	unsigned window;            /* RC messages in flight per QP: -t (READs: and -o) within the engine's 128 */
	unsigned outs;              /* -o: READs in flight; 0: the engine's most */
	int tclass;                 /* -1: the engine's DSCP 26 / ECT(0), that is 106 */
	enum pt_conn conn;
	bool ipv6;                  /* --ipv6: the virtual topology's addresses are IPv6 */
	/* directions */
	bool bidir, report_both, reversed;
	/* what the table shows */
	bool no_peak, cpu_util, hist, unsorted, cycles;
	enum pt_output output;
	bool out_json;              /* --out_json (or --out_json_file) */
	const char *out_json_file;
	double limit_bw, limit_msg_rate; /* -w, -y; < 0: none */
	/* the traffic */
	double rate;                /* --rate_limit; 0: none */
	enum pt_rate_units rate_units;
	bool rate_type_set, burst_set;
	int qp_timeout;             /* -u; < 0: the engine's default (IB's 14) */
	int retry_count;            /* --retry_count; < 0: the engine's 7 */
	int udp_sport;              /* -k; < 0: entropy */
	double latency_gap_us;      /* --latency_gap */
	double wait_destroy_s;      /* --wait_destroy */
	const char *report, *capture;
	/* the port: the virtual topology unless device is set */
	const char *device, *vdev_args, *src_mac, *src_ip, *dst_mac, *dst_ip;
	double link_gbps;
	unsigned port_mtu;
	uint32_t qpn, dest_qpn;
	const char *eal_args[PT_MAX_EAL_ARGS];
	unsigned n_eal_args;
	/* lines for accepted flags that change nothing here, printed with the header */
	char notes[PT_MAX_NOTES][200];
	unsigned n_notes;
	/* derived */
	double cycles_per_ns;       /* -C: the TSC's rate */
	unsigned main_lcore, lcore_local, lcore_remote;
	char lcore_list[128];
};

/* One direction of a bandwidth run (a flow group's QPs), as the table prints it. */
struct pt_bw {
	uint64_t iterations;
	double peak_gbps, avg_gbps, msg_rate_mpps;
	const char *peak_from;      /* "best 0.1 s interval", "average", "not measured (-N)" */
};

/* One size's run and what the table prints of it. */
struct pt_run {
	uint64_t size, iterations;
	double seconds;             /* what the averages divide by */
	struct pt_bw bw;            /* bandwidth: both directions summed with -b */
	struct pt_bw dir[2];        /* -b: local's requests, and the far end's */
	double cpu_util;            /* --cpu_util: % of the CPUs' time in user mode (perftest's figure) */
	/* latency, in ns as the table prints it (already halved where perftest halves) */
	double t_min, t_max, t_typical, t_avg, t_stdev, t_99, t_99_9;
	const char *lat_source;
	double *samples;            /* -H / -U: each iteration's time in ns, in the order measured */
	size_t n_samples;
	json_t *report;             /* the engine's, owned */
	json_t *extra;              /* read latency from the capture: its summary, owned */
};

/* The files of one run (run N of the work directory). */
struct pt_paths {
	char cfg[PT_PATH], report[PT_PATH], ts[PT_PATH], capture[PT_PATH], log[PT_PATH], samples[PT_PATH];
};

/* The flow groups of a run: "perftest" (this end's requests; the far end's with --reversed) and,
 * with -b, "perftest_b" the other way. */
#define PT_FLOW "perftest"
#define PT_FLOW_BACK "perftest_b"
#define PT_PHASE_MEASURED "measured" /* -D with a margin: the phase from margin to duration - margin */
#define PT_PHASE_AFTER "after_margin"

/* perftest_flag_table.c */
const struct pt_test *pt_find_test(const char *name);
extern const char *const pt_conn_name[];
/* perftest_flags.c: 0: run; 1: done (help or version printed); -1: bad flags (message printed). */
int pt_parse(int argc, char **argv, struct pt_opts *o);
/* IPv4 or IPv6 into a 16-byte GID (IPv4-mapped, as RoCEv2 GIDs are); -1 if neither. */
int pt_ip_to_gid(const char *s, uint8_t gid[16], bool *v6);
/* perftest_rules.c */
bool pt_needs_probe(const struct pt_opts *o);
unsigned pt_sizes(const struct pt_opts *o, uint64_t *sizes);
const char *pt_local_ip(const struct pt_opts *o);
const char *pt_remote_ip(const struct pt_opts *o);
double pt_margin(const struct pt_opts *o);
unsigned pt_packets_per_message(const struct pt_opts *o, uint64_t size);
double pt_frame_bytes_per_message(const struct pt_opts *o, uint64_t size);

/* perftest_config.c */
/* The libconfig text of one size's run (malloc'd, *len bytes), or NULL with a message. */
char *pt_config_text(const struct pt_opts *o, const struct pt_paths *p, uint64_t size, unsigned run, size_t *len);
/* --keep: writes it to p->cfg. 0, or -1 with a message. */
int pt_keep_config(const struct pt_opts *o, const struct pt_paths *p, const char *text, size_t len);

/* perftest_results.c */
double pt_num(const json_t *obj, const char *key);
void pt_bw_from_report(const struct pt_opts *o, const struct pt_paths *p, struct pt_run *r);
int pt_lat_from_report(const struct pt_opts *o, struct pt_run *r);
int pt_samples_from_csv(const struct pt_opts *o, const struct pt_paths *p, struct pt_run *r);
/* A time series row of a flow group: what its QPs sent in (t_s - dt_s, t_s]. */
struct pt_ts_row {
	double t_s, dt_s, tx_gbps;
	int dir;                    /* 0: PT_FLOW, 1: PT_FLOW_BACK */
};
int pt_ts_parse_line(char *line, struct pt_ts_row *row, double *prev_t);
double pt_messages_in_row(const struct pt_opts *o, const struct pt_ts_row *row, uint64_t size);

/* perftest_capture.c: read_lat's numbers from a capture of the requester's port */
int pt_lat_from_capture(const struct pt_opts *o, const struct pt_paths *p, struct pt_run *r);

/* What the parent reads of a running child (perftest_child.c). */
struct pt_watch {
	const struct pt_opts *o;
	uint64_t size;
	int fd;                     /* the time series, once the engine made it */
	char buf[8192];
	size_t len;
	double prev_t[2];
	/* --run_infinitely: the interval rows, as printed */
	struct pt_ts_row pending[2];
	bool have[2];
	struct pt_run *rows;
	unsigned n_rows, cap_rows;
	/* --cpu_util: /proc/stat at the two margins */
	unsigned long long user[2], idle[2];
	int cpu_marks;
};

/* perftest_child.c: runs the engine on the text in a child process to its end, watching its time
 * series when a flag needs it; an exit status (the engine's, or ENGINE_EXIT_INIT when the child
 * ended abnormally, its log printed). */
int pt_run_engine(const struct pt_opts *o, const struct pt_paths *p, const char *text, size_t len, struct pt_watch *w);
/* The engine's log, on stderr. */
void pt_print_log(const struct pt_opts *o, const char *path);
/* SIGINT and SIGTERM stop the front end after the running size, passed on to its child. */
void pt_forward_signals(void);
bool pt_stop_requested(void);

/* perftest_print.c */
void pt_print_header(const struct pt_opts *o);
void pt_print_heading(const struct pt_opts *o);
void pt_print_row(const struct pt_opts *o, const struct pt_run *r);
void pt_print_bw_both(const struct pt_opts *o, const struct pt_run *runs, unsigned n);
void pt_print_samples(const struct pt_opts *o, const struct pt_run *r);
void pt_print_server_summary(const struct pt_run *r);
double pt_bw_unit(const struct pt_opts *o, double gbps);
int pt_write_perftest_json(const struct pt_opts *o, const struct pt_run *r);
int pt_write_report(const struct pt_opts *o, const char *path, const struct pt_run *runs, unsigned n,
		    const struct pt_run *rows, unsigned n_rows);

#endif

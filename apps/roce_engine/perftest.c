/* SPDX-License-Identifier: BSD-3-Clause
 *
 * perftest-style front ends: `roce-engine write_bw -s 4096 -q 4` and its five siblings take
 * perftest's flags, write an engine configuration (the libconfig text users write themselves),
 * run it through roce-engine's own command-line path (engine_cli_main) and print perftest's
 * header and table from the engine's JSON report. docs/perftest.md.
 *
 * Each size runs in a child process: EAL starts once per process, `-a` needs one run per size,
 * and the engine's own lines go to a log instead of the table. By default the two ends are ports
 * of one process joined by a ring pair (ring:perftest:a / :b); the far end answers RC requests
 * with the engine's responder, or reflects UC/UD ping-pongs. --device runs on any DPDK port,
 * --server is the far end for a client on another host.
 *
 * Where the numbers come from:
 *   bw average  RC: acknowledged messages x size over the report's duration_s (READ data flows
 *               back, unseen by the far end's receiver); UC/UD: the report's goodput
 *   bw peak     the best 0.1 s interval of the run's time series, never below the average
 *   write/send latency  half the report's round trip (RC: request -> ACK; UC/UD: ping-pong)
 *   read latency        READ request -> last response, from a capture of the requester's port
 *                       (the engine's histograms record no READ round trips)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "engine.h"
#include "perftest.h"

#define PT_EXIT_NO_RESULT 7        /* the run finished but measured nothing (docs/perftest.md) */
#define PT_PROBE_BYTES 24          /* latency probes ride in the payload (docs/latency.md) */
#define PT_MAX_SIZE 1073741824ULL  /* the engine's largest message */
#define PT_ALL_MAX_SIZE (1u << 23) /* perftest's -a goes up to 8 MiB */
#define PT_MAX_EAL_ARGS 16
#define PT_MAX_RUNS 32
#define PT_INTERVAL_S 0.1          /* stats interval: the time series' resolution for BW peak */
#define PT_PINGPONG_TIMEOUT_US 100000.0
#define PT_VIRTUAL_PORT_MTU 4200   /* room for IB MTU 4096 and the longest headers */
#define PT_QPN 0x100
#define PT_DEST_QPN 0x200
#define PT_LINE "---------------------------------------------------------------------------------------\n"

enum pt_verb { PT_SEND, PT_WRITE, PT_READ };
enum pt_kind { PT_BW, PT_LAT };
enum pt_conn { PT_RC, PT_UC, PT_UD };

struct pt_test {
	const char *name;
	enum pt_verb verb;
	enum pt_kind kind;
};

static const struct pt_test pt_tests[] = {
	{ "write_bw", PT_WRITE, PT_BW }, { "write_lat", PT_WRITE, PT_LAT }, { "send_bw", PT_SEND, PT_BW },
	{ "send_lat", PT_SEND, PT_LAT }, { "read_bw", PT_READ, PT_BW },     { "read_lat", PT_READ, PT_LAT },
};

static const char *const pt_verb_title[] = { "Send", "RDMA_Write", "RDMA_Read" }; /* perftest's words */
static const char *const pt_verb_op[] = { "send", "write", "read" };               /* the config's */
static const char *const pt_conn_name[] = { "RC", "UC", "UD" };

/* Everything the flags say, after defaults. */
struct pt_opts {
	const struct pt_test *test;
	const char *prog;           /* "roce-engine write_bw", for messages */
	uint64_t size, iters;
	bool size_set, iters_set, all, gbits, json, server, keep, huge;
	double duration_s;          /* 0: iterations */
	unsigned qps, mtu, tx_depth;
	int tclass;                 /* -1: the engine's DSCP 26 / ECT(0), that is 106 */
	enum pt_conn conn;
	const char *report, *capture;
	/* the port: the virtual topology unless device is set */
	const char *device, *vdev_args, *src_mac, *src_ip, *dst_mac, *dst_ip;
	double link_gbps;
	unsigned port_mtu;
	uint32_t qpn, dest_qpn;
	const char *eal_args[PT_MAX_EAL_ARGS];
	unsigned n_eal_args;
	/* derived */
	unsigned main_lcore, lcore_local, lcore_remote;
	char lcore_list[128];
};

/* One size's run and what the table prints of it. */
struct pt_run {
	uint64_t size, iterations;
	double bw_peak_gbps, bw_avg_gbps, msg_rate_mpps;
	bool peak_from_interval;
	/* latency, in ns as the table prints it (already halved where perftest halves) */
	double t_min, t_max, t_typical, t_avg, t_stdev, t_99, t_99_9;
	const char *lat_source;
	json_t *report;             /* the engine's, owned */
	json_t *extra;              /* read latency from the capture: its summary, owned */
};

/* The engine takes paths of up to 255 characters (docs/config.md's run section). */
#define PT_PATH 256

struct pt_work {
	char dir[PT_PATH - 32];     /* room for the file names under it */
	char report[PATH_MAX];      /* where the front end's JSON goes */
};

static volatile sig_atomic_t pt_child = 0, pt_stop = 0;

/* ---- flags ---- */

static void pt_usage(FILE *out, const char *test)
{
	fprintf(out,
		"usage: roce-engine %s [flags] [DST_IP]\n"
		"\n"
		"perftest's flags (docs/perftest.md):\n"
		"  -s, --size BYTES        message size (default 65536 bw, 2 lat; lat write/send send at least 24)\n"
		"  -n, --iters N           messages per QP (default 5000 bw, 1000 lat)\n"
		"  -D, --duration SEC      run this long instead of -n\n"
		"  -q, --qp N              QPs (bw tests; default 1)\n"
		"  -a, --all               every size 2, 4, ... 8388608 (lat write/send from 32; UD up to the MTU)\n"
		"  -c, --connection RC|UC|UD  transport (default RC; UC: write, send; UD: send only)\n"
		"  -m, --mtu 256..4096     IB path MTU (default the largest the port allows: 4096 virtual)\n"
		"  -t, --tx-depth N        RC messages in flight per QP, 1..64 (default 64 bw, 1 lat)\n"
		"      --tclass N          IP traffic class byte: DSCP N>>2, ECN N&3 (default 106)\n"
		"      --report_gbits      bandwidth in Gb/s instead of MB/s\n"
		"  -F, -x N, --use_hugepages  accepted as perftest has them (-F, -x: no effect)\n"
		"\n"
		"roce-engine's:\n"
		"  -r, --report FILE.json  the JSON report (the engine's per run, with a perftest object)\n"
		"      --json              print that JSON instead of the table\n"
		"      --capture FILE.pcapng  capture the requester port's frames (both directions)\n"
		"      --lcores LIST       EAL lcores: main, then the requester's, then the responder's\n"
		"                          (default the first two CPUs the process may use)\n"
		"      --keep              keep the generated config, the engine's log and files\n"
		"\n"
		"any DPDK port instead of the built-in virtual cable (the far end runs --server):\n"
		"  -d, --device DEV        ring:LINK:a|b, net_<driver><n> (a vdev) or a PCI address\n"
		"      --vdev DEV          the same as --device, for a vdev\n"
		"      --vdev-args ARGS    the vdev's key=value,... arguments\n"
		"      --src-ip IP         this port's IPv4 or IPv6 address (required)\n"
		"      --src-mac MAC       this port's MAC (default the PMD's)\n"
		"      --dst-ip IP         the far end's address (or as the last argument)\n"
		"      --dst-mac MAC       the far end's MAC (required: no ARP)\n"
		"      --link-gbps N       the link speed (virtual devices report none: default 100)\n"
		"      --port-mtu N        the port's IP MTU, 576..9000 (default 1500)\n"
		"      --qpn N, --dest-qpn N  first QPN here and there (default 0x100, 0x200; the same on both ends)\n"
		"      --huge              use hugepages (physical NICs need them)\n"
		"      --eal-arg ARG       one more EAL argument (repeat), e.g. --eal-arg=-a --eal-arg=0000:3b:00.0,txq_inline_max=0\n"
		"      --server            be the far end: RC responders, or a reflector for UC/UD latency, until\n"
		"                          Ctrl-C or -D\n"
		"  -h, --help              this text\n"
		"\n"
		"exit status: 0 done, 2 bad flags, 3..6 as roce-engine (docs/engine.md), 7 nothing measured\n",
		test);
}

static int pt_bad(const struct pt_opts *o, const char *flag, const char *value, const char *allowed)
{
	fprintf(stderr, "%s: %s: '%s' %s\n", o->prog, flag, value, allowed);
	return -1;
}

static int pt_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int pt_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v <= max))
		return -1;
	*out = v;
	return 0;
}

/* Strings that go into the generated config between quotes. */
static int pt_config_safe(const struct pt_opts *o, const char *flag, const char *s)
{
	if (!*s)
		return pt_bad(o, flag, s, "is empty");
	for (const char *p = s; *p; p++)
		if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20 || *p == 0x7f)
			return pt_bad(o, flag, s, "has a quote, a backslash or a control character");
	return 0;
}

static int pt_check_mac(const struct pt_opts *o, const char *flag, const char *s)
{
	unsigned b[6];
	char tail;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6 ||
	    strlen(s) != 17)
		return pt_bad(o, flag, s, "is not a MAC address (xx:xx:xx:xx:xx:xx)");
	return 0;
}

/* IPv4 or IPv6 into a 16-byte GID (IPv4-mapped, as RoCEv2 GIDs are); -1 if neither. */
static int pt_ip_to_gid(const char *s, uint8_t gid[16], bool *v6)
{
	struct in_addr a4;

	memset(gid, 0, 16);
	if (inet_pton(AF_INET, s, &a4) == 1) {
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &a4, 4);
		*v6 = false;
		return 0;
	}
	*v6 = true;
	return inet_pton(AF_INET6, s, gid) == 1 ? 0 : -1;
}

static int pt_check_ip(const struct pt_opts *o, const char *flag, const char *s)
{
	uint8_t gid[16];
	bool v6;

	return pt_ip_to_gid(s, gid, &v6) ? pt_bad(o, flag, s, "is not an IPv4 or IPv6 address") : 0;
}

static int pt_parse_conn(struct pt_opts *o, const char *s)
{
	for (unsigned i = 0; i < 3; i++)
		if (!strcasecmp(s, pt_conn_name[i])) {
			o->conn = (enum pt_conn)i;
			return 0;
		}
	return pt_bad(o, "-c/--connection", s, "is not RC, UC or UD");
}

/* EAL's -l syntax, to find the main lcore and the workers: ids and ranges joined by commas. */
static int pt_parse_lcores(struct pt_opts *o, const char *s)
{
	bool seen[128] = { false };
	unsigned ids[3], n = 0;
	const char *p = s;

	if (strlen(s) >= sizeof(o->lcore_list))
		return pt_bad(o, "--lcores", s, "is too long");
	while (*p) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;

		if (end == p || a >= 128)
			return pt_bad(o, "--lcores", s, "is not an lcore list (e.g. 0-1 or 2,4; ids 0..127)");
		p = end;
		if (*p == '-') {
			b = strtoul(++p, &end, 10);
			if (end == p || b >= 128 || b < a)
				return pt_bad(o, "--lcores", s, "is not an lcore list (e.g. 0-1 or 2,4; ids 0..127)");
			p = end;
		}
		for (unsigned long i = a; i <= b; i++)
			seen[i] = true;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return pt_bad(o, "--lcores", s, "is not an lcore list (e.g. 0-1 or 2,4; ids 0..127)");
	}
	for (unsigned i = 0; i < 128 && n < 3; i++)
		if (seen[i])
			ids[n++] = i;
	if (n < 2)
		return pt_bad(o, "--lcores", s, "needs two lcores at least: the main lcore and a worker");
	o->main_lcore = ids[0];
	o->lcore_local = ids[1];
	o->lcore_remote = n > 2 ? ids[2] : ids[1];
	snprintf(o->lcore_list, sizeof(o->lcore_list), "%s", s);
	return 0;
}

/* Without --lcores: the first two CPUs this process may run on (taskset is respected). */
static int pt_default_lcores(struct pt_opts *o)
{
	cpu_set_t set;
	char list[32];
	int found[2], n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < 128 && n < 2; c++)
			if (CPU_ISSET(c, &set))
				found[n++] = c;
	if (n < 2) {
		fprintf(stderr, "%s: the engine needs two CPUs (a main lcore and a worker); give --lcores\n", o->prog);
		return -1;
	}
	snprintf(list, sizeof(list), "%d,%d", found[0], found[1]);
	return pt_parse_lcores(o, list);
}

enum {
	OPT_TCLASS = 256, OPT_GBITS, OPT_JSON, OPT_CAPTURE, OPT_LCORES, OPT_KEEP, OPT_VDEV, OPT_VDEV_ARGS,
	OPT_SRC_IP, OPT_SRC_MAC, OPT_DST_IP, OPT_DST_MAC, OPT_LINK, OPT_PORT_MTU, OPT_QPN, OPT_DEST_QPN,
	OPT_HUGE, OPT_EAL_ARG, OPT_SERVER,
};

static const struct option pt_longopts[] = {
	{ "size", required_argument, NULL, 's' },        { "iters", required_argument, NULL, 'n' },
	{ "duration", required_argument, NULL, 'D' },    { "qp", required_argument, NULL, 'q' },
	{ "all", no_argument, NULL, 'a' },               { "connection", required_argument, NULL, 'c' },
	{ "mtu", required_argument, NULL, 'm' },         { "tx-depth", required_argument, NULL, 't' },
	{ "report", required_argument, NULL, 'r' },      { "device", required_argument, NULL, 'd' },
	{ "ib-dev", required_argument, NULL, 'd' },      { "gid-index", required_argument, NULL, 'x' },
	{ "help", no_argument, NULL, 'h' },              { "tclass", required_argument, NULL, OPT_TCLASS },
	{ "report_gbits", no_argument, NULL, OPT_GBITS }, { "json", no_argument, NULL, OPT_JSON },
	{ "capture", required_argument, NULL, OPT_CAPTURE }, { "lcores", required_argument, NULL, OPT_LCORES },
	{ "keep", no_argument, NULL, OPT_KEEP },         { "vdev", required_argument, NULL, OPT_VDEV },
	{ "vdev-args", required_argument, NULL, OPT_VDEV_ARGS }, { "src-ip", required_argument, NULL, OPT_SRC_IP },
	{ "src-mac", required_argument, NULL, OPT_SRC_MAC }, { "dst-ip", required_argument, NULL, OPT_DST_IP },
	{ "dst-mac", required_argument, NULL, OPT_DST_MAC }, { "link-gbps", required_argument, NULL, OPT_LINK },
	{ "port-mtu", required_argument, NULL, OPT_PORT_MTU }, { "qpn", required_argument, NULL, OPT_QPN },
	{ "dest-qpn", required_argument, NULL, OPT_DEST_QPN }, { "huge", no_argument, NULL, OPT_HUGE },
	{ "use_hugepages", no_argument, NULL, OPT_HUGE }, { "eal-arg", required_argument, NULL, OPT_EAL_ARG },
	{ "server", no_argument, NULL, OPT_SERVER },     { NULL, 0, NULL, 0 },
};

/* Options that take a number. */
static int pt_numeric_flag(struct pt_opts *o, int ch, const char *arg)
{
	uint64_t v;

	switch (ch) {
	case 's':
		if (pt_parse_u64(arg, 1, PT_MAX_SIZE, &o->size))
			return pt_bad(o, "-s/--size", arg, "is not a size in bytes, 1..1073741824");
		o->size_set = true;
		return 0;
	case 'n':
		if (pt_parse_u64(arg, 1, 1000000000, &o->iters))
			return pt_bad(o, "-n/--iters", arg, "is not a number of iterations, 1..1000000000");
		o->iters_set = true;
		return 0;
	case 'D':
		if (pt_parse_double(arg, 0.001, 1e6, &o->duration_s))
			return pt_bad(o, "-D/--duration", arg, "is not a duration in seconds, 0.001..1000000");
		return 0;
	case 'q':
		if (pt_parse_u64(arg, 1, 65536, &v))
			return pt_bad(o, "-q/--qp", arg, "is not a number of QPs, 1..65536");
		o->qps = (unsigned)v;
		return 0;
	case 'm':
		if (pt_parse_u64(arg, 256, 4096, &v) || (v & (v - 1)))
			return pt_bad(o, "-m/--mtu", arg, "is not an IB MTU: 256, 512, 1024, 2048 or 4096");
		o->mtu = (unsigned)v;
		return 0;
	case 't':
		if (pt_parse_u64(arg, 1, 64, &v))
			return pt_bad(o, "-t/--tx-depth", arg, "is not in 1..64 (the engine's RC window)");
		o->tx_depth = (unsigned)v;
		return 0;
	case 'x':
		if (pt_parse_u64(arg, 0, 255, &v))
			return pt_bad(o, "-x/--gid-index", arg, "is not a GID index, 0..255");
		return 0; /* GIDs follow the addresses here */
	case OPT_TCLASS:
		if (pt_parse_u64(arg, 0, 255, &v))
			return pt_bad(o, "--tclass", arg, "is not a traffic class byte, 0..255");
		o->tclass = (int)v;
		return 0;
	case OPT_LINK:
		if (pt_parse_double(arg, 0.001, 800, &o->link_gbps))
			return pt_bad(o, "--link-gbps", arg, "is not a link speed in Gb/s, 0 < x <= 800");
		return 0;
	case OPT_PORT_MTU:
		if (pt_parse_u64(arg, 576, 9000, &v))
			return pt_bad(o, "--port-mtu", arg, "is not an IP MTU, 576..9000");
		o->port_mtu = (unsigned)v;
		return 0;
	case OPT_QPN:
	case OPT_DEST_QPN:
		if (pt_parse_u64(arg, 2, 0xFFFFFF, &v))
			return pt_bad(o, ch == OPT_QPN ? "--qpn" : "--dest-qpn", arg, "is not a QPN, 0x2..0xFFFFFF");
		*(ch == OPT_QPN ? &o->qpn : &o->dest_qpn) = (uint32_t)v;
		return 0;
	}
	return 1; /* not a numeric flag */
}

/* Options that take a string or none. */
static int pt_other_flag(struct pt_opts *o, int ch, const char *arg)
{
	switch (ch) {
	case 'a': o->all = true; return 0;
	case 'F': return 0; /* perftest: do not warn about the CPU frequency */
	case 'c': return pt_parse_conn(o, arg);
	case 'r': o->report = arg; return 0;
	case 'd':
	case OPT_VDEV: o->device = arg; return pt_config_safe(o, "--device", arg);
	case OPT_GBITS: o->gbits = true; return 0;
	case OPT_JSON: o->json = true; return 0;
	case OPT_CAPTURE:
		o->capture = arg;
		if (strlen(arg) >= PT_PATH)
			return pt_bad(o, "--capture", arg, "is longer than 255 characters");
		return pt_config_safe(o, "--capture", arg);
	case OPT_LCORES: return pt_parse_lcores(o, arg);
	case OPT_KEEP: o->keep = true; return 0;
	case OPT_VDEV_ARGS: o->vdev_args = arg; return pt_config_safe(o, "--vdev-args", arg);
	case OPT_SRC_IP: o->src_ip = arg; return pt_check_ip(o, "--src-ip", arg);
	case OPT_DST_IP: o->dst_ip = arg; return pt_check_ip(o, "--dst-ip", arg);
	case OPT_SRC_MAC: o->src_mac = arg; return pt_check_mac(o, "--src-mac", arg);
	case OPT_DST_MAC: o->dst_mac = arg; return pt_check_mac(o, "--dst-mac", arg);
	case OPT_HUGE: o->huge = true; return 0;
	case OPT_SERVER: o->server = true; return 0;
	case OPT_EAL_ARG:
		if (o->n_eal_args >= PT_MAX_EAL_ARGS) {
			fprintf(stderr, "%s: --eal-arg: at most %d\n", o->prog, PT_MAX_EAL_ARGS);
			return -1;
		}
		o->eal_args[o->n_eal_args++] = arg;
		return pt_config_safe(o, "--eal-arg", arg);
	}
	fprintf(stderr, "%s: unknown flag (see %s --help)\n", o->prog, o->prog);
	return -1;
}

/* 0: run; 1: help printed; -1: bad flags (message printed). */
static int pt_parse_flags(int argc, char **argv, struct pt_opts *o)
{
	int ch, rc;

	optind = 1;
	opterr = 1;
	while ((ch = getopt_long(argc, argv, "s:n:D:q:ac:m:t:r:d:x:Fh", pt_longopts, NULL)) != -1) {
		if (ch == 'h') {
			pt_usage(stdout, o->test->name);
			return 1;
		}
		if (ch == '?' || ch == ':') {
			fprintf(stderr, "%s: see %s --help\n", o->prog, o->prog);
			return -1;
		}
		rc = pt_numeric_flag(o, ch, optarg);
		if (rc > 0)
			rc = pt_other_flag(o, ch, optarg);
		if (rc)
			return -1;
	}
	if (optind < argc) { /* perftest's client takes the server's address last */
		if (optind + 1 < argc || o->dst_ip) {
			fprintf(stderr, "%s: unexpected argument '%s'\n", o->prog, argv[optind + (o->dst_ip ? 0 : 1)]);
			return -1;
		}
		o->dst_ip = argv[optind];
		if (pt_check_ip(o, "DST_IP", o->dst_ip))
			return -1;
	}
	return 0;
}

/* ---- defaults and the rules between flags ---- */

static bool pt_is_virtual_device(const char *dev)
{
	return !strncmp(dev, "net_", 4) || !strncmp(dev, "ring:", 5);
}

static unsigned pt_port_mtu(const struct pt_opts *o)
{
	return o->device ? (o->port_mtu ? o->port_mtu : 1500) : PT_VIRTUAL_PORT_MTU;
}

/* The largest IB MTU whose packets fit the port (docs/config.md's rule for flows.mtu). */
static unsigned pt_largest_mtu(const struct pt_opts *o)
{
	bool v6 = false;
	uint8_t gid[16];
	unsigned room, mtu = 4096;

	if (o->src_ip)
		pt_ip_to_gid(o->src_ip, gid, &v6);
	room = pt_port_mtu(o) - (v6 ? 40 : 20) - 8 - 12 - 28 - 4;
	while (mtu > 256 && mtu > room)
		mtu /= 2;
	return mtu;
}

static int pt_usage_error(const struct pt_opts *o, const char *msg)
{
	fprintf(stderr, "%s: %s\n", o->prog, msg);
	return -1;
}

static int pt_check_connection(const struct pt_opts *o)
{
	if (o->conn == PT_UD && o->test->verb != PT_SEND)
		return pt_usage_error(o, "UD connection only possible with SEND (send_bw, send_lat)");
	if (o->conn == PT_UC && o->test->verb == PT_READ)
		return pt_usage_error(o, "RDMA READ needs RC (-c RC)");
	if (o->test->kind == PT_LAT && o->qps > 1)
		return pt_usage_error(o, "multiple QPs only available on bw tests (-q)");
	return 0;
}

static int pt_check_port_flags(struct pt_opts *o)
{
	if (!o->device) {
		if (o->vdev_args || o->src_ip || o->src_mac || o->dst_ip || o->dst_mac || o->port_mtu || o->server ||
		    o->link_gbps > 0)
			return pt_usage_error(o, "--vdev-args, --src-ip, --src-mac, --dst-ip, --dst-mac, --link-gbps, "
						 "--port-mtu and --server need --device (the virtual topology sets them)");
		return 0;
	}
	if (!o->src_ip)
		return pt_usage_error(o, "--device needs --src-ip (the port's address)");
	if (!o->server && (!o->dst_ip || !o->dst_mac))
		return pt_usage_error(o, "--device needs --dst-ip and --dst-mac (the far end's; no ARP here)");
	if (o->vdev_args && strncmp(o->device, "net_", 4))
		return pt_usage_error(o, "--vdev-args is for a vdev (--device net_...)");
	if (o->dst_ip && o->src_ip) {
		uint8_t g[16];
		bool v6_src, v6_dst;
		pt_ip_to_gid(o->src_ip, g, &v6_src);
		pt_ip_to_gid(o->dst_ip, g, &v6_dst);
		if (v6_src != v6_dst)
			return pt_usage_error(o, "--src-ip and --dst-ip must be of one family (IPv4 or IPv6)");
	}
	if (o->link_gbps <= 0 && pt_is_virtual_device(o->device))
		o->link_gbps = 100; /* virtual devices report no real speed */
	return 0;
}

static int pt_check_run_length(struct pt_opts *o)
{
	if (o->iters_set && o->duration_s > 0)
		return pt_usage_error(o, "-n and -D are exclusive (iterations or a duration)");
	if (o->all && o->duration_s > 0)
		return pt_usage_error(o, "-a runs every size for -n iterations: not with -D");
	if (o->all && o->size_set)
		return pt_usage_error(o, "-a and -s are exclusive (-a runs every size)");
	if (o->all && o->capture)
		return pt_usage_error(o, "--capture holds one run: not with -a");
	if (!o->iters_set)
		o->iters = o->test->kind == PT_BW ? 5000 : 1000;
	return 0;
}

static int pt_apply_defaults(struct pt_opts *o)
{
	unsigned largest = pt_largest_mtu(o);
	char msg[160];

	if (pt_check_connection(o) || pt_check_port_flags(o) || pt_check_run_length(o))
		return -1;
	if (!o->mtu)
		o->mtu = largest;
	if (o->mtu > largest) {
		snprintf(msg, sizeof(msg), "-m %u does not fit the port's IP MTU of %u (largest: %u; --port-mtu)", o->mtu,
			 pt_port_mtu(o), largest);
		return pt_usage_error(o, msg);
	}
	if (!o->size_set)
		o->size = o->test->kind == PT_BW ? 65536 : 2;
	if (!o->tx_depth)
		o->tx_depth = o->test->kind == PT_BW ? 64 : 1;
	if (o->test->kind == PT_LAT)
		o->tx_depth = 1; /* ping-pong: one message in flight */
	if (!o->lcore_list[0] && pt_default_lcores(o))
		return -1;
	if (!o->qpn)
		o->qpn = PT_QPN;
	if (!o->dest_qpn)
		o->dest_qpn = PT_DEST_QPN;
	if ((uint64_t)o->qpn + o->qps - 1 > 0xFFFFFF || (uint64_t)o->dest_qpn + o->qps - 1 > 0xFFFFFF)
		return pt_usage_error(o, "the last QP's QPN would pass 0xFFFFFF (--qpn, --dest-qpn, -q)");
	return 0;
}

/* Write and send latency rides on a 24-byte probe in the payload; READs are timed from a capture. */
static bool pt_needs_probe(const struct pt_opts *o)
{
	return o->test->kind == PT_LAT && o->test->verb != PT_READ;
}

/* The sizes to run: one, or perftest's -a series within what this test can send. */
static unsigned pt_sizes(const struct pt_opts *o, uint64_t *sizes)
{
	uint64_t lo = pt_needs_probe(o) ? 32 : 2, hi = PT_ALL_MAX_SIZE;
	unsigned n = 0;

	if (o->conn == PT_UD)
		hi = o->mtu;
	if (!o->all) {
		sizes[0] = o->size;
		if (pt_needs_probe(o) && sizes[0] < PT_PROBE_BYTES)
			sizes[0] = PT_PROBE_BYTES;
		if (o->conn == PT_UD && sizes[0] > o->mtu)
			sizes[0] = o->mtu;
		return 1;
	}
	for (uint64_t s = lo; s <= hi && n < PT_MAX_RUNS; s *= 2)
		sizes[n++] = s;
	return n;
}

/* ---- the engine configuration ---- */

static void pt_config_eal(FILE *f, const struct pt_opts *o, unsigned run)
{
	fprintf(f, "eal = { lcores = \"%s\"; main_lcore = %u; memory_mb = 512; huge_pages = %s;\n", o->lcore_list,
		o->main_lcore, o->huge ? "true" : "false");
	fprintf(f, "  file_prefix = \"perftest-%ld-%u\"; log_level = \"notice\";\n", (long)getpid(), run);
	if (o->n_eal_args) {
		fprintf(f, "  extra_args = [");
		for (unsigned i = 0; i < o->n_eal_args; i++)
			fprintf(f, "%s\"%s\"", i ? ", " : "", o->eal_args[i]);
		fprintf(f, "];\n");
	}
	fprintf(f, "};\n\n");
}

static const char pt_virtual_mac[2][18] = { "02:00:00:00:70:01", "02:00:00:00:70:02" };
static const char pt_virtual_ip[2][16] = { "192.168.70.1", "192.168.70.2" };

/* Far-end role: a reflector sends UC/UD ping-pongs back; RC answers need RX and TX on one lcore. */
static const char *pt_far_role(const struct pt_opts *o)
{
	return o->test->kind == PT_LAT && o->conn != PT_RC ? "reflect" : "txrx";
}

/* The built-in topology: two ends of one ring cable, the requester and its far end. */
static void pt_config_virtual_ports(FILE *f, const struct pt_opts *o)
{
	fprintf(f, "ports = (\n");
	for (unsigned i = 0; i < 2; i++)
		fprintf(f, "  { name = \"%s\"; device = \"ring:perftest:%c\"; mac = \"%s\"; ipv4 = \"%s\";\n"
			   "    link_speed_gbps = 100.0; mtu = %u; }%s\n",
			i ? "remote" : "local", i ? 'b' : 'a', pt_virtual_mac[i], pt_virtual_ip[i], PT_VIRTUAL_PORT_MTU,
			i ? "" : ",");
	fprintf(f, ");\n\nlcores = (\n  { lcore = %u; port = \"local\"; role = \"txrx\"; },\n"
		   "  { lcore = %u; port = \"remote\"; role = \"%s\"; }\n);\n\n",
		o->lcore_local, o->lcore_remote, pt_far_role(o));
}

/* --device: one port, the requester's or (--server) the far end's. */
static void pt_config_device_port(FILE *f, const struct pt_opts *o)
{
	uint8_t gid[16];
	bool v6;

	pt_ip_to_gid(o->src_ip, gid, &v6);
	fprintf(f, "ports = (\n  { name = \"local\"; device = \"%s\"; %s = \"%s\"; mtu = %u;", o->device,
		v6 ? "ipv6" : "ipv4", o->src_ip, pt_port_mtu(o));
	if (o->vdev_args)
		fprintf(f, " vdev_args = \"%s\";", o->vdev_args);
	if (o->src_mac)
		fprintf(f, " mac = \"%s\";", o->src_mac);
	if (o->link_gbps > 0)
		fprintf(f, " link_speed_gbps = %.17g;", o->link_gbps);
	fprintf(f, " }\n);\n\nlcores = ( { lcore = %u; port = \"local\"; role = \"%s\"; } );\n\n", o->lcore_local,
		o->server ? pt_far_role(o) : "txrx");
}

static void pt_config_flow(FILE *f, const struct pt_opts *o, uint64_t size)
{
	const char *dst_mac = o->device ? o->dst_mac : pt_virtual_mac[1];
	const char *dst_ip = o->device ? o->dst_ip : pt_virtual_ip[1];
	static const char *const transport[] = { "rc", "uc", "ud" };

	fprintf(f, "flows = (\n  { name = \"perftest\"; port = \"local\"; dst_mac = \"%s\"; dst_ip = \"%s\";\n", dst_mac,
		dst_ip);
	fprintf(f, "    transport = \"%s\"; ops = { %s = 1; }; message_size = %" PRIu64 "; mtu = %u;\n",
		transport[o->conn], pt_verb_op[o->test->verb], size, o->mtu);
	fprintf(f, "    qpn = 0x%x; dest_qpn = 0x%x; count = %u;\n", o->qpn, o->dest_qpn, o->qps);
	if (o->tclass >= 0)
		fprintf(f, "    dscp = %d; ecn = %d;\n", o->tclass >> 2, o->tclass & 3);
	if (o->conn == PT_RC)
		fprintf(f, "    rc = { max_outstanding = %u; };\n", o->tx_depth);
	if (pt_needs_probe(o))
		fprintf(f, "    latency = { mode = \"pingpong\"; timeout_us = %.1f; };\n", PT_PINGPONG_TIMEOUT_US);
	if (o->duration_s <= 0)
		fprintf(f, "    stop = { messages = %" PRIu64 "%s; };\n", o->iters, o->iters > INT32_MAX ? "L" : "");
	fprintf(f, "  }\n);\n\n");
}

/* The far end of a client on another host: RC responders for its QPs (fixed QPNs on both ends,
 * where perftest exchanges them over TCP). UC/UD need no QP here: the receiver counts them. */
static void pt_config_responders(FILE *f, const struct pt_opts *o)
{
	if (o->conn != PT_RC)
		return;
	fprintf(f, "responders = (\n  { port = \"local\"; qpn = 0x%x; peer_qpn = 0x%x; count = %u; mtu = %u; }\n);\n\n",
		o->dest_qpn, o->qpn, o->qps, o->mtu);
}

struct pt_paths {
	char cfg[PT_PATH], report[PT_PATH], ts[PT_PATH], capture[PT_PATH], log[PT_PATH];
};

static void pt_config_run(FILE *f, const struct pt_opts *o, const struct pt_paths *p)
{
	fprintf(f, "run = { duration_s = %.17g; stats_interval_s = %.1f; report = \"%s\";\n", o->duration_s,
		PT_INTERVAL_S, p->report);
	if (!o->server)
		fprintf(f, "  timeseries = \"%s\";\n", p->ts);
	if (p->capture[0])
		fprintf(f, "  capture = \"%s\"; capture_ports = [\"local\"];\n", p->capture);
	fprintf(f, "};\n");
}

static int pt_write_config(const struct pt_opts *o, const struct pt_paths *p, uint64_t size, unsigned run)
{
	FILE *f = fopen(p->cfg, "w");

	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", o->prog, p->cfg, strerror(errno));
		return -1;
	}
	fprintf(f, "# Generated by roce-engine %s (docs/perftest.md); every setting: docs/config.md\n\n",
		o->test->name);
	pt_config_eal(f, o, run);
	if (o->device)
		pt_config_device_port(f, o);
	else
		pt_config_virtual_ports(f, o);
	if (o->server)
		pt_config_responders(f, o);
	else
		pt_config_flow(f, o, size);
	pt_config_run(f, o, p);
	if (fclose(f)) {
		fprintf(stderr, "%s: %s: %s\n", o->prog, p->cfg, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- the work directory ---- */

static int pt_work_open(const struct pt_opts *o, struct pt_work *w)
{
	const char *tmp = getenv("TMPDIR");

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (strlen(tmp) + sizeof("/roce-perftest-XXXXXX") > sizeof(w->dir)) {
		fprintf(stderr, "%s: $TMPDIR is longer than %zu characters\n", o->prog, sizeof(w->dir) - 22);
		return -1;
	}
	snprintf(w->dir, sizeof(w->dir), "%s/roce-perftest-XXXXXX", tmp);
	if (!mkdtemp(w->dir)) {
		fprintf(stderr, "%s: cannot make a work directory %s: %s\n", o->prog, w->dir, strerror(errno));
		return -1;
	}
	if (o->report)
		snprintf(w->report, sizeof(w->report), "%s", o->report);
	else
		snprintf(w->report, sizeof(w->report), "%s/report.json", w->dir);
	return 0;
}

static void pt_paths_for_run(const struct pt_opts *o, const struct pt_work *w, unsigned run, struct pt_paths *p)
{
	snprintf(p->cfg, sizeof(p->cfg), "%s/run%u.cfg", w->dir, run);
	snprintf(p->report, sizeof(p->report), "%s/run%u.json", w->dir, run);
	snprintf(p->ts, sizeof(p->ts), "%s/run%u-timeseries.csv", w->dir, run);
	snprintf(p->log, sizeof(p->log), "%s/run%u.log", w->dir, run);
	p->capture[0] = 0;
	if (o->capture)
		snprintf(p->capture, sizeof(p->capture), "%s", o->capture);
	else if (o->test->verb == PT_READ && o->test->kind == PT_LAT && !o->server)
		snprintf(p->capture, sizeof(p->capture), "%s/run%u.pcapng", w->dir, run);
}

/* Removes what the runs left, unless --keep; the report stays when it lives there. */
static void pt_work_close(const struct pt_opts *o, const struct pt_work *w, unsigned runs)
{
	struct pt_paths p;

	if (o->keep)
		return;
	for (unsigned r = 0; r < runs; r++) {
		pt_paths_for_run(o, w, r, &p);
		unlink(p.cfg);
		unlink(p.report);
		unlink(p.ts);
		unlink(p.log);
		if (!o->capture && p.capture[0])
			unlink(p.capture);
	}
	rmdir(w->dir); /* fails, as it should, when the report is in it */
}

/* ---- running the engine ---- */

static void pt_forward_signal(int sig)
{
	pt_stop = 1;
	if (pt_child > 0)
		kill((pid_t)pt_child, sig);
}

/* In the child: roce-engine's own path with the generated config, its lines to the log. */
static void pt_child_run(const struct pt_paths *p)
{
	char *argv[] = { "roce-engine", "-f", (char *)p->cfg, "-q", NULL };
	int fd = open(p->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	int rc = engine_cli_main(4, argv);
	fflush(NULL);
	_exit(rc);
}

static void pt_print_log(const struct pt_opts *o, const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	fprintf(stderr, "%s: the engine's output (%s):\n", o->prog, path);
	while (fgets(line, sizeof(line), f))
		fputs(line, stderr);
	fclose(f);
}

static int pt_run_engine(const struct pt_opts *o, const struct pt_paths *p)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", o->prog, strerror(errno));
		return ENGINE_EXIT_INIT;
	}
	if (pid == 0)
		pt_child_run(p);
	pt_child = pid;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			status = -1;
			break;
		}
	pt_child = 0;
	if (status == -1 || !WIFEXITED(status)) {
		fprintf(stderr, "%s: the engine's process ended abnormally\n", o->prog);
		pt_print_log(o, p->log);
		return ENGINE_EXIT_INIT;
	}
	return WEXITSTATUS(status);
}

/* ---- reading results ---- */

static double pt_num(const json_t *obj, const char *key)
{
	return json_number_value(json_object_get(obj, key));
}

/* The best interval of the time series: goodput of the flow group, or for READs the requester
 * port's RX rate scaled by the share of payload in what it received. The last row (the drain
 * after TX stopped) covers a partial interval and is left out. */
static double pt_peak_from_timeseries(const char *path, bool read, double payload_share)
{
	char line[512];
	double best = 0, pending = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *field[16];
		unsigned n = 0;
		for (char *s = line, *tok; n < 16 && (tok = strsep(&s, ",\n")) != NULL;)
			field[n++] = tok;
		if (n < 8)
			continue;
		bool ours = read ? !strcmp(field[1], "port") && !strcmp(field[2], "local")
				 : !strcmp(field[1], "flow") && !strcmp(field[2], "perftest");
		if (!ours || !*field[read ? 5 : 7])
			continue;
		if (pending > best) /* the row before this one was not the last */
			best = pending;
		pending = strtod(field[read ? 5 : 7], NULL) * (read ? payload_share : 1.0);
	}
	fclose(f);
	return best;
}

static void pt_bw_from_report(const struct pt_opts *o, const struct pt_paths *p, struct pt_run *r)
{
	double secs = pt_num(r->report, "duration_s"), gbps = 0, messages = 0, rx_bytes = 0;
	const json_t *fl;
	size_t i;

	json_array_foreach (json_object_get(r->report, "flows"), i, fl) {
		bool local = json_is_string(json_object_get(fl, "receiver"));
		if (o->conn == PT_RC) { /* acknowledged, as perftest counts completions */
			messages += pt_num(json_object_get(fl, "rc"), "completions");
		} else { /* what the local receiver got, else what was sent */
			messages += pt_num(fl, local ? "rx_messages" : "messages");
			gbps += pt_num(fl, "goodput_gbps");
		}
	}
	if (o->conn == PT_RC) /* READ data flows back with the answers: the receiver saw none of it */
		gbps = secs > 0 ? messages * (double)r->size * 8 / secs / 1e9 : 0;
	json_array_foreach (json_object_get(r->report, "ports"), i, fl) {
		const char *name = json_string_value(json_object_get(fl, "name"));
		if (name && !strcmp(name, "local"))
			rx_bytes = pt_num(fl, "rx_bytes");
	}
	r->iterations = (uint64_t)messages;
	r->bw_avg_gbps = gbps;
	r->msg_rate_mpps = secs > 0 ? messages / secs / 1e6 : 0;
	r->bw_peak_gbps = pt_peak_from_timeseries(p->ts, o->test->verb == PT_READ,
						  rx_bytes > 0 ? messages * (double)r->size / rx_bytes : 0);
	r->peak_from_interval = r->bw_peak_gbps > r->bw_avg_gbps;
	if (!r->peak_from_interval) /* the whole run is a window too */
		r->bw_peak_gbps = r->bw_avg_gbps;
}

/* Write and send: the report's round trip, halved as perftest halves its ping-pong. */
static int pt_lat_from_report(const struct pt_opts *o, struct pt_run *r)
{
	const json_t *fl = json_array_get(json_object_get(r->report, "flows"), 0);
	const char *kind = o->conn == PT_RC ? "ack" : "rtt";
	const json_t *s = json_object_get(json_object_get(fl, "latency_ns"), kind);

	if (!s || pt_num(s, "count") < 1)
		return -1;
	r->iterations = (uint64_t)pt_num(s, "count");
	r->t_min = pt_num(s, "min") / 2;
	r->t_max = pt_num(s, "max") / 2;
	r->t_typical = pt_num(s, "p50") / 2;
	r->t_avg = pt_num(s, "mean") / 2;
	r->t_stdev = pt_num(s, "stddev") / 2;
	r->t_99 = pt_num(s, "p99") / 2;
	r->t_99_9 = pt_num(s, "p99_9") / 2;
	r->lat_source = o->conn == PT_RC ? "flows[0].latency_ns.ack / 2 (request -> ACK, halved)"
					 : "flows[0].latency_ns.rtt / 2 (ping-pong round trip, halved)";
	return 0;
}

/* ---- READ latency from the capture ---- */

struct pt_pcapng {
	FILE *f;
	double tick_ns[8];          /* per interface: nanoseconds per timestamp unit */
	unsigned n_if;
};

/* if_tsresol: 10^-v seconds, or 2^-v with the top bit set; default microseconds. */
static double pt_tick_ns(const uint8_t *opts, uint32_t len)
{
	for (uint32_t at = 0; at + 4 <= len;) {
		uint16_t code, olen;
		memcpy(&code, opts + at, 2);
		memcpy(&olen, opts + at + 2, 2);
		if (code == 0)
			break;
		if (code == 9 && olen >= 1 && at + 5 <= len) {
			uint8_t v = opts[at + 4];
			return v & 0x80 ? 1e9 / ldexp(1.0, v & 0x7f) : 1e9 / pow(10.0, v);
		}
		at += 4 + ((olen + 3u) & ~3u);
	}
	return 1000.0;
}

/* READ request -> last response of a QP, one in flight: the request's PSN and its response
 * count give the last response's PSN, so a copy the capture lost cannot pair wrong times. */
struct pt_read_pairing {
	uint32_t packets_per_read;  /* responses per READ: ceil(size / mtu) */
	bool pending;
	uint32_t last_psn;
	uint64_t sent;              /* the request's time, in the capture's units */
	double *samples;
	size_t n, cap;
};

/* t: the frame's time in the interface's units (integers: nanoseconds since 1970 do not fit a
 * double's mantissa), tick_ns: their length. */
static int pt_pair_frame(struct pt_read_pairing *pr, const uint8_t *d, uint32_t len, uint64_t t, double tick_ns)
{
	uint32_t off = 14;
	uint16_t type;

	if (len < 14)
		return 0;
	type = (uint16_t)(d[12] << 8 | d[13]);
	if (type == 0x8100 && len >= 18) {
		type = (uint16_t)(d[16] << 8 | d[17]);
		off = 18;
	}
	if (type == 0x0800 && len >= off + 20)
		off += (d[off] & 0xf) * 4u;
	else if (type == 0x86DD)
		off += 40;
	else
		return 0;
	if (len < off + 8 + 12 || (d[off + 2] << 8 | d[off + 3]) != 4791)
		return 0;
	const uint8_t *bth = d + off + 8;
	uint8_t opcode = bth[0];
	uint32_t psn = (uint32_t)(bth[9] << 16 | bth[10] << 8 | bth[11]);
	if (opcode == 0x0C) { /* RC RDMA READ request; a retransmission keeps the first time */
		if (!pr->pending || pr->last_psn != ((psn + pr->packets_per_read - 1) & 0xFFFFFF))
			pr->sent = t;
		pr->pending = true;
		pr->last_psn = (psn + pr->packets_per_read - 1) & 0xFFFFFF;
	} else if ((opcode == 0x0F || opcode == 0x10) && pr->pending && psn == pr->last_psn) { /* LAST, ONLY */
		if (pr->n == pr->cap) {
			size_t cap = pr->cap ? pr->cap * 2 : 1024;
			double *s = realloc(pr->samples, cap * sizeof(*s));
			if (!s)
				return -1;
			pr->samples = s;
			pr->cap = cap;
		}
		pr->samples[pr->n++] = (double)(t - pr->sent) * tick_ns;
		pr->pending = false;
	}
	return 0;
}

/* One block of the pcapng file the engine wrote (host byte order, as rte_pcapng writes it). */
static int pt_pcapng_block(struct pt_pcapng *pc, struct pt_read_pairing *pr, uint8_t *buf, uint32_t type,
			   uint32_t body)
{
	if (type == 1 && body >= 8) { /* interface description */
		if (pc->n_if < 8)
			pc->tick_ns[pc->n_if] = pt_tick_ns(buf + 8, body - 8);
		pc->n_if++;
	} else if (type == 6 && body >= 20) { /* enhanced packet */
		uint32_t ifc, hi, lo, caplen;
		memcpy(&ifc, buf, 4);
		memcpy(&hi, buf + 4, 4);
		memcpy(&lo, buf + 8, 4);
		memcpy(&caplen, buf + 12, 4);
		if (caplen > body - 20 || ifc >= pc->n_if || ifc >= 8)
			return -1;
		return pt_pair_frame(pr, buf + 20, caplen, (uint64_t)hi << 32 | lo, pc->tick_ns[ifc]);
	}
	return 0;
}

static int pt_read_capture(const char *path, struct pt_read_pairing *pr)
{
	struct pt_pcapng pc = { .f = fopen(path, "rb") };
	uint8_t *buf = NULL;
	uint32_t hdr[2];
	int rc = 0;

	if (!pc.f)
		return -1;
	while (rc == 0 && fread(hdr, 4, 2, pc.f) == 2) {
		if (hdr[1] < 12 || hdr[1] % 4 || hdr[1] > (1u << 24)) {
			rc = -1;
			break;
		}
		uint8_t *b = realloc(buf, hdr[1]);
		if (!b || fread(b, 1, hdr[1] - 8, pc.f) != hdr[1] - 8) {
			buf = b ? b : buf;
			rc = -1;
			break;
		}
		buf = b;
		uint32_t magic;
		memcpy(&magic, buf, 4);
		if (hdr[0] == 0x0A0D0D0A && magic != 0x1A2B3C4D) {
			rc = -1; /* a section in the other byte order: not the engine's */
			break;
		}
		rc = pt_pcapng_block(&pc, pr, buf, hdr[0], hdr[1] - 12);
	}
	free(buf);
	fclose(pc.f);
	return rc;
}

static int pt_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Nearest rank, as the engine's histograms define percentiles. */
static double pt_rank(const double *sorted, size_t n, double q)
{
	size_t k = (size_t)ceil(q * (double)n);
	return sorted[k ? k - 1 : 0];
}

static void pt_stats_from_samples(struct pt_run *r, double *s, size_t n)
{
	double sum = 0, sq = 0;

	qsort(s, n, sizeof(*s), pt_cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	r->t_avg = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (s[i] - r->t_avg) * (s[i] - r->t_avg);
	r->iterations = n;
	r->t_min = s[0];
	r->t_max = s[n - 1];
	r->t_typical = pt_rank(s, n, 0.5);
	r->t_stdev = sqrt(sq / (double)n);
	r->t_99 = pt_rank(s, n, 0.99);
	r->t_99_9 = pt_rank(s, n, 0.999);
	r->lat_source = "perftest.results[].latency_ns: READ request -> last response, from a capture of the "
			"requester's port (full round trip)";
	r->extra = json_pack("{s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:s}", "count", (json_int_t)n, "min", r->t_min, "max",
			     r->t_max, "mean", r->t_avg, "stddev", r->t_stdev, "p50", r->t_typical, "p99", r->t_99,
			     "p99_9", r->t_99_9, "source", "capture");
}

static int pt_lat_from_capture(const struct pt_opts *o, const struct pt_paths *p, struct pt_run *r)
{
	struct pt_read_pairing pr = { .packets_per_read = (uint32_t)((r->size + o->mtu - 1) / o->mtu) };
	int rc;

	if (!pr.packets_per_read)
		pr.packets_per_read = 1;
	rc = pt_read_capture(p->capture, &pr);
	if (rc == 0 && pr.n > 0)
		pt_stats_from_samples(r, pr.samples, pr.n);
	else
		rc = -1;
	free(pr.samples);
	return rc;
}

/* ---- printing ---- */

static void pt_print_gid(const char *ip)
{
	uint8_t gid[16];
	bool v6;

	pt_ip_to_gid(ip, gid, &v6);
	printf(" GID: ");
	for (unsigned i = 0; i < 16; i++) /* decimal bytes, as perftest prints them */
		printf("%02d%s", gid[i], i < 15 ? ":" : "\n");
}

static void pt_print_address(const struct pt_opts *o, const char *side, uint32_t qpn, const char *ip)
{
	printf(" %s address: LID 0000 QPN %#06x PSN 000000", side, qpn);
	if (o->test->verb == PT_READ)
		printf(" OUT %#04x", o->tx_depth);
	printf("\n");
	pt_print_gid(ip);
}

static void pt_print_addresses(const struct pt_opts *o)
{
	const char *local_ip = o->device ? o->src_ip : pt_virtual_ip[0];
	const char *remote_ip = o->device ? o->dst_ip : pt_virtual_ip[1];
	unsigned shown = o->qps < 16 ? o->qps : 16; /* thousands of lines help nobody */

	for (unsigned i = 0; i < shown; i++)
		pt_print_address(o, "local", o->qpn + i, local_ip);
	for (unsigned i = 0; remote_ip && i < shown; i++)
		pt_print_address(o, "remote", o->dest_qpn + i, remote_ip);
	if (shown < o->qps)
		printf(" ... %u QPs in all: QPNs %#06x.. here, %#06x.. there\n", o->qps, o->qpn, o->dest_qpn);
	printf(PT_LINE);
}

static void pt_print_header(const struct pt_opts *o)
{
	int tclass = o->tclass >= 0 ? o->tclass : 26 << 2 | 2;
	const char *dev = o->device ? o->device : "ring:perftest (virtual, in-process)";

	printf(PT_LINE);
	printf("                    %s %s Test\n", pt_verb_title[o->test->verb],
	       o->test->kind == PT_BW ? "BW" : "Latency");
	printf(" Dual-port       : OFF\t\tDevice         : %s\n", dev);
	printf(" Number of qps   : %u\t\tTransport type : IB\n", o->qps);
	printf(" Connection type : %s\t\tUsing SRQ      : OFF\n", pt_conn_name[o->conn]);
	if (o->conn == PT_RC)
		printf(" TX depth        : %u\n", o->tx_depth);
	printf(" Mtu             : %u[B]\n", o->mtu);
	printf(" Link type       : Ethernet\n");
	printf(" Traffic class   : %d (DSCP %d, ECN %d)\n", tclass, tclass >> 2, tclass & 3);
	if (o->test->verb == PT_READ)
		printf(" Outstand reads  : %u\n", o->tx_depth);
	printf(" Data ex. method : none (fixed QPNs)\n");
	if (pt_needs_probe(o) && !o->all && o->size < PT_PROBE_BYTES)
		printf(" Note: messages of %" PRIu64 " bytes are sent as %d: latency probes need %d payload bytes\n",
		       o->size, PT_PROBE_BYTES, PT_PROBE_BYTES);
	if (o->conn == PT_UD && !o->all && o->size > o->mtu)
		printf(" Note: max msg size in UD is the MTU: %" PRIu64 " bytes are sent as %u\n", o->size, o->mtu);
	if (o->test->kind == PT_LAT)
		printf(" Note: %s\n", o->test->verb == PT_READ ? "t_* are the full READ round trip (request -> response)"
							   : "t_* are half the round trip, as perftest's");
	printf(PT_LINE);
	if (!o->server)
		pt_print_addresses(o);
}

/* Cells at perftest's column positions, so rows line up under its headings. */
static void pt_print_cells(const char *const *cells, const int *cols, unsigned n)
{
	int at = 0;

	for (unsigned i = 0; i < n; i++) {
		int pad = cols[i] - at;
		at += printf("%*s%s", pad > 1 ? pad : 1, "", cells[i]);
	}
	printf("\n");
}

static void pt_print_bw_heading(const struct pt_opts *o)
{
	printf(o->gbits ? " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
			: " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n");
}

/* perftest's units: MB/sec is 2^20 bytes a second, Gb/sec 10^9 bits. */
static double pt_bw_unit(const struct pt_opts *o, double gbps)
{
	return o->gbits ? gbps : gbps * 1e9 / 8 / 1048576.0;
}

static void pt_print_bw_row(const struct pt_opts *o, const struct pt_run *r)
{
	static const int cols[] = { 1, 12, 27, 46, 67 }; /* where the headings start */
	char c[5][32];
	const char *cells[5] = { c[0], c[1], c[2], c[3], c[4] };

	snprintf(c[0], sizeof(c[0]), "%" PRIu64, r->size);
	snprintf(c[1], sizeof(c[1]), "%" PRIu64, r->iterations);
	snprintf(c[2], sizeof(c[2]), "%.2f", pt_bw_unit(o, r->bw_peak_gbps));
	snprintf(c[3], sizeof(c[3]), "%.2f", pt_bw_unit(o, r->bw_avg_gbps));
	snprintf(c[4], sizeof(c[4]), "%.6f", r->msg_rate_mpps);
	pt_print_cells(cells, cols, 5);
}

static void pt_print_lat_heading(void)
{
	printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]"
	       "   99%% percentile[usec]   99.9%% percentile[usec] \n");
}

static void pt_print_lat_row(const struct pt_run *r)
{
	static const int cols[] = { 1, 8, 23, 38, 51, 70, 85, 101, 124 };
	const double v[7] = { r->t_min, r->t_max, r->t_typical, r->t_avg, r->t_stdev, r->t_99, r->t_99_9 };
	char c[9][32];
	const char *cells[9];

	snprintf(c[0], sizeof(c[0]), "%" PRIu64, r->size);
	snprintf(c[1], sizeof(c[1]), "%" PRIu64, r->iterations);
	for (unsigned i = 0; i < 7; i++)
		snprintf(c[2 + i], sizeof(c[0]), "%.2f", v[i] / 1000.0);
	for (unsigned i = 0; i < 9; i++)
		cells[i] = c[i];
	pt_print_cells(cells, cols, 9);
}

/* ---- the front end's JSON: the engine's report of each run, and what the table shows ---- */

static json_t *pt_result_json(const struct pt_opts *o, const struct pt_run *r)
{
	json_t *j = json_pack("{s:I,s:I}", "bytes", (json_int_t)r->size, "iterations", (json_int_t)r->iterations);

	if (o->test->kind == PT_BW) {
		json_object_set_new(j, "bw_peak", json_real(pt_bw_unit(o, r->bw_peak_gbps)));
		json_object_set_new(j, "bw_average", json_real(pt_bw_unit(o, r->bw_avg_gbps)));
		json_object_set_new(j, "msg_rate_mpps", json_real(r->msg_rate_mpps));
		json_object_set_new(j, "bw_peak_gbps", json_real(r->bw_peak_gbps));
		json_object_set_new(j, "bw_average_gbps", json_real(r->bw_avg_gbps));
		json_object_set_new(j, "bw_peak_from", json_string(r->peak_from_interval ? "best 0.1 s interval" : "average"));
	} else {
		const char *keys[] = { "t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us", "t_99_us", "t_99_9_us" };
		const double v[] = { r->t_min, r->t_max, r->t_typical, r->t_avg, r->t_stdev, r->t_99, r->t_99_9 };
		for (unsigned i = 0; i < 7; i++)
			json_object_set_new(j, keys[i], json_real(v[i] / 1000.0));
		json_object_set_new(j, "from", json_string(r->lat_source ? r->lat_source : ""));
		if (r->extra)
			json_object_set(j, "latency_ns", r->extra);
	}
	return j;
}

static json_t *pt_info_json(const struct pt_opts *o)
{
	int tclass = o->tclass >= 0 ? o->tclass : 106;
	json_t *j = json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:s}", "test", o->test->name, "verb",
			      pt_verb_title[o->test->verb], "connection", pt_conn_name[o->conn], "qps", (int)o->qps, "mtu",
			      (int)o->mtu, "tclass", tclass, "dscp", tclass >> 2, "ecn", tclass & 3, "tx_depth",
			      (int)o->tx_depth, "device", o->device ? o->device : "ring:perftest");

	json_object_set_new(j, "iterations", o->duration_s > 0 ? json_null() : json_integer((json_int_t)o->iters));
	json_object_set_new(j, "duration_s", o->duration_s > 0 ? json_real(o->duration_s) : json_null());
	json_object_set_new(j, "bw_unit", json_string(o->gbits ? "Gb/sec (1e9 bit/s)" : "MB/sec (2^20 byte/s)"));
	json_object_set_new(j, "server", json_boolean(o->server));
	return j;
}

static int pt_write_json(const struct pt_opts *o, const struct pt_work *w, struct pt_run *runs, unsigned n)
{
	json_t *root = json_object(), *info = pt_info_json(o), *results = json_array(), *reports = json_array();
	int rc = 0;

	for (unsigned i = 0; i < n; i++) {
		if (!o->server)
			json_array_append_new(results, pt_result_json(o, &runs[i]));
		json_array_append(reports, runs[i].report ? runs[i].report : json_null());
	}
	json_object_set_new(info, "results", results);
	json_object_set_new(root, "perftest", info);
	json_object_set_new(root, "runs", reports);
	if (json_dump_file(root, w->report, JSON_INDENT(2)) != 0) {
		fprintf(stderr, "%s: cannot write %s\n", o->prog, w->report);
		rc = ENGINE_EXIT_REPORT;
	} else if (o->json) {
		json_dumpf(root, stdout, JSON_INDENT(2));
		printf("\n");
	}
	json_decref(root);
	return rc;
}

/* ---- one run, all runs ---- */

static int pt_collect(const struct pt_opts *o, const struct pt_paths *p, struct pt_run *r)
{
	json_error_t err;

	r->report = json_load_file(p->report, 0, &err);
	if (!r->report) {
		fprintf(stderr, "%s: cannot read the engine's report %s: %s\n", o->prog, p->report, err.text);
		return ENGINE_EXIT_REPORT;
	}
	if (o->server)
		return 0;
	if (o->test->kind == PT_BW) {
		pt_bw_from_report(o, p, r);
		if (r->iterations)
			return 0;
	} else if (!(o->test->verb == PT_READ ? pt_lat_from_capture(o, p, r) : pt_lat_from_report(o, r)))
		return 0;
	fprintf(stderr, "%s: %" PRIu64 " bytes: nothing was measured (%s)\n", o->prog, r->size,
		o->test->kind == PT_BW ? "no message delivered" : "no round trip completed");
	return PT_EXIT_NO_RESULT;
}

static int pt_run_size(const struct pt_opts *o, const struct pt_work *w, unsigned idx, struct pt_run *r)
{
	struct pt_paths p;
	int rc;

	pt_paths_for_run(o, w, idx, &p);
	if (pt_write_config(o, &p, r->size, idx))
		return ENGINE_EXIT_CONFIG;
	rc = pt_run_engine(o, &p);
	if (rc != ENGINE_EXIT_OK && rc != ENGINE_EXIT_SLA) {
		fprintf(stderr, "%s: the engine stopped with status %d (docs/engine.md)\n", o->prog, rc);
		pt_print_log(o, p.log);
		if (o->keep)
			fprintf(stderr, "%s: its config: %s\n", o->prog, p.cfg);
		return rc;
	}
	return pt_collect(o, &p, r);
}

static void pt_server_summary(const struct pt_run *r)
{
	const json_t *port = json_array_get(json_object_get(r->report, "ports"), 0);

	printf(" served %.3f s: received %.0f frames (%.0f bytes), sent %.0f frames (%.0f bytes)\n",
	       pt_num(r->report, "duration_s"), pt_num(port, "rx_packets"), pt_num(port, "rx_bytes"),
	       pt_num(port, "tx_packets"), pt_num(port, "tx_bytes"));
}

static int pt_run_all(const struct pt_opts *o, const struct pt_work *w, struct pt_run *runs, unsigned n)
{
	int rc = 0;
	unsigned done = 0;

	if (!o->json)
		pt_print_header(o);
	if (!o->json && !o->server)
		o->test->kind == PT_BW ? pt_print_bw_heading(o) : pt_print_lat_heading();
	for (unsigned i = 0; i < n && !pt_stop; i++) {
		rc = pt_run_size(o, w, i, &runs[i]);
		if (runs[i].report)
			done = i + 1;
		if (rc && rc != ENGINE_EXIT_SLA)
			break;
		if (o->json)
			continue;
		if (o->server)
			pt_server_summary(&runs[i]);
		else if (o->test->kind == PT_BW)
			pt_print_bw_row(o, &runs[i]);
		else
			pt_print_lat_row(&runs[i]);
	}
	if (done) {
		int wrc = pt_write_json(o, w, runs, done);
		if (!o->json) {
			printf(PT_LINE);
			printf(" report: %s\n", w->report);
		}
		if (!rc)
			rc = wrc;
	}
	return rc;
}

static const struct pt_test *pt_find(const char *name)
{
	for (unsigned i = 0; i < sizeof(pt_tests) / sizeof(pt_tests[0]); i++)
		if (!strcmp(name, pt_tests[i].name))
			return &pt_tests[i];
	return NULL;
}

bool perftest_is_subcommand(const char *name)
{
	return pt_find(name) != NULL;
}

int perftest_main(int argc, char **argv)
{
	static struct pt_opts o;
	static struct pt_run runs[PT_MAX_RUNS];
	uint64_t sizes[PT_MAX_RUNS];
	char prog[64];
	struct pt_work w;
	unsigned n;
	int rc;

	o = (struct pt_opts){ .test = pt_find(argv[0]), .qps = 1, .tclass = -1 };
	snprintf(prog, sizeof(prog), "roce-engine %s", argv[0]);
	o.prog = prog;
	argv[0] = prog; /* getopt's own messages name the program by it */
	rc = pt_parse_flags(argc, argv, &o);
	if (rc)
		return rc > 0 ? ENGINE_EXIT_OK : ENGINE_EXIT_USAGE;
	if (pt_apply_defaults(&o))
		return ENGINE_EXIT_USAGE;
	n = o.server ? 1 : pt_sizes(&o, sizes);
	for (unsigned i = 0; i < n; i++)
		runs[i] = (struct pt_run){ .size = o.server ? 0 : sizes[i] };
	if (pt_work_open(&o, &w))
		return ENGINE_EXIT_REPORT;
	signal(SIGINT, pt_forward_signal);
	signal(SIGTERM, pt_forward_signal);
	rc = pt_run_all(&o, &w, runs, n);
	pt_work_close(&o, &w, n);
	for (unsigned i = 0; i < n; i++) {
		json_decref(runs[i].report);
		json_decref(runs[i].extra);
	}
	return rc;
}

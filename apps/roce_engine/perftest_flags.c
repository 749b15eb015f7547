/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The perftest front end's command line (docs/perftest.md): getopt over the flag table's rows
 * (perftest_flag_table.c), each flag's value checked and stored in struct pt_opts, a note for
 * each flag accepted without an effect; then perftest's defaults and the rules between flags
 * (perftest_rules.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "perftest_flags.h"
#include "roce_version.h"

/* ---- values ---- */

int pt_bad(const struct pt_opts *o, const char *flag, const char *value, const char *allowed)
{
	fprintf(stderr, "%s: %s: '%s' %s\n", o->prog, flag, value, allowed);
	return -1;
}

int pt_usage_error(const struct pt_opts *o, const char *msg)
{
	fprintf(stderr, "%s: %s\n", o->prog, msg);
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

/* perftest's -s: a number, or one with a K (2^10) or M (2^20) suffix. */
static int pt_parse_size(const char *s, uint64_t *out)
{
	char digits[32];
	size_t len = strlen(s);
	uint64_t factor = 1, v;

	if (len == 0 || len >= sizeof(digits))
		return -1;
	memcpy(digits, s, len + 1);
	if (digits[len - 1] == 'K' || digits[len - 1] == 'M') {
		factor = digits[len - 1] == 'K' ? 1024 : 1048576;
		digits[len - 1] = 0;
	}
	if (pt_parse_u64(digits, 1, PT_MAX_SIZE, &v) || v > PT_MAX_SIZE / factor)
		return -1;
	*out = v * factor;
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
int pt_ip_to_gid(const char *s, uint8_t gid[16], bool *v6)
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
	static const char *const others[][2] = {
		{ "XRC", "is not available here: XRC needs an HCA's shared receive queues; the engine has RC, UC and UD" },
		{ "DC", "is not available here: DC (dynamically connected) is an HCA's transport; the engine has RC, UC "
			"and UD" },
		{ "SRD", "is not available here: SRD is an EFA adapter's transport; the engine has RC, UC and UD" },
		{ "RawEth", "is not available here: raw Ethernet is raw_ethernet_bw's; the engine's frames are RoCEv2" },
	};

	for (unsigned i = 0; i < 3; i++)
		if (!strcasecmp(s, pt_conn_name[i])) {
			o->conn = (enum pt_conn)i;
			return 0;
		}
	for (unsigned i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if (!strcasecmp(s, others[i][0]))
			return pt_bad(o, "-c/--connection", s, others[i][1]);
	return pt_bad(o, "-c/--connection", s, "is not RC, UC or UD");
}

/* EAL's -l syntax, to find the main lcore and the workers: ids and ranges joined by commas. */
static int pt_parse_lcores(struct pt_opts *o, const char *flag, const char *s)
{
	bool seen[128] = { false };
	unsigned ids[3], n = 0;
	const char *p = s;

	if (strlen(s) >= sizeof(o->lcore_list))
		return pt_bad(o, flag, s, "is too long");
	while (*p) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;

		if (end == p || a >= 128)
			return pt_bad(o, flag, s, "is not an lcore list (e.g. 0-1 or 2,4; ids 0..127)");
		p = end;
		if (*p == '-') {
			b = strtoul(++p, &end, 10);
			if (end == p || b >= 128 || b < a)
				return pt_bad(o, flag, s, "is not an lcore list (e.g. 0-1 or 2,4; ids 0..127)");
			p = end;
		}
		for (unsigned long i = a; i <= b; i++)
			seen[i] = true;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return pt_bad(o, flag, s, "is not an lcore list (e.g. 0-1 or 2,4; ids 0..127)");
	}
	for (unsigned i = 0; i < 128 && n < 3; i++)
		if (seen[i])
			ids[n++] = i;
	if (n < 2)
		return pt_bad(o, flag, s, "needs two lcores at least: the main lcore and a worker");
	o->main_lcore = ids[0];
	o->lcore_local = ids[1];
	o->lcore_remote = n > 2 ? ids[2] : ids[1];
	snprintf(o->lcore_list, sizeof(o->lcore_list), "%s", s);
	return 0;
}

/* perftest's --pin_cores takes "0-3,8" and "0, 1, 2": EAL's list without the spaces. */
static int pt_parse_pin_cores(struct pt_opts *o, const char *s)
{
	char list[128];
	size_t n = 0;

	for (const char *p = s; *p && n < sizeof(list) - 1; p++)
		if (*p != ' ')
			list[n++] = *p;
	list[n] = 0;
	return pt_parse_lcores(o, "--pin_cores", list);
}

/* The first two CPUs of a set that this process may run on (taskset is respected). */
int pt_lcores_from_set(struct pt_opts *o, const cpu_set_t *want, const char *what)
{
	cpu_set_t allowed;
	char list[32];
	int found[2], n = 0;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		CPU_ZERO(&allowed);
	for (int c = 0; c < 128 && n < 2; c++)
		if (CPU_ISSET(c, &allowed) && (!want || CPU_ISSET(c, want)))
			found[n++] = c;
	if (n < 2) {
		fprintf(stderr, "%s: the engine needs two CPUs (a main lcore and a worker)%s; give --lcores\n", o->prog,
			what);
		return -1;
	}
	snprintf(list, sizeof(list), "%d,%d", found[0], found[1]);
	return pt_parse_lcores(o, "--lcores", list);
}

/* --numa_node N: the node's CPUs, from sysfs (/sys/devices/system/node/nodeN/cpulist). */
static int pt_parse_numa_node(struct pt_opts *o, const char *arg)
{
	char path[96], line[1024], what[64];
	cpu_set_t want;
	uint64_t node;
	FILE *f;

	if (pt_parse_u64(arg, 0, 1023, &node))
		return pt_bad(o, "--numa_node", arg, "is not a NUMA node number");
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%" PRIu64 "/cpulist", node);
	f = fopen(path, "r");
	if (!f)
		return pt_bad(o, "--numa_node", arg, "is not a NUMA node of this machine (no /sys/devices/system/node/node<N>)");
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	CPU_ZERO(&want);
	for (char *p = line; *p && *p != '\n';) { /* "0-3,8,10-11" */
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;
		if (end == p)
			break;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		for (unsigned long c = a; c <= b && c < CPU_SETSIZE; c++)
			CPU_SET(c, &want);
		p = *end == ',' ? end + 1 : end;
	}
	snprintf(what, sizeof(what), " on NUMA node %" PRIu64, node);
	return pt_lcores_from_set(o, &want, what);
}

/* One line for a flag accepted without its perftest effect (printed with the header). */
void pt_note(struct pt_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (o->n_notes >= PT_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(o->notes[o->n_notes++], sizeof(o->notes[0]), fmt, ap);
	va_end(ap);
}

/* ---- carried flags ---- */

/* Where a number goes in struct pt_opts, and as what. */
enum pt_number_to { PT_TO_NONE, PT_TO_U64, PT_TO_UNSIGNED, PT_TO_INT, PT_TO_U32, PT_TO_DOUBLE };

/* A flag that takes a number: its range (integers: strtoull's syntax, 0x allowed), where it goes
 * (PT_TO_NONE: checked, not kept) and what a message says is allowed. */
struct pt_number_flag {
	enum pt_flag_id id;
	enum pt_number_to to;
	double min, max;            /* whole numbers for integers, exact in a double */
	size_t offset;
	const char *allowed;
};

#define PT_AT(field) offsetof(struct pt_opts, field)

static const struct pt_number_flag pt_numbers[] = {
	{ F_ITERS, PT_TO_U64, 1, 4294967296.0, PT_AT(iters), "is not a number of iterations, 1..4294967296" },
	{ F_DURATION, PT_TO_DOUBLE, 0.001, 1e6, PT_AT(duration_s), "is not a duration in seconds, 0.001..1000000" },
	{ F_MARGIN, PT_TO_DOUBLE, 0, 1e6, PT_AT(margin_s), "is not a margin in seconds, 0 or more" },
	{ F_QPS, PT_TO_UNSIGNED, 1, 65536, PT_AT(qps), "is not a number of QPs, 1..65536" },
	{ F_MTU, PT_TO_UNSIGNED, 256, 4096, PT_AT(mtu), "is not an IB MTU: 256, 512, 1024, 2048 or 4096" },
	{ F_TX_DEPTH, PT_TO_UNSIGNED, 1, 15000, PT_AT(tx_depth), "is not a TX depth, 1..15000" },
	{ F_OUTS, PT_TO_UNSIGNED, 1, 65535, PT_AT(outs), "is not a number of outstanding READs, 1 or more" },
	{ F_QP_TIMEOUT, PT_TO_INT, 0, 31, PT_AT(qp_timeout), "is not a QP timeout exponent, 0..31" },
	{ F_RETRY_COUNT, PT_TO_INT, 0, 1000, PT_AT(retry_count), "is not a retry count, 0..1000" },
	{ F_SPORT, PT_TO_INT, 1, 65535, PT_AT(udp_sport), "is not a UDP port, 1..65535" },
	{ F_DPORT, PT_TO_NONE, 4791, 4791, 0, "is not 4791: RoCEv2 frames go to UDP port 4791" },
	{ F_TOS, PT_TO_INT, 0, 255, PT_AT(tclass), "is not a traffic class byte, 0..255" },
	{ F_TCLASS, PT_TO_INT, 0, 255, PT_AT(tclass), "is not a traffic class byte, 0..255" },
	{ F_LIMIT_BW, PT_TO_DOUBLE, 0, 1e12, PT_AT(limit_bw), "is not a bandwidth, 0 or more" },
	{ F_LIMIT_MSG_RATE, PT_TO_DOUBLE, 0, 1e12, PT_AT(limit_msg_rate), "is not a message rate in Mpps, 0 or more" },
	{ F_RATE, PT_TO_DOUBLE, 1e-9, 1e12, PT_AT(rate), "is not a rate above 0" },
	/* the engine paces every packet: there are no bursts to size (noted) */
	{ F_BURST, PT_TO_NONE, 0, 1u << 30, 0, "is not a burst size, 0 or more" },
	{ F_LATENCY_GAP, PT_TO_DOUBLE, 0, 1e8, PT_AT(latency_gap_us), "is not a gap in microseconds, 0..1e8" },
	{ F_WAIT_DESTROY, PT_TO_DOUBLE, 0, 86400, PT_AT(wait_destroy_s), "is not a number of seconds, 0..86400" },
	{ F_LINK, PT_TO_DOUBLE, 0.001, 800, PT_AT(link_gbps), "is not a link speed in Gb/s, 0 < x <= 800" },
	{ F_PORT_MTU, PT_TO_UNSIGNED, 576, 9000, PT_AT(port_mtu), "is not an IP MTU, 576..9000" },
	{ F_QPN, PT_TO_U32, 2, 0xFFFFFF, PT_AT(qpn), "is not a QPN, 0x2..0xFFFFFF" },
	{ F_DEST_QPN, PT_TO_U32, 2, 0xFFFFFF, PT_AT(dest_qpn), "is not a QPN, 0x2..0xFFFFFF" },
};

static const struct pt_number_flag *pt_number_of(enum pt_flag_id id)
{
	for (unsigned i = 0; i < sizeof(pt_numbers) / sizeof(pt_numbers[0]); i++)
		if (pt_numbers[i].id == id)
			return &pt_numbers[i];
	return NULL;
}

static void pt_store_number(struct pt_opts *o, const struct pt_number_flag *n, uint64_t v, double d)
{
	char *at = (char *)o + n->offset;

	switch (n->to) {
	case PT_TO_U64: *(uint64_t *)(void *)at = v; break;
	case PT_TO_UNSIGNED: *(unsigned *)(void *)at = (unsigned)v; break;
	case PT_TO_INT: *(int *)(void *)at = (int)v; break;
	case PT_TO_U32: *(uint32_t *)(void *)at = (uint32_t)v; break;
	case PT_TO_DOUBLE: *(double *)(void *)at = d; break;
	case PT_TO_NONE: break;
	}
}

/* Flags that take a number. 1: not one of them. */
static int pt_numeric_flag(struct pt_opts *o, const struct pt_flag *f, const char *arg)
{
	const struct pt_number_flag *n = pt_number_of(f->id);
	uint64_t v = 0;
	double d = 0;
	bool bad;

	if (f->id == F_SIZE) { /* K and M suffixes */
		if (pt_parse_size(arg, &o->size))
			return pt_bad(o, pt_flag_name(f), arg,
				      "is not a size in bytes, 1..1073741824 (K and M suffixes allowed)");
		o->size_set = true;
		return 0;
	}
	if (!n)
		return 1;
	if (n->to == PT_TO_DOUBLE)
		bad = pt_parse_double(arg, n->min, n->max, &d) != 0;
	else
		bad = pt_parse_u64(arg, (uint64_t)n->min, (uint64_t)n->max, &v) ||
		      (f->id == F_MTU && (v & (v - 1))); /* a power of two */
	if (bad)
		return pt_bad(o, pt_flag_name(f), arg, n->allowed);
	pt_store_number(o, n, v, d);
	o->iters_set |= f->id == F_ITERS;
	o->burst_set |= f->id == F_BURST;
	return 0;
}

static int pt_parse_output(struct pt_opts *o, const char *arg)
{
	static const char *const words[] = { "bandwidth", "message_rate", "latency" };

	for (unsigned i = 0; i < 3; i++)
		if (!strcmp(arg, words[i])) {
			o->output = (enum pt_output)(PT_OUT_BW + i);
			return 0;
		}
	return pt_bad(o, "--output", arg, "is not bandwidth, message_rate or latency");
}

static int pt_parse_rate_units(struct pt_opts *o, const char *arg)
{
	if (!strcmp(arg, "g"))
		o->rate_units = PT_RATE_GBPS;
	else if (!strcmp(arg, "M"))
		o->rate_units = PT_RATE_MIBPS;
	else if (!strcmp(arg, "p"))
		o->rate_units = PT_RATE_MPS;
	else
		return pt_bad(o, "--rate_units", arg, "is not M (MiB/s), g (Gb/s) or p (messages per second)");
	return 0;
}

static int pt_parse_rate_type(struct pt_opts *o, const char *arg)
{
	if (!strcmp(arg, "PP"))
		return pt_bad(o, "--rate_limit_type", arg, "is the packet pacing limiter of raw Ethernet tests; use HW or SW");
	if (strcmp(arg, "HW") && strcmp(arg, "SW"))
		return pt_bad(o, "--rate_limit_type", arg, "is not HW or SW");
	o->rate_type_set = true;
	return 0;
}

/* Flags that take a string or none. */
static int pt_other_flag(struct pt_opts *o, const struct pt_flag *f, const char *arg)
{
	const char *name = pt_flag_name(f);

	switch (f->id) {
	case F_ALL: o->all = true; return 0;
	case F_BIDIR: o->bidir = true; return 0;
	case F_CONN: return pt_parse_conn(o, arg);
	case F_CYCLES: o->cycles = true; return 0;
	case F_HIST: o->hist = true; return 0;
	case F_UNSORTED: o->unsorted = true; return 0;
	case F_NO_PEAK: o->no_peak = true; return 0;
	case F_RUN_INF: o->run_inf = true; return 0;
	case F_GBITS: o->gbits = true; return 0;
	case F_REPORT_BOTH: o->report_both = true; return 0;
	case F_REVERSED: o->reversed = true; return 0;
	case F_RATE_TYPE: return pt_parse_rate_type(o, arg);
	case F_RATE_UNITS: return pt_parse_rate_units(o, arg);
	case F_OUTPUT: return pt_parse_output(o, arg);
	case F_CPU_UTIL: o->cpu_util = true; return 0;
	case F_OUT_JSON: o->out_json = true; return 0;
	case F_OUT_JSON_FILE:
		o->out_json = true; /* perftest also wants --out_json; a file named is a file wanted */
		o->out_json_file = arg;
		return 0;
	case F_IPV6: o->ipv6 = true; return 0;
	case F_HUGE: o->huge = true; return 0;
	case F_WRITE_IMM:
	case F_SEND_IMM:
		if (o->test->verb != (f->id == F_WRITE_IMM ? PT_WRITE : PT_SEND))
			return pt_usage_error(o, f->id == F_WRITE_IMM ? "--write_with_imm is for write_bw and write_lat"
								     : "--send_with_imm is for send_bw and send_lat");
		o->imm = true;
		return 0;
	case F_FORCE_LINK:
		if (strcasecmp(arg, "Ethernet") && strcasecmp(arg, "IB"))
			return pt_bad(o, name, arg, "is not IB or Ethernet");
		if (!strcasecmp(arg, "IB"))
			return pt_bad(o, name, arg, "is InfiniBand's link layer; the engine sends RoCE over Ethernet");
		return 0;
	case F_PIN_CORES: return pt_parse_pin_cores(o, arg);
	case F_NUMA_NODE: return pt_parse_numa_node(o, arg);
	case F_SERVER: o->server = true; return 0;
	case F_DEVICE: o->device = arg; return pt_config_safe(o, name, arg);
	case F_SRC_IP: o->src_ip = arg; return pt_check_ip(o, name, arg);
	case F_DST_IP: o->dst_ip = arg; return pt_check_ip(o, name, arg);
	case F_SRC_MAC: o->src_mac = arg; return pt_check_mac(o, name, arg);
	case F_DST_MAC: o->dst_mac = arg; return pt_check_mac(o, name, arg);
	case F_REPORT: o->report = arg; return 0;
	case F_JSON: o->json = true; return 0;
	case F_CAPTURE:
		o->capture = arg;
		if (strlen(arg) >= PT_PATH)
			return pt_bad(o, name, arg, "is longer than 255 characters");
		return pt_config_safe(o, name, arg);
	case F_LCORES: return pt_parse_lcores(o, name, arg);
	case F_KEEP: o->keep = true; return 0;
	case F_VDEV_ARGS: o->vdev_args = arg; return pt_config_safe(o, name, arg);
	case F_EAL_ARG:
		if (o->n_eal_args >= PT_MAX_EAL_ARGS)
			return pt_bad(o, name, arg, "is one too many (at most 16)");
		o->eal_args[o->n_eal_args++] = arg;
		return pt_config_safe(o, name, arg);
	default:
		return pt_usage_error(o, "internal error: a carried flag without a handler");
	}
}

static int pt_flag(struct pt_opts *o, const struct pt_flag *f, const char *arg)
{
	int rc;

	if (f->kind == PT_REFUSED) {
		fprintf(stderr, "%s: %s: not available here: %s\n", o->prog, pt_flag_name(f), f->text);
		return -1;
	}
	if (f->kind == PT_NOOP) {
		pt_note(o, "%s: accepted, no effect: %s", pt_flag_name(f), f->text);
		return 0;
	}
	if (f->id == F_BURST)
		pt_note(o, "%s: accepted, no effect: the engine paces every packet, so there are no bursts", pt_flag_name(f));
	rc = pt_numeric_flag(o, f, arg);
	return rc > 0 ? pt_other_flag(o, f, arg) : rc;
}

/* perftest's words for a command line it does not know, then its usage text. */
static int pt_invalid(const struct pt_opts *o)
{
	fprintf(stderr, " Invalid Command or flag.\n Please check command line and run again.\n\n");
	pt_usage(stderr, o->test->name);
	return -1;
}

/* 0: run; 1: help or version printed; -1: bad flags (message printed). */
static int pt_parse_flags(int argc, char **argv, struct pt_opts *o)
{
	const struct option *longopts;
	const char *shortopts = pt_getopt_tables(&longopts);
	const struct pt_flag *f;
	int ch;

	optind = 1;
	opterr = 1;
	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (ch == '?' || ch == ':' || !(f = pt_flag_of(ch)))
			return pt_invalid(o);
		if (f->id == F_HELP) {
			pt_usage(stdout, o->test->name);
			return 1;
		}
		if (f->id == F_VERSION) {
			printf("Version: %s\n", roce_version_string());
			return 1;
		}
		if (pt_flag(o, f, optarg))
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

int pt_parse(int argc, char **argv, struct pt_opts *o)
{
	int rc = pt_parse_flags(argc, argv, o);

	if (rc)
		return rc;
	return pt_apply_defaults(o);
}


/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The cluster file (cluster.h): libconfig text -> struct cluster_cfg, validated whole with the
 * shared reader (config/config_read.h). The lab's `switch` group is not checked here but copied
 * into the lab switch's engine config, whose loader checks it. docs/cluster.md lists every
 * setting.
 */
#include "cluster.h"

#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_model.h"
#include "config_read.h"
#include "schedule.h"
#include "step.h"

const char *const cl_test_type_names[] = { "pairwise", "incast", "all_to_all", "permutation", "collective", NULL };
const char *const cl_op_names[] = { "allreduce", "allgather", "alltoall", NULL };
const char *const cl_transport_names[] = { "uc", "rc", NULL };
const char *const cl_cc_names[] = { "none", "dcqcn", "timely", NULL };
const char *const cl_measure_names[] = { "bandwidth", "latency", NULL };
static const char *const schedule_names[] = { "round_robin", "half", "file", NULL };
static const char *const clock_names[] = { "mpi", "ptp", NULL };

struct loader {
	struct config_reader r;
	struct cluster_cfg *c;
};

/* An optional string member into out (any printable text up to len - 1); 1, 0 absent, -1 error. */
static int opt_text(struct loader *ld, const config_setting_t *g, const char *key, char *out, size_t len)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	const char *v;

	if (!s)
		return 0;
	if (cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a string") < 0)
		return -1;
	v = config_setting_get_string(s);
	if (!v[0] || strlen(v) >= len)
		return cr_fail(&ld->r, s, "must be 1..%zu characters", len - 1);
	/* (printable ASCII: the value may come back in a message, "PATH:LINE: ..." of a pairs file) */
	for (const char *p = v; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			return cr_fail(&ld->r, s, "holds a control or non-ASCII character (printable ASCII only)");
	snprintf(out, len, "%s", v);
	return 1;
}

/* One of names[] into *out (an enum); 1, 0 absent, -1 error. */
static int opt_pick(struct loader *ld, const config_setting_t *g, const char *key, const char *const names[],
		    unsigned *out)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	int i;

	if (!s)
		return 0;
	if ((i = cr_pick(&ld->r, s, names, NULL)) < 0)
		return -1;
	*out = (unsigned)i;
	return 1;
}

/* live_interval_s: 0 (none) or 0.1..3600 */
static int live_interval(struct loader *ld, const config_setting_t *g, double *out)
{
	const config_setting_t *s = config_setting_get_member(g, "live_interval_s");
	int rc = cr_opt_float(&ld->r, g, "live_interval_s", 0, false, 3600, out);

	if (rc > 0 && *out > 0 && *out < 0.1)
		return cr_fail(&ld->r, s, "%g s: 0 (no live lines) or 0.1..3600", *out);
	return rc;
}

/* metrics_address: a numeric IPv4 address (the engine's http setting takes "IPV4:PORT") */
static int metrics_address(struct loader *ld, const config_setting_t *g, char *out, size_t len)
{
	unsigned a, b, c, d;
	char end;
	int rc = opt_text(ld, g, "metrics_address", out, len);

	if (rc <= 0) {
		snprintf(out, len, "0.0.0.0"); /* every interface: a Prometheus elsewhere scrapes it */
		return rc;
	}
	if (sscanf(out, "%u.%u.%u.%u%c", &a, &b, &c, &d, &end) != 4 || a > 255 || b > 255 || c > 255 || d > 255)
		return cr_fail(&ld->r, config_setting_get_member(g, "metrics_address"),
			       "\"%s\" is not a numeric IPv4 address (e.g. \"0.0.0.0\", every interface)", out);
	return rc;
}

/* cluster = { name; results; engine; step_timeout_s; live_interval_s; metrics_port; metrics_address; clock = { source; samples; uncertainty_ns; };
 * memory_mb; keep; } */
static int parse_cluster(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "name", "results", "engine", "step_timeout_s", "start_margin_s", "live_interval_s", "clock",
					    "memory_mb", "keep", "metrics_port", "metrics_address", NULL };
	static const char *const clock_keys[] = { "source", "samples", "uncertainty_ns", NULL };
	struct cluster_cfg *c = ld->c;
	const config_setting_t *g, *ck;
	unsigned clock = CL_CLOCK_MPI;
	int rc;

	snprintf(c->name, sizeof(c->name), "cluster");
	snprintf(c->results, sizeof(c->results), "cluster-results");
	c->step_timeout_s = 30;
	c->start_margin_s = 2;
	c->live_interval_s = 1;
	c->clock_samples = 64;
	c->ptp_uncertainty_ns = 1000;
	c->memory_mb = 256;
	if ((rc = cr_opt_group(&ld->r, root, "cluster", &g)) <= 0) /* all defaults without it */
		return rc;
	if (cr_known_keys(&ld->r, g, keys) || cr_opt_name(&ld->r, g, "name", c->name, sizeof(c->name)) < 0 ||
	    opt_text(ld, g, "results", c->results, sizeof(c->results)) < 0 ||
	    opt_text(ld, g, "engine", c->engine, sizeof(c->engine)) < 0 ||
	    cr_opt_float(&ld->r, g, "step_timeout_s", 1, false, 3600, &c->step_timeout_s) < 0 ||
	    cr_opt_float(&ld->r, g, "start_margin_s", 0.2, false, 600, &c->start_margin_s) < 0 ||
	    live_interval(ld, g, &c->live_interval_s) < 0 ||
	    cr_opt_u32(&ld->r, g, "metrics_port", 1, 65000, &c->metrics_port) < 0 ||
	    metrics_address(ld, g, c->metrics_address, sizeof(c->metrics_address)) < 0 ||
	    cr_opt_u32(&ld->r, g, "memory_mb", 64, 65536, &c->memory_mb) < 0 || cr_opt_bool(&ld->r, g, "keep", &c->keep) < 0 ||
	    cr_opt_group(&ld->r, g, "clock", &ck) < 0)
		return -1;
	if (ck && (cr_known_keys(&ld->r, ck, clock_keys) || opt_pick(ld, ck, "source", clock_names, &clock) < 0 ||
		   cr_opt_u32(&ld->r, ck, "samples", 1, 100000, &c->clock_samples) < 0 ||
		   cr_opt_float(&ld->r, ck, "uncertainty_ns", 0, false, 1e9, &c->ptp_uncertainty_ns) < 0))
		return -1;
	c->clock = (enum cl_clock)clock;
	return 0;
}

/* lab = { link_gbps; mtu; cpu; switch = { ... }; } */
static int parse_lab(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "link_gbps", "mtu", "cpu", "ip_version", "switch", NULL };
	struct cl_lab *lab = &ld->c->lab;
	const config_setting_t *g;
	long long cpu = -1;
	int rc;

	lab->link_gbps = 1.0;
	lab->mtu = 1500;
	lab->cpu = -1;
	lab->ip_version = 4;
	if ((rc = cr_opt_group(&ld->r, root, "lab", &g)) <= 0)
		return rc;
	lab->present = true;
	if (cr_known_keys(&ld->r, g, keys) || cr_opt_float(&ld->r, g, "link_gbps", 0, true, 400, &lab->link_gbps) < 0 ||
	    cr_opt_u32(&ld->r, g, "mtu", 576, 9000, &lab->mtu) < 0 || cr_opt_int(&ld->r, g, "cpu", 0, 1023, false, &cpu) < 0 ||
	    cr_opt_u32(&ld->r, g, "ip_version", 4, 6, &lab->ip_version) < 0 || cr_opt_group(&ld->r, g, "switch", &lab->sw) < 0)
		return -1;
	if (lab->ip_version == 5)
		return cr_fail_member(&ld->r, g, "ip_version", "5 (4 or 6)");
	lab->cpu = (int)cpu;
	return 0;
}

/* ports = ( { rank | host | local_rank; device; vdev_args; ipv4 | ipv6; mac; link_gbps; mtu; }, ... ) */
static int parse_port(struct loader *ld, const config_setting_t *ps, struct cl_port_rule *p)
{
	static const char *const keys[] = { "rank", "host", "local_rank", "device", "vdev_args", "ipv4", "ipv6", "mac",
					    "link_gbps", "mtu", NULL };
	long long v;
	int by = 0, rc;

	p->line = (unsigned)config_setting_source_line(ps);
	p->link_gbps = 0;
	p->mtu = 1500;
	if (cr_known_keys(&ld->r, ps, keys))
		return -1;
	if ((rc = cr_opt_int(&ld->r, ps, "rank", 0, CL_MAX_RANKS - 1, false, &v)) < 0)
		return -1;
	if (rc) {
		p->by = CL_BY_RANK, p->rank = (int)v, by++;
	}
	if ((rc = opt_text(ld, ps, "host", p->host, sizeof(p->host))) < 0)
		return -1;
	if (rc)
		p->by = CL_BY_HOST, by++;
	if ((rc = cr_opt_int(&ld->r, ps, "local_rank", 0, CL_MAX_RANKS - 1, false, &v)) < 0)
		return -1;
	if (rc) {
		p->by = CL_BY_LOCAL_RANK, p->local_rank = (int)v, by++;
	}
	if (by != 1)
		return cr_fail(&ld->r, ps, "give one of rank, host or local_rank (which ranks drive this port)");
	if (!cr_required(&ld->r, ps, "device", "a DPDK device: a PCI address or a vdev name") ||
	    opt_text(ld, ps, "device", p->device, sizeof(p->device)) < 0 ||
	    opt_text(ld, ps, "vdev_args", p->vdev_args, sizeof(p->vdev_args)) < 0 ||
	    opt_text(ld, ps, "ipv4", p->ipv4, sizeof(p->ipv4)) < 0 || opt_text(ld, ps, "ipv6", p->ipv6, sizeof(p->ipv6)) < 0 ||
	    !cr_required(&ld->r, ps, "mac", "the port's MAC (the NIC's own, as `ip link` shows it)") ||
	    opt_text(ld, ps, "mac", p->mac, sizeof(p->mac)) < 0 ||
	    cr_opt_float(&ld->r, ps, "link_gbps", 0, true, 800, &p->link_gbps) < 0 ||
	    cr_opt_u32(&ld->r, ps, "mtu", 576, 9000, &p->mtu) < 0)
		return -1;
	if (!p->ipv4[0] == !p->ipv6[0])
		return cr_fail(&ld->r, ps, "give one of ipv4 or ipv6 (the port's address; {rank}, {rank1} and {local_rank} "
			       "stand for the rank's)");
	return 0;
}

static int parse_ports(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *l = config_setting_get_member(root, "ports");
	struct cluster_cfg *c = ld->c;
	int n;

	if (!l) {
		if (!c->lab.present)
			return cr_fail(&ld->r, NULL, "ports: missing (required without a lab group: each rank's port, "
				       "by rank, host or local_rank)");
		return 0;
	}
	if (c->lab.present)
		return cr_fail(&ld->r, l, "not with a lab group: the lab gives every rank its port");
	if (config_setting_type(l) != CONFIG_TYPE_LIST || (n = config_setting_length(l)) < 1 || n > CL_MAX_PORT_RULES)
		return cr_fail(&ld->r, l, "must be a list ( { ... }, ... ) of 1..%d ports", CL_MAX_PORT_RULES);
	for (int i = 0; i < n; i++)
		if (parse_port(ld, config_setting_get_elem(l, (unsigned)i), &c->ports[c->n_ports++]))
			return -1;
	return 0;
}

/* ---- a pairs file ---------------------------------------------------------------------------
 * One pair a line, "A B" (two ranks, both directions measured), in the order the rounds take
 * them; '#' starts a comment; blank lines are skipped. The rounds: each pair in the first round
 * where neither rank is busy yet (schedule.h). */

static int pairs_fail(struct loader *ld, const char *path, unsigned line, const struct cl_test *t, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int pairs_fail(struct loader *ld, const char *path, unsigned line, const struct cl_test *t, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(ld->r.err, ld->r.errlen, "%s:%u: pair: %s (the pairs file of %s:%u: tests: %s)", path, line, msg,
		 ld->r.file, t->line, t->name);
	return -1;
}

/* The pairs file's path: as given when absolute, else beside the cluster file. */
static void pairs_path(const struct loader *ld, const char *given, char *out, size_t len)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", ld->c->file);
	if (given[0] == '/')
		snprintf(out, len, "%s", given);
	else
		cl_text(out, len, "%s/%s", dirname(dir), given);
}

/* "A B" with an optional comment; 1 a pair, 0 nothing on the line, -1 not a pair. */
static int pair_of_line(char *l, unsigned *a, unsigned *b)
{
	char *hash = strchr(l, '#'), *end;
	unsigned long x, y;

	if (hash)
		*hash = '\0';
	while (isspace((unsigned char)*l))
		l++;
	if (!*l)
		return 0;
	if (!isdigit((unsigned char)*l))
		return -1;
	x = strtoul(l, &end, 10);
	if (!isspace((unsigned char)*end))
		return -1;
	l = end;
	while (isspace((unsigned char)*l))
		l++;
	if (!isdigit((unsigned char)*l))
		return -1;
	y = strtoul(l, &end, 10);
	while (isspace((unsigned char)*end))
		end++;
	if (*end || x >= CL_MAX_RANKS || y >= CL_MAX_RANKS)
		return -1;
	*a = (unsigned)x, *b = (unsigned)y;
	return 1;
}

static int read_pairs_file(struct loader *ld, struct cl_test *t)
{
	char path[PATH_MAX], text[256];
	unsigned line = 0, a, b;
	FILE *f;
	int rc = 0;

	pairs_path(ld, t->pairs_file, path, sizeof(path));
	if (!(f = fopen(path, "r")))
		return pairs_fail(ld, path, 0, t, "cannot read: %s", strerror(errno));
	t->pairs = calloc(CL_MAX_FILE_PAIRS, sizeof(*t->pairs));
	while (t->pairs && rc == 0 && fgets(text, sizeof(text), f)) {
		int k = pair_of_line(text, &a, &b);
		line++;
		if (k < 0)
			rc = pairs_fail(ld, path, line, t, "not \"A B\" (two ranks, 0..%d, then an optional # comment)",
					CL_MAX_RANKS - 1);
		else if (k && a == b)
			rc = pairs_fail(ld, path, line, t, "rank %u with itself", a);
		else if (k && t->n_pairs == CL_MAX_FILE_PAIRS)
			rc = pairs_fail(ld, path, line, t, "more than %d pairs", CL_MAX_FILE_PAIRS);
		else if (k)
			t->pairs[t->n_pairs++] = (struct cl_file_pair){ a, b, line };
	}
	fclose(f);
	if (!t->pairs)
		return pairs_fail(ld, path, line, t, "out of memory");
	if (rc == 0 && t->n_pairs == 0)
		rc = pairs_fail(ld, path, line, t, "no pairs in the file");
	return rc;
}

/* tests = ( { name; type; measure; schedule; pairs_file; root; seed; message_size; mtu;
 * qps_per_pair; duration_s; rate_gbps; probe_pps; }, ... ) */

/* The settings that belong to one type or schedule only, refused elsewhere. */
static int check_type_settings(struct loader *ld, const config_setting_t *ts, const struct cl_test *t)
{
	if (t->type != CL_TEST_PAIRWISE && config_setting_get_member(ts, "schedule"))
		return cr_fail_member(&ld->r, ts, "schedule", "only for pairwise tests (a %s test is one round)",
				      cl_test_type_names[t->type]);
	if (t->type != CL_TEST_INCAST && config_setting_get_member(ts, "root"))
		return cr_fail_member(&ld->r, ts, "root", "only for incast tests");
	if (t->type != CL_TEST_PERMUTATION && config_setting_get_member(ts, "seed"))
		return cr_fail_member(&ld->r, ts, "seed", "only for permutation tests");
	if (t->type != CL_TEST_COLLECTIVE && config_setting_get_member(ts, "op"))
		return cr_fail_member(&ld->r, ts, "op", "only for collective tests");
	if (t->type != CL_TEST_COLLECTIVE && config_setting_get_member(ts, "iterations"))
		return cr_fail_member(&ld->r, ts, "iterations", "only for collective tests");
	if (t->type != CL_TEST_COLLECTIVE && config_setting_get_member(ts, "compute_ms"))
		return cr_fail_member(&ld->r, ts, "compute_ms", "only for collective tests");
	if (t->type == CL_TEST_COLLECTIVE && !config_setting_get_member(ts, "op"))
		return cr_fail_member(&ld->r, ts, "op", "missing (allreduce, allgather or alltoall)");
	if (t->type == CL_TEST_COLLECTIVE && config_setting_get_member(ts, "measure"))
		return cr_fail_member(&ld->r, ts, "measure", "not for collective tests (they measure completion time and busBW)");
	if (t->type == CL_TEST_COLLECTIVE && config_setting_get_member(ts, "rate_gbps"))
		return cr_fail_member(&ld->r, ts, "rate_gbps", "not for collective tests (they run at the links' rate)");
	if ((t->schedule == CL_SCHED_FILE) != (config_setting_get_member(ts, "pairs_file") != NULL))
		return cr_fail_member(&ld->r, ts, t->schedule == CL_SCHED_FILE ? "pairs_file" : "schedule",
				      t->schedule == CL_SCHED_FILE ? "missing: schedule \"file\" reads its pairs from it"
								   : "pairs_file needs schedule = \"file\"");
	return 0;
}

static int parse_test(struct loader *ld, const config_setting_t *ts, struct cl_test *t)
{
	static const char *const keys[] = { "name", "type", "measure", "schedule", "pairs_file", "root", "seed", "op",
					    "iterations", "message_size", "mtu", "qps_per_pair", "transport", "cc",
					    "duration_s", "rate_gbps", "probe_pps", "compute_ms", NULL };
	const config_setting_t *s;
	unsigned type = 0, measure = 0, sched = 0, op = 0, transport = 0, cc = 0;
	long long seed = 1;
	int i;

	*t = (struct cl_test){ .message_size = 65536, .mtu = 1024, .qps_per_pair = 1, .duration_s = 1.0,
			       .probe_pps = 10000, .seed = 1, .iterations = 10,
			       .line = (unsigned)config_setting_source_line(ts) };
	if (cr_known_keys(&ld->r, ts, keys) || !(s = cr_required(&ld->r, ts, "type", "pairwise, incast, all_to_all, "
								 "permutation or collective")) ||
	    (i = cr_pick(&ld->r, s, cl_test_type_names, NULL)) < 0 ||
	    cr_opt_name(&ld->r, ts, "name", t->name, sizeof(t->name)) < 0 ||
	    opt_pick(ld, ts, "measure", cl_measure_names, &measure) < 0 ||
	    opt_pick(ld, ts, "schedule", schedule_names, &sched) < 0 ||
	    opt_text(ld, ts, "pairs_file", t->pairs_file, sizeof(t->pairs_file)) < 0 ||
	    cr_opt_u32(&ld->r, ts, "root", 0, CL_MAX_RANKS - 1, &t->root) < 0 ||
	    cr_opt_int(&ld->r, ts, "seed", 0, 0x7fffffff, false, &seed) < 0 ||
	    opt_pick(ld, ts, "op", cl_op_names, &op) < 0 ||
	    opt_pick(ld, ts, "transport", cl_transport_names, &transport) < 0 ||
	    opt_pick(ld, ts, "cc", cl_cc_names, &cc) < 0 ||
	    cr_opt_u32(&ld->r, ts, "iterations", 1, CL_MAX_ITERATIONS, &t->iterations) < 0 ||
	    cr_opt_u32(&ld->r, ts, "message_size", 1, 1u << 30, &t->message_size) < 0 ||
	    cr_opt_u32(&ld->r, ts, "qps_per_pair", 1, CL_QPS_PER_PAIR_MAX, &t->qps_per_pair) < 0 ||
	    cr_opt_float(&ld->r, ts, "duration_s", 0.1, false, 3600, &t->duration_s) < 0 ||
	    cr_opt_float(&ld->r, ts, "rate_gbps", 0, false, 800, &t->rate_gbps) < 0 ||
	    cr_opt_float(&ld->r, ts, "probe_pps", 1, false, 1e7, &t->probe_pps) < 0 ||
	    cr_opt_float(&ld->r, ts, "compute_ms", 0, false, 1e6, &t->compute_ms) < 0)
		return -1;
	type = (unsigned)i;
	t->seed = (uint64_t)seed;
	t->op = (enum cl_collective_op)op;
	t->transport = (enum cl_transport)transport;
	if (type == CL_TEST_COLLECTIVE && !config_setting_get_member(ts, "transport"))
		t->transport = CL_TRANSPORT_RC; /* as NCCL: a UC ring stalls at its first lost frame */
	t->cc = (enum cl_cc)cc;
	if (t->cc == CL_CC_TIMELY && t->transport != CL_TRANSPORT_RC)
		return cr_fail_member(&ld->r, ts, "cc", "timely needs transport = \"rc\" (its RTTs come from the ACKs)");
	if ((s = config_setting_get_member(ts, "mtu"))) {
		long long v;
		if (cr_int_range(&ld->r, s, 256, 4096, false, &v) < 0)
			return -1;
		if (v & (v - 1))
			return cr_fail(&ld->r, s, "%lld is not an IB MTU (256, 512, 1024, 2048 or 4096)", v);
		t->mtu = (unsigned)v;
	}
	t->type = (enum cl_test_type)type;
	t->measure = (enum cl_measure)measure;
	t->schedule = (enum cl_schedule)sched;
	if (!t->name[0])
		snprintf(t->name, sizeof(t->name), "%s", t->type == CL_TEST_COLLECTIVE ? cl_op_names[op] : cl_test_type_names[type]);
	if (check_type_settings(ld, ts, t))
		return -1;
	return t->schedule == CL_SCHED_FILE ? read_pairs_file(ld, t) : 0;
}

static int parse_tests(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *l = config_setting_get_member(root, "tests");
	struct cluster_cfg *c = ld->c;
	int n;

	if (!l)
		return cr_fail(&ld->r, NULL, "tests: missing (required: a list of tests, e.g. ( { type = \"pairwise\"; } ))");
	if (config_setting_type(l) != CONFIG_TYPE_LIST || (n = config_setting_length(l)) < 1 || n > CL_MAX_TESTS)
		return cr_fail(&ld->r, l, "must be a list ( { ... }, ... ) of 1..%d tests", CL_MAX_TESTS);
	for (int i = 0; i < n; i++) {
		struct cl_test *t = &c->tests[c->n_tests];
		if (parse_test(ld, config_setting_get_elem(l, (unsigned)i), t))
			return -1;
		for (unsigned k = 0; k < c->n_tests; k++)
			if (!strcmp(c->tests[k].name, t->name))
				return cr_fail(&ld->r, config_setting_get_elem(l, (unsigned)i),
					       "a second test named %s (name them apart)", t->name);
		c->n_tests++;
	}
	return 0;
}

/* sla = { min_pair_gbps; max_pair_p99_us; min_busbw_gbps; } */
static int parse_sla(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "min_pair_gbps", "max_pair_p99_us", "min_busbw_gbps", NULL };
	const config_setting_t *g;
	int rc;

	if ((rc = cr_opt_group(&ld->r, root, "sla", &g)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, g, keys) ||
	    cr_opt_float(&ld->r, g, "min_pair_gbps", 0, true, 800, &ld->c->sla.min_pair_gbps) < 0 ||
	    cr_opt_float(&ld->r, g, "max_pair_p99_us", 0, true, 1e9, &ld->c->sla.max_pair_p99_us) < 0 ||
	    cr_opt_float(&ld->r, g, "min_busbw_gbps", 0, true, 3200, &ld->c->sla.min_busbw_gbps) < 0)
		return -1;
	return 0;
}

static int load_root(void *arg, const config_setting_t *root)
{
	static const char *const keys[] = { "cluster", "lab", "ports", "tests", "sla", NULL };
	struct loader *ld = arg;

	if (cr_known_keys(&ld->r, root, keys) || parse_cluster(ld, root) || parse_lab(ld, root) || parse_ports(ld, root) ||
	    parse_tests(ld, root) || parse_sla(ld, root))
		return -1;
	return 0;
}

static void free_pairs(struct cluster_cfg *c)
{
	for (unsigned i = 0; i < CL_MAX_TESTS; i++) { /* a refused file's last test may hold some */
		free(c->tests[i].pairs);
		c->tests[i].pairs = NULL;
	}
}

int cluster_config_load(const char *path, struct cluster_cfg *c, char *err, size_t errlen)
{
	struct loader ld = { .c = c };
	struct config_reader again;
	int rc;

	memset(c, 0, sizeof(*c));
	snprintf(c->file, sizeof(c->file), "%s", path);
	config_init(&c->text);
	cr_init(&ld.r, path, err, errlen, "cluster configuration");
	rc = cr_load_file(&ld.r, path, load_root, &ld);
	if (rc)
		free_pairs(c);
	if (!rc) { /* the checked reading destroys its tree; a second one is kept for the lab's switch group */
		config_destroy(&c->text);
		cr_init(&again, path, NULL, 0, "cluster configuration");
		c->text_ok = cr_parse_file(&again, path, &c->text) == 0;
		c->lab.sw = c->text_ok && c->lab.present ? config_lookup(&c->text, "lab.switch") : NULL;
	}
	return rc;
}

void cluster_config_free(struct cluster_cfg *c)
{
	free_pairs(c);
	config_destroy(&c->text);
}

const struct cl_port_rule *cluster_port_of(const struct cluster_cfg *c, unsigned rank, const char *host,
					    unsigned local_rank)
{
	for (enum cl_port_by by = CL_BY_RANK; by <= CL_BY_LOCAL_RANK; by++)
		for (unsigned i = 0; i < c->n_ports; i++) {
			const struct cl_port_rule *p = &c->ports[i];
			if (p->by == by && ((by == CL_BY_RANK && p->rank == (int)rank) ||
					    (by == CL_BY_HOST && !strcmp(p->host, host)) ||
					    (by == CL_BY_LOCAL_RANK && p->local_rank == (int)local_rank)))
				return p;
		}
	return NULL;
}

int cluster_expand(const char *s, unsigned rank, unsigned local_rank, char *out, size_t len)
{
	static const struct { const char *name; int add; int local; } vars[] = {
		{ "{rank}", 0, 0 }, { "{rank1}", 1, 0 }, { "{local_rank}", 0, 1 } };
	size_t n = 0;

	while (*s) {
		unsigned v = 0;
		size_t k = 0;
		for (unsigned i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
			if (!strncmp(s, vars[i].name, strlen(vars[i].name))) {
				k = strlen(vars[i].name);
				v = (vars[i].local ? local_rank : rank) + (unsigned)vars[i].add;
			}
		if (k) {
			int w = snprintf(out + n, len - n, "%u", v);
			if (w < 0 || (size_t)w >= len - n)
				return -1;
			n += (size_t)w;
			s += k;
		} else {
			if (n + 1 >= len)
				return -1;
			out[n++] = *s++;
		}
	}
	out[n] = '\0';
	return 0;
}

void cl_text(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, len, fmt, ap);
	va_end(ap);
}

/* Why a collective does not fit the engine over n ranks, into why (left empty when it does). */
static void collective_fits(const struct cl_test *t, unsigned n, char *why, size_t len)
{
	unsigned phases = coll_phases(t->op, n) * t->iterations;

	if (phases > CL_ENGINE_MAX_PHASES)
		cl_text(why, len, "%s over %u ranks, %u iterations: %u phases; the engine takes %d", cl_op_names[t->op], n,
			t->iterations, phases, CL_ENGINE_MAX_PHASES);
	else if (t->op == CL_OP_ALLTOALL && n - 1 > CL_ENGINE_MAX_COLLECTIVE_FLOWS)
		cl_text(why, len, "alltoall over %u ranks: %u peers a rank; the engine's collective takes %d", n, n - 1,
			CL_ENGINE_MAX_COLLECTIVE_FLOWS);
	else if ((uint64_t)t->message_size < (uint64_t)n * t->qps_per_pair)
		cl_text(why, len, "message_size %u is under a byte per QP of each of the %u ranks' chunks (%u x %u)",
			t->message_size, n, n, t->qps_per_pair);
}

/* The most ranks that send to one rank in a round of the test. */
static unsigned most_senders(const struct cl_test *t, unsigned n)
{
	bool many = t->type == CL_TEST_INCAST || t->type == CL_TEST_ALL_TO_ALL ||
		    (t->type == CL_TEST_COLLECTIVE && t->op == CL_OP_ALLTOALL);

	return many ? n - 1 : 1;
}

/* Why test t cannot run over n ranks, into why (left empty when it can). */
void cluster_test_fits(const struct cl_test *t, unsigned n, char *why, size_t len)
{
	const struct cl_file_pair *bad = t->schedule == CL_SCHED_FILE ? schedule_file_check(t->pairs, t->n_pairs, n) : NULL;

	why[0] = '\0';
	if (n < 2)
		cl_text(why, len, "a test needs 2 ranks or more; the job has %u", n);
	else if (t->type == CL_TEST_INCAST && t->root >= n)
		cl_text(why, len, "root %u is not one of the job's %u ranks", t->root, n);
	else if (bad)
		cl_text(why, len, "pair %u %u (its file's line %u) names a rank the job's %u ranks lack", bad->a, bad->b,
			bad->line, n);
	else if (t->type == CL_TEST_ALL_TO_ALL && n - 1 > CL_MAX_PEERS)
		cl_text(why, len, "all_to_all over %u ranks: each rank's engine would send to %u peers; it takes %d", n,
			n - 1, CL_MAX_PEERS);
	else if (t->type == CL_TEST_COLLECTIVE)
		collective_fits(t, n, why, len);
	if (!why[0] && (t->transport == CL_TRANSPORT_RC || t->cc != CL_CC_NONE) && most_senders(t, n) > CL_MAX_SENDERS)
		cl_text(why, len, "%u ranks send to one rank; with %s each receiving engine lists them (%d at most)",
			most_senders(t, n), t->transport == CL_TRANSPORT_RC ? "RC" : "congestion control", CL_MAX_SENDERS);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Trial configs on the suite's fabric, roce-fabric's plan of them, and the fabric's figures of a
 * trial's report (aif_ctx.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aif_ctx.h"
#include "config_fabric.h"
#include "config_tree.h"
#include "lab.h"
#include "verdict.h"

#define RETH_BYTES 16             /* on a WRITE's first packet */
#define AIF_MEMORY_MB 2048        /* each NIC's pools hold three buffers' worth (docs/fabric.md) */

/* ---- trial configs -------------------------------------------------------------------------------- */

void aif_trial_init(struct aif_trial *t, const struct aif_ctx *x)
{
	config_setting_t *root, *eal;
	/* a real switch tier (fabric.external) has its own settings: the `switch` group is the virtual one's */
	const config_setting_t *sw = x->s->text_ok && !x->c->external ? config_lookup(&x->s->text, "switch") : NULL;

	memset(t, 0, sizeof(*t));
	config_init(&t->cfg);
	root = config_root_setting(&t->cfg);
	eal = cfg_group(root, "eal");
	cfg_set_string(eal, "lcores", "0-1"); /* lcore 0 supervises; lcore 1 runs the NICs and the switches */
	cfg_set_int(eal, "memory_mb", x->c->memory_mb ? x->c->memory_mb : AIF_MEMORY_MB);
	t->fabric = cfg_copy(root, "fabric", config_lookup(&x->s->text, "fabric"));
	if (sw)
		cfg_copy(root, "switch", sw);
	t->traffic = config_setting_add(root, "traffic", CONFIG_TYPE_LIST);
}

void aif_trial_free(struct aif_trial *t)
{
	config_destroy(&t->cfg);
}

void aif_trial_balance(struct aif_trial *t, const char *mode, double gap_us, bool bth_aware)
{
	static const char *const five_tuple[] = { "src_ip", "dst_ip", "udp_sport", "udp_dport" };
	config_setting_t *hash, *fields;

	cfg_set_string(t->fabric, "load_balance", mode);
	if (gap_us > 0)
		cfg_set_float(t->fabric, "flowlet_gap_us", gap_us);
	if (!bth_aware)
		return;
	hash = cfg_group(t->fabric, "hash");
	if (!(fields = config_setting_get_member(hash, "fields"))) {
		fields = config_setting_add(hash, "fields", CONFIG_TYPE_ARRAY);
		for (unsigned i = 0; i < 4; i++)
			config_setting_set_string(config_setting_add(fields, NULL, CONFIG_TYPE_STRING), five_tuple[i]);
	}
	for (int i = 0; i < config_setting_length(fields); i++)
		if (!strcmp(config_setting_get_string_elem(fields, i) ?: "", "dest_qp"))
			return;
	config_setting_set_string(config_setting_add(fields, NULL, CONFIG_TYPE_STRING), "dest_qp");
}

static void flow_template(config_setting_t *e, const struct aif_flow *f)
{
	config_setting_t *g = cfg_group(e, "flow");

	cfg_set_string(g, "transport", f->transport ? f->transport : "uc");
	cfg_set_int(cfg_group(g, "ops"), "write", 1);
	cfg_set_int(g, "message_size", f->message_size);
	cfg_set_int(g, "mtu", AIF_IB_MTU);
	cfg_set_int(g, "dscp", f->priority * 8 + 2);
	if (f->rate_gbps > 0)
		cfg_set_float(g, "rate_gbps", f->rate_gbps);
	if (f->cc)
		cfg_set_string(g, "cc", f->cc);
	if (f->latency)
		cfg_set_string(cfg_group(g, "latency"), "mode", "oneway");
	if (f->stop_messages)
		cfg_set_int(cfg_group(g, "stop"), "messages", f->stop_messages);
	if (f->start_s > 0)
		cfg_set_float(g, "start_s", f->start_s);
	if (f->dcqcn)
		cfg_copy(g, "dcqcn", f->dcqcn);
}

static config_setting_t *entry(struct aif_trial *t, const char *name, const char *pattern, unsigned qps_per_pair,
			       const struct aif_flow *f)
{
	config_setting_t *e = config_setting_add(t->traffic, NULL, CONFIG_TYPE_GROUP);

	cfg_set_string(e, "name", name);
	cfg_set_string(e, "pattern", pattern);
	cfg_set_int(e, "qps_per_pair", qps_per_pair);
	if (f->udp_sport) {
		cfg_set_int(e, "udp_sport", f->udp_sport);
		cfg_set_int(e, "sport_step", 0);
	}
	t->n_traffic++;
	return e;
}

void aif_trial_pairs(struct aif_trial *t, const struct aif_ctx *x, const char *name, const unsigned (*pairs)[2],
		     unsigned n, unsigned qps_per_pair, const struct aif_flow *f)
{
	config_setting_t *e = entry(t, name, "pairs", qps_per_pair, f), *list = config_setting_add(e, "pairs", CONFIG_TYPE_LIST);

	for (unsigned i = 0; i < n; i++) {
		config_setting_t *p = config_setting_add(list, NULL, CONFIG_TYPE_ARRAY);
		config_setting_set_string(config_setting_add(p, NULL, CONFIG_TYPE_STRING), x->fab.hosts[pairs[i][0]].name);
		config_setting_set_string(config_setting_add(p, NULL, CONFIG_TYPE_STRING), x->fab.hosts[pairs[i][1]].name);
	}
	flow_template(e, f);
}

void aif_trial_pattern(struct aif_trial *t, const struct aif_ctx *x, const char *name, const char *pattern,
		       const unsigned *hosts, unsigned n, int dst, unsigned qps_per_pair, const struct aif_flow *f)
{
	config_setting_t *e = entry(t, name, pattern, qps_per_pair, f), *list;

	if (hosts) {
		list = config_setting_add(e, "hosts", CONFIG_TYPE_ARRAY);
		for (unsigned i = 0; i < n; i++)
			config_setting_set_string(config_setting_add(list, NULL, CONFIG_TYPE_STRING), x->fab.hosts[hosts[i]].name);
	}
	if (dst >= 0)
		cfg_set_string(e, "dst", x->fab.hosts[dst].name);
	flow_template(e, f);
}

/* The leaf of host h (its first NIC's switch). */
static unsigned leaf_of(const struct aif_ctx *x, unsigned h)
{
	return x->fab.nics[x->fab.hosts[h].first_nic].sw;
}

/* The senders of an N:1 incast into host dst, n of them into out (how many there were): one host
 * of each leaf in turn, round after round (hosts numbered leaf by leaf); the other leaves' hosts
 * first, or dst's own leaf's first. */
unsigned aif_incast_senders(const struct aif_ctx *x, unsigned dst, unsigned n, bool own_leaf_first, unsigned *out)
{
	unsigned n_hosts = x->fab.n_hosts < AIF_MAX_HOSTS ? x->fab.n_hosts : AIF_MAX_HOSTS, got = 0;
	bool taken[AIF_MAX_HOSTS] = { false };

	taken[dst] = true;
	for (unsigned pass = 0; pass < 2 && got < n; pass++) {
		bool own = (pass == 0) == own_leaf_first, more = true;
		while (more && got < n) {
			int last_leaf = -1;
			more = false;
			for (unsigned h = 0; h < n_hosts && got < n; h++) {
				unsigned leaf = leaf_of(x, h);
				if (taken[h] || own != (leaf == leaf_of(x, dst)) || (int)leaf <= last_leaf)
					continue;
				taken[h] = more = true;
				out[got++] = h;
				last_leaf = (int)leaf; /* one host of a leaf per round */
			}
		}
	}
	return got;
}

unsigned aif_trial_incast(struct aif_trial *t, const struct aif_ctx *x, const char *name, unsigned n,
			  bool own_leaf_first, const struct aif_flow *f)
{
	unsigned dst = x->fab.n_hosts - 1, hosts[AIF_MAX_HOSTS + 1];
	unsigned got = aif_incast_senders(x, dst, n, own_leaf_first, hosts);

	hosts[got] = dst;
	aif_trial_pattern(t, x, name, "incast", hosts, got + 1, (int)dst, 1, f);
	return dst;
}

unsigned aif_cross_pairs(const struct aif_ctx *x, unsigned (*pairs)[2], unsigned max)
{
	unsigned half = x->fab.n_hosts / 2, n = 0;

	for (unsigned i = 0; i < half && n < max; i++, n++) {
		pairs[n][0] = i;
		pairs[n][1] = i + half;
	}
	return n;
}

/* Bytes with every packet's headers (a WRITE's first packet carries the RETH) of one message. */
static double message_frame_bytes(unsigned message_size, unsigned *packets)
{
	*packets = message_size ? (message_size + AIF_IB_MTU - 1) / AIF_IB_MTU : 1;
	return message_size + *packets * (double)ROCE_FRAME_OVERHEAD + RETH_BYTES;
}

unsigned aif_frame_bytes(unsigned message_size)
{
	unsigned packets;
	double bytes = message_frame_bytes(message_size, &packets);

	return (unsigned)lround(bytes / packets);
}

double aif_link_frame_gbps(double gbps, unsigned message_size)
{
	unsigned packets;
	double bytes = message_frame_bytes(message_size, &packets);

	return gbps * bytes / (bytes + packets * (double)WIRE_GAP_BYTES);
}

double aif_link_payload_gbps(double gbps, unsigned message_size)
{
	unsigned packets;
	double bytes = message_frame_bytes(message_size, &packets);

	return gbps * message_size / (bytes + packets * (double)WIRE_GAP_BYTES);
}

/* ---- the plan ---------------------------------------------------------------------------------------- */

int aif_tool_path(const struct aif_ctx *x, const char *name, char *out, size_t len)
{
	const char *slash = strrchr(x->rn->engine, '/');

	if (slash)
		text_printf(out, len, "%.*s/%s", (int)(slash - x->rn->engine), x->rn->engine, name);
	else
		text_printf(out, len, "%s", name);
	return access(out, X_OK) ? -1 : 0;
}

int aif_run_tool(const char *prog, const char *log, const char *a1, const char *a2, const char *a3, const char *a4)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execl(prog, prog, a1, a2, a3, a4, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int aif_external_links_up(struct aif_ctx *x, const struct aif_link_failure *f)
{
	const config_setting_t *s = x->s->text_ok ? config_lookup(&x->s->text, "fabric.external.link_command") : NULL;
	char cmd[256], log[PATH_MAX + 32];
	int rc = 0;

	for (unsigned i = 0; s && i < f->n_links; i++) {
		const char *name = x->fab.links[f->links[i]].name;
		int st = -1;
		text_printf(log, sizeof(log), "%s/link-up-%s.log", x->rn->dir, name);
		if (cfab_link_command(config_setting_get_string(s) ?: "", name, "up", cmd, sizeof(cmd)) == 0)
			st = aif_run_tool("/bin/sh", log, "-c", cmd, NULL, NULL);
		if (st != 0) {
			aif_anomaly(x, AIF_LINK_FAILURE, "%s: bringing it back up failed (exit %d: %s)", name, st, cmd);
			rc = -1;
		}
	}
	return rc;
}

/* The plan's figures: the slowest flow's max-min rate, their sum, and the most loaded directed
 * link in flows per Gb/s. */
static void plan_figures(struct aif_plan *p)
{
	const json_t *f, *l;
	size_t i;

	p->min_flow_gbps = INFINITY;
	json_array_foreach(json_object_get(p->report, "flows"), i, f)
		p->min_flow_gbps = fmin(p->min_flow_gbps, jnum(f, "gbps"));
	if (isinf(p->min_flow_gbps))
		p->min_flow_gbps = 0;
	p->aggregate_gbps = jnum(json_object_get(p->report, "summary"), "aggregate_gbps");
	json_array_foreach(json_object_get(json_object_get(p->report, "fabric"), "links"), i, l) {
		double g = jnum(l, "gbps");
		for (unsigned d = 0; d < 2 && g > 0; d++) {
			const json_t *dir = json_object_get(l, d ? "b_to_a" : "a_to_b");
			p->worst_flows_per_gbps = fmax(p->worst_flows_per_gbps, jnum(dir, "flows") / g);
		}
	}
}

int aif_plan(const struct aif_ctx *x, struct aif_trial *t, const char *tag, struct aif_plan *p)
{
	char cfg[PATH_MAX + 64], out[PATH_MAX + 64], log[PATH_MAX + 64];
	json_error_t jerr;
	int rc;

	memset(p, 0, sizeof(*p));
	text_printf(cfg, sizeof(cfg), "%s/plan-%s.cfg", x->rn->dir, tag);
	text_printf(out, sizeof(out), "%s/plan-%s.json", x->rn->dir, tag);
	text_printf(log, sizeof(log), "%s/plan-%s.log", x->rn->dir, tag);
	if (config_write_file(&t->cfg, cfg) != CONFIG_TRUE) {
		text_printf(p->error, sizeof(p->error), "cannot write %s: %s", cfg, strerror(errno));
		return -1;
	}
	if ((rc = aif_run_tool(x->planner, log, "-q", "-r", out, cfg)) != 0 || !(p->report = json_load_file(out, 0, &jerr))) {
		text_printf(p->error, sizeof(p->error), "%s on %s: exit status %d (%s)", x->planner, cfg, rc, log);
		return -1;
	}
	if (!x->rn->keep) {
		unlink(cfg);
		unlink(out);
		unlink(log);
	}
	plan_figures(p);
	p->ok = true;
	return 0;
}

void aif_plan_free(struct aif_plan *p)
{
	json_decref(p->report);
	p->report = NULL;
}

/* ---- the engine's own limits, before any trial ----------------------------------------------------------- */

/* The engine's reason in its --check output: the text after "roce-engine: FILE:LINE: ". */
static void engine_reason(const char *log, const char *cfg, char *out, size_t len)
{
	char line[1024];
	FILE *f = fopen(log, "r");

	text_printf(out, len, "roce-engine --check refused a trial of this fabric (%s)", log);
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, cfg), *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (!p || !(p = strchr(p + strlen(cfg), ':')) || !(p = strstr(p + 1, ": ")))
			continue;
		text_printf(out, len, "%s", p + 2);
		break;
	}
	if (f)
		fclose(f);
}

/* The most QPs per pair any category asks for. */
static unsigned most_qps(const struct aif_cfg *c)
{
	unsigned q = c->lb.flowlet_qps;

	for (unsigned i = 0; i < c->lb.n_qps; i++)
		q = c->lb.qps[i] > q ? c->lb.qps[i] : q;
	for (unsigned i = 0; i < c->throughput.n_qps; i++)
		q = c->throughput.qps[i] > q ? c->throughput.qps[i] : q;
	return q;
}

int aif_engine_accepts(const char *engine, const struct suite_cfg *s, char *err, size_t errlen)
{
	const struct aif_ctx x = { .s = s, .c = s->aif };
	const struct aif_flow f = { .transport = "rc", .message_size = 65536, .priority = 3 };
	const config_setting_t *fab = config_lookup(&s->text, "fabric");
	char dir[] = "/tmp/roce-suite-check-XXXXXX", cfg[64], log[64], why[600];
	struct aif_trial t;
	int rc;

	if (!s->aif->fabric)
		return 0; /* (every category goes across a cluster's hosts: roce-cluster's own limits were judged) */
	if (!mkdtemp(dir)) {
		text_printf(err, errlen, "cannot make a folder for the engine's check: %s", strerror(errno));
		return -1;
	}
	text_printf(cfg, sizeof(cfg), "%s/trial.cfg", dir);
	text_printf(log, sizeof(log), "%s/check.log", dir);
	aif_trial_init(&t, &x);
	aif_trial_pattern(&t, &x, "check", "all_to_all", NULL, 0, -1, most_qps(s->aif), &f);
	rc = config_write_file(&t.cfg, cfg) == CONFIG_TRUE ? aif_run_tool(engine, log, "--check", "-f", cfg, NULL) : -1;
	aif_trial_free(&t);
	if (rc != 0) {
		engine_reason(log, cfg, why, sizeof(why));
		text_printf(err, errlen, "%s:%d: %s (roce-engine --check on a trial of this fabric)", s->file,
			    fab ? config_setting_source_line(fab) : 0, why);
	}
	unlink(cfg);
	unlink(log);
	rmdir(dir);
	return rc ? -1 : 0;
}

/* ---- the report's fabric figures ------------------------------------------------------------------------ */

/* What every trial's hosts report: reordering and RC retransmissions, their pools, the flows' JFI;
 * and the drops per link of fabric.links (the virtual fabric's, or a real tier's counters_command's). */
static void host_view(const json_t *rep, struct aif_fabric_view *v)
{
	const json_t *fab = json_object_get(rep, "fabric"), *e;
	size_t i;

	json_array_foreach(json_object_get(rep, "flows"), i, e) {
		v->out_of_order += ju64(e, "out_of_order");
		v->retransmits += ju64(e, "retransmits");
	}
	json_array_foreach(json_object_get(rep, "ports"), i, e)
		v->mbuf_alloc_failures += ju64(e, "mbuf_alloc_failures");
	json_array_foreach(json_object_get(fab, "links"), i, e) {
		v->switch_drops = true;
		v->dropped += ju64(json_object_get(e, "a_to_b"), "dropped") + ju64(json_object_get(e, "b_to_a"), "dropped");
	}
	v->jfi = jnum(fab, "jfi");
}

/* A real switch tier's: CE marks and XOFF frames as the NICs received them; its drops only where
 * counters_command read them, its ECMP groups unknown. The machine's share: the NICs' lcores held
 * up (off their CPUs) over 1 % of the run, or a pool run dry. */
static void external_view(const json_t *rep, struct aif_fabric_view *v)
{
	const json_t *e;
	double held_ms = 0, secs = jnum(rep, "duration_s");
	size_t i;

	v->external = true;
	json_array_foreach(json_object_get(rep, "rx_qps"), i, e)
		v->ecn_marked += ju64(e, "ecn_ce");
	json_array_foreach(json_object_get(rep, "ports"), i, e)
		v->pfc_xoff += (uint64_t)jsum(e, "pfc_rx_xoff");
	json_array_foreach(json_object_get(rep, "lcores"), i, e)
		held_ms = fmax(held_ms, jnum(e, "held_up_ms"));
	v->cpu_lost_share = secs > 0 ? held_ms / 1e3 / secs : 0;
	v->machine_limited = v->cpu_lost_share > 0.01 || v->mbuf_alloc_failures;
	v->limited_by = v->mbuf_alloc_failures ? "nic_mbufs" : v->machine_limited ? "cpu_lost" : NULL;
}

double aif_counted_bytes(const json_t *links, const char *name, bool b_to_a)
{
	const json_t *e;
	size_t i;

	json_array_foreach(links, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "name")) ?: "", name))
			return jnum(json_object_get(e, b_to_a ? "b_to_a" : "a_to_b"), "bytes");
	return 0;
}

/* The virtual fabric's: every link's marks and XOFF, the ECMP groups, the machine's share as the
 * engine judged it. */
static void virtual_view(const json_t *rep, struct aif_fabric_view *v)
{
	const json_t *fab = json_object_get(rep, "fabric"), *l, *g, *m = json_object_get(fab, "machine");
	size_t i;

	v->switch_drops = true;
	json_array_foreach(json_object_get(fab, "links"), i, l)
		for (unsigned d = 0; d < 2; d++) {
			const json_t *dir = json_object_get(l, d ? "b_to_a" : "a_to_b");
			v->ecn_marked += ju64(dir, "ecn_marked");
			v->pfc_xoff += (uint64_t)jsum(dir, "pfc_xoff_sent");
		}
	json_array_foreach(json_object_get(fab, "ecmp_groups"), i, g) {
		v->worst_mmr = fmax(v->worst_mmr, jnum(g, "mmr"));
		v->worst_mmr_flows = fmax(v->worst_mmr_flows, jnum(g, "mmr_flows"));
	}
	v->machine_limited = json_is_true(json_object_get(m, "machine_limited"));
	v->cpu_lost_share = jnum(m, "worst_cpu_lost_share");
	v->limited_by = json_string_value(json_object_get(m, "limited_by"));
	if (v->mbuf_alloc_failures && !v->machine_limited) { /* a NIC's frames held in the switches ran
							       * its pool dry: it sent less than asked */
		v->machine_limited = true;
		v->limited_by = "nic_mbufs";
	}
}

const char *aif_machine_reason(const struct aif_ctx *x)
{
	return x->c->external ? "the NICs' lcore was held up off its CPU over 1 % of the run" :
				"the lab's lcore fell behind its links";
}

void aif_fabric_read(const json_t *rep, struct aif_fabric_view *v)
{
	memset(v, 0, sizeof(*v));
	host_view(rep, v);
	if (json_is_true(json_object_get(json_object_get(rep, "fabric"), "external")))
		external_view(rep, v);
	else
		virtual_view(rep, v);
}

void aif_fabric_to_json(const struct aif_fabric_view *v, json_t *row)
{
	/* (on a real switch tier its drops and groups are its own counters: null) */
	json_object_set_new(row, "fabric_dropped", v->switch_drops ? json_integer((json_int_t)v->dropped) : json_null());
	json_object_set_new(row, "ecn_marked", json_integer((json_int_t)v->ecn_marked));
	json_object_set_new(row, "pfc_xoff", json_integer((json_int_t)v->pfc_xoff));
	json_object_set_new(row, "out_of_order", json_integer((json_int_t)v->out_of_order));
	json_object_set_new(row, "retransmits", json_integer((json_int_t)v->retransmits));
	json_object_set_new(row, "jfi", json_real(v->jfi));
	json_object_set_new(row, "worst_mmr", v->external ? json_null() : json_real(v->worst_mmr));
	json_object_set_new(row, "worst_mmr_flows", v->external ? json_null() : json_real(v->worst_mmr_flows));
	json_object_set_new(row, "cpu_lost_share", json_real(v->cpu_lost_share));
	json_object_set_new(row, "fabric_machine_limited", json_boolean(v->machine_limited));
	json_object_set_new(row, "mbuf_alloc_failures", json_integer((json_int_t)v->mbuf_alloc_failures));
	if (v->limited_by)
		json_object_set_new(row, "limited_by", json_string(v->limited_by));
}

struct flow_set aif_entry_flows(const char *name)
{
	static char pattern[FAB_NAME_LEN + 4];
	struct flow_set fs = { .n = 1 };

	/* the engine names a pattern's groups "ENTRY-SRC-DST" (its first 13 characters) */
	text_printf(pattern, sizeof(pattern), "%.13s-*", name);
	fs.names[0] = pattern;
	return fs;
}

/* ---- the suite's records ------------------------------------------------------------------------------------ */

void aif_anomaly(struct aif_ctx *x, enum aif_category cat, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	json_array_append_new(x->anomalies, json_pack("{s:s,s:s,s:s}", "category", aif_category_names[cat], "section",
						      aif_category_sections[cat], "what", what));
	if (!x->rn->quiet)
		fprintf(stderr, "[ai_fabric] anomaly (%s): %s\n", aif_category_names[cat], what);
}

void aif_repeatability(struct aif_ctx *x, enum aif_category cat, const char *kpi, const char *unit, const double *v,
		       unsigned n)
{
	struct kpi_stats st;
	json_t *vals = json_array();

	kpi_stats_of(v, n, &st);
	for (unsigned i = 0; i < n; i++)
		json_array_append_new(vals, json_real(v[i]));
	json_array_append_new(x->repeatability,
			      json_pack("{s:s,s:s,s:s,s:i,s:o,s:f,s:f,s:f,s:f,s:f,s:b}", "category", aif_category_names[cat],
					"kpi", kpi, "unit", unit, "iterations", (int)n, "values", vals, "mean", st.mean,
					"stddev", st.stddev, "cv", st.cv, "min", st.min, "max", st.max, "flagged",
					n > 1 && st.cv > KPI_CV_FLAG));
	if (n > 1 && st.cv > KPI_CV_FLAG)
		aif_anomaly(x, cat, "%s varies: CV %.1f %% over %u iterations (above the 5 %% the methodology recommends)",
			    kpi, 100 * st.cv, n);
}

void aif_threshold(struct aif_ctx *x, enum aif_category cat, const char *kpi, double value, double limit, bool at_most,
		   const char *what)
{
	bool pass = at_most ? value <= limit : value >= limit;

	if (isnan(limit))
		return;
	json_array_append_new(x->thresholds, json_pack("{s:s,s:s,s:s,s:f,s:s,s:f,s:b}", "category", aif_category_names[cat],
						       "kpi", kpi, "what", what, "value", value, "limit",
						       at_most ? "at most" : "at least", "threshold", limit, "pass", pass));
	suite_verdict(x->rn, pass, "threshold", "%s: %s %g, %s %g", what, kpi, value, at_most ? "at most" : "at least",
		      limit);
}

json_t *aif_graph(struct aif_ctx *x, const char *file, const char *kind, const char *title, const char *xlabel,
		  const char *ylabel)
{
	json_t *g = json_pack("{s:s,s:s,s:s,s:s,s:s,s:[]}", "file", file, "kind", kind, "title", title, "xlabel", xlabel,
			      "ylabel", ylabel, "series");

	json_array_append_new(x->graphs, g);
	return g;
}

void aif_series(json_t *graph, const char *label, const double *xs, const double *ys, unsigned n)
{
	json_t *xa = json_array(), *ya = json_array();

	for (unsigned i = 0; i < n; i++) {
		if (!isfinite(xs[i]) || !isfinite(ys[i])) /* no value there (JSON has no NaN): a gap */
			continue;
		json_array_append_new(xa, json_real(xs[i]));
		json_array_append_new(ya, json_real(ys[i]));
	}
	json_array_append_new(json_object_get(graph, "series"), json_pack("{s:s,s:o,s:o}", "label", label, "x", xa, "y", ya));
}

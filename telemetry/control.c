/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_pause.h>
#include <rte_spinlock.h>
#include <rte_telemetry.h>

#include "cc_params.h"
#include "control.h"
#include "egress.h"
#include "fabric_lab.h"
#include "stats.h"

/* Each port's counters at the previous /roce/ports (any client's), for the live rates. */
struct port_sample {
	bool valid;
	uint64_t tsc, tx_packets, tx_bytes, rx_packets, rx_bytes;
};

/* What the commands share. DPDK 22.11's telemetry callbacks get no user pointer, so they reach it
 * through the one file-scope pointer below. It is made at the first control_attach and kept for
 * the process: the commands cannot be unregistered, so one may run at any time after, between
 * runs too, and in_flight must outlive every engine it guards. */
struct control_state {
	struct run_view *attached; /* the running engine, or NULL */
	/* Commands in flight: control_detach waits for them, so that none reads an engine being
	 * torn down. A command counts itself in before it looks at `attached` (both sequentially
	 * consistent): either detach sees it counted, or it sees NULL. */
	unsigned in_flight;
	rte_spinlock_t prev_lock; /* telemetry runs a thread per client */
	struct port_sample prev_sample[CFG_MAX_PORTS];
};
static struct control_state *control; /* set once (release), read by the telemetry threads */

void control_set_flow_rate(struct run_view *run, unsigned group, double gbps)
{
	for (unsigned q = 0; q < run->n_qps; q++)
		if (run->qps[q].group == &run->cfg->groups[group])
			qp_tx_set_rate(&run->qps[q], gbps, run->tsc_hz);
	__atomic_store_n(&run->rate_gbps[group], (uint64_t)(gbps * 1e6), __ATOMIC_RELAXED);
}

void control_set_egress(struct run_view *run, unsigned port, unsigned tc, unsigned weight, bool set_shape,
			double shape_gbps)
{
	struct egress *eg;

	for (struct lcore_walk at = {0}; (eg = snapshot_egress_next(run, port, &at)) != NULL;) {
		__atomic_store_n(&eg->tc[tc].quantum, (uint32_t)weight * EGRESS_QUANTUM_BYTES, __ATOMIC_RELAXED);
		if (set_shape)
			__atomic_store_n(&eg->tc[tc].fp_per_byte, pace_fp_per_byte(shape_gbps, run->tsc_hz), __ATOMIC_RELAXED);
	}
}

struct run_view *control_enter(void)
{
	struct control_state *c = __atomic_load_n(&control, __ATOMIC_ACQUIRE);
	struct run_view *run;

	if (!c) /* no engine attached yet */
		return NULL;
	__atomic_fetch_add(&c->in_flight, 1, __ATOMIC_SEQ_CST);
	run = __atomic_load_n(&c->attached, __ATOMIC_SEQ_CST);
	if (!run)
		__atomic_fetch_sub(&c->in_flight, 1, __ATOMIC_RELEASE);
	return run;
}

/* Only after a control_enter that returned an engine, so `control` is set. */
void control_leave(void) { __atomic_fetch_sub(&control->in_flight, 1, __ATOMIC_RELEASE); }

static struct run_view *enter(struct rte_tel_data *d)
{
	struct run_view *run = control_enter();

	if (!run) {
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_string(d, "error", "no run in progress");
	}
	return run;
}

/* The telemetry callback `name` runs name##_run(run, params, d) on the attached engine. */
#define GUARDED(name)                                                                       \
	static int name(const char *cmd, const char *params, struct rte_tel_data *d)        \
	{                                                                                   \
		struct run_view *run = enter(d);                                                \
		int rc;                                                                     \
                                                                                            \
		(void)cmd;                                                                  \
		if (!run)                                                                     \
			return 0;                                                           \
		rc = name##_run(run, params, d);                                              \
		control_leave();                                                                \
		return rc;                                                                  \
	}

/* DPDK 22.11 accepts only [A-Za-z0-9_/] in a dictionary key (lib/telemetry/telemetry_data.c,
 * valid_name: anything else is refused with -EINVAL and the entry is lost) and arrays of dicts
 * not at all, while the config's names may hold '-'. So whatever the config names (ports, flow
 * groups) is an object under its index in the config, with the name as a "name" value: string
 * values take any character. */
static void add_container(struct rte_tel_data *d, const char *key, struct rte_tel_data *o)
{
	if (o && rte_tel_data_add_dict_container(d, key, o, 0))
		rte_tel_data_free(o); /* kept only when added */
}

static void add_indexed(struct rte_tel_data *d, unsigned index, struct rte_tel_data *o)
{
	char key[16];

	snprintf(key, sizeof(key), "%u", index);
	add_container(d, key, o);
}

/* A new object that starts with "name": the config's name of what it describes. */
static struct rte_tel_data *named_dict(const char *name)
{
	struct rte_tel_data *o = rte_tel_data_alloc();

	if (o) {
		rte_tel_data_start_dict(o);
		rte_tel_data_add_dict_string(o, "name", name);
	}
	return o;
}

static int cmd_flows_run(struct run_view *run, const char *params, struct rte_tel_data *d)
{
	(void)params;
	rte_tel_data_start_dict(d);
	for (unsigned g = 0, q = 0; g < run->cfg->n_groups; g++) {
		const struct cfg_flow_group *grp = &run->cfg->groups[g];
		struct rte_tel_data *o = named_dict(grp->name);
		uint64_t pkts = 0, bytes = 0;
		char rate[32];

		for (unsigned i = 0; i < grp->count; i++, q++) {
			pkts += stat_read(&run->qps[q].c.tx_packets);
			bytes += stat_read(&run->qps[q].c.tx_bytes);
		}
		if (!o)
			return -1;
		rte_tel_data_add_dict_string(o, "port", run->cfg->ports[grp->port].name);
		rte_tel_data_add_dict_int(o, "qps", (int)grp->count);
		snprintf(rate, sizeof(rate), "%.6g", __atomic_load_n(&run->rate_gbps[g], __ATOMIC_RELAXED) / 1e6);
		rte_tel_data_add_dict_string(o, "rate_gbps", rate);
		rte_tel_data_add_dict_u64(o, "tx_packets", pkts);
		rte_tel_data_add_dict_u64(o, "tx_bytes", bytes);
		add_indexed(d, g, o);
	}
	return 0;
}
GUARDED(cmd_flows)

/* A string value is cut at RTE_TEL_MAX_STRING_LEN - 1 bytes (127), so an error message must be
 * shorter: reply_error checks its literal at compile time; built messages use reply_error_text
 * with a buffer of that size and contents bounded by what they quote. */
static int reply_error_text(struct rte_tel_data *d, const char *what)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "error", what);
	return 0;
}

#define reply_error(d, literal)                                                                     \
	(reply_error_text((d), (literal)) +                                                         \
	 0 * (int)sizeof(struct { _Static_assert(sizeof(literal) <= RTE_TEL_MAX_STRING_LEN,          \
						 "telemetry cuts strings at 127 bytes"); int x; }))

/* A number the command took, as it understood it (the parameter itself may be any length). */
static void add_number(struct rte_tel_data *o, const char *key, double v)
{
	char s[32];

	snprintf(s, sizeof(s), "%.9g", v);
	rte_tel_data_add_dict_string(o, key, s);
}

/* params: "NAME,GBPS" */
static int cmd_flow_rate_run(struct run_view *run, const char *params, struct rte_tel_data *d)
{
	char name[CFG_NAME_LEN] = "", *end;
	const char *comma = params ? strchr(params, ',') : NULL;
	double gbps;
	int g;

	if (!comma || comma == params || (size_t)(comma - params) >= sizeof(name))
		return reply_error(d, "usage: /roce/flow_rate,FLOW_NAME,GBPS");
	memcpy(name, params, (size_t)(comma - params));
	gbps = strtod(comma + 1, &end);
	if (end == comma + 1 || *end || !(gbps > 0 && gbps <= 800))
		return reply_error(d, "GBPS must be a number > 0 and <= 800");
	for (g = 0; g < (int)run->cfg->n_groups && strcmp(run->cfg->groups[g].name, name); g++)
		;
	if (g == (int)run->cfg->n_groups)
		return reply_error(d, "no flow group of that name (see /roce/flows)");
	if (!(run->cfg->groups[g].rate_gbps > 0))
		return reply_error(d, "the flow has no rate_gbps: only flows paced in Gb/s change rate (unpaced QPs: "
				      "round robin; rate_pps: per packet)");
	control_set_flow_rate(run, (unsigned)g, gbps);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "flow", name);
	add_number(d, "rate_gbps", gbps);
	return 0;
}
GUARDED(cmd_flow_rate)

/* params: "PORT,TC,WEIGHT[,SHAPE_GBPS]" */
static int cmd_egress_run(struct run_view *run, const char *params, struct rte_tel_data *d)
{
	char port[CFG_NAME_LEN] = "";
	long tc, weight;
	double shape = -1;
	int p, used = 0, got;

	got = params ? sscanf(params, "%31[^,],%ld,%ld%n,%lf%n", port, &tc, &weight, &used, &shape, &used) : 0;
	if (got < 3 || (size_t)used != strlen(params))
		return reply_error(d, "usage: /roce/egress,PORT,TC,WEIGHT[,SHAPE_GBPS]");
	if (tc < 0 || tc > 7 || weight < 1 || weight > 1000 || (got == 4 && !(shape >= 0 && shape <= 800)))
		return reply_error(d, "TC 0..7, WEIGHT 1..1000, SHAPE_GBPS 0 (none)..800");
	p = config_port_index(run->cfg, port);
	if (p < 0 || !(run->cfg->ports[p].egress_gbps > 0))
		return reply_error(d, "no port of that name with qos.egress");
	control_set_egress(run, (unsigned)p, (unsigned)tc, (unsigned)weight, got == 4, shape);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "port", port);
	rte_tel_data_add_dict_int(d, "tc", (int)tc);
	rte_tel_data_add_dict_int(d, "weight", (int)weight);
	if (got == 4)
		add_number(d, "shape_gbps", shape);
	return 0;
}
GUARDED(cmd_egress)

static int group_by_name(const struct run_view *run, const char *name)
{
	for (unsigned g = 0; g < run->cfg->n_groups; g++)
		if (!strcmp(run->cfg->groups[g].name, name))
			return (int)g;
	return -1;
}

static void add_gbps(struct rte_tel_data *o, const char *key, uint64_t kbps)
{
	char v[32];

	snprintf(v, sizeof(v), "%.6f", (double)kbps * 1e-6);
	rte_tel_data_add_dict_string(o, key, v);
}

#define CONTROL_CC_QPS 8 /* QPs of a group shown one by one */

/* One QP's reaction point, as the owner lcore last left it. */
static struct rte_tel_data *cc_qp_dict(const struct qp_cc *c)
{
	struct rte_tel_data *o = rte_tel_data_alloc();
	struct cc_view v;
	char alpha[32];

	if (!o)
		return NULL;
	congestion_view(c, &v);
	rte_tel_data_start_dict(o);
	rte_tel_data_add_dict_u64(o, "qpn", c->qp->qpn);
	add_gbps(o, "rate_gbps", v.rate_kbps);
	add_gbps(o, "target_gbps", v.target_kbps);
	snprintf(alpha, sizeof(alpha), "%.6f", v.alpha);
	rte_tel_data_add_dict_string(o, "alpha", alpha);
	rte_tel_data_add_dict_string(o, "stage", congestion_stage_name(v.stage));
	rte_tel_data_add_dict_u64(o, "cnps", v.cnps);
	rte_tel_data_add_dict_u64(o, "cuts", v.cuts);
	rte_tel_data_add_dict_u64(o, "increases", v.increases);
	return o;
}

/* A group's QPs with cc: sum, min and max of their rates, CNPs and cuts, and the first QPs. */
static struct rte_tel_data *cc_group_dict(const struct run_view *run, unsigned g)
{
	const struct cfg_flow_group *grp = &run->cfg->groups[g];
	struct rte_tel_data *o = named_dict(grp->name), *qps = rte_tel_data_alloc();
	uint64_t sum = 0, lo = UINT64_MAX, hi = 0, cnps = 0, cuts = 0;
	unsigned n = 0;

	if (!o || !qps) {
		rte_tel_data_free(o);
		rte_tel_data_free(qps);
		return NULL;
	}
	rte_tel_data_start_dict(qps);
	for (unsigned i = 0; i < run->n_cc; i++) {
		const struct qp_cc *c = &run->cc_states[i];
		struct cc_view v;
		if (c->qp->group != grp)
			continue;
		congestion_view(c, &v);
		sum += v.rate_kbps;
		lo = v.rate_kbps < lo ? v.rate_kbps : lo;
		hi = v.rate_kbps > hi ? v.rate_kbps : hi;
		cnps += v.cnps;
		cuts += v.cuts;
		if (n++ < CONTROL_CC_QPS)
			add_indexed(qps, c->qp->index, cc_qp_dict(c));
	}
	rte_tel_data_add_dict_string(o, "algorithm", congestion_algo_name(grp->cc));
	if (grp->cc == CFG_CC_DCQCN)
		rte_tel_data_add_dict_string(o, "profile", run->dcqcn_live[g].profile == DCQCN_PAPER ? "paper" : "nvidia");
	rte_tel_data_add_dict_int(o, "qps", (int)n);
	add_gbps(o, "rate_sum_gbps", sum);
	add_gbps(o, "rate_min_gbps", n ? lo : 0);
	add_gbps(o, "rate_max_gbps", hi);
	rte_tel_data_add_dict_u64(o, "cnps", cnps);
	rte_tel_data_add_dict_u64(o, "cuts", cuts);
	add_container(o, "first_qps", qps);
	return o;
}

/* Each port's notification point: CNPs sent and suppressed. */
static struct rte_tel_data *np_dict(const struct run_view *run)
{
	struct rte_tel_data *o = rte_tel_data_alloc();

	if (!o)
		return NULL;
	rte_tel_data_start_dict(o);
	for (unsigned p = 0; p < run->n_ports; p++) {
		struct rte_tel_data *x = named_dict(run->cfg->ports[p].name);
		struct port_totals t;
		if (!x)
			break;
		snapshot_port_totals(run, p, &t);
		rte_tel_data_add_dict_int(x, "enabled", run->cfg->ports[p].np_enabled);
		rte_tel_data_add_dict_u64(x, "ecn_ce_rx", t.rx.np_cnp_tx + t.rx.np_suppressed + t.rx.np_no_peer + t.rx.np_failed);
		rte_tel_data_add_dict_u64(x, "cnp_tx", t.rx.np_cnp_tx);
		rte_tel_data_add_dict_u64(x, "suppressed", t.rx.np_suppressed);
		rte_tel_data_add_dict_u64(x, "no_peer", t.rx.np_no_peer);
		add_indexed(o, p, x);
	}
	return o;
}

/* The parameters of a group's algorithm with their current values; how many were written (at
 * most max). */
static unsigned config_cc_params_list(enum cfg_cc algo, const void *params, const char **names, double *values,
				      unsigned max)
{
	const struct cc_param *table = algo == CFG_CC_DCQCN ? cc_dcqcn_params : cc_timely_params;
	unsigned n = cc_params_count(table);

	if (algo == CFG_CC_NONE)
		return 0;
	n = n < max ? n : max;
	for (unsigned i = 0; i < n; i++) {
		names[i] = table[i].name;
		values[i] = cc_param_load(&table[i], params);
	}
	return n;
}

/* The group's parameters as its QPs use them now. */
static struct rte_tel_data *cc_params_dict(const struct run_view *run, unsigned g)
{
	const char *names[40];
	double values[40];
	enum cfg_cc algo = run->cfg->groups[g].cc;
	unsigned n = config_cc_params_list(algo, algo == CFG_CC_DCQCN ? (const void *)&run->dcqcn_live[g]
								     : (const void *)&run->timely_live[g], names, values, 40);
	struct rte_tel_data *o = rte_tel_data_alloc();

	if (!o)
		return NULL;
	rte_tel_data_start_dict(o);
	for (unsigned i = 0; i < n; i++) {
		char v[32];
		snprintf(v, sizeof(v), "%.9g", values[i]);
		rte_tel_data_add_dict_string(o, names[i], v);
	}
	return o;
}

/* /roce/cc: {"flows": the groups with cc, "notification_points": the ports'};
 * /roce/cc,GROUP: {"flow": that group, "parameters": its parameters} */
static int cmd_cc_run(struct run_view *run, const char *params, struct rte_tel_data *d)
{
	struct rte_tel_data *x;
	int g;

	if (params && *params) {
		if ((g = group_by_name(run, params)) < 0)
			return reply_error(d, "no flow group of that name (see /roce/flows)");
		if (run->cfg->groups[g].cc == CFG_CC_NONE)
			return reply_error(d, "the flow group has no congestion control (its cc is none)");
		rte_tel_data_start_dict(d);
		add_container(d, "flow", cc_group_dict(run, (unsigned)g));
		add_container(d, "parameters", cc_params_dict(run, (unsigned)g));
		return 0;
	}
	rte_tel_data_start_dict(d);
	if ((x = rte_tel_data_alloc())) {
		rte_tel_data_start_dict(x);
		for (unsigned i = 0; i < run->cfg->n_groups; i++)
			if (run->cfg->groups[i].cc != CFG_CC_NONE)
				add_indexed(x, i, cc_group_dict(run, i));
		add_container(d, "flows", x);
	}
	add_container(d, "notification_points", np_dict(run));
	return 0;
}
GUARDED(cmd_cc)

/* /roce/cc_set,GROUP,PARAMETER,VALUE */
static int cmd_cc_set_run(struct run_view *run, const char *params, struct rte_tel_data *d)
{
	/* the longest message quotes the parameter (63): "timely has no parameter '...' (docs/cc.md)" */
	char group[CFG_NAME_LEN] = "", name[64] = "", msg[RTE_TEL_MAX_STRING_LEN];
	double value;
	int g, used = 0;

	if (!params || sscanf(params, "%31[^,],%63[^,],%lf%n", group, name, &value, &used) != 3 ||
	    (size_t)used != strlen(params))
		return reply_error(d, "usage: /roce/cc_set,FLOW_NAME,PARAMETER,VALUE (booleans 0 or 1)");
	if ((g = group_by_name(run, group)) < 0 || run->cfg->groups[g].cc == CFG_CC_NONE)
		return reply_error(d, "no flow group of that name with congestion control (see /roce/cc)");
	if (config_cc_param_set(run->cfg->groups[g].cc,
				run->cfg->groups[g].cc == CFG_CC_DCQCN ? (void *)&run->dcqcn_live[g] : (void *)&run->timely_live[g],
				name, value, msg, sizeof(msg)))
		return reply_error_text(d, msg);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "flow", group);
	rte_tel_data_add_dict_string(d, "parameter", name);
	add_number(d, "value", value);
	return 0;
}
GUARDED(cmd_cc_set)

/* ---- /roce/ports --------------------------------------------------------------------------- */

static void add_fixed(struct rte_tel_data *o, const char *key, const char *fmt, double v)
{
	char s[32];

	snprintf(s, sizeof(s), fmt, v);
	rte_tel_data_add_dict_string(o, key, s);
}

static struct rte_tel_data *port_dict(const struct run_view *run, unsigned p, uint64_t now, uint64_t ecn_ce)
{
	struct rte_tel_data *o = named_dict(run->cfg->ports[p].name);
	struct port_sample was, *prev = &control->prev_sample[p];
	struct rte_eth_stats hw;
	struct port_totals t;
	double dt;

	if (!o)
		return NULL;
	snapshot_port_totals(run, p, &t);
	stats_port_hw(run, p, &hw);
	rte_spinlock_lock(&control->prev_lock);
	was = prev->valid ? *prev : (struct port_sample){.tsc = run->start_tsc}; /* first call: since the start */
	*prev = (struct port_sample){.valid = true, .tsc = now, .tx_packets = t.tx_packets, .tx_bytes = t.tx_bytes,
				     .rx_packets = t.rx_frames, .rx_bytes = t.rx_bytes};
	rte_spinlock_unlock(&control->prev_lock);
	dt = now > was.tsc ? (double)(now - was.tsc) / (double)run->tsc_hz : 0;
	rte_tel_data_add_dict_string(o, "driver", run->ports[p].driver);
	rte_tel_data_add_dict_int(o, "link_up", __atomic_load_n(&run->link[p].state, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_u64(o, "link_changes", __atomic_load_n(&run->link[p].changes, __ATOMIC_RELAXED));
	add_fixed(o, "link_gbps", "%.6g", run->ports[p].link_speed_gbps);
	rte_tel_data_add_dict_u64(o, "tx_packets", t.tx_packets);
	rte_tel_data_add_dict_u64(o, "tx_bytes", t.tx_bytes);
	rte_tel_data_add_dict_u64(o, "rx_packets", t.rx_frames);
	rte_tel_data_add_dict_u64(o, "rx_bytes", t.rx_bytes);
	rte_tel_data_add_dict_u64(o, "rx_malformed", t.rx_malformed);
	/* as the report's ports[].rx_dropped */
	rte_tel_data_add_dict_u64(o, "rx_dropped", stats_rx_dropped(&t, &hw));
	rte_tel_data_add_dict_u64(o, "rx_qp_table_full", t.rx.rx_qp_table_full);
	rte_tel_data_add_dict_u64(o, "rx_injected_drops", t.rx.injected_drops);
	rte_tel_data_add_dict_u64(o, "rx_cnp", t.rx.kind[WIRE_KIND_CNP]);
	rte_tel_data_add_dict_u64(o, "rx_ecn_ce", ecn_ce);
	rte_tel_data_add_dict_u64(o, "pause_rx", t.rx.pause_rx);
	rte_tel_data_add_dict_u64(o, "mbuf_alloc_failures", t.mbuf_alloc_fail);
	rte_tel_data_add_dict_u64(o, "tx_queue_full", t.tx_ring_full);
	rte_tel_data_add_dict_u64(o, "tx_unsent", t.tx_unsent);
	rte_tel_data_add_dict_u64(o, "reflected", t.reflected);
	rte_tel_data_add_dict_u64(o, "reflect_dropped", t.reflect_dropped);
	add_fixed(o, "interval_s", "%.6f", dt);
	add_fixed(o, "tx_gbps", "%.6f", dt > 0 ? (double)(t.tx_bytes - was.tx_bytes) * 8 / dt / 1e9 : 0);
	add_fixed(o, "tx_mpps", "%.6f", dt > 0 ? (double)(t.tx_packets - was.tx_packets) / dt / 1e6 : 0);
	add_fixed(o, "rx_gbps", "%.6f", dt > 0 ? (double)(t.rx_bytes - was.rx_bytes) * 8 / dt / 1e9 : 0);
	add_fixed(o, "rx_mpps", "%.6f", dt > 0 ? (double)(t.rx_frames - was.rx_packets) / dt / 1e6 : 0);
	return o;
}

/* /roce/ports */
static int cmd_ports_run(struct run_view *run, const char *params, struct rte_tel_data *d)
{
	uint64_t ecn_ce[CFG_MAX_PORTS], now;

	(void)params;
	snapshot_ecn_ce_per_port(run, ecn_ce);
	now = rte_rdtsc();
	rte_tel_data_start_dict(d);
	for (unsigned p = 0; p < run->n_ports; p++)
		add_indexed(d, p, port_dict(run, p, now, ecn_ce[p]));
	return 0;
}
GUARDED(cmd_ports)

/* ---- /roce/latency ------------------------------------------------------------------------- */

#define CONTROL_LAT_QPS 16 /* QPs of a group shown one by one */

/* count, min, mean, p50, p90, p99, p99_9, max (ns) and jitter: what the report's latency_ns has. */
static struct rte_tel_data *lat_dict(const struct lat_stats *l)
{
	struct rte_tel_data *o = rte_tel_data_alloc();
	struct hist_summary h;

	if (!o)
		return NULL;
	hist_summarize(&l->h, &h);
	rte_tel_data_start_dict(o);
	rte_tel_data_add_dict_u64(o, "count", h.count);
	rte_tel_data_add_dict_u64(o, "min", h.min);
	add_fixed(o, "mean", "%.1f", h.mean);
	rte_tel_data_add_dict_u64(o, "p50", h.p50);
	rte_tel_data_add_dict_u64(o, "p90", h.p90);
	rte_tel_data_add_dict_u64(o, "p99", h.p99);
	rte_tel_data_add_dict_u64(o, "p99_9", h.p999);
	rte_tel_data_add_dict_u64(o, "max", h.max);
	add_fixed(o, "jitter", "%.1f", (double)l->jitter16 / 16.0);
	return o;
}

static void add_lat(struct rte_tel_data *o, const char *key, const struct lat_stats *l)
{
	if (l->h.count)
		add_container(o, key, lat_dict(l));
}

/* Scratch statistics (15 KB each): off the telemetry thread's stack, one set per call. */
struct lat_scratch {
	struct lat_stats one, sum[LAT_KIND_COUNT];
};

/* A group's QPs with latency, merged per kind ("oneway", "rtt", "ack"); with `qps`, also the first
 * CONTROL_LAT_QPS of them one by one. */
static struct rte_tel_data *lat_group_dict(const struct run_view *run, unsigned g, struct lat_scratch *s, bool qps)
{
	const struct cfg_flow_group *grp = &run->cfg->groups[g];
	struct rte_tel_data *o = named_dict(grp->name), *first = qps ? rte_tel_data_alloc() : NULL;
	unsigned n = 0;

	if (!o || (qps && !first)) {
		rte_tel_data_free(o);
		rte_tel_data_free(first);
		return NULL;
	}
	if (first)
		rte_tel_data_start_dict(first);
	for (int k = 0; k < LAT_KIND_COUNT; k++)
		lat_stats_init(&s->sum[k]);
	for (unsigned q = 0; q < run->n_qps; q++) {
		const struct qp_tx *qp = &run->qps[q];
		struct rte_tel_data *x;
		if (qp->group != grp || !qp->lat)
			continue;
		x = first && n < CONTROL_LAT_QPS ? rte_tel_data_alloc() : NULL;
		n++;
		if (x) {
			rte_tel_data_start_dict(x);
			rte_tel_data_add_dict_u64(x, "qpn", qp->qpn);
			rte_tel_data_add_dict_u64(x, "dest_qpn", qp->dest_qpn);
		}
		for (int k = 0; k < LAT_KIND_COUNT; k++) {
			snapshot_lat_flow(run, qp, (enum lat_kind)k, &s->one);
			lat_stats_merge(&s->sum[k], &s->one);
			if (x)
				add_lat(x, lat_kind_name[k], &s->one);
		}
		if (x)
			add_indexed(first, qp->index, x);
	}
	rte_tel_data_add_dict_string(o, "mode", grp->latency == CFG_LAT_PINGPONG ? "pingpong" : "oneway");
	rte_tel_data_add_dict_int(o, "qps", (int)n);
	for (int k = 0; k < LAT_KIND_COUNT; k++)
		add_lat(o, lat_kind_name[k], &s->sum[k]);
	if (first)
		add_container(o, "first_qps", first);
	return o;
}

/* Each port's one-way times (its receiver QPs) and round trips (its ping-pong QPs). */
static struct rte_tel_data *lat_ports_dict(const struct run_view *run, struct lat_scratch *s)
{
	struct rte_tel_data *o = rte_tel_data_alloc();

	if (!o)
		return NULL;
	rte_tel_data_start_dict(o);
	for (unsigned p = 0; p < run->n_ports; p++) {
		struct rte_tel_data *x = named_dict(run->cfg->ports[p].name);
		if (!x)
			break;
		for (int k = 0; run->lat_live && k < 2; k++) {
			enum lat_kind kind = k ? LAT_RTT : LAT_ONEWAY;
			snapshot_lat_port(run, p, kind, &s->one);
			add_lat(x, lat_kind_name[kind], &s->one);
		}
		add_indexed(o, p, x);
	}
	return o;
}

/* /roce/latency[,GROUP] */
static int cmd_latency_run(struct run_view *run, const char *params, struct rte_tel_data *d)
{
	struct lat_scratch *s;
	struct rte_tel_data *x;
	int only = -1;

	if (params && *params) {
		if ((only = group_by_name(run, params)) < 0)
			return reply_error(d, "no flow group of that name (see /roce/flows)");
		if (run->cfg->groups[only].latency == CFG_LAT_OFF)
			return reply_error(d, "the flow group measures no latency (its latency.mode is off)");
	}
	s = aligned_alloc(64, sizeof(*s));
	if (!s)
		return reply_error(d, "out of memory");
	rte_tel_data_start_dict(d);
	if (only >= 0) {
		add_container(d, "flow", lat_group_dict(run, (unsigned)only, s, true));
		free(s);
		return 0;
	}
	add_container(d, "ports", lat_ports_dict(run, s));
	if ((x = rte_tel_data_alloc())) {
		rte_tel_data_start_dict(x);
		for (unsigned g = 0; g < run->cfg->n_groups; g++)
			if (run->cfg->groups[g].latency != CFG_LAT_OFF)
				add_indexed(x, g, lat_group_dict(run, g, s, false));
		add_container(d, "flows", x);
	}
	free(s);
	return 0;
}
GUARDED(cmd_latency)

/* ---- /roce/pfc ----------------------------------------------------------------------------- */

static void add_u64_array(struct rte_tel_data *o, const char *key, const uint64_t *v, unsigned n)
{
	struct rte_tel_data *a = rte_tel_data_alloc();

	if (!a)
		return;
	rte_tel_data_start_array(a, RTE_TEL_U64_VAL);
	for (unsigned i = 0; i < n; i++)
		rte_tel_data_add_array_u64(a, v[i]);
	add_container(o, key, a);
}

/* Threshold PFC (qos.pfc_xoff): frames sent and episodes per priority, the backlog now. */
static struct rte_tel_data *watch_dict(const struct pfc_watch *w)
{
	struct rte_tel_data *o = rte_tel_data_alloc();
	uint64_t v[4][QOS_PRIORITIES];
	static const char *const names[4] = {"xoff_sent", "xon_sent", "episodes", "backlog_bytes"};

	if (!o)
		return NULL;
	for (unsigned k = 0; k < QOS_PRIORITIES; k++) {
		v[0][k] = stat_read(&w->prio[k].xoff_sent);
		v[1][k] = stat_read(&w->prio[k].xon_sent);
		v[2][k] = stat_read(&w->prio[k].episodes);
		v[3][k] = stat_read(&w->prio[k].backlog);
	}
	rte_tel_data_start_dict(o);
	for (unsigned i = 0; i < 4; i++)
		add_u64_array(o, names[i], v[i], QOS_PRIORITIES);
	return o;
}

static struct rte_tel_data *pfc_port_dict(const struct run_view *run, unsigned p, uint64_t now)
{
	struct rte_tel_data *o = named_dict(run->cfg->ports[p].name);
	struct port_totals t;
	struct port_pfc pfc;

	if (!o)
		return NULL;
	snapshot_port_totals(run, p, &t);
	snapshot_port_pfc(run, p, now, &pfc);
	rte_tel_data_add_dict_int(o, "honour_pfc", run->cfg->ports[p].honour_pfc);
	add_u64_array(o, "pfc_rx", t.rx.pfc_rx, QOS_PRIORITIES);
	add_u64_array(o, "pfc_xoff_rx", t.rx.pfc_xoff_rx, QOS_PRIORITIES);
	add_u64_array(o, "paused_ns", pfc.paused_ns, QOS_PRIORITIES);
	rte_tel_data_add_dict_u64(o, "pause_rx", t.rx.pause_rx);
	add_u64_array(o, "pfc_tx", pfc.pfc_tx, QOS_PRIORITIES);
	rte_tel_data_add_dict_u64(o, "pause_tx", pfc.pause_tx);
	rte_tel_data_add_dict_u64(o, "generator_frames", pfc.generator_frames);
	if (run->cfg->ports[p].xoff_priorities)
		add_container(o, "pfc_xoff", watch_dict(&run->watch[p]));
	return o;
}

/* /roce/pfc */
static int cmd_pfc_run(struct run_view *run, const char *params, struct rte_tel_data *d)
{
	uint64_t now = rte_rdtsc();

	(void)params;
	rte_tel_data_start_dict(d);
	for (unsigned p = 0; p < run->n_ports; p++)
		add_indexed(d, p, pfc_port_dict(run, p, now));
	return 0;
}
GUARDED(cmd_pfc)

/* ---- /roce/link ---------------------------------------------------------------------------- */

/* Every link of the fabric and whether it is up, with the events so far. */
static int link_list(const struct fabric_lab *fl, struct rte_tel_data *d)
{
	struct rte_tel_data *x = rte_tel_data_alloc();

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "events", __atomic_load_n(&fl->n_events, __ATOMIC_ACQUIRE));
	rte_tel_data_add_dict_u64(d, "events_done", __atomic_load_n(&fl->events_done, __ATOMIC_ACQUIRE));
	if (!x)
		return 0;
	rte_tel_data_start_dict(x);
	for (unsigned l = 0; l < fl->cfg->n_links; l++) {
		struct rte_tel_data *o = named_dict(fl->cfg->links[l].name);
		if (o)
			rte_tel_data_add_dict_string(o, "state", fabric_lab_link_up(fl, l) ? "up" : "down");
		add_indexed(x, l, o);
	}
	add_container(d, "links", x);
	return 0;
}

/* /roce/link[,LINK,down|up] */
static int cmd_link_run(struct run_view *run, const char *params, struct rte_tel_data *d)
{
	struct fabric_lab *fl = run->fab;
	char name[CFG_FAB_LINK_NAME] = "", state[8] = "", why[RTE_TEL_MAX_STRING_LEN];
	unsigned l, k;
	int used = 0;

	if (!fl)
		return reply_error(d, "the run has no fabric");
	if (!params || !*params)
		return link_list(fl, d);
	if (sscanf(params, "%75[^,],%7s%n", name, state, &used) != 2 || params[used] ||
	    (strcmp(state, "down") && strcmp(state, "up")))
		return reply_error(d, "usage: /roce/link[,LINK,down|up] (LINK as the report names it)");
	for (l = 0; l < fl->cfg->n_links && strcmp(fl->cfg->links[l].name, name); l++)
		;
	if (l == fl->cfg->n_links)
		return reply_error(d, "no link of that name in the fabric (see /roce/link)");
	if (fabric_lab_link_event(fl, l, !strcmp(state, "up"), rte_rdtsc(), &k, why, sizeof(why)))
		return reply_error_text(d, why);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "link", name);
	rte_tel_data_add_dict_string(d, "state", state);
	rte_tel_data_add_dict_u64(d, "event", k);
	add_number(d, "at_s", fl->ev[k].at_s);
	add_number(d, "converges_in_ms", fl->cfg->convergence_ms);
	return 0;
}
GUARDED(cmd_link)

/* Registers the commands; once per process (DPDK keeps them until it exits). */
static void register_commands(void)
{
	/* DPDK refuses (-EINVAL) a help text of RTE_TEL_MAX_STRING_LEN (128) bytes or more */
	static const struct {
		const char *cmd;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{"/roce/flows", cmd_flows, "Flow groups: QPs, rate_gbps, tx_packets, tx_bytes. No parameters"},
		{"/roce/flow_rate", cmd_flow_rate, "Sets a flow group's per-QP rate. Parameters: FLOW_NAME,GBPS"},
		{"/roce/cc", cmd_cc,
		 "Congestion control: per flow group rates, CNPs, cuts, first QPs' state; notification points. "
		 "Parameters: [FLOW_NAME]"},
		{"/roce/cc_set", cmd_cc_set,
		 "Sets a DCQCN or TIMELY parameter of a running flow group. Parameters: FLOW_NAME,PARAMETER,VALUE"},
		{"/roce/egress", cmd_egress,
		 "Sets a traffic class's ETS weight and shaper. Parameters: PORT,TC,WEIGHT[,SHAPE_GBPS]"},
		{"/roce/ports", cmd_ports,
		 "Per port: counters; tx/rx Gb/s, Mpps since the previous call (the first: since the run "
		 "started). No parameters"},
		{"/roce/latency", cmd_latency,
		 "Latency (ns) per port and per flow group measuring it; with a name, its first 16 QPs. "
		 "Parameters: [FLOW_NAME]"},
		{"/roce/pfc", cmd_pfc,
		 "Per port: PFC received, XOFF, paused ns, sent per priority; generator and pfc_xoff counts. "
		 "No parameters"},
		{"/roce/link", cmd_link,
		 "The fabric's links and their state; with a link, takes it down or up now. "
		 "Parameters: [LINK,down|up]"},
	};

	for (unsigned i = 0; i < RTE_DIM(cmds); i++)
		if (rte_telemetry_register_cmd(cmds[i].cmd, cmds[i].fn, cmds[i].help))
			printf("roce-engine: warning: telemetry command %s not registered\n", cmds[i].cmd);
}

/* The shared state, made at the first attach (main lcore) and published before any command can
 * run; NULL (with a warning) when it cannot be allocated: the run goes on without commands. */
static struct control_state *control_state(void)
{
	struct control_state *c;

	if (control)
		return control;
	c = calloc(1, sizeof(*c));
	if (!c) {
		printf("roce-engine: warning: no memory for the telemetry commands; they are not registered\n");
		return NULL;
	}
	rte_spinlock_init(&c->prev_lock);
	__atomic_store_n(&control, c, __ATOMIC_RELEASE);
	register_commands();
	return c;
}

void control_attach(struct run_view *run)
{
	struct control_state *c;

	for (unsigned g = 0; g < run->cfg->n_groups; g++)
		run->rate_gbps[g] = (uint64_t)(run->cfg->groups[g].rate_gbps * 1e6);
	c = control_state();
	if (!c)
		return;
	rte_spinlock_lock(&c->prev_lock); /* a new run: rates start from its start again */
	memset(c->prev_sample, 0, sizeof(c->prev_sample));
	rte_spinlock_unlock(&c->prev_lock);
	__atomic_store_n(&c->attached, run, __ATOMIC_RELEASE);
}

void control_attach_final(struct run_view *run)
{
	if (control)
		__atomic_store_n(&control->attached, run, __ATOMIC_SEQ_CST);
}

void control_detach(void)
{
	if (!control)
		return;
	__atomic_store_n(&control->attached, NULL, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&control->in_flight, __ATOMIC_SEQ_CST)) /* commands that saw the engine finish */
		rte_pause();
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "control.h"
#include "egress.h"
#include "engine_state.h"

static struct engine *attached; /* read by the telemetry thread */

void control_set_flow_rate(struct engine *e, unsigned group, double gbps)
{
	for (unsigned q = 0; q < e->n_qps; q++)
		if (e->qps[q].group == &e->cfg->groups[group])
			qp_tx_set_rate(&e->qps[q], gbps, e->tsc_hz);
	__atomic_store_n(&e->rate_gbps[group], (uint64_t)(gbps * 1e6), __ATOMIC_RELAXED);
}

void control_set_egress(struct engine *e, unsigned port, unsigned tc, unsigned weight, bool set_shape, double shape_gbps)
{
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++)
		for (unsigned i = 0; e->work[l] && i < e->work[l]->n_tx; i++) {
			struct egress *eg = e->work[l]->tx[i].egress;
			if (e->work[l]->tx[i].port != port || !eg)
				continue;
			__atomic_store_n(&eg->tc[tc].quantum, (uint32_t)weight * EGRESS_QUANTUM_BYTES, __ATOMIC_RELAXED);
			if (set_shape)
				__atomic_store_n(&eg->tc[tc].fp_per_byte, pace_fp_per_byte(shape_gbps, e->tsc_hz),
						 __ATOMIC_RELAXED);
		}
}

static struct engine *current(struct rte_tel_data *d)
{
	struct engine *e = __atomic_load_n(&attached, __ATOMIC_ACQUIRE);

	if (!e) {
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_string(d, "error", "no run in progress");
	}
	return e;
}

static int cmd_flows(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct engine *e = current(d);

	(void)cmd;
	(void)params;
	if (!e)
		return 0;
	rte_tel_data_start_dict(d);
	for (unsigned g = 0, q = 0; g < e->cfg->n_groups; g++) {
		const struct cfg_flow_group *grp = &e->cfg->groups[g];
		struct rte_tel_data *o = rte_tel_data_alloc();
		uint64_t pkts = 0, bytes = 0;
		char rate[32];

		for (unsigned i = 0; i < grp->count; i++, q++) {
			pkts += stat_read(&e->qps[q].c.tx_packets);
			bytes += stat_read(&e->qps[q].c.tx_bytes);
		}
		if (!o)
			return -1;
		rte_tel_data_start_dict(o);
		rte_tel_data_add_dict_int(o, "qps", (int)grp->count);
		snprintf(rate, sizeof(rate), "%.6g", __atomic_load_n(&e->rate_gbps[g], __ATOMIC_RELAXED) / 1e6);
		rte_tel_data_add_dict_string(o, "rate_gbps", rate);
		rte_tel_data_add_dict_u64(o, "tx_packets", pkts);
		rte_tel_data_add_dict_u64(o, "tx_bytes", bytes);
		rte_tel_data_add_dict_container(d, grp->name, o, 0);
	}
	return 0;
}

static int reply_error(struct rte_tel_data *d, const char *what)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "error", what);
	return 0;
}

/* params: "NAME,GBPS" */
static int cmd_flow_rate(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct engine *e = current(d);
	char name[CFG_NAME_LEN] = "", *end;
	const char *comma = params ? strchr(params, ',') : NULL;
	double gbps;
	int g;

	(void)cmd;
	if (!e)
		return 0;
	if (!comma || comma == params || (size_t)(comma - params) >= sizeof(name))
		return reply_error(d, "usage: /roce/flow_rate,FLOW_NAME,GBPS");
	memcpy(name, params, (size_t)(comma - params));
	gbps = strtod(comma + 1, &end);
	if (end == comma + 1 || *end || !(gbps > 0 && gbps <= 800))
		return reply_error(d, "GBPS must be a number > 0 and <= 800");
	for (g = 0; g < (int)e->cfg->n_groups && strcmp(e->cfg->groups[g].name, name); g++)
		;
	if (g == (int)e->cfg->n_groups)
		return reply_error(d, "no flow group of that name (see /roce/flows)");
	if (!(e->cfg->groups[g].rate_gbps > 0))
		return reply_error(d, "the flow has no rate_gbps: only flows paced in Gb/s can change rate (unpaced QPs "
				      "are served round robin, rate_pps flows are paced per packet)");
	control_set_flow_rate(e, (unsigned)g, gbps);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "flow", name);
	rte_tel_data_add_dict_string(d, "rate_gbps", comma + 1);
	return 0;
}

/* params: "PORT,TC,WEIGHT[,SHAPE_GBPS]" */
static int cmd_egress(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct engine *e = current(d);
	char port[CFG_NAME_LEN] = "";
	long tc, weight;
	double shape = -1;
	int p, used = 0, got;

	(void)cmd;
	if (!e)
		return 0;
	got = params ? sscanf(params, "%31[^,],%ld,%ld%n,%lf%n", port, &tc, &weight, &used, &shape, &used) : 0;
	if (got < 3 || (size_t)used != strlen(params))
		return reply_error(d, "usage: /roce/egress,PORT,TC,WEIGHT[,SHAPE_GBPS]");
	if (tc < 0 || tc > 7 || weight < 1 || weight > 1000 || (got == 4 && !(shape >= 0 && shape <= 800)))
		return reply_error(d, "TC 0..7, WEIGHT 1..1000, SHAPE_GBPS 0 (none)..800");
	p = config_port_index(e->cfg, port);
	if (p < 0 || !(e->cfg->ports[p].egress_gbps > 0))
		return reply_error(d, "no port of that name with qos.egress");
	control_set_egress(e, (unsigned)p, (unsigned)tc, (unsigned)weight, got == 4, shape);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "port", port);
	rte_tel_data_add_dict_int(d, "tc", (int)tc);
	rte_tel_data_add_dict_int(d, "weight", (int)weight);
	if (got == 4)
		rte_tel_data_add_dict_string(d, "shape_gbps", strrchr(params, ',') + 1);
	return 0;
}

static int group_by_name(const struct engine *e, const char *name)
{
	for (unsigned g = 0; g < e->cfg->n_groups; g++)
		if (!strcmp(e->cfg->groups[g].name, name))
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
static struct rte_tel_data *cc_group_dict(const struct engine *e, unsigned g)
{
	const struct cfg_flow_group *grp = &e->cfg->groups[g];
	struct rte_tel_data *o = rte_tel_data_alloc(), *qps = rte_tel_data_alloc();
	uint64_t sum = 0, lo = UINT64_MAX, hi = 0, cnps = 0, cuts = 0;
	unsigned n = 0;

	if (!o || !qps) {
		rte_tel_data_free(o);
		rte_tel_data_free(qps);
		return NULL;
	}
	rte_tel_data_start_dict(o);
	rte_tel_data_start_dict(qps);
	for (unsigned i = 0; i < e->n_cc; i++) {
		const struct qp_cc *c = &e->cc_states[i];
		struct cc_view v;
		if (c->qp->group != grp)
			continue;
		congestion_view(c, &v);
		sum += v.rate_kbps;
		lo = v.rate_kbps < lo ? v.rate_kbps : lo;
		hi = v.rate_kbps > hi ? v.rate_kbps : hi;
		cnps += v.cnps;
		cuts += v.cuts;
		if (n++ < CONTROL_CC_QPS) {
			char key[16];
			struct rte_tel_data *q = cc_qp_dict(c);
			snprintf(key, sizeof(key), "%u", c->qp->index);
			if (q)
				rte_tel_data_add_dict_container(qps, key, q, 0);
		}
	}
	rte_tel_data_add_dict_string(o, "algorithm", congestion_algo_name(grp->cc));
	if (grp->cc == CFG_CC_DCQCN)
		rte_tel_data_add_dict_string(o, "profile", e->dcqcn_live[g].profile == DCQCN_PAPER ? "paper" : "nvidia");
	rte_tel_data_add_dict_int(o, "qps", (int)n);
	add_gbps(o, "rate_sum_gbps", sum);
	add_gbps(o, "rate_min_gbps", n ? lo : 0);
	add_gbps(o, "rate_max_gbps", hi);
	rte_tel_data_add_dict_u64(o, "cnps", cnps);
	rte_tel_data_add_dict_u64(o, "cuts", cuts);
	rte_tel_data_add_dict_container(o, "first_qps", qps, 0);
	return o;
}

/* Each port's notification point: CNPs sent and suppressed. */
static struct rte_tel_data *np_dict(const struct engine *e)
{
	struct rte_tel_data *o = rte_tel_data_alloc();

	if (!o)
		return NULL;
	rte_tel_data_start_dict(o);
	for (unsigned p = 0; p < e->n_ports; p++) {
		struct rte_tel_data *x = rte_tel_data_alloc();
		struct port_totals t;
		if (!x)
			break;
		stats_port_totals(e, p, &t);
		rte_tel_data_start_dict(x);
		rte_tel_data_add_dict_int(x, "enabled", e->cfg->ports[p].np_enabled);
		rte_tel_data_add_dict_u64(x, "ecn_ce_rx", t.rx.np_cnp_tx + t.rx.np_suppressed + t.rx.np_no_peer + t.rx.np_failed);
		rte_tel_data_add_dict_u64(x, "cnp_tx", t.rx.np_cnp_tx);
		rte_tel_data_add_dict_u64(x, "suppressed", t.rx.np_suppressed);
		rte_tel_data_add_dict_u64(x, "no_peer", t.rx.np_no_peer);
		rte_tel_data_add_dict_container(o, e->cfg->ports[p].name, x, 0);
	}
	return o;
}

/* The group's parameters as its QPs use them now. */
static struct rte_tel_data *cc_params_dict(const struct engine *e, unsigned g)
{
	const char *names[40];
	double values[40];
	enum cfg_cc algo = e->cfg->groups[g].cc;
	unsigned n = config_cc_params_list(algo, algo == CFG_CC_DCQCN ? (const void *)&e->dcqcn_live[g]
								     : (const void *)&e->timely_live[g], names, values, 40);
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

/* /roce/cc[,GROUP] */
static int cmd_cc(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct engine *e = current(d);
	struct rte_tel_data *x;
	int only = -1;

	(void)cmd;
	if (!e)
		return 0;
	if (params && *params && (only = group_by_name(e, params)) < 0)
		return reply_error(d, "no flow group of that name (see /roce/flows)");
	rte_tel_data_start_dict(d);
	for (unsigned g = 0; g < e->cfg->n_groups; g++) {
		if ((only >= 0 && (int)g != only) || e->cfg->groups[g].cc == CFG_CC_NONE)
			continue;
		if ((x = cc_group_dict(e, g)))
			rte_tel_data_add_dict_container(d, e->cfg->groups[g].name, x, 0);
	}
	if (only >= 0 && (x = cc_params_dict(e, (unsigned)only)))
		rte_tel_data_add_dict_container(d, "parameters", x, 0);
	if (only < 0 && (x = np_dict(e)))
		rte_tel_data_add_dict_container(d, "notification_points", x, 0);
	return 0;
}

/* /roce/cc_set,GROUP,PARAMETER,VALUE */
static int cmd_cc_set(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct engine *e = current(d);
	char group[CFG_NAME_LEN] = "", name[64] = "", msg[200];
	double value;
	int g, used = 0;

	(void)cmd;
	if (!e)
		return 0;
	if (!params || sscanf(params, "%31[^,],%63[^,],%lf%n", group, name, &value, &used) != 3 ||
	    (size_t)used != strlen(params))
		return reply_error(d, "usage: /roce/cc_set,FLOW_NAME,PARAMETER,VALUE (booleans 0 or 1)");
	if ((g = group_by_name(e, group)) < 0 || e->cfg->groups[g].cc == CFG_CC_NONE)
		return reply_error(d, "no flow group of that name with congestion control (see /roce/cc)");
	if (config_cc_param_set(e->cfg->groups[g].cc,
				e->cfg->groups[g].cc == CFG_CC_DCQCN ? (void *)&e->dcqcn_live[g] : (void *)&e->timely_live[g],
				name, value, msg, sizeof(msg)))
		return reply_error(d, msg);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "flow", group);
	rte_tel_data_add_dict_string(d, "parameter", name);
	rte_tel_data_add_dict_string(d, "value", strrchr(params, ',') + 1);
	return 0;
}

void control_attach(struct engine *e)
{
	static bool registered;

	for (unsigned g = 0; g < e->cfg->n_groups; g++)
		e->rate_gbps[g] = (uint64_t)(e->cfg->groups[g].rate_gbps * 1e6);
	if (!registered) {
		rte_telemetry_register_cmd("/roce/flows", cmd_flows,
					   "Flow groups: QPs, rate_gbps, tx_packets, tx_bytes. No parameters");
		rte_telemetry_register_cmd("/roce/flow_rate", cmd_flow_rate,
					   "Sets a flow group's per-QP rate. Parameters: FLOW_NAME,GBPS");
		rte_telemetry_register_cmd("/roce/cc", cmd_cc,
					   "Congestion control: per flow group rates, CNPs, cuts, first QPs' state; notification "
					   "points. Parameters: [FLOW_NAME]");
		rte_telemetry_register_cmd("/roce/cc_set", cmd_cc_set,
					   "Sets a DCQCN or TIMELY parameter of a running flow group. Parameters: "
					   "FLOW_NAME,PARAMETER,VALUE");
		rte_telemetry_register_cmd("/roce/egress", cmd_egress,
					   "Sets a traffic class's ETS weight and shaper. Parameters: PORT,TC,WEIGHT[,SHAPE_GBPS]");
		registered = true;
	}
	__atomic_store_n(&attached, e, __ATOMIC_RELEASE);
}

void control_detach(void) { __atomic_store_n(&attached, NULL, __ATOMIC_RELEASE); }

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
		rte_telemetry_register_cmd("/roce/egress", cmd_egress,
					   "Sets a traffic class's ETS weight and shaper. Parameters: PORT,TC,WEIGHT[,SHAPE_GBPS]");
		registered = true;
	}
	__atomic_store_n(&attached, e, __ATOMIC_RELEASE);
}

void control_detach(void) { __atomic_store_n(&attached, NULL, __ATOMIC_RELEASE); }

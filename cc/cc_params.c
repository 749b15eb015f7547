/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The parameter tables: see cc_params.h. docs/cc.md gives each parameter's meaning and unit.
 */
#include "cc_params.h"

#include <stdbool.h>
#include <string.h>

#include "dcqcn.h"
#include "timely.h"

#define NV DCQCN_NVIDIA
#define PA DCQCN_PAPER
#define DQ(n, t, lo, hi, prof) { #n, offsetof(struct dcqcn_params, n), CC_PARAM_##t, lo, hi, prof }
const struct cc_param cc_dcqcn_params[] = {
	DQ(dce_tcp_g, U32, 0, 1023, NV), DQ(dce_tcp_rtt, U32, 1, 131071, NV),
	DQ(initial_alpha_value, U32, 0, 1023, NV), DQ(rate_to_set_on_first_cnp, U32, 0, 800000, NV),
	DQ(rpg_min_dec_fac, U32, 0, 100, NV), DQ(rpg_min_rate, U32, 0, 800000, NV), DQ(rpg_gd, U32, 1, 31, NV),
	DQ(rate_reduce_monitor_period, U32, 1, 1e7, NV), DQ(clamp_tgt_rate, BOOL, 0, 1, NV),
	DQ(clamp_tgt_rate_after_time_inc, BOOL, 0, 1, NV), DQ(rpg_time_reset, U32, 1, 1e8, NV),
	DQ(rpg_byte_reset, U32, 0, 4294967295.0, NV), DQ(rpg_threshold, U32, 1, 1000, NV),
	DQ(rpg_max_rate, U32, 0, 800000, NV), DQ(rpg_ai_rate, U32, 0, 800000, NV),
	DQ(rpg_hai_rate, U32, 0, 800000, NV),
	DQ(g, DOUBLE, 1e-9, 1, PA), DQ(k_us, U32, 1, 1e8, PA), DQ(t_us, U32, 1, 1e8, PA),
	DQ(b_bytes, U64, 0, 1e15, PA), DQ(f, U32, 1, 1000, PA), DQ(r_ai_mbps, U32, 0, 800000, PA),
	DQ(r_hai_mbps, U32, 0, 800000, PA), DQ(min_rate_mbps, U32, 0, 800000, PA),
	DQ(initial_alpha, DOUBLE, 0, 1, PA), DQ(alpha_before_cut, BOOL, 0, 1, PA), DQ(ns3_stages, BOOL, 0, 1, PA),
	DQ(hyper_linear, BOOL, 0, 1, PA),
	{ NULL, CC_PARAM_U32, 0, 0, 0, -1 },
};
#undef DQ
#undef NV
#undef PA

#define TM(n, t, lo, hi) { #n, offsetof(struct timely_params, n), CC_PARAM_##t, lo, hi, -1 }
const struct cc_param cc_timely_params[] = {
	TM(alpha, DOUBLE, 0, 1), TM(beta, DOUBLE, 0, 1), TM(t_low_us, U32, 0, 1e8), TM(t_high_us, U32, 1, 1e8),
	TM(min_rtt_us, U32, 1, 1e8), TM(delta_mbps, U32, 0, 800000), TM(hai_after, U32, 1, 1000),
	TM(hai_n, U32, 1, 1000), TM(min_rate_mbps, U32, 0, 800000), TM(max_rate_mbps, U32, 0, 800000),
	{ NULL, CC_PARAM_U32, 0, 0, 0, -1 },
};
#undef TM

const char *const cc_dcqcn_profile_names[] = { [DCQCN_NVIDIA] = "nvidia", [DCQCN_PAPER] = "paper", NULL };

unsigned cc_params_count(const struct cc_param *table)
{
	unsigned n = 0;

	while (table[n].name)
		n++;
	return n;
}

const struct cc_param *cc_param_find(const struct cc_param *table, const char *name)
{
	for (; table->name; table++)
		if (!strcmp(table->name, name))
			return table;
	return NULL;
}

void cc_param_store_int(const struct cc_param *d, void *params, uint64_t v)
{
	void *field = (char *)params + d->off;

	if (d->type == CC_PARAM_U64)
		__atomic_store_n((uint64_t *)field, v, __ATOMIC_RELEASE);
	else if (d->type == CC_PARAM_U32)
		__atomic_store_n((uint32_t *)field, (uint32_t)v, __ATOMIC_RELEASE);
	else
		cc_param_store(d, params, (double)v);
}

void cc_param_store(const struct cc_param *d, void *params, double v)
{
	void *field = (char *)params + d->off;

	if (d->type == CC_PARAM_BOOL)
		__atomic_store_n((bool *)field, v != 0, __ATOMIC_RELEASE);
	else if (d->type == CC_PARAM_DOUBLE)
		__atomic_store((double *)field, &v, __ATOMIC_RELEASE);
	else
		cc_param_store_int(d, params, (uint64_t)v);
}

double cc_param_load(const struct cc_param *d, const void *params)
{
	const void *field = (const char *)params + d->off;
	double v;

	switch (d->type) {
	case CC_PARAM_BOOL:
		return (double)__atomic_load_n((const bool *)field, __ATOMIC_RELAXED);
	case CC_PARAM_DOUBLE:
		__atomic_load((const double *)field, &v, __ATOMIC_RELAXED);
		return v;
	case CC_PARAM_U64:
		return (double)__atomic_load_n((const uint64_t *)field, __ATOMIC_RELAXED);
	default:
		return (double)__atomic_load_n((const uint32_t *)field, __ATOMIC_RELAXED);
	}
}

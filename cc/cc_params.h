/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The members of struct dcqcn_params and struct timely_params by name: one table per algorithm,
 * read by the engine's config loader and run-time control (config/config_cc.c) and by roce-ccsim's
 * scenario loader, so that a parameter added to a struct is described once. Each entry gives the
 * range a single value may take; rules across parameters stay in dcqcn_params_check() and
 * timely_params_check(). Plain C: no libconfig here, the loaders read the values.
 */
#ifndef ROCE_CC_PARAMS_H
#define ROCE_CC_PARAMS_H

#include <stddef.h>
#include <stdint.h>

enum cc_param_type { CC_PARAM_U32, CC_PARAM_U64, CC_PARAM_BOOL, CC_PARAM_DOUBLE };

struct cc_param {
	const char *name;             /* the member's name, which is also its config key */
	size_t off;                   /* offsetof() in the parameter struct */
	enum cc_param_type type;
	double lo, hi;                /* allowed values; whole numbers unless CC_PARAM_DOUBLE */
	int profile;                  /* DCQCN: the enum dcqcn_profile that uses it; -1: any */
};

/* In struct order, ended by an entry whose name is NULL. */
extern const struct cc_param cc_dcqcn_params[];
extern const struct cc_param cc_timely_params[];
/* Indexed by enum dcqcn_profile, NULL-terminated (the values of `profile = "..."`). */
extern const char *const cc_dcqcn_profile_names[];

unsigned cc_params_count(const struct cc_param *table);
/* The entry named `name`, or NULL. */
const struct cc_param *cc_param_find(const struct cc_param *table, const char *name);

/* Stores v into d's member of params (a bool gets v != 0; an integer must be a whole v within
 * its C type, which callers check). The stores are atomic (release) because the engine changes
 * a running QP's parameters while the QP's lcore reads them. */
void cc_param_store(const struct cc_param *d, void *params, double v);
/* The same for an integer member, without a round trip through double (exact beyond 2^53). */
void cc_param_store_int(const struct cc_param *d, void *params, uint64_t v);
/* d's member of params (an atomic load, for the same reason). */
double cc_param_load(const struct cc_param *d, const void *params);

#endif

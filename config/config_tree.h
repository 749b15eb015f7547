/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Small setters on libconfig trees, for the programs that write engine configs (roce-suite's
 * trials, roce-cluster's lab switch): each replaces the member, whatever its type was. Plain C and
 * libconfig.
 */
#ifndef ROCE_CONFIG_TREE_H
#define ROCE_CONFIG_TREE_H

#include <stdbool.h>

#include <libconfig.h>

/* A new member `key` of type `type` in g, in place of any of that name. */
config_setting_t *cfg_replace(config_setting_t *g, const char *key, int type);
config_setting_t *cfg_group(config_setting_t *parent, const char *name); /* the member group, made if absent */
void cfg_set_float(config_setting_t *g, const char *key, double v);
void cfg_set_int(config_setting_t *g, const char *key, long long v);
void cfg_set_string(config_setting_t *g, const char *key, const char *v);
void cfg_set_bool(config_setting_t *g, const char *key, bool v);
void cfg_remove(config_setting_t *g, const char *key);
/* A copy of src (scalars, arrays, lists, groups) as member `name` of the group dst (or an
 * element of the list/array dst when name is NULL); an existing member of that name goes. */
config_setting_t *cfg_copy(config_setting_t *dst, const char *name, const config_setting_t *src);
/* A number (int or float) member, or dflt. */
double cfg_number(const config_setting_t *g, const char *key, double dflt);

#endif

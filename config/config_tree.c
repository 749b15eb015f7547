/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Editing libconfig trees (config_tree.h): what roce-suite's trials and roce-cluster's lab switch
 * write as engine configs.
 */
#include "config_tree.h"

void cfg_remove(config_setting_t *g, const char *key)
{
	if (config_setting_get_member(g, key))
		config_setting_remove(g, key);
}

config_setting_t *cfg_replace(config_setting_t *g, const char *key, int type)
{
	cfg_remove(g, key);
	return config_setting_add(g, key, type);
}

config_setting_t *cfg_group(config_setting_t *parent, const char *name)
{
	config_setting_t *s = config_setting_get_member(parent, name);

	return s && config_setting_type(s) == CONFIG_TYPE_GROUP ? s : cfg_replace(parent, name, CONFIG_TYPE_GROUP);
}

void cfg_set_float(config_setting_t *g, const char *key, double v)
{
	config_setting_set_float(cfg_replace(g, key, CONFIG_TYPE_FLOAT), v);
}

void cfg_set_int(config_setting_t *g, const char *key, long long v)
{
	if (v == (int)v)
		config_setting_set_int(cfg_replace(g, key, CONFIG_TYPE_INT), (int)v);
	else
		config_setting_set_int64(cfg_replace(g, key, CONFIG_TYPE_INT64), v);
}

void cfg_set_string(config_setting_t *g, const char *key, const char *v)
{
	config_setting_set_string(cfg_replace(g, key, CONFIG_TYPE_STRING), v);
}

void cfg_set_bool(config_setting_t *g, const char *key, bool v)
{
	config_setting_set_bool(cfg_replace(g, key, CONFIG_TYPE_BOOL), v);
}

config_setting_t *cfg_copy(config_setting_t *dst, const char *name, const config_setting_t *src)
{
	int type = config_setting_type(src);
	config_setting_t *n = config_setting_is_group(dst) ? cfg_replace(dst, name, type) : config_setting_add(dst, NULL, type);

	switch (type) {
	case CONFIG_TYPE_INT: config_setting_set_int(n, config_setting_get_int(src)); break;
	case CONFIG_TYPE_INT64: config_setting_set_int64(n, config_setting_get_int64(src)); break;
	case CONFIG_TYPE_FLOAT: config_setting_set_float(n, config_setting_get_float(src)); break;
	case CONFIG_TYPE_STRING: config_setting_set_string(n, config_setting_get_string(src)); break;
	case CONFIG_TYPE_BOOL: config_setting_set_bool(n, config_setting_get_bool(src)); break;
	default:
		for (int i = 0; i < config_setting_length(src); i++) {
			const config_setting_t *e = config_setting_get_elem(src, (unsigned)i);
			cfg_copy(n, config_setting_name(e), e);
		}
	}
	config_setting_set_format(n, config_setting_get_format(src));
	return n;
}

double cfg_number(const config_setting_t *g, const char *key, double dflt)
{
	const config_setting_t *s = g ? config_setting_get_member(g, key) : NULL;

	if (!s)
		return dflt;
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_INT: return config_setting_get_int(s);
	case CONFIG_TYPE_INT64: return (double)config_setting_get_int64(s);
	case CONFIG_TYPE_FLOAT: return config_setting_get_float(s);
	default: return dflt;
	}
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The suite configuration: libconfig text -> struct suite_cfg, validated completely before any
 * trial runs. Errors are the project's one line "FILE:LINE: SETTING: what is wrong (what is
 * allowed)", written by the shared reader config/config_read.c (cr_*). The `switch` group is not
 * checked here but copied into every trial's engine config; the engine checks it, and trial.c
 * points its complaints back at this file's lines (suite_config_where()). docs/suites.md lists
 * every setting.
 */
#include "suite.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aif.h"
#include "config_read.h"

/* An engine config holds up to 16 ports; every lab host takes two (its own and its switch port). */
#define LAB_MAX_HOSTS 8

const char *const suite_type_names[] = { "rfc2544", "microburst", "hol", "incast", "collective", "ai_fabric", NULL };

struct loader {
	struct config_reader r;
	struct suite_cfg *s;
	const config_setting_t *root;
};

/* An error about member key of the type's group g, which may be absent (all defaults): then at
 * the top, with the path the member would have. */
static int __attribute__((format(printf, 4, 5)))
fail_in(struct loader *ld, const config_setting_t *g, const char *key, const char *fmt, ...)
{
	char msg[512], path[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (g)
		return cr_fail_member(&ld->r, g, key, "%s", msg);
	snprintf(path, sizeof(path), "%s.%s", suite_type_names[ld->s->type], key);
	return cr_fail_member(&ld->r, ld->root, path, "%s", msg);
}

/* ---- small readers ------------------------------------------------------------------------------ */

static int opt_name(struct loader *ld, const config_setting_t *g, const char *key, char *out, size_t len)
{
	return cr_opt_name(&ld->r, g, key, out, len);
}

/* An array [ ... ] of min..max elements; the count, 0 when absent (or empty), -1 after an error. */
int suite_opt_array(struct config_reader *r, const config_setting_t *g, const char *key, unsigned min, unsigned max,
		    const config_setting_t **out)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	int n;

	*out = s;
	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_ARRAY && config_setting_type(s) != CONFIG_TYPE_LIST)
		return cr_fail(r, s, "must be an array [ ... ], not %s", cr_type_name(s));
	n = config_setting_length(s);
	if ((unsigned)n < min || (unsigned)n > max)
		return cr_fail(r, s, "has %d entries (allowed: %u..%u)", n, min, max);
	return n;
}

int suite_opt_uint_list(struct config_reader *r, const config_setting_t *g, const char *key, long long lo,
			long long hi, unsigned max, unsigned *vals, unsigned *n_out)
{
	const config_setting_t *a;
	int n = suite_opt_array(r, g, key, 1, max, &a);
	long long v;

	if (n <= 0)
		return n;
	for (int i = 0; i < n; i++) {
		if (cr_int_range(r, config_setting_get_elem(a, (unsigned)i), lo, hi, false, &v))
			return -1;
		vals[i] = (unsigned)v;
	}
	*n_out = (unsigned)n;
	return 1;
}

/* May be empty ([]: none). */
int suite_opt_float_list(struct config_reader *r, const config_setting_t *g, const char *key, double lo, bool lo_open,
			 double hi,
			 unsigned max, double *vals, unsigned *n_out)
{
	const config_setting_t *a;
	int n = suite_opt_array(r, g, key, 0, max, &a);

	if (n < 0)
		return n;
	*n_out = (unsigned)n;
	if (!n)
		return a ? 1 : 0;
	for (int i = 0; i < n; i++)
		if (cr_float_range(r, config_setting_get_elem(a, (unsigned)i), lo, lo_open, hi, &vals[i]))
			return -1;
	return 1;
}

/* Is there a flow group `name` in the base config (parsed here, with its includes; the engine
 * checks the rest)? */
static bool base_has_flow(const char *base, const char *name)
{
	const config_setting_t *flows;
	struct config_reader r;
	bool found = false;
	const char *n;
	config_t c;

	cr_init(&r, base, NULL, 0, "configuration");
	if (!cr_parse_file(&r, base, &c) && (flows = config_lookup(&c, "flows")))
		for (int i = 0; i < config_setting_length(flows) && !found; i++)
			found = config_setting_lookup_string(config_setting_get_elem(flows, (unsigned)i), "name", &n) &&
				!strcmp(n, name);
	config_destroy(&c);
	return found;
}

/* flows = ["a", "b"]: names of flow groups of the base config. */
static int opt_flow_names(struct loader *ld, const config_setting_t *g, const config_setting_t **out)
{
	int n = suite_opt_array(&ld->r, g, "flows", 1, 64, out);

	if (n > 0 && !ld->s->base[0])
		return cr_fail_member(&ld->r, g, "flows", "only with suite.base (the generated lab names its own flows)");
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(*out, (unsigned)i);
		if (cr_want_type(&ld->r, e, CONFIG_TYPE_STRING, "a flow's name"))
			return -1;
		if (!base_has_flow(ld->s->base, config_setting_get_string(e)))
			return cr_fail(&ld->r, e, "no flow '%s' in %s", cr_shown(config_setting_get_string(e), (char[64]){ 0 }),
				       ld->s->base);
	}
	return n < 0 ? -1 : 0;
}

static bool distinct(const unsigned *v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = i + 1; k < n; k++)
			if (v[i] == v[k])
				return false;
	return true;
}

/* ---- groups ----------------------------------------------------------------------------------- */

/* suite = { name; type; base; measure_only; } */
static int load_suite(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "name", "type", "base", "measure_only", NULL };
	const config_setting_t *g = cr_required(&ld->r, root, "suite", "a group { name = ...; type = ...; }");
	const config_setting_t *s;
	struct suite_cfg *sc = ld->s;
	int t;

	if (!g || cr_want_type(&ld->r, g, CONFIG_TYPE_GROUP, "a group { name = ...; type = ...; }") ||
	    cr_known_keys(&ld->r, g, keys))
		return -1;
	if (!cr_required(&ld->r, g, "name", "1..63 of A-Z a-z 0-9 - _ .") ||
	    opt_name(ld, g, "name", sc->name, sizeof(sc->name)) < 0)
		return -1;
	if (!(s = cr_required(&ld->r, g, "type", "rfc2544, microburst, hol, incast, collective or ai_fabric")) ||
	    (t = cr_pick(&ld->r, s, suite_type_names, NULL)) < 0)
		return -1;
	sc->type = (enum suite_type)t;
	if (cr_opt_bool(&ld->r, g, "measure_only", &sc->measure_only) < 0)
		return -1;
	if ((s = config_setting_get_member(g, "base"))) {
		const char *v, *slash = strrchr(sc->file, '/');
		if (cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a path to an engine config"))
			return -1;
		v = config_setting_get_string(s);
		if (!v[0])
			return cr_fail(&ld->r, s, "is empty (a path to an engine config, relative to this file)");
		if (v[0] == '/' || !slash)
			snprintf(sc->base, sizeof(sc->base), "%s", v);
		else
			snprintf(sc->base, sizeof(sc->base), "%.*s/%s", (int)(slash - sc->file), sc->file, v);
		if (access(sc->base, R_OK))
			return cr_fail(&ld->r, s, "cannot read '%s': %s", cr_shown(sc->base, (char[64]){ 0 }), strerror(errno));
		if (sc->type == SUITE_HOL || sc->type == SUITE_INCAST)
			return cr_fail(&ld->r, s, "not with type %s (the suite generates its lab, see the lab group)",
				       suite_type_names[sc->type]);
		if (sc->type == SUITE_AI_FABRIC)
			return cr_fail(&ld->r, s, "not with type ai_fabric (its trials run on the fabric group's fabric)");
	} else if (sc->type == SUITE_COLLECTIVE) {
		return cr_fail_member(&ld->r, g, "base", "missing (required for type collective: an engine config with "
				      "a collectives list)");
	}
	return 0;
}

/* lab = { link_gbps; host_gbps; senders; memory_mb; } */
static int load_lab(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "link_gbps", "host_gbps", "senders", "memory_mb", NULL };
	struct lab_cfg *l = &ld->s->lab;
	const config_setting_t *g;
	int rc;

	l->link_gbps = 1.0;
	l->senders = ld->s->type == SUITE_MICROBURST ? 2 : 1;
	if ((rc = cr_opt_group(&ld->r, root, "lab", &g)) <= 0)
		return rc;
	if (ld->s->base[0])
		return cr_fail(&ld->r, g, "not with suite.base (the base config is the lab)");
	if (ld->s->type == SUITE_AI_FABRIC)
		return cr_fail(&ld->r, g, "not with type ai_fabric (the fabric group is its lab)");
	if (cr_known_keys(&ld->r, g, keys) || cr_opt_float(&ld->r, g, "link_gbps", 0, true, 400, &l->link_gbps) < 0 ||
	    cr_opt_float(&ld->r, g, "host_gbps", 0, true, 400, &l->host_gbps) < 0 ||
	    cr_opt_u32(&ld->r, g, "senders", 1, LAB_MAX_HOSTS - 1, &l->senders) < 0 ||
	    cr_opt_u32(&ld->r, g, "memory_mb", 0, 65536, &l->memory_mb) < 0)
		return -1;
	if (l->memory_mb && l->memory_mb < 64)
		return cr_fail_member(&ld->r, g, "memory_mb", "%u is too little (0: computed, else 64..65536)", l->memory_mb);
	return 0;
}

/* trial = { duration_s; timeout_s; retries; } */
static int load_trial(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "duration_s", "timeout_s", "retries", NULL };
	static const double default_s[SUITE_TYPES] = { 0.5, 0.5, 1.0, 1.0, 0, 0.5 };
	struct trial_cfg *t = &ld->s->trial;
	const config_setting_t *g;
	int rc;

	t->duration_s = default_s[ld->s->type];
	if ((rc = cr_opt_group(&ld->r, root, "trial", &g)) <= 0)
		return rc;
	return cr_known_keys(&ld->r, g, keys) || cr_opt_float(&ld->r, g, "duration_s", 0, false, 3600, &t->duration_s) < 0 ||
			       cr_opt_float(&ld->r, g, "timeout_s", 0, false, 86400, &t->timeout_s) < 0 ||
			       cr_opt_u32(&ld->r, g, "retries", 0, 10, &t->retries) < 0
		       ? -1
		       : 0;
}

static int load_rfc2544(struct loader *ld, const config_setting_t *g)
{
	static const char *const keys[] = { "frame_sizes", "loss_threshold_pct", "min_gbps", "max_gbps", "resolution_pct",
					    "max_trials", "latency_fractions", "loss_step_pct", "expected_gbps",
					    "flows", NULL };
	struct rfc2544_cfg *c = &ld->s->rfc2544;
	const struct lab_cfg *l = &ld->s->lab;

	*c = (struct rfc2544_cfg){ .frame_sizes = { 512, 1024, 1518 }, .n_frames = 3, .resolution_pct = 1.0,
				   .max_trials = 12, .lat_fractions = { 0.5, 0.9, 1.0 }, .n_lat = 3, .step_pct = 10 };
	if (g && (cr_known_keys(&ld->r, g, keys) ||
		  suite_opt_uint_list(&ld->r, g, "frame_sizes", 64, 4158, SUITE_MAX_LIST, c->frame_sizes, &c->n_frames) < 0 ||
		  cr_opt_float(&ld->r, g, "loss_threshold_pct", 0, false, 100, &c->loss_threshold_pct) < 0 ||
		  cr_opt_float(&ld->r, g, "min_gbps", 0, true, 400, &c->min_gbps) < 0 ||
		  cr_opt_float(&ld->r, g, "max_gbps", 0, true, 400, &c->max_gbps) < 0 ||
		  cr_opt_float(&ld->r, g, "resolution_pct", 0, true, 50, &c->resolution_pct) < 0 ||
		  cr_opt_u32(&ld->r, g, "max_trials", 1, 64, &c->max_trials) < 0 ||
		  suite_opt_float_list(&ld->r, g, "latency_fractions", 0, true, 2, SUITE_MAX_LIST, c->lat_fractions, &c->n_lat) < 0 ||
		  cr_opt_float(&ld->r, g, "loss_step_pct", 0, true, 100, &c->step_pct) < 0 ||
		  cr_opt_float(&ld->r, g, "expected_gbps", 0, true, 400, &c->expected_gbps) < 0 ||
		  opt_flow_names(ld, g, &c->flows) < 0))
		return -1;
	if (!c->max_gbps && ld->s->base[0])
		return fail_in(ld, g, "max_gbps",
				      "missing (required with suite.base: the search's upper bound in Gb/s)");
	if (!c->max_gbps)
		c->max_gbps = 1.1 * l->link_gbps;
	if (!c->min_gbps)
		c->min_gbps = c->max_gbps / 100;
	if (c->min_gbps >= c->max_gbps)
		return fail_in(ld, g, "min_gbps", "%g is not below max_gbps %g", c->min_gbps, c->max_gbps);
	if (!ld->s->base[0] && c->max_gbps > ld->s->lab.host_gbps)
		return fail_in(ld, g, "max_gbps", "%g is above lab.host_gbps %g (the senders' links)",
				      c->max_gbps, ld->s->lab.host_gbps);
	if (!c->expected_gbps && !ld->s->base[0])
		c->expected_gbps = l->link_gbps;
	return 0;
}

static int load_microburst(struct loader *ld, const config_setting_t *g)
{
	static const char *const keys[] = { "frame_size", "priority", "min_burst", "max_burst", "resolution", "max_trials",
					    "search", "flows", NULL };
	static const char *const kinds[] = { "loss", "ecn", "pfc", NULL };
	struct microburst_cfg *c = &ld->s->microburst;
	const config_setting_t *a;
	int n;

	*c = (struct microburst_cfg){ .frame_size = 1024, .priority = 3, .max_burst = 1024, .resolution = 1, .max_trials = 12,
				      .by_loss = true, .by_ecn = true };
	if (g && (cr_known_keys(&ld->r, g, keys) || cr_opt_u32(&ld->r, g, "frame_size", 86, 4158, &c->frame_size) < 0 ||
		  cr_opt_u32(&ld->r, g, "priority", 0, 7, &c->priority) < 0 ||
		  cr_opt_u32(&ld->r, g, "min_burst", 1, 1000000, &c->min_burst) < 0 ||
		  cr_opt_u32(&ld->r, g, "max_burst", 1, 1000000, &c->max_burst) < 0 ||
		  cr_opt_u32(&ld->r, g, "resolution", 1, 1000000, &c->resolution) < 0 ||
		  cr_opt_u32(&ld->r, g, "max_trials", 1, 64, &c->max_trials) < 0 || opt_flow_names(ld, g, &c->flows) < 0))
		return -1;
	if (g && (n = suite_opt_array(&ld->r, g, "search", 1, 3, &a)) != 0) {
		if (n < 0)
			return -1;
		c->by_loss = c->by_ecn = c->by_pfc = false;
		for (int i = 0; i < n; i++) {
			int k = cr_pick(&ld->r, config_setting_get_elem(a, (unsigned)i), kinds, NULL);
			if (k < 0)
				return -1;
			*(k == 0 ? &c->by_loss : k == 1 ? &c->by_ecn : &c->by_pfc) = true;
		}
	}
	if (!c->min_burst)
		c->min_burst = ld->s->base[0] ? 1 : ld->s->lab.senders;
	if (!ld->s->base[0] && c->min_burst < ld->s->lab.senders)
		return fail_in(ld, g, "min_burst", "%u is below lab.senders %u (each sender sends at least one "
				      "frame)", c->min_burst, ld->s->lab.senders);
	if (c->min_burst >= c->max_burst)
		return fail_in(ld, g, "max_burst", "%u is not above min_burst %u", c->max_burst, c->min_burst);
	return 0;
}

static int load_hol(struct loader *ld, const config_setting_t *g)
{
	static const char *const keys[] = { "frame_size", "congested_priority", "victim_priorities", "congestors",
					    "congestor_gbps", "victim_gbps", "pfc", NULL };
	struct hol_cfg *c = &ld->s->hol;
	const config_setting_t *a;
	int n;

	*c = (struct hol_cfg){ .frame_size = 1024, .congested_priority = 3, .victim_priorities = { 3, 1 },
			       .n_victims = 2, .congestors = 1, .pfc_cases = { true, false }, .n_cases = 2 };
	if (g && (cr_known_keys(&ld->r, g, keys) || cr_opt_u32(&ld->r, g, "frame_size", 86, 4158, &c->frame_size) < 0 ||
		  cr_opt_u32(&ld->r, g, "congested_priority", 0, 7, &c->congested_priority) < 0 ||
		  suite_opt_uint_list(&ld->r, g, "victim_priorities", 0, 7, 8, c->victim_priorities, &c->n_victims) < 0 ||
		  cr_opt_u32(&ld->r, g, "congestors", 1, LAB_MAX_HOSTS - 3, &c->congestors) < 0 ||
		  cr_opt_float(&ld->r, g, "congestor_gbps", 0, true, 400, &c->congestor_gbps) < 0 ||
		  cr_opt_float(&ld->r, g, "victim_gbps", 0, true, 400, &c->victim_gbps) < 0))
		return -1;
	if (!distinct(c->victim_priorities, c->n_victims))
		return fail_in(ld, g, "victim_priorities", "has a priority twice (one victim flow per priority)");
	if (g && (n = suite_opt_array(&ld->r, g, "pfc", 1, 2, &a)) != 0) {
		if (n < 0)
			return -1;
		for (int i = 0; i < n; i++) {
			const config_setting_t *e = config_setting_get_elem(a, (unsigned)i);
			if (cr_want_type(&ld->r, e, CONFIG_TYPE_BOOL, "true (PFC on) or false"))
				return -1;
			c->pfc_cases[i] = config_setting_get_bool(e);
		}
		c->n_cases = (unsigned)n;
	}
	return 0;
}

static int load_incast(struct loader *ld, const config_setting_t *g)
{
	static const char *const keys[] = { "senders", "mtu", "rate_gbps", "transfer_kb", "rounds", "transport",
					    "priority", NULL };
	static const char *const transports[] = { "rc", "uc", NULL };
	struct incast_cfg *c = &ld->s->incast;
	const config_setting_t *s;
	int t;

	*c = (struct incast_cfg){ .senders = { 2, 4 }, .n_senders = 2, .mtu = 1024, .transfer_kb = 256, .rounds = 4,
				  .transport = "rc", .priority = 3 };
	if (!g)
		return 0;
	if (cr_known_keys(&ld->r, g, keys) ||
	    suite_opt_uint_list(&ld->r, g, "senders", 1, LAB_MAX_HOSTS - 1, SUITE_MAX_LIST, c->senders, &c->n_senders) < 0 ||
	    cr_opt_u32(&ld->r, g, "mtu", 256, 4096, &c->mtu) < 0 ||
	    cr_opt_float(&ld->r, g, "rate_gbps", 0, true, 400, &c->rate_gbps) < 0 ||
	    cr_opt_u32(&ld->r, g, "transfer_kb", 0, 1 << 20, &c->transfer_kb) < 0 ||
	    cr_opt_u32(&ld->r, g, "rounds", 1, 4096, &c->rounds) < 0 ||
	    cr_opt_u32(&ld->r, g, "priority", 0, 7, &c->priority) < 0)
		return -1;
	if (c->mtu & (c->mtu - 1))
		return cr_fail_member(&ld->r, g, "mtu", "%u is not an IB path MTU (256, 512, 1024, 2048, 4096)", c->mtu);
	if ((s = config_setting_get_member(g, "transport"))) {
		if ((t = cr_pick(&ld->r, s, transports, NULL)) < 0)
			return -1;
		snprintf(c->transport, sizeof(c->transport), "%s", transports[t]);
	}
	if (c->rate_gbps > ld->s->lab.host_gbps)
		return fail_in(ld, g, "rate_gbps", "%g is above lab.host_gbps %g", c->rate_gbps, ld->s->lab.host_gbps);
	return 0;
}

static int load_collective(struct loader *ld, const config_setting_t *g)
{
	static const char *const keys[] = { "repeat", NULL };

	ld->s->collective.repeat = 1;
	if (!g)
		return 0;
	return cr_known_keys(&ld->r, g, keys) || cr_opt_u32(&ld->r, g, "repeat", 1, 100, &ld->s->collective.repeat) < 0
		       ? -1
		       : 0;
}

/* ai_fabric = { ... } with the top-level fabric, thresholds and dut groups (ai_fabric/aif_config.c). */
static int load_ai_fabric(struct loader *ld, const config_setting_t *g)
{
	if (!(ld->s->aif = calloc(1, sizeof(*ld->s->aif))))
		return cr_fail(&ld->r, g, "out of memory");
	return aif_config_load(&ld->r, ld->root, g, ld->s->name, ld->s->aif);
}

/* The groups only the AI-fabric suite reads. */
static int ai_fabric_groups_only(struct loader *ld, const config_setting_t *root)
{
	static const char *const own[] = { "fabric", "thresholds", "dut", NULL };

	for (unsigned i = 0; own[i] && ld->s->type != SUITE_AI_FABRIC; i++) {
		const config_setting_t *x = config_setting_get_member(root, own[i]);
		if (x)
			return cr_fail(&ld->r, x, "only with suite.type ai_fabric");
	}
	return 0;
}

/* The group of the suite's type; the groups of other types are refused, so that a suite file
 * never carries settings that do nothing. */
static int load_type_group(struct loader *ld, const config_setting_t *root)
{
	static int (*const load[SUITE_TYPES])(struct loader *, const config_setting_t *) = {
		load_rfc2544, load_microburst, load_hol, load_incast, load_collective, load_ai_fabric };
	const config_setting_t *g = NULL;

	for (int t = 0; t < SUITE_TYPES; t++) {
		const config_setting_t *s = config_setting_get_member(root, suite_type_names[t]);
		if (!s)
			continue;
		if (t != (int)ld->s->type)
			return cr_fail(&ld->r, s, "not with suite.type %s (the group of the suite's own type only)",
				       suite_type_names[ld->s->type]);
		if (cr_want_type(&ld->r, s, CONFIG_TYPE_GROUP, "a group { ... }"))
			return -1;
		g = s;
	}
	return load[ld->s->type](ld, g);
}

static int load_root(void *arg, const config_setting_t *root)
{
	static const char *const keys[] = { "suite", "lab", "switch", "trial", "rfc2544", "microburst", "hol", "incast",
					    "collective", "ai_fabric", "fabric", "thresholds", "dut", NULL };
	struct loader *ld = arg;
	struct lab_cfg *l = &ld->s->lab;
	const config_setting_t *sw;

	ld->root = root;
	if (cr_known_keys(&ld->r, root, keys) || load_suite(ld, root) || load_lab(ld, root) || load_trial(ld, root) ||
	    cr_opt_group(&ld->r, root, "switch", &sw) < 0)
		return -1;
	if (!l->host_gbps)
		l->host_gbps = ld->s->type == SUITE_RFC2544 ? 2 * l->link_gbps : l->link_gbps;
	return ai_fabric_groups_only(ld, root) || load_type_group(ld, root) ? -1 : 0;
}

void text_printf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, len, fmt, ap);
	va_end(ap);
}

const char *suite_config_where(const struct suite_cfg *s, const char *setting, char *buf, size_t len)
{
	const config_setting_t *x = s->text_ok ? config_lookup(&s->text, setting) : NULL;

	return x ? cr_where(&s->src, s->file, config_setting_source_line(x), buf, len) : NULL;
}

int suite_config_load(const char *path, struct suite_cfg *s, char *err, size_t errlen)
{
	struct loader ld = { .s = s };
	struct config_reader again;
	int rc;

	memset(s, 0, sizeof(*s));
	snprintf(s->file, sizeof(s->file), "%s", path);
	config_init(&s->text);
	cr_init(&ld.r, path, err, errlen, "suite configuration");
	/* the checked reading destroys its libconfig tree; a second one, already known to parse, is
	 * kept for the switch group that goes into the trials and for the lines of messages */
	rc = cr_load_file(&ld.r, path, load_root, &ld);
	if (!rc) {
		config_destroy(&s->text);
		cr_init(&again, path, NULL, 0, "suite configuration");
		s->text_ok = cr_parse_file(&again, path, &s->text) == 0;
		s->src = again.src;
		s->sw = s->text_ok ? config_lookup(&s->text, "switch") : NULL;
		if (s->rfc2544.flows)
			s->rfc2544.flows = config_lookup(&s->text, "rfc2544.flows");
		if (s->microburst.flows)
			s->microburst.flows = config_lookup(&s->text, "microburst.flows");
		for (unsigned i = 0; s->aif && i < s->aif->conv.n_dcqcn; i++)
			s->aif->conv.dcqcn[i] = s->text_ok ? config_setting_get_elem(config_lookup(&s->text,
						"ai_fabric.convergence.dcqcn"), i) : NULL;
	}
	return rc;
}

void suite_config_free(struct suite_cfg *s)
{
	config_destroy(&s->text);
	free(s->aif);
	s->aif = NULL;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Scenario loader: libconfig text -> struct scenario, validated completely before the simulation
 * starts. Every error is one line "FILE:LINE: SETTING: what is wrong (what is allowed)", the
 * convention of engine/config.c (whose helpers this mirrors: the engine's loader is not a
 * library, and the simulator must not depend on EAL). Setting by setting: docs/ccsim.md.
 */
#include "scenario.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libconfig.h>

#define MAX_FILE_SIZE (16u << 20)
#define MAX_DURATION_US 60e6     /* 60 s of simulated time */
#define MAX_RATE_GBPS 1600.0
#define MAX_DELAY_US 1e6

struct loader {
	const char *file;
	char *err;
	size_t errlen;
	struct scenario *sc;
	/* the first integer literal libconfig 1.5 would silently wrap (see prescan()) */
	unsigned ovf_line;
	char ovf_text[48];
	int ovf_wrapped;
	int ovf_kind;                 /* 0 none, 1 decimal 32-bit, 2 hex 32-bit, 3 64-bit */
};

const char *sc_cc_name(enum sc_cc cc)
{
	return cc == CC_DCQCN ? "dcqcn" : cc == CC_TIMELY ? "timely" : "none";
}

/* ---- messages ------------------------------------------------------------------------------ */

/* libconfig's path syntax, so a message's SETTING can be pasted into config_lookup(). */
static void setting_path(const config_setting_t *s, char *buf, size_t len)
{
	const config_setting_t *parent = config_setting_parent(s);
	size_t n;

	if (!parent) {
		buf[0] = '\0';
		return;
	}
	setting_path(parent, buf, len);
	n = strlen(buf);
	if (n && n + 1 < len)
		buf[n++] = '.', buf[n] = '\0';
	if (config_setting_name(s))
		snprintf(buf + n, len - n, "%s", config_setting_name(s));
	else
		snprintf(buf + n, len - n, "[%d]", config_setting_index(s));
}

static int vfail(struct loader *ld, const config_setting_t *s, const char *member, const char *fmt, va_list ap)
{
	char path[256] = "", msg[1200];
	unsigned line = s ? config_setting_source_line(s) : 0;
	size_t n;

	if (s)
		setting_path(s, path, sizeof(path));
	n = strlen(path);
	if (member)
		snprintf(path + n, sizeof(path) - n, "%s%s", n ? "." : "", member);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(ld->err, ld->errlen, "%s:%u: %s: %s", ld->file, line ? line : 1, path[0] ? path : "(top)", msg);
	return -1;
}

static int fail(struct loader *ld, const config_setting_t *s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct loader *ld, const config_setting_t *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(ld, s, NULL, fmt, ap);
	va_end(ap);
	return -1;
}

/* An error about member `key` of group g: at the member if it is written, else at the group. */
static int fail_member(struct loader *ld, const config_setting_t *g, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail_member(struct loader *ld, const config_setting_t *g, const char *key, const char *fmt, ...)
{
	const config_setting_t *m = config_setting_get_member(g, key);
	va_list ap;

	va_start(ap, fmt);
	vfail(ld, m ? m : g, m ? NULL : key, fmt, ap);
	va_end(ap);
	return -1;
}

/* A user's string, shortened and with control characters replaced (one short error line). */
static const char *shown(const char *s, char buf[64])
{
	size_t i;

	for (i = 0; s[i] && i < 48; i++)
		buf[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
	if (s[i])
		memcpy(buf + i, "...", 4);
	else
		buf[i] = '\0';
	return buf;
}

static const char *type_name(const config_setting_t *s)
{
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_GROUP: return "a group";
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64: return "an integer";
	case CONFIG_TYPE_FLOAT: return "a float";
	case CONFIG_TYPE_STRING: return "a string";
	case CONFIG_TYPE_BOOL: return "a boolean";
	case CONFIG_TYPE_ARRAY: return "an array";
	case CONFIG_TYPE_LIST: return "a list";
	default: return "nothing";
	}
}

/* ---- typed getters -------------------------------------------------------------------------- *
 * opt_*() return 1 when the member is present and valid, 0 when absent (output untouched),
 * -1 after writing an error. */

static int want_type(struct loader *ld, const config_setting_t *s, int type, const char *what)
{
	if (config_setting_type(s) == type)
		return 0;
	return fail(ld, s, "must be %s, not %s", what, type_name(s));
}

static int int_range(struct loader *ld, const config_setting_t *s, long long lo, long long hi, long long *v)
{
	if (config_setting_type(s) == CONFIG_TYPE_INT)
		*v = config_setting_get_int(s);
	else if (config_setting_type(s) == CONFIG_TYPE_INT64)
		*v = config_setting_get_int64(s);
	else
		return fail(ld, s, "must be an integer, not %s", type_name(s));
	if (*v >= lo && *v <= hi)
		return 0;
	return fail(ld, s, "%lld is out of range (%lld..%lld)", *v, lo, hi);
}

static int opt_int(struct loader *ld, const config_setting_t *g, const char *key, long long lo, long long hi,
		   long long *v)
{
	const config_setting_t *s = config_setting_get_member(g, key);

	if (!s)
		return 0;
	return int_range(ld, s, lo, hi, v) ? -1 : 1;
}

static int opt_u32(struct loader *ld, const config_setting_t *g, const char *key, long long lo, long long hi,
		   uint32_t *out)
{
	long long v = 0;
	int rc = opt_int(ld, g, key, lo, hi, &v);

	if (rc == 1)
		*out = (uint32_t)v;
	return rc;
}

static int opt_u64(struct loader *ld, const config_setting_t *g, const char *key, long long lo, long long hi,
		   uint64_t *out)
{
	long long v = 0;
	int rc = opt_int(ld, g, key, lo, hi, &v);

	if (rc == 1)
		*out = (uint64_t)v;
	return rc;
}

/* Numbers accept integers too: "rate_gbps = 40;" means 40.0. */
static int float_value(struct loader *ld, const config_setting_t *s, double *v)
{
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		*v = (double)config_setting_get_int64(s);
		return 0;
	case CONFIG_TYPE_FLOAT:
		*v = config_setting_get_float(s);
		if (*v == *v && *v - *v == 0) /* finite, without libm */
			return 0;
		return fail(ld, s, "must be a finite number");
	default:
		return fail(ld, s, "must be a number, not %s", type_name(s));
	}
}

/* lo_open: the lower bound is exclusive (x > lo). */
static int float_range(struct loader *ld, const config_setting_t *s, double lo, bool lo_open, double hi, double *v)
{
	if (float_value(ld, s, v))
		return -1;
	if ((lo_open ? *v > lo : *v >= lo) && *v <= hi)
		return 0;
	if (lo_open)
		return fail(ld, s, "%g is out of range (> %g and <= %g)", *v, lo, hi);
	return fail(ld, s, "%g is out of range (%g..%g)", *v, lo, hi);
}

static int opt_float(struct loader *ld, const config_setting_t *g, const char *key, double lo, bool lo_open,
		     double hi, double *out)
{
	const config_setting_t *s = config_setting_get_member(g, key);

	if (!s)
		return 0;
	return float_range(ld, s, lo, lo_open, hi, out) ? -1 : 1;
}

/* Simulator units: µs -> ns and Gb/s -> kb/s, rounded to the nearest unit. */
static uint64_t us_to_ns(double us) { return (uint64_t)(us * 1000.0 + 0.5); }
static uint64_t gbps_to_kbps(double g) { return (uint64_t)(g * 1e6 + 0.5); }

static int opt_us(struct loader *ld, const config_setting_t *g, const char *key, double lo, bool lo_open, double hi,
		  uint64_t *ns)
{
	double v = 0;
	int rc = opt_float(ld, g, key, lo, lo_open, hi, &v);

	if (rc == 1)
		*ns = us_to_ns(v);
	return rc;
}

/* A rate: > 0, at most MAX_RATE_GBPS, and at least 1 kb/s once converted. */
static int opt_gbps(struct loader *ld, const config_setting_t *g, const char *key, uint64_t *kbps)
{
	double v = 0;
	int rc = opt_float(ld, g, key, 0, true, MAX_RATE_GBPS, &v);

	if (rc == 1 && gbps_to_kbps(v) == 0)
		return fail_member(ld, g, key, "%g is below the simulator's unit of 1 kb/s (1e-6 Gb/s)", v);
	if (rc == 1)
		*kbps = gbps_to_kbps(v);
	return rc;
}

static int opt_bool(struct loader *ld, const config_setting_t *g, const char *key, bool *out)
{
	const config_setting_t *s = config_setting_get_member(g, key);

	if (!s)
		return 0;
	if (want_type(ld, s, CONFIG_TYPE_BOOL, "true or false"))
		return -1;
	*out = config_setting_get_bool(s);
	return 1;
}

static int opt_name(struct loader *ld, const config_setting_t *g, const char *key, char *out, size_t len)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	const char *v;

	if (!s)
		return 0;
	if (want_type(ld, s, CONFIG_TYPE_STRING, "a string"))
		return -1;
	v = config_setting_get_string(s);
	if (!v[0] || strlen(v) >= len)
		return fail(ld, s, "must have 1..%zu characters", len - 1);
	for (const char *c = v; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.')
			return fail(ld, s, "'%s' has a character other than letters, digits, '-', '_', '.'",
				    shown(v, (char[64]){ 0 }));
	memcpy(out, v, strlen(v) + 1);
	return 1;
}

/* Index of the string value of s in the NULL-terminated names[], or -1 with an error. */
static int pick(struct loader *ld, const config_setting_t *s, const char *const names[])
{
	char allowed[200] = "", buf[64];
	const char *v;
	int i;

	if (want_type(ld, s, CONFIG_TYPE_STRING, "a string"))
		return -1;
	v = config_setting_get_string(s);
	for (i = 0; names[i]; i++) {
		if (!strcmp(v, names[i]))
			return i;
		snprintf(allowed + strlen(allowed), sizeof(allowed) - strlen(allowed), "%s%s", i ? ", " : "",
			 names[i]);
	}
	return fail(ld, s, "unknown value '%s' (allowed: %s)", shown(v, buf), allowed);
}

static const config_setting_t *required(struct loader *ld, const config_setting_t *g, const char *key,
					const char *what)
{
	const config_setting_t *s = config_setting_get_member(g, key);

	if (!s)
		fail_member(ld, g, key, "missing (required: %s)", what);
	return s;
}

/* Rejects members of g not in keys[] (NULL-terminated), so a typo never passes silently. */
static int known_keys(struct loader *ld, const config_setting_t *g, const char *const keys[])
{
	char allowed[900] = "";
	int i, k, n = config_setting_length(g);

	for (k = 0; keys[k]; k++)
		snprintf(allowed + strlen(allowed), sizeof(allowed) - strlen(allowed), "%s%s", k ? ", " : "",
			 keys[k]);
	for (i = 0; i < n; i++) {
		const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);

		for (k = 0; keys[k]; k++)
			if (!strcmp(config_setting_name(m), keys[k]))
				break;
		if (!keys[k])
			return fail(ld, m, "unknown setting '%s' (allowed: %s)", config_setting_name(m), allowed);
	}
	return 0;
}

/* A member that must be a group (or absent): 1 present, 0 absent, -1 error. */
static int opt_group(struct loader *ld, const config_setting_t *g, const char *key, const config_setting_t **out)
{
	*out = config_setting_get_member(g, key);
	if (!*out)
		return 0;
	return want_type(ld, *out, CONFIG_TYPE_GROUP, "a group { ... }") ? -1 : 1;
}

/* A member that must be a list ( {...}, ... ) of groups, with 1..max of them. */
static int group_list(struct loader *ld, const config_setting_t *s, unsigned max)
{
	int n = config_setting_length(s);

	if (config_setting_type(s) != CONFIG_TYPE_LIST)
		return fail(ld, s, "must be a list ( { ... }, ... ), not %s", type_name(s));
	if (n < 1 || (unsigned)n > max)
		return fail(ld, s, "has %d entries (allowed: 1..%u)", n, max);
	for (int i = 0; i < n; i++)
		if (want_type(ld, config_setting_get_elem(s, (unsigned)i), CONFIG_TYPE_GROUP, "a group { ... }"))
			return -1;
	return n;
}

/* An array or list of numbers: each element through float_range. Returns the count or -1. */
static int number_list(struct loader *ld, const config_setting_t *s, unsigned max)
{
	int n = config_setting_length(s);

	if (config_setting_type(s) != CONFIG_TYPE_ARRAY && config_setting_type(s) != CONFIG_TYPE_LIST)
		return fail(ld, s, "must be an array [ ... ] of numbers, not %s", type_name(s));
	if ((unsigned)n > max)
		return fail(ld, s, "has %d entries (at most %u)", n, max);
	return n;
}

/* A list of priorities/classes [p, ...] -> bit mask. */
static int class_mask(struct loader *ld, const config_setting_t *s, uint8_t *mask)
{
	int n = number_list(ld, s, 64);
	long long v = 0;

	if (n < 0)
		return -1;
	if (n == 0)
		return fail(ld, s, "is empty (allowed: 0..7, at least one)");
	*mask = 0;
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

		if (int_range(ld, e, 0, SC_CLASSES - 1, &v))
			return -1;
		*mask |= (uint8_t)(1u << v);
	}
	return 0;
}

/* ---- cc parameter groups: any field name of struct dcqcn_params / timely_params --------------- */

enum ptype { P_U32, P_U64, P_BOOL, P_DBL };

struct pdesc {
	const char *name;
	enum ptype type;
	size_t off;
	int profile;                  /* DCQCN_NVIDIA, DCQCN_PAPER, or -1: any */
};

#define DQ(n, t, prof) { #n, t, offsetof(struct dcqcn_params, n), prof }
static const struct pdesc dcqcn_desc[] = {
	DQ(dce_tcp_g, P_U32, DCQCN_NVIDIA), DQ(dce_tcp_rtt, P_U32, DCQCN_NVIDIA),
	DQ(initial_alpha_value, P_U32, DCQCN_NVIDIA), DQ(rate_to_set_on_first_cnp, P_U32, DCQCN_NVIDIA),
	DQ(rpg_min_dec_fac, P_U32, DCQCN_NVIDIA), DQ(rpg_min_rate, P_U32, DCQCN_NVIDIA),
	DQ(rpg_gd, P_U32, DCQCN_NVIDIA), DQ(rate_reduce_monitor_period, P_U32, DCQCN_NVIDIA),
	DQ(clamp_tgt_rate, P_BOOL, DCQCN_NVIDIA), DQ(clamp_tgt_rate_after_time_inc, P_BOOL, DCQCN_NVIDIA),
	DQ(rpg_time_reset, P_U32, DCQCN_NVIDIA), DQ(rpg_byte_reset, P_U32, DCQCN_NVIDIA),
	DQ(rpg_threshold, P_U32, DCQCN_NVIDIA), DQ(rpg_max_rate, P_U32, DCQCN_NVIDIA),
	DQ(rpg_ai_rate, P_U32, DCQCN_NVIDIA), DQ(rpg_hai_rate, P_U32, DCQCN_NVIDIA),
	DQ(g, P_DBL, DCQCN_PAPER), DQ(k_us, P_U32, DCQCN_PAPER), DQ(t_us, P_U32, DCQCN_PAPER),
	DQ(b_bytes, P_U64, DCQCN_PAPER), DQ(f, P_U32, DCQCN_PAPER), DQ(r_ai_mbps, P_U32, DCQCN_PAPER),
	DQ(r_hai_mbps, P_U32, DCQCN_PAPER), DQ(min_rate_mbps, P_U32, DCQCN_PAPER),
	DQ(initial_alpha, P_DBL, DCQCN_PAPER), DQ(alpha_before_cut, P_BOOL, DCQCN_PAPER),
	DQ(hyper_linear, P_BOOL, DCQCN_PAPER),
	{ NULL, P_U32, 0, -1 },
};
#undef DQ

#define TQ(n, t) { #n, t, offsetof(struct timely_params, n), -1 }
static const struct pdesc timely_desc[] = {
	TQ(alpha, P_DBL), TQ(beta, P_DBL), TQ(t_low_us, P_U32), TQ(t_high_us, P_U32), TQ(min_rtt_us, P_U32),
	TQ(delta_mbps, P_U32), TQ(hai_after, P_U32), TQ(hai_n, P_U32), TQ(min_rate_mbps, P_U32),
	TQ(max_rate_mbps, P_U32),
	{ NULL, P_U32, 0, -1 },
};
#undef TQ

static const struct pdesc *find_desc(const struct pdesc *d, const char *name)
{
	for (; d->name; d++)
		if (!strcmp(d->name, name))
			return d;
	return NULL;
}

/* Range checks here are only the C types'; the cc library's *_params_check() says the rest. */
static int set_param(struct loader *ld, const config_setting_t *s, const struct pdesc *d, void *params)
{
	char *field = (char *)params + d->off;
	long long v = 0;
	double f = 0;

	switch (d->type) {
	case P_U32:
		if (int_range(ld, s, 0, UINT32_MAX, &v))
			return -1;
		*(uint32_t *)(void *)field = (uint32_t)v;
		return 0;
	case P_U64:
		if (int_range(ld, s, 0, LLONG_MAX, &v))
			return -1;
		*(uint64_t *)(void *)field = (uint64_t)v;
		return 0;
	case P_BOOL:
		if (want_type(ld, s, CONFIG_TYPE_BOOL, "true or false"))
			return -1;
		*(bool *)(void *)field = config_setting_get_bool(s);
		return 0;
	case P_DBL:
		if (float_value(ld, s, &f))
			return -1;
		*(double *)(void *)field = f;
		return 0;
	}
	return -1;
}

static void desc_names(const struct pdesc *d, int profile, const char *const extra[], char *buf, size_t len)
{
	buf[0] = '\0';
	for (unsigned i = 0; extra && extra[i]; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? ", " : "", extra[i]);
	for (; d->name; d++)
		if (d->profile < 0 || d->profile == profile)
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? ", " : "", d->name);
}

static const char *profile_name(int profile)
{
	return profile == DCQCN_NVIDIA ? "nvidia" : "paper";
}

/* Every member of g is either one of extra[] (the caller reads those) or a field in desc. */
static int set_params(struct loader *ld, const config_setting_t *g, const struct pdesc *desc, int profile,
		      const char *const extra[], void *params)
{
	int n = config_setting_length(g);

	for (int i = 0; i < n; i++) {
		const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
		const char *name = config_setting_name(m);
		const struct pdesc *d = find_desc(desc, name);
		bool is_extra = false;
		char allowed[900];

		for (unsigned k = 0; extra && extra[k]; k++)
			is_extra |= !strcmp(extra[k], name);
		if (is_extra)
			continue;
		if (!d) {
			desc_names(desc, profile, extra, allowed, sizeof(allowed));
			return fail(ld, m, "unknown setting '%s' (allowed: %s)", name, allowed);
		}
		if (d->profile >= 0 && d->profile != profile)
			return fail(ld, m, "is a parameter of profile \"%s\" (this group's profile is \"%s\")",
				    profile_name(d->profile), profile_name(profile));
		if (set_param(ld, m, d, params))
			return -1;
	}
	return 0;
}

/* g may be NULL (all defaults). */
static int parse_dcqcn(struct loader *ld, const config_setting_t *g, struct dcqcn_params *p)
{
	static const char *const profiles[] = { "nvidia", "paper", NULL };
	static const char *const extra[] = { "profile", NULL };
	const config_setting_t *s = g ? config_setting_get_member(g, "profile") : NULL;
	int profile = DCQCN_NVIDIA;
	const char *bad, *why = "";

	if (s && (profile = pick(ld, s, profiles)) < 0)
		return -1;
	dcqcn_params_default(p, (enum dcqcn_profile)profile);
	if (!g)
		return 0;
	if (set_params(ld, g, dcqcn_desc, profile, extra, p))
		return -1;
	bad = dcqcn_params_check(p, &why);
	if (bad)
		return fail_member(ld, g, bad, "%s", why ? why : "invalid");
	return 0;
}

static int parse_timely(struct loader *ld, const config_setting_t *g, struct sc_flow *f)
{
	static const char *const extra[] = { "start_gbps", "segment_bytes", NULL };
	const char *bad, *why = "";

	timely_params_default(&f->timely);
	f->timely_start_kbps = f->line_kbps;
	f->timely_segment_bytes = 16384;
	if (!g)
		return 0;
	if (set_params(ld, g, timely_desc, -1, extra, &f->timely))
		return -1;
	if (opt_gbps(ld, g, "start_gbps", &f->timely_start_kbps) < 0 ||
	    opt_u32(ld, g, "segment_bytes", 1, 1LL << 30, &f->timely_segment_bytes) < 0)
		return -1;
	if (f->timely_start_kbps > f->line_kbps)
		return fail_member(ld, g, "start_gbps", "is above the flow's rate_gbps (allowed: up to %g)",
				   (double)f->line_kbps / 1e6);
	bad = timely_params_check(&f->timely, &why);
	if (bad)
		return fail_member(ld, g, bad, "%s", why ? why : "invalid");
	return 0;
}

/* ---- top level: times --------------------------------------------------------------------------- */

static int parse_times(struct loader *ld, const config_setting_t *root)
{
	struct scenario *sc = ld->sc;
	const config_setting_t *w;
	double a = 0, b = 0;

	if (!required(ld, root, "duration_us", "simulated time, µs") ||
	    opt_us(ld, root, "duration_us", 0, true, MAX_DURATION_US, &sc->duration_ns) < 0)
		return -1;
	if (sc->duration_ns == 0)
		return fail_member(ld, root, "duration_us", "rounds to 0 ns (allowed: at least 0.001)");
	sc->sample_ns = 10000;
	if (opt_us(ld, root, "sample_us", 0, true, MAX_DURATION_US, &sc->sample_ns) < 0)
		return -1;
	if (sc->sample_ns == 0 || sc->sample_ns > sc->duration_ns)
		return fail_member(ld, root, "sample_us", "must be 0.001 .. duration_us (%g)",
				   (double)sc->duration_ns / 1000);
	sc->win_start_ns = sc->duration_ns / 2;
	sc->win_end_ns = sc->duration_ns;
	w = config_setting_get_member(root, "window_us");
	if (!w)
		return 0;
	if (number_list(ld, w, 2) < 0)
		return -1;
	if (config_setting_length(w) != 2)
		return fail(ld, w, "must be [start, end] (two numbers, µs)");
	if (float_range(ld, config_setting_get_elem(w, 0), 0, false, MAX_DURATION_US, &a) ||
	    float_range(ld, config_setting_get_elem(w, 1), 0, false, MAX_DURATION_US, &b))
		return -1;
	if (!(a < b) || us_to_ns(b) > sc->duration_ns || us_to_ns(a) == us_to_ns(b))
		return fail(ld, w, "[%g, %g] is not a window (allowed: 0 <= start < end <= duration_us = %g)", a, b,
			    (double)sc->duration_ns / 1000);
	sc->win_start_ns = us_to_ns(a);
	sc->win_end_ns = us_to_ns(b);
	return 0;
}

/* ---- switch ------------------------------------------------------------------------------------- */

static int parse_pfc(struct loader *ld, const config_setting_t *g)
{
	static const char *const keys[] = { "enabled", "priorities", "xoff_bytes", "xon_bytes", NULL };
	struct sc_switch *sw = &ld->sc->sw;
	const config_setting_t *p;

	sw->pfc = true;
	sw->pfc_prio_mask = 0xFF;
	if (known_keys(ld, g, keys) || opt_bool(ld, g, "enabled", &sw->pfc) < 0)
		return -1;
	if (!sw->pfc)
		return 0;
	p = config_setting_get_member(g, "priorities");
	if (p && class_mask(ld, p, &sw->pfc_prio_mask))
		return -1;
	if (!required(ld, g, "xoff_bytes", "bytes of an ingress port's priority that send XOFF") ||
	    !required(ld, g, "xon_bytes", "bytes at or below which XON is sent") ||
	    opt_u64(ld, g, "xoff_bytes", 1, LLONG_MAX, &sw->xoff_bytes) < 0 ||
	    opt_u64(ld, g, "xon_bytes", 0, LLONG_MAX, &sw->xon_bytes) < 0)
		return -1;
	if (sw->xon_bytes > sw->xoff_bytes)
		return fail_member(ld, g, "xon_bytes", "%llu is above xoff_bytes (allowed: 0..%llu)",
				   (unsigned long long)sw->xon_bytes, (unsigned long long)sw->xoff_bytes);
	return 0;
}

/* One ECN group: { classes = [...]; kmin_bytes; kmax_bytes; pmax }. */
static int parse_ecn_group(struct loader *ld, const config_setting_t *g)
{
	static const char *const keys[] = { "classes", "kmin_bytes", "kmax_bytes", "pmax", NULL };
	struct sc_switch *sw = &ld->sc->sw;
	struct red_params r = { 0 };
	const config_setting_t *c = config_setting_get_member(g, "classes");
	uint8_t mask = 0xFF;
	double pmax = 0;

	if (known_keys(ld, g, keys) || (c && class_mask(ld, c, &mask)))
		return -1;
	if (!required(ld, g, "kmin_bytes", "bytes, no marking at or below") ||
	    !required(ld, g, "kmax_bytes", "bytes, marking with probability pmax there, always above") ||
	    !required(ld, g, "pmax", "marking probability at kmax_bytes, 0 < pmax <= 1") ||
	    opt_u64(ld, g, "kmin_bytes", 0, LLONG_MAX, &r.kmin_bytes) < 0 ||
	    opt_u64(ld, g, "kmax_bytes", 0, LLONG_MAX, &r.kmax_bytes) < 0 ||
	    opt_float(ld, g, "pmax", 0, true, 1, &pmax) < 0)
		return -1;
	if (r.kmax_bytes < r.kmin_bytes)
		return fail_member(ld, g, "kmax_bytes", "%llu is below kmin_bytes (allowed: >= %llu)",
				   (unsigned long long)r.kmax_bytes, (unsigned long long)r.kmin_bytes);
	r.pmax_q16 = (uint32_t)(pmax * 65536 + 0.5);
	for (unsigned k = 0; k < SC_CLASSES; k++) {
		if (!(mask & (1u << k)))
			continue;
		if (sw->ecn[k])
			return fail(ld, c ? c : g, "class %u already has ECN settings (each class in one group)", k);
		sw->ecn[k] = true;
		sw->red[k] = r;
	}
	return 0;
}

/* switch.ecn: one group (for its classes) or a list of groups. */
static int parse_ecn(struct loader *ld, const config_setting_t *e)
{
	int n;

	if (config_setting_type(e) == CONFIG_TYPE_GROUP)
		return parse_ecn_group(ld, e);
	if ((n = group_list(ld, e, SC_CLASSES)) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (parse_ecn_group(ld, config_setting_get_elem(e, (unsigned)i)))
			return -1;
	return 0;
}

static int parse_switch(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "buffer_bytes", "pfc", "ecn", NULL };
	struct sc_switch *sw = &ld->sc->sw;
	const config_setting_t *g, *p, *e;
	int rc;

	sw->buffer_bytes = 12000000;
	if ((rc = opt_group(ld, root, "switch", &g)) <= 0)
		return rc;
	if (known_keys(ld, g, keys) || opt_u64(ld, g, "buffer_bytes", 0, LLONG_MAX, &sw->buffer_bytes) < 0)
		return -1;
	if ((rc = opt_group(ld, g, "pfc", &p)) < 0 || (rc == 1 && parse_pfc(ld, p)))
		return -1;
	e = config_setting_get_member(g, "ecn");
	if (e && parse_ecn(ld, e))
		return -1;
	return 0;
}

/* ---- receivers ---------------------------------------------------------------------------------- */

static int parse_receiver(struct loader *ld, const config_setting_t *g, unsigned idx)
{
	static const char *const keys[] = { "name", "rate_gbps", "delay_us", "np", NULL };
	static const char *const np_keys[] = { "min_time_between_cnps", NULL };
	struct sc_receiver *r = &ld->sc->rx[idx];
	const config_setting_t *np;
	int rc;

	snprintf(r->name, sizeof(r->name), "r%u", idx);
	r->delay_ns = 1000;
	np_params_default(&r->np);
	if (known_keys(ld, g, keys) || opt_name(ld, g, "name", r->name, sizeof(r->name)) < 0 ||
	    !required(ld, g, "rate_gbps", "the switch port's rate toward this receiver, Gb/s") ||
	    opt_gbps(ld, g, "rate_gbps", &r->rate_kbps) < 0 ||
	    opt_us(ld, g, "delay_us", 0, false, MAX_DELAY_US, &r->delay_ns) < 0)
		return -1;
	for (unsigned i = 0; i < idx; i++)
		if (!strcmp(ld->sc->rx[i].name, r->name))
			return fail_member(ld, g, "name", "'%s' is the name of receivers.[%u] too", r->name, i);
	if ((rc = opt_group(ld, g, "np", &np)) <= 0)
		return rc;
	if (known_keys(ld, np, np_keys) ||
	    opt_u32(ld, np, "min_time_between_cnps", 0, 1000000, &r->np.min_time_between_cnps) < 0)
		return -1;
	return 0;
}

static int parse_receivers(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *l = required(ld, root, "receivers", "a list of receivers ( { rate_gbps = ...; } )");
	int n;

	if (!l || (n = group_list(ld, l, SC_MAX_RECEIVERS)) < 0)
		return -1;
	ld->sc->rx = calloc((size_t)n, sizeof(*ld->sc->rx));
	if (!ld->sc->rx)
		return fail(ld, l, "out of memory");
	ld->sc->n_rx = (unsigned)n;
	for (int i = 0; i < n; i++)
		if (parse_receiver(ld, config_setting_get_elem(l, (unsigned)i), (unsigned)i))
			return -1;
	return 0;
}

/* ---- flows -------------------------------------------------------------------------------------- */

static int flow_receiver(struct loader *ld, const config_setting_t *g, unsigned *out)
{
	const config_setting_t *s = config_setting_get_member(g, "receiver");
	const struct scenario *sc = ld->sc;
	long long v = 0;
	char buf[64];

	*out = 0;
	if (!s)
		return 0;
	if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		for (unsigned i = 0; i < sc->n_rx; i++)
			if (!strcmp(sc->rx[i].name, config_setting_get_string(s))) {
				*out = i;
				return 0;
			}
		return fail(ld, s, "no receiver is named '%s' (receivers[].name)",
			    shown(config_setting_get_string(s), buf));
	}
	if (int_range(ld, s, 0, sc->n_rx - 1, &v))
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* The settings shared by the `count` copies of a flow entry. */
static int flow_common(struct loader *ld, const config_setting_t *g, struct sc_flow *f)
{
	static const char *const ccs[] = { "none", "dcqcn", "timely", NULL };
	static const enum sc_cc cc_of[] = { CC_NONE, CC_DCQCN, CC_TIMELY };
	const config_setting_t *s = config_setting_get_member(g, "cc"), *dq, *tm;
	int k;

	f->cc = CC_DCQCN;
	if (s) {
		if ((k = pick(ld, s, ccs)) < 0)
			return -1;
		f->cc = cc_of[k];
	}
	f->priority = 3;
	f->mtu_bytes = 1024;
	f->delay_ns = 1000;
	if (flow_receiver(ld, g, &f->receiver) || opt_u32(ld, g, "priority", 0, SC_CLASSES - 1, &f->priority) < 0 ||
	    opt_u32(ld, g, "mtu_bytes", 64, 65535, &f->mtu_bytes) < 0)
		return -1;
	if (!required(ld, g, "rate_gbps", "the sender's line rate, Gb/s") || opt_gbps(ld, g, "rate_gbps", &f->line_kbps) < 0 ||
	    opt_us(ld, g, "delay_us", 0, false, MAX_DELAY_US, &f->delay_ns) < 0 ||
	    opt_us(ld, g, "jitter_us", 0, false, 1000, &f->jitter_ns) < 0 ||
	    opt_u64(ld, g, "size_bytes", 0, LLONG_MAX, &f->size_bytes) < 0 ||
	    opt_group(ld, g, "dcqcn", &dq) < 0 || opt_group(ld, g, "timely", &tm) < 0)
		return -1;
	if (dq && f->cc != CC_DCQCN)
		return fail(ld, dq, "only with cc = \"dcqcn\" (this flow's cc is \"%s\")", sc_cc_name(f->cc));
	if (tm && f->cc != CC_TIMELY)
		return fail(ld, tm, "only with cc = \"timely\" (this flow's cc is \"%s\")", sc_cc_name(f->cc));
	if (parse_dcqcn(ld, dq, &f->dcqcn) || (f->cc == CC_TIMELY && parse_timely(ld, tm, f)))
		return -1;
	return 0;
}

static bool flow_name_taken(const struct scenario *sc, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(sc->flows[i].name, name))
			return true;
	return false;
}

/* One entry of flows: `count` flows, each from its own sender; names get the copy's index. */
static int parse_flow_entry(struct loader *ld, const config_setting_t *g, unsigned *n_flows)
{
	static const char *const keys[] = { "name", "count", "cc", "receiver", "priority", "rate_gbps", "mtu_bytes",
					    "start_us", "start_step_us", "size_bytes", "delay_us", "jitter_us", "dcqcn",
					    "timely", NULL };
	struct scenario *sc = ld->sc;
	struct sc_flow f = { 0 };
	uint64_t count = 1, start = 0, step = 0;
	char base[SC_NAME_LEN] = "";

	if (known_keys(ld, g, keys) || opt_name(ld, g, "name", base, sizeof(base) - 6) < 0 ||
	    opt_u64(ld, g, "count", 1, SC_MAX_FLOWS, &count) < 0 ||
	    opt_us(ld, g, "start_us", 0, false, MAX_DURATION_US, &start) < 0 ||
	    opt_us(ld, g, "start_step_us", 0, false, MAX_DURATION_US, &step) < 0 || flow_common(ld, g, &f))
		return -1;
	if (*n_flows + count > SC_MAX_FLOWS)
		return fail_member(ld, g, "count", "makes more than %u flows in all", SC_MAX_FLOWS);
	for (uint64_t k = 0; k < count; k++) {
		struct sc_flow *d = &sc->flows[*n_flows];

		*d = f;
		if (!base[0])
			snprintf(d->name, sizeof(d->name), "f%u", *n_flows);
		else if (count == 1)
			snprintf(d->name, sizeof(d->name), "%s", base);
		else
			snprintf(d->name, sizeof(d->name), "%s%u", base, (unsigned)k);
		if (flow_name_taken(sc, *n_flows, d->name))
			return fail_member(ld, g, "name", "'%s' names another flow too", d->name);
		d->start_ns = start + k * step;
		(*n_flows)++;
	}
	return 0;
}

static int parse_flows(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *l = required(ld, root, "flows", "a list of flows ( { rate_gbps = ...; } )");
	unsigned total = 0;
	int n;

	if (!l || (n = group_list(ld, l, SC_MAX_FLOWS)) < 0)
		return -1;
	ld->sc->flows = calloc(SC_MAX_FLOWS, sizeof(*ld->sc->flows));
	if (!ld->sc->flows)
		return fail(ld, l, "out of memory");
	for (int i = 0; i < n; i++)
		if (parse_flow_entry(ld, config_setting_get_elem(l, (unsigned)i), &total))
			return -1;
	ld->sc->n_flows = total;
	for (unsigned i = 0; i < total; i++)
		if (ld->sc->flows[i].start_ns >= ld->sc->duration_ns)
			return fail(ld, l, "flow %s starts at %g µs, not before duration_us (%g)", ld->sc->flows[i].name,
				    (double)ld->sc->flows[i].start_ns / 1000, (double)ld->sc->duration_ns / 1000);
	return 0;
}

/* ---- rp_replay ---------------------------------------------------------------------------------- */

static int parse_cnp_times(struct loader *ld, const config_setting_t *rp)
{
	struct sc_replay *r = &ld->sc->rp;
	const config_setting_t *l = config_setting_get_member(rp, "cnp_times_us");
	int n;
	double v = 0;

	if (!l)
		return 0;
	if ((n = number_list(ld, l, SC_MAX_CNP_TIMES)) < 0)
		return -1;
	r->cnp_ns = calloc((size_t)n + 1, sizeof(*r->cnp_ns));
	if (!r->cnp_ns)
		return fail(ld, l, "out of memory");
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(l, (unsigned)i);

		if (float_range(ld, e, 0, false, (double)ld->sc->duration_ns / 1000, &v))
			return -1;
		r->cnp_ns[i] = us_to_ns(v);
		if (i && r->cnp_ns[i] < r->cnp_ns[i - 1])
			return fail(ld, e, "%g comes before the time listed ahead of it (allowed: ascending times)", v);
	}
	r->n_cnp = (unsigned)n;
	return 0;
}

static int parse_rp(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "rate_gbps", "cnp_times_us", "send_gbps", "mtu_bytes", "dcqcn", NULL };
	struct sc_replay *r = &ld->sc->rp;
	const config_setting_t *g = required(ld, root, "rp", "the reaction point { rate_gbps = ...; ... }"), *dq;
	double send = 0;

	r->packet_bytes = 1024;
	if (!g || want_type(ld, g, CONFIG_TYPE_GROUP, "a group { ... }") || known_keys(ld, g, keys) ||
	    !required(ld, g, "rate_gbps", "the QP's line rate, Gb/s") || opt_gbps(ld, g, "rate_gbps", &r->line_kbps) < 0 ||
	    opt_float(ld, g, "send_gbps", 0, false, MAX_RATE_GBPS, &send) < 0 ||
	    opt_u32(ld, g, "mtu_bytes", 64, 65535, &r->packet_bytes) < 0 || parse_cnp_times(ld, g) ||
	    opt_group(ld, g, "dcqcn", &dq) < 0 || parse_dcqcn(ld, dq, &r->dcqcn))
		return -1;
	r->send_kbps = gbps_to_kbps(send);
	return 0;
}

/* ---- what libconfig 1.5 would let pass silently ------------------------------------------------ *
 * libconfig 1.5 stores an integer literal that does not fit 32 bits (without the L suffix) as its
 * low 32 bits, silently: "size_bytes = 10000000000;" would become 1410065408. The text is scanned
 * first for such literals (as engine/config.c does), and for strings and comments left open. */

static void note_overflow(struct loader *ld, unsigned line, const char *start, const char *end, int kind, int wrapped)
{
	size_t n = (size_t)(end - start);

	if (ld->ovf_kind)
		return;
	if (n >= sizeof(ld->ovf_text))
		n = sizeof(ld->ovf_text) - 1;
	memcpy(ld->ovf_text, start, n);
	ld->ovf_text[n] = '\0';
	ld->ovf_line = line;
	ld->ovf_kind = kind;
	ld->ovf_wrapped = wrapped;
}

static void scan_hex(struct loader *ld, const char *start, const char **pp, unsigned line)
{
	const char *p = *pp + 2, *h;
	bool l64;

	while (*p == '0')
		p++;
	h = p;
	while (isxdigit((unsigned char)*p))
		p++;
	l64 = *p == 'L';
	if ((size_t)(p - h) > (l64 ? 16u : 8u))
		note_overflow(ld, line, start, p, l64 ? 3 : 2, (int)strtoul(start, NULL, 16));
	while (*p == 'L')
		p++;
	*pp = p;
}

/* One number token at *pp (sign included); advances past it. */
static void scan_number(struct loader *ld, const char **pp, unsigned line)
{
	const char *start = *pp, *p = *pp;
	char tmp[64];
	long long v = 0;

	if (*p == '+' || *p == '-')
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		scan_hex(ld, start, &p, line);
		*pp = p;
		return;
	}
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.' || *p == 'e' || *p == 'E') { /* a float: libconfig handles those */
		while (isdigit((unsigned char)*p) || *p == '.' || *p == 'e' || *p == 'E' ||
		       ((*p == '+' || *p == '-') && (p[-1] == 'e' || p[-1] == 'E')))
			p++;
		*pp = p;
		return;
	}
	snprintf(tmp, sizeof(tmp), "%.*s", (int)(p - start), start);
	errno = 0;
	v = strtoll(tmp, NULL, 10);
	if (*p == 'L') {
		if (errno == ERANGE)
			note_overflow(ld, line, start, p, 3, 0);
		while (*p == 'L')
			p++;
	} else if (errno == ERANGE || v < INT_MIN || v > INT_MAX) {
		note_overflow(ld, line, start, p, 1, (int)v);
	}
	*pp = p;
}

static int unterminated(struct loader *ld, unsigned line, const char *what)
{
	snprintf(ld->err, ld->errlen, "%s:%u: syntax error: unterminated %s", ld->file, line, what);
	return -1;
}

/* Skips a comment or string at *pp (advancing line); 1 when one was skipped, -1 unterminated. */
static int skip_comment_or_string(struct loader *ld, const char **pp, unsigned *line)
{
	const char *p = *pp;
	unsigned start = *line;

	if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
		while (*p && *p != '\n')
			p++;
	} else if (p[0] == '/' && p[1] == '*') {
		for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
			*line += *p == '\n';
		if (!*p)
			return unterminated(ld, start, "comment /* without */");
		p += 2;
	} else if (*p == '"') {
		for (p++; *p && *p != '"'; p++) {
			*line += *p == '\n';
			if (*p == '\\' && p[1])
				p++;
		}
		if (!*p)
			return unterminated(ld, start, "string (no closing \")");
		p++;
	} else {
		return 0;
	}
	*pp = p;
	return 1;
}

static int prescan(struct loader *ld, const char *p)
{
	unsigned line = 1;
	int rc;

	while (*p) {
		if ((rc = skip_comment_or_string(ld, &p, &line)) < 0)
			return -1;
		if (rc)
			continue;
		if (*p == '\n') {
			line++, p++;
		} else if (*p == '@' && !strncmp(p, "@include", 8)) {
			snprintf(ld->err, ld->errlen, "%s:%u: @include: not supported (one file holds the whole "
				 "scenario)", ld->file, line);
			return -1;
		} else if (isalpha((unsigned char)*p) || *p == '*' || *p == '_') {
			while (isalnum((unsigned char)*p) || *p == '*' || *p == '_' || *p == '-')
				p++;
		} else if (isdigit((unsigned char)*p) || ((*p == '+' || *p == '-') && isdigit((unsigned char)p[1]))) {
			scan_number(ld, &p, line);
		} else {
			p++;
		}
	}
	return 0;
}

/* The setting that holds the overflowing literal: an integer on its line with the wrapped value. */
static const config_setting_t *find_int_at(const config_setting_t *s, unsigned line, int kind, int wrapped)
{
	int n;

	if (config_setting_source_line(s) == line &&
	    ((config_setting_type(s) == CONFIG_TYPE_INT && kind != 3 && config_setting_get_int(s) == wrapped) ||
	     (config_setting_type(s) == CONFIG_TYPE_INT64 && kind == 3)))
		return s;
	if (!config_setting_is_aggregate(s))
		return NULL;
	n = config_setting_length(s);
	for (int i = 0; i < n; i++) {
		const config_setting_t *f = find_int_at(config_setting_get_elem(s, (unsigned)i), line, kind, wrapped);

		if (f)
			return f;
	}
	return NULL;
}

static int report_overflow(struct loader *ld, const config_setting_t *root)
{
	static const char *const why[] = { "", "does not fit a 32-bit integer (write it with an L suffix for "
					   "64 bits)", "does not fit 32 bits (hex is 32-bit unless written with an L "
					   "suffix)", "does not fit a 64-bit integer" };
	const config_setting_t *s = find_int_at(root, ld->ovf_line, ld->ovf_kind, ld->ovf_wrapped);

	if (s)
		return fail(ld, s, "%s %s", ld->ovf_text, why[ld->ovf_kind]);
	snprintf(ld->err, ld->errlen, "%s:%u: %s %s", ld->file, ld->ovf_line, ld->ovf_text, why[ld->ovf_kind]);
	return -1;
}

/* ---- entry points --------------------------------------------------------------------------- */

static int parse_kind(struct loader *ld, const config_setting_t *root)
{
	static const char *const types[] = { "network", "rp_replay", NULL };
	static const char *const net_keys[] = { "scenario", "seed", "duration_us", "sample_us", "window_us",
						"switch", "receivers", "flows", NULL };
	static const char *const rp_keys[] = { "scenario", "seed", "duration_us", "rp", NULL };
	const config_setting_t *s = config_setting_get_member(root, "scenario");
	int t = SC_NETWORK;
	long long seed = 0;

	if (s && (t = pick(ld, s, types)) < 0)
		return -1;
	ld->sc->type = (enum sc_type)t;
	if (known_keys(ld, root, t == SC_NETWORK ? net_keys : rp_keys))
		return -1;
	ld->sc->seed = 1;
	if (opt_int(ld, root, "seed", 0, LLONG_MAX, &seed) < 0)
		return -1;
	if (config_setting_get_member(root, "seed"))
		ld->sc->seed = (uint64_t)seed;
	return 0;
}

static int load_root(struct loader *ld, const config_setting_t *root)
{
	if (ld->ovf_kind)
		return report_overflow(ld, root);
	if (parse_kind(ld, root) || parse_times(ld, root))
		return -1;
	if (ld->sc->type == SC_RP_REPLAY)
		return parse_rp(ld, root);
	return parse_switch(ld, root) || parse_receivers(ld, root) || parse_flows(ld, root) ? -1 : 0;
}

void scenario_free(struct scenario *sc)
{
	free(sc->rx);
	free(sc->flows);
	free(sc->rp.cnp_ns);
	memset(sc, 0, sizeof(*sc));
}

int scenario_load_string(const char *text, const char *name, struct scenario *sc, char *err, size_t errlen)
{
	char dummy[1];
	struct loader ld = { .file = name ? name : "(string)", .err = err && errlen ? err : dummy,
			     .errlen = err && errlen ? errlen : sizeof(dummy), .sc = sc };
	config_t lc;
	int rc;

	memset(sc, 0, sizeof(*sc));
	ld.err[0] = '\0';
	snprintf(sc->file, sizeof(sc->file), "%s", ld.file);
	if (prescan(&ld, text))
		return -1;
	config_init(&lc);
	if (!config_read_string(&lc, text)) {
		snprintf(ld.err, ld.errlen, "%s:%d: syntax error: %s", ld.file, config_error_line(&lc),
			 config_error_text(&lc) ? config_error_text(&lc) : "unreadable");
		rc = -1;
	} else {
		rc = load_root(&ld, config_root_setting(&lc));
	}
	config_destroy(&lc);
	if (rc)
		scenario_free(sc);
	snprintf(sc->file, sizeof(sc->file), "%s", ld.file);
	return rc;
}

/* Read here rather than by libconfig, so a missing file gets strerror's words and prescan() has
 * the text. */
int scenario_load(const char *path, struct scenario *sc, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t n = 0;
	int rc, e;

	if (f) {
		text = malloc(MAX_FILE_SIZE + 1);
		n = text ? fread(text, 1, MAX_FILE_SIZE + 1, f) : 0;
	}
	e = !f ? errno : !text ? ENOMEM : ferror(f) ? (errno ? errno : EIO) : n > MAX_FILE_SIZE ? EFBIG : 0;
	if (f)
		fclose(f);
	if (e) {
		free(text);
		memset(sc, 0, sizeof(*sc));
		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(e));
		return -1;
	}
	text[n] = '\0';
	rc = scenario_load_string(text, path, sc, err, errlen);
	free(text);
	return rc;
}

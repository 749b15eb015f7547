/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Reading libconfig text: messages, typed getters and the libconfig 1.5 prescan shared by the
 * engine's configuration loader and roce-ccsim's scenario loader (see config_read.h).
 */
#include "config_read.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE_SIZE (16u << 20)

void cr_init(struct config_reader *r, const char *name, char *err, size_t errlen, const char *what)
{
	memset(r, 0, sizeof(*r));
	r->file = name ? name : "(string)";
	r->what = what;
	r->err = err && errlen ? err : r->no_err;
	r->errlen = err && errlen ? errlen : sizeof(r->no_err);
	r->err[0] = '\0';
}

/* ---- messages ------------------------------------------------------------------------------ */

/* libconfig's own path syntax, so a message's SETTING can be pasted into config_lookup(). */
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

/* Writes the one error line. `s` is the setting at fault, or the group that lacks `member`.
 * msg has room for cr_known_keys()'s longest list of allowed names. */
static int vfail(struct config_reader *r, const config_setting_t *s, const char *member, const char *fmt,
		 va_list ap)
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
	snprintf(r->err, r->errlen, "%s:%u: %s: %s", r->file, line ? line : 1, path[0] ? path : "(top)", msg);
	return -1;
}

int cr_fail(struct config_reader *r, const config_setting_t *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(r, s, NULL, fmt, ap);
	va_end(ap);
	return -1;
}

int cr_fail_member(struct config_reader *r, const config_setting_t *g, const char *key, const char *fmt, ...)
{
	const config_setting_t *m = config_setting_get_member(g, key);
	va_list ap;

	va_start(ap, fmt);
	vfail(r, m ? m : g, m ? NULL : key, fmt, ap);
	va_end(ap);
	return -1;
}

const char *cr_shown(const char *s, char buf[64])
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

const char *cr_type_name(const config_setting_t *s)
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

/* ---- typed getters -------------------------------------------------------------------------- */

int cr_want_type(struct config_reader *r, const config_setting_t *s, int type, const char *what)
{
	if (config_setting_type(s) == type)
		return 0;
	return cr_fail(r, s, "must be %s, not %s", what, cr_type_name(s));
}

/* Integer value. libconfig 1.5 stores hex literals 0x80000000..0xFFFFFFFF as negative ints: read
 * hex as unsigned 32-bit, which is what anyone writing 0xFFFFFFFF means. */
static int int_value(struct config_reader *r, const config_setting_t *s, long long *v)
{
	*v = 0;
	if (config_setting_type(s) == CONFIG_TYPE_INT) {
		*v = config_setting_get_int(s);
		if (*v < 0 && config_setting_get_format(s) == CONFIG_FORMAT_HEX)
			*v += 1LL << 32;
		return 0;
	}
	if (config_setting_type(s) == CONFIG_TYPE_INT64) {
		*v = config_setting_get_int64(s);
		return 0;
	}
	return cr_fail(r, s, "must be an integer, not %s", cr_type_name(s));
}

int cr_int_range(struct config_reader *r, const config_setting_t *s, long long lo, long long hi, bool hex,
		 long long *v)
{
	if (int_value(r, s, v))
		return -1;
	if (*v >= lo && *v <= hi)
		return 0;
	if (hex) /* the magnitude in unsigned arithmetic: llabs(LLONG_MIN) would be undefined */
		return cr_fail(r, s, "%s0x%llx is out of range (0x%llx..0x%llx)", *v < 0 ? "-" : "",
			       *v < 0 ? 0ULL - (unsigned long long)*v : (unsigned long long)*v, lo, hi);
	return cr_fail(r, s, "%lld is out of range (%lld..%lld)", *v, lo, hi);
}

int cr_opt_int(struct config_reader *r, const config_setting_t *g, const char *key, long long lo, long long hi,
	       bool hex, long long *v)
{
	const config_setting_t *s = config_setting_get_member(g, key);

	if (!s)
		return 0;
	return cr_int_range(r, s, lo, hi, hex, v) ? -1 : 1;
}

int cr_opt_u32(struct config_reader *r, const config_setting_t *g, const char *key, long long lo, long long hi,
	       uint32_t *out)
{
	long long v = 0;
	int rc = cr_opt_int(r, g, key, lo, hi, false, &v);

	if (rc == 1)
		*out = (uint32_t)v;
	return rc;
}

int cr_opt_u64(struct config_reader *r, const config_setting_t *g, const char *key, long long lo, long long hi,
	       uint64_t *out)
{
	long long v = 0;
	int rc = cr_opt_int(r, g, key, lo, hi, false, &v);

	if (rc == 1)
		*out = (uint64_t)v;
	return rc;
}

int cr_float_value(struct config_reader *r, const config_setting_t *s, double *v)
{
	*v = 0;
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		*v = (double)config_setting_get_int64(s);
		return 0;
	case CONFIG_TYPE_FLOAT:
		*v = config_setting_get_float(s);
		if (isfinite(*v))
			return 0;
		return cr_fail(r, s, "must be a finite number");
	default:
		return cr_fail(r, s, "must be a number, not %s", cr_type_name(s));
	}
}

/* %g, or more digits where %g would round (1048576 is not 1.04858e+06: a limit must read exactly). */
static const char *num(double v, char buf[32])
{
	snprintf(buf, 32, "%g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, 32, "%.17g", v);
	return buf;
}

int cr_float_range(struct config_reader *r, const config_setting_t *s, double lo, bool lo_open, double hi,
		   double *v)
{
	char xs[32], los[32], his[32];
	double x;

	if (cr_float_value(r, s, &x))
		return -1;
	if ((lo_open ? x > lo : x >= lo) && x <= hi) {
		*v = x;
		return 0;
	}
	if (lo_open)
		return cr_fail(r, s, "%s is out of range (> %s and <= %s)", num(x, xs), num(lo, los), num(hi, his));
	return cr_fail(r, s, "%s is out of range (%s..%s)", num(x, xs), num(lo, los), num(hi, his));
}

int cr_opt_float(struct config_reader *r, const config_setting_t *g, const char *key, double lo, bool lo_open,
		 double hi, double *out)
{
	const config_setting_t *s = config_setting_get_member(g, key);

	if (!s)
		return 0;
	return cr_float_range(r, s, lo, lo_open, hi, out) ? -1 : 1;
}

int cr_opt_bool(struct config_reader *r, const config_setting_t *g, const char *key, bool *out)
{
	const config_setting_t *s = config_setting_get_member(g, key);

	if (!s)
		return 0;
	if (cr_want_type(r, s, CONFIG_TYPE_BOOL, "true or false"))
		return -1;
	*out = config_setting_get_bool(s);
	return 1;
}

int cr_pick(struct config_reader *r, const config_setting_t *s, const char *const names[], const char *extra)
{
	char allowed[200] = "", buf[64];
	const char *v;
	int i;

	if (cr_want_type(r, s, CONFIG_TYPE_STRING, "a string"))
		return -1;
	v = config_setting_get_string(s);
	for (i = 0; names[i]; i++) {
		if (!strcmp(v, names[i]))
			return i;
		snprintf(allowed + strlen(allowed), sizeof(allowed) - strlen(allowed), "%s%s", i ? ", " : "",
			 names[i]);
	}
	return cr_fail(r, s, "unknown value '%s' (allowed: %s%s)", cr_shown(v, buf), allowed, extra ? extra : "");
}

const config_setting_t *cr_required(struct config_reader *r, const config_setting_t *g, const char *key,
				    const char *what)
{
	const config_setting_t *s = config_setting_get_member(g, key);

	if (!s)
		cr_fail_member(r, g, key, "missing (required: %s)", what);
	return s;
}

int cr_known_keys(struct config_reader *r, const config_setting_t *g, const char *const keys[])
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
			return cr_fail(r, m, "unknown setting '%s' (allowed: %s)", config_setting_name(m), allowed);
	}
	return 0;
}

int cr_opt_group(struct config_reader *r, const config_setting_t *g, const char *key, const config_setting_t **out)
{
	*out = config_setting_get_member(g, key);
	if (!*out)
		return 0;
	return cr_want_type(r, *out, CONFIG_TYPE_GROUP, "a group { ... }") ? -1 : 1;
}

/* ---- what libconfig 1.5 would let pass silently ------------------------------------------------ *
 * libconfig 1.5 stores an integer literal that does not fit 32 bits (without the L suffix) as its
 * low 32 bits, silently: "qpn = 4294967298;" would become 2. So the text is scanned first for
 * such literals, for strings and comments left open, and for @include, which is not supported
 * (one file holds the whole configuration, so every line number refers to it). */

static void note_overflow(struct config_reader *r, unsigned line, const char *start, const char *end, int kind,
			  int wrapped)
{
	size_t n = (size_t)(end - start);

	if (r->ovf_kind)
		return;
	if (n >= sizeof(r->ovf_text))
		n = sizeof(r->ovf_text) - 1;
	memcpy(r->ovf_text, start, n);
	r->ovf_text[n] = '\0';
	r->ovf_line = line;
	r->ovf_kind = kind;
	r->ovf_wrapped = wrapped;
}

/* A hex literal at *pp ("0x...", after the sign; start: the token with its sign); advances past
 * it. Leading zeros do not count toward the 8 (16 with L) digits that fit. */
static void scan_hex(struct config_reader *r, const char *start, const char **pp, unsigned line)
{
	const char *p = *pp + 2, *h;
	size_t digits;
	bool l64;

	while (*p == '0')
		p++;
	h = p;
	while (isxdigit((unsigned char)*p))
		p++;
	digits = (size_t)(p - h);
	l64 = *p == 'L';
	while (*p == 'L')
		p++;
	if (digits > (l64 ? 16u : 8u))
		note_overflow(r, line, start, p, l64 ? 3 : 2, (int)strtoul(start, NULL, 16));
	*pp = p;
}

/* One number token at *pp (sign included); advances past it. */
static void scan_number(struct config_reader *r, const char **pp, unsigned line)
{
	const char *start = *pp, *p = *pp;
	char tmp[64];
	long long v;

	if (*p == '+' || *p == '-')
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		scan_hex(r, start, &p, line);
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
			note_overflow(r, line, start, p, 3, 0);
		while (*p == 'L')
			p++;
	} else if (errno == ERANGE || v < INT_MIN || v > INT_MAX) {
		note_overflow(r, line, start, p, 1, (int)v);
	}
	*pp = p;
}

/* libconfig 1.5 silently drops a string or comment left open at the end of the text (and leaks
 * the string), which would hide everything after it. */
static int unterminated(struct config_reader *r, unsigned line, const char *what)
{
	snprintf(r->err, r->errlen, "%s:%u: syntax error: unterminated %s", r->file, line, what);
	return -1;
}

/* Skips a comment or string at *pp (advancing line); 1 when one was skipped, 0 when there is
 * none, -1 when it is left open. */
static int skip_comment_or_string(struct config_reader *r, const char **pp, unsigned *line)
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
			return unterminated(r, start, "comment /* without */");
		p += 2;
	} else if (*p == '"') {
		for (p++; *p && *p != '"'; p++) {
			*line += *p == '\n';
			if (*p == '\\' && p[1])
				p++;
		}
		if (!*p)
			return unterminated(r, start, "string (no closing \")");
		p++;
	} else {
		return 0;
	}
	*pp = p;
	return 1;
}

static int prescan(struct config_reader *r, const char *p)
{
	unsigned line = 1;
	int rc;

	while (*p) {
		if ((rc = skip_comment_or_string(r, &p, &line)) < 0)
			return -1;
		if (rc)
			continue;
		if (*p == '\n') {
			line++, p++;
		} else if (*p == '@' && !strncmp(p, "@include", 8)) {
			snprintf(r->err, r->errlen, "%s:%u: @include: not supported (one file holds the whole %s)",
				 r->file, line, r->what);
			return -1;
		} else if (isalpha((unsigned char)*p) || *p == '*' || *p == '_') {
			while (isalnum((unsigned char)*p) || *p == '*' || *p == '_' || *p == '-')
				p++;
		} else if (isdigit((unsigned char)*p) || ((*p == '+' || *p == '-') && isdigit((unsigned char)p[1])) ||
			   (*p == '.' && isdigit((unsigned char)p[1]))) { /* .5 is a float, not the integer 5 */
			scan_number(r, &p, line);
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

/* The same, for a value written on a later line than its setting's name ("x =\n 4294967298;"):
 * the last such integer before that line. */
static void find_int_before(const config_setting_t *s, unsigned line, int kind, int wrapped,
			    const config_setting_t **best)
{
	unsigned at = config_setting_source_line(s);
	int n;

	if (at < line && (!*best || at >= config_setting_source_line(*best)) &&
	    ((config_setting_type(s) == CONFIG_TYPE_INT && kind != 3 && config_setting_get_int(s) == wrapped) ||
	     (config_setting_type(s) == CONFIG_TYPE_INT64 && kind == 3)))
		*best = s;
	if (!config_setting_is_aggregate(s))
		return;
	n = config_setting_length(s);
	for (int i = 0; i < n; i++)
		find_int_before(config_setting_get_elem(s, (unsigned)i), line, kind, wrapped, best);
}

static int report_overflow(struct config_reader *r, const config_setting_t *root)
{
	static const char *const why[] = { "", "does not fit a 32-bit integer (write it with an L suffix for "
					   "64 bits)", "does not fit 32 bits (hex is 32-bit unless written with an L "
					   "suffix)", "does not fit a 64-bit integer" };
	const config_setting_t *s = find_int_at(root, r->ovf_line, r->ovf_kind, r->ovf_wrapped);

	if (!s)
		find_int_before(root, r->ovf_line, r->ovf_kind, r->ovf_wrapped, &s);
	if (s)
		return cr_fail(r, s, "%s %s", r->ovf_text, why[r->ovf_kind]);
	snprintf(r->err, r->errlen, "%s:%u: %s %s", r->file, r->ovf_line, r->ovf_text, why[r->ovf_kind]);
	return -1;
}

/* The line of the innermost '{', '(' or '[' still open at the end of the text, when every closing
 * one matched (0 if none): libconfig reports a group left open at the end of the file, which may
 * be far from where the group was opened. */
static unsigned unclosed_bracket(const char *p, char *which)
{
	struct config_reader scratch;
	unsigned line = 1, depth = 0, at[64];
	char open[64];

	cr_init(&scratch, NULL, NULL, 0, "");
	while (*p) {
		int rc = skip_comment_or_string(&scratch, &p, &line);

		if (rc < 0)
			return 0;
		if (rc)
			continue;
		if (*p == '{' || *p == '(' || *p == '[') {
			if (depth == sizeof(at) / sizeof(at[0]))
				return 0;
			open[depth] = *p;
			at[depth++] = line;
		} else if (*p == '}' || *p == ')' || *p == ']') {
			if (!depth || open[depth - 1] != (*p == '}' ? '{' : *p == ')' ? '(' : '['))
				return 0;
			depth--;
		}
		line += *p == '\n';
		p++;
	}
	if (!depth)
		return 0;
	*which = open[depth - 1];
	return at[depth - 1];
}

/* ---- entry points --------------------------------------------------------------------------- */

int cr_load_text(struct config_reader *r, const char *text, int (*load_root)(void *arg, const config_setting_t *root),
		 void *arg)
{
	config_t lc;
	int rc;

	if (prescan(r, text))
		return -1;
	config_init(&lc);
	if (!config_read_string(&lc, text)) {
		const char *why = config_error_text(&lc) ? config_error_text(&lc) : "unreadable";
		unsigned line = 1, last = 1, open_line;
		char open = 0;

		for (const char *p = text; *p; p++) { /* the line of the last character that is not a space */
			line += *p == '\n';
			if (!isspace((unsigned char)*p))
				last = line;
		}
		/* an error past the last character, from a group left open: say where that group opened */
		if (config_error_line(&lc) > (int)last && (open_line = unclosed_bracket(text, &open)))
			snprintf(r->err, r->errlen, "%s:%d: syntax error: %s at the end of the text (the '%c' at line %u "
				 "is never closed)", r->file, config_error_line(&lc), why, open, open_line);
		else
			snprintf(r->err, r->errlen, "%s:%d: syntax error: %s", r->file, config_error_line(&lc), why);
		rc = -1;
	} else if (r->ovf_kind) {
		rc = report_overflow(r, config_root_setting(&lc));
	} else {
		rc = load_root(arg, config_root_setting(&lc));
	}
	config_destroy(&lc);
	return rc;
}

/* Read here rather than by libconfig, so a missing file gets strerror's words and the loader
 * has the text for the prescan. */
char *cr_read_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t n = 0;
	int e;

	if (f) {
		text = malloc(MAX_FILE_SIZE + 1);
		n = text ? fread(text, 1, MAX_FILE_SIZE + 1, f) : 0;
	}
	e = !f ? errno : !text ? ENOMEM : ferror(f) ? (errno ? errno : EIO) : n > MAX_FILE_SIZE ? EFBIG : 0;
	if (f)
		fclose(f);
	if (e) {
		free(text);
		if (err && errlen)
			snprintf(err, errlen, "%s: cannot read: %s", path, strerror(e));
		return NULL;
	}
	text[n] = '\0';
	return text;
}

int cr_opt_name(struct config_reader *r, const config_setting_t *g, const char *key, char *out, size_t len)
{
	const config_setting_t *s = config_setting_get_member(g, key);
	const char *v;

	if (!s)
		return 0;
	if (cr_want_type(r, s, CONFIG_TYPE_STRING, "a string"))
		return -1;
	v = config_setting_get_string(s);
	if (!v[0] || strlen(v) >= len)
		return cr_fail(r, s, "must have 1..%zu characters", len - 1);
	for (const char *c = v; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.')
			return cr_fail(r, s, "'%s' has a character other than letters, digits, '-', '_', '.'",
				       cr_shown(v, (char[64]){ 0 }));
	memcpy(out, v, strlen(v) + 1);
	return 1;
}

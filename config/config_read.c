/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Reading libconfig text: the entry points (a file or text in memory: includes, prescan, grammar,
 * then libconfig), the messages and the typed getters, shared by the engine's configuration
 * loader, roce-ccsim's scenario loader and roce-suite's suite files (see config_read.h). The
 * @include reading is config_read_include.c's, the syntax checks config_read_syntax.c's.
 */
#include "config_read_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* The error stays one line of printable text whatever names the files hold. */
int cr_printable(struct config_reader *r)
{
	for (char *c = r->err; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			*c = '?';
	return -1;
}

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
	char path[256] = "", msg[1200], where[CR_AT_LEN];
	unsigned line = s ? config_setting_source_line(s) : 0;
	size_t n;

	if (s)
		setting_path(s, path, sizeof(path));
	n = strlen(path);
	if (member)
		snprintf(path + n, sizeof(path) - n, "%s%s", n ? "." : "", member);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(r->err, r->errlen, "%s: %s: %s", cr_where(&r->src, r->file, line ? line : 1, where, sizeof(where)),
		 path[0] ? path : "(top)", msg);
	return cr_printable(r);
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

/* ---- where a line came from ------------------------------------------------------------------- */

const char *cr_source(const struct cr_sources *s, unsigned text_line, unsigned *line)
{
	const struct cr_span *sp = NULL;

	*line = text_line;
	for (unsigned i = 0; i < s->n_spans && s->spans[i].first <= text_line; i++)
		sp = &s->spans[i];
	if (!sp)
		return s->n_files ? s->files[0] : NULL;
	*line = sp->line + (text_line - sp->first);
	return s->files[sp->file];
}

const char *cr_where(const struct cr_sources *s, const char *file, unsigned text_line, char *buf, size_t len)
{
	unsigned line;
	const char *f = cr_source(s, text_line ? text_line : 1, &line);

	snprintf(buf, len, "%s:%u", f ? f : file, line);
	return buf;
}

const char *cr_at(const struct config_reader *r, unsigned text_line, char buf[CR_AT_LEN])
{
	unsigned line;

	if (r->src.n_files <= 1) {
		cr_source(&r->src, text_line, &line);
		snprintf(buf, CR_AT_LEN, "line %u", line);
		return buf;
	}
	return cr_where(&r->src, r->file, text_line, buf, CR_AT_LEN);
}

/* An error at line `text_line` of the text libconfig reads: "FILE:LINE: ...". */
int cr_fail_line(struct config_reader *r, unsigned text_line, const char *fmt, ...)
{
	char where[CR_AT_LEN], msg[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->err, r->errlen, "%s: %s", cr_where(&r->src, r->file, text_line, where, sizeof(where)), msg);
	return cr_printable(r);
}

/* ---- entry points --------------------------------------------------------------------------- */

/* What libconfig refused in text the grammar above took: its own words ("duplicate setting name",
 * "mismatched element type in array"), or its bare "syntax error" where the two disagree. */
static int libconfig_error(struct config_reader *r, const config_t *lc)
{
	const char *why = config_error_text(lc) ? config_error_text(lc) : "unreadable";
	unsigned line = config_error_line(lc) > 0 ? (unsigned)config_error_line(lc) : 1;

	if (line > r->last_line)
		line = r->last_line;
	if (strcmp(why, "syntax error"))
		return cr_fail_line(r, line, "syntax error: %s", why);
	return cr_fail_line(r, line, "syntax error: libconfig refuses the text here (the %s is libconfig text: %s)", r->what,
			 LIBCONFIG_SYNTAX);
}

/* The grammar is checked first: libconfig 1.5 leaks a string it read before a syntax error
 * ("x": 1), and could only say "syntax error". */
static int parse(struct config_reader *r, const char *text, bool includes, config_t *lc)
{
	char *all = cr_expanded(r, text, includes);
	int rc;

	config_init(lc);
	if (!all)
		return -1;
	cr_prescan(r, all);
	rc = cr_syntax_fault(r, all);
	if (!rc && !config_read_string(lc, all))
		rc = libconfig_error(r, lc);
	if (!rc && r->ovf_kind)
		rc = cr_report_overflow(r, config_root_setting(lc));
	free(all);
	return rc;
}

static int load(struct config_reader *r, const char *text, bool includes,
		int (*load_root)(void *arg, const config_setting_t *root), void *arg)
{
	config_t lc;
	int rc = parse(r, text, includes, &lc);

	if (!rc)
		rc = load_root(arg, config_root_setting(&lc));
	config_destroy(&lc);
	return rc;
}

int cr_load_text(struct config_reader *r, const char *text, int (*load_root)(void *arg, const config_setting_t *root),
		 void *arg)
{
	return load(r, text, false, load_root, arg);
}

int cr_load_file(struct config_reader *r, const char *path,
		 int (*load_root)(void *arg, const config_setting_t *root), void *arg)
{
	char *text = cr_read_file(path, r->err, r->errlen);
	int rc;

	if (!text)
		return -1;
	rc = load(r, text, true, load_root, arg);
	free(text);
	return rc;
}

int cr_parse_file(struct config_reader *r, const char *path, config_t *lc)
{
	char *text = cr_read_file(path, r->err, r->errlen);
	int rc;

	if (!text) {
		config_init(lc);
		return -1;
	}
	rc = parse(r, text, true, lc);
	free(text);
	return rc;
}

/* Read here rather than by libconfig, so a missing file gets strerror's words, the includes are
 * found, and the loader has the text for the prescan. Only regular files: a FIFO or a device
 * (an @include "/dev/zero") would block or never end. */
char *cr_read_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	struct stat st;
	size_t n = 0;
	int e;

	if (f && (fstat(fileno(f), &st) || !S_ISREG(st.st_mode))) {
		e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		fclose(f);
		if (err && errlen)
			snprintf(err, errlen, "%s: cannot read: %s", path, e == EISDIR ? strerror(e) : "not a regular file");
		return NULL;
	}
	if (f) {
		text = malloc(CR_MAX_FILE_SIZE + 1);
		n = text ? fread(text, 1, CR_MAX_FILE_SIZE + 1, f) : 0;
	}
	e = !f ? errno : !text ? ENOMEM : ferror(f) ? (errno ? errno : EIO) : n > CR_MAX_FILE_SIZE ? EFBIG : 0;
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

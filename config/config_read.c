/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Reading libconfig text: includes, messages, typed getters, the libconfig 1.5 prescan and
 * syntax errors that say what was found, shared by the engine's configuration loader, roce-ccsim's
 * scenario loader and roce-suite's suite files (see config_read.h).
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
#include <sys/stat.h>

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

/* The error stays one line of printable text whatever names the files hold. */
static int printable(struct config_reader *r)
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
	return printable(r);
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
static int __attribute__((format(printf, 3, 4))) fail_line(struct config_reader *r, unsigned text_line,
							   const char *fmt, ...)
{
	char where[CR_AT_LEN], msg[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->err, r->errlen, "%s: %s", cr_where(&r->src, r->file, text_line, where, sizeof(where)), msg);
	return printable(r);
}

/* ---- comments and strings ------------------------------------------------------------------- */

/* Skips a comment or string at *pp (advancing line); 1 when one was skipped, 0 when there is
 * none, -1 when it is left open (*open: what, from *line). libconfig 1.5 silently drops a string
 * or comment left open at the end of the text (and leaks the string), which would hide everything
 * after it. */
static int skip_comment_or_string(const char **pp, unsigned *line, const char **open)
{
	const char *p = *pp;

	if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
		while (*p && *p != '\n')
			p++;
	} else if (p[0] == '/' && p[1] == '*') {
		for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
			;
		if (!*p) {
			*open = "comment /* without */";
			return -1;
		}
		p += 2;
	} else if (*p == '"') {
		for (p++; *p && *p != '"'; p++)
			if (*p == '\\' && p[1])
				p++;
		if (!*p) {
			*open = "string (no closing \")";
			return -1;
		}
		p++;
	} else {
		return 0;
	}
	for (const char *q = *pp; q < p; q++)
		*line += *q == '\n';
	*pp = p;
	return 1;
}

/* ---- @include: the text libconfig reads ------------------------------------------------------ */

struct expansion {
	struct config_reader *r;
	bool includes;                /* a file's text: @include allowed */
	char *out;                    /* the text so far */
	size_t len, cap;
	unsigned out_line;            /* its current line */
	unsigned depth, stack[CR_MAX_DEPTH + 1]; /* the files being read, outermost first */
	char *real[CR_MAX_FILES];     /* realpath() of each file: the same file under two names */
};

/* A message about line `line` of file f (before its lines are in the text). */
static int __attribute__((format(printf, 4, 5))) fail_file(struct expansion *e, unsigned f, unsigned line,
							   const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(e->r->err, e->r->errlen, "%s:%u: %s", e->r->src.files[f], line, msg);
	return printable(e->r);
}

static int put(struct expansion *e, const char *s, size_t n)
{
	if (e->len + n > MAX_FILE_SIZE) {
		snprintf(e->r->err, e->r->errlen, "%s: cannot read: more than %u MiB with the files it includes",
			 e->r->file, MAX_FILE_SIZE >> 20);
		return -1;
	}
	if (e->len + n + 1 > e->cap) {
		size_t cap = e->cap ? e->cap : 4096;
		char *grown;

		while (cap < e->len + n + 1)
			cap *= 2;
		if (!(grown = realloc(e->out, cap))) {
			snprintf(e->r->err, e->r->errlen, "%s: cannot read: out of memory", e->r->file);
			return -1;
		}
		e->out = grown, e->cap = cap;
	}
	memcpy(e->out + e->len, s, n);
	e->len += n;
	e->out[e->len] = '\0';
	for (size_t i = 0; i < n; i++)
		e->out_line += s[i] == '\n';
	return 0;
}

/* From the text's current line on, lines of file f from `line`. */
static int span(struct expansion *e, unsigned f, unsigned line)
{
	struct cr_sources *s = &e->r->src;
	struct cr_span *last = s->n_spans ? &s->spans[s->n_spans - 1] : NULL;

	if (last && last->first == e->out_line) { /* what it began has no line in the text */
		last->file = f, last->line = line;
		return 0;
	}
	if (s->n_spans == CR_MAX_SPANS)
		return fail_file(e, f, line, "@include: too many includes (at most %d)", CR_MAX_SPANS / 2 - 1);
	s->spans[s->n_spans++] = (struct cr_span){ .first = e->out_line, .file = f, .line = line };
	return 0;
}

/* The file named by `@include "NAME"` on line `line` of file f: its index in r->src (read before
 * or registered now, with its text in *text to free()), or -1 after an error. */
static int include_file(struct expansion *e, unsigned f, unsigned line, const char *name, char **text)
{
	struct cr_sources *s = &e->r->src;
	const char *slash = strrchr(s->files[f], '/');
	char path[CR_PATH_LEN + 8], chain[600] = "", why[CR_PATH_LEN + 64], *real;
	unsigned i;
	int n;

	*text = NULL;
	if (name[0] == '/' || !slash)
		n = snprintf(path, sizeof(path), "%s", name);
	else
		n = snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - s->files[f]), s->files[f], name);
	if (n >= CR_PATH_LEN)
		return fail_file(e, f, line, "@include: the path '%s' is longer than %d characters", name, CR_PATH_LEN - 1);
	if (!(real = realpath(path, NULL)))
		return fail_file(e, f, line, "@include: cannot read %s: %s", path, strerror(errno));
	for (i = 0; i < s->n_files && strcmp(e->real[i], real); i++)
		;
	for (unsigned d = 0; d <= e->depth; d++)
		if (e->stack[d] == i) {
			for (unsigned k = d; k <= e->depth; k++)
				snprintf(chain + strlen(chain), sizeof(chain) - strlen(chain), "%s -> ", s->files[e->stack[k]]);
			free(real);
			return fail_file(e, f, line, "@include: %s includes itself (%s%s)", path, chain, path);
		}
	if (e->depth == CR_MAX_DEPTH) {
		free(real);
		return fail_file(e, f, line, "@include: more than %d files deep", CR_MAX_DEPTH);
	}
	if (!(*text = cr_read_file(path, why, sizeof(why)))) {
		free(real);
		return fail_file(e, f, line, "@include: %s", why);
	}
	if (i < s->n_files) {
		free(real);
		return (int)i;
	}
	if (s->n_files == CR_MAX_FILES) {
		free(real);
		return fail_file(e, f, line, "@include: more than %d files", CR_MAX_FILES - 1);
	}
	memcpy(s->files[i], path, (size_t)n + 1);
	e->real[i] = real;
	s->n_files++;
	return (int)i;
}

static int expand(struct expansion *e, unsigned f, const char *p);

/* `@include "NAME"` at *pp (line `line` of file f, at the start of its line): the file's text in
 * place of the line; *pp moves past the line. */
static int directive(struct expansion *e, unsigned f, unsigned line, const char **pp)
{
	static const char form[] = "@include: expected @include \"FILE\" alone on its line (a comment may follow)";
	const char *p = *pp + 8, *open;
	char name[CR_PATH_LEN], *text;
	size_t n = 0;
	int inc, rc;

	if (*p != ' ' && *p != '\t')
		return fail_file(e, f, line, form);
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p++ != '"')
		return fail_file(e, f, line, form);
	for (; *p && *p != '"' && *p != '\n'; p++) {
		if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
			p++;
		if (n + 1 >= sizeof(name))
			return fail_file(e, f, line, "@include: the path is longer than %d characters", CR_PATH_LEN - 1);
		name[n++] = *p;
	}
	name[n] = '\0';
	if (*p++ != '"' || !n)
		return fail_file(e, f, line, form);
	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	if (*p == '#' || (p[0] == '/' && p[1] == '/') || (p[0] == '/' && p[1] == '*')) {
		unsigned l = line;

		if (skip_comment_or_string(&p, &l, &open) < 0 || l != line)
			return fail_file(e, f, line, form);
	}
	if (*p && *p != '\n')
		return fail_file(e, f, line, form);
	if (!e->includes)
		return fail_file(e, f, line, "@include: not for a %s given as text (no folder to find %s in)", e->r->what,
				 name);
	if ((inc = include_file(e, f, line, name, &text)) < 0)
		return -1;
	e->stack[++e->depth] = (unsigned)inc;
	rc = expand(e, (unsigned)inc, text);
	e->depth--;
	free(text);
	if (rc || (e->len && e->out[e->len - 1] != '\n' && put(e, "\n", 1)))
		return -1;
	*pp = *p ? p + 1 : p;
	return span(e, f, line + 1);
}

/* Copies file f's text into the text libconfig reads, @include lines replaced by their files. */
static int expand(struct expansion *e, unsigned f, const char *p)
{
	unsigned line = 1;
	bool line_start = true; /* only blanks so far on this line: where libconfig takes @include */
	const char *open;

	if (span(e, f, 1))
		return -1;
	while (*p) {
		const char *q = p;
		unsigned at = line;
		int rc = skip_comment_or_string(&p, &line, &open);

		if (rc < 0)
			return fail_file(e, f, at, "syntax error: unterminated %s", open);
		if (rc) {
			if (put(e, q, (size_t)(p - q)))
				return -1;
			line_start = false;
			continue;
		}
		if (line_start && !strncmp(p, "@include", 8)) {
			if (directive(e, f, line++, &p))
				return -1;
			continue;
		}
		if (put(e, p, 1))
			return -1;
		line += *p == '\n';
		line_start = *p == '\n' || (line_start && (*p == ' ' || *p == '\t' || *p == '\r'));
		p++;
	}
	return 0;
}

/* The text libconfig is to read, to free(); NULL after an error. Ends with a newline: libconfig
 * 1.5 refuses a // comment on a last line without one. */
static char *expanded(struct config_reader *r, const char *text, bool includes)
{
	struct expansion e = { .r = r, .includes = includes, .out_line = 1, .stack = { 0 } };
	int rc;

	memset(&r->src, 0, sizeof(r->src));
	snprintf(r->src.files[0], CR_PATH_LEN, "%s", r->file);
	r->src.n_files = 1;
	e.real[0] = includes ? realpath(r->file, NULL) : NULL;
	if (includes && !e.real[0])
		e.real[0] = strdup(r->file);
	rc = expand(&e, 0, text);
	r->last_line = e.out_line; /* not the line the newline below opens */
	if (!rc && (!e.len || e.out[e.len - 1] != '\n'))
		rc = put(&e, "\n", 1);
	for (unsigned i = 0; i < r->src.n_files; i++)
		free(e.real[i]);
	if (rc) {
		free(e.out);
		return NULL;
	}
	return e.out ? e.out : strdup("\n");
}

/* ---- what libconfig 1.5 would let pass silently ------------------------------------------------ *
 * libconfig 1.5 stores an integer literal that does not fit 32 bits (without the L suffix) as its
 * low 32 bits, silently: "qpn = 4294967298;" would become 2. So the text is scanned first for
 * such literals (strings and comments left open are found while the includes are read). */

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

static void prescan(struct config_reader *r, const char *p)
{
	unsigned line = 1;
	const char *open;
	int rc;

	while (*p) {
		if ((rc = skip_comment_or_string(&p, &line, &open)) < 0)
			return; /* not after expanded(): it found every one */
		if (rc)
			continue;
		if (*p == '\n') {
			line++, p++;
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
	return fail_line(r, r->ovf_line, "%s %s", r->ovf_text, why[r->ovf_kind]);
}

/* ---- syntax errors: what was found, what was expected ------------------------------------------ *
 * libconfig 1.5 says "syntax error" and a line. This reads the text again with libconfig's grammar
 * (settings `name = value;`, groups { }, lists ( ), arrays [ ]) up to the first token that does not
 * fit, to say what it is and what could have come there, with the usual mistakes named: JSON, a
 * unit after a number, unquoted or single-quoted strings, ';' or a missing ',' in a list, a
 * trailing ','. */

enum tok_kind { TK_END, TK_NAME, TK_BOOL, TK_NUMBER, TK_BADNUM, TK_STRING, TK_PUNCT, TK_OTHER };

struct tok {
	enum tok_kind kind;
	const char *s;
	size_t n;
	unsigned line;
	bool glued;                   /* nothing between it and the token before it */
};

struct grammar {
	struct config_reader *r;
	const char *p;                /* after the token read ahead */
	unsigned line;
	struct tok prev, t;           /* the token read last, and the next one */
	unsigned err_line;
	char msg[700];
};

static const char digits[] = "0123456789";

/* An exponent "e-5" at p: its length, 0 when there is none. */
static size_t exponent(const char *p)
{
	size_t sign, n;

	if (*p != 'e' && *p != 'E')
		return 0;
	sign = p[1] == '+' || p[1] == '-';
	n = strspn(p + 1 + sign, digits);
	return n ? 1 + sign + n : 0;
}

static size_t longer(size_t a, size_t b) { return a > b ? a : b; }

/* The longest of libconfig 1.5's number patterns at s (its scanner's flex rules: integer[L[L]],
 * hex[L[L]] without a sign, and two float forms, "." and "5." included); 0 when none. So "64K"
 * is the integer 64 and then the name K, as libconfig reads it. */
static size_t number_length(const char *s)
{
	size_t sign = *s == '+' || *s == '-', nd = strspn(s + sign, digits), best = 0, n;
	const char *d = s + sign;

	if (nd)
		best = sign + nd + (d[nd] == 'L' ? (d[nd + 1] == 'L' ? 2 : 1) : 0);
	if (!sign && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isxdigit((unsigned char)s[2])) {
		n = 2 + strspn(s + 2, "0123456789abcdefABCDEF");
		best = longer(best, n + (s[n] == 'L' ? (s[n + 1] == 'L' ? 2 : 1) : 0));
	}
	if (d[nd] == '.') { /* [-+]?[0-9]*\.[0-9]*(exponent)? */
		n = sign + nd + 1 + strspn(d + nd + 1, digits);
		best = longer(best, n + exponent(s + n));
	}
	if (nd) { /* [-+]?[0-9]+(\.[0-9]*)?exponent */
		n = sign + nd;
		if (s[n] == '.')
			n += 1 + strspn(s + n + 1, digits);
		if (exponent(s + n))
			best = longer(best, n + exponent(s + n));
	}
	return best;
}

/* The next token, as libconfig 1.5's scanner cuts the text. */
static void next(struct grammar *g)
{
	const char *open, *p, *end = g->t.s ? g->t.s + g->t.n : g->p;
	size_t n;

	g->prev = g->t;
	for (;;) {
		while (*g->p && strchr(" \t\f\r\n", *g->p)) /* libconfig's blanks (not \v) */
			g->line += *g->p++ == '\n';
		if (*g->p == '"' || skip_comment_or_string(&g->p, &g->line, &open) <= 0)
			break;
	}
	p = g->p;
	g->t = (struct tok){ .s = p, .n = 1, .line = g->line, .glued = p == end };
	if (!*p) {
		g->t.kind = TK_END, g->t.n = 0;
		g->t.line = g->line < g->r->last_line ? g->line : g->r->last_line;
	} else if (*p == '"') {
		const char *q = p;

		skip_comment_or_string(&q, &g->line, &open);
		g->t.kind = TK_STRING, g->t.n = (size_t)(q - p);
	} else if ((n = number_length(p))) {
		g->t.kind = TK_NUMBER, g->t.n = n;
	} else if (isalpha((unsigned char)*p) || *p == '*') {
		g->t.n = 1 + strspn(p + 1, "-_*abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
		g->t.kind = (g->t.n == 4 && !strncasecmp(p, "true", 4)) || (g->t.n == 5 && !strncasecmp(p, "false", 5))
				    ? TK_BOOL : TK_NAME;
	} else if (strchr("=:;,{}()[]", *p)) {
		g->t.kind = TK_PUNCT;
	} else {
		g->t.kind = TK_OTHER;
		if (!strncmp(p, "@include", 8))
			g->t.n = 8;
	}
	g->p = p + g->t.n;
}

static bool is(const struct grammar *g, char c)
{
	return g->t.kind == TK_PUNCT && g->t.s[0] == c;
}

/* "the end of the text", "'64K'", "';'" */
static const char *shown(const struct tok *t, char buf[64])
{
	size_t n = t->n < 40 ? t->n : 40;

	if (t->kind == TK_END)
		return "the end of the text";
	buf[0] = '\'';
	for (size_t i = 0; i < n; i++)
		buf[1 + i] = isprint((unsigned char)t->s[i]) ? t->s[i] : '?';
	snprintf(buf + 1 + n, 64 - 1 - n, "%s'", n < t->n ? "..." : "");
	return buf;
}

/* The error at the token read ahead: "found X where EXPECTED was expected" and a hint. */
static int __attribute__((format(printf, 3, 4))) wrong(struct grammar *g, const char *expected, const char *fmt, ...)
{
	char buf[64], hint[400] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(hint, sizeof(hint), fmt, ap);
	va_end(ap);
	g->err_line = g->t.line;
	snprintf(g->msg, sizeof(g->msg), "found %s where %s was expected%s%s", shown(&g->t, buf), expected,
		 hint[0] ? ": " : "", hint);
	return -1;
}

/* Why the token is no value, for wrong()'s hint. */
static void not_a_value(const struct tok *t, char *hint, size_t len)
{
	if (t->kind == TK_BADNUM) {
		size_t d = strspn(t->s, "+-0123456789.");

		if (!strncasecmp(t->s + (t->s[0] == '-' || t->s[0] == '+'), "0x", 2) && (t->s[0] == '-' || t->s[0] == '+'))
			snprintf(hint, len, "hex numbers have no sign in libconfig (write the value in decimal)");
		else if (!strncasecmp(t->s, "0x", 2))
			snprintf(hint, len, "0x needs hex digits (0x2A)");
		else if (d && d < t->n && strspn(t->s + d, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == t->n - d)
			snprintf(hint, len, "numbers take no unit suffix: write the number alone, in the unit the setting's "
				 "name gives (message_size in bytes: 65536, not 64K; duration_s: 1.5, not 1.5s)");
		else
			snprintf(hint, len, "not a number (integers: 42, -1, 0x2A, 5000000000L; floats: 1.5, 1e9)");
	} else if (t->kind == TK_NAME) {
		bool yes_no = (t->n == 3 && (!strncasecmp(t->s, "yes", 3) || !strncasecmp(t->s, "off", 3))) ||
			      (t->n == 2 && (!strncasecmp(t->s, "no", 2) || !strncasecmp(t->s, "on", 2)));

		if (yes_no)
			snprintf(hint, len, "booleans are true or false");
		else
			snprintf(hint, len, "a string is written in double quotes: \"%.*s\" (booleans are true or false)",
				 (int)(t->n < 40 ? t->n : 40), t->s);
	} else if (t->kind == TK_OTHER && t->s[0] == '\'') {
		snprintf(hint, len, "strings are written in double quotes, not single");
	} else {
		snprintf(hint, len, "a value is a number, a \"string\", true/false, a group { }, a list ( ) or an array [ ]");
	}
}

/* A number with letters or another number glued to it ("64K", "1.2.3", "-0x10", "10s"): libconfig
 * reads a number and then a name or a second number. When `after` is glued to the number `num`,
 * the error is said at what the user wrote, both together: -1; 0 otherwise. */
static int glued_number(struct grammar *g, const struct tok *num, const struct tok *after)
{
	char hint[300];
	struct tok bad;

	if (!after->glued || num->kind != TK_NUMBER ||
	    (after->kind != TK_NAME && after->kind != TK_NUMBER && after->kind != TK_BOOL))
		return 0;
	bad = (struct tok){ .kind = TK_BADNUM, .s = num->s, .n = (size_t)(after->s + after->n - num->s), .line = num->line };
	not_a_value(&bad, hint, sizeof(hint));
	g->t = bad;
	return wrong(g, "a value", "%s", hint);
}

static int settings(struct grammar *g, char close, unsigned open_line);
static int value(struct grammar *g);

/* A list ( v, v ) or an array [ s, s ] (close: ')' or ']'), after its opening token. */
static int elements(struct grammar *g, char close, unsigned open_line, int (*element)(struct grammar *))
{
	const char *what = close == ')' ? "a list" : "an array", *exp = close == ')' ? "',' or ')'" : "',' or ']'";
	char at[CR_AT_LEN];

	if (is(g, close)) {
		next(g);
		return 0;
	}
	for (;;) {
		if (element(g))
			return -1;
		if (is(g, close)) {
			next(g);
			return 0;
		}
		if (is(g, ',')) {
			next(g);
			if (is(g, close))
				return wrong(g, "the next element", "libconfig allows no ',' after the last element");
			continue;
		}
		if (glued_number(g, &g->prev, &g->t))
			return -1;
		if (is(g, ';'))
			return wrong(g, exp, "the elements of %s are separated by ','", what);
		if (g->t.kind == TK_END)
			return wrong(g, close == ')' ? "')'" : "']'", "the '%c' at %s is never closed", close == ')' ? '(' : '[',
				     cr_at(g->r, open_line, at));
		return wrong(g, exp, "a missing ',' between the elements of %s?", what);
	}
}

static int scalar(struct grammar *g)
{
	char hint[300];

	if (g->t.kind == TK_NUMBER || g->t.kind == TK_BOOL) {
		next(g);
		return 0;
	}
	if (g->t.kind == TK_STRING) {
		while (g->t.kind == TK_STRING) /* "a" "b" is "ab" */
			next(g);
		return 0;
	}
	if (is(g, '{') || is(g, '(') || is(g, '['))
		return wrong(g, "a number, a string or a boolean", "an array [ ] holds scalars of one type; a list ( ) "
			     "holds groups, lists and arrays");
	not_a_value(&g->t, hint, sizeof(hint));
	return wrong(g, "a value", "%s", hint);
}

static int value(struct grammar *g)
{
	unsigned open_line = g->t.line;

	if (is(g, '{')) {
		next(g);
		return settings(g, '}', open_line);
	}
	if (is(g, '(')) {
		next(g);
		return elements(g, ')', open_line, value);
	}
	if (is(g, '[')) {
		next(g);
		return elements(g, ']', open_line, scalar);
	}
	return scalar(g);
}

/* The token read ahead where a setting name was expected is none. */
static int no_name(struct grammar *g, char close, bool first, const char *name)
{
	const struct tok t = g->t;
	const char *exp = close ? "a setting name or '}'" : "a setting name";

	if (!close && first && (is(g, '{') || is(g, '[')))
		return wrong(g, exp, "this looks like JSON, but the file is libconfig text: name = value; groups { ... }, "
			     "lists ( ..., ... ), arrays [ ..., ... ]");
	if (t.kind == TK_STRING) {
		bool colon;

		next(g);
		colon = is(g, ':');
		g->t = t; /* report at the string */
		return wrong(g, exp, "names are not quoted (name = value;%s)", colon ? " as JSON's \"name\": value would be" : "");
	}
	if (glued_number(g, &g->prev, &g->t))
		return -1;
	if (is(g, ';'))
		return wrong(g, exp, "a second ';' (one ends a setting)");
	if (t.kind == TK_OTHER && t.n == 8)
		return wrong(g, exp, "@include must begin its line");
	if (name[0] && (t.kind == TK_NUMBER || t.kind == TK_STRING || t.kind == TK_BOOL || is(g, '{') || is(g, '(') ||
			is(g, '[')))
		return wrong(g, close ? "';' or the next setting or '}'" : "';' or the next setting",
			     "'%s' has one value: a missing ';' and setting name, or a list ( ..., ... ) or array [ ..., ... ] "
			     "meant?", name);
	if (t.s[0] == '_' || isdigit((unsigned char)t.s[0]) || t.s[0] == '-' || t.s[0] == '.') {
		g->t.n = strspn(t.s, "-_*.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"); /* all of "1x" */
		return wrong(g, exp, "a name begins with a letter or '*'");
	}
	if (t.kind == TK_OTHER && !isprint((unsigned char)t.s[0]))
		return wrong(g, exp, "byte 0x%02x is no text (libconfig's blanks are space, tab, CR, LF and FF)",
			     (unsigned char)t.s[0]);
	return wrong(g, exp, "%s", close ? "a group holds settings name = value;" : "");
}

/* Settings up to `close` ('}', or 0 at the top), after the opening token. */
static int settings(struct grammar *g, char close, unsigned open_line)
{
	char name[64] = "", at[CR_AT_LEN];
	bool first = true;

	for (;;) {
		struct tok before, nm;

		if (close && is(g, close)) {
			next(g);
			return 0;
		}
		if (g->t.kind == TK_END) {
			if (!close)
				return 0;
			return wrong(g, "'}'", "the '{' at %s is never closed", cr_at(g->r, open_line, at));
		}
		if (g->t.kind != TK_NAME)
			return no_name(g, close, first, name);
		nm = g->t, before = g->prev;
		snprintf(name, sizeof(name), "%.*s", (int)(g->t.n < 60 ? g->t.n : 60), g->t.s);
		first = false;
		next(g);
		if (!is(g, '=') && !is(g, ':')) {
			char exp[96];

			if (glued_number(g, &before, &nm)) /* "64K;": the value 64, then a setting K */
				return -1;
			snprintf(exp, sizeof(exp), "'=' or ':' after the name '%s'", name);
			if (g->t.s[0] == '.') /* libconfig reads "." as a float */
				return wrong(g, exp, "names have no '.' (nest groups instead: a = { b = ...; };)");
			return wrong(g, exp, "%s", "");
		}
		next(g);
		if (value(g))
			return -1;
		if (is(g, ';') || is(g, ','))
			next(g);
	}
}

/* 1 with the first token that does not fit in g (err_line, msg), 0 when the text is libconfig's
 * grammar. */
static bool grammar_fault(struct grammar *g, const char *text)
{
	g->p = text;
	g->line = 1;
	next(g);
	return settings(g, 0, 1) != 0;
}

/* ---- entry points --------------------------------------------------------------------------- */

#define LIBCONFIG_SYNTAX "https://hyperrealm.github.io/libconfig/libconfig_manual.html#Configuration-Files"

/* What libconfig refused in text the grammar above took: its own words ("duplicate setting name",
 * "mismatched element type in array"), or its bare "syntax error" where the two disagree. */
static int libconfig_error(struct config_reader *r, const config_t *lc)
{
	const char *why = config_error_text(lc) ? config_error_text(lc) : "unreadable";
	unsigned line = config_error_line(lc) > 0 ? (unsigned)config_error_line(lc) : 1;

	if (line > r->last_line)
		line = r->last_line;
	if (strcmp(why, "syntax error"))
		return fail_line(r, line, "syntax error: %s", why);
	return fail_line(r, line, "syntax error: libconfig refuses the text here (the %s is libconfig text: %s)", r->what,
			 LIBCONFIG_SYNTAX);
}

/* The grammar is checked first: libconfig 1.5 leaks a string it read before a syntax error
 * ("x": 1), and could only say "syntax error". */
static int parse(struct config_reader *r, const char *text, bool includes, config_t *lc)
{
	char *all = expanded(r, text, includes);
	struct grammar g = { .r = r };
	int rc = -1;

	config_init(lc);
	if (!all)
		return -1;
	prescan(r, all);
	if (grammar_fault(&g, all))
		fail_line(r, g.err_line, "syntax error: %s (the %s is libconfig text: %s)", g.msg, r->what,
			  LIBCONFIG_SYNTAX);
	else if (!config_read_string(lc, all))
		libconfig_error(r, lc);
	else if (r->ovf_kind)
		report_overflow(r, config_root_setting(lc));
	else
		rc = 0;
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

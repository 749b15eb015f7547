/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The checks made on the text before libconfig reads it (config_read.c calls them in that order):
 * strings and comments left open, integer literals libconfig 1.5 would wrap silently, and a
 * reading of libconfig's grammar that says what was found and what could have come there, where
 * libconfig itself would only say "syntax error".
 */
#include "config_read_internal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- comments and strings ------------------------------------------------------------------- */

/* Skips a comment or string at *pp (advancing line); 1 when one was skipped, 0 when there is
 * none, -1 when it is left open (*open: what, from *line). libconfig 1.5 silently drops a string
 * or comment left open at the end of the text (and leaks the string), which would hide everything
 * after it. */
int cr_skip_comment_or_string(const char **pp, unsigned *line, const char **open)
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

void cr_prescan(struct config_reader *r, const char *p)
{
	unsigned line = 1;
	const char *open;
	int rc;

	while (*p) {
		if ((rc = cr_skip_comment_or_string(&p, &line, &open)) < 0)
			return; /* not after cr_expanded(): it found every one */
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

int cr_report_overflow(struct config_reader *r, const config_setting_t *root)
{
	static const char *const why[] = { "", "does not fit a 32-bit integer (write it with an L suffix for "
					   "64 bits)", "does not fit 32 bits (hex is 32-bit unless written with an L "
					   "suffix)", "does not fit a 64-bit integer" };
	const config_setting_t *s = find_int_at(root, r->ovf_line, r->ovf_kind, r->ovf_wrapped);

	if (!s)
		find_int_before(root, r->ovf_line, r->ovf_kind, r->ovf_wrapped, &s);
	if (s)
		return cr_fail(r, s, "%s %s", r->ovf_text, why[r->ovf_kind]);
	return cr_fail_line(r, r->ovf_line, "%s %s", r->ovf_text, why[r->ovf_kind]);
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
		if (*g->p == '"' || cr_skip_comment_or_string(&g->p, &g->line, &open) <= 0)
			break;
	}
	p = g->p;
	g->t = (struct tok){ .s = p, .n = 1, .line = g->line, .glued = p == end };
	if (!*p) {
		g->t.kind = TK_END, g->t.n = 0;
		g->t.line = g->line < g->r->last_line ? g->line : g->r->last_line;
	} else if (*p == '"') {
		const char *q = p;

		cr_skip_comment_or_string(&q, &g->line, &open);
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

/* The grammar's verdict on text, with its message written as the error. */
int cr_syntax_fault(struct config_reader *r, const char *text)
{
	struct grammar g = { .r = r };

	if (!grammar_fault(&g, text))
		return 0;
	return cr_fail_line(r, g.err_line, "syntax error: %s (the %s is libconfig text: %s)", g.msg, r->what,
			    LIBCONFIG_SYNTAX);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * @include "FILE": the one text libconfig reads, made of the file with each @include line replaced
 * by the file it names (found beside the file that names it), and the map of where each of its
 * lines came from (struct cr_sources), so that messages name the included file and its line.
 */
#include "config_read_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	return cr_printable(e->r);
}

static int put(struct expansion *e, const char *s, size_t n)
{
	if (e->len + n > CR_MAX_FILE_SIZE) {
		snprintf(e->r->err, e->r->errlen, "%s: cannot read: more than %u MiB with the files it includes",
			 e->r->file, CR_MAX_FILE_SIZE >> 20);
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

		if (cr_skip_comment_or_string(&p, &l, &open) < 0 || l != line)
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
		int rc = cr_skip_comment_or_string(&p, &line, &open);

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
char *cr_expanded(struct config_reader *r, const char *text, bool includes)
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

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Reading libconfig text with one error line "FILE:LINE: SETTING: what is wrong (what is
 * allowed)": what the engine's configuration loader (config_load.c), roce-ccsim's scenario loader
 * (apps/roce_ccsim/scenario.c) and roce-suite's suite files (apps/roce_suite) share. Plain C,
 * libc and libconfig only, so that the loaders can be unit-tested and fuzzed without EAL and the
 * simulator does not depend on it.
 *
 * A loader embeds a struct config_reader, loads its file with cr_load_file() (or text with
 * cr_load_text()) and reads the settings with the typed getters. SETTING is libconfig's path
 * syntax ("flows.[0].qpn"), so it can be pasted into config_lookup().
 *
 * @include "FILE" (libconfig's own directive, alone on its line) is read here, not by libconfig:
 * FILE is found beside the file that names it, as C's #include "FILE" is (libconfig 1.5, Debian
 * 12's, resolves every include against one folder and has no hook to change that; 1.7's
 * config_set_include_func would), and every file must pass the checks below, which libconfig
 * would not make. libconfig then reads one text, the file with each @include line replaced by
 * the file it names; struct cr_sources says where each of that text's lines came from, so that
 * messages name the included file and its own line.
 */
#ifndef ROCE_CONFIG_READ_H
#define ROCE_CONFIG_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libconfig.h>

#define CR_MAX_FILES 32      /* a file and the files it includes (each once, however often included) */
#define CR_MAX_SPANS 128     /* runs of one file's lines in the text libconfig reads */
#define CR_MAX_DEPTH 10      /* includes within includes (libconfig's own limit) */
#define CR_PATH_LEN 256
#define CR_AT_LEN (CR_PATH_LEN + 16)

/* Where each line of the text libconfig read came from (config_setting_source_line() gives lines
 * of that text). Empty (no files) before a load. */
struct cr_sources {
	unsigned n_files, n_spans;
	char files[CR_MAX_FILES][CR_PATH_LEN]; /* [0]: the file itself, as it was named */
	struct cr_span {
		unsigned first;               /* from this line of the text on ... */
		unsigned file, line;          /* ... lines of files[file] from this one */
	} spans[CR_MAX_SPANS];
};

struct config_reader {
	const char *file;             /* name used in messages */
	const char *what;             /* what one file holds ("configuration"), for messages */
	char *err;                    /* the error line goes here (never NULL: see cr_init()) */
	size_t errlen;
	char no_err[1];               /* err when the caller passed none */
	struct cr_sources src;        /* where the lines came from */
	unsigned last_line;           /* of the text, with the includes in */
	/* the first integer literal libconfig 1.5 would silently wrap (see cr_load_text()) */
	unsigned ovf_line;
	char ovf_text[48];
	int ovf_wrapped;
	int ovf_kind;                 /* 0 none, 1 decimal 32-bit, 2 hex 32-bit, 3 64-bit */
};

/* name: the file's name in messages (NULL: "(string)"); err may be NULL. */
void cr_init(struct config_reader *r, const char *name, char *err, size_t errlen, const char *what);
/* Reads the file `path` (r's name, from cr_init) with the files it includes, checks the text for
 * what libconfig 1.5 would let pass silently, parses it and hands the root group to
 * load_root(arg, root). 0, or -1 with the error line written. */
int cr_load_file(struct config_reader *r, const char *path,
		 int (*load_root)(void *arg, const config_setting_t *root), void *arg);
/* The same for text held in memory, which has no folder to find included files in: @include is
 * an error there. */
int cr_load_text(struct config_reader *r, const char *text, int (*load_root)(void *arg, const config_setting_t *root),
		 void *arg);
/* The same as cr_load_file(), leaving the tree in *lc for the caller, who config_destroy()s it
 * whatever the outcome. */
int cr_parse_file(struct config_reader *r, const char *path, config_t *lc);
/* The whole file, NUL-terminated, to free(); NULL with "PATH: cannot read: why" in err. */
char *cr_read_file(const char *path, char *err, size_t errlen);

/* ---- where a line came from ------------------------------------------------------------------ */

/* The file (and, in *line, its line) that line `text_line` of the text libconfig read came from;
 * NULL (and *line = text_line) when s is empty. */
const char *cr_source(const struct cr_sources *s, unsigned text_line, unsigned *line);
/* "FILE:LINE" of text_line; `file` stands for the file when s is empty. */
const char *cr_where(const struct cr_sources *s, const char *file, unsigned text_line, char *buf, size_t len);
/* For messages that point at another setting: "line N" while the text is one file, "FILE:N"
 * once it includes others. */
const char *cr_at(const struct config_reader *r, unsigned text_line, char buf[CR_AT_LEN]);

/* ---- messages: each returns -1, so that `return cr_fail(...)` reports and fails ---------------- */

/* An error at setting s (NULL: line 1, the top). */
int cr_fail(struct config_reader *r, const config_setting_t *s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* An error about member `key` of group g: at the member if it is written, else at the group. */
int cr_fail_member(struct config_reader *r, const config_setting_t *g, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A user's string, shortened and with control characters replaced, so that the error stays
 * one short line whatever the file holds. */
const char *cr_shown(const char *s, char buf[64]);
/* "an integer", "a group", ...: what s is, for "must be X, not Y". */
const char *cr_type_name(const config_setting_t *s);

/* ---- typed getters ---------------------------------------------------------------------------- *
 * cr_opt_*() return 1 when the member is present and valid, 0 when absent (output untouched),
 * -1 after writing an error. The others return 0 or -1. */

int cr_want_type(struct config_reader *r, const config_setting_t *s, int type, const char *what);
/* An integer in lo..hi; hex: the range is shown in hex in the message. */
int cr_int_range(struct config_reader *r, const config_setting_t *s, long long lo, long long hi, bool hex,
		 long long *v);
int cr_opt_int(struct config_reader *r, const config_setting_t *g, const char *key, long long lo, long long hi,
	       bool hex, long long *v);
int cr_opt_u32(struct config_reader *r, const config_setting_t *g, const char *key, long long lo, long long hi,
	       uint32_t *out);
int cr_opt_u64(struct config_reader *r, const config_setting_t *g, const char *key, long long lo, long long hi,
	       uint64_t *out);
/* A finite number; integers are accepted too ("rate_gbps = 10;" means 10.0). */
int cr_float_value(struct config_reader *r, const config_setting_t *s, double *v);
/* A number in [lo, hi], or in (lo, hi] when lo_open. */
int cr_float_range(struct config_reader *r, const config_setting_t *s, double lo, bool lo_open, double hi,
		   double *v);
int cr_opt_float(struct config_reader *r, const config_setting_t *g, const char *key, double lo, bool lo_open,
		 double hi, double *out);
int cr_opt_bool(struct config_reader *r, const config_setting_t *g, const char *key, bool *out);
/* Index of the string value of s in the NULL-terminated names[], or -1 with an error that lists
 * names[] and then `extra` (other forms the caller accepts; may be NULL). */
int cr_pick(struct config_reader *r, const config_setting_t *s, const char *const names[], const char *extra);
/* Member `key` of g, or NULL after "missing (required: what)". */
const config_setting_t *cr_required(struct config_reader *r, const config_setting_t *g, const char *key,
				    const char *what);
/* Rejects members of g not in keys[] (NULL-terminated), so a typo never passes silently. */
int cr_known_keys(struct config_reader *r, const config_setting_t *g, const char *const keys[]);
/* An optional string member of 1..len-1 characters from [A-Za-z0-9._-] (a name, or a file name
 * without folders); 1 when copied into out, 0 absent, -1 after an error. */
int cr_opt_name(struct config_reader *r, const config_setting_t *g, const char *key, char *out, size_t len);
/* A member that must be a group (or absent): 1 present, 0 absent (*out NULL), -1 error. */
int cr_opt_group(struct config_reader *r, const config_setting_t *g, const char *key, const config_setting_t **out);

#endif

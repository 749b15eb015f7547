/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What the three files of the reader share (config_read.c: entry points, messages, getters;
 * config_read_include.c: @include; config_read_syntax.c: the checks before libconfig reads the
 * text). Not part of the contract, which is config_read.h.
 */
#ifndef ROCE_CONFIG_READ_INTERNAL_H
#define ROCE_CONFIG_READ_INTERNAL_H

#include "config_read.h"

/* A file, and the text with everything it includes: larger is refused (a runaway include). */
#define CR_MAX_FILE_SIZE (16u << 20)
#define LIBCONFIG_SYNTAX "https://hyperrealm.github.io/libconfig/libconfig_manual.html#Configuration-Files"

/* ---- config_read.c ---------------------------------------------------------------------------- */

/* Replaces the error's control and non-ASCII bytes, so it stays one line; returns -1. */
int cr_printable(struct config_reader *r);
/* An error at line `text_line` of the text libconfig reads: "FILE:LINE: ..."; returns -1. */
int cr_fail_line(struct config_reader *r, unsigned text_line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- config_read_include.c -------------------------------------------------------------------- */

/* The text libconfig is to read (includes replaced when `includes`, else @include refused), with
 * r->src filled; to free(), NULL after an error. */
char *cr_expanded(struct config_reader *r, const char *text, bool includes);

/* ---- config_read_syntax.c --------------------------------------------------------------------- */

/* Skips a comment or string at *pp: 1 skipped, 0 none there, -1 left open (*open: what). */
int cr_skip_comment_or_string(const char **pp, unsigned *line, const char **open);
/* Notes in r the first integer literal libconfig 1.5 would wrap; cr_report_overflow() reports it
 * once libconfig has read the text (so that the message can name the setting). */
void cr_prescan(struct config_reader *r, const char *text);
int cr_report_overflow(struct config_reader *r, const config_setting_t *root);
/* 0 when text follows libconfig's grammar; else -1 with what was found and what was expected. */
int cr_syntax_fault(struct config_reader *r, const char *text);

#endif

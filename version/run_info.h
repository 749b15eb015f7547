/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What ran: the "run_info" object every JSON report carries (the engine's, roce-suite's and
 * roce-ccsim's; docs/report.md), in one shape, so that a figure can always be traced to the build
 * that measured it, the machine, the moment, the command and the exact configuration:
 *
 *   {"program", "version", "git", "started_utc", "host", "command_line": [...],
 *    "config": {"path", "sha256"} or null}
 *
 * One per process: main() calls run_info_start() first thing, the program names its config with
 * run_info_config() when it reads it, and the report writer takes run_info_json().
 */
#ifndef ROCE_RUN_INFO_H
#define ROCE_RUN_INFO_H

#include <jansson.h>
#include <stddef.h>

#define RUN_INFO_SHA256_HEX 65 /* 64 hex digits and the terminator */

/* The program's start: the UTC time, the host name and a copy of argv as it was given (before any
 * option parser permutes or edits it). */
void run_info_start(int argc, char *const argv[]);
/* The configuration the program runs: its path as given and the SHA-256 of its bytes, read now.
 * 0, or -1 when the file cannot be read (the report then says "sha256": null; the program's own
 * loader reports the error). */
int run_info_config(const char *path);
/* The same for a configuration made in memory (roce-engine's perftest modes), under the name it
 * is loaded by: the hash is of the text's len bytes, as the file's would be. */
void run_info_config_text(const char *path, const char *text, size_t len);
/* A new "run_info" object. */
json_t *run_info_json(void);

/* The SHA-256 of a file's bytes as lowercase hex (nettle). 0, or -1 with errno set. */
int run_info_sha256_file(const char *path, char hex[RUN_INFO_SHA256_HEX]);

#endif

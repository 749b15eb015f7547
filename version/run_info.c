/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The report's "run_info" object (run_info.h). The SHA-256 is nettle's (Debian's nettle-dev).
 */
#include "run_info.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "roce_version.h"

static struct {
	bool started;
	char program[64];
	char started_utc[48];          /* 2026-12-01T19:40:32.123Z */
	char host[256];
	json_t *command_line;
	bool has_config, has_sha256;
	char config[PATH_MAX];
	char sha256[RUN_INFO_SHA256_HEX];
} run;

/* A JSON string of s; jansson takes UTF-8 only, and a command line or a path may be any bytes:
 * then with every byte outside ASCII shown as '?'. */
static json_t *text(const char *s)
{
	json_t *j = json_string(s);
	char *copy;

	if (j || !(copy = strdup(s)))
		return j;
	for (char *c = copy; *c; c++)
		if ((unsigned char)*c >= 0x80)
			*c = '?';
	j = json_string(copy);
	free(copy);
	return j;
}

static void utc_now(char *out, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char secs[24];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(secs, sizeof(secs), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, len, "%s.%03uZ", secs, (unsigned)(ts.tv_nsec / 1000000));
}

void run_info_start(int argc, char *const argv[])
{
	const char *slash = argc > 0 ? strrchr(argv[0], '/') : NULL;

	utc_now(run.started_utc, sizeof(run.started_utc));
	if (gethostname(run.host, sizeof(run.host)) != 0)
		run.host[0] = '\0';
	run.host[sizeof(run.host) - 1] = '\0';
	snprintf(run.program, sizeof(run.program), "%s", argc > 0 ? (slash ? slash + 1 : argv[0]) : "");
	json_decref(run.command_line);
	run.command_line = json_array();
	for (int i = 0; i < argc; i++)
		json_array_append_new(run.command_line, text(argv[i]));
	run.started = true;
}

static void sha256_hex(struct sha256_ctx *ctx, char hex[RUN_INFO_SHA256_HEX])
{
	uint8_t digest[SHA256_DIGEST_SIZE];

	sha256_digest(ctx, sizeof(digest), digest);
	for (unsigned i = 0; i < sizeof(digest); i++)
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);
}

int run_info_sha256_file(const char *path, char hex[RUN_INFO_SHA256_HEX])
{
	uint8_t buf[65536];
	struct sha256_ctx ctx;
	FILE *f = fopen(path, "rb");
	size_t n;
	int bad;

	if (!f)
		return -1;
	sha256_init(&ctx);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sha256_update(&ctx, n, buf);
	bad = ferror(f);
	fclose(f);
	if (bad) {
		errno = EIO;
		return -1;
	}
	sha256_hex(&ctx, hex);
	return 0;
}

int run_info_config(const char *path)
{
	run.has_config = true;
	snprintf(run.config, sizeof(run.config), "%s", path);
	run.has_sha256 = run_info_sha256_file(path, run.sha256) == 0;
	return run.has_sha256 ? 0 : -1;
}

void run_info_config_text(const char *path, const char *text, size_t len)
{
	struct sha256_ctx ctx;

	run.has_config = run.has_sha256 = true;
	snprintf(run.config, sizeof(run.config), "%s", path);
	sha256_init(&ctx);
	sha256_update(&ctx, len, (const uint8_t *)text);
	sha256_hex(&ctx, run.sha256);
}

static json_t *string_or_null(bool known, const char *s)
{
	return known ? text(s) : json_null();
}

json_t *run_info_json(void)
{
	json_t *o = json_object();

	json_object_set_new(o, "program", string_or_null(run.started, run.program));
	json_object_set_new(o, "version", json_string(ROCE_VERSION));
	json_object_set_new(o, "git", string_or_null(ROCE_GIT_DESCRIBE[0], ROCE_GIT_DESCRIBE));
	json_object_set_new(o, "started_utc", string_or_null(run.started, run.started_utc));
	json_object_set_new(o, "host", string_or_null(run.started && run.host[0], run.host));
	json_object_set_new(o, "command_line", run.command_line ? json_copy(run.command_line) : json_array());
	json_object_set_new(o, "config", run.has_config ? json_pack("{s:o,s:o}", "path", text(run.config), "sha256",
								    string_or_null(run.has_sha256, run.sha256))
							: json_null());
	return o;
}

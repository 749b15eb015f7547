/* SPDX-License-Identifier: BSD-3-Clause */
/* For targets whose input is two files (fuzz_cluster: a cluster file and its pairs file;
 * fuzz_suite: a suite file and its cluster file): the input split at its first line "----" into
 * the two, and the one-line error both loaders must give. Include it in the target's one source
 * file, after fuzz_require.h. */
#ifndef FUZZ_TWO_FILES_H
#define FUZZ_TWO_FILES_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void fuzz_write_file(const char *path, const uint8_t *d, size_t n)
{
	FILE *f = fopen(path, "wb");

	REQUIRE(f != NULL);
	if (n)
		REQUIRE(fwrite(d, 1, n, f) == n);
	fclose(f);
}

/* The input up to a line "----" into first, the rest into second (no such line: second removed). */
static void fuzz_two_files(const uint8_t *data, size_t size, const char *first, const char *second)
{
	const uint8_t *sep = NULL;

	for (size_t i = 0; i + 6 <= size && !sep; i++)
		if (!memcmp(data + i, "\n----\n", 6))
			sep = data + i;
	fuzz_write_file(first, data, sep ? (size_t)(sep - data) + 1 : size);
	if (sep)
		fuzz_write_file(second, sep + 6, size - (size_t)(sep + 6 - data));
	else
		unlink(second);
}

/* One NUL-terminated line of printable ASCII that names a file of folder dir, then a colon. */
static void fuzz_check_error_line(const char *err, const char *dir)
{
	size_t n = strlen(err);

	REQUIRE(n > 0 && err[n - 1] != '\n');
	for (size_t i = 0; i < n; i++)
		REQUIRE(err[i] >= 0x20 && err[i] < 0x7f);
	REQUIRE(!strncmp(err, dir, strlen(dir)) && strchr(err + strlen(dir), ':'));
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "out_file.h"

int out_make_dirs(const char *path)
{
	char dir[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, path, n + 1);
	for (char *p = dir + 1; *p; p++) { /* every prefix ending at a '/', the file's own name left out */
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

FILE *out_fopen(const char *path)
{
	return out_make_dirs(path) ? NULL : fopen(path, "w");
}

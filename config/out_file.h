/* SPDX-License-Identifier: BSD-3-Clause */
/* The engine's output files (report, captures, traces, time series): the folders of a path are
 * made when missing, as `mkdir -p` would, so that a shipped config writing results/... runs from
 * any working directory. */
#ifndef ENGINE_OUT_FILE_H
#define ENGINE_OUT_FILE_H

#include <stdio.h>

/* Makes the folders of path's directory part that do not exist (0755). 0, or -1 with errno set;
 * an existing non-directory in the way is left for the open that follows to report. */
int out_make_dirs(const char *path);
/* fopen(path, "w") after out_make_dirs. */
FILE *out_fopen(const char *path);

#endif

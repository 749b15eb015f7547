/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Per-interval time series (run.timeseries = "FILE.csv", docs/monitoring.md): at every stats
 * interval the main lcore writes a row per port and per flow group — rates, CNPs, PFC received and
 * paused time, latency percentiles of the interval, the mean congestion-control rate — whether the
 * live lines are printed or not. scripts/plot-run.py turns the file into PNG plots.
 */
#ifndef ROCE_ENGINE_TIMESERIES_H
#define ROCE_ENGINE_TIMESERIES_H

#include <stdio.h>

struct run_view;
struct timeseries;

/* Opens the file (a path that cannot be written stops the run first thing); NULL without a
 * timeseries setting or on error (err set, *failed true). */
struct timeseries *timeseries_open(const struct run_view *run, char *err, size_t errlen, int *failed);
/* The rows of the interval ending at t_s (seconds since the flows started). */
void timeseries_rows(struct timeseries *ts, const struct run_view *run, double t_s);
/* Rows written so far. */
unsigned long timeseries_count(const struct timeseries *ts);
/* Closes the file; returns the rows written. */
unsigned long timeseries_close(struct timeseries *ts);

#endif

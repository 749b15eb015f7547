/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Pacing time: TSC cycles in fixed point, the unit every paced sender keeps its next send time in
 * (the QPs, the egress schedulers, the lab switch's emulated links). Set-up and control paths
 * convert rates with pace_fp_per_byte; the hot paths only add and compare.
 */
#ifndef ROCE_PMD_GLUE_PACE_TIME_H
#define ROCE_PMD_GLUE_PACE_TIME_H

#include <stdint.h>

/* TSC cycles << PACE_SHIFT keeps sub-cycle intervals exact enough for 1% accuracy at 1 Mb/s and
 * at 100 Gb/s alike. */
#define PACE_SHIFT 16

/* The time a byte takes at a rate in Gb/s, TSC cycles << PACE_SHIFT (0 for no rate). */
static inline uint64_t pace_fp_per_byte(double gbps, uint64_t tsc_hz)
{
	return gbps > 0 ? (uint64_t)((double)tsc_hz * 8.0 / (gbps * 1e9) * (double)(1u << PACE_SHIFT)) : 0;
}

#endif

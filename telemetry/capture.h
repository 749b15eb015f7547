/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Captures to pcapng (`--capture FILE.pcapng`, run.capture*): the writer. The lcores' taps
 * (pmd_glue/frame_tap.h) copy the frames they send and receive — all, or one in `capture_every`
 * per port and direction — with DPDK's rte_pcapng (each with its port as the interface, its
 * direction and the TSC time of the burst) and pass them over a single-producer ring per lcore to
 * the main lcore, which writes them here and frees them back to the lcore's pool.
 * docs/monitoring.md.
 */
#ifndef ROCE_ENGINE_CAPTURE_H
#define ROCE_ENGINE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "frame_tap.h" /* the lcores' side: struct capture_lcore, capture_burst, capture_free */

struct run_view;
/* Opens the file first thing (a path that cannot be written stops the run before anything else,
 * as a bad report path does). 0, or -1 with err. */
int capture_open(struct run_view *run, char *err, size_t errlen);
/* Once the ports exist (the file's interface blocks name them), makes a tap for every lcore with
 * work (run->taps[lcore]: the engine hands them to the lcores and frees them). */
int capture_start(struct run_view *run, char *err, size_t errlen);
/* Main lcore: writes what the rings hold. */
void capture_drain(struct run_view *run);
/* After the lcores stopped: the last frames, the file closed, run->capture_dropped summed. */
void capture_finish(struct run_view *run);
/* Copies of DPDK port `port_id`'s frames dropped so far, over the lcores (any time: relaxed reads). */
uint64_t capture_dropped_on(const struct run_view *run, uint16_t port_id);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The engine's control interface while it runs: DPDK telemetry commands (read them with
 * dpdk-telemetry.py, or any client of /var/run/dpdk/<file prefix>/dpdk_telemetry.v2):
 *   /roce/flows                 the flow groups, their QPs, rates and packets sent
 *   /roce/flow_rate,NAME,GBPS   sets the rate of every QP of flow group NAME (paced by Gb/s)
 *   /roce/egress,PORT,TC,WEIGHT[,SHAPE_GBPS]  a traffic class's ETS weight (and shaper, 0: none)
 *   /roce/cc[,NAME]             congestion control: rates, CNPs, cuts per group, first QPs' state,
 *                               and the ports' notification points
 *   /roce/cc_set,NAME,PARAMETER,VALUE  one DCQCN / TIMELY parameter of a running group
 *   /roce/ports                 per port: driver, link, packet, byte, drop, CNP and ECN-CE counters;
 *                               tx/rx Gb/s and Mpps since the previous /roce/ports (the first: since
 *                               the run started)
 *   /roce/latency[,NAME]        latency (count, min, mean, percentiles, max in ns) per port and per
 *                               flow group that measures it; with NAME that group's first 16 QPs
 *   /roce/pfc                   per port and priority: PFC received, XOFF received, time paused, PFC
 *                               sent; generator frames; threshold XOFF/XON (qos.pfc_xoff)
 * Ports and flow groups are objects keyed by their index in the config, with a "name" value:
 * DPDK 22.11 refuses '-' (and anything but [A-Za-z0-9_/]) in keys, which the config's names allow.
 * The callbacks run in EAL's telemetry threads (one per client); QP rates are published with
 * atomic stores that the owning lcores pick up at their next packet. control_detach waits for the
 * commands in progress. docs/monitoring.md#telemetry.
 */
#ifndef ROCE_ENGINE_CONTROL_H
#define ROCE_ENGINE_CONTROL_H

#include <stdbool.h>

struct run_view;

/* The changes the commands and the config's phases make (from the main lcore or the telemetry
 * thread): a flow group's per-QP rate; a traffic class's ETS weight and shaper on a port. */
void control_set_flow_rate(struct run_view *run, unsigned group, double gbps);
void control_set_egress(struct run_view *run, unsigned port, unsigned tc, unsigned weight, bool set_shape,
			double shape_gbps);

/* Registers the commands (once per process) and points them at this engine. */
void control_attach(struct run_view *run);
/* For other readers of the running engine (the HTTP exporter's thread): the attached engine, held
 * until control_leave, or NULL when none runs. */
struct run_view *control_enter(void);
void control_leave(void);
/* After control_detach: points readers at the finished engine again, to serve its final numbers
 * until the next control_detach (run.http_linger_s). */
void control_attach_final(struct run_view *run);
/* The engine is going away: waits for the commands in progress; later ones answer that nothing
 * runs. */
void control_detach(void);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The report's `switch` (the virtual lab's switch) and `fabric` (the virtual fabric: its
 * switches, its links in both directions, its ECMP groups' balance) sections; docs/report.md.
 */
#ifndef ROCE_TELEMETRY_REPORT_SWITCH_H
#define ROCE_TELEMETRY_REPORT_SWITCH_H

#include <jansson.h>
#include <stdint.h>

#include "run_view.h"

struct switch_rt;

json_t *report_switch_json(const struct run_view *run, const struct switch_rt *s);
/* The deadlocks the run found: all so far while it runs, then those that began before its end
 * (the drain's are not the run's; those beyond the list's room count as found). */
unsigned report_fabric_deadlocks(const struct run_view *run);
/* secs: the run's duration (links' rates and utilisation) */
json_t *report_fabric_json(const struct run_view *run, double secs);
/* A fabric whose switches are outside the engine (fabric.external): its kind and NICs. */
json_t *report_fabric_external_json(const struct run_view *run);
/* One direction of a fabric link as counted at now: sent by a switch port, or by a NIC (what its
 * leaf's port received); received by a switch (xoff_sent, dropped are its) or by a NIC. */
struct fab_link_dir {
	const char *from, *to;
	uint64_t frames, bytes, marked, dropped;
	uint64_t paused_ns[8], xoff_sent[8];
	uint64_t cpu_lost_tsc;        /* the sender's (switch port's or NIC's) link time lost to its lcore */
	uint64_t queue_bytes;         /* what the sending switch port has queued now, every class */
	const struct switch_rt *rx_sw; /* the receiving switch and port, or NULL (a NIC receives) */
	const struct sw_port *rx_port;
	bool to_switch, from_switch;
};
void report_fabric_link_dir(const struct run_view *run, unsigned link, bool a_to_b, uint64_t now_tsc,
			    struct fab_link_dir *d);
/* A link direction's use of its rate: frames with preamble, FCS and gap over secs at gbps. */
double fabric_link_utilization(uint64_t frames, uint64_t bytes, double secs, double gbps);
/* [v0, v1, ...] (report.c) */
json_t *u64_array(const uint64_t *v, unsigned n);

#endif

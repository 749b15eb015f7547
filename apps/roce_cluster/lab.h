/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The built-in local lab (cluster.lab): every rank's port is a net_memif client on a socket of
 * the job's folder, whose server is a port of the virtual lab switch (docs/virtual-lab.md) that
 * rank 0 runs as an engine process of its own for the whole job. memif needs no kernel in the
 * path and outlives each step's engine (a client reconnects to the server at every step; DPDK
 * 22.11's client never reconnects to a restarted server, so the long-lived end is the server).
 * Rank r: MAC 02:00:00:cc:RR:RR, address 10.77.R/16 + 1 (10.77.0.1 for rank 0).
 */
#ifndef ROCE_CLUSTER_LAB_H
#define ROCE_CLUSTER_LAB_H

#include <stddef.h>
#include <sys/types.h>

#include "cluster.h"
#include "step.h"

/* Rank r's port in the lab, into ep (device, vdev_args, MAC, address, rate, MTU). */
void lab_endpoint(const struct cluster_cfg *c, unsigned rank, const char *sock_dir, struct cl_endpoint *ep);
/* The switch's engine config (with the lab's switch group and every rank's MAC in its FDB)
 * written to dir/switch.cfg and started there; waits until every socket is made. Its pid, or -1
 * with err. */
pid_t lab_switch_start(const struct cluster_cfg *c, const struct cl_endpoint *ep, unsigned n, const char *engine,
		       const char *dir, const char *sock_dir, const char *job, int cpu, char *err, size_t errlen);
/* SIGTERM, a wait for its report (switch.json in its folder), SIGKILL after a grace. */
void lab_switch_stop(pid_t pid);

#endif

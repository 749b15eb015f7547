/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Steering RoCE traffic to the engine's queues with rte_flow.
 *
 * On a bifurcated NIC (NVIDIA ConnectX with mlx5) frames the engine does not claim go to the
 * kernel, whose RDMA stack would otherwise take UDP 4791. The engine claims UDP 4791 (spread over
 * its RX queues by RSS on the UDP ports, which carry the QP pair's entropy) and MAC-control
 * frames (PFC, PAUSE) with rte_flow rules; in flow-isolated mode nothing else reaches it.
 * Virtual devices have no rte_flow: steering is off for them.
 */
#ifndef ROCE_PMD_GLUE_STEERING_H
#define ROCE_PMD_GLUE_STEERING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STEERING_MAX_RULES 4

struct rte_flow;

struct steering {
	unsigned n_rules;
	struct rte_flow *rules[STEERING_MAX_RULES];
};

/* Flow-isolated mode must be asked for before the port is configured. */
int steering_isolate(uint16_t port_id, const char *port_name, char *err, size_t errlen);
/* Installs the rules on a started port with `rx_queues` queues. -1 with the PMD's reason. */
int steering_install(uint16_t port_id, const char *port_name, unsigned rx_queues, bool ipv4, bool ipv6,
		     struct steering *st, char *err, size_t errlen);
void steering_remove(uint16_t port_id, struct steering *st);

#endif

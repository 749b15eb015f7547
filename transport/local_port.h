/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Which of the engine's ports a MAC address is: a flow group whose destination is one of them
 * is answered here (the RC responder, the notification point's peer QPs). Set-up only.
 */
#ifndef ROCE_ENGINE_LOCAL_PORT_H
#define ROCE_ENGINE_LOCAL_PORT_H

#include <stdint.h>
#include <string.h>

#include "config.h"

/* The index of the port whose MAC is `mac` among the n_ports `port_macs`, or -1. */
static inline int local_port_of(const uint8_t mac[6], const uint8_t port_macs[][6], unsigned n_ports)
{
	for (unsigned p = 0; p < n_ports; p++)
		if (!memcmp(port_macs[p], mac, 6))
			return (int)p;
	return -1;
}

/* The local port a flow group's frames are for: the fabric NIC its `dst` named (its frames carry
 * the gateway's MAC), else the port whose MAC is its dst_mac; -1: none of ours. */
static inline int flow_dst_port(const struct cfg_flow_group *g, const uint8_t port_macs[][6], unsigned n_ports)
{
	return g->has_dst_port ? (int)g->dst_port : local_port_of(g->dst_mac, port_macs, n_ports);
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_flow.h>

#include "steering.h"
#include "wire.h"

int steering_isolate(uint16_t port_id, const char *port_name, char *err, size_t errlen)
{
	struct rte_flow_error fe = {0};

	if (rte_flow_isolate(port_id, 1, &fe) == 0)
		return 0;
	snprintf(err, errlen, "port %s: flow-isolated mode refused by the PMD: %s", port_name,
		 fe.message ? fe.message : "not supported");
	return -1;
}

/* ETH / IPv4|IPv6 / UDP dst 4791 -> RSS over every RX queue on the UDP ports. */
static struct rte_flow *roce_rule(uint16_t port_id, bool v6, unsigned rx_queues, struct rte_flow_error *fe)
{
	static const struct rte_flow_attr attr = {.ingress = 1};
	struct rte_flow_item_udp udp_spec = {.hdr.dst_port = RTE_BE16(WIRE_ROCEV2_UDP_PORT)};
	struct rte_flow_item_udp udp_mask = {.hdr.dst_port = RTE_BE16(0xFFFF)};
	struct rte_flow_item pattern[] = {
		{.type = RTE_FLOW_ITEM_TYPE_ETH},
		{.type = v6 ? RTE_FLOW_ITEM_TYPE_IPV6 : RTE_FLOW_ITEM_TYPE_IPV4},
		{.type = RTE_FLOW_ITEM_TYPE_UDP, .spec = &udp_spec, .mask = &udp_mask},
		{.type = RTE_FLOW_ITEM_TYPE_END},
	};
	uint16_t queues[16];
	struct rte_flow_action_rss rss = {
		.types = (v6 ? RTE_ETH_RSS_NONFRAG_IPV6_UDP : RTE_ETH_RSS_NONFRAG_IPV4_UDP) | RTE_ETH_RSS_L4_SRC_ONLY,
		.queue_num = rx_queues,
		.queue = queues,
	};
	struct rte_flow_action_queue q0 = {.index = 0};
	struct rte_flow_action actions[] = {
		{.type = rx_queues > 1 ? RTE_FLOW_ACTION_TYPE_RSS : RTE_FLOW_ACTION_TYPE_QUEUE,
		 .conf = rx_queues > 1 ? (const void *)&rss : (const void *)&q0},
		{.type = RTE_FLOW_ACTION_TYPE_END},
	};

	for (unsigned i = 0; i < rx_queues && i < 16; i++)
		queues[i] = (uint16_t)i;
	if (rte_flow_validate(port_id, &attr, pattern, actions, fe))
		return NULL;
	return rte_flow_create(port_id, &attr, pattern, actions, fe);
}

/* EtherType 0x8808 (PFC, PAUSE) -> queue 0, where the PFC state machines read them. */
static struct rte_flow *mac_control_rule(uint16_t port_id, struct rte_flow_error *fe)
{
	static const struct rte_flow_attr attr = {.ingress = 1};
	struct rte_flow_item_eth spec = {.hdr.ether_type = RTE_BE16(WIRE_ETHERTYPE_MAC_CONTROL)};
	struct rte_flow_item_eth mask = {.hdr.ether_type = RTE_BE16(0xFFFF)};
	struct rte_flow_item pattern[] = {
		{.type = RTE_FLOW_ITEM_TYPE_ETH, .spec = &spec, .mask = &mask},
		{.type = RTE_FLOW_ITEM_TYPE_END},
	};
	struct rte_flow_action_queue q0 = {.index = 0};
	struct rte_flow_action actions[] = {
		{.type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &q0},
		{.type = RTE_FLOW_ACTION_TYPE_END},
	};

	if (rte_flow_validate(port_id, &attr, pattern, actions, fe))
		return NULL;
	return rte_flow_create(port_id, &attr, pattern, actions, fe);
}

int steering_install(uint16_t port_id, const char *port_name, unsigned rx_queues, bool ipv4, bool ipv6,
		     struct steering *st, char *err, size_t errlen)
{
	struct rte_flow_error fe = {0};
	struct rte_flow *f;
	const char *what = NULL;

	memset(st, 0, sizeof(*st));
	if (ipv4 && !(f = roce_rule(port_id, false, rx_queues, &fe)))
		what = "UDP 4791 over IPv4";
	else if (ipv4)
		st->rules[st->n_rules++] = f;
	if (!what && ipv6 && !(f = roce_rule(port_id, true, rx_queues, &fe)))
		what = "UDP 4791 over IPv6";
	else if (!what && ipv6)
		st->rules[st->n_rules++] = f;
	if (!what && !(f = mac_control_rule(port_id, &fe)))
		what = "MAC control (EtherType 0x8808)";
	else if (!what)
		st->rules[st->n_rules++] = f;
	if (!what)
		return 0;
	snprintf(err, errlen, "port %s: the PMD refuses the rte_flow rule for %s: %s (set steering = \"off\" to run "
		 "without it)", port_name, what, fe.message ? fe.message : "not supported");
	steering_remove(port_id, st);
	return -1;
}

void steering_remove(uint16_t port_id, struct steering *st)
{
	struct rte_flow_error fe;

	for (unsigned i = 0; i < st->n_rules; i++)
		rte_flow_destroy(port_id, st->rules[i], &fe);
	st->n_rules = 0;
}

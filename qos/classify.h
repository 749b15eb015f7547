/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Classification: which priority (0..7) a frame belongs to, from its DSCP (trust "dscp") or its
 * 802.1Q PCP (trust "pcp"), and which traffic class a priority is served in. The defaults follow
 * the usual RoCE deployment (NVIDIA's trust-DSCP map, priority = DSCP >> 3: RoCE data DSCP 26 on
 * priority 3, CNPs DSCP 48 on priority 6; one traffic class per priority). docs/qos.md.
 * Plain C, no EAL.
 */
#ifndef ROCE_QOS_CLASSIFY_H
#define ROCE_QOS_CLASSIFY_H

#include <stdbool.h>
#include <stdint.h>

#define QOS_PRIORITIES 8

enum qos_trust { QOS_TRUST_DSCP, QOS_TRUST_PCP };

struct qos_map {
	enum qos_trust trust;
	uint8_t dscp_to_prio[64];
	uint8_t prio_to_tc[QOS_PRIORITIES];
};

/* The defaults above. */
void qos_map_default(struct qos_map *m);

/* The priority of a frame with this DSCP and, when it has a VLAN tag, this PCP. Trust "pcp"
 * with no tag gives priority 0 (what a switch does with an untagged frame on a PCP-trusting port). */
static inline uint8_t qos_priority(const struct qos_map *m, uint8_t dscp, bool tagged, uint8_t pcp)
{
	if (m->trust == QOS_TRUST_PCP)
		return tagged ? (uint8_t)(pcp & 7) : 0;
	return m->dscp_to_prio[dscp & 63];
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
#include "classify.h"

void qos_map_default(struct qos_map *m)
{
	m->trust = QOS_TRUST_DSCP;
	for (unsigned d = 0; d < 64; d++)
		m->dscp_to_prio[d] = (uint8_t)(d >> 3);
	for (unsigned p = 0; p < QOS_PRIORITIES; p++)
		m->prio_to_tc[p] = (uint8_t)p;
}

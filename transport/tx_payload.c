/* SPDX-License-Identifier: BSD-3-Clause */
#include <rte_errno.h>

#include "tx_payload.h"

int tx_payload_dirty_off = -1;

int tx_payload_register(void)
{
	static const struct rte_mbuf_dynfield field = {
		.name = "roce_engine_tx_icrc_at",
		.size = sizeof(uint16_t),
		.align = __alignof__(uint16_t),
	};

	if (tx_payload_dirty_off < 0)
		tx_payload_dirty_off = rte_mbuf_dynfield_register(&field);
	return tx_payload_dirty_off < 0 ? -1 : 0;
}

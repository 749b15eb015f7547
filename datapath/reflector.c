/* SPDX-License-Identifier: BSD-3-Clause */
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "counters.h"
#include "lcore.h"
#include "reflector.h"

unsigned reflect_poll(struct reflect_role *r)
{
	struct rte_mbuf *burst[ENGINE_BURST];
	uint16_t n = rte_eth_rx_burst(r->port_id, r->queue, burst, ENGINE_BURST), sent;

	if (n == 0)
		return 0;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_ether_hdr *eh = rte_pktmbuf_mtod(burst[i], struct rte_ether_hdr *);
		struct rte_ether_addr a = eh->src_addr;

		if (burst[i]->data_len < sizeof(*eh))
			continue; /* a runt: sent back as it is */
		eh->src_addr = eh->dst_addr;
		eh->dst_addr = a;
	}
	sent = rte_eth_tx_burst(r->port_id, r->queue, burst, n);
	STAT_ADD(r->reflected, sent);
	if (sent < n) {
		STAT_ADD(r->dropped, (uint64_t)(n - sent));
		rte_pktmbuf_free_bulk(burst + sent, (unsigned)(n - sent));
	}
	return n;
}

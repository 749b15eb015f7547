/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Port bring-up: find the DPDK port of a configured device, configure its queues with a
 * mempool sized for them, apply MAC and MTU, start it, and report what it can and cannot do.
 */
#ifndef ROCE_PMD_GLUE_PORT_H
#define ROCE_PMD_GLUE_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "steering.h"

struct rte_mempool;
struct cfg_port;

struct port_info {
	uint16_t port_id;
	char name[32];          /* the config's name */
	char driver[32];
	uint8_t mac[6];
	double link_speed_gbps; /* configured, else the PMD's */
	unsigned socket;
	unsigned rx_queues, tx_queues;
	struct rte_mempool *pool;
	bool started;
	struct steering steering;
	struct port_clock clock;  /* where its RX times come from (clock.h) */
	char nic_pfc_state[64];   /* the NIC's own PFC: "", "set on N priorities", "not available (...)" */
	char steering_state[96]; /* what the start-up line says about it */
};

/* Mbufs a port needs: its descriptors, per-lcore caches and in-flight bursts. */
unsigned port_pool_size(const struct cfg_port *cp, unsigned n_lcores);
/* A TX role's own pool: only that role takes mbufs from it (raw, without rte_pktmbuf_reset),
 * and nobody but the PMD and a peer's RX (which free them) touches their headers, so the fields
 * rte_pktmbuf_init set stay as they were and a packet needs only its lengths written. */
unsigned port_tx_pool_size(const struct cfg_port *cp);
struct rte_mempool *port_tx_pool_create(const struct cfg_port *cp, unsigned lcore, unsigned role, unsigned socket);
/* Brings one port up. On error returns -1 with a one-line reason in err. */
int port_setup(const struct cfg_port *cp, unsigned n_lcores, struct port_info *out, char *err, size_t errlen);
/* Stops and closes the port (its queues' mbufs go back to the pool); the pool stays. */
void port_teardown(struct port_info *p);
/* One line on stdout: driver, MAC, speed, queues, offloads that matter to the engine. */
void port_print_capabilities(const struct port_info *p);

#endif

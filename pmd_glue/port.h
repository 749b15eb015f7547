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
	char kernel_iface[32];   /* net_af_packet: the kernel interface (its link is the port's), else "" */
	bool gated;              /* net_memif: bursts go through the control-thread gate (below) */
};

/* Mbufs a port needs: its descriptors, per-lcore caches and in-flight bursts. */
unsigned port_pool_size(const struct cfg_port *cp, unsigned n_lcores);
/* A TX role's own pool: only that role takes mbufs from it (raw, without rte_pktmbuf_reset),
 * and nobody but the PMD and a peer's RX (which free them) touches their headers, so the fields
 * rte_pktmbuf_init set stay as they were and a packet needs only its lengths written. */
unsigned port_tx_pool_size(const struct cfg_port *cp);
/* Whether the port's frames may be received by this same process (the in-process `ring:` cable,
 * or a net_ring vdev), where they can be changed in place before their mbufs return. */
bool port_frames_stay_local(const struct cfg_port *cp);
/* zeroed: every data room set to zero once (transport/tx_payload.h keeps them so). */
struct rte_mempool *port_tx_pool_create(const struct cfg_port *cp, unsigned lcore, unsigned role, unsigned socket,
					 bool zeroed);
/* Brings one port up. On error returns -1 with a one-line reason in err. */
int port_setup(const struct cfg_port *cp, unsigned n_lcores, struct port_info *out, char *err, size_t errlen);
/* Stops and closes the port (its queues' mbufs go back to the pool); the pool stays. */
void port_teardown(struct port_info *p);
/* One line on stdout: driver, MAC, speed, queues, offloads that matter to the engine. */
void port_print_capabilities(const struct port_info *p);

/* The port's link, for the main lcore (never from a worker): 1 up, 0 down, -1 unknown. From
 * rte_eth_link_get_nowait, except on net_af_packet, whose PMD (22.11) reports up whatever the
 * kernel interface does: there, the interface's IFF_UP and IFF_RUNNING (carrier). */
int port_link_up(const struct port_info *p);

/* The control-thread gate (net_memif in DPDK 22.11). The memif PMD connects and disconnects in
 * EAL's interrupt thread with no synchronisation against the queues' bursts: a peer that goes
 * away makes that thread unmap the shared rings and free their regions while a worker lcore may
 * be inside rte_eth_rx_burst / tx_burst on them (SIGSEGV in the worker); a peer that connects
 * can be seen half set up. The gate closes the race from outside the PMD:
 * - the port's fast-path functions are wrapped (rte_eth_fp_ops): a worker marks its queue busy
 *   around each burst, and makes none while the gate is closed (it waits up to 100 us, then the
 *   burst returns 0: the frames stay with the caller, as with a full ring);
 * - the interrupt thread is parked in a callback of the gate's own, so it runs memif's handlers
 *   only during port_gate_window(): the gate closed, every gated queue idle. */
/* Starts parking the interrupt thread (when some port is gated; before the workers start).
 * 0, or -1 with a reason in err. */
int port_gate_start(char *err, size_t errlen);
/* One window for the interrupt thread (main lcore, every few ms): true when it ran, false when
 * it could not yet (a queue stayed busy, or the thread did not come back in time: the gate
 * stays closed and the next call goes on). */
bool port_gate_window(void);
/* Lets the interrupt thread run freely again (the workers have stopped). Safe to call twice. */
void port_gate_stop(void);
/* Whether the gate is parking the interrupt thread (some port is gated): it then needs a window
 * every few milliseconds. */
bool port_gate_active(void);

#endif

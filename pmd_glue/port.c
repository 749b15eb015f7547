/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "config.h"
#include "mbuf_pool.h"
#include "port.h"
#include "steering.h"

#define MBUF_CACHE 256
#define BURST_SLACK 512 /* mbufs held in TX pending buffers and RX bursts per lcore */
/* L2 header, one VLAN tag and the FCS around the IP MTU */
#define L2_OVERHEAD (14 + 4 + 4)

unsigned port_pool_size(const struct cfg_port *cp, unsigned n_lcores)
{
	return cp->rx_queues * cp->rx_desc + cp->tx_queues * cp->tx_desc + n_lcores * (MBUF_CACHE + BURST_SLACK) +
	       cp->extra_mbufs;
}

/* The frames a "ring:" cable holds each way: its cable_frames (a fabric NIC's: what its leaf's
 * headroom can take at once), else as many as the port has descriptors. */
static unsigned cable_frames(const struct cfg_port *cp)
{
	if (cp->cable_frames)
		return cp->cable_frames;
	return cp->rx_desc > cp->tx_desc ? cp->rx_desc : cp->tx_desc;
}

/* "ring:LINK:a" and "ring:LINK:b" are the two ends of a virtual cable inside one process: two
 * rte_rings per queue, crossed, so that what end a sends end b receives and back. (DPDK's
 * net_ring vdev gives a port whose TX ring is its own RX ring: a loopback, not a pair.)
 * The ethdev is not named after the device: rte_eth_from_rings() makes the vdev
 * "net_ring_NAME", which must fit RTE_RING_NAMESIZE (28 characters), and "ring:LINK:a" with
 * a LINK of 13..20 characters does not. A number of its own per end always does. */
static int ring_pair_port(const struct cfg_port *cp, uint16_t *port_id, char *err, size_t errlen)
{
	static unsigned ends_made;
	char link[21], side, rname[RTE_RING_NAMESIZE], ename[RTE_RING_NAMESIZE];
	struct rte_ring *rx[16], *tx[16];
	unsigned nq = cp->rx_queues > cp->tx_queues ? cp->rx_queues : cp->tx_queues;
	int id;

	if (sscanf(cp->device, "ring:%20[A-Za-z0-9_-]:%c", link, &side) != 2 || (side != 'a' && side != 'b') ||
	    nq > 16) {
		snprintf(err, errlen, "port %s: device '%s': expected ring:LINK:a or ring:LINK:b", cp->name, cp->device);
		return -1;
	}
	for (unsigned q = 0; q < nq; q++) {
		for (int dir = 0; dir < 2; dir++) { /* dir 0: a->b, 1: b->a */
			struct rte_ring *r;
			snprintf(rname, sizeof(rname), "%s_%s%u", link, dir ? "ba" : "ab", q);
			r = rte_ring_lookup(rname);
			if (!r)
				r = rte_ring_create(rname, cable_frames(cp), SOCKET_ID_ANY,
						    RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
			if (!r) {
				snprintf(err, errlen, "port %s: cannot create ring %s: %s", cp->name, rname, rte_strerror(rte_errno));
				return -1;
			}
			/* end a transmits on a->b and receives on b->a; end b the other way */
			if ((dir == 0) == (side == 'a'))
				tx[q] = r;
			else
				rx[q] = r;
		}
	}
	snprintf(ename, sizeof(ename), "rp%u", ends_made++);
	id = rte_eth_from_rings(ename, rx, nq, tx, nq, SOCKET_ID_ANY);
	if (id < 0) {
		snprintf(err, errlen, "port %s: cannot make a port of %s: %s", cp->name, cp->device, rte_strerror(rte_errno));
		return -1;
	}
	*port_id = (uint16_t)id;
	return 0;
}

static int find_port(const struct cfg_port *cp, uint16_t *port_id, char *err, size_t errlen)
{
	if (strncmp(cp->device, "ring:", 5) == 0)
		return ring_pair_port(cp, port_id, err, errlen);
	if (rte_eth_dev_get_port_by_name(cp->device, port_id) == 0)
		return 0;
	snprintf(err, errlen, "port %s: no DPDK device '%s' (is the vdev declared, or the PCI device bound to a DPDK driver?)",
		 cp->name, cp->device);
	return -1;
}

static unsigned mbuf_room(const struct cfg_port *cp)
{
	unsigned room = cp->mtu + L2_OVERHEAD + RTE_PKTMBUF_HEADROOM;

	return room < RTE_MBUF_DEFAULT_BUF_SIZE ? RTE_MBUF_DEFAULT_BUF_SIZE : room;
}

static struct rte_mempool *make_pool(const struct cfg_port *cp, uint16_t port_id, unsigned n_lcores, unsigned socket)
{
	char name[RTE_MEMPOOL_NAMESIZE];

	snprintf(name, sizeof(name), "mbufs_port%u", port_id);
	return mbuf_pool_create(name, port_pool_size(cp, n_lcores), MBUF_CACHE, (uint16_t)mbuf_room(cp), (int)socket);
}

unsigned port_tx_pool_size(const struct cfg_port *cp)
{
	return cp->tx_desc + 2 * MBUF_CACHE + BURST_SLACK + cp->extra_mbufs;
}

bool port_frames_stay_local(const struct cfg_port *cp)
{
	return strncmp(cp->device, "ring:", 5) == 0 || strncmp(cp->device, "net_ring", 8) == 0;
}

/* rte_mempool_obj_iter callback: the mbuf's whole data room to zero */
static void zero_mbuf(struct rte_mempool *mp, void *arg, void *obj, unsigned idx)
{
	struct rte_mbuf *m = obj;

	(void)mp, (void)arg, (void)idx;
	memset(m->buf_addr, 0, m->buf_len);
}

struct rte_mempool *port_tx_pool_create(const struct cfg_port *cp, unsigned lcore, unsigned role, unsigned socket,
					 bool zeroed)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_mempool *mp;

	snprintf(name, sizeof(name), "tx_l%u_r%u", lcore, role);
	mp = mbuf_pool_create(name, port_tx_pool_size(cp), MBUF_CACHE, (uint16_t)mbuf_room(cp), (int)socket);
	if (mp && zeroed)
		rte_mempool_obj_iter(mp, zero_mbuf, NULL);
	return mp;
}

static int configure(const struct cfg_port *cp, struct port_info *p, char *err, size_t errlen)
{
	struct rte_eth_conf conf = {0};
	struct rte_eth_dev_info info;
	int rc;

	rc = rte_eth_dev_info_get(p->port_id, &info);
	if (rc) {
		snprintf(err, errlen, "port %s: cannot read device info: %s", cp->name, rte_strerror(-rc));
		return -1;
	}
	snprintf(p->driver, sizeof(p->driver), "%s", info.driver_name);
	if (cp->rx_queues > info.max_rx_queues || cp->tx_queues > info.max_tx_queues) {
		snprintf(err, errlen, "port %s (%s): %u RX / %u TX queues asked, the device has at most %u / %u", cp->name,
			 info.driver_name, cp->rx_queues, cp->tx_queues, info.max_rx_queues, info.max_tx_queues);
		return -1;
	}
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	if (cp->mtu > info.max_mtu) {
		snprintf(err, errlen, "port %s (%s): mtu %u above the device's maximum %u", cp->name, info.driver_name,
			 cp->mtu, info.max_mtu);
		return -1;
	}
	conf.rxmode.mtu = cp->mtu;
	if (port_clock_plan(cp, info.driver_name, &info, &conf, &p->clock, err, errlen))
		return -1;
	if (cp->tx_schedule_lead_us > 0 && !p->clock.tx_schedule)
		printf("roce-engine: port %s: %s cannot send at a given time (no RTE_ETH_TX_OFFLOAD_SEND_ON_TIMESTAMP): "
		       "probes are stamped when sent\n", cp->name, info.driver_name);
	rc = rte_eth_dev_configure(p->port_id, (uint16_t)cp->rx_queues, (uint16_t)cp->tx_queues, &conf);
	if (rc) {
		snprintf(err, errlen, "port %s: rte_eth_dev_configure: %s", cp->name, rte_strerror(-rc));
		return -1;
	}
	return 0;
}

static int setup_queues(const struct cfg_port *cp, struct port_info *p, char *err, size_t errlen)
{
	uint16_t nb_rxd = (uint16_t)cp->rx_desc, nb_txd = (uint16_t)cp->tx_desc;
	int rc = rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &nb_rxd, &nb_txd);

	for (unsigned q = 0; rc == 0 && q < cp->rx_queues; q++)
		rc = rte_eth_rx_queue_setup(p->port_id, (uint16_t)q, nb_rxd, p->socket, NULL, p->pool);
	for (unsigned q = 0; rc == 0 && q < cp->tx_queues; q++)
		rc = rte_eth_tx_queue_setup(p->port_id, (uint16_t)q, nb_txd, p->socket, NULL);
	if (rc)
		snprintf(err, errlen, "port %s: queue set-up: %s", cp->name, rte_strerror(-rc));
	return rc ? -1 : 0;
}

static void apply_mac_and_speed(const struct cfg_port *cp, struct port_info *p)
{
	struct rte_ether_addr mac;
	struct rte_eth_link link;

	if (cp->has_mac) {
		memcpy(mac.addr_bytes, cp->mac, 6);
		/* some vdevs cannot change their MAC; the engine then uses the configured one in
		 * its frames anyway and runs promiscuous */
		rte_eth_dev_default_mac_addr_set(p->port_id, &mac);
		memcpy(p->mac, cp->mac, 6);
	} else if (rte_eth_macaddr_get(p->port_id, &mac) == 0) {
		memcpy(p->mac, mac.addr_bytes, 6);
	}
	p->link_speed_gbps = cp->link_speed_gbps;
	if (p->link_speed_gbps == 0 && rte_eth_link_get_nowait(p->port_id, &link) == 0 &&
	    link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
		p->link_speed_gbps = link.link_speed / 1000.0;
}

/* rte_flow rules for UDP 4791 and MAC control: required when asked for, tried on physical ports
 * by default (a refusal is reported at start-up, not discovered mid-run). */
static int setup_steering(const struct cfg_port *cp, struct port_info *p, char *err, size_t errlen)
{
	char why[256];

	if (cp->steering == CFG_STEER_OFF || (cp->steering == CFG_STEER_AUTO && config_device_is_virtual(cp->device))) {
		snprintf(p->steering_state, sizeof(p->steering_state), "off");
		return 0;
	}
	if (steering_install(p->port_id, cp->name, cp->rx_queues, cp->has_ipv4, cp->has_ipv6, &p->steering, why,
			     sizeof(why)) == 0) {
		snprintf(p->steering_state, sizeof(p->steering_state), "%s (%u rules)",
			 cp->steering == CFG_STEER_ISOLATE ? "isolated" : "rules", p->steering.n_rules);
		return 0;
	}
	if (cp->steering == CFG_STEER_AUTO) {
		snprintf(p->steering_state, sizeof(p->steering_state), "none: the PMD refused the rules");
		printf("roce-engine: %s\n", why);
		return 0;
	}
	snprintf(err, errlen, "%s", why);
	return -1;
}

/* The NIC's own PFC from the port's QoS settings, where the PMD has the ethdev call: it honours
 * PFC (RX pause) when the port does, and generates it (TX pause) with the port's thresholds. A
 * PMD without it (mlx5 in DPDK 22.11, the virtual devices) is said so at start-up: the engine's
 * software PFC works the same, and docs/qos.md gives the kernel commands for ConnectX. */
static void setup_nic_pfc(const struct cfg_port *cp, struct port_info *p)
{
	unsigned set = 0;
	int rc = 0;

	for (uint8_t prio = 0; prio < 8; prio++) {
		bool gen = cp->xoff_priorities >> prio & 1;
		struct rte_eth_pfc_conf c = {0};

		if (!cp->honour_pfc && !gen)
			continue;
		c.priority = prio;
		c.fc.mode = cp->honour_pfc && gen ? RTE_ETH_FC_FULL : gen ? RTE_ETH_FC_TX_PAUSE : RTE_ETH_FC_RX_PAUSE;
		c.fc.pause_time = gen ? cp->xoff_quanta : 0xFFFF;
		c.fc.high_water = gen ? (uint32_t)cp->xoff_bytes : 0;
		c.fc.low_water = gen ? (uint32_t)cp->xon_bytes : 0;
		c.fc.send_xon = gen;
		rc = rte_eth_dev_priority_flow_ctrl_set(p->port_id, &c);
		if (rc)
			break;
		set++;
	}
	if (rc == 0) {
		snprintf(p->nic_pfc_state, sizeof(p->nic_pfc_state), "set on %u priorities", set);
		return;
	}
	snprintf(p->nic_pfc_state, sizeof(p->nic_pfc_state), "not available (%s)", rte_strerror(-rc));
	printf("roce-engine: port %s: %s cannot set the NIC's PFC (%s); PFC is handled by the engine in software%s\n",
	       cp->name, p->driver, rte_strerror(-rc),
	       strcmp(p->driver, "mlx5_pci") == 0 ? " (ConnectX: set trust and PFC in the kernel, docs/qos.md)" : "");
}

/* ---- link state ----------------------------------------------------------------------------- */

/* "iface=NAME" among a vdev's arguments (net_af_packet). */
static void kernel_iface_of(const char *args, char *out, size_t len)
{
	const char *s = args;

	out[0] = 0;
	while (s && *s) {
		if (strncmp(s, "iface=", 6) == 0) {
			size_t n = strcspn(s + 6, ",");
			snprintf(out, len, "%.*s", (int)n, s + 6);
			return;
		}
		s = strchr(s, ',');
		if (s)
			s++;
	}
}

int port_link_up(const struct port_info *p)
{
	struct rte_eth_link link;

	if (p->kernel_iface[0]) { /* the PMD's own link_update does nothing: ask the kernel (this netns) */
		struct ifreq ifr;
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

		if (fd < 0)
			return -1;
		memset(&ifr, 0, sizeof(ifr));
		memcpy(ifr.ifr_name, p->kernel_iface, RTE_MIN(strlen(p->kernel_iface), sizeof(ifr.ifr_name) - 1));
		rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
		close(fd);
		if (rc < 0)
			return errno == ENODEV ? 0 : -1; /* an interface that went away is down */
		return (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
	}
	if (!p->started || rte_eth_link_get_nowait(p->port_id, &link) != 0)
		return -1;
	return link.link_status == RTE_ETH_LINK_UP;
}

/* ---- the control-thread gate (net_memif; port.h says why) --------------------------------- */

#define GATE_MAX_QUEUES 16
#define GATE_WAIT_US 100        /* a worker waits this long at a closed gate, then its burst returns 0 */
#define GATE_IDLE_WAIT_MS 10    /* the main lcore waits this long for the queues to leave the PMD */
#define GATE_TURN_WAIT_MS 20    /* ... and this long for the interrupt thread to park again */

struct gate_port;
struct gate_queue {
	void *pmd_queue;          /* what rte_eth_fp_ops held */
	const struct gate_port *gp;
	const uint32_t *closed;   /* the gate's (struct gate), reached from the burst's queue argument */
	uint32_t busy;            /* lcores inside the PMD's burst on this queue */
} __rte_cache_aligned;

struct gate_port {
	eth_rx_burst_t rx;        /* the PMD's burst functions */
	eth_tx_burst_t tx;
	unsigned n_rx, n_tx;
	struct gate_queue rq[GATE_MAX_QUEUES], tq[GATE_MAX_QUEUES];
	void *rx_data[GATE_MAX_QUEUES], *tx_data[GATE_MAX_QUEUES]; /* rte_eth_fp_ops' queue arrays now */
};

/* The gate's state: the one file-scope state of this file, and one per process by nature: it
 * parks EAL's one interrupt thread, and the engine calls port_gate_* (and port_setup installs
 * the gate) without a handle. The callbacks reach it through their arguments: park_cb through
 * its registration argument, gate_rx/gate_tx through their queue (gate_queue.closed). */
struct gate {
	struct gate_port *ports[RTE_MAX_ETHPORTS];
	uint32_t closed;          /* closed until the interrupt thread is first parked */
	/* The interrupt thread, parked in park_cb between windows. */
	struct {
		pthread_mutex_t m;
		pthread_cond_t cv;
		bool active;              /* parking in use (some port is gated) */
		bool parked, release, quit, turn; /* turn: a window is in progress (the thread was released) */
		uint64_t gen, gen_at_release; /* times it parked */
		int efd;
		struct rte_intr_handle *ih;
	} park;
};
static struct gate gate = {.closed = 1, .park = {.m = PTHREAD_MUTEX_INITIALIZER, .efd = -1}};

static inline bool gate_enter(struct gate_queue *q)
{
	uint64_t until = 0;

	for (;;) {
		__atomic_fetch_add(&q->busy, 1, __ATOMIC_SEQ_CST); /* a full barrier: then read the gate */
		if (!__atomic_load_n(q->closed, __ATOMIC_SEQ_CST))
			return true;
		__atomic_fetch_sub(&q->busy, 1, __ATOMIC_RELEASE);
		if (!until)
			until = rte_rdtsc() + rte_get_tsc_hz() / (1000000 / GATE_WAIT_US);
		while (__atomic_load_n(q->closed, __ATOMIC_ACQUIRE))
			if (rte_rdtsc() > until)
				return false;
			else
				rte_pause();
	}
}

static uint16_t gate_rx(void *queue, struct rte_mbuf **pkts, uint16_t n)
{
	struct gate_queue *q = queue;
	uint16_t got;

	if (!gate_enter(q))
		return 0;
	got = q->gp->rx(q->pmd_queue, pkts, n);
	__atomic_fetch_sub(&q->busy, 1, __ATOMIC_RELEASE);
	return got;
}

static uint16_t gate_tx(void *queue, struct rte_mbuf **pkts, uint16_t n)
{
	struct gate_queue *q = queue;
	uint16_t sent;

	if (!gate_enter(q))
		return 0;
	sent = q->gp->tx(q->pmd_queue, pkts, n);
	__atomic_fetch_sub(&q->busy, 1, __ATOMIC_RELEASE);
	return sent;
}

/* After rte_eth_dev_start (which set rte_eth_fp_ops up) and before any worker runs. */
static int gate_install(struct port_info *p, char *err, size_t errlen)
{
	struct rte_eth_fp_ops *fo = &rte_eth_fp_ops[p->port_id];
	struct gate_port *g;

	if (p->rx_queues > GATE_MAX_QUEUES || p->tx_queues > GATE_MAX_QUEUES) {
		snprintf(err, errlen, "port %s: at most %u queues on net_memif", p->name, GATE_MAX_QUEUES);
		return -1;
	}
	g = rte_zmalloc_socket("port_gate", sizeof(*g), RTE_CACHE_LINE_SIZE, (int)p->socket);
	if (!g) {
		snprintf(err, errlen, "port %s: out of memory (raise eal.memory_mb)", p->name);
		return -1;
	}
	g->rx = fo->rx_pkt_burst;
	g->tx = fo->tx_pkt_burst;
	g->n_rx = p->rx_queues;
	g->n_tx = p->tx_queues;
	for (unsigned q = 0; q < g->n_rx; q++) {
		g->rq[q].pmd_queue = fo->rxq.data[q];
		g->rq[q].gp = g;
		g->rq[q].closed = &gate.closed;
		g->rx_data[q] = &g->rq[q];
	}
	for (unsigned q = 0; q < g->n_tx; q++) {
		g->tq[q].pmd_queue = fo->txq.data[q];
		g->tq[q].gp = g;
		g->tq[q].closed = &gate.closed;
		g->tx_data[q] = &g->tq[q];
	}
	/* fo->rxq.data is the device's own rx_queues array (the PMD uses it): replaced, not edited */
	fo->rxq.data = g->rx_data;
	fo->txq.data = g->tx_data;
	fo->rx_pkt_burst = gate_rx;
	fo->tx_pkt_burst = gate_tx;
	gate.ports[p->port_id] = g;
	p->gated = true;
	return 0;
}

/* In the interrupt thread: parks it until a window releases it (or the gate stops). */
static void park_cb(void *arg)
{
	struct gate *gt = arg;
	bool quit;

	pthread_mutex_lock(&gt->park.m);
	if (!gt->park.quit && !gt->park.release) {
		gt->park.parked = true;
		gt->park.gen++;
		pthread_cond_broadcast(&gt->park.cv);
		while (!gt->park.release && !gt->park.quit)
			pthread_cond_wait(&gt->park.cv, &gt->park.m);
		gt->park.parked = false;
	}
	gt->park.release = false;
	quit = gt->park.quit;
	pthread_mutex_unlock(&gt->park.m);
	if (quit) { /* the event fd stops being ready: no more calls */
		uint64_t v;
		if (read(gt->park.efd, &v, sizeof(v)) < 0)
			(void)0;
	}
}

/* Waits (mutex held) until cond or ms have passed; true when cond. */
#define PARK_WAIT(cond, ms)                                                                                            \
	({                                                                                                             \
		struct timespec ts_;                                                                                   \
		clock_gettime(CLOCK_MONOTONIC, &ts_);                                                                  \
		ts_.tv_nsec += (long)(ms) * 1000000L;                                                                  \
		ts_.tv_sec += ts_.tv_nsec / 1000000000L;                                                               \
		ts_.tv_nsec %= 1000000000L;                                                                            \
		while (!(cond) && pthread_cond_timedwait(&gate.park.cv, &gate.park.m, &ts_) == 0)                      \
			;                                                                                              \
		(cond);                                                                                                \
	})

int port_gate_start(char *err, size_t errlen)
{
	pthread_condattr_t ca;
	bool parked;
	unsigned n = 0;

	for (unsigned i = 0; i < RTE_MAX_ETHPORTS; i++)
		n += gate.ports[i] != NULL;
	if (n == 0 || gate.park.active) {
		__atomic_store_n(&gate.closed, 0, __ATOMIC_SEQ_CST);
		return 0;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&gate.park.cv, &ca);
	pthread_condattr_destroy(&ca);
	gate.park.parked = gate.park.release = gate.park.quit = gate.park.turn = false;
	gate.park.gen = 0;
	gate.park.efd = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC); /* ready at once, and stays so */
	gate.park.ih = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	if (gate.park.efd < 0 || !gate.park.ih || rte_intr_fd_set(gate.park.ih, gate.park.efd) ||
	    rte_intr_type_set(gate.park.ih, RTE_INTR_HANDLE_EXT) ||
	    rte_intr_callback_register(gate.park.ih, park_cb, &gate) < 0) {
		snprintf(err, errlen, "net_memif: cannot register the interrupt-thread gate: %s", strerror(errno));
		rte_intr_instance_free(gate.park.ih);
		gate.park.ih = NULL;
		if (gate.park.efd >= 0)
			close(gate.park.efd);
		gate.park.efd = -1;
		return -1;
	}
	gate.park.active = true;
	pthread_mutex_lock(&gate.park.m);
	parked = PARK_WAIT(gate.park.parked, 2000);
	pthread_mutex_unlock(&gate.park.m);
	if (!parked) {
		port_gate_stop();
		snprintf(err, errlen, "net_memif: EAL's interrupt thread did not take the gate's callback within 2 s");
		return -1;
	}
	__atomic_store_n(&gate.closed, 0, __ATOMIC_SEQ_CST);
	return 0;
}

static bool gate_queues_idle(void)
{
	for (unsigned i = 0; i < RTE_MAX_ETHPORTS; i++) {
		const struct gate_port *g = gate.ports[i];
		for (unsigned q = 0; g && q < g->n_rx; q++)
			if (__atomic_load_n(&g->rq[q].busy, __ATOMIC_ACQUIRE))
				return false;
		for (unsigned q = 0; g && q < g->n_tx; q++)
			if (__atomic_load_n(&g->tq[q].busy, __ATOMIC_ACQUIRE))
				return false;
	}
	return true;
}

bool port_gate_active(void) { return gate.park.active; }

bool port_gate_window(void)
{
	bool done;

	if (!gate.park.active)
		return true;
	if (!gate.park.turn) {
		uint64_t until = rte_rdtsc() + rte_get_tsc_hz() / 1000 * GATE_IDLE_WAIT_MS;

		__atomic_store_n(&gate.closed, 1, __ATOMIC_SEQ_CST);
		while (!gate_queues_idle())
			if (rte_rdtsc() > until) { /* a worker is held inside a burst (descheduled): next time */
				__atomic_store_n(&gate.closed, 0, __ATOMIC_RELEASE);
				return false;
			} else
				rte_pause();
		pthread_mutex_lock(&gate.park.m);
		gate.park.gen_at_release = gate.park.gen;
		gate.park.release = true;
		gate.park.turn = true;
		pthread_cond_broadcast(&gate.park.cv);
		pthread_mutex_unlock(&gate.park.m);
	}
	pthread_mutex_lock(&gate.park.m);
	done = PARK_WAIT(gate.park.parked && gate.park.gen != gate.park.gen_at_release, GATE_TURN_WAIT_MS);
	pthread_mutex_unlock(&gate.park.m);
	if (!done) /* still running a handler: the gate stays closed until it parks again */
		return false;
	gate.park.turn = false;
	__atomic_store_n(&gate.closed, 0, __ATOMIC_RELEASE);
	return true;
}

void port_gate_stop(void)
{
	if (!gate.park.active)
		return;
	pthread_mutex_lock(&gate.park.m);
	gate.park.quit = true;
	pthread_cond_broadcast(&gate.park.cv);
	pthread_mutex_unlock(&gate.park.m);
	rte_intr_callback_unregister_sync(gate.park.ih, park_cb, &gate); /* waits while park_cb runs */
	rte_intr_instance_free(gate.park.ih);
	gate.park.ih = NULL;
	close(gate.park.efd);
	gate.park.efd = -1;
	pthread_cond_destroy(&gate.park.cv);
	gate.park.active = false;
	gate.park.turn = false;
	/* the workers have stopped: the gate stays open for whatever polls next (nothing) */
	__atomic_store_n(&gate.closed, 0, __ATOMIC_SEQ_CST);
}

int port_setup(const struct cfg_port *cp, unsigned n_lcores, struct port_info *p, char *err, size_t errlen)
{
	int rc;

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", cp->name);
	if (find_port(cp, &p->port_id, err, errlen))
		return -1;
	rc = rte_eth_dev_socket_id(p->port_id);
	p->socket = rc < 0 ? rte_socket_id() : (unsigned)rc;
	p->rx_queues = cp->rx_queues;
	p->tx_queues = cp->tx_queues;
	p->pool = make_pool(cp, p->port_id, n_lcores, p->socket);
	if (!p->pool) {
		snprintf(err, errlen, "port %s: cannot create a mempool of %u mbufs: %s (raise eal.memory_mb)", cp->name,
			 port_pool_size(cp, n_lcores), rte_strerror(rte_errno));
		return -1;
	}
	if (cp->steering == CFG_STEER_ISOLATE && steering_isolate(p->port_id, cp->name, err, errlen))
		return -1;
	if (configure(cp, p, err, errlen) || setup_queues(cp, p, err, errlen))
		return -1;
	apply_mac_and_speed(cp, p);
	rte_eth_promiscuous_enable(p->port_id);
	rc = rte_eth_dev_start(p->port_id);
	if (rc) {
		snprintf(err, errlen, "port %s: rte_eth_dev_start: %s", cp->name, rte_strerror(-rc));
		return -1;
	}
	p->started = true;
	if (strcmp(p->driver, "net_memif") == 0 && gate_install(p, err, errlen))
		return -1;
	if (strcmp(p->driver, "net_af_packet") == 0)
		kernel_iface_of(cp->vdev_args, p->kernel_iface, sizeof(p->kernel_iface));
	if (cp->nic_pfc)
		setup_nic_pfc(cp, p);
	if (port_clock_start(p->port_id, &p->clock, err, errlen))
		return -1;
	return setup_steering(cp, p, err, errlen);
}

void port_teardown(struct port_info *p)
{
	if (!p->started)
		return;
	steering_remove(p->port_id, &p->steering);
	rte_eth_dev_stop(p->port_id); /* the fast-path functions are ethdev's dummies from here */
	rte_eth_dev_close(p->port_id);
	p->started = false;
	if (p->gated) {
		rte_free(gate.ports[p->port_id]);
		gate.ports[p->port_id] = NULL;
		p->gated = false;
	}
}

void port_print_capabilities(const struct port_info *p)
{
	struct rte_eth_dev_info info;
	bool ts = false, multiseg = false;

	if (rte_eth_dev_info_get(p->port_id, &info) == 0) {
		ts = info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP;
		multiseg = info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	}
	printf("port %s: dpdk port %u, driver %s, mac %02x:%02x:%02x:%02x:%02x:%02x, %.0f Gb/s, %u rxq / %u txq, "
	       "socket %u; rx hw timestamp %s, tx multi-seg %s, steering %s; rx time: %s (resolution %.3g ns)%s\n",
	       p->name, p->port_id, p->driver, p->mac[0], p->mac[1], p->mac[2], p->mac[3], p->mac[4], p->mac[5],
	       p->link_speed_gbps, p->rx_queues, p->tx_queues, p->socket, ts ? "yes" : "no", multiseg ? "yes" : "no",
	       p->steering_state, p->clock.how, p->clock.resolution_ns,
	       p->clock.tx_schedule ? ", probes sent at scheduled NIC times" : "");
}

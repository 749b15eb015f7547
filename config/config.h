/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The engine's configuration: loaded from a libconfig file, validated completely before EAL
 * starts anything. Every error names the file, the line and the setting, and says what is
 * allowed. Setting by setting: docs/config.md.
 */
#ifndef ROCE_ENGINE_CONFIG_H
#define ROCE_ENGINE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config_read.h"
#include "dcqcn.h"
#include "fabric.h"
#include "np.h"
#include "timely.h"

#define CFG_MAX_PORTS 16
#define CFG_MAX_ROLES 32
#define CFG_MAX_FLOW_GROUPS 256
#define CFG_MAX_EAL_ARGS 32
#define CFG_NAME_LEN 32
#define CFG_STR_LEN 256
#define CFG_MAX_QPS_PER_GROUP 65536
#define CFG_MAX_COLLECTIVES 16
#define CFG_MAX_COLLECTIVE_FLOWS CFG_MAX_FLOW_GROUPS
#define CFG_MAX_COLLECTIVE_RECEIVES 64
#define CFG_MAX_PHASES 4096
#define CFG_MAX_RESPONDERS 64
#define CFG_MAX_PFC_GENERATORS 8
#define CFG_MAX_INJECT 8
#define CFG_MAX_FDB 32
#define CFG_MAX_VLANS 32
#define CFG_MAX_SLA 64

/* An SLA check (the top-level `sla` list, docs/report.md#sla): a metric of a flow group's QPs (each
 * QP must meet it) or of a port, against a minimum or a maximum. */
enum cfg_sla_metric {
	/* flows */
	SLA_GOODPUT_GBPS, SLA_LOSS, SLA_P50_NS, SLA_P99_NS, SLA_P999_NS, SLA_MAX_NS, SLA_RETRANSMITS,
	/* ports */
	SLA_PAUSE_PERCENT, SLA_PFC_RX_PER_S, SLA_RX_GBPS, SLA_TX_GBPS, SLA_RX_DROPPED,
	SLA_METRIC_COUNT
};
#define SLA_FIRST_PORT_METRIC SLA_PAUSE_PERCENT
struct cfg_sla {
	bool port;                    /* a port's metric, else a flow group's */
	int target;                   /* group or port index, -1: every one */
	enum cfg_sla_metric metric;
	bool has_min, has_max;
	double min, max;
	int priority;                 /* pause_percent: one priority, -1: the worst */
	unsigned line;
};
extern const char *const cfg_sla_metric_name[SLA_METRIC_COUNT + 1]; /* NULL-terminated */

/* Event injection (docs/cc.md): chosen packets are marked CE, dropped or sent with a wrong ICRC,
 * on TX (a flow's packets) or on RX (a port's arrivals). A packet is chosen by PSN (the first
 * time that PSN goes out), every Nth packet, or with a probability; `qp` limits it to one QP
 * of the group (-1: all). */
enum cfg_inject_action { CFG_INJECT_CE, CFG_INJECT_DROP, CFG_INJECT_CORRUPT };
struct cfg_inject {
	enum cfg_inject_action action;
	int qp;                       /* index within the group, -1 = every QP (TX only) */
	int64_t psn;                  /* -1 = not by PSN */
	uint64_t every;               /* 0 = not every Nth */
	double probability;           /* 0 = not random */
	uint64_t count;               /* at most this many per QP (TX) or port (RX); 0 = no limit */
	unsigned line;
};

struct cfg_eal {
	char lcores[CFG_STR_LEN];     /* EAL -l list, e.g. "0-1" (default "0-1" or "0"), or an EAL
				       * --lcores map, e.g. "0@0,1@0,2@1" (lcores_map) */
	bool lcores_map;              /* lcores has '@' or '(': passed as --lcores, else as -l */
	int main_lcore;               /* -1: EAL's default (the first lcore) */
	unsigned memory_mb;           /* -m; default 256 */
	bool huge_pages;              /* false: --no-huge (default) */
	char file_prefix[CFG_STR_LEN];/* default "roce-engine-<pid>" (filled in at load) */
	char log_level[CFG_NAME_LEN]; /* EAL --log-level, default "notice" */
	unsigned n_extra;
	char extra[CFG_MAX_EAL_ARGS][CFG_STR_LEN]; /* further raw EAL arguments */
};

struct cfg_port {
	char name[CFG_NAME_LEN];      /* how flows and roles refer to the port */
	char device[CFG_STR_LEN];     /* DPDK device name: a vdev name (net_ring0, net_pcap0, ...)
				       * or a PCI address (0000:3b:00.0) */
	char vdev_args[CFG_STR_LEN];  /* if set, the port is created with --vdev device,vdev_args */
	bool has_mac;                 /* else the PMD's MAC */
	uint8_t mac[6];
	bool has_ipv4, has_ipv6;
	uint8_t ipv4[4];
	uint8_t ipv6[16];
	double link_speed_gbps;       /* 0: read from the PMD (required for vdevs, which report none) */
	unsigned rx_queues, tx_queues;/* default 1 */
	unsigned rx_desc, tx_desc;    /* default 1024 */
	unsigned cable_frames;        /* a "ring:" cable's frames each way (0: the larger of rx_desc and
				       * tx_desc); a fabric NIC's, config_fabric_ring_frames */
	unsigned mtu;                 /* IP MTU, default 1500 */
	double rx_drop_probability;   /* loss injection for tests: frames dropped on RX, 0..1 */
	enum cfg_steering {
		CFG_STEER_AUTO,       /* PCI devices: try rte_flow rules, report if refused; vdevs: off */
		CFG_STEER_OFF,
		CFG_STEER_RULES,      /* rte_flow rules for UDP 4791 and MAC control, or fail */
		CFG_STEER_ISOLATE,    /* the rules, in flow-isolated mode (nothing else reaches us) */
	} steering;
	enum cfg_timestamps {
		CFG_TS_AUTO,          /* the NIC's RX timestamps where the PMD offers them, else the TSC */
		CFG_TS_HARDWARE,      /* the NIC's, or fail at start-up */
		CFG_TS_SOFTWARE,      /* the TSC when the burst is received */
	} timestamps;
	/* QoS (the port's `qos = { ... }`, docs/qos.md) */
	bool trust_pcp;               /* priority from the 802.1Q PCP; default: from the DSCP */
	uint8_t dscp_to_priority[64]; /* default DSCP >> 3 */
	uint8_t priority_to_tc[8];    /* default: class = priority */
	bool has_tc_to_queue;
	uint8_t tc_to_queue[8];       /* a class's QPs go to the TX role of this queue */
	bool honour_pfc;              /* received PFC/PAUSE frames pause TX of their priorities (default) */
	bool nic_pfc;                 /* also set the NIC's own PFC (rte_eth_dev_priority_flow_ctrl_set) */
	/* egress scheduling (qos.egress): traffic class = priority; 0 shape: off */
	double egress_gbps;           /* the port's TX shaped to this (classes then compete) */
	uint8_t strict_tcs;           /* bit n: class n is served strictly (higher first), before ETS */
	unsigned ets_weight[8];       /* ETS classes' weights (default 1 each) */
	double tc_shape_gbps[8];      /* a shaper per class, 0: none */
	/* PFC generated from RX thresholds (qos.pfc_xoff): priorities 0 = off */
	uint8_t xoff_priorities;
	uint64_t xoff_bytes, xon_bytes;
	uint16_t xoff_quanta;
	double xoff_refresh_us;       /* 0: half the pause time */
	double xoff_drain_gbps;       /* how fast the watched backlog drains */
	double tx_schedule_lead_us;   /* >0: latency probes sent at a NIC time this far ahead, where the
				       * PMD can (RTE_ETH_TX_OFFLOAD_SEND_ON_TIMESTAMP); 0 = off */
	/* DCQCN notification point (the port's `np = { ... }`): CNPs for CE-marked arrivals */
	bool np_enabled;              /* default true, as on ConnectX ports */
	struct np_params np;
	unsigned n_rx_inject;         /* `rx_inject = ( ... )`: events on arrival */
	struct cfg_inject rx_inject[CFG_MAX_INJECT];
	bool is_switch_port;          /* polled by a switch role (set at load) */
	unsigned extra_mbufs;         /* more mbufs in its pools: the switch's buffer holds frames of the
				       * switch ports and of the ports cabled to them (set at load) */
	unsigned line;                /* where it was declared, for later errors */
};

/* The virtual lab's switch (top-level `switch = { ... }`, docs/virtual-lab.md): the ports with
 * role "switch" forward between them through a shared buffer, egress queues per port and traffic
 * class drained at the ports' link speeds, RED/ECN marking, PFC toward the ingress ports. */
struct cfg_switch {
	bool present;
	unsigned n_ports;             /* ports with role "switch" (set at load) */
	uint64_t buffer_bytes;        /* buffer_kb, default 2048 */
	uint64_t queue_limit_bytes;   /* static per-queue limit, 0 = the buffer */
	double alpha;                 /* dynamic thresholds (0: static) */
	uint8_t pfc_priorities;       /* pfc.priorities: lossless */
	uint64_t xoff_bytes, xon_bytes, headroom_bytes; /* per ingress port and priority; defaults 100/80/100 KB */
	uint16_t pfc_quanta;          /* default 65535 */
	/* pfc.watchdog = { action; detect_ms; restore_ms; } (lab/pfc_watchdog.h): 0 = off, 1 drop, 2 forward */
	unsigned wd_action;
	double wd_detect_ms, wd_restore_ms; /* defaults 100 and 200 */
	bool has_red[8];
	struct { uint64_t kmin_bytes, kmax_bytes; double pmax; } red[8]; /* per traffic class */
	double delay_us;              /* propagation delay of each link, default 1 */
	char trace[CFG_STR_LEN];      /* CSV of queue depths over time, empty = none */
	double trace_interval_us;     /* default 100 */
	uint64_t seed;                /* RED's draws; default 1 */
	unsigned n_vlans;             /* vlans = ( { vid; ports; } ): VLAN segments */
	struct { uint16_t vid; uint16_t ports; } vlans[CFG_MAX_VLANS]; /* ports: bit = config port index */
	unsigned n_fdb;               /* fdb = ( { mac; port; } ): hosts known from the start */
	struct { uint8_t mac[6]; unsigned port; } fdb[CFG_MAX_FDB];
	unsigned line;
};

/* The virtual fabric (top-level `fabric = { ... }`, docs/fabric.md#the-engine-runs-it): the
 * topology of fabric/, made at load into what the engine's lab runs. Each NIC is a port named as
 * the NIC, on an in-process cable "ring:fabN:a" whose other end a fabric switch polls; the
 * switches (lab/fabric_lab.h) run on one lcore or are dealt over several, each with the `switch` group's buffer, ECN and
 * PFC, its links' rates and delays, and its routes: longest-prefix entries, a /32 per NIC cabled to
 * it and every other leaf's subnet with its equal-cost ports. Fixed sizes: a lab fabric is small
 * (ports <= CFG_MAX_PORTS); larger ones are planned with roce-fabric and simulated in roce-ccsim. */
#define CFG_FAB_MAX_SWITCHES 32
#define CFG_FAB_MAX_SW_PORTS 16       /* = SW_MAX_PORTS: a lab switch's ports */
#define CFG_FAB_MAX_ROUTES 48         /* per switch */
#define CFG_FAB_MAX_LINKS 256
#define CFG_FAB_LINK_NAME (2 * CFG_NAME_LEN + 12)
#define CFG_FAB_MAX_LCORES 8          /* the switches' lcores (fabric.lcores) */

struct cfg_fab_port {
	bool to_nic;                  /* the peer is a NIC (config port `peer`), else switch `peer` */
	unsigned peer, peer_port;     /* peer_port: the peer switch's port */
	unsigned link;                /* index into links[] */
	double gbps, delay_us;        /* the link's */
	uint8_t mac[6];               /* this port's (the NIC's gateway when to_nic) */
	uint8_t next_mac[6];          /* the next hop's: the NIC's, or the peer switch port's */
};

#define CFG_FAB_MAX_EVENTS 8

struct cfg_fab_route {
	uint32_t prefix;              /* host order */
	uint8_t len;
	uint8_t n;                    /* equal-cost ports, 1.. (with every link up) */
	uint8_t ports[CFG_FAB_MAX_SW_PORTS];
	int dst_switch;               /* the switch of the subnet, or -1: a NIC cabled here (nic_link) */
	unsigned nic_link;
};

/* A route's ports once the routes converged after link event k (n 0: unreachable). */
struct cfg_fab_next {
	uint8_t n;
	uint8_t ports[CFG_FAB_MAX_SW_PORTS];
};

/* fabric.events: a link goes down or up at_s after the flows start. */
struct cfg_fab_event {
	double at_s;
	unsigned link;
	bool up;
	unsigned line;
	char command[CFG_STR_LEN];    /* fabric.external: link_command with {link} and {state} filled in */
	char link_name[CFG_FAB_LINK_NAME]; /* fabric.external: the link's (its cfg links[] are not kept) */
};

struct cfg_fab_switch {
	char name[CFG_NAME_LEN];
	unsigned tier;                /* enum fab_tier */
	struct fab_lb_opts lb;        /* the hash seed already this switch's (hash.seed_per_switch) */
	unsigned n_ports, n_routes;
	struct cfg_fab_port ports[CFG_FAB_MAX_SW_PORTS];
	struct cfg_fab_route routes[CFG_FAB_MAX_ROUTES];
	struct cfg_fab_next after[CFG_FAB_MAX_EVENTS][CFG_FAB_MAX_ROUTES]; /* the routes after each event */
};

struct cfg_fab_link {
	char name[CFG_FAB_LINK_NAME];
	unsigned tier;                /* enum fab_tier: FAB_TIER_HOST for a NIC's link */
	double gbps;
	unsigned sw, port;            /* end a: a switch port */
	bool to_nic;
	unsigned b, b_port;           /* end b: a config port (to_nic), or a switch port */
};

struct cfg_fabric {
	bool present;
	bool external;                /* fabric.external: the NICs are ports on devices, the switches
				       * outside the engine (none of the fields below the NICs' is set) */
	bool bridged;                 /* fabric.external.bridged: one L2 domain, frames to the
				       * destination NIC's own MAC (no gateway) */
	char counters_command[CFG_STR_LEN]; /* fabric.external.counters_command ("": none) */
	enum fab_kind kind;
	/* switch.leaf / spine / core: a tier's buffer, ECN and PFC over the `switch` group's
	 * (tier_sw[t] stands for tier t's switches when bit t of tier_set is set) */
	uint8_t tier_set;
	struct cfg_switch tier_sw[FAB_TIERS];
	unsigned lcores[CFG_FAB_MAX_LCORES]; /* the switches' lcores: switch s runs on lcores[s % n_lcores] */
	unsigned n_lcores;
	double deadlock_ms;           /* no frame leaves any switch this long while paused queues hold
				       * frames: a deadlock (default 50) */
	unsigned n_events;            /* fabric.events, in time order */
	struct cfg_fab_event events[CFG_FAB_MAX_EVENTS];
	double convergence_ms;        /* the routes change this long after an event (default 50) */
	double sample_ms;             /* links' utilisation sampled this often (default 10) */
	unsigned first_port, n_nics;  /* the NICs' ports: ports[first_port .. first_port + n_nics) */
	struct {
		char host[CFG_NAME_LEN];      /* the host it is on (a flow's `dst` may name the host) */
		unsigned rail;
		uint8_t gateway_mac[6];       /* its leaf port's: where its frames go */
	} nic[CFG_MAX_PORTS];
	unsigned n_switches, n_links;
	struct cfg_fab_switch sw[CFG_FAB_MAX_SWITCHES];
	struct cfg_fab_link links[CFG_FAB_MAX_LINKS];
	unsigned line;
};

/* A reflect role owns its queue in both directions: what it receives it sends back with the
 * MAC addresses swapped (as dpdk-testpmd's macswap), for ping-pong latency. */
enum cfg_role { CFG_ROLE_TX = 1, CFG_ROLE_RX = 2, CFG_ROLE_TXRX = 3, CFG_ROLE_REFLECT_BIT = 4, CFG_ROLE_REFLECT = 7,
		CFG_ROLE_SWITCH_BIT = 8, CFG_ROLE_SWITCH = 11 };

struct cfg_lcore_role {
	unsigned lcore;
	unsigned port;                /* index into ports[] */
	unsigned queue;
	enum cfg_role role;
	unsigned line;
};

enum cfg_transport { CFG_RC, CFG_UC, CFG_UD };

/* Operation mix, by weight (0 = never). UD supports only SEND and SEND with immediate; UC
 * has no READ. */
enum cfg_op {
	CFG_OP_SEND, CFG_OP_SEND_IMM, CFG_OP_WRITE, CFG_OP_WRITE_IMM, CFG_OP_READ,
	CFG_OP_FETCH_ADD, CFG_OP_COMPARE_SWAP, /* RC atomics on an 8-byte remote value */
	CFG_OP_COUNT
};

enum cfg_size_dist { CFG_SIZE_FIXED, CFG_SIZE_UNIFORM, CFG_SIZE_EXPONENTIAL };

struct cfg_size {
	enum cfg_size_dist dist;
	uint32_t fixed;               /* bytes, FIXED */
	uint32_t min, max;            /* bytes, UNIFORM (inclusive); EXPONENTIAL clamps to [min, max] */
	uint32_t mean;                /* bytes, EXPONENTIAL */
};

enum cfg_pattern { CFG_PATTERN_CONSTANT, CFG_PATTERN_ONOFF, CFG_PATTERN_POISSON };

/* Congestion control of a flow's QPs (docs/cc.md). */
enum cfg_cc { CFG_CC_NONE, CFG_CC_DCQCN, CFG_CC_TIMELY };

/* Latency measurement of a flow (docs/latency.md). */
enum cfg_latency {
	CFG_LAT_OFF,
	CFG_LAT_ONEWAY,               /* every packet with room carries a probe; receivers in the same
				       * clock domain record one-way times */
	CFG_LAT_PINGPONG,             /* one message in flight: UC/UD wait for it to come back (a
				       * reflector), RC for its ACK; round-trip times */
};
#define CFG_PROBE_MIN_PAYLOAD 24      /* = LATENCY_PROBE_LEN: a packet needs this much payload to carry one */

struct cfg_flow_group {
	char name[CFG_NAME_LEN];
	unsigned port;                /* index into ports[] */
	uint8_t dst_mac[6];
	bool has_dst_port;            /* `dst` named a host of the fabric: its NIC's port is dst_port (the
				       * frames carry the gateway's MAC, not the destination's) */
	unsigned dst_port;
	uint8_t ip_version;           /* 4 or 6: the family of dst_ip; the port must have one too */
	uint8_t dst_ip[16];
	enum cfg_transport transport;
	unsigned op_weight[CFG_OP_COUNT];
	struct cfg_size msg_size;
	unsigned ib_mtu;              /* 256, 512, 1024, 2048 or 4096; default 1024 */
	uint32_t qpn, dest_qpn;       /* 24-bit; of the first QP of the group */
	uint32_t start_psn;           /* 24-bit */
	uint16_t pkey;                /* default 0xFFFF */
	uint32_t qkey;                /* UD only, default 0x11111111 */
	bool sport_entropy;           /* UDP source port from the QPN pair (IB verbs' flow label) */
	uint16_t sport;               /* else this port (of the first QP) */
	uint8_t dscp, ecn;            /* default 26, ECT(0) = 2 */
	bool has_vlan;
	uint16_t vlan;
	uint8_t pcp;
	/* rate: one of the two; 0 = as fast as the lcore can */
	double rate_gbps;             /* per QP, L2 bits (frame bytes x 8) per second */
	double rate_pps;              /* per QP */
	enum cfg_pattern pattern;
	double on_us, off_us;         /* ONOFF: burst length and pause */
	/* stop condition per QP: the first that is reached; all 0 = run until the engine stops */
	uint64_t stop_messages;
	uint64_t stop_bytes;
	double stop_seconds;          /* counted from the group's start (start_s) */
	double start_s;               /* the group's QPs send from this long after the traffic starts
				       * (default 0): flows that join a running load (§7.3 convergence) */
	/* RC reliability (the group `rc = { ... }`) */
	double retry_timeout_us;      /* retransmit from the oldest unacknowledged PSN after this
				       * long without progress; default 67108.864 (IB timeout 14) */
	unsigned retry_limit;         /* retries without progress before the QP errors out; default 7 */
	unsigned max_outstanding;     /* messages in flight (sent, not acknowledged); 1..128, default 32 */
	unsigned ack_every;           /* responder: also ACK every N packets without AckReq; 0 = only
				       * AckReq (default) */
	/* latency (the group `latency = { ... }`) */
	enum cfg_latency latency;
	double latency_timeout_us;    /* ping-pong: a message not back after this long is lost and
				       * the next one goes; default 1,000,000 */
	/* congestion control: `cc = "dcqcn" | "timely" | "none"`, with `dcqcn = { ... }` and
	 * `timely = { ... }` parameter groups (defaults: cc/dcqcn.h, cc/timely.h) */
	enum cfg_cc cc;
	struct dcqcn_params dcqcn;
	struct timely_params timely;
	unsigned n_inject;            /* `inject = ( ... )`: events on the flow's TX */
	struct cfg_inject inject[CFG_MAX_INJECT];
	/* expansion */
	unsigned count;               /* QPs in the group, default 1 */
	uint32_t qpn_step, dest_qpn_step; /* default 1 */
	uint16_t sport_step;          /* default 1 (when not entropy) */
	unsigned line;
};

/* Whether the group's QPs stop on their own (messages, bytes or seconds). */
static inline bool cfg_group_has_stop(const struct cfg_flow_group *g)
{
	return g->stop_messages || g->stop_bytes || g->stop_seconds > 0;
}

/* A collective: flow groups that send in lock-step phases, as the steps of an AI-training
 * collective (ring all-reduce, incast, all-to-all): each QP of each group sends one message per
 * phase, and phase k+1 starts when every QP has completed phase k (RC: acknowledged; UC/UD:
 * sent) and, with `receives`, every watched receiver QP has received its message k (a ring's
 * chunk from its predecessor, in another process). The report gives each phase's completion time. */
enum cfg_collective_type { CFG_COLL_RING, CFG_COLL_INCAST, CFG_COLL_ALL_TO_ALL, CFG_COLL_CUSTOM };

/* A range of local receiver QPNs (destination QPNs of requests arriving on a port): each QP
 * delivers one message per phase, its n-th message to phase n. */
struct cfg_coll_receive {
	unsigned port;                /* index into ports[] */
	uint32_t qpn;                 /* the first; the range is qpn .. qpn + count - 1 */
	unsigned count;               /* 1..CFG_MAX_QPS_PER_GROUP */
	unsigned line;
};

struct cfg_collective {
	char name[CFG_NAME_LEN];
	enum cfg_collective_type type; /* a label for the report; the flows give the topology */
	unsigned n_flows;
	unsigned flows[CFG_MAX_COLLECTIVE_FLOWS]; /* indices into groups[] */
	unsigned phases;
	/* a synthetic compute step: phase k with k % iteration_phases == 0 starts compute_us after
	 * the previous phase's end (phase 0: after the traffic's start), as an iteration of training
	 * computes before its collective (default 0: none; iteration_phases: phases) */
	double compute_us;
	unsigned iteration_phases;
	/* repeat: after the last phase the collective starts again at phase 0, until the run ends (a
	 * soak); window: an iteration may start only in [offset_s, offset_s + active_s) of every
	 * period_s from the traffic's start (two collectives that take turns); period_s 0: always */
	bool repeat;
	double window_period_s, window_offset_s, window_active_s;
	unsigned n_receives;
	struct cfg_coll_receive receives[CFG_MAX_COLLECTIVE_RECEIVES];
	unsigned line;
};

/* RC responder QPs for requesters in another process (local flows get theirs automatically). */
struct cfg_responder {
	unsigned port;                /* where the requests arrive */
	uint32_t qpn, peer_qpn;       /* of the first QP: this responder's QPN, the requester's */
	unsigned count;
	uint32_t qpn_step, peer_qpn_step;
	unsigned ib_mtu;              /* the requester's path MTU (READ responses are cut to it) */
	uint32_t start_psn;           /* the requester's first PSN */
	unsigned ack_every;
	uint16_t pkey;
	unsigned line;
};

/* A phase of the run (the top-level `phases` list): at `at_s` after the flows start, traffic-class
 * weights and shapers and flow rates change; the report shows each phase's traffic. docs/qos.md. */
#define CFG_MAX_PHASE_LIST 32
#define CFG_MAX_PHASE_CHANGES 16
struct cfg_phase {
	char name[CFG_NAME_LEN];
	double at_s;
	unsigned n_egress, n_rates;
	struct { unsigned port, tc, weight; double shape_gbps; bool has_shape; } egress[CFG_MAX_PHASE_CHANGES];
	struct { unsigned group; double gbps; } rates[CFG_MAX_PHASE_CHANGES];
	unsigned line;
};

/* A PFC (or 802.3x PAUSE) frame generator: frames on chosen priorities at a chosen rate and
 * quanta, toward a switch under test (storms included). docs/qos.md. */
struct cfg_pfc_generator {
	unsigned port;
	uint8_t class_enable;         /* bit n: priority n */
	uint16_t quanta;              /* for every enabled priority (0: XON) */
	bool pause;                   /* an 802.3x PAUSE frame instead (all priorities) */
	double rate_pps;
	uint64_t count;               /* frames to send; 0: until the run stops */
	double start_s;               /* first frame this long after the run starts */
	unsigned line;
};

struct engine_config {
	char file[CFG_STR_LEN];       /* the file it came from */
	struct cr_sources src;        /* the files of its lines (the `line` members above and below are
				       * lines of the text with the includes in: see config_where()) */
	struct cfg_eal eal;
	unsigned n_ports;
	struct cfg_port ports[CFG_MAX_PORTS];
	unsigned n_roles;
	struct cfg_lcore_role roles[CFG_MAX_ROLES];
	unsigned n_groups;
	struct cfg_flow_group groups[CFG_MAX_FLOW_GROUPS];
	unsigned n_responders;
	struct cfg_responder responders[CFG_MAX_RESPONDERS];
	unsigned n_peers;             /* `peers`: remote QPs sending to local QPNs (CNPs go to them) */
	struct cfg_responder peers[CFG_MAX_RESPONDERS];
	unsigned n_collectives;
	struct cfg_collective collectives[CFG_MAX_COLLECTIVES];
	unsigned n_phases;
	struct cfg_phase phases[CFG_MAX_PHASE_LIST];
	unsigned n_pfc_generators;
	struct cfg_pfc_generator pfc_generators[CFG_MAX_PFC_GENERATORS];
	struct cfg_switch sw;
	struct cfg_fabric fab;
	unsigned n_sla;
	struct cfg_sla sla[CFG_MAX_SLA];
	int group_collective[CFG_MAX_FLOW_GROUPS]; /* the collective a group belongs to, or -1 */
	/* run settings, also settable on the command line (which wins) */
	double duration_s;            /* 0 = until every flow stops, or a signal */
	double start_at_unix_s;       /* 0, or the wall-clock time (CLOCK_REALTIME) the traffic starts at:
				       * processes on several hosts start together (roce-cluster sets it) */
	double stats_interval_s;      /* default 1 */
	char report[CFG_STR_LEN];     /* JSON report path, empty = none */
	char ready_file[CFG_STR_LEN]; /* made once the ports are started and the lcores launched
				       * (a script or roce-cluster waits for it), empty = none */
	char latency_samples[CFG_STR_LEN]; /* CSV of raw latency samples, empty = none */
	unsigned latency_sample_every;/* one sample in this many goes to the CSV; default 1 */
	unsigned latency_foreign_qps; /* per RX lcore: QPs from other processes whose probes get
				       * their own histogram; default 64 */
	char timeseries[CFG_STR_LEN]; /* per-interval CSV of ports and flow groups, empty = none */
	char capture[CFG_STR_LEN];    /* pcapng of the frames sent and received, empty = none */
	unsigned capture_every;       /* one frame in this many per port and direction; default 1 */
	unsigned capture_snaplen;     /* bytes of each frame, 0 = all (default) */
	uint16_t capture_ports;       /* bit = config port; 0 = every port */
	char cc_trace[CFG_STR_LEN];   /* CSV of congestion-control state over time, empty = none */
	double cc_trace_interval_us;  /* a row per traced QP this often (and one per CNP); default 100 */
	unsigned cc_trace_qps;        /* the first N QPs with congestion control are traced; default 16 */
	unsigned cc_trace_step;       /* ... every this many (sampling a large group); default 1 */
	/* the HTTP server (Prometheus /metrics, live dashboard): off while http_port is 0 */
	char http_addr[64];           /* numeric IPv4 or IPv6 address to listen on; default 127.0.0.1 */
	uint16_t http_port;
	double http_linger_s;         /* keep serving the final numbers this long after the run */
	char http_dashboard[CFG_STR_LEN]; /* folder of the dashboard's files; empty = the built-in path */
};

/* What a load checks beyond the text itself; a NULL member is not checked. */
struct config_env {
	/* Whether the DPDK the program runs with has a vdev driver for `device` ("net_pcap0"), the
	 * eal section read so far (its -d options add drivers); when not, `why` says which
	 * drivers there are. */
	bool (*vdev_driver)(void *arg, const struct cfg_eal *eal, const char *device, char *why, size_t whylen);
	void *arg;
};

/* Loads and validates `path`. On error returns -1 and writes one line into err:
 *   "FILE:LINE: SETTING: what is wrong (what is allowed)". */
int config_load(const char *path, struct engine_config *cfg, char *err, size_t errlen);
/* The same, also checking what env can (env may be NULL). */
int config_load_env(const char *path, const struct config_env *env, struct engine_config *cfg, char *err,
		    size_t errlen);
/* The same from a string (tests); `name` stands for the file name in messages. */
int config_load_string(const char *text, const char *name, struct engine_config *cfg, char *err, size_t errlen);
int config_load_string_env(const char *text, const char *name, const struct config_env *env,
			   struct engine_config *cfg, char *err, size_t errlen);
/* Parses an HTTP listen address, "PORT", "IPV4:PORT" or "[IPV6]:PORT" (port 1..65535, numeric
 * addresses only), into addr / *port; 0, or -1 with why. */
int config_parse_listen(const char *s, char *addr, size_t addrlen, uint16_t *port, char *why, size_t whylen);
/* Defaults for everything (what an empty file gives). */
void config_defaults(struct engine_config *cfg);
/* A virtual device (a vdev `net_...` or an end of the in-process `ring:` cable): no real link
 * speed, no rte_flow steering by default. */
bool config_device_is_virtual(const char *device);
/* Sets one congestion-control parameter of a running flow group (the control interface): `name`
 * is a member of dcqcn = { } (algo CFG_CC_DCQCN, params a struct dcqcn_params) or timely = { }
 * (CFG_CC_TIMELY, struct timely_params); the value is checked as the config file's would be, and
 * the whole set again, then stored with one atomic store (the owner lcores read it at their QPs'
 * next event). 0, or -1 with a message in err. */
int config_cc_param_set(enum cfg_cc algo, void *params, const char *name, double value, char *err, size_t errlen);
/* "FILE:LINE" of a setting's `line` (the included file it is in, and its line there). */
const char *config_where(const struct engine_config *cfg, unsigned line, char *buf, size_t len);
/* Whether eal.extra_args allow-list PCI device `addr` themselves (-a ADDR[,ARGS], -aADDR, --allow
 * ADDR, --allow=ADDR; "3b:00.0" is "0000:3b:00.0"); NULL addr: any PCI device. */
bool config_extra_allows_pci(const struct cfg_eal *eal, const char *addr);
/* The other end of port p's in-process cable ("ring:L:a" <-> "ring:L:b"), or -1. */
int config_ring_peer(const struct engine_config *cfg, unsigned p);
/* Index of the port called `name`, or -1. */
int config_port_index(const struct engine_config *cfg, const char *name);
/* Fabric switch s's buffer, ECN and PFC: its tier's (switch.leaf, ...), else the switch group's. */
const struct cfg_switch *config_fabric_switch(const struct engine_config *cfg, unsigned s);
/* The frames an in-process link toward fabric switch rx_sw may hold, at most `most`: half its
 * lossless headroom in full-size frames (lab/fabric_lab.c says why), `most` without PFC. */
unsigned config_fabric_ring_frames(const struct engine_config *cfg, unsigned rx_sw, unsigned most);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Trial configurations as libconfig trees: the generated lab (hosts cabled to the engine's
 * virtual lab switch, flows between them) and the base engine config a suite derives its trials
 * from, with the small setters that change one setting of either. Each trial builds its own tree
 * (a fresh lab, or the base parsed again) and trial.c writes it with config_write_file().
 */
#ifndef ROCE_SUITE_LAB_H
#define ROCE_SUITE_LAB_H

#include <stdbool.h>

#include <libconfig.h>

#include "config_tree.h"
#include "suite.h"

#define LAB_HOSTS 8

/* Frame bytes with the FCS around a RoCEv2 payload: Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4,
 * FCS 4 (+8 DETH for UD, +16 RETH on a WRITE's first packet, +20 IPv6, +4 VLAN tag). */
#define ROCE_FRAME_OVERHEAD 62
/* What a frame takes on an Ethernet link besides its bytes with the FCS: preamble 8 and gap 12
 * (lab/switch.c paces `len + 24` with len without the FCS). */
#define WIRE_GAP_BYTES 20

/* ---- the generated lab -------------------------------------------------------------------------- */

struct lab {
	config_t cfg;
	config_setting_t *ports, *lcores, *flows;
	unsigned n_hosts;
	char host[LAB_HOSTS][8];
	unsigned ip_mtu;              /* what the flows need of the ports' MTU */
	unsigned n_flows;
};

struct lab_flow {
	const char *name, *from, *to;
	const char *transport;        /* "uc", "rc", "ud" */
	const char *op;               /* "send" or "write" */
	unsigned message_size, ib_mtu;
	unsigned priority;            /* DSCP 8 x priority + 2: the switch's trust-DSCP map gives it back */
	double rate_gbps;             /* 0: as fast as the lcore can */
	unsigned stop_messages;       /* 0: until the engine stops */
	bool latency;                 /* one-way probes */
};

/* An empty lab with the suite's switch group (or { buffer_kb = 1024; }). */
void lab_init(struct lab *l, const struct suite_cfg *s);
/* Host `name` (1..7 characters) cabled to switch port "s<name>"; both ends at gbps. */
void lab_add_host(struct lab *l, const char *name, double gbps);
config_setting_t *lab_add_flow(struct lab *l, const struct lab_flow *f);
/* Port MTUs from the largest frame, eal.memory_mb from the ports and the buffer. */
void lab_finish(struct lab *l, const struct suite_cfg *s);
void lab_free(struct lab *l);

/* The IB path MTU (256..4096) that carries `payload` bytes in one packet. */
unsigned ib_mtu_for(unsigned payload);
/* Frames of frame_bytes (with FCS) a link of gbps carries per second, and the Gb/s they are at
 * the engine's pacing (frame + FCS, no preamble or gap): the capacity RFC 2544 looks for. */
double link_fps(double gbps, unsigned frame_bytes);
double link_frame_gbps(double gbps, unsigned frame_bytes);

/* ---- the switch a trial config sets up, for the suites' expected values ------------------------ */

struct switch_view {
	bool present;
	double buffer_kb, queue_limit_kb, alpha;      /* engine defaults where not set */
	unsigned lossless;                            /* bit p: pfc.priorities has p */
	double xoff_kb, headroom_kb;
	bool ecn[8];
	double kmin_kb[8], kmax_kb[8];                /* by traffic class */
};

void switch_view_read(config_t *cfg, struct switch_view *v);
/* Bytes one lossy egress queue may hold when it is the only one using the buffer: the static
 * limit, alpha / (1 + alpha) of the buffer (the dynamic threshold's fixed point), or the buffer. */
double switch_queue_room(const struct switch_view *v);

/* ---- a base engine config ----------------------------------------------------------------------- */

/* Parses the base file into cfg (config_init'ed here); -1 with "FILE:LINE: ..." in err. */
int base_load(const char *path, config_t *cfg, char *err, size_t errlen);
/* The suite's switch members replace the base's, one by one. */
void base_merge_switch(config_t *cfg, const struct suite_cfg *s);
/* The flow group named `name` in cfg, or NULL. */
config_setting_t *base_flow(config_t *cfg, const char *name);
/* The port whose string setting `key` ("name", "mac") is `value` (MACs in any case), or NULL. */
config_setting_t *base_port(config_t *cfg, const char *key, const char *value);
/* Is flow group fs measured: listed in `names` (an array of strings), or every flow when NULL. */
bool base_flow_selected(const config_setting_t *fs, const config_setting_t *names);

#endif

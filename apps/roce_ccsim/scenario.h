/* SPDX-License-Identifier: BSD-3-Clause
 *
 * roce-ccsim's scenario: what a libconfig scenario file says, validated and in simulator units
 * (times in ns, rates in kb/s, sizes in bytes). docs/ccsim.md lists every setting.
 */
#ifndef ROCE_CCSIM_SCENARIO_H
#define ROCE_CCSIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dcqcn.h"
#include "np.h"
#include "red.h"
#include "timely.h"

#define SC_CLASSES 8
#define SC_MAX_FLOWS 4096
#define SC_MAX_RECEIVERS 256
#define SC_MAX_CNP_TIMES 100000
#define SC_NAME_LEN 32

struct fab_scenario;

enum sc_type { SC_NETWORK, SC_RP_REPLAY, SC_FABRIC };
enum sc_cc { CC_NONE, CC_DCQCN, CC_TIMELY };

struct sc_flow {
	char name[SC_NAME_LEN];
	enum sc_cc cc;
	unsigned receiver;            /* index into scenario.rx */
	unsigned priority;            /* switch class and PFC priority, 0..7 */
	uint64_t line_kbps;           /* NIC and link rate */
	uint32_t mtu_bytes;           /* packet size (the last packet of a sized flow may be shorter) */
	uint64_t start_ns;
	uint64_t size_bytes;          /* 0: sends until the end */
	uint64_t delay_ns;            /* propagation sender <-> switch */
	uint64_t jitter_ns;           /* each packet starts up to this much after its pacing time */
	struct dcqcn_params dcqcn;
	struct timely_params timely;
	uint64_t timely_start_kbps;   /* TIMELY's first rate */
	uint32_t timely_segment_bytes; /* one ACK (RTT sample) per segment */
};

struct sc_receiver {
	char name[SC_NAME_LEN];
	uint64_t rate_kbps;           /* the switch's egress port toward it: the bottleneck */
	uint64_t delay_ns;            /* propagation switch <-> receiver */
	struct np_params np;
};

struct sc_switch {
	uint64_t buffer_bytes;        /* shared by every egress queue; 0 = unlimited */
	bool pfc;
	uint8_t pfc_prio_mask;        /* bit p: priority p is lossless */
	uint64_t xoff_bytes, xon_bytes; /* per ingress port and priority */
	bool ecn[SC_CLASSES];
	struct red_params red[SC_CLASSES];
	/* fabric scenarios only (the shared MMU's, lab/switch_mmu.h) */
	double alpha;                 /* dynamic queue threshold; 0: static (queue_limit_bytes) */
	uint64_t queue_limit_bytes;   /* 0: the buffer */
	uint64_t headroom_bytes;      /* per ingress (port, priority) above xoff */
	bool headroom_set;            /* else from the links (fab_scenario.h) */
};

struct sc_replay {
	uint64_t line_kbps;
	uint64_t send_kbps;           /* 0: no bytes fed to the byte counter */
	uint32_t packet_bytes;        /* the byte counter is fed in packets of this size */
	uint64_t *cnp_ns;             /* ascending */
	unsigned n_cnp;
	struct dcqcn_params dcqcn;
};

struct scenario {
	char file[256];
	enum sc_type type;
	uint64_t seed;
	uint64_t duration_ns, sample_ns;
	uint64_t win_start_ns, win_end_ns; /* the summary's averaging window */
	struct sc_switch sw;
	struct sc_receiver *rx;
	unsigned n_rx;
	struct sc_flow *flows;
	unsigned n_flows;
	struct sc_replay rp;
	struct fab_scenario *fab;     /* SC_FABRIC: the fabric, its switches and traffic (fab_scenario.h) */
};

/* 0, or -1 with one line "FILE:LINE: SETTING: what is wrong (what is allowed)" in err. */
int scenario_load(const char *path, struct scenario *sc, char *err, size_t errlen);
int scenario_load_string(const char *text, const char *name, struct scenario *sc, char *err, size_t errlen);
void scenario_free(struct scenario *sc);

const char *sc_cc_name(enum sc_cc cc);

#endif

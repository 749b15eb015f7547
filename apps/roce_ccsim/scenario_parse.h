/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The scenario loader's pieces that the fabric scenario's (fab_scenario.c) shares with the
 * single-switch one (scenario.c): the loader's state, values in simulator units, the switch
 * group and a flow's congestion control. Internal to roce-ccsim.
 */
#ifndef ROCE_CCSIM_SCENARIO_PARSE_H
#define ROCE_CCSIM_SCENARIO_PARSE_H

#include <libconfig.h>

#include "config_read.h"
#include "scenario.h"

#define MAX_DURATION_US 60e6     /* 60 s of simulated time */
#define MAX_RATE_GBPS 1600.0
#define MAX_DELAY_US 1e6

struct loader {
	struct config_reader r;       /* file name, error line, prescan state (config_read.h) */
	struct scenario *sc;
};

/* Simulator units: µs -> ns and Gb/s -> kb/s, rounded to the nearest unit. */
uint64_t sc_us_to_ns(double us);
uint64_t sc_gbps_to_kbps(double g);
/* Optional members (1 set, 0 absent, -1 error written), as config_read.h's cr_opt_*. */
int sc_opt_us(struct loader *ld, const config_setting_t *g, const char *key, double lo, bool lo_open, double hi,
	      uint64_t *ns);
int sc_opt_gbps(struct loader *ld, const config_setting_t *g, const char *key, uint64_t *kbps);
/* A list of 1..max groups (returns the count), an array or list of at most max numbers. */
int sc_group_list(struct loader *ld, const config_setting_t *s, unsigned max);
int sc_number_list(struct loader *ld, const config_setting_t *s, unsigned max);

/* A switch group into sw (its defaults set by the caller). fabric: the shared MMU's settings too
 * (alpha, queue_limit_bytes, pfc.headroom_bytes) and the members tier_keys names (the caller's). */
int sc_parse_switch_group(struct loader *ld, const config_setting_t *g, struct sc_switch *sw, bool fabric,
			  const char *const *tier_keys);
/* cc, dcqcn, timely, priority, mtu_bytes, jitter_us of a flow (f->line_kbps set before). */
int sc_parse_flow_cc(struct loader *ld, const config_setting_t *g, struct sc_flow *f);

#endif

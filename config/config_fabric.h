/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The `fabric` group (docs/fabric.md) and the traffic patterns that name its hosts, read with
 * config_read.h's one-line errors into fabric/'s model: the one parser of engine configs,
 * roce-ccsim scenarios and roce-fabric. Plain C + libconfig.
 *
 * cfab_load() reads the group, builds the fabric and computes its routes, so that a topology
 * whose routes cannot reach a host, a link to an unknown switch or more hosts than addresses is
 * an error of the file ("FILE:LINE: fabric.links.[3]: ..."), never of a run.
 */
#ifndef ROCE_CONFIG_FABRIC_H
#define ROCE_CONFIG_FABRIC_H

#include <libconfig.h>

#include "config_read.h"
#include "fabric.h"

/* The group g (the file's `fabric`) into spec, f and its routes (all links up). 0, or -1 with
 * the error written; on success the caller frees all three. */
int cfab_load(struct config_reader *r, const config_setting_t *g, struct fab_spec *spec, struct fabric *f,
	      struct fab_routes *routes);

/* The settings of a pattern (pattern, hosts, dst, seed, rail, pairs), for the caller's list of
 * known keys. */
extern const char *const cfab_pattern_keys[];
/* A pattern's settings of group g (the caller checks g's other keys) into p, its hosts resolved
 * in f; p->hosts is malloc'ed when listed (free it). 0, or -1 with the error written. */
int cfab_pattern(struct config_reader *r, const config_setting_t *g, const struct fabric *f, struct fab_pattern *p);

/* A `traffic` entry (docs/fabric.md#traffic-patterns): a pattern, and how its pairs become flows.
 * Each pair is qps_per_pair flows (QPs); flow i of the entry has QPN qpn + i and destination QPN
 * dest_qpn + i, and UDP source port entropy (from the QPN pair, as the engine's default) or
 * sport + i * sport_step. */
struct cfab_traffic {
	char name[FAB_NAME_LEN];
	struct fab_pattern pattern;
	unsigned qps_per_pair;
	uint32_t qpn, dest_qpn;
	bool sport_entropy;
	uint16_t sport, sport_step;
	double gbps;                 /* each flow's rate; 0: not given */
	unsigned line;
};
#define CFAB_QPN_ROOM 65536      /* an entry's QPNs by default: the next starts this far on */

/* A link event of `fabric.events` (docs/fabric.md#link-events). */
struct cfab_event {
	double at_s;                 /* the engine: after the flows start; roce-ccsim: after the run starts */
	unsigned link;               /* the fabric's link */
	bool up;
	unsigned line;               /* where the file lists it */
};

/* g's `events` = ( { at_s; link; state = "down" | "up"; }, ... ) in time order into out (at most
 * max) and `convergence_ms` (default 50) into *convergence_ms: how many events, or -1 with the
 * error written. */
int cfab_events(struct config_reader *r, const config_setting_t *g, const struct fabric *f, struct cfab_event *out,
		unsigned max, double *convergence_ms);

/* fabric.external.link_command's template with {link} (a link's name) and {state} ("down", "up")
 * filled in, into out: 0, or -1 when it does not fit in len (the engine runs it at a link event's
 * time; roce-suite to bring a link back up after a failure trial). */
int cfab_link_command(const char *template, const char *link, const char *state, char *out, size_t len);
/* A command's template with each "{names[i]}" replaced by values[i] (n of them), into out: 0, or
 * -1 when it does not fit in len. */
int cfab_fill(const char *template, const char *const *names, const char *const *values, unsigned n, char *out,
	      size_t len);

/* The keys each program adds to a traffic entry (docs/fabric.md#traffic-patterns): the engine's
 * (`flow`: the engine flow settings of its flows), roce-ccsim's (congestion control, sizes,
 * arrivals: docs/ccsim.md), and both (what roce-fabric, reading either file, leaves to them). */
extern const char *const cfab_engine_traffic_keys[];
extern const char *const cfab_ccsim_traffic_keys[];
extern const char *const cfab_program_traffic_keys[];

/* Entry e into t (p->hosts malloc'ed: fab_pattern's), its QPNs from next_qpn unless it says;
 * extra_keys: the caller's own keys of an entry (NULL-terminated, or NULL). 0, or -1 with the
 * error written. */
int cfab_traffic(struct config_reader *r, const config_setting_t *e, const struct fabric *f,
		 const char *const *extra_keys, uint32_t next_qpn, struct cfab_traffic *t);

#endif

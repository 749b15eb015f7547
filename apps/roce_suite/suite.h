/* SPDX-License-Identifier: BSD-3-Clause
 *
 * roce-suite's shared types: the suite configuration as the loader validated it (suite_config.c),
 * and the suites' entry points (rfc2544.c, microburst.c, hol.c, incast.c, collective.c, and the
 * AI-fabric suite of ai_fabric/). Every
 * suite runs roce-engine trials through the runner (trial.h) and adds its table to the suite
 * report. docs/suites.md describes every setting and table.
 */
#ifndef ROCE_SUITE_H
#define ROCE_SUITE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <libconfig.h>

#include "config_read.h"

#define SUITE_NAME_LEN 64
#define SUITE_MAX_LIST 16          /* frame sizes, fractions, sender counts, priorities */

/* Exit status (docs/suites.md): as the engine's (docs/engine.md), 6 a failed verdict. An error
 * outranks a failed verdict. */
enum suite_exit {
	EXIT_DONE = 0,       /* every trial ran, every verdict passed (or the suite only measures) */
	EXIT_USAGE = 2,      /* bad command line */
	EXIT_CONFIG = 3,     /* the suite config, its base, or a trial config the engine refused */
	EXIT_TRIAL = 4,      /* the suite ended, but a trial failed to run (timeout, crash, no report) */
	EXIT_IO = 5,         /* a folder or the suite report could not be written, the engine not run */
	EXIT_VERDICT = 6,    /* every trial ran, but a verdict failed (verdict.h) */
	EXIT_INTERRUPTED = 7 /* SIGINT / SIGTERM: the trial in progress was stopped, the report written */
};

enum suite_type { SUITE_RFC2544, SUITE_MICROBURST, SUITE_HOL, SUITE_INCAST, SUITE_COLLECTIVE, SUITE_AI_FABRIC, SUITE_TYPES };

extern const char *const suite_type_names[]; /* NULL-terminated, by enum suite_type */

/* The lab the suite generates when it has no base config (lab.c). */
struct lab_cfg {
	double link_gbps;        /* the switch port toward the receiver: the bottleneck */
	double host_gbps;        /* the hosts' links and their switch ports */
	unsigned senders;        /* rfc2544 and microburst: hosts sending to the receiver */
	unsigned memory_mb;      /* 0: computed from the ports and the switch buffer */
};

struct trial_cfg {
	double duration_s;       /* traffic time of one trial (0: until the flows stop) */
	double timeout_s;        /* a trial running longer is killed; 0: 3 x duration + 20 s */
	unsigned retries;        /* a trial that fails its criterion is run again up to this often */
};

struct rfc2544_cfg {
	unsigned frame_sizes[SUITE_MAX_LIST], n_frames; /* Ethernet frame bytes with the FCS */
	double loss_threshold_pct;
	double min_gbps, max_gbps;      /* the search's bounds (max 0: 1.1 x the bottleneck) */
	double resolution_pct;          /* of max_gbps: the search stops when hi - lo is below it */
	unsigned max_trials;            /* per frame size, retries not counted */
	double lat_fractions[SUITE_MAX_LIST]; unsigned n_lat;
	double step_pct;                /* loss curve: from max_gbps down in steps of this % of it */
	double expected_gbps;           /* base configs: the bottleneck's Gb/s, for the table (0: none) */
	const config_setting_t *flows;  /* base configs: the measured flow groups (NULL: all) */
};

struct microburst_cfg {
	unsigned frame_size;
	unsigned priority;              /* of the burst's frames (DSCP = 8 x priority + 2) */
	unsigned min_burst, max_burst;  /* frames in one burst, all senders together */
	unsigned resolution;            /* the search stops when hi - lo is at most this many frames */
	unsigned max_trials;            /* per search */
	bool by_loss, by_ecn, by_pfc;   /* the searches: without loss, without a CE mark, without XOFF */
	const config_setting_t *flows;  /* base configs: the bursting flow groups (NULL: all) */
};

struct hol_cfg {
	unsigned frame_size;
	unsigned congested_priority;
	unsigned victim_priorities[8], n_victims;
	unsigned congestors;            /* hosts besides the shared ingress sending to the congested port */
	double congestor_gbps, victim_gbps; /* 0: 0.9 x the link's capacity, link / (2 x victims) */
	bool pfc_cases[2]; unsigned n_cases; /* each: PFC on / off at the switch */
};

struct incast_cfg {
	unsigned senders[SUITE_MAX_LIST], n_senders;
	unsigned mtu;                   /* IB path MTU: payload of each packet */
	double rate_gbps;               /* each sender's; 0: its link's frame capacity */
	unsigned transfer_kb, rounds;   /* the completion trial (transfer_kb 0: none) */
	char transport[4];              /* of the completion trial: "rc" or "uc" */
	unsigned priority;
};

struct collective_cfg {
	unsigned repeat;
};

struct aif_cfg;

struct suite_cfg {
	char file[PATH_MAX];
	char name[SUITE_NAME_LEN];
	enum suite_type type;
	bool measure_only;              /* verdicts are reported, but do not fail the exit status */
	char base[PATH_MAX];            /* resolved against the suite file's folder; "" = generated lab */
	config_t text;                  /* the suite file, parsed again and kept: switch group, lines */
	bool text_ok;
	struct cr_sources src;          /* the files of its lines (it may @include others) */
	const config_setting_t *sw;     /* the suite's switch group, or NULL */
	struct lab_cfg lab;
	struct trial_cfg trial;
	struct rfc2544_cfg rfc2544;
	struct microburst_cfg microburst;
	struct hol_cfg hol;
	struct incast_cfg incast;
	struct collective_cfg collective;
	struct aif_cfg *aif;            /* type ai_fabric (ai_fabric/aif.h); NULL otherwise */
};

/* snprintf where cutting a long message short is what we want (paths and engine lines of any
 * length go into fixed buffers); a function, so the compiler's truncation warning is not raised
 * at every call that means it. */
void text_printf(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Lists of a suite file's group: an array of min..max elements (the count, 0 when absent, -1
 * after an error); integers in lo..hi (1 when read, 0 absent, -1 error); numbers in [lo, hi]
 * ((lo, hi] with lo_open), which may be empty. */
int suite_opt_array(struct config_reader *r, const config_setting_t *g, const char *key, unsigned min, unsigned max,
		    const config_setting_t **out);
int suite_opt_uint_list(struct config_reader *r, const config_setting_t *g, const char *key, long long lo,
			long long hi, unsigned max, unsigned *vals, unsigned *n_out);
int suite_opt_float_list(struct config_reader *r, const config_setting_t *g, const char *key, double lo, bool lo_open,
			 double hi, unsigned max, double *vals, unsigned *n_out);

/* 0, or -1 with "FILE:LINE: SETTING: what is wrong (what is allowed)" in err. */
int suite_config_load(const char *path, struct suite_cfg *s, char *err, size_t errlen);
void suite_config_free(struct suite_cfg *s);
/* "FILE:LINE" of SETTING (a libconfig path) in the suite file (or the file it includes SETTING
 * from), NULL when it is not there. */
const char *suite_config_where(const struct suite_cfg *s, const char *setting, char *buf, size_t len);

struct runner;

/* Each runs its trials and adds its table(s) to `out` (the suite report's object). 0, or -1 when
 * the suite could not go on (a trial config refused, interrupted): the runner says why. */
int suite_rfc2544(struct runner *rn, const struct suite_cfg *s, json_t *out);
int suite_microburst(struct runner *rn, const struct suite_cfg *s, json_t *out);
int suite_hol(struct runner *rn, const struct suite_cfg *s, json_t *out);
int suite_incast(struct runner *rn, const struct suite_cfg *s, json_t *out);
int suite_collective(struct runner *rn, const struct suite_cfg *s, json_t *out);
/* ai_fabric/aif.h */
int suite_ai_fabric(struct runner *rn, const struct suite_cfg *s, json_t *out);

#endif

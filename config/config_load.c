/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Configuration loader: libconfig text -> struct engine_config, validated completely before
 * anything touches EAL. One function per section on the typed getters of config_read.h (shared
 * with roce-ccsim's scenario loader), in the config_*.c file of its section; every error is one
 * line "FILE:LINE: SETTING: what is wrong (what is allowed)". Setting by setting: docs/config.md.
 *
 * Plain C, libc and libconfig only, so the loader can be unit-tested and fuzzed without EAL.
 */
#include "config_internal.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void config_defaults(struct engine_config *cfg)
{
	cpu_set_t cpus;
	int ncpu = 1;

	memset(cfg, 0, sizeof(*cfg));
	/* the CPUs this process may run on, which is what EAL can pin lcores to */
	if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0)
		ncpu = CPU_COUNT(&cpus);
	else if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		ncpu = 2;
	snprintf(cfg->eal.lcores, sizeof(cfg->eal.lcores), "%s", ncpu >= 2 ? "0-1" : "0");
	cfg->eal.main_lcore = 0;
	cfg->eal.memory_mb = 256;
	cfg->eal.huge_pages = false;
	snprintf(cfg->eal.file_prefix, sizeof(cfg->eal.file_prefix), "roce-engine-%ld", (long)getpid());
	snprintf(cfg->eal.log_level, sizeof(cfg->eal.log_level), "notice");
	cfg->duration_s = 0;
	cfg->stats_interval_s = 1.0;
	cfg->latency_sample_every = 1;
	cfg->latency_foreign_qps = 64;
	cfg->cc_trace_interval_us = 100;
	cfg->cc_trace_qps = 16;
	cfg->cc_trace_step = 1;
	cfg->capture_every = 1;
	snprintf(cfg->http_addr, sizeof(cfg->http_addr), "127.0.0.1");
	for (unsigned g = 0; g < CFG_MAX_FLOW_GROUPS; g++)
		cfg->group_collective[g] = -1;
}

/* The sections in the order they are read: each may refer to those before it (the roles to the
 * ports and eal's lcore set, the flows to ports and roles, the collectives to flows, ...), and the
 * first fault found is the one reported, so the order is part of what a broken file says. The
 * checks across sections that need both sides read stand between them (EAL's options against
 * the PCI ports, a fabric's external NICs among them). */
static int (*const sections[])(struct loader *ld, const config_setting_t *root) = {
	ld_parse_eal, ld_parse_ports, ld_parse_roles, ld_parse_fabric, ld_eal_vs_pci_ports, ld_parse_switch, ld_parse_flows,
	ld_parse_collectives, ld_parse_responders, ld_parse_peers, ld_parse_pfc_generators, ld_parse_phases,
	ld_parse_sla, ld_parse_run,
};

static int load_root(void *arg, const config_setting_t *root)
{
	static const char *const keys[] = { "eal", "ports", "lcores", "flows", "collectives", "responders",
					    "pfc_generators", "phases", "run", "switch", "peers", "sla", "fabric", "traffic",
					    NULL };
	struct loader *ld = arg;

	if (cr_known_keys(&ld->r, root, keys))
		return -1;
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if (sections[i](ld, root))
			return -1;
	return 0;
}

int config_load_string(const char *text, const char *name, struct engine_config *cfg, char *err, size_t errlen)
{
	return config_load_string_env(text, name, NULL, cfg, err, errlen);
}

/* One load, of a file (text NULL) or of text. */
static int load(const char *path, const char *text, const char *name, const struct config_env *env,
		struct engine_config *cfg, char *err, size_t errlen)
{
	struct loader ld = { .cfg = cfg, .env = env };
	int rc;

	cr_init(&ld.r, text ? name : path, err, errlen, "configuration");
	config_defaults(cfg);
	snprintf(cfg->file, sizeof(cfg->file), "%s", ld.r.file);
	rc = text ? cr_load_text(&ld.r, text, load_root, &ld) : cr_load_file(&ld.r, path, load_root, &ld);
	cfg->src = ld.r.src;
	if (ld.fabric)
		fabric_free(ld.fabric);
	free(ld.fabric);
	return rc;
}

int config_load_string_env(const char *text, const char *name, const struct config_env *env,
			   struct engine_config *cfg, char *err, size_t errlen)
{
	return load(NULL, text, name, env, cfg, err, errlen);
}

int config_load(const char *path, struct engine_config *cfg, char *err, size_t errlen)
{
	return config_load_env(path, NULL, cfg, err, errlen);
}

int config_load_env(const char *path, const struct config_env *env, struct engine_config *cfg, char *err,
		    size_t errlen)
{
	return load(path, NULL, NULL, env, cfg, err, errlen);
}

const char *config_where(const struct engine_config *cfg, unsigned line, char *buf, size_t len)
{
	return cr_where(&cfg->src, cfg->file, line, buf, len);
}

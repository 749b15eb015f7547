/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What the loader's section files (config_*.c) share; not part of config/'s contract, which is
 * config.h. Each section reads its settings through the typed getters of config_read.h into
 * loader->cfg and returns 0, or -1 after writing the one error line (cr_fail()). Names start
 * with ld_ because the static library is linked into programs with other libraries.
 */
#ifndef ROCE_CONFIG_INTERNAL_H
#define ROCE_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libconfig.h>

#include "config.h"
#include "config_read.h"

/* One load: the reader (file name, error line, prescan state) and what the sections fill. */
struct loader {
	struct config_reader r;       /* file name, error line, prescan state (config_read.h) */
	struct engine_config *cfg;
	const struct config_env *env; /* checks beyond the text (may be NULL) */
	uint64_t lcore_set[2];        /* eal.lcores as a bit set (config_eal.c) */
	struct fabric *fabric;        /* the `fabric` group's model while loading (its patterns' hosts) */
	/* where each flow group was written: its `flows` entry, or the `traffic` entry it came from */
	const config_setting_t *group_setting[CFG_MAX_FLOW_GROUPS];
};

/* ---- the sections, in the order config_load.c reads them -------------------------------------- */

int ld_parse_eal(struct loader *ld, const config_setting_t *root);           /* config_eal.c */
int ld_parse_ports(struct loader *ld, const config_setting_t *root);         /* config_ports.c */
int ld_eal_vs_pci_ports(struct loader *ld, const config_setting_t *root);    /* config_eal.c */
int ld_parse_roles(struct loader *ld, const config_setting_t *root);         /* config_eal.c */
int ld_parse_fabric(struct loader *ld, const config_setting_t *root);        /* config_lab_fabric.c */
struct fabric;
/* fabric.external (config_fabric_external.c): each NIC's device and gateway, into the ports
 * ports[first .. first + f->n_nics) and cfg->fab.nic[]; 1 when the group is absent, 0, -1. */
int ld_fabric_external(struct loader *ld, const config_setting_t *g, const struct fabric *f, unsigned first);
int ld_parse_switch(struct loader *ld, const config_setting_t *root);        /* config_lab.c */
int ld_parse_flows(struct loader *ld, const config_setting_t *root);         /* config_flows.c */
int ld_parse_collectives(struct loader *ld, const config_setting_t *root);   /* config_flows.c */
int ld_parse_responders(struct loader *ld, const config_setting_t *root);    /* config_responders.c */
int ld_parse_peers(struct loader *ld, const config_setting_t *root);         /* config_responders.c */
int ld_parse_pfc_generators(struct loader *ld, const config_setting_t *root); /* config_qos.c */
int ld_parse_phases(struct loader *ld, const config_setting_t *root);        /* config_run.c */
int ld_parse_sla(struct loader *ld, const config_setting_t *root);           /* config_run.c */
int ld_parse_run(struct loader *ld, const config_setting_t *root);           /* config_run.c */

/* ---- groups one section reads inside another's ------------------------------------------------- */

/* a port's qos = { ... } (config_qos.c) and np = { ... } (config_cc.c) */
int ld_port_qos(struct loader *ld, const config_setting_t *ps, struct cfg_port *p);
int ld_port_np(struct loader *ld, const config_setting_t *ps, struct cfg_port *p);
/* a flow's cc, dcqcn and timely (config_cc.c) */
int ld_flow_cc(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g);
/* a flow's `inject` (tx) or a port's `rx_inject` list, of QPs 0..qps-1 (config_cc.c) */
int ld_inject_list(struct loader *ld, const config_setting_t *parent, const char *key, struct cfg_inject *out,
		   unsigned *n_out, bool tx, unsigned qps);

/* a flow's `dst`: a host of the fabric, for dst_mac, dst_ip and dst_port (config_lab_fabric.c) */
int ld_flow_fabric_dst(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g);
/* the `traffic` list's patterns as flow groups after those of `flows` (config_lab_fabric.c) */
int ld_traffic_groups(struct loader *ld, const config_setting_t *root);
/* a flow group's defaults, and the settings of a traffic entry's `flow` template into g, whose
 * port, count and QPNs are set (config_flows.c) */
void ld_flow_defaults(struct cfg_flow_group *g);
int ld_flow_template(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g);

/* ---- values (config_values.c unless named) ------------------------------------------------------ */

/* A string that fits len (with its NUL); opt_: 1 copied, 0 absent, -1 error. */
int ld_str_value(struct loader *ld, const config_setting_t *s, char *out, size_t len);
int ld_opt_str(struct loader *ld, const config_setting_t *g, const char *key, char *out, size_t len);
/* A list of min..max elements (shape: how one is written, noun: what they are, for messages): its
 * length, or -1 after an error. */
int ld_list_length(struct loader *ld, const config_setting_t *s, const char *shape, const char *noun, int min,
		   int max);
/* 1..max characters of A-Z a-z 0-9 _ - */
bool ld_valid_name(const char *s, size_t max);
/* g's required member `name` (`what`: what "missing (required: ...)" asks for), a valid name,
 * copied into out: the setting, for messages about a duplicate; NULL after an error. */
const config_setting_t *ld_name(struct loader *ld, const config_setting_t *g, const char *what,
				char out[CFG_NAME_LEN]);
int ld_mac_value(struct loader *ld, const config_setting_t *s, uint8_t mac[6]);
/* DDDD:BB:DD.F or BB:DD.F (config_ports.c) */
bool ld_is_pci_addr(const char *s);
/* g's member `port`, a port's name: its index, or -1 after an error (config_ports.c). */
int ld_port_ref(struct loader *ld, const config_setting_t *g);
/* An lcore id s names that may run a role (in eal.lcores, not the main lcore) into *out; 0, or -1
 * after an error (config_eal.c). */
int ld_worker_lcore(struct loader *ld, const config_setting_t *s, unsigned *out);
/* The highest lcore of eal.lcores that is not the main lcore, or -1 (config_eal.c). */
int ld_last_worker_lcore(const struct loader *ld);
/* A port's `device` and `vdev_args` in group ps: checked as the ports' (config_ports.c). */
int ld_port_device(struct loader *ld, const config_setting_t *ps, struct cfg_port *p);
/* A port's settings that are not its name, device, addresses or speed (mtu, rx_desc, tx_desc,
 * timestamps, qos, np), from group t, whose other keys the caller checked (config_ports.c). */
int ld_port_settings(struct loader *ld, const config_setting_t *t, struct cfg_port *p);
/* A non-empty array of priorities 0..7, ORed into *mask (config_qos.c). */
int ld_priority_mask(struct loader *ld, const config_setting_t *s, uint8_t *mask);

#endif

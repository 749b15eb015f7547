/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The `ports` section: devices (vdev, ring cable end, PCI address), addresses, queue and ring
 * sizes, steering and timestamps; a port's qos and np groups and rx_inject list are read by
 * config_qos.c and config_cc.c. Also the queries over ports the engine makes at run time.
 */
#include "config_internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- device names --------------------------------------------------------------------------- */

static bool is_vdev(const char *dev)
{
	return !strncmp(dev, "net_", 4);
}

static bool hex_run(const char **p, int min, int max)
{
	int n = 0;

	while (isxdigit((unsigned char)**p) && n <= max)
		(*p)++, n++;
	return n >= min && n <= max;
}

/* DDDD:BB:DD.F or BB:DD.F, the forms EAL's PCI bus accepts. */
bool ld_is_pci_addr(const char *s)
{
	const char *p = s;

	if (strchr(s, ':') != strrchr(s, ':')) {
		if (!hex_run(&p, 4, 4) || *p++ != ':')
			return false;
	}
	if (!hex_run(&p, 2, 2) || *p++ != ':' || !hex_run(&p, 2, 2) || *p++ != '.')
		return false;
	return *p >= '0' && *p <= '7' && p[1] == '\0';
}

/* ring:LINK:a / ring:LINK:b, the two ends of the engine's in-process virtual cable (pmd_glue). */
static bool is_ring_pair(const char *dev)
{
	size_t n;

	if (strncmp(dev, "ring:", 5) != 0)
		return false;
	dev += 5;
	n = strspn(dev, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-");
	return n >= 1 && n <= 20 && dev[n] == ':' && (dev[n + 1] == 'a' || dev[n + 1] == 'b') && dev[n + 2] == '\0';
}

/* Devices that report no real link speed. */
static bool is_virtual(const char *dev) { return is_vdev(dev) || is_ring_pair(dev); }

/* Public (config.h): pmd_glue and perftest ask it of a device name, whose syntax is the config's. */
bool config_device_is_virtual(const char *device) { return is_virtual(device); }

static bool valid_device(const char *dev)
{
	if (is_ring_pair(dev))
		return true;
	if (is_vdev(dev))
		return dev[4] && strspn(dev + 4, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(dev + 4);
	return ld_is_pci_addr(dev);
}

/* ---- ports ---------------------------------------------------------------------------------- */

int ld_port_device(struct loader *ld, const config_setting_t *ps, struct cfg_port *p)
{
	const config_setting_t *s = cr_required(&ld->r, ps, "device",
						"a vdev name such as net_ring0, or a PCI address");
	char buf[64];
	int rc;

	/* short enough that "--vdev DEVICE,ARGS" fits CFG_STR_LEN; EAL's own limit is 64 */
	if (!s || ld_str_value(ld, s, p->device, 64))
		return -1;
	if (!valid_device(p->device))
		return cr_fail(&ld->r, s,
			       "'%s' is neither a vdev name (net_<driver><n>, e.g. net_ring0), a ring pair end "
			       "(ring:LINK:a or ring:LINK:b) nor a PCI address (0000:3b:00.0)",
			       cr_shown(p->device, buf));
	if (is_vdev(p->device) && ld->env && ld->env->vdev_driver) {
		char why[700];

		if (!ld->env->vdev_driver(ld->env->arg, &ld->cfg->eal, p->device, why, sizeof(why)))
			return cr_fail(&ld->r, s, "no vdev driver of this DPDK takes '%s' (vdev drivers: %s)", p->device,
				       why);
	}
	rc = ld_opt_str(ld, ps, "vdev_args", p->vdev_args, sizeof(p->vdev_args) - strlen(p->device) - 1);
	if (rc < 0)
		return -1;
	if (rc == 1 && !is_vdev(p->device))
		return cr_fail_member(&ld->r, ps, "vdev_args",
				      "only vdevs take arguments (device must start with net_; "
				      "give PCI devargs with eal.extra_args)");
	for (const char *c = p->vdev_args; *c; c++)
		if (isspace((unsigned char)*c) || !isprint((unsigned char)*c))
			return cr_fail_member(&ld->r, ps, "vdev_args", "contains a space or control character "
					      "(key=value pairs joined by ',')");
	return 0;
}

static int port_addresses(struct loader *ld, const config_setting_t *ps, struct cfg_port *p)
{
	const config_setting_t *s;
	char buf[64];

	s = config_setting_get_member(ps, "mac");
	if (s) {
		if (ld_mac_value(ld, s, p->mac))
			return -1;
		if (p->mac[0] & 1)
			return cr_fail(&ld->r, s,
				       "%s is a multicast address (a port needs a unicast MAC: first octet even)",
				       config_setting_get_string(s));
		p->has_mac = true;
	}
	s = config_setting_get_member(ps, "ipv4");
	if (s) {
		if (cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a string"))
			return -1;
		if (inet_pton(AF_INET, config_setting_get_string(s), p->ipv4) != 1)
			return cr_fail(&ld->r, s, "'%s' is not an IPv4 address (dotted quad, e.g. 192.168.1.1)",
				       cr_shown(config_setting_get_string(s), buf));
		p->has_ipv4 = true;
	}
	s = config_setting_get_member(ps, "ipv6");
	if (s) {
		if (cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a string"))
			return -1;
		if (inet_pton(AF_INET6, config_setting_get_string(s), p->ipv6) != 1)
			return cr_fail(&ld->r, s, "'%s' is not an IPv6 address (e.g. fd00::1)",
				       cr_shown(config_setting_get_string(s), buf));
		p->has_ipv6 = true;
	}
	if (!p->has_ipv4 && !p->has_ipv6)
		return cr_fail_member(&ld->r, ps, "ipv4", "missing (a port needs ipv4, ipv6 or both)");
	return 0;
}

/* mtu, rx_desc, tx_desc */
static int port_mtu_desc(struct loader *ld, const config_setting_t *ps, struct cfg_port *p)
{
	static const char *const desc[] = { "rx_desc", "tx_desc" };
	unsigned *dv[] = { &p->rx_desc, &p->tx_desc };
	int rc;

	if (cr_opt_u32(&ld->r, ps, "mtu", 576, 9000, &p->mtu) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		rc = cr_opt_u32(&ld->r, ps, desc[i], 64, 16384, dv[i]);
		if (rc < 0)
			return -1;
		if (rc == 1 && (*dv[i] & (*dv[i] - 1)))
			return cr_fail_member(&ld->r, ps, desc[i], "%u is not a power of two (64, 128, ... 16384)",
					      *dv[i]);
	}
	return 0;
}

static int port_sizes(struct loader *ld, const config_setting_t *ps, struct cfg_port *p)
{
	int rc;

	if (cr_opt_u32(&ld->r, ps, "rx_queues", 1, 16, &p->rx_queues) < 0 ||
	    cr_opt_u32(&ld->r, ps, "tx_queues", 1, 16, &p->tx_queues) < 0 || port_mtu_desc(ld, ps, p))
		return -1;
	rc = cr_opt_float(&ld->r, ps, "link_speed_gbps", 0, true, 800, &p->link_speed_gbps);
	if (rc < 0)
		return -1;
	if (rc == 0 && is_virtual(p->device))
		return cr_fail_member(&ld->r, ps, "link_speed_gbps", "missing (required for vdev %s: virtual devices "
				      "report no real speed; 0 < x <= 800)", p->device);
	return 0;
}

static int port_steering(struct loader *ld, const config_setting_t *ps, struct cfg_port *p)
{
	static const char *const names[] = {"auto", "off", "rules", "isolate", NULL};
	const config_setting_t *s = config_setting_get_member(ps, "steering");
	int i;

	if (!s)
		return 0;
	if ((i = cr_pick(&ld->r, s, names, NULL)) < 0)
		return -1;
	p->steering = (enum cfg_steering)i;
	if (p->steering >= CFG_STEER_RULES && is_ring_pair(p->device))
		return cr_fail(&ld->r, s, "ring pair end %s has no rte_flow: steering must be auto or off", p->device);
	return 0;
}

static int port_timestamps(struct loader *ld, const config_setting_t *ps, struct cfg_port *p)
{
	static const char *const names[] = {"auto", "hardware", "software", NULL};
	const config_setting_t *s = config_setting_get_member(ps, "timestamps");
	int i;

	if (s) {
		if ((i = cr_pick(&ld->r, s, names, NULL)) < 0)
			return -1;
		p->timestamps = (enum cfg_timestamps)i;
	}
	return cr_opt_float(&ld->r, ps, "tx_schedule_lead_us", 0, false, 1e6, &p->tx_schedule_lead_us) < 0 ? -1 : 0;
}

static int parse_port(struct loader *ld, const config_setting_t *ps, unsigned idx)
{
	static const char *const keys[] = { "name", "device", "vdev_args", "mac", "ipv4", "ipv6",
					    "link_speed_gbps", "rx_queues", "tx_queues", "rx_desc", "tx_desc",
					    "mtu", "rx_drop_probability", "steering", "timestamps", "tx_schedule_lead_us",
					    "qos", "np", "rx_inject", NULL };
	struct cfg_port *p = &ld->cfg->ports[idx];
	const config_setting_t *s;

	if (cr_want_type(&ld->r, ps, CONFIG_TYPE_GROUP, "a group { name = ...; device = ...; }") ||
	    cr_known_keys(&ld->r, ps, keys))
		return -1;
	p->rx_queues = p->tx_queues = 1;
	p->rx_desc = p->tx_desc = 1024;
	p->mtu = 1500;
	p->line = config_setting_source_line(ps);
	if (!(s = ld_name(ld, ps, "a unique name of 1..31 A-Z a-z 0-9 _ -", p->name)))
		return -1;
	for (unsigned j = 0; j < idx; j++)
		if (!strcmp(ld->cfg->ports[j].name, p->name))
			return cr_fail(&ld->r, s, "duplicate port name '%s' (also at %s; names must be unique)",
				       p->name, cr_at(&ld->r, ld->cfg->ports[j].line, (char[CR_AT_LEN]){ 0 }));
	if (ld_port_device(ld, ps, p))
		return -1;
	for (unsigned j = 0; j < idx; j++)
		if (!strcasecmp(ld->cfg->ports[j].device, p->device))
			return cr_fail_member(&ld->r, ps, "device",
					      "device %s is already port '%s' at %s (one port "
					      "per device)", p->device, ld->cfg->ports[j].name,
					      cr_at(&ld->r, ld->cfg->ports[j].line, (char[CR_AT_LEN]){ 0 }));
	return port_addresses(ld, ps, p) || port_sizes(ld, ps, p) ||
			       cr_opt_float(&ld->r, ps, "rx_drop_probability", 0, false, 1,
					    &p->rx_drop_probability) < 0 ||
			       port_steering(ld, ps, p) || port_timestamps(ld, ps, p) || ld_port_qos(ld, ps, p) ||
			       ld_port_np(ld, ps, p) ||
			       ld_inject_list(ld, ps, "rx_inject", p->rx_inject, &p->n_rx_inject, false, 1)
		       ? -1
		       : 0;
}

int ld_port_settings(struct loader *ld, const config_setting_t *t, struct cfg_port *p)
{
	p->rx_queues = p->tx_queues = 1;
	p->rx_desc = p->tx_desc = 1024;
	p->mtu = 1500;
	return port_mtu_desc(ld, t, p) || port_timestamps(ld, t, p) || ld_port_qos(ld, t, p) || ld_port_np(ld, t, p) ? -1 : 0;
}

/* A ring cable carries TX queue q of one end to RX queue q of the other: frames sent on a queue
 * the other end does not poll would stay in its ring, their mbufs never returned. Checked at the
 * end declared second (ps, port p), in both directions. */
static int ring_queues(struct loader *ld, const config_setting_t *ps, unsigned p)
{
	const struct cfg_port *a = &ld->cfg->ports[p], *b;
	int peer = config_ring_peer(ld->cfg, p);

	if (peer < 0 || (unsigned)peer > p)
		return 0;
	b = &ld->cfg->ports[peer];
	if (a->tx_queues > b->rx_queues || b->tx_queues > a->rx_queues) {
		bool a_sends = a->tx_queues > b->rx_queues;
		const struct cfg_port *tx = a_sends ? a : b, *rx = a_sends ? b : a;
		char lost[32];

		if (tx->tx_queues - rx->rx_queues == 1)
			snprintf(lost, sizeof(lost), "queue %u", rx->rx_queues);
		else
			snprintf(lost, sizeof(lost), "queues %u..%u", rx->rx_queues, tx->tx_queues - 1);
		return cr_fail_member(&ld->r, ps, a_sends ? "tx_queues" : "rx_queues",
				      "port '%s' (%s) has tx_queues %u but the other end of its ring cable, port '%s' (%s), "
				      "has rx_queues %u: frames of its TX %s would reach no RX queue (one end's "
				      "tx_queues must be <= the other's rx_queues)", tx->name, tx->device, tx->tx_queues,
				      rx->name, rx->device, rx->rx_queues, lost);
	}
	return 0;
}

int ld_parse_ports(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *s;
	int n;

	if (!config_setting_get_member(root, "ports") && config_setting_get_member(root, "fabric"))
		return 0; /* the fabric's NICs are the ports (config_lab_fabric.c) */
	s = cr_required(&ld->r, root, "ports", "a list ( { name = ...; device = ...; }, ... )");

	if (!s || (n = ld_list_length(ld, s, "( { ... }, ... )", "ports", 1, CFG_MAX_PORTS)) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (parse_port(ld, config_setting_get_elem(s, (unsigned)i), (unsigned)i))
			return -1;
	ld->cfg->n_ports = (unsigned)n;
	for (int i = 0; i < n; i++)
		if (ring_queues(ld, config_setting_get_elem(s, (unsigned)i), (unsigned)i))
			return -1;
	return 0;
}

/* A member naming a port; returns its index or -1 after an error. */
int ld_port_ref(struct loader *ld, const config_setting_t *g)
{
	const config_setting_t *s = cr_required(&ld->r, g, "port", "the name of a port in ports");
	char names[200] = "", buf[64];
	int idx;

	if (!s || cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a string (a port's name)"))
		return -1;
	idx = config_port_index(ld->cfg, config_setting_get_string(s));
	if (idx >= 0)
		return idx;
	for (unsigned i = 0; i < ld->cfg->n_ports; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
			 ld->cfg->ports[i].name);
	return cr_fail(&ld->r, s, "no port named '%s' (ports: %s)", cr_shown(config_setting_get_string(s), buf), names);
}

/* ---- queries over the ports ----------------------------------------------------------------- */

/* These two stay here rather than with their run-time users (telemetry/control.c, lab/switch.c):
 * they answer from struct engine_config alone, and the loader itself needs them (port names in
 * lists, the ends of a ring cable for its queue and switch checks). */

int config_port_index(const struct engine_config *cfg, const char *name)
{
	for (unsigned i = 0; i < cfg->n_ports; i++)
		if (!strcmp(cfg->ports[i].name, name))
			return (int)i;
	return -1;
}

int config_ring_peer(const struct engine_config *cfg, unsigned p)
{
	const char *d = cfg->ports[p].device;
	size_t n = strlen(d);

	if (!is_ring_pair(d))
		return -1;
	for (unsigned q = 0; q < cfg->n_ports; q++)
		if (q != p && strlen(cfg->ports[q].device) == n && !strncmp(cfg->ports[q].device, d, n - 1))
			return (int)q;
	return -1;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * `fabric.external` (docs/fabric.md, "Real ports and a real switch"): the fabric's switches are
 * outside the engine, a real switch tier under test, and its NICs are ports on the devices named
 * here. The fabric group still describes the topology: it gives each NIC its address (the plan
 * the real switches are configured with, as `roce-fabric` prints it) and the traffic patterns
 * their hosts; its frames go to the gateway MAC given here, the real switch's router MAC.
 *
 *   external = {
 *     gateway_mac = "0c:42:a1:00:00:01";        # every NIC's next hop, unless its entry says
 *     nics = ( { nic = "h0"; device = "0000:3b:00.0"; },
 *              { nic = "h1"; device = "net_af_packet1"; vdev_args = "iface=x1"; gateway_mac = "..."; } );
 *   };
 *
 * With `bridged = true` the switch tier is one L2 domain (a bridge, or a lab switch learning or
 * told the NICs' MACs): a NIC's frames go to the destination NIC's own MAC, and no gateway is
 * needed. Every NIC of the fabric is listed once: a NIC without a port would be a host the patterns send
 * to and no frame reaches. What only the engine's own switches have (their lcores, the routes'
 * convergence, the deadlock watch, the link samples, the `switch` group) is refused, not ignored.
 *
 * `events` (a link down or up at a time) take a real link down through `link_command`, a shell
 * command run at the event's time with {link} and {state} filled in (the link's name in the
 * fabric, "down" or "up"): the lab's own way to fail a switch port (ssh, gNMI, a PDU). The
 * engine runs it and reports when, and how it ended (engine/link_commands.c).
 */
#include "config_internal.h"
#include "config_fabric.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* the engine's settings of its own switches: nothing runs them when the switches are outside */
static const char *const switch_only[] = { "lcore", "lcores", "deadlock_ms", "convergence_ms", "sample_ms", NULL };

static int refuse_switch_settings(struct loader *ld, const config_setting_t *g)
{
	for (const char *const *k = switch_only; *k; k++)
		if (config_setting_get_member(g, *k))
			return cr_fail_member(&ld->r, g, *k, "not with fabric.external: the switches are outside the "
					      "engine (the NICs' lcores are host_lcores)");
	return 0;
}

/* The NIC an entry's `nic` names: its index, or -1 after an error. */
static int entry_nic(struct loader *ld, const config_setting_t *e, const struct fabric *f, const int *line_of)
{
	const config_setting_t *s = cr_required(&ld->r, e, "nic", "a NIC of the fabric (h0, or h0-r1 on a rail)");
	char buf[64];

	if (!s || cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a string (a NIC of the fabric)"))
		return -1;
	for (unsigned n = 0; n < f->n_nics; n++) {
		if (strcmp(f->nics[n].name, config_setting_get_string(s)))
			continue;
		if (line_of[n])
			return cr_fail(&ld->r, s, "NIC %s is listed twice (also at %s)", f->nics[n].name,
				       cr_at(&ld->r, (unsigned)line_of[n], (char[CR_AT_LEN]){ 0 }));
		return (int)n;
	}
	return cr_fail(&ld->r, s, "'%s' is not a NIC of the fabric (%s .. %s)", cr_shown(config_setting_get_string(s), buf),
		       f->nics[0].name, f->nics[f->n_nics - 1].name);
}

/* A gateway MAC: unicast, as a router port's is. */
static int gateway(struct loader *ld, const config_setting_t *s, uint8_t mac[6])
{
	if (ld_mac_value(ld, s, mac))
		return -1;
	if (mac[0] & 1)
		return cr_fail(&ld->r, s, "%s is a multicast address (the gateway is the switch's router MAC: first octet "
			       "even)", config_setting_get_string(s));
	return 0;
}

/* Entry e: NIC n's port takes its device; its gateway is the entry's or the group's. */
static int nic_entry(struct loader *ld, const config_setting_t *e, const struct fabric *f, unsigned first,
		     int *line_of, const uint8_t *group_gw, bool bridged)
{
	static const char *const keys[] = { "nic", "device", "vdev_args", "gateway_mac", NULL };
	struct engine_config *c = ld->cfg;
	const config_setting_t *gw;
	struct cfg_port dev = { 0 };
	int n;

	if (cr_want_type(&ld->r, e, CONFIG_TYPE_GROUP, "a group { nic = \"h0\"; device = \"...\"; }") ||
	    cr_known_keys(&ld->r, e, keys) || (n = entry_nic(ld, e, f, line_of)) < 0 || ld_port_device(ld, e, &dev))
		return -1;
	for (unsigned j = 0; j < c->n_ports; j++)
		if (j != first + (unsigned)n && !strcasecmp(c->ports[j].device, dev.device))
			return cr_fail_member(&ld->r, e, "device", "device %s is already port '%s' (one port per device)",
					      dev.device, c->ports[j].name);
	gw = config_setting_get_member(e, "gateway_mac");
	if (gw && bridged)
		return cr_fail(&ld->r, gw, "not with bridged = true: a bridged NIC sends to the destination NIC's MAC");
	if (gw ? gateway(ld, gw, c->fab.nic[n].gateway_mac) : !group_gw && !bridged)
		return gw ? -1 : cr_fail(&ld->r, e, "NIC %s has no gateway_mac (give it here, or one for every NIC in "
					 "fabric.external)", f->nics[n].name);
	if (!gw && group_gw)
		memcpy(c->fab.nic[n].gateway_mac, group_gw, 6);
	memcpy(c->ports[first + (unsigned)n].device, dev.device, sizeof(dev.device));
	memcpy(c->ports[first + (unsigned)n].vdev_args, dev.vdev_args, sizeof(dev.vdev_args));
	c->ports[first + (unsigned)n].extra_mbufs = 0; /* no switch of ours holds its frames */
	line_of[n] = (int)config_setting_source_line(e);
	return 0;
}

/* `events` through `link_command`: each event's command, in time order (the shared parser's). */
static int link_events(struct loader *ld, const config_setting_t *g, const config_setting_t *x, const struct fabric *f)
{
	const config_setting_t *cmd = config_setting_get_member(x, "link_command");
	struct cfg_fabric *o = &ld->cfg->fab;
	struct cfab_event ev[CFG_FAB_MAX_EVENTS];
	double convergence_ms;
	char template[CFG_STR_LEN];
	int n;

	if (cmd && (ld_str_value(ld, cmd, template, sizeof(template)) ||
		    (!template[0] && cr_fail(&ld->r, cmd, "is empty (a shell command; {link} and {state} are filled in)"))))
		return -1;
	if (!config_setting_get_member(g, "events"))
		return 0;
	if (!cmd)
		return cr_fail_member(&ld->r, g, "events", "with fabric.external, events need external.link_command: the "
				      "command that takes a real link down or up");
	if ((n = cfab_events(&ld->r, g, f, ev, CFG_FAB_MAX_EVENTS, &convergence_ms)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		struct cfg_fab_event *e = &o->events[i];
		*e = (struct cfg_fab_event){ .at_s = ev[i].at_s, .link = ev[i].link, .up = ev[i].up, .line = ev[i].line };
		snprintf(e->link_name, sizeof(e->link_name), "%s", f->links[ev[i].link].name);
		if (cfab_link_command(template, f->links[ev[i].link].name, ev[i].up ? "up" : "down", e->command,
				      sizeof(e->command)))
			return cr_fail(&ld->r, cmd, "is longer than %d characters once {link} and {state} are filled in",
				       CFG_STR_LEN - 1);
		o->n_events++;
	}
	return 0;
}

int ld_fabric_external(struct loader *ld, const config_setting_t *g, const struct fabric *f, unsigned first)
{
	const config_setting_t *x = config_setting_get_member(g, "external"), *gw, *nics;
	static const char *const keys[] = { "gateway_mac", "bridged", "nics", "link_command", "counters_command", NULL };
	uint8_t group_gw[6];
	int line_of[CFG_MAX_PORTS] = { 0 };
	bool bridged = false;

	if (!x)
		return 1;
	if (cr_want_type(&ld->r, x, CONFIG_TYPE_GROUP, "a group { gateway_mac = ...; nics = ( ... ); }") ||
	    cr_known_keys(&ld->r, x, keys) || refuse_switch_settings(ld, g))
		return -1;
	if (cr_opt_bool(&ld->r, x, "bridged", &bridged) < 0 ||
	    ld_opt_str(ld, x, "counters_command", ld->cfg->fab.counters_command, sizeof(ld->cfg->fab.counters_command)) < 0)
		return -1;
	if (config_setting_get_member(x, "counters_command") && !ld->cfg->fab.counters_command[0])
		return cr_fail_member(&ld->r, x, "counters_command", "is empty (a shell command printing the switches' "
				      "counters per link as JSON)");
	if ((gw = config_setting_get_member(x, "gateway_mac")) && bridged)
		return cr_fail(&ld->r, gw, "not with bridged = true: a bridged NIC sends to the destination NIC's MAC");
	if (gw && gateway(ld, gw, group_gw))
		return -1;
	if (!(nics = cr_required(&ld->r, x, "nics", "a list ( { nic = \"h0\"; device = \"...\"; }, ... ), one per NIC")))
		return -1;
	if (config_setting_type(nics) != CONFIG_TYPE_LIST)
		return cr_fail(&ld->r, nics, "must be a list ( { nic = \"h0\"; device = \"...\"; }, ... ), one per NIC");
	for (int i = 0; i < config_setting_length(nics); i++)
		if (nic_entry(ld, config_setting_get_elem(nics, (unsigned)i), f, first, line_of, gw ? group_gw : NULL,
			      bridged))
			return -1;
	for (unsigned n = 0; n < f->n_nics; n++)
		if (!line_of[n])
			return cr_fail(&ld->r, nics, "NIC %s has no device (list every NIC of the fabric: %u, %s .. %s)",
				       f->nics[n].name, f->n_nics, f->nics[0].name, f->nics[f->n_nics - 1].name);
	ld->cfg->fab.external = true;
	ld->cfg->fab.bridged = bridged;
	return link_events(ld, g, x, f);
}

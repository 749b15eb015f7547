/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What a run does beyond its traffic: the `phases` list (rate and egress changes at set times),
 * the `sla` checks, and the `run` group (duration, outputs, captures, the HTTP exporter).
 */
#include "config_internal.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- phases --------------------------------------------------------------------------------- */

static int phase_egress(struct loader *ld, const config_setting_t *s, struct cfg_phase *ph)
{
	static const char *const keys[] = { "port", "tc", "weight", "shape_gbps", NULL };
	int i;

	if (cr_want_type(&ld->r, s, CONFIG_TYPE_GROUP, "a group { port = ...; tc = ...; weight = ...; }") ||
	    cr_known_keys(&ld->r, s, keys))
		return -1;
	if ((i = ld_port_ref(ld, s)) < 0)
		return -1;
	if (!(ld->cfg->ports[i].egress_gbps > 0))
		return cr_fail_member(&ld->r, s, "port",
				      "port '%s' has no qos.egress (weights and shapers belong to it)",
				      ld->cfg->ports[i].name);
	ph->egress[ph->n_egress].port = (unsigned)i;
	ph->egress[ph->n_egress].weight = ld->cfg->ports[i].ets_weight[0];
	if (!cr_required(&ld->r, s, "tc", "a traffic class 0..7") ||
	    cr_opt_u32(&ld->r, s, "tc", 0, 7, &ph->egress[ph->n_egress].tc) < 0 ||
	    cr_opt_u32(&ld->r, s, "weight", 1, 1000, &ph->egress[ph->n_egress].weight) < 0)
		return -1;
	if (!config_setting_get_member(s, "weight"))
		ph->egress[ph->n_egress].weight = ld->cfg->ports[i].ets_weight[ph->egress[ph->n_egress].tc];
	i = cr_opt_float(&ld->r, s, "shape_gbps", 0, false, 800, &ph->egress[ph->n_egress].shape_gbps);
	if (i < 0)
		return -1;
	ph->egress[ph->n_egress++].has_shape = i == 1;
	return 0;
}

static int phase_rate(struct loader *ld, const config_setting_t *s, struct cfg_phase *ph)
{
	static const char *const keys[] = { "flow", "gbps", NULL };
	const config_setting_t *f;
	const char *name;
	char buf[64];
	unsigned g;

	if (cr_want_type(&ld->r, s, CONFIG_TYPE_GROUP, "a group { flow = ...; gbps = ...; }") ||
	    cr_known_keys(&ld->r, s, keys))
		return -1;
	f = cr_required(&ld->r, s, "flow", "the name of a flow group");
	if (!f || cr_want_type(&ld->r, f, CONFIG_TYPE_STRING, "a flow group's name"))
		return -1;
	name = config_setting_get_string(f);
	for (g = 0; g < ld->cfg->n_groups && strcmp(ld->cfg->groups[g].name, name); g++)
		;
	if (g == ld->cfg->n_groups)
		return cr_fail(&ld->r, f, "no flow named '%s'", cr_shown(name, buf));
	if (!(ld->cfg->groups[g].rate_gbps > 0))
		return cr_fail(&ld->r, f, "flow '%s' has no rate_gbps: only flows paced in Gb/s change rate", name);
	ph->rates[ph->n_rates].group = g;
	if (!cr_required(&ld->r, s, "gbps", "the flow's new per-QP rate, > 0") ||
	    cr_opt_float(&ld->r, s, "gbps", 0, true, 800, &ph->rates[ph->n_rates].gbps) < 0)
		return -1;
	ph->n_rates++;
	return 0;
}

static int phase_list(struct loader *ld, const config_setting_t *ps, const char *key, struct cfg_phase *ph,
		      int (*one)(struct loader *, const config_setting_t *, struct cfg_phase *))
{
	const config_setting_t *s = config_setting_get_member(ps, key);

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_LIST || config_setting_length(s) > CFG_MAX_PHASE_CHANGES)
		return cr_fail(&ld->r, s, "must be a list of at most %d groups ( { ... }, ... )",
			       CFG_MAX_PHASE_CHANGES);
	for (int i = 0; i < config_setting_length(s); i++)
		if (one(ld, config_setting_get_elem(s, (unsigned)i), ph))
			return -1;
	return 0;
}

int ld_parse_phases(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "name", "at_s", "egress", "rates", NULL };
	const config_setting_t *s = config_setting_get_member(root, "phases");

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_LIST || config_setting_length(s) > CFG_MAX_PHASE_LIST)
		return cr_fail(&ld->r, s, "must be a list of at most %d phases ( { name = ...; at_s = ...; }, ... )",
			       CFG_MAX_PHASE_LIST);
	for (int i = 0; i < config_setting_length(s); i++) {
		const config_setting_t *ps = config_setting_get_elem(s, (unsigned)i);
		struct cfg_phase *ph = &ld->cfg->phases[i];

		if (cr_want_type(&ld->r, ps, CONFIG_TYPE_GROUP,
				 "a group { name = ...; at_s = ...; egress = (...); rates = (...); }") ||
		    cr_known_keys(&ld->r, ps, keys))
			return -1;
		ph->line = config_setting_source_line(ps);
		if (!ld_name(ld, ps, "a name of 1..31 A-Z a-z 0-9 _ -", ph->name) ||
		    !cr_required(&ld->r, ps, "at_s", "seconds after the flows start, >= 0") ||
		    cr_opt_float(&ld->r, ps, "at_s", 0, false, 1e7, &ph->at_s) < 0)
			return -1;
		if (i > 0 && ph->at_s <= ld->cfg->phases[i - 1].at_s)
			return cr_fail_member(&ld->r, ps, "at_s",
					      "%g is not after the previous phase's %g (phases are in time order)",
					      ph->at_s, ld->cfg->phases[i - 1].at_s);
		if (phase_list(ld, ps, "egress", ph, phase_egress) || phase_list(ld, ps, "rates", ph, phase_rate))
			return -1;
		ld->cfg->n_phases++;
	}
	return 0;
}

/* ---- SLA checks ----------------------------------------------------------------------------- */

/* The names of enum cfg_sla_metric as the file writes them; telemetry/sla.c prints its verdicts
 * with the same names. */
const char *const cfg_sla_metric_name[SLA_METRIC_COUNT + 1] = {
	"goodput_gbps", "loss", "p50_latency_ns", "p99_latency_ns", "p99_9_latency_ns", "max_latency_ns", "retransmits",
	"pause_percent", "pfc_rx_per_s", "rx_gbps", "tx_gbps", "rx_dropped", NULL,
};

/* flow = "NAME" | "*" or port = "NAME" | "*": the check's subject */
static int sla_subject(struct loader *ld, const config_setting_t *e, struct cfg_sla *c)
{
	const config_setting_t *f = config_setting_get_member(e, "flow"), *p = config_setting_get_member(e, "port");
	const config_setting_t *s = f ? f : p;
	const char *name;
	char buf[64];

	if (!f == !p)
		return cr_fail(&ld->r, e, "name one subject: flow = \"NAME\" (or \"*\") or port = \"NAME\" (or \"*\")");
	if (cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a string (a name, or \"*\" for all)"))
		return -1;
	name = config_setting_get_string(s);
	c->port = p != NULL;
	c->target = -1;
	if (!strcmp(name, "*"))
		return 0;
	if (c->port)
		c->target = config_port_index(ld->cfg, name);
	else
		for (unsigned g = 0; g < ld->cfg->n_groups; g++)
			if (!strcmp(ld->cfg->groups[g].name, name))
				c->target = (int)g;
	if (c->target < 0)
		return cr_fail(&ld->r, s, "no %s named '%s'", c->port ? "port" : "flow", cr_shown(name, buf));
	return 0;
}

/* sla = ( { flow | port; metric; min | max; priority; }, ... ) */
int ld_parse_sla(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "flow", "port", "metric", "min", "max", "priority", NULL };
	const config_setting_t *ls = config_setting_get_member(root, "sla"), *s;
	int n, m;

	if (!ls)
		return 0;
	if (!config_setting_is_list(ls) || (n = config_setting_length(ls)) > CFG_MAX_SLA)
		return cr_fail(&ld->r, ls, "must be a list of up to %d { flow | port = ...; metric = ...; min | max = ...; }",
			       CFG_MAX_SLA);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(ls, (unsigned)i);
		struct cfg_sla *c = &ld->cfg->sla[i];
		unsigned prio;
		int rc;

		c->line = config_setting_source_line(e);
		c->priority = -1;
		if (cr_want_type(&ld->r, e, CONFIG_TYPE_GROUP, "a group { flow | port; metric; min | max; }") ||
		    cr_known_keys(&ld->r, e, keys) || sla_subject(ld, e, c) ||
		    !(s = cr_required(&ld->r, e, "metric", "what is checked (docs/report.md#sla)")) ||
		    (m = cr_pick(&ld->r, s, cfg_sla_metric_name, NULL)) < 0)
			return -1;
		c->metric = (enum cfg_sla_metric)m;
		if ((m >= SLA_FIRST_PORT_METRIC) != c->port)
			return cr_fail(&ld->r, s, "%s is a %s metric (the check names a %s)", cfg_sla_metric_name[m],
				       m >= SLA_FIRST_PORT_METRIC ? "port" : "flow", c->port ? "port" : "flow");
		if ((rc = cr_opt_float(&ld->r, e, "min", -1e18, false, 1e18, &c->min)) < 0)
			return -1;
		c->has_min = rc == 1;
		if ((rc = cr_opt_float(&ld->r, e, "max", -1e18, false, 1e18, &c->max)) < 0)
			return -1;
		c->has_max = rc == 1;
		if (!c->has_min && !c->has_max)
			return cr_fail(&ld->r, e, "give the limit: min = X and/or max = X");
		if ((rc = cr_opt_u32(&ld->r, e, "priority", 0, 7, &prio)) < 0)
			return -1;
		if (rc == 1 && c->metric != SLA_PAUSE_PERCENT)
			return cr_fail_member(&ld->r, e, "priority", "only for metric pause_percent");
		if (rc == 1)
			c->priority = (int)prio;
		if (c->metric >= SLA_P50_NS && c->metric <= SLA_MAX_NS && !c->port) {
			for (unsigned g = 0; g < ld->cfg->n_groups; g++)
				if ((c->target < 0 || (int)g == c->target) && ld->cfg->groups[g].latency == CFG_LAT_OFF)
					return cr_fail(&ld->r, s, "flow '%s' measures no latency (set its latency = { mode = ...; })",
						       ld->cfg->groups[g].name);
		}
		ld->cfg->n_sla++;
	}
	return 0;
}

/* ---- run ------------------------------------------------------------------------------------ */

/* capture_ports = ["a", "b"]: the ports captured (default every one) */
static int capture_ports(struct loader *ld, const config_setting_t *run)
{
	const config_setting_t *s = config_setting_get_member(run, "capture_ports");

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_ARRAY || config_setting_length(s) < 1)
		return cr_fail(&ld->r, s, "must be a non-empty array of port names");
	for (int k = 0; k < config_setting_length(s); k++) {
		const config_setting_t *n = config_setting_get_elem(s, (unsigned)k);
		int p = config_setting_type(n) == CONFIG_TYPE_STRING ? config_port_index(ld->cfg, config_setting_get_string(n))
								       : -1;
		if (p < 0)
			return cr_fail(&ld->r, s, "element %d is not the name of a port", k);
		ld->cfg->capture_ports |= (uint16_t)(1u << p);
	}
	return 0;
}

/* Public (config.h): main.c parses --http with it, so that the flag and run.http take the same
 * forms and say the same when wrong. */
int config_parse_listen(const char *s, char *addr, size_t addrlen, uint16_t *port, char *why, size_t whylen)
{
	const char *colon = strrchr(s, ':'), *digits = colon ? colon + 1 : s;
	char host[64] = "127.0.0.1", buf[64], *end;
	unsigned char bin[16];
	long v;

	if (colon) {
		const char *all = s;
		size_t n = (size_t)(colon - s);
		if (n >= 2 && s[0] == '[' && s[n - 1] == ']') { /* [IPv6]:PORT */
			s++, n -= 2;
		} else if (s[0] == '[') { /* "[::1]": the last ':' is the address's */
			snprintf(why, whylen, "'%s' has no port after the ']' (\"[IPV6]:PORT\")", cr_shown(all, buf));
			return -1;
		}
		if (n == 0) {
			snprintf(why, whylen, "'%s' has no address before the port", cr_shown(all, buf));
			return -1;
		}
		if (n >= sizeof(host)) {
			snprintf(why, whylen, "'%s' has an address longer than %zu characters", cr_shown(all, buf),
				 sizeof(host) - 1);
			return -1;
		}
		memcpy(host, s, n);
		host[n] = 0;
		if (inet_pton(AF_INET, host, bin) != 1 && inet_pton(AF_INET6, host, bin) != 1) {
			if (inet_pton(AF_INET6, all, bin) == 1) /* "fd00::1": an address, no port */
				snprintf(why, whylen, "'%s' is an IPv6 address without a port (\"[IPV6]:PORT\")",
					 cr_shown(all, buf));
			else
				snprintf(why, whylen, "'%s' is not a numeric IPv4 or IPv6 address", cr_shown(host, buf));
			return -1;
		}
	}
	v = strtol(digits, &end, 10);
	if (end == digits || *end || v < 1 || v > 65535) {
		snprintf(why, whylen, "'%s' is not a port 1..65535 (\"PORT\", \"ADDRESS:PORT\" or \"[IPV6]:PORT\")",
			 cr_shown(digits, buf));
		return -1;
	}
	snprintf(addr, addrlen, "%s", host);
	*port = (uint16_t)v;
	return 0;
}

/* run.http, run.http_linger_s, run.http_dashboard */
static int parse_http(struct loader *ld, const config_setting_t *run)
{
	struct engine_config *c = ld->cfg;
	const config_setting_t *s = config_setting_get_member(run, "http");
	char why[160];

	if (cr_opt_float(&ld->r, run, "http_linger_s", 0, false, 3600, &c->http_linger_s) < 0 ||
	    ld_opt_str(ld, run, "http_dashboard", c->http_dashboard, sizeof(c->http_dashboard)) < 0)
		return -1;
	if (!s)
		return 0;
	if (config_setting_type(s) == CONFIG_TYPE_INT) { /* a bare port number */
		long long port;
		if (cr_int_range(&ld->r, s, 1, 65535, false, &port) < 0)
			return -1;
		c->http_port = (uint16_t)port;
		return 0;
	}
	if (cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a string \"[ADDRESS:]PORT\" or a port number") < 0)
		return -1;
	if (config_parse_listen(config_setting_get_string(s), c->http_addr, sizeof(c->http_addr), &c->http_port, why,
				sizeof(why)))
		return cr_fail(&ld->r, s, "%s", why);
	return 0;
}

int ld_parse_run(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "duration_s", "start_at_unix_s", "stats_interval_s", "report", "latency_samples",
					    "latency_sample_every", "latency_foreign_qps", "cc_trace", "cc_trace_interval_us",
					    "cc_trace_qps", "cc_trace_step", "capture", "capture_every", "capture_snaplen",
					    "capture_ports", "timeseries", "http", "http_linger_s", "http_dashboard", "ready_file",
					    NULL };
	struct engine_config *c = ld->cfg;
	const config_setting_t *run;
	int rc;

	if ((rc = cr_opt_group(&ld->r, root, "run", &run)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, run, keys) ||
	    cr_opt_float(&ld->r, run, "duration_s", 0, false, 1e9, &c->duration_s) < 0 ||
	    cr_opt_float(&ld->r, run, "start_at_unix_s", 1e9, false, 1e10, &c->start_at_unix_s) < 0 ||
	    cr_opt_float(&ld->r, run, "stats_interval_s", 0.1, false, 3600, &c->stats_interval_s) < 0 ||
	    ld_opt_str(ld, run, "report", c->report, sizeof(c->report)) < 0 ||
	    ld_opt_str(ld, run, "ready_file", c->ready_file, sizeof(c->ready_file)) < 0 ||
	    ld_opt_str(ld, run, "latency_samples", c->latency_samples, sizeof(c->latency_samples)) < 0 ||
	    cr_opt_u32(&ld->r, run, "latency_sample_every", 1, 1000000000, &c->latency_sample_every) < 0 ||
	    cr_opt_u32(&ld->r, run, "latency_foreign_qps", 0, 65536, &c->latency_foreign_qps) < 0 ||
	    ld_opt_str(ld, run, "cc_trace", c->cc_trace, sizeof(c->cc_trace)) < 0 ||
	    cr_opt_float(&ld->r, run, "cc_trace_interval_us", 1, false, 1e9, &c->cc_trace_interval_us) < 0 ||
	    cr_opt_u32(&ld->r, run, "cc_trace_qps", 1, 1u << 20, &c->cc_trace_qps) < 0 ||
	    cr_opt_u32(&ld->r, run, "cc_trace_step", 1, 1u << 20, &c->cc_trace_step) < 0 ||
	    ld_opt_str(ld, run, "capture", c->capture, sizeof(c->capture)) < 0 ||
	    ld_opt_str(ld, run, "timeseries", c->timeseries, sizeof(c->timeseries)) < 0 ||
	    cr_opt_u32(&ld->r, run, "capture_every", 1, 1000000000, &c->capture_every) < 0 ||
	    cr_opt_u32(&ld->r, run, "capture_snaplen", 0, 65535, &c->capture_snaplen) < 0 || capture_ports(ld, run))
		return -1;
	if (c->capture_snaplen && c->capture_snaplen < 64)
		return cr_fail_member(&ld->r, run, "capture_snaplen", "%u is too short to dissect (0 = whole frames, or >= 64)",
				      c->capture_snaplen);
	return parse_http(ld, run);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The engine configuration one size's run is (docs/perftest.md): the libconfig text of
 * docs/config.md, nothing the front end could do that a config could not. Made in memory and
 * loaded from there; written to the work directory only with --keep.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perftest_opts.h"

#define PT_PINGPONG_TIMEOUT_US 100000.0
#define PT_MAX_PPS 1e9             /* flows.rate_pps's most */

static const char pt_virtual_mac[2][18] = { "02:00:00:00:70:01", "02:00:00:00:70:02" };
static const char *const pt_verb_op[][2] = { { "send", "send_imm" }, { "write", "write_imm" }, { "read", "read" } };

static void pt_config_eal(FILE *f, const struct pt_opts *o, unsigned run)
{
	fprintf(f, "eal = { lcores = \"%s\"; main_lcore = %u; memory_mb = 512; huge_pages = %s;\n", o->lcore_list,
		o->main_lcore, o->huge ? "true" : "false");
	fprintf(f, "  file_prefix = \"perftest-%ld-%u\"; log_level = \"notice\";\n", (long)getpid(), run);
	if (o->n_eal_args) {
		fprintf(f, "  extra_args = [");
		for (unsigned i = 0; i < o->n_eal_args; i++)
			fprintf(f, "%s\"%s\"", i ? ", " : "", o->eal_args[i]);
		fprintf(f, "];\n");
	}
	fprintf(f, "};\n\n");
}

/* Far-end role: a reflector sends UC/UD ping-pongs back; RC answers need RX and TX on one lcore. */
static const char *pt_far_role(const struct pt_opts *o)
{
	return o->test->kind == PT_LAT && o->conn != PT_RC ? "reflect" : "txrx";
}

/* The built-in topology: two ends of one ring cable, the requester and its far end. */
static void pt_config_virtual_ports(FILE *f, const struct pt_opts *o)
{
	const char *ip[2] = { pt_local_ip(o), pt_remote_ip(o) };

	fprintf(f, "ports = (\n");
	for (unsigned i = 0; i < 2; i++)
		fprintf(f, "  { name = \"%s\"; device = \"ring:perftest:%c\"; mac = \"%s\"; %s = \"%s\";\n"
			   "    link_speed_gbps = 100.0; mtu = 4200; }%s\n",
			i ? "remote" : "local", i ? 'b' : 'a', pt_virtual_mac[i], o->ipv6 ? "ipv6" : "ipv4", ip[i],
			i ? "" : ",");
	fprintf(f, ");\n\nlcores = (\n  { lcore = %u; port = \"local\"; role = \"txrx\"; },\n"
		   "  { lcore = %u; port = \"remote\"; role = \"%s\"; }\n);\n\n",
		o->lcore_local, o->lcore_remote, pt_far_role(o));
}

/* --device: one port, the requester's or (--server) the far end's. */
static void pt_config_device_port(FILE *f, const struct pt_opts *o)
{
	uint8_t gid[16];
	bool v6;

	pt_ip_to_gid(o->src_ip, gid, &v6);
	fprintf(f, "ports = (\n  { name = \"local\"; device = \"%s\"; %s = \"%s\"; mtu = %u;", o->device,
		v6 ? "ipv6" : "ipv4", o->src_ip, o->port_mtu ? o->port_mtu : 1500);
	if (o->vdev_args)
		fprintf(f, " vdev_args = \"%s\";", o->vdev_args);
	if (o->src_mac)
		fprintf(f, " mac = \"%s\";", o->src_mac);
	if (o->link_gbps > 0)
		fprintf(f, " link_speed_gbps = %.17g;", o->link_gbps);
	fprintf(f, " }\n);\n\nlcores = ( { lcore = %u; port = \"local\"; role = \"%s\"; } );\n\n", o->lcore_local,
		o->server ? pt_far_role(o) : "txrx");
}

/* A QP's packets per second for --rate_limit (perftest's limiter: the test's messages per second
 * over all its QPs, from a payload rate or a message rate) or --latency_gap; 0: unpaced. */
static double pt_rate_pps(const struct pt_opts *o, uint64_t size)
{
	double msgs, pps;

	if (o->latency_gap_us > 0)
		return 1e6 / o->latency_gap_us;
	if (!(o->rate > 0))
		return 0;
	if (o->rate_units == PT_RATE_GBPS)
		msgs = o->rate * 1e9 / ((double)size * 8);
	else if (o->rate_units == PT_RATE_MIBPS)
		msgs = o->rate * 1048576.0 / (double)size;
	else
		msgs = o->rate;
	pps = msgs / o->qps * pt_packets_per_message(o, size);
	return pps <= PT_MAX_PPS ? pps : 0; /* beyond what any lcore sends: unpaced */
}

/* One direction's flow group: this end's requests, or with -b / --reversed the far end's. */
static void pt_config_flow(FILE *f, const struct pt_opts *o, uint64_t size, bool back)
{
	const char *src_port = back ? "remote" : "local";
	const char *dst_mac = back ? pt_virtual_mac[0] : o->device ? o->dst_mac : pt_virtual_mac[1];
	const char *dst_ip = back ? pt_local_ip(o) : pt_remote_ip(o);
	static const char *const transport[] = { "rc", "uc", "ud" };
	double pps = pt_rate_pps(o, size);

	fprintf(f, "  { name = \"%s\"; port = \"%s\"; dst_mac = \"%s\"; dst_ip = \"%s\";\n",
		back && o->bidir ? PT_FLOW_BACK : PT_FLOW, src_port, dst_mac, dst_ip);
	fprintf(f, "    transport = \"%s\"; ops = { %s = 1; }; message_size = %" PRIu64 "; mtu = %u;\n",
		transport[o->conn], pt_verb_op[o->test->verb][o->imm], size, o->mtu);
	fprintf(f, "    qpn = 0x%x; dest_qpn = 0x%x; count = %u;\n", back ? o->dest_qpn : o->qpn,
		back ? o->qpn : o->dest_qpn, o->qps);
	if (o->tclass >= 0)
		fprintf(f, "    dscp = %d; ecn = %d;\n", o->tclass >> 2, o->tclass & 3);
	if (o->udp_sport > 0)
		fprintf(f, "    udp_sport = %d; sport_step = 0;\n", o->udp_sport);
	if (pps > 0)
		fprintf(f, "    rate_pps = %.17g;\n", pps);
	if (o->conn == PT_RC) {
		fprintf(f, "    rc = { max_outstanding = %u;", o->window);
		if (o->qp_timeout >= 0) /* IB's timeout: 4.096 us x 2^N (0, "infinite", as the engine's most) */
			fprintf(f, " retry_timeout_us = %.3f;", o->qp_timeout == 0 || o->qp_timeout > 24
									? 1e8 : 4.096 * (double)(1u << o->qp_timeout));
		if (o->retry_count >= 0)
			fprintf(f, " retry_limit = %d;", o->retry_count);
		fprintf(f, " };\n");
	}
	if (pt_needs_probe(o))
		fprintf(f, "    latency = { mode = \"pingpong\"; timeout_us = %.1f; };\n", PT_PINGPONG_TIMEOUT_US);
	if (o->duration_s <= 0)
		fprintf(f, "    stop = { messages = %" PRIu64 "%s; };\n", o->iters, o->iters > INT32_MAX ? "L" : "");
	fprintf(f, "  }");
}

/* The far end of a client on another host: RC responders for its QPs (fixed QPNs on both ends,
 * where perftest exchanges them over TCP). UC/UD need no QP here: the receiver counts them. */
static void pt_config_responders(FILE *f, const struct pt_opts *o)
{
	if (o->conn != PT_RC)
		return;
	fprintf(f, "responders = (\n  { port = \"local\"; qpn = 0x%x; peer_qpn = 0x%x; count = %u; mtu = %u; }\n);\n\n",
		o->dest_qpn, o->qpn, o->qps, o->mtu);
}

static void pt_config_flows(FILE *f, const struct pt_opts *o, uint64_t size)
{
	bool virt = !o->device;

	fprintf(f, "flows = (\n");
	if (!(virt && o->reversed && !o->bidir))
		pt_config_flow(f, o, size, false);
	if (virt && (o->reversed || o->bidir)) {
		fprintf(f, "%s", o->bidir ? ",\n" : "");
		pt_config_flow(f, o, size, true);
	}
	fprintf(f, "\n);\n\n");
}

/* -D with a margin: two phases with no changes, so that the engine snapshots every flow group's
 * counters at the margins themselves (pt_bw_within_margins reads them). Time series rows would
 * do only to their 0.1 s grain, and a row a late main lcore wrote across an edge would be lost. */
static void pt_config_margin_phases(FILE *f, const struct pt_opts *o)
{
	double margin = pt_margin(o);

	if (o->server || o->run_inf || !(o->duration_s > 0) || !(margin > 0))
		return;
	fprintf(f, "phases = (\n  { name = \"%s\"; at_s = %.17g; },\n  { name = \"%s\"; at_s = %.17g; }\n);\n\n",
		PT_PHASE_MEASURED, margin, PT_PHASE_AFTER, o->duration_s - margin);
}

static void pt_config_run(FILE *f, const struct pt_opts *o, const struct pt_paths *p)
{
	/* --run_infinitely: one time series row per perftest interval, until a signal */
	double interval = o->run_inf ? o->duration_s : PT_INTERVAL_S;

	fprintf(f, "run = { duration_s = %.17g; stats_interval_s = %g; report = \"%s\";\n",
		o->run_inf ? 0 : o->duration_s, interval, p->report);
	if (!o->server)
		fprintf(f, "  timeseries = \"%s\";\n", p->ts);
	if (p->capture[0])
		fprintf(f, "  capture = \"%s\"; capture_ports = [\"local\"];\n", p->capture);
	if (p->samples[0])
		fprintf(f, "  latency_samples = \"%s\";\n", p->samples);
	fprintf(f, "};\n");
}

/* The text, in memory: the child loads it with config_load_string_env under p->cfg's name. */
char *pt_config_text(const struct pt_opts *o, const struct pt_paths *p, uint64_t size, unsigned run, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", o->prog, p->cfg, strerror(errno));
		return NULL;
	}
	fprintf(f, "# Generated by roce-engine %s (docs/perftest.md); every setting: docs/config.md\n\n",
		o->test->name);
	pt_config_eal(f, o, run);
	if (o->device)
		pt_config_device_port(f, o);
	else
		pt_config_virtual_ports(f, o);
	if (o->server)
		pt_config_responders(f, o);
	else
		pt_config_flows(f, o, size);
	pt_config_margin_phases(f, o);
	pt_config_run(f, o, p);
	if (fclose(f)) {
		fprintf(stderr, "%s: %s: %s\n", o->prog, p->cfg, strerror(errno));
		free(text);
		return NULL;
	}
	return text;
}

/* --keep: the config a run was, beside its report and log. */
int pt_keep_config(const struct pt_opts *o, const struct pt_paths *p, const char *text, size_t len)
{
	FILE *f = fopen(p->cfg, "w");
	bool written = f && fwrite(text, 1, len, f) == len;

	if ((f && fclose(f)) || !written) {
		fprintf(stderr, "%s: %s: %s\n", o->prog, p->cfg, strerror(errno));
		return -1;
	}
	return 0;
}

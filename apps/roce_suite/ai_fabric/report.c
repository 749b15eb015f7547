/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The methodology's report (§13), seven sections: 1 the device under test (the user's `dut`
 * group, or for the virtual fabric the switch model and its settings standing in), 2 the topology
 * and cabling (with the rail mapping), 3 the DUT's configuration (buffer, ECN, PFC, load
 * balancing, DCQCN), 4 the hosts' configuration, 5 the results (each category's tables and
 * graphs), 6 anomalies and deviations, 7 repeatability (iterations and CV per primary KPI,
 * flagged above 5 %); and the user's thresholds judged. Written into the results folder as
 * report.json (the whole suite report), report.md and the graphs (scripts/plot-ai-fabric.py,
 * from report.json: topology.png and every graph section 5 names).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aif_ctx.h"
#include "config_tree.h"

#ifndef ROCE_SCRIPTS_DIR
#define ROCE_SCRIPTS_DIR "scripts"
#endif

/* ---- libconfig settings as JSON (the switch and dut groups, as written) ---------------------------- */

static json_t *setting_json(const config_setting_t *s)
{
	json_t *o;

	switch (config_setting_type(s)) {
	case CONFIG_TYPE_INT: return json_integer(config_setting_get_int(s));
	case CONFIG_TYPE_INT64: return json_integer(config_setting_get_int64(s));
	case CONFIG_TYPE_FLOAT: return json_real(config_setting_get_float(s));
	case CONFIG_TYPE_BOOL: return json_boolean(config_setting_get_bool(s));
	case CONFIG_TYPE_STRING: return json_string(config_setting_get_string(s));
	case CONFIG_TYPE_GROUP:
		o = json_object();
		for (int i = 0; i < config_setting_length(s); i++) {
			const config_setting_t *m = config_setting_get_elem(s, (unsigned)i);
			json_object_set_new(o, config_setting_name(m), setting_json(m));
		}
		return o;
	default: /* array, list */
		o = json_array();
		for (int i = 0; i < config_setting_length(s); i++)
			json_array_append_new(o, setting_json(config_setting_get_elem(s, (unsigned)i)));
		return o;
	}
}

static json_t *lookup_json(const struct aif_ctx *x, const char *path)
{
	const config_setting_t *s = x->s->text_ok ? config_lookup(&x->s->text, path) : NULL;

	return s ? setting_json(s) : json_null();
}

/* ---- the sections ----------------------------------------------------------------------------------------- */

/* The categories that went across a cluster's hosts (ai_fabric.cluster): the job's file, ranks and
 * links; NULL when none did. */
static json_t *cluster_json(const struct aif_ctx *x)
{
	const struct aif_cluster_cfg *k = &x->c->cluster;
	const char *cats = k->across[AIF_COLLECTIVES] && k->across[AIF_JCT] ? "collectives (section 9), jct (section 10.1)"
			   : k->across[AIF_COLLECTIVES]			   ? "collectives (section 9)"
									   : "jct (section 10.1)";

	if (!k->across[AIF_COLLECTIVES] && !k->across[AIF_JCT])
		return NULL;
	return json_pack("{s:s,s:s,s:s,s:i,s:f,s:s}", "categories", cats, "file", k->file, "launcher",
			 k->launcher, "ranks", (int)k->ranks, "link_gbps", k->link_gbps, "switch",
			 k->lab ? "roce-cluster's local lab: one roce-engine lab switch, a memif port per rank (docs/cluster.md)"
				: "the switches between the ranks' ports (the file's ports): the DUT");
}

/* The cluster file's lab.switch group as JSON (null without a local lab). */
static json_t *cluster_switch_json(const struct aif_ctx *x)
{
	struct config_reader r;
	config_t c;
	const config_setting_t *sw;
	json_t *o = json_null();

	cr_init(&r, x->c->cluster.file, NULL, 0, "cluster configuration");
	if (!cr_parse_file(&r, x->c->cluster.file, &c) && (sw = config_lookup(&c, "lab.switch")))
		o = setting_json(sw);
	config_destroy(&c);
	return o;
}

static json_t *section_dut(const struct aif_ctx *x)
{
	json_t *d = lookup_json(x, "dut"), *cl = cluster_json(x);

	if (!json_is_null(d))
		return json_pack("{s:s,s:o,s:o*}", "kind", "described by the suite file", "dut", d, "cluster", cl);
	json_decref(d);
	if (!x->c->fabric)
		return json_pack("{s:s,s:o}", "kind", "the cluster's switches (no dut group describes them)", "cluster", cl);
	json_decref(cl);
	if (x->c->external)
		return json_pack("{s:s,s:s}", "kind", "a real switch tier (fabric.external; no dut group describes it)",
				 "port_speed", "the fabric group's host_gbps and uplink_gbps (section 2)");
	return json_pack("{s:s,s:s,s:s,s:s}", "kind", "virtual fabric", "switch",
			 "roce-engine's lab switch at every fabric node (docs/virtual-lab.md, docs/fabric.md)", "asic",
			 "none: an emulation (shared buffer with dynamic thresholds, per-port and per-class egress queues, "
			 "RED/ECN at dequeue, PFC XOFF/XON with headroom, L3 longest-prefix routing, ECMP/flowlet/spray)",
			 "port_speed", "the fabric group's host_gbps and uplink_gbps (section 2)");
}

static json_t *section_topology(const struct aif_ctx *x)
{
	json_t *sw = json_array(), *links = json_array(), *nics = json_array();
	char ip[16];

	if (!x->c->fabric) { /* (an empty fabric: the plot script draws no diagram) */
		json_decref(sw);
		json_decref(links);
		return json_pack("{s:s,s:i,s:o,s:o*}", "kind", "cluster", "hosts", (int)x->c->cluster.ranks, "nic_list",
				 nics, "cluster", cluster_json(x));
	}

	for (unsigned s = 0; s < x->fab.n_switches; s++)
		json_array_append_new(sw, json_pack("{s:s,s:s,s:i,s:f}", "name", x->fab.switches[s].name, "tier",
						    fabric_tier_name(x->fab.switches[s].tier), "ports",
						    (int)x->fab.switches[s].n_ports, "oversubscription",
						    fabric_oversubscription(&x->fab, s)));
	for (unsigned l = 0; l < x->fab.n_links; l++) {
		const struct fab_link *k = &x->fab.links[l];
		json_array_append_new(links, json_pack("{s:s,s:s,s:s,s:s,s:f,s:f}", "name", k->name, "a",
						       x->fab.switches[k->sw].name, "b",
						       k->to_nic ? x->fab.nics[k->b].name : x->fab.switches[k->b].name, "tier",
						       fabric_tier_name(k->tier), "gbps", k->gbps, "delay_us", k->delay_us));
	}
	for (unsigned n = 0; n < x->fab.n_nics; n++) {
		const struct fab_nic *c = &x->fab.nics[n];
		json_array_append_new(nics, json_pack("{s:s,s:s,s:i,s:s,s:s}", "name", c->name, "host",
						      x->fab.hosts[c->host].name, "rail", (int)c->rail, "switch",
						      x->fab.switches[c->sw].name, "ipv4", fabric_ip_str(c->ip, ip)));
	}
	return json_pack("{s:s,s:i,s:i,s:i,s:o,s:o,s:o,s:o,s:s}", "kind", fabric_kind_name(x->fab.kind), "hosts",
			 (int)x->fab.n_hosts, "nics", (int)x->fab.n_nics, "rails", (int)x->fab.rails, "switches", sw, "links",
			 links, "nic_list", nics, "fabric", lookup_json(x, "fabric"), "diagram", "topology.png");
}

static json_t *section_dut_config(const struct aif_ctx *x)
{
	json_t *sw = lookup_json(x, "switch");

	if (!x->c->fabric) {
		json_decref(sw);
		return json_pack("{s:o,s:s}", "switch", cluster_switch_json(x), "note",
				 x->c->cluster.lab ? "the cluster file's lab.switch: the local lab's switch (settings not "
							  "given are the engine's defaults, docs/virtual-lab.md)"
							: "the switches between the ranks' ports, as the lab configures them");
	}

	if (x->c->external) {
		json_decref(sw);
		return json_pack("{s:s,s:o}", "note", "a real switch tier (fabric.external): its buffers, ECN, PFC and load "
				 "balancing are its own configuration, not the suite's; the NICs' devices and gateways:",
				 "external", lookup_json(x, "fabric.external"));
	}
	return json_pack("{s:o,s:s,s:s,s:{s:s,s:i,s:f},s:s}", "switch", sw, "switch_defaults",
			 "settings not given are the engine's defaults (docs/virtual-lab.md)", "load_balance",
			 fabric_lb_name(x->spec.lb.lb), "hash", "function", x->spec.lb.hash.fn == FAB_HASH_CRC16 ? "crc16" : "crc32",
			 "seed", (int)x->spec.lb.hash.seed, "flowlet_gap_us", x->spec.lb.flowlet_gap_ns / 1e3, "dcqcn",
			 "the engine's DCQCN defaults where a category uses it (docs/cc.md); the categories run here use "
			 "PFC on priority 3 and no congestion control");
}

static json_t *section_hosts(const struct aif_ctx *x)
{
	json_t *cl = cluster_json(x);

	if (!x->c->fabric) { /* (section 2 describes the cluster) */
		json_decref(cl);
		return json_pack("{s:s,s:s,s:s,s:s,s:f,s:s}", "generator", "roce-engine, one per rank a step at a time "
				 "(roce-cluster)", "engine", x->rn->engine, "nic", x->c->cluster.lab
				 ? "each rank's memif port into the local lab's switch" : "each rank's port from the cluster file's ports",
				 "lcores", "each rank's engine: a main lcore and one worker (docs/cluster.md)", "host_link_gbps",
				 x->c->cluster.link_gbps, "timestamps", "each rank's own clock; phase ends moved onto rank 0's by "
				 "the MPI ping-pong's offsets (or taken as one with PTP)");
	}
	if (cl)
		json_object_set_new(cl, "ranks_engines", json_string("each rank's roce-engine on its port, a step at a time "
								     "(roce-cluster); phase ends on each rank's clock, moved "
								     "onto rank 0's by the MPI ping-pong's offsets"));
	return json_pack("{s:s,s:s,s:s,s:s,s:f,s:i,s:s,s:o*}", "generator", "roce-engine", "engine", x->rn->engine, "nic",
			 "the engine's fabric NICs: in-process ring cables to their leaves, paced at their links' rate",
			 "lcores", "0-1 (lcore 0 supervises, lcore 1 runs every NIC and switch)", "host_link_gbps", x->host_gbps,
			 "memory_mb", (int)(x->c->memory_mb ? x->c->memory_mb : 2048), "timestamps",
			 "the engine's TSC time base, one clock for sender and receiver (one process)", "cluster", cl);
}

json_t *aif_sections(struct aif_ctx *x)
{
	json_t *sections = json_object();

	json_object_set_new(sections, "1_dut", section_dut(x));
	json_object_set_new(sections, "2_topology", section_topology(x));
	json_object_set_new(sections, "3_dut_configuration", section_dut_config(x));
	json_object_set_new(sections, "4_host_configuration", section_hosts(x));
	json_object_set(sections, "5_results", x->results);
	json_object_set(sections, "6_anomalies", x->anomalies);
	json_object_set(sections, "7_repeatability", x->repeatability);
	return json_pack("{s:s,s:o,s:O,s:O}", "methodology", "draft-calabria-bmwg-ai-fabric-training-bench-02", "sections",
			 sections, "thresholds", x->thresholds, "graphs", x->graphs);
}

/* ---- report.md ------------------------------------------------------------------------------------------------ */

static void md_value(FILE *o, const json_t *v)
{
	if (json_is_real(v))
		fprintf(o, "%.4g", json_real_value(v));
	else if (json_is_integer(v))
		fprintf(o, "%lld", (long long)json_integer_value(v));
	else if (json_is_string(v))
		fprintf(o, "%s", json_string_value(v));
	else if (json_is_boolean(v))
		fprintf(o, "%s", json_is_true(v) ? "yes" : "no");
	else if (json_is_null(v))
		fprintf(o, "–");
	else
		fprintf(o, "…");
}

/* A table of the rows' scalar fields (the first row's keys, nested values left to report.json). */
static void md_table(FILE *o, const json_t *rows)
{
	const json_t *first = json_array_get(rows, 0), *row, *v;
	const char *key;
	size_t i;

	if (!first)
		return;
	fprintf(o, "|");
	json_object_foreach((json_t *)first, key, v)
		if (!json_is_object(v) && !json_is_array(v))
			fprintf(o, " %s |", key);
	fprintf(o, "\n|");
	json_object_foreach((json_t *)first, key, v)
		if (!json_is_object(v) && !json_is_array(v))
			fprintf(o, "---|");
	fprintf(o, "\n");
	json_array_foreach(rows, i, row) {
		fprintf(o, "|");
		json_object_foreach((json_t *)first, key, v)
			if (!json_is_object(v) && !json_is_array(v)) {
				fprintf(o, " ");
				md_value(o, json_object_get(row, key));
				fprintf(o, " |");
			}
		fprintf(o, "\n");
	}
	fprintf(o, "\n");
}

static void md_object(FILE *o, const json_t *obj)
{
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)obj, key, v) {
		if (json_is_array(v) || json_is_object(v))
			continue;
		fprintf(o, "- **%s**: ", key);
		md_value(o, v);
		fprintf(o, "\n");
	}
	fprintf(o, "\n");
}

static void md_graphs_of(FILE *o, const json_t *graphs, const char *prefix)
{
	const json_t *g;
	size_t i;

	json_array_foreach(graphs, i, g) {
		const char *file = json_string_value(json_object_get(g, "file"));
		if (file && !strncmp(file, prefix, strlen(prefix)))
			fprintf(o, "![%s](%s)\n\n", json_string_value(json_object_get(g, "title")), file);
	}
}

/* A category's other tables (arrays of objects beside its rows, e.g. §7.2's per-hop pauses) and
 * results (objects, e.g. §7.4's storm), each under its name. */
static void md_tables_besides_rows(FILE *o, const json_t *r)
{
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)r, key, v)
		if (strcmp(key, "rows") && json_is_array(v) && json_is_object(json_array_get(v, 0))) {
			fprintf(o, "**%s**\n\n", key);
			md_table(o, v);
		} else if (json_is_object(v)) {
			fprintf(o, "**%s**\n\n", key);
			md_object(o, v);
		}
}

static void md_results(FILE *o, const json_t *results, const json_t *graphs)
{
	static const char *const order[][2] = { { "throughput", "throughput" }, { "latency", "latency" },
						{ "burst", "burst" },		{ "ecn", "ecn" },
						{ "pfc_incast", "pfc_incast" },
						{ "convergence", "convergence" }, { "deadlock", "deadlock" },
						{ "ecmp", "ecmp" },		{ "flowlet", "flowlet" },
						{ "spray", "jfi" },		{ "collectives", "collectives" },
						{ "jct", "jct" },
						{ "interference", "interference" },
						{ "link_failure", "link_failure" },
						{ "soak", "soak" } };

	for (unsigned k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		const json_t *r = json_object_get(results, order[k][0]);
		if (!r)
			continue;
		fprintf(o, "### §%s %s\n\n", json_string_value(json_object_get(r, "section")), order[k][0]);
		md_object(o, r);
		md_table(o, json_object_get(r, "rows"));
		md_tables_besides_rows(o, r);
		md_graphs_of(o, graphs, order[k][1]);
	}
}

static void md_write(FILE *o, const json_t *rep)
{
	const json_t *a = json_object_get(rep, "ai_fabric"), *sec = json_object_get(a, "sections"), *v;
	const json_t *topo = json_object_get(sec, "2_topology");
	size_t i;

	fprintf(o, "# AI-fabric benchmark: %s\n\n", json_string_value(json_object_get(rep, "suite")));
	fprintf(o, "After %s (IETF BMWG). Suite file `%s`; exit status %lld; %lld verdict(s) failed; %lld result(s) "
		   "machine-limited.\n\n",
		json_string_value(json_object_get(a, "methodology")), json_string_value(json_object_get(rep, "config")),
		(long long)json_integer_value(json_object_get(rep, "exit_status")),
		(long long)json_integer_value(json_object_get(rep, "verdicts_failed")),
		(long long)json_integer_value(json_object_get(rep, "machine_limited")));
	fprintf(o, "## 1. Device under test\n\n");
	md_object(o, json_object_get(sec, "1_dut"));
	md_object(o, json_object_get(json_object_get(sec, "1_dut"), "dut"));
	fprintf(o, "## 2. Topology and cabling\n\n");
	md_object(o, topo);
	md_object(o, json_object_get(topo, "cluster"));
	if (json_array_size(json_object_get(topo, "nic_list")))
		fprintf(o, "![topology](topology.png)\n\n");
	md_table(o, json_object_get(topo, "switches"));
	md_table(o, json_object_get(topo, "links"));
	md_table(o, json_object_get(topo, "nic_list"));
	fprintf(o, "## 3. DUT configuration\n\n```json\n");
	json_dumpf(json_object_get(sec, "3_dut_configuration"), o, JSON_INDENT(2));
	fprintf(o, "\n```\n\n## 4. Host configuration\n\n");
	md_object(o, json_object_get(sec, "4_host_configuration"));
	md_object(o, json_object_get(json_object_get(sec, "4_host_configuration"), "cluster"));
	fprintf(o, "## 5. Results\n\n");
	md_results(o, json_object_get(sec, "5_results"), json_object_get(a, "graphs"));
	fprintf(o, "### Thresholds\n\n");
	if (json_array_size(json_object_get(a, "thresholds")))
		md_table(o, json_object_get(a, "thresholds"));
	else
		fprintf(o, "None set (the methodology sets none; a suite file's `thresholds` group does).\n\n");
	fprintf(o, "### Verdicts\n\n");
	json_array_foreach(json_object_get(rep, "verdicts"), i, v)
		fprintf(o, "- %s **%s**: %s\n",
			strcmp(json_string_value(json_object_get(v, "verdict")) ?: "", "pass") ? "FAIL" : "pass",
			json_string_value(json_object_get(v, "check")), json_string_value(json_object_get(v, "what")));
	fprintf(o, "\n## 6. Anomalies and deviations\n\n");
	if (!json_array_size(json_object_get(sec, "6_anomalies")))
		fprintf(o, "None seen.\n\n");
	else
		md_table(o, json_object_get(sec, "6_anomalies"));
	fprintf(o, "## 7. Repeatability\n\nCV = sample standard deviation / mean over the iterations; above 5 %% is "
		   "flagged.\n\n");
	md_table(o, json_object_get(sec, "7_repeatability"));
}

/* ---- the results folder ---------------------------------------------------------------------------------------- */

int aif_mkdir_p(const char *dir)
{
	char p[PATH_MAX];

	text_printf(p, sizeof(p), "%s", dir);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0755) && errno != EEXIST)
				return -1;
			*s = '/';
		}
	return mkdir(p, 0755) && errno != EEXIST ? -1 : 0;
}

static void plots(const char *dir)
{
	char script[PATH_MAX], log[PATH_MAX + 16];
	struct stat st;

	text_printf(script, sizeof(script), "%s/plot-ai-fabric.py", ROCE_SCRIPTS_DIR);
	if (stat(script, &st)) {
		fprintf(stderr, "roce-suite: no graphs (%s is not there)\n", script);
		return;
	}
	text_printf(log, sizeof(log), "%s/plots.log", dir);
	/* Debian's python3, which has python3-matplotlib (scripts/install-deps.sh); no shell between
	 * (a folder's name may hold any character) */
	if (aif_run_tool("/usr/bin/python3", log, script, dir,
			 NULL, NULL) != 0)
		fprintf(stderr, "roce-suite: no graphs (scripts/plot-ai-fabric.py failed: %s)\n", log);
}

int aif_results_write(const char *dir, const json_t *rep)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 48];
	FILE *o;

	if (aif_mkdir_p(dir)) {
		fprintf(stderr, "roce-suite: cannot make the results folder %s: %s\n", dir, strerror(errno));
		return -1;
	}
	text_printf(path, sizeof(path), "%s/report.json", dir);
	text_printf(tmp, sizeof(tmp), "%s.tmp", path);
	if (json_dump_file(rep, tmp, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) || rename(tmp, path)) {
		fprintf(stderr, "roce-suite: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	text_printf(path, sizeof(path), "%s/report.md", dir);
	if (!(o = fopen(path, "w"))) {
		fprintf(stderr, "roce-suite: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	md_write(o, rep);
	if (fclose(o)) {
		fprintf(stderr, "roce-suite: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	plots(dir);
	printf("results: %s/report.json, report.md and the graphs\n", dir);
	return 0;
}

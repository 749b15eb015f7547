/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Unit tests of the configuration loader, without EAL: a full config loads with every value as
 * written, a minimal one gets the documented defaults, and a table of broken configurations
 * (syntax, unknown settings, wrong types, out-of-range values, contradictions) each fails with
 * one line "FILE:LINE: SETTING: ..." naming the expected line, setting and fault.
 */
#include <glob.h>
#include <unistd.h>

#include "config.h"
#include "testlib.h"

static struct engine_config cfg; /* large (256 flow groups): keep it off the stack */
static char err[512];

static int load(const char *text)
{
	return config_load_string(text, "t.cfg", &cfg, err, sizeof(err));
}

static const char full_cfg[] =
	"# every setting, none at its default\n"                                    /* 1 */
	"eal: {\n"                                                                 /* 2 */
	"  lcores = \"0-3,5\";\n"                                                  /* 3 */
	"  main_lcore = 2;\n"                                                      /* 4 */
	"  memory_mb = 512;\n"                                                     /* 5 */
	"  huge_pages = true;\n"                                                   /* 6 */
	"  file_prefix = \"unit_test-1\";\n"                                       /* 7 */
	"  log_level = \"debug\";\n"                                               /* 8 */
	"  extra_args = [\"--no-telemetry\", \"--in-memory\"];\n"                        /* 9 */
	"};\n"                                                                     /* 10 */
	"ports = (\n"                                                              /* 11 */
	"  { name = \"a\"; device = \"net_pcap0\"; vdev_args = \"tx_pcap=/tmp/x.pcap\";\n" /* 12 */
	"    mac = \"02:00:00:00:00:0A\"; ipv4 = \"192.168.1.1\"; ipv6 = \"fd00::1\";\n"
	"    link_speed_gbps = 25; rx_queues = 2; tx_queues = 4; rx_desc = 512; tx_desc = 2048;\n"
	"    mtu = 9000; },\n"                                                     /* 15 */
	"  { name = \"b-2\"; device = \"0000:3b:00.1\"; ipv6 = \"fd00::2\"; }\n"   /* 16 */
	");\n"                                                                     /* 17 */
	"lcores = (\n"                                                             /* 18 */
	"  { lcore = 1; port = \"a\"; queue = 3; role = \"tx\"; },\n"              /* 19 */
	"  { lcore = 1; port = \"a\"; queue = 1; role = \"rx\"; },\n"              /* 20 */
	"  { lcore = 5; port = \"b-2\"; role = \"txrx\"; }\n"                      /* 21 */
	");\n"                                                                     /* 22 */
	"flows = (\n"                                                              /* 23 */
	"  { name = \"w\"; port = \"a\"; dst_mac = \"02:00:00:00:00:0b\"; dst_ip = \"192.168.1.2\";\n" /* 24 */
	"    transport = \"uc\"; ops = { send = 2; send_imm = 3; write = 4; write_imm = 5; };\n"
	"    message_size = { dist = \"exponential\"; mean = 1000; min = 10; max = 100000; };\n"
	"    mtu = 4096; qpn = 0x100; dest_qpn = 0x200; start_psn = 0xABCDEF; pkey = 0x7FFF;\n"
	"    udp_sport = 50000; dscp = 46; ecn = \"ce\"; vlan = 100; pcp = 3;\n"
	"    rate_gbps = 2.5; pattern = { type = \"onoff\"; on_us = 100.0; off_us = 900; };\n"
	"    stop = { messages = 1000; bytes = 5000000000L; seconds = 2.5; };\n"
	"    count = 16; qpn_step = 2; dest_qpn_step = 3; sport_step = 4; },\n"   /* 31 */
	"  { name = \"u\"; port = \"b-2\"; dst_mac = \"02:00:00:00:00:0c\"; dst_ip = \"fd00::9\";\n" /* 32 */
	"    transport = \"ud\"; ops = { send_imm = 1; }; message_size = { dist = \"uniform\"; min = 64; max = 256; };\n"
	"    mtu = 256; qpn = 0xFFFFFF; dest_qpn = 2; qkey = 0xFFFFFFFF; ecn = 1;\n"
	"    rate_pps = 1e6; pattern = \"poisson\"; }\n"                         /* 35 */
	");\n"
	"run = { duration_s = 10; stats_interval_s = 0.5; report = \"results/r.json\"; };\n";

static void test_full_config(void)
{
	const struct cfg_port *a = &cfg.ports[0], *b = &cfg.ports[1];
	const struct cfg_flow_group *w = &cfg.groups[0], *u = &cfg.groups[1];
	static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 0x0a }, ip_a[4] = { 192, 168, 1, 1 };

	CHECK_EQ(load(full_cfg), 0);
	if (err[0])
		printf("  %s\n", err);
	CHECK(!strcmp(cfg.file, "t.cfg"));
	CHECK(!strcmp(cfg.eal.lcores, "0-3,5"));
	CHECK_EQ(cfg.eal.main_lcore, 2);
	CHECK_EQ(cfg.eal.memory_mb, 512);
	CHECK(cfg.eal.huge_pages);
	CHECK(!strcmp(cfg.eal.file_prefix, "unit_test-1"));
	CHECK(!strcmp(cfg.eal.log_level, "debug"));
	CHECK_EQ(cfg.eal.n_extra, 2);
	CHECK(!strcmp(cfg.eal.extra[0], "--no-telemetry") && !strcmp(cfg.eal.extra[1], "--in-memory"));

	CHECK_EQ(cfg.n_ports, 2);
	CHECK(!strcmp(a->name, "a") && !strcmp(a->device, "net_pcap0"));
	CHECK(!strcmp(a->vdev_args, "tx_pcap=/tmp/x.pcap"));
	CHECK(a->has_mac && !memcmp(a->mac, mac_a, 6));
	CHECK(a->has_ipv4 && !memcmp(a->ipv4, ip_a, 4));
	CHECK(a->has_ipv6 && a->ipv6[0] == 0xfd && a->ipv6[15] == 1);
	CHECK(a->link_speed_gbps == 25.0);
	CHECK_EQ(a->rx_queues, 2);
	CHECK_EQ(a->tx_queues, 4);
	CHECK_EQ(a->rx_desc, 512);
	CHECK_EQ(a->tx_desc, 2048);
	CHECK_EQ(a->mtu, 9000);
	CHECK_EQ(a->line, 12);
	CHECK(!strcmp(b->name, "b-2") && !strcmp(b->device, "0000:3b:00.1") && !b->vdev_args[0]);
	CHECK(!b->has_mac && !b->has_ipv4 && b->has_ipv6 && b->ipv6[15] == 2);
	CHECK(b->link_speed_gbps == 0); /* a PCI port: read from the PMD */
	CHECK_EQ(b->line, 16);

	CHECK_EQ(cfg.n_roles, 3);
	CHECK_EQ(cfg.roles[0].lcore, 1);
	CHECK_EQ(cfg.roles[0].port, 0);
	CHECK_EQ(cfg.roles[0].queue, 3);
	CHECK_EQ(cfg.roles[0].role, CFG_ROLE_TX);
	CHECK_EQ(cfg.roles[0].line, 19);
	CHECK_EQ(cfg.roles[1].role, CFG_ROLE_RX);
	CHECK_EQ(cfg.roles[1].queue, 1);
	CHECK_EQ(cfg.roles[2].lcore, 5);
	CHECK_EQ(cfg.roles[2].port, 1);
	CHECK_EQ(cfg.roles[2].queue, 0);
	CHECK_EQ(cfg.roles[2].role, CFG_ROLE_TXRX);

	CHECK_EQ(cfg.n_groups, 2);
	CHECK(!strcmp(w->name, "w"));
	CHECK_EQ(w->port, 0);
	CHECK(w->dst_mac[5] == 0x0b && w->ip_version == 4 && w->dst_ip[3] == 2);
	CHECK_EQ(w->transport, CFG_UC);
	CHECK_EQ(w->op_weight[CFG_OP_SEND], 2);
	CHECK_EQ(w->op_weight[CFG_OP_SEND_IMM], 3);
	CHECK_EQ(w->op_weight[CFG_OP_WRITE], 4);
	CHECK_EQ(w->op_weight[CFG_OP_WRITE_IMM], 5);
	CHECK_EQ(w->op_weight[CFG_OP_READ], 0);
	CHECK_EQ(w->msg_size.dist, CFG_SIZE_EXPONENTIAL);
	CHECK_EQ(w->msg_size.mean, 1000);
	CHECK_EQ(w->msg_size.min, 10);
	CHECK_EQ(w->msg_size.max, 100000);
	CHECK_EQ(w->ib_mtu, 4096);
	CHECK_EQ(w->qpn, 0x100);
	CHECK_EQ(w->dest_qpn, 0x200);
	CHECK_EQ(w->start_psn, 0xABCDEF);
	CHECK_EQ(w->pkey, 0x7FFF);
	CHECK(!w->sport_entropy);
	CHECK_EQ(w->sport, 50000);
	CHECK_EQ(w->dscp, 46);
	CHECK_EQ(w->ecn, 3);
	CHECK(w->has_vlan);
	CHECK_EQ(w->vlan, 100);
	CHECK_EQ(w->pcp, 3);
	CHECK(w->rate_gbps == 2.5 && w->rate_pps == 0);
	CHECK_EQ(w->pattern, CFG_PATTERN_ONOFF);
	CHECK(w->on_us == 100.0 && w->off_us == 900.0);
	CHECK_EQ(w->stop_messages, 1000);
	CHECK_EQ(w->stop_bytes, 5000000000ULL);
	CHECK(w->stop_seconds == 2.5);
	CHECK_EQ(w->count, 16);
	CHECK_EQ(w->qpn_step, 2);
	CHECK_EQ(w->dest_qpn_step, 3);
	CHECK_EQ(w->sport_step, 4);
	CHECK_EQ(w->line, 24);

	CHECK(!strcmp(u->name, "u"));
	CHECK_EQ(u->port, 1);
	CHECK(u->ip_version == 6 && u->dst_ip[15] == 9);
	CHECK_EQ(u->transport, CFG_UD);
	CHECK_EQ(u->op_weight[CFG_OP_SEND], 0);
	CHECK_EQ(u->op_weight[CFG_OP_SEND_IMM], 1);
	CHECK_EQ(u->msg_size.dist, CFG_SIZE_UNIFORM);
	CHECK(u->msg_size.min == 64 && u->msg_size.max == 256);
	CHECK_EQ(u->ib_mtu, 256);
	CHECK_EQ(u->qpn, 0xFFFFFF);
	CHECK_EQ(u->dest_qpn, 2);
	CHECK_EQ(u->qkey, 0xFFFFFFFFu);
	CHECK_EQ(u->ecn, 1);
	CHECK(u->rate_pps == 1e6 && u->rate_gbps == 0);
	CHECK_EQ(u->pattern, CFG_PATTERN_POISSON);
	CHECK_EQ(u->line, 32);

	CHECK(cfg.duration_s == 10.0);
	CHECK(cfg.stats_interval_s == 0.5);
	CHECK(!strcmp(cfg.report, "results/r.json"));

	CHECK_EQ(config_port_index(&cfg, "a"), 0);
	CHECK_EQ(config_port_index(&cfg, "b-2"), 1);
	CHECK_EQ(config_port_index(&cfg, "c"), -1);
}

static void test_minimal_defaults(void)
{
	const struct cfg_port *p = &cfg.ports[0];
	const struct cfg_flow_group *g = &cfg.groups[0];
	char prefix[64];

	CHECK_EQ(load("eal = { lcores = \"0-1\"; };\n"
		      "ports = ( { name = \"p\"; device = \"net_ring0\"; ipv4 = \"10.0.0.1\"; link_speed_gbps = 10; } );\n"
		      "lcores = ( { lcore = 1; port = \"p\"; role = \"txrx\"; } );\n"
		      "flows = ( { name = \"f\"; port = \"p\"; dst_mac = \"02:00:00:00:00:02\"; dst_ip = \"10.0.0.2\";\n"
		      "            qpn = 2; dest_qpn = 3; } );\n"),
		 0);
	if (err[0])
		printf("  %s\n", err);
	snprintf(prefix, sizeof(prefix), "roce-engine-%ld", (long)getpid());
	CHECK_EQ(cfg.eal.main_lcore, 0);
	CHECK_EQ(cfg.eal.memory_mb, 256);
	CHECK(!cfg.eal.huge_pages);
	CHECK(!strcmp(cfg.eal.file_prefix, prefix));
	CHECK(!strcmp(cfg.eal.log_level, "notice"));
	CHECK_EQ(cfg.eal.n_extra, 0);
	CHECK(!p->has_mac && !p->has_ipv6 && !p->vdev_args[0]);
	CHECK(p->rx_queues == 1 && p->tx_queues == 1 && p->rx_desc == 1024 && p->tx_desc == 1024);
	CHECK_EQ(p->mtu, 1500);
	CHECK_EQ(cfg.roles[0].queue, 0);
	CHECK_EQ(g->transport, CFG_RC);
	CHECK(g->op_weight[CFG_OP_SEND] == 1 && g->op_weight[CFG_OP_SEND_IMM] == 0 && g->op_weight[CFG_OP_WRITE] == 0 &&
	      g->op_weight[CFG_OP_WRITE_IMM] == 0 && g->op_weight[CFG_OP_READ] == 0);
	CHECK_EQ(g->ib_mtu, 1024);
	CHECK(g->msg_size.dist == CFG_SIZE_FIXED && g->msg_size.fixed == 1024); /* one full packet */
	CHECK_EQ(g->start_psn, 0);
	CHECK_EQ(g->pkey, 0xFFFF);
	CHECK_EQ(g->qkey, 0x11111111);
	CHECK(g->sport_entropy);
	CHECK_EQ(g->dscp, 26);
	CHECK_EQ(g->ecn, 2);
	CHECK(!g->has_vlan && g->pcp == 0);
	CHECK(g->rate_gbps == 0 && g->rate_pps == 0);
	CHECK_EQ(g->pattern, CFG_PATTERN_CONSTANT);
	CHECK(g->stop_messages == 0 && g->stop_bytes == 0 && g->stop_seconds == 0);
	CHECK(g->count == 1 && g->qpn_step == 1 && g->dest_qpn_step == 1 && g->sport_step == 1);
	CHECK(cfg.duration_s == 0 && cfg.stats_interval_s == 1.0 && !cfg.report[0]);

	/* receive only: no flows at all */
	CHECK_EQ(load("eal = { lcores = \"0-1\"; };\n"
		      "ports = ( { name = \"p\"; device = \"0000:01:00.0\"; ipv6 = \"fd00::1\"; } );\n"
		      "lcores = ( { lcore = 1; port = \"p\"; role = \"rx\"; } );\n"),
		 0);
	CHECK_EQ(cfg.n_groups, 0);
}

/* A collective's receives: the ranges as written (count 1 by default), ranges that touch without
 * overlapping, the same QPNs on another port, a range beside a local flow's QPNs, a collective
 * without receives. */
static void test_collective_receives(void)
{
	const struct cfg_collective *c = &cfg.collectives[0], *d = &cfg.collectives[1];

	CHECK_EQ(load("eal = { lcores = \"0-1\"; };\n"
		      "ports = ( { name = \"a\"; device = \"ring:x:a\"; ipv4 = \"10.0.0.1\"; link_speed_gbps = 10; },\n"
		      "          { name = \"b\"; device = \"ring:x:b\"; ipv4 = \"10.0.0.2\"; link_speed_gbps = 10; } );\n"
		      "lcores = ( { lcore = 1; port = \"a\"; role = \"txrx\"; }, { lcore = 1; port = \"b\"; role = \"rx\"; } );\n"
		      "flows = ( { name = \"f\"; port = \"a\"; dst_mac = \"02:00:00:00:00:02\"; dst_ip = \"10.0.0.2\";\n"
		      "            qpn = 0x100; dest_qpn = 0x200; count = 4; },\n"
		      "          { name = \"g\"; port = \"a\"; dst_mac = \"02:00:00:00:00:02\"; dst_ip = \"10.0.0.2\";\n"
		      "            qpn = 0x110; dest_qpn = 0x210; } );\n"
		      "collectives = (\n"
		      "  { name = \"c\"; flows = [\"f\"]; phases = 6;\n"
		      "    receives = ( { port = \"a\"; qpn = 0x104; count = 12; },\n"
		      "                 { port = \"b\"; qpn = 0x100; count = 65536; } ); },\n"
		      "  { name = \"d\"; flows = [\"g\"]; phases = 2; receives = ( { port = \"a\"; qpn = 0x111; } ); }\n"
		      ");\n"),
		 0);
	if (err[0])
		printf("  %s\n", err);
	CHECK_EQ(cfg.n_collectives, 2);
	CHECK_EQ(c->n_receives, 2);
	CHECK(c->receives[0].port == 0 && c->receives[0].qpn == 0x104 && c->receives[0].count == 12);
	CHECK_EQ(c->receives[0].line, 11);
	CHECK(c->receives[1].port == 1 && c->receives[1].qpn == 0x100 && c->receives[1].count == 65536);
	CHECK_EQ(c->receives[1].line, 12);
	CHECK_EQ(d->n_receives, 1);
	CHECK(d->receives[0].port == 0 && d->receives[0].qpn == 0x111 && d->receives[0].count == 1);

	CHECK_EQ(load("eal = { lcores = \"0-1\"; };\n"
		      "ports = ( { name = \"a\"; device = \"ring:x:a\"; ipv4 = \"10.0.0.1\"; link_speed_gbps = 10; } );\n"
		      "lcores = ( { lcore = 1; port = \"a\"; role = \"txrx\"; } );\n"
		      "flows = ( { name = \"f\"; port = \"a\"; dst_mac = \"02:00:00:00:00:02\"; dst_ip = \"10.0.0.2\";\n"
		      "            qpn = 0x100; dest_qpn = 0x200; } );\n"
		      "collectives = ( { name = \"c\"; flows = [\"f\"]; phases = 3; receives = ( ); } );\n"),
		 0);
	if (err[0])
		printf("  %s\n", err);
	CHECK_EQ(cfg.collectives[0].n_receives, 0);
}

static void test_defaults_function(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	config_defaults(&cfg);
	CHECK(!strcmp(cfg.eal.lcores, "0-1") || !strcmp(cfg.eal.lcores, "0"));
	if (ncpu == 1)
		CHECK(!strcmp(cfg.eal.lcores, "0"));
	CHECK_EQ(cfg.eal.main_lcore, 0);
	CHECK_EQ(cfg.eal.memory_mb, 256);
	CHECK(!strncmp(cfg.eal.file_prefix, "roce-engine-", 12));
	CHECK(cfg.n_ports == 0 && cfg.n_roles == 0 && cfg.n_groups == 0);
	CHECK(cfg.stats_interval_s == 1.0);
}

/* eal.lcores as an EAL --lcores map: lcore ids apart from CPUs, so the main lcore and a worker
 * may share a CPU; roles may use any lcore of the map but the main one. */
static void test_lcore_map(void)
{
	static const char *const maps[] = { "0@0,1@0,2@1", "(0,1)@0,2@1", "(0-1)@(0,1),2", "0,1@(0-1),5@1" };
	static const char ports[] = "ports = ( { name = \"a\"; device = \"net_null0\"; ipv4 = \"10.0.0.1\"; "
				    "link_speed_gbps = 100; }, { name = \"b\"; device = \"net_null1\"; "
				    "ipv4 = \"10.0.0.2\"; link_speed_gbps = 100; } );\n";
	char text[1024];

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		unsigned lc = i == 3 ? 5 : 2;

		snprintf(text, sizeof(text),
			 "eal = { lcores = \"%s\"; };\n%slcores = ( { lcore = 1; port = \"a\"; role = \"tx\"; }, "
			 "{ lcore = %u; port = \"b\"; role = \"tx\"; } );\n", maps[i], ports, lc);
		CHECK_EQ(load(text), 0);
		if (testlib_case_failed)
			printf("  %s: %s\n", maps[i], err);
		CHECK(cfg.eal.lcores_map);
		CHECK(!strcmp(cfg.eal.lcores, maps[i]));
		CHECK_EQ(cfg.eal.main_lcore, 0);
		CHECK(cfg.n_roles == 2 && cfg.roles[0].lcore == 1 && cfg.roles[1].lcore == lc);
	}
	/* the main lcore of a map still runs no role; main_lcore may move it */
	snprintf(text, sizeof(text), "eal = { lcores = \"0@0,1@0,2@1\"; main_lcore = 2; };\n%s"
		 "lcores = ( { lcore = 0; port = \"a\"; role = \"tx\"; }, { lcore = 1; port = \"b\"; role = \"tx\"; } );\n",
		 ports);
	CHECK_EQ(load(text), 0);
	CHECK_EQ(cfg.eal.main_lcore, 2);
	snprintf(text, sizeof(text), "eal = { lcores = \"0@0,1@0,2@1\"; };\n%s"
		 "lcores = ( { lcore = 0; port = \"a\"; role = \"tx\"; } );\n", ports);
	CHECK_EQ(load(text), -1);
	CHECK(strstr(err, "lcores.[0].lcore: lcore 0 is the main lcore") != NULL);
	/* a plain list stays an -l list */
	snprintf(text, sizeof(text), "eal = { lcores = \"0-2\"; };\n%s"
		 "lcores = ( { lcore = 1; port = \"a\"; role = \"tx\"; } );\n", ports);
	CHECK_EQ(load(text), 0);
	CHECK(!cfg.eal.lcores_map);
}

static void test_files(void)
{
	char path[] = "/tmp/test_config_XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	CHECK(f != NULL);
	if (!f)
		return;
	fputs(full_cfg, f);
	fclose(f);
	CHECK_EQ(config_load(path, &cfg, err, sizeof(err)), 0);
	CHECK(!strcmp(cfg.file, path));
	CHECK_EQ(cfg.n_groups, 2);
	unlink(path);

	CHECK_EQ(config_load(path, &cfg, err, sizeof(err)), -1);
	CHECK(!strncmp(err, path, strlen(path)));
	CHECK(strstr(err, ": cannot read: No such file or directory") != NULL);
	CHECK_EQ(config_load("/tmp", &cfg, err, sizeof(err)), -1);
	CHECK(strstr(err, "/tmp: cannot read: ") != NULL);
	/* a NULL or tiny err buffer is allowed */
	CHECK_EQ(config_load_string("x = ", "t.cfg", &cfg, NULL, 0), -1);
	CHECK_EQ(config_load_string("x = 1;", "t.cfg", &cfg, err, 8), -1);
	CHECK(!strcmp(err, "t.cfg:1"));
}

/* Every engine configuration shipped in configs/ loads (SOURCE_ROOT comes from meson); cluster-*.cfg
 * are roce-cluster's files (test_cluster loads them). */
static void test_shipped_configs(void)
{
	char pattern[600];
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/configs/*.cfg", SOURCE_ROOT);
	CHECK(glob(pattern, 0, NULL, &g) == 0);
	CHECK(g.gl_pathc >= 2);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		if (strstr(g.gl_pathv[i], "/configs/cluster-"))
			continue;
		if (config_load(g.gl_pathv[i], &cfg, err, sizeof(err))) {
			printf("  %s\n", err);
			CHECK(0);
		}
	}
	globfree(&g);
}

/* ---- broken configurations ------------------------------------------------------------------ */

struct bad {
	const char *text;
	unsigned line;
	const char *setting; /* what follows "t.cfg:LINE: " up to ": " */
	const char *what;    /* a substring of the rest */
};

/* A valid base: line 1 eal, line 2 one port, line 3 one role; flows start on line 4. */
#define EAL "eal = { lcores = \"0-1\"; };\n"
#define PORT_A "{ name = \"a\"; device = \"net_ring0\"; ipv4 = \"10.0.0.1\"; link_speed_gbps = 100; }"
#define PORTS "ports = ( " PORT_A " );\n"
#define ROLES "lcores = ( { lcore = 1; port = \"a\"; role = \"txrx\"; } );\n"
#define BASE EAL PORTS ROLES
#define F0 "name = \"f\"; port = \"a\"; dst_mac = \"02:00:00:00:00:02\"; dst_ip = \"10.0.0.2\"; qpn = 0x100; dest_qpn = 0x200; "
/* The flow basics without port and qpn, for rows that set those themselves. */
#define F1 "dst_mac = \"02:00:00:00:00:02\"; dst_ip = \"10.0.0.2\"; dest_qpn = 0x200; "
#define PORT_B "{ name = \"b\"; device = \"net_ring1\"; ipv4 = \"10.0.1.1\"; link_speed_gbps = 100; }"
#define FLOW(x) BASE "flows = ( { " F0 x " } );\n"
#define PORT(x) EAL "ports = ( { name = \"a\"; device = \"net_ring0\"; ipv4 = \"10.0.0.1\"; link_speed_gbps = 100; " x " } );\n" ROLES

static const struct bad syntax_rows[] = {
	{ "eal = { lcores = \"0-1\"\n", 2, "syntax error",
	  "found the end of the text where '}' was expected: the '{' at line 1 is never closed" },
	{ BASE "flows = ( { name = \"f\"; } \nlcores = ;\n", 5, "syntax error",
	  "found 'lcores' where ',' or ')' was expected: a missing ',' between the elements of a list?" },
	{ "eal = { memory_mb = 64;\n memory_mb = 128; };\n" PORTS ROLES, 2, "syntax error", "duplicate setting" },
	{ "ports = ( { name = \"a\n", 1, "syntax error", "unterminated string" },
	{ BASE "flows = ( );\n\"}\n", 5, "syntax error", "unterminated string" },
	{ BASE "/* flows = ( );\n", 4, "syntax error", "unterminated comment" },
	{ "@include \"other.cfg\"\n" BASE, 1, "@include", "not for a configuration given as text (no folder to find other.cfg in)" },
	{ FLOW("\nqpn_step = 4294967298;"), 5, "flows.[0].qpn_step", "does not fit a 32-bit integer" },
	{ BASE "flows = ( { " F0 "transport = \"ud\";\n qkey = 0x100000000; } );\n", 5, "flows.[0].qkey",
	  "does not fit 32 bits" },
	{ "# nothing\n", 1, "ports", "missing" },
	{ "", 1, "ports", "missing" },
	{ BASE "run = { duration_s = 99999999999999999999999L; };\n", 4, "run.duration_s", "does not fit a 64-bit" },
};

static const struct bad unknown_rows[] = {
	{ BASE "flow = ();\n", 4, "flow", "unknown setting 'flow' (allowed: eal, ports, lcores, flows, collectives, responders, pfc_generators, phases, run, switch, peers, sla, fabric, traffic)" },
	{ "eal = { lcore = \"0-1\"; };\n" PORTS ROLES, 1, "eal.lcore", "unknown setting 'lcore'" },
	{ EAL "ports = ( { name = \"a\"; device = \"net_ring0\";\n nmae = \"b\"; } );\n" ROLES, 3, "ports.[0].nmae",
	  "unknown setting 'nmae' (allowed: name, device," },
	{ FLOW("\nrate_gbs = 1;"), 5, "flows.[0].rate_gbs", "unknown setting 'rate_gbs'" },
	{ FLOW("stop = {\n message = 5; };"), 5, "flows.[0].stop.message",
	  "unknown setting 'message' (allowed: messages, bytes, seconds)" },
	{ FLOW("ops = { sned = 1; };"), 4, "flows.[0].ops.sned", "unknown setting 'sned'" },
	{ EAL PORTS "lcores = ( { lcore = 1; port = \"a\"; role = \"tx\";\n qeue = 0; } );\n", 4, "lcores.[0].qeue",
	  "unknown setting 'qeue' (allowed: lcore, port, queue, role)" },
	{ FLOW("rate_gbps = 1; pattern = { type = \"onoff\"; on_us = 1; off_us = 1; duty = 0.5; };"), 4,
	  "flows.[0].pattern.duty", "unknown setting 'duty'" },
	{ FLOW("message_size = { dist = \"uniform\"; min = 1; max = 5; mean = 3; };"), 4,
	  "flows.[0].message_size.mean", "unknown setting 'mean' (allowed: dist, min, max)" },
	{ BASE "run = { duration = 5; };\n", 4, "run.duration", "unknown setting 'duration'" },
	{ FLOW("message_size = 100; latency = { mode = \"oneway\"; every = 2; };"), 4, "flows.[0].latency.every",
	  "unknown setting 'every'" },
	{ BASE "run = { latency_csv = \"x.csv\"; };\n", 4, "run.latency_csv", "unknown setting 'latency_csv'" },
	{ PORT("qos = { trust = \"dscp\"; honor_pfc = false; };"), 2, "ports.[0].qos.honor_pfc",
	  "unknown setting 'honor_pfc'" },
	{ BASE "pfc_generators = ( { port = \"a\"; priorities = [3]; rate_pps = 1.0; prio = 1; } );\n", 4,
	  "pfc_generators.[0].prio", "unknown setting 'prio'" },
};

static const struct bad type_rows[] = {
	{ "eal = { memory_mb = \"256\"; };\n" PORTS ROLES, 1, "eal.memory_mb", "must be an integer, not a string" },
	{ "eal = { huge_pages = 1; };\n" PORTS ROLES, 1, "eal.huge_pages", "must be true or false" },
	{ EAL "ports = { name = \"a\"; };\n" ROLES, 2, "ports", "must be a list" },
	{ EAL "ports = ( { name = 5; } );\n" ROLES, 2, "ports.[0].name", "must be a string, not an integer" },
	{ FLOW("rate_gbps = \"fast\";"), 4, "flows.[0].rate_gbps", "must be a number, not a string" },
	{ FLOW("count = 1.5;"), 4, "flows.[0].count", "must be an integer, not a float" },
	{ "eal = { lcores = 2; };\n" PORTS ROLES, 1, "eal.lcores", "must be a string" },
	{ "eal = { extra_args = \"--no-pci\"; };\n" PORTS ROLES, 1, "eal.extra_args", "must be an array of strings" },
	{ "eal = { extra_args = [1, 2]; };\n" PORTS ROLES, 1, "eal.extra_args.[0]", "must be a string" },
	{ FLOW("message_size = \"4k\";"), 4, "flows.[0].message_size", "must be an integer or a group" },
	{ FLOW("ops = 1;"), 4, "flows.[0].ops", "must be a group" },
	{ FLOW("stop = { seconds = \"10\"; };"), 4, "flows.[0].stop.seconds", "must be a number" },
	{ FLOW("ecn = 2.0;"), 4, "flows.[0].ecn", "must be an integer, not a float" },
	{ EAL PORTS "lcores = ( \"1\" );\n", 3, "lcores.[0]", "must be a group" },
	{ BASE "run = ( );\n", 4, "run", "must be a group" },
};

static const struct bad range_rows[] = {
	{ "eal = { memory_mb = 8; };\n" PORTS ROLES, 1, "eal.memory_mb", "8 is out of range (16..65536)" },
	{ PORT("rx_queues = 17;"), 2, "ports.[0].rx_queues", "17 is out of range (1..16)" },
	{ PORT("rx_desc = 1000;"), 2, "ports.[0].rx_desc", "1000 is not a power of two" },
	{ PORT("tx_desc = 32768;"), 2, "ports.[0].tx_desc", "out of range (64..16384)" },
	{ PORT("mtu = 9001;"), 2, "ports.[0].mtu", "9001 is out of range (576..9000)" },
	{ EAL "ports = ( { name = \"a\"; device = \"net_ring0\"; ipv4 = \"10.0.0.1\"; link_speed_gbps = 0; } );\n" ROLES,
	  2, "ports.[0].link_speed_gbps", "0 is out of range (> 0 and <= 800)" },
	{ BASE "flows = ( { name = \"f\"; port = \"a\"; " F1 "qpn = 1; } );\n", 4, "flows.[0].qpn",
	  "0x1 is out of range (0x2..0xffffff)" },
	{ FLOW("dscp = 64;"), 4, "flows.[0].dscp", "64 is out of range (0..63)" },
	{ FLOW("vlan = 4096;"), 4, "flows.[0].vlan", "4096 is out of range (0..4094)" },
	{ FLOW("mtu = 1000;"), 4, "flows.[0].mtu", "1000 is not an IB MTU (256, 512, 1024, 2048 or 4096)" },
	{ FLOW("message_size = -1;"), 4, "flows.[0].message_size", "-1 is out of range (0..1073741824)" },
	{ BASE "run = { stats_interval_s = 0.05; };\n", 4, "run.stats_interval_s", "out of range (0.1..3600)" },
	{ "eal = { log_level = \"verbose\"; };\n" PORTS ROLES, 1, "eal.log_level",
	  "unknown value 'verbose' (allowed: emerg, alert, crit, error, warning, notice, info, debug, or an integer" },
	{ "eal = { log_level = 9; };\n" PORTS ROLES, 1, "eal.log_level", "9 is out of range (1..8)" },
	{ "eal = { file_prefix = \"a/b\"; };\n" PORTS ROLES, 1, "eal.file_prefix", "not a valid prefix" },
	{ "eal = { lcores = \"0-200\"; };\n" PORTS ROLES, 1, "eal.lcores", "'0-200' is not an lcore list" },
	{ "eal = { lcores = \"1,,2\"; };\n" PORTS ROLES, 1, "eal.lcores", "is not an lcore list" },
	{ PORT("mac = \"02:00:00:00:00\";"), 2, "ports.[0].mac", "'02:00:00:00:00' is not a MAC address" },
	{ PORT("mac = \"01:00:5e:00:00:01\";"), 2, "ports.[0].mac", "is a multicast address" },
	{ EAL "ports = ( { name = \"a\"; device = \"net_ring0\"; ipv4 = \"10.0.0.256\"; } );\n" ROLES, 2,
	  "ports.[0].ipv4", "'10.0.0.256' is not an IPv4 address" },
	{ FLOW("transport = \"xrc\";"), 4, "flows.[0].transport", "unknown value 'xrc' (allowed: rc, uc, ud)" },
	{ EAL "ports = ( { name = \"a\"; device = \"eth0\"; ipv4 = \"10.0.0.1\"; } );\n" ROLES, 2, "ports.[0].device",
	  "'eth0' is neither a vdev name" },
	{ EAL "ports = ( { name = \"a\"; device = \"ring:lab:c\"; ipv4 = \"10.0.0.1\"; } );\n" ROLES, 2,
	  "ports.[0].device", "ring pair end (ring:LINK:a or ring:LINK:b)" },
	{ EAL "ports = ( { name = \"a\"; device = \"ring::a\"; ipv4 = \"10.0.0.1\"; } );\n" ROLES, 2,
	  "ports.[0].device", "'ring::a' is neither" },
	{ EAL "ports = ( { name = \"a\"; device = \"ring:lab:a\"; ipv4 = \"10.0.0.1\"; } );\n" ROLES, 2,
	  "ports.[0].link_speed_gbps", "missing (required for vdev ring:lab:a" },
	{ EAL "ports = ( { name = \"a\"; device = \"ring:lab:a\";\n vdev_args = \"x=1\"; ipv4 = \"10.0.0.1\"; } );\n" ROLES, 3,
	  "ports.[0].vdev_args", "only vdevs take arguments" },
	{ EAL "ports = ( { name = \"a b\"; device = \"net_ring0\"; } );\n" ROLES, 2, "ports.[0].name",
	  "'a b' is not a valid name" },
	{ FLOW("ops = { write = 1001; };"), 4, "flows.[0].ops.write", "1001 is out of range (0..1000)" },
	{ FLOW("ops = { send = 0; };"), 4, "flows.[0].ops", "every weight is 0" },
	{ FLOW("count = 0;"), 4, "flows.[0].count", "0 is out of range (1..65536)" },
	{ FLOW("stop = { messages = -1; };"), 4, "flows.[0].stop.messages", "-1 is out of range" },
	{ BASE "run = { duration_s = -1; };\n", 4, "run.duration_s", "-1 is out of range" },
	{ FLOW("rate_pps = 2e9;"), 4, "flows.[0].rate_pps", "out of range (> 0 and <= 1e+09)" },
	{ FLOW("udp_sport = 0;"), 4, "flows.[0].udp_sport", "0 is out of range (1..65535)" },
	{ FLOW("udp_sport = \"random\";"), 4, "flows.[0].udp_sport", "unknown value 'random' (allowed: entropy, or" },
	{ FLOW("ecn = \"ect2\";"), 4, "flows.[0].ecn", "unknown value 'ect2' (allowed: not-ect, ect1, ect0, ce, or 0..3)" },
	{ FLOW("pcp = 8; vlan = 1;"), 4, "flows.[0].pcp", "8 is out of range (0..7)" },
	{ FLOW("pattern = \"onoff\"; rate_gbps = 1;"), 4, "flows.[0].pattern", "unknown value 'onoff'" },
	{ FLOW("rate_gbps = 1; pattern = { type = \"onoff\"; on_us = 0; off_us = 1; };"), 4, "flows.[0].pattern.on_us",
	  "0 is out of range (> 0" },
	{ FLOW("message_size = { dist = \"normal\"; };"), 4, "flows.[0].message_size.dist", "unknown value 'normal'" },
	{ FLOW("start_psn = 0x1000000;"), 4, "flows.[0].start_psn", "out of range (0x0..0xffffff)" },
	{ EAL "ports = ( );\n" ROLES, 2, "ports", "0 ports (allowed: 1..16)" },
	{ EAL "ports = ( { name = \"a\"; device = \"net_ring000000000000000000000000000000000000000000000000000000000000\"; } );\n" ROLES,
	  2, "ports.[0].device", "too long (at most 63 characters)" },
	{ FLOW("message_size = 100; latency = { mode = \"pingpong\"; timeout_us = 0.5; };"), 4,
	  "flows.[0].latency.timeout_us", "out of range" },
	{ PORT("tx_schedule_lead_us = 2e6;"), 2, "ports.[0].tx_schedule_lead_us", "out of range (0..1e+06)" },
	{ BASE "run = { latency_sample_every = 0; };\n", 4, "run.latency_sample_every", "out of range (1..1000000000)" },
	{ BASE "run = { latency_foreign_qps = 70000; };\n", 4, "run.latency_foreign_qps", "out of range (0..65536)" },
	{ PORT("timestamps = \"nic\";"), 2, "ports.[0].timestamps", "unknown value 'nic' (allowed: auto, hardware, software)" },
	{ FLOW("message_size = 100; latency = { mode = \"always\"; };"), 4, "flows.[0].latency.mode",
	  "unknown value 'always' (allowed: off, oneway, pingpong)" },
	{ BASE "pfc_generators = ( { port = \"a\"; priorities = [8]; rate_pps = 1.0; } );\n", 4,
	  "pfc_generators.[0].priorities.[0]", "8 is out of range (0..7)" },
	{ BASE "pfc_generators = ( { port = \"a\"; priorities = [3]; quanta = 70000; rate_pps = 1.0; } );\n", 4,
	  "pfc_generators.[0].quanta", "out of range (0..65535)" },
	{ BASE "pfc_generators = ( { port = \"a\"; priorities = [3]; rate_pps = 0; } );\n", 4, "pfc_generators.[0].rate_pps",
	  "out of range (> 0 and <= 1e+08)" },
	{ PORT("qos = { dscp_to_priority = [1, 2, 3]; };"), 2, "ports.[0].qos.dscp_to_priority", "array of 64 priorities" },
	{ PORT("qos = { egress = { shape_gbps = 10; weights = [1, 2]; }; };"), 2, "ports.[0].qos.egress.weights",
	  "array of 8 values" },
	{ PORT("qos = { egress = { shape_gbps = 10; weights = [1, 1, 1, 0, 1, 1, 1, 1]; }; };"), 2,
	  "ports.[0].qos.egress.weights", "element 3 must be an integer 1..1000" },
	{ PORT("qos = { egress = { shape_gbps = 10; strict = [9]; }; };"), 2, "ports.[0].qos.egress.strict.[0]",
	  "9 is out of range (0..7)" },
	{ PORT("qos = { egress = { shape_gbps = 0; }; };"), 2, "ports.[0].qos.egress.shape_gbps", "out of range (> 0 and <= 800)" },
	{ PORT("qos = { trust = \"cos\"; };"), 2, "ports.[0].qos.trust", "unknown value 'cos' (allowed: dscp, pcp)" },
};

static const struct bad contradiction_rows[] = {
	{ BASE "flows = ( { name = \"f\"; qpn = 2; " F1 "\n port = \"b\"; } );\n", 5, "flows.[0].port",
	  "no port named 'b' (ports: a)" },
	{ EAL PORTS "lcores = ( { lcore = 0; port = \"a\"; role = \"tx\"; } );\n", 3, "lcores.[0].lcore",
	  "lcore 0 is the main lcore" },
	{ "eal = { lcores = \"0-1\"; main_lcore = 1; };\n" PORTS ROLES, 3, "lcores.[0].lcore", "is the main lcore" },
	{ EAL PORTS "lcores = ( { lcore = 2; port = \"a\"; role = \"tx\"; } );\n", 3, "lcores.[0].lcore",
	  "lcore 2 is not in eal.lcores \"0-1\"" },
	{ "eal = { lcores = \"0-1\"; main_lcore = 3; };\n" PORTS ROLES, 1, "eal.main_lcore", "lcore 3 is not in eal.lcores" },
	{ EAL PORTS "lcores = ( { lcore = 1; port = \"a\"; role = \"tx\"; },\n { lcore = 1; port = \"a\"; role = \"txrx\"; } );\n",
	  4, "lcores.[1]", "port 'a' queue 0 tx is already polled by the role at line 3" },
	{ EAL PORTS "lcores = ( { lcore = 1; port = \"a\"; role = \"rx\"; queue = 1; } );\n", 3, "lcores.[0].queue",
	  "queue 1 is beyond port 'a''s rx queues (0..0" },
	{ EAL PORTS "lcores = ( { lcore = 1; port = \"c\"; role = \"rx\"; } );\n", 3, "lcores.[0].port", "no port named 'c'" },
	{ EAL PORTS "lcores = ( { lcore = 1; port = \"a\"; } );\n", 3, "lcores.[0].role", "missing (required: tx, rx, txrx, reflect or switch)" },
	{ BASE "flows = ( { name = \"f\"; port = \"a\"; dst_mac = \"02:00:00:00:00:02\"; qpn = 2; dest_qpn = 2;\n"
	       " dst_ip = \"fd00::2\"; } );\n", 5, "flows.[0].dst_ip", "an IPv6 destination, but port 'a' has no ipv6 address" },
	{ FLOW("rate_gbps = 1;\n rate_pps = 5;"), 5, "flows.[0].rate_pps", "rate_gbps and rate_pps are both set" },
	{ FLOW("rate_gbps = 150;"), 4, "flows.[0].rate_gbps", "150 Gb/s per QP is above port 'a''s link speed 100 Gb/s" },
	{ FLOW("transport = \"ud\"; ops = {\n read = 1; };"), 5, "flows.[0].ops.read", "UD has no read" },
	{ FLOW("transport = \"ud\"; ops = { write_imm = 1; };"), 4, "flows.[0].ops.write_imm", "UD has no write_imm" },
	{ FLOW("transport = \"uc\"; ops = { read = 1; };"), 4, "flows.[0].ops.read", "UC has no read" },
	{ FLOW("transport = \"ud\"; message_size = 4096;"), 4, "flows.[0].message_size",
	  "UD messages are single packets: 4096 bytes is above the flow's mtu 1024" },
	{ FLOW("transport = \"ud\"; mtu = 512; message_size = { dist = \"uniform\"; min = 1; max = 1024; };"), 4,
	  "flows.[0].message_size", "1024 bytes is above the flow's mtu 512" },
	{ BASE "flows = ( { " F0 "count = 4; qpn_step = 4; },\n"
	       " { name = \"g\"; port = \"a\"; " F1 "qpn = 0x10c; } );\n",
	  5, "flows.[1].qpn", "QPN 0x10c of flow 'g' is also a QPN of flow 'f' at line 4 on port 'a'" },
	{ BASE "flows = ( { name = \"f\"; port = \"a\"; " F1 "count = 256;\n qpn = 0xFFFF01; } );\n", 4, "flows.[0].count",
	  "the last QPN would be 0x1000000" },
	{ FLOW("count = 3;\n dest_qpn_step = 0x800000;"), 4, "flows.[0].count", "the last dest_qpn would be" },
	{ FLOW("count = 3;\n udp_sport = 65535;"), 4, "flows.[0].count", "the last udp_sport would be 65537" },
	{ EAL "ports = ( { name = \"a\"; device = \"net_ring0\"; ipv4 = \"10.0.0.1\"; } );\n" ROLES, 2,
	  "ports.[0].link_speed_gbps", "missing (required for vdev net_ring0" },
	{ EAL "ports = ( " PORT_A ",\n { name = \"a\"; device = \"net_ring1\"; } );\n" ROLES, 3, "ports.[1].name",
	  "duplicate port name 'a' (also at line 2" },
	{ EAL "ports = ( " PORT_A ",\n { name = \"b\"; device = \"net_ring0\"; } );\n" ROLES, 3, "ports.[1].device",
	  "device net_ring0 is already port 'a' at line 2" },
	{ BASE "flows = ( { " F0 "},\n { " F0 "} );\n", 5, "flows.[1].name", "duplicate flow name 'f' (also at line 4" },
	{ FLOW("pcp = 3;"), 4, "flows.[0].pcp", "pcp without vlan" },
	{ FLOW("qkey = 5;"), 4, "flows.[0].qkey", "qkey applies only to UD (this flow is rc)" },
	{ FLOW("transport = \"uc\"; qkey = 5;"), 4, "flows.[0].qkey", "qkey applies only to UD (this flow is uc)" },
	{ FLOW("pattern = \"poisson\";"), 4, "flows.[0].pattern", "a poisson pattern needs a rate" },
	{ FLOW("pattern = { type = \"onoff\"; on_us = 1; off_us = 1; };"), 4, "flows.[0].pattern",
	  "an onoff pattern needs a rate" },
	{ EAL "ports = ( " PORT_A ", " PORT_B " );\n" ROLES "flows = ( { name = \"f\"; port = \"b\"; qpn = 2; " F1 "} );\n",
	  4, "flows.[0].port", "port 'b' has no tx role in lcores" },
	{ EAL "ports = ( { name = \"a\"; device = \"0000:01:00.0\";\n vdev_args = \"x=1\"; ipv4 = \"10.0.0.1\"; } );\n" ROLES,
	  3, "ports.[0].vdev_args", "only vdevs take arguments" },
	{ PORT("vdev_args = \"a=1, b=2\";"), 2, "ports.[0].vdev_args", "contains a space" },
	{ FLOW("mtu = 4096;"), 4, "flows.[0].mtu", "IB MTU 4096 needs an IP MTU of at least 4168, port 'a' has 1500" },
	{ FLOW("message_size = { dist = \"exponential\"; min = 10; max = 100;\n mean = 5; };"), 5,
	  "flows.[0].message_size.mean", "mean 5 is outside min..max 10..100" },
	{ FLOW("message_size = { dist = \"uniform\"; min = 10;\n max = 5; };"), 5, "flows.[0].message_size.max",
	  "max 5 is below min 10" },
	{ EAL "ports = ( { name = \"a\"; device = \"net_ring0\"; link_speed_gbps = 1; } );\n" ROLES, 2, "ports.[0].ipv4",
	  "missing (a port needs ipv4, ipv6 or both)" },
	{ BASE "flows = ( { name = \"f\"; port = \"a\"; " F1 "} );\n", 4, "flows.[0].qpn", "missing (required" },
	{ EAL PORTS ROLES "flows = ( { " F0 "transport = \"ud\"; message_size = { dist = \"fixed\"; size = 2000; }; } );\n", 4,
	  "flows.[0].message_size", "2000 bytes is above the flow's mtu 1024" },
	{ FLOW("rate_gbps = 1; pattern = { type = \"onoff\"; on_us = 3; };"), 4, "flows.[0].pattern.off_us",
	  "missing (required" },
	{ FLOW("message_size = 16; transport = \"uc\"; ops = { write = 1; }; latency = { mode = \"oneway\"; };"), 4,
	  "flows.[0].latency.mode", "no room for the 24-byte probe" },
	{ FLOW("message_size = 100; ops = { read = 1; }; latency = { mode = \"pingpong\"; };"), 4,
	  "flows.[0].latency.mode", "SEND or WRITE payloads" },
	{ FLOW("message_size = { dist = \"uniform\"; min = 8; max = 100; }; latency = { mode = \"oneway\"; };"), 4,
	  "flows.[0].latency.mode", "messages of 8 bytes" },
	{ FLOW("latency = { timeout_us = 10.0; };"), 4, "flows.[0].latency.mode", "missing (required: oneway or pingpong" },
	{ PORT("qos = { pfc_xoff = { priorities = [3]; xoff_bytes = 1000; xon_bytes = 1000; drain_gbps = 1; }; };"), 2,
	  "ports.[0].qos.pfc_xoff.xon_bytes", "1000 is not below xoff_bytes 1000" },
	{ PORT("qos = { pfc_xoff = { priorities = [3]; xoff_bytes = 1000; xon_bytes = 10; }; };"), 2,
	  "ports.[0].qos.pfc_xoff.drain_gbps", "missing (required: how fast the watched backlog drains" },
	{ BASE "phases = ( { name = \"a\"; at_s = 1.0; }, { name = \"b\"; at_s = 1.0; } );\n", 4, "phases.[1].at_s",
	  "1 is not after the previous phase's 1" },
	{ BASE "phases = ( { name = \"a\"; at_s = 0.0; egress = ( { port = \"a\"; tc = 3; weight = 2; } ); } );\n", 4,
	  "phases.[0].egress.[0].port", "has no qos.egress" },
	{ FLOW("rate_gbps = 1;") "phases = ( { name = \"a\"; at_s = 0.0; rates = ( { flow = \"g\"; gbps = 2.0; } ); } );\n",
	  5, "phases.[0].rates.[0].flow", "no flow named 'g'" },
	{ FLOW("") "phases = ( { name = \"a\"; at_s = 0.0; rates = ( { flow = \"f\"; gbps = 2.0; } ); } );\n", 5,
	  "phases.[0].rates.[0].flow", "has no rate_gbps" },
	{ PORT("qos = { tc_to_queue = [0, 1, 0, 0, 0, 0, 0, 0]; };"), 2, "ports.[0].qos.tc_to_queue",
	  "element 1 must be an integer 0..0" },
	{ PORT("qos = { priority_to_tc = [0, 0, 0, 8, 0, 0, 0, 0]; };"), 2, "ports.[0].qos.priority_to_tc",
	  "element 3 must be an integer 0..7" },
	{ PORT("qos = { egress = { weights = [1, 1, 1, 1, 1, 1, 1, 1]; }; };"), 2, "ports.[0].qos.egress.shape_gbps",
	  "missing (required: the port's egress rate" },
	{ PORT("qos = { pfc_xoff = { xoff_bytes = 1000; xon_bytes = 10; drain_gbps = 1; }; };"), 2,
	  "ports.[0].qos.pfc_xoff.priorities", "missing (required: an array of priorities" },
	{ BASE "pfc_generators = ( { port = \"a\"; pause = true; priorities = [3]; rate_pps = 1.0; } );\n", 4,
	  "pfc_generators.[0].priorities", "pauses every priority: no priorities here" },
	{ BASE "pfc_generators = ( { port = \"a\"; rate_pps = 1.0; } );\n", 4, "pfc_generators.[0].priorities",
	  "missing (required: an array of priorities 0..7" },
	{ BASE "pfc_generators = ( { port = \"a\"; priorities = [3]; } );\n", 4, "pfc_generators.[0].rate_pps",
	  "missing (required: frames per second" },
	{ EAL PORTS "lcores = ( { lcore = 1; port = \"a\"; role = \"rx\"; } );\n"
	  "pfc_generators = ( { port = \"a\"; priorities = [3]; rate_pps = 1.0; } );\n", 4, "pfc_generators.[0].port",
	  "has no tx role" },
};

/* Every row must fail with exactly one line "t.cfg:LINE: SETTING: ...WHAT...". */
/* congestion control, notification point, event injection, the trace */
static const struct bad cc_rows[] = {
	{ FLOW("cc = \"dctcp\";"), 4, "flows.[0].cc", "unknown value 'dctcp' (allowed: none, dcqcn, timely)" },
	{ FLOW("cc = 1;"), 4, "flows.[0].cc", "must be a string" },
	{ FLOW("dcqcn = { rpg_gd = 11; };"), 4, "flows.[0].dcqcn", "the flow's cc is not dcqcn" },
	{ FLOW("cc = \"dcqcn\"; dcqcn = { rpg_gd = 40; };"), 4, "flows.[0].dcqcn.rpg_gd", "40 is out of range (1..31)" },
	{ FLOW("cc = \"dcqcn\"; dcqcn = { rpg_min_dec_fac = 101; };"), 4, "flows.[0].dcqcn.rpg_min_dec_fac",
	  "101 is out of range (0..100)" },
	{ FLOW("cc = \"dcqcn\"; dcqcn = { dce_tcp_g = 1024; };"), 4, "flows.[0].dcqcn.dce_tcp_g", "out of range (0..1023)" },
	{ FLOW("cc = \"dcqcn\"; dcqcn = { profile = \"cisco\"; };"), 4, "flows.[0].dcqcn.profile",
	  "unknown value 'cisco' (allowed: nvidia, paper)" },
	{ FLOW("cc = \"dcqcn\"; dcqcn = { rpg_ai = 5; };"), 4, "flows.[0].dcqcn.rpg_ai", "unknown setting 'rpg_ai'" },
	{ FLOW("cc = \"dcqcn\"; dcqcn = { clamp_tgt_rate = 1; };"), 4, "flows.[0].dcqcn.clamp_tgt_rate", "true or false" },
	{ FLOW("cc = \"dcqcn\"; dcqcn = { profile = \"paper\"; g = 0.0; };"), 4, "flows.[0].dcqcn.g", "out of range" },
	{ FLOW("cc = \"dcqcn\"; dcqcn = { profile = \"paper\"; f = 0; };"), 4, "flows.[0].dcqcn.f", "0 is out of range (1..1000)" },
	{ FLOW("cc = \"dcqcn\"; dcqcn = { profile = \"paper\"; hyper_linear = true; };"), 4, "flows.[0].dcqcn.hyper_linear",
	  "must be false with ns3_stages (whose hyper step grows already); set ns3_stages = false" },
	{ FLOW("cc = \"dcqcn\"; dcqcn = { profile = \"paper\"; ns3_stages = 0; };"), 4, "flows.[0].dcqcn.ns3_stages",
	  "true or false" },
	{ FLOW("transport = \"uc\"; cc = \"timely\";"), 4, "flows.[0].cc", "RC ACKs (transport rc)" },
	{ FLOW("cc = \"timely\"; timely = { beta = 2.0; };"), 4, "flows.[0].timely.beta", "2 is out of range (0..1)" },
	{ FLOW("cc = \"timely\"; timely = { t_high_us = 0; };"), 4, "flows.[0].timely.t_high_us", "out of range" },
	{ FLOW("cc = \"dcqcn\"; rate_pps = 1000;"), 4, "flows.[0].cc", "use rate_gbps" },
	{ FLOW("cc = \"dcqcn\"; rate_gbps = 1; pattern = { type = \"onoff\"; on_us = 10; off_us = 10; };"), 4, "flows.[0].cc",
	  "pattern must be constant" },
	{ FLOW("inject = { action = \"ce\"; };"), 4, "flows.[0].inject", "must be a list" },
	{ FLOW("inject = ( { action = \"ce\"; } );"), 4, "flows.[0].inject.[0]", "choose the packets one way" },
	{ FLOW("inject = ( { action = \"ce\"; every = 2; psn = 3; } );"), 4, "flows.[0].inject.[0]",
	  "choose the packets one way: psn, every or probability" },
	{ FLOW("inject = ( { action = \"delay\"; every = 2; } );"), 4, "flows.[0].inject.[0].action",
	  "unknown value 'delay' (allowed: ce, drop, corrupt)" },
	{ FLOW("inject = ( { action = \"drop\"; probability = 1.5; } );"), 4, "flows.[0].inject.[0].probability",
	  "out of range (> 0 and <= 1)" },
	{ FLOW("inject = ( { action = \"drop\"; every = 3; qp = 1; } );"), 4, "flows.[0].inject.[0].qp",
	  "1 is out of range (0..0)" },
	{ FLOW("inject = ( { action = \"drop\"; psn = 16777216; } );"), 4, "flows.[0].inject.[0].psn", "out of range" },
	{ PORT("np = { cnp_dscp = 64; };"), 2, "ports.[0].np.cnp_dscp", "64 is out of range (0..63)" },
	{ PORT("np = { cnp_802p_prio = 8; };"), 2, "ports.[0].np.cnp_802p_prio", "8 is out of range (0..7)" },
	{ PORT("np = { enabled = 1; };"), 2, "ports.[0].np.enabled", "true or false" },
	{ PORT("np = { min_time = 4; };"), 2, "ports.[0].np.min_time", "unknown setting 'min_time'" },
	{ PORT("rx_inject = ( { action = \"ce\"; psn = 4; } );"), 2, "ports.[0].rx_inject.[0].psn", "unknown setting 'psn'" },
	{ BASE "run = { cc_trace_interval_us = 0.5; };\n", 4, "run.cc_trace_interval_us", "0.5 is out of range (1..1e+09)" },
	{ BASE "run = { cc_trace_qps = 0; };\n", 4, "run.cc_trace_qps", "0 is out of range" },
	{ BASE "peers = ( { port = \"a\"; qpn = 0x10; peer_qpn = 0x20; mtu = 1024; } );\n", 4, "peers.[0].mtu",
	  "unknown setting 'mtu' (allowed: port, qpn, peer_qpn, count, qpn_step, peer_qpn_step)" },
	{ BASE "peers = { port = \"a\"; };\n", 4, "peers", "must be a list" },
	/* SLA checks */
	{ FLOW("") "sla = ( { flow = \"f\"; port = \"a\"; metric = \"loss\"; max = 0.0; } );\n", 5, "sla.[0]",
	  "name one subject" },
	{ FLOW("") "sla = ( { flow = \"nope\"; metric = \"loss\"; max = 0.0; } );\n", 5, "sla.[0].flow",
	  "no flow named 'nope'" },
	{ FLOW("") "sla = ( { flow = \"f\"; metric = \"speed\"; max = 0.0; } );\n", 5, "sla.[0].metric",
	  "unknown value 'speed' (allowed: goodput_gbps, loss, p50_latency_ns" },
	{ FLOW("") "sla = ( { flow = \"f\"; metric = \"pause_percent\"; max = 1.0; } );\n", 5, "sla.[0].metric",
	  "pause_percent is a port metric (the check names a flow)" },
	{ FLOW("") "sla = ( { flow = \"f\"; metric = \"loss\"; } );\n", 5, "sla.[0]", "give the limit" },
	{ FLOW("") "sla = ( { flow = \"f\"; metric = \"p99_latency_ns\"; max = 1.0; } );\n", 5, "sla.[0].metric",
	  "flow 'f' measures no latency" },
	{ FLOW("") "sla = ( { port = \"a\"; metric = \"rx_gbps\"; min = 1.0; priority = 3; } );\n", 5,
	  "sla.[0].priority", "only for metric pause_percent" },
};

static void check_rows(const char *category, const struct bad *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct bad *r = &rows[i];
		char want[256];
		size_t wl;
		int rc;

		memset(err, 'x', sizeof(err));
		rc = load(r->text);
		wl = (size_t)snprintf(want, sizeof(want), "t.cfg:%u: %s: ", r->line, r->setting);
		/* syntax errors: "t.cfg:LINE: syntax error: <libconfig's words>" */
		if (!strcmp(r->setting, "syntax error"))
			wl -= 2;
		if (getenv("SHOW_ERRORS"))
			printf("  %s\n", err);
		if (rc == -1 && !strncmp(err, want, wl) && strstr(err + wl, r->what) && !strchr(err, '\n'))
			continue;
		testlib_case_failed++;
		printf("  %s row %zu: rc %d, got \"%s\"\n    want \"%s...%s...\"\n", category, i, rc, err, want, r->what);
	}
}

#define ROWS(t) (t), sizeof(t) / sizeof((t)[0])
static void test_broken_syntax(void) { check_rows("syntax", ROWS(syntax_rows)); }
static void test_broken_unknown_settings(void) { check_rows("unknown", ROWS(unknown_rows)); }
static void test_broken_types(void) { check_rows("types", ROWS(type_rows)); }
static void test_broken_ranges(void) { check_rows("ranges", ROWS(range_rows)); }
static void test_broken_contradictions(void) { check_rows("contradictions", ROWS(contradiction_rows)); }
static void test_broken_cc(void) { check_rows("cc", ROWS(cc_rows)); }

/* The settings land where the engine reads them: profile defaults, then the overrides. */
static void test_cc_settings(void)
{
	static struct engine_config c;
	char err[512] = "";
	int rc = config_load_string(BASE "flows = ( { " F0 "cc = \"dcqcn\"; dcqcn = { profile = \"paper\"; r_ai_mbps = 20; "
				    "ns3_stages = false; hyper_linear = true; g = 0.5; };\n inject = ( { action = \"drop\"; every = 7; count = 2; } ); },\n"
				    " { name = \"t\"; port = \"a\"; " F1 "qpn = 0x300; cc = \"timely\"; timely = { beta = 0.5; }; } );\n"
				    "run = { cc_trace = \"x.csv\"; cc_trace_qps = 4; };\n",
				    "t.cfg", &c, err, sizeof(err));
	struct dcqcn_params paper;

	CHECK_EQ(rc, 0);
	if (rc) {
		printf("  %s\n", err);
		return;
	}
	dcqcn_params_default(&paper, DCQCN_PAPER);
	CHECK_EQ(c.groups[0].cc, CFG_CC_DCQCN);
	CHECK_EQ(c.groups[0].dcqcn.profile, DCQCN_PAPER);
	CHECK_EQ(c.groups[0].dcqcn.r_ai_mbps, 20);
	CHECK(!c.groups[0].dcqcn.ns3_stages && c.groups[0].dcqcn.hyper_linear);
	CHECK(paper.ns3_stages);
	CHECK(c.groups[0].dcqcn.g == 0.5);
	CHECK_EQ(c.groups[0].dcqcn.t_us, paper.t_us);
	CHECK_EQ(c.groups[0].n_inject, 1);
	CHECK_EQ(c.groups[0].inject[0].action, CFG_INJECT_DROP);
	CHECK_EQ(c.groups[0].inject[0].every, 7);
	CHECK_EQ(c.groups[0].inject[0].count, 2);
	CHECK_EQ(c.groups[0].inject[0].qp, -1);
	CHECK_EQ(c.groups[1].cc, CFG_CC_TIMELY);
	CHECK(c.groups[1].timely.beta == 0.5);
	CHECK(c.ports[0].np_enabled);
	CHECK_EQ(c.ports[0].np.cnp_dscp, 48);
	CHECK_EQ(c.ports[0].np.cnp_802p_prio, 6);
	CHECK(!strcmp(c.cc_trace, "x.csv"));
	CHECK_EQ(c.cc_trace_qps, 4);
	CHECK(c.cc_trace_interval_us == 100);
	/* the run-time setter checks like the file */
	CHECK_EQ(config_cc_param_set(CFG_CC_DCQCN, &c.groups[0].dcqcn, "r_ai_mbps", 30, err, sizeof(err)), 0);
	CHECK_EQ(c.groups[0].dcqcn.r_ai_mbps, 30);
	CHECK_EQ(config_cc_param_set(CFG_CC_DCQCN, &c.groups[0].dcqcn, "rpg_gd", 32, err, sizeof(err)), -1);
	CHECK(strstr(err, "out of range") != NULL);
	CHECK_EQ(config_cc_param_set(CFG_CC_DCQCN, &c.groups[0].dcqcn, "rpg_gd", 2.5, err, sizeof(err)), -1);
	CHECK_EQ(config_cc_param_set(CFG_CC_TIMELY, &c.groups[1].timely, "nope", 1, err, sizeof(err)), -1);
	CHECK(strstr(err, "no parameter 'nope'") != NULL);
}

/* The error is cut to fit whatever buffer it is given, always terminated, never overrun. */
static void test_error_buffer_sizes(void)
{
	const struct bad *r = &contradiction_rows[0];

	for (size_t len = 1; len < 80; len++) {
		char small[80];

		memset(small, 'x', sizeof(small));
		CHECK_EQ(config_load_string(r->text, "t.cfg", &cfg, small, len), -1);
		CHECK(memchr(small, '\0', len) != NULL);
		CHECK(small[len] == 'x' || len == sizeof(small));
	}
}

int main(void)
{
	size_t n = sizeof(syntax_rows) / sizeof(syntax_rows[0]) + sizeof(unknown_rows) / sizeof(unknown_rows[0]) +
		   sizeof(type_rows) / sizeof(type_rows[0]) + sizeof(range_rows) / sizeof(range_rows[0]) +
		   sizeof(contradiction_rows) / sizeof(contradiction_rows[0]) + sizeof(cc_rows) / sizeof(cc_rows[0]);

	printf("# %zu broken configurations\n", n);
	RUN(test_full_config);
	RUN(test_minimal_defaults);
	RUN(test_collective_receives);
	RUN(test_defaults_function);
	RUN(test_lcore_map);
	RUN(test_files);
	RUN(test_shipped_configs);
	RUN(test_broken_syntax);
	RUN(test_broken_unknown_settings);
	RUN(test_broken_types);
	RUN(test_broken_ranges);
	RUN(test_broken_contradictions);
	RUN(test_broken_cc);
	RUN(test_cc_settings);
	RUN(test_error_buffer_sizes);
	return testlib_finish("test_config");
}

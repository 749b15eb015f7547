/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The `fabric` group's parser (config/config_fabric.c): a valid group of each kind builds the
 * fabric it says; a table of broken ones, each with its one line "fabric.cfg:LINE: SETTING:
 * what" (the line and setting named, the words expected); and the traffic patterns' settings.
 * SHOW_ERRORS=1 in the environment prints every message.
 */
#include <libconfig.h>

#include <string.h>

#include "config_fabric.h"
#include "testlib.h"

#define NAME "fabric.cfg"

struct loaded {
	struct fab_spec spec;
	struct fabric f;
	struct fab_routes routes;
	struct fab_pattern pattern;
	bool with_pattern;
	int rc;
};

/* The loaded structures and their reader. */
static struct holder {
	struct loaded L;
	struct config_reader r;
} H;

static int load_root(void *arg, const config_setting_t *root)
{
	struct loaded *L = arg;
	struct config_reader *r = &H.r;
	const config_setting_t *g = config_setting_get_member(root, "fabric"), *t;

	if (!g)
		return cr_fail(r, NULL, "fabric: missing");
	if (cfab_load(r, g, &L->spec, &L->f, &L->routes))
		return -1;
	if ((t = config_setting_get_member(root, "traffic"))) {
		L->with_pattern = true;
		return cfab_pattern(r, t, &L->f, &L->pattern);
	}
	return 0;
}

static char err[1024];

static int load(const char *text)
{
	memset(&H, 0, sizeof(H));
	cr_init(&H.r, NAME, err, sizeof(err), "configuration");
	return cr_load_text(&H.r, text, load_root, &H.L);
}

static void unload(void)
{
	free(H.L.pattern.hosts);
	fab_routes_free(&H.L.routes);
	fabric_free(&H.L.f);
	fab_spec_free(&H.L.spec);
}

static void test_kinds(void)
{
	CHECK(load("fabric = { kind = \"leaf-spine\"; leaves = 4; spines = 2; hosts_per_leaf = 4;\n"
		   "  host_gbps = 100; uplink_gbps = 200; uplinks = 2; load_balance = \"flowlet\"; flowlet_gap_us = 20;\n"
		   "  hash = { function = \"crc16\"; seed = 7; fields = [\"dst_ip\", \"dest_qp\"]; };\n"
		   "  switches = ( { name = \"spine1\"; load_balance = \"spray\"; } ); };\n") == 0);
	CHECK_EQ(H.L.f.n_switches, 6);
	CHECK_EQ(H.L.f.n_links, 16 + 16);
	CHECK_EQ(H.L.f.switches[0].lb.lb, FAB_LB_FLOWLET);
	CHECK_EQ(H.L.f.switches[0].lb.flowlet_gap_ns, 20000);
	CHECK_EQ(H.L.f.switches[0].lb.hash.fn, FAB_HASH_CRC16);
	CHECK_EQ(H.L.f.switches[0].lb.hash.seed, 7);
	CHECK_EQ(H.L.f.switches[0].lb.hash.fields, FAB_FIELD_DST_IP | FAB_FIELD_DEST_QP);
	CHECK_EQ(H.L.f.switches[5].lb.lb, FAB_LB_SPRAY);
	CHECK(fabric_link_by_name(&H.L.f, "leaf3-spine1.1") >= 0);
	unload();
	CHECK(load("fabric = { kind = \"rail\"; hosts = 8; rails = 4; spines = 2; subnet = \"10.8.0.0/16\"; };\n") == 0);
	CHECK_EQ(H.L.f.n_nics, 32);
	CHECK_EQ(H.L.f.nics[0].ip, 0x0A080002);
	unload();
	CHECK(load("fabric = { kind = \"fat-tree\"; k = 8; core_gbps = 400; };\n") == 0);
	CHECK_EQ(H.L.f.n_hosts, 128);
	CHECK_EQ(H.L.f.switches[5].lb.hash.seed, 0);
	unload();
	CHECK(load("fabric = { kind = \"fat-tree\"; k = 4; hash = { seed = 3; seed_per_switch = true; };\n"
		   "  switches = ( { name = \"core1\"; hash = { seed = 8; }; } ); };\n") == 0);
	CHECK_EQ(H.L.f.switches[0].lb.hash.seed, 3);
	CHECK_EQ(H.L.f.switches[5].lb.hash.seed, 3 + 5 * 0x9E3779B1u);
	CHECK_EQ(H.L.f.switches[17].lb.hash.seed, 8); /* an override's seed is its own */
	unload();
	CHECK(load("fabric = { kind = \"custom\";\n"
		   "  switches = ( { name = \"a\"; }, { name = \"b\"; tier = \"spine\"; } );\n"
		   "  hosts = [\"x\", \"y\"];\n"
		   "  links = ( { a = \"a\"; b = \"x\"; }, { a = \"a\"; b = \"y\"; gbps = 25; }, { a = \"a\"; b = \"b\"; count = 2; } ); };\n") == 0);
	CHECK_EQ(H.L.f.n_links, 4);
	CHECK_EQ(H.L.f.switches[1].tier, FAB_TIER_SPINE);
	CHECK(H.L.f.links[1].gbps == 25);
	unload();
}

static void test_patterns(void)
{
	CHECK(load("fabric = { kind = \"leaf-spine\"; leaves = 2; spines = 1; hosts_per_leaf = 3; };\n"
		   "traffic = { pattern = \"incast\"; hosts = [\"h0\", \"h1\", \"h4\"]; dst = \"h4\"; };\n") == 0);
	CHECK_EQ(H.L.pattern.kind, FAB_PAT_INCAST);
	CHECK_EQ(H.L.pattern.n_hosts, 3);
	CHECK_EQ(H.L.pattern.dst, 4);
	unload();
	CHECK(load("fabric = { kind = \"leaf-spine\"; leaves = 2; spines = 1; hosts_per_leaf = 3; };\n"
		   "traffic = { pattern = \"pairs\"; pairs = ( [\"h0\", \"h5\"], [\"h2\", \"h3\"] ); };\n") == 0);
	CHECK_EQ(H.L.pattern.n_pairs, 2);
	CHECK(H.L.pattern.pairs[1].src == 2 && H.L.pattern.pairs[1].dst == 3);
	unload();
}

struct bad {
	const char *name, *text;
	unsigned line;
	const char *setting, *what;
};

#define LS "fabric = { kind = \"leaf-spine\"; leaves = 2; spines = 1; hosts_per_leaf = 2;\n"
#define CUSTOM(links) "fabric = { kind = \"custom\"; switches = ( { name = \"s0\"; }, { name = \"s1\"; } );\n" \
	"  hosts = [\"h0\", \"h1\"];\n  links = ( " links " ); };\n"

static const struct bad bads[] = {
	{ "no kind", "fabric = { leaves = 2; };\n", 1, "fabric.kind", "missing" },
	{ "unknown kind", "fabric = { kind = \"torus\"; };\n", 1, "fabric.kind", "leaf-spine" },
	{ "unknown setting", "fabric = { kind = \"rail\"; hosts = 2; rails = 1; spines = 1; speed = 1; };\n", 1,
	  "fabric.speed", "" },
	{ "size of another kind", "fabric = { kind = \"rail\"; hosts = 2; rails = 2; spines = 1;\n leaves = 4; };\n", 2,
	  "fabric.leaves", "not a setting of a rail fabric" },
	{ "rate of 0", LS " host_gbps = 0; };\n", 2, "fabric.host_gbps", "" },
	{ "odd k", "fabric = { kind = \"fat-tree\"; k = 5; };\n", 1, "fabric.k", "even" },
	{ "bad subnet", LS " subnet = \"198.18.0.1/15\"; };\n", 2, "fabric.subnet", "host bits set" },
	{ "more hosts than addresses", "fabric = { kind = \"leaf-spine\"; leaves = 8; spines = 1; hosts_per_leaf = 30;\n"
	  " subnet = \"10.0.0.0/24\"; };\n", 2, "fabric.subnet", "more hosts than addresses" },
	{ "unknown switch override", LS " switches = ( { name = \"spine9\"; load_balance = \"spray\"; } ); };\n", 2,
	  "fabric.switches.[0].name", "no switch spine9" },
	{ "unknown hash field", LS " hash = { fields = [\"ttl\"]; }; };\n", 2, "fabric.hash.fields.[0]", "src_ip" },
	{ "link to an unknown switch", CUSTOM("{ a = \"s0\"; b = \"h0\"; }, { a = \"s1\"; b = \"h1\"; },\n"
					      "    { a = \"s0\"; b = \"s7\"; }"), 4, "fabric.links.[2]",
	  "s7 is neither a switch nor a host" },
	{ "routes cannot reach a host", CUSTOM("{ a = \"s0\"; b = \"h0\"; }, { a = \"s1\"; b = \"h1\"; }"), 3,
	  "fabric.links", "has no route to" },
	{ "host without a link", CUSTOM("{ a = \"s0\"; b = \"h0\"; }"), 2, "fabric.hosts", "h1 has no link" },
	{ "two hosts linked", CUSTOM("{ a = \"s0\"; b = \"h0\"; }, { a = \"s1\"; b = \"h1\"; }, { a = \"h0\"; b = \"h1\"; }"), 3,
	  "fabric.links.[2]", "joins two hosts" },
	{ "tier of a built switch", LS " switches = ( { name = \"leaf0\"; tier = \"core\"; } ); };\n", 2,
	  "fabric.switches.[0].tier", "gives its switches' tiers" },
	{ "pattern host unknown", LS " };\ntraffic = { pattern = \"ring\"; hosts = [\"h0\", \"h9\"]; };\n", 3,
	  "traffic.hosts.[1]", "'h9' is not a host" },
	{ "incast without dst", LS " };\ntraffic = { pattern = \"incast\"; };\n", 3, "traffic.dst", "missing" },
	{ "seed of a ring", LS " };\ntraffic = { pattern = \"ring\"; seed = 3; };\n", 3, "traffic.seed",
	  "only a permutation" },
	{ "rail beyond the NICs", LS " };\ntraffic = { pattern = \"ring\"; rail = 1; };\n", 3, "traffic.rail",
	  "have 1 NIC" },
	{ "pair to itself", LS " };\ntraffic = { pattern = \"pairs\"; pairs = ( [\"h1\", \"h1\"] ); };\n", 3,
	  "traffic.pairs.[0]", "itself" },
};

static void test_broken(void)
{
	bool show = getenv("SHOW_ERRORS") != NULL;

	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		const struct bad *b = &bads[i];
		char want[160];
		int rc = load(b->text);

		snprintf(want, sizeof(want), NAME ":%u: %s: ", b->line, b->setting);
		if (show)
			printf("  %s: %s\n", b->name, err);
		if (rc == 0 || strncmp(err, want, strlen(want)) || !strstr(err, b->what)) {
			printf("  %s: got '%s' (rc %d), want '%s...%s'\n", b->name, err, rc, want, b->what);
			CHECK(0);
		}
		if (rc == 0)
			unload();
		else
			free(H.L.pattern.hosts), fab_routes_free(&H.L.routes), fabric_free(&H.L.f), fab_spec_free(&H.L.spec);
	}
}

/* fabric.external.link_command filled in: every {link} and {state}, nothing else touched, and
 * -1 rather than a cut command when the result does not fit. */
static void test_link_command(void)
{
	char out[64];

	CHECK(cfab_link_command("ip -n lf-x link set {link} {state}; echo {link}{lin}", "leaf0-spine1", "down", out,
				sizeof(out)) == 0);
	CHECK(!strcmp(out, "ip -n lf-x link set leaf0-spine1 down; echo leaf0-spine1{lin}"));
	CHECK(cfab_link_command("{state}", "l", "up", out, 3) == 0 && !strcmp(out, "up"));
	CHECK(cfab_link_command("{state}", "l", "up", out, 2) == -1);       /* "up" and its NUL need 3 */
	CHECK(cfab_link_command("", "l", "up", out, 1) == 0 && !out[0]);
}

/* Any command template's placeholders (roce-suite's balance_command: {mode}, {gap_us}): each
 * named one, however often; an unnamed one, a brace left open, a name's prefix untouched. */
static void test_fill(void)
{
	static const char *const names[] = { "mode", "gap_us" };
	const char *const values[] = { "flowlet", "50" };
	char out[64];

	CHECK(cfab_fill("sw {mode} {gap_us} {gap} {mode}{ {gap_us", names, values, 2, out, sizeof(out)) == 0);
	CHECK(!strcmp(out, "sw flowlet 50 {gap} flowlet{ {gap_us"));
	CHECK(cfab_fill("{mode}", names, values, 2, out, 8) == 0 && !strcmp(out, "flowlet"));
	CHECK(cfab_fill("{mode}", names, values, 2, out, 7) == -1);        /* 7 characters and the NUL */
	CHECK(cfab_fill("{mode}", names, values, 0, out, sizeof(out)) == 0 && !strcmp(out, "{mode}"));
}

int main(void)
{
	RUN(test_kinds);
	RUN(test_patterns);
	RUN(test_broken);
	RUN(test_link_command);
	RUN(test_fill);
	return testlib_finish("test_config_fabric");
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * @include in configuration files (config/config_read.c): a file is found beside the file that
 * names it, as C's #include "FILE" is, however deep and from whatever folder the program runs;
 * a message about a setting, a syntax error or a literal in an included file names that file and
 * its own line; lines after an include keep their own numbers; a file that includes itself, one
 * that is missing, too deep a chain and a malformed directive are errors at the @include line.
 * Files are written into a temporary folder; the program runs from another one.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "testlib.h"

static char dir[64];
static struct engine_config cfg;
static char err[1024];

/* dir/NAME with that text (folders made as needed). */
static void file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (char *s = strchr(path + strlen(dir) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int load(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	memset(err, 0, sizeof(err));
	return config_load(path, &cfg, err, sizeof(err));
}

/* err is "DIR/<rest>" exactly */
static void want_err(const char *fmt, ...)
{
	char rest[700], want[800];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rest, sizeof(rest), fmt, ap);
	va_end(ap);
	snprintf(want, sizeof(want), "%s/%s", dir, rest);
	if (strncmp(err, want, strlen(want))) {
		printf("  got  \"%s\"\n  want \"%s...\"\n", err, want);
		CHECK(0);
	}
}

#define PORTS                                                                                                   \
	"ports = ( { name = \"a\"; device = \"ring:x:a\"; ipv4 = \"10.0.0.1\"; link_speed_gbps = 100; },\n"      \
	"          { name = \"b\"; device = \"ring:x:b\"; ipv4 = \"10.0.0.2\"; link_speed_gbps = 100; } );\n"
#define ROLES "lcores = ( { lcore = 1; port = \"a\"; role = \"tx\"; }, { lcore = 1; port = \"b\"; role = \"rx\"; } );\n"
#define FLOW(x)                                                                                                  \
	"flows = ( { name = \"f\"; port = \"a\"; dst_mac = \"02:00:00:00:00:02\"; dst_ip = \"10.0.0.2\"; qpn = 0x100; " \
	"dest_qpn = 0x200; " x " } );\n"

/* top.cfg includes lab/ports.cfg, which includes roles/roles.cfg beside itself (lab/roles/):
 * every name is relative to the file that has it, not to the top file or the working folder. */
static void test_nested_from_subfolders(void)
{
	file("top.cfg", "# the lab's hosts and roles\n@include \"lab/ports.cfg\"\n" FLOW("rate_gbps = 2;"));
	file("lab/ports.cfg", PORTS "  @include \"roles/roles.cfg\"   # the roles beside it\n");
	file("lab/roles/roles.cfg", "eal = { lcores = \"0-1\"; };\n" ROLES);
	CHECK_EQ(load("top.cfg"), 0);
	if (err[0])
		printf("  %s\n", err);
	CHECK_EQ(cfg.n_ports, 2);
	CHECK_EQ(cfg.n_roles, 2);
	CHECK_EQ(cfg.n_groups, 1);
	CHECK(cfg.groups[0].rate_gbps == 2);
	CHECK_EQ(cfg.src.n_files, 3);
}

static void test_errors_name_the_included_file_and_its_line(void)
{
	char where[CR_AT_LEN];

	/* a setting: line 2 of lab/ports2.cfg */
	file("lab/ports2.cfg", "ports = ( { name = \"a\"; device = \"ring:x:a\"; ipv4 = \"10.0.0.1\"; link_speed_gbps = 100; },\n"
			      "          { name = \"b\"; device = \"ring:x:b\"; ipv4 = \"10.0.0.2\"; mtu = 99999; } );\n");
	file("e1.cfg", "eal = { lcores = \"0-1\"; };\n@include \"lab/ports2.cfg\"\n" ROLES);
	CHECK_EQ(load("e1.cfg"), -1);
	want_err("lab/ports2.cfg:2: ports.[1].mtu: 99999 is out of range (576..9000)");
	/* lines of the top file after the include keep their numbers: line 3 */
	file("e2.cfg", "@include \"lab/ports.cfg\"\n\nflows = ( { name = \"f\"; port = \"a\"; } );\n");
	CHECK_EQ(load("e2.cfg"), -1);
	want_err("e2.cfg:3: flows.[0].dst_mac: missing");
	/* a syntax error in an included file */
	file("lab/syntax.cfg", "run = {\n  duration_s = 10s;\n};\n");
	file("e3.cfg", "@include \"lab/ports.cfg\"\n@include \"lab/syntax.cfg\"\n");
	CHECK_EQ(load("e3.cfg"), -1);
	want_err("lab/syntax.cfg:2: syntax error: found '10s' where a value was expected: numbers take no unit suffix");
	/* a literal libconfig 1.5 would wrap, in an included file */
	file("lab/big.cfg", "run = {\n  capture_every = 4294967298; };\n");
	file("e4.cfg", "@include \"lab/ports.cfg\"\n@include \"lab/big.cfg\"\n");
	CHECK_EQ(load("e4.cfg"), -1);
	want_err("lab/big.cfg:2: run.capture_every: 4294967298 does not fit a 32-bit integer");
	/* a comment left open in an included file */
	file("lab/open.cfg", "# fine\n/* not closed\n");
	file("e5.cfg", "@include \"lab/open.cfg\"\n" PORTS ROLES);
	CHECK_EQ(load("e5.cfg"), -1);
	want_err("lab/open.cfg:2: syntax error: unterminated comment");
	/* "also at": a setting in another file is named with its file */
	file("e6.cfg", "@include \"lab/ports.cfg\"\nflows = ( { name = \"f\"; port = \"a\"; dst_mac = \"02:00:00:00:00:02\"; "
		       "dst_ip = \"10.0.0.2\"; qpn = 0x100; dest_qpn = 0x200; },\n { name = \"f\"; } );\n");
	CHECK_EQ(load("e6.cfg"), -1);
	want_err("e6.cfg:3: flows.[1].name: duplicate flow name 'f' (also at %s/e6.cfg:2;", dir);
	/* what the engine says after loading (config_where) maps the same way */
	CHECK_EQ(load("top.cfg"), 0);
	config_where(&cfg, cfg.ports[1].line, where, sizeof(where));
	CHECK(strstr(where, "/lab/ports.cfg:2") != NULL && !strncmp(where, dir, strlen(dir)));
	config_where(&cfg, cfg.groups[0].line, where, sizeof(where));
	CHECK(strstr(where, "/top.cfg:3") != NULL);
	config_where(&cfg, cfg.roles[0].line, where, sizeof(where));
	CHECK(strstr(where, "/lab/roles/roles.cfg:2") != NULL);
}

/* An include inside a group: the block becomes the group's settings. */
static void test_include_inside_a_group(void)
{
	file("blocks/run.cfg", "duration_s = 3.0;\nstats_interval_s = 0.5;");
	file("g.cfg", PORTS ROLES "eal = { lcores = \"0-1\"; };\nrun = {\n  @include \"blocks/run.cfg\"\n  report = \"r.json\";\n};\n");
	CHECK_EQ(load("g.cfg"), 0);
	if (err[0])
		printf("  %s\n", err);
	CHECK(cfg.duration_s == 3.0 && cfg.stats_interval_s == 0.5 && !strcmp(cfg.report, "r.json"));
}

static void test_include_errors(void)
{
	file("m.cfg", PORTS "@include \"nowhere/roles.cfg\"\n");
	CHECK_EQ(load("m.cfg"), -1);
	want_err("m.cfg:3: @include: cannot read %s/nowhere/roles.cfg: No such file or directory", dir);
	file("c1.cfg", "@include \"c2.cfg\"\n");
	file("c2.cfg", "\n@include \"c1.cfg\"\n");
	CHECK_EQ(load("c1.cfg"), -1);
	want_err("c2.cfg:2: @include: %s/c1.cfg includes itself (%s/c1.cfg -> %s/c2.cfg -> %s/c1.cfg)", dir, dir, dir, dir);
	file("self.cfg", "@include \"self.cfg\"\n");
	CHECK_EQ(load("self.cfg"), -1);
	want_err("self.cfg:1: @include: %s/self.cfg includes itself", dir);
	for (int i = 0; i < 12; i++) { /* d0 includes d1 ... d10 (10 levels); d10's d11 is one too many */
		char n[32], t[64];

		snprintf(n, sizeof(n), "d%d.cfg", i);
		snprintf(t, sizeof(t), "@include \"d%d.cfg\"\n", i + 1);
		file(n, i == 11 ? PORTS : t);
	}
	CHECK_EQ(load("d0.cfg"), -1);
	want_err("d10.cfg:1: @include: more than 10 files deep");
	file("f1.cfg", "@include lab/ports.cfg\n");
	CHECK_EQ(load("f1.cfg"), -1);
	want_err("f1.cfg:1: @include: expected @include \"FILE\" alone on its line");
	file("f2.cfg", "@include \"lab/ports.cfg\" ROLES\n");
	CHECK_EQ(load("f2.cfg"), -1);
	want_err("f2.cfg:1: @include: expected @include \"FILE\" alone on its line");
	file("f3.cfg", "@include \"lab\"\n");
	CHECK_EQ(load("f3.cfg"), -1);
	want_err("f3.cfg:1: @include: %s/lab: cannot read: Is a directory", dir);
	/* text in memory has no folder */
	CHECK_EQ(config_load_string("@include \"x.cfg\"\n", "t.cfg", &cfg, err, sizeof(err)), -1);
	CHECK(!strcmp(err, "t.cfg:1: @include: not for a configuration given as text (no folder to find x.cfg in)"));
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_config_include.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	if (chdir("/")) /* nothing may be found from the working folder */
		return 1;
	RUN(test_nested_from_subfolders);
	RUN(test_errors_name_the_included_file_and_its_line);
	RUN(test_include_inside_a_group);
	RUN(test_include_errors);
	if (!testlib_failed) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			printf("  could not remove %s\n", dir);
	}
	return testlib_finish("test_config_include");
}

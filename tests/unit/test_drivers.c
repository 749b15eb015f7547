/* SPDX-License-Identifier: BSD-3-Clause
 *
 * pmd_glue/drivers.c: the vdev drivers read from object files, as EAL would load them. Made-up
 * objects in a temporary folder (the real DPDK's list is checked against dpdk-pmdinfo.py in
 * tests/integration/test_config_check.py).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drivers.h"
#include "testlib.h"

/* '=' at run time: this program is scanned too (as the running program), and a whole marker
 * in its own .rodata would read as a driver of its own. */
static volatile char eq = '=';
static char dir[64];

static void object(const char *name, const char *json1, const char *json2)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "\x7f" "ELF junk%cPMD_INFO_STRING%c %s%c", 0, eq, json1, 0);
	if (json2)
		fprintf(f, "more%cPMD_INFO_STRING%c%s%c", 0, eq, json2, 0);
	fclose(f);
}

static void make_objects(void)
{
	char link[128];

	snprintf(dir, sizeof(dir), "/tmp/test_drivers.XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	object("librte_net_fake.so.23.0", "{\"name\": \"net_fake\", \"params\": \"x=<int>\", \"pci_ids\": []}",
	       "{\"name\": \"net_fakepci\", \"params\": \"\", \"pci_ids\": [[5549, 4096, 65535, 65535]]}");
	/* DPDK 20.11's layout, spaces around the colons */
	object("librte_net_old.so", "{\"name\" : \"net_old\", \"kmod\" : \"*\", \"pci_ids\" : [ ]}", NULL);
	object("notes.txt", "{\"name\": \"net_notes\", \"pci_ids\": []}", NULL); /* not a .so: EAL skips it */
	object("librte_crypto_x.so", "{\"name\": \"crypto_x\", \"pci_ids\": []}", NULL); /* not an ethdev */
	object("broken.so", "{\"name\": \"net_broken", NULL);                             /* cut short */
	snprintf(link, sizeof(link), "%s/librte_net_fake.so", dir); /* one file under two names */
	CHECK(symlink("librte_net_fake.so.23.0", link) == 0);
}

static void remove_objects(void)
{
	static const char *const names[] = { "librte_net_fake.so.23.0", "librte_net_fake.so", "librte_net_old.so",
					      "notes.txt", "librte_crypto_x.so", "broken.so" };
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

static struct pmd_drivers d;

static void test_folder(void)
{
	char buf[512];

	memset(&d, 0, sizeof(d));
	pmd_drivers_add_path(&d, dir);
	CHECK_EQ(d.n, 2);
	CHECK(!strcmp(d.name[0], "net_fake") && !strcmp(d.name[1], "net_old"));
	CHECK_EQ(d.files, 4); /* the two .so names of one file read once; notes.txt not at all */
	CHECK(!strcmp(pmd_drivers_match(&d, "net_fake0") ? pmd_drivers_match(&d, "net_fake0") : "", "net_fake"));
	CHECK(!strcmp(pmd_drivers_match(&d, "net_old_1") ? pmd_drivers_match(&d, "net_old_1") : "", "net_old"));
	CHECK(pmd_drivers_match(&d, "net_fakepci0") != NULL); /* EAL's vdev bus: net_fake begins it */
	CHECK(pmd_drivers_match(&d, "net_foo0") == NULL);
	CHECK(pmd_drivers_match(&d, "net_notes0") == NULL);
	CHECK(pmd_drivers_match(&d, "net_fak") == NULL);
	pmd_drivers_describe(&d, buf, sizeof(buf));
	CHECK(!strcmp(buf, "net_fake, net_old; read from the program, its DPDK libraries"));
}

static void test_d_options(void)
{
	char file[128], opt[140], buf[512];
	const char *sep[] = { "-v", "-d", dir };
	const char *joined[] = { opt };

	/* this test program is not linked with DPDK: only the -d options' drivers */
	pmd_drivers_find(&d, sep, 3);
	CHECK(pmd_drivers_match(&d, "net_old0") != NULL && pmd_drivers_match(&d, "net_fake0") != NULL);
	CHECK_EQ(d.d_options, 1);
	CHECK(!d.plugin_dir[0]);
	pmd_drivers_describe(&d, buf, sizeof(buf));
	CHECK(strstr(buf, "and the -d options") != NULL);
	snprintf(file, sizeof(file), "%s/librte_net_old.so", dir);
	snprintf(opt, sizeof(opt), "-d%s", file);
	pmd_drivers_find(&d, joined, 1);
	CHECK(pmd_drivers_match(&d, "net_old0") != NULL && pmd_drivers_match(&d, "net_fake0") == NULL);
	pmd_drivers_find(&d, sep, 2); /* "-d" without its path */
	CHECK_EQ(d.n, 0);
	CHECK_EQ(d.d_options, 0);
}

int main(void)
{
	make_objects();
	RUN(test_folder);
	RUN(test_d_options);
	remove_objects();
	return testlib_finish("test_drivers");
}

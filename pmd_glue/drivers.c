/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The vdev drivers of the program's DPDK, read from the object files EAL would load (drivers.h).
 */
#include "drivers.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

/* The markers end in an '=' read at run time: as whole literals they would be in this
 * program's .rodata, where dpdk-pmdinfo.py would take them for a driver's and for librte_eal's
 * plugin path (an empty one, which ends its search). */
static volatile char equals = '=';

/* Past spaces and one expected character, or NULL. */
static const char *expect(const char *p, const char *end, char c)
{
	while (p < end && isspace((unsigned char)*p))
		p++;
	return p < end && *p == c ? p + 1 : NULL;
}

/* The string value of "key" in the JSON object [p, end), copied into out; NULL if absent. */
static const char *json_value(const char *p, const char *end, const char *key)
{
	size_t kl = strlen(key);

	for (; p + kl + 2 <= end; p++)
		if (*p == '"' && !memcmp(p + 1, key, kl) && p[kl + 1] == '"')
			return expect(p + kl + 2, end, ':');
	return NULL;
}

/* Into the sorted list, once. */
static void add_name(struct pmd_drivers *d, const char *name, size_t len)
{
	char n[PMD_DRIVER_NAME_LEN];
	unsigned i = 0;

	if (len == 0 || len >= sizeof(n))
		return;
	memcpy(n, name, len);
	n[len] = '\0';
	while (i < d->n && strcmp(d->name[i], n) < 0)
		i++;
	if ((i < d->n && !strcmp(d->name[i], n)) || d->n == PMD_DRIVERS_MAX)
		return;
	memmove(d->name[i + 1], d->name[i], (d->n - i) * sizeof(d->name[0]));
	memcpy(d->name[i], n, len + 1);
	d->n++;
}

/* One "PMD_INFO_STRING= {...}" (text up to its NUL at end): a vdev driver is one without PCI ids. */
static void pmd_info(struct pmd_drivers *d, const char *p, const char *end)
{
	const char *name, *ids, *q;

	if (!(p = expect(p, end, '{')) || !(name = json_value(p, end, "name")) || !(name = expect(name, end, '"')))
		return;
	for (q = name; q < end && *q != '"'; q++)
		;
	if (q == end || !(ids = json_value(p, end, "pci_ids")) || !(ids = expect(ids, end, '[')))
		return;
	if (expect(ids, end, ']') && !strncmp(name, "net_", 4))
		add_name(d, name, (size_t)(q - name));
}

static bool seen(struct pmd_drivers *d, const struct stat *st)
{
	unsigned n = d->files < 512 ? d->files : 512;

	for (unsigned i = 0; i < n; i++)
		if (d->seen_dev[i] == (unsigned long long)st->st_dev && d->seen_ino[i] == (unsigned long long)st->st_ino)
			return true;
	if (d->files < 512) {
		d->seen_dev[d->files] = (unsigned long long)st->st_dev;
		d->seen_ino[d->files] = (unsigned long long)st->st_ino;
	}
	d->files++;
	return false;
}

/* Reads one object file: its drivers, and the plugin directory when it is librte_eal. */
static void scan_file(struct pmd_drivers *d, const char *path, bool want_plugin_dir)
{
	char info_mark[32], plugin_mark[32];
	size_t ml = (size_t)snprintf(info_mark, sizeof(info_mark), "PMD_INFO_STRING%c", equals);
	size_t pl = (size_t)snprintf(plugin_mark, sizeof(plugin_mark), "DPDK_PLUGIN_PATH%c", equals);
	struct stat st;
	const char *map, *p, *end;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size == 0 || seen(d, &st)) {
		close(fd);
		return;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return;
	end = map + st.st_size;
	for (p = map; (p = memmem(p, (size_t)(end - p), info_mark, ml)); p += ml) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));

		pmd_info(d, p + ml, nul ? nul : end);
	}
	if (want_plugin_dir && !d->plugin_dir[0] && (p = memmem(map, (size_t)st.st_size, plugin_mark, pl))) {
		const char *nul = memchr(p + pl, '\0', (size_t)(end - p - pl));

		if (nul && (size_t)(nul - p - pl) < sizeof(d->plugin_dir))
			memcpy(d->plugin_dir, p + pl, (size_t)(nul - p - pl) + 1);
	}
	munmap((void *)map, (size_t)st.st_size);
}

/* Every "*.so" or "*.so.*" file of a folder, as EAL's plugin loader takes them. */
static void scan_dir(struct pmd_drivers *d, const char *dir)
{
	char path[4096];
	struct dirent *de;
	DIR *dd = opendir(dir);

	if (!dd)
		return;
	while ((de = readdir(dd)) != NULL) {
		size_t n = strlen(de->d_name);

		if ((n > 3 && !strcmp(de->d_name + n - 3, ".so")) || strstr(de->d_name, ".so.")) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			scan_file(d, path, false);
		}
	}
	closedir(dd);
}

void pmd_drivers_add_path(struct pmd_drivers *d, const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		scan_dir(d, path);
	else
		scan_file(d, path, false);
}

struct loaded {
	struct pmd_drivers *d;
	bool shared;              /* librte_eal.so is one of the loaded objects */
};

static int each_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct loaded *l = arg;
	const char *base = strrchr(info->dlpi_name, '/') ? strrchr(info->dlpi_name, '/') + 1 : info->dlpi_name;

	(void)size;
	if (!info->dlpi_name[0]) { /* the program itself */
		scan_file(l->d, "/proc/self/exe", true);
		return 0;
	}
	if (strncmp(base, "librte_", 7))
		return 0; /* libc, libibverbs, ...: no DPDK driver there */
	l->shared |= !strncmp(base, "librte_eal.so", 13);
	scan_file(l->d, info->dlpi_name, true);
	return 0;
}

void pmd_drivers_find(struct pmd_drivers *d, const char *const args[], unsigned n_args)
{
	struct loaded l = { .d = d };

	memset(d, 0, sizeof(*d));
	dl_iterate_phdr(each_object, &l);
	if (!l.shared)
		d->plugin_dir[0] = '\0'; /* EAL loads plugins in shared builds only */
	else if (d->plugin_dir[0])
		pmd_drivers_add_path(d, d->plugin_dir);
	for (unsigned i = 0; i < n_args; i++) {
		const char *path = !strcmp(args[i], "-d") && i + 1 < n_args ? args[++i]
				   : !strncmp(args[i], "-d", 2) && args[i][2] ? args[i] + 2 : NULL;

		if (path) {
			pmd_drivers_add_path(d, path);
			d->d_options++;
		}
	}
}

const char *pmd_drivers_match(const struct pmd_drivers *d, const char *device)
{
	for (unsigned i = 0; i < d->n; i++)
		if (!strncmp(device, d->name[i], strlen(d->name[i])))
			return d->name[i];
	return NULL;
}

void pmd_drivers_describe(const struct pmd_drivers *d, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < d->n && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", d->name[i]);
	if (n < len)
		snprintf(buf + n, len - n, "%sread from the program, its DPDK libraries%s%s%s", d->n ? "; " : "none ",
			 !d->plugin_dir[0] ? "" : d->d_options ? ", " : " and ", d->plugin_dir,
			 d->d_options ? " and the -d options" : "");
}

bool pmd_drivers_check_vdev(void *arg, const struct cfg_eal *eal, const char *device, char *why, size_t whylen)
{
	struct pmd_driver_check *c = arg;

	if (!c->found) {
		const char *extra[CFG_MAX_EAL_ARGS];

		for (unsigned i = 0; i < eal->n_extra; i++)
			extra[i] = eal->extra[i];
		if (c->args)
			pmd_drivers_find(&c->d, c->args, c->n_args);
		else
			pmd_drivers_find(&c->d, extra, eal->n_extra);
		c->found = true;
	}
	if (!c->d.n || pmd_drivers_match(&c->d, device))
		return true;
	pmd_drivers_describe(&c->d, why, whylen);
	return false;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Which vdev drivers the program's DPDK has, found without starting EAL, so that `--check` can
 * refuse a device no driver would probe (docs/config.md#device-names-and-drivers). EAL finds its
 * drivers in three places, and so does this module:
 *   - the program and the DPDK libraries it is linked with (a static DPDK build links every
 *     driver in; a shared one the drivers the program uses, such as librte_net_ring);
 *   - in a shared build (librte_eal.so is loaded), every .so in DPDK's plugin directory, whose
 *     path librte_eal itself carries as the string "DPDK_PLUGIN_PATH=..." (so it is the
 *     directory of the DPDK the program runs with, not of the headers it was built against);
 *   - the files and folders of EAL's -d options.
 * Each driver's object carries "PMD_INFO_STRING= {json}" (what dpdk-pmdinfo.py reads), with its
 * "name" and "pci_ids"; a vdev driver is one with no PCI ids. Plain C (libc, dl_iterate_phdr):
 * no EAL, no DPDK call.
 */
#ifndef ROCE_PMD_GLUE_DRIVERS_H
#define ROCE_PMD_GLUE_DRIVERS_H

#include <stdbool.h>
#include <stddef.h>

#define PMD_DRIVERS_MAX 128
#define PMD_DRIVER_NAME_LEN 32

struct pmd_drivers {
	unsigned n;
	char name[PMD_DRIVERS_MAX][PMD_DRIVER_NAME_LEN]; /* vdev drivers, sorted, each once */
	char plugin_dir[256];          /* the shared build's plugin directory, "" when none */
	unsigned files;                /* object files read */
	unsigned d_options;            /* -d options among the EAL arguments */
	unsigned long long seen_dev[512], seen_ino[512]; /* the files read, not to read one twice */
};

/* The vdev drivers of the running program, of its DPDK's plugin directory, and of the -d
 * options among the EAL arguments args[0..n_args) (either "-d", "PATH" or "-dPATH"). */
void pmd_drivers_find(struct pmd_drivers *d, const char *const args[], unsigned n_args);
/* Adds the vdev drivers of one object file, or of every .so file in a folder (as EAL's -d). */
void pmd_drivers_add_path(struct pmd_drivers *d, const char *path);
/* The driver EAL's vdev bus would give a device of this name (the one whose name begins it),
 * or NULL. */
const char *pmd_drivers_match(const struct pmd_drivers *d, const char *device);
/* "net_af_packet, net_null, ..." and where they were found, for messages. */
void pmd_drivers_describe(const struct pmd_drivers *d, char *buf, size_t len);

/* The check of config/config.h's config_env (arg: a struct pmd_driver_check). The drivers are
 * found at its first call, with the -d options of args[] when it has them (EAL options given on
 * the command line), else of the eal section's extra_args. A device is refused only when some
 * vdev driver was found and none takes it (a program whose files cannot be read is not judged). */
struct cfg_eal;
struct pmd_driver_check {
	const char *const *args;
	unsigned n_args;
	bool found;
	struct pmd_drivers d;
};
bool pmd_drivers_check_vdev(void *arg, const struct cfg_eal *eal, const char *device, char *why, size_t whylen);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * EAL's start and the engine's run in this process (launch.h).
 */
#include "launch.h"

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>

#include "out_file.h"

/* net_pcap opens its tx_pcap= file in EAL's probe: its folder is made first, as for the engine's own
 * output files (config/out_file.h), so a shipped config writing results/tx.pcap runs anywhere. */
static void make_pcap_dirs(const struct engine_config *cfg)
{
	for (unsigned i = 0; i < cfg->n_ports; i++) {
		const char *a = strstr(cfg->ports[i].vdev_args, "tx_pcap=");
		char path[PATH_MAX];
		size_t n;

		if (strncmp(cfg->ports[i].device, "net_pcap", 8) != 0 || !a)
			continue;
		a += strlen("tx_pcap=");
		n = strcspn(a, ",");
		if (n == 0 || n >= sizeof(path))
			continue;
		memcpy(path, a, n);
		path[n] = '\0';
		out_make_dirs(path); /* a failure is net_pcap's to report, naming the file */
	}
}

/* info and debug (7, 8): the user asked for EAL's chatter, telemetry's notes included. */
static bool log_level_verbose(const char *level)
{
	return !strcmp(level, "info") || !strcmp(level, "debug") || !strcmp(level, "7") || !strcmp(level, "8");
}

/* EAL's argument vector from the config's eal section and ports. PCI ports are allow-listed
 * (-a), unless extra_args do it with their devargs (EAL takes the first -a of a device), so that
 * EAL probes no other PCI device of the machine; without any, --no-pci. */
static int eal_args_from_config(const struct engine_config *cfg, char **argv, int max, char *store, size_t store_len)
{
	int argc = 0;
	size_t used = 0;
	bool pci = config_extra_allows_pci(&cfg->eal, NULL);

#define ARG(...)                                                                                    \
	do {                                                                                        \
		int n_ = snprintf(store + used, store_len - used, __VA_ARGS__);                     \
		if (argc >= max - 1 || n_ < 0 || (size_t)n_ >= store_len - used)                    \
			return -1;                                                                  \
		argv[argc++] = store + used;                                                        \
		used += (size_t)n_ + 1;                                                             \
	} while (0)

	ARG("roce-engine");
	ARG("%s", cfg->eal.lcores_map ? "--lcores" : "-l"); /* a map "0@0,1@0,2@1" is --lcores syntax */
	ARG("%s", cfg->eal.lcores);
	if (cfg->eal.main_lcore >= 0) {
		ARG("--main-lcore");
		ARG("%d", cfg->eal.main_lcore);
	}
	ARG("-m");
	ARG("%u", cfg->eal.memory_mb);
	if (!cfg->eal.huge_pages)
		ARG("--no-huge");
	ARG("--file-prefix");
	ARG("%s", cfg->eal.file_prefix);
	ARG("--log-level");
	ARG("%s", cfg->eal.log_level);
	if (!log_level_verbose(cfg->eal.log_level))
		ARG("--log-level=lib.telemetry:error"); /* "No legacy callbacks, legacy socket not created" */
	for (unsigned i = 0; i < cfg->n_ports; i++) {
		const struct cfg_port *p = &cfg->ports[i];
		if (strncmp(p->device, "ring:", 5) == 0) /* made by pmd_glue after EAL starts */
			continue;
		if (strncmp(p->device, "net_", 4) != 0) {
			pci = true;
			if (!config_extra_allows_pci(&cfg->eal, p->device)) {
				ARG("-a");
				ARG("%s", p->device);
			}
			continue;
		}
		ARG("--vdev");
		ARG("%s%s%s", p->device, p->vdev_args[0] ? "," : "", p->vdev_args);
	}
	if (!pci)
		ARG("--no-pci");
	for (unsigned i = 0; i < cfg->eal.n_extra; i++)
		ARG("%s", cfg->eal.extra[i]);
	argv[argc] = NULL;
	return argc;
#undef ARG
}

/* EAL leaves its runtime directory (/var/run/dpdk/PREFIX: memory maps, sockets) behind, in a
 * tmpfs: a test suite of many short runs would fill memory with them. Nothing uses it once EAL
 * has been cleaned up. */
static void remove_runtime_dir(const char *dir)
{
	char path[PATH_MAX + 256];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

static void on_signal(int sig)
{
	(void)sig;
	engine_request_stop();
}

/* SIGINT, SIGTERM and SIGHUP (a closed terminal or an ssh session that ends) all stop the run
 * cleanly and leave the report. Installed first thing, so that a signal during the configuration's
 * loading or EAL's start-up stops the run before any traffic instead of killing the process; a
 * second signal only cuts the final drain short (the report is still written whole). */
void launch_install_signal_handlers(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&sa.sa_mask, sigs[i]); /* one handler at a time */
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* Before rte_eal_init, whose getopt may reorder the vector. */
static void eal_line_of(struct launch_eal *eal)
{
	eal->line[0] = '\0';
	for (int i = 1, n = 0; i < eal->argc && n < (int)sizeof(eal->line); i++)
		n += snprintf(eal->line + n, sizeof(eal->line) - (size_t)n, " %s", eal->argv[i]);
}

int launch_eal_from_config(const struct engine_config *cfg, struct launch_eal *eal)
{
	eal->argc = eal_args_from_config(cfg, eal->argv, LAUNCH_MAX_EAL_ARGS, eal->store, sizeof(eal->store));
	if (eal->argc < 0)
		return -1;
	eal_line_of(eal);
	return 0;
}

int launch_eal_from_argv(int argc, char **argv, struct launch_eal *eal)
{
	if (argc >= LAUNCH_MAX_EAL_ARGS)
		return -1;
	eal->argc = argc;
	memcpy(eal->argv, argv, sizeof(char *) * (size_t)argc);
	eal->argv[argc] = NULL;
	eal_line_of(eal);
	return 0;
}

struct engine_options launch_options_of(const struct engine_config *cfg)
{
	return (struct engine_options){ .duration_s = cfg->duration_s,
					.stats_interval_s = cfg->stats_interval_s > 0 ? cfg->stats_interval_s : 1.0,
					.report_path = cfg->report[0] ? cfg->report : NULL };
}

int launch_engine(const struct engine_config *cfg, const struct engine_options *opt, struct launch_eal *eal)
{
	char runtime_dir[PATH_MAX];
	int rc;

	make_pcap_dirs(cfg);
	if (rte_eal_init(eal->argc, eal->argv) < 0) {
		fprintf(stderr, "roce-engine: EAL initialisation failed (see DPDK's message above) with the arguments:%s\n",
			eal->line);
		return ENGINE_EXIT_INIT;
	}
	rc = engine_run(cfg, opt);
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	remove_runtime_dir(runtime_dir);
	return rc;
}

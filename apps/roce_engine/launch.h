/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Starting the engine in this process, once a configuration is loaded: EAL's arguments (from the
 * config's eal section and ports, or as given on the command line), EAL's start, engine_run, and
 * EAL's clean-up. Shared by roce-engine's own command line (main.c) and its perftest modes
 * (perftest.c, which run it in a child process per size: EAL starts only once per process).
 */
#ifndef ROCE_ENGINE_LAUNCH_H
#define ROCE_ENGINE_LAUNCH_H

#include "config.h"
#include "engine.h"

#define LAUNCH_MAX_EAL_ARGS (CFG_MAX_EAL_ARGS + 3 * CFG_MAX_PORTS + 32)
#define LAUNCH_EAL_STORE 16384

/* EAL's argument vector and, for messages, the same on one line. */
struct launch_eal {
	int argc;
	char *argv[LAUNCH_MAX_EAL_ARGS];
	char store[LAUNCH_EAL_STORE];   /* the strings argv points at, when made from a config */
	char line[LAUNCH_EAL_STORE];    /* " -l 0-1 --vdev ...": every argument after argv[0] */
};

/* SIGINT, SIGTERM and SIGHUP stop the engine cleanly (engine_request_stop); installed before the
 * configuration is read, so that an early signal stops the run before any traffic. */
void launch_install_signal_handlers(void);

/* EAL's arguments from the config: its eal section, one --vdev per virtual port, -a per PCI port
 * (or --no-pci). 0, or -1 when they do not fit. */
int launch_eal_from_config(const struct engine_config *cfg, struct launch_eal *eal);
/* EAL's arguments as given (argv[0] the program; the vector is copied, not the strings). 0, or -1
 * when there are more than LAUNCH_MAX_EAL_ARGS - 1. */
int launch_eal_from_argv(int argc, char **argv, struct launch_eal *eal);

/* The run's options as the config's run section gives them (what `roce-engine -f CONFIG` runs
 * with no options): its duration, stats interval (default 1 s) and report; not quiet. */
struct engine_options launch_options_of(const struct engine_config *cfg);

/* Makes net_pcap's output folders, starts EAL, runs the engine and cleans EAL up (its runtime
 * directory too). Returns an enum engine_exit; messages on stderr, as roce-engine's. */
int launch_engine(const struct engine_config *cfg, const struct engine_options *opt, struct launch_eal *eal);

#endif

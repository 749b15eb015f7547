/* SPDX-License-Identifier: BSD-3-Clause
 *
 * roce-engine: send and receive RoCEv2 flows described in a configuration file.
 *
 *   roce-engine -f CONFIG [options]                 EAL settings from the config's eal section
 *   roce-engine [EAL options] -- -f CONFIG [options] EAL settings from the command line
 *   roce-engine write_bw|write_lat|send_bw|send_lat|read_bw|read_lat [flags]
 *                                                    perftest-style tests (perftest.c)
 *   roce-engine --version
 *
 * The configuration is loaded and validated completely before EAL starts anything.
 */
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_version.h>

#include "config.h"
#include "drivers.h"
#include "engine.h"
#include "out_file.h"
#include "perftest.h"
#include "roce_version.h"
#include "run_info.h"

struct cli {
	const char *config;
	struct engine_options opt;
	bool duration_set, interval_set, check_only;
	const char *report;
	const char *latency_samples;
	const char *capture;
	double sample_every;       /* 0: the config's */
	bool http_set;             /* --http: listen there (parsed into the fields below) */
	char http_addr[64];
	uint16_t http_port;
	double http_linger_s;      /* --http-linger; < 0: the config's */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: roce-engine -f CONFIG [options]\n"
		"       roce-engine [EAL options] -- -f CONFIG [options]\n"
		"       roce-engine write_bw|write_lat|send_bw|send_lat|read_bw|read_lat [flags]\n"
		"                  perftest-style tests (docs/perftest.md; 'roce-engine write_bw -h')\n"
		"\n"
		"Without '--', EAL's settings come from the config's eal section (lcores, memory,\n"
		"--no-huge, file prefix, log level) and its ports (one --vdev per virtual device).\n"
		"\n"
		"options:\n"
		"  -f, --config FILE          configuration (libconfig syntax, docs/config.md); required\n"
		"  -d, --duration SECONDS     stop after this long (0: when every flow has stopped);\n"
		"                             overrides run.duration_s\n"
		"  -r, --report FILE.json     write the JSON report there (docs/report.md); overrides run.report\n"
		"  -i, --stats-interval SEC   live statistics period, default 1; overrides run.stats_interval_s\n"
		"  -S, --latency-samples FILE.csv\n"
		"                             write raw latency samples there (docs/latency.md); overrides\n"
		"                             run.latency_samples\n"
		"      --latency-sample-every N  one sample in N to that file; overrides run.latency_sample_every\n"
		"      --capture FILE.pcapng  capture the frames sent and received (docs/monitoring.md); overrides\n"
		"                             run.capture (run.capture_every / _snaplen / _ports sample it)\n"
		"      --http [ADDRESS:]PORT  serve Prometheus /metrics and the live dashboard there (default address\n"
		"                             127.0.0.1; docs/monitoring.md); overrides run.http\n"
		"      --http-linger SECONDS  after the run, serve the final numbers this long; overrides\n"
		"                             run.http_linger_s\n"
		"  -q, --quiet                no live lines (the summary is still printed)\n"
		"  -c, --check                validate the configuration, print what would run, and exit\n"
		"  -h, --help                 this text\n"
		"      --version              print the version (and DPDK's) and exit\n"
		"\n"
		"Ctrl-C, SIGTERM or SIGHUP stops the lcores, drains the queues and still writes the report\n"
		"(a second signal cuts the drain short).\n"
		"exit status: 0 ran and wrote its report, 2 bad command line, 3 configuration rejected,\n"
		"             4 EAL or port set-up failed, 5 report not written, 6 an SLA check failed\n");
}

/* One line, without EAL: the project's version, git describe of the build, DPDK's version. */
static void print_version(void)
{
	printf("roce-engine %s, %s\n", roce_version_string(), rte_version());
}

static int parse_number(const char *s, double min, double max, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_cli(int argc, char **argv, struct cli *c)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'f'}, {"duration", required_argument, NULL, 'd'},
		{"report", required_argument, NULL, 'r'}, {"stats-interval", required_argument, NULL, 'i'},
		{"quiet", no_argument, NULL, 'q'},        {"check", no_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},         {"latency-samples", required_argument, NULL, 'S'},
		{"latency-sample-every", required_argument, NULL, 'E'}, {"capture", required_argument, NULL, 'C'},
		{"http", required_argument, NULL, 'H'},   {"http-linger", required_argument, NULL, 'L'},
		{"version", no_argument, NULL, 'V'},      {NULL, 0, NULL, 0},
	};
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "f:d:r:i:S:qch", opts, NULL)) != -1) {
		switch (ch) {
		case 'f': c->config = optarg; break;
		case 'r': c->report = optarg; break;
		case 'S': c->latency_samples = optarg; break;
		case 'C': c->capture = optarg; break;
		case 'H': {
			char why[160];
			if (config_parse_listen(optarg, c->http_addr, sizeof(c->http_addr), &c->http_port, why, sizeof(why))) {
				fprintf(stderr, "roce-engine: --http: %s\n", why);
				return -1;
			}
			c->http_set = true;
			break;
		}
		case 'L':
			if (parse_number(optarg, 0, 3600, &c->http_linger_s)) {
				fprintf(stderr, "roce-engine: --http-linger: '%s' is not in 0..3600 seconds\n", optarg);
				return -1;
			}
			break;
		case 'E':
			if (parse_number(optarg, 1, 1e9, &c->sample_every) || c->sample_every != (double)(unsigned)c->sample_every) {
				fprintf(stderr, "roce-engine: --latency-sample-every: '%s' is not a whole number in 1..1000000000\n",
					optarg);
				return -1;
			}
			break;
		case 'q': c->opt.quiet = true; break;
		case 'c': c->check_only = true; break;
		case 'h': usage(stdout); exit(0);
		case 'V': print_version(); exit(0);
		case 'd':
			if (parse_number(optarg, 0, 1e7, &c->opt.duration_s)) {
				fprintf(stderr, "roce-engine: --duration: '%s' is not a number of seconds >= 0\n", optarg);
				return -1;
			}
			c->duration_set = true;
			break;
		case 'i':
			if (parse_number(optarg, 0.1, 3600, &c->opt.stats_interval_s)) {
				fprintf(stderr, "roce-engine: --stats-interval: '%s' is not in 0.1..3600 seconds\n", optarg);
				return -1;
			}
			c->interval_set = true;
			break;
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "roce-engine: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!c->config) {
		fprintf(stderr, "roce-engine: -f CONFIG is required (see --help)\n");
		return -1;
	}
	return 0;
}

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
static void install_signal_handlers(void)
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

/* Command line over config: the config's run section gives the defaults. */
static int merge_run_settings(struct cli *c, struct engine_config *cfg)
{
	if (c->latency_samples) {
		if (strlen(c->latency_samples) >= sizeof(cfg->latency_samples)) {
			fprintf(stderr, "roce-engine: --latency-samples: path longer than %zu characters\n",
				sizeof(cfg->latency_samples) - 1);
			return -1;
		}
		snprintf(cfg->latency_samples, sizeof(cfg->latency_samples), "%s", c->latency_samples);
	}
	if (c->capture) {
		if (strlen(c->capture) >= sizeof(cfg->capture)) {
			fprintf(stderr, "roce-engine: --capture: the path is longer than %zu characters\n", sizeof(cfg->capture) - 1);
			return -1;
		}
		snprintf(cfg->capture, sizeof(cfg->capture), "%s", c->capture);
	}
	if (c->sample_every > 0)
		cfg->latency_sample_every = (unsigned)c->sample_every;
	if (c->http_set) {
		snprintf(cfg->http_addr, sizeof(cfg->http_addr), "%s", c->http_addr);
		cfg->http_port = c->http_port;
	}
	if (c->http_linger_s >= 0)
		cfg->http_linger_s = c->http_linger_s;
	if (!c->duration_set)
		c->opt.duration_s = cfg->duration_s;
	if (!c->interval_set)
		c->opt.stats_interval_s = cfg->stats_interval_s > 0 ? cfg->stats_interval_s : 1.0;
	c->opt.report_path = c->report ? c->report : (cfg->report[0] ? cfg->report : NULL);
	return 0;
}

int engine_cli_main(int argc, char **argv)
{
	static struct engine_config cfg;
	static char store[16384];
	static struct pmd_driver_check drivers;
	char *eal_argv[CFG_MAX_EAL_ARGS + 3 * CFG_MAX_PORTS + 32];
	struct cli c = {.http_linger_s = -1};
	struct config_env env = {.vdev_driver = pmd_drivers_check_vdev, .arg = &drivers};
	char err[1024], runtime_dir[PATH_MAX], eal_line[sizeof(store)];
	int sep = -1, eal_argc, rc;

	install_signal_handlers();
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			sep = i;
			break;
		}
	argv[sep < 0 ? 0 : sep] = argv[0];
	if (parse_cli(sep < 0 ? argc : argc - sep, sep < 0 ? argv : argv + sep, &c))
		return ENGINE_EXIT_USAGE;
	run_info_config(c.config); /* the report's hash of the bytes about to be read; the loader says what is wrong */
	if (sep > 0) /* EAL options on the command line: their -d options add drivers */
		drivers.args = (const char *const *)argv + 1, drivers.n_args = (unsigned)sep - 1;
	if (config_load_env(c.config, &env, &cfg, err, sizeof(err))) {
		fprintf(stderr, "roce-engine: %s\n", err);
		return ENGINE_EXIT_CONFIG;
	}
	if (merge_run_settings(&c, &cfg))
		return ENGINE_EXIT_USAGE;
	if (sep < 0) {
		eal_argc = eal_args_from_config(&cfg, eal_argv, (int)(sizeof(eal_argv) / sizeof(eal_argv[0])), store,
						sizeof(store));
		if (eal_argc < 0) {
			fprintf(stderr, "roce-engine: EAL arguments too long\n");
			return ENGINE_EXIT_CONFIG;
		}
	} else {
		eal_argc = sep;
		memcpy(eal_argv, argv, sizeof(char *) * (size_t)sep);
		eal_argv[sep] = NULL;
	}
	/* before rte_eal_init, whose getopt may reorder eal_argv */
	eal_line[0] = '\0';
	for (int i = 1, n = 0; i < eal_argc && n < (int)sizeof(eal_line); i++)
		n += snprintf(eal_line + n, sizeof(eal_line) - (size_t)n, " %s", eal_argv[i]);
	if (c.check_only) {
		printf("roce-engine: %s is valid: %u ports, %u lcore roles, %u flow groups\nEAL:%s\n", c.config, cfg.n_ports,
		       cfg.n_roles, cfg.n_groups, eal_line);
		return 0;
	}
	make_pcap_dirs(&cfg);
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		fprintf(stderr, "roce-engine: EAL initialisation failed (see DPDK's message above) with the arguments:%s\n",
			eal_line);
		return ENGINE_EXIT_INIT;
	}
	rc = engine_run(&cfg, &c.opt);
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	remove_runtime_dir(runtime_dir);
	return rc;
}

int main(int argc, char **argv)
{
	run_info_start(argc, argv); /* before anything rewrites argv; the perftest modes' runs inherit it */
	if (argc > 1 && !strcmp(argv[1], "--version")) {
		print_version();
		return 0;
	}
	if (argc > 1 && perftest_is_subcommand(argv[1]))
		return perftest_main(argc - 1, argv + 1);
	return engine_cli_main(argc, argv);
}

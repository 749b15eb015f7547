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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_version.h>

#include "config.h"
#include "drivers.h"
#include "engine.h"
#include "launch.h"
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
	const char *timeseries;
	const char *ready_file;
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
		"  -T, --timeseries FILE.csv  write the per-interval time series there (docs/monitoring.md);\n"
		"                             overrides run.timeseries\n"
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
		"      --ready-file FILE      made once the ports are started and the lcores launched (a script\n"
		"                             starting this engine's memif clients waits for it); overrides\n"
		"                             run.ready_file\n"
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
		{"version", no_argument, NULL, 'V'},      {"timeseries", required_argument, NULL, 'T'},
		{"ready-file", required_argument, NULL, 'R'},
		{NULL, 0, NULL, 0},
	};
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "f:d:r:i:S:T:qch", opts, NULL)) != -1) {
		switch (ch) {
		case 'f': c->config = optarg; break;
		case 'r': c->report = optarg; break;
		case 'S': c->latency_samples = optarg; break;
		case 'C': c->capture = optarg; break;
		case 'T': c->timeseries = optarg; break;
		case 'R': c->ready_file = optarg; break;
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

/* An output path from option --NAME (none: the config's stays) into the config's field of len. */
static int output_path(const char *name, const char *path, char *field, size_t len)
{
	if (!path)
		return 0;
	if (strlen(path) >= len) {
		fprintf(stderr, "roce-engine: --%s: the path is longer than %zu characters\n", name, len - 1);
		return -1;
	}
	snprintf(field, len, "%s", path);
	return 0;
}

/* Command line over config: the config's run section gives the defaults. */
static int merge_run_settings(struct cli *c, struct engine_config *cfg)
{
	const struct engine_options from_config = launch_options_of(cfg);

	if (c->latency_samples) {
		if (strlen(c->latency_samples) >= sizeof(cfg->latency_samples)) {
			fprintf(stderr, "roce-engine: --latency-samples: path longer than %zu characters\n",
				sizeof(cfg->latency_samples) - 1);
			return -1;
		}
		snprintf(cfg->latency_samples, sizeof(cfg->latency_samples), "%s", c->latency_samples);
	}
	if (output_path("capture", c->capture, cfg->capture, sizeof(cfg->capture)) ||
	    output_path("timeseries", c->timeseries, cfg->timeseries, sizeof(cfg->timeseries)) ||
	    output_path("ready-file", c->ready_file, cfg->ready_file, sizeof(cfg->ready_file)))
		return -1;
	if (c->sample_every > 0)
		cfg->latency_sample_every = (unsigned)c->sample_every;
	if (c->http_set) {
		snprintf(cfg->http_addr, sizeof(cfg->http_addr), "%s", c->http_addr);
		cfg->http_port = c->http_port;
	}
	if (c->http_linger_s >= 0)
		cfg->http_linger_s = c->http_linger_s;
	if (!c->duration_set)
		c->opt.duration_s = from_config.duration_s;
	if (!c->interval_set)
		c->opt.stats_interval_s = from_config.stats_interval_s;
	c->opt.report_path = c->report ? c->report : from_config.report_path;
	return 0;
}

/* roce-engine's own path: parse the command line, load and validate the config, start EAL, run,
 * clean up. Returns an enum engine_exit. */
static int engine_cli_main(int argc, char **argv)
{
	static struct engine_config cfg;
	static struct launch_eal eal;
	static struct pmd_driver_check drivers;
	struct cli c = {.http_linger_s = -1};
	struct config_env env = {.vdev_driver = pmd_drivers_check_vdev, .arg = &drivers};
	char err[1024];
	int sep = -1;

	launch_install_signal_handlers();
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
	if (sep < 0 ? launch_eal_from_config(&cfg, &eal) : launch_eal_from_argv(sep, argv, &eal)) {
		fprintf(stderr, "roce-engine: EAL arguments too long\n");
		return ENGINE_EXIT_CONFIG;
	}
	if (c.check_only) {
		printf("roce-engine: %s is valid: %u ports, %u lcore roles, %u flow groups\nEAL:%s\n", c.config, cfg.n_ports,
		       cfg.n_roles, cfg.n_groups, eal.line);
		return 0;
	}
	return launch_engine(&cfg, &c.opt, &eal);
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

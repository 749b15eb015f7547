/* SPDX-License-Identifier: BSD-3-Clause
 *
 * perftest-style front ends of roce-engine (docs/perftest.md):
 *
 *   roce-engine write_bw|write_lat|send_bw|send_lat|read_bw|read_lat [flags]
 *
 * Each turns perftest's flags into an engine configuration (text, loaded by the config library),
 * runs the engine on it (launch.h) in a child process, reads the JSON report and prints
 * perftest's table.
 */
#ifndef ROCE_ENGINE_PERFTEST_H
#define ROCE_ENGINE_PERFTEST_H

#include <stdbool.h>

/* True when NAME is one of the six test names above. */
bool perftest_is_subcommand(const char *name);

/* Runs one test: argv[0] is the test's name, the rest its flags. Returns an exit status: 0,
 * 2 for a bad command line, else the engine's (docs/engine.md). */
int perftest_main(int argc, char **argv);

#endif

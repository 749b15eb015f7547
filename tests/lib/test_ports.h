/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The ports of a test's config text, set up as the engine sets them up (one queue each, the
 * default QoS map): for the unit tests that drive a switch or the fabric over real ethdev ports.
 */
#ifndef ROCE_TEST_PORTS_H
#define ROCE_TEST_PORTS_H

#include <stdio.h>

#include "classify.h"
#include "config.h"
#include "port.h"

/* cfg from text, and its first n ports with their QoS maps. 0, or -1 (said on stdout). */
static inline int test_ports_setup(const char *text, struct engine_config *cfg, struct port_info *ports,
				   struct qos_map *maps, unsigned n)
{
	char err[512] = "";

	if (config_load_string(text, "t.cfg", cfg, err, sizeof(err))) {
		printf("config: %s\n", err);
		return -1;
	}
	for (unsigned p = 0; p < n; p++) {
		if (port_setup(&cfg->ports[p], 1, &ports[p], err, sizeof(err))) {
			printf("port_setup: %s\n", err);
			return -1;
		}
		qos_map_default(&maps[p]);
	}
	return 0;
}

static inline void test_ports_teardown(struct port_info *ports, unsigned n)
{
	for (unsigned p = 0; p < n; p++)
		port_teardown(&ports[p]);
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * EAL for the unit tests that need it: no hugepages, PCI, telemetry or shared files, 256 MB, under
 * a file prefix of this process's own (the test's name and the pid), so that tests run side by
 * side and beside an engine.
 */
#ifndef ROCE_TEST_EAL_H
#define ROCE_TEST_EAL_H

#include <stdio.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

/* lcores: EAL's -l list ("0", "0-1"). 0, or -1 (said on stdout). */
static inline int test_eal_start(const char *name, const char *lcores)
{
	char program[64], prefix[64], list[32];
	char *argv[] = {program, "--no-huge", "-m", "256", "--no-pci", "--file-prefix", prefix, "-l", list,
			"--log-level=error", "--no-telemetry", "--no-shconf", NULL};

	snprintf(program, sizeof(program), "%s", name);
	snprintf(prefix, sizeof(prefix), "%s_%d", name, (int)getpid());
	snprintf(list, sizeof(list), "%s", lcores);
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		printf("rte_eal_init failed\n");
		return -1;
	}
	return 0;
}

/* A pool of n mbufs with room for frames of 4096 bytes (the tests' MTUs are at most 2048), or
 * NULL (said on stdout). */
static inline struct rte_mempool *test_eal_mbuf_pool(const char *name, unsigned n)
{
	struct rte_mempool *mp = rte_pktmbuf_pool_create(name, n, 0, 0, 4096 + RTE_PKTMBUF_HEADROOM, SOCKET_ID_ANY);

	if (!mp)
		printf("no mbuf pool %s\n", name);
	return mp;
}

/* EAL's end, and its run-time folder removed (empty: no shared config). */
static inline void test_eal_stop(void)
{
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	rmdir(dir);
}

#endif

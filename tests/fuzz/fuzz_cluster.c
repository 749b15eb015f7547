/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target for roce-cluster's cluster file (apps/roce_cluster/cluster_config.c) and the
 * pairs files it names: the input is the cluster file, and after a line "----" the text of
 * "pairs.txt" beside it (a test with schedule = "file"; pairs_file = "pairs.txt" reads it). Beyond
 * the sanitizers' checks:
 *  - on failure the error is one NUL-terminated line of printable ASCII naming a file and line
 *    ("DIR/fuzz.cfg:LINE: ..." or "DIR/pairs.txt:LINE: pair: ...");
 *  - on success every setting is within its documented range, and for 2..9 ranks every test's
 *    rounds are flows between distinct ranks of the job, a pairwise round has each rank in one
 *    pair at most, the tests' engine configs fit or say they do not, and {rank} in the port rules
 *    expands or says it does not.
 * Every violated invariant prints itself and traps.
 *
 * Build: tests/fuzz/meson.build (-Dfuzzing=true, clang). Replay: build-fuzz/tests/fuzz/fuzz_cluster FILE...
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "coll_model.h"
#include "fuzz_require.h"
#include "fuzz_sanitizers.h"
#include "fuzz_two_files.h"
#include "schedule.h"
#include "step.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/* libconfig 1.5's lexer leaks a discarded string token on some syntax errors (fuzz_config.c) */
const char *__lsan_default_suppressions(void) { return "leak:strbuf_append\nleak:libconfig_yylex\n"; }

static char dir[64], cfg_path[128], pairs_path[128];
static struct cluster_cfg C; /* large: off the stack */
static struct cl_pair flows[9 * 8];

static void check_test(const struct cl_test *t)
{
	REQUIRE(t->name[0] && memchr(t->name, 0, sizeof(t->name)));
	REQUIRE(t->message_size >= 1 && t->qps_per_pair >= 1 && t->qps_per_pair <= CL_QPS_PER_PAIR_MAX);
	REQUIRE(t->mtu >= 256 && t->mtu <= 4096 && !(t->mtu & (t->mtu - 1)));
	REQUIRE(t->duration_s >= 0.1 && t->iterations >= 1 && t->iterations <= CL_MAX_ITERATIONS);
	REQUIRE(t->compute_ms >= 0 && t->compute_ms <= 1e6 && (t->type == CL_TEST_COLLECTIVE || t->compute_ms == 0));
	REQUIRE(t->schedule != CL_SCHED_FILE || (t->pairs && t->n_pairs >= 1 && t->n_pairs <= CL_MAX_FILE_PAIRS));
	for (unsigned i = 0; i < t->n_pairs; i++)
		REQUIRE(t->pairs[i].a != t->pairs[i].b && t->pairs[i].a < CL_MAX_RANKS && t->pairs[i].b < CL_MAX_RANKS);
}

/* The test's rounds over n ranks: flows between distinct ranks of the job; pairwise rounds hold
 * each rank once at most (both directions of its pair). */
static void check_rounds(const struct cl_test *t, unsigned n)
{
	unsigned rounds = schedule_test_rounds(t, n);

	if (t->schedule == CL_SCHED_FILE && schedule_file_check(t->pairs, t->n_pairs, n))
		return; /* refused at start */
	if (t->type == CL_TEST_INCAST && t->root >= n)
		return;
	REQUIRE(rounds <= (t->schedule == CL_SCHED_FILE ? t->n_pairs : n));
	for (unsigned r = 0; r < rounds && r < 64; r++) {
		unsigned k = schedule_test_flows(t, n, r, flows), sends[9] = { 0 };
		REQUIRE(k <= schedule_max_flows(t, n));
		for (unsigned i = 0; i < k; i++) {
			REQUIRE(flows[i].a < n && flows[i].b < n && flows[i].a != flows[i].b);
			sends[flows[i].a]++;
		}
		if (t->type == CL_TEST_PAIRWISE)
			for (unsigned i = 0; i < n; i++)
				REQUIRE(sends[i] <= 1);
	}
	if (t->type == CL_TEST_COLLECTIVE)
		REQUIRE(coll_phases(t->op, n) >= 1 && coll_message_per_qp(t, n) >= 1);
}

/* Rank 0's engine config of the test's first round over 4 ranks: it fits, or says it does not. */
static void check_step_config(const struct cl_test *t)
{
	static struct cl_endpoint ep[4];
	static char text[16384];
	const unsigned to[] = { 1, 2, 3 }, from[] = { 3 };
	const struct cl_step_peers pe = { .to = to, .n_to = 3, .from = from, .n_from = 1 };
	const struct cl_step_env env = { .cfg = &C, .ep = ep, .n_ranks = 4, .job = "j" };

	for (unsigned r = 0; r < 4; r++)
		ep[r] = (struct cl_endpoint){ .rank = r, .family = 4, .rx_qpn_base = CL_RX_QPN_BASE, .device = "net_null0",
					      .link_gbps = 1, .mtu = 1500 };
	REQUIRE(step_config(&env, 0, t, 0, &pe, 1.8e9, text, sizeof(text)) == 0 || strlen(text) < sizeof(text));
	REQUIRE(step_config(&env, 0, t, 0, &pe, 1.8e9, text, 64) == -1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[1024] = "";

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_cluster.XXXXXX");
		REQUIRE(mkdtemp(dir) != NULL);
		snprintf(cfg_path, sizeof(cfg_path), "%s/fuzz.cfg", dir);
		snprintf(pairs_path, sizeof(pairs_path), "%s/pairs.txt", dir);
	}
	fuzz_two_files(data, size, cfg_path, pairs_path);
	if (cluster_config_load(cfg_path, &C, err, sizeof(err))) {
		fuzz_check_error_line(err, dir);
		cluster_config_free(&C);
		return 0;
	}
	REQUIRE(C.n_tests >= 1 && C.n_tests <= CL_MAX_TESTS && C.n_ports <= CL_MAX_PORT_RULES);
	REQUIRE(C.live_interval_s == 0 || C.live_interval_s >= 0.1);
	REQUIRE(C.start_margin_s >= 0.2 && C.step_timeout_s >= 1);
	REQUIRE(C.lab.present || C.n_ports >= 1);
	for (unsigned i = 0; i < C.n_ports; i++) {
		char out[256];
		const struct cl_port_rule *p = &C.ports[i];
		REQUIRE(!p->ipv4[0] != !p->ipv6[0] && p->device[0] && p->mac[0]);
		(void)cluster_expand(p->ipv4[0] ? p->ipv4 : p->ipv6, 1023, 7, out, sizeof(out));
		REQUIRE(cluster_port_of(&C, (unsigned)(p->by == CL_BY_RANK ? p->rank : 0), p->host,
					(unsigned)(p->by == CL_BY_LOCAL_RANK ? p->local_rank : 0)) != NULL);
	}
	for (unsigned i = 0; i < C.n_tests; i++) {
		check_test(&C.tests[i]);
		for (unsigned n = 1; n <= 9; n++) {
			char why[300];
			cluster_test_fits(&C.tests[i], n, why, sizeof(why)); /* what roce-suite's --check asks too */
			REQUIRE(memchr(why, 0, sizeof(why)) && (n > 1 || why[0]));
			if (n > 1)
				check_rounds(&C.tests[i], n);
		}
		check_step_config(&C.tests[i]);
	}
	cluster_config_free(&C);
	return 0;
}

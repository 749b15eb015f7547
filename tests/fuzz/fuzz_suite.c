/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target for roce-suite's suite file (apps/roce_suite/suite_config.c, and the AI-fabric
 * suite's groups in apps/roce_suite/ai_fabric/aif_config.c, with the fabric read by the engine's
 * parser and a cluster file by roce-cluster's): the input is the suite file, and after a line
 * "----" the text of "cluster.cfg" beside it (ai_fabric.cluster.file = "cluster.cfg" reads it).
 * Beyond the sanitizers' checks:
 *  - on failure the error is one NUL-terminated line of printable ASCII naming a file and line
 *    ("DIR/suite.cfg:LINE: ..." or, for the cluster file, "DIR/suite.cfg:LINE: ...: DIR/cluster.cfg:LINE: ...");
 *  - on success the suite has a name and a type, and an AI-fabric suite's settings are in their
 *    documented ranges: lists within their bounds, a fabric unless every category goes across a
 *    cluster, §7.4 on a real tier only as its PFC storm, §8.2 and §8.3 there only with a balance_command
 *    (and one only there), and every collective a cluster job would run fits roce-cluster's limits for its
 *    ranks (what --check promises: a suite it accepts starts).
 * Every violated invariant prints itself and traps.
 *
 * Build: tests/fuzz/meson.build (-Dfuzzing=true, clang). Replay: build-fuzz/tests/fuzz/fuzz_suite FILE...
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aif.h"
#include "cluster.h"
#include "coll_model.h"
#include "fuzz_require.h"
#include "fuzz_sanitizers.h"
#include "fuzz_two_files.h"
#include "suite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/* libconfig 1.5's lexer leaks a discarded string token on some syntax errors (fuzz_config.c) */
const char *__lsan_default_suppressions(void) { return "leak:strbuf_append\nleak:libconfig_yylex\n"; }

static char dir[64], suite_path[128], cluster_path[128];
static struct suite_cfg S; /* large: off the stack */

static void check_list(unsigned n)
{
	REQUIRE(n <= AIF_MAX_LIST);
}

/* A cluster job's collective over its ranks, as roce-suite's --check judged it: it must fit. */
static void check_fits(const struct aif_cluster_cfg *k, enum kpi_collective op, unsigned bytes, unsigned iterations)
{
	struct cl_test t = { .type = CL_TEST_COLLECTIVE, .op = coll_op_of_kpi(op), .iterations = iterations, .message_size = bytes,
			     .qps_per_pair = k->qps_per_pair, .transport = CL_TRANSPORT_RC };
	char why[300];

	cluster_test_fits(&t, k->ranks, why, sizeof(why));
	REQUIRE(why[0] == '\0');
}

static void check_aif(const struct aif_cfg *c)
{
	const struct aif_cluster_cfg *k = &c->cluster;
	bool any = false, fabric_needed = false;

	for (unsigned i = 0; i < AIF_CATEGORIES; i++) {
		any |= c->run[i];
		fabric_needed |= c->run[i] && !k->across[i];
		REQUIRE(!k->across[i] || (c->run[i] && (i == AIF_COLLECTIVES || i == AIF_JCT)));
	}
	REQUIRE(any && (!fabric_needed || c->fabric));
	REQUIRE(c->repeats >= 1 && c->repeats <= 100 && c->results[0]);
	check_list(c->throughput.n_sizes), check_list(c->throughput.n_qps), check_list(c->burst.n_ratios);
	check_list(c->ecn.n_ratios), check_list(c->pfc_incast.n_ratios), check_list(c->conv.n_flows);
	check_list(c->conv.n_dcqcn), check_list(c->lb.n_qps), check_list(c->lb.n_gaps), check_list(c->jct.n_compute);
	check_list(c->jct.n_sizes), check_list(c->jct.n_ranks), check_list(c->interference.n_overlaps);
	REQUIRE(c->coll.n_ops >= 1 && c->coll.n_ops <= 3 && c->coll.iterations >= 1 && c->coll.iterations <= 1000);
	REQUIRE(c->soak.interval_s > 0 && c->soak.duration_s >= 2 * c->soak.interval_s);
	for (unsigned i = 0; i < c->interference.n_overlaps; i++)
		REQUIRE(c->interference.overlaps[i] >= 0 && c->interference.overlaps[i] <= 1);
	/* §7.4's storm in its ranges; on a real tier §7.4 runs only as its storm */
	if (c->deadlock.storm.on)
		REQUIRE(c->deadlock.storm.start_s > 0 && c->deadlock.storm.start_s <= 60 && c->deadlock.storm.duration_s > 0 &&
			c->deadlock.storm.duration_s <= 3600 && c->deadlock.storm.rate_pps >= 0 && c->deadlock.storm.rate_pps <= 1e6);
	REQUIRE(!c->external || !c->run[AIF_DEADLOCK] || c->deadlock.storm.on);
	/* a real tier's flowlets and spraying only through the lab's command, which only a real tier has */
	REQUIRE(!c->external || !(c->run[AIF_FLOWLET] || c->run[AIF_SPRAY]) || c->lb.balance_command[0]);
	REQUIRE(c->external || !c->lb.balance_command[0]);
	if (!k->file[0])
		return;
	REQUIRE(k->ranks >= 2 && k->ranks <= CL_MAX_RANKS && (!k->lab || k->ranks <= CL_LAB_MAX_RANKS));
	REQUIRE(k->qps_per_pair >= 1 && k->qps_per_pair <= CL_QPS_PER_PAIR_MAX && k->launcher[0]);
	REQUIRE(k->link_gbps > 0 && isfinite(k->link_gbps));
	REQUIRE(!k->across[AIF_JCT] || c->jct.n_ranks == 0);
	for (unsigned i = 0; k->across[AIF_COLLECTIVES] && i < c->coll.n_ops; i++)
		check_fits(k, c->coll.ops[i], c->coll.message_size, c->coll.iterations);
	for (unsigned i = 0; k->across[AIF_JCT] && i < c->jct.n_sizes; i++)
		check_fits(k, KPI_ALLREDUCE, c->jct.message_sizes[i], c->jct.iterations);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[1024];

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_suite.XXXXXX");
		REQUIRE(mkdtemp(dir) != NULL);
		snprintf(suite_path, sizeof(suite_path), "%s/suite.cfg", dir);
		snprintf(cluster_path, sizeof(cluster_path), "%s/cluster.cfg", dir);
	}
	fuzz_two_files(data, size, suite_path, cluster_path);
	if (suite_config_load(suite_path, &S, err, sizeof(err))) {
		fuzz_check_error_line(err, dir);
		suite_config_free(&S);
		return 0;
	}
	REQUIRE(S.name[0] && S.type <= SUITE_AI_FABRIC);
	REQUIRE((S.type == SUITE_AI_FABRIC) == (S.aif != NULL));
	if (S.aif)
		check_aif(S.aif);
	suite_config_free(&S);
	return 0;
}

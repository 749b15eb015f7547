/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target for roce-ccsim's scenarios (apps/roce_ccsim: the loader of network, rp_replay
 * and fabric scenarios, the flows a fabric scenario draws, both simulations and their
 * summaries): any byte string is a scenario file "fuzz.cfg". Beyond the sanitizers' checks:
 *  - on failure the error is one NUL-terminated line of printable ASCII naming "fuzz.cfg";
 *  - a small scenario that loads is run (at most 64 flows and links, 200 µs simulated, 200,000
 *    events' worth of packets): every flow receives no more than it sent, a fabric's drops add up
 *    the same per flow and per link, every packet sent is one first sent or one resent, and the
 *    summaries are written (to /dev/null).
 * Every violated invariant prints itself and traps.
 *
 * Build: tests/fuzz/meson.build (-Dfuzzing=true, clang). Replay: build-fuzz/tests/fuzz/fuzz_ccsim FILE...
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fab_report.h"
#include "fab_scenario.h"
#include "fabsim.h"
#include "fuzz_require.h"
#include "fuzz_sanitizers.h"
#include "replay.h"
#include "report.h"
#include "scenario.h"
#include "sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/* libconfig 1.5's lexer leaks a discarded string token on some syntax errors (fuzz_config.c) */
const char *__lsan_default_suppressions(void) { return "leak:strbuf_append\nleak:libconfig_yylex\n"; }

#define NAME "fuzz.cfg"
#define MAX_RUN_FLOWS 64
#define MAX_RUN_LINKS 64
#define MAX_RUN_NS 200000ULL
#define MAX_RUN_GBPS 400.0  /* with 64-byte packets: 200 µs x 400 Gb/s ~ 160,000 packets a link */

static char err[1600];
static FILE *devnull;

static void check_error(void)
{
	size_t n = strlen(err);

	REQUIRE(n > 0 && n < sizeof(err) - 1);
	REQUIRE(!strncmp(err, NAME, strlen(NAME)) || !strncmp(err, "roce-ccsim:", 11));
	for (size_t i = 0; i < n; i++)
		REQUIRE(isprint((unsigned char)err[i]));
}

static void run_network(const struct scenario *sc)
{
	struct sim s;
	uint64_t rate = 0;

	for (unsigned i = 0; i < sc->n_flows; i++)
		rate += sc->flows[i].line_kbps;
	if (sc->n_flows > MAX_RUN_FLOWS || sc->duration_ns > MAX_RUN_NS || rate > MAX_RUN_GBPS * 1e6 ||
	    sc->sample_ns < 1000)
		return;
	if (sim_init(&s, sc, NULL))
		return;
	sim_run(&s);
	for (unsigned i = 0; i < s.nf; i++)
		REQUIRE(s.f[i].rx_bytes + s.f[i].drop_bytes <= s.f[i].sent_bytes);
	report_json(devnull, &s);
	report_table(devnull, &s);
	sim_free(&s);
}

static void check_fabric_run(const struct fabsim *s)
{
	uint64_t link_drops = 0, flow_drops = 0;

	for (unsigned d = 0; d < s->n_dl; d++) {
		const struct fs_dlink *l = &s->dl[d];

		link_drops += l->drop_buffer + l->drop_queue + l->drop_headroom + l->drop_no_route + l->drop_link_down;
	}
	for (unsigned i = 0; i < s->n_qp; i++) {
		const struct fs_qp *q = &s->qp[i];

		flow_drops += q->drops;
		REQUIRE(q->rx_pkts <= q->sent_pkts && q->retx_pkts <= q->sent_pkts);
		REQUIRE(q->snd_una <= q->snd_max && q->snd_nxt <= q->snd_max && q->rcv_epsn <= q->snd_max);
		REQUIRE(q->sent_pkts - q->retx_pkts == q->snd_max);
		if (q->cfg->size_bytes)
			REQUIRE(q->rx_bytes <= q->cfg->size_bytes);
		if (q->completion_ns != UINT64_MAX)
			REQUIRE(q->rx_bytes == q->cfg->size_bytes);
	}
	REQUIRE(link_drops == flow_drops);
}

static void run_fabric(struct scenario *sc)
{
	const struct fab_scenario *fs = sc->fab;
	struct fabsim *s;
	double gbps = 0;

	if (fab_flows_generate(sc, sc->seed, err, sizeof(err))) {
		check_error();
		return;
	}
	for (unsigned l = 0; l < fs->f.n_links; l++)
		gbps += fs->f.links[l].gbps;
	if (fs->n_flows > MAX_RUN_FLOWS || fs->f.n_links > MAX_RUN_LINKS || sc->duration_ns > MAX_RUN_NS ||
	    gbps > MAX_RUN_GBPS * 4 || sc->sample_ns < 1000)
		return;
	s = calloc(1, sizeof(*s));
	if (!s)
		return;
	if (fabsim_init(s, sc, devnull, err, sizeof(err)) == 0) {
		fabsim_run(s);
		check_fabric_run(s);
		REQUIRE(fab_report_json(devnull, s) == 0);
		fab_report_table(devnull, s);
	} else {
		check_error();
	}
	fabsim_free(s);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct scenario sc;
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	memcpy(text, data, size);
	text[size] = '\0';
	err[0] = '\0';
	if (scenario_load_string(text, NAME, &sc, err, sizeof(err))) {
		check_error();
		free(text);
		return 0;
	}
	free(text);
	if (sc.type == SC_NETWORK)
		run_network(&sc);
	else if (sc.type == SC_FABRIC)
		run_fabric(&sc);
	else if (sc.duration_ns <= 1000000 && sc.rp.n_cnp <= 1000)
		REQUIRE(replay_run(&sc, devnull, NULL) == 0);
	scenario_free(&sc);
	return 0;
}

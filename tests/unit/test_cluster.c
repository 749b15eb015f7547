/* SPDX-License-Identifier: BSD-3-Clause
 *
 * roce-cluster's model without MPI (apps/roce_cluster): the round-robin schedule (every pair once,
 * each rank in at most one pair a round, n-1 rounds for n even), the min-RTT clock estimate by
 * hand, the matrices from summaries made by hand (bandwidth = payload x 8 / the receiver's run,
 * latency less the receiver's clock offset against the sender's), the SLA's verdicts and worst
 * pairs, the cluster file's errors ("FILE:LINE: SETTING: ...") and {rank} in the port rules.
 */
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock_est.h"
#include "coll_model.h"
#include "cluster.h"
#include "cluster_report.h"
#include "schedule.h"
#include "step.h"
#include "testlib.h"

/* Every pair meets exactly once over the rounds; nobody twice in a round. */
static void round_robin_meets_every_pair_once(void)
{
	for (unsigned n = 2; n <= 17; n++) {
		unsigned char met[17][17] = { { 0 } };
		struct cl_pair p[9];
		unsigned rounds = schedule_rounds(n), pairs = 0;

		CHECK_EQ(rounds, n % 2 ? n : n - 1);
		for (unsigned r = 0; r < rounds; r++) {
			unsigned k = schedule_round_robin(n, r, p);
			CHECK(schedule_round_valid(n, p, k));
			CHECK_EQ(k, n / 2); /* with n odd, one rank sits out each round */
			for (unsigned i = 0; i < k; i++) {
				CHECK(p[i].a < p[i].b);
				met[p[i].a][p[i].b]++;
			}
			pairs += k;
		}
		CHECK_EQ(pairs, n * (n - 1) / 2);
		for (unsigned a = 0; a < n; a++)
			for (unsigned b = a + 1; b < n; b++)
				CHECK_EQ(met[a][b], 1);
		CHECK_EQ(schedule_round_robin(n, rounds, p), 0);
	}
}

/* n = 4 by hand (the circle method, rank 3 fixed; rotating i meets j with i + j = r mod 3, and the
 * one that would meet itself meets rank 3): {0,3} {1,2}; {0,1} {2,3}; {0,2} {1,3}. */
static void round_robin_of_four_by_hand(void)
{
	static const unsigned want[3][2][2] = { { { 0, 3 }, { 1, 2 } }, { { 0, 1 }, { 2, 3 } }, { { 0, 2 }, { 1, 3 } } };
	struct cl_pair p[2];

	for (unsigned r = 0; r < 3; r++) {
		CHECK_EQ(schedule_round_robin(4, r, p), 2);
		for (unsigned w = 0; w < 2; w++) {
			bool found = false;
			for (unsigned i = 0; i < 2; i++)
				found |= p[i].a == want[r][w][0] && p[i].b == want[r][w][1];
			CHECK(found);
		}
	}
}

static void half_pairs_and_invalid_rounds(void)
{
	struct cl_pair p[4];

	CHECK_EQ(schedule_half(8, p), 4);
	CHECK(p[0].a == 0 && p[0].b == 4 && p[3].a == 3 && p[3].b == 7);
	CHECK(schedule_round_valid(8, p, 4));
	p[1] = (struct cl_pair){ 0, 5 }; /* rank 0 twice */
	CHECK(!schedule_round_valid(8, p, 4));
	p[1] = (struct cl_pair){ 2, 2 };
	CHECK(!schedule_round_valid(8, p, 2));
	p[1] = (struct cl_pair){ 1, 9 };
	CHECK(!schedule_round_valid(8, p, 2));
}

/* Three samples: the one with the shortest round trip (t1 - t0 = 40) wins; the peer answered
 * 1,000,020 when rank 0's clock read 100 + 20: offset 999,900 ns, uncertainty 20. A sample whose
 * t1 is before its t0 is skipped. */
static void clock_estimate_takes_the_shortest_round_trip(void)
{
	const struct clock_sample s[] = { { .t0 = 0, .t1 = 100, .peer = 1000080 }, { .t0 = 100, .t1 = 140, .peer = 1000020 },
					  { .t0 = 200, .t1 = 290, .peer = 1000200 }, { .t0 = 300, .t1 = 250, .peer = 7 } };
	struct clock_offset o;

	clock_estimate(s, 4, &o);
	CHECK_EQ(o.rtt_ns, 40);
	CHECK_EQ(o.offset_ns, 1000020 - 120);
	CHECK_EQ(o.uncertainty_ns, 20);
	CHECK_EQ(o.samples, 4);
	clock_estimate(s + 3, 1, &o);
	CHECK_EQ(o.samples, 0);
}

/* A receiver's summary: from `from`, payload bytes, and latency percentiles. */
static json_t *rx(int from, double payload, double p50, double p99)
{
	return json_pack("{s:i,s:f,s:f,s:f,s:f,s:f}", "from", from, "payload_bytes", payload, "packets", 1.0, "latency_count",
			 p50 > 0 ? 100.0 : 0.0, "p50_ns", p50, "p99_ns", p99);
}

static json_t *summary(int rank, double secs, json_t *rxs)
{
	return json_pack("{s:i,s:f,s:o}", "rank", rank, "duration_s", secs, "rx", rxs);
}

/* Three ranks; rank 1's clock 5 us ahead of rank 0's, rank 2's 2 us behind. Bandwidth: rank 1
 * received 125,000,000 bytes from 0 in 2 s: 0.5 Gb/s. Latency: rank 2 read 0's probes at a p50 of
 * 10,000 ns on its clock, 2 us behind the sender's: 12,000 ns on the wire; rank 0 read 1's at
 * 20,000, 5 us behind 1's clock: 25,000. An errored summary adds nothing. */
static void matrices_from_summaries(void)
{
	struct clock_offset off[3] = { { .offset_ns = 0 }, { .offset_ns = 5000 }, { .offset_ns = -2000 } };
	json_t *bw_round = json_pack("{s:[o,o]}", "ranks", summary(1, 2.0, json_pack("[o]", rx(0, 125e6, 0, 0))),
				     json_pack("{s:i,s:s}", "rank", 2, "error", "missing"));
	json_t *lat_round = json_pack("{s:[o,o]}", "ranks", summary(2, 1.0, json_pack("[o]", rx(0, 64, 10000, 30000))),
				      summary(0, 1.0, json_pack("[o]", rx(1, 64, 20000, 40000))));
	json_t *tests = json_pack("[{s:s,s:s,s:[o]},{s:s,s:s,s:[o]}]", "type", "pairwise", "measure", "bandwidth", "rounds",
				  bw_round, "type", "pairwise", "measure", "latency", "rounds", lat_round);
	json_t *m = cluster_matrices(tests, 3, off);
	const json_t *bw = json_object_get(m, "bandwidth_gbps"), *lat = json_object_get(m, "latency_ns");
	const json_t *p50 = json_object_get(lat, "p50"), *p99 = json_object_get(lat, "p99");

#define AT(mx, i, j) json_array_get(json_array_get(mx, i), j)
	CHECK(fabs(json_number_value(AT(bw, 0, 1)) - 0.5) < 1e-12);
	CHECK(json_is_null(AT(bw, 1, 0)) && json_is_null(AT(bw, 0, 0)) && json_is_null(AT(bw, 0, 2)));
	CHECK(fabs(json_number_value(AT(p50, 0, 2)) - 12000) < 1e-9);
	CHECK(fabs(json_number_value(AT(p99, 0, 2)) - 32000) < 1e-9);
	CHECK(fabs(json_number_value(AT(p50, 1, 0)) - 25000) < 1e-9);
	CHECK(json_is_null(AT(p50, 0, 1)));
	{
		struct cl_sla sla = { .min_pair_gbps = 0.6, .max_pair_p99_us = 40 };
		bool failed;
		json_t *v = cluster_sla(&sla, m, NULL, 3, &failed);
		const json_t *w = json_object_get(v, "worst_pairs");
		CHECK(failed);
		CHECK(!strcmp(json_string_value(json_object_get(v, "verdict")), "fail"));
		/* 0 -> 1 at 0.5 of 0.6 Gb/s (17 % short) and 1 -> 0 at 45 of 40 us (12.5 % over): worst first */
		CHECK_EQ(json_array_size(w), 2);
		CHECK(!strcmp(json_string_value(json_object_get(json_array_get(w, 0), "metric")), "bandwidth_gbps"));
		CHECK_EQ(json_integer_value(json_object_get(json_array_get(w, 1), "from")), 1);
		json_decref(v);
		sla = (struct cl_sla){ .min_pair_gbps = 0.4, .max_pair_p99_us = 50 };
		v = cluster_sla(&sla, m, NULL, 3, &failed);
		CHECK(!failed && !strcmp(json_string_value(json_object_get(v, "verdict")), "pass"));
		json_decref(v);
	}
#undef AT
	json_decref(m);
	json_decref(tests);
}

/* A pairs file's rounds by hand: 0-1 and 2-3 in round 0; 1-2 after both (round 1); 0-3 in
 * round 1 too (0 and 3 were last in round 0); 1-0 after 1's round 1: round 2. A rank beyond
 * the job is named. */
static void pairs_file_rounds_by_hand(void)
{
	const struct cl_file_pair p[] = { { 0, 1, 1 }, { 2, 3, 2 }, { 1, 2, 4 }, { 0, 3, 5 }, { 1, 0, 6 } };
	const unsigned want[] = { 0, 0, 1, 1, 2 };
	unsigned round_of[5];

	CHECK_EQ(schedule_file_rounds(p, 5, 4, round_of), 3);
	for (unsigned i = 0; i < 5; i++)
		CHECK_EQ(round_of[i], want[i]);
	CHECK(schedule_file_check(p, 5, 4) == NULL);
	CHECK(schedule_file_check(p, 5, 3) == &p[1]); /* rank 3 of a 3-rank job */
	{
		struct cl_test t = { .type = CL_TEST_PAIRWISE, .schedule = CL_SCHED_FILE, .pairs = (struct cl_file_pair *)p,
				     .n_pairs = 5 };
		struct cl_pair f[8];
		CHECK_EQ(schedule_test_rounds(&t, 4), 3);
		CHECK_EQ(schedule_test_flows(&t, 4, 1, f), 4); /* 1-2 and 0-3, both ways */
		CHECK(f[0].a == 1 && f[0].b == 2 && f[1].a == 2 && f[1].b == 1 && f[2].a == 0 && f[2].b == 3);
	}
}

/* Incast: every rank but the root into it; all-to-all: n(n-1) flows, each ordered pair once;
 * permutation: each rank sends once and receives once, never to itself, one cycle through all,
 * the same for the same seed. */
static void incast_all_to_all_and_permutation_flows(void)
{
	struct cl_pair f[64 * 63];
	struct cl_test t = { .type = CL_TEST_INCAST, .root = 2 };

	CHECK_EQ(schedule_test_rounds(&t, 5), 1);
	CHECK_EQ(schedule_test_flows(&t, 5, 0, f), 4);
	for (unsigned i = 0; i < 4; i++)
		CHECK(f[i].b == 2 && f[i].a != 2);
	CHECK_EQ(schedule_test_flows(&t, 5, 1, f), 0);
	t = (struct cl_test){ .type = CL_TEST_ALL_TO_ALL };
	CHECK_EQ(schedule_max_flows(&t, 64), 64 * 63);
	CHECK_EQ(schedule_test_flows(&t, 64, 0, f), 64 * 63);
	{
		unsigned char seen[64][64] = { { 0 } };
		for (unsigned i = 0; i < 64 * 63; i++)
			seen[f[i].a][f[i].b]++;
		for (unsigned a = 0; a < 64; a++)
			for (unsigned b = 0; b < 64; b++)
				CHECK_EQ(seen[a][b], a != b);
	}
	for (unsigned n = 2; n <= 64; n++)
		for (uint64_t seed = 0; seed < 5; seed++) {
			unsigned dst[64], again[64], at = 0, steps = 0, got[64] = { 0 };
			schedule_permutation(n, seed, dst);
			schedule_permutation(n, seed, again);
			CHECK(!memcmp(dst, again, n * sizeof(dst[0])));
			for (unsigned i = 0; i < n; i++) {
				CHECK(dst[i] != i && dst[i] < n);
				got[dst[i]]++;
			}
			for (unsigned i = 0; i < n; i++)
				CHECK_EQ(got[i], 1);
			do { /* one cycle: n steps from 0 back to 0 */
				at = dst[at];
				steps++;
			} while (at != 0 && steps <= n);
			CHECK_EQ(steps, n);
		}
	t = (struct cl_test){ .type = CL_TEST_PERMUTATION, .seed = 3 };
	CHECK_EQ(schedule_test_flows(&t, 16, 0, f), 16);
}

/* An incast round by hand: the root (2) got 1.25e8 bytes from 0 and 0.625e8 from 1 in 2 s:
 * 0.5 and 0.25 Gb/s; aggregate 0.75, JFI (0.75)^2 / (2 (0.25 + 0.0625)) = 0.9. */
static void incast_summary_by_hand(void)
{
	json_t *round = json_pack("{s:[[i,i],[i,i]],s:[o]}", "flows", 0, 2, 1, 2, "ranks",
				  summary(2, 2.0, json_pack("[o,o]", rx(0, 125e6, 0, 0), rx(1, 62.5e6, 0, 0))));
	json_t *test = json_pack("{s:s,s:s,s:i,s:[o]}", "type", "incast", "measure", "bandwidth", "root", 2, "rounds", round);
	json_t *s = cluster_test_summary(test, 3, NULL);

	CHECK_EQ(json_integer_value(json_object_get(s, "flows")), 2);
	CHECK(fabs(json_number_value(json_object_get(s, "aggregate_gbps")) - 0.75) < 1e-9);
	CHECK(fabs(json_number_value(json_object_get(s, "root_rx_gbps")) - 0.75) < 1e-9);
	CHECK(fabs(json_number_value(json_object_get(s, "jfi")) - 0.9) < 1e-9);
	CHECK(fabs(json_number_value(json_object_get(json_object_get(s, "direction_gbps"), "min")) - 0.25) < 1e-9);
	/* the test's own matrix has its flows; the pairwise-only one none */
	CHECK(fabs(json_number_value(json_array_get(json_array_get(
		      json_object_get(json_object_get(s, "matrix"), "bandwidth_gbps"), 1), 2)) - 0.25) < 1e-9);
	{
		json_t *tests = json_pack("[O]", test), *m = cluster_matrices(tests, 3, NULL);
		CHECK(json_is_null(json_array_get(json_array_get(json_object_get(m, "bandwidth_gbps"), 0), 2)));
		json_decref(m);
		json_decref(tests);
	}
	CHECK(fabs(cluster_jfi(3, 3, 3) - 1) < 1e-12 && cluster_jfi(0, 0, 0) == 0);
	json_decref(s);
	json_decref(test);
}

/* The methodology's worked example: n = 8, 1 GB in 10 ms: algBW 100 GB/s, AllReduce busBW
 * x 2 (7/8) = 175 GB/s = 1,400 Gb/s; AllGather and AlltoAll x 7/8 = 700 Gb/s. Phases: ring
 * AllReduce 2(n-1), AllGather n-1, AlltoAll 1. A chunk S/n split over the QPs, rounded up. */
static void collective_arithmetic_by_hand(void)
{
	struct cl_test t = { .type = CL_TEST_COLLECTIVE, .op = CL_OP_ALLREDUCE, .message_size = 1000000, .qps_per_pair = 3 };

	CHECK(fabs(coll_busbw_gbps(CL_OP_ALLREDUCE, 8, 1e9, 10e6) - 1400) < 1e-9);
	CHECK(fabs(coll_busbw_gbps(CL_OP_ALLGATHER, 8, 1e9, 10e6) - 700) < 1e-9);
	CHECK(fabs(coll_busbw_gbps(CL_OP_ALLTOALL, 8, 1e9, 10e6) - 700) < 1e-9);
	CHECK(coll_busbw_gbps(CL_OP_ALLREDUCE, 8, 1e9, 0) == 0);
	CHECK_EQ(coll_phases(CL_OP_ALLREDUCE, 4), 6);
	CHECK_EQ(coll_phases(CL_OP_ALLGATHER, 4), 3);
	CHECK_EQ(coll_phases(CL_OP_ALLTOALL, 4), 1);
	CHECK_EQ(coll_phases(CL_OP_ALLREDUCE, 1), 0);
	CHECK_EQ(coll_message_per_qp(&t, 4), 83334); /* 250,000 over 3 QPs */
	t.message_size = 5;
	CHECK_EQ(coll_message_per_qp(&t, 8), 1);
}

/* Two ranks, 2 phases an iteration, 3 iterations asked. Rank 0 started at 1,000 ns (rank 0's
 * time), rank 1 at 1,500 on its clock, which is 400 ahead: 1,100 in rank 0's. Phase ends (us):
 * rank 0: 1 2 | 3 5 | 6 (5 phases: 2 iterations and a half); rank 1: 1 3 | 4 4.5 | 7 8.
 * Iteration 0 ends at max(1,000 + 2,000, 1,100 + 3,000) = 4,100, 3,100 after the first start
 * (1,000); iteration 1 at max(6,000, 5,600) = 6,000: 1,900 later; iteration 2: rank 0 lacks it. */
static void collective_iterations_by_hand(void)
{
	const double e0[] = { 1, 2, 3, 5, 6 }, e1[] = { 1, 3, 4, 4.5, 7, 8 };
	const struct coll_rank_times r[2] = { { .start_ns = 1000, .phase_end_us = e0, .phases_done = 5 },
					      { .start_ns = 1100, .phase_end_us = e1, .phases_done = 6 } };
	double t[3];

	CHECK_EQ(coll_iteration_times(r, 2, 2, 3, t), 2);
	CHECK(fabs(t[0] - 3100) < 1e-9 && fabs(t[1] - 1900) < 1e-9);
	CHECK_EQ(coll_iteration_times(r, 2, 2, 1, t), 1); /* no more than asked */
	/* the report's summary from rank summaries: the same, with the offset applied there */
	{
		json_t *ranks = json_array(), *test;
		for (int k = 0; k < 2; k++) {
			json_t *ends = json_array();
			for (unsigned p = 0; p < (k ? 6u : 5u); p++)
				json_array_append_new(ends, json_real(k ? e1[p] : e0[p]));
			json_array_append_new(ranks, json_pack("{s:i,s:I,s:f,s:[],s:[],s:{s:i,s:o}}", "rank", k, "start_unix_ns",
							       (json_int_t)(k ? 1500 : 1000), "duration_s", 1.0, "rx", "tx",
							       "collective", "phases_completed", k ? 6 : 5, "phase_end_us", ends));
		}
		test = json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:[{s:o}]}", "name", "ar", "type", "collective", "op", "allreduce",
				 "iterations", 3,
				 "phases_per_iteration", 2, "message_size", 1000, "rounds", "ranks", ranks);
		struct clock_offset off[2] = { { .offset_ns = 0 }, { .offset_ns = 400 } };
		json_t *sum = cluster_test_summary(test, 2, off), *c = json_object_get(sum, "collective");
		CHECK_EQ(json_integer_value(json_object_get(c, "iterations_completed")), 2);
		CHECK(fabs(json_number_value(json_object_get(json_object_get(c, "time_us"), "max")) - 3.1) < 1e-9);
		CHECK(fabs(json_number_value(json_object_get(c, "total_us")) - 5.0) < 1e-9);
		/* busBW of 1,000 bytes over 2 ranks (factor 1) in 1,900 ns: 8,000 / 1,900 Gb/s */
		CHECK(fabs(json_number_value(json_object_get(json_object_get(c, "busbw_gbps"), "max")) - 8000.0 / 1900) < 1e-9);
		CHECK(fabs(json_number_value(json_object_get(c, "algbw_gbps")) - 2 * 8000.0 / 5000) < 1e-9);
		{ /* the SLA's busBW check: the mean of 8,000/3,100 and 8,000/1,900 Gb/s, about 3.39 */
			json_t *tests = json_pack("[O]", test), *v;
			struct cl_sla sla = { .min_busbw_gbps = 3.3 };
			bool failed;
			json_object_set(json_array_get(tests, 0), "summary", sum);
			v = cluster_sla(&sla, NULL, tests, 2, &failed);
			CHECK(!failed && !strcmp(json_string_value(json_object_get(v, "verdict")), "pass"));
			json_decref(v);
			sla.min_busbw_gbps = 3.5;
			v = cluster_sla(&sla, NULL, tests, 2, &failed);
			CHECK(failed);
			CHECK(!strcmp(json_string_value(json_object_get(json_array_get(json_object_get(v, "checks"), 0), "test")),
				      "ar"));
			json_decref(v);
			json_object_del(json_array_get(tests, 0), "summary");
			json_decref(tests);
		}
		json_decref(sum);
		json_decref(test);
	}
}

/* The live numbers: the last row of port p in a step's time series (the flows' and other ports'
 * rows skipped; an empty latency cell reads 0); none before the first row. */
static void live_row_is_the_ports_last(void)
{
	char dir[] = "/tmp/test_cluster_live_XXXXXX", path[128];
	struct step_live r;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	CHECK_EQ(step_live_row(dir, "p", &r), -1);
	snprintf(path, sizeof(path), "%s/%s", dir, STEP_TIMESERIES);
	f = fopen(path, "w");
	fputs("time_s,kind,name,tx_gbps,tx_mpps,rx_gbps,rx_mpps,goodput_gbps,cnp_rx,pfc_rx,paused_ms,lat_p50_ns,lat_p99_ns\n"
	      "0.5,port,p,0.40,0.05,0.30,0.04,,0,0,0,7000,9000\n"
	      "0.5,flow,to1,0.40,0.05,,,,0,,,,\n"
	      "1.0,port,p,0.45,0.05,0.35,0.04,,0,2,1.5,,\n"
	      "1.0,port,q,9,9,9,9,,0,0,0,1,1\n"
	      "1.0,flow,to1,0.45,0.05,,,,0,,,,\n", f);
	fclose(f);
	CHECK_EQ(step_live_row(dir, "p", &r), 0);
	CHECK(r.time_s == 1.0 && r.tx_gbps == 0.45 && r.rx_gbps == 0.35 && r.p50_ns == 0);
	CHECK_EQ(step_live_row(dir, "x", &r), -1);
	unlink(path);
	rmdir(dir);
}

/* A step's engine config: rank 1 sends to 0 and receives from 0 and 2. RC: a responder for each
 * sender's QPs (its QPNs in rank 1's range, the sender's QPNs toward rank 1, the PSN and MTU);
 * UC: the peers list instead; a collective lists its flows and the receives of its senders. */
static void step_config_lists_responders_or_peers(void)
{
	struct cl_endpoint ep[3] = { 0 };
	struct cluster_cfg *c = calloc(1, sizeof(*c));
	const unsigned to[] = { 0 }, from[] = { 0, 2 };
	const struct cl_step_peers pe = { .to = to, .n_to = 1, .from = from, .n_from = 2 };
	struct cl_test t = { .name = "x", .type = CL_TEST_COLLECTIVE, .op = CL_OP_ALLTOALL, .message_size = 3000,
			     .mtu = 1024, .qps_per_pair = 2, .iterations = 5, .transport = CL_TRANSPORT_RC,
			     .cc = CL_CC_DCQCN };
	struct cl_step_env env = { .cfg = c, .ep = ep, .n_ranks = 3, .job = "j" };
	char text[8192];

	c->memory_mb = 256;
	for (unsigned r = 0; r < 3; r++)
		ep[r] = (struct cl_endpoint){ .rank = r, .rx_qpn_base = CL_RX_QPN_BASE, .start_psn = 7, .link_gbps = 1,
					      .mtu = 1500, .device = "net_null0" };
	CHECK_EQ(step_config(&env, 1, &t, 0, &pe, 1.7e9, text, sizeof(text)), 0);
	CHECK(strstr(text, "transport = \"rc\"; cc = \"dcqcn\";") != NULL);
	CHECK(strstr(text, "message_size = 500;") != NULL); /* 3000 / 3 over 2 QPs */
	CHECK(strstr(text, "responders = (\n  { port = \"p\"; qpn = 0x10000; peer_qpn = 0x400040; count = 2; mtu = 1024; "
			   "start_psn = 7; },\n  { port = \"p\"; qpn = 0x10080;") != NULL);
	CHECK(strstr(text, "phases = 5; flows = [\"to0\"];") != NULL);
	CHECK(strstr(text, "receives = ( { port = \"p\"; qpn = 0x10000; count = 2; }, { port = \"p\"; qpn = 0x10080; count = 2; } )"));
	t.transport = CL_TRANSPORT_UC;
	CHECK_EQ(step_config(&env, 1, &t, 0, &pe, 1.7e9, text, sizeof(text)), 0);
	CHECK(strstr(text, "peers = (\n  { port = \"p\"; qpn = 0x10000; peer_qpn = 0x400040; count = 2; }") != NULL);
	CHECK(strstr(text, "responders") == NULL);
	CHECK_EQ(step_config(&env, 1, &t, 0, &pe, 1.7e9, text, 200), -1); /* does not fit */
	t.compute_ms = 2.5; /* a compute step before each iteration (AlltoAll: one phase an iteration) */
	CHECK_EQ(step_config(&env, 1, &t, 0, &pe, 1.7e9, text, sizeof(text)), 0);
	CHECK(strstr(text, "phases = 5; compute_us = 2500.000; iteration_phases = 1; flows = [\"to0\"];") != NULL);
	free(c);
}

static void expand_placeholders(void)
{
	char out[64];

	CHECK_EQ(cluster_expand("10.1.{rank}.{rank1}", 7, 0, out, sizeof(out)), 0);
	CHECK(!strcmp(out, "10.1.7.8"));
	CHECK_EQ(cluster_expand("0000:3b:00.{local_rank}", 9, 1, out, sizeof(out)), 0);
	CHECK(!strcmp(out, "0000:3b:00.1"));
	CHECK_EQ(cluster_expand("{rank}{rank}{rank}", 123, 0, out, 8), -1); /* "123123123" does not fit */
}

/* The file text into a temporary file, loaded; the error line into err. */
static int load_text(const char *text, struct cluster_cfg *c, char *err, size_t errlen, char *path)
{
	FILE *f;
	int rc;

	strcpy(path, "/tmp/test_cluster_XXXXXX");
	close(mkstemp(path));
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	rc = cluster_config_load(path, c, err, errlen);
	return rc;
}

static void config_errors_name_file_line_and_setting(void)
{
	static const struct { const char *text, *want; } cases[] = {
		{ "lab = { link_gbps = 1.0; };\n", "tests: missing" },
		{ "lab = { link_gbps = 0.0; };\ntests = ( { type = \"pairwise\"; } );\n", ":1: lab.link_gbps:" },
		{ "tests = ( { type = \"pairwise\"; } );\n", "ports: missing" },
		{ "lab = { };\ntests = ( { type = \"pairwise\"; mtu = 1000; } );\n", ":2: tests.[0].mtu: 1000 is not an IB MTU" },
		{ "lab = { };\ntests = ( { type = \"pairwise\"; },\n  { type = \"pairwise\"; } );\n",
		  ":3: tests.[1]: a second test named pairwise" },
		{ "lab = { };\ntests = ( { type = \"sideways\"; } );\n", ":2: tests.[0].type:" },
		{ "ports = ( { rank = 0; host = \"a\"; device = \"x\"; ipv4 = \"1.2.3.4\"; mac = \"02:00:00:00:00:01\"; } );\n"
		  "tests = ( { type = \"pairwise\"; } );\n", ":1: ports.[0]: give one of rank, host or local_rank" },
		{ "lab = { };\nports = ( );\ntests = ( { type = \"pairwise\"; } );\n", ":2: ports: not with a lab group" },
		{ "ports = ( { rank = 0; device = \"x\"; ipv4 = \"1.2.3.4\"; ipv6 = \"fd00::1\"; mac = \"02:00:00:00:00:01\"; } );\n"
		  "tests = ( { type = \"pairwise\"; } );\n", ":1: ports.[0]: give one of ipv4 or ipv6" },
		{ "lab = { ip_version = 5; };\ntests = ( { type = \"pairwise\"; } );\n", ":1: lab.ip_version: 5 (4 or 6)" },
		{ "cluster = { colour = 1; };\nlab = { };\ntests = ( { type = \"pairwise\"; } );\n", ":1: cluster.colour:" },
		{ "lab = { };\ntests = ( { type = \"pairwise\"; root = 1; } );\n", ":2: tests.[0].root: only for incast" },
		{ "lab = { };\ntests = ( { type = \"incast\"; seed = 1; } );\n", ":2: tests.[0].seed: only for permutation" },
		{ "lab = { };\ntests = ( { type = \"collective\"; } );\n", ":2: tests.[0].op: missing" },
		{ "lab = { };\ntests = ( { type = \"incast\"; cc = \"timely\"; } );\n", ":2: tests.[0].cc: timely needs" },
		{ "lab = { };\ntests = ( { type = \"incast\"; transport = \"ud\"; } );\n", ":2: tests.[0].transport:" },
		{ "cluster = { live_interval_s = 0.05; };\nlab = { };\ntests = ( { type = \"pairwise\"; } );\n",
		  ":1: cluster.live_interval_s: 0.05 s: 0 (no live lines) or 0.1..3600" },
		{ "lab = { };\ntests = ( { type = \"collective\"; op = \"allscatter\"; } );\n", ":2: tests.[0].op:" },
		{ "lab = { };\ntests = ( { type = \"pairwise\"; iterations = 3; } );\n", ":2: tests.[0].iterations: only for" },
		{ "lab = { };\ntests = ( { type = \"collective\"; op = \"allreduce\"; measure = \"latency\"; } );\n",
		  ":2: tests.[0].measure: not for collective" },
		{ "lab = { };\ntests = ( { type = \"collective\"; op = \"alltoall\"; iterations = 0; } );\n",
		  ":2: tests.[0].iterations:" },
		{ "lab = { };\ntests = ( { type = \"incast\"; schedule = \"half\"; } );\n",
		  ":2: tests.[0].schedule: only for pairwise" },
		{ "lab = { };\ntests = ( { type = \"pairwise\"; schedule = \"file\"; } );\n",
		  ":2: tests.[0].pairs_file: missing" },
		{ "lab = { };\ntests = ( { type = \"pairwise\"; pairs_file = \"p.txt\"; } );\n",
		  ":2: tests.[0].schedule: pairs_file needs" },
		{ "lab = { };\ntests = ( { type = \"pairwise\"; schedule = \"file\"; pairs_file = \"/nonexistent/p\"; } );\n",
		  "/nonexistent/p:0: pair: cannot read" },
		/* a byte above ASCII would come back in the pairs file's messages (found by fuzz_cluster) */
		{ "lab = { };\ntests = ( { type = \"pairwise\"; schedule = \"file\"; pairs_file = \"p\xe9" ".txt\"; } );\n",
		  ":2: tests.[0].pairs_file: holds a control or non-ASCII character" },
		{ "cluster = { metrics_port = 9100; metrics_address = \"l\xf6" "cal\"; };\nlab = { };\n"
		  "tests = ( { type = \"pairwise\"; } );\n", ":1: cluster.metrics_address: holds a control or non-ASCII" },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cluster_cfg *c = calloc(1, sizeof(*c));
		char err[512] = "", path[64];
		const char *want = cases[i].want;
		int rc = load_text(cases[i].text, c, err, sizeof(err), path);
		bool has = want && strstr(err, want) != NULL;
		CHECK(rc != 0);
		/* a pairs file's error is that file's, naming the cluster file's line after it */
		CHECK(want[0] == '/' ? strstr(err, path) != NULL : !strncmp(err, path, strlen(path)));
		if (!has)
			printf("  case %u: \"%s\" lacks the expected words\n", i, err);
		CHECK(has);
		cluster_config_free(c);
		unlink(path);
		free(c);
	}
}

/* A pairs file's bad line is named by that file and line, and the test that reads it. */
static void pairs_file_errors_name_its_line(void)
{
	static const char pairs[] = "# ranks\n0 1\n\n2 x\n";
	char text[256], err[512] = "", path[64], ppath[64] = "/tmp/test_cluster_pairs_XXXXXX";
	struct cluster_cfg *c = calloc(1, sizeof(*c));
	FILE *f;

	close(mkstemp(ppath));
	f = fopen(ppath, "w");
	fputs(pairs, f);
	fclose(f);
	snprintf(text, sizeof(text), "lab = { };\ntests = ( { name = \"p\"; type = \"pairwise\"; schedule = \"file\"; "
		 "pairs_file = \"%s\"; } );\n", ppath);
	CHECK(load_text(text, c, err, sizeof(err), path) != 0);
	CHECK(strstr(err, ppath) == err && strstr(err, ":4: pair: not \"A B\"") && strstr(err, ":2: tests: p"));
	if (!strstr(err, ":4: pair:"))
		printf("  %s\n", err);
	cluster_config_free(c);
	f = fopen(ppath, "w"); /* a good file: its pairs in order, relative names beside the cluster file */
	fputs("0 1\n2 3 # b\n1 2\n", f);
	fclose(f);
	unlink(path);
	CHECK_EQ(load_text(text, c, err, sizeof(err), path), 0);
	CHECK_EQ(c->tests[0].n_pairs, 3);
	CHECK(c->tests[0].pairs[2].a == 1 && c->tests[0].pairs[2].b == 2 && c->tests[0].pairs[2].line == 3);
	cluster_config_free(c);
	unlink(path);
	unlink(ppath);
	free(c);
}

/* A file with ports by rank, host and local rank: the rank's own rule comes first. */
static void ports_by_rank_then_host_then_local_rank(void)
{
	static const char text[] =
		"ports = (\n"
		"  { local_rank = 0; device = \"0000:3b:00.0\"; ipv4 = \"10.0.{rank}.1\"; mac = \"02:00:00:00:{rank}:01\"; },\n"
		"  { host = \"node7\"; device = \"0000:5e:00.0\"; ipv4 = \"10.7.0.1\"; mac = \"02:00:00:00:07:01\"; },\n"
		"  { rank = 3; device = \"net_memif0\"; ipv4 = \"10.3.0.1\"; mac = \"02:00:00:00:03:01\"; link_gbps = 25.0; },\n"
		"  { rank = 4; device = \"net_memif1\"; ipv6 = \"fd00::{rank1}\"; mac = \"02:00:00:00:04:01\"; }\n"
		");\ntests = ( { name = \"bw\"; type = \"pairwise\"; qps_per_pair = 4; },\n"
		"  { name = \"ar\"; type = \"collective\"; op = \"allreduce\"; } );\n"
		"sla = { min_pair_gbps = 20.0; };\n";
	struct cluster_cfg *c = calloc(1, sizeof(*c));
	char err[512] = "", path[64];

	CHECK_EQ(load_text(text, c, err, sizeof(err), path), 0);
	if (err[0])
		printf("  %s\n", err);
	CHECK(!strcmp(cluster_port_of(c, 3, "node7", 0)->device, "net_memif0"));
	CHECK(!strcmp(cluster_port_of(c, 4, "node7", 0)->ipv6, "fd00::{rank1}") && !cluster_port_of(c, 4, "x", 0)->ipv4[0]);
	CHECK(!strcmp(cluster_port_of(c, 5, "node7", 0)->device, "0000:5e:00.0"));
	CHECK(!strcmp(cluster_port_of(c, 5, "node2", 0)->device, "0000:3b:00.0"));
	CHECK(cluster_port_of(c, 5, "node2", 1) == NULL);
	CHECK_EQ(c->tests[0].qps_per_pair, 4);
	CHECK(c->tests[0].transport == CL_TRANSPORT_UC && c->tests[1].transport == CL_TRANSPORT_RC); /* the defaults */
	CHECK(c->sla.min_pair_gbps == 20.0 && !c->lab.present);
	cluster_config_free(c);
	unlink(path);
	free(c);
}

/* Every cluster file shipped in configs/ (cluster-*.cfg) loads. */
static void shipped_cluster_files_load(void)
{
	char pattern[600];
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/configs/cluster-*.cfg", SOURCE_ROOT);
	CHECK(glob(pattern, 0, NULL, &g) == 0);
	CHECK(g.gl_pathc >= 1);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct cluster_cfg *c = calloc(1, sizeof(*c));
		char err[512] = "";
		if (cluster_config_load(g.gl_pathv[i], c, err, sizeof(err))) {
			printf("  %s\n", err);
			CHECK(0);
		}
		cluster_config_free(c);
		free(c);
	}
	globfree(&g);
}

/* What a test needs of N ranks, by hand: a ring AllReduce has 2(N-1) phases an iteration (the
 * engine takes 4,096), an AlltoAll at most 64 peers a rank, a chunk at least a byte per QP, an
 * incast's root inside the job, RC's receivers at most 64 senders. */
static void tests_fitted_to_the_ranks_by_hand(void)
{
	struct cl_test t = { .type = CL_TEST_COLLECTIVE, .op = CL_OP_ALLREDUCE, .iterations = 1000, .message_size = 1 << 20,
			     .qps_per_pair = 2, .transport = CL_TRANSPORT_RC };
	char why[300];

	cluster_test_fits(&t, 3, why, sizeof(why)); /* 4 phases x 1000 */
	CHECK(why[0] == '\0');
	cluster_test_fits(&t, 4, why, sizeof(why)); /* 6 x 1000 = 6000 > 4096 */
	CHECK(strstr(why, "6000 phases; the engine takes 4096") != NULL);
	t.iterations = 10;
	t.message_size = 64;
	cluster_test_fits(&t, 33, why, sizeof(why)); /* 33 x 2 QPs > 64 bytes */
	CHECK(strstr(why, "message_size 64") != NULL);
	t.message_size = 1 << 20;
	t.op = CL_OP_ALLTOALL;
	cluster_test_fits(&t, 65, why, sizeof(why)); /* 64 peers: fits */
	CHECK(why[0] == '\0');
	cluster_test_fits(&t, 66, why, sizeof(why));
	CHECK(strstr(why, "65 peers") != NULL);
	cluster_test_fits(&t, 1, why, sizeof(why));
	CHECK(strstr(why, "2 ranks or more") != NULL);
	t = (struct cl_test){ .type = CL_TEST_INCAST, .root = 4, .transport = CL_TRANSPORT_UC, .qps_per_pair = 1 };
	cluster_test_fits(&t, 4, why, sizeof(why));
	CHECK(strstr(why, "root 4 is not one of the job's 4 ranks") != NULL);
	t.root = 0;
	t.transport = CL_TRANSPORT_RC;
	cluster_test_fits(&t, 66, why, sizeof(why)); /* 65 senders to the root over RC */
	CHECK(strstr(why, "65 ranks send to one rank") != NULL);
	t.transport = CL_TRANSPORT_UC;
	cluster_test_fits(&t, 66, why, sizeof(why));
	CHECK(why[0] == '\0');
}

int main(void)
{
	RUN(round_robin_meets_every_pair_once);
	RUN(round_robin_of_four_by_hand);
	RUN(half_pairs_and_invalid_rounds);
	RUN(clock_estimate_takes_the_shortest_round_trip);
	RUN(matrices_from_summaries);
	RUN(pairs_file_rounds_by_hand);
	RUN(incast_all_to_all_and_permutation_flows);
	RUN(incast_summary_by_hand);
	RUN(collective_arithmetic_by_hand);
	RUN(collective_iterations_by_hand);
	RUN(live_row_is_the_ports_last);
	RUN(step_config_lists_responders_or_peers);
	RUN(expand_placeholders);
	RUN(pairs_file_errors_name_its_line);
	RUN(config_errors_name_file_line_and_setting);
	RUN(ports_by_rank_then_host_then_local_rank);
	RUN(shipped_cluster_files_load);
	RUN(tests_fitted_to_the_ranks_by_hand);
	return testlib_finish("test_cluster");
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A minimal test harness: each TEST is a case; CHECK records a failure with file and line and
 * lets the case go on. A test program ends with a line "RESULT <program>: N passed, N failed",
 * which scripts/run-tests.sh adds up across programs.
 */
#ifndef ROCE_TESTLIB_H
#define ROCE_TESTLIB_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int testlib_case_failed;
static int testlib_passed, testlib_failed;

#define CHECK(cond)                                                                                 \
	do {                                                                                        \
		if (!(cond)) {                                                                      \
			if (testlib_case_failed++ < 10)                                             \
				printf("  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);   \
		}                                                                                   \
	} while (0)

#define CHECK_EQ(a, b)                                                                              \
	do {                                                                                        \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                    \
		if (a_ != b_) {                                                                     \
			if (testlib_case_failed++ < 10)                                             \
				printf("  %s:%d: %s == %s failed: 0x%" PRIx64 " != 0x%" PRIx64 "\n", \
				       __FILE__, __LINE__, #a, #b, a_, b_);                         \
		}                                                                                   \
	} while (0)

static inline void testlib_run(const char *name, void (*fn)(void))
{
	testlib_case_failed = 0;
	fn();
	if (testlib_case_failed) {
		testlib_failed++;
		printf("not ok - %s\n", name);
	} else {
		testlib_passed++;
		printf("ok - %s\n", name);
	}
	fflush(stdout);
}

#define RUN(fn) testlib_run(#fn, fn)

static inline int testlib_finish(const char *program)
{
	printf("RESULT %s: %d passed, %d failed\n", program, testlib_passed, testlib_failed);
	return testlib_failed ? 1 : 0;
}

/* Deterministic xorshift64* so a failing case can be replayed from its seed. */
static uint64_t testlib_rng_state = 0x9E3779B97F4A7C15ULL;
static inline uint64_t test_rand(void)
{
	uint64_t x = testlib_rng_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	testlib_rng_state = x;
	return x * 0x2545F4914F6CDD1DULL;
}
static inline uint64_t test_rand_below(uint64_t n) { return n ? test_rand() % n : 0; }

#endif

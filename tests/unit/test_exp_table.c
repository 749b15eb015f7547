/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The requester's exponential table (exp_table.h, generated at build time by
 * transport/gen_exp_table.py) against the values the C library's log gives, which the engine
 * computed at start-up before the table was made at build time: Poisson gaps and exponential
 * message sizes stay what they were.
 */
#include <math.h>

#include "exp_table.h"
#include "testlib.h"

static void test_table_is_c_log(void)
{
	unsigned differ = 0;

	for (int i = 0; i < EXP_Q16_N; i++)
		differ += exp_q16[i] != (uint32_t)(-log((i + 0.5) / 1024.0) * 65536.0);
	CHECK_EQ(differ, 0);
}

/* -ln(u) for u in (0, 1), decreasing: the first entry is the largest (ln 2048 in Q16), the last
 * the smallest (-ln(1023.5 / 1024) in Q16 = 32). */
static void test_table_ends(void)
{
	CHECK_EQ(EXP_Q16_N, 1024);
	CHECK_EQ(exp_q16[0], 499687);
	CHECK_EQ(exp_q16[EXP_Q16_N - 1], 32);
	for (int i = 1; i < EXP_Q16_N; i++)
		CHECK(exp_q16[i] < exp_q16[i - 1]);
}

int main(void)
{
	RUN(test_table_is_c_log);
	RUN(test_table_ends);
	return testlib_finish("test_exp_table");
}

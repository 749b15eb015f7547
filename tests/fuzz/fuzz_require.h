/* SPDX-License-Identifier: BSD-3-Clause */
/* The fuzz targets' invariant check: a violated invariant is a finding, so it traps (libFuzzer
 * then keeps the input and fails the bounded run), after saying which one and where. */
#ifndef FUZZ_REQUIRE_H
#define FUZZ_REQUIRE_H

#include <stdio.h>

#define REQUIRE(cond)                                                                               \
	do {                                                                                        \
		if (!(cond)) {                                                                      \
			fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #cond); \
			__builtin_trap();                                                           \
		}                                                                                   \
	} while (0)

#endif

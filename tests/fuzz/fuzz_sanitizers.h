/* SPDX-License-Identifier: BSD-3-Clause */
/* The sanitizers' options every fuzz target runs with (include it in the target's one source
 * file): a finding must fail the bounded run. UBSan only prints a report and goes on unless told
 * to stop; ASan aborts (libFuzzer then keeps the input) and checks for leaks at exit. */
#ifndef FUZZ_SANITIZERS_H
#define FUZZ_SANITIZERS_H

const char *__ubsan_default_options(void);
const char *__asan_default_options(void);

const char *__ubsan_default_options(void) { return "halt_on_error=1:print_stacktrace=1"; }
const char *__asan_default_options(void) { return "abort_on_error=1:detect_leaks=1"; }

#endif

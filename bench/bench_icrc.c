/* SPDX-License-Identifier: BSD-3-Clause
 *
 * bench_icrc: cost per frame of the RoCEv2 ICRC, computed in full (wire_icrc over everything it
 * covers) versus updated incrementally after a PSN rewrite (3 bytes) and an 8-byte timestamp
 * rewrite at the start of the payload, with wire_icrc_patch (generic, zlib's CRC of the xor
 * bytes + one GF(2) shift) and with wire_icrc_field_update (one table lookup per changed byte).
 * Frames are IPv4 RC SEND_ONLY built with wire_build_roce. Also times the pieces of the full
 * path: masked-prefix copy, rte_net_crc over the rest, zlib's crc32_combine_gen64 / _op.
 *
 * Timing: rte_rdtsc() around a loop of N frames, converted with rte_get_tsc_hz(); each point is
 * the median of R runs. Every result feeds a volatile sink, and after every incremental run the
 * ICRC left in the frame is checked against a full recomputation.
 *
 * usage: bench_icrc [--alg auto|scalar|sse42|avx512] [--simd512] [--iters N] [--runs R]
 *                   [--payloads 64,1024,4096]
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cpuflags.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_net_crc.h>
#include <rte_vect.h>
#include <zlib.h>

#include "wire.h"

#define MAX_PAYLOADS 16
#define MAX_RUNS 31
#define DEFAULT_ITERS 2000000ULL
/* Full-path points are slow at large payloads with the scalar CRC: their iteration count is
 * calibrated so that one run takes about this long (never more than --iters). */
#define TARGET_RUN_NS 200000000.0

static volatile uint32_t sink;

struct opts {
	const char *alg;
	bool simd512;
	uint64_t iters;
	bool iters_forced;
	unsigned runs;
	unsigned npayloads;
	uint32_t payloads[MAX_PAYLOADS];
};

struct frame {
	uint8_t buf[WIRE_MAX_FRAME];
	size_t len;
	struct wire_pkt p;
	uint8_t *l3, *psn, *ts, *icrc;
	size_t covered; /* ICRC-covered bytes from the IP header on */
	wire_crc_shift sh_psn, sh_ts;
	struct wire_icrc_field f_psn, f_ts;
};

static double tsc_ns;

static void die(const char *msg)
{
	fprintf(stderr, "bench_icrc: %s\n", msg);
	exit(1);
}

static void build_frame(struct frame *f, uint32_t payload_len)
{
	struct wire_roce_spec s;
	static const uint8_t smac[6] = {0x02, 0, 0, 0, 0, 0x01}, dmac[6] = {0x02, 0, 0, 0, 0, 0x02};
	int n;

	memset(&s, 0, sizeof(s));
	memcpy(s.l2.src, smac, 6);
	memcpy(s.l2.dst, dmac, 6);
	s.ip.version = 4;
	s.ip.dscp = 26;
	s.ip.ecn = WIRE_ECN_ECT0;
	s.ip.ttl = 64;
	s.ip.df = true;
	memcpy(s.ip.src, (const uint8_t[]){192, 168, 1, 1}, 4);
	memcpy(s.ip.dst, (const uint8_t[]){192, 168, 1, 2}, 4);
	s.udp.sport = 49152;
	s.bth.opcode = WIRE_OP_RC_SEND_ONLY;
	s.bth.pkey = WIRE_DEFAULT_PKEY;
	s.bth.dqpn = 0x12;
	s.payload_len = payload_len;
	n = wire_build_roce(&s, f->buf, sizeof(f->buf));
	if (n < 0)
		die("wire_build_roce failed");
	f->len = (size_t)n;
	if (wire_parse(f->buf, f->len, WIRE_PARSE_CHECK_ICRC, &f->p) != WIRE_KIND_ROCE)
		die("built frame does not parse as RoCE");
	f->l3 = f->buf + f->p.l3_off;
	f->psn = f->buf + f->p.bth_off + 9;
	f->ts = f->buf + f->p.payload_off; /* timestamp in the first 8 payload bytes */
	f->icrc = f->buf + f->p.icrc_off;
	f->covered = (size_t)f->p.icrc_off - f->p.l3_off;
	f->sh_psn = wire_crc_shift_for((size_t)(f->icrc - (f->psn + 3)));
	f->sh_ts = wire_crc_shift_for((size_t)(f->icrc - (f->ts + 8)));
	if (wire_icrc_field_init(&f->f_psn, 3, (size_t)(f->icrc - (f->psn + 3))) != 0 ||
	    wire_icrc_field_init(&f->f_ts, 8, (size_t)(f->icrc - (f->ts + 8))) != 0)
		die("wire_icrc_field_init failed");
}

static void check_icrc(const struct frame *f, const char *what)
{
	if (wire_icrc_load(f->icrc) != wire_icrc(f->l3, f->covered)) {
		fprintf(stderr, "bench_icrc: %s left a wrong ICRC (payload %u)\n", what, f->p.payload_len);
		exit(1);
	}
}

/* ---- the measured loops: each returns TSC cycles for n frames ------------------------------ */

static uint64_t loop_full(struct frame *f, uint64_t n, uint64_t seq)
{
	uint32_t acc = 0;
	uint64_t t0 = rte_rdtsc();

	for (uint64_t i = 0; i < n; i++) {
		wire_put24(f->psn, (uint32_t)(seq + i) & WIRE_PSN_MASK);
		wire_put64(f->ts, seq + i);
		uint32_t c = wire_icrc(f->l3, f->covered);
		wire_icrc_store(f->icrc, c);
		acc ^= c;
	}
	uint64_t t1 = rte_rdtsc();
	sink ^= acc;
	return t1 - t0;
}

static uint64_t loop_patch(struct frame *f, uint64_t n, uint64_t seq)
{
	uint32_t icrc = wire_icrc_load(f->icrc);
	uint8_t old_psn[3], old_ts[8];
	uint64_t t0 = rte_rdtsc();

	for (uint64_t i = 0; i < n; i++) {
		memcpy(old_psn, f->psn, 3);
		memcpy(old_ts, f->ts, 8);
		wire_put24(f->psn, (uint32_t)(seq + i) & WIRE_PSN_MASK);
		wire_put64(f->ts, seq + i);
		icrc = wire_icrc_patch(icrc, old_psn, f->psn, 3, f->sh_psn);
		icrc = wire_icrc_patch(icrc, old_ts, f->ts, 8, f->sh_ts);
		wire_icrc_store(f->icrc, icrc);
	}
	uint64_t t1 = rte_rdtsc();
	sink ^= icrc;
	return t1 - t0;
}

static uint64_t loop_field(struct frame *f, uint64_t n, uint64_t seq)
{
	uint32_t icrc = wire_icrc_load(f->icrc);
	uint8_t old_psn[3], old_ts[8];
	uint64_t t0 = rte_rdtsc();

	for (uint64_t i = 0; i < n; i++) {
		memcpy(old_psn, f->psn, 3);
		memcpy(old_ts, f->ts, 8);
		wire_put24(f->psn, (uint32_t)(seq + i) & WIRE_PSN_MASK);
		wire_put64(f->ts, seq + i);
		icrc = wire_icrc_field_update(&f->f_psn, icrc, old_psn, f->psn);
		icrc = wire_icrc_field_update(&f->f_ts, icrc, old_ts, f->ts);
		wire_icrc_store(f->icrc, icrc);
	}
	uint64_t t1 = rte_rdtsc();
	sink ^= icrc;
	return t1 - t0;
}

/* The pieces of wire_icrc() for a frame above its copy threshold (wire/icrc.c). The prefix
 * builder is static there; this is the same work: 8 x 0xFF, IPv4 + UDP + BTH copied, masked. */
static size_t masked_prefix_v4(uint8_t *dst, const uint8_t *l3)
{
	memset(dst, 0xFF, 8);
	memcpy(dst + 8, l3, WIRE_IPV4_HLEN + WIRE_UDP_HLEN + WIRE_BTH_LEN);
	dst[8 + 1] = 0xFF;
	dst[8 + 8] = 0xFF;
	dst[8 + 10] = dst[8 + 11] = 0xFF;
	dst[8 + 26] = dst[8 + 27] = 0xFF;
	dst[8 + 28 + 4] = 0xFF;
	return 8 + WIRE_IPV4_HLEN + WIRE_UDP_HLEN + WIRE_BTH_LEN;
}

#define PREFIX_DONE (WIRE_IPV4_HLEN + WIRE_UDP_HLEN + WIRE_BTH_LEN)

static uint64_t loop_prefix(struct frame *f, uint64_t n, uint64_t seq)
{
	uint8_t buf[64];
	uint32_t acc = 0;
	uint64_t t0 = rte_rdtsc();

	for (uint64_t i = 0; i < n; i++) {
		f->psn[2] = (uint8_t)(seq + i); /* a changing input, as in the real path */
		size_t len = masked_prefix_v4(buf, f->l3);
		__asm__ volatile("" : : "r"(buf) : "memory"); /* the copy must happen */
		acc += buf[len - 1];
	}
	uint64_t t1 = rte_rdtsc();
	sink ^= acc;
	return t1 - t0;
}

static uint64_t loop_crc_rest(struct frame *f, uint64_t n, uint64_t seq)
{
	uint32_t acc = 0;
	size_t rest = f->covered - PREFIX_DONE;
	uint64_t t0 = rte_rdtsc();

	for (uint64_t i = 0; i < n; i++) {
		f->ts[0] = (uint8_t)(seq + i);
		acc ^= wire_crc32(f->l3 + PREFIX_DONE, rest);
	}
	uint64_t t1 = rte_rdtsc();
	sink ^= acc;
	return t1 - t0;
}

static uint64_t loop_combine_gen(struct frame *f, uint64_t n, uint64_t seq)
{
	uint32_t acc = 0;
	size_t rest = f->covered - PREFIX_DONE;
	uint64_t t0 = rte_rdtsc();

	for (uint64_t i = 0; i < n; i++)
		acc ^= (uint32_t)crc32_combine_gen64((z_off64_t)(rest + ((seq + i) & 1)));
	uint64_t t1 = rte_rdtsc();
	sink ^= acc;
	return t1 - t0;
}

static uint64_t loop_combine_op(struct frame *f, uint64_t n, uint64_t seq)
{
	uint32_t acc = (uint32_t)seq;
	uLong op = crc32_combine_gen64((z_off64_t)(f->covered - PREFIX_DONE));
	uint64_t t0 = rte_rdtsc();

	for (uint64_t i = 0; i < n; i++)
		acc = (uint32_t)crc32_combine_op(acc, (uLong)i, op);
	uint64_t t1 = rte_rdtsc();
	sink ^= acc;
	return t1 - t0;
}

/* ---- measurement ---------------------------------------------------------------------------- */

typedef uint64_t (*loop_fn)(struct frame *f, uint64_t n, uint64_t seq);

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static uint64_t seqno;

/* Median ns per frame over o->runs runs. `calibrate`: shrink n for slow loops. */
static double measure(struct frame *f, loop_fn fn, const struct opts *o, bool calibrate, uint64_t *iters_out)
{
	double ns[MAX_RUNS];
	uint64_t n = o->iters;

	fn(f, 1000, seqno); /* warm caches, branch predictors, tables */
	seqno += 1000;
	if (calibrate && !o->iters_forced) {
		double per = (double)fn(f, 2000, seqno) * tsc_ns / 2000.0;
		seqno += 2000;
		uint64_t want = (uint64_t)(TARGET_RUN_NS / (per > 0.1 ? per : 0.1));
		if (want < 20000)
			want = 20000;
		if (want < n)
			n = want;
	}
	for (unsigned r = 0; r < o->runs; r++) {
		ns[r] = (double)fn(f, n, seqno) * tsc_ns / (double)n;
		seqno += n;
	}
	qsort(ns, o->runs, sizeof(ns[0]), cmp_double);
	if (iters_out)
		*iters_out = n;
	return ns[o->runs / 2];
}

/* ---- algorithm selection --------------------------------------------------------------------- */

/* Which implementation rte_net_crc really runs after rte_net_crc_set_alg(req): it falls back
 * silently (AVX512 -> SSE4.2 -> scalar) when the CPU or EAL's SIMD limit says no. */
static const char *effective_alg(const char *req)
{
#ifdef RTE_ARCH_X86
	uint16_t simd = rte_vect_get_max_simd_bitwidth();
	bool avx512 = simd >= RTE_VECT_SIMD_512 && rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512F) > 0 &&
		      rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512BW) > 0 &&
		      rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512DQ) > 0 &&
		      rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512VL) > 0 &&
		      rte_cpu_get_flag_enabled(RTE_CPUFLAG_PCLMULQDQ) > 0 &&
		      rte_cpu_get_flag_enabled(RTE_CPUFLAG_VPCLMULQDQ) > 0;
	bool sse42 = simd >= RTE_VECT_SIMD_128 && rte_cpu_get_flag_enabled(RTE_CPUFLAG_PCLMULQDQ) > 0;

	if (strcmp(req, "avx512") == 0)
		return avx512 ? "avx512" : sse42 ? "sse42" : "scalar";
	if (strcmp(req, "sse42") == 0)
		return sse42 ? "sse42" : "scalar";
#endif
	return "scalar";
}

static const char *select_alg(const char *name)
{
	if (strcmp(name, "auto") == 0)
		return wire_crc_init();
	wire_crc_init(); /* as the engine does, then override */
	if (strcmp(name, "scalar") == 0)
		rte_net_crc_set_alg(RTE_NET_CRC_SCALAR);
	else if (strcmp(name, "sse42") == 0)
		rte_net_crc_set_alg(RTE_NET_CRC_SSE42);
	else if (strcmp(name, "avx512") == 0)
		rte_net_crc_set_alg(RTE_NET_CRC_AVX512);
	else
		die("--alg must be auto, scalar, sse42 or avx512");
	return effective_alg(name);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_icrc [--alg auto|scalar|sse42|avx512] [--simd512] [--iters N] [--runs R]\n"
		     "                  [--payloads 64,1024,4096]\n"
		     "  --alg       rte_net_crc implementation (default auto: wire_crc_init()'s choice)\n"
		     "  --simd512   pass --force-max-simd-bitwidth=512 to EAL (needed for avx512)\n"
		     "  --iters     frames per run (default 2000000; full-path points are calibrated to\n"
		     "              ~0.2 s per run unless --iters is given)\n"
		     "  --runs      runs per point, the median is reported (default 5)\n");
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"alg", required_argument, NULL, 'a'},   {"simd512", no_argument, NULL, 's'},
		{"iters", required_argument, NULL, 'i'}, {"runs", required_argument, NULL, 'r'},
		{"payloads", required_argument, NULL, 'p'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->alg = "auto";
	o->iters = DEFAULT_ITERS;
	o->runs = 5;
	o->npayloads = 3;
	o->payloads[0] = 64;
	o->payloads[1] = 1024;
	o->payloads[2] = 4096;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'a':
			o->alg = optarg;
			break;
		case 's':
			o->simd512 = true;
			break;
		case 'i':
			o->iters = strtoull(optarg, NULL, 0);
			o->iters_forced = true;
			if (o->iters == 0)
				die("--iters must be positive");
			break;
		case 'r':
			o->runs = (unsigned)strtoul(optarg, NULL, 0);
			if (o->runs == 0 || o->runs > MAX_RUNS)
				die("--runs must be 1..31");
			break;
		case 'p': {
			char *s = optarg, *end;
			o->npayloads = 0;
			while (*s && o->npayloads < MAX_PAYLOADS) {
				unsigned long v = strtoul(s, &end, 0);
				if (end == s || v < 8 || v > 8900)
					die("--payloads: lengths 8..8900, comma-separated");
				o->payloads[o->npayloads++] = (uint32_t)v;
				s = *end == ',' ? end + 1 : end;
				if (*end && *end != ',')
					die("--payloads: lengths 8..8900, comma-separated");
			}
			break;
		}
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind != argc) {
		usage(stderr);
		exit(2);
	}
}

struct point {
	uint32_t payload;
	size_t frame_len, covered;
	double full, patch, field, prefix, crc_rest, comb_gen, comb_op;
	uint64_t full_iters;
};

int main(int argc, char **argv)
{
	struct opts o;
	char prefix_arg[64];
	char *eal_argv[16];
	int eal_argc = 0;
	struct point pts[MAX_PAYLOADS];
	static struct frame f; /* 9 KB buffer + 2 x 8 KB tables: keep it off the stack */
	const char *alg;

	parse_opts(argc, argv, &o);

	snprintf(prefix_arg, sizeof(prefix_arg), "bench-icrc-%d", (int)getpid());
	eal_argv[eal_argc++] = argv[0];
	eal_argv[eal_argc++] = (char *)"--no-huge";
	eal_argv[eal_argc++] = (char *)"-m";
	eal_argv[eal_argc++] = (char *)"64";
	eal_argv[eal_argc++] = (char *)"--no-pci";
	eal_argv[eal_argc++] = (char *)"--file-prefix";
	eal_argv[eal_argc++] = prefix_arg;
	eal_argv[eal_argc++] = (char *)"-l";
	eal_argv[eal_argc++] = (char *)"0";
	eal_argv[eal_argc++] = (char *)"--log-level=error";
	if (o.simd512)
		eal_argv[eal_argc++] = (char *)"--force-max-simd-bitwidth=512";
	eal_argv[eal_argc] = NULL;
	if (rte_eal_init(eal_argc, eal_argv) < 0)
		die("rte_eal_init failed");

	tsc_ns = 1e9 / (double)rte_get_tsc_hz();
	alg = select_alg(o.alg);
	printf("# rte_net_crc algorithm: %s (requested %s; EAL max SIMD bitwidth %u; TSC %.3f GHz)\n", alg,
	       o.alg, (unsigned)rte_vect_get_max_simd_bitwidth(), (double)rte_get_tsc_hz() / 1e9);
	if (strcmp(o.alg, "auto") != 0 && strcmp(o.alg, alg) != 0)
		printf("# note: %s is not available here (needs the CPU flags%s); rte_net_crc fell back to %s\n",
		       o.alg, strcmp(o.alg, "avx512") == 0 ? " and --simd512" : "", alg);
	printf("# IPv4 RC SEND_ONLY; incremental = PSN (3 B) + timestamp (8 B) rewrite; median of %u runs\n",
	       o.runs);

	for (unsigned k = 0; k < o.npayloads; k++) {
		struct point *pt = &pts[k];

		build_frame(&f, o.payloads[k]);
		pt->payload = o.payloads[k];
		pt->frame_len = f.len;
		pt->covered = f.covered;
		pt->full = measure(&f, loop_full, &o, true, &pt->full_iters);
		check_icrc(&f, "full");
		pt->patch = measure(&f, loop_patch, &o, false, NULL);
		check_icrc(&f, "wire_icrc_patch");
		pt->field = measure(&f, loop_field, &o, false, NULL);
		check_icrc(&f, "wire_icrc_field_update");
		pt->prefix = measure(&f, loop_prefix, &o, false, NULL);
		pt->crc_rest = measure(&f, loop_crc_rest, &o, true, NULL);
		pt->comb_gen = measure(&f, loop_combine_gen, &o, true, NULL);
		pt->comb_op = measure(&f, loop_combine_op, &o, true, NULL);
	}

	printf("\n%-7s %7s %6s %7s | %9s %9s %9s | %9s %9s | %8s %9s %9s %9s\n", "alg", "payload", "frame",
	       "covered", "full_ns", "patch_ns", "field_ns", "full/patch", "full/field", "prefix", "crc_rest",
	       "comb_gen", "comb_op");
	for (unsigned k = 0; k < o.npayloads; k++) {
		const struct point *pt = &pts[k];
		printf("%-7s %7u %6zu %7zu | %9.1f %9.1f %9.1f | %9.1fx %9.1fx | %8.1f %9.1f %9.1f %9.1f\n", alg,
		       pt->payload, pt->frame_len, pt->covered, pt->full, pt->patch, pt->field,
		       pt->full / pt->patch, pt->full / pt->field, pt->prefix, pt->crc_rest, pt->comb_gen,
		       pt->comb_op);
	}
	printf("# prefix/crc_rest/comb_gen/comb_op: the pieces of the full path above its 192-byte copy\n"
	       "# threshold (masked prefix copy, rte_net_crc over the rest, crc32_combine_gen64, _op);\n"
	       "# below it wire_icrc copies the rest after the prefix and runs one rte_net_crc instead.\n");
	printf("\n");
	for (unsigned k = 0; k < o.npayloads; k++) {
		const struct point *pt = &pts[k];
		printf("RESULT alg=%s payload=%u frame_len=%zu covered=%zu full_ns=%.2f patch_ns=%.2f field_ns=%.2f "
		       "prefix_ns=%.2f crc_rest_ns=%.2f combine_gen_ns=%.2f combine_op_ns=%.2f full_iters=%" PRIu64
		       " iters=%" PRIu64 " runs=%u\n",
		       alg, pt->payload, pt->frame_len, pt->covered, pt->full, pt->patch, pt->field, pt->prefix,
		       pt->crc_rest, pt->comb_gen, pt->comb_op, pt->full_iters, o.iters, o.runs);
	}

	/* growth with payload: smallest versus largest payload measured */
	if (o.npayloads >= 2) {
		const struct point *a = &pts[0], *b = &pts[o.npayloads - 1];
		printf("SCALING alg=%s from=%u to=%u full=%.2fx patch=%.2fx field=%.2fx\n", alg, a->payload, b->payload,
		       b->full / a->full, b->patch / a->patch, b->field / a->field);
	}
	rte_eal_cleanup();
	return 0;
}

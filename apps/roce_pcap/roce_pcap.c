/* SPDX-License-Identifier: BSD-3-Clause
 *
 * roce-pcap: write sample RoCEv2 / CNP / PFC / PAUSE frames to a pcap, and decode a pcap (or
 * pcapng) with one line per frame and its verdict, so users can check captures from their own
 * fabric. See docs/tools.md.
 */
#include <getopt.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame_cut.h"
#include "frame_desc.h"
#include "frame_print.h"
#include "roce_version.h"

#define EXIT_MALFORMED 1
#define EXIT_USAGE 2
#define MAX_ALL 512 /* capacity for the --all set */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: roce-pcap write OUT.pcap [--all] [FRAME...]\n"
		"       roce-pcap read IN.pcap [--json] [--no-icrc] [--quiet]\n"
		"       roce-pcap selfcheck [OUT.pcap]\n"
		"       roce-pcap kinds\n"
		"       roce-pcap --version\n"
		"\n"
		"write      writes one Ethernet frame per FRAME (linktype EN10MB, no FCS).\n"
		"           FRAME = KIND[:key=value,...], KIND an opcode name (rc_send_only, uc_write_first,\n"
		"           rc_ack, ud_send_only_imm, ... see 'kinds'), or cnp, pfc, pause.\n"
		"           --all writes every opcode over IPv4 and IPv6, untagged and tagged, then CNP,\n"
		"           PFC and PAUSE frames.\n"
		"read       decodes every frame: kind, headers and verdict (IPv4 header checksum of RoCEv2\n"
		"           frames checked, ICRC checked unless --no-icrc).\n"
		"           --json prints one JSON object per frame; --quiet prints only the summary.\n"
		"selfcheck  writes the --all set (to OUT.pcap, or a temporary file it removes), reads it\n"
		"           back and checks every field of every frame against what was built.\n"
		"\n"
		"keys: smac dmac vlan pcp dei ip(4|6) sip dip dscp ecn ttl ipid df flowlabel sport dport\n"
		"      se mig pkey fecn becn dqpn ackreq psn va rkey dmalen syndrome msn qkey srcqp imm\n"
		"      ieth swap cmp orig payload(length) badicrc(1) udpcsum(1) enable q0..q7 quanta\n"
		"exit: 0 all frames well-formed / check passed, 1 malformed frames / check failed,\n"
		"      2 usage or I/O error\n");
}

static int list_kinds(void)
{
	for (int op = 0; op < 256; op++) {
		const struct wire_opcode_info *info = wire_opcode_info((uint8_t)op);
		if (!info)
			continue;
		printf("0x%02x %-22s headers: BTH", op, info->name);
		for (int e = 0; e < WIRE_EXT_COUNT; e++)
			if (info->ext_mask & WIRE_EXT_BIT(e))
				printf(" %s@%u", wire_ext_name((enum wire_ext)e), info->offset[e]);
		printf("%s\n", info->flags & WIRE_OPF_PAYLOAD ? " payload" : "");
	}
	printf("pfc  (802.1Qbb)\npause (802.3x)\n");
	return 0;
}

/* ---- write ------------------------------------------------------------------------------------ */

static int dump_frames(const char *path, const struct frame_desc *descs, size_t n)
{
	static uint8_t buf[WIRE_MAX_FRAME];
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *dumper = dead ? pcap_dump_open(dead, path) : NULL;
	int rc = 0;

	if (!dumper) {
		fprintf(stderr, "roce-pcap: cannot write %s: %s\n", path, dead ? pcap_geterr(dead) : "pcap_open_dead failed");
		if (dead)
			pcap_close(dead);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < n; i++) {
		int len = frame_desc_build(&descs[i], buf, sizeof(buf));
		struct pcap_pkthdr h = {.ts = {.tv_sec = 1, .tv_usec = (suseconds_t)i}};

		if (len < 0) {
			fprintf(stderr, "roce-pcap: frame %zu: cannot build: %s\n", i + 1, wire_build_error_name(len));
			rc = EXIT_USAGE;
			break;
		}
		h.caplen = h.len = (bpf_u_int32)len;
		pcap_dump((u_char *)dumper, &h, buf);
	}
	pcap_dump_close(dumper);
	pcap_close(dead);
	return rc;
}

static int cmd_write(int argc, char **argv)
{
	struct frame_desc *descs;
	size_t n = 0, cap = 0;
	char err[256];
	int rc = 0;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (int i = 2; i < argc; i++)
		cap += strcmp(argv[i], "--all") ? 1 : MAX_ALL;
	descs = calloc(cap ? cap : 1, sizeof(*descs));
	if (!descs) {
		fprintf(stderr, "roce-pcap: out of memory for %zu frames\n", cap);
		return EXIT_USAGE;
	}
	for (int i = 2; i < argc && rc == 0; i++) {
		if (!strcmp(argv[i], "--all")) {
			n += frame_desc_all(descs + n, MAX_ALL);
		} else if (frame_desc_parse(argv[i], &descs[n], err, sizeof(err))) {
			fprintf(stderr, "roce-pcap: frame %d '%s': %s\n", i - 1, argv[i], err);
			rc = EXIT_USAGE;
		} else {
			n++;
		}
	}
	if (rc == 0)
		rc = dump_frames(argv[1], descs, n);
	free(descs);
	return rc;
}

/* ---- read ------------------------------------------------------------------------------------- */

struct read_opts {
	bool json;
	bool quiet;
	unsigned parse_flags;
};

typedef void (*frame_fn)(void *ctx, unsigned index, const uint8_t *frame, const struct frame_cut *cut,
			 const struct wire_pkt *p);

/* Frames of a capture by kind, and those it cut short (snap length). */
struct frame_counts {
	unsigned long kind[WIRE_KIND_COUNT];
	unsigned long cut;
};

/* Parses every frame of a capture, calling fn for each; counts kinds. Returns frames, -1 on error. */
static long for_each_frame(const char *path, unsigned flags, struct frame_counts *counts, frame_fn fn, void *ctx)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, errbuf);
	struct pcap_pkthdr *h;
	const u_char *data;
	unsigned index = 0;
	int rc;

	if (!pc) {
		fprintf(stderr, "roce-pcap: cannot read %s: %s\n", path, errbuf);
		return -1;
	}
	if (pcap_datalink(pc) != DLT_EN10MB) {
		fprintf(stderr, "roce-pcap: %s: link type %d is not Ethernet\n", path, pcap_datalink(pc));
		pcap_close(pc);
		return -1;
	}
	while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
		struct frame_cut cut;
		struct wire_pkt p;

		frame_cut_parse(data, h->caplen, h->len, flags, &p, &cut);
		counts->kind[p.kind]++;
		counts->cut += cut.place != CUT_NONE;
		fn(ctx, ++index, data, &cut, &p);
	}
	if (rc == PCAP_ERROR)
		fprintf(stderr, "roce-pcap: %s: %s\n", path, pcap_geterr(pc));
	pcap_close(pc);
	return rc == PCAP_ERROR ? -1 : (long)index;
}

static void print_frame(void *ctx, unsigned index, const uint8_t *frame, const struct frame_cut *cut,
			const struct wire_pkt *p)
{
	const struct read_opts *o = ctx;

	if (o->json)
		frame_print_json(stdout, index, frame, cut, p);
	else if (!o->quiet)
		frame_print_text(stdout, index, frame, cut, p);
}

static int cmd_read(int argc, char **argv)
{
	struct read_opts o = {.parse_flags = WIRE_PARSE_CHECK_ICRC | WIRE_PARSE_CHECK_IP_CSUM};
	struct frame_counts counts = {0};
	FILE *summary;
	const char *path = NULL;
	long n;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			o.json = true;
		else if (!strcmp(argv[i], "--no-icrc"))
			o.parse_flags &= ~WIRE_PARSE_CHECK_ICRC;
		else if (!strcmp(argv[i], "--quiet"))
			o.quiet = true;
		else if (!path && argv[i][0] != '-')
			path = argv[i];
		else {
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!path) {
		usage(stderr);
		return EXIT_USAGE;
	}
	n = for_each_frame(path, o.parse_flags, &counts, print_frame, &o);
	if (n < 0)
		return EXIT_USAGE;
	summary = o.json ? stderr : stdout;
	fprintf(summary, "%ld frames: roce %lu, cnp %lu, pfc %lu, pause %lu, other %lu, malformed %lu", n,
		counts.kind[WIRE_KIND_ROCE], counts.kind[WIRE_KIND_CNP], counts.kind[WIRE_KIND_PFC],
		counts.kind[WIRE_KIND_PAUSE], counts.kind[WIRE_KIND_OTHER], counts.kind[WIRE_KIND_MALFORMED]);
	if (counts.cut)
		fprintf(summary, "; %lu cut short by the capture, checked as far as captured", counts.cut);
	fputc('\n', summary);
	return counts.kind[WIRE_KIND_MALFORMED] ? EXIT_MALFORMED : 0;
}

/* ---- selfcheck -------------------------------------------------------------------------------- */

struct selfcheck {
	const struct frame_desc *descs;
	size_t n;
	unsigned failures;
};

static void check_frame(void *ctx, unsigned index, const uint8_t *frame, const struct frame_cut *cut,
			const struct wire_pkt *p)
{
	struct selfcheck *sc = ctx;
	const char *diff = index <= sc->n ? frame_desc_compare(&sc->descs[index - 1], frame, p) : "extra frame";

	if (!diff && cut->place != CUT_NONE)
		diff = "captured length";
	if (diff) {
		sc->failures++;
		printf("FAIL frame %u: %s differs: ", index, diff);
		frame_print_text(stdout, index, frame, cut, p);
	}
}

static int cmd_selfcheck(int argc, char **argv)
{
	static struct frame_desc descs[MAX_ALL];
	struct frame_counts counts = {0};
	char tmp[] = "/tmp/roce-selfcheck-XXXXXX";
	const char *path = argc > 1 ? argv[1] : NULL;
	struct selfcheck sc = {.descs = descs};
	long n;
	int rc;

	if (!path) {
		int fd = mkstemp(tmp);
		if (fd < 0) {
			perror("roce-pcap: mkstemp");
			return EXIT_USAGE;
		}
		close(fd);
		path = tmp;
	}
	sc.n = frame_desc_all(descs, MAX_ALL);
	rc = dump_frames(path, descs, sc.n);
	n = rc ? -1 : for_each_frame(path, WIRE_PARSE_CHECK_ICRC | WIRE_PARSE_CHECK_IP_CSUM, &counts, check_frame, &sc);
	if (path == tmp)
		unlink(tmp);
	if (n < 0)
		return EXIT_USAGE;
	if ((size_t)n != sc.n)
		sc.failures++;
	printf("selfcheck: built %zu frames (every opcode over IPv4/IPv6, untagged/802.1Q, CNP, PFC, PAUSE), "
	       "read back %ld: roce %lu, cnp %lu, pfc %lu, pause %lu, malformed %lu; CRC algorithm %s\n",
	       sc.n, n, counts.kind[WIRE_KIND_ROCE], counts.kind[WIRE_KIND_CNP], counts.kind[WIRE_KIND_PFC],
	       counts.kind[WIRE_KIND_PAUSE], counts.kind[WIRE_KIND_MALFORMED], wire_crc_alg_name());
	printf("selfcheck: %s\n", sc.failures ? "FAILED" : "every field of every frame decoded as built, every ICRC verified");
	return sc.failures ? EXIT_MALFORMED : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("roce-pcap %s\n", roce_version_string());
		return 0;
	}
	wire_crc_init();
	if (!strcmp(argv[1], "write"))
		return cmd_write(argc - 1, argv + 1);
	if (!strcmp(argv[1], "read"))
		return cmd_read(argc - 1, argv + 1);
	if (!strcmp(argv[1], "selfcheck"))
		return cmd_selfcheck(argc - 1, argv + 1);
	if (!strcmp(argv[1], "kinds"))
		return list_kinds();
	fprintf(stderr, "roce-pcap: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}

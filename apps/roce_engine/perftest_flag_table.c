/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The perftest front end's flags (docs/perftest.md): every flag of linux-rdma/perftest's parser
 * (src/perftest_parameters.c: its long options and getopt string), each either carried with
 * perftest's meaning, accepted with one line saying why it changes nothing here, or refused with
 * the reason; then roce-engine's own flags. One table holds them all: getopt's option list, the
 * usage text and docs/perftest.md's flag table are the same rows. The parser is perftest_flags.c.
 */
#include <string.h>

#include "perftest_flags.h"

static const struct pt_test pt_tests[] = {
	{ "write_bw", PT_WRITE, PT_BW }, { "write_lat", PT_WRITE, PT_LAT }, { "send_bw", PT_SEND, PT_BW },
	{ "send_lat", PT_SEND, PT_LAT }, { "read_bw", PT_READ, PT_BW },     { "read_lat", PT_READ, PT_LAT },
};

const char *const pt_conn_name[] = { "RC", "UC", "UD" };

const struct pt_test *pt_find_test(const char *name)
{
	for (unsigned i = 0; i < sizeof(pt_tests) / sizeof(pt_tests[0]); i++)
		if (!strcmp(name, pt_tests[i].name))
			return &pt_tests[i];
	return NULL;
}

/* ---- the table ---- */

/* Reasons shared by several rows. */
#define WHY_RAW "a raw Ethernet test's (raw_ethernet_bw/lat); the engine's frames are RoCEv2"
#define WHY_GPU "device memory (GPUDirect and the like); the engine's buffers are host mbufs"
#define WHY_AES "the HCA's AES-XTS crypto offload; the engine has no equivalent"
#define WHY_EXCHANGE "QPNs and addresses are configured on both ends; nothing is exchanged over TCP"
#define WHY_VERBS "a verbs posting or completion detail; the engine builds and counts every frame itself"
#define WHY_MR "memory registration; the engine sends from its own mbufs and places no data in memory"

static const struct pt_flag pt_flags[] = {
	/* perftest's long options, in its parser's order */
	{ "port", 'p', "PORT", PT_NOOP, F_NONE, "the TCP port of perftest's exchange; " WHY_EXCHANGE },
	{ "ib-dev", 'd', "DEV", PT_CARRIED, F_DEVICE, "the DPDK port to run on (see --device)" },
	{ "ib-port", 'i', "PORT", PT_NOOP, F_NONE, "a DPDK device is one port: -d names it" },
	{ "mtu", 'm', "MTU", PT_CARRIED, F_MTU, "IB path MTU 256..4096 (default the largest the port allows)" },
	{ "size", 's', "BYTES", PT_CARRIED, F_SIZE, "message size, K and M suffixes (default 65536 bw, 2 lat)" },
	{ "iters", 'n', "N", PT_CARRIED, F_ITERS, "messages per QP (default 5000 write_bw, 1000 the others)" },
	{ "tx-depth", 't', "N", PT_CARRIED, F_TX_DEPTH,
	  "messages in flight per QP, 1..15000 (default 128 bw, 1 lat; RC runs at most 128)" },
	{ "qp-timeout", 'u', "N", PT_CARRIED, F_QP_TIMEOUT, "RC retry timeout 4.096 us x 2^N (default 14)" },
	{ "sl", 'S', "SL", PT_NOOP, F_NONE,
	  "a service level reaches RoCE frames only as a VLAN tag's priority, and these frames are untagged" },
	{ "gid-index", 'x', "N", PT_NOOP, F_NONE, "GIDs follow the ports' addresses" },
	{ "all", 'a', NULL, PT_CARRIED, F_ALL, "every size 2, 4, ... 2^23 (lat write/send from 32; UD up to the MTU)" },
	{ "CPU-freq", 'F', NULL, PT_NOOP, F_NONE, "there is no CPU frequency warning to silence" },
	{ "connection", 'c', "RC|UC|UD", PT_CARRIED, F_CONN, "transport (default RC; UC: write, send; UD: send)" },
	{ "qp", 'q', "N", PT_CARRIED, F_QPS, "QPs (bw tests; default 1)" },
	{ "events", 'e', NULL, PT_NOOP, F_NONE, "the engine polls; there are no completion events to sleep on" },
	{ "vector", 'X', "N", PT_NOOP, F_NONE, "the engine polls; there are no completion vectors" },
	{ "inline_size", 'I', "BYTES", PT_NOOP, F_NONE, "inline data is " WHY_VERBS },
	{ "outs", 'o', "N", PT_CARRIED, F_OUTS, "READs in flight per QP (read tests; default the engine's most, 128)" },
	{ "mcg", 'g', NULL, PT_REFUSED, F_NONE, "multicast groups: the engine attaches no QP to a multicast group" },
	{ "comm_rdma_cm", 'z', NULL, PT_NOOP, F_NONE, "no rdma_cm: " WHY_EXCHANGE },
	{ "rdma_cm", 'R', NULL, PT_NOOP, F_NONE, "no rdma_cm: QPs are configured, not connected" },
	{ "tos", 'T', "TOS", PT_CARRIED, F_TOS, "the IP traffic class byte, as --tclass" },
	{ "hop_limit", 'L', "N", PT_REFUSED, F_NONE, WHY_RAW " (the engine's IP TTL is 64)" },
	{ "help", 'h', NULL, PT_CARRIED, F_HELP, "this text" },
	{ "MGID", 'M', "GID", PT_REFUSED, F_NONE, "multicast groups: the engine attaches no QP to a multicast group" },
	{ "rx-depth", 'r', "N", PT_NOOP, F_NONE, "the engine's receivers take every SEND; there is no receive queue" },
	{ "bidirectional", 'b', NULL, PT_CARRIED, F_BIDIR, "both ends send; the table sums both directions" },
	{ "cq-mod", 'Q', "N", PT_NOOP, F_NONE, "CQ moderation is " WHY_VERBS },
	{ "noPeak", 'N', NULL, PT_CARRIED, F_NO_PEAK, "no BW peak (printed as 0)" },
	{ "version", 'V', NULL, PT_CARRIED, F_VERSION, "print the version" },
	{ "report-cycles", 'C', NULL, PT_CARRIED, F_CYCLES, "latency in TSC cycles instead of microseconds" },
	{ "report-histogrm", 'H', NULL, PT_CARRIED, F_HIST, "print every iteration's latency, sorted" },
	{ "report-histogram", 0, NULL, PT_CARRIED, F_HIST, "the same (the spelling of perftest's usage text)" },
	{ "report-unsorted", 'U', NULL, PT_CARRIED, F_UNSORTED, "print every iteration's latency, in order" },
	{ "atomic_type", 'A', "TYPE", PT_REFUSED, F_NONE, "atomic_bw and atomic_lat's; these tests are not atomic" },
	{ "dualport", 'O', NULL, PT_REFUSED, F_NONE, "needs a two-port HCA; the virtual topology's two ports are the two ends" },
	{ "post_list", 'l', "N", PT_NOOP, F_NONE, "post lists are " WHY_VERBS },
	{ "duration", 'D', "SEC", PT_CARRIED, F_DURATION, "run this long instead of -n (measured between the margins)" },
	{ "margin", 'f', "SEC", PT_CARRIED, F_MARGIN, "with -D: leave this much out at each end (default D/4)" },
	{ "source_mac", 'B', "MAC", PT_CARRIED, F_SRC_MAC, "this port's MAC (--src-mac)" },
	{ "dest_mac", 'E', "MAC", PT_CARRIED, F_DST_MAC, "the far end's MAC (--dst-mac)" },
	{ "dest_ip", 'J', "IP", PT_CARRIED, F_DST_IP, "the far end's address (--dst-ip)" },
	{ "source_ip", 'j', "IP", PT_CARRIED, F_SRC_IP, "this port's address (--src-ip)" },
	{ "dest_port", 'K', "PORT", PT_CARRIED, F_DPORT, "UDP destination port: RoCEv2's 4791 only" },
	{ "source_port", 'k', "PORT", PT_CARRIED, F_SPORT, "UDP source port of every QP (default: from the QPNs)" },
	{ "ethertype", 0, "TYPE", PT_REFUSED, F_NONE, WHY_RAW },
	{ "limit_bw", 'w', "BW", PT_CARRIED, F_LIMIT_BW, "fail (exit 6) when BW average is below this" },
	{ "limit_msgrate", 'y', "MPPS", PT_CARRIED, F_LIMIT_MSG_RATE, "fail (exit 6) when MsgRate is below this" },
	{ "server", 'Z', NULL, PT_CARRIED, F_SERVER, "be the far end (with --device); see below" },
	{ "client", 'P', NULL, PT_NOOP, F_NONE, "the client is the end given the server's address" },
	{ "mac_fwd", 'v', NULL, PT_REFUSED, F_NONE, WHY_RAW },
	{ "use_rss", 'G', NULL, PT_REFUSED, F_NONE, "raw Ethernet RSS, which perftest itself refuses" },
	{ "report-counters", 'W', "LIST", PT_REFUSED, F_NONE,
	  "reads an HCA's sysfs counters; the engine's own are in its report (runs[].ports[])" },
	{ "force-link", 0, "IB|Ethernet", PT_CARRIED, F_FORCE_LINK, "Ethernet only (RoCE)" },
	{ "remote_mac", 0, "MAC", PT_CARRIED, F_DST_MAC, "the far end's MAC (--dst-mac)" },
	{ "local_mac", 0, "MAC", PT_CARRIED, F_SRC_MAC, "this port's MAC (--src-mac)" },
	{ "remote_ip", 0, "IP", PT_CARRIED, F_DST_IP, "the far end's address (--dst-ip)" },
	{ "local_ip", 0, "IP", PT_CARRIED, F_SRC_IP, "this port's address (--src-ip)" },
	{ "remote_port", 0, "PORT", PT_CARRIED, F_DPORT, "as -K" },
	{ "local_port", 0, "PORT", PT_CARRIED, F_SPORT, "as -k" },
	{ "run_infinitely", 0, NULL, PT_CARRIED, F_RUN_INF, "bw: a row every -D seconds (default 5) until Ctrl-C" },
	{ "report_gbits", 0, NULL, PT_CARRIED, F_GBITS, "bandwidth in Gb/s (10^9 bit/s) instead of MB/s (2^20 byte/s)" },
	{ "use-srq", 0, NULL, PT_NOOP, F_NONE, "the engine's receivers take every SEND; there is no receive queue" },
	{ "no_lock", 0, NULL, PT_NOOP, F_NONE, "a verbs locking detail; the engine's lcores share no QP" },
	{ "use-null-mr", 0, NULL, PT_NOOP, F_NONE, WHY_MR },
	{ "report-both", 0, NULL, PT_CARRIED, F_REPORT_BOTH, "with -b: also each direction on its own" },
	{ "reversed", 0, NULL, PT_CARRIED, F_REVERSED, "the far end sends, this end answers" },
	{ "pkey_index", 0, "N", PT_NOOP, F_NONE, "there is no P_Key table: frames carry the default P_Key 0xFFFF" },
	{ "tcp", 0, NULL, PT_REFUSED, F_NONE, WHY_RAW },
	{ "burst_size", 0, "N", PT_CARRIED, F_BURST, "with --rate_limit: the engine paces every packet, so no bursts" },
	{ "typical_pkt_size", 0, "BYTES", PT_REFUSED, F_NONE, "the packet pacing (PP) rate limiter's, " WHY_RAW },
	{ "rate_limit", 0, "RATE", PT_CARRIED, F_RATE, "bw: send at most RATE (--rate_units, default Gb/s of payload)" },
	{ "rate_limit_type", 0, "HW|SW", PT_CARRIED, F_RATE_TYPE, "both pace every packet here; PP is raw Ethernet's" },
	{ "rate_units", 0, "M|g|p", PT_CARRIED, F_RATE_UNITS, "MiB/s or Gb/s of payload, or messages per second" },
	{ "output", 0, "WHAT", PT_CARRIED, F_OUTPUT, "print one number: bandwidth, message_rate (bw) or latency (lat)" },
	{ "cpu_util", 0, NULL, PT_CARRIED, F_CPU_UTIL, "with -D: CPU utilisation (user time, % of all CPUs)" },
	{ "out_json", 0, NULL, PT_CARRIED, F_OUT_JSON, "write perftest's JSON report (perftest_out.json)" },
	{ "out_json_file", 0, "FILE", PT_CARRIED, F_OUT_JSON_FILE, "that JSON report's path" },
	{ "latency_gap", 0, "US", PT_CARRIED, F_LATENCY_GAP, "lat: start messages at least US microseconds apart" },
	{ "flow_label", 0, "LIST", PT_NOOP, F_NONE,
	  "IPv6 flow labels follow the QPNs (the engine's entropy); IPv4 has none" },
	{ "retry_count", 0, "N", PT_CARRIED, F_RETRY_COUNT, "RC retries before a QP errors (default 7)" },
	{ "dont_xchg_versions", 0, NULL, PT_NOOP, F_NONE, WHY_EXCHANGE },
	{ "payload_file_path", 0, "FILE", PT_REFUSED, F_NONE,
	  "payload patterns: the engine's payloads are zeros (and latency probes)" },
	{ "use_cuda", 0, "ID", PT_REFUSED, F_NONE, WHY_GPU },
	{ "use_cuda_bus_id", 0, "ID", PT_REFUSED, F_NONE, WHY_GPU },
	{ "use_cuda_dmabuf", 0, NULL, PT_REFUSED, F_NONE, WHY_GPU },
	{ "use_cuda_pcie_mapping", 0, NULL, PT_REFUSED, F_NONE, WHY_GPU },
	{ "use_data_direct", 0, NULL, PT_REFUSED, F_NONE, WHY_GPU },
	{ "cuda_mem_type", 0, "TYPE", PT_REFUSED, F_NONE, WHY_GPU },
	{ "use_musa", 0, "ID", PT_REFUSED, F_NONE, WHY_GPU },
	{ "use_musa_bus_id", 0, "ID", PT_REFUSED, F_NONE, WHY_GPU },
	{ "use_musa_dmabuf", 0, NULL, PT_REFUSED, F_NONE, WHY_GPU },
	{ "use_musa_pcie_mapping", 0, NULL, PT_REFUSED, F_NONE, WHY_GPU },
	{ "use_rocm", 0, "ID", PT_REFUSED, F_NONE, WHY_GPU },
	{ "use_rocm_dmabuf", 0, NULL, PT_REFUSED, F_NONE, WHY_GPU },
	{ "use_neuron", 0, "ID", PT_REFUSED, F_NONE, WHY_GPU },
	{ "use_neuron_dmabuf", 0, NULL, PT_REFUSED, F_NONE, WHY_GPU },
	{ "use_hl", 0, "ID", PT_REFUSED, F_NONE, WHY_GPU },
	{ "use_mlu", 0, "ID", PT_REFUSED, F_NONE, WHY_GPU },
	{ "use_mlu_dmabuf", 0, NULL, PT_REFUSED, F_NONE, WHY_GPU },
	{ "use_opencl", 0, "ID", PT_REFUSED, F_NONE, WHY_GPU },
	{ "opencl_platform_id", 0, "ID", PT_REFUSED, F_NONE, WHY_GPU },
	{ "use_ib_dm_dmabuf", 0, "DEV", PT_REFUSED, F_NONE, "the HCA's device memory; " WHY_GPU },
	{ "gpu_touch", 0, "MODE", PT_REFUSED, F_NONE, WHY_GPU },
	{ "mmap", 0, "FILE", PT_REFUSED, F_NONE, "an mmap'd file as the buffer; " WHY_MR },
	{ "mmap-offset", 0, "N", PT_REFUSED, F_NONE, "an mmap'd file as the buffer; " WHY_MR },
	{ "ipv6", 0, NULL, PT_CARRIED, F_IPV6, "IPv6 GIDs: IPv6 addresses (the virtual topology's fd00:70::1, ::2)" },
	{ "ipv6-addr", 0, NULL, PT_NOOP, F_NONE, "IPv6 for perftest's exchange; " WHY_EXCHANGE },
	{ "raw_ipv6", 0, NULL, PT_REFUSED, F_NONE, WHY_RAW },
	{ "report-per-port", 0, NULL, PT_REFUSED, F_NONE, "dual-port mode's (-O)" },
	{ "odp", 0, NULL, PT_NOOP, F_NONE, "on-demand paging is " WHY_MR },
	{ "use_hugepages", 0, NULL, PT_CARRIED, F_HUGE, "hugepages (as --huge)" },
	{ "use_old_post_send", 0, NULL, PT_NOOP, F_NONE, "which verbs call posts is " WHY_VERBS },
	{ "promiscuous", 0, NULL, PT_REFUSED, F_NONE, WHY_RAW },
	{ "sniffer", 0, NULL, PT_REFUSED, F_NONE, WHY_RAW " (the engine captures with --capture)" },
	{ "raw_mcast", 0, NULL, PT_REFUSED, F_NONE, WHY_RAW },
	{ "mr_per_qp", 0, NULL, PT_NOOP, F_NONE, WHY_MR },
	{ "dlid", 0, "LID", PT_REFUSED, F_NONE, "an InfiniBand LID; RoCE addresses by GID (IP)" },
	{ "tclass", 0, "N", PT_CARRIED, F_TCLASS, "IP traffic class byte: DSCP N>>2, ECN N&3 (default 106)" },
	{ "wait_destroy", 0, "SEC", PT_CARRIED, F_WAIT_DESTROY, "wait this long after the run before exiting" },
	{ "flows", 0, "N", PT_REFUSED, F_NONE, WHY_RAW },
	{ "flows_burst", 0, "N", PT_REFUSED, F_NONE, WHY_RAW },
	{ "reply_every", 0, "N", PT_REFUSED, F_NONE, WHY_RAW },
	{ "perform_warm_up", 0, NULL, PT_NOOP, F_NONE, "there are no caches of memory regions to warm" },
	{ "vlan_en", 0, NULL, PT_REFUSED, F_NONE, WHY_RAW " (a VLAN on RoCE: a config's flows.vlan)" },
	{ "vlan_pcp", 0, "PCP", PT_REFUSED, F_NONE, WHY_RAW " (a VLAN on RoCE: a config's flows.vlan, pcp)" },
	{ "recv_post_list", 0, "N", PT_NOOP, F_NONE, "the engine's receivers take every SEND; there is no receive queue" },
	{ "aes_xts", 0, NULL, PT_REFUSED, F_NONE, WHY_AES },
	{ "encrypt_on_tx", 0, NULL, PT_REFUSED, F_NONE, WHY_AES },
	{ "sig_before", 0, NULL, PT_REFUSED, F_NONE, WHY_AES },
	{ "aes_block_size", 0, "N", PT_REFUSED, F_NONE, WHY_AES },
	{ "kek_path", 0, "FILE", PT_REFUSED, F_NONE, WHY_AES },
	{ "credentials_path", 0, "FILE", PT_REFUSED, F_NONE, WHY_AES },
	{ "data_enc_keys_number", 0, "N", PT_REFUSED, F_NONE, WHY_AES },
	{ "data_enc_key_app_path", 0, "FILE", PT_REFUSED, F_NONE, WHY_AES },
	{ "log_dci_streams", 0, "N", PT_REFUSED, F_NONE, "DC transport's (-c DC), which the engine does not have" },
	{ "log_active_dci_streams", 0, "N", PT_REFUSED, F_NONE, "DC transport's (-c DC), which the engine does not have" },
	{ "disable_pcie_relaxed", 0, NULL, PT_NOOP, F_NONE, "the HCA's PCIe ordering; the engine places no data in memory" },
	{ "use_ooo", 0, NULL, PT_NOOP, F_NONE, "out-of-order data placement; the engine places no data in memory" },
	{ "congest_type", 0, "TYPE", PT_REFUSED, F_NONE,
	  "a HiSilicon HCA's congestion control setting; the engine's is a config's flows.cc (docs/cc.md)" },
	{ "bind_source_ip", 0, "IP", PT_NOOP, F_NONE, "the source of perftest's exchange; " WHY_EXCHANGE },
	{ "write_with_imm", 0, NULL, PT_CARRIED, F_WRITE_IMM, "write tests: RDMA WRITE with immediate" },
	{ "send_with_imm", 0, NULL, PT_CARRIED, F_SEND_IMM, "send tests: SEND with immediate" },
	{ "no_enhanced_reorder", 0, NULL, PT_NOOP, F_NONE, "a receiver's out-of-order WRs; there is no receive queue" },
	{ "unsolicited_write", 0, NULL, PT_REFUSED, F_NONE, "SRD transport's, which the engine does not have" },
	{ "connectionless", 0, NULL, PT_REFUSED, F_NONE, "a multicast UD server's (-g)" },
	{ "cqe_poll", 0, "N", PT_NOOP, F_NONE, "completion polling is " WHY_VERBS },
	{ "tph_mem", 0, "TYPE", PT_REFUSED, F_NONE, "PCIe TLP processing hints of the HCA's memory accesses" },
	{ "cpu_id", 0, "N", PT_REFUSED, F_NONE, "PCIe TLP processing hints of the HCA's memory accesses" },
	{ "ph", 0, "N", PT_REFUSED, F_NONE, "PCIe TLP processing hints of the HCA's memory accesses" },
	{ "disable_dynamic_polling", 0, NULL, PT_NOOP, F_NONE, "completion polling is " WHY_VERBS },
	{ "sig_offload", 0, NULL, PT_REFUSED, F_NONE, "the HCA's T10-DIF signature offload; the engine has no equivalent" },
	{ "data_validation", 0, NULL, PT_REFUSED, F_NONE, "checks data placed in memory; the engine places none" },
	{ "data_validation_debug", 0, NULL, PT_REFUSED, F_NONE, "checks data placed in memory; the engine places none" },
	{ "pin_cores", 0, "LIST", PT_CARRIED, F_PIN_CORES, "the CPUs to run on (as --lcores)" },
	{ "numa_node", 0, "N", PT_CARRIED, F_NUMA_NODE, "run on that NUMA node's CPUs" },
	{ "disable_numa", 0, NULL, PT_NOOP, F_NONE, "no NUMA node is chosen without --numa_node" },
	/* roce-engine's */
	{ "report", 0, "FILE.json", PT_OWN, F_REPORT, "the JSON report (the engine's per run, with a perftest object)" },
	{ "json", 0, NULL, PT_OWN, F_JSON, "print that JSON instead of the table" },
	{ "capture", 0, "FILE.pcapng", PT_OWN, F_CAPTURE, "capture the requester port's frames (both directions)" },
	{ "lcores", 0, "LIST", PT_OWN, F_LCORES, "EAL lcores: main, then the requester's, then the far end's" },
	{ "keep", 0, NULL, PT_OWN, F_KEEP, "keep the generated config, the engine's log and files" },
	{ "device", 0, "DEV", PT_OWN, F_DEVICE, "ring:LINK:a|b, net_<driver><n> (a vdev) or a PCI address" },
	{ "vdev", 0, "DEV", PT_OWN, F_DEVICE, "the same as --device, for a vdev" },
	{ "vdev-args", 0, "ARGS", PT_OWN, F_VDEV_ARGS, "the vdev's key=value,... arguments" },
	{ "src-ip", 0, "IP", PT_OWN, F_SRC_IP, "this port's IPv4 or IPv6 address (required with --device)" },
	{ "src-mac", 0, "MAC", PT_OWN, F_SRC_MAC, "this port's MAC (default the PMD's)" },
	{ "dst-ip", 0, "IP", PT_OWN, F_DST_IP, "the far end's address (or as the last argument)" },
	{ "dst-mac", 0, "MAC", PT_OWN, F_DST_MAC, "the far end's MAC (required: no ARP)" },
	{ "link-gbps", 0, "N", PT_OWN, F_LINK, "the link speed (virtual devices report none: default 100)" },
	{ "port-mtu", 0, "N", PT_OWN, F_PORT_MTU, "the port's IP MTU, 576..9000 (default 1500)" },
	{ "qpn", 0, "N", PT_OWN, F_QPN, "first QPN here (default 0x100; the same on both ends)" },
	{ "dest-qpn", 0, "N", PT_OWN, F_DEST_QPN, "first QPN there (default 0x200)" },
	{ "huge", 0, NULL, PT_OWN, F_HUGE, "use hugepages (physical NICs need them)" },
	{ "eal-arg", 0, "ARG", PT_OWN, F_EAL_ARG, "one more EAL argument (repeat)" },
};

#define PT_N_FLAGS (sizeof(pt_flags) / sizeof(pt_flags[0]))

const char *pt_flag_name(const struct pt_flag *f)
{
	static char buf[64];

	if (f->letter)
		snprintf(buf, sizeof(buf), "-%c/--%s", f->letter, f->name);
	else
		snprintf(buf, sizeof(buf), "--%s", f->name);
	return buf;
}

static void pt_usage_rows(FILE *out, enum pt_flag_kind kind)
{
	for (unsigned i = 0; i < PT_N_FLAGS; i++) {
		const struct pt_flag *f = &pt_flags[i];
		char left[64];

		if (f->kind != kind)
			continue;
		snprintf(left, sizeof(left), "%c%c%c --%s%s%s", f->letter ? '-' : ' ', f->letter ? f->letter : ' ',
			 f->letter ? ',' : ' ', f->name, f->arg ? "=" : "", f->arg ? f->arg : "");
		fprintf(out, "  %-32s %s\n", left, f->text);
	}
}

static void pt_usage_names(FILE *out, enum pt_flag_kind kind)
{
	unsigned col = 2;

	fprintf(out, " ");
	for (unsigned i = 0; i < PT_N_FLAGS; i++) {
		const struct pt_flag *f = &pt_flags[i];
		const char *name = pt_flag_name(f);

		if (f->kind != kind)
			continue;
		if (col + strlen(name) + 1 > 100) {
			fprintf(out, "\n ");
			col = 2;
		}
		col += (unsigned)fprintf(out, " %s", name);
	}
	fprintf(out, "\n");
}

void pt_usage(FILE *out, const char *test)
{
	fprintf(out, "usage: roce-engine %s [flags] [DST_IP]\n\n"
		     "perftest's flags, with perftest's meaning (docs/perftest.md):\n", test);
	pt_usage_rows(out, PT_CARRIED);
	fprintf(out, "\naccepted, each with a line saying why it changes nothing here:\n");
	pt_usage_names(out, PT_NOOP);
	fprintf(out, "\nrefused, each with the reason (an HCA feature or another perftest test's):\n");
	pt_usage_names(out, PT_REFUSED);
	fprintf(out, "\nroce-engine's (the far end of --device runs --server):\n");
	pt_usage_rows(out, PT_OWN);
	fprintf(out, "\nexit status: 0 done, 2 bad flags, 3..5 as roce-engine (docs/engine.md), 6 below a\n"
		     "-w/-y limit, 7 nothing measured\n");
}

/* ---- getopt ---- */

/* getopt's tables, from pt_flags: a long option's val is its row + 256 (or its letter). */
const char *pt_getopt_tables(const struct option **longopts_out)
{
	static struct option longopts[PT_N_FLAGS + 1];
	static char shortopts[2 * PT_N_FLAGS + 2];
	unsigned n = 0;

	*longopts_out = longopts;
	if (shortopts[0])
		return shortopts;

	for (unsigned i = 0; i < PT_N_FLAGS; i++) {
		const struct pt_flag *f = &pt_flags[i];
		longopts[i] = (struct option){ f->name, f->arg ? required_argument : no_argument, NULL,
					       f->letter ? f->letter : (int)(256 + i) };
		if (f->letter && !strchr(shortopts, f->letter)) {
			shortopts[n++] = f->letter;
			if (f->arg)
				shortopts[n++] = ':';
		}
	}
	longopts[PT_N_FLAGS] = (struct option){ NULL, 0, NULL, 0 };
	shortopts[n] = 0;
	return shortopts;
}

const struct pt_flag *pt_flag_of(int ch)
{
	if (ch >= 256)
		return (unsigned)(ch - 256) < PT_N_FLAGS ? &pt_flags[ch - 256] : NULL;
	for (unsigned i = 0; i < PT_N_FLAGS; i++)
		if (pt_flags[i].letter == ch)
			return &pt_flags[i];
	return NULL;
}


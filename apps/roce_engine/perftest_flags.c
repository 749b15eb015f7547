/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The perftest front end's command line (docs/perftest.md): every flag of linux-rdma/perftest's
 * parser (src/perftest_parameters.c: its long options and getopt string), each either carried
 * with perftest's meaning, accepted with one line saying why it changes nothing here, or refused
 * with the reason; then roce-engine's own flags. One table holds them all: getopt's option list,
 * the usage text and docs/perftest.md's flag table are the same rows.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <unistd.h>

#include "config.h"
#include "perftest_opts.h"
#include "roce_version.h"
#include "wire.h"

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

enum pt_flag_kind { PT_CARRIED, PT_NOOP, PT_REFUSED, PT_OWN };

/* Flags with an effect, by what they do. */
enum pt_flag_id {
	F_NONE, F_ALL, F_BIDIR, F_CONN, F_CYCLES, F_DEVICE, F_DURATION, F_MARGIN, F_HELP, F_HIST, F_MTU, F_ITERS,
	F_NO_PEAK, F_OUTS, F_QPS, F_SIZE, F_TX_DEPTH, F_TOS, F_QP_TIMEOUT, F_UNSORTED, F_VERSION, F_LIMIT_BW,
	F_LIMIT_MSG_RATE, F_SRC_MAC, F_DST_MAC, F_DST_IP, F_SRC_IP, F_SPORT, F_DPORT, F_SERVER, F_FORCE_LINK,
	F_RUN_INF, F_GBITS, F_REPORT_BOTH, F_REVERSED, F_RATE, F_RATE_TYPE, F_RATE_UNITS, F_BURST, F_OUTPUT,
	F_CPU_UTIL, F_OUT_JSON, F_OUT_JSON_FILE, F_LATENCY_GAP, F_RETRY_COUNT, F_IPV6, F_HUGE, F_TCLASS,
	F_WAIT_DESTROY, F_WRITE_IMM, F_SEND_IMM, F_PIN_CORES, F_NUMA_NODE,
	/* roce-engine's own */
	F_REPORT, F_JSON, F_CAPTURE, F_LCORES, F_KEEP, F_VDEV_ARGS, F_LINK, F_PORT_MTU, F_QPN, F_DEST_QPN,
	F_EAL_ARG,
};

struct pt_flag {
	const char *name;           /* the long option, as perftest spells it */
	char letter;                /* its short option, or 0 */
	const char *arg;            /* the argument's name in the usage text; NULL: none */
	enum pt_flag_kind kind;
	enum pt_flag_id id;
	const char *text;           /* carried: the usage line; no-op or refused: why */
};

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

/* The name a message gives a flag: "-s/--size" or "--tclass". */
static const char *pt_flag_name(const struct pt_flag *f)
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

static void pt_usage(FILE *out, const char *test)
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

/* ---- values ---- */

static int pt_bad(const struct pt_opts *o, const char *flag, const char *value, const char *allowed)
{
	fprintf(stderr, "%s: %s: '%s' %s\n", o->prog, flag, value, allowed);
	return -1;
}

static int pt_usage_error(const struct pt_opts *o, const char *msg)
{
	fprintf(stderr, "%s: %s\n", o->prog, msg);
	return -1;
}

static int pt_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int pt_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v <= max))
		return -1;
	*out = v;
	return 0;
}

/* perftest's -s: a number, or one with a K (2^10) or M (2^20) suffix. */
static int pt_parse_size(const char *s, uint64_t *out)
{
	char digits[32];
	size_t len = strlen(s);
	uint64_t factor = 1, v;

	if (len == 0 || len >= sizeof(digits))
		return -1;
	memcpy(digits, s, len + 1);
	if (digits[len - 1] == 'K' || digits[len - 1] == 'M') {
		factor = digits[len - 1] == 'K' ? 1024 : 1048576;
		digits[len - 1] = 0;
	}
	if (pt_parse_u64(digits, 1, PT_MAX_SIZE, &v) || v > PT_MAX_SIZE / factor)
		return -1;
	*out = v * factor;
	return 0;
}

/* Strings that go into the generated config between quotes. */
static int pt_config_safe(const struct pt_opts *o, const char *flag, const char *s)
{
	if (!*s)
		return pt_bad(o, flag, s, "is empty");
	for (const char *p = s; *p; p++)
		if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20 || *p == 0x7f)
			return pt_bad(o, flag, s, "has a quote, a backslash or a control character");
	return 0;
}

static int pt_check_mac(const struct pt_opts *o, const char *flag, const char *s)
{
	unsigned b[6];
	char tail;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6 ||
	    strlen(s) != 17)
		return pt_bad(o, flag, s, "is not a MAC address (xx:xx:xx:xx:xx:xx)");
	return 0;
}

/* IPv4 or IPv6 into a 16-byte GID (IPv4-mapped, as RoCEv2 GIDs are); -1 if neither. */
int pt_ip_to_gid(const char *s, uint8_t gid[16], bool *v6)
{
	struct in_addr a4;

	memset(gid, 0, 16);
	if (inet_pton(AF_INET, s, &a4) == 1) {
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &a4, 4);
		*v6 = false;
		return 0;
	}
	*v6 = true;
	return inet_pton(AF_INET6, s, gid) == 1 ? 0 : -1;
}

static int pt_check_ip(const struct pt_opts *o, const char *flag, const char *s)
{
	uint8_t gid[16];
	bool v6;

	return pt_ip_to_gid(s, gid, &v6) ? pt_bad(o, flag, s, "is not an IPv4 or IPv6 address") : 0;
}

static int pt_parse_conn(struct pt_opts *o, const char *s)
{
	static const char *const others[][2] = {
		{ "XRC", "is not available here: XRC needs an HCA's shared receive queues; the engine has RC, UC and UD" },
		{ "DC", "is not available here: DC (dynamically connected) is an HCA's transport; the engine has RC, UC "
			"and UD" },
		{ "SRD", "is not available here: SRD is an EFA adapter's transport; the engine has RC, UC and UD" },
		{ "RawEth", "is not available here: raw Ethernet is raw_ethernet_bw's; the engine's frames are RoCEv2" },
	};

	for (unsigned i = 0; i < 3; i++)
		if (!strcasecmp(s, pt_conn_name[i])) {
			o->conn = (enum pt_conn)i;
			return 0;
		}
	for (unsigned i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if (!strcasecmp(s, others[i][0]))
			return pt_bad(o, "-c/--connection", s, others[i][1]);
	return pt_bad(o, "-c/--connection", s, "is not RC, UC or UD");
}

/* EAL's -l syntax, to find the main lcore and the workers: ids and ranges joined by commas. */
static int pt_parse_lcores(struct pt_opts *o, const char *flag, const char *s)
{
	bool seen[128] = { false };
	unsigned ids[3], n = 0;
	const char *p = s;

	if (strlen(s) >= sizeof(o->lcore_list))
		return pt_bad(o, flag, s, "is too long");
	while (*p) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;

		if (end == p || a >= 128)
			return pt_bad(o, flag, s, "is not an lcore list (e.g. 0-1 or 2,4; ids 0..127)");
		p = end;
		if (*p == '-') {
			b = strtoul(++p, &end, 10);
			if (end == p || b >= 128 || b < a)
				return pt_bad(o, flag, s, "is not an lcore list (e.g. 0-1 or 2,4; ids 0..127)");
			p = end;
		}
		for (unsigned long i = a; i <= b; i++)
			seen[i] = true;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return pt_bad(o, flag, s, "is not an lcore list (e.g. 0-1 or 2,4; ids 0..127)");
	}
	for (unsigned i = 0; i < 128 && n < 3; i++)
		if (seen[i])
			ids[n++] = i;
	if (n < 2)
		return pt_bad(o, flag, s, "needs two lcores at least: the main lcore and a worker");
	o->main_lcore = ids[0];
	o->lcore_local = ids[1];
	o->lcore_remote = n > 2 ? ids[2] : ids[1];
	snprintf(o->lcore_list, sizeof(o->lcore_list), "%s", s);
	return 0;
}

/* perftest's --pin_cores takes "0-3,8" and "0, 1, 2": EAL's list without the spaces. */
static int pt_parse_pin_cores(struct pt_opts *o, const char *s)
{
	char list[128];
	size_t n = 0;

	for (const char *p = s; *p && n < sizeof(list) - 1; p++)
		if (*p != ' ')
			list[n++] = *p;
	list[n] = 0;
	return pt_parse_lcores(o, "--pin_cores", list);
}

/* The first two CPUs of a set that this process may run on (taskset is respected). */
static int pt_lcores_from_set(struct pt_opts *o, const cpu_set_t *want, const char *what)
{
	cpu_set_t allowed;
	char list[32];
	int found[2], n = 0;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		CPU_ZERO(&allowed);
	for (int c = 0; c < 128 && n < 2; c++)
		if (CPU_ISSET(c, &allowed) && (!want || CPU_ISSET(c, want)))
			found[n++] = c;
	if (n < 2) {
		fprintf(stderr, "%s: the engine needs two CPUs (a main lcore and a worker)%s; give --lcores\n", o->prog,
			what);
		return -1;
	}
	snprintf(list, sizeof(list), "%d,%d", found[0], found[1]);
	return pt_parse_lcores(o, "--lcores", list);
}

/* --numa_node N: the node's CPUs, from sysfs (/sys/devices/system/node/nodeN/cpulist). */
static int pt_parse_numa_node(struct pt_opts *o, const char *arg)
{
	char path[96], line[1024], what[64];
	cpu_set_t want;
	uint64_t node;
	FILE *f;

	if (pt_parse_u64(arg, 0, 1023, &node))
		return pt_bad(o, "--numa_node", arg, "is not a NUMA node number");
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%" PRIu64 "/cpulist", node);
	f = fopen(path, "r");
	if (!f)
		return pt_bad(o, "--numa_node", arg, "is not a NUMA node of this machine (no /sys/devices/system/node/node<N>)");
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	CPU_ZERO(&want);
	for (char *p = line; *p && *p != '\n';) { /* "0-3,8,10-11" */
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;
		if (end == p)
			break;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		for (unsigned long c = a; c <= b && c < CPU_SETSIZE; c++)
			CPU_SET(c, &want);
		p = *end == ',' ? end + 1 : end;
	}
	snprintf(what, sizeof(what), " on NUMA node %" PRIu64, node);
	return pt_lcores_from_set(o, &want, what);
}

/* One line for a flag accepted without its perftest effect (printed with the header). */
static void __attribute__((format(printf, 2, 3))) pt_note(struct pt_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (o->n_notes >= PT_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(o->notes[o->n_notes++], sizeof(o->notes[0]), fmt, ap);
	va_end(ap);
}

/* ---- carried flags ---- */

/* Flags that take a number. 1: not one of them. */
static int pt_numeric_flag(struct pt_opts *o, const struct pt_flag *f, const char *arg)
{
	const char *name = pt_flag_name(f);
	uint64_t v;

	switch (f->id) {
	case F_SIZE:
		if (pt_parse_size(arg, &o->size))
			return pt_bad(o, name, arg, "is not a size in bytes, 1..1073741824 (K and M suffixes allowed)");
		o->size_set = true;
		return 0;
	case F_ITERS:
		if (pt_parse_u64(arg, 1, 4294967296ULL, &o->iters))
			return pt_bad(o, name, arg, "is not a number of iterations, 1..4294967296");
		o->iters_set = true;
		return 0;
	case F_DURATION:
		if (pt_parse_double(arg, 0.001, 1e6, &o->duration_s))
			return pt_bad(o, name, arg, "is not a duration in seconds, 0.001..1000000");
		return 0;
	case F_MARGIN:
		if (pt_parse_double(arg, 0, 1e6, &o->margin_s))
			return pt_bad(o, name, arg, "is not a margin in seconds, 0 or more");
		return 0;
	case F_QPS:
		if (pt_parse_u64(arg, 1, 65536, &v))
			return pt_bad(o, name, arg, "is not a number of QPs, 1..65536");
		o->qps = (unsigned)v;
		return 0;
	case F_MTU:
		if (pt_parse_u64(arg, 256, 4096, &v) || (v & (v - 1)))
			return pt_bad(o, name, arg, "is not an IB MTU: 256, 512, 1024, 2048 or 4096");
		o->mtu = (unsigned)v;
		return 0;
	case F_TX_DEPTH:
		if (pt_parse_u64(arg, 1, 15000, &v))
			return pt_bad(o, name, arg, "is not a TX depth, 1..15000");
		o->tx_depth = (unsigned)v;
		return 0;
	case F_OUTS:
		if (pt_parse_u64(arg, 1, 65535, &v))
			return pt_bad(o, name, arg, "is not a number of outstanding READs, 1 or more");
		o->outs = (unsigned)v;
		return 0;
	case F_QP_TIMEOUT:
		if (pt_parse_u64(arg, 0, 31, &v))
			return pt_bad(o, name, arg, "is not a QP timeout exponent, 0..31");
		o->qp_timeout = (int)v;
		return 0;
	case F_RETRY_COUNT:
		if (pt_parse_u64(arg, 0, 1000, &v))
			return pt_bad(o, name, arg, "is not a retry count, 0..1000");
		o->retry_count = (int)v;
		return 0;
	case F_SPORT:
		if (pt_parse_u64(arg, 1, 65535, &v))
			return pt_bad(o, name, arg, "is not a UDP port, 1..65535");
		o->udp_sport = (int)v;
		return 0;
	case F_DPORT:
		if (pt_parse_u64(arg, 1, 65535, &v) || v != 4791)
			return pt_bad(o, name, arg, "is not 4791: RoCEv2 frames go to UDP port 4791");
		return 0;
	case F_TOS:
	case F_TCLASS:
		if (pt_parse_u64(arg, 0, 255, &v))
			return pt_bad(o, name, arg, "is not a traffic class byte, 0..255");
		o->tclass = (int)v;
		return 0;
	case F_LIMIT_BW:
		if (pt_parse_double(arg, 0, 1e12, &o->limit_bw))
			return pt_bad(o, name, arg, "is not a bandwidth, 0 or more");
		return 0;
	case F_LIMIT_MSG_RATE:
		if (pt_parse_double(arg, 0, 1e12, &o->limit_msg_rate))
			return pt_bad(o, name, arg, "is not a message rate in Mpps, 0 or more");
		return 0;
	case F_RATE:
		if (pt_parse_double(arg, 1e-9, 1e12, &o->rate) || !(o->rate > 0))
			return pt_bad(o, name, arg, "is not a rate above 0");
		return 0;
	case F_BURST:
		if (pt_parse_u64(arg, 0, 1u << 30, &v))
			return pt_bad(o, name, arg, "is not a burst size, 0 or more");
		o->burst_set = true; /* the engine paces every packet: there are no bursts to size (noted) */
		return 0;
	case F_LATENCY_GAP:
		if (pt_parse_double(arg, 0, 1e8, &o->latency_gap_us))
			return pt_bad(o, name, arg, "is not a gap in microseconds, 0..1e8");
		return 0;
	case F_WAIT_DESTROY:
		if (pt_parse_double(arg, 0, 86400, &o->wait_destroy_s))
			return pt_bad(o, name, arg, "is not a number of seconds, 0..86400");
		return 0;
	case F_LINK:
		if (pt_parse_double(arg, 0.001, 800, &o->link_gbps))
			return pt_bad(o, name, arg, "is not a link speed in Gb/s, 0 < x <= 800");
		return 0;
	case F_PORT_MTU:
		if (pt_parse_u64(arg, 576, 9000, &v))
			return pt_bad(o, name, arg, "is not an IP MTU, 576..9000");
		o->port_mtu = (unsigned)v;
		return 0;
	case F_QPN:
	case F_DEST_QPN:
		if (pt_parse_u64(arg, 2, 0xFFFFFF, &v))
			return pt_bad(o, name, arg, "is not a QPN, 0x2..0xFFFFFF");
		*(f->id == F_QPN ? &o->qpn : &o->dest_qpn) = (uint32_t)v;
		return 0;
	default:
		return 1;
	}
}

static int pt_parse_output(struct pt_opts *o, const char *arg)
{
	static const char *const words[] = { "bandwidth", "message_rate", "latency" };

	for (unsigned i = 0; i < 3; i++)
		if (!strcmp(arg, words[i])) {
			o->output = (enum pt_output)(PT_OUT_BW + i);
			return 0;
		}
	return pt_bad(o, "--output", arg, "is not bandwidth, message_rate or latency");
}

static int pt_parse_rate_units(struct pt_opts *o, const char *arg)
{
	if (!strcmp(arg, "g"))
		o->rate_units = PT_RATE_GBPS;
	else if (!strcmp(arg, "M"))
		o->rate_units = PT_RATE_MIBPS;
	else if (!strcmp(arg, "p"))
		o->rate_units = PT_RATE_MPS;
	else
		return pt_bad(o, "--rate_units", arg, "is not M (MiB/s), g (Gb/s) or p (messages per second)");
	return 0;
}

static int pt_parse_rate_type(struct pt_opts *o, const char *arg)
{
	if (!strcmp(arg, "PP"))
		return pt_bad(o, "--rate_limit_type", arg, "is the packet pacing limiter of raw Ethernet tests; use HW or SW");
	if (strcmp(arg, "HW") && strcmp(arg, "SW"))
		return pt_bad(o, "--rate_limit_type", arg, "is not HW or SW");
	o->rate_type_set = true;
	return 0;
}

/* Flags that take a string or none. */
static int pt_other_flag(struct pt_opts *o, const struct pt_flag *f, const char *arg)
{
	const char *name = pt_flag_name(f);

	switch (f->id) {
	case F_ALL: o->all = true; return 0;
	case F_BIDIR: o->bidir = true; return 0;
	case F_CONN: return pt_parse_conn(o, arg);
	case F_CYCLES: o->cycles = true; return 0;
	case F_HIST: o->hist = true; return 0;
	case F_UNSORTED: o->unsorted = true; return 0;
	case F_NO_PEAK: o->no_peak = true; return 0;
	case F_RUN_INF: o->run_inf = true; return 0;
	case F_GBITS: o->gbits = true; return 0;
	case F_REPORT_BOTH: o->report_both = true; return 0;
	case F_REVERSED: o->reversed = true; return 0;
	case F_RATE_TYPE: return pt_parse_rate_type(o, arg);
	case F_RATE_UNITS: return pt_parse_rate_units(o, arg);
	case F_OUTPUT: return pt_parse_output(o, arg);
	case F_CPU_UTIL: o->cpu_util = true; return 0;
	case F_OUT_JSON: o->out_json = true; return 0;
	case F_OUT_JSON_FILE:
		o->out_json = true; /* perftest also wants --out_json; a file named is a file wanted */
		o->out_json_file = arg;
		return 0;
	case F_IPV6: o->ipv6 = true; return 0;
	case F_HUGE: o->huge = true; return 0;
	case F_WRITE_IMM:
	case F_SEND_IMM:
		if (o->test->verb != (f->id == F_WRITE_IMM ? PT_WRITE : PT_SEND))
			return pt_usage_error(o, f->id == F_WRITE_IMM ? "--write_with_imm is for write_bw and write_lat"
								     : "--send_with_imm is for send_bw and send_lat");
		o->imm = true;
		return 0;
	case F_FORCE_LINK:
		if (strcasecmp(arg, "Ethernet") && strcasecmp(arg, "IB"))
			return pt_bad(o, name, arg, "is not IB or Ethernet");
		if (!strcasecmp(arg, "IB"))
			return pt_bad(o, name, arg, "is InfiniBand's link layer; the engine sends RoCE over Ethernet");
		return 0;
	case F_PIN_CORES: return pt_parse_pin_cores(o, arg);
	case F_NUMA_NODE: return pt_parse_numa_node(o, arg);
	case F_SERVER: o->server = true; return 0;
	case F_DEVICE: o->device = arg; return pt_config_safe(o, name, arg);
	case F_SRC_IP: o->src_ip = arg; return pt_check_ip(o, name, arg);
	case F_DST_IP: o->dst_ip = arg; return pt_check_ip(o, name, arg);
	case F_SRC_MAC: o->src_mac = arg; return pt_check_mac(o, name, arg);
	case F_DST_MAC: o->dst_mac = arg; return pt_check_mac(o, name, arg);
	case F_REPORT: o->report = arg; return 0;
	case F_JSON: o->json = true; return 0;
	case F_CAPTURE:
		o->capture = arg;
		if (strlen(arg) >= PT_PATH)
			return pt_bad(o, name, arg, "is longer than 255 characters");
		return pt_config_safe(o, name, arg);
	case F_LCORES: return pt_parse_lcores(o, name, arg);
	case F_KEEP: o->keep = true; return 0;
	case F_VDEV_ARGS: o->vdev_args = arg; return pt_config_safe(o, name, arg);
	case F_EAL_ARG:
		if (o->n_eal_args >= PT_MAX_EAL_ARGS)
			return pt_bad(o, name, arg, "is one too many (at most 16)");
		o->eal_args[o->n_eal_args++] = arg;
		return pt_config_safe(o, name, arg);
	default:
		return pt_usage_error(o, "internal error: a carried flag without a handler");
	}
}

static int pt_flag(struct pt_opts *o, const struct pt_flag *f, const char *arg)
{
	int rc;

	if (f->kind == PT_REFUSED) {
		fprintf(stderr, "%s: %s: not available here: %s\n", o->prog, pt_flag_name(f), f->text);
		return -1;
	}
	if (f->kind == PT_NOOP) {
		pt_note(o, "%s: accepted, no effect: %s", pt_flag_name(f), f->text);
		return 0;
	}
	if (f->id == F_BURST)
		pt_note(o, "%s: accepted, no effect: the engine paces every packet, so there are no bursts", pt_flag_name(f));
	rc = pt_numeric_flag(o, f, arg);
	return rc > 0 ? pt_other_flag(o, f, arg) : rc;
}

/* getopt's tables, from pt_flags: a long option's val is its row + 256 (or its letter). */
static const char *pt_getopt_tables(struct option *longopts)
{
	static char shortopts[2 * PT_N_FLAGS + 2];
	unsigned n = 0;

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

static const struct pt_flag *pt_flag_of(int ch)
{
	if (ch >= 256)
		return (unsigned)(ch - 256) < PT_N_FLAGS ? &pt_flags[ch - 256] : NULL;
	for (unsigned i = 0; i < PT_N_FLAGS; i++)
		if (pt_flags[i].letter == ch)
			return &pt_flags[i];
	return NULL;
}

/* perftest's words for a command line it does not know, then its usage text. */
static int pt_invalid(const struct pt_opts *o)
{
	fprintf(stderr, " Invalid Command or flag.\n Please check command line and run again.\n\n");
	pt_usage(stderr, o->test->name);
	return -1;
}

/* 0: run; 1: help or version printed; -1: bad flags (message printed). */
static int pt_parse_flags(int argc, char **argv, struct pt_opts *o)
{
	static struct option longopts[PT_N_FLAGS + 1];
	const char *shortopts = pt_getopt_tables(longopts);
	const struct pt_flag *f;
	int ch;

	optind = 1;
	opterr = 1;
	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (ch == '?' || ch == ':' || !(f = pt_flag_of(ch)))
			return pt_invalid(o);
		if (f->id == F_HELP) {
			pt_usage(stdout, o->test->name);
			return 1;
		}
		if (f->id == F_VERSION) {
			printf("Version: %s\n", roce_version_string());
			return 1;
		}
		if (pt_flag(o, f, optarg))
			return -1;
	}
	if (optind < argc) { /* perftest's client takes the server's address last */
		if (optind + 1 < argc || o->dst_ip) {
			fprintf(stderr, "%s: unexpected argument '%s'\n", o->prog, argv[optind + (o->dst_ip ? 0 : 1)]);
			return -1;
		}
		o->dst_ip = argv[optind];
		if (pt_check_ip(o, "DST_IP", o->dst_ip))
			return -1;
	}
	return 0;
}

/* ---- defaults and the rules between flags ---- */

static bool pt_is_virtual_device(const char *dev)
{
	return !strncmp(dev, "net_", 4) || !strncmp(dev, "ring:", 5);
}

static unsigned pt_port_mtu(const struct pt_opts *o)
{
	return o->device ? (o->port_mtu ? o->port_mtu : 1500) : 4200; /* 4200: room for IB MTU 4096, IPv6 */
}

static bool pt_v6(const struct pt_opts *o)
{
	uint8_t gid[16];
	bool v6 = o->ipv6;

	if (o->device && o->src_ip)
		pt_ip_to_gid(o->src_ip, gid, &v6);
	return v6;
}

/* The largest IB MTU whose packets fit the port (docs/config.md's rule for flows.mtu). */
static unsigned pt_largest_mtu(const struct pt_opts *o)
{
	unsigned room = pt_port_mtu(o) - (pt_v6(o) ? 40 : 20) - 8 - 12 - 28 - 4, mtu = 4096;

	while (mtu > 256 && mtu > room)
		mtu /= 2;
	return mtu;
}

/* perftest's rules of which flag belongs to which test, in its words where it has them. */
static int pt_check_test_flags(const struct pt_opts *o)
{
	bool lat = o->test->kind == PT_LAT;

	if (lat && o->qps > 1)
		return pt_usage_error(o, "multiple QPs only available on bw tests (-q)");
	if (lat && o->bidir)
		return pt_usage_error(o, "-b: bidirectional is only available in BW tests");
	if (lat && o->no_peak)
		return pt_usage_error(o, "-N: NoPeak only valid for BW tests");
	if (lat && o->run_inf)
		return pt_usage_error(o, "--run_infinitely exists only in BW tests");
	if (lat && o->rate > 0)
		return pt_usage_error(o, "--rate_limit is for BW tests (perftest's rate limiter)");
	if (lat && (o->limit_bw >= 0 || o->limit_msg_rate >= 0))
		return pt_usage_error(o, "-w/--limit_bw and -y/--limit_msgrate are for BW tests");
	if (!lat && (o->cycles || o->hist || o->unsorted))
		return pt_usage_error(o, "-C, -H and -U are available only on latency tests");
	if (!lat && o->latency_gap_us > 0)
		return pt_usage_error(o, "--latency_gap is only for latency tests");
	if (!lat && o->output == PT_OUT_LAT)
		return pt_usage_error(o, "--output for BW tests can be: bandwidth, message_rate");
	if (lat && (o->output == PT_OUT_BW || o->output == PT_OUT_MSG_RATE))
		return pt_usage_error(o, "--output for latency tests can be: latency");
	if (o->outs && o->test->verb != PT_READ)
		return pt_usage_error(o, "-o/--outs: setting outstanding reads only available on READ tests");
	if (o->json && o->output != PT_OUT_FULL)
		return pt_usage_error(o, "--json and --output are exclusive (the JSON, or one number)");
	return 0;
}

static int pt_check_connection(const struct pt_opts *o)
{
	if (o->conn == PT_UD && o->test->verb != PT_SEND)
		return pt_usage_error(o, "UD connection only possible with SEND (send_bw, send_lat)");
	if (o->conn == PT_UC && o->test->verb == PT_READ)
		return pt_usage_error(o, "RDMA READ needs RC (-c RC)");
	return 0;
}

/* perftest's -d names an RDMA device (mlx5_0); the engine takes a DPDK port. An RDMA device's
 * PCI address is its sysfs device link's name. */
static int pt_check_device(struct pt_opts *o)
{
	static char pci[256];
	char link[160], target[256];
	ssize_t n;

	if (config_device_is_virtual(o->device) || strchr(o->device, ':'))
		return 0; /* a vdev, a ring end or a PCI address: the engine's config check says the rest */
	snprintf(link, sizeof(link), "/sys/class/infiniband/%s/device", o->device);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return pt_bad(o, "-d/--ib-dev", o->device, "is not a DPDK port (net_<driver><n>, ring:LINK:a|b or a "
							  "PCI address) nor an RDMA device of this machine");
	target[n] = 0;
	snprintf(pci, sizeof(pci), "%s", strrchr(target, '/') ? strrchr(target, '/') + 1 : target);
	pt_note(o, "-d %s: its PCI address %s (%s)", o->device, pci, link);
	o->device = pci;
	return 0;
}

/* --device: perftest's server and client find each other over TCP; these are told. */
static int pt_check_port_flags(struct pt_opts *o)
{
	if (!o->device) {
		if (o->vdev_args || o->src_ip || o->src_mac || o->dst_ip || o->dst_mac || o->port_mtu || o->server ||
		    o->link_gbps > 0)
			return pt_usage_error(o, "--vdev-args, --src-ip, --src-mac, --dst-ip, --dst-mac, --link-gbps, "
						 "--port-mtu and --server need --device (the virtual topology sets them)");
		return 0;
	}
	if (pt_check_device(o))
		return -1;
	if (o->bidir)
		return pt_usage_error(o, "-b with --device: each end would need the other's counts, which perftest "
					 "exchanges over TCP; run one pair each way (or -b on the virtual topology)");
	if (o->reversed) /* the far end sends: it is this end that answers */
		o->server = !o->server;
	if (!o->src_ip)
		return pt_usage_error(o, "--device needs --src-ip (the port's address)");
	if (!o->server && (!o->dst_ip || !o->dst_mac))
		return pt_usage_error(o, o->reversed ? "--reversed: the end that sends (--server) needs --dst-ip and "
						       "--dst-mac (the other end's; no ARP here)"
						     : "--device needs --dst-ip and --dst-mac (the far end's; no ARP here)");
	if (o->vdev_args && strncmp(o->device, "net_", 4))
		return pt_usage_error(o, "--vdev-args is for a vdev (--device net_...)");
	if (o->dst_ip) {
		uint8_t g[16];
		bool v6_src, v6_dst;
		pt_ip_to_gid(o->src_ip, g, &v6_src);
		pt_ip_to_gid(o->dst_ip, g, &v6_dst);
		if (v6_src != v6_dst)
			return pt_usage_error(o, "--src-ip and --dst-ip must be of one family (IPv4 or IPv6)");
	}
	if (o->ipv6 && !pt_v6(o))
		return pt_usage_error(o, "--ipv6 with --device: --src-ip must be an IPv6 address");
	if (o->link_gbps <= 0 && pt_is_virtual_device(o->device))
		o->link_gbps = 100; /* virtual devices report no real speed */
	return 0;
}

/* perftest's margin: a quarter of the duration, in whole seconds as its integers make it. */
double pt_margin(const struct pt_opts *o)
{
	if (o->duration_s <= 0 || o->run_inf)
		return 0;
	return o->margin_s >= 0 ? o->margin_s : (double)((long)o->duration_s / 4);
}

static int pt_check_run_length(struct pt_opts *o)
{
	if (o->all && o->duration_s > 0 && !o->run_inf)
		return pt_usage_error(o, "-a with -D: duration mode doesn't support running on all sizes");
	if (o->all && o->run_inf)
		return pt_usage_error(o, "-a with --run_infinitely: one size runs forever");
	if (o->all && o->capture)
		return pt_usage_error(o, "--capture holds one run: not with -a");
	if (o->all && o->size_set)
		pt_note(o, "-s/--size: accepted, no effect: -a runs every size");
	if (o->iters_set && (o->duration_s > 0 || o->run_inf))
		pt_note(o, "-n/--iters: accepted, no effect: the run is timed (-D, --run_infinitely)");
	if (o->duration_s > 0 && !o->run_inf && !(o->duration_s > 2 * pt_margin(o)))
		return pt_usage_error(o, "-f/--margin: please check that DURATION > 2*MARGIN");
	if (o->margin_s >= 0 && !(o->duration_s > 0 && !o->run_inf))
		pt_note(o, "-f/--margin: accepted, no effect: margins are -D's");
	if (o->cpu_util && !(o->duration_s > 0 && !o->run_inf))
		pt_note(o, "--cpu_util: accepted, no effect: CPU utilization works only with duration mode (-D)");
	if (o->run_inf && o->duration_s <= 0)
		o->duration_s = 5; /* perftest's: a row every 5 s */
	if (!o->iters_set)
		o->iters = o->test->kind == PT_BW && o->test->verb == PT_WRITE ? 5000 : 1000;
	return 0;
}

static int pt_check_rate(struct pt_opts *o)
{
	if (o->rate <= 0 && (o->rate_type_set || o->rate_units != PT_RATE_GBPS))
		pt_note(o, "--rate_limit_type, --rate_units: accepted, no effect without --rate_limit");
	if (o->rate <= 0 && o->burst_set)
		return pt_usage_error(o, "--burst_size: can't enable burst mode when rate limiter is off");
	return 0;
}

/* RC messages in flight: perftest's TX depth (capped at the iterations, as perftest does), and
 * for READs its outstanding reads, within the engine's window. */
static void pt_window(struct pt_opts *o)
{
	if (o->test->kind == PT_LAT) {
		if (o->tx_depth > 1)
			pt_note(o, "-t/--tx-depth: accepted, no effect: a latency test has one message in flight");
		o->tx_depth = o->window = o->outs = 1;
		return;
	}
	if (o->tx_depth && o->conn != PT_RC)
		pt_note(o, "-t/--tx-depth: accepted, no effect over UC and UD: the engine keeps no send queue, their QPs "
			   "send as fast as the lcore can (or --rate_limit)");
	if (!o->tx_depth)
		o->tx_depth = 128;
	if (o->duration_s <= 0 && !o->run_inf && o->tx_depth > o->iters)
		o->tx_depth = (unsigned)o->iters;
	o->window = o->tx_depth;
	if (o->test->verb == PT_READ) {
		if (!o->outs)
			o->outs = PT_ENGINE_WINDOW; /* perftest: the device's most */
		if (o->outs > PT_ENGINE_WINDOW) {
			pt_note(o, "-o/--outs: %u outstanding READs run as %d, the engine's most", o->outs, PT_ENGINE_WINDOW);
			o->outs = PT_ENGINE_WINDOW;
		}
		if (o->window > o->outs)
			o->window = o->outs;
	}
	if (o->conn == PT_RC && o->window > PT_ENGINE_WINDOW) {
		pt_note(o, "TX depth %u runs as %d: the engine's RC window holds at most %d messages", o->window,
			PT_ENGINE_WINDOW, PT_ENGINE_WINDOW);
		o->window = PT_ENGINE_WINDOW;
	}
}

static int pt_apply_defaults(struct pt_opts *o)
{
	unsigned largest;
	char msg[160];

	if (pt_check_test_flags(o) || pt_check_connection(o) || pt_check_port_flags(o) || pt_check_run_length(o) ||
	    pt_check_rate(o))
		return -1;
	if (o->report_both && !o->bidir)
		pt_note(o, "--report-both: accepted, no effect without -b");
	if (o->reversed && o->bidir)
		pt_note(o, "--reversed: accepted, no effect with -b (both ends send)");
	largest = pt_largest_mtu(o);
	if (!o->mtu)
		o->mtu = largest;
	if (o->mtu > largest) {
		snprintf(msg, sizeof(msg), "-m %u does not fit the port's IP MTU of %u (largest: %u; --port-mtu)", o->mtu,
			 pt_port_mtu(o), largest);
		return pt_usage_error(o, msg);
	}
	if (!o->size_set)
		o->size = o->test->kind == PT_BW ? 65536 : 2;
	pt_window(o);
	if (!o->lcore_list[0] && pt_lcores_from_set(o, NULL, ""))
		return -1;
	if (!o->qpn)
		o->qpn = PT_QPN;
	if (!o->dest_qpn)
		o->dest_qpn = PT_DEST_QPN;
	if ((uint64_t)o->qpn + o->qps - 1 > 0xFFFFFF || (uint64_t)o->dest_qpn + o->qps - 1 > 0xFFFFFF)
		return pt_usage_error(o, "the last QP's QPN would pass 0xFFFFFF (--qpn, --dest-qpn, -q)");
	return 0;
}

int pt_parse(int argc, char **argv, struct pt_opts *o)
{
	int rc = pt_parse_flags(argc, argv, o);

	if (rc)
		return rc;
	return pt_apply_defaults(o);
}

/* Write and send latency rides on a 24-byte probe in the payload; READs are timed from a capture. */
bool pt_needs_probe(const struct pt_opts *o)
{
	return o->test->kind == PT_LAT && o->test->verb != PT_READ;
}

/* The sizes to run: one, or perftest's -a series within what this test can send. */
unsigned pt_sizes(const struct pt_opts *o, uint64_t *sizes)
{
	uint64_t lo = pt_needs_probe(o) ? 32 : 2, hi = PT_ALL_MAX_SIZE;
	unsigned n = 0;

	if (o->conn == PT_UD)
		hi = o->mtu;
	if (!o->all) {
		sizes[0] = o->size;
		if (pt_needs_probe(o) && sizes[0] < PT_PROBE_BYTES)
			sizes[0] = PT_PROBE_BYTES;
		if (o->conn == PT_UD && sizes[0] > o->mtu)
			sizes[0] = o->mtu;
		return 1;
	}
	for (uint64_t s = lo; s <= hi && n < PT_MAX_RUNS; s *= 2)
		sizes[n++] = s;
	return n;
}

/* Packets a message takes on the requester's side: READ requests are one packet. */
unsigned pt_packets_per_message(const struct pt_opts *o, uint64_t size)
{
	if (o->test->verb == PT_READ || size == 0)
		return 1;
	return (unsigned)((size + o->mtu - 1) / o->mtu);
}

/* Frame bytes (without FCS, as the engine counts them) a message's first transmission takes on
 * the requester's side: per packet the headers and ICRC, the payload padded to 4 bytes (BTH's pad
 * count), RETH on a WRITE's first packet (a READ request is one), DETH on UD, the immediate on the
 * last. A time series' TX rate over this is messages a second. */
double pt_frame_bytes_per_message(const struct pt_opts *o, uint64_t size)
{
	unsigned hdr = WIRE_ETH_HLEN + (pt_v6(o) ? WIRE_IPV6_HLEN : WIRE_IPV4_HLEN) + WIRE_UDP_HLEN + WIRE_BTH_LEN +
		       WIRE_ICRC_LEN;
	uint64_t packets = pt_packets_per_message(o, size), last = size - (packets - 1) * o->mtu;

	if (o->test->verb == PT_READ)
		return hdr + WIRE_RETH_LEN;
	return (double)(packets * hdr + (packets - 1) * o->mtu + ((last + 3) & ~3ULL)) +
	       (o->test->verb == PT_WRITE ? WIRE_RETH_LEN : 0) + (o->conn == PT_UD ? WIRE_DETH_LEN : 0) +
	       (o->imm ? WIRE_IMMDT_LEN : 0);
}

static const char pt_virtual_ip4[2][16] = { "192.168.70.1", "192.168.70.2" };
static const char pt_virtual_ip6[2][16] = { "fd00:70::1", "fd00:70::2" };

const char *pt_local_ip(const struct pt_opts *o)
{
	return o->device ? o->src_ip : o->ipv6 ? pt_virtual_ip6[0] : pt_virtual_ip4[0];
}

const char *pt_remote_ip(const struct pt_opts *o)
{
	return o->device ? o->dst_ip : o->ipv6 ? pt_virtual_ip6[1] : pt_virtual_ip4[1];
}

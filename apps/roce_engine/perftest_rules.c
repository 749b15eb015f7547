/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The perftest front end's defaults and the rules between its flags (docs/perftest.md), in
 * perftest's words where it has them; and what the other files derive from the options: the
 * sizes to run, packets and frame bytes per message, the addresses of the two ends.
 */
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "perftest_flags.h"
#include "wire.h"

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

int pt_apply_defaults(struct pt_opts *o)
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

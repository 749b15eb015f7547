/* SPDX-License-Identifier: BSD-3-Clause
 *
 * lab/switch.c, the virtual lab's switch, made from a struct switch_env as the engine makes it:
 * three hosts h0..h2, each on a ring cable to a switch port s0..s2, every port at 8 Gb/s. The
 * test sends frames from the hosts' ends of the cables, calls switch_poll at times of its own
 * choosing and reads what comes out at the hosts: no lcore of its own, nothing timed by the
 * machine. The switch's TSC rate is 1 GHz, so a byte takes one cycle on an 8 Gb/s link and a
 * frame of FRAME_LEN bytes (plus 24 of preamble, FCS and gap) FRAME_TIME cycles.
 *
 * EAL without hugepages, PCI or shared files, under a file prefix of this process's own.
 */
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "classify.h"
#include "config.h"
#include "port.h"
#include "switch.h"
#include "test_eal.h"
#include "test_ports.h"
#include "testlib.h"
#include "wire.h"

#define TSC_HZ 1000000000ull
#define PAYLOAD 940                       /* a multiple of 4: no pad */
#define FRAME_LEN (58 + PAYLOAD)          /* Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4 */
#define FRAME_TIME (FRAME_LEN + 24)       /* cycles on the link, at one byte per cycle */
#define T0 1000000ull                     /* the first poll's time */

enum { H0, H1, H2, S0, S1, S2, N_PORTS };

static const char config_text[] =
	"eal = { lcores = \"0-1\"; memory_mb = 256; };\n"
	"ports = (\n"
	"  { name = \"h0\"; ipv4 = \"10.0.0.10\"; device = \"ring:tsw0:a\"; mac = \"02:00:00:00:00:10\"; link_speed_gbps = 8.0; rx_desc = 64; tx_desc = 64; },\n"
	"  { name = \"h1\"; ipv4 = \"10.0.0.11\"; device = \"ring:tsw1:a\"; mac = \"02:00:00:00:00:11\"; link_speed_gbps = 8.0; rx_desc = 64; tx_desc = 64; },\n"
	"  { name = \"h2\"; ipv4 = \"10.0.0.12\"; device = \"ring:tsw2:a\"; mac = \"02:00:00:00:00:12\"; link_speed_gbps = 8.0; rx_desc = 64; tx_desc = 64; },\n"
	"  { name = \"s0\"; ipv4 = \"10.0.255.0\"; device = \"ring:tsw0:b\"; mac = \"02:00:00:5e:00:00\"; link_speed_gbps = 8.0; rx_desc = 64; tx_desc = 64; },\n"
	"  { name = \"s1\"; ipv4 = \"10.0.255.1\"; device = \"ring:tsw1:b\"; mac = \"02:00:00:5e:00:01\"; link_speed_gbps = 8.0; rx_desc = 64; tx_desc = 64; },\n"
	"  { name = \"s2\"; ipv4 = \"10.0.255.2\"; device = \"ring:tsw2:b\"; mac = \"02:00:00:5e:00:02\"; link_speed_gbps = 8.0; rx_desc = 64; tx_desc = 64; }\n"
	");\n"
	"lcores = (\n"
	"  { lcore = 1; port = \"s0\"; role = \"switch\"; },\n"
	"  { lcore = 1; port = \"s1\"; role = \"switch\"; },\n"
	"  { lcore = 1; port = \"s2\"; role = \"switch\"; }\n"
	");\n"
	/* lossy queues of at most 4 frames; class 3 marks CE above 1 KB left behind, always */
	"switch = { buffer_kb = 64; queue_limit_kb = 4; delay_us = 0.0;\n"
	"  ecn = ( { tc = 3; kmin_kb = 1; kmax_kb = 1; pmax = 1.0; } ); };\n";

static struct engine_config cfg;
static struct port_info ports[N_PORTS];
static struct qos_map qos_map[N_PORTS];
static const uint8_t unknown_mac[6] = {0x02, 0, 0, 0, 0, 0x99};

/* One RoCE frame (UC SEND only, FRAME_LEN bytes) from src to dst. */
struct frame_spec {
	const uint8_t *src, *dst;
	uint8_t dscp, ecn;
	uint32_t dqpn;
};

static struct switch_rt *make_switch(void)
{
	char err[256] = "";
	struct switch_rt *s = switch_create(
		&(struct switch_env){.cfg = &cfg, .ports = ports, .qos_map = qos_map, .tsc_hz = TSC_HZ}, 0, err, sizeof(err));

	if (!s)
		printf("  switch_create: %s\n", err);
	CHECK(s != NULL);
	return s;
}

/* Sends n frames from the host end of a cable; returns how many the ring took. */
static unsigned send_frames(unsigned host, const struct frame_spec *f, unsigned n)
{
	struct rte_mbuf *m[16];
	struct wire_roce_spec s;

	if (n > 16 || rte_pktmbuf_alloc_bulk(ports[host].pool, m, n) != 0)
		return 0;
	memset(&s, 0, sizeof(s));
	memcpy(s.l2.src, f->src, 6);
	memcpy(s.l2.dst, f->dst, 6);
	s.ip.version = 4;
	s.ip.ttl = 64;
	s.ip.dscp = f->dscp;
	s.ip.ecn = f->ecn;
	memcpy(s.ip.src, (uint8_t[4]){10, 0, 0, 1}, 4);
	memcpy(s.ip.dst, (uint8_t[4]){10, 0, 0, 2}, 4);
	s.udp.sport = 0xC000;
	s.bth.opcode = WIRE_OP_UC_SEND_ONLY;
	s.bth.pkey = WIRE_DEFAULT_PKEY;
	s.bth.dqpn = f->dqpn;
	s.payload_len = PAYLOAD;
	for (unsigned i = 0; i < n; i++) {
		int len;

		s.bth.psn = i;
		len = wire_build_roce(&s, rte_pktmbuf_mtod(m[i], uint8_t *), rte_pktmbuf_tailroom(m[i]));
		CHECK_EQ(len, FRAME_LEN);
		m[i]->data_len = m[i]->pkt_len = (uint32_t)(len > 0 ? len : 0);
	}
	return rte_eth_tx_burst(ports[host].port_id, 0, m, (uint16_t)n);
}

static unsigned send_to(unsigned host, const uint8_t *dst, unsigned n)
{
	return send_frames(host, &(struct frame_spec){.src = ports[host].mac, .dst = dst, .dqpn = 0x100}, n);
}

/* The frames waiting at a host: their parsed headers in p[] (up to max), freed; how many. */
static unsigned receive(unsigned host, struct wire_pkt *p, unsigned max)
{
	struct rte_mbuf *m[32];
	unsigned total = 0;
	uint16_t n;

	while ((n = rte_eth_rx_burst(ports[host].port_id, 0, m, 32)) > 0) {
		for (uint16_t i = 0; i < n; i++, total++)
			if (p && total < max)
				wire_parse(rte_pktmbuf_mtod(m[i], const uint8_t *), m[i]->data_len,
					   WIRE_PARSE_CHECK_ICRC | WIRE_PARSE_CHECK_IP_CSUM, &p[total]);
		rte_pktmbuf_free_bulk(m, n);
	}
	return total;
}

/* A RoCE frame whose IPv4 checksum and ICRC are right (as parsed by receive). */
static bool intact(const struct wire_pkt *p)
{
	return p->kind == WIRE_KIND_ROCE && p->icrc_checked && p->icrc_wire == p->icrc_calc;
}

static void receive_nothing_anywhere(void)
{
	for (unsigned h = H0; h <= H2; h++)
		CHECK_EQ(receive(h, NULL, 0), 0);
}

/* Frames go out at the port of their destination MAC, untouched, each counted once on the way in
 * and once on the way out, and per flow (egress port, destination QPN). */
static void test_forwards_by_destination_mac(void)
{
	struct switch_rt *s = make_switch();
	struct wire_pkt p[8];

	if (!s)
		return;
	CHECK_EQ(send_to(H0, ports[H1].mac, 3), 3);
	CHECK_EQ(send_frames(H0, &(struct frame_spec){.src = ports[H0].mac, .dst = ports[H2].mac, .dqpn = 0x200}, 2), 2);
	for (unsigned k = 0; k < 8; k++) /* the links drain (8 Gb/s: a frame per FRAME_TIME) */
		switch_poll(s, T0 + k * FRAME_TIME);
	CHECK_EQ(receive(H1, p, 8), 3);
	CHECK(intact(&p[0]) && intact(&p[2]) && p[0].bth.dqpn == 0x100 && p[2].bth.psn == 2);
	CHECK(!memcmp(p[0].l2.dst, ports[H1].mac, 6) && !memcmp(p[0].l2.src, ports[H0].mac, 6));
	CHECK_EQ(receive(H2, p, 8), 2);
	CHECK(intact(&p[1]) && p[1].bth.dqpn == 0x200);
	CHECK_EQ(receive(H0, NULL, 0), 0);
	CHECK_EQ(s->port[0].c.rx_frames, 5);
	CHECK_EQ(s->port[0].c.rx_bytes, 5 * FRAME_LEN);
	CHECK_EQ(s->port[0].c.tx_frames, 0);
	CHECK_EQ(s->port[1].c.tx_frames, 3);
	CHECK_EQ(s->port[1].c.tx_bytes, 3 * FRAME_LEN);
	CHECK_EQ(s->port[2].c.tx_frames, 2);
	CHECK_EQ(s->port[2].c.tx_bytes, 2 * FRAME_LEN);
	CHECK_EQ(s->port[0].c.drop_unknown_dst, 0);
	CHECK_EQ(s->n_flows, 2);
	CHECK(s->flows[0].out == 1 && s->flows[0].dqpn == 0x100);
	CHECK_EQ(s->flows[0].admitted, 3);
	CHECK_EQ(s->flows[0].sent, 3);
	CHECK(s->flows[1].out == 2 && s->flows[1].dqpn == 0x200);
	CHECK_EQ(s->flows[1].sent, 2);
	CHECK_EQ(s->mmu.used, 0);
	switch_free(s);
}

/* A frame for a MAC the switch does not know, or for the port it came in on, is counted and
 * dropped; nothing comes out anywhere. */
static void test_unknown_destination_dropped(void)
{
	struct switch_rt *s = make_switch();

	if (!s)
		return;
	CHECK_EQ(send_to(H0, unknown_mac, 2), 2);
	CHECK_EQ(send_to(H1, ports[H1].mac, 1), 1); /* back where it came from */
	for (unsigned k = 0; k < 4; k++)
		switch_poll(s, T0 + k * FRAME_TIME);
	receive_nothing_anywhere();
	CHECK_EQ(s->port[0].c.drop_unknown_dst, 2);
	CHECK_EQ(s->port[1].c.drop_unknown_dst, 1);
	CHECK_EQ(s->port[0].c.rx_frames, 2);
	for (unsigned i = 0; i < 3; i++)
		CHECK_EQ(s->port[i].c.tx_frames, 0);
	CHECK_EQ(s->n_flows, 0);
	CHECK_EQ(s->mmu.used, 0);
	switch_free(s);
}

/* A host behind a port is learned from the source MAC of what it sends: unknown before, found
 * after. */
static void test_learns_source_macs(void)
{
	struct switch_rt *s = make_switch();
	struct wire_pkt p[2];

	if (!s)
		return;
	CHECK_EQ(send_to(H0, unknown_mac, 1), 1);
	switch_poll(s, T0);
	CHECK_EQ(s->port[0].c.drop_unknown_dst, 1);
	/* the unknown host speaks from behind s2 */
	CHECK_EQ(send_frames(H2, &(struct frame_spec){.src = unknown_mac, .dst = ports[H0].mac, .dqpn = 0x300}, 1), 1);
	switch_poll(s, T0 + 2 * FRAME_TIME);
	CHECK_EQ(receive(H0, NULL, 0), 1);
	CHECK_EQ(send_to(H0, unknown_mac, 1), 1);
	switch_poll(s, T0 + 4 * FRAME_TIME);
	CHECK_EQ(receive(H2, p, 2), 1);
	CHECK(!memcmp(p[0].l2.dst, unknown_mac, 6));
	CHECK_EQ(s->port[0].c.drop_unknown_dst, 1);
	CHECK_EQ(receive(H1, NULL, 0), 0);
	switch_free(s);
}

/* The emulated link: at 8 Gb/s a frame takes FRAME_TIME cycles (its bytes and 24 of preamble,
 * FCS and gap), and a frame leaves when the link is free (the one before it has been sent). Of
 * four frames queued at once, the k-th leaves (k - 1) FRAME_TIMEs after the first. */
static void test_link_rate(void)
{
	struct switch_rt *s = make_switch();

	if (!s)
		return;
	switch_poll(s, T0); /* idle links start from now */
	CHECK_EQ(send_to(H0, ports[H1].mac, 4), 4);
	switch_poll(s, T0 + 100);
	CHECK_EQ(receive(H1, NULL, 0), 1);
	switch_poll(s, T0 + FRAME_TIME + FRAME_TIME / 2);
	CHECK_EQ(receive(H1, NULL, 0), 1);
	switch_poll(s, T0 + FRAME_TIME + FRAME_TIME / 2 + 10); /* the link is still busy */
	CHECK_EQ(receive(H1, NULL, 0), 0);
	CHECK_EQ(s->port[1].c.tx_frames, 2);
	switch_poll(s, T0 + 3 * FRAME_TIME - 100); /* the third has left, the fourth not yet */
	CHECK_EQ(receive(H1, NULL, 0), 1);
	switch_poll(s, T0 + 3 * FRAME_TIME + FRAME_TIME / 2);
	CHECK_EQ(receive(H1, NULL, 0), 1);
	CHECK_EQ(s->port[1].c.tx_frames, 4);
	CHECK_EQ(s->port[1].c.tx_bytes, 4 * FRAME_LEN);
	switch_free(s);
}

/* A lossy queue holds queue_limit_kb (4 KB: four frames); the fifth frame to it is dropped and
 * counted on its ingress port and its flow. */
static void test_queue_limit_drops(void)
{
	struct switch_rt *s = make_switch();

	if (!s)
		return;
	switch_poll(s, T0);
	CHECK_EQ(send_to(H0, ports[H1].mac, 5), 5);
	switch_poll(s, T0 + 1); /* all five arrive before the first leaves */
	for (unsigned k = 1; k < 8; k++)
		switch_poll(s, T0 + 1 + k * FRAME_TIME);
	CHECK_EQ(receive(H1, NULL, 0), 4);
	CHECK_EQ(s->port[0].c.drop_queue, 1);
	CHECK_EQ(s->port[0].c.drop_buffer, 0);
	CHECK_EQ(s->flows[0].admitted, 4);
	CHECK_EQ(s->flows[0].dropped, 1);
	CHECK_EQ(s->flows[0].sent, 4);
	switch_free(s);
}

/* The marking curve's bins of test_ecn_marking's run: class 3's three ECN-capable frames (none
 * of the others), by the depth each left behind: two frames (above kmax: marked), one, none (bin
 * 0, depth 0). Bins of 64 bytes: 32 of them span 0..2 kmax = 2 KB; deeper goes in the last. */
static void check_ecn_depth_bins(const struct switch_rt *s)
{
	const struct sw_ecn_bin *b = s->ecn_depth[1][3];
	uint64_t frames = 0, marked = 0, other = 0;

	CHECK_EQ(s->ecn_bin_shift[3], 6);
	for (unsigned k = 0; k < SW_ECN_BINS; k++) {
		frames += b[k].frames;
		marked += b[k].marked;
		other += s->ecn_depth[1][0][k].frames + s->ecn_depth[0][3][k].frames;
		if (b[k].marked) /* the marked frame left more than kmax behind */
			CHECK(b[k].depth_sum / b[k].frames > 1024 && (k == SW_ECN_BINS - 1 || b[k].depth_sum >> 6 == k));
	}
	CHECK_EQ(frames, 3);
	CHECK_EQ(marked, 1);
	CHECK_EQ(other, 0);
	CHECK(b[0].frames == 1 && b[0].depth_sum == 0 && b[0].marked == 0);
}

/* RED at dequeue on the queue left behind: class 3 (DSCP 24) marks CE above 1 KB. Of three
 * ECN-capable frames queued together, the first leaves two behind (marked), the others one and
 * none; a frame that is not ECN-capable is never marked; class 0 has no RED. */
static void test_ecn_marking(void)
{
	struct switch_rt *s = make_switch();
	struct wire_pkt p[4];

	if (!s)
		return;
	switch_poll(s, T0);
	CHECK_EQ(send_frames(H0, &(struct frame_spec){.src = ports[H0].mac, .dst = ports[H1].mac, .dscp = 24,
						      .ecn = WIRE_ECN_ECT0, .dqpn = 0x100}, 3), 3);
	switch_poll(s, T0 + 1);
	for (unsigned k = 1; k < 4; k++)
		switch_poll(s, T0 + 1 + k * FRAME_TIME);
	CHECK_EQ(receive(H1, p, 4), 3);
	CHECK_EQ(p[0].ip.ecn, WIRE_ECN_CE);
	CHECK(intact(&p[0]) && p[0].ip.dscp == 24); /* its checksum rewritten; the ICRC leaves ECN out */
	CHECK_EQ(p[1].ip.ecn, WIRE_ECN_ECT0);
	CHECK_EQ(p[2].ip.ecn, WIRE_ECN_ECT0);
	CHECK_EQ(s->port[1].c.ecn_marked[3], 1);
	CHECK_EQ(s->flows[0].marked, 1);
	/* not ECN-capable, and class 0: three frames each, none marked */
	CHECK_EQ(send_frames(H0, &(struct frame_spec){.src = ports[H0].mac, .dst = ports[H1].mac, .dscp = 24,
						      .ecn = WIRE_ECN_NOT_ECT, .dqpn = 0x100}, 3), 3);
	CHECK_EQ(send_frames(H0, &(struct frame_spec){.src = ports[H0].mac, .dst = ports[H1].mac, .dscp = 0,
						      .ecn = WIRE_ECN_ECT0, .dqpn = 0x101}, 3), 3);
	for (unsigned k = 0; k < 8; k++)
		switch_poll(s, T0 + (5 + k) * FRAME_TIME);
	CHECK_EQ(receive(H1, NULL, 0), 6);
	CHECK_EQ(s->port[1].c.ecn_marked[3], 1);
	CHECK_EQ(s->port[1].c.ecn_marked[0], 0);
	check_ecn_depth_bins(s);
	switch_free(s);
}

/* PFC received on a switch port pauses that port's egress of the named priority for its quanta
 * (100 x 512 bit times at 8 Gb/s: 6,400 cycles), and only that priority. */
static void test_pfc_pauses_egress(void)
{
	struct switch_rt *s = make_switch();
	uint16_t quanta[WIRE_PFC_PRIORITIES] = {100};
	struct rte_mbuf *m = rte_pktmbuf_alloc(ports[H1].pool);
	int len;

	if (!s || !m) {
		CHECK(m != NULL);
		rte_pktmbuf_free(m);
		switch_free(s);
		return;
	}
	len = wire_build_pfc(ports[H1].mac, NULL, 1u << 0, quanta, rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m));
	CHECK_EQ(len, 60);
	m->data_len = m->pkt_len = (uint32_t)len;
	CHECK_EQ(rte_eth_tx_burst(ports[H1].port_id, 0, &m, 1), 1);
	switch_poll(s, T0); /* the pause: T0 .. T0 + 6400 */
	CHECK_EQ(s->port[1].c.pfc_rx[0], 1);
	CHECK_EQ(send_to(H0, ports[H1].mac, 1), 1); /* priority 0 (DSCP 0) */
	CHECK_EQ(send_frames(H0, &(struct frame_spec){.src = ports[H0].mac, .dst = ports[H1].mac, .dscp = 24,
						      .dqpn = 0x101}, 1), 1);
	switch_poll(s, T0 + 100);
	switch_poll(s, T0 + 3000);
	CHECK_EQ(receive(H1, NULL, 0), 1); /* priority 3 only */
	CHECK_EQ(s->port[1].c.tx_frames, 1);
	switch_poll(s, T0 + 6000);
	CHECK_EQ(receive(H1, NULL, 0), 0);
	switch_poll(s, T0 + 7000);
	CHECK_EQ(receive(H1, NULL, 0), 1);
	CHECK_EQ(s->port[1].c.tx_frames, 2);
	switch_free(s);
}

/* A port whose ethdev link went down (a memif peer that left): the next poll drops what is
 * queued to it and what came in from it, wherever it waits (counted as that port's link_down and
 * per flow as dropped after admission, the buffer freed); frames that arrive for a port while it
 * is down wait for its next peer. Switch ports 0..2 are config ports S0..S2. */
static void test_a_port_whose_link_went_down_is_flushed(void)
{
	struct switch_rt *s = make_switch();

	if (!s)
		return;
	switch_poll(s, T0);
	/* three frames h0 -> h1 and three h2 -> h0: one of each leaves at once, two of each wait */
	CHECK_EQ(send_to(H0, ports[H1].mac, 3), 3);
	CHECK_EQ(send_to(H2, ports[H0].mac, 3), 3);
	switch_poll(s, T0 + 1);
	/* the peers of s1 (the receiver) and s2 (a sender) leave */
	switch_port_link(s, S1, false);
	switch_port_link(s, S2, false);
	switch_poll(s, T0 + 2);
	for (unsigned k = 1; k < 4; k++)
		switch_poll(s, T0 + 2 + k * FRAME_TIME);
	CHECK_EQ(receive(H1, NULL, 0), 1);
	CHECK_EQ(receive(H0, NULL, 0), 1);
	CHECK_EQ(s->port[1].c.drop_link_down, 2); /* queued to s1 */
	CHECK_EQ(s->port[2].c.drop_link_down, 2); /* from s2, queued to s0 */
	CHECK_EQ(s->port[0].c.drop_link_down, 0);
	CHECK_EQ(s->dropped_from_queues, 4);
	CHECK_EQ(s->mmu.used, 0);
	/* while s1 is down, frames for it wait in its queue (a slow peer's), and go once it is back */
	CHECK_EQ(send_to(H0, ports[H1].mac, 2), 2);
	for (unsigned k = 0; k < 4; k++)
		switch_poll(s, T0 + (6 + k) * FRAME_TIME);
	CHECK_EQ(receive(H1, NULL, 0), 0);
	CHECK_EQ(s->port[1].c.drop_link_down, 2);
	CHECK_EQ(s->mmu.used, 2 * FRAME_LEN);
	switch_port_link(s, S1, true);
	for (unsigned k = 0; k < 4; k++)
		switch_poll(s, T0 + (11 + k) * FRAME_TIME);
	CHECK_EQ(receive(H1, NULL, 0), 2);
	CHECK_EQ(s->mmu.used, 0);
	switch_free(s);
}

int main(void)
{
	if (test_eal_start("test_switch", "0"))
		return 1;
	if (test_ports_setup(config_text, &cfg, ports, qos_map, N_PORTS))
		return 1;
	RUN(test_forwards_by_destination_mac);
	RUN(test_unknown_destination_dropped);
	RUN(test_learns_source_macs);
	RUN(test_link_rate);
	RUN(test_queue_limit_drops);
	RUN(test_ecn_marking);
	RUN(test_pfc_pauses_egress);
	RUN(test_a_port_whose_link_went_down_is_flushed);
	test_ports_teardown(ports, N_PORTS);
	test_eal_stop();
	return testlib_finish("test_switch");
}

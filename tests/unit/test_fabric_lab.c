/* SPDX-License-Identifier: BSD-3-Clause
 *
 * lab/fabric_lab.c, the engine's virtual fabric, made from a config text as the engine makes it:
 * h0 - s0 - s1 - h1, every link 1 Gb/s, no delay. The test sends frames from h0's end of its
 * cable, calls fabric_lab_poll at times of its own choosing and reads what reaches h1: no lcore of
 * its own, nothing timed by the machine. The TSC rate is 1 GHz, so a byte takes 8 cycles on a
 * link and a frame of FRAME_LEN bytes (plus 24 of preamble, FCS and gap) FRAME_TIME cycles.
 *
 * What it shows: a poll that comes late (the lcore was held up) does not let each link catch up
 * on its own, all at once (s0 sending the missed time's frames before s1 has forwarded any would
 * fill s1's queue, a burst the network never made); the switches live through the missed time
 * together, and what is older than SW_LINK_LAG_US is lost to the links (cpu_lost). With the
 * switches dealt over two lcores (fabric.lcores), each part is polled on its own: frames cross
 * from one to the other, and a link event reaches each part's switches at that part's poll.
 *
 * EAL without hugepages, PCI or shared files, under a file prefix of this process's own.
 */
#include <stdlib.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "config.h"
#include "fabric_lab.h"
#include "port.h"
#include "test_eal.h"
#include "test_ports.h"
#include "test_frame.h"
#include "testlib.h"

#define TSC_HZ 1000000000ull
#define PAYLOAD 940                       /* a multiple of 4: no pad */
#define FRAME_LEN (58 + PAYLOAD)          /* Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4 */
#define FRAME_TIME (8 * (FRAME_LEN + 24)) /* cycles on a 1 Gb/s link */
#define T0 1000000ull                     /* the first poll's time */

static const char config_text[] =
	"eal = { lcores = \"0-1\"; memory_mb = 256; };\n"
	"fabric = {\n"
	"  kind = \"custom\";\n"
	"  switches = ( { name = \"s0\"; }, { name = \"s1\"; } );\n"
	"  hosts = [\"h0\", \"h1\"];\n"
	"  links = ( { a = \"s0\"; b = \"h0\"; gbps = 1.0; delay_us = 0.0; }, { a = \"s1\"; b = \"h1\"; gbps = 1.0; delay_us = 0.0; },\n"
	"            { a = \"s0\"; b = \"s1\"; gbps = 1.0; delay_us = 0.0; } );\n"
	"  nic = { rx_desc = 1024; tx_desc = 1024; };\n"
	"};\n"
	"switch = { buffer_kb = 2048; };\n";

static struct engine_config cfg;
static struct port_info ports[2];
static struct qos_map qos_map[2];

static struct fabric_lab *make_fabric(void)
{
	char err[256] = "";
	struct fabric_lab *fl = fabric_lab_create(
		&(struct switch_env){.cfg = &cfg, .ports = ports, .qos_map = qos_map, .tsc_hz = TSC_HZ}, err, sizeof(err));

	if (!fl)
		printf("  fabric_lab_create: %s\n", err);
	CHECK(fl != NULL);
	return fl;
}

/* n frames from h0 to h1 (through its gateway, s0), in bursts its cable takes; how many it took. */
static unsigned send_h0_to_h1(unsigned n)
{
	struct wire_roce_spec s;
	unsigned sent = 0;

	test_frame_spec(&s, 0, 1);
	memcpy(s.l2.src, ports[0].mac, 6);
	memcpy(s.l2.dst, cfg.fab.nic[0].gateway_mac, 6);
	memcpy(s.ip.src, cfg.ports[0].ipv4, 4);
	memcpy(s.ip.dst, cfg.ports[1].ipv4, 4);
	s.bth.opcode = WIRE_OP_UC_SEND_ONLY;
	s.bth.dqpn = 0x100;
	s.payload_len = PAYLOAD;
	while (sent < n) {
		struct rte_mbuf *m[16];
		unsigned k = n - sent < 16 ? n - sent : 16;
		if (rte_pktmbuf_alloc_bulk(ports[0].pool, m, k) != 0)
			break;
		for (unsigned i = 0; i < k; i++) {
			s.bth.psn = sent + i;
			int len = wire_build_roce(&s, rte_pktmbuf_mtod(m[i], uint8_t *), rte_pktmbuf_tailroom(m[i]));
			m[i]->data_len = m[i]->pkt_len = (uint32_t)(len > 0 ? len : 0);
		}
		uint16_t took = rte_eth_tx_burst(ports[0].port_id, 0, m, (uint16_t)k);
		if (took < k)
			rte_pktmbuf_free_bulk(m + took, k - took);
		sent += took;
		if (took < k)
			break;
	}
	return sent;
}

static unsigned receive_h1(void)
{
	struct rte_mbuf *m[32];
	unsigned total = 0;
	uint16_t n;

	while ((n = rte_eth_rx_burst(ports[1].port_id, 0, m, 32)) > 0) {
		rte_pktmbuf_free_bulk(m, n);
		total += n;
	}
	return total;
}

/* s0's port to h0 (to_nic) or to s1, and the bytes s1 holds for h1 (s1's port to h1, every class). */
static const struct sw_port *s0_port(const struct fabric_lab *fl, bool to_nic)
{
	for (unsigned k = 0; k < fl->sw[0]->n_ports; k++)
		if (cfg.fab.sw[0].ports[k].to_nic == to_nic)
			return &fl->sw[0]->port[k];
	return NULL;
}

static const struct sw_port *s0_uplink(const struct fabric_lab *fl)
{
	return s0_port(fl, false);
}

static uint64_t s1_queued_for_h1(const struct fabric_lab *fl)
{
	uint64_t bytes = 0;

	for (unsigned k = 0; k < fl->sw[1]->n_ports; k++)
		if (cfg.fab.sw[1].ports[k].to_nic)
			for (unsigned tc = 0; tc < SW_TCS; tc++)
				bytes += fl->sw[1]->mmu.queue[k][tc];
	return bytes;
}

/* h0's frames into s0's queue to s1, all at T0 (no time passes: one leaves, the rest wait). The
 * fabric is polled once idle first, as the engine's lcore polls it before traffic starts: a link
 * never polled has no time of its own yet. */
static struct fabric_lab *fabric_with_queue(unsigned frames)
{
	struct fabric_lab *fl = make_fabric();
	const struct sw_port *from_h0 = s0_port(fl, true);

	fabric_lab_poll(fl, 0, T0);
	CHECK_EQ(send_h0_to_h1(frames), frames);
	for (unsigned turn = 0; turn < frames && from_h0->c.rx_frames < frames; turn++)
		fabric_lab_poll(fl, 0, T0);
	CHECK_EQ(from_h0->c.rx_frames, frames);
	CHECK_EQ(s0_uplink(fl)->c.tx_frames, 1);
	return fl;
}

static void end_fabric(struct fabric_lab *fl)
{
	fabric_lab_flush(fl);
	receive_h1();
	fabric_lab_free(fl);
}

/* A poll every frame time: the frames go through at the link's rate, s1 holding at most one. */
static void test_frames_cross_at_the_link_rate(void)
{
	struct fabric_lab *fl = fabric_with_queue(64);
	uint64_t most = 0;
	unsigned got = receive_h1();

	for (unsigned i = 1; i <= 40; i++) {
		fabric_lab_poll(fl, 0, T0 + i * FRAME_TIME);
		got += receive_h1();
		if (s1_queued_for_h1(fl) > most)
			most = s1_queued_for_h1(fl);
	}
	CHECK(got >= 40 && got <= 41);
	CHECK(most <= FRAME_LEN);
	end_fabric(fl);
}

/* One poll 50 frame times late: what the links would have carried meanwhile comes out, and s1's
 * queue stays as short as when polled on time (each link catching up alone, s1 would hold ~49). */
static void test_a_late_poll_is_lived_through_together(void)
{
	struct fabric_lab *fl = fabric_with_queue(100);
	unsigned got;

	receive_h1();
	fabric_lab_poll(fl, 0, T0 + 50 * FRAME_TIME);
	got = receive_h1();
	CHECK(got >= 48 && got <= 51);
	CHECK(s1_queued_for_h1(fl) <= 2 * FRAME_LEN);
	CHECK_EQ(s0_uplink(fl)->c.cpu_lost_tsc, 0);
	end_fabric(fl);
}

/* Held up 5 ms: only the last SW_LINK_LAG_US is lived through (its frames come out, in steps of
 * 1 ms / 64, about two frames); the rest is the machine's, counted as the links' lost time. */
static void test_a_long_hold_up_loses_the_time_before_the_lag(void)
{
	const uint64_t held = 5000000, lag = SW_LINK_LAG_US * 1000ull, step = lag / 64;
	struct fabric_lab *fl = fabric_with_queue(200);
	uint64_t lost;
	unsigned got;

	receive_h1();
	fabric_lab_poll(fl, 0, T0 + held);
	got = receive_h1();
	lost = s0_uplink(fl)->c.cpu_lost_tsc;
	CHECK(got + 2 >= lag / FRAME_TIME && got <= lag / FRAME_TIME + 2);
	CHECK(lost + step + FRAME_TIME >= held - lag && lost <= held - lag);
	CHECK(s1_queued_for_h1(fl) <= (step / FRAME_TIME + 2) * FRAME_LEN);
	end_fabric(fl);
}

/* ---- the switches dealt over two lcores: s0 on lcore 1 (part 0), s1 on lcore 2 (part 1) ------ */

static unsigned link_between_switches(void)
{
	for (unsigned l = 0; l < cfg.fab.n_links; l++)
		if (!cfg.fab.links[l].to_nic)
			return l;
	return 0;
}

static struct fabric_lab *make_two_part_fabric(void)
{
	cfg.fab.n_lcores = 2;
	cfg.fab.lcores[0] = 1;
	cfg.fab.lcores[1] = 2;
	return make_fabric();
}

static void end_two_part_fabric(struct fabric_lab *fl)
{
	end_fabric(fl);
	cfg.fab.n_lcores = 1;
	cfg.fab.n_events = 0;
}

/* Each switch in its part; a port whose sender is on the other lcore (a NIC, the other switch)
 * takes nothing in during a replay: one lcore's replay cannot go back in another's time. */
static void test_two_lcores_each_poll_their_switches(void)
{
	struct fabric_lab *fl = make_two_part_fabric();

	CHECK_EQ(fl->n_parts, 2);
	CHECK_EQ(fl->part[0].n_sw, 1);
	CHECK_EQ(fl->part[0].sw[0], 0);
	CHECK_EQ(fl->part[1].sw[0], 1);
	CHECK_EQ(fl->part[1].lcore, 2);
	for (unsigned s = 0; s < 2; s++)
		for (unsigned k = 0; k < fl->sw[s]->n_ports; k++)
			CHECK(fl->sw[s]->port[k].remote_sender);
	end_two_part_fabric(fl);
	fl = make_fabric(); /* on one lcore, a switch's sender is remote only for a NIC */
	CHECK_EQ(fl->n_parts, 1);
	CHECK(!s0_uplink(fl)->remote_sender);
	CHECK(s0_port(fl, true)->remote_sender);
	end_fabric(fl);
}

/* Both parts polled every frame time: the frames cross at the link's rate, as on one lcore. */
static void test_frames_cross_between_two_lcores(void)
{
	struct fabric_lab *fl = make_two_part_fabric();
	unsigned got = 0;

	fabric_lab_poll(fl, 0, T0);
	fabric_lab_poll(fl, 1, T0);
	CHECK_EQ(send_h0_to_h1(64), 64);
	for (unsigned i = 1; i <= 40; i++) {
		fabric_lab_poll(fl, 0, T0 + i * FRAME_TIME);
		fabric_lab_poll(fl, 1, T0 + i * FRAME_TIME);
		got += receive_h1();
		CHECK(s1_queued_for_h1(fl) <= FRAME_LEN);
	}
	CHECK(got >= 38 && got <= 41);
	CHECK_EQ(fl->sw[1]->port[0].c.cpu_lost_tsc + fl->sw[1]->port[1].c.cpu_lost_tsc, 0);
	end_two_part_fabric(fl);
}

/* Lossless priority 0 (the test's frames), 256 KB of headroom: the s0 -> s1 ring holds half of
 * it in full-size frames (config_fabric_ring_frames: 86 of 1,522 bytes). s1's lcore held up for
 * 1,000 frame times while s0's sends on: s1 then takes in what the ring holds (a burst a loop
 * turn, turns microseconds apart) before any XOFF of its can reach s0, and that must fit its
 * headroom. With a ring of the NIC cables' 1,024
 * frames, s1 takes in more than its xoff and headroom hold: 61 frames dropped. */
static void test_a_held_up_lcore_takes_in_no_more_than_its_headroom(void)
{
	const unsigned frames = 1000;
	struct cfg_switch was = cfg.sw;
	struct fabric_lab *fl;
	const struct sw_port *s1_from_s0;
	unsigned l = link_between_switches(), sent = 0, ring;

	cfg.sw.pfc_priorities = 1;
	cfg.sw.xoff_bytes = 64 * 1024;
	cfg.sw.xon_bytes = 48 * 1024;
	cfg.sw.headroom_bytes = 256 * 1024;
	ring = config_fabric_ring_frames(&cfg, 1, 1024);
	CHECK_EQ(ring, 256 * 1024 / 2 / (cfg.ports[0].mtu + 22));
	fl = make_two_part_fabric();
	s1_from_s0 = &fl->sw[1]->port[cfg.fab.links[l].sw == 1 ? cfg.fab.links[l].port : cfg.fab.links[l].b_port];
	fabric_lab_poll(fl, 0, T0);
	fabric_lab_poll(fl, 1, T0);
	for (unsigned i = 1; i <= frames; i++) { /* s1's lcore is away */
		if (sent < frames)
			sent += send_h0_to_h1(frames - sent < 16 ? frames - sent : 16);
		fabric_lab_poll(fl, 0, T0 + i * FRAME_TIME);
	}
	CHECK_EQ(sent, frames);
	/* what the ring took, and a burst (32) it refused, waiting as pending */
	CHECK(s0_uplink(fl)->c.tx_frames >= ring && s0_uplink(fl)->c.tx_frames <= ring + 32);
	for (uint64_t took = ~0ull; took != s1_from_s0->c.rx_frames;) { /* a burst a turn, until the ring is empty */
		took = s1_from_s0->c.rx_frames;
		fabric_lab_poll(fl, 1, T0 + (frames + 1) * FRAME_TIME);
	}
	CHECK(s1_from_s0->c.rx_frames >= ring);
	CHECK_EQ(s1_from_s0->c.drop_headroom + s1_from_s0->c.drop_buffer + s1_from_s0->c.drop_queue, 0);
	CHECK(s1_from_s0->c.pfc_xoff_tx[0] >= 1); /* and it told s0 to stop */
	end_two_part_fabric(fl);
	cfg.sw = was;
}

/* The link s0-s1 goes down at the start: part 0 (which times events) takes its end down at its
 * poll, s1's end stays up until part 1 polls; a frame s0 then sends into the dead link is lost
 * and its QP noted in part 0's list of the event. */
static void test_a_link_event_reaches_each_part_at_its_poll(void)
{
	const uint64_t start = T0;
	unsigned l = link_between_switches();
	struct fabric_lab *fl;
	const struct sw_port *s1_from_s0;

	cfg.fab.n_events = 1;
	cfg.fab.events[0] = (struct cfg_fab_event){.at_s = 0, .link = l, .up = false};
	fl = make_two_part_fabric();
	s1_from_s0 = &fl->sw[1]->port[cfg.fab.links[l].sw == 1 ? cfg.fab.links[l].port : cfg.fab.links[l].b_port];
	fabric_lab_set_start(fl, &start);
	fabric_lab_poll(fl, 1, T0);
	fabric_lab_poll(fl, 0, T0);
	CHECK_EQ(fl->events_done, 1);
	CHECK(s0_uplink(fl)->down);
	CHECK(!s1_from_s0->down);
	fabric_lab_poll(fl, 1, T0 + FRAME_TIME);
	CHECK(s1_from_s0->down);
	CHECK_EQ(send_h0_to_h1(4), 4);
	for (unsigned i = 0; i < 4; i++)
		fabric_lab_poll(fl, 0, T0 + (2 + i) * FRAME_TIME);
	CHECK(s0_uplink(fl)->c.drop_link_down + s0_port(fl, true)->c.drop_link_down >= 1);
	CHECK_EQ(fl->event[0].qps[0].n, 1);
	CHECK_EQ(fl->event[0].qps[0].qpn[0], 0x100);
	CHECK_EQ(fl->event[0].qps[1].n, 0);
	end_two_part_fabric(fl);
}

/* ---- routes after link events: computed at run time (a command's) as at load (fabric.events) ---- */

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *t = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 && (t = calloc(1, (size_t)n + 1)))
		if (fread(t, 1, (size_t)n, f) != (size_t)n) {
			free(t);
			t = NULL;
		}
	fclose(f);
	return t;
}

/* The shipped config `name` with `events` (and a short convergence) in its fabric group. */
static bool load_with_events(const char *name, const char *events, struct engine_config *c)
{
	char path[512], err[512] = "", *text, *with, *at;
	bool ok = false;

	snprintf(path, sizeof(path), "%s/configs/%s", SOURCE_ROOT, name);
	text = read_file(path);
	with = text ? malloc(strlen(text) + strlen(events) + 64) : NULL;
	at = text ? strstr(text, "fabric = {") : NULL;
	if (with && at) {
		size_t head = (size_t)(at - text) + strlen("fabric = {");
		memcpy(with, text, head);
		sprintf(with + head, "\n  %s%s\n%s", events, *events ? " convergence_ms = 1;" : "", text + head);
		ok = config_load_string(with, path, c, err, sizeof(err)) == 0;
		if (!ok)
			printf("  %s: %s\n", name, err);
	}
	free(with);
	free(text);
	return ok;
}

/* Every switch's routes after each listed event, as fabric_lab_routes_over() computes them over
 * the links up then (what /roce/link uses), against those the loader computed with fabric/'s
 * fabric_routes() (cfg.fab.sw[s].after[k]). */
static unsigned check_routes_after_events(const struct engine_config *c)
{
	bool up[CFG_FAB_MAX_LINKS];
	struct cfg_fab_next next[CFG_FAB_MAX_ROUTES];
	unsigned differ = 0, groups = 0;

	for (unsigned l = 0; l < CFG_FAB_MAX_LINKS; l++)
		up[l] = true;
	for (unsigned k = 0; k < c->fab.n_events; k++) {
		up[c->fab.events[k].link] = c->fab.events[k].up;
		for (unsigned s = 0; s < c->fab.n_switches; s++) {
			fabric_lab_routes_over(&c->fab, up, s, next);
			for (unsigned i = 0; i < c->fab.sw[s].n_routes; i++) {
				const struct cfg_fab_next *want = &c->fab.sw[s].after[k][i];
				groups += want->n > 1;
				if (next[i].n != want->n || memcmp(next[i].ports, want->ports, want->n))
					differ++;
			}
		}
	}
	CHECK(c->fab.n_events > 0);
	CHECK(differ == 0);
	if (differ)
		printf("  %u routes differ\n", differ);
	return groups; /* routes with two or more equal-cost ports compared */
}

static void test_routes_after_a_command_match_the_loaders(void)
{
	static struct engine_config c;

	CHECK(load_with_events("fabric-link-failure.cfg", "", &c)); /* its own events */
	check_routes_after_events(&c);
	CHECK(load_with_events("fabric-leaf-spine-ecmp.cfg",
			       "events = ( { at_s = 0.1; link = \"leaf0-spine0\"; state = \"down\"; },"
			       " { at_s = 0.2; link = \"leaf1-spine1\"; state = \"down\"; },"
			       " { at_s = 0.3; link = \"h5-leaf1\"; state = \"down\"; },"
			       " { at_s = 0.4; link = \"leaf0-spine0\"; state = \"up\"; },"
			       " { at_s = 0.5; link = \"leaf0-spine1\"; state = \"down\"; } );",
			       &c));
	CHECK(check_routes_after_events(&c) > 0);
}

int main(void)
{
	if (test_eal_start("test_fabric_lab", "0-1"))
		return 1;
	if (test_ports_setup(config_text, &cfg, ports, qos_map, 2))
		return 1;
	RUN(test_frames_cross_at_the_link_rate);
	RUN(test_a_late_poll_is_lived_through_together);
	RUN(test_a_long_hold_up_loses_the_time_before_the_lag);
	RUN(test_two_lcores_each_poll_their_switches);
	RUN(test_frames_cross_between_two_lcores);
	RUN(test_a_link_event_reaches_each_part_at_its_poll);
	RUN(test_a_held_up_lcore_takes_in_no_more_than_its_headroom);
	RUN(test_routes_after_a_command_match_the_loaders);
	test_ports_teardown(ports, 2);
	test_eal_stop();
	return testlib_finish("test_fabric_lab");
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target for the configuration loader, config_load_string() (config/config_load.c and
 * its section files, and the libconfig helpers of config/config_read*.c; plain C + libconfig, no
 * EAL): any byte string is a configuration file called "fuzz.cfg". Beyond the sanitizers' own
 * checks (the text sits in an exactly-sized heap buffer, so ASan catches any read past its NUL):
 *  - on success the structure is self-consistent: every count within its CFG_MAX_*, every index
 *    (a role's, flow's, responder's, generator's, phase change's, SLA's, FDB entry's, a
 *    collective's receive range's port; a collective's or phase's flow) below the count it
 *    indexes, every value inside the range docs/config.md gives (QPNs and their expansion,
 *    receive ranges apart from each other and from local QPNs, MTUs, DSCP, PCP, VLAN, rates,
 *    ...), names valid and unique, strings NUL-terminated in their buffers;
 *  - on failure the error is one NUL-terminated line of printable ASCII in the documented form
 *    (docs/config.md#error-messages):
 *      fuzz.cfg:LINE: SETTING: what is wrong        (SETTING: libconfig's path syntax)
 *      fuzz.cfg:LINE: syntax error: ...   (when it says "found X where Y was expected", the
 *                                          loader's reading of the grammar; libconfig must
 *                                          refuse that text too)
 *      fuzz.cfg:LINE: @include: ...
 *    LINE is a line of the text; SETTING can be passed to config_lookup() on the same text and
 *    names the setting at fault, at LINE (or, when the setting is missing, the group that lacks
 *    it, at the group's line);
 *  - a failing text fails the same way again into a short error buffer (the message cut to fit,
 *    never overrunning it) and with no error buffer at all.
 * Every violated invariant prints itself (with the error line) and traps.
 *
 * Build: see tests/fuzz/meson.build (-Dfuzzing=true, clang). Replay inputs:
 *   build-fuzz/tests/fuzz/fuzz_config FILE...
 * Fuzz (the seeds are made from configs/ and make_corpus.py's tables into a temporary folder):
 *   tests/fuzz/run_fuzz.sh build-fuzz/tests/fuzz/fuzz_config --seeds-from python3 \
 *     tests/fuzz/make_corpus.py config --out -- -dict=tests/fuzz/config.dict -max_len=6000 \
 *     -max_total_time=600
 */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libconfig.h>

#include "config.h"
#include "fuzz_sanitizers.h"

static const char *cur_err = ""; /* printed with a violated invariant */

#define REQUIRE(cond)                                                                               \
	do {                                                                                        \
		if (!(cond)) {                                                                      \
			fprintf(stderr, "%s:%d: invariant violated: %s\n  error line: \"%s\"\n",  \
				__FILE__, __LINE__, #cond, cur_err);                               \
			__builtin_trap();                                                           \
		}                                                                                   \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/* libconfig 1.5 leaks a string token its parser discards on some syntax errors (docs/config.md,
 * "Known limitation of libconfig 1.5"): not ours, and only on the error path. The token comes
 * from its lexer: strbuf_append() for most strings, calloc() in libconfig_yylex() for "". */
const char *__lsan_default_suppressions(void) { return "leak:strbuf_append\nleak:libconfig_yylex\n"; }

#define NAME "fuzz.cfg"
#define MAX_QPN 0xFFFFFFu

static struct engine_config cfg, cfg2; /* large: keep them off the stack */

static bool terminated(const char *s, size_t n) { return memchr(s, '\0', n) != NULL; }
#define TERMINATED(a) terminated((a), sizeof(a))

static bool valid_name(const char *s)
{
	size_t n = strnlen(s, CFG_NAME_LEN);

	return n >= 1 && n < CFG_NAME_LEN &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

static bool in(double v, double lo, double hi) { return isfinite(v) && v >= lo && v <= hi; }

static void check_inject(const struct cfg_inject *in_, unsigned qps, bool tx)
{
	int ways = (in_->psn >= 0) + (in_->every > 0) + (in_->probability > 0);

	REQUIRE(in_->action <= CFG_INJECT_CORRUPT);
	REQUIRE(ways == 1);
	REQUIRE(in_->psn >= -1 && in_->psn <= (int64_t)MAX_QPN);
	REQUIRE(in_->probability >= 0 && in_->probability <= 1);
	REQUIRE(in_->qp >= -1 && (in_->qp < 0 || (unsigned)in_->qp < qps));
	REQUIRE(tx || (in_->qp == -1 && in_->psn == -1));
}

static void check_port(const struct engine_config *c, unsigned i)
{
	const struct cfg_port *p = &c->ports[i];

	REQUIRE(TERMINATED(p->name) && valid_name(p->name));
	for (unsigned j = 0; j < i; j++)
		REQUIRE(strcmp(c->ports[j].name, p->name) != 0);
	REQUIRE(TERMINATED(p->device) && p->device[0] && strlen(p->device) < 64);
	REQUIRE(TERMINATED(p->vdev_args));
	REQUIRE(strlen(p->device) + 1 + strlen(p->vdev_args) < CFG_STR_LEN);
	REQUIRE(!p->vdev_args[0] || !strncmp(p->device, "net_", 4));
	REQUIRE(p->has_ipv4 || p->has_ipv6);
	REQUIRE(!p->has_mac || !(p->mac[0] & 1));
	REQUIRE(p->link_speed_gbps >= 0 && p->link_speed_gbps <= 800);
	REQUIRE(!config_device_is_virtual(p->device) || p->link_speed_gbps > 0);
	REQUIRE(p->rx_queues >= 1 && p->rx_queues <= 16 && p->tx_queues >= 1 && p->tx_queues <= 16);
	REQUIRE(p->rx_desc >= 64 && p->rx_desc <= 16384 && !(p->rx_desc & (p->rx_desc - 1)));
	REQUIRE(p->tx_desc >= 64 && p->tx_desc <= 16384 && !(p->tx_desc & (p->tx_desc - 1)));
	REQUIRE(p->mtu >= 576 && p->mtu <= 9000);
	REQUIRE(in(p->rx_drop_probability, 0, 1));
	REQUIRE(p->steering <= CFG_STEER_ISOLATE && p->timestamps <= CFG_TS_SOFTWARE);
	for (unsigned d = 0; d < 64; d++)
		REQUIRE(p->dscp_to_priority[d] <= 7);
	for (unsigned t = 0; t < 8; t++) {
		REQUIRE(p->priority_to_tc[t] <= 7);
		REQUIRE(!p->has_tc_to_queue || p->tc_to_queue[t] < p->tx_queues);
		/* weights are read only with qos.egress (without a qos group they stay 0) */
		REQUIRE(!(p->egress_gbps > 0) || (p->ets_weight[t] >= 1 && p->ets_weight[t] <= 1000));
		REQUIRE(in(p->tc_shape_gbps[t], 0, 800));
	}
	REQUIRE(in(p->egress_gbps, 0, 800));
	REQUIRE(!p->xoff_priorities || (p->xon_bytes < p->xoff_bytes && p->xoff_drain_gbps > 0 && p->xoff_quanta >= 1));
	REQUIRE(in(p->tx_schedule_lead_us, 0, 1e6));
	REQUIRE(p->np.cnp_dscp <= 63 && p->np.cnp_802p_prio <= 7);
	REQUIRE(p->n_rx_inject <= CFG_MAX_INJECT);
	for (unsigned k = 0; k < p->n_rx_inject; k++)
		check_inject(&p->rx_inject[k], 1, false);
	REQUIRE(p->line >= 1);
}

static void check_role(const struct engine_config *c, unsigned i)
{
	const struct cfg_lcore_role *r = &c->roles[i];
	static const unsigned roles[] = { CFG_ROLE_TX, CFG_ROLE_RX, CFG_ROLE_TXRX, CFG_ROLE_REFLECT, CFG_ROLE_SWITCH };
	bool known = false;

	for (unsigned k = 0; k < sizeof(roles) / sizeof(roles[0]); k++)
		known |= r->role == roles[k];
	REQUIRE(known);
	REQUIRE(r->port < c->n_ports);
	REQUIRE(r->lcore <= 127 && (int)r->lcore != c->eal.main_lcore);
	REQUIRE(r->queue <= 15);
	REQUIRE(!(r->role & CFG_ROLE_TX) || r->queue < c->ports[r->port].tx_queues);
	REQUIRE(!(r->role & CFG_ROLE_RX) || r->queue < c->ports[r->port].rx_queues);
	for (unsigned j = 0; j < i; j++)
		REQUIRE(!(c->roles[j].port == r->port && c->roles[j].queue == r->queue && (c->roles[j].role & r->role & 3)));
	REQUIRE(r->role != CFG_ROLE_SWITCH || (c->sw.present && c->ports[r->port].is_switch_port));
}

static void check_flow(const struct engine_config *c, unsigned i)
{
	const struct cfg_flow_group *g = &c->groups[i];
	const struct cfg_size *z = &g->msg_size;
	unsigned total = 0;

	REQUIRE(TERMINATED(g->name) && valid_name(g->name));
	for (unsigned j = 0; j < i; j++)
		REQUIRE(strcmp(c->groups[j].name, g->name) != 0);
	REQUIRE(g->port < c->n_ports);
	REQUIRE(g->ip_version == 4 || g->ip_version == 6);
	REQUIRE(g->ip_version == 4 ? c->ports[g->port].has_ipv4 : c->ports[g->port].has_ipv6);
	REQUIRE(g->transport <= CFG_UD);
	for (unsigned op = 0; op < CFG_OP_COUNT; op++) {
		REQUIRE(g->op_weight[op] <= 1000);
		total += g->op_weight[op];
		REQUIRE(!g->op_weight[op] || g->transport != CFG_UD || op <= CFG_OP_SEND_IMM);
		REQUIRE(!g->op_weight[op] || g->transport != CFG_UC || op < CFG_OP_READ);
	}
	REQUIRE(total > 0);
	REQUIRE(z->dist <= CFG_SIZE_EXPONENTIAL);
	REQUIRE(z->min <= z->max && z->max <= (1u << 30));
	REQUIRE(z->mean >= z->min && z->mean <= z->max);
	REQUIRE(z->dist != CFG_SIZE_FIXED || (z->min == z->fixed && z->max == z->fixed));
	REQUIRE(g->ib_mtu >= 256 && g->ib_mtu <= 4096 && !(g->ib_mtu & (g->ib_mtu - 1)));
	REQUIRE(g->ib_mtu + (g->ip_version == 4 ? 20u : 40u) + 8u + 12u + 28u + 4u <= c->ports[g->port].mtu);
	REQUIRE(g->transport != CFG_UD || z->max <= g->ib_mtu);
	REQUIRE(g->qpn >= 2 && g->qpn <= MAX_QPN && g->dest_qpn >= 2 && g->dest_qpn <= MAX_QPN);
	REQUIRE(g->start_psn <= MAX_QPN);
	REQUIRE(g->count >= 1 && g->count <= CFG_MAX_QPS_PER_GROUP);
	REQUIRE(g->qpn_step >= 1 && g->dest_qpn_step >= 1);
	REQUIRE(g->qpn + (uint64_t)(g->count - 1) * g->qpn_step <= MAX_QPN);
	REQUIRE(g->dest_qpn + (uint64_t)(g->count - 1) * g->dest_qpn_step <= MAX_QPN);
	REQUIRE(g->sport_entropy || (g->sport >= 1 && g->sport + (uint64_t)(g->count - 1) * g->sport_step <= 65535));
	REQUIRE(g->transport == CFG_UD || g->qkey == 0x11111111);
	REQUIRE(g->dscp <= 63 && g->ecn <= 3 && g->pcp <= 7 && g->vlan <= 4094);
	REQUIRE(g->has_vlan || (g->pcp == 0 && g->vlan == 0));
	REQUIRE(in(g->rate_gbps, 0, 800) && in(g->rate_pps, 0, 1e9));
	REQUIRE(!(g->rate_gbps > 0 && g->rate_pps > 0));
	REQUIRE(g->rate_gbps == 0 || c->ports[g->port].link_speed_gbps == 0 ||
		g->rate_gbps <= c->ports[g->port].link_speed_gbps);
	REQUIRE(g->pattern <= CFG_PATTERN_POISSON);
	REQUIRE(g->pattern == CFG_PATTERN_CONSTANT || g->rate_gbps > 0 || g->rate_pps > 0);
	REQUIRE(g->pattern != CFG_PATTERN_ONOFF || (g->on_us > 0 && g->off_us > 0));
	REQUIRE(in(g->stop_seconds, 0, 1e9));
	REQUIRE(in(g->retry_timeout_us, 1, 1e8) && g->retry_limit <= 1000);
	REQUIRE(g->max_outstanding >= 1 && g->max_outstanding <= 128 && g->ack_every <= 1000000);
	REQUIRE(g->latency <= CFG_LAT_PINGPONG && in(g->latency_timeout_us, 1, 1e8));
	REQUIRE(g->latency == CFG_LAT_OFF ||
		((g->op_weight[CFG_OP_SEND] || g->op_weight[CFG_OP_SEND_IMM] || g->op_weight[CFG_OP_WRITE] ||
		  g->op_weight[CFG_OP_WRITE_IMM]) &&
		 z->min >= CFG_PROBE_MIN_PAYLOAD));
	REQUIRE(g->cc <= CFG_CC_TIMELY);
	REQUIRE(g->cc != CFG_CC_TIMELY || g->transport == CFG_RC);
	REQUIRE(g->cc == CFG_CC_NONE || (g->rate_pps == 0 && g->pattern == CFG_PATTERN_CONSTANT));
	REQUIRE(g->n_inject <= CFG_MAX_INJECT);
	for (unsigned k = 0; k < g->n_inject; k++)
		check_inject(&g->inject[k], g->count, true);
	REQUIRE(g->line >= 1);
}

/* No two QPs of one port share a QPN (checked here by brute force on small configs only). */
static void check_qpns(const struct engine_config *c)
{
	uint64_t qps = 0;

	for (unsigned k = 0; k < c->n_groups; k++)
		qps += c->groups[k].count;
	if (qps > 4096)
		return;
	for (unsigned a = 0; a < c->n_groups; a++)
		for (unsigned b = a + 1; b < c->n_groups; b++) {
			const struct cfg_flow_group *x = &c->groups[a], *y = &c->groups[b];

			if (x->port != y->port)
				continue;
			for (unsigned i = 0; i < x->count; i++)
				for (unsigned j = 0; j < y->count; j++)
					REQUIRE(x->qpn + i * x->qpn_step != y->qpn + j * y->qpn_step);
		}
}

/* A collective's receive ranges: on a port, inside 24 bits, apart from every other range and from
 * the port's local requester QPNs. */
static void check_receives(const struct engine_config *c, const struct cfg_collective *k)
{
	REQUIRE(k->n_receives <= CFG_MAX_COLLECTIVE_RECEIVES);
	for (unsigned i = 0; i < k->n_receives; i++) {
		const struct cfg_coll_receive *r = &k->receives[i];
		uint32_t last = r->qpn + r->count - 1;

		REQUIRE(r->port < c->n_ports && r->count >= 1 && r->count <= CFG_MAX_QPS_PER_GROUP);
		REQUIRE(r->qpn >= 2 && (uint64_t)r->qpn + r->count - 1 <= MAX_QPN);
		for (unsigned o = 0; o < c->n_collectives; o++)
			for (unsigned j = 0; j < c->collectives[o].n_receives; j++) {
				const struct cfg_coll_receive *x = &c->collectives[o].receives[j];
				REQUIRE(x == r || x->port != r->port || x->qpn > last || x->qpn + x->count - 1 < r->qpn);
			}
		for (unsigned g = 0; g < c->n_groups; g++) {
			const struct cfg_flow_group *f = &c->groups[g];
			for (unsigned q = 0; f->port == r->port && q < f->count && q < 4096; q++)
				REQUIRE(f->qpn + q * f->qpn_step < r->qpn || f->qpn + q * f->qpn_step > last);
		}
	}
}

/* A switch's buffer, PFC and ECN as the loader leaves them (the switch group's, or a tier's). */
static void check_buffer(const struct cfg_switch *w)
{
	REQUIRE(w->buffer_bytes >= 1024 && w->queue_limit_bytes <= w->buffer_bytes && in(w->alpha, 0, 64));
	REQUIRE(!w->pfc_priorities || (w->xon_bytes <= w->xoff_bytes && w->xoff_bytes + w->headroom_bytes <= w->buffer_bytes));
	for (unsigned t = 0; t < 8; t++)
		REQUIRE(!w->has_red[t] || (w->red[t].kmin_bytes <= w->red[t].kmax_bytes && in(w->red[t].pmax, 0, 1)));
}
static void check_config(const struct engine_config *c)
{
	REQUIRE(TERMINATED(c->file) && !strcmp(c->file, NAME));
	/* eal */
	REQUIRE(TERMINATED(c->eal.lcores) && TERMINATED(c->eal.file_prefix) && TERMINATED(c->eal.log_level));
	REQUIRE(c->eal.main_lcore >= 0 && c->eal.main_lcore <= 127);
	REQUIRE(c->eal.memory_mb >= 16 && c->eal.memory_mb <= 65536);
	REQUIRE(c->eal.n_extra <= CFG_MAX_EAL_ARGS);
	for (unsigned i = 0; i < c->eal.n_extra; i++)
		REQUIRE(TERMINATED(c->eal.extra[i]) && c->eal.extra[i][0]);
	/* sections */
	REQUIRE(c->n_ports >= 1 && c->n_ports <= CFG_MAX_PORTS);
	for (unsigned i = 0; i < c->n_ports; i++)
		check_port(c, i);
	REQUIRE(c->n_roles >= 1 && c->n_roles <= CFG_MAX_ROLES);
	for (unsigned i = 0; i < c->n_roles; i++)
		check_role(c, i);
	REQUIRE(c->n_groups <= CFG_MAX_FLOW_GROUPS);
	for (unsigned i = 0; i < c->n_groups; i++)
		check_flow(c, i);
	check_qpns(c);
	REQUIRE(c->n_collectives <= CFG_MAX_COLLECTIVES);
	for (unsigned i = 0; i < c->n_collectives; i++) {
		const struct cfg_collective *k = &c->collectives[i];

		REQUIRE(TERMINATED(k->name) && valid_name(k->name));
		REQUIRE(k->type <= CFG_COLL_CUSTOM);
		REQUIRE(k->phases >= 1 && k->phases <= CFG_MAX_PHASES);
		REQUIRE(k->n_flows >= 1 && k->n_flows <= CFG_MAX_COLLECTIVE_FLOWS);
		for (unsigned f = 0; f < k->n_flows; f++) {
			const struct cfg_flow_group *g = &c->groups[k->flows[f]];

			REQUIRE(k->flows[f] < c->n_groups);
			REQUIRE(c->group_collective[k->flows[f]] == (int)i);
			REQUIRE(!g->stop_messages && !g->stop_bytes && g->stop_seconds == 0);
		}
		check_receives(c, k);
	}
	for (unsigned g = 0; g < CFG_MAX_FLOW_GROUPS; g++)
		REQUIRE(c->group_collective[g] == -1 ||
			(g < c->n_groups && c->group_collective[g] >= 0 && (unsigned)c->group_collective[g] < c->n_collectives));
	REQUIRE(c->n_responders <= CFG_MAX_RESPONDERS && c->n_peers <= CFG_MAX_RESPONDERS);
	for (unsigned i = 0; i < c->n_responders + c->n_peers; i++) {
		const struct cfg_responder *r = i < c->n_responders ? &c->responders[i] : &c->peers[i - c->n_responders];

		REQUIRE(r->port < c->n_ports);
		REQUIRE(r->qpn >= 2 && r->qpn <= MAX_QPN && r->peer_qpn >= 2 && r->peer_qpn <= MAX_QPN);
		REQUIRE(r->count >= 1 && r->count <= CFG_MAX_QPS_PER_GROUP);
		REQUIRE(r->qpn + (uint64_t)(r->count - 1) * r->qpn_step <= MAX_QPN);
		REQUIRE(r->peer_qpn + (uint64_t)(r->count - 1) * r->peer_qpn_step <= MAX_QPN);
		REQUIRE(r->ib_mtu >= 256 && r->ib_mtu <= 4096 && !(r->ib_mtu & (r->ib_mtu - 1)));
		REQUIRE(r->start_psn <= MAX_QPN && r->ack_every <= 1000000);
	}
	REQUIRE(c->n_phases <= CFG_MAX_PHASE_LIST);
	for (unsigned i = 0; i < c->n_phases; i++) {
		const struct cfg_phase *ph = &c->phases[i];

		REQUIRE(TERMINATED(ph->name) && valid_name(ph->name));
		REQUIRE(in(ph->at_s, 0, 1e7) && (i == 0 || ph->at_s > c->phases[i - 1].at_s));
		REQUIRE(ph->n_egress <= CFG_MAX_PHASE_CHANGES && ph->n_rates <= CFG_MAX_PHASE_CHANGES);
		for (unsigned k = 0; k < ph->n_egress; k++) {
			REQUIRE(ph->egress[k].port < c->n_ports && c->ports[ph->egress[k].port].egress_gbps > 0);
			REQUIRE(ph->egress[k].tc <= 7 && ph->egress[k].weight >= 1 && ph->egress[k].weight <= 1000);
			REQUIRE(in(ph->egress[k].shape_gbps, 0, 800));
		}
		for (unsigned k = 0; k < ph->n_rates; k++) {
			REQUIRE(ph->rates[k].group < c->n_groups && c->groups[ph->rates[k].group].rate_gbps > 0);
			REQUIRE(ph->rates[k].gbps > 0 && ph->rates[k].gbps <= 800);
		}
	}
	REQUIRE(c->n_pfc_generators <= CFG_MAX_PFC_GENERATORS);
	for (unsigned i = 0; i < c->n_pfc_generators; i++) {
		const struct cfg_pfc_generator *g = &c->pfc_generators[i];

		REQUIRE(g->port < c->n_ports);
		REQUIRE(g->pause ? g->class_enable == 0 : g->class_enable != 0);
		REQUIRE(g->rate_pps > 0 && g->rate_pps <= 1e8 && in(g->start_s, 0, 1e6));
	}
	/* switch */
	REQUIRE(TERMINATED(c->sw.trace));
	if (c->fab.present) {
		/* a fabric: its NICs are the last ports, its switches within the lab's sizes */
		REQUIRE(c->fab.first_port + c->fab.n_nics == c->n_ports && c->fab.n_nics >= 1);
		REQUIRE(!c->fab.bridged || c->fab.external);
		if (c->fab.external) {
			/* the switches outside: none of ours, no switch group; each NIC on a device of its own
			 * (not one of the fabric's cables), a unicast gateway unless bridged */
			REQUIRE(!c->fab.n_switches && !c->fab.n_links && !c->sw.present && c->fab.n_events <= CFG_FAB_MAX_EVENTS);
			REQUIRE(TERMINATED(c->fab.counters_command));
			for (unsigned k = 0; k < c->fab.n_events; k++) /* each event's command, filled in */
				REQUIRE(c->fab.events[k].command[0] && TERMINATED(c->fab.events[k].command) &&
					TERMINATED(c->fab.events[k].link_name) && !strstr(c->fab.events[k].command, "{link}") &&
					(!k || c->fab.events[k].at_s >= c->fab.events[k - 1].at_s));
			for (unsigned n = 0; n < c->fab.n_nics; n++) {
				const struct cfg_port *p = &c->ports[c->fab.first_port + n];
				REQUIRE(p->has_ipv4 && p->has_mac && !p->extra_mbufs && strncmp(p->device, "ring:fab", 8));
				REQUIRE(c->fab.bridged || !(c->fab.nic[n].gateway_mac[0] & 1));
				for (unsigned j = 0; j < c->n_ports; j++)
					REQUIRE(j == c->fab.first_port + n || strcasecmp(c->ports[j].device, p->device));
			}
			goto fabric_done;
		}
		REQUIRE(c->fab.n_switches >= 1 && c->fab.n_switches <= CFG_FAB_MAX_SWITCHES);
		REQUIRE(c->fab.n_links <= CFG_FAB_MAX_LINKS && !c->sw.n_ports && !c->sw.trace[0]);
		for (unsigned w = 0; w < c->fab.n_switches; w++) {
			const struct cfg_fab_switch *fs = &c->fab.sw[w];
			REQUIRE(fs->n_ports >= 1 && fs->n_ports <= CFG_FAB_MAX_SW_PORTS && fs->n_routes <= CFG_FAB_MAX_ROUTES);
			for (unsigned k = 0; k < fs->n_ports; k++)
				REQUIRE(fs->ports[k].to_nic ? fs->ports[k].peer >= c->fab.first_port && fs->ports[k].peer < c->n_ports
							    : fs->ports[k].peer < c->fab.n_switches);
			for (unsigned r = 0; r < fs->n_routes; r++) {
				REQUIRE(fs->routes[r].n >= 1 && fs->routes[r].len <= 32);
				for (unsigned m = 0; m < fs->routes[r].n; m++)
					REQUIRE(fs->routes[r].ports[m] < fs->n_ports);
			}
		}
		for (unsigned n = 0; n < c->fab.n_nics; n++)
			REQUIRE(c->ports[c->fab.first_port + n].has_ipv4 && c->ports[c->fab.first_port + n].extra_mbufs);
		check_buffer(&c->sw);
		for (unsigned t = 0; t < FAB_TIERS; t++)
			if (c->fab.tier_set >> t & 1)
				check_buffer(&c->fab.tier_sw[t]);
	fabric_done:;
	} else if (c->sw.present) {
		unsigned n = 0;

		for (unsigned p = 0; p < c->n_ports; p++)
			n += c->ports[p].is_switch_port;
		REQUIRE(c->sw.n_ports >= 2 && n >= 2 && n <= c->sw.n_ports);
		check_buffer(&c->sw);
		REQUIRE(in(c->sw.delay_us, 0, 1e6) && in(c->sw.trace_interval_us, 1, 1e9));
		REQUIRE(c->sw.seed >= 1);
		REQUIRE(c->sw.n_fdb <= CFG_MAX_FDB && c->sw.n_vlans <= CFG_MAX_VLANS);
		for (unsigned k = 0; k < c->sw.n_fdb; k++)
			REQUIRE(c->sw.fdb[k].port < c->n_ports && c->ports[c->sw.fdb[k].port].is_switch_port);
		for (unsigned k = 0; k < c->sw.n_vlans; k++) {
			REQUIRE(c->sw.vlans[k].vid >= 1 && c->sw.vlans[k].vid <= 4094 && c->sw.vlans[k].ports);
			REQUIRE(!(c->sw.vlans[k].ports >> c->n_ports));
			for (unsigned j = 0; j < k; j++)
				REQUIRE(c->sw.vlans[j].vid != c->sw.vlans[k].vid);
		}
	} else {
		REQUIRE(c->sw.n_ports == 0 && c->sw.n_fdb == 0 && c->sw.n_vlans == 0);
		for (unsigned p = 0; p < c->n_ports; p++)
			REQUIRE(!c->ports[p].is_switch_port && !c->ports[p].extra_mbufs);
	}
	/* SLA checks */
	REQUIRE(c->n_sla <= CFG_MAX_SLA);
	for (unsigned i = 0; i < c->n_sla; i++) {
		const struct cfg_sla *s = &c->sla[i];

		REQUIRE(s->metric < SLA_METRIC_COUNT && (s->metric >= SLA_FIRST_PORT_METRIC) == s->port);
		REQUIRE(s->target >= -1 && (s->target < 0 || (unsigned)s->target < (s->port ? c->n_ports : c->n_groups)));
		REQUIRE(s->has_min || s->has_max);
		REQUIRE(s->priority >= -1 && s->priority <= 7 && (s->priority < 0 || s->metric == SLA_PAUSE_PERCENT));
	}
	/* run */
	REQUIRE(in(c->duration_s, 0, 1e9) && in(c->stats_interval_s, 0.1, 3600));
	REQUIRE(TERMINATED(c->report) && TERMINATED(c->latency_samples) && TERMINATED(c->timeseries) &&
		TERMINATED(c->capture) && TERMINATED(c->cc_trace) && TERMINATED(c->http_addr) &&
		TERMINATED(c->http_dashboard));
	REQUIRE(c->latency_sample_every >= 1 && c->latency_foreign_qps <= 65536);
	REQUIRE(c->capture_every >= 1 && (c->capture_snaplen == 0 || (c->capture_snaplen >= 64 && c->capture_snaplen <= 65535)));
	REQUIRE(!(c->capture_ports >> c->n_ports));
	REQUIRE(c->cc_trace_qps >= 1 && c->cc_trace_step >= 1 && in(c->cc_trace_interval_us, 1, 1e9));
	REQUIRE(in(c->http_linger_s, 0, 3600));
	REQUIRE(c->http_addr[0]);
}

/* ---- the error line ------------------------------------------------------------------------- */

/* The text as the loader hands it to libconfig: ending with a newline (libconfig 1.5 refuses a
 * comment on a last line without one). To free(). */
static char *with_newline(const char *text)
{
	size_t n = strlen(text);
	char *nl = malloc(n + 2);

	REQUIRE(nl != NULL);
	memcpy(nl, text, n + 1);
	if (!n || nl[n - 1] != '\n')
		memcpy(nl + n, "\n", 2);
	return nl;
}

/* Whether libconfig itself reads the text (it leaks a string read before some syntax errors:
 * __lsan_default_suppressions above). */
static bool libconfig_reads(const char *text)
{
	char *nl = with_newline(text);
	config_t lc;
	bool ok;

	config_init(&lc);
	ok = config_read_string(&lc, nl) == CONFIG_TRUE;
	config_destroy(&lc);
	free(nl);
	return ok;
}

/* Checks "SETTING" against the text: config_lookup() finds it at `line`, or, when it is missing,
 * finds the group that lacks it at `line`. */
static void check_setting(const char *text, const char *path, unsigned line)
{
	config_t lc;
	const config_setting_t *s, *parent;
	char parent_path[300];
	const char *dot;
	char *nl = with_newline(text);

	config_init(&lc);
	REQUIRE(config_read_string(&lc, nl) == CONFIG_TRUE); /* the loader got past libconfig */
	free(nl);
	if (!strcmp(path, "(top)")) {
		REQUIRE(line == 1);
		config_destroy(&lc);
		return;
	}
	s = config_lookup(&lc, path);
	if (s) {
		unsigned at = config_setting_source_line(s);

		REQUIRE(line == (at ? at : 1));
	} else {
		/* a missing member: its group exists (the root for a top-level section) */
		dot = strrchr(path, '.');
		if (!dot) {
			parent = config_root_setting(&lc);
		} else {
			REQUIRE((size_t)(dot - path) < sizeof(parent_path));
			memcpy(parent_path, path, (size_t)(dot - path));
			parent_path[dot - path] = '\0';
			parent = config_lookup(&lc, parent_path);
		}
		REQUIRE(parent != NULL);
		REQUIRE(config_setting_is_group(parent));
		REQUIRE(config_setting_get_member(parent, dot ? dot + 1 : path) == NULL);
		REQUIRE(line == (config_setting_source_line(parent) ? config_setting_source_line(parent) : 1));
	}
	config_destroy(&lc);
}

static void check_error(const char *text, const char *err, size_t errlen)
{
	unsigned long line, lines = 1;
	const char *p, *rest, *colon;
	char path[300];
	char *end;

	cur_err = err;
	REQUIRE(terminated(err, errlen));
	REQUIRE(err[0] != '\0');
	for (p = err; *p; p++) /* one line of printable ASCII: no newline, no terminal escapes */
		REQUIRE(*p >= 0x20 && *p < 0x7f);
	for (p = text; *p; p++)
		lines += *p == '\n';
	REQUIRE(!strncmp(err, NAME ":", strlen(NAME ":")));
	p = err + strlen(NAME ":");
	REQUIRE(isdigit((unsigned char)*p));
	line = strtoul(p, &end, 10);
	REQUIRE(line >= 1 && line <= lines);
	REQUIRE(end[0] == ':' && end[1] == ' ');
	rest = end + 2;
	if (!strncmp(rest, "syntax error: ", 14)) {
		REQUIRE(rest[14] != '\0');
		/* the loader's own reading of the grammar found the fault: libconfig must refuse the
		 * text too, or that reading would refuse configurations libconfig takes */
		if (!strncmp(rest, "syntax error: found ", 20))
			REQUIRE(!libconfig_reads(text));
		return;
	}
	if (!strncmp(rest, "@include: ", 10))
		return;
	/* SETTING: what is wrong */
	colon = strstr(rest, ": ");
	REQUIRE(colon != NULL && colon > rest);
	REQUIRE(colon[2] != '\0');
	REQUIRE((size_t)(colon - rest) < sizeof(path));
	memcpy(path, rest, (size_t)(colon - rest));
	path[colon - rest] = '\0';
	for (p = path; *p; p++)
		REQUIRE(isalnum((unsigned char)*p) || strchr("._-*[]()", *p));
	if (strlen(path) < 250) /* the loader cuts longer paths */
		check_setting(text, path, (unsigned)line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	static char err[2048], small[64];
	size_t smallen;
	int rc, rc2;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	cur_err = "";
	memset(err, 'x', sizeof(err));
	rc = config_load_string(text, NAME, &cfg, err, sizeof(err));
	REQUIRE(rc == 0 || rc == -1);
	if (rc == 0) {
		REQUIRE(err[0] == '\0');
		check_config(&cfg);
	} else {
		check_error(text, err, sizeof(err));
	}

	/* a failure again, into a short buffer: the same message, cut to fit, never overrunning it */
	if (rc == 0) {
		free(text);
		return 0;
	}
	smallen = 1 + size % (sizeof(small) - 1);
	memset(small, 'x', sizeof(small));
	rc2 = config_load_string(text, NAME, &cfg2, small, smallen);
	REQUIRE(rc2 == rc);
	REQUIRE(terminated(small, smallen));
	REQUIRE(smallen == sizeof(small) || small[smallen] == 'x');
	REQUIRE(!strncmp(small, err, smallen - 1));
	REQUIRE(strlen(small) == (strlen(err) < smallen - 1 ? strlen(err) : smallen - 1));
	/* and without an error buffer at all (every 4th input: each load costs) */
	if (size % 4 == 0)
		REQUIRE(config_load_string(text, NAME, &cfg2, NULL, 0) == rc);
	free(text);
	return 0;
}

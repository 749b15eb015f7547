/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Trial configurations as libconfig trees (lab.h): setters, the generated virtual lab, the base
 * config. The generated lab follows configs/lab-*.cfg: every host is a port on one end of an
 * in-process ring cable whose other end is a switch port; hosts and switch share lcore 1, the
 * main lcore 0 supervises.
 */
#include "lab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_read.h"

#define DESCRIPTORS 256          /* small rings: a trial's pools stay small and start quickly */
#define IB_HEADERS 72             /* IP MTU a full IB MTU packet needs (config/config_flows.c) */
#define MBUF_OVERHEAD 320        /* an mbuf's header, headroom and the pool's own per-object bytes */

/* ---- frames and links --------------------------------------------------------------------------- */

unsigned ib_mtu_for(unsigned payload)
{
	unsigned m = 256;

	while (m < payload && m < 4096)
		m *= 2;
	return m;
}

double link_fps(double gbps, unsigned frame_bytes)
{
	return gbps * 1e9 / ((frame_bytes + WIRE_GAP_BYTES) * 8.0);
}

double link_frame_gbps(double gbps, unsigned frame_bytes)
{
	return link_fps(gbps, frame_bytes) * frame_bytes * 8.0 / 1e9;
}

/* ---- the generated lab -------------------------------------------------------------------------- */

void lab_init(struct lab *l, const struct suite_cfg *s)
{
	config_setting_t *root, *eal;

	memset(l, 0, sizeof(*l));
	config_init(&l->cfg);
	root = config_root_setting(&l->cfg);
	eal = cfg_group(root, "eal");
	cfg_set_string(eal, "lcores", "0-1"); /* lcore 0 supervises, lcore 1 runs hosts and switch */
	l->ports = config_setting_add(root, "ports", CONFIG_TYPE_LIST);
	l->lcores = config_setting_add(root, "lcores", CONFIG_TYPE_LIST);
	if (s->sw)
		cfg_copy(root, "switch", s->sw);
	else
		cfg_set_int(cfg_group(root, "switch"), "buffer_kb", 1024);
	l->flows = config_setting_add(root, "flows", CONFIG_TYPE_LIST);
}

static void add_port(struct lab *l, const char *name, const char *device, const char *mac, const char *ip,
		     double gbps)
{
	config_setting_t *p = config_setting_add(l->ports, NULL, CONFIG_TYPE_GROUP);

	cfg_set_string(p, "name", name);
	cfg_set_string(p, "device", device);
	cfg_set_string(p, "mac", mac);
	cfg_set_string(p, "ipv4", ip);
	cfg_set_float(p, "link_speed_gbps", gbps);
	cfg_set_int(p, "rx_desc", DESCRIPTORS);
	cfg_set_int(p, "tx_desc", DESCRIPTORS);
}

static void add_role(struct lab *l, const char *port, const char *role)
{
	config_setting_t *r = config_setting_add(l->lcores, NULL, CONFIG_TYPE_GROUP);

	cfg_set_int(r, "lcore", 1);
	cfg_set_string(r, "port", port);
	cfg_set_string(r, "role", role);
}

static int host_index(const struct lab *l, const char *name)
{
	for (unsigned i = 0; i < l->n_hosts; i++)
		if (!strcmp(l->host[i], name))
			return (int)i;
	return -1;
}

void lab_add_host(struct lab *l, const char *name, double gbps)
{
	unsigned i = l->n_hosts++;
	char dev[32], sw[16], mac[24], ip[24];

	snprintf(l->host[i], sizeof(l->host[i]), "%s", name);
	snprintf(dev, sizeof(dev), "ring:%s:a", name);
	snprintf(mac, sizeof(mac), "02:00:00:0a:%02x:01", i);
	snprintf(ip, sizeof(ip), "10.10.%u.1", i);
	add_port(l, name, dev, mac, ip, gbps);
	snprintf(sw, sizeof(sw), "s%s", name);
	snprintf(dev, sizeof(dev), "ring:%s:b", name);
	snprintf(mac, sizeof(mac), "02:00:00:5e:00:%02x", i);
	snprintf(ip, sizeof(ip), "10.10.255.%u", i);
	add_port(l, sw, dev, mac, ip, gbps);
	add_role(l, name, "txrx");   /* txrx: RC answers and CNPs leave from the receiving side too */
	add_role(l, sw, "switch");
}

config_setting_t *lab_add_flow(struct lab *l, const struct lab_flow *f)
{
	config_setting_t *g = config_setting_add(l->flows, NULL, CONFIG_TYPE_GROUP), *x;
	int to = host_index(l, f->to);
	unsigned k = l->n_flows++, frame = f->message_size + ROCE_FRAME_OVERHEAD;
	char mac[24], ip[24];

	snprintf(mac, sizeof(mac), "02:00:00:0a:%02x:01", to);
	snprintf(ip, sizeof(ip), "10.10.%d.1", to);
	cfg_set_string(g, "name", f->name);
	cfg_set_string(g, "port", f->from);
	cfg_set_string(g, "dst_mac", mac);
	cfg_set_string(g, "dst_ip", ip);
	cfg_set_string(g, "transport", f->transport);
	cfg_set_int(cfg_group(g, "ops"), f->op, 1);
	cfg_set_int(g, "message_size", f->message_size);
	cfg_set_int(g, "mtu", f->ib_mtu);
	/* QPNs unique across the lab, so that the switch's per-flow rows (egress, dest QPN) and the
	 * receivers' QPs never mix two flows */
	x = cfg_replace(g, "qpn", CONFIG_TYPE_INT);
	config_setting_set_int(x, (int)(0x100 + k));
	config_setting_set_format(x, CONFIG_FORMAT_HEX);
	x = cfg_replace(g, "dest_qpn", CONFIG_TYPE_INT);
	config_setting_set_int(x, (int)(0x1000 + k));
	config_setting_set_format(x, CONFIG_FORMAT_HEX);
	cfg_set_int(g, "dscp", f->priority * 8 + 2);
	if (f->rate_gbps > 0)
		cfg_set_float(g, "rate_gbps", f->rate_gbps);
	if (f->stop_messages)
		cfg_set_int(cfg_group(g, "stop"), "messages", f->stop_messages);
	if (f->latency)
		cfg_set_string(cfg_group(g, "latency"), "mode", "oneway");
	if (f->ib_mtu < f->message_size) /* several packets: the largest is a full one, with its RETH */
		frame = f->ib_mtu + ROCE_FRAME_OVERHEAD + 16;
	/* the IP packet of the largest frame; and the engine wants room for a full IB MTU packet with
	 * every header it may carry (IP, UDP, BTH, RETH, DETH, ImmDt, ICRC: 72 bytes) */
	if (frame - 18 > l->ip_mtu)
		l->ip_mtu = frame - 18;
	if (f->ib_mtu + IB_HEADERS > l->ip_mtu)
		l->ip_mtu = f->ib_mtu + IB_HEADERS;
	return g;
}

void lab_finish(struct lab *l, const struct suite_cfg *s)
{
	unsigned mtu = l->ip_mtu > 1500 ? l->ip_mtu : 1500;
	unsigned n_ports = (unsigned)config_setting_length(l->ports), memory = s->lab.memory_mb;
	double buffer_kb = cfg_number(config_lookup(&l->cfg, "switch"), "buffer_kb", 2048);

	if (mtu > 9000)
		mtu = 9000;
	for (unsigned p = 0; p < n_ports; p++)
		cfg_set_int(config_setting_get_elem(l->ports, p), "mtu", mtu);
	if (!memory) {
		/* per port: its own pool and its TX role's (descriptors, caches, bursts: ~2,600 mbufs)
		 * and, for the switch, buffer_kb x 2 more in each (config/config_lab.c), with half again
		 * for the allocator's rounding; plus EAL's own */
		double room = (mtu + 22 + 128 > 2176 ? mtu + 22 + 128 : 2176) + MBUF_OVERHEAD;
		double mbufs = 2600.0 + 4 * buffer_kb;
		memory = (unsigned)(96 + 1.5 * n_ports * mbufs * room / (1 << 20));
		memory = (memory + 31) / 32 * 32;
	}
	cfg_set_int(config_lookup(&l->cfg, "eal"), "memory_mb", memory);
}

void lab_free(struct lab *l)
{
	config_destroy(&l->cfg);
}

/* ---- the switch's settings ---------------------------------------------------------------------- */

/* Defaults as config/config_lab.c has them (docs/config.md, switch group). */
void switch_view_read(config_t *cfg, struct switch_view *v)
{
	const config_setting_t *sw = config_lookup(cfg, "switch"), *pfc, *ecn, *pr;

	memset(v, 0, sizeof(*v));
	if (!(v->present = sw != NULL))
		return;
	v->buffer_kb = cfg_number(sw, "buffer_kb", 2048);
	v->queue_limit_kb = cfg_number(sw, "queue_limit_kb", 0);
	v->alpha = cfg_number(sw, "alpha", 0);
	if ((pfc = config_setting_get_member(sw, "pfc"))) {
		v->xoff_kb = cfg_number(pfc, "xoff_kb", 100);
		v->headroom_kb = cfg_number(pfc, "headroom_kb", 100);
		pr = config_setting_get_member(pfc, "priorities");
		if (!pr)
			v->lossless = 1u << 3;
		for (int i = 0; pr && i < config_setting_length(pr); i++)
			v->lossless |= 1u << (config_setting_get_int_elem(pr, i) & 7);
	}
	ecn = config_setting_get_member(sw, "ecn");
	for (int i = 0; ecn && i < config_setting_length(ecn); i++) {
		const config_setting_t *e = config_setting_get_elem(ecn, (unsigned)i);
		unsigned tc = (unsigned)cfg_number(e, "tc", 0) & 7;
		v->ecn[tc] = true;
		v->kmin_kb[tc] = cfg_number(e, "kmin_kb", 0);
		v->kmax_kb[tc] = cfg_number(e, "kmax_kb", 0);
	}
}

double switch_queue_room(const struct switch_view *v)
{
	if (v->queue_limit_kb > 0)
		return v->queue_limit_kb * 1024;
	if (v->alpha > 0)
		return v->alpha / (1 + v->alpha) * v->buffer_kb * 1024;
	return v->buffer_kb * 1024;
}

/* ---- base config -------------------------------------------------------------------------------- */

int base_load(const char *path, config_t *cfg, char *err, size_t errlen)
{
	struct config_reader r;

	cr_init(&r, path, err, errlen, "configuration");
	return cr_parse_file(&r, path, cfg);
}

void base_merge_switch(config_t *cfg, const struct suite_cfg *s)
{
	config_setting_t *sw;

	if (!s->sw)
		return;
	sw = cfg_group(config_root_setting(cfg), "switch");
	for (int i = 0; i < config_setting_length(s->sw); i++) {
		const config_setting_t *m = config_setting_get_elem(s->sw, (unsigned)i);
		cfg_copy(sw, config_setting_name(m), m);
	}
}

config_setting_t *base_flow(config_t *cfg, const char *name)
{
	config_setting_t *flows = config_lookup(cfg, "flows");
	const char *n;

	for (int i = 0; flows && i < config_setting_length(flows); i++) {
		config_setting_t *f = config_setting_get_elem(flows, (unsigned)i);
		if (config_setting_lookup_string(f, "name", &n) && !strcmp(n, name))
			return f;
	}
	return NULL;
}

config_setting_t *base_port(config_t *cfg, const char *key, const char *value)
{
	config_setting_t *ports = config_lookup(cfg, "ports");
	const char *v;

	for (int i = 0; ports && value && i < config_setting_length(ports); i++) {
		config_setting_t *p = config_setting_get_elem(ports, (unsigned)i);
		if (config_setting_lookup_string(p, key, &v) && !(strcmp(key, "mac") ? strcmp(v, value) : strcasecmp(v, value)))
			return p;
	}
	return NULL;
}

bool base_flow_selected(const config_setting_t *fs, const config_setting_t *names)
{
	const char *n;

	if (!names)
		return true;
	if (!config_setting_lookup_string(fs, "name", &n))
		return false;
	for (int i = 0; i < config_setting_length(names); i++)
		if (!strcmp(config_setting_get_string_elem(names, i), n))
			return true;
	return false;
}

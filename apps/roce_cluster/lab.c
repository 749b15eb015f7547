/* SPDX-License-Identifier: BSD-3-Clause */
#include "lab.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config_tree.h"
#include "engine_child.h"

#define READY_WAIT_S 30 /* the switch's EAL start, its ports started */
#define LAB_READY_FILE "ready"

void lab_endpoint(const struct cluster_cfg *c, unsigned rank, const char *sock_dir, struct cl_endpoint *ep)
{
	snprintf(ep->device, sizeof(ep->device), "net_memif0");
	snprintf(ep->vdev_args, sizeof(ep->vdev_args), "role=client,id=0,socket=%s/s%u.sock,socket-abstract=no", sock_dir,
		 rank);
	memcpy(ep->mac, (uint8_t[6]){ 0x02, 0, 0, 0xcc, (uint8_t)(rank >> 8), (uint8_t)rank }, 6);
	memcpy(ep->ipv4, (uint8_t[4]){ 10, 77, (uint8_t)((rank + 1) >> 8), (uint8_t)(rank + 1) }, 4);
	memcpy(ep->ipv6, (uint8_t[16]){ 0xfd, 0x77, [14] = (uint8_t)((rank + 1) >> 8), [15] = (uint8_t)(rank + 1) }, 16);
	ep->family = (uint8_t)c->lab.ip_version;
	ep->link_gbps = c->lab.link_gbps;
	ep->mtu = c->lab.mtu;
}

static void add_port(config_setting_t *ports, unsigned r, const struct cluster_cfg *c, const char *sock_dir)
{
	config_setting_t *p = config_setting_add(ports, NULL, CONFIG_TYPE_GROUP);
	char text[300];

	snprintf(text, sizeof(text), "s%u", r);
	cfg_set_string(p, "name", text);
	snprintf(text, sizeof(text), "net_memif%u", r);
	cfg_set_string(p, "device", text);
	snprintf(text, sizeof(text), "role=server,id=0,socket=%s/s%u.sock,socket-abstract=no", sock_dir, r);
	cfg_set_string(p, "vdev_args", text);
	snprintf(text, sizeof(text), "02:00:00:5f:%02x:%02x", r >> 8, r & 255);
	cfg_set_string(p, "mac", text);
	snprintf(text, sizeof(text), "10.77.255.%u", r + 1);
	cfg_set_string(p, "ipv4", text);
	cfg_set_float(p, "link_speed_gbps", c->lab.link_gbps);
	cfg_set_int(p, "mtu", c->lab.mtu);
}

/* The switch's config: a memif server port and a switch role per rank, the lab's switch group,
 * the ranks' MACs in its FDB (no flooding: a frame to a rank that has not spoken yet still goes
 * to it). */
static int write_switch_config(const struct cluster_cfg *c, const struct cl_endpoint *ep, unsigned n, const char *path,
			       const char *sock_dir, const char *job, int cpu)
{
	config_t t;
	config_setting_t *root, *eal, *ports, *roles, *sw, *fdb;
	char text[128];
	int rc;

	config_init(&t);
	root = config_root_setting(&t);
	eal = cfg_group(root, "eal");
	snprintf(text, sizeof(text), "0@%d,1@%d", cpu, cpu);
	cfg_set_string(eal, "lcores", text);
	cfg_set_int(eal, "memory_mb", c->memory_mb * 2);
	snprintf(text, sizeof(text), "rcl-%s-switch", job);
	cfg_set_string(eal, "file_prefix", text);
	ports = config_setting_add(root, "ports", CONFIG_TYPE_LIST);
	roles = config_setting_add(root, "lcores", CONFIG_TYPE_LIST);
	for (unsigned r = 0; r < n; r++) {
		config_setting_t *role = config_setting_add(roles, NULL, CONFIG_TYPE_GROUP);
		add_port(ports, r, c, sock_dir);
		cfg_set_int(role, "lcore", 1);
		snprintf(text, sizeof(text), "s%u", r);
		cfg_set_string(role, "port", text);
		cfg_set_string(role, "role", "switch");
	}
	sw = c->lab.sw ? cfg_copy(root, "switch", c->lab.sw) : cfg_group(root, "switch");
	fdb = cfg_replace(sw, "fdb", CONFIG_TYPE_LIST);
	for (unsigned r = 0; r < n; r++) {
		config_setting_t *e = config_setting_add(fdb, NULL, CONFIG_TYPE_GROUP);
		const uint8_t *m = ep[r].mac;
		snprintf(text, sizeof(text), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
		cfg_set_string(e, "mac", text);
		snprintf(text, sizeof(text), "s%u", r);
		cfg_set_string(e, "port", text);
	}
	cfg_set_string(cfg_group(root, "run"), "report", "switch.json");
	cfg_set_string(cfg_group(root, "run"), "ready_file", LAB_READY_FILE);
	rc = config_write_file(&t, path) == CONFIG_TRUE ? 0 : -1;
	config_destroy(&t);
	return rc;
}

/* The switch's run.ready_file: its ports are started. Its memif servers' sockets exist from its
 * EAL start on, but a server refuses a client until its port starts ("ID not found"), and DPDK
 * 22.11's client never tries again: a rank's engine that came that early would have no link. */
static bool switch_ready(const char *dir)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/" LAB_READY_FILE, dir);
	return access(path, F_OK) == 0;
}

pid_t lab_switch_start(const struct cluster_cfg *c, const struct cl_endpoint *ep, unsigned n, const char *engine,
		       const char *dir, const char *sock_dir, const char *job, int cpu, char *err, size_t errlen)
{
	char path[4200], why[1024];
	double deadline;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/switch.cfg", dir);
	if (write_switch_config(c, ep, n, path, sock_dir, job, cpu)) {
		snprintf(err, errlen, "cannot write the lab switch's config %s: %s", path, strerror(errno));
		return -1;
	}
	pid = engine_child_start(&(struct engine_child){ .engine = engine, .dir = dir, .config = "switch.cfg",
							.report = "switch.json", .log = "switch.log" });
	if (pid < 0) {
		snprintf(err, errlen, "cannot start the lab switch (%s): %s", engine, strerror(errno));
		return -1;
	}
	deadline = engine_child_now_s() + READY_WAIT_S;
	while (!switch_ready(dir)) {
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid || engine_child_now_s() > deadline) {
			snprintf(path, sizeof(path), "%s/switch.log", dir);
			engine_child_log_reason(path, "switch.cfg", why, sizeof(why));
			snprintf(err, errlen, "the lab switch did not start: %s", why);
			lab_switch_stop(pid);
			return -1;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 20000000L }, NULL);
	}
	return pid;
}

void lab_switch_stop(pid_t pid)
{
	bool timed_out, interrupted;

	if (pid <= 0)
		return;
	kill(-pid, SIGTERM);
	engine_child_await(pid, engine_child_now_s() + ENGINE_CHILD_KILL_GRACE_S, NULL, &timed_out, &interrupted);
}

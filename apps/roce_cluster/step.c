/* SPDX-License-Identifier: BSD-3-Clause */
#include "step.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "coll_model.h"
#include "engine_child.h"

/* Appends to out at *n; false when it no longer fits. */
static bool __attribute__((format(printf, 4, 5))) put(char *out, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*n >= len)
		return false;
	va_start(ap, fmt);
	w = vsnprintf(out + *n, len - *n, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= len - *n) {
		*n = len;
		return false;
	}
	*n += (size_t)w;
	return true;
}

static void mac_text(const uint8_t m[6], char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

void cl_endpoint_ip(const struct cl_endpoint *e, char *out, size_t len)
{
	if (!inet_ntop(e->family == 6 ? AF_INET6 : AF_INET, e->family == 6 ? (const void *)e->ipv6 : (const void *)e->ipv4,
		       out, (socklen_t)len))
		snprintf(out, len, "?");
}

/* One UC WRITE flow group from `rank` to `to`: qps_per_pair QPs, dest QPNs in the receiver's
 * range for this sender, its start PSN. Latency steps send small probed messages at probe_pps. */
static bool put_flow(const struct cl_step_env *env, unsigned rank, unsigned to, const struct cl_test *t, char *out,
		     size_t len, size_t *n)
{
	const struct cl_endpoint *d = &env->ep[to];
	char mac[18], ip[INET6_ADDRSTRLEN];
	bool lat = t->measure == CL_MEASURE_LATENCY && t->type != CL_TEST_COLLECTIVE;
	unsigned size = lat ? 64u : t->type == CL_TEST_COLLECTIVE ? coll_message_per_qp(t, env->n_ranks) : t->message_size;

	mac_text(d->mac, mac);
	cl_endpoint_ip(d, ip, sizeof(ip));
	return put(out, len, n,
		   "  { name = \"to%u\"; port = \"p\"; dst_mac = \"%s\"; dst_ip = \"%s\"; transport = \"%s\"; cc = \"%s\"; "
		   "ops = { write = 1; }; message_size = %u; mtu = %u; qpn = 0x%x; dest_qpn = 0x%x; count = %u; "
		   "start_psn = %u;",
		   to, mac, ip, t->transport == CL_TRANSPORT_RC ? "rc" : "uc", cl_cc_names[t->cc], size, t->mtu,
		   CL_TX_QPN_BASE + (to << 6),
		   d->rx_qpn_base + (rank << 6), t->qps_per_pair, d->start_psn) &&
	       (lat ? put(out, len, n, " rate_pps = %.3f; latency = { mode = \"oneway\"; };", t->probe_pps)
		    : t->rate_gbps > 0 ? put(out, len, n, " rate_gbps = %.6f;", t->rate_gbps) : true) &&
	       put(out, len, n, " }");
}

/* A collective test's engine collective: this rank's flows, released phase by phase as they are
 * sent and the peers' chunks of the phase received (ring: the previous rank's; AlltoAll: every
 * other rank's), phases x iterations of them. */
static bool put_collective(const struct cl_step_env *env, unsigned rank, const struct cl_test *t,
			   const struct cl_step_peers *pe, char *out, size_t len, size_t *n)
{
	unsigned per_iteration = coll_phases(t->op, env->n_ranks);
	bool ok = put(out, len, n, "collectives = ( { name = \"%s\"; type = \"%s\"; phases = %u;", t->name,
		      t->op == CL_OP_ALLTOALL ? "all_to_all" : "ring", per_iteration * t->iterations) &&
		  (t->compute_ms <= 0 || put(out, len, n, " compute_us = %.3f; iteration_phases = %u;", t->compute_ms * 1e3,
					      per_iteration)) &&
		  put(out, len, n, " flows = [");

	for (unsigned i = 0; ok && i < pe->n_to; i++)
		ok = put(out, len, n, "%s\"to%u\"", i ? ", " : "", pe->to[i]);
	ok = ok && put(out, len, n, "];\n    receives = (");
	for (unsigned i = 0; ok && i < pe->n_from; i++)
		ok = put(out, len, n, "%s { port = \"p\"; qpn = 0x%x; count = %u; }", i ? "," : "",
			 env->ep[rank].rx_qpn_base + (pe->from[i] << 6), t->qps_per_pair);
	return ok && put(out, len, n, " ); } );\n");
}

/* The senders to this rank, each by its QPs: RC needs a responder for each (the requester is in
 * another process), UC the peers list, so that the notification point knows whom a CE mark's CNP
 * goes to. Up to CL_MAX_SENDERS (checked before the job: with RC or congestion control; without,
 * beyond it, the CNPs are only counted). */
static bool put_senders(const struct cl_step_env *env, unsigned rank, const struct cl_test *t,
			const struct cl_step_peers *pe, char *out, size_t len, size_t *n)
{
	const struct cl_endpoint *me = &env->ep[rank];
	bool rc = t->transport == CL_TRANSPORT_RC, ok;

	if (!pe->n_from || pe->n_from > CL_MAX_SENDERS)
		return true;
	ok = put(out, len, n, "%s = (\n", rc ? "responders" : "peers");
	for (unsigned i = 0; ok && i < pe->n_from; i++) {
		unsigned s = pe->from[i];
		ok = put(out, len, n, "  { port = \"p\"; qpn = 0x%x; peer_qpn = 0x%x; count = %u;", me->rx_qpn_base + (s << 6),
			 CL_TX_QPN_BASE + (rank << 6), t->qps_per_pair) &&
		     (!rc || put(out, len, n, " mtu = %u; start_psn = %u;", t->mtu, me->start_psn)) &&
		     put(out, len, n, " }%s\n", i + 1 < pe->n_from ? "," : "");
	}
	return ok && put(out, len, n, ");\n");
}

int step_config(const struct cl_step_env *env, unsigned rank, const struct cl_test *t, unsigned step,
		const struct cl_step_peers *pe, double start_at_unix_s, char *out, size_t len)
{
	const struct cl_endpoint *me = &env->ep[rank];
	char mac[18], ip[INET6_ADDRSTRLEN];
	size_t n = 0;
	bool ok;

	mac_text(me->mac, mac);
	cl_endpoint_ip(me, ip, sizeof(ip));
	ok = put(out, len, &n, "# roce-cluster: rank %u, test %s, step %u\n", rank, t->name, step) &&
	     put(out, len, &n, "eal = { lcores = \"0@%d,1@%d\"; memory_mb = %u; file_prefix = \"rcl-%s-r%u-s%u\"; };\n",
		 env->main_cpu, env->worker_cpu, env->cfg->memory_mb, env->job, rank, step) &&
	     put(out, len, &n, "ports = ( { name = \"p\"; device = \"%s\"; %s%s%s mac = \"%s\"; %s = \"%s\"; "
		 "link_speed_gbps = %.6f; mtu = %u; } );\n", me->device, me->vdev_args[0] ? "vdev_args = \"" : "",
		 me->vdev_args, me->vdev_args[0] ? "\";" : "", mac, me->family == 6 ? "ipv6" : "ipv4", ip, me->link_gbps,
		 me->mtu) &&
	     put(out, len, &n, "lcores = ( { lcore = 1; port = \"p\"; role = \"txrx\"; } );\n");
	if (ok && pe->n_to) {
		ok = put(out, len, &n, "flows = (\n");
		for (unsigned i = 0; ok && i < pe->n_to; i++)
			ok = put_flow(env, rank, pe->to[i], t, out, len, &n) &&
			     put(out, len, &n, i + 1 < pe->n_to ? ",\n" : "\n");
		ok = ok && put(out, len, &n, ");\n");
		if (t->type == CL_TEST_COLLECTIVE)
			ok = ok && put_collective(env, rank, t, pe, out, len, &n);
	}
	ok = ok && put_senders(env, rank, t, pe, out, len, &n);
	/* every sender's QPs may carry probes to this rank */
	ok = ok && put(out, len, &n, "run = { start_at_unix_s = %.6f; latency_foreign_qps = %u;", start_at_unix_s,
		       env->n_ranks * t->qps_per_pair < 65536 ? env->n_ranks * t->qps_per_pair : 65536);
	if (env->cfg->live_interval_s > 0) /* the live lines' numbers */
		ok = ok && put(out, len, &n, " timeseries = \"" STEP_TIMESERIES "\"; stats_interval_s = %.3f;",
			       env->cfg->live_interval_s);
	if (env->cfg->metrics_port) /* Prometheus scrapes each rank: the port offset by the local rank */
		ok = ok && put(out, len, &n, " http = \"%s:%u\";", env->cfg->metrics_address,
			       env->cfg->metrics_port + env->ep[rank].local_rank);
	ok = ok && put(out, len, &n, " };\n");
	return ok ? 0 : -1;
}

/* ---- the report, boiled down ----------------------------------------------------------------- */

static double num(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* The sender rank of a receiver QP of this rank, or -1 (not one of the step's flows). */
static int sender_of(const struct cl_step_env *env, unsigned rank, json_int_t qpn)
{
	json_int_t off = qpn - (json_int_t)env->ep[rank].rx_qpn_base;
	int s = off >= 0 ? (int)(off >> 6) : -1;

	return s >= 0 && (unsigned)s < env->n_ranks ? s : -1;
}

static bool is_sender(const struct cl_step_peers *pe, int s)
{
	for (unsigned i = 0; i < pe->n_from; i++)
		if ((int)pe->from[i] == s)
			return true;
	return false;
}

/* What this rank received, by sender: only the step's own senders count; what came in on the
 * QPs of another rank (frames of an earlier step, delivered late) is summed in *stray. */
static json_t *rx_summary(const json_t *report, const struct cl_step_env *env, unsigned rank,
			  const struct cl_step_peers *pe, double *stray)
{
	json_t *by = json_object(), *q;
	size_t i;

	*stray = 0;

	json_array_foreach(json_object_get(report, "rx_qps"), i, q) {
		int s = sender_of(env, rank, json_integer_value(json_object_get(q, "qpn")));
		const json_t *lat = json_object_get(json_object_get(q, "latency_ns"), "oneway");
		char key[16];
		json_t *e;

		if (s < 0)
			continue;
		if (!is_sender(pe, s)) {
			*stray += num(q, "payload_bytes");
			continue;
		}
		snprintf(key, sizeof(key), "%d", s);
		if (!(e = json_object_get(by, key))) {
			e = json_pack("{s:i,s:f,s:f,s:f,s:f,s:f,s:f}", "from", s, "payload_bytes", 0.0, "packets", 0.0, "lost", 0.0,
				      "latency_count", 0.0, "p50_ns", 0.0, "p99_ns", 0.0);
			json_object_set_new(by, key, e);
		}
		json_object_set_new(e, "payload_bytes", json_real(num(e, "payload_bytes") + num(q, "payload_bytes")));
		json_object_set_new(e, "packets", json_real(num(e, "packets") + num(q, "packets")));
		json_object_set_new(e, "lost", json_real(num(e, "lost") + num(q, "lost")));
		if (lat && num(lat, "count") > 0) { /* the QPs of a pair: the worst of their percentiles */
			json_object_set_new(e, "latency_count", json_real(num(e, "latency_count") + num(lat, "count")));
			if (num(lat, "p50") > num(e, "p50_ns"))
				json_object_set_new(e, "p50_ns", json_real(num(lat, "p50")));
			if (num(lat, "p99") > num(e, "p99_ns"))
				json_object_set_new(e, "p99_ns", json_real(num(lat, "p99")));
		}
	}
	{
		json_t *a = json_array(), *v;
		const char *k;
		json_object_foreach(by, k, v)
			json_array_append(a, v);
		json_decref(by);
		return a;
	}
}

static json_t *tx_summary(const json_t *report)
{
	json_t *a = json_array(), *f;
	size_t i;

	json_array_foreach(json_object_get(report, "flows"), i, f) {
		const char *g = json_string_value(json_object_get(f, "group"));
		unsigned to;
		json_t *e = NULL, *x;
		size_t k;

		if (!g || sscanf(g, "to%u", &to) != 1)
			continue;
		json_array_foreach(a, k, x)
			if ((unsigned)json_integer_value(json_object_get(x, "to")) == to)
				e = x;
		if (!e) {
			e = json_pack("{s:i,s:f,s:f}", "to", (int)to, "bytes", 0.0, "packets", 0.0);
			json_array_append_new(a, e);
		}
		json_object_set_new(e, "bytes", json_real(num(e, "bytes") + num(f, "tx_bytes")));
		json_object_set_new(e, "packets", json_real(num(e, "packets") + num(f, "tx_packets")));
	}
	return a;
}

json_t *step_summary(const json_t *report, const struct cl_step_env *env, unsigned rank,
		     const struct cl_step_peers *pe)
{
	double held = 0, turn = 0, stray;
	json_t *l;
	size_t i;

	json_array_foreach(json_object_get(report, "lcores"), i, l) {
		held += num(l, "held_up_ms");
		if (num(l, "loop_turn_us") > turn)
			turn = num(l, "loop_turn_us");
	}
	{
		json_t *rx = rx_summary(report, env, rank, pe, &stray);
		json_t *o = json_pack("{s:f,s:I,s:o,s:o,s:f,s:f,s:f}", "duration_s", num(report, "duration_s"), "start_unix_ns",
				      json_integer_value(json_object_get(report, "start_unix_ns")), "tx", tx_summary(report),
				      "rx", rx, "stray_payload_bytes", stray, "held_up_ms", held, "loop_turn_us", turn);
		const json_t *c = json_array_get(json_object_get(report, "collectives"), 0);
		if (c) /* a collective step's: when each phase ended on this rank */
			json_object_set_new(o, "collective", json_pack("{s:O,s:O,s:O}", "phases_completed",
								       json_object_get(c, "phases_completed"), "phase_end_us",
								       json_object_get(c, "phase_end_us"), "total_us",
								       json_object_get(c, "total_us")));
		return o;
	}
}

/* ---- the live numbers ----------------------------------------------------------------------- */

/* One CSV row's numbers: time_s,kind,name,tx_gbps,tx_mpps,rx_gbps,rx_mpps,goodput_gbps,cnp_rx,pfc_rx,
 * paused_ms,lat_p50_ns,... (docs/monitoring.md); 0 when it is port `port`'s. */
static int port_row(const char *line, const char *port, struct step_live *out)
{
	char kind[16], name[64];
	double v[12] = { 0 };
	const char *p = line;

	if (sscanf(line, "%lf,%15[^,],%63[^,],", &v[0], kind, name) != 3 || strcmp(kind, "port") || strcmp(name, port))
		return -1;
	for (unsigned col = 0; col < 12 && p; col++) {
		v[col] = col < 3 ? v[col] : strtod(p, NULL); /* an empty cell reads 0 */
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	*out = (struct step_live){ .time_s = v[0], .tx_gbps = v[3], .rx_gbps = v[5], .p50_ns = v[11] };
	return 0;
}

int step_live_row(const char *dir, const char *port, struct step_live *out)
{
	char path[4200], buf[8192], *line, *save = NULL;
	FILE *f;
	long size;
	size_t n;
	int rc = -1;

	snprintf(path, sizeof(path), "%s/" STEP_TIMESERIES, dir);
	if (!(f = fopen(path, "r")))
		return -1;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, size > (long)sizeof(buf) - 1 ? size - (long)sizeof(buf) + 1 : 0, SEEK_SET); /* the tail */
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	line = strtok_r(buf, "\n", &save);
	if (size > (long)sizeof(buf) - 1) /* the tail's first line may be cut */
		line = strtok_r(NULL, "\n", &save);
	for (; line; line = strtok_r(NULL, "\n", &save)) {
		struct step_live row;
		if (port_row(line, port, &row) == 0)
			*out = row, rc = 0;
	}
	return rc;
}

/* ---- running it -------------------------------------------------------------------------------- */

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static json_t *failed(json_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static json_t *failed(json_t *o, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_set_new(o, "error", json_string(msg));
	return o;
}

struct tick_ctx {
	const struct cl_step_env *env;
	const char *dir;
};

static void tick_step(void *arg)
{
	const struct tick_ctx *tc = arg;

	tc->env->tick(tc->env->tick_arg, tc->dir);
}

json_t *step_run(const struct cl_step_env *env, unsigned rank, const struct cl_test *t, unsigned step,
		 const struct cl_step_peers *pe, double start_at_unix_s)
{
	char dir[4096], path[4200], prefix[96], why[1024], *text;
	size_t text_len = 8192 + (size_t)(pe->n_to + pe->n_from) * 1024; /* a flow group's line is ~500 bytes */
	json_t *o = json_pack("{s:i,s:i,s:s}", "rank", (int)rank, "step", (int)step, "host", env->ep[rank].host);
	json_t *report;
	json_error_t jerr;
	bool timed_out, interrupted;
	double deadline;
	FILE *f;
	pid_t pid;
	int st, code;

	if (!pe->n_to && !pe->n_from)
		return o; /* sits this step out */
	snprintf(dir, sizeof(dir), "%s/%s-s%u", env->work, t->name, step);
	snprintf(path, sizeof(path), "%s/engine.cfg", dir);
	snprintf(prefix, sizeof(prefix), "rcl-%s-r%u-s%u", env->job, rank, step);
	if (!(text = malloc(text_len)))
		return failed(o, "out of memory for the step's engine config");
	if (step_config(env, rank, t, step, pe, start_at_unix_s, text, text_len)) {
		free(text);
		return failed(o, "the step's engine config does not fit %zu bytes", text_len);
	}
	if ((mkdir(dir, 0755) && errno != EEXIST) || !(f = fopen(path, "w"))) {
		free(text);
		return failed(o, "cannot write %s: %s", path, strerror(errno));
	}
	fputs(text, f);
	fclose(f);
	free(text);
	remove(strcat(strcpy(path, dir), "/report.json")); /* (a kept folder's earlier run) */
	pid = engine_child_start(&(struct engine_child){ .engine = env->engine, .dir = dir, .config = "engine.cfg",
							.report = "report.json", .log = "engine.log", .duration_s = t->duration_s });
	if (pid < 0)
		return failed(o, "cannot start %s: %s", env->engine, strerror(errno));
	deadline = engine_child_now_s() + (start_at_unix_s - wall_s()) + t->duration_s + env->cfg->step_timeout_s;
	{
		struct tick_ctx tc = { env, dir };
		st = engine_child_await_ticking(pid, deadline, env->interrupted, &timed_out, &interrupted,
						env->tick ? tick_step : NULL, &tc);
	}
	engine_child_remove_runtime_dir(prefix);
	snprintf(path, sizeof(path), "%s/engine.log", dir);
	engine_child_log_reason(path, "engine.cfg", why, sizeof(why));
	code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	json_object_set_new(o, "exit_code", json_integer(code));
	if (timed_out || interrupted)
		return failed(o, "%s after %.0f s: stopped", interrupted ? "interrupted" : "no end", t->duration_s + env->cfg->step_timeout_s);
	if (WIFSIGNALED(st))
		return failed(o, "roce-engine killed by signal %d: %s", WTERMSIG(st), why);
	if (code != 0 && code != 6)
		return failed(o, "roce-engine exit status %d: %s", code, why);
	snprintf(path, sizeof(path), "%s/report.json", dir);
	if (!(report = json_load_file(path, 0, &jerr)))
		return failed(o, "no report (%s): %s", jerr.text, why);
	{
		json_t *sum = step_summary(report, env, rank, pe);
		json_object_update(o, sum);
		json_decref(sum);
	}
	json_object_set_new(o, "report", report); /* the whole of it, for rank 0's results folder */
	if (!env->cfg->keep)
		engine_child_rm_tree(dir);
	return o;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The HTTP server: libmicrohttpd with its own polling thread, so the lcores never see it. Every
 * page is built on request from the engine's counters (relaxed reads of single-writer counters,
 * as the live lines do); nothing is kept between requests.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#include "control.h"
#include "stats.h"
#include "exporter.h"
#include "fabric_lab.h"
#include "metrics.h"
#include "switch.h"

#ifndef ROCE_DASHBOARD_DIR
#define ROCE_DASHBOARD_DIR "dashboard"
#endif

struct exporter {
	struct MHD_Daemon *daemon;
	char dashboard[CFG_STR_LEN];
	unsigned long requests;
	struct metrics_work *work;     /* the one page being built: MHD's single thread serves requests in turn */
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type, char *body, size_t len,
			     enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *text)
{
	return reply(c, status, "text/plain; charset=utf-8", (char *)text, strlen(text), MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result serve_metrics(struct MHD_Connection *c, struct exporter *x)
{
	struct metrics_text t = {0};
	struct run_view *run = control_enter();

	if (!run)
		return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no run in progress\n");
	metrics_write(&t, run, run->finished, x->work);
	control_leave();
	if (t.failed) {
		metrics_text_free(&t);
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	/* MHD frees the buffer with free() once sent */
	return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", t.buf, t.len, MHD_RESPMEM_MUST_FREE);
}

/* A fabric's shape for the dashboard's view: its switches by tier, its links and their ends. */
static json_t *fabric_json(const struct run_view *run)
{
	const struct fabric_lab *fl = run->fab;
	json_t *switches, *links;

	if (!fl)
		return json_null();
	switches = json_array();
	links = json_array();
	for (unsigned s = 0; s < fl->n_switches; s++)
		json_array_append_new(switches, json_pack("{s:s,s:s}", "name", fl->cfg->sw[s].name, "tier",
							  fabric_tier_name(fl->cfg->sw[s].tier)));
	for (unsigned l = 0; l < fl->cfg->n_links; l++) {
		const struct cfg_fab_link *cl = &fl->cfg->links[l];
		json_array_append_new(links, json_pack("{s:s,s:s,s:s,s:s,s:f}", "name", cl->name, "tier",
						       fabric_tier_name(cl->tier), "a", fl->cfg->sw[cl->sw].name, "b",
						       cl->to_nic ? run->cfg->ports[cl->b].name : fl->cfg->sw[cl->b].name,
						       "gbps", cl->gbps));
	}
	return json_pack("{s:o,s:o}", "switches", switches, "links", links);
}

/* The dashboard's layout: what runs, so the page can lay out its charts before the numbers. */
static json_t *run_json(const struct run_view *run)
{
	json_t *ports = json_array(), *flows = json_array();

	for (unsigned p = 0; p < run->n_ports; p++)
		json_array_append_new(ports, json_pack("{s:s,s:s,s:f,s:b}", "name", run->cfg->ports[p].name, "driver",
						       run->ports[p].driver, "link_gbps", run->ports[p].link_speed_gbps,
						       "switch_port", run->sw && run->sw->port_of_cfg[p] >= 0));
	for (unsigned g = 0; g < run->cfg->n_groups; g++) {
		const struct cfg_flow_group *grp = &run->cfg->groups[g];
		json_array_append_new(flows, json_pack("{s:s,s:s,s:i,s:s,s:b}", "name", grp->name, "port",
						       run->cfg->ports[grp->port].name, "qps", (int)grp->count, "cc",
						       grp->cc == CFG_CC_NONE ? "none" : congestion_algo_name(grp->cc), "latency",
						       grp->latency != CFG_LAT_OFF));
	}
	return json_pack("{s:b,s:f,s:f,s:o,s:o,s:b,s:o}", "active", !run->finished, "stats_interval_s",
			 run->cfg->stats_interval_s, "duration_s", run->cfg->duration_s, "ports", ports, "flows", flows,
			 "switch", run->sw != NULL, "fabric", fabric_json(run));
}

static enum MHD_Result serve_run(struct MHD_Connection *c)
{
	struct run_view *run = control_enter();
	json_t *o;
	char *text;

	if (!run)
		return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "{\"error\":\"no run in progress\"}\n");
	o = run_json(run);
	control_leave();
	text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!text)
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	return reply(c, MHD_HTTP_OK, "application/json", text, strlen(text), MHD_RESPMEM_MUST_FREE);
}

static const char *content_type(const char *path)
{
	static const struct { const char *ext, *type; } types[] = {
		{".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
		{".css", "text/css; charset=utf-8"},   {".json", "application/json"},
		{".svg", "image/svg+xml"},             {".png", "image/png"},
	};
	const char *dot = strrchr(path, '.');

	for (unsigned i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(dot, types[i].ext))
			return types[i].type;
	return "application/octet-stream";
}

/* A path inside the dashboard folder: letters, digits, '.', '-', '_' and '/', no "..", no hidden
 * names. Anything else is not served (404), whatever the file system holds. */
static bool safe_path(const char *url)
{
	if (*url != '/' || strstr(url, "..") || strstr(url, "/."))
		return false;
	for (const char *p = url; *p; p++)
		if (!(*p == '/' || *p == '.' || *p == '-' || *p == '_' || (*p >= '0' && *p <= '9') ||
		      (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			return false;
	return true;
}

static enum MHD_Result serve_file(struct MHD_Connection *c, const struct exporter *x, const char *url)
{
	char path[CFG_STR_LEN + 256];
	struct MHD_Response *r;
	struct stat st;
	enum MHD_Result rc;
	int fd;

	if (!strcmp(url, "/"))
		url = "/index.html";
	if (!safe_path(url) || (size_t)snprintf(path, sizeof(path), "%s%s", x->dashboard, url) >= sizeof(path))
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
	}
	r = MHD_create_response_from_fd((size_t)st.st_size, fd); /* owns fd from here */
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type(path));
	rc = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload, size_t *upload_size, void **state)
{
	struct exporter *x = cls;

	(void)version, (void)upload, (void)upload_size, (void)state;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	__atomic_fetch_add(&x->requests, 1, __ATOMIC_RELAXED);
	if (!strcmp(url, "/metrics"))
		return serve_metrics(c, x);
	if (!strcmp(url, "/api/run"))
		return serve_run(c);
	return serve_file(c, x, url);
}

/* libmicrohttpd reports its errors here (bind failures among them) */
static void on_error(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	fprintf(stderr, "roce-engine: http: ");
	vfprintf(stderr, fmt, ap);
}

static int listen_address(const struct engine_config *cfg, struct sockaddr_storage *sa)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)sa;

	memset(sa, 0, sizeof(*sa));
	if (inet_pton(AF_INET, cfg->http_addr, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons(cfg->http_port);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, cfg->http_addr, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(cfg->http_port);
		return AF_INET6;
	}
	return -1;
}

struct exporter *exporter_start(const struct engine_config *cfg, char *err, size_t errlen)
{
	struct exporter *x = calloc(1, sizeof(*x));
	struct sockaddr_storage sa;
	struct stat st;
	int family = listen_address(cfg, &sa);

	if (!x || !(x->work = metrics_work_new())) {
		snprintf(err, errlen, "http: out of memory");
		free(x);
		return NULL;
	}
	snprintf(x->dashboard, sizeof(x->dashboard), "%s", cfg->http_dashboard[0] ? cfg->http_dashboard : ROCE_DASHBOARD_DIR);
	if (stat(x->dashboard, &st) || !S_ISDIR(st.st_mode)) /* /metrics alone would still work: say so */
		fprintf(stderr, "roce-engine: http: warning: no dashboard folder %s (run.http_dashboard); /metrics is served\n",
			x->dashboard);
	if (family < 0) {
		snprintf(err, errlen, "http: '%s' is not a numeric address", cfg->http_addr);
		metrics_work_free(x->work);
		free(x);
		return NULL;
	}
	x->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
					     (family == AF_INET6 ? MHD_USE_IPv6 : 0),
				     cfg->http_port, NULL, NULL, on_request, x, MHD_OPTION_EXTERNAL_LOGGER, on_error, NULL,
				     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_TIMEOUT,
				     (unsigned)10, MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_END);
	if (!x->daemon) {
		snprintf(err, errlen, "http: cannot listen on %s%s%s:%u (run.http / --http): %s",
			 family == AF_INET6 ? "[" : "", cfg->http_addr, family == AF_INET6 ? "]" : "", cfg->http_port,
			 errno ? strerror(errno) : "libmicrohttpd refused");
		metrics_work_free(x->work);
		free(x);
		return NULL;
	}
	return x;
}

unsigned long exporter_requests(const struct exporter *x) { return __atomic_load_n(&x->requests, __ATOMIC_RELAXED); }

void exporter_stop(struct exporter *x)
{
	if (!x)
		return;
	MHD_stop_daemon(x->daemon);
	metrics_work_free(x->work);
	free(x);
}

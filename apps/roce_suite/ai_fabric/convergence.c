/* SPDX-License-Identifier: BSD-3-Clause
 *
 * §7.3 DCQCN convergence: M flows share a bottleneck, M more join at join_s; the time until all
 * 2M are within tolerance (10 %) of the fair share and stay there. For each M of
 * convergence.flows and each DCQCN parameter set of convergence.dcqcn (the draft's sensitivity
 * sweep), a trial of 2M senders (one QP each, RDMA WRITEs on the lossless class, where the
 * switches mark ECN) into the fabric's last host, the destination's own leaf first: its host link
 * is the bottleneck, the fair share link / 2M. The first M start with the traffic, the others
 * join_s later (the flows' start_s).
 *
 * A flow's rate is its reaction point's (DCQCN's R_C, the engine's cc trace every 100 µs)
 * averaged over windows of window_ms: the instantaneous rate saw-tooths between cuts and
 * increases, a window shows the share a flow holds. The convergence time is
 * kpi_convergence_held_s's: from join_s to the first window end from which every flow's windows
 * stay in the band for hold_ms; none when that never happens. The time is a random variable (RED
 * marks at random; in the simulator its CV over seeds is 20-30 %), so each case runs `runs`
 * times and the simulator `ccsim_seeds` times, and the means are compared.
 *
 * The same scenario in roce-ccsim (a network scenario: the senders, one switch with the
 * destination leaf's buffer, ECN and PFC, the destination; each sender's propagation its path's
 * through the fabric; the engine's frame as the packet, links and senders at their links' frame
 * rate), its rates
 * sampled and windowed the same way, ccsim_seeds runs averaged: the engine's mean convergence
 * time within ccsim_tolerance of the simulator's is a verdict (the proof; both "never
 * within the band" agree too), where the one switch stands for the path (no sender's leaf
 * overloads its uplinks). The engine's trials are repeated for the CV of §13; a trial the
 * machine could not carry is marked and not judged.
 *
 * On a real switch tier (fabric.external) the rates are the senders' own as ever; the simulator's
 * switch would be the suite's `switch` group, not the real one, so there is no comparison (its
 * fields null) and the buffer is the switches' own.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aif_ctx.h"
#include "config_tree.h"
#include "lab.h"
#include "verdict.h"

#define SAMPLE_US 100.0  /* the cc trace's and the simulator's sampling */
#define MAX_FLOWS 1022   /* 2M for M up to 511 */

/* Rates averaged per window: rate[k * n + f] is flow f's mean over window k (ending at (k + 1) w). */
struct windows {
	unsigned n_flows, n;
	double w_s;
	double *sum, *rate, *t;
	unsigned *cnt;
};

static int windows_init(struct windows *w, unsigned n_flows, double w_s, double duration_s)
{
	memset(w, 0, sizeof(*w));
	w->n_flows = n_flows;
	w->w_s = w_s;
	w->n = (unsigned)floor(duration_s / w_s + 1e-9); /* whole windows only */
	w->sum = calloc((size_t)w->n * n_flows + 1, sizeof(double));
	w->rate = calloc((size_t)w->n * n_flows + 1, sizeof(double));
	w->t = calloc((size_t)w->n + 1, sizeof(double));
	w->cnt = calloc((size_t)w->n * n_flows + 1, sizeof(unsigned));
	return w->sum && w->rate && w->t && w->cnt ? 0 : -1;
}

static void windows_free(struct windows *w)
{
	free(w->sum);
	free(w->rate);
	free(w->t);
	free(w->cnt);
}

static void windows_add(struct windows *w, double t_s, unsigned flow, double gbps)
{
	long k = (long)floor(t_s / w->w_s);

	if (t_s < 0 || k >= (long)w->n || flow >= w->n_flows)
		return;
	w->sum[(size_t)k * w->n_flows + flow] += gbps;
	w->cnt[(size_t)k * w->n_flows + flow]++;
}

/* The means; a window a flow has no sample in holds its previous one's (0 before any). */
static void windows_close(struct windows *w)
{
	for (unsigned k = 0; k < w->n; k++) {
		w->t[k] = (k + 1) * w->w_s;
		for (unsigned f = 0; f < w->n_flows; f++) {
			size_t i = (size_t)k * w->n_flows + f;
			w->rate[i] = w->cnt[i] ? w->sum[i] / w->cnt[i] : k ? w->rate[i - w->n_flows] : 0;
		}
	}
}

struct conv_result {
	bool ran, limited;
	double conv_s;                  /* -1: not within the band at the end */
	double fair_gbps, last_min, last_max, last_jfi; /* the last window's rates */
	uint64_t cnps, trace_dropped;
	double buffer_bytes;            /* the destination leaf's, from the report */
	struct aif_fabric_view v;
	struct windows w;
};

/* ---- the engine's trial -------------------------------------------------------------------------- */

struct trace_rows {
	size_t n, cap;
	double *t_ns;                   /* the engine's clock (UNIX ns) */
	unsigned *qp;
	double *gbps;
};

/* The trial's cc trace: its periodic rows ("start" and "interval"; a CNP's row is an event). */
static void read_trace(const char *dir, void *arg)
{
	struct trace_rows *r = arg;
	char path[PATH_MAX], line[256], ev[32];
	FILE *f;

	text_printf(path, sizeof(path), "%s/cc.csv", dir);
	if (!(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		double t, g;
		unsigned qp;

		if (sscanf(line, "%lf,%u,%31[a-z_],%lf", &t, &qp, ev, &g) != 4 || (strcmp(ev, "interval") && strcmp(ev, "start")))
			continue;
		if (r->n == r->cap) {
			size_t cap = r->cap ? 2 * r->cap : 4096;
			double *a = realloc(r->t_ns, cap * sizeof(double)), *b = a ? realloc(r->gbps, cap * sizeof(double)) : NULL;
			unsigned *q = b ? realloc(r->qp, cap * sizeof(unsigned)) : NULL;
			if (a)
				r->t_ns = a;
			if (b)
				r->gbps = b;
			if (!q)
				break;
			r->qp = q;
			r->cap = cap;
		}
		r->t_ns[r->n] = t;
		r->qp[r->n] = qp;
		r->gbps[r->n++] = g;
	}
	fclose(f);
}

/* The last window's spread and Jain's index, and the convergence time, of closed windows. */
static void judge_windows(struct conv_result *r, double fair, double tol, double join_s, double hold_s)
{
	const struct windows *w = &r->w;
	const double *last = &w->rate[(size_t)(w->n - 1) * w->n_flows];

	r->fair_gbps = fair;
	r->conv_s = kpi_convergence_held_s(w->t, w->rate, w->n, w->n_flows, fair, tol, join_s, hold_s);
	r->last_min = INFINITY;
	r->last_max = 0;
	for (unsigned f = 0; f < w->n_flows; f++) {
		r->last_min = fmin(r->last_min, last[f]);
		r->last_max = fmax(r->last_max, last[f]);
	}
	r->last_jfi = kpi_jfi(last, w->n_flows);
}

/* The destination leaf's buffer, from a trial's switch report. */
static double leaf_buffer(const struct aif_ctx *x, const json_t *rep)
{
	const char *leaf = x->fab.switches[x->fab.nics[x->fab.hosts[x->fab.n_hosts - 1].first_nic].sw].name;
	const json_t *s;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(rep, "fabric"), "switches"), i, s)
		if (!strcmp(json_string_value(json_object_get(s, "name")) ?: "", leaf))
			return json_number_value(json_object_get(s, "buffer_bytes"));
	return 0;
}

static void engine_trial(struct aif_ctx *x, unsigned m, unsigned set, struct conv_result *r)
{
	const struct aif_convergence_cfg *c = &x->c->conv;
	/* each QP's line rate is what its link carries of its frames: at the port's nominal rate (frame
	 * bytes) a QP alone would outrun its link by the preamble and gap, and the excess would wait in
	 * its NIC, out of DCQCN's sight, to drain after its first cuts */
	struct aif_flow f = { .message_size = c->message_size, .priority = c->priority, .cc = "dcqcn",
			      .dcqcn = set < c->n_dcqcn ? c->dcqcn[set] : NULL,
			      .rate_gbps = aif_link_frame_gbps(x->host_gbps, c->message_size) };
	unsigned dst = x->fab.n_hosts - 1, hosts[AIF_MAX_HOSTS + 1], n = aif_incast_senders(x, dst, 2 * m, true, hosts);
	struct trace_rows rows = { 0 };
	struct flow_set fs = aif_entry_flows("conv");
	config_setting_t *run;
	struct aif_trial t;
	struct trial tr;
	struct metrics me;

	memset(r, 0, sizeof(*r));
	r->conv_s = -1;
	aif_trial_init(&t, x);
	for (unsigned half = 0; half < 2; half++) { /* the first M, then the M that join */
		unsigned part[AIF_MAX_HOSTS + 1];
		memcpy(part, hosts + half * m, m * sizeof(unsigned));
		part[m] = dst;
		f.start_s = half ? c->join_s : 0;
		aif_trial_pattern(&t, x, half ? "conv-join" : "conv", "incast", part, m + 1, (int)dst, 1, &f);
	}
	run = cfg_group(config_root_setting(&t.cfg), "run");
	cfg_set_string(run, "cc_trace", "cc.csv");
	cfg_set_float(run, "cc_trace_interval_us", SAMPLE_US);
	cfg_set_int(run, "cc_trace_qps", (int)n);
	trial_init(&tr, "convergence", "%u + %u DCQCN flows (set %u) into %s", m, m, set, x->fab.hosts[dst].name);
	tr.duration_s = c->join_s + c->settle_s;
	tr.files = read_trace;
	tr.files_arg = &rows;
	if (trial_measure(x->rn, &t.cfg, &tr, &fs, &me) == 0 &&
	    windows_init(&r->w, n, c->window_ms * 1e-3, json_number_value(json_object_get(tr.report, "duration_s"))) == 0 &&
	    r->w.n > 0) {
		double t0 = json_number_value(json_object_get(tr.report, "start_unix_ns"));
		const json_t *fl;
		size_t i;

		for (size_t k = 0; k < rows.n; k++) {
			double ts = (rows.t_ns[k] - t0) * 1e-9;
			if (rows.qp[k] < m || ts >= c->join_s) /* a joiner's trace shows its line rate before it starts */
				windows_add(&r->w, ts, rows.qp[k], rows.gbps[k]);
		}
		windows_close(&r->w);
		judge_windows(r, aif_link_frame_gbps(x->host_gbps, c->message_size) / n, c->tolerance, c->join_s, c->hold_ms * 1e-3);
		aif_fabric_read(tr.report, &r->v);
		aif_fabric_to_json(&r->v, tr.record);
		json_array_foreach(json_object_get(tr.report, "flows"), i, fl)
			r->cnps += ju64(fl, "cnp_rx");
		r->trace_dropped = ju64(json_object_get(tr.report, "cc_trace"), "dropped");
		r->limited = r->v.machine_limited || r->trace_dropped;
		r->buffer_bytes = leaf_buffer(x, tr.report);
		r->ran = true;
		trial_verdict(x->rn, &tr, "info", "converged %s%.1f ms after the join, last window %.3f..%.3f Gb/s (fair %.3f)",
			      r->conv_s < 0 ? "never: " : "", r->conv_s < 0 ? 0 : r->conv_s * 1e3, r->last_min, r->last_max,
			      r->w.n ? r->fair_gbps : 0);
	}
	free(rows.t_ns);
	free(rows.qp);
	free(rows.gbps);
	trial_release(&tr);
	aif_trial_free(&t);
}

/* ---- the same scenario in roce-ccsim ---------------------------------------------------------------- */

/* A setting of the suite's switch group, the leaf tier's over it (the destination is at a leaf). */
static const config_setting_t *switch_setting(const struct aif_ctx *x, const char *name)
{
	const config_setting_t *sw = config_lookup(&x->s->text, "switch"), *leaf = sw ? config_setting_get_member(sw, "leaf") : NULL;
	const config_setting_t *s = leaf ? config_setting_get_member(leaf, name) : NULL;

	return s ? s : sw ? config_setting_get_member(sw, name) : NULL;
}

static double kb_of(const config_setting_t *g, const char *name, double dflt)
{
	const config_setting_t *s = g ? config_setting_get_member(g, name) : NULL;

	return (s ? config_setting_get_float(s) ?: (double)config_setting_get_int(s) : dflt) * 1024;
}

/* The destination leaf's ECN ramp on the class, or false (no marking: DCQCN gets no CNPs). */
static bool ecn_of(const struct aif_ctx *x, unsigned prio, double *kmin, double *kmax, double *pmax)
{
	const config_setting_t *list = switch_setting(x, "ecn"), *e;

	for (int i = 0; list && (e = config_setting_get_elem(list, (unsigned)i)); i++) {
		int tc = 0;
		config_setting_lookup_int(e, "tc", &tc);
		if ((unsigned)tc != prio)
			continue;
		*kmin = kb_of(e, "kmin_kb", 0);
		*kmax = kb_of(e, "kmax_kb", 0);
		*pmax = 1.0;
		config_setting_lookup_float(e, "pmax", pmax);
		return true;
	}
	return false;
}

/* The propagation from host h to its leaf and on to dst's leaf (leaf-spine: up one uplink and down
 * another). */
static double path_delay_us(const struct aif_ctx *x, unsigned h, unsigned dst)
{
	const struct fab_nic *a = &x->fab.nics[x->fab.hosts[h].first_nic], *b = &x->fab.nics[x->fab.hosts[dst].first_nic];
	double d = x->fab.links[a->link].delay_us;

	if (a->sw != b->sw)
		for (unsigned l = 0; l < x->fab.n_links; l++)
			if (x->fab.links[l].tier != FAB_TIER_HOST && x->fab.links[l].sw == a->sw)
				return d + 2 * x->fab.links[l].delay_us;
	return d;
}

/* The scenario file: the senders one by one (their own delays), the destination's port's switch. */
static int write_scenario(const struct aif_ctx *x, unsigned m, unsigned set, unsigned seed, const char *path,
			  double buffer_bytes)
{
	const struct aif_convergence_cfg *c = &x->c->conv;
	unsigned dst = x->fab.n_hosts - 1, hosts[AIF_MAX_HOSTS], n = aif_incast_senders(x, dst, 2 * m, true, hosts);
	double frame = aif_frame_bytes(c->message_size) - 4.0, wire = frame + 4 + WIRE_GAP_BYTES, kmin, kmax, pmax;
	const config_setting_t *pfc = switch_setting(x, "pfc");
	config_setting_t *root, *sw, *g, *list;
	config_t cf;
	int ok;

	config_init(&cf);
	root = config_root_setting(&cf);
	cfg_set_string(root, "scenario", "network");
	cfg_set_int(root, "seed", (int)seed);
	cfg_set_float(root, "duration_us", (c->join_s + c->settle_s) * 1e6);
	cfg_set_float(root, "sample_us", SAMPLE_US);
	sw = cfg_group(root, "switch");
	cfg_set_int(sw, "buffer_bytes", (int)buffer_bytes);
	if (ecn_of(x, c->priority, &kmin, &kmax, &pmax)) {
		g = cfg_group(sw, "ecn");
		config_setting_set_int(config_setting_add(config_setting_add(g, "classes", CONFIG_TYPE_ARRAY), NULL, CONFIG_TYPE_INT),
				       (int)c->priority);
		cfg_set_int(g, "kmin_bytes", (int)kmin);
		cfg_set_int(g, "kmax_bytes", (int)kmax);
		cfg_set_float(g, "pmax", pmax);
	}
	if (pfc) {
		g = cfg_group(sw, "pfc");
		cfg_copy(g, "priorities", config_setting_get_member(pfc, "priorities"));
		cfg_set_int(g, "xoff_bytes", (int)kb_of(pfc, "xoff_kb", 100));
		cfg_set_int(g, "xon_bytes", (int)kb_of(pfc, "xon_kb", 80));
	}
	g = config_setting_add(config_setting_add(root, "receivers", CONFIG_TYPE_LIST), NULL, CONFIG_TYPE_GROUP);
	cfg_set_string(g, "name", x->fab.hosts[dst].name);
	cfg_set_float(g, "rate_gbps", x->host_gbps * frame / wire);
	cfg_set_float(g, "delay_us", x->fab.links[x->fab.nics[x->fab.hosts[dst].first_nic].link].delay_us);
	list = config_setting_add(root, "flows", CONFIG_TYPE_LIST);
	for (unsigned i = 0; i < n; i++) {
		g = config_setting_add(list, NULL, CONFIG_TYPE_GROUP);
		cfg_set_string(g, "name", x->fab.hosts[hosts[i]].name);
		cfg_set_string(g, "cc", "dcqcn");
		/* the sender's link: the engine's QP starts at its port's line rate in frame bytes (frame + FCS),
		 * a little above what its link carries with preamble and gap, so its NIC's link, not the
		 * switch, holds the excess: the switch sees the link's rate */
		cfg_set_float(g, "rate_gbps", x->fab.links[x->fab.nics[x->fab.hosts[hosts[i]].first_nic].link].gbps * frame / wire);
		cfg_set_int(g, "mtu_bytes", (int)frame);
		cfg_set_float(g, "delay_us", path_delay_us(x, hosts[i], dst));
		cfg_set_float(g, "jitter_us", 1.0); /* no lock-step of identical senders (docs/ccsim.md) */
		cfg_set_float(g, "start_us", i < m ? 0 : c->join_s * 1e6);
		cfg_set_int(g, "priority", (int)c->priority);
		if (set < c->n_dcqcn)
			cfg_copy(g, "dcqcn", c->dcqcn[set]);
	}
	ok = config_write_file(&cf, path) == CONFIG_TRUE;
	config_destroy(&cf);
	return ok ? 0 : -1;
}

/* Whether the simulator's single switch models the trial: the senders on other leaves must not
 * overload their leaf's uplinks at their line rate (a hop the scenario does not have would mark
 * and pause them too). Else *why says which leaf. */
static bool one_switch_models_it(const struct aif_ctx *x, unsigned m, char *why, size_t len)
{
	unsigned dst = x->fab.n_hosts - 1, hosts[AIF_MAX_HOSTS], n = aif_incast_senders(x, dst, 2 * m, true, hosts);
	unsigned dst_leaf = x->fab.nics[x->fab.hosts[dst].first_nic].sw;

	for (unsigned i = 0; i < n; i++) {
		const struct fab_nic *a = &x->fab.nics[x->fab.hosts[hosts[i]].first_nic];
		double offered = 0, up = 0;

		if (a->sw == dst_leaf)
			continue;
		for (unsigned j = 0; j < n; j++) {
			const struct fab_nic *b = &x->fab.nics[x->fab.hosts[hosts[j]].first_nic];
			if (b->sw == a->sw)
				offered += x->fab.links[b->link].gbps;
		}
		for (unsigned l = 0; l < x->fab.n_links; l++)
			if (x->fab.links[l].tier != FAB_TIER_HOST && x->fab.links[l].sw == a->sw)
				up += x->fab.links[l].gbps;
		if (offered > up) {
			text_printf(why, len, "%s's senders offer %g Gb/s at line rate to its %g Gb/s of uplinks", x->fab.switches[a->sw].name,
				    offered, up);
			return false;
		}
	}
	return true;
}

/* One seed's run of the scenario: its samples windowed and judged as the engine's. */
static int ccsim_run(struct aif_ctx *x, const char *ccsim, const char *scen, unsigned n, double fair, struct conv_result *r)
{
	const struct aif_convergence_cfg *c = &x->c->conv;
	char csv[PATH_MAX], log[PATH_MAX], line[256];
	FILE *f;

	memset(r, 0, sizeof(*r));
	r->conv_s = -1;
	text_printf(csv, sizeof(csv), "%s.csv", scen);
	text_printf(log, sizeof(log), "%s.log", scen);
	if (aif_run_tool(ccsim, log, "-q", "--csv", csv, scen) != 0 || !(f = fopen(csv, "r")))
		return -1;
	if (windows_init(&r->w, n, c->window_ms * 1e-3, c->join_s + c->settle_s)) {
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		double t_us, g;
		unsigned flow;
		if (sscanf(line, "%lf,%u,%lf", &t_us, &flow, &g) == 3)
			windows_add(&r->w, t_us * 1e-6, flow, g);
	}
	fclose(f);
	windows_close(&r->w);
	judge_windows(r, fair, c->tolerance, c->join_s, c->hold_ms * 1e-3);
	r->ran = r->w.n > 0;
	return r->ran ? 0 : -1;
}

/* roce-ccsim beside the engine; NULL (and an anomaly) when it is not there. */
static const char *find_ccsim(struct aif_ctx *x, char *path, size_t len)
{
	if (aif_tool_path(x, "roce-ccsim", path, len) == 0)
		return path;
	aif_anomaly(x, AIF_CONVERGENCE, "%s is not there: the convergence times are not compared with the simulator", path);
	return NULL;
}

/* The simulator's mean convergence time over the seeds that settled (-1: none did), and its
 * first seed's windows for the graph (*first, to free). */
static double ccsim_mean(struct aif_ctx *x, unsigned m, unsigned set, double buffer_bytes, struct conv_result *first,
			 unsigned *settled, unsigned *runs)
{
	const struct aif_convergence_cfg *c = &x->c->conv;
	char ccsim[PATH_MAX], scen[PATH_MAX];
	double sum = 0;

	*settled = *runs = 0;
	memset(first, 0, sizeof(*first));
	if (!find_ccsim(x, ccsim, sizeof(ccsim)))
		return NAN;
	for (unsigned seed = 1; seed <= c->ccsim_seeds && !x->rn->stop; seed++) {
		struct conv_result r = { 0 };
		text_printf(scen, sizeof(scen), "%s/convergence-%u-%u-seed%u.cfg", x->rn->dir, m, set, seed);
		if (write_scenario(x, m, set, seed, scen, buffer_bytes) ||
		    ccsim_run(x, ccsim, scen, 2 * m, x->host_gbps * (aif_frame_bytes(c->message_size) - 4.0) /
						     (aif_frame_bytes(c->message_size) + WIRE_GAP_BYTES) / (2 * m), &r)) {
			aif_anomaly(x, AIF_CONVERGENCE, "roce-ccsim did not run %s (its log beside it with --keep)", scen);
			windows_free(&r.w);
			return NAN;
		}
		(*runs)++;
		if (r.conv_s >= 0) {
			(*settled)++;
			sum += r.conv_s;
		}
		if (seed == 1)
			*first = r;
		else
			windows_free(&r.w);
	}
	return *settled ? sum / *settled : *runs ? -1 : NAN;
}

/* ---- the category ---------------------------------------------------------------------------------------- */

/* A parameter set as written: "profile=nvidia rpg_ai_rate=1", or "defaults". */
static void set_text(const config_setting_t *g, char *out, size_t len)
{
	size_t n = 0;

	out[0] = 0;
	for (int i = 0; g && i < config_setting_length(g) && n < len; i++) {
		const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
		int t = config_setting_type(m);
		char v[64];

		if (t == CONFIG_TYPE_STRING)
			text_printf(v, sizeof(v), "%s", config_setting_get_string(m));
		else if (t == CONFIG_TYPE_BOOL)
			text_printf(v, sizeof(v), "%s", config_setting_get_bool(m) ? "true" : "false");
		else if (t == CONFIG_TYPE_FLOAT)
			text_printf(v, sizeof(v), "%g", config_setting_get_float(m));
		else
			text_printf(v, sizeof(v), "%lld", config_setting_get_int64(m));
		n += (size_t)snprintf(out + n, len - n, "%s%s=%s", n ? " " : "", config_setting_name(m), v);
	}
	if (!out[0])
		text_printf(out, len, "defaults (nvidia)");
}

static const char *ms_text(double s, char *buf, size_t len)
{
	if (s < 0)
		return "never";
	text_printf(buf, len, "%.1f", s * 1e3);
	return buf;
}

static json_t *ms_or_null(double s)
{
	return s >= 0 ? json_real(s * 1e3) : json_null();
}

struct conv_case {
	unsigned m, set;
	double engine_s[100];           /* each repeat's (-1: never settled) */
	unsigned runs, settled, limited; /* trials in the mean, those that settled; machine-limited ones */
	struct conv_result first;       /* the first repeat (its windows for the graph) */
	double buffer_bytes;
	double ccsim_s;                 /* mean over seeds; -1 never settled; NAN not run */
	unsigned ccsim_settled, ccsim_runs;
	struct conv_result ccsim_first;
	bool modelled;                  /* the simulator's one switch stands for the fabric's path */
	char unmodelled[160];
};

static void run_case(struct aif_ctx *x, struct conv_case *k)
{
	const struct aif_convergence_cfg *c = &x->c->conv;

	for (unsigned rep = 0; rep < c->runs && rep < 100 && !x->rn->stop; rep++) {
		struct conv_result r = { 0 };
		engine_trial(x, k->m, k->set, &r);
		if (!r.ran) {
			windows_free(&r.w);
			continue;
		}
		if (r.limited) { /* the machine's rates, not DCQCN's: not in the mean */
			k->limited++;
			if (!k->first.ran)
				k->first = r;
			else
				windows_free(&r.w);
			continue;
		}
		k->engine_s[k->runs++] = r.conv_s;
		k->settled += r.conv_s >= 0;
		if (!k->first.ran || k->first.limited) {
			windows_free(&k->first.w);
			k->first = r;
		} else {
			windows_free(&r.w);
		}
	}
	k->ccsim_s = NAN;
	if (x->c->external) /* (the simulator would model the suite's switch group, not the real tier) */
		return;
	k->modelled = one_switch_models_it(x, k->m, k->unmodelled, sizeof(k->unmodelled));
	if (!k->modelled)
		aif_anomaly(x, AIF_CONVERGENCE, "M = %u, set %u: %s, a hop roce-ccsim's one switch does not have: its "
			    "times are shown, not held to the engine's", k->m, k->set, k->unmodelled);
	if (k->limited)
		aif_anomaly(x, AIF_CONVERGENCE, "M = %u, set %u: %u of %u trials machine-limited (%s, or the cc trace lost "
			    "rows): left out of the mean", k->m, k->set, k->limited, k->limited + k->runs, aif_machine_reason(x));
	if (k->runs && c->ccsim && !x->rn->stop)
		k->ccsim_s = ccsim_mean(x, k->m, k->set, k->first.buffer_bytes, &k->ccsim_first, &k->ccsim_settled,
					&k->ccsim_runs);
}

static double engine_mean(const struct conv_case *k)
{
	double sum = 0;

	for (unsigned i = 0; i < k->runs; i++)
		sum += k->engine_s[i] >= 0 ? k->engine_s[i] : 0;
	return k->settled ? sum / k->settled : -1;
}

/* The half-width of the 95 % confidence interval of the engine's mean over its settled runs
 * (Student's t, two-sided, n - 1 degrees of freedom): their spread is a CV of 20-30 %. */
static double engine_half_width(const struct conv_case *k, double mean)
{
	static const double t975[] = { 0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
				       2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086 };
	unsigned df = k->settled ? k->settled - 1 : 0;
	double ss = 0;

	for (unsigned i = 0; i < k->runs; i++)
		if (k->engine_s[i] >= 0)
			ss += (k->engine_s[i] - mean) * (k->engine_s[i] - mean);
	return df ? (df < 21 ? t975[df] : 1.96 + 2.5 / df) * sqrt(ss / df / k->settled) : INFINITY;
}

/* The engine against the simulator: each settles in at least half its runs and the means of the
 * settled runs are within the tolerance; or neither ever settles. Held only when the machine
 * left half the runs asked for and the engine's mean is known to the tolerance (its 95 %
 * confidence interval within it): three runs the machine left measure the CPU's luck. */
static void judge_case(struct aif_ctx *x, const struct conv_case *k, json_t *row)
{
	const struct aif_convergence_cfg *c = &x->c->conv;
	double e = engine_mean(k), s = k->ccsim_s;
	bool agree;

	if (isnan(s) || !k->modelled)
		return;
	if (2 * k->runs < c->runs || k->limited > k->runs) {
		machine_limit(x->rn, row, "M = %u, set %u: %u of %u trials machine-limited: not held against the simulator",
			      k->m, k->set, k->limited, k->limited + k->runs);
		return;
	}
	if (k->settled && 2 * k->settled >= k->runs && engine_half_width(k, e) > c->ccsim_tolerance * s) {
		machine_limit(x->rn, row, "M = %u, set %u: the engine's mean over %u settled runs is known to +-%.0f %% only "
			      "(95 %%): not held against the simulator within %.0f %%", k->m, k->set, k->settled,
			      100 * engine_half_width(k, e) / s, 100 * c->ccsim_tolerance);
		return;
	}
	agree = (!k->settled && !k->ccsim_settled) ||
		(2 * k->settled >= k->runs && 2 * k->ccsim_settled >= k->ccsim_runs && fabs(e - s) <= c->ccsim_tolerance * s);
	suite_verdict(x->rn, agree, "convergence_as_ccsim",
		      "M = %u + %u, DCQCN set %u: the engine settled in %u of %u runs, mean %.1f ms; roce-ccsim in %u of %u "
		      "seeds, mean %.1f ms (within %.0f %% wanted)", k->m, k->m, k->set, k->settled, k->runs,
		      e >= 0 ? e * 1e3 : NAN, k->ccsim_settled, k->ccsim_runs, s >= 0 ? s * 1e3 : NAN, 100 * c->ccsim_tolerance);
}

static json_t *case_row(struct aif_ctx *x, const struct conv_case *k)
{
	const struct conv_result *r = &k->first;
	char set[256], em[24], sm[24];
	double e = engine_mean(k);
	json_t *row, *each = json_array();

	set_text(k->set < x->c->conv.n_dcqcn ? x->c->conv.dcqcn[k->set] : NULL, set, sizeof(set));
	for (unsigned i = 0; i < k->runs; i++)
		json_array_append_new(each, ms_or_null(k->engine_s[i]));
	row = json_pack("{s:i,s:s,s:i,s:i,s:i,s:i,s:f,s:o,s:o,s:i}", "dcqcn_set", (int)k->set, "dcqcn", set, "m", (int)k->m,
			"flows", (int)(2 * k->m), "runs", (int)k->runs, "machine_limited_runs", (int)k->limited, "fair_gbps",
			r->fair_gbps, "convergence_ms", ms_or_null(e), "convergence_ms_each", each, "settled_runs",
			(int)k->settled);
	json_object_set_new(row, "last_window_min_gbps", json_real(r->last_min));
	json_object_set_new(row, "last_window_max_gbps", json_real(r->last_max));
	json_object_set_new(row, "last_window_jfi", json_real(r->last_jfi));
	json_object_set_new(row, "cnps", json_integer((json_int_t)r->cnps));
	aif_fabric_to_json(&r->v, row);
	if (!isnan(k->ccsim_s)) {
		json_object_set_new(row, "ccsim_convergence_ms", ms_or_null(k->ccsim_s));
		json_object_set_new(row, "ccsim_settled_seeds", json_integer(k->ccsim_settled));
		json_object_set_new(row, "ccsim_seeds", json_integer(k->ccsim_runs));
		json_object_set_new(row, "engine_over_ccsim", e >= 0 && k->ccsim_s > 0 ? json_real(e / k->ccsim_s) : json_null());
		json_object_set_new(row, "ccsim_models_the_path", json_boolean(k->modelled));
	}
	printf("  %3u  %3u+%-3u  %9s  %3u/%-3u  %9s  %6.3f..%-6.3f  %s\n", k->set, k->m, k->m, ms_text(e, em, sizeof(em)),
	       k->settled, k->runs, isnan(k->ccsim_s) ? "-" : ms_text(k->ccsim_s, sm, sizeof(sm)), r->last_min, r->last_max,
	       set);
	judge_case(x, k, row);
	return row;
}

/* Each flow's windowed rate over time, the engine's and the simulator's, for one case. */
static void rates_graph(struct aif_ctx *x, const struct conv_case *k)
{
	json_t *g = aif_graph(x, "convergence_rates.png", "lines", "§7.3 DCQCN rates, M flows then M more (windowed)",
			      "time (s)", "rate (Gb/s)");
	const struct windows *w[2] = { &k->first.w, &k->ccsim_first.w };
	static const char *const who[2] = { "engine", "ccsim" };
	double *ys;

	for (unsigned s = 0; s < 2; s++) {
		if (!w[s]->n || !(ys = malloc(w[s]->n * sizeof(double))))
			continue;
		for (unsigned f = 0; f < w[s]->n_flows && f < 16; f++) {
			char label[32];
			for (unsigned i = 0; i < w[s]->n; i++)
				ys[i] = w[s]->rate[(size_t)i * w[s]->n_flows + f];
			text_printf(label, sizeof(label), "%s flow %u", who[s], f);
			aif_series(g, label, w[s]->t, ys, w[s]->n);
		}
		free(ys);
	}
}

int aif_convergence(struct aif_ctx *x)
{
	const struct aif_convergence_cfg *c = &x->c->conv;
	unsigned n_sets = c->n_dcqcn ? c->n_dcqcn : 1, shown = 0;
	double kmin, kmax, pmax, xs[AIF_MAX_LIST], eng[AIF_MAX_LIST][AIF_MAX_LIST], sim[AIF_MAX_LIST][AIF_MAX_LIST];
	json_t *rows = json_array(), *g, *res;
	struct conv_case *k = calloc(1, sizeof(*k));

	if (!k)
		return -1;
	printf("\n§7.3 DCQCN convergence: M flows, M more join after %g s; within %.0f %% of the fair share\n"
	       "  set  flows    engine ms  settled  ccsim ms   last window Gb/s  parameters\n",
	       c->join_s, 100 * c->tolerance);
	if (!ecn_of(x, c->priority, &kmin, &kmax, &pmax))
		aif_anomaly(x, AIF_CONVERGENCE, "the switches mark no ECN on class %u: DCQCN gets no CNPs, PFC alone "
			    "divides the link", c->priority);
	for (unsigned set = 0; set < n_sets && !x->rn->stop; set++)
		for (unsigned i = 0; i < c->n_flows && !x->rn->stop; i++) {
			unsigned m = c->flows[i];
			if (2 * m >= x->fab.n_hosts || 2 * m > AIF_MAX_HOSTS) {
				if (set == 0)
					aif_anomaly(x, AIF_CONVERGENCE, "M = %u needs %u hosts; the fabric has %u: not run", m,
						    2 * m + 1, x->fab.n_hosts);
				eng[set][i] = sim[set][i] = NAN;
				continue;
			}
			memset(k, 0, sizeof(*k));
			k->m = m;
			k->set = set;
			run_case(x, k);
			xs[i] = m;
			/* a point where most runs settled (a mean of the few that did is not the case's) */
			eng[set][i] = 2 * k->settled >= k->runs && k->settled ? engine_mean(k) * 1e3 : NAN;
			sim[set][i] = 2 * k->ccsim_settled >= k->ccsim_runs && k->ccsim_settled ? k->ccsim_s * 1e3 : NAN;
			if (k->runs || k->limited) {
				json_array_append_new(rows, case_row(x, k));
				if (k->runs > 1 && k->settled == k->runs)
					aif_repeatability(x, AIF_CONVERGENCE, "convergence_s", "s", k->engine_s, k->runs);
			}
			if (k->first.ran && !shown++)
				rates_graph(x, k);
			windows_free(&k->first.w);
			windows_free(&k->ccsim_first.w);
		}
	g = aif_graph(x, "convergence_time.png", "lines", "§7.3 DCQCN convergence time after M flows join M",
		      "M", "ms to within the band");
	for (unsigned set = 0; set < n_sets; set++) {
		char label[64];
		text_printf(label, sizeof(label), "engine, set %u", set);
		aif_series(g, label, xs, eng[set], c->n_flows);
		if (c->ccsim) {
			text_printf(label, sizeof(label), "roce-ccsim, set %u", set);
			aif_series(g, label, xs, sim[set], c->n_flows);
		}
	}
	res = json_pack("{s:s,s:i,s:f,s:f,s:f,s:f,s:s,s:o}", "section", "7.3", "priority", (int)c->priority, "join_s",
			c->join_s, "settle_s", c->settle_s, "window_ms", c->window_ms, "tolerance", c->tolerance, "destination",
			x->fab.hosts[x->fab.n_hosts - 1].name, "rows", rows);
	json_object_set_new(x->results, "convergence", res);
	free(k);
	return x->rn->stop ? -1 : 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * §10.3 multi-tenant interference: two training jobs, A and B, each a ring AllReduce of S bytes
 * over its own hosts (`iterations` in a row, each job its own barrier), sharing a share of their
 * spine links: the interference factor of each job is its JCT with the other running over its
 * JCT alone (the draft: contention JCT / baseline JCT), for each overlap of interference.overlaps.
 *
 * The placement, on a two-tier leaf-spine fabric balancing by ECMP: each leaf's hosts split in
 * halves, A on the first of every leaf and B on the second, each job's ring taking a host of each
 * leaf in turn, so every edge of a ring crosses the spines. The spines split too: A's edges are
 * steered onto the first half (spine set SA), B's onto the second (SB) but for k of its n
 * spine-crossing edges, steered onto SA's links, k = round(overlap x n) (the first k edges in
 * turn over their source leaves, so the shared ones spread). Steering is what a lab does on a real
 * fabric: the UDP source port (the RoCE entropy) of each QP is chosen so that the leaves' ECMP
 * hash, fab_hash over the flow's fields with each switch's seed, picks that spine; each job's QPs
 * keep their ports in its trial alone, so only the other job differs.
 *
 * The overlap reported is the plan's: the share of B's spine-tier hops on links A's flows cross.
 * What the settings imply: the max-min fair fluid rates (fab_maxmin) of every ring edge, each
 * job's slowest edge bounding its phases (a ring phase ends with its slowest edge), so the plan's
 * factor is a job's slowest rate alone over its slowest rate with the other job. It is an upper
 * bound of what a run shows (the jobs' phases are not aligned, and an edge that finishes frees
 * its links; both rarely matter: a ring's edges all run through nearly all of each phase), so
 * each job's measured factor must be at most the plan's, with 10 % for a run's noise, and at
 * least 0.7 of it (interference_as_the_plan), and with no shared link the jobs must not slow each
 * other beyond that noise (interference_apart_none). thresholds.max_interference_factor is the
 * user's.
 *
 * On a real switch tier (fabric.external) the switches hash as they do: nothing is steered. The
 * jobs are placed on the same hosts; each row is a draw of job B's UDP source ports (row k: its
 * edges from FIRST_SPORT + JOB_MAX x (k + 1)), so a suite file's `overlaps` list gives as many
 * draws of the tier's own hashing. The overlap of a row is then measured, where
 * external.counters_command reads the switches' counters: the share of B's spine-tier bytes (its
 * trial alone) on the directed links that carried A's (A's trial alone; a link carried a job's
 * traffic when it counted 1 % of that job's busiest link or more), null without counters. No
 * plan: the factors are the measured ones, judged by the user's threshold, and with no shared link
 * by interference_apart_none.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aif_ctx.h"
#include "config_tree.h"
#include "fab_fluid.h"
#include "verdict.h"

#define JOB_MAX 8               /* ranks per job */
#define NOISE 0.10              /* a run's JCT against another's: the lab lcore's jitter */
#define LEAST_OF_PLAN 0.7       /* unaligned phases and edges that finish first: measured 0.91-1.0 of the plan */
#define FIRST_SPORT 49152       /* the dynamic ports: where the steering looks for a UDP source port */
#define USED_SHARE 0.01         /* a real tier's link carried a job's traffic: 1 % of its busiest link */

struct job {
	const char *tag;        /* "ja", "jb": its traffic entries, flows and collective */
	unsigned hosts[JOB_MAX], n;
	uint16_t sport[JOB_MAX];      /* edge i: hosts[i] -> hosts[i + 1] */
	int spine[JOB_MAX];           /* the spine edge i crosses (-1: none) */
	uint32_t qpn[JOB_MAX];
};

struct placement {
	struct job job[2];
	double overlap;               /* the plan's: B's spine-tier hops on A's links; on a real tier
				       * measured (NAN: no counters) */
	double plan_min[2][2];        /* [job][alone, together]: its slowest edge's fluid rate, Gb/s
				       * (a real tier: NAN) */
	unsigned draw;                /* a real tier: the row's draw of B's source ports */
};

struct jobs_run {
	bool ran;
	unsigned iterations[2];
	double jct_s[2];
	double iter_s[2][AIF_MAX_ITER];
	struct aif_fabric_view v;
	json_t *links;                /* a real tier: the report's fabric.links (counters_command's) */
};

/* ---- the placement ----------------------------------------------------------------------------- */

static unsigned host_leaf(const struct aif_ctx *x, unsigned h)
{
	return x->fab.nics[x->fab.hosts[h].first_nic].sw;
}

/* Leaf switches with hosts, in the hosts' order; how many. */
static unsigned leaves_of(const struct aif_ctx *x, unsigned *leaf, unsigned max)
{
	unsigned n = 0;

	for (unsigned h = 0; h < x->fab.n_hosts; h++) {
		unsigned l = host_leaf(x, h), i;
		for (i = 0; i < n && leaf[i] != l; i++)
			;
		if (i == n && n < max)
			leaf[n++] = l;
	}
	return n;
}

/* The k-th host (0-based) of leaf l, or -1. */
static int leaf_host(const struct aif_ctx *x, unsigned l, unsigned k)
{
	for (unsigned h = 0; h < x->fab.n_hosts; h++)
		if (host_leaf(x, h) == l && k-- == 0)
			return (int)h;
	return -1;
}

/* Job `which` (0: each leaf's first half of hosts, 1: its second half), a host of each leaf in
 * turn, at most `want`. The smallest leaf's half bounds every leaf's share. */
static unsigned job_hosts(const struct aif_ctx *x, unsigned which, unsigned want, unsigned *out)
{
	unsigned leaf[AIF_MAX_HOSTS], nl = leaves_of(x, leaf, AIF_MAX_HOSTS), half = UINT_MAX, n = 0;

	for (unsigned i = 0; i < nl; i++) {
		unsigned c = 0;
		while (leaf_host(x, leaf[i], c) >= 0)
			c++;
		half = c / 2 < half ? c / 2 : half;
	}
	for (unsigned k = 0; k < half && n < want; k++)
		for (unsigned i = 0; i < nl && n < want; i++)
			out[n++] = (unsigned)leaf_host(x, leaf[i], which * half + k);
	return n;
}

static unsigned spines_of(const struct aif_ctx *x, unsigned *spine, unsigned max)
{
	unsigned n = 0;

	for (unsigned s = 0; s < x->fab.n_switches && n < max; s++)
		if (x->fab.switches[s].tier == FAB_TIER_SPINE)
			spine[n++] = s;
	return n;
}

static struct fab_flow_key edge_key(const struct aif_ctx *x, const struct job *j, unsigned i)
{
	const struct fab_nic *a = &x->fab.nics[x->fab.hosts[j->hosts[i]].first_nic];
	const struct fab_nic *b = &x->fab.nics[x->fab.hosts[j->hosts[(i + 1) % j->n]].first_nic];

	/* the engine's flows send to RoCEv2's UDP port; the QP writes to its peer's QPN, the same */
	return (struct fab_flow_key){ .src_ip = a->ip, .dst_ip = b->ip, .sport = j->sport[i], .dport = 4791,
				      .dest_qp = j->qpn[i] };
}

/* The directed links edge i crosses (at most max); how many, or -1. */
static int edge_links(struct fab_tracer *t, const struct aif_ctx *x, const struct job *j, unsigned i,
		      struct fab_hop *hops, unsigned max)
{
	struct fab_flow_key k = edge_key(x, j, i);

	return fab_flow_links(t, x->fab.hosts[j->hosts[i]].first_nic, x->fab.hosts[j->hosts[(i + 1) % j->n]].first_nic,
			      &k, hops, max);
}

static int spine_on(const struct aif_ctx *x, const struct fab_hop *hops, int n)
{
	for (int h = 0; h < n; h++) {
		const struct fab_link *l = &x->fab.links[hops[h].dlink / 2];
		if (!l->to_nic && x->fab.switches[l->b].tier == FAB_TIER_SPINE)
			return (int)l->b;
		if (x->fab.switches[l->sw].tier == FAB_TIER_SPINE)
			return (int)l->sw;
	}
	return -1;
}

/* The first UDP source port from FIRST_SPORT whose hash takes edge i over `want`; -1 if none. */
static int steer(struct fab_tracer *t, const struct aif_ctx *x, struct job *j, unsigned i, unsigned want)
{
	struct fab_hop hops[16];

	for (unsigned p = FIRST_SPORT; p <= 65535; p++) {
		int n;
		j->sport[i] = (uint16_t)p;
		n = edge_links(t, x, j, i, hops, 16);
		if (n > 0 && spine_on(x, hops, n) == (int)want) {
			j->spine[i] = (int)want;
			return 0;
		}
	}
	return -1;
}

/* Edge i's turn among the job's spine-crossing edges taken a source leaf at a time: its
 * occurrence at its leaf x leaves + the leaf's place. */
static unsigned leaf_turn(const struct aif_ctx *x, const struct job *j, unsigned i)
{
	unsigned leaf[AIF_MAX_HOSTS], nl = leaves_of(x, leaf, AIF_MAX_HOSTS), before = 0, place = 0;

	for (unsigned e = 0; e < i; e++)
		before += host_leaf(x, j->hosts[e]) == host_leaf(x, j->hosts[i]);
	while (place < nl && leaf[place] != host_leaf(x, j->hosts[i]))
		place++;
	return before * nl + place;
}

static bool crosses(const struct aif_ctx *x, const struct job *j, unsigned i)
{
	return host_leaf(x, j->hosts[i]) != host_leaf(x, j->hosts[(i + 1) % j->n]);
}

/* Job B's spine-crossing edges ranked by leaf_turn: the k lowest share SA. */
static bool shares(const struct aif_ctx *x, const struct job *j, unsigned i, unsigned k)
{
	unsigned mine = leaf_turn(x, j, i), lower = 0;

	for (unsigned e = 0; e < j->n; e++)
		lower += crosses(x, j, e) && leaf_turn(x, j, e) < mine;
	return lower < k;
}

/* The max-min fluid rate of each job's slowest edge, with the jobs of `mask` on the fabric. */
static int plan_rates(struct fab_tracer *t, const struct aif_ctx *x, const struct placement *p, unsigned mask,
		      double *slowest)
{
	unsigned n_dl = 2 * x->fab.n_links, nf = 0, nh = 0;
	uint32_t first[2 * JOB_MAX + 1];
	struct fab_hop hops[2 * JOB_MAX * 16];
	double cap[2 * x->fab.n_links], rate[2 * JOB_MAX];
	unsigned owner[2 * JOB_MAX];

	for (unsigned l = 0; l < x->fab.n_links; l++)
		cap[2 * l] = cap[2 * l + 1] = x->fab.links[l].gbps;
	for (unsigned b = 0; b < 2; b++)
		for (unsigned i = 0; (mask >> b & 1) && i < p->job[b].n; i++) {
			int n = edge_links(t, x, &p->job[b], i, hops + nh, 16);
			if (n < 0)
				return -1;
			first[nf] = nh;
			owner[nf++] = b;
			nh += (unsigned)n;
		}
	first[nf] = nh;
	if (fab_maxmin(n_dl, cap, nf, first, hops, NULL, rate))
		return -1;
	slowest[0] = slowest[1] = INFINITY;
	for (unsigned f = 0; f < nf; f++)
		slowest[owner[f]] = fmin(slowest[owner[f]], rate[f]);
	return 0;
}

/* B's spine-tier hops on links A's flows cross, over all of B's spine-tier hops. */
static double plan_overlap(struct fab_tracer *t, const struct aif_ctx *x, const struct placement *p)
{
	bool on_a[2 * x->fab.n_links];
	struct fab_hop hops[16];
	unsigned shared = 0, all = 0;

	memset(on_a, 0, sizeof(on_a));
	for (unsigned i = 0; i < p->job[0].n; i++) {
		int n = edge_links(t, x, &p->job[0], i, hops, 16);
		for (int h = 0; h < n; h++)
			on_a[hops[h].dlink] = x->fab.links[hops[h].dlink / 2].tier != FAB_TIER_HOST;
	}
	for (unsigned i = 0; i < p->job[1].n; i++) {
		int n = edge_links(t, x, &p->job[1], i, hops, 16);
		for (int h = 0; h < n; h++)
			if (x->fab.links[hops[h].dlink / 2].tier != FAB_TIER_HOST) {
				all++;
				shared += on_a[hops[h].dlink];
			}
	}
	return all ? (double)shared / all : 0;
}

/* Job b's hosts and QPs, every edge from UDP source port FIRST_SPORT, none steered yet. */
static void init_job(struct aif_ctx *x, struct job *j, unsigned b, unsigned ranks)
{
	j->tag = b ? "jb" : "ja";
	j->n = job_hosts(x, b, ranks, j->hosts);
	for (unsigned i = 0; i < j->n; i++) {
		j->qpn[i] = 0x100 + 0x10000 * (b * JOB_MAX + i);
		j->spine[i] = -1;
		j->sport[i] = FIRST_SPORT;
	}
}

/* Both jobs' ports for B sharing k of its spine-crossing edges with A; 0, or -1 with why in err. */
static int place(struct aif_ctx *x, struct placement *p, unsigned ranks, unsigned k, char *err, size_t len)
{
	unsigned spine[64], ns = spines_of(x, spine, 64), na = ns / 2;
	struct fab_tracer t;
	int rc = 0;

	memset(p, 0, sizeof(*p));
	if (fab_tracer_init(&t, &x->fab, &x->routes))
		return text_printf(err, len, "out of memory"), -1;
	for (unsigned b = 0; b < 2; b++) {
		struct job *j = &p->job[b];
		unsigned crossing = 0;

		init_job(x, j, b, ranks);
		for (unsigned i = 0; i < j->n && rc == 0; i++) {
			bool cross = crosses(x, j, i);
			bool in_a = b == 0 || shares(x, j, i, k);
			unsigned set = in_a ? crossing % na : na + crossing % (ns - na);

			if (cross && steer(&t, x, j, i, spine[set]) < 0) {
				text_printf(err, len, "no UDP source port takes %s -> %s over %s", x->fab.hosts[j->hosts[i]].name,
					    x->fab.hosts[j->hosts[(i + 1) % j->n]].name, x->fab.switches[spine[set]].name);
				rc = -1;
			}
			crossing += cross;
		}
	}
	if (rc == 0) {
		double a[2] = { 0 }, b[2] = { 0 }, ab[2] = { 0 };

		p->overlap = plan_overlap(&t, x, p);
		rc = plan_rates(&t, x, p, 1, a) || plan_rates(&t, x, p, 2, b) || plan_rates(&t, x, p, 3, ab) ? -1 : 0;
		p->plan_min[0][0] = a[0];
		p->plan_min[1][0] = b[1];
		p->plan_min[0][1] = ab[0];
		p->plan_min[1][1] = ab[1];
		if (rc)
			text_printf(err, len, "the fluid plan failed");
	}
	fab_tracer_free(&t);
	return rc;
}

/* A real tier's placement: the same hosts, draw k of B's source ports, nothing steered. */
static void place_external(struct aif_ctx *x, struct placement *p, unsigned ranks, unsigned draw)
{
	memset(p, 0, sizeof(*p));
	p->draw = draw;
	p->overlap = NAN;
	for (unsigned b = 0; b < 2; b++) {
		struct job *j = &p->job[b];

		init_job(x, j, b, ranks);
		for (unsigned i = 0; i < j->n; i++)
			j->sport[i] += (uint16_t)((b ? JOB_MAX * (draw + 1) : 0) + i);
		for (unsigned t = 0; t < 2; t++)
			p->plan_min[b][t] = NAN;
	}
}

/* Bytes a real tier's counters (fabric.links) gave directed link dl (2 l: from its switch end). */
static double counted_bytes(const struct aif_ctx *x, const json_t *links, unsigned dl)
{
	return aif_counted_bytes(links, x->fab.links[dl / 2].name, dl % 2);
}

/* The share of B's spine-tier bytes (its trial alone) on the directed links that carried A's
 * (A's alone); NAN without counters or spine-tier bytes. */
static double measured_overlap(const struct aif_ctx *x, const json_t *links_a, const json_t *links_b)
{
	unsigned n_dl = 2 * x->fab.n_links;
	double a[n_dl], most_a = 0, shared = 0, all = 0;

	if (!json_array_size(links_a) || !json_array_size(links_b))
		return NAN;
	for (unsigned dl = 0; dl < n_dl; dl++) {
		a[dl] = x->fab.links[dl / 2].tier == FAB_TIER_HOST ? 0 : counted_bytes(x, links_a, dl);
		most_a = fmax(most_a, a[dl]);
	}
	for (unsigned dl = 0; dl < n_dl; dl++) {
		double b = x->fab.links[dl / 2].tier == FAB_TIER_HOST ? 0 : counted_bytes(x, links_b, dl);
		all += b;
		shared += a[dl] >= USED_SHARE * most_a && most_a > 0 ? b : 0;
	}
	return all > 0 ? shared / all : NAN;
}

/* ---- a trial of one job or both ---------------------------------------------------------------------------- */

static void add_job(struct aif_trial *t, const struct aif_ctx *x, const struct job *j, const struct aif_flow *tmpl,
		    unsigned iterations)
{
	config_setting_t *flows;
	char name[64];

	aif_collective_group(t, j->tag, "ring", kpi_collective_phases(KPI_ALLREDUCE, j->n) * iterations, &flows);
	for (unsigned i = 0; i < j->n; i++) {
		struct aif_flow f = *tmpl;
		unsigned pair[1][2] = { { j->hosts[i], j->hosts[(i + 1) % j->n] } };
		config_setting_t *e;

		f.udp_sport = j->sport[i];
		snprintf(name, sizeof(name), "%s-%u", j->tag, i);
		aif_trial_pairs(t, x, name, (const unsigned(*)[2])pair, 1, 1, &f);
		e = config_setting_get_elem(t->traffic, t->n_traffic - 1);
		cfg_set_int(e, "qpn", j->qpn[i]);
		cfg_set_int(e, "dest_qpn", j->qpn[i]);
		snprintf(name, sizeof(name), "%s-%u-%.8s-%.8s", j->tag, i, x->fab.hosts[pair[0][0]].name,
			 x->fab.hosts[pair[0][1]].name);
		config_setting_set_string(config_setting_add(flows, NULL, CONFIG_TYPE_STRING), name);
	}
}

static void read_job(const json_t *rep, const struct job *j, unsigned phases, unsigned b, struct jobs_run *r)
{
	const json_t *c, *mine = NULL;
	size_t i;

	json_array_foreach(json_object_get(rep, "collectives"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "name")) ?: "", j->tag))
			mine = c;
	r->iterations[b] = aif_iteration_times(mine, phases, r->iter_s[b], &r->jct_s[b]);
}

/* The jobs of `mask` (1: A, 2: B, 3: both) as placed, on one engine. */
static int run_jobs(struct aif_ctx *x, const struct placement *p, unsigned mask, const char *what, struct jobs_run *r)
{
	const struct aif_interference_cfg *ic = &x->c->interference;
	struct aif_flow f = { .transport = "rc", .priority = 3 };
	struct flow_set fs = { .names = { "ja-*", "jb-*" }, .n = 2 };
	double cap_s = 10 + 1e-9 * 8 * ic->message_size * 2.0 * ic->iterations / x->host_gbps * 40;
	struct aif_trial t;
	struct trial tr;
	struct metrics m;

	memset(r, 0, sizeof(*r));
	aif_trial_init(&t, x);
	for (unsigned b = 0; b < 2; b++)
		if (mask >> b & 1) {
			f.message_size = (ic->message_size + p->job[b].n - 1) / p->job[b].n;
			add_job(&t, x, &p->job[b], &f, ic->iterations);
		}
	cfg_set_float(cfg_group(config_root_setting(&t.cfg), "run"), "duration_s", cap_s);
	if (x->c->external)
		trial_init(&tr, "interference", "%s, draw %u of B's source ports: allreduce of %u bytes, %u iterations", what,
			   p->draw, ic->message_size, ic->iterations);
	else
		trial_init(&tr, "interference", "%s, overlap %.0f %%: allreduce of %u bytes, %u iterations", what,
			   100 * p->overlap, ic->message_size, ic->iterations);
	tr.duration_s = 0;
	json_object_set_new(tr.params, x->c->external ? "draw" : "overlap",
			    x->c->external ? json_integer(p->draw) : json_real(p->overlap));
	if (trial_measure(x->rn, &t.cfg, &tr, &fs, &m) == 0) {
		aif_fabric_read(tr.report, &r->v);
		aif_fabric_to_json(&r->v, tr.record);
		r->links = json_incref(json_object_get(json_object_get(tr.report, "fabric"), "links"));
		for (unsigned b = 0; b < 2; b++)
			if (mask >> b & 1)
				read_job(tr.report, &p->job[b], kpi_collective_phases(KPI_ALLREDUCE, p->job[b].n), b, r);
		r->ran = true;
		trial_verdict(x->rn, &tr, "info", "JCT A %.4f s, B %.4f s", r->jct_s[0], r->jct_s[1]);
	}
	trial_release(&tr);
	aif_trial_free(&t);
	return r->ran ? 0 : -1;
}

/* ---- the category --------------------------------------------------------------------------------------------- */

/* Why the placement cannot be made on this fabric, or NULL. */
static const char *unplaceable(const struct aif_ctx *x, unsigned *ranks)
{
	unsigned spine[64], leaf[AIF_MAX_HOSTS], tmp[JOB_MAX];

	if (x->fab.rails != 1)
		return "hosts with one NIC each";
	if (spines_of(x, spine, 64) < 2 || x->fab.kind != FAB_LEAF_SPINE)
		return "a leaf-spine fabric with two spines or more";
	for (unsigned s = 0; s < x->fab.n_switches && !x->c->external; s++) /* (a real tier's are its own) */
		if (x->fab.switches[s].tier == FAB_TIER_LEAF && x->fab.switches[s].lb.lb != FAB_LB_ECMP)
			return "ECMP at the leaves (the steering picks each QP's path by its hash)";
	if (leaves_of(x, leaf, AIF_MAX_HOSTS) < 2)
		return "two leaves with hosts";
	*ranks = job_hosts(x, 1, x->c->interference.ranks ? x->c->interference.ranks : JOB_MAX, tmp);
	return *ranks < 2 ? "two hosts or more on every leaf" : NULL;
}

static double factor(const struct jobs_run *alone, const struct jobs_run *both, unsigned b)
{
	return alone->jct_s[b] > 0 ? both->jct_s[b] / alone->jct_s[b] : NAN;
}

static json_t *real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* What a row is called in messages: its overlap (the plan's or, measured, a real tier's), or its draw. */
static const char *row_name(const struct aif_ctx *x, const struct placement *p, char *buf, size_t len)
{
	if (!x->c->external)
		text_printf(buf, len, "overlap %.0f %%", 100 * p->overlap);
	else if (isfinite(p->overlap))
		text_printf(buf, len, "draw %u (overlap %.0f %%, measured)", p->draw, 100 * p->overlap);
	else
		text_printf(buf, len, "draw %u", p->draw);
	return buf;
}

static void job_columns(json_t *row, unsigned j, const struct jobs_run *alone, const struct jobs_run *both, double f,
			double plan)
{
	static const char *const keys[] = { "jct_alone_s_%s", "jct_together_s_%s", "interference_factor_%s",
					    "plan_factor_%s" };
	double v[] = { alone->jct_s[j], both->jct_s[j], f, plan };
	char key[48];

	for (unsigned k = 0; k < 4; k++) {
		text_printf(key, sizeof(key), keys[k], j ? "b" : "a");
		json_object_set_new(row, key, real_or_null(v[k]));
	}
}

static void judge_row(struct aif_ctx *x, const struct placement *p, const char *name, const double *f, const double *plan)
{
	for (unsigned j = 0; j < 2; j++) {
		if (!x->c->external) /* (a real tier has no plan) */
			suite_verdict(x->rn, f[j] <= plan[j] * (1 + NOISE) && f[j] >= plan[j] * LEAST_OF_PLAN,
				      "interference_as_the_plan", "%s: job %c's factor %.3f, the plan's %.3f (its slowest edge "
				      "%.3f Gb/s alone, %.3f together)", name, 'A' + j, f[j], plan[j], p->plan_min[j][0],
				      p->plan_min[j][1]);
		if (p->overlap == 0)
			suite_verdict(x->rn, f[j] <= 1 + NOISE, "interference_apart_none",
				      "no spine link shared (%s): job %c's factor %.3f", name, 'A' + j, f[j]);
		aif_threshold(x, AIF_INTERFERENCE, "interference_factor", f[j], x->c->th.max_interference_factor, true,
			      j ? "job B" : "job A");
	}
}

static json_t *overlap_row(struct aif_ctx *x, double want, const struct placement *p, const struct jobs_run *a,
			   const struct jobs_run *b, const struct jobs_run *both)
{
	const struct aif_interference_cfg *ic = &x->c->interference;
	double plan[2], f[2];
	bool limited = a->v.machine_limited || b->v.machine_limited || both->v.machine_limited;
	char name[64];
	json_t *row = json_pack("{s:o,s:o,s:i,s:b}", "overlap_wanted", x->c->external ? json_null() : json_real(want),
				"overlap", real_or_null(p->overlap), "ranks_per_job", (int)p->job[0].n, "ran",
				a->ran && b->ran && both->ran);

	row_name(x, p, name, sizeof(name));
	if (x->c->external)
		json_object_set_new(row, "udp_sport_first_b", json_integer(p->job[1].sport[0]));
	if (!(a->ran && b->ran && both->ran))
		return row;
	for (unsigned j = 0; j < 2; j++) {
		const struct jobs_run *alone = j ? b : a;

		plan[j] = p->plan_min[j][0] / p->plan_min[j][1];
		f[j] = factor(alone, both, j);
		job_columns(row, j, alone, both, f[j], plan[j]);
		suite_verdict(x->rn, alone->iterations[j] == ic->iterations && both->iterations[j] == ic->iterations,
			      "interference_jobs_complete", "%s: job %c %u and %u of %u iterations (alone, together)", name,
			      'A' + j, alone->iterations[j], both->iterations[j], ic->iterations);
	}
	if (!x->c->external)
		json_object_set_new(row, "plan_slowest_gbps", json_pack("[[f,f],[f,f]]", p->plan_min[0][0], p->plan_min[0][1],
									 p->plan_min[1][0], p->plan_min[1][1]));
	aif_fabric_to_json(&both->v, row);
	if (x->c->external) /* (no plan; the overlap measured, or unknown) */
		printf("  %6.0f %%  %9.4f  %9.4f  %6.3f  %9.4f  %9.4f  %6.3f  %13s%s\n", 100 * p->overlap, a->jct_s[0],
		       both->jct_s[0], f[0], b->jct_s[1], both->jct_s[1], f[1], "-", limited ? "  !" : "");
	else
		printf("  %6.0f %%  %9.4f  %9.4f  %6.3f  %9.4f  %9.4f  %6.3f  %6.3f %6.3f%s\n", 100 * p->overlap, a->jct_s[0],
		       both->jct_s[0], f[0], b->jct_s[1], both->jct_s[1], f[1], plan[0], plan[1], limited ? "  !" : "");
	if (both->iterations[1] > 1) {
		char kpi[48];
		if (x->c->external)
			text_printf(kpi, sizeof(kpi), "iteration_s_a_draw_%u", p->draw);
		else
			text_printf(kpi, sizeof(kpi), "iteration_s_a_overlap_%.0f", 100 * p->overlap);
		aif_repeatability(x, AIF_INTERFERENCE, kpi, "s", both->iter_s[0], both->iterations[0]);
	}
	if (limited) {
		machine_limit(x->rn, row, "%s: machine-limited (%s): a slowdown may be the CPU's", name, aif_machine_reason(x));
		return row;
	}
	judge_row(x, p, name, f, plan);
	return row;
}

static void release_run(struct jobs_run *r)
{
	json_decref(r->links);
	r->links = NULL;
}

/* Row k's placement: B sharing k's overlap of its spine-crossing edges with A, steered; on a real
 * tier, draw k of B's source ports. 0, or -1 with why in err. */
static int place_row(struct aif_ctx *x, struct placement *p, unsigned ranks, unsigned k, char *err, size_t len)
{
	unsigned crossing = 0;

	if (x->c->external) {
		place_external(x, p, ranks, k);
		return 0;
	}
	/* B's spine-crossing edges: every edge of its ring, a host of each leaf in turn */
	if (place(x, p, ranks, 0, err, len) == 0)
		for (unsigned i = 0; i < p->job[1].n; i++)
			crossing += p->job[1].spine[i] >= 0;
	return place(x, p, ranks, (unsigned)lround(x->c->interference.overlaps[k] * crossing), err, len);
}

int aif_interference(struct aif_ctx *x)
{
	const struct aif_interference_cfg *ic = &x->c->interference;
	double xs[AIF_MAX_LIST], fa[AIF_MAX_LIST], fb[AIF_MAX_LIST], pa[AIF_MAX_LIST], pb[AIF_MAX_LIST];
	unsigned ranks, done = 0;
	const char *why = unplaceable(x, &ranks);
	struct jobs_run alone_a = { 0 };
	json_t *rows = json_array(), *g;
	char err[160];

	if (why) {
		aif_anomaly(x, AIF_INTERFERENCE, "not run: the placement needs %s", why);
		json_object_set_new(x->results, "interference", json_pack("{s:s,s:s,s:o}", "section", "10.3", "not_run", why,
									  "rows", rows));
		return 0;
	}
	printf("\n§10.3 two jobs sharing spine links: a ring AllReduce of %u bytes over %u hosts each, %u iterations\n"
	       "  %8s  %9s  %9s  %6s  %9s  %9s  %6s  %13s\n", ic->message_size, ranks, ic->iterations, "overlap", "A alone",
	       "A both", "A fac", "B alone", "B both", "B fac", "plan A, B");
	for (unsigned k = 0; k < ic->n_overlaps && !x->rn->stop; k++) {
		struct placement p;
		struct jobs_run b, both;

		if (place_row(x, &p, ranks, k, err, sizeof(err))) {
			aif_anomaly(x, AIF_INTERFERENCE, "overlap %.0f %%: not placed: %s", 100 * ic->overlaps[k], err);
			continue;
		}
		/* A's ports do not depend on the row: its run alone is the baseline of every row */
		if (!alone_a.ran && run_jobs(x, &p, 1, "job A alone", &alone_a))
			break;
		if (run_jobs(x, &p, 2, "job B alone", &b) || run_jobs(x, &p, 3, "both jobs", &both)) {
			json_array_append_new(rows, overlap_row(x, ic->overlaps[k], &p, &alone_a, &b, &both));
			release_run(&b);
			release_run(&both);
			continue;
		}
		if (x->c->external)
			p.overlap = measured_overlap(x, alone_a.links, b.links);
		json_array_append_new(rows, overlap_row(x, ic->overlaps[k], &p, &alone_a, &b, &both));
		release_run(&b);
		release_run(&both);
		xs[done] = 100 * p.overlap;
		fa[done] = factor(&alone_a, &both, 0);
		fb[done] = factor(&b, &both, 1);
		pa[done] = p.plan_min[0][0] / p.plan_min[0][1];
		pb[done++] = p.plan_min[1][0] / p.plan_min[1][1];
	}
	release_run(&alone_a);
	g = aif_graph(x, "interference.png", "lines", "§10.3 interference factor against the spine links shared",
		      "overlap (% of job B's spine hops on job A's links)", "JCT together / JCT alone");
	aif_series(g, "job A", xs, fa, done);
	aif_series(g, "job B", xs, fb, done);
	aif_series(g, "job A, the fluid plan", xs, pa, done);
	aif_series(g, "job B, the fluid plan", xs, pb, done);
	json_object_set_new(x->results, "interference",
			    json_pack("{s:s,s:s,s:i,s:i,s:i,s:s,s:o}", "section", "10.3", "collective", "allreduce (ring), per job",
				      "ranks_per_job", (int)ranks, "message_size", (int)ic->message_size, "iterations",
				      (int)ic->iterations, "overlap_from",
				      x->c->external ? "measured: B's spine-tier bytes on A's links (external.counters_command)"
						     : "the plan: each QP steered by its UDP source port", "rows", rows));
	return x->rn->stop ? -1 : 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The microburst suite, after RFC 8239's buffering and microburst tests: N senders each send
 * their share of a burst of B frames at once (flows with stop = { messages } and no rate, as
 * fast as the lcore goes: the lab's ingress has no link limit, so the burst lands in the switch
 * nearly at once) into one egress port. A binary search on B finds the largest burst absorbed
 * without loss, the largest without a CE mark and the largest without a PFC XOFF, each compared
 * with what the switch's settings say it should be (queue room / frame, kmin / frame, xoff_kb /
 * frame per ingress port). Results of a burst size are shared by the searches.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab.h"
#include "metrics.h"
#include "suite.h"
#include "trial.h"
#include "verdict.h"

#define CACHE 128
#define PROBE_BYTES 24

enum criterion { BY_LOSS, BY_ECN, BY_PFC, CRITERIA };

static const char *const criterion_names[CRITERIA] = { "loss", "ecn", "pfc" };

struct burst_result {
	unsigned burst;               /* frames asked for */
	unsigned attempts;
	bool ran;
	struct metrics m;
};

struct mb_ctx {
	struct runner *rn;
	const struct suite_cfg *s;
	struct flow_set fs;
	struct burst_result cache[CACHE];
	unsigned n_cache;
};

static void base_flows_burst(config_t *cfg, const struct microburst_cfg *c, unsigned burst, unsigned qps)
{
	config_setting_t *flows = config_lookup(cfg, "flows");
	static const char *const drop[] = { "rate_gbps", "rate_pps", "pattern", "stop", "cc", "dcqcn", "timely", "inject" };

	for (int i = 0; flows && i < config_setting_length(flows); i++) {
		config_setting_t *f = config_setting_get_elem(flows, (unsigned)i);
		if (!base_flow_selected(f, c->flows))
			continue;
		for (unsigned k = 0; k < sizeof(drop) / sizeof(drop[0]); k++)
			cfg_remove(f, drop[k]);
		/* one frame per message, so that the burst is counted in frames */
		cfg_set_int(f, "message_size", c->frame_size - ROCE_FRAME_OVERHEAD);
		cfg_set_int(f, "mtu", ib_mtu_for(c->frame_size - ROCE_FRAME_OVERHEAD));
		cfg_set_int(cfg_group(f, "stop"), "messages", burst / qps ? burst / qps : 1);
	}
}

static unsigned base_qps(config_t *cfg, const config_setting_t *names)
{
	config_setting_t *flows = config_lookup(cfg, "flows");
	unsigned n = 0;

	for (int i = 0; flows && i < config_setting_length(flows); i++)
		if (base_flow_selected(config_setting_get_elem(flows, (unsigned)i), names))
			n += (unsigned)cfg_number(config_setting_get_elem(flows, (unsigned)i), "count", 1);
	return n ? n : 1;
}

/* Senders h0.. at host_gbps, the receiver r behind the bottleneck; sender i sends burst / n
 * frames, the first burst % n one more. */
static int build(const struct suite_cfg *s, unsigned burst, struct lab *l, char *err, size_t errlen)
{
	const struct microburst_cfg *c = &s->microburst;
	unsigned n = s->lab.senders, payload = c->frame_size - ROCE_FRAME_OVERHEAD;
	char name[16], flow[16];

	if (s->base[0]) {
		memset(l, 0, sizeof(*l));
		if (base_load(s->base, &l->cfg, err, errlen))
			return -1;
		base_merge_switch(&l->cfg, s);
		base_flows_burst(&l->cfg, c, burst, base_qps(&l->cfg, c->flows));
		return 0;
	}
	lab_init(l, s);
	for (unsigned i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "h%u", i);
		lab_add_host(l, name, s->lab.host_gbps);
	}
	lab_add_host(l, "r", s->lab.link_gbps);
	for (unsigned i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "h%u", i);
		snprintf(flow, sizeof(flow), "f%u", i);
		lab_add_flow(l, &(struct lab_flow){ .name = flow, .from = name, .to = "r", .transport = "uc", .op = "send",
						    .message_size = payload, .ib_mtu = ib_mtu_for(payload),
						    .priority = c->priority, .stop_messages = burst / n + (i < burst % n),
						    .latency = payload >= PROBE_BYTES });
	}
	lab_finish(l, s);
	return 0;
}

static bool passes(const struct burst_result *r, enum criterion k)
{
	if (!r || !r->ran)
		return false;
	return k == BY_LOSS ? r->m.lost == 0 : k == BY_ECN ? r->m.ecn_ce == 0 && r->m.sw_ecn_marked == 0 : r->m.sw_xoff == 0;
}

static struct burst_result *cached(struct mb_ctx *x, unsigned burst)
{
	for (unsigned i = 0; i < x->n_cache; i++)
		if (x->cache[i].burst == burst)
			return &x->cache[i];
	return NULL;
}

/* The burst of `burst` frames, run once (or again, up to trial.retries, when it fails the
 * criterion being searched: a scheduling gap of the lab's lcore can lose frames). */
static const struct burst_result *at_burst(struct mb_ctx *x, unsigned burst, enum criterion k)
{
	struct burst_result *r = cached(x, burst);
	char err[1024];

	while (!x->rn->stop && (!r || (!passes(r, k) && r->attempts <= x->s->trial.retries))) {
		unsigned a = r ? r->attempts : 0;
		struct trial t;
		struct lab l;

		if (!r && x->n_cache < CACHE)
			r = &x->cache[x->n_cache++];
		else if (!r)
			r = &x->cache[CACHE - 1];
		*r = (struct burst_result){ .burst = burst, .attempts = a + 1 };
		trial_init(&t, "burst", "burst of %u frames%s", burst, a ? " (again)" : "");
		json_object_set_new(t.params, "burst_frames", json_integer(burst));
		json_object_set_new(t.params, "frame_size", json_integer(x->s->microburst.frame_size));
		json_object_set_new(t.params, "burst_bytes", json_integer((json_int_t)burst * x->s->microburst.frame_size));
		json_object_set_new(t.params, "attempt", json_integer(a + 1));
		if (build(x->s, burst, &l, err, sizeof(err))) {
			text_printf(x->rn->stop_reason, sizeof(x->rn->stop_reason), "%s", err);
			x->rn->stop = true;
			x->rn->exit_status = EXIT_CONFIG;
			trial_release(&t);
			break;
		}
		if (!trial_measure(x->rn, &l.cfg, &t, &x->fs, &r->m)) {
			r->ran = true;
			trial_verdict(x->rn, &t, passes(r, k) ? "pass" : "fail",
				      "sent %llu, lost %llu, CE %llu, XOFF %llu, deepest queue %llu B (searching: no %s)",
				      (unsigned long long)r->m.sent, (unsigned long long)r->m.lost,
				      (unsigned long long)r->m.ecn_ce, (unsigned long long)r->m.sw_xoff,
				      (unsigned long long)r->m.sw_max_queue, criterion_names[k]);
		}
		lab_free(&l);
		trial_release(&t);
	}
	return r;
}

struct found {
	unsigned burst;               /* the largest passing burst; 0: not even min_burst */
	bool at_max;                  /* max_burst passed: the real limit is beyond the search */
	unsigned trials;
	bool ran;                     /* the search's trials ran (else it has no verdict: they are errors) */
	const struct burst_result *r; /* its trial */
};

static struct found search(struct mb_ctx *x, enum criterion k)
{
	const struct microburst_cfg *c = &x->s->microburst;
	unsigned lo = c->min_burst, hi = c->max_burst, before = x->rn->n_trials;
	struct found f = { 0 };
	const struct burst_result *r = at_burst(x, hi, k);

	if (passes(r, k)) {
		f = (struct found){ .burst = hi, .at_max = true, .r = r };
	} else if (r = at_burst(x, lo, k), passes(r, k)) {
		f = (struct found){ .burst = lo, .r = r };
		while (hi - lo > c->resolution && x->rn->n_trials - before < c->max_trials && !x->rn->stop) {
			unsigned mid = lo + (hi - lo) / 2;
			r = at_burst(x, mid, k);
			if (passes(r, k))
				f = (struct found){ .burst = lo = mid, .r = r };
			else
				hi = mid;
		}
	}
	f.trials = x->rn->n_trials - before;
	f.ran = r && r->ran;
	return f;
}

/* What the switch's settings predict, in frames (0: nothing to predict), and why. */
static double expected(const struct suite_cfg *s, const struct switch_view *v, enum criterion k, unsigned senders,
		       char *why, size_t len)
{
	const struct microburst_cfg *c = &s->microburst;
	double frame = c->frame_size - 4; /* the switch counts frames without their FCS */
	unsigned p = c->priority;

	if (k == BY_LOSS && (v->lossless >> p & 1))
		return text_printf(why, len, "lossless priority: PFC, no loss"), 0;
	if (k == BY_LOSS)
		return text_printf(why, len, "queue room %.0f B / %.0f B", switch_queue_room(v), frame),
		       floor(switch_queue_room(v) / frame);
	if (k == BY_ECN && !v->ecn[p])
		return text_printf(why, len, "no ECN on class %u", p), 0;
	if (k == BY_ECN) /* marked at dequeue when what stays behind is above kmin */
		return text_printf(why, len, "kmin %.0f KB / %.0f B, + 1", v->kmin_kb[p], frame),
		       floor(v->kmin_kb[p] * 1024 / frame) + 1;
	if (!(v->lossless >> p & 1))
		return text_printf(why, len, "priority %u is lossy: no PFC", p), 0;
	/* XOFF at enqueue, when the ingress holds more than xoff: the frame that crosses it raises it */
	return text_printf(why, len, "xoff %.0f KB / %.0f B per ingress, x %u", v->xoff_kb, frame, senders),
	       senders * floor(v->xoff_kb * 1024 / frame);
}

/* The switch does what its settings say: the largest burst is the expected one, less the search's
 * resolution, more what drains while the burst arrives (below the machine check's share); with
 * nothing to expect (a lossless priority's loss, a class without ECN, a lossy one's PFC), no burst
 * up to max_burst meets the criterion. */
static void burst_verdict(struct runner *rn, const struct suite_cfg *s, enum criterion k, const struct found *f,
			  double exp, const char *why, const char *shown)
{
	const struct microburst_cfg *c = &s->microburst;
	double hi = floor(exp * (2 - BUSY_SHARE)) + 1;
	unsigned largest = f->burst ? f->burst : c->min_burst - 1; /* below min_burst: at most min - 1 */

	if (!exp)
		suite_verdict(rn, f->at_max, criterion_names[k], "largest burst %s frames, expected >= %u (%s)", shown,
			      c->max_burst, why);
	else
		/* beyond max_burst: right unless the settings said it would stop well before */
		suite_verdict(rn, f->at_max ? c->max_burst <= hi : largest + c->resolution >= exp && largest <= hi,
			      criterion_names[k],
			      "largest burst %s frames, expected %.0f (%s; allowed %.0f..%.0f)", shown, exp, why,
			      exp - c->resolution, hi);
}

/* The machine check of a burst: one that raised no XOFF (nothing held its senders) should all sit
 * in the queue at its peak, as it lands at once; frames that left before the last arrived mean its
 * senders were held up (the switch counts frames without their FCS). */
static struct machine burst_machine(const struct suite_cfg *s, const struct found *f)
{
	bool judged = f->r && f->burst && f->r->m.sw_xoff == 0;

	return machine_judge(judged ? (double)f->r->m.sw_max_queue : 0,
			     judged ? (double)f->burst * (s->microburst.frame_size - 4) : 0, judged ? &f->r->m : NULL);
}

static json_t *result_row(struct runner *rn, const struct suite_cfg *s, const struct switch_view *v, enum criterion k,
			  const struct found *f, unsigned senders)
{
	char why[128], shown[32];
	double exp = expected(s, v, k, senders, why, sizeof(why));
	unsigned frame = s->microburst.frame_size;
	struct machine busy = burst_machine(s, f);
	json_t *row;

	snprintf(shown, sizeof(shown), "%s%u", f->at_max ? ">= " : f->burst ? "" : "< ", f->burst ? f->burst
											      : s->microburst.min_burst);
	printf("  %-6s  %13s  %12llu  %12llu  %8.0f  %-40s  %6u\n", criterion_names[k], shown,
	       (unsigned long long)f->burst * frame, f->r ? (unsigned long long)f->r->m.sw_max_queue : 0ULL, exp, why,
	       f->trials);
	row = json_pack("{s:s,s:i,s:I,s:b,s:b,s:I,s:f,s:s,s:f,s:i}", "search", criterion_names[k], "burst_frames",
			f->burst, "burst_bytes", (json_int_t)f->burst * frame, "beyond_max", f->at_max, "below_min",
			!f->burst, "max_queue_bytes", f->r ? (json_int_t)f->r->m.sw_max_queue : 0, "expected_frames", exp,
			"expected_from", why, "max_latency_ns", f->r ? f->r->m.lat.max : 0.0, "trials", f->trials);
	machine_record(rn, row, &busy, "the %s search's burst of %u frames (its queue's peak)", criterion_names[k],
		       f->burst);
	if (f->ran)
		burst_verdict(rn, s, k, f, exp, why, shown);
	return row;
}

int suite_microburst(struct runner *rn, const struct suite_cfg *s, json_t *out)
{
	static struct mb_ctx x; /* the cache is large for the stack */
	const struct microburst_cfg *c = &s->microburst;
	const bool on[CRITERIA] = { c->by_loss, c->by_ecn, c->by_pfc };
	struct found f[CRITERIA] = { { 0 } };
	struct switch_view v;
	json_t *rows;
	struct lab l;
	char err[1024];
	unsigned senders = s->lab.senders;

	memset(&x, 0, sizeof(x));
	x.rn = rn;
	x.s = s;
	for (int i = 0; c->flows && i < config_setting_length(c->flows) && i < FLOW_SET_MAX; i++)
		x.fs.names[x.fs.n++] = config_setting_get_string_elem(c->flows, i);
	if (build(s, c->min_burst, &l, err, sizeof(err))) {
		text_printf(rn->stop_reason, sizeof(rn->stop_reason), "%s", err);
		rn->stop = true;
		rn->exit_status = EXIT_CONFIG;
		return -1;
	}
	switch_view_read(&l.cfg, &v);
	if (s->base[0])
		senders = base_qps(&l.cfg, c->flows);
	lab_free(&l);
	for (int k = 0; k < CRITERIA; k++)
		if (on[k] && !rn->stop)
			f[k] = search(&x, (enum criterion)k);
	if (runner_refused(rn))
		return -1;
	rows = json_array();
	printf("\nRFC 8239 microburst: %u sender%s x %u B frames, priority %u, into one port; burst = frames of all "
	       "senders at once\n"
	       "  %-6s  %13s  %12s  %12s  %8s  %-40s  %6s\n",
	       senders, senders == 1 ? "" : "s", c->frame_size, c->priority, "search", "largest burst", "burst bytes",
	       "max queue B", "expected", "expected from the switch's settings", "trials");
	for (int k = 0; k < CRITERIA; k++)
		if (on[k])
			json_array_append_new(rows, result_row(rn, s, &v, (enum criterion)k, &f[k], senders));
	json_object_set_new(out, "microburst", json_pack("{s:i,s:i,s:i,s:i,s:i,s:o}", "senders", senders, "frame_size",
							 c->frame_size, "priority", c->priority, "min_burst", c->min_burst,
							 "max_burst", c->max_burst, "results", rows));
	return rn->stop ? -1 : 0;
}

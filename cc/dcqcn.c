/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The DCQCN reaction point: see dcqcn.h for the two profiles. Notes on choices the sources leave
 * open (docs/cc.md repeats them):
 *
 * - NVIDIA α is not a 1 µs timer per QP (65,536 QPs would make 65 G timer events/s). The QP keeps
 *   α as of the start of an α period (alpha_period_ns) and whether a CNP arrived in that period;
 *   whenever α is needed the elapsed periods are applied exactly as the periodic update would
 *   have: the first with the CNP formula when a CNP arrived in it, the rest decay only. k decays
 *   are f^k(α), f(a) = G·a/1024, taken from binary-lifting tables in O(log k).
 * - Period boundaries belong to the period they start: an α update or the end of a decrease
 *   period at time t runs before a CNP at the same time t, and α "at t" includes the update at t
 *   (a cut at the end of a decrease period uses it).
 * - The first CNP of an NVIDIA QP starts α (initial_alpha_value) and the periods but does not
 *   mark them, as the firmware model [ISEKAI] does (it clears both "CNP arrived" bits on the first
 *   CNP): it causes no cut and no CNP-style α update; cuts start from the second CNP.
 * - The QP's own timers are handled in time order whatever order the caller delivers events in:
 *   an event at time t first runs the QP's timers due before t (at t: α, then increase, then
 *   decrease, then the CNP or bytes), so an increase due at the same time as a cut comes first
 *   (with a timer-wheel the arming order gives the same).
 * - R_C = (R_C + R_T)/2 rounds toward R_T, so that R_C reaches R_T (rounding down would leave it
 *   1 kb/s short forever); when R_C and R_T are both at the maximum the increase timer stops
 *   (nothing left to increase; the next cut starts it again).
 * - Increase stages use the counts before the event (as [ISEKAI]), except the paper profile's
 *   ns3_stages, which counts the event first (as the authors' ns-3). With the byte counter off
 *   (threshold 0) the timer count alone sets the stage, so hyper increase stays reachable: it
 *   stands for both counts (with ns3_stages, the byte count as one event behind the timer's, as
 *   if the two counters took turns: one additive step, then hyper).
 */
#include "dcqcn.h"

#include <stddef.h>
#include <string.h>

#define Q20 (UINT32_C(1) << 20)
#define NV_ONE 1024u          /* NVIDIA α: 1024 = 1.0 */
#define NV_ALPHA_MAX 1023u
#define DECAY_LEVELS 10       /* f^(2^j), j < 10: enough for k < 1024 */
#define DECAY_CACHE 2         /* G values kept per thread */

/* Order of events at the same time (see the top comment) */
enum { RANK_ALPHA, RANK_INC, RANK_DEC, RANK_EXTERNAL };

static inline uint64_t us_to_ns(uint32_t us) { return (uint64_t)(us ? us : 1) * 1000; }
static inline uint64_t mbps_to_kbps(uint64_t mbps) { return mbps * 1000; }
static inline uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint32_t nv_g(const struct dcqcn_params *p) { return p->dce_tcp_g < NV_ONE ? p->dce_tcp_g : NV_ALPHA_MAX; }
static inline bool is_nvidia(const struct dcqcn_qp *q) { return q->p->profile == DCQCN_NVIDIA; }

/* A fraction in [0, 1] as Q20, rounded. */
static uint32_t to_q20(double x)
{
	if (!(x > 0))
		return 0;
	if (x >= 1)
		return Q20;
	return (uint32_t)(x * Q20 + 0.5);
}

void dcqcn_params_default(struct dcqcn_params *p, enum dcqcn_profile profile)
{
	memset(p, 0, sizeof(*p));
	p->profile = profile;
	p->dce_tcp_g = 1019;
	p->dce_tcp_rtt = 1;
	p->initial_alpha_value = 1023;
	p->rate_to_set_on_first_cnp = 0;
	p->rpg_min_dec_fac = 50;
	p->rpg_min_rate = 1;
	p->rpg_gd = 11;
	p->rate_reduce_monitor_period = 4;
	p->clamp_tgt_rate = false;
	p->clamp_tgt_rate_after_time_inc = true;
	p->rpg_time_reset = 300;
	p->rpg_byte_reset = 32767;
	p->rpg_threshold = 1;
	p->rpg_max_rate = 0;
	p->rpg_ai_rate = 5;
	p->rpg_hai_rate = 50;
	p->g = 1.0 / 256;
	p->k_us = 55;
	p->t_us = 55;
	p->b_bytes = 10000000;
	p->f = 5;
	p->r_ai_mbps = 40;
	p->r_hai_mbps = 200;
	p->min_rate_mbps = 100;
	p->initial_alpha = 1.0;
	p->alpha_before_cut = false;
	p->ns3_stages = true;
	p->hyper_linear = false;
}

#define BAD(name, text)                                                                            \
	do {                                                                                       \
		if (why)                                                                           \
			*why = (text);                                                             \
		return (name);                                                                     \
	} while (0)

static const char *check_nvidia(const struct dcqcn_params *p, const char **why)
{
	if (p->dce_tcp_g > 1023)
		BAD("dce_tcp_g", "0..1023");
	if (p->dce_tcp_rtt < 1 || p->dce_tcp_rtt > 131071)
		BAD("dce_tcp_rtt", "1..131071");
	if (p->initial_alpha_value > 1023)
		BAD("initial_alpha_value", "0..1023");
	if (p->rpg_min_dec_fac > 100)
		BAD("rpg_min_dec_fac", "0..100");
	if (p->rpg_gd < 1 || p->rpg_gd > 31)
		BAD("rpg_gd", "1..31");
	if (p->rate_reduce_monitor_period < 1)
		BAD("rate_reduce_monitor_period", ">= 1");
	if (p->rpg_time_reset < 1)
		BAD("rpg_time_reset", ">= 1");
	if (p->rpg_threshold < 1)
		BAD("rpg_threshold", ">= 1");
	if (p->rpg_max_rate && p->rpg_min_rate > p->rpg_max_rate)
		BAD("rpg_min_rate", "<= rpg_max_rate (when rpg_max_rate is set)");
	return NULL;
}

static const char *check_paper(const struct dcqcn_params *p, const char **why)
{
	if (!(p->g > 0 && p->g <= 1))
		BAD("g", "(0, 1]");
	if (p->k_us < 1)
		BAD("k_us", ">= 1");
	if (p->t_us < 1)
		BAD("t_us", ">= 1");
	if (p->f < 1)
		BAD("f", ">= 1");
	if (!(p->initial_alpha >= 0 && p->initial_alpha <= 1))
		BAD("initial_alpha", "[0, 1]");
	if (p->ns3_stages && p->hyper_linear)
		BAD("hyper_linear", "false with ns3_stages (whose hyper step grows already); "
				    "set ns3_stages = false for R_HAI·(min(T, BC) − F)");
	return NULL;
}

const char *dcqcn_params_check(const struct dcqcn_params *p, const char **why)
{
	if (p->profile == DCQCN_NVIDIA)
		return check_nvidia(p, why);
	if (p->profile == DCQCN_PAPER)
		return check_paper(p, why);
	BAD("profile", "nvidia or paper");
}

#undef BAD

uint64_t dcqcn_max_kbps(const struct dcqcn_qp *q)
{
	uint64_t m = q->line_kbps;

	if (q->p->rpg_max_rate)
		m = min_u64(m, mbps_to_kbps(q->p->rpg_max_rate));
	return m;
}

static uint64_t min_kbps(const struct dcqcn_qp *q)
{
	uint64_t m = mbps_to_kbps(is_nvidia(q) ? q->p->rpg_min_rate : q->p->min_rate_mbps);

	return min_u64(m, dcqcn_max_kbps(q));
}

static uint64_t inc_period_ns(const struct dcqcn_qp *q)
{
	return us_to_ns(is_nvidia(q) ? q->p->rpg_time_reset : q->p->t_us);
}

void dcqcn_init(struct dcqcn_qp *q, const struct dcqcn_params *p, uint64_t line_kbps, uint64_t now_ns)
{
	memset(q, 0, sizeof(*q));
	q->p = p;
	q->line_kbps = line_kbps;
	q->rc_kbps = q->rt_kbps = dcqcn_max_kbps(q);
	if (p->profile == DCQCN_NVIDIA)
		q->alpha = p->initial_alpha_value < NV_ALPHA_MAX ? p->initial_alpha_value : NV_ALPHA_MAX;
	else
		q->alpha = to_q20(p->initial_alpha);
	q->alpha_period_ns = now_ns;
	q->first_cnp_ns = now_ns;
	tw_timer_init(&q->t_alpha, DCQCN_TIMER_ALPHA);
	tw_timer_init(&q->t_dec, DCQCN_TIMER_DECREASE);
	tw_timer_init(&q->t_inc, DCQCN_TIMER_INCREASE);
}

/* ---- NVIDIA α: exact lazy periodic update ---- */

/* f^(2^j)(a) for one G. Per thread (one wheel, one thread), so no locking; a couple of G values
 * are kept so that QPs with different parameters do not rebuild the table on every use. */
struct decay_table {
	bool valid;
	uint32_t g;
	uint16_t f[DECAY_LEVELS][NV_ONE];
};
static _Thread_local struct decay_table decay_cache[DECAY_CACHE];
static _Thread_local unsigned decay_victim;

static const struct decay_table *decay_table(uint32_t g)
{
	struct decay_table *t;

	for (unsigned i = 0; i < DECAY_CACHE; i++)
		if (decay_cache[i].valid && decay_cache[i].g == g)
			return &decay_cache[i];
	t = &decay_cache[decay_victim];
	decay_victim = (decay_victim + 1) % DECAY_CACHE;
	for (uint32_t a = 0; a < NV_ONE; a++)
		t->f[0][a] = (uint16_t)(g * a / NV_ONE);
	for (unsigned j = 1; j < DECAY_LEVELS; j++)
		for (uint32_t a = 0; a < NV_ONE; a++)
			t->f[j][a] = t->f[j - 1][t->f[j - 1][a]];
	t->g = g;
	t->valid = true;
	return t;
}

/* f^k(a), f(a) = G·a/1024. G < 1024 makes f(a) <= a − 1 for a > 0, so k >= a gives 0 and the
 * remaining k < 1024 needs at most 10 table steps. */
static uint32_t nv_decay(uint32_t g, uint32_t a, uint64_t k)
{
	const struct decay_table *t;

	if (k >= a)
		return 0;
	t = decay_table(g);
	for (unsigned j = 0; k; j++, k >>= 1)
		if (k & 1)
			a = t->f[j][a];
	return a;
}

/* One period's update when a CNP arrived in it */
static uint32_t nv_alpha_cnp(uint32_t g, uint32_t a)
{
	uint32_t v = g * a / NV_ONE + NV_ONE - g;

	return v < NV_ALPHA_MAX ? v : NV_ALPHA_MAX;
}

/* α and its period start as of `now` (all updates at boundaries <= now applied), not stored. */
static uint32_t nv_alpha_at(const struct dcqcn_qp *q, uint64_t now, uint64_t *period_start)
{
	uint64_t period = us_to_ns(q->p->dce_tcp_rtt), k;
	uint32_t g = nv_g(q->p), a = q->alpha;

	*period_start = q->alpha_period_ns;
	if (!q->seen_cnp || now < q->alpha_period_ns + period)
		return a;
	k = (now - q->alpha_period_ns) / period;
	a = q->cnp_in_alpha_period ? nv_alpha_cnp(g, a) : g * a / NV_ONE;
	*period_start += k * period;
	return nv_decay(g, a, k - 1);
}

static void nv_alpha_catch_up(struct dcqcn_qp *q, uint64_t now)
{
	uint64_t start;
	uint32_t a = nv_alpha_at(q, now, &start);

	if (start == q->alpha_period_ns)
		return;
	q->alpha = a;
	q->alpha_period_ns = start;
	q->cnp_in_alpha_period = false;
}

uint32_t dcqcn_alpha(struct dcqcn_qp *q, uint64_t now_ns)
{
	uint64_t start;

	if (!is_nvidia(q))
		return q->alpha;
	/* Stored only up to a cut still pending before now (the wheel not advanced yet), so that
	 * the cut still sees α as of its own time. */
	if (tw_armed(&q->t_dec) && q->t_dec.due_ns < now_ns)
		nv_alpha_catch_up(q, q->t_dec.due_ns);
	else
		nv_alpha_catch_up(q, now_ns);
	return nv_alpha_at(q, now_ns, &start);
}

double dcqcn_alpha_fraction(const struct dcqcn_qp *q, uint32_t alpha)
{
	return is_nvidia(q) ? alpha / (double)NV_ONE : alpha / (double)Q20;
}

/* ---- increase ---- */

static bool at_max(const struct dcqcn_qp *q)
{
	uint64_t m = dcqcn_max_kbps(q);

	return q->rc_kbps == m && q->rt_kbps == m;
}

/* R_C halfway to R_T, rounded toward R_T (see the top comment) */
static uint64_t halfway(uint64_t rc, uint64_t rt)
{
	return rc <= rt ? rt - (rt - rc) / 2 : rt + (rc - rt) / 2;
}

static inline bool ns3_stages(const struct dcqcn_qp *q) { return !is_nvidia(q) && q->p->ns3_stages; }
static inline uint32_t count_up(uint32_t n) { return n + (n != UINT32_MAX); }

/* The stage and the R_T step of an increase event whose stage test sees the counts t (timer) and b
 * (byte counter) (§1.2): the counts before the event, or with ns3_stages its own one incremented.
 * The forms differ only in hyper: min >= F and R_HAI·(min − F + 1) with ns3_stages
 * (rpr_active_select, rpr_hyper_increase), else min > F and R_HAI (times min − F: hyper_linear). */
static enum dcqcn_stage stage_of(const struct dcqcn_qp *q, uint32_t t, uint32_t b, uint64_t *step)
{
	const struct dcqcn_params *p = q->p;
	uint32_t lo = t < b ? t : b, hi = t < b ? b : t;
	uint32_t th = is_nvidia(q) ? p->rpg_threshold : p->f;
	bool ns3 = ns3_stages(q);

	if (ns3 ? lo >= th : lo > th) {
		uint64_t k = ns3 ? lo - th + 1 : p->hyper_linear ? lo - th : 1;

		*step = is_nvidia(q) ? mbps_to_kbps(p->rpg_hai_rate) : mbps_to_kbps(p->r_hai_mbps) * k;
		return DCQCN_STAGE_HYPER;
	}
	if (hi >= th) {
		*step = mbps_to_kbps(is_nvidia(q) ? p->rpg_ai_rate : p->r_ai_mbps);
		return DCQCN_STAGE_ADDITIVE;
	}
	*step = 0;
	return DCQCN_STAGE_FAST;
}

static void count_stage(struct dcqcn_qp *q, enum dcqcn_stage stage, uint64_t n)
{
	q->stage = (uint8_t)stage;
	if (stage == DCQCN_STAGE_HYPER)
		q->c.hyper += n;
	else if (stage == DCQCN_STAGE_ADDITIVE)
		q->c.additive += n;
	else
		q->c.fast += n;
}

/* A timer increase event whose timer count before it is t (and the byte count as it is). */
static enum dcqcn_stage timer_stage(const struct dcqcn_qp *q, uint32_t t, uint64_t *step)
{
	uint32_t b = dcqcn_byte_threshold(q) ? q->bc_cnt : t;

	return stage_of(q, ns3_stages(q) ? count_up(t) : t, b, step);
}

/* A byte-counter increase event. In the authors' code a byte event after an additive one is
 * additive whatever the counts (rpr_active_byte calls rpr_active_increase; only the timer's
 * rpr_active_time goes through rpr_active_select to hyper). */
static enum dcqcn_stage byte_stage(const struct dcqcn_qp *q, uint64_t *step)
{
	if (!ns3_stages(q))
		return stage_of(q, q->t_cnt, q->bc_cnt, step);
	if (q->stage == DCQCN_STAGE_ADDITIVE) {
		*step = mbps_to_kbps(q->p->r_ai_mbps);
		return DCQCN_STAGE_ADDITIVE;
	}
	return stage_of(q, q->t_cnt, count_up(q->bc_cnt), step);
}

/* The R_T step of an increase event (its stage counted). */
static uint64_t increase_step(struct dcqcn_qp *q, bool by_timer)
{
	uint64_t step;

	count_stage(q, by_timer ? timer_stage(q, q->t_cnt, &step) : byte_stage(q, &step), 1);
	return step;
}

static void increase(struct dcqcn_qp *q, bool by_timer)
{
	uint64_t step = increase_step(q, by_timer);

	q->rt_kbps = min_u64(q->rt_kbps + step, dcqcn_max_kbps(q));
	q->rc_kbps = halfway(q->rc_kbps, q->rt_kbps);
	if (by_timer) {
		q->c.timer_events++;
		q->t_cnt += q->t_cnt != UINT32_MAX;
	} else {
		q->c.byte_events++;
		q->bc_cnt += q->bc_cnt != UINT32_MAX;
	}
}

static void on_increase_timer(struct dcqcn_qp *q, struct timer_wheel *w, uint64_t due)
{
	increase(q, true);
	if (!at_max(q))
		tw_arm(w, &q->t_inc, due + inc_period_ns(q));
}

/* ---- decrease ---- */

/* What every cut shares: the increase state starts over, the increase timer restarts. */
static void after_cut(struct dcqcn_qp *q, struct timer_wheel *w, uint64_t now)
{
	q->t_cnt = q->bc_cnt = 0;
	q->bytes = 0;
	q->stage = DCQCN_STAGE_NONE;
	q->c.cuts++;
	tw_arm(w, &q->t_inc, now + inc_period_ns(q));
}

static void floor_rate(struct dcqcn_qp *q)
{
	uint64_t m = min_kbps(q);

	if (q->rc_kbps < m)
		q->rc_kbps = m;
}

/* NVIDIA: the end of a decrease period that saw a CNP (§1.3 step 3) */
static void nv_cut(struct dcqcn_qp *q, struct timer_wheel *w, uint64_t due)
{
	const struct dcqcn_params *p = q->p;
	uint64_t rc = q->rc_kbps, by_alpha, by_fac;

	if (!q->cnp_in_dec_period)
		return;
	q->cnp_in_dec_period = false;
	nv_alpha_catch_up(q, due);
	if (p->clamp_tgt_rate || q->bc_cnt > 0 || (p->clamp_tgt_rate_after_time_inc && q->t_cnt > 0))
		q->rt_kbps = rc;
	by_alpha = rc * q->alpha >> (p->rpg_gd < 64 ? p->rpg_gd : 63);
	by_fac = rc * (100 - (p->rpg_min_dec_fac < 100 ? p->rpg_min_dec_fac : 100)) / 100;
	q->rc_kbps = rc - min_u64(by_alpha, by_fac);
	floor_rate(q);
	after_cut(q, w, due);
}

/* The end of the decrease period (aligned to the first CNP) that contains now */
static uint64_t nv_dec_period_end(const struct dcqcn_qp *q, uint64_t now)
{
	uint64_t period = us_to_ns(q->p->rate_reduce_monitor_period);
	uint64_t since = now > q->first_cnp_ns ? now - q->first_cnp_ns : 0;

	return q->first_cnp_ns + (since / period + 1) * period;
}

/* §1.3 step 1: α and the periods start here; the rate changes only with rate_to_set_on_first_cnp. */
static void nv_first_cnp(struct dcqcn_qp *q, struct timer_wheel *w, uint64_t now)
{
	const struct dcqcn_params *p = q->p;

	q->seen_cnp = true;
	q->first_cnp_ns = now;
	q->alpha_period_ns = now;
	q->alpha = p->initial_alpha_value < NV_ALPHA_MAX ? p->initial_alpha_value : NV_ALPHA_MAX;
	q->cnp_in_alpha_period = false;
	q->cnp_in_dec_period = false;
	q->t_cnt = q->bc_cnt = 0;
	q->bytes = 0;
	if (p->rate_to_set_on_first_cnp) {
		q->rc_kbps = q->rt_kbps = min_u64(mbps_to_kbps(p->rate_to_set_on_first_cnp), dcqcn_max_kbps(q));
		floor_rate(q);
	}
	if (!at_max(q))
		tw_arm(w, &q->t_inc, now + inc_period_ns(q));
}

static void nv_cnp(struct dcqcn_qp *q, struct timer_wheel *w, uint64_t now)
{
	if (!q->seen_cnp) {
		nv_first_cnp(q, w, now);
		return;
	}
	nv_alpha_catch_up(q, now);
	q->cnp_in_alpha_period = true;
	if (!q->cnp_in_dec_period) {
		q->cnp_in_dec_period = true;
		tw_arm(w, &q->t_dec, nv_dec_period_end(q, now));
	}
}

/* ---- paper profile ---- */

static void paper_alpha_cnp(struct dcqcn_qp *q)
{
	uint64_t g = to_q20(q->p->g);

	q->alpha = (uint32_t)(((uint64_t)q->alpha * (Q20 - g) >> 20) + g);
}

/* K µs without a CNP: α = (1 − g)·α, until α reaches 0 (then the timer stops) */
static void paper_alpha_timer(struct dcqcn_qp *q, struct timer_wheel *w, uint64_t due)
{
	uint64_t g = to_q20(q->p->g);

	q->alpha = (uint32_t)((uint64_t)q->alpha * (Q20 - g) >> 20);
	if (q->alpha)
		tw_arm(w, &q->t_alpha, due + us_to_ns(q->p->k_us));
}

/* Every CNP: R_T = R_C, R_C = R_C·(1 − α/2), α = (1 − g)·α + g in the configured order. */
static void paper_cnp(struct dcqcn_qp *q, struct timer_wheel *w, uint64_t now)
{
	if (!q->seen_cnp) {
		q->seen_cnp = true;
		q->bytes = 0;
	}
	if (q->p->alpha_before_cut)
		paper_alpha_cnp(q);
	q->rt_kbps = q->rc_kbps;
	q->rc_kbps -= q->rc_kbps * q->alpha >> 21;
	floor_rate(q);
	if (!q->p->alpha_before_cut)
		paper_alpha_cnp(q);
	after_cut(q, w, now);
	tw_arm(w, &q->t_alpha, now + us_to_ns(q->p->k_us));
}

/* ---- events ---- */

static unsigned timer_rank(const struct dcqcn_qp *q, const struct tw_timer *t)
{
	return t == &q->t_alpha ? RANK_ALPHA : t == &q->t_inc ? RANK_INC : RANK_DEC;
}

static void fire(struct dcqcn_qp *q, struct timer_wheel *w, struct tw_timer *t, uint64_t due)
{
	if (t == &q->t_alpha)
		paper_alpha_timer(q, w, due);
	else if (t == &q->t_inc)
		on_increase_timer(q, w, due);
	else if (t == &q->t_dec)
		nv_cut(q, w, due);
}

/* The QP's armed timer that comes first before an event of `rank` at time x, or NULL */
static struct tw_timer *overdue(struct dcqcn_qp *q, uint64_t x, unsigned rank)
{
	struct tw_timer *by_rank[] = { &q->t_alpha, &q->t_inc, &q->t_dec }, *best = NULL;

	for (unsigned r = 0; r < 3; r++) {
		struct tw_timer *t = by_rank[r];

		if (!tw_armed(t) || t->due_ns > x || (t->due_ns == x && r >= rank))
			continue;
		if (!best || t->due_ns < best->due_ns) /* ties keep the lower rank */
			best = t;
	}
	return best;
}

/* Paper profile, α's timer events due up to x (see paper_catch_up). Each multiplies α by 1 - g
 * (Q20, rounded down) until α is 0; once α·g <= 1.0 in Q20 each takes exactly 1 off
 * (α − ⌈α·g/2^20⌉), so that stretch is a subtraction. */
static void paper_alpha_until(struct dcqcn_qp *q, struct timer_wheel *w, uint64_t x)
{
	struct tw_timer *t = &q->t_alpha;
	uint64_t k = us_to_ns(q->p->k_us), due = t->due_ns, n, a = q->alpha, g = to_q20(q->p->g);

	if (!tw_armed(t) || due > x)
		return;
	n = (x - due) / k + 1; /* events at due, due + k, ... up to x */
	tw_cancel(w, t);
	if (g > 0)
		for (uint64_t i = 0; i < n && a; i++) {
			if (a * g <= Q20) {
				a = a > n - i ? a - (n - i) : 0;
				break;
			}
			a = a * (Q20 - g) >> 20;
		}
	q->alpha = (uint32_t)a;
	if (a) /* the event after the last one run (an event leaving α at 0 arms nothing) */
		tw_arm(w, t, due + n * k);
}

/* Up to `left` timer increase events at once, when they can be told in closed form: the stage
 * and step s are the same for all of them, R_T stays at or below the maximum, and the gap
 * d = R_T - R_C is at its fixed point (d' = ⌊(d + s)/2⌋ keeps s and s - 1 where they are, so
 * each event adds s to both rates). Returns how many ran (0: run the next one alone; after a cut
 * the gap settles within a few dozen events). */
static uint64_t timer_increases_at_once(struct dcqcn_qp *q, uint64_t left)
{
	uint64_t s, s_end, m, d = q->rt_kbps - q->rc_kbps, max = dcqcn_max_kbps(q);
	enum dcqcn_stage st;

	if (left < 2 || q->rc_kbps > q->rt_kbps || q->rt_kbps >= max)
		return 0;
	st = timer_stage(q, q->t_cnt, &s);
	if (s == 0 || (d != s && d != s - 1))
		return 0;
	m = (max - q->rt_kbps) / s;
	if (m > left)
		m = left;
	if (m < 2 || q->t_cnt > UINT32_MAX - m)
		return 0;
	/* stages only move up as t grows, and a growing hyper step only grows: equal ends, equal all */
	if (timer_stage(q, (uint32_t)(q->t_cnt + m - 1), &s_end) != st || s_end != s)
		return 0;
	q->rt_kbps += m * s;
	q->rc_kbps += m * s;
	q->t_cnt += (uint32_t)m;
	q->c.timer_events += m;
	count_stage(q, st, m);
	return m;
}

/* Paper profile, the increase timer's events due up to x, until the rate is at its maximum. */
static void paper_increase_until(struct dcqcn_qp *q, struct timer_wheel *w, uint64_t x)
{
	struct tw_timer *t = &q->t_inc;
	uint64_t period = inc_period_ns(q), due = t->due_ns;

	if (!tw_armed(t) || due > x)
		return;
	tw_cancel(w, t);
	for (;;) {
		uint64_t m = timer_increases_at_once(q, (x - due) / period + 1);
		if (m)
			due += (m - 1) * period;
		else
			increase(q, true);
		if (at_max(q))
			return;
		due += period;
		if (due > x) {
			tw_arm(w, t, due);
			return;
		}
	}
}

/* The paper profile's two timers touch disjoint state (α; the rates and increase counts), so
 * between external events the order in which their events run does not matter: each timer's
 * run in a loop of its own gives what running them in time order gives, without choosing the
 * next timer per event. A QP idle for a second (thousands of events) catches up in a few µs. */
static bool paper_catch_up(struct dcqcn_qp *q, struct timer_wheel *w, uint64_t x)
{
	if (is_nvidia(q) || tw_armed(&q->t_dec)) /* t_dec: left by a change of profile at run time */
		return false;
	paper_alpha_until(q, w, x);
	paper_increase_until(q, w, x);
	return true;
}

/* Runs the QP's timers that come before the event (the wheel may not have reached them yet). */
static void catch_up(struct dcqcn_qp *q, struct timer_wheel *w, uint64_t x, unsigned rank)
{
	struct tw_timer *t;

	if (rank == RANK_EXTERNAL && paper_catch_up(q, w, x))
		return;

	while ((t = overdue(q, x, rank))) {
		uint64_t due = t->due_ns;

		tw_cancel(w, t);
		fire(q, w, t, due);
	}
}

bool dcqcn_on_cnp(struct dcqcn_qp *q, struct timer_wheel *w, uint64_t now_ns)
{
	uint64_t rc = q->rc_kbps;

	q->c.cnps++;
	catch_up(q, w, now_ns, RANK_EXTERNAL);
	if (is_nvidia(q))
		nv_cnp(q, w, now_ns);
	else
		paper_cnp(q, w, now_ns);
	return q->rc_kbps != rc;
}

bool dcqcn_byte_event(struct dcqcn_qp *q, struct timer_wheel *w, uint64_t now_ns)
{
	uint64_t rc = q->rc_kbps, th = dcqcn_byte_threshold(q);

	if (th == 0 || !q->seen_cnp)
		return false;
	catch_up(q, w, now_ns, RANK_EXTERNAL); /* a cut there restarts the byte count */
	while (q->bytes >= th) {
		q->bytes -= th;
		increase(q, false);
	}
	if (at_max(q))
		tw_cancel(w, &q->t_inc);
	return q->rc_kbps != rc;
}

bool dcqcn_catch_up(struct dcqcn_qp *q, struct timer_wheel *w, uint64_t now_ns)
{
	uint64_t rc = q->rc_kbps;

	catch_up(q, w, now_ns, RANK_EXTERNAL);
	return q->rc_kbps != rc;
}

uint64_t dcqcn_next_due(const struct dcqcn_qp *q)
{
	const struct tw_timer *ts[] = { &q->t_alpha, &q->t_inc, &q->t_dec };
	uint64_t due = UINT64_MAX;

	for (unsigned i = 0; i < 3; i++)
		if (tw_armed(ts[i]) && ts[i]->due_ns < due)
			due = ts[i]->due_ns;
	return due;
}

bool dcqcn_on_timer(struct dcqcn_qp *q, struct timer_wheel *w, struct tw_timer *t, uint64_t due_ns)
{
	uint64_t rc = q->rc_kbps;

	if (t != &q->t_alpha && t != &q->t_inc && t != &q->t_dec)
		return false;
	catch_up(q, w, due_ns, timer_rank(q, t));
	/* An earlier event re-armed t (a cut restarts the increase timer): this firing is stale. */
	if (!tw_armed(t))
		fire(q, w, t, due_ns);
	return q->rc_kbps != rc;
}

void dcqcn_stop(struct dcqcn_qp *q, struct timer_wheel *w)
{
	tw_cancel(w, &q->t_alpha);
	tw_cancel(w, &q->t_dec);
	tw_cancel(w, &q->t_inc);
}

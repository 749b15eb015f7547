/* SPDX-License-Identifier: BSD-3-Clause
 *
 * TIMELY: see timely.h. Additive steps are integer kb/s; only the multiplicative decreases go
 * through doubles (rounded to the nearest kb/s). The hyper-increase run counts samples that took
 * the "gradient <= 0" branch; a decrease (either decrease branch) ends it, a sample below t_low
 * neither extends nor ends it (it is not a gradient decision). The N·δ step applies once the run
 * already holds hai_after samples (the (hai_after + 1)-th one on), as in HPCC's m_incStage.
 */
#include "timely.h"

#include <stddef.h>

void timely_params_default(struct timely_params *p)
{
	p->alpha = 0.875;
	p->beta = 0.8;
	p->t_low_us = 50;
	p->t_high_us = 500;
	p->min_rtt_us = 20;
	p->delta_mbps = 10;
	p->hai_after = 5;
	p->hai_n = 5;
	p->min_rate_mbps = 10;
	p->max_rate_mbps = 0;
}

#define BAD(name, text)                                                                            \
	do {                                                                                       \
		if (why)                                                                           \
			*why = (text);                                                             \
		return (name);                                                                     \
	} while (0)

const char *timely_params_check(const struct timely_params *p, const char **why)
{
	if (!(p->alpha >= 0 && p->alpha <= 1))
		BAD("alpha", "[0, 1]");
	if (!(p->beta >= 0 && p->beta <= 1))
		BAD("beta", "[0, 1]");
	if (p->t_high_us < 1)
		BAD("t_high_us", ">= 1");
	if (p->t_low_us > p->t_high_us)
		BAD("t_low_us", "<= t_high_us");
	if (p->min_rtt_us < 1)
		BAD("min_rtt_us", ">= 1");
	if (p->hai_after < 1)
		BAD("hai_after", ">= 1");
	if (p->hai_n < 1)
		BAD("hai_n", ">= 1");
	if (p->max_rate_mbps && p->min_rate_mbps > p->max_rate_mbps)
		BAD("min_rate_mbps", "<= max_rate_mbps (when max_rate_mbps is set)");
	return NULL;
}

#undef BAD

static uint64_t max_kbps(const struct timely_qp *q)
{
	uint64_t m = (uint64_t)q->p->max_rate_mbps * 1000;

	return m && m < q->line_kbps ? m : q->line_kbps;
}

/* [min_rate, max]; a min above the max gives the max */
static uint64_t clamp_rate(const struct timely_qp *q, uint64_t r)
{
	uint64_t lo = (uint64_t)q->p->min_rate_mbps * 1000, hi = max_kbps(q);

	if (r < lo)
		r = lo;
	return r < hi ? r : hi;
}

void timely_init(struct timely_qp *q, const struct timely_params *p, uint64_t line_kbps, uint64_t start_kbps)
{
	*q = (struct timely_qp){.p = p, .line_kbps = line_kbps};
	q->rate_kbps = clamp_rate(q, start_kbps);
}

/* rate·factor, factor clamped at 0 (β·gradient > 1 would go negative), to the nearest kb/s */
static uint64_t scale(uint64_t rate, double factor)
{
	if (!(factor > 0))
		return 0;
	return (uint64_t)((double)rate * factor + 0.5);
}

/* The rate after one sample (prev_rtt and rtt_diff already updated) */
static uint64_t next_rate(struct timely_qp *q, uint64_t rtt_ns)
{
	const struct timely_params *p = q->p;
	uint64_t delta = (uint64_t)p->delta_mbps * 1000, n = 1;

	if (rtt_ns < (uint64_t)p->t_low_us * 1000) {
		q->c.below_t_low++;
		q->c.increases++;
		return q->rate_kbps + delta;
	}
	if (rtt_ns > (uint64_t)p->t_high_us * 1000) {
		q->c.above_t_high++;
		q->c.decreases++;
		q->neg_run = 0;
		return scale(q->rate_kbps, 1 - p->beta * (1 - (double)p->t_high_us * 1000 / (double)rtt_ns));
	}
	if (q->gradient <= 0) {
		if (q->neg_run >= p->hai_after) {
			n = p->hai_n;
			q->c.hyper++;
		}
		q->neg_run += q->neg_run != UINT32_MAX;
		q->c.increases++;
		return q->rate_kbps + n * delta;
	}
	q->c.decreases++;
	q->neg_run = 0;
	return scale(q->rate_kbps, 1 - p->beta * q->gradient);
}

bool timely_on_rtt(struct timely_qp *q, uint64_t rtt_ns)
{
	const struct timely_params *p = q->p;
	uint64_t old = q->rate_kbps;
	double new_diff;

	q->c.samples++;
	if (q->prev_rtt_ns == 0) { /* nothing to compare with yet */
		q->prev_rtt_ns = rtt_ns;
		return false;
	}
	new_diff = (double)rtt_ns - (double)q->prev_rtt_ns;
	q->prev_rtt_ns = rtt_ns;
	q->rtt_diff_ns = (1 - p->alpha) * q->rtt_diff_ns + p->alpha * new_diff;
	q->gradient = q->rtt_diff_ns / ((double)(p->min_rtt_us ? p->min_rtt_us : 1) * 1000);
	q->rate_kbps = clamp_rate(q, next_rate(q, rtt_ns));
	return q->rate_kbps != old;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * TIMELY (Mittal et al., SIGCOMM 2015): RTT-gradient rate control, one update per RTT sample.
 *   new_rtt_diff = rtt − prev_rtt;  rtt_diff = (1 − a)·rtt_diff + a·new_rtt_diff
 *   gradient = rtt_diff / min_rtt
 *   rtt < t_low:            rate += δ
 *   rtt > t_high:           rate ·= 1 − β·(1 − t_high/rtt)
 *   gradient <= 0:          rate += N·δ   (N = hai_n after hai_after consecutive such events, else 1)
 *   otherwise:              rate ·= 1 − β·gradient
 * clamped to [min_rate, max_rate]. The first sample only sets prev_rtt. Updates come per RTT
 * sample (a message's request -> ACK time), never per packet, so doubles are used here.
 */
#ifndef ROCE_CC_TIMELY_H
#define ROCE_CC_TIMELY_H

#include <stdbool.h>
#include <stdint.h>

struct timely_params {
	double alpha;                 /* EWMA gain of the RTT difference; default 0.875 */
	double beta;                  /* multiplicative decrease; default 0.8 */
	uint32_t t_low_us;            /* default 50 */
	uint32_t t_high_us;           /* default 500 */
	uint32_t min_rtt_us;          /* D_minRTT, the gradient's normaliser; default 20 */
	uint32_t delta_mbps;          /* additive step δ; default 10 */
	uint32_t hai_after;           /* consecutive gradient <= 0 events before hyper increase; default 5 */
	uint32_t hai_n;               /* hyper-increase multiple N; default 5 */
	uint32_t min_rate_mbps;       /* default 10 */
	uint32_t max_rate_mbps;       /* 0 = the QP's line rate; default 0 */
};

void timely_params_default(struct timely_params *p);
/* NULL when usable, else the name of the first bad parameter; `why` gets what is allowed. */
const char *timely_params_check(const struct timely_params *p, const char **why);

struct timely_counters {
	uint64_t samples;
	uint64_t increases, hyper, decreases;
	uint64_t below_t_low, above_t_high;
};

struct timely_qp {
	const struct timely_params *p;
	uint64_t line_kbps;
	uint64_t rate_kbps;
	uint64_t prev_rtt_ns;         /* 0: no sample yet */
	double rtt_diff_ns;           /* EWMA of RTT differences */
	double gradient;              /* the last one (traces) */
	uint32_t neg_run;             /* consecutive gradient <= 0 events */
	struct timely_counters c;
};

/* Starts at start_kbps (TIMELY starts new flows at C/(N+1); the caller decides), line_kbps the cap. */
void timely_init(struct timely_qp *q, const struct timely_params *p, uint64_t line_kbps, uint64_t start_kbps);
/* One RTT sample; true when the rate changed. */
bool timely_on_rtt(struct timely_qp *q, uint64_t rtt_ns);

#endif

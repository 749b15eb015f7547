/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The DCQCN reaction point (the sender's rate) with two profiles. docs/cc.md gives every
 * parameter, its unit, default and the NVIDIA name it mirrors.
 *
 * DCQCN_NVIDIA (the default): the ConnectX firmware semantics. α is 10-bit fixed point
 * (1024 = 1.0), updated every dce_tcp_rtt µs: α = G·α/1024 + (1024 − G) when a CNP arrived in
 * the period (capped at 1023), else α = G·α/1024 (G = dce_tcp_g). A CNP seen during a
 * rate_reduce_monitor_period causes one cut when that period ends: R_T = R_C when clamp_tgt_rate,
 * or a byte-counter increase happened since the last cut, or (clamp_tgt_rate_after_time_inc and)
 * a timer increase did; R_C −= min(R_C·α >> rpg_gd, R_C·(100 − rpg_min_dec_fac)/100), floored at
 * rpg_min_rate; the increase counters and byte count reset and the increase timer restarts. The
 * first CNP of a QP sets α = initial_alpha_value and, when rate_to_set_on_first_cnp ≠ 0, R_C = R_T
 * = that rate (then the cut rule applies from the next CNP on). Increase events come from the
 * rpg_time_reset timer and from every rpg_byte_reset·64 bytes sent; with T = timer events and
 * BC = byte events since the last cut: max(T, BC) < rpg_threshold is fast recovery (R_T kept),
 * min(T, BC) > rpg_threshold hyper increase (R_T += rpg_hai_rate), otherwise additive (R_T +=
 * rpg_ai_rate); R_T is capped at the maximum rate, and R_C = (R_C + R_T)/2 after each event.
 *
 * DCQCN_PAPER: the SIGCOMM 2015 algorithm: on each CNP α = (1 − g)·α + g and R_T = R_C,
 * R_C = R_C·(1 − α/2) (alpha_before_cut chooses the order: the paper's text cuts with the old α,
 * the authors' simulator updates α first); α = (1 − g)·α after every K µs without a CNP; timer
 * T and byte counter B raise the rate in stages, R_C = (R_C + R_T)/2 after each; floor R_min.
 * α is Q20 fixed point (1 << 20 = 1.0). The stages (ns3_stages, the default) are those of the
 * authors' ns-3 code (bobzhuyb/ns3-rdma, qbb-net-device.cc rpr_*): the event's own counter is
 * incremented before the test, then max(T, BC) < F is fast recovery (R_T kept: F − 1 steps),
 * min(T, BC) >= F hyper (R_T += R_HAI·(min(T, BC) − F + 1)), otherwise additive (R_T += R_AI),
 * and a byte event after an additive one is additive again (rpr_active_byte). With ns3_stages
 * false the counts before the event decide, as in the NVIDIA profile: max(T, BC) < F fast (F
 * steps), min(T, BC) > F hyper (R_T += R_HAI, or R_HAI·(min(T, BC) − F) with hyper_linear).
 *
 * Rates are kb/s (uint64_t); times are ns on the caller's clock. All arithmetic is integer, so
 * the same inputs give the same rates on every machine. Timers live on the caller's timer wheel
 * (timer_wheel.h); the NVIDIA α update is computed exactly when it is needed (see dcqcn.c), so a
 * QP with no congestion has no timer armed. Per packet the caller only adds bytes.
 *
 * Every function taking a wheel also takes NULL: the QP's timers are then armed on no wheel
 * (they keep their due times only) and the caller runs them itself with dcqcn_catch_up when it
 * next needs the rate, e.g. before the QP sends (dcqcn_next_due says when that is worth doing).
 * Events are applied in the same order at the same times either way, so the rates are the same;
 * only when they are computed differs. On no wheel, bytes given to dcqcn_on_bytes count as sent
 * before the timers still overdue (a cut among them clears them): catch up first for bytes sent
 * later than those.
 */
#ifndef ROCE_CC_DCQCN_H
#define ROCE_CC_DCQCN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timer_wheel.h"

enum dcqcn_profile { DCQCN_NVIDIA, DCQCN_PAPER };

struct dcqcn_params {
	enum dcqcn_profile profile;
	/* NVIDIA profile: names, units and defaults of the ConnectX firmware (sysfs roce_rp/) */
	uint32_t dce_tcp_g;           /* 1/1024 units, 0..1023; default 1019 */
	uint32_t dce_tcp_rtt;         /* α update period, µs, 1..131071; default 1 */
	uint32_t initial_alpha_value; /* 1/1024, 0..1023; default 1023 */
	uint32_t rate_to_set_on_first_cnp; /* Mb/s, 0 = keep the current rate; default 0 */
	uint32_t rpg_min_dec_fac;     /* %, 0..100: a cut leaves at least this share; default 50 */
	uint32_t rpg_min_rate;        /* Mb/s; default 1 */
	uint32_t rpg_gd;              /* cut = R_C·α >> rpg_gd; 1..31; default 11 */
	uint32_t rate_reduce_monitor_period; /* µs, >= 1; default 4 */
	bool clamp_tgt_rate;          /* default false */
	bool clamp_tgt_rate_after_time_inc; /* default true */
	uint32_t rpg_time_reset;      /* increase timer, µs, >= 1; default 300 */
	uint32_t rpg_byte_reset;      /* byte counter, 64-byte units, 0 = off; default 32767 */
	uint32_t rpg_threshold;       /* increase events per stage, >= 1; default 1 */
	uint32_t rpg_max_rate;        /* Mb/s, 0 = the QP's line rate; default 0 */
	uint32_t rpg_ai_rate;         /* Mb/s; default 5 */
	uint32_t rpg_hai_rate;        /* Mb/s; default 50 */
	/* paper profile (SIGCOMM 2015 values as defaults) */
	double g;                     /* α gain, (0, 1]; default 1/256 */
	uint32_t k_us;                /* α decay period without CNPs; default 55 */
	uint32_t t_us;                /* increase timer; default 55 */
	uint64_t b_bytes;             /* byte counter, 0 = off; default 10,000,000 */
	uint32_t f;                   /* fast-recovery steps, >= 1; default 5 */
	uint32_t r_ai_mbps;           /* default 40 */
	uint32_t r_hai_mbps;          /* default 200 (the authors' simulator; the paper gives none) */
	uint32_t min_rate_mbps;       /* default 100 */
	double initial_alpha;         /* α of a new QP, [0, 1]; default 1 */
	bool alpha_before_cut;        /* update α before the cut (the authors' ns-3); default false */
	bool ns3_stages;              /* the authors' ns-3 increase stages (above); default true */
	bool hyper_linear;            /* ns3_stages false: R_HAI × (min(T, BC) − F) instead of R_HAI */
};

/* The defaults of a profile (the table in docs/cc.md). */
void dcqcn_params_default(struct dcqcn_params *p, enum dcqcn_profile profile);
/* NULL when the parameters are usable, else the name of the first bad one (for messages such as
 * "FILE:LINE: dcqcn.rpg_gd: ..."); `why` (may be NULL) gets what is allowed. */
const char *dcqcn_params_check(const struct dcqcn_params *p, const char **why);

/* Timer kinds on the wheel (tw_timer.kind) */
enum { DCQCN_TIMER_ALPHA = 1, DCQCN_TIMER_DECREASE, DCQCN_TIMER_INCREASE };

enum dcqcn_stage { DCQCN_STAGE_NONE, DCQCN_STAGE_FAST, DCQCN_STAGE_ADDITIVE, DCQCN_STAGE_HYPER };

struct dcqcn_counters {
	uint64_t cnps;                /* CNPs received */
	uint64_t cuts;                /* rate decreases */
	uint64_t timer_events, byte_events; /* increase events by source */
	uint64_t fast, additive, hyper;    /* increase events by stage */
};

struct dcqcn_qp {
	const struct dcqcn_params *p; /* may be replaced between events (run-time changes) */
	uint64_t line_kbps;           /* the QP's own maximum (its link or configured rate) */
	uint64_t rc_kbps, rt_kbps;    /* current and target rates */
	uint32_t alpha;               /* NVIDIA: 1/1024; paper: Q20 */
	uint32_t t_cnt, bc_cnt;       /* increase events since the last cut */
	uint64_t bytes;               /* bytes counted toward the next byte event */
	bool seen_cnp;                /* a CNP ever arrived (NVIDIA: α and the timers started) */
	bool cnp_in_alpha_period;     /* NVIDIA: a CNP arrived in the current α period */
	bool cnp_in_dec_period;       /* NVIDIA: a CNP arrived in the current decrease period */
	uint64_t alpha_period_ns;     /* NVIDIA: start of the α period α is up to date with */
	uint64_t first_cnp_ns;        /* NVIDIA: the first CNP's time, where the decrease periods start */
	uint8_t stage;                /* enum dcqcn_stage of the last increase event */
	struct tw_timer t_alpha;      /* paper: K without CNPs */
	struct tw_timer t_dec;        /* NVIDIA: end of the decrease period that saw a CNP */
	struct tw_timer t_inc;        /* increase timer (both) */
	struct dcqcn_counters c;
};

/* A QP sending at line_kbps (DCQCN starts at line rate: no slow start). Nothing is armed. */
void dcqcn_init(struct dcqcn_qp *q, const struct dcqcn_params *p, uint64_t line_kbps, uint64_t now_ns);
/* The highest rate the QP may reach: min(line, rpg_max_rate when set). */
uint64_t dcqcn_max_kbps(const struct dcqcn_qp *q);

/* Events. Each returns true when R_C changed (the caller then applies rc_kbps to its pacing). */
bool dcqcn_on_cnp(struct dcqcn_qp *q, struct timer_wheel *w, uint64_t now_ns);
/* Bytes sent (frame bytes): the byte counter. The common case (no threshold crossed) is an add
 * and a compare. */
bool dcqcn_byte_event(struct dcqcn_qp *q, struct timer_wheel *w, uint64_t now_ns);
static inline uint64_t dcqcn_byte_threshold(const struct dcqcn_qp *q)
{
	return q->p->profile == DCQCN_NVIDIA ? (uint64_t)q->p->rpg_byte_reset * 64 : q->p->b_bytes;
}
static inline bool dcqcn_on_bytes(struct dcqcn_qp *q, struct timer_wheel *w, uint32_t bytes, uint64_t now_ns)
{
	uint64_t th;

	q->bytes += bytes;
	th = dcqcn_byte_threshold(q);
	if (th == 0 || q->bytes < th || !q->seen_cnp)
		return false;
	return dcqcn_byte_event(q, w, now_ns);
}
/* Runs the QP's timers due at or before now_ns, in time order, as the wheel would have fired them
 * (the way to drive QPs whose timers are on no wheel). True when R_C changed. */
bool dcqcn_catch_up(struct dcqcn_qp *q, struct timer_wheel *w, uint64_t now_ns);
/* The earliest due time of the QP's armed timers, or UINT64_MAX. */
uint64_t dcqcn_next_due(const struct dcqcn_qp *q);
/* The QP a timer of the wheel belongs to (its kind says which of the three it is): what a wheel's
 * callback needs to find the QP, and from it, its owner (container_of on the QP). */
static inline struct dcqcn_qp *dcqcn_qp_of_timer(struct tw_timer *t)
{
	size_t off = t->kind == DCQCN_TIMER_ALPHA	 ? offsetof(struct dcqcn_qp, t_alpha)
		     : t->kind == DCQCN_TIMER_DECREASE ? offsetof(struct dcqcn_qp, t_dec)
						       : offsetof(struct dcqcn_qp, t_inc);

	return (struct dcqcn_qp *)(void *)((char *)t - off);
}
/* One of the QP's timers fired (from the wheel's callback; due_ns as the wheel gives it). */
bool dcqcn_on_timer(struct dcqcn_qp *q, struct timer_wheel *w, struct tw_timer *t, uint64_t due_ns);
/* α now, in the profile's fixed point (NVIDIA: brings the lazily computed α up to now_ns). */
uint32_t dcqcn_alpha(struct dcqcn_qp *q, uint64_t now_ns);
/* α as a fraction of 1 (for traces and reports). */
double dcqcn_alpha_fraction(const struct dcqcn_qp *q, uint32_t alpha);
/* Disarms the QP's timers (it stops or is removed). */
void dcqcn_stop(struct dcqcn_qp *q, struct timer_wheel *w);

#endif

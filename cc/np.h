/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The DCQCN notification point (the receiver): a CE-marked data packet of a QP makes a CNP toward
 * its sender unless one was sent for that QP within min_time_between_cnps; the marks that made no
 * CNP are counted as suppressed. The caller builds and sends the CNP.
 */
#ifndef ROCE_CC_NP_H
#define ROCE_CC_NP_H

#include <stdbool.h>
#include <stdint.h>

struct np_params {
	uint32_t min_time_between_cnps; /* µs (NVIDIA name); default 4; 0 = one CNP per marked packet */
	uint8_t cnp_dscp;               /* default 48 */
	uint8_t cnp_802p_prio;          /* default 6 (used when the port tags frames) */
};

struct np_qp {
	uint64_t last_cnp_ns;
	bool sent_any;
	uint64_t ce_marks, cnps, suppressed;
};

static inline void np_params_default(struct np_params *p)
{
	p->min_time_between_cnps = 4;
	p->cnp_dscp = 48;
	p->cnp_802p_prio = 6;
}

/* A CE-marked packet of the QP arrived at now_ns: true when a CNP is to be sent now. */
static inline bool np_on_ce(struct np_qp *q, const struct np_params *p, uint64_t now_ns)
{
	q->ce_marks++;
	if (q->sent_any && now_ns - q->last_cnp_ns < (uint64_t)p->min_time_between_cnps * 1000) {
		q->suppressed++;
		return false;
	}
	q->sent_any = true;
	q->last_cnp_ns = now_ns;
	q->cnps++;
	return true;
}

#endif

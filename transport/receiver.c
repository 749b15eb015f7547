/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "collective.h"
#include "config.h"
#include "counters.h"
#include "qp_index.h"
#include "receiver.h"

/* A receive range of a collective: looked up only when a receiver QP is made. */
struct rx_watch {
	uint16_t port;
	uint32_t first, count;
	struct collective_rt *coll;
};

struct rx_ctx {
	struct qp_map *index;        /* (port, qpn) -> position in qps[]; positions taken on first frames */
	struct qp_cache cache;       /* in front of index */
	unsigned max_qps;
	unsigned n_ports;
	struct rx_qp *qps;           /* by hash position */
	struct rx_port_counters *ports;
	unsigned n_watch;
	struct rx_watch watch[RX_MAX_WATCHES];
};

struct rx_ctx *rx_ctx_create(unsigned lcore, unsigned n_ports, unsigned max_qps, int socket)
{
	char name[32];
	struct rx_ctx *ctx = rte_zmalloc_socket("rx_ctx", sizeof(*ctx), RTE_CACHE_LINE_SIZE, socket);

	if (!ctx)
		return NULL;
	snprintf(name, sizeof(name), "rxqp_%u", lcore);
	ctx->n_ports = n_ports;
	/* max_qps keys fit, whatever their hash; telemetry looks up while this lcore adds */
	ctx->index = qp_map_create_shared(name, max_qps, socket);
	ctx->max_qps = ctx->index ? qp_map_capacity(ctx->index) : 0;
	ctx->qps = rte_zmalloc_socket("rx_qps", sizeof(struct rx_qp) * ctx->max_qps, RTE_CACHE_LINE_SIZE, socket);
	ctx->ports = rte_zmalloc_socket("rx_ports", sizeof(struct rx_port_counters) * n_ports, RTE_CACHE_LINE_SIZE, socket);
	if (!ctx->index || !ctx->qps || !ctx->ports || qp_cache_init(&ctx->cache, max_qps, socket)) {
		rx_ctx_free(ctx);
		return NULL;
	}
	return ctx;
}

void rx_ctx_free(struct rx_ctx *ctx)
{
	if (!ctx)
		return;
	qp_map_free(ctx->index);
	qp_cache_free(&ctx->cache);
	rte_free(ctx->qps);
	rte_free(ctx->ports);
	rte_free(ctx);
}

int rx_ctx_watch_messages(struct rx_ctx *ctx, uint16_t port, uint32_t qpn_first, uint32_t count,
			  struct collective_rt *coll)
{
	if (ctx->n_watch == RX_MAX_WATCHES)
		return -1;
	ctx->watch[ctx->n_watch++] = (struct rx_watch){.port = port, .first = qpn_first, .count = count, .coll = coll};
	return 0;
}

/* The collective watching (port, qpn), or NULL: once per receiver QP, when it is made. */
static struct collective_rt *watcher_of(const struct rx_ctx *ctx, uint16_t port, uint32_t qpn)
{
	for (unsigned i = 0; i < ctx->n_watch; i++) {
		const struct rx_watch *w = &ctx->watch[i];
		if (w->port == port && qpn - w->first < w->count) /* unsigned: below first wraps high */
			return w->coll;
	}
	return NULL;
}

static struct rx_qp *qp_for(struct rx_ctx *ctx, struct rx_port_counters *pc, uint16_t port, uint32_t qpn)
{
	int32_t pos = qp_cache_find(&ctx->cache, port, qpn);

	if (likely(pos >= 0))
		return &ctx->qps[pos];
	pos = qp_map_find(ctx->index, port, qpn);
	if (pos < 0) {
		pos = qp_map_add(ctx->index, port, qpn);
		if (pos < 0) {
			STAT_ADD(pc->rx_qp_table_full, 1);
			return NULL;
		}
		ctx->qps[pos].port = port;
		ctx->qps[pos].qpn = qpn;
		ctx->qps[pos].coll = watcher_of(ctx, port, qpn);
	}
	qp_cache_fill(&ctx->cache, port, qpn, pos);
	return &ctx->qps[pos];
}


static void window_shift(uint64_t w[2], uint32_t k)
{
	if (k >= 128) {
		w[0] = w[1] = 0;
	} else if (k >= 64) {
		w[1] = w[0] << (k - 64);
		w[0] = 0;
	} else if (k > 0) {
		w[1] = w[1] << k | w[0] >> (64 - k);
		w[0] <<= k;
	}
}

/* PSN bookkeeping: a gap counts its PSNs as lost; one of them arriving later turns a loss
 * into an out-of-order arrival; a PSN seen twice is a duplicate. Returns false for a duplicate
 * (whose payload and message are not counted again). */
static bool track_psn(struct rx_qp *q, uint32_t psn)
{
	int32_t d;
	uint32_t back;

	if (!q->started || q->resync) {
		q->started = true;
		q->resync = false;
		q->next_psn = wire_psn_add(psn, 1);
		q->window[0] = 1;
		q->window[1] = 0;
		return true;
	}
	d = wire_psn_diff(psn, q->next_psn);
	if (d >= 0) {
		STAT_ADD(q->c.lost, (uint64_t)d);
		window_shift(q->window, (uint32_t)d + 1);
		q->window[0] |= 1;
		q->next_psn = wire_psn_add(psn, 1);
		return true;
	}
	back = (uint32_t)(-d) - 1; /* 0: the highest PSN seen */
	if (back >= RX_PSN_WINDOW || (q->window[back / 64] >> (back % 64) & 1)) {
		STAT_ADD(q->c.duplicates, 1);
		return false;
	}
	q->window[back / 64] |= 1ULL << (back % 64);
	STAT_ADD(q->c.out_of_order, 1);
	if (q->c.lost)
		STAT_ADD(q->c.lost, (uint64_t)-1);
	return true;
}

/* Returns the receiver QP of a well-formed, first-seen request or response, else NULL. `q` is the
 * frame's receiver QP (NULL: the table is full). */
static struct rx_qp *account_roce(struct rx_qp *q, const uint8_t *frame, uint32_t len, const struct wire_pkt *p)
{
	const struct wire_opcode_info *op = p->op;

	if (!q)
		return NULL;
	STAT_ADD(q->c.packets, 1);
	STAT_ADD(q->c.bytes, len); /* as received: Ethernet padding included, FCS not */
	if (p->ip.ecn == WIRE_ECN_CE)
		STAT_ADD(q->c.ecn_ce, 1);
	if (p->kind == WIRE_KIND_CNP) {
		STAT_ADD(q->c.cnp, 1);
		return NULL;
	}
	if (p->kind == WIRE_KIND_MALFORMED) { /* only ICRC errors get here */
		STAT_ADD(q->c.icrc_errors, 1);
		return NULL;
	}
	/* responses (ACKs, READ responses) do not number every PSN: only requests are tracked */
	if (!(op->flags & WIRE_OPF_RESPONSE) && !track_psn(q, p->bth.psn))
		return NULL;
	if (op->flags & WIRE_OPF_PAYLOAD)
		STAT_ADD(q->c.payload_bytes, p->payload_len);
	if ((op->flags & WIRE_OPF_REQUEST) && (op->flags & WIRE_OPF_END)) {
		STAT_ADD(q->c.messages, 1);
		/* message n of a watched QP: a receipt of phase n (a TSC read, on message ends only) */
		if (q->coll)
			collective_received(q->coll, (uint32_t)(q->c.messages - 1), rte_rdtsc());
	}
	if (p->bth.opcode == WIRE_OP_RC_READ_REQUEST) {
		/* the request took one PSN per response packet; the path MTU that sets their number
		 * is the requester's, so the next request's PSN is taken as it comes */
		struct wire_ext_hdrs ext;
		wire_ext_read(frame + p->bth_off, op, &ext);
		q->resync = ext.reth.dma_len > 256;
	}
	return q;
}

static void account_mac_control(struct rx_port_counters *pc, const struct wire_pkt *p)
{
	if (p->kind == WIRE_KIND_PAUSE) {
		STAT_ADD(pc->pause_rx, 1);
		return;
	}
	for (int i = 0; i < WIRE_PFC_PRIORITIES; i++) {
		if (!(p->pfc_enable >> i & 1))
			continue;
		STAT_ADD(pc->pfc_rx[i], 1);
		if (p->quanta[i])
			STAT_ADD(pc->pfc_xoff_rx[i], 1);
	}
}

void rx_count_injected_drop(struct rx_ctx *ctx, uint16_t port) { STAT_ADD(ctx->ports[port].injected_drops, 1); }
void rx_count_rc_unknown(struct rx_ctx *ctx, uint16_t port) { STAT_ADD(ctx->ports[port].rc_unknown_qp, 1); }

void rx_count_priority(struct rx_ctx *ctx, uint16_t port, uint8_t prio, uint32_t len)
{
	STAT_ADD(ctx->ports[port].prio_frames[prio], 1);
	STAT_ADD(ctx->ports[port].prio_bytes[prio], len);
}

void rx_count_np(struct rx_ctx *ctx, uint16_t port, enum rx_np_count what)
{
	struct rx_port_counters *pc = &ctx->ports[port];

	switch (what) {
	case RX_NP_SENT:
		STAT_ADD(pc->np_cnp_tx, 1);
		break;
	case RX_NP_SUPPRESSED:
		STAT_ADD(pc->np_suppressed, 1);
		break;
	case RX_NP_NO_PEER:
		STAT_ADD(pc->np_no_peer, 1);
		break;
	default:
		STAT_ADD(pc->np_failed, 1);
	}
}

void rx_count_inject(struct rx_ctx *ctx, uint16_t port, int action)
{
	struct rx_port_counters *pc = &ctx->ports[port];

	if (action == CFG_INJECT_CE)
		STAT_ADD(pc->inject_ce, 1);
	else if (action == CFG_INJECT_DROP)
		STAT_ADD(pc->inject_drop, 1);
	else if (action == CFG_INJECT_CORRUPT)
		STAT_ADD(pc->inject_corrupt, 1);
}

/* Frames counted to a receiver QP: RoCE and CNP frames, and those that failed only their ICRC. */
static bool has_qp(const struct wire_pkt *p)
{
	return p->kind == WIRE_KIND_ROCE || p->kind == WIRE_KIND_CNP ||
	       (p->kind == WIRE_KIND_MALFORMED && p->error == WIRE_ERR_ICRC && p->op);
}

/* One parsed frame; `q` its receiver QP when has_qp(). */
static struct rx_qp *account_one(struct rx_port_counters *pc, struct rx_qp *q, const uint8_t *frame, uint32_t len,
				 const struct wire_pkt *p)
{
	STAT_ADD(pc->frames, 1);
	STAT_ADD(pc->bytes, len);
	STAT_ADD(pc->kind[p->kind], 1);
	switch (p->kind) {
	case WIRE_KIND_ROCE:
	case WIRE_KIND_CNP:
		return q ? account_roce(q, frame, len, p) : NULL;
	case WIRE_KIND_PFC:
	case WIRE_KIND_PAUSE:
		account_mac_control(pc, p);
		break;
	case WIRE_KIND_MALFORMED:
		STAT_ADD(pc->error[p->error], 1);
		if (q)
			account_roce(q, frame, len, p);
		break;
	default:
		break;
	}
	return NULL;
}

void rx_account_burst(struct rx_ctx *ctx, uint16_t port, const uint8_t *const frames[], const uint32_t lens[],
		      unsigned n, struct wire_pkt p[], struct rx_qp *qps[])
{
	struct rx_port_counters *pc = &ctx->ports[port];

	wire_parse_burst(frames, lens, n, WIRE_PARSE_CHECK_ICRC | WIRE_PARSE_CHECK_IP_CSUM, p);
	for (unsigned i = 0; i < n; i++) {
		struct rx_qp *q = has_qp(&p[i]) ? qp_for(ctx, pc, port, p[i].bth.dqpn) : NULL;

		qps[i] = account_one(pc, q, frames[i], lens[i], &p[i]);
	}
}

void rx_account_oversize(struct rx_ctx *ctx, uint16_t port, uint32_t len)
{
	struct rx_port_counters *pc = &ctx->ports[port];

	STAT_ADD(pc->frames, 1);
	STAT_ADD(pc->bytes, len);
	STAT_ADD(pc->kind[WIRE_KIND_MALFORMED], 1);
	STAT_ADD(pc->error[WIRE_ERR_OVERSIZE], 1);
}

const struct rx_port_counters *rx_port_counters(const struct rx_ctx *ctx, uint16_t port) { return &ctx->ports[port]; }

unsigned rx_qp_count(const struct rx_ctx *ctx) { return ctx->max_qps; }

/* NULL for an unused position. */
const struct rx_qp *rx_qp_at(const struct rx_ctx *ctx, unsigned i)
{
	const struct rx_qp *q = &ctx->qps[i];

	return q->c.packets ? q : NULL;
}

const struct rx_qp *rx_qp_find(const struct rx_ctx *ctx, uint16_t port, uint32_t qpn)
{
	int32_t pos = qp_map_find(ctx->index, port, qpn);

	return pos >= 0 ? &ctx->qps[pos] : NULL;
}

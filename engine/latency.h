/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Latency on the engine's lcores: the statistics each measurement feeds (a histogram and the RFC
 * 3550 inter-arrival jitter), the per-lcore state that receives probes (one-way times per
 * receiver QP and per port; round trips of ping-pong QPs whose probes come back), and the ring
 * of raw samples the main lcore writes to CSV. docs/latency.md.
 *
 * Every lat_stats has one writer, the lcore that measures; the main lcore reads them live
 * (hist_merge into a private copy) for the stats lines, and after the lcores stop for the report.
 */
#ifndef ROCE_ENGINE_LATENCY_H
#define ROCE_ENGINE_LATENCY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "histogram.h"
#include "probe.h"

#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

/* The jitter state sits right before the histogram's counters: a sample touches those two
 * neighbouring lines and its bucket's. */
struct lat_stats {
	uint64_t jitter16;            /* RFC 3550 J, in ns x 16 (J += (|D| - J) / 16 in fixed point) */
	int64_t last_transit;         /* the previous sample (valid once h.count > 0) */
	struct hist h;
	uint64_t negative;            /* samples where the receive time was before the send time:
				       * the two clocks disagree (counted, recorded as 0) */
} __attribute__((aligned(64)));   /* arrays of them: each starts a cache line */

static inline void lat_record(struct lat_stats *s, int64_t transit_ns)
{
	if (unlikely(transit_ns < 0)) {
		__atomic_store_n(&s->negative, s->negative + 1, __ATOMIC_RELAXED);
		transit_ns = 0;
	}
	if (s->h.count) {
		int64_t d = transit_ns - s->last_transit;
		uint64_t ad = (uint64_t)(d < 0 ? -d : d);
		__atomic_store_n(&s->jitter16, s->jitter16 + ad - ((s->jitter16 + 8) >> 4), __ATOMIC_RELAXED);
	}
	s->last_transit = transit_ns;
	hist_record(&s->h, (uint64_t)transit_ns);
}

void lat_stats_init(struct lat_stats *s);
/* dst += src (src may be live); jitter: the larger of the two (each is a running estimate). */
void lat_stats_merge(struct lat_stats *dst, const struct lat_stats *src);

/* The samples recorded between two copies of one histogram (now minus before), for interval
 * percentiles without resetting anything the lcores write. */
void lat_hist_interval(struct hist *out, const struct hist *now, const struct hist *before);

/* ---- raw samples ------------------------------------------------------------------------------ */

enum lat_kind { LAT_ONEWAY, LAT_RTT, LAT_ACK, LAT_KIND_COUNT };
extern const char *const lat_kind_name[LAT_KIND_COUNT];

struct lat_sample {
	uint64_t tx_ns, rx_ns;
	uint32_t flow, seq;
	uint16_t port;
	uint16_t session;
	uint8_t kind;
};

/* Single producer (an lcore), single consumer (the main lcore): no lock, no syscall on the lcore.
 * Full: the sample is counted as dropped. */
#define LAT_SAMPLE_RING 65536
struct lat_samples {
	uint64_t head;                /* written by the producer */
	uint64_t tail;                /* written by the consumer */
	uint64_t every, countdown;    /* one sample in `every` is kept */
	uint64_t dropped;
	struct lat_sample ring[LAT_SAMPLE_RING];
};

static inline void lat_sample_put(struct lat_samples *r, const struct lat_sample *s)
{
	uint64_t head;

	if (!r || --r->countdown)
		return;
	r->countdown = r->every;
	head = r->head;
	if (head - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) >= LAT_SAMPLE_RING) {
		__atomic_store_n(&r->dropped, r->dropped + 1, __ATOMIC_RELAXED);
		return;
	}
	r->ring[head % LAT_SAMPLE_RING] = *s;
	__atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
}

/* The main lcore: writes what the ring holds as CSV lines; returns how many. */
unsigned lat_samples_drain(struct lat_samples *r, FILE *csv);
void lat_samples_csv_header(FILE *csv);

/* ---- the receiving side of an lcore ---------------------------------------------------------- */

struct qp_tx;

struct lat_rx {
	uint16_t session;             /* this process's (probes with it came from here) */
	struct qp_tx *qps;            /* the engine's QPs: a probe's flow is an index here */
	unsigned n_qps;
	unsigned n_slots, used_slots; /* one-way statistics for receiver QPs, taken on first probe */
	struct lat_stats *slots;
	uint16_t *slot_port;          /* the port of each slot's receiver QP */
	struct lat_stats *rtt;        /* [n_pingpong]: round trips of UC/UD ping-pong QPs */
	/* probes of receiver QPs that found every slot taken: counted per port only. Per-port
	 * statistics are otherwise merged from the slots when read, so a packet is recorded once. */
	struct lat_stats no_slot[CFG_MAX_PORTS];
	struct lat_samples *samples;  /* NULL: no CSV */
};

/* A probe received on config port `port`, at rx_ns on the time base, in a packet accounted to
 * receiver QP slot *slot (0: none yet; NULL: no receiver QP). */
void lat_rx_probe(struct lat_rx *l, uint16_t port, uint32_t *slot, const struct latency_probe *pr, uint64_t rx_ns);

#endif

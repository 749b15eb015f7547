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
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "histogram.h"
#include "probe.h"

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

/* A sample changes two cache lines: the first one of its lat_stats (everything but the buckets)
 * and its bucket's. While a lat_stats is written (live), its histogram holds only the buckets and
 * `overflow`: h.count, h.sum, h.sum_sq, h.min and h.max stay as hist_init left them, and the
 * first line has them. lat_stats_merge folds both into dst->h, so a merged copy is a complete
 * histogram (its first line stays neutral, and it can be merged again). */
struct lat_stats {
	/* line 0 */
	uint64_t count;               /* samples recorded (live) */
	uint64_t jitter16;            /* RFC 3550 J, in ns x 16 (J += (|D| - J) / 16 in fixed point) */
	int64_t last_transit;         /* the previous sample (valid once count > 0) */
	uint64_t sum;                 /* ns */
	uint64_t sum_sq_w[2];         /* sum of ns^2 (hist_u128; HIST_SQ_LO word first) */
	uint64_t min, max;
	struct hist h;
	uint64_t negative;            /* samples where the receive time was before the send time:
				       * the two clocks disagree (counted, recorded as 0) */
} __attribute__((aligned(64)));   /* arrays of them: each starts a cache line */

_Static_assert(offsetof(struct lat_stats, h) == 64, "a lat_stats' first line holds all but the buckets");

/* A relaxed store of a value only this thread writes (a plain mov): readers see no torn word. */
#define LAT_PUT(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELAXED)

/* Samples of one lat_stats, in the order they came (the jitter follows them): n >= 1 runs, run k
 * being mult[k] >= 1 samples of transit[k] in a row. The same result as that many calls of
 * lat_record, one sample at a time (sums wrap alike: a run adds mult times its value and square);
 * the first line is read and written once, a bucket once for each stretch of runs that fall in
 * it. A run's samples after its first have D = 0: the jitter only decays. */
static inline void lat_record_runs(struct lat_stats *s, const int64_t *transit, const uint32_t *mult, unsigned n)
{
	uint64_t count = s->count, jitter16 = s->jitter16, sum = s->sum, min = s->min, max = s->max;
	uint64_t neg = 0, over = 0, add = 0;
	int64_t last = s->last_transit;
	hist_u128 sq = (hist_u128)s->sum_sq_w[1 - HIST_SQ_LO] << 64 | s->sum_sq_w[HIST_SQ_LO];
	unsigned bucket = UINT32_MAX;

	for (unsigned k = 0; k < n; k++) {
		int64_t t = transit[k];
		uint64_t v, c = mult[k];
		unsigned i;

		if (unlikely(t < 0)) {
			neg += c;
			t = 0;
		}
		if (count) {
			int64_t d = t - last;
			uint64_t ad = (uint64_t)(d < 0 ? -d : d);
			jitter16 += ad - ((jitter16 + 8) >> 4);
		}
		if (c > 1) { /* J -= (J + 8) >> 4, c - 1 times; with x = J + 8, x -= x >> 4 (a shorter chain) */
			uint64_t x = jitter16 + 8;
			for (uint64_t r = 1; r < c; r++)
				x -= x >> 4;
			jitter16 = x - 8;
		}
		last = t;
		v = (uint64_t)t;
		count += c;
		sum += v * c;
		sq += (hist_u128)v * v * c;
		min = v < min ? v : min;
		max = v > max ? v : max;
		if (unlikely(v >= HIST_MAX_NS))
			over += c;
		i = hist_index(v);
		if (i != bucket) {
			if (add)
				LAT_PUT(s->h.buckets[bucket], s->h.buckets[bucket] + add);
			bucket = i;
			add = 0;
		}
		add += c;
	}
	LAT_PUT(s->h.buckets[bucket], s->h.buckets[bucket] + add);
	LAT_PUT(s->count, count);
	LAT_PUT(s->jitter16, jitter16);
	s->last_transit = last;
	LAT_PUT(s->sum, sum);
	LAT_PUT(s->sum_sq_w[HIST_SQ_LO], (uint64_t)sq);
	LAT_PUT(s->sum_sq_w[1 - HIST_SQ_LO], (uint64_t)(sq >> 64));
	/* new extremes, negative times and overflows are rare: a predictable branch, not a store */
	if (unlikely(min != s->min))
		LAT_PUT(s->min, min);
	if (unlikely(max != s->max))
		LAT_PUT(s->max, max);
	if (unlikely(over))
		LAT_PUT(s->h.overflow, s->h.overflow + over);
	if (unlikely(neg))
		LAT_PUT(s->negative, s->negative + neg);
}

static inline void lat_record(struct lat_stats *s, int64_t transit_ns)
{
	static const uint32_t one = 1;

	lat_record_runs(s, &transit_ns, &one, 1);
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

/* ---- a QP's latency state ------------------------------------------------------------------ */

struct port_clock;

/* A QP's latency state, out of line (NULL when its flow measures none): its owner TX lcore sends
 * its probes (requester.h's struct qp_tx points here), RX lcores see UC/UD ping-pong probes come
 * back through lat_rx.lat_of_flow. docs/latency.md. */
struct qp_latency {
	uint32_t flow;         /* the QP's index in the engine: the probes' flow id */
	uint32_t seq;          /* the next probe's */
	uint16_t session;
	bool pingpong;         /* one message in flight */
	int32_t pp;            /* UC/UD ping-pong: its round-trip statistics per RX lcore, else -1 */
	bool waiting;          /* UC/UD ping-pong: the message is out, not back yet */
	uint16_t port;         /* the QP's port (config index): its probes come back there */
	uint32_t wait_seq;     /* seq of the message's last probe (RX lcores read it) */
	uint32_t back;         /* seq of the last probe seen back (an RX lcore writes it) */
	uint64_t deadline_tsc, timeout_tsc;
	uint64_t pings, lost;  /* ping-pong messages sent; not back within the timeout */
	struct lat_stats *ack; /* RC: request -> ACK times (the owner lcore writes) */
	struct lat_samples *samples; /* the owner lcore's raw samples, or NULL */
	const struct port_clock *clock; /* the port, when it sends probes at scheduled times */
	uint64_t sched_ns;     /* the time the current ping-pong message was scheduled at */
	const uint64_t *stalled; /* the owner role's time unable to send (stalled_tsc), or NULL */
	uint64_t stall_base;   /* its value when the message went out */
};

/* ---- the receiving side of an lcore ---------------------------------------------------------- */

struct lat_rx {
	uint16_t session;             /* this process's (probes with it came from here) */
	/* the engine's QPs' latency state by flow (a probe's flow is an index here; NULL: the QP
	 * measures none), shared read-only by the RX lcores */
	struct qp_latency *const *lat_of_flow;
	unsigned n_flows;
	unsigned n_slots, used_slots; /* one-way statistics for receiver QPs, taken on first probe */
	struct lat_stats *slots;
	uint16_t *slot_port;          /* the port of each slot's receiver QP */
	struct lat_stats *rtt;        /* [n_pingpong]: round trips of UC/UD ping-pong QPs */
	/* probes of receiver QPs that found every slot taken: counted per port only. Per-port
	 * statistics are otherwise merged from the slots when read, so a packet is recorded once. */
	struct lat_stats no_slot[CFG_MAX_PORTS];
	struct lat_samples *samples;  /* NULL: no CSV */
};

/* ---- a burst's probes: gathered with the burst's frames, recorded after them --------------- */

/* The RX lcore finds the probes of a burst (lat_batch_start, lat_batch_add in arrival order,
 * lat_batch_end), which resolves each one's statistics and prefetches the two lines it will
 * change; after the burst's frames are acted on, lat_batch_commit records them, in the same
 * order. Consecutive probes of one statistics with the same time (a QP's visit shares its send
 * time, a burst its software receive time) are kept as one entry and a count; consecutive entries
 * of one statistics are recorded together. The statistics are exactly those of recording each
 * probe on arrival. */
#define LAT_BATCH 32
struct lat_batch {
	unsigned n;                        /* entries */
	uint16_t port;                     /* the config port the burst came from */
	bool each;                         /* every probe an entry of its own, on the slow path (raw
					    * samples are kept) */
	struct lat_stats *s[LAT_BATCH];    /* one-way statistics; NULL: our ping-pong probe back */
	int64_t transit[LAT_BATCH];        /* rx_ns - tx_ns */
	uint32_t mult[LAT_BATCH];          /* probes in the entry */
	/* entries of the slow path (s NULL, or each): the probe (in the frame, valid until the
	 * commit) and its receive time */
	const uint8_t *probe[LAT_BATCH];
	uint64_t rx_ns[LAT_BATCH];
};

/* The probe's magic and version at the start of a payload of `len` bytes. */
static inline bool lat_probe_is(const uint8_t *p, uint32_t len)
{
	return len >= LATENCY_PROBE_LEN && probe_get32(p) == LATENCY_PROBE_MAGIC && p[4] == LATENCY_PROBE_VERSION;
}

/* Rare paths of lat_batch_add, out of line. One of our ping-pong probes back on the port it left
 * from (a reflector sent it back): a round trip, not a one-way time. */
bool lat_rx_returned(const struct lat_rx *l, uint16_t port, const uint8_t *probe);
/* The statistics of a receiver QP without a slot yet (it takes one; *slot is then its number), or
 * of no receiver QP (slot NULL), or when every slot is taken: the port's no_slot. */
struct lat_stats *lat_rx_slot(struct lat_rx *l, uint16_t port, uint32_t *slot);
/* An entry of lat_batch_commit's slow path (round trips, raw samples): one probe. */
void lat_rx_one(struct lat_rx *l, const struct lat_batch *b, unsigned k);

/* The entry being gathered: consecutive probes of one statistics with one time (a local of the
 * gathering loop, kept in registers). */
struct lat_gather {
	const uint32_t *slot;         /* the receiver QP's slot of the entry's probes */
	struct lat_stats *s;          /* NULL: none open */
	int64_t t;
	uint32_t m;
};

static inline void lat_batch_start(const struct lat_rx *l, struct lat_batch *b, struct lat_gather *g, uint16_t port)
{
	b->n = 0;
	b->port = port;
	b->each = l->samples != NULL;
	g->s = NULL;
	g->slot = NULL;
	g->m = 0;
	g->t = 0;
}

/* A new entry (lat_batch_add has prefetched the lines its statistics will change). */
static inline void lat_batch_push(struct lat_batch *b, struct lat_stats *s, int64_t t, uint32_t m,
				  const uint8_t *probe, uint64_t rx_ns)
{
	unsigned k = b->n++;

	b->s[k] = s;
	b->transit[k] = t;
	b->mult[k] = m;
	b->probe[k] = probe;
	b->rx_ns[k] = rx_ns;
}

static inline void lat_gather_close(struct lat_batch *b, struct lat_gather *g)
{
	if (g->s) {
		lat_batch_push(b, g->s, g->t, g->m, NULL, 0);
		g->s = NULL;
	}
}

/* A probe (lat_probe_is) received at rx_ns, in a packet accounted to the receiver QP whose slot
 * is *slot (0: none yet; NULL: no receiver QP); the burst's probes in arrival order. */
static inline void lat_batch_add(struct lat_rx *l, struct lat_batch *b, struct lat_gather *g, uint32_t *slot,
				 const uint8_t *probe, uint64_t rx_ns)
{
	uint64_t tx_ns = (uint64_t)probe_get32(probe + LATENCY_PROBE_TX_OFF) << 32 |
			 probe_get32(probe + LATENCY_PROBE_TX_OFF + 4);
	int64_t t = (int64_t)(rx_ns - tx_ns);
	struct lat_stats *s;

	if (unlikely(probe[5] & LATENCY_PROBE_PINGPONG) && lat_rx_returned(l, b->port, probe)) {
		lat_gather_close(b, g);
		lat_batch_push(b, NULL, t, 1, probe, rx_ns);
		return;
	}
	/* the same receiver QP as the open entry's: the same statistics (a slot, once taken, stays;
	 * no slot, or every one taken, is the port's no_slot) */
	if (likely(g->s && slot == g->slot)) {
		if (likely(t == g->t)) {
			g->m++;
			return;
		}
		s = g->s;
	} else {
		s = likely(slot && *slot) ? &l->slots[*slot - 1] : lat_rx_slot(l, b->port, slot);
		__builtin_prefetch(s, 1, 3);
	}
	__builtin_prefetch(&s->h.buckets[hist_index(t < 0 ? 0 : (uint64_t)t)], 1, 3);
	lat_gather_close(b, g);
	if (unlikely(b->each)) { /* raw samples: each probe goes to the slow path, with its fields */
		lat_batch_push(b, s, t, 1, probe, rx_ns);
		return;
	}
	g->slot = slot;
	g->s = s;
	g->t = t;
	g->m = 1;
}

/* After the burst's last probe. */
static inline void lat_batch_end(struct lat_batch *b, struct lat_gather *g) { lat_gather_close(b, g); }

static inline void lat_batch_commit(struct lat_rx *l, struct lat_batch *b)
{
	for (unsigned j = 0, k; j < b->n; j = k) {
		struct lat_stats *s = b->s[j];

		k = j + 1;
		if (unlikely(!s || b->each)) {
			lat_rx_one(l, b, j);
			continue;
		}
		while (k < b->n && b->s[k] == s)
			k++;
		lat_record_runs(s, &b->transit[j], &b->mult[j], k - j);
	}
	b->n = 0;
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Unit tests of the RX lcore's latency statistics (transport/latency.c), without EAL: lat_record and
 * lat_record_runs (one line for all but the buckets, runs of equal samples as a value and a
 * count, a bucket written once per stretch of runs in it) and
 * the burst path (lat_batch_add, lat_batch_commit) against a reference written as the engine
 * recorded each probe before: hist_record into a whole histogram, the jitter beside it, a probe
 * handled on arrival. Every statistic must come out identical: buckets, count, sum, sum of
 * squares, min, max, overflow, jitter, negative times, slots and their order, round trips, raw
 * samples.
 */
#include "latency.h"
#include "testlib.h"

/* ---- the reference: the statistics as they were recorded before ---------------------------- */

struct ref_stats {
	uint64_t jitter16;
	int64_t last_transit;
	struct hist h;
	uint64_t negative;
};

static void ref_init(struct ref_stats *s)
{
	memset(s, 0, sizeof(*s));
	hist_init(&s->h);
}

static void ref_record(struct ref_stats *s, int64_t transit_ns)
{
	if (transit_ns < 0) {
		s->negative++;
		transit_ns = 0;
	}
	if (s->h.count) {
		int64_t d = transit_ns - s->last_transit;
		uint64_t ad = (uint64_t)(d < 0 ? -d : d);
		s->jitter16 = s->jitter16 + ad - ((s->jitter16 + 8) >> 4);
	}
	s->last_transit = transit_ns;
	hist_record(&s->h, (uint64_t)transit_ns);
}

static void ref_merge(struct ref_stats *dst, const struct ref_stats *src)
{
	hist_merge(&dst->h, &src->h);
	if (src->jitter16 > dst->jitter16)
		dst->jitter16 = src->jitter16;
	dst->negative += src->negative;
}

/* A merged copy of `live` equals the reference in every field. */
static void check_same(const struct lat_stats *live, const struct ref_stats *ref)
{
	static struct lat_stats m;
	const struct hist *a = &m.h, *b = &ref->h;

	lat_stats_init(&m);
	lat_stats_merge(&m, live);
	CHECK_EQ(a->count, b->count);
	CHECK_EQ(a->overflow, b->overflow);
	CHECK_EQ(a->min, b->min);
	CHECK_EQ(a->max, b->max);
	CHECK_EQ(a->sum, b->sum);
	CHECK_EQ((uint64_t)a->sum_sq, (uint64_t)b->sum_sq);
	CHECK_EQ((uint64_t)(a->sum_sq >> 64), (uint64_t)(b->sum_sq >> 64));
	CHECK(memcmp(a->buckets, b->buckets, sizeof(a->buckets)) == 0);
	CHECK_EQ(m.jitter16, ref->jitter16);
	CHECK_EQ(m.negative, ref->negative);
	if (live->count) /* the live state the next sample starts from */
		CHECK_EQ(live->last_transit, ref->last_transit);
	CHECK_EQ(live->count, ref->h.count);
}

/* A transit time: mostly runs of one value (a QP's visit shares its send time, a burst its
 * receive time) and near neighbours, sometimes negative, 0, tiny, huge or past the range. */
static int64_t draw_transit(int64_t prev)
{
	uint64_t r = test_rand();

	switch (r % 16) {
	case 0:
	case 1:
	case 2:
	case 3:
	case 4:
		return prev;
	case 5:
		return -(int64_t)(test_rand() % 5000) - 1;
	case 6:
		return (int64_t)(test_rand() % 200);
	case 7:
		return (int64_t)(HIST_MAX_NS - 2 + test_rand() % 4);
	case 8:
		return (int64_t)(test_rand() >> 1); /* up to 2^63 - 1: overflow, a 128-bit square */
	case 9:
		return 0;
	default:
		return (int64_t)(1000 + test_rand() % 100000) + (int64_t)(r >> 60);
	}
}

/* ---- lat_record / lat_record_runs ----------------------------------------------------------- */

#define N_FLOWS 5

static void test_record_one_by_one(void)
{
	static struct lat_stats s[N_FLOWS];
	static struct ref_stats r[N_FLOWS];
	int64_t prev = 1500;

	for (unsigned f = 0; f < N_FLOWS; f++) {
		lat_stats_init(&s[f]);
		ref_init(&r[f]);
	}
	check_same(&s[0], &r[0]); /* empty */
	for (unsigned i = 0; i < 200000; i++) {
		unsigned f = (unsigned)(test_rand() % N_FLOWS);
		int64_t t = prev = draw_transit(prev);

		lat_record(&s[f], t);
		ref_record(&r[f], t);
	}
	for (unsigned f = 0; f < N_FLOWS; f++)
		check_same(&s[f], &r[f]);
}

static void test_record_runs(void)
{
	static struct lat_stats s[N_FLOWS];
	static struct ref_stats r[N_FLOWS];
	int64_t t[40], prev = 800;
	uint32_t m[40];

	for (unsigned f = 0; f < N_FLOWS; f++) {
		lat_stats_init(&s[f]);
		ref_init(&r[f]);
	}
	for (unsigned i = 0; i < 20000; i++) {
		unsigned f = (unsigned)(test_rand() % N_FLOWS), n = 1 + (unsigned)(test_rand() % 40);

		for (unsigned k = 0; k < n; k++) {
			uint64_t x = test_rand() % 16;
			t[k] = prev = draw_transit(prev);
			m[k] = x < 8 ? 1 : x < 14 ? (uint32_t)x - 6 : 32; /* 1 .. 7, 32 */
			for (unsigned c = 0; c < m[k]; c++)
				ref_record(&r[f], t[k]);
		}
		lat_record_runs(&s[f], t, m, n);
	}
	for (unsigned f = 0; f < N_FLOWS; f++)
		check_same(&s[f], &r[f]);
}

/* A single value in a run: every bucket boundary and the range's end. */
static void test_record_bounds(void)
{
	static struct lat_stats s;
	static struct ref_stats r;

	lat_stats_init(&s);
	ref_init(&r);
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		int64_t t[3] = {(int64_t)hist_bucket_lo(i), (int64_t)hist_bucket_hi(i), (int64_t)hist_bucket_hi(i) + 1};
		uint32_t m[3] = {1, 2, 1};

		lat_record_runs(&s, t, m, 3);
		for (unsigned k = 0; k < 3; k++)
			for (unsigned c = 0; c < m[k]; c++)
				ref_record(&r, t[k]);
	}
	check_same(&s, &r);
}

/* Merges of live statistics and of merged copies (reports merge per flow, then per group). */
static void test_merge(void)
{
	static struct lat_stats s[N_FLOWS], copy, all;
	static struct ref_stats r[N_FLOWS], rall;
	int64_t prev = 3000;

	for (unsigned f = 0; f < N_FLOWS; f++) {
		lat_stats_init(&s[f]);
		ref_init(&r[f]);
	}
	for (unsigned i = 0; i < 50000; i++) {
		unsigned f = (unsigned)(test_rand() % N_FLOWS);
		int64_t t = prev = draw_transit(prev);

		lat_record(&s[f], t);
		ref_record(&r[f], t);
	}
	lat_stats_init(&all);
	ref_init(&rall);
	for (unsigned f = 0; f < N_FLOWS; f++) {
		lat_stats_init(&copy);
		lat_stats_merge(&copy, &s[f]);
		lat_stats_merge(&all, f % 2 ? &copy : &s[f]); /* a merged copy or the live one */
		ref_merge(&rall, &r[f]);
	}
	CHECK_EQ(all.h.count, rall.h.count);
	CHECK_EQ(all.h.overflow, rall.h.overflow);
	CHECK_EQ(all.h.min, rall.h.min);
	CHECK_EQ(all.h.max, rall.h.max);
	CHECK_EQ(all.h.sum, rall.h.sum);
	CHECK(all.h.sum_sq == rall.h.sum_sq);
	CHECK(memcmp(all.h.buckets, rall.h.buckets, sizeof(all.h.buckets)) == 0);
	CHECK_EQ(all.jitter16, rall.jitter16);
	CHECK_EQ(all.negative, rall.negative);
	/* a summary of the merge is what one of the reference gives */
	{
		struct hist_summary a, b;
		hist_summarize(&all.h, &a);
		hist_summarize(&rall.h, &b);
		CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	}
}

/* ---- the burst path -------------------------------------------------------------------------- */

#define N_QPS 6      /* sending QPs of this process (flows); the first N_PP are ping-pong */
#define N_PP 3
#define N_RXQ 9      /* receiver QPs */
#define N_SLOTS 6    /* fewer than the receiver QPs: some find every slot taken */
#define N_PORTS 2
#define SESSION 0x1234

struct rig {
	struct lat_rx l;
	struct lat_stats slots[N_SLOTS], rtt[N_PP];
	uint16_t slot_port[N_SLOTS + 1];
	struct lat_samples *samples;
	struct qp_latency ql[N_QPS];
	struct qp_latency *lat_of_flow[N_QPS];
	uint32_t lat_slot[N_RXQ];
};

/* The reference: the engine's former per-probe path, on its own statistics. */
struct ref_rig {
	struct ref_stats slots[N_SLOTS], rtt[N_PP], no_slot[N_PORTS];
	uint16_t slot_port[N_SLOTS];
	unsigned used;
	uint32_t lat_slot[N_RXQ];
	uint32_t back[N_QPS];
	struct lat_samples *samples;
};

static void rig_init(struct rig *g, bool samples)
{
	memset(g, 0, sizeof(*g));
	g->l.session = SESSION;
	g->l.lat_of_flow = g->lat_of_flow;
	g->l.n_flows = N_QPS;
	g->l.n_slots = N_SLOTS;
	g->l.slots = g->slots;
	g->l.slot_port = g->slot_port;
	g->l.rtt = g->rtt;
	for (unsigned i = 0; i < N_SLOTS; i++)
		lat_stats_init(&g->slots[i]);
	for (unsigned i = 0; i < N_PP; i++)
		lat_stats_init(&g->rtt[i]);
	for (unsigned p = 0; p < CFG_MAX_PORTS; p++)
		lat_stats_init(&g->l.no_slot[p]);
	for (unsigned q = 0; q < N_QPS; q++) {
		g->lat_of_flow[q] = &g->ql[q];
		g->ql[q].port = (uint16_t)(q % N_PORTS);
		g->ql[q].pp = q < N_PP ? (int32_t)q : -1;
	}
	if (samples) {
		g->samples = calloc(1, sizeof(*g->samples));
		g->samples->every = g->samples->countdown = 3;
		g->l.samples = g->samples;
	}
}

static void ref_rig_init(struct ref_rig *r, bool samples)
{
	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < N_SLOTS; i++)
		ref_init(&r->slots[i]);
	for (unsigned i = 0; i < N_PP; i++)
		ref_init(&r->rtt[i]);
	for (unsigned p = 0; p < N_PORTS; p++)
		ref_init(&r->no_slot[p]);
	if (samples) {
		r->samples = calloc(1, sizeof(*r->samples));
		r->samples->every = r->samples->countdown = 3;
	}
}

/* The former lat_rx_probe (returned_ping, then a one-way time on the QP's slot). */
static void ref_probe(struct ref_rig *r, const struct rig *g, uint16_t port, uint32_t *slot,
		      const struct latency_probe *pr, uint64_t rx_ns)
{
	int64_t transit = (int64_t)(rx_ns - pr->tx_ns);

	if ((pr->flags & LATENCY_PROBE_PINGPONG) && pr->session == SESSION && pr->flow < N_QPS &&
	    g->ql[pr->flow].pp >= 0 && g->ql[pr->flow].port == port) {
		if (pr->seq != g->ql[pr->flow].wait_seq)
			return;
		ref_record(&r->rtt[g->ql[pr->flow].pp], transit);
		lat_sample_put(r->samples, &(struct lat_sample){.tx_ns = pr->tx_ns, .rx_ns = rx_ns, .flow = pr->flow,
								 .seq = pr->seq, .port = port, .session = pr->session,
								 .kind = LAT_RTT});
		r->back[pr->flow] = pr->seq;
		return;
	}
	if (slot && *slot == 0 && r->used < N_SLOTS) {
		r->slot_port[r->used] = port;
		*slot = ++r->used;
	}
	if (slot && *slot)
		ref_record(&r->slots[*slot - 1], transit);
	else
		ref_record(&r->no_slot[port], transit);
	lat_sample_put(r->samples, &(struct lat_sample){.tx_ns = pr->tx_ns, .rx_ns = rx_ns, .flow = pr->flow,
							 .seq = pr->seq, .port = port, .session = pr->session,
							 .kind = LAT_ONEWAY});
}

static void check_rigs(const struct rig *g, const struct ref_rig *r)
{
	CHECK_EQ(g->l.used_slots, r->used);
	for (unsigned i = 0; i < N_SLOTS; i++) {
		check_same(&g->slots[i], &r->slots[i]);
		if (i < r->used)
			CHECK_EQ(g->slot_port[i], r->slot_port[i]);
	}
	for (unsigned i = 0; i < N_PP; i++)
		check_same(&g->rtt[i], &r->rtt[i]);
	for (unsigned p = 0; p < N_PORTS; p++)
		check_same(&g->l.no_slot[p], &r->no_slot[p]);
	for (unsigned q = 0; q < N_QPS; q++)
		CHECK_EQ(g->ql[q].back, r->back[q]);
	for (unsigned q = 0; q < N_RXQ; q++)
		CHECK_EQ(g->lat_slot[q], r->lat_slot[q]);
	if (g->samples) {
		CHECK_EQ(g->samples->head, r->samples->head);
		CHECK_EQ(g->samples->dropped, r->samples->dropped);
		/* field by field (a compound literal's padding is not set); the ring is never drained,
		 * so it holds the first LAT_SAMPLE_RING and drops the rest */
		CHECK(r->samples->head > 1000);
		for (uint64_t i = 0; i < r->samples->head && i < LAT_SAMPLE_RING; i++) {
			const struct lat_sample *x = &g->samples->ring[i], *y = &r->samples->ring[i];
			CHECK(x->tx_ns == y->tx_ns && x->rx_ns == y->rx_ns && x->flow == y->flow && x->seq == y->seq &&
			      x->port == y->port && x->session == y->session && x->kind == y->kind);
		}
	}
}

static void burst_path(bool samples)
{
	static struct rig g;
	static struct ref_rig r;
	uint8_t frames[LAT_BATCH][LATENCY_PROBE_LEN];
	int64_t prev = 2000;

	rig_init(&g, samples);
	ref_rig_init(&r, samples);
	for (unsigned burst = 0; burst < 20000; burst++) {
		struct lat_batch b;
		struct lat_gather gt;
		unsigned n = 1 + (unsigned)(test_rand() % LAT_BATCH);
		uint16_t port = (uint16_t)(test_rand() % N_PORTS);
		uint64_t rx_ns = 1000000000000 + (uint64_t)burst * 10000;
		unsigned q = (unsigned)(test_rand() % N_RXQ);

		for (unsigned i = 0; i < N_PP; i++) /* the ping-pong QPs' current messages */
			g.ql[i].wait_seq = (uint32_t)(test_rand() % 4);
		lat_batch_start(&g.l, &b, &gt, port);
		for (unsigned i = 0; i < n; i++) {
			struct latency_probe pr = {.session = SESSION, .flow = (uint32_t)(test_rand() % (N_QPS + 1)),
						   .seq = (uint32_t)(test_rand() % 4)};
			uint64_t r2 = test_rand();
			bool has_qp = r2 % 8 != 0; /* else no receiver QP (a duplicate, the table full) */
			uint64_t rxi = r2 % 5 == 0 ? rx_ns + (r2 >> 40) : rx_ns; /* mostly the burst's time */

			if (r2 % 3 == 0) /* a run on one receiver QP, else another */
				q = (unsigned)(test_rand() % N_RXQ);
			prev = draw_transit(prev);
			pr.tx_ns = rxi - (uint64_t)prev;
			if (test_rand() % 6 == 0)
				pr.flags = LATENCY_PROBE_PINGPONG;
			if (test_rand() % 10 == 0)
				pr.session = SESSION + 1; /* another process's */
			latency_probe_write(frames[i], &pr);
			CHECK(lat_probe_is(frames[i], LATENCY_PROBE_LEN));
			ref_probe(&r, &g, port, has_qp ? &r.lat_slot[q] : NULL, &pr, rxi);
			lat_batch_add(&g.l, &b, &gt, has_qp ? &g.lat_slot[q] : NULL, frames[i], rxi);
		}
		lat_batch_end(&b, &gt);
		lat_batch_commit(&g.l, &b);
		CHECK_EQ(b.n, 0);
		for (unsigned i = 0; i < N_PP; i++) /* as the TX lcore would, once it saw it back */
			g.ql[i].wait_seq = 99;
	}
	check_rigs(&g, &r);
	free(g.samples);
	free(r.samples);
}

static void test_burst_path(void) { burst_path(false); }
static void test_burst_path_samples(void) { burst_path(true); }

static void test_probe_is(void)
{
	uint8_t p[LATENCY_PROBE_LEN];

	latency_probe_write(p, &(struct latency_probe){.flow = 1});
	CHECK(lat_probe_is(p, LATENCY_PROBE_LEN));
	CHECK(!lat_probe_is(p, LATENCY_PROBE_LEN - 1));
	p[4] = 2;
	CHECK(!lat_probe_is(p, LATENCY_PROBE_LEN));
	p[4] = LATENCY_PROBE_VERSION;
	p[3] ^= 1;
	CHECK(!lat_probe_is(p, LATENCY_PROBE_LEN));
}

int main(void)
{
	RUN(test_record_one_by_one);
	RUN(test_record_runs);
	RUN(test_record_bounds);
	RUN(test_merge);
	RUN(test_probe_is);
	RUN(test_burst_path);
	RUN(test_burst_path_samples);
	return testlib_finish("test_latency");
}

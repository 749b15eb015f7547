/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "latency.h"

const char *const lat_kind_name[LAT_KIND_COUNT] = {"oneway", "rtt", "ack"};

void lat_stats_init(struct lat_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->min = UINT64_MAX;
	hist_init(&s->h);
}

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

void lat_stats_merge(struct lat_stats *dst, const struct lat_stats *src)
{
	uint64_t j = LOAD(src->jitter16), min = LOAD(src->min), max = LOAD(src->max);

	/* the buckets (they make dst->h.count) and overflows; a merged src's sums and extremes */
	hist_merge(&dst->h, &src->h);
	/* a live src's sums and extremes (neutral in a merged one) */
	dst->h.sum += LOAD(src->sum);
	dst->h.sum_sq += hist_load_u128(src->sum_sq_w);
	if (min < dst->h.min)
		dst->h.min = min;
	if (max > dst->h.max)
		dst->h.max = max;
	if (j > dst->jitter16)
		dst->jitter16 = j;
	dst->negative += LOAD(src->negative);
}

void lat_hist_interval(struct hist *out, const struct hist *now, const struct hist *before)
{
	hist_init(out);
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		out->buckets[i] = now->buckets[i] - before->buckets[i];
		out->count += out->buckets[i];
	}
	out->sum = now->sum - before->sum;
	out->min = 0; /* unknown for the interval: no clamping */
	out->max = UINT64_MAX;
}

void lat_samples_csv_header(FILE *csv) { fprintf(csv, "kind,port,session,flow,seq,tx_ns,rx_ns,latency_ns\n"); }

unsigned lat_samples_drain(struct lat_samples *r, FILE *csv)
{
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE), tail = r->tail;
	unsigned n = 0;

	for (; tail != head; tail++, n++) {
		const struct lat_sample *s = &r->ring[tail % LAT_SAMPLE_RING];
		fprintf(csv, "%s,%u,%u,%u,%u,%llu,%llu,%lld\n", lat_kind_name[s->kind], s->port, s->session, s->flow,
			s->seq, (unsigned long long)s->tx_ns, (unsigned long long)s->rx_ns,
			(long long)(s->rx_ns - s->tx_ns));
	}
	__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
	return n;
}

/* ---- the rare paths of a burst's probes (latency.h) ---------------------------------------- */

/* The fields of a probe that lat_probe_is() accepted. */
static void probe_fields(const uint8_t *probe, struct latency_probe *pr)
{
	if (!latency_probe_read(probe, LATENCY_PROBE_LEN, pr))
		memset(pr, 0, sizeof(*pr)); /* not reached */
}

bool lat_rx_returned(const struct lat_rx *l, uint16_t port, const uint8_t *probe)
{
	struct latency_probe pr;
	const struct qp_latency *ql;

	probe_fields(probe, &pr);
	if (!(pr.flags & LATENCY_PROBE_PINGPONG) || pr.session != l->session || pr.flow >= l->n_flows)
		return false;
	ql = l->lat_of_flow[pr.flow];
	return ql && ql->pp >= 0 && ql->port == port;
}

struct lat_stats *lat_rx_slot(struct lat_rx *l, uint16_t port, uint32_t *slot)
{
	if (slot && *slot == 0 && l->used_slots < l->n_slots) {
		l->slot_port[l->used_slots] = port;
		/* published after its port: readers take used_slots, then the ports below it */
		__atomic_store_n(&l->used_slots, l->used_slots + 1, __ATOMIC_RELEASE);
		*slot = l->used_slots;
	}
	return slot && *slot ? &l->slots[*slot - 1] : &l->no_slot[port];
}

void lat_rx_one(struct lat_rx *l, const struct lat_batch *b, unsigned k)
{
	struct latency_probe pr;
	uint64_t rx_ns = b->rx_ns[k];
	uint16_t port = b->port;
	struct qp_latency *ql;

	probe_fields(b->probe[k], &pr);
	if (b->s[k]) {
		lat_record(b->s[k], b->transit[k]);
		lat_sample_put(l->samples, &(struct lat_sample){.tx_ns = pr.tx_ns, .rx_ns = rx_ns, .flow = pr.flow,
								 .seq = pr.seq, .port = port, .session = pr.session,
								 .kind = LAT_ONEWAY});
		return;
	}
	/* a round trip when it is the last probe of the message (the QP is released then) */
	ql = l->lat_of_flow[pr.flow];
	if (pr.seq != __atomic_load_n(&ql->wait_seq, __ATOMIC_ACQUIRE))
		return; /* a probe of the message before its last packet: not a round trip */
	lat_record(&l->rtt[ql->pp], b->transit[k]);
	lat_sample_put(l->samples, &(struct lat_sample){.tx_ns = pr.tx_ns, .rx_ns = rx_ns, .flow = pr.flow,
							 .seq = pr.seq, .port = port, .session = pr.session,
							 .kind = LAT_RTT});
	__atomic_store_n(&ql->back, pr.seq, __ATOMIC_RELEASE);
}

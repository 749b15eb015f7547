/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "latency.h"
#include "requester.h"

const char *const lat_kind_name[LAT_KIND_COUNT] = {"oneway", "rtt", "ack"};

void lat_stats_init(struct lat_stats *s)
{
	memset(s, 0, sizeof(*s));
	hist_init(&s->h);
}

void lat_stats_merge(struct lat_stats *dst, const struct lat_stats *src)
{
	uint64_t j = __atomic_load_n(&src->jitter16, __ATOMIC_RELAXED);

	hist_merge(&dst->h, &src->h);
	if (j > dst->jitter16)
		dst->jitter16 = j;
	dst->negative += __atomic_load_n(&src->negative, __ATOMIC_RELAXED);
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

/* Our own ping-pong probe back on the port it left from (a reflector sent it back): a round
 * trip. The QP is released when the last probe of its message is back. */
static bool returned_ping(struct lat_rx *l, uint16_t port, const struct latency_probe *pr, uint64_t rx_ns)
{
	struct qp_latency *ql;
	int64_t rtt;

	if (!(pr->flags & LATENCY_PROBE_PINGPONG) || pr->session != l->session || pr->flow >= l->n_qps)
		return false;
	ql = l->qps[pr->flow].lat;
	if (!ql || ql->pp < 0 || l->qps[pr->flow].port != port)
		return false;
	if (pr->seq != __atomic_load_n(&ql->wait_seq, __ATOMIC_ACQUIRE))
		return true; /* a probe of the message before its last packet: not a round trip */
	rtt = (int64_t)(rx_ns - pr->tx_ns);
	lat_record(&l->rtt[ql->pp], rtt);
	lat_sample_put(l->samples, &(struct lat_sample){.tx_ns = pr->tx_ns, .rx_ns = rx_ns, .flow = pr->flow,
							 .seq = pr->seq, .port = port, .session = pr->session,
							 .kind = LAT_RTT});
	__atomic_store_n(&ql->back, pr->seq, __ATOMIC_RELEASE);
	return true;
}

void lat_rx_probe(struct lat_rx *l, uint16_t port, uint32_t *slot, const struct latency_probe *pr, uint64_t rx_ns)
{
	int64_t transit = (int64_t)(rx_ns - pr->tx_ns);

	if (returned_ping(l, port, pr, rx_ns))
		return;
	if (slot && *slot == 0 && l->used_slots < l->n_slots) {
		l->slot_port[l->used_slots] = port;
		/* published after its port: readers take used_slots, then the ports below it */
		__atomic_store_n(&l->used_slots, l->used_slots + 1, __ATOMIC_RELEASE);
		*slot = l->used_slots;
	}
	if (slot && *slot)
		lat_record(&l->slots[*slot - 1], transit);
	else
		lat_record(&l->no_slot[port], transit);
	lat_sample_put(l->samples, &(struct lat_sample){.tx_ns = pr->tx_ns, .rx_ns = rx_ns, .flow = pr->flow,
							 .seq = pr->seq, .port = port, .session = pr->session,
							 .kind = LAT_ONEWAY});
}

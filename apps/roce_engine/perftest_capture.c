/* SPDX-License-Identifier: BSD-3-Clause
 *
 * read_lat's numbers (docs/perftest.md): the engine's histograms record no READ round trips (its
 * latency probes ride in a SEND or WRITE payload), so the front end captures the requester's
 * port and times each READ from its request's first copy to the last response of its PSN range.
 * The capture is the engine's pcapng (rte_pcapng), read with libpcap at nanosecond precision; its
 * times are the bursts' TSC times, as the probes'. The statistics are exact over the samples.
 */
#include <math.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include "percentile.h"
#include "perftest_opts.h"
#include "wire.h"

#define PT_ETHERTYPE_VLAN 0x8100
#define PT_ETHERTYPE_IPV4 0x0800
#define PT_ETHERTYPE_IPV6 0x86DD
#define PT_ROCE_UDP_PORT 4791
#define PT_BTH_AND_ICRC 12         /* the least a frame needs past UDP to be read here */

/* READ request -> last response of a QP, one in flight: the request's PSN and its response
 * count give the last response's PSN, so a copy the capture lost cannot pair wrong times. */
struct pt_read_pairing {
	uint32_t packets_per_read;  /* responses per READ: ceil(size / mtu) */
	bool pending;
	uint32_t last_psn;
	uint64_t sent;              /* the request's time, ns */
	double *samples;
	size_t n, cap;
};

/* The BTH of a RoCEv2 frame (after an optional VLAN tag), or NULL. Only what pairing needs is
 * checked: a frame cut by the capture's snap length still has its headers. */
static const uint8_t *pt_bth_of(const uint8_t *d, uint32_t len)
{
	uint32_t off = 14;
	uint16_t type;

	if (len < 14)
		return NULL;
	type = wire_get16(d + 12);
	if (type == PT_ETHERTYPE_VLAN && len >= 18) {
		type = wire_get16(d + 16);
		off = 18;
	}
	if (type == PT_ETHERTYPE_IPV4 && len >= off + 20)
		off += (d[off] & 0xf) * 4u;
	else if (type == PT_ETHERTYPE_IPV6)
		off += 40;
	else
		return NULL;
	if (len < off + 8 + PT_BTH_AND_ICRC || wire_get16(d + off + 2) != PT_ROCE_UDP_PORT)
		return NULL;
	return d + off + 8;
}

static int pt_push_pair(struct pt_read_pairing *pr, double ns)
{
	if (pr->n == pr->cap) {
		size_t cap = pr->cap ? pr->cap * 2 : 1024;
		double *s = realloc(pr->samples, cap * sizeof(*s));
		if (!s)
			return -1;
		pr->samples = s;
		pr->cap = cap;
	}
	pr->samples[pr->n++] = ns;
	return 0;
}

/* t_ns: the frame's time as an integer (nanoseconds since 1970 do not fit a double's mantissa). */
static int pt_pair_frame(struct pt_read_pairing *pr, const uint8_t *d, uint32_t len, uint64_t t_ns)
{
	const uint8_t *bth = pt_bth_of(d, len);
	uint8_t opcode;
	uint32_t psn;

	if (!bth)
		return 0;
	opcode = bth[0];
	psn = wire_get24(bth + 9);
	if (opcode == WIRE_OP_RC_READ_REQUEST) { /* a retransmission keeps the first time */
		uint32_t last = (psn + pr->packets_per_read - 1) & WIRE_PSN_MASK;
		if (!pr->pending || pr->last_psn != last)
			pr->sent = t_ns;
		pr->pending = true;
		pr->last_psn = last;
	} else if ((opcode == WIRE_OP_RC_READ_RESP_LAST || opcode == WIRE_OP_RC_READ_RESP_ONLY) && pr->pending &&
		   psn == pr->last_psn) {
		if (pt_push_pair(pr, (double)(t_ns - pr->sent)))
			return -1;
		pr->pending = false;
	}
	return 0;
}

/* Every frame of the capture, in file order (the engine writes each burst as it goes). */
static int pt_read_capture(const char *path, struct pt_read_pairing *pr)
{
	char why[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, why);
	struct pcap_pkthdr *h;
	const u_char *data;
	int rc;

	if (!pc)
		return -1;
	if (pcap_datalink(pc) != DLT_EN10MB) {
		pcap_close(pc);
		return -1;
	}
	while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
		uint64_t t_ns = (uint64_t)h->ts.tv_sec * 1000000000u + (uint64_t)h->ts.tv_usec; /* nanoseconds */
		if (pt_pair_frame(pr, data, h->caplen, t_ns)) {
			rc = -1;
			break;
		}
	}
	pcap_close(pc);
	return rc == PCAP_ERROR_BREAK ? 0 : -1; /* PCAP_ERROR_BREAK: the end of the file */
}

static void pt_stats_from_samples(struct pt_run *r, double *s, size_t n)
{
	double sum = 0, sq = 0;

	percentile_sort(s, n);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	r->t_avg = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (s[i] - r->t_avg) * (s[i] - r->t_avg);
	r->iterations = n;
	r->t_min = s[0];
	r->t_max = s[n - 1];
	r->t_typical = percentile_of_sorted(s, n, 0.5);
	r->t_stdev = sqrt(sq / (double)n);
	r->t_99 = percentile_of_sorted(s, n, 0.99);
	r->t_99_9 = percentile_of_sorted(s, n, 0.999);
	r->lat_source = "perftest.results[].latency_ns: READ request -> last response, from a capture of the "
			"requester's port (full round trip)";
	r->extra = json_pack("{s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:s}", "count", (json_int_t)n, "min", r->t_min, "max",
			     r->t_max, "mean", r->t_avg, "stddev", r->t_stdev, "p50", r->t_typical, "p99", r->t_99,
			     "p99_9", r->t_99_9, "source", "capture");
}

int pt_lat_from_capture(const struct pt_opts *o, const struct pt_paths *p, struct pt_run *r)
{
	struct pt_read_pairing pr = { .packets_per_read = (uint32_t)((r->size + o->mtu - 1) / o->mtu) };
	int rc;

	if (!pr.packets_per_read)
		pr.packets_per_read = 1;
	rc = pt_read_capture(p->capture, &pr);
	if (rc == 0 && pr.n > 0) {
		if (o->hist || o->unsorted) { /* -U prints them in the order measured */
			r->samples = malloc(pr.n * sizeof(*r->samples));
			if (!r->samples) {
				free(pr.samples);
				return -1;
			}
			memcpy(r->samples, pr.samples, pr.n * sizeof(*r->samples));
			r->n_samples = pr.n;
		}
		pt_stats_from_samples(r, pr.samples, pr.n);
	} else {
		rc = -1;
	}
	free(pr.samples);
	return rc;
}

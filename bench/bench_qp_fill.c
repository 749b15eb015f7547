/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Micro-benchmark of the TX hot path without a PMD: qp_tx_fill over N UC 64-byte-payload RDMA
 * WRITE QPs of one flow group in turn, 8 packets a visit (the engine's quantum), clean-payload
 * mode, into 2,048 mbufs used in turn (plain memory: nothing is sent). Prints the minimum and
 * mean TSC cycles per packet over the trials; the per-QP state's cache footprint shows as the
 * difference between N = 1,024 and N = 65,536 (docs/performance.md, "Per-QP state").
 * Usage: bench_qp_fill [QPS] [TRIALS] [PAYLOAD]      (defaults 1024 200 64)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "requester.h"
#include "tx_payload.h"

#define MBUFS 2048
#define ROOM 2304

static void *zalloc(size_t n)
{
	void *p = aligned_alloc(64, (n + 63) / 64 * 64);

	if (!p) {
		fprintf(stderr, "bench_qp_fill: out of memory\n");
		exit(1);
	}
	return memset(p, 0, n);
}

static void group_init(struct cfg_flow_group *g, unsigned nq, unsigned payload)
{
	g->transport = CFG_UC;
	g->op_weight[CFG_OP_WRITE] = 1;
	g->msg_size.dist = CFG_SIZE_FIXED;
	g->msg_size.fixed = g->msg_size.min = g->msg_size.max = payload;
	g->ib_mtu = payload > 1024 ? 4096 : 1024;
	g->qpn = 0x100;
	g->dest_qpn = 0x10000;
	g->qpn_step = g->dest_qpn_step = 1;
	g->pkey = 0xFFFF;
	g->ip_version = 4;
	memcpy(g->dst_mac, (uint8_t[]){2, 0, 0, 0, 0, 2}, 6);
	memcpy(g->dst_ip, (uint8_t[]){192, 168, 1, 2}, 4);
	g->dscp = 26;
	g->ecn = 2;
	g->sport = 49152;
	g->sport_step = 1;
	g->pattern = CFG_PATTERN_CONSTANT;
	g->latency = CFG_LAT_OFF;
	g->max_outstanding = 32;
	g->count = nq;
}

int main(int argc, char **argv)
{
	unsigned nq = argc > 1 ? (unsigned)atoi(argv[1]) : 1024, trials = argc > 2 ? (unsigned)atoi(argv[2]) : 200;
	unsigned payload = argc > 3 ? (unsigned)atoi(argv[3]) : 64;
	static struct cfg_flow_group g;
	static struct cfg_port port;
	static struct rte_mbuf *m[MBUFS];
	const uint8_t mac[6] = {2, 0, 0, 0, 0, 1};
	const uint64_t hz = rte_get_tsc_hz() ? rte_get_tsc_hz() : 2000000000ULL;
	uint64_t best = UINT64_MAX, sum = 0;

	if (nq == 0 || trials == 0 || payload == 0 || payload > 2048) {
		fprintf(stderr, "usage: bench_qp_fill [QPS > 0] [TRIALS > 0] [PAYLOAD 1..2048]\n");
		return 2;
	}
	wire_crc_init();
	/* no EAL here, so no dynamic-field registry: the clean payloads' field takes the first word of
	 * the mbuf's dynamic area, where rte_mbuf_dynfield_register would put it */
	tx_payload_dirty_off = (int)offsetof(struct rte_mbuf, dynfield1);
	group_init(&g, nq, payload);
	port.has_ipv4 = true;
	memcpy(port.ipv4, (uint8_t[]){192, 168, 1, 1}, 4);

	struct qp_tx *qps = zalloc(sizeof(struct qp_tx) * nq);
	struct qp_group_tx *shared = zalloc(qp_tx_group_size(&g));
	size_t extra = qp_tx_extra_size(&g);
	uint8_t *extras = zalloc(extra * nq + 64);

	qp_tx_group_init(shared, &g, &port, mac, hz, 0, 1);
	for (unsigned i = 0; i < nq; i++) {
		qp_tx_init(&qps[i], shared, i, hz, 0, extras + extra * i, i);
		qps[i].clean_payload = true;
	}
	for (unsigned k = 0; k < MBUFS; k++) {
		m[k] = zalloc(sizeof(struct rte_mbuf) + 64);
		m[k]->buf_addr = zalloc(ROOM);
		m[k]->data_off = RTE_PKTMBUF_HEADROOM;
		m[k]->buf_len = ROOM;
	}
	for (unsigned t = 0; t < trials; t++) {
		uint64_t t0 = rte_rdtsc(), sent = 0, d;

		for (unsigned i = 0; i < nq; i++)
			sent += qp_tx_fill(&qps[i], m + (i * 8) % MBUFS, 8, t0, UINT64_MAX);
		d = rte_rdtsc() - t0;
		best = d < best ? d : best;
		sum += d;
		if (sent != 8ULL * nq) {
			fprintf(stderr, "bench_qp_fill: %lu packets instead of %lu\n", (unsigned long)sent,
				8UL * nq);
			return 1;
		}
	}
	printf("RESULT bench=qp_fill qps=%u payload=%u cycles_per_packet_min=%.2f cycles_per_packet_mean=%.2f\n", nq,
	       payload, (double)best / (8.0 * nq), (double)sum / trials / (8.0 * nq));
	return 0;
}

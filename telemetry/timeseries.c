/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "out_file.h"
#include "congestion.h"
#include "counters.h"
#include "stats.h"
#include "fabric_lab.h"
#include "histogram.h"
#include "report_switch.h"
#include "snapshot.h"
#include "timeseries.h"
#include "collective.h"

/* What the previous row saw, so that a row gives the interval's amounts. */
struct port_prev {
	struct port_totals t;
	uint64_t paused_ns;
	struct lat_stats lat;         /* one-way times on the port, as of the previous row */
};

struct group_prev {
	uint64_t tx_bytes, rx_payload, cnps;
};

struct link_prev {
	uint64_t frames, bytes, xoff, paused_ns, dropped, marked;
};

struct coll_prev {
	uint64_t iterations, sum_tsc;
};

struct timeseries {
	FILE *f;
	double last_s;
	unsigned long rows;
	struct port_prev port[CFG_MAX_PORTS];
	struct group_prev group[CFG_MAX_FLOW_GROUPS];
	struct link_prev link[2 * CFG_FAB_MAX_LINKS]; /* a fabric's link directions: [2l] a -> b */
	struct coll_prev coll[CFG_MAX_COLLECTIVES];
};

struct timeseries *timeseries_open(const struct run_view *run, char *err, size_t errlen, int *failed)
{
	struct timeseries *ts;

	*failed = 0;
	if (!run->cfg->timeseries[0])
		return NULL;
	ts = calloc(1, sizeof(*ts));
	if (!ts || !(ts->f = out_fopen(run->cfg->timeseries))) {
		snprintf(err, errlen, "run.timeseries: cannot write %s: %s", run->cfg->timeseries, strerror(errno));
		free(ts);
		*failed = 1;
		return NULL;
	}
	for (unsigned p = 0; p < CFG_MAX_PORTS; p++)
		lat_stats_init(&ts->port[p].lat);
	fprintf(ts->f, "time_s,kind,name,tx_gbps,tx_mpps,rx_gbps,rx_mpps,goodput_gbps,cnp_rx,pfc_rx,paused_ms,"
		       "lat_p50_ns,lat_p99_ns,lat_samples,cc_rate_gbps,queue_kb,iterations,iteration_ms,rss_mb,dropped,ecn_marked\n");
	return ts;
}

static double rate(uint64_t now, uint64_t before, double dt) { return dt > 0 ? (double)(now - before) / dt : 0; }

static void port_row(struct timeseries *ts, const struct run_view *run, unsigned p, double t_s, double dt)
{
	static struct lat_stats now;
	static struct hist iv;
	struct port_prev *pv = &ts->port[p];
	struct port_totals t;
	uint64_t paused = 0, pfc = 0, cnp;

	snapshot_port_totals(run, p, &t);
	for (unsigned pr = 0; pr < QOS_PRIORITIES; pr++) {
		paused += pfc_paused_ns(&run->pause[p], pr, rte_rdtsc());
		pfc += t.rx.pfc_rx[pr] - pv->t.rx.pfc_rx[pr];
	}
	cnp = t.rx.kind[WIRE_KIND_CNP] - pv->t.rx.kind[WIRE_KIND_CNP];
	fprintf(ts->f, "%.3f,port,%s,%.6f,%.6f,%.6f,%.6f,,%llu,%llu,%.3f", t_s, run->ports[p].name,
		rate(t.tx_bytes, pv->t.tx_bytes, dt) * 8 / 1e9, rate(t.tx_packets, pv->t.tx_packets, dt) / 1e6,
		rate(t.rx_bytes, pv->t.rx_bytes, dt) * 8 / 1e9, rate(t.rx_frames, pv->t.rx_frames, dt) / 1e6,
		(unsigned long long)cnp, (unsigned long long)pfc, (double)(paused - pv->paused_ns) / 1e6);
	if (run->lat_live && snapshot_lat_port(run, p, LAT_ONEWAY, &now)) {
		lat_hist_interval(&iv, &now.h, &pv->lat.h);
		pv->lat = now;
		if (iv.count)
			fprintf(ts->f, ",%llu,%llu,%llu,,,,,,,\n", (unsigned long long)hist_percentile(&iv, 50),
				(unsigned long long)hist_percentile(&iv, 99), (unsigned long long)iv.count);
		else
			fprintf(ts->f, ",,,0,,,,,,,\n");
	} else {
		fprintf(ts->f, ",,,,,,,,,,\n");
	}
	pv->t = t;
	pv->paused_ns = paused;
}

/* A flow group's QPs together: what they sent, what their local receivers got, CNPs, and the sum
 * of their congestion-control rates (cc_sum / n_cc is the mean). */
struct group_now {
	struct group_prev c;
	int dst;                      /* the local receiving port, or -1 */
	double cc_sum;
	unsigned n_cc;
};

/* Every group's sums, in one pass over the QPs. */
static void sum_groups(const struct run_view *run, struct group_now *now)
{
	for (unsigned g = 0; g < run->cfg->n_groups; g++)
		now[g] = (struct group_now){.dst = snapshot_flow_dst_port(run, &run->cfg->groups[g])};
	for (unsigned q = 0; q < run->n_qps; q++) {
		const struct qp_tx *qp = &run->qps[q];
		struct group_now *n = &now[qp->group - run->cfg->groups];
		struct rx_qp_counters rx;

		n->c.tx_bytes += stat_read(&qp->c.tx_bytes);
		if (n->dst >= 0 && snapshot_rx_qp(run, (unsigned)n->dst, qp->dest_qpn, &rx))
			n->c.rx_payload += rx.payload_bytes;
		if (qp->cc) {
			struct cc_view v;
			congestion_view(qp->cc, &v);
			n->c.cnps += v.cnps;
			n->cc_sum += (double)v.rate_kbps * 1e-6;
			n->n_cc++;
		}
	}
}

static void group_row(struct timeseries *ts, const struct run_view *run, unsigned g, const struct group_now *now,
		      double t_s, double dt)
{
	struct group_prev *gv = &ts->group[g];

	fprintf(ts->f, "%.3f,flow,%s,%.6f,,,,", t_s, run->cfg->groups[g].name,
		rate(now->c.tx_bytes, gv->tx_bytes, dt) * 8 / 1e9);
	if (now->dst >= 0)
		fprintf(ts->f, "%.6f", rate(now->c.rx_payload, gv->rx_payload, dt) * 8 / 1e9);
	fprintf(ts->f, ",%llu,,,,,,", (unsigned long long)(now->c.cnps - gv->cnps));
	if (now->n_cc)
		fprintf(ts->f, "%.6f", now->cc_sum / now->n_cc);
	fputs(",,,,,,\n", ts->f);
	*gv = now->c;
}

/* A fabric link direction ("LINK:FROM>TO"): its rate, the XOFF its receiver sent (pfc_rx: what the
 * sender received), the time its sender was paused and, sent by a switch, what its port had
 * queued at the interval's end (every class; a NIC's queue is its QPs' and is not sampled). */
static void link_row(struct timeseries *ts, const struct run_view *run, unsigned l, bool a_to_b, double t_s, double dt)
{
	struct link_prev *lv = &ts->link[2 * l + (a_to_b ? 0 : 1)], now;
	struct fab_link_dir d;

	report_fabric_link_dir(run, l, a_to_b, rte_rdtsc(), &d);
	now = (struct link_prev){.frames = d.frames, .bytes = d.bytes, .dropped = d.dropped, .marked = d.marked};
	for (unsigned k = 0; k < 8; k++)
		now.xoff += d.xoff_sent[k], now.paused_ns += d.paused_ns[k];
	fprintf(ts->f, "%.3f,link,%s:%s>%s,%.6f,%.6f,,,,,%llu,%.3f,,,,,", t_s, run->fab->cfg->links[l].name, d.from, d.to,
		rate(now.bytes, lv->bytes, dt) * 8 / 1e9, rate(now.frames, lv->frames, dt) / 1e6,
		(unsigned long long)(now.xoff - lv->xoff), (double)(now.paused_ns - lv->paused_ns) / 1e6);
	if (d.from_switch)
		fprintf(ts->f, "%.3f", (double)d.queue_bytes / 1024);
	fprintf(ts->f, ",,,,%llu,%llu\n", (unsigned long long)(now.dropped - lv->dropped),
		(unsigned long long)(now.marked - lv->marked));
	*lv = now;
}

/* A collective: the iterations it completed in the interval and their mean time (from each one's
 * first phase's start to its end; empty without one). */
static void collective_row(struct timeseries *ts, const struct run_view *run, unsigned c, double t_s)
{
	struct coll_prev *cv = &ts->coll[c];
	uint64_t n, sum, max;

	collective_iterations(&run->collectives[c], &n, &sum, &max);
	fprintf(ts->f, "%.3f,collective,%s,,,,,,,,,,,,,,%llu,", t_s, run->cfg->collectives[c].name,
		(unsigned long long)(n - cv->iterations));
	if (n > cv->iterations)
		fprintf(ts->f, "%.4f", (double)(sum - cv->sum_tsc) / (double)(n - cv->iterations) * 1e3 /
					       (double)run->tsc_hz);
	fputs(",,,\n", ts->f);
	cv->iterations = n;
	cv->sum_tsc = sum;
}

/* The engine process: its resident memory (a soak's leak check). */
static void process_row(struct timeseries *ts, double t_s)
{
	fprintf(ts->f, "%.3f,process,engine,,,,,,,,,,,,,,,,%.3f,,\n", t_s, (double)snapshot_resident_bytes() / (1 << 20));
}

void timeseries_rows(struct timeseries *ts, const struct run_view *run, double t_s)
{
	static struct group_now now[CFG_MAX_FLOW_GROUPS]; /* the main lcore's only */
	double dt;

	if (!ts)
		return;
	dt = t_s - ts->last_s;
	for (unsigned p = 0; p < run->n_ports; p++, ts->rows++)
		port_row(ts, run, p, t_s, dt);
	sum_groups(run, now);
	for (unsigned g = 0; g < run->cfg->n_groups; g++, ts->rows++)
		group_row(ts, run, g, &now[g], t_s, dt);
	for (unsigned l = 0; run->fab && l < run->fab->cfg->n_links; l++, ts->rows += 2) {
		link_row(ts, run, l, true, t_s, dt);
		link_row(ts, run, l, false, t_s, dt);
	}
	for (unsigned c = 0; run->collectives && c < run->cfg->n_collectives; c++, ts->rows++)
		collective_row(ts, run, c, t_s);
	process_row(ts, t_s);
	ts->rows++;
	ts->last_s = t_s;
	fflush(ts->f);
}

unsigned long timeseries_count(const struct timeseries *ts) { return ts ? ts->rows : 0; }

unsigned long timeseries_close(struct timeseries *ts)
{
	unsigned long n;

	if (!ts)
		return 0;
	n = ts->rows;
	fclose(ts->f);
	free(ts);
	return n;
}

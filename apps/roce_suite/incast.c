/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The incast suite, after RFC 8239's incast test: for each N of `senders`, N hosts send to one
 * receiver through the lab switch (the lab is generated for each N). Two trials per N:
 *  - steady: every sender at its rate for the trial's duration: aggregate and per-sender goodput,
 *    Jain's fairness index, frame loss, PFC (XOFF frames, the senders' paused time), ECN marks;
 *  - completion (transfer_kb > 0): every sender writes transfer_kb to the receiver in `rounds`
 *    lock-step rounds (an engine collective of type incast): per-round completion time, as the
 *    collective step of a training job sees it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab.h"
#include "metrics.h"
#include "suite.h"
#include "trial.h"
#include "verdict.h"

#define MAX_SENDERS 8
#define COMPLETION_CAP_S 10.0     /* a completion trial is stopped after the larger of this and 20 x duration */

struct steady {
	bool ran;
	bool lossless;                /* the switch's PFC covers the incast's priority */
	struct metrics all;
	double per_sender[MAX_SENDERS];
	double paused_pct;            /* the senders' mean paused time at the priority, % of the run */
};

struct completion {
	bool ran;
	unsigned rounds_done;
	double min_us, p50_us, max_us, mean_us, total_us;
	uint64_t retransmits, lost;
};

static unsigned frame_of(const struct incast_cfg *c)
{
	return c->mtu + ROCE_FRAME_OVERHEAD;
}

static double sender_gbps(const struct suite_cfg *s)
{
	return s->incast.rate_gbps ? s->incast.rate_gbps : link_frame_gbps(s->lab.host_gbps, frame_of(&s->incast));
}

/* N senders h0.. and the receiver r; steady: one single-packet UC SEND flow each; completion:
 * one WRITE of transfer_kb each, in an incast collective of `rounds` phases. */
static void build(const struct suite_cfg *s, unsigned n, bool transfer, struct lab *l)
{
	const struct incast_cfg *c = &s->incast;
	config_setting_t *coll = NULL, *names = NULL;
	char host[16], name[16];

	lab_init(l, s);
	for (unsigned i = 0; i < n; i++) {
		snprintf(host, sizeof(host), "h%u", i);
		lab_add_host(l, host, s->lab.host_gbps);
	}
	lab_add_host(l, "r", s->lab.link_gbps);
	if (transfer) {
		coll = config_setting_add(config_setting_add(config_root_setting(&l->cfg), "collectives", CONFIG_TYPE_LIST),
					  NULL, CONFIG_TYPE_GROUP);
		cfg_set_string(coll, "name", "incast");
		cfg_set_string(coll, "type", "incast");
		cfg_set_int(coll, "phases", c->rounds);
		names = config_setting_add(coll, "flows", CONFIG_TYPE_ARRAY);
	}
	for (unsigned i = 0; i < n; i++) {
		snprintf(host, sizeof(host), "h%u", i);
		snprintf(name, sizeof(name), "f%u", i);
		lab_add_flow(l, &(struct lab_flow){ .name = name, .from = host, .to = "r",
						    .transport = transfer ? c->transport : "uc",
						    .op = transfer ? "write" : "send",
						    .message_size = transfer ? c->transfer_kb * 1024 : c->mtu, .ib_mtu = c->mtu,
						    .priority = c->priority, .rate_gbps = sender_gbps(s) });
		if (names)
			config_setting_set_string(config_setting_add(names, NULL, CONFIG_TYPE_STRING), name);
	}
	lab_finish(l, s);
}

static struct steady run_steady(struct runner *rn, const struct suite_cfg *s, unsigned n)
{
	struct steady st = { 0 };
	struct switch_view v;
	struct trial t;
	struct lab l;

	trial_init(&t, "steady", "%u senders, steady", n);
	json_object_set_new(t.params, "senders", json_integer(n));
	json_object_set_new(t.params, "sender_gbps", json_real(sender_gbps(s)));
	build(s, n, false, &l);
	switch_view_read(&l.cfg, &v);
	st.lossless = v.lossless >> s->incast.priority & 1;
	if (!rn->stop && !trial_measure(rn, &l.cfg, &t, NULL, &st.all)) {
		const json_t *f;
		size_t i;
		st.ran = true;
		json_array_foreach(json_object_get(t.report, "flows"), i, f)
			if (i < MAX_SENDERS)
				st.per_sender[i] = jnum(f, "goodput_gbps");
		/* paused_ms is the longest any sender was paused: a bound of the mean, as a share */
		st.paused_pct = st.all.duration_s > 0 ? st.all.paused_ms[s->incast.priority] / 10 / st.all.duration_s : 0;
		trial_verdict(rn, &t, "info", "goodput %.3f Gb/s, lost %llu (%.3f %%), XOFF %llu, ECN %llu",
			      st.all.goodput_gbps, (unsigned long long)st.all.lost, st.all.loss_pct,
			      (unsigned long long)st.all.sw_xoff, (unsigned long long)st.all.sw_ecn_marked);
	}
	lab_free(&l);
	trial_release(&t);
	return st;
}

static void read_rounds(const json_t *coll, struct completion *c)
{
	const json_t *times = json_object_get(coll, "phase_completion_us");
	double x[4096];
	unsigned n = 0;

	for (size_t i = 0; i < json_array_size(times) && n < 4096; i++)
		x[n++] = json_number_value(json_array_get(times, i));
	c->rounds_done = n;
	c->total_us = jnum(coll, "total_us");
	for (unsigned i = 0; i < n; i++)
		c->mean_us += x[i] / n;
	c->p50_us = percentile(x, n, 50);
	c->min_us = n ? x[0] : 0;     /* sorted by percentile() */
	c->max_us = n ? x[n - 1] : 0;
}

static struct completion run_completion(struct runner *rn, const struct suite_cfg *s, unsigned n)
{
	struct completion c = { 0 };
	struct metrics m;
	struct trial t;
	struct lab l;

	trial_init(&t, "completion", "%u senders, %u x %u KB", n, s->incast.rounds, s->incast.transfer_kb);
	t.duration_s = fmax(COMPLETION_CAP_S, 20 * rn->duration_s); /* a cap: the rounds end the run */
	json_object_set_new(t.params, "senders", json_integer(n));
	json_object_set_new(t.params, "transfer_kb", json_integer(s->incast.transfer_kb));
	json_object_set_new(t.params, "rounds", json_integer(s->incast.rounds));
	build(s, n, true, &l);
	if (!rn->stop && !trial_measure(rn, &l.cfg, &t, NULL, &m)) {
		c.ran = true;
		read_rounds(json_array_get(json_object_get(t.report, "collectives"), 0), &c);
		c.retransmits = m.retransmits;
		c.lost = m.lost;
		json_object_set_new(t.record, "rounds_completed", json_integer(c.rounds_done));
		trial_verdict(rn, &t, c.rounds_done == s->incast.rounds ? "info" : "fail",
			      "%u of %u rounds, mean %.1f us, max %.1f us, retransmits %llu", c.rounds_done, s->incast.rounds,
			      c.mean_us, c.max_us, (unsigned long long)c.retransmits);
	}
	lab_free(&l);
	trial_release(&t);
	return c;
}

static int list_width(const struct incast_cfg *c)
{
	unsigned most = 0;

	for (unsigned k = 0; k < c->n_senders; k++)
		most = c->senders[k] > most ? c->senders[k] : most;
	return most * 6 > 16 ? (int)most * 6 : 16;
}

/* The row's verdicts: a lossless priority loses nothing, every round of the transfer completes. */
static void row_verdicts(struct runner *rn, const struct suite_cfg *s, unsigned n, const struct steady *st,
			 const struct completion *c)
{
	if (st->ran && st->lossless)
		suite_verdict(rn, st->all.lost == 0, "lossless", "%u senders, priority %u under PFC: %llu frames lost", n,
			      s->incast.priority, (unsigned long long)st->all.lost);
	if (c->ran)
		suite_verdict(rn, c->rounds_done == s->incast.rounds, "completion", "%u senders: %u of %u rounds completed", n,
			      c->rounds_done, s->incast.rounds);
}

static json_t *row(struct runner *rn, const struct suite_cfg *s, unsigned n, const struct steady *st,
		   const struct completion *c)
{
	const struct incast_cfg *ic = &s->incast;
	double bytes = (double)n * ic->transfer_kb * 1024;
	double goodput = c->mean_us > 0 ? bytes * 8 / c->mean_us / 1e3 : 0;
	double link = s->lab.link_gbps * ic->mtu / (frame_of(ic) + WIRE_GAP_BYTES); /* payload Gb/s the port can carry */
	/* the steady trial: N senders' load into the port, up to its frame capacity */
	struct machine busy = machine_judge(metrics_received_gbps(&st->all, frame_of(ic)),
					    st->ran ? fmin(n * sender_gbps(s), link_frame_gbps(s->lab.link_gbps, frame_of(ic))) : 0,
					    &st->all);
	json_t *per = json_array(), *r;
	char list[160] = "";

	for (unsigned i = 0; i < n; i++) {
		json_array_append_new(per, json_real(st->per_sender[i]));
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%.3f", i ? " " : "", st->per_sender[i]);
	}
	printf("  %3u  %9.4f  %6.1f  %-*s  %6.4f  %7.3f  %8llu  %7.1f  %8llu", n, st->all.goodput_gbps,
	       100 * st->all.goodput_gbps / link, list_width(ic), list, jain_index(st->per_sender, n), st->all.loss_pct,
	       (unsigned long long)st->all.sw_xoff, st->paused_pct, (unsigned long long)st->all.sw_ecn_marked);
	if (ic->transfer_kb)
		printf("  %9.1f  %9.1f  %8.3f", c->mean_us, c->max_us, goodput);
	printf("%s\n", st->ran && (c->ran || !ic->transfer_kb) ? "" : "  (a trial failed)");
	r = json_pack("{s:i,s:b,s:f,s:f,s:o,s:f,s:I,s:I,s:f,s:I,s:I,s:f,s:I,s:b,s:i,s:f,s:f,s:f,s:f,s:f,s:I,s:f}",
			 "senders", n, "steady_ran", st->ran, "aggregate_goodput_gbps", st->all.goodput_gbps,
			 "pct_of_link", 100 * st->all.goodput_gbps / link, "per_sender_goodput_gbps", per, "jain_index",
			 jain_index(st->per_sender, n), "sent", (json_int_t)st->all.sent, "lost", (json_int_t)st->all.lost,
			 "loss_pct", st->all.loss_pct, "xoff_tx", (json_int_t)st->all.sw_xoff, "ecn_marked",
			 (json_int_t)st->all.sw_ecn_marked, "paused_pct", st->paused_pct, "ecn_ce", (json_int_t)st->all.ecn_ce,
			 "completion_ran", c->ran, "rounds_completed", c->rounds_done, "completion_mean_us", c->mean_us,
			 "completion_p50_us", c->p50_us, "completion_min_us", c->min_us, "completion_max_us", c->max_us,
			 "completion_total_us", c->total_us, "retransmits", (json_int_t)c->retransmits,
			 "transfer_goodput_gbps", goodput);
	machine_record(rn, r, &busy, "%u senders (steady)", n);
	row_verdicts(rn, s, n, st, c);
	return r;
}

int suite_incast(struct runner *rn, const struct suite_cfg *s, json_t *out)
{
	const struct incast_cfg *c = &s->incast;
	struct steady st[SUITE_MAX_LIST];
	struct completion cp[SUITE_MAX_LIST];
	json_t *rows;

	memset(cp, 0, sizeof(cp));
	for (unsigned k = 0; k < c->n_senders; k++) {
		st[k] = run_steady(rn, s, c->senders[k]);
		if (c->transfer_kb)
			cp[k] = run_completion(rn, s, c->senders[k]);
	}
	if (runner_refused(rn))
		return -1;
	rows = json_array();
	printf("\nRFC 8239 incast: N senders at %.3f Gb/s each into one %.3g Gb/s port, %u B payload per packet, "
	       "priority %u\n"
	       "  %3s  %9s  %6s  %-*s  %6s  %7s  %8s  %7s  %8s",
	       sender_gbps(s), s->lab.link_gbps, c->mtu, c->priority, "N", "goodput", "% link", list_width(c),
	       "per-sender Gb/s", "Jain", "loss %", "XOFF tx", "paused%", "ECN mark");
	if (c->transfer_kb)
		printf("  %9s  %9s  %8s  (%u rounds of %u KB each, %s)", "round us", "max us", "Gb/s", c->rounds,
		       c->transfer_kb, c->transport);
	printf("\n");
	for (unsigned k = 0; k < c->n_senders; k++)
		json_array_append_new(rows, row(rn, s, c->senders[k], &st[k], &cp[k]));
	json_object_set_new(out, "incast", json_pack("{s:f,s:i,s:i,s:i,s:i,s:s,s:o}", "sender_gbps", sender_gbps(s), "mtu",
						     c->mtu, "transfer_kb", c->transfer_kb, "rounds", c->rounds, "priority",
						     c->priority, "transport", c->transport, "results", rows));
	return rn->stop ? -1 : 0;
}

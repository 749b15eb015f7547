/* SPDX-License-Identifier: BSD-3-Clause
 *
 * §5.3 burst absorption (after RFC 9004): N hosts each send a burst of B frames at their line
 * rate, at the same moment, to one host, on a lossy class; B is searched (bisection over
 * 1..max_frames) for the longest burst the fabric absorbs without a loss, for each N of
 * burst.ratios. The destination is the fabric's last host and the senders are taken from its own
 * leaf first, so that the burst meets one switch's buffer (the destination's port), as the
 * draft's DUT; larger N take hosts of the other leaves too. Each burst length runs `repeats`
 * times and passes only when none of them loses a frame.
 *
 * What the settings imply: N line-rate senders fill the destination's egress queue with N frames
 * per frame time while it drains one, so a burst of B frames each leaves (N - 1) x B frames
 * queued at its end; the lossy queue's threshold (the switch's queue_limit_bytes, or the whole
 * buffer, or alpha x buffer / (1 + alpha) with the dynamic threshold and this queue alone) caps
 * it. So the capacity expected is threshold / ((N - 1) x frame) frames per sender, and the loss
 * that ends the search happens at the destination's port, whose queue peaked at the threshold.
 * Both are recorded per N (expected_frames; the drops toward the destination and the peak queue
 * of the first lossy trial) and, when the machine kept pace, judged: the search's bracket
 * [absorbed, first loss) holds the expected capacity within 5 %, and the loss was the queue's
 * (the drops were of frames bound for the destination, whose queue peaked at the threshold).
 * On a real switch tier (fabric.external) its buffer and queues are its own: the search and its
 * bracket are reported, a loss is the flows' (sent, never received), nothing is expected.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aif_ctx.h"
#include "verdict.h"

struct burst_trial {
	bool ran, lossless, machine_limited, switch_drops;
	uint64_t lost, dropped;          /* the flows' losses; the switches' drops */
	uint64_t dst_dropped;            /* of those, at the destination's port (its leaf's port to it) */
	double dst_peak_bytes;           /* the peak of that port's queue of the burst's class */
	double threshold_bytes;          /* that queue's admission threshold, from the switch's report */
};

struct burst_search {
	unsigned lossless_frames;        /* the longest burst absorbed (0: none) */
	unsigned lossy_frames;           /* the shortest that lost (0: none up to max_frames) */
	unsigned trials;
	struct burst_trial at_lossless, at_lossy;
	bool machine_limited;
};

/* What the switches dropped of the frames bound for egress port `dst` (per flow: drops are
 * counted at the ingress port, the flows name their egress). */
static uint64_t dropped_toward(const json_t *rep, const char *dst)
{
	const json_t *s, *f;
	size_t i, k;
	uint64_t n = 0;

	json_array_foreach(json_object_get(json_object_get(rep, "fabric"), "switches"), i, s)
		json_array_foreach(json_object_get(s, "flows"), k, f)
			if (!strcmp(json_string_value(json_object_get(f, "egress")) ?: "", dst))
				n += ju64(f, "dropped");
	return n;
}

/* The destination's leaf port toward it (named by its peer, the host) in the fabric report, and
 * in *sw that port's switch. */
static const json_t *dst_port(const json_t *rep, const char *dst, const json_t **sw)
{
	const json_t *s, *p;
	size_t i, k;

	json_array_foreach(json_object_get(json_object_get(rep, "fabric"), "switches"), i, s)
		json_array_foreach(json_object_get(s, "ports"), k, p)
			if (!strcmp(json_string_value(json_object_get(p, "port")) ?: "", dst)) {
				*sw = s;
				return p;
			}
	*sw = NULL;
	return NULL;
}

/* A switch's lossy threshold (static, the buffer, or alpha's with one queue alone in the buffer);
 * 0 without a switch. */
static double threshold_of(const json_t *sw)
{
	double buffer = jnum(sw, "buffer_bytes"), limit = jnum(sw, "queue_limit_bytes"), a = jnum(sw, "alpha");

	return a > 0 ? a * buffer / (1 + a) : limit > 0 ? fmin(limit, buffer) : buffer;
}

static void burst_trial(struct aif_ctx *x, unsigned n, unsigned frames, struct burst_trial *b)
{
	const struct aif_burst_cfg *bc = &x->c->burst;
	struct aif_flow f = { .message_size = bc->message_size, .priority = bc->priority, .stop_messages = frames };
	struct flow_set fs = aif_entry_flows("burst");
	struct aif_fabric_view v;
	struct aif_trial t;
	struct trial tr;
	struct metrics m;
	const char *dst_name;

	memset(b, 0, sizeof(*b));
	aif_trial_init(&t, x);
	dst_name = x->fab.hosts[aif_trial_incast(&t, x, "burst", n, true, &f)].name;
	trial_init(&tr, "burst", "%u:1 burst of %u frames into %s", n, frames, dst_name);
	if (trial_measure(x->rn, &t.cfg, &tr, &fs, &m) == 0) {
		const json_t *sw, *p = dst_port(tr.report, dst_name, &sw);
		aif_fabric_read(tr.report, &v);
		aif_fabric_to_json(&v, tr.record);
		b->ran = true;
		b->lost = m.lost;
		b->dropped = v.dropped;
		b->switch_drops = v.switch_drops;
		b->dst_dropped = dropped_toward(tr.report, dst_name);
		b->dst_peak_bytes = json_number_value(json_array_get(json_object_get(p, "max_queue_bytes"), bc->priority));
		b->threshold_bytes = threshold_of(sw);
		b->lossless = m.lost == 0 && v.dropped == 0 && m.sent == (uint64_t)frames * n;
		b->machine_limited = v.machine_limited;
		trial_verdict(x->rn, &tr, "info", "%s: %llu lost, peak queue %.0f of %.0f bytes", b->lossless ? "absorbed" : "lost",
			      (unsigned long long)b->lost, b->dst_peak_bytes, b->threshold_bytes);
	}
	trial_release(&tr);
	aif_trial_free(&t);
}

#define MACHINE_RETRIES 2 /* a burst lasts milliseconds: one hold-up of the lcore is a large share */

/* A burst length run `repeats` times: lossless only if every run was; the last run's figures
 * (the first lossy one's, when one lost). A run the machine limited is run again, up to
 * MACHINE_RETRIES times, so that one hiccup does not take the length out of the judged results. */
static void burst_length(struct aif_ctx *x, unsigned n, unsigned frames, struct burst_trial *b)
{
	for (unsigned k = 0; k < x->c->burst.repeats && !x->rn->stop; k++) {
		burst_trial(x, n, frames, b);
		for (unsigned r = 0; r < MACHINE_RETRIES && b->ran && b->machine_limited && !x->rn->stop; r++)
			burst_trial(x, n, frames, b);
		if (!b->ran || !b->lossless)
			return;
	}
}

/* Bisection over 1..max_frames: max_frames first (absorbed: done), then halves. */
static void burst_search(struct aif_ctx *x, unsigned n, struct burst_search *s)
{
	const struct aif_burst_cfg *bc = &x->c->burst;
	unsigned lo = 0, hi = bc->max_frames + 1, b = bc->max_frames;

	memset(s, 0, sizeof(*s));
	while (s->trials < bc->max_trials && hi - lo > 1 && !x->rn->stop) {
		struct burst_trial t = { 0 };
		burst_length(x, n, b, &t);
		s->trials++;
		if (!t.ran)
			return;
		s->machine_limited |= t.machine_limited;
		if (t.lossless) {
			lo = b;
			s->at_lossless = t;
		} else {
			hi = b;
			s->at_lossy = t;
		}
		b = lo + (hi - lo) / 2;
	}
	s->lossless_frames = lo;
	s->lossy_frames = hi <= bc->max_frames ? hi : 0;
}

static json_t *burst_row(struct aif_ctx *x, unsigned n, const struct burst_search *s, double frame, double *expected)
{
	const struct burst_trial *lossy = &s->at_lossy;
	double threshold = s->lossy_frames ? lossy->threshold_bytes : s->at_lossless.threshold_bytes;
	json_t *row;

	*expected = n > 1 && threshold > 0 ? floor(threshold / ((n - 1) * frame)) : NAN;
	row = json_pack("{s:i,s:i,s:i,s:f,s:f,s:i,s:f}", "ratio", (int)n, "absorbed_frames", (int)s->lossless_frames,
			"first_loss_frames", (int)s->lossy_frames, "absorbed_bytes", s->lossless_frames * frame * n,
			"frame_bytes", frame, "trials", (int)s->trials, "threshold_bytes", threshold);
	json_object_set_new(row, "expected_frames", isnan(*expected) ? json_null() : json_real(*expected));
	if (x->c->external) /* (the switch tier's threshold and queues are its own) */
		json_object_set_new(row, "threshold_bytes", json_null());
	if (s->lossy_frames && x->c->external) /* (the switch tier's drops and queues are its own) */
		json_object_set_new(row, "first_loss", json_pack("{s:I,s:o,s:n,s:n}", "lost", (json_int_t)lossy->lost, "dropped",
								 lossy->switch_drops ? json_integer((json_int_t)lossy->dropped)
										     : json_null(),
								 "dropped_at_destination_port", "peak_queue_bytes"));
	else if (s->lossy_frames)
		json_object_set_new(row, "first_loss", json_pack("{s:I,s:I,s:I,s:f}", "lost", (json_int_t)lossy->lost,
								 "dropped", (json_int_t)lossy->dropped,
								 "dropped_at_destination_port", (json_int_t)lossy->dst_dropped,
								 "peak_queue_bytes", lossy->dst_peak_bytes));
	if (s->lossless_frames)
		json_object_set_new(row, "peak_queue_bytes_absorbed",
				    x->c->external ? json_null() : json_real(s->at_lossless.dst_peak_bytes));
	{
		char first[16] = "none";
		if (s->lossy_frames)
			snprintf(first, sizeof(first), "%u", s->lossy_frames);
		printf("  %5u:1  %9u  %9s  %10.0f  %9.0f  %3u\n", n, s->lossless_frames, first, s->lossless_frames * frame * n,
		       *expected, s->trials);
	}
	if (s->machine_limited) {
		machine_limit(x->rn, row, "%u:1 burst: machine-limited (%s): the bursts' timing is partly the CPU's", n,
			      aif_machine_reason(x));
		return row;
	}
	if (n > 1 && !isnan(*expected)) {
		/* the bisection's bracket [absorbed, first loss) holds the expected capacity, within 5 %
		 * (the frames of one scheduling turn arrive together, not one frame time apart) */
		double top = s->lossy_frames ? s->lossy_frames : INFINITY;
		suite_verdict(x->rn, s->lossless_frames <= *expected * 1.05 + 1 && top >= *expected * 0.95 - 1,
			      "burst_capacity_as_the_threshold_implies",
			      "%u:1 burst: absorbed %u, first loss at %s%u frames per sender; the %.0f-byte threshold / "
			      "((N-1) x %.0f-byte frames) = %.0f", n, s->lossless_frames, s->lossy_frames ? "" : "none up to ",
			      s->lossy_frames ? s->lossy_frames : x->c->burst.max_frames, threshold, frame, *expected);
	}
	if (s->lossy_frames && n > 1 && !x->c->external)
		suite_verdict(x->rn, lossy->dst_dropped > 0 && lossy->dst_peak_bytes + 2 * frame >= lossy->threshold_bytes,
			      "burst_loss_at_the_queue_threshold",
			      "%u:1 burst of %u frames: %llu of its %llu drops at the destination's port, whose queue peaked at "
			      "%.0f of its %.0f-byte threshold", n, s->lossy_frames, (unsigned long long)lossy->dst_dropped,
			      (unsigned long long)lossy->dropped, lossy->dst_peak_bytes, lossy->threshold_bytes);
	return row;
}

int aif_burst(struct aif_ctx *x)
{
	const struct aif_burst_cfg *bc = &x->c->burst;
	double frame = aif_frame_bytes(bc->message_size), xs[AIF_MAX_LIST], got[AIF_MAX_LIST], want[AIF_MAX_LIST];
	unsigned n_rows = 0;
	json_t *rows = json_array(), *g;

	printf("\n§5.3 burst absorption: N:1 line-rate bursts of B frames, priority %u, %u repeat%s per length\n"
	       "  %7s  %9s  %9s  %10s  %9s  %3s\n", bc->priority, bc->repeats, bc->repeats == 1 ? "" : "s", "ratio",
	       "absorbed", "1st loss", "bytes", "expected", "tr");
	for (unsigned k = 0; k < bc->n_ratios && !x->rn->stop; k++) {
		unsigned n = bc->ratios[k];
		struct burst_search s;
		double expected;

		if (n >= x->fab.n_hosts) {
			aif_anomaly(x, AIF_BURST, "%u:1 burst needs %u hosts; the fabric has %u: not run", n, n + 1, x->fab.n_hosts);
			continue;
		}
		burst_search(x, n, &s);
		json_array_append_new(rows, burst_row(x, n, &s, frame, &expected));
		xs[n_rows] = n;
		got[n_rows] = s.lossless_frames;
		want[n_rows++] = isnan(expected) ? 0 : fmin(expected, bc->max_frames);
	}
	g = aif_graph(x, "burst_absorption.png", "lines", "§5.3 burst absorbed without loss, per sender", "incast ratio N",
		      "frames per sender");
	aif_series(g, "absorbed", xs, got, n_rows);
	aif_series(g, "threshold / ((N-1) x frame)", xs, want, n_rows);
	json_object_set_new(x->results, "burst",
			    json_pack("{s:s,s:i,s:i,s:i,s:o}", "section", "5.3", "priority", (int)bc->priority, "max_frames",
				      (int)bc->max_frames, "repeats", (int)bc->repeats, "rows", rows));
	return x->rn->stop ? -1 : 0;
}

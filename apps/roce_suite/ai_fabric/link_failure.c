/* SPDX-License-Identifier: BSD-3-Clause
 *
 * §11.2 link failure under collective load, and §11.3's zero-impact criterion: a ring AllReduce
 * of S bytes over N hosts, `iterations` in a row, first undisturbed (the steady state: each
 * iteration's time, its median and p99), then once per failure kind with links taken down in the
 * middle of iteration `fail_iteration` (half the steady median after the previous one's end), by
 * the engine's fabric.events: the routes follow convergence_ms later, as a fabric's routing
 * protocol would, and until then ECMP keeps hashing flows onto the dead links (docs/fabric.md).
 *   leaf_uplink: the leaf-spine link that carried the most bytes in the steady run;
 *   spine:       the spine at that link's far end, every link of it at once.
 * Per failure: the loss window and frames lost (fabric.events), the flow groups hit, the reroute
 * time (routes taken over the links left), the iteration the failure fell in and its extra time
 * over the steady median, the JCT's extra, and zero impact: that iteration within the steady p99.
 *
 * What the settings imply, and is judged: the collective completes (RC's go-back-N resends what
 * the dead links ate), the failure cost frames and none after the routes converged (the loss
 * window at most the convergence delay, at the report's millisecond resolution).
 * thresholds.max_failure_extra_ms bounds the failure iteration's extra time.
 *
 * On a real switch tier (fabric.external with link_command) the links fail through the lab's own
 * command at the same moment, and come back up through it after each trial; the failure fell in
 * the slowest iteration in progress while the command ran (hit_iteration). The link is the
 * leaf uplink the switches' counters (counters_command) counted most bytes on in the steady run;
 * without them, the one roce-fabric's plan of it loads most (the switches hash their own way: it
 * may carry less). What the end hosts see is judged: the collective completes, the failure
 * iteration's extra time, zero impact, RC's retransmissions; the commands must succeed. The loss
 * window, frames lost, flows hit and reroute time are the switches' own (null).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aif_ctx.h"
#include "percentile.h"
#include "verdict.h"

static const char *const kind_names[] = { [AIF_FAIL_LEAF_UPLINK] = "leaf_uplink", [AIF_FAIL_SPINE] = "spine" };

struct steady {
	struct aif_coll_run run;
	double median_s, p99_s;
};

/* The links of failure `kind` from the steady run's busiest uplink; 0, or -1 with why in err. */
static int failure_links(const struct aif_ctx *x, enum aif_fail_kind kind, int uplink, struct aif_link_failure *f,
			 char *err, size_t len)
{
	const struct fab_link *l;
	unsigned spine, spines = 0;

	memset(f, 0, sizeof(*f));
	if (uplink < 0)
		return text_printf(err, len, "no leaf-spine link carried the collective"), -1;
	l = &x->fab.links[uplink];
	if (kind == AIF_FAIL_LEAF_UPLINK) {
		f->links[f->n_links++] = (unsigned)uplink;
		text_printf(f->what, sizeof(f->what), "%s", l->name);
		return 0;
	}
	spine = x->fab.switches[l->sw].tier == FAB_TIER_SPINE ? l->sw : l->b;
	for (unsigned s = 0; s < x->fab.n_switches; s++)
		spines += x->fab.switches[s].tier == x->fab.switches[spine].tier;
	if (spines < 2)
		return text_printf(err, len, "%s is the only switch of its tier: its loss cuts the fabric",
				   x->fab.switches[spine].name), -1;
	for (unsigned k = 0; k < x->fab.n_links; k++) {
		const struct fab_link *m = &x->fab.links[k];
		if (m->sw != spine && (m->to_nic || m->b != spine))
			continue;
		if (f->n_links == AIF_MAX_FAIL_LINKS)
			return text_printf(err, len, "%s has more than %d links (the engine's events per run)",
					   x->fab.switches[spine].name, AIF_MAX_FAIL_LINKS), -1;
		f->links[f->n_links++] = k;
	}
	text_printf(f->what, sizeof(f->what), "%s (%u links)", x->fab.switches[spine].name, f->n_links);
	return 0;
}

/* The first iteration to end after time t (iterations: none did). */
static unsigned iteration_at(const struct aif_coll_run *r, double t)
{
	double end = 0;

	for (unsigned i = 0; i < r->iterations; i++) {
		end += r->iter_s[i];
		if (end > t)
			return i;
	}
	return r->iterations;
}

/* The iteration the failure fell in: the one in progress when the links went down. On the
 * virtual fabric that is when the events applied; a real tier's links went down at some moment
 * of the command's run [applied_s, down_s], so of the iterations in progress then, the slowest
 * (the one whose frames died, stalled until RC resent them). */
static unsigned hit_iteration(const struct aif_coll_run *r, double applied_s, double down_s)
{
	unsigned first = iteration_at(r, applied_s), last = iteration_at(r, down_s), k = first;

	for (unsigned i = first + 1; i <= last && i < r->iterations; i++)
		if (r->iter_s[i] > r->iter_s[k])
			k = i;
	return k;
}

static json_t *failure_row(struct aif_ctx *x, enum aif_fail_kind kind, const struct steady *st,
			   const struct aif_link_failure *f, const struct aif_coll_run *r)
{
	const struct aif_link_failure_cfg *lc = &x->c->link_failure;
	/* a real tier's links are down by the time the command that fails them ends */
	double down_s = x->c->external && isfinite(f->command_s) ? f->applied_s + f->command_s : f->applied_s;
	unsigned k = hit_iteration(r, f->applied_s, down_s);
	double extra = k < r->iterations ? r->iter_s[k] - st->median_s : NAN;
	double reroute = f->converged_s - f->applied_s;
	bool zero = k < r->iterations && r->iter_s[k] <= st->p99_s;
	json_t *links = json_array(), *row;

	for (unsigned i = 0; i < f->n_links; i++)
		json_array_append_new(links, json_string(x->fab.links[f->links[i]].name));
	row = json_pack("{s:s,s:s,s:o,s:f,s:b}", "failure", kind_names[kind], "what", f->what, "links", links, "at_s", f->at_s,
			"ran", r->ran);
	if (!r->ran)
		return row;
	json_object_set_new(row, "applied", json_boolean(f->applied));
	json_object_set_new(row, "applied_s", json_real(f->applied_s));
	if (x->c->external) { /* (the switches' own figures) */
		json_object_set_new(row, "reroute_ms", json_null());
		json_object_set_new(row, "frames_lost", json_null());
		json_object_set_new(row, "loss_duration_ms", json_null());
		json_object_set_new(row, "flows_hit", json_null());
		json_object_set_new(row, "link_command_status", json_integer(f->command_status));
		json_object_set_new(row, "command_ms", isfinite(f->command_s) ? json_real(f->command_s * 1e3) : json_null());
		json_object_set_new(row, "down_by_s", json_real(down_s));
		json_object_set_new(row, "rc_retransmits", json_integer((json_int_t)r->v.retransmits));
	} else {
		json_object_set_new(row, "reroute_ms", json_real(reroute * 1e3));
		json_object_set_new(row, "frames_lost", json_integer((json_int_t)f->frames_lost));
		json_object_set_new(row, "loss_duration_ms", json_real(f->loss_duration_s * 1e3));
		json_object_set_new(row, "flows_hit", json_integer(f->flows_hit));
	}
	json_object_set_new(row, "iterations_completed", json_integer(r->iterations));
	json_object_set_new(row, "failure_iteration", json_integer(k));
	json_object_set_new(row, "failure_iteration_ms", json_real(k < r->iterations ? r->iter_s[k] * 1e3 : NAN));
	json_object_set_new(row, "steady_median_ms", json_real(st->median_s * 1e3));
	json_object_set_new(row, "steady_p99_ms", json_real(st->p99_s * 1e3));
	json_object_set_new(row, "extra_ms", json_real(extra * 1e3));
	json_object_set_new(row, "jct_s", json_real(r->total_s));
	json_object_set_new(row, "jct_extra_ms", json_real((r->total_s - st->run.total_s) * 1e3));
	json_object_set_new(row, "zero_impact", json_boolean(zero));
	aif_fabric_to_json(&r->v, row);
	if (x->c->external) /* (the loss and the reroute are the switches' own) */
		printf("  %-20s %8.4f %9s %8s %8s %6s %4u %9.2f %9.2f %s\n", f->what, f->applied_s, "-", "-", "-", "-", k,
		       extra * 1e3, (r->total_s - st->run.total_s) * 1e3, zero ? "yes" : "no");
	else
		printf("  %-20s %8.4f %9llu %8.1f %8.1f %6u %4u %9.2f %9.2f %s\n", f->what, f->applied_s,
		       (unsigned long long)f->frames_lost, f->loss_duration_s * 1e3, reroute * 1e3, f->flows_hit, k,
		       extra * 1e3, (r->total_s - st->run.total_s) * 1e3, zero ? "yes" : "no");
	suite_verdict(x->rn, r->iterations == lc->iterations, "link_failure_completes", "%s down: %u of %u iterations",
		      f->what, r->iterations, lc->iterations);
	if (x->c->external)
		suite_verdict(x->rn, f->applied && f->command_status == 0, "link_failure_command_succeeds",
			      "%s down at %.4f s through external.link_command: exit status %d (-1: not run)", f->what,
			      f->applied_s, f->command_status);
	if (r->v.machine_limited) {
		machine_limit(x->rn, row, "%s down: machine-limited (%s): the loss and the extra time are partly the CPU's",
			      f->what, aif_machine_reason(x));
		return row;
	}
	/* the report's loss window has a millisecond's resolution (a real tier's is its own) */
	if (!x->c->external)
		suite_verdict(x->rn, f->applied && f->frames_lost > 0 && f->loss_duration_s <= reroute + 2e-3,
		      "link_failure_loss_within_convergence", "%s down at %.4f s: %llu frames lost over %.1f ms, routes "
		      "converged after %.1f ms", f->what, f->applied_s, (unsigned long long)f->frames_lost,
		      f->loss_duration_s * 1e3, reroute * 1e3);
	if (isfinite(extra))
		aif_threshold(x, AIF_LINK_FAILURE, "failure_extra_ms", extra * 1e3, x->c->th.max_failure_extra_ms, true,
			      f->what);
	return row;
}

static int steady_state(struct aif_ctx *x, unsigned n, struct steady *st)
{
	const struct aif_link_failure_cfg *lc = &x->c->link_failure;
	double sorted[AIF_MAX_ITER];

	if (aif_collective_trial(x, KPI_ALLREDUCE, n, lc->message_size, lc->iterations, 0, NULL, &st->run) ||
	    st->run.iterations == 0)
		return -1;
	memcpy(sorted, st->run.iter_s, st->run.iterations * sizeof(double));
	percentile_sort(sorted, st->run.iterations);
	st->median_s = percentile_of_sorted(sorted, st->run.iterations, 0.50);
	st->p99_s = percentile_of_sorted(sorted, st->run.iterations, 0.99);
	if (st->run.iterations > 1)
		aif_repeatability(x, AIF_LINK_FAILURE, "steady_iteration_s", "s", st->run.iter_s, st->run.iterations);
	return 0;
}

static void iteration_series(json_t *g, const char *label, const struct aif_coll_run *r)
{
	double xs[AIF_MAX_ITER], ys[AIF_MAX_ITER];

	for (unsigned i = 0; i < r->iterations; i++) {
		xs[i] = i;
		ys[i] = r->iter_s[i] * 1e3;
	}
	aif_series(g, label, xs, ys, r->iterations);
}

int aif_link_failure(struct aif_ctx *x)
{
	const struct aif_link_failure_cfg *lc = &x->c->link_failure;
	unsigned n = lc->ranks ? lc->ranks : x->fab.n_hosts, fail_it;
	json_t *rows = json_array(), *g;
	struct steady st;
	double before = 0;
	char err[160];

	n = n > x->fab.n_hosts ? x->fab.n_hosts : n > 16 ? 16 : n;
	printf("\n§11.2 link failure under an AllReduce of %u bytes over %u hosts, %u iterations\n", lc->message_size, n,
	       lc->iterations);
	if (steady_state(x, n, &st)) {
		aif_anomaly(x, AIF_LINK_FAILURE, "not run: the steady AllReduce did not run");
		json_object_set_new(x->results, "link_failure", json_pack("{s:s,s:o}", "section", "11.2", "rows", rows));
		return x->rn->stop ? -1 : 0;
	}
	fail_it = lc->fail_iteration ? lc->fail_iteration : lc->iterations / 2;
	if (fail_it >= st.run.iterations)
		fail_it = st.run.iterations - 1;
	for (unsigned i = 0; i < fail_it; i++)
		before += st.run.iter_s[i];
	printf("  steady: median %.2f ms, p99 %.2f ms an iteration; the failure in iteration %u; the busiest uplink "
	       "from the %s\n", st.median_s * 1e3, st.p99_s * 1e3, fail_it, st.run.busiest_from ?: "-");
	printf("  %-20s %8s %9s %8s %8s %6s %4s %9s %9s %s\n", "down", "at s", "lost", "loss ms", "reroute", "flows", "iter",
	       "extra ms", "JCT+ ms", "zero impact");
	g = aif_graph(x, "link_failure.png", "lines", "§11.2 iteration times with a link failure", "iteration",
		      "iteration time (ms)");
	iteration_series(g, "steady", &st.run);
	for (unsigned k = 0; k < lc->n_failures && !x->rn->stop; k++) {
		struct aif_link_failure f;
		struct aif_coll_run r;
		char label[96];

		if (failure_links(x, lc->failures[k], st.run.busiest_uplink, &f, err, sizeof(err))) {
			aif_anomaly(x, AIF_LINK_FAILURE, "%s: not run: %s", kind_names[lc->failures[k]], err);
			continue;
		}
		f.at_s = before + st.median_s / 2;
		f.convergence_ms = lc->convergence_ms;
		aif_collective_trial(x, KPI_ALLREDUCE, n, lc->message_size, lc->iterations, 0, &f, &r);
		if (x->c->external && aif_external_links_up(x, &f)) { /* the next trials need the fabric whole */
			x->rn->stop = true;
			text_printf(x->rn->stop_reason, sizeof(x->rn->stop_reason), "a failed link could not be brought back up");
		}
		if (r.ran && !f.applied)
			aif_anomaly(x, AIF_LINK_FAILURE, "%s: the run ended before the failure", f.what);
		json_array_append_new(rows, failure_row(x, lc->failures[k], &st, &f, &r));
		text_printf(label, sizeof(label), "%s down", f.what);
		if (r.ran)
			iteration_series(g, label, &r);
	}
	json_object_set_new(x->results, "link_failure",
			    json_pack("{s:s,s:s,s:i,s:i,s:i,s:i,s:f,s:f,s:s?,s:o}", "section", "11.2", "collective",
				      "allreduce (ring)", "ranks", (int)n, "message_size", (int)lc->message_size, "iterations",
				      (int)lc->iterations, "fail_iteration", (int)fail_it, "steady_median_ms", st.median_s * 1e3,
				      "steady_p99_ms", st.p99_s * 1e3, "busiest_uplink_from", st.run.busiest_from, "rows", rows));
	return x->rn->stop ? -1 : 0;
}

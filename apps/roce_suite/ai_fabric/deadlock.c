/* SPDX-License-Identifier: BSD-3-Clause
 *
 * §7.4 PFC storm and deadlock: traffic patterns that can close a cycle of paused queues, at
 * `load` of every host's link on the lossless class for `duration_s` (the draft: 300 s), and
 * the protection the fabric showed. Patterns: "all_to_all" (every host to every other), or
 * "shift" (host i to host i + shift, hosts numbered leaf by leaf: on a ring of switches the
 * classic cyclic buffer dependency). The engine's fabric watches for a deadlock (no frame moving
 * for fabric.deadlock_ms while paused queues hold frames: fabric.deadlocks[]), and every switch
 * port's PFC watchdog, where the switch group has one, counts its storms, restores and drops.
 *
 * Per pattern: the deadlocks (how many, the longest, the share of the run stuck, whether one
 * lasted to the end), the storms, restores and the frames the watchdog dropped, the XOFF sent,
 * what the hosts received. The protection seen: "immune" (no deadlock formed), "watchdog" (every
 * deadlock broken), "cleared" (they ended without a watchdog: a pause ran out), or "none" (one
 * lasted to the end: an anomaly; one younger than the watchdog may take was about to be broken).
 *
 * What the settings imply, and is judged: a leaf-spine, rail or fat-tree routed up and down (shortest
 * paths, no link event) has no cyclic buffer dependency, so no deadlock forms
 * (deadlock_free_as_routed); and a watchdog that drops or forwards a stormed queue ends each
 * deadlock within its detection time and a margin of the machine's longest hold-up
 * (deadlock_broken_by_the_watchdog).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aif_ctx.h"
#include "config_tree.h"
#include "verdict.h"

struct deadlock_result {
	bool ran, on_at_end;
	unsigned found;
	double longest_s, stuck_s, duration_s, received_gbps, held_up_s;
	double at_end_s;                /* how long the deadlock on at the run's end had lasted (0: none) */
	uint64_t storms, restores, wd_dropped, xoff;
	struct aif_fabric_view v;
};

/* The protection seen. A deadlock still on when the run ended, younger than what the watchdog
 * may take (grace_s), was about to be broken: it does not count as one that lasted. */
static const char *protection(const struct deadlock_result *r, double grace_s, bool watchdog)
{
	if (!r->found)
		return "immune";
	if (r->on_at_end && r->at_end_s > grace_s)
		return "none";
	return watchdog ? "watchdog" : "cleared";
}

/* Every switch port's watchdog counters, summed over priorities. */
static void watchdog_totals(const json_t *rep, struct deadlock_result *r)
{
	const json_t *s, *p;
	size_t i, k;

	json_array_foreach(json_object_get(json_object_get(rep, "fabric"), "switches"), i, s)
		json_array_foreach(json_object_get(s, "ports"), k, p) {
			const json_t *w = json_object_get(p, "watchdog");
			r->storms += (uint64_t)jsum(w, "storms");
			r->restores += (uint64_t)jsum(w, "restores");
			r->wd_dropped += (uint64_t)jsum(w, "dropped");
		}
}

static void read_deadlocks(const json_t *rep, struct deadlock_result *r)
{
	const json_t *d, *l;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(rep, "fabric"), "deadlocks"), i, d) {
		double s = json_number_value(json_object_get(d, "duration_s"));
		r->found++;
		r->longest_s = fmax(r->longest_s, s);
		r->stuck_s += s;
		if (json_is_true(json_object_get(d, "on_at_end"))) {
			r->on_at_end = true;
			r->at_end_s = s;
		}
	}
	json_array_foreach(json_object_get(rep, "lcores"), i, l)
		r->held_up_s = fmax(r->held_up_s, json_number_value(json_object_get(l, "longest_held_up_ms")) / 1e3);
}

static void pattern_trial(struct aif_ctx *x, const char *pattern, struct deadlock_result *r)
{
	const struct aif_deadlock_cfg *dc = &x->c->deadlock;
	unsigned n = x->fab.n_hosts < AIF_MAX_HOSTS ? x->fab.n_hosts : AIF_MAX_HOSTS, per_host = 1;
	struct aif_flow f = { .message_size = dc->message_size, .priority = dc->priority };
	struct flow_set fs = aif_entry_flows("dl");
	struct aif_trial t;
	struct trial tr;
	struct metrics m;

	memset(r, 0, sizeof(*r));
	aif_trial_init(&t, x);
	if (!config_setting_get_member(t.fabric, "deadlock_ms"))
		cfg_set_float(t.fabric, "deadlock_ms", dc->deadlock_ms);
	if (!strcmp(pattern, "all_to_all")) {
		per_host = n - 1;
		f.rate_gbps = dc->load * aif_link_frame_gbps(x->host_gbps, dc->message_size) / per_host;
		aif_trial_pattern(&t, x, "dl", "all_to_all", NULL, 0, -1, 1, &f);
	} else {
		unsigned pairs[AIF_MAX_HOSTS][2];
		for (unsigned i = 0; i < n; i++) {
			pairs[i][0] = i;
			pairs[i][1] = (i + dc->shift) % n;
		}
		f.rate_gbps = dc->load * aif_link_frame_gbps(x->host_gbps, dc->message_size);
		aif_trial_pairs(&t, x, "dl", (const unsigned(*)[2])pairs, n, 1, &f);
	}
	trial_init(&tr, "deadlock", "%s at %.0f %% of every link, lossless class %u", pattern, 100 * dc->load, dc->priority);
	tr.duration_s = dc->duration_s > 0 ? dc->duration_s : -1;
	if (trial_measure(x->rn, &t.cfg, &tr, &fs, &m) == 0) {
		aif_fabric_read(tr.report, &r->v);
		aif_fabric_to_json(&r->v, tr.record);
		read_deadlocks(tr.report, r);
		watchdog_totals(tr.report, r);
		r->xoff = r->v.pfc_xoff;
		r->duration_s = m.duration_s;
		r->received_gbps = metrics_received_gbps(&m, aif_frame_bytes(dc->message_size));
		r->ran = true;
		trial_verdict(x->rn, &tr, "info", "%u deadlock(s), longest %.1f ms%s; %llu storms; %.3f Gb/s received",
			      r->found, r->longest_s * 1e3, r->on_at_end ? ", one to the end" : "",
			      (unsigned long long)r->storms, r->received_gbps);
	}
	trial_release(&tr);
	aif_trial_free(&t);
}

double aif_watchdog_detect_s(const struct aif_ctx *x)
{
	const config_setting_t *w = config_lookup(&x->s->text, "switch.leaf.pfc.watchdog");
	double ms = 0;

	if (!w)
		w = config_lookup(&x->s->text, "switch.pfc.watchdog");
	if (!w)
		return -1;
	if (!config_setting_lookup_float(w, "detect_ms", &ms)) {
		int i = 0;
		config_setting_lookup_int(w, "detect_ms", &i);
		ms = i;
	}
	return ms * 1e-3;
}

static json_t *pattern_row(struct aif_ctx *x, const char *pattern, const struct deadlock_result *r)
{
	/* a deadlock is seen deadlock_ms after its last frame and the watchdog acts detect_ms after the
	 * pause began: within detect_ms, a look of the watchdog (0.1 ms) and the machine's hold-up */
	double detect_s = aif_watchdog_detect_s(x), slack = detect_s > 0 ? detect_s + 0.005 + r->held_up_s : 0;
	const char *prot = protection(r, slack, detect_s > 0);
	bool lasted = !strcmp(prot, "none"), clos = x->fab.kind == FAB_LEAF_SPINE || x->fab.kind == FAB_RAIL || x->fab.kind == FAB_FAT_TREE;
	json_t *row = json_pack("{s:s,s:b}", "pattern", pattern, "ran", r->ran);

	if (!r->ran)
		return row;
	json_object_set_new(row, "deadlocks", json_integer(r->found));
	json_object_set_new(row, "longest_deadlock_ms", json_real(r->longest_s * 1e3));
	json_object_set_new(row, "stuck_share", json_real(r->duration_s > 0 ? r->stuck_s / r->duration_s : 0));
	json_object_set_new(row, "deadlock_at_end", json_boolean(r->on_at_end));
	json_object_set_new(row, "deadlock_at_end_ms", json_real(r->at_end_s * 1e3));
	json_object_set_new(row, "protection", json_string(prot));
	json_object_set_new(row, "watchdog_storms", json_integer((json_int_t)r->storms));
	json_object_set_new(row, "watchdog_restores", json_integer((json_int_t)r->restores));
	json_object_set_new(row, "watchdog_dropped", json_integer((json_int_t)r->wd_dropped));
	json_object_set_new(row, "received_gbps", json_real(r->received_gbps));
	json_object_set_new(row, "duration_s", json_real(r->duration_s));
	aif_fabric_to_json(&r->v, row);
	printf("  %-10s  %9u  %10.1f  %7.1f %%  %-8s  %7llu  %12.3f\n", pattern, r->found, r->longest_s * 1e3,
	       100 * (r->duration_s > 0 ? r->stuck_s / r->duration_s : 0), prot, (unsigned long long)r->storms,
	       r->received_gbps);
	if (lasted)
		aif_anomaly(x, AIF_DEADLOCK, "%s: a PFC deadlock lasted to the end of the run (%.0f ms): no protection",
			    pattern, r->at_end_s * 1e3);
	aif_threshold(x, AIF_DEADLOCK, "longest_deadlock_ms", r->longest_s * 1e3, x->c->th.max_deadlock_ms, true, pattern);
	if (clos && !config_lookup(&x->s->text, "fabric.events"))
		suite_verdict(x->rn, r->found == 0, "deadlock_free_as_routed",
			      "%s on a %s routed up and down: %u deadlock(s) (a Clos with shortest paths has no cyclic "
			      "buffer dependency)", pattern, fabric_kind_name(x->fab.kind), r->found);
	if (detect_s > 0 && r->found)
		suite_verdict(x->rn, !lasted && r->longest_s <= slack, "deadlock_broken_by_the_watchdog",
			      "%s: %u deadlock(s), the longest %.1f ms, %s (the watchdog detects in %.0f ms; %.1f ms allowed "
			      "with the machine's longest hold-up)", pattern, r->found, r->longest_s * 1e3,
			      lasted ? "one to the end" : "each broken", detect_s * 1e3, slack * 1e3);
	return row;
}

int aif_deadlock(struct aif_ctx *x)
{
	const struct aif_deadlock_cfg *dc = &x->c->deadlock;
	json_t *rows = json_array(), *res;

	printf("\n§7.4 PFC storm and deadlock at %.0f %% of every link, lossless class %u\n  %-10s  %9s  %10s  %9s  "
	       "%-8s  %7s  %12s\n", 100 * dc->load, dc->priority, "pattern", "deadlocks", "longest ms", "stuck",
	       "protect", "storms", "recv Gb/s");
	/* (a real tier's deadlocks are seen only inside its switches: its storm alone) */
	for (unsigned k = 0; k < dc->n_patterns && !x->c->external && !x->rn->stop; k++) {
		struct deadlock_result r;
		const char *pattern = dc->patterns[k] ? "shift" : "all_to_all";

		pattern_trial(x, pattern, &r);
		json_array_append_new(rows, pattern_row(x, pattern, &r));
	}
	res = json_pack("{s:s,s:i,s:f,s:i,s:f,s:o}", "section", "7.4", "priority", (int)dc->priority, "load", dc->load,
			"shift", (int)dc->shift, "deadlock_ms", dc->deadlock_ms, "rows", rows);
	json_object_set_new(res, "watchdog_detect_ms",
			    aif_watchdog_detect_s(x) > 0 && !x->c->external ? json_real(aif_watchdog_detect_s(x) * 1e3) : json_null());
	if (dc->storm.on && !x->rn->stop)
		json_object_set_new(res, "storm", aif_storm(x));
	json_object_set_new(x->results, "deadlock", res);
	return x->rn->stop ? -1 : 0;
}

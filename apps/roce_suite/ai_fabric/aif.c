/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The AI-fabric suite's run (aif.h): the suite's fabric read once more with the engine's parser
 * (the categories pick hosts and links from it), the categories in the methodology's order, then
 * the seven-section report into the results folder and the suite report's `ai_fabric` object.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aif_ctx.h"
#include "config_fabric.h"

static int (*const categories[AIF_CATEGORIES])(struct aif_ctx *) = {
	aif_throughput, aif_latency, aif_burst, aif_ecn, aif_pfc_incast, aif_convergence, aif_deadlock, aif_ecmp, aif_flowlet, aif_spray, aif_collectives, aif_jct, aif_interference, aif_link_failure, aif_soak,
};

/* The suite's fabric: the config loader has accepted it, so this reading succeeds. */
static int load_fabric(struct aif_ctx *x)
{
	struct config_reader r;
	char err[1024];

	cr_init(&r, x->s->file, err, sizeof(err), "suite configuration");
	if (cfab_load(&r, config_lookup(&x->s->text, "fabric"), &x->spec, &x->fab, &x->routes)) {
		text_printf(x->rn->stop_reason, sizeof(x->rn->stop_reason), "%s", err);
		return -1;
	}
	x->host_gbps = INFINITY;
	for (unsigned l = 0; l < x->fab.n_links; l++)
		if (x->fab.links[l].tier == FAB_TIER_HOST)
			x->host_gbps = fmin(x->host_gbps, x->fab.links[l].gbps);
	return 0;
}

/* roce-fabric beside the engine (the build tree's apps/, an install's bin/). */
static int find_planner(struct aif_ctx *x)
{
	if (aif_tool_path(x, "roce-fabric", x->planner, sizeof(x->planner))) {
		text_printf(x->rn->stop_reason, sizeof(x->rn->stop_reason), "cannot run %s (the fabric's planner, beside "
			    "roce-engine): %s", x->planner, strerror(errno));
		return -1;
	}
	return 0;
}

static void ctx_free(struct aif_ctx *x)
{
	aif_cluster_job_free(&x->job);
	fab_routes_free(&x->routes);
	fabric_free(&x->fab);
	fab_spec_free(&x->spec);
	json_decref(x->results);
	json_decref(x->anomalies);
	json_decref(x->repeatability);
	json_decref(x->thresholds);
	json_decref(x->graphs);
}

int suite_ai_fabric(struct runner *rn, const struct suite_cfg *s, json_t *out)
{
	struct aif_ctx x = { .rn = rn, .s = s, .c = s->aif, .results = json_object(), .anomalies = json_array(),
			     .repeatability = json_array(), .thresholds = json_array(), .graphs = json_array() };

	if (x.c->fabric && (load_fabric(&x) || find_planner(&x))) {
		rn->stop = true;
		rn->exit_status = EXIT_IO;
		ctx_free(&x);
		return -1;
	}
	if (x.c->fabric)
		printf("fabric: %s, %u hosts, %u switches, host links %g Gb/s; results in %s\n", fabric_kind_name(x.fab.kind),
		       x.fab.n_hosts, x.fab.n_switches, x.host_gbps, x.c->results);
	else
		printf("no fabric: every category goes across the cluster's hosts; results in %s\n", x.c->results);
	for (unsigned k = 0; k < AIF_CATEGORIES && !rn->stop; k++)
		if (x.c->run[k])
			categories[k](&x);
	json_object_set_new(out, "ai_fabric", aif_sections(&x));
	ctx_free(&x);
	return rn->stop ? -1 : 0;
}

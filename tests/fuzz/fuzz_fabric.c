/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target for the `fabric` group and traffic patterns (config/config_fabric.c over
 * fabric/: the parser, fabric_build(), fabric_routes(), fab_pattern_pairs()): any byte string is
 * a file "fuzz.cfg" with a `fabric` group and a `traffic` list. Beyond the sanitizers' checks:
 *  - on success the fabric hangs together: every port's peer points back at it, every NIC sits
 *    on the port its switch says, its address in its switch's subnet and not the gateway, every
 *    route's next hop a port of its switch one hop closer (or the NIC's own port), every pattern
 *    pair two distinct NICs of the fabric;
 *  - on failure the error is one NUL-terminated line of printable ASCII "fuzz.cfg:LINE: ...".
 * Every violated invariant prints itself and traps.
 *
 * Build: tests/fuzz/meson.build (-Dfuzzing=true, clang). Replay: build-fuzz/tests/fuzz/fuzz_fabric FILE...
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libconfig.h>

#include "config_fabric.h"
#include "fuzz_require.h"
#include "fuzz_sanitizers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/* libconfig 1.5's lexer leaks a discarded string token on some syntax errors (fuzz_config.c) */
const char *__lsan_default_suppressions(void) { return "leak:strbuf_append\nleak:libconfig_yylex\n"; }

#define NAME "fuzz.cfg"
#define MAX_PAIRS 4096

struct loaded {
	struct config_reader r;
	struct fab_spec spec;
	struct fabric f;
	struct fab_routes routes;
	struct fab_pair pairs[MAX_PAIRS];
	bool built;
};

static struct loaded L; /* large: off the stack */
static struct fab_pattern P;
static char err[1024];

static void check_fabric(const struct fabric *f)
{
	REQUIRE(f->n_switches >= 1 && f->n_switches <= FAB_MAX_SWITCHES && f->n_nics <= FAB_MAX_NICS);
	for (unsigned s = 0; s < f->n_switches; s++) {
		const struct fab_switch *w = &f->switches[s];
		REQUIRE(memchr(w->name, 0, FAB_NAME_LEN) && w->name[0]);
		REQUIRE(w->first_port + w->n_ports <= f->n_ports && w->tier >= FAB_TIER_LEAF && w->tier < FAB_TIERS);
		for (unsigned p = 0; p < w->n_ports; p++) {
			const struct fab_port *q = &f->ports[w->first_port + p];
			REQUIRE(q->link < f->n_links);
			if (q->to_nic) {
				REQUIRE(q->peer < f->n_nics && f->nics[q->peer].sw == s && f->nics[q->peer].port == p);
			} else {
				REQUIRE(q->peer < f->n_switches && q->peer_port < f->switches[q->peer].n_ports);
				const struct fab_port *back = &f->ports[f->switches[q->peer].first_port + q->peer_port];
				REQUIRE(!back->to_nic && back->peer == s && back->peer_port == p && back->link == q->link);
			}
		}
	}
	for (unsigned n = 0; n < f->n_nics; n++) {
		const struct fab_nic *c = &f->nics[n];
		const struct fab_switch *w = &f->switches[c->sw];
		uint32_t mask = c->prefix_len ? ~0u << (32 - c->prefix_len) : 0;
		REQUIRE(c->host < f->n_hosts && c->prefix_len == w->prefix_len && c->prefix_len >= f->pool_len);
		REQUIRE((c->ip & mask) == w->subnet && c->gateway == w->subnet + 1 && c->ip != c->gateway);
		REQUIRE((c->ip & ~mask) != ~mask); /* not the broadcast address */
	}
	for (unsigned l = 0; l < f->n_links; l++)
		REQUIRE(f->links[l].gbps > 0 && f->links[l].sw < f->n_switches);
}

static void check_routes(const struct fabric *f, const struct fab_routes *r)
{
	for (unsigned s = 0; s < f->n_switches; s++)
		for (unsigned n = 0; n < f->n_nics; n++) {
			const uint16_t *ports;
			unsigned k = fab_next_ports(f, r, s, n, &ports);
			REQUIRE(k >= 1 && k <= f->switches[s].n_ports); /* all links up: every NIC reachable */
			for (unsigned i = 0; i < k; i++) {
				const struct fab_port *q = &f->ports[f->switches[s].first_port + ports[i]];
				REQUIRE(ports[i] < f->switches[s].n_ports);
				if (f->nics[n].sw == s) {
					REQUIRE(q->to_nic && q->peer == n);
				} else {
					unsigned d = (unsigned)r->dst_of_switch[f->nics[n].sw];
					REQUIRE(!q->to_nic);
					REQUIRE(r->group[(size_t)q->peer * r->n_dst + d].hops + 1 ==
						r->group[(size_t)s * r->n_dst + d].hops);
				}
			}
		}
}

static int load_root(void *arg, const config_setting_t *root)
{
	struct loaded *l = arg;
	const config_setting_t *g = config_setting_get_member(root, "fabric"), *t;

	if (!g)
		return cr_fail(&l->r, root, "fabric: missing");
	if (cfab_load(&l->r, g, &l->spec, &l->f, &l->routes))
		return -1;
	l->built = true;
	t = config_setting_get_member(root, "traffic");
	for (int i = 0; t && i < config_setting_length(t) && i < 8; i++) {
		const config_setting_t *e = config_setting_get_elem(t, (unsigned)i);
		int n;
		if (config_setting_type(e) != CONFIG_TYPE_GROUP)
			return cr_fail(&l->r, e, "a group");
		if (cfab_pattern(&l->r, e, &l->f, &P)) {
			free(P.hosts);
			return -1;
		}
		n = fab_pattern_pairs(&l->f, &P, l->pairs, MAX_PAIRS, err, sizeof(err));
		free(P.hosts);
		REQUIRE(n >= -1 && n <= MAX_PAIRS);
		for (int k = 0; k < n; k++)
			REQUIRE(l->pairs[k].src < l->f.n_nics && l->pairs[k].dst < l->f.n_nics &&
				l->pairs[k].src != l->pairs[k].dst);
	}
	return 0;
}

static void check_error(const char *e)
{
	size_t n = strnlen(e, sizeof(err));

	REQUIRE(n < sizeof(err) && !strncmp(e, NAME ":", strlen(NAME ":")));
	REQUIRE(isdigit((unsigned char)e[strlen(NAME ":")]));
	for (size_t i = 0; i < n; i++)
		REQUIRE(isprint((unsigned char)e[i]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	int rc;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&L, 0, sizeof(L));
	err[0] = '\0';
	cr_init(&L.r, NAME, err, sizeof(err), "configuration");
	rc = cr_load_text(&L.r, text, load_root, &L);
	if (rc == 0) {
		check_fabric(&L.f);
		if (L.f.n_switches * (uint64_t)L.f.n_nics <= 1u << 20) /* the exhaustive check: small fabrics */
			check_routes(&L.f, &L.routes);
	} else {
		check_error(err);
	}
	if (L.built) {
		fab_routes_free(&L.routes);
		fabric_free(&L.f);
		fab_spec_free(&L.spec);
	}
	free(text);
	return 0;
}

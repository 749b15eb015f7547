/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The `eal` section (lcores, the main lcore, memory, log level, extra EAL arguments) and the
 * `lcores` list (which lcore polls which port queue in which role): both are about EAL's lcores,
 * and the roles are checked against the lcore set the eal section gives.
 */
#include "config_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_LCORE 127 /* lcore ids 0..127: two 64-bit words of struct loader's lcore_set */

/* ---- lcore lists and maps ------------------------------------------------------------------- */

/* Parses an EAL -l list ("0-3,5,7-8") into a bit set of lcore ids 0..MAX_LCORE. */
static bool parse_lcore_list(const char *s, uint64_t set[2])
{
	set[0] = set[1] = 0;
	if (!*s)
		return false;
	for (;;) {
		unsigned long a, b;
		char *end;

		if (!isdigit((unsigned char)*s))
			return false;
		a = b = strtoul(s, &end, 10);
		s = end;
		if (*s == '-') {
			if (!isdigit((unsigned char)*++s))
				return false;
			b = strtoul(s, &end, 10);
			s = end;
		}
		if (a > b || b > MAX_LCORE)
			return false;
		for (; a <= b; a++)
			set[a / 64] |= 1ULL << (a % 64);
		if (!*s)
			return true;
		if (*s++ != ',')
			return false;
	}
}

static bool lcore_in(const uint64_t set[2], unsigned long lc)
{
	return lc <= MAX_LCORE && (set[lc / 64] >> (lc % 64)) & 1;
}

/* An EAL --lcores map has '@' or '(': "0@0,1@0,2@1", "(0,1)@0,2@1", "(0-1)@(0,1),2". */
static bool is_lcore_map(const char *s)
{
	return strpbrk(s, "@(") != NULL;
}

/* One set of an EAL --lcores map: an id, a range "a-b" or a group "(a,b-c,...)", ids 0..max;
 * each id is passed to `add` (NULL: checked only). Returns the end, or NULL with `why` set. */
static const char *lcore_map_set(const char *s, unsigned long max, const char *what, uint64_t set[2], bool *twice,
				 unsigned long *which, char *why, size_t whylen)
{
	bool group = *s == '(';

	s += group;
	for (;;) {
		unsigned long a, b;
		char *end;

		if (!isdigit((unsigned char)*s)) {
			if (*s)
				snprintf(why, whylen, "%s id expected at '%.8s'", what, s);
			else
				snprintf(why, whylen, "%s id expected at the end", what);
			return NULL;
		}
		a = b = strtoul(s, &end, 10);
		s = end;
		if (*s == '-') {
			if (!isdigit((unsigned char)*++s)) {
				snprintf(why, whylen, "a range of %s ids needs an end", what);
				return NULL;
			}
			b = strtoul(s, &end, 10);
			s = end;
		}
		if (a > max || b > max) {
			snprintf(why, whylen, "%s %lu is out of range (0..%lu)", what, a > max ? a : b, max);
			return NULL;
		}
		if (a > b) {
			snprintf(why, whylen, "the range %lu-%lu goes downward", a, b);
			return NULL;
		}
		for (; set && a <= b; a++) {
			if (lcore_in(set, a) && !*twice) {
				*twice = true;
				*which = a;
			}
			set[a / 64] |= 1ULL << (a % 64);
		}
		if (!group || *s == ')')
			return s + group;
		if (*s++ != ',') {
			snprintf(why, whylen, "a group in parentheses has no closing ')'");
			return NULL;
		}
	}
}

/* Parses an EAL --lcores map ("LCORES@CPUS,..."; LCORES and CPUS each an id, a range or a group
 * in parentheses; "@CPUS" optional) into the bit set of its lcore ids 0..MAX_LCORE. Stricter than
 * EAL: no blanks, ranges upward, each lcore once, CPUs 0..1023 (CPU_SETSIZE). */
static bool parse_lcore_map(const char *s, uint64_t set[2], char *why, size_t whylen)
{
	set[0] = set[1] = 0;
	for (;;) {
		bool twice = false;
		unsigned long which = 0;

		s = lcore_map_set(s, MAX_LCORE, "lcore", set, &twice, &which, why, whylen);
		if (!s)
			return false;
		if (twice) {
			snprintf(why, whylen, "lcore %lu is given twice", which);
			return false;
		}
		if (*s == '@' && !(s = lcore_map_set(s + 1, 1023, "CPU", NULL, NULL, NULL, why, whylen)))
			return false;
		if (!*s)
			return true;
		if (*s++ != ',') {
			snprintf(why, whylen, "unexpected '%c' (lcores@CPUs are joined by ',')", s[-1]);
			return false;
		}
	}
}

/* ---- EAL's device options ------------------------------------------------------------------- */

/* The same PCI device: "3b:00.0" is "0000:3b:00.0", and hex digits in either case. */
static bool same_pci_addr(const char *a, const char *b)
{
	char x[24], y[24];

	snprintf(x, sizeof(x), "%s%s", strchr(a, ':') == strrchr(a, ':') ? "0000:" : "", a);
	snprintf(y, sizeof(y), "%s%s", strchr(b, ':') == strrchr(b, ':') ? "0000:" : "", b);
	return !strcasecmp(x, y);
}

/* The device of an EAL allow/block option at extra[i] ("-a X", "-aX", "--allow X", "--allow=X"),
 * or NULL; *skip: 1 when X is the next argument. */
static const char *eal_device_option(const struct cfg_eal *e, unsigned i, const char *shrt, const char *lng,
				     unsigned *skip)
{
	const char *a = e->extra[i];
	size_t ll = strlen(lng);

	*skip = 0;
	if (!strcmp(a, shrt) || !strcmp(a, lng)) {
		*skip = 1;
		return i + 1 < e->n_extra ? e->extra[i + 1] : NULL;
	}
	if (!strncmp(a, shrt, 2) && a[2])
		return a + 2;
	if (!strncmp(a, lng, ll) && a[ll] == '=')
		return a + ll + 1;
	return NULL;
}

/* Public (config.h): main.c asks it whether the user's own -a options already name the PCI ports;
 * it is the same reading of extra_args that the loader's eal_vs_pci_ports check makes. */
bool config_extra_allows_pci(const struct cfg_eal *e, const char *addr)
{
	unsigned skip;

	for (unsigned i = 0; i < e->n_extra; i += 1 + skip) {
		const char *dev = eal_device_option(e, i, "-a", "--allow", &skip);
		size_t n = dev ? strcspn(dev, ",") : 0;
		char pci[16];

		if (!dev || n >= sizeof(pci))
			continue;
		snprintf(pci, sizeof(pci), "%.*s", (int)n, dev);
		if (ld_is_pci_addr(pci) && (!addr || same_pci_addr(addr, pci)))
			return true;
	}
	return false;
}

/* ---- eal ------------------------------------------------------------------------------------ */

static int eal_lcores(struct loader *ld, const config_setting_t *eal)
{
	struct cfg_eal *e = &ld->cfg->eal;
	const config_setting_t *s = config_setting_get_member(eal, "lcores");
	long long main_lc;
	char buf[64], why[96];
	int rc;

	if (s && ld_str_value(ld, s, e->lcores, sizeof(e->lcores)))
		return -1;
	e->lcores_map = is_lcore_map(e->lcores);
	if (e->lcores_map && !parse_lcore_map(e->lcores, ld->lcore_set, why, sizeof(why)))
		return cr_fail(&ld->r, s, "'%s' is not an lcore map: %s (EAL --lcores syntax: LCORES@CPUS joined by "
			       "commas, each an id, a range or a group in parentheses, e.g. \"0@0,1@0,2@1\")",
			       cr_shown(e->lcores, buf), why);
	if (!e->lcores_map && !parse_lcore_list(e->lcores, ld->lcore_set))
		return cr_fail(&ld->r, s, "'%s' is not an lcore list (ids 0..%d as ranges and commas, e.g. \"0-3,5\"; "
			       "or an EAL --lcores map such as \"0@0,1@0,2@1\")", cr_shown(e->lcores, buf), MAX_LCORE);
	e->main_lcore = -1;
	rc = cr_opt_int(&ld->r, eal, "main_lcore", 0, MAX_LCORE, false, &main_lc);
	if (rc < 0)
		return -1;
	if (rc == 1 && !lcore_in(ld->lcore_set, (unsigned long)main_lc))
		return cr_fail_member(&ld->r, eal, "main_lcore", "lcore %lld is not in eal.lcores \"%s\"", main_lc,
				      cr_shown(e->lcores, buf));
	if (rc == 1)
		e->main_lcore = (int)main_lc;
	/* default: the lowest lcore, which is also what EAL picks */
	for (unsigned lc = 0; e->main_lcore < 0; lc++)
		if (lcore_in(ld->lcore_set, lc))
			e->main_lcore = (int)lc;
	return 0;
}

static int eal_log_level(struct loader *ld, const config_setting_t *eal)
{
	static const char *const names[] = { "emerg", "alert", "crit", "error", "warning", "notice", "info",
					     "debug", NULL };
	const config_setting_t *s = config_setting_get_member(eal, "log_level");
	struct cfg_eal *e = &ld->cfg->eal;
	long long v;
	int i;

	if (!s)
		return 0;
	if (config_setting_type(s) == CONFIG_TYPE_INT || config_setting_type(s) == CONFIG_TYPE_INT64) {
		if (cr_int_range(&ld->r, s, 1, 8, false, &v))
			return -1;
		snprintf(e->log_level, sizeof(e->log_level), "%lld", v);
		return 0;
	}
	/* EAL matches level names by prefix, so the short syslog names work as written */
	i = cr_pick(&ld->r, s, names, ", or an integer 1..8");
	if (i < 0)
		return -1;
	snprintf(e->log_level, sizeof(e->log_level), "%s", names[i]);
	return 0;
}

static int eal_extra_args(struct loader *ld, const config_setting_t *eal)
{
	const config_setting_t *s = config_setting_get_member(eal, "extra_args");
	struct cfg_eal *e = &ld->cfg->eal;
	int i, n;

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_ARRAY && config_setting_type(s) != CONFIG_TYPE_LIST)
		return cr_fail(&ld->r, s, "must be an array of strings [\"...\", ...], not %s", cr_type_name(s));
	n = config_setting_length(s);
	if (n > CFG_MAX_EAL_ARGS)
		return cr_fail(&ld->r, s, "%d arguments are too many (at most %d)", n, CFG_MAX_EAL_ARGS);
	for (i = 0; i < n; i++) {
		const config_setting_t *a = config_setting_get_elem(s, (unsigned)i);

		if (ld_str_value(ld, a, e->extra[i], sizeof(e->extra[i])))
			return -1;
		if (!e->extra[i][0])
			return cr_fail(&ld->r, a, "empty argument (each element is one EAL argument)");
	}
	e->n_extra = (unsigned)n;
	return 0;
}

int ld_parse_eal(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "lcores", "main_lcore", "memory_mb", "huge_pages", "file_prefix",
					    "log_level", "extra_args", NULL };
	struct cfg_eal *e = &ld->cfg->eal;
	const config_setting_t *eal;
	char buf[64];
	int rc;

	if (cr_opt_group(&ld->r, root, "eal", &eal) < 0)
		return -1;
	if (!eal) /* the defaults; the set is still needed for the roles */
		return parse_lcore_list(e->lcores, ld->lcore_set) ? 0 : -1;
	if (cr_known_keys(&ld->r, eal, keys) || eal_lcores(ld, eal))
		return -1;
	if (cr_opt_u32(&ld->r, eal, "memory_mb", 16, 65536, &e->memory_mb) < 0 ||
	    cr_opt_bool(&ld->r, eal, "huge_pages", &e->huge_pages) < 0)
		return -1;
	rc = ld_opt_str(ld, eal, "file_prefix", e->file_prefix, sizeof(e->file_prefix));
	if (rc < 0)
		return -1;
	if (rc == 1 && !ld_valid_name(e->file_prefix, 64))
		return cr_fail_member(&ld->r, eal, "file_prefix",
				      "'%s' is not a valid prefix (1..64 of A-Z a-z 0-9 _ -)",
				      cr_shown(e->file_prefix, buf));
	return eal_log_level(ld, eal) || eal_extra_args(ld, eal) ? -1 : 0;
}

/* The engine passes EAL an allow-list of its PCI ports (-a ADDR each, so that EAL probes no other
 * device of the machine): extra_args that EAL cannot combine with it would stop EAL at start. */
int ld_eal_vs_pci_ports(struct loader *ld, const config_setting_t *root)
{
	const struct cfg_eal *e = &ld->cfg->eal;
	const config_setting_t *eal = config_setting_get_member(root, "eal");
	const char *pci = NULL;
	unsigned skip;

	for (unsigned i = 0; i < ld->cfg->n_ports && !pci; i++)
		if (ld_is_pci_addr(ld->cfg->ports[i].device))
			pci = ld->cfg->ports[i].name;
	if (!pci || !eal)
		return 0;
	for (unsigned i = 0; i < e->n_extra; i += 1 + skip) {
		const config_setting_t *arg = config_setting_get_elem(config_setting_get_member(eal, "extra_args"), i);

		if (eal_device_option(e, i, "-b", "--block", &skip))
			return cr_fail(&ld->r, arg, "'%s' (a block-list) with PCI port '%s': the engine allow-lists its PCI "
				       "ports (-a), and EAL refuses -a and -b together (give devargs with -a ADDR,ARGS)",
				       e->extra[i], pci);
		if (!strcmp(e->extra[i], "--no-pci"))
			return cr_fail(&ld->r, arg, "--no-pci with PCI port '%s': EAL would not find the port", pci);
	}
	return 0;
}

/* ---- lcore roles ---------------------------------------------------------------------------- */

static int role_queue(struct loader *ld, const config_setting_t *rs, struct cfg_lcore_role *r)
{
	const struct cfg_port *p = &ld->cfg->ports[r->port];
	const char *dir[] = { "", "tx", "rx" };

	if (cr_opt_u32(&ld->r, rs, "queue", 0, 15, &r->queue) < 0)
		return -1;
	if ((r->role & CFG_ROLE_TX) && r->queue >= p->tx_queues)
		return cr_fail_member(&ld->r, rs, "queue", "queue %u is beyond port '%s''s tx queues (0..%u; raise "
				      "tx_queues)", r->queue, p->name, p->tx_queues - 1);
	if ((r->role & CFG_ROLE_RX) && r->queue >= p->rx_queues)
		return cr_fail_member(&ld->r, rs, "queue", "queue %u is beyond port '%s''s rx queues (0..%u; raise "
				      "rx_queues)", r->queue, p->name, p->rx_queues - 1);
	for (unsigned j = 0; j < ld->cfg->n_roles; j++) {
		const struct cfg_lcore_role *o = &ld->cfg->roles[j];
		unsigned both = (unsigned)(o->role & r->role);

		if (o->port == r->port && o->queue == r->queue && both)
			return cr_fail(&ld->r, rs,
				       "port '%s' queue %u %s is already polled by the role at %s (one "
				       "role per queue and direction)",
				       p->name, r->queue, dir[both & CFG_ROLE_TX ? 1 : 2], cr_at(&ld->r, o->line, (char[CR_AT_LEN]){ 0 }));
	}
	return 0;
}

static int parse_role(struct loader *ld, const config_setting_t *rs, struct cfg_lcore_role *r)
{
	static const char *const keys[] = { "lcore", "port", "queue", "role", NULL };
	static const char *const roles[] = { "tx", "rx", "txrx", "reflect", "switch", NULL };
	static const enum cfg_role role_of[] = { CFG_ROLE_TX, CFG_ROLE_RX, CFG_ROLE_TXRX, CFG_ROLE_REFLECT,
						 CFG_ROLE_SWITCH };
	const config_setting_t *s;
	int i;

	if (cr_want_type(&ld->r, rs, CONFIG_TYPE_GROUP, "a group { lcore = ...; port = ...; role = ...; }") ||
	    cr_known_keys(&ld->r, rs, keys))
		return -1;
	r->line = config_setting_source_line(rs);
	s = cr_required(&ld->r, rs, "lcore", "an lcore id from eal.lcores");
	if (!s || ld_worker_lcore(ld, s, &r->lcore))
		return -1;
	i = ld_port_ref(ld, rs);
	if (i < 0)
		return -1;
	r->port = (unsigned)i;
	s = cr_required(&ld->r, rs, "role", "tx, rx, txrx, reflect or switch");
	if (!s || (i = cr_pick(&ld->r, s, roles, NULL)) < 0)
		return -1;
	r->role = role_of[i];
	return role_queue(ld, rs, r);
}

int ld_parse_roles(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *s;
	int n;

	if (!config_setting_get_member(root, "lcores") && config_setting_get_member(root, "fabric"))
		return 0; /* the fabric gives its NICs their roles (config_lab_fabric.c) */
	s = cr_required(&ld->r, root, "lcores", "a list ( { lcore = 1; port = \"a\"; role = \"txrx\"; }, ... )");
	if (!s || (n = ld_list_length(ld, s, "( { lcore = ...; port = ...; role = ...; }, ... )", "roles", 1,
				      CFG_MAX_ROLES)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (parse_role(ld, config_setting_get_elem(s, (unsigned)i), &ld->cfg->roles[i]))
			return -1;
		ld->cfg->n_roles++;
	}
	return 0;
}

/* ---- an lcore a section names (fabric.lcore, fabric.host_lcores) ------------------------------- */

int ld_worker_lcore(struct loader *ld, const config_setting_t *s, unsigned *out)
{
	char buf[64];
	long long lc;

	if (cr_int_range(&ld->r, s, 0, MAX_LCORE, false, &lc))
		return -1;
	if (!lcore_in(ld->lcore_set, (unsigned long)lc))
		return cr_fail(&ld->r, s, "lcore %lld is not in eal.lcores \"%s\" (add it there)", lc,
			       cr_shown(ld->cfg->eal.lcores, buf));
	if (lc == ld->cfg->eal.main_lcore)
		return cr_fail(&ld->r, s, "lcore %lld is the main lcore, which prints the stats (use another lcore of "
			       "eal.lcores, or set eal.main_lcore)", lc);
	*out = (unsigned)lc;
	return 0;
}

int ld_last_worker_lcore(const struct loader *ld)
{
	for (int lc = MAX_LCORE; lc >= 0; lc--)
		if (lcore_in(ld->lcore_set, (unsigned long)lc) && lc != ld->cfg->eal.main_lcore)
			return lc;
	return -1;
}

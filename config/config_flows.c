/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Configuration loader: libconfig text -> struct engine_config, validated completely before
 * anything touches EAL. One function per section on the typed getters of config_read.h (shared
 * with roce-ccsim's scenario loader); every error is one line "FILE:LINE: SETTING: what is
 * wrong (what is allowed)". Setting by setting: docs/config.md.
 *
 * Plain C, libc and libconfig only, so the loader can be unit-tested and fuzzed without EAL.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libconfig.h>

#include "cc_params.h"
#include "config_read.h"
#include "wire.h"

#define MAX_LCORE 127
#define MAX_MSG_SIZE (1u << 30)
#define MAX_QPN 0xFFFFFFu

struct loader {
	struct config_reader r;       /* file name, error line, prescan state (config_read.h) */
	struct engine_config *cfg;
	const struct config_env *env; /* checks beyond the text (may be NULL) */
	uint64_t lcore_set[2];        /* eal.lcores as a bit set */
};

/* ---- strings ------------------------------------------------------------------------------- */

static int str_value(struct loader *ld, const config_setting_t *s, char *out, size_t len)
{
	const char *v;

	if (cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a string"))
		return -1;
	v = config_setting_get_string(s);
	if (strlen(v) >= len)
		return cr_fail(&ld->r, s, "too long (at most %zu characters)", len - 1);
	memcpy(out, v, strlen(v) + 1);
	return 0;
}

static int opt_str(struct loader *ld, const config_setting_t *g, const char *key, char *out, size_t len)
{
	const config_setting_t *s = config_setting_get_member(g, key);

	if (!s)
		return 0;
	return str_value(ld, s, out, len) ? -1 : 1;
}

/* ---- value syntax --------------------------------------------------------------------------- */

static bool valid_name(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n == 0 || n > max)
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

/* Exactly six colon-separated pairs of hex digits; nothing else. */
static bool parse_mac(const char *s, uint8_t mac[6])
{
	int i;

	if (strlen(s) != 17)
		return false;
	for (i = 0; i < 6; i++) {
		const char *p = s + 3 * i;
		char hex[3] = { p[0], p[1], '\0' };

		if (!isxdigit((unsigned char)p[0]) || !isxdigit((unsigned char)p[1]) || (i < 5 && p[2] != ':'))
			return false;
		mac[i] = (uint8_t)strtoul(hex, NULL, 16);
	}
	return true;
}

static int mac_value(struct loader *ld, const config_setting_t *s, uint8_t mac[6])
{
	char buf[64];

	if (cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a string"))
		return -1;
	if (!parse_mac(config_setting_get_string(s), mac))
		return cr_fail(&ld->r, s,
			       "'%s' is not a MAC address (six hex pairs joined by ':', e.g. 02:00:00:00:00:01)",
			       cr_shown(config_setting_get_string(s), buf));
	return 0;
}

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

static bool is_vdev(const char *dev)
{
	return !strncmp(dev, "net_", 4);
}

static bool hex_run(const char **p, int min, int max)
{
	int n = 0;

	while (isxdigit((unsigned char)**p) && n <= max)
		(*p)++, n++;
	return n >= min && n <= max;
}

/* DDDD:BB:DD.F or BB:DD.F, the forms EAL's PCI bus accepts. */
static bool is_pci_addr(const char *s)
{
	const char *p = s;

	if (strchr(s, ':') != strrchr(s, ':')) {
		if (!hex_run(&p, 4, 4) || *p++ != ':')
			return false;
	}
	if (!hex_run(&p, 2, 2) || *p++ != ':' || !hex_run(&p, 2, 2) || *p++ != '.')
		return false;
	return *p >= '0' && *p <= '7' && p[1] == '\0';
}

/* ring:LINK:a / ring:LINK:b, the two ends of the engine's in-process virtual cable (pmd_glue). */
static bool is_ring_pair(const char *dev)
{
	size_t n;

	if (strncmp(dev, "ring:", 5) != 0)
		return false;
	dev += 5;
	n = strspn(dev, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-");
	return n >= 1 && n <= 20 && dev[n] == ':' && (dev[n + 1] == 'a' || dev[n + 1] == 'b') && dev[n + 2] == '\0';
}

/* Devices that report no real link speed. */
static bool is_virtual(const char *dev) { return is_vdev(dev) || is_ring_pair(dev); }

bool config_device_is_virtual(const char *device) { return is_virtual(device); }

static bool valid_device(const char *dev)
{
	if (is_ring_pair(dev))
		return true;
	if (is_vdev(dev))
		return dev[4] && strspn(dev + 4, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(dev + 4);
	return is_pci_addr(dev);
}

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
		if (is_pci_addr(pci) && (!addr || same_pci_addr(addr, pci)))
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

	if (s && str_value(ld, s, e->lcores, sizeof(e->lcores)))
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

		if (str_value(ld, a, e->extra[i], sizeof(e->extra[i])))
			return -1;
		if (!e->extra[i][0])
			return cr_fail(&ld->r, a, "empty argument (each element is one EAL argument)");
	}
	e->n_extra = (unsigned)n;
	return 0;
}

static int parse_eal(struct loader *ld, const config_setting_t *root)
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
	rc = opt_str(ld, eal, "file_prefix", e->file_prefix, sizeof(e->file_prefix));
	if (rc < 0)
		return -1;
	if (rc == 1 && !valid_name(e->file_prefix, 64))
		return cr_fail_member(&ld->r, eal, "file_prefix",
				      "'%s' is not a valid prefix (1..64 of A-Z a-z 0-9 _ -)",
				      cr_shown(e->file_prefix, buf));
	return eal_log_level(ld, eal) || eal_extra_args(ld, eal) ? -1 : 0;
}

/* ---- ports ---------------------------------------------------------------------------------- */

static int port_device(struct loader *ld, const config_setting_t *ps, struct cfg_port *p)
{
	const config_setting_t *s = cr_required(&ld->r, ps, "device",
						"a vdev name such as net_ring0, or a PCI address");
	char buf[64];
	int rc;

	/* short enough that "--vdev DEVICE,ARGS" fits CFG_STR_LEN; EAL's own limit is 64 */
	if (!s || str_value(ld, s, p->device, 64))
		return -1;
	if (!valid_device(p->device))
		return cr_fail(&ld->r, s,
			       "'%s' is neither a vdev name (net_<driver><n>, e.g. net_ring0), a ring pair end "
			       "(ring:LINK:a or ring:LINK:b) nor a PCI address (0000:3b:00.0)",
			       cr_shown(p->device, buf));
	if (is_vdev(p->device) && ld->env && ld->env->vdev_driver) {
		char why[700];

		if (!ld->env->vdev_driver(ld->env->arg, &ld->cfg->eal, p->device, why, sizeof(why)))
			return cr_fail(&ld->r, s, "no vdev driver of this DPDK takes '%s' (vdev drivers: %s)", p->device,
				       why);
	}
	rc = opt_str(ld, ps, "vdev_args", p->vdev_args, sizeof(p->vdev_args) - strlen(p->device) - 1);
	if (rc < 0)
		return -1;
	if (rc == 1 && !is_vdev(p->device))
		return cr_fail_member(&ld->r, ps, "vdev_args",
				      "only vdevs take arguments (device must start with net_; "
				      "give PCI devargs with eal.extra_args)");
	for (const char *c = p->vdev_args; *c; c++)
		if (isspace((unsigned char)*c) || !isprint((unsigned char)*c))
			return cr_fail_member(&ld->r, ps, "vdev_args", "contains a space or control character "
					      "(key=value pairs joined by ',')");
	return 0;
}

static int port_addresses(struct loader *ld, const config_setting_t *ps, struct cfg_port *p)
{
	const config_setting_t *s;
	char buf[64];

	s = config_setting_get_member(ps, "mac");
	if (s) {
		if (mac_value(ld, s, p->mac))
			return -1;
		if (p->mac[0] & 1)
			return cr_fail(&ld->r, s,
				       "%s is a multicast address (a port needs a unicast MAC: first octet even)",
				       config_setting_get_string(s));
		p->has_mac = true;
	}
	s = config_setting_get_member(ps, "ipv4");
	if (s) {
		if (cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a string"))
			return -1;
		if (inet_pton(AF_INET, config_setting_get_string(s), p->ipv4) != 1)
			return cr_fail(&ld->r, s, "'%s' is not an IPv4 address (dotted quad, e.g. 192.168.1.1)",
				       cr_shown(config_setting_get_string(s), buf));
		p->has_ipv4 = true;
	}
	s = config_setting_get_member(ps, "ipv6");
	if (s) {
		if (cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a string"))
			return -1;
		if (inet_pton(AF_INET6, config_setting_get_string(s), p->ipv6) != 1)
			return cr_fail(&ld->r, s, "'%s' is not an IPv6 address (e.g. fd00::1)",
				       cr_shown(config_setting_get_string(s), buf));
		p->has_ipv6 = true;
	}
	if (!p->has_ipv4 && !p->has_ipv6)
		return cr_fail_member(&ld->r, ps, "ipv4", "missing (a port needs ipv4, ipv6 or both)");
	return 0;
}

static int port_sizes(struct loader *ld, const config_setting_t *ps, struct cfg_port *p)
{
	static const char *const desc[] = { "rx_desc", "tx_desc" };
	unsigned *dv[] = { &p->rx_desc, &p->tx_desc };
	int rc;

	if (cr_opt_u32(&ld->r, ps, "rx_queues", 1, 16, &p->rx_queues) < 0 ||
	    cr_opt_u32(&ld->r, ps, "tx_queues", 1, 16, &p->tx_queues) < 0 ||
	    cr_opt_u32(&ld->r, ps, "mtu", 576, 9000, &p->mtu) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		rc = cr_opt_u32(&ld->r, ps, desc[i], 64, 16384, dv[i]);
		if (rc < 0)
			return -1;
		if (rc == 1 && (*dv[i] & (*dv[i] - 1)))
			return cr_fail_member(&ld->r, ps, desc[i], "%u is not a power of two (64, 128, ... 16384)",
					      *dv[i]);
	}
	rc = cr_opt_float(&ld->r, ps, "link_speed_gbps", 0, true, 800, &p->link_speed_gbps);
	if (rc < 0)
		return -1;
	if (rc == 0 && is_virtual(p->device))
		return cr_fail_member(&ld->r, ps, "link_speed_gbps", "missing (required for vdev %s: virtual devices "
				      "report no real speed; 0 < x <= 800)", p->device);
	return 0;
}

static int port_steering(struct loader *ld, const config_setting_t *ps, struct cfg_port *p)
{
	static const char *const names[] = {"auto", "off", "rules", "isolate", NULL};
	const config_setting_t *s = config_setting_get_member(ps, "steering");
	int i;

	if (!s)
		return 0;
	if ((i = cr_pick(&ld->r, s, names, NULL)) < 0)
		return -1;
	p->steering = (enum cfg_steering)i;
	if (p->steering >= CFG_STEER_RULES && is_ring_pair(p->device))
		return cr_fail(&ld->r, s, "ring pair end %s has no rte_flow: steering must be auto or off", p->device);
	return 0;
}

static int port_timestamps(struct loader *ld, const config_setting_t *ps, struct cfg_port *p)
{
	static const char *const names[] = {"auto", "hardware", "software", NULL};
	const config_setting_t *s = config_setting_get_member(ps, "timestamps");
	int i;

	if (s) {
		if ((i = cr_pick(&ld->r, s, names, NULL)) < 0)
			return -1;
		p->timestamps = (enum cfg_timestamps)i;
	}
	return cr_opt_float(&ld->r, ps, "tx_schedule_lead_us", 0, false, 1e6, &p->tx_schedule_lead_us) < 0 ? -1 : 0;
}

/* An array of 8 numbers in [lo, hi] (integers when `ints`). */
static int eight_numbers(struct loader *ld, const config_setting_t *s, double lo, double hi, bool ints, double out[8])
{
	if (config_setting_type(s) != CONFIG_TYPE_ARRAY || config_setting_length(s) != 8)
		return cr_fail(&ld->r, s, "must be an array of 8 values, one per traffic class 0..7");
	for (unsigned i = 0; i < 8; i++) {
		const config_setting_t *e = config_setting_get_elem(s, i);
		int t = config_setting_type(e);
		double v = t == CONFIG_TYPE_FLOAT ? config_setting_get_float(e) : (double)config_setting_get_int64(e);
		if ((t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64 && (ints || t != CONFIG_TYPE_FLOAT)) || v < lo || v > hi)
			return cr_fail(&ld->r, s, "element %u must be %s %g..%g", i, ints ? "an integer" : "a number",
				       lo, hi);
		out[i] = v;
	}
	return 0;
}

/* egress = { shape_gbps; strict = [..]; weights = [8]; tc_shape_gbps = [8]; } */
static int port_egress(struct loader *ld, const config_setting_t *qs, struct cfg_port *p)
{
	static const char *const keys[] = { "shape_gbps", "strict", "weights", "tc_shape_gbps", NULL };
	const config_setting_t *es, *s;
	double v[8];
	long long k;
	int rc;

	for (unsigned i = 0; i < 8; i++)
		p->ets_weight[i] = 1;
	if ((rc = cr_opt_group(&ld->r, qs, "egress", &es)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, es, keys))
		return -1;
	if (!cr_required(&ld->r, es, "shape_gbps", "the port's egress rate in Gb/s, > 0 (the classes share it)") ||
	    cr_opt_float(&ld->r, es, "shape_gbps", 0, true, 800, &p->egress_gbps) < 0)
		return -1;
	if ((s = config_setting_get_member(es, "strict"))) {
		if (config_setting_type(s) != CONFIG_TYPE_ARRAY)
			return cr_fail(&ld->r, s,
				       "must be an array of traffic classes 0..7 served strictly, e.g. [6, 7]");
		for (int i = 0; i < config_setting_length(s); i++) {
			if (cr_int_range(&ld->r, config_setting_get_elem(s, (unsigned)i), 0, 7, false, &k))
				return -1;
			p->strict_tcs |= (uint8_t)(1u << k);
		}
	}
	if ((s = config_setting_get_member(es, "weights"))) {
		if (eight_numbers(ld, s, 1, 1000, true, v))
			return -1;
		for (unsigned i = 0; i < 8; i++)
			p->ets_weight[i] = (unsigned)v[i];
	}
	if ((s = config_setting_get_member(es, "tc_shape_gbps")) &&
	    eight_numbers(ld, s, 0, 800, false, p->tc_shape_gbps))
		return -1;
	return 0;
}

/* A non-empty array of priorities 0..7 as a bit mask. */
static int priority_mask(struct loader *ld, const config_setting_t *s, uint8_t *mask)
{
	long long v;

	if (config_setting_type(s) != CONFIG_TYPE_ARRAY || config_setting_length(s) < 1)
		return cr_fail(&ld->r, s, "must be a non-empty array of priorities 0..7, e.g. [3]");
	for (int k = 0; k < config_setting_length(s); k++) {
		if (cr_int_range(&ld->r, config_setting_get_elem(s, (unsigned)k), 0, 7, false, &v))
			return -1;
		*mask |= (uint8_t)(1u << v);
	}
	return 0;
}

/* pfc_xoff = { priorities = [..]; xoff_bytes; xon_bytes; quanta; refresh_us; drain_gbps; } */
static int port_pfc_xoff(struct loader *ld, const config_setting_t *qs, struct cfg_port *p)
{
	static const char *const keys[] = { "priorities", "xoff_bytes", "xon_bytes", "quanta", "refresh_us", "drain_gbps",
					    NULL };
	const config_setting_t *xs, *s;
	long long v;
	unsigned quanta = 0xFFFF;
	int rc;

	if ((rc = cr_opt_group(&ld->r, qs, "pfc_xoff", &xs)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, xs, keys))
		return -1;
	s = cr_required(&ld->r, xs, "priorities", "an array of priorities 0..7 whose backlog is watched, e.g. [3]");
	if (!s)
		return -1;
	if (priority_mask(ld, s, &p->xoff_priorities))
		return -1;
	if (!cr_required(&ld->r, xs, "xoff_bytes", "bytes of backlog above which XOFF is sent") ||
	    cr_opt_int(&ld->r, xs, "xoff_bytes", 1, (long long)1 << 40, false, &v) < 0)
		return -1;
	p->xoff_bytes = (uint64_t)v;
	if (!cr_required(&ld->r, xs, "xon_bytes", "bytes of backlog at or below which XON is sent") ||
	    cr_opt_int(&ld->r, xs, "xon_bytes", 0, (long long)1 << 40, false, &v) < 0)
		return -1;
	p->xon_bytes = (uint64_t)v;
	if (p->xon_bytes >= p->xoff_bytes)
		return cr_fail_member(&ld->r, xs, "xon_bytes", "%llu is not below xoff_bytes %llu",
				      (unsigned long long)p->xon_bytes, (unsigned long long)p->xoff_bytes);
	if (cr_opt_u32(&ld->r, xs, "quanta", 1, 0xFFFF, &quanta) < 0 ||
	    cr_opt_float(&ld->r, xs, "refresh_us", 0, false, 1e7, &p->xoff_refresh_us) < 0)
		return -1;
	p->xoff_quanta = (uint16_t)quanta;
	if (!cr_required(&ld->r, xs, "drain_gbps", "how fast the watched backlog drains (Gb/s), > 0") ||
	    cr_opt_float(&ld->r, xs, "drain_gbps", 0, true, 800, &p->xoff_drain_gbps) < 0)
		return -1;
	return 0;
}

/* qos = { trust = "dscp" | "pcp"; dscp_to_priority = [64 priorities]; honour_pfc = true; pfc_xoff = {...}; } */
static int port_qos(struct loader *ld, const config_setting_t *ps, struct cfg_port *p)
{
	static const char *const keys[] = { "trust", "dscp_to_priority", "honour_pfc", "pfc_xoff", "nic_pfc", "egress",
					    "priority_to_tc", "tc_to_queue", NULL };
	static const char *const trusts[] = { "dscp", "pcp", NULL };
	const config_setting_t *qs, *s;
	int rc, i;

	for (unsigned d = 0; d < 64; d++)
		p->dscp_to_priority[d] = (uint8_t)(d >> 3);
	for (unsigned i = 0; i < 8; i++)
		p->priority_to_tc[i] = (uint8_t)i;
	p->honour_pfc = true;
	if ((rc = cr_opt_group(&ld->r, ps, "qos", &qs)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, qs, keys) || cr_opt_bool(&ld->r, qs, "honour_pfc", &p->honour_pfc) < 0 ||
	    cr_opt_bool(&ld->r, qs, "nic_pfc", &p->nic_pfc) < 0)
		return -1;
	if ((s = config_setting_get_member(qs, "trust"))) {
		if ((i = cr_pick(&ld->r, s, trusts, NULL)) < 0)
			return -1;
		p->trust_pcp = i == 1;
	}
	if ((s = config_setting_get_member(qs, "dscp_to_priority"))) {
		if (config_setting_type(s) != CONFIG_TYPE_ARRAY || config_setting_length(s) != 64)
			return cr_fail(&ld->r, s, "must be an array of 64 priorities 0..7 (index: the DSCP)");
		for (unsigned d = 0; d < 64; d++) {
			const config_setting_t *e = config_setting_get_elem(s, d);
			if (config_setting_type(e) != CONFIG_TYPE_INT || config_setting_get_int(e) < 0 ||
			    config_setting_get_int(e) > 7)
				return cr_fail(&ld->r, s, "element %u (DSCP %u) must be a priority 0..7", d, d);
			p->dscp_to_priority[d] = (uint8_t)config_setting_get_int(e);
		}
	}
	if ((s = config_setting_get_member(qs, "priority_to_tc"))) {
		double v[8];
		if (eight_numbers(ld, s, 0, 7, true, v))
			return -1;
		for (unsigned i = 0; i < 8; i++)
			p->priority_to_tc[i] = (uint8_t)v[i];
	}
	if ((s = config_setting_get_member(qs, "tc_to_queue"))) {
		double v[8];
		if (eight_numbers(ld, s, 0, p->tx_queues - 1, true, v))
			return -1;
		for (unsigned i = 0; i < 8; i++)
			p->tc_to_queue[i] = (uint8_t)v[i];
		p->has_tc_to_queue = true;
	}
	return port_pfc_xoff(ld, qs, p) || port_egress(ld, qs, p) ? -1 : 0;
}

/* ---- congestion control and event injection ------------------------------------------------ */

static const struct np_desc { const char *name; size_t off; size_t size; double lo, hi; } np_descs[] = {
	{ "min_time_between_cnps", offsetof(struct np_params, min_time_between_cnps), 4, 0, 1e7 },
	{ "cnp_dscp", offsetof(struct np_params, cnp_dscp), 1, 0, 63 },
	{ "cnp_802p_prio", offsetof(struct np_params, cnp_802p_prio), 1, 0, 7 },
};

/* One parameter from the member of g named d->name, in d's range; absent: left as it is. */
static int set_param(struct loader *ld, const config_setting_t *g, const struct cc_param *d, void *params)
{
	long long v = 0;
	double f = 0;
	bool b = false;
	int rc;

	switch (d->type) {
	case CC_PARAM_BOOL:
		if ((rc = cr_opt_bool(&ld->r, g, d->name, &b)) == 1)
			cc_param_store(d, params, b);
		return rc;
	case CC_PARAM_DOUBLE:
		if ((rc = cr_opt_float(&ld->r, g, d->name, d->lo, false, d->hi, &f)) == 1)
			cc_param_store(d, params, f);
		return rc;
	default:
		if ((rc = cr_opt_int(&ld->r, g, d->name, (long long)d->lo, (long long)d->hi, false, &v)) == 1)
			cc_param_store_int(d, params, (uint64_t)v);
		return rc;
	}
}

/* Sets the members of g named in table[] into params; other members are refused, except those in
 * extra[] (handled by the caller). */
static int set_params(struct loader *ld, const config_setting_t *g, const struct cc_param *table, void *params,
		      const char *const extra[])
{
	const char *keys[40];
	unsigned k = 0;

	for (unsigned i = 0; extra && extra[i]; i++)
		keys[k++] = extra[i];
	for (const struct cc_param *d = table; d->name; d++)
		keys[k++] = d->name;
	keys[k] = NULL;
	if (cr_known_keys(&ld->r, g, keys))
		return -1;
	for (const struct cc_param *d = table; d->name; d++)
		if (set_param(ld, g, d, params) < 0)
			return -1;
	return 0;
}

/* dcqcn = { profile = "nvidia" | "paper"; <parameters> }: the profile's defaults, then these. */
static int flow_dcqcn(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	static const char *const extra[] = { "profile", NULL };
	const config_setting_t *ds, *s;
	const char *bad, *why;
	int rc, i;

	dcqcn_params_default(&g->dcqcn, DCQCN_NVIDIA);
	if ((rc = cr_opt_group(&ld->r, fs, "dcqcn", &ds)) <= 0)
		return rc;
	if (g->cc != CFG_CC_DCQCN)
		return cr_fail_member(&ld->r, fs, "dcqcn",
				      "parameters for cc = \"dcqcn\", but the flow's cc is not dcqcn");
	if ((s = config_setting_get_member(ds, "profile"))) {
		if ((i = cr_pick(&ld->r, s, cc_dcqcn_profile_names, NULL)) < 0)
			return -1;
		dcqcn_params_default(&g->dcqcn, (enum dcqcn_profile)i);
	}
	if (set_params(ld, ds, cc_dcqcn_params, &g->dcqcn, extra))
		return -1;
	if ((bad = dcqcn_params_check(&g->dcqcn, &why)))
		return cr_fail_member(&ld->r, ds, bad, "%s%s", why ? "must be " : "", why ? why : "out of range");
	return 0;
}

static int flow_timely(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	const config_setting_t *ts;
	const char *bad, *why;
	int rc;

	timely_params_default(&g->timely);
	if ((rc = cr_opt_group(&ld->r, fs, "timely", &ts)) <= 0)
		return rc;
	if (g->cc != CFG_CC_TIMELY)
		return cr_fail_member(&ld->r, fs, "timely",
				      "parameters for cc = \"timely\", but the flow's cc is not timely");
	if (set_params(ld, ts, cc_timely_params, &g->timely, NULL))
		return -1;
	if ((bad = timely_params_check(&g->timely, &why)))
		return cr_fail_member(&ld->r, ts, bad, "%s%s", why ? "must be " : "", why ? why : "out of range");
	return 0;
}

/* cc = "dcqcn" | "timely" | "none" */
static int flow_cc(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	static const char *const algos[] = { "none", "dcqcn", "timely", NULL };
	const config_setting_t *s = config_setting_get_member(fs, "cc");
	int i;

	if (s) {
		if ((i = cr_pick(&ld->r, s, algos, NULL)) < 0)
			return -1;
		g->cc = (enum cfg_cc)i;
	}
	if (g->cc == CFG_CC_TIMELY && g->transport != CFG_RC)
		return cr_fail(&ld->r, s, "timely needs RTT samples, which come from RC ACKs (transport rc)");
	if (g->cc != CFG_CC_NONE && g->rate_pps > 0)
		return cr_fail(&ld->r, s,
			       "congestion control sets a rate in Gb/s: use rate_gbps (or none), not rate_pps");
	if (g->cc != CFG_CC_NONE && g->pattern != CFG_PATTERN_CONSTANT)
		return cr_fail(&ld->r, s, "congestion control paces the QP itself: pattern must be constant");
	return flow_dcqcn(ld, fs, g) || flow_timely(ld, fs, g) ? -1 : 0;
}

/* One entry of an `inject` list: { action = "ce" | "drop" | "corrupt"; psn | every | probability;
 * qp; count; } */
static int parse_inject(struct loader *ld, const config_setting_t *is, struct cfg_inject *in, bool tx,
			unsigned qps)
{
	static const char *const tx_keys[] = { "action", "qp", "psn", "every", "probability", "count", NULL };
	static const char *const rx_keys[] = { "action", "every", "probability", "count", NULL };
	static const char *const actions[] = { "ce", "drop", "corrupt", NULL };
	const config_setting_t *s;
	long long v;
	int i, rc, ways = 0;

	if (cr_want_type(&ld->r, is, CONFIG_TYPE_GROUP, "a group { action = ...; every = ...; }") ||
	    cr_known_keys(&ld->r, is, tx ? tx_keys : rx_keys))
		return -1;
	memset(in, 0, sizeof(*in));
	in->qp = -1;
	in->psn = -1;
	in->line = config_setting_source_line(is);
	s = cr_required(&ld->r, is, "action", "ce, drop or corrupt");
	if (!s || (i = cr_pick(&ld->r, s, actions, NULL)) < 0)
		return -1;
	in->action = (enum cfg_inject_action)i;
	if ((rc = cr_opt_int(&ld->r, is, "qp", 0, (long long)qps - 1, false, &v)) < 0)
		return -1;
	if (rc == 1)
		in->qp = (int)v;
	if ((rc = cr_opt_int(&ld->r, is, "psn", 0, 0xFFFFFF, false, &v)) < 0)
		return -1;
	if (rc == 1) {
		in->psn = v;
		ways++;
	}
	if ((rc = cr_opt_int(&ld->r, is, "every", 1, 1000000000, false, &v)) < 0)
		return -1;
	if (rc == 1) {
		in->every = (uint64_t)v;
		ways++;
	}
	if ((rc = cr_opt_float(&ld->r, is, "probability", 0, true, 1, &in->probability)) < 0)
		return -1;
	ways += rc == 1;
	if ((rc = cr_opt_int(&ld->r, is, "count", 1, (long long)1e15, false, &v)) < 0)
		return -1;
	if (rc == 1)
		in->count = (uint64_t)v;
	if (ways != 1)
		return cr_fail(&ld->r, is, "choose the packets one way: %s",
			       tx ? "psn, every or probability" : "every or probability");
	return 0;
}

static int inject_list(struct loader *ld, const config_setting_t *parent, const char *key, struct cfg_inject *out,
		       unsigned *n_out, bool tx, unsigned qps)
{
	const config_setting_t *ls = config_setting_get_member(parent, key);
	int n;

	*n_out = 0;
	if (!ls)
		return 0;
	if (!config_setting_is_list(ls))
		return cr_fail(&ld->r, ls, "must be a list ( { action = ...; ... }, ... )");
	n = config_setting_length(ls);
	if (n > CFG_MAX_INJECT)
		return cr_fail(&ld->r, ls, "%d entries (at most %d)", n, CFG_MAX_INJECT);
	for (int i = 0; i < n; i++)
		if (parse_inject(ld, config_setting_get_elem(ls, (unsigned)i), &out[i], tx, qps))
			return -1;
	*n_out = (unsigned)n;
	return 0;
}

/* The table of algo's parameters (anything but dcqcn reads as timely, as config.h allows). */
static const struct cc_param *cc_table(enum cfg_cc algo)
{
	return algo == CFG_CC_DCQCN ? cc_dcqcn_params : cc_timely_params;
}

int config_cc_param_set(enum cfg_cc algo, void *params, const char *name, double value, char *err, size_t errlen)
{
	const struct cc_param *d = cc_param_find(cc_table(algo), name);
	union {
		struct dcqcn_params d;
		struct timely_params t;
	} copy;
	const char *bad, *why = NULL;

	if (!d) {
		snprintf(err, errlen, "%s has no parameter '%s' (docs/cc.md)", algo == CFG_CC_DCQCN ? "dcqcn" : "timely", name);
		return -1;
	}
	if (!(value >= d->lo && value <= d->hi) || (d->type != CC_PARAM_DOUBLE && value != (double)(long long)value)) {
		snprintf(err, errlen, "%s: %g is out of range (%s%g..%g)", name, value,
			 d->type == CC_PARAM_DOUBLE ? "" : "integers ", d->lo, d->hi);
		return -1;
	}
	/* checked on a copy, so that the live parameters change only to a set that passes */
	memcpy(&copy, params, algo == CFG_CC_DCQCN ? sizeof(copy.d) : sizeof(copy.t));
	cc_param_store(d, &copy, value);
	bad = algo == CFG_CC_DCQCN ? dcqcn_params_check(&copy.d, &why) : timely_params_check(&copy.t, &why);
	if (bad) {
		snprintf(err, errlen, "%s: %s", bad, why ? why : "out of range");
		return -1;
	}
	cc_param_store(d, params, value);
	return 0;
}

unsigned config_cc_params_list(enum cfg_cc algo, const void *params, const char **names, double *values, unsigned max)
{
	const struct cc_param *table = cc_table(algo);
	unsigned n = cc_params_count(table);

	if (algo == CFG_CC_NONE)
		return 0;
	n = n < max ? n : max;
	for (unsigned i = 0; i < n; i++) {
		names[i] = table[i].name;
		values[i] = cc_param_load(&table[i], params);
	}
	return n;
}

/* np = { enabled; min_time_between_cnps; cnp_dscp; cnp_802p_prio; }: the port's notification
 * point, on by default as on ConnectX ports. */
static int port_np(struct loader *ld, const config_setting_t *ps, struct cfg_port *p)
{
	static const char *const keys[] = { "enabled", "min_time_between_cnps", "cnp_dscp", "cnp_802p_prio", NULL };
	const config_setting_t *ns;
	int rc;

	p->np_enabled = true;
	np_params_default(&p->np);
	if ((rc = cr_opt_group(&ld->r, ps, "np", &ns)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, ns, keys) || cr_opt_bool(&ld->r, ns, "enabled", &p->np_enabled) < 0)
		return -1;
	for (unsigned i = 0; i < sizeof(np_descs) / sizeof(np_descs[0]); i++) {
		long long v;

		rc = cr_opt_int(&ld->r, ns, np_descs[i].name, (long long)np_descs[i].lo, (long long)np_descs[i].hi,
				false, &v);
		if (rc < 0)
			return -1;
		if (rc == 1 && np_descs[i].size == 4)
			*(uint32_t *)((char *)&p->np + np_descs[i].off) = (uint32_t)v;
		else if (rc == 1)
			*((uint8_t *)&p->np + np_descs[i].off) = (uint8_t)v;
	}
	return 0;
}

static int parse_port(struct loader *ld, const config_setting_t *ps, unsigned idx)
{
	static const char *const keys[] = { "name", "device", "vdev_args", "mac", "ipv4", "ipv6",
					    "link_speed_gbps", "rx_queues", "tx_queues", "rx_desc", "tx_desc",
					    "mtu", "rx_drop_probability", "steering", "timestamps", "tx_schedule_lead_us",
					    "qos", "np", "rx_inject", NULL };
	struct cfg_port *p = &ld->cfg->ports[idx];
	const config_setting_t *s;
	char buf[64];

	if (cr_want_type(&ld->r, ps, CONFIG_TYPE_GROUP, "a group { name = ...; device = ...; }") ||
	    cr_known_keys(&ld->r, ps, keys))
		return -1;
	p->rx_queues = p->tx_queues = 1;
	p->rx_desc = p->tx_desc = 1024;
	p->mtu = 1500;
	p->line = config_setting_source_line(ps);
	s = cr_required(&ld->r, ps, "name", "a unique name of 1..31 A-Z a-z 0-9 _ -");
	if (!s || str_value(ld, s, p->name, sizeof(p->name)))
		return -1;
	if (!valid_name(p->name, CFG_NAME_LEN - 1))
		return cr_fail(&ld->r, s, "'%s' is not a valid name (1..31 of A-Z a-z 0-9 _ -)",
			       cr_shown(p->name, buf));
	for (unsigned j = 0; j < idx; j++)
		if (!strcmp(ld->cfg->ports[j].name, p->name))
			return cr_fail(&ld->r, s, "duplicate port name '%s' (also at %s; names must be unique)",
				       p->name, cr_at(&ld->r, ld->cfg->ports[j].line, (char[CR_AT_LEN]){ 0 }));
	if (port_device(ld, ps, p))
		return -1;
	for (unsigned j = 0; j < idx; j++)
		if (!strcasecmp(ld->cfg->ports[j].device, p->device))
			return cr_fail_member(&ld->r, ps, "device",
					      "device %s is already port '%s' at %s (one port "
					      "per device)", p->device, ld->cfg->ports[j].name,
					      cr_at(&ld->r, ld->cfg->ports[j].line, (char[CR_AT_LEN]){ 0 }));
	return port_addresses(ld, ps, p) || port_sizes(ld, ps, p) ||
			       cr_opt_float(&ld->r, ps, "rx_drop_probability", 0, false, 1,
					    &p->rx_drop_probability) < 0 ||
			       port_steering(ld, ps, p) || port_timestamps(ld, ps, p) || port_qos(ld, ps, p) ||
			       port_np(ld, ps, p) ||
			       inject_list(ld, ps, "rx_inject", p->rx_inject, &p->n_rx_inject, false, 1)
		       ? -1
		       : 0;
}

/* A ring cable carries TX queue q of one end to RX queue q of the other: frames sent on a queue
 * the other end does not poll would stay in its ring, their mbufs never returned. Checked at the
 * end declared second (ps, port p), in both directions. */
static int ring_queues(struct loader *ld, const config_setting_t *ps, unsigned p)
{
	const struct cfg_port *a = &ld->cfg->ports[p], *b;
	int peer = config_ring_peer(ld->cfg, p);

	if (peer < 0 || (unsigned)peer > p)
		return 0;
	b = &ld->cfg->ports[peer];
	if (a->tx_queues > b->rx_queues || b->tx_queues > a->rx_queues) {
		bool a_sends = a->tx_queues > b->rx_queues;
		const struct cfg_port *tx = a_sends ? a : b, *rx = a_sends ? b : a;
		char lost[32];

		if (tx->tx_queues - rx->rx_queues == 1)
			snprintf(lost, sizeof(lost), "queue %u", rx->rx_queues);
		else
			snprintf(lost, sizeof(lost), "queues %u..%u", rx->rx_queues, tx->tx_queues - 1);
		return cr_fail_member(&ld->r, ps, a_sends ? "tx_queues" : "rx_queues",
				      "port '%s' (%s) has tx_queues %u but the other end of its ring cable, port '%s' (%s), "
				      "has rx_queues %u: frames of its TX %s would reach no RX queue (one end's "
				      "tx_queues must be <= the other's rx_queues)", tx->name, tx->device, tx->tx_queues,
				      rx->name, rx->device, rx->rx_queues, lost);
	}
	return 0;
}

/* The engine passes EAL an allow-list of its PCI ports (-a ADDR each, so that EAL probes no other
 * device of the machine): extra_args that EAL cannot combine with it would stop EAL at start. */
static int eal_vs_pci_ports(struct loader *ld, const config_setting_t *root)
{
	const struct cfg_eal *e = &ld->cfg->eal;
	const config_setting_t *eal = config_setting_get_member(root, "eal");
	const char *pci = NULL;
	unsigned skip;

	for (unsigned i = 0; i < ld->cfg->n_ports && !pci; i++)
		if (is_pci_addr(ld->cfg->ports[i].device))
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

static int parse_ports(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *s = cr_required(&ld->r, root, "ports", "a list ( { name = ...; device = ...; }, ... )");
	int n;

	if (!s)
		return -1;
	if (config_setting_type(s) != CONFIG_TYPE_LIST)
		return cr_fail(&ld->r, s, "must be a list ( { ... }, ... ), not %s", cr_type_name(s));
	n = config_setting_length(s);
	if (n < 1 || n > CFG_MAX_PORTS)
		return cr_fail(&ld->r, s, "%d ports (allowed: 1..%d)", n, CFG_MAX_PORTS);
	for (int i = 0; i < n; i++)
		if (parse_port(ld, config_setting_get_elem(s, (unsigned)i), (unsigned)i))
			return -1;
	ld->cfg->n_ports = (unsigned)n;
	for (int i = 0; i < n; i++)
		if (ring_queues(ld, config_setting_get_elem(s, (unsigned)i), (unsigned)i))
			return -1;
	return eal_vs_pci_ports(ld, root);
}

/* A member naming a port; returns its index or -1 after an error. */
static int port_ref(struct loader *ld, const config_setting_t *g)
{
	const config_setting_t *s = cr_required(&ld->r, g, "port", "the name of a port in ports");
	char names[200] = "", buf[64];
	int idx;

	if (!s || cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a string (a port's name)"))
		return -1;
	idx = config_port_index(ld->cfg, config_setting_get_string(s));
	if (idx >= 0)
		return idx;
	for (unsigned i = 0; i < ld->cfg->n_ports; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
			 ld->cfg->ports[i].name);
	return cr_fail(&ld->r, s, "no port named '%s' (ports: %s)", cr_shown(config_setting_get_string(s), buf), names);
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
	char buf[64];
	long long lc;
	int i;

	if (cr_want_type(&ld->r, rs, CONFIG_TYPE_GROUP, "a group { lcore = ...; port = ...; role = ...; }") ||
	    cr_known_keys(&ld->r, rs, keys))
		return -1;
	r->line = config_setting_source_line(rs);
	s = cr_required(&ld->r, rs, "lcore", "an lcore id from eal.lcores");
	if (!s || cr_int_range(&ld->r, s, 0, MAX_LCORE, false, &lc))
		return -1;
	if (!lcore_in(ld->lcore_set, (unsigned long)lc))
		return cr_fail(&ld->r, s, "lcore %lld is not in eal.lcores \"%s\" (add it there)", lc,
			       cr_shown(ld->cfg->eal.lcores, buf));
	if (lc == ld->cfg->eal.main_lcore)
		return cr_fail(&ld->r, s, "lcore %lld is the main lcore, which prints the stats (use another lcore of "
			       "eal.lcores, or set eal.main_lcore)", lc);
	r->lcore = (unsigned)lc;
	i = port_ref(ld, rs);
	if (i < 0)
		return -1;
	r->port = (unsigned)i;
	s = cr_required(&ld->r, rs, "role", "tx, rx, txrx, reflect or switch");
	if (!s || (i = cr_pick(&ld->r, s, roles, NULL)) < 0)
		return -1;
	r->role = role_of[i];
	return role_queue(ld, rs, r);
}

static int parse_roles(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *s = cr_required(&ld->r, root, "lcores", "a list ( { lcore = 1; port = \"a\"; "
						"role = \"txrx\"; }, ... )");
	int n;

	if (!s)
		return -1;
	if (config_setting_type(s) != CONFIG_TYPE_LIST)
		return cr_fail(&ld->r, s, "must be a list ( { lcore = ...; port = ...; role = ...; }, ... ), not %s",
			       cr_type_name(s));
	n = config_setting_length(s);
	if (n < 1 || n > CFG_MAX_ROLES)
		return cr_fail(&ld->r, s, "%d roles (allowed: 1..%d)", n, CFG_MAX_ROLES);
	for (int i = 0; i < n; i++) {
		if (parse_role(ld, config_setting_get_elem(s, (unsigned)i), &ld->cfg->roles[i]))
			return -1;
		ld->cfg->n_roles++;
	}
	return 0;
}

/* ---- flows ---------------------------------------------------------------------------------- */

static const char *const transport_names[] = { "rc", "uc", "ud", NULL };

static int flow_ops(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	static const char *const keys[] = { "send", "send_imm", "write", "write_imm", "read", "fetch_add",
					    "compare_swap", NULL };
	const config_setting_t *ops;
	unsigned total = 0;

	if (cr_opt_group(&ld->r, fs, "ops", &ops) < 0)
		return -1;
	if (!ops)
		return 0; /* send = 1 */
	if (cr_known_keys(&ld->r, ops, keys))
		return -1;
	memset(g->op_weight, 0, sizeof(g->op_weight));
	for (int op = 0; op < CFG_OP_COUNT; op++) {
		if (cr_opt_u32(&ld->r, ops, keys[op], 0, 1000, &g->op_weight[op]) < 0)
			return -1;
		total += g->op_weight[op];
		if (!g->op_weight[op])
			continue;
		if (g->transport == CFG_UD && op >= CFG_OP_WRITE)
			return cr_fail_member(&ld->r, ops, keys[op], "UD has no %s (UD allows only send and send_imm)",
					      keys[op]);
		if (g->transport == CFG_UC && op >= CFG_OP_READ)
			return cr_fail_member(&ld->r, ops, keys[op], "UC has no %s (UC allows send, send_imm, write, "
					      "write_imm)", keys[op]);
	}
	if (!total)
		return cr_fail(&ld->r, ops,
			       "every weight is 0 (at least one of send, send_imm, write, write_imm, read, "
			       "fetch_add, compare_swap must be 1..1000)");
	return 0;
}

static int size_member(struct loader *ld, const config_setting_t *ms, const char *key, uint32_t *out)
{
	const config_setting_t *s = cr_required(&ld->r, ms, key, "a size in bytes, 0..1073741824");
	long long v;

	if (!s || cr_int_range(&ld->r, s, 0, MAX_MSG_SIZE, false, &v))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* message_size: an integer (fixed) or a group naming a distribution. */
static int flow_size_group(struct loader *ld, const config_setting_t *ms, struct cfg_size *z)
{
	static const char *const dists[] = { "fixed", "uniform", "exponential", NULL };
	static const char *const keys[][5] = { { "dist", "size", NULL }, { "dist", "min", "max", NULL },
					       { "dist", "mean", "min", "max", NULL } };
	const config_setting_t *s = cr_required(&ld->r, ms, "dist", "fixed, uniform or exponential");
	int d;

	if (!s || (d = cr_pick(&ld->r, s, dists, NULL)) < 0 || cr_known_keys(&ld->r, ms, keys[d]))
		return -1;
	z->dist = (enum cfg_size_dist)d;
	if (d == CFG_SIZE_FIXED) {
		if (size_member(ld, ms, "size", &z->fixed))
			return -1;
		z->min = z->max = z->mean = z->fixed;
		return 0;
	}
	if (size_member(ld, ms, "min", &z->min) || size_member(ld, ms, "max", &z->max))
		return -1;
	if (z->max < z->min)
		return cr_fail_member(&ld->r, ms, "max", "max %u is below min %u (1 <= min <= max)", z->max, z->min);
	if (d == CFG_SIZE_UNIFORM) {
		z->mean = (uint32_t)(((uint64_t)z->min + z->max) / 2);
		return 0;
	}
	if (size_member(ld, ms, "mean", &z->mean))
		return -1;
	if (z->mean < z->min || z->mean > z->max)
		return cr_fail_member(&ld->r, ms, "mean", "mean %u is outside min..max %u..%u (min <= mean <= max)",
				      z->mean, z->min, z->max);
	return 0;
}

static int flow_size(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	const config_setting_t *ms = config_setting_get_member(fs, "message_size");
	struct cfg_size *z = &g->msg_size;
	long long v;

	/* default: one full packet per message */
	z->dist = CFG_SIZE_FIXED;
	z->fixed = z->min = z->max = z->mean = g->ib_mtu;
	if (ms && config_setting_type(ms) == CONFIG_TYPE_GROUP) {
		if (flow_size_group(ld, ms, z))
			return -1;
	} else if (ms) {
		if (config_setting_type(ms) != CONFIG_TYPE_INT && config_setting_type(ms) != CONFIG_TYPE_INT64)
			return cr_fail(&ld->r, ms, "must be an integer or a group { dist = ...; }, not %s",
				       cr_type_name(ms));
		if (cr_int_range(&ld->r, ms, 0, MAX_MSG_SIZE, false, &v))
			return -1;
		z->fixed = z->min = z->max = z->mean = (uint32_t)v;
	}
	if (g->transport == CFG_UD && z->max > g->ib_mtu)
		return cr_fail_member(&ld->r, fs, "message_size",
				      "UD messages are single packets: %u bytes is above the "
				      "flow's mtu %u (every size <= mtu)", z->max, g->ib_mtu);
	return 0;
}

static int flow_mtu(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	const struct cfg_port *p = &ld->cfg->ports[g->port];
	unsigned need;
	int rc;

	rc = cr_opt_u32(&ld->r, fs, "mtu", 256, 4096, &g->ib_mtu);
	if (rc < 0)
		return -1;
	if (g->ib_mtu & (g->ib_mtu - 1))
		return cr_fail_member(&ld->r, fs, "mtu", "%u is not an IB MTU (256, 512, 1024, 2048 or 4096)",
				      g->ib_mtu);
	/* the largest packet: payload + IP + UDP + BTH + the longest extended header + ICRC */
	need = g->ib_mtu + (g->ip_version == 4 ? WIRE_IPV4_HLEN : WIRE_IPV6_HLEN) + WIRE_UDP_HLEN + WIRE_BTH_LEN +
	       WIRE_ATOMICETH_LEN + WIRE_ICRC_LEN;
	if (need > p->mtu)
		return cr_fail_member(&ld->r, fs, "mtu", "IB MTU %u needs an IP MTU of at least %u, port '%s' has %u "
				      "(lower mtu or raise the port's mtu)", g->ib_mtu, need, p->name, p->mtu);
	return 0;
}

static int flow_addresses(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	const struct cfg_port *p = &ld->cfg->ports[g->port];
	const config_setting_t *s;
	char buf[64];
	const char *v;

	s = cr_required(&ld->r, fs, "dst_mac", "the destination MAC, e.g. 02:00:00:00:00:02");
	if (!s || mac_value(ld, s, g->dst_mac))
		return -1;
	s = cr_required(&ld->r, fs, "dst_ip", "an IPv4 or IPv6 address");
	if (!s || cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a string"))
		return -1;
	v = config_setting_get_string(s);
	if (inet_pton(AF_INET, v, g->dst_ip) == 1)
		g->ip_version = 4;
	else if (inet_pton(AF_INET6, v, g->dst_ip) == 1)
		g->ip_version = 6;
	else
		return cr_fail(&ld->r, s, "'%s' is not an IPv4 or IPv6 address", cr_shown(v, buf));
	if ((g->ip_version == 4 && !p->has_ipv4) || (g->ip_version == 6 && !p->has_ipv6))
		return cr_fail(&ld->r, s, "an IPv%u destination, but port '%s' has no ipv%u address (give the port "
			       "one, or use an IPv%u destination)", g->ip_version, p->name, g->ip_version,
			       g->ip_version == 4 ? 6 : 4);
	return 0;
}

static int flow_ids(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	const char *const keys[] = { "qpn", "dest_qpn" };
	uint32_t *out[] = { &g->qpn, &g->dest_qpn };
	const config_setting_t *s;
	long long v;
	int rc;

	for (int i = 0; i < 2; i++) {
		s = cr_required(&ld->r, fs, keys[i], "a QP number 0x2..0xffffff");
		if (!s || cr_int_range(&ld->r, s, 2, MAX_QPN, true, &v))
			return -1;
		*out[i] = (uint32_t)v;
	}
	rc = cr_opt_int(&ld->r, fs, "start_psn", 0, MAX_QPN, true, &v);
	if (rc < 0)
		return -1;
	if (rc == 1)
		g->start_psn = (uint32_t)v;
	rc = cr_opt_int(&ld->r, fs, "pkey", 0, 0xFFFF, true, &v);
	if (rc < 0)
		return -1;
	if (rc == 1)
		g->pkey = (uint16_t)v;
	rc = cr_opt_int(&ld->r, fs, "qkey", 0, 0xFFFFFFFFLL, true, &v);
	if (rc < 0)
		return -1;
	if (rc == 1 && g->transport != CFG_UD)
		return cr_fail_member(&ld->r, fs, "qkey", "qkey applies only to UD (this flow is %s)",
				      transport_names[g->transport]);
	if (rc == 1)
		g->qkey = (uint32_t)v;
	return 0;
}

static int flow_header_fields(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	static const char *const ecn_names[] = { "not-ect", "ect1", "ect0", "ce", NULL };
	const config_setting_t *s;
	long long v;
	int rc;

	s = config_setting_get_member(fs, "udp_sport");
	if (s && config_setting_type(s) == CONFIG_TYPE_STRING) {
		static const char *const entropy[] = { "entropy", NULL };

		if (cr_pick(&ld->r, s, entropy, ", or a port 1..65535") < 0)
			return -1;
	} else if (s) {
		if (cr_int_range(&ld->r, s, 1, 65535, false, &v))
			return -1;
		g->sport_entropy = false;
		g->sport = (uint16_t)v;
	}
	if ((rc = cr_opt_int(&ld->r, fs, "dscp", 0, 63, false, &v)) < 0)
		return -1;
	if (rc == 1)
		g->dscp = (uint8_t)v;
	s = config_setting_get_member(fs, "ecn");
	if (s && config_setting_type(s) == CONFIG_TYPE_STRING) {
		if ((rc = cr_pick(&ld->r, s, ecn_names, ", or 0..3")) < 0)
			return -1;
		g->ecn = (uint8_t)rc;
	} else if (s) {
		if (cr_int_range(&ld->r, s, 0, 3, false, &v))
			return -1;
		g->ecn = (uint8_t)v;
	}
	/* VID 4095 is reserved by 802.1Q (0 is a priority tag) */
	if ((rc = cr_opt_int(&ld->r, fs, "vlan", 0, 4094, false, &v)) < 0)
		return -1;
	if (rc == 1)
		g->has_vlan = true, g->vlan = (uint16_t)v;
	if ((rc = cr_opt_int(&ld->r, fs, "pcp", 0, 7, false, &v)) < 0)
		return -1;
	if (rc == 1 && !g->has_vlan)
		return cr_fail_member(&ld->r, fs, "pcp",
				      "pcp without vlan (the PCP is a field of the VLAN tag: set vlan "
				      "too, 0 for priority tagging)");
	if (rc == 1)
		g->pcp = (uint8_t)v;
	return 0;
}

static int flow_rate(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	const struct cfg_port *p = &ld->cfg->ports[g->port];
	double max = p->link_speed_gbps > 0 ? p->link_speed_gbps : 800;
	int rg, rp;

	rg = cr_opt_float(&ld->r, fs, "rate_gbps", 0, true, 800, &g->rate_gbps);
	if (rg < 0)
		return -1;
	if (rg == 1 && g->rate_gbps > max)
		return cr_fail_member(&ld->r, fs, "rate_gbps", "%g Gb/s per QP is above port '%s''s link speed %g Gb/s "
				      "(> 0 and <= %g)", g->rate_gbps, p->name, max, max);
	rp = cr_opt_float(&ld->r, fs, "rate_pps", 0, true, 1e9, &g->rate_pps);
	if (rp < 0)
		return -1;
	if (rg == 1 && rp == 1)
		return cr_fail_member(&ld->r, fs, "rate_pps", "rate_gbps and rate_pps are both set (set one of them)");
	return 0;
}

static int flow_pattern(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	static const char *const names[] = { "constant", "poisson", NULL };
	static const char *const keys[] = { "type", "on_us", "off_us", NULL };
	static const char *const onoff[] = { "onoff", NULL };
	const config_setting_t *s = config_setting_get_member(fs, "pattern");
	const config_setting_t *t;
	int i;

	if (!s)
		return 0;
	if (config_setting_type(s) == CONFIG_TYPE_GROUP) {
		t = cr_required(&ld->r, s, "type", "onoff");
		if (cr_known_keys(&ld->r, s, keys) || !t || cr_pick(&ld->r, t, onoff, NULL) < 0)
			return -1;
		if (!config_setting_get_member(s, "on_us") || !config_setting_get_member(s, "off_us"))
			return cr_fail_member(&ld->r, s, config_setting_get_member(s, "on_us") ? "off_us" : "on_us",
					      "missing (required: microseconds > 0)");
		if (cr_opt_float(&ld->r, s, "on_us", 0, true, 1e9, &g->on_us) < 0 ||
		    cr_opt_float(&ld->r, s, "off_us", 0, true, 1e9, &g->off_us) < 0)
			return -1;
		g->pattern = CFG_PATTERN_ONOFF;
	} else {
		if (config_setting_type(s) != CONFIG_TYPE_STRING)
			return cr_fail(&ld->r, s, "must be a string or a group { type = \"onoff\"; ... }, not %s",
				       cr_type_name(s));
		i = cr_pick(&ld->r, s, names, ", or a group { type = \"onoff\"; on_us = ...; off_us = ...; }");
		if (i < 0)
			return -1;
		g->pattern = i ? CFG_PATTERN_POISSON : CFG_PATTERN_CONSTANT;
	}
	if (g->pattern != CFG_PATTERN_CONSTANT && g->rate_gbps == 0 && g->rate_pps == 0)
		return cr_fail(&ld->r, s, "%s pattern needs a rate (set rate_gbps or rate_pps)",
			       g->pattern == CFG_PATTERN_POISSON ? "a poisson" : "an onoff");
	return 0;
}

static int flow_stop(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	static const char *const keys[] = { "messages", "bytes", "seconds", NULL };
	const config_setting_t *st;
	long long v;
	int rc;

	if ((rc = cr_opt_group(&ld->r, fs, "stop", &st)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, st, keys))
		return -1;
	if ((rc = cr_opt_int(&ld->r, st, "messages", 0, LLONG_MAX, false, &v)) < 0)
		return -1;
	if (rc == 1)
		g->stop_messages = (uint64_t)v;
	if ((rc = cr_opt_int(&ld->r, st, "bytes", 0, LLONG_MAX, false, &v)) < 0)
		return -1;
	if (rc == 1)
		g->stop_bytes = (uint64_t)v;
	return cr_opt_float(&ld->r, st, "seconds", 0, false, 1e9, &g->stop_seconds) < 0 ? -1 : 0;
}

/* count and steps; the last QP's numbers must stay within their fields */
static int flow_expansion(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	long long v;
	uint64_t last;
	int rc;

	if (cr_opt_u32(&ld->r, fs, "count", 1, CFG_MAX_QPS_PER_GROUP, &g->count) < 0)
		return -1;
	if ((rc = cr_opt_int(&ld->r, fs, "qpn_step", 1, MAX_QPN, false, &v)) < 0)
		return -1;
	if (rc == 1)
		g->qpn_step = (uint32_t)v;
	if ((rc = cr_opt_int(&ld->r, fs, "dest_qpn_step", 1, MAX_QPN, false, &v)) < 0)
		return -1;
	if (rc == 1)
		g->dest_qpn_step = (uint32_t)v;
	if ((rc = cr_opt_int(&ld->r, fs, "sport_step", 0, 65535, false, &v)) < 0)
		return -1;
	if (rc == 1)
		g->sport_step = (uint16_t)v;
	last = g->qpn + (uint64_t)(g->count - 1) * g->qpn_step;
	if (last > MAX_QPN)
		return cr_fail_member(&ld->r, fs, "count",
				      "the last QPN would be 0x%llx (qpn + (count-1) * qpn_step must "
				      "be <= 0xffffff)", (unsigned long long)last);
	last = g->dest_qpn + (uint64_t)(g->count - 1) * g->dest_qpn_step;
	if (last > MAX_QPN)
		return cr_fail_member(&ld->r, fs, "count", "the last dest_qpn would be 0x%llx (dest_qpn + (count-1) * "
				      "dest_qpn_step must be <= 0xffffff)", (unsigned long long)last);
	last = g->sport + (uint64_t)(g->count - 1) * g->sport_step;
	if (!g->sport_entropy && last > 65535)
		return cr_fail_member(&ld->r, fs, "count", "the last udp_sport would be %llu (udp_sport + (count-1) * "
				      "sport_step must be <= 65535)", (unsigned long long)last);
	return 0;
}

static int flow_needs_tx_role(struct loader *ld, const config_setting_t *fs, const struct cfg_flow_group *g)
{
	for (unsigned i = 0; i < ld->cfg->n_roles; i++)
		if (ld->cfg->roles[i].port == g->port && ld->cfg->roles[i].role == (ld->cfg->roles[i].role & CFG_ROLE_TXRX) &&
		    (ld->cfg->roles[i].role & CFG_ROLE_TX))
			return 0;
	return cr_fail_member(&ld->r, fs, "port",
			      "port '%s' has no tx role in lcores (add { lcore = ...; port = \"%s\"; "
			      "role = \"tx\"; })", ld->cfg->ports[g->port].name, ld->cfg->ports[g->port].name);
}

static void flow_defaults(struct cfg_flow_group *g)
{
	memset(g, 0, sizeof(*g));
	g->transport = CFG_RC;
	g->op_weight[CFG_OP_SEND] = 1;
	g->ib_mtu = 1024;
	g->pkey = WIRE_DEFAULT_PKEY;
	g->qkey = 0x11111111;
	g->sport_entropy = true;
	g->dscp = 26;
	g->ecn = WIRE_ECN_ECT0;
	g->pattern = CFG_PATTERN_CONSTANT;
	g->count = 1;
	g->qpn_step = g->dest_qpn_step = 1;
	g->sport_step = 1;
	g->retry_timeout_us = 67108.864; /* IB's usual local ACK timeout 14: 4.096 us x 2^14 */
	g->retry_limit = 7;
	g->max_outstanding = 32;
	g->latency_timeout_us = 1e6;
}

/* rc = { retry_timeout_us; retry_limit; max_outstanding; ack_every; }: RC only. */
static int flow_reliability(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	static const char *const keys[] = { "retry_timeout_us", "retry_limit", "max_outstanding", "ack_every", NULL };
	const config_setting_t *rs;
	int rc;

	if ((rc = cr_opt_group(&ld->r, fs, "rc", &rs)) <= 0)
		return rc;
	if (g->transport != CFG_RC)
		return cr_fail_member(&ld->r, fs, "rc", "only for transport rc (reliability settings)");
	if (cr_known_keys(&ld->r, rs, keys))
		return -1;
	return cr_opt_float(&ld->r, rs, "retry_timeout_us", 1, false, 1e8, &g->retry_timeout_us) < 0 ||
			       cr_opt_u32(&ld->r, rs, "retry_limit", 0, 1000, &g->retry_limit) < 0 ||
			       cr_opt_u32(&ld->r, rs, "max_outstanding", 1, 128, &g->max_outstanding) < 0 ||
			       cr_opt_u32(&ld->r, rs, "ack_every", 0, 1000000, &g->ack_every) < 0
		       ? -1
		       : 0;
}

/* latency = { mode = "oneway" | "pingpong"; timeout_us; }: packets need room for the probe. */
static int flow_latency(struct loader *ld, const config_setting_t *fs, struct cfg_flow_group *g)
{
	static const char *const keys[] = { "mode", "timeout_us", NULL };
	static const char *const modes[] = { "off", "oneway", "pingpong", NULL };
	const config_setting_t *ls, *s;
	uint32_t smallest;
	int rc, i;

	if ((rc = cr_opt_group(&ld->r, fs, "latency", &ls)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, ls, keys))
		return -1;
	s = cr_required(&ld->r, ls, "mode", "oneway or pingpong (or off)");
	if (!s || (i = cr_pick(&ld->r, s, modes, NULL)) < 0)
		return -1;
	g->latency = (enum cfg_latency)i;
	if (cr_opt_float(&ld->r, ls, "timeout_us", 1, false, 1e8, &g->latency_timeout_us) < 0)
		return -1;
	if (g->latency == CFG_LAT_OFF)
		return 0;
	if (!g->op_weight[CFG_OP_SEND] && !g->op_weight[CFG_OP_SEND_IMM] && !g->op_weight[CFG_OP_WRITE] &&
	    !g->op_weight[CFG_OP_WRITE_IMM])
		return cr_fail(&ld->r, s, "probes travel in SEND or WRITE payloads: the flow's ops have neither");
	smallest = g->msg_size.dist == CFG_SIZE_FIXED ? g->msg_size.fixed : g->msg_size.min;
	if (smallest < CFG_PROBE_MIN_PAYLOAD)
		return cr_fail(&ld->r, s,
			       "messages of %u bytes have no room for the %d-byte probe (message_size >= %d)",
			       smallest, CFG_PROBE_MIN_PAYLOAD, CFG_PROBE_MIN_PAYLOAD);
	if (g->latency == CFG_LAT_PINGPONG && g->transport == CFG_RC)
		g->max_outstanding = 1; /* one message in flight, its ACK the return */
	return 0;
}

static int parse_flow(struct loader *ld, const config_setting_t *fs, unsigned idx)
{
	static const char *const keys[] = { "name", "port", "dst_mac", "dst_ip", "transport", "ops",
					    "message_size", "mtu", "qpn", "dest_qpn", "start_psn", "pkey", "qkey",
					    "udp_sport", "dscp", "ecn", "vlan", "pcp", "rate_gbps", "rate_pps",
					    "pattern", "stop", "count", "qpn_step", "dest_qpn_step", "sport_step",
					    "rc", "latency", "cc", "dcqcn", "timely", "inject", NULL };
	struct cfg_flow_group *g = &ld->cfg->groups[idx];
	const config_setting_t *s;
	char buf[64];
	int i;

	flow_defaults(g);
	if (cr_want_type(&ld->r, fs, CONFIG_TYPE_GROUP, "a group { name = ...; port = ...; ... }") ||
	    cr_known_keys(&ld->r, fs, keys))
		return -1;
	g->line = config_setting_source_line(fs);
	s = cr_required(&ld->r, fs, "name", "a unique name of 1..31 A-Z a-z 0-9 _ -");
	if (!s || str_value(ld, s, g->name, sizeof(g->name)))
		return -1;
	if (!valid_name(g->name, CFG_NAME_LEN - 1))
		return cr_fail(&ld->r, s, "'%s' is not a valid name (1..31 of A-Z a-z 0-9 _ -)",
			       cr_shown(g->name, buf));
	for (unsigned j = 0; j < idx; j++)
		if (!strcmp(ld->cfg->groups[j].name, g->name))
			return cr_fail(&ld->r, s, "duplicate flow name '%s' (also at %s; names must be unique)",
				       g->name, cr_at(&ld->r, ld->cfg->groups[j].line, (char[CR_AT_LEN]){ 0 }));
	if ((i = port_ref(ld, fs)) < 0)
		return -1;
	g->port = (unsigned)i;
	if (flow_needs_tx_role(ld, fs, g))
		return -1;
	s = config_setting_get_member(fs, "transport");
	if (s && (i = cr_pick(&ld->r, s, transport_names, NULL)) < 0)
		return -1;
	if (s)
		g->transport = (enum cfg_transport)i;
	return flow_addresses(ld, fs, g) || flow_mtu(ld, fs, g) || flow_ops(ld, fs, g) || flow_size(ld, fs, g) ||
	       flow_ids(ld, fs, g) || flow_header_fields(ld, fs, g) || flow_rate(ld, fs, g) ||
	       flow_pattern(ld, fs, g) || flow_stop(ld, fs, g) || flow_reliability(ld, fs, g) ||
			       flow_latency(ld, fs, g) || flow_expansion(ld, fs, g) || flow_cc(ld, fs, g) ||
			       inject_list(ld, fs, "inject", g->inject, &g->n_inject, true, g->count)
		       ? -1
		       : 0;
}

static bool group_has_qpn(const struct cfg_flow_group *g, uint32_t q)
{
	return q >= g->qpn && (q - g->qpn) % g->qpn_step == 0 && (q - g->qpn) / g->qpn_step < g->count;
}

/* QPNs identify QPs on a port (ACKs and responses come back addressed to them), so the QPs of
 * all groups on one port must not share one. Exact, with a 2 MiB bit map of the 24-bit space. */
static int check_qpn_overlap(struct loader *ld, const config_setting_t *flows)
{
	const struct engine_config *c = ld->cfg;
	uint8_t *used = NULL;
	int rc = 0;

	for (unsigned port = 0; port < c->n_ports && !rc; port++) {
		unsigned on_port = 0;

		for (unsigned k = 0; k < c->n_groups; k++)
			on_port += c->groups[k].port == port;
		if (on_port < 2)
			continue;
		if (!used && !(used = malloc((MAX_QPN + 1) / 8)))
			return cr_fail(&ld->r, flows, "out of memory checking QPNs");
		memset(used, 0, (MAX_QPN + 1) / 8);
		for (unsigned k = 0; k < c->n_groups && !rc; k++) {
			const struct cfg_flow_group *g = &c->groups[k];

			for (unsigned i = 0; g->port == port && i < g->count && !rc; i++) {
				uint32_t q = g->qpn + i * g->qpn_step;

				if (!(used[q / 8] & (1u << (q % 8)))) {
					used[q / 8] |= (uint8_t)(1u << (q % 8));
					continue;
				}
				for (unsigned j = 0; j < k; j++)
					if (c->groups[j].port == port && group_has_qpn(&c->groups[j], q)) {
						rc = cr_fail_member(&ld->r, config_setting_get_elem(flows, k), "qpn",
							"QPN 0x%x of flow '%s' is also a QPN of flow '%s' at %s on "
							"port '%s' (the QPNs of one port must not overlap)", q, g->name,
							c->groups[j].name, cr_at(&ld->r, c->groups[j].line, (char[CR_AT_LEN]){ 0 }),
							c->ports[port].name);
						break;
					}
			}
		}
	}
	free(used);
	return rc;
}

static int parse_flows(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *s = config_setting_get_member(root, "flows");
	int n;

	if (!s)
		return 0; /* receive only */
	if (config_setting_type(s) != CONFIG_TYPE_LIST)
		return cr_fail(&ld->r, s, "must be a list ( { name = ...; port = ...; ... }, ... ), not %s",
			       cr_type_name(s));
	n = config_setting_length(s);
	if (n > CFG_MAX_FLOW_GROUPS)
		return cr_fail(&ld->r, s, "%d flow groups (allowed: 0..%d)", n, CFG_MAX_FLOW_GROUPS);
	for (int i = 0; i < n; i++) {
		if (parse_flow(ld, config_setting_get_elem(s, (unsigned)i), (unsigned)i))
			return -1;
		ld->cfg->n_groups++;
	}
	return check_qpn_overlap(ld, s);
}

/* ---- collectives ----------------------------------------------------------------------------- */

static const char *const collective_types[] = {"ring", "incast", "all_to_all", "custom", NULL};

static int collective_flows(struct loader *ld, const config_setting_t *cs, struct cfg_collective *c, unsigned idx)
{
	const config_setting_t *fl = cr_required(&ld->r, cs, "flows", "a list of flow names [\"a\", \"b\", ...]");
	char buf[64];
	int n;

	if (!fl)
		return -1;
	if (config_setting_type(fl) != CONFIG_TYPE_ARRAY && config_setting_type(fl) != CONFIG_TYPE_LIST)
		return cr_fail(&ld->r, fl, "must be an array of flow names [\"a\", \"b\"], not %s", cr_type_name(fl));
	n = config_setting_length(fl);
	if (n < 1 || n > CFG_MAX_COLLECTIVE_FLOWS)
		return cr_fail(&ld->r, fl, "%d flows (allowed: 1..%d)", n, CFG_MAX_COLLECTIVE_FLOWS);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(fl, (unsigned)i);
		const char *name = config_setting_get_string(e);
		unsigned g;

		if (!name)
			return cr_fail(&ld->r, e, "element %d is not a string (a flow name)", i);
		for (g = 0; g < ld->cfg->n_groups && strcmp(ld->cfg->groups[g].name, name); g++)
			;
		if (g == ld->cfg->n_groups)
			return cr_fail(&ld->r, e, "no flow named '%s' (flows are declared in the flows list)",
				       cr_shown(name, buf));
		if (ld->cfg->group_collective[g] >= 0)
			return cr_fail(&ld->r, e,
				       "flow '%s' is already in collective '%s' (a flow belongs to one collective)",
				       name, ld->cfg->collectives[ld->cfg->group_collective[g]].name);
		if (cfg_group_has_stop(&ld->cfg->groups[g]))
			return cr_fail(&ld->r, e,
				       "flow '%s' has a stop condition (%s); in a collective the phases stop it",
				       name, cr_at(&ld->r, ld->cfg->groups[g].line, (char[CR_AT_LEN]){ 0 }));
		ld->cfg->group_collective[g] = (int)idx;
		c->flows[c->n_flows++] = g;
	}
	return 0;
}

static int parse_collective(struct loader *ld, const config_setting_t *cs, unsigned idx)
{
	static const char *const keys[] = {"name", "type", "flows", "phases", NULL};
	struct cfg_collective *c = &ld->cfg->collectives[idx];
	const config_setting_t *s;
	char buf[64];
	int i;

	if (cr_want_type(&ld->r, cs, CONFIG_TYPE_GROUP, "a group { name = ...; flows = [...]; phases = N; }") ||
	    cr_known_keys(&ld->r, cs, keys))
		return -1;
	c->line = config_setting_source_line(cs);
	c->type = CFG_COLL_CUSTOM;
	s = cr_required(&ld->r, cs, "name", "a unique name of 1..31 A-Z a-z 0-9 _ -");
	if (!s || str_value(ld, s, c->name, sizeof(c->name)))
		return -1;
	if (!valid_name(c->name, CFG_NAME_LEN - 1))
		return cr_fail(&ld->r, s, "'%s' is not a valid name (1..31 of A-Z a-z 0-9 _ -)",
			       cr_shown(c->name, buf));
	for (unsigned j = 0; j < idx; j++)
		if (!strcmp(ld->cfg->collectives[j].name, c->name))
			return cr_fail(&ld->r, s, "duplicate collective name '%s' (also at %s)", c->name,
				       cr_at(&ld->r, ld->cfg->collectives[j].line, (char[CR_AT_LEN]){ 0 }));
	s = config_setting_get_member(cs, "type");
	if (s && (i = cr_pick(&ld->r, s, collective_types, NULL)) < 0)
		return -1;
	if (s)
		c->type = (enum cfg_collective_type)i;
	if (!cr_required(&ld->r, cs, "phases", "the number of phases, 1..4096"))
		return -1;
	if (cr_opt_u32(&ld->r, cs, "phases", 1, CFG_MAX_PHASES, &c->phases) < 0)
		return -1;
	return collective_flows(ld, cs, c, idx);
}

static int parse_collectives(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *s = config_setting_get_member(root, "collectives");
	int n;

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_LIST)
		return cr_fail(&ld->r, s, "must be a list ( { name = ...; flows = [...]; phases = N; }, ... ), not %s",
			       cr_type_name(s));
	n = config_setting_length(s);
	if (n > CFG_MAX_COLLECTIVES)
		return cr_fail(&ld->r, s, "%d collectives (allowed: 0..%d)", n, CFG_MAX_COLLECTIVES);
	for (int i = 0; i < n; i++) {
		if (parse_collective(ld, config_setting_get_elem(s, (unsigned)i), (unsigned)i))
			return -1;
		ld->cfg->n_collectives++;
	}
	return 0;
}

/* ---- responders ------------------------------------------------------------------------------ */

/* A responders entry, or (peer_only) a peers entry: only the QPN pairs. */
static int parse_responder(struct loader *ld, const config_setting_t *rs, struct cfg_responder *r, bool peer_only)
{
	static const char *const keys[] = {"port", "qpn", "peer_qpn", "count", "qpn_step", "peer_qpn_step", "mtu",
					   "start_psn", "ack_every", "pkey", NULL};
	static const char *const peer_keys[] = {"port", "qpn", "peer_qpn", "count", "qpn_step", "peer_qpn_step", NULL};
	unsigned v = 0;
	int i;

	if (cr_want_type(&ld->r, rs, CONFIG_TYPE_GROUP, "a group { port = ...; qpn = ...; peer_qpn = ...; }") ||
	    cr_known_keys(&ld->r, rs, peer_only ? peer_keys : keys))
		return -1;
	r->line = config_setting_source_line(rs);
	r->count = 1;
	r->qpn_step = r->peer_qpn_step = 1;
	r->ib_mtu = 1024;
	r->pkey = WIRE_DEFAULT_PKEY;
	if ((i = port_ref(ld, rs)) < 0)
		return -1;
	r->port = (unsigned)i;
	if (!cr_required(&ld->r, rs, "qpn", "0x2..0xFFFFFF") || !cr_required(&ld->r, rs, "peer_qpn", "0x2..0xFFFFFF"))
		return -1;
	if (cr_opt_u32(&ld->r, rs, "qpn", 2, 0xFFFFFF, &v) < 0)
		return -1;
	r->qpn = v;
	if (cr_opt_u32(&ld->r, rs, "peer_qpn", 2, 0xFFFFFF, &v) < 0)
		return -1;
	r->peer_qpn = v;
	if (cr_opt_u32(&ld->r, rs, "count", 1, CFG_MAX_QPS_PER_GROUP, &r->count) < 0 ||
	    cr_opt_u32(&ld->r, rs, "qpn_step", 1, 0xFFFFFF, &r->qpn_step) < 0 ||
	    cr_opt_u32(&ld->r, rs, "peer_qpn_step", 1, 0xFFFFFF, &r->peer_qpn_step) < 0 ||
	    cr_opt_u32(&ld->r, rs, "start_psn", 0, 0xFFFFFF, &r->start_psn) < 0 ||
	    cr_opt_u32(&ld->r, rs, "ack_every", 0, 1000000, &r->ack_every) < 0)
		return -1;
	if (cr_opt_u32(&ld->r, rs, "pkey", 0, 0xFFFF, &v) < 0)
		return -1;
	if (config_setting_get_member(rs, "pkey"))
		r->pkey = (uint16_t)v;
	if (cr_opt_u32(&ld->r, rs, "mtu", 256, 4096, &r->ib_mtu) < 0)
		return -1;
	if (r->ib_mtu & (r->ib_mtu - 1))
		return cr_fail_member(&ld->r, rs, "mtu", "%u is not an IB MTU (256, 512, 1024, 2048 or 4096)",
				      r->ib_mtu);
	if ((unsigned long long)r->qpn + (unsigned long long)(r->count - 1) * r->qpn_step > 0xFFFFFF ||
	    (unsigned long long)r->peer_qpn + (unsigned long long)(r->count - 1) * r->peer_qpn_step > 0xFFFFFF)
		return cr_fail_member(&ld->r, rs, "count", "the last qpn or peer_qpn would pass 0xFFFFFF");
	return 0;
}

/* A list of QPN pairs: `responders` (RC responder QPs for requesters elsewhere) or, peer_only,
 * `peers` (QPs elsewhere that send to local QPNs, whatever the transport: the notification point
 * addresses its CNPs to them). */
static int qpn_pair_list(struct loader *ld, const config_setting_t *root, const char *key, bool peer_only,
			 struct cfg_responder *out, unsigned *n_out)
{
	const config_setting_t *s = config_setting_get_member(root, key);
	int n;

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_LIST)
		return cr_fail(&ld->r, s, "must be a list ( { port = ...; qpn = ...; peer_qpn = ...; }, ... ), not %s",
			       cr_type_name(s));
	n = config_setting_length(s);
	if (n > CFG_MAX_RESPONDERS)
		return cr_fail(&ld->r, s, "%d %s groups (allowed: 0..%d)", n, peer_only ? "peer" : "responder",
			       CFG_MAX_RESPONDERS);
	for (int i = 0; i < n; i++) {
		if (parse_responder(ld, config_setting_get_elem(s, (unsigned)i), &out[i], peer_only))
			return -1;
		(*n_out)++;
	}
	return 0;
}

static int parse_responders(struct loader *ld, const config_setting_t *root)
{
	return qpn_pair_list(ld, root, "responders", false, ld->cfg->responders, &ld->cfg->n_responders);
}

static int parse_peers(struct loader *ld, const config_setting_t *root)
{
	return qpn_pair_list(ld, root, "peers", true, ld->cfg->peers, &ld->cfg->n_peers);
}

/* ---- SLA checks ---------------------------------------------------------------------------- */

const char *const cfg_sla_metric_name[SLA_METRIC_COUNT + 1] = {
	"goodput_gbps", "loss", "p50_latency_ns", "p99_latency_ns", "p99_9_latency_ns", "max_latency_ns", "retransmits",
	"pause_percent", "pfc_rx_per_s", "rx_gbps", "tx_gbps", "rx_dropped", NULL,
};

/* flow = "NAME" | "*" or port = "NAME" | "*": the check's subject */
static int sla_subject(struct loader *ld, const config_setting_t *e, struct cfg_sla *c)
{
	const config_setting_t *f = config_setting_get_member(e, "flow"), *p = config_setting_get_member(e, "port");
	const config_setting_t *s = f ? f : p;
	const char *name;
	char buf[64];

	if (!f == !p)
		return cr_fail(&ld->r, e, "name one subject: flow = \"NAME\" (or \"*\") or port = \"NAME\" (or \"*\")");
	if (cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a string (a name, or \"*\" for all)"))
		return -1;
	name = config_setting_get_string(s);
	c->port = p != NULL;
	c->target = -1;
	if (!strcmp(name, "*"))
		return 0;
	if (c->port)
		c->target = config_port_index(ld->cfg, name);
	else
		for (unsigned g = 0; g < ld->cfg->n_groups; g++)
			if (!strcmp(ld->cfg->groups[g].name, name))
				c->target = (int)g;
	if (c->target < 0)
		return cr_fail(&ld->r, s, "no %s named '%s'", c->port ? "port" : "flow", cr_shown(name, buf));
	return 0;
}

/* sla = ( { flow | port; metric; min | max; priority; }, ... ) */
static int parse_sla(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "flow", "port", "metric", "min", "max", "priority", NULL };
	const config_setting_t *ls = config_setting_get_member(root, "sla"), *s;
	int n, m;

	if (!ls)
		return 0;
	if (!config_setting_is_list(ls) || (n = config_setting_length(ls)) > CFG_MAX_SLA)
		return cr_fail(&ld->r, ls, "must be a list of up to %d { flow | port = ...; metric = ...; min | max = ...; }",
			       CFG_MAX_SLA);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(ls, (unsigned)i);
		struct cfg_sla *c = &ld->cfg->sla[i];
		unsigned prio;
		int rc;

		c->line = config_setting_source_line(e);
		c->priority = -1;
		if (cr_want_type(&ld->r, e, CONFIG_TYPE_GROUP, "a group { flow | port; metric; min | max; }") ||
		    cr_known_keys(&ld->r, e, keys) || sla_subject(ld, e, c) ||
		    !(s = cr_required(&ld->r, e, "metric", "what is checked (docs/report.md#sla)")) ||
		    (m = cr_pick(&ld->r, s, cfg_sla_metric_name, NULL)) < 0)
			return -1;
		c->metric = (enum cfg_sla_metric)m;
		if ((m >= SLA_FIRST_PORT_METRIC) != c->port)
			return cr_fail(&ld->r, s, "%s is a %s metric (the check names a %s)", cfg_sla_metric_name[m],
				       m >= SLA_FIRST_PORT_METRIC ? "port" : "flow", c->port ? "port" : "flow");
		if ((rc = cr_opt_float(&ld->r, e, "min", -1e18, false, 1e18, &c->min)) < 0)
			return -1;
		c->has_min = rc == 1;
		if ((rc = cr_opt_float(&ld->r, e, "max", -1e18, false, 1e18, &c->max)) < 0)
			return -1;
		c->has_max = rc == 1;
		if (!c->has_min && !c->has_max)
			return cr_fail(&ld->r, e, "give the limit: min = X and/or max = X");
		if ((rc = cr_opt_u32(&ld->r, e, "priority", 0, 7, &prio)) < 0)
			return -1;
		if (rc == 1 && c->metric != SLA_PAUSE_PERCENT)
			return cr_fail_member(&ld->r, e, "priority", "only for metric pause_percent");
		if (rc == 1)
			c->priority = (int)prio;
		if (c->metric >= SLA_P50_NS && c->metric <= SLA_MAX_NS && !c->port) {
			for (unsigned g = 0; g < ld->cfg->n_groups; g++)
				if ((c->target < 0 || (int)g == c->target) && ld->cfg->groups[g].latency == CFG_LAT_OFF)
					return cr_fail(&ld->r, s, "flow '%s' measures no latency (set its latency = { mode = ...; })",
						       ld->cfg->groups[g].name);
		}
		ld->cfg->n_sla++;
	}
	return 0;
}

/* ---- PFC generators ---------------------------------------------------------------------------- */

static int parse_pfc_generator(struct loader *ld, const config_setting_t *gs, struct cfg_pfc_generator *g)
{
	static const char *const keys[] = { "port", "priorities", "quanta", "pause", "rate_pps", "count", "start_s",
					    NULL };
	const config_setting_t *s;
	unsigned quanta = 0xFFFF;
	long long v;
	int i;

	if (cr_want_type(&ld->r, gs, CONFIG_TYPE_GROUP,
			 "a group { port = ...; priorities = [...]; rate_pps = ...; }") ||
	    cr_known_keys(&ld->r, gs, keys))
		return -1;
	g->line = config_setting_source_line(gs);
	if ((i = port_ref(ld, gs)) < 0)
		return -1;
	g->port = (unsigned)i;
	if (cr_opt_bool(&ld->r, gs, "pause", &g->pause) < 0 || cr_opt_u32(&ld->r, gs, "quanta", 0, 0xFFFF, &quanta) < 0)
		return -1;
	g->quanta = (uint16_t)quanta;
	s = config_setting_get_member(gs, "priorities");
	if (s && g->pause)
		return cr_fail(&ld->r, s,
			       "an 802.3x PAUSE frame (pause = true) pauses every priority: no priorities here");
	if (!s && !g->pause)
		return cr_fail_member(&ld->r, gs, "priorities",
				      "missing (required: an array of priorities 0..7, e.g. [3])");
	if (s) {
		if (config_setting_type(s) != CONFIG_TYPE_ARRAY || config_setting_length(s) < 1)
			return cr_fail(&ld->r, s, "must be a non-empty array of priorities 0..7, e.g. [3, 4]");
		for (int k = 0; k < config_setting_length(s); k++) {
			const config_setting_t *e = config_setting_get_elem(s, (unsigned)k);
			if (cr_int_range(&ld->r, e, 0, 7, false, &v))
				return -1;
			g->class_enable |= (uint8_t)(1u << v);
		}
	}
	s = cr_required(&ld->r, gs, "rate_pps", "frames per second, > 0 (e.g. 1000; a storm: 1e6)");
	if (!s || cr_opt_float(&ld->r, gs, "rate_pps", 0, true, 1e8, &g->rate_pps) < 0)
		return -1;
	if (cr_opt_int(&ld->r, gs, "count", 0, (long long)1 << 40, false, &v) < 0 ||
	    cr_opt_float(&ld->r, gs, "start_s", 0, false, 1e6, &g->start_s) < 0)
		return -1;
	if (config_setting_get_member(gs, "count"))
		g->count = (uint64_t)v;
	for (unsigned r = 0; r < ld->cfg->n_roles; r++)
		if (ld->cfg->roles[r].port == g->port && ld->cfg->roles[r].role == (ld->cfg->roles[r].role & CFG_ROLE_TXRX) &&
		    (ld->cfg->roles[r].role & CFG_ROLE_TX))
			return 0;
	return cr_fail_member(&ld->r, gs, "port", "port '%s' has no tx role in lcores (the generator sends from it)",
			      ld->cfg->ports[g->port].name);
}

static int parse_pfc_generators(struct loader *ld, const config_setting_t *root)
{
	const config_setting_t *s = config_setting_get_member(root, "pfc_generators");
	int n;

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_LIST)
		return cr_fail(&ld->r, s,
			       "must be a list ( { port = ...; priorities = [...]; rate_pps = ...; }, ... ), not %s",
			       cr_type_name(s));
	n = config_setting_length(s);
	if (n > CFG_MAX_PFC_GENERATORS)
		return cr_fail(&ld->r, s, "%d generators (allowed: 0..%d)", n, CFG_MAX_PFC_GENERATORS);
	for (int i = 0; i < n; i++) {
		if (parse_pfc_generator(ld, config_setting_get_elem(s, (unsigned)i), &ld->cfg->pfc_generators[i]))
			return -1;
		ld->cfg->n_pfc_generators++;
	}
	return 0;
}

/* ---- phases ------------------------------------------------------------------------------------- */

static int phase_egress(struct loader *ld, const config_setting_t *s, struct cfg_phase *ph)
{
	static const char *const keys[] = { "port", "tc", "weight", "shape_gbps", NULL };
	int i;

	if (cr_want_type(&ld->r, s, CONFIG_TYPE_GROUP, "a group { port = ...; tc = ...; weight = ...; }") ||
	    cr_known_keys(&ld->r, s, keys))
		return -1;
	if ((i = port_ref(ld, s)) < 0)
		return -1;
	if (!(ld->cfg->ports[i].egress_gbps > 0))
		return cr_fail_member(&ld->r, s, "port",
				      "port '%s' has no qos.egress (weights and shapers belong to it)",
				      ld->cfg->ports[i].name);
	ph->egress[ph->n_egress].port = (unsigned)i;
	ph->egress[ph->n_egress].weight = ld->cfg->ports[i].ets_weight[0];
	if (!cr_required(&ld->r, s, "tc", "a traffic class 0..7") ||
	    cr_opt_u32(&ld->r, s, "tc", 0, 7, &ph->egress[ph->n_egress].tc) < 0 ||
	    cr_opt_u32(&ld->r, s, "weight", 1, 1000, &ph->egress[ph->n_egress].weight) < 0)
		return -1;
	if (!config_setting_get_member(s, "weight"))
		ph->egress[ph->n_egress].weight = ld->cfg->ports[i].ets_weight[ph->egress[ph->n_egress].tc];
	i = cr_opt_float(&ld->r, s, "shape_gbps", 0, false, 800, &ph->egress[ph->n_egress].shape_gbps);
	if (i < 0)
		return -1;
	ph->egress[ph->n_egress++].has_shape = i == 1;
	return 0;
}

static int phase_rate(struct loader *ld, const config_setting_t *s, struct cfg_phase *ph)
{
	static const char *const keys[] = { "flow", "gbps", NULL };
	const config_setting_t *f;
	const char *name;
	char buf[64];
	unsigned g;

	if (cr_want_type(&ld->r, s, CONFIG_TYPE_GROUP, "a group { flow = ...; gbps = ...; }") ||
	    cr_known_keys(&ld->r, s, keys))
		return -1;
	f = cr_required(&ld->r, s, "flow", "the name of a flow group");
	if (!f || cr_want_type(&ld->r, f, CONFIG_TYPE_STRING, "a flow group's name"))
		return -1;
	name = config_setting_get_string(f);
	for (g = 0; g < ld->cfg->n_groups && strcmp(ld->cfg->groups[g].name, name); g++)
		;
	if (g == ld->cfg->n_groups)
		return cr_fail(&ld->r, f, "no flow named '%s'", cr_shown(name, buf));
	if (!(ld->cfg->groups[g].rate_gbps > 0))
		return cr_fail(&ld->r, f, "flow '%s' has no rate_gbps: only flows paced in Gb/s change rate", name);
	ph->rates[ph->n_rates].group = g;
	if (!cr_required(&ld->r, s, "gbps", "the flow's new per-QP rate, > 0") ||
	    cr_opt_float(&ld->r, s, "gbps", 0, true, 800, &ph->rates[ph->n_rates].gbps) < 0)
		return -1;
	ph->n_rates++;
	return 0;
}

static int phase_list(struct loader *ld, const config_setting_t *ps, const char *key, struct cfg_phase *ph,
		      int (*one)(struct loader *, const config_setting_t *, struct cfg_phase *))
{
	const config_setting_t *s = config_setting_get_member(ps, key);

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_LIST || config_setting_length(s) > CFG_MAX_PHASE_CHANGES)
		return cr_fail(&ld->r, s, "must be a list of at most %d groups ( { ... }, ... )",
			       CFG_MAX_PHASE_CHANGES);
	for (int i = 0; i < config_setting_length(s); i++)
		if (one(ld, config_setting_get_elem(s, (unsigned)i), ph))
			return -1;
	return 0;
}

static int parse_phases(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "name", "at_s", "egress", "rates", NULL };
	const config_setting_t *s = config_setting_get_member(root, "phases");
	char buf[64];

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_LIST || config_setting_length(s) > CFG_MAX_PHASE_LIST)
		return cr_fail(&ld->r, s, "must be a list of at most %d phases ( { name = ...; at_s = ...; }, ... )",
			       CFG_MAX_PHASE_LIST);
	for (int i = 0; i < config_setting_length(s); i++) {
		const config_setting_t *ps = config_setting_get_elem(s, (unsigned)i), *n;
		struct cfg_phase *ph = &ld->cfg->phases[i];

		if (cr_want_type(&ld->r, ps, CONFIG_TYPE_GROUP,
				 "a group { name = ...; at_s = ...; egress = (...); rates = (...); }") ||
		    cr_known_keys(&ld->r, ps, keys))
			return -1;
		ph->line = config_setting_source_line(ps);
		n = cr_required(&ld->r, ps, "name", "a name of 1..31 A-Z a-z 0-9 _ -");
		if (!n || str_value(ld, n, ph->name, sizeof(ph->name)))
			return -1;
		if (!valid_name(ph->name, CFG_NAME_LEN - 1))
			return cr_fail(&ld->r, n, "'%s' is not a valid name (1..31 of A-Z a-z 0-9 _ -)",
				       cr_shown(ph->name, buf));
		if (!cr_required(&ld->r, ps, "at_s", "seconds after the flows start, >= 0") ||
		    cr_opt_float(&ld->r, ps, "at_s", 0, false, 1e7, &ph->at_s) < 0)
			return -1;
		if (i > 0 && ph->at_s <= ld->cfg->phases[i - 1].at_s)
			return cr_fail_member(&ld->r, ps, "at_s",
					      "%g is not after the previous phase's %g (phases are in time order)",
					      ph->at_s, ld->cfg->phases[i - 1].at_s);
		if (phase_list(ld, ps, "egress", ph, phase_egress) || phase_list(ld, ps, "rates", ph, phase_rate))
			return -1;
		ld->cfg->n_phases++;
	}
	return 0;
}

/* ---- run ------------------------------------------------------------------------------------ */

/* capture_ports = ["a", "b"]: the ports captured (default every one) */
static int capture_ports(struct loader *ld, const config_setting_t *run)
{
	const config_setting_t *s = config_setting_get_member(run, "capture_ports");

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_ARRAY || config_setting_length(s) < 1)
		return cr_fail(&ld->r, s, "must be a non-empty array of port names");
	for (int k = 0; k < config_setting_length(s); k++) {
		const config_setting_t *n = config_setting_get_elem(s, (unsigned)k);
		int p = config_setting_type(n) == CONFIG_TYPE_STRING ? config_port_index(ld->cfg, config_setting_get_string(n))
								       : -1;
		if (p < 0)
			return cr_fail(&ld->r, s, "element %d is not the name of a port", k);
		ld->cfg->capture_ports |= (uint16_t)(1u << p);
	}
	return 0;
}

int config_parse_listen(const char *s, char *addr, size_t addrlen, uint16_t *port, char *why, size_t whylen)
{
	const char *colon = strrchr(s, ':'), *digits = colon ? colon + 1 : s;
	char host[64] = "127.0.0.1", buf[64], *end;
	unsigned char bin[16];
	long v;

	if (colon) {
		const char *all = s;
		size_t n = (size_t)(colon - s);
		if (n >= 2 && s[0] == '[' && s[n - 1] == ']') { /* [IPv6]:PORT */
			s++, n -= 2;
		} else if (s[0] == '[') { /* "[::1]": the last ':' is the address's */
			snprintf(why, whylen, "'%s' has no port after the ']' (\"[IPV6]:PORT\")", cr_shown(all, buf));
			return -1;
		}
		if (n == 0) {
			snprintf(why, whylen, "'%s' has no address before the port", cr_shown(all, buf));
			return -1;
		}
		if (n >= sizeof(host)) {
			snprintf(why, whylen, "'%s' has an address longer than %zu characters", cr_shown(all, buf),
				 sizeof(host) - 1);
			return -1;
		}
		memcpy(host, s, n);
		host[n] = 0;
		if (inet_pton(AF_INET, host, bin) != 1 && inet_pton(AF_INET6, host, bin) != 1) {
			if (inet_pton(AF_INET6, all, bin) == 1) /* "fd00::1": an address, no port */
				snprintf(why, whylen, "'%s' is an IPv6 address without a port (\"[IPV6]:PORT\")",
					 cr_shown(all, buf));
			else
				snprintf(why, whylen, "'%s' is not a numeric IPv4 or IPv6 address", cr_shown(host, buf));
			return -1;
		}
	}
	v = strtol(digits, &end, 10);
	if (end == digits || *end || v < 1 || v > 65535) {
		snprintf(why, whylen, "'%s' is not a port 1..65535 (\"PORT\", \"ADDRESS:PORT\" or \"[IPV6]:PORT\")",
			 cr_shown(digits, buf));
		return -1;
	}
	snprintf(addr, addrlen, "%s", host);
	*port = (uint16_t)v;
	return 0;
}

/* run.http, run.http_linger_s, run.http_dashboard */
static int parse_http(struct loader *ld, const config_setting_t *run)
{
	struct engine_config *c = ld->cfg;
	const config_setting_t *s = config_setting_get_member(run, "http");
	char why[160];

	if (cr_opt_float(&ld->r, run, "http_linger_s", 0, false, 3600, &c->http_linger_s) < 0 ||
	    opt_str(ld, run, "http_dashboard", c->http_dashboard, sizeof(c->http_dashboard)) < 0)
		return -1;
	if (!s)
		return 0;
	if (config_setting_type(s) == CONFIG_TYPE_INT) { /* a bare port number */
		long long port;
		if (cr_int_range(&ld->r, s, 1, 65535, false, &port) < 0)
			return -1;
		c->http_port = (uint16_t)port;
		return 0;
	}
	if (cr_want_type(&ld->r, s, CONFIG_TYPE_STRING, "a string \"[ADDRESS:]PORT\" or a port number") < 0)
		return -1;
	if (config_parse_listen(config_setting_get_string(s), c->http_addr, sizeof(c->http_addr), &c->http_port, why,
				sizeof(why)))
		return cr_fail(&ld->r, s, "%s", why);
	return 0;
}

static int parse_run(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "duration_s", "stats_interval_s", "report", "latency_samples",
					    "latency_sample_every", "latency_foreign_qps", "cc_trace", "cc_trace_interval_us",
					    "cc_trace_qps", "cc_trace_step", "capture", "capture_every", "capture_snaplen",
					    "capture_ports", "timeseries", "http", "http_linger_s", "http_dashboard", NULL };
	struct engine_config *c = ld->cfg;
	const config_setting_t *run;
	int rc;

	if ((rc = cr_opt_group(&ld->r, root, "run", &run)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, run, keys) ||
	    cr_opt_float(&ld->r, run, "duration_s", 0, false, 1e9, &c->duration_s) < 0 ||
	    cr_opt_float(&ld->r, run, "stats_interval_s", 0.1, false, 3600, &c->stats_interval_s) < 0 ||
	    opt_str(ld, run, "report", c->report, sizeof(c->report)) < 0 ||
	    opt_str(ld, run, "latency_samples", c->latency_samples, sizeof(c->latency_samples)) < 0 ||
	    cr_opt_u32(&ld->r, run, "latency_sample_every", 1, 1000000000, &c->latency_sample_every) < 0 ||
	    cr_opt_u32(&ld->r, run, "latency_foreign_qps", 0, 65536, &c->latency_foreign_qps) < 0 ||
	    opt_str(ld, run, "cc_trace", c->cc_trace, sizeof(c->cc_trace)) < 0 ||
	    cr_opt_float(&ld->r, run, "cc_trace_interval_us", 1, false, 1e9, &c->cc_trace_interval_us) < 0 ||
	    cr_opt_u32(&ld->r, run, "cc_trace_qps", 1, 1u << 20, &c->cc_trace_qps) < 0 ||
	    cr_opt_u32(&ld->r, run, "cc_trace_step", 1, 1u << 20, &c->cc_trace_step) < 0 ||
	    opt_str(ld, run, "capture", c->capture, sizeof(c->capture)) < 0 ||
	    opt_str(ld, run, "timeseries", c->timeseries, sizeof(c->timeseries)) < 0 ||
	    cr_opt_u32(&ld->r, run, "capture_every", 1, 1000000000, &c->capture_every) < 0 ||
	    cr_opt_u32(&ld->r, run, "capture_snaplen", 0, 65535, &c->capture_snaplen) < 0 || capture_ports(ld, run))
		return -1;
	if (c->capture_snaplen && c->capture_snaplen < 64)
		return cr_fail_member(&ld->r, run, "capture_snaplen", "%u is too short to dissect (0 = whole frames, or >= 64)",
				      c->capture_snaplen);
	return parse_http(ld, run);
}

/* ---- entry points --------------------------------------------------------------------------- */

void config_defaults(struct engine_config *cfg)
{
	cpu_set_t cpus;
	int ncpu = 1;

	memset(cfg, 0, sizeof(*cfg));
	/* the CPUs this process may run on, which is what EAL can pin lcores to */
	if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0)
		ncpu = CPU_COUNT(&cpus);
	else if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		ncpu = 2;
	snprintf(cfg->eal.lcores, sizeof(cfg->eal.lcores), "%s", ncpu >= 2 ? "0-1" : "0");
	cfg->eal.main_lcore = 0;
	cfg->eal.memory_mb = 256;
	cfg->eal.huge_pages = false;
	snprintf(cfg->eal.file_prefix, sizeof(cfg->eal.file_prefix), "roce-engine-%ld", (long)getpid());
	snprintf(cfg->eal.log_level, sizeof(cfg->eal.log_level), "notice");
	cfg->duration_s = 0;
	cfg->stats_interval_s = 1.0;
	cfg->latency_sample_every = 1;
	cfg->latency_foreign_qps = 64;
	cfg->cc_trace_interval_us = 100;
	cfg->cc_trace_qps = 16;
	cfg->cc_trace_step = 1;
	cfg->capture_every = 1;
	snprintf(cfg->http_addr, sizeof(cfg->http_addr), "127.0.0.1");
	for (unsigned g = 0; g < CFG_MAX_FLOW_GROUPS; g++)
		cfg->group_collective[g] = -1;
}

int config_port_index(const struct engine_config *cfg, const char *name)
{
	for (unsigned i = 0; i < cfg->n_ports; i++)
		if (!strcmp(cfg->ports[i].name, name))
			return (int)i;
	return -1;
}

/* ---- the virtual lab's switch (docs/virtual-lab.md) ------------------------------------------- */

/* ecn = ( { tc; kmin_kb; kmax_kb; pmax; }, ... ): RED marking per traffic class */
static int switch_ecn(struct loader *ld, const config_setting_t *ss, struct cfg_switch *w)
{
	static const char *const keys[] = { "tc", "kmin_kb", "kmax_kb", "pmax", NULL };
	const config_setting_t *ls = config_setting_get_member(ss, "ecn");
	double kmin, kmax;
	unsigned tc;

	if (!ls)
		return 0;
	if (!config_setting_is_list(ls))
		return cr_fail(&ld->r, ls, "must be a list ( { tc = N; kmin_kb = X; kmax_kb = Y; pmax = P; }, ... )");
	for (int i = 0; i < config_setting_length(ls); i++) {
		const config_setting_t *e = config_setting_get_elem(ls, (unsigned)i);
		if (cr_want_type(&ld->r, e, CONFIG_TYPE_GROUP, "a group { tc; kmin_kb; kmax_kb; pmax; }") ||
		    cr_known_keys(&ld->r, e, keys) || !cr_required(&ld->r, e, "tc", "a traffic class 0..7") ||
		    cr_opt_u32(&ld->r, e, "tc", 0, 7, &tc) < 0 || !cr_required(&ld->r, e, "kmin_kb", "KB, >= 0") ||
		    cr_opt_float(&ld->r, e, "kmin_kb", 0, false, 1e9, &kmin) < 0 ||
		    !cr_required(&ld->r, e, "kmax_kb", "KB, >= kmin_kb") ||
		    cr_opt_float(&ld->r, e, "kmax_kb", 0, false, 1e9, &kmax) < 0)
			return -1;
		if (kmax < kmin)
			return cr_fail_member(&ld->r, e, "kmax_kb", "%g is below kmin_kb %g", kmax, kmin);
		if (w->has_red[tc])
			return cr_fail_member(&ld->r, e, "tc", "class %u already has ECN marking (one entry per class)", tc);
		w->red[tc].pmax = 1.0;
		if (cr_opt_float(&ld->r, e, "pmax", 0, false, 1, &w->red[tc].pmax) < 0)
			return -1;
		w->has_red[tc] = true;
		w->red[tc].kmin_bytes = (uint64_t)(kmin * 1024);
		w->red[tc].kmax_bytes = (uint64_t)(kmax * 1024);
	}
	return 0;
}

/* pfc = { priorities = [3]; xoff_kb; xon_kb; headroom_kb; quanta; } */
static int switch_pfc(struct loader *ld, const config_setting_t *ss, struct cfg_switch *w)
{
	static const char *const keys[] = { "priorities", "xoff_kb", "xon_kb", "headroom_kb", "quanta", NULL };
	const config_setting_t *ps, *s;
	double xoff = 100, xon = 80, headroom = 100;
	unsigned quanta = 0xFFFF;
	int rc;

	if ((rc = cr_opt_group(&ld->r, ss, "pfc", &ps)) <= 0)
		return rc;
	if (cr_known_keys(&ld->r, ps, keys) ||
	    !(s = cr_required(&ld->r, ps, "priorities", "an array of lossless priorities 0..7, e.g. [3]")) ||
	    priority_mask(ld, s, &w->pfc_priorities) || cr_opt_float(&ld->r, ps, "xoff_kb", 0, true, 1e9, &xoff) < 0 ||
	    cr_opt_float(&ld->r, ps, "xon_kb", 0, false, 1e9, &xon) < 0 ||
	    cr_opt_float(&ld->r, ps, "headroom_kb", 0, false, 1e9, &headroom) < 0 ||
	    cr_opt_u32(&ld->r, ps, "quanta", 1, 0xFFFF, &quanta) < 0)
		return -1;
	if (xon > xoff)
		return cr_fail_member(&ld->r, ps, "xon_kb", "%g is above xoff_kb %g", xon, xoff);
	w->xoff_bytes = (uint64_t)(xoff * 1024);
	w->xon_bytes = (uint64_t)(xon * 1024);
	w->headroom_bytes = (uint64_t)(headroom * 1024);
	w->pfc_quanta = (uint16_t)quanta;
	return 0;
}

int config_ring_peer(const struct engine_config *cfg, unsigned p)
{
	const char *d = cfg->ports[p].device;
	size_t n = strlen(d);

	if (!is_ring_pair(d))
		return -1;
	for (unsigned q = 0; q < cfg->n_ports; q++)
		if (q != p && strlen(cfg->ports[q].device) == n && !strncmp(cfg->ports[q].device, d, n - 1))
			return (int)q;
	return -1;
}

/* fdb = ( { mac = "..."; port = "s4"; }, ... ): hosts the switch knows before they send (those on
 * its ring cables it knows anyway; others are learned from their source MACs). */
static int switch_fdb(struct loader *ld, const config_setting_t *ss, struct cfg_switch *w)
{
	static const char *const keys[] = { "mac", "port", NULL };
	const config_setting_t *ls = config_setting_get_member(ss, "fdb"), *s;
	int p;

	if (!ls)
		return 0;
	if (!config_setting_is_list(ls) || config_setting_length(ls) > CFG_MAX_FDB)
		return cr_fail(&ld->r, ls, "must be a list of up to %d { mac = \"...\"; port = \"...\"; }", CFG_MAX_FDB);
	for (int i = 0; i < config_setting_length(ls); i++) {
		const config_setting_t *e = config_setting_get_elem(ls, (unsigned)i);
		if (cr_want_type(&ld->r, e, CONFIG_TYPE_GROUP, "a group { mac; port; }") || cr_known_keys(&ld->r, e, keys) ||
		    !(s = cr_required(&ld->r, e, "mac", "the host's MAC address")) || mac_value(ld, s, w->fdb[i].mac) ||
		    (p = port_ref(ld, e)) < 0)
			return -1;
		if (!ld->cfg->ports[p].is_switch_port)
			return cr_fail_member(&ld->r, e, "port", "port '%s' is not a switch port (role \"switch\")",
					      ld->cfg->ports[p].name);
		w->fdb[i].port = (unsigned)p;
	}
	w->n_fdb = (unsigned)config_setting_length(ls);
	return 0;
}

/* vlans = ( { vid = 100; ports = ["s0", "s1"]; }, ... ): a tagged frame goes only between ports of
 * its VLAN; untagged frames go anywhere. */
static int switch_vlans(struct loader *ld, const config_setting_t *ss, struct cfg_switch *w)
{
	static const char *const keys[] = { "vid", "ports", NULL };
	const config_setting_t *ls = config_setting_get_member(ss, "vlans"), *ps;
	unsigned vid;

	if (!ls)
		return 0;
	if (!config_setting_is_list(ls) || config_setting_length(ls) > CFG_MAX_VLANS)
		return cr_fail(&ld->r, ls, "must be a list of up to %d { vid = N; ports = [\"s0\", ...]; }", CFG_MAX_VLANS);
	for (int i = 0; i < config_setting_length(ls); i++) {
		const config_setting_t *e = config_setting_get_elem(ls, (unsigned)i);
		if (cr_want_type(&ld->r, e, CONFIG_TYPE_GROUP, "a group { vid; ports; }") || cr_known_keys(&ld->r, e, keys) ||
		    !cr_required(&ld->r, e, "vid", "1..4094") || cr_opt_u32(&ld->r, e, "vid", 1, 4094, &vid) < 0 ||
		    !(ps = cr_required(&ld->r, e, "ports", "an array of switch ports' names")))
			return -1;
		for (int j = 0; j < i; j++)
			if (w->vlans[j].vid == vid)
				return cr_fail_member(&ld->r, e, "vid", "VLAN %u is already listed (one entry per VLAN)", vid);
		if (config_setting_type(ps) != CONFIG_TYPE_ARRAY || config_setting_length(ps) < 1)
			return cr_fail(&ld->r, ps, "must be a non-empty array of switch ports' names");
		w->vlans[i].vid = (uint16_t)vid;
		for (int k = 0; k < config_setting_length(ps); k++) {
			const config_setting_t *n = config_setting_get_elem(ps, (unsigned)k);
			int p = config_setting_type(n) == CONFIG_TYPE_STRING
					? config_port_index(ld->cfg, config_setting_get_string(n)) : -1;
			if (p < 0 || !ld->cfg->ports[p].is_switch_port)
				return cr_fail(&ld->r, ps, "element %d is not the name of a switch port", k);
			w->vlans[i].ports |= (uint16_t)(1u << p);
		}
	}
	w->n_vlans = (unsigned)config_setting_length(ls);
	return 0;
}

/* The switch roles: all on one lcore, and only where a `switch` group says how to switch. */
static int switch_roles(struct loader *ld, const config_setting_t *root)
{
	struct engine_config *c = ld->cfg;
	int first = -1;

	for (unsigned i = 0; i < c->n_roles; i++) {
		if (c->roles[i].role != CFG_ROLE_SWITCH)
			continue;
		if (!c->sw.present)
			return cr_fail_member(&ld->r, root, "switch", "missing: lcores.[%u] has role \"switch\" (add a "
					      "switch = { buffer_kb = ...; } group)", i);
		if (first < 0)
			first = (int)i;
		else if (c->roles[i].lcore != c->roles[first].lcore)
			return cr_fail(&ld->r, config_setting_get_elem(config_setting_get_member(root, "lcores"), i),
				       "switch ports are all polled by one lcore (lcore %u at %s, here lcore %u)",
				       c->roles[first].lcore, cr_at(&ld->r, c->roles[first].line, (char[CR_AT_LEN]){ 0 }),
				       c->roles[i].lcore);
		c->sw.n_ports++;
		c->ports[c->roles[i].port].is_switch_port = true;
	}
	/* frames wait in the switch's buffer in the mbufs they came in: on a ring cable the sender's
	 * own (its TX pools), elsewhere the switch port's; sized for 512-byte frames on average */
	for (unsigned p = 0; c->sw.present && p < c->n_ports; p++) {
		int peer = config_ring_peer(c, p);
		if (c->ports[p].is_switch_port || (peer >= 0 && c->ports[peer].is_switch_port))
			c->ports[p].extra_mbufs = (unsigned)(c->sw.buffer_bytes / 512);
	}
	if (c->sw.present && c->sw.n_ports < 2)
		return cr_fail_member(&ld->r, root, "switch", "a switch needs at least two ports with role \"switch\" in "
				      "lcores (it has %u)", c->sw.n_ports);
	return 0;
}

/* switch = { buffer_kb; queue_limit_kb; alpha; pfc = {...}; ecn = (...); delay_us; trace;
 * trace_interval_us; seed; } */
static int parse_switch(struct loader *ld, const config_setting_t *root)
{
	static const char *const keys[] = { "buffer_kb", "queue_limit_kb", "alpha", "pfc", "ecn", "delay_us", "trace",
					    "trace_interval_us", "seed", "fdb", "vlans", NULL };
	struct cfg_switch *w = &ld->cfg->sw;
	const config_setting_t *ss;
	double buffer = 2048, limit = 0;
	long long seed;
	int rc;

	if ((rc = cr_opt_group(&ld->r, root, "switch", &ss)) < 0)
		return -1;
	if (rc == 1) {
		w->present = true;
		w->line = config_setting_source_line(ss);
		w->delay_us = 1;
		w->trace_interval_us = 100;
		w->seed = 1;
		if (cr_known_keys(&ld->r, ss, keys) || cr_opt_float(&ld->r, ss, "buffer_kb", 1, false, 1 << 20, &buffer) < 0 ||
		    cr_opt_float(&ld->r, ss, "queue_limit_kb", 0, false, 1 << 20, &limit) < 0 ||
		    cr_opt_float(&ld->r, ss, "alpha", 0, false, 64, &w->alpha) < 0 ||
		    cr_opt_float(&ld->r, ss, "delay_us", 0, false, 1e6, &w->delay_us) < 0 ||
		    opt_str(ld, ss, "trace", w->trace, sizeof(w->trace)) < 0 ||
		    cr_opt_float(&ld->r, ss, "trace_interval_us", 1, false, 1e9, &w->trace_interval_us) < 0 ||
		    (rc = cr_opt_int(&ld->r, ss, "seed", 1, (long long)1 << 62, false, &seed)) < 0 ||
		    switch_pfc(ld, ss, w) || switch_ecn(ld, ss, w))
			return -1;
		if (rc == 1)
			w->seed = (uint64_t)seed;
		if (limit > buffer)
			return cr_fail_member(&ld->r, ss, "queue_limit_kb", "%g is above buffer_kb %g", limit, buffer);
		w->buffer_bytes = (uint64_t)(buffer * 1024);
		w->queue_limit_bytes = (uint64_t)(limit * 1024);
		if (w->pfc_priorities && w->xoff_bytes + w->headroom_bytes > w->buffer_bytes)
			return cr_fail_member(&ld->r, ss, "pfc", "xoff_kb + headroom_kb exceed buffer_kb: one port could "
					      "fill the buffer before its PFC takes effect");
	}
	if (switch_roles(ld, root))
		return -1;
	return w->present ? switch_fdb(ld, ss, w) || switch_vlans(ld, ss, w) : 0;
}

static int load_root(void *arg, const config_setting_t *root)
{
	static const char *const keys[] = { "eal", "ports", "lcores", "flows", "collectives", "responders",
					    "pfc_generators", "phases", "run", "switch", "peers", "sla", NULL };
	struct loader *ld = arg;

	return cr_known_keys(&ld->r, root, keys) || parse_eal(ld, root) || parse_ports(ld, root) ||
			       parse_roles(ld, root) || parse_switch(ld, root) || parse_flows(ld, root) || parse_collectives(ld, root) ||
			       parse_responders(ld, root) || parse_peers(ld, root) || parse_pfc_generators(ld, root) || parse_phases(ld, root) || parse_sla(ld, root) ||
			       parse_run(ld, root)
		       ? -1
		       : 0;
}

int config_load_string(const char *text, const char *name, struct engine_config *cfg, char *err, size_t errlen)
{
	return config_load_string_env(text, name, NULL, cfg, err, errlen);
}

/* One load, of a file (text NULL) or of text. */
static int load(const char *path, const char *text, const char *name, const struct config_env *env,
		struct engine_config *cfg, char *err, size_t errlen)
{
	struct loader ld = { .cfg = cfg, .env = env };
	int rc;

	cr_init(&ld.r, text ? name : path, err, errlen, "configuration");
	config_defaults(cfg);
	snprintf(cfg->file, sizeof(cfg->file), "%s", ld.r.file);
	rc = text ? cr_load_text(&ld.r, text, load_root, &ld) : cr_load_file(&ld.r, path, load_root, &ld);
	cfg->src = ld.r.src;
	return rc;
}

int config_load_string_env(const char *text, const char *name, const struct config_env *env,
			   struct engine_config *cfg, char *err, size_t errlen)
{
	return load(NULL, text, name, env, cfg, err, errlen);
}

int config_load(const char *path, struct engine_config *cfg, char *err, size_t errlen)
{
	return config_load_env(path, NULL, cfg, err, errlen);
}

int config_load_env(const char *path, const struct config_env *env, struct engine_config *cfg, char *err,
		    size_t errlen)
{
	return load(path, NULL, NULL, env, cfg, err, errlen);
}

const char *config_where(const struct engine_config *cfg, unsigned line, char *buf, size_t len)
{
	return cr_where(&cfg->src, cfg->file, line, buf, len);
}

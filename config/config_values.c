/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The value forms the sections share: strings that must fit their field, names, MAC addresses,
 * lists of a bounded length.
 */
#include "config_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int ld_str_value(struct loader *ld, const config_setting_t *s, char *out, size_t len)
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

int ld_opt_str(struct loader *ld, const config_setting_t *g, const char *key, char *out, size_t len)
{
	const config_setting_t *s = config_setting_get_member(g, key);

	if (!s)
		return 0;
	return ld_str_value(ld, s, out, len) ? -1 : 1;
}

bool ld_valid_name(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n == 0 || n > max)
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

int ld_list_length(struct loader *ld, const config_setting_t *s, const char *shape, const char *noun, int min,
		   int max)
{
	int n;

	if (config_setting_type(s) != CONFIG_TYPE_LIST)
		return cr_fail(&ld->r, s, "must be a list %s, not %s", shape, cr_type_name(s));
	n = config_setting_length(s);
	if (n < min || n > max)
		return cr_fail(&ld->r, s, "%d %s (allowed: %d..%d)", n, noun, min, max);
	return n;
}

const config_setting_t *ld_name(struct loader *ld, const config_setting_t *g, const char *what,
				char out[CFG_NAME_LEN])
{
	const config_setting_t *s = cr_required(&ld->r, g, "name", what);
	char buf[64];

	if (!s || ld_str_value(ld, s, out, CFG_NAME_LEN))
		return NULL;
	if (!ld_valid_name(out, CFG_NAME_LEN - 1)) {
		cr_fail(&ld->r, s, "'%s' is not a valid name (1..31 of A-Z a-z 0-9 _ -)", cr_shown(out, buf));
		return NULL;
	}
	return s;
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

int ld_mac_value(struct loader *ld, const config_setting_t *s, uint8_t mac[6])
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

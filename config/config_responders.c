/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The `responders` list (RC responder QPs for requesters elsewhere) and the `peers` list (QPs
 * elsewhere that send to local QPNs): both are lists of QPN pairs.
 */
#include "config_internal.h"

#include "wire.h"

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
	if ((i = ld_port_ref(ld, rs)) < 0)
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
	if ((n = ld_list_length(ld, s, "( { port = ...; qpn = ...; peer_qpn = ...; }, ... )",
				peer_only ? "peer groups" : "responder groups", 0, CFG_MAX_RESPONDERS)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (parse_responder(ld, config_setting_get_elem(s, (unsigned)i), &out[i], peer_only))
			return -1;
		(*n_out)++;
	}
	return 0;
}

int ld_parse_responders(struct loader *ld, const config_setting_t *root)
{
	return qpn_pair_list(ld, root, "responders", false, ld->cfg->responders, &ld->cfg->n_responders);
}

int ld_parse_peers(struct loader *ld, const config_setting_t *root)
{
	return qpn_pair_list(ld, root, "peers", true, ld->cfg->peers, &ld->cfg->n_peers);
}

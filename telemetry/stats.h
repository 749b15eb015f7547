/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The PMDs' counters, the live lines and the final summary (stats.c), and the JSON report
 * (report.c). What the lcores counted comes from snapshot.h.
 */
#ifndef ROCE_TELEMETRY_STATS_H
#define ROCE_TELEMETRY_STATS_H

#include <stddef.h>

#include "run_view.h"
#include "snapshot.h"

/* Reads every port's rte_eth_stats and xstats into run (before the ports close). */
void stats_capture_pmd(struct run_view *run);

/* The PMD's counters of a port: live while it runs, the captured ones after. */
void stats_port_hw(const struct run_view *run, unsigned port, struct rte_eth_stats *hw);
/* What the report calls a port's rx_dropped: malformed, no room in the RX QP table, the PMD's
 * missed and no-mbuf counts. */
static inline uint64_t stats_rx_dropped(const struct port_totals *t, const struct rte_eth_stats *hw)
{
	return t->rx_malformed + t->rx.rx_qp_table_full + hw->imissed + hw->rx_nombuf;
}

/* One live line per port since the previous call; `prev` keeps what the previous line saw. */
struct live_prev {
	struct port_totals t;
	uint64_t imissed, rx_nombuf;   /* the PMD's */
	uint64_t capture_dropped;      /* copies of the port's frames the capture dropped */
};
void stats_print_interval(const struct run_view *run, double t_s, double dt_s, struct live_prev *prev);
void stats_print_summary(const struct run_view *run);

/* Writes the JSON report atomically (temporary file, then rename), its `sla` from the checks
 * sla_measure made. 0 or -1 with err. */
struct sla_checks;
int report_write(const struct run_view *run, const struct sla_checks *sla, const char *path, char *err,
		 size_t errlen);
/* Checks at start-up that the report's directory is writable. */
int report_check_path(const char *path, char *err, size_t errlen);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
#include "live.h"

#include <stdio.h>
#include <stdlib.h>

#define TAG_LIVE 50

int live_begin(struct live *l, struct job *j, const struct cl_test *t, unsigned step, unsigned round, unsigned rounds)
{
	*l = (struct live){ .j = j, .t = t, .step = step, .round = round, .rounds = rounds,
			    .next_s = comm_now_s() + j->cfg.live_interval_s };
	if (j->comm.rank != 0)
		return 0;
	l->latest = calloc((size_t)j->comm.size, sizeof(*l->latest));
	for (int r = 0; l->latest && r < j->comm.size; r++)
		l->latest[r].step = -1;
	return l->latest ? 0 : -1;
}

/* Rank 0: what has come from the others (a sample of an earlier step is dropped). */
static void take_all(struct live *l)
{
	struct live_sample s;

	while (comm_take_live(&s, (int)sizeof(s), TAG_LIVE) == 1)
		if (s.rank > 0 && s.rank < l->j->comm.size && s.step == (int32_t)l->step)
			l->latest[s.rank] = s;
}

static void print_line(struct live *l)
{
	double tx = 0, rx = 0, lo = 0, hi = 0, p50 = 0, t = 0;
	int n = 0, lo_rank = -1;

	for (int r = 0; r < l->j->comm.size; r++) {
		const struct live_sample *s = &l->latest[r];
		if (s->step != (int32_t)l->step)
			continue;
		tx += s->tx_gbps, rx += s->rx_gbps, n++;
		if (lo_rank < 0 || s->rx_gbps < lo)
			lo = s->rx_gbps, lo_rank = r;
		hi = s->rx_gbps > hi ? s->rx_gbps : hi;
		p50 = s->p50_ns > p50 ? s->p50_ns : p50;
		t = s->time_s > t ? s->time_s : t;
	}
	if (!n || t <= l->printed_time_s)
		return;
	l->printed_time_s = t;
	printf("[%s] round %u/%u +%.1f s: %d/%d ranks, tx %.3f Gb/s, rx %.3f Gb/s, a rank's rx %.3f (rank %d)..%.3f",
	       l->t->name, l->round + 1, l->rounds, t, n, l->j->comm.size, tx, rx, lo, lo_rank, hi);
	if (p50 > 0)
		printf(", one-way p50 up to %.1f us", p50 / 1e3);
	printf("\n");
	fflush(stdout);
}

void live_tick(void *arg, const char *dir)
{
	struct live *l = arg;
	struct step_live row;
	double now = comm_now_s();

	if (l->j->comm.rank == 0 && l->latest)
		take_all(l);
	if (now < l->next_s)
		return;
	l->next_s = now + l->j->cfg.live_interval_s;
	if (dir && step_live_row(dir, "p", &row) == 0 && row.time_s > l->sent_time_s) {
		struct live_sample s = { .rank = l->j->comm.rank, .step = (int32_t)l->step, .time_s = row.time_s,
					 .tx_gbps = row.tx_gbps, .rx_gbps = row.rx_gbps, .p50_ns = row.p50_ns };
		l->sent_time_s = row.time_s;
		if (l->j->comm.rank != 0)
			comm_post_live(&s, (int)sizeof(s), TAG_LIVE);
		else if (l->latest)
			l->latest[0] = s;
	}
	if (l->j->comm.rank == 0 && l->latest)
		print_line(l);
}

void live_end(struct live *l)
{
	free(l->latest);
	l->latest = NULL;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * rp_replay: one DCQCN reaction point alone, at a fixed line rate, fed CNPs at listed times and
 * (optionally) bytes at a constant rate, its timers on the same 1 µs wheel as the network
 * simulation. One CSV line after every event and timer: time_us,event,rate_gbps,target_gbps,alpha.
 * It exists so that the reaction point can be checked against hand calculations.
 */
#include "replay.h"

#include <stdlib.h>
#include <string.h>

#include "dcqcn.h"
#include "heap.h"
#include "timer_wheel.h"

#define TICK_NS 1000

enum { RV_CNP = 1, RV_BYTES, RV_TICK };

struct replay {
	const struct scenario *sc;
	struct dcqcn_qp q;
	struct timer_wheel *w;
	struct evheap h;
	bool tick_pending;
	uint64_t now;
	uint64_t alpha_ns;            /* the latest time α was asked for (never asked backwards) */
	uint64_t bytes_next_ps;
	FILE *out;
	uint64_t lines;
};

static const char *timer_name(uint8_t kind)
{
	switch (kind) {
	case DCQCN_TIMER_ALPHA: return "alpha_timer";
	case DCQCN_TIMER_DECREASE: return "decrease_timer";
	case DCQCN_TIMER_INCREASE: return "increase_timer";
	default: return "timer";
	}
}

static void print_kbps(FILE *o, uint64_t kbps)
{
	fprintf(o, "%llu.%06llu", (unsigned long long)(kbps / 1000000), (unsigned long long)(kbps % 1000000));
}

/* One line for the state after an event at t_ns. */
static void line(struct replay *r, uint64_t t_ns, const char *event)
{
	uint64_t at = t_ns > r->alpha_ns ? t_ns : r->alpha_ns;
	double alpha;

	r->alpha_ns = at;
	alpha = dcqcn_alpha_fraction(&r->q, dcqcn_alpha(&r->q, at));
	fprintf(r->out, "%llu.%03llu,%s,", (unsigned long long)(t_ns / 1000), (unsigned long long)(t_ns % 1000),
		event);
	print_kbps(r->out, r->q.rc_kbps);
	fputc(',', r->out);
	print_kbps(r->out, r->q.rt_kbps);
	fprintf(r->out, ",%.6f\n", alpha);
	r->lines++;
}

static void on_timer(struct tw_timer *t, uint64_t due_ns, void *arg)
{
	struct replay *r = arg;

	dcqcn_on_timer(&r->q, r->w, t, due_ns);
	line(r, due_ns, timer_name(t->kind));
}

static void push(struct replay *r, uint64_t t, uint8_t type)
{
	heap_push(&r->h, (struct ev){ .t = t, .type = type });
}

static void next_bytes(struct replay *r)
{
	const struct sc_replay *rp = &r->sc->rp;

	r->bytes_next_ps += (uint64_t)rp->packet_bytes * 8000000000ULL / rp->send_kbps;
	push(r, (r->bytes_next_ps + 999) / 1000, RV_BYTES);
}

/* A packet of the constant-rate sender: only a byte-counter event makes a line. */
static void ev_bytes(struct replay *r)
{
	uint64_t before = r->q.c.byte_events;

	dcqcn_on_bytes(&r->q, r->w, r->sc->rp.packet_bytes, r->now);
	if (r->q.c.byte_events != before)
		line(r, r->now, "byte_counter");
	next_bytes(r);
}

static void dispatch(struct replay *r, const struct ev *e)
{
	switch (e->type) {
	case RV_CNP:
		dcqcn_on_cnp(&r->q, r->w, r->now);
		line(r, r->now, "cnp");
		break;
	case RV_BYTES:
		ev_bytes(r);
		break;
	case RV_TICK:
		r->tick_pending = false;
		tw_advance(r->w, r->now, on_timer, r);
		break;
	}
}

/* As in the network simulation: the wheel runs at 1 µs boundaries while it holds timers. */
static void ensure_tick(struct replay *r)
{
	uint64_t t;

	if (r->tick_pending || !r->w->armed)
		return;
	t = r->w->next_tick * TICK_NS;
	push(r, t > r->now ? t : r->now, RV_TICK);
	r->tick_pending = true;
}

int replay_run(const struct scenario *sc, FILE *out, struct replay_result *res)
{
	struct replay r = { .sc = sc, .out = out };
	struct ev e;

	r.w = malloc(sizeof(*r.w));
	if (!r.w) {
		fprintf(stderr, "roce-ccsim: out of memory\n");
		return -1;
	}
	tw_init(r.w, TICK_NS, 0);
	heap_init(&r.h);
	dcqcn_init(&r.q, &sc->rp.dcqcn, sc->rp.line_kbps, 0);
	fprintf(out, "time_us,event,rate_gbps,target_gbps,alpha\n");
	line(&r, 0, "start");
	for (unsigned i = 0; i < sc->rp.n_cnp; i++)
		push(&r, sc->rp.cnp_ns[i], RV_CNP);
	if (sc->rp.send_kbps)
		next_bytes(&r);
	while (heap_top(&r.h) && heap_top(&r.h)->t <= sc->duration_ns) {
		heap_pop(&r.h, &e);
		r.now = e.t;
		dispatch(&r, &e);
		ensure_tick(&r);
	}
	r.now = sc->duration_ns;
	line(&r, sc->duration_ns, "end");
	if (res)
		*res = (struct replay_result){ .rc_kbps = r.q.rc_kbps, .rt_kbps = r.q.rt_kbps, .c = r.q.c,
					       .alpha = dcqcn_alpha_fraction(&r.q, dcqcn_alpha(&r.q, r.alpha_ns)),
					       .lines = r.lines };
	dcqcn_stop(&r.q, r.w);
	heap_free(&r.h);
	free(r.w);
	return 0;
}

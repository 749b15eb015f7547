/* SPDX-License-Identifier: BSD-3-Clause */
#include "kpi.h"

#include <math.h>
#include <stdlib.h>

const char *const kpi_collective_names[] = { "allreduce", "allgather", "reducescatter", "alltoall", NULL };

double kpi_algo_factor(enum kpi_collective op, unsigned n)
{
	if (n < 2)
		return 0;
	return (op == KPI_ALLREDUCE ? 2.0 : 1.0) * (n - 1) / n;
}

unsigned kpi_collective_phases(enum kpi_collective op, unsigned n)
{
	if (n < 2)
		return 0;
	return op == KPI_ALLREDUCE ? 2 * (n - 1) : op == KPI_ALLTOALL ? 1 : n - 1;
}

double kpi_busbw_gbps(enum kpi_collective op, unsigned n, double bytes, double seconds)
{
	return seconds > 0 ? bytes * kpi_algo_factor(op, n) * 8 / seconds / 1e9 : 0;
}

double kpi_algbw_gbps(double bytes, double seconds)
{
	return seconds > 0 ? bytes * 8 / seconds / 1e9 : 0;
}

double kpi_roofline_jct_s(unsigned iterations, double compute_s, double bytes, double algo_factor, double nic_gbps)
{
	if (!(nic_gbps > 0))
		return 0;
	return iterations * (compute_s + 8 * bytes * algo_factor / (nic_gbps * 1e9));
}

double kpi_jct_ratio(double measured_s, double roofline_s)
{
	return roofline_s > 0 ? measured_s / roofline_s : 0;
}

double kpi_overlap_fraction(double jct_s, double compute_total_s, double comm_s)
{
	double hidden = comm_s > 0 ? 1 - (jct_s - compute_total_s) / comm_s : 0;

	/* a fraction: rounding in the JCT less compute must not show as -2e-16 of a reading */
	return hidden < 0 ? 0 : hidden > 1 ? 1 : hidden;
}

double kpi_jfi(const double *x, size_t n)
{
	double sum = 0, sq = 0;

	for (size_t i = 0; i < n; i++)
		sum += x[i], sq += x[i] * x[i];
	return n && sq > 0 ? sum * sum / (n * sq) : 0;
}

double kpi_mmr(const double *x, size_t n)
{
	double sum = 0, max = 0;

	for (size_t i = 0; i < n; i++)
		sum += x[i], max = x[i] > max ? x[i] : max;
	return n && sum > 0 ? max * n / sum : 0;
}

/* Binomial(r, p) probabilities of 0..kmax into pmf, in logs (lgamma): no factorial overflows
 * and no underflowing first term to multiply up; r >= 1, 0 < p < 1. */
static void binomial_head(unsigned r, double p, unsigned kmax, double *pmf)
{
	double lp = log(p), lq = log1p(-p), lr = lgamma(r + 1.0);

	for (unsigned c = 0; c <= kmax && c <= r; c++)
		pmf[c] = exp(lr - lgamma(c + 1.0) - lgamma(r - c + 1.0) + c * lp + (r - c) * lq);
}

/* P(every bin holds at most k): the bins take their shares one after another, bin i a
 * Binomial(remaining, 1 / (bins - i)) of what is left (the multinomial's chain rule); the last
 * bin takes the rest. mass[r]: the probability that r balls remain with every bin so far <= k. */
static double max_at_most(unsigned balls, unsigned bins, unsigned k, double *mass, double *next, double *pmf)
{
	for (unsigned r = 0; r <= balls; r++)
		mass[r] = r == balls;
	for (unsigned i = 0; i + 1 < bins; i++) {
		double p = 1.0 / (bins - i);

		for (unsigned r = 0; r <= balls; r++)
			next[r] = 0;
		for (unsigned r = 0; r <= balls; r++) {
			if (mass[r] == 0)
				continue;
			if (r == 0) {
				next[0] += mass[0];
				continue;
			}
			binomial_head(r, p, k, pmf);
			for (unsigned c = 0; c <= k && c <= r; c++)
				next[r - c] += mass[r] * pmf[c];
		}
		for (unsigned r = 0; r <= balls; r++)
			mass[r] = next[r];
	}
	{
		double total = 0; /* the last bin holds what remains: at most k */
		for (unsigned r = 0; r <= k && r <= balls; r++)
			total += mass[r];
		return total;
	}
}

int kpi_bins_max_cdf(unsigned balls, unsigned bins, double *cdf)
{
	double *mass, *next, *pmf;

	if (!bins || balls > KPI_BINS_MAX_BALLS)
		return -1;
	mass = malloc((balls + 1) * sizeof(*mass));
	next = malloc((balls + 1) * sizeof(*next));
	pmf = malloc((balls + 1) * sizeof(*pmf));
	if (!mass || !next || !pmf) {
		free(mass), free(next), free(pmf);
		return -1;
	}
	for (unsigned k = 0; k <= balls; k++) {
		/* the fullest bin holds at least ceil(balls / bins); once certain, stays certain */
		if (k > 0 && cdf[k - 1] >= 1 - 1e-15)
			cdf[k] = 1;
		else if ((unsigned long)k * bins < balls)
			cdf[k] = 0;
		else
			cdf[k] = fmin(1, max_at_most(balls, bins, k, mass, next, pmf));
	}
	free(mass), free(next), free(pmf);
	return 0;
}

int kpi_bins_mmr(unsigned balls, unsigned bins, double q_lo, double q_hi, struct kpi_mmr_range *out)
{
	double *cdf, mean = (double)balls / bins, e = 0;
	int k_lo = -1, k_hi = -1;

	if (!bins || !balls || balls > KPI_BINS_MAX_BALLS || !(cdf = malloc((balls + 1) * sizeof(*cdf))))
		return -1;
	if (kpi_bins_max_cdf(balls, bins, cdf)) {
		free(cdf);
		return -1;
	}
	for (unsigned k = 0; k <= balls; k++) {
		e += 1 - cdf[k]; /* E[max] = sum over k >= 0 of P(max > k) */
		if (k_lo < 0 && cdf[k] >= q_lo)
			k_lo = (int)k;
		if (k_hi < 0 && cdf[k] >= q_hi)
			k_hi = (int)k;
	}
	free(cdf);
	*out = (struct kpi_mmr_range){ .expected = e / mean, .lo = k_lo / mean, .hi = k_hi / mean };
	return 0;
}

void kpi_stats_of(const double *x, size_t n, struct kpi_stats *out)
{
	double sum = 0, ss = 0;

	*out = (struct kpi_stats){ .n = n };
	if (!n)
		return;
	out->min = out->max = x[0];
	for (size_t i = 0; i < n; i++) {
		sum += x[i];
		out->min = fmin(out->min, x[i]);
		out->max = fmax(out->max, x[i]);
	}
	out->mean = sum / n;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - out->mean) * (x[i] - out->mean);
	out->stddev = n > 1 ? sqrt(ss / (n - 1)) : 0;
	out->cv = out->mean != 0 ? out->stddev / fabs(out->mean) : 0;
}

double kpi_per_s(double count, double seconds)
{
	return seconds > 0 ? count / seconds : 0;
}

double kpi_ppm(double part, double whole)
{
	return whole > 0 ? part * 1e6 / whole : 0;
}

static bool all_in_band(const double *row, size_t n_flows, double lo, double hi)
{
	for (size_t f = 0; f < n_flows; f++)
		if (!(row[f] >= lo && row[f] <= hi))
			return false;
	return true;
}

double kpi_convergence_s(const double *t_s, const double *rates, size_t n_samples, size_t n_flows, double fair,
			 double tolerance, double onset_s)
{
	double lo = fair * (1 - tolerance), hi = fair * (1 + tolerance);
	size_t settled = n_samples; /* the first sample of the last run of in-band samples */

	for (size_t i = n_samples; i-- > 0 && t_s[i] >= onset_s;) {
		if (!all_in_band(&rates[i * n_flows], n_flows, lo, hi))
			break;
		settled = i;
	}
	return settled < n_samples ? t_s[settled] - onset_s : -1;
}

double kpi_convergence_held_s(const double *t_s, const double *rates, size_t n_samples, size_t n_flows, double fair,
			      double tolerance, double onset_s, double hold_s)
{
	double lo = fair * (1 - tolerance), hi = fair * (1 + tolerance);
	size_t start = n_samples; /* the first sample of the current run of in-band samples */

	for (size_t i = 0; i < n_samples; i++) {
		if (t_s[i] < onset_s)
			continue;
		if (!all_in_band(&rates[i * n_flows], n_flows, lo, hi)) {
			start = n_samples;
			continue;
		}
		if (start == n_samples)
			start = i;
		if (t_s[i] - t_s[start] + 1e-12 >= hold_s) /* (window ends computed as (k + 1) x w) */
			return t_s[start] - onset_s;
	}
	return -1;
}

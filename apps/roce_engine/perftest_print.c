/* SPDX-License-Identifier: BSD-3-Clause
 *
 * What the perftest front end prints and writes (docs/perftest.md): perftest's header and table
 * (at its column positions, its units: MB/sec is 2^20 bytes a second, Gb/sec 10^9 bits), the
 * --output single numbers, perftest's --out_json file (its field names), and the front end's
 * JSON report (the engine's report of each run with what the table shows).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "percentile.h"
#include "perftest_opts.h"
#include "roce_version.h"

static const char *const pt_verb_title[][2] = { /* perftest's words, without and with immediate */
	{ "Send", "Send_imm" }, { "RDMA_Write", "RDMA_Write_imm" }, { "RDMA_Read", "RDMA_Read" } };

static const char *pt_title(const struct pt_opts *o)
{
	return pt_verb_title[o->test->verb][o->imm];
}

static int pt_tclass(const struct pt_opts *o)
{
	return o->tclass >= 0 ? o->tclass : 26 << 2 | 2; /* the engine's DSCP 26, ECT(0) */
}

static const char *pt_device(const struct pt_opts *o)
{
	return o->device ? o->device : "ring:perftest";
}

/* ---- the header ---- */

static void pt_print_gid(const char *ip)
{
	uint8_t gid[16];
	bool v6;

	pt_ip_to_gid(ip, gid, &v6);
	printf(" GID: ");
	for (unsigned i = 0; i < 16; i++) /* decimal bytes, as perftest prints them */
		printf("%02d%s", gid[i], i < 15 ? ":" : "\n");
}

static void pt_print_address(const struct pt_opts *o, const char *side, uint32_t qpn, const char *ip)
{
	printf(" %s address: LID 0000 QPN %#06x PSN 000000", side, qpn);
	if (o->test->verb == PT_READ)
		printf(" OUT %#04x", o->outs);
	printf("\n");
	pt_print_gid(ip);
}

static void pt_print_addresses(const struct pt_opts *o)
{
	const char *local_ip = pt_local_ip(o), *remote_ip = pt_remote_ip(o);
	unsigned shown = o->qps < 16 ? o->qps : 16; /* thousands of lines help nobody */

	for (unsigned i = 0; i < shown; i++)
		pt_print_address(o, "local", o->qpn + i, local_ip);
	for (unsigned i = 0; remote_ip && i < shown; i++)
		pt_print_address(o, "remote", o->dest_qpn + i, remote_ip);
	if (shown < o->qps)
		printf(" ... %u QPs in all: QPNs %#06x.. here, %#06x.. there\n", o->qps, o->qpn, o->dest_qpn);
	printf(PT_LINE);
}

static void pt_print_notes(const struct pt_opts *o)
{
	if (pt_needs_probe(o) && !o->all && o->size < PT_PROBE_BYTES)
		printf(" Note: messages of %" PRIu64 " bytes are sent as %d: latency probes need %d payload bytes\n",
		       o->size, PT_PROBE_BYTES, PT_PROBE_BYTES);
	if (o->conn == PT_UD && !o->all && o->size > o->mtu)
		printf(" Note: max msg size in UD is the MTU: %" PRIu64 " bytes are sent as %u\n", o->size, o->mtu);
	if (o->test->kind == PT_LAT)
		printf(" Note: %s\n", o->test->verb == PT_READ ? "t_* are the full READ round trip (request -> response)"
							   : "t_* are half the round trip, as perftest's");
	if (o->cycles)
		printf(" Note: t_* in TSC cycles (-C)\n");
	for (unsigned i = 0; i < o->n_notes; i++)
		printf(" Note: %s\n", o->notes[i]);
}

void pt_print_header(const struct pt_opts *o)
{
	int tclass = pt_tclass(o);

	printf(PT_LINE);
	printf("                    %s %s%s Test\n", pt_title(o), o->bidir ? "Bidirectional " : "",
	       o->test->kind == PT_BW ? "BW" : "Latency");
	printf(" Dual-port       : OFF\t\tDevice         : %s%s\n", pt_device(o),
	       o->device ? "" : " (virtual, in-process)");
	printf(" Number of qps   : %u\t\tTransport type : IB\n", o->qps);
	printf(" Connection type : %s\t\tUsing SRQ      : OFF\n", pt_conn_name[o->conn]);
	if (!o->server || o->bidir)
		printf(" TX depth        : %u\n", o->tx_depth);
	printf(" Mtu             : %u[B]\n", o->mtu);
	printf(" Link type       : Ethernet\n");
	printf(" Traffic class   : %d (DSCP %d, ECN %d)\n", tclass, tclass >> 2, tclass & 3);
	if (o->test->verb == PT_READ)
		printf(" Outstand reads  : %u\n", o->outs);
	printf(" Data ex. method : none (fixed QPNs)\n");
	pt_print_notes(o);
	printf(PT_LINE);
	if (!o->server)
		pt_print_addresses(o);
}

/* ---- the table ---- */

/* perftest's units: MB/sec is 2^20 bytes a second, Gb/sec 10^9 bits. */
double pt_bw_unit(const struct pt_opts *o, double gbps)
{
	return o->gbits ? gbps : gbps * 1e9 / 8 / 1048576.0;
}

void pt_print_heading(const struct pt_opts *o)
{
	const char *unit = o->cycles ? "cycles" : "usec";

	if (o->output != PT_OUT_FULL)
		return;
	if (o->test->kind == PT_BW)
		printf(" #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]%s\n",
		       o->gbits ? "Gb/sec" : "MB/sec", o->gbits ? "Gb/sec" : "MB/sec",
		       o->cpu_util && o->duration_s > 0 ? "    CPU_Util[%]" : "");
	else
		printf(" #bytes #iterations    t_min[%s]    t_max[%s]  t_typical[%s]    t_avg[%s]    t_stdev[%s]"
		       "   99%% percentile[%s]   99.9%% percentile[%s] \n",
		       unit, unit, unit, unit, unit, unit, unit);
}

/* Cells at perftest's column positions, so rows line up under its headings. */
static void pt_print_cells(const char *const *cells, const int *cols, unsigned n)
{
	int at = 0;

	for (unsigned i = 0; i < n; i++) {
		int pad = cols[i] - at;
		at += printf("%*s%s", pad > 1 ? pad : 1, "", cells[i]);
	}
	printf("\n");
}

static void pt_print_bw_cells(const struct pt_opts *o, uint64_t size, const struct pt_bw *b, double cpu)
{
	static const int cols[] = { 1, 12, 27, 46, 67, 83 }; /* where the headings start */
	char c[6][32];
	const char *cells[6] = { c[0], c[1], c[2], c[3], c[4], c[5] };

	snprintf(c[0], sizeof(c[0]), "%" PRIu64, size);
	snprintf(c[1], sizeof(c[1]), "%" PRIu64, b->iterations);
	snprintf(c[2], sizeof(c[2]), "%.2f", pt_bw_unit(o, b->peak_gbps));
	snprintf(c[3], sizeof(c[3]), "%.2f", pt_bw_unit(o, b->avg_gbps));
	snprintf(c[4], sizeof(c[4]), "%.6f", b->msg_rate_mpps);
	snprintf(c[5], sizeof(c[5]), "%.2f", cpu);
	pt_print_cells(cells, cols, o->cpu_util && o->duration_s > 0 ? 6 : 5);
}

/* ns to what the table prints: microseconds, or TSC cycles with -C. */
static double pt_lat_unit(const struct pt_opts *o, double ns)
{
	return o->cycles ? ns * o->cycles_per_ns : ns / 1000.0;
}

static void pt_print_lat_cells(const struct pt_opts *o, const struct pt_run *r)
{
	static const int cols[] = { 1, 8, 23, 38, 51, 70, 85, 101, 124 };
	const double v[7] = { r->t_min, r->t_max, r->t_typical, r->t_avg, r->t_stdev, r->t_99, r->t_99_9 };
	char c[9][32];
	const char *cells[9];

	snprintf(c[0], sizeof(c[0]), "%" PRIu64, r->size);
	snprintf(c[1], sizeof(c[1]), "%" PRIu64, r->iterations);
	for (unsigned i = 0; i < 7; i++)
		snprintf(c[2 + i], sizeof(c[0]), "%.2f", pt_lat_unit(o, v[i]));
	for (unsigned i = 0; i < 9; i++)
		cells[i] = c[i];
	pt_print_cells(cells, cols, 9);
}

/* A row of the table, or with --output the one number perftest prints (its "%lf"). */
void pt_print_row(const struct pt_opts *o, const struct pt_run *r)
{
	if (o->output == PT_OUT_BW)
		printf("%lf\n", pt_bw_unit(o, r->bw.avg_gbps));
	else if (o->output == PT_OUT_MSG_RATE)
		printf("%lf\n", r->bw.msg_rate_mpps);
	else if (o->output == PT_OUT_LAT)
		printf("%lf\n", pt_lat_unit(o, r->t_avg));
	else if (o->test->kind == PT_BW)
		pt_print_bw_cells(o, r->size, &r->bw, r->cpu_util);
	else
		pt_print_lat_cells(o, r);
	fflush(stdout);
}

/* --report-both: each direction's rows on their own, after the sums (perftest's layout). */
void pt_print_bw_both(const struct pt_opts *o, const struct pt_run *runs, unsigned n)
{
	static const char *const title[2] = { "Local", "Remote" };

	for (int d = 0; d < 2; d++) {
		printf(PT_LINE "\n %s results: \n" PT_LINE, title[d]);
		pt_print_heading(o);
		for (unsigned i = 0; i < n; i++)
			pt_print_bw_cells(o, runs[i].size, &runs[i].dir[d], runs[i].cpu_util);
	}
}

/* -U (in the order measured) and -H (sorted): perftest's "#, usec" list, then its heading again. */
void pt_print_samples(const struct pt_opts *o, const struct pt_run *r)
{
	double *sorted;

	if (o->output != PT_OUT_FULL || !r->n_samples)
		return;
	if (o->unsorted) {
		printf("#, %s\n", o->cycles ? "cycles" : "usec");
		for (size_t i = 0; i < r->n_samples; i++)
			printf("%zu, %g\n", i + 1, pt_lat_unit(o, r->samples[i]));
	}
	if (o->hist && (sorted = malloc(r->n_samples * sizeof(*sorted)))) {
		memcpy(sorted, r->samples, r->n_samples * sizeof(*sorted));
		percentile_sort(sorted, r->n_samples);
		printf("#, %s\n", o->cycles ? "cycles" : "usec");
		for (size_t i = 0; i < r->n_samples; i++)
			printf("%zu, %g\n", i + 1, pt_lat_unit(o, sorted[i]));
		free(sorted);
	}
	printf(PT_LINE);
	pt_print_heading(o);
}

void pt_print_server_summary(const struct pt_run *r)
{
	const json_t *port = json_array_get(json_object_get(r->report, "ports"), 0);

	printf(" served %.3f s: received %.0f frames (%.0f bytes), sent %.0f frames (%.0f bytes)\n",
	       pt_num(r->report, "duration_s"), pt_num(port, "rx_packets"), pt_num(port, "rx_bytes"),
	       pt_num(port, "tx_packets"), pt_num(port, "tx_bytes"));
}

/* ---- perftest's JSON file (--out_json) ---- */

/* perftest prints its figures with %.2lf (%.6lf the message rate): the same digits here, rounded
 * by printf as the table's are. */
static json_t *pt_fixed(double v, int digits)
{
	char text[64];

	snprintf(text, sizeof(text), "%.*f", digits, v);
	return json_real(strtod(text, NULL));
}

/* perftest's "test_info", the fields that mean something here. */
static json_t *pt_test_info(const struct pt_opts *o)
{
	char test[96];
	json_t *j = json_object();

	snprintf(test, sizeof(test), "%s_%s%s_Test", pt_title(o), o->bidir ? "Bidirectional_" : "",
		 o->test->kind == PT_BW ? "BW" : "Latency");
	json_object_set_new(j, "test", json_string(test));
	json_object_set_new(j, "Dual_port", json_string("OFF"));
	json_object_set_new(j, "Device", json_string(pt_device(o)));
	json_object_set_new(j, "Number_of_qps", json_integer(o->qps));
	json_object_set_new(j, "Transport_type", json_string("IB"));
	json_object_set_new(j, "Connection_type", json_string(pt_conn_name[o->conn]));
	json_object_set_new(j, "Using_SRQ", json_string("OFF"));
	json_object_set_new(j, "TX_depth", json_integer(o->tx_depth));
	json_object_set_new(j, "Mtu", json_integer(o->mtu));
	json_object_set_new(j, "Link_type", json_string("Ethernet"));
	if (o->test->verb == PT_READ)
		json_object_set_new(j, "Outstand_reads", json_integer(o->outs));
	else
		json_object_set_new(j, "Max_inline_data", json_integer(0));
	json_object_set_new(j, "rdma_cm_QPs", json_string("OFF"));
	json_object_set_new(j, "Data_ex_method", json_string("Ethernet"));
	return j;
}

static json_t *pt_perftest_results(const struct pt_opts *o, const struct pt_run *r)
{
	json_t *j = json_object();
	/* perftest's extra digits for a small Gb/s figure */
	int digits = o->gbits && r->bw.avg_gbps < 0.1 ? 6 : 2;

	if (o->output == PT_OUT_BW)
		json_object_set_new(j, "bw_avg", json_real(pt_bw_unit(o, r->bw.avg_gbps)));
	else if (o->output == PT_OUT_MSG_RATE)
		json_object_set_new(j, "msgRate_avg", json_real(r->bw.msg_rate_mpps));
	else if (o->output == PT_OUT_LAT)
		json_object_set_new(j, "avg_lat", json_real(pt_lat_unit(o, r->t_avg)));
	if (o->output != PT_OUT_FULL)
		return j;
	json_object_set_new(j, "MsgSize", json_integer((json_int_t)r->size));
	json_object_set_new(j, "n_iterations", json_integer((json_int_t)r->iterations));
	if (o->test->kind == PT_BW) {
		json_object_set_new(j, "BW_peak", pt_fixed(pt_bw_unit(o, r->bw.peak_gbps), digits));
		json_object_set_new(j, "BW_average", pt_fixed(pt_bw_unit(o, r->bw.avg_gbps), digits));
		json_object_set_new(j, "MsgRate", pt_fixed(r->bw.msg_rate_mpps, 6));
		if (o->cpu_util && o->duration_s > 0)
			json_object_set_new(j, "CPU_util", pt_fixed(r->cpu_util, 2));
		return j;
	}
	const char *keys[] = { "t_min", "t_max", "t_typical", "t_avg", "t_stdev", "percentile_99", "percentile_99.9" };
	const double v[] = { r->t_min, r->t_max, r->t_typical, r->t_avg, r->t_stdev, r->t_99, r->t_99_9 };
	for (unsigned i = 0; i < 7; i++)
		json_object_set_new(j, keys[i], pt_fixed(pt_lat_unit(o, v[i]), 2));
	return j;
}

/* perftest rewrites its file at every report: with -a and --run_infinitely the last row stays. */
int pt_write_perftest_json(const struct pt_opts *o, const struct pt_run *r)
{
	const char *path = o->out_json_file ? o->out_json_file : "perftest_out.json";
	json_t *root = json_object();
	int rc = 0;

	json_object_set_new(root, "test_info", pt_test_info(o));
	json_object_set_new(root, "results", pt_perftest_results(o, r));
	if (json_dump_file(root, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))) {
		fprintf(stderr, "%s: --out_json_file: cannot write %s\n", o->prog, path);
		rc = -1;
	}
	json_decref(root);
	return rc;
}

/* ---- the front end's JSON: the engine's report of each run, and what the table shows ---- */

static json_t *pt_bw_json(const struct pt_opts *o, const struct pt_bw *b)
{
	return json_pack("{s:I,s:f,s:f,s:f,s:f,s:f,s:s}", "iterations", (json_int_t)b->iterations, "bw_peak",
			 pt_bw_unit(o, b->peak_gbps), "bw_average", pt_bw_unit(o, b->avg_gbps), "msg_rate_mpps",
			 b->msg_rate_mpps, "bw_peak_gbps", b->peak_gbps, "bw_average_gbps", b->avg_gbps, "bw_peak_from",
			 b->peak_from ? b->peak_from : "");
}

static json_t *pt_result_json(const struct pt_opts *o, const struct pt_run *r)
{
	json_t *j = json_pack("{s:I,s:I}", "bytes", (json_int_t)r->size, "iterations", (json_int_t)r->iterations);

	if (o->test->kind == PT_BW) {
		json_t *bw = pt_bw_json(o, &r->bw);
		json_object_update(j, bw);
		json_decref(bw);
		json_object_set_new(j, "seconds", json_real(r->seconds));
		if (o->bidir)
			json_object_set_new(j, "directions", json_pack("[o,o]", pt_bw_json(o, &r->dir[0]),
								       pt_bw_json(o, &r->dir[1])));
		if (o->cpu_util && o->duration_s > 0)
			json_object_set_new(j, "cpu_util_percent", json_real(r->cpu_util));
	} else {
		const char *keys[] = { "t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us", "t_99_us",
				       "t_99_9_us" };
		const double v[] = { r->t_min, r->t_max, r->t_typical, r->t_avg, r->t_stdev, r->t_99, r->t_99_9 };
		for (unsigned i = 0; i < 7; i++)
			json_object_set_new(j, keys[i], json_real(v[i] / 1000.0));
		json_object_set_new(j, "from", json_string(r->lat_source ? r->lat_source : ""));
		if (r->extra)
			json_object_set(j, "latency_ns", r->extra);
	}
	return j;
}

static json_t *pt_info_json(const struct pt_opts *o)
{
	int tclass = pt_tclass(o);
	json_t *notes = json_array();
	json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:s}", "test", o->test->name, "version",
			      roce_version_string(), "verb", pt_title(o), "connection", pt_conn_name[o->conn], "qps",
			      (int)o->qps, "mtu", (int)o->mtu, "tclass", tclass, "dscp", tclass >> 2, "ecn", tclass & 3,
			      "tx_depth", (int)o->tx_depth, "window", (int)o->window, "device", pt_device(o));
	bool timed = o->duration_s > 0 || o->run_inf;

	json_object_set_new(j, "iterations", timed ? json_null() : json_integer((json_int_t)o->iters));
	json_object_set_new(j, "duration_s", timed && !o->run_inf ? json_real(o->duration_s) : json_null());
	json_object_set_new(j, "margin_s", timed && !o->run_inf ? json_real(pt_margin(o)) : json_null());
	json_object_set_new(j, "run_infinitely_interval_s", o->run_inf ? json_real(o->duration_s) : json_null());
	json_object_set_new(j, "bidirectional", json_boolean(o->bidir));
	json_object_set_new(j, "bw_unit", json_string(o->gbits ? "Gb/sec (1e9 bit/s)" : "MB/sec (2^20 byte/s)"));
	json_object_set_new(j, "server", json_boolean(o->server));
	for (unsigned i = 0; i < o->n_notes; i++)
		json_array_append_new(notes, json_string(o->notes[i]));
	json_object_set_new(j, "notes", notes);
	return j;
}

/* runs[i].report are the engine's reports (n of them); rows are what the table printed. */
int pt_write_report(const struct pt_opts *o, const char *path, const struct pt_run *runs, unsigned n,
		    const struct pt_run *rows, unsigned n_rows)
{
	json_t *root = json_object(), *info = pt_info_json(o), *results = json_array(), *reports = json_array();
	int rc = 0;

	for (unsigned i = 0; !o->server && i < n_rows; i++)
		json_array_append_new(results, pt_result_json(o, &rows[i]));
	for (unsigned i = 0; i < n; i++)
		json_array_append(reports, runs[i].report ? runs[i].report : json_null());
	json_object_set_new(info, "results", results);
	json_object_set_new(root, "perftest", info);
	json_object_set_new(root, "runs", reports);
	if (json_dump_file(root, path, JSON_INDENT(2)) != 0) {
		fprintf(stderr, "%s: cannot write %s\n", o->prog, path);
		rc = -1;
	} else if (o->json) {
		json_dumpf(root, stdout, JSON_INDENT(2));
		printf("\n");
	}
	json_decref(root);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
#include "comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#define POLL_NS 50000L /* a pending request is looked at every 50 us */
#define TAG_CLOCK 7

double comm_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long long wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int comm_init(int *argc, char ***argv, struct comm *c)
{
	MPI_Comm local;
	int len = 0;

	memset(c, 0, sizeof(*c));
	if (MPI_Init(argc, argv) != MPI_SUCCESS)
		return -1;
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &c->size);
	MPI_Get_processor_name(c->host, &len);
	if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &local) != MPI_SUCCESS)
		return -1;
	MPI_Comm_rank(local, &c->local_rank);
	MPI_Comm_size(local, &c->local_size);
	MPI_Comm_free(&local);
	return 0;
}

void comm_finish(void)
{
	comm_end_live();
	MPI_Finalize();
}

void comm_abort(int status)
{
	fflush(stdout);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, status);
	exit(status); /* (MPI_Abort does not return) */
}

/* Polls req until it completes or the deadline passes. */
static int wait_until(MPI_Request *req, double deadline)
{
	int done = 0;

	for (;;) {
		if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return -1;
		if (done)
			return 0;
		if (comm_now_s() > deadline)
			return -1;
		nanosleep(&(struct timespec){ .tv_nsec = POLL_NS }, NULL);
	}
}

int comm_barrier(double timeout_s)
{
	MPI_Request req;

	if (MPI_Ibarrier(MPI_COMM_WORLD, &req) != MPI_SUCCESS)
		return -1;
	return wait_until(&req, comm_now_s() + timeout_s);
}

int comm_allgather(const void *mine, void *all, int bytes, double timeout_s)
{
	MPI_Request req;

	if (MPI_Iallgather(mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
		return -1;
	return wait_until(&req, comm_now_s() + timeout_s);
}

int comm_bcast(void *buf, int bytes, int root, double timeout_s)
{
	MPI_Request req;

	if (MPI_Ibcast(buf, bytes, MPI_BYTE, root, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
		return -1;
	return wait_until(&req, comm_now_s() + timeout_s);
}

int comm_send_string(const char *s, int tag, double timeout_s)
{
	MPI_Request req;

	if (MPI_Isend(s, (int)strlen(s) + 1, MPI_CHAR, 0, tag, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
		return -1;
	return wait_until(&req, comm_now_s() + timeout_s);
}

static MPI_Request live_req = MPI_REQUEST_NULL;
static char live_buf[256];

int comm_post_live(const void *buf, int bytes, int tag)
{
	int done = 1;

	if (bytes > (int)sizeof(live_buf))
		return -1;
	if (live_req != MPI_REQUEST_NULL && MPI_Test(&live_req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
		return -1;
	if (!done)
		return 1;
	memcpy(live_buf, buf, (size_t)bytes); /* MPI reads it until the send completes */
	return MPI_Isend(live_buf, bytes, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &live_req) == MPI_SUCCESS ? 0 : -1;
}

int comm_take_live(void *buf, int bytes, int tag)
{
	MPI_Status st;
	int flag = 0, n = 0;

	if (MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS || !flag)
		return 0;
	MPI_Get_count(&st, MPI_BYTE, &n);
	if (n != bytes) { /* not ours: taken and dropped */
		char skip[256];
		MPI_Recv(skip, (int)sizeof(skip), MPI_BYTE, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		return 0;
	}
	return MPI_Recv(buf, bytes, MPI_BYTE, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS;
}

void comm_end_live(void)
{
	int done = 0;
	double until = comm_now_s() + 1.0;

	while (live_req != MPI_REQUEST_NULL && !done && comm_now_s() < until)
		if (MPI_Test(&live_req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			break;
	if (live_req != MPI_REQUEST_NULL && !done) {
		MPI_Cancel(&live_req);
		MPI_Request_free(&live_req);
	}
	live_req = MPI_REQUEST_NULL;
}

/* One rank's string, if it has come: 1 received, 0 not yet, -1 error. */
static int try_receive(int src, int tag, char **out)
{
	MPI_Status st;
	int flag = 0, n = 0;

	if (MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS)
		return -1;
	if (!flag)
		return 0;
	MPI_Get_count(&st, MPI_CHAR, &n);
	if (n < 1 || !(*out = malloc((size_t)n)))
		return -1;
	if (MPI_Recv(*out, n, MPI_CHAR, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
		free(*out);
		*out = NULL;
		return -1;
	}
	(*out)[n - 1] = '\0';
	return 1;
}

int comm_gather_strings(const struct comm *c, int tag, char **out, double timeout_s)
{
	double deadline = comm_now_s() + timeout_s;
	int missing = c->size - 1;

	for (int r = 1; r < c->size; r++)
		out[r] = NULL;
	while (missing > 0) {
		for (int r = 1; r < c->size; r++)
			if (!out[r] && try_receive(r, tag, &out[r]) > 0)
				missing--;
		if (missing && comm_now_s() > deadline)
			return -1;
		if (missing)
			nanosleep(&(struct timespec){ .tv_nsec = POLL_NS }, NULL);
	}
	return 0;
}

/* One exchange: rank 0 sends, the peer answers with its clock. */
static int exchange(int rank, int peer, long long *s, double deadline)
{
	MPI_Request req[2];
	long long token = 0, answer = 0;

	if (rank == 0) {
		s[0] = wall_ns();
		if (MPI_Isend(&token, 1, MPI_LONG_LONG, peer, TAG_CLOCK, MPI_COMM_WORLD, &req[0]) != MPI_SUCCESS ||
		    MPI_Irecv(&answer, 1, MPI_LONG_LONG, peer, TAG_CLOCK, MPI_COMM_WORLD, &req[1]) != MPI_SUCCESS ||
		    wait_until(&req[0], deadline) || wait_until(&req[1], deadline))
			return -1;
		s[1] = wall_ns();
		s[2] = answer;
		return 0;
	}
	if (MPI_Irecv(&token, 1, MPI_LONG_LONG, 0, TAG_CLOCK, MPI_COMM_WORLD, &req[0]) != MPI_SUCCESS ||
	    wait_until(&req[0], deadline))
		return -1;
	answer = wall_ns();
	if (MPI_Isend(&answer, 1, MPI_LONG_LONG, 0, TAG_CLOCK, MPI_COMM_WORLD, &req[1]) != MPI_SUCCESS)
		return -1;
	return wait_until(&req[1], deadline);
}

int comm_clock_pingpong(const struct comm *c, int peer, unsigned n, long long (*samples)[3], double timeout_s)
{
	double deadline = comm_now_s() + timeout_s;

	for (unsigned i = 0; i < n; i++)
		if (exchange(c->rank, peer, samples[i], deadline))
			return -1;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * test-mpi-server - a memory server rank of the mpi transport
 * (daemon/mpi_server.c) driven by a rank 0 written here, byte for byte
 * as mpi_priv.h lays the messages out.  Run with two ranks:
 *
 *   mpirun.openmpi -np 2 test-mpi-server-openmpi
 *
 * Rank 1 runs dlm_mpi_server_main(); rank 0 prints TAP.  Checks the data:
 * pages written come back intact, and a WRITE gets no reply (rank 0 is done
 * with it once its payload is sent); more READs than
 * the server keeps transfers in flight (XFERS_MAX), posted before rank 0
 * receives any, all come back right; a WRITE sent behind a READ of the
 * same range whose reply rank 0 has not received yet does not change what
 * that READ returns (the server waits for the reply before taking the
 * WRITE's payload: without that wait the READ would see the new bytes),
 * and a READ behind the WRITE sees them; a READ sent behind a WRITE whose
 * payload rank 0 holds back is answered before it if it reads another
 * range (the server receives a payload while it serves the next headers)
 * and waits for it if it reads the same one, then returns the new bytes;
 * a READ out of range is refused with an empty message and one in range
 * still works after it; nothing is left to receive at the end.
 *
 * With TEST_MPI_SERVER_BADWRITE=1, rank 0 sends one WRITE past the end of
 * the server's memory instead: the server must end the job (mpirun exits
 * non-zero, the server's log says why); rank 0 exits 1 if it is still
 * running after 30 s.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_priv.h"
#include "tap.h"
#include "wire.h"

#define MiB		(1024u * 1024u)
#define SERVER		1
#define SIZE		(16 * MiB)
#define NREADS		48	/* more than the server's XFERS_MAX */
#define SMALL		(64u * 1024u)

static unsigned int next_tag;

static int tag_new(void)
{
	next_tag = (next_tag + 1) % MPI_TAG_XFER_SPAN;
	return MPI_TAG_XFER_BASE + (int)next_tag;
}

/* Send a header for OP, LEN, OFF with a new tag; returns the tag. */
static int hdr(uint16_t op, uint32_t len, uint64_t off)
{
	int tag = tag_new();
	struct wire_hdr h = wire_req(op, len, off, (uint64_t)tag);
	uint8_t b[WIRE_HDR_SIZE];

	wire_hdr_encode(b, &h);
	if (MPI_Send(b, WIRE_HDR_SIZE, MPI_BYTE, SERVER, MPI_TAG_HDR,
		     MPI_COMM_WORLD) != MPI_SUCCESS)
		return -1;
	return tag;
}

static void fill(uint64_t *p, size_t len, uint64_t off, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len / 8; i++)
		p[i] = (off / 8 + i) * 0x9e3779b97f4a7c15ull ^ seed;
}

/* Index of the first word of P that is not the pattern, or -1. */
static long bad_word(const uint64_t *p, size_t len, uint64_t off,
		     uint64_t seed)
{
	size_t i;

	for (i = 0; i < len / 8; i++)
		if (p[i] != ((off / 8 + i) * 0x9e3779b97f4a7c15ull ^ seed))
			return (long)i;
	return -1;
}

/* Test REQ until it completes or SECS seconds pass; its flag. */
static int done_within(MPI_Request *req, double secs)
{
	double end = MPI_Wtime() + secs;
	int flag = 0;

	while (!flag && MPI_Wtime() < end) {
		MPI_Test(req, &flag, MPI_STATUS_IGNORE);
		if (!flag)
			usleep(100);
	}
	return flag;
}

/* WRITE LEN bytes of pattern SEED at OFF: 0 once the payload is sent. */
static int write_pat(void *buf, uint32_t len, uint64_t off, uint64_t seed)
{
	int tag;

	fill(buf, len, off, seed);
	tag = hdr(WIRE_OP_WRITE, len, off);
	if (tag < 0 ||
	    MPI_Send(buf, (int)len, MPI_BYTE, SERVER, tag, MPI_COMM_WORLD))
		return -1;
	return 0;
}

/* 1 if a message from the server on TAG (or any) arrives within SECS. */
static int stray_within(int tag, double secs)
{
	double end = MPI_Wtime() + secs;
	int flag = 0;

	while (!flag && MPI_Wtime() < end) {
		MPI_Iprobe(SERVER, tag, MPI_COMM_WORLD, &flag,
			   MPI_STATUS_IGNORE);
		if (!flag)
			usleep(1000);
	}
	return flag;
}

/* A WRITE past the end of the server's memory: the job must end. */
static int bad_write(void)
{
	uint8_t hello[WIRE_HELLO_SIZE];
	static uint8_t page[SMALL];
	MPI_Request req;
	int tag;

	tag = hdr(WIRE_OP_HELLO, 0, SIZE);
	MPI_Recv(hello, sizeof(hello), MPI_BYTE, SERVER, tag, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
	tag = hdr(WIRE_OP_WRITE, SMALL, SIZE);
	MPI_Isend(page, SMALL, MPI_BYTE, SERVER, tag, MPI_COMM_WORLD, &req);
	done_within(&req, 30);
	sleep(30);
	fprintf(stderr, "test-mpi-server: the job outlived a WRITE past the end of the server's memory\n");
	return 1;
}

static void rank0(void)
{
	uint8_t hello[WIRE_HELLO_SIZE];
	struct wire_hello hw;
	MPI_Request req[NREADS], wreq[1];
	MPI_Status st, sts[NREADS];
	uint64_t *a = malloc(MiB), *b = malloc(MiB), *c = malloc(MiB);
	uint64_t *many = malloc((size_t)NREADS * SMALL);
	int tag[NREADS], t1, t2, t3, i, bad, early, count = -1;

	tap_plan(11);
	if (!a || !b || !c || !many) {
		tap_diag("out of memory");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	t1 = hdr(WIRE_OP_HELLO, 0, SIZE);
	MPI_Recv(hello, sizeof(hello), MPI_BYTE, SERVER, t1, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
	wire_hello_decode(&hw, hello);
	tap_ok(hw.size == SIZE, "hello: the server holds the %u MB asked for (%" PRIu64 " bytes)",
	       SIZE / MiB, hw.size);

	/* Small pages over the first NREADS * SMALL bytes, 1 MB at 8 MB. */
	bad = 0;
	for (i = 0; i < NREADS; i++)
		bad += write_pat(many, SMALL, (uint64_t)i * SMALL, 1) != 0;
	bad += write_pat(a, MiB, 8 * MiB, 2) != 0;
	tap_ok(!bad && !stray_within(MPI_ANY_TAG, 0.1),
	       "%d writes of 64 KB and one of 1 MB sent, nothing sent back (%d failed)",
	       NREADS, bad);

	/* NREADS READs posted before rank 0 takes any reply. */
	for (i = 0; i < NREADS; i++)
		tag[i] = hdr(WIRE_OP_READ, SMALL, (uint64_t)i * SMALL);
	memset(many, 0, (size_t)NREADS * SMALL);
	for (i = 0; i < NREADS; i++)
		MPI_Irecv((uint8_t *)many + (size_t)i * SMALL, SMALL, MPI_BYTE,
			  SERVER, tag[i], MPI_COMM_WORLD, &req[i]);
	MPI_Waitall(NREADS, req, sts);
	bad = 0;
	for (i = 0; i < NREADS; i++)
		bad += bad_word((uint64_t *)((uint8_t *)many + (size_t)i * SMALL),
				SMALL, (uint64_t)i * SMALL, 1) >= 0;
	tap_ok(!bad, "%d READs of 64 KB in flight at once come back intact (%d bad)",
	       NREADS, bad);

	/*
	 * READ 1 MB at 8 MB, then WRITE new bytes there and READ again, all
	 * sent before the first READ's reply is received.
	 */
	t1 = hdr(WIRE_OP_READ, MiB, 8 * MiB);
	fill(b, MiB, 8 * MiB, 3);
	t2 = hdr(WIRE_OP_WRITE, MiB, 8 * MiB);
	MPI_Isend(b, MiB, MPI_BYTE, SERVER, t2, MPI_COMM_WORLD, &wreq[0]);
	t3 = hdr(WIRE_OP_READ, MiB, 8 * MiB);
	usleep(200 * 1000);	/* the server has every header by now */
	memset(a, 0, MiB);
	MPI_Recv(a, MiB, MPI_BYTE, SERVER, t1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	tap_ok(bad_word(a, MiB, 8 * MiB, 2) < 0,
	       "a READ answered while a WRITE of its range waits returns the bytes from before the WRITE");
	MPI_Wait(&wreq[0], MPI_STATUS_IGNORE);
	tap_ok(!stray_within(t2, 0.1),
	       "that WRITE's payload is taken and nothing comes back on its tag");
	memset(c, 0, MiB);
	MPI_Recv(c, MiB, MPI_BYTE, SERVER, t3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	tap_ok(bad_word(c, MiB, 8 * MiB, 3) < 0,
	       "a READ sent behind the WRITE returns the WRITE's bytes");

	/*
	 * WRITE 1 MB at 12 MB with its payload held back, behind it a READ
	 * of another range, then a READ of the WRITE's range.
	 */
	t1 = hdr(WIRE_OP_WRITE, MiB, 12 * MiB);
	t2 = hdr(WIRE_OP_READ, SMALL, 3 * SMALL);
	memset(c, 0, SMALL);
	MPI_Irecv(c, SMALL, MPI_BYTE, SERVER, t2, MPI_COMM_WORLD, &req[0]);
	tap_ok(done_within(&req[0], 10) && bad_word(c, SMALL, 3 * SMALL, 1) < 0,
	       "a READ of another range is answered, intact, while the WRITE ahead of it waits for its payload");
	t3 = hdr(WIRE_OP_READ, MiB, 12 * MiB);
	memset(a, 0, MiB);
	MPI_Irecv(a, MiB, MPI_BYTE, SERVER, t3, MPI_COMM_WORLD, &req[1]);
	early = done_within(&req[1], 0.2);
	fill(b, MiB, 12 * MiB, 4);
	MPI_Isend(b, MiB, MPI_BYTE, SERVER, t1, MPI_COMM_WORLD, &wreq[0]);
	tap_ok(done_within(&wreq[0], 10),
	       "the WRITE's payload, sent late, is taken");
	MPI_Wait(&req[1], MPI_STATUS_IGNORE);
	tap_ok(!early && bad_word(a, MiB, 12 * MiB, 4) < 0,
	       "a READ of the WRITE's range waits for the payload and returns its bytes (answered before it: %d)",
	       early);

	/* Out of range: an empty reply; the server goes on serving. */
	t1 = hdr(WIRE_OP_READ, MiB, SIZE - MiB / 2);
	MPI_Recv(c, MiB, MPI_BYTE, SERVER, t1, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_BYTE, &count);
	tap_ok(count == 0, "a READ past the end is refused with an empty message (%d bytes)",
	       count);
	t1 = hdr(WIRE_OP_READ, SMALL, 5 * SMALL);
	MPI_Recv(c, SMALL, MPI_BYTE, SERVER, t1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	tap_ok(bad_word(c, SMALL, 5 * SMALL, 1) < 0 &&
	       !stray_within(MPI_ANY_TAG, 0.1),
	       "the next READ in range is served intact, and nothing is left to receive");

	hdr(WIRE_OP_BYE, 0, 0);
	free(a);
	free(b);
	free(c);
	free(many);
}

int main(int argc, char **argv)
{
	struct dlm_mpi_info info = { .server_wait = DLM_MPI_WAIT_POLL };
	const char *w = getenv("TEST_MPI_SERVER_WAIT");
	int provided, rank, size;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (!rank)
			printf("1..0 # SKIP run with mpirun -np 2\n");
		MPI_Finalize();
		return 4;
	}
	if (w && !strcmp(w, "sleep"))
		info.server_wait = DLM_MPI_WAIT_SLEEP;
	if (rank) {
		info.rank = rank;
		info.size = size;
		return dlm_mpi_server_main(&info);
	}
	w = getenv("TEST_MPI_SERVER_BADWRITE");
	if (w && !strcmp(w, "1"))
		return bad_write();
	rank0();
	MPI_Finalize();
	return tap_done();
}

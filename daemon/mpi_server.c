// SPDX-License-Identifier: GPL-2.0
/*
 * mpi_server.c - ranks 1..N-1 of an MPI-launched dlmd: memory servers.
 *
 * The loop waits for a header from rank 0 (politely: an idle memory
 * server sleeps instead of spinning in MPI), serves it and waits for the
 * next.  Data moves between the MPI library and the server's memory with
 * no staging copy, and is left in flight (up to XFERS_MAX transfers)
 * while the next headers are served: a READ's reply is posted and rank 0
 * takes the pages of several READs each time it makes progress instead of
 * one per wake-up; a WRITE's payload is received while the READs behind
 * it are answered (no status goes back: rank 0 is done with a WRITE when
 * MPI is done with its frame, and a WRITE that cannot be stored ends the
 * job).  Only ranges decide the order: a WRITE first waits for the
 * transfers in flight over its range, a READ for the WRITEs in flight
 * over its range.
 * While transfers fly, the rank polls in MPI or tests and sleeps
 * (--mpi-server-wait, dlm_mpi.h).  The memory is anonymous and reserved
 * lazily, like dlm-memserver's: a page costs RAM once written.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"
#include "mpi_priv.h"
#include "wire.h"

#define IDLE_SLEEP_MAX_US	1000
#define XFER_SLEEP_MAX_US	50	/* --mpi-server-wait sleep */
#define XFERS_MAX		32	/* transfers in flight */

/* A READ's reply being sent or a WRITE's payload being received. */
struct xfer {
	MPI_Request req;
	uint64_t off;
	uint32_t len;
	int write;		/* a WRITE's payload (READs wait for it) */
};

struct server {
	const struct dlm_mpi_info *info;
	int sleep;		/* DLM_MPI_WAIT_SLEEP in force */
	uint8_t *mem;
	uint64_t size;
	uint64_t reads, writes, refused, bytes_in, bytes_out;
	int nxfers;		/* in flight, oldest first */
	struct xfer xfers[XFERS_MAX];
};

/*
 * Take the transfers that have completed off the list; 1 if any had
 * completed.  Stops at the first MPI error, left in *R.
 */
static int reap(struct server *s, int *r)
{
	int i, n = 0, flag;

	for (i = 0; i < s->nxfers; i++) {
		flag = 0;
		if (*r == MPI_SUCCESS)
			*r = MPI_Test(&s->xfers[i].req, &flag,
				      MPI_STATUS_IGNORE);
		if (!flag)
			s->xfers[n++] = s->xfers[i];
	}
	flag = n < s->nxfers;
	s->nxfers = n;
	return flag;
}

/* Does a transfer in flight keep a READ (WRITING 0) or a WRITE off a range? */
static int overlaps(const struct server *s, uint64_t off, uint64_t len,
		    int writing)
{
	const struct xfer *x;

	for (x = s->xfers; x < s->xfers + s->nxfers; x++)
		if ((writing || x->write) && x->off < off + len &&
		    off < x->off + x->len)
			return 1;
	return 0;
}

/*
 * Wait for REQ (none: MPI_REQUEST_NULL) while the transfers in flight
 * make progress, until REQ is done, at most MAX are in flight and none
 * keeps a READ (WRITING 0) or a WRITE off [OFF, OFF + LEN).  Nothing in
 * flight: the idle wait, sleeping up to IDLE_SLEEP_MAX_US; transfers in
 * flight: poll, or under DLM_MPI_WAIT_SLEEP sleep up to XFER_SLEEP_MAX_US.
 * Returns the MPI error code.
 */
static int wait_for(struct server *s, MPI_Request *req, uint64_t off,
		    uint64_t len, int writing, int max)
{
	unsigned int round = 0;
	int r = MPI_SUCCESS, done;

	for (;;) {
		done = 1;
		if (*req != MPI_REQUEST_NULL)
			r = MPI_Test(req, &done, MPI_STATUS_IGNORE);
		if (reap(s, &r))
			round = 0;
		if (r != MPI_SUCCESS)
			return r;
		if (done && s->nxfers <= max &&
		    !overlaps(s, off, len, writing))
			return MPI_SUCCESS;
		if (!s->nxfers)
			mpi_backoff(&round, IDLE_SLEEP_MAX_US);
		else if (s->sleep)
			mpi_backoff(&round, XFER_SLEEP_MAX_US);
	}
}

/*
 * Put the transfer of LEN bytes at OFF on TAG in flight, after those it
 * must wait for: a READ's reply, or (WRITE) a WRITE's payload.
 */
static int start(struct server *s, uint64_t off, uint32_t len, int tag,
		 int write)
{
	MPI_Request none = MPI_REQUEST_NULL;
	struct xfer *x;
	int r;

	r = wait_for(s, &none, off, len, write, XFERS_MAX - 1);
	if (r != MPI_SUCCESS)
		return r;
	x = &s->xfers[s->nxfers];
	if (write)
		r = MPI_Irecv(s->mem + off, (int)len, MPI_BYTE, 0, tag,
			      MPI_COMM_WORLD, &x->req);
	else
		r = MPI_Isend(s->mem + off, (int)len, MPI_BYTE, 0, tag,
			      MPI_COMM_WORLD, &x->req);
	if (r != MPI_SUCCESS)
		return r;
	x->off = off;
	x->len = len;
	x->write = write;
	s->nxfers++;
	return MPI_SUCCESS;
}

/* Send a reply to rank 0 and wait for it as configured. */
static int send_tag(const struct server *s, const void *buf, int len,
		    int tag)
{
	MPI_Request req;
	int r;

	if (!s->sleep)
		return MPI_Send(buf, len, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
	r = MPI_Isend(buf, len, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &req);
	if (r != MPI_SUCCESS)
		return r;
	return mpi_wait_polite(&req, MPI_STATUS_IGNORE, XFER_SLEEP_MAX_US);
}

static int hello(struct server *s, const struct wire_hdr *h, int tag)
{
	uint8_t payload[WIRE_HELLO_SIZE];
	struct wire_hello w = { .max_io = WIRE_MAX_IO };

	if (!s->mem && h->offset) {
		s->mem = mmap(NULL, h->offset, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			      -1, 0);
		if (s->mem == MAP_FAILED) {
			log_error("cannot reserve the memory rank 0 asks for: lower this server's line in the memfile",
				  "bytes=%" PRIu64 " err=\"%s\"", h->offset,
				  strerror(errno));
			s->mem = NULL;
		} else {
			s->size = h->offset;
			log_info("serving", "bytes=%" PRIu64 " pid=%d server_wait=%s node_ranks=%d node_cpus=%d",
				 s->size, (int)getpid(),
				 dlm_mpi_wait_name(s->info->server_wait),
				 s->info->node_ranks, s->info->node_cpus);
		}
	}
	w.size = s->size;
	wire_hello_encode(payload, &w);
	return send_tag(s, payload, sizeof(payload), tag);
}

static int read_one(struct server *s, const struct wire_hdr *h, int tag)
{
	uint32_t st = wire_check_range(h->offset, h->len, s->size);

	if (st != WIRE_OK || !s->mem) {
		s->refused++;
		log_warn("refused a read", "offset=%" PRIu64 " len=%u status=\"%s\"",
			 h->offset, h->len, wire_status_str(st));
		return send_tag(s, NULL, 0, tag);
	}
	s->reads++;
	s->bytes_out += h->len;
	return start(s, h->offset, h->len, tag, 0);
}

/*
 * Rank 0 checked the range against this server's size and completes a
 * WRITE once its payload is sent, expecting no status: a WRITE that cannot
 * be stored (a rank 0 of another build, or this server's memory missing)
 * ends the job rather than lose the page.
 */
static int write_one(struct server *s, const struct wire_hdr *h, int tag)
{
	uint32_t st = wire_check_range(h->offset, h->len, s->size);
	char why[192];

	if (st == WIRE_OK && s->mem) {
		s->writes++;
		s->bytes_in += h->len;
		return start(s, h->offset, h->len, tag, 1);
	}
	snprintf(why, sizeof(why),
		 "memory server rank cannot store a write of %u bytes at offset %" PRIu64 " (%" PRIu64 " bytes served): %s",
		 h->len, h->offset, s->size,
		 st == WIRE_OK ? "no memory" : wire_status_str(st));
	dlm_mpi_abort(why);
	return MPI_ERR_OTHER;
}

int dlm_mpi_server_main(const struct dlm_mpi_info *info)
{
	uint8_t buf[WIRE_HDR_SIZE];
	struct server s = {
		.info = info,
		.sleep = info->server_wait == DLM_MPI_WAIT_SLEEP,
	};
	struct wire_hdr h;
	MPI_Request req, none = MPI_REQUEST_NULL;
	char estr[MPI_MAX_ERROR_STRING];
	int r, elen, tag, code = 0, bye = 0;

	log_debug("memory server rank up", "rank=%d", info->rank);
	for (;;) {
		r = MPI_Irecv(buf, sizeof(buf), MPI_BYTE, 0, MPI_TAG_HDR,
			      MPI_COMM_WORLD, &req);
		if (r == MPI_SUCCESS)
			r = wait_for(&s, &req, 0, 0, 0, XFERS_MAX);
		if (r != MPI_SUCCESS)
			break;
		wire_hdr_decode(&h, buf);
		if (h.magic != WIRE_MAGIC || h.version != WIRE_VERSION ||
		    h.tag < MPI_TAG_XFER_BASE ||
		    h.tag >= MPI_TAG_XFER_BASE + MPI_TAG_XFER_SPAN) {
			log_error("malformed request from rank 0: dlmd and its memory servers must be the same build",
				  "magic=%#x version=%u tag=%" PRIu64, h.magic,
				  h.version, h.tag);
			code = 1;
			break;
		}
		tag = (int)h.tag;
		switch (h.op) {
		case WIRE_OP_HELLO:
			r = hello(&s, &h, tag);
			break;
		case WIRE_OP_READ:
			r = read_one(&s, &h, tag);
			break;
		case WIRE_OP_WRITE:
			r = write_one(&s, &h, tag);
			break;
		case WIRE_OP_BYE:	/* the transfers in flight first */
			r = wait_for(&s, &none, 0, 0, 0, 0);
			bye = 1;
			break;
		default:
			log_error("unknown request from rank 0", "op=%u", h.op);
			code = 1;
			goto out;
		}
		if (r != MPI_SUCCESS || bye)
			break;
	}
	if (r != MPI_SUCCESS) {
		MPI_Error_string(r, estr, &elen);
		log_error("MPI failed: leaving", "err=\"%s\"", estr);
		code = 1;
	}
out:
	log_info("memory server rank exits", "rank=%d reads=%" PRIu64
		 " writes=%" PRIu64 " refused=%" PRIu64 " bytes_in=%" PRIu64
		 " bytes_out=%" PRIu64, info->rank, s.reads, s.writes,
		 s.refused, s.bytes_in, s.bytes_out);
	if (s.mem && !s.nxfers)	/* else MPI may still use it */
		munmap(s.mem, s.size);
	MPI_Finalize();
	return code;
}

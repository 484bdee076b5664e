// SPDX-License-Identifier: GPL-2.0
/*
 * mpi_server.c - ranks 1..N-1 of an MPI-launched dlmd: memory servers.
 *
 * The loop waits for a header from rank 0 (politely: an idle memory
 * server sleeps instead of spinning in MPI), serves it and waits for the
 * next.  Data moves between the MPI library and the server's memory with
 * no staging copy; while it moves, the rank polls in MPI or tests and
 * sleeps (--mpi-server-wait, dlm_mpi.h).  A READ's reply is posted and
 * left in flight (up to SENDS_MAX of them) while the next headers are
 * served, so that rank 0 takes the pages of several READs each time it
 * makes progress instead of one per wake-up; a WRITE first waits for the
 * replies in flight that read its range.  The memory is anonymous and
 * reserved lazily, like dlm-memserver's: a page costs RAM once written.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"
#include "mpi_priv.h"
#include "wire.h"

#define IDLE_SLEEP_MAX_US	1000
#define XFER_SLEEP_MAX_US	50	/* --mpi-server-wait sleep */
#define SENDS_MAX		32	/* READ replies in flight */

struct server {
	int sleep;		/* DLM_MPI_WAIT_SLEEP in force */
	uint8_t *mem;
	uint64_t size;
	uint64_t reads, writes, refused, bytes_in, bytes_out;
	int nsends;		/* READ replies in flight, oldest first: */
	MPI_Request send_req[SENDS_MAX];
	uint64_t send_off[SENDS_MAX];
	uint32_t send_len[SENDS_MAX];
};

/*
 * Take the READ replies that have completed off the list; 1 if any had.
 * Testing stops at the first MPI error, left in *R.
 */
static int reap_sends(struct server *s, int *r)
{
	int i, n = 0, flag;

	for (i = 0; i < s->nsends; i++) {
		flag = 0;
		if (*r == MPI_SUCCESS)
			*r = MPI_Test(&s->send_req[i], &flag, MPI_STATUS_IGNORE);
		if (flag)
			continue;
		s->send_req[n] = s->send_req[i];
		s->send_off[n] = s->send_off[i];
		s->send_len[n++] = s->send_len[i];
	}
	flag = n < s->nsends;
	s->nsends = n;
	return flag;
}

/*
 * Wait for REQ (none: MPI_REQUEST_NULL) while READ replies in flight make
 * progress, until REQ is done, no reply in flight overlaps [OFF, OFF +
 * LEN) and at most MAX are in flight.  Nothing in flight: the idle wait,
 * sleeping up to IDLE_SLEEP_MAX_US; replies in flight: poll, or under
 * DLM_MPI_WAIT_SLEEP sleep up to XFER_SLEEP_MAX_US.  Returns the MPI
 * error code.
 */
static int wait_for(struct server *s, MPI_Request *req, uint64_t off,
		    uint64_t len, int max)
{
	unsigned int round = 0;
	int r = MPI_SUCCESS, done, i, busy;

	for (;;) {
		done = 1;
		if (*req != MPI_REQUEST_NULL)
			r = MPI_Test(req, &done, MPI_STATUS_IGNORE);
		if (reap_sends(s, &r))
			round = 0;
		if (r != MPI_SUCCESS)
			return r;
		busy = s->nsends > max;
		for (i = 0; i < s->nsends && !busy; i++)
			busy = s->send_off[i] < off + len &&
			       off < s->send_off[i] + s->send_len[i];
		if (done && !busy)
			return MPI_SUCCESS;
		if (!s->nsends)
			mpi_backoff(&round, IDLE_SLEEP_MAX_US);
		else if (s->sleep)
			mpi_backoff(&round, XFER_SLEEP_MAX_US);
	}
}

/* Send or receive a payload to or from rank 0, waiting as configured. */
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

static int recv_tag(const struct server *s, void *buf, int len, int tag)
{
	MPI_Request req;
	int r;

	if (!s->sleep)
		return MPI_Recv(buf, len, MPI_BYTE, 0, tag, MPI_COMM_WORLD,
				MPI_STATUS_IGNORE);
	r = MPI_Irecv(buf, len, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &req);
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
			log_info("serving", "bytes=%" PRIu64 " pid=%d",
				 s->size, (int)getpid());
		}
	}
	w.size = s->size;
	wire_hello_encode(payload, &w);
	return send_tag(s, payload, sizeof(payload), tag);
}

static int read_one(struct server *s, const struct wire_hdr *h, int tag)
{
	uint32_t st = wire_check_range(h->offset, h->len, s->size);
	MPI_Request none = MPI_REQUEST_NULL;
	int r;

	if (st != WIRE_OK || !s->mem) {
		s->refused++;
		log_warn("refused a read", "offset=%" PRIu64 " len=%u status=\"%s\"",
			 h->offset, h->len, wire_status_str(st));
		return send_tag(s, NULL, 0, tag);
	}
	r = wait_for(s, &none, 0, 0, SENDS_MAX - 1);
	if (r != MPI_SUCCESS)
		return r;
	s->reads++;
	s->bytes_out += h->len;
	r = MPI_Isend(s->mem + h->offset, (int)h->len, MPI_BYTE, 0, tag,
		      MPI_COMM_WORLD, &s->send_req[s->nsends]);
	if (r == MPI_SUCCESS) {
		s->send_off[s->nsends] = h->offset;
		s->send_len[s->nsends++] = h->len;
	}
	return r;
}

static int write_one(struct server *s, const struct wire_hdr *h, int tag)
{
	uint32_t st = wire_check_range(h->offset, h->len, s->size);
	MPI_Request none = MPI_REQUEST_NULL;
	int32_t status;
	MPI_Message msg;
	MPI_Status mst;
	void *scratch;
	int r, count;

	if (st == WIRE_OK && s->mem) {
		r = wait_for(s, &none, h->offset, h->len, SENDS_MAX);
		if (r == MPI_SUCCESS)
			r = recv_tag(s, s->mem + h->offset, (int)h->len, tag);
		s->writes++;
		s->bytes_in += h->len;
	} else {
		/* Take the payload off the wire, whatever its size. */
		s->refused++;
		r = MPI_Mprobe(0, tag, MPI_COMM_WORLD, &msg, &mst);
		if (r == MPI_SUCCESS) {
			MPI_Get_count(&mst, MPI_BYTE, &count);
			scratch = malloc(count ? (size_t)count : 1);
			if (!scratch)
				return MPI_ERR_NO_MEM;
			r = MPI_Mrecv(scratch, count, MPI_BYTE, &msg,
				      MPI_STATUS_IGNORE);
			free(scratch);
		}
		log_warn("refused a write", "offset=%" PRIu64 " len=%u status=\"%s\"",
			 h->offset, h->len, wire_status_str(st));
		if (st == WIRE_OK)
			st = WIRE_E_RANGE;	/* no memory at all */
	}
	if (r != MPI_SUCCESS)
		return r;
	status = (int32_t)st;
	return MPI_Send(&status, 1, MPI_INT32_T, 0, tag, MPI_COMM_WORLD);
}

int dlm_mpi_server_main(const struct dlm_mpi_info *info)
{
	uint8_t buf[WIRE_HDR_SIZE];
	struct server s = {
		.sleep = info->server_wait == DLM_MPI_WAIT_SLEEP,
	};
	struct wire_hdr h;
	MPI_Request req, none = MPI_REQUEST_NULL;
	char estr[MPI_MAX_ERROR_STRING];
	int r, elen, tag, code = 0, bye = 0;

	log_debug("memory server rank up", "rank=%d server_wait=%s",
		  info->rank, dlm_mpi_wait_name(info->server_wait));
	for (;;) {
		r = MPI_Irecv(buf, sizeof(buf), MPI_BYTE, 0, MPI_TAG_HDR,
			      MPI_COMM_WORLD, &req);
		if (r == MPI_SUCCESS)
			r = wait_for(&s, &req, 0, 0, SENDS_MAX);
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
		case WIRE_OP_BYE:	/* the replies in flight first */
			r = wait_for(&s, &none, 0, 0, 0);
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
	if (s.mem && !s.nsends)	/* else MPI may still read it */
		munmap(s.mem, s.size);
	MPI_Finalize();
	return code;
}

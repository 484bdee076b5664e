/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wire.h - the dlm-memserver TCP protocol, shared by dlm-memserver, the
 * tcp transport of dlmd and the tests.
 *
 * Every message starts with a 32-byte little-endian header:
 *
 *   offset size field
 *        0    4 magic    WIRE_MAGIC
 *        4    2 version  WIRE_VERSION
 *        6    2 op       WIRE_OP_*; replies set WIRE_OP_REPLY as well
 *        8    4 status   requests: 0; replies: WIRE_OK or WIRE_E_*
 *       12    4 len      payload bytes (see below)
 *       16    8 offset   byte offset in the server's memory
 *       24    8 tag      chosen by the client, echoed in the reply
 *
 * Requests and their replies:
 *
 *   HELLO  len 0          -> reply len 16: struct wire_hello
 *   PING   len 0          -> reply len 0
 *   READ   len N, offset  -> reply len N followed by N bytes (on WIRE_OK)
 *   WRITE  len N, offset, followed by N bytes -> reply len 0
 *
 * The mpi transport (mpi_priv.h) carries the same headers in MPI messages
 * and adds BYE (no reply: the memory server rank leaves its loop).
 *
 * A server answers the requests of one connection in order.  A READ or
 * WRITE outside the memory (offset + len beyond the size, or overflowing)
 * is answered WIRE_E_RANGE, one with len > WIRE_MAX_IO WIRE_E_TOOBIG; the
 * payload of a refused WRITE is still read and discarded, so the
 * connection stays in step and usable.  A malformed header (bad magic,
 * version or op, non-zero status, HELLO or PING with a payload) is answered
 * WIRE_E_PROTO or WIRE_E_VERSION when possible and closes the connection.
 */
#ifndef DLM_WIRE_H
#define DLM_WIRE_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>

#define WIRE_MAGIC		0x4d4c4444u	/* bytes "DDLM" on the wire */
#define WIRE_VERSION		1
#define WIRE_HDR_SIZE		32
#define WIRE_HELLO_SIZE		16
#define WIRE_MAX_IO		(256u << 20)	/* largest READ/WRITE len */

enum wire_op {
	WIRE_OP_HELLO = 1,
	WIRE_OP_READ = 2,
	WIRE_OP_WRITE = 3,
	WIRE_OP_PING = 4,
	WIRE_OP_BYE = 5,	/* mpi transport only: the server rank exits */
};
#define WIRE_OP_REPLY		0x8000u

enum wire_status {
	WIRE_OK = 0,
	WIRE_E_RANGE = 1,	/* offset/len outside the memory, or overflow */
	WIRE_E_TOOBIG = 2,	/* len > WIRE_MAX_IO */
	WIRE_E_PROTO = 3,	/* malformed header: the connection closes */
	WIRE_E_VERSION = 4,	/* version not spoken: the connection closes */
};

struct wire_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t op;
	uint32_t status;
	uint32_t len;
	uint64_t offset;
	uint64_t tag;
};

/* HELLO reply payload. */
struct wire_hello {
	uint64_t size;		/* bytes of memory served */
	uint32_t max_io;	/* WIRE_MAX_IO of the server */
	uint32_t flags;		/* zero */
};

static inline void wire_put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void wire_put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void wire_put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint16_t wire_get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static inline uint32_t wire_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline uint64_t wire_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static inline void wire_hdr_encode(uint8_t *buf, const struct wire_hdr *h)
{
	wire_put32(buf + 0, h->magic);
	wire_put16(buf + 4, h->version);
	wire_put16(buf + 6, h->op);
	wire_put32(buf + 8, h->status);
	wire_put32(buf + 12, h->len);
	wire_put64(buf + 16, h->offset);
	wire_put64(buf + 24, h->tag);
}

static inline void wire_hdr_decode(struct wire_hdr *h, const uint8_t *buf)
{
	h->magic = wire_get32(buf + 0);
	h->version = wire_get16(buf + 4);
	h->op = wire_get16(buf + 6);
	h->status = wire_get32(buf + 8);
	h->len = wire_get32(buf + 12);
	h->offset = wire_get64(buf + 16);
	h->tag = wire_get64(buf + 24);
}

/* A request header with magic and version filled in. */
static inline struct wire_hdr wire_req(uint16_t op, uint32_t len,
				       uint64_t offset, uint64_t tag)
{
	struct wire_hdr h = {
		.magic = WIRE_MAGIC, .version = WIRE_VERSION, .op = op,
		.len = len, .offset = offset, .tag = tag,
	};
	return h;
}

static inline void wire_hello_encode(uint8_t *buf, const struct wire_hello *w)
{
	wire_put64(buf + 0, w->size);
	wire_put32(buf + 8, w->max_io);
	wire_put32(buf + 12, w->flags);
}

static inline void wire_hello_decode(struct wire_hello *w, const uint8_t *buf)
{
	w->size = wire_get64(buf + 0);
	w->max_io = wire_get32(buf + 8);
	w->flags = wire_get32(buf + 12);
}

/*
 * Status of a READ or WRITE of LEN bytes at OFFSET in SIZE bytes of
 * memory: WIRE_OK, WIRE_E_TOOBIG or WIRE_E_RANGE (overflow included).
 */
static inline uint32_t wire_check_range(uint64_t offset, uint32_t len,
					uint64_t size)
{
	if (len > WIRE_MAX_IO)
		return WIRE_E_TOOBIG;
	if (offset > size || len > size - offset)
		return WIRE_E_RANGE;
	return WIRE_OK;
}

const char *wire_status_str(uint32_t status);
const char *wire_op_str(uint16_t op);

/*
 * Blocking I/O helpers for stream sockets.  They retry on EINTR and
 * partial transfers and never raise SIGPIPE.
 *
 * wire_sendv: send all of IOV (which it consumes: IOV is modified); 0 or
 *	-errno.
 * wire_recv: receive exactly LEN bytes into BUF; 0, -errno, or -ECONNRESET
 *	when the peer closed before LEN bytes (*GOT, if given, says how many
 *	came, so a clean close between messages can be told apart).
 * wire_discard: receive and drop LEN bytes; 0 or -errno.
 */
int wire_sendv(int fd, struct iovec *iov, int iovcnt);
int wire_recv(int fd, void *buf, size_t len, size_t *got);
int wire_discard(int fd, uint64_t len);

/*
 * Zero-copy sends.  A payload handed to the socket by reference, not
 * copied (nor its socket pages zeroed, as Debian's init_on_alloc kernels
 * do): vmsplice() lends its pages to a pipe, splice() moves them to the
 * socket.  The receiver still copies once.  The payload's memory must
 * stay unchanged until the peer has answered the message (it may be read
 * until then), which holds for dlm-memserver's READ replies (the client
 * reuses those bytes only after it has received them) and for dlmd's
 * WRITEs from its bounce ring (reused once the server has answered).  The
 * socket may hold the pages past the answer, for as long as the
 * connection lives if it dies: dlmd therefore never lends the frame pool,
 * whose frames the kernel must find unreferenced once a request is over
 * (transport_tcp.c).  Memory that cannot be lent (vmsplice() fails) is
 * sent by copy, as wire_sendv does.
 *
 * struct wire_pipe: the pipe of one sending thread or connection (one
 * send at a time); .fd[0] -1 until the first send opens it.
 * wire_send_lent: send HDR (HLEN bytes) and then LEN bytes of BUF; 0 or
 *	-errno (the connection is then unusable).
 * wire_pipe_close: close P's pipe, if open.
 */
struct wire_pipe {
	int fd[2];
	int broken;	/* lending failed: send by copy from now on */
};

#define WIRE_PIPE_INIT	{ .fd = { -1, -1 } }

int wire_send_lent(int fd, struct wire_pipe *p, const void *hdr,
		   size_t hlen, const void *buf, size_t len);
void wire_pipe_close(struct wire_pipe *p);

#endif /* DLM_WIRE_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * memserver-client - the dlm-memserver protocol, checked over loopback.
 *
 * Usage: memserver-client PORT SIZE_MB
 *
 * Connects to 127.0.0.1:PORT only.  Writes random pages and reads them
 * back; asks for out-of-range, overflowing and oversized transfers and
 * expects error replies with the connection still serving; sends a
 * garbage header on a second connection and expects only that one closed;
 * runs two clients at once; pipelines requests.  TAP.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netaddr.h"
#include "tap.h"
#include "wire.h"

#define KiB 1024u
#define MiB (1024u * 1024u)

static struct netaddr addr = { .host = "127.0.0.1" };
static uint64_t size;

static int conn(void)
{
	char err[256];
	struct timeval tv = { .tv_sec = 10 };
	int fd = net_connect(&addr, 2000, err, sizeof(err));

	if (fd < 0) {
		tap_diag("%s", err);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

static int send_hdr(int fd, struct wire_hdr h, const void *payload)
{
	uint8_t buf[WIRE_HDR_SIZE];
	struct iovec iov[2] = {
		{ .iov_base = buf, .iov_len = sizeof(buf) },
		{ .iov_base = (void *)payload, .iov_len = payload ? h.len : 0 },
	};

	wire_hdr_encode(buf, &h);
	return wire_sendv(fd, iov, payload ? 2 : 1);
}

static int recv_hdr(int fd, struct wire_hdr *h)
{
	uint8_t buf[WIRE_HDR_SIZE];
	int r = wire_recv(fd, buf, sizeof(buf), NULL);

	if (!r)
		wire_hdr_decode(h, buf);
	return r;
}

/* One request, its reply; a READ's payload into BUF.  Returns status or -errno. */
static long rpc(int fd, uint16_t op, uint64_t off, uint32_t len, void *buf,
		uint64_t tag)
{
	struct wire_hdr h = wire_req(op, len, off, tag);
	int r;

	r = send_hdr(fd, h, op == WIRE_OP_WRITE ? buf : NULL);
	if (!r)
		r = recv_hdr(fd, &h);
	if (r)
		return r;
	if (h.magic != WIRE_MAGIC || h.op != (op | WIRE_OP_REPLY) || h.tag != tag)
		return -EPROTO;
	if (h.status)
		return h.len ? -EPROTO : (long)h.status;
	if (op == WIRE_OP_READ) {
		if (h.len != len)
			return -EPROTO;
		return wire_recv(fd, buf, len, NULL);
	}
	if (op == WIRE_OP_HELLO) {
		uint8_t p[WIRE_HELLO_SIZE];
		struct wire_hello w;

		if (h.len != WIRE_HELLO_SIZE || wire_recv(fd, p, sizeof(p), NULL))
			return -EPROTO;
		wire_hello_decode(&w, p);
		*(uint64_t *)buf = w.size;
		return 0;
	}
	return h.len ? -EPROTO : 0;
}

static void fill(uint8_t *p, size_t n, unsigned int *seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)rand_r(seed);
}

/* Closed by the peer: reads EOF (after an optional error reply). */
static int closed_by_peer(int fd, uint32_t *status)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct wire_hdr h;
	char c;

	*status = UINT32_MAX;
	if (poll(&p, 1, 5000) != 1)
		return 0;
	if (!recv_hdr(fd, &h))
		*status = h.status;
	if (poll(&p, 1, 5000) != 1)
		return 0;
	return recv(fd, &c, 1, 0) <= 0;
}

struct worker {
	uint64_t base;
	int ok;
};

/* A client writing and verifying its own 4 MiB region. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned int seed = (unsigned int)w->base;
	uint8_t *a = malloc(64 * KiB), *b = malloc(64 * KiB);
	int fd = conn(), i, ok = fd >= 0;

	for (i = 0; ok && i < 200; i++) {
		uint64_t off = w->base + (uint64_t)(rand_r(&seed) % 64) * 64 * KiB;

		fill(a, 64 * KiB, &seed);
		ok = rpc(fd, WIRE_OP_WRITE, off, 64 * KiB, a, (uint64_t)i) == 0 &&
		     rpc(fd, WIRE_OP_READ, off, 64 * KiB, b, (uint64_t)i) == 0 &&
		     !memcmp(a, b, 64 * KiB);
	}
	w->ok = ok;
	if (fd >= 0)
		close(fd);
	free(a);
	free(b);
	return NULL;
}

int main(int argc, char **argv)
{
	enum { NPAGES = 64, PAGE = 64 * KiB };
	uint8_t *pages, *back, *zero;
	uint64_t offs[NPAGES], got = 0, i;
	unsigned int seed = 4242;
	struct worker w[2];
	pthread_t t[2];
	struct wire_hdr h;
	uint32_t st;
	int fd, fd2, ok;
	long r;

	if (argc != 3) {
		fprintf(stderr, "usage: memserver-client PORT SIZE_MB\n");
		return 2;
	}
	snprintf(addr.port, sizeof(addr.port), "%s", argv[1]);
	size = strtoull(argv[2], NULL, 10) * MiB;
	pages = malloc(NPAGES * PAGE);
	back = malloc(NPAGES * PAGE);
	zero = calloc(1, PAGE);
	tap_plan(18);

	fd = conn();
	if (fd < 0) {
		tap_ok(0, "connect to 127.0.0.1:%s", addr.port);
		return 1;
	}
	r = rpc(fd, WIRE_OP_HELLO, 0, 0, &got, 1);
	tap_ok(r == 0 && got == size, "HELLO reports %" PRIu64 " bytes", got);
	tap_ok(rpc(fd, WIRE_OP_PING, 0, 0, NULL, 2) == 0, "PING answered");

	/* Random distinct page-aligned slots across the whole size. */
	for (i = 0; i < NPAGES; i++)
		offs[i] = (size / NPAGES) * i +
			  (uint64_t)(rand_r(&seed) % (size / NPAGES / PAGE)) * PAGE;
	fill(pages, NPAGES * PAGE, &seed);
	ok = 1;
	for (i = 0; i < NPAGES; i++)
		ok &= rpc(fd, WIRE_OP_WRITE, offs[i], PAGE, pages + i * PAGE, i) == 0;
	tap_ok(ok, "%d random 64 KiB pages written", NPAGES);
	memset(back, 0, NPAGES * PAGE);
	ok = 1;
	for (i = NPAGES; i-- > 0;)
		ok &= rpc(fd, WIRE_OP_READ, offs[i], PAGE, back + i * PAGE, i) == 0;
	tap_ok(ok && !memcmp(pages, back, NPAGES * PAGE),
	       "read back in reverse order: identical");
	r = rpc(fd, WIRE_OP_READ, offs[0] + PAGE, PAGE, back, 3);
	tap_ok(r == 0 && (offs[1] == offs[0] + PAGE || !memcmp(back, zero, PAGE)),
	       "memory never written reads as zeros");
	r = rpc(fd, WIRE_OP_WRITE, size - PAGE, PAGE, pages, 4);
	if (!r)
		r = rpc(fd, WIRE_OP_READ, size - PAGE, PAGE, back, 5);
	tap_ok(r == 0 && !memcmp(pages, back, PAGE), "last page of the memory usable");

	tap_ok(rpc(fd, WIRE_OP_READ, size - PAGE + 1, PAGE, back, 6) == WIRE_E_RANGE &&
	       rpc(fd, WIRE_OP_READ, size, 1, back, 7) == WIRE_E_RANGE,
	       "READ beyond the end: WIRE_E_RANGE");
	tap_ok(rpc(fd, WIRE_OP_WRITE, size - 100, PAGE, pages, 8) == WIRE_E_RANGE,
	       "WRITE beyond the end: WIRE_E_RANGE (payload discarded)");
	tap_ok(rpc(fd, WIRE_OP_READ, UINT64_MAX - 100, PAGE, back, 9) == WIRE_E_RANGE &&
	       rpc(fd, WIRE_OP_WRITE, UINT64_MAX - 10, PAGE, pages, 10) == WIRE_E_RANGE,
	       "offset + len overflowing 64 bits: WIRE_E_RANGE");
	tap_ok(rpc(fd, WIRE_OP_READ, 0, WIRE_MAX_IO + 1, back, 11) == WIRE_E_TOOBIG,
	       "READ of 256 MiB + 1: WIRE_E_TOOBIG");
	{
		/* Oversized WRITE: the server drains the 256 MiB + 4 KiB. */
		uint8_t *big = calloc(1, WIRE_MAX_IO + 4096);

		r = big ? rpc(fd, WIRE_OP_WRITE, 0, WIRE_MAX_IO + 4096, big, 12) : -ENOMEM;
		free(big);
		tap_ok(r == WIRE_E_TOOBIG, "WRITE of 256 MiB + 4 KiB: WIRE_E_TOOBIG (r=%ld)", r);
	}
	ok = rpc(fd, WIRE_OP_PING, 0, 0, NULL, 13) == 0 &&
	     rpc(fd, WIRE_OP_READ, offs[5], PAGE, back, 14) == 0 &&
	     !memcmp(back, pages + 5 * PAGE, PAGE);
	tap_ok(ok, "after the refusals the connection still serves, data intact");

	/* Pipelining: 16 requests out before any reply is read. */
	ok = 1;
	for (i = 0; i < 16; i++)
		ok &= send_hdr(fd, wire_req(WIRE_OP_READ, PAGE, offs[i], 100 + i), NULL) == 0;
	for (i = 0; ok && i < 16; i++) {
		ok = recv_hdr(fd, &h) == 0 && h.tag == 100 + i && h.status == 0 &&
		     h.len == PAGE && wire_recv(fd, back, PAGE, NULL) == 0 &&
		     !memcmp(back, pages + i * PAGE, PAGE);
	}
	tap_ok(ok, "16 pipelined READs answered in order with their tags");

	/* Malformed headers close only their own connection. */
	fd2 = conn();
	{
		uint8_t junk[WIRE_HDR_SIZE];

		memset(junk, 0xa5, sizeof(junk));
		ok = fd2 >= 0 && send(fd2, junk, sizeof(junk), MSG_NOSIGNAL) == sizeof(junk) &&
		     closed_by_peer(fd2, &st) && st == WIRE_E_PROTO;
	}
	tap_ok(ok, "garbage header: WIRE_E_PROTO and that connection closed");
	if (fd2 >= 0)
		close(fd2);
	tap_ok(rpc(fd, WIRE_OP_PING, 0, 0, NULL, 15) == 0,
	       "the first connection is unaffected");

	fd2 = conn();
	h = wire_req(WIRE_OP_PING, 0, 0, 1);
	h.version = 99;
	ok = fd2 >= 0 && send_hdr(fd2, h, NULL) == 0 && closed_by_peer(fd2, &st) &&
	     st == WIRE_E_VERSION;
	if (fd2 >= 0)
		close(fd2);
	fd2 = conn();
	ok &= fd2 >= 0 && send_hdr(fd2, wire_req(77, 0, 0, 1), NULL) == 0 &&
	      closed_by_peer(fd2, &st) && st == WIRE_E_PROTO;
	if (fd2 >= 0)
		close(fd2);
	fd2 = conn();
	ok &= fd2 >= 0 && send_hdr(fd2, wire_req(WIRE_OP_PING, 8, 0, 1), NULL) == 0 &&
	      closed_by_peer(fd2, &st) && st == WIRE_E_PROTO;
	if (fd2 >= 0)
		close(fd2);
	tap_ok(ok, "bad version, unknown op, PING with payload: error and close");

	fd2 = conn();
	ok = fd2 >= 0;
	if (ok) {
		/* A header dribbled in 3 pieces is still one header. */
		uint8_t buf[WIRE_HDR_SIZE];
		struct wire_hdr p = wire_req(WIRE_OP_PING, 0, 0, 77);

		wire_hdr_encode(buf, &p);
		ok = send(fd2, buf, 5, 0) == 5;
		usleep(20000);
		ok &= send(fd2, buf + 5, 20, 0) == 20;
		usleep(20000);
		ok &= send(fd2, buf + 25, 7, 0) == 7;
		ok &= recv_hdr(fd2, &p) == 0 && p.tag == 77 && p.status == 0;
		close(fd2);
	}
	tap_ok(ok, "a header sent in pieces is served");

	/* Two clients at once on disjoint regions. */
	for (i = 0; i < 2; i++) {
		w[i].base = i * 8 * MiB;
		pthread_create(&t[i], NULL, worker_main, &w[i]);
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	tap_ok(w[0].ok && w[1].ok,
	       "two clients at once: 200 write/read/compare rounds each");
	close(fd);
	free(pages);
	free(back);
	free(zero);
	return tap_done();
}

// SPDX-License-Identifier: GPL-2.0
/*
 * test-wire - wire_send_lent(), the zero-copy send of wire.c, over a TCP
 * connection on 127.0.0.1.
 *
 * Checks the bytes received against the bytes lent: a 1 MB payload, a
 * 3 MB one (more than the pipe holds), a payload of 4 KB pieces at an odd
 * offset, many messages back to back on one pipe; the copy fallback when
 * no pipe can be made; and a peer that has closed: an error, not SIGPIPE
 * (SIGPIPE keeps its default action here, which would kill the test).
 * TAP.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include "tap.h"
#include "wire.h"

#define KiB (1024u)
#define MiB (1024u * 1024u)

struct rx {
	int fd;
	size_t len;
	uint8_t *buf;
	int r;
};

static void *rx_main(void *arg)
{
	struct rx *x = arg;

	x->r = wire_recv(x->fd, x->buf, x->len, NULL);
	return NULL;
}

/* A connected pair of TCP sockets on 127.0.0.1: 0 or -1. */
static int tcp_pair(int fd[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &alen))
		return -1;
	fd[0] = socket(AF_INET, SOCK_STREAM, 0);
	if (fd[0] < 0 || connect(fd[0], (struct sockaddr *)&a, sizeof(a)))
		return -1;
	fd[1] = accept(l, NULL, NULL);
	close(l);
	return fd[1] < 0 ? -1 : 0;
}

/*
 * Send N messages (HDR + LEN bytes from SRC) on a fresh connection with
 * pipe P while a thread receives them; 1 if every byte arrived intact.
 */
static int round_trip(struct wire_pipe *p, const uint8_t *src, size_t len,
		      int n)
{
	static const char hdr[WIRE_HDR_SIZE] = "header of a message";
	size_t msg = sizeof(hdr) + len;
	struct rx x = { .len = msg * (size_t)n };
	pthread_t t;
	int fd[2], i, r = 0, ok = 1;

	if (tcp_pair(fd))
		return 0;
	x.fd = fd[1];
	x.buf = malloc(x.len);
	pthread_create(&t, NULL, rx_main, &x);
	for (i = 0; i < n && !r; i++)
		r = wire_send_lent(fd[0], p, hdr, sizeof(hdr), src, len);
	pthread_join(t, NULL);
	for (i = 0; i < n; i++)
		ok &= !memcmp(x.buf + msg * (size_t)i, hdr, sizeof(hdr)) &&
		      !memcmp(x.buf + msg * (size_t)i + sizeof(hdr), src, len);
	if (r || x.r)
		tap_diag("send %d, receive %d", r, x.r);
	free(x.buf);
	close(fd[0]);
	close(fd[1]);
	return ok && !r && !x.r;
}

int main(void)
{
	struct wire_pipe p = WIRE_PIPE_INIT, q = WIRE_PIPE_INIT;
	uint8_t *src = aligned_alloc(4096, 4 * MiB);
	struct rlimit rl, none;
	char hdr[WIRE_HDR_SIZE] = "x";
	int fd[2], r;
	size_t i;

	for (i = 0; i < 4 * MiB; i++)
		src[i] = (uint8_t)(i * 2654435761u >> 13);
	tap_plan(7);

	tap_ok(round_trip(&p, src, MiB, 1) && p.fd[0] >= 0 && !p.broken,
	       "a 1 MB payload lent through a pipe arrives intact");
	tap_ok(round_trip(&p, src, 3 * MiB, 1),
	       "a 3 MB payload (more than the pipe holds) arrives intact");
	tap_ok(round_trip(&p, src + 4 * KiB + 100, 12 * KiB + 5, 1),
	       "a payload not page aligned, of odd length, arrives intact");
	tap_ok(round_trip(&p, src, 256 * KiB, 40),
	       "40 messages back to back on one pipe arrive intact, in order");
	tap_ok(round_trip(&p, src, 0, 3),
	       "header-only messages (no payload) go out too");

	/* No file descriptors left for a pipe: the copy fallback. */
	getrlimit(RLIMIT_NOFILE, &rl);
	r = tcp_pair(fd);
	none = rl;
	none.rlim_cur = (rlim_t)(fd[1] + 1);
	setrlimit(RLIMIT_NOFILE, &none);
	if (!r) {
		struct rx x = { .fd = fd[1], .len = sizeof(hdr) + MiB };
		pthread_t t;

		x.buf = malloc(x.len);
		pthread_create(&t, NULL, rx_main, &x);
		r = wire_send_lent(fd[0], &q, hdr, sizeof(hdr), src, MiB);
		pthread_join(t, NULL);
		r = r || x.r || memcmp(x.buf + sizeof(hdr), src, MiB);
		free(x.buf);
		close(fd[0]);
		close(fd[1]);
	}
	setrlimit(RLIMIT_NOFILE, &rl);
	tap_ok(!r && q.broken && q.fd[0] < 0,
	       "no pipe can be made (RLIMIT_NOFILE): sent by copy, intact");

	/* The peer has gone: an error, and this process lives on. */
	signal(SIGPIPE, SIG_DFL);
	r = tcp_pair(fd);
	if (!r) {
		close(fd[1]);
		for (i = 0; i < 64 && !r; i++)
			r = wire_send_lent(fd[0], &p, hdr, sizeof(hdr), src, MiB);
		close(fd[0]);
	}
	tap_ok(r == -EPIPE || r == -ECONNRESET,
	       "sending to a closed peer fails (%s) without SIGPIPE",
	       strerror(-r));
	wire_pipe_close(&p);
	free(src);
	return tap_done();
}

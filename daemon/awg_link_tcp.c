// SPDX-License-Identifier: GPL-2.0
/*
 * awg_link_tcp.c - awgstard's TCP links: a message is a 32-bit length
 * (host order: both ends are the same program on the same kind of
 * machine, checked by the hello's magic) followed by that many bytes.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "awg_link.h"

struct tcp_link {
	struct awg_link l;
	int fd;
};

/* Exactly len bytes, within the deadline (-1: none). */
static int io_all(int fd, void *buf, size_t len, int out, long long deadline)
{
	char *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = out ? POLLOUT : POLLIN };
		int left = deadline < 0 ? -1 : (int)(deadline - awg_now_ms());
		ssize_t n;

		if (deadline >= 0 && left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, left) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!pfd.revents)
			continue;
		n = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (!n)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int tcp_send(struct awg_link *l, const void *buf, uint32_t len)
{
	struct tcp_link *t = (struct tcp_link *)l;
	int r = io_all(t->fd, &len, sizeof(len), 1, -1);

	return r ? r : io_all(t->fd, (void *)buf, len, 1, -1);
}

/*
 * The timeout bounds the wait for a message to begin.  Once its first byte
 * is here the rest is read whatever it takes (up to a minute): giving up
 * halfway would leave the stream out of step, the next length garbage.
 */
static int tcp_recv(struct awg_link *l, void *buf, uint32_t cap, uint32_t *len,
		    int timeout_ms)
{
	struct tcp_link *t = (struct tcp_link *)l;
	struct pollfd pfd = { .fd = t->fd, .events = POLLIN };
	long long deadline;
	uint32_t n;
	int r;

	r = poll(&pfd, 1, timeout_ms);
	if (r < 0)
		return errno == EINTR ? -ETIMEDOUT : -errno;
	if (!r)
		return -ETIMEDOUT;
	deadline = awg_now_ms() + 60000;
	/* *len only changes on success: the peer's length is not trusted. */
	r = io_all(t->fd, &n, sizeof(n), 0, deadline);
	if (!r && n > cap)
		r = -EMSGSIZE;
	if (!r)
		r = io_all(t->fd, buf, n, 0, deadline);
	if (!r)
		*len = n;
	/* Out of step now: the link cannot be used again. */
	return r == -ETIMEDOUT ? -EPROTO : r;
}

static void tcp_close(struct awg_link *l)
{
	struct tcp_link *t = (struct tcp_link *)l;

	close(t->fd);
	free(t);
}

static const struct awg_link_ops tcp_ops = {
	.send = tcp_send,
	.recv = tcp_recv,
	.close = tcp_close,
};

static struct awg_link *tcp_link_new(int fd)
{
	struct tcp_link *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->l.ops = &tcp_ops;
	t->fd = fd;
	net_peer_str(fd, t->l.peer, sizeof(t->l.peer));
	return &t->l;
}

int awg_tcp_listen(const struct netaddr *a, struct awg_listener *ls,
		   char *err, size_t errlen)
{
	ls->fd = net_listen(a, NULL, 0, err, errlen);
	return ls->fd < 0 ? -EADDRNOTAVAIL : 0;
}

int awg_tcp_accept(struct awg_listener *ls, int timeout_ms,
		   struct awg_link **out, struct awg_hello *hello, char *err,
		   size_t errlen)
{
	struct pollfd pfd = { .fd = ls->fd, .events = POLLIN };
	struct awg_link *l;
	int fd, r;

	r = poll(&pfd, 1, timeout_ms);
	if (r <= 0) {
		snprintf(err, errlen, "no node joined within %d ms", timeout_ms);
		return r ? -errno : -ETIMEDOUT;
	}
	fd = accept4(ls->fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "accept: %s", strerror(errno));
		return -errno;
	}
	net_tune(fd);
	l = tcp_link_new(fd);
	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	/* Counted from the connection: the wait for it may have been long. */
	r = io_all(fd, hello, sizeof(*hello), 0,
		   awg_now_ms() + AWG_HELLO_TIMEOUT_MS);
	if (r) {
		/* That peer only: the listener goes on. */
		snprintf(err, errlen, "%s: no hello: %s", l->peer, strerror(-r));
		l->ops->close(l);
		return -EAGAIN;
	}
	*out = l;
	return 0;
}

int awg_tcp_connect(const struct netaddr *a, const struct awg_hello *hello,
		    int timeout_ms, struct awg_link **out, char *err,
		    size_t errlen)
{
	struct awg_link *l;
	int fd, r;

	fd = net_connect(a, timeout_ms, err, errlen);
	if (fd < 0)
		return -ECONNREFUSED;
	l = tcp_link_new(fd);
	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	r = io_all(fd, (void *)hello, sizeof(*hello), 1, awg_now_ms() + timeout_ms);
	if (r) {
		snprintf(err, errlen, "%s: cannot send the hello: %s", l->peer,
			 strerror(-r));
		l->ops->close(l);
		return r;
	}
	*out = l;
	return 0;
}

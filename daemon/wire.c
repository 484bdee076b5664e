// SPDX-License-Identifier: GPL-2.0
/*
 * wire.c - I/O helpers and names for the memserver protocol (wire.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* vmsplice, splice, F_SETPIPE_SZ */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"

/* A pipe of this size holds a 1 MB DLM page: one vmsplice, one splice. */
#define WIRE_PIPE_SIZE	(1 << 20)

const char *wire_status_str(uint32_t status)
{
	switch (status) {
	case WIRE_OK:
		return "ok";
	case WIRE_E_RANGE:
		return "out of range";
	case WIRE_E_TOOBIG:
		return "request too big";
	case WIRE_E_PROTO:
		return "malformed header";
	case WIRE_E_VERSION:
		return "protocol version not spoken";
	}
	return "unknown status";
}

const char *wire_op_str(uint16_t op)
{
	switch (op & ~WIRE_OP_REPLY) {
	case WIRE_OP_HELLO:
		return "hello";
	case WIRE_OP_READ:
		return "read";
	case WIRE_OP_WRITE:
		return "write";
	case WIRE_OP_PING:
		return "ping";
	case WIRE_OP_BYE:
		return "bye";
	}
	return "unknown";
}

int wire_sendv(int fd, struct iovec *iov, int iovcnt)
{
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = (size_t)iovcnt };
	ssize_t n;

	while (msg.msg_iovlen) {
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* Skip what went out; resume inside a partly sent iovec. */
		while (msg.msg_iovlen && (size_t)n >= msg.msg_iov->iov_len) {
			n -= (ssize_t)msg.msg_iov->iov_len;
			msg.msg_iov++;
			msg.msg_iovlen--;
		}
		if (msg.msg_iovlen) {
			msg.msg_iov->iov_base = (char *)msg.msg_iov->iov_base + n;
			msg.msg_iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

int wire_recv(int fd, void *buf, size_t len, size_t *got)
{
	size_t done = 0;
	ssize_t n;
	int ret = 0;

	while (done < len) {
		n = recv(fd, (char *)buf + done, len - done, MSG_WAITALL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (n == 0) {
			ret = -ECONNRESET;
			break;
		}
		done += (size_t)n;
	}
	if (got)
		*got = done;
	return ret;
}

int wire_discard(int fd, uint64_t len)
{
	char sink[65536];
	size_t chunk;
	int ret;

	while (len) {
		chunk = len < sizeof(sink) ? (size_t)len : sizeof(sink);
		ret = wire_recv(fd, sink, chunk, NULL);
		if (ret)
			return ret;
		len -= chunk;
	}
	return 0;
}

void wire_pipe_close(struct wire_pipe *p)
{
	if (p->fd[0] >= 0) {
		close(p->fd[0]);
		close(p->fd[1]);
	}
	p->fd[0] = p->fd[1] = -1;
}

static int send_all(int fd, const void *buf, size_t len, int flags)
{
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, flags | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf = (const char *)buf + n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Move the N bytes in P's pipe to socket FD (MORE: more of the message
 * follows).  splice() has no MSG_NOSIGNAL: SIGPIPE is blocked meanwhile
 * and one it raised is taken back, so that, like the other helpers, this
 * never raises it.
 */
static int drain(int fd, struct wire_pipe *p, size_t n, int more)
{
	static const struct timespec zero;
	sigset_t pipe_set, old_mask, pending;
	int r = 0, was_pending;
	ssize_t m;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);
	while (n) {
		m = splice(p->fd[0], NULL, fd, NULL, n,
			   SPLICE_F_MOVE | (more ? SPLICE_F_MORE : 0));
		if (m < 0 && errno == EINTR)
			continue;
		if (m <= 0) {
			r = m < 0 ? -errno : -EPIPE;
			break;
		}
		n -= (size_t)m;
	}
	if (r == -EPIPE && !was_pending)
		sigtimedwait(&pipe_set, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	return r;
}

int wire_send_lent(int fd, struct wire_pipe *p, const void *hdr,
		   size_t hlen, const void *buf, size_t len)
{
	struct iovec iov[2] = {
		{ .iov_base = (void *)hdr, .iov_len = hlen },
		{ .iov_base = (void *)buf, .iov_len = len },
	};
	size_t off = 0;
	ssize_t n;
	int r;

	if (len && !p->broken && p->fd[0] < 0) {
		if (pipe2(p->fd, O_CLOEXEC)) {
			p->fd[0] = p->fd[1] = -1;
			p->broken = 1;
		} else {
			/* Best effort: a smaller pipe takes more rounds. */
			fcntl(p->fd[1], F_SETPIPE_SZ, WIRE_PIPE_SIZE);
		}
	}
	if (!len || p->broken)
		return wire_sendv(fd, iov, len ? 2 : 1);

	/* The header first, held back for the payload right behind it. */
	r = send_all(fd, hdr, hlen, MSG_MORE);
	while (!r && off < len) {
		iov[1].iov_base = (char *)buf + off;
		iov[1].iov_len = len - off;
		n = vmsplice(p->fd[1], &iov[1], 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* Memory that cannot be lent: copy, from now on. */
			p->broken = 1;
			wire_pipe_close(p);
			return wire_sendv(fd, &iov[1], 1);
		}
		r = drain(fd, p, (size_t)n, off + (size_t)n < len);
		off += (size_t)n;
	}
	if (r)
		wire_pipe_close(p);	/* it may still hold pages */
	return r;
}

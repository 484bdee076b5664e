// SPDX-License-Identifier: GPL-2.0
/*
 * wire.c - I/O helpers and names for the memserver protocol (wire.h).
 */
#include <errno.h>
#include <sys/socket.h>

#include "wire.h"

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

// SPDX-License-Identifier: GPL-2.0
/*
 * netaddr.c - HOST:PORT parsing and TCP socket setup.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netaddr.h"

const char *netaddr_parse(const char *s, struct netaddr *a, int allow_port0)
{
	const char *colon, *host = s, *p;
	size_t hostlen;
	unsigned long port;
	char *end;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close)
			return "'[' without ']' around an IPv6 address";
		if (close[1] != ':')
			return "missing :PORT after ']'";
		host = s + 1;
		hostlen = (size_t)(close - host);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return "missing :PORT";
		hostlen = (size_t)(colon - s);
		if (memchr(s, ':', hostlen))
			return "an IPv6 address needs brackets: [ADDR]:PORT";
	}
	if (hostlen == 0)
		return "empty host before :PORT";
	if (hostlen >= sizeof(a->host))
		return "host name too long";
	p = colon + 1;
	if (*p < '0' || *p > '9')
		return "PORT must be a number 1-65535";
	errno = 0;
	port = strtoul(p, &end, 10);
	if (errno || *end || port > 65535 || strlen(p) > 5)
		return "PORT must be a number 1-65535";
	if (port == 0 && !allow_port0)
		return "PORT must be a number 1-65535";
	memcpy(a->host, host, hostlen);
	a->host[hostlen] = '\0';
	snprintf(a->port, sizeof(a->port), "%lu", port);
	return NULL;
}

char *netaddr_str(const struct netaddr *a, char *buf, size_t len)
{
	if (strchr(a->host, ':'))
		snprintf(buf, len, "[%s]:%s", a->host, a->port);
	else
		snprintf(buf, len, "%s:%s", a->host, a->port);
	return buf;
}

static char *sockaddr_str(const struct sockaddr *sa, socklen_t salen,
			  char *buf, size_t len)
{
	char host[NI_MAXHOST], serv[NI_MAXSERV];

	if (getnameinfo(sa, salen, host, sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV)) {
		snprintf(buf, len, "?");
		return buf;
	}
	if (sa->sa_family == AF_INET6)
		snprintf(buf, len, "[%s]:%s", host, serv);
	else
		snprintf(buf, len, "%s:%s", host, serv);
	return buf;
}

char *net_peer_str(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &sl)) {
		snprintf(buf, len, "?");
		return buf;
	}
	return sockaddr_str((struct sockaddr *)&ss, sl, buf, len);
}

void net_tune(int fd)
{
	int one = 1, buf = NET_SOCKBUF;

	/* Best effort: the kernel caps buffers at net.core.[rw]mem_max. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
}

static struct addrinfo *resolve(const struct netaddr *a, int passive,
				char *err, size_t errlen)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = passive ? AI_PASSIVE : 0,
	};
	struct addrinfo *res = NULL;
	int r = getaddrinfo(a->host, a->port, &hints, &res);

	if (r) {
		snprintf(err, errlen, "cannot resolve %s: %s", a->host,
			 gai_strerror(r));
		return NULL;
	}
	return res;
}

int net_listen(const struct netaddr *a, char *bound, size_t boundlen,
	       char *err, size_t errlen)
{
	struct addrinfo *res, *ai;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = -1, one = 1, e = 0, buf = NET_SOCKBUF;

	res = resolve(a, 1, err, errlen);
	if (!res)
		return -1;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		/* Accepted sockets inherit buffer sizes (window scaling). */
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 64))
			break;
		e = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		char s[NETADDR_STR_MAX];

		snprintf(err, errlen, "cannot listen on %s: %s%s",
			 netaddr_str(a, s, sizeof(s)), strerror(e),
			 e == EADDRINUSE ? " (another program uses the port: pick another)" :
			 e == EADDRNOTAVAIL ? " (not an address of this machine)" : "");
		return -1;
	}
	if (bound) {
		if (getsockname(fd, (struct sockaddr *)&ss, &sl))
			snprintf(bound, boundlen, "?");
		else
			sockaddr_str((struct sockaddr *)&ss, sl, bound, boundlen);
	}
	return fd;
}

static int connect_timeout(int fd, const struct sockaddr *sa, socklen_t sl,
			   int timeout_ms)
{
	int fl = fcntl(fd, F_GETFL), e = 0;
	socklen_t el = sizeof(e);
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int r;

	if (fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		return -errno;
	if (connect(fd, sa, sl) == 0)
		goto done;
	if (errno != EINPROGRESS)
		return -errno;
	do {
		r = poll(&p, 1, timeout_ms);
	} while (r < 0 && errno == EINTR);
	if (r == 0)
		return -ETIMEDOUT;
	if (r < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el))
		return -errno;
	if (e)
		return -e;
done:
	if (fcntl(fd, F_SETFL, fl))
		return -errno;
	return 0;
}

int net_connect(const struct netaddr *a, int timeout_ms, char *err,
		size_t errlen)
{
	struct addrinfo *res, *ai;
	int fd = -1, e = 0;

	res = resolve(a, 0, err, errlen);
	if (!res)
		return -1;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		net_tune(fd);
		e = -connect_timeout(fd, ai->ai_addr, ai->ai_addrlen,
				     timeout_ms);
		if (!e)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		char s[NETADDR_STR_MAX];

		snprintf(err, errlen, "cannot connect to %s: %s%s",
			 netaddr_str(a, s, sizeof(s)), strerror(e),
			 e == ECONNREFUSED ? " (is dlm-memserver running there?)" :
			 e == ETIMEDOUT ? " (host down or a firewall drops it)" : "");
	}
	return fd;
}

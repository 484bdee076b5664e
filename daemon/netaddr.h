/* SPDX-License-Identifier: GPL-2.0 */
/*
 * netaddr.h - HOST:PORT addresses and TCP socket setup.
 */
#ifndef DLM_NETADDR_H
#define DLM_NETADDR_H

#include <stddef.h>

#define NETADDR_HOST_MAX	256
#define NETADDR_STR_MAX		(NETADDR_HOST_MAX + 16)

struct netaddr {
	char host[NETADDR_HOST_MAX];	/* name, IPv4 or IPv6 (no brackets) */
	char port[8];			/* decimal */
};

/* Socket buffer size asked for on every data connection. */
#define NET_SOCKBUF		(4 << 20)

/*
 * Parse "HOST:PORT" or "[IPV6]:PORT" into A.  Port 0 is accepted only with
 * ALLOW_PORT0 (listen on any free port).  Returns NULL, or a description of
 * what is wrong ("missing :PORT", ...) for an error message.
 */
const char *netaddr_parse(const char *s, struct netaddr *a, int allow_port0);
/* "HOST:PORT", brackets around an IPv6 HOST; returns BUF. */
char *netaddr_str(const struct netaddr *a, char *buf, size_t len);

/*
 * TCP listener on A (SO_REUSEADDR); fd or -1 with ERR set.  The address
 * bound (port resolved when A says 0) goes to BOUND if non-NULL.
 */
int net_listen(const struct netaddr *a, char *bound, size_t boundlen,
	       char *err, size_t errlen);
/* TCP connection to A within TIMEOUT_MS, tuned (net_tune); fd or -1. */
int net_connect(const struct netaddr *a, int timeout_ms, char *err,
		size_t errlen);
/* TCP_NODELAY, NET_SOCKBUF buffers, keepalive. */
void net_tune(int fd);
/* "ADDR:PORT" of the peer of FD, into BUF. */
char *net_peer_str(int fd, char *buf, size_t len);

#endif /* DLM_NETADDR_H */

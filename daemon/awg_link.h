/* SPDX-License-Identifier: GPL-2.0 */
/*
 * awg_link.h - the links of awgstard: node 0 (the hub, the AWG router of
 * the star) holds one link to every other node and passes the token to each
 * in turn; a message is one whole token.  Two transports: TCP and RDMA
 * verbs (rdma_cm, two-sided SEND/RECV into registered buffers).
 */
#ifndef DLM_AWG_LINK_H
#define DLM_AWG_LINK_H

#include <stdint.h>

#include "netaddr.h"

#define AWG_HELLO_MAGIC		0x48475741U	/* "AWGH" */
#define AWG_HELLO_VERSION	1
/* A connection's hello must come within this (the hub listens on). */
#define AWG_HELLO_TIMEOUT_MS	5000

/* What a node says when it joins (TCP: first message; verbs: private data). */
struct awg_hello {
	uint32_t magic;
	uint32_t version;
	uint32_t node_id;
	uint32_t nodes;
};

struct awg_link;

/* CLOCK_MONOTONIC in milliseconds, for the links' deadlines. */
long long awg_now_ms(void);

struct awg_link_ops {
	/* 0, or -errno (the peer is gone). */
	int (*send)(struct awg_link *l, const void *buf, uint32_t len);
	/* One message into buf: 0 with *len, -ETIMEDOUT, -EMSGSIZE, -errno. */
	int (*recv)(struct awg_link *l, void *buf, uint32_t cap, uint32_t *len,
		    int timeout_ms);
	void (*close)(struct awg_link *l);
};

struct awg_link {
	const struct awg_link_ops *ops;
	uint32_t node;
	char peer[NETADDR_STR_MAX];
};


/* A listening endpoint of node 0 (transport internals). */
struct awg_listener {
	const char *transport;
	int fd;			/* tcp */
	void *priv;		/* verbs */
};

/*
 * transport "tcp" or "verbs".  Listen on A; accept one node within
 * timeout_ms: 0 with *out and its hello, -ETIMEDOUT, -EAGAIN when one
 * peer's connection failed (no hello within AWG_HELLO_TIMEOUT_MS; ERR
 * says why: accept again), -errno (ERR set).
 */
int awg_listen(const char *transport, const struct netaddr *a,
	       struct awg_listener *ls, char *err, size_t errlen);
int awg_accept(struct awg_listener *ls, int timeout_ms, uint32_t max_msg,
	       struct awg_link **out, struct awg_hello *hello, char *err,
	       size_t errlen);
void awg_listener_close(struct awg_listener *ls);
/* Join the hub at A with HELLO. */
int awg_connect(const char *transport, const struct netaddr *a,
		const struct awg_hello *hello, int timeout_ms, uint32_t max_msg,
		struct awg_link **out, char *err, size_t errlen);


int awg_tcp_listen(const struct netaddr *a, struct awg_listener *ls,
		   char *err, size_t errlen);
int awg_tcp_accept(struct awg_listener *ls, int timeout_ms,
		   struct awg_link **out, struct awg_hello *hello, char *err,
		   size_t errlen);
int awg_tcp_connect(const struct netaddr *a, const struct awg_hello *hello,
		    int timeout_ms, struct awg_link **out, char *err,
		    size_t errlen);

int awg_verbs_listen(const struct netaddr *a, struct awg_listener *ls,
		     char *err, size_t errlen);
int awg_verbs_accept(struct awg_listener *ls, int timeout_ms, uint32_t max_msg,
		     struct awg_link **out, struct awg_hello *hello, char *err,
		     size_t errlen);
int awg_verbs_connect(const struct netaddr *a, const struct awg_hello *hello,
		      int timeout_ms, uint32_t max_msg, struct awg_link **out,
		      char *err, size_t errlen);
void awg_verbs_listener_close(struct awg_listener *ls);

#endif /* DLM_AWG_LINK_H */

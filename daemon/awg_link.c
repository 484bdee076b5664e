// SPDX-License-Identifier: GPL-2.0
/*
 * awg_link.c - awgstard's choice of transport for its links.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "awg_link.h"

long long awg_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

#ifndef DLM_WITH_VERBS
static int no_verbs(char *err, size_t errlen)
{
	snprintf(err, errlen, "built without rdma-core: install libibverbs-dev and librdmacm-dev and rebuild, or use --transport tcp");
	return -EOPNOTSUPP;
}
#endif

int awg_listen(const char *transport, const struct netaddr *a,
	       struct awg_listener *ls, char *err, size_t errlen)
{
	ls->transport = transport;
	ls->fd = -1;
	if (!strcmp(transport, "tcp"))
		return awg_tcp_listen(a, ls, err, errlen);
#ifdef DLM_WITH_VERBS
	return awg_verbs_listen(a, ls, err, errlen);
#else
	return no_verbs(err, errlen);
#endif
}

int awg_accept(struct awg_listener *ls, int timeout_ms, uint32_t max_msg,
	       struct awg_link **out, struct awg_hello *hello, char *err,
	       size_t errlen)
{
	if (!strcmp(ls->transport, "tcp"))
		return awg_tcp_accept(ls, timeout_ms, out, hello, err, errlen);
#ifdef DLM_WITH_VERBS
	return awg_verbs_accept(ls, timeout_ms, max_msg, out, hello, err, errlen);
#else
	(void)max_msg;
	return no_verbs(err, errlen);
#endif
}

void awg_listener_close(struct awg_listener *ls)
{
	if (!strcmp(ls->transport, "tcp")) {
		if (ls->fd >= 0)
			close(ls->fd);
		ls->fd = -1;
		return;
	}
#ifdef DLM_WITH_VERBS
	awg_verbs_listener_close(ls);
#endif
}

int awg_connect(const char *transport, const struct netaddr *a,
		const struct awg_hello *hello, int timeout_ms, uint32_t max_msg,
		struct awg_link **out, char *err, size_t errlen)
{
	if (!strcmp(transport, "tcp"))
		return awg_tcp_connect(a, hello, timeout_ms, out, err, errlen);
#ifdef DLM_WITH_VERBS
	return awg_verbs_connect(a, hello, timeout_ms, max_msg, out, err, errlen);
#else
	(void)max_msg;
	return no_verbs(err, errlen);
#endif
}

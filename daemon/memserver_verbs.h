/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memserver_verbs.h - dlm-memserver's verbs transport (memserver_verbs.c).
 */
#ifndef DLM_MEMSERVER_VERBS_H
#define DLM_MEMSERVER_VERBS_H

#include <stdint.h>

#include "netaddr.h"

#ifdef DLM_WITH_VERBS
/*
 * Listen for dlmd's rdma_cm connections at ADDR to serve MEM (SIZE bytes)
 * by RDMA to at most MAX_CLIENTS at once; registers MEM now when ADDR is
 * one device's.  Returns the fd to poll (then call
 * memserver_verbs_event()), or -1 with the reason on stderr.
 */
int memserver_verbs_listen(const struct netaddr *addr, uint8_t *mem,
			   uint64_t size, unsigned int max_clients);
/* Handle the connection events waiting on the fd. */
void memserver_verbs_event(void);
/* Log the counters and this process's CPU time under MSG. */
void memserver_verbs_counters(const char *msg);
/* Disconnect every client, release the registrations and the listener. */
void memserver_verbs_stop(void);
#else
/* Built without rdma-core: --transport verbs is refused before these. */
static inline int memserver_verbs_listen(const struct netaddr *addr,
					 uint8_t *mem, uint64_t size,
					 unsigned int max_clients)
{
	(void)addr;
	(void)mem;
	(void)size;
	(void)max_clients;
	return -1;
}
static inline void memserver_verbs_event(void) {}
static inline void memserver_verbs_counters(const char *msg) { (void)msg; }
static inline void memserver_verbs_stop(void) {}
#endif

#endif /* DLM_MEMSERVER_VERBS_H */

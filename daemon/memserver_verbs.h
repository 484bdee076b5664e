/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memserver_verbs.h - dlm-memserver's verbs transport (memserver_verbs.c).
 */
#ifndef DLM_MEMSERVER_VERBS_H
#define DLM_MEMSERVER_VERBS_H

#include <stdint.h>

#include "netaddr.h"

/*
 * Listen for dlmd's rdma_cm connections at ADDR and serve MEM (SIZE
 * bytes) by RDMA until SIGTERM or SIGINT arrives on the signalfd SFD
 * (SIGUSR1 logs the counters).  Returns the exit status: 0 after a
 * signal, 1 when it cannot serve (the reason on stderr).
 */
int memserver_verbs_serve(const struct netaddr *addr, uint8_t *mem,
			  uint64_t size, int sfd);

#endif /* DLM_MEMSERVER_VERBS_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * verbs_util.h - rdma-core helpers shared by dlmd's verbs transport and
 * dlm-memserver --transport verbs: device checks, rdma_cm events with a
 * deadline, and error texts that name the fix.
 */
#ifndef DLM_VERBS_UTIL_H
#define DLM_VERBS_UTIL_H

#include <stddef.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "netaddr.h"

/* Hint for when no RDMA device can be used. */
#define VERBS_NODEV_HINT \
	"load an RDMA driver, e.g. soft-RoCE: modprobe rdma_rxe; " \
	"rdma link add rxe0 type rxe netdev IFACE; check with ibv_devices"

/* 0 when at least one RDMA device exists, else -ENODEV with ERR set. */
int verbs_check_devices(char *err, size_t errlen);

/* A's address for rdma_cm (numeric or by name; "%IFACE" scopes IPv6). */
int verbs_sockaddr(const struct netaddr *a, struct sockaddr_storage *ss,
		   char *err, size_t errlen);

/*
 * Wait up to TIMEOUT_MS (-1: forever) for the next event on EC; 0 with
 * *EV set (rdma_ack_cm_event() it), -ETIMEDOUT, or -errno.
 */
int verbs_next_event(struct rdma_event_channel *ec, int timeout_ms,
		     struct rdma_cm_event **ev);

/*
 * After ibv_reg_mr() of LEN bytes failed with ERRNUM: what to do about
 * it, for a message ("raise the locked-memory limit ...").
 */
const char *verbs_reg_hint(int errnum);

/* Device capabilities dlm needs: 0, or -EOPNOTSUPP with ERR set. */
int verbs_check_caps(struct ibv_context *ctx, struct ibv_device_attr *attr,
		     char *err, size_t errlen);

#endif /* DLM_VERBS_UTIL_H */

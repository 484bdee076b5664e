// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_util.c - rdma-core helpers shared by both ends of the verbs
 * transport (see verbs_util.h).
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "verbs_util.h"

int verbs_check_devices(char *err, size_t errlen)
{
	struct ibv_device **list;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (!list) {
		snprintf(err, errlen, "no RDMA device (%s): %s",
			 errno == ENOSYS ? "no RDMA driver is loaded" :
			 strerror(errno), VERBS_NODEV_HINT);
		return -ENODEV;
	}
	ibv_free_device_list(list);
	if (n <= 0) {
		snprintf(err, errlen, "no RDMA device: %s", VERBS_NODEV_HINT);
		return -ENODEV;
	}
	return 0;
}

int verbs_sockaddr(const struct netaddr *a, struct sockaddr_storage *ss,
		   char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	int r;

	r = getaddrinfo(a->host, a->port, &hints, &res);
	if (r) {
		snprintf(err, errlen, "cannot resolve %s: %s", a->host,
			 gai_strerror(r));
		return -EINVAL;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

int verbs_next_event(struct rdma_event_channel *ec, int timeout_ms,
		     struct rdma_cm_event **ev)
{
	struct pollfd p = { .fd = ec->fd, .events = POLLIN };
	struct timespec t0, t1;
	int left = timeout_ms, r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		r = poll(&p, 1, left);
		if (r > 0)
			break;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
		if (timeout_ms >= 0) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			left = timeout_ms - (int)((t1.tv_sec - t0.tv_sec) * 1000 +
				(t1.tv_nsec - t0.tv_nsec) / 1000000);
			if (left <= 0)
				return -ETIMEDOUT;
		}
	}
	if (rdma_get_cm_event(ec, ev))
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	return 0;
}

const char *verbs_reg_hint(int errnum)
{
	switch (errnum) {
	case ENOMEM:
	case EPERM:
	case EAGAIN:
		return "raise the locked-memory limit (ulimit -l unlimited, or LimitMEMLOCK=infinity in a systemd unit), grant CAP_IPC_LOCK, or use less memory";
	case EFAULT:
		return "the memory cannot be pinned for DMA (a kernel or driver limit)";
	case EINVAL:
	case EOPNOTSUPP:
		return "the RDMA device refuses a region this large or these access rights; check ibv_devinfo -v (max_mr_size)";
	}
	return "check dmesg and ibv_devinfo -v";
}

int verbs_check_caps(struct ibv_context *ctx, struct ibv_device_attr *attr,
		     char *err, size_t errlen)
{
	const char *name = ibv_get_device_name(ctx->device);

	if (ibv_query_device(ctx, attr)) {
		snprintf(err, errlen, "%s: cannot query the device: %s", name,
			 strerror(errno));
		return -errno;
	}
	if (attr->max_qp_rd_atom < 1 || attr->max_qp_init_rd_atom < 1) {
		snprintf(err, errlen, "%s: the device cannot serve RDMA READ (max_qp_rd_atom=%d max_qp_init_rd_atom=%d): use a device that can (ibv_devinfo -v)",
			 name, attr->max_qp_rd_atom, attr->max_qp_init_rd_atom);
		return -EOPNOTSUPP;
	}
	if (attr->max_qp_wr < 2 || attr->max_cqe < 2) {
		snprintf(err, errlen, "%s: the device's queues are too small (max_qp_wr=%d max_cqe=%d)",
			 name, attr->max_qp_wr, attr->max_cqe);
		return -EOPNOTSUPP;
	}
	return 0;
}

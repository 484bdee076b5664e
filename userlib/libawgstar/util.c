// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * util.c - the system call wrapper, range checks and the clock the other
 * files share.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/ioctl.h>
#include <time.h>

#include "internal.h"

int awglib_ioctl(struct awg_handle *h, unsigned long req, void *arg)
{
	int rc;

	do {
		rc = ioctl(h->fd, req, arg);
	} while (rc < 0 && errno == EINTR);
	return rc < 0 ? -1 : 0;
}

int awglib_range(struct awg_handle *h, uint64_t offset, uint64_t len)
{
	if (!h || offset > h->size || len > h->size - offset) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int awglib_info(struct awg_handle *h, struct awg_info *info)
{
	if (!h || !info) {
		errno = EINVAL;
		return -1;
	}
	return awglib_ioctl(h, AWG_IOC_GET_INFO, info);
}

uint64_t awglib_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

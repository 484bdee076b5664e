// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * open.c - awg_open (device, handshake, mapping) and awg_close.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

static const char *awglib_device(const char *device)
{
	const char *env;

	if (device)
		return device;
	env = getenv("AWG_DEVICE");
	return env && *env ? env : AWGLIB_DEV;
}

AWGLIB_PUBLIC int awg_open(const char *device, struct awg_handle **handle)
{
	struct awg_api api = { .api = AWG_API_VERSION, .features = 0 };
	struct awg_info info;
	struct awg_handle *h;
	int err;

	if (!handle) {
		errno = EINVAL;
		return -1;
	}
	*handle = NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -1;	/* ENOMEM */
	h->map = MAP_FAILED;
	h->fd = open(awglib_device(device), O_RDWR | O_CLOEXEC);
	if (h->fd < 0)
		goto fail;
	/* A kernel without AWG_IOC_API, or one that refuses it: too old. */
	if (awglib_ioctl(h, AWG_IOC_API, &api) < 0) {
		if (errno == ENOTTY || errno == EPERM)
			errno = EPROTONOSUPPORT;
		goto fail;
	}
	if (api.api < AWG_API_VERSION) {
		errno = EPROTONOSUPPORT;
		goto fail;
	}
	if (awglib_ioctl(h, AWG_IOC_GET_INFO, &info) < 0)
		goto fail;
	if (info.size == 0 || info.size > SIZE_MAX) {
		errno = EINVAL;
		goto fail;
	}
	h->size = info.size;
	h->map = mmap(NULL, h->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      h->fd, 0);
	if (h->map == MAP_FAILED)
		goto fail;
	h->dma_threshold = 0;
	*handle = h;
	return 0;

fail:
	err = errno;
	if (h->fd >= 0)
		close(h->fd);
	free(h);
	errno = err;
	return -1;
}

AWGLIB_PUBLIC int awg_close(struct awg_handle **handle)
{
	struct awg_handle *h;
	int err = 0;

	if (!handle || !*handle) {
		errno = EINVAL;
		return -1;
	}
	h = *handle;
	*handle = NULL;
	/* Stores through the mapping would otherwise wait for a visit. */
	if (awg_flush(h) < 0)
		err = errno;
	if (munmap(h->map, h->size) < 0 && !err)
		err = errno;
	if (close(h->fd) < 0 && !err)
		err = errno;
	free(h);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

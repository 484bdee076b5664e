// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * xfer.c - awg_read and awg_write: the DMA path (AWG_IOC_READ/WRITE, in
 * pieces of AWG_XFER_MAX) from the DMA threshold on, a copy through the
 * mapping below it; the threshold.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* AWG_IOC_READ or AWG_IOC_WRITE of [offset, offset + len), in pieces. */
static int awglib_dma(struct awg_handle *h, unsigned long req, uint64_t offset,
		      void *buf, size_t len)
{
	struct awg_xfer x;
	size_t done = 0, n;

	while (done < len) {
		n = len - done;
		if (n > AWG_XFER_MAX)
			n = AWG_XFER_MAX;
		memset(&x, 0, sizeof(x));
		x.offset = offset + done;
		x.buf = (uintptr_t)((char *)buf + done);
		x.len = n;
		if (awglib_ioctl(h, req, &x) < 0)
			return -1;
		done += n;
	}
	return 0;
}

/* awg_write/awg_read's arguments: -1 (errno set), 0 (nothing to move), 1. */
static int awglib_xfer_check(struct awg_handle *h, uint64_t offset,
			     const void *buf, size_t len)
{
	if (awglib_range(h, offset, len) < 0)
		return -1;
	if (len == 0)
		return 0;
	if (!buf) {
		errno = EFAULT;
		return -1;
	}
	return 1;
}

AWGLIB_PUBLIC int awg_write(struct awg_handle *h, uint64_t offset,
			    const void *buf, size_t len)
{
	int ret = awglib_xfer_check(h, offset, buf, len);

	if (ret <= 0)
		return ret;
	if (len >= h->dma_threshold)
		return awglib_dma(h, AWG_IOC_WRITE, offset, (void *)buf, len);
	/* Pointer stores: published at the next token visit. */
	memcpy((char *)h->map + offset, buf, len);
	return 0;
}

AWGLIB_PUBLIC int awg_read(struct awg_handle *h, uint64_t offset, void *buf,
			   size_t len)
{
	int ret = awglib_xfer_check(h, offset, buf, len);

	if (ret <= 0)
		return ret;
	if (len >= h->dma_threshold)
		return awglib_dma(h, AWG_IOC_READ, offset, buf, len);
	memcpy(buf, (const char *)h->map + offset, len);
	return 0;
}

AWGLIB_PUBLIC int awg_set_dma_threshold(struct awg_handle *h, size_t bytes)
{
	if (!h) {
		errno = EINVAL;
		return -1;
	}
	h->dma_threshold = bytes;
	return 0;
}

AWGLIB_PUBLIC int awg_get_dma_threshold(struct awg_handle *h, size_t *bytes)
{
	if (!h || !bytes) {
		errno = EINVAL;
		return -1;
	}
	*bytes = h->dma_threshold;
	return 0;
}

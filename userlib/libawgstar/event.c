// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * event.c - the fence (awg_flush) and the board's network-wide
 * interrupts (awg_send_event, awg_wait_event).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "internal.h"

/* Longest single AWG_IOC_EVENT_WAIT of a wait without a time limit. */
#define AWGLIB_WAIT_FOREVER_SLICE_MS	3600000U

AWGLIB_PUBLIC int awg_flush(struct awg_handle *h)
{
	struct awg_flush f = { .timeout_ms = 0 };	/* the kernel's 10 s */

	if (!h) {
		errno = EINVAL;
		return -1;
	}
	return awglib_ioctl(h, AWG_IOC_FLUSH, &f);
}

AWGLIB_PUBLIC int awg_send_event(struct awg_handle *h, uint32_t node,
				 uint32_t id, uint32_t data)
{
	struct awg_event ev;

	/* The last id belongs to awg_barrier. */
	if (!h || id >= AWG_BARRIER_EVENT) {
		errno = EINVAL;
		return -1;
	}
	memset(&ev, 0, sizeof(ev));
	ev.node = node;
	ev.id = id;
	ev.data = data;
	return awglib_ioctl(h, AWG_IOC_EVENT_SEND, &ev);
}

int awglib_wait(struct awg_handle *h, uint32_t id, uint32_t timeout_ms,
		struct awg_event *ev)
{
	uint64_t end = awglib_now_ms() + timeout_ms, now;
	uint32_t left = timeout_ms;

	for (;;) {
		memset(ev, 0, sizeof(*ev));
		ev->id = id;
		ev->timeout_ms = left;
		if (ioctl(h->fd, AWG_IOC_EVENT_WAIT, ev) == 0)
			return 0;
		if (errno != EINTR)
			return -1;
		/* A signal: wait again for what is left (a poll stays one). */
		now = awglib_now_ms();
		if (timeout_ms && now >= end) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (timeout_ms)
			left = (uint32_t)(end - now);
	}
}

AWGLIB_PUBLIC int awg_wait_event(struct awg_handle *h, uint32_t id,
				 uint32_t *node, uint32_t *data, int timeout_ms)
{
	struct awg_event ev;
	int rc;

	/* Events of the last id are awg_barrier's: taking one would lose it. */
	if (!h || id >= AWG_BARRIER_EVENT) {
		errno = EINVAL;
		return -1;
	}
	if (timeout_ms >= 0) {
		rc = awglib_wait(h, id, (uint32_t)timeout_ms, &ev);
	} else {
		/* No time limit. */
		do {
			rc = awglib_wait(h, id, AWGLIB_WAIT_FOREVER_SLICE_MS, &ev);
		} while (rc < 0 && errno == ETIMEDOUT);
	}
	if (rc < 0)
		return -1;
	if (node)
		*node = ev.node;
	if (data)
		*data = ev.data;
	return 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * barrier.c - awg_barrier: a barrier of every live node through board
 * events, as on the board (no other channel between the nodes).
 *
 * Each node flushes its stores, sends event AWG_BARRIER_EVENT to
 * AWG_NODE_ALL and waits for that event from each other node of the live
 * mask (AWG_IOC_GET_INFO at the call): popcount(live_mask) - 1 events.
 * An event carries the sender's barrier number (the calls through its
 * handle, 1, 2, ...), so that the event of a node that already left
 * barrier k and entered k + 1 is kept for k + 1 rather than counted twice
 * in k (a node can be at most one barrier ahead: it cannot leave k + 1
 * before this node has entered it); events of other numbers (left over
 * from an earlier program) are dropped.  Since an event arrives after
 * every write its sender made before it, a node leaving the barrier sees
 * everything the others wrote before entering it.  A node that leaves the
 * ring while we wait is not waited for (the live mask is read again every
 * AWGLIB_BARRIER_SLICE_MS).  ETIMEDOUT after $AWG_BARRIER_TIMEOUT_MS.
 *
 * A failed call does not count.  One that failed before its event was
 * sent (the flush, the live mask, the send) has not entered the barrier:
 * the next call enters it, with the same number.  One that failed while
 * waiting leaves it open (h->bar_need, not 0): the next call flushes and waits
 * again for the nodes still missing, without sending a second event, so
 * a program may retry after ETIMEDOUT and stay in step with the others.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static uint32_t awglib_barrier_timeout_ms(void)
{
	const char *s = getenv("AWG_BARRIER_TIMEOUT_MS");
	unsigned long v;
	char *end;

	if (!s || !*s)
		return AWGLIB_BARRIER_TIMEOUT_MS;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > UINT32_MAX)
		return AWGLIB_BARRIER_TIMEOUT_MS;
	return (uint32_t)v;
}

/* The other live nodes, as a mask. */
static int awglib_others(struct awg_handle *h, uint32_t *mask)
{
	struct awg_info info;

	if (awglib_info(h, &info) < 0)
		return -1;
	*mask = info.live_mask;
	if (info.node_id < 32)
		*mask &= ~(1U << info.node_id);
	return 0;
}

/*
 * Enter barrier h->bar_seq + 1: tell the other live nodes.  Nothing is
 * recorded in @h until the event is out, so that a failure here leaves
 * the barrier for the next call to enter again.
 */
static int awglib_barrier_enter(struct awg_handle *h)
{
	uint32_t need, seq = h->bar_seq + 1;
	struct awg_event ev;

	if (awglib_others(h, &need) < 0)
		return -1;
	/* Alone on the ring: nobody to tell, nobody to wait for. */
	if (need) {
		memset(&ev, 0, sizeof(ev));
		ev.node = AWG_NODE_ALL;
		ev.id = AWG_BARRIER_EVENT;
		ev.data = seq;
		if (awglib_ioctl(h, AWG_IOC_EVENT_SEND, &ev) < 0)
			return -1;
	}
	h->bar_seq = seq;
	h->bar_need = need & ~h->bar_early;
	h->bar_early = 0;
	return 0;
}

AWGLIB_PUBLIC int awg_barrier(struct awg_handle *h)
{
	uint32_t live, slice, seq, timeout = awglib_barrier_timeout_ms();
	uint64_t start, now;
	struct awg_event ev;

	if (!h) {
		errno = EINVAL;
		return -1;
	}
	if (awg_flush(h) < 0)
		return -1;
	if (h->bar_need) {
		/* Resumed: nodes that left the ring meanwhile are not waited for. */
		if (awglib_others(h, &live) < 0)
			return -1;
		h->bar_need &= live;
	} else if (awglib_barrier_enter(h) < 0) {
		return -1;
	}
	seq = h->bar_seq;
	start = awglib_now_ms();
	while (h->bar_need) {
		now = awglib_now_ms();
		if (now - start >= timeout) {
			errno = ETIMEDOUT;
			return -1;
		}
		slice = timeout - (uint32_t)(now - start);
		if (slice > AWGLIB_BARRIER_SLICE_MS)
			slice = AWGLIB_BARRIER_SLICE_MS;
		if (awglib_wait(h, AWG_BARRIER_EVENT, slice, &ev) < 0) {
			if (errno != ETIMEDOUT && errno != EAGAIN)
				return -1;
			/* Nodes that left the ring are not waited for. */
			if (awglib_others(h, &live) < 0)
				return -1;
			h->bar_need &= live;
			continue;
		}
		if (ev.node >= 32)
			continue;
		if (ev.data == seq)
			h->bar_need &= ~(1U << ev.node);
		else if (ev.data == seq + 1)
			h->bar_early |= 1U << ev.node;
	}
	return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * internal.h - what the libawgstar source files share.  Not installed;
 * every name here starts with awglib_ (or AWGLIB_) and is hidden in
 * libawgstar.so and libawgstar.a.  Only the functions of <awgstar.h>,
 * defined with AWGLIB_PUBLIC, are exported.
 */
#ifndef AWGLIB_INTERNAL_H
#define AWGLIB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <linux/awgstar.h>

#include "awgstar.h"

#define AWGLIB_PUBLIC	__attribute__((visibility("default")))

#define AWGLIB_DEV			"/dev/awgstar"
#define AWGLIB_BARRIER_TIMEOUT_MS	60000
/* awg_barrier looks at the live mask again this often while it waits. */
#define AWGLIB_BARRIER_SLICE_MS		1000

/*
 * struct awg_handle - one open board.
 * @fd: the open /dev/awgstar file.
 * @map: the whole region, MAP_SHARED; @size its bytes.
 * @dma_threshold: awg_read/awg_write of at least this many bytes take the
 *	DMA path (AWG_IOC_READ/WRITE), shorter ones copy through @map.
 * @bar_seq: barriers entered through this handle; the barrier events
 *	carry it as their data.
 * @bar_need: the nodes whose event of barrier @bar_seq has not come yet.
 *	Not 0 between calls: a call failed while waiting, the barrier is
 *	still open and the next call resumes it.
 * @bar_early: nodes whose event of barrier @bar_seq + 1 arrived while
 *	this handle was still in barrier @bar_seq.
 */
struct awg_handle {
	int fd;
	void *map;
	uint64_t size;
	size_t dma_threshold;
	uint32_t bar_seq;
	uint32_t bar_need;
	uint32_t bar_early;
};

/* ioctl(2) on the board, again after EINTR; 0 or -1 with errno. */
int awglib_ioctl(struct awg_handle *h, unsigned long req, void *arg);
/*
 * 0 when [@offset, @offset + @len) lies in the region of @h, else -1 with
 * errno EINVAL (also for a NULL @h).
 */
int awglib_range(struct awg_handle *h, uint64_t offset, uint64_t len);
/* AWG_IOC_GET_INFO now. */
int awglib_info(struct awg_handle *h, struct awg_info *info);
/* Monotonic milliseconds. */
uint64_t awglib_now_ms(void);
/*
 * One wait for event @id of up to @timeout_ms (0: poll, EAGAIN), resumed
 * after a signal with the time left; the event in *@ev.  0 or -1, errno.
 */
int awglib_wait(struct awg_handle *h, uint32_t id, uint32_t timeout_ms,
		struct awg_event *ev);

#endif /* AWGLIB_INTERNAL_H */

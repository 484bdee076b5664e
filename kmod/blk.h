/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /dev/dlmbN internals shared by blk.c (the device) and blk_ra.c (its
 * read-ahead windows).
 */
#ifndef _DLMEM_BLK_H
#define _DLMEM_BLK_H

#include <linux/blk-mq.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "dlmem.h"

#define DLM_BLK_IO_PAGES	(DLM_BLK_IO_MAX >> PAGE_SHIFT)
#define DLM_BLK_RA_WINDOWS	8	/* read-ahead windows per device */
#define DLM_BLK_RA_STREAMS	8	/* sequential streams recognised */

/*
 * What a daemon request of a device completes (dlm_req.priv): a block
 * request's pdu or a read-ahead window.  @done runs with no locks held.
 */
struct dlm_blk_io {
	void (*done)(struct dlm_blk_io *io, int status);
};

/**
 * struct dlm_blk_range - a request's place in its device's overlap order
 * (blk_order.c), from just before it is sent until the daemon answers it.
 * @node: in dlm_blk.order, in arrival order.
 * @start: first device page.
 * @end: page after the last.
 * @write: it changes the pages (WRITE, DISCARD).
 */
struct dlm_blk_range {
	struct list_head node;
	u64 start;
	u64 end;
	bool write;
};

enum dlm_blk_ra_state {
	DLM_BLK_RA_FREE,	/* holds nothing */
	DLM_BLK_RA_FETCHING,	/* its READ is with the daemon */
	DLM_BLK_RA_VALID,	/* holds @pages pages from @start */
};

/**
 * struct dlm_blk_ra - one read-ahead window: pool pages holding a run of
 * the device's pages fetched ahead of the reads that want them.
 * @io: completes the window's READ.
 * @range: the READ's place in the overlap order while in flight.
 * @b: the device.
 * @slot: first pool page (relative to the block space's region).
 * @start: first device page held.
 * @pages: pages held.
 * @state: enum dlm_blk_ra_state.
 * @stale: a write or discard overlapped it: no read may start using it.
 * @hit: a read used it.
 * @users: reads waiting for it or copying out of it; it is not reused
 *	until they are done.
 * @waiters: block requests waiting for the READ (dlm_blk_cmd.ra_node).
 * @used: the device's ra_clock when last used (LRU).
 */
struct dlm_blk_ra {
	struct dlm_blk_io io;
	struct dlm_blk_range range;
	struct dlm_blk *b;
	unsigned long slot;
	u64 start;
	u32 pages;
	enum dlm_blk_ra_state state;
	bool stale;
	bool hit;
	unsigned int users;
	struct list_head waiters;
	u64 used;
};

/**
 * struct dlm_blk - one /dev/dlmbN.
 * @ref: the device list's reference, one per read-ahead READ in flight.
 * @index: N.
 * @sp: the block space (a reference).
 * @depth: tags per hardware queue.
 * @queues: hardware queues.
 * @tag_set: blk-mq tags; each tag owns DLM_BLK_IO_PAGES pages of the pool.
 * @disk: the gendisk.
 * @ra_lock: the read-ahead state below (taken from softirq completion).
 * @ra_pages: pages per read-ahead window; 0: no read-ahead.
 * @ra_clock: counts window uses.
 * @ra_ends: where the last reads of recent streams ended.
 * @ra_end_next: the @ra_ends entry to replace next.
 * @ra: the windows.
 * @ra_fetches: windows fetched.
 * @ra_hits: reads served from a window already fetched.
 * @ra_waits: reads served from a window still being fetched.
 * @ra_invalidated: windows made stale by a write or discard.
 * @ra_unused: windows reused without having served a read.
 * @order_lock: @order, @order_waits (taken from softirq completion).
 * @order: requests about to be sent or with the daemon, in arrival order.
 * @order_wait: requests waiting for an earlier overlapping one.
 * @order_waits: requests that had to wait.
 */
struct dlm_blk {
	struct kref ref;
	int index;
	struct dlm_space *sp;
	u32 depth;
	u32 queues;
	struct blk_mq_tag_set tag_set;
	struct gendisk *disk;

	spinlock_t ra_lock;		/* the ra_ fields, the windows */
	u32 ra_pages;
	u64 ra_clock;
	u64 ra_ends[DLM_BLK_RA_STREAMS];
	unsigned int ra_end_next;
	struct dlm_blk_ra ra[DLM_BLK_RA_WINDOWS];
	u64 ra_fetches;
	u64 ra_hits;
	u64 ra_waits;
	u64 ra_invalidated;
	u64 ra_unused;

	spinlock_t order_lock;		/* order, order_waits */
	struct list_head order;
	wait_queue_head_t order_wait;
	u64 order_waits;
};

/**
 * struct dlm_blk_cmd - per-request data.
 * @io: completes the request's own READ, WRITE or DISCARD.
 * @range: that READ's, WRITE's or DISCARD's place in the overlap order.
 * @status: how it ended.
 * @ra: the window this read is served from, or NULL.
 * @ra_node: in @ra's waiters while its READ is in flight.
 */
struct dlm_blk_cmd {
	struct dlm_blk_io io;
	struct dlm_blk_range range;
	blk_status_t status;
	struct dlm_blk_ra *ra;
	struct list_head ra_node;
};

/* blk.c */
void dlm_blk_copy(struct dlm_blk *b, struct request *rq, unsigned long slot,
		  bool to_pool);
void dlm_blk_put(struct dlm_blk *b);

/* blk_order.c */
void dlm_blk_order_init(struct dlm_blk *b);
void dlm_blk_order_begin(struct dlm_blk *b, struct dlm_blk_range *r,
			 u64 start, u64 n, bool write);
void dlm_blk_order_end(struct dlm_blk *b, struct dlm_blk_range *r);
extern struct device_attribute dev_attr_order_waits;

/* blk_ra.c */
extern unsigned int dlm_blk_readahead_kb;
extern const struct attribute_group *dlm_blk_groups[];
u32 dlm_blk_ra_window_pages(void);
void dlm_blk_ra_init(struct dlm_blk *b, unsigned long first_slot);
bool dlm_blk_ra_read(struct dlm_blk *b, struct request *rq);
void dlm_blk_ra_complete(struct dlm_blk *b, struct request *rq);
void dlm_blk_ra_invalidate(struct dlm_blk *b, struct request *rq);

#endif /* _DLMEM_BLK_H */

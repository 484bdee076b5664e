// SPDX-License-Identifier: GPL-2.0
/*
 * Overlap ordering for /dev/dlmbN: a READ, WRITE or DISCARD that overlaps
 * an earlier one of which at least one changes the pages is sent only
 * after the earlier one was answered.
 *
 * The block layer may have a read and a write of the same block in flight
 * at once; a disk returns the old or the new block, never a mixture.  Our
 * pages travel through dlmd to a memory server that sends a READ's
 * payload straight from its memory (lent to the socket, or read by RDMA)
 * while another connection may be receiving a WRITE into the same bytes,
 * so without this a read could return a block torn between two writes.
 * Overlapping requests are rare outside such races (a swap slot, a file
 * system block is not read while it is written), so waiting costs nothing
 * in the common case and reads never wait for reads.
 *
 * Each request (a block request's own, or a read-ahead window's READ)
 * joins the device's list in arrival order before it is sent and leaves
 * it when the daemon answers.  It is sent once no earlier entry that it
 * conflicts with is left, so conflicting requests go in arrival order and
 * a write is not starved by a stream of reads.  The wait is bounded: an
 * entry waits only for earlier ones, the first of which is with the
 * daemon.  No block request's timer can end it: the queue is
 * BLK_MQ_F_BLOCKING and blk-mq's timeout work first waits for every
 * ->queue_rq() in progress (synchronize_srcu()), this wait included.  So
 * the waiter looks at the requests' age itself (dlm_reqs_watchdog()):
 * after request_timeout_ms the daemon is declared gone, which answers
 * every request in flight with an error.
 *
 * Locking: order_lock (bh: answers may come from softirq) guards the list.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/sched.h>
#include <linux/sysfs.h>
#include <linux/wait.h>

#include "blk.h"

/* How often a request waiting in the order looks at the requests' age. */
#define DLM_BLK_ORDER_POLL	(HZ / 10)

void dlm_blk_order_init(struct dlm_blk *b)
{
	spin_lock_init(&b->order_lock);
	INIT_LIST_HEAD(&b->order);
	init_waitqueue_head(&b->order_wait);
}

static bool dlm_blk_conflict(const struct dlm_blk_range *a,
			     const struct dlm_blk_range *b)
{
	return (a->write || b->write) && a->start < b->end &&
	       b->start < a->end;
}

/* Is an earlier entry of @b's order in @r's way?  order_lock held. */
static bool dlm_blk_order_blocked(struct dlm_blk *b, struct dlm_blk_range *r)
{
	struct dlm_blk_range *e;

	list_for_each_entry(e, &b->order, node) {
		if (e == r)
			return false;
		if (dlm_blk_conflict(e, r))
			return true;
	}
	return false;
}

static bool dlm_blk_order_clear(struct dlm_blk *b, struct dlm_blk_range *r)
{
	bool blocked;

	spin_lock_bh(&b->order_lock);
	blocked = dlm_blk_order_blocked(b, r);
	spin_unlock_bh(&b->order_lock);
	return !blocked;
}

/*
 * Enter @r, covering @n pages from @start, into @b's order, and wait
 * until no earlier overlapping request that conflicts with it is left.
 * @write: it changes the pages.  Process context; may sleep.
 */
void dlm_blk_order_begin(struct dlm_blk *b, struct dlm_blk_range *r,
			 u64 start, u64 n, bool write)
{
	bool blocked;

	r->start = start;
	r->end = start + n;
	r->write = write;
	spin_lock_bh(&b->order_lock);
	list_add_tail(&r->node, &b->order);
	blocked = dlm_blk_order_blocked(b, r);
	if (blocked)
		b->order_waits++;
	spin_unlock_bh(&b->order_lock);
	if (!blocked)
		return;
	while (!wait_event_timeout(b->order_wait, dlm_blk_order_clear(b, r),
				   DLM_BLK_ORDER_POLL))
		dlm_reqs_watchdog("a block request waiting for an overlap");
}

/* @r was answered (or never sent): the requests behind it may go. */
void dlm_blk_order_end(struct dlm_blk *b, struct dlm_blk_range *r)
{
	spin_lock_bh(&b->order_lock);
	list_del_init(&r->node);
	spin_unlock_bh(&b->order_lock);
	/* Its barrier pairs with the waiter's set_current_state(). */
	if (wq_has_sleeper(&b->order_wait))
		wake_up_all(&b->order_wait);
}

/* /sys/block/dlmbN/dlmb/order_waits: requests that waited in the order. */
static ssize_t order_waits_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct dlm_blk *b = dev_to_disk(dev)->private_data;
	u64 v;

	spin_lock_bh(&b->order_lock);
	v = b->order_waits;
	spin_unlock_bh(&b->order_lock);
	return sysfs_emit(buf, "%llu\n", v);
}
DEVICE_ATTR_RO(order_waits);

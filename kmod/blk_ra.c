// SPDX-License-Identifier: GPL-2.0
/*
 * Read-ahead for /dev/dlmbN: a few windows of pool pages, each holding a
 * run of the device's pages fetched in one READ ahead of the reads that
 * want them, like a disk's track buffer.
 *
 * Swap-in reads a cluster of a few pages per fault and waits for it: one
 * round trip through dlmd and a memory server per cluster.  A read that
 * continues one of the last few reads (a sequential stream) instead
 * fetches a whole window from where it starts; the reads that follow are
 * copied out of the window without a round trip, and a read in a window's
 * second half starts fetching the window after it.  A read that finds its
 * pages in a window still being fetched waits for that READ rather than
 * sending its own.  Random reads never start a window.
 *
 * Coherence.  Overlapping requests are sent in arrival order when one of
 * them writes (blk_order.c).  A write or discard, once every earlier
 * request overlapping it is done, makes every window it overlaps stale;
 * a stale window serves no read that arrives after that (the reads
 * already waiting on it are concurrent with the write, so either data is
 * correct for them).  A window whose READ arrives after the write is sent
 * after the write completes, so it holds the write's data.
 *
 * Locking: ra_lock (bh: completions run in softirq) guards the windows;
 * the copy out of a window runs outside it, the window pinned by @users.
 * A READ in flight holds a reference on the device, so a device deleted
 * meanwhile is freed by the READ's completion.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/sysfs.h>

#include "blk.h"

unsigned int dlm_blk_readahead_kb = DLM_BLK_IO_MAX >> 10;
module_param_named(blk_readahead_kb, dlm_blk_readahead_kb, uint, 0644);
MODULE_PARM_DESC(blk_readahead_kb,
		 "read-ahead window of a /dev/dlmbN created from now on, in KB: rounded down to a multiple of 4, at most 128; 0 disables (default 128)");

/* Pages per window of a device created now (0: no read-ahead). */
u32 dlm_blk_ra_window_pages(void)
{
	u32 kb = min_t(u32, READ_ONCE(dlm_blk_readahead_kb),
		       DLM_BLK_IO_MAX >> 10);

	return (kb << 10) >> PAGE_SHIFT;
}

static void dlm_blk_ra_done(struct dlm_blk_io *io, int status);

/* @first_slot: the first of DLM_BLK_RA_WINDOWS * ra_pages pool pages. */
void dlm_blk_ra_init(struct dlm_blk *b, unsigned long first_slot)
{
	int i;

	spin_lock_init(&b->ra_lock);
	for (i = 0; i < DLM_BLK_RA_STREAMS; i++)
		b->ra_ends[i] = U64_MAX;
	for (i = 0; i < DLM_BLK_RA_WINDOWS; i++) {
		struct dlm_blk_ra *w = &b->ra[i];

		w->io.done = dlm_blk_ra_done;
		w->b = b;
		w->slot = first_slot + (unsigned long)i * b->ra_pages;
		INIT_LIST_HEAD(&w->waiters);
		INIT_LIST_HEAD(&w->range.node);
	}
}

static bool dlm_blk_ra_live(const struct dlm_blk_ra *w)
{
	return w->state != DLM_BLK_RA_FREE && !w->stale;
}

/* Does a read of @n pages at @dpn continue a recent read?  Record it. */
static bool dlm_blk_ra_stream(struct dlm_blk *b, u64 dpn, u64 n)
{
	int i;

	for (i = 0; i < DLM_BLK_RA_STREAMS; i++) {
		if (b->ra_ends[i] == dpn) {
			b->ra_ends[i] = dpn + n;
			return true;
		}
	}
	b->ra_ends[b->ra_end_next] = dpn + n;
	b->ra_end_next = (b->ra_end_next + 1) % DLM_BLK_RA_STREAMS;
	return false;
}

/* A live window holding all of [@dpn, @dpn + @n), or NULL. */
static struct dlm_blk_ra *dlm_blk_ra_find(struct dlm_blk *b, u64 dpn, u64 n)
{
	int i;

	for (i = 0; i < DLM_BLK_RA_WINDOWS; i++) {
		struct dlm_blk_ra *w = &b->ra[i];

		if (dlm_blk_ra_live(w) && dpn >= w->start &&
		    dpn + n <= w->start + w->pages)
			return w;
	}
	return NULL;
}

/*
 * Claim a window for the pages from @start: a free or stale one, else the
 * least recently used that nobody uses.  NULL if @start is past the end,
 * already held by a live window, or every window is busy.
 */
static struct dlm_blk_ra *dlm_blk_ra_claim(struct dlm_blk *b, u64 start)
{
	u64 end = get_capacity(b->disk) >> (PAGE_SHIFT - SECTOR_SHIFT);
	struct dlm_blk_ra *w, *best = NULL;
	int i;

	if (start >= end || dlm_blk_ra_find(b, start, 1))
		return NULL;
	for (i = 0; i < DLM_BLK_RA_WINDOWS; i++) {
		w = &b->ra[i];
		if (w->state == DLM_BLK_RA_FETCHING || w->users)
			continue;
		if (!dlm_blk_ra_live(w)) {
			best = w;
			break;
		}
		if (!best || w->used < best->used)
			best = w;
	}
	if (!best)
		return NULL;
	if (dlm_blk_ra_live(best) && !best->hit)
		b->ra_unused++;
	best->state = DLM_BLK_RA_FETCHING;
	best->stale = false;
	best->hit = false;
	best->start = start;
	best->pages = min_t(u64, b->ra_pages, end - start);
	best->used = ++b->ra_clock;
	b->ra_fetches++;
	kref_get(&b->ref);		/* the READ's */
	return best;
}

/*
 * The READ of @w is over: wake its waiters, requeued if it could not be
 * sent (@requeue), else completed with @status.
 */
static void dlm_blk_ra_finish(struct dlm_blk_ra *w, int status, bool requeue)
{
	struct dlm_blk *b = w->b;
	struct dlm_blk_cmd *cmd, *tmp;
	LIST_HEAD(waiters);

	dlm_blk_order_end(b, &w->range);
	spin_lock_bh(&b->ra_lock);
	list_splice_init(&w->waiters, &waiters);
	if (status)
		w->stale = true;
	w->state = w->stale ? DLM_BLK_RA_FREE : DLM_BLK_RA_VALID;
	if (requeue)
		list_for_each_entry(cmd, &waiters, ra_node)
			w->users--;
	spin_unlock_bh(&b->ra_lock);

	list_for_each_entry_safe(cmd, tmp, &waiters, ra_node) {
		struct request *rq = blk_mq_rq_from_pdu(cmd);

		list_del_init(&cmd->ra_node);
		if (requeue) {
			cmd->ra = NULL;
			blk_mq_requeue_request(rq, true);
			continue;
		}
		cmd->status = status ? BLK_STS_IOERR : BLK_STS_OK;
		blk_mq_complete_request(rq);
	}
	dlm_blk_put(b);			/* the READ's */
}

/* genl.c completed or failed the READ of a window; no locks held. */
static void dlm_blk_ra_done(struct dlm_blk_io *io, int status)
{
	dlm_blk_ra_finish(container_of(io, struct dlm_blk_ra, io), status,
			  false);
}

/* Send the READ of @w, just claimed. */
static void dlm_blk_ra_send(struct dlm_blk *b, struct dlm_blk_ra *w)
{
	struct dlm_req *req;
	unsigned int noio;

	dlm_blk_order_begin(b, &w->range, w->start, w->pages, false);
	/* Under swap-in: no allocation may recurse into block I/O. */
	noio = memalloc_noio_save();
	req = dlm_req_send_io(DLM_NL_OP_READ, b->sp, w->start, w->slot,
			      w->pages << PAGE_SHIFT, &w->io);
	memalloc_noio_restore(noio);
	if (IS_ERR(req))
		dlm_blk_ra_finish(w, PTR_ERR(req), true);
	else
		dlm_req_put(req);
}

/*
 * Serve the read @rq, already started, from a window if one holds its
 * pages or is fetching them, or start a window at it if it continues a
 * stream.  Returns false if @rq is to be sent on its own.  May sleep.
 */
bool dlm_blk_ra_read(struct dlm_blk *b, struct request *rq)
{
	struct dlm_blk_cmd *cmd = blk_mq_rq_to_pdu(rq);
	u64 dpn = blk_rq_pos(rq) >> (PAGE_SHIFT - SECTOR_SHIFT);
	u64 n = blk_rq_bytes(rq) >> PAGE_SHIFT;
	struct dlm_blk_ra *w, *next = NULL;
	bool ready = false, seq;

	if (n >= b->ra_pages)
		return false;
	spin_lock_bh(&b->ra_lock);
	seq = dlm_blk_ra_stream(b, dpn, n);
	w = dlm_blk_ra_find(b, dpn, n);
	if (!w && seq) {
		next = dlm_blk_ra_claim(b, dpn);
		w = next;
	}
	if (!w) {
		spin_unlock_bh(&b->ra_lock);
		return false;
	}
	w->users++;
	w->used = ++b->ra_clock;
	w->hit = true;
	cmd->ra = w;
	if (w->state == DLM_BLK_RA_FETCHING) {
		list_add_tail(&cmd->ra_node, &w->waiters);
		if (w != next)
			b->ra_waits++;
	} else {
		ready = true;
		b->ra_hits++;
	}
	/* Into the window's second half: fetch the one after it. */
	if (!next && dpn + n > w->start + w->pages / 2)
		next = dlm_blk_ra_claim(b, w->start + w->pages);
	spin_unlock_bh(&b->ra_lock);

	if (next)
		dlm_blk_ra_send(b, next);
	if (ready) {
		cmd->status = BLK_STS_OK;
		blk_mq_complete_request(rq);
	}
	return true;
}

/* Completing @rq, served from cmd->ra: copy its data out, unpin. */
void dlm_blk_ra_complete(struct dlm_blk *b, struct request *rq)
{
	struct dlm_blk_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct dlm_blk_ra *w = cmd->ra;
	u64 dpn = blk_rq_pos(rq) >> (PAGE_SHIFT - SECTOR_SHIFT);

	if (!cmd->status)
		dlm_blk_copy(b, rq, w->slot + (dpn - w->start), false);
	spin_lock_bh(&b->ra_lock);
	w->users--;
	spin_unlock_bh(&b->ra_lock);
	cmd->ra = NULL;
}

/* @rq writes or discards: no window may serve its pages' old data. */
void dlm_blk_ra_invalidate(struct dlm_blk *b, struct request *rq)
{
	u64 dpn = blk_rq_pos(rq) >> (PAGE_SHIFT - SECTOR_SHIFT);
	u64 end = dpn + (blk_rq_bytes(rq) >> PAGE_SHIFT);
	int i;

	if (!b->ra_pages)
		return;
	spin_lock_bh(&b->ra_lock);
	for (i = 0; i < DLM_BLK_RA_WINDOWS; i++) {
		struct dlm_blk_ra *w = &b->ra[i];

		if (dlm_blk_ra_live(w) && dpn < w->start + w->pages &&
		    w->start < end) {
			w->stale = true;
			b->ra_invalidated++;
		}
	}
	spin_unlock_bh(&b->ra_lock);
}

/* /sys/block/dlmbN/dlmb/: the read-ahead's size and counters. */
static struct dlm_blk *dlm_blk_of(struct device *dev)
{
	return dev_to_disk(dev)->private_data;
}

static ssize_t readahead_kb_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n",
			  ((unsigned long)dlm_blk_of(dev)->ra_pages << PAGE_SHIFT) >> 10);
}
static DEVICE_ATTR_RO(readahead_kb);

static ssize_t ra_stat_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct dlm_blk *b = dlm_blk_of(dev);
	u64 v[5];

	spin_lock_bh(&b->ra_lock);
	v[0] = b->ra_fetches;
	v[1] = b->ra_hits;
	v[2] = b->ra_waits;
	v[3] = b->ra_invalidated;
	v[4] = b->ra_unused;
	spin_unlock_bh(&b->ra_lock);
	return sysfs_emit(buf, "%llu %llu %llu %llu %llu\n",
			  v[0], v[1], v[2], v[3], v[4]);
}
static DEVICE_ATTR_RO(ra_stat);

static struct attribute *dlm_blk_attrs[] = {
	&dev_attr_readahead_kb.attr,
	&dev_attr_ra_stat.attr,
	&dev_attr_order_waits.attr,
	NULL,
};

static const struct attribute_group dlm_blk_group = {
	.name = "dlmb",
	.attrs = dlm_blk_attrs,
};

const struct attribute_group *dlm_blk_groups[] = {
	&dlm_blk_group,
	NULL,
};

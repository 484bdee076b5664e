// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/dlmbN: the remote memory of dlmd's memory servers as a blk-mq block
 * device, so that swap over it can be compared with /dev/dlm's own paging.
 *
 * A device owns a block space: a remote space (remote.c) of 4 KB pages
 * whose memory-server capacity is reserved in full (SPACE_NEW with BUDGET
 * 0) and whose pool region holds one bounce buffer of DLM_BLK_IO_MAX bytes
 * per tag, then the read-ahead windows (blk_ra.c).  A request is copied
 * into its bounce buffer (writes), sent to the daemon as one READ, WRITE
 * or DISCARD of whole pages, once no overlapping request it must not
 * overtake is in flight (blk_order.c), and copied out (reads) when the
 * daemon completes it; a read that a read-ahead window holds is copied
 * out of the window instead.  queue_rq sleeps (netlink, memory allocation),
 * hence BLK_MQ_F_BLOCKING.
 *
 * Failures: a request unanswered for request_timeout_ms declares the
 * daemon gone (genl.c), which fails every request in flight; from then on
 * the device's data is lost and every request fails with EIO at once,
 * even after a new daemon registers (its generation differs).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/highmem.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched/mm.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "blk.h"

#define DLM_BLK_MINORS		BIT(MINORBITS)
/* Largest DISCARD: its byte count must fit DLM_NL_A_LEN (u32). */
#define DLM_BLK_DISCARD_MAX	SZ_1G

static int dlm_blk_major;
static DEFINE_MUTEX(dlm_blk_lock);	/* the devices: add and delete */
static DEFINE_IDR(dlm_blk_idr);

static const struct block_device_operations dlm_blk_fops = {
	.owner = THIS_MODULE,
};

/* First pool page of the bounce buffer of @rq (from @hctx). */
static unsigned long dlm_blk_slot(struct dlm_blk *b, unsigned int hctx_num,
				  struct request *rq)
{
	return ((unsigned long)hctx_num * b->depth + rq->tag) *
		DLM_BLK_IO_PAGES;
}

/* Copy @rq's data into (@to_pool) or out of the pool pages from @slot. */
void dlm_blk_copy(struct dlm_blk *b, struct request *rq, unsigned long slot,
		  bool to_pool)
{
	struct page **frames = dlm_pool_pages(b->sp->pool_first + slot);
	struct req_iterator iter;
	struct bio_vec bv;
	size_t off = 0;

	rq_for_each_segment(bv, rq, iter) {
		size_t done = 0;

		while (done < bv.bv_len) {
			struct page *fr = frames[off >> PAGE_SHIFT];
			size_t poff = off & ~PAGE_MASK;
			size_t n = min_t(size_t, bv.bv_len - done,
					 PAGE_SIZE - poff);
			void *p = bvec_kmap_local(&bv);

			if (to_pool)
				memcpy_to_page(fr, poff, p + done, n);
			else
				memcpy_from_page(p + done, fr, poff, n);
			kunmap_local(p);
			done += n;
			off += n;
		}
		if (!to_pool)
			flush_dcache_page(bv.bv_page);
	}
}

static void dlm_blk_release(struct kref *ref)
{
	kfree(container_of(ref, struct dlm_blk, ref));
}

void dlm_blk_put(struct dlm_blk *b)
{
	kref_put(&b->ref, dlm_blk_release);
}

static blk_status_t dlm_blk_queue_rq(struct blk_mq_hw_ctx *hctx,
				     const struct blk_mq_queue_data *bd)
{
	struct dlm_blk *b = hctx->queue->queuedata;
	struct request *rq = bd->rq;
	struct dlm_blk_cmd *cmd = blk_mq_rq_to_pdu(rq);
	unsigned long slot = dlm_blk_slot(b, hctx->queue_num, rq);
	u64 dpn = blk_rq_pos(rq) >> (PAGE_SHIFT - SECTOR_SHIFT);
	struct dlm_req *req;
	unsigned int noio;
	u64 gen;
	u32 op;

	cmd->ra = NULL;
	blk_mq_start_request(rq);
	switch (req_op(rq)) {
	case REQ_OP_READ:
		op = DLM_NL_OP_READ;
		break;
	case REQ_OP_WRITE:
		op = DLM_NL_OP_WRITE;
		break;
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
		op = DLM_NL_OP_DISCARD;
		break;
	case REQ_OP_FLUSH:		/* writes complete when stored */
		blk_mq_end_request(rq, BLK_STS_OK);
		return BLK_STS_OK;
	default:
		return BLK_STS_NOTSUPP;
	}
	if (!dlm_daemon_present(&gen) || gen != b->sp->generation) {
		pr_warn_ratelimited("dlmb%d: I/O error: the daemon that held the data is gone; delete the device (dlmctl blk-del %d)\n",
				    b->index, b->index);
		return BLK_STS_IOERR;
	}
	if (op == DLM_NL_OP_READ && dlm_blk_ra_read(b, rq))
		return BLK_STS_OK;
	/* After every overlapping request it must not overtake. */
	dlm_blk_order_begin(b, &cmd->range, dpn, blk_rq_bytes(rq) >> PAGE_SHIFT,
			    op != DLM_NL_OP_READ);
	/*
	 * Every window READ that overlaps it and came first is done now, so
	 * marking the windows stale here is enough: a window whose READ comes
	 * later is sent after this request completes, and holds its data.
	 */
	if (op != DLM_NL_OP_READ)
		dlm_blk_ra_invalidate(b, rq);
	if (op == DLM_NL_OP_WRITE)
		dlm_blk_copy(b, rq, slot, true);

	cmd->status = BLK_STS_OK;
	/* This may be swap-out: no allocation may recurse into block I/O. */
	noio = memalloc_noio_save();
	req = dlm_req_send_io(op, b->sp, dpn, slot, blk_rq_bytes(rq),
			      &cmd->io);
	memalloc_noio_restore(noio);
	if (IS_ERR(req)) {
		dlm_blk_order_end(b, &cmd->range);
		return errno_to_blk_status(PTR_ERR(req));
	}
	dlm_req_put(req);	/* its completion finds the request by @cmd */
	return BLK_STS_OK;
}

/* Called by remote.c when a request of a device completes; no locks held. */
void dlm_blk_complete(struct dlm_req *req)
{
	struct dlm_blk_io *io = req->priv;

	/* The daemon may only answer 0 or an errno (genl.c checks). */
	io->done(io, req->status);
}

/* A block request's own READ, WRITE or DISCARD completed. */
static void dlm_blk_cmd_done(struct dlm_blk_io *io, int status)
{
	struct dlm_blk_cmd *cmd = container_of(io, struct dlm_blk_cmd, io);
	struct request *rq = blk_mq_rq_from_pdu(cmd);
	struct dlm_blk *b = rq->q->queuedata;

	dlm_blk_order_end(b, &cmd->range);
	cmd->status = status ? BLK_STS_IOERR : BLK_STS_OK;
	blk_mq_complete_request(rq);
}

static int dlm_blk_init_request(struct blk_mq_tag_set *set,
				struct request *rq, unsigned int hctx_idx,
				unsigned int numa_node)
{
	struct dlm_blk_cmd *cmd = blk_mq_rq_to_pdu(rq);

	cmd->io.done = dlm_blk_cmd_done;
	INIT_LIST_HEAD(&cmd->ra_node);
	INIT_LIST_HEAD(&cmd->range.node);
	return 0;
}

static void dlm_blk_complete_rq(struct request *rq)
{
	struct dlm_blk_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct dlm_blk *b = rq->q->queuedata;

	if (cmd->ra)
		dlm_blk_ra_complete(b, rq);
	else if (!cmd->status && req_op(rq) == REQ_OP_READ)
		dlm_blk_copy(b, rq, dlm_blk_slot(b, rq->mq_hctx->queue_num, rq),
			     false);
	blk_mq_end_request(rq, cmd->status);
}

/*
 * Unanswered past the timeout: the daemon is declared gone, which fails
 * every request in flight, this one included, through dlm_blk_complete().
 */
static enum blk_eh_timer_return dlm_blk_timeout(struct request *rq)
{
	struct dlm_blk *b = rq->q->queuedata;

	dlm_daemon_stalled(b->sp->generation, "dlmb request unanswered",
			   b->index);
	return BLK_EH_DONE;
}

static const struct blk_mq_ops dlm_blk_mq_ops = {
	.queue_rq = dlm_blk_queue_rq,
	.complete = dlm_blk_complete_rq,
	.timeout = dlm_blk_timeout,
	.init_request = dlm_blk_init_request,
};

static struct gendisk *dlm_blk_alloc_disk(struct dlm_blk *b)
{
#ifdef DLM_HAVE_BLK_ALLOC_DISK_LIMITS
	struct queue_limits lim = {
		.logical_block_size = PAGE_SIZE,
		.physical_block_size = PAGE_SIZE,
		.io_min = PAGE_SIZE,
		.max_hw_sectors = DLM_BLK_IO_MAX >> SECTOR_SHIFT,
		.max_segments = DLM_BLK_IO_PAGES,
		.max_hw_discard_sectors = DLM_BLK_DISCARD_MAX >> SECTOR_SHIFT,
		.max_write_zeroes_sectors = DLM_BLK_DISCARD_MAX >> SECTOR_SHIFT,
		.discard_granularity = PAGE_SIZE,
	};

	return blk_mq_alloc_disk(&b->tag_set, &lim, b);
#else
	struct request_queue *q;
	struct gendisk *disk;

	disk = blk_mq_alloc_disk(&b->tag_set, b);
	if (IS_ERR(disk))
		return disk;
	q = disk->queue;
	blk_queue_logical_block_size(q, PAGE_SIZE);
	blk_queue_physical_block_size(q, PAGE_SIZE);
	blk_queue_io_min(q, PAGE_SIZE);
	blk_queue_max_hw_sectors(q, DLM_BLK_IO_MAX >> SECTOR_SHIFT);
	blk_queue_max_segments(q, DLM_BLK_IO_PAGES);
	blk_queue_max_discard_sectors(q, DLM_BLK_DISCARD_MAX >> SECTOR_SHIFT);
	blk_queue_max_write_zeroes_sectors(q,
					   DLM_BLK_DISCARD_MAX >> SECTOR_SHIFT);
	q->limits.discard_granularity = PAGE_SIZE;
	blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	return disk;
#endif
}

static int dlm_blk_validate(const struct dlm_blk_add *a)
{
	if (a->flags || a->reserved0 || a->reserved[0] || a->reserved[1]) {
		pr_debug("DLM_IOC_BLK_ADD: flags and reserved fields must be zero\n");
		return -EINVAL;
	}
	if (!a->size || a->size % PAGE_SIZE || a->size > DLM_TOTAL_SIZE_MAX) {
		pr_debug("DLM_IOC_BLK_ADD: size %llu is not a non-zero multiple of %lu up to %llu\n",
			 a->size, PAGE_SIZE, DLM_TOTAL_SIZE_MAX);
		return -EINVAL;
	}
	if (a->logical_block_size && a->logical_block_size != PAGE_SIZE) {
		pr_debug("DLM_IOC_BLK_ADD: logical block size %u: only %lu is supported\n",
			 a->logical_block_size, PAGE_SIZE);
		return -EINVAL;
	}
	if (a->queue_depth > DLM_BLK_DEPTH_MAX ||
	    a->nr_hw_queues > DLM_BLK_QUEUES_MAX) {
		pr_debug("DLM_IOC_BLK_ADD: queue depth %u (max %u) or queues %u (max %u) too large\n",
			 a->queue_depth, DLM_BLK_DEPTH_MAX, a->nr_hw_queues,
			 DLM_BLK_QUEUES_MAX);
		return -EINVAL;
	}
	return 0;
}

/*
 * Create the block space: capacity on the servers, bounce buffers, then
 * the read-ahead windows.
 */
static int dlm_blk_space(struct dlm_blk *b, u64 size)
{
	unsigned long bounce = (unsigned long)b->queues * b->depth *
			       DLM_BLK_IO_PAGES;
	struct dlm_setup s = {
		.backing = DLM_BACKING_REMOTE,
		.page_size = PAGE_SIZE,
		.total_size = size,
		.local_budget = ((u64)bounce +
				 DLM_BLK_RA_WINDOWS * b->ra_pages) << PAGE_SHIFT,
	};
	struct dlm_space *sp;
	int ret;

	sp = dlm_space_create(&s, NULL);
	if (IS_ERR(sp))
		return PTR_ERR(sp);
	sp->is_blk = true;
	ret = dlm_remote_setup(sp);
	if (ret) {
		dlm_space_put(sp);
		return ret;
	}
	b->sp = sp;
	dlm_blk_ra_init(b, bounce);
	return 0;
}

static int dlm_blk_create(struct dlm_blk_add *a)
{
	u32 queues = a->nr_hw_queues ?: min(num_online_cpus(), 4U);
	struct gendisk *disk;
	struct dlm_blk *b;
	int ret;

	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	kref_init(&b->ref);
	b->depth = a->queue_depth ?: DLM_BLK_DEPTH_DEFAULT;
	b->queues = queues;
	b->ra_pages = dlm_blk_ra_window_pages();
	dlm_blk_order_init(b);

	mutex_lock(&dlm_blk_lock);
	ret = idr_alloc(&dlm_blk_idr, b, 0, DLM_BLK_MINORS, GFP_KERNEL);
	if (ret < 0)
		goto unlock;
	b->index = ret;

	ret = dlm_blk_space(b, a->size);
	if (ret)
		goto remove_idr;

	b->tag_set.ops = &dlm_blk_mq_ops;
	b->tag_set.nr_hw_queues = queues;
	b->tag_set.queue_depth = b->depth;
	b->tag_set.numa_node = NUMA_NO_NODE;
	b->tag_set.cmd_size = sizeof(struct dlm_blk_cmd);
	b->tag_set.timeout = msecs_to_jiffies(dlm_request_timeout_ms);
	b->tag_set.flags = BLK_MQ_F_SHOULD_MERGE | BLK_MQ_F_BLOCKING;
	b->tag_set.driver_data = b;
	ret = blk_mq_alloc_tag_set(&b->tag_set);
	if (ret)
		goto put_space;

	disk = dlm_blk_alloc_disk(b);
	if (IS_ERR(disk)) {
		ret = PTR_ERR(disk);
		goto free_tag_set;
	}
	disk->major = dlm_blk_major;
	disk->first_minor = b->index;
	disk->minors = 1;
	disk->flags |= GENHD_FL_NO_PART;
	disk->fops = &dlm_blk_fops;
	disk->private_data = b;
	snprintf(disk->disk_name, DISK_NAME_LEN, "dlmb%d", b->index);
	set_capacity(disk, a->size >> SECTOR_SHIFT);
	b->disk = disk;
	ret = device_add_disk(NULL, disk, dlm_blk_groups);
	if (ret)
		goto put_disk;

	a->index = b->index;
	mutex_unlock(&dlm_blk_lock);
	pr_info("dlmb%d: %llu MiB on the memory servers, %u queue(s) of depth %u, %lu KB read-ahead\n",
		b->index, a->size >> 20, queues, b->depth,
		((unsigned long)b->ra_pages << PAGE_SHIFT) >> 10);
	return 0;

put_disk:
	put_disk(disk);
free_tag_set:
	blk_mq_free_tag_set(&b->tag_set);
put_space:
	dlm_space_put(b->sp);
remove_idr:
	idr_remove(&dlm_blk_idr, b->index);
unlock:
	mutex_unlock(&dlm_blk_lock);
	kfree(b);
	return ret;
}

/*
 * Tear down @b, already out of the idr.  dlm_blk_lock held.  A read-ahead
 * READ still in flight keeps @b (not its disk) until it completes.
 */
static void dlm_blk_destroy(struct dlm_blk *b)
{
	del_gendisk(b->disk);
	put_disk(b->disk);
	blk_mq_free_tag_set(&b->tag_set);
	dlm_space_put(b->sp);
	pr_info("dlmb%d: removed\n", b->index);
	dlm_blk_put(b);
}

static int dlm_blk_remove(u32 index)
{
	struct dlm_blk *b;
	int ret = 0;

	mutex_lock(&dlm_blk_lock);
	b = idr_find(&dlm_blk_idr, index);
	if (!b) {
		ret = -ENOENT;
	} else if (disk_openers(b->disk)) {
		pr_debug("DLM_IOC_BLK_DEL: dlmb%u is open: unmount or swapoff it first\n",
			 index);
		ret = -EBUSY;
	} else {
		idr_remove(&dlm_blk_idr, index);
		dlm_blk_destroy(b);
	}
	mutex_unlock(&dlm_blk_lock);
	return ret;
}

int dlm_blk_ioc_add(struct dlm_blk_add __user *uarg)
{
	struct dlm_blk_add a;
	int ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	ret = dlm_blk_validate(&a);
	if (ret)
		return ret;
	ret = dlm_blk_create(&a);
	if (ret)
		return ret;
	if (put_user(a.index, &uarg->index)) {
		dlm_blk_remove(a.index);
		return -EFAULT;
	}
	return 0;
}

int dlm_blk_ioc_del(struct dlm_blk_del __user *uarg)
{
	struct dlm_blk_del d;

	if (copy_from_user(&d, uarg, sizeof(d)))
		return -EFAULT;
	if (d.flags || d.reserved[0] || d.reserved[1]) {
		pr_debug("DLM_IOC_BLK_DEL: flags and reserved fields must be zero\n");
		return -EINVAL;
	}
	return dlm_blk_remove(d.index);
}

int dlm_blk_init(void)
{
	int ret = register_blkdev(0, "dlmb");

	if (ret < 0)
		return ret;
	dlm_blk_major = ret;
	return 0;
}

/* Module exit: no device can be open (each holds a module reference). */
void dlm_blk_exit(void)
{
	struct dlm_blk *b;
	int id;

	mutex_lock(&dlm_blk_lock);
	idr_for_each_entry(&dlm_blk_idr, b, id) {
		idr_remove(&dlm_blk_idr, id);
		dlm_blk_destroy(b);
	}
	mutex_unlock(&dlm_blk_lock);
	idr_destroy(&dlm_blk_idr);
	unregister_blkdev(dlm_blk_major, "dlmb");
}

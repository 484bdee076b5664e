// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/dlmbN: the remote memory of dlmd's memory servers as a blk-mq block
 * device, so that swap over it can be compared with /dev/dlm's own paging.
 *
 * A device owns a block space: a remote space (remote.c) of 4 KB pages
 * whose memory-server capacity is reserved in full (SPACE_NEW with BUDGET
 * 0) and whose pool region holds one bounce buffer of DLM_BLK_IO_MAX bytes
 * per tag.  A request is copied into its bounce buffer (writes), sent to
 * the daemon as one READ, WRITE or DISCARD of whole pages, and copied out
 * (reads) when the daemon completes it.  queue_rq sleeps (netlink, memory
 * allocation), hence BLK_MQ_F_BLOCKING.
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

#include "dlmem.h"

#define DLM_BLK_IO_PAGES	(DLM_BLK_IO_MAX >> PAGE_SHIFT)
#define DLM_BLK_MINORS		BIT(MINORBITS)
/* Largest DISCARD: its byte count must fit DLM_NL_A_LEN (u32). */
#define DLM_BLK_DISCARD_MAX	SZ_1G

/**
 * struct dlm_blk - one /dev/dlmbN.
 * @index: N.
 * @sp: the block space (a reference).
 * @depth: tags per hardware queue.
 * @tag_set: blk-mq tags; each tag owns DLM_BLK_IO_PAGES pages of the pool.
 * @disk: the gendisk.
 */
struct dlm_blk {
	int index;
	struct dlm_space *sp;
	u32 depth;
	struct blk_mq_tag_set tag_set;
	struct gendisk *disk;
};

/* Per-request data: how the daemon answered. */
struct dlm_blk_cmd {
	blk_status_t status;
};

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

/* Copy @rq's data into (@to_pool) or out of its bounce buffer. */
static void dlm_blk_copy(struct dlm_blk *b, struct request *rq,
			 unsigned long slot, bool to_pool)
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
	if (op == DLM_NL_OP_WRITE)
		dlm_blk_copy(b, rq, slot, true);

	cmd->status = BLK_STS_OK;
	/* This may be swap-out: no allocation may recurse into block I/O. */
	noio = memalloc_noio_save();
	req = dlm_req_send_io(op, b->sp, dpn, slot, blk_rq_bytes(rq), cmd);
	memalloc_noio_restore(noio);
	if (IS_ERR(req))
		return errno_to_blk_status(PTR_ERR(req));
	dlm_req_put(req);	/* its completion finds the request by @cmd */
	return BLK_STS_OK;
}

/* Called by remote.c when a block request completes; no locks held. */
void dlm_blk_complete(struct dlm_req *req)
{
	struct dlm_blk_cmd *cmd = req->priv;
	struct request *rq = blk_mq_rq_from_pdu(cmd);

	/* The daemon may only answer 0 or an errno (genl.c checks). */
	cmd->status = req->status ? BLK_STS_IOERR : BLK_STS_OK;
	blk_mq_complete_request(rq);
}

static void dlm_blk_complete_rq(struct request *rq)
{
	struct dlm_blk_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct dlm_blk *b = rq->q->queuedata;

	if (!cmd->status && req_op(rq) == REQ_OP_READ)
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

	dlm_daemon_stalled("dlmb request unanswered", b->index);
	return BLK_EH_DONE;
}

static const struct blk_mq_ops dlm_blk_mq_ops = {
	.queue_rq = dlm_blk_queue_rq,
	.complete = dlm_blk_complete_rq,
	.timeout = dlm_blk_timeout,
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

/* Create the block space: capacity on the servers, bounce buffers. */
static int dlm_blk_space(struct dlm_blk *b, u64 size, u32 queues)
{
	struct dlm_setup s = {
		.backing = DLM_BACKING_REMOTE,
		.page_size = PAGE_SIZE,
		.total_size = size,
		.local_budget = (u64)queues * b->depth * DLM_BLK_IO_MAX,
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
	b->depth = a->queue_depth ?: DLM_BLK_DEPTH_DEFAULT;

	mutex_lock(&dlm_blk_lock);
	ret = idr_alloc(&dlm_blk_idr, b, 0, DLM_BLK_MINORS, GFP_KERNEL);
	if (ret < 0)
		goto unlock;
	b->index = ret;

	ret = dlm_blk_space(b, a->size, queues);
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
	ret = add_disk(disk);
	if (ret)
		goto put_disk;

	a->index = b->index;
	mutex_unlock(&dlm_blk_lock);
	pr_info("dlmb%d: %llu MiB on the memory servers, %u queue(s) of depth %u\n",
		b->index, a->size >> 20, queues, b->depth);
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

/* Tear down @b, already out of the idr.  dlm_blk_lock held. */
static void dlm_blk_destroy(struct dlm_blk *b)
{
	del_gendisk(b->disk);
	put_disk(b->disk);
	blk_mq_free_tag_set(&b->tag_set);
	dlm_space_put(b->sp);
	pr_info("dlmb%d: removed\n", b->index);
	kfree(b);
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

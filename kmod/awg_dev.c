// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/awgstar, /dev/awgstar1, ...: the emulated AWG-STAR boards (seed
 * 001), their device files and ioctls.  Module parameter awg_boards makes
 * several boards in one kernel, each a node of its own, so a ring of
 * several nodes can be tested in one machine (each board's daemon carries
 * its token over the network like a board in another machine would).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/pseudo_fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "awgstar.h"

static unsigned int awg_boards = 1;
module_param(awg_boards, uint, 0444);
MODULE_PARM_DESC(awg_boards,
		 "AWG-STAR boards to emulate: /dev/awgstar, /dev/awgstar1, ... (default 1, at most 8, 0: none)");

static unsigned int awg_size_mb = 64;
module_param(awg_size_mb, uint, 0444);
MODULE_PARM_DESC(awg_size_mb,
		 "Shared region of each AWG-STAR board in MiB (default 64, 1 .. 1024)");

#define AWG_FS_MAGIC		0x41574753	/* "AWGS" */

static struct awg_board *awg_board[AWG_BOARDS_MAX];
static struct vfsmount *awg_mnt;
static int awg_mnt_count;

/* One open file: the handshake is per file, the ring per attaching file. */
struct awg_file {
	struct awg_board *b;
	bool api_done;
	bool attached;
};

static int awg_init_fs_context(struct fs_context *fc)
{
	return init_pseudo(fc, AWG_FS_MAGIC) ? 0 : -ENOMEM;
}

/* Not registered, and no owner: pinning it must not pin the module. */
static struct file_system_type awg_fs_type = {
	.name = "dlmem_awgstar",
	.init_fs_context = awg_init_fs_context,
	.kill_sb = kill_anon_super,
};

static int awg_open(struct inode *inode, struct file *file)
{
	/* misc_open() leaves the miscdevice in private_data. */
	struct awg_board *b = container_of(file->private_data,
					   struct awg_board, misc);
	struct awg_file *af;

	af = kzalloc(sizeof(*af), GFP_KERNEL);
	if (!af)
		return -ENOMEM;
	af->b = b;
	file->private_data = af;
	/* Every mapping of the board in one address_space (see awg_mem.c). */
	file->f_mapping = b->inode->i_mapping;
	return 0;
}

static int awg_release(struct inode *inode, struct file *file)
{
	struct awg_file *af = file->private_data;

	if (af->attached)
		awg_ring_detach(af->b, file);
	kfree(af);
	return 0;
}

static int awg_fop_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct awg_file *af = file->private_data;

	if (!READ_ONCE(af->api_done))
		return -EPERM;
	return awg_mmap(af->b, vma);
}

static int awg_check_range(struct awg_board *b, u64 off, u64 len)
{
	if (!len || len > AWG_XFER_MAX || off >= b->size || len > b->size - off)
		return -EINVAL;
	return 0;
}

static ssize_t awg_fop_write(struct file *file, const char __user *buf,
			     size_t len, loff_t *ppos)
{
	struct awg_file *af = file->private_data;
	struct awg_board *b = af->b;
	int ret;

	if (!READ_ONCE(af->api_done))
		return -EPERM;
	if (!len)
		return 0;
	if (*ppos < 0)
		return -EINVAL;
	if (*ppos >= b->size)
		return -ENOSPC;
	len = min3((u64)len, (u64)AWG_XFER_MAX, b->size - *ppos);
	ret = awg_submit_write(b, *ppos, buf, len);
	if (ret)
		return ret;
	*ppos += len;
	return len;
}

static ssize_t awg_fop_read(struct file *file, char __user *buf, size_t len,
			    loff_t *ppos)
{
	struct awg_file *af = file->private_data;
	struct awg_board *b = af->b;
	u64 start = ktime_get_ns();
	int ret;

	if (!READ_ONCE(af->api_done))
		return -EPERM;
	if (*ppos < 0)
		return -EINVAL;
	if (!len || *ppos >= b->size)
		return 0;
	len = min3((u64)len, (u64)AWG_XFER_MAX, b->size - *ppos);
	ret = awg_read_region(b, *ppos, buf, len);
	if (ret)
		return ret;
	awg_model_rate(b, start, len, AWG_READ_KBPS);
	*ppos += len;
	return len;
}

static loff_t awg_fop_llseek(struct file *file, loff_t off, int whence)
{
	struct awg_file *af = file->private_data;

	return fixed_size_llseek(file, off, whence, af->b->size);
}

static int awg_ioc_api(struct awg_file *af, void __user *uarg)
{
	struct awg_api a;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (!a.api || a.reserved || (a.features & ~AWG_FEATURES_SUPPORTED))
		return -EINVAL;
	a.api = AWG_API_VERSION;
	a.features = AWG_FEATURES_SUPPORTED;
	if (copy_to_user(uarg, &a, sizeof(a)))
		return -EFAULT;
	WRITE_ONCE(af->api_done, true);
	return 0;
}

static int awg_ioc_info(struct awg_board *b, void __user *uarg)
{
	struct awg_info in = {
		.api = AWG_API_VERSION,
		.features = AWG_FEATURES_SUPPORTED,
		.size = b->size,
		.link_mbps = AWG_LINK_MBPS,
		.write_kbps = AWG_WRITE_KBPS,
		.read_kbps = AWG_READ_KBPS,
		.token_max = AWG_TOKEN_MAX,
	};

	mutex_lock(&b->visit_mutex);
	in.node_id = b->node_id;
	in.nodes = b->nodes;
	in.live_mask = b->live_mask;
	in.ring = b->ring_file ? AWG_RING_DAEMON : AWG_RING_LOOPBACK;
	in.mode = b->cfg.mode;
	in.fiber_m = b->cfg.fiber_m;
	in.node_delay_ns = b->cfg.node_delay_ns;
	in.idle_us = b->cfg.idle_us;
	in.frames_per_visit = awg_budget(b);
	in.generation = b->generation;
	mutex_unlock(&b->visit_mutex);
	return copy_to_user(uarg, &in, sizeof(in)) ? -EFAULT : 0;
}

static int awg_ioc_config(struct awg_board *b, void __user *uarg)
{
	struct awg_config c;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&c, uarg, sizeof(c)))
		return -EFAULT;
	if ((c.set & ~AWG_CFG_ALL) || c.reserved[0] || c.reserved[1])
		return -EINVAL;
	if (((c.set & AWG_CFG_MODE) && c.mode > AWG_MODE_MODEL) ||
	    ((c.set & AWG_CFG_FIBER) && c.fiber_m > 10000000) ||
	    ((c.set & AWG_CFG_IDLE) && (!c.idle_us || c.idle_us > 1000000)) ||
	    ((c.set & AWG_CFG_CRC_INJECT) && c.crc_inject_permille > 500) ||
	    ((c.set & AWG_CFG_NODE_DELAY) && c.node_delay_ns > 1000000))
		return -EINVAL;
	mutex_lock(&b->visit_mutex);
	if (c.set & AWG_CFG_MODE)
		WRITE_ONCE(b->cfg.mode, c.mode);
	if (c.set & AWG_CFG_FIBER)
		b->cfg.fiber_m = c.fiber_m;
	if (c.set & AWG_CFG_IDLE)
		b->cfg.idle_us = c.idle_us;
	if (c.set & AWG_CFG_CRC_INJECT)
		b->cfg.crc_inject_permille = c.crc_inject_permille;
	if (c.set & AWG_CFG_NODE_DELAY)
		b->cfg.node_delay_ns = c.node_delay_ns;
	b->last_depart_ns = 0;	/* time rotations afresh */
	mutex_unlock(&b->visit_mutex);
	return 0;
}

static int awg_ioc_stats(struct awg_board *b, void __user *uarg)
{
	struct awg_stats s;

	spin_lock(&b->lock);
	s = b->stats;
	spin_unlock(&b->lock);
	return copy_to_user(uarg, &s, sizeof(s)) ? -EFAULT : 0;
}

static int awg_ioc_xfer(struct awg_board *b, void __user *uarg, bool write)
{
	u64 start = ktime_get_ns();
	struct awg_xfer x;
	int ret;

	if (copy_from_user(&x, uarg, sizeof(x)))
		return -EFAULT;
	if (x.flags || x.reserved)
		return -EINVAL;
	ret = awg_check_range(b, x.offset, x.len);
	if (ret)
		return ret;
	if (write)
		return awg_submit_write(b, x.offset, u64_to_user_ptr(x.buf), x.len);
	ret = awg_read_region(b, x.offset, u64_to_user_ptr(x.buf), x.len);
	if (!ret)
		awg_model_rate(b, start, x.len, AWG_READ_KBPS);
	return ret;
}

static int awg_ioc_flush(struct awg_board *b, void __user *uarg)
{
	struct awg_flush f;

	if (copy_from_user(&f, uarg, sizeof(f)))
		return -EFAULT;
	if (f.reserved)
		return -EINVAL;
	return awg_flush(b, f.timeout_ms ?: AWG_FLUSH_TIMEOUT_MS);
}

static int awg_ioc_event(struct awg_board *b, void __user *uarg, bool send)
{
	struct awg_event ev;
	int ret;

	if (copy_from_user(&ev, uarg, sizeof(ev)))
		return -EFAULT;
	if (ev.reserved || ev.id >= AWG_EVENTS)
		return -EINVAL;
	if (send) {
		if (ev.timeout_ms ||
		    (ev.node != AWG_NODE_ALL && ev.node >= READ_ONCE(b->nodes)))
			return -EINVAL;
		/* Nobody there would take it (as of the last token visit). */
		if (ev.node != AWG_NODE_ALL &&
		    !(READ_ONCE(b->live_mask) & BIT(ev.node)))
			return -EHOSTUNREACH;
		return awg_submit_event(b, ev.node, ev.id, ev.data);
	}
	ret = awg_wait_event(b, &ev);
	if (ret)
		return ret;
	return copy_to_user(uarg, &ev, sizeof(ev)) ? -EFAULT : 0;
}

static int awg_ioc_attach(struct awg_file *af, struct file *file,
			  void __user *uarg)
{
	struct awg_ring_attach a;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags || a.reserved || !a.nodes || a.nodes > AWG_NODES_MAX ||
	    a.node_id >= a.nodes)
		return -EINVAL;
	if (af->attached)
		return -EBUSY;
	ret = awg_ring_attach(af->b, file, &a);
	if (!ret)
		af->attached = true;
	return ret;
}

static int awg_ioc_visit(struct awg_board *b, struct file *file,
			 void __user *uarg)
{
	struct awg_ring_visit v;
	int ret;

	if (copy_from_user(&v, uarg, sizeof(v)))
		return -EFAULT;
	if (v.out_len)
		return -EINVAL;
	ret = awg_ring_visit(b, file, &v);
	if (ret)
		return ret;
	return put_user(v.out_len, (__u32 __user *)(uarg +
			offsetof(struct awg_ring_visit, out_len)));
}

static long awg_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct awg_file *af = file->private_data;
	struct awg_board *b = af->b;
	void __user *uarg = (void __user *)arg;

	if (cmd == AWG_IOC_API)
		return awg_ioc_api(af, uarg);
	if (!READ_ONCE(af->api_done)) {
		switch (cmd) {
		case AWG_IOC_GET_INFO: case AWG_IOC_SET_CONFIG:
		case AWG_IOC_GET_STATS: case AWG_IOC_WRITE: case AWG_IOC_READ:
		case AWG_IOC_FLUSH: case AWG_IOC_EVENT_SEND:
		case AWG_IOC_EVENT_WAIT: case AWG_IOC_RING_ATTACH:
		case AWG_IOC_RING_VISIT:
			return -EPERM;
		default:
			return -ENOTTY;
		}
	}
	switch (cmd) {
	case AWG_IOC_GET_INFO:
		return awg_ioc_info(b, uarg);
	case AWG_IOC_SET_CONFIG:
		return awg_ioc_config(b, uarg);
	case AWG_IOC_GET_STATS:
		return awg_ioc_stats(b, uarg);
	case AWG_IOC_WRITE:
		return awg_ioc_xfer(b, uarg, true);
	case AWG_IOC_READ:
		return awg_ioc_xfer(b, uarg, false);
	case AWG_IOC_FLUSH:
		return awg_ioc_flush(b, uarg);
	case AWG_IOC_EVENT_SEND:
		return awg_ioc_event(b, uarg, true);
	case AWG_IOC_EVENT_WAIT:
		return awg_ioc_event(b, uarg, false);
	case AWG_IOC_RING_ATTACH:
		return awg_ioc_attach(af, file, uarg);
	case AWG_IOC_RING_VISIT:
		return awg_ioc_visit(b, file, uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations awg_fops = {
	.owner = THIS_MODULE,
	.open = awg_open,
	.release = awg_release,
	.mmap = awg_fop_mmap,
	.read = awg_fop_read,
	.write = awg_fop_write,
	.llseek = awg_fop_llseek,
	.unlocked_ioctl = awg_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static void awg_board_destroy(struct awg_board *b)
{
	misc_deregister(&b->misc);
	awg_ring_exit(b);
	awg_mem_exit(b);
	iput(b->inode);
	kfree(b);
}

static int awg_board_create(int idx)
{
	struct awg_board *b;
	int ret;

	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->idx = idx;
	if (idx)
		snprintf(b->name, sizeof(b->name), "awgstar%d", idx);
	else
		strscpy(b->name, "awgstar", sizeof(b->name));
	b->inode = alloc_anon_inode(awg_mnt->mnt_sb);
	if (IS_ERR(b->inode)) {
		ret = PTR_ERR(b->inode);
		goto free_board;
	}
	ret = awg_ring_init(b);
	if (ret)
		goto put_inode;
	ret = awg_mem_init(b, (u64)awg_size_mb << 20);
	if (ret)
		goto exit_ring;
	b->misc.minor = MISC_DYNAMIC_MINOR;
	b->misc.name = b->name;
	b->misc.fops = &awg_fops;
	b->misc.mode = 0600;	/* udev/60-dlmem.rules: group dlm */
	awg_board[idx] = b;
	ret = misc_register(&b->misc);
	if (ret)
		goto exit_mem;
	return 0;

exit_mem:
	awg_board[idx] = NULL;
	awg_mem_exit(b);
exit_ring:
	awg_ring_exit(b);
put_inode:
	iput(b->inode);
free_board:
	kfree(b);
	return ret;
}

int awg_dev_init(void)
{
	unsigned int i;
	int ret;

	if (awg_boards > AWG_BOARDS_MAX) {
		pr_err("awg_boards=%u: at most %d\n", awg_boards, AWG_BOARDS_MAX);
		return -EINVAL;
	}
	if (!awg_size_mb || awg_size_mb > 1024) {
		pr_err("awg_size_mb=%u: want 1 .. 1024\n", awg_size_mb);
		return -EINVAL;
	}
	if (!awg_boards)
		return 0;
	ret = simple_pin_fs(&awg_fs_type, &awg_mnt, &awg_mnt_count);
	if (ret)
		return ret;
	for (i = 0; i < awg_boards; i++) {
		ret = awg_board_create(i);
		if (ret) {
			pr_err("cannot create AWG-STAR board %u: %d\n", i, ret);
			goto destroy_boards;
		}
	}
	pr_info("%u AWG-STAR board(s), %u MiB each\n", awg_boards, awg_size_mb);
	return 0;

destroy_boards:
	awg_dev_exit();
	return ret;
}

void awg_dev_exit(void)
{
	int i;

	for (i = AWG_BOARDS_MAX - 1; i >= 0; i--) {
		if (!awg_board[i])
			continue;
		awg_board_destroy(awg_board[i]);
		awg_board[i] = NULL;
	}
	if (awg_mnt)
		simple_release_fs(&awg_mnt, &awg_mnt_count);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/fmpl: the misc device, its file state and its ioctls.  Each open
 * file is one rank: FMPL_IOC_API, then FMPL_IOC_INIT joins a world; the
 * file's release leaves it.  Every field of every argument is checked
 * here before anything else looks at it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": fmpl: " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dlmem.h"
#include "fmpl.h"

static unsigned int msg_max_mb = 64;
module_param(msg_max_mb, uint, 0444);
MODULE_PARM_DESC(msg_max_mb,
		 "Largest /dev/fmpl message in MiB; its pages are pinned while it is outstanding (default 64)");

u64 fmpl_msg_max;

/**
 * struct fmpl_file - one open file of /dev/fmpl.
 * @lock: serialises the handshake and FMPL_IOC_INIT.
 * @api_done: FMPL_IOC_API succeeded.
 * @ep: the rank, once FMPL_IOC_INIT succeeded (read with acquire).
 */
struct fmpl_file {
	struct mutex lock;	/* api_done, ep */
	bool api_done;
	struct fmpl_ep *ep;
};

static bool fmpl_zero(const void *p, size_t n)
{
	return !memchr_inv(p, 0, n);
}

static long fmpl_ioc_api(struct fmpl_file *ff, struct fmpl_api __user *uarg)
{
	struct fmpl_api api;
	long ret = 0;

	if (copy_from_user(&api, uarg, sizeof(api)))
		return -EFAULT;
	mutex_lock(&ff->lock);
	if (api.reserved)
		ret = -EINVAL;
	else if (ff->api_done)
		ret = -EBUSY;
	else if (api.api != FMPL_API_VERSION)
		ret = -EPROTONOSUPPORT;
	else if (api.features & ~(FMPL_FEATURE_P2P | FMPL_FEATURE_SPOOL |
				  FMPL_FEATURE_ANY_SOURCE | FMPL_FEATURE_COLL |
				  FMPL_FEATURE_FAST | FMPL_FEATURE_COMM_FREE))
		ret = -EINVAL;
	else if (api.features & ~FMPL_FEATURES_SUPPORTED)
		ret = -EOPNOTSUPP;
	else
		ff->api_done = true;
	mutex_unlock(&ff->lock);

	api.api = FMPL_API_VERSION;
	api.reserved = 0;
	api.features = FMPL_FEATURES_SUPPORTED;
	if (copy_to_user(uarg, &api, sizeof(api)))
		return -EFAULT;
	return ret;
}

static long fmpl_ioc_info(struct fmpl_info __user *uarg)
{
	struct fmpl_info info = {
		.api = FMPL_API_VERSION,
		.ranks_max = FMPL_RANKS_MAX,
		.features = FMPL_FEATURES_SUPPORTED,
		.count_max = FMPL_COUNT_MAX,
		.inline_max = FMPL_INLINE_MAX,
		.msg_max = fmpl_msg_max,
	};

	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

static int fmpl_init_validate(const struct fmpl_init *in)
{
	if (!fmpl_zero(in->reserved, sizeof(in->reserved)))
		return -EINVAL;
	if (!in->key || !in->size || in->size > FMPL_RANKS_MAX ||
	    in->rank >= in->size || in->mode > FMPL_MODE_ANY ||
	    !in->count || in->count > FMPL_COUNT_MAX)
		return -EINVAL;
	if (in->fast_count > FMPL_FAST_COUNT_MAX ||
	    fmpl_fast_bytes(in->size, in->fast_count) > FMPL_FAST_AREA_MAX)
		return -EINVAL;
	if (!in->ma || !in->fa || !IS_ALIGNED(in->ma, 8) ||
	    !IS_ALIGNED(in->fa, 8))
		return -EINVAL;
	return 0;
}

static long fmpl_ioc_init(struct fmpl_file *ff, struct fmpl_init __user *uarg)
{
	struct fmpl_init in;
	struct fmpl_ep *ep;
	long ret;

	if (copy_from_user(&in, uarg, sizeof(in)))
		return -EFAULT;
	ret = fmpl_init_validate(&in);
	if (ret)
		return ret;
	mutex_lock(&ff->lock);
	if (ff->ep) {
		ret = -EBUSY;
		goto unlock;
	}
	ret = fmpl_join(&ep, &in);
	if (!ret)	/* other ioctls of the file read ep without the lock */
		smp_store_release(&ff->ep, ep);
unlock:
	mutex_unlock(&ff->lock);
	return ret;
}

static int fmpl_xfer_validate(const struct fmpl_xfer *x)
{
	if (x->reserved0 || x->reserved1 ||
	    !fmpl_zero(x->reserved, sizeof(x->reserved)))
		return -EINVAL;
	if (x->flags & ~FMPL_XFER_FLAGS || x->size > fmpl_msg_max ||
	    (!x->buf && x->size))
		return -EINVAL;
	return 0;
}

static long fmpl_ioc_xfer(struct fmpl_ep *ep, unsigned int cmd,
			  struct fmpl_xfer __user *uarg)
{
	struct fmpl_xfer x;
	long ret;

	if (copy_from_user(&x, uarg, sizeof(x)))
		return -EFAULT;
	ret = fmpl_xfer_validate(&x);
	if (ret)
		return ret;
	x.status = FMPL_STATUS_PENDING;
	x.out_peer = 0;
	x.out_mai = 0;
	x.out_size = 0;
	ret = cmd == FMPL_IOC_SEND ? fmpl_send(ep, &x) : fmpl_recv(ep, &x);
	if (ret == -EINTR)
		return ret;
	if (copy_to_user(uarg, &x, sizeof(x)))
		return -EFAULT;
	return ret;
}

static long fmpl_ioc_wait(struct fmpl_ep *ep, struct fmpl_wait __user *uarg)
{
	struct fmpl_wait wt;
	long ret;

	if (copy_from_user(&wt, uarg, sizeof(wt)))
		return -EFAULT;
	if (wt.reserved0 || !fmpl_zero(wt.reserved, sizeof(wt.reserved)))
		return -EINVAL;
	wt.status = FMPL_STATUS_PENDING;
	wt.out_mai = 0;
	wt.out_size = 0;
	ret = fmpl_wait(ep, &wt);
	if (ret == -EINTR)
		return ret;
	if (copy_to_user(uarg, &wt, sizeof(wt)))
		return -EFAULT;
	return ret;
}

static long fmpl_ioc_sendbuf(struct fmpl_ep *ep, unsigned int cmd,
			     void __user *uarg)
{
	struct fmpl_sendbuf_stat st = {};
	struct fmpl_sendbuf sb;

	if (cmd == FMPL_IOC_SENDBUF_CHECK) {
		fmpl_sendbuf_check(ep, &st);
		return copy_to_user(uarg, &st, sizeof(st)) ? -EFAULT : 0;
	}
	if (copy_from_user(&sb, uarg, sizeof(sb)))
		return -EFAULT;
	if (sb.reserved0 || !fmpl_zero(sb.reserved, sizeof(sb.reserved)))
		return -EINVAL;
	return fmpl_sendbuf_set(ep, &sb);
}

static long fmpl_ioc_coll(struct fmpl_ep *ep, unsigned int cmd,
			  struct fmpl_coll __user *uarg)
{
	struct fmpl_coll cl;

	if (copy_from_user(&cl, uarg, sizeof(cl)))
		return -EFAULT;
	if (!fmpl_zero(cl.reserved, sizeof(cl.reserved)))
		return -EINVAL;
	return cmd == FMPL_IOC_BARRIER ? fmpl_barrier(ep, &cl) :
					 fmpl_bcast(ep, &cl);
}

static long fmpl_ioc_comm_create(struct fmpl_ep *ep,
				 struct fmpl_comm_create __user *uarg)
{
	struct fmpl_comm_create cc;
	long ret;

	if (copy_from_user(&cc, uarg, sizeof(cc)))
		return -EFAULT;
	if (cc.reserved0 || !fmpl_zero(cc.reserved, sizeof(cc.reserved)))
		return -EINVAL;
	ret = fmpl_comm_create(ep, &cc);
	if (ret == -EINTR)
		return ret;
	if (copy_to_user(uarg, &cc, sizeof(cc)))
		return -EFAULT;
	return ret;
}

static long fmpl_ioc_comm_info(struct fmpl_ep *ep,
			       struct fmpl_comm_info __user *uarg)
{
	struct fmpl_comm_info ci;
	long ret;

	if (copy_from_user(&ci, uarg, sizeof(ci)))
		return -EFAULT;
	if (ci.reserved0 || ci.reserved1 ||
	    !fmpl_zero(ci.reserved, sizeof(ci.reserved)))
		return -EINVAL;
	ci.size = 0;
	ci.rank = 0;
	ret = fmpl_comm_info(ep, &ci, u64_to_user_ptr(ci.members));
	if (ret && ret != -ENOSPC)
		return ret;
	if (copy_to_user(uarg, &ci, sizeof(ci)))
		return -EFAULT;
	return ret;
}

static long fmpl_ioc_comm_free(struct fmpl_ep *ep,
			       struct fmpl_comm_free __user *uarg)
{
	struct fmpl_comm_free cf;

	if (copy_from_user(&cf, uarg, sizeof(cf)))
		return -EFAULT;
	if (cf.reserved0 || !fmpl_zero(cf.reserved, sizeof(cf.reserved)))
		return -EINVAL;
	return fmpl_comm_free(ep, &cf);
}

static long fmpl_ioc_fast(struct fmpl_ep *ep, unsigned int cmd,
			  void __user *uarg)
{
	struct fmpl_fast_wait fw;
	struct fmpl_fast_wake fk;

	if (cmd == FMPL_IOC_FAST_WAKE) {
		if (copy_from_user(&fk, uarg, sizeof(fk)))
			return -EFAULT;
		if (fk.reserved0 || !fmpl_zero(fk.reserved, sizeof(fk.reserved)))
			return -EINVAL;
		return fmpl_fast_wake(ep, &fk);
	}
	if (copy_from_user(&fw, uarg, sizeof(fw)))
		return -EFAULT;
	if (fw.reserved0 || !fmpl_zero(fw.reserved, sizeof(fw.reserved)))
		return -EINVAL;
	return fmpl_fast_wait(ep, &fw);
}

static long fmpl_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct fmpl_file *ff = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct fmpl_ep *ep;

	switch (cmd) {
	case FMPL_IOC_API:
		return fmpl_ioc_api(ff, uarg);
	case FMPL_IOC_GET_INFO:
		return fmpl_ioc_info(uarg);
	case FMPL_IOC_INIT:
	case FMPL_IOC_SEND:
	case FMPL_IOC_RECV:
	case FMPL_IOC_WAIT:
	case FMPL_IOC_SENDBUF_SET:
	case FMPL_IOC_SENDBUF_CHECK:
	case FMPL_IOC_BARRIER:
	case FMPL_IOC_BCAST:
	case FMPL_IOC_COMM_CREATE:
	case FMPL_IOC_COMM_INFO:
	case FMPL_IOC_COMM_FREE:
	case FMPL_IOC_FAST_WAIT:
	case FMPL_IOC_FAST_WAKE:
		break;
	default:
		return -ENOTTY;
	}
	if (!READ_ONCE(ff->api_done))
		return -EPERM;
	if (cmd == FMPL_IOC_INIT)
		return fmpl_ioc_init(ff, uarg);
	ep = smp_load_acquire(&ff->ep);	/* pairs with fmpl_ioc_init */
	if (!ep)
		return -ENOTCONN;

	switch (cmd) {
	case FMPL_IOC_SEND:
	case FMPL_IOC_RECV:
		return fmpl_ioc_xfer(ep, cmd, uarg);
	case FMPL_IOC_WAIT:
		return fmpl_ioc_wait(ep, uarg);
	case FMPL_IOC_SENDBUF_SET:
	case FMPL_IOC_SENDBUF_CHECK:
		return fmpl_ioc_sendbuf(ep, cmd, uarg);
	case FMPL_IOC_BARRIER:
	case FMPL_IOC_BCAST:
		return fmpl_ioc_coll(ep, cmd, uarg);
	case FMPL_IOC_COMM_CREATE:
		return fmpl_ioc_comm_create(ep, uarg);
	case FMPL_IOC_COMM_FREE:
		return fmpl_ioc_comm_free(ep, uarg);
	case FMPL_IOC_FAST_WAIT:
	case FMPL_IOC_FAST_WAKE:
		return fmpl_ioc_fast(ep, cmd, uarg);
	default:
		return fmpl_ioc_comm_info(ep, uarg);
	}
}

/* The world's fast area, for the ranks that joined it (FMPL_FEATURE_FAST). */
static int fmpl_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct fmpl_file *ff = file->private_data;
	struct fmpl_ep *ep = smp_load_acquire(&ff->ep);	/* see fmpl_ioc_init */

	if (!ep)
		return -ENOTCONN;
	return fmpl_fast_mmap(ep, vma);
}

static int fmpl_open(struct inode *inode, struct file *file)
{
	struct fmpl_file *ff = kzalloc(sizeof(*ff), GFP_KERNEL);

	if (!ff)
		return -ENOMEM;
	mutex_init(&ff->lock);
	file->private_data = ff;
	return nonseekable_open(inode, file);
}

static int fmpl_release(struct inode *inode, struct file *file)
{
	struct fmpl_file *ff = file->private_data;

	if (ff->ep)
		fmpl_leave(ff->ep);
	mutex_destroy(&ff->lock);
	kfree(ff);
	return 0;
}

static const struct file_operations fmpl_fops = {
	.owner		= THIS_MODULE,
	.open		= fmpl_open,
	.release	= fmpl_release,
	.unlocked_ioctl	= fmpl_ioctl,
	.mmap		= fmpl_mmap,
	.compat_ioctl	= compat_ptr_ioctl,
};

static struct miscdevice fmpl_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "fmpl",
	.fops	= &fmpl_fops,
	.mode	= 0666,
};

int fmpl_dev_init(void)
{
	int ret;

	if (!msg_max_mb || msg_max_mb > 1024) {
		pr_err("msg_max_mb=%u must be 1..1024\n", msg_max_mb);
		return -EINVAL;
	}
	fmpl_msg_max = (u64)msg_max_mb << 20;
	ret = fmpl_copy_init();
	if (ret)
		return ret;
	ret = misc_register(&fmpl_misc);
	if (ret)
		fmpl_copy_exit();
	return ret;
}

void fmpl_dev_exit(void)
{
	misc_deregister(&fmpl_misc);
	fmpl_copy_exit();
}

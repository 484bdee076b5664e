// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/dlm: the misc device, its file state and its ioctls.
 *
 * Each open file goes through DLM_IOC_API, then DLM_IOC_SETUP, which
 * creates the file's DLM space; mmap() then maps that space.  The space
 * lives until the file is released, which the core does only after the last
 * vma of it is gone, so the fault handler never sees a freed space.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>

#include "dlmem.h"

/**
 * struct dlm_file - state of one open file of /dev/dlm.
 * @lock: serialises the handshake and setup.
 * @api_done: DLM_IOC_API succeeded.
 * @space: the file's DLM space, set once by DLM_IOC_SETUP.
 */
struct dlm_file {
	struct mutex lock;	/* api_done; serialises DLM_IOC_SETUP */
	bool api_done;
	/* Set once under lock (release), read without it (acquire). */
	struct dlm_space *space;
};

static bool dlm_reserved_zero(const u64 *words, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (words[i])
			return false;
	return true;
}

static long dlm_ioc_api(struct dlm_file *df, struct dlm_api __user *uarg)
{
	struct dlm_api api;
	long ret = 0;

	if (copy_from_user(&api, uarg, sizeof(api)))
		return -EFAULT;

	if (api.reserved) {
		pr_debug("DLM_IOC_API: reserved field must be zero\n");
		return -EINVAL;
	}

	mutex_lock(&df->lock);
	if (df->api_done) {
		pr_debug("DLM_IOC_API: handshake already done on this file\n");
		ret = -EBUSY;
	} else if (api.api != DLM_API_VERSION) {
		pr_debug("DLM_IOC_API: caller speaks version %u, kernel %u\n",
			 api.api, DLM_API_VERSION);
		ret = -EPROTONOSUPPORT;
	} else if (api.features & ~DLM_FEATURES_KNOWN) {
		pr_debug("DLM_IOC_API: unknown feature bits %#llx\n",
			 api.features & ~DLM_FEATURES_KNOWN);
		ret = -EINVAL;
	} else if (api.features & ~DLM_FEATURES_SUPPORTED) {
		pr_debug("DLM_IOC_API: features %#llx not supported by this kernel\n",
			 api.features & ~DLM_FEATURES_SUPPORTED);
		ret = -EOPNOTSUPP;
	} else {
		df->api_done = true;
	}
	mutex_unlock(&df->lock);

	/* Tell the caller what this kernel speaks, on success or failure. */
	api.api = DLM_API_VERSION;
	api.features = DLM_FEATURES_SUPPORTED;
	if (copy_to_user(uarg, &api, sizeof(api)))
		return -EFAULT;
	return ret;
}

static long dlm_ioc_get_info(struct dlm_info __user *uarg)
{
	struct dlm_info info = {
		.api = DLM_API_VERSION,
		.page_size_min = PAGE_SIZE,
		.features = DLM_FEATURES_SUPPORTED,
		.page_size_default = dlm_limits.page_size_default,
		.page_size_max = DLM_PAGE_SIZE_MAX,
		.total_size_max = DLM_TOTAL_SIZE_MAX,
		.local_budget_max = dlm_limits.local_budget_max,
	};

	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

/* Check @s field by field and fill in defaults; 0 or the errno to return. */
static int dlm_setup_validate(struct dlm_setup *s)
{
	u64 budget_max;

	if (s->flags) {
		pr_debug("DLM_IOC_SETUP: flags must be zero\n");
		return -EINVAL;
	}
	if (!dlm_reserved_zero(s->reserved, ARRAY_SIZE(s->reserved)) ||
	    s->mmap_offset) {
		pr_debug("DLM_IOC_SETUP: reserved fields and mmap_offset must be zero\n");
		return -EINVAL;
	}
	switch (s->backing) {
	case DLM_BACKING_LOCAL:
		if (s->policy || s->protocol) {
			pr_debug("DLM_IOC_SETUP: a local space never evicts: policy and protocol must be 0\n");
			return -EINVAL;
		}
		break;
	case DLM_BACKING_REMOTE:
		if (s->policy > DLM_POLICY_CLOCK) {
			pr_debug("DLM_IOC_SETUP: unknown policy %u\n", s->policy);
			return -EINVAL;
		}
		if (s->policy == DLM_POLICY_DEFAULT)
			s->policy = DLM_POLICY_CLOCK;
		if (s->protocol > DLM_PROTO_INLINE) {
			pr_debug("DLM_IOC_SETUP: unknown protocol %u\n",
				 s->protocol);
			return -EINVAL;
		}
		if (s->protocol == DLM_PROTO_DEFAULT)
			s->protocol = DLM_PROTO_INLINE;
		break;
	default:
		pr_debug("DLM_IOC_SETUP: unknown backing %u\n", s->backing);
		return -EINVAL;
	}

	if (!s->page_size)
		s->page_size = dlm_limits.page_size_default;
	if (!IS_ALIGNED(s->page_size, PAGE_SIZE) ||
	    s->page_size > DLM_PAGE_SIZE_MAX) {
		pr_debug("DLM_IOC_SETUP: page_size %llu is not a multiple of %lu up to %llu\n",
			 s->page_size, PAGE_SIZE, DLM_PAGE_SIZE_MAX);
		return -EINVAL;
	}

	if (!s->total_size || s->total_size % s->page_size) {
		pr_debug("DLM_IOC_SETUP: total_size %llu is not a non-zero multiple of page_size %llu\n",
			 s->total_size, s->page_size);
		return -EINVAL;
	}
	if (s->total_size > DLM_TOTAL_SIZE_MAX) {
		pr_debug("DLM_IOC_SETUP: total_size %llu exceeds %llu\n",
			 s->total_size, DLM_TOTAL_SIZE_MAX);
		return -EFBIG;
	}

	budget_max = dlm_limits.local_budget_max -
		     dlm_limits.local_budget_max % s->page_size;
	if (!s->local_budget) {
		s->local_budget = min(s->total_size, budget_max);
		if (!s->local_budget) {
			pr_debug("DLM_IOC_SETUP: page_size %llu exceeds the local budget limit %llu\n",
				 s->page_size, dlm_limits.local_budget_max);
			return -ENOMEM;
		}
	}
	if (s->local_budget % s->page_size) {
		pr_debug("DLM_IOC_SETUP: local_budget %llu is not a multiple of page_size %llu\n",
			 s->local_budget, s->page_size);
		return -EINVAL;
	}
	if (s->local_budget > dlm_limits.local_budget_max) {
		pr_debug("DLM_IOC_SETUP: local_budget %llu exceeds the limit %llu (module parameter max_local_mb)\n",
			 s->local_budget, dlm_limits.local_budget_max);
		return -ENOMEM;
	}
	return 0;
}

static long dlm_ioc_setup(struct file *file, struct dlm_file *df,
			  struct dlm_setup __user *uarg)
{
	struct dlm_user *user;
	struct dlm_space *sp;
	struct dlm_setup s;
	long ret;

	if (copy_from_user(&s, uarg, sizeof(s)))
		return -EFAULT;

	ret = dlm_setup_validate(&s);
	if (ret)
		return ret;

	mutex_lock(&df->lock);
	if (df->space) {
		pr_debug("DLM_IOC_SETUP: this file already has a space, open /dev/dlm again for another\n");
		ret = -EBUSY;
		goto unlock;
	}

	ret = dlm_user_charge(current_euid(), s.total_size, s.local_budget,
			      &user);
	if (ret)
		goto unlock;
	sp = dlm_space_create(&s, file->f_mapping);
	if (IS_ERR(sp)) {
		ret = PTR_ERR(sp);
		goto uncharge;
	}
	/* From here the space's release uncharges. */
	sp->charged = true;
	sp->user = user;
	sp->owner = current_euid();
	if (s.backing == DLM_BACKING_REMOTE) {
		ret = dlm_remote_setup(sp);
		if (ret)
			goto put_space;
	}

	s.mmap_offset = (u64)sp->base_pgoff << PAGE_SHIFT;
	if (copy_to_user(uarg, &s, sizeof(s))) {
		ret = -EFAULT;
		goto put_space;
	}
	/* Pairs with dlm_file_space(): readers see an initialised space. */
	smp_store_release(&df->space, sp);
	goto unlock;
put_space:
	dlm_space_put(sp);
	goto unlock;
uncharge:
	dlm_user_uncharge(current_euid(), s.total_size, s.local_budget);
unlock:
	mutex_unlock(&df->lock);
	return ret;
}

/*
 * Without df->lock: dlm_mmap() runs under mmap_lock, and DLM_IOC_SETUP
 * holds df->lock across copy_to_user(), which may take mmap_lock (lockdep:
 * circular dependency).  The space, once set, lives until release.
 */
static struct dlm_space *dlm_file_space(struct dlm_file *df)
{
	/* Pairs with the release in dlm_ioc_setup(). */
	return smp_load_acquire(&df->space);
}

static long dlm_ioc_stats(struct dlm_file *df, struct dlm_stats __user *uarg)
{
	struct dlm_space *sp = dlm_file_space(df);
	struct dlm_stats st;

	if (!sp) {
		pr_debug("DLM_IOC_STATS: no space yet, call DLM_IOC_SETUP first\n");
		return -EPROTO;
	}
	dlm_space_stats(sp, &st);
	return copy_to_user(uarg, &st, sizeof(st)) ? -EFAULT : 0;
}

static long dlm_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct dlm_file *df = file->private_data;
	void __user *uarg = (void __user *)arg;
	bool api_done;

	switch (cmd) {
	case DLM_IOC_API:
		return dlm_ioc_api(df, uarg);
	case DLM_IOC_GET_INFO:
		return dlm_ioc_get_info(uarg);
	case DLM_IOC_SETUP:
	case DLM_IOC_STATS:
		break;
#if IS_ENABLED(CONFIG_DLMEM_BLK)
	case DLM_IOC_BLK_ADD:
	case DLM_IOC_BLK_DEL:
		break;
#endif
	default:
		return -ENOTTY;
	}

	mutex_lock(&df->lock);
	api_done = df->api_done;
	mutex_unlock(&df->lock);
	if (!api_done) {
		pr_debug("ioctl %#x before DLM_IOC_API, do the handshake first\n",
			 cmd);
		return -EPROTO;
	}

	switch (cmd) {
	case DLM_IOC_SETUP:
		return dlm_ioc_setup(file, df, uarg);
#if IS_ENABLED(CONFIG_DLMEM_BLK)
	case DLM_IOC_BLK_ADD:
	case DLM_IOC_BLK_DEL:
		if (!capable(CAP_SYS_ADMIN)) {
			pr_debug("ioctl %#x: block devices need CAP_SYS_ADMIN\n",
				 cmd);
			return -EPERM;
		}
		if (cmd == DLM_IOC_BLK_ADD)
			return dlm_blk_ioc_add(uarg);
		return dlm_blk_ioc_del(uarg);
#endif
	}
	return dlm_ioc_stats(df, uarg);
}

static int dlm_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct dlm_space *sp;

	/* Window 0 of the offsets is the daemon's view of the frame pool. */
	if (vma->vm_pgoff < (1UL << (DLM_SPACE_SHIFT - PAGE_SHIFT)))
		return dlm_pool_mmap(vma);

	sp = dlm_file_space(file->private_data);
	if (!sp) {
		pr_debug("mmap: no space yet, call DLM_IOC_SETUP first\n");
		return -EINVAL;
	}
	return dlm_space_mmap(sp, vma);
}

static int dlm_open(struct inode *inode, struct file *file)
{
	struct dlm_file *df;

	df = kzalloc(sizeof(*df), GFP_KERNEL_ACCOUNT);
	if (!df)
		return -ENOMEM;
	mutex_init(&df->lock);
	file->private_data = df;
	return 0;
}

static int dlm_release(struct inode *inode, struct file *file)
{
	struct dlm_file *df = file->private_data;

	if (df->space) {
		if (df->space->backing == DLM_BACKING_REMOTE)
			dlm_remote_release(df->space);
		dlm_space_put(df->space);
	}
	mutex_destroy(&df->lock);
	kfree(df);
	return 0;
}

static ssize_t spaces_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&dlm_spaces_live));
}
static DEVICE_ATTR_RO(spaces);

static ssize_t frames_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&dlm_frames_live));
}
static DEVICE_ATTR_RO(frames);

static ssize_t daemon_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%u\n", dlm_daemon_port());
}
static DEVICE_ATTR_RO(daemon);

static struct attribute *dlm_attrs[] = {
	&dev_attr_spaces.attr,
	&dev_attr_frames.attr,
	&dev_attr_daemon.attr,
	NULL,
};

static const struct attribute_group dlm_group = {
	.attrs = dlm_attrs,
};

static const struct attribute_group *dlm_groups[] = {
	&dlm_group,
	&dlm_stats_group,
	NULL,
};

static const struct file_operations dlm_fops = {
	.owner = THIS_MODULE,
	.open = dlm_open,
	.release = dlm_release,
	.unlocked_ioctl = dlm_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = dlm_mmap,
	.llseek = noop_llseek,
};

static struct miscdevice dlm_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "dlm",
	.fops = &dlm_fops,
	.groups = dlm_groups,
	.mode = 0666,
};

int dlm_dev_init(void)
{
	return misc_register(&dlm_misc);
}

void dlm_dev_exit(void)
{
	misc_deregister(&dlm_misc);
}

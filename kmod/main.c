// SPDX-License-Identifier: GPL-2.0
/*
 * dlmem.ko: DLM, a memory space larger than local RAM backed by the memory
 * of other machines.  Module entry points and parameters.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/module.h>

#include "dlmem.h"

static unsigned long default_page_kb = 1024;
module_param(default_page_kb, ulong, 0444);
MODULE_PARM_DESC(default_page_kb,
		 "DLM page size in KiB when DLM_IOC_SETUP passes 0 (multiple of the CPU page size, default 1024)");

static unsigned long max_local_mb;
module_param(max_local_mb, ulong, 0444);
MODULE_PARM_DESC(max_local_mb,
		 "Largest local budget of one DLM space in MiB (default 0: half of RAM)");

unsigned int dlm_request_timeout_ms = 5000;

/* 0 would make every wait time out at once: refused, at load and later. */
static int dlm_timeout_set(const char *val, const struct kernel_param *kp)
{
	unsigned int ms;
	int ret;

	ret = kstrtouint(val, 0, &ms);
	if (ret)
		return ret;
	if (!ms) {
		pr_err("request_timeout_ms must be at least 1\n");
		return -EINVAL;
	}
	WRITE_ONCE(*(unsigned int *)kp->arg, ms);
	return 0;
}

static const struct kernel_param_ops dlm_timeout_ops = {
	.set = dlm_timeout_set,
	.get = param_get_uint,
};
module_param_cb(request_timeout_ms, &dlm_timeout_ops, &dlm_request_timeout_ms,
		0644);
MODULE_PARM_DESC(request_timeout_ms,
		 "How long a request may stay unanswered before the daemon is declared gone and faults waiting on it get SIGBUS (ms, default 5000, at least 1)");

unsigned int dlm_reserve_dpages = 4;
module_param_named(reserve_dpages, dlm_reserve_dpages, uint, 0644);
MODULE_PARM_DESC(reserve_dpages,
		 "Free DLM pages a remote space keeps ready by storing victims ahead of need (cross, async and inline protocols), at most a quarter of its budget (default 4, 0: evict on demand); read at DLM_IOC_SETUP");

unsigned int dlm_readahead_dpages = 3;
module_param_named(readahead_dpages, dlm_readahead_dpages, uint, 0644);
MODULE_PARM_DESC(readahead_dpages,
		 "Most DLM pages a remote space fetches ahead of a sequential fault; a space starts at one per 6 DLM pages of its local budget (at least one) and halves that for each page read ahead and evicted unused (cross, async and inline protocols; local budgets of 8 DLM pages or more; default 3, 0: off)");

bool dlm_same_filled = true;
module_param_named(same_filled, dlm_same_filled, bool, 0644);
MODULE_PARM_DESC(same_filled,
		 "Keep a written remote DLM page that holds one repeated 8-byte value as that value instead of storing it, as zswap does (default Y)");

bool dlm_scan_resist = true;
module_param_named(scan_resist, dlm_scan_resist, bool, 0644);
MODULE_PARM_DESC(scan_resist,
		 "CLOCK policy: evict pages restorable without the daemon (zero- or same-filled) first, then pages sequential streams left behind, most recent first, so that a loop over more than the budget keeps part of it resident (default Y)");

bool dlm_pin_check = true;
module_param_named(pin_check, dlm_pin_check, bool, 0644);
MODULE_PARM_DESC(pin_check,
		 "Never reuse a pool frame that another kernel user holds (vmsplice, O_DIRECT, RDMA) for another DLM page (default Y; Documentation/design.rst, Pinned pages)");

struct dlm_limits dlm_limits;

static int __init dlm_limits_init(void)
{
	u64 ram = (u64)totalram_pages() << PAGE_SHIFT;

	dlm_limits.page_size_default = (u64)default_page_kb << 10;
	if (!dlm_limits.page_size_default ||
	    !IS_ALIGNED(dlm_limits.page_size_default, PAGE_SIZE) ||
	    dlm_limits.page_size_default > DLM_PAGE_SIZE_MAX) {
		pr_err("default_page_kb=%lu must be a multiple of %lu up to %llu\n",
		       default_page_kb, PAGE_SIZE >> 10, DLM_PAGE_SIZE_MAX >> 10);
		return -EINVAL;
	}

	dlm_limits.local_budget_max = max_local_mb ? (u64)max_local_mb << 20 :
						     ram / 2;
	if (dlm_limits.local_budget_max > ram) {
		pr_err("max_local_mb=%lu exceeds RAM (%llu MiB)\n",
		       max_local_mb, ram >> 20);
		return -EINVAL;
	}
	return 0;
}

static int __init dlm_init(void)
{
	int ret;

	ret = dlm_limits_init();
	if (ret)
		return ret;

	ret = dlm_genl_init();
	if (ret) {
		pr_err("cannot register generic netlink family %s: %d\n",
		       DLM_GENL_NAME, ret);
		return ret;
	}
	ret = dlm_remote_init();
	if (ret)
		goto unregister_genl;
	ret = dlm_blk_init();
	if (ret) {
		pr_err("cannot register block major dlmb: %d\n", ret);
		goto exit_remote;
	}
	ret = fmpl_dev_init();
	if (ret) {
		pr_err("cannot register /dev/fmpl: %d\n", ret);
		goto exit_blk;
	}
	ret = awg_dev_init();
	if (ret) {
		pr_err("cannot create the AWG-STAR boards: %d\n", ret);
		goto exit_fmpl;
	}
	ret = dlm_dev_init();
	if (ret) {
		pr_err("cannot register /dev/dlm: %d\n", ret);
		goto exit_awg;
	}
	pr_info("/dev/dlm ready, API %u, default page %llu KiB, local budget limit %llu MiB\n",
		DLM_API_VERSION, dlm_limits.page_size_default >> 10,
		dlm_limits.local_budget_max >> 20);
	return 0;

exit_awg:
	awg_dev_exit();
exit_fmpl:
	fmpl_dev_exit();
exit_blk:
	dlm_blk_exit();
exit_remote:
	dlm_remote_exit();
unregister_genl:
	dlm_genl_exit();
	return ret;
}

static void __exit dlm_exit(void)
{
	dlm_dev_exit();
	awg_dev_exit();
	fmpl_dev_exit();
	dlm_blk_exit();
	dlm_remote_exit();
	dlm_genl_exit();
	dlm_pool_exit();
	dlm_space_exit();
}

module_init(dlm_init);
module_exit(dlm_exit);

MODULE_DESCRIPTION("DLM: distributed large memory through /dev/dlm");
MODULE_AUTHOR("The DLM developers");
MODULE_LICENSE("GPL");

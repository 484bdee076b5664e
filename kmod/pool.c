// SPDX-License-Identifier: GPL-2.0
/*
 * The frame pool: the frames remote spaces keep their resident DLM pages
 * in.  The registered daemon maps all of it (window 0 of /dev/dlm), so a
 * transport reads a fetched DLM page straight into the frames that the
 * fault handler then maps into the program, and sends a victim straight
 * from them.  Each remote space owns one contiguous region of the pool,
 * its local budget, for as long as it exists.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "compat.h"
#include "dlmem.h"

static DEFINE_MUTEX(dlm_pool_lock);
static struct page **dlm_pool;		/* nr pages, under dlm_pool_lock */
static unsigned long *dlm_pool_used;	/* bitmap of pages given to spaces */
static unsigned long dlm_pool_nr;

static void dlm_pool_free_locked(void)
{
	unsigned long i;

	for (i = 0; i < dlm_pool_nr; i++)
		if (dlm_pool[i])
			put_page(dlm_pool[i]);
	kvfree(dlm_pool);
	bitmap_free(dlm_pool_used);
	dlm_pool = NULL;
	dlm_pool_used = NULL;
	dlm_pool_nr = 0;
}

/*
 * The daemon asks for a pool of @bytes.  A pool no space uses is (re)made
 * at that size; one in use stays as it is (a restarted daemon gets the
 * pool its predecessor had).  *@granted is the size in force.
 */
int dlm_pool_grant(u64 bytes, u64 *granted)
{
	unsigned long nr = bytes >> PAGE_SHIFT, i;
	int ret = 0;

	mutex_lock(&dlm_pool_lock);
	if (dlm_pool && !bitmap_empty(dlm_pool_used, dlm_pool_nr))
		goto out;
	if (dlm_pool && nr == dlm_pool_nr)
		goto out;
	if (!nr || bytes > dlm_limits.local_budget_max) {
		pr_debug("pool of %llu bytes refused: must be 1 page to max_local_mb\n",
			 bytes);
		ret = -EINVAL;
		goto out;
	}
	if (dlm_pool)
		dlm_pool_free_locked();

	dlm_pool = kvcalloc(nr, sizeof(*dlm_pool), GFP_KERNEL);
	dlm_pool_used = bitmap_zalloc(nr, GFP_KERNEL);
	if (!dlm_pool || !dlm_pool_used)
		goto nomem;
	dlm_pool_nr = nr;
	for (i = 0; i < nr; i++) {
		dlm_pool[i] = alloc_page(GFP_HIGHUSER | __GFP_ZERO);
		if (!dlm_pool[i])
			goto nomem;
		cond_resched();
	}
	pr_info("frame pool of %lu MiB for the daemon\n", nr >> (20 - PAGE_SHIFT));
	goto out;
nomem:
	dlm_pool_free_locked();
	ret = -ENOMEM;
out:
	*granted = (u64)dlm_pool_nr << PAGE_SHIFT;
	mutex_unlock(&dlm_pool_lock);
	return ret;
}

/* First pool page of a free run of @nr_pages, or -ENOMEM. */
long dlm_pool_region_alloc(unsigned long nr_pages)
{
	unsigned long first;
	long ret = -ENOMEM;

	mutex_lock(&dlm_pool_lock);
	if (dlm_pool) {
		first = bitmap_find_next_zero_area(dlm_pool_used, dlm_pool_nr,
						   0, nr_pages, 0);
		if (first < dlm_pool_nr) {
			bitmap_set(dlm_pool_used, first, nr_pages);
			ret = first;
		}
	}
	mutex_unlock(&dlm_pool_lock);
	return ret;
}

void dlm_pool_region_free(unsigned long first, unsigned long nr_pages)
{
	mutex_lock(&dlm_pool_lock);
	bitmap_clear(dlm_pool_used, first, nr_pages);
	mutex_unlock(&dlm_pool_lock);
}

/*
 * The pool pages from @first on.  Valid while the caller owns a region
 * there: a pool with regions in use is never freed or replaced.
 */
struct page **dlm_pool_pages(unsigned long first)
{
	return dlm_pool + first;
}

/*
 * mmap of window 0 by the daemon: the whole pool, mapped at once.  Only
 * while a daemon is registered: the pool outlives a daemon (spaces keep
 * their resident pages in it), and nobody else has business seeing it.
 */
int dlm_pool_mmap(struct vm_area_struct *vma)
{
	unsigned long nr = vma_pages(vma), done = 0;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (!dlm_daemon_port()) {
		pr_debug("pool mmap: no daemon registered, register first (DLM_NL_CMD_REGISTER)\n");
		return -EINVAL;
	}
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;

	mutex_lock(&dlm_pool_lock);
	if (!dlm_pool || vma->vm_pgoff > dlm_pool_nr ||
	    nr > dlm_pool_nr - vma->vm_pgoff) {
		pr_debug("pool mmap: no pool or range beyond it, register first (DLM_NL_CMD_REGISTER)\n");
		ret = -EINVAL;
		goto unlock;
	}
	vm_flags_set(vma, VM_MIXEDMAP | VM_DONTEXPAND | VM_DONTDUMP |
			  VM_DONTCOPY);
	ret = dlm_insert_frames(vma, vma->vm_start, dlm_pool + vma->vm_pgoff,
				nr, &done);
unlock:
	mutex_unlock(&dlm_pool_lock);
	return ret;
}

void dlm_pool_exit(void)
{
	mutex_lock(&dlm_pool_lock);
	if (dlm_pool)
		dlm_pool_free_locked();
	mutex_unlock(&dlm_pool_lock);
}

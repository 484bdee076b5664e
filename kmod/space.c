// SPDX-License-Identifier: GPL-2.0
/*
 * DLM spaces: the table of resident DLM pages and their local frames.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/idr.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "dlmem.h"

static DEFINE_IDA(dlm_space_ida);

atomic64_t dlm_spaces_live = ATOMIC64_INIT(0);
atomic64_t dlm_frames_live = ATOMIC64_INIT(0);

struct dlm_space *dlm_space_create(const struct dlm_setup *setup,
				   struct address_space *mapping)
{
	struct dlm_space *sp;
	int id;

	sp = kzalloc(sizeof(*sp), GFP_KERNEL);
	if (!sp)
		return ERR_PTR(-ENOMEM);

	/* Window 0 is never used, so offset 0 is never a valid mapping. */
	id = ida_alloc_range(&dlm_space_ida, 1, DLM_SPACES_MAX - 1, GFP_KERNEL);
	if (id < 0) {
		kfree(sp);
		return ERR_PTR(id == -ENOSPC ? -EMFILE : id);
	}

	kref_init(&sp->ref);
	mutex_init(&sp->lock);
	init_waitqueue_head(&sp->wq);
	xa_init(&sp->dpages);
	sp->mapping = mapping;
	sp->id = id;
	sp->base_pgoff = (unsigned long)id << (DLM_SPACE_SHIFT - PAGE_SHIFT);
	sp->page_size = setup->page_size;
	sp->ppd = setup->page_size >> PAGE_SHIFT;
	sp->nr_dpages = div64_u64(setup->total_size, setup->page_size);
	sp->budget_dpages = div64_u64(setup->local_budget, setup->page_size);
	sp->backing = setup->backing;
	sp->policy = setup->policy;
	sp->protocol = setup->protocol;
	atomic64_inc(&dlm_spaces_live);
	return sp;
}

static void dlm_dpage_free(struct dlm_dpage *dp)
{
	unsigned int i;

	for (i = 0; i < dp->nr_frames; i++) {
		if (!dp->frames[i])
			break;
		put_page(dp->frames[i]);
		atomic64_dec(&dlm_frames_live);
	}
	kvfree(dp);
}

/*
 * The last reference is gone: the owning file was released (so no vma maps
 * the space) and no request to the daemon is in flight for it.
 */
static void dlm_space_release(struct kref *ref)
{
	struct dlm_space *sp = container_of(ref, struct dlm_space, ref);
	struct dlm_dpage *dp;
	unsigned long dpn;

	if (sp->backing == DLM_BACKING_REMOTE) {
		dlm_remote_teardown(sp);
	} else {
		xa_for_each(&sp->dpages, dpn, dp) {
			dlm_dpage_free(dp);
			cond_resched();
		}
	}
	xa_destroy(&sp->dpages);
	if (sp->charged)
		dlm_user_uncharge(sp->owner, sp->nr_dpages * sp->page_size,
				  sp->budget_dpages * sp->page_size);
	ida_free(&dlm_space_ida, sp->id);
	mutex_destroy(&sp->lock);
	kfree(sp);
	atomic64_dec(&dlm_spaces_live);
}

void dlm_space_put(struct dlm_space *sp)
{
	kref_put(&sp->ref, dlm_space_release);
}

/* Drop every page-table entry of DLM page @dpn, in every process. */
void dlm_space_unmap_dpage(struct dlm_space *sp, u64 dpn)
{
	loff_t start = (loff_t)(sp->base_pgoff + dpn * sp->ppd) << PAGE_SHIFT;

	unmap_mapping_range(sp->mapping, start, sp->page_size, 1);
}

#ifdef CONFIG_X86
/* Test and clear the accessed bit of one page-table entry (PTE lock held). */
static int dlm_pte_test_clear_young(pte_t *pte, unsigned long addr,
				    void *young)
{
	/*
	 * Atomically, as x86's ptep_test_and_clear_young() (not exported)
	 * does: the CPU may set the dirty bit of this entry meanwhile.  No
	 * TLB flush, as ptep_clear_flush_young() on x86: a cached
	 * translation only delays the next accessed bit.
	 */
	if (pte_young(ptep_get(pte)) &&
	    test_and_clear_bit(_PAGE_BIT_ACCESSED, (unsigned long *)&pte->pte))
		*(bool *)young = true;
	return 0;
}

/* Is the entry dirty?  Only read: the CPU may set the bit meanwhile. */
static int dlm_pte_test_dirty(pte_t *pte, unsigned long addr, void *dirty)
{
	if (pte_dirty(ptep_get(pte)))
		*(bool *)dirty = true;
	return 0;
}

/*
 * Apply @fn to DLM page @dpn's page-table entries, in every process that
 * maps it; true if it said so for any.  Walks the vmas of
 * sp->mapping as unmap_mapping_range() does, and under the same lock,
 * which keeps each vma's page tables from being freed (the kernel's
 * vma_interval_tree_foreach() is not exported: the tree is walked in
 * order of first file offset).  The mapping may not change, so a page
 * referenced this way keeps its entries: the next access costs nothing.
 */
static bool dlm_space_walk_ptes(struct dlm_space *sp, u64 dpn,
				pte_fn_t fn)
{
	unsigned long first = sp->base_pgoff + dpn * sp->ppd;
	unsigned long last = first + sp->ppd - 1;
	struct address_space *mapping = sp->mapping;
	struct vm_area_struct *vma;
	unsigned long start, end, addr;
	struct rb_node *node;
	bool hit = false;

	i_mmap_lock_read(mapping);
	for (node = rb_first_cached(&mapping->i_mmap); node;
	     node = rb_next(node)) {
		vma = rb_entry(node, struct vm_area_struct, shared.rb);
		if (vma->vm_pgoff > last)
			break;
		end = vma->vm_pgoff + vma_pages(vma);
		if (end <= first)
			continue;
		start = max(first, vma->vm_pgoff);
		end = min(last + 1, end);
		addr = vma->vm_start + ((start - vma->vm_pgoff) << PAGE_SHIFT);
		apply_to_existing_page_range(vma->vm_mm, addr,
					     (end - start) << PAGE_SHIFT, fn, &hit);
	}
	i_mmap_unlock_read(mapping);
	return hit;
}

/* Test and clear the accessed bits of DLM page @dpn; true if any was set. */
bool dlm_space_test_clear_young(struct dlm_space *sp, u64 dpn)
{
	return dlm_space_walk_ptes(sp, dpn, dlm_pte_test_clear_young);
}

/* Was DLM page @dpn written through an entry still mapped? */
bool dlm_space_test_dirty(struct dlm_space *sp, u64 dpn)
{
	return dlm_space_walk_ptes(sp, dpn, dlm_pte_test_dirty);
}
#else
/* No atomic accessed-bit clear here: unmap, so the next access faults. */
bool dlm_space_test_clear_young(struct dlm_space *sp, u64 dpn)
{
	dlm_space_unmap_dpage(sp, dpn);
	return false;
}

/* Not looked at here: taken for written. */
bool dlm_space_test_dirty(struct dlm_space *sp, u64 dpn)
{
	return true;
}
#endif

static struct dlm_dpage *dlm_dpage_alloc(unsigned int ppd)
{
	struct dlm_dpage *dp;
	unsigned int i;

	dp = kvzalloc(struct_size(dp, frames, ppd), GFP_KERNEL_ACCOUNT);
	if (!dp)
		return NULL;
	dp->nr_frames = ppd;
	for (i = 0; i < ppd; i++) {
		dp->frames[i] = alloc_page(GFP_HIGHUSER | __GFP_ZERO |
					   __GFP_ACCOUNT);
		if (!dp->frames[i]) {
			dlm_dpage_free(dp);
			return NULL;
		}
		atomic64_inc(&dlm_frames_live);
	}
	return dp;
}

/*
 * Return the resident DLM page @dpn, materialising it zero-filled on first
 * touch.  Called with sp->lock held.  On failure returns NULL and sets @ret
 * to the fault code to return.
 */
struct dlm_dpage *dlm_space_get_dpage(struct dlm_space *sp, u64 dpn,
				      vm_fault_t *ret)
{
	struct dlm_dpage *dp;
	int err;

	lockdep_assert_held(&sp->lock);

	dp = xa_load(&sp->dpages, dpn);
	if (dp)
		return dp;

	if (sp->nr_resident >= sp->budget_dpages) {
		/* DLM_BACKING_LOCAL: nowhere to evict to. */
		dlm_count(&sp->sigbus, &dlm_totals.sigbus);
		pr_warn_ratelimited("pid %d (%s): local budget of %llu bytes exhausted with no remote backing, sending SIGBUS (raise dlm_setup.local_budget or use DLM_BACKING_REMOTE)\n",
				    task_pid_nr(current), current->comm,
				    sp->budget_dpages * sp->page_size);
		*ret = VM_FAULT_SIGBUS;
		return NULL;
	}

	dp = dlm_dpage_alloc(sp->ppd);
	if (!dp) {
		*ret = VM_FAULT_OOM;
		return NULL;
	}

	err = xa_err(xa_store(&sp->dpages, dpn, dp, GFP_KERNEL_ACCOUNT));
	if (err) {
		dlm_dpage_free(dp);
		*ret = VM_FAULT_OOM;
		return NULL;
	}
	sp->nr_resident++;
	dlm_count(&sp->populates, &dlm_totals.populates);
	return dp;
}

void dlm_space_stats(struct dlm_space *sp, struct dlm_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->faults = atomic64_read(&sp->faults);
	st->populates = atomic64_read(&sp->populates);
	st->sigbus = atomic64_read(&sp->sigbus);
	mutex_lock(&sp->lock);
	st->dpages_resident = sp->nr_resident;
	mutex_unlock(&sp->lock);
	st->bytes_resident = st->dpages_resident * sp->page_size;
	st->bytes_mapped = atomic64_read(&sp->bytes_mapped);
	st->swapins = atomic64_read(&sp->swapins);
	st->swapouts = atomic64_read(&sp->swapouts);
	st->lost = atomic64_read(&sp->lost);
	st->drops = atomic64_read(&sp->drops);
	st->store_waits = atomic64_read(&sp->store_waits);
	st->readaheads = atomic64_read(&sp->readaheads);
	st->same_filled = atomic64_read(&sp->same_filled);
}

void dlm_space_exit(void)
{
	ida_destroy(&dlm_space_ida);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Mapping DLM spaces into processes: mmap and the fault handler.
 *
 * A fault resolves a whole DLM page: every CPU page of it that the faulting
 * vma covers is inserted into the page tables at once, so a sequential scan
 * of a 1 MB DLM page takes one fault, not 256.  Local spaces find their
 * frames here; remote spaces go through remote.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/math64.h>
#include <linux/mm.h>

#include "compat.h"
#include "dlmem.h"

/*
 * Insert @count frames at @addr, skipping CPU pages another thread of the
 * same process mapped first (vm_insert_pages() stops at them with -EBUSY).
 */
int dlm_insert_frames(struct vm_area_struct *vma, unsigned long addr,
		      struct page **frames, unsigned long count,
		      unsigned long *inserted)
{
	while (count) {
		unsigned long left = count;
		unsigned long done;
		int err;

		err = vm_insert_pages(vma, addr, frames, &left);
		done = count - left;
		*inserted += done;
		if (!err)
			return 0;
		if (err != -EBUSY)
			return err;
		done++;		/* step over the page that is already mapped */
		addr += done << PAGE_SHIFT;
		frames += done;
		count -= done;
	}
	return 0;
}

/*
 * Map the part of DLM page @dpn, whose frames are @frames, that the
 * faulting vma covers.  Called with sp->lock held.
 */
vm_fault_t dlm_map_frames(struct vm_fault *vmf, struct dlm_space *sp, u64 dpn,
			  struct page **frames)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long vma_first = vma->vm_pgoff - sp->base_pgoff;
	unsigned long vma_end = vma_first + vma_pages(vma);
	unsigned long first, end, inserted = 0;
	int err;

	first = max_t(unsigned long, dpn * sp->ppd, vma_first);
	end = min_t(unsigned long, (dpn + 1) * sp->ppd, vma_end);

	err = dlm_insert_frames(vma,
				vma->vm_start + ((first - vma_first) << PAGE_SHIFT),
				frames + (first - dpn * sp->ppd), end - first,
				&inserted);
	if (err)
		return err == -ENOMEM ? VM_FAULT_OOM : VM_FAULT_SIGBUS;
	if (inserted) {
		dlm_count(&sp->faults, &dlm_totals.faults);
		atomic64_add((u64)inserted << PAGE_SHIFT, &sp->bytes_mapped);
	}
	return VM_FAULT_NOPAGE;
}

static vm_fault_t dlm_vm_fault(struct vm_fault *vmf)
{
	struct dlm_space *sp = vmf->vma->vm_private_data;
	struct dlm_dpage *dp;
	vm_fault_t ret;
	u64 dpn;

	dpn = div_u64(vmf->pgoff - sp->base_pgoff, sp->ppd);
	if (sp->backing == DLM_BACKING_REMOTE)
		return dlm_remote_fault(vmf, sp, dpn);

	mutex_lock(&sp->lock);
	dp = dlm_space_get_dpage(sp, dpn, &ret);
	if (dp)
		ret = dlm_map_frames(vmf, sp, dpn, dp->frames);
	mutex_unlock(&sp->lock);
	return ret;
}

static const struct vm_operations_struct dlm_vm_ops = {
	.fault = dlm_vm_fault,
};

int dlm_space_mmap(struct dlm_space *sp, struct vm_area_struct *vma)
{
	unsigned long total_pages = sp->nr_dpages * sp->ppd;

	/* VM_MAYSHARE: a MAP_SHARED of a read-only file has no VM_SHARED. */
	if (!(vma->vm_flags & VM_MAYSHARE)) {
		pr_debug("mmap: MAP_PRIVATE refused, use MAP_SHARED\n");
		return -EINVAL;
	}
	if (vma->vm_pgoff < sp->base_pgoff ||
	    vma->vm_pgoff - sp->base_pgoff > total_pages ||
	    vma_pages(vma) > total_pages - (vma->vm_pgoff - sp->base_pgoff)) {
		pr_debug("mmap: range outside the space, use offset dlm_setup.mmap_offset and length <= total_size\n");
		return -EINVAL;
	}

	/*
	 * VM_MIXEDMAP: frames are refcounted pages (pin_user_pages() accepts
	 * them).  VM_DONTEXPAND: mremap() may not grow past the space.
	 * VM_DONTDUMP: a core dump must not fault in the whole space.
	 */
	vm_flags_set(vma, VM_MIXEDMAP | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &dlm_vm_ops;
	vma->vm_private_data = sp;
	return 0;
}

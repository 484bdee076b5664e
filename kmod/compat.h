/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels dlmem.ko builds against (6.1 and later).
 * Kbuild probes the kernel's headers for each feature (DLM_HAVE_*) rather
 * than comparing version numbers, so backports are picked up too.
 */
#ifndef _DLMEM_COMPAT_H
#define _DLMEM_COMPAT_H

#include <linux/mm.h>

#ifndef DLM_HAVE_VM_FLAGS_SET	/* added in 6.3 */
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

/*
 * Drop the lock a fault holds before returning VM_FAULT_RETRY: the mmap
 * lock, or (6.4+) the per-VMA lock.  Before release_fault_lock() existed
 * faults always held the mmap lock.
 */
#ifndef DLM_HAVE_RELEASE_FAULT_LOCK
static inline void release_fault_lock(struct vm_fault *vmf)
{
	mmap_read_unlock(vmf->vma->vm_mm);
}
#endif

/*
 * Page-table entries mapping order-0 @page.  page_mapcount() went in 6.13;
 * folio_mapcount() is inline (usable by modules) since 6.10.
 */
#ifdef DLM_HAVE_INLINE_FOLIO_MAPCOUNT
static inline int dlm_page_mapcount(struct page *page)
{
	return folio_mapcount(page_folio(page));
}
#else
static inline int dlm_page_mapcount(struct page *page)
{
	return page_mapcount(page);
}
#endif

#endif /* _DLMEM_COMPAT_H */

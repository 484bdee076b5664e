// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/fmpl: user ranges pinned by their owner, and the one copy of a
 * message between the current process's memory and pinned pages.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "fmpl.h"

/*
 * Pin [uaddr, uaddr + size) of the current process.  Long-term pins are for
 * the areas registered once (matching, flag, spool); a message buffer is
 * pinned only while its request is outstanding.
 */
int fmpl_pin(struct fmpl_pages *pg, u64 uaddr, u64 size, bool writable,
	     bool longterm)
{
	unsigned int flags = (writable ? FOLL_WRITE : 0) |
			     (longterm ? FOLL_LONGTERM : 0);
	unsigned long start = uaddr & PAGE_MASK;
	unsigned int n, done = 0;
	int ret;

	memset(pg, 0, sizeof(*pg));
	if (!size)
		return 0;
	if (uaddr + size < uaddr || !access_ok(u64_to_user_ptr(uaddr), size))
		return -EFAULT;

	n = (PAGE_ALIGN(uaddr + size) - start) >> PAGE_SHIFT;
	pg->pages = kvmalloc_array(n, sizeof(*pg->pages), GFP_KERNEL);
	if (!pg->pages)
		return -ENOMEM;
	while (done < n) {
		ret = pin_user_pages_fast(start + ((unsigned long)done << PAGE_SHIFT),
					  n - done, flags, pg->pages + done);
		if (ret <= 0) {
			ret = ret ? ret : -EFAULT;
			goto unpin;
		}
		done += ret;
	}
	pg->npages = n;
	pg->offset = offset_in_page(uaddr);
	pg->size = size;
	pg->writable = writable;
	return 0;

unpin:
	if (done)
		unpin_user_pages(pg->pages, done);
	kvfree(pg->pages);
	pg->pages = NULL;
	return ret;
}

void fmpl_unpin(struct fmpl_pages *pg)
{
	if (!pg->pages)
		return;
	/* Pages written by the kernel were dirtied when written. */
	unpin_user_pages(pg->pages, pg->npages);
	kvfree(pg->pages);
	pg->pages = NULL;
	pg->npages = 0;
}

/* A kernel mapping of a pinned area, for the small areas written often. */
void *fmpl_vmap(struct fmpl_pages *pg)
{
	void *va = vmap(pg->pages, pg->npages, VM_MAP, PAGE_KERNEL);

	return va ? va + pg->offset : NULL;
}

/* Copy @n bytes from the current process's @src into @dst's pages. */
int fmpl_copy_to_pages(struct fmpl_pages *dst, const void __user *src, u64 n)
{
	unsigned int i, off = dst->offset;
	u64 done = 0;

	for (i = 0; done < n; i++, off = 0) {
		size_t len = min_t(u64, PAGE_SIZE - off, n - done);
		void *va = kmap_local_page(dst->pages[i]);
		unsigned long left = copy_from_user(va + off, src + done, len);

		kunmap_local(va);
		flush_dcache_page(dst->pages[i]);
		set_page_dirty_lock(dst->pages[i]);
		if (left)
			return -EFAULT;
		done += len;
	}
	return 0;
}

/* Copy @n bytes from @src's pages to the current process's @dst. */
int fmpl_copy_from_pages(void __user *dst, struct fmpl_pages *src, u64 n)
{
	unsigned int i, off = src->offset;
	u64 done = 0;

	for (i = 0; done < n; i++, off = 0) {
		size_t len = min_t(u64, PAGE_SIZE - off, n - done);
		void *va = kmap_local_page(src->pages[i]);
		unsigned long left = copy_to_user(dst + done, va + off, len);

		kunmap_local(va);
		if (left)
			return -EFAULT;
		done += len;
	}
	return 0;
}

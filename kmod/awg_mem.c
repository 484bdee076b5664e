// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/awgstar: the replica of the shared region, its user mappings, and
 * the capture of pointer stores.
 *
 * The region is ordinary pages, mapped into programs by ->fault.  Shared
 * writable mappings are write-notified (the vma has ->page_mkwrite), so
 * the first store to a clean page faults: ->page_mkwrite keeps a copy of
 * the page (its twin, what the other nodes hold) and queues the page on
 * the dirty list.  At a token visit awg_publish() write-protects the page
 * again (folio_mkclean(), as fb_defio does), compares it with its twin and
 * sends the bytes that differ as frames.  This is the board's pointer
 * access made page-granular: stores between two visits are combined.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/rmap.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "awgstar.h"
#include "compat.h"

int awg_mem_init(struct awg_board *b, u64 size)
{
	unsigned long i;

	b->size = size;
	b->npages = size >> PAGE_SHIFT;
	b->pages = kvcalloc(b->npages, sizeof(*b->pages), GFP_KERNEL);
	if (!b->pages)
		return -ENOMEM;
	b->ps = kvcalloc(b->npages, sizeof(*b->ps), GFP_KERNEL);
	if (!b->ps)
		goto free_pages;
	for (i = 0; i < b->npages; i++) {
		struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);

		if (!page)
			goto free_pages;
		/* For folio_mkclean(): the rmap walk starts from these. */
		page->mapping = b->inode->i_mapping;
		page->index = i;
		b->pages[i] = page;
		INIT_LIST_HEAD(&b->ps[i].dirty);
		cond_resched();
	}
	return 0;

free_pages:
	awg_mem_exit(b);
	return -ENOMEM;
}

void awg_mem_exit(struct awg_board *b)
{
	unsigned long i;

	for (i = 0; b->pages && i < b->npages; i++) {
		if (!b->pages[i])
			continue;
		b->pages[i]->mapping = NULL;
		ClearPageDirty(b->pages[i]);
		__free_page(b->pages[i]);
	}
	for (i = 0; b->ps && i < b->npages; i++)
		kfree(b->ps[i].twin);
	kvfree(b->ps);
	kvfree(b->pages);
	b->ps = NULL;
	b->pages = NULL;
}

static vm_fault_t awg_fault(struct vm_fault *vmf)
{
	struct awg_board *b = vmf->vma->vm_private_data;
	struct page *page;

	if (vmf->pgoff >= b->npages)
		return VM_FAULT_SIGBUS;
	page = b->pages[vmf->pgoff];
	get_page(page);
	vmf->page = page;
	return 0;
}

/* The first store to a clean page: keep its twin, queue it as dirty. */
static vm_fault_t awg_page_mkwrite(struct vm_fault *vmf)
{
	struct awg_board *b = vmf->vma->vm_private_data;
	struct page *page = vmf->page;
	struct awg_pstate *ps;
	void *twin, *va;

	if (page->index >= b->npages || b->pages[page->index] != page)
		return VM_FAULT_SIGBUS;
	ps = &b->ps[page->index];
	lock_page(page);
	if (ps->twin)
		return VM_FAULT_LOCKED;
	twin = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!twin) {
		unlock_page(page);
		return VM_FAULT_OOM;
	}
	va = kmap_local_page(page);
	memcpy(twin, va, PAGE_SIZE);
	kunmap_local(va);
	spin_lock(&b->lock);
	ps->twin = twin;
	ps->ticket = ++b->ticket_next;
	list_add_tail(&ps->dirty, &b->dirty);
	spin_unlock(&b->lock);
	if (!b->ring_file)
		mod_delayed_work(system_wq, &b->publish_work, msecs_to_jiffies(20));
	wake_up(&b->work_wq);
	return VM_FAULT_LOCKED;
}

static const struct vm_operations_struct awg_vm_ops = {
	.fault = awg_fault,
	.page_mkwrite = awg_page_mkwrite,
};

int awg_mmap(struct awg_board *b, struct vm_area_struct *vma)
{
	/* A private copy would never reach the ring. */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_pgoff >= b->npages ||
	    vma_pages(vma) > b->npages - vma->vm_pgoff)
		return -EINVAL;
	vma->vm_ops = &awg_vm_ops;
	vma->vm_private_data = b;
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return 0;
}

bool awg_has_dirty(struct awg_board *b)
{
	return !list_empty_careful(&b->dirty);
}

/* The frame for [start, end) of page idx; the twin learns what was sent. */
static int awg_publish_run(struct awg_board *b, unsigned long idx, u8 *va,
			   u8 *twin, unsigned int start, unsigned int end,
			   u8 **pos, u8 *tend)
{
	int ret;

	ret = awg_emit(b, pos, tend, AWG_FRAME_DATA,
		       ((u64)idx << PAGE_SHIFT) + start, 0, va + start,
		       end - start);
	if (!ret)
		memcpy(twin + start, va + start, end - start);
	return ret;
}

/*
 * Diff one page against its twin in 8-byte words; runs closer than 32
 * bytes are merged, a run is cut at AWG_FRAME_DATA_MAX.  Returns true when
 * nothing is left to send.  Sending unchanged bytes inside a run is safe:
 * this node has applied every frame ahead of its own on the token.
 */
static bool awg_publish_page(struct awg_board *b, unsigned long idx, u8 *va,
			     u8 *twin, u8 **pos, u8 *tend, unsigned int *left)
{
	const unsigned int words = PAGE_SIZE / 8;
	u64 *p = (u64 *)va, *t = (u64 *)twin;
	unsigned int w = 0, s, e, gap;

	while (w < words) {
		while (w < words && p[w] == t[w])
			w++;
		if (w == words)
			return true;
		if (!*left)
			return false;
		s = w;
		e = ++w;
		for (gap = 0; w < words && (w - s) * 8 < AWG_FRAME_DATA_MAX &&
		     gap < 4; w++) {
			if (p[w] != t[w]) {
				e = w + 1;
				gap = 0;
			} else {
				gap++;
			}
		}
		w = e;
		if (awg_publish_run(b, idx, va, twin, s * 8, e * 8, pos, tend))
			return false;
		(*left)--;
	}
	return true;
}

/*
 * Publish pointer stores, oldest dirty page first, in at most `budget`
 * frames.  Called with visit_mutex held.  Returns the frames appended.
 */
unsigned int awg_publish(struct awg_board *b, u8 **pos, u8 *end,
			 unsigned int budget)
{
	unsigned int left = budget;

	while (left) {
		struct awg_pstate *ps;
		unsigned long idx;
		struct page *page;
		bool done;
		void *twin;
		u8 *va;

		spin_lock(&b->lock);
		ps = list_first_entry_or_null(&b->dirty, struct awg_pstate,
					      dirty);
		spin_unlock(&b->lock);
		if (!ps)
			break;
		idx = ps - b->ps;
		page = b->pages[idx];
		lock_page(page);
		/* Stores from now on fault into page_mkwrite, which waits. */
		folio_mkclean(page_folio(page));
		va = kmap_local_page(page);
		done = awg_publish_page(b, idx, va, ps->twin, pos, end, &left);
		kunmap_local(va);
		twin = NULL;
		if (done) {
			spin_lock(&b->lock);
			list_del_init(&ps->dirty);
			twin = ps->twin;
			ps->twin = NULL;
			b->stats.pio_pages++;
			spin_unlock(&b->lock);
		}
		unlock_page(page);
		kfree(twin);
		if (!done)
			break;
	}
	return budget - left;
}

/*
 * Apply a frame to the replica.  A frame of another node (!own): bytes
 * this node has stored and not yet published keep their value (its frame
 * will come later on the token, so every node ends with it); the twin
 * takes the frame's bytes either way.  A DMA write of this node (own),
 * applied as its frame goes on the token, overwrites page and twin.
 */
void awg_apply(struct awg_board *b, u64 addr, const u8 *data, u32 len,
	       bool own)
{
	while (len) {
		unsigned long idx = addr >> PAGE_SHIFT;
		unsigned int off = offset_in_page(addr);
		unsigned int n = min_t(u64, len, PAGE_SIZE - off);
		struct page *page = b->pages[idx];
		u8 *va, *twin;
		unsigned int i;

		lock_page(page);
		twin = b->ps[idx].twin;
		va = kmap_local_page(page);
		if (twin && !own) {
			/*
			 * A page with a twin may be mapped writable: protect
			 * it first, or a store between our compare and our
			 * write would be overwritten and, the twin agreeing,
			 * never published.  (Our own DMA write just overwrites,
			 * as a store made before it would be.)
			 */
			folio_mkclean(page_folio(page));
			for (i = 0; i < n; i++) {
				if (va[off + i] == twin[off + i])
					va[off + i] = data[i];
				twin[off + i] = data[i];
			}
		} else {
			memcpy(va + off, data, n);
			if (twin)
				memcpy(twin + off, data, n);
		}
		kunmap_local(va);
		unlock_page(page);
		addr += n;
		data += n;
		len -= n;
	}
}

int awg_read_region(struct awg_board *b, u64 off, void __user *buf, u64 len)
{
	while (len) {
		unsigned int poff = offset_in_page(off);
		unsigned int n = min_t(u64, len, PAGE_SIZE - poff);
		unsigned long left;
		void *va;

		va = kmap_local_page(b->pages[off >> PAGE_SHIFT]);
		left = copy_to_user(buf, va + poff, n);
		kunmap_local(va);
		if (left)
			return -EFAULT;
		buf += n;
		off += n;
		len -= n;
		cond_resched();
	}
	return 0;
}

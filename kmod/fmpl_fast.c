// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/fmpl: the fast area, an XPMEM-style mapping shared by the ranks of
 * a world in which libfmpl moves small messages with no system call.  The
 * kernel does not interpret the slots: it zeroes the area, marks a rank's
 * departure in it, and offers a futex-like sleep on one of its words, so
 * that a process waiting for a peer neither spins forever nor misses the
 * peer's death.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": fmpl: " fmt

#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "fmpl.h"

int fmpl_fast_mmap(struct fmpl_ep *ep, struct vm_area_struct *vma)
{
	struct fmpl_world *w = ep->world;

	if (!w->fast)
		return -ENODEV;
	if (vma->vm_pgoff || !(vma->vm_flags & VM_SHARED) ||
	    vma->vm_end - vma->vm_start > PAGE_ALIGN(w->fast_bytes))
		return -EINVAL;
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return remap_vmalloc_range(vma, w->fast, 0);
}

static bool fmpl_fast_woken(struct fmpl_world *w, const u32 *word, u32 value,
			    u32 peer)
{
	return READ_ONCE(*word) != value || READ_ONCE(w->eps[peer]->dead);
}

int fmpl_fast_wait(struct fmpl_ep *ep, const struct fmpl_fast_wait *fw)
{
	struct fmpl_world *w = ep->world;
	const u32 *word;
	long left;

	if (!w->fast)
		return -ENODEV;
	if (!IS_ALIGNED(fw->offset, sizeof(u32)) ||
	    fw->offset > w->fast_bytes - sizeof(u32) || fw->peer >= w->size)
		return -EINVAL;
	word = w->fast + fw->offset;
	if (fw->timeout_ms) {
		left = msecs_to_jiffies(fw->timeout_ms);
		left = wait_event_killable_timeout(ep->wq,
						   fmpl_fast_woken(w, word, fw->value, fw->peer),
						   left);
		if (left < 0)
			return -EINTR;
	} else if (wait_event_killable(ep->wq,
				       fmpl_fast_woken(w, word, fw->value, fw->peer))) {
		return -EINTR;
	}
	if (READ_ONCE(*word) != fw->value)
		return 0;
	return READ_ONCE(w->eps[fw->peer]->dead) ? -ECONNRESET : -ETIMEDOUT;
}

int fmpl_fast_wake(struct fmpl_ep *ep, const struct fmpl_fast_wake *fk)
{
	struct fmpl_world *w = ep->world;

	if (!w->fast)
		return -ENODEV;
	if (fk->rank >= w->size)
		return -EINVAL;
	wake_up_all(&w->eps[fk->rank]->wq);
	return 0;
}

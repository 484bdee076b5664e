// SPDX-License-Identifier: GPL-2.0
/*
 * The frame pool: the frames remote spaces keep their resident DLM pages
 * in.  The registered daemon maps all of it (window 0 of /dev/dlm), so a
 * transport reads a fetched DLM page straight into the frames that the
 * fault handler then maps into the program, and sends a victim straight
 * from them.  Each remote space owns one contiguous region of the pool,
 * its local budget, for as long as it exists.
 *
 * A frame mapped into a program can be referenced by other kernel users
 * (vmsplice() into a pipe, O_DIRECT I/O, an RDMA memory region): such a
 * frame must not take another DLM page's data while they hold it.  Its
 * reference count says so, once the page tables' references (its map
 * count) and the daemon's own are taken away.  The daemon maps the whole
 * pool and, with the verbs transport, pins it whole, once per memory
 * region; those pins are measured on the witness, one page past the
 * frames that the daemon maps and pins with them but no space ever uses.
 * A frame held when its space is freed stays out of use until it is let
 * go (dlm_pool_held).
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
static struct page **dlm_pool;	/* nr frames, then the witness */
static unsigned long *dlm_pool_used;	/* bitmap of frames given to spaces */
static unsigned long *dlm_pool_held;	/* used: held after their space went */
static unsigned long dlm_pool_nr;	/* frames, not counting the witness */

/* References on @page beyond those of the page tables that map it. */
static int dlm_frame_extra(struct page *page)
{
	return page_ref_count(page) - dlm_page_mapcount(page);
}

/*
 * Does another kernel user hold @page?  @base: dlm_frame_extra() of the
 * witness, the pool's own reference and the daemon's pins.  Pins count
 * GUP_PIN_COUNTING_BIAS each: while the daemon registers or releases a
 * memory region, frames on either side of its sweep differ from the
 * witness by such multiples, and a plain reference still shows.
 */
static bool dlm_frame_held(struct page *page, int base)
{
	int extra = dlm_frame_extra(page);

	return extra > base || (base - extra) % GUP_PIN_COUNTING_BIAS;
}

/*
 * Is any of @frames (@nr of them, in a region the caller owns) held by
 * another kernel user?  Call after unmapping them for an answer that
 * holds: only a page-table entry gives others a way to take a new
 * reference.  A witness that changes meanwhile answers yes: look again.
 */
bool dlm_pool_frames_held(struct page **frames, unsigned long nr)
{
	struct page *witness = dlm_pool[dlm_pool_nr];
	unsigned long i;
	int base;

	if (!READ_ONCE(dlm_pin_check))
		return false;
	/* Counts read after the caller's unmapping, as the zap left them. */
	smp_mb();
	base = dlm_frame_extra(witness);
	for (i = 0; i < nr; i++)
		if (dlm_frame_held(frames[i], base))
			return true;
	/* The witness read again after the frames, not before them. */
	smp_rmb();
	return dlm_frame_extra(witness) != base;
}

/* Give back the frames of freed spaces that nobody holds any more. */
static void dlm_pool_sweep_held_locked(void)
{
	unsigned long i;
	int base;

	if (!dlm_pool || bitmap_empty(dlm_pool_held, dlm_pool_nr))
		return;
	/* As in dlm_pool_frames_held(): counts as the holders left them. */
	smp_mb();
	base = dlm_frame_extra(dlm_pool[dlm_pool_nr]);
	for_each_set_bit(i, dlm_pool_held, dlm_pool_nr) {
		if (READ_ONCE(dlm_pin_check) &&
		    dlm_frame_held(dlm_pool[i], base))
			continue;
		clear_bit(i, dlm_pool_held);
		clear_bit(i, dlm_pool_used);
	}
}

static void dlm_pool_free_locked(void)
{
	unsigned long i;

	/* Frames still held are freed by their last holder. */
	for (i = 0; dlm_pool && i <= dlm_pool_nr; i++)
		if (dlm_pool[i])
			put_page(dlm_pool[i]);
	kvfree(dlm_pool);
	bitmap_free(dlm_pool_held);
	bitmap_free(dlm_pool_used);
	dlm_pool = NULL;
	dlm_pool_used = NULL;
	dlm_pool_held = NULL;
	dlm_pool_nr = 0;
}

/*
 * The daemon asks for a pool of @bytes.  A pool no space uses is (re)made
 * at that size; one in use stays as it is (a restarted daemon gets the
 * pool its predecessor had).  *@granted is the size in force, the witness
 * page included: the size the daemon maps.
 */
int dlm_pool_grant(u64 bytes, u64 *granted)
{
	unsigned long nr = bytes >> PAGE_SHIFT, i;
	int ret = 0;

	mutex_lock(&dlm_pool_lock);
	dlm_pool_sweep_held_locked();
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

	dlm_pool = kvcalloc(nr + 1, sizeof(*dlm_pool), GFP_KERNEL);
	dlm_pool_used = bitmap_zalloc(nr, GFP_KERNEL);
	dlm_pool_held = bitmap_zalloc(nr, GFP_KERNEL);
	if (!dlm_pool || !dlm_pool_used || !dlm_pool_held)
		goto nomem;
	dlm_pool_nr = nr;
	for (i = 0; i <= nr; i++) {
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
	*granted = dlm_pool ? (u64)(dlm_pool_nr + 1) << PAGE_SHIFT : 0;
	mutex_unlock(&dlm_pool_lock);
	return ret;
}

/* First pool page of a free run of @nr_pages, or -ENOMEM. */
long dlm_pool_region_alloc(unsigned long nr_pages)
{
	unsigned long first;
	long ret = -ENOMEM;

	mutex_lock(&dlm_pool_lock);
	dlm_pool_sweep_held_locked();
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

/*
 * A space gives its region back: no page table maps it any more.  Frames
 * that other kernel users still hold stay out of use until they let go.
 */
void dlm_pool_region_free(unsigned long first, unsigned long nr_pages)
{
	unsigned long i, held = 0;
	int base;

	mutex_lock(&dlm_pool_lock);
	/* As in dlm_pool_frames_held(): after the space's last unmapping. */
	smp_mb();
	base = dlm_frame_extra(dlm_pool[dlm_pool_nr]);
	for (i = first; i < first + nr_pages; i++) {
		if (READ_ONCE(dlm_pin_check) &&
		    dlm_frame_held(dlm_pool[i], base)) {
			set_bit(i, dlm_pool_held);
			held++;
		} else {
			clear_bit(i, dlm_pool_used);
		}
	}
	mutex_unlock(&dlm_pool_lock);
	if (held)
		pr_info_ratelimited("%lu KiB of a freed space are still referenced by another kernel user (vmsplice, O_DIRECT, RDMA): kept out of the pool until released\n",
				    held << (PAGE_SHIFT - 10));
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
	if (!dlm_pool || vma->vm_pgoff > dlm_pool_nr + 1 ||
	    nr > dlm_pool_nr + 1 - vma->vm_pgoff) {
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

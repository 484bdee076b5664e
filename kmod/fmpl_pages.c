// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/fmpl: user ranges pinned by their owner, and the one copy of a
 * message between the current process's memory and pinned pages.
 */
#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "fmpl.h"

/*
 * Long-term pins count against the process's RLIMIT_MEMLOCK, in its
 * mm->pinned_vm (VmPin in /proc/PID/status), as RDMA memory registrations
 * do; CAP_IPC_LOCK lifts the limit.  The mm is held until the unpin, which
 * may happen after the process has gone.
 */
static int fmpl_charge(struct fmpl_pages *pg, unsigned int n)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct mm_struct *mm = current->mm;

	if (!mm)
		return -EFAULT;
	if (atomic64_add_return(n, &mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(n, &mm->pinned_vm);
		pr_debug("pid %d: pinning %u pages passes RLIMIT_MEMLOCK (%lu pages): raise ulimit -l (memlock in limits.conf)\n",
			 task_pid_nr(current), n, limit);
		return -ENOMEM;
	}
	mmgrab(mm);
	pg->mm = mm;
	return 0;
}

static void fmpl_uncharge(struct fmpl_pages *pg, unsigned int n)
{
	if (!pg->mm)
		return;
	atomic64_sub(n, &pg->mm->pinned_vm);
	mmdrop(pg->mm);
	pg->mm = NULL;
}

/*
 * Pin [uaddr, uaddr + size) of the current process.  Long-term pins are for
 * the areas registered once (matching, flag, spool), charged as above; a
 * message buffer is pinned only while its request is outstanding.
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
	if (longterm) {
		ret = fmpl_charge(pg, n);
		if (ret)
			return ret;
	}
	pg->pages = kvmalloc_array(n, sizeof(*pg->pages), GFP_KERNEL);
	if (!pg->pages) {
		ret = -ENOMEM;
		goto uncharge;
	}
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
uncharge:
	fmpl_uncharge(pg, n);
	return ret;
}

void fmpl_unpin(struct fmpl_pages *pg)
{
	if (!pg->pages)
		return;
	/* Pages written by the kernel were dirtied when written. */
	unpin_user_pages(pg->pages, pg->npages);
	fmpl_uncharge(pg, pg->npages);
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

/*
 * The one copy of a message, between the current process's memory and a
 * peer's pinned pages.  A message of 2 * FMPL_CHUNK or more is copied in
 * chunks that the caller and up to msg_copy_helpers work items take in
 * turn, as KNEM offloads large copies to I/OAT: a helper runs on a CPU the
 * scheduler finds idle (the peer that waits for this very message has
 * usually gone to sleep by then), enters the caller's address space with
 * kthread_use_mm(), as the USB gadget fs does for its user copies, and
 * copies chunks until none are left.  The caller copies chunks too, then
 * takes back the helpers that never started (cancel_work_sync()), so with
 * no idle CPU the copy costs what it did alone.
 *
 * A helper takes no page fault: one on memory whose fault waits for user
 * space (userfaultfd, FUSE) would hold it, and the caller in
 * cancel_work_sync(), beyond the reach of any signal.  It leaves the chunk
 * that would fault to the caller, who takes the fault itself (killably)
 * once the helpers are back, and stops.
 */
#define FMPL_CHUNK	(128U << 10)
#define FMPL_HELPERS_MAX 8

static unsigned int msg_copy_helpers = 3;
module_param(msg_copy_helpers, uint, 0644);
MODULE_PARM_DESC(msg_copy_helpers,
		 "Idle CPUs that may help copy a /dev/fmpl message of 256 KiB or more (0..8, default 3; 0: the copying process alone)");

static struct workqueue_struct *fmpl_copy_wq;

struct fmpl_copy {
	struct fmpl_pages *pg;
	void __user *user;
	u64 n;
	bool to_pages;
	struct mm_struct *mm;
	atomic_t next;		/* next chunk to take */
	int ret;		/* first error, under cmpxchg */
};

struct fmpl_helper {
	struct work_struct work;
	struct fmpl_copy *c;
	u64 left;		/* a chunk left to the caller, or U64_MAX */
};

/*
 * Copy bytes [@pos, @pos + @n) of message @c; @nofault: fail (-EFAULT)
 * rather than take a page fault.
 */
static int fmpl_copy_range(struct fmpl_copy *c, u64 pos, u64 n, bool nofault)
{
	u64 at = c->pg->offset + pos, done = 0;
	unsigned int i = at >> PAGE_SHIFT, off = offset_in_page(at);

	for (; done < n; i++, off = 0) {
		size_t len = min_t(u64, PAGE_SIZE - off, n - done);
		void *va = kmap_local_page(c->pg->pages[i]);
		unsigned long left;

		if (nofault)
			pagefault_disable();
		if (c->to_pages)
			left = copy_from_user(va + off, c->user + pos + done,
					      len);
		else
			left = copy_to_user(c->user + pos + done, va + off,
					    len);
		if (nofault)
			pagefault_enable();
		kunmap_local(va);
		if (c->to_pages) {
			flush_dcache_page(c->pg->pages[i]);
			set_page_dirty_lock(c->pg->pages[i]);
		}
		if (left)
			return -EFAULT;
		done += len;
	}
	return 0;
}

static u64 fmpl_chunk_len(struct fmpl_copy *c, u64 pos)
{
	return min_t(u64, FMPL_CHUNK, c->n - pos);
}

/*
 * Take and copy chunks of @c until there are none left.  With @h, for a
 * helper: without faults, and stop at a chunk that would fault, left in
 * h->left.
 */
static void fmpl_copy_chunks(struct fmpl_copy *c, struct fmpl_helper *h)
{
	u64 pos;
	int ret;

	for (;;) {
		pos = (u64)atomic_inc_return(&c->next) * FMPL_CHUNK;
		if (pos >= c->n)
			return;
		ret = fmpl_copy_range(c, pos, fmpl_chunk_len(c, pos), !!h);
		if (ret && h) {
			h->left = pos;
			return;
		}
		if (ret)
			cmpxchg(&c->ret, 0, ret);
	}
}

static void fmpl_helper_work(struct work_struct *work)
{
	struct fmpl_helper *h = container_of(work, struct fmpl_helper, work);

	kthread_use_mm(h->c->mm);
	fmpl_copy_chunks(h->c, h);
	kthread_unuse_mm(h->c->mm);
}

static int fmpl_copy(struct fmpl_pages *pg, void __user *user, u64 n,
		     bool to_pages)
{
	struct fmpl_copy c = { .pg = pg, .user = user, .n = n,
			       .to_pages = to_pages, .mm = current->mm,
			       .next = ATOMIC_INIT(-1) };
	struct fmpl_helper h[FMPL_HELPERS_MAX];
	unsigned int nh, i;

	nh = min3(READ_ONCE(msg_copy_helpers), num_online_cpus() - 1,
		  (unsigned int)FMPL_HELPERS_MAX);
	nh = min_t(u64, nh, div_u64(n, FMPL_CHUNK) - (n >= FMPL_CHUNK));
	if (!nh || !c.mm || !fmpl_copy_wq)
		return fmpl_copy_range(&c, 0, n, false);
	for (i = 0; i < nh; i++) {
		h[i].c = &c;
		h[i].left = U64_MAX;
		INIT_WORK_ONSTACK(&h[i].work, fmpl_helper_work);
		queue_work(fmpl_copy_wq, &h[i].work);
	}
	fmpl_copy_chunks(&c, NULL);
	for (i = 0; i < nh; i++) {
		/* Not started: nothing left for it.  Running: finishing. */
		cancel_work_sync(&h[i].work);
		destroy_work_on_stack(&h[i].work);
		if (h[i].left != U64_MAX && !c.ret)
			c.ret = fmpl_copy_range(&c, h[i].left,
						fmpl_chunk_len(&c, h[i].left),
						false);
	}
	return c.ret;
}

/* Copy @n bytes from the current process's @src into @dst's pages. */
int fmpl_copy_to_pages(struct fmpl_pages *dst, const void __user *src, u64 n)
{
	return fmpl_copy(dst, (void __user *)src, n, true);
}

/* Copy @n bytes from @src's pages to the current process's @dst. */
int fmpl_copy_from_pages(void __user *dst, struct fmpl_pages *src, u64 n)
{
	return fmpl_copy(src, dst, n, false);
}

int fmpl_copy_init(void)
{
	fmpl_copy_wq = alloc_workqueue("fmpl_copy", WQ_UNBOUND | WQ_HIGHPRI,
				       FMPL_HELPERS_MAX);
	return fmpl_copy_wq ? 0 : -ENOMEM;
}

void fmpl_copy_exit(void)
{
	destroy_workqueue(fmpl_copy_wq);
}

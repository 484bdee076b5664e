// SPDX-License-Identifier: GPL-2.0
/*
 * Remote spaces: DLM pages beyond the local budget live on memory servers,
 * reached through the daemon (genl.c).  A remote space owns budget_dpages
 * slots of pool frames (pool.c); a fault maps a resident DLM page, or
 * takes a free slot (zero-filling a never-touched page, fetching a stored
 * one), or first evicts a victim chosen by the space's policy.
 *
 * Protocols (seeds 000 and 002): SERIAL evicts on demand: store the
 * victim, wait, fetch, wait.  The others keep a reserve of free slots
 * (reserve_dpages, at most a quarter of the budget): a fault that leaves
 * fewer free slots than that stores the next victims.  CROSS does it in
 * the fault and waits for the first such store as well as for its fetch.
 * ASYNC only waits for the fetch: victim choice, unmapping and the stores
 * happen behind it, in a work item on dlm_wq, so the program resumes as
 * soon as its page is in and the next faults find a free slot without
 * waiting for a swap-out.  INLINE (the default) also waits for the fetch
 * only, but chooses and unmaps the victims in the fault, as CROSS does:
 * a worker on another CPU unmapping them must interrupt the program's CPU
 * to flush its TLB (an IPI per victim) and holds the space's lock the
 * while, which costs more than the unmapping itself.
 *
 * Read-ahead (all but SERIAL, budgets of DLM_RA_MIN_BUDGET pages or
 * more): a fault that fetches DLM page N while page N - 1 is resident is
 * taken for a sequential stream, and the next pages (a depth taken from
 * the budget and from pages read ahead in vain, dlm_readahead()) that are
 * stored remotely are fetched too, into free slots, without
 * waiting for them; a fault on one of them waits for its fetch.  The
 * first fault on a page read ahead continues the stream in the same way
 * (the page cache's PG_readahead marker), so a stream keeps its pages
 * coming instead of missing every other one.
 *
 * Clean victims move no data: the page tables pass their dirty bits on to
 * the frames when a DLM page is unmapped, so a page never written since
 * it was zero-filled is simply forgotten (it reads as zeros again), and
 * one never written since a FETCH whose copy the daemon kept
 * (DLM_NL_F_KEPT) is evicted by a DROP, which only asks the daemon to
 * confirm that the copy is still there.
 *
 * Same-filled pages move no data either (with same_filled, as zswap and
 * zram do): a written victim whose every 8-byte word is one value is not
 * stored; a zero page is forgotten as if never touched, any other value
 * goes into the space's table of DLM_FILL_VALS values and the page's entry
 * names it.  Its next fault fills a slot from the table, no daemon asked.
 * Scientific codes keep whole arrays of constants (Himeno's coefficients);
 * a page of any other data differs in its first words, so the scan costs
 * little.  The table counts the entries and slots naming each value, and
 * a value no page holds any more makes room for a new one; a table full
 * of values still held leaves the page to a STORE.
 *
 * A transfer that would pass the owner's max_user_requests is not sent
 * (-EAGAIN): read-ahead and the reserve's refill stop there, and a fault
 * waits as for a busy slot (polling every 10 ms) and looks again.
 *
 * Waiting: a fault that must wait for the daemon drops sp->lock, and the
 * mmap lock when the fault flags allow a retry, then waits killably for at
 * most request_timeout_ms.  A request unanswered that long means the
 * daemon is gone (genl.c fails everything in flight).  A fault with no
 * request of its own to wait for (every slot in transfer, or the quota
 * held by others' requests, which may have no waiter left) polls, and at
 * each look checks the age of every request in flight
 * (dlm_reqs_watchdog()).  So every fault ends within a bounded time:
 * mapped, SIGBUS, or retried after progress.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "compat.h"
#include "dlmem.h"

#define DLM_NO_SLOT	U64_MAX

/* Runs the ASYNC protocol's refills; flushed before the module goes. */
static struct workqueue_struct *dlm_wq;

static void dlm_refill_work(struct work_struct *work);

int dlm_remote_init(void)
{
	dlm_wq = alloc_workqueue("dlmem", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	return dlm_wq ? 0 : -ENOMEM;
}

void dlm_remote_exit(void)
{
	destroy_workqueue(dlm_wq);	/* runs what is queued first */
}

static struct page **dlm_slot_frames(struct dlm_space *sp, u64 k)
{
	return dlm_pool_pages(sp->pool_first + k * sp->ppd);
}

/* Test and clear the dirty bits unmapping passed on to slot @k's frames. */
static bool dlm_slot_test_clear_dirty(struct dlm_space *sp, u64 k)
{
	struct page **frames = dlm_slot_frames(sp, k);
	bool dirty = false;
	unsigned int i;

	for (i = 0; i < sp->ppd; i++)
		if (TestClearPageDirty(frames[i]))
			dirty = true;
	return dirty;
}

/*
 * Value entries need no allocation beyond the xarray's nodes, and
 * replacing an entry needs none: only a first touch can fail (-ENOMEM).
 */
static int dlm_xa_set(struct dlm_space *sp, u64 dpn, unsigned long v)
{
	return xa_err(xa_store(&sp->dpages, dpn, xa_mk_value(v), GFP_KERNEL));
}

/*
 * Fill slot @k's frames with @val repeated (and clear their dirty bits):
 * a first touch (0) or a same-filled page coming back.  Frames a clean
 * page of that value left behind already hold it.  Zero takes the same
 * memset64() (rep stosq) as any value: clear_page() picks rep stosb on
 * ERMS CPUs, which QEMU's TCG runs a byte per iteration (benchmarks.rst).
 */
static void dlm_slot_fill(struct dlm_space *sp, u64 k, u64 val)
{
	struct page **frames = dlm_slot_frames(sp, k);
	unsigned int i;
	u64 *p;

	if (sp->slots[k].holds_val && sp->slots[k].val == val) {
		atomic64_inc(&dlm_totals.fills_reused);
		return;
	}
	for (i = 0; i < sp->ppd; i++) {
		p = kmap_local_page(frames[i]);
		memset64(p, val, PAGE_SIZE / sizeof(u64));
		kunmap_local(p);
	}
	dlm_slot_test_clear_dirty(sp, k);
}

/* Is every 8-byte word of slot @k's frames one value?  If so, set @val. */
static bool dlm_slot_same_filled(struct dlm_space *sp, u64 k, u64 *val)
{
	struct page **frames = dlm_slot_frames(sp, k);
	bool same = true;
	unsigned int i;
	size_t w;
	u64 *p;

	for (i = 0; i < sp->ppd && same; i++) {
		p = kmap_local_page(frames[i]);
		if (!i)
			*val = p[0];
		for (w = 0; w < PAGE_SIZE / sizeof(u64); w++) {
			if (p[w] != *val) {
				same = false;
				break;
			}
		}
		kunmap_local(p);
		if (!(i & 63))
			cond_resched();
	}
	return same;
}

/*
 * The xarray entry for a victim filled with @val: none for zero, else the
 * index of @val in the space's table, which takes a reference for the
 * entry (a free entry takes @val if it is not there), or -1: store it.
 */
static long dlm_fill_entry(struct dlm_space *sp, u64 val)
{
	unsigned int i, unused = DLM_FILL_VALS;

	if (!val)
		return 0;
	for (i = 0; i < DLM_FILL_VALS; i++) {
		if (!sp->fill_refs[i]) {
			if (unused == DLM_FILL_VALS)
				unused = i;
		} else if (sp->fill_vals[i] == val) {
			break;
		}
	}
	if (i == DLM_FILL_VALS) {
		if (unused == DLM_FILL_VALS)
			return -1;
		i = unused;
		sp->fill_vals[i] = val;
	}
	sp->fill_refs[i]++;
	return DLM_XA_FILL0 + i;
}

/*
 * Deepest read-ahead a space's budget holds: one DLM page ahead per
 * DLM_RA_BUDGET_PER_DPAGE slots, at least one.  Three streams in the
 * triad's 9 slots at 10% lost almost a third of their rate with 3 pages
 * ahead; in 19 slots they gained a sixth (Documentation/benchmarks.rst).
 */
static u64 dlm_ra_max(struct dlm_space *sp)
{
	return max_t(u64, div_u64(sp->budget_dpages, DLM_RA_BUDGET_PER_DPAGE),
		     1);
}

int dlm_remote_setup(struct dlm_space *sp)
{
	unsigned long nr = sp->budget_dpages * sp->ppd;
	struct dlm_req *req;
	long first, left;
	int ret;

	if (!dlm_daemon_present(&sp->generation)) {
		pr_debug("DLM_IOC_SETUP: remote backing needs dlmd: start dlmd -f MEMFILE\n");
		return -ENOTCONN;
	}
	first = dlm_pool_region_alloc(nr);
	if (first < 0) {
		pr_debug("DLM_IOC_SETUP: frame pool has no %llu bytes free: raise dlmd's local MB or lower local_budget\n",
			 (u64)nr << PAGE_SHIFT);
		return -ENOMEM;
	}
	sp->slots = kvcalloc(sp->budget_dpages, sizeof(*sp->slots),
			     GFP_KERNEL_ACCOUNT);
	if (!sp->slots) {
		dlm_pool_region_free(first, nr);
		return -ENOMEM;
	}
	sp->pool_first = first;
	INIT_WORK(&sp->refill, dlm_refill_work);
	sp->keep_slot = DLM_NO_SLOT;
	/* No reserve when every page fits: nothing will ever be evicted. */
	if (sp->budget_dpages >= 2 && sp->budget_dpages < sp->nr_dpages &&
	    dlm_reserve_dpages)
		sp->reserve = clamp_t(u64, div_u64(sp->budget_dpages, 4), 1,
				      dlm_reserve_dpages);
	sp->ra_depth = dlm_ra_max(sp);

	req = dlm_req_send(DLM_NL_OP_SPACE_NEW, sp, 0, 0);
	if (IS_ERR(req)) {
		ret = PTR_ERR(req);
		goto undo;
	}
	left = wait_event_killable_timeout(sp->wq, READ_ONCE(req->done),
					   msecs_to_jiffies(dlm_request_timeout_ms));
	if (left == 0)
		dlm_req_timed_out(req);
	ret = left < 0 ? -EINTR : READ_ONCE(req->done) ? req->status : -ETIMEDOUT;
	dlm_req_put(req);
	if (ret == -EPIPE)
		ret = -ENOTCONN;
	if (ret) {
		pr_debug("DLM_IOC_SETUP: daemon refused the space: %d\n", ret);
		goto undo;
	}
	sp->registered = true;
	return 0;

undo:
	/* dlm_remote_teardown() frees the slots and the region. */
	return ret;
}

void dlm_remote_teardown(struct dlm_space *sp)
{
	struct dlm_req *req;
	u64 gen;

	if (sp->registered && dlm_daemon_present(&gen) &&
	    gen == sp->generation) {
		req = dlm_req_send(DLM_NL_OP_SPACE_DEL, sp, 0, 0);
		if (!IS_ERR(req))
			dlm_req_put(req);
	}
	if (sp->slots) {
		dlm_pool_region_free(sp->pool_first,
				     sp->budget_dpages * sp->ppd);
		kvfree(sp->slots);
	}
}

/*
 * The owning file is being released: no vma maps the space any more and
 * no fault can queue a refill.  Cancel a queued one, which would unmap
 * through an address_space that may go with the file.
 */
void dlm_remote_release(struct dlm_space *sp)
{
	if (cancel_work_sync(&sp->refill))
		dlm_space_put(sp);	/* the work's reference; not the last */
}

/* Called by genl.c when @req completes or fails; no locks held. */
void dlm_remote_complete(struct dlm_req *req)
{
	struct dlm_space *sp = req->sp;
	struct dlm_slot *slot;

	if (req->op == DLM_NL_OP_SPACE_DEL) {
		WRITE_ONCE(req->done, true);
		return;
	}
	if (req->op >= DLM_NL_OP_READ) {
		dlm_blk_complete(req);
		return;
	}

	mutex_lock(&sp->lock);
	slot = req->op == DLM_NL_OP_SPACE_NEW ? NULL : &sp->slots[req->slot];
	switch (req->op) {
	case DLM_NL_OP_FETCH:
		if (!req->status) {
			slot->state = DLM_SLOT_READY;
			slot->copy = req->kept ? DLM_COPY_KEPT : DLM_COPY_NONE;
			slot->ready_ns = local_clock();
			dlm_slot_test_clear_dirty(sp, req->slot);
			dlm_lat_record(DLM_LAT_DATA, slot->ready_ns - req->sent_ns);
			dlm_count(&sp->swapins, &dlm_totals.swapins);
			atomic64_add(sp->page_size, &dlm_totals.bytes_in);
			break;
		}
		/*
		 * The data is gone.  If the daemon itself failed it may still
		 * be writing into these frames: never reuse them.
		 */
		if (req->status == -EPIPE) {
			slot->state = DLM_SLOT_QUARANTINE;
			sp->nr_quarantined++;
		} else {
			slot->state = DLM_SLOT_FREE;
		}
		slot->holds_val = false;
		dlm_xa_set(sp, req->dpn, DLM_XA_LOST);
		sp->nr_resident--;
		dlm_count(&sp->lost, &dlm_totals.lost);
		pr_warn_ratelimited("space %d: DLM page %llu lost (fetch failed: %d); accesses to it get SIGBUS\n",
				    sp->id, req->dpn, req->status);
		break;
	case DLM_NL_OP_STORE:
	case DLM_NL_OP_DROP:
		dlm_lat_record(DLM_LAT_STORE, local_clock() - req->sent_ns);
		sp->nr_storing--;
		if (!req->status) {
			slot->state = DLM_SLOT_FREE;
			slot->holds_val = false;
			dlm_xa_set(sp, req->dpn, DLM_XA_STORED);
			sp->nr_resident--;
			if (req->op == DLM_NL_OP_DROP) {
				dlm_count(&sp->drops, &dlm_totals.drops);
				break;
			}
			dlm_count(&sp->swapouts, &dlm_totals.swapouts);
			atomic64_add(sp->page_size, &dlm_totals.bytes_out);
			break;
		}
		/*
		 * The frames were only read: the page stays resident, and
		 * its dirty bits are spent, so it is stored next time.  A
		 * refused DROP is no failure: the copy was released.
		 */
		slot->state = DLM_SLOT_READY;
		slot->copy = DLM_COPY_NONE;
		if (req->op == DLM_NL_OP_DROP)
			break;
		sp->evict_failed = true;
		pr_warn_ratelimited("space %d: storing DLM page %llu failed (%d); it stays local\n",
				    sp->id, req->dpn, req->status);
		break;
	}
	if (slot && slot->req == req)
		slot->req = NULL;
	WRITE_ONCE(req->done, true);
	mutex_unlock(&sp->lock);
	wake_up_all(&sp->wq);
}

/*
 * A free slot for a page to be filled with @val (@fill) or fetched
 * (!@fill): first one whose frames already hold @val, then one that holds
 * no value (keep those for fills), then any.
 */
static u64 dlm_free_slot_for(struct dlm_space *sp, bool fill, u64 val)
{
	u64 k, plain = DLM_NO_SLOT, any = DLM_NO_SLOT;
	struct dlm_slot *slot;

	for (k = 0; k < sp->budget_dpages; k++) {
		slot = &sp->slots[k];
		if (slot->state != DLM_SLOT_FREE)
			continue;
		if (!slot->holds_val)
			plain = min(plain, k);
		else if (fill && slot->val == val)
			return k;
		any = min(any, k);
	}
	return plain != DLM_NO_SLOT ? plain : any;
}

static u64 dlm_free_slot(struct dlm_space *sp)
{
	return dlm_free_slot_for(sp, false, 0);
}

/*
 * Does slot @k's page survive this pass of the hand?  Spends one of the
 * passes a fault or read-ahead gave it (@referenced) and clears the
 * accessed bits an access through the page tables set.
 */
static bool dlm_slot_test_clear_referenced(struct dlm_space *sp, u64 k)
{
	struct dlm_slot *slot = &sp->slots[k];
	bool referenced = slot->referenced;

	if (referenced)
		slot->referenced--;
	return dlm_space_test_clear_young(sp, slot->dpn) || referenced;
}

/* Can slot @k go now?  Not if in use since last asked, or held. */
static bool dlm_slot_idle(struct dlm_space *sp, u64 k, u64 keep, bool *held)
{
	struct dlm_slot *slot = &sp->slots[k];

	if (slot->state != DLM_SLOT_READY || k == keep || slot->ahead)
		return false;
	if (dlm_space_test_clear_young(sp, slot->dpn))
		return false;
	if (dlm_pool_frames_held(dlm_slot_frames(sp, k), sp->ppd)) {
		*held = true;
		return false;
	}
	return true;
}

/*
 * scan_resist: the resident page longest unfaulted on that comes back
 * without the daemon (zero-filled, or filled from the space's table of
 * values, and not written since as far as the slot knows), unless it was
 * used since the last look.  One scan of the slots finds the
 * DLM_CHEAP_TRIES oldest; a slot passed over gets a fresh stamp.  The
 * pages of the last quarter of the budget's faults are not taken: each
 * stream's current page is among them, and an accessed bit cleared while
 * the TLB holds the page is not set again, so it alone would not protect
 * them (every access of a sweep faulted).
 */
static u64 dlm_pick_cheap(struct dlm_space *sp, u64 keep, bool *held)
{
	u64 n = sp->budget_dpages, k, recent, cand[DLM_CHEAP_TRIES];
	int nr = 0, i;

	recent = sp->fault_seq - min_t(u64, sp->fault_seq,
				       max_t(u64, n / 4, 2));

	/* One scan: the oldest candidates, oldest first, ties by slot. */
	for (k = 0; k < n; k++) {
		struct dlm_slot *slot = &sp->slots[k];

		if (slot->state != DLM_SLOT_READY || k == keep ||
		    slot->stamp > recent || slot->written ||
		    (slot->copy != DLM_COPY_ZERO &&
		     slot->copy != DLM_COPY_FILL))
			continue;
		if (nr == DLM_CHEAP_TRIES &&
		    slot->stamp >= sp->slots[cand[nr - 1]].stamp)
			continue;
		i = min(nr, DLM_CHEAP_TRIES - 1);
		for (; i > 0 && sp->slots[cand[i - 1]].stamp > slot->stamp; i--)
			cand[i] = cand[i - 1];
		cand[i] = k;
		if (nr < DLM_CHEAP_TRIES)
			nr++;
	}
	/* Each one failing a test leaves the candidates; none is taken twice. */
	for (i = 0; i < nr; i++) {
		k = cand[i];
		if (dlm_space_test_dirty(sp, sp->slots[k].dpn)) {
			sp->slots[k].written = true;	/* a STORE, maybe */
			continue;
		}
		if (dlm_slot_idle(sp, k, keep, held))
			return k;
		sp->slots[k].stamp = ++sp->fault_seq;
	}
	return DLM_NO_SLOT;
}

/*
 * scan_resist: the page a sequential stream left behind most recently,
 * unless used since.  A loop over more than the budget then evicts what
 * it has just passed and keeps what it reaches first on its next pass,
 * where the oldest-first order of CLOCK evicts every page just before
 * its reuse (the sequential flooding a database buffer pool answers with
 * MRU for its scans).
 */
static u64 dlm_pick_behind(struct dlm_space *sp, u64 keep, bool *held)
{
	u64 dpn;
	void *e;

	while (sp->nr_behind) {
		sp->behind_head = (sp->behind_head + DLM_BEHIND_MAX - 1) %
				  DLM_BEHIND_MAX;
		sp->nr_behind--;
		dpn = sp->behind[sp->behind_head];
		e = xa_load(&sp->dpages, dpn);
		if (!e || xa_to_value(e) < DLM_XA_SLOT0)
			continue;
		if (dlm_slot_idle(sp, xa_to_value(e) - DLM_XA_SLOT0, keep, held))
			return xa_to_value(e) - DLM_XA_SLOT0;
	}
	return DLM_NO_SLOT;
}

/*
 * Choose a resident DLM page to evict.  ARR: address round-robin over the
 * slots.  CLOCK: a slot used since the hand last passed gets a second
 * chance, and a page read ahead and not used yet a third: with several
 * pages ahead per stream (readahead_dpages), the hand would otherwise pass
 * twice over the last of them before the program reaches it, and it would
 * be fetched twice.  Neither takes a slot whose frames another kernel user
 * holds (pool.c); *@held tells whether there was one.
 */
static u64 dlm_pick_victim(struct dlm_space *sp, u64 keep, bool *held)
{
	u64 n = sp->budget_dpages, i, k;

	*held = false;
	if (sp->policy == DLM_POLICY_CLOCK && READ_ONCE(dlm_scan_resist)) {
		k = dlm_pick_cheap(sp, keep, held);
		if (k == DLM_NO_SLOT)
			k = dlm_pick_behind(sp, keep, held);
		if (k != DLM_NO_SLOT)
			return k;
	}
	for (i = 0; i < 3 * n; i++) {	/* read-ahead survives two passes */
		k = sp->hand;
		sp->hand = (sp->hand + 1) % n;
		if (sp->slots[k].state != DLM_SLOT_READY || k == keep)
			continue;
		if (sp->policy == DLM_POLICY_CLOCK &&
		    dlm_slot_test_clear_referenced(sp, k))
			continue;
		if (dlm_pool_frames_held(dlm_slot_frames(sp, k), sp->ppd)) {
			*held = true;
			if (i < n)
				atomic64_inc(&dlm_totals.held_skips);
			continue;
		}
		return k;
	}
	return DLM_NO_SLOT;
}

/*
 * Evict the DLM page in slot @k: unmap it everywhere, then forget it if it
 * was never written since zero-filled, or keep its value if it is
 * same-filled (both return NULL: the slot is free), else send DROP or
 * STORE.  Returns the request with a reference for the caller, or
 * -EBUSY when another kernel user took hold of the frames before they
 * were unmapped (the page stays resident).  Called with sp->lock held.
 */
static struct dlm_req *dlm_evict(struct dlm_space *sp, u64 k)
{
	struct dlm_slot *slot = &sp->slots[k];
	struct dlm_req *req;
	long fill = -1;
	u64 val;

	dlm_space_unmap_dpage(sp, slot->dpn);
	if (dlm_pool_frames_held(dlm_slot_frames(sp, k), sp->ppd))
		return ERR_PTR(-EBUSY);
	if (slot->ahead) {	/* read ahead in vain: read less ahead */
		slot->ahead = false;
		sp->ra_depth = max_t(u64, sp->ra_depth / 2, 1);
		sp->ra_hits = 0;
		atomic64_inc(&dlm_totals.readaheads_unused);
	}
	if (dlm_slot_test_clear_dirty(sp, k)) {
		if (slot->copy == DLM_COPY_FILL)	/* its value is gone */
			sp->fill_refs[slot->fill]--;
		slot->copy = DLM_COPY_NONE;
	}
	if (slot->copy == DLM_COPY_FILL)	/* its reference goes back */
		fill = DLM_XA_FILL0 + slot->fill;
	else if (slot->copy == DLM_COPY_NONE && READ_ONCE(dlm_same_filled) &&
		 dlm_slot_same_filled(sp, k, &val))
		fill = dlm_fill_entry(sp, val);
	if (slot->copy == DLM_COPY_ZERO || fill >= 0) {
		if (slot->copy == DLM_COPY_ZERO || !fill)
			xa_erase(&sp->dpages, slot->dpn); /* reads as zeros */
		else
			dlm_xa_set(sp, slot->dpn, fill);
		/* Clean since filled, or found so: the frames hold it. */
		slot->holds_val = true;
		slot->val = slot->copy == DLM_COPY_ZERO || !fill ? 0 :
			    sp->fill_vals[fill - DLM_XA_FILL0];
		if (slot->copy == DLM_COPY_ZERO)
			dlm_count(&sp->drops, &dlm_totals.drops);
		else
			dlm_count(&sp->same_filled, &dlm_totals.same_filled);
		slot->state = DLM_SLOT_FREE;
		sp->nr_resident--;
		return NULL;
	}
	req = dlm_req_send(slot->copy == DLM_COPY_KEPT ? DLM_NL_OP_DROP :
			   DLM_NL_OP_STORE, sp, slot->dpn, k);
	if (IS_ERR(req)) {
		slot->copy = DLM_COPY_NONE;	/* its dirty bits are spent */
		return req;
	}
	slot->state = DLM_SLOT_STORING;
	slot->req = req;	/* no reference: cleared on completion */
	sp->nr_storing++;
	return req;
}

/* DLM page @dpn is resident (or on its way in) in a slot. */
static bool dlm_resident(struct dlm_space *sp, u64 dpn)
{
	void *e = xa_load(&sp->dpages, dpn);

	return e && xa_to_value(e) >= DLM_XA_SLOT0;
}

/*
 * A fault filled or mapped slot @k with DLM page @dpn: stamp the slot, and
 * when @dpn continues a sequential stream (the DLM_BEHIND_DIST pages
 * before it all resident: random faults rarely find that) remember the
 * page DLM_BEHIND_DIST behind it (scan_resist: dlm_pick_behind()).
 */
#define DLM_BEHIND_DIST	3
static void dlm_note_fault(struct dlm_space *sp, u64 k, u64 dpn)
{
	u64 i;

	sp->slots[k].stamp = ++sp->fault_seq;
	if (!READ_ONCE(dlm_scan_resist) || dpn < DLM_BEHIND_DIST)
		return;
	for (i = 1; i <= DLM_BEHIND_DIST; i++)
		if (!dlm_resident(sp, dpn - i))
			return;
	/* From now on an accessed bit says it is still in use. */
	dlm_space_test_clear_young(sp, dpn - DLM_BEHIND_DIST);
	sp->behind[sp->behind_head] = dpn - DLM_BEHIND_DIST;
	sp->behind_head = (sp->behind_head + 1) % DLM_BEHIND_MAX;
	if (sp->nr_behind < DLM_BEHIND_MAX)
		sp->nr_behind++;
}

/*
 * Fetch the stored pages after @dpn of a sequential stream into free
 * slots; nobody waits for them.  How many: @sp->ra_depth, at most
 * dlm_readahead_dpages.  Pages read ahead hold slots until used, so the
 * depth starts from the budget (dlm_ra_max()) and follows what the
 * streams do: halved when a page read ahead is evicted before its use
 * (too many streams for the slots, as Himeno's fourteen arrays all
 * fetched), raised again by one after a budget's worth of uses.
 */
static void dlm_readahead(struct dlm_space *sp, u64 dpn)
{
	struct dlm_req *req;
	u64 i, depth, next, k;
	void *e;

	if (sp->protocol == DLM_PROTO_SERIAL ||
	    sp->budget_dpages < DLM_RA_MIN_BUDGET || !dpn ||
	    !dlm_resident(sp, dpn - 1))
		return;
	depth = min_t(u64, sp->ra_depth, READ_ONCE(dlm_readahead_dpages));
	for (i = 1; i <= depth; i++) {
		next = dpn + i;
		if (next >= sp->nr_dpages)
			break;
		e = xa_load(&sp->dpages, next);
		if (!e || xa_to_value(e) != DLM_XA_STORED)
			continue;	/* resident, never touched, or lost */
		k = dlm_free_slot(sp);
		if (k == DLM_NO_SLOT)
			break;
		req = dlm_req_send(DLM_NL_OP_FETCH, sp, next, k);
		if (IS_ERR(req))
			break;
		sp->slots[k].dpn = next;
		sp->slots[k].state = DLM_SLOT_FETCHING;
		sp->slots[k].referenced = 2;	/* not a victim before use */
		sp->slots[k].ahead = true;
		sp->slots[k].written = false;
		sp->slots[k].req = req;
		dlm_xa_set(sp, next, DLM_XA_SLOT0 + k);
		sp->nr_resident++;
		dlm_count(&sp->readaheads, &dlm_totals.readaheads);
		dlm_req_put(req);
	}
}

/* A fault found its page read ahead: after a budget's worth, one more. */
static void dlm_ra_used(struct dlm_space *sp)
{
	if (sp->ra_depth < dlm_ra_max(sp) && ++sp->ra_hits >= sp->budget_dpages) {
		sp->ra_depth++;
		sp->ra_hits = 0;
	}
}

static u64 dlm_nr_free(struct dlm_space *sp)
{
	u64 k, n = 0;

	for (k = 0; k < sp->budget_dpages; k++)
		n += sp->slots[k].state == DLM_SLOT_FREE;
	return n;
}

/*
 * All but SERIAL: after a fault took a free slot (@keep), evict victims
 * until sp->reserve slots are free or on their way to it, so that the next
 * faults find a free slot.  Returns the first STORE or DROP (with a
 * reference) or NULL.
 */
static struct dlm_req *dlm_refill(struct dlm_space *sp, u64 keep)
{
	struct dlm_req *first = NULL, *req;
	bool held;
	u64 nfree, k;

	if (sp->protocol == DLM_PROTO_SERIAL)
		return NULL;
	nfree = dlm_nr_free(sp);
	while (nfree + sp->nr_storing < sp->reserve) {
		k = dlm_pick_victim(sp, keep, &held);
		if (k == DLM_NO_SLOT)
			break;
		req = dlm_evict(sp, k);
		if (IS_ERR(req))
			break;		/* on demand next time */
		if (!req)
			nfree++;	/* freed without a transfer */
		else if (first)
			dlm_req_put(req);
		else
			first = req;
	}
	return first;
}

/* ASYNC: restore the reserve behind the fault that used it up. */
static void dlm_refill_work(struct work_struct *work)
{
	struct dlm_space *sp = container_of(work, struct dlm_space, refill);
	struct dlm_req *req;

	mutex_lock(&sp->lock);
	req = dlm_refill(sp, sp->keep_slot);
	mutex_unlock(&sp->lock);
	if (req)
		dlm_req_put(req);
	dlm_space_put(sp);	/* taken by dlm_refill_queue() */
}

/* Queue the refill of @sp's reserve, @keep just filled.  sp->lock held. */
static void dlm_refill_queue(struct dlm_space *sp, u64 keep)
{
	sp->keep_slot = keep;
	if (dlm_nr_free(sp) + sp->nr_storing >= sp->reserve)
		return;
	kref_get(&sp->ref);	/* the caller holds one too: never the last */
	if (!queue_work(dlm_wq, &sp->refill))
		dlm_space_put(sp);
}

/* ASYNC and INLINE: the fault waits for its fetch only. */
static bool dlm_proto_behind(struct dlm_space *sp)
{
	return sp->protocol == DLM_PROTO_ASYNC ||
	       sp->protocol == DLM_PROTO_INLINE;
}

/*
 * After a fault took free slot @keep: ASYNC queues the refill of the
 * reserve behind it; the others refill it now (SERIAL: nothing to do) and
 * do not wait for the stores.  Called with sp->lock held.
 */
static void dlm_refill_behind(struct dlm_space *sp, u64 keep)
{
	struct dlm_req *req;

	if (sp->protocol == DLM_PROTO_ASYNC) {
		dlm_refill_queue(sp, keep);
		return;
	}
	req = dlm_refill(sp, keep);
	if (req)
		dlm_req_put(req);
}

/* A STORE in flight, with a reference, or NULL. */
static struct dlm_req *dlm_store_in_flight(struct dlm_space *sp)
{
	u64 k;

	for (k = 0; k < sp->budget_dpages; k++) {
		if (sp->slots[k].state == DLM_SLOT_STORING &&
		    sp->slots[k].req) {
			kref_get(&sp->slots[k].req->ref);
			return sp->slots[k].req;
		}
	}
	return NULL;
}

static bool dlm_reqs_done(struct dlm_req *req, struct dlm_req *req2)
{
	return READ_ONCE(req->done) && (!req2 || READ_ONCE(req2->done));
}

/*
 * Wait for @req, and @req2 if not NULL (NULL @req: for any request of the
 * space), after dropping sp->lock.  Consumes the references on both.
 * Returns 0 when the caller should take sp->lock and look again, or the
 * fault code to return.
 */
static vm_fault_t dlm_fault_wait(struct vm_fault *vmf, struct dlm_space *sp,
				 struct dlm_req *req, struct dlm_req *req2)
{
	bool may_retry = vmf->flags & FAULT_FLAG_ALLOW_RETRY;
	long left;

	if (may_retry && (vmf->flags & FAULT_FLAG_RETRY_NOWAIT)) {
		if (req)
			dlm_req_put(req);
		if (req2)
			dlm_req_put(req2);
		return VM_FAULT_RETRY;	/* the caller keeps the mmap lock */
	}

	/*
	 * Once the mmap lock is dropped the vma, and with it the file's
	 * reference on @sp, may go away: hold the space ourselves.
	 */
	kref_get(&sp->ref);
	if (may_retry)
		release_fault_lock(vmf);
	if (req) {
		left = wait_event_killable_timeout(sp->wq,
						   dlm_reqs_done(req, req2),
						   msecs_to_jiffies(dlm_request_timeout_ms));
		if (left == 0)
			dlm_req_timed_out(READ_ONCE(req->done) ? req2 : req);
		dlm_req_put(req);
		if (req2)
			dlm_req_put(req2);
	} else {
		/*
		 * Someone else's transfer, or a quota others hold: nobody may
		 * be timing those requests, so look at their age ourselves.
		 */
		left = wait_event_killable_timeout(sp->wq, false,
						   msecs_to_jiffies(10));
		dlm_reqs_watchdog("a waiting fault");
	}
	dlm_space_put(sp);
	if (may_retry)
		return VM_FAULT_RETRY;
	if (left < 0)
		return VM_FAULT_SIGBUS;	/* killed: a syscall gets EFAULT */
	return 0;
}

static vm_fault_t dlm_remote_sigbus(struct dlm_space *sp, u64 dpn,
				    const char *why)
{
	dlm_count(&sp->sigbus, &dlm_totals.sigbus);
	pr_warn_ratelimited("pid %d (%s): space %d DLM page %llu: %s, sending SIGBUS\n",
			    task_pid_nr(current), current->comm, sp->id, dpn,
			    why);
	return VM_FAULT_SIGBUS;
}

vm_fault_t dlm_remote_fault(struct vm_fault *vmf, struct dlm_space *sp,
			    u64 dpn)
{
	struct dlm_req *req, *req2 = NULL;
	u64 t0 = local_clock(), k;
	bool store_wait = false, held;
	struct dlm_slot *slot;
	vm_fault_t ret;
	unsigned long v;
	void *e;

	mutex_lock(&sp->lock);
again:
	e = xa_load(&sp->dpages, dpn);
	v = e ? xa_to_value(e) : DLM_XA_STORED;
	if (e && v == DLM_XA_LOST) {
		ret = dlm_remote_sigbus(sp, dpn, "its data was lost");
		goto unlock;
	}
	if (e && v >= DLM_XA_SLOT0) {
		slot = &sp->slots[v - DLM_XA_SLOT0];
		if (slot->state == DLM_SLOT_READY) {
			bool ahead = slot->ahead;

			slot->ahead = false;
			slot->referenced = 1;
			dlm_note_fault(sp, v - DLM_XA_SLOT0, dpn);
			ret = dlm_map_frames(vmf, sp, dpn,
					     dlm_slot_frames(sp, v - DLM_XA_SLOT0));
			if (slot->ready_ns && ret == VM_FAULT_NOPAGE) {
				dlm_lat_record(DLM_LAT_MAP,
					       local_clock() - slot->ready_ns);
				slot->ready_ns = 0;
			}
			if (ahead && ret == VM_FAULT_NOPAGE) {
				dlm_ra_used(sp);
				dlm_readahead(sp, dpn);
				if (dlm_proto_behind(sp))
					dlm_refill_behind(sp, v - DLM_XA_SLOT0);
			}
			goto unlock;
		}
		/* Being fetched or stored: wait for that transfer. */
		req = slot->req;
		if (req)
			kref_get(&req->ref);
		goto wait;
	}

	/* Not resident: find it a slot, evicting if need be. */
	k = dlm_free_slot_for(sp, !e || v >= DLM_XA_FILL0,
			      e && v >= DLM_XA_FILL0 ?
			      sp->fill_vals[v - DLM_XA_FILL0] : 0);
	if (k == DLM_NO_SLOT) {
		if (sp->nr_quarantined == sp->budget_dpages) {
			/* Nothing will ever free one: do not wait for it. */
			ret = dlm_remote_sigbus(sp, dpn,
						"no usable local frame: a failed daemon's fetches left them all quarantined, set the space up again");
			goto unlock;
		}
		if (sp->evict_failed) {
			sp->evict_failed = false;
			ret = dlm_remote_sigbus(sp, dpn,
						"no local frame: storing a victim failed");
			goto unlock;
		}
		if (!store_wait) {
			store_wait = true;
			dlm_count(&sp->store_waits, &dlm_totals.store_waits);
		}
		/* A victim already on its way out frees a slot soonest. */
		req = dlm_store_in_flight(sp);
		if (req)
			goto wait;
		k = dlm_pick_victim(sp, DLM_NO_SLOT, &held);
		if (k == DLM_NO_SLOT && held) {
			/*
			 * Wait for a holder to let go, or for a slot in
			 * transfer, for at most request_timeout_ms.
			 */
			if (!sp->held_since) {
				sp->held_since = jiffies | 1;
			} else if (time_after(jiffies, sp->held_since +
					      msecs_to_jiffies(dlm_request_timeout_ms))) {
				ret = dlm_remote_sigbus(sp, dpn,
							"every local frame is held by another kernel user (vmsplice, O_DIRECT, RDMA): release them or raise local_budget");
				goto unlock;
			}
		}
		if (k == DLM_NO_SLOT)
			goto wait;	/* all slots in transfer (req NULL) */
		sp->held_since = 0;
		req = dlm_evict(sp, k);
		if (req == ERR_PTR(-EAGAIN) || req == ERR_PTR(-EBUSY)) {
			/* max_user_requests, or held after all: look again */
			req = NULL;
			goto wait;
		}
		if (IS_ERR(req)) {
			ret = dlm_remote_sigbus(sp, dpn, "no daemon to store a victim");
			goto unlock;
		}
		if (!req)
			goto again;	/* freed without a transfer */
		goto wait;
	}

	sp->held_since = 0;
	slot = &sp->slots[k];
	if (!e || v >= DLM_XA_FILL0) {	/* v < DLM_XA_SLOT0 here */
		/* First touch (zeros) or a same-filled page: no transfer. */
		if (e) {
			slot->fill = v - DLM_XA_FILL0;
			dlm_slot_fill(sp, k, sp->fill_vals[slot->fill]);
		} else {
			dlm_slot_fill(sp, k, 0);
		}
		slot->dpn = dpn;
		slot->state = DLM_SLOT_READY;
		slot->ahead = false;
		slot->copy = e ? DLM_COPY_FILL : DLM_COPY_ZERO;
		slot->ready_ns = 0;
		if (dlm_xa_set(sp, dpn, DLM_XA_SLOT0 + k)) {
			slot->state = DLM_SLOT_FREE;	/* nothing names it */
			slot->holds_val = false;
			ret = VM_FAULT_OOM;
			goto unlock;
		}
		sp->nr_resident++;
		slot->written = false;
		dlm_note_fault(sp, k, dpn);
		dlm_count(&sp->populates, &dlm_totals.populates);
		dlm_refill_behind(sp, k);	/* nothing to overlap */
		goto again;
	}

	req = dlm_req_send(DLM_NL_OP_FETCH, sp, dpn, k);
	if (req == ERR_PTR(-EAGAIN)) {
		req = NULL;	/* max_user_requests: wait, look again */
		goto wait;
	}
	if (IS_ERR(req)) {
		ret = dlm_remote_sigbus(sp, dpn, "no daemon to fetch it");
		goto unlock;
	}
	dlm_lat_record(DLM_LAT_REQUEST, req->sent_ns - t0);
	slot->dpn = dpn;
	slot->state = DLM_SLOT_FETCHING;
	slot->ahead = false;
	slot->req = req;
	dlm_xa_set(sp, dpn, DLM_XA_SLOT0 + k);
	sp->nr_resident++;
	slot->referenced = 1;	/* not the refill's next victim */
	slot->written = false;
	dlm_note_fault(sp, k, dpn);
	dlm_readahead(sp, dpn);
	if (dlm_proto_behind(sp))
		dlm_refill_behind(sp, k);	/* victims go out behind us */
	else
		req2 = dlm_refill(sp, k);

wait:
	mutex_unlock(&sp->lock);
	ret = dlm_fault_wait(vmf, sp, req, req2);
	req2 = NULL;
	if (ret)
		return ret;
	if (fatal_signal_pending(current))
		return VM_FAULT_SIGBUS;
	mutex_lock(&sp->lock);
	goto again;

unlock:
	mutex_unlock(&sp->lock);
	return ret;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal declarations of dlmem.ko, the DLM remote-memory module.
 */
#ifndef _DLMEM_H
#define _DLMEM_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/wait.h>
#include <linux/bits.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <uapi/linux/dlmem.h>
#include <uapi/linux/dlmem_nl.h>

/*
 * Every DLM space owns a window of 2^DLM_SPACE_SHIFT bytes of file offsets
 * of /dev/dlm, so unmap_mapping_range() on the device's address_space can
 * reach exactly the mappings of one space.
 */
#define DLM_SPACE_SHIFT		46
#define DLM_TOTAL_SIZE_MAX	BIT_ULL(DLM_SPACE_SHIFT)
#define DLM_SPACES_MAX		(1U << (63 - DLM_SPACE_SHIFT))
#define DLM_PAGE_SIZE_MAX	(256ULL << 20)

#define DLM_FEATURES_KNOWN	(DLM_FEATURE_LOCAL | DLM_FEATURE_STATS | \
				 DLM_FEATURE_REMOTE | DLM_FEATURE_BLK | \
				 DLM_FEATURE_SAME_FILLED | \
				 DLM_FEATURE_PROTO_INLINE)
#if IS_ENABLED(CONFIG_DLMEM_BLK)
#define DLM_FEATURES_SUPPORTED	DLM_FEATURES_KNOWN
#else
#define DLM_FEATURES_SUPPORTED	(DLM_FEATURES_KNOWN & ~DLM_FEATURE_BLK)
#endif

/* Module-wide limits, fixed at load time (main.c). */
struct dlm_limits {
	u64 page_size_default;
	u64 local_budget_max;
};

extern struct dlm_limits dlm_limits;

/* Module-wide gauges, shown in /sys/class/misc/dlm/ (dev.c). */
extern atomic64_t dlm_spaces_live;
extern atomic64_t dlm_frames_live;

/* Module-wide cumulative counters, /sys/class/misc/dlm/stats/ (stats.c). */
struct dlm_totals {
	atomic64_t faults;
	atomic64_t populates;
	atomic64_t sigbus;
	atomic64_t swapins;
	atomic64_t swapouts;
	atomic64_t drops;
	atomic64_t store_waits;
	atomic64_t lost;
	atomic64_t bytes_in;
	atomic64_t bytes_out;
	atomic64_t readaheads;
	atomic64_t same_filled;
	atomic64_t fills_reused;
	atomic64_t held_skips;
	atomic64_t readaheads_unused;
};

extern struct dlm_totals dlm_totals;

/* Count an event in a space's counter @c and the module's @total. */
static inline void dlm_count(atomic64_t *c, atomic64_t *total)
{
	atomic64_inc(c);
	atomic64_inc(total);
}

/* Phases of the remote fault path whose latency is recorded. */
enum dlm_lat_phase {
	DLM_LAT_REQUEST,	/* fault entry -> FETCH sent */
	DLM_LAT_DATA,		/* FETCH sent -> its completion */
	DLM_LAT_MAP,		/* FETCH completion -> frames mapped */
	DLM_LAT_STORE,		/* STORE or DROP sent -> its completion */
	DLM_LAT_NR,
};

/**
 * struct dlm_dpage - one resident DLM page.
 * @nr_frames: CPU pages in the DLM page.
 * @frames: the order-0 pages backing it, one per CPU page, in order.
 */
struct dlm_dpage {
	unsigned int nr_frames;
	struct page *frames[] __counted_by(nr_frames);
};

/* What a resident slot's frames are a copy of, when not written since. */
enum dlm_slot_copy {
	DLM_COPY_NONE,		/* nothing else holds it: STORE on eviction */
	DLM_COPY_ZERO,		/* zero-filled, never stored: just free it */
	DLM_COPY_KEPT,		/* the daemon kept it at FETCH: DROP it */
	DLM_COPY_FILL,		/* filled from sp->fill_vals[@fill]: keep that */
};

/* States of a remote space's local slot (one DLM page of pool frames). */
enum dlm_slot_state {
	DLM_SLOT_FREE,		/* holds nothing */
	DLM_SLOT_FETCHING,	/* FETCH of @dpn in flight into it */
	DLM_SLOT_READY,		/* holds @dpn, mapped on demand */
	DLM_SLOT_STORING,	/* STORE of @dpn in flight from it, unmapped */
	DLM_SLOT_QUARANTINE,	/* a timed-out FETCH may still write into it */
};

/**
 * struct dlm_slot - one DLM page worth of pool frames of a remote space.
 * @dpn: DLM page held (FETCHING, READY, STORING).
 * @state: enum dlm_slot_state.
 * @referenced: passes of the CLOCK hand the slot still survives without
 *	an access through its page tables: 1 after a fault, 2 after
 *	read-ahead (its fault is still to come); 0 when the hand last passed.
 * @copy: enum dlm_slot_copy, valid while the frames' PG_dirty is clear.
 * @fill: DLM_COPY_FILL: index into the space's @fill_vals.
 * @ahead: read ahead, not faulted on yet.
 * @holds_val: FREE: every word of the frames holds @val (a clean zero-
 *	filled or same-filled page left it), so filling them with @val again
 *	can be skipped.
 * @val: see @holds_val.
 * @ready_ns: when a FETCH into the slot completed, 0 once mapped.
 * @stamp: the space's @fault_seq when the slot was last filled or faulted
 *	on through its page tables (the order of cheap victims).
 * @written: dlm_pick_cheap() found it written since filled: not cheap.
 * @req: the transfer in flight (FETCHING, STORING); holds no reference, the
 *	completion clears it under the space's lock.
 */
struct dlm_slot {
	u64 dpn;
	u8 state;
	u8 referenced;
	u8 copy;
	u8 fill;
	bool ahead;
	bool holds_val;
	bool written;
	u64 val;
	u64 ready_ns;
	u64 stamp;
	struct dlm_req *req;
};

/*
 * Distinct repeated 8-byte values a remote space keeps for its same-filled
 * DLM pages (remote.c); a page filled with any other value is stored.
 */
#define DLM_FILL_VALS	16

/*
 * xarray entries of a remote space are value entries.  Not resident:
 * stored, lost, or same-filled with value fill_vals[v - DLM_XA_FILL0]
 * (zero-filled pages have no entry at all).  A resident DLM page holds
 * its slot number + DLM_XA_SLOT0.
 */
#define DLM_XA_STORED	0	/* lives on a memory server */
#define DLM_XA_LOST	1	/* its data was lost: SIGBUS */
#define DLM_XA_FILL0	2
#define DLM_XA_SLOT0	(DLM_XA_FILL0 + DLM_FILL_VALS)

/* DLM pages behind sequential streams a remote space remembers (remote.c). */
#define DLM_BEHIND_MAX	32
/* Cheap victims scan_resist looks at per eviction, oldest first. */
#define DLM_CHEAP_TRIES	8

/**
 * struct dlm_space - one DLM address space, owned by one open file.
 * @ref: the file holds one reference, every request in flight another.
 * @lock: serialises population, slot states and the resident count.
 * @wq: woken whenever a request of this space completes.
 * @dpages: local spaces: resident DLM pages (struct dlm_dpage *);
 *	remote spaces: value entries (DLM_XA_*), absent = never touched.
 * @mapping: address_space whose vmas map this space.
 * @id: index of the space's window of file offsets (also the id the daemon
 *	knows the space by).
 * @base_pgoff: first file page offset of the window.
 * @page_size: DLM page size in bytes.
 * @ppd: CPU pages per DLM page.
 * @nr_dpages: DLM pages in the space.
 * @budget_dpages: DLM pages that may be resident at once.
 * @backing: DLM_BACKING_*.
 * @policy: DLM_POLICY_* (remote spaces).
 * @protocol: DLM_PROTO_* (remote spaces).
 * @nr_storing: remote spaces: STOREs and DROPs in flight.
 * @reserve: remote spaces: free slots CROSS and ASYNC keep ready.
 * @refill: ASYNC: restores the reserve behind the faults (remote.c).
 * @keep_slot: the slot the last fault filled, not a victim for @refill.
 * @nr_resident: DLM pages currently resident (under @lock).
 * @nr_quarantined: remote spaces: slots a failed daemon may still write
 *	into, never used again (under @lock).
 * @slots: remote spaces: @budget_dpages slots.
 * @pool_first: remote spaces: first pool page of the space's region.
 * @hand: next slot the eviction policy looks at.
 * @ra_depth: remote spaces: DLM pages a sequential fault reads ahead (at
 *	most readahead_dpages), halved when a page read ahead is evicted
 *	before its use, raised by one after @budget_dpages uses (under @lock).
 * @ra_hits: remote spaces: faults on pages read ahead since @ra_depth last
 *	changed (under @lock).
 * @fault_seq: remote spaces: counts the faults that fill or map a slot.
 * @behind: remote spaces: DLM pages sequential streams left behind, the
 *	last @nr_behind before @behind_head (a ring), under @lock.
 * @behind_head: next entry of @behind to write.
 * @nr_behind: entries of @behind not yet taken.
 * @registered: remote spaces: the daemon accepted SPACE_NEW.
 * @evict_failed: remote spaces: the last STORE of a victim failed.
 * @held_since: remote spaces: jiffies when a fault first found no victim
 *	but ones another kernel user holds, 0 when it last found one.
 * @generation: daemon generation the space was created under.
 * @is_blk: the space of a /dev/dlmbN (blk.c): no mapping, no faults.
 * @fill_vals: remote spaces: the values of same-filled pages, under @lock.
 * @fill_refs: per entry of @fill_vals, the xarray entries and DLM_COPY_FILL
 *	slots that name it, under @lock; an entry at 0 is free for a new value.
 * @charged: charged to @owner by dlm_user_charge() (limits.c).
 * @user: @owner's record while @charged.
 * @owner: effective uid of the process that set the space up.
 * @faults: faults on the space (DLM_IOC_STATS, as its counters below).
 * @populates: DLM pages materialised zero-filled on first touch.
 * @sigbus: faults answered with SIGBUS.
 * @bytes_mapped: bytes inserted into page tables.
 * @swapins: DLM pages fetched from memory servers.
 * @swapouts: DLM pages stored to memory servers.
 * @lost: DLM pages whose data was lost.
 * @drops: DLM pages evicted without a transfer.
 * @store_waits: faults that waited for a victim's swap-out.
 * @readaheads: DLM pages fetched ahead of a sequential fault.
 * @same_filled: DLM pages evicted as one repeated value.
 */
struct dlm_space {
	struct kref ref;
	struct mutex lock;		/* population, slots, nr_resident */
	wait_queue_head_t wq;
	struct xarray dpages;
	struct address_space *mapping;
	int id;
	unsigned long base_pgoff;
	u64 page_size;
	unsigned int ppd;
	u64 nr_dpages;
	u64 budget_dpages;
	u32 backing;
	u32 policy;
	u32 protocol;
	u64 nr_storing;
	u64 reserve;
	struct work_struct refill;
	u64 keep_slot;
	u64 nr_resident;
	u64 nr_quarantined;
	struct dlm_slot *slots;
	unsigned long pool_first;
	u64 hand;
	u64 ra_depth;
	u64 ra_hits;
	u64 fault_seq;
	u64 behind[DLM_BEHIND_MAX];
	u8 behind_head;
	u8 nr_behind;
	bool registered;
	bool evict_failed;
	unsigned long held_since;
	u64 generation;
	bool is_blk;
	u64 fill_vals[DLM_FILL_VALS];
	u64 fill_refs[DLM_FILL_VALS];
	bool charged;
	struct dlm_user *user;
	kuid_t owner;
	atomic64_t faults;
	atomic64_t populates;
	atomic64_t sigbus;
	atomic64_t bytes_mapped;
	atomic64_t swapins;
	atomic64_t swapouts;
	atomic64_t lost;
	atomic64_t drops;
	atomic64_t store_waits;
	atomic64_t readaheads;
	atomic64_t same_filled;
};

/**
 * struct dlm_req - a request to the daemon, in flight.
 * @ref: the request table holds one reference, a waiter another.
 * @id: DLM_NL_A_REQ_ID.
 * @op: enum dlm_nl_op.
 * @sp: the space (a reference), NULL for none.
 * @dpn: the DLM page.
 * @slot: the slot the frames are in.
 * @status: 0 or -errno once @done.
 * @done: the daemon completed it, or it was failed.
 * @kept: a successful FETCH whose COMPLETE carried DLM_NL_F_KEPT.
 * @user_counted: counted in its space owner's transfers in flight.
 * @sent_ns: when it was sent (local_clock()).
 * @gen: the generation of the daemon it was sent to, the only one that
 *	may answer it.
 * @len: bytes to move (READ, WRITE, DISCARD); 0: the DLM page size.
 * @priv: the sender's, for its completion (blk.c: a struct dlm_blk_io).
 */
struct dlm_req {
	struct kref ref;
	u32 id;
	u32 op;
	struct dlm_space *sp;
	u64 dpn;
	u64 slot;
	int status;
	bool done;
	bool kept;
	bool user_counted;
	u64 sent_ns;
	u64 gen;
	u32 len;
	void *priv;
};

/* limits.c: per-user limits, charged at DLM_IOC_SETUP */
struct dlm_user;
int dlm_user_charge(kuid_t uid, u64 total, u64 local, struct dlm_user **user);
void dlm_user_uncharge(kuid_t uid, u64 total, u64 local);
bool dlm_user_request_get(struct dlm_user *u);
void dlm_user_request_put(struct dlm_user *u);

/* space.c */
struct dlm_space *dlm_space_create(const struct dlm_setup *setup,
				   struct address_space *mapping);
void dlm_space_put(struct dlm_space *sp);
void dlm_space_unmap_dpage(struct dlm_space *sp, u64 dpn);
bool dlm_space_test_clear_young(struct dlm_space *sp, u64 dpn);
bool dlm_space_test_dirty(struct dlm_space *sp, u64 dpn);
struct dlm_dpage *dlm_space_get_dpage(struct dlm_space *sp, u64 dpn,
				      vm_fault_t *ret);
void dlm_space_stats(struct dlm_space *sp, struct dlm_stats *st);
void dlm_space_exit(void);

/* fault.c */
int dlm_space_mmap(struct dlm_space *sp, struct vm_area_struct *vma);
int dlm_insert_frames(struct vm_area_struct *vma, unsigned long addr,
		      struct page **frames, unsigned long count,
		      unsigned long *inserted);
vm_fault_t dlm_map_frames(struct vm_fault *vmf, struct dlm_space *sp, u64 dpn,
			  struct page **frames);

/* pool.c: the frame pool remote spaces draw their slots from */
int dlm_pool_grant(u64 bytes, u64 *granted);
long dlm_pool_region_alloc(unsigned long nr_pages);
void dlm_pool_region_free(unsigned long first, unsigned long nr_pages);
bool dlm_pool_frames_held(struct page **frames, unsigned long nr);
struct page **dlm_pool_pages(unsigned long first);
int dlm_pool_mmap(struct vm_area_struct *vma);
void dlm_pool_exit(void);

/* genl.c: the daemon channel */
int dlm_genl_init(void);
void dlm_genl_exit(void);
bool dlm_daemon_present(u64 *generation);
u32 dlm_daemon_port(void);
struct dlm_req *dlm_req_send(u32 op, struct dlm_space *sp, u64 dpn,
			     u64 slot);
struct dlm_req *dlm_req_send_io(u32 op, struct dlm_space *sp, u64 dpn,
				u64 slot, u32 len, void *priv);
void dlm_daemon_stalled(u64 gen, const char *what, int index);
void dlm_req_put(struct dlm_req *req);
void dlm_req_timed_out(struct dlm_req *req);
void dlm_reqs_watchdog(const char *who);

/* remote.c: remote spaces */
int dlm_remote_init(void);
void dlm_remote_exit(void);
int dlm_remote_setup(struct dlm_space *sp);
void dlm_remote_teardown(struct dlm_space *sp);
void dlm_remote_release(struct dlm_space *sp);
vm_fault_t dlm_remote_fault(struct vm_fault *vmf, struct dlm_space *sp,
			    u64 dpn);
void dlm_remote_complete(struct dlm_req *req);
extern unsigned int dlm_request_timeout_ms;
extern unsigned int dlm_reserve_dpages;
extern unsigned int dlm_readahead_dpages;
extern bool dlm_same_filled;
extern bool dlm_scan_resist;
extern bool dlm_pin_check;
/* Smallest budget, in DLM pages, of a space that reads ahead. */
#define DLM_RA_MIN_BUDGET	8
/* A space reads at most one DLM page ahead per this many of its budget. */
#define DLM_RA_BUDGET_PER_DPAGE	6

/* stats.c */
void dlm_lat_record(enum dlm_lat_phase ph, u64 ns);
extern const struct attribute_group dlm_stats_group;

/* dev.c */
int dlm_dev_init(void);
void dlm_dev_exit(void);

/* fmpl_dev.c: /dev/fmpl (FMPL messaging, its own files fmpl_*.c) */
#if IS_ENABLED(CONFIG_DLMEM_FMPL)
int fmpl_dev_init(void);
void fmpl_dev_exit(void);
#else
static inline int fmpl_dev_init(void) { return 0; }
static inline void fmpl_dev_exit(void) { }
#endif

/* awg_dev.c: /dev/awgstar (AWG-STAR board emulation, its own awg_*.c) */
#if IS_ENABLED(CONFIG_DLMEM_AWGSTAR)
int awg_dev_init(void);
void awg_dev_exit(void);
#else
static inline int awg_dev_init(void) { return 0; }
static inline void awg_dev_exit(void) { }
#endif

/* blk.c: /dev/dlmbN */
#if IS_ENABLED(CONFIG_DLMEM_BLK)
int dlm_blk_init(void);
void dlm_blk_exit(void);
int dlm_blk_ioc_add(struct dlm_blk_add __user *uarg);
int dlm_blk_ioc_del(struct dlm_blk_del __user *uarg);
void dlm_blk_complete(struct dlm_req *req);
#else
static inline int dlm_blk_init(void) { return 0; }
static inline void dlm_blk_exit(void) { }
static inline void dlm_blk_complete(struct dlm_req *req) { }
#endif

#endif /* _DLMEM_H */

/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * dlmem.h - user-space API of /dev/dlm, the DLM remote-memory device.
 *
 * The header is named dlmem.h (and the module dlmem.ko) because the kernel
 * already ships linux/dlm.h and dlm.ko for the distributed lock manager.
 *
 * Protocol, in this order, on one open file of /dev/dlm:
 *
 *   1. DLM_IOC_API      handshake: ABI version and feature negotiation.
 *   2. DLM_IOC_SETUP    shape of the DLM space: page size, size, budget.
 *   3. mmap(MAP_SHARED, offset = dlm_setup.mmap_offset)
 *   4. DLM_IOC_STATS    counters of the space, at any time after SETUP.
 *
 * DLM_IOC_GET_INFO may be called at any time, even before the handshake.
 * DLM_IOC_BLK_ADD and DLM_IOC_BLK_DEL (block devices /dev/dlmbN, for
 * dlmctl) need the handshake but no space.
 * Every structure is fixed-size with explicit padding; fields named
 * reserved* must be zero on input and are zero on output.
 */
#ifndef _UAPI_LINUX_DLMEM_H
#define _UAPI_LINUX_DLMEM_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#define DLM_API_VERSION		1

/* Features negotiated by DLM_IOC_API (bit set = supported / requested). */
#define DLM_FEATURE_LOCAL	_BITULL(0)	/* DLM_BACKING_LOCAL spaces */
#define DLM_FEATURE_STATS	_BITULL(1)	/* DLM_IOC_STATS */
#define DLM_FEATURE_REMOTE	_BITULL(2)	/* DLM_BACKING_REMOTE spaces */
#define DLM_FEATURE_BLK		_BITULL(3)	/* DLM_IOC_BLK_ADD, _DEL */
#define DLM_FEATURE_SAME_FILLED	_BITULL(4)	/* dlm_stats.same_filled */
#define DLM_FEATURE_PROTO_INLINE _BITULL(5)	/* DLM_PROTO_INLINE */

/**
 * struct dlm_api - DLM_IOC_API argument.
 * @api: in: DLM_API_VERSION the caller was built for; out: the kernel's.
 * @reserved: must be zero.
 * @features: in: features the caller requires (unknown bits: EINVAL);
 *	out: every feature this kernel supports.
 */
struct dlm_api {
	__u32 api;
	__u32 reserved;
	__u64 features;
};

/**
 * struct dlm_info - DLM_IOC_GET_INFO result (output only).
 * @api: DLM_API_VERSION of the kernel.
 * @page_size_min: smallest DLM page size (the CPU page size).
 * @features: every feature this kernel supports.
 * @page_size_default: DLM page size used when dlm_setup.page_size is 0.
 * @page_size_max: largest DLM page size accepted.
 * @total_size_max: largest dlm_setup.total_size accepted.
 * @local_budget_max: largest dlm_setup.local_budget accepted.
 * @reserved: zero.
 */
struct dlm_info {
	__u32 api;
	__u32 page_size_min;
	__u64 features;
	__u64 page_size_default;
	__u64 page_size_max;
	__u64 total_size_max;
	__u64 local_budget_max;
	__u64 reserved[4];
};

/* dlm_setup.backing: where DLM pages live beyond the local budget. */
#define DLM_BACKING_LOCAL	0	/* nowhere: a fault beyond budget is SIGBUS */
#define DLM_BACKING_REMOTE	1	/* memory servers through dlmd */

/* dlm_setup.policy: which resident DLM page a remote space evicts. */
#define DLM_POLICY_DEFAULT	0	/* currently DLM_POLICY_CLOCK */
#define DLM_POLICY_ARR		1	/* address round-robin (the papers') */
#define DLM_POLICY_CLOCK	2	/* second chance on recent access */

/* dlm_setup.protocol: how a remote space's fault overlaps its transfers. */
#define DLM_PROTO_DEFAULT	0	/* currently DLM_PROTO_INLINE */
#define DLM_PROTO_SERIAL	1	/* store the victim, then fetch */
#define DLM_PROTO_CROSS		2	/* store and fetch at once, wait both */
/* ASYNC: wait for the fetch only; the next victim is stored behind it. */
#define DLM_PROTO_ASYNC		3
/*
 * INLINE: wait for the fetch only, as ASYNC, but the fault itself chooses
 * and unmaps the next victims and sends their stores, instead of a worker
 * on another CPU.  Kernels with DLM_FEATURE_PROTO_INLINE; others refuse 4
 * with EINVAL.
 */
#define DLM_PROTO_INLINE	4

/**
 * struct dlm_setup - DLM_IOC_SETUP argument.
 * @flags: must be zero (no flags defined in API version 1).
 * @backing: DLM_BACKING_*.
 * @page_size: DLM page size in bytes, a multiple of dlm_info.page_size_min
 *	up to dlm_info.page_size_max; 0 selects dlm_info.page_size_default.
 * @total_size: size of the DLM space in bytes, a non-zero multiple of the
 *	DLM page size, at most dlm_info.total_size_max.
 * @local_budget: bytes of local frames the space may hold resident, a
 *	multiple of the DLM page size, at most dlm_info.local_budget_max;
 *	0 selects min(total_size, rounded-down local_budget_max).
 *	Out: the budget in force.
 * @mmap_offset: in: must be 0; out: the offset to pass to mmap() for this
 *	space.
 * @policy: DLM_POLICY_*; must be 0 for DLM_BACKING_LOCAL.  Out: in force.
 * @protocol: DLM_PROTO_*; must be 0 for DLM_BACKING_LOCAL.  Out: in force.
 * @reserved: must be zero.
 */
struct dlm_setup {
	__u32 flags;
	__u32 backing;
	__u64 page_size;
	__u64 total_size;
	__u64 local_budget;
	__u64 mmap_offset;
	__u32 policy;
	__u32 protocol;
	__u64 reserved[2];
};

/**
 * struct dlm_stats - DLM_IOC_STATS result (output only).
 * @faults: page faults that resolved a DLM page (one per DLM page mapped
 *	into one process, not one per 4 KB page).
 * @populates: DLM pages materialised zero-filled on first touch.
 * @sigbus: faults answered with SIGBUS.
 * @dpages_resident: DLM pages currently holding local frames.
 * @bytes_resident: bytes of local frames currently held.
 * @bytes_mapped: bytes inserted into page tables, cumulative.
 * @swapins: DLM pages fetched from memory servers.
 * @swapouts: DLM pages stored to memory servers.
 * @lost: DLM pages whose data was lost (server or daemon failure).
 * @drops: DLM pages evicted without a transfer: never written since they
 *	were fetched (the daemon kept the copy) or zero-filled.
 * @store_waits: faults that found no free local slot and waited for a
 *	victim's swap-out (the free-slot reserve was empty); a fault retried
 *	after waiting may count more than once.
 * @readaheads: DLM pages fetched ahead of a sequential fault.
 * @same_filled: DLM pages evicted as one repeated 8-byte value: the kernel
 *	kept the value instead of storing the page (written pages found so,
 *	and such pages evicted again unwritten; zero is kept as never
 *	touched).  Their next fault fills the frames locally.  Needs
 *	DLM_FEATURE_SAME_FILLED (older kernels leave it zero).
 * @reserved: zero.
 */
struct dlm_stats {
	__u64 faults;
	__u64 populates;
	__u64 sigbus;
	__u64 dpages_resident;
	__u64 bytes_resident;
	__u64 bytes_mapped;
	__u64 swapins;
	__u64 swapouts;
	__u64 lost;
	__u64 drops;
	__u64 store_waits;
	__u64 readaheads;
	__u64 same_filled;
	__u64 reserved[3];
};

/* Defaults and limits of struct dlm_blk_add. */
#define DLM_BLK_DEPTH_DEFAULT	32
#define DLM_BLK_DEPTH_MAX	256
#define DLM_BLK_QUEUES_MAX	8
#define DLM_BLK_IO_MAX		(128 << 10)	/* bytes per request */

/**
 * struct dlm_blk_add - DLM_IOC_BLK_ADD argument: create /dev/dlmbN.
 * @flags: must be zero.
 * @index: out: N of the new /dev/dlmbN.
 * @size: bytes, a non-zero multiple of 4096, at most
 *	dlm_info.total_size_max.  The memory servers reserve all of it.
 * @logical_block_size: 4096, or 0 for 4096 (no other size yet).
 * @queue_depth: requests in flight per hardware queue, 1 to
 *	DLM_BLK_DEPTH_MAX; 0 selects DLM_BLK_DEPTH_DEFAULT.  Each takes
 *	DLM_BLK_IO_MAX bytes of the daemon's frame pool.
 * @nr_hw_queues: 1 to DLM_BLK_QUEUES_MAX; 0 selects min(CPUs, 4).
 * @reserved0: must be zero.
 * @reserved: must be zero.
 *
 * The device is served by the registered dlmd; without one the ioctl
 * fails with ENOTCONN.  Blocks never written (or discarded) read as
 * zeroes.  A write completes once the memory server holds it, so the
 * device has no volatile cache to flush.  If dlmd dies its data is lost:
 * I/O fails with EIO from then on, even after a new dlmd registers.
 * Needs CAP_SYS_ADMIN.
 */
struct dlm_blk_add {
	__u32 flags;
	__u32 index;
	__u64 size;
	__u32 logical_block_size;
	__u32 queue_depth;
	__u32 nr_hw_queues;
	__u32 reserved0;
	__u64 reserved[2];
};

/**
 * struct dlm_blk_del - DLM_IOC_BLK_DEL argument: remove /dev/dlmbN.
 * @flags: must be zero.
 * @index: N.  ENOENT if there is no such device, EBUSY while it is open
 *	(mounted, swapped on, or held by a program).
 * @reserved: must be zero.
 */
struct dlm_blk_del {
	__u32 flags;
	__u32 index;
	__u64 reserved[2];
};

#define DLM_IOC_MAGIC		0xDA

#define DLM_IOC_API		_IOWR(DLM_IOC_MAGIC, 0x00, struct dlm_api)
#define DLM_IOC_GET_INFO	_IOR(DLM_IOC_MAGIC, 0x01, struct dlm_info)
#define DLM_IOC_SETUP		_IOWR(DLM_IOC_MAGIC, 0x02, struct dlm_setup)
#define DLM_IOC_STATS		_IOR(DLM_IOC_MAGIC, 0x03, struct dlm_stats)
#define DLM_IOC_BLK_ADD		_IOWR(DLM_IOC_MAGIC, 0x10, struct dlm_blk_add)
#define DLM_IOC_BLK_DEL		_IOW(DLM_IOC_MAGIC, 0x11, struct dlm_blk_del)

#endif /* _UAPI_LINUX_DLMEM_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal declarations of dlmem.ko, the DLM remote-memory module.
 */
#ifndef _DLMEM_H
#define _DLMEM_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <uapi/linux/dlmem.h>

/*
 * Every DLM space owns a window of 2^DLM_SPACE_SHIFT bytes of file offsets
 * of /dev/dlm, so unmap_mapping_range() on the device's address_space can
 * reach exactly the mappings of one space.
 */
#define DLM_SPACE_SHIFT		46
#define DLM_TOTAL_SIZE_MAX	BIT_ULL(DLM_SPACE_SHIFT)
#define DLM_SPACES_MAX		(1U << (63 - DLM_SPACE_SHIFT))
#define DLM_PAGE_SIZE_MAX	(256ULL << 20)

#define DLM_FEATURES_SUPPORTED	(DLM_FEATURE_LOCAL | DLM_FEATURE_STATS)

/* Module-wide limits, fixed at load time (main.c). */
struct dlm_limits {
	u64 page_size_default;
	u64 local_budget_max;
};

extern struct dlm_limits dlm_limits;

/* Module-wide gauges, shown in /sys/class/misc/dlm/ (dev.c). */
extern atomic64_t dlm_spaces_live;
extern atomic64_t dlm_frames_live;

/**
 * struct dlm_dpage - one resident DLM page.
 * @nr_frames: CPU pages in the DLM page.
 * @frames: the order-0 pages backing it, one per CPU page, in order.
 */
struct dlm_dpage {
	unsigned int nr_frames;
	struct page *frames[] __counted_by(nr_frames);
};

/**
 * struct dlm_space - one DLM address space, owned by one open file.
 * @lock: serialises population and the resident count.
 * @dpages: resident DLM pages by DLM page number.
 * @mapping: address_space whose vmas map this space.
 * @id: index of the space's window of file offsets.
 * @base_pgoff: first file page offset of the window.
 * @page_size: DLM page size in bytes.
 * @ppd: CPU pages per DLM page.
 * @nr_dpages: DLM pages in the space.
 * @budget_dpages: DLM pages that may be resident at once.
 * @backing: DLM_BACKING_*.
 * @nr_resident: DLM pages currently resident (under @lock).
 */
struct dlm_space {
	struct mutex lock;		/* population, nr_resident */
	struct xarray dpages;
	struct address_space *mapping;
	int id;
	unsigned long base_pgoff;
	u64 page_size;
	unsigned int ppd;
	u64 nr_dpages;
	u64 budget_dpages;
	u32 backing;
	u64 nr_resident;
	atomic64_t faults;
	atomic64_t populates;
	atomic64_t sigbus;
	atomic64_t bytes_mapped;
};

/* space.c */
struct dlm_space *dlm_space_create(const struct dlm_setup *setup,
				   struct address_space *mapping);
void dlm_space_destroy(struct dlm_space *sp);
struct dlm_dpage *dlm_space_get_dpage(struct dlm_space *sp, u64 dpn,
				      vm_fault_t *ret);
void dlm_space_stats(struct dlm_space *sp, struct dlm_stats *st);
void dlm_space_exit(void);

/* fault.c */
int dlm_space_mmap(struct dlm_space *sp, struct vm_area_struct *vma);

/* dev.c */
int dlm_dev_init(void);
void dlm_dev_exit(void);

#endif /* _DLMEM_H */

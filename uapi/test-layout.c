// SPDX-License-Identifier: GPL-2.0
/*
 * The uapi is a contract: its layout must not change by accident and must
 * be the same for 32- and 64-bit callers (no compat translation needed).
 * Compiled by scripts/test-uapi.sh as C and C++, 64- and 32-bit.
 */
#include <stddef.h>
#include <linux/dlmem.h>

#ifdef __cplusplus
#define STATIC_ASSERT static_assert
#else
#define STATIC_ASSERT _Static_assert
#endif

#define SIZE(t, n)	STATIC_ASSERT(sizeof(struct t) == (n), #t " size")
#define OFF(t, f, n)	STATIC_ASSERT(offsetof(struct t, f) == (n), #t "." #f)

SIZE(dlm_api, 16);
OFF(dlm_api, api, 0);
OFF(dlm_api, reserved, 4);
OFF(dlm_api, features, 8);

SIZE(dlm_info, 80);
OFF(dlm_info, api, 0);
OFF(dlm_info, page_size_min, 4);
OFF(dlm_info, features, 8);
OFF(dlm_info, page_size_default, 16);
OFF(dlm_info, page_size_max, 24);
OFF(dlm_info, total_size_max, 32);
OFF(dlm_info, local_budget_max, 40);
OFF(dlm_info, reserved, 48);

SIZE(dlm_setup, 64);
OFF(dlm_setup, flags, 0);
OFF(dlm_setup, backing, 4);
OFF(dlm_setup, page_size, 8);
OFF(dlm_setup, total_size, 16);
OFF(dlm_setup, local_budget, 24);
OFF(dlm_setup, mmap_offset, 32);
OFF(dlm_setup, policy, 40);
OFF(dlm_setup, protocol, 44);
OFF(dlm_setup, reserved, 48);

SIZE(dlm_stats, 128);
OFF(dlm_stats, faults, 0);
OFF(dlm_stats, populates, 8);
OFF(dlm_stats, sigbus, 16);
OFF(dlm_stats, dpages_resident, 24);
OFF(dlm_stats, bytes_resident, 32);
OFF(dlm_stats, bytes_mapped, 40);
OFF(dlm_stats, swapins, 48);
OFF(dlm_stats, swapouts, 56);
OFF(dlm_stats, lost, 64);
OFF(dlm_stats, drops, 72);
OFF(dlm_stats, store_waits, 80);
OFF(dlm_stats, readaheads, 88);
OFF(dlm_stats, reserved, 96);

SIZE(dlm_blk_add, 48);
OFF(dlm_blk_add, flags, 0);
OFF(dlm_blk_add, index, 4);
OFF(dlm_blk_add, size, 8);
OFF(dlm_blk_add, logical_block_size, 16);
OFF(dlm_blk_add, queue_depth, 20);
OFF(dlm_blk_add, nr_hw_queues, 24);
OFF(dlm_blk_add, reserved0, 28);
OFF(dlm_blk_add, reserved, 32);

SIZE(dlm_blk_del, 24);
OFF(dlm_blk_del, flags, 0);
OFF(dlm_blk_del, index, 4);
OFF(dlm_blk_del, reserved, 8);

/* The ioctl numbers encode the sizes: pin them too. */
STATIC_ASSERT(DLM_IOC_API == 0xc010da00, "DLM_IOC_API");
STATIC_ASSERT(DLM_IOC_GET_INFO == 0x8050da01, "DLM_IOC_GET_INFO");
STATIC_ASSERT(DLM_IOC_SETUP == 0xc040da02, "DLM_IOC_SETUP");
STATIC_ASSERT(DLM_IOC_STATS == 0x8080da03, "DLM_IOC_STATS");
STATIC_ASSERT(DLM_IOC_BLK_ADD == 0xc030da10, "DLM_IOC_BLK_ADD");
STATIC_ASSERT(DLM_IOC_BLK_DEL == 0x4018da11, "DLM_IOC_BLK_DEL");

int main(void)
{
	return 0;
}

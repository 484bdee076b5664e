// SPDX-License-Identifier: GPL-2.0
/*
 * The uapi is a contract: its layout must not change by accident and must
 * be the same for 32- and 64-bit callers (no compat translation needed).
 * Compiled by scripts/test-uapi.sh as C and C++, 64- and 32-bit.
 */
#include <stddef.h>
#include <linux/dlmem.h>
#include <linux/fmpl.h>
#include <linux/awgstar.h>

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
OFF(dlm_stats, same_filled, 96);
OFF(dlm_stats, reserved, 104);

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

/* /dev/fmpl */
SIZE(fmpl_api, 16);
OFF(fmpl_api, api, 0);
OFF(fmpl_api, reserved, 4);
OFF(fmpl_api, features, 8);

SIZE(fmpl_info, 64);
OFF(fmpl_info, api, 0);
OFF(fmpl_info, ranks_max, 4);
OFF(fmpl_info, features, 8);
OFF(fmpl_info, count_max, 16);
OFF(fmpl_info, inline_max, 20);
OFF(fmpl_info, msg_max, 24);
OFF(fmpl_info, reserved, 32);

SIZE(fmpl_header, 32);
OFF(fmpl_header, state, 0);
OFF(fmpl_header, seq, 4);
OFF(fmpl_header, buf, 8);
OFF(fmpl_header, size, 16);
OFF(fmpl_header, reserved, 24);

SIZE(fmpl_flag, 32);
OFF(fmpl_flag, state, 0);
OFF(fmpl_flag, error, 4);
OFF(fmpl_flag, mai, 8);
OFF(fmpl_flag, seq, 12);
OFF(fmpl_flag, size, 16);
OFF(fmpl_flag, reserved, 24);

SIZE(fmpl_init, 80);
OFF(fmpl_init, key, 0);
OFF(fmpl_init, size, 8);
OFF(fmpl_init, rank, 12);
OFF(fmpl_init, mode, 16);
OFF(fmpl_init, count, 20);
OFF(fmpl_init, join_timeout_ms, 24);
OFF(fmpl_init, fast_count, 28);
OFF(fmpl_init, ma, 32);
OFF(fmpl_init, fa, 40);
OFF(fmpl_init, reserved, 48);

SIZE(fmpl_xfer, 80);
OFF(fmpl_xfer, buf, 0);
OFF(fmpl_xfer, size, 8);
OFF(fmpl_xfer, peer, 16);
OFF(fmpl_xfer, mai, 20);
OFF(fmpl_xfer, comm, 24);
OFF(fmpl_xfer, reserved0, 28);
OFF(fmpl_xfer, flags, 32);
OFF(fmpl_xfer, status, 40);
OFF(fmpl_xfer, out_peer, 44);
OFF(fmpl_xfer, out_mai, 48);
OFF(fmpl_xfer, reserved1, 52);
OFF(fmpl_xfer, out_size, 56);
OFF(fmpl_xfer, reserved, 64);

SIZE(fmpl_wait, 56);
OFF(fmpl_wait, peer, 0);
OFF(fmpl_wait, mai, 4);
OFF(fmpl_wait, comm, 8);
OFF(fmpl_wait, reserved0, 12);
OFF(fmpl_wait, flags, 16);
OFF(fmpl_wait, status, 24);
OFF(fmpl_wait, out_mai, 28);
OFF(fmpl_wait, out_size, 32);
OFF(fmpl_wait, reserved, 40);

SIZE(fmpl_sendbuf, 40);
OFF(fmpl_sendbuf, buf, 0);
OFF(fmpl_sendbuf, size, 8);
OFF(fmpl_sendbuf, timeout_ms, 16);
OFF(fmpl_sendbuf, reserved0, 20);
OFF(fmpl_sendbuf, reserved, 24);

SIZE(fmpl_sendbuf_stat, 32);
OFF(fmpl_sendbuf_stat, nsend, 0);
OFF(fmpl_sendbuf_stat, nspool, 4);
OFF(fmpl_sendbuf_stat, spool_used, 8);
OFF(fmpl_sendbuf_stat, reserved, 16);

SIZE(fmpl_coll, 40);
OFF(fmpl_coll, buf, 0);
OFF(fmpl_coll, size, 8);
OFF(fmpl_coll, root, 16);
OFF(fmpl_coll, comm, 20);
OFF(fmpl_coll, reserved, 24);

SIZE(fmpl_comm_create, 40);
OFF(fmpl_comm_create, parent, 0);
OFF(fmpl_comm_create, key, 4);
OFF(fmpl_comm_create, comm, 8);
OFF(fmpl_comm_create, rank, 12);
OFF(fmpl_comm_create, size, 16);
OFF(fmpl_comm_create, reserved0, 20);
OFF(fmpl_comm_create, reserved, 24);

SIZE(fmpl_comm_info, 48);
OFF(fmpl_comm_info, comm, 0);
OFF(fmpl_comm_info, size, 4);
OFF(fmpl_comm_info, rank, 8);
OFF(fmpl_comm_info, reserved0, 12);
OFF(fmpl_comm_info, members, 16);
OFF(fmpl_comm_info, members_len, 24);
OFF(fmpl_comm_info, reserved1, 28);
OFF(fmpl_comm_info, reserved, 32);

SIZE(fmpl_comm_free, 24);
OFF(fmpl_comm_free, comm, 0);
OFF(fmpl_comm_free, reserved0, 4);
OFF(fmpl_comm_free, reserved, 8);

SIZE(fmpl_fast_slot, 128);
OFF(fmpl_fast_slot, sent, 0);
OFF(fmpl_fast_slot, taken, 4);
OFF(fmpl_fast_slot, size, 8);
OFF(fmpl_fast_slot, recv_sleeps, 12);
OFF(fmpl_fast_slot, send_sleeps, 16);
OFF(fmpl_fast_slot, reserved, 20);
OFF(fmpl_fast_slot, data, 32);

SIZE(fmpl_fast_wait, 40);
OFF(fmpl_fast_wait, offset, 0);
OFF(fmpl_fast_wait, value, 8);
OFF(fmpl_fast_wait, peer, 12);
OFF(fmpl_fast_wait, timeout_ms, 16);
OFF(fmpl_fast_wait, reserved0, 20);
OFF(fmpl_fast_wait, reserved, 24);

SIZE(fmpl_fast_wake, 24);
OFF(fmpl_fast_wake, rank, 0);
OFF(fmpl_fast_wake, reserved0, 4);
OFF(fmpl_fast_wake, reserved, 8);

STATIC_ASSERT(FMPL_IOC_API == 0xc010db00, "FMPL_IOC_API");
STATIC_ASSERT(FMPL_IOC_GET_INFO == 0x8040db01, "FMPL_IOC_GET_INFO");
STATIC_ASSERT(FMPL_IOC_INIT == 0x4050db02, "FMPL_IOC_INIT");
STATIC_ASSERT(FMPL_IOC_SEND == 0xc050db10, "FMPL_IOC_SEND");
STATIC_ASSERT(FMPL_IOC_RECV == 0xc050db11, "FMPL_IOC_RECV");
STATIC_ASSERT(FMPL_IOC_WAIT == 0xc038db12, "FMPL_IOC_WAIT");
STATIC_ASSERT(FMPL_IOC_SENDBUF_SET == 0x4028db13, "FMPL_IOC_SENDBUF_SET");
STATIC_ASSERT(FMPL_IOC_SENDBUF_CHECK == 0x8020db14, "FMPL_IOC_SENDBUF_CHECK");
STATIC_ASSERT(FMPL_IOC_BARRIER == 0x4028db20, "FMPL_IOC_BARRIER");
STATIC_ASSERT(FMPL_IOC_BCAST == 0x4028db21, "FMPL_IOC_BCAST");
STATIC_ASSERT(FMPL_IOC_COMM_CREATE == 0xc028db22, "FMPL_IOC_COMM_CREATE");
STATIC_ASSERT(FMPL_IOC_FAST_WAIT == 0x4028db30, "FMPL_IOC_FAST_WAIT");
STATIC_ASSERT(FMPL_IOC_FAST_WAKE == 0x4018db31, "FMPL_IOC_FAST_WAKE");
STATIC_ASSERT(FMPL_IOC_COMM_INFO == 0xc030db23, "FMPL_IOC_COMM_INFO");

/* /dev/awgstar */
SIZE(awg_api, 16);
SIZE(awg_info, 112);
SIZE(awg_config, 40);
SIZE(awg_xfer, 32);
SIZE(awg_flush, 8);
SIZE(awg_event, 24);
SIZE(awg_stats, 240);
SIZE(awg_token, 40);
SIZE(awg_frame, 40);
SIZE(awg_ring_attach, 16);
SIZE(awg_ring_visit, 40);
OFF(awg_info, size, 16);
OFF(awg_info, generation, 72);
OFF(awg_frame, seq, 16);
OFF(awg_frame, aux, 32);
OFF(awg_ring_visit, out_len, 24);
OFF(awg_token, rotation, 32);
OFF(awg_stats, rot_busy_model_ns, 168);

STATIC_ASSERT(AWG_IOC_API == 0xc010a500, "AWG_IOC_API");
STATIC_ASSERT(AWG_IOC_GET_INFO == 0x8070a501, "AWG_IOC_GET_INFO");
STATIC_ASSERT(AWG_IOC_SET_CONFIG == 0x4028a502, "AWG_IOC_SET_CONFIG");
STATIC_ASSERT(AWG_IOC_GET_STATS == 0x80f0a503, "AWG_IOC_GET_STATS");
STATIC_ASSERT(AWG_IOC_WRITE == 0x4020a510, "AWG_IOC_WRITE");
STATIC_ASSERT(AWG_IOC_READ == 0x4020a511, "AWG_IOC_READ");
STATIC_ASSERT(AWG_IOC_FLUSH == 0x4008a512, "AWG_IOC_FLUSH");
STATIC_ASSERT(AWG_IOC_EVENT_SEND == 0x4018a520, "AWG_IOC_EVENT_SEND");
STATIC_ASSERT(AWG_IOC_EVENT_WAIT == 0xc018a521, "AWG_IOC_EVENT_WAIT");
STATIC_ASSERT(AWG_IOC_RING_ATTACH == 0x4010a530, "AWG_IOC_RING_ATTACH");
STATIC_ASSERT(AWG_IOC_RING_VISIT == 0xc028a531, "AWG_IOC_RING_VISIT");
STATIC_ASSERT(AWG_TOKEN_MAX == 0x10a28, "AWG_TOKEN_MAX");

int main(void)
{
	return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * awgstar.h - libawgstar, the AWG-STAR shared-memory board (/dev/awgstar)
 * for C programs, shaped after the RFM2g API of reflective-memory cards so
 * that their programs port by renaming:
 *
 *   RFM2gOpen / RFM2gClose          awg_open / awg_close
 *   RFM2gNodeId, RFM2gSize          awg_node_id, awg_size (+ awg_nodes)
 *   RFM2gRead / RFM2gWrite          awg_read / awg_write
 *   RFM2gPeek8..64 / RFM2gPoke8..64 awg_peek8..64 / awg_poke8..64
 *   RFM2gSetDMAThreshold / Get...   awg_set_dma_threshold / awg_get_dma_threshold
 *   RFM2gUserMemory                 awg_map (the whole region, mapped at open)
 *   RFM2gSendEvent                  awg_send_event
 *   RFM2gEnableEvent+WaitForEvent   awg_wait_event (always enabled)
 *   (none)                          awg_flush (fence), awg_barrier
 *
 * Every call returns 0 on success and -1 with errno set on failure
 * (awg_open also prints nothing; awg_strerror()-style text is strerror()).
 *
 * Costs, as on the board: reads (awg_read, awg_peek*, loads through
 * awg_map) are local.  awg_poke* is one board write: one frame, returning
 * when the frame is on the token, so a loop of pokes pays a token visit
 * per element.  awg_write of at least the DMA threshold bytes (default 0:
 * every awg_write) is the DMA path: frames of 1 KiB, returning when they
 * are on the token.  Below the threshold awg_write is a memcpy into the
 * mapping: pointer stores, published at the next token visit and fenced
 * by awg_flush.
 */
#ifndef AWGSTAR_H
#define AWGSTAR_H

#include <stddef.h>
#include <stdint.h>
#include <linux/awgstar.h>

#ifdef __cplusplus
extern "C" {
#endif

struct awg_handle;

/* The event id awg_barrier uses; programs should not send it. */
#define AWG_BARRIER_EVENT	(AWG_EVENTS - 1)

/*
 * Open the board: `device` is a path, or NULL for $AWG_DEVICE, else
 * /dev/awgstar.  Performs the API handshake and maps the whole region
 * (MAP_SHARED).  Fails with ENOENT (no such device: load dlmem.ko),
 * EPROTONOSUPPORT (kernel too old) or the open/mmap errno.
 */
int awg_open(const char *device, struct awg_handle **handle);
/* Flush, unmap and close; *handle becomes NULL. */
int awg_close(struct awg_handle **handle);

int awg_node_id(struct awg_handle *h, uint32_t *node_id);
/* Live nodes on the ring now (1 when alone). */
int awg_nodes(struct awg_handle *h, uint32_t *nodes);
int awg_size(struct awg_handle *h, uint64_t *size);
/* The whole region, mapped MAP_SHARED at awg_open(); loads are local. */
void *awg_map(struct awg_handle *h);

int awg_read(struct awg_handle *h, uint64_t offset, void *buf, size_t len);
int awg_write(struct awg_handle *h, uint64_t offset, const void *buf, size_t len);

int awg_peek8(struct awg_handle *h, uint64_t offset, uint8_t *value);
int awg_peek16(struct awg_handle *h, uint64_t offset, uint16_t *value);
int awg_peek32(struct awg_handle *h, uint64_t offset, uint32_t *value);
int awg_peek64(struct awg_handle *h, uint64_t offset, uint64_t *value);
int awg_poke8(struct awg_handle *h, uint64_t offset, uint8_t value);
int awg_poke16(struct awg_handle *h, uint64_t offset, uint16_t value);
int awg_poke32(struct awg_handle *h, uint64_t offset, uint32_t value);
int awg_poke64(struct awg_handle *h, uint64_t offset, uint64_t value);

int awg_set_dma_threshold(struct awg_handle *h, size_t bytes);
int awg_get_dma_threshold(struct awg_handle *h, size_t *bytes);

/* Fence: every store and write made before it has reached every live node. */
int awg_flush(struct awg_handle *h);

/* Send event `id` (< AWG_BARRIER_EVENT) with `data` to `node` or AWG_NODE_ALL. */
int awg_send_event(struct awg_handle *h, uint32_t node, uint32_t id, uint32_t data);
/*
 * Wait up to timeout_ms (0: poll, EAGAIN) for event `id` (< AWG_BARRIER_EVENT);
 * the sender goes to *node and its data to *data (either may be NULL).
 * ETIMEDOUT.
 */
int awg_wait_event(struct awg_handle *h, uint32_t id, uint32_t *node,
		   uint32_t *data, int timeout_ms);
/*
 * Barrier of every live node, through board events: flush, send
 * AWG_BARRIER_EVENT to all, wait for one from each other live node.
 * ETIMEDOUT after $AWG_BARRIER_TIMEOUT_MS (default 60000).  A failed call
 * does not count: the next call enters the same barrier, or resumes its
 * wait without sending again.
 */
int awg_barrier(struct awg_handle *h);

int awg_get_stats(struct awg_handle *h, struct awg_stats *stats);
int awg_get_info(struct awg_handle *h, struct awg_info *info);
/* Change the board (CAP_SYS_ADMIN): mode, fiber length, ... */
int awg_set_config(struct awg_handle *h, const struct awg_config *config);

#ifdef __cplusplus
}
#endif

#endif /* AWGSTAR_H */

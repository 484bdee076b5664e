/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /dev/awgstar internals: one emulated AWG-STAR board (a node of the ring)
 * per device.  awg_dev.c: device files, ioctls; awg_mem.c: the replica,
 * its mapping and the capture of pointer stores; awg_ring.c: the token,
 * frames, acknowledgments, events and the timing model.
 *
 * Locking, outermost first:
 *   b->ring_io_mutex  the attached daemon's visits one at a time, from
 *                   the copy of its token into ring_in to the copy of
 *                   ring_out back: two threads of the daemon visiting at
 *                   once would change a token after it was checked;
 *                   held while those copies fault, so nothing a fault
 *                   does may take it;
 *   b->visit_mutex  one token visit at a time (the token is unique);
 *   page lock       the contents of one replica page against stores: a page
 *                   that may be written through a user mapping is
 *                   write-protected (folio_mkclean) under its lock before
 *                   the kernel compares or changes it, and page_mkwrite()
 *                   takes the lock, so no store lands mid-operation;
 *   b->lock         spinlock: the dirty list, the send queue, in-flight
 *                   frames, events, the ring state and the statistics.
 * page_mkwrite() runs under the mmap lock and takes the page lock, then
 * b->lock; a visit never takes the mmap lock while it holds a page lock.
 */
#ifndef _DLMEM_AWGSTAR_H
#define _DLMEM_AWGSTAR_H

#include <linux/fs.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "dlmem.h"
#include "uapi/linux/awgstar.h"

#define AWG_BOARDS_MAX		8
#define AWG_EVENT_QUEUE		256
#define AWG_FEATURES_SUPPORTED	(AWG_FEATURE_MMAP | AWG_FEATURE_DMA | \
				 AWG_FEATURE_EVENTS | AWG_FEATURE_RING | \
				 AWG_FEATURE_MODEL | AWG_FEATURE_VISIT_CHECK)
#define AWG_FLUSH_TIMEOUT_MS	10000
#define AWG_SUBMIT_TIMEOUT_MS	10000

/* The board's figures (seed 001, Table 1 and section 3.3.3). */
#define AWG_NODE_DELAY_NS	500
#define AWG_FIBER_NS_PER_M	5
#define AWG_LINK_MBPS		2152
#define AWG_WRITE_KBPS		170000
#define AWG_READ_KBPS		380000
#define AWG_IDLE_US		200

/* State of one replica page. */
struct awg_pstate {
	struct list_head dirty;	/* on b->dirty while twin != NULL */
	void *twin;		/* what the other nodes hold (or will) */
	u64 ticket;		/* order in which pages became dirty */
};

/* A DMA write or an event waiting in its caller for the token. */
struct awg_sub {
	unsigned int pending;	/* its items not yet on the token */
	int error;		/* an item dropped instead (under b->lock) */
};

/*
 * A frame waiting to be put on the token (on b->send, owned by its
 * caller's struct awg_sub), then on it and not yet acked (on b->flight,
 * owned by the board, kept to be sent again if the token is lost).
 */
struct awg_item {
	struct list_head node;
	struct awg_sub *sub;	/* NULL once on the token */
	u64 ticket_req;		/* events: pages dirty before must go first */
	struct awg_frame f;	/* crc, ack, seq filled in when appended */
	u8 data[];		/* f.len bytes */
};

struct awg_event_q {
	u32 head, count;
	struct {
		u32 node, data;
	} e[AWG_EVENT_QUEUE];
};

/**
 * struct awg_board - one emulated board, a node of the ring.
 * @idx: board number (device awgstar, awgstar1, ...).
 * @name: the device's name.
 * @misc: its device.
 * @inode: owns the address_space every mapping of the board is linked
 *	to, whichever device node it was opened through (folio_mkclean()
 *	finds the user mappings of a page there).
 * @size: bytes of the region.
 * @npages: pages of the region.
 * @pages: the replica.
 * @ps: per-page state.
 * @ring_io_mutex: one visit by the attached daemon at a time, copies to
 *	and from its buffers included.
 * @visit_mutex: one token visit at a time.
 * @lock: see the top of this file.
 * @dirty: pages with a twin, oldest first.
 * @ticket_next: last ticket handed out.
 * @published: every page with a ticket up to this one has had its stores
 *	published.
 * @send: frames to append (DMA writes, events), oldest first.
 * @flight: own frames on the token, not yet acked by every live node.
 * @seq_next: last sequence number used.
 * @acked_seq: every own frame up to this one is acked by every live node.
 * @expect: next sequence number expected from each origin.
 * @inject_state: state of the generator of injected CRC errors
 *	(awg_config.crc_inject_permille).
 * @ring_file: the attached daemon's file, NULL for the loopback ring.
 * @ring_in: the daemon's token, in.
 * @ring_out: the daemon's token, out.
 * @node_id: this board's place on the ring.
 * @nodes: nodes on the ring.
 * @live_mask: nodes still on the ring.
 * @ring_id: the ring this board is part of.
 * @generation: token generation, incremented when the token is remade.
 * @rotation: node 0: rotations of the token so far (carried in its header).
 * @last_depart_ns: node 0: when the token last left.
 * @model_debt_ns: node 0: model time overrun, to pay back.
 * @tok: the token of the loopback ring.
 * @tok_out: where a visit of the loopback ring builds the next token.
 * @publish_work: the loopback ring publishes pointer stores on its own.
 * @cfg: the configuration (AWG_IOC_SET_CONFIG).
 * @stats: the counters (AWG_IOC_GET_STATS).
 * @events: one queue per event id (0 .. AWG_EVENTS - 1).
 * @done_wq: woken when frames are appended, acked or published, and on
 *	detach.
 * @work_wq: node 0 idle: woken when local work arrives.
 * @event_wq: woken when an event arrives.
 */
struct awg_board {
	int idx;
	char name[16];
	struct miscdevice misc;
	struct inode *inode;
	u64 size;
	unsigned long npages;
	struct page **pages;
	struct awg_pstate *ps;

	struct mutex ring_io_mutex;	/* the daemon's visits, copies included */
	struct mutex visit_mutex;	/* one visit at a time */
	spinlock_t lock;		/* see the top of this file */
	struct list_head dirty;
	u64 ticket_next, published;
	struct list_head send;
	struct list_head flight;
	u64 seq_next, acked_seq;
	u64 expect[AWG_NODES_MAX];
	u32 inject_state;

	struct file *ring_file;
	void *ring_in, *ring_out;
	u32 node_id, nodes, live_mask, ring_id, generation;
	u64 rotation;
	u64 last_depart_ns;
	u64 model_debt_ns;
	void *tok, *tok_out;
	struct delayed_work publish_work;

	struct awg_config cfg;
	struct awg_stats stats;
	struct awg_event_q events[AWG_EVENTS];

	wait_queue_head_t done_wq;
	wait_queue_head_t work_wq;
	wait_queue_head_t event_wq;
};

/* awg_mem.c */
int awg_mem_init(struct awg_board *b, u64 size);
void awg_mem_exit(struct awg_board *b);
int awg_mmap(struct awg_board *b, struct vm_area_struct *vma);
unsigned int awg_publish(struct awg_board *b, u8 **pos, u8 *end,
			 unsigned int budget);
void awg_apply(struct awg_board *b, u64 addr, const u8 *data, u32 len,
	       bool own);
int awg_read_region(struct awg_board *b, u64 off, void __user *buf, u64 len);
bool awg_has_dirty(struct awg_board *b);

/* awg_ring.c */
int awg_emit(struct awg_board *b, u8 **pos, u8 *end, u8 type, u64 addr,
	     u64 aux, const u8 *data, u32 len);
/* Frames one node may append per visit in the board's mode. */
unsigned int awg_budget(struct awg_board *b);
int awg_ring_init(struct awg_board *b);
void awg_ring_exit(struct awg_board *b);
int awg_submit_write(struct awg_board *b, u64 off, const void __user *buf,
		     u64 len);
int awg_submit_event(struct awg_board *b, u32 node, u32 id, u32 data);
int awg_wait_event(struct awg_board *b, struct awg_event *ev);
int awg_flush(struct awg_board *b, unsigned int timeout_ms);
int awg_ring_attach(struct awg_board *b, struct file *file,
		    const struct awg_ring_attach *a);
void awg_ring_detach(struct awg_board *b, struct file *file);
int awg_ring_visit(struct awg_board *b, struct file *file,
		   struct awg_ring_visit *v);
void awg_publish_tick(struct work_struct *work);
void awg_model_rate(struct awg_board *b, u64 start_ns, u64 len, u32 kbps);

#endif /* _DLMEM_AWGSTAR_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /dev/fmpl internals: worlds of processes, their endpoints, requests and
 * the matching slots of sender-side matching (seed 004).
 *
 * Locking: one spinlock per world (world->lock) protects every slot,
 * request table, any-source queue, communicator and collective round of
 * the world.  Point-to-point calls read a communicator's slot and members
 * under rcu_read_lock() instead; a freed communicator goes by kfree_rcu().
 * Nothing sleeps under the spinlock: pinning and copying happen with it
 * dropped, on requests the copier has detached from their slot (and holds a
 * reference to).  A request is never freed under the lock: the last put
 * under the lock moves it to world->reap, freed by fmpl_reap() after unlock.
 */
#ifndef _DLMEM_FMPL_H
#define _DLMEM_FMPL_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>

#include "uapi/linux/fmpl.h"

#define FMPL_RANKS_MAX		64
#define FMPL_COUNT_MAX		2048
#define FMPL_INLINE_MAX		256
#define FMPL_COMMS_MAX		64
#define FMPL_SPOOL_MAX		(256ULL << 20)
#define FMPL_JOIN_TIMEOUT_MS	30000
#define FMPL_FAST_AREA_MAX	(8ULL << 20)

#define FMPL_FEATURES_SUPPORTED	(FMPL_FEATURE_P2P | FMPL_FEATURE_SPOOL | \
				 FMPL_FEATURE_ANY_SOURCE | FMPL_FEATURE_COLL | \
				 FMPL_FEATURE_FAST | FMPL_FEATURE_COMM_FREE)

extern u64 fmpl_msg_max;

/* A user range pinned by its owner, in its owner's context. */
struct fmpl_pages {
	struct page **pages;
	unsigned int npages;
	unsigned int offset;	/* of the first byte within pages[0] */
	u64 size;
	bool writable;
	struct mm_struct *mm;	/* long-term: its pinned_vm holds npages */
};

enum fmpl_req_state {
	FMPL_REQ_POSTED,	/* in a slot or queue, waiting for its peer */
	FMPL_REQ_MATCHED,	/* detached by the side that copies */
	FMPL_REQ_DONE,
};

/**
 * struct fmpl_req - one send or receive.
 * @ref: slot/queue, request table, waiter and copier each hold one.
 * @world: holds a world reference.
 * @owner: the posting endpoint.
 * @peer: world rank of the other side (the source of a receive).
 * @mai: matching index; a TAG_ANY receive uses count.
 * @comm: communicator of an any-source send (matched against recv_any).
 * @is_recv: receive (else send).
 * @any_source: part of the any-source domain.
 * @state: enum fmpl_req_state, under world->lock.
 * @spooled: a send whose data now lives in the owner's spool.
 * @error: 0 or a negative errno once done.
 * @ubuf: user address in the owner's address space.
 * @size: bytes.
 * @done_size: bytes received.
 * @done_mai: index the message was sent with (receive).
 * @done_src: world rank of the sender (any-source receive).
 * @seq: header sequence number of a receive.
 * @pg: pinned pages of @ubuf (no inline data, not spooled).
 * @inline_data: small sends carried in the request (kmalloc'd).
 * @spool: the owner's spool holding a spooled send's data (referenced).
 * @spool_off: offset of that data in the spool.
 * @slot: the slot a pending send sits in (normal domain).
 * @queue: the any-source queue a pending send sits in.
 * @node: in an any-source queue.
 * @spool_node: in the owner's spool_list while spooled.
 * @reap: in world->reap once the last reference is gone.
 */
struct fmpl_req {
	refcount_t ref;
	struct fmpl_world *world;
	struct fmpl_ep *owner;
	u32 peer;
	u32 mai;
	u32 comm;
	bool is_recv;
	bool any_source;
	u8 state;
	bool spooled;
	int error;
	u64 ubuf;
	u64 size;
	u64 done_size;
	u32 done_mai;
	u32 done_src;
	u32 seq;
	struct fmpl_pages pg;
	void *inline_data;
	struct fmpl_spool *spool;
	u64 spool_off;
	struct fmpl_slot *slot;
	struct list_head *queue;
	struct list_head node;
	struct list_head spool_node;
	struct list_head reap;
};

/* The spool of FMPL_IOC_SENDBUF_SET: lives while a spooled send uses it. */
struct fmpl_spool {
	refcount_t ref;
	struct fmpl_pages pg;
	void *va;
};

/* A matching slot: in the SENDER's endpoint, [receiver][mai]. */
struct fmpl_slot {
	struct fmpl_req *recv;	/* posted by the receiver */
	struct fmpl_req *send;	/* the sender's, waiting for the receive */
	u32 seq;
};

/**
 * struct fmpl_ep - one rank of a world (one open file after INIT).
 * @world: the world.
 * @rank: world rank.
 * @dead: left the world (file released).
 * @count: matching indices per peer; slots have count + 1 (TAG_ANY).
 * @ma_pg: the pinned matching area.
 * @fa_pg: the pinned flag area.
 * @ma: the matching area, vmapped.
 * @fa: the flag area, vmapped.
 * @slots: [peer][count + 1] slots where this ep is the sender.
 * @sreq: [peer][count] this ep's sends, for FMPL_IOC_WAIT.
 * @rreq: [peer][count + 1] this ep's receives, for FMPL_IOC_WAIT.
 * @any_sends: senders' any-source sends waiting for our recv_any.
 * @any_recvs: our blocked recv_any requests.
 * @wq: this ep's waiters (its own requests completing).
 * @spool_mutex: SENDBUF_SET against spooling.
 * @spool: the spool set by SENDBUF_SET, or NULL.
 * @spool_timeout_ms: FMPL_TIMEOUT_NONE: synchronous.
 * @spool_list: spooled sends ordered by spool offset.
 * @spool_used: bytes of the spool in use.
 * @nspool: spooled sends not yet received.
 * @nsend: spooled sends delivered since the last SENDBUF_CHECK.
 */
struct fmpl_ep {
	struct fmpl_world *world;
	u32 rank;
	bool dead;
	u32 count;
	struct fmpl_pages ma_pg, fa_pg;
	struct fmpl_header *ma;
	struct fmpl_flag *fa;
	struct fmpl_slot *slots;
	struct fmpl_req **sreq;
	struct fmpl_req **rreq;
	struct list_head any_sends;
	struct list_head any_recvs;
	wait_queue_head_t wq;
	struct mutex spool_mutex;	/* SENDBUF_SET against spooling */
	struct fmpl_spool *spool;
	u32 spool_timeout_ms;
	struct list_head spool_list;
	u64 spool_used;
	u32 nspool;
	u32 nsend;
};

enum fmpl_coll_op {
	FMPL_OP_BARRIER = 1, FMPL_OP_BCAST, FMPL_OP_SPLIT, FMPL_OP_FREE
};

/**
 * struct fmpl_round - a collective in progress on a communicator.
 * @busy: the round is in use.
 * @seq: the collective's sequence number on the communicator.
 * @op: enum fmpl_coll_op.
 * @arrived: ranks that have entered it.
 * @users: ranks that have not left the round yet.
 * @complete: the collective is done (its results, if any, in place).
 * @error: 0, or the negative errno the collective fails with.
 * @root: bcast: the root's rank.
 * @size: bcast: bytes.
 * @src: bcast: the root's pinned data.
 * @keys: comm_create: [size], each rank's key, by rank in the parent.
 * @result: comm_create: [size], the new communicator ids.
 *
 * Rounds alternate (seq & 1), which is enough since a rank can be at most
 * one collective ahead of the slowest before it has to wait for it.
 */
struct fmpl_round {
	bool busy;
	u32 seq;
	u8 op;
	u32 arrived;
	u32 users;
	bool complete;
	int error;
	u32 root;
	u64 size;
	struct fmpl_req *src;
	u32 *keys;
	u32 *result;
};

/**
 * struct fmpl_comm - a communicator.
 * @ref: its slot in world->comms[] holds one, and each collective or
 *	COMM_INFO using it; the last put frees it after a grace period
 *	(point-to-point calls only read it, under rcu_read_lock()).
 * @rcu: for kfree_rcu().
 * @id: its handle: slot in world->comms[] + FMPL_COMMS_MAX * generation,
 *	so a freed handle does not name the next communicator of its slot.
 * @size: ranks.
 * @freed: FMPL_IOC_COMM_FREE took it out of its slot.
 * @members: [size], the world rank of each rank.
 * @seq: [size], collectives each rank entered on it.
 * @rank_of: the comm rank of each world rank, or -1.
 * @round: the two alternating collective rounds.
 * @data: storage of @members, @seq and the rounds' @keys and @result.
 */
struct fmpl_comm {
	refcount_t ref;
	struct rcu_head rcu;
	u32 id;
	u32 size;
	bool freed;
	u32 *members;
	u32 *seq;
	s32 rank_of[FMPL_RANKS_MAX];
	struct fmpl_round round[2];
	u32 data[];
};

/**
 * struct fmpl_world - the ranks that share a key.
 * @ref: each endpoint's file and each request hold one.
 * @node: in the global list (fmpl_worlds_lock).
 * @key: the world's key.
 * @size: its ranks.
 * @mode: the creator's permission for the others (FMPL_INIT).
 * @uid: the creator's uid.
 * @gid: the creator's gid.
 * @lock: see the top of this file.
 * @wq: joins and collectives wait here.
 * @joined: ranks joined.
 * @complete: all ranks were there once.
 * @broken: a rank left after completion: collectives fail.
 * @listed: in the global list.
 * @eps: the endpoints, by rank.
 * @comms: the communicators, by slot (id % FMPL_COMMS_MAX).
 * @comm_gen: generations of communicator ids handed out.
 * @reap: requests whose last reference went under @lock (fmpl_reap()).
 * @count: matching indices per peer, the same for every endpoint: a
 *	receiver indexes its sender's slots and matching area with it.
 * @fast_count: fast indices.
 * @fast_bytes: the size of @fast.
 * @fast: the fast area (vmalloc_user), or NULL.
 */
struct fmpl_world {
	struct kref ref;
	struct list_head node;
	u64 key;
	u32 size;
	u32 mode;
	kuid_t uid;
	kgid_t gid;
	spinlock_t lock;	/* see the top of this file */
	wait_queue_head_t wq;
	u32 joined;
	bool complete;
	bool broken;
	bool listed;
	struct fmpl_ep *eps[FMPL_RANKS_MAX];
	struct fmpl_comm __rcu *comms[FMPL_COMMS_MAX];
	u32 comm_gen;
	struct list_head reap;
	u32 count;
	u32 fast_count;
	u64 fast_bytes;
	void *fast;
};

/* fmpl_pages.c */
int fmpl_pin(struct fmpl_pages *pg, u64 uaddr, u64 size, bool writable,
	     bool longterm);
void fmpl_unpin(struct fmpl_pages *pg);
void *fmpl_vmap(struct fmpl_pages *pg);
int fmpl_copy_to_pages(struct fmpl_pages *dst, const void __user *src, u64 n);
int fmpl_copy_from_pages(void __user *dst, struct fmpl_pages *src, u64 n);
int fmpl_copy_init(void);
void fmpl_copy_exit(void);

/* fmpl_world.c */
int fmpl_join(struct fmpl_ep **epp, const struct fmpl_init *in);
void fmpl_leave(struct fmpl_ep *ep);
void fmpl_world_put(struct fmpl_world *w);
struct fmpl_comm *fmpl_comm_lookup(struct fmpl_ep *ep, u32 comm);
struct fmpl_comm *fmpl_comm_get(struct fmpl_ep *ep, u32 comm, u32 *my_rank);
void fmpl_comm_put(struct fmpl_comm *c);
void fmpl_wake_all(struct fmpl_world *w);
void fmpl_req_put_locked(struct fmpl_req *req);
void fmpl_req_put(struct fmpl_req *req);
void fmpl_reap(struct fmpl_world *w);
int fmpl_comm_info(struct fmpl_ep *ep, struct fmpl_comm_info *ci,
		   u32 __user *members);

/* fmpl_fast.c */
int fmpl_fast_mmap(struct fmpl_ep *ep, struct vm_area_struct *vma);
int fmpl_fast_wait(struct fmpl_ep *ep, const struct fmpl_fast_wait *fw);
int fmpl_fast_wake(struct fmpl_ep *ep, const struct fmpl_fast_wake *fk);

/* fmpl_p2p.c */
int fmpl_send(struct fmpl_ep *ep, struct fmpl_xfer *x);
int fmpl_recv(struct fmpl_ep *ep, struct fmpl_xfer *x);
int fmpl_wait(struct fmpl_ep *ep, struct fmpl_wait *wt);
void fmpl_complete_locked(struct fmpl_req *req, int error, u64 size,
			  u32 mai, u32 src);
bool fmpl_req_done(struct fmpl_req *req);
int fmpl_match_recv(struct fmpl_ep *ep, struct fmpl_req *rq,
		    const void __user *src, u64 size, u32 mai);

struct fmpl_req *fmpl_req_new_send(struct fmpl_ep *ep, u64 buf, u64 size,
				   u32 comm);

/* fmpl_spool.c */
int fmpl_sendbuf_set(struct fmpl_ep *ep, const struct fmpl_sendbuf *sb);
void fmpl_sendbuf_check(struct fmpl_ep *ep, struct fmpl_sendbuf_stat *st);
int fmpl_spool_send(struct fmpl_ep *ep, struct fmpl_req *req);
void fmpl_spool_release_locked(struct fmpl_req *req);
void fmpl_spool_put(struct fmpl_spool *spool);
void fmpl_spool_exit(struct fmpl_ep *ep);

/* fmpl_coll.c */
int fmpl_barrier(struct fmpl_ep *ep, const struct fmpl_coll *c);
int fmpl_bcast(struct fmpl_ep *ep, const struct fmpl_coll *c);
int fmpl_comm_create(struct fmpl_ep *ep, struct fmpl_comm_create *cc);
int fmpl_comm_free(struct fmpl_ep *ep, const struct fmpl_comm_free *cf);
struct fmpl_comm *fmpl_comm_alloc(u32 id, u32 size);

#endif /* _DLMEM_FMPL_H */

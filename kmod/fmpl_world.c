// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/fmpl: worlds.  The first process to pass a key creates the world;
 * the others join it if the creator's mode lets them, and FMPL_IOC_INIT
 * returns once every rank is there.  A rank that leaves afterwards (its file
 * is released: close or death) fails whatever its peers had pending with
 * it, and the world's collectives.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": fmpl: " fmt

#include <linux/cred.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "fmpl.h"

static LIST_HEAD(fmpl_worlds);
static DEFINE_MUTEX(fmpl_worlds_lock);	/* the list, joining and leaving */

static void fmpl_world_release(struct kref *ref)
{
	struct fmpl_world *w = container_of(ref, struct fmpl_world, ref);
	unsigned int i;

	/* No endpoint is left, so nobody reads or holds a communicator. */
	for (i = 0; i < FMPL_COMMS_MAX; i++)
		kfree(rcu_dereference_protected(w->comms[i], true));
	for (i = 0; i < w->size; i++)
		kfree(w->eps[i]);
	vfree(w->fast);
	kfree(w);
}

void fmpl_world_put(struct fmpl_world *w)
{
	kref_put(&w->ref, fmpl_world_release);
}

static void fmpl_req_free(struct fmpl_req *req)
{
	struct fmpl_world *w = req->world;

	/* Still in its owner's spool_list: a later list_del writes here. */
	WARN_ON_ONCE(!list_empty(&req->spool_node));
	fmpl_unpin(&req->pg);
	kfree(req->inline_data);
	if (req->spool)
		fmpl_spool_put(req->spool);
	kfree(req);
	fmpl_world_put(w);
}

/* Drop a reference under world->lock: the free waits for fmpl_reap(). */
void fmpl_req_put_locked(struct fmpl_req *req)
{
	lockdep_assert_held(&req->world->lock);
	if (refcount_dec_and_test(&req->ref))
		list_add_tail(&req->reap, &req->world->reap);
}

void fmpl_req_put(struct fmpl_req *req)
{
	if (refcount_dec_and_test(&req->ref))
		fmpl_req_free(req);
}

/*
 * Free the requests whose last reference went under the lock.  Whoever
 * queues one calls this afterwards, so an empty list seen without the
 * lock (the common case on every operation) has nothing of ours in it.
 */
void fmpl_reap(struct fmpl_world *w)
{
	struct fmpl_req *req, *tmp;
	LIST_HEAD(list);

	if (list_empty_careful(&w->reap))
		return;
	spin_lock(&w->lock);
	list_splice_init(&w->reap, &list);
	spin_unlock(&w->lock);
	list_for_each_entry_safe(req, tmp, &list, reap)
		fmpl_req_free(req);
}

void fmpl_wake_all(struct fmpl_world *w)
{
	unsigned int i;

	for (i = 0; i < w->size; i++)
		if (w->eps[i])
			wake_up_all(&w->eps[i]->wq);
	wake_up_all(&w->wq);
}

/*
 * Under rcu_read_lock() (or the world lock): the communicator @comm if the
 * caller belongs to it and it is not being freed.  Point-to-point calls
 * use it without a reference and without sleeping.
 */
struct fmpl_comm *fmpl_comm_lookup(struct fmpl_ep *ep, u32 comm)
{
	struct fmpl_comm *c;

	c = rcu_dereference_check(ep->world->comms[comm % FMPL_COMMS_MAX],
				  lockdep_is_held(&ep->world->lock));
	if (!c || c->id != comm || c->rank_of[ep->rank] < 0 ||
	    READ_ONCE(c->freed))
		return NULL;
	return c;
}

/*
 * The communicator @comm, with a reference (fmpl_comm_put()), if the
 * caller belongs to it; its rank there.
 */
struct fmpl_comm *fmpl_comm_get(struct fmpl_ep *ep, u32 comm, u32 *my_rank)
{
	struct fmpl_comm *c;

	rcu_read_lock();
	c = fmpl_comm_lookup(ep, comm);
	if (c && !refcount_inc_not_zero(&c->ref))
		c = NULL;
	rcu_read_unlock();
	if (c && my_rank)
		*my_rank = c->rank_of[ep->rank];
	return c;
}

/* May be called under the world lock. */
void fmpl_comm_put(struct fmpl_comm *c)
{
	if (refcount_dec_and_test(&c->ref))
		kfree_rcu(c, rcu);
}

int fmpl_comm_info(struct fmpl_ep *ep, struct fmpl_comm_info *ci,
		   u32 __user *members)
{
	struct fmpl_comm *c = fmpl_comm_get(ep, ci->comm, &ci->rank);
	int ret = 0;

	if (!c)
		return -EINVAL;
	ci->size = c->size;
	if (members && ci->members_len < c->size)
		ret = -ENOSPC;
	else if (members &&
		 copy_to_user(members, c->members, c->size * sizeof(u32)))
		ret = -EFAULT;
	fmpl_comm_put(c);
	return ret;
}

/* A communicator of @size ranks and no members yet, one reference. */
struct fmpl_comm *fmpl_comm_alloc(u32 id, u32 size)
{
	struct fmpl_comm *c;
	unsigned int i;

	/* members, seq, and each round's keys and result */
	c = kzalloc(struct_size(c, data, 6 * size), GFP_KERNEL);
	if (!c)
		return NULL;
	refcount_set(&c->ref, 1);
	c->id = id;
	c->size = size;
	c->members = c->data;
	c->seq = c->data + size;
	for (i = 0; i < ARRAY_SIZE(c->round); i++) {
		c->round[i].keys = c->data + (2 + 2 * i) * size;
		c->round[i].result = c->data + (3 + 2 * i) * size;
	}
	for (i = 0; i < FMPL_RANKS_MAX; i++)
		c->rank_of[i] = -1;
	return c;
}

static struct fmpl_world *fmpl_world_create(const struct fmpl_init *in)
{
	struct fmpl_world *w = kzalloc(sizeof(*w), GFP_KERNEL);
	struct fmpl_comm *world;
	unsigned int i;

	if (!w)
		return NULL;
	kref_init(&w->ref);
	w->key = in->key;
	w->size = in->size;
	w->mode = in->mode;
	w->uid = current_euid();
	w->gid = current_egid();
	spin_lock_init(&w->lock);
	init_waitqueue_head(&w->wq);
	INIT_LIST_HEAD(&w->reap);
	w->count = in->count;
	w->fast_count = in->fast_count;
	if (w->fast_count) {
		w->fast_bytes = fmpl_fast_bytes(w->size, w->fast_count);
		w->fast = vmalloc_user(PAGE_ALIGN(w->fast_bytes));
		if (!w->fast)
			goto free;
	}
	world = fmpl_comm_alloc(FMPL_COMM_WORLD, w->size);
	if (!world)
		goto free;
	for (i = 0; i < w->size; i++) {
		world->members[i] = i;
		world->rank_of[i] = i;
	}
	RCU_INIT_POINTER(w->comms[FMPL_COMM_WORLD], world);
	return w;
free:
	vfree(w->fast);
	kfree(w);
	return NULL;
}

/* May the current process join @w? */
static bool fmpl_may_join(const struct fmpl_world *w)
{
	if (uid_eq(current_euid(), w->uid))
		return true;
	switch (w->mode) {
	case FMPL_MODE_GROUP:
		return in_egroup_p(w->gid);
	case FMPL_MODE_ANY:
		return true;
	default:
		return false;
	}
}

static void fmpl_ep_free_areas(struct fmpl_ep *ep)
{
	if (ep->ma)
		vunmap((void *)((unsigned long)ep->ma & PAGE_MASK));
	if (ep->fa)
		vunmap((void *)((unsigned long)ep->fa & PAGE_MASK));
	ep->ma = NULL;
	ep->fa = NULL;
	fmpl_unpin(&ep->ma_pg);
	fmpl_unpin(&ep->fa_pg);
	kvfree(ep->slots);
	kvfree(ep->sreq);
	kvfree(ep->rreq);
	ep->slots = NULL;
	ep->sreq = NULL;
	ep->rreq = NULL;
}

static struct fmpl_ep *fmpl_ep_create(const struct fmpl_init *in)
{
	u64 n = (u64)in->size * (in->count + 1);
	struct fmpl_ep *ep;
	int ret;

	ep = kzalloc(sizeof(*ep), GFP_KERNEL);
	if (!ep)
		return ERR_PTR(-ENOMEM);
	ep->rank = in->rank;
	ep->count = in->count;
	INIT_LIST_HEAD(&ep->any_sends);
	INIT_LIST_HEAD(&ep->any_recvs);
	INIT_LIST_HEAD(&ep->spool_list);
	init_waitqueue_head(&ep->wq);
	mutex_init(&ep->spool_mutex);
	ep->spool_timeout_ms = FMPL_TIMEOUT_NONE;

	ret = fmpl_pin(&ep->ma_pg, in->ma, n * sizeof(struct fmpl_header),
		       true, true);
	if (ret)
		goto free_ep;
	ret = fmpl_pin(&ep->fa_pg, in->fa, n * sizeof(struct fmpl_flag),
		       true, true);
	if (ret)
		goto free_areas;
	ret = -ENOMEM;
	ep->ma = fmpl_vmap(&ep->ma_pg);
	ep->fa = fmpl_vmap(&ep->fa_pg);
	ep->slots = kvcalloc(n, sizeof(*ep->slots), GFP_KERNEL);
	ep->sreq = kvcalloc(n, sizeof(*ep->sreq), GFP_KERNEL);
	ep->rreq = kvcalloc(n, sizeof(*ep->rreq), GFP_KERNEL);
	if (!ep->ma || !ep->fa || !ep->slots || !ep->sreq || !ep->rreq)
		goto free_areas;
	memset(ep->ma, 0, n * sizeof(struct fmpl_header));
	memset(ep->fa, 0, n * sizeof(struct fmpl_flag));
	return ep;

free_areas:
	fmpl_ep_free_areas(ep);
free_ep:
	kfree(ep);
	return ERR_PTR(ret);
}

static bool fmpl_join_done(struct fmpl_world *w)
{
	bool done;

	spin_lock(&w->lock);
	done = w->complete || w->broken;
	spin_unlock(&w->lock);
	return done;
}

/*
 * Take a rank whose wait for the others ended out of the world again,
 * unless the world completed meanwhile (then it is in: false).  Joining
 * completes a world under both locks, so the check cannot race with it.
 */
static bool fmpl_unjoin(struct fmpl_world *w, struct fmpl_ep *ep)
{
	mutex_lock(&fmpl_worlds_lock);
	spin_lock(&w->lock);
	if (w->complete) {
		spin_unlock(&w->lock);
		mutex_unlock(&fmpl_worlds_lock);
		return false;
	}
	w->eps[ep->rank] = NULL;
	w->joined--;
	if (!w->joined && w->listed) {
		list_del(&w->node);
		w->listed = false;
	}
	spin_unlock(&w->lock);
	mutex_unlock(&fmpl_worlds_lock);
	fmpl_ep_free_areas(ep);
	kfree(ep);
	fmpl_world_put(w);
	return true;
}

int fmpl_join(struct fmpl_ep **epp, const struct fmpl_init *in)
{
	unsigned int timeout_ms = in->join_timeout_ms ?: FMPL_JOIN_TIMEOUT_MS;
	struct fmpl_world *w, *found = NULL;
	struct fmpl_ep *ep;
	long left;
	int ret;

	ep = fmpl_ep_create(in);
	if (IS_ERR(ep))
		return PTR_ERR(ep);

	mutex_lock(&fmpl_worlds_lock);
	list_for_each_entry(w, &fmpl_worlds, node) {
		if (w->key == in->key) {
			found = w;
			break;
		}
	}
	if (!found) {
		found = fmpl_world_create(in);
		if (!found) {
			ret = -ENOMEM;
			goto unlock;
		}
		list_add(&found->node, &fmpl_worlds);
		found->listed = true;
	} else if (!fmpl_may_join(found)) {
		pr_debug("world %#llx: uid %u may not join (mode %u)\n", in->key,
			 from_kuid(&init_user_ns, current_euid()), found->mode);
		ret = -EACCES;
		goto unlock;
	} else if (found->size != in->size || found->count != in->count ||
		   found->fast_count != in->fast_count) {
		pr_debug("world %#llx has %u ranks, %u indices and %u fast indices, not %u, %u and %u\n",
			 in->key, found->size, found->count, found->fast_count,
			 in->size, in->count, in->fast_count);
		ret = -EEXIST;
		goto unlock;
	} else if (found->eps[in->rank]) {
		/* A listed world is never complete: it leaves the list then. */
		ret = -EADDRINUSE;
		goto unlock;
	} else {
		kref_get(&found->ref);
	}
	w = found;
	ep->world = w;
	spin_lock(&w->lock);
	w->eps[ep->rank] = ep;
	if (++w->joined == w->size) {
		w->complete = true;
		/* Complete worlds are not found by key: a new job may reuse it. */
		list_del(&w->node);
		w->listed = false;
	}
	spin_unlock(&w->lock);
	mutex_unlock(&fmpl_worlds_lock);
	wake_up_all(&w->wq);

	left = wait_event_killable_timeout(w->wq, fmpl_join_done(w),
					   msecs_to_jiffies(timeout_ms));
	if (left <= 0 && fmpl_unjoin(w, ep)) {
		if (left == 0)
			pr_info("world %#llx: rank %u gave up after %u ms waiting for the other ranks (FMPL_JOIN_TIMEOUT_MS)\n",
				in->key, in->rank, timeout_ms);
		return left ? -EINTR : -ETIMEDOUT;
	}
	*epp = ep;
	return 0;

unlock:
	mutex_unlock(&fmpl_worlds_lock);
	fmpl_ep_free_areas(ep);
	kfree(ep);
	return ret;
}

/* Fail a request of a live peer because @dead left. */
static void fmpl_fail_locked(struct fmpl_req *req)
{
	if (req->state == FMPL_REQ_POSTED)
		fmpl_complete_locked(req, -ECONNRESET, 0, 0, 0);
}

static void fmpl_leave_slots(struct fmpl_world *w, struct fmpl_ep *ep)
{
	u32 per = ep->count + 1, r, m;

	for (r = 0; r < w->size; r++) {
		struct fmpl_ep *peer = w->eps[r];

		for (m = 0; m < per; m++) {
			struct fmpl_slot *mine = &ep->slots[r * per + m];

			/* Receives posted with us: their sender is gone. */
			if (mine->recv) {
				fmpl_fail_locked(mine->recv);
				fmpl_req_put_locked(mine->recv);
				mine->recv = NULL;
			}
			if (mine->send) {
				fmpl_spool_release_locked(mine->send);
				fmpl_req_put_locked(mine->send);
				mine->send = NULL;
			}
			if (ep->sreq[r * per + m]) {
				fmpl_req_put_locked(ep->sreq[r * per + m]);
				ep->sreq[r * per + m] = NULL;
			}
			if (ep->rreq[r * per + m]) {
				fmpl_req_put_locked(ep->rreq[r * per + m]);
				ep->rreq[r * per + m] = NULL;
			}
			if (!peer || peer == ep || peer->dead)
				continue;
			/* The peer's slots towards us. */
			mine = &peer->slots[ep->rank * per + m];
			if (mine->recv) {
				fmpl_req_put_locked(mine->recv);
				mine->recv = NULL;
				peer->ma[ep->rank * per + m].state = FMPL_HDR_EMPTY;
			}
			if (mine->send && !mine->send->spooled)
				fmpl_fail_locked(mine->send);
			if (mine->send) {
				fmpl_spool_release_locked(mine->send);
				fmpl_req_put_locked(mine->send);
				mine->send = NULL;
			}
		}
	}
}

static void fmpl_leave_any(struct fmpl_world *w, struct fmpl_ep *ep)
{
	struct fmpl_req *req, *tmp;
	unsigned int r;

	list_for_each_entry_safe(req, tmp, &ep->any_sends, node) {
		list_del_init(&req->node);
		fmpl_fail_locked(req);
		fmpl_req_put_locked(req);
	}
	list_for_each_entry_safe(req, tmp, &ep->any_recvs, node) {
		list_del_init(&req->node);
		fmpl_req_put_locked(req);
	}
	for (r = 0; r < w->size; r++) {
		struct fmpl_ep *peer = w->eps[r];

		if (!peer || peer == ep || peer->dead)
			continue;
		list_for_each_entry_safe(req, tmp, &peer->any_sends, node) {
			if (req->owner != ep)
				continue;
			/* Spooled (its sender returned): out of our spool. */
			list_del_init(&req->node);
			fmpl_spool_release_locked(req);
			fmpl_req_put_locked(req);
		}
	}
}

/*
 * The file of @ep is being released: leave the world.  Peers' requests
 * that needed this rank complete with ECONNRESET; so does every collective.
 */
void fmpl_leave(struct fmpl_ep *ep)
{
	struct fmpl_world *w = ep->world;

	spin_lock(&w->lock);
	ep->dead = true;
	w->broken = true;
	if (w->fast)	/* the departure word of the fast area */
		WRITE_ONCE(((u32 *)w->fast)[ep->rank], 1);
	fmpl_leave_slots(w, ep);
	fmpl_leave_any(w, ep);
	spin_unlock(&w->lock);
	fmpl_wake_all(w);
	fmpl_reap(w);
	fmpl_spool_exit(ep);
	fmpl_ep_free_areas(ep);
	fmpl_world_put(w);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/fmpl: point to point, with sender-side matching (seed 004, 2.2).
 *
 * A receive from S with index m goes into S's slot [receiver][m] (and its
 * header into S's matching area); a send from S to R with index m looks in
 * its own slot [R][m] (then [R][TAG_ANY]).  Whichever side comes second
 * detaches the other's request from the slot and does the one copy, in its
 * own context: a sender copies from its buffer into the receiver's pinned
 * pages, a receiver from the sender's pinned pages (or the request's inline
 * data, or the spool) into its buffer.  Slots are not queues: one receive
 * and one send per pair and index (EBUSY otherwise).
 *
 * The any-source domain (send_any/recv_any) matches on the receiver's side
 * instead, in FIFO queues of the receiving endpoint.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": fmpl: " fmt

#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "fmpl.h"

static struct fmpl_req *fmpl_req_alloc(struct fmpl_ep *ep, bool is_recv,
				       u32 peer, u32 mai,
				       const struct fmpl_xfer *x)
{
	struct fmpl_req *req = kzalloc(sizeof(*req), GFP_KERNEL);

	if (!req)
		return NULL;
	refcount_set(&req->ref, 1);
	kref_get(&ep->world->ref);
	req->world = ep->world;
	req->owner = ep;
	req->peer = peer;
	req->mai = mai;
	req->comm = x->comm;
	req->is_recv = is_recv;
	req->any_source = x->flags & FMPL_XFER_ANY_SOURCE;
	req->ubuf = x->buf;
	req->size = x->size;
	INIT_LIST_HEAD(&req->node);
	INIT_LIST_HEAD(&req->spool_node);
	INIT_LIST_HEAD(&req->reap);
	return req;
}

/* Make a send's data reachable by the receiver: inline copy or pinning. */
static int fmpl_req_load_send(struct fmpl_req *req)
{
	void *data;

	if (!req->size)
		return 0;
	if (req->size > FMPL_INLINE_MAX)
		return fmpl_pin(&req->pg, req->ubuf, req->size, false, false);
	data = memdup_user(u64_to_user_ptr(req->ubuf), req->size);
	if (IS_ERR(data))
		return PTR_ERR(data);
	req->inline_data = data;
	return 0;
}

/* A send request holding a copy or the pinned pages of @buf (collectives). */
struct fmpl_req *fmpl_req_new_send(struct fmpl_ep *ep, u64 buf, u64 size,
				   u32 comm)
{
	struct fmpl_xfer x = { .buf = buf, .size = size, .comm = comm };
	struct fmpl_req *req = fmpl_req_alloc(ep, false, ep->rank, 0, &x);
	int ret;

	if (!req)
		return ERR_PTR(-ENOMEM);
	ret = fmpl_req_load_send(req);
	if (ret) {
		fmpl_req_put(req);
		return ERR_PTR(ret);
	}
	return req;
}

bool fmpl_req_done(struct fmpl_req *req)
{
	/* Lockless: pairs with fmpl_complete_locked(), results read after. */
	return smp_load_acquire(&req->state) == FMPL_REQ_DONE ||
	       (!req->is_recv && READ_ONCE(req->spooled));
}

/* Complete @req (under world->lock): flag, spool space, wake its owner. */
void fmpl_complete_locked(struct fmpl_req *req, int error, u64 size,
			  u32 mai, u32 src)
{
	struct fmpl_ep *ep = req->owner;

	lockdep_assert_held(&req->world->lock);
	req->error = error;
	req->done_size = size;
	req->done_mai = mai;
	req->done_src = src;
	/* Waiters read the results once they see DONE (fmpl_req_done). */
	smp_store_release(&req->state, FMPL_REQ_DONE);
	if (!req->is_recv) {
		if (req->spooled && !error)
			ep->nsend++;
		fmpl_spool_release_locked(req);
	} else if (!req->any_source && !ep->dead) {
		struct fmpl_flag *f = &ep->fa[req->peer * (ep->count + 1) +
					      req->mai];

		f->error = -error;
		f->mai = mai;
		f->seq = req->seq;
		f->size = size;
		/* The owner polls state: the fields above first. */
		smp_store_release(&f->state,
				  error ? FMPL_FLAG_ERROR : FMPL_FLAG_DONE);
	}
	wake_up_all(&ep->wq);
}

/*
 * In the sender's context: copy @size bytes at @src into the receive @rq,
 * which the caller detached (its reference passes to us), and complete it.
 */
int fmpl_match_recv(struct fmpl_ep *ep, struct fmpl_req *rq,
		    const void __user *src, u64 size, u32 mai)
{
	struct fmpl_world *w = ep->world;
	u64 n = min(size, rq->size);
	int ret = n ? fmpl_copy_to_pages(&rq->pg, src, n) : 0;
	int err = ret ?: (size > rq->size ? -EMSGSIZE : 0);

	/* A sender killed in the copy leaves the world: so @rq learns. */
	if (ret && fatal_signal_pending(current))
		err = -ECONNRESET;
	fmpl_unpin(&rq->pg);
	spin_lock(&w->lock);
	fmpl_complete_locked(rq, err, ret ? 0 : n, mai, ep->rank);
	fmpl_req_put_locked(rq);
	spin_unlock(&w->lock);
	return ret;
}

/*
 * In the receiver's context: copy the detached send @send (its slot's
 * reference passes to us) into the current process's @dst for @rq, and
 * complete both.  The receiver's result.
 */
static int fmpl_take_send(struct fmpl_ep *ep, struct fmpl_req *send,
			  struct fmpl_req *rq, void __user *dst)
{
	struct fmpl_world *w = ep->world;
	u64 n = min(send->size, rq->size);
	int ret = 0, err;

	if (!n)
		;
	else if (send->spooled)
		ret = copy_to_user(dst, send->spool->va + send->spool_off, n) ?
		      -EFAULT : 0;
	else if (send->inline_data)
		ret = copy_to_user(dst, send->inline_data, n) ? -EFAULT : 0;
	else
		ret = fmpl_copy_from_pages(dst, &send->pg, n);
	err = ret ?: (send->size > rq->size ? -EMSGSIZE : 0);

	/* A spooled send's pages were the sender's to unpin. */
	if (!send->spooled)
		fmpl_unpin(&send->pg);
	fmpl_unpin(&rq->pg);
	spin_lock(&w->lock);
	fmpl_complete_locked(rq, err, ret ? 0 : n, send->mai,
			     send->owner->rank);
	fmpl_complete_locked(send, 0, n, send->mai, send->owner->rank);
	fmpl_req_put_locked(send);
	spin_unlock(&w->lock);
	return err;
}

/* Take a completed request out of its request table, if it is still there. */
static void fmpl_table_drop(struct fmpl_world *w, struct fmpl_req **tbl,
			    struct fmpl_req *req)
{
	spin_lock(&w->lock);
	if (*tbl == req) {
		*tbl = NULL;
		fmpl_req_put_locked(req);
	}
	spin_unlock(&w->lock);
}

/* World rank of rank @peer of communicator @comm. */
static int fmpl_peer(struct fmpl_ep *ep, u32 comm, u32 peer, u32 *wrank)
{
	struct fmpl_comm *c;
	int ret = -EINVAL;

	rcu_read_lock();
	c = fmpl_comm_lookup(ep, comm);
	if (c && peer < c->size) {
		*wrank = c->members[peer];
		ret = 0;
	}
	rcu_read_unlock();
	return ret;
}

/* Rank of world rank @wrank in @comm (@wrank if @comm is gone). */
static u32 fmpl_comm_rank(struct fmpl_ep *ep, u32 comm, u32 wrank)
{
	struct fmpl_comm *c;
	u32 rank = wrank;

	rcu_read_lock();
	c = fmpl_comm_lookup(ep, comm);
	if (c && c->rank_of[wrank] >= 0)
		rank = c->rank_of[wrank];
	rcu_read_unlock();
	return rank;
}

static bool fmpl_comm_valid(struct fmpl_ep *ep, u32 comm)
{
	bool ok;

	rcu_read_lock();
	ok = fmpl_comm_lookup(ep, comm);
	rcu_read_unlock();
	return ok;
}

/* Wait for a send of ours: completion, or the spool after the timeout. */
static int fmpl_send_wait(struct fmpl_ep *ep, struct fmpl_req *req,
			  u32 *status)
{
	struct fmpl_world *w = ep->world;
	u32 t = READ_ONCE(ep->spool_timeout_ms);
	long left;
	int ret;

	if (t != FMPL_TIMEOUT_NONE && READ_ONCE(ep->spool)) {
		left = wait_event_killable_timeout(ep->wq, fmpl_req_done(req),
						   msecs_to_jiffies(t));
		if (left < 0)
			return -EINTR;
		if (!left) {
			ret = fmpl_spool_send(ep, req);
			if (ret && ret != -ENOSPC)
				return ret;
		}
	}
	if (wait_event_killable(ep->wq, fmpl_req_done(req)))
		return -EINTR;
	spin_lock(&w->lock);
	*status = req->spooled ? FMPL_STATUS_SPOOLED : FMPL_STATUS_DONE;
	ret = req->state == FMPL_REQ_DONE ? req->error : 0;
	spin_unlock(&w->lock);
	return ret;
}

static int fmpl_send_any(struct fmpl_ep *ep, struct fmpl_xfer *x)
{
	struct fmpl_world *w = ep->world;
	struct fmpl_req *req = NULL, *rq;
	struct fmpl_ep *r;
	u32 d;
	int ret;

	if (x->flags & FMPL_XFER_NONBLOCK || x->mai >= ep->count)
		return -EINVAL;
	ret = fmpl_peer(ep, x->comm, x->peer, &d);
	if (ret)
		return ret;
	r = w->eps[d];
again:
	spin_lock(&w->lock);
	ret = -ECONNRESET;
	if (r->dead)
		goto unlock;
	list_for_each_entry(rq, &r->any_recvs, node) {
		if (rq->comm != x->comm ||
		    (rq->mai != FMPL_TAG_ANY && rq->mai != x->mai))
			continue;
		list_del_init(&rq->node);
		WRITE_ONCE(rq->state, FMPL_REQ_MATCHED);
		spin_unlock(&w->lock);
		ret = fmpl_match_recv(ep, rq, u64_to_user_ptr(x->buf),
				      x->size, x->mai);
		x->status = FMPL_STATUS_DONE;
		goto put;
	}
	if (!req) {
		spin_unlock(&w->lock);
		req = fmpl_req_alloc(ep, false, d, x->mai, x);
		if (!req)
			return -ENOMEM;
		ret = fmpl_req_load_send(req);
		if (ret)
			goto put;
		goto again;
	}
	refcount_inc(&req->ref);
	list_add_tail(&req->node, &r->any_sends);
	req->queue = &r->any_sends;
	spin_unlock(&w->lock);
	ret = fmpl_send_wait(ep, req, &x->status);
	goto put;
unlock:
	spin_unlock(&w->lock);
put:
	if (req)
		fmpl_req_put(req);
	fmpl_reap(w);
	return ret;
}

static bool fmpl_any_recv_over(struct fmpl_req *req)
{
	return fmpl_req_done(req) || READ_ONCE(req->world->broken);
}

static int fmpl_recv_any(struct fmpl_ep *ep, struct fmpl_xfer *x)
{
	struct fmpl_world *w = ep->world;
	struct fmpl_req *req, *s;
	bool pinned = false;
	int ret;

	if (x->flags & FMPL_XFER_NONBLOCK || x->peer ||
	    !fmpl_comm_valid(ep, x->comm) ||
	    (x->mai != FMPL_TAG_ANY && x->mai >= ep->count))
		return -EINVAL;
	req = fmpl_req_alloc(ep, true, 0, x->mai, x);
	if (!req)
		return -ENOMEM;
again:
	spin_lock(&w->lock);
	list_for_each_entry(s, &ep->any_sends, node) {
		if (s->comm != x->comm ||
		    (x->mai != FMPL_TAG_ANY && s->mai != x->mai))
			continue;
		list_del_init(&s->node);
		s->queue = NULL;
		WRITE_ONCE(s->state, FMPL_REQ_MATCHED);
		WRITE_ONCE(req->state, FMPL_REQ_MATCHED);
		spin_unlock(&w->lock);
		ret = fmpl_take_send(ep, s, req, u64_to_user_ptr(x->buf));
		goto out;
	}
	if (w->broken) {
		ret = -ECONNRESET;
		goto unlock;
	}
	if (!pinned && x->size) {
		spin_unlock(&w->lock);
		ret = fmpl_pin(&req->pg, x->buf, x->size, true, false);
		if (ret)
			goto put;
		pinned = true;
		goto again;
	}
	refcount_inc(&req->ref);
	list_add_tail(&req->node, &ep->any_recvs);
	spin_unlock(&w->lock);

	ret = wait_event_killable(ep->wq, fmpl_any_recv_over(req));
	spin_lock(&w->lock);
	if (req->state == FMPL_REQ_POSTED) {	/* killed, or the world broke */
		list_del_init(&req->node);
		fmpl_req_put_locked(req);
		ret = ret ? -EINTR : -ECONNRESET;
		goto unlock;
	}
	spin_unlock(&w->lock);
	if (wait_event_killable(ep->wq, fmpl_req_done(req))) {
		ret = -EINTR;
		goto put;
	}
	ret = req->error;
out:
	x->status = FMPL_STATUS_DONE;
	x->out_size = req->done_size;
	x->out_mai = req->done_mai;
	x->out_peer = fmpl_comm_rank(ep, x->comm, req->done_src);
	goto put;
unlock:
	spin_unlock(&w->lock);
put:
	fmpl_req_put(req);
	fmpl_reap(w);
	return ret;
}

/* A pending send of @s to receiver @r that a receive with index @m takes. */
static struct fmpl_req *fmpl_find_send_locked(struct fmpl_ep *s, u32 r, u32 m)
{
	u32 per = s->count + 1, i;

	if (m < s->count)
		return s->slots[r * per + m].send;
	for (i = 0; i < s->count; i++)
		if (s->slots[r * per + i].send)
			return s->slots[r * per + i].send;
	return NULL;
}

/* Post the receive @req from world rank @s into the sender's slot. */
static void fmpl_post_recv_locked(struct fmpl_ep *ep, struct fmpl_req *req,
				  u32 s, u32 m)
{
	struct fmpl_ep *sender = ep->world->eps[s];
	u32 idx = ep->rank * (ep->count + 1) + m;
	struct fmpl_slot *slot = &sender->slots[idx];
	struct fmpl_header *h = &sender->ma[idx];

	refcount_inc(&req->ref);
	slot->recv = req;
	req->seq = ++slot->seq;
	ep->fa[s * (ep->count + 1) + m].seq = req->seq;
	h->seq = req->seq;
	h->buf = req->ubuf;
	h->size = req->size;
	/* The sender polls state: the header's fields first. */
	smp_store_release(&h->state, FMPL_HDR_POSTED);
}

static int fmpl_recv_result(struct fmpl_ep *ep, struct fmpl_req *req,
			    struct fmpl_xfer *x)
{
	struct fmpl_world *w = ep->world;
	int ret;

	if (!(x->flags & FMPL_XFER_NONBLOCK) &&
	    wait_event_killable(ep->wq, fmpl_req_done(req)))
		return -EINTR;
	spin_lock(&w->lock);
	if (req->state != FMPL_REQ_DONE) {
		x->status = FMPL_STATUS_PENDING;
		ret = 0;
	} else {
		x->status = FMPL_STATUS_DONE;
		x->out_size = req->done_size;
		x->out_mai = req->done_mai;
		x->out_peer = x->peer;
		ret = req->error;
	}
	spin_unlock(&w->lock);
	return ret;
}

int fmpl_recv(struct fmpl_ep *ep, struct fmpl_xfer *x)
{
	struct fmpl_world *w = ep->world;
	u32 per = ep->count + 1, s, m, idx;
	struct fmpl_req *req, *send, *old;
	struct fmpl_flag *f;
	bool pinned = false;
	int ret;

	if (x->flags & FMPL_XFER_ANY_SOURCE)
		return fmpl_recv_any(ep, x);
	ret = fmpl_peer(ep, x->comm, x->peer, &s);
	if (ret)
		return ret;
	if (x->mai == FMPL_TAG_ANY)
		m = ep->count;
	else if (x->mai < ep->count)
		m = x->mai;
	else
		return -EINVAL;
	idx = s * per + m;
	req = fmpl_req_alloc(ep, true, s, m, x);
	if (!req)
		return -ENOMEM;
again:
	spin_lock(&w->lock);
	ret = -ECONNRESET;
	if (w->eps[s]->dead)
		goto unlock;
	old = ep->rreq[idx];
	ret = -EBUSY;
	if (old && old->state != FMPL_REQ_DONE)
		goto unlock;
	send = fmpl_find_send_locked(w->eps[s], ep->rank, m);
	if (!send && !pinned && x->size) {
		spin_unlock(&w->lock);
		ret = fmpl_pin(&req->pg, x->buf, x->size, true, false);
		if (ret)
			goto put;
		pinned = true;
		goto again;
	}

	/* The request table keeps the receive for FMPL_IOC_WAIT. */
	refcount_inc(&req->ref);
	ep->rreq[idx] = req;
	if (old)
		fmpl_req_put_locked(old);
	f = &ep->fa[idx];
	f->error = 0;
	f->size = 0;
	/* Cleared fields before the owner sees the new state. */
	smp_store_release(&f->state, FMPL_FLAG_POSTED);
	if (send) {
		send->slot->send = NULL;
		send->slot = NULL;
		WRITE_ONCE(send->state, FMPL_REQ_MATCHED);
		WRITE_ONCE(req->state, FMPL_REQ_MATCHED);
		spin_unlock(&w->lock);
		fmpl_take_send(ep, send, req, u64_to_user_ptr(x->buf));
	} else {
		fmpl_post_recv_locked(ep, req, s, m);
		spin_unlock(&w->lock);
	}
	ret = fmpl_recv_result(ep, req, x);
	if (!(x->flags & FMPL_XFER_NONBLOCK) && ret != -EINTR)
		fmpl_table_drop(w, &ep->rreq[idx], req);
	goto put;
unlock:
	spin_unlock(&w->lock);
put:
	fmpl_req_put(req);
	fmpl_reap(w);
	return ret;
}

int fmpl_send(struct fmpl_ep *ep, struct fmpl_xfer *x)
{
	struct fmpl_world *w = ep->world;
	u32 per = ep->count + 1, d, m, idx, hidx;
	struct fmpl_req *req = NULL, *rq, *old;
	struct fmpl_slot *slot, *from;
	int ret;

	if (x->flags & FMPL_XFER_ANY_SOURCE)
		return fmpl_send_any(ep, x);
	if (x->mai >= ep->count)
		return -EINVAL;
	ret = fmpl_peer(ep, x->comm, x->peer, &d);
	if (ret)
		return ret;
	m = x->mai;
	idx = d * per + m;
	slot = &ep->slots[idx];
again:
	spin_lock(&w->lock);
	ret = -ECONNRESET;
	if (w->eps[d]->dead)
		goto unlock;
	old = ep->sreq[idx];
	ret = -EBUSY;
	if (slot->send || (old && !fmpl_req_done(old)))
		goto unlock;
	from = slot;
	hidx = idx;
	if (!from->recv) {
		hidx = d * per + ep->count;
		from = &ep->slots[hidx];
	}
	rq = from->recv;
	if (rq) {
		from->recv = NULL;
		/* Our own view: the receive is taken (ordered for pollers). */
		smp_store_release(&ep->ma[hidx].state, FMPL_HDR_EMPTY);
		WRITE_ONCE(rq->state, FMPL_REQ_MATCHED);
		if (old) {
			ep->sreq[idx] = NULL;
			fmpl_req_put_locked(old);
		}
		spin_unlock(&w->lock);
		ret = fmpl_match_recv(ep, rq, u64_to_user_ptr(x->buf), x->size,
				      m);
		x->status = FMPL_STATUS_DONE;
		goto put;
	}
	if (!req) {
		spin_unlock(&w->lock);
		req = fmpl_req_alloc(ep, false, d, m, x);
		if (!req)
			return -ENOMEM;
		ret = fmpl_req_load_send(req);
		if (ret)
			goto put;
		goto again;
	}
	if (old)
		fmpl_req_put_locked(old);
	refcount_inc(&req->ref);
	ep->sreq[idx] = req;
	refcount_inc(&req->ref);
	slot->send = req;
	req->slot = slot;
	spin_unlock(&w->lock);

	if (x->flags & FMPL_XFER_NONBLOCK) {
		x->status = FMPL_STATUS_PENDING;
		ret = 0;
		goto put;
	}
	ret = fmpl_send_wait(ep, req, &x->status);
	if (ret != -EINTR)
		fmpl_table_drop(w, &ep->sreq[idx], req);
	goto put;
unlock:
	spin_unlock(&w->lock);
put:
	if (req)
		fmpl_req_put(req);
	fmpl_reap(w);
	return ret;
}

int fmpl_wait(struct fmpl_ep *ep, struct fmpl_wait *wt)
{
	struct fmpl_world *w = ep->world;
	u32 per = ep->count + 1, p, m, idx;
	bool recv = wt->flags == FMPL_WAIT_RECV;
	struct fmpl_req *req, **tbl;
	int ret;

	if (wt->flags != FMPL_WAIT_RECV && wt->flags != FMPL_WAIT_SEND)
		return -EINVAL;
	ret = fmpl_peer(ep, wt->comm, wt->peer, &p);
	if (ret)
		return ret;
	if (recv && wt->mai == FMPL_TAG_ANY)
		m = ep->count;
	else if (wt->mai < ep->count)
		m = wt->mai;
	else
		return -EINVAL;
	idx = p * per + m;
	tbl = recv ? &ep->rreq[idx] : &ep->sreq[idx];

	spin_lock(&w->lock);
	req = *tbl;
	if (req)
		refcount_inc(&req->ref);
	spin_unlock(&w->lock);
	if (!req)
		return -ENOENT;

	if (recv) {
		ret = wait_event_killable(ep->wq, fmpl_req_done(req)) ?
		      -EINTR : req->error;
		wt->status = FMPL_STATUS_DONE;
		wt->out_size = req->done_size;
		wt->out_mai = req->done_mai;
	} else {
		ret = fmpl_send_wait(ep, req, &wt->status);
	}
	if (ret != -EINTR)
		fmpl_table_drop(w, tbl, req);
	fmpl_req_put(req);
	fmpl_reap(w);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/fmpl: the kernel-native collectives, the analogue of the SR8000's
 * hardware barrier and broadcast (seed 004, 4.2-4.3): barrier, bcast and
 * the communicator split of comm_create.  Each is a round of its
 * communicator that every rank enters in the same order; a broadcast's
 * root publishes its (pinned or inline) data and every other rank copies
 * it once, in its own context, in parallel.  Rounds alternate between two
 * slots: a rank can be at most one collective ahead of the slowest.
 * A rank leaving the world fails every round (ECONNRESET).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": fmpl: " fmt

#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "fmpl.h"

static bool fmpl_round_ready(struct fmpl_world *w, struct fmpl_round *r,
			     u32 seq)
{
	bool ok;

	spin_lock(&w->lock);
	ok = w->broken || !r->busy || r->seq == seq;
	spin_unlock(&w->lock);
	return ok;
}

/*
 * Enter the caller's next collective on @c.  Returns with the world lock
 * held, whatever the result; on success *@rp is the round.
 */
static int fmpl_round_enter(struct fmpl_ep *ep, struct fmpl_comm *c, u8 op,
			    struct fmpl_round **rp)
	__acquires(&ep->world->lock)
{
	struct fmpl_world *w = ep->world;
	u32 seq = ep->coll_seq[c->id]++;
	struct fmpl_round *r = &c->round[seq & 1];
	int ret;

	ret = wait_event_killable(w->wq, fmpl_round_ready(w, r, seq)) ?
	      -EINTR : 0;
	spin_lock(&w->lock);
	if (ret)
		return ret;
	if (w->broken)
		return -ECONNRESET;
	if (!r->busy) {
		r->busy = true;
		r->seq = seq;
		r->op = op;
		r->arrived = 0;
		r->users = c->size;
		r->complete = false;
		r->error = 0;
		r->src = NULL;
		r->size = 0;
		r->root = 0;
	} else if (r->op != op) {
		/* Ranks disagree on the order of collectives: nobody can go on. */
		pr_info("world %#llx: rank %u called a different collective than its peers; the world is broken\n",
			w->key, ep->rank);
		w->broken = true;
		fmpl_wake_all(w);
		return -EPROTO;
	}
	*rp = r;
	return 0;
}

static void fmpl_round_leave_locked(struct fmpl_world *w, struct fmpl_round *r)
{
	if (--r->users == 1)
		wake_up_all(&w->wq);
	if (r->users)
		return;
	r->busy = false;
	wake_up_all(&w->wq);
}

enum { FMPL_UNTIL_COMPLETE, FMPL_UNTIL_ROOT, FMPL_UNTIL_ALONE };

static bool fmpl_round_until(struct fmpl_world *w, struct fmpl_round *r,
			     u8 what)
{
	bool ok;

	spin_lock(&w->lock);
	switch (what) {
	case FMPL_UNTIL_COMPLETE:
		ok = r->complete;
		break;
	case FMPL_UNTIL_ROOT:
		ok = r->src;
		break;
	default:
		ok = r->users == 1;
		break;
	}
	ok = ok || w->broken;
	spin_unlock(&w->lock);
	return ok;
}

/* Wait until every rank is in round @r, then leave it. */
static int fmpl_round_wait_leave(struct fmpl_world *w, struct fmpl_round *r)
{
	int ret = wait_event_killable(w->wq,
				      fmpl_round_until(w, r, FMPL_UNTIL_COMPLETE)) ?
		  -EINTR : 0;

	spin_lock(&w->lock);
	if (!ret && !r->complete)
		ret = -ECONNRESET;
	fmpl_round_leave_locked(w, r);
	spin_unlock(&w->lock);
	return ret;
}

static void fmpl_round_arrive_locked(struct fmpl_world *w,
				     struct fmpl_comm *c, struct fmpl_round *r)
{
	if (++r->arrived == c->size) {
		r->complete = true;
		wake_up_all(&w->wq);
	}
}

int fmpl_barrier(struct fmpl_ep *ep, const struct fmpl_coll *cl)
{
	struct fmpl_world *w = ep->world;
	struct fmpl_comm *c = fmpl_comm_get(ep, cl->comm, NULL);
	struct fmpl_round *r;
	int ret;

	if (!c || cl->buf || cl->size || cl->root)
		return -EINVAL;
	ret = fmpl_round_enter(ep, c, FMPL_OP_BARRIER, &r);
	if (ret) {
		spin_unlock(&w->lock);
		return ret;
	}
	fmpl_round_arrive_locked(w, c, r);
	spin_unlock(&w->lock);
	return fmpl_round_wait_leave(w, r);
}

static int fmpl_copy_src(void __user *dst, struct fmpl_req *src, u64 n)
{
	if (!n)
		return 0;
	if (src->inline_data)
		return copy_to_user(dst, src->inline_data, n) ? -EFAULT : 0;
	return fmpl_copy_from_pages(dst, &src->pg, n);
}

int fmpl_bcast(struct fmpl_ep *ep, const struct fmpl_coll *cl)
{
	struct fmpl_world *w = ep->world;
	struct fmpl_req *src = NULL;
	struct fmpl_round *r;
	struct fmpl_comm *c;
	u32 me;
	int ret;

	c = fmpl_comm_get(ep, cl->comm, &me);
	if (!c || cl->root >= c->size || cl->size > fmpl_msg_max ||
	    (!cl->buf && cl->size))
		return -EINVAL;
	if (me == cl->root) {
		src = fmpl_req_new_send(ep, cl->buf, cl->size, cl->comm);
		if (IS_ERR(src))
			return PTR_ERR(src);
	}
	ret = fmpl_round_enter(ep, c, FMPL_OP_BCAST, &r);
	if (ret) {
		spin_unlock(&w->lock);
		if (src)
			fmpl_req_put(src);
		return ret;
	}
	fmpl_round_arrive_locked(w, c, r);
	if (src) {
		/*
		 * Published while the root is in the round; the root keeps its
		 * reference and takes the data back when it leaves, even if a
		 * rank never comes (the world is broken then).
		 */
		r->src = src;
		r->size = cl->size;
		r->root = cl->root;
		wake_up_all(&w->wq);
		spin_unlock(&w->lock);
		ret = wait_event_killable(w->wq,
					  fmpl_round_until(w, r, FMPL_UNTIL_ALONE)) ?
		      -EINTR : 0;
		spin_lock(&w->lock);
		if (!ret && r->users != 1)
			ret = -ECONNRESET;
		r->src = NULL;
		fmpl_round_leave_locked(w, r);
		spin_unlock(&w->lock);
		fmpl_req_put(src);
		fmpl_reap(w);
		return ret;
	}
	spin_unlock(&w->lock);

	ret = wait_event_killable(w->wq,
				  fmpl_round_until(w, r, FMPL_UNTIL_ROOT)) ?
	      -EINTR : 0;
	spin_lock(&w->lock);
	if (!ret && !r->src)
		ret = -ECONNRESET;
	else if (!ret && (r->size != cl->size || r->root != cl->root))
		ret = -EINVAL;
	if (!ret) {
		src = r->src;
		refcount_inc(&src->ref);
	}
	spin_unlock(&w->lock);
	if (src)
		ret = fmpl_copy_src(u64_to_user_ptr(cl->buf), src, cl->size);
	spin_lock(&w->lock);
	fmpl_round_leave_locked(w, r);
	if (src)
		fmpl_req_put_locked(src);
	spin_unlock(&w->lock);
	fmpl_reap(w);
	return ret;
}

/* Install @comm in a free id of @w; the id or -ENOSPC. */
static int fmpl_comm_install(struct fmpl_world *w, struct fmpl_comm *comm)
{
	unsigned int id;

	spin_lock(&w->lock);
	for (id = 1; id < FMPL_COMMS_MAX; id++) {
		if (!w->comms[id]) {
			comm->id = id;
			/* Publish a fully built communicator (fmpl_comm_get). */
			smp_store_release(&w->comms[id], comm);
			break;
		}
	}
	spin_unlock(&w->lock);
	return id < FMPL_COMMS_MAX ? id : -ENOSPC;
}

/*
 * All ranks of @c are in round @r with their keys: make one communicator
 * per key (ranks in @c's order) and give each rank its id.
 */
static void fmpl_split(struct fmpl_world *w, struct fmpl_comm *c,
		       struct fmpl_round *r)
{
	u32 i, j, n;
	int err = 0;

	for (i = 0; i < c->size; i++)
		r->result[i] = FMPL_COMM_NULL;
	for (i = 0; i < c->size && !err; i++) {
		struct fmpl_comm *nc;
		int id;

		if (r->keys[i] == FMPL_KEY_UNDEFINED ||
		    r->result[i] != FMPL_COMM_NULL)
			continue;
		for (n = 0, j = i; j < c->size; j++)
			n += r->keys[j] == r->keys[i];
		nc = fmpl_comm_alloc(0, n);
		if (!nc) {
			err = -ENOMEM;
			break;
		}
		for (n = 0, j = i; j < c->size; j++) {
			if (r->keys[j] != r->keys[i])
				continue;
			nc->members[n] = c->members[j];
			nc->rank_of[c->members[j]] = n++;
		}
		id = fmpl_comm_install(w, nc);
		if (id < 0) {
			fmpl_comm_free(nc);
			err = id;
			break;
		}
		for (j = i; j < c->size; j++)
			if (r->keys[j] == r->keys[i])
				r->result[j] = id;
	}
	spin_lock(&w->lock);
	r->error = err;
	r->complete = true;
	spin_unlock(&w->lock);
	wake_up_all(&w->wq);
}

int fmpl_comm_create(struct fmpl_ep *ep, struct fmpl_comm_create *cc)
{
	struct fmpl_world *w = ep->world;
	struct fmpl_comm *c, *nc;
	struct fmpl_round *r;
	bool last;
	u32 me;
	int ret;

	c = fmpl_comm_get(ep, cc->parent, &me);
	if (!c)
		return -EINVAL;
	ret = fmpl_round_enter(ep, c, FMPL_OP_SPLIT, &r);
	if (ret) {
		spin_unlock(&w->lock);
		return ret;
	}
	r->keys[me] = cc->key;
	last = ++r->arrived == c->size;
	spin_unlock(&w->lock);
	if (last)
		fmpl_split(w, c, r);

	ret = wait_event_killable(w->wq,
				  fmpl_round_until(w, r, FMPL_UNTIL_COMPLETE)) ?
	      -EINTR : 0;
	spin_lock(&w->lock);
	if (!ret && !r->complete)
		ret = -ECONNRESET;
	if (!ret)
		ret = r->error;
	cc->comm = FMPL_COMM_NULL;
	cc->rank = 0;
	cc->size = 0;
	if (!ret && r->result[me] != FMPL_COMM_NULL) {
		nc = w->comms[r->result[me]];
		cc->comm = nc->id;
		cc->rank = nc->rank_of[ep->rank];
		cc->size = nc->size;
	}
	fmpl_round_leave_locked(w, r);
	spin_unlock(&w->lock);
	return ret;
}

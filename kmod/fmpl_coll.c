// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/fmpl: the kernel-native collectives, the analogue of the SR8000's
 * hardware barrier and broadcast (seed 004, 4.2-4.3): barrier, bcast and
 * the communicator split of comm_create.  Each is a round of its
 * communicator that every rank enters in the same order; a broadcast's
 * root publishes its (pinned or inline) data and every other rank copies
 * it once, in its own context, in parallel.  Rounds alternate between two
 * slots: a rank can be at most one collective ahead of the slowest.
 * A rank leaving the world fails every round (ECONNRESET); a round on a
 * communicator freed meanwhile (an erroneous program) fails with EINVAL.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": fmpl: " fmt

#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "fmpl.h"

static bool fmpl_round_ready(struct fmpl_world *w, struct fmpl_comm *c,
			     struct fmpl_round *r, u32 seq)
{
	bool ok;

	spin_lock(&w->lock);
	ok = w->broken || c->freed || !r->busy || r->seq == seq;
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
	struct fmpl_round *r;
	u32 seq;
	int ret;

	/* Two threads of a rank must not take one number (nor lose one). */
	spin_lock(&w->lock);
	seq = c->seq[c->rank_of[ep->rank]]++;
	spin_unlock(&w->lock);
	r = &c->round[seq & 1];

	ret = wait_event_killable(w->wq, fmpl_round_ready(w, c, r, seq)) ?
	      -EINTR : 0;
	spin_lock(&w->lock);
	if (ret)
		return ret;
	if (w->broken)
		return -ECONNRESET;
	if (c->freed)
		return -EINVAL;
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

static bool fmpl_round_until(struct fmpl_world *w, struct fmpl_comm *c,
			     struct fmpl_round *r, u8 what)
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
	ok = ok || w->broken || c->freed;
	spin_unlock(&w->lock);
	return ok;
}

/* Why a round cannot go on: the world broke, or its communicator was freed. */
static int fmpl_round_error(struct fmpl_world *w)
{
	return w->broken ? -ECONNRESET : -EINVAL;
}

/* Wait until every rank is in round @r, then leave it. */
static int fmpl_round_wait_leave(struct fmpl_world *w, struct fmpl_comm *c,
				 struct fmpl_round *r)
{
	int ret = wait_event_killable(w->wq,
				      fmpl_round_until(w, c, r,
						       FMPL_UNTIL_COMPLETE)) ?
		  -EINTR : 0;

	spin_lock(&w->lock);
	if (!ret && !r->complete)
		ret = fmpl_round_error(w);
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

	if (!c)
		return -EINVAL;
	if (cl->buf || cl->size || cl->root) {
		ret = -EINVAL;
		goto put;
	}
	ret = fmpl_round_enter(ep, c, FMPL_OP_BARRIER, &r);
	if (ret) {
		spin_unlock(&w->lock);
		goto put;
	}
	fmpl_round_arrive_locked(w, c, r);
	spin_unlock(&w->lock);
	ret = fmpl_round_wait_leave(w, c, r);
put:
	fmpl_comm_put(c);
	return ret;
}

static int fmpl_copy_src(void __user *dst, struct fmpl_req *src, u64 n)
{
	if (!n)
		return 0;
	if (src->inline_data)
		return copy_to_user(dst, src->inline_data, n) ? -EFAULT : 0;
	return fmpl_copy_from_pages(dst, &src->pg, n);
}

/* The root of a bcast, its data published: wait for the others to copy. */
static int fmpl_bcast_root(struct fmpl_world *w, struct fmpl_comm *c,
			   struct fmpl_round *r)
{
	int ret;

	ret = wait_event_killable(w->wq,
				  fmpl_round_until(w, c, r, FMPL_UNTIL_ALONE)) ?
	      -EINTR : 0;
	spin_lock(&w->lock);
	if (!ret && r->users != 1)
		ret = fmpl_round_error(w);
	r->src = NULL;
	fmpl_round_leave_locked(w, r);
	spin_unlock(&w->lock);
	return ret;
}

/* A rank other than the root: copy the root's data once it is there. */
static int fmpl_bcast_copy(struct fmpl_world *w, struct fmpl_comm *c,
			   struct fmpl_round *r, const struct fmpl_coll *cl)
{
	struct fmpl_req *src = NULL;
	int ret;

	ret = wait_event_killable(w->wq,
				  fmpl_round_until(w, c, r, FMPL_UNTIL_ROOT)) ?
	      -EINTR : 0;
	spin_lock(&w->lock);
	if (!ret && !r->src)
		ret = fmpl_round_error(w);
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
	return ret;
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
	if (!c)
		return -EINVAL;
	ret = -EINVAL;
	if (cl->root >= c->size || cl->size > fmpl_msg_max ||
	    (!cl->buf && cl->size))
		goto put_comm;
	if (me == cl->root) {
		src = fmpl_req_new_send(ep, cl->buf, cl->size, cl->comm);
		ret = PTR_ERR_OR_ZERO(src);
		if (ret)
			goto put_comm;
	}
	ret = fmpl_round_enter(ep, c, FMPL_OP_BCAST, &r);
	if (ret) {
		spin_unlock(&w->lock);
		goto put_src;
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
	}
	spin_unlock(&w->lock);
	if (src)
		ret = fmpl_bcast_root(w, c, r);
	else
		ret = fmpl_bcast_copy(w, c, r, cl);
put_src:
	if (src)
		fmpl_req_put(src);
	fmpl_reap(w);
put_comm:
	fmpl_comm_put(c);
	return ret;
}

/*
 * Install @comm in a free slot of @w, under a new id (the slot plus a
 * generation: ids stay below 2^31 and never equal FMPL_COMM_NULL); the id
 * or -ENOSPC.
 */
static int fmpl_comm_install(struct fmpl_world *w, struct fmpl_comm *comm)
{
	unsigned int slot;

	spin_lock(&w->lock);
	for (slot = 1; slot < FMPL_COMMS_MAX; slot++) {
		if (!rcu_access_pointer(w->comms[slot])) {
			w->comm_gen = (w->comm_gen + 1) % (1U << 24);
			comm->id = slot + FMPL_COMMS_MAX * w->comm_gen;
			/* Publish a fully built communicator (fmpl_comm_lookup). */
			rcu_assign_pointer(w->comms[slot], comm);
			break;
		}
	}
	spin_unlock(&w->lock);
	return slot < FMPL_COMMS_MAX ? comm->id : -ENOSPC;
}

/*
 * A split failed part way: every rank gets the error and no id, so take
 * back the communicators it installed, or their slots stay taken until
 * the world ends.  Nobody has looked them up.  Under the world lock.
 */
static void fmpl_split_undo_locked(struct fmpl_world *w, struct fmpl_comm *c,
				   struct fmpl_round *r)
{
	struct fmpl_comm *nc;
	u32 i, slot;

	for (i = 0; i < c->size; i++) {
		if (r->result[i] == FMPL_COMM_NULL)
			continue;
		slot = r->result[i] % FMPL_COMMS_MAX;
		nc = rcu_dereference_protected(w->comms[slot],
					       lockdep_is_held(&w->lock));
		if (nc && nc->id == r->result[i]) {	/* not yet taken back */
			RCU_INIT_POINTER(w->comms[slot], NULL);
			fmpl_comm_put(nc);
		}
		r->result[i] = FMPL_COMM_NULL;
	}
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
			kfree(nc);
			err = id;
			break;
		}
		for (j = i; j < c->size; j++)
			if (r->keys[j] == r->keys[i])
				r->result[j] = id;
	}
	spin_lock(&w->lock);
	if (err)
		fmpl_split_undo_locked(w, c, r);
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
		goto put;
	}
	r->keys[me] = cc->key;
	last = ++r->arrived == c->size;
	spin_unlock(&w->lock);
	if (last)
		fmpl_split(w, c, r);

	ret = wait_event_killable(w->wq,
				  fmpl_round_until(w, c, r,
						   FMPL_UNTIL_COMPLETE)) ?
	      -EINTR : 0;
	spin_lock(&w->lock);
	if (!ret && !r->complete)
		ret = fmpl_round_error(w);
	if (!ret)
		ret = r->error;
	cc->comm = FMPL_COMM_NULL;
	cc->rank = 0;
	cc->size = 0;
	/* Not yet freed by the others: they wait for this rank to free it. */
	nc = ret || r->result[me] == FMPL_COMM_NULL ? NULL :
	     fmpl_comm_lookup(ep, r->result[me]);
	if (nc) {
		cc->comm = nc->id;
		cc->rank = nc->rank_of[ep->rank];
		cc->size = nc->size;
	}
	fmpl_round_leave_locked(w, r);
	spin_unlock(&w->lock);
put:
	fmpl_comm_put(c);
	return ret;
}

/*
 * Is one of @ep's non-blocking sends or receives on @c still in progress
 * (as FMPL_IOC_SEND and _RECV see it: not done)?  Under the world lock.
 */
static bool fmpl_comm_busy_locked(struct fmpl_ep *ep, struct fmpl_comm *c)
{
	u32 per = ep->count + 1, i, m, p;

	for (i = 0; i < c->size; i++) {
		p = c->members[i];
		for (m = 0; m < per; m++) {
			struct fmpl_req *s = ep->sreq[p * per + m];
			struct fmpl_req *rq = ep->rreq[p * per + m];

			if ((s && s->comm == c->id && !fmpl_req_done(s)) ||
			    (rq && rq->comm == c->id && !fmpl_req_done(rq)))
				return true;
		}
	}
	return false;
}

int fmpl_comm_free(struct fmpl_ep *ep, const struct fmpl_comm_free *cf)
{
	struct fmpl_world *w = ep->world;
	struct fmpl_round *r;
	struct fmpl_comm *c;
	bool busy;
	int ret;

	if (cf->comm == FMPL_COMM_WORLD)
		return -EINVAL;
	c = fmpl_comm_get(ep, cf->comm, NULL);
	if (!c)
		return -EINVAL;
	spin_lock(&w->lock);
	busy = fmpl_comm_busy_locked(ep, c);
	spin_unlock(&w->lock);
	if (busy) {
		ret = -EBUSY;
		goto put;
	}
	ret = fmpl_round_enter(ep, c, FMPL_OP_FREE, &r);
	if (ret) {
		spin_unlock(&w->lock);
		goto put;
	}
	fmpl_round_arrive_locked(w, c, r);
	if (r->complete) {
		/*
		 * The last rank in: new lookups fail, the slot is free.  The
		 * waiters woken above test freed under the lock we hold.
		 */
		RCU_INIT_POINTER(w->comms[c->id % FMPL_COMMS_MAX], NULL);
		WRITE_ONCE(c->freed, true);
		fmpl_comm_put(c);	/* the slot's reference; we hold ours */
	}
	spin_unlock(&w->lock);
	ret = fmpl_round_wait_leave(w, c, r);
put:
	fmpl_comm_put(c);
	return ret;
}

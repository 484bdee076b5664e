// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/fmpl: the send buffer of buffered mode (seed 004, 2.3).  A send
 * whose receive has not come within the timeout is copied into the
 * sender's spool and completes; the receive then copies it from there.
 * The spool is the caller's own memory (FMPL_IOC_SENDBUF_SET), pinned for
 * as long as it is set or a spooled message lives in it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": fmpl: " fmt

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "fmpl.h"

#define FMPL_SPOOL_ALIGN	64

static u64 fmpl_spool_len(const struct fmpl_req *req)
{
	return ALIGN(max_t(u64, req->size, 1), FMPL_SPOOL_ALIGN);
}

void fmpl_spool_put(struct fmpl_spool *spool)
{
	if (!spool || !refcount_dec_and_test(&spool->ref))
		return;
	if (spool->va)
		vunmap((void *)((unsigned long)spool->va & PAGE_MASK));
	fmpl_unpin(&spool->pg);
	kfree(spool);
}

int fmpl_sendbuf_set(struct fmpl_ep *ep, const struct fmpl_sendbuf *sb)
{
	struct fmpl_world *w = ep->world;
	struct fmpl_spool *spool = NULL, *old;
	int ret;

	if (!PAGE_ALIGNED(sb->buf) || !PAGE_ALIGNED(sb->size) ||
	    !sb->buf != !sb->size || sb->size > FMPL_SPOOL_MAX)
		return -EINVAL;
	if (sb->size) {
		spool = kzalloc(sizeof(*spool), GFP_KERNEL);
		if (!spool)
			return -ENOMEM;
		refcount_set(&spool->ref, 1);
		ret = fmpl_pin(&spool->pg, sb->buf, sb->size, true, true);
		if (ret)
			goto put;
		ret = -ENOMEM;
		spool->va = fmpl_vmap(&spool->pg);
		if (!spool->va)
			goto put;
	}

	mutex_lock(&ep->spool_mutex);
	spin_lock(&w->lock);
	if (ep->nspool) {
		spin_unlock(&w->lock);
		mutex_unlock(&ep->spool_mutex);
		ret = -EBUSY;
		goto put;
	}
	old = ep->spool;
	ep->spool = spool;
	ep->spool_used = 0;
	ep->spool_timeout_ms = sb->timeout_ms;
	spin_unlock(&w->lock);
	mutex_unlock(&ep->spool_mutex);
	fmpl_spool_put(old);
	return 0;
put:
	fmpl_spool_put(spool);
	return ret;
}

void fmpl_sendbuf_check(struct fmpl_ep *ep, struct fmpl_sendbuf_stat *st)
{
	struct fmpl_world *w = ep->world;

	spin_lock(&w->lock);
	st->nsend = ep->nsend;
	ep->nsend = 0;
	st->nspool = ep->nspool;
	st->spool_used = ep->spool_used;
	spin_unlock(&w->lock);
}

/* First fit in the spool, whose ranges spool_list keeps in offset order. */
static int fmpl_spool_alloc_locked(struct fmpl_ep *ep, struct fmpl_req *req)
{
	struct list_head *before = &ep->spool_list;
	u64 len = fmpl_spool_len(req), pos = 0;
	struct fmpl_req *r;

	list_for_each_entry(r, &ep->spool_list, spool_node) {
		if (r->spool_off - pos >= len) {
			before = &r->spool_node;
			goto found;
		}
		pos = r->spool_off + fmpl_spool_len(r);
	}
	if (ep->spool->pg.size < pos || ep->spool->pg.size - pos < len)
		return -ENOSPC;
found:
	req->spool_off = pos;
	list_add_tail(&req->spool_node, before);
	ep->spool_used += len;
	return 0;
}

/* The spool space of @req is free again (delivered, failed or dropped). */
void fmpl_spool_release_locked(struct fmpl_req *req)
{
	struct fmpl_ep *ep = req->owner;

	if (list_empty(&req->spool_node))
		return;
	list_del_init(&req->spool_node);
	ep->spool_used -= fmpl_spool_len(req);
	if (req->spooled)
		ep->nspool--;
}

/*
 * The send @req of @ep timed out: copy it into the spool and let it
 * complete for the sender.  The copy is made while the request stays in
 * its slot; only if no receive took it meanwhile does it switch to the
 * spool (under the lock), so a receiver reads either the sender's pages or
 * the spool, never a half-written one.  -ENOSPC: no room, stay synchronous.
 */
int fmpl_spool_send(struct fmpl_ep *ep, struct fmpl_req *req)
{
	struct fmpl_world *w = ep->world;
	struct fmpl_spool *spool;
	bool switched = false;
	int ret = 0;

	mutex_lock(&ep->spool_mutex);
	spin_lock(&w->lock);
	spool = ep->spool;
	if (req->state != FMPL_REQ_POSTED || req->spooled || !spool)
		goto unlock;
	ret = fmpl_spool_alloc_locked(ep, req);
	if (ret)
		goto unlock;
	spin_unlock(&w->lock);

	if (!req->size)
		ret = 0;
	else if (req->inline_data)
		memcpy(spool->va + req->spool_off, req->inline_data, req->size);
	else if (copy_from_user(spool->va + req->spool_off,
				u64_to_user_ptr(req->ubuf), req->size))
		ret = -EFAULT;

	spin_lock(&w->lock);
	if (!ret && req->state == FMPL_REQ_POSTED) {
		refcount_inc(&spool->ref);
		req->spool = spool;
		WRITE_ONCE(req->spooled, true);
		ep->nspool++;
		switched = true;
	} else {
		fmpl_spool_release_locked(req);
	}
unlock:
	spin_unlock(&w->lock);
	mutex_unlock(&ep->spool_mutex);
	if (switched) {
		fmpl_unpin(&req->pg);
		wake_up_all(&ep->wq);
	}
	return ret;
}

void fmpl_spool_exit(struct fmpl_ep *ep)
{
	fmpl_spool_put(ep->spool);
	ep->spool = NULL;
}

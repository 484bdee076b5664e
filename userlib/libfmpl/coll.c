// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coll.c - communicators and collectives.
 *
 * barrier and bcast have two paths: the kernel's (FMPL_IOC_BARRIER,
 * FMPL_IOC_BCAST: every rank enters the kernel once) and a binary tree over
 * point to point (as in the FMPL paper).  reduce and allreduce are binary
 * trees over point to point only; allreduce is a reduce to rank 0 and a
 * tree broadcast from it.  The tree is rooted at the root (rank r has
 * relative rank (r - root) mod size; relative rank v has children 2v+1 and
 * 2v+2), so any size and any root work.  Tree messages use the reserved
 * matching indices count..count+3, never the program's.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include "internal.h"

static int rel_rank(const struct fmpllib_comm *c, int root)
{
	return (c->rank - root + c->size) % c->size;
}

static int abs_rank(const struct fmpllib_comm *c, int v, int root)
{
	return (v + root) % c->size;
}

/*
 * Native or tree, for a barrier (@is_bcast 0) or a bcast of @size bytes
 * on @c?  FMPL_SUCCESS with *native set, or FMPL_ERR_NODEV.
 */
static int choose(const struct fmpllib_comm *c, int is_bcast, size_t size,
		  int *native)
{
	int have = !!(fmpllib_g.features & FMPL_FEATURE_COLL);

	switch (fmpllib_g.coll) {
	case FMPL_COLL_NATIVE:
		if (!have) {
			errno = EOPNOTSUPP;
			return FMPL_ERR_NODEV;
		}
		*native = 1;
		break;
	case FMPL_COLL_TREE:
		*native = 0;
		break;
	default:
		*native = have && (c->size > FMPLLIB_AUTO_TREE_RANKS ||
				   (is_bcast &&
				    size >= FMPLLIB_AUTO_BCAST_TREE_MAX));
	}
	return FMPL_SUCCESS;
}

static int coll_ioctl(unsigned long cmd, struct fmpl_coll *k, int *ier)
{
	if (ioctl(fmpllib_g.fd, cmd, k))
		return fmpllib_fail(ier, errno);
	return fmpllib_ret(ier, FMPL_SUCCESS, 0);
}

/* Receive exactly @size bytes (a shorter message is an argument error). */
static int recv_exact(struct fmpllib_comm *c, int peer, uint32_t mai,
		      void *buf, size_t size)
{
	fmpl_status st;
	int ret = fmpllib_recv(c, peer, mai, buf, size, &st, NULL);

	if (!ret && st.size != size) {
		errno = EINVAL;
		return FMPL_ERR_ARG;
	}
	return ret;
}

static int barrier_tree(struct fmpllib_comm *c)
{
	uint32_t mai = FMPLLIB_MAI_BARRIER(fmpllib_g.count);
	int v = c->rank, ch, ret;

	for (ch = 2 * v + 1; ch <= 2 * v + 2 && ch < c->size; ch++) {
		ret = recv_exact(c, ch, mai, NULL, 0);
		if (ret)
			return ret;
	}
	if (v) {
		ret = fmpllib_send(c, (v - 1) / 2, mai, NULL, 0, NULL);
		if (!ret)
			ret = recv_exact(c, (v - 1) / 2, mai, NULL, 0);
		if (ret)
			return ret;
	}
	for (ch = 2 * v + 1; ch <= 2 * v + 2 && ch < c->size; ch++) {
		ret = fmpllib_send(c, ch, mai, NULL, 0, NULL);
		if (ret)
			return ret;
	}
	return FMPL_SUCCESS;
}

static int bcast_tree(struct fmpllib_comm *c, void *buf, size_t size, int root)
{
	uint32_t mai = FMPLLIB_MAI_BCAST(fmpllib_g.count);
	int v = rel_rank(c, root), ch, ret;

	if (v) {
		ret = recv_exact(c, abs_rank(c, (v - 1) / 2, root), mai, buf,
				 size);
		if (ret)
			return ret;
	}
	for (ch = 2 * v + 1; ch <= 2 * v + 2 && ch < c->size; ch++) {
		ret = fmpllib_send(c, abs_rank(c, ch, root), mai, buf, size,
				   NULL);
		if (ret)
			return ret;
	}
	return FMPL_SUCCESS;
}

static int reduce_tree(struct fmpllib_comm *c, void *buf, size_t count,
		       const fmpl_op *op, int root, void *work)
{
	uint32_t mai = FMPLLIB_MAI_REDUCE(fmpllib_g.count);
	size_t bytes = count * op->elem_size;
	int v = rel_rank(c, root), ch, ret;

	for (ch = 2 * v + 1; ch <= 2 * v + 2 && ch < c->size; ch++) {
		ret = recv_exact(c, abs_rank(c, ch, root), mai, work, bytes);
		if (ret)
			return ret;
		op->fn(buf, work, count);
	}
	if (v)
		return fmpllib_send(c, abs_rank(c, (v - 1) / 2, root), mai,
				    buf, bytes, NULL);
	return FMPL_SUCCESS;
}

FMPLLIB_PUBLIC int fmpl_barrier(int comm, int *ier)
{
	struct fmpllib_comm *c;
	int ret = fmpllib_comm(comm, &c), native = 0;

	if (!ret)
		ret = choose(c, 0, 0, &native);
	if (ret)
		return fmpllib_ret(ier, ret, 0);
	if (native) {
		struct fmpl_coll k = { .comm = c->id };

		return coll_ioctl(FMPL_IOC_BARRIER, &k, ier);
	}
	return fmpllib_ret(ier, barrier_tree(c), 0);
}

/* fmpl_finalize's barrier: the kernel's when there is one (it fails at
 * once in a broken world), whatever the program chose. */
int fmpllib_barrier_quiet(void)
{
	struct fmpllib_comm *c;
	struct fmpl_coll k = { .comm = FMPL_COMM_WORLD };

	if (fmpllib_comm(FMPL_COMM_WORLD, &c))
		return -1;
	if (fmpllib_g.features & FMPL_FEATURE_COLL)
		return ioctl(fmpllib_g.fd, FMPL_IOC_BARRIER, &k);
	return barrier_tree(c);
}

FMPLLIB_PUBLIC int fmpl_bcast(void *buf, size_t size, int root, int comm,
			      int *ier)
{
	struct fmpllib_comm *c;
	int ret = fmpllib_comm(comm, &c), native = 0;

	if (!ret && (root < 0 || root >= c->size || (!buf && size))) {
		errno = EINVAL;
		ret = FMPL_ERR_ARG;
	}
	if (!ret)
		ret = choose(c, 1, size, &native);
	if (ret)
		return fmpllib_ret(ier, ret, 0);
	if (native) {
		struct fmpl_coll k = {
			.buf = (uintptr_t)buf, .size = size,
			.root = (uint32_t)root, .comm = c->id,
		};

		return coll_ioctl(FMPL_IOC_BCAST, &k, ier);
	}
	return fmpllib_ret(ier, bcast_tree(c, buf, size, root), 0);
}

/* Common checks of reduce and allreduce; *workp: @work or a malloc'd one. */
static int reduce_args(int comm, void *buf, size_t count, const fmpl_op *op,
		       int root, void *work, struct fmpllib_comm **cp,
		       void **workp)
{
	int ret = fmpllib_comm(comm, cp);
	size_t bytes;

	if (ret)
		return ret;
	errno = EINVAL;
	if (!op || !op->fn || !op->elem_size || root < 0 || root >= (*cp)->size)
		return FMPL_ERR_ARG;
	if (count > (size_t)-1 / op->elem_size)
		return FMPL_ERR_ARG;
	bytes = count * op->elem_size;
	if (bytes && !buf)
		return FMPL_ERR_ARG;
	*workp = work;
	if (!work && bytes && (*cp)->size > 1) {
		*workp = malloc(bytes);
		if (!*workp) {
			errno = ENOMEM;
			return FMPL_ERR_NOMEM;
		}
	}
	return FMPL_SUCCESS;
}

FMPLLIB_PUBLIC int fmpl_reduce(void *buf, size_t count, const fmpl_op *func,
			       int root, int comm, void *work, int *ier)
{
	struct fmpllib_comm *c;
	void *w = NULL;
	int ret = reduce_args(comm, buf, count, func, root, work, &c, &w);

	if (!ret && count)
		ret = reduce_tree(c, buf, count, func, root, w);
	if (w != work)
		free(w);
	return fmpllib_ret(ier, ret, 0);
}

FMPLLIB_PUBLIC int fmpl_allreduce(void *buf, size_t count, const fmpl_op *func,
				  int comm, void *work, int *ier)
{
	struct fmpllib_comm *c;
	void *w = NULL;
	int ret = reduce_args(comm, buf, count, func, 0, work, &c, &w);

	if (!ret && count) {
		ret = reduce_tree(c, buf, count, func, 0, w);
		if (!ret)
			ret = bcast_tree(c, buf, count * func->elem_size, 0);
	}
	if (w != work)
		free(w);
	return fmpllib_ret(ier, ret, 0);
}

FMPLLIB_PUBLIC int fmpl_comm_create(int *comm, int key, int *ier)
{
	struct fmpl_comm_create cc = {
		.parent = FMPL_COMM_WORLD,
		.key = key < 0 ? FMPL_KEY_UNDEFINED : (uint32_t)key,
	};
	struct fmpllib_comm *c;
	int ret = fmpllib_comm(FMPL_COMM_WORLD, &c), err;

	if (!ret && !comm) {
		errno = EINVAL;
		ret = FMPL_ERR_ARG;
	}
	if (!ret && !(fmpllib_g.features & FMPL_FEATURE_COLL)) {
		errno = EOPNOTSUPP;
		ret = FMPL_ERR_NODEV;
	}
	if (ret)
		return fmpllib_ret(ier, ret, 0);
	if (ioctl(fmpllib_g.fd, FMPL_IOC_COMM_CREATE, &cc))
		return fmpllib_fail(ier, errno);
	if (cc.comm == FMPL_COMM_NULL) {
		*comm = (int)FMPL_COMM_NULL;
		return fmpllib_ret(ier, FMPL_SUCCESS, 0);
	}
	if (!fmpllib_comm_load(cc.comm, &err))
		return fmpllib_fail(ier, err);
	*comm = (int)cc.comm;
	return fmpllib_ret(ier, FMPL_SUCCESS, 0);
}

FMPLLIB_PUBLIC int fmpl_comm_free(int *comm, int *ier)
{
	struct fmpl_comm_free cf = { 0 };
	struct fmpllib_comm *c;
	int ret;

	if (!comm) {
		errno = EINVAL;
		return fmpllib_ret(ier, FMPL_ERR_ARG, 0);
	}
	ret = fmpllib_comm(*comm, &c);
	if (!ret && *comm == FMPL_COMM_WORLD) {
		errno = EINVAL;
		ret = FMPL_ERR_ARG;
	}
	if (!ret && !(fmpllib_g.features & FMPL_FEATURE_COMM_FREE)) {
		errno = EOPNOTSUPP;
		ret = FMPL_ERR_NODEV;
	}
	/* The kernel checks its requests; fast receives are libfmpl's. */
	if (!ret && fmpllib_fast_pending(c)) {
		errno = EBUSY;
		ret = FMPL_ERR_BUSY;
	}
	if (ret)
		return fmpllib_ret(ier, ret, 0);
	cf.comm = c->id;
	if (ioctl(fmpllib_g.fd, FMPL_IOC_COMM_FREE, &cf))
		return fmpllib_fail(ier, errno);
	fmpllib_comm_drop(cf.comm);
	*comm = (int)FMPL_COMM_NULL;
	return fmpllib_ret(ier, FMPL_SUCCESS, 0);
}

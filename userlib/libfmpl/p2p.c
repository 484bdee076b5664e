// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * p2p.c - point to point: send/recv (blocking), isend/irecv and their
 * waits, the any-source domain, and the spool (buffered mode).
 *
 * Latency path: a receive is always posted non-blocking (FMPL_IOC_RECV
 * with FMPL_XFER_NONBLOCK); if the message was not there yet, libfmpl
 * reads the receive's completion flag in the flag area for up to
 * FMPL_SPIN_US microseconds (no system call), then sleeps in the kernel
 * (FMPL_IOC_WAIT).  A blocking send first watches the receiver's header in
 * its own matching area for the same time, so that it usually enters the
 * kernel when the receive is already posted and the copy can start at once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "internal.h"

#define cpu_relax fmpllib_cpu_relax

uint64_t fmpllib_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* The ioctl, retried when a signal interrupted a wait that can be redone. */
static int wait_ioctl(struct fmpl_wait *wt)
{
	int ret;

	do
		ret = ioctl(fmpllib_g.fd, FMPL_IOC_WAIT, wt);
	while (ret && errno == EINTR);
	return ret ? errno : 0;
}

static int need_feature(uint64_t feature)
{
	if (fmpllib_g.features & feature)
		return FMPL_SUCCESS;
	errno = EOPNOTSUPP;
	return FMPL_ERR_NODEV;
}

/*
 * Check a point-to-point call's communicator, peer, index and buffer;
 * *cp gets the communicator.  @any: FMPL_TAG_ANY allowed (a receive).
 */
static int check(int comm, int peer, int mai, int any, const void *buf,
		 size_t size, struct fmpllib_comm **cp)
{
	int ret = fmpllib_comm(comm, cp);

	if (ret)
		return ret;
	errno = EINVAL;
	if (peer < 0 || peer >= (*cp)->size)
		return FMPL_ERR_ARG;
	if (mai < 0 ? !any || (uint32_t)mai != FMPL_TAG_ANY
		    : (unsigned int)mai >= fmpllib_g.count)
		return FMPL_ERR_ARG;
	if (!buf && size)
		return FMPL_ERR_ARG;
	return FMPL_SUCCESS;
}

static void status_set(fmpl_status *st, int source, uint32_t mai, uint64_t size)
{
	if (st) {
		st->source = source;
		st->mai = mai == FMPL_TAG_ANY ? -1 : (int)mai;
		st->size = (size_t)size;
	}
}

/* The flag's result: FMPL_SUCCESS / a code, *st filled; -1: not done. */
static int flag_result(const struct fmpl_flag *f, int peer, fmpl_status *st)
{
	uint32_t state = __atomic_load_n(&f->state, __ATOMIC_ACQUIRE);

	if (state == FMPL_FLAG_DONE) {
		status_set(st, peer, f->mai, f->size);
		return FMPL_SUCCESS;
	}
	if (state == FMPL_FLAG_ERROR) {
		status_set(st, peer, f->mai, f->size);
		errno = f->error ? (int)f->error : EIO;
		return fmpllib_ier(errno);
	}
	return -1;
}

/* Complete the posted receive from comm rank @peer on kernel index @mai. */
static int wait_recv(struct fmpllib_comm *c, int peer, uint32_t mai,
		     fmpl_status *st)
{
	const struct fmpl_flag *f =
		&fmpllib_g.fa[fmpllib_slot(c->members[peer], mai)];
	struct fmpl_wait wt = {
		.peer = (uint32_t)peer, .mai = mai, .comm = c->id,
		.flags = FMPL_WAIT_RECV,
	};
	uint64_t deadline;
	unsigned int i;
	int ret, err;

	ret = flag_result(f, peer, st);
	if (ret >= 0)
		return ret;
	if (fmpllib_g.spin_us) {
		deadline = fmpllib_now_us() + fmpllib_g.spin_us;
		for (i = 1;; i++) {
			cpu_relax();
			ret = flag_result(f, peer, st);
			if (ret >= 0)
				return ret;
			if (!(i & 15) && fmpllib_now_us() >= deadline)
				break;
		}
	}
	err = wait_ioctl(&wt);
	if (!err) {
		status_set(st, peer, wt.out_mai, wt.out_size);
		return FMPL_SUCCESS;
	}
	/* Completed meanwhile, or a truncation: the flag tells. */
	ret = flag_result(f, peer, st);
	if (ret >= 0 && (err == ENOENT || ret != FMPL_SUCCESS))
		return ret;
	errno = err;
	return fmpllib_ier(err);
}

/* Post a receive; FMPL_SUCCESS with *done set when it completed at once. */
static int post_recv(struct fmpllib_comm *c, int peer, uint32_t mai, void *buf,
		     size_t size, int *done, fmpl_status *st)
{
	struct fmpl_xfer x = {
		.buf = (uintptr_t)buf, .size = size, .peer = (uint32_t)peer,
		.mai = mai, .comm = c->id, .flags = FMPL_XFER_NONBLOCK,
	};

	*done = 0;
	if (ioctl(fmpllib_g.fd, FMPL_IOC_RECV, &x)) {
		int err = errno;

		/* Matched at once but too long: the buffer holds its start. */
		if (err == EMSGSIZE) {
			*done = 1;
			status_set(st, peer, x.out_mai, x.out_size);
		}
		errno = err;
		return fmpllib_ier(err);
	}
	if (x.status == FMPL_STATUS_DONE) {
		*done = 1;
		status_set(st, peer, x.out_mai, x.out_size);
	}
	return FMPL_SUCCESS;
}

int fmpllib_recv(struct fmpllib_comm *c, int peer, uint32_t mai, void *buf,
		 size_t size, fmpl_status *st, int *ier)
{
	int done, ret = post_recv(c, peer, mai, buf, size, &done, st);

	if (!ret && !done)
		ret = wait_recv(c, peer, mai, st);
	return fmpllib_ret(ier, ret, 0);
}

/* Watch our matching area for the receiver's header: 1 if posted. */
static int spin_posted(unsigned int w, uint32_t mai)
{
	const struct fmpl_header *h = &fmpllib_g.ma[fmpllib_slot(w, mai)];
	const struct fmpl_header *a = &fmpllib_g.ma[fmpllib_slot(w, FMPL_TAG_ANY)];
	uint64_t deadline;
	unsigned int i;

	if (!fmpllib_g.spin_us)
		return 0;
	deadline = fmpllib_now_us() + fmpllib_g.spin_us;
	for (i = 1;; i++) {
		if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == FMPL_HDR_POSTED ||
		    __atomic_load_n(&a->state, __ATOMIC_ACQUIRE) == FMPL_HDR_POSTED)
			return 1;
		cpu_relax();
		if (!(i & 15) && fmpllib_now_us() >= deadline)
			return 0;
	}
}

static int send_ioctl(struct fmpllib_comm *c, int peer, uint32_t mai,
		      const void *buf, size_t size, uint64_t flags,
		      uint32_t *status)
{
	struct fmpl_xfer x = {
		.buf = (uintptr_t)buf, .size = size, .peer = (uint32_t)peer,
		.mai = mai, .comm = c->id, .flags = flags,
	};

	if (ioctl(fmpllib_g.fd, FMPL_IOC_SEND, &x))
		return errno;
	if (status)
		*status = x.status;
	return 0;
}

/* The isend bookkeeping of (comm rank @peer, index @mai). */
static uint8_t *isend_state(struct fmpllib_comm *c, int peer, uint32_t mai)
{
	return &fmpllib_g.isend[(size_t)c->members[peer] * fmpllib_g.kcount + mai];
}

int fmpllib_send(struct fmpllib_comm *c, int peer, uint32_t mai,
		 const void *buf, size_t size, int *ier)
{
	struct timespec pause = { 0, 20000 };
	int err;

	spin_posted(c->members[peer], mai);
	for (;;) {
		err = send_ioctl(c, peer, mai, buf, size, 0, NULL);
		/*
		 * EBUSY without an isend of ours pending on the index: our
		 * previous message there is spooled and not received yet.
		 * Wait for the receiver to take it, as for a full spool.
		 */
		if (err != EBUSY ||
		    *isend_state(c, peer, mai) == FMPLLIB_ISEND_PENDING)
			break;
		nanosleep(&pause, NULL);
		if (pause.tv_nsec < 1000000)
			pause.tv_nsec *= 2;
	}
	return err ? fmpllib_fail(ier, err) : fmpllib_ret(ier, FMPL_SUCCESS, 0);
}

FMPLLIB_PUBLIC int fmpl_send(const void *buf, size_t size, int dst, int mai,
			     int comm, int *ier)
{
	struct fmpllib_comm *c;
	int ret = check(comm, dst, mai, 0, buf, size, &c);

	if (ret)
		return fmpllib_ret(ier, ret, 0);
	if (fmpllib_fast((uint32_t)mai))
		return fmpllib_ret(ier, fmpllib_fast_send(c, dst, (uint32_t)mai,
							  buf, size, 0), 0);
	return fmpllib_send(c, dst, (uint32_t)mai, buf, size, ier);
}

FMPLLIB_PUBLIC int fmpl_recv_status(void *buf, size_t size, int src, int mai,
				    int comm, fmpl_status *st, int *ier)
{
	struct fmpllib_comm *c;
	int ret = check(comm, src, mai, 1, buf, size, &c);

	if (ret)
		return fmpllib_ret(ier, ret, 0);
	if (fmpllib_fast((uint32_t)mai))
		return fmpllib_ret(ier, fmpllib_fast_recv(c, src, (uint32_t)mai,
							  buf, size, st, 0), 0);
	return fmpllib_recv(c, src, (uint32_t)mai, buf, size, st, ier);
}

FMPLLIB_PUBLIC int fmpl_recv(void *buf, size_t size, int src, int mai,
			     int comm, int *ier)
{
	return fmpl_recv_status(buf, size, src, mai, comm, NULL, ier);
}

FMPLLIB_PUBLIC int fmpl_isend(const void *buf, size_t size, int dst, int mai,
			      int comm, int *ier)
{
	struct fmpllib_comm *c;
	uint32_t status = FMPL_STATUS_PENDING;
	int ret = check(comm, dst, mai, 0, buf, size, &c), err;

	if (ret)
		return fmpllib_ret(ier, ret, 0);
	if (fmpllib_fast((uint32_t)mai)) {
		ret = fmpllib_fast_send(c, dst, (uint32_t)mai, buf, size, 1);
		if (!ret)
			*isend_state(c, dst, (uint32_t)mai) = FMPLLIB_ISEND_DONE;
		return fmpllib_ret(ier, ret, 0);
	}
	err = send_ioctl(c, dst, (uint32_t)mai, buf, size, FMPL_XFER_NONBLOCK,
			 &status);
	if (err)
		return fmpllib_fail(ier, err);
	/* Done (or spooled): fmpl_isend_wait needs no system call. */
	*isend_state(c, dst, (uint32_t)mai) = status == FMPL_STATUS_PENDING ?
		FMPLLIB_ISEND_PENDING : FMPLLIB_ISEND_DONE;
	return fmpllib_ret(ier, FMPL_SUCCESS, 0);
}

FMPLLIB_PUBLIC int fmpl_isend_wait(int dst, int mai, int comm, int *ier)
{
	struct fmpllib_comm *c;
	struct fmpl_wait wt = {
		.peer = (uint32_t)dst, .mai = (uint32_t)mai,
		.flags = FMPL_WAIT_SEND,
	};
	int ret = check(comm, dst, mai, 0, NULL, 0, &c), err;
	uint8_t *state;

	if (ret)
		return fmpllib_ret(ier, ret, 0);
	state = isend_state(c, dst, (uint32_t)mai);
	if (*state == FMPLLIB_ISEND_DONE) {
		*state = FMPLLIB_ISEND_NONE;
		return fmpllib_ret(ier, FMPL_SUCCESS, 0);
	}
	*state = FMPLLIB_ISEND_NONE;
	wt.comm = c->id;
	err = wait_ioctl(&wt);
	return err ? fmpllib_fail(ier, err) : fmpllib_ret(ier, FMPL_SUCCESS, 0);
}

FMPLLIB_PUBLIC int fmpl_irecv(void *buf, size_t size, int src, int mai,
			      int comm, int *ier)
{
	struct fmpllib_comm *c;
	int ret = check(comm, src, mai, 1, buf, size, &c), done;

	if (!ret && fmpllib_fast((uint32_t)mai))
		ret = fmpllib_fast_irecv(c, src, (uint32_t)mai, buf, size);
	else if (!ret)
		ret = post_recv(c, src, (uint32_t)mai, buf, size, &done, NULL);
	return fmpllib_ret(ier, ret, 0);
}

FMPLLIB_PUBLIC int fmpl_irecv_wait_status(int src, int mai, int comm,
					  fmpl_status *st, int *ier)
{
	struct fmpllib_comm *c;
	int ret = check(comm, src, mai, 1, NULL, 0, &c);

	if (!ret && fmpllib_fast((uint32_t)mai))
		ret = fmpllib_fast_irecv_wait(c, src, (uint32_t)mai, st, 0);
	else if (!ret)
		ret = wait_recv(c, src, (uint32_t)mai, st);
	return fmpllib_ret(ier, ret, 0);
}

FMPLLIB_PUBLIC int fmpl_irecv_wait(int src, int mai, int comm, int *ier)
{
	return fmpl_irecv_wait_status(src, mai, comm, NULL, ier);
}

FMPLLIB_PUBLIC int fmpl_irecv_test(int src, int mai, int comm)
{
	struct fmpllib_comm *c;
	const struct fmpl_flag *f;
	uint32_t state;

	if (check(comm, src, mai, 1, NULL, 0, &c))
		return -1;
	if (fmpllib_fast((uint32_t)mai))
		return fmpllib_fast_irecv_wait(c, src, (uint32_t)mai, NULL,
					       1) == FMPL_SUCCESS;
	f = &fmpllib_g.fa[fmpllib_slot(c->members[src], (uint32_t)mai)];
	state = __atomic_load_n(&f->state, __ATOMIC_ACQUIRE);
	return state == FMPL_FLAG_DONE || state == FMPL_FLAG_ERROR;
}

FMPLLIB_PUBLIC int fmpl_send_any(const void *buf, size_t size, int dst,
				 int mai, int comm, int *ier)
{
	struct fmpllib_comm *c;
	int ret = check(comm, dst, mai, 0, buf, size, &c), err;

	if (!ret)
		ret = need_feature(FMPL_FEATURE_ANY_SOURCE);
	if (ret)
		return fmpllib_ret(ier, ret, 0);
	err = send_ioctl(c, dst, (uint32_t)mai, buf, size, FMPL_XFER_ANY_SOURCE,
			 NULL);
	return err ? fmpllib_fail(ier, err) : fmpllib_ret(ier, FMPL_SUCCESS, 0);
}

FMPLLIB_PUBLIC int fmpl_recv_any_status(void *buf, size_t size, int mai,
					int comm, fmpl_status *st, int *ier)
{
	struct fmpllib_comm *c;
	struct fmpl_xfer x = {
		.buf = (uintptr_t)buf, .size = size, .mai = (uint32_t)mai,
		.flags = FMPL_XFER_ANY_SOURCE,
	};
	int ret = check(comm, 0, mai, 1, buf, size, &c), err;

	if (!ret)
		ret = need_feature(FMPL_FEATURE_ANY_SOURCE);
	if (ret)
		return fmpllib_ret(ier, ret, 0);
	x.comm = c->id;
	if (ioctl(fmpllib_g.fd, FMPL_IOC_RECV, &x)) {
		err = errno;
		/* Truncated: the kernel says from whom and on which index. */
		if (err == EMSGSIZE && x.status == FMPL_STATUS_DONE)
			status_set(st, (int)x.out_peer, x.out_mai, x.out_size);
		else
			status_set(st, -1, (uint32_t)mai, 0);
		return fmpllib_fail(ier, err);
	}
	status_set(st, (int)x.out_peer, x.out_mai, x.out_size);
	return fmpllib_ret(ier, FMPL_SUCCESS, 0);
}

FMPLLIB_PUBLIC int fmpl_recv_any(void *buf, size_t size, int mai, int comm,
				 int *ier)
{
	return fmpl_recv_any_status(buf, size, mai, comm, NULL, ier);
}

FMPLLIB_PUBLIC int fmpl_sendbuf_set(void *buf, size_t size, unsigned int ipara,
				    int *ier)
{
	struct fmpl_sendbuf sb = {
		.buf = (uintptr_t)buf, .size = size, .timeout_ms = ipara,
	};
	int ret = fmpllib_inited ? need_feature(FMPL_FEATURE_SPOOL) :
		  (errno = EINVAL, FMPL_ERR_INIT);

	if (ret)
		return fmpllib_ret(ier, ret, 0);
	if (ioctl(fmpllib_g.fd, FMPL_IOC_SENDBUF_SET, &sb))
		return fmpllib_fail(ier, errno);
	fmpllib_g.spool_set = size != 0;
	return fmpllib_ret(ier, FMPL_SUCCESS, 0);
}

FMPLLIB_PUBLIC int fmpl_sendbuf_check(int *nsend, int *nspool, int *ier)
{
	struct fmpl_sendbuf_stat st;
	int ret = fmpllib_inited ? need_feature(FMPL_FEATURE_SPOOL) :
		  (errno = EINVAL, FMPL_ERR_INIT);

	if (ret)
		return fmpllib_ret(ier, ret, 0);
	memset(&st, 0, sizeof(st));
	if (ioctl(fmpllib_g.fd, FMPL_IOC_SENDBUF_CHECK, &st))
		return fmpllib_fail(ier, errno);
	if (nsend)
		*nsend = (int)st.nsend;
	if (nspool)
		*nspool = (int)st.nspool;
	return fmpllib_ret(ier, FMPL_SUCCESS, 0);
}

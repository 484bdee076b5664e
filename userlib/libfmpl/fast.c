// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fast.c - the fast indices (FMPL_FAST=N): messages of up to
 * FMPL_FAST_DATA_MAX bytes on matching indices 0..N-1 go through the
 * world's fast area, a mapping every rank shares (FMPL_FEATURE_FAST), with
 * no system call: the sender copies the message into the slot
 * [sender][receiver][index] and bumps `sent`, the receiver copies it out
 * and bumps `taken`.  A slot holds one message, so a send on a fast index
 * completes as soon as the previous message there has been taken (eager
 * semantics: the receive need not be posted).  A side that has spun for
 * FMPL_SPIN_US without progress sleeps in FMPL_IOC_FAST_WAIT after setting
 * its *_sleeps word; the other side wakes it (FMPL_IOC_FAST_WAKE) when it
 * sees that word set.  Sleeps last at most FMPLLIB_FAST_SLEEP_MS, then
 * look again, so a wake-up that never comes costs time, not a hang.  The two orders (store our word, then load theirs)
 * are sequentially consistent, so a wake-up is never lost.  The kernel
 * marks a rank that leaves in the area's header and wakes every sleeper.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "internal.h"

static struct fmpl_fast_slot *fast_slot(unsigned int s, unsigned int r,
					uint32_t mai)
{
	struct fmpl_fast_slot *base = (struct fmpl_fast_slot *)
		((char *)fmpllib_g.fast + FMPL_FAST_HDR_BYTES);

	return base + ((size_t)s * (unsigned int)fmpllib_g.size + r) *
		      fmpllib_g.fast_count + mai;
}

static int peer_left(unsigned int w)
{
	return __atomic_load_n(&((uint32_t *)fmpllib_g.fast)[w],
			       __ATOMIC_ACQUIRE) != 0;
}

static void wake(unsigned int w)
{
	struct fmpl_fast_wake fk = { .rank = w };

	ioctl(fmpllib_g.fd, FMPL_IOC_FAST_WAKE, &fk);
}

/*
 * Wait until *@word no longer holds @value: spin, then sleep in the
 * kernel with *@sleeps set.  FMPL_ERR_PEER (errno ECONNRESET) when world
 * rank @w leaves first.
 */
static int fast_wait(uint32_t *word, uint32_t value, uint32_t *sleeps,
		     unsigned int w)
{
	uint64_t deadline = fmpllib_now_us() + fmpllib_g.spin_us;
	struct fmpl_fast_wait fw = {
		.offset = (uint64_t)((char *)word - (char *)fmpllib_g.fast),
		.value = value, .peer = w,
		/*
		 * Sleep in slices: a peer that changes the word without the
		 * wake-up (a buggy or lying one) delays us, never hangs us.
		 */
		.timeout_ms = FMPLLIB_FAST_SLEEP_MS,
	};
	unsigned int i;
	int err = 0;

	for (i = 1; fmpllib_g.spin_us; i++) {
		if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != value)
			return FMPL_SUCCESS;
		if (!(i & 15) && (peer_left(w) ||
				  fmpllib_now_us() >= deadline))
			break;
		fmpllib_cpu_relax();
	}
	for (;;) {
		__atomic_store_n(sleeps, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(word, __ATOMIC_SEQ_CST) != value)
			break;
		if (ioctl(fmpllib_g.fd, FMPL_IOC_FAST_WAIT, &fw) &&
		    errno != EINTR && errno != ETIMEDOUT) {
			err = errno;
			break;
		}
	}
	__atomic_store_n(sleeps, 0, __ATOMIC_RELEASE);
	if (!err)
		return FMPL_SUCCESS;
	errno = err;
	return fmpllib_ier(err);
}

int fmpllib_fast_send(struct fmpllib_comm *c, int peer, uint32_t mai,
		      const void *buf, size_t size, int nonblock)
{
	unsigned int w = c->members[peer];
	struct fmpl_fast_slot *s = fast_slot((unsigned int)fmpllib_g.rank, w,
					     mai);
	uint32_t sent = s->sent;	/* ours alone to write */
	int ret;

	if (size > FMPL_FAST_DATA_MAX) {
		errno = EMSGSIZE;
		return FMPL_ERR_ARG;
	}
	if (peer_left(w)) {
		errno = ECONNRESET;
		return FMPL_ERR_PEER;
	}
	if (__atomic_load_n(&s->taken, __ATOMIC_ACQUIRE) != sent) {
		if (nonblock) {
			errno = EBUSY;
			return FMPL_ERR_BUSY;
		}
		ret = fast_wait(&s->taken, sent - 1, &s->send_sleeps, w);
		if (ret)
			return ret;
	}
	if (size)
		memcpy(s->data, buf, size);
	s->size = (uint32_t)size;
	__atomic_store_n(&s->sent, sent + 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->recv_sleeps, __ATOMIC_SEQ_CST))
		wake(w);
	return FMPL_SUCCESS;
}

/*
 * Take the message of (comm rank @peer, index @mai) into @buf: FMPL_SUCCESS
 * or a code, -1 when @test and none is there yet.
 */
int fmpllib_fast_recv(struct fmpllib_comm *c, int peer, uint32_t mai,
		      void *buf, size_t size, fmpl_status *st, int test)
{
	unsigned int w = c->members[peer];
	struct fmpl_fast_slot *s = fast_slot(w, (unsigned int)fmpllib_g.rank,
					     mai);
	uint32_t taken = s->taken;	/* ours alone to write */
	size_t n, k;
	int ret, bad;

	if (__atomic_load_n(&s->sent, __ATOMIC_ACQUIRE) == taken) {
		if (test && !peer_left(w))
			return -1;
		if (test) {
			errno = ECONNRESET;
			return FMPL_ERR_PEER;
		}
		ret = fast_wait(&s->sent, taken, &s->recv_sleeps, w);
		if (ret)
			return ret;
	}
	/* The area is the peers' to write: never trust its size. */
	n = __atomic_load_n(&s->size, __ATOMIC_RELAXED);
	bad = n > FMPL_FAST_DATA_MAX;
	if (bad)
		n = FMPL_FAST_DATA_MAX;
	k = n < size ? n : size;
	if (k)
		memcpy(buf, s->data, k);
	__atomic_store_n(&s->taken, taken + 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->send_sleeps, __ATOMIC_SEQ_CST))
		wake(w);
	if (st) {
		st->source = peer;
		st->mai = (int)mai;
		st->size = k;
	}
	if (bad) {
		errno = EPROTO;
		return FMPL_ERR_OTHER;
	}
	if (n > size) {
		errno = EMSGSIZE;
		return FMPL_ERR_TRUNCATE;
	}
	return FMPL_SUCCESS;
}

/* The non-blocking receive of (comm rank @peer, fast index @mai). */
static struct fmpllib_fast_post *post_of(struct fmpllib_comm *c, int peer,
					 uint32_t mai)
{
	return &fmpllib_g.fast_posts[(size_t)c->members[peer] *
				     fmpllib_g.fast_count + mai];
}

int fmpllib_fast_irecv(struct fmpllib_comm *c, int peer, uint32_t mai,
		       void *buf, size_t size)
{
	struct fmpllib_fast_post *p = post_of(c, peer, mai);

	if (p->state == FMPLLIB_FAST_POSTED) {
		errno = EBUSY;
		return FMPL_ERR_BUSY;
	}
	p->state = FMPLLIB_FAST_POSTED;
	p->comm = c->id;
	p->buf = buf;
	p->size = size;
	return FMPL_SUCCESS;
}

int fmpllib_fast_pending(const struct fmpllib_comm *c)
{
	unsigned int m;
	int i;

	if (!fmpllib_g.fast_posts)
		return 0;
	for (i = 0; i < c->size; i++) {
		const struct fmpllib_fast_post *p =
			&fmpllib_g.fast_posts[(size_t)c->members[i] *
					      fmpllib_g.fast_count];

		for (m = 0; m < fmpllib_g.fast_count; m++)
			if (p[m].state == FMPLLIB_FAST_POSTED && p[m].comm == c->id)
				return 1;
	}
	return 0;
}

/* Complete it: @test 1 only looks (-1: not yet). */
int fmpllib_fast_irecv_wait(struct fmpllib_comm *c, int peer, uint32_t mai,
			    fmpl_status *st, int test)
{
	struct fmpllib_fast_post *p = post_of(c, peer, mai);
	int ret;

	if (p->state == FMPLLIB_FAST_IDLE) {
		errno = ENOENT;
		return test ? -1 : FMPL_ERR_NOENT;
	}
	if (p->state == FMPLLIB_FAST_POSTED) {
		ret = fmpllib_fast_recv(c, peer, mai, p->buf, p->size,
					&p->st, test);
		if (ret < 0)
			return -1;
		p->ret = ret;
		p->err = errno;
		p->state = FMPLLIB_FAST_DONE;
	}
	if (test)
		return FMPL_SUCCESS;
	/* Kept until the next irecv, as the flag area keeps a result. */
	if (st)
		*st = p->st;
	errno = p->err;
	return p->ret;
}

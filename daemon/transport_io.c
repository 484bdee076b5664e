// SPDX-License-Identifier: GPL-2.0
/*
 * transport_io.c - one transfer, waited for (transport.h: transport_io).
 */
#include <pthread.h>

#include "transport.h"

struct sync_xfer {
	struct dlm_xfer x;	/* first: done() gets it */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int done;
	int status;
};

static void sync_done(struct dlm_xfer *x, int status)
{
	struct sync_xfer *s = (struct sync_xfer *)x;

	pthread_mutex_lock(&s->lock);
	s->status = status;
	s->done = 1;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

int transport_io(const struct transport_ops *ops, struct tconn *c,
		 enum xfer_op op, uint64_t off, uint32_t len, void *buf)
{
	struct sync_xfer s = {
		.x = { .op = op, .len = len, .remote_off = off, .buf = buf,
		       .done = sync_done },
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};

	ops->submit(c, &s.x);
	pthread_mutex_lock(&s.lock);
	while (!s.done)
		pthread_cond_wait(&s.cond, &s.lock);
	pthread_mutex_unlock(&s.lock);
	return s.status;
}

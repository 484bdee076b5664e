// SPDX-License-Identifier: GPL-2.0
/*
 * transport_tcp.c - the tcp transport: one connection per memory server
 * speaking the protocol of wire.h.
 *
 * Two threads per connection pipeline the requests: the sender takes
 * transfers off the queue, tags them, moves them to the in-flight FIFO and
 * sends them (a WRITE's payload straight from the pool); the receiver reads
 * the replies, which the server sends in order, matches each with the head
 * of the FIFO and receives a READ's payload straight into the pool.  The
 * receiver waits in poll() for the socket, so a reply wakes it and nothing
 * else has to: with transfers in flight, a server silent for the I/O
 * timeout since the last progress (the first of them sent, or a reply) is
 * dead; with none, the receiver looks every eighth of it for new ones.
 *
 * A small transfer submitted while nothing is queued and nobody is sending
 * is sent by its submitter instead: one thread wake-up less on the path of
 * every fetch and of a swap device's 4 KB requests.  One sender at a time
 * (c->sending), so the wire order is the FIFO's.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "log.h"
#include "stats.h"
#include "transport.h"
#include "xfer_list.h"
#include "wire.h"

struct tconn {
	int fd;
	char name[NETADDR_STR_MAX];
	struct transport_opts opts;

	pthread_mutex_t lock;
	pthread_cond_t tx_cv;
	struct dlm_xfer *q_head, *q_tail;	/* queued */
	struct dlm_xfer *f_head, *f_tail;	/* in flight, FIFO */
	int dying, dead, stopping, threads;
	int sending;				/* someone is in send_one() */
	uint64_t next_tag;
	uint64_t progress_ns;	/* last reply, or first send into an empty FIFO */
	pthread_t tx, rx;
};

/* Largest WRITE its submitter sends itself (a READ sends a header only). */
#define TCP_INLINE_MAX	(64 * 1024)

/* Set in every receiver thread: they never send (see tcp_submit). */
static _Thread_local int in_receiver;

/* Take everything pending off C; returns the list (in flight first). */
static struct dlm_xfer *take_pending(struct tconn *c)
{
	struct dlm_xfer *all = c->f_head;

	if (c->f_tail)
		c->f_tail->next = c->q_head;
	else
		all = c->q_head;
	c->f_head = c->f_tail = c->q_head = c->q_tail = NULL;
	return all;
}

/*
 * The connection failed: the owner told once, first (so that its log
 * names this reason, not a transfer failing because of it), then dead:
 * everything pending fails.
 */
static void tcp_die(struct tconn *c, const char *why)
{
	struct dlm_xfer *all;
	int notify;

	pthread_mutex_lock(&c->lock);
	if (c->dying) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	c->dying = 1;
	notify = !c->stopping;
	pthread_mutex_unlock(&c->lock);

	if (notify && c->opts.dead)
		c->opts.dead(c->opts.ctx, c->opts.index, why);

	pthread_mutex_lock(&c->lock);
	c->dead = 1;
	all = take_pending(c);
	pthread_cond_broadcast(&c->tx_cv);
	pthread_mutex_unlock(&c->lock);

	shutdown(c->fd, SHUT_RDWR);
	xfer_fail_all(all);
}

/*
 * Send X.  Called with c->lock held and c->sending set by the caller;
 * returns with the lock dropped, c->sending still set, 0 or a message in
 * WHY.  X may be completed (and freed) by tcp_die from the FIFO append on.
 */
static int send_one(struct tconn *c, struct dlm_xfer *x, char *why,
		    size_t whylen)
{
	uint8_t hdr[WIRE_HDR_SIZE];
	struct wire_hdr h;
	struct iovec iov[2];
	int r, n;

	x->tag = c->next_tag++;
	if (!c->f_head)
		c->progress_ns = now_ns();
	/* In flight before it is sent: the reply may be quick. */
	xfer_list_append(&c->f_head, &c->f_tail, x);
	h = wire_req(x->op == XFER_WRITE ? WIRE_OP_WRITE : WIRE_OP_READ,
		     x->len, x->remote_off, x->tag);
	iov[0] = (struct iovec){ .iov_base = hdr, .iov_len = sizeof(hdr) };
	iov[1] = (struct iovec){ .iov_base = x->buf, .iov_len = x->len };
	n = x->op == XFER_WRITE && x->len ? 2 : 1;
	pthread_mutex_unlock(&c->lock);

	wire_hdr_encode(hdr, &h);
	r = wire_sendv(c->fd, iov, n);	/* payload straight from buf */
	if (r)
		snprintf(why, whylen, "send: %s",
			 r == -EAGAIN ? "timed out" : strerror(-r));
	return r;
}

/*
 * A send is over (R: its result): the connection dies if it failed; the
 * sender thread may take what queued meanwhile, and tcp_stop may go on.
 * Returns with c->lock held.
 */
static void sent(struct tconn *c, int r, const char *why)
{
	if (r)
		tcp_die(c, why);
	pthread_mutex_lock(&c->lock);
	c->sending = 0;
	pthread_cond_broadcast(&c->tx_cv);
}

static void *tx_main(void *arg)
{
	struct tconn *c = arg;
	struct dlm_xfer *x;
	char why[128];
	int r;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		while ((!c->q_head || c->sending) && !c->dead && !c->stopping)
			pthread_cond_wait(&c->tx_cv, &c->lock);
		if (c->dead || c->stopping)
			break;
		x = xfer_list_pop(&c->q_head, &c->q_tail);
		c->sending = 1;
		r = send_one(c, x, why, sizeof(why));
		sent(c, r, why);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static const char *recv_err(int r, char *buf, size_t len)
{
	snprintf(buf, len, "receive: %s",
		 r == -EAGAIN ? "no reply within the I/O timeout" :
		 r == -ECONNRESET ? "connection closed by the server" :
		 strerror(-r));
	return buf;
}

/*
 * Wait until the socket has a reply to read: 0, -EAGAIN when the
 * transfers in flight made no progress for the I/O timeout, -ESHUTDOWN
 * when the connection is dead or stopping, or another -errno.
 */
static int wait_reply(struct tconn *c)
{
	uint64_t tmo_ns = c->opts.io_timeout_ms * 1000000ULL, since, now;
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	int busy, done, ms;

	for (;;) {
		pthread_mutex_lock(&c->lock);
		done = c->dead || c->stopping;
		busy = c->f_head != NULL;
		since = c->progress_ns;
		pthread_mutex_unlock(&c->lock);
		if (done)
			return -ESHUTDOWN;
		if (!tmo_ns) {
			ms = -1;
		} else if (busy) {
			now = now_ns();
			if (now - since >= tmo_ns)
				return -EAGAIN;
			ms = (int)((since + tmo_ns - now + 999999) / 1000000);
		} else {
			ms = (int)(c->opts.io_timeout_ms / 8) + 1;
		}
		switch (poll(&pfd, 1, ms)) {
		case -1:
			if (errno != EINTR)
				return -errno;
			break;
		case 0:
			break;
		default:
			return 0;	/* a reply, or an error recv reports */
		}
	}
}

static void *rx_main(void *arg)
{
	struct tconn *c = arg;
	uint8_t hdr[WIRE_HDR_SIZE];
	struct wire_hdr h;
	struct dlm_xfer *x;
	uint16_t want_op;
	char why[160];
	int r;

	in_receiver = 1;
	for (;;) {
		r = wait_reply(c);
		if (r == -ESHUTDOWN)
			break;
		if (!r)
			r = wire_recv(c->fd, hdr, sizeof(hdr), NULL);
		if (r) {
			tcp_die(c, recv_err(r, why, sizeof(why)));
			break;
		}
		wire_hdr_decode(&h, hdr);

		pthread_mutex_lock(&c->lock);
		if (c->dead) {		/* all were failed meanwhile */
			pthread_mutex_unlock(&c->lock);
			break;
		}
		x = xfer_list_pop(&c->f_head, &c->f_tail);
		c->progress_ns = now_ns();
		pthread_mutex_unlock(&c->lock);
		if (!x) {
			snprintf(why, sizeof(why),
				 "protocol error: a reply (op=%#x tag=%" PRIu64
				 ") with nothing in flight", h.op, h.tag);
			tcp_die(c, why);
			break;
		}

		want_op = (x->op == XFER_WRITE ? WIRE_OP_WRITE : WIRE_OP_READ) |
			  WIRE_OP_REPLY;
		if (h.magic != WIRE_MAGIC || h.version != WIRE_VERSION ||
		    h.op != want_op || h.tag != x->tag ||
		    (h.status == WIRE_OK && x->op == XFER_READ && h.len != x->len) ||
		    ((h.status != WIRE_OK || x->op == XFER_WRITE) && h.len)) {
			snprintf(why, sizeof(why),
				 "protocol error: reply magic=%#x version=%u op=%#x tag=%" PRIu64
				 " len=%u, expected op=%#x tag=%" PRIu64,
				 h.magic, h.version, h.op, h.tag, h.len,
				 want_op, x->tag);
			x->done(x, -EIO);
			tcp_die(c, why);
			break;
		}
		if (h.status != WIRE_OK) {
			/* The server refused it; the connection is fine. */
			log_error("memory server refused a transfer", "server=%s op=%s offset=%"
				  PRIu64 " len=%u status=\"%s\"", c->name,
				  x->op == XFER_WRITE ? "write" : "read",
				  x->remote_off, x->len,
				  wire_status_str(h.status));
			x->done(x, -EIO);
			continue;
		}
		if (x->op == XFER_READ && x->len) {
			/* Straight into the pool: no staging copy. */
			r = wire_recv(c->fd, x->buf, x->len, NULL);
			if (r) {
				x->done(x, -EIO);
				tcp_die(c, recv_err(r, why, sizeof(why)));
				break;
			}
		}
		x->done(x, 0);
	}
	return NULL;
}

static int hello(struct tconn *c, uint64_t *size, char *err, size_t errlen)
{
	uint8_t hdr[WIRE_HDR_SIZE], payload[WIRE_HELLO_SIZE];
	struct wire_hdr h = wire_req(WIRE_OP_HELLO, 0, 0, 0);
	struct iovec iov = { .iov_base = hdr, .iov_len = sizeof(hdr) };
	struct wire_hello w;
	int r;

	wire_hdr_encode(hdr, &h);
	r = wire_sendv(c->fd, &iov, 1);
	if (!r)
		r = wire_recv(c->fd, hdr, sizeof(hdr), NULL);
	if (r) {
		snprintf(err, errlen, "%s: hello: %s", c->name,
			 r == -EAGAIN ? "no answer (is it a dlm-memserver?)" :
			 r == -ECONNRESET ? "connection closed (is it a dlm-memserver?)" :
			 strerror(-r));
		return r;
	}
	wire_hdr_decode(&h, hdr);
	if (h.magic != WIRE_MAGIC) {
		snprintf(err, errlen, "%s: not a dlm-memserver (bad magic in its answer)",
			 c->name);
		return -EPROTO;
	}
	if (h.status == WIRE_E_VERSION || h.version != WIRE_VERSION) {
		snprintf(err, errlen, "%s: dlm-memserver speaks protocol version %u, dlmd %u: run matching versions",
			 c->name, h.version, WIRE_VERSION);
		return -EPROTO;
	}
	if (h.status || h.op != (WIRE_OP_HELLO | WIRE_OP_REPLY) ||
	    h.len != WIRE_HELLO_SIZE) {
		snprintf(err, errlen, "%s: bad hello reply (status %u: %s)",
			 c->name, h.status, wire_status_str(h.status));
		return -EPROTO;
	}
	r = wire_recv(c->fd, payload, sizeof(payload), NULL);
	if (r) {
		snprintf(err, errlen, "%s: hello: %s", c->name, strerror(-r));
		return r;
	}
	wire_hello_decode(&w, payload);
	*size = w.size;
	return 0;
}

static void tcp_free(struct tconn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->tx_cv);
	free(c);
}

static int tcp_open(struct tconn **out, const struct netaddr *addr,
		    const struct transport_opts *opts, uint64_t *size,
		    char *err, size_t errlen)
{
	struct timeval tv = {
		.tv_sec = opts->io_timeout_ms / 1000,
		.tv_usec = (opts->io_timeout_ms % 1000) * 1000,
	};
	struct tconn *c = calloc(1, sizeof(*c));
	int r;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->opts = *opts;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->tx_cv, NULL);
	netaddr_str(addr, c->name, sizeof(c->name));
	c->fd = net_connect(addr, (int)opts->connect_timeout_ms, err, errlen);
	if (c->fd < 0) {
		tcp_free(c);
		return -ECONNREFUSED;
	}
	/* A server that stops answering is dead after the I/O timeout. */
	if (opts->io_timeout_ms) {
		setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	r = hello(c, size, err, errlen);
	if (r) {
		tcp_free(c);
		return r;
	}
	c->next_tag = 1;
	r = pthread_create(&c->tx, NULL, tx_main, c);
	if (!r) {
		r = pthread_create(&c->rx, NULL, rx_main, c);
		if (r) {
			pthread_mutex_lock(&c->lock);
			c->stopping = 1;
			pthread_cond_broadcast(&c->tx_cv);
			pthread_mutex_unlock(&c->lock);
			pthread_join(c->tx, NULL);
		}
	}
	if (r) {
		snprintf(err, errlen, "%s: cannot start threads: %s", c->name,
			 strerror(r));
		tcp_free(c);
		return -r;
	}
	c->threads = 1;
	*out = c;
	return 0;
}

static void tcp_submit(struct tconn *c, struct dlm_xfer *x)
{
	char why[128];
	int r;

	pthread_mutex_lock(&c->lock);
	if (c->dead || c->stopping) {
		pthread_mutex_unlock(&c->lock);
		x->done(x, -EIO);
		return;
	}
	/*
	 * No receiver sends, on its own connection or another's (a transfer
	 * a completion re-submits): a send that blocks on a full socket would
	 * wait for a server that waits for a receiver, maybe this one.
	 */
	if (c->q_head || c->sending || in_receiver ||
	    (x->op == XFER_WRITE && x->len > TCP_INLINE_MAX)) {
		xfer_list_append(&c->q_head, &c->q_tail, x);
		pthread_cond_signal(&c->tx_cv);
		pthread_mutex_unlock(&c->lock);
		return;
	}
	c->sending = 1;
	r = send_one(c, x, why, sizeof(why));
	sent(c, r, why);
	pthread_mutex_unlock(&c->lock);
}

static int tcp_alive(struct tconn *c)
{
	int alive;

	pthread_mutex_lock(&c->lock);
	alive = !c->dead;
	pthread_mutex_unlock(&c->lock);
	return alive;
}

static void tcp_stop(struct tconn *c)
{
	struct dlm_xfer *all;

	pthread_mutex_lock(&c->lock);
	if (c->stopping && !c->threads) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	c->stopping = 1;
	pthread_cond_broadcast(&c->tx_cv);
	pthread_mutex_unlock(&c->lock);
	shutdown(c->fd, SHUT_RDWR);
	if (c->threads) {
		pthread_join(c->tx, NULL);
		pthread_join(c->rx, NULL);
	}
	pthread_mutex_lock(&c->lock);
	while (c->sending)	/* a submitter's own send, failing now */
		pthread_cond_wait(&c->tx_cv, &c->lock);
	c->threads = 0;
	all = take_pending(c);
	pthread_mutex_unlock(&c->lock);
	xfer_fail_all(all);
}

static void tcp_close(struct tconn *c)
{
	if (!c)
		return;
	tcp_stop(c);
	tcp_free(c);
}

const struct transport_ops transport_tcp = {
	.name = "tcp",
	.open = tcp_open,
	.submit = tcp_submit,
	.alive = tcp_alive,
	.stop = tcp_stop,
	.close = tcp_close,
};

// SPDX-License-Identifier: GPL-2.0
/*
 * transport_tcp.c - the tcp transport: TCP connections ("lanes") to each
 * memory server speaking the protocol of wire.h: one for WRITEs and
 * TCP_READ_LANES for READs, so that a fetch never waits behind a 1 MB
 * store on the wire, the server (a thread per connection) receives one
 * while it sends the other, and the copies of several READs' payloads
 * into the pool (the receive side's work) run on several CPUs at once.
 * A READ goes to the read lane with the fewest bytes pending.  A READ
 * that overlaps a WRITE not yet answered goes on the write lane, behind
 * it, so a READ always sees every WRITE submitted before it; WRITEs stay
 * in order on their lane.  Any lane failing kills them all: the server
 * is dead.
 *
 * Two threads per lane pipeline the requests: the sender takes
 * transfers off the queue, tags them, moves them to the in-flight FIFO and
 * sends them (a WRITE's payload copied from the pool into the lane's bounce
 * ring and lent to the socket from there: see send_one); the receiver reads
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
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "log.h"
#include "stats.h"
#include "transport.h"
#include "xfer_list.h"
#include "wire.h"

/*
 * Read lanes per server: one receive copy per CPU of a small node at once.
 * A single read connection kept one CPU copying while the other idled (a
 * quarter of the time in the triad at 10% local memory, 2 vCPUs).
 */
#define TCP_READ_LANES	2

enum { LANE_WRITE, LANE_READ0, TCP_LANES = LANE_READ0 + TCP_READ_LANES };

struct tconn;

/* One TCP connection to the server. */
struct tlane {
	struct tconn *conn;
	int fd;
	struct wire_pipe pipe;			/* lends the bounce ring */
	char *ring;		/* the write lane's bounce ring, or NULL */
	uint64_t ring_head, ring_tail;	/* bytes taken, bytes freed (lock) */

	pthread_mutex_t lock;
	pthread_cond_t tx_cv;
	struct dlm_xfer *q_head, *q_tail;	/* queued */
	struct dlm_xfer *f_head, *f_tail;	/* in flight, FIFO */
	int dead, stopping, threads;
	int sending;				/* someone is in send_one() */
	uint64_t pending;	/* bytes queued and in flight (atomic) */
	uint64_t next_tag;
	uint64_t progress_ns;	/* last reply, or first send into an empty FIFO */
	pthread_t tx, rx;
};

struct tconn {
	char name[NETADDR_STR_MAX];
	struct transport_opts opts;

	pthread_mutex_t lock;			/* protects dying, stopping */
	int dying, stopping;
	struct tlane lane[TCP_LANES];
};

/*
 * The write lane's bounce ring: WRITE payloads in flight, in send order,
 * each freed by its reply.  It holds eight 1 MB DLM pages; a WRITE that
 * finds no room is copied into the socket instead (see send_one).
 */
#define TCP_RING_SIZE	(8u << 20)

/* Largest WRITE its submitter sends itself (a READ sends a header only). */
#define TCP_INLINE_MAX	(64 * 1024)

/* Set in every receiver thread: they never send (see tcp_submit). */
static _Thread_local int in_receiver;

/* Take everything pending off L; returns the list (in flight first). */
static struct dlm_xfer *take_pending(struct tlane *l)
{
	struct dlm_xfer *all = l->f_head;

	if (l->f_tail)
		l->f_tail->next = l->q_head;
	else
		all = l->q_head;
	l->f_head = l->f_tail = l->q_head = l->q_tail = NULL;
	__atomic_store_n(&l->pending, 0, __ATOMIC_RELAXED);
	return all;
}

/* Everything pending on L fails; it takes no more. */
static void lane_kill(struct tlane *l)
{
	struct dlm_xfer *all;

	pthread_mutex_lock(&l->lock);
	l->dead = 1;
	all = take_pending(l);
	pthread_cond_broadcast(&l->tx_cv);
	pthread_mutex_unlock(&l->lock);

	shutdown(l->fd, SHUT_RDWR);
	xfer_fail_all(all);
}

/*
 * The connection failed: the owner told once, first (so that its log
 * names this reason, not a transfer failing because of it), then every
 * lane dead: everything pending fails.
 */
static void tcp_die(struct tconn *c, const char *why)
{
	int notify, i;

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
	for (i = 0; i < TCP_LANES; i++)
		lane_kill(&c->lane[i]);
}

/*
 * LEN bytes of L's bounce ring for a WRITE, or NULL when it has no room:
 * in send order, contiguous (the end of the ring skipped if need be); the
 * reply frees them with everything taken before, by setting ring_tail to
 * *END.  L locked, by the one sender.
 */
static char *ring_take(struct tlane *l, uint32_t len, uint64_t *end)
{
	uint64_t pos = l->ring_head % TCP_RING_SIZE, skip = 0;

	if (!l->ring || len > TCP_RING_SIZE)
		return NULL;
	if (pos + len > TCP_RING_SIZE)
		skip = TCP_RING_SIZE - pos;
	if (l->ring_head + skip + len - l->ring_tail > TCP_RING_SIZE)
		return NULL;
	l->ring_head += skip;
	pos = l->ring_head % TCP_RING_SIZE;
	l->ring_head += len;
	*end = l->ring_head;
	return l->ring + pos;
}

/*
 * Send X on L.  Called with l->lock held and l->sending set by the
 * caller; returns with the lock dropped, l->sending still set, 0 or a
 * message in WHY.  X may be completed (and freed) by tcp_die from the
 * FIFO append on.
 */
static int send_one(struct tlane *l, struct dlm_xfer *x, char *why,
		    size_t whylen)
{
	uint8_t hdr[WIRE_HDR_SIZE];
	struct iovec iov[2];
	struct wire_hdr h;
	char *bounce = NULL;
	uint32_t len;
	int r;

	x->tag = l->next_tag++;
	x->ring_end = 0;
	if (!l->f_head)
		l->progress_ns = now_ns();
	/* In flight before it is sent: the reply may be quick. */
	xfer_list_append(&l->f_head, &l->f_tail, x);
	h = wire_req(x->op == XFER_WRITE ? WIRE_OP_WRITE : WIRE_OP_READ,
		     x->len, x->remote_off, x->tag);
	len = x->op == XFER_WRITE ? x->len : 0;
	iov[1] = (struct iovec){ .iov_base = x->buf, .iov_len = len };
	if (len)
		bounce = ring_take(l, len, &x->ring_end);
	pthread_mutex_unlock(&l->lock);

	/*
	 * A pool frame is never lent to the socket: the kernel counts a
	 * reference on it that outlives the request as a program's pin, and
	 * would not reuse the frame (design.rst, Pinned pages), and a socket
	 * can keep lent pages past the reply (on this machine, until the
	 * receiver's socket buffers are freed, which the kernel may defer)
	 * and a dead connection for as long as it lives.  The payload is
	 * copied into the bounce ring in user space and lent from there: the
	 * server has received every byte of it when it replies, so that the
	 * reply may free it for reuse, whoever still holds its pages.  Under
	 * TCG a user-space copy is ten times as fast as the kernel's (rep
	 * movsb a byte at a time).  Without room in the ring, it is copied
	 * into the socket.
	 */
	wire_hdr_encode(hdr, &h);
	iov[0] = (struct iovec){ .iov_base = hdr, .iov_len = sizeof(hdr) };
	if (bounce) {
		memcpy(bounce, iov[1].iov_base, len);
		r = wire_send_lent(l->fd, &l->pipe, hdr, sizeof(hdr), bounce,
				   len);
	} else {
		r = wire_sendv(l->fd, iov, len ? 2 : 1);
	}
	if (r)
		snprintf(why, whylen, "send: %s",
			 r == -EAGAIN ? "timed out" : strerror(-r));
	return r;
}

/*
 * A send on L is over (R: its result): the connection dies if it failed;
 * the sender thread may take what queued meanwhile, and tcp_stop may go
 * on.  Returns with l->lock held.
 */
static void sent(struct tlane *l, int r, const char *why)
{
	if (r)
		tcp_die(l->conn, why);
	pthread_mutex_lock(&l->lock);
	l->sending = 0;
	pthread_cond_broadcast(&l->tx_cv);
}

static void *tx_main(void *arg)
{
	struct tlane *l = arg;
	struct dlm_xfer *x;
	char why[128];
	int r;

	pthread_mutex_lock(&l->lock);
	for (;;) {
		while ((!l->q_head || l->sending) && !l->dead && !l->stopping)
			pthread_cond_wait(&l->tx_cv, &l->lock);
		if (l->dead || l->stopping)
			break;
		x = xfer_list_pop(&l->q_head, &l->q_tail);
		l->sending = 1;
		r = send_one(l, x, why, sizeof(why));
		sent(l, r, why);
	}
	pthread_mutex_unlock(&l->lock);
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
static int wait_reply(struct tlane *l)
{
	uint64_t tmo_ns = l->conn->opts.io_timeout_ms * 1000000ULL, since, now;
	struct pollfd pfd = { .fd = l->fd, .events = POLLIN };
	int busy, done, ms;

	for (;;) {
		pthread_mutex_lock(&l->lock);
		done = l->dead || l->stopping;
		busy = l->f_head != NULL;
		since = l->progress_ns;
		pthread_mutex_unlock(&l->lock);
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
			ms = (int)(l->conn->opts.io_timeout_ms / 8) + 1;
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
	struct tlane *l = arg;
	struct tconn *c = l->conn;
	uint8_t hdr[WIRE_HDR_SIZE];
	struct wire_hdr h;
	struct dlm_xfer *x;
	uint16_t want_op;
	char why[160];
	int r;

	in_receiver = 1;
	for (;;) {
		r = wait_reply(l);
		if (r == -ESHUTDOWN)
			break;
		if (!r)
			r = wire_recv(l->fd, hdr, sizeof(hdr), NULL);
		if (r) {
			tcp_die(c, recv_err(r, why, sizeof(why)));
			break;
		}
		wire_hdr_decode(&h, hdr);

		pthread_mutex_lock(&l->lock);
		if (l->dead) {		/* all were failed meanwhile */
			pthread_mutex_unlock(&l->lock);
			break;
		}
		x = xfer_list_pop(&l->f_head, &l->f_tail);
		if (x) {
			__atomic_fetch_sub(&l->pending, x->len,
					   __ATOMIC_RELAXED);
			/* Answered: the server has all its payload. */
			if (x->ring_end)
				l->ring_tail = x->ring_end;
		}
		l->progress_ns = now_ns();
		pthread_mutex_unlock(&l->lock);
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
			r = wire_recv(l->fd, x->buf, x->len, NULL);
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

static int hello(struct tlane *l, uint64_t *size, char *err, size_t errlen)
{
	uint8_t hdr[WIRE_HDR_SIZE], payload[WIRE_HELLO_SIZE];
	struct wire_hdr h = wire_req(WIRE_OP_HELLO, 0, 0, 0);
	struct iovec iov = { .iov_base = hdr, .iov_len = sizeof(hdr) };
	struct wire_hello w;
	int r;

	wire_hdr_encode(hdr, &h);
	r = wire_sendv(l->fd, &iov, 1);
	if (!r)
		r = wire_recv(l->fd, hdr, sizeof(hdr), NULL);
	if (r) {
		snprintf(err, errlen, "%s: hello: %s", l->conn->name,
			 r == -EAGAIN ? "no answer (is it a dlm-memserver?)" :
			 r == -ECONNRESET ? "connection closed (is it a dlm-memserver?)" :
			 strerror(-r));
		return r;
	}
	wire_hdr_decode(&h, hdr);
	if (h.magic != WIRE_MAGIC) {
		snprintf(err, errlen, "%s: not a dlm-memserver (bad magic in its answer)",
			 l->conn->name);
		return -EPROTO;
	}
	if (h.status == WIRE_E_VERSION || h.version != WIRE_VERSION) {
		snprintf(err, errlen, "%s: dlm-memserver speaks protocol version %u, dlmd %u: run matching versions",
			 l->conn->name, h.version, WIRE_VERSION);
		return -EPROTO;
	}
	if (h.status || h.op != (WIRE_OP_HELLO | WIRE_OP_REPLY) ||
	    h.len != WIRE_HELLO_SIZE) {
		snprintf(err, errlen, "%s: bad hello reply (status %u: %s)",
			 l->conn->name, h.status, wire_status_str(h.status));
		return -EPROTO;
	}
	r = wire_recv(l->fd, payload, sizeof(payload), NULL);
	if (r) {
		snprintf(err, errlen, "%s: hello: %s", l->conn->name, strerror(-r));
		return r;
	}
	wire_hello_decode(&w, payload);
	*size = w.size;
	return 0;
}

static void tcp_free(struct tconn *c)
{
	int i;

	for (i = 0; i < TCP_LANES; i++) {
		if (c->lane[i].fd >= 0)
			close(c->lane[i].fd);
		wire_pipe_close(&c->lane[i].pipe);
		if (c->lane[i].ring)
			munmap(c->lane[i].ring, TCP_RING_SIZE);
		pthread_mutex_destroy(&c->lane[i].lock);
		pthread_cond_destroy(&c->lane[i].tx_cv);
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* Ask L's threads to end and wait for them; 0 threads left to join. */
static void lane_stop_threads(struct tlane *l)
{
	pthread_mutex_lock(&l->lock);
	l->stopping = 1;
	pthread_cond_broadcast(&l->tx_cv);
	pthread_mutex_unlock(&l->lock);
	shutdown(l->fd, SHUT_RDWR);
	if (l->threads) {
		pthread_join(l->tx, NULL);
		pthread_join(l->rx, NULL);
		l->threads = 0;
	}
}

/*
 * Name L's threads for ps -L, top -H, perf and /proc/PID/task/TID/comm:
 * tcpS-w-tx, tcpS-r0-rx, ... for the write lane (w) and read lanes (r0,
 * r1) of server S (the memfile's servers from 0; within a mirrored pair,
 * the transport's index of the side).  Best effort.
 */
static void lane_name_threads(const struct tconn *c, const struct tlane *l)
{
	unsigned int i = (unsigned int)(l - c->lane) % TCP_LANES;
	char name[16];

	if (i == LANE_WRITE)
		snprintf(name, sizeof(name), "tcp%u-w-tx", c->opts.index % 1000);
	else
		snprintf(name, sizeof(name), "tcp%u-r%u-tx", c->opts.index % 1000,
			 i - LANE_READ0);
	pthread_setname_np(l->tx, name);
	name[strlen(name) - 2] = 'r';		/* ...-rx */
	pthread_setname_np(l->rx, name);
}

/* Connect lane L of C and greet the server (its size to *SIZE). */
static int lane_open(struct tconn *c, struct tlane *l,
		     const struct netaddr *addr, uint64_t *size,
		     char *err, size_t errlen)
{
	const struct transport_opts *opts = &c->opts;
	struct timeval tv = {
		.tv_sec = opts->io_timeout_ms / 1000,
		.tv_usec = (opts->io_timeout_ms % 1000) * 1000,
	};
	int r;

	l->fd = net_connect(addr, (int)opts->connect_timeout_ms, err, errlen);
	if (l->fd < 0)
		return -ECONNREFUSED;
	/* A server that stops answering is dead after the I/O timeout. */
	if (opts->io_timeout_ms) {
		setsockopt(l->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(l->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	r = hello(l, size, err, errlen);
	if (r)
		return r;
	l->next_tag = 1;
	r = pthread_create(&l->tx, NULL, tx_main, l);
	if (r)
		goto fail;
	r = pthread_create(&l->rx, NULL, rx_main, l);
	if (r)
		goto stop_tx;
	l->threads = 1;
	lane_name_threads(c, l);
	return 0;

stop_tx:
	pthread_mutex_lock(&l->lock);
	l->stopping = 1;
	pthread_cond_broadcast(&l->tx_cv);
	pthread_mutex_unlock(&l->lock);
	pthread_join(l->tx, NULL);
fail:
	snprintf(err, errlen, "%s: cannot start threads: %s", c->name,
		 strerror(r));
	return -r;
}

static int tcp_open(struct tconn **out, const struct netaddr *addr,
		    const struct transport_opts *opts, uint64_t *size,
		    char *err, size_t errlen)
{
	struct tconn *c = calloc(1, sizeof(*c));
	uint64_t lane_size;
	int i, r = 0;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->opts = *opts;
	pthread_mutex_init(&c->lock, NULL);
	netaddr_str(addr, c->name, sizeof(c->name));
	for (i = 0; i < TCP_LANES; i++) {
		c->lane[i].conn = c;
		c->lane[i].fd = -1;
		c->lane[i].pipe = (struct wire_pipe)WIRE_PIPE_INIT;
		pthread_mutex_init(&c->lane[i].lock, NULL);
		pthread_cond_init(&c->lane[i].tx_cv, NULL);
	}
	/* Without a ring (no memory), every WRITE is copied into the socket. */
	c->lane[LANE_WRITE].ring = mmap(NULL, TCP_RING_SIZE,
					PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->lane[LANE_WRITE].ring == MAP_FAILED)
		c->lane[LANE_WRITE].ring = NULL;
	else	/* lent pages stay ours: no copy-on-write after a fork */
		madvise(c->lane[LANE_WRITE].ring, TCP_RING_SIZE, MADV_DONTFORK);
	for (i = 0; i < TCP_LANES && !r; i++) {
		r = lane_open(c, &c->lane[i], addr, &lane_size, err, errlen);
		if (!r && !i)
			*size = lane_size;
	}
	if (r) {
		while (i-- > 0)
			lane_stop_threads(&c->lane[i]);
		tcp_free(c);
		return r;
	}
	*out = c;
	return 0;
}

static int overlaps(const struct dlm_xfer *a, const struct dlm_xfer *b)
{
	return a->remote_off < b->remote_off + b->len &&
	       b->remote_off < a->remote_off + a->len;
}

/* Is a WRITE overlapping X queued or unanswered on L?  L locked. */
static int write_pending(const struct tlane *l, const struct dlm_xfer *x)
{
	const struct dlm_xfer *lists[2] = { l->f_head, l->q_head }, *w;
	int i;

	for (i = 0; i < 2; i++)
		for (w = lists[i]; w; w = w->next)
			if (w->op == XFER_WRITE && overlaps(w, x))
				return 1;
	return 0;
}

/* Queue or send X on L, locked; returns with the lock dropped. */
static void lane_submit(struct tlane *l, struct dlm_xfer *x)
{
	char why[128];
	int r;

	if (l->dead || l->stopping) {
		pthread_mutex_unlock(&l->lock);
		x->done(x, -EIO);
		return;
	}
	__atomic_fetch_add(&l->pending, x->len, __ATOMIC_RELAXED);
	/*
	 * No receiver sends, on its own connection or another's (a transfer
	 * a completion re-submits): a send that blocks on a full socket would
	 * wait for a server that waits for a receiver, maybe this one.
	 */
	if (l->q_head || l->sending || in_receiver ||
	    (x->op == XFER_WRITE && x->len > TCP_INLINE_MAX)) {
		xfer_list_append(&l->q_head, &l->q_tail, x);
		pthread_cond_signal(&l->tx_cv);
		pthread_mutex_unlock(&l->lock);
		return;
	}
	l->sending = 1;
	r = send_one(l, x, why, sizeof(why));
	sent(l, r, why);
	pthread_mutex_unlock(&l->lock);
}

/* The read lane of C with the fewest bytes pending (read unlocked). */
static struct tlane *read_lane(struct tconn *c)
{
	struct tlane *best = &c->lane[LANE_READ0];
	uint64_t least = UINT64_MAX, p;
	int i;

	for (i = LANE_READ0; i < TCP_LANES; i++) {
		p = __atomic_load_n(&c->lane[i].pending, __ATOMIC_RELAXED);
		if (p < least) {
			least = p;
			best = &c->lane[i];
		}
	}
	return best;
}

static void tcp_submit(struct tconn *c, struct dlm_xfer *x)
{
	struct tlane *w = &c->lane[LANE_WRITE], *rd;

	pthread_mutex_lock(&w->lock);
	if (x->op == XFER_WRITE || write_pending(w, x)) {
		lane_submit(w, x);	/* in order behind the WRITEs */
		return;
	}
	/*
	 * Every WRITE submitted before X has been answered, so the server
	 * has stored it: X may go its own way.
	 */
	pthread_mutex_unlock(&w->lock);
	rd = read_lane(c);
	pthread_mutex_lock(&rd->lock);
	lane_submit(rd, x);
}

static int tcp_alive(struct tconn *c)
{
	int alive;

	pthread_mutex_lock(&c->lock);
	alive = !c->dying;
	pthread_mutex_unlock(&c->lock);
	return alive;
}

static void tcp_stop(struct tconn *c)
{
	struct dlm_xfer *all;
	struct tlane *l;
	int i;

	pthread_mutex_lock(&c->lock);
	c->stopping = 1;
	pthread_mutex_unlock(&c->lock);
	for (i = 0; i < TCP_LANES; i++)
		lane_stop_threads(&c->lane[i]);
	for (i = 0; i < TCP_LANES; i++) {
		l = &c->lane[i];
		pthread_mutex_lock(&l->lock);
		while (l->sending)	/* a submitter's own send, failing now */
			pthread_cond_wait(&l->tx_cv, &l->lock);
		all = take_pending(l);
		pthread_mutex_unlock(&l->lock);
		xfer_fail_all(all);
	}
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

// SPDX-License-Identifier: GPL-2.0
/*
 * transport_verbs.c - the verbs transport: one RC queue pair per memory
 * server, pages moved by one-sided RDMA between the server's registered
 * memory and dlmd's frame pool.
 *
 * Setup (open): rdma_cm resolves the server's address to a device, an RC
 * queue pair is connected, and the server's reply (verbs_wire.h) gives the
 * address, rkey and size of its memory.  Once dlmd has mapped the kernel's
 * frame pool, set_pool registers all of it as one memory region, so a
 * swap-in is one RDMA READ from the server's memory straight into the
 * frame that the kernel maps into the program, and a swap-out one RDMA
 * WRITE from the victim's frame: no copy on this side, no CPU on the
 * server.  set_pool may register a few more regions (the mirror's copy
 * buffer, transport_mirror.c); a transfer's buffer must lie in one.
 *
 * submit posts the work request (or queues it while the send queue is
 * full); one thread per connection waits on the completion channel and on
 * the rdma_cm events, completes the transfers in order (an RC send queue
 * completes in posting order) and notices a disconnect, a failed work
 * request or a send queue that makes no progress for the I/O timeout.  A
 * dead connection's queue pair is moved to the error state and the
 * transfers still posted complete with -EIO as the device flushes them:
 * after done() the device no longer touches the frame.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "transport.h"
#include "xfer_list.h"
#include "verbs_util.h"
#include "verbs_wire.h"

#define VERBS_DEPTH		128	/* send queue entries per connection */
#define VERBS_RD_ATOM		16	/* RDMA READs in flight per connection */
#define VERBS_ACK_TIMEOUT	17	/* 4.096 us * 2^17 = 0.5 s per retry */
#define VERBS_FLUSH_WAIT_MS	2000	/* bound on the flush after an error */
#define VERBS_TICK_MS		50
#define VERBS_RESOLVE_MS	1000	/* one try at resolving an address */

struct tconn {
	char name[NETADDR_STR_MAX];
	struct transport_opts opts;

	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_mr *mr[TRANSPORT_MAX_POOLS];	/* the frame pool first */
	unsigned int nmr;
	int connected;

	uint64_t raddr, size;		/* the server's memory */
	uint32_t rkey, max_io;
	unsigned int depth;

	pthread_mutex_t lock;
	struct dlm_xfer *q_head, *q_tail;	/* waiting for a send slot */
	struct dlm_xfer *f_head, *f_tail;	/* posted, completion order */
	unsigned int posted;
	int dying, dead, stopping, thread;
	struct timespec progress;	/* last completion, or first post */
	struct timespec died;
	int wake[2];
	pthread_t thr;
};

static long ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000 +
	       (now.tv_nsec - t->tv_nsec) / 1000000;
}

static void qp_to_error(struct tconn *c)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (c->id && c->id->qp)
		ibv_modify_qp(c->id->qp, &a, IBV_QP_STATE);
}

/*
 * The connection failed: the owner told once, first (so that its log
 * names this reason, not a transfer failing because of it), then dead:
 * the queued transfers failed now and the posted ones flushed (the
 * thread completes them).
 */
static void verbs_die(struct tconn *c, const char *why)
{
	struct dlm_xfer *queued;
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
	clock_gettime(CLOCK_MONOTONIC, &c->died);
	queued = c->q_head;
	c->q_head = c->q_tail = NULL;
	pthread_mutex_unlock(&c->lock);

	qp_to_error(c);
	xfer_fail_all(queued);
}

/* The region BUF, LEN lies in, or NULL. */
static struct ibv_mr *region(struct tconn *c, const void *buf, uint32_t len)
{
	const uint8_t *b = buf;
	unsigned int i;

	for (i = 0; i < c->nmr; i++) {
		const uint8_t *base = c->mr[i]->addr;

		if (b >= base && len <= c->mr[i]->length &&
		    (size_t)(b - base) <= c->mr[i]->length - len)
			return c->mr[i];
	}
	return NULL;
}

/* Post what is queued while the send queue has room; 0 or -errno. */
static int post_locked(struct tconn *c)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct dlm_xfer *x;
	int r;

	while (c->q_head && c->posted < c->depth && !c->dead) {
		x = xfer_list_pop(&c->q_head, &c->q_tail);
		sge = (struct ibv_sge){
			.addr = (uintptr_t)x->buf,
			.length = x->len,
			.lkey = region(c, x->buf, x->len)->lkey,
		};
		wr = (struct ibv_send_wr){
			.wr_id = (uintptr_t)x,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = x->op == XFER_READ ? IBV_WR_RDMA_READ :
						       IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
		};
		wr.wr.rdma.remote_addr = c->raddr + x->remote_off;
		wr.wr.rdma.rkey = c->rkey;
		if (!c->posted)
			clock_gettime(CLOCK_MONOTONIC, &c->progress);
		r = ibv_post_send(c->id->qp, &wr, &bad);
		if (r) {
			/* Not posted: back at the head, failed by the caller. */
			x->next = c->q_head;
			c->q_head = x;
			if (!c->q_tail)
				c->q_tail = x;
			return -r;
		}
		xfer_list_append(&c->f_head, &c->f_tail, x);
		c->posted++;
	}
	return 0;
}

static void post_or_die(struct tconn *c)
{
	char why[128];
	int r;

	pthread_mutex_lock(&c->lock);
	r = post_locked(c);
	pthread_mutex_unlock(&c->lock);
	if (r) {
		snprintf(why, sizeof(why), "ibv_post_send: %s", strerror(-r));
		verbs_die(c, why);
	}
}

/* Complete what the CQ holds; -1 when a completion made no sense. */
static int reap(struct tconn *c)
{
	struct ibv_wc wc[16];
	struct dlm_xfer *x;
	char why[160];
	int i, n, dead;

	while ((n = ibv_poll_cq(c->cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			pthread_mutex_lock(&c->lock);
			x = xfer_list_pop(&c->f_head, &c->f_tail);
			if (x && (uintptr_t)x == wc[i].wr_id) {
				c->posted--;
				clock_gettime(CLOCK_MONOTONIC, &c->progress);
			}
			dead = c->dead;
			pthread_mutex_unlock(&c->lock);
			if (!x || (uintptr_t)x != wc[i].wr_id) {
				/* Never happens with an RC queue pair. */
				snprintf(why, sizeof(why),
					 "completion out of order (wr_id %#" PRIx64 ")",
					 (uint64_t)wc[i].wr_id);
				log_error("verbs transport: bad completion", "server=%s why=\"%s\"",
					  c->name, why);
				if (x)
					x->done(x, -EIO);
				verbs_die(c, why);
				return -1;
			}
			if (wc[i].status == IBV_WC_SUCCESS) {
				x->done(x, 0);
				continue;
			}
			/*
			 * A flush we did not cause (dead is not set) means
			 * the device put the queue pair in error itself, e.g.
			 * when its port went down.
			 */
			if (!dead) {
				snprintf(why, sizeof(why), "RDMA %s failed: %s (vendor error %#x)",
					 x->op == XFER_READ ? "READ" : "WRITE",
					 ibv_wc_status_str(wc[i].status),
					 wc[i].vendor_err);
				verbs_die(c, why);
			}
			x->done(x, -EIO);
		}
	}
	if (n < 0) {
		verbs_die(c, "ibv_poll_cq failed");
		return -1;
	}
	post_or_die(c);
	return 0;
}

static void cm_event(struct tconn *c)
{
	struct rdma_cm_event *ev;
	char why[128];

	if (verbs_next_event(c->ec, 0, &ev))
		return;
	switch (ev->event) {
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		snprintf(why, sizeof(why), "%s",
			 ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL ?
			 "the RDMA device was removed" :
			 "the memory server disconnected");
		rdma_ack_cm_event(ev);
		verbs_die(c, why);
		return;
	default:
		log_debug("rdma_cm event", "server=%s event=%s", c->name,
			  rdma_event_str(ev->event));
	}
	rdma_ack_cm_event(ev);
}

static void *verbs_main(void *arg)
{
	struct tconn *c = arg;
	struct pollfd p[3] = {
		{ .fd = c->ch->fd, .events = POLLIN },
		{ .fd = c->ec->fd, .events = POLLIN },
		{ .fd = c->wake[0], .events = POLLIN },
	};
	struct ibv_cq *cq;
	struct dlm_xfer *left;
	unsigned int posted;
	int stopping, dead;
	void *cq_ctx;
	char why[96];
	long idle;

	for (;;) {
		pthread_mutex_lock(&c->lock);
		posted = c->posted;
		stopping = c->stopping;
		dead = c->dead;
		idle = posted ? ms_since(&c->progress) : 0;
		pthread_mutex_unlock(&c->lock);

		if ((stopping || dead) && !posted) {
			if (stopping)
				break;
		} else if ((stopping || dead) && ms_since(&c->died) >
			   VERBS_FLUSH_WAIT_MS) {
			/* The device does not flush: give up on it. */
			pthread_mutex_lock(&c->lock);
			left = c->f_head;
			c->f_head = c->f_tail = NULL;
			c->posted = 0;
			pthread_mutex_unlock(&c->lock);
			log_error("verbs transport: the device did not flush the posted transfers",
				  "server=%s posted=%u", c->name, posted);
			xfer_fail_all(left);
			continue;
		} else if (!dead && c->opts.io_timeout_ms &&
			   idle > (long)c->opts.io_timeout_ms) {
			snprintf(why, sizeof(why),
				 "no completion within the I/O timeout (%u ms)",
				 c->opts.io_timeout_ms);
			verbs_die(c, why);
			continue;
		}

		if (poll(p, 3, VERBS_TICK_MS) < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN &&
		    !ibv_get_cq_event(c->ch, &cq, &cq_ctx)) {
			ibv_ack_cq_events(cq, 1);
			ibv_req_notify_cq(cq, 0);
		}
		/* Reap every tick too: completions may beat the notify. */
		reap(c);
		if (p[1].revents & POLLIN)
			cm_event(c);
		if (p[2].revents & POLLIN) {
			char b[16];

			if (read(c->wake[0], b, sizeof(b)) < 0)
				continue;
		}
	}
	return NULL;
}

static void verbs_free(struct tconn *c)
{
	while (c->nmr)
		ibv_dereg_mr(c->mr[--c->nmr]);
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->ch)
		ibv_destroy_comp_channel(c->ch);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->ec)
		rdma_destroy_event_channel(c->ec);
	if (c->wake[0] >= 0)
		close(c->wake[0]);
	if (c->wake[1] >= 0)
		close(c->wake[1]);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/*
 * Wait up to TIMEOUT_MS for event WANT; anything else goes to ERR.  0, or
 * -EAGAIN when an address resolution timed out, or another -errno.
 */
static int wait_event(struct tconn *c, enum rdma_cm_event_type want,
		      const char *step, int timeout_ms,
		      char *err, size_t errlen)
{
	struct rdma_cm_event *ev;
	int r;

	r = verbs_next_event(c->ec, timeout_ms, &ev);
	if (r) {
		snprintf(err, errlen, "%s: %s: %s", c->name, step,
			 r == -ETIMEDOUT ? "no answer in time" : strerror(-r));
		return r;
	}
	if (ev->event == want) {
		rdma_ack_cm_event(ev);
		return 0;
	}
	r = -EHOSTUNREACH;
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_ERROR:
		if (ev->status == -ETIMEDOUT || ev->status == -ENODATA) {
			r = -EAGAIN;	/* the neighbour may answer later */
			snprintf(err, errlen, "%s: no answer to neighbour discovery (%s, status %d): is the address right and the link up? (ip neigh)",
				 c->name, rdma_event_str(ev->event), ev->status);
			break;
		}
		snprintf(err, errlen, "%s: no RDMA device reaches it (%s, status %d): the interface toward it needs an RDMA device (ibv_devices; rdma link add rxe0 type rxe netdev IFACE); with soft-RoCE between two devices of one host use link-local IPv6 (fe80::...%%IFACE)",
			 c->name, rdma_event_str(ev->event), ev->status);
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		snprintf(err, errlen, "%s: no RDMA route to it (%s, status %d): check the interface and its neighbours (ip route, ip neigh)",
			 c->name, rdma_event_str(ev->event), ev->status);
		break;
	default:
		snprintf(err, errlen, "%s: %s: unexpected %s (status %d)",
			 c->name, step, rdma_event_str(ev->event), ev->status);
	}
	rdma_ack_cm_event(ev);
	return r;
}

/*
 * The device and neighbour toward DST.  Tried again each second within
 * the connect timeout: the first try can time out while the neighbour is
 * being discovered.  0 or -errno.
 */
static int resolve_addr(struct tconn *c, struct sockaddr_storage *dst,
			char *err, size_t errlen)
{
	struct timespec t0;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)dst,
				      VERBS_RESOLVE_MS)) {
			snprintf(err, errlen, "%s: cannot resolve it to an RDMA device: %s (%s)",
				 c->name, strerror(errno), VERBS_NODEV_HINT);
			return -errno;
		}
		r = wait_event(c, RDMA_CM_EVENT_ADDR_RESOLVED, "address",
			       VERBS_RESOLVE_MS + 1000, err, errlen);
		if (r != -EAGAIN ||
		    ms_since(&t0) + VERBS_RESOLVE_MS > (long)c->opts.connect_timeout_ms)
			return r;
		log_debug("verbs transport: address resolution again",
			  "server=%s", c->name);
	}
}

/* The server's answer to rdma_connect: 0 with the region in C, or -errno. */
static int hello(struct tconn *c, uint64_t *size, char *err, size_t errlen)
{
	struct verbs_hello_rep rep = { 0 };
	struct rdma_cm_event *ev;
	int r, established;

	r = verbs_next_event(c->ec, (int)c->opts.connect_timeout_ms, &ev);
	if (r) {
		snprintf(err, errlen, "%s: connect: %s", c->name,
			 r == -ETIMEDOUT ? "no answer in time (is dlm-memserver --transport verbs running there?)" :
			 strerror(-r));
		return r;
	}
	established = ev->event == RDMA_CM_EVENT_ESTABLISHED;
	if ((established || ev->event == RDMA_CM_EVENT_REJECTED) &&
	    ev->param.conn.private_data_len >= VERBS_REP_SIZE)
		verbs_rep_decode(&rep, ev->param.conn.private_data);
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
	case RDMA_CM_EVENT_REJECTED:
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		snprintf(err, errlen, "%s: connect: %s (status %d): is dlm-memserver --transport verbs running there?",
			 c->name, rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
		return -ECONNREFUSED;
	default:
		snprintf(err, errlen, "%s: connect: unexpected %s (status %d)",
			 c->name, rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
		return -EPROTO;
	}
	rdma_ack_cm_event(ev);
	if (rep.magic != VERBS_MAGIC) {
		snprintf(err, errlen, established ?
			 "%s: not a dlm-memserver (no dlm reply in the connection's private data)" :
			 "%s: connection refused: is dlm-memserver --transport verbs listening there?",
			 c->name);
		return established ? -EPROTO : -ECONNREFUSED;
	}
	if (rep.version != VERBS_VERSION || rep.status == VERBS_E_VERSION) {
		snprintf(err, errlen, "%s: dlm-memserver speaks verbs protocol version %u, dlmd %u: run matching versions",
			 c->name, rep.version, VERBS_VERSION);
		return -EPROTO;
	}
	if (!established || rep.status != VERBS_OK) {
		snprintf(err, errlen, "%s: the server refused: %s%s", c->name,
			 verbs_status_str(rep.status),
			 rep.status == VERBS_E_NOMEM ? " (see its log: raise its locked-memory limit)" :
			 rep.status == VERBS_E_BUSY ? " (raise its --max-clients, or find who holds its connections)" : "");
		return -ECONNREFUSED;
	}
	c->raddr = rep.addr;
	c->rkey = rep.rkey;
	c->size = rep.size;
	c->max_io = rep.max_io ? rep.max_io : WIRE_MAX_IO;
	*size = rep.size;
	return 0;
}

static int setup_qp(struct tconn *c, char *err, size_t errlen)
{
	const char *dev = ibv_get_device_name(c->id->verbs->device);
	struct ibv_qp_init_attr qa = { 0 };
	struct ibv_device_attr da;
	int r;

	r = verbs_check_caps(c->id->verbs, &da, err, errlen);
	if (r)
		return r;
	c->depth = VERBS_DEPTH;
	if ((int)c->depth > da.max_qp_wr)
		c->depth = (unsigned int)da.max_qp_wr;
	if ((int)c->depth > da.max_cqe)
		c->depth = (unsigned int)da.max_cqe;
	c->pd = ibv_alloc_pd(c->id->verbs);
	c->ch = c->pd ? ibv_create_comp_channel(c->id->verbs) : NULL;
	c->cq = c->ch ? ibv_create_cq(c->id->verbs, (int)c->depth, c, c->ch, 0) :
		NULL;
	if (!c->cq || ibv_req_notify_cq(c->cq, 0)) {
		snprintf(err, errlen, "%s: %s: cannot allocate a %s: %s", c->name,
			 dev, !c->pd ? "protection domain" :
			 !c->ch ? "completion channel" : "completion queue",
			 strerror(errno));
		return -ENOMEM;
	}
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 1;
	qa.cap.max_send_wr = c->depth;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(c->id, c->pd, &qa)) {
		snprintf(err, errlen, "%s: %s: cannot create an RC queue pair of %u entries: %s",
			 c->name, dev, c->depth, strerror(errno));
		return -errno;
	}
	c->depth = qa.cap.max_send_wr < c->depth ? qa.cap.max_send_wr :
						   c->depth;
	return (int)(da.max_qp_init_rd_atom < VERBS_RD_ATOM ?
		     da.max_qp_init_rd_atom : VERBS_RD_ATOM);
}

static int verbs_open(struct tconn **out, const struct netaddr *addr,
		      const struct transport_opts *opts, uint64_t *size,
		      char *err, size_t errlen)
{
	struct sockaddr_storage dst;
	struct rdma_conn_param cp = { 0 };
	struct verbs_hello_req req = {
		.magic = VERBS_MAGIC, .version = VERBS_VERSION,
		.want = opts->want_size,
	};
	uint8_t priv[VERBS_REQ_SIZE];
	uint8_t ack = VERBS_ACK_TIMEOUT;
	char tname[16];
	struct tconn *c;
	int r, tmo = (int)opts->connect_timeout_ms;

	r = verbs_check_devices(err, errlen);
	if (r)
		return r;
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->opts = *opts;
	c->wake[0] = c->wake[1] = -1;
	pthread_mutex_init(&c->lock, NULL);
	netaddr_str(addr, c->name, sizeof(c->name));

	r = verbs_sockaddr(addr, &dst, err, errlen);
	if (r)
		goto free;
	c->ec = rdma_create_event_channel();
	if (!c->ec || rdma_create_id(c->ec, &c->id, c, RDMA_PS_TCP)) {
		r = -errno;
		snprintf(err, errlen, "%s: rdma_cm: %s (is the rdma_ucm module loaded? modprobe rdma_ucm)",
			 c->name, strerror(errno));
		goto free;
	}
	r = resolve_addr(c, &dst, err, errlen);
	if (r)
		goto free;
	if (rdma_resolve_route(c->id, tmo)) {
		r = -errno;
		snprintf(err, errlen, "%s: route: %s", c->name, strerror(errno));
		goto free;
	}
	r = wait_event(c, RDMA_CM_EVENT_ROUTE_RESOLVED, "route", tmo, err,
		       errlen);
	if (r)
		goto free;
	r = setup_qp(c, err, errlen);
	if (r < 0)
		goto free;
	/* A dead peer fails the work requests after 7 retries of this. */
	rdma_set_option(c->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
			&ack, sizeof(ack));
	verbs_req_encode(priv, &req);
	cp.private_data = priv;
	cp.private_data_len = sizeof(priv);
	cp.initiator_depth = (uint8_t)r;
	cp.responder_resources = 0;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if (rdma_connect(c->id, &cp)) {
		r = -errno;
		snprintf(err, errlen, "%s: rdma_connect: %s", c->name,
			 strerror(errno));
		goto free;
	}
	r = hello(c, size, err, errlen);
	if (r)
		goto free;
	c->connected = 1;
	if (pipe2(c->wake, O_CLOEXEC | O_NONBLOCK)) {
		r = -errno;
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto free;
	}
	r = pthread_create(&c->thr, NULL, verbs_main, c);
	if (r) {
		snprintf(err, errlen, "%s: cannot start a thread: %s", c->name,
			 strerror(r));
		r = -r;
		goto free;
	}
	c->thread = 1;
	snprintf(tname, sizeof(tname), "verbs%u", c->opts.index);
	pthread_setname_np(c->thr, tname);
	log_info("verbs connection", "server=%s device=%s size=%" PRIu64 " depth=%u",
		 c->name, ibv_get_device_name(c->id->verbs->device), c->size,
		 c->depth);
	*out = c;
	return 0;
free:
	if (c->connected)
		rdma_disconnect(c->id);
	verbs_free(c);
	return r;
}

static int verbs_set_pool(struct tconn *c, void *base, uint64_t len,
			  char *err, size_t errlen)
{
	struct ibv_mr *mr;
	int e;

	if (c->nmr == TRANSPORT_MAX_POOLS) {
		snprintf(err, errlen, "%s: more than %d regions registered",
			 c->name, TRANSPORT_MAX_POOLS);
		return -ENOSPC;
	}
	mr = ibv_reg_mr(c->pd, base, len, IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		e = errno;
		snprintf(err, errlen, "%s: cannot register %s (%" PRIu64 " MB) with %s for RDMA: %s: %s",
			 c->name, c->nmr ? "a copy buffer" : "the frame pool",
			 len >> 20, ibv_get_device_name(c->id->verbs->device),
			 strerror(e), verbs_reg_hint(e));
		return -e;
	}
	/* Before submit may look at it: set_pool precedes the transfers. */
	pthread_mutex_lock(&c->lock);
	c->mr[c->nmr++] = mr;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static void verbs_submit(struct tconn *c, struct dlm_xfer *x)
{
	const char *why = NULL;

	if (!x->len) {
		x->done(x, 0);
		return;
	}
	pthread_mutex_lock(&c->lock);
	if (c->dead || c->stopping) {
		pthread_mutex_unlock(&c->lock);
		x->done(x, -EIO);
		return;
	}
	if (!c->nmr)
		why = "no frame pool registered";
	else if (!region(c, x->buf, x->len))
		why = "buffer outside the frame pool";
	else if (x->len > c->max_io)
		why = "larger than the server's max_io";
	else if (x->remote_off > c->size || x->len > c->size - x->remote_off)
		why = "outside the server's memory";
	if (why) {
		pthread_mutex_unlock(&c->lock);
		log_error("verbs transport: transfer refused", "server=%s op=%s offset=%"
			  PRIu64 " len=%u why=\"%s\"", c->name,
			  x->op == XFER_WRITE ? "write" : "read",
			  x->remote_off, x->len, why);
		x->done(x, -EIO);
		return;
	}
	xfer_list_append(&c->q_head, &c->q_tail, x);
	pthread_mutex_unlock(&c->lock);
	post_or_die(c);
}

static int verbs_alive(struct tconn *c)
{
	int alive;

	pthread_mutex_lock(&c->lock);
	alive = !c->dead;
	pthread_mutex_unlock(&c->lock);
	return alive;
}

static void verbs_stop(struct tconn *c)
{
	struct dlm_xfer *all;

	pthread_mutex_lock(&c->lock);
	if (c->stopping && !c->thread) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	c->stopping = 1;
	if (!c->dead)
		clock_gettime(CLOCK_MONOTONIC, &c->died);
	all = c->q_head;
	c->q_head = c->q_tail = NULL;
	pthread_mutex_unlock(&c->lock);
	xfer_fail_all(all);

	/* Flush what is posted; the thread completes it, then ends. */
	qp_to_error(c);
	if (c->thread) {
		if (write(c->wake[1], "x", 1) < 0)
			log_debug("verbs transport: wake-up lost", "server=%s",
				  c->name);
		pthread_join(c->thr, NULL);
		c->thread = 0;
	}
	if (c->connected) {
		rdma_disconnect(c->id);
		c->connected = 0;
	}
	pthread_mutex_lock(&c->lock);
	all = c->f_head;
	c->f_head = c->f_tail = NULL;
	c->posted = 0;
	pthread_mutex_unlock(&c->lock);
	xfer_fail_all(all);
}

static void verbs_close(struct tconn *c)
{
	if (!c)
		return;
	verbs_stop(c);
	verbs_free(c);
}

const struct transport_ops transport_verbs = {
	.name = "verbs",
	.probe = verbs_check_devices,
	.open = verbs_open,
	.set_pool = verbs_set_pool,
	.submit = verbs_submit,
	.alive = verbs_alive,
	.stop = verbs_stop,
	.close = verbs_close,
};

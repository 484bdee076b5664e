// SPDX-License-Identifier: GPL-2.0
/*
 * transport_mpi.c - rank 0's side of the mpi transport (dlm_mpi.h,
 * message layout in mpi_priv.h).
 *
 * Every transfer becomes an MPI_Isend of its header plus an MPI_Irecv of
 * the page straight into the frame pool (READ) or an MPI_Isend of the page
 * straight from the pool (WRITE), done when MPI is done with the frame: the
 * server takes messages in order and a READ waits there for the WRITEs
 * over its range, and rank 0 checks the range itself, so a WRITE needs no
 * status back (a server that refused one would end the job).  Who
 * posts depends on the protocol: in as1 the submitting thread (under the
 * lock that serializes MPI calls), in as2 and cs the main thread, which
 * takes them off a queue.  The main thread always completes them, in the
 * order they complete (a server answers a READ while a WRITE of other
 * bytes sent before it is still arriving), and calls done() without the
 * lock held.
 *
 * MPI jobs do not survive the loss of a rank, so a memory server that does
 * not answer within the I/O timeout, or an MPI error, ends the job:
 * dlmd's netlink socket closes, the kernel fails what is outstanding
 * (SIGBUS in the programs) and mpirun reports the failure.  Posted
 * requests are never abandoned while dlmd runs, so a late reply cannot
 * land in a frame that has been given to another page.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mpi_priv.h"
#include "stats.h"
#include "wire.h"

#define ACTIVE_SLEEP_MAX_US	50	/* between tests while transfers fly */
#define CONN_INFLIGHT_MAX	1024	/* posted per server; more wait */

struct mop {
	struct mop *next;
	struct tconn *c;
	struct dlm_xfer *x;
	uint8_t hdr[WIRE_HDR_SIZE];
	int32_t status;
	int nreq;
	MPI_Request req[2];
	uint64_t t0;
};

struct tconn {
	int rank;
	char name[32];
	struct transport_opts opts;
	uint64_t size;			/* the server's, from its hello */
	unsigned int next_tag;
	unsigned int inflight;
	int stopping;
	struct mop *head, *tail;	/* posted, in submission order */
};

static struct {
	pthread_mutex_t lock;		/* all below, and every MPI call
					 * after dlm_mpi_init in as1 */
	pthread_cond_t cv;
	struct mop *q_head, *q_tail;	/* submitted, not posted */
	struct tconn **conns;
	unsigned int nconns;
	unsigned int nactive;		/* posted, not completed */
	int stop;
} w = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cv = PTHREAD_COND_INITIALIZER,
};

static void mop_append(struct mop **head, struct mop **tail, struct mop *m)
{
	m->next = NULL;
	if (*tail)
		(*tail)->next = m;
	else
		*head = m;
	*tail = m;
}

static const char *mpi_err(int r, char *buf)
{
	int len = 0;

	MPI_Error_string(r, buf, &len);
	buf[len] = '\0';
	return buf;
}

static void fatal_mpi(const char *what, const struct tconn *c, int r)
{
	char e[MPI_MAX_ERROR_STRING + 1], why[MPI_MAX_ERROR_STRING + 128];

	snprintf(why, sizeof(why), "%s %s: %s", what, c ? c->name : "",
		 mpi_err(r, e));
	dlm_mpi_abort(why);
}

/* Post M's requests.  Lock held, in a thread allowed to call MPI. */
static void post(struct mop *m)
{
	struct tconn *c = m->c;
	struct dlm_xfer *x = m->x;
	int tag = MPI_TAG_XFER_BASE + (int)c->next_tag, r;
	struct wire_hdr h;

	c->next_tag = (c->next_tag + 1) % MPI_TAG_XFER_SPAN;
	h = wire_req(x->op == XFER_WRITE ? WIRE_OP_WRITE : WIRE_OP_READ,
		     x->len, x->remote_off, (uint64_t)tag);
	wire_hdr_encode(m->hdr, &h);
	m->nreq = 0;
	r = MPI_Isend(m->hdr, WIRE_HDR_SIZE, MPI_BYTE, c->rank, MPI_TAG_HDR,
		      MPI_COMM_WORLD, &m->req[m->nreq++]);
	if (r == MPI_SUCCESS && x->op == XFER_READ)
		r = MPI_Irecv(x->buf, (int)x->len, MPI_BYTE, c->rank, tag,
			      MPI_COMM_WORLD, &m->req[m->nreq++]);
	if (r == MPI_SUCCESS && x->op == XFER_WRITE)
		r = MPI_Isend(x->buf, (int)x->len, MPI_BYTE, c->rank, tag,
			      MPI_COMM_WORLD, &m->req[m->nreq++]);
	if (r != MPI_SUCCESS)
		fatal_mpi("posting a transfer to", c, r);
	m->t0 = now_ns();
	mop_append(&c->head, &c->tail, m);
	c->inflight++;
	w.nactive++;
}

/*
 * 1 if M's requests have all completed (its result in m->status): a READ's
 * page has arrived, or a WRITE's frame is MPI's no more.
 */
static int test(struct mop *m)
{
	MPI_Status st[2];
	int flag = 0, count = 0, r;

	r = MPI_Testall(m->nreq, m->req, &flag, st);
	if (r != MPI_SUCCESS)
		fatal_mpi("testing a transfer to", m->c, r);
	if (!flag)
		return 0;
	if (m->x->op == XFER_READ) {
		MPI_Get_count(&st[1], MPI_BYTE, &count);
		m->status = count == (int)m->x->len ? WIRE_OK : WIRE_E_RANGE;
	} else {
		m->status = WIRE_OK;
	}
	return 1;
}

/* Post what is queued and may go now.  Lock held, main thread. */
static void post_queued(void)
{
	struct mop *m;

	while ((m = w.q_head)) {
		if (mpi_info.proto == DLM_MPI_CS && w.nactive)
			return;		/* one transfer at a time */
		if (m->c->inflight >= CONN_INFLIGHT_MAX)
			return;		/* keep the order: wait */
		w.q_head = m->next;
		if (!w.q_head)
			w.q_tail = NULL;
		post(m);
	}
}

static void finish(struct mop *m)
{
	struct dlm_xfer *x = m->x;
	int32_t status = m->status;

	if (m->status != WIRE_OK)
		log_error("memory server refused a transfer", "server=%s op=%s offset=%"
			  PRIu64 " len=%u status=\"%s\"", m->c->name,
			  x->op == XFER_WRITE ? "write" : "read",
			  x->remote_off, x->len,
			  wire_status_str((uint32_t)status));
	free(m);
	x->done(x, status == WIRE_OK ? 0 : -EIO);
}

/*
 * Completed transfers off the posted lists, which stay oldest first; a
 * transfer older than the I/O timeout ends the job.  Lock held.
 */
static struct mop *reap(void)
{
	struct mop *done = NULL, *dtail = NULL, *m, *last, **pp;
	uint64_t now = now_ns();
	unsigned int i;
	char why[192];

	for (i = 0; i < w.nconns; i++) {
		struct tconn *c = w.conns[i];

		if (!c)
			continue;
		for (pp = &c->head, last = NULL; (m = *pp);) {
			if (!test(m)) {
				last = m;
				pp = &m->next;
				continue;
			}
			*pp = m->next;
			c->inflight--;
			w.nactive--;
			mop_append(&done, &dtail, m);
		}
		c->tail = last;
		m = c->head;
		if (m && c->opts.io_timeout_ms &&
		    now - m->t0 > (uint64_t)c->opts.io_timeout_ms * 1000000ULL) {
			snprintf(why, sizeof(why),
				 "memory server %s did not complete a %s of %u bytes at offset %" PRIu64 " within %u ms",
				 c->name, m->x->op == XFER_WRITE ? "write" : "read",
				 m->x->len, m->x->remote_off, c->opts.io_timeout_ms);
			dlm_mpi_abort(why);
		}
	}
	return done;
}

static void finish_all(struct mop *m)
{
	struct mop *next;

	for (; m; m = next) {
		next = m->next;
		finish(m);
	}
}

void dlm_mpi_progress(void)
{
	unsigned int round = 0;
	struct mop *done;

	pthread_mutex_lock(&w.lock);
	while (!w.stop) {
		post_queued();
		if (!w.nactive) {
			pthread_cond_wait(&w.cv, &w.lock);
			round = 0;
			continue;
		}
		done = reap();
		pthread_mutex_unlock(&w.lock);
		if (done) {
			finish_all(done);
			round = 0;
		} else {
			mpi_backoff(&round, ACTIVE_SLEEP_MAX_US);
		}
		pthread_mutex_lock(&w.lock);
	}
	pthread_mutex_unlock(&w.lock);
}

void dlm_mpi_progress_stop(void)
{
	pthread_mutex_lock(&w.lock);
	w.stop = 1;
	pthread_cond_broadcast(&w.cv);
	pthread_mutex_unlock(&w.lock);
}

/* ---- transport_ops ---------------------------------------------------------- */

/* Blocking exchange with a server at open time: main thread, no lock. */
static int hello(struct tconn *c, uint64_t *size, char *err, size_t errlen)
{
	uint8_t hdr[WIRE_HDR_SIZE], payload[WIRE_HELLO_SIZE];
	struct wire_hdr h = wire_req(WIRE_OP_HELLO, 0, c->opts.want_size,
				     MPI_TAG_XFER_BASE);
	char e[MPI_MAX_ERROR_STRING + 1];
	uint64_t t0 = now_ns();
	unsigned int round = 0;
	MPI_Request req[2];
	MPI_Status st[2];
	int flag = 0, count = 0, r;
	struct wire_hello hw;

	wire_hdr_encode(hdr, &h);
	r = MPI_Isend(hdr, sizeof(hdr), MPI_BYTE, c->rank, MPI_TAG_HDR,
		      MPI_COMM_WORLD, &req[0]);
	if (r == MPI_SUCCESS)
		r = MPI_Irecv(payload, sizeof(payload), MPI_BYTE, c->rank,
			      MPI_TAG_XFER_BASE, MPI_COMM_WORLD, &req[1]);
	while (r == MPI_SUCCESS) {
		r = MPI_Testall(2, req, &flag, st);
		if (r != MPI_SUCCESS || flag)
			break;
		if (now_ns() - t0 > (uint64_t)c->opts.connect_timeout_ms * 1000000ULL)
			dlm_mpi_abort("a memory server rank did not answer hello: is every rank a dlmd of the same build?");
		mpi_backoff(&round, 1000);
	}
	if (r != MPI_SUCCESS) {
		snprintf(err, errlen, "%s: hello: %s", c->name, mpi_err(r, e));
		return -EIO;
	}
	MPI_Get_count(&st[1], MPI_BYTE, &count);
	if (count != WIRE_HELLO_SIZE) {
		snprintf(err, errlen, "%s: bad hello reply (%d bytes)", c->name,
			 count);
		return -EPROTO;
	}
	wire_hello_decode(&hw, payload);
	if (!hw.size) {
		snprintf(err, errlen, "%s: could not reserve %" PRIu64 " bytes (see its log): lower its line in the memfile",
			 c->name, c->opts.want_size);
		return -ENOMEM;
	}
	*size = hw.size;
	c->size = hw.size;
	c->next_tag = 1;	/* 0 was the hello's */
	return 0;
}

static int mpi_open(struct tconn **out, const struct netaddr *addr,
		    const struct transport_opts *opts, uint64_t *size,
		    char *err, size_t errlen)
{
	struct tconn *c, **conns;
	int rank = (int)opts->index + 1, r;

	(void)addr;
	if (rank >= mpi_info.size) {
		snprintf(err, errlen, "rank %d: the memfile lists more memory servers than mpirun started ranks (%d): run mpirun -np %u",
			 rank, mpi_info.size, opts->index + 2);
		return -ENOENT;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->rank = rank;
	c->opts = *opts;
	snprintf(c->name, sizeof(c->name), "rank%d", rank);
	r = hello(c, size, err, errlen);
	if (r) {
		free(c);
		return r;
	}
	pthread_mutex_lock(&w.lock);
	if (opts->index >= w.nconns) {
		conns = realloc(w.conns, (opts->index + 1) * sizeof(*conns));
		if (!conns) {
			pthread_mutex_unlock(&w.lock);
			free(c);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		memset(conns + w.nconns, 0,
		       (opts->index + 1 - w.nconns) * sizeof(*conns));
		w.conns = conns;
		w.nconns = opts->index + 1;
	}
	w.conns[opts->index] = c;
	pthread_mutex_unlock(&w.lock);
	*out = c;
	return 0;
}

static void mpi_submit(struct tconn *c, struct dlm_xfer *x)
{
	struct mop *m = calloc(1, sizeof(*m));

	if (!m) {
		x->done(x, -EIO);
		return;
	}
	m->c = c;
	m->x = x;
	if (wire_check_range(x->remote_off, x->len, c->size) != WIRE_OK) {
		/* A server would have to end the job over it: not sent. */
		log_error("a transfer outside the memory server's memory: failed, not sent",
			  "server=%s op=%s offset=%" PRIu64 " len=%u size=%" PRIu64,
			  c->name, x->op == XFER_WRITE ? "write" : "read",
			  x->remote_off, x->len, c->size);
		free(m);
		x->done(x, -EIO);
		return;
	}
	pthread_mutex_lock(&w.lock);
	if (c->stopping) {
		pthread_mutex_unlock(&w.lock);
		free(m);
		x->done(x, -EIO);
		return;
	}
	if (mpi_info.proto == DLM_MPI_AS1 && !w.q_head &&
	    c->inflight < CONN_INFLIGHT_MAX)
		post(m);	/* AS1: the requester sends it itself */
	else
		mop_append(&w.q_head, &w.q_tail, m);
	pthread_cond_signal(&w.cv);
	pthread_mutex_unlock(&w.lock);
}

static int mpi_alive(struct tconn *c)
{
	(void)c;
	return 1;	/* a dead rank ends the job */
}

/*
 * Main thread, progress stopped: what is posted completes (the servers are
 * alive, or the I/O timeout ends the job), what is queued fails.
 */
static void mpi_stop(struct tconn *c)
{
	struct mop *done, *m, **pp, *q = NULL, *qt = NULL;
	unsigned int round = 0;

	pthread_mutex_lock(&w.lock);
	c->stopping = 1;
	for (pp = &w.q_head, w.q_tail = NULL; (m = *pp);) {
		if (m->c == c) {
			*pp = m->next;
			mop_append(&q, &qt, m);
		} else {
			w.q_tail = m;
			pp = &m->next;
		}
	}
	while (c->head) {
		done = reap();
		pthread_mutex_unlock(&w.lock);
		if (done) {
			finish_all(done);
			round = 0;
		} else {
			mpi_backoff(&round, ACTIVE_SLEEP_MAX_US);
		}
		pthread_mutex_lock(&w.lock);
	}
	pthread_mutex_unlock(&w.lock);
	for (m = q; m; m = q) {
		q = m->next;
		m->x->done(m->x, -EIO);
		free(m);
	}
}

static void mpi_close(struct tconn *c)
{
	unsigned int i;

	if (!c)
		return;
	mpi_stop(c);
	pthread_mutex_lock(&w.lock);
	for (i = 0; i < w.nconns; i++)
		if (w.conns[i] == c)
			w.conns[i] = NULL;
	pthread_mutex_unlock(&w.lock);
	free(c);
}

void dlm_mpi_finish(void)
{
	uint8_t hdr[WIRE_HDR_SIZE];
	struct wire_hdr h = wire_req(WIRE_OP_BYE, 0, 0, MPI_TAG_XFER_BASE);
	int i;

	wire_hdr_encode(hdr, &h);
	for (i = 1; i < mpi_info.size; i++)
		MPI_Send(hdr, sizeof(hdr), MPI_BYTE, i, MPI_TAG_HDR,
			 MPI_COMM_WORLD);
	free(w.conns);
	w.conns = NULL;
	w.nconns = 0;
	MPI_Finalize();
}

const struct transport_ops transport_mpi = {
	.name = "mpi",
	.open = mpi_open,
	.submit = mpi_submit,
	.alive = mpi_alive,
	.stop = mpi_stop,
	.close = mpi_close,
};

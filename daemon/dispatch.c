// SPDX-License-Identifier: GPL-2.0
/*
 * dispatch.c - validate requests, place pages, drive transfers
 * (dispatch.h).
 *
 * Every request is checked against what dlmd knows before anything is
 * touched: attributes present, POOL_OFF + LEN inside the pool and aligned,
 * LEN equal to the space's page size, DPN inside the space.  A bad request
 * completes with -EINVAL.  The placement is guarded by one mutex, taken
 * only for bookkeeping, never across I/O.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <linux/dlmem_nl.h>

#include "dispatch.h"
#include "log.h"
#include "placement.h"

struct dserver {
	char *name;			/* a copy: the caller's may go */
	uint64_t capacity;		/* configured, then min(., hello) */
	struct tconn *conn;		/* NULL: never connected */
	int dead;
};

struct dispatch {
	struct dispatch_cfg cfg;
	pthread_mutex_t lock;		/* pl, servers[].dead, stopping */
	struct placement *pl;
	unsigned int nservers;
	struct dserver *servers;
	int stopping;
	atomic_uint_fast64_t warn_nospc, warn_grow, warn_nodata;
};

/* Pages reserved beyond TOTAL - BUDGET for transfers in flight. */
#define SPACE_SLACK_PAGES	4

struct breq;

/* One FETCH or STORE on its way, or one page of a block READ or WRITE. */
struct dreq {
	struct dlm_xfer x;		/* first: container of the xfer */
	struct dispatch *d;
	uint64_t req_id, dpn, t0;
	uint32_t space;
	unsigned int attempts;
	enum st_op op;
	struct pl_loc loc;
	struct breq *parent;		/* block requests: the whole request */
};

/*
 * A block READ or WRITE: one transfer per run of pages contiguous on one
 * server, answered after the last.
 */
struct breq {
	struct dispatch *d;
	uint64_t req_id, t0, ps;
	enum st_op op;
	atomic_uint pending;
	atomic_int status;
	struct dreq pages[];
};

/* Count an occurrence; its number if it is to be logged (the 1st, 2nd,
 * 4th, 8th...), else 0. */
static uint64_t rate_ok(atomic_uint_fast64_t *n)
{
	uint64_t v = atomic_fetch_add(n, 1) + 1;

	return (v & (v - 1)) == 0 ? v : 0;
}

static void finish_flags(struct dispatch *d, uint64_t req_id, enum st_op op,
			 int status, uint64_t t0, uint32_t flags)
{
	stats_record(d->cfg.st, op, status, now_ns() - t0);
	d->cfg.complete(d->cfg.ctx, req_id, status, flags);
}

static void finish(struct dispatch *d, uint64_t req_id, enum st_op op,
		   int status, uint64_t t0)
{
	finish_flags(d, req_id, op, status, t0, 0);
}

struct dispatch *dispatch_create(const struct dispatch_cfg *cfg,
				 unsigned int nservers,
				 const char *const *names,
				 const uint64_t *capacity)
{
	struct dispatch *d = calloc(1, sizeof(*d));
	unsigned int i;

	if (!d)
		return NULL;
	d->servers = calloc(nservers ? nservers : 1, sizeof(*d->servers));
	if (!d->servers) {
		free(d);
		return NULL;
	}
	d->cfg = *cfg;
	d->nservers = nservers;
	pthread_mutex_init(&d->lock, NULL);
	for (i = 0; i < nservers; i++) {
		d->servers[i].name = strdup(names[i]);
		if (!d->servers[i].name)
			goto free_names;
		d->servers[i].capacity = capacity[i];
	}
	return d;

free_names:
	while (i--)
		free(d->servers[i].name);
	pthread_mutex_destroy(&d->lock);
	free(d->servers);
	free(d);
	return NULL;
}

void dispatch_attach(struct dispatch *d, unsigned int i, struct tconn *c,
		     uint64_t size)
{
	struct dserver *s = &d->servers[i];

	s->conn = c;
	if (size < s->capacity) {
		log_warn("memory server holds less than the memfile says; using its size",
			 "rank=%u addr=%s memfile_bytes=%" PRIu64 " server_bytes=%" PRIu64,
			 i + 1, s->name, s->capacity, size);
		s->capacity = size;
	} else if (size > s->capacity) {
		log_info("memory server holds more than the memfile gives dlmd; using the memfile size",
			 "rank=%u addr=%s memfile_bytes=%" PRIu64 " server_bytes=%" PRIu64,
			 i + 1, s->name, s->capacity, size);
	}
	log_info("memory server connected", "rank=%u addr=%s bytes=%" PRIu64,
		 i + 1, s->name, s->capacity);
}

void dispatch_server_dead(void *arg, unsigned int i, const char *why)
{
	struct dispatch *d = arg;
	struct pl_server_info info = { 0 };
	int first, connected;

	pthread_mutex_lock(&d->lock);
	first = !d->servers[i].dead;
	connected = d->servers[i].conn != NULL;
	d->servers[i].dead = 1;
	if (d->pl) {
		pl_server_dead(d->pl, i);
		pl_server_info(d->pl, i, &info);
	}
	pthread_mutex_unlock(&d->lock);
	if (first && !connected)
		log_error("memory server unreachable: its capacity is not used",
			  "rank=%u addr=%s why=\"%s\"", i + 1,
			  d->servers[i].name, why);
	else if (first)
		log_error("memory server dead: its pages fail with EIO, new pages go to the others",
			  "rank=%u addr=%s why=\"%s\" lost_bytes=%" PRIu64,
			  i + 1, d->servers[i].name, why, info.stored);
}

int dispatch_set_pool(struct dispatch *d, uint8_t *pool, uint64_t size,
		      uint32_t cpu_page_size, char *err, size_t errlen)
{
	unsigned int i;
	int r;

	d->cfg.pool = pool;
	d->cfg.pool_size = size;
	d->cfg.cpu_page_size = cpu_page_size;
	if (!d->cfg.tops->set_pool)
		return 0;
	for (i = 0; i < d->nservers; i++) {
		if (!d->servers[i].conn || d->servers[i].dead)
			continue;
		r = d->cfg.tops->set_pool(d->servers[i].conn, pool, size, err,
					  errlen);
		if (r)
			return r;
	}
	return 0;
}

int dispatch_start(struct dispatch *d)
{
	uint64_t *cap = calloc(d->nservers ? d->nservers : 1, sizeof(*cap));
	unsigned int i;

	if (!cap)
		return -ENOMEM;
	if (!d->cfg.cpu_page_size)
		d->cfg.cpu_page_size = 4096;
	for (i = 0; i < d->nservers; i++)
		cap[i] = d->servers[i].capacity;
	pthread_mutex_lock(&d->lock);
	d->pl = pl_create(d->nservers, cap);
	for (i = 0; d->pl && i < d->nservers; i++)
		if (d->servers[i].dead || !d->servers[i].conn)
			pl_server_dead(d->pl, i);
	pthread_mutex_unlock(&d->lock);
	free(cap);
	return d->pl ? 0 : -ENOMEM;
}

unsigned int dispatch_alive_servers(struct dispatch *d)
{
	unsigned int i, n = 0;

	pthread_mutex_lock(&d->lock);
	for (i = 0; i < d->nservers; i++)
		n += !d->servers[i].dead && d->servers[i].conn;
	pthread_mutex_unlock(&d->lock);
	return n;
}

/* ---- SPACE_NEW / SPACE_DEL ------------------------------------------------ */

static const char *missing(const struct dlm_request *r, const int *attrs,
			   const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!REQ_HAS(r, attrs[i]))
			return names[i];
	return NULL;
}

static atomic_uint_fast64_t warn_invalid;

static int bad(const struct dlm_request *r, const char *why)
{
	uint64_t n = rate_ok(&warn_invalid);

	if (n)
		log_warn("invalid request from the kernel", "req_id=%" PRIu64
			 " op=%u space=%u why=\"%s\" count=%" PRIu64,
			 r->req_id, r->op, r->space, why, n);
	return -EINVAL;
}

static int space_new(struct dispatch *d, const struct dlm_request *r)
{
	static const int need[] = { DLM_NL_A_SPACE, DLM_NL_A_PAGE_SIZE,
				    DLM_NL_A_TOTAL_SIZE };
	static const char *const names[] = { "missing SPACE",
		"missing PAGE_SIZE", "missing TOTAL_SIZE" };
	uint64_t ps = r->page_size, total = r->total_size;
	uint64_t budget = REQ_HAS(r, DLM_NL_A_BUDGET) ? r->budget : 0;
	const char *why = missing(r, need, names, 3);
	uint64_t free_bytes = 0, slack, reserved;
	struct pl_server_info info;
	unsigned int i;
	int err;

	if (why)
		return bad(r, why);
	if (!ps || ps % d->cfg.cpu_page_size || ps % PL_ALIGN)
		return bad(r, "PAGE_SIZE not a multiple of the CPU page size");
	if (ps > DISPATCH_PAGE_MAX)
		return bad(r, "PAGE_SIZE above 256 MiB, the largest transfer");
	if (!total || total % ps)
		return bad(r, "TOTAL_SIZE not a non-zero multiple of PAGE_SIZE");
	if (budget > total || budget % ps)
		return bad(r, "BUDGET above TOTAL_SIZE or not a multiple of PAGE_SIZE");
	if (!REQ_HAS(r, DLM_NL_A_BUDGET))
		log_warn("SPACE_NEW without BUDGET: reserving the whole space",
			 "req_id=%" PRIu64 " space=%u", r->req_id, r->space);

	/*
	 * A page being fetched keeps its remote copy until it is in, and a
	 * victim may be stored meanwhile: a few pages beyond TOTAL - BUDGET
	 * can be remote at once.  Reserve them too when there is room.
	 */
	slack = budget < SPACE_SLACK_PAGES * ps ? budget : SPACE_SLACK_PAGES * ps;
	pthread_mutex_lock(&d->lock);
	err = pl_space_new(d->pl, r->space, ps, total, total - budget);
	if (!err && slack)
		pl_space_extend(d->pl, r->space, slack);
	reserved = pl_space_reserved(d->pl, r->space);
	for (i = 0; err == -ENOSPC && i < d->nservers; i++) {
		pl_server_info(d->pl, i, &info);
		free_bytes += info.free;
	}
	pthread_mutex_unlock(&d->lock);

	switch (err) {
	case 0:
		log_info("space created", "space=%u page_size=%" PRIu64 " total_size=%"
			 PRIu64 " budget=%" PRIu64 " reserved=%" PRIu64, r->space,
			 ps, total, budget, reserved);
		break;
	case -ENOSPC:
		log_warn("space refused: the memory servers cannot hold it; add servers or lower the size",
			 "space=%u need=%" PRIu64 " free=%" PRIu64, r->space,
			 total - budget, free_bytes);
		break;
	case -EEXIST:
		log_warn("space refused: id already in use", "space=%u", r->space);
		break;
	default:
		log_error("space refused", "space=%u err=\"%s\"", r->space,
			  strerror(-err));
	}
	return err;
}

static int space_del(struct dispatch *d, const struct dlm_request *r)
{
	int err;

	if (!REQ_HAS(r, DLM_NL_A_SPACE))
		return bad(r, "missing SPACE");
	pthread_mutex_lock(&d->lock);
	err = pl_space_del(d->pl, r->space);
	pthread_mutex_unlock(&d->lock);
	if (err)
		log_info("SPACE_DEL of a space dlmd does not know", "space=%u",
			 r->space);
	else
		log_info("space deleted", "space=%u", r->space);
	return err;
}

/* ---- FETCH / STORE ---------------------------------------------------------- */

static void io_done(struct dlm_xfer *x, int status);

static void io_submit(struct dreq *q)
{
	struct dispatch *d = q->d;
	struct tconn *c = d->servers[q->loc.server].conn;

	q->x.remote_off = q->loc.offset;
	q->x.done = io_done;
	if (!c) {
		io_done(&q->x, -EIO);
		return;
	}
	d->cfg.tops->submit(c, &q->x);
}

/* A STORE that failed on a server now dead goes to another one. */
static int store_replace(struct dreq *q)
{
	struct dispatch *d = q->d;
	struct tconn *c = d->servers[q->loc.server].conn;
	int dead, r = -EIO;

	dead = !c || !d->cfg.tops->alive(c);
	if (dead)
		dispatch_server_dead(d, q->loc.server, "transfer failed");
	pthread_mutex_lock(&d->lock);
	pl_forget(d->pl, q->space, q->dpn, &q->loc);
	if (dead && !d->stopping && q->attempts < d->nservers)
		r = pl_store(d->pl, q->space, q->dpn, &q->loc, NULL);
	pthread_mutex_unlock(&d->lock);
	if (r)
		return r;
	q->attempts++;
	atomic_fetch_add(&d->cfg.st->store_retries, 1);
	log_info("store re-placed after a server failure", "space=%u dpn=%" PRIu64
		 " rank=%u offset=%" PRIu64, q->space, q->dpn, q->loc.server + 1,
		 q->loc.offset);
	io_submit(q);
	return 0;
}

/* One page of block request B is done (STATUS); answer after the last. */
static void block_page_done(struct breq *b, int status)
{
	struct dispatch *d = b->d;

	if (status)
		atomic_store(&b->status, -EIO);
	if (atomic_fetch_sub(&b->pending, 1) != 1)
		return;
	atomic_fetch_sub(&d->cfg.st->inflight, 1);
	finish(d, b->req_id, b->op, atomic_load(&b->status), b->t0);
	free(b);
}

static void io_done(struct dlm_xfer *x, int status)
{
	struct dreq *q = (struct dreq *)x;
	struct dispatch *d = q->d;
	uint32_t flags = 0;

	if (q->parent) {
		/* A run of one page may be re-placed, as a STORE is. */
		if (status && q->op == ST_WRITE && x->len == q->parent->ps &&
		    !store_replace(q))
			return;		/* resubmitted */
		if (!status)
			atomic_fetch_add(q->op == ST_WRITE ?
					 &d->cfg.st->bytes_out :
					 &d->cfg.st->bytes_in, x->len);
		block_page_done(q->parent, status);
		return;
	}
	if (q->op == ST_STORE) {
		if (!status)
			atomic_fetch_add(&d->cfg.st->bytes_out, x->len);
		else if (!store_replace(q))
			return;		/* resubmitted */
	} else {
		if (!status) {
			atomic_fetch_add(&d->cfg.st->bytes_in, x->len);
			/*
			 * The kernel has it now.  Keep the copy, so that it
			 * can DROP the page if it stays clean, or free the
			 * slot: the kernel stores the page before evicting.
			 */
			pthread_mutex_lock(&d->lock);
			if (!d->cfg.no_keep &&
			    !pl_keep(d->pl, q->space, q->dpn, &q->loc))
				flags = DLM_NL_F_KEPT;
			else
				pl_forget(d->pl, q->space, q->dpn, &q->loc);
			pthread_mutex_unlock(&d->lock);
		}
	}
	if (status) {
		status = -EIO;
		log_debug("transfer failed", "op=%s space=%u dpn=%" PRIu64 " rank=%u",
			  stats_op_name(q->op), q->space, q->dpn,
			  q->loc.server + 1);
	}
	atomic_fetch_sub(&d->cfg.st->inflight, 1);
	finish_flags(d, q->req_id, q->op, status, q->t0, flags);
	free(q);
}

static int io_request(struct dispatch *d, const struct dlm_request *r,
		      uint64_t t0)
{
	static const int need[] = { DLM_NL_A_SPACE, DLM_NL_A_DPN,
				    DLM_NL_A_POOL_OFF, DLM_NL_A_LEN };
	static const char *const names[] = { "missing SPACE", "missing DPN",
		"missing POOL_OFF", "missing LEN" };
	const char *why = missing(r, need, names, 4);
	int store = r->op == DLM_NL_OP_STORE, err, grew = 0;
	uint64_t ps, total;
	struct dreq *q;

	if (why)
		return bad(r, why);
	if (!r->len || r->pool_off > d->cfg.pool_size ||
	    r->len > d->cfg.pool_size - r->pool_off)
		return bad(r, "POOL_OFF + LEN outside the frame pool");
	if (r->pool_off % d->cfg.cpu_page_size)
		return bad(r, "POOL_OFF not aligned to the CPU page size");
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;

	pthread_mutex_lock(&d->lock);
	err = pl_space_geometry(d->pl, r->space, &ps, &total);
	if (err) {
		why = "unknown SPACE";
	} else if (r->len != ps) {
		why = "LEN is not the space's page size";
	} else if (r->dpn >= total / ps) {
		why = "DPN beyond the space";
	} else if (store) {
		err = pl_store(d->pl, r->space, r->dpn, &q->loc, &grew);
	} else {
		err = pl_lookup(d->pl, r->space, r->dpn, &q->loc);
	}
	pthread_mutex_unlock(&d->lock);

	if (why) {
		free(q);
		return bad(r, why);
	}
	if (err) {
		free(q);
		if (err == -ENOSPC) {
			if (rate_ok(&d->warn_nospc))
				log_warn("store failed: no memory-server capacity left",
					 "space=%u dpn=%" PRIu64 " alive_servers=%u",
					 r->space, r->dpn, dispatch_alive_servers(d));
			return -ENOSPC;
		}
		if (err == -ENODATA) {
			if (rate_ok(&d->warn_nodata))
				log_warn("fetch of a page dlmd does not hold",
					 "space=%u dpn=%" PRIu64, r->space, r->dpn);
			return -EIO;
		}
		if (err == -EHOSTDOWN)	/* its server's death was logged */
			return -EIO;
		return err;
	}
	if (grew && rate_ok(&d->warn_grow))
		log_info("space grew beyond its reservation", "space=%u reserved=%" PRIu64,
			 r->space, pl_space_reserved(d->pl, r->space));

	q->d = d;
	q->req_id = r->req_id;
	q->space = r->space;
	q->dpn = r->dpn;
	q->t0 = t0;
	q->op = store ? ST_STORE : ST_FETCH;
	q->x.op = store ? XFER_WRITE : XFER_READ;
	q->x.buf = d->cfg.pool + r->pool_off;
	q->x.len = r->len;
	atomic_fetch_add(&d->cfg.st->inflight, 1);
	io_submit(q);
	return 0;
}

/*
 * Block spaces (/dev/dlmbN): READ and WRITE move LEN bytes, whole pages
 * from DPN on, one transfer per page; READ keeps the remote copies and
 * reads never-written pages as zeroes.  DISCARD forgets pages.
 */
static int block_request(struct dispatch *d, const struct dlm_request *r,
			 uint64_t t0)
{
	static const int need[] = { DLM_NL_A_SPACE, DLM_NL_A_DPN,
				    DLM_NL_A_POOL_OFF, DLM_NL_A_LEN };
	static const char *const names[] = { "missing SPACE", "missing DPN",
		"missing POOL_OFF", "missing LEN" };
	const char *why = missing(r, need, names, 4);
	int write = r->op == DLM_NL_OP_WRITE, err = 0;
	uint64_t ps, total, n, i, j;
	struct pl_loc loc;
	struct breq *b;

	if (why)
		return bad(r, why);
	if (r->op != DLM_NL_OP_DISCARD &&
	    (!r->len || r->pool_off > d->cfg.pool_size ||
	     r->len > d->cfg.pool_size - r->pool_off))
		return bad(r, "POOL_OFF + LEN outside the frame pool");
	if (r->pool_off % d->cfg.cpu_page_size)
		return bad(r, "POOL_OFF not aligned to the CPU page size");

	pthread_mutex_lock(&d->lock);
	if (pl_space_geometry(d->pl, r->space, &ps, &total))
		why = "unknown SPACE";
	else if (!r->len || r->len % ps)
		why = "LEN not a non-zero multiple of the space's page size";
	else if (r->dpn >= total / ps || r->len / ps > total / ps - r->dpn)
		why = "DPN + LEN beyond the space";
	if (why || r->op == DLM_NL_OP_DISCARD) {
		for (i = 0; !why && i < r->len / ps; i++)
			if (!pl_lookup(d->pl, r->space, r->dpn + i, &loc))
				pl_forget(d->pl, r->space, r->dpn + i, &loc);
		pthread_mutex_unlock(&d->lock);
		return why ? bad(r, why) : 0;
	}
	pthread_mutex_unlock(&d->lock);

	n = r->len / ps;
	b = calloc(1, sizeof(*b) + n * sizeof(b->pages[0]));
	if (!b)
		return -ENOMEM;
	b->d = d;
	b->req_id = r->req_id;
	b->t0 = t0;
	b->ps = ps;
	b->op = write ? ST_WRITE : ST_READ;
	atomic_init(&b->pending, 1);	/* the submitter's, until the end */
	atomic_init(&b->status, 0);
	atomic_fetch_add(&d->cfg.st->inflight, 1);

	pthread_mutex_lock(&d->lock);
	for (i = 0; i < n; i++) {
		struct dreq *q = &b->pages[i];

		q->d = d;
		q->parent = b;
		q->req_id = r->req_id;
		q->space = r->space;
		q->dpn = r->dpn + i;
		q->t0 = t0;
		q->op = b->op;
		q->x.op = write ? XFER_WRITE : XFER_READ;
		q->x.buf = d->cfg.pool + r->pool_off + i * ps;
		q->x.len = ps;		/* 0 below: no transfer */
		if (write)
			err = pl_store(d->pl, r->space, q->dpn, &q->loc, NULL);
		else
			err = pl_lookup(d->pl, r->space, q->dpn, &q->loc);
		if (err == -ENODATA) {		/* never written: zeroes */
			memset(q->x.buf, 0, ps);
			q->x.len = 0;
		} else if (err) {
			if (err == -ENOSPC && rate_ok(&d->warn_nospc))
				log_warn("block write failed: no memory-server capacity left",
					 "space=%u dpn=%" PRIu64, q->space, q->dpn);
			atomic_store(&b->status, -EIO);
			q->x.len = 0;
		}
	}
	pthread_mutex_unlock(&d->lock);

	/* One transfer per run of pages contiguous on one server. */
	for (i = 0; i < n; i = j) {
		struct dreq *q = &b->pages[i];

		for (j = i + 1; q->x.len && j < n; j++) {
			const struct dreq *p = &b->pages[j];

			if (!p->x.len || p->loc.server != q->loc.server ||
			    p->loc.offset != q->loc.offset + (j - i) * ps)
				break;
		}
		if (!q->x.len)
			continue;
		q->x.len = (j - i) * ps;
		atomic_fetch_add(&b->pending, 1);
		io_submit(q);
	}
	block_page_done(b, 0);		/* the submitter's count */
	return 0;
}

/* DROP: the kernel evicts a clean page whose copy was kept at FETCH. */
static int drop_request(struct dispatch *d, const struct dlm_request *r)
{
	static const int need[] = { DLM_NL_A_SPACE, DLM_NL_A_DPN };
	static const char *const names[] = { "missing SPACE", "missing DPN" };
	const char *why = missing(r, need, names, 2);
	int err;

	if (why)
		return bad(r, why);
	pthread_mutex_lock(&d->lock);
	err = pl_drop(d->pl, r->space, r->dpn);
	pthread_mutex_unlock(&d->lock);
	if (err == -ENOENT)
		return bad(r, "unknown SPACE");
	if (err == -EINVAL)
		return bad(r, "DPN beyond the space");
	return err;
}

void dispatch_request(struct dispatch *d, const struct dlm_request *r)
{
	uint64_t t0 = now_ns();
	enum st_op op;
	int status;

	if (!REQ_HAS(r, DLM_NL_A_REQ_ID)) {
		atomic_fetch_add(&d->cfg.st->bad_requests, 1);
		log_warn("request without REQ_ID ignored: it cannot be answered",
			 "op=%u", r->op);
		return;
	}
	if (!REQ_HAS(r, DLM_NL_A_OP)) {
		atomic_fetch_add(&d->cfg.st->unknown_ops, 1);
		d->cfg.complete(d->cfg.ctx, r->req_id, bad(r, "missing OP"), 0);
		return;
	}
	switch (r->op) {
	case DLM_NL_OP_SPACE_NEW:
		finish(d, r->req_id, ST_SPACE_NEW, space_new(d, r), t0);
		return;
	case DLM_NL_OP_SPACE_DEL:
		finish(d, r->req_id, ST_SPACE_DEL, space_del(d, r), t0);
		return;
	case DLM_NL_OP_DROP:
		finish(d, r->req_id, ST_DROP, drop_request(d, r), t0);
		return;
	case DLM_NL_OP_FETCH:
	case DLM_NL_OP_STORE:
		op = r->op == DLM_NL_OP_STORE ? ST_STORE : ST_FETCH;
		status = io_request(d, r, t0);
		if (status)
			finish(d, r->req_id, op, status, t0);
		return;
	case DLM_NL_OP_READ:
	case DLM_NL_OP_WRITE:
	case DLM_NL_OP_DISCARD:
		op = r->op == DLM_NL_OP_READ ? ST_READ :
		     r->op == DLM_NL_OP_WRITE ? ST_WRITE : ST_DISCARD;
		status = block_request(d, r, t0);
		if (status || op == ST_DISCARD)
			finish(d, r->req_id, op, status, t0);
		return;
	}
	atomic_fetch_add(&d->cfg.st->unknown_ops, 1);
	log_warn("unknown request op: a newer kernel module than dlmd?",
		 "req_id=%" PRIu64 " op=%u", r->req_id, r->op);
	d->cfg.complete(d->cfg.ctx, r->req_id, -EOPNOTSUPP, 0);
}

void dispatch_json(struct dispatch *d, FILE *f)
{
	struct pl_server_info info = { 0 };
	unsigned int i, nsp = 0;
	char copies[32];

	fprintf(f, "  \"servers\": [");
	for (i = 0; i < d->nservers; i++) {
		pthread_mutex_lock(&d->lock);
		if (d->pl) {
			pl_server_info(d->pl, i, &info);
			nsp = pl_nspaces(d->pl);
		}
		info.dead = d->servers[i].dead || !d->servers[i].conn;
		/* A mirrored pair: how many of its servers hold the pages. */
		copies[0] = 0;
		if (d->cfg.tops->replicas && d->servers[i].conn)
			snprintf(copies, sizeof(copies), ", \"replicas\": %d",
				 info.dead ? 0 :
				 d->cfg.tops->replicas(d->servers[i].conn));
		pthread_mutex_unlock(&d->lock);
		fprintf(f, "%s\n    {\"rank\": %u, \"addr\": \"%s\", \"alive\": %s, "
			"\"capacity\": %" PRIu64 ", \"free\": %" PRIu64
			", \"stored\": %" PRIu64 "%s}", i ? "," : "", i + 1,
			d->servers[i].name, info.dead ? "false" : "true",
			info.capacity, info.free, info.stored, copies);
	}
	fprintf(f, "\n  ],\n  \"spaces\": %u,\n  \"pool_bytes\": %" PRIu64,
		nsp, d->cfg.pool_size);
}

void dispatch_destroy(struct dispatch *d)
{
	unsigned int i;

	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stopping = 1;
	pthread_mutex_unlock(&d->lock);
	/* Stop all before freeing any: a failing STORE may still be
	 * re-submitted to another server while its connection stops. */
	for (i = 0; i < d->nservers; i++)
		if (d->servers[i].conn)
			d->cfg.tops->stop(d->servers[i].conn);
	for (i = 0; i < d->nservers; i++)
		if (d->servers[i].conn)
			d->cfg.tops->close(d->servers[i].conn);
	pl_destroy(d->pl);
	pthread_mutex_destroy(&d->lock);
	for (i = 0; i < d->nservers; i++)
		free(d->servers[i].name);
	free(d->servers);
	free(d);
}

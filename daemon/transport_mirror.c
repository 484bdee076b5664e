// SPDX-License-Identifier: GPL-2.0
/*
 * transport_mirror.c - two memory servers as one (dlmd --replicas 2).
 *
 * A mirror connection wraps one connection of the real transport (tcp or
 * verbs) to each server of a pair.  Every WRITE goes to both and completes
 * once both have answered, successfully if at least one side stored it.
 * A READ goes to one side - alternating by DLM page, so both servers serve
 * reads - and, if that side fails, again to the other.  A side that fails
 * anything (its connection died, or it refused a transfer) is dropped for
 * good, so it is never read after missing a write: the pair goes on
 * unreplicated on the survivor (logged once), and only when both are gone
 * does the mirror itself die, which the dispatcher sees as one server
 * dying.  Placement and the kernel see one server of the smaller size.
 *
 * Rejoin: a thread tries every REJOIN_INTERVAL_MS to reconnect a dropped
 * side while the other is up.  A server that answers (restarted, or back from a
 * network cut) and is large enough is resynchronised: from then on every
 * WRITE goes to it too, but no READ, while the thread copies from the
 * live side, in RESYNC_CHUNK pieces, every chunk a WRITE has touched since
 * dlmd opened the pair (dlmd reads nothing it has not written: a block
 * never written reads as zeroes without a transfer, and a restarted dlmd
 * starts with fresh placement).  A WRITE that goes
 * to a rejoining side marks the chunks it touches dirty after it has been
 * submitted to both sides, and
 * the thread copies a chunk again until it stays clean across a copy, so
 * a chunk is never left older than a WRITE that overlapped its copy (on
 * each side a READ sees the WRITEs submitted before it, and WRITEs apply
 * in order); a chunk still dirty after
 * RESYNC_TRIES copies is copied once more with WRITEs held off (wlock).
 * Then the side is read from again:
 * the pair is replicated once more.  The switch to "WRITEs go to both"
 * happens under wlock, which every WRITE holds while it chooses its sides
 * and submits, so no WRITE that skipped the new side is still being
 * submitted when the copy starts.  With a transport that registers
 * memory (verbs), the copy buffer is registered with every connection
 * beside the frame pool, and a rejoin waits until dlmd has set the pool.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "stats.h"
#include "transport.h"

#define REJOIN_INTERVAL_MS	1000
#define RESYNC_CHUNK		(1u << 20)
#define RESYNC_TRIES		4	/* then with WRITEs held off */

struct tconn {
	const struct transport_ops *inner;
	/* the inner transport's connections; replaced by a rejoin */
	struct tconn *_Atomic side[2];
	char name[2][NETADDR_STR_MAX];
	struct netaddr addr[2];
	atomic_int down[2];		/* side dropped: no READ, no WRITE */
	atomic_int syncing[2];		/* side rejoining: WRITEs, no READ */
	atomic_uint gen[2];		/* which connection of the side */
	atomic_int dead_told;
	struct transport_opts opts;	/* ours: dead() is the dispatcher's */
	uint64_t size;			/* what each side must hold */

	pthread_rwlock_t wlock;		/* WRITEs: read; a rejoin: write */
	atomic_uchar *dirty;		/* per RESYNC_CHUNK */
	atomic_uchar *written;		/* per RESYNC_CHUNK: ever written */
	size_t nchunks;
	pthread_t rejoiner;
	int has_rejoiner;
	void *copybuf;			/* RESYNC_CHUNK, for the rejoin */
	pthread_mutex_t lock;		/* stopping, retired, pool */
	void *pool;			/* the frame pool, once set */
	uint64_t pool_len;
	int no_rejoin;			/* the copy buffer cannot be used */
	pthread_cond_t cond;
	int stopping;
	struct tconn **retired;		/* replaced connections, closed last */
	size_t nretired;
};

/* One transfer of the caller's, carried by one or two inner ones. */
struct mreq {
	struct dlm_xfer sub[2];
	struct dlm_xfer *x;
	struct tconn *m;
	unsigned int gen[2];		/* the connections it used */
	int counts[2];			/* a WRITE stored there counts */
	atomic_int left;
	atomic_int ok;
};

#define MREQ(sub, i)	\
	((struct mreq *)((char *)(sub) - offsetof(struct mreq, sub[i])))

static void mirror_dead(struct tconn *m, const char *why)
{
	if (!atomic_exchange(&m->dead_told, 1) && m->opts.dead)
		m->opts.dead(m->opts.ctx, m->opts.index, why);
}

/*
 * Connection GEN of SIDE failed.  A rejoining side only stops rejoining;
 * else drop SIDE (once): the pair goes on with the other, if it is up.
 * A failure of a connection a rejoin has replaced is old news.
 */
static void drop_side(struct tconn *m, int side, unsigned int gen,
		      const char *why)
{
	if (gen != atomic_load(&m->gen[side]))
		return;
	if (atomic_exchange(&m->syncing[side], 0)) {
		log_warn("memory server of a mirrored pair failed while rejoining: still unreplicated",
			 "server=%s mirror=%s why=\"%s\"", m->name[side],
			 m->name[!side], why);
		return;
	}
	if (atomic_exchange(&m->down[side], 1))
		return;
	if (!atomic_load(&m->down[!side])) {
		log_warn("memory server of a mirrored pair dropped: its pages are read from the other, no longer replicated",
			 "server=%s mirror=%s why=\"%s\"", m->name[side],
			 m->name[!side], why);
		return;
	}
	log_warn("both memory servers of a mirrored pair are gone",
		 "server=%s mirror=%s why=\"%s\"", m->name[side],
		 m->name[!side], why);
	mirror_dead(m, why);
}

/*
 * The inner transport's dead(): CTX is the mirror, INDEX the side (bit 0)
 * and the connection's generation (the rest).
 */
static void side_dead(void *ctx, unsigned int index, const char *why)
{
	drop_side(ctx, index & 1, index >> 1, why);
}

static int up(struct tconn *m, int side)
{
	return !atomic_load(&m->down[side]) && m->side[side] &&
	       m->inner->alive(m->side[side]);
}

static void finish(struct mreq *r, int status)
{
	struct dlm_xfer *x = r->x;

	free(r);
	x->done(x, status);
}

static void write_done(struct mreq *r, int side, int status)
{
	if (status)
		drop_side(r->m, side, r->gen[side], "a WRITE failed");
	else if (r->counts[side])
		atomic_fetch_add(&r->ok, 1);
	if (atomic_fetch_sub(&r->left, 1) == 1)
		finish(r, atomic_load(&r->ok) ? 0 : -EIO);
}

static void write_done0(struct dlm_xfer *sub, int status)
{
	write_done(MREQ(sub, 0), 0, status);
}

static void write_done1(struct dlm_xfer *sub, int status)
{
	write_done(MREQ(sub, 1), 1, status);
}

static int read_on(struct mreq *r, int side);

/* A failed READ is tried once more, on the other side. */
static void read_done(struct mreq *r, int side, int status)
{
	if (!status) {
		finish(r, 0);
		return;
	}
	drop_side(r->m, side, r->gen[side], "a READ failed");
	if (!atomic_exchange(&r->ok, 1) && !read_on(r, !side))
		return;
	finish(r, -EIO);
}

static void read_done0(struct dlm_xfer *sub, int status)
{
	read_done(MREQ(sub, 0), 0, status);
}

static void read_done1(struct dlm_xfer *sub, int status)
{
	read_done(MREQ(sub, 1), 1, status);
}

/*
 * Send the READ of R to SIDE; -1 if SIDE is not readable.  The connection
 * is checked after it is loaded: a rejoin installs a new one while the
 * side is still down, and down is cleared only once the copy is complete,
 * so a connection that is found readable holds every page.
 */
static int read_on(struct mreq *r, int side)
{
	struct tconn *m = r->m;
	struct tconn *c = m->side[side];

	r->gen[side] = atomic_load(&m->gen[side]);
	if (!c || atomic_load(&m->down[side]) || !m->inner->alive(c))
		return -1;
	r->sub[side] = (struct dlm_xfer){
		.op = XFER_READ, .len = r->x->len,
		.remote_off = r->x->remote_off, .buf = r->x->buf,
		.done = side ? read_done1 : read_done0,
	};
	m->inner->submit(c, &r->sub[side]);
	return 0;
}

/* Set the chunks of MAP that OFF, LEN overlaps (a set one is only read). */
static void mark(struct tconn *m, atomic_uchar *map, uint64_t off,
		 uint32_t len)
{
	size_t c;

	if (!map || !len)
		return;
	for (c = off / RESYNC_CHUNK;
	     c <= (off + len - 1) / RESYNC_CHUNK && c < m->nchunks; c++)
		if (!atomic_load_explicit(&map[c], memory_order_relaxed))
			atomic_store(&map[c], 1);
}

static void mirror_submit(struct tconn *m, struct dlm_xfer *x)
{
	struct mreq *r = calloc(1, sizeof(*r));
	int use[2], side;

	if (!r) {
		x->done(x, -ENOMEM);
		return;
	}
	r->x = x;
	r->m = m;
	if (x->op == XFER_WRITE) {
		/* X may be done, and gone, once submitted. */
		uint64_t off = x->remote_off;
		uint32_t len = x->len;
		int rejoining;

		pthread_rwlock_rdlock(&m->wlock);
		for (side = 0; side < 2; side++) {
			r->counts[side] = up(m, side);
			use[side] = r->counts[side] ||
				    atomic_load(&m->syncing[side]);
			r->gen[side] = atomic_load(&m->gen[side]);
		}
		if (!r->counts[0] && !r->counts[1]) {
			pthread_rwlock_unlock(&m->wlock);
			finish(r, -EIO);
			return;
		}
		/* R may be gone too once submitted. */
		rejoining = use[0] != r->counts[0] || use[1] != r->counts[1];
		/* Before wlock is released: a rejoin that takes it sees it. */
		mark(m, m->written, off, len);
		/* Both counted before either may complete. */
		atomic_init(&r->left, use[0] + use[1]);
		for (side = 0; side < 2; side++) {
			if (!use[side])
				continue;
			r->sub[side] = (struct dlm_xfer){
				.op = XFER_WRITE, .len = x->len,
				.remote_off = x->remote_off, .buf = x->buf,
				.done = side ? write_done1 : write_done0,
			};
			m->inner->submit(m->side[side], &r->sub[side]);
		}
		/* After submitting (see the top), and only while a copy is in
		 * progress: a side is rejoining as long as we hold wlock. */
		if (rejoining)
			mark(m, m->dirty, off, len);
		pthread_rwlock_unlock(&m->wlock);
		return;
	}
	/* Reads alternate between the sides by DLM page. */
	side = x->len ? (int)((x->remote_off / x->len) & 1) : 0;
	if (read_on(r, side) && read_on(r, !side))
		finish(r, -EIO);
}

int mirror_replicas(struct tconn *m)
{
	return up(m, 0) + up(m, 1);
}

static int mirror_alive(struct tconn *m)
{
	return up(m, 0) || up(m, 1);
}

/*
 * Register the pool, and the copy buffer, with connection C; called with
 * m->lock held.  0, or -errno with ERR; a copy buffer that cannot be
 * registered turns the rejoin off (logged), the connection is kept.
 */
static int register_conn(struct tconn *m, struct tconn *c, char *err,
			 size_t errlen)
{
	char why[256];
	int r;

	r = m->inner->set_pool(c, m->pool, m->pool_len, err, errlen);
	if (r || !m->copybuf || m->no_rejoin)
		return r;
	if (m->inner->set_pool(c, m->copybuf, RESYNC_CHUNK, why, sizeof(why))) {
		m->no_rejoin = 1;
		log_warn("dropped memory servers of this mirrored pair will not rejoin: the copy buffer cannot be registered",
			 "mirror=%s+%s why=\"%s\"", m->name[0], m->name[1], why);
	}
	return 0;
}

static int mirror_set_pool(struct tconn *m, void *base, uint64_t len,
			   char *err, size_t errlen)
{
	int side, r = 0;

	if (!m->inner->set_pool)
		return 0;
	pthread_mutex_lock(&m->lock);
	m->pool = base;
	m->pool_len = len;
	for (side = 0; side < 2 && !r; side++)
		if (m->side[side])
			r = register_conn(m, m->side[side], err, errlen);
	if (r)
		m->pool = NULL;
	pthread_mutex_unlock(&m->lock);
	return r;
}

static int stopping(struct tconn *m)
{
	int r;

	pthread_mutex_lock(&m->lock);
	r = m->stopping;
	pthread_mutex_unlock(&m->lock);
	return r;
}

/*
 * Copy chunk C (OFF, LEN) from the live side to rejoining SIDE: again
 * while a WRITE overlapped the copy, and after RESYNC_TRIES such copies
 * once more with WRITEs held off, so that a page written without pause
 * cannot keep the pair unreplicated.  NULL, or why not.
 */
static const char *resync_chunk(struct tconn *m, int side, size_t c,
				uint64_t off, uint32_t len, void *buf,
				unsigned long *copies)
{
	const char *why = NULL;
	int tries, locked = 0;

	for (tries = 0;; tries++) {
		if (tries == RESYNC_TRIES) {
			pthread_rwlock_wrlock(&m->wlock);
			locked = 1;
		}
		if (stopping(m))
			why = "dlmd is stopping";
		else if (!atomic_load(&m->syncing[side]))
			why = "it failed a transfer";
		else if (!up(m, !side))
			why = "its pair is gone";
		if (!why) {
			(*copies)++;
			atomic_store(&m->dirty[c], 0);
			if (transport_io(m->inner, m->side[!side], XFER_READ, off,
					 len, buf))
				why = "reading its pair failed";
			else if (transport_io(m->inner, m->side[side], XFER_WRITE,
					      off, len, buf))
				why = "writing to it failed";
		}
		if (why || locked || !atomic_load(&m->dirty[c]))
			break;
	}
	if (locked)
		pthread_rwlock_unlock(&m->wlock);
	return why;
}

/*
 * Copy what was written of the live side's region to rejoining SIDE,
 * counting the chunk copies in *COPIES and the bytes of the chunks in
 * *BYTES.  A chunk not yet written when it is reached needs no copy: the
 * WRITEs that touch it from then on go to both sides.  NULL, or why not.
 */
static const char *resync(struct tconn *m, int side, void *buf,
			  unsigned long *copies, uint64_t *bytes)
{
	const char *why = NULL;
	uint64_t off;
	uint32_t len;
	size_t c;

	for (c = 0; c < m->nchunks && !why; c++) {
		if (!atomic_load(&m->written[c]))
			continue;
		off = (uint64_t)c * RESYNC_CHUNK;
		len = m->size - off < RESYNC_CHUNK ?
		      (uint32_t)(m->size - off) : RESYNC_CHUNK;
		why = resync_chunk(m, side, c, off, len, buf, copies);
		*bytes += len;
	}
	return why;
}

/*
 * A transport that registers memory (verbs) needs the frame pool and the
 * copy buffer registered with the new connection @c before the copy.
 * 0 if they are not: no pool yet (dlmd registers it before its first
 * transfer; the next try may work), or the copy buffer cannot be
 * registered (this pair no longer rejoins; logged).  m->lock held.
 */
static int rejoin_registered(struct tconn *m, struct tconn *c, int side)
{
	char err[256];

	if (!m->inner->set_pool)
		return 1;
	if (!m->pool || m->no_rejoin)
		return 0;
	if (register_conn(m, c, err, sizeof(err))) {
		log_warn("memory server of a mirrored pair answers but its connection cannot register memory: not rejoined",
			 "server=%s why=\"%s\"", m->name[side], err);
		return 0;
	}
	return !m->no_rejoin;	/* cleared if the copy buffer failed */
}

/* Try to bring dropped SIDE back: connect, copy, then read from it. */
static void rejoin(struct tconn *m, int side)
{
	unsigned int gen = atomic_load(&m->gen[side]) + 1;
	struct transport_opts o = m->opts;
	unsigned long copies = 0;
	uint64_t bytes = 0;
	struct tconn *c, **r;
	const char *why;
	char err[256];
	uint64_t size;
	uint64_t t0;

	o.dead = side_dead;
	o.ctx = m;
	o.index = (unsigned int)side | gen << 1;
	if (m->inner->open(&c, &m->addr[side], &o, &size, err, sizeof(err))) {
		log_debug("memory server of a mirrored pair still unreachable",
			  "server=%s why=\"%s\"", m->name[side], err);
		return;
	}
	if (size < m->size) {
		log_warn("memory server of a mirrored pair answers but is smaller than the pair: not rejoined; restart it with at least the pair's size",
			 "server=%s bytes=%llu need=%llu", m->name[side],
			 (unsigned long long)size, (unsigned long long)m->size);
		m->inner->close(c);
		return;
	}
	pthread_mutex_lock(&m->lock);
	if (!rejoin_registered(m, c, side)) {
		pthread_mutex_unlock(&m->lock);
		m->inner->close(c);
		return;
	}
	r = realloc(m->retired, (m->nretired + 1) * sizeof(*r));
	if (r) {
		m->retired = r;
		if (m->side[side])
			m->retired[m->nretired++] = m->side[side];
	}
	pthread_mutex_unlock(&m->lock);
	if (!r) {
		m->inner->close(c);
		return;
	}
	log_warn("memory server of a mirrored pair is back: copying what its pair holds to it",
		 "server=%s mirror=%s bytes=%llu", m->name[side],
		 m->name[!side], (unsigned long long)m->size);
	t0 = now_ns();
	/* From here every WRITE goes to it as well (see the top). */
	pthread_rwlock_wrlock(&m->wlock);
	m->side[side] = c;
	atomic_store(&m->gen[side], gen);
	atomic_store(&m->syncing[side], 1);
	pthread_rwlock_unlock(&m->wlock);

	why = resync(m, side, m->copybuf, &copies, &bytes);
	if (!why) {
		/* Readable before it stops being "rejoining": no gap. */
		atomic_store(&m->down[side], 0);
		if (atomic_exchange(&m->syncing[side], 0)) {
			log_warn("memory server of a mirrored pair rejoined: replicated again",
				 "server=%s mirror=%s bytes=%llu copied_bytes=%llu chunk_copies=%lu ms=%llu",
				 m->name[side], m->name[!side],
				 (unsigned long long)m->size,
				 (unsigned long long)bytes, copies,
				 (unsigned long long)((now_ns() - t0) /
						      1000000));
			return;
		}
		atomic_store(&m->down[side], 1);	/* failed meanwhile */
	} else if (atomic_exchange(&m->syncing[side], 0)) {
		log_warn("rejoining memory server abandoned: still unreplicated",
			 "server=%s mirror=%s why=\"%s\"", m->name[side],
			 m->name[!side], why);
	}
	m->inner->stop(c);
}

static void *rejoin_main(void *arg)
{
	struct tconn *m = arg;
	struct timespec ts;
	int side;

	pthread_mutex_lock(&m->lock);
	while (!m->stopping) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += REJOIN_INTERVAL_MS / 1000;
		ts.tv_nsec += (REJOIN_INTERVAL_MS % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&m->cond, &m->lock, &ts);
		if (m->stopping)
			break;
		if (m->no_rejoin)
			continue;
		pthread_mutex_unlock(&m->lock);
		for (side = 0; side < 2; side++)
			if (atomic_load(&m->down[side]) &&
			    !atomic_load(&m->syncing[side]) && up(m, !side))
				rejoin(m, side);
		pthread_mutex_lock(&m->lock);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* End the rejoin thread (an unfinished rejoin is abandoned). */
static void stop_rejoiner(struct tconn *m)
{
	pthread_mutex_lock(&m->lock);
	m->stopping = 1;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	if (m->has_rejoiner) {
		pthread_join(m->rejoiner, NULL);
		m->has_rejoiner = 0;
	}
}

static void mirror_stop(struct tconn *m)
{
	int side;

	stop_rejoiner(m);
	for (side = 0; side < 2; side++)
		if (m->side[side])
			m->inner->stop(m->side[side]);
}

static void mirror_free(struct tconn *m)
{
	pthread_rwlock_destroy(&m->wlock);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->cond);
	free(m->dirty);
	free(m->written);
	free(m->copybuf);
	free(m->retired);
	free(m);
}

static void mirror_close(struct tconn *m)
{
	size_t i;
	int side;

	stop_rejoiner(m);
	for (side = 0; side < 2; side++)
		if (m->side[side])
			m->inner->close(m->side[side]);
	for (i = 0; i < m->nretired; i++)
		m->inner->close(m->retired[i]);
	mirror_free(m);
}

static void init_locks(struct tconn *m)
{
	pthread_rwlockattr_t wa;
	pthread_condattr_t ca;

	/* A rejoin waiting for wlock must not starve behind WRITEs. */
	pthread_rwlockattr_init(&wa);
	pthread_rwlockattr_setkind_np(&wa,
				      PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&m->wlock, &wa);
	pthread_rwlockattr_destroy(&wa);
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cond, &ca);
	pthread_condattr_destroy(&ca);
}

int mirror_open(struct tconn **out, const struct transport_ops *inner,
		const struct netaddr *addr[2],
		const struct transport_opts *opts, uint64_t *size,
		char *err, size_t errlen)
{
	struct tconn *m = calloc(1, sizeof(*m));
	uint64_t sz[2] = { 0, 0 };
	char why[2][256];
	int side;

	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->inner = inner;
	m->opts = *opts;
	init_locks(m);
	for (side = 0; side < 2; side++) {
		struct transport_opts o = *opts;
		struct tconn *c;

		o.dead = side_dead;
		o.ctx = m;
		o.index = side;
		o.want_size = opts->want_size;
		m->addr[side] = *addr[side];
		netaddr_str(addr[side], m->name[side], sizeof(m->name[side]));
		if (inner->open(&c, addr[side], &o, &sz[side], why[side],
				sizeof(why[side])))
			atomic_store(&m->down[side], 1);
		else
			m->side[side] = c;
	}
	if (!m->side[0] && !m->side[1]) {
		snprintf(err, errlen, "neither server of the pair answers: %s; %s",
			 why[0], why[1]);
		mirror_free(m);
		return -EHOSTUNREACH;
	}
	for (side = 0; side < 2; side++)
		if (!m->side[side])
			log_warn("memory server of a mirrored pair unreachable: the pair starts unreplicated",
				 "server=%s mirror=%s why=\"%s\"", m->name[side],
				 m->name[!side], why[side]);
	if (m->side[0] && m->side[1])
		*size = sz[0] < sz[1] ? sz[0] : sz[1];
	else
		*size = m->side[0] ? sz[0] : sz[1];
	/*
	 * No more than the memfile gives the pair: a server's HELLO size
	 * must not size (and lock: mlockall) the resync bitmaps.
	 */
	if (opts->want_size && *size > opts->want_size)
		*size = opts->want_size;
	m->size = *size;
	m->nchunks = (m->size + RESYNC_CHUNK - 1) / RESYNC_CHUNK;
	m->dirty = calloc(m->nchunks ? m->nchunks : 1, sizeof(*m->dirty));
	m->written = calloc(m->nchunks ? m->nchunks : 1, sizeof(*m->written));
	/* Page-aligned: registered for RDMA beside the pool (verbs). */
	if (posix_memalign(&m->copybuf, 4096, RESYNC_CHUNK))
		m->copybuf = NULL;
	if (m->dirty && m->written && m->copybuf &&
	    !pthread_create(&m->rejoiner, NULL, rejoin_main, m)) {
		m->has_rejoiner = 1;
		pthread_setname_np(m->rejoiner, "mirror-rejoin");
	} else {
		log_warn("dropped memory servers of this mirrored pair will not rejoin: out of memory",
			 "mirror=%s+%s", m->name[0], m->name[1]);
	}
	*out = m;
	return 0;
}

const struct transport_ops transport_mirror = {
	.name = "mirror",
	.submit = mirror_submit,
	.alive = mirror_alive,
	.set_pool = mirror_set_pool,
	.stop = mirror_stop,
	.close = mirror_close,
	.replicas = mirror_replicas,
};

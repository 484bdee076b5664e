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
 */
#include <errno.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "transport.h"

struct tconn {
	const struct transport_ops *inner;
	struct tconn *side[2];		/* the inner transport's connections */
	char name[2][NETADDR_STR_MAX];
	atomic_int down[2];		/* side dropped */
	atomic_int dead_told;
	struct transport_opts opts;	/* ours: dead() is the dispatcher's */
};

/* One transfer of the caller's, carried by one or two inner ones. */
struct mreq {
	struct dlm_xfer sub[2];
	struct dlm_xfer *x;
	struct tconn *m;
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

/* Drop SIDE (once): the pair goes on with the other, if it is up. */
static void drop_side(struct tconn *m, int side, const char *why)
{
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

/* The inner transport's dead(): CTX is the mirror, INDEX the side. */
static void side_dead(void *ctx, unsigned int index, const char *why)
{
	drop_side(ctx, index & 1, why);
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
		drop_side(r->m, side, "a WRITE failed");
	else
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

static void read_on(struct mreq *r, int side);

/* A failed READ is tried once more, on the other side. */
static void read_done(struct mreq *r, int side, int status)
{
	if (!status) {
		finish(r, 0);
		return;
	}
	drop_side(r->m, side, "a READ failed");
	if (!atomic_exchange(&r->ok, 1) && up(r->m, !side)) {
		read_on(r, !side);
		return;
	}
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

static void read_on(struct mreq *r, int side)
{
	r->sub[side] = (struct dlm_xfer){
		.op = XFER_READ, .len = r->x->len,
		.remote_off = r->x->remote_off, .buf = r->x->buf,
		.done = side ? read_done1 : read_done0,
	};
	r->m->inner->submit(r->m->side[side], &r->sub[side]);
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
		use[0] = up(m, 0);
		use[1] = up(m, 1);
		if (!use[0] && !use[1]) {
			finish(r, -EIO);
			return;
		}
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
		return;
	}
	/* Reads alternate between the sides by DLM page. */
	side = x->len ? (int)((x->remote_off / x->len) & 1) : 0;
	if (!up(m, side))
		side = !side;
	if (!up(m, side)) {
		finish(r, -EIO);
		return;
	}
	read_on(r, side);
}

static int mirror_alive(struct tconn *m)
{
	return up(m, 0) || up(m, 1);
}

static int mirror_set_pool(struct tconn *m, void *base, uint64_t len,
			   char *err, size_t errlen)
{
	int side, r;

	if (!m->inner->set_pool)
		return 0;
	for (side = 0; side < 2; side++) {
		if (!m->side[side])
			continue;
		r = m->inner->set_pool(m->side[side], base, len, err, errlen);
		if (r)
			return r;
	}
	return 0;
}

static void mirror_stop(struct tconn *m)
{
	int side;

	for (side = 0; side < 2; side++)
		if (m->side[side])
			m->inner->stop(m->side[side]);
}

static void mirror_close(struct tconn *m)
{
	int side;

	for (side = 0; side < 2; side++)
		if (m->side[side])
			m->inner->close(m->side[side]);
	free(m);
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
	for (side = 0; side < 2; side++) {
		struct transport_opts o = *opts;

		o.dead = side_dead;
		o.ctx = m;
		o.index = side;
		o.want_size = opts->want_size;
		netaddr_str(addr[side], m->name[side], sizeof(m->name[side]));
		if (inner->open(&m->side[side], addr[side], &o, &sz[side],
				why[side], sizeof(why[side]))) {
			m->side[side] = NULL;
			atomic_store(&m->down[side], 1);
		}
	}
	if (!m->side[0] && !m->side[1]) {
		snprintf(err, errlen, "neither server of the pair answers: %s; %s",
			 why[0], why[1]);
		free(m);
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
};

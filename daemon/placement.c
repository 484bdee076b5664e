// SPDX-License-Identifier: GPL-2.0
/*
 * placement.c - reservations and slots on the memory servers (placement.h).
 *
 * Each server keeps its unreserved memory as a sorted array of free
 * extents.  Each space owns chunks (extents taken from servers, in the
 * order taken) numbered into consecutive slots, a bitmap of used slots, a
 * bitmap of kept slots (copies of pages the kernel holds, reclaimable),
 * the page each slot holds, and a hash table dpn -> slot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"

#define PL_NONE		UINT64_MAX
#define PL_MAP_MIN	64
/* Growth step of a space that ran out of slots, in pages: 1/16 of it. */
#define PL_GROW_MIN	1
#define PL_GROW_MAX	256

struct pl_ext {
	uint64_t off, len;
};

struct pl_srv {
	uint64_t capacity, free_bytes, stored;
	int dead;
	struct pl_ext *ext;		/* free extents, sorted by offset */
	size_t next, capext;
};

struct pl_chunk {
	uint32_t server;
	uint64_t off;			/* in the server's memory */
	uint64_t first_slot, nslots;
};

struct pl_ent {
	uint64_t dpn;
	uint64_t slot;			/* PL_NONE: empty */
};

struct pl_space {
	uint32_t id;
	uint64_t gen, page_size, total_size, reserved;
	struct pl_chunk *chunk;
	size_t nchunk;
	uint64_t nslots, hint;		/* no free slot below hint */
	uint64_t *used;			/* bitmap, nslots bits */
	uint64_t *kept;			/* bitmap: used, kept copy */
	uint64_t *owner;		/* dpn held, per used slot */
	struct pl_ent *map;
	uint64_t mapcap, mapn;		/* mapcap: power of two */
};

struct placement {
	unsigned int nsrv;
	struct pl_srv *srv;
	struct pl_space **sp;
	unsigned int nsp;
	uint64_t gen;
};

/* ---- free extents of a server ------------------------------------------ */

static int ext_insert(struct pl_srv *s, uint64_t off, uint64_t len)
{
	size_t lo = 0, hi = s->next, i;
	struct pl_ext *e;

	s->free_bytes += len;
	while (lo < hi) {		/* first extent after off */
		i = (lo + hi) / 2;
		if (s->ext[i].off < off)
			lo = i + 1;
		else
			hi = i;
	}
	i = lo;
	if (i > 0 && s->ext[i - 1].off + s->ext[i - 1].len == off) {
		s->ext[i - 1].len += len;
		if (i < s->next && off + len == s->ext[i].off) {
			s->ext[i - 1].len += s->ext[i].len;
			memmove(&s->ext[i], &s->ext[i + 1],
				(s->next - i - 1) * sizeof(*e));
			s->next--;
		}
		return 0;
	}
	if (i < s->next && off + len == s->ext[i].off) {
		s->ext[i].off = off;
		s->ext[i].len += len;
		return 0;
	}
	if (s->next == s->capext) {
		size_t cap = s->capext ? 2 * s->capext : 8;

		e = realloc(s->ext, cap * sizeof(*e));
		if (!e) {
			s->free_bytes -= len;	/* leaked, but consistent */
			return -ENOMEM;
		}
		s->ext = e;
		s->capext = cap;
	}
	memmove(&s->ext[i + 1], &s->ext[i], (s->next - i) * sizeof(*e));
	s->ext[i].off = off;
	s->ext[i].len = len;
	s->next++;
	return 0;
}

/* Usable bytes of a live server for pages of PS bytes. */
static uint64_t srv_usable(const struct pl_srv *s, uint64_t ps)
{
	uint64_t sum = 0;
	size_t i;

	if (s->dead)
		return 0;
	for (i = 0; i < s->next; i++)
		sum += s->ext[i].len / ps * ps;
	return sum;
}

/* ---- slots of a space --------------------------------------------------- */

static int space_add_chunk(struct pl_space *sp, uint32_t server, uint64_t off,
			   uint64_t len)
{
	uint64_t n = len / sp->page_size, words, oldwords;
	struct pl_chunk *c;
	uint64_t *u;

	c = realloc(sp->chunk, (sp->nchunk + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	sp->chunk = c;
	oldwords = (sp->nslots + 63) / 64;
	words = (sp->nslots + n + 63) / 64;
	if (words != oldwords) {
		u = realloc(sp->used, words * sizeof(*u));
		if (!u)
			return -ENOMEM;
		memset(u + oldwords, 0, (words - oldwords) * sizeof(*u));
		sp->used = u;
		u = realloc(sp->kept, words * sizeof(*u));
		if (!u)
			return -ENOMEM;
		memset(u + oldwords, 0, (words - oldwords) * sizeof(*u));
		sp->kept = u;
	}
	u = realloc(sp->owner, (sp->nslots + n) * sizeof(*u));
	if (!u)
		return -ENOMEM;
	sp->owner = u;
	c = &sp->chunk[sp->nchunk++];
	c->server = server;
	c->off = off;
	c->first_slot = sp->nslots;
	c->nslots = n;
	sp->nslots += n;
	sp->reserved += len;
	return 0;
}

/*
 * Take up to WANT bytes (a multiple of the page size) for SP from live
 * servers in rank order, first fit; whole pages only.  Returns bytes taken
 * (*ERR set on -ENOMEM).
 */
static uint64_t space_take(struct placement *pl, struct pl_space *sp,
			   uint64_t want, int *err)
{
	uint64_t ps = sp->page_size, got = 0, take;
	unsigned int i;
	size_t j;

	*err = 0;
	for (i = 0; i < pl->nsrv && got < want; i++) {
		struct pl_srv *s = &pl->srv[i];

		if (s->dead)
			continue;
		for (j = 0; j < s->next && got < want;) {
			take = s->ext[j].len / ps * ps;
			if (take > want - got)
				take = want - got;
			if (!take) {
				j++;
				continue;
			}
			*err = space_add_chunk(sp, i, s->ext[j].off, take);
			if (*err)
				return got;
			s->ext[j].off += take;
			s->ext[j].len -= take;
			s->free_bytes -= take;
			got += take;
			if (!s->ext[j].len) {
				memmove(&s->ext[j], &s->ext[j + 1],
					(s->next - j - 1) * sizeof(s->ext[0]));
				s->next--;
			} else {
				j++;
			}
		}
	}
	return got;
}

static struct pl_chunk *chunk_of(struct pl_space *sp, uint64_t slot)
{
	size_t lo = 0, hi = sp->nchunk, i;

	while (hi - lo > 1) {
		i = (lo + hi) / 2;
		if (sp->chunk[i].first_slot <= slot)
			lo = i;
		else
			hi = i;
	}
	return &sp->chunk[lo];
}

static uint64_t slot_alloc(struct pl_space *sp)
{
	uint64_t w, words = (sp->nslots + 63) / 64, bits, slot;

	for (w = sp->hint / 64; w < words; w++) {
		bits = ~sp->used[w];
		if (w == sp->hint / 64)
			bits &= ~0ULL << (sp->hint % 64);
		if (!bits)
			continue;
		slot = w * 64 + (uint64_t)__builtin_ctzll(bits);
		if (slot >= sp->nslots)
			break;
		sp->used[w] |= 1ULL << (slot % 64);
		sp->hint = slot + 1;
		return slot;
	}
	sp->hint = sp->nslots;
	return PL_NONE;
}

/* Slot SLOT if it is free (taken now), else PL_NONE. */
static uint64_t slot_take(struct pl_space *sp, uint64_t slot)
{
	uint64_t bit = 1ULL << (slot % 64);

	if (slot >= sp->nslots || (sp->used[slot / 64] & bit))
		return PL_NONE;
	sp->used[slot / 64] |= bit;	/* "no free slot below hint" holds */
	return slot;
}

static void slot_free(struct placement *pl, struct pl_space *sp, uint64_t slot)
{
	/* A slot on a dead server stays used: it is never handed out. */
	if (pl->srv[chunk_of(sp, slot)->server].dead)
		return;
	sp->kept[slot / 64] &= ~(1ULL << (slot % 64));
	sp->used[slot / 64] &= ~(1ULL << (slot % 64));
	if (slot < sp->hint)
		sp->hint = slot;
}

/* ---- dpn -> slot ---------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static struct pl_ent *map_find(struct pl_space *sp, uint64_t dpn)
{
	uint64_t mask = sp->mapcap - 1, i;

	if (!sp->mapcap)
		return NULL;
	for (i = mix(dpn) & mask; sp->map[i].slot != PL_NONE; i = (i + 1) & mask)
		if (sp->map[i].dpn == dpn)
			return &sp->map[i];
	return NULL;
}

static void map_put(struct pl_ent *map, uint64_t cap, uint64_t dpn,
		     uint64_t slot)
{
	uint64_t mask = cap - 1, i;

	for (i = mix(dpn) & mask; map[i].slot != PL_NONE; i = (i + 1) & mask)
		;
	map[i].dpn = dpn;
	map[i].slot = slot;
}

static int map_insert(struct pl_space *sp, uint64_t dpn, uint64_t slot)
{
	if ((sp->mapn + 1) * 2 > sp->mapcap) {
		uint64_t cap = sp->mapcap ? sp->mapcap * 2 : PL_MAP_MIN, i;
		struct pl_ent *m = malloc(cap * sizeof(*m));

		if (!m)
			return -ENOMEM;
		for (i = 0; i < cap; i++)
			m[i].slot = PL_NONE;
		for (i = 0; i < sp->mapcap; i++)
			if (sp->map[i].slot != PL_NONE)
				map_put(m, cap, sp->map[i].dpn, sp->map[i].slot);
		free(sp->map);
		sp->map = m;
		sp->mapcap = cap;
	}
	map_put(sp->map, sp->mapcap, dpn, slot);
	sp->mapn++;
	return 0;
}

/* Linear probing: delete by shifting the rest of the cluster back. */
static void map_delete(struct pl_space *sp, struct pl_ent *e)
{
	uint64_t mask = sp->mapcap - 1, i = (uint64_t)(e - sp->map), j, h;

	for (j = (i + 1) & mask; sp->map[j].slot != PL_NONE; j = (j + 1) & mask) {
		h = mix(sp->map[j].dpn) & mask;
		/* Move j to the hole at i unless its home lies in (i, j]. */
		if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
			sp->map[i] = sp->map[j];
			i = j;
		}
	}
	sp->map[i].slot = PL_NONE;
	sp->mapn--;
}

/* ---- spaces --------------------------------------------------------------- */

static struct pl_space *space_find(struct placement *pl, uint32_t id,
				   unsigned int *idx)
{
	unsigned int i;

	for (i = 0; i < pl->nsp; i++) {
		if (pl->sp[i]->id == id) {
			if (idx)
				*idx = i;
			return pl->sp[i];
		}
	}
	return NULL;
}

static void space_free(struct placement *pl, struct pl_space *sp)
{
	uint64_t i;
	size_t c;

	for (i = 0; i < sp->mapcap; i++)
		if (sp->map[i].slot != PL_NONE)
			pl->srv[chunk_of(sp, sp->map[i].slot)->server].stored -=
				sp->page_size;
	for (c = 0; c < sp->nchunk; c++)
		ext_insert(&pl->srv[sp->chunk[c].server], sp->chunk[c].off,
			   sp->chunk[c].nslots * sp->page_size);
	free(sp->chunk);
	free(sp->used);
	free(sp->kept);
	free(sp->owner);
	free(sp->map);
	free(sp);
}

struct placement *pl_create(unsigned int nservers, const uint64_t *capacity)
{
	struct placement *pl = calloc(1, sizeof(*pl));
	unsigned int i;
	uint64_t cap;

	if (!pl)
		return NULL;
	pl->nsrv = nservers;
	pl->srv = calloc(nservers ? nservers : 1, sizeof(*pl->srv));
	if (!pl->srv)
		goto fail;
	for (i = 0; i < nservers; i++) {
		cap = capacity[i] / PL_ALIGN * PL_ALIGN;
		pl->srv[i].capacity = cap;
		if (cap && ext_insert(&pl->srv[i], 0, cap))
			goto fail;
	}
	return pl;
fail:
	pl_destroy(pl);
	return NULL;
}

void pl_destroy(struct placement *pl)
{
	unsigned int i;

	if (!pl)
		return;
	while (pl->nsp)
		pl_space_del(pl, pl->sp[0]->id);
	free(pl->sp);
	for (i = 0; pl->srv && i < pl->nsrv; i++)
		free(pl->srv[i].ext);
	free(pl->srv);
	free(pl);
}

int pl_space_new(struct placement *pl, uint32_t space, uint64_t page_size,
		 uint64_t total_size, uint64_t reserve)
{
	struct pl_space *sp, **v;
	uint64_t avail = 0;
	unsigned int i;
	int err;

	if (!page_size || page_size % PL_ALIGN || !total_size ||
	    total_size % page_size || reserve > total_size)
		return -EINVAL;
	if (space_find(pl, space, NULL))
		return -EEXIST;
	reserve = (reserve + page_size - 1) / page_size * page_size;
	for (i = 0; i < pl->nsrv && avail < reserve; i++)
		avail += srv_usable(&pl->srv[i], page_size);
	if (avail < reserve)
		return -ENOSPC;

	sp = calloc(1, sizeof(*sp));
	v = realloc(pl->sp, (pl->nsp + 1) * sizeof(*v));
	if (!sp || !v) {
		free(sp);
		if (v)
			pl->sp = v;
		return -ENOMEM;
	}
	pl->sp = v;
	sp->id = space;
	sp->gen = ++pl->gen;
	sp->page_size = page_size;
	sp->total_size = total_size;
	if (space_take(pl, sp, reserve, &err) != reserve) {
		space_free(pl, sp);
		return err ? err : -ENOSPC;
	}
	pl->sp[pl->nsp++] = sp;
	return 0;
}

uint64_t pl_space_extend(struct placement *pl, uint32_t space,
			 uint64_t bytes)
{
	struct pl_space *sp = space_find(pl, space, NULL);
	int err;

	if (!sp)
		return 0;
	return space_take(pl, sp, bytes / sp->page_size * sp->page_size, &err);
}

int pl_space_del(struct placement *pl, uint32_t space)
{
	unsigned int i;
	struct pl_space *sp = space_find(pl, space, &i);

	if (!sp)
		return -ENOENT;
	pl->sp[i] = pl->sp[--pl->nsp];
	space_free(pl, sp);
	return 0;
}

int pl_space_geometry(struct placement *pl, uint32_t space,
		      uint64_t *page_size, uint64_t *total_size)
{
	struct pl_space *sp = space_find(pl, space, NULL);

	if (!sp)
		return -ENOENT;
	*page_size = sp->page_size;
	*total_size = sp->total_size;
	return 0;
}

uint64_t pl_space_reserved(struct placement *pl, uint32_t space)
{
	struct pl_space *sp = space_find(pl, space, NULL);

	return sp ? sp->reserved : 0;
}

unsigned int pl_nspaces(struct placement *pl)
{
	return pl->nsp;
}

static void fill_loc(struct pl_space *sp, uint64_t slot, struct pl_loc *loc)
{
	struct pl_chunk *c = chunk_of(sp, slot);

	loc->server = c->server;
	loc->offset = c->off + (slot - c->first_slot) * sp->page_size;
	loc->slot = slot;
	loc->gen = sp->gen;
}

static void set_kept(struct pl_space *sp, uint64_t slot, int kept)
{
	if (kept)
		sp->kept[slot / 64] |= 1ULL << (slot % 64);
	else
		sp->kept[slot / 64] &= ~(1ULL << (slot % 64));
}

static int is_kept(const struct pl_space *sp, uint64_t slot)
{
	return (sp->kept[slot / 64] >> (slot % 64)) & 1;
}

/*
 * Take back the slot of a kept copy (the lowest one, on a live server):
 * its page is resident in the kernel, which learns at its DROP that the
 * copy is gone and stores the page instead.  PL_NONE if there is none.
 */
static uint64_t reclaim_kept(struct placement *pl, struct pl_space *sp)
{
	uint64_t w, words = (sp->nslots + 63) / 64, bits, slot;
	struct pl_ent *e;

	for (w = 0; w < words; w++) {
		for (bits = sp->kept[w]; bits; bits &= bits - 1) {
			slot = w * 64 + (uint64_t)__builtin_ctzll(bits);
			if (pl->srv[chunk_of(sp, slot)->server].dead)
				continue;
			e = map_find(sp, sp->owner[slot]);
			if (!e || e->slot != slot)
				continue;	/* cannot happen */
			pl->srv[chunk_of(sp, slot)->server].stored -=
				sp->page_size;
			map_delete(sp, e);
			set_kept(sp, slot, 0);	/* stays used: handed out */
			return slot;
		}
	}
	return PL_NONE;
}

int pl_store(struct placement *pl, uint32_t space, uint64_t dpn,
	     struct pl_loc *loc, int *grew)
{
	struct pl_space *sp = space_find(pl, space, NULL);
	uint64_t slot, step;
	struct pl_ent *e;
	int err;

	if (grew)
		*grew = 0;
	if (!sp)
		return -ENOENT;
	if (dpn >= sp->total_size / sp->page_size)
		return -EINVAL;
	e = map_find(sp, dpn);
	if (e) {
		uint32_t s = chunk_of(sp, e->slot)->server;

		if (!pl->srv[s].dead) {
			set_kept(sp, e->slot, 0);	/* overwritten */
			fill_loc(sp, e->slot, loc);
			return 0;
		}
		/* Its server died: the old copy is lost, place it anew. */
		pl->srv[s].stored -= sp->page_size;
		map_delete(sp, e);
	}
	/*
	 * A space that reserved all of itself (a block device) puts page N
	 * in slot N, so that neighbouring pages are neighbours on a server
	 * and a multi-page request moves in one transfer.
	 */
	slot = PL_NONE;
	if (sp->reserved >= sp->total_size)
		slot = slot_take(sp, dpn);
	if (slot == PL_NONE)
		slot = slot_alloc(sp);
	if (slot == PL_NONE) {
		step = sp->reserved / sp->page_size / 16;
		if (step < PL_GROW_MIN)
			step = PL_GROW_MIN;
		if (step > PL_GROW_MAX)
			step = PL_GROW_MAX;
		if (space_take(pl, sp, step * sp->page_size, &err)) {
			if (grew)
				*grew = 1;
			slot = slot_alloc(sp);
		} else if (err) {
			return err;
		}
	}
	if (slot == PL_NONE)
		slot = reclaim_kept(pl, sp);
	if (slot == PL_NONE)
		return -ENOSPC;
	err = map_insert(sp, dpn, slot);
	if (err) {
		slot_free(pl, sp, slot);
		return err;
	}
	sp->owner[slot] = dpn;
	fill_loc(sp, slot, loc);
	pl->srv[loc->server].stored += sp->page_size;
	return 0;
}

int pl_lookup(struct placement *pl, uint32_t space, uint64_t dpn,
	      struct pl_loc *loc)
{
	struct pl_space *sp = space_find(pl, space, NULL);
	struct pl_ent *e;

	if (!sp)
		return -ENOENT;
	e = map_find(sp, dpn);
	if (!e)
		return -ENODATA;
	fill_loc(sp, e->slot, loc);
	return pl->srv[loc->server].dead ? -EHOSTDOWN : 0;
}

int pl_forget(struct placement *pl, uint32_t space, uint64_t dpn,
	      const struct pl_loc *loc)
{
	struct pl_space *sp = space_find(pl, space, NULL);
	struct pl_ent *e;

	if (!sp || sp->gen != loc->gen)
		return -ESTALE;
	e = map_find(sp, dpn);
	if (!e || e->slot != loc->slot)
		return -ESTALE;
	pl->srv[chunk_of(sp, e->slot)->server].stored -= sp->page_size;
	slot_free(pl, sp, e->slot);
	map_delete(sp, e);
	return 0;
}

int pl_keep(struct placement *pl, uint32_t space, uint64_t dpn,
	    const struct pl_loc *loc)
{
	struct pl_space *sp = space_find(pl, space, NULL);
	struct pl_ent *e;

	if (!sp || sp->gen != loc->gen)
		return -ESTALE;
	e = map_find(sp, dpn);
	if (!e || e->slot != loc->slot ||
	    pl->srv[chunk_of(sp, e->slot)->server].dead)
		return -ESTALE;
	set_kept(sp, e->slot, 1);
	return 0;
}

int pl_drop(struct placement *pl, uint32_t space, uint64_t dpn)
{
	struct pl_space *sp = space_find(pl, space, NULL);
	struct pl_ent *e;

	if (!sp)
		return -ENOENT;
	if (dpn >= sp->total_size / sp->page_size)
		return -EINVAL;
	e = map_find(sp, dpn);
	if (!e || !is_kept(sp, e->slot))
		return -ESTALE;
	set_kept(sp, e->slot, 0);
	if (pl->srv[chunk_of(sp, e->slot)->server].dead)
		return -ESTALE;	/* pl_store places it anew */
	return 0;
}

void pl_server_dead(struct placement *pl, unsigned int server)
{
	unsigned int i;
	uint64_t s, end;
	size_t c;

	if (server >= pl->nsrv || pl->srv[server].dead)
		return;
	pl->srv[server].dead = 1;
	for (i = 0; i < pl->nsp; i++) {
		struct pl_space *sp = pl->sp[i];

		for (c = 0; c < sp->nchunk; c++) {
			if (sp->chunk[c].server != server)
				continue;
			end = sp->chunk[c].first_slot + sp->chunk[c].nslots;
			for (s = sp->chunk[c].first_slot; s < end && s % 64; s++)
				sp->used[s / 64] |= 1ULL << (s % 64);
			for (; s + 64 <= end; s += 64)		/* whole words */
				sp->used[s / 64] = ~0ULL;
			for (; s < end; s++)
				sp->used[s / 64] |= 1ULL << (s % 64);
		}
	}
}

int pl_server_is_dead(struct placement *pl, unsigned int server)
{
	return server < pl->nsrv && pl->srv[server].dead;
}

void pl_server_info(struct placement *pl, unsigned int server,
		    struct pl_server_info *info)
{
	const struct pl_srv *s = &pl->srv[server];

	info->capacity = s->capacity;
	info->free = s->dead ? 0 : s->free_bytes;
	info->stored = s->stored;
	info->dead = s->dead;
}

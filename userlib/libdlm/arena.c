// SPDX-License-Identifier: GPL-2.0
/*
 * arena.c - first-fit allocator over an address range it never touches.
 * See arena.h for the policy.  Blocks tile [base, base + size) exactly:
 * every byte belongs to one block, free or live, and no two free blocks
 * are neighbours (they coalesce).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "arena.h"

struct dlmlib_blk {
	uintptr_t start;
	size_t size;
	bool free;
	struct dlmlib_blk *prev, *next;		/* all blocks, by address */
	struct dlmlib_blk *fprev, *fnext;	/* free list, by address */
	struct dlmlib_blk *hnext;		/* hash chain (live blocks) */
};

static size_t round_up(size_t x, size_t to)
{
	return (x + to - 1) / to * to;
}

static struct dlmlib_blk *blk_new(uintptr_t start, size_t size, bool free)
{
	struct dlmlib_blk *b = calloc(1, sizeof(*b));

	if (b) {
		b->start = start;
		b->size = size;
		b->free = free;
	}
	return b;
}

/* ---- hash of live blocks ------------------------------------------------ */

static size_t hash_of(const struct dlmlib_arena *a, uintptr_t start)
{
	uint64_t x = (uint64_t)(start - a->base) / DLMLIB_ALIGN;

	x *= 0x9E3779B97F4A7C15ULL;
	return (size_t)(x >> 32) & (a->nbuckets - 1);
}

/* Double the table when it is full; on malloc failure keep the old one. */
static void hash_grow(struct dlmlib_arena *a)
{
	size_t i, old_n = a->nbuckets;
	struct dlmlib_blk **old = a->hash, **nh;

	if (a->nlive < old_n)
		return;
	nh = calloc(old_n * 2, sizeof(*nh));
	if (!nh)
		return;
	a->hash = nh;
	a->nbuckets = old_n * 2;
	for (i = 0; i < old_n; i++) {
		struct dlmlib_blk *b = old[i], *n;

		for (; b; b = n) {
			size_t h = hash_of(a, b->start);

			n = b->hnext;
			b->hnext = nh[h];
			nh[h] = b;
		}
	}
	free(old);
}

static void hash_add(struct dlmlib_arena *a, struct dlmlib_blk *b)
{
	size_t h = hash_of(a, b->start);

	b->hnext = a->hash[h];
	a->hash[h] = b;
	a->nlive++;
	hash_grow(a);
}

static struct dlmlib_blk *hash_find(struct dlmlib_arena *a, uintptr_t start,
				    bool unlink)
{
	struct dlmlib_blk **pp = &a->hash[hash_of(a, start)];

	for (; *pp; pp = &(*pp)->hnext) {
		struct dlmlib_blk *b = *pp;

		if (b->start != start)
			continue;
		if (unlink) {
			*pp = b->hnext;
			b->hnext = NULL;
			a->nlive--;
		}
		return b;
	}
	return NULL;
}

/* ---- list helpers ------------------------------------------------------- */

static void all_insert_after(struct dlmlib_blk *pos, struct dlmlib_blk *b)
{
	b->prev = pos;
	b->next = pos->next;
	if (pos->next)
		pos->next->prev = b;
	pos->next = b;
}

static void all_unlink(struct dlmlib_blk *b)
{
	if (b->prev)
		b->prev->next = b->next;
	if (b->next)
		b->next->prev = b->prev;
}

/* Put free block @b into the free list right after @pos (NULL: at head). */
static void free_insert_after(struct dlmlib_arena *a, struct dlmlib_blk *pos,
			      struct dlmlib_blk *b)
{
	struct dlmlib_blk *n = pos ? pos->fnext : a->free_head;

	b->fprev = pos;
	b->fnext = n;
	if (n)
		n->fprev = b;
	if (pos)
		pos->fnext = b;
	else
		a->free_head = b;
	a->nfree++;
}

static void free_unlink(struct dlmlib_arena *a, struct dlmlib_blk *b)
{
	if (b->fprev)
		b->fprev->fnext = b->fnext;
	else
		a->free_head = b->fnext;
	if (b->fnext)
		b->fnext->fprev = b->fprev;
	b->fprev = b->fnext = NULL;
	a->nfree--;
}

/* ---- API ---------------------------------------------------------------- */

int dlmlib_arena_init(struct dlmlib_arena *a, uintptr_t base, size_t size,
		      size_t big_align)
{
	struct dlmlib_blk *b;

	if (!base || !size || base % DLMLIB_ALIGN || size % DLMLIB_ALIGN ||
	    big_align % DLMLIB_ALIGN || base + size < base) {
		errno = EINVAL;
		return -1;
	}
	*a = (struct dlmlib_arena){ .base = base, .size = size,
				    .big_align = big_align, .nbuckets = 64 };
	a->hash = calloc(a->nbuckets, sizeof(*a->hash));
	b = blk_new(base, size, true);
	if (!a->hash || !b || pthread_mutex_init(&a->lock, NULL)) {
		free(a->hash);
		free(b);
		errno = ENOMEM;
		return -1;
	}
	a->head = b;
	free_insert_after(a, NULL, b);
	return 0;
}

void dlmlib_arena_destroy(struct dlmlib_arena *a)
{
	struct dlmlib_blk *b, *n;

	for (b = a->head; b; b = n) {
		n = b->next;
		free(b);
	}
	free(a->hash);
	pthread_mutex_destroy(&a->lock);
	*a = (struct dlmlib_arena){ 0 };
}

/* Where a block of @n bytes would start inside free block @f, or 0. */
static uintptr_t fit(const struct dlmlib_arena *a, const struct dlmlib_blk *f,
		     size_t n)
{
	uintptr_t s = f->start, end = f->start + f->size;

	if (a->big_align && n >= a->big_align)
		s = a->base + round_up(s - a->base, a->big_align);
	if (s > end || end - s < n)
		return 0;
	return s;
}

static void *alloc_locked(struct dlmlib_arena *a, size_t size)
{
	struct dlmlib_blk *f, *u = NULL, *t = NULL;
	uintptr_t s = 0, end;
	size_t n;

	if (!size)
		size = 1;
	if (size > a->size)
		goto nomem;
	n = round_up(size, DLMLIB_ALIGN);
	for (f = a->free_head; f; f = f->fnext) {
		s = fit(a, f, n);
		if (s)
			break;
	}
	if (!f)
		goto nomem;
	end = f->start + f->size;

	/* Get every node first so that a failure changes nothing. */
	if (s > f->start && !(u = blk_new(s, n, false)))
		goto nomem;
	if (s + n < end && !(t = blk_new(s + n, end - s - n, true))) {
		free(u);
		goto nomem;
	}

	if (u) {			/* f keeps the free front part */
		f->size = s - f->start;
		all_insert_after(f, u);
		if (t) {
			all_insert_after(u, t);
			free_insert_after(a, f, t);
		}
	} else {			/* f itself becomes the live block */
		u = f;
		if (t) {
			all_insert_after(u, t);
			free_insert_after(a, f, t);
		}
		free_unlink(a, f);
		u->free = false;
		u->size = n;
	}
	hash_add(a, u);
	a->bytes_used += n;
	return (void *)u->start;

nomem:
	errno = ENOMEM;
	return NULL;
}

void *dlmlib_arena_alloc(struct dlmlib_arena *a, size_t size)
{
	void *p;

	pthread_mutex_lock(&a->lock);
	p = alloc_locked(a, size);
	pthread_mutex_unlock(&a->lock);
	return p;
}

/* The free block closest before @b in address order, or NULL. */
static struct dlmlib_blk *free_before(struct dlmlib_arena *a,
				      struct dlmlib_blk *b)
{
	struct dlmlib_blk *f, *last = NULL;

	for (f = a->free_head; f && f->start < b->start; f = f->fnext)
		last = f;
	return last;
}

static int free_locked(struct dlmlib_arena *a, void *p)
{
	struct dlmlib_blk *b, *prev, *next;

	if (!a->hash || (uintptr_t)p % DLMLIB_ALIGN)
		goto inval;
	b = hash_find(a, (uintptr_t)p, true);
	if (!b)
		goto inval;
	a->bytes_used -= b->size;
	b->free = true;
	prev = b->prev;
	next = b->next;

	if (prev && prev->free) {		/* grow prev over b */
		prev->size += b->size;
		all_unlink(b);
		free(b);
		b = prev;
	} else if (next && next->free) {	/* b takes next's place */
		free_insert_after(a, next->fprev, b);
	} else {
		free_insert_after(a, free_before(a, b), b);
	}
	if (next && next->free) {		/* swallow next */
		b->size += next->size;
		free_unlink(a, next);
		all_unlink(next);
		free(next);
	}
	return 0;

inval:
	errno = EINVAL;
	return -1;
}

int dlmlib_arena_free(struct dlmlib_arena *a, void *p)
{
	int ret;

	pthread_mutex_lock(&a->lock);
	ret = free_locked(a, p);
	pthread_mutex_unlock(&a->lock);
	return ret;
}

size_t dlmlib_arena_size(struct dlmlib_arena *a, const void *p)
{
	struct dlmlib_blk *b;
	size_t n = 0;

	pthread_mutex_lock(&a->lock);
	if (a->hash && (uintptr_t)p % DLMLIB_ALIGN == 0) {
		b = hash_find(a, (uintptr_t)p, false);
		n = b ? b->size : 0;
	}
	pthread_mutex_unlock(&a->lock);
	return n;
}

void dlmlib_arena_stats(struct dlmlib_arena *a, struct dlmlib_arena_stats *st)
{
	struct dlmlib_blk *f;

	pthread_mutex_lock(&a->lock);
	*st = (struct dlmlib_arena_stats){
		.bytes_used = a->bytes_used,
		.bytes_free = a->size - a->bytes_used,
		.allocations = a->nlive,
		.free_fragments = a->nfree,
	};
	for (f = a->free_head; f; f = f->fnext)
		if (f->size > st->largest_free)
			st->largest_free = f->size;
	pthread_mutex_unlock(&a->lock);
}

static const char *check_locked(struct dlmlib_arena *a)
{
	struct dlmlib_blk *b, *f = a->free_head, *fprev = NULL;
	uintptr_t at = a->base;
	size_t used = 0, nlive = 0, nfree = 0;

	if (!a->head || a->head->prev)
		return "block list has no proper head";
	for (b = a->head; b; b = b->next) {
		if (b->start != at)
			return "blocks do not tile the range (gap or overlap)";
		if (!b->size || b->size % DLMLIB_ALIGN)
			return "block size zero or not a multiple of the alignment";
		if (b->next && b->next->prev != b)
			return "block list back link broken";
		at += b->size;
		if (b->free) {
			if (b->next && b->next->free)
				return "two neighbouring free blocks (not coalesced)";
			if (f != b || b->fprev != fprev)
				return "free list does not match the free blocks";
			if (hash_find(a, b->start, false))
				return "free block in the live hash";
			fprev = f;
			f = f->fnext;
			nfree++;
		} else {
			if (hash_find(a, b->start, false) != b)
				return "live block missing from the hash";
			used += b->size;
			nlive++;
		}
	}
	if (at != a->base + a->size)
		return "blocks do not end at the end of the range";
	if (f)
		return "free list has blocks that are not in the block list";
	if (used != a->bytes_used || nlive != a->nlive || nfree != a->nfree)
		return "counters disagree with the lists";
	return NULL;
}

const char *dlmlib_arena_check(struct dlmlib_arena *a)
{
	const char *err;

	pthread_mutex_lock(&a->lock);
	err = check_locked(a);
	pthread_mutex_unlock(&a->lock);
	return err;
}

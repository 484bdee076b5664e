/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arena.h - the libdlm allocator, internal.
 *
 * An arena hands out ranges of an address interval [base, base + size)
 * that it never dereferences: every piece of metadata (block list, free
 * list, hash of live blocks) lives in ordinary malloc() memory, so
 * allocating from a DLM space faults in no DLM page.  That also makes the
 * allocator testable over any made-up address range (userlib/tests).
 *
 * Policy: first fit in address order, sizes rounded up to DLMLIB_ALIGN,
 * blocks of at least @big_align bytes start at base + k * big_align (a DLM
 * page boundary), neighbouring free blocks coalesce on free.  Cost: O(free
 * fragments) per call, O(1) expected for the pointer lookup in free.
 * Every function is thread-safe (one mutex per arena).
 */
#ifndef DLMLIB_ARENA_H
#define DLMLIB_ARENA_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define DLMLIB_ALIGN	64

struct dlmlib_blk;

struct dlmlib_arena {
	pthread_mutex_t lock;
	uintptr_t base;
	size_t size;
	size_t big_align;		/* 0: no page alignment */
	struct dlmlib_blk *head;	/* every block, by address */
	struct dlmlib_blk *free_head;	/* free blocks, by address */
	struct dlmlib_blk **hash;	/* live blocks by start address */
	size_t nbuckets;
	size_t nlive;			/* live allocations */
	size_t nfree;			/* free blocks */
	size_t bytes_used;		/* sum of live block sizes */
};

struct dlmlib_arena_stats {
	size_t bytes_used;
	size_t bytes_free;
	size_t largest_free;
	size_t allocations;
	size_t free_fragments;
};

/*
 * Set up @a over [@base, @base + @size).  @base and @size must be non-zero
 * multiples of DLMLIB_ALIGN, @big_align 0 or a multiple of
 * DLMLIB_ALIGN.  0, or -1 with errno EINVAL / ENOMEM.
 */
int dlmlib_arena_init(struct dlmlib_arena *a, uintptr_t base, size_t size,
		      size_t big_align);
/* Free all metadata; outstanding allocations are forgotten. */
void dlmlib_arena_destroy(struct dlmlib_arena *a);
/* A block of at least @size bytes (0 counts as 1), or NULL + ENOMEM. */
void *dlmlib_arena_alloc(struct dlmlib_arena *a, size_t size);
/* Release a block: 0, or -1 (errno EINVAL) if @p is not a live block. */
int dlmlib_arena_free(struct dlmlib_arena *a, void *p);
/* Size of the live block at @p (rounded), or 0 if @p is not one. */
size_t dlmlib_arena_size(struct dlmlib_arena *a, const void *p);
void dlmlib_arena_stats(struct dlmlib_arena *a, struct dlmlib_arena_stats *st);
/* Verify every invariant: NULL if consistent, else what is broken. */
const char *dlmlib_arena_check(struct dlmlib_arena *a);

#endif /* DLMLIB_ARENA_H */

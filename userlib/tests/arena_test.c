// SPDX-License-Identifier: GPL-2.0
/*
 * arena_test - the libdlm allocator over made-up address ranges (nothing
 * is mapped there, so any access to the managed memory would crash):
 * rounding, DLM-page alignment, first fit, reuse, coalescing, ENOMEM,
 * invalid frees, a brute-force first-fit model, and threads.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "arena.h"

#define KB	1024UL
#define MB	(1024UL * KB)
/* High, unmapped, 1 GB aligned. */
#define BASE	((uintptr_t)0x7e0000000000ULL)

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uintptr_t A(struct dlmlib_arena *a, size_t n)
{
	return (uintptr_t)dlmlib_arena_alloc(a, n);
}

static int F(struct dlmlib_arena *a, uintptr_t p)
{
	return dlmlib_arena_free(a, (void *)p);
}

#define CHECK(a) ASSERT_EQ(NULL, dlmlib_arena_check(a))

TEST(init_rejects_bad_ranges)
{
	struct dlmlib_arena a;

	errno = 0;
	ASSERT_EQ(-1, dlmlib_arena_init(&a, 0, MB, 0));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, dlmlib_arena_init(&a, BASE, 0, 0));
	ASSERT_EQ(-1, dlmlib_arena_init(&a, BASE + 8, MB, 0));
	ASSERT_EQ(-1, dlmlib_arena_init(&a, BASE, MB + 8, 0));
	ASSERT_EQ(-1, dlmlib_arena_init(&a, BASE, MB, 100));
	ASSERT_EQ(-1, dlmlib_arena_init(&a, UINTPTR_MAX - 127, 256, 0));
	ASSERT_EQ(0, dlmlib_arena_init(&a, BASE, MB, 0));
	CHECK(&a);
	dlmlib_arena_destroy(&a);
}

TEST(whole_range_then_full)
{
	struct dlmlib_arena a;
	struct dlmlib_arena_stats st;

	ASSERT_EQ(0, dlmlib_arena_init(&a, BASE, MB, 64 * KB));
	ASSERT_EQ(BASE, A(&a, MB));
	errno = 0;
	ASSERT_EQ(0, A(&a, 1));
	ASSERT_EQ(ENOMEM, errno);
	dlmlib_arena_stats(&a, &st);
	ASSERT_EQ(MB, st.bytes_used);
	ASSERT_EQ(0, st.bytes_free);
	ASSERT_EQ(0, st.free_fragments);
	CHECK(&a);
	ASSERT_EQ(0, F(&a, BASE));
	dlmlib_arena_stats(&a, &st);
	ASSERT_EQ(MB, st.largest_free);
	ASSERT_EQ(1, st.free_fragments);
	ASSERT_EQ(0, st.allocations);
	CHECK(&a);
	dlmlib_arena_destroy(&a);
}

TEST(rounding_and_zero_size)
{
	struct dlmlib_arena a;
	uintptr_t p, q, r;

	ASSERT_EQ(0, dlmlib_arena_init(&a, BASE, MB, 64 * KB));
	p = A(&a, 1);
	q = A(&a, 0);
	r = A(&a, 65);
	ASSERT_EQ(BASE, p);
	ASSERT_EQ(BASE + 64, q);		/* size 0: a unique block */
	ASSERT_EQ(BASE + 128, r);
	ASSERT_EQ(64, dlmlib_arena_size(&a, (void *)p));
	ASSERT_EQ(64, dlmlib_arena_size(&a, (void *)q));
	ASSERT_EQ(128, dlmlib_arena_size(&a, (void *)r));
	ASSERT_EQ(0, dlmlib_arena_size(&a, (void *)(r + 64)));
	CHECK(&a);
	dlmlib_arena_destroy(&a);
}

TEST(big_blocks_start_on_dlm_pages)
{
	struct dlmlib_arena a;
	uintptr_t small, big, gap, big2;

	ASSERT_EQ(0, dlmlib_arena_init(&a, BASE, 16 * MB, MB));
	small = A(&a, 100);
	big = A(&a, MB);
	ASSERT_EQ(BASE, small);
	ASSERT_EQ(BASE + MB, big);
	gap = A(&a, 1000);		/* first fit: into the gap */
	ASSERT_EQ(BASE + 128, gap);
	big2 = A(&a, MB + 1);		/* after big, page aligned */
	ASSERT_EQ(BASE + 2 * MB, big2);
	ASSERT_EQ(BASE + 4 * MB, A(&a, 3 * MB));
	ASSERT_EQ(BASE + 1152, A(&a, 64 * KB));	/* small: still in the gap */
	ASSERT_EQ(BASE + 3 * MB + 64, A(&a, MB - 1152 - 64 * KB + 1));
	CHECK(&a);
	dlmlib_arena_destroy(&a);
}

TEST(odd_dlm_page_size)
{
	struct dlmlib_arena a;
	uintptr_t p;
	int i;

	/* 12 KB pages are legal: alignment is relative to the base. */
	ASSERT_EQ(0, dlmlib_arena_init(&a, BASE + 4096, 12 * 12 * KB, 12 * KB));
	ASSERT_EQ(BASE + 4096, A(&a, 64));
	for (i = 0; i < 5; i++) {
		p = A(&a, 12 * KB + 64 * i);
		ASSERT_NE(0, p);
		ASSERT_EQ(0, (p - BASE - 4096) % (12 * KB));
	}
	CHECK(&a);
	dlmlib_arena_destroy(&a);
}

TEST(first_fit_reuses_freed_space)
{
	struct dlmlib_arena a;
	uintptr_t p[4];

	ASSERT_EQ(0, dlmlib_arena_init(&a, BASE, MB, 0));
	p[0] = A(&a, 100);
	p[1] = A(&a, 300);
	p[2] = A(&a, 100);
	p[3] = A(&a, 100);
	ASSERT_EQ(0, F(&a, p[1]));
	ASSERT_EQ(p[1], A(&a, 50));		/* lowest hole that fits */
	ASSERT_EQ(p[1] + 64, A(&a, 200));	/* the rest of it */
	ASSERT_EQ(p[3] + 128, A(&a, 64));	/* hole full: after p[3] */
	CHECK(&a);
	dlmlib_arena_destroy(&a);
}

/* Free in orders that hit every coalescing case; end with one block. */
TEST(coalescing_every_case)
{
	static const int orders[][5] = {
		{ 0, 1, 2, 3, 4 }, { 4, 3, 2, 1, 0 }, { 1, 3, 2, 0, 4 },
		{ 0, 2, 4, 1, 3 }, { 2, 0, 4, 3, 1 },
	};
	struct dlmlib_arena a;
	struct dlmlib_arena_stats st;
	uintptr_t p[5];
	unsigned int o, i;

	for (o = 0; o < sizeof(orders) / sizeof(orders[0]); o++) {
		ASSERT_EQ(0, dlmlib_arena_init(&a, BASE, 5 * 4096, 0));
		for (i = 0; i < 5; i++)
			ASSERT_EQ(BASE + i * 4096, A(&a, 4096));
		for (i = 0; i < 5; i++) {
			p[i] = BASE + orders[o][i] * 4096;
			ASSERT_EQ(0, F(&a, p[i]));
			CHECK(&a);
		}
		dlmlib_arena_stats(&a, &st);
		ASSERT_EQ(1, st.free_fragments);
		ASSERT_EQ(5 * 4096, st.largest_free);
		dlmlib_arena_destroy(&a);
	}
}

TEST(invalid_frees_change_nothing)
{
	struct dlmlib_arena a;
	struct dlmlib_arena_stats st;
	uintptr_t p, q;

	ASSERT_EQ(0, dlmlib_arena_init(&a, BASE, MB, 0));
	p = A(&a, 1000);
	q = A(&a, 1000);
	errno = 0;
	ASSERT_EQ(-1, F(&a, p + 64));		/* into a block */
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, F(&a, p + 1));		/* unaligned */
	ASSERT_EQ(-1, F(&a, BASE + MB));	/* past the end */
	ASSERT_EQ(-1, F(&a, BASE - 4096));	/* before the start */
	ASSERT_EQ(-1, F(&a, q + 1024));		/* free space */
	ASSERT_EQ(0, F(&a, p));
	ASSERT_EQ(-1, F(&a, p));		/* double free */
	CHECK(&a);
	dlmlib_arena_stats(&a, &st);
	ASSERT_EQ(1, st.allocations);
	ASSERT_EQ(1024, st.bytes_used);
	dlmlib_arena_destroy(&a);
}

TEST(enomem_cases)
{
	struct dlmlib_arena a;
	struct dlmlib_arena_stats st;
	uintptr_t p[64];
	int i;

	ASSERT_EQ(0, dlmlib_arena_init(&a, BASE, 64 * 64, 0));
	errno = 0;
	ASSERT_EQ(0, A(&a, 64 * 64 + 1));
	ASSERT_EQ(ENOMEM, errno);
	ASSERT_EQ(0, A(&a, SIZE_MAX));
	ASSERT_EQ(0, A(&a, SIZE_MAX - 10));
	for (i = 0; i < 64; i++)
		ASSERT_NE(0, p[i] = A(&a, 64));
	for (i = 0; i < 64; i += 2)
		ASSERT_EQ(0, F(&a, p[i]));
	dlmlib_arena_stats(&a, &st);
	ASSERT_EQ(32 * 64, st.bytes_free);
	ASSERT_EQ(64, st.largest_free);
	ASSERT_EQ(32, st.free_fragments);
	ASSERT_EQ(0, A(&a, 65));		/* fragmented: nothing fits */
	CHECK(&a);
	dlmlib_arena_destroy(&a);
}

/*
 * Random allocations and frees against a brute-force model of first fit
 * over 64-byte units: every result must be the model's.
 */
#define UNITS	(1 << 14)		/* 1 MB */
#define PAGE	(4096 / 64)		/* big_align 4 KB, in units */

static long model_fit(const unsigned char *used, size_t n)
{
	size_t s, k, step = n >= PAGE ? PAGE : 1;

	for (s = 0; s + n <= UNITS; s += step) {
		for (k = 0; k < n && !used[s + k]; k++)
			;
		if (k == n)
			return (long)s;
	}
	return -1;
}

TEST(random_against_first_fit_model)
{
	static unsigned char used[UNITS];
	struct dlmlib_arena a;
	struct { uintptr_t p; size_t n; } live[256];
	size_t nlive = 0, n, k, i;
	uint64_t seed = 0x1234567;
	long want;
	int op;

	memset(used, 0, sizeof(used));
	ASSERT_EQ(0, dlmlib_arena_init(&a, BASE, UNITS * 64, PAGE * 64));
	for (op = 0; op < 20000; op++) {
		if (nlive < 256 && (rnd(&seed) % 3 || !nlive)) {
			size_t bytes = rnd(&seed) % 4 ? rnd(&seed) % 2000 + 1 :
						rnd(&seed) % (64 * KB) + 1;
			uintptr_t p = A(&a, bytes);

			n = (bytes + 63) / 64;
			want = model_fit(used, n);
			if (want < 0) {
				ASSERT_EQ(0, p);
				continue;
			}
			ASSERT_EQ(BASE + (uintptr_t)want * 64, p);
			memset(used + want, 1, n);
			live[nlive].p = p;
			live[nlive++].n = n;
		} else {
			i = rnd(&seed) % nlive;
			ASSERT_EQ(0, F(&a, live[i].p));
			k = (live[i].p - BASE) / 64;
			memset(used + k, 0, live[i].n);
			live[i] = live[--nlive];
		}
		if (op % 500 == 0)
			CHECK(&a);
	}
	while (nlive)
		ASSERT_EQ(0, F(&a, live[--nlive].p));
	CHECK(&a);
	ASSERT_EQ(BASE, A(&a, UNITS * 64));
	dlmlib_arena_destroy(&a);
}

/* Threads allocate and free at once; no block may overlap another. */
#define NTHREADS	4
#define PER_THREAD	64

struct worker {
	struct dlmlib_arena *a;
	uint64_t seed;
	uintptr_t p[PER_THREAD];
	size_t n[PER_THREAD];
	int errors;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	int op, i;

	for (op = 0; op < 20000; op++) {
		i = (int)(rnd(&w->seed) % PER_THREAD);
		if (w->p[i]) {
			if (dlmlib_arena_size(w->a, (void *)w->p[i]) <
			    w->n[i] || F(w->a, w->p[i]))
				w->errors++;
			w->p[i] = 0;
		} else {
			w->n[i] = rnd(&w->seed) % 20000 + 1;
			w->p[i] = A(w->a, w->n[i]);
		}
	}
	return NULL;
}

static int cmp_uptr(const void *x, const void *y)
{
	uintptr_t a = *(const uintptr_t *)x, b = *(const uintptr_t *)y;

	return a < b ? -1 : a > b;
}

TEST(threads)
{
	static struct worker w[NTHREADS];
	uintptr_t all[NTHREADS * PER_THREAD];
	struct dlmlib_arena a;
	pthread_t t[NTHREADS];
	size_t n = 0, i, j;

	ASSERT_EQ(0, dlmlib_arena_init(&a, BASE, 64 * MB, MB));
	for (i = 0; i < NTHREADS; i++) {
		w[i] = (struct worker){ .a = &a, .seed = 99 + i };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, work, &w[i]));
	}
	for (i = 0; i < NTHREADS; i++)
		ASSERT_EQ(0, pthread_join(t[i], NULL));
	CHECK(&a);
	for (i = 0; i < NTHREADS; i++) {
		ASSERT_EQ(0, w[i].errors);
		for (j = 0; j < PER_THREAD; j++)
			if (w[i].p[j])
				all[n++] = w[i].p[j];
	}
	qsort(all, n, sizeof(all[0]), cmp_uptr);
	for (i = 0; i + 1 < n; i++)
		ASSERT_LE(all[i] + dlmlib_arena_size(&a, (void *)all[i]),
			  all[i + 1]);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, F(&a, all[i]));
	CHECK(&a);
	dlmlib_arena_destroy(&a);
}

TEST_HARNESS_MAIN

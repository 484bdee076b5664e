// SPDX-License-Identifier: GPL-2.0
/*
 * preload_prog - an ordinary program (no libdlm) that preload_test.sh runs
 * under LD_PRELOAD=libdlm-preload.so with DLM_PRELOAD_MIN=1M.  It checks
 * what the interposer promises: which allocations land in /dev/dlm, zeroed
 * memory where C and mmap promise it, data kept across realloc and
 * mremap, alignment, threads, fork, and a working set larger than the
 * local budget read back word by word.  TAP on stdout.
 *
 *	preload_prog WORKING_SET_MB
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MB	(1UL << 20)

static int n, failed;

static void result(int ok, const char *what)
{
	printf("%sok %d - %s\n", ok ? "" : "not ", ++n, what);
	if (!ok)
		failed = 1;
	fflush(stdout);
}

/* 1 if @p lies in a mapping of /dev/dlm. */
static int in_dlm(const void *p)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int ret = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t a, b;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &a, &b) == 2 &&
		    (uintptr_t)p >= a && (uintptr_t)p < b) {
			ret = strstr(line, "/dev/dlm") != NULL;
			break;
		}
	}
	fclose(f);
	return ret;
}

static uint64_t pat(uint64_t i, uint64_t seed)
{
	uint64_t x = i * 0x9E3779B97F4A7C15ULL ^ seed;

	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ULL;
	return x ^ (x >> 29);
}

static void fill(uint64_t *p, size_t bytes, uint64_t seed)
{
	size_t i;

	for (i = 0; i < bytes / 8; i++)
		p[i] = pat(i, seed);
}

static size_t bad_words(const uint64_t *p, size_t bytes, uint64_t seed)
{
	size_t i, bad = 0;

	for (i = 0; i < bytes / 8; i++)
		bad += p[i] != pat(i, seed);
	return bad;
}

static int all_zero(const void *v, size_t bytes)
{
	const unsigned char *p = v;
	size_t i;

	for (i = 0; i < bytes; i++)
		if (p[i])
			return 0;
	return 1;
}

static void *worker(void *arg)
{
	uint64_t seed = (uintptr_t)arg;
	size_t bad = 0;
	int round;

	for (round = 0; round < 8; round++) {
		size_t sz = (1 + (seed + round) % 3) * MB + 4096 * round;
		uint64_t *p = malloc(sz);

		if (!p || !in_dlm(p))
			return (void *)1;
		fill(p, sz, seed * 100 + round);
		bad += bad_words(p, sz, seed * 100 + round);
		free(p);
	}
	return (void *)(uintptr_t)(bad != 0);
}

int main(int argc, char **argv)
{
	size_t ws = (argc > 1 ? strtoul(argv[1], NULL, 10) : 64) * MB;
	uint64_t *big, *q, *arrays[4];
	pthread_t th[4];
	void *p = NULL, *m;
	char *small;
	size_t bad, i;
	int st, ok;
	pid_t pid;

	printf("TAP version 13\n1..14\n");

	small = malloc(1000);
	big = malloc(2 * MB);
	result(small && !in_dlm(small) && big && in_dlm(big),
	       "malloc: 1000 bytes stay in glibc's heap, 2 MB come from /dev/dlm");
	free(small);

	memset(big, 0xff, 2 * MB);
	free(big);
	q = calloc(2 * MB / 8, 8);
	result(q && in_dlm(q) && all_zero(q, 2 * MB),
	       "calloc over a reused DLM range reads zero");

	fill(q, 2 * MB, 1);
	q = realloc(q, 6 * MB);
	result(q && in_dlm(q) && !bad_words(q, 2 * MB, 1),
	       "realloc 2 MB -> 6 MB keeps the data");
	q = realloc(q, 1 * MB + 8);
	result(q && !bad_words(q, 1 * MB, 1), "realloc 6 MB -> 1 MB keeps the data");
	small = malloc(4000);
	memset(small, 0x5a, 4000);
	small = realloc(small, 3 * MB);
	result(small && in_dlm(small) && small[3999] == 0x5a && small[0] == 0x5a,
	       "realloc of a glibc block to 3 MB moves it to DLM with its data");
	free(small);
	free(q);

	ok = !posix_memalign(&p, 4096, 4 * MB) && in_dlm(p) &&
	     !((uintptr_t)p % 4096);
	free(p);
	m = aligned_alloc(64, 2 * MB);
	ok = ok && m && in_dlm(m) && !((uintptr_t)m % 64) &&
	     malloc_usable_size(m) >= 2 * MB;
	free(m);
	result(ok, "posix_memalign(4096, 4 MB), aligned_alloc(64, 2 MB): DLM, aligned, usable size");

	m = mmap(NULL, 3 * MB, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ok = m != MAP_FAILED && in_dlm(m) && all_zero(m, 3 * MB);
	fill(m, 3 * MB, 2);
	p = mremap(m, 3 * MB, 5 * MB, MREMAP_MAYMOVE);
	ok = ok && p != MAP_FAILED && !bad_words(p, 3 * MB, 2) &&
	     !munmap(p, 5 * MB);
	result(ok, "private anonymous mmap of 3 MB: DLM, zero; mremap to 5 MB keeps the data; munmap");

	m = mmap(NULL, 3 * MB, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	result(m != MAP_FAILED && !in_dlm(m) && !munmap(m, 3 * MB),
	       "shared anonymous mmap (memory shared with children) stays with the kernel");

	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	ok = 1;
	for (i = 0; i < 4; i++) {
		void *r;

		pthread_join(th[i], &r);
		ok = ok && !r;
	}
	result(ok, "4 threads allocate, fill, check and free DLM blocks at once");

	big = malloc(2 * MB);
	fill(big, 2 * MB, 3);
	pid = fork();
	if (!pid) {
		uint64_t *c = malloc(4 * MB);

		/* The child's own space: new blocks, never the parent's. */
		if (!c || !in_dlm(c) || bad_words(big, 2 * MB, 3))
			_exit(1);
		fill(c, 4 * MB, 4);
		if (bad_words(c, 4 * MB, 4))
			_exit(2);
		free(big);	/* the parent's: left alone */
		free(c);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	result(WIFEXITED(st) && !WEXITSTATUS(st) && !bad_words(big, 2 * MB, 3),
	       "fork: the child sees the parent's block, allocates its own, frees neither's data");
	q = malloc(2 * MB);
	result(q && q != big && !bad_words(big, 2 * MB, 3),
	       "after fork the parent's blocks are intact and its allocator goes on");
	free(q);
	free(big);

	/* A working set larger than the local budget, in four arrays. */
	for (i = 0; i < 4; i++) {
		arrays[i] = malloc(ws / 4);
		if (!arrays[i])
			break;
		fill(arrays[i], ws / 4, 10 + i);
	}
	bad = i < 4;
	for (i = 0; i < 4 && !bad; i++)
		bad += bad_words(arrays[i], ws / 4, 10 + i);
	printf("# working set %zu MB: %zu bad words\n", ws / MB, bad);
	result(!bad, "a working set larger than the local budget reads back word for word");
	for (i = 0; i < 4; i++)
		free(arrays[i]);

	result(malloc(SIZE_MAX / 2) == NULL, "an impossible malloc returns NULL");
	p = malloc(0);
	result(p != NULL, "malloc(0) still works");
	free(p);
	return failed;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the /dev/fmpl selftests: ranks as forked children of
 * the test (each with FMPL_RANK/FMPL_SIZE and a key of its own test),
 * shared memory between them, data patterns that depend on rank, size and
 * iteration, and a main() that skips when /dev/fmpl is absent.
 *
 * A rank runs a function of the test; an ASSERT_* failing in it aborts
 * that rank only (its peers then see it leave), and the test fails when
 * any rank did not exit 0.
 */
#ifndef FMPL_SELFTEST_UTIL_H
#define FMPL_SELFTEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/fmpl.h>

#define FMPL_DEV	"/dev/fmpl"
#define KB		1024UL
#define MB		(1024UL * KB)
#define RANKS_MAX	16
#define WORLD		FMPL_COMM_WORLD

typedef void (*rank_fn)(struct __test_metadata *_metadata, int rank, int size,
			void *arg);

static inline uint64_t fresh_key(void)
{
	uint64_t k = 0;

	while (!k)
		if (getrandom(&k, sizeof(k), 0) != sizeof(k))
			k = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
	return k;
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Anonymous memory shared by the test and its ranks (zeroed). */
static inline void *shared(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The environment of rank @rank of a world of @size ranks named @key. */
static inline void rank_env(int rank, int size, uint64_t key)
{
	char v[32];

	snprintf(v, sizeof(v), "%d", rank);
	setenv("FMPL_RANK", v, 1);
	snprintf(v, sizeof(v), "%d", size);
	setenv("FMPL_SIZE", v, 1);
	snprintf(v, sizeof(v), "%#llx", (unsigned long long)key);
	setenv("FMPL_KEY", v, 1);
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("PMI_RANK");
	unsetenv("FMPL_COLL");
	unsetenv("FMPL_MODE");
	unsetenv("FMPL_SPIN_US");
	unsetenv("FMPL_FAST");
	if (!getenv("FMPL_JOIN_TIMEOUT_MS"))
		setenv("FMPL_JOIN_TIMEOUT_MS", "10000", 1);
}

/* Fork @n ranks running @fn; their pids in @pids. */
static inline void start_ranks(struct __test_metadata *_metadata, int n,
			       rank_fn fn, void *arg, pid_t *pids)
{
	uint64_t key = fresh_key();
	int r;

	fflush(stdout);
	fflush(stderr);
	for (r = 0; r < n; r++) {
		pids[r] = fork();
		if (pids[r] < 0) {
			TH_LOG("fork: %s", strerror(errno));
			_metadata->passed = 0;
			return;
		}
		if (!pids[r]) {
			struct rlimit nocore = { 0, 0 };

			setrlimit(RLIMIT_CORE, &nocore);
			rank_env(r, n, key);
			fn(_metadata, r, n, arg);
			_exit(_metadata->passed ? 0 : 1);
		}
	}
}

/*
 * Wait for the ranks; a rank in @killed (bit r) may have died of SIGKILL.
 * Returns the number of ranks that failed.
 */
static inline int wait_ranks_killed(struct __test_metadata *_metadata, int n,
				    pid_t *pids, unsigned int killed)
{
	int r, status, bad = 0;

	for (r = 0; r < n; r++) {
		if (waitpid(pids[r], &status, 0) != pids[r]) {
			TH_LOG("rank %d: waitpid: %s", r, strerror(errno));
			bad++;
		} else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
			   (killed & (1U << r))) {
			continue;
		} else if (WIFSIGNALED(status)) {
			TH_LOG("rank %d died of signal %d", r, WTERMSIG(status));
			bad++;
		} else if (WEXITSTATUS(status)) {
			TH_LOG("rank %d exited with status %d", r,
			       WEXITSTATUS(status));
			bad++;
		}
	}
	return bad;
}

static inline int wait_ranks(struct __test_metadata *_metadata, int n,
			     pid_t *pids)
{
	return wait_ranks_killed(_metadata, n, pids, 0);
}

/* Run @fn on @n ranks of a fresh world; every rank must exit 0. */
#define RUN_RANKS(n, fn, arg) do {					\
	pid_t pids_[RANKS_MAX];						\
									\
	start_ranks(_metadata, (n), (fn), (arg), pids_);		\
	ASSERT_EQ(0, wait_ranks(_metadata, (n), pids_));		\
} while (0)

/* libfmpl's fmpl_init in a rank: must succeed. */
#define INIT(count) do {						\
	int ier_ = -1;							\
									\
	fmpl_init(NULL, NULL, (count), &ier_);				\
	ASSERT_EQ(FMPL_SUCCESS, ier_);					\
} while (0)

#define FINALIZE() ASSERT_EQ(FMPL_SUCCESS, fmpl_finalize(NULL))

/* ---- data --------------------------------------------------------------- */

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* The seed of a message from @rank in a world of @size, iteration @iter. */
static inline uint64_t seed_of(int rank, int size, int iter, int what)
{
	return mix64(((uint64_t)rank << 48) ^ ((uint64_t)size << 40) ^
		     ((uint64_t)(unsigned int)iter << 8) ^ (uint64_t)what);
}

/* Byte @i of pattern @seed: a word per 8 bytes. */
static inline uint8_t pat_byte(uint64_t seed, size_t i)
{
	return (uint8_t)(mix64(seed + i / 8) >> (8 * (i % 8)));
}

static inline void fill(void *p, size_t len, uint64_t seed)
{
	uint8_t *b = p;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t w = mix64(seed + i / 8);

		memcpy(b + i, &w, 8);	/* little-endian: byte k = w >> 8k */
	}
	for (; i < len; i++)
		b[i] = pat_byte(seed, i);
}

/* Offset of the first byte of @p that is not pattern @seed, or -1. */
static inline long check(const void *p, size_t len, uint64_t seed)
{
	const uint8_t *b = p;
	size_t i, k;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t w = mix64(seed + i / 8);

		if (memcmp(b + i, &w, 8))
			break;
	}
	for (k = i; k < len; k++)
		if (b[k] != pat_byte(seed, k))
			return (long)k;
	return -1;
}

/* Offset of the first byte of @p that is not @c, or -1. */
static inline long check_byte(const void *p, size_t len, uint8_t c)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != c)
			return (long)i;
	return -1;
}

#endif /* FMPL_SELFTEST_UTIL_H */

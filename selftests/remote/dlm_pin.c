// SPDX-License-Identifier: GPL-2.0
/*
 * dlm_pin - pages of a remote space that another kernel user holds (here
 * a pipe, through vmsplice()) keep their data while it holds them.
 * Helper of remote_test.sh; needs a registered daemon with a 32 MB pool:
 *
 *   dlm_pin evict   a page held in a pipe is passed over by eviction: the
 *                   pipe reads it intact after every other page was paged
 *                   through its slots, and so does the program
 *   dlm_pin free    a held page of a freed space stays out of the pool: a
 *                   space as large as the pool is refused (ENOMEM) until
 *                   the pipe lets go, and a smaller one does not get it
 *   dlm_pin all     when every resident page is held, a fault that needs
 *                   a victim gets SIGBUS (after request_timeout_ms), and
 *                   the next one succeeds once the pipe is drained
 *
 * Exit 0 when all is as said, 1 when not (the reason on stderr), 2 on a
 * setup error.  Prints the module's held_skips counter as key=value.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../dlm/dlm_util.h"

#define CPU_PAGE	4096
#define HELD_SKIPS	"/sys/class/misc/dlm/stats/held_skips"

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

static int fail(const char *what)
{
	fprintf(stderr, "dlm_pin: %s\n", what);
	return 1;
}

static unsigned long long held_skips(void)
{
	unsigned long long v = 0;
	FILE *f = fopen(HELD_SKIPS, "r");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* A remote space of @total bytes, @budget local, @page DLM pages. */
static void *space(int *fd, uint64_t page, uint64_t total, uint64_t budget,
		   int *err)
{
	struct dlm_setup s = {
		.backing = DLM_BACKING_REMOTE, .page_size = page,
		.total_size = total, .local_budget = budget,
		.policy = DLM_POLICY_ARR,
	};
	void *p;

	*err = 0;
	*fd = dlm_open_api();
	if (*fd < 0) {
		*err = -*fd;
		return NULL;
	}
	*err = -dlm_ioctl(*fd, DLM_IOC_SETUP, &s);
	if (*err) {
		close(*fd);
		return NULL;
	}
	p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, *fd,
		 s.mmap_offset);
	if (p == MAP_FAILED) {
		*err = errno;
		close(*fd);
		return NULL;
	}
	return p;
}

/*
 * space(), for one that must succeed: a space closed just before may take
 * a moment to give its region back (a request still holds it).
 */
static void *space_retry(int *fd, uint64_t page, uint64_t total,
			 uint64_t budget, int *err)
{
	void *p;
	int i;

	for (i = 0; i < 50; i++) {
		p = space(fd, page, total, budget, err);
		if (p || *err != ENOMEM)
			break;
		usleep(100 * 1000);
	}
	return p;
}

static void drop(int fd, void *p, uint64_t total)
{
	munmap(p, total);
	close(fd);
}

static void fill(uint64_t *w, uint64_t from, uint64_t words, uint64_t seed)
{
	uint64_t i;

	for (i = from; i < from + words; i++)
		w[i] = dlm_pattern(i, seed);
}

static uint64_t bad_words(const uint64_t *w, uint64_t from, uint64_t words,
			  uint64_t seed)
{
	uint64_t i, bad = 0;

	for (i = from; i < from + words; i++)
		bad += w[i] != dlm_pattern(i, seed);
	return bad;
}

/* Hand the CPU page at @addr to the pipe @pfd by reference. */
static int hold(int pfd[2], void *addr)
{
	struct iovec iov = { .iov_base = addr, .iov_len = CPU_PAGE };

	return vmsplice(pfd[1], &iov, 1, 0) == CPU_PAGE ? 0 : -1;
}

/*
 * Read @n CPU pages out of the pipe and check them against words @from..
 * of a space written with @seed.
 */
static uint64_t drain(int pfd[2], unsigned int n, uint64_t from,
		      uint64_t stride, uint64_t seed)
{
	uint64_t buf[CPU_PAGE / 8], bad = 0, i;
	unsigned int k;

	for (k = 0; k < n; k++) {
		if (read(pfd[0], buf, sizeof(buf)) != sizeof(buf))
			return ~0ULL;
		for (i = 0; i < CPU_PAGE / 8; i++)
			bad += buf[i] != dlm_pattern(from + k * stride + i,
						     seed);
	}
	return bad;
}

static int mode_evict(void)
{
	const uint64_t page = 64 * KB, total = 32 * page, words = total / 8;
	unsigned long long skips = held_skips();
	int fd, pfd[2], err, round;
	uint64_t *w, bad;

	w = space(&fd, page, total, 4 * page, &err);
	if (!w || pipe(pfd)) {
		fprintf(stderr, "dlm_pin: setup: %s\n", strerror(err ? err : errno));
		return 2;
	}
	fill(w, 0, words, 1);
	if (hold(pfd, w)) {
		fprintf(stderr, "dlm_pin: vmsplice: %s\n", strerror(errno));
		return 2;
	}
	/* Every other page through the 4 slots, twice: ARR reaches all. */
	for (round = 0; round < 2; round++)
		fill(w, page / 8, words - page / 8, 1);
	bad = drain(pfd, 1, 0, 0, 1);
	printf("held_skips=%llu pipe_bad=%llu\n", held_skips() - skips,
	       (unsigned long long)bad);
	if (bad)
		return fail("the pipe read another page's data: the held frame was reused");
	if (bad_words(w, 0, words, 1))
		return fail("the space reads back wrong");
	if (held_skips() == skips)
		return fail("held_skips did not count the held victim");
	drop(fd, w, total);
	return 0;
}

static int mode_free(void)
{
	const uint64_t page = 1 * MB, pool = 32 * MB, words = pool / 8;
	uint64_t *w, *w2;
	int fd, fd2, pfd[2], err;

	w = space(&fd, page, pool, pool, &err);
	if (!w || pipe(pfd)) {
		fprintf(stderr, "dlm_pin: setup of a space as large as the pool: %s\n",
			strerror(err ? err : errno));
		return 2;
	}
	fill(w, 0, words, 2);
	if (hold(pfd, w)) {
		fprintf(stderr, "dlm_pin: vmsplice: %s\n", strerror(errno));
		return 2;
	}
	drop(fd, w, pool);

	w2 = space(&fd2, page, pool, pool, &err);
	if (w2 || err != ENOMEM) {
		fprintf(stderr, "dlm_pin: a whole-pool space while a frame is held: %s, want ENOMEM\n",
			w2 ? "set up" : strerror(err));
		return 1;
	}
	w2 = space_retry(&fd2, page, pool, pool - page, &err);
	if (!w2) {
		fprintf(stderr, "dlm_pin: a space one DLM page smaller than the pool: %s\n",
			strerror(err));
		return 1;
	}
	fill(w2, 0, words, 3);
	if (drain(pfd, 1, 0, 0, 2))
		return fail("the pipe reads another space's data: the held frame was reused");
	if (bad_words(w2, 0, words, 3))
		return fail("the second space reads back wrong");
	drop(fd2, w2, pool);
	close(pfd[0]);
	close(pfd[1]);

	w2 = space_retry(&fd2, page, pool, pool, &err);
	if (!w2) {
		fprintf(stderr, "dlm_pin: a whole-pool space once the pipe is closed: %s\n",
			strerror(err));
		return 1;
	}
	drop(fd2, w2, pool);
	printf("held_frame_kept=1\n");
	return 0;
}

static int mode_all(void)
{
	const uint64_t page = 64 * KB, total = 16 * page, words = page / 8;
	volatile uint64_t *w;
	struct timespec t0, t1;
	struct sigaction sa = { .sa_handler = on_sigbus };
	int fd, pfd[2], err, k;
	double secs;

	w = space(&fd, page, total, 4 * page, &err);
	if (!w || pipe(pfd)) {
		fprintf(stderr, "dlm_pin: setup: %s\n", strerror(err ? err : errno));
		return 2;
	}
	sigaction(SIGBUS, &sa, NULL);
	for (k = 0; k < 4; k++) {
		fill((uint64_t *)w, k * words, words, 4);
		if (hold(pfd, (void *)(w + k * words))) {
			fprintf(stderr, "dlm_pin: vmsplice: %s\n", strerror(errno));
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!sigsetjmp(bus_jmp, 1)) {
		w[4 * words] = 1;
		return fail("a fault got a frame though every one is held");
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("sigbus_after=%.2fs\n", secs);
	if (secs > 30)
		return fail("SIGBUS came later than 30 s");
	if (drain(pfd, 4, 0, words, 4))
		return fail("the pipe read the held pages wrong");
	if (sigsetjmp(bus_jmp, 1))
		return fail("SIGBUS after the pipe was drained");
	fill((uint64_t *)w, 4 * words, words, 4);
	if (bad_words((uint64_t *)w, 0, 5 * words, 4))
		return fail("the space reads back wrong");
	drop(fd, (void *)w, total);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "evict"))
		return mode_evict();
	if (argc == 2 && !strcmp(argv[1], "free"))
		return mode_free();
	if (argc == 2 && !strcmp(argv[1], "all"))
		return mode_all();
	fprintf(stderr, "usage: dlm_pin evict|free|all (see dlm_pin.c)\n");
	return 2;
}

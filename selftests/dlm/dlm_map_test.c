// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/dlm mappings: data integrity across DLM pages of several sizes,
 * one fault per DLM page, the local budget, fork, several processes,
 * munmap/remap, faults taken inside system calls, and concurrent threads.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "dlm_util.h"

/* Fill [@p, @p + @len) with the pattern of @seed; check() returns the index
 * of the first wrong word, or -1. */
static void fill(void *p, uint64_t len, uint64_t seed)
{
	uint64_t *w = p;
	uint64_t i;

	for (i = 0; i < len / 8; i++)
		w[i] = dlm_pattern(i, seed);
}

static int64_t check(const void *p, uint64_t len, uint64_t seed)
{
	const uint64_t *w = p;
	uint64_t i;

	for (i = 0; i < len / 8; i++)
		if (w[i] != dlm_pattern(i, seed))
			return i;
	return -1;
}

static int64_t check_zero(const void *p, uint64_t len)
{
	const uint64_t *w = p;
	uint64_t i;

	for (i = 0; i < len / 8; i++)
		if (w[i])
			return i;
	return -1;
}

/* Run @fn in a child; return its wait status. */
static int in_child(void (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		fn(arg);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* Tests that need more than the harness's 30 s under emulation. */
FIXTURE(slow) {
	int unused;
};

FIXTURE_SETUP(slow)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(slow)
{
}

FIXTURE(pages) {
	int fd;
	char *p;
	uint64_t total;
};

FIXTURE_VARIANT(pages) {
	uint64_t page_size;
	uint64_t nr_dpages;
};

FIXTURE_VARIANT_ADD(pages, p4k) { .page_size = 4 * KB, .nr_dpages = 512 };
FIXTURE_VARIANT_ADD(pages, p12k) { .page_size = 12 * KB, .nr_dpages = 300 };
FIXTURE_VARIANT_ADD(pages, p64k) { .page_size = 64 * KB, .nr_dpages = 256 };
FIXTURE_VARIANT_ADD(pages, p1m) { .page_size = 1 * MB, .nr_dpages = 48 };
FIXTURE_VARIANT_ADD(pages, p2m) { .page_size = 2 * MB, .nr_dpages = 24 };

FIXTURE_SETUP(pages)
{
	self->total = variant->page_size * variant->nr_dpages;
	self->p = dlm_map(&self->fd, variant->page_size, self->total,
			  self->total);
	ASSERT_NE(MAP_FAILED, self->p) TH_LOG("dlm_map: %s", strerror(errno));
}

FIXTURE_TEARDOWN(pages)
{
	munmap(self->p, self->total);
	close(self->fd);
}

/* First touch is zero, data reads back, one fault per DLM page. */
TEST_F_TIMEOUT(pages, integrity_and_fault_count, 300)
{
	uint64_t ps = variant->page_size, n = variant->nr_dpages, i;
	struct dlm_stats st;

	st = dlm_get_stats(self->fd);
	EXPECT_EQ(0, st.faults);
	EXPECT_EQ(0, st.dpages_resident);

	for (i = 0; i < n; i++)
		ASSERT_EQ(-1, check_zero(self->p + i * ps, ps))
			TH_LOG("DLM page %llu not zero on first touch",
			       (unsigned long long)i);
	st = dlm_get_stats(self->fd);
	EXPECT_EQ(n, st.faults);
	EXPECT_EQ(n, st.populates);
	EXPECT_EQ(n, st.dpages_resident);
	EXPECT_EQ(self->total, st.bytes_resident);
	EXPECT_EQ(self->total, st.bytes_mapped);
	EXPECT_EQ(0, st.sigbus);

	fill(self->p, self->total, ps);
	EXPECT_EQ(-1, check(self->p, self->total, ps));
	/* Everything was mapped already: no more faults. */
	EXPECT_EQ(n, dlm_get_stats(self->fd).faults);
}

/* Touching one byte of a DLM page maps all of it: count it exactly. */
TEST_F(pages, one_fault_per_dpage)
{
	uint64_t ps = variant->page_size, n = variant->nr_dpages, i, off;
	volatile char *p = self->p;
	uint64_t touched = 0;

	for (i = 0; i < n; i += 3) {
		p[i * ps + (i * 4099) % ps] = 1;
		touched++;
	}
	EXPECT_EQ(touched, dlm_get_stats(self->fd).faults);
	/* Every byte of those DLM pages is mapped now. */
	for (i = 0; i < n; i += 3)
		for (off = 0; off < ps; off += 4096)
			p[i * ps + off] += 1;
	EXPECT_EQ(touched, dlm_get_stats(self->fd).faults);
	EXPECT_EQ(touched, dlm_get_stats(self->fd).dpages_resident);
}

/* Two mappings of one space alias; a window may start inside a DLM page. */
TEST(partial_and_aliased_mappings)
{
	struct dlm_setup s = { .page_size = 64 * KB, .total_size = 1 * MB };
	int fd = dlm_open_api();
	struct dlm_stats st;
	char *whole, *part;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dlm_ioctl(fd, DLM_IOC_SETUP, &s));
	whole = mmap(NULL, MB, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		     s.mmap_offset);
	ASSERT_NE(MAP_FAILED, whole);
	/* 160 KB from the middle of DLM page 2 to the end of DLM page 4. */
	part = mmap(NULL, 160 * KB, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    s.mmap_offset + 160 * KB);
	ASSERT_NE(MAP_FAILED, part);

	fill(part, 160 * KB, 3);
	st = dlm_get_stats(fd);
	EXPECT_EQ(3, st.faults);
	EXPECT_EQ(3, st.populates);
	EXPECT_EQ(160 * KB, st.bytes_mapped);

	EXPECT_EQ(-1, check(whole + 160 * KB, 160 * KB, 3));
	EXPECT_EQ(-1, check_zero(whole + 128 * KB, 32 * KB));
	st = dlm_get_stats(fd);
	EXPECT_EQ(6, st.faults);
	EXPECT_EQ(3, st.populates);
	EXPECT_EQ(160 * KB + 3 * 64 * KB, st.bytes_mapped);

	whole[200 * KB] = 42;
	EXPECT_EQ(42, part[40 * KB]);
	munmap(part, 160 * KB);
	munmap(whole, MB);
	close(fd);
}

static void touch_third_dpage(void *p)
{
	((volatile char *)p)[3 * MB] = 'c';
}

TEST(budget_exhausted_gives_sigbus)
{
	struct dlm_stats st;
	int status, fd;
	char *p;

	p = dlm_map(&fd, 1 * MB, 8 * MB, 2 * MB);
	ASSERT_NE(MAP_FAILED, p);
	p[0] = 'a';
	p[MB + 5] = 'b';

	status = in_child(touch_third_dpage, p);
	ASSERT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGBUS, WTERMSIG(status));

	st = dlm_get_stats(fd);
	EXPECT_EQ(1, st.sigbus);
	EXPECT_EQ(2, st.populates);
	EXPECT_EQ(2, st.dpages_resident);
	/* The resident pages are intact and still usable. */
	EXPECT_EQ('a', p[0]);
	EXPECT_EQ('b', p[MB + 5]);
	p[2 * MB - 1] = 'z';
	EXPECT_EQ('z', p[2 * MB - 1]);
	munmap(p, 8 * MB);
	close(fd);
}

TEST(fault_inside_syscall)
{
	int fds[2], fd;
	char *p, buf[8192];
	ssize_t n;

	p = dlm_map(&fd, 64 * KB, 1 * MB, 128 * KB);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, pipe(fds));

	/* The kernel reads a never-touched DLM page: zeros. */
	ASSERT_EQ(8192, write(fds[1], p + 100 * 1024, 8192));
	ASSERT_EQ(8192, read(fds[0], buf, 8192));
	EXPECT_EQ(-1, check_zero(buf, 8192));

	/* The kernel writes into a DLM page. */
	fill(buf, 8192, 5);
	ASSERT_EQ(8192, write(fds[1], buf, 8192));
	ASSERT_EQ(8192, read(fds[0], p + 4096, 8192));
	EXPECT_EQ(-1, check(p + 4096, 8192, 5));
	EXPECT_EQ(2, dlm_get_stats(fd).dpages_resident);

	/* Beyond the budget a system call fails with EFAULT, no signal. */
	n = write(fds[1], p + 512 * 1024, 4096);
	EXPECT_EQ(-1, n);
	EXPECT_EQ(EFAULT, errno);
	/* The kernel may try the access more than once (pre-fault, copy). */
	EXPECT_LE(1, dlm_get_stats(fd).sigbus);
	EXPECT_EQ(2, dlm_get_stats(fd).dpages_resident);
	close(fds[0]);
	close(fds[1]);
	munmap(p, MB);
	close(fd);
}

/*
 * fork(): the mapping is MAP_SHARED, so parent and child share the DLM
 * space, as they would share a shmem mapping.
 */
TEST(fork_shares_the_space)
{
	int status, fd;
	pid_t pid;
	char *p;

	p = dlm_map(&fd, 1 * MB, 16 * MB, 16 * MB);
	ASSERT_NE(MAP_FAILED, p);
	fill(p, 4 * MB, 1);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (check(p, 4 * MB, 1) != -1)
			_exit(10);
		fill(p + 8 * MB, 4 * MB, 2);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(-1, check(p + 8 * MB, 4 * MB, 2));
	EXPECT_EQ(8, dlm_get_stats(fd).dpages_resident);
	munmap(p, 16 * MB);
	close(fd);
}

/* Two processes, each with its own space, at the same time. */
TEST(independent_processes)
{
	int go[2], status, fd, fd2;
	struct dlm_setup s;
	pid_t pid;
	char *p, c;

	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		p = dlm_map(&fd, 1 * MB, 8 * MB, 8 * MB);
		if (p == MAP_FAILED)
			_exit(11);
		fill(p, 8 * MB, 200);
		if (read(go[0], &c, 1) != 1)
			_exit(12);
		/* The parent wrote its own space meanwhile: ours is intact. */
		_exit(check(p, 8 * MB, 200) == -1 ? 0 : 13);
	}
	p = dlm_map(&fd, 1 * MB, 8 * MB, 8 * MB);
	ASSERT_NE(MAP_FAILED, p);
	fill(p, 8 * MB, 100);
	ASSERT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(-1, check(p, 8 * MB, 100));
	EXPECT_EQ(8, dlm_get_stats(fd).populates);

	/* Another file is another space at another offset, starting empty. */
	fd2 = dlm_open_api();
	ASSERT_LE(0, fd2);
	s = (struct dlm_setup){ .total_size = 8 * MB };
	ASSERT_EQ(0, dlm_ioctl(fd2, DLM_IOC_SETUP, &s));
	EXPECT_EQ(0, dlm_get_stats(fd2).populates);
	close(fd2);
	munmap(p, 8 * MB);
	close(fd);
}

/* Data outlives munmap while the file is open; close frees the space. */
TEST(munmap_remap)
{
	struct dlm_setup s = { .page_size = 1 * MB, .total_size = 8 * MB };
	int fd = dlm_open_api();
	char *p, *q;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dlm_ioctl(fd, DLM_IOC_SETUP, &s));
	p = mmap(NULL, 8 * MB, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 s.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	fill(p, 8 * MB, 9);
	EXPECT_EQ(8, dlm_get_stats(fd).faults);
	ASSERT_EQ(0, munmap(p, 8 * MB));

	q = mmap(NULL, 8 * MB, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 s.mmap_offset);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_EQ(-1, check(q, 8 * MB, 9));
	EXPECT_EQ(16, dlm_get_stats(fd).faults);
	EXPECT_EQ(8, dlm_get_stats(fd).populates);

	/* Unmapping part of a DLM page leaves the rest mapped and intact. */
	ASSERT_EQ(0, munmap(q + 3 * MB + 4096, 8192));
	EXPECT_EQ(-1, check(q, 3 * MB, 9));

	/* MADV_DONTNEED drops page-table entries, not data. */
	ASSERT_EQ(0, madvise(q, 2 * MB, MADV_DONTNEED));
	EXPECT_EQ(-1, check(q, 2 * MB, 9));
	EXPECT_EQ(18, dlm_get_stats(fd).faults);
	munmap(q, 8 * MB);
	close(fd);
}

/* Closing the last reference frees every frame: no leak across cycles. */
/* A gauge of /sys/class/misc/dlm/ (spaces, frames), or -1. */
static long long dlm_gauge(const char *name)
{
	char path[128];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/misc/dlm/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

TEST_F_TIMEOUT(slow, close_frees_everything, 300)
{
	long long frames0 = dlm_gauge("frames"), spaces0 = dlm_gauge("spaces");
	int round, fd;
	char *p;

	ASSERT_LE(0, frames0);
	ASSERT_LE(0, spaces0);
	/* 16 x 128 MB: more than a test VM has, if frames leaked. */
	for (round = 0; round < 16; round++) {
		p = dlm_map(&fd, 1 * MB, 128 * MB, 128 * MB);
		ASSERT_NE(MAP_FAILED, p);
		memset(p, round + 1, 128 * MB);
		ASSERT_EQ(128, dlm_get_stats(fd).dpages_resident);
		ASSERT_EQ(frames0 + 128 * MB / getpagesize(),
			  dlm_gauge("frames"));
		ASSERT_EQ(spaces0 + 1, dlm_gauge("spaces"));
		munmap(p, 128 * MB);
		/* Unmapped but open: the data is kept. */
		ASSERT_EQ(frames0 + 128 * MB / getpagesize(),
			  dlm_gauge("frames"));
		close(fd);
		ASSERT_EQ(frames0, dlm_gauge("frames"));
		ASSERT_EQ(spaces0, dlm_gauge("spaces"));
	}
}

struct thread_arg {
	char *p;
	uint64_t total;
	unsigned int id, nr;
};

/* Each thread writes its own words of every DLM page, racing the others. */
static void *toucher(void *a)
{
	struct thread_arg *t = a;
	uint64_t *w = (uint64_t *)t->p;
	uint64_t i;

	for (i = t->id; i < t->total / 8; i += t->nr)
		w[i] = dlm_pattern(i, 0);
	return NULL;
}

TEST_F_TIMEOUT(slow, threads_fault_concurrently, 300)
{
	const unsigned int nr = 8;
	struct thread_arg args[8];
	pthread_t th[8];
	uint64_t total = 64 * MB;
	unsigned int i;
	int fd;
	char *p;

	p = dlm_map(&fd, 1 * MB, total, total);
	ASSERT_NE(MAP_FAILED, p);
	for (i = 0; i < nr; i++) {
		args[i] = (struct thread_arg){ p, total, i, nr };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, toucher, &args[i]));
	}
	for (i = 0; i < nr; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(-1, check(p, total, 0));
	/* Threads share page tables: each DLM page was mapped once. */
	EXPECT_EQ(64, dlm_get_stats(fd).faults);
	EXPECT_EQ(64, dlm_get_stats(fd).populates);
	munmap(p, total);
	close(fd);
}

#include "dlm_main.h"

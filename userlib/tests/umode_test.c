// SPDX-License-Identifier: GPL-2.0
/*
 * umode_test - libdlm's user-level modes (DLM_MODE=sigsegv and uffd)
 * natively, against a dlm-memserver started on 127.0.0.1 (from
 * $LIBDLM_O/bin, default build/bin): a memfile of 4 MB local + 64 MB on
 * the server, DLM pages of 1 MB and 64 KB; two threads write a pattern
 * over 48 MB (interleaved in 256 KB chunks, so both fault the same DLM
 * pages) and read it back, every word checked; the counters must show
 * swap-outs and swap-ins and at most the budget resident.  Then the
 * server is killed (or stopped: it hangs) while a child has data on it:
 * the child's next access must end in SIGBUS (or abort() in uffd mode)
 * within a bounded time instead of hanging.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include <dlm.h>

#define KB		1024UL
#define MB		(1024UL * KB)
#define DATA		(48 * MB)
#define CHUNK		(256 * KB)
#define NTHREADS	2

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (void *)&a, sizeof(a)) ||
	    getsockname(fd, (void *)&a, &len))
		return -1;
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static int can_connect(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = !connect(fd, (void *)&a, sizeof(a));
	close(fd);
	return ok;
}

static uint64_t pattern(uint64_t i, uint64_t seed)
{
	return (i + 1) * 0x9e3779b97f4a7c15ULL ^ seed;
}

struct job {
	uint64_t *w;
	int t;
	uint64_t seed;
	uint64_t bad;
	int check;
};

/* Thread t of NTHREADS takes every NTHREADS-th chunk. */
static void *worker(void *arg)
{
	struct job *j = arg;
	uint64_t per = CHUNK / 8, c, i;

	for (c = j->t; c < DATA / CHUNK; c += NTHREADS)
		for (i = c * per; i < (c + 1) * per; i++) {
			if (!j->check)
				j->w[i] = pattern(i, j->seed);
			else if (j->w[i] != pattern(i, j->seed))
				j->bad++;
		}
	return NULL;
}

static uint64_t run_threads(uint64_t *w, uint64_t seed, int check)
{
	struct job j[NTHREADS];
	pthread_t th[NTHREADS];
	uint64_t bad = 0;
	int t;

	for (t = 0; t < NTHREADS; t++) {
		j[t] = (struct job){ .w = w, .t = t, .seed = seed,
				     .check = check };
		pthread_create(&th[t], NULL, worker, &j[t]);
	}
	for (t = 0; t < NTHREADS; t++) {
		pthread_join(th[t], NULL);
		bad += j[t].bad;
	}
	return bad;
}

FIXTURE(umode) {
	pid_t srv;
	int port;
	char memfile[64];
};

FIXTURE_VARIANT(umode) {
	const char *mode;
	const char *page_kb;
};

FIXTURE_VARIANT_ADD(umode, sigsegv_1m) { .mode = "sigsegv", .page_kb = "1024" };
FIXTURE_VARIANT_ADD(umode, sigsegv_64k) { .mode = "sigsegv", .page_kb = "64" };
FIXTURE_VARIANT_ADD(umode, uffd_1m) { .mode = "uffd", .page_kb = "1024" };
FIXTURE_VARIANT_ADD(umode, uffd_64k) { .mode = "uffd", .page_kb = "64" };

FIXTURE_SETUP(umode)
{
	const char *o = getenv("LIBDLM_O");
	char bin[512], listen[64];
	FILE *f;
	int fd, i;

	snprintf(bin, sizeof(bin), "%s/bin/dlm-memserver", o && *o ? o : "build");
	if (access(bin, X_OK))
		SKIP(return, "%s missing: make user", bin);
	self->port = free_port();
	ASSERT_LT(0, self->port);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", self->port);
	self->srv = fork();
	ASSERT_LE(0, self->srv);
	if (!self->srv) {
		execl(bin, bin, "--listen", listen, "--size", "80",
		      "--log-level", "warn", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 100 && !can_connect(self->port); i++)
		usleep(50000);
	ASSERT_TRUE(can_connect(self->port)) TH_LOG("dlm-memserver did not listen");

	strcpy(self->memfile, "/tmp/umode_test.XXXXXX");
	fd = mkstemp(self->memfile);
	ASSERT_LE(0, fd);
	f = fdopen(fd, "w");
	fprintf(f, "# umode_test\n4\n64 127.0.0.1:%d\n", self->port);
	fclose(f);
	setenv("DLM_MEMFILE", self->memfile, 1);
	setenv("DLM_MODE", variant->mode, 1);
	setenv("DLM_PAGE_KB", variant->page_kb, 1);
}

FIXTURE_TEARDOWN(umode)
{
	if (self->srv > 0) {
		kill(self->srv, SIGCONT);
		kill(self->srv, SIGKILL);
		waitpid(self->srv, NULL, 0);
	}
	if (self->memfile[0])
		unlink(self->memfile);
}

TEST_F_TIMEOUT(umode, pattern_two_threads, 120)
{
	struct dlm_lib_stats st;
	uint64_t *w, page = strtoull(variant->page_kb, NULL, 10) * KB;
	double t0 = now();

	ASSERT_EQ(0, dlm_startup(NULL, NULL)) TH_LOG("%s", dlm_last_error());
	ASSERT_EQ(0, dlm_stats(&st));
	EXPECT_EQ(page, st.page_size);
	EXPECT_EQ(68 * MB, st.total_size);
	EXPECT_EQ(4 * MB, st.local_budget);
	EXPECT_EQ(64 * MB, st.remote_size);
	EXPECT_EQ(1, st.servers);
	EXPECT_EQ(0, st.faults);

	w = dlm_alloc(DATA);
	ASSERT_NE(NULL, w);
	EXPECT_EQ(0, run_threads(w, 0x1234, 0));
	EXPECT_EQ(0, run_threads(w, 0x1234, 1));
	/* Overwrite and check again: pages come back with the new data. */
	EXPECT_EQ(0, run_threads(w, 0xabcdef, 0));
	EXPECT_EQ(0, run_threads(w, 0xabcdef, 1));

	ASSERT_EQ(0, dlm_stats(&st));
	EXPECT_LE(DATA / page, st.faults);
	EXPECT_LT(0, st.swapouts);
	EXPECT_LT(0, st.swapins);
	EXPECT_LE(DATA / page, st.swapins);
	EXPECT_EQ(0, st.sigbus);
	EXPECT_LE(st.bytes_resident, st.local_budget);
	EXPECT_EQ(st.dpages_resident * page, st.bytes_resident);
	TH_LOG("%s, %s KB pages: %llu faults, %llu swapins, %llu swapouts, %.2f s",
	       variant->mode, variant->page_kb, (unsigned long long)st.faults,
	       (unsigned long long)st.swapins, (unsigned long long)st.swapouts,
	       now() - t0);
	dlm_free(w);
	EXPECT_EQ(0, dlm_shutdown());
	/* Again, after a shutdown: a new space from nothing. */
	ASSERT_EQ(0, dlm_startup(NULL, NULL)) TH_LOG("%s", dlm_last_error());
	w = dlm_alloc(8 * MB);
	ASSERT_NE(NULL, w);
	EXPECT_EQ(0, w[MB / 8]);
	w[0] = 7;
	EXPECT_EQ(7, w[0]);
	EXPECT_EQ(0, dlm_shutdown());
}

static volatile int *volatile bad_ptr;

/* A segfault outside the space still kills as SIGSEGV (the handler
 * chains to the default). */
TEST_F_TIMEOUT(umode, foreign_segv, 30)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		if (dlm_startup(NULL, NULL))
			_exit(2);
		*bad_ptr = 1;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status)) TH_LOG("status %#x", status);
	EXPECT_EQ(SIGSEGV, WTERMSIG(status));
}

/* The server dies (@sig SIGKILL) or hangs (SIGSTOP) while the child's
 * data is on it: the child must end by SIGBUS or SIGABRT, soon. */
static void server_fails(struct __test_metadata *_metadata,
			 FIXTURE_DATA(umode) *self, int sig, double bound)
{
	int ready[2], go[2], status = 0;
	double t0;
	pid_t pid, r;
	char c = 0;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		uint64_t *w;

		if (dlm_startup(NULL, NULL))
			_exit(2);
		w = dlm_alloc(DATA);
		if (!w || run_threads(w, 99, 0))
			_exit(3);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(4);
		run_threads(w, 99, 1);	/* needs the server */
		_exit(0);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ(0, kill(self->srv, sig));
	if (sig == SIGKILL) {
		waitpid(self->srv, NULL, 0);
		self->srv = 0;
	}
	t0 = now();
	ASSERT_EQ(1, write(go[1], &c, 1));
	while ((r = waitpid(pid, &status, WNOHANG)) == 0 && now() - t0 < bound)
		usleep(20000);
	if (!r) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	ASSERT_EQ(pid, r) TH_LOG("the access hung for %.0f s", bound);
	ASSERT_TRUE(WIFSIGNALED(status)) TH_LOG("status %#x", status);
	EXPECT_TRUE(WTERMSIG(status) == SIGBUS || WTERMSIG(status) == SIGABRT)
		TH_LOG("signal %d", WTERMSIG(status));
	TH_LOG("ended by signal %d after %.2f s", WTERMSIG(status), now() - t0);
}

TEST_F_TIMEOUT(umode, server_killed, 60)
{
	server_fails(_metadata, self, SIGKILL, 10);
}

TEST_F_TIMEOUT(umode, server_hangs, 60)
{
	server_fails(_metadata, self, SIGSTOP, 20);
}

/* The option and its environment variable; the option wins. */
TEST(mode_option)
{
	char a0[] = "prog", a1[] = "x", dd[] = "--", mo[] = "--mode=sigsegv";
	char *argv[] = { a0, a1, dd, mo, NULL };
	char **av = argv;
	struct dlm_lib_stats st;
	int ac = 4;

	unsetenv("DLM_MEMFILE");
	setenv("DLM_LOCAL_MB", "8", 1);
	setenv("DLM_MODE", "bogus", 1);
	EXPECT_EQ(-1, dlm_startup(NULL, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_NE(NULL, strstr(dlm_last_error(), "DLM_MODE 'bogus': want kernel"));
	setenv("DLM_MODE", "kernel", 1);
	/* Local only, no /dev/dlm needed: paged by libdlm, nothing evicted. */
	ASSERT_EQ(0, dlm_startup(&ac, &av)) TH_LOG("%s", dlm_last_error());
	EXPECT_EQ(2, ac);
	ASSERT_EQ(0, dlm_stats(&st));
	EXPECT_EQ(8 * MB, st.total_size);
	EXPECT_EQ(8 * MB, st.local_budget);
	memset(dlm_alloc(8 * MB), 1, 8 * MB);
	ASSERT_EQ(0, dlm_stats(&st));
	EXPECT_EQ(8, st.faults);
	EXPECT_EQ(0, st.swapouts);
	EXPECT_EQ(0, dlm_shutdown());
}

/* A server line without HOST:PORT cannot be reached by libdlm. */
TEST(server_without_address)
{
	char path[] = "/tmp/umode_test.XXXXXX";
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	ASSERT_EQ(5, write(fd, "4\n64\n", 5));
	close(fd);
	setenv("DLM_MEMFILE", path, 1);
	setenv("DLM_MODE", "uffd", 1);
	EXPECT_EQ(-1, dlm_startup(NULL, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_NE(NULL, strstr(dlm_last_error(), "give this server line its address"));
	unlink(path);
}

TEST_HARNESS_MAIN

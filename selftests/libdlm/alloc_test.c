// SPDX-License-Identifier: GPL-2.0
/*
 * libdlm dlm_alloc()/dlm_free() on a real DLM space: the allocator faults
 * in nothing, alignment, reuse of freed space, random alloc/free cycles
 * with data checks, exhaustion (NULL/ENOMEM), the whole space usable,
 * invalid frees abort with a message, and several threads at once.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "libdlm_util.h"

#define SPACE_MB	64

FIXTURE(space) {
	struct dlm_lib_stats st;
};

FIXTURE_SETUP(space)
{
	char mb[16];

	clear_dlm_env();
	snprintf(mb, sizeof(mb), "%d", SPACE_MB);
	setenv("DLM_LOCAL_MB", mb, 1);
	ASSERT_EQ(0, dlm_startup(NULL, NULL));
	ASSERT_EQ(0, dlm_stats(&self->st));
	ASSERT_EQ(SPACE_MB * MB, self->st.total_size);
}

FIXTURE_TEARDOWN(space)
{
	dlm_shutdown();
}

TEST_F(space, allocator_faults_in_nothing)
{
	struct dlm_lib_stats st;
	char *p[500];
	int i;

	for (i = 0; i < 500; i++) {
		p[i] = dlm_alloc(i * 997 % 70000 + 1);
		ASSERT_NE(NULL, p[i]);
	}
	for (i = 0; i < 500; i += 2)
		dlm_free(p[i]);
	ASSERT_EQ(0, dlm_stats(&st));
	ASSERT_EQ(0, st.faults);
	ASSERT_EQ(0, st.populates);
	ASSERT_EQ(0, st.bytes_resident);
	ASSERT_EQ(250, st.allocations);
	p[1][0] = 1;				/* now one DLM page */
	ASSERT_EQ(0, dlm_stats(&st));
	ASSERT_EQ(1, st.populates);
}

TEST_F(space, alignment)
{
	uintptr_t base, page = self->st.page_size;
	char *small, *big, *big2;
	int i;

	base = (uintptr_t)dlm_alloc(1);		/* first fit: the start */
	ASSERT_EQ(0, base % 4096);
	for (i = 1; i < 100; i++) {
		small = dlm_alloc(i * 13);
		ASSERT_EQ(0, (uintptr_t)small % DLM_ALLOC_ALIGN);
	}
	big = dlm_alloc(page);
	big2 = dlm_alloc(3 * page + 5);
	ASSERT_EQ(base + page, (uintptr_t)big);	/* paper: arrays on DLM pages */
	ASSERT_EQ(base + 2 * page, (uintptr_t)big2);
	small = dlm_alloc(64);			/* fills the gap before big */
	ASSERT_LT((uintptr_t)small, (uintptr_t)big);
}

TEST_F(space, freed_space_is_reused)
{
	char *a, *b, *c;

	a = dlm_alloc(MB);
	b = dlm_alloc(MB);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	fill(a, MB, 1);
	fill(b, MB, 2);
	dlm_free(a);
	c = dlm_alloc(MB);
	ASSERT_EQ(a, c);			/* same place */
	ASSERT_EQ(-1, verify(c, MB, 1));	/* old data stays (like malloc) */
	fill(c, MB, 3);
	ASSERT_EQ(-1, verify(b, MB, 2));
	dlm_free(b);
	dlm_free(c);
	ASSERT_EQ(0, dlm_stats(&self->st));
	ASSERT_EQ(0, self->st.allocations);
	ASSERT_EQ(1, self->st.free_fragments);
	ASSERT_EQ(SPACE_MB * MB, self->st.largest_free);
}

/* Random sizes, patterns written, checked, freed, reallocated. */
TEST_F_TIMEOUT(space, random_cycles_keep_data, 300)
{
	struct { char *p; size_t n; uint64_t seed; } live[64];
	struct dlm_lib_stats st;
	uint64_t s = 0xC0FFEE;
	char *freed[4096];
	int nlive = 0, nfreed = 0, reused = 0, enomem = 0, op, i, k;

	memset(live, 0, sizeof(live));
	for (op = 0; op < 3000; op++) {
		i = (int)(rnd(&s) % 64);
		if (live[i].p) {
			ASSERT_EQ(-1, verify(live[i].p, live[i].n, live[i].seed));
			dlm_free(live[i].p);
			if (nfreed < 4096)
				freed[nfreed++] = live[i].p;
			live[i].p = NULL;
			nlive--;
			continue;
		}
		live[i].n = rnd(&s) % 8 ? rnd(&s) % 20000 + 1 :
					  rnd(&s) % (3 * MB) + 1;
		live[i].seed = (uint64_t)op;
		live[i].p = dlm_alloc(live[i].n);
		if (!live[i].p) {
			ASSERT_EQ(ENOMEM, errno);
			enomem++;
			continue;
		}
		for (k = 0; k < nfreed && !reused; k++)
			reused = freed[k] == live[i].p;
		fill(live[i].p, live[i].n, live[i].seed);
		nlive++;
	}
	for (i = 0; i < 64; i++)
		if (live[i].p) {
			ASSERT_EQ(-1, verify(live[i].p, live[i].n, live[i].seed));
			dlm_free(live[i].p);
		}
	TH_LOG("%d ENOMEM, reuse seen: %d", enomem, reused);
	ASSERT_TRUE(reused);
	ASSERT_EQ(0, dlm_stats(&st));
	ASSERT_EQ(0, st.allocations);
	ASSERT_EQ(0, st.bytes_allocated);
	ASSERT_EQ(1, st.free_fragments);
	ASSERT_EQ(0, st.sigbus);
}

TEST_F(space, exhaustion_gives_enomem)
{
	char *all;

	errno = 0;
	ASSERT_EQ(NULL, dlm_alloc(SPACE_MB * MB + 1));
	ASSERT_EQ(ENOMEM, errno);
	ASSERT_NE(NULL, strstr(dlm_last_error(), "memfile"));
	ASSERT_EQ(NULL, dlm_alloc(SIZE_MAX));
	ASSERT_EQ(ENOMEM, errno);
	all = dlm_alloc(SPACE_MB * MB);
	ASSERT_NE(NULL, all);
	ASSERT_EQ(NULL, dlm_alloc(1));
	ASSERT_EQ(ENOMEM, errno);
	dlm_free(all);
	ASSERT_EQ(all, dlm_alloc(SPACE_MB * MB));
}

TEST_F_TIMEOUT(space, whole_space_is_usable, 300)
{
	struct dlm_lib_stats st;
	char *p = dlm_alloc(SPACE_MB * MB);

	ASSERT_NE(NULL, p);
	fill(p, SPACE_MB * MB, 42);
	ASSERT_EQ(-1, verify(p, SPACE_MB * MB, 42));
	ASSERT_EQ(0, dlm_stats(&st));
	ASSERT_EQ(SPACE_MB, st.populates);	/* 1 MB DLM pages */
	ASSERT_EQ(SPACE_MB * MB, st.bytes_resident);
	ASSERT_EQ(0, st.sigbus);
}

TEST(free_null_is_a_noop)
{
	clear_dlm_env();
	dlm_free(NULL);				/* before startup */
	setenv("DLM_LOCAL_MB", "8", 1);
	ASSERT_EQ(0, dlm_startup(NULL, NULL));
	dlm_free(NULL);
	ASSERT_EQ(0, dlm_shutdown());
	dlm_free(NULL);				/* after shutdown */
}

TEST(calls_without_a_space)
{
	struct dlm_lib_stats st;

	clear_dlm_env();
	errno = 0;
	ASSERT_EQ(NULL, dlm_alloc(10));
	ASSERT_EQ(ENXIO, errno);
	ASSERT_NE(NULL, strstr(dlm_last_error(), "call dlm_startup"));
	ASSERT_EQ(-1, dlm_stats(&st));
	ASSERT_EQ(ENXIO, errno);
	ASSERT_EQ(0, dlm_shutdown());
}

/* Invalid frees: the child must abort with libdlm's message. */
enum bad_free { DOUBLE, INTERIOR, MALLOCED, NO_SPACE };

static void bad_free(enum bad_free how)
{
	char *p;

	setenv("DLM_LOCAL_MB", "8", 1);
	if (how != NO_SPACE && dlm_startup(NULL, NULL))
		_exit(3);
	p = how == NO_SPACE ? (char *)0x1000 : dlm_alloc(1000);
	switch (how) {
	case DOUBLE:
		dlm_free(p);
		dlm_free(p);
		break;
	case INTERIOR:
		dlm_free(p + 64);
		break;
	case MALLOCED:
		dlm_free(malloc(64));
		break;
	case NO_SPACE:
		dlm_free(p);
		break;
	}
	_exit(0);
}

TEST(invalid_frees_abort_with_a_message)
{
	static const char *const why[] = {
		[DOUBLE] = "not the start of a live block",
		[INTERIOR] = "not the start of a live block",
		[MALLOCED] = "not in the DLM space",
		[NO_SPACE] = "there is no DLM space",
	};
	enum bad_free how;
	char out[1024];
	int fd[2], status;
	ssize_t n;
	pid_t pid;

	clear_dlm_env();
	for (how = DOUBLE; how <= NO_SPACE; how++) {
		ASSERT_EQ(0, pipe(fd));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			signal(SIGABRT, SIG_DFL);
			dup2(fd[1], 2);
			bad_free(how);
		}
		close(fd[1]);
		n = read(fd[0], out, sizeof(out) - 1);
		out[n > 0 ? n : 0] = '\0';
		close(fd[0]);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		TH_LOG("case %d: %s", how, out);
		ASSERT_TRUE(WIFSIGNALED(status));
		ASSERT_EQ(SIGABRT, WTERMSIG(status));
		ASSERT_NE(NULL, strstr(out, "libdlm: dlm_free(): invalid pointer"));
		ASSERT_NE(NULL, strstr(out, why[how]));
	}
}

/* Threads allocate, fill, check and free at once. */
#define NTHREADS	4

struct worker {
	int id;
	int errors;
	int allocated;
};

static void *work(void *arg)
{
	struct { char *p; size_t n; uint64_t seed; } live[16] = { { 0 } };
	struct worker *w = arg;
	uint64_t s = 1000 + (uint64_t)w->id;
	int op, i;

	for (op = 0; op < 3000; op++) {
		i = (int)(rnd(&s) % 16);
		if (live[i].p) {
			if (verify(live[i].p, live[i].n, live[i].seed) >= 0)
				w->errors++;
			dlm_free(live[i].p);
			live[i].p = NULL;
			continue;
		}
		live[i].n = rnd(&s) % (64 * KB) + 1;
		live[i].seed = (uint64_t)w->id << 32 | (uint64_t)op;
		live[i].p = dlm_alloc(live[i].n);
		if (!live[i].p) {
			w->errors += errno != ENOMEM;
			continue;
		}
		w->allocated++;
		fill(live[i].p, live[i].n, live[i].seed);
	}
	for (i = 0; i < 16; i++)
		if (live[i].p) {
			if (verify(live[i].p, live[i].n, live[i].seed) >= 0)
				w->errors++;
			dlm_free(live[i].p);
		}
	return NULL;
}

TEST_F_TIMEOUT(space, threads_alloc_and_free_concurrently, 300)
{
	struct worker w[NTHREADS];
	pthread_t t[NTHREADS];
	struct dlm_lib_stats st;
	int i;

	for (i = 0; i < NTHREADS; i++) {
		w[i] = (struct worker){ .id = i };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, work, &w[i]));
	}
	for (i = 0; i < NTHREADS; i++) {
		ASSERT_EQ(0, pthread_join(t[i], NULL));
		ASSERT_EQ(0, w[i].errors);
		ASSERT_LT(1000, w[i].allocated);
	}
	ASSERT_EQ(0, dlm_stats(&st));
	ASSERT_EQ(0, st.allocations);
	ASSERT_EQ(0, st.bytes_allocated);
	ASSERT_EQ(1, st.free_fragments);
	ASSERT_EQ(0, st.sigbus);
}

#include "../dlm/dlm_main.h"

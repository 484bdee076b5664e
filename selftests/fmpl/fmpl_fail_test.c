// SPDX-License-Identifier: GPL-2.0
/*
 * fmpl_fail_test - failures through libfmpl: a peer SIGKILLed while a rank
 * is blocked in fmpl_recv, in fmpl_send (inline and pinned message), in a
 * barrier (native and tree) or has an irecv posted: FMPL_ERR_PEER within
 * 1 s; point to point between the survivors still works while collectives
 * fail; permissions of a world created by root for a process that
 * setuid()s to 65534 (refused by default, allowed with FMPL_MODE=any, and
 * with FMPL_MODE=group when it keeps the group); the join timeout; a rank
 * taken twice; a size that does not match; a rank copying a message out of
 * userfaultfd memory nobody serves dies of SIGKILL.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <linux/userfaultfd.h>

#include "kselftest_harness.h"
#include <fmpl.h>
#include "fmpl_util.h"

struct board {
	int ready[RANKS_MAX];
	double kill_t;
	int mode;
	size_t len;
};

static void set_ready(struct board *b, int rank)
{
	__atomic_store_n(&b->ready[rank], 1, __ATOMIC_RELEASE);
}

static void wait_ready(struct board *b, int rank)
{
	while (!__atomic_load_n(&b->ready[rank], __ATOMIC_ACQUIRE))
		sleep_ms(2);
}

/* Park a rank that is to be killed. */
static void park(void)
{
	for (;;)
		pause();
}

/*
 * Start @n ranks of @fn, wait until rank 0 says it is about to block,
 * give it 300 ms to do so, SIGKILL rank @victim; rank 0 checks the time.
 */
static void kill_during(struct __test_metadata *_metadata, int n, int victim,
			rank_fn fn, struct board *b)
{
	pid_t pids[RANKS_MAX];

	start_ranks(_metadata, n, fn, b, pids);
	wait_ready(b, 0);
	sleep_ms(300);
	b->kill_t = now_s();
	kill(pids[victim], SIGKILL);
	ASSERT_EQ(0, wait_ranks_killed(_metadata, n, pids, 1U << victim));
}

#define ASSERT_PEER_WITHIN_1S(ier, b) do {				\
	double late_ = now_s() - (b)->kill_t;				\
									\
	ASSERT_EQ(FMPL_ERR_PEER, (ier));				\
	ASSERT_EQ(ECONNRESET, errno);					\
	if (late_ >= 1.0)						\
		TH_LOG("FMPL_ERR_PEER %.3f s after the kill", late_);	\
	ASSERT_LT(late_, 1.0);						\
} while (0)

static void recv_rank(struct __test_metadata *_metadata, int rank, int size,
		      void *arg)
{
	struct board *b = arg;
	char buf[100];
	int ier = -1;

	(void)size;
	INIT(2);
	if (rank == 1)
		park();
	set_ready(b, 0);
	fmpl_recv(buf, sizeof(buf), 1, 0, WORLD, &ier);
	ASSERT_PEER_WITHIN_1S(ier, b);
	/* Later operations with the dead rank fail at once. */
	ASSERT_EQ(FMPL_ERR_PEER, fmpl_irecv(buf, sizeof(buf), 1, 1, WORLD, &ier));
	ASSERT_EQ(FMPL_ERR_PEER, fmpl_send(buf, sizeof(buf), 1, 1, WORLD, &ier));
}

TEST(blocked_recv_gets_peer_error_when_the_sender_dies)
{
	struct board *b = shared(sizeof(*b));

	ASSERT_NE(NULL, b);
	kill_during(_metadata, 2, 1, recv_rank, b);
}

static void send_rank(struct __test_metadata *_metadata, int rank, int size,
		      void *arg)
{
	struct board *b = arg;
	uint8_t *buf = malloc(b->len);
	int ier = -1;

	(void)size;
	ASSERT_NE(NULL, buf);
	INIT(2);
	if (rank == 1)
		park();
	fill(buf, b->len, 1);
	set_ready(b, 0);
	fmpl_send(buf, b->len, 1, 0, WORLD, &ier);
	ASSERT_PEER_WITHIN_1S(ier, b);
}

TEST(blocked_send_gets_peer_error_when_the_receiver_dies)
{
	static const size_t lens[] = { 100, 1 * MB };
	int i;

	for (i = 0; i < 2; i++) {
		struct board *b = shared(sizeof(*b));

		ASSERT_NE(NULL, b);
		b->len = lens[i];
		kill_during(_metadata, 2, 1, send_rank, b);
	}
}

static void barrier_rank(struct __test_metadata *_metadata, int rank, int size,
			 void *arg)
{
	struct board *b = arg;
	int ier = -1;

	(void)size;
	INIT(1);
	fmpl_coll_mode(b->mode);
	if (rank == 2)
		park();
	if (rank == 0)
		set_ready(b, 0);
	fmpl_barrier(WORLD, &ier);
	ASSERT_PEER_WITHIN_1S(ier, b);
}

TEST(barrier_gets_peer_error_when_a_rank_dies)
{
	int m;

	for (m = 0; m < 2; m++) {
		struct board *b = shared(sizeof(*b));

		ASSERT_NE(NULL, b);
		b->mode = m ? FMPL_COLL_TREE : FMPL_COLL_NATIVE;
		kill_during(_metadata, 3, 2, barrier_rank, b);
	}
}

/* A posted irecv: its flag turns to error, irecv_wait says FMPL_ERR_PEER. */
static void irecv_rank(struct __test_metadata *_metadata, int rank, int size,
		       void *arg)
{
	struct board *b = arg;
	fmpl_status st;
	char buf[64];
	int ier = -1, k;

	(void)size;
	INIT(2);
	if (rank == 1)
		park();
	ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv(buf, sizeof(buf), 1, 1, WORLD, &ier));
	set_ready(b, 0);
	for (k = 0; k < 1000 && !fmpl_irecv_test(1, 1, WORLD); k++)
		sleep_ms(2);
	ASSERT_EQ(1, fmpl_irecv_test(1, 1, WORLD));
	ASSERT_LT(now_s() - b->kill_t, 1.0);
	fmpl_irecv_wait_status(1, 1, WORLD, &st, &ier);
	ASSERT_PEER_WITHIN_1S(ier, b);
}

TEST(posted_irecv_flag_reports_the_peer_death)
{
	struct board *b = shared(sizeof(*b));

	ASSERT_NE(NULL, b);
	kill_during(_metadata, 2, 1, irecv_rank, b);
}

/*
 * Rank 2 dies: ranks 0 and 1 still exchange messages, but the world's
 * collectives fail.
 */
static void survivors_rank(struct __test_metadata *_metadata, int rank,
			   int size, void *arg)
{
	struct board *b = arg;
	uint8_t buf[5000];
	int ier = -1;

	INIT(2);
	if (rank == 2)
		park();
	set_ready(b, rank);
	if (rank == 0)
		sleep_ms(800);	/* rank 2 is dead by then */
	else
		wait_ready(b, 0);
	if (rank == 0) {
		fill(buf, sizeof(buf), seed_of(0, size, 0, 40));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(buf, sizeof(buf), 1, 0, WORLD, &ier));
		ASSERT_EQ(FMPL_ERR_PEER, fmpl_send(buf, 1, 2, 0, WORLD, &ier));
	} else {
		memset(buf, 0, sizeof(buf));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(buf, sizeof(buf), 0, 0, WORLD, &ier));
		ASSERT_EQ(-1, check(buf, sizeof(buf), seed_of(0, size, 0, 40)));
	}
	ASSERT_EQ(FMPL_ERR_PEER, fmpl_barrier(WORLD, &ier));
}

TEST(survivors_keep_point_to_point_but_collectives_fail)
{
	struct board *b = shared(sizeof(*b));

	ASSERT_NE(NULL, b);
	kill_during(_metadata, 3, 2, survivors_rank, b);
}

/* ---- permissions ---------------------------------------------------------- */

/* Rank 1 becomes uid 65534 (and gid @gid) before joining root's world. */
static void perm_rank(struct __test_metadata *_metadata, int rank, int size,
		      void *arg)
{
	struct board *b = arg;
	uint64_t v = 0;
	int ier = -1;

	setenv("FMPL_JOIN_TIMEOUT_MS", "2000", 1);
	if (rank == 0) {
		static const char *const modes[] = { "user", "group", "any" };

		setenv("FMPL_MODE", modes[b->mode], 1);
		set_ready(b, 0);
		fmpl_init(NULL, NULL, 1, &ier);
		if (b->len) {	/* expected to be refused */
			ASSERT_EQ(FMPL_ERR_TIMEOUT, ier);
			return;
		}
		ASSERT_EQ(FMPL_SUCCESS, ier);
		v = seed_of(0, size, b->mode, 41);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(&v, sizeof(v), 1, 0, WORLD, &ier));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(&v, sizeof(v), 1, 0, WORLD, &ier));
		ASSERT_EQ(seed_of(1, size, b->mode, 41), v);
	} else {
		/* Keep root's group only to be let in as a group member. */
		gid_t gid = b->mode == FMPL_MODE_GROUP && !b->len ? 0 : 65534;

		ASSERT_EQ(0, setgroups(0, NULL));
		ASSERT_EQ(0, setgid(gid));
		ASSERT_EQ(0, setuid(65534));
		ASSERT_EQ(65534, geteuid());
		wait_ready(b, 0);
		sleep_ms(300);	/* rank 0 has created the world */
		fmpl_init(NULL, NULL, 1, &ier);
		if (b->len) {
			ASSERT_EQ(FMPL_ERR_PERM, ier);
			ASSERT_EQ(EACCES, errno);
			return;
		}
		ASSERT_EQ(FMPL_SUCCESS, ier);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(&v, sizeof(v), 0, 0, WORLD, &ier));
		ASSERT_EQ(seed_of(0, size, b->mode, 41), v);
		v = seed_of(1, size, b->mode, 41);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(&v, sizeof(v), 0, 0, WORLD, &ier));
	}
	FINALIZE();
}

static void perm_case(struct __test_metadata *_metadata, int mode, int refused)
{
	struct board *b = shared(sizeof(*b));

	ASSERT_NE(NULL, b);
	b->mode = mode;
	b->len = (size_t)refused;
	RUN_RANKS(2, perm_rank, b);
}

TEST(other_user_refused_by_default)
{
	if (geteuid())
		SKIP(return, "needs root to create the world and setuid()");
	perm_case(_metadata, FMPL_MODE_USER, 1);
	/* group mode does not let in a process of another group either */
	perm_case(_metadata, FMPL_MODE_GROUP, 1);
}

TEST(other_user_joins_with_fmpl_mode_any)
{
	if (geteuid())
		SKIP(return, "needs root to create the world and setuid()");
	perm_case(_metadata, FMPL_MODE_ANY, 0);
}

/* FMPL_MODE=group and a joiner that kept gid 0: allowed. */
static void group_rank(struct __test_metadata *_metadata, int rank, int size,
		       void *arg)
{
	struct board *b = arg;

	b->mode = FMPL_MODE_GROUP;
	b->len = 0;
	perm_rank(_metadata, rank, size, b);
}

TEST(other_user_of_the_group_joins_with_fmpl_mode_group)
{
	struct board *b = shared(sizeof(*b));

	if (geteuid())
		SKIP(return, "needs root to create the world and setuid()");
	ASSERT_NE(NULL, b);
	RUN_RANKS(2, group_rank, b);
}

/* ---- joining ---------------------------------------------------------------- */

/* One process of a world of two: FMPL_ERR_TIMEOUT after about 500 ms. */
static void alone_rank(struct __test_metadata *_metadata, int rank, int size,
		       void *arg)
{
	double t = now_s();
	int ier = -1;

	(void)arg;
	(void)rank;
	(void)size;
	setenv("FMPL_SIZE", "2", 1);
	setenv("FMPL_JOIN_TIMEOUT_MS", "500", 1);
	fmpl_init(NULL, NULL, 1, &ier);
	t = now_s() - t;
	ASSERT_EQ(FMPL_ERR_TIMEOUT, ier);
	ASSERT_EQ(ETIMEDOUT, errno);
	ASSERT_GE(t, 0.45);
	ASSERT_LT(t, 5.0);
	/* Not initialised: a new attempt is possible. */
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_barrier(WORLD, &ier));
}

TEST(join_timeout)
{
	RUN_RANKS(1, alone_rank, NULL);
}

/*
 * Both processes claim rank 0 (rank 1 rewrites its FMPL_RANK), or rank 1
 * claims another size, or rank 1 asks for more matching indices (the
 * kernel indexes a sender's slots with its receivers' count, so every rank
 * must have the same): the later one fails with FMPL_ERR_INIT, the first
 * one times out.
 */
static void clash_rank(struct __test_metadata *_metadata, int rank, int size,
		       void *arg)
{
	struct board *b = arg;
	int ier = -1;

	(void)size;
	setenv("FMPL_JOIN_TIMEOUT_MS", "1000", 1);
	if (rank == 0) {
		set_ready(b, 0);
		fmpl_init(NULL, NULL, 1, &ier);
		ASSERT_EQ(FMPL_ERR_TIMEOUT, ier);
		return;
	}
	if (b->mode == 0)
		setenv("FMPL_RANK", "0", 1);
	else if (b->mode == 1)
		setenv("FMPL_SIZE", "3", 1);
	wait_ready(b, 0);
	sleep_ms(200);
	fmpl_init(NULL, NULL, b->mode == 2 ? 64 : 1, &ier);
	ASSERT_EQ(FMPL_ERR_INIT, ier);
	ASSERT_EQ(b->mode == 0 ? EADDRINUSE : EEXIST, errno);
}

TEST(rank_taken_twice_or_size_or_count_mismatch)
{
	int m;

	for (m = 0; m < 3; m++) {
		struct board *b = shared(sizeof(*b));

		ASSERT_NE(NULL, b);
		b->mode = m;
		RUN_RANKS(2, clash_rank, b);
	}
}

/*
 * A userfaultfd that nobody reads, on @len bytes of fresh anonymous memory:
 * every access to them waits for ever, as one to a FUSE file whose server
 * hangs.  NULL (errno set) where userfaultfd is not allowed.
 */
static void *unserved_memory(size_t len, int *fd)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	void *p;

	*fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (*fd < 0)
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	reg.range.start = (uintptr_t)p;
	reg.range.len = len;
	if (p == MAP_FAILED || ioctl(*fd, UFFDIO_API, &api) ||
	    ioctl(*fd, UFFDIO_REGISTER, &reg)) {
		close(*fd);
		return NULL;
	}
	return p;
}

/*
 * Rank 1 posts a 1 MB receive; rank 0 sends into it from unserved memory,
 * so the copy (its own part and the copy helpers') waits on faults.
 */
static void unserved_rank(struct __test_metadata *_metadata, int rank,
			  int size, void *arg)
{
	struct board *b = arg;
	fmpl_status st;
	void *buf;
	int ier = -1, fd;

	(void)size;
	INIT(2);
	if (rank == 1) {
		buf = malloc(b->len);
		ASSERT_NE(NULL, buf);
		ASSERT_EQ(FMPL_SUCCESS,
			  fmpl_irecv(buf, b->len, 0, 0, WORLD, &ier));
		set_ready(b, 1);
		fmpl_irecv_wait_status(0, 0, WORLD, &st, &ier);
		ASSERT_EQ(FMPL_ERR_PEER, ier);
		return;
	}
	buf = unserved_memory(b->len, &fd);
	ASSERT_NE(NULL, buf);
	wait_ready(b, 1);
	set_ready(b, 0);
	fmpl_send(buf, b->len, 1, 0, WORLD, &ier);
	TH_LOG("fmpl_send from unserved memory returned (ier %d)", ier);
	_metadata->passed = 0;
}

/*
 * A rank copying a message out of memory whose faults wait for user space
 * dies of SIGKILL within a second.  The kernel's copy helpers (with 2 CPUs
 * or more) never wait on such a fault: before 2026-12-02 one did, and the
 * rank stayed in D state, unkillable, for ever.
 */
TEST(rank_copying_from_unserved_userfaultfd_memory_dies_of_sigkill)
{
	struct board *b = shared(sizeof(*b));
	pid_t pids[RANKS_MAX];
	int fd, status = 0, k;
	void *probe;

	ASSERT_NE(NULL, b);
	b->len = 1 * MB;
	probe = unserved_memory(b->len, &fd);
	if (!probe)
		SKIP(return, "userfaultfd: %s (needs root or vm.unprivileged_userfaultfd=1)",
		     strerror(errno));
	close(fd);
	munmap(probe, b->len);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		TH_LOG("one CPU: no copy helper runs, the helpers go untested");

	start_ranks(_metadata, 2, unserved_rank, b, pids);
	wait_ready(b, 0);
	sleep_ms(300);		/* rank 0 into the copy */
	b->kill_t = now_s();
	kill(pids[0], SIGKILL);
	for (k = 0; k < 1000; k++) {
		if (waitpid(pids[0], &status, WNOHANG) == pids[0])
			break;
		sleep_ms(10);
	}
	if (k == 1000) {
		TH_LOG("rank 0 is still there 10 s after SIGKILL (D state?)");
		kill(pids[1], SIGKILL);
		ASSERT_LT(k, 1000);
	}
	TH_LOG("rank 0 reaped %.3f s after SIGKILL", now_s() - b->kill_t);
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	ASSERT_LT(now_s() - b->kill_t, 1.0);
	pids[0] = pids[1];
	ASSERT_EQ(0, wait_ranks(_metadata, 1, pids));
}

#include "fmpl_main.h"

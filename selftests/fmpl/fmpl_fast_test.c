// SPDX-License-Identifier: GPL-2.0
/*
 * fmpl_fast_test - the fast indices (FMPL_FAST, FMPL_FEATURE_FAST): small
 * messages through the world's shared fast area with no system call.
 * Data of every message checked; eager completion; a full slot making the
 * next send wait (and isend busy); sleeping receivers and senders woken;
 * truncation and oversize sends; fast and normal indices side by side; a
 * peer's death ending a sleeping wait; ranks disagreeing on FMPL_FAST; and
 * the raw interface (mmap, FMPL_IOC_FAST_WAIT/WAKE, fast_count) fed
 * garbage.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include <fmpl.h>
#include <sys/ioctl.h>
#include "fmpl_util.h"

#define NFAST	8
#define COUNT	16

static void init_fast(struct __test_metadata *_metadata, const char *spin)
{
	setenv("FMPL_FAST", "8", 1);
	if (spin)
		setenv("FMPL_SPIN_US", spin, 1);
	INIT(COUNT);
}

/* 2000 round trips on a fast index, sizes 0..96, a 1 MB normal one between. */
static void pingpong(struct __test_metadata *_metadata, int rank, int size,
		     void *arg)
{
	uint8_t buf[FMPL_FAST_DATA_MAX], *big = malloc(MB);
	int i, ier, peer = 1 - rank;
	fmpl_status st;

	(void)arg;
	ASSERT_NE(NULL, big);
	init_fast(_metadata, NULL);
	for (i = 0; i < 2000; i++) {
		size_t n = (size_t)i % (FMPL_FAST_DATA_MAX + 1);

		if (rank == 0) {
			fill(buf, n, seed_of(0, size, i, 1));
			fmpl_send(buf, n, peer, 3, WORLD, &ier);
			ASSERT_EQ(FMPL_SUCCESS, ier);
			memset(buf, 0, sizeof(buf));
			fmpl_recv_status(buf, sizeof(buf), peer, 3, WORLD, &st, &ier);
			ASSERT_EQ(FMPL_SUCCESS, ier);
			ASSERT_EQ(n, st.size);
			ASSERT_EQ(-1, check(buf, n, seed_of(1, size, i, 1)));
		} else {
			fmpl_recv_status(buf, sizeof(buf), peer, 3, WORLD, &st, &ier);
			ASSERT_EQ(FMPL_SUCCESS, ier);
			ASSERT_EQ(n, st.size);
			ASSERT_EQ(3, st.mai);
			ASSERT_EQ(-1, check(buf, n, seed_of(0, size, i, 1)));
			fill(buf, n, seed_of(1, size, i, 1));
			fmpl_send(buf, n, peer, 3, WORLD, &ier);
			ASSERT_EQ(FMPL_SUCCESS, ier);
		}
		if (i % 500 == 0) {	/* a normal index in between */
			if (rank == 0) {
				fill(big, MB, seed_of(0, size, i, 2));
				fmpl_send(big, MB, peer, NFAST + 1, WORLD, &ier);
			} else {
				fmpl_recv(big, MB, peer, NFAST + 1, WORLD, &ier);
				ASSERT_EQ(-1, check(big, MB, seed_of(0, size, i, 2)));
			}
			ASSERT_EQ(FMPL_SUCCESS, ier);
		}
	}
	free(big);
	fmpl_finalize(&ier);
	ASSERT_EQ(FMPL_SUCCESS, ier);
}

TEST(pingpong_fast_and_normal_indices)
{
	RUN_RANKS(2, pingpong, NULL);
}

/*
 * Eager: rank 0's sends on every fast index complete before rank 1 posts
 * anything; a second send on a full slot waits until it is taken, and an
 * isend there is busy.  Rank 1 takes them in reverse order.
 */
static void eager(struct __test_metadata *_metadata, int rank, int size,
		  void *arg)
{
	uint8_t buf[FMPL_FAST_DATA_MAX];
	double t;
	int m, ier;

	(void)arg;
	init_fast(_metadata, NULL);
	if (rank == 0) {
		t = now_s();
		for (m = 0; m < NFAST; m++) {
			fill(buf, 40, seed_of(0, size, m, 3));
			fmpl_send(buf, 40, 1, m, WORLD, &ier);
			ASSERT_EQ(FMPL_SUCCESS, ier);
		}
		ASSERT_LT(now_s() - t, 0.25);	/* rank 1 sleeps 500 ms */
		fmpl_isend(buf, 8, 1, 0, WORLD, &ier);
		ASSERT_EQ(FMPL_ERR_BUSY, ier);
		fill(buf, 8, seed_of(0, size, 99, 3));
		fmpl_send(buf, 8, 1, 0, WORLD, &ier);	/* waits for the take */
		ASSERT_EQ(FMPL_SUCCESS, ier);
		ASSERT_GT(now_s() - t, 0.4);
	} else {
		sleep_ms(500);
		for (m = NFAST - 1; m >= 0; m--) {
			memset(buf, 0, sizeof(buf));
			fmpl_recv(buf, sizeof(buf), 0, m, WORLD, &ier);
			ASSERT_EQ(FMPL_SUCCESS, ier);
			ASSERT_EQ(-1, check(buf, 40, seed_of(0, size, m, 3)));
		}
		fmpl_recv(buf, sizeof(buf), 0, 0, WORLD, &ier);
		ASSERT_EQ(FMPL_SUCCESS, ier);
		ASSERT_EQ(-1, check(buf, 8, seed_of(0, size, 99, 3)));
	}
	fmpl_finalize(&ier);
	ASSERT_EQ(FMPL_SUCCESS, ier);
}

TEST(eager_sends_and_a_full_slot)
{
	RUN_RANKS(2, eager, NULL);
}

/* irecv / irecv_test / irecv_wait, truncation, oversize, with no spinning. */
static void nonblock(struct __test_metadata *_metadata, int rank, int size,
		     void *arg)
{
	uint8_t buf[FMPL_FAST_DATA_MAX + 1], small[20];
	fmpl_status st;
	int ier, k;

	(void)arg;
	init_fast(_metadata, "0");	/* sleep in the kernel at once */
	if (rank == 0) {
		sleep_ms(200);
		fill(buf, 64, seed_of(0, size, 0, 4));
		fmpl_send(buf, 64, 1, 5, WORLD, &ier);
		ASSERT_EQ(FMPL_SUCCESS, ier);
		fill(buf, 50, seed_of(0, size, 1, 4));
		fmpl_send(buf, 50, 1, 6, WORLD, &ier);
		ASSERT_EQ(FMPL_SUCCESS, ier);
		fmpl_send(buf, FMPL_FAST_DATA_MAX + 1, 1, 7, WORLD, &ier);
		ASSERT_EQ(FMPL_ERR_ARG, ier);
		/* Rank 1 is asleep in its receive: the send wakes it. */
		sleep_ms(200);
		fill(buf, 10, seed_of(0, size, 2, 4));
		fmpl_send(buf, 10, 1, 7, WORLD, &ier);
		ASSERT_EQ(FMPL_SUCCESS, ier);
	} else {
		/* Nothing ever posted there: nothing to wait for. */
		fmpl_irecv_wait(0, 5, WORLD, &ier);
		ASSERT_EQ(FMPL_ERR_NOENT, ier);
		fmpl_irecv(buf, sizeof(buf), 0, 5, WORLD, &ier);
		ASSERT_EQ(FMPL_SUCCESS, ier);
		fmpl_irecv(buf, sizeof(buf), 0, 5, WORLD, &ier);
		ASSERT_EQ(FMPL_ERR_BUSY, ier);
		ASSERT_EQ(0, fmpl_irecv_test(0, 5, WORLD));
		for (k = 0; k < 5000 && !fmpl_irecv_test(0, 5, WORLD); k++)
			sleep_ms(1);
		ASSERT_EQ(1, fmpl_irecv_test(0, 5, WORLD));
		fmpl_irecv_wait_status(0, 5, WORLD, &st, &ier);
		ASSERT_EQ(FMPL_SUCCESS, ier);
		ASSERT_EQ(64, st.size);
		ASSERT_EQ(-1, check(buf, 64, seed_of(0, size, 0, 4)));
		/* As on other indices: waited for again, the same result. */
		memset(&st, 0, sizeof(st));
		fmpl_irecv_wait_status(0, 5, WORLD, &st, &ier);
		ASSERT_EQ(FMPL_SUCCESS, ier);
		ASSERT_EQ(64, st.size);
		ASSERT_EQ(5, st.mai);
		ASSERT_EQ(1, fmpl_irecv_test(0, 5, WORLD));
		fmpl_recv_status(small, sizeof(small), 0, 6, WORLD, &st, &ier);
		ASSERT_EQ(FMPL_ERR_TRUNCATE, ier);
		ASSERT_EQ(sizeof(small), st.size);
		ASSERT_EQ(-1, check(small, sizeof(small), seed_of(0, size, 1, 4)));
		fmpl_recv_status(buf, sizeof(buf), 0, 7, WORLD, &st, &ier);
		ASSERT_EQ(FMPL_SUCCESS, ier);
		ASSERT_EQ(10, st.size);
		ASSERT_EQ(-1, check(buf, 10, seed_of(0, size, 2, 4)));
	}
	fmpl_finalize(&ier);
	ASSERT_EQ(FMPL_SUCCESS, ier);
}

/* libfmpl's mapping of the fast area, from /proc/self/maps. */
static char *fast_area(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], *area = NULL;
	unsigned long start;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "/dev/fmpl") &&
		    sscanf(line, "%lx-", &start) == 1)
			area = (char *)start;
	if (f)
		fclose(f);
	return area;
}

/* A peer that writes a size past the slot into the area: refused, no overrun. */
static void liar(struct __test_metadata *_metadata, int rank, int size,
		 void *arg)
{
	uint8_t buf[4 * FMPL_FAST_DATA_MAX];
	struct fmpl_fast_slot *s;
	char *area;
	int ier;

	(void)arg;
	(void)size;
	init_fast(_metadata, NULL);
	if (rank == 0) {
		area = fast_area();
		ASSERT_NE(NULL, area);
		/* slot [sender 0][receiver 1][index 2] */
		s = (struct fmpl_fast_slot *)(area + FMPL_FAST_HDR_BYTES) +
		    (0 * 2 + 1) * NFAST + 2;
		s->size = 100000;
		__atomic_store_n(&s->sent, s->sent + 1, __ATOMIC_SEQ_CST);
	} else {
		memset(buf, 0xee, sizeof(buf));
		fmpl_recv(buf, sizeof(buf), 0, 2, WORLD, &ier);
		ASSERT_EQ(FMPL_ERR_OTHER, ier);
		ASSERT_EQ(EPROTO, errno);
		/* nothing past a slot's data was written */
		ASSERT_EQ(-1, check_byte(buf + FMPL_FAST_DATA_MAX,
					 sizeof(buf) - FMPL_FAST_DATA_MAX, 0xee));
	}
	fmpl_finalize(&ier);
	ASSERT_EQ(FMPL_SUCCESS, ier);
}

TEST(a_lying_peer_cannot_make_a_receive_overrun)
{
	RUN_RANKS(2, liar, NULL);
}

TEST(irecv_test_wait_truncation_and_sleeping_receiver)
{
	RUN_RANKS(2, nonblock, NULL);
}

/* A sender asleep on a full slot is woken when the receiver takes it. */
static void sleeping_sender(struct __test_metadata *_metadata, int rank,
			    int size, void *arg)
{
	uint8_t buf[8];
	int i, ier;

	(void)arg;
	init_fast(_metadata, "0");
	for (i = 0; i < 50; i++) {
		if (rank == 0) {
			fill(buf, 8, seed_of(0, size, i, 5));
			fmpl_send(buf, 8, 1, 1, WORLD, &ier);
		} else {
			if (i % 10 == 0)
				sleep_ms(50);
			fmpl_recv(buf, 8, 0, 1, WORLD, &ier);
			ASSERT_EQ(-1, check(buf, 8, seed_of(0, size, i, 5)));
		}
		ASSERT_EQ(FMPL_SUCCESS, ier);
	}
	fmpl_finalize(&ier);
	ASSERT_EQ(FMPL_SUCCESS, ier);
}

/*
 * fmpl_comm_free with a fast receive posted on the communicator:
 * FMPL_ERR_BUSY, not counted; rank 0 sends only after rank 1 saw it, then
 * both free.
 */
static void free_busy(struct __test_metadata *_metadata, int rank, int size,
		      void *arg)
{
	int *busy_seen = arg, comm, ier, k;
	uint8_t buf[FMPL_FAST_DATA_MAX];

	init_fast(_metadata, NULL);
	ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_create(&comm, 0, &ier));
	if (rank == 1) {
		memset(buf, 0, sizeof(buf));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv(buf, sizeof(buf), 0, 2, comm, &ier));
		ASSERT_EQ(FMPL_ERR_BUSY, fmpl_comm_free(&comm, &ier));
		ASSERT_EQ(EBUSY, errno);
		__atomic_store_n(busy_seen, 1, __ATOMIC_SEQ_CST);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv_wait(0, 2, comm, &ier));
		ASSERT_EQ(-1, check(buf, 40, seed_of(0, size, 0, 8)));
	} else {
		for (k = 0; k < 10000 && !__atomic_load_n(busy_seen, __ATOMIC_SEQ_CST); k++)
			sleep_ms(1);
		ASSERT_LT(k, 10000);
		fill(buf, 40, seed_of(0, size, 0, 8));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(buf, 40, 1, 2, comm, &ier));
	}
	ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_free(&comm, &ier));
	ASSERT_EQ((int)FMPL_COMM_NULL, comm);
	FINALIZE();
}

TEST(comm_free_waits_for_a_fast_receive)
{
	int *busy_seen = shared(sizeof(*busy_seen));

	ASSERT_NE(NULL, busy_seen);
	RUN_RANKS(2, free_busy, busy_seen);
}

TEST(sleeping_sender_woken_in_order)
{
	RUN_RANKS(2, sleeping_sender, NULL);
}

struct death {
	int ready;
	double kill_t;
};

static void blocked(struct __test_metadata *_metadata, int rank, int size,
		    void *arg)
{
	struct death *d = arg;
	uint8_t buf[8];
	int ier;

	(void)size;
	init_fast(_metadata, rank ? "0" : NULL);
	if (rank == 0) {
		for (;;)
			pause();
	}
	__atomic_store_n(&d->ready, 1, __ATOMIC_RELEASE);
	fmpl_recv(buf, sizeof(buf), 0, 2, WORLD, &ier);
	ASSERT_EQ(FMPL_ERR_PEER, ier);
	ASSERT_LT(now_s() - d->kill_t, 1.0);
}

TEST(peer_death_ends_a_sleeping_fast_receive)
{
	struct death *d = shared(sizeof(*d));
	pid_t pids[2];

	ASSERT_NE(NULL, d);
	start_ranks(_metadata, 2, blocked, d, pids);
	while (!__atomic_load_n(&d->ready, __ATOMIC_ACQUIRE))
		sleep_ms(2);
	sleep_ms(300);
	d->kill_t = now_s();
	kill(pids[0], SIGKILL);
	ASSERT_EQ(0, wait_ranks_killed(_metadata, 2, pids, 1));
}

static void mismatch(struct __test_metadata *_metadata, int rank, int size,
		     void *arg)
{
	int *fails = arg, ier = -1;

	(void)size;
	setenv("FMPL_FAST", rank ? "4" : "8", 1);
	setenv("FMPL_JOIN_TIMEOUT_MS", "1500", 1);
	fmpl_init(NULL, NULL, COUNT, &ier);
	if (ier != FMPL_SUCCESS)
		__atomic_add_fetch(fails, 1, __ATOMIC_SEQ_CST);
	else
		fmpl_finalize(&ier);
}

TEST(ranks_disagreeing_on_fmpl_fast_do_not_join)
{
	int *fails = shared(sizeof(int));

	ASSERT_NE(NULL, fails);
	RUN_RANKS(2, mismatch, fails);
	ASSERT_EQ(2, *fails);	/* EEXIST for one, ETIMEDOUT for the other */
}

/* ---- the raw interface ------------------------------------------------ */

static int raw_world(uint32_t fast_count, uint32_t size, int *err)
{
	struct fmpl_api api = { .api = FMPL_API_VERSION };
	size_t len = FMPL_AREA_BYTES(size, 4, struct fmpl_header);
	struct fmpl_init in = {
		.key = fresh_key(), .size = size, .rank = 0, .count = 4,
		.fast_count = fast_count, .join_timeout_ms = 100,
	};
	int fd = open(FMPL_DEV, O_RDWR);

	in.ma = (uintptr_t)mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	in.fa = (uintptr_t)mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || ioctl(fd, FMPL_IOC_API, &api))
		return -1;
	*err = ioctl(fd, FMPL_IOC_INIT, &in) ? errno : 0;
	return fd;
}

TEST(raw_interface_garbage)
{
	size_t len = (size_t)fmpl_fast_bytes(1, 4);
	struct fmpl_fast_wait fw = { .offset = 0, .value = 1, .peer = 0,
				     .timeout_ms = 50 };
	struct fmpl_fast_wake fk = { .rank = 0 };
	int fd, nofast, err;
	uint32_t *area;
	double t;

	/* fast_count past its limit, or an area over 8 MiB */
	fd = raw_world(FMPL_FAST_COUNT_MAX + 1, 1, &err);
	ASSERT_EQ(EINVAL, err);
	close(fd);
	fd = raw_world(FMPL_FAST_COUNT_MAX, 64, &err);
	ASSERT_EQ(EINVAL, err);
	close(fd);

	/* mmap before INIT, and of a world without a fast area */
	fd = open(FMPL_DEV, O_RDWR);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0));
	ASSERT_EQ(ENOTCONN, errno);
	close(fd);
	nofast = raw_world(0, 1, &err);
	ASSERT_EQ(0, err);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, nofast, 0));
	ASSERT_EQ(ENODEV, errno);
	ASSERT_EQ(-1, ioctl(nofast, FMPL_IOC_FAST_WAIT, &fw));
	ASSERT_EQ(ENODEV, errno);
	ASSERT_EQ(-1, ioctl(nofast, FMPL_IOC_FAST_WAKE, &fk));
	ASSERT_EQ(ENODEV, errno);
	close(nofast);

	fd = raw_world(4, 1, &err);
	ASSERT_EQ(0, err);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, len, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE, fd, 0));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 1 << 20, PROT_READ, MAP_SHARED, fd, 0));
	ASSERT_EQ(EINVAL, errno);
	area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, area);
	ASSERT_EQ(-1, check_byte(area, len, 0));	/* zeroed */

	/* FAST_WAIT: garbage, then a real timeout and a real wake-up */
	fw.offset = 2;
	ASSERT_EQ(-1, ioctl(fd, FMPL_IOC_FAST_WAIT, &fw));
	ASSERT_EQ(EINVAL, errno);
	fw.offset = len;
	ASSERT_EQ(-1, ioctl(fd, FMPL_IOC_FAST_WAIT, &fw));
	ASSERT_EQ(EINVAL, errno);
	fw.offset = 0;
	fw.peer = 1;
	ASSERT_EQ(-1, ioctl(fd, FMPL_IOC_FAST_WAIT, &fw));
	ASSERT_EQ(EINVAL, errno);
	fw.peer = 0;
	fw.reserved0 = 1;
	ASSERT_EQ(-1, ioctl(fd, FMPL_IOC_FAST_WAIT, &fw));
	ASSERT_EQ(EINVAL, errno);
	fw.reserved0 = 0;
	fw.reserved[1] = 1;
	ASSERT_EQ(-1, ioctl(fd, FMPL_IOC_FAST_WAIT, &fw));
	ASSERT_EQ(EINVAL, errno);
	fw.reserved[1] = 0;
	ASSERT_EQ(0, ioctl(fd, FMPL_IOC_FAST_WAIT, &fw));	/* 0 != 1 */
	fw.offset = FMPL_FAST_HDR_BYTES;	/* slot 0's sent, 0 */
	fw.value = 0;
	t = now_s();
	ASSERT_EQ(-1, ioctl(fd, FMPL_IOC_FAST_WAIT, &fw));
	ASSERT_EQ(ETIMEDOUT, errno);
	ASSERT_GT(now_s() - t, 0.04);
	area[FMPL_FAST_HDR_BYTES / 4] = 7;	/* changed: returns at once */
	ASSERT_EQ(0, ioctl(fd, FMPL_IOC_FAST_WAIT, &fw));

	fk.rank = 1;
	ASSERT_EQ(-1, ioctl(fd, FMPL_IOC_FAST_WAKE, &fk));
	ASSERT_EQ(EINVAL, errno);
	fk.rank = 0;
	fk.reserved0 = 1;
	ASSERT_EQ(-1, ioctl(fd, FMPL_IOC_FAST_WAKE, &fk));
	ASSERT_EQ(EINVAL, errno);
	fk.reserved0 = 0;
	ASSERT_EQ(0, ioctl(fd, FMPL_IOC_FAST_WAKE, &fk));
	munmap(area, len);
	close(fd);
}

#include "fmpl_main.h"

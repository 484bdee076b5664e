// SPDX-License-Identifier: GPL-2.0
/*
 * fmpl_spool_test - buffered mode (fmpl_sendbuf_set/fmpl_sendbuf_check):
 * with timeout 0 a send completes at once with no receive posted and the
 * data arrives when the receive comes later (the sender's buffer reused
 * meanwhile); with 50 ms a send blocks about 50 ms then spools; in
 * synchronous mode (FMPL_TIMEOUT_NONE, the default) a send blocks until
 * the receive is posted; nsend/nspool count; a message larger than the
 * free spool waits for its receive; so does a second send on an index
 * whose previous message is still spooled (libfmpl waits for the index);
 * removing the spool while messages are in it is refused; both ranks
 * sending first does not deadlock; fmpl_finalize delivers what is
 * spooled before leaving; and a rank exiting without it drops its
 * spooled any-source sends cleanly.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include <fmpl.h>
#include "fmpl_util.h"

struct sync {
	int sent;		/* rank 0's sends returned */
	int posted;		/* rank 1 is about to post */
	int done;		/* rank 1 received everything */
};

static void *spool_alloc(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, (size_t)sysconf(_SC_PAGESIZE), len))
		return NULL;
	return p;
}

static void wait_flag(int *f)
{
	while (!__atomic_load_n(f, __ATOMIC_ACQUIRE))
		sleep_ms(2);
}

static void set_flag(int *f)
{
	__atomic_store_n(f, 1, __ATOMIC_RELEASE);
}

static const size_t lens[3] = { 100, 64 * KB, 300 * KB + 7 };

/* Timeout 0: three sends complete before any receive is posted. */
static void buffered_rank(struct __test_metadata *_metadata, int rank,
			  int size, void *arg)
{
	struct sync *sy = arg;
	int ier, k, nsend = -1, nspool = -1;

	INIT(4);
	if (rank == 0) {
		void *spool = spool_alloc(1 * MB);
		uint8_t *out = malloc(lens[2]);
		double t0;

		ASSERT_NE(NULL, spool);
		ASSERT_NE(NULL, out);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_set(spool, 1 * MB, 0, &ier));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_check(&nsend, &nspool, &ier));
		ASSERT_EQ(0, nsend);
		ASSERT_EQ(0, nspool);
		for (k = 0; k < 3; k++) {
			fill(out, lens[k], seed_of(0, size, k, 20));
			t0 = now_s();
			ASSERT_EQ(FMPL_SUCCESS, fmpl_send(out, lens[k], 1, k, WORLD, &ier));
			ASSERT_LT(now_s() - t0, 2.0);
			/* The spool has the data: the buffer may change. */
			memset(out, 0xa5, lens[k]);
		}
		ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_check(&nsend, &nspool, &ier));
		ASSERT_EQ(0, nsend);
		ASSERT_EQ(3, nspool);
		/* The spool cannot go while messages are in it. */
		ASSERT_EQ(FMPL_ERR_BUSY, fmpl_sendbuf_set(NULL, 0, 0, &ier));
		set_flag(&sy->sent);
		wait_flag(&sy->done);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_check(&nsend, &nspool, &ier));
		ASSERT_EQ(3, nsend);
		ASSERT_EQ(0, nspool);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_check(&nsend, &nspool, &ier));
		ASSERT_EQ(0, nsend);	/* since the previous check */
		ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_NONE, &ier));
		free(out);
	} else {
		uint8_t *in = malloc(lens[2] + 100);
		fmpl_status st;

		ASSERT_NE(NULL, in);
		wait_flag(&sy->sent);
		for (k = 2; k >= 0; k--) {
			memset(in, 0, lens[2] + 100);
			ASSERT_EQ(FMPL_SUCCESS, fmpl_recv_status(in, lens[2] + 100, 0, k, WORLD, &st, &ier));
			ASSERT_EQ(lens[k], st.size);
			ASSERT_EQ(-1, check(in, lens[k], seed_of(0, size, k, 20)));
		}
		set_flag(&sy->done);
		free(in);
	}
	FINALIZE();
}

TEST(timeout_0_send_completes_without_receive)
{
	struct sync *sy = shared(4096);

	ASSERT_NE(NULL, sy);
	RUN_RANKS(2, buffered_rank, sy);
}

/* Timeout 50 ms: the send blocks about 50 ms, then spools. */
static void timeout_rank(struct __test_metadata *_metadata, int rank, int size,
			 void *arg)
{
	struct sync *sy = arg;
	uint8_t buf[20000];
	int ier, nsend, nspool;

	INIT(1);
	if (rank == 0) {
		void *spool = spool_alloc(256 * KB);
		double t;

		ASSERT_NE(NULL, spool);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_set(spool, 256 * KB, 50, &ier));
		fill(buf, sizeof(buf), seed_of(0, size, 0, 21));
		t = now_s();
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(buf, sizeof(buf), 1, 0, WORLD, &ier));
		t = now_s() - t;
		if (t < 0.045 || t > 3.0)
			TH_LOG("send took %.3f s", t);
		ASSERT_GE(t, 0.045);
		ASSERT_LT(t, 3.0);
		memset(buf, 0, sizeof(buf));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_check(&nsend, &nspool, &ier));
		ASSERT_EQ(1, nspool);
		set_flag(&sy->sent);
		wait_flag(&sy->done);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_check(&nsend, &nspool, &ier));
		ASSERT_EQ(1, nsend);
		ASSERT_EQ(0, nspool);
	} else {
		wait_flag(&sy->sent);
		memset(buf, 0, sizeof(buf));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(buf, sizeof(buf), 0, 0, WORLD, &ier));
		ASSERT_EQ(-1, check(buf, sizeof(buf), seed_of(0, size, 0, 21)));
		set_flag(&sy->done);
	}
	FINALIZE();
}

TEST(timeout_50ms_blocks_then_spools)
{
	struct sync *sy = shared(4096);

	ASSERT_NE(NULL, sy);
	RUN_RANKS(2, timeout_rank, sy);
}

/*
 * Synchronous mode: the send returns only once the receive is posted
 * (rank 1 posts 300 ms after rank 0 starts sending), with the default
 * mode and with a spool set to FMPL_TIMEOUT_NONE; nothing is spooled.
 */
static void sync_rank(struct __test_metadata *_metadata, int rank, int size,
		      void *arg)
{
	struct sync *sy = arg;
	uint8_t buf[3000];
	int ier, round, nsend, nspool;

	INIT(2);
	for (round = 0; round < 2; round++) {
		int *go = round ? &sy->done : &sy->posted;

		if (rank == 0) {
			double t;

			if (round == 1) {
				void *spool = spool_alloc(64 * KB);

				ASSERT_NE(NULL, spool);
				ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_set(spool, 64 * KB, FMPL_TIMEOUT_NONE, &ier));
			}
			fill(buf, sizeof(buf), seed_of(0, size, round, 22));
			set_flag(go);
			t = now_s();
			ASSERT_EQ(FMPL_SUCCESS, fmpl_send(buf, sizeof(buf), 1, round, WORLD, &ier));
			t = now_s() - t;
			if (t < 0.25)
				TH_LOG("round %d: send returned after %.3f s", round, t);
			ASSERT_GE(t, 0.25);
			if (round == 1) {
				ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_check(&nsend, &nspool, &ier));
				ASSERT_EQ(0, nsend);
				ASSERT_EQ(0, nspool);
			}
		} else {
			wait_flag(go);
			sleep_ms(300);
			memset(buf, 0, sizeof(buf));
			ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(buf, sizeof(buf), 0, round, WORLD, &ier));
			ASSERT_EQ(-1, check(buf, sizeof(buf), seed_of(0, size, round, 22)));
		}
	}
	FINALIZE();
}

TEST(synchronous_send_waits_for_the_receive)
{
	struct sync *sy = shared(4096);

	ASSERT_NE(NULL, sy);
	RUN_RANKS(2, sync_rank, sy);
}

/*
 * Both ranks send 1 MB first, then receive: the spool breaks the cycle.
 * Three rounds on one index: a rank may be a round ahead, its next send
 * then waits until its previous message has been received.
 */
static void exchange_rank(struct __test_metadata *_metadata, int rank,
			  int size, void *arg)
{
	size_t len = 1 * MB + 3;
	uint8_t *out = malloc(len), *in = malloc(len);
	void *spool = spool_alloc(2 * MB);
	int ier, round;

	(void)arg;
	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, spool);
	INIT(1);
	ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_set(spool, 2 * MB, 0, &ier));
	for (round = 0; round < 3; round++) {
		fill(out, len, seed_of(rank, size, round, 23));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(out, len, 1 - rank, 0, WORLD, &ier));
		memset(in, 0, len);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(in, len, 1 - rank, 0, WORLD, &ier));
		ASSERT_EQ(-1, check(in, len, seed_of(1 - rank, size, round, 23)));
	}
	FINALIZE();
	free(out);
	free(in);
}

TEST(both_send_first_with_buffering)
{
	RUN_RANKS(2, exchange_rank, NULL);
}

/*
 * Two buffered sends on one index, no receive posted: the first spools at
 * once, the second waits until the first has been received (300 ms
 * later), then goes (spooled, or straight into the next receive); both
 * arrive, in order.
 */
static void twice_rank(struct __test_metadata *_metadata, int rank, int size,
		       void *arg)
{
	struct sync *sy = arg;
	uint8_t buf[2][777];
	int ier, k, nsend, nspool;

	INIT(1);
	if (rank == 0) {
		void *spool = spool_alloc(64 * KB);
		double t;

		ASSERT_NE(NULL, spool);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_set(spool, 64 * KB, 0, &ier));
		for (k = 0; k < 2; k++) {
			fill(buf[k], sizeof(buf[k]), seed_of(0, size, k, 26));
			if (k)
				set_flag(&sy->sent);
			t = now_s();
			ASSERT_EQ(FMPL_SUCCESS, fmpl_send(buf[k], sizeof(buf[k]), 1, 0, WORLD, &ier));
			t = now_s() - t;
			ASSERT_EQ(k == 0, t < 0.25);
			ASSERT_EQ(k == 1, t >= 0.25);
		}
		wait_flag(&sy->done);
		/* The second may have found its receive posted by then. */
		ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_check(&nsend, &nspool, &ier));
		ASSERT_LE(1, nsend);
		ASSERT_GE(2, nsend);
		ASSERT_EQ(0, nspool);
	} else {
		wait_flag(&sy->sent);
		sleep_ms(300);
		for (k = 0; k < 2; k++) {
			memset(buf[k], 0, sizeof(buf[k]));
			ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(buf[k], sizeof(buf[k]), 0, 0, WORLD, &ier));
			ASSERT_EQ(-1, check(buf[k], sizeof(buf[k]), seed_of(0, size, k, 26)));
		}
		set_flag(&sy->done);
	}
	FINALIZE();
}

TEST(second_send_on_a_spooled_index_waits)
{
	struct sync *sy = shared(4096);

	ASSERT_NE(NULL, sy);
	RUN_RANKS(2, twice_rank, sy);
}

/* A message larger than the free spool waits for its receive. */
static void full_rank(struct __test_metadata *_metadata, int rank, int size,
		      void *arg)
{
	struct sync *sy = arg;
	uint8_t buf[3 * 4096];
	int ier, nsend, nspool;

	INIT(1);
	if (rank == 0) {
		long page = sysconf(_SC_PAGESIZE);
		void *spool = spool_alloc((size_t)page);
		double t;

		ASSERT_NE(NULL, spool);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_set(spool, (size_t)page, 0, &ier));
		fill(buf, sizeof(buf), seed_of(0, size, 0, 24));
		set_flag(&sy->sent);
		t = now_s();
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(buf, sizeof(buf), 1, 0, WORLD, &ier));
		ASSERT_GE(now_s() - t, 0.25);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_check(&nsend, &nspool, &ier));
		ASSERT_EQ(0, nspool);
		ASSERT_EQ(0, nsend);
	} else {
		wait_flag(&sy->sent);
		sleep_ms(300);
		memset(buf, 0, sizeof(buf));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(buf, sizeof(buf), 0, 0, WORLD, &ier));
		ASSERT_EQ(-1, check(buf, sizeof(buf), seed_of(0, size, 0, 24)));
	}
	FINALIZE();
}

TEST(message_larger_than_the_spool_waits)
{
	struct sync *sy = shared(4096);

	ASSERT_NE(NULL, sy);
	RUN_RANKS(2, full_rank, sy);
}

/* An unaligned spool is refused; fmpl_finalize delivers what is spooled. */
static void finalize_rank(struct __test_metadata *_metadata, int rank,
			  int size, void *arg)
{
	uint8_t buf[5000];
	int ier;

	(void)arg;
	INIT(1);
	if (rank == 0) {
		uint8_t *spool = spool_alloc(128 * KB);

		ASSERT_NE(NULL, spool);
		ASSERT_EQ(FMPL_ERR_ARG, fmpl_sendbuf_set(spool + 8, 64 * KB, 0, &ier));
		ASSERT_EQ(FMPL_ERR_ARG, fmpl_sendbuf_set(spool, 64 * KB + 8, 0, &ier));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_set(spool, 128 * KB, 0, &ier));
		fill(buf, sizeof(buf), seed_of(0, size, 0, 25));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(buf, sizeof(buf), 1, 0, WORLD, &ier));
		/* Leaves only after rank 1 has the message and finalizes too. */
		FINALIZE();
	} else {
		sleep_ms(400);
		memset(buf, 0, sizeof(buf));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(buf, sizeof(buf), 0, 0, WORLD, &ier));
		ASSERT_EQ(-1, check(buf, sizeof(buf), seed_of(0, size, 0, 25)));
		FINALIZE();
	}
}

TEST(finalize_delivers_the_spool)
{
	RUN_RANKS(2, finalize_rank, NULL);
}

/*
 * A rank that exits without fmpl_finalize while its any-source sends are
 * spooled and unreceived: leaving drops them, and the receiver gets
 * FMPL_ERR_PEER.  Each dropped message is unlinked from the leaver's
 * spool first: the kernel WARNs (taint W) on a request freed while still
 * in a spool, where a later unlink would write into freed memory.
 */
static void any_exit_rank(struct __test_metadata *_metadata, int rank,
			  int size, void *arg)
{
	struct sync *sy = arg;
	int ier, k, nsend = -1, nspool = -1;
	uint8_t in[64];
	fmpl_status st;

	INIT(3);
	if (rank == 0) {
		void *spool = spool_alloc(1 * MB);
		uint8_t *out = malloc(lens[2]);

		ASSERT_NE(NULL, spool);
		ASSERT_NE(NULL, out);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_set(spool, 1 * MB, 0, &ier));
		for (k = 0; k < 3; k++) {
			fill(out, lens[k], seed_of(0, size, k, 26));
			ASSERT_EQ(FMPL_SUCCESS,
				  fmpl_send_any(out, lens[k], 1, k, WORLD, &ier));
		}
		ASSERT_EQ(FMPL_SUCCESS, fmpl_sendbuf_check(&nsend, &nspool, &ier));
		ASSERT_EQ(0, nsend);
		ASSERT_EQ(3, nspool);
		set_flag(&sy->sent);
		return;		/* exit without fmpl_finalize */
	}
	wait_flag(&sy->sent);
	fmpl_barrier(WORLD, &ier);	/* returns when rank 0 has left */
	ASSERT_EQ(FMPL_ERR_PEER, ier);
	fmpl_recv_any_status(in, sizeof(in), 0, WORLD, &st, &ier);
	ASSERT_EQ(FMPL_ERR_PEER, ier);
}

static unsigned long taint(void)
{
	unsigned long t = 0;
	FILE *f = fopen("/proc/sys/kernel/tainted", "r");

	if (f) {
		if (fscanf(f, "%lu", &t) != 1)
			t = 0;
		fclose(f);
	}
	return t;
}

#define TAINT_WARN_BIT	(1UL << 9)

TEST(exit_with_spooled_any_source_sends)
{
	struct sync *sy = shared(4096);
	unsigned long before = taint();

	ASSERT_NE(NULL, sy);
	if (before & TAINT_WARN_BIT)
		TH_LOG("kernel already tainted W: only the dmesg check can tell");
	RUN_RANKS(2, any_exit_rank, sy);
	if (!(before & TAINT_WARN_BIT))
		ASSERT_EQ(0, taint() & TAINT_WARN_BIT);
}

#include "fmpl_main.h"

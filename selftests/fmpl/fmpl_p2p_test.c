// SPDX-License-Identifier: GPL-2.0
/*
 * fmpl_p2p_test - point to point through libfmpl on /dev/fmpl, ranks
 * forked by the test.  Every message carries a pattern that depends on the
 * sender, the world size and the iteration, checked byte for byte, with
 * guard bytes around receive buffers: sizes 0 B .. 16 MB, unaligned
 * buffers, many indices in any order (isend before irecv and irecv before
 * isend), 600 outstanding receives, FMPL_TAG_ANY, EBUSY, truncation, the
 * any-source domain and its separation from the normal one, sends to self,
 * large copies split over idle CPUs (0, 1 and 8 helpers) into untouched
 * memory and into a buffer with a hole, argument errors.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include <fmpl.h>
#include "fmpl_util.h"

#define GUARD	64
#define GUARD_BYTE 0xee

/* A receive buffer of @len bytes with GUARD bytes of GUARD_BYTE around. */
static uint8_t *guarded(size_t len, size_t misalign)
{
	uint8_t *p = malloc(len + 2 * GUARD + misalign);

	if (!p)
		return NULL;
	memset(p, GUARD_BYTE, len + 2 * GUARD + misalign);
	return p + GUARD + misalign;
}

#define ASSERT_GUARDS(b, len) do {					\
	ASSERT_EQ(-1, check_byte((b) - GUARD, GUARD, GUARD_BYTE));	\
	ASSERT_EQ(-1, check_byte((b) + (len), GUARD, GUARD_BYTE));	\
} while (0)

static const size_t sizes[] = {
	0, 1, 8, 4095, 4096, 4097, 64 * KB, 1 * MB, 16 * MB,
};

/* Rank 0 sends each size to rank 1 (index 0), which sends it back changed. */
static void sizes_rank(struct __test_metadata *_metadata, int rank, int size,
		       void *arg)
{
	int peer = 1 - rank;
	size_t i;

	(void)arg;
	INIT(2);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t len = sizes[i];
		uint8_t *out = malloc(len + 1), *in = guarded(len, 0);
		fmpl_status st = { -1, -1, (size_t)-1 };
		int ier = -1, it = (int)i;

		ASSERT_NE(NULL, out);
		ASSERT_NE(NULL, in);
		fill(out, len, seed_of(rank, size, it, 1));
		if (rank == 0) {
			fmpl_send(out, len, peer, 0, WORLD, &ier);
			ASSERT_EQ(FMPL_SUCCESS, ier);
			fmpl_recv_status(in, len, peer, 1, WORLD, &st, &ier);
		} else {
			fmpl_recv_status(in, len, peer, 0, WORLD, &st, &ier);
			ASSERT_EQ(FMPL_SUCCESS, ier);
			fmpl_send(out, len, peer, 1, WORLD, &ier);
		}
		ASSERT_EQ(FMPL_SUCCESS, ier);
		ASSERT_EQ(len, st.size);
		ASSERT_EQ(peer, st.source);
		ASSERT_EQ(rank == 0 ? 1 : 0, st.mai);
		if (check(in, len, seed_of(peer, size, it, 1)) != -1)
			TH_LOG("rank %d, %zu bytes: byte %ld wrong", rank, len,
			       check(in, len, seed_of(peer, size, it, 1)));
		ASSERT_EQ(-1, check(in, len, seed_of(peer, size, it, 1)));
		ASSERT_GUARDS(in, len);
		free(out);
		free(in - GUARD);
	}
	FINALIZE();
}

TEST(sizes_0B_to_16MB_both_ways)
{
	RUN_RANKS(2, sizes_rank, NULL);
}

/* Unaligned send and receive buffers, blocking and non-blocking. */
static void unaligned_rank(struct __test_metadata *_metadata, int rank,
			   int size, void *arg)
{
	static const size_t lens[] = { 3, 4097, 100000, 2 * MB + 5 };
	static const size_t offs[] = { 1, 7, 4093, 3 };
	int peer = 1 - rank, ier;
	size_t i;

	(void)arg;
	INIT(2);
	for (i = 0; i < 4; i++) {
		size_t len = lens[i];
		uint8_t *raw = malloc(len + 8192), *out = raw + offs[i];
		uint8_t *in = guarded(len, offs[3 - i]);
		fmpl_status st;

		ASSERT_NE(NULL, raw);
		fill(out, len, seed_of(rank, size, (int)i, 2));
		if (rank == 0) {
			ASSERT_EQ(FMPL_SUCCESS, fmpl_isend(out, len, peer, 0, WORLD, &ier));
			ASSERT_EQ(FMPL_SUCCESS, fmpl_recv_status(in, len, peer, 1, WORLD, &st, &ier));
			ASSERT_EQ(FMPL_SUCCESS, fmpl_isend_wait(peer, 0, WORLD, &ier));
		} else {
			ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv(in, len, peer, 0, WORLD, &ier));
			ASSERT_EQ(FMPL_SUCCESS, fmpl_send(out, len, peer, 1, WORLD, &ier));
			ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv_wait_status(peer, 0, WORLD, &st, &ier));
		}
		ASSERT_EQ(len, st.size);
		ASSERT_EQ(-1, check(in, len, seed_of(peer, size, (int)i, 2)));
		ASSERT_GUARDS(in, len);
		/* The sender's buffer is untouched. */
		ASSERT_EQ(-1, check(out, len, seed_of(rank, size, (int)i, 2)));
		free(raw);
		free(in - GUARD - offs[3 - i]);
	}
	FINALIZE();
}

TEST(unaligned_buffers)
{
	RUN_RANKS(2, unaligned_rank, NULL);
}

#define NIDX	32
#define GO	40	/* the index of "go" messages */

/*
 * Phase 0: rank 0 isends on indices 0..31, then says go; rank 1 posts
 * its irecvs (in reverse order) only after go, so every send came first.
 * Phase 1: rank 1 posts first, then says go; rank 0 isends after it.
 * Rank 1 waits in a shuffled order; each index has its own data.
 */
static void order_rank(struct __test_metadata *_metadata, int rank, int size,
		       void *arg)
{
	static uint8_t bufs[NIDX][3000];
	int peer = 1 - rank, phase, k, ier, order[NIDX];
	char go = 'g';

	(void)arg;
	INIT(GO + 1);
	for (k = 0; k < NIDX; k++)
		order[k] = (k * 13 + 5) % NIDX;	/* a permutation */
	for (phase = 0; phase < 2; phase++) {
		size_t len = 100 + 90 * (size_t)phase;

		if (rank == 0) {
			if (phase == 1)
				ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(&go, 1, peer, GO, WORLD, &ier));
			for (k = 0; k < NIDX; k++) {
				fill(bufs[k], len + k, seed_of(rank, size, phase * 100 + k, 3));
				ASSERT_EQ(FMPL_SUCCESS, fmpl_isend(bufs[k], len + k, peer, k, WORLD, &ier));
			}
			if (phase == 0)
				ASSERT_EQ(FMPL_SUCCESS, fmpl_send(&go, 1, peer, GO, WORLD, &ier));
			for (k = NIDX - 1; k >= 0; k--)
				ASSERT_EQ(FMPL_SUCCESS, fmpl_isend_wait(peer, k, WORLD, &ier));
		} else {
			memset(bufs, 0, sizeof(bufs));
			if (phase == 0)
				ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(&go, 1, peer, GO, WORLD, &ier));
			for (k = NIDX - 1; k >= 0; k--)
				ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv(bufs[k], sizeof(bufs[k]), peer, k, WORLD, &ier));
			if (phase == 1)
				ASSERT_EQ(FMPL_SUCCESS, fmpl_send(&go, 1, peer, GO, WORLD, &ier));
			for (k = 0; k < NIDX; k++) {
				int m = order[k];
				fmpl_status st;

				ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv_wait_status(peer, m, WORLD, &st, &ier));
				ASSERT_EQ(len + (size_t)m, st.size);
				ASSERT_EQ(m, st.mai);
				ASSERT_EQ(-1, check(bufs[m], len + m, seed_of(peer, size, phase * 100 + m, 3)));
				ASSERT_EQ(-1, check_byte(bufs[m] + len + m, sizeof(bufs[m]) - len - m, 0));
			}
		}
	}
	FINALIZE();
}

TEST(many_indices_any_order_isend_first_and_irecv_first)
{
	RUN_RANKS(2, order_rank, NULL);
}

/* 200 messages on one index arrive in order. */
static void sequence_rank(struct __test_metadata *_metadata, int rank,
			  int size, void *arg)
{
	uint64_t v[4];
	int k, ier;

	(void)arg;
	INIT(1);
	for (k = 0; k < 200; k++) {
		if (rank == 0) {
			fill(v, sizeof(v), seed_of(0, size, k, 4));
			ASSERT_EQ(FMPL_SUCCESS, fmpl_send(v, sizeof(v), 1, 0, WORLD, &ier));
		} else {
			memset(v, 0, sizeof(v));
			ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(v, sizeof(v), 0, 0, WORLD, &ier));
			ASSERT_EQ(-1, check(v, sizeof(v), seed_of(0, size, k, 4)));
		}
	}
	FINALIZE();
}

TEST(messages_on_one_index_keep_their_order)
{
	RUN_RANKS(2, sequence_rank, NULL);
}

#define NOUT	600

/* Rank 1 posts 600 irecvs, then rank 0 sends 600 messages. */
static void outstanding_rank(struct __test_metadata *_metadata, int rank,
			     int size, void *arg)
{
	uint8_t *bufs = calloc(NOUT, 256);
	int k, ier;
	char go = 0;

	(void)arg;
	ASSERT_NE(NULL, bufs);
	INIT(NOUT + 1);
	if (rank == 1) {
		for (k = 0; k < NOUT; k++)
			ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv(bufs + k * 256, 256, 0, k, WORLD, &ier));
		for (k = 0; k < NOUT; k++)
			ASSERT_EQ(0, fmpl_irecv_test(0, k, WORLD));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(&go, 1, 0, NOUT, WORLD, &ier));
		for (k = NOUT - 1; k >= 0; k--) {
			fmpl_status st;

			ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv_wait_status(0, k, WORLD, &st, &ier));
			ASSERT_EQ(1, fmpl_irecv_test(0, k, WORLD));
			ASSERT_EQ((size_t)(k % 256 + 1), st.size);
			ASSERT_EQ(-1, check(bufs + k * 256, k % 256 + 1, seed_of(0, size, k, 5)));
		}
	} else {
		ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(&go, 1, 1, NOUT, WORLD, &ier));
		for (k = 0; k < NOUT; k++) {
			fill(bufs + k * 256, k % 256 + 1, seed_of(0, size, k, 5));
			ASSERT_EQ(FMPL_SUCCESS, fmpl_send(bufs + k * 256, k % 256 + 1, 1, k, WORLD, &ier));
		}
	}
	FINALIZE();
	free(bufs);
}

TEST(six_hundred_outstanding_receives)
{
	RUN_RANKS(2, outstanding_rank, NULL);
}

/* FMPL_TAG_ANY: the receive takes index 5 (posted first) and 3 (sent first). */
static void tag_any_rank(struct __test_metadata *_metadata, int rank, int size,
			 void *arg)
{
	uint8_t b[1000];
	fmpl_status st;
	int ier;
	char go = 0;

	(void)arg;
	INIT(8);
	if (rank == 1) {
		ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv(b, sizeof(b), 0, (int)FMPL_TAG_ANY, WORLD, &ier));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(&go, 1, 0, 7, WORLD, &ier));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv_wait_status(0, (int)FMPL_TAG_ANY, WORLD, &st, &ier));
		ASSERT_EQ(5, st.mai);
		ASSERT_EQ(500, st.size);
		ASSERT_EQ(0, st.source);
		ASSERT_EQ(-1, check(b, 500, seed_of(0, size, 5, 6)));
		/* The other way round: the send is waiting when we post. */
		ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(&go, 1, 0, 7, WORLD, &ier));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_recv_status(b, sizeof(b), 0, (int)FMPL_TAG_ANY, WORLD, &st, &ier));
		ASSERT_EQ(3, st.mai);
		ASSERT_EQ(300, st.size);
		ASSERT_EQ(-1, check(b, 300, seed_of(0, size, 3, 6)));
	} else {
		ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(&go, 1, 1, 7, WORLD, &ier));
		fill(b, 500, seed_of(0, size, 5, 6));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(b, 500, 1, 5, WORLD, &ier));
		fill(b, 300, seed_of(0, size, 3, 6));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_isend(b, 300, 1, 3, WORLD, &ier));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(&go, 1, 1, 7, WORLD, &ier));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_isend_wait(1, 3, WORLD, &ier));
		/* A send cannot use TAG_ANY. */
		ASSERT_EQ(FMPL_ERR_ARG, fmpl_send(b, 1, 1, (int)FMPL_TAG_ANY, WORLD, &ier));
	}
	FINALIZE();
}

TEST(tag_any_receive)
{
	RUN_RANKS(2, tag_any_rank, NULL);
}

/* A second irecv (or isend) on the same pair and index: FMPL_ERR_BUSY. */
static void busy_rank(struct __test_metadata *_metadata, int rank, int size,
		      void *arg)
{
	uint8_t a[64], b[64];
	int ier;
	char go = 0;

	(void)arg;
	INIT(4);
	memset(b, 0x55, sizeof(b));
	if (rank == 1) {
		ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv(a, sizeof(a), 0, 2, WORLD, &ier));
		ASSERT_EQ(FMPL_ERR_BUSY, fmpl_irecv(b, sizeof(b), 0, 2, WORLD, &ier));
		ASSERT_EQ(FMPL_ERR_BUSY, ier);
		ASSERT_EQ(EBUSY, errno);
		ASSERT_EQ(FMPL_ERR_BUSY, fmpl_recv(b, sizeof(b), 0, 2, WORLD, &ier));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(&go, 1, 0, 3, WORLD, &ier));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv_wait(0, 2, WORLD, &ier));
		ASSERT_EQ(-1, check(a, sizeof(a), seed_of(0, size, 0, 7)));
		ASSERT_EQ(-1, check_byte(b, sizeof(b), 0x55));
		/* A new receive on the index is fine now (after rank 0's isends). */
		ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(&go, 1, 0, 3, WORLD, &ier));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(a, sizeof(a), 0, 2, WORLD, &ier));
		ASSERT_EQ(-1, check(a, sizeof(a), seed_of(0, size, 1, 7)));
	} else {
		ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(&go, 1, 1, 3, WORLD, &ier));
		fill(a, sizeof(a), seed_of(0, size, 0, 7));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(a, sizeof(a), 1, 2, WORLD, &ier));
		/* isend pending, a second one on the index is refused. */
		fill(a, sizeof(a), seed_of(0, size, 1, 7));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_isend(a, sizeof(a), 1, 2, WORLD, &ier));
		ASSERT_EQ(FMPL_ERR_BUSY, fmpl_isend(b, sizeof(b), 1, 2, WORLD, &ier));
		/* A blocking send does not wait for our own pending isend. */
		ASSERT_EQ(FMPL_ERR_BUSY, fmpl_send(b, sizeof(b), 1, 2, WORLD, &ier));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(&go, 1, 1, 3, WORLD, &ier));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_isend_wait(1, 2, WORLD, &ier));
		/* Nothing left to wait for. */
		ASSERT_EQ(FMPL_ERR_NOENT, fmpl_isend_wait(1, 2, WORLD, &ier));
	}
	FINALIZE();
}

TEST(second_receive_on_an_index_is_busy)
{
	RUN_RANKS(2, busy_rank, NULL);
}

/* 1000 bytes into 600: FMPL_ERR_TRUNCATE, the first 600 bytes right. */
static void truncate_rank(struct __test_metadata *_metadata, int rank,
			  int size, void *arg)
{
	static const size_t lens[] = { 1000, 300000 };
	int ier, i, how;
	char go = 0;

	(void)arg;
	INIT(4);
	for (i = 0; i < 2; i++) {
		size_t len = lens[i], room = len * 3 / 5;

		for (how = 0; how < 3; how++) {	/* recv first, send first, irecv */
			int it = i * 10 + how;

			if (rank == 0) {
				uint8_t *out = malloc(len);

				ASSERT_NE(NULL, out);
				fill(out, len, seed_of(0, size, it, 8));
				if (how == 1)
					ASSERT_EQ(FMPL_SUCCESS, fmpl_isend(out, len, 1, 0, WORLD, &ier));
				ASSERT_EQ(FMPL_SUCCESS, fmpl_send(&go, 1, 1, 3, WORLD, &ier));
				if (how == 1)
					fmpl_isend_wait(1, 0, WORLD, &ier);
				else
					fmpl_send(out, len, 1, 0, WORLD, &ier);
				ASSERT_EQ(FMPL_SUCCESS, ier);
				free(out);
			} else {
				uint8_t *in = guarded(room, 0);
				fmpl_status st = { -1, -1, 0 };

				ASSERT_NE(NULL, in);
				if (how == 2)
					ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv(in, room, 0, 0, WORLD, &ier));
				ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(&go, 1, 0, 3, WORLD, &ier));
				if (how == 2)
					fmpl_irecv_wait_status(0, 0, WORLD, &st, &ier);
				else
					fmpl_recv_status(in, room, 0, 0, WORLD, &st, &ier);
				ASSERT_EQ(FMPL_ERR_TRUNCATE, ier);
				ASSERT_EQ(EMSGSIZE, errno);
				ASSERT_EQ(room, st.size);
				ASSERT_EQ(-1, check(in, room, seed_of(0, size, it, 8)));
				ASSERT_GUARDS(in, room);
				free(in - GUARD);
			}
		}
	}
	FINALIZE();
}

TEST(truncation)
{
	RUN_RANKS(2, truncate_rank, NULL);
}

/*
 * The any-source domain: ranks 1..3 send_any to rank 0 (index = their
 * rank); rank 0's recv_any for index 3 takes rank 3's message although
 * those of ranks 1 and 2 were queued first, then two recv_any with
 * FMPL_TAG_ANY take ranks 1 and 2 once each, with the right source.  Rank
 * 1 also has a normal send to rank 0 pending on index 1: recv_any never
 * takes it; the normal receive does.
 */
static void any_rank(struct __test_metadata *_metadata, int rank, int size,
		     void *arg)
{
	uint8_t b[4096], out[4096];
	fmpl_status st;
	int ier, k, seen = 0;

	(void)arg;
	INIT(8);
	if (rank) {
		if (rank == 1) {
			fill(out, 1111, seed_of(1, size, 0, 9));
			ASSERT_EQ(FMPL_SUCCESS, fmpl_isend(out, 1111, 0, 1, WORLD, &ier));
		}
		if (rank == 3)
			sleep_ms(300);
		fill(b, 1000 + rank, seed_of(rank, size, 1, 9));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send_any(b, 1000 + rank, 0, rank, WORLD, &ier));
		if (rank == 1)
			ASSERT_EQ(FMPL_SUCCESS, fmpl_isend_wait(0, 1, WORLD, &ier));
	} else {
		sleep_ms(150);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_recv_any_status(b, sizeof(b), 3, WORLD, &st, &ier));
		ASSERT_EQ(3, st.source);
		ASSERT_EQ(3, st.mai);
		ASSERT_EQ(1003, st.size);
		ASSERT_EQ(-1, check(b, 1003, seed_of(3, size, 1, 9)));
		for (k = 0; k < 2; k++) {
			memset(b, 0, sizeof(b));
			ASSERT_EQ(FMPL_SUCCESS, fmpl_recv_any_status(b, sizeof(b), (int)FMPL_TAG_ANY, WORLD, &st, &ier));
			ASSERT_GE(st.source, 1);
			ASSERT_LE(st.source, 2);
			ASSERT_EQ(st.source, st.mai);
			ASSERT_EQ((size_t)(1000 + st.source), st.size);
			ASSERT_EQ(-1, check(b, st.size, seed_of(st.source, size, 1, 9)));
			ASSERT_EQ(0, seen & (1 << st.source));
			seen |= 1 << st.source;
		}
		/* The normal message of rank 1 is still there for recv. */
		ASSERT_EQ(FMPL_SUCCESS, fmpl_recv_status(b, sizeof(b), 1, 1, WORLD, &st, &ier));
		ASSERT_EQ(1111, st.size);
		ASSERT_EQ(-1, check(b, 1111, seed_of(1, size, 0, 9)));
	}
	FINALIZE();
}

TEST(any_source_domain)
{
	RUN_RANKS(4, any_rank, NULL);
}

/*
 * An any-source message larger than the buffer: FMPL_ERR_TRUNCATE, the
 * buffer's worth of its first bytes, and the status names its sender,
 * index and the bytes received.
 */
static void any_truncate_rank(struct __test_metadata *_metadata, int rank,
			      int size, void *arg)
{
	uint8_t b[1000], in[600];
	fmpl_status st = { -1, -1, 0 };
	int ier;

	(void)arg;
	INIT(8);
	if (rank == 1) {
		fill(b, sizeof(b), seed_of(1, size, 2, 10));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send_any(b, sizeof(b), 0, 5, WORLD, &ier));
	} else {
		fmpl_recv_any_status(in, sizeof(in), (int)FMPL_TAG_ANY, WORLD, &st, &ier);
		ASSERT_EQ(FMPL_ERR_TRUNCATE, ier);
		ASSERT_EQ(EMSGSIZE, errno);
		ASSERT_EQ(1, st.source);
		ASSERT_EQ(5, st.mai);
		ASSERT_EQ(sizeof(in), st.size);
		ASSERT_EQ(-1, check(in, sizeof(in), seed_of(1, size, 2, 10)));
	}
	FINALIZE();
}

TEST(any_source_truncation)
{
	RUN_RANKS(2, any_truncate_rank, NULL);
}

/* Every rank sends to itself: irecv from self, then send to self. */
static void self_rank(struct __test_metadata *_metadata, int rank, int size,
		      void *arg)
{
	uint8_t out[5000], in[5000];
	fmpl_status st;
	int ier;

	(void)arg;
	INIT(2);
	fill(out, sizeof(out), seed_of(rank, size, 0, 10));
	memset(in, 0, sizeof(in));
	ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv(in, sizeof(in), rank, 1, WORLD, &ier));
	ASSERT_EQ(FMPL_SUCCESS, fmpl_send(out, sizeof(out), rank, 1, WORLD, &ier));
	ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv_wait_status(rank, 1, WORLD, &st, &ier));
	ASSERT_EQ(sizeof(in), st.size);
	ASSERT_EQ(rank, st.source);
	ASSERT_EQ(-1, check(in, sizeof(in), seed_of(rank, size, 0, 10)));
	FINALIZE();
}

TEST(send_to_self_one_and_three_ranks)
{
	RUN_RANKS(1, self_rank, NULL);
	RUN_RANKS(3, self_rank, NULL);
}

/* irecv_test reads the flag: 0 until the message is there, then 1. */
static void test_rank(struct __test_metadata *_metadata, int rank, int size,
		      void *arg)
{
	volatile int *sent = arg;
	uint64_t v = 0;
	int ier, k;

	INIT(2);
	if (rank == 1) {
		ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv(&v, sizeof(v), 0, 0, WORLD, &ier));
		ASSERT_EQ(0, fmpl_irecv_test(0, 0, WORLD));
		*sent = 1;
		for (k = 0; k < 2000 && !fmpl_irecv_test(0, 0, WORLD); k++)
			sleep_ms(5);
		ASSERT_EQ(1, fmpl_irecv_test(0, 0, WORLD));
		ASSERT_EQ(seed_of(0, size, 0, 11), v);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv_wait(0, 0, WORLD, &ier));
		ASSERT_EQ(-1, fmpl_irecv_test(0, 99, WORLD));
	} else {
		while (!*sent)
			sleep_ms(5);
		sleep_ms(100);
		v = seed_of(0, size, 0, 11);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(&v, sizeof(v), 1, 0, WORLD, &ier));
	}
	FINALIZE();
}

TEST(irecv_test_reads_the_flag)
{
	int *sent = shared(4096);

	ASSERT_NE(NULL, sent);
	RUN_RANKS(2, test_rank, sent);
}

/*
 * Messages of 256 KB or more are copied in chunks by the copying process
 * and by idle CPUs (module parameter msg_copy_helpers), which enter the
 * copier's address space.  With 0, 1 and 8 helpers (one test each, to stay
 * within the harness's 30 s on a debug kernel): a receive that comes
 * second copies into memory it never touched (faulted in for it), a send
 * that comes second copies from its own; then a receive buffer with a hole
 * (a PROT_NONE page) fails with EFAULT, and the world goes on.
 */
#define HELPERS_PARAM "/sys/module/dlmem/parameters/msg_copy_helpers"

static int read_helpers(void)
{
	FILE *f = fopen(HELPERS_PARAM, "r");
	int n = -1;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

static int set_helpers(int n)
{
	FILE *f = fopen(HELPERS_PARAM, "w");

	if (!f)
		return -1;
	fprintf(f, "%d\n", n);
	return fclose(f);
}

static void split_rank(struct __test_metadata *_metadata, int rank, int size,
		       void *arg)
{
	const size_t len = 2 * MB + 777, maplen = len + 3 * 4096;
	int peer = 1 - rank, ier = -1, round, it = *(int *)arg;
	uint8_t *raw, *buf;
	uint64_t v;

	INIT(2);
	for (round = 0; round < 2; round++) {
		/* Round 0: the receiver copies; round 1: the sender does. */
		raw = mmap(NULL, maplen, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, raw);
		buf = raw + 4096 + 5;
		if (rank == 0) {
			fill(buf, len, seed_of(rank, size, it + round, 13));
			if (round)
				sleep_ms(200);
			ASSERT_EQ(FMPL_SUCCESS, fmpl_send(buf, len, peer, 0, WORLD, &ier));
		} else {
			if (!round)
				sleep_ms(200);
			ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(buf, len, peer, 0, WORLD, &ier));
			ASSERT_EQ(-1, check(buf, len, seed_of(peer, size, it + round, 13)));
			ASSERT_EQ(-1, check_byte(raw, 4096 + 5, 0));
			ASSERT_EQ(-1, check_byte(buf + len, maplen - len - 4096 - 5, 0));
		}
		munmap(raw, maplen);
	}
	/* A hole in the middle of the receiving buffer, the receive second. */
	raw = mmap(NULL, maplen, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, raw);
	if (rank == 0) {
		fill(raw, len, seed_of(rank, size, it, 14));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(raw, len, peer, 0, WORLD, &ier));
	} else {
		ASSERT_EQ(0, mprotect(raw + MB + 8192, 4096, PROT_NONE));
		sleep_ms(200);
		errno = 0;
		ASSERT_NE(FMPL_SUCCESS, fmpl_recv(raw, len, peer, 0, WORLD, &ier));
		ASSERT_EQ(EFAULT, errno);
	}
	munmap(raw, maplen);
	v = seed_of(rank, size, it, 15);
	if (rank == 0) {
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(&v, sizeof(v), peer, 1, WORLD, &ier));
	} else {
		ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(&v, sizeof(v), peer, 1, WORLD, &ier));
		ASSERT_EQ(seed_of(peer, size, it, 15), v);
	}
	FINALIZE();
}

static void split_copies(struct __test_metadata *_metadata, int helpers)
{
	int old = read_helpers(), it = 10 * helpers, rc;
	pid_t pids[RANKS_MAX];

	if (old < 0 || set_helpers(old))
		SKIP(return, "%s not writable (root, dlmem.ko with FMPL)", HELPERS_PARAM);
	ASSERT_EQ(0, set_helpers(helpers));
	start_ranks(_metadata, 2, split_rank, &it, pids);
	rc = wait_ranks(_metadata, 2, pids);
	set_helpers(old);
	ASSERT_EQ(0, rc);
}

TEST(large_copies_alone_into_untouched_memory_and_a_hole)
{
	split_copies(_metadata, 0);
}

TEST(large_copies_with_1_helper_into_untouched_memory_and_a_hole)
{
	split_copies(_metadata, 1);
}

TEST(large_copies_with_8_helpers_into_untouched_memory_and_a_hole)
{
	split_copies(_metadata, 8);
}

/* Bad ranks, indices, communicators and buffers: FMPL_ERR_ARG. */
static void args_rank(struct __test_metadata *_metadata, int rank, int size,
		      void *arg)
{
	char b[16];
	int ier = -1, x = -7;

	(void)arg;
	(void)size;
	INIT(3);
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_send(b, 1, 2, 0, WORLD, &ier));
	ASSERT_EQ(FMPL_ERR_ARG, ier);
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_send(b, 1, -1, 0, WORLD, &ier));
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_send(b, 1, 1 - rank, 3, WORLD, &ier));
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_send(b, 1, 1 - rank, 3 + FMPL_LIB_RESERVED_MAI, WORLD, &ier));
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_send(b, 1, 1 - rank, -2, WORLD, &ier));
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_irecv(b, 1, 1 - rank, 3, WORLD, &ier));
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_recv(NULL, 5, 1 - rank, 0, WORLD, &ier));
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_send(b, 1, 1 - rank, 0, 17, &ier));
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_send(b, 1, 1 - rank, 0, -1, &ier));
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_comm_rank(5, &x, &ier));
	ASSERT_EQ(-7, x);
	ASSERT_EQ(FMPL_ERR_NOENT, fmpl_irecv_wait(1 - rank, 1, WORLD, &ier));
	ASSERT_EQ(FMPL_ERR_NOENT, fmpl_isend_wait(1 - rank, 1, WORLD, &ier));
	/* Unmapped buffer: the kernel's EFAULT. */
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_irecv((void *)16, 100, 1 - rank, 2, WORLD, &ier));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_init(NULL, NULL, 3, &ier));
	ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_rank(WORLD, &x, &ier));
	ASSERT_EQ(rank, x);
	ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_size(WORLD, &x, &ier));
	ASSERT_EQ(2, x);
	FINALIZE();
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_send(b, 1, 0, 0, WORLD, &ier));
}

TEST(argument_errors)
{
	RUN_RANKS(2, args_rank, NULL);
}

/* fmpl_init twice in a row with the same environment after finalize. */
static void reinit_rank(struct __test_metadata *_metadata, int rank, int size,
			void *arg)
{
	uint64_t v;
	int round, ier;

	(void)arg;
	for (round = 0; round < 3; round++) {
		INIT(1 + round);
		v = seed_of(rank, size, round, 12);
		if (rank == 0) {
			ASSERT_EQ(FMPL_SUCCESS, fmpl_send(&v, sizeof(v), 1, 0, WORLD, &ier));
		} else {
			ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(&v, sizeof(v), 0, 0, WORLD, &ier));
			ASSERT_EQ(seed_of(0, size, round, 12), v);
		}
		FINALIZE();
	}
}

TEST(finalize_then_init_again)
{
	RUN_RANKS(2, reinit_rank, NULL);
}

#include "fmpl_main.h"

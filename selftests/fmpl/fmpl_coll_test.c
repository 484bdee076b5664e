// SPDX-License-Identifier: GPL-2.0
/*
 * fmpl_coll_test - libfmpl's collectives against reference results, with
 * 1, 2, 3 and 4 ranks: barrier (no rank leaves before all arrived: shared
 * counters), bcast over the kernel-native path and the binary tree for
 * every root and 0 B .. 1 MB, reduce (every root) and allreduce for every
 * predefined type and op and a user op, comm_create's even/odd split with
 * collectives and point to point on the new communicators, a negative key,
 * comm_free over many more communicators than a world holds at once, and
 * a split that runs out of slots part way giving back what it took.
 */
#define _GNU_SOURCE
#include <complex.h>
#include <math.h>

#include "kselftest_harness.h"
#include <fmpl.h>
#include "fmpl_util.h"

static const int modes[2] = { FMPL_COLL_NATIVE, FMPL_COLL_TREE };

/* ---- barrier ------------------------------------------------------------ */

#define ROUNDS	12

struct counters {
	int arrived[2][ROUNDS];
};

/*
 * Each round: arrive at a rank-dependent moment, count, barrier; after
 * the barrier every rank of the round must have been counted.
 */
static void barrier_rank(struct __test_metadata *_metadata, int rank, int size,
			 void *arg)
{
	struct counters *c = arg;
	int m, k, ier;

	INIT(1);
	for (m = 0; m < 2; m++) {
		fmpl_coll_mode(modes[m]);
		for (k = 0; k < ROUNDS; k++) {
			if ((k + rank) % size == 0)
				sleep_ms(20);
			__atomic_add_fetch(&c->arrived[m][k], 1, __ATOMIC_SEQ_CST);
			ASSERT_EQ(FMPL_SUCCESS, fmpl_barrier(WORLD, &ier));
			ASSERT_EQ(size, __atomic_load_n(&c->arrived[m][k], __ATOMIC_SEQ_CST));
		}
	}
	FINALIZE();
}

TEST(barrier_native_and_tree_1_to_4_ranks)
{
	int n;

	for (n = 1; n <= 4; n++) {
		struct counters *c = shared(sizeof(*c));

		ASSERT_NE(NULL, c);
		RUN_RANKS(n, barrier_rank, c);
		munmap(c, sizeof(*c));
	}
}

/* ---- bcast ------------------------------------------------------------- */

static const size_t bsizes[] = { 0, 1, 4097, 1 * MB };

static void bcast_rank(struct __test_metadata *_metadata, int rank, int size,
		       void *arg)
{
	uint8_t *buf = malloc(1 * MB + 64);
	int m, root, ier;
	size_t i;

	(void)arg;
	ASSERT_NE(NULL, buf);
	INIT(1);
	for (m = 0; m < 3; m++) {
		fmpl_coll_mode(m == 2 ? FMPL_COLL_AUTO : modes[m]);
		for (root = 0; root < size; root++) {
			for (i = 0; i < sizeof(bsizes) / sizeof(bsizes[0]); i++) {
				size_t len = bsizes[i];
				int it = m * 100 + root * 10 + (int)i;

				if (rank == root)
					fill(buf, len, seed_of(root, size, it, 30));
				else
					memset(buf, 0x3c, len);
				memset(buf + len, 0x77, 64);
				ASSERT_EQ(FMPL_SUCCESS, fmpl_bcast(buf, len, root, WORLD, &ier));
				if (check(buf, len, seed_of(root, size, it, 30)) != -1)
					TH_LOG("mode %d root %d len %zu: byte %ld", m, root, len,
					       check(buf, len, seed_of(root, size, it, 30)));
				ASSERT_EQ(-1, check(buf, len, seed_of(root, size, it, 30)));
				ASSERT_EQ(-1, check_byte(buf + len, 64, 0x77));
			}
		}
	}
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_bcast(buf, 1, size, WORLD, &ier));
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_bcast(buf, 1, -1, WORLD, &ier));
	FINALIZE();
	free(buf);
}

TEST(bcast_native_tree_auto_every_root_and_size)
{
	int n;

	for (n = 1; n <= 4; n++)
		RUN_RANKS(n, bcast_rank, NULL);
}

/* ---- reduce and allreduce ------------------------------------------------ */

#define NELEM	5

/* The value rank @r contributes at element @k: small integers, exact. */
static int ival(int r, int k)
{
	return ((r * 7 + k * 3) % 11) - 5 + (k == 4 ? r * 1000000 : 0);
}

static double dval(int r, int k)
{
	return ival(r, k) * 0.5;
}

/* Complex values of distinct moduli: |v| = 1 + r + 10 k (any direction). */
static double complex zval(int r, int k)
{
	double mod = 1 + r + 10 * k + ((r + k) % 2 ? 0.25 : 0.0);
	int q = (r * 3 + k) % 4;
	static const double complex dir[4] = { 1, -1, 1.0 * I, -1.0 * I };

	return mod * dir[q];
}

enum type { T_I, T_S, T_D, T_C, T_Z, T_USER, T_N };

static const fmpl_op *op_of(enum type t, int op)
{
	static const fmpl_op *const ops[5][3] = {
		{ &fmpl_isum, &fmpl_imax, &fmpl_imin },
		{ &fmpl_ssum, &fmpl_smax, &fmpl_smin },
		{ &fmpl_dsum, &fmpl_dmax, &fmpl_dmin },
		{ &fmpl_csum, &fmpl_cmax, &fmpl_cmin },
		{ &fmpl_zsum, &fmpl_zmax, &fmpl_zmin },
	};

	return ops[t][op];
}

/* A user op: element-wise (a * b) mod 1000003 on uint64 (commutative). */
static void mulmod(void *inout, const void *in, size_t n)
{
	uint64_t *a = inout;
	const uint64_t *b = in;
	size_t i;

	for (i = 0; i < n; i++)
		a[i] = a[i] * b[i] % 1000003;
}

static const fmpl_op user_op = { sizeof(uint64_t), mulmod };

static uint64_t uval(int r, int k)
{
	return (uint64_t)(r + 2) * 1000 + (uint64_t)k * 17 + 3;
}

union elems {
	int i[NELEM];
	float s[NELEM];
	double d[NELEM];
	float complex c[NELEM];
	double complex z[NELEM];
	uint64_t u[NELEM];
};

/* Rank @r's contribution of type @t. */
static void contrib(union elems *e, enum type t, int r)
{
	int k;

	for (k = 0; k < NELEM; k++) {
		switch (t) {
		case T_I: e->i[k] = ival(r, k); break;
		case T_S: e->s[k] = (float)dval(r, k); break;
		case T_D: e->d[k] = dval(r, k); break;
		case T_C: e->c[k] = (float complex)zval(r, k); break;
		case T_Z: e->z[k] = zval(r, k); break;
		default: e->u[k] = uval(r, k); break;
		}
	}
}

/* The reference: op over ranks 0..size-1, written out per type. */
static void reference(union elems *e, enum type t, int op, int size)
{
	int k, r;

	for (k = 0; k < NELEM; k++) {
		long long is = 0, imax = ival(0, k), imin = ival(0, k);
		double ds = 0, dmax = dval(0, k), dmin = dval(0, k);
		double complex zs = 0, zmax = zval(0, k), zmin = zval(0, k);
		uint64_t u = uval(0, k);

		for (r = 0; r < size; r++) {
			is += ival(r, k);
			imax = ival(r, k) > imax ? ival(r, k) : imax;
			imin = ival(r, k) < imin ? ival(r, k) : imin;
			ds += dval(r, k);
			dmax = fmax(dmax, dval(r, k));
			dmin = fmin(dmin, dval(r, k));
			zs += zval(r, k);
			if (cabs(zval(r, k)) > cabs(zmax))
				zmax = zval(r, k);
			if (cabs(zval(r, k)) < cabs(zmin))
				zmin = zval(r, k);
			if (r)
				u = u * uval(r, k) % 1000003;
		}
		switch (t) {
		case T_I: e->i[k] = (int)(op == 0 ? is : op == 1 ? imax : imin); break;
		case T_S: e->s[k] = (float)(op == 0 ? ds : op == 1 ? dmax : dmin); break;
		case T_D: e->d[k] = op == 0 ? ds : op == 1 ? dmax : dmin; break;
		case T_C: e->c[k] = (float complex)(op == 0 ? zs : op == 1 ? zmax : zmin); break;
		case T_Z: e->z[k] = op == 0 ? zs : op == 1 ? zmax : zmin; break;
		default: e->u[k] = u; break;
		}
	}
}

/* Equal values (floating point: 0.0 == -0.0, the order of sums may differ). */
static int same(const union elems *a, const union elems *b, enum type t)
{
	int k;

	for (k = 0; k < NELEM; k++) {
		switch (t) {
		case T_I: if (a->i[k] != b->i[k]) return 0; break;
		case T_S: if (a->s[k] != b->s[k]) return 0; break;
		case T_D: if (a->d[k] != b->d[k]) return 0; break;
		case T_C: if (a->c[k] != b->c[k]) return 0; break;
		case T_Z: if (a->z[k] != b->z[k]) return 0; break;
		default: if (a->u[k] != b->u[k]) return 0; break;
		}
	}
	return 1;
}

static void reduce_rank(struct __test_metadata *_metadata, int rank, int size,
			void *arg)
{
	union elems buf, work, ref;
	const fmpl_op *op;
	enum type t;
	int o, root, ier;

	(void)arg;
	INIT(1);
	for (t = T_I; t < T_N; t++) {
		for (o = 0; o < (t == T_USER ? 1 : 3); o++) {
			op = t == T_USER ? &user_op : op_of(t, o);
			reference(&ref, t, o, size);
			for (root = 0; root <= size; root++) {
				/* root == size: allreduce */
				contrib(&buf, t, rank);
				if (root < size)
					fmpl_reduce(&buf, NELEM, op, root, WORLD, &work, &ier);
				else
					fmpl_allreduce(&buf, NELEM, op, WORLD, &work, &ier);
				ASSERT_EQ(FMPL_SUCCESS, ier);
				if ((root == size || rank == root) && !same(&buf, &ref, t)) {
					TH_LOG("type %d op %d root %d of %d: wrong result",
					       t, o, root, size);
					ASSERT_TRUE(same(&buf, &ref, t));
				}
			}
		}
	}
	/* work may be NULL: libfmpl allocates it. */
	contrib(&buf, T_D, rank);
	reference(&ref, T_D, 0, size);
	ASSERT_EQ(FMPL_SUCCESS, fmpl_allreduce(&buf, NELEM, &fmpl_dsum, WORLD, NULL, &ier));
	ASSERT_TRUE(same(&buf, &ref, T_D));
	/* Zero elements: nothing to do, on every rank. */
	ASSERT_EQ(FMPL_SUCCESS, fmpl_allreduce(&buf, 0, &fmpl_dsum, WORLD, &work, &ier));
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_reduce(&buf, 1, NULL, 0, WORLD, &work, &ier));
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_reduce(&buf, 1, &fmpl_isum, size, WORLD, &work, &ier));
	FINALIZE();
}

TEST(reduce_allreduce_every_type_op_root_1_to_4_ranks)
{
	int n;

	for (n = 1; n <= 4; n++)
		RUN_RANKS(n, reduce_rank, NULL);
}

/* A large allreduce: 256 K doubles (2 MB) over 3 ranks. */
static void big_rank(struct __test_metadata *_metadata, int rank, int size,
		     void *arg)
{
	size_t n = 256 * 1024, k;
	double *b = malloc(n * sizeof(double)), *w = malloc(n * sizeof(double));
	int ier;

	(void)arg;
	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, w);
	INIT(1);
	for (k = 0; k < n; k++)
		b[k] = (double)(k % 1000) + rank * 0.25;
	ASSERT_EQ(FMPL_SUCCESS, fmpl_allreduce(b, n, &fmpl_dsum, WORLD, w, &ier));
	for (k = 0; k < n; k++)
		if (b[k] != (double)(k % 1000) * size + 0.25 * size * (size - 1) / 2)
			break;
	ASSERT_EQ(n, k);
	FINALIZE();
	free(b);
	free(w);
}

TEST(allreduce_2MB_of_doubles)
{
	RUN_RANKS(3, big_rank, NULL);
}

/* ---- communicators ------------------------------------------------------ */

/*
 * Split by rank parity: sizes and ranks; allreduce of the world ranks;
 * bcast from the new comm's last rank (both paths); barrier; a message
 * from new rank 0 to new rank 1; a negative key gives FMPL_COMM_NULL.
 */
static void split_rank(struct __test_metadata *_metadata, int rank, int size,
		       void *arg)
{
	int comm = -5, nrank = -1, nsize = -1, ier, sum, work, m, none, r, ref = 0;
	int expect_size = (size - (rank % 2) + 1) / 2;
	uint8_t buf[70000];

	(void)arg;
	INIT(2);
	ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_create(&comm, rank % 2, &ier));
	ASSERT_NE(WORLD, comm);
	ASSERT_NE((int)FMPL_COMM_NULL, comm);
	ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_size(comm, &nsize, &ier));
	ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_rank(comm, &nrank, &ier));
	ASSERT_EQ(expect_size, nsize);
	ASSERT_EQ(rank / 2, nrank);

	/* Even: 0 + 2 + ...; odd: 1 + 3 + ... */
	for (r = rank % 2; r < size; r += 2)
		ref += r;
	sum = rank;
	ASSERT_EQ(FMPL_SUCCESS, fmpl_allreduce(&sum, 1, &fmpl_isum, comm, &work, &ier));
	ASSERT_EQ(ref, sum);
	for (m = 0; m < 2; m++) {
		int root = nsize - 1;

		fmpl_coll_mode(modes[m]);
		if (nrank == root)
			fill(buf, sizeof(buf), seed_of(rank, size, m, 31));
		else
			memset(buf, 0, sizeof(buf));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_bcast(buf, sizeof(buf), root, comm, &ier));
		/* The root's world rank: rank % 2 + 2 * root. */
		ASSERT_EQ(-1, check(buf, sizeof(buf), seed_of(rank % 2 + 2 * root, size, m, 31)));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_barrier(comm, &ier));
	}
	if (nsize > 1 && nrank < 2) {
		fmpl_status st;

		if (nrank == 0) {
			fill(buf, 999, seed_of(rank, size, 9, 31));
			ASSERT_EQ(FMPL_SUCCESS, fmpl_send(buf, 999, 1, 1, comm, &ier));
		} else {
			ASSERT_EQ(FMPL_SUCCESS, fmpl_recv_status(buf, sizeof(buf), 0, 1, comm, &st, &ier));
			ASSERT_EQ(0, st.source);	/* rank in comm */
			ASSERT_EQ(999, st.size);
			ASSERT_EQ(-1, check(buf, 999, seed_of(rank - 2, size, 9, 31)));
		}
	}
	/* Ranks of another communicator: out of range there. */
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_send(buf, 1, nsize, 0, comm, &ier));

	/* Only rank 0 joins a group: everyone else gets FMPL_COMM_NULL. */
	ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_create(&none, rank ? -1 : 7, &ier));
	if (rank) {
		ASSERT_EQ((int)FMPL_COMM_NULL, none);
	} else {
		ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_size(none, &nsize, &ier));
		ASSERT_EQ(1, nsize);
	}
	ASSERT_EQ(FMPL_SUCCESS, fmpl_barrier(WORLD, &ier));
	FINALIZE();
}

TEST(comm_create_even_odd_with_collectives)
{
	RUN_RANKS(4, split_rank, NULL);
	RUN_RANKS(3, split_rank, NULL);
}

/*
 * FREE_CYCLES create/free cycles, twice the communicators a world holds at
 * once: each new one (all ranks, or evens and odds) gets a new id, its
 * ranks, an allreduce and a message checked; a freed id names nothing
 * (FMPL_ERR_ARG) and is not the next one's.  Then FMPL_ERR_BUSY: rank 0
 * frees while its irecv from rank 1 is pending, which does not count;
 * rank 1 sends only after that, rank 0 waits for it and frees again.
 */
#define FREE_CYCLES	130

struct free_sync {
	int busy_seen;
};

static void free_rank(struct __test_metadata *_metadata, int rank, int size,
		      void *arg)
{
	struct free_sync *sync = arg;
	int comm, freed = -1, ier, k, r, ref, sum, work, nrank, nsize;
	uint8_t buf[3000];

	INIT(2);
	comm = WORLD;
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_comm_free(&comm, &ier));
	ASSERT_EQ(FMPL_ERR_ARG, fmpl_comm_free(NULL, &ier));
	for (k = 0; k < FREE_CYCLES; k++) {
		int split = k % 2;

		ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_create(&comm, split ? rank % 2 : 0, &ier));
		ASSERT_NE(freed, comm);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_rank(comm, &nrank, &ier));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_size(comm, &nsize, &ier));
		ASSERT_EQ(split ? rank / 2 : rank, nrank);
		ASSERT_EQ(split ? (size - rank % 2 + 1) / 2 : size, nsize);
		for (ref = 0, r = split ? rank % 2 : 0; r < size; r += split + 1)
			ref += r + k;
		sum = rank + k;
		ASSERT_EQ(FMPL_SUCCESS, fmpl_allreduce(&sum, 1, &fmpl_isum, comm, &work, &ier));
		ASSERT_EQ(ref, sum);
		if (nsize > 1 && nrank == 0) {
			fill(buf, sizeof(buf), seed_of(rank, size, k, 41));
			ASSERT_EQ(FMPL_SUCCESS, fmpl_send(buf, sizeof(buf), 1, 1, comm, &ier));
		} else if (nsize > 1 && nrank == 1) {
			ASSERT_EQ(FMPL_SUCCESS, fmpl_recv(buf, sizeof(buf), 0, 1, comm, &ier));
			ASSERT_EQ(-1, check(buf, sizeof(buf),
					    seed_of(split ? rank % 2 : 0, size, k, 41)));
		}
		freed = comm;
		ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_free(&comm, &ier));
		ASSERT_EQ((int)FMPL_COMM_NULL, comm);
		ASSERT_EQ(FMPL_ERR_ARG, fmpl_comm_size(freed, &nsize, &ier));
		ASSERT_EQ(FMPL_ERR_ARG, fmpl_barrier(freed, &ier));
	}

	ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_create(&comm, 0, &ier));
	if (rank == 0) {
		memset(buf, 0, sizeof(buf));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv(buf, sizeof(buf), 1, 1, comm, &ier));
		ASSERT_EQ(FMPL_ERR_BUSY, fmpl_comm_free(&comm, &ier));
		ASSERT_EQ(EBUSY, errno);
		ASSERT_NE((int)FMPL_COMM_NULL, comm);
		__atomic_store_n(&sync->busy_seen, 1, __ATOMIC_SEQ_CST);
		ASSERT_EQ(FMPL_SUCCESS, fmpl_irecv_wait(1, 1, comm, &ier));
		ASSERT_EQ(-1, check(buf, sizeof(buf), seed_of(1, size, 0, 42)));
	} else if (rank == 1) {
		for (k = 0; k < 10000; k++) {	/* 10 s at most */
			if (__atomic_load_n(&sync->busy_seen, __ATOMIC_SEQ_CST))
				break;
			sleep_ms(1);
		}
		ASSERT_LT(k, 10000);
		fill(buf, sizeof(buf), seed_of(1, size, 0, 42));
		ASSERT_EQ(FMPL_SUCCESS, fmpl_send(buf, sizeof(buf), 0, 1, comm, &ier));
	}
	ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_free(&comm, &ier));
	ASSERT_EQ(FMPL_SUCCESS, fmpl_barrier(WORLD, &ier));
	FINALIZE();
}

TEST(comm_free_cycles_stale_ids_and_busy)
{
	struct free_sync *sync = shared(sizeof(*sync));

	ASSERT_NE(NULL, sync);
	RUN_RANKS(3, free_rank, sync);
}

/*
 * A split that fails part way gives its slots back: with one free slot
 * left, an even/odd split of two ranks installs the first communicator
 * and finds no room for the second (FMPL_ERR_NOMEM, ENOSPC); the slot of
 * the first must be free again for the next comm_create.
 */
static void full_rank(struct __test_metadata *_metadata, int rank, int size,
		      void *arg)
{
	int comms[128], n = 0, ier, comm, ret, nsize;

	(void)arg;
	INIT(1);
	while (n < 128) {
		ret = fmpl_comm_create(&comms[n], 0, &ier);
		if (ret != FMPL_SUCCESS)
			break;
		n++;
	}
	ASSERT_EQ(FMPL_ERR_NOMEM, ret);
	ASSERT_EQ(ENOSPC, errno);
	ASSERT_LT(1, n);
	ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_free(&comms[--n], &ier));
	/* One slot free: the split needs two. */
	ASSERT_EQ(FMPL_ERR_NOMEM, fmpl_comm_create(&comm, rank % 2, &ier));
	ASSERT_EQ(ENOSPC, errno);
	ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_create(&comm, 0, &ier));
	ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_size(comm, &nsize, &ier));
	ASSERT_EQ(size, nsize);
	ASSERT_EQ(FMPL_SUCCESS, fmpl_barrier(comm, &ier));
	ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_free(&comm, &ier));
	while (n)
		ASSERT_EQ(FMPL_SUCCESS, fmpl_comm_free(&comms[--n], &ier));
	FINALIZE();
}

TEST(comm_create_failing_part_way_gives_its_slots_back)
{
	RUN_RANKS(2, full_rank, NULL);
}

/* FMPL_COLL in the environment picks the path as fmpl_coll_mode does. */
static void env_mode_rank(struct __test_metadata *_metadata, int rank,
			  int size, void *arg)
{
	int x = rank, work, ier;

	(void)arg;
	setenv("FMPL_COLL", rank % 2 ? "tree" : "TREE", 1);
	INIT(1);
	ASSERT_EQ(FMPL_COLL_TREE, fmpl_coll_mode(FMPL_COLL_TREE));
	ASSERT_EQ(FMPL_SUCCESS, fmpl_bcast(&x, sizeof(x), size - 1, WORLD, &ier));
	ASSERT_EQ(size - 1, x);
	ASSERT_EQ(FMPL_SUCCESS, fmpl_allreduce(&x, 1, &fmpl_imax, WORLD, &work, &ier));
	ASSERT_EQ(size - 1, x);
	FINALIZE();
}

TEST(fmpl_coll_environment)
{
	RUN_RANKS(3, env_mode_rank, NULL);
}

#include "fmpl_main.h"

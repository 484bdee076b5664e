// SPDX-License-Identifier: GPL-2.0
/*
 * osu_fmpl - OSU-style micro-benchmarks of FMPL (libfmpl over /dev/fmpl)
 * and, from the same source built with -DUSE_MPI by an MPI's mpicc, of
 * that MPI, so that the three builds (osu-fmpl, osu-openmpi, osu-mpich)
 * run exactly the same loops.  Only the few lines of the "transport"
 * section below differ between them.
 *
 *   fmplrun -np 2 osu-fmpl [-t TESTS] [-m MAXBYTES] [-n ITERS] [-k K,...] [-C]
 *   mpirun -np 2 osu-openmpi ...     (same options)
 *   fmplrun -np N osu-fmpl -t coll [-c native|tree|auto]
 *
 * TESTS, comma-separated (default latency,bw,gap):
 *
 *   latency   ping-pong between ranks 0 and 1, 0 B and 1 B .. MAXBYTES
 *             (default 4 MB) in powers of two; one-way latency = round
 *             trip / 2, in microseconds.
 *   bw        a window of 64 non-blocking sends (rank 0) against 64
 *             pre-posted non-blocking receives (rank 1), then a 4-byte
 *             acknowledgement; 1 B .. MAXBYTES; MB/s with MB = 10^6.
 *   gap       the FMPL paper's Table 2: rank 1 posts K non-blocking 4-byte
 *             receives from rank 0 on K distinct matching indices (MPI:
 *             tags), timing each post; then rank 0 sends the message of
 *             the receive posted LAST first (so that with MPI's posted-
 *             receive queue it has to be matched past the K-1 others)
 *             and then the K-1 others.  Reports the mean time per post
 *             (the "gap") and the latency of that message: half the round
 *             trip of it and rank 1's 4-byte reply, sent as soon as its
 *             wait for it returns (while the K-1 others are still posted).
 *             K = 1, 10, 100, 600 (-k).  Medians over 5 to 50 repetitions.
 *   coll      on every rank: barrier; bcast of 8 B and 1 MB from rank 0;
 *             allreduce (sum, in place) of 1 double and of 64 KB of
 *             doubles.  Microseconds per call (each rank's median batch),
 *             the mean over ranks and the largest rank's.  For FMPL, -c picks the
 *             library's path (fmpl_coll_mode(); the FMPL_COLL
 *             environment variable does the same).
 *
 * Every size runs warm-up iterations first, then timed ones (-n for small
 * messages, fewer as the size grows, so that a run stays short under
 * emulation) in 5 batches (3 when there are fewer than 5 iterations), of
 * which the median is reported (so that one descheduling of a rank on
 * shared or emulated CPUs does not make a size's figure), then one
 * untimed checked iteration: the received data (and
 * every received size) is compared with what was sent, and a mismatch
 * ends the program with status 1 (-C corrupts one received byte per check
 * to show it).  Output: OSU-style tables ("# Size  Latency (us)"), one
 * per test, each after a "# osu_fmpl TEST (...)" line.  Exit status 0,
 * 1 on a wrong result or a failed call (named on stderr), 2 on a usage
 * error.
 *
 * Matching: FMPL uses the message's number within the window as matching
 * index (0..63), the gap test indices 64..64+K-1, and one index each for
 * the acknowledgement and control messages; fmpl_init gets count = 64 +
 * the largest K + 2.  MPI uses the same numbers as tags.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <getopt.h>
#include <unistd.h>

#define WINDOW		64
#define GAP_KMAX	600		/* the paper's largest K, and the default */
#define KLIST_MAX	16
#define KMAX_LIMIT	1900		/* 64 + K + 2 <= /dev/fmpl's count_max (2048) */
#define COLL_LARGE	(1 << 20)	/* bcast 1 MB */
#define ALLRED_LARGE	(64 << 10)	/* allreduce 64 KB of doubles */

static int me, np;
static int idx_ack, idx_ctrl;		/* set from the largest K */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* ---- transport: the only part that differs between the builds ---------- */
#ifdef USE_MPI
#include <mpi.h>

typedef MPI_Request req_t;

#if defined(OPEN_MPI)
#define STR_(x) #x
#define STR(x) STR_(x)
static const char impl_name[] = "Open MPI " STR(OMPI_MAJOR_VERSION) "."
	STR(OMPI_MINOR_VERSION) "." STR(OMPI_RELEASE_VERSION);
#elif defined(MPICH_VERSION)
static const char impl_name[] = "MPICH " MPICH_VERSION;
#else
static const char impl_name[] = "MPI";
#endif

static void t_init(int *argc, char ***argv, int count)
{
	(void)count;
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
}

static __attribute__((noreturn)) void t_abort(void)
{
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

static void t_finalize(void) { MPI_Finalize(); }

static size_t count_of(MPI_Status *st)
{
	int n;

	MPI_Get_count(st, MPI_BYTE, &n);
	return (size_t)n;
}

static void t_send(const void *b, size_t n, int peer, int idx)
{
	MPI_Send(b, (int)n, MPI_BYTE, peer, idx, MPI_COMM_WORLD);
}

static size_t t_recv(void *b, size_t n, int peer, int idx)
{
	MPI_Status st;

	MPI_Recv(b, (int)n, MPI_BYTE, peer, idx, MPI_COMM_WORLD, &st);
	return count_of(&st);
}

static void t_isend(const void *b, size_t n, int peer, int idx, req_t *r)
{
	MPI_Isend(b, (int)n, MPI_BYTE, peer, idx, MPI_COMM_WORLD, r);
}

static void t_irecv(void *b, size_t n, int peer, int idx, req_t *r)
{
	MPI_Irecv(b, (int)n, MPI_BYTE, peer, idx, MPI_COMM_WORLD, r);
}

static void t_wait_send(req_t *r) { MPI_Wait(r, MPI_STATUS_IGNORE); }

static size_t t_wait_recv(req_t *r)
{
	MPI_Status st;

	MPI_Wait(r, &st);
	return count_of(&st);
}

static void t_barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }

static void t_bcast(void *b, size_t n, int root)
{
	MPI_Bcast(b, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
}

static void t_allreduce_dsum(double *b, size_t n, double *work)
{
	(void)work;
	MPI_Allreduce(MPI_IN_PLACE, b, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static const char *t_coll_mode(const char *mode)
{
	if (mode)
		die("-c is for the FMPL build");
	return "";
}

#else /* FMPL */
#include <errno.h>
#include <fmpl.h>

typedef struct { int peer, idx; } req_t;

static const char impl_name[] = "FMPL";

/* Every libfmpl call: a failure ends the benchmark with its reason. */
#define F(call) do {							\
	int e_ = (call);						\
	if (e_ != FMPL_SUCCESS)						\
		die("%s: %s (%s)", #call, fmpl_strerror(e_), strerror(errno)); \
} while (0)

/*
 * FMPL_FAST=N (libfmpl's fast indices, no system call for messages of up
 * to FMPL_FAST_DATA_MAX bytes): such messages use indices 0..N-1, every
 * other message its usual index + N, so both sides agree by size alone.
 */
static int nfast;

static int kidx(int idx, size_t n)
{
	return idx < nfast && n <= FMPL_FAST_DATA_MAX ? idx : idx + nfast;
}

static void t_init(int *argc, char ***argv, int count)
{
	const char *v = getenv("FMPL_FAST");

	(void)argc;
	(void)argv;
	nfast = v ? atoi(v) : 0;
	if (nfast < 0 || nfast > FMPL_FAST_COUNT_MAX)
		die("FMPL_FAST=%s: 0..%d", v, FMPL_FAST_COUNT_MAX);
	F(fmpl_init(NULL, NULL, count + nfast, NULL));
	F(fmpl_comm_rank(FMPL_COMM_WORLD, &me, NULL));
	F(fmpl_comm_size(FMPL_COMM_WORLD, &np, NULL));
}

/* The other ranks see the world's member leave (ECONNRESET) and end too. */
static __attribute__((noreturn)) void t_abort(void) { exit(1); }

static void t_finalize(void) { F(fmpl_finalize(NULL)); }

static void t_send(const void *b, size_t n, int peer, int idx)
{
	F(fmpl_send(b, n, peer, kidx(idx, n), FMPL_COMM_WORLD, NULL));
}

static size_t t_recv(void *b, size_t n, int peer, int idx)
{
	fmpl_status st;

	F(fmpl_recv_status(b, n, peer, kidx(idx, n), FMPL_COMM_WORLD, &st, NULL));
	return st.size;
}

static void t_isend(const void *b, size_t n, int peer, int idx, req_t *r)
{
	idx = kidx(idx, n);
	F(fmpl_isend(b, n, peer, idx, FMPL_COMM_WORLD, NULL));
	*r = (req_t){ peer, idx };
}

static void t_irecv(void *b, size_t n, int peer, int idx, req_t *r)
{
	idx = kidx(idx, n);
	F(fmpl_irecv(b, n, peer, idx, FMPL_COMM_WORLD, NULL));
	*r = (req_t){ peer, idx };
}

static void t_wait_send(req_t *r)
{
	F(fmpl_isend_wait(r->peer, r->idx, FMPL_COMM_WORLD, NULL));
}

static size_t t_wait_recv(req_t *r)
{
	fmpl_status st;

	F(fmpl_irecv_wait_status(r->peer, r->idx, FMPL_COMM_WORLD, &st, NULL));
	return st.size;
}

static void t_barrier(void) { F(fmpl_barrier(FMPL_COMM_WORLD, NULL)); }

static void t_bcast(void *b, size_t n, int root)
{
	F(fmpl_bcast(b, n, root, FMPL_COMM_WORLD, NULL));
}

static void t_allreduce_dsum(double *b, size_t n, double *work)
{
	F(fmpl_allreduce(b, n, &fmpl_dsum, FMPL_COMM_WORLD, work, NULL));
}

/* -c MODE (or FMPL_COLL): the collectives' path; returns its name. */
static const char *t_coll_mode(const char *mode)
{
	static const char *const names[] = { "auto", "native", "tree" };
	int m;

	if (!mode)
		mode = getenv("FMPL_COLL");
	if (!mode)
		return "auto";
	for (m = 0; m < 3; m++)
		if (!strcmp(mode, names[m]))
			break;
	if (m == 3)
		die("-c %s: native, tree or auto", mode);
	if (fmpl_coll_mode(m) < 0)
		die("fmpl_coll_mode(%s) failed", mode);
	return names[m];
}
#endif

/* ---- helpers ------------------------------------------------------------ */

static int corrupt;		/* -C: spoil one byte per check */

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "osu_fmpl[%s rank %d]: ", impl_name, me);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	t_abort();
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void *xalloc(size_t n)
{
	void *p;

	/* page-aligned like OSU's buffers; touched so that no first-touch
	 * fault lands in a timed loop */
	if (posix_memalign(&p, 4096, n ? n : 1))
		die("out of memory (%zu bytes)", n);
	memset(p, 0, n ? n : 1);
	return p;
}

static inline unsigned char pat(size_t i, unsigned int seed)
{
	return (unsigned char)((i ^ (i >> 8) ^ (i >> 16)) * 31 + seed);
}

static void fill(void *buf, size_t n, unsigned int seed)
{
	unsigned char *b = buf;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = pat(i, seed);
}

/* WHAT's received buffer must hold fill(N, SEED) and have come N long. */
static void verify(const char *what, void *buf, size_t n, size_t got,
		   unsigned int seed)
{
	unsigned char *b = buf;
	size_t i;

	if (corrupt && n)
		b[n / 2] ^= 0x40;
	if (got != n)
		die("%s: received %zu bytes instead of %zu", what, got, n);
	for (i = 0; i < n; i++)
		if (b[i] != pat(i, seed))
			die("%s, %zu bytes: wrong data at byte %zu (0x%02x, not 0x%02x)",
			    what, n, i, b[i], pat(i, seed));
}

/* Timed iterations for SIZE: at most NMAX, about BUDGET bytes, at least NMIN. */
static int iters_for(size_t size, int nmax, size_t budget, int nmin)
{
	size_t n = size ? budget / size : (size_t)nmax;

	if (n > (size_t)nmax)
		n = nmax;
	return n < (size_t)nmin ? nmin : (int)n;
}

/*
 * The timed iterations run in NB batches of IB (NBATCH, or 3 when there
 * are fewer than NBATCH iterations); the result is the median batch, so
 * that one descheduling of a rank on the shared, emulated CPUs does not
 * make the whole size's figure.
 */
#define NBATCH	5

static void batches(int iters, int *nb, int *ib)
{
	*nb = iters >= NBATCH ? NBATCH : 3;
	*ib = iters / *nb > 1 ? iters / *nb : 1;
}

static int warm_for(int iters)
{
	return iters / 10 > 2 ? iters / 10 : 2;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int ncpus(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/* ---- the tests ---------------------------------------------------------- */

static void ping_pong(char *sbuf, char *rbuf, size_t size)
{
	if (me == 0) {
		t_send(sbuf, size, 1, 0);
		t_recv(rbuf, size, 1, 0);
	} else {
		t_recv(rbuf, size, 0, 0);
		t_send(sbuf, size, 0, 0);
	}
}

static void test_latency(size_t max, int nmax)
{
	char *sbuf = xalloc(max), *rbuf = xalloc(max);
	double tb[NBATCH];
	size_t size, got;

	if (me == 0)
		printf("# osu_fmpl latency (%s, 2 ranks)\n# %-10s %16s\n",
		       impl_name, "Size", "Latency (us)");
	for (size = 0; size <= max; size = size ? size * 2 : 1) {
		int iters = iters_for(size, nmax, 64 << 20, 10), nb, ib, b, i;
		unsigned int seed = (unsigned int)size * 7 + 1;
		double t0;

		batches(iters, &nb, &ib);
		for (i = 0; i < warm_for(iters); i++)
			ping_pong(sbuf, rbuf, size);
		for (b = 0; b < nb; b++) {
			t0 = now();
			for (i = 0; i < ib; i++)
				ping_pong(sbuf, rbuf, size);
			tb[b] = (now() - t0) / (2.0 * ib);
		}
		/* the checked round trip: rank 1 answers with another pattern */
		if (me == 0) {
			fill(sbuf, size, seed);
			memset(rbuf, 0, size);
			t_send(sbuf, size, 1, 0);
			got = t_recv(rbuf, size, 1, 0);
			verify("latency pong", rbuf, size, got, seed + 1);
			printf("%-12zu %16.2f\n", size, median(tb, nb) * 1e6);
			fflush(stdout);
		} else {
			memset(rbuf, 0, size);
			got = t_recv(rbuf, size, 0, 0);
			verify("latency ping", rbuf, size, got, seed);
			fill(sbuf, size, seed + 1);
			t_send(sbuf, size, 0, 0);
		}
	}
	free(sbuf);
	free(rbuf);
}

/* One window of the bandwidth test, acknowledged with SEQ; CHECK: its data. */
static void bw_window(char *sbuf, char *rbuf, size_t size, req_t *req,
		      uint32_t seq, int check, unsigned int seed)
{
	uint32_t ack;
	int w;

	if (me == 0) {
		if (check)
			fill(sbuf, size, seed);
		for (w = 0; w < WINDOW; w++)
			t_isend(sbuf, size, 1, w, &req[w]);
		for (w = 0; w < WINDOW; w++)
			t_wait_send(&req[w]);
		ack = ~0u;
		if (t_recv(&ack, sizeof(ack), 1, idx_ack) != sizeof(ack) || ack != seq)
			die("bandwidth: acknowledgement %u, not %u", ack, seq);
	} else {
		if (check)
			memset(rbuf, 0, size);
		for (w = 0; w < WINDOW; w++)
			t_irecv(rbuf, size, 0, w, &req[w]);
		for (w = 0; w < WINDOW; w++)
			if (t_wait_recv(&req[w]) != size)
				die("bandwidth: message %d of %zu bytes came short", w, size);
		if (check)
			verify("bandwidth", rbuf, size, size, seed);
		ack = seq;
		t_send(&ack, sizeof(ack), 0, idx_ack);
	}
}

static void test_bw(size_t max, int nmax)
{
	char *sbuf = xalloc(max), *rbuf = xalloc(max);
	req_t req[WINDOW];
	double tb[NBATCH];
	size_t size;

	if (me == 0)
		printf("# osu_fmpl bandwidth (%s, 2 ranks, window %d)\n# %-10s %16s\n",
		       impl_name, WINDOW, "Size", "Bandwidth (MB/s)");
	for (size = 1; size <= max; size *= 2) {
		int iters = iters_for(size * WINDOW, nmax / 10, 256 << 20, 3), nb, ib, b, i;
		int warm = iters / 10 > 1 ? iters / 10 : 1;
		unsigned int seed = (unsigned int)size * 3 + 5;
		uint32_t seq = 0;
		double t0;

		batches(iters, &nb, &ib);
		for (i = 0; i < warm; i++)
			bw_window(sbuf, rbuf, size, req, seq++, 0, seed);
		for (b = 0; b < nb; b++) {
			t0 = now();
			for (i = 0; i < ib; i++)
				bw_window(sbuf, rbuf, size, req, seq++, 0, seed);
			tb[b] = (double)size * WINDOW * ib / (now() - t0) / 1e6;
		}
		bw_window(sbuf, rbuf, size, req, seq++, 1, seed);
		if (me == 0) {
			printf("%-12zu %16.2f\n", size, median(tb, nb));
			fflush(stdout);
		}
	}
	free(sbuf);
	free(rbuf);
}

#define GAP_REPS_MAX	50

static void test_gap(const int *ks, int nk, int kmax)
{
	uint32_t *val = xalloc(sizeof(*val) * kmax), pong;
	req_t *req = xalloc(sizeof(*req) * kmax);
	double gaps[GAP_REPS_MAX], lats[GAP_REPS_MAX];
	int k, j, r;

	if (me == 0)
		printf("# osu_fmpl gap (%s, 2 ranks): K pre-posted 4-byte receives\n"
		       "# %-10s %16s %20s\n", impl_name, "Outstanding", "Gap (us)",
		       "Last latency (us)");
	for (k = 0; k < nk; k++) {
		int K = ks[k], reps = iters_for((size_t)K, GAP_REPS_MAX, 3000, 5), warm = 1;
		double post, t0;

		for (r = 0; r < warm + reps; r++) {
			uint32_t base = (uint32_t)r * 100000u;

			if (me == 1) {
				post = 0;
				for (j = 0; j < K; j++) {
					double t = now();

					val[j] = ~0u;
					t_irecv(&val[j], sizeof(*val), 0, WINDOW + j, &req[j]);
					post += now() - t;
				}
				t_send(NULL, 0, 0, idx_ctrl);		/* all posted */
				if (t_wait_recv(&req[K - 1]) != sizeof(*val))
					die("gap: the last receive came short");
				t_send(&val[K - 1], sizeof(*val), 0, idx_ctrl);	/* reply */
				for (j = 0; j < K - 1; j++)
					if (t_wait_recv(&req[j]) != sizeof(*val))
						die("gap: receive %d came short", j);
				if (corrupt)
					val[0] ^= 0x40;
				for (j = 0; j < K; j++)
					if (val[j] != base + (uint32_t)j)
						die("gap K=%d: message %d holds %u, not %u",
						    K, j, val[j], base + j);
				t_send(&post, sizeof(post), 0, idx_ctrl);
			} else if (me == 0) {
				for (j = 0; j < K; j++)
					val[j] = base + (uint32_t)j;
				t_recv(NULL, 0, 1, idx_ctrl);
				/* the receive posted last, matched past K-1 others */
				t0 = now();
				t_send(&val[K - 1], sizeof(*val), 1, WINDOW + K - 1);
				pong = ~0u;
				if (t_recv(&pong, sizeof(pong), 1, idx_ctrl) != sizeof(pong) ||
				    pong != base + (uint32_t)K - 1)
					die("gap K=%d: reply %u, not %u", K, pong, base + K - 1);
				t0 = now() - t0;
				for (j = 0; j < K - 1; j++)
					t_send(&val[j], sizeof(*val), 1, WINDOW + j);
				if (t_recv(&post, sizeof(post), 1, idx_ctrl) != sizeof(post))
					die("gap: short result message");
				if (r >= warm) {
					gaps[r - warm] = post / K;
					lats[r - warm] = t0 / 2;
				}
			}
		}
		if (me == 0) {
			printf("%-12d %16.2f %20.2f\n", K, median(gaps, reps) * 1e6,
			       median(lats, reps) * 1e6);
			fflush(stdout);
		}
	}
	free(val);
	free(req);
}

/* Rank 0 prints NAME SIZE with the mean over ranks and the largest value. */
static void coll_report(const char *name, size_t size, double v)
{
	double sum = v, max = v;
	int r;

	if (me) {
		t_send(&v, sizeof(v), 0, idx_ctrl);
		return;
	}
	for (r = 1; r < np; r++) {
		if (t_recv(&v, sizeof(v), r, idx_ctrl) != sizeof(v))
			die("collectives: short result from rank %d", r);
		sum += v;
		max = v > max ? v : max;
	}
	printf("%-12s %10zu %14.2f %14.2f\n", name, size, sum * 1e6 / np, max * 1e6);
	fflush(stdout);
}

enum coll_op { BARRIER, BCAST, ALLREDUCE };

/*
 * ITERS timed calls of OP on SIZE bytes (warm-up first), in batches; the
 * median batch's time per call.  Allreduce reduces fresh values each call
 * (set up outside the timing).
 */
static double coll_time(enum coll_op op, void *buf, size_t size, double *work,
			int iters)
{
	double tb[NBATCH], t, sum;
	size_t n_el = size / sizeof(double), i;
	int nb, ib, b, it;

	batches(iters, &nb, &ib);
	t_barrier();
	for (b = -1; b < nb; b++) {		/* batch -1: warm-up */
		int n = b < 0 ? warm_for(iters) : ib;

		for (sum = 0, it = 0; it < n; it++) {
			if (op == ALLREDUCE)
				for (i = 0; i < n_el; i++)
					((double *)buf)[i] = (double)(me + 1) * (double)(i % 5 + 1);
			t = now();
			if (op == BARRIER)
				t_barrier();
			else if (op == BCAST)
				t_bcast(buf, size, 0);
			else
				t_allreduce_dsum(buf, n_el, work);
			sum += now() - t;
		}
		if (b >= 0)
			tb[b] = sum / n;
	}
	return median(tb, nb);
}

static void test_coll(int nmax, const char *mode)
{
	size_t nd = ALLRED_LARGE / sizeof(double), bsize[2] = { 8, COLL_LARGE }, i;
	double *a = xalloc(ALLRED_LARGE), *work = xalloc(ALLRED_LARGE), v;
	char *b = xalloc(COLL_LARGE);
	int s;

	if (me == 0)
		printf("# osu_fmpl collectives (%s%s%s, %d ranks on %d CPUs%s)\n"
		       "# %-10s %10s %14s %14s\n", impl_name, *mode ? ", " : "", mode,
		       np, ncpus(), np > ncpus() ? ", oversubscribed" : "",
		       "Test", "Size", "Avg (us)", "Max (us)");

	coll_report("barrier", 0, coll_time(BARRIER, NULL, 0, NULL, nmax / 5));

	for (s = 0; s < 2; s++) {
		size_t size = bsize[s];
		unsigned int seed = (unsigned int)size + 11;

		fill(b, size, seed - 1);
		v = coll_time(BCAST, b, size, NULL, iters_for(size, nmax / 5, 32 << 20, 5));
		/* checked */
		if (me == 0)
			fill(b, size, seed);
		else
			memset(b, 0, size);
		t_bcast(b, size, 0);
		if (me)
			verify("bcast", b, size, size, seed);
		coll_report("bcast", size, v);
	}

	for (s = 0; s < 2; s++) {
		size_t n_el = s ? nd : 1, size = n_el * sizeof(double);

		v = coll_time(ALLREDUCE, a, size, work, iters_for(size, nmax / 5, 32 << 20, 5));
		/* checked: the last call's result */
		if (corrupt)
			a[n_el / 2] += 1;
		for (i = 0; i < n_el; i++) {
			double want = (double)np * (np + 1) / 2 * (double)(i % 5 + 1);

			if (a[i] != want)
				die("allreduce of %zu doubles: element %zu is %g, not %g",
				    n_el, i, a[i], want);
		}
		coll_report("allreduce", size, v);
	}
	free(a);
	free(work);
	free(b);
}

static __attribute__((noreturn)) void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: osu_fmpl [-t latency,bw,gap,coll] [-m MAXBYTES] "
		"[-n ITERS] [-k K,...] [-c native|tree|auto] [-C]\n");
	exit(status);
}

static const struct option help_opt[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

int main(int argc, char **argv)
{
	char deftests[] = "latency,bw,gap", *tests = deftests, *tok, *save, *kl = NULL;
	const char *cmode = NULL;
	int ks[KLIST_MAX] = { 1, 10, 100, GAP_KMAX }, nk = 4, kmax = GAP_KMAX;
	size_t max = 4 << 20;
	int nmax = 1000, opt, p2p;

	while ((opt = getopt_long(argc, argv, "t:m:n:k:c:Ch", help_opt,
				  NULL)) != -1) {
		switch (opt) {
		case 't': tests = optarg; break;
		case 'm': max = strtoull(optarg, NULL, 0); break;
		case 'n': nmax = atoi(optarg); break;
		case 'k': kl = optarg; break;
		case 'c': cmode = optarg; break;
		case 'C': corrupt = 1; break;
		case 'h': usage(0);
		default: usage(2);
		}
	}
	if (nmax < 10 || max > (1u << 30))
		usage(2);
	if (kl) {
		for (nk = 0, tok = strtok_r(kl, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			if (nk == KLIST_MAX || (ks[nk] = atoi(tok)) < 1 ||
			    ks[nk] > KMAX_LIMIT)
				usage(2);
			kmax = ks[nk] > kmax ? ks[nk] : kmax;
			nk++;
		}
	}
	idx_ack = WINDOW + kmax;
	idx_ctrl = idx_ack + 1;

	t_init(&argc, &argv, idx_ctrl + 1);
	p2p = strstr(tests, "latency") || strstr(tests, "bw") || strstr(tests, "gap");
	if (p2p && np < 2)
		die("the point-to-point tests need 2 ranks");
	cmode = t_coll_mode(cmode);

	for (tok = strtok_r(tests, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (me >= 2 && strcmp(tok, "coll"))	/* p2p: ranks 0 and 1 only */
			continue;
		if (!strcmp(tok, "latency"))
			test_latency(max, nmax);
		else if (!strcmp(tok, "bw"))
			test_bw(max, nmax);
		else if (!strcmp(tok, "gap"))
			test_gap(ks, nk, kmax);
		else if (!strcmp(tok, "coll"))
			test_coll(nmax, cmode);
		else
			die("unknown test %s", tok);
		if (me == 0)
			printf("\n");
	}
	fflush(stdout);
	t_finalize();
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * common.h - what the SPLASH-2-style kernels share, AWG-STAR and MPI
 * versions alike: the clock, the deterministic input generator, the
 * result line, option helpers and the complex arithmetic of the FFT.
 *
 * Every program prints one line on stdout (node or rank 0 only):
 *
 *   RESULT kernel=K version=awg|mpi tuned=0|1 nodes=N <sizes> seconds=S
 *          cpu_seconds=C <counters> verify=ok|FAIL <error measure>
 *
 * seconds: wall time of the parallel computation on node 0, from the
 * barrier that starts it to the barrier (MPI: the gather to rank 0) that
 * ends it; cpu_seconds: node 0's CPU time over the same span.  A wrong
 * result prints FAIL (also on stderr) and exits 1; a usage or setup error
 * exits 2.  SPLASH_CORRUPT=1 spoils the result on purpose.
 */
#ifndef SPLASH_COMMON_H
#define SPLASH_COMMON_H

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SPLASH_SEED	0x5eed2004ULL

static inline double splash_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static inline double splash_cpu(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* SplitMix64 of (seed, i): the input of every kernel, the same anywhere. */
static inline uint64_t splash_hash(uint64_t seed, uint64_t i)
{
	uint64_t x = seed + (i + 1) * 0x9E3779B97F4A7C15ULL;

	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

/* Uniform in [-1, 1). */
static inline double splash_unit(uint64_t seed, uint64_t i)
{
	return (double)(splash_hash(seed, i) >> 11) / 4503599627370496.0 - 1.0;
}

/*
 * SPLASH_CORRUPT=1: spoil one element of the result before the check, to
 * see that the check fails (the tests do).
 */
static inline int splash_corrupt(void)
{
	const char *s = getenv("SPLASH_CORRUPT");

	return s && !strcmp(s, "1");
}

static void __attribute__((noreturn, format(printf, 2, 3)))
splash_die(const char *prog, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* A whole number option in [min, max], else a usage error. */
static inline long splash_num(const char *prog, const char *opt, const char *s,
		       long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max)
		splash_die(prog, "%s %s: want a whole number in %ld..%ld",
			   opt, s, min, max);
	return v;
}

/* [lo, hi) of part @p of @n items split over @parts, sizes differing by one. */
static inline void splash_part(uint64_t n, unsigned int parts, unsigned int p,
			       uint64_t *lo, uint64_t *hi)
{
	uint64_t q = n / parts, r = n % parts;

	*lo = p * q + (p < r ? p : r);
	*hi = *lo + q + (p < r);
}

/* ---- complex numbers of the FFT (interleaved re, im doubles) ---------- */
typedef struct {
	double re, im;
} splash_cplx;

static inline splash_cplx splash_cmul(splash_cplx a, splash_cplx b)
{
	splash_cplx c = { a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re };

	return c;
}

/* The FFT's input: point j. */
static inline splash_cplx splash_fft_input(uint64_t j)
{
	splash_cplx c = { splash_unit(SPLASH_SEED, 2 * j),
			  splash_unit(SPLASH_SEED, 2 * j + 1) };

	return c;
}

/* e^(-2 pi i k / n) */
static inline splash_cplx splash_root(uint64_t k, uint64_t n)
{
	double a = -2.0 * M_PI * (double)(k % n) / (double)n;
	splash_cplx c = { cos(a), sin(a) };

	return c;
}

/* Put @n (a power of two) points into bit-reversed order, in place. */
static inline void splash_bitrev(splash_cplx *x, uint64_t n)
{
	uint64_t i, j;

	for (i = 1, j = 0; i < n; i++) {
		uint64_t bit = n >> 1;

		for (; j & bit; bit >>= 1)
			j ^= bit;
		j ^= bit;
		if (i < j) {
			splash_cplx t = x[i];

			x[i] = x[j];
			x[j] = t;
		}
	}
}

/*
 * The sequential reference: in-place iterative radix-2 FFT of @n (a power
 * of two) points, forward (e^-).  Used on one node to check the parallel
 * result, and checked itself against the naive DFT for small n.
 */
static inline void splash_fft_ref(splash_cplx *x, uint64_t n)
{
	uint64_t i, k, len;

	splash_bitrev(x, n);
	for (len = 2; len <= n; len <<= 1) {
		for (i = 0; i < n; i += len) {
			for (k = 0; k < len / 2; k++) {
				splash_cplx w = splash_root(k, len);
				splash_cplx u = x[i + k];
				splash_cplx v = splash_cmul(x[i + k + len / 2], w);

				x[i + k].re = u.re + v.re;
				x[i + k].im = u.im + v.im;
				x[i + k + len / 2].re = u.re - v.re;
				x[i + k + len / 2].im = u.im - v.im;
			}
		}
	}
}

/*
 * Check @got (n points, the forward transform of splash_fft_input) against
 * the reference FFT, and the reference against the naive DFT (64 of its
 * outputs) when n is at most 4096.  The largest error relative to the largest |X[k]|.
 */
static inline double splash_fft_check(const splash_cplx *got, uint64_t n)
{
	splash_cplx *ref = malloc(n * sizeof(*ref));
	double err = 0, big = 0, d;
	uint64_t j, k;

	if (!ref)
		return INFINITY;
	for (j = 0; j < n; j++)
		ref[j] = splash_fft_input(j);
	splash_fft_ref(ref, n);
	if (n <= 4096) {
		/* At most 64 of the outputs: O(64 n). */
		for (k = 0; k < n; k += (n > 64 ? n / 64 + 1 : 1)) {
			splash_cplx s = { 0, 0 };

			for (j = 0; j < n; j++) {
				splash_cplx t = splash_cmul(splash_fft_input(j),
							    splash_root(j * k, n));
				s.re += t.re;
				s.im += t.im;
			}
			d = hypot(s.re - ref[k].re, s.im - ref[k].im);
			if (d > 1e-9 * (1 + hypot(s.re, s.im)))
				err = INFINITY;	/* the reference itself is wrong */
		}
	}
	for (k = 0; k < n; k++) {
		d = hypot(got[k].re - ref[k].re, got[k].im - ref[k].im);
		if (!(d <= err))
			err = d;	/* NaN counts as wrong too */
		d = hypot(ref[k].re, ref[k].im);
		if (d > big)
			big = d;
	}
	free(ref);
	return big > 0 ? err / big : err;
}

/* ---- LU: the matrix and its check -------------------------------------- */

/* A[i][j] of the n x n test matrix: random in [-1, 1), diagonal + n. */
static inline double splash_lu_a(uint64_t n, uint64_t i, uint64_t j)
{
	return splash_unit(SPLASH_SEED ^ 0x1u, i * n + j) + (i == j ? (double)n : 0.0);
}

/*
 * ||A - L U||_F / ||A||_F for the factors packed in one matrix, read by
 * @get(ctx, i, j) (L unit lower triangular below the diagonal, U on and
 * above it).
 */
static inline double splash_lu_residual(uint64_t n, double (*get)(void *, uint64_t, uint64_t),
				 void *ctx)
{
	double *f = malloc(n * n * sizeof(*f)), num = 0, den = 0, s, a;
	uint64_t i, j, k, kmax;

	if (!f)
		return INFINITY;
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			f[i * n + j] = get(ctx, i, j);
	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++) {
			/* (L U)[i][j] = sum over k <= min(i, j) of L[i][k] U[k][j] */
			kmax = i < j ? i : j;
			s = 0;
			for (k = 0; k < kmax; k++)
				s += f[i * n + k] * f[k * n + j];
			/* k = min(i, j): L[i][i] = 1, or U[j][j] */
			s += i <= j ? f[i * n + j] : f[i * n + j] * f[j * n + j];
			a = splash_lu_a(n, i, j);
			num += (a - s) * (a - s);
			den += a * a;
		}
	}
	free(f);
	return sqrt(num / den);
}

/* ---- RADIX: the keys and their check ------------------------------------ */

static inline uint32_t splash_radix_key(uint64_t i, uint32_t max_key)
{
	return (uint32_t)(splash_hash(SPLASH_SEED ^ 0x2u, i) % max_key);
}

/* A multiset checksum: the same for any permutation of the same keys. */
static inline uint64_t splash_key_sum(uint32_t key)
{
	return splash_hash(0xc0ffee, key);
}

/*
 * 0 when @keys (n of them) are sorted and a permutation of the input;
 * *@sum gets the checksum.  Else 1 with a message in @why.
 */
static inline int splash_radix_check(const uint32_t *keys, uint64_t n, uint32_t max_key,
			      uint64_t *sum, char *why, size_t len)
{
	uint64_t i, want = 0, got = 0;

	for (i = 0; i < n; i++) {
		want += splash_key_sum(splash_radix_key(i, max_key));
		got += splash_key_sum(keys[i]);
		if (i && keys[i - 1] > keys[i]) {
			snprintf(why, len, "not sorted at %llu: %u > %u",
				 (unsigned long long)i, keys[i - 1], keys[i]);
			*sum = got;
			return 1;
		}
	}
	*sum = got;
	if (got != want) {
		snprintf(why, len, "not a permutation of the input: checksum %016llx, want %016llx",
			 (unsigned long long)got, (unsigned long long)want);
		return 1;
	}
	return 0;
}

#endif /* SPLASH_COMMON_H */

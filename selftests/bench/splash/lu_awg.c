// SPDX-License-Identifier: GPL-2.0
/*
 * lu_awg - SPLASH-2-style blocked LU on the AWG-STAR board: a dense n x n
 * matrix of doubles (diagonally dominant, so no pivoting) in B x B blocks
 * (B = 16: 2 KB), each block stored contiguously in the region and owned
 * by one node in a 2-D scatter (P = pr x pc nodes, block (I, J) on node
 * (I mod pr) pc + (J mod pc)).  For each diagonal block K:
 *
 *   its owner factors it (A_KK = L_KK U_KK);                   barrier
 *   owners of the perimeter: A_KJ = L_KK^-1 A_KJ (J > K),
 *                            A_IK = A_IK U_KK^-1 (I > K);      barrier
 *   owners of the interior: A_IJ -= A_IK A_KJ (I, J > K).
 *
 * Untuned, as the seed report's programs: the blocks are computed where
 * they lie, every store of an element being one board write (awg_poke64),
 * so a block update costs up to B^3 writes.  --tuned, as the report's
 * section 4.4.2: the block is copied to local memory, computed there and
 * written back with one awg_write of 2 KB.
 *
 * Node 0 checks ||A - L U||_F / ||A||_F against the matrix regenerated.
 */
#include "awg_common.h"

static const char *prog = "lu_awg";

static struct awgb b;
static uint64_t n, nb;
static unsigned int bs = 16, pr, pc;
static int tuned;
static double *loc;	/* a block's local copy (tuned) */

static uint64_t blk(uint64_t I, uint64_t J)
{
	return (I * nb + J) * bs * bs * sizeof(double);
}

static unsigned int owner(uint64_t I, uint64_t J)
{
	return (unsigned int)((I % pr) * pc + (J % pc));
}

static inline double *at(uint64_t off)
{
	return (double *)(b.map + off);
}

/*
 * The block at @off as the computation sees it: untuned the region itself
 * (loads local, stores through set()), tuned a local copy.
 */
static double *open_blk(uint64_t off)
{
	if (!tuned)
		return at(off);
	memcpy(loc, at(off), bs * bs * sizeof(double));
	return loc;
}

static inline void set(double *p, uint64_t off, unsigned int idx, double v)
{
	if (tuned)
		p[idx] = v;
	else
		awgb_poke_double(&b, off + idx * sizeof(double), v);
}

static void close_blk(double *p, uint64_t off)
{
	if (tuned)
		awgb_write(&b, off, p, bs * bs * sizeof(double));
}

/* A = L U of the diagonal block, in place. */
static void lu0(uint64_t off)
{
	double *a = open_blk(off);
	unsigned int i, j, k;

	for (k = 0; k < bs; k++) {
		for (i = k + 1; i < bs; i++) {
			double l = a[i * bs + k] / a[k * bs + k];

			set(a, off, i * bs + k, l);
			for (j = k + 1; j < bs; j++)
				set(a, off, i * bs + j, a[i * bs + j] - l * a[k * bs + j]);
		}
	}
	close_blk(a, off);
}

/* A_KJ = L_KK^-1 A_KJ (L unit lower triangular). */
static void bdiv_row(uint64_t off, const double *d)
{
	double *a = open_blk(off);
	unsigned int i, j, k;

	for (k = 0; k < bs; k++)
		for (i = k + 1; i < bs; i++)
			for (j = 0; j < bs; j++)
				set(a, off, i * bs + j, a[i * bs + j] - d[i * bs + k] * a[k * bs + j]);
	close_blk(a, off);
}

/* A_IK = A_IK U_KK^-1. */
static void bdiv_col(uint64_t off, const double *d)
{
	double *a = open_blk(off);
	unsigned int i, j, k;

	for (i = 0; i < bs; i++) {
		for (k = 0; k < bs; k++) {
			double x = a[i * bs + k] / d[k * bs + k];

			set(a, off, i * bs + k, x);
			for (j = k + 1; j < bs; j++)
				set(a, off, i * bs + j, a[i * bs + j] - x * d[k * bs + j]);
		}
	}
	close_blk(a, off);
}

/* C -= A B */
static void bmod(uint64_t off, const double *l, const double *u)
{
	double *c = open_blk(off);
	unsigned int i, j, k;

	for (i = 0; i < bs; i++)
		for (k = 0; k < bs; k++)
			for (j = 0; j < bs; j++)
				set(c, off, i * bs + j, c[i * bs + j] - l[i * bs + k] * u[k * bs + j]);
	close_blk(c, off);
}

/* Element (i, j) of the factored matrix, for the check. */
static double get(void *ctx, uint64_t i, uint64_t j)
{
	(void)ctx;
	return at(blk(i / bs, j / bs))[(i % bs) * bs + j % bs];
}

static void __attribute__((noreturn)) usage(int status)
{
	fprintf(status ? stderr : stdout,
"Usage: %s [OPTIONS]\n"
"SPLASH-2-style blocked LU on the AWG-STAR board (one process per node).\n"
"  -n, --size N        matrix order, a multiple of the block (default 32)\n"
"  -b, --block B       block order (default 16: 2 KB blocks)\n"
"  -t, --tuned         compute each block in local memory, one awg_write back\n"
"  -h, --help          this text\n"
AWGB_HELP, prog);
	exit(status);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "size", required_argument, NULL, 'n' },
		{ "block", required_argument, NULL, 'b' },
		{ "tuned", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		AWGB_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 }
	};
	struct awgb_opts o = { 0 };
	uint64_t I, J, K, i, j;
	double err, *init;
	int c, bad = 0;

	n = 32;
	while ((c = getopt_long(argc, argv, "n:b:th", lopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			n = (uint64_t)splash_num(prog, "--size", optarg, 1, 8192);
			break;
		case 'b':
			bs = (unsigned int)splash_num(prog, "--block", optarg, 1, 64);
			break;
		case 't':
			tuned = 1;
			break;
		case 'h':
			usage(0);
		default:
			if (!awgb_option(prog, c, optarg, &o))
				usage(2);
		}
	}
	if (optind < argc)
		usage(2);
	if (n % bs)
		splash_die(prog, "--size %llu is not a multiple of the block %u",
			   (unsigned long long)n, bs);
	nb = n / bs;

	awgb_open(&b, prog, &o);
	awgb_need(&b, n * n * sizeof(double));
	/* pr x pc = nodes, as square as it gets (pr <= pc). */
	for (pr = 1, i = 1; i * i <= b.nodes; i++)
		if (b.nodes % i == 0)
			pr = (unsigned int)i;
	pc = b.nodes / pr;
	loc = malloc(bs * bs * sizeof(double));
	init = malloc(bs * bs * sizeof(double));
	if (!loc || !init)
		splash_die(prog, "out of memory");

	/* Each node writes its own blocks of A (not timed). */
	for (I = 0; I < nb; I++) {
		for (J = 0; J < nb; J++) {
			if (owner(I, J) != b.node)
				continue;
			for (i = 0; i < bs; i++)
				for (j = 0; j < bs; j++)
					init[i * bs + j] = splash_lu_a(n, I * bs + i, J * bs + j);
			awgb_write(&b, blk(I, J), init, bs * bs * sizeof(double));
		}
	}

	awgb_start(&b);
	for (K = 0; K < nb; K++) {
		if (owner(K, K) == b.node)
			lu0(blk(K, K));
		awgb_barrier(&b);
		for (J = K + 1; J < nb; J++)
			if (owner(K, J) == b.node)
				bdiv_row(blk(K, J), at(blk(K, K)));
		for (I = K + 1; I < nb; I++)
			if (owner(I, K) == b.node)
				bdiv_col(blk(I, K), at(blk(K, K)));
		awgb_barrier(&b);
		for (I = K + 1; I < nb; I++)
			for (J = K + 1; J < nb; J++)
				if (owner(I, J) == b.node)
					bmod(blk(I, J), at(blk(I, K)), at(blk(K, J)));
	}
	awgb_stop(&b);

	if (b.node == 0) {
		if (splash_corrupt())
			at(blk(0, 0))[0] += 1.0;	/* a pointer store */
		err = splash_lu_residual(n, get, NULL);
		bad = !(err < 1e-12);
		printf("RESULT kernel=lu version=awg tuned=%d nodes=%u n=%llu block=%u grid=%ux%u ",
		       tuned, b.nodes, (unsigned long long)n, bs, pr, pc);
		awgb_print(&b);
		printf("residual=%.3e verify=%s\n", err, bad ? "FAIL" : "ok");
		if (bad)
			fprintf(stderr, "%s: FAIL: ||A - LU|| / ||A|| = %g\n", prog, err);
	}
	awgb_barrier(&b);
	awgb_close(&b);
	free(loc);
	free(init);
	return bad;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * lu_mpi - SPLASH-2-style blocked LU with MPI: the same factorisation and
 * 2-D scatter of 16 x 16 blocks as lu_awg, every rank computing its own
 * blocks in local memory.  For each diagonal block K its owner factors it
 * and broadcasts it (MPI_Bcast); the perimeter owners update their blocks
 * and each perimeter block is broadcast from its owner; every rank then
 * updates its interior blocks.  At the end rank 0 gathers all blocks
 * (MPI_Gatherv, timed) and checks ||A - L U||_F / ||A||_F.
 */
#include "mpi_common.h"

static const char *prog = "lu_mpi";

static uint64_t n, nb;
static unsigned int bs = 16, pr, pc;
static double *a;	/* every block, in block order; valid: own + received */

static double *blk(uint64_t I, uint64_t J)
{
	return a + (I * nb + J) * bs * bs;
}

static int owner(uint64_t I, uint64_t J)
{
	return (int)((I % pr) * pc + (J % pc));
}

static void lu0(double *d)
{
	unsigned int i, j, k;

	for (k = 0; k < bs; k++) {
		for (i = k + 1; i < bs; i++) {
			double l = d[i * bs + k] / d[k * bs + k];

			d[i * bs + k] = l;
			for (j = k + 1; j < bs; j++)
				d[i * bs + j] -= l * d[k * bs + j];
		}
	}
}

static void bdiv_row(double *x, const double *d)
{
	unsigned int i, j, k;

	for (k = 0; k < bs; k++)
		for (i = k + 1; i < bs; i++)
			for (j = 0; j < bs; j++)
				x[i * bs + j] -= d[i * bs + k] * x[k * bs + j];
}

static void bdiv_col(double *x, const double *d)
{
	unsigned int i, j, k;

	for (i = 0; i < bs; i++) {
		for (k = 0; k < bs; k++) {
			double v = x[i * bs + k] / d[k * bs + k];

			x[i * bs + k] = v;
			for (j = k + 1; j < bs; j++)
				x[i * bs + j] -= v * d[k * bs + j];
		}
	}
}

static void bmod(double *c, const double *l, const double *u)
{
	unsigned int i, j, k;

	for (i = 0; i < bs; i++)
		for (k = 0; k < bs; k++)
			for (j = 0; j < bs; j++)
				c[i * bs + j] -= l[i * bs + k] * u[k * bs + j];
}

static void bcast_blk(uint64_t I, uint64_t J)
{
	int root = owner(I, J);

	MPI_Bcast(blk(I, J), (int)(bs * bs), MPI_DOUBLE, root, MPI_COMM_WORLD);
	if (root == mb.rank)
		mpib_count((unsigned long long)bs * bs * 8 * (mb.size - 1));
}

static double get(void *ctx, uint64_t i, uint64_t j)
{
	(void)ctx;
	return blk(i / bs, j / bs)[(i % bs) * bs + j % bs];
}

static const char *usage_text =
"Usage: %s [OPTIONS]   (under mpirun -np N)\n"
"SPLASH-2-style blocked LU with MPI (one rank per node).\n"
"  -n, --size N        matrix order, a multiple of the block (default 32)\n"
"  -b, --block B       block order (default 16: 2 KB blocks)\n"
"  -h, --help          this text\n";

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "size", required_argument, NULL, 'n' },
		{ "block", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	uint64_t I, J, K, i, j, mine = 0, k;
	int c, q, bad = 0, *gcnt = NULL, *gdsp = NULL;
	double err = 0, *pack, *all = NULL;

	n = 32;
	while ((c = getopt_long(argc, argv, "n:b:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			n = (uint64_t)splash_num(prog, "--size", optarg, 1, 8192);
			break;
		case 'b':
			bs = (unsigned int)splash_num(prog, "--block", optarg, 1, 64);
			break;
		case 'h':
			mpib_usage(usage_text, prog, 0);
		default:
			mpib_usage(usage_text, prog, 2);
		}
	}
	if (optind < argc)
		mpib_usage(usage_text, prog, 2);
	if (n % bs)
		splash_die(prog, "--size %llu is not a multiple of the block %u",
			   (unsigned long long)n, bs);
	nb = n / bs;

	mpib_init(&argc, &argv);
	for (pr = 1, i = 1; i * i <= (uint64_t)mb.size; i++)
		if (mb.size % i == 0)
			pr = (unsigned int)i;
	pc = (unsigned int)mb.size / pr;
	a = calloc(n * n, sizeof(*a));
	pack = malloc(n * n * sizeof(*pack));
	if (!a || !pack)
		splash_die(prog, "out of memory");
	for (I = 0; I < nb; I++)
		for (J = 0; J < nb; J++)
			if (owner(I, J) == mb.rank)
				for (i = 0; i < bs; i++)
					for (j = 0; j < bs; j++)
						blk(I, J)[i * bs + j] =
							splash_lu_a(n, I * bs + i, J * bs + j);

	mpib_start();
	for (K = 0; K < nb; K++) {
		if (owner(K, K) == mb.rank)
			lu0(blk(K, K));
		bcast_blk(K, K);
		for (J = K + 1; J < nb; J++)
			if (owner(K, J) == mb.rank)
				bdiv_row(blk(K, J), blk(K, K));
		for (I = K + 1; I < nb; I++)
			if (owner(I, K) == mb.rank)
				bdiv_col(blk(I, K), blk(K, K));
		for (J = K + 1; J < nb; J++)
			bcast_blk(K, J);
		for (I = K + 1; I < nb; I++)
			bcast_blk(I, K);
		for (I = K + 1; I < nb; I++)
			for (J = K + 1; J < nb; J++)
				if (owner(I, J) == mb.rank)
					bmod(blk(I, J), blk(I, K), blk(K, J));
	}
	/* Own blocks in block order to rank 0, which puts them back in place. */
	for (I = 0; I < nb; I++)
		for (J = 0; J < nb; J++)
			if (owner(I, J) == mb.rank)
				memcpy(pack + bs * bs * mine++, blk(I, J), bs * bs * sizeof(double));
	if (mb.rank == 0) {
		all = malloc(n * n * sizeof(*all));
		gcnt = calloc(mb.size, sizeof(int));
		gdsp = calloc(mb.size, sizeof(int));
		if (!all || !gcnt || !gdsp)
			splash_die(prog, "out of memory");
		for (I = 0; I < nb; I++)
			for (J = 0; J < nb; J++)
				gcnt[owner(I, J)] += (int)(bs * bs);
		for (q = 1; q < mb.size; q++)
			gdsp[q] = gdsp[q - 1] + gcnt[q - 1];
	}
	MPI_Gatherv(pack, (int)(mine * bs * bs), MPI_DOUBLE, all, gcnt, gdsp, MPI_DOUBLE,
		    0, MPI_COMM_WORLD);
	if (mb.rank)
		mpib_count(mine * bs * bs * 8);
	if (mb.rank == 0) {
		int *seen = calloc(mb.size, sizeof(int));

		if (!seen)
			splash_die(prog, "out of memory");
		for (I = 0; I < nb; I++) {
			for (J = 0; J < nb; J++) {
				q = owner(I, J);
				k = (uint64_t)gdsp[q] + (uint64_t)seen[q]++ * bs * bs;
				memcpy(blk(I, J), all + k, bs * bs * sizeof(double));
			}
		}
		free(seen);
	}
	mpib_stop();

	if (mb.rank == 0) {
		if (splash_corrupt())
			blk(0, 0)[0] += 1.0;
		err = splash_lu_residual(n, get, NULL);
		bad = !(err < 1e-12);
		printf("RESULT kernel=lu version=mpi tuned=0 nodes=%d n=%llu block=%u grid=%ux%u ",
		       mb.size, (unsigned long long)n, bs, pr, pc);
	}
	mpib_print();
	if (mb.rank == 0) {
		printf("residual=%.3e verify=%s\n", err, bad ? "FAIL" : "ok");
		if (bad)
			fprintf(stderr, "%s: FAIL: ||A - LU|| / ||A|| = %g\n", prog, err);
	}
	MPI_Finalize();
	return bad;
}

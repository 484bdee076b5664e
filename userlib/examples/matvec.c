// SPDX-License-Identifier: GPL-2.0
/*
 * matvec - the matrix-vector product of the DLM-MPI paper, Fig. 3: a
 * sequential program translated by hand with dlm_startup(), dlm_alloc()
 * and dlm_shutdown(); the computation itself is unchanged.
 *
 *	matvec [N] [-- DLM options]	e.g. matvec 16384 -- -f memfile
 *	matvec --help
 *
 * N (default 1024) is the matrix order; the paper's 16384 needs 2048 MB +
 * 256 KB of DLM space.  The last line printed, "matvec: N=... checksum=...",
 * is the sum of y, which selftests/libdlm compare against the same loop
 * over malloc() memory.  Build: cc matvec.c -ldlm (or pkg-config dlm).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlm.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: matvec [N] [-- DLM options]\n"
		"  N  the matrix order, 1 to %ld (default 1024)\n"
		"  DLM options: see dlm_startup(3), e.g. -- -f MEMFILE\n",
		1L << 20);
}

int main(int argc, char *argv[])
{
	long n = 1024;
	double checksum = 0;
	char *end;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (dlm_startup(&argc, &argv))	/* says why on stderr */
		return 1;
	if (argc > 1) {
		n = strtol(argv[1], &end, 10);
		if (end == argv[1] || *end)
			n = 0;
	}
	if (argc > 2 || n < 1 || n > 1L << 20) {
		usage(stderr);
		dlm_shutdown();
		return 2;
	}
	{
		const long N = n;
		double (*a)[N];		/* a pointer for 2-D array */
		double *x, *y;		/* pointers for 1-D arrays */
		int i, j;
		double temp;

		a = (double (*)[N])dlm_alloc((size_t)N * N * sizeof(double));
		x = (double *)dlm_alloc(N * sizeof(double));
		y = (double *)dlm_alloc(N * sizeof(double));
		if (!a || !x || !y) {
			fprintf(stderr, "matvec: %s\n", dlm_last_error());
			dlm_shutdown();
			return 1;
		}

		for (i = 0; i < N; i++)		/* Initialize array a */
			for (j = 0; j < N; j++)
				a[i][j] = i;

		for (i = 0; i < N; i++)		/* Initialize array x */
			x[i] = i;
		for (i = 0; i < N; i++) {	/* a[N][N]*x[N]=y[N] */
			temp = 0;
			for (j = 0; j < N; j++)
				temp += a[i][j] * x[j];
			y[i] = temp;
		}

		for (i = 0; i < N; i++)
			checksum += y[i];
		printf("matvec: N=%ld checksum=%.17g\n", n, checksum);
		dlm_free(y);
		dlm_free(x);
		dlm_free(a);
	}
	dlm_shutdown();
	return 0;
}

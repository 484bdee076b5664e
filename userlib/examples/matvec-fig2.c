// SPDX-License-Identifier: GPL-2.0
/*
 * matvec-fig2 - the DLM-MPI paper's Fig. 2 program: a sequential
 * matrix-vector product whose only change is the `dlm` specifier on its
 * static arrays.  The paper needed its DLM translator for this; here it is
 * plain C built with `cc -DN=2000 matvec-fig2.c -ldlm` (see <dlm.h>).  The
 * space comes from the environment: DLM_MEMFILE=memfile (or DLM_LOCAL_MB
 * for local memory only), DLM_VERBOSE=1 for its counters at exit.
 *
 * Two lines are added to the figure so that tests can check the result:
 * the includes and the printf of the sum of y ("matvec: N=... checksum=...",
 * the same line as the Fig. 3 program matvec prints).
 */
#include <stdio.h>
#include <dlm.h>

#ifndef N
#define N 16384 // example: mem 2048MB + 32KB
#endif
dlm double a[N][N], x[N], y[N]; // DLM data declare

int main(int argc, char *argv[])
{
	int i, j;
	double temp, checksum = 0;

	(void)argc;
	(void)argv;
	for (i = 0; i < N; i++) // Initialize array a
		for (j = 0; j < N; j++)
			a[i][j] = i;

	for (i = 0; i < N; i++) // Initialize array x
		x[i] = i;
	for (i = 0; i < N; i++) { // a[N][N]*x[N]=y[N]
		temp = 0;
		for (j = 0; j < N; j++)
			temp += a[i][j] * x[j];
		y[i] = temp;
	}
	for (i = 0; i < N; i++)
		checksum += y[i];
	printf("matvec: N=%d checksum=%.17g\n", N, checksum);
	return 0;
}

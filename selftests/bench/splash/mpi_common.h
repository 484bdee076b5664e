/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpi_common.h - the MPI side of the SPLASH-2-style kernels: one rank per
 * node, the data distributed over the ranks and exchanged by MPI calls;
 * the timed part from a barrier to the gather of the result on rank 0.
 * Each rank counts its communication calls and the bytes it sent
 * (mpi_calls, mpi_bytes in the result line: sums over the ranks).
 */
#ifndef SPLASH_MPI_COMMON_H
#define SPLASH_MPI_COMMON_H

#include <mpi.h>

#include "common.h"

struct mpib {
	int rank, size;
	double t0, c0, seconds, cpu_seconds;
	unsigned long long calls, bytes;	/* this rank's */
};

static struct mpib mb;

static inline void mpib_init(int *argc, char ***argv)
{
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &mb.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &mb.size);
}

/* Count one communication call sending @bytes from this rank. */
static inline void mpib_count(unsigned long long bytes)
{
	mb.calls++;
	mb.bytes += bytes;
}

static inline void mpib_start(void)
{
	MPI_Barrier(MPI_COMM_WORLD);
	mb.calls = mb.bytes = 0;
	mb.t0 = splash_now();
	mb.c0 = splash_cpu();
}

/* After the gather to rank 0. */
static inline void mpib_stop(void)
{
	mb.seconds = splash_now() - mb.t0;
	mb.cpu_seconds = splash_cpu() - mb.c0;
}

/* The MPI part of the result line (every rank calls it; rank 0 prints). */
static inline void mpib_print(void)
{
	unsigned long long mine[2] = { mb.calls, mb.bytes }, sum[2];

	MPI_Reduce(mine, sum, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (mb.rank == 0)
		printf("seconds=%.6f cpu_seconds=%.6f mpi_calls=%llu mpi_bytes=%llu ",
		       mb.seconds, mb.cpu_seconds, sum[0], sum[1]);
}

/*
 * Before MPI_Init (so that --help needs no MPI job): is this the first
 * rank, or no MPI job at all?  Only it prints usage errors.
 */
static inline int mpib_first(void)
{
	const char *r = getenv("OMPI_COMM_WORLD_RANK");

	if (!r)
		r = getenv("PMI_RANK");
	return !r || !strcmp(r, "0");
}

/* A usage message (on the first rank only) and exit before MPI_Init. */
static void __attribute__((noreturn)) mpib_usage(const char *text, const char *prog,
						 int status)
{
	if (status == 0 || mpib_first())
		fprintf(status ? stderr : stdout, text, prog);
	exit(status);
}

#endif /* SPLASH_MPI_COMMON_H */

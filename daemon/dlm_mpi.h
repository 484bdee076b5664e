/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dlm_mpi.h - dlmd as an MPI program (DLM-MPI's SPMD launch): what dlmd.c
 * calls, free of MPI types so that only the mpi_*.c files need mpi.h.
 *
 *   mpirun -np N dlmd -f MEMFILE     rank 0 serves the kernel; ranks
 *                                    1..N-1 are the memory servers of the
 *                                    memfile's lines 2..N, in order.
 *
 * The MPI thread level decides how dlmd's threads use MPI (seed 000,
 * section 3.3):
 *
 *   provided level          protocol  who calls MPI
 *   SERIALIZED, MULTIPLE    as1       the thread that gets the kernel's
 *                                     request posts the transfer itself
 *                                     (one at a time, under a lock); the
 *                                     main thread completes transfers
 *   FUNNELED                as2       the main thread only: requests are
 *                                     handed to it, it posts and completes
 *   SINGLE                  cs        the main thread only, one transfer at
 *                                     a time: the next starts when the
 *                                     previous has completed
 *
 * In as1 and as2 a swap-out and a swap-in are in flight together (the
 * cross protocol of seed 002: MPI_Isend and MPI_Irecv), and transfers to
 * different servers overlap.
 */
#ifndef DLM_DLM_MPI_H
#define DLM_DLM_MPI_H

#include <stddef.h>

#include "transport.h"

enum dlm_mpi_proto {
	DLM_MPI_AUTO,
	DLM_MPI_AS1,
	DLM_MPI_AS2,
	DLM_MPI_CS,
};

/*
 * How a memory server rank waits while a payload moves (--mpi-server-wait):
 * in the MPI library's blocking call, which polls (POLL), or testing a
 * nonblocking one and sleeping between tests (SLEEP), leaving the CPU to
 * rank 0's copy when ranks outnumber cores.  AUTO: SLEEP on a node whose
 * ranks of this job are at least as many as its online CPUs (rank 0's
 * node runs the program too), POLL where every rank can have a core.
 */
enum dlm_mpi_wait {
	DLM_MPI_WAIT_AUTO,
	DLM_MPI_WAIT_POLL,
	DLM_MPI_WAIT_SLEEP,
};

/* Thread levels, in MPI's order; DLM_MPI_LEVEL_DEFAULT asks for MULTIPLE. */
enum dlm_mpi_level {
	DLM_MPI_SINGLE,
	DLM_MPI_FUNNELED,
	DLM_MPI_SERIALIZED,
	DLM_MPI_MULTIPLE,
	DLM_MPI_LEVEL_DEFAULT,
};

struct dlm_mpi_info {
	int rank, size;
	enum dlm_mpi_level requested, provided;
	enum dlm_mpi_proto proto;	/* in force */
	enum dlm_mpi_wait server_wait;	/* in force (set by dlmd) */
	int node_ranks;			/* this job's ranks on this node */
	int node_cpus;			/* this node's online CPUs */
	char library[128];		/* MPI_Get_library_version, 1st line */
};

/* "as1" etc.; -1 if unknown. */
int dlm_mpi_parse_proto(const char *s);
int dlm_mpi_parse_level(const char *s);
const char *dlm_mpi_proto_name(enum dlm_mpi_proto p);
const char *dlm_mpi_level_name(enum dlm_mpi_level l);
int dlm_mpi_parse_wait(const char *s);
const char *dlm_mpi_wait_name(enum dlm_mpi_wait w);
/* The wait in force for W on a node with NODE_RANKS ranks, NODE_CPUS CPUs. */
enum dlm_mpi_wait dlm_mpi_resolve_wait(enum dlm_mpi_wait w, int node_ranks,
				       int node_cpus);

/*
 * MPI_Init_thread and the protocol choice.  0, or -1 with ERR naming the
 * fix (MPI is then finalized or never initialized).  Call from the main
 * thread, before any other thread exists.
 */
int dlm_mpi_init(int *argc, char ***argv, enum dlm_mpi_proto proto,
		 enum dlm_mpi_level level, struct dlm_mpi_info *info,
		 char *err, size_t errlen);

/* Ranks >= 1: serve as a memory server until rank 0 says BYE, then
 * MPI_Finalize.  Returns the exit status. */
int dlm_mpi_server_main(const struct dlm_mpi_info *info);

/*
 * Rank 0, main thread: complete (and in as2/cs post) transfers until
 * dlm_mpi_progress_stop(), which any thread may call.
 */
void dlm_mpi_progress(void);
void dlm_mpi_progress_stop(void);

/* Rank 0, main thread, transports closed: BYE to the servers, finalize. */
void dlm_mpi_finish(void);

/*
 * Kills the whole job now, WHY logged (a transfer outlived the I/O timeout,
 * a memory server rank cannot store a WRITE).
 */
void dlm_mpi_abort(const char *why);

/* Memory server I of the memfile is rank I + 1. */
extern const struct transport_ops transport_mpi;

#endif /* DLM_DLM_MPI_H */

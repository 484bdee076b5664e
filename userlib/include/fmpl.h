/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fmpl.h - libfmpl, the FMPL message-passing library over /dev/fmpl.
 *
 * The names and argument orders are the FMPL paper's (seed 004, section 3),
 * in C: every call takes its return code pointer `ier` last (it may be NULL)
 * and also returns the same code.  FMPL_SUCCESS is 0; on failure the code is
 * one of FMPL_ERR_* and errno holds the kernel's errno.  fmpl_strerror()
 * turns a code into text.
 *
 * A program is started as N processes that agree on rank, size and a key,
 * taken from the environment at fmpl_init():
 *   FMPL_RANK, FMPL_SIZE, FMPL_KEY     (set by fmplrun -np N PROGRAM)
 *   OMPI_COMM_WORLD_RANK/_SIZE         (mpirun of Open MPI)
 *   PMI_RANK, PMI_SIZE                 (mpirun of MPICH / hydra)
 * Without FMPL_KEY the key is derived from the launcher (the parent pid,
 * which all ranks of one node share under fmplrun and mpirun).
 */
#ifndef FMPL_H
#define FMPL_H

#include <stddef.h>
#include <linux/fmpl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes (ier). */
#define FMPL_SUCCESS		0
#define FMPL_ERR_ARG		1	/* an argument is out of range (EINVAL) */
#define FMPL_ERR_BUSY		2	/* index in use, comm_free too early (EBUSY) */
#define FMPL_ERR_PEER		3	/* the peer left the world (ECONNRESET) */
#define FMPL_ERR_TRUNCATE	4	/* message larger than the buffer (EMSGSIZE) */
#define FMPL_ERR_NODEV		5	/* no /dev/fmpl or old kernel (ENOENT, EPROTONOSUPPORT) */
#define FMPL_ERR_INIT		6	/* not initialised, or twice */
#define FMPL_ERR_PERM		7	/* may not join this world (EACCES, EPERM) */
#define FMPL_ERR_TIMEOUT	8	/* the other ranks did not join (ETIMEDOUT) */
#define FMPL_ERR_NOMEM		9	/* ENOMEM, or the pinning limit */
#define FMPL_ERR_NOENT		10	/* nothing to wait for (ENOENT) */
#define FMPL_ERR_OTHER		11	/* any other errno */

/**
 * struct fmpl_status - what a receive got.
 * @source: the sender's rank in the communicator.
 * @mai: the matching index it was sent with.
 * @size: bytes received.
 */
typedef struct fmpl_status {
	int source;
	int mai;
	size_t size;
} fmpl_status;

/**
 * struct fmpl_op - a reduction.
 * @elem_size: bytes of one element.
 * @fn: combines n elements of in into inout (inout[i] = inout[i] op
 *	in[i]).
 *
 * The predefined ones: fmpl_Xsum, fmpl_Xmax, fmpl_Xmin with X = i (int),
 * s (float), d (double), c (float complex), z (double complex).  max and
 * min of complex numbers compare their moduli (as BLACS does).
 */
typedef struct fmpl_op {
	size_t elem_size;
	void (*fn)(void *inout, const void *in, size_t n);
} fmpl_op;

extern const fmpl_op fmpl_isum, fmpl_ssum, fmpl_dsum, fmpl_csum, fmpl_zsum;
extern const fmpl_op fmpl_imax, fmpl_smax, fmpl_dmax, fmpl_cmax, fmpl_zmax;
extern const fmpl_op fmpl_imin, fmpl_smin, fmpl_dmin, fmpl_cmin, fmpl_zmin;

/*
 * Initialisation.  @ma and @fa are the matching and flag areas, of
 * fmpl_ma_bytes(size, count) and fmpl_fa_bytes(size, count) bytes, 8-byte
 * aligned, in the caller's memory; pass NULL for both and libfmpl allocates
 * them.  @count: matching indices per peer.
 *
 * The program may use matching indices 0..count-1.  libfmpl asks the kernel
 * for count + FMPL_LIB_RESERVED_MAI indices and keeps the top ones for the
 * messages of its tree collectives; fmpl_ma_bytes() and fmpl_fa_bytes()
 * include them.
 */
#define FMPL_LIB_RESERVED_MAI	4
size_t fmpl_ma_bytes(int size, int count);
size_t fmpl_fa_bytes(int size, int count);
int fmpl_init(void *ma, void *fa, int count, int *ier);
int fmpl_finalize(int *ier);
int fmpl_comm_rank(int comm, int *rank, int *ier);
int fmpl_comm_size(int comm, int *size, int *ier);
double fmpl_wtime(void);
const char *fmpl_strerror(int code);

/* Blocking point to point. */
int fmpl_send(const void *buf, size_t size, int dst, int mai, int comm, int *ier);
int fmpl_recv(void *buf, size_t size, int src, int mai, int comm, int *ier);
int fmpl_recv_status(void *buf, size_t size, int src, int mai, int comm,
		     fmpl_status *st, int *ier);

/*
 * Buffered mode: the spool and the timeout into it (ms; FMPL_TIMEOUT_NONE).
 * The spool stays pinned and counts against RLIMIT_MEMLOCK (ulimit -l):
 * past it, FMPL_ERR_NOMEM with errno ENOMEM.
 */
int fmpl_sendbuf_set(void *buf, size_t size, unsigned int ipara, int *ier);
int fmpl_sendbuf_check(int *nsend, int *nspool, int *ier);

/* Non-blocking point to point. */
int fmpl_isend(const void *buf, size_t size, int dst, int mai, int comm, int *ier);
int fmpl_irecv(void *buf, size_t size, int src, int mai, int comm, int *ier);
int fmpl_isend_wait(int dst, int mai, int comm, int *ier);
int fmpl_irecv_wait(int src, int mai, int comm, int *ier);
int fmpl_irecv_wait_status(int src, int mai, int comm, fmpl_status *st, int *ier);
/* 1 if the receive has completed (reads the flag area: no system call). */
int fmpl_irecv_test(int src, int mai, int comm);

/* The any-source domain (receiver-side matching, separate from the above). */
int fmpl_send_any(const void *buf, size_t size, int dst, int mai, int comm, int *ier);
int fmpl_recv_any(void *buf, size_t size, int mai, int comm, int *ier);
int fmpl_recv_any_status(void *buf, size_t size, int mai, int comm,
			 fmpl_status *st, int *ier);

/*
 * Communicators and collectives.  comm_create: over FMPL_COMM_WORLD; a
 * negative key gives (int)FMPL_COMM_NULL; at most 63 live at once.
 * comm_free: collective over *comm, sets it to (int)FMPL_COMM_NULL; the
 * caller's isend/irecv on it must be waited for first (FMPL_ERR_BUSY).
 * reduce/allreduce: @count elements of func->elem_size bytes; @work has
 * room for @count elements (NULL: libfmpl allocates it); on ranks other
 * than @root, reduce leaves a partial result in @buf.
 */
int fmpl_comm_create(int *comm, int key, int *ier);
int fmpl_comm_free(int *comm, int *ier);
int fmpl_barrier(int comm, int *ier);
int fmpl_bcast(void *buf, size_t size, int root, int comm, int *ier);
int fmpl_reduce(void *buf, size_t count, const fmpl_op *func, int root,
		int comm, void *work, int *ier);
int fmpl_allreduce(void *buf, size_t count, const fmpl_op *func, int comm,
		   void *work, int *ier);

/*
 * Which implementation the collectives use: FMPL_COLL_AUTO (default: by
 * size and ranks, see libfmpl's README), FMPL_COLL_NATIVE (the kernel's
 * barrier and broadcast), FMPL_COLL_TREE (binary tree over point to
 * point).  Also set by the environment variable FMPL_COLL=auto|native|tree.
 */
#define FMPL_COLL_AUTO		0
#define FMPL_COLL_NATIVE	1
#define FMPL_COLL_TREE		2
int fmpl_coll_mode(int mode);

#ifdef __cplusplus
}
#endif
#endif /* FMPL_H */

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * errors.c - the kernel's errno to the paper's return code (ier), and
 * fmpl_strerror.
 */
#include <errno.h>

#include "internal.h"

/* The errno of an operation on a joined world. */
int fmpllib_ier(int err)
{
	switch (err) {
	case 0:
		return FMPL_SUCCESS;
	case EINVAL:
	case EFAULT:
	case ERANGE:
	case EOVERFLOW:
		return FMPL_ERR_ARG;
	case EBUSY:
		return FMPL_ERR_BUSY;
	case ECONNRESET:
	case EPIPE:
		return FMPL_ERR_PEER;
	case EMSGSIZE:
		return FMPL_ERR_TRUNCATE;
	case ENODEV:
	case ENXIO:
	case EPROTONOSUPPORT:
	case EOPNOTSUPP:
	case ENOTTY:
		return FMPL_ERR_NODEV;
	case EACCES:
	case EPERM:
		return FMPL_ERR_PERM;
	case ETIMEDOUT:
		return FMPL_ERR_TIMEOUT;
	case ENOMEM:
	case ENOBUFS:
	case ENOSPC:
		return FMPL_ERR_NOMEM;
	case ENOENT:
		return FMPL_ERR_NOENT;
	case ENOTCONN:		/* the file has not joined a world */
		return FMPL_ERR_INIT;
	default:
		return FMPL_ERR_OTHER;
	}
}

/* The errno of opening /dev/fmpl, the handshake and joining the world. */
int fmpllib_ier_init(int err)
{
	switch (err) {
	case ENOENT:
		return FMPL_ERR_NODEV;
	case EBUSY:
	case EADDRINUSE:
	case EEXIST:
		return FMPL_ERR_INIT;
	default:
		return fmpllib_ier(err);
	}
}

int fmpllib_ret(int *ier, int code, int err)
{
	if (ier)
		*ier = code;
	if (err)
		errno = err;
	return code;
}

int fmpllib_fail(int *ier, int err)
{
	return fmpllib_ret(ier, fmpllib_ier(err), err);
}

FMPLLIB_PUBLIC const char *fmpl_strerror(int code)
{
	switch (code) {
	case FMPL_SUCCESS:
		return "success";
	case FMPL_ERR_ARG:
		return "an argument is out of range (rank, matching index, communicator, size or buffer address)";
	case FMPL_ERR_BUSY:
		return "the matching index is in use: one receive and one send per pair of processes and index at a time";
	case FMPL_ERR_PEER:
		return "the peer left the world (it exited or was killed)";
	case FMPL_ERR_TRUNCATE:
		return "the message was larger than the receive buffer (which holds its first bytes)";
	case FMPL_ERR_NODEV:
		return "no usable /dev/fmpl: load dlmem.ko built with CONFIG_DLMEM_FMPL=y (modprobe dlmem), or the kernel is too old for this libfmpl";
	case FMPL_ERR_INIT:
		return "libfmpl is not initialised (call fmpl_init), was initialised twice, or the environment gives no rank/size/key: start the program with fmplrun -np N or mpirun";
	case FMPL_ERR_PERM:
		return "may not join this world: it belongs to another user (the first rank's FMPL_MODE decides: user, group or any)";
	case FMPL_ERR_TIMEOUT:
		return "the other ranks did not all join in time: start all of them with the same FMPL_KEY and FMPL_SIZE (or raise FMPL_JOIN_TIMEOUT_MS)";
	case FMPL_ERR_NOMEM:
		return "out of memory, or the kernel could not pin the buffers (RLIMIT_MEMLOCK, fmpl msg_max_mb)";
	case FMPL_ERR_NOENT:
		return "nothing to wait for: no such non-blocking operation was posted";
	case FMPL_ERR_OTHER:
		return "unexpected error (see errno)";
	default:
		return "unknown FMPL return code";
	}
}

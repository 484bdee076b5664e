// SPDX-License-Identifier: GPL-2.0
/*
 * errors.c - errno plus a per-thread message that names the fix.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static _Thread_local char dlmlib_msg[1024];

int dlmlib_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dlmlib_msg, sizeof(dlmlib_msg), fmt, ap);
	va_end(ap);
	errno = err;
	return -1;
}

DLM_PUBLIC const char *dlm_last_error(void)
{
	return dlmlib_msg[0] ? dlmlib_msg : "no error";
}

DLM_PUBLIC const char *dlm_strerror(int errnum)
{
	switch (errnum) {
	case 0:
		return "no error";
	case ENOMEM:
		return "out of DLM space (dlm_alloc: free blocks or enlarge the memfile), or a local size above the kernel's limit (dlm_startup: lower it or raise dlmem's max_local_mb)";
	case ENXIO:
		return "no DLM space: dlm_startup() has not succeeded";
	case EBUSY:
		return "dlm_startup() was already called: call dlm_shutdown() first";
	case EINVAL:
		return "bad DLM option, environment variable or memfile line (see dlm_last_error())";
	case ENOENT:
		return "file not found: the memfile, or /dev/dlm (load the module: modprobe dlmem)";
	case EACCES:
	case EPERM:
		return "permission denied on the memfile or /dev/dlm";
	case EOPNOTSUPP:
		return "the memfile names memory servers but this kernel's dlmem.ko has no remote backing: use a dlmem.ko with remote support, or a memfile with only the local line";
	case ENOTCONN:
		return "no dlmd is registered with the kernel: start dlmd -f MEMFILE first";
	case ENOSPC:
		return "the memory servers cannot hold their share of the space: add servers or lower the sizes in the memfile";
	case EFBIG:
		return "the space is larger than the kernel allows (dlm_info.total_size_max)";
	case EPROTONOSUPPORT:
		return "libdlm and dlmem.ko speak different DLM API versions: rebuild libdlm against the running module's <linux/dlmem.h>";
	case EMFILE:
		return "too many DLM spaces or open files";
	case EDQUOT:
		return "this user is at a per-user DLM limit (dlmem's max_user_spaces, max_user_mb, max_user_local_mb): close other DLM programs or ask the administrator";
	default:
		return "unexpected error (see dlm_last_error() and strerror())";
	}
}

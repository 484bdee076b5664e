/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * dlmem_nl.h - the generic netlink channel between dlmem.ko and dlmd.
 *
 * Family DLM_GENL_NAME ("dlm"), version DLM_GENL_VERSION.  Only small
 * descriptors travel here; page contents never do.  They move through the
 * frame pool: the registered daemon mmap()s /dev/dlm at offset 0 (the pool
 * window, DLM_POOL_OFFSET) and the kernel names frames by their byte
 * offset in the pool, so a transport receives a DLM page straight into the
 * frames that get mapped into the program, and sends a victim straight
 * from them.
 *
 * Conversation:
 *
 *   daemon -> kernel  DLM_NL_CMD_REGISTER {POOL_SIZE wanted}
 *                     reply: {VERSION, POOL_SIZE granted, CPU page size}
 *   kernel -> daemon  DLM_NL_CMD_REQUEST  {REQ_ID, OP, SPACE, DPN,
 *                                          POOL_OFF, LEN [, PAGE_SIZE,
 *                                          TOTAL_SIZE for SPACE_NEW]}
 *   daemon -> kernel  DLM_NL_CMD_COMPLETE {REQ_ID, STATUS [, FLAGS]}
 *   daemon -> kernel  DLM_NL_CMD_UNREGISTER
 *
 * POOL_SIZE granted is the size to map at DLM_POOL_OFFSET: the pool asked
 * for (or the one still in use by spaces of an earlier daemon) and one CPU
 * page more, the witness.  No request names the witness; map it, and
 * register it for RDMA, with the rest of the pool: the kernel reads on it
 * the references the daemon holds on every frame, and takes any frame
 * holding more for held by another kernel user, which is then not reused.
 * So a request's frames must carry no other reference of the daemon's
 * once it is completed: send a STORE's frames by copy, or wait until the
 * socket or device has let them go (a page lent to a socket with
 * vmsplice() can stay referenced long after the peer's reply).
 *
 * One daemon is registered at a time (REGISTER by another socket: EBUSY).
 * Every command needs CAP_SYS_ADMIN.  The daemon is gone when it
 * unregisters or its socket closes (it died): requests in flight fail and
 * the programs that waited on them get SIGBUS.  A COMPLETE that names no
 * request in flight, comes from another socket, or carries a STATUS that is
 * neither 0 nor a negative errno is refused with EINVAL or ENOENT and
 * changes nothing.
 */
#ifndef _UAPI_LINUX_DLMEM_NL_H
#define _UAPI_LINUX_DLMEM_NL_H

#include <linux/const.h>

#define DLM_GENL_NAME		"dlm"
#define DLM_GENL_VERSION	1

/* mmap() offset of the frame pool on /dev/dlm (daemon only). */
#define DLM_POOL_OFFSET		0

enum dlm_nl_cmd {
	DLM_NL_CMD_UNSPEC,
	DLM_NL_CMD_REGISTER,	/* daemon -> kernel, replied to */
	DLM_NL_CMD_UNREGISTER,	/* daemon -> kernel */
	DLM_NL_CMD_REQUEST,	/* kernel -> daemon */
	DLM_NL_CMD_COMPLETE,	/* daemon -> kernel */
	__DLM_NL_CMD_MAX,
};

#define DLM_NL_CMD_MAX (__DLM_NL_CMD_MAX - 1)

enum dlm_nl_attr {
	DLM_NL_A_UNSPEC,
	DLM_NL_A_VERSION,	/* u32: DLM_GENL_VERSION */
	DLM_NL_A_POOL_SIZE,	/* u64: bytes of frame pool */
	DLM_NL_A_REQ_ID,	/* u64: request id, echoed by COMPLETE */
	DLM_NL_A_OP,		/* u32: enum dlm_nl_op */
	DLM_NL_A_SPACE,		/* u32: DLM space id */
	DLM_NL_A_DPN,		/* u64: DLM page number in the space */
	DLM_NL_A_POOL_OFF,	/* u64: byte offset of the frames in the pool */
	DLM_NL_A_LEN,		/* u32: bytes to move (the DLM page size) */
	DLM_NL_A_STATUS,	/* s32: 0 or -errno */
	DLM_NL_A_PAGE_SIZE,	/* u64: DLM page size (SPACE_NEW) */
	DLM_NL_A_TOTAL_SIZE,	/* u64: bytes in the space (SPACE_NEW) */
	DLM_NL_A_CPU_PAGE_SIZE,	/* u32: the kernel's CPU page size */
	DLM_NL_A_PAD,
	DLM_NL_A_BUDGET,	/* u64: the space's local budget (SPACE_NEW) */
	DLM_NL_A_FLAGS,		/* u32: DLM_NL_F_* (COMPLETE), optional */
	__DLM_NL_A_MAX,
};

#define DLM_NL_A_MAX (__DLM_NL_A_MAX - 1)

/*
 * DLM_NL_A_FLAGS of a COMPLETE.  Unknown bits are refused with EINVAL.
 * @DLM_NL_F_KEPT: (successful FETCH only, ignored otherwise) the daemon
 *	kept the remote copy of the page it just fetched.  If the program
 *	does not write the page, the kernel evicts it with DLM_NL_OP_DROP
 *	instead of storing it again.
 */
#define DLM_NL_F_KEPT		_BITUL(0)
#define DLM_NL_F_ALL		DLM_NL_F_KEPT

/**
 * enum dlm_nl_op - what a DLM_NL_CMD_REQUEST asks.
 * @DLM_NL_OP_SPACE_NEW: a remote-backed space of TOTAL_SIZE bytes in DLM
 *	pages of PAGE_SIZE, BUDGET bytes of which may be local, is being set
 *	up: reserve memory-server capacity for TOTAL_SIZE - BUDGET bytes (at
 *	most that much is remote at once).  STATUS -ENOSPC when the servers
 *	cannot hold it; the kernel then fails DLM_IOC_SETUP with ENOSPC.
 * @DLM_NL_OP_SPACE_DEL: the space is gone: release its capacity.  Completed
 *	like any request; the kernel does not wait for it.
 * @DLM_NL_OP_FETCH: read DLM page DPN of SPACE from its memory server into
 *	the pool at POOL_OFF (LEN bytes).  The kernel fetches only pages it
 *	stored; afterwards the daemon may release the remote copy (the kernel
 *	stores the page again before it next evicts it), or keep it and say
 *	so with DLM_NL_F_KEPT in the COMPLETE.  A page the daemon
 *	does not hold, or whose server died, completes with -EIO: the program
 *	gets SIGBUS on that page only.
 * @DLM_NL_OP_STORE: write LEN bytes at POOL_OFF to the memory server as DLM
 *	page DPN of SPACE.  The frames stay untouched until COMPLETE.
 * @DLM_NL_OP_DROP: DLM page DPN of SPACE, fetched with DLM_NL_F_KEPT, was
 *	not written since: the kernel evicts it without moving data if the
 *	kept copy is still current.  STATUS 0: the daemon holds it (the page
 *	is stored again, as after a STORE); any error, e.g. -ESTALE when the
 *	copy was released or its server died: the kernel STOREs the page.
 *	POOL_OFF and LEN name the frames, which stay untouched until COMPLETE.
 * @DLM_NL_OP_READ: block spaces (SPACE_NEW with BUDGET 0, for /dev/dlmbN):
 *	read LEN bytes, whole DLM pages from DPN on, into the pool at
 *	POOL_OFF.  The remote copies stay.  Pages never written, or
 *	discarded, read as zeroes.
 * @DLM_NL_OP_WRITE: block spaces: write LEN bytes at POOL_OFF as the DLM
 *	pages from DPN on.  COMPLETE once the memory servers hold them.
 * @DLM_NL_OP_DISCARD: block spaces: forget the DLM pages of LEN bytes from
 *	DPN on (they read as zeroes); POOL_OFF is not used.
 */
enum dlm_nl_op {
	DLM_NL_OP_SPACE_NEW = 1,
	DLM_NL_OP_SPACE_DEL = 2,
	DLM_NL_OP_FETCH = 3,
	DLM_NL_OP_STORE = 4,
	DLM_NL_OP_DROP = 5,
	DLM_NL_OP_READ = 6,
	DLM_NL_OP_WRITE = 7,
	DLM_NL_OP_DISCARD = 8,
};

#endif /* _UAPI_LINUX_DLMEM_NL_H */

/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * fmpl.h - user-space API of /dev/fmpl, FMPL-style zero-copy messaging
 * between the processes of one machine (Tanaka et al., "FMPL", IPSJ 2001:
 * seed 004 of the DLM project).
 *
 * Processes that open /dev/fmpl and pass the same key form a *world* of
 * `size` ranks.  Each process registers, once, a *matching area* and a
 * *flag area* in its own memory.  A receive writes its header {buffer,
 * size} into the SENDER's matching area (sender-side matching); a send
 * finds it there and the kernel copies the data once, from the sender's
 * pages straight into the receiver's pages, then sets the receiver's
 * completion flag.  A matching index (`mai`) plays the part of a tag; it
 * is not a queue: one pair of processes may have at most one receive and
 * one send outstanding per index (EBUSY otherwise).
 *
 * Protocol, in this order, on one open file of /dev/fmpl:
 *
 *   1. FMPL_IOC_API         handshake: ABI version and feature negotiation.
 *   2. FMPL_IOC_INIT        join the world, register the two areas.  Waits
 *                           until every rank has joined (join_timeout_ms).
 *   3. FMPL_IOC_SEND / _RECV / _WAIT, FMPL_IOC_SENDBUF_SET / _CHECK,
 *      FMPL_IOC_BARRIER, FMPL_IOC_BCAST, FMPL_IOC_COMM_CREATE,
 *      FMPL_IOC_COMM_INFO, FMPL_IOC_COMM_FREE; with fast_count
 *      (FMPL_FEATURE_FAST): mmap() of the fast area, FMPL_IOC_FAST_WAIT,
 *      FMPL_IOC_FAST_WAKE.
 *
 * FMPL_IOC_GET_INFO may be called at any time.  Other calls fail with
 * EPERM before the handshake and ENOTCONN before FMPL_IOC_INIT; an unknown
 * request (or one built with another structure size) with ENOTTY; a bad
 * field with EINVAL; a buffer the caller cannot access with EFAULT; an
 * area, flag area or spool that would take the pages the caller has pinned
 * for good past its RLIMIT_MEMLOCK (without CAP_IPC_LOCK) with ENOMEM.  A
 * blocked call can be ended by a fatal signal only (the file is then
 * released, which leaves the world).  Every structure is
 * fixed-size with explicit padding; reserved fields must be zero on input
 * and are zero on output.  Ranks in p2p calls are ranks of `comm`;
 * matching indices are per pair of processes and shared by all
 * communicators of the pair.  Closing the file (or the process dying)
 * leaves the world: every operation of a peer that involves that rank
 * then fails with ECONNRESET, and so does every collective of the world.
 */
#ifndef _UAPI_LINUX_FMPL_H
#define _UAPI_LINUX_FMPL_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#define FMPL_API_VERSION	1

/* Features negotiated by FMPL_IOC_API (bit set = supported / requested). */
#define FMPL_FEATURE_P2P	_BITULL(0)	/* SEND, RECV, WAIT, TAG_ANY */
#define FMPL_FEATURE_SPOOL	_BITULL(1)	/* SENDBUF_SET, SENDBUF_CHECK */
#define FMPL_FEATURE_ANY_SOURCE	_BITULL(2)	/* FMPL_XFER_ANY_SOURCE */
#define FMPL_FEATURE_COLL	_BITULL(3)	/* BARRIER, BCAST, COMM_CREATE */
#define FMPL_FEATURE_FAST	_BITULL(4)	/* fast_count, mmap, FAST_WAIT/WAKE */
#define FMPL_FEATURE_COMM_FREE	_BITULL(5)	/* COMM_FREE */

/**
 * struct fmpl_api - FMPL_IOC_API argument.
 * @api: in: FMPL_API_VERSION the caller was built for; out: the kernel's.
 * @reserved: must be zero.
 * @features: in: features the caller requires (unknown bits: EINVAL,
 *	known but unsupported: EOPNOTSUPP); out: every supported feature.
 */
struct fmpl_api {
	__u32 api;
	__u32 reserved;
	__u64 features;
};

/**
 * struct fmpl_info - FMPL_IOC_GET_INFO result (output only).
 * @api: FMPL_API_VERSION of the kernel.
 * @ranks_max: largest world size.
 * @features: every feature this kernel supports.
 * @count_max: largest fmpl_init.count (matching indices per peer).
 * @inline_max: messages up to this size are carried in the kernel's
 *	request itself when the receive is not posted yet (no pinning).
 * @msg_max: largest message in bytes (module parameter msg_max_mb).
 * @reserved: zero.
 */
struct fmpl_info {
	__u32 api;
	__u32 ranks_max;
	__u64 features;
	__u32 count_max;
	__u32 inline_max;
	__u64 msg_max;
	__u64 reserved[4];
};

/*
 * The matching area: an array of (size x (count + 1)) headers, indexed
 * [peer world rank][mai]; index `count` of each peer is the FMPL_TAG_ANY
 * slot.  The kernel writes a header there when the peer posts a receive
 * from this process, and clears state when the send is matched.  It is
 * a mirror for the owner to read (a send can poll it before entering the
 * kernel); the kernel never reads it back, so corrupting it harms only the
 * owner's view.
 */
#define FMPL_HDR_EMPTY		0	/* no receive posted by that peer */
#define FMPL_HDR_POSTED		1	/* a receive is waiting for our send */

/**
 * struct fmpl_header - one matching-area slot (written by the kernel).
 * @state: FMPL_HDR_EMPTY or FMPL_HDR_POSTED (written last, release order).
 * @seq: incremented for every receive posted into this slot.
 * @buf: the receiver's buffer address (in the receiver's address space).
 * @size: the receiver's buffer size in bytes.
 * @reserved: zero.
 */
struct fmpl_header {
	__u32 state;
	__u32 seq;
	__u64 buf;
	__u64 size;
	__u64 reserved;
};

/*
 * The flag area: an array of (size x (count + 1)) receive-completion flags
 * of the owner's receives, indexed [source world rank][mai] (FMPL_TAG_ANY
 * receives use index `count`).  The kernel sets state to FMPL_FLAG_POSTED
 * when the receive is posted and to FMPL_FLAG_DONE or FMPL_FLAG_ERROR
 * (written last, release order) when it completes, so a program can wait
 * for a non-blocking receive by reading memory, without a system call.
 */
#define FMPL_FLAG_IDLE		0
#define FMPL_FLAG_POSTED	1
#define FMPL_FLAG_DONE		2
#define FMPL_FLAG_ERROR		3

/**
 * struct fmpl_flag - one receive-completion flag (written by the kernel).
 * @state: FMPL_FLAG_*.
 * @error: 0, or a positive errno when state is FMPL_FLAG_ERROR (EMSGSIZE:
 *	the message was larger than the buffer, which holds its first
 *	@size bytes; ECONNRESET: the sender left).
 * @mai: the matching index the message was sent with.
 * @seq: the header sequence number of the receive.
 * @size: bytes received.
 * @reserved: zero.
 */
struct fmpl_flag {
	__u32 state;
	__u32 error;
	__u32 mai;
	__u32 seq;
	__u64 size;
	__u64 reserved;
};

/* fmpl_init.mode: who may join a world created by this process. */
#define FMPL_MODE_USER		0	/* same effective uid only (default) */
#define FMPL_MODE_GROUP		1	/* also processes of the creator's gid */
#define FMPL_MODE_ANY		2	/* any process that knows the key */

/**
 * struct fmpl_init - FMPL_IOC_INIT argument: join a world, register areas.
 * @key: names the world; every rank passes the same non-zero key.
 * @size: ranks in the world (1..fmpl_info.ranks_max), the same everywhere.
 * @rank: this process's rank, 0..size-1, each taken once (EADDRINUSE).
 * @mode: FMPL_MODE_*; only the creator's (the first joiner's) counts.
 * @count: matching indices per peer (1..fmpl_info.count_max), the same on
 *	every rank (EEXIST otherwise).
 * @join_timeout_ms: time to wait for the other ranks in ms (0: 30000);
 *	ETIMEDOUT when they do not all come, and the world is left.
 * @fast_count: 0, or the number of *fast indices* (1..FMPL_FAST_COUNT_MAX,
 *	the same on every rank, EEXIST otherwise): the world then has a fast
 *	area (below) that each rank may mmap(); EINVAL if that area would be
 *	larger than 8 MiB.
 * @ma: address of the matching area, 8-byte aligned,
 *	FMPL_AREA_BYTES(size, count, struct fmpl_header) bytes, writable.
 * @fa: address of the flag area, same rules with struct fmpl_flag.
 * @reserved: must be zero.
 */
struct fmpl_init {
	__u64 key;
	__u32 size;
	__u32 rank;
	__u32 mode;
	__u32 count;
	__u32 join_timeout_ms;
	__u32 fast_count;
	__u64 ma;
	__u64 fa;
	__u64 reserved[4];
};

#define FMPL_AREA_BYTES(size, count, type) \
	((__u64)(size) * ((count) + 1) * sizeof(type))

/*
 * The fast area (FMPL_FEATURE_FAST): an XPMEM-style attached mapping that
 * lets small messages go from one process to another with no system call.
 * It is shared by the ranks of a world and mapped with
 * mmap(NULL, fmpl_fast_bytes(size, fast_count), PROT_READ | PROT_WRITE,
 * MAP_SHARED, fd, 0) after FMPL_IOC_INIT.  It starts with
 * FMPL_FAST_HDR_BYTES of header, whose first `size` __u32 words are the
 * ranks' departure words (the kernel sets word r to 1 when rank r leaves),
 * followed by the slots [sender][receiver][index < fast_count].  The
 * protocol on a slot (libfmpl's, documented in Documentation/fmpl.rst) is
 * the processes' own: the kernel only initialises the area to zero, writes
 * the departure words, and sleeps and wakes processes on request
 * (FMPL_IOC_FAST_WAIT, FMPL_IOC_FAST_WAKE).  Members of a world can write
 * each other's slots, nothing else.
 */
#define FMPL_FAST_COUNT_MAX	64
#define FMPL_FAST_DATA_MAX	96
#define FMPL_FAST_HDR_BYTES	256

/**
 * struct fmpl_fast_slot - one sender-to-receiver slot of the fast area.
 * @sent: messages the sender has put in the slot (the sender writes it).
 * @taken: messages the receiver has taken out (the receiver writes it).
 * @size: the size of the message in the slot.
 * @recv_sleeps: the receiver sleeps in FMPL_IOC_FAST_WAIT on @sent.
 * @send_sleeps: the sender sleeps in FMPL_IOC_FAST_WAIT on @taken.
 * @reserved: zero.
 * @data: the message.
 */
struct fmpl_fast_slot {
	__u32 sent;
	__u32 taken;
	__u32 size;
	__u32 recv_sleeps;
	__u32 send_sleeps;
	__u32 reserved[3];
	__u8 data[FMPL_FAST_DATA_MAX];
};

/* Bytes of the fast area of a world of @size ranks and @fast_count indices. */
static inline __u64 fmpl_fast_bytes(__u32 size, __u32 fast_count)
{
	return FMPL_FAST_HDR_BYTES + (__u64)size * size * fast_count *
	       sizeof(struct fmpl_fast_slot);
}

/**
 * struct fmpl_fast_wait - FMPL_IOC_FAST_WAIT argument: sleep while the
 * __u32 at @offset of the fast area still holds @value, rank @peer of the
 * world has not left, and no fatal signal comes; at most @timeout_ms
 * (0: no limit).  Returns 0 (the word changed, or it never held @value),
 * ECONNRESET (@peer left), ETIMEDOUT.
 * @offset: byte offset of the word, 4-byte aligned, inside the area.
 * @value: the value to sleep on.
 * @peer: world rank whose departure ends the wait.
 * @timeout_ms: limit, 0 for none.
 * @reserved0: must be zero.
 * @reserved: must be zero.
 */
struct fmpl_fast_wait {
	__u64 offset;
	__u32 value;
	__u32 peer;
	__u32 timeout_ms;
	__u32 reserved0;
	__u64 reserved[2];
};

/**
 * struct fmpl_fast_wake - FMPL_IOC_FAST_WAKE argument: wake rank @rank if
 * it sleeps in FMPL_IOC_FAST_WAIT (it then checks its word again).
 * @rank: world rank.
 * @reserved0: must be zero.
 * @reserved: must be zero.
 */
struct fmpl_fast_wake {
	__u32 rank;
	__u32 reserved0;
	__u64 reserved[2];
};

/*
 * Communicators: FMPL_COMM_WORLD exists after FMPL_IOC_INIT.  Others are
 * opaque handles below 2^31 given by FMPL_IOC_COMM_CREATE; at most 63 live
 * at once in a world (ENOSPC), FMPL_IOC_COMM_FREE ends one.
 */
#define FMPL_COMM_WORLD		0
#define FMPL_COMM_NULL		0xffffffffU	/* comm_create with a negative key */
#define FMPL_TAG_ANY		0xffffffffU	/* receive: match any index */

/* fmpl_xfer.flags */
#define FMPL_XFER_NONBLOCK	_BITULL(0)	/* isend / irecv: post and return */
#define FMPL_XFER_ANY_SOURCE	_BITULL(1)	/* send_any / recv_any domain */
#define FMPL_XFER_FLAGS		(FMPL_XFER_NONBLOCK | FMPL_XFER_ANY_SOURCE)

/* fmpl_xfer.status (output) */
#define FMPL_STATUS_DONE	0	/* complete: buffer free / data there */
#define FMPL_STATUS_PENDING	1	/* posted; FMPL_IOC_WAIT completes it */
#define FMPL_STATUS_SPOOLED	2	/* send: copied to the send buffer */

/**
 * struct fmpl_xfer - FMPL_IOC_SEND and FMPL_IOC_RECV argument.
 * @buf: buffer address (0 allowed only with @size 0).
 * @size: bytes to send / room to receive (up to fmpl_info.msg_max).
 * @peer: destination (send) or source (recv) rank in @comm; ignored
 *	(must be 0) for a FMPL_XFER_ANY_SOURCE receive.
 * @mai: matching index, < count; a receive may pass FMPL_TAG_ANY.
 * @comm: communicator.
 * @reserved0: must be zero.
 * @flags: FMPL_XFER_*; a FMPL_XFER_ANY_SOURCE receive cannot be
 *	FMPL_XFER_NONBLOCK (as in the paper, recv_any blocks).
 * @status: out: FMPL_STATUS_*.
 * @out_peer: out, receive: the source's rank in @comm.
 * @out_mai: out, receive: the index the message was sent with.
 * @reserved1: must be zero.
 * @out_size: out, receive: bytes received.
 * @reserved: must be zero.
 */
struct fmpl_xfer {
	__u64 buf;
	__u64 size;
	__u32 peer;
	__u32 mai;
	__u32 comm;
	__u32 reserved0;
	__u64 flags;
	__u32 status;
	__u32 out_peer;
	__u32 out_mai;
	__u32 reserved1;
	__u64 out_size;
	__u64 reserved[2];
};

/* fmpl_wait.flags: which operation to wait for (exactly one). */
#define FMPL_WAIT_SEND		_BITULL(0)
#define FMPL_WAIT_RECV		_BITULL(1)

/**
 * struct fmpl_wait - FMPL_IOC_WAIT argument: complete a non-blocking
 * send (isend_wait) or receive (irecv_wait).
 * @peer: the rank in @comm given to the send / receive.
 * @mai: its matching index (FMPL_TAG_ANY for such a receive).
 * @comm: communicator.
 * @reserved0: must be zero.
 * @flags: FMPL_WAIT_SEND or FMPL_WAIT_RECV.
 * @status: out: FMPL_STATUS_DONE or _SPOOLED.
 * @out_mai: out, receive: the index the message was sent with.
 * @out_size: out, receive: bytes received.
 * @reserved: must be zero.
 *
 * ENOENT: no such operation was posted (or it was already waited for and
 * a new one replaced it).  A receive whose flag already reads DONE need
 * not be waited for.
 */
struct fmpl_wait {
	__u32 peer;
	__u32 mai;
	__u32 comm;
	__u32 reserved0;
	__u64 flags;
	__u32 status;
	__u32 out_mai;
	__u64 out_size;
	__u64 reserved[2];
};

#define FMPL_TIMEOUT_NONE	0xffffffffU	/* never spool: synchronous */

/**
 * struct fmpl_sendbuf - FMPL_IOC_SENDBUF_SET argument.
 * @buf: the spool, in the caller's memory, page-aligned; 0 with @size 0
 *	removes it (EBUSY while messages are spooled).
 * @size: bytes, a multiple of the page size.
 * @timeout_ms: a send whose receive is not posted within this time is
 *	copied into the spool and completes (0: at once, i.e. buffered
 *	mode; FMPL_TIMEOUT_NONE: never, i.e. synchronous mode, the
 *	default).  A message that does not fit the free spool keeps waiting.
 * @reserved0: must be zero.
 * @reserved: must be zero.
 */
struct fmpl_sendbuf {
	__u64 buf;
	__u64 size;
	__u32 timeout_ms;
	__u32 reserved0;
	__u64 reserved[2];
};

/**
 * struct fmpl_sendbuf_stat - FMPL_IOC_SENDBUF_CHECK result.
 * @nsend: spooled messages delivered since the previous check.
 * @nspool: messages still in the spool, waiting for their receive.
 * @spool_used: spool bytes in use.
 * @reserved: zero.
 */
struct fmpl_sendbuf_stat {
	__u32 nsend;
	__u32 nspool;
	__u64 spool_used;
	__u64 reserved[2];
};

/**
 * struct fmpl_coll - FMPL_IOC_BARRIER and FMPL_IOC_BCAST argument.  The
 * kernel-native path (the analogue of the SR8000's hardware barrier and
 * broadcast): every rank of @comm calls it, in the same order.
 * @buf: bcast: the root's data / the others' buffer; barrier: 0.
 * @size: bcast: bytes, the same on every rank (EINVAL otherwise); barrier: 0.
 * @root: bcast: the root's rank in @comm; barrier: 0.
 * @comm: communicator.
 * @reserved: must be zero.
 */
struct fmpl_coll {
	__u64 buf;
	__u64 size;
	__u32 root;
	__u32 comm;
	__u64 reserved[2];
};

#define FMPL_KEY_UNDEFINED	0xffffffffU	/* comm_create: join no group */

/**
 * struct fmpl_comm_create - FMPL_IOC_COMM_CREATE argument: collective over
 * @parent; ranks passing the same @key (< FMPL_KEY_UNDEFINED) form a new
 * communicator, ordered by their rank in @parent.
 * @parent: the communicator every caller belongs to.
 * @key: group to join, or FMPL_KEY_UNDEFINED.
 * @comm: out: the new communicator, or FMPL_COMM_NULL.
 * @rank: out: the caller's rank in it.
 * @size: out: its size.
 * @reserved0: must be zero.
 * @reserved: must be zero.
 */
struct fmpl_comm_create {
	__u32 parent;
	__u32 key;
	__u32 comm;
	__u32 rank;
	__u32 size;
	__u32 reserved0;
	__u64 reserved[2];
};

/**
 * struct fmpl_comm_info - FMPL_IOC_COMM_INFO argument: describe @comm.
 * @comm: in: the communicator (the caller must belong to it).
 * @size: out: its number of ranks.
 * @rank: out: the caller's rank in it.
 * @reserved0: must be zero.
 * @members: in: 0, or the address of an array of @size __u32 that
 *	receives the world rank of each rank of @comm.
 * @members_len: in: entries the array has room for (ENOSPC if too few).
 * @reserved1: must be zero.
 * @reserved: must be zero.
 */
struct fmpl_comm_info {
	__u32 comm;
	__u32 size;
	__u32 rank;
	__u32 reserved0;
	__u64 members;
	__u32 members_len;
	__u32 reserved1;
	__u64 reserved[2];
};

/**
 * struct fmpl_comm_free - FMPL_IOC_COMM_FREE argument: collective over
 * @comm; when every rank of it has called it, @comm is gone (its slot can
 * be reused; the handle itself is not handed out again soon: a call with it
 * fails with EINVAL, as with a handle never created).  FMPL_COMM_WORLD
 * cannot be freed (EINVAL).  The caller's non-blocking sends and receives
 * on @comm must be complete first (EBUSY otherwise; the call then did not
 * count, and may be repeated once they are: FMPL_IOC_WAIT for them).  A
 * collective still waiting on @comm in another thread fails with EINVAL
 * once it is freed.
 * @comm: the communicator (the caller must belong to it).
 * @reserved0: must be zero.
 * @reserved: must be zero.
 */
struct fmpl_comm_free {
	__u32 comm;
	__u32 reserved0;
	__u64 reserved[2];
};

#define FMPL_IOC_MAGIC		0xDB

#define FMPL_IOC_API		_IOWR(FMPL_IOC_MAGIC, 0x00, struct fmpl_api)
#define FMPL_IOC_GET_INFO	_IOR(FMPL_IOC_MAGIC, 0x01, struct fmpl_info)
#define FMPL_IOC_INIT		_IOW(FMPL_IOC_MAGIC, 0x02, struct fmpl_init)
#define FMPL_IOC_SEND		_IOWR(FMPL_IOC_MAGIC, 0x10, struct fmpl_xfer)
#define FMPL_IOC_RECV		_IOWR(FMPL_IOC_MAGIC, 0x11, struct fmpl_xfer)
#define FMPL_IOC_WAIT		_IOWR(FMPL_IOC_MAGIC, 0x12, struct fmpl_wait)
#define FMPL_IOC_SENDBUF_SET	_IOW(FMPL_IOC_MAGIC, 0x13, struct fmpl_sendbuf)
#define FMPL_IOC_SENDBUF_CHECK	_IOR(FMPL_IOC_MAGIC, 0x14, struct fmpl_sendbuf_stat)
#define FMPL_IOC_BARRIER	_IOW(FMPL_IOC_MAGIC, 0x20, struct fmpl_coll)
#define FMPL_IOC_BCAST		_IOW(FMPL_IOC_MAGIC, 0x21, struct fmpl_coll)
#define FMPL_IOC_COMM_CREATE	_IOWR(FMPL_IOC_MAGIC, 0x22, struct fmpl_comm_create)
#define FMPL_IOC_COMM_INFO	_IOWR(FMPL_IOC_MAGIC, 0x23, struct fmpl_comm_info)
#define FMPL_IOC_COMM_FREE	_IOW(FMPL_IOC_MAGIC, 0x24, struct fmpl_comm_free)
#define FMPL_IOC_FAST_WAIT	_IOW(FMPL_IOC_MAGIC, 0x30, struct fmpl_fast_wait)
#define FMPL_IOC_FAST_WAKE	_IOW(FMPL_IOC_MAGIC, 0x31, struct fmpl_fast_wake)

#endif /* _UAPI_LINUX_FMPL_H */

/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * awgstar.h - user-space API of /dev/awgstar, an emulation of NTT's
 * AWG-STAR shared-memory board (seed 001 of the DLM project).
 *
 * Every node holds a replica of one shared region.  Reads are local.  A
 * write is applied to the local replica and travels, as frames {address,
 * data of at most 1 KiB, control, CRC} appended to a token, round a logical
 * ring of nodes; each node applies the frames of the others and removes its
 * own when they come back acknowledged by every live node (and sends again
 * what a node could not take: CRC error).
 *
 * There are two ways to write, as on the board:
 *   - pointer stores into an mmap()ed (MAP_SHARED) view.  The kernel keeps
 *     the pages write-protected and, on the first store to a page, keeps a
 *     copy of it; the bytes that differ are published at the next token
 *     visit.  AWG_IOC_FLUSH is the fence: when it returns, every store made
 *     before it has reached every live node.
 *   - AWG_IOC_WRITE (or pwrite(2)): the DMA path.  The data becomes frames
 *     of at most 1 KiB; the call returns when they are on the token, so each
 *     call costs at least one token visit, as a board write does.
 *     AWG_IOC_READ and pread(2) read the local replica.
 * Events (AWG_IOC_EVENT_SEND/WAIT) are frames too, the board's network-wide
 * interrupts: a node's event is delivered after every write that node made
 * before sending it (pointer stores included).
 *
 * Conflicting writes to the same bytes from two nodes without a fence and
 * an event between them leave every replica with the same value, the one
 * whose frame came later on the token.
 *
 * Protocol on one open file: AWG_IOC_API first (anything else fails with
 * EPERM before it), then the rest.  Unknown requests fail with ENOTTY; bad
 * fields, non-zero reserved fields and unknown flags with EINVAL;
 * inaccessible buffers with EFAULT.  Every structure is fixed-size with
 * explicit padding; reserved fields must be zero on input and are zero on
 * output.  Changing the board (AWG_IOC_SET_CONFIG) and serving its ring
 * (AWG_IOC_RING_*) need CAP_SYS_ADMIN.
 */
#ifndef _UAPI_LINUX_AWGSTAR_H
#define _UAPI_LINUX_AWGSTAR_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#define AWG_API_VERSION		1

#define AWG_FEATURE_MMAP	_BITULL(0)	/* mmap, pointer stores, FLUSH */
#define AWG_FEATURE_DMA		_BITULL(1)	/* WRITE, READ, pread, pwrite */
#define AWG_FEATURE_EVENTS	_BITULL(2)	/* EVENT_SEND, EVENT_WAIT */
#define AWG_FEATURE_RING	_BITULL(3)	/* RING_ATTACH, RING_VISIT */
#define AWG_FEATURE_MODEL	_BITULL(4)	/* AWG_MODE_MODEL timing */
#define AWG_FEATURE_VISIT_CHECK	_BITULL(5)	/* AWG_VISIT_CHECK */

/**
 * struct awg_api - AWG_IOC_API argument.
 * @api: in: AWG_API_VERSION the caller was built for, not 0 (any other
 *	value is accepted: the caller compares the one returned); out: the
 *	kernel's.
 * @reserved: must be zero.
 * @features: in: required features (a bit this kernel does not support:
 *	EINVAL); out: every supported feature.
 */
struct awg_api {
	__u32 api;
	__u32 reserved;
	__u64 features;
};

/* Largest data of one frame, the board's unit of transfer. */
#define AWG_FRAME_DATA_MAX	1024
/* Event ids are 0 .. AWG_EVENTS - 1; libawgstar's barrier uses the last. */
#define AWG_EVENTS		16
/* Destination of an event sent to every other live node. */
#define AWG_NODE_ALL		0xffffffffU
/* Largest ring (the live mask is 32 bits). */
#define AWG_NODES_MAX		32

#define AWG_MODE_FAST		0	/* as fast as the transport allows */
#define AWG_MODE_MODEL		1	/* the board's delays and rates */

#define AWG_RING_LOOPBACK	0	/* no daemon: a ring of this node only */
#define AWG_RING_DAEMON		1	/* a daemon carries the token */

/**
 * struct awg_info - AWG_IOC_GET_INFO result (output only).
 * @api: AWG_API_VERSION of the kernel.
 * @node_id: this board's place on the ring (0 when alone).
 * @features: every supported feature.
 * @size: bytes of the shared region (module parameter awg_size_mb).
 * @nodes: nodes on the ring (1 when alone).
 * @live_mask: bit i set: node i is on the ring.
 * @ring: AWG_RING_*.
 * @mode: AWG_MODE_*.
 * @fiber_m: length of the optical ring in metres (timing model).
 * @node_delay_ns: frame handling delay of one node (timing model, 500).
 * @link_mbps: optical line rate in Mbit/s (timing model, 2152).
 * @write_kbps: DMA write rate in KB/s (timing model, 170000).
 * @read_kbps: DMA read rate in KB/s (timing model, 380000).
 * @idle_us: microseconds node 0 holds an empty token when nothing is to send.
 * @frames_per_visit: frames one node may append per token visit.
 * @token_max: largest token in bytes.
 * @generation: token generation (incremented when the token is remade).
 * @reserved0: zero.
 * @reserved: zero.
 */
struct awg_info {
	__u32 api;
	__u32 node_id;
	__u64 features;
	__u64 size;
	__u32 nodes;
	__u32 live_mask;
	__u32 ring;
	__u32 mode;
	__u32 fiber_m;
	__u32 node_delay_ns;
	__u32 link_mbps;
	__u32 write_kbps;
	__u32 read_kbps;
	__u32 idle_us;
	__u32 frames_per_visit;
	__u32 token_max;
	__u32 generation;
	__u32 reserved0;
	__u64 reserved[4];
};

/* Which fields of struct awg_config AWG_IOC_SET_CONFIG changes. */
#define AWG_CFG_MODE		_BITUL(0)
#define AWG_CFG_FIBER		_BITUL(1)
#define AWG_CFG_IDLE		_BITUL(2)
#define AWG_CFG_CRC_INJECT	_BITUL(3)
#define AWG_CFG_NODE_DELAY	_BITUL(4)
#define AWG_CFG_ALL		(AWG_CFG_MODE | AWG_CFG_FIBER | AWG_CFG_IDLE | \
				 AWG_CFG_CRC_INJECT | AWG_CFG_NODE_DELAY)

/**
 * struct awg_config - AWG_IOC_SET_CONFIG argument (CAP_SYS_ADMIN).
 * @set: AWG_CFG_* bits: the fields to change; the others are ignored.
 * @mode: AWG_MODE_FAST or AWG_MODE_MODEL.
 * @fiber_m: optical ring length in metres, at most 10000000.
 * @idle_us: 1 .. 1000000.
 * @crc_inject_permille: frames this node receives that it treats as
 *	damaged (a CRC error), per mille, 0 .. 500 (fault injection).
 * @node_delay_ns: per-node frame handling delay, at most 1000000.
 * @reserved: must be zero.
 */
struct awg_config {
	__u32 set;
	__u32 mode;
	__u32 fiber_m;
	__u32 idle_us;
	__u32 crc_inject_permille;
	__u32 node_delay_ns;
	__u64 reserved[2];
};

/**
 * struct awg_xfer - AWG_IOC_WRITE / AWG_IOC_READ argument (DMA path).
 * @offset: byte offset in the region.
 * @buf: user buffer.
 * @len: bytes, at most AWG_XFER_MAX; offset + len within the region.
 * @flags: must be zero.
 * @reserved: must be zero.
 *
 * A write waits up to 10 s for the token to take each round of 64 frames
 * (ETIMEDOUT: the ring is stalled).
 */
struct awg_xfer {
	__u64 offset;
	__u64 buf;
	__u64 len;
	__u32 flags;
	__u32 reserved;
};

#define AWG_XFER_MAX		(1024U * 1024U)

/**
 * struct awg_flush - AWG_IOC_FLUSH argument.
 * @timeout_ms: give up with ETIMEDOUT after this many ms (0: 10 s).
 * @reserved: must be zero.
 */
struct awg_flush {
	__u32 timeout_ms;
	__u32 reserved;
};

/**
 * struct awg_event - AWG_IOC_EVENT_SEND / AWG_IOC_EVENT_WAIT argument.
 * @node: send: destination node or AWG_NODE_ALL (every other live node);
 *	wait (out): the node that sent it.
 * @id: event id, below AWG_EVENTS.
 * @data: 32 bits carried with the event.
 * @timeout_ms: wait: give up with ETIMEDOUT after this many ms (0: poll,
 *	EAGAIN when none is pending); send: must be zero.
 * @reserved: must be zero.
 *
 * A wait ends early with EINTR on any signal.  A send waits up to 10 s
 * for the token to take the event (ETIMEDOUT).  A send to one node that
 * is not in the live mask (struct awg_info) fails with EHOSTUNREACH.
 *
 * Each node queues up to 256 events per id; more are dropped and counted
 * (awg_stats.event_overflows).
 */
struct awg_event {
	__u32 node;
	__u32 id;
	__u32 data;
	__u32 timeout_ms;
	__u64 reserved;
};

/**
 * struct awg_stats - AWG_IOC_GET_STATS result (output only), counters
 * since the module was loaded.
 * @rotations: token visits of this node.
 * @frames_sent: frames this node appended (retransmissions included).
 * @frames_recv: frames of other nodes applied here.
 * @bytes_sent: data bytes in frames_sent.
 * @bytes_recv: data bytes in frames_recv.
 * @writes: AWG_IOC_WRITE calls and pwrite(2)s (a poke is one).
 * @pio_pages: pages whose pointer stores were published.
 * @flushes: AWG_IOC_FLUSH calls.
 * @events_sent: events sent.
 * @events_recv: events queued here.
 * @crc_errors: frames received with a bad (or injected) CRC.
 * @retries: own frames sent again because a node missed them.
 * @stalls: writes that waited for the token.
 * @regenerations: tokens made anew (lost token, node left).
 * @bad_tokens: tokens from the daemon rejected as malformed.
 * @event_overflows: events dropped because their queue was full.
 * @node_changes: nodes that left the ring.
 * @rot_count: node 0: rotations timed (departure to departure).
 * @rot_ns: node 0: their total wall time.
 * @rot_busy_count: node 0: those with frames on the token.
 * @rot_busy_ns: node 0: their total wall time.
 * @rot_busy_model_ns: node 0: their total time in the timing model.
 * @reserved: zero.
 */
struct awg_stats {
	__u64 rotations;
	__u64 frames_sent;
	__u64 frames_recv;
	__u64 bytes_sent;
	__u64 bytes_recv;
	__u64 writes;
	__u64 pio_pages;
	__u64 flushes;
	__u64 events_sent;
	__u64 events_recv;
	__u64 crc_errors;
	__u64 retries;
	__u64 stalls;
	__u64 regenerations;
	__u64 bad_tokens;
	__u64 event_overflows;
	__u64 node_changes;
	__u64 rot_count;
	__u64 rot_ns;
	__u64 rot_busy_count;
	__u64 rot_busy_ns;
	__u64 rot_busy_model_ns;
	__u64 reserved[8];
};

/*
 * The ring, for the daemon (awgstard).  A daemon attaches a board as node
 * `node_id` of `nodes`; while it is attached, frames leave and enter the
 * board only through AWG_IOC_RING_VISIT; when its file is closed the board
 * is alone again (a loopback ring) and keeps its replica.
 *
 * AWG_IOC_RING_VISIT hands the board the token (struct awg_token, its
 * frames following) and gets the token to pass on.  The kernel validates
 * every byte of it: a malformed token is rejected with EINVAL and counted
 * (bad_tokens), the board's state unchanged.  Node 0 (the monitor) makes
 * the token: AWG_VISIT_NEW with in_len 0 starts a new generation with
 * `live_mask`; the others re-send the frames the lost token carried.  Node
 * 0 also applies the timing model (it holds the token until a rotation has
 * taken 500 N + 5 L ns plus the token's time on the line) and, when the
 * token comes back empty and nothing waits to be sent, holds it up to
 * idle_us for local work.
 */
#define AWG_TOKEN_MAGIC		0x54475741U	/* "AWGT" */
#define AWG_TOKEN_VERSION	1

/**
 * struct awg_token - token header.
 * @magic: AWG_TOKEN_MAGIC.
 * @version: AWG_TOKEN_VERSION.
 * @nodes: ring size, as attached.
 * @ring_id: chosen by node 0's daemon for the life of the ring.
 * @generation: incremented by node 0 for every new token.
 * @live_mask: nodes on the ring.
 * @nframes: frames following the header.
 * @len: bytes of header and frames.
 * @reserved: zero.
 * @rotation: node 0's rotation counter.
 */
struct awg_token {
	__u32 magic;
	__u16 version;
	__u16 nodes;
	__u32 ring_id;
	__u32 generation;
	__u32 live_mask;
	__u32 nframes;
	__u32 len;
	__u32 reserved;
	__u64 rotation;
};

#define AWG_FRAME_DATA		1
#define AWG_FRAME_EVENT		2

/**
 * struct awg_frame - one frame on the token; `len` bytes of data follow,
 * padded with zeroes to a multiple of 8.
 * @crc: CRC-32 (IEEE 802.3, as crc32_le(~0, ...)) of everything after
 *	@ack (the rest of the header and the data).
 * @ack: bit i: node i has applied the frame (set by each node).
 * @type: AWG_FRAME_DATA or AWG_FRAME_EVENT.
 * @origin: node that sent it.
 * @len: data bytes, 1 .. AWG_FRAME_DATA_MAX (DATA), 0 (EVENT).
 * @reserved: zero.
 * @seq: the origin's sequence number (1, 2, ...; per ring_id).
 * @addr: DATA: offset in the region; EVENT: destination node.
 * @aux: EVENT: id << 32 | data; DATA: zero.
 */
struct awg_frame {
	__u32 crc;
	__u32 ack;
	__u8 type;
	__u8 origin;
	__u16 len;
	__u32 reserved;
	__u64 seq;
	__u64 addr;
	__u64 aux;
};

/* Largest token: 64 full frames after the header. */
#define AWG_TOKEN_FRAMES_MAX	64
#define AWG_TOKEN_MAX		(sizeof(struct awg_token) + AWG_TOKEN_FRAMES_MAX * \
				 (sizeof(struct awg_frame) + AWG_FRAME_DATA_MAX))

/**
 * struct awg_ring_attach - AWG_IOC_RING_ATTACH argument (CAP_SYS_ADMIN).
 * @node_id: this board's place, below @nodes.
 * @nodes: ring size, 1 .. AWG_NODES_MAX.
 * @flags: must be zero.
 * @reserved: must be zero.
 */
struct awg_ring_attach {
	__u32 node_id;
	__u32 nodes;
	__u32 flags;
	__u32 reserved;
};

#define AWG_VISIT_NEW		_BITUL(0)	/* node 0: make a new token */
#define AWG_VISIT_CHECK		_BITUL(1)	/* only check @in (see below) */

/**
 * struct awg_ring_visit - AWG_IOC_RING_VISIT argument (attached file only).
 * @in: the token that arrived (user address); unused with AWG_VISIT_NEW.
 * @out: where to put the token to pass on (user address).
 * @in_len: bytes at @in (0 with AWG_VISIT_NEW).
 * @out_cap: bytes at @out, at least AWG_TOKEN_MAX.
 * @out_len: in: must be 0; out: bytes written at @out.
 * @flags: AWG_VISIT_*.
 * @live_mask: with AWG_VISIT_NEW: the nodes of the new token (must include
 *	node 0); else zero.
 * @ring_id: with AWG_VISIT_NEW: the ring's id (non-zero); else zero.
 *
 * AWG_VISIT_CHECK (not with AWG_VISIT_NEW): check @in as a visit would,
 * and do nothing else: 0 if this board would take it, EINVAL (counted in
 * bad_tokens) if not; @out is not written and @out_len stays 0.  Node 0's
 * daemon checks each node's reply before passing it to the next node, so
 * the node that sent a malformed token is the one dropped.
 */
struct awg_ring_visit {
	__u64 in;
	__u64 out;
	__u32 in_len;
	__u32 out_cap;
	__u32 out_len;
	__u32 flags;
	__u32 live_mask;
	__u32 ring_id;
};

#define AWG_IOC_MAGIC		0xA5

#define AWG_IOC_API		_IOWR(AWG_IOC_MAGIC, 0x00, struct awg_api)
#define AWG_IOC_GET_INFO	_IOR(AWG_IOC_MAGIC, 0x01, struct awg_info)
#define AWG_IOC_SET_CONFIG	_IOW(AWG_IOC_MAGIC, 0x02, struct awg_config)
#define AWG_IOC_GET_STATS	_IOR(AWG_IOC_MAGIC, 0x03, struct awg_stats)
#define AWG_IOC_WRITE		_IOW(AWG_IOC_MAGIC, 0x10, struct awg_xfer)
#define AWG_IOC_READ		_IOW(AWG_IOC_MAGIC, 0x11, struct awg_xfer)
#define AWG_IOC_FLUSH		_IOW(AWG_IOC_MAGIC, 0x12, struct awg_flush)
#define AWG_IOC_EVENT_SEND	_IOW(AWG_IOC_MAGIC, 0x20, struct awg_event)
#define AWG_IOC_EVENT_WAIT	_IOWR(AWG_IOC_MAGIC, 0x21, struct awg_event)
#define AWG_IOC_RING_ATTACH	_IOW(AWG_IOC_MAGIC, 0x30, struct awg_ring_attach)
#define AWG_IOC_RING_VISIT	_IOWR(AWG_IOC_MAGIC, 0x31, struct awg_ring_visit)

#endif /* _UAPI_LINUX_AWGSTAR_H */

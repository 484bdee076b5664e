/* SPDX-License-Identifier: GPL-2.0 */
/*
 * transport.h - how dlmd moves DLM pages to and from memory servers.
 *
 * A transport connects to one memory server (open), learns its size, and
 * then carries asynchronous transfers between a buffer (the frame pool)
 * and an offset in the server's memory.  A READ sees every WRITE
 * submitted to the same server before it, and WRITEs to one server are
 * applied in submission order; a READ may complete before a WRITE of
 * other bytes submitted earlier (tcp sends them on separate connections),
 * and READs may complete in any order.  Transfers to different servers
 * proceed in parallel.  Every submitted transfer's done() is called
 * exactly once: with 0, or -EIO when the server refused it or the
 * connection failed.
 *
 * A connection that fails (I/O error, protocol error, no reply within the
 * I/O timeout) is dead for good: dead() is called once, before the
 * done(-EIO) of the transfers it took down, and later submissions complete
 * with -EIO at once.  Transports: tcp (transport_tcp.c), mpi
 * (transport_mpi.c, in the MPI builds of dlmd; see dlm_mpi.h) and verbs
 * (transport_verbs.c, when built with rdma-core).
 */
#ifndef DLM_TRANSPORT_H
#define DLM_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "netaddr.h"

enum xfer_op {
	XFER_READ,	/* server -> buf */
	XFER_WRITE,	/* buf -> server */
};

struct dlm_xfer;
typedef void (*xfer_done_fn)(struct dlm_xfer *x, int status);

/* One transfer; embed it in the caller's request. */
struct dlm_xfer {
	enum xfer_op op;
	uint32_t len;
	uint64_t remote_off;	/* byte offset in the server's memory */
	void *buf;		/* len bytes, untouched until done() */
	xfer_done_fn done;
	/* private to the transport */
	struct dlm_xfer *next;
	uint64_t tag;
	uint64_t ring_end;	/* tcp: bounce ring freed by the reply, or 0 */
};

struct tconn;

/* Called once when a connection dies; WHY is for the log. */
typedef void (*tconn_dead_fn)(void *ctx, unsigned int index, const char *why);

struct transport_opts {
	unsigned int connect_timeout_ms;
	unsigned int io_timeout_ms;	/* a reply later than this kills */
	tconn_dead_fn dead;
	void *ctx;			/* for dead() */
	unsigned int index;		/* for dead(): which server */
	uint64_t want_size;		/* bytes the memfile gives it; the
					 * mpi transport's servers reserve
					 * that much at open */
};

#define TRANSPORT_MAX_POOLS	4

struct transport_ops {
	const char *name;
	/*
	 * Optional: can this machine use the transport at all (the verbs
	 * transport needs an RDMA device)?  0, or -errno with ERR naming
	 * the fix.
	 */
	int (*probe)(char *err, size_t errlen);
	/*
	 * Connect to the server at ADDR and greet it; its memory size goes
	 * to *SIZE.  0, or -errno with ERR saying what to do about it.
	 */
	int (*open)(struct tconn **out, const struct netaddr *addr,
		    const struct transport_opts *opts, uint64_t *size,
		    char *err, size_t errlen);
	/*
	 * Optional: the frame pool, once mapped, before the first submit;
	 * every X->buf lies in it.  The verbs transport registers it for
	 * RDMA.  It may be called again with other memory (at most
	 * TRANSPORT_MAX_POOLS regions in all): the mirror's copy buffer.
	 * 0, or -errno with ERR saying what to do about it.
	 */
	int (*set_pool)(struct tconn *c, void *base, uint64_t len,
			char *err, size_t errlen);
	/* Queue X; X->done() follows (possibly before submit returns). */
	void (*submit)(struct tconn *c, struct dlm_xfer *x);
	int (*alive)(struct tconn *c);
	/*
	 * Stop the connection: its threads end, what is pending completes
	 * with -EIO (no dead() call), and so does any later submit.
	 */
	void (*stop)(struct tconn *c);
	/* stop() if not done yet, then free C. */
	void (*close)(struct tconn *c);
	/* Optional: the copies C keeps now (the mirror: sides up, 0-2). */
	int (*replicas)(struct tconn *c);
};

extern const struct transport_ops transport_tcp;

/*
 * transport_io.c: submit one transfer of LEN bytes between BUF and OFF on
 * C and wait for it; its status.  Not from a transport's own threads.
 */
int transport_io(const struct transport_ops *ops, struct tconn *c,
		 enum xfer_op op, uint64_t off, uint32_t len, void *buf);

/*
 * transport_mirror.c (dlmd --replicas 2): the servers at ADDR[0] and
 * ADDR[1], each reached by INNER, as one server whose every page is on
 * both; *SIZE is the smaller size.  OPTS->dead() is called only when both
 * are gone.  A dropped side that answers again is resynchronised in the
 * background and then used again.  0, or -errno with ERR when neither
 * answers.  Its ops (transport_mirror) have no open: connect with this.
 */
int mirror_open(struct tconn **out, const struct transport_ops *inner,
		const struct netaddr *addr[2],
		const struct transport_opts *opts, uint64_t *size,
		char *err, size_t errlen);
/* Sides of mirror M that hold every page (0, 1 or 2). */
int mirror_replicas(struct tconn *m);
extern const struct transport_ops transport_mirror;
#ifdef DLM_WITH_VERBS
extern const struct transport_ops transport_verbs;
#endif

#endif /* DLM_TRANSPORT_H */

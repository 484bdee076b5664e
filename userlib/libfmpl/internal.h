/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * internal.h - what the libfmpl source files share.  Not installed; every
 * name here starts with fmpllib_ (or FMPLLIB_) and is hidden in libfmpl.so
 * and libfmpl.a.  Only the functions and objects of <fmpl.h>, defined with
 * FMPLLIB_PUBLIC, are exported.
 */
#ifndef FMPLLIB_INTERNAL_H
#define FMPLLIB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <linux/fmpl.h>

#include "fmpl.h"

#define FMPLLIB_PUBLIC	__attribute__((visibility("default")))

#define FMPLLIB_DEV		"/dev/fmpl"
#define FMPLLIB_SPIN_US		100	/* FMPL_SPIN_US default */
#define FMPLLIB_SPIN_US_MAX	10000000U

/*
 * Reserved matching indices: the user has 0..count-1; libfmpl asks the
 * kernel for count + FMPL_LIB_RESERVED_MAI and keeps the top ones for the
 * point-to-point messages of its tree collectives.
 */
#define FMPLLIB_MAI_BCAST(c)	((c) + 0)	/* parent -> child */
#define FMPLLIB_MAI_REDUCE(c)	((c) + 1)	/* child -> parent */
#define FMPLLIB_MAI_BARRIER(c)	((c) + 2)	/* both ways, 0 bytes */
#define FMPLLIB_MAI_SPARE(c)	((c) + 3)

/*
 * FMPL_COLL=auto, from make bench-fmpl (Documentation/benchmarks.rst): on
 * 2 ranks one tree message beats a kernel round for a barrier and for a
 * bcast below this many bytes (10-13 us against 18-74 us); with more ranks
 * the kernel's barrier and bcast win at every size measured (1.1-2.5x).
 */
#define FMPLLIB_AUTO_TREE_RANKS		2
#define FMPLLIB_AUTO_BCAST_TREE_MAX	(64U << 10)

/* ---- env.c: what fmpl_init reads from the environment ------------------ */

/* Which variables gave rank and size (for messages). */
enum fmpllib_src { FMPLLIB_SRC_NONE, FMPLLIB_SRC_FMPL, FMPLLIB_SRC_OMPI,
		   FMPLLIB_SRC_PMI };

struct fmpllib_env {
	int rank, size;
	enum fmpllib_src src;
	uint64_t key;
	int key_derived;	/* 1: from the parent process, not FMPL_KEY */
	unsigned int mode;	/* FMPL_MODE_* */
	unsigned int join_timeout_ms;
	unsigned int spin_us;
	unsigned int fast;	/* FMPL_FAST: fast indices wanted */
	int coll;		/* FMPL_COLL_*, -1: not set */
	const char *dev;
};

/*
 * Fill @e from the environment.  0, or FMPL_ERR_INIT with @msg (of @len
 * bytes) saying what is wrong and how to fix it.
 */
int fmpllib_parse_env(struct fmpllib_env *e, char *msg, size_t len);
/* The key of a launcher process: never 0, the same for its children. */
uint64_t fmpllib_derive_key(long ppid, uint64_t starttime);
/* Start time (clock ticks since boot) of process @pid, 0 if unknown. */
uint64_t fmpllib_proc_starttime(long pid);

/* ---- errors.c ---------------------------------------------------------- */

/* ier for an errno of an operation, and of opening and joining. */
int fmpllib_ier(int err);
int fmpllib_ier_init(int err);
/* Store @code in *ier (if any), set errno to @err (if non-zero), return it. */
int fmpllib_ret(int *ier, int code, int err);
/* fmpllib_ret for a failed ioctl: errno mapped. */
int fmpllib_fail(int *ier, int err);

/* ---- init.c: the library's state --------------------------------------- */

#define FMPLLIB_COMM_CACHE	64

struct fmpllib_comm {
	uint32_t id;
	int rank, size;
	uint32_t *members;	/* world rank of each rank */
};

/* A non-blocking receive on a fast index (fast.c). */
enum { FMPLLIB_FAST_IDLE, FMPLLIB_FAST_POSTED, FMPLLIB_FAST_DONE };
struct fmpllib_fast_post {
	int state;
	uint32_t comm;		/* the communicator it was posted on */
	void *buf;
	size_t size;
	int ret, err;		/* the result once done */
	fmpl_status st;
};

struct fmpllib_state {
	int fd;
	int rank, size;		/* world */
	unsigned int count;	/* the user's indices */
	unsigned int kcount;	/* count + FMPL_LIB_RESERVED_MAI */
	uint64_t features;
	uint64_t msg_max;
	struct fmpl_header *ma;
	struct fmpl_flag *fa;
	size_t ma_len, fa_len;	/* non-zero when libfmpl mapped them */
	unsigned int spin_us;
	int coll;
	uint8_t *isend;		/* [world rank][kcount]: FMPLLIB_ISEND_* */
	/*
	 * Cached communicators, by id % FMPLLIB_COMM_CACHE: ids are opaque,
	 * but the kernel's live ones differ in that (their slot), so two in
	 * use never evict each other.
	 */
	struct fmpllib_comm *comms[FMPLLIB_COMM_CACHE];
	int spool_set;
	void *fast;		/* the fast area (FMPL_FAST), or NULL */
	size_t fast_len;
	unsigned int fast_count;	/* fast indices: 0..fast_count-1 */
	struct fmpllib_fast_post *fast_posts;	/* [world rank][fast_count] */
};

/* What libfmpl knows of its last isend on a (peer, index). */
enum { FMPLLIB_ISEND_NONE, FMPLLIB_ISEND_PENDING, FMPLLIB_ISEND_DONE };

extern struct fmpllib_state fmpllib_g;
extern int fmpllib_inited;

/*
 * The communicator @id in *@cp (cached; asked of the kernel the first
 * time).  FMPL_SUCCESS, or the code (errno set) when libfmpl is not
 * initialised or the caller is not a member.
 */
int fmpllib_comm(int id, struct fmpllib_comm **cp);
/* Fetch @id's members into the cache (after COMM_CREATE). */
struct fmpllib_comm *fmpllib_comm_load(uint32_t id, int *err);
/* Forget @id (after COMM_FREE). */
void fmpllib_comm_drop(uint32_t id);

/* Slot of (world rank @w, index @mai) in the matching and flag areas. */
static inline size_t fmpllib_slot(unsigned int w, uint32_t mai)
{
	unsigned int kc = fmpllib_g.kcount;

	return (size_t)w * (kc + 1) + (mai == FMPL_TAG_ANY ? kc : mai);
}

/* ---- p2p.c: the point-to-point paths the collectives use too ----------- */

/* Monotonic microseconds. */
uint64_t fmpllib_now_us(void);
/*
 * Blocking send / receive to comm rank @peer on kernel index @mai (no
 * range check against the user's count).  The send waits while the index
 * is busy with an earlier message of ours that is spooled.
 */
int fmpllib_send(struct fmpllib_comm *c, int peer, uint32_t mai,
		 const void *buf, size_t size, int *ier);
int fmpllib_recv(struct fmpllib_comm *c, int peer, uint32_t mai, void *buf,
		 size_t size, fmpl_status *st, int *ier);

static inline void fmpllib_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* ---- fast.c: the fast indices ----------------------------------------- */

#define FMPLLIB_FAST_SLEEP_MS	100	/* longest sleep before looking again */

static inline int fmpllib_fast(uint32_t mai)
{
	return mai < fmpllib_g.fast_count;
}

int fmpllib_fast_send(struct fmpllib_comm *c, int peer, uint32_t mai,
		      const void *buf, size_t size, int nonblock);
int fmpllib_fast_recv(struct fmpllib_comm *c, int peer, uint32_t mai,
		      void *buf, size_t size, fmpl_status *st, int test);
int fmpllib_fast_irecv(struct fmpllib_comm *c, int peer, uint32_t mai,
		       void *buf, size_t size);
/* Has the caller a fast receive posted on @c that has not completed? */
int fmpllib_fast_pending(const struct fmpllib_comm *c);
int fmpllib_fast_irecv_wait(struct fmpllib_comm *c, int peer, uint32_t mai,
			    fmpl_status *st, int test);

/* ---- coll.c ------------------------------------------------------------ */

int fmpllib_barrier_quiet(void);	/* fmpl_finalize's barrier */

#endif /* FMPLLIB_INTERNAL_H */

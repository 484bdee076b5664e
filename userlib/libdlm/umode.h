/* SPDX-License-Identifier: GPL-2.0 */
/*
 * umode.h - the user-level modes of libdlm (--mode=sigsegv|uffd,
 * DLM_MODE): libdlm itself pages the DLM space, as the DLM-MPI paper's
 * user-level design (sigsegv) and UMap (uffd) do, instead of /dev/dlm.
 * They are baselines for the kernel mode; see userlib/README.md.
 *
 * Both read the same memfile as the kernel mode and talk to the same
 * dlm-memservers, directly over TCP (daemon/wire.h: HELLO, READ, WRITE),
 * one connection per server.  The space is local + the servers' MB, the
 * local budget the local MB; "local first, then the servers in order".
 *
 * Placement.  Server k of the memfile holds slots[k] = floor(MB_k * 2^20 /
 * page) DLM pages; slot numbers run linearly over the servers in memfile
 * order: slot s is on the server k with first[k] <= s < first[k] +
 * slots[k], at byte offset (s - first[k]) * page.  A DLM page gets a slot
 * when it is evicted (the lowest free one first, then the most recently
 * freed: a stack) and gives it back when it is fetched, as dlmd's
 * placement does: at most (total - budget) DLM pages are out at a time,
 * which is exactly what the servers hold, so the memfile's promise is
 * never exceeded.  (A fixed home slot per DLM page would need the servers
 * to hold the local part too.)  A DLM page without a slot has never been
 * evicted: it is zero-filled, not read.
 *
 * Eviction: ARR (address round robin over the resident DLM pages), the
 * papers' policy; every eviction writes the page back (no clean tracking).
 *
 * Threads: one paging thread per space does every transfer and owns the
 * residency table; the faulting threads only hand it the page and wait.
 * A transfer that fails (server dead, or no answer in UMODE_TIMEOUT_MS)
 * makes that fault and every later one fail: SIGBUS for the access.
 *
 * Every name is dlmlib_ or umode_ and hidden in libdlm.
 */
#ifndef DLMLIB_UMODE_H
#define DLMLIB_UMODE_H

#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>

#include "internal.h"

#define UMODE_TIMEOUT_MS	5000	/* per send or receive on a server */
#define UMODE_NO_SLOT		UINT64_MAX
#define UMODE_ADDR_MAX		280

struct umode_server {
	int fd;
	char addr[UMODE_ADDR_MAX];	/* HOST:PORT as in the memfile */
	uint64_t slots;			/* DLM pages it holds */
	uint64_t first;			/* its first slot number */
};

struct dlmlib_umode {
	int mode;			/* DLMLIB_MODE_SIGSEGV or _UFFD */
	const char *name;		/* "sigsegv", "uffd" */
	char *base;			/* the program's view of the space */
	uint64_t size;			/* bytes */
	uint64_t page;			/* DLM page size */
	uint64_t npages;
	uint64_t budget_pages;		/* local budget in DLM pages */
	int verbose;

	/* Owned by the paging thread. */
	uint8_t *resident;		/* per DLM page */
	uint64_t *slot;			/* per DLM page: its slot, or NO_SLOT */
	uint64_t *free_slots;		/* stack, lowest on top at first */
	uint64_t nfree;
	uint64_t nslots;
	uint64_t nresident;
	uint64_t hand;			/* ARR: next page to look at */
	uint64_t tag;
	int failed;			/* errno of a failed transfer, or 0 */
	struct umode_server *srv;
	unsigned int nsrv;

	/* Counters: written by the paging thread, read by dlm_stats(). */
	uint64_t faults, populates, swapins, swapouts, sigbus;

	pthread_t thread;
	int thread_started;

	/* sigsegv mode */
	int memfd;			/* backs the space */
	char *alias;			/* the paging thread's RW view */
	sem_t lock, go, done;		/* one request at a time */
	uint64_t req;			/* DLM page asked for (sem_* order it) */
	int res;		/* 0, or -1: SIGBUS */
	int stop;

	/* uffd mode */
	int uffd;
	int evfd;			/* wakes the thread to stop */
	int wp;				/* write-protect during eviction */
	char *stage;			/* one DLM page: data being fetched */
	char *zero;			/* one DLM page of zeros */
};

/* umode.c: the common part. */
int dlmlib_umode_open(const struct dlmlib_config *c, struct dlmlib_space *sp);
void dlmlib_umode_close(struct dlmlib_space *sp);
void dlmlib_umode_stats(const struct dlmlib_space *sp,
			struct dlm_lib_stats *st);
/* The resident DLM page ARR evicts next (never @except), or -1. */
int64_t umode_victim(struct dlmlib_umode *um, uint64_t except);
/* Bring DLM page @p's data into @dst: 1 read from its slot (released),
 * 0 never evicted (@dst untouched: the caller zero-fills), -1 failed. */
int umode_fetch(struct dlmlib_umode *um, uint64_t p, void *dst);
/* Write DLM page @p's data from @src to a free slot: 0 or -1. */
int umode_store(struct dlmlib_umode *um, uint64_t p, const void *src);
static inline uint64_t umode_ld(const uint64_t *v)
{
	return __atomic_load_n(v, __ATOMIC_RELAXED);
}
static inline void umode_inc(uint64_t *v)
{
	__atomic_store_n(v, *v + 1, __ATOMIC_RELAXED);
}

/* umode_sigsegv.c, umode_uffd.c: map the space, start the thread (0 or
 * -1 with the error set); stop it and unmap. */
int umode_sigsegv_start(struct dlmlib_umode *um);
void umode_sigsegv_stop(struct dlmlib_umode *um);
int umode_uffd_start(struct dlmlib_umode *um);
void umode_uffd_stop(struct dlmlib_umode *um);

#endif /* DLMLIB_UMODE_H */

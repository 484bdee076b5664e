// SPDX-License-Identifier: GPL-2.0
/*
 * umode_sigsegv.c - --mode=sigsegv, the DLM-MPI paper's user-level design:
 * the space is PROT_NONE except for its resident DLM pages; an access to
 * any other page raises SIGSEGV, whose handler hands the DLM page to the
 * paging thread and waits.  The thread evicts a victim by ARR when the
 * budget is full (WRITE to a server, PROT_NONE, memory released), reads
 * the page from its server straight into place (or leaves it zero if it
 * was never evicted), makes it PROT_READ|PROT_WRITE and releases the
 * handler, which returns: the access is repeated and succeeds.
 *
 * The space is a memfd mapped twice: the program's view (base), whose
 * protection says what is resident, and the paging thread's RW view
 * (alias).  The thread writes a victim back from the alias *after*
 * making the program's view PROT_NONE and fills a page through the alias
 * *before* making it accessible, so other threads never see a page half
 * read nor change one being written back.  (With a single anonymous
 * mapping the paper's design has both windows when the program has
 * several threads.)  Evicted memory is released with FALLOC_FL_PUNCH_HOLE.
 *
 * Handoff, async-signal-safe: a semaphore used as a lock (taken in the
 * handler only for faults inside the space), one request slot, a
 * semaphore to start the thread and one to wake the handler.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "umode.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

typedef unsigned long long ull;

/* The space whose faults the handler serves, and who had SIGSEGV before. */
static struct dlmlib_umode *seg_um;
static struct sigaction seg_old;

static void sem_wait_safe(sem_t *s)
{
	while (sem_wait(s) && errno == EINTR)
		;
}

/* Not ours: what the program (or the default) would have done. */
static void chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	if (seg_old.sa_flags & SA_SIGINFO) {
		seg_old.sa_sigaction(sig, si, uc);
	} else if (seg_old.sa_handler == SIG_DFL ||
		   seg_old.sa_handler == SIG_IGN) {
		/* Returning repeats the access, which now kills as usual. */
		sigaction(SIGSEGV, &dfl, NULL);
	} else {
		seg_old.sa_handler(sig);
	}
}

static void handler(int sig, siginfo_t *si, void *uc)
{
	struct dlmlib_umode *um = __atomic_load_n(&seg_um, __ATOMIC_ACQUIRE);
	uintptr_t a = (uintptr_t)si->si_addr;
	struct sigaction sa;
	int saved = errno, res;
	sigset_t set;

	if (!um || a < (uintptr_t)um->base ||
	    a - (uintptr_t)um->base >= um->size) {
		chain(sig, si, uc);
		errno = saved;
		return;
	}
	sem_wait_safe(&um->lock);
	um->req = (a - (uintptr_t)um->base) / um->page;
	sem_post(&um->go);
	sem_wait_safe(&um->done);
	res = um->res;
	sem_post(&um->lock);
	if (res) {
		/* The page cannot be had: SIGBUS, as the kernel mode gives.
		 * An ignored SIGBUS would only repeat the fault forever. */
		if (!sigaction(SIGBUS, NULL, &sa) && sa.sa_handler == SIG_IGN) {
			sa = (struct sigaction){ .sa_handler = SIG_DFL };
			sigaction(SIGBUS, &sa, NULL);
		}
		sigemptyset(&set);
		sigaddset(&set, SIGBUS);
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		raise(SIGBUS);
	}
	errno = saved;
}

/* Make DLM page @p resident: 0, or -1 (the access gets SIGBUS). */
static int serve(struct dlmlib_umode *um, uint64_t p)
{
	char *view = um->base + p * um->page;
	int64_t v = -1;
	int r;

	if (um->failed)
		goto fail;
	if (um->resident[p])	/* another thread's fault brought it in */
		return 0;
	umode_inc(&um->faults);
	if (um->nresident >= um->budget_pages)
		v = umode_victim(um, p);
	/* Fetch first: that frees the page's slot for the victim. */
	r = umode_fetch(um, p, um->alias + p * um->page);
	if (r < 0)
		goto fail;
	if (!r)
		umode_inc(&um->populates);	/* a hole of the memfd: zeros */
	if (v >= 0) {
		char *vv = um->base + (uint64_t)v * um->page;

		if (mprotect(vv, um->page, PROT_NONE) ||
		    umode_store(um, (uint64_t)v, um->alias + v * um->page))
			goto fail;
		fallocate(um->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			  (off_t)(v * um->page), (off_t)um->page);
		um->resident[v] = 0;
		__atomic_store_n(&um->nresident, um->nresident - 1,
				 __ATOMIC_RELAXED);
	}
	if (mprotect(view, um->page, PROT_READ | PROT_WRITE))
		goto fail;
	/* Map the whole DLM page at once, as /dev/dlm does (5.14+). */
	madvise(view, um->page, MADV_POPULATE_WRITE);
	um->resident[p] = 1;
	__atomic_store_n(&um->nresident, um->nresident + 1, __ATOMIC_RELAXED);
	return 0;
fail:
	if (!um->failed)
		um->failed = errno ? errno : EIO;
	umode_inc(&um->sigbus);
	return -1;
}

static void *thread_main(void *arg)
{
	struct dlmlib_umode *um = arg;

	for (;;) {
		sem_wait_safe(&um->go);
		if (um->stop)
			break;
		um->res = serve(um, um->req);
		sem_post(&um->done);
	}
	return NULL;
}

int umode_sigsegv_start(struct dlmlib_umode *um)
{
	struct sigaction sa = { .sa_sigaction = handler,
				.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK };
	sigset_t all, old;
	void *p;
	int err;

	if (__atomic_load_n(&seg_um, __ATOMIC_ACQUIRE))
		return dlmlib_error(EBUSY, "--mode=sigsegv: a space already exists");
	um->memfd = memfd_create("dlm-sigsegv", MFD_CLOEXEC);
	if (um->memfd < 0 || ftruncate(um->memfd, (off_t)um->size)) {
		err = errno;
		dlmlib_error(err, "--mode=sigsegv: cannot create the %llu MB memfd behind the space: %s (is /dev/shm or RLIMIT_FSIZE limiting?)",
			     (ull)um->size >> 20, strerror(err));
		goto fail;
	}
	p = mmap(NULL, um->size, PROT_NONE, MAP_SHARED | MAP_NORESERVE,
		 um->memfd, 0);
	if (p == MAP_FAILED)
		goto fail_map;
	um->base = p;
	p = mmap(NULL, um->size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_NORESERVE, um->memfd, 0);
	if (p == MAP_FAILED)
		goto fail_map;
	um->alias = p;
	sem_init(&um->lock, 0, 1);
	sem_init(&um->go, 0, 0);
	sem_init(&um->done, 0, 0);

	/* The paging thread takes no signal: it must never run the
	 * handler, and it never touches the program's view. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&um->thread, NULL, thread_main, um);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		dlmlib_error(err, "--mode=sigsegv: cannot start the paging thread: %s",
			     strerror(err));
		goto fail;
	}
	um->thread_started = 1;
	__atomic_store_n(&seg_um, um, __ATOMIC_RELEASE);
	if (sigaction(SIGSEGV, &sa, &seg_old)) {
		err = errno;
		dlmlib_error(err, "--mode=sigsegv: cannot install the SIGSEGV handler: %s",
			     strerror(err));
		goto fail;
	}
	return 0;

fail_map:
	err = errno;
	dlmlib_error(err, "--mode=sigsegv: cannot map the %llu MB DLM space: %s (address space limit? see ulimit -v)",
		     (ull)um->size >> 20, strerror(err));
fail:
	err = errno;
	umode_sigsegv_stop(um);
	errno = err;
	return -1;
}

void umode_sigsegv_stop(struct dlmlib_umode *um)
{
	if (um->thread_started) {
		if (__atomic_load_n(&seg_um, __ATOMIC_ACQUIRE) == um) {
			sigaction(SIGSEGV, &seg_old, NULL);
			__atomic_store_n(&seg_um, NULL, __ATOMIC_RELEASE);
		}
		/* Wait for a fault in progress, then stop the thread. */
		sem_wait_safe(&um->lock);
		um->stop = 1;
		sem_post(&um->go);
		pthread_join(um->thread, NULL);
		um->thread_started = 0;
		sem_destroy(&um->lock);
		sem_destroy(&um->go);
		sem_destroy(&um->done);
	}
	if (um->alias)
		munmap(um->alias, um->size);
	if (um->base)
		munmap(um->base, um->size);
	if (um->memfd >= 0)
		close(um->memfd);
	um->alias = um->base = NULL;
	um->memfd = -1;
}

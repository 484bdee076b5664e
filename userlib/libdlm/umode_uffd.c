// SPDX-License-Identifier: GPL-2.0
/*
 * umode_uffd.c - --mode=uffd, the UMap approach: the space is an anonymous
 * private mapping registered with userfaultfd for missing pages; the
 * paging thread reads the faults, evicts a victim by ARR when the budget
 * is full (WRITE from the mapping, then MADV_DONTNEED), fetches the page
 * from its server into a staging buffer and installs the whole DLM page
 * with UFFDIO_COPY (a page never evicted: UFFDIO_ZEROPAGE for a read,
 * a copy of zeros for a write), which wakes the faulting threads.
 *
 * While a victim is written back it is write-protected
 * (UFFDIO_REGISTER_MODE_WP, anonymous memory since Linux 5.7), so a
 * thread that writes to it meanwhile waits and finds it again after the
 * eviction instead of losing its write.  Without WP support the mode still
 * works for programs with one thread (it says so with -v).
 *
 * UFFDIO_COPY cannot fail an access: when a page cannot be fetched (server
 * dead or silent for UMODE_TIMEOUT_MS), libdlm prints why and sends
 * SIGBUS to the faulting thread (UFFD_FEATURE_THREAD_ID), which is woken
 * by it; with the default action the process ends as under the kernel
 * mode.  If the thread is not known (old kernel) it calls abort().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "umode.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY	1
#endif

typedef unsigned long long ull;

static int copy_in(struct dlmlib_umode *um, char *dst, const char *src)
{
	struct uffdio_copy c;
	uint64_t done = 0;

	while (done < um->page) {
		c = (struct uffdio_copy){
			.dst = (uintptr_t)dst + done,
			.src = (uintptr_t)src + done,
			.len = um->page - done,
		};
		if (!ioctl(um->uffd, UFFDIO_COPY, &c)) {
			done += (uint64_t)c.copy;
			continue;
		}
		if (errno == EAGAIN && c.copy > 0) {
			done += (uint64_t)c.copy;
			continue;
		}
		if (errno == EAGAIN)
			continue;
		return -1;	/* EEXIST cannot happen: whole pages only */
	}
	return 0;
}

static int zero_in(struct dlmlib_umode *um, char *dst)
{
	struct uffdio_zeropage z = {
		.range = { .start = (uintptr_t)dst, .len = um->page },
	};

	while (ioctl(um->uffd, UFFDIO_ZEROPAGE, &z))
		if (errno != EAGAIN)
			return -1;
	return 0;
}

static void wake(struct dlmlib_umode *um, uint64_t p)
{
	struct uffdio_range r = {
		.start = (uintptr_t)um->base + p * um->page, .len = um->page,
	};

	ioctl(um->uffd, UFFDIO_WAKE, &r);
}

static int wprotect(struct dlmlib_umode *um, uint64_t p, int on)
{
	struct uffdio_writeprotect w = {
		.range = { .start = (uintptr_t)um->base + p * um->page,
			   .len = um->page },
		.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};

	return um->wp ? ioctl(um->uffd, UFFDIO_WRITEPROTECT, &w) : 0;
}

static void fail_access(struct dlmlib_umode *um, uint32_t tid)
{
	umode_inc(&um->sigbus);
	if (tid && !syscall(SYS_tgkill, getpid(), (pid_t)tid, SIGBUS))
		return;
	fprintf(stderr, "libdlm: --mode=uffd: cannot fail the access with SIGBUS: abort()\n");
	abort();
}

/* One fault on DLM page @p. */
static void serve(struct dlmlib_umode *um, uint64_t p, int write,
		  uint32_t tid)
{
	char *dst = um->base + p * um->page;
	int64_t v = -1;
	int r;

	if (um->failed)
		return fail_access(um, tid);
	if (um->resident[p]) {	/* a second fault, or a write-protect wait */
		wake(um, p);
		return;
	}
	umode_inc(&um->faults);
	if (um->nresident >= um->budget_pages)
		v = umode_victim(um, p);
	r = umode_fetch(um, p, um->stage);	/* frees the slot first */
	if (r < 0)
		return fail_access(um, tid);
	if (v >= 0) {
		char *vv = um->base + (uint64_t)v * um->page;

		if (wprotect(um, (uint64_t)v, 1) && um->verbose)
			fprintf(stderr, "libdlm: --mode=uffd: UFFDIO_WRITEPROTECT: %s\n",
				strerror(errno));
		if (umode_store(um, (uint64_t)v, vv))
			return fail_access(um, tid);
		madvise(vv, um->page, MADV_DONTNEED);
		um->resident[v] = 0;
		__atomic_store_n(&um->nresident, um->nresident - 1,
				 __ATOMIC_RELAXED);
	}
	if (!r)
		umode_inc(&um->populates);
	if (r)
		r = copy_in(um, dst, um->stage);
	else if (write)
		r = copy_in(um, dst, um->zero);
	else
		r = zero_in(um, dst);
	if (r) {
		fprintf(stderr, "libdlm: --mode=uffd: cannot install DLM page %llu: %s\n",
			(ull)p, strerror(errno));
		um->failed = errno;
		return fail_access(um, tid);
	}
	um->resident[p] = 1;
	__atomic_store_n(&um->nresident, um->nresident + 1, __ATOMIC_RELAXED);
}

static void *thread_main(void *arg)
{
	struct dlmlib_umode *um = arg;
	struct uffd_msg msg[16];
	struct pollfd pfd[2] = {
		{ .fd = um->uffd, .events = POLLIN },
		{ .fd = um->evfd, .events = POLLIN },
	};
	ssize_t n;
	int i;

	for (;;) {
		if (poll(pfd, 2, -1) < 0)
			continue;
		if (pfd[1].revents)
			break;
		n = read(um->uffd, msg, sizeof(msg));
		if (n <= 0)
			continue;
		for (i = 0; i < n / (ssize_t)sizeof(msg[0]); i++) {
			struct uffd_msg *m = &msg[i];
			uint64_t a = m->arg.pagefault.address;

			if (m->event != UFFD_EVENT_PAGEFAULT)
				continue;
			serve(um, (a - (uintptr_t)um->base) / um->page,
			      !!(m->arg.pagefault.flags &
				 UFFD_PAGEFAULT_FLAG_WRITE),
			      m->arg.pagefault.feat.ptid);
		}
	}
	return NULL;
}

static int open_uffd(void)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0 && errno == EPERM)	/* unprivileged: user faults only */
		fd = (int)syscall(SYS_userfaultfd,
				  O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (fd >= 0)
		return fd;
	if (errno == EPERM || errno == EACCES)
		return dlmlib_error(errno,
			"--mode=uffd: userfaultfd() is not allowed to this user: run as root, or allow it: sysctl vm.unprivileged_userfaultfd=1");
	if (errno == ENOSYS)
		return dlmlib_error(errno,
			"--mode=uffd: this kernel has no userfaultfd (CONFIG_USERFAULTFD): use --mode=sigsegv or kernel");
	return dlmlib_error(errno, "--mode=uffd: userfaultfd(): %s",
			    strerror(errno));
}

int umode_uffd_start(struct dlmlib_umode *um)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_THREAD_ID };
	struct uffdio_register reg;
	sigset_t all, old;
	void *p;
	int err;

	um->uffd = open_uffd();
	if (um->uffd < 0)
		return -1;
	if (ioctl(um->uffd, UFFDIO_API, &api)) {
		/* A second UFFDIO_API needs a new fd on some kernels. */
		close(um->uffd);
		um->uffd = open_uffd();
		if (um->uffd < 0)
			return -1;
		api = (struct uffdio_api){ .api = UFFD_API };
		if (ioctl(um->uffd, UFFDIO_API, &api)) {
			err = errno;
			dlmlib_error(err, "--mode=uffd: UFFDIO_API: %s",
				     strerror(err));
			goto fail;
		}
	}
	p = mmap(NULL, um->size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		err = errno;
		dlmlib_error(err, "--mode=uffd: cannot map the %llu MB DLM space: %s (address space limit? see ulimit -v)",
			     (ull)um->size >> 20, strerror(err));
		goto fail;
	}
	um->base = p;
	madvise(p, um->size, MADV_NOHUGEPAGE);
	reg = (struct uffdio_register){
		.range = { .start = (uintptr_t)p, .len = um->size },
		.mode = UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_WP,
	};
	um->wp = 1;
	if (ioctl(um->uffd, UFFDIO_REGISTER, &reg)) {
		reg.mode = UFFDIO_REGISTER_MODE_MISSING;
		um->wp = 0;
		if (ioctl(um->uffd, UFFDIO_REGISTER, &reg)) {
			err = errno;
			dlmlib_error(err, "--mode=uffd: UFFDIO_REGISTER of the space: %s",
				     strerror(err));
			goto fail;
		}
		if (um->verbose)
			fprintf(stderr, "libdlm: --mode=uffd: no write-protect support: a thread writing a DLM page while it is evicted may lose that write; use one thread\n");
	}
	um->stage = mmap(NULL, 2 * um->page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (um->stage == MAP_FAILED) {
		um->stage = NULL;
		err = errno;
		dlmlib_error(err, "--mode=uffd: no memory for the staging buffer");
		goto fail;
	}
	um->zero = um->stage + um->page;
	um->evfd = eventfd(0, EFD_CLOEXEC);
	if (um->evfd < 0) {
		err = errno;
		dlmlib_error(err, "--mode=uffd: eventfd: %s", strerror(err));
		goto fail;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&um->thread, NULL, thread_main, um);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		dlmlib_error(err, "--mode=uffd: cannot start the paging thread: %s",
			     strerror(err));
		goto fail;
	}
	um->thread_started = 1;
	return 0;

fail:
	err = errno;
	umode_uffd_stop(um);
	errno = err;
	return -1;
}

void umode_uffd_stop(struct dlmlib_umode *um)
{
	uint64_t one = 1;

	if (um->thread_started) {
		if (write(um->evfd, &one, sizeof(one)) != sizeof(one))
			pthread_cancel(um->thread);
		pthread_join(um->thread, NULL);
		um->thread_started = 0;
	}
	if (um->evfd >= 0)
		close(um->evfd);
	if (um->base)
		munmap(um->base, um->size);
	if (um->stage)
		munmap(um->stage, 2 * um->page);
	if (um->uffd >= 0)
		close(um->uffd);
	um->base = um->stage = um->zero = NULL;
	um->uffd = um->evfd = -1;
}

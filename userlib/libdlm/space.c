// SPDX-License-Identifier: GPL-2.0
/*
 * space.c - the DLM space of dlm_startup(): /dev/dlm handshake, setup with
 * local or remote backing, one MAP_SHARED mapping of the whole space.
 * Every failure explains itself in terms of what the user can change.
 */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "umode.h"

#define DLM_DEV		"/dev/dlm"

typedef unsigned long long ull;

static uint64_t round_up(uint64_t x, uint64_t to)
{
	return (x + to - 1) / to * to;
}

static int open_dev(void)
{
	int fd = open(DLM_DEV, O_RDWR | O_CLOEXEC), err = errno;

	if (fd >= 0)
		return fd;
	if (err == ENOENT || err == ENXIO || err == ENODEV)
		return dlmlib_error(err,
			"cannot open %s: %s: load the DLM module first: modprobe dlmem (or insmod kmod/dlmem.ko)",
			DLM_DEV, strerror(err));
	if (err == EACCES || err == EPERM)
		return dlmlib_error(err,
			"cannot open %s: %s: give this user read-write access to it (see Documentation/admin-guide.rst)",
			DLM_DEV, strerror(err));
	return dlmlib_error(err, "cannot open %s: %s", DLM_DEV, strerror(err));
}

/* Sizes of the space from @c and the kernel's limits @in, into @s. */
static int plan(const struct dlmlib_config *c, const struct dlm_info *in,
		struct dlmlib_space *sp)
{
	struct dlm_setup *s = &sp->setup;
	uint64_t page = in->page_size_default, local, remote = 0;

	if (c->page_kb) {
		page = c->page_kb * 1024;
		if (page % in->page_size_min || page > in->page_size_max)
			return dlmlib_error(EINVAL,
				"%s %llu: the DLM page size must be a multiple of %u KB up to %llu KB",
				c->page_src, (ull)c->page_kb,
				in->page_size_min / 1024,
				(ull)in->page_size_max / 1024);
	}
	if (!page)
		return dlmlib_error(EINVAL, "the kernel reports a DLM page size of 0");

	if (c->memfile || c->local_mb) {
		local = round_up(c->local_mb * DLMLIB_MB, page);
		remote = round_up(c->servers_mb * DLMLIB_MB, page);
	} else {	/* the documented default, within the kernel's limit */
		local = round_up(DLM_DEFAULT_LOCAL_MB * DLMLIB_MB, page);
		if (local > in->local_budget_max)
			local = in->local_budget_max / page * page;
		if (!local)
			local = page;
	}

	*s = (struct dlm_setup){
		.backing = c->servers ? DLM_BACKING_REMOTE : DLM_BACKING_LOCAL,
		.page_size = page,
		.total_size = local + remote,
		.local_budget = local,
		.policy = c->servers ? c->policy : 0,
		.protocol = c->servers ? c->protocol : 0,
	};
	sp->remote_size = remote;
	sp->servers = c->servers;

	if (s->total_size > in->total_size_max || s->total_size > SIZE_MAX)
		return dlmlib_error(EFBIG,
			"a DLM space of %llu MB is larger than this kernel allows (%llu MB): lower the sizes in the memfile",
			(ull)s->total_size >> 20,
			(ull)(in->total_size_max < SIZE_MAX ?
			      in->total_size_max : SIZE_MAX) >> 20);
	return 0;
}

static int handshake(int fd, const struct dlmlib_config *c)
{
	struct dlm_api api = {
		.api = DLM_API_VERSION,
		.features = c->servers ? DLM_FEATURE_REMOTE : DLM_FEATURE_LOCAL,
	};
	int err;

	if (!ioctl(fd, DLM_IOC_API, &api))
		return 0;
	err = errno;
	if (err == EOPNOTSUPP && c->servers)
		return -2;	/* told like a refused remote setup */
	if (err == EPROTONOSUPPORT)
		return dlmlib_error(err,
			"dlmem.ko speaks DLM API version %u, libdlm version %u: use a libdlm built for the loaded module (or load the matching dlmem.ko)",
			api.api, DLM_API_VERSION);
	return dlmlib_error(err, "DLM_IOC_API handshake failed: %s",
			    strerror(err));
}

static int setup_error(int err, const struct dlmlib_config *c,
		       const struct dlm_info *in, const struct dlm_setup *s)
{
	const char *mf = c->memfile ? c->memfile : "MEMFILE";

	switch (err) {
	case EOPNOTSUPP:
		return dlmlib_error(err,
			"memfile '%s' names %u memory server(s), but this kernel's dlmem.ko has no remote backing (no DLM_FEATURE_REMOTE): load a dlmem.ko built with it and start dlmd -f %s first, or remove the server lines to run in local memory only",
			mf, c->servers, mf);
	case ENOTCONN:
		return dlmlib_error(err,
			"memfile '%s' names %u memory server(s), but no dlmd daemon is registered with the kernel: start dlmd -f %s first",
			mf, c->servers, mf);
	case ENOSPC:
		return dlmlib_error(err,
			"the memory servers cannot hold the %llu MB beyond the local budget: check that dlmd -f %s reaches every server of the memfile and that they have that much memory free, or lower the server sizes",
			(ull)(s->total_size - s->local_budget) >> 20, mf);
	case ENOMEM:
		if (c->servers && s->local_budget <= in->local_budget_max)
			return dlmlib_error(err,
				"dlmd's frame pool has no %llu MB free for this program's local budget: lower the local MB (first line of '%s') or give dlmd a larger one",
				(ull)s->local_budget >> 20, mf);
		if (s->local_budget <= in->local_budget_max)
			break;
		return dlmlib_error(err,
			"a local budget of %llu MB is more than this kernel allows (%llu MB): lower the local size (first memfile line, or DLM_LOCAL_MB), or raise it: modprobe dlmem max_local_mb=N",
			(ull)s->local_budget >> 20,
			(ull)in->local_budget_max >> 20);
	case EFBIG:
		return dlmlib_error(err,
			"a DLM space of %llu MB is larger than this kernel allows (%llu MB): lower the sizes in the memfile",
			(ull)s->total_size >> 20, (ull)in->total_size_max >> 20);
	case EDQUOT:
		return dlmlib_error(err,
			"this user is at a per-user DLM limit (module parameters max_user_spaces, max_user_mb, max_user_local_mb in /sys/module/dlmem/parameters): close other DLM programs, use a smaller space, or ask the administrator to raise the limit");
	case ETIMEDOUT:
		return dlmlib_error(err,
			"dlmd did not answer the kernel in time (module parameter request_timeout_ms): check that dlmd -f %s is running and its log",
			mf);
	case EINVAL:
		return dlmlib_error(err,
			"the kernel refused the DLM space (%llu bytes, budget %llu, page %llu): enable dyndbg ('module dlmem +p') to see which field",
			(ull)s->total_size, (ull)s->local_budget,
			(ull)s->page_size);
	default:
		break;
	}
	return dlmlib_error(err, "DLM_IOC_SETUP failed: %s", strerror(err));
}

int dlmlib_space_open(const struct dlmlib_config *c, struct dlmlib_space *sp)
{
	struct dlm_info in;
	int fd, ret, err;
	void *p;

	if (c->mode != DLMLIB_MODE_KERNEL) {	/* libdlm pages it: umode.c */
		if (c->protocol)
			return dlmlib_error(EINVAL,
				"--protocol (DLM_PROTOCOL) chooses the kernel's swap protocol: it needs --mode kernel (the default), not %s",
				c->mode == DLMLIB_MODE_SIGSEGV ? "sigsegv" : "uffd");
		return dlmlib_umode_open(c, sp);
	}
	*sp = (struct dlmlib_space){ .fd = -1 };
	fd = open_dev();
	if (fd < 0)
		return -1;
	sp->fd = fd;
	if (ioctl(fd, DLM_IOC_GET_INFO, &in)) {
		err = errno;
		ret = dlmlib_error(err,
			"DLM_IOC_GET_INFO on %s failed: %s (is it dlmem.ko's device?)",
			DLM_DEV, strerror(err));
		goto fail;
	}
	ret = plan(c, &in, sp);
	if (ret)
		goto fail;
	ret = handshake(fd, c);
	if (ret == -2)
		ret = setup_error(EOPNOTSUPP, c, &in, &sp->setup);
	if (ret)
		goto fail;
	if (ioctl(fd, DLM_IOC_SETUP, &sp->setup)) {
		ret = setup_error(errno, c, &in, &sp->setup);
		goto fail;
	}
	p = mmap(NULL, sp->setup.total_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, (off_t)sp->setup.mmap_offset);
	if (p == MAP_FAILED) {
		err = errno;
		ret = dlmlib_error(err,
			"cannot map the %llu MB DLM space: %s (address space limit? see ulimit -v)",
			(ull)sp->setup.total_size >> 20, strerror(err));
		goto fail;
	}
	sp->base = p;
	return 0;

fail:
	err = errno;
	close(fd);
	sp->fd = -1;
	errno = err;
	return ret;
}

void dlmlib_space_close(struct dlmlib_space *sp)
{
	if (sp->um) {
		dlmlib_umode_close(sp);
		return;
	}
	if (sp->base)
		munmap(sp->base, sp->setup.total_size);
	if (sp->fd >= 0)
		close(sp->fd);
	*sp = (struct dlmlib_space){ .fd = -1 };
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * init.c - fmpl_init and fmpl_finalize: the environment, /dev/fmpl, the
 * FMPL_IOC_API handshake, FMPL_IOC_INIT, the matching and flag areas, and
 * the cache of communicators (FMPL_IOC_COMM_INFO).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

struct fmpllib_state fmpllib_g = { .fd = -1 };
int fmpllib_inited;
/* fmpl_coll_mode() before fmpl_init wins over FMPL_COLL. */
static int coll_explicit = -1;

/* The features libfmpl uses; P2P is required, the rest used if there. */
#define FMPLLIB_FEATURES	(FMPL_FEATURE_P2P | FMPL_FEATURE_SPOOL | \
				 FMPL_FEATURE_ANY_SOURCE | FMPL_FEATURE_COLL | \
				 FMPL_FEATURE_FAST | FMPL_FEATURE_COMM_FREE)

FMPLLIB_PUBLIC size_t fmpl_ma_bytes(int size, int count)
{
	if (size < 1 || count < 1)
		return 0;
	return FMPL_AREA_BYTES(size, count + FMPL_LIB_RESERVED_MAI,
			       struct fmpl_header);
}

FMPLLIB_PUBLIC size_t fmpl_fa_bytes(int size, int count)
{
	if (size < 1 || count < 1)
		return 0;
	return FMPL_AREA_BYTES(size, count + FMPL_LIB_RESERVED_MAI,
			       struct fmpl_flag);
}

FMPLLIB_PUBLIC double fmpl_wtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void comm_free(struct fmpllib_comm *c)
{
	if (c) {
		free(c->members);
		free(c);
	}
}

struct fmpllib_comm *fmpllib_comm_load(uint32_t id, int *err)
{
	struct fmpl_comm_info ci = { .comm = id };
	struct fmpllib_comm *c;

	if (ioctl(fmpllib_g.fd, FMPL_IOC_COMM_INFO, &ci)) {
		*err = errno;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->members = calloc(ci.size ? ci.size : 1, sizeof(uint32_t))))
		goto nomem;
	ci.members = (uintptr_t)c->members;
	ci.members_len = ci.size;
	if (ioctl(fmpllib_g.fd, FMPL_IOC_COMM_INFO, &ci)) {
		*err = errno;
		comm_free(c);
		return NULL;
	}
	c->id = id;
	c->rank = (int)ci.rank;
	c->size = (int)ci.size;
	fmpllib_comm_drop(id);
	fmpllib_g.comms[id % FMPLLIB_COMM_CACHE] = c;
	return c;
nomem:
	comm_free(c);
	*err = ENOMEM;
	return NULL;
}

void fmpllib_comm_drop(uint32_t id)
{
	struct fmpllib_comm **slot = &fmpllib_g.comms[id % FMPLLIB_COMM_CACHE];

	comm_free(*slot);
	*slot = NULL;
}

int fmpllib_comm(int id, struct fmpllib_comm **cp)
{
	int err;

	*cp = NULL;
	if (!fmpllib_inited) {
		errno = EINVAL;
		return FMPL_ERR_INIT;
	}
	if (id < 0) {
		errno = EINVAL;
		return FMPL_ERR_ARG;
	}
	*cp = fmpllib_g.comms[(uint32_t)id % FMPLLIB_COMM_CACHE];
	if (*cp && (*cp)->id == (uint32_t)id)
		return FMPL_SUCCESS;
	*cp = fmpllib_comm_load((uint32_t)id, &err);
	if (*cp)
		return FMPL_SUCCESS;
	errno = err;
	return fmpllib_ier(err);
}

/* Print the reason for a failed fmpl_init and return its code. */
static int init_fail(int *ier, int code, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int init_fail(int *ier, int code, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return fmpllib_ret(ier, code, err);
}

static void *map_area(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void release_state(void)
{
	size_t i;

	if (fmpllib_g.fd >= 0)
		close(fmpllib_g.fd);
	if (fmpllib_g.ma_len)
		munmap(fmpllib_g.ma, fmpllib_g.ma_len);
	if (fmpllib_g.fa_len)
		munmap(fmpllib_g.fa, fmpllib_g.fa_len);
	if (fmpllib_g.fast)
		munmap(fmpllib_g.fast, fmpllib_g.fast_len);
	free(fmpllib_g.fast_posts);
	for (i = 0; i < FMPLLIB_COMM_CACHE; i++)
		comm_free(fmpllib_g.comms[i]);
	free(fmpllib_g.isend);
	memset(&fmpllib_g, 0, sizeof(fmpllib_g));
	fmpllib_g.fd = -1;
}

static const char *launcher_name(enum fmpllib_src src)
{
	switch (src) {
	case FMPLLIB_SRC_OMPI:
		return "OMPI_COMM_WORLD_RANK/_SIZE";
	case FMPLLIB_SRC_PMI:
		return "PMI_RANK/PMI_SIZE";
	default:
		return "FMPL_RANK/FMPL_SIZE";
	}
}

static int handshake(const struct fmpllib_env *e, int *ier)
{
	struct fmpl_info info;
	struct fmpl_api api = { .api = FMPL_API_VERSION };
	int fd = fmpllib_g.fd, err;

	memset(&info, 0, sizeof(info));
	if (ioctl(fd, FMPL_IOC_GET_INFO, &info)) {
		err = errno;
		return init_fail(ier, FMPL_ERR_NODEV, err,
			"libfmpl: %s does not answer FMPL_IOC_GET_INFO (%s): it is not /dev/fmpl of dlmem.ko",
			e->dev, strerror(err));
	}
	api.features = FMPL_FEATURE_P2P | (info.features & FMPLLIB_FEATURES);
	if (ioctl(fd, FMPL_IOC_API, &api)) {
		err = errno;
		if (err == EPROTONOSUPPORT)
			return init_fail(ier, FMPL_ERR_NODEV, err,
				"libfmpl: the kernel speaks FMPL API %u, this libfmpl %u: rebuild libfmpl against the running dlmem.ko's <linux/fmpl.h>",
				api.api, FMPL_API_VERSION);
		return init_fail(ier, fmpllib_ier_init(err), err,
			"libfmpl: FMPL_IOC_API handshake failed: %s%s",
			strerror(err), err == EOPNOTSUPP ?
			" (this /dev/fmpl lacks point-to-point messaging)" : "");
	}
	fmpllib_g.features = api.features & FMPLLIB_FEATURES;
	fmpllib_g.msg_max = info.msg_max;
	if ((unsigned int)e->size > info.ranks_max && info.ranks_max)
		return init_fail(ier, FMPL_ERR_ARG, EINVAL,
			"libfmpl: %d ranks, but this kernel's /dev/fmpl allows at most %u: start fewer ranks",
			e->size, info.ranks_max);
	if (info.count_max &&
	    fmpllib_g.kcount > info.count_max)
		return init_fail(ier, FMPL_ERR_ARG, EINVAL,
			"libfmpl: count %u is too large: this kernel allows %u matching indices, %u of which libfmpl keeps for its collectives (at most %u)",
			fmpllib_g.count, info.count_max, FMPL_LIB_RESERVED_MAI,
			info.count_max - FMPL_LIB_RESERVED_MAI);
	return 0;
}

/* FMPL_FAST: the fast indices (at most the user's count) and their table. */
static int fast_prepare(const struct fmpllib_env *e, int *ier)
{
	if (!e->fast)
		return 0;
	if (!(fmpllib_g.features & FMPL_FEATURE_FAST))
		return init_fail(ier, FMPL_ERR_NODEV, EOPNOTSUPP,
			"libfmpl: FMPL_FAST=%u, but this kernel's /dev/fmpl has no fast area: unset FMPL_FAST or load a newer dlmem.ko",
			e->fast);
	fmpllib_g.fast_count = e->fast < fmpllib_g.count ? e->fast :
							   fmpllib_g.count;
	if (fmpl_fast_bytes((uint32_t)e->size, fmpllib_g.fast_count) >
	    (8U << 20))
		return init_fail(ier, FMPL_ERR_ARG, EINVAL,
			"libfmpl: FMPL_FAST=%u with %d ranks needs a fast area over 8 MiB: lower FMPL_FAST",
			fmpllib_g.fast_count, e->size);
	fmpllib_g.fast_posts = calloc((size_t)e->size * fmpllib_g.fast_count,
				      sizeof(*fmpllib_g.fast_posts));
	if (!fmpllib_g.fast_posts)
		return init_fail(ier, FMPL_ERR_NOMEM, ENOMEM,
				 "libfmpl: out of memory");
	return 0;
}

/* Map the world's fast area, shared by every rank. */
static int fast_map(const struct fmpllib_env *e, int *ier)
{
	size_t len;
	void *p;
	int err;

	if (!fmpllib_g.fast_count)
		return 0;
	len = fmpl_fast_bytes((uint32_t)e->size, fmpllib_g.fast_count);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fmpllib_g.fd,
		 0);
	if (p == MAP_FAILED) {
		err = errno;
		return init_fail(ier, FMPL_ERR_NOMEM, err,
				 "libfmpl: cannot map the fast area (%zu bytes): %s",
				 len, strerror(err));
	}
	fmpllib_g.fast = p;
	fmpllib_g.fast_len = len;
	return 0;
}

static int join(const struct fmpllib_env *e, int *ier)
{
	struct fmpl_init in = {
		.key = e->key,
		.size = (uint32_t)e->size,
		.rank = (uint32_t)e->rank,
		.mode = e->mode,
		.count = fmpllib_g.kcount,
		.join_timeout_ms = e->join_timeout_ms,
		.fast_count = fmpllib_g.fast_count,
		.ma = (uintptr_t)fmpllib_g.ma,
		.fa = (uintptr_t)fmpllib_g.fa,
	};
	int err;

	if (!ioctl(fmpllib_g.fd, FMPL_IOC_INIT, &in))
		return 0;
	err = errno;
	switch (err) {
	case ETIMEDOUT:
		return init_fail(ier, FMPL_ERR_TIMEOUT, err,
			"libfmpl: rank %d of %d: the other ranks did not all join within %u ms (key %#llx%s): start all %d with the same FMPL_KEY and size, e.g. fmplrun -np %d, or raise FMPL_JOIN_TIMEOUT_MS",
			e->rank, e->size, e->join_timeout_ms ? e->join_timeout_ms : 30000,
			(unsigned long long)e->key,
			e->key_derived ? ", derived from the parent process" : "",
			e->size, e->size);
	case EACCES:
	case EPERM:
		return init_fail(ier, FMPL_ERR_PERM, err,
			"libfmpl: may not join the world of key %#llx: it was created by another user; its first rank can allow others with FMPL_MODE=group or FMPL_MODE=any",
			(unsigned long long)e->key);
	case EADDRINUSE:
		return init_fail(ier, FMPL_ERR_INIT, err,
			"libfmpl: rank %d of the world of key %#llx is taken (or the world is complete): another job uses this key; give each job its own FMPL_KEY (fmplrun does)",
			e->rank, (unsigned long long)e->key);
	case EEXIST:
		return init_fail(ier, FMPL_ERR_INIT, err,
			"libfmpl: a world of key %#llx exists with a different size than %d (from %s), another count than %u or another FMPL_FAST than %u: another job uses this key (give each job its own FMPL_KEY), or the ranks disagree on fmpl_init()'s count or FMPL_FAST",
			(unsigned long long)e->key, e->size, launcher_name(e->src),
			fmpllib_g.count,
			fmpllib_g.fast_count);
	case ENOMEM:
		return init_fail(ier, FMPL_ERR_NOMEM, err,
			"libfmpl: FMPL_IOC_INIT (rank %d of %d, count %u): pinning the matching and flag areas would pass this process's locked-memory limit (RLIMIT_MEMLOCK), or the kernel is out of memory: raise ulimit -l (memlock in /etc/security/limits.conf)",
			e->rank, e->size, fmpllib_g.kcount);
	case EBUSY:
		return init_fail(ier, FMPL_ERR_INIT, err,
			"libfmpl: this file already joined a world");
	case ECONNRESET:
		return init_fail(ier, FMPL_ERR_PEER, err,
			"libfmpl: the world of key %#llx lost a rank while joining",
			(unsigned long long)e->key);
	default:
		return init_fail(ier, fmpllib_ier_init(err), err,
			"libfmpl: FMPL_IOC_INIT (rank %d of %d, count %u) failed: %s",
			e->rank, e->size, fmpllib_g.kcount, strerror(err));
	}
}

FMPLLIB_PUBLIC int fmpl_init(void *ma, void *fa, int count, int *ier)
{
	struct fmpllib_env e;
	char msg[512];
	int ret, err;
	struct fmpllib_comm *world;

	if (fmpllib_inited)
		return init_fail(ier, FMPL_ERR_INIT, EBUSY,
			"libfmpl: fmpl_init called twice (call fmpl_finalize first)");
	if (count < 1 || count > 0x7fffffff - FMPL_LIB_RESERVED_MAI)
		return init_fail(ier, FMPL_ERR_ARG, EINVAL,
			"libfmpl: fmpl_init: count %d: give the number of matching indices per peer, >= 1",
			count);
	if (!ma != !fa)
		return init_fail(ier, FMPL_ERR_ARG, EINVAL,
			"libfmpl: fmpl_init: pass both areas or neither (NULL, NULL: libfmpl allocates them)");
	if (((uintptr_t)ma | (uintptr_t)fa) & 7)
		return init_fail(ier, FMPL_ERR_ARG, EINVAL,
			"libfmpl: fmpl_init: the matching and flag areas must be 8-byte aligned");
	ret = fmpllib_parse_env(&e, msg, sizeof(msg));
	if (ret)
		return init_fail(ier, ret, EINVAL, "%s", msg);

	release_state();
	fmpllib_g.rank = e.rank;
	fmpllib_g.size = e.size;
	fmpllib_g.count = (unsigned int)count;
	fmpllib_g.kcount = (unsigned int)count + FMPL_LIB_RESERVED_MAI;
	fmpllib_g.spin_us = e.spin_us;
	fmpllib_g.coll = coll_explicit >= 0 ? coll_explicit :
			 e.coll >= 0 ? e.coll : FMPL_COLL_AUTO;

	fmpllib_g.fd = open(e.dev, O_RDWR | O_CLOEXEC);
	if (fmpllib_g.fd < 0) {
		err = errno;
		if (err == ENOENT || err == ENODEV || err == ENXIO)
			ret = init_fail(ier, FMPL_ERR_NODEV, err,
				"libfmpl: cannot open %s (%s): load dlmem.ko built with /dev/fmpl (CONFIG_DLMEM_FMPL=y): modprobe dlmem",
				e.dev, strerror(err));
		else
			ret = init_fail(ier, fmpllib_ier_init(err), err,
				"libfmpl: cannot open %s: %s", e.dev,
				strerror(err));
		goto fail;
	}
	ret = handshake(&e, ier);
	if (ret)
		goto fail;

	if (!ma) {
		fmpllib_g.ma_len = fmpl_ma_bytes(e.size, count);
		fmpllib_g.fa_len = fmpl_fa_bytes(e.size, count);
		fmpllib_g.ma = map_area(fmpllib_g.ma_len);
		fmpllib_g.fa = map_area(fmpllib_g.fa_len);
		if (!fmpllib_g.ma || !fmpllib_g.fa) {
			if (!fmpllib_g.ma)
				fmpllib_g.ma_len = 0;
			if (!fmpllib_g.fa)
				fmpllib_g.fa_len = 0;
			ret = init_fail(ier, FMPL_ERR_NOMEM, ENOMEM,
				"libfmpl: no memory for the matching and flag areas (%zu bytes)",
				fmpl_ma_bytes(e.size, count) +
				fmpl_fa_bytes(e.size, count));
			goto fail;
		}
	} else {
		fmpllib_g.ma = ma;
		fmpllib_g.fa = fa;
	}
	fmpllib_g.isend = calloc((size_t)e.size, fmpllib_g.kcount);
	if (!fmpllib_g.isend) {
		ret = init_fail(ier, FMPL_ERR_NOMEM, ENOMEM,
				"libfmpl: out of memory");
		goto fail;
	}

	ret = fast_prepare(&e, ier);
	if (ret)
		goto fail;
	ret = join(&e, ier);
	if (ret)
		goto fail;
	ret = fast_map(&e, ier);
	if (ret)
		goto fail;
	fmpllib_inited = 1;
	world = fmpllib_comm_load(FMPL_COMM_WORLD, &err);
	if (!world) {
		fmpllib_inited = 0;
		ret = init_fail(ier, fmpllib_ier(err), err,
				"libfmpl: FMPL_IOC_COMM_INFO of the world failed: %s",
				strerror(err));
		goto fail;
	}
	return fmpllib_ret(ier, FMPL_SUCCESS, 0);
fail:
	err = errno;
	release_state();
	errno = err;
	return ret;
}

/* Wait until every spooled message has been received (or its peer left). */
static void drain_spool(void)
{
	struct fmpl_sendbuf_stat st;
	struct timespec ms = { 0, 1000000 };

	if (!fmpllib_g.spool_set)
		return;
	for (;;) {
		memset(&st, 0, sizeof(st));
		if (ioctl(fmpllib_g.fd, FMPL_IOC_SENDBUF_CHECK, &st) ||
		    !st.nspool)
			return;
		nanosleep(&ms, NULL);
	}
}

FMPLLIB_PUBLIC int fmpl_finalize(int *ier)
{
	if (!fmpllib_inited)
		return fmpllib_ret(ier, FMPL_ERR_INIT, EINVAL);
	/*
	 * Leaving breaks the world for the others: deliver what is spooled,
	 * then wait until every rank has come here (failures are ignored:
	 * a rank that died has broken the world already).
	 */
	drain_spool();
	fmpllib_barrier_quiet();
	fmpllib_inited = 0;
	release_state();
	return fmpllib_ret(ier, FMPL_SUCCESS, 0);
}

FMPLLIB_PUBLIC int fmpl_comm_rank(int comm, int *rank, int *ier)
{
	struct fmpllib_comm *c;
	int ret = fmpllib_comm(comm, &c);

	if (ret)
		return fmpllib_ret(ier, ret, 0);
	if (rank)
		*rank = c->rank;
	return fmpllib_ret(ier, FMPL_SUCCESS, 0);
}

FMPLLIB_PUBLIC int fmpl_comm_size(int comm, int *size, int *ier)
{
	struct fmpllib_comm *c;
	int ret = fmpllib_comm(comm, &c);

	if (ret)
		return fmpllib_ret(ier, ret, 0);
	if (size)
		*size = c->size;
	return fmpllib_ret(ier, FMPL_SUCCESS, 0);
}

FMPLLIB_PUBLIC int fmpl_coll_mode(int mode)
{
	int old = fmpllib_inited ? fmpllib_g.coll :
		  coll_explicit >= 0 ? coll_explicit : FMPL_COLL_AUTO;

	if (mode != FMPL_COLL_AUTO && mode != FMPL_COLL_NATIVE &&
	    mode != FMPL_COLL_TREE) {
		errno = EINVAL;
		return -1;
	}
	coll_explicit = mode;
	fmpllib_g.coll = mode;
	return old;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * preload.c - libdlm-preload.so: DLM memory for unmodified programs.
 *
 *	LD_PRELOAD=libdlm-preload.so DLM_MEMFILE=memfile program ...
 *
 * Allocations of at least DLM_PRELOAD_MIN bytes (default 1 MB) - malloc,
 * calloc, realloc, reallocarray, posix_memalign, aligned_alloc, memalign,
 * valloc, pvalloc and private anonymous mmap - come from a DLM space made
 * on the first of them; smaller ones stay with glibc.  That is the
 * difference from JumboMem, which sent every allocation to remote memory:
 * the program's small, hot data stays local, its big arrays go to DLM.
 *
 * One global mutex guards the state; allocations inside libdlm itself
 * (config, memfile, allocator metadata) go straight to glibc through a
 * per-thread guard, so nothing recurses.  fork(): the child keeps the
 * parent's DLM blocks mapped (shared with the parent, see
 * Documentation/transparency.rst), never reuses their ranges, and makes a
 * space of its own for its new allocations.  Documentation of the
 * variables: userlib/README.md and Documentation/transparency.rst.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arena.h"
#include "internal.h"

#define EXPORT		__attribute__((visibility("default")))
#define DEFAULT_MIN	(1UL << 20)
#define INHERITED_MAX	8	/* spaces kept from ancestors across forks */

typedef unsigned long long ull;

/* glibc's allocator, reached without going through our own symbols. */
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t align, size_t size);
void __libc_free(void *p);

struct range {
	uintptr_t lo, hi;
};

static struct {
	pthread_mutex_t lock;
	int state;		/* 0 none yet, 1 ready, -1 failed */
	int verbose;
	int fallback;		/* DLM_PRELOAD_FALLBACK: failed -> glibc */
	int take_mmap;		/* DLM_PRELOAD_MMAP */
	size_t min;		/* DLM_PRELOAD_MIN */
	int configured;
	struct dlmlib_space sp;
	struct dlmlib_arena arena;
	uintptr_t fresh;	/* ranges from here up were never handed out */
	struct range inherited[INHERITED_MAX];
	int ninherited;
	ull blocks, bytes;	/* handed out, for the verbose summary */
} g = { .lock = PTHREAD_MUTEX_INITIALIZER };

static __thread int guard;	/* inside libdlm: allocate from glibc */

/* g.state is read without the lock: the space's fields are set before it
 * becomes 1 (release), and read after seeing 1 (acquire). */
static int state(void)
{
	return __atomic_load_n(&g.state, __ATOMIC_ACQUIRE);
}

static void set_state(int v)
{
	__atomic_store_n(&g.state, v, __ATOMIC_RELEASE);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(2, buf, n) < 0)
		return;
}

/* "4096", "64K", "1M", "2G": bytes, or 0 if not a size. */
static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return 0;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	return *end ? 0 : (size_t)v;
}

static int env_flag(const char *name, int def)
{
	const char *s = getenv(name);

	return s && *s ? strcmp(s, "0") != 0 : def;
}

/* Thresholds and switches, once; getenv() allocates nothing. */
static void configure(void)
{
	const char *s;

	if (g.configured)
		return;
	g.configured = 1;
	g.min = DEFAULT_MIN;
	s = getenv("DLM_PRELOAD_MIN");
	if (s && *s) {
		g.min = parse_size(s);
		if (!g.min) {
			say("libdlm-preload: DLM_PRELOAD_MIN '%s' is not a size such as 65536, 64K or 1M: using 1M", s);
			g.min = DEFAULT_MIN;
		}
	}
	g.fallback = env_flag("DLM_PRELOAD_FALLBACK", 0);
	g.take_mmap = env_flag("DLM_PRELOAD_MMAP", 1);
}

/* Make the space from the environment; called with g.lock and guard. */
static void make_space(void)
{
	struct dlmlib_config c = { 0 };
	const struct dlm_setup *s = &g.sp.setup;

	if (dlmlib_parse_args(&c, 0, NULL) || dlmlib_parse_env(&c) ||
	    dlmlib_read_memfile(&c) || dlmlib_space_open(&c, &g.sp))
		goto fail;
	if (dlmlib_arena_init(&g.arena, (uintptr_t)g.sp.base, s->total_size,
			      s->page_size)) {
		dlmlib_space_close(&g.sp);
		dlmlib_error(ENOMEM, "no memory for the allocator");
		goto fail;
	}
	g.fresh = (uintptr_t)g.sp.base;
	g.verbose = c.verbose;
	set_state(1);
	if (g.verbose)
		say("libdlm-preload: pid %d: DLM space of %llu MB in %llu KB DLM pages, local budget %llu MB, %u memory server(s); allocations of %zu bytes and more go there",
		    (int)getpid(), (ull)s->total_size >> 20,
		    (ull)s->page_size >> 10, (ull)s->local_budget >> 20,
		    g.sp.servers, g.min);
	return;
fail:
	set_state(-1);
	say("libdlm-preload: pid %d: no DLM space: %s; allocations of %zu bytes and more %s",
	    (int)getpid(), dlm_last_error(), g.min,
	    g.fallback ? "use local memory (DLM_PRELOAD_FALLBACK=1)" :
	    "fail with ENOMEM (set DLM_PRELOAD_FALLBACK=1 to use local memory instead)");
}

static int in_range(uintptr_t a, uintptr_t lo, uintptr_t hi)
{
	return a >= lo && a < hi;
}

static int in_space(const void *p)
{
	return state() == 1 &&
	       in_range((uintptr_t)p, (uintptr_t)g.sp.base,
			(uintptr_t)g.sp.base + g.sp.setup.total_size);
}

/* Bytes from @p to the end of the inherited space holding it, or 0. */
static size_t inherited_left(const void *p)
{
	int i;

	for (i = 0; i < g.ninherited; i++)
		if (in_range((uintptr_t)p, g.inherited[i].lo, g.inherited[i].hi))
			return g.inherited[i].hi - (uintptr_t)p;
	return 0;
}

static int in_inherited(const void *p)
{
	return inherited_left(p) != 0;
}

/*
 * A DLM block of @size bytes, zeroed if @zero; NULL with *fallback set
 * when glibc should serve it instead, NULL + ENOMEM when it fails.
 */
static void *dlm_get(size_t size, int zero, int *fallback)
{
	uintptr_t p, end;
	void *ret = NULL;

	*fallback = 0;
	guard++;
	pthread_mutex_lock(&g.lock);
	if (!g.state)
		make_space();
	if (g.state != 1) {
		*fallback = g.fallback;
		errno = ENOMEM;
		goto out;
	}
	ret = dlmlib_arena_alloc(&g.arena, size);
	if (!ret) {
		say("libdlm-preload: pid %d: the %llu MB DLM space has no free range of %zu bytes: give it more in the memfile (DLM_MEMFILE)",
		    (int)getpid(), (ull)g.sp.setup.total_size >> 20, size);
		errno = ENOMEM;
		goto out;
	}
	/* Never handed out: reads as zero already, with no fault. */
	p = (uintptr_t)ret;
	end = p + size;
	if (zero && p < g.fresh)
		memset(ret, 0, (end < g.fresh ? end : g.fresh) - p);
	if (end > g.fresh)
		g.fresh = end;
	g.blocks++;
	g.bytes += size;
out:
	pthread_mutex_unlock(&g.lock);
	guard--;
	return ret;
}

/* Size of the DLM block @p, 0 if it is not one of this process's. */
static size_t dlm_size(const void *p)
{
	size_t n;

	guard++;
	n = dlmlib_arena_size(&g.arena, p);
	guard--;
	return n;
}

static void dlm_put(void *p)
{
	int bad;

	if (in_inherited(p))	/* the parent's: it still owns the range */
		return;
	guard++;
	pthread_mutex_lock(&g.lock);
	bad = dlmlib_arena_free(&g.arena, p);
	pthread_mutex_unlock(&g.lock);
	guard--;
	if (bad) {
		say("libdlm-preload: free(): invalid pointer %p inside the DLM space (freed twice, or not the start of a block)",
		    p);
		abort();
	}
}

static int wants_dlm(size_t size)
{
	configure();
	return !guard && size >= g.min;
}

static int is_dlm(const void *p)
{
	return p && (in_space(p) || in_inherited(p));
}

EXPORT void *malloc(size_t size)
{
	int fb;
	void *p;

	if (!wants_dlm(size))
		return __libc_malloc(size);
	p = dlm_get(size, 0, &fb);
	return fb ? __libc_malloc(size) : p;
}

EXPORT void free(void *p)
{
	if (is_dlm(p))
		dlm_put(p);
	else
		__libc_free(p);
}

EXPORT void *calloc(size_t n, size_t size)
{
	size_t bytes;
	int fb;
	void *p;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	if (!wants_dlm(bytes))
		return __libc_calloc(n, size);
	p = dlm_get(bytes, 1, &fb);
	return fb ? __libc_calloc(n, size) : p;
}

/* Bytes usable at @p, DLM block or glibc's. */
static size_t usable(void *p)
{
	static size_t (*libc_usable)(void *);

	if (is_dlm(p))
		return in_inherited(p) ? 0 : dlm_size(p);
	if (!libc_usable) {
		guard++;
		libc_usable = (size_t (*)(void *))dlsym(RTLD_NEXT,
							"malloc_usable_size");
		guard--;
	}
	return libc_usable ? libc_usable(p) : 0;
}

EXPORT size_t malloc_usable_size(void *p)
{
	return p ? usable(p) : 0;
}

EXPORT void *realloc(void *p, size_t size)
{
	size_t old;
	void *q;

	if (!p)
		return malloc(size);
	if (!is_dlm(p) && !wants_dlm(size))
		return __libc_realloc(p, size);
	if (!size) {
		free(p);
		return NULL;
	}
	if (in_inherited(p)) {
		/* A block of the parent's: its size is in the parent's
		 * books, so copy as much as the new block holds (the space
		 * is mapped whole, so this reads no unmapped byte). */
		old = inherited_left(p);
		q = malloc(size);
		if (q)
			memcpy(q, p, old < size ? old : size);
		return q;
	}
	old = usable(p);
	if (is_dlm(p) && size <= old && size >= old / 2)
		return p;
	q = malloc(size);
	if (!q)
		return NULL;
	memcpy(q, p, old < size ? old : size);
	free(p);
	return q;
}

EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, bytes);
}

/* The space's state, made first if need be: 1 ready, -1 failed. */
static int ensure_space(void)
{
	if (!state()) {
		guard++;
		pthread_mutex_lock(&g.lock);
		if (!g.state)
			make_space();
		pthread_mutex_unlock(&g.lock);
		guard--;
	}
	return state();
}

/*
 * Aligned allocations: DLM blocks start on 64 bytes, and on a DLM page
 * when they are at least one; other big alignments stay with glibc.
 */
static void *aligned(size_t align, size_t size)
{
	int fb;
	void *p;

	if (!wants_dlm(size))
		return __libc_memalign(align, size);
	if (ensure_space() != 1) {
		if (!g.fallback) {
			errno = ENOMEM;
			return NULL;
		}
	} else if (align <= DLMLIB_ALIGN ||
		   (size >= g.sp.setup.page_size &&
		    !(g.sp.setup.page_size % align))) {
		p = dlm_get(size, 0, &fb);
		if (!fb)
			return p;
	}
	return __libc_memalign(align, size);
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (!align || (align & (align - 1)) || align % sizeof(void *))
		return EINVAL;
	p = aligned(align, size);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	if (!align || (align & (align - 1))) {
		errno = EINVAL;
		return NULL;
	}
	return aligned(align, size);
}

EXPORT void *memalign(size_t align, size_t size)
{
	if (!align || (align & (align - 1))) {
		errno = EINVAL;
		return NULL;
	}
	return aligned(align, size);
}

EXPORT void *valloc(size_t size)
{
	return aligned((size_t)getpagesize(), size);
}

EXPORT void *pvalloc(size_t size)
{
	size_t pg = (size_t)getpagesize();

	return aligned(pg, (size + pg - 1) / pg * pg);
}

/*
 * mmap: what a program means by "give me memory" - a private anonymous
 * read-write mapping anywhere - may come from DLM, zeroed as mmap's is.
 * Everything else (files, shared memory that processes use to talk, fixed
 * addresses, stacks, huge pages) goes to the kernel untouched.
 */
static int mmap_is_memory(void *addr, size_t len, int prot, int flags, int fd)
{
	const int odd = MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_GROWSDOWN |
			MAP_STACK | MAP_HUGETLB | MAP_32BIT;

	return g.take_mmap && !addr && fd == -1 &&
	       (flags & MAP_ANONYMOUS) && (flags & MAP_TYPE) == MAP_PRIVATE &&
	       !(flags & odd) && prot == (PROT_READ | PROT_WRITE) &&
	       wants_dlm(len);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	long r;
	int fb = 1;
	void *p = NULL;

	configure();
	if (mmap_is_memory(addr, len, prot, flags, fd)) {
		p = dlm_get(len, 1, &fb);
		if (p)
			return p;
		if (!fb)
			return MAP_FAILED;	/* errno ENOMEM */
	}
	r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	return r == -1 ? MAP_FAILED : (void *)r;
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off) __attribute__((alias("mmap")));

/*
 * munmap of a DLM block from its start for at least its length frees it;
 * an unmap of part of a block is accepted and leaves the block as it is
 * (its memory stays until the block's start is unmapped).
 */
EXPORT int munmap(void *addr, size_t len)
{
	if (is_dlm(addr)) {
		size_t n = in_inherited(addr) ? 0 : dlm_size(addr);

		if (n && (len + DLMLIB_ALIGN - 1) / DLMLIB_ALIGN * DLMLIB_ALIGN >= n)
			dlm_put(addr);
		return 0;
	}
	return (int)syscall(SYS_munmap, addr, len);
}

EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = NULL, *q;
	va_list ap;
	long r;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (!is_dlm(old)) {
		r = syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
		return r == -1 ? MAP_FAILED : (void *)r;
	}
	/* A DLM block cannot move to a chosen address or grow in place. */
	if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	if (new_len <= old_len)
		return old;
	if (!(flags & MREMAP_MAYMOVE)) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	q = mmap(NULL, new_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED)
		return MAP_FAILED;
	memcpy(q, old, old_len);
	munmap(old, old_len);
	return q;
}

static void before_fork(void)
{
	pthread_mutex_lock(&g.lock);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&g.lock);
}

/*
 * The child shares the parent's space (the same open /dev/dlm): its books
 * must not hand out the parent's ranges.  Keep the mappings, remember the
 * range so that free() leaves it alone, and start afresh.
 */
static void after_fork_child(void)
{
	if (g.state == 1) {
		if (g.ninherited < INHERITED_MAX) {
			g.inherited[g.ninherited].lo = (uintptr_t)g.sp.base;
			g.inherited[g.ninherited].hi = (uintptr_t)g.sp.base +
						      g.sp.setup.total_size;
			g.ninherited++;
		}
		guard++;
		dlmlib_arena_destroy(&g.arena);
		guard--;
		close(g.sp.fd);
		g.sp = (struct dlmlib_space){ .fd = -1 };
	}
	set_state(0);
	pthread_mutex_unlock(&g.lock);
}

__attribute__((constructor)) static void preload_init(void)
{
	configure();
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

__attribute__((destructor)) static void preload_fini(void)
{
	struct dlm_stats k;

	if (state() != 1 || !g.verbose)
		return;
	if (ioctl(g.sp.fd, DLM_IOC_STATS, &k))
		memset(&k, 0xff, sizeof(k));
	say("libdlm-preload: pid %d: exit: %llu blocks (%llu MB) from DLM, %llu faults, %llu swapins, %llu swapouts, %llu same-filled, %llu SIGBUS, %llu lost",
	    (int)getpid(), g.blocks, g.bytes >> 20, (ull)k.faults,
	    (ull)k.swapins, (ull)k.swapouts, (ull)k.same_filled,
	    (ull)k.sigbus, (ull)k.lost);
}

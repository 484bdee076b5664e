// SPDX-License-Identifier: GPL-2.0
/*
 * dlm.c - the public libdlm calls: dlm_startup, dlm_alloc, dlm_free,
 * dlm_shutdown, dlm_stats.  One space per process.  The rwlock guards
 * the space's existence (startup/shutdown write, the rest read); the
 * arena has its own mutex, so allocating threads only meet there.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "arena.h"
#include "internal.h"
#include "umode.h"

typedef unsigned long long ull;

static struct {
	pthread_rwlock_t lock;
	int started;
	int auto_started;	/* before main(), for the dlm arrays */
	int verbose;
	struct dlmlib_space sp;
	struct dlmlib_arena arena;
} g = { .lock = PTHREAD_RWLOCK_INITIALIZER };

/*
 * Give the first DLM pages of the new space to the dlm arrays of @ss and
 * unmap them from the space's own mapping; the arena gets the rest, from
 * g.sp.base + *skip.  0 or -1 (the space is left to the caller to close).
 */
static int place_sections(struct dlmlib_sections *ss,
			  const struct dlmlib_config *c, uint64_t *skip)
{
	const struct dlm_setup *s = &g.sp.setup;
	uint64_t span = dlmlib_sections_span(ss, s->page_size);

	*skip = 0;
	if (!ss->count)
		return 0;
	if (g.sp.um)
		return dlmlib_error(EOPNOTSUPP,
			"the program declares dlm arrays, which only the kernel mode can place: unset DLM_MODE (or set it to kernel)");
	if (span >= s->total_size)
		return dlmlib_error(ENOMEM,
			"the program's dlm arrays need %llu MB of DLM space (in %llu KB DLM pages) but it has %llu MB: %s",
			(ull)(span + (1 << 20) - 1) >> 20,
			(ull)s->page_size >> 10, (ull)s->total_size >> 20,
			c->memfile ?
			"give it more in the memfile (local MB or server lines)" :
			"set DLM_LOCAL_MB larger, or DLM_MEMFILE to a memfile with memory servers");
	if (dlmlib_sections_map(ss, &g.sp))
		return -1;
	munmap(g.sp.base, span);
	*skip = span;
	return 0;
}

static int startup_locked(int *argc, char ***argv,
			  struct dlmlib_sections *ss)
{
	struct dlmlib_config c = { 0 };
	const struct dlm_setup *s = &g.sp.setup;
	uint64_t skip;

	if (g.auto_started && argc && argv) {
		/* The space exists since before main(): only take its
		 * options off the command line, which must not set any. */
		if (dlmlib_parse_args(&c, *argc, *argv))
			return -1;
		if (c.cut && c.cut < *argc - 1)
			return dlmlib_error(EBUSY,
				"the program declares dlm arrays, so its DLM space was made before main() from the environment: set the DLM options there (DLM_MEMFILE, DLM_PAGE_KB, DLM_POLICY, DLM_PROTOCOL, DLM_VERBOSE) instead of after '--'");
		dlmlib_cut_args(&c, argc, argv);
		return 0;
	}
	if (g.started)
		return dlmlib_error(EBUSY,
			"dlm_startup() called twice: the DLM space already exists (call dlm_shutdown() first)");
	if (dlmlib_parse_args(&c, argc ? *argc : 0, argv ? *argv : NULL) ||
	    dlmlib_parse_env(&c) || dlmlib_read_memfile(&c) ||
	    dlmlib_space_open(&c, &g.sp))
		return -1;
	if (place_sections(ss, &c, &skip)) {
		dlmlib_space_close(&g.sp);
		return -1;
	}
	if (dlmlib_arena_init(&g.arena, (uintptr_t)g.sp.base + skip,
			      s->total_size - skip, s->page_size)) {
		dlmlib_space_close(&g.sp);
		return dlmlib_error(ENOMEM, "no memory for the allocator");
	}
	dlmlib_cut_args(&c, argc, argv);
	g.started = 1;
	g.verbose = c.verbose;
	if (g.verbose) {
		fprintf(stderr,
			"libdlm: DLM space of %llu MB in %llu KB DLM pages at %p: local budget %llu MB",
			(ull)s->total_size >> 20, (ull)s->page_size >> 10,
			g.sp.base, (ull)s->local_budget >> 20);
		if (g.sp.servers && !g.sp.um)
			fprintf(stderr, ", %llu MB on %u memory server(s), policy %s, protocol %s\n",
				(ull)g.sp.remote_size >> 20, g.sp.servers,
				dlmlib_policy_name(s->policy),
				dlmlib_protocol_name(s->protocol));
		else if (g.sp.servers)
			fprintf(stderr, ", %llu MB on %u memory server(s)\n",
				(ull)g.sp.remote_size >> 20, g.sp.servers);
		else
			fprintf(stderr, ", local only\n");
	}
	return 0;
}

DLM_PUBLIC int dlm_startup(int *argc, char ***argv)
{
	int ret, err;

	pthread_rwlock_wrlock(&g.lock);
	ret = startup_locked(argc, argv, &(struct dlmlib_sections){ 0 });
	err = errno;
	pthread_rwlock_unlock(&g.lock);
	if (ret) {
		fprintf(stderr, "libdlm: dlm_startup: %s\n", dlm_last_error());
		errno = err;
	}
	return ret;
}

DLM_PUBLIC void *dlm_alloc(size_t size)
{
	struct dlmlib_arena_stats st;
	void *p;

	pthread_rwlock_rdlock(&g.lock);
	if (!g.started) {
		pthread_rwlock_unlock(&g.lock);
		dlmlib_error(ENXIO,
			"dlm_alloc(%zu) without a DLM space: call dlm_startup(&argc, &argv) first",
			size);
		return NULL;
	}
	p = dlmlib_arena_alloc(&g.arena, size);
	if (!p) {
		dlmlib_arena_stats(&g.arena, &st);
		dlmlib_error(ENOMEM,
			"dlm_alloc(%zu): no free range that large in the %llu MB DLM space (%zu bytes free, the largest free range %zu): dlm_free() blocks, or give the program more space in its memfile",
			size, (ull)g.sp.setup.total_size >> 20, st.bytes_free,
			st.largest_free);
	}
	pthread_rwlock_unlock(&g.lock);
	return p;
}

DLM_PUBLIC void dlm_free(void *p)
{
	const char *why = NULL;
	uintptr_t a = (uintptr_t)p, base;

	if (!p)
		return;
	pthread_rwlock_rdlock(&g.lock);
	base = (uintptr_t)g.sp.base;
	if (!g.started)
		why = "there is no DLM space (dlm_startup() failed, was not called, or dlm_shutdown() was)";
	else if (dlmlib_arena_free(&g.arena, p))
		why = a >= base && a - base < g.sp.setup.total_size ?
		      "it is inside the DLM space but not the start of a live block (freed twice, or a pointer into a block)" :
		      "it is not in the DLM space (not from dlm_alloc(): from malloc()?)";
	pthread_rwlock_unlock(&g.lock);
	if (why) {
		fprintf(stderr, "libdlm: dlm_free(): invalid pointer %p: %s\n",
			p, why);
		abort();
	}
}

static void kernel_stats(struct dlm_lib_stats *st)
{
	struct dlm_stats k;

	if (g.sp.um) {		/* --mode=sigsegv|uffd: libdlm's counters */
		dlmlib_umode_stats(&g.sp, st);
		return;
	}
	if (ioctl(g.sp.fd, DLM_IOC_STATS, &k))
		memset(&k, 0xff, sizeof(k));
	st->faults = k.faults;
	st->populates = k.populates;
	st->sigbus = k.sigbus;
	st->dpages_resident = k.dpages_resident;
	st->bytes_resident = k.bytes_resident;
	st->bytes_mapped = k.bytes_mapped;
	st->swapins = k.swapins;
	st->swapouts = k.swapouts;
	st->lost = k.lost;
}

static void stats_locked(struct dlm_lib_stats *st)
{
	struct dlmlib_arena_stats a;

	dlmlib_arena_stats(&g.arena, &a);
	*st = (struct dlm_lib_stats){
		.page_size = g.sp.setup.page_size,
		.total_size = g.sp.setup.total_size,
		.local_budget = g.sp.setup.local_budget,
		.remote_size = g.sp.remote_size,
		.bytes_allocated = a.bytes_used,
		.bytes_free = a.bytes_free,
		.largest_free = a.largest_free,
		.allocations = a.allocations,
		.free_fragments = a.free_fragments,
		.servers = g.sp.servers,
	};
	kernel_stats(st);
}

DLM_PUBLIC int dlm_stats(struct dlm_lib_stats *st)
{
	int ret = 0;

	if (!st)
		return dlmlib_error(EFAULT, "dlm_stats(NULL)");
	pthread_rwlock_rdlock(&g.lock);
	if (g.started)
		stats_locked(st);
	else
		ret = dlmlib_error(ENXIO,
			"dlm_stats() without a DLM space: call dlm_startup() first");
	pthread_rwlock_unlock(&g.lock);
	return ret;
}

static void print_counters_locked(const char *when)
{
	struct dlm_lib_stats st;

	stats_locked(&st);
	fprintf(stderr,
		"libdlm: %s: %llu faults, %llu DLM pages populated, %llu swapins, %llu swapouts, %llu SIGBUS, %llu lost, %llu MB resident, %llu blocks still allocated\n",
		when, (ull)st.faults, (ull)st.populates, (ull)st.swapins,
		(ull)st.swapouts, (ull)st.sigbus, (ull)st.lost,
		(ull)st.bytes_resident >> 20, (ull)st.allocations);
}

DLM_PUBLIC int dlm_shutdown(void)
{
	pthread_rwlock_wrlock(&g.lock);
	if (g.started) {
		if (g.verbose)
			print_counters_locked("shutdown");
		/* The dlm arrays live in the space until exit. */
		if (!g.auto_started) {
			dlmlib_arena_destroy(&g.arena);
			dlmlib_space_close(&g.sp);
			g.started = 0;
		}
	}
	pthread_rwlock_unlock(&g.lock);
	return 0;
}

/*
 * Before main(): if a loaded object declares dlm arrays, make the DLM space
 * from the environment and map it over them.  A program whose arrays
 * cannot be placed must not run on ordinary memory it did not ask for:
 * say why and exit.
 */
__attribute__((constructor)) static void dlm_auto_startup(void)
{
	struct dlmlib_sections ss;
	int ret;

	if (dlmlib_sections_find(&ss)) {
		fprintf(stderr, "libdlm: %s\n", dlm_last_error());
		exit(127);
	}
	if (!ss.count)
		return;
	pthread_rwlock_wrlock(&g.lock);
	ret = startup_locked(NULL, NULL, &ss);
	if (!ret)
		g.auto_started = 1;
	pthread_rwlock_unlock(&g.lock);
	if (ret) {
		fprintf(stderr,
			"libdlm: cannot place the program's dlm arrays in DLM memory: %s\n",
			dlm_last_error());
		exit(127);
	}
}

/* At exit, the counters of a space made before main(), if asked for. */
__attribute__((destructor)) static void dlm_auto_exit(void)
{
	pthread_rwlock_rdlock(&g.lock);
	if (g.auto_started && g.verbose)
		print_counters_locked("exit");
	pthread_rwlock_unlock(&g.lock);
}

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

#include "arena.h"
#include "internal.h"

typedef unsigned long long ull;

static struct {
	pthread_rwlock_t lock;
	int started;
	int verbose;
	struct dlmlib_space sp;
	struct dlmlib_arena arena;
} g = { .lock = PTHREAD_RWLOCK_INITIALIZER };

static int startup_locked(int *argc, char ***argv)
{
	struct dlmlib_config c = { 0 };
	const struct dlm_setup *s = &g.sp.setup;

	if (g.started)
		return dlmlib_error(EBUSY,
			"dlm_startup() called twice: the DLM space already exists (call dlm_shutdown() first)");
	if (dlmlib_parse_args(&c, argc ? *argc : 0, argv ? *argv : NULL) ||
	    dlmlib_parse_env(&c) || dlmlib_read_memfile(&c) ||
	    dlmlib_space_open(&c, &g.sp))
		return -1;
	if (dlmlib_arena_init(&g.arena, (uintptr_t)g.sp.base, s->total_size,
			      s->page_size)) {
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
		if (g.sp.servers)
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
	ret = startup_locked(argc, argv);
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

DLM_PUBLIC int dlm_shutdown(void)
{
	struct dlm_lib_stats st;

	pthread_rwlock_wrlock(&g.lock);
	if (g.started) {
		if (g.verbose) {
			stats_locked(&st);
			fprintf(stderr,
				"libdlm: shutdown: %llu faults, %llu DLM pages populated, %llu swapins, %llu swapouts, %llu SIGBUS, %llu lost, %llu MB resident, %llu blocks still allocated\n",
				(ull)st.faults, (ull)st.populates,
				(ull)st.swapins, (ull)st.swapouts,
				(ull)st.sigbus, (ull)st.lost,
				(ull)st.bytes_resident >> 20,
				(ull)st.allocations);
		}
		dlmlib_arena_destroy(&g.arena);
		dlmlib_space_close(&g.sp);
		g.started = 0;
	}
	pthread_rwlock_unlock(&g.lock);
	return 0;
}

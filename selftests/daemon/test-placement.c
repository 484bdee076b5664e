// SPDX-License-Identifier: GPL-2.0
/*
 * test-placement - the slot allocator of dlmd: rank order, reuse of freed
 * slots, ENOSPC, dead servers skipped, capacity returned, and a random
 * workload checked against a model.  TAP.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"
#include "tap.h"

#define MiB (1ULL << 20)
#define KiB (1ULL << 10)

static struct pl_loc loc;

static int store(struct placement *pl, uint32_t sp, uint64_t dpn)
{
	return pl_store(pl, sp, dpn, &loc, NULL);
}

static int at(uint32_t server, uint64_t off)
{
	return loc.server == server && loc.offset == off;
}

static void test_rank_order(void)
{
	uint64_t cap[3] = { 4 * MiB, 4 * MiB, 4 * MiB };
	struct placement *pl = pl_create(3, cap);
	struct pl_server_info info;
	int okay = 1, r, grew = -1;
	uint64_t i;

	r = pl_space_new(pl, 1, MiB, 64 * MiB, 10 * MiB);
	tap_ok(r == 0, "space of 10 MiB reserved on 3 x 4 MiB servers");
	for (i = 0; i < 10; i++) {
		r = store(pl, 1, i * 3);
		okay &= r == 0 && loc.server == i / 4 &&
			loc.offset == (i % 4) * MiB;
	}
	tap_ok(okay, "pages fill server 1, then 2, then 3, each from offset 0");

	r = pl_store(pl, 1, 9 * 3, &loc, &grew);
	tap_ok(r == 0 && at(2, MiB) && grew == 0,
	       "storing a page again reuses its slot");
	r = pl_lookup(pl, 1, 5 * 3, &loc);
	tap_ok(r == 0 && at(1, MiB), "lookup finds page 15 on server 2 at 1 MiB");
	tap_ok(pl_lookup(pl, 1, 1, &loc) == -ENODATA,
	       "lookup of a page never stored: ENODATA");

	pl_lookup(pl, 1, 2 * 3, &loc);
	tap_ok(pl_forget(pl, 1, 2 * 3, &loc) == 0 &&
	       pl_lookup(pl, 1, 2 * 3, &loc) == -ENODATA,
	       "forget frees the page");
	r = store(pl, 1, 50);
	tap_ok(r == 0 && at(0, 2 * MiB),
	       "the freed slot (server 1, 2 MiB) is the next one used");

	pl_server_info(pl, 0, &info);
	tap_ok(info.capacity == 4 * MiB && info.free == 0 &&
	       info.stored == 4 * MiB && !info.dead,
	       "server 1: capacity, nothing free, 4 MiB stored");
	pl_server_info(pl, 2, &info);
	tap_ok(info.free == 2 * MiB && info.stored == 2 * MiB,
	       "server 3: 2 MiB reserved, 2 MiB free");

	tap_ok(pl_space_new(pl, 2, MiB, 8 * MiB, 8 * MiB) == -ENOSPC,
	       "a second space of 8 MiB: ENOSPC (2 MiB left)");
	tap_ok(pl_space_new(pl, 2, MiB, 8 * MiB, 2 * MiB) == 0,
	       "a second space of 2 MiB fits");
	okay = store(pl, 2, 0) == 0 && at(2, 2 * MiB) &&
	       store(pl, 2, 1) == 0 && at(2, 3 * MiB);
	tap_ok(okay, "its pages go to the free end of server 3");
	r = pl_store(pl, 2, 2, &loc, &grew);
	tap_ok(r == -ENOSPC, "a third page with no capacity anywhere: ENOSPC");

	tap_ok(pl_space_del(pl, 1) == 0 && pl_nspaces(pl) == 1,
	       "deleting space 1 succeeds");
	pl_server_info(pl, 0, &info);
	tap_ok(info.free == 4 * MiB && info.stored == 0,
	       "its capacity and pages are released");
	r = pl_space_new(pl, 3, 64 * KiB, 16 * MiB, 8 * MiB);
	tap_ok(r == 0, "a space of 8 MiB with 64 KiB pages fits again");
	tap_ok(store(pl, 3, 7) == 0 && at(0, 0), "and starts at server 1 offset 0");
	pl_destroy(pl);
}

static void test_dead(void)
{
	uint64_t cap[3] = { 8 * MiB, 8 * MiB, 8 * MiB };
	struct placement *pl = pl_create(3, cap);
	struct pl_server_info info;
	struct pl_loc old;
	int grew = 0, r, okay = 1;
	uint64_t i;

	pl_space_new(pl, 1, MiB, 64 * MiB, 8 * MiB);
	for (i = 0; i < 4; i++)
		okay &= store(pl, 1, i) == 0 && loc.server == 0;
	tap_ok(okay, "dead: 4 pages on server 1");
	pl_server_dead(pl, 0);
	tap_ok(pl_server_is_dead(pl, 0) && !pl_server_is_dead(pl, 1),
	       "server 1 marked dead");
	r = pl_lookup(pl, 1, 1, &old);
	tap_ok(r == -EHOSTDOWN && old.server == 0,
	       "lookup of a page on the dead server: EHOSTDOWN");
	r = pl_store(pl, 1, 10, &loc, &grew);
	tap_ok(r == 0 && loc.server == 1 && grew == 1,
	       "a new page skips the dead server: server 2 (space grew)");
	r = store(pl, 1, 0);
	tap_ok(r == 0 && loc.server == 1 && loc.offset != 0,
	       "a page from the dead server is re-placed on server 2");
	tap_ok(pl_forget(pl, 1, 1, &old) == 0, "forgetting a dead page works");
	okay = 1;
	for (i = 20; i < 34; i++)
		okay &= store(pl, 1, i) == 0 && loc.server != 0;
	okay &= store(pl, 1, 34) == -ENOSPC;
	tap_ok(okay, "14 more pages fill the live servers, none on the dead one; then ENOSPC");
	pl_server_info(pl, 0, &info);
	tap_ok(info.dead && info.free == 0, "dead server reports no free space");
	tap_ok(pl_space_new(pl, 2, MiB, 64 * MiB, 24 * MiB) == -ENOSPC,
	       "reservations do not count the dead server's capacity");
	pl_destroy(pl);

	/* Slots 0-99 on server 1, 100-299 on server 2 (not word aligned). */
	cap[0] = 100 * 64 * KiB;
	cap[1] = 200 * 64 * KiB;
	pl = pl_create(2, cap);
	pl_space_new(pl, 1, 64 * KiB, 1024 * MiB, 300 * 64 * KiB);
	okay = 1;
	for (i = 0; i < 50; i++)
		okay &= store(pl, 1, i) == 0 && loc.server == 0;
	pl_server_dead(pl, 1);
	for (i = 50; i < 100; i++)
		okay &= store(pl, 1, i) == 0 && loc.server == 0;
	okay &= store(pl, 1, 100) == -ENOSPC;
	pl_lookup(pl, 1, 77, &old);
	okay &= pl_forget(pl, 1, 77, &old) == 0 && store(pl, 1, 500) == 0 &&
		loc.server == 0 && loc.offset == old.offset;
	tap_ok(okay, "a dead server's 200 slots are all skipped, the live server's 100 all used");
	pl_destroy(pl);
}

static void test_invalid(void)
{
	uint64_t cap[1] = { 16 * MiB + 1000 };
	struct placement *pl = pl_create(1, cap);
	struct pl_server_info info;
	struct pl_loc old;

	pl_server_info(pl, 0, &info);
	tap_ok(info.capacity == 16 * MiB, "capacity rounds down to 4 KiB");
	tap_ok(pl_space_new(pl, 1, 1000, 4000, 0) == -EINVAL &&
	       pl_space_new(pl, 1, 0, 4096, 0) == -EINVAL &&
	       pl_space_new(pl, 1, 4096, 6000, 0) == -EINVAL &&
	       pl_space_new(pl, 1, 4096, 0, 0) == -EINVAL &&
	       pl_space_new(pl, 1, 4096, 8192, 12288) == -EINVAL,
	       "bad page size, total size or reserve: EINVAL");
	tap_ok(pl_space_new(pl, 1, 4096, 8192, 0) == 0 &&
	       pl_space_new(pl, 1, 4096, 8192, 0) == -EEXIST,
	       "an id in use: EEXIST");
	tap_ok(store(pl, 1, 2) == -EINVAL && store(pl, 9, 0) == -ENOENT &&
	       pl_lookup(pl, 9, 0, &loc) == -ENOENT,
	       "page beyond the space: EINVAL; unknown space: ENOENT");
	store(pl, 1, 1);
	old = loc;
	pl_space_del(pl, 1);
	pl_space_new(pl, 1, 4096, 8192, 8192);
	store(pl, 1, 1);
	tap_ok(pl_forget(pl, 1, 1, &old) == -ESTALE &&
	       pl_lookup(pl, 1, 1, &loc) == 0,
	       "forget with a location of a deleted space: ESTALE, page kept");
	tap_ok(pl_space_del(pl, 1) == 0 && pl_space_del(pl, 1) == -ENOENT,
	       "deleting twice: ENOENT");
	pl_space_new(pl, 2, 64 * KiB, 64 * MiB, 4 * MiB);
	tap_ok(pl_space_extend(pl, 2, 100 * KiB) == 64 * KiB &&
	       pl_space_reserved(pl, 2) == 4 * MiB + 64 * KiB &&
	       pl_space_extend(pl, 2, 64 * MiB) == 12 * MiB - 64 * KiB &&
	       pl_space_extend(pl, 2, 64 * KiB) == 0 &&
	       pl_space_extend(pl, 9, 64 * KiB) == 0,
	       "extend: whole pages, up to the free capacity, 0 when full or unknown");
	pl_destroy(pl);
}

static void test_coalesce(void)
{
	uint64_t cap[2] = { 12 * MiB, 12 * MiB };
	struct placement *pl = pl_create(2, cap);
	int okay = 1, i;

	for (i = 0; i < 6; i++)
		okay &= pl_space_new(pl, (uint32_t)i, MiB, 4 * MiB, 4 * MiB) == 0;
	okay &= pl_space_new(pl, 99, MiB, MiB, MiB) == -ENOSPC;
	tap_ok(okay, "six spaces of 4 MiB fill 2 x 12 MiB");
	pl_space_del(pl, 1);
	pl_space_del(pl, 4);
	okay = pl_space_new(pl, 10, MiB, 4 * MiB, 4 * MiB) == 0 &&
	       store(pl, 10, 0) == 0 && at(0, 4 * MiB);
	tap_ok(okay, "a new space takes the first hole (server 1, 4 MiB)");
	for (i = 0; i < 6; i++)
		pl_space_del(pl, (uint32_t)i);
	pl_space_del(pl, 10);
	okay = pl_space_new(pl, 11, 2 * MiB, 24 * MiB, 24 * MiB) == 0;
	for (i = 0; i < 12; i++)
		okay &= store(pl, 11, (uint64_t)i) == 0;
	okay &= at(1, 10 * MiB);
	tap_ok(okay, "after deleting all, one space of 24 MiB fits (extents merged)");
	pl_destroy(pl);

	cap[0] = 1 * MiB + 192 * KiB;
	cap[1] = 8 * MiB;
	pl = pl_create(2, cap);
	okay = pl_space_new(pl, 1, 512 * KiB, 4 * MiB, MiB) == 0;
	/* 1 MiB of server 1 taken by 2 pages, 192 KiB left over. */
	okay &= pl_space_new(pl, 2, 64 * KiB, 256 * KiB, 256 * KiB) == 0 &&
		store(pl, 2, 0) == 0 && at(0, MiB);
	tap_ok(okay, "mixed page sizes: the 192 KiB tail of server 1 serves 64 KiB pages");
	pl_destroy(pl);
}

/* Random stores/forgets against a model: no two pages share a slot. */
static void test_random(void)
{
	enum { NPAGES = 4096, NSRV = 3, PS = 64 * 1024 };
	uint64_t cap[NSRV] = { 40 * PS, 100 * PS, 60 * PS };
	struct placement *pl = pl_create(NSRV, cap);
	static struct pl_loc model[NPAGES];
	static char have[NPAGES];
	static uint64_t dpns[NPAGES];
	unsigned int seed = 12345, i, j, n = 0, errors = 0, nospc = 0;
	uint64_t stored[NSRV] = { 0 };
	struct pl_server_info info;
	struct pl_loc l;
	int r;

	for (i = 0; i < NPAGES; i++)
		dpns[i] = ((uint64_t)rand_r(&seed) << 14) ^ (uint64_t)i * 7919;
	pl_space_new(pl, 7, PS, (uint64_t)PS << 46, 150 * PS);
	for (i = 0; i < 20000; i++) {
		j = (unsigned int)rand_r(&seed) % NPAGES;
		if (have[j] && rand_r(&seed) % 2) {
			r = pl_lookup(pl, 7, dpns[j], &l);
			errors += r != 0 || l.offset != model[j].offset ||
				  l.server != model[j].server;
			errors += pl_forget(pl, 7, dpns[j], &l) != 0;
			have[j] = 0;
			n--;
			continue;
		}
		r = pl_store(pl, 7, dpns[j], &l, NULL);
		if (r == -ENOSPC) {
			nospc++;
			errors += n != 200;	/* only when truly full */
			continue;
		}
		errors += r != 0;
		if (have[j])
			errors += l.offset != model[j].offset;
		else
			n++;
		model[j] = l;
		have[j] = 1;
	}
	/* No two live pages in one place; all inside their server. */
	for (i = 0; i < NPAGES; i++) {
		if (!have[i])
			continue;
		stored[model[i].server] += PS;
		errors += model[i].offset % PS != 0 ||
			  model[i].offset + PS > cap[model[i].server];
		for (j = i + 1; j < NPAGES; j++)
			errors += have[j] && model[j].server == model[i].server &&
				  model[j].offset == model[i].offset;
		r = pl_lookup(pl, 7, dpns[i], &l);
		errors += r != 0 || l.offset != model[i].offset;
	}
	for (i = 0; i < NSRV; i++) {
		pl_server_info(pl, i, &info);
		errors += info.stored != stored[i];
	}
	tap_ok(errors == 0 && nospc > 0,
	       "20000 random stores and forgets: consistent (%u errors, %u ENOSPC at full)",
	       errors, nospc);
	pl_destroy(pl);
}

/* Kept copies of fetched pages: dropped, overwritten, reclaimed. */
static void test_keep(void)
{
	uint64_t cap[2] = { 4 * MiB, 0 };
	struct placement *pl = pl_create(2, cap);
	struct pl_loc l[4];
	int okay = 1, i;

	pl_space_new(pl, 1, MiB, 8 * MiB, 4 * MiB);
	for (i = 0; i < 4; i++) {
		okay &= store(pl, 1, (uint64_t)i) == 0;
		l[i] = loc;
	}
	for (i = 0; i < 4; i++)
		okay &= pl_keep(pl, 1, (uint64_t)i, &l[i]) == 0;
	tap_ok(okay, "keep: 4 fetched pages fill the space, copies kept");
	tap_ok(pl_drop(pl, 1, 2) == 0 && pl_drop(pl, 1, 2) == -ESTALE &&
	       pl_lookup(pl, 1, 2, &loc) == 0 && at(0, 2 * MiB),
	       "keep: DROP of a kept page 0, it stays stored; DROP again ESTALE");
	tap_ok(store(pl, 1, 1) == 0 && at(0, MiB) && pl_drop(pl, 1, 1) == -ESTALE,
	       "keep: a STORE of a kept page overwrites its slot, no longer kept");
	tap_ok(store(pl, 1, 6) == 0 && at(0, 0) &&
	       pl_lookup(pl, 1, 0, &loc) == -ENODATA && pl_drop(pl, 1, 0) == -ESTALE,
	       "keep: full space: a new page takes the lowest kept slot, its DROP fails");
	tap_ok(store(pl, 1, 7) == 0 && at(0, 3 * MiB) && store(pl, 1, 5) == -ENOSPC,
	       "keep: then the next kept slot; with none left: ENOSPC");
	tap_ok(pl_keep(pl, 1, 6, &l[1]) == -ESTALE && pl_drop(pl, 1, 99) == -EINVAL &&
	       pl_drop(pl, 9, 0) == -ENOENT,
	       "keep: stale LOC, DPN beyond the space, unknown space refused");
	pl_destroy(pl);
}

/* A space that reserved all of itself (a block device): page N, slot N. */
static void test_identity(void)
{
	uint64_t cap[2] = { 8 * 4 * KiB, 8 * 4 * KiB };
	struct placement *pl = pl_create(2, cap);
	int r;

	r = pl_space_new(pl, 1, 4 * KiB, 12 * 4 * KiB, 12 * 4 * KiB);
	tap_ok(r == 0, "a block space of 12 pages reserved in full");
	r = store(pl, 1, 5);
	tap_ok(r == 0 && at(0, 5 * 4 * KiB), "page 5 stored first goes to slot 5");
	r = store(pl, 1, 6);
	tap_ok(r == 0 && at(0, 6 * 4 * KiB), "page 6 next to it");
	r = store(pl, 1, 9);
	tap_ok(r == 0 && at(1, 1 * 4 * KiB),
	       "page 9 in slot 9, on the second server");
	r = store(pl, 1, 5);
	tap_ok(r == 0 && at(0, 5 * 4 * KiB), "page 5 again: the same slot");
	pl_destroy(pl);

	pl = pl_create(2, cap);
	pl_space_new(pl, 1, 4 * KiB, 12 * 4 * KiB, 4 * 4 * KiB);
	r = store(pl, 1, 5);
	tap_ok(r == 0 && at(0, 0),
	       "a space that reserved part of itself: lowest free slot");
	pl_destroy(pl);
}

int main(void)
{
	tap_plan(51);
	test_identity();
	test_rank_order();
	test_dead();
	test_invalid();
	test_coalesce();
	test_random();
	test_keep();
	return tap_done();
}

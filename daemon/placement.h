/* SPDX-License-Identifier: GPL-2.0 */
/*
 * placement.h - where DLM pages live on the memory servers.
 *
 * Capacity is reserved per DLM space when the space is created
 * (pl_space_new): extents of the servers' memory, taken in rank order, the
 * first server with free capacity first, as in DLM-MPI.  The reservation
 * is cut into slots of the space's DLM page size; a stored page takes the
 * lowest free slot (so the lowest-ranked server fills first) and a freed
 * slot is the next one reused.  A space that reserved its whole size (a
 * block device's) puts page N in slot N when that one is free, so that
 * neighbouring pages are contiguous on a server.  A space that needs more slots than it
 * reserved (pages re-placed away from a dead server, or a kernel storing
 * more than it announced) grows from unreserved capacity, again in rank
 * order.  Slots on a dead server are never handed out again.
 *
 * A page the kernel fetched may keep its slot (pl_keep): if the program
 * does not write it, the kernel evicts it by DROP instead of a STORE.
 * Kept copies only use what is spare: when a space has no free slot and
 * no unreserved capacity is left to grow into, a store takes a kept
 * copy's slot.  (Capacity a space grew into for kept copies stays with it
 * until it is deleted, so a later space may be refused meanwhile.)
 *
 * Not thread-safe: the caller serialises all calls.
 */
#ifndef DLM_PLACEMENT_H
#define DLM_PLACEMENT_H

#include <stdint.h>

/* Granule of server memory: capacities round down, page sizes multiples. */
#define PL_ALIGN	4096ULL

struct placement;

/* Where one stored DLM page is. */
struct pl_loc {
	uint32_t server;	/* index in rank order: rank = server + 1 */
	uint64_t offset;	/* byte offset in that server's memory */
	uint64_t slot;		/* slot number within the space */
	uint64_t gen;		/* instance of the space (ids may be reused) */
};

struct pl_server_info {
	uint64_t capacity;	/* bytes usable (rounded down to PL_ALIGN) */
	uint64_t free;		/* bytes not reserved by any space */
	uint64_t stored;	/* bytes of DLM pages held */
	int dead;
};

/* NSERVERS servers in rank order, CAPACITY[i] bytes each. */
struct placement *pl_create(unsigned int nservers, const uint64_t *capacity);
void pl_destroy(struct placement *pl);

/*
 * A space SPACE of TOTAL_SIZE bytes in pages of PAGE_SIZE; RESERVE bytes
 * (rounded up to PAGE_SIZE) reserved on live servers.  0, -EEXIST (id in
 * use), -EINVAL (PAGE_SIZE not a non-zero multiple of PL_ALIGN, TOTAL_SIZE
 * not a non-zero multiple of it, RESERVE > TOTAL_SIZE), -ENOSPC, -ENOMEM.
 */
int pl_space_new(struct placement *pl, uint32_t space, uint64_t page_size,
		 uint64_t total_size, uint64_t reserve);
/*
 * Reserve up to BYTES more for SPACE from unreserved live capacity, whole
 * pages, rank order; returns the bytes added (0 for an unknown space).
 */
uint64_t pl_space_extend(struct placement *pl, uint32_t space,
			 uint64_t bytes);
/* Release the reservation and every slot of SPACE: 0 or -ENOENT. */
int pl_space_del(struct placement *pl, uint32_t space);
/* Page and total size of SPACE: 0 or -ENOENT. */
int pl_space_geometry(struct placement *pl, uint32_t space,
		      uint64_t *page_size, uint64_t *total_size);
/* Bytes reserved by SPACE (grows with it); 0 for an unknown space. */
uint64_t pl_space_reserved(struct placement *pl, uint32_t space);
unsigned int pl_nspaces(struct placement *pl);

/*
 * The slot page DPN of SPACE is to be stored in: its current slot if it has
 * one on a live server, else the lowest free slot (growing the space if it
 * has none; *GREW, if given, is set to 1 then).  0, -ENOENT (no such
 * space), -EINVAL (DPN beyond the space), -ENOSPC (no live capacity left),
 * -ENOMEM.
 */
int pl_store(struct placement *pl, uint32_t space, uint64_t dpn,
	     struct pl_loc *loc, int *grew);
/*
 * Where page DPN of SPACE is: 0, -ENOENT (no such space), -ENODATA (page
 * not stored), -EHOSTDOWN (stored on a dead server; LOC filled in).
 */
int pl_lookup(struct placement *pl, uint32_t space, uint64_t dpn,
	      struct pl_loc *loc);
/*
 * Forget page DPN of SPACE and free its slot, if it is still the one LOC
 * names (the space not recreated, the page not moved): 0 or -ESTALE.
 */
int pl_forget(struct placement *pl, uint32_t space, uint64_t dpn,
	      const struct pl_loc *loc);

/*
 * After a FETCH of page DPN of SPACE from LOC: keep that copy (its slot
 * stays used; pl_store reuses it when the space has no free slot left,
 * so a kept copy may vanish).  0, or -ESTALE (LOC no longer current,
 * or its server died).
 */
int pl_keep(struct placement *pl, uint32_t space, uint64_t dpn,
	    const struct pl_loc *loc);
/*
 * The kernel evicts page DPN of SPACE without storing it: 0 if its kept
 * copy is still held on a live server (it counts as stored again), else
 * -ESTALE (the kernel must store it), -ENOENT (no such space), -EINVAL
 * (DPN beyond the space).
 */
int pl_drop(struct placement *pl, uint32_t space, uint64_t dpn);

/* Server SERVER died: its slots are never handed out again. */
void pl_server_dead(struct placement *pl, unsigned int server);
int pl_server_is_dead(struct placement *pl, unsigned int server);
void pl_server_info(struct placement *pl, unsigned int server,
		    struct pl_server_info *info);

#endif /* DLM_PLACEMENT_H */

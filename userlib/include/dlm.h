/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dlm.h - libdlm, the DLM programming interface of the DLM-MPI papers on
 * top of /dev/dlm (dlmem.ko).
 *
 * A sequential program brackets itself with dlm_startup() and
 * dlm_shutdown() and allocates the data that may exceed local memory with
 * dlm_alloc() instead of malloc():
 *
 *	int main(int argc, char *argv[])
 *	{
 *		dlm_startup(&argc, &argv);
 *		double (*a)[N] = dlm_alloc(N * N * sizeof(double));
 *		...
 *		dlm_shutdown();
 *	}
 *
 * and is run as `prog ARGS -- -f MEMFILE`.  Link with -ldlm (pkg-config
 * dlm).  Not to be confused with the lock manager's libdlm.so.3 and
 * <libdlm.h> (Debian package libdlm3): this library is libdlm.so.0.
 *
 * Functions report failure through errno and a per-thread message that
 * says what to do about it (dlm_last_error()).
 */
#ifndef DLM_H
#define DLM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#define DLM_PUBLIC __attribute__((visibility("default")))
#else
#define DLM_PUBLIC
#endif

/* Version of this interface (major * 10000 + minor * 100 + patch). */
#define DLM_LIB_VERSION		100

/* Local size in MB of a space when there is no memfile and no DLM_LOCAL_MB
 * (lowered to the kernel's local_budget_max when that is smaller). */
#define DLM_DEFAULT_LOCAL_MB	256

/* Every dlm_alloc() block starts at a multiple of this many bytes; blocks
 * of at least one DLM page start on a DLM page boundary. */
#define DLM_ALLOC_ALIGN		64

/**
 * dlm_startup() - create the DLM space of this process.
 * @argc: &argc of main(), or NULL.
 * @argv: &argv of main(), or NULL.
 *
 * The command line is `prog ARGS... -- DLM-OPTIONS...`: everything after
 * the last "--" belongs to DLM and is removed (the "--" too), so that on
 * success *argc and *argv describe `prog ARGS...` (argv[*argc] is NULL; the
 * array is edited in place).  A program that itself takes "--" must end its
 * command line with "--" and the DLM options (possibly none).
 *
 * DLM options (each also as environment variable; the option wins):
 *   -f MEMFILE, --memfile=MEMFILE   DLM_MEMFILE    memory file, see below
 *   --page-kb=N                     DLM_PAGE_KB    DLM page size in KB (a
 *                                   multiple of the CPU page size; default:
 *                                   the kernel's, 1024)
 *   --policy=arr|clock              DLM_POLICY     which DLM page a remote
 *                                   space evicts (default: the kernel's);
 *                                   ignored for local spaces
 *   --protocol=serial|cross|async|inline
 *                                   DLM_PROTOCOL   how a remote space swaps
 *                                   (default: the kernel's, inline); ignored
 *                                   for local spaces, refused with
 *                                   --mode sigsegv|uffd
 *   --mode=kernel|sigsegv|uffd      DLM_MODE       who pages the space
 *                                   (default kernel: /dev/dlm and dlmd;
 *                                   see "User-level modes" below)
 *   -v, --verbose                   DLM_VERBOSE=1  describe the space on
 *                                   stderr, and its counters at shutdown
 * and, used only when there is no memfile:
 *                                   DLM_LOCAL_MB   size of a local-only space
 *
 * MEMFILE, as in DLM-MPI: '#' starts a comment, blank lines are ignored;
 * the first line is the local size in MB (the most this process keeps in
 * local memory: the local budget); each further line is one memory server,
 * `MB [HOST:PORT]`, offering MB of its memory (the addresses are for dlmd,
 * which reads the same file).  The space holds local + the servers' MB,
 * each rounded up to DLM pages.  With no server line the space is local
 * only (DLM_BACKING_LOCAL) and its size is the local MB; with server lines
 * it is DLM_BACKING_REMOTE and needs dlmd -f MEMFILE running.  There is no
 * fallback from remote to local.  No memfile at all: a local-only space of
 * DLM_LOCAL_MB, else DLM_DEFAULT_LOCAL_MB MB.
 *
 * The space is mapped whole; dlm_alloc() hands it out.
 *
 * User-level modes, baselines for the kernel mode (the DLM-MPI paper's
 * user-level design and UMap's): with --mode=sigsegv or --mode=uffd libdlm
 * pages the space itself, without /dev/dlm or dlmd.  A thread of libdlm
 * connects over TCP to the dlm-memservers of the memfile's server lines
 * (each needs its HOST:PORT) and moves whole DLM pages (--page-kb, default
 * 1024) between them and the local budget, evicting by ARR.  sigsegv:
 * non-resident DLM pages are PROT_NONE and a process-wide SIGSEGV handler
 * (installed here, chaining to the previous one for other addresses,
 * restored by dlm_shutdown()) waits while the thread fetches the page.
 * uffd: a userfaultfd (root, or sysctl vm.unprivileged_userfaultfd=1)
 * registered over the space.  A page that cannot be fetched (server dead,
 * or silent for 5 s) ends the access in SIGBUS.  Limits: no dlm arrays
 * (EOPNOTSUPP), no fork() (the child does not page); in sigsegv mode a
 * system call given a buffer in a non-resident page fails with EFAULT
 * instead of faulting it in.  dlm_stats() reports the mode's own counters.
 * Further errno values: EINVAL a server line without HOST:PORT;
 * EHOSTUNREACH, ECONNREFUSED etc. a server that cannot be reached; ENOSPC
 * a server smaller than its line; EPERM userfaultfd not allowed.
 *
 * Return: 0, or -1 with errno set and a message on stderr (also in
 * dlm_last_error()) naming the fix; *argc and *argv are then unchanged.
 * errno: EINVAL bad option or memfile (ENOENT etc. if it cannot be read);
 * EBUSY already started; ENOENT /dev/dlm missing (load dlmem.ko);
 * EOPNOTSUPP servers named but this kernel has no remote backing;
 * ENOTCONN no dlmd registered (start dlmd -f MEMFILE); ENOSPC the servers
 * cannot hold their share; ETIMEDOUT dlmd did not answer; ENOMEM local MB
 * above the kernel's local_budget_max (module parameter max_local_mb) or,
 * remote, above what dlmd's frame pool has free; EFBIG space too large;
 * others as open(2), ioctl(2), mmap(2).
 */
DLM_PUBLIC int dlm_startup(int *argc, char ***argv);

/**
 * dlm_alloc() - allocate @size bytes of DLM space (like malloc()).
 * @size: bytes wanted; 0 gives a unique, freeable block.
 *
 * The memory is not initialised: a range never written reads as zero, a
 * reused one keeps old data.  The allocator keeps its own bookkeeping in
 * ordinary memory, so dlm_alloc() and dlm_free() touch no DLM page.
 * Alignment: DLM_ALLOC_ALIGN; blocks of a DLM page or more start on a DLM
 * page.  Thread-safe.
 *
 * Return: the block, or NULL with errno ENOMEM (no free range that large:
 * free something or enlarge the memfile) or ENXIO (dlm_startup() has not
 * succeeded).
 */
DLM_PUBLIC void *dlm_alloc(size_t size);

/**
 * dlm_free() - release a block from dlm_alloc() for reuse (like free()).
 * @p: the block, or NULL.
 *
 * dlm_free(NULL) does nothing.  Any other pointer that is not a live block
 * of dlm_alloc() - double free, a pointer into a block, a malloc()
 * pointer, a call before dlm_startup() - is a program bug: like glibc's
 * free(), dlm_free() then prints "libdlm: dlm_free(): invalid pointer ..."
 * to stderr and calls abort().  Thread-safe.
 */
DLM_PUBLIC void dlm_free(void *p);

/**
 * dlm_shutdown() - unmap and release the DLM space.
 *
 * Every block of dlm_alloc() becomes invalid; the data is gone.  Calling it
 * again, or without a successful dlm_startup(), does nothing.  dlm_startup()
 * may be called again afterwards.
 *
 * Return: 0.
 */
DLM_PUBLIC int dlm_shutdown(void);

/**
 * dlm_last_error() - what the last failed libdlm call of this thread said:
 * the cause and the fix, e.g. "remote memory servers ... start dlmd -f
 * memfile first".  "no error" if nothing failed yet.  The string belongs to
 * the thread and stays valid until its next failing libdlm call.
 */
DLM_PUBLIC const char *dlm_last_error(void);

/**
 * dlm_strerror() - what an errno means when a libdlm function set it.
 * @errnum: the errno.
 *
 * Return: its meaning with the usual remedy (a static string; unknown
 * values give a generic text).
 */
DLM_PUBLIC const char *dlm_strerror(int errnum);

/**
 * struct dlm_lib_stats - the space, its allocator, and the kernel counters.
 * @page_size: DLM page size in bytes.
 * @total_size: bytes of the space (what dlm_alloc() can hand out).
 * @local_budget: bytes of it that may be resident in local memory.
 * @remote_size: bytes promised by memory servers (0: local backing).
 * @bytes_allocated: bytes in live blocks (sizes rounded up).
 * @bytes_free: bytes not in live blocks.
 * @largest_free: the largest free range (the largest possible allocation,
 *	less alignment).
 * @allocations: live blocks.
 * @free_fragments: free ranges.
 * @faults: faults on the space.
 * @populates: DLM pages zero-filled on first touch.
 * @sigbus: accesses refused with SIGBUS.
 * @dpages_resident: DLM pages resident locally.
 * @bytes_resident: bytes resident locally.
 * @bytes_mapped: bytes mapped into the program.
 * @swapins: DLM pages fetched from memory servers.
 * @swapouts: DLM pages stored to memory servers.
 * @lost: DLM pages lost with a memory server.
 * @servers: memory servers named by the memfile.
 * @reserved0: zero.
 * @reserved: zero.
 *
 * @faults to @lost are the kernel's counters of the space (DLM_IOC_STATS,
 * see Documentation/uapi.rst), all ~0 if the kernel has no statistics.
 * In the user-level modes (--mode=sigsegv|uffd) they are libdlm's own:
 * faults = DLM pages faulted in, populates = of them zero-filled, sigbus
 * = accesses failed, bytes_mapped = bytes_resident, lost = 0.
 */
struct dlm_lib_stats {
	uint64_t page_size;
	uint64_t total_size;
	uint64_t local_budget;
	uint64_t remote_size;
	uint64_t bytes_allocated;
	uint64_t bytes_free;
	uint64_t largest_free;
	uint64_t allocations;
	uint64_t free_fragments;
	uint64_t faults;
	uint64_t populates;
	uint64_t sigbus;
	uint64_t dpages_resident;
	uint64_t bytes_resident;
	uint64_t bytes_mapped;
	uint64_t swapins;
	uint64_t swapouts;
	uint64_t lost;
	uint32_t servers;
	uint32_t reserved0;
	uint64_t reserved[8];
};

/**
 * dlm_stats() - fill @st for the current space.
 * @st: where to write the statistics.
 *
 * Return: 0, or -1 with errno ENXIO (not started) or EFAULT (@st NULL).
 */
DLM_PUBLIC int dlm_stats(struct dlm_lib_stats *st);

/*
 * The `dlm` declaration specifier of the DLM-MPI paper (its Fig. 2),
 * without a translator:
 *
 *	#include <dlm.h>
 *	#define N 4096
 *	dlm double a[N][N], x[N], y[N];		(file scope, no initialiser)
 *
 *	int main(void) { ... a[i][j] = ...; }	(no other change)
 *
 * built with plain `cc prog.c -ldlm`.  Such arrays go to a no-bits ELF
 * section ("dlm_bss") which the linker puts after .bss; before main()
 * libdlm creates the DLM space from the environment (DLM_MEMFILE, or
 * DLM_LOCAL_MB; DLM_PAGE_KB, DLM_POLICY, DLM_PROTOCOL, DLM_VERBOSE) and
 * maps its first DLM pages over that section, so the arrays live in DLM
 * memory and the rest of the space is left to dlm_alloc().  If that fails
 * the program is not started on ordinary memory: libdlm says why and exits
 * with status 127.  dlm_startup() is then optional (it only removes "--"
 * from the command line; DLM options after it are refused with EBUSY) and
 * dlm_shutdown() keeps the space, which the arrays need until exit.
 *
 * Limits: file-scope (or static) arrays and variables only, never
 * automatic ones or struct members; no initialiser (they start as zeros,
 * like static data without one); GCC on x86 and x86-64 ELF (the section
 * is declared through the assembler); the whole section is mapped, each
 * array starts on a CPU page; the arrays count as the program's bss for
 * the kernel's overcommit check at exec.  Define DLM_NO_SPECIFIER before
 * including <dlm.h> to keep the identifier `dlm` free.
 */
#if !defined(DLM_NO_SPECIFIER) && defined(__GNUC__) && defined(__ELF__) && \
	(defined(__x86_64__) || defined(__i386__))
#define dlm __attribute__((section("dlm_bss,\"aw\",@nobits#"), aligned(4096)))
/* A reference to libdlm from every user, so that linking with -ldlm (even
 * statically, or with --as-needed) brings in the code that maps the
 * arrays. */
static int (*const dlm_link_reference_)(int *, char ***)
	__attribute__((used)) = dlm_startup;
#endif

#ifdef __cplusplus
}
#endif

#endif /* DLM_H */

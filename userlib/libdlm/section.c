// SPDX-License-Identifier: GPL-2.0
/*
 * section.c - the `dlm` declaration specifier without a translator.
 *
 * <dlm.h> defines `dlm` as a GCC attribute that puts a file-scope array in
 * a no-bits ELF section, DLMLIB_SECTION ("dlm_bss"), page aligned.  The
 * linker places that section after .bss, at the end of the object's
 * writable segment, so the loader gives it anonymous zero pages like .bss.
 * Before main(), libdlm finds the section of every loaded object (by
 * reading the section headers of its file: they are not loaded) and maps
 * the DLM space over it with MAP_FIXED: the arrays then live in DLM
 * memory, and the rest of the space is left to dlm_alloc().
 *
 * The check that makes this safe: the pages mapped over must hold nothing
 * but the section, so every other allocated section of the object must
 * end before the section's first page and start after its last one.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"


typedef unsigned long long ull;

static uintptr_t page_down(uintptr_t a)
{
	return a & ~(uintptr_t)(getpagesize() - 1);
}

static uintptr_t page_up(uintptr_t a)
{
	return page_down(a + (uintptr_t)getpagesize() - 1);
}

static int read_at(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	return n == (ssize_t)len ? 0 : -1;
}

/*
 * Look for DLMLIB_SECTION in the ELF file @fd loaded at @bias.  0 and
 * *found = 0 when it has none (or is not an ELF file we can read: such an
 * object has no dlm arrays of ours either); 0 and the section in @out; -1
 * with the message set when the section is there but cannot be used.
 */
static int scan_file(int fd, const char *name, uintptr_t bias,
		     struct dlmlib_section *out, int *found)
{
	ElfW(Ehdr) eh;
	ElfW(Shdr) *sh = NULL, *dsec = NULL;
	char *names = NULL;
	uintptr_t first, end;
	unsigned int i, n;
	int ret = 0;

	*found = 0;
	if (read_at(fd, &eh, sizeof(eh), 0) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
	    eh.e_shentsize != sizeof(ElfW(Shdr)) || !eh.e_shnum ||
	    eh.e_shstrndx >= eh.e_shnum)
		return 0;
	n = eh.e_shnum;
	sh = calloc(n, sizeof(*sh));
	if (!sh || read_at(fd, sh, n * sizeof(*sh), (off_t)eh.e_shoff))
		goto out;
	if (sh[eh.e_shstrndx].sh_size > (1u << 24))
		goto out;
	names = calloc(1, sh[eh.e_shstrndx].sh_size + 1);
	if (!names || read_at(fd, names, sh[eh.e_shstrndx].sh_size,
			      (off_t)sh[eh.e_shstrndx].sh_offset))
		goto out;
	for (i = 0; i < n; i++) {
		if (sh[i].sh_name >= sh[eh.e_shstrndx].sh_size)
			continue;
		if (!strcmp(names + sh[i].sh_name, DLMLIB_SECTION)) {
			dsec = &sh[i];
			break;
		}
	}
	if (!dsec || !dsec->sh_size)
		goto out;
	if (dsec->sh_type != SHT_NOBITS ||
	    (dsec->sh_flags & (SHF_ALLOC | SHF_WRITE)) != (SHF_ALLOC | SHF_WRITE)) {
		ret = dlmlib_error(ENOEXEC,
			"%s: section %s holds initialised data: dlm arrays must not have an initialiser (they start as zeros, like static arrays without one)",
			name, DLMLIB_SECTION);
		goto out;
	}
	first = bias + dsec->sh_addr;
	end = first + dsec->sh_size;
	if (first != page_down(first)) {
		ret = dlmlib_error(ENOEXEC,
			"%s: section %s starts at %#llx, not on a page: declare dlm arrays only with the dlm specifier of <dlm.h>",
			name, DLMLIB_SECTION, (ull)first);
		goto out;
	}
	for (i = 0; i < n; i++) {
		uintptr_t s = bias + sh[i].sh_addr, e = s + sh[i].sh_size;

		if (&sh[i] == dsec || !(sh[i].sh_flags & SHF_ALLOC) ||
		    !sh[i].sh_size)
			continue;
		if (e > page_down(first) && s < page_up(end)) {
			ret = dlmlib_error(ENOEXEC,
				"%s: section %s shares a page with section %s, so DLM memory cannot be mapped over it: link with the default linker script (it puts %s after .bss)",
				name, DLMLIB_SECTION,
				sh[i].sh_name < sh[eh.e_shstrndx].sh_size ?
				names + sh[i].sh_name : "?", DLMLIB_SECTION);
			goto out;
		}
	}
	out->addr = first;
	out->size = page_up(end) - first;
	*found = 1;
out:
	free(names);
	free(sh);
	return ret;
}

struct find_ctx {
	struct dlmlib_sections *ss;
	int ret;
};

static int find_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find_ctx *ctx = arg;
	struct dlmlib_sections *ss = ctx->ss;
	const char *name = info->dlpi_name;
	struct dlmlib_section sec;
	int fd, found;

	(void)size;
	if (!name || !*name) {
		if (ss->seen_main)	/* the vDSO: no file, no dlm arrays */
			return 0;
		ss->seen_main = 1;
		name = "/proc/self/exe";
	}
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ctx->ret = scan_file(fd, name, info->dlpi_addr, &sec, &found);
	close(fd);
	if (ctx->ret)
		return 1;
	if (!found)
		return 0;
	if (ss->count == DLMLIB_SECTIONS_MAX) {
		ctx->ret = dlmlib_error(E2BIG,
			"more than %d loaded objects declare dlm arrays: declare them in fewer objects",
			DLMLIB_SECTIONS_MAX);
		return 1;
	}
	ss->sec[ss->count++] = sec;
	return 0;
}

int dlmlib_sections_find(struct dlmlib_sections *ss)
{
	struct find_ctx ctx = { .ss = ss };

	memset(ss, 0, sizeof(*ss));
	dl_iterate_phdr(find_one, &ctx);
	return ctx.ret;
}

uint64_t dlmlib_sections_span(const struct dlmlib_sections *ss,
			      uint64_t page_size)
{
	uint64_t span = 0;
	int i;

	for (i = 0; i < ss->count; i++)
		span += (ss->sec[i].size + page_size - 1) / page_size * page_size;
	return span;
}

int dlmlib_sections_map(struct dlmlib_sections *ss,
			const struct dlmlib_space *sp)
{
	uint64_t off = 0, page = sp->setup.page_size;
	int i, err;

	for (i = 0; i < ss->count; i++) {
		struct dlmlib_section *sec = &ss->sec[i];
		void *p;

		p = mmap((void *)sec->addr, sec->size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, sp->fd,
			 (off_t)(sp->setup.mmap_offset + off));
		if (p == MAP_FAILED) {
			err = errno;
			return dlmlib_error(err,
				"cannot map DLM memory over the dlm arrays at %p (%llu KB): %s",
				(void *)sec->addr, (ull)sec->size >> 10,
				strerror(err));
		}
		sec->space_offset = off;
		off += (sec->size + page - 1) / page * page;
	}
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * internal.h - what the libdlm source files share.  Not installed; every
 * name here starts with dlmlib_ and is hidden in libdlm.so and libdlm.a.
 */
#ifndef DLMLIB_INTERNAL_H
#define DLMLIB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/dlmem.h>

/* libdlm itself declares no dlm arrays and must not reference itself. */
#define DLM_NO_SPECIFIER
#include "dlm.h"

#define DLMLIB_MB	(1024ULL * 1024)
/* Largest MB value accepted on a line, as dlmd's memfile parser: 1 PiB
 * (sums stay far from overflow; the kernel's limit is much lower). */
#define DLMLIB_MB_MAX	(1ULL << 30)

/* Who pages the space: /dev/dlm, or libdlm itself (umode.h). */
enum {
	DLMLIB_MODE_KERNEL = 0,
	DLMLIB_MODE_SIGSEGV,
	DLMLIB_MODE_UFFD,
};

/* What dlm_startup() was asked for: options, environment, memfile. */
struct dlmlib_config {
	const char *memfile;	/* NULL: none */
	const char *memfile_src; /* "-f" or "DLM_MEMFILE" */
	uint64_t page_kb;	/* 0: the kernel's default */
	const char *page_src;	/* "--page-kb" or "DLM_PAGE_KB" */
	uint64_t local_mb;	/* memfile's first line or DLM_LOCAL_MB; 0: unset */
	uint64_t servers_mb;	/* sum of the memfile's server lines */
	unsigned int servers;	/* number of server lines */
	unsigned int policy;	/* DLM_POLICY_*, remote spaces only */
	unsigned int protocol;	/* DLM_PROTO_*, remote spaces only */
	int mode;		/* DLMLIB_MODE_*: who pages (--mode, DLM_MODE) */
	const char *mode_src;	/* "--mode" or "DLM_MODE"; NULL: default */
	int verbose;
	int cut;		/* index of the last "--" in argv, 0: none */
};

/*
 * Take the DLM options after the last "--" of argc/argv into @c (argv is
 * not changed; dlmlib_cut_args() removes them).  Then fill what they left
 * open from the environment.  Then read the memfile, if any.  0, or -1
 * (errno and the error message set).
 */
int dlmlib_parse_args(struct dlmlib_config *c, int argc, char **argv);
void dlmlib_cut_args(const struct dlmlib_config *c, int *argc, char ***argv);
int dlmlib_parse_env(struct dlmlib_config *c);
const char *dlmlib_policy_name(uint32_t policy);
const char *dlmlib_protocol_name(uint32_t protocol);
int dlmlib_read_memfile(struct dlmlib_config *c);
/* Parse memfile text from @f (named @name in messages) into @c. */
int dlmlib_parse_memfile(struct dlmlib_config *c, FILE *f, const char *name);

struct dlmlib_umode;

/* A DLM space: the open device, its setup, its mapping. */
struct dlmlib_space {
	int fd;
	void *base;
	struct dlm_setup setup;
	uint64_t remote_size;	/* bytes the memory servers hold */
	unsigned int servers;
	struct dlmlib_umode *um; /* user-level modes (umode.h); fd is -1 */
};

/* Open /dev/dlm, shape the space @c asks for and map it: 0 or -1. */
int dlmlib_space_open(const struct dlmlib_config *c, struct dlmlib_space *sp);
void dlmlib_space_close(struct dlmlib_space *sp);

/* The `dlm` specifier's arrays (section.c): one no-bits section per loaded
 * object that declares some, mapped over by the first DLM pages. */
#define DLMLIB_SECTION		"dlm_bss"
#define DLMLIB_SECTIONS_MAX	16

struct dlmlib_section {
	uintptr_t addr;		/* first byte, page aligned */
	uint64_t size;		/* bytes, rounded up to CPU pages */
	uint64_t space_offset;	/* where in the space (DLM page aligned) */
};

struct dlmlib_sections {
	int count;
	int seen_main;
	struct dlmlib_section sec[DLMLIB_SECTIONS_MAX];
};

/* Find the sections of every loaded object: 0 (count may be 0) or -1. */
int dlmlib_sections_find(struct dlmlib_sections *ss);
/* Bytes of space they take, each rounded up to whole DLM pages. */
uint64_t dlmlib_sections_span(const struct dlmlib_sections *ss,
			      uint64_t page_size);
/* Map the first DLM pages of @sp over them, in order: 0 or -1. */
int dlmlib_sections_map(struct dlmlib_sections *ss,
			const struct dlmlib_space *sp);

/* Set errno to @err and this thread's message; returns -1. */
int dlmlib_error(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* DLMLIB_INTERNAL_H */

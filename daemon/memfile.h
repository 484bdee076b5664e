/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memfile.h - the memfile of DLM-MPI: local size and memory servers.
 *
 *   # comment (also after a value)
 *   1024                  local MB: the frame pool dlmd asks the kernel for
 *   4096 10.0.0.2:7777    one line per memory server, in rank order:
 *   4096 10.0.0.3:7777    MB it holds, and its address (tcp transport)
 *
 * MB are mebibytes (2^20 bytes).  The address may be HOST:PORT or
 * [IPV6]:PORT; transports that find their servers otherwise (MPI ranks)
 * accept lines without one.
 */
#ifndef DLM_MEMFILE_H
#define DLM_MEMFILE_H

#include <stdint.h>
#include <stdio.h>

#include "netaddr.h"

#define MEMFILE_MB_MAX		(1ULL << 30)	/* 1 PiB per line */
#define MEMFILE_SERVERS_MAX	1024
#define MEMFILE_LINE_MAX	1024

/* memfile_parse() flags */
#define MEMFILE_NEED_ADDR	0x1	/* every server line needs HOST:PORT */

struct memfile_server {
	uint64_t mb;
	int has_addr;
	struct netaddr addr;
	char addr_str[NETADDR_STR_MAX];	/* as written in the file */
	unsigned int line;
};

struct memfile {
	uint64_t local_mb;
	unsigned int local_line;
	unsigned int nservers;
	struct memfile_server *servers;	/* rank order */
};

/*
 * Parse F (named NAME in messages) into MF.  Returns 0, or -1 with ERR
 * holding "NAME:LINE: what is wrong: how to fix it" (-ENOMEM aside).
 */
int memfile_parse(FILE *f, const char *name, unsigned int flags,
		  struct memfile *mf, char *err, size_t errlen);
/* memfile_parse() of the file at PATH; open errors go to ERR too. */
int memfile_load(const char *path, unsigned int flags, struct memfile *mf,
		 char *err, size_t errlen);
void memfile_free(struct memfile *mf);

#endif /* DLM_MEMFILE_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the libdlm selftests (they link build/lib/libdlm.a).
 */
#ifndef LIBDLM_SELFTEST_UTIL_H
#define LIBDLM_SELFTEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dlm.h>

/* DLM_DEV, KB, MB, dlm_pattern() */
#include "../dlm/dlm_util.h"

/* Each TEST runs in its own child: start from a clean DLM environment. */
static inline void clear_dlm_env(void)
{
	unsetenv("DLM_MEMFILE");
	unsetenv("DLM_PAGE_KB");
	unsetenv("DLM_LOCAL_MB");
	unsetenv("DLM_VERBOSE");
	unsetenv("DLM_POLICY");
}

/* Write @text to a new file under /tmp; returns its name (static). */
static inline const char *memfile(const char *text)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/libdlm-memfile-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		perror("memfile");
		exit(1);
	}
	close(fd);
	return path;
}

/* dlm_startup() with a command line given as one string. */
struct cmdline {
	int argc;
	char **argv;
	char *v[32];
	char buf[512];
};

static inline int startup_cmd(struct cmdline *c, const char *line)
{
	char *t, *save = NULL;

	snprintf(c->buf, sizeof(c->buf), "%s", line);
	c->argc = 0;
	for (t = strtok_r(c->buf, " ", &save); t && c->argc < 31;
	     t = strtok_r(NULL, " ", &save))
		c->v[c->argc++] = t;
	c->v[c->argc] = NULL;
	c->argv = c->v;
	return dlm_startup(&c->argc, &c->argv);
}

/* Run @fn with stderr going to a file; its text in @out. */
static inline int with_stderr(int (*fn)(void *), void *arg, char *out,
			      size_t len)
{
	char path[] = "/tmp/libdlm-stderr-XXXXXX";
	int fd = mkstemp(path), saved = dup(2), ret, err;
	ssize_t n;

	fflush(stderr);
	dup2(fd, 2);
	ret = fn(arg);
	err = errno;
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, out, len - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
	errno = err;
	return ret;
}


static inline void fill(void *p, size_t len, uint64_t seed)
{
	unsigned char *b = p;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8)
		*(uint64_t *)(b + i) = dlm_pattern(i, seed);
	for (; i < len; i++)
		b[i] = (unsigned char)dlm_pattern(i, seed);
}

/* Index of the first wrong byte, or -1. */
static inline long verify(const void *p, size_t len, uint64_t seed)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8)
		if (*(const uint64_t *)(b + i) != dlm_pattern(i, seed))
			return (long)i;
	for (; i < len; i++)
		if (b[i] != (unsigned char)dlm_pattern(i, seed))
			return (long)i;
	return -1;
}

static inline uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#endif /* LIBDLM_SELFTEST_UTIL_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * memfile.c - parse the memfile (see memfile.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "memfile.h"

#define MAX_FIELDS 4

static void seterr(char *err, size_t errlen, const char *name,
		   unsigned int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void seterr(char *err, size_t errlen, const char *name,
		   unsigned int line, const char *fmt, ...)
{
	va_list ap;
	int n = line ? snprintf(err, errlen, "%s:%u: ", name, line) :
		       snprintf(err, errlen, "%s: ", name);

	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

/* Split LINE in place at whitespace; comments already cut off. */
static int split(char *line, char **field)
{
	int n = 0;
	char *p = line;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p)
			return n;
		if (n == MAX_FIELDS)
			return n + 1;
		field[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r')
			p++;
		if (*p)
			*p++ = '\0';
	}
}

static const char *parse_mb(const char *s, uint64_t *mb)
{
	unsigned long long v;
	const char *p;
	char *end;

	for (p = s; *p; p++)
		if (*p < '0' || *p > '9')
			return "is not a whole number of MB";
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || v > MEMFILE_MB_MAX)
		return "is too large";
	if (v == 0)
		return "must be at least 1 MB";
	*mb = v;
	return NULL;
}

int memfile_parse(FILE *f, const char *name, unsigned int flags,
		  struct memfile *mf, char *err, size_t errlen)
{
	char *buf = NULL, *field[MAX_FIELDS + 1], *hash;
	struct memfile_server *s;
	unsigned int lineno = 0, i;
	const char *why;
	size_t len, cap = 0;
	ssize_t got;
	int n, have_local = 0;

	memset(mf, 0, sizeof(*mf));
	while ((got = getline(&buf, &cap, f)) >= 0) {
		lineno++;
		len = (size_t)got;
		if (len && buf[len - 1] == '\n')
			buf[--len] = '\0';
		if (len > MEMFILE_LINE_MAX) {
			seterr(err, errlen, name, lineno,
			       "line longer than %d characters: shorten it",
			       MEMFILE_LINE_MAX);
			goto fail;
		}
		if (strlen(buf) != len) {
			seterr(err, errlen, name, lineno,
			       "NUL byte in the line: is this a text file?");
			goto fail;
		}
		hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		n = split(buf, field);
		if (n == 0)
			continue;

		if (!have_local) {
			if (n != 1) {
				seterr(err, errlen, name, lineno,
				       "the first line is the local size alone ('MB'), found %d fields: put the memory servers on the lines after it",
				       n);
				goto fail;
			}
			why = parse_mb(field[0], &mf->local_mb);
			if (why) {
				seterr(err, errlen, name, lineno,
				       "local size '%s' %s: write the frame pool size in MB, e.g. 1024",
				       field[0], why);
				goto fail;
			}
			mf->local_line = lineno;
			have_local = 1;
			continue;
		}

		if (n > 2) {
			seterr(err, errlen, name, lineno,
			       "expected 'MB HOST:PORT', found %s%d fields: one memory server per line",
			       n > MAX_FIELDS ? "more than " : "",
			       n > MAX_FIELDS ? MAX_FIELDS : n);
			goto fail;
		}
		if (mf->nservers == MEMFILE_SERVERS_MAX) {
			seterr(err, errlen, name, lineno,
			       "more than %d memory servers: merge some",
			       MEMFILE_SERVERS_MAX);
			goto fail;
		}
		s = realloc(mf->servers, (mf->nservers + 1) * sizeof(*s));
		if (!s) {
			seterr(err, errlen, name, lineno, "out of memory");
			memfile_free(mf);
			free(buf);
			return -ENOMEM;
		}
		mf->servers = s;
		s = &mf->servers[mf->nservers];
		memset(s, 0, sizeof(*s));
		s->line = lineno;
		why = parse_mb(field[0], &s->mb);
		if (why) {
			seterr(err, errlen, name, lineno,
			       "server size '%s' %s: write 'MB HOST:PORT', e.g. 4096 10.0.0.2:7777",
			       field[0], why);
			goto fail;
		}
		if (n == 1 && (flags & MEMFILE_NEED_ADDR)) {
			seterr(err, errlen, name, lineno,
			       "memory server without an address: write 'MB HOST:PORT', e.g. %s 10.0.0.2:7777",
			       field[0]);
			goto fail;
		}
		if (n == 2) {
			why = netaddr_parse(field[1], &s->addr, 0);
			if (why) {
				seterr(err, errlen, name, lineno,
				       "address '%s': %s: write HOST:PORT or [IPV6]:PORT",
				       field[1], why);
				goto fail;
			}
			s->has_addr = 1;
			snprintf(s->addr_str, sizeof(s->addr_str), "%s",
				 field[1]);
			for (i = 0; i < mf->nservers; i++) {
				if (mf->servers[i].has_addr &&
				    !strcmp(mf->servers[i].addr.host, s->addr.host) &&
				    !strcmp(mf->servers[i].addr.port, s->addr.port)) {
					seterr(err, errlen, name, lineno,
					       "server %s is already listed on line %u: each server once (run several dlm-memservers on different ports instead)",
					       field[1], mf->servers[i].line);
					goto fail;
				}
			}
		}
		mf->nservers++;
	}
	if (ferror(f)) {
		seterr(err, errlen, name, 0, "read error: %s", strerror(errno));
		goto fail;
	}
	if (!have_local) {
		seterr(err, errlen, name, 0,
		       "no local size: the first line must be the frame pool size in MB, e.g. 1024");
		goto fail;
	}
	if (!mf->nservers) {
		seterr(err, errlen, name, 0,
		       "no memory servers: add one line 'MB HOST:PORT' per server after the local size (line %u)",
		       mf->local_line);
		goto fail;
	}
	free(buf);
	return 0;
fail:
	free(buf);
	memfile_free(mf);
	return -1;
}

int memfile_load(const char *path, unsigned int flags, struct memfile *mf,
		 char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	int r;

	if (!f) {
		memset(mf, 0, sizeof(*mf));
		seterr(err, errlen, path, 0, "%s", strerror(errno));
		return -1;
	}
	r = memfile_parse(f, path, flags, mf, err, errlen);
	fclose(f);
	return r;
}

void memfile_free(struct memfile *mf)
{
	free(mf->servers);
	memset(mf, 0, sizeof(*mf));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * config.c - what dlm_startup() is asked for: the DLM options after "--",
 * the DLM_* environment variables and the memfile.  Touches no device, so
 * userlib/tests/config_test.c checks it natively.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char dlm_usage[] =
	"the DLM options (after the last '--') are -f MEMFILE, --page-kb N, --policy arr|clock, --protocol serial|cross|async|inline, --mode kernel|sigsegv|uffd, -v";

/* A whole decimal number from 1 to @max, nothing else. */
static int parse_num(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > max)
			return -1;
	}
	if (!v)
		return -1;
	*out = v;
	return 0;
}

static int set_page_kb(struct dlmlib_config *c, const char *s, const char *src)
{
	if (parse_num(s, DLMLIB_MB_MAX, &c->page_kb))
		return dlmlib_error(EINVAL,
			"%s '%s': want the DLM page size in KB, a whole number such as 1024",
			src, s);
	c->page_src = src;
	return 0;
}

/* DLM_POLICY_* and DLM_PROTO_* by name ("?" for a value without one). */
const char *dlmlib_policy_name(uint32_t p)
{
	return p == DLM_POLICY_ARR ? "arr" : p == DLM_POLICY_CLOCK ? "clock" : "?";
}

const char *dlmlib_protocol_name(uint32_t p)
{
	static const char *const names[] = {
		[DLM_PROTO_SERIAL] = "serial", [DLM_PROTO_CROSS] = "cross",
		[DLM_PROTO_ASYNC] = "async", [DLM_PROTO_INLINE] = "inline",
	};

	return p < sizeof(names) / sizeof(names[0]) && names[p] ? names[p] : "?";
}

static int set_policy(struct dlmlib_config *c, const char *s, const char *src)
{
	if (!strcmp(s, dlmlib_policy_name(DLM_POLICY_ARR)))
		c->policy = DLM_POLICY_ARR;
	else if (!strcmp(s, dlmlib_policy_name(DLM_POLICY_CLOCK)))
		c->policy = DLM_POLICY_CLOCK;
	else
		return dlmlib_error(EINVAL,
			"%s '%s': want arr (address round-robin, the papers') or clock",
			src, s);
	return 0;
}

static int set_protocol(struct dlmlib_config *c, const char *s,
			const char *src)
{
	unsigned int i;

	for (i = DLM_PROTO_SERIAL; i <= DLM_PROTO_INLINE; i++) {
		if (!strcmp(s, dlmlib_protocol_name(i))) {
			c->protocol = i;
			return 0;
		}
	}
	return dlmlib_error(EINVAL,
		"%s '%s': want serial, cross, async or inline (the default; see dlmem(4))",
		src, s);
}

static int set_mode(struct dlmlib_config *c, const char *s, const char *src)
{
	if (!strcmp(s, "kernel"))
		c->mode = DLMLIB_MODE_KERNEL;
	else if (!strcmp(s, "sigsegv"))
		c->mode = DLMLIB_MODE_SIGSEGV;
	else if (!strcmp(s, "uffd"))
		c->mode = DLMLIB_MODE_UFFD;
	else
		return dlmlib_error(EINVAL,
			"%s '%s': want kernel (/dev/dlm, the default), sigsegv (libdlm pages with mprotect and SIGSEGV) or uffd (libdlm pages with userfaultfd)",
			src, s);
	c->mode_src = src;
	return 0;
}

static int set_memfile(struct dlmlib_config *c, const char *s, const char *src)
{
	if (!*s)
		return dlmlib_error(EINVAL, "%s: empty memfile name", src);
	c->memfile = s;
	c->memfile_src = src;
	return 0;
}

/* The options that take a value, as OPTION VALUE or OPTION=VALUE. */
static const struct {
	const char *name;
	int (*set)(struct dlmlib_config *c, const char *s, const char *src);
	const char *src;	/* the name its errors give */
} valued[] = {
	{ "--memfile", set_memfile, "-f" },
	{ "--page-kb", set_page_kb, "--page-kb" },
	{ "--policy", set_policy, "--policy" },
	{ "--protocol", set_protocol, "--protocol" },
	{ "--mode", set_mode, "--mode" },
};

#define NVALUED (sizeof(valued) / sizeof(valued[0]))

/* The option at V[*I]; *I moves on to its value if that is V[*I + 1]. */
static int parse_one(struct dlmlib_config *c, int n, char **v, int *i)
{
	const char *a = v[*i];
	size_t k, len;

	if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
		c->verbose = 1;
		return 0;
	}
	if (!strcmp(a, "-f"))
		a = "--memfile";
	else if (!strncmp(a, "-f", 2) && a[2] != '-')
		return set_memfile(c, a + 2, "-f");	/* -fMEMFILE */
	for (k = 0; k < NVALUED; k++) {
		len = strlen(valued[k].name);
		if (strncmp(a, valued[k].name, len))
			continue;
		if (a[len] == '=')
			return valued[k].set(c, a + len + 1, valued[k].src);
		if (a[len])
			continue;
		if (*i + 1 >= n)
			return dlmlib_error(EINVAL,
				"DLM option %s needs a value (prog ARGS -- -f MEMFILE --page-kb N --policy arr)",
				v[*i]);
		return valued[k].set(c, v[++*i], valued[k].src);
	}
	return dlmlib_error(EINVAL, "unknown DLM option '%s': %s", v[*i],
			    dlm_usage);
}

int dlmlib_parse_args(struct dlmlib_config *c, int n, char **v)
{
	int i, dd = 0;

	if (!v)
		return 0;
	for (i = 1; i < n && v[i]; i++)
		if (!strcmp(v[i], "--"))
			dd = i;
	if (!dd)
		return 0;
	n = i;

	for (i = dd + 1; i < n; i++)
		if (parse_one(c, n, v, &i))
			return -1;
	c->cut = dd;
	return 0;
}

void dlmlib_cut_args(const struct dlmlib_config *c, int *argc, char ***argv)
{
	if (c->cut > 0 && argc && argv && *argv) {
		(*argv)[c->cut] = NULL;
		*argc = c->cut;
	}
}

static const char *env(const char *name)
{
	const char *s = getenv(name);

	return s && *s ? s : NULL;
}

int dlmlib_parse_env(struct dlmlib_config *c)
{
	const char *s;

	if (!c->memfile && (s = env("DLM_MEMFILE")))
		set_memfile(c, s, "DLM_MEMFILE");
	if (!c->page_kb && (s = env("DLM_PAGE_KB")) &&
	    set_page_kb(c, s, "DLM_PAGE_KB"))
		return -1;
	if (!c->policy && (s = env("DLM_POLICY")) &&
	    set_policy(c, s, "DLM_POLICY"))
		return -1;
	if (!c->protocol && (s = env("DLM_PROTOCOL")) &&
	    set_protocol(c, s, "DLM_PROTOCOL"))
		return -1;
	if (!c->mode_src && (s = env("DLM_MODE")) &&
	    set_mode(c, s, "DLM_MODE"))
		return -1;
	if (!c->verbose && (s = env("DLM_VERBOSE")) && strcmp(s, "0"))
		c->verbose = 1;
	if (!c->memfile && (s = env("DLM_LOCAL_MB")) &&
	    parse_num(s, DLMLIB_MB_MAX, &c->local_mb))
		return dlmlib_error(EINVAL,
			"DLM_LOCAL_MB '%s': want the size of the local space in MB, a whole number such as 256",
			s);
	return 0;
}

/* HOST:PORT, HOST a name or address, [V6ADDR]:PORT; PORT 1..65535. */
static int check_addr(const char *s)
{
	const char *colon = strrchr(s, ':');
	uint64_t port;
	size_t hlen;

	if (!colon || parse_num(colon + 1, 65535, &port))
		return -1;
	hlen = (size_t)(colon - s);
	if (!hlen)
		return -1;
	if (s[0] == '[')
		return hlen > 2 && s[hlen - 1] == ']' ? 0 : -1;
	return memchr(s, ':', hlen) || memchr(s, '[', hlen) ? -1 : 0;
}

static int memfile_line(struct dlmlib_config *c, char *line, const char *name,
			unsigned int lineno, int first)
{
	static const char ws[] = " \t\r\n\v\f";
	char *save = NULL, *hash = strchr(line, '#');
	char *size, *addr, *extra;
	uint64_t mb;

	if (hash)
		*hash = '\0';
	size = strtok_r(line, ws, &save);
	if (!size)
		return 0;
	addr = strtok_r(NULL, ws, &save);
	extra = addr ? strtok_r(NULL, ws, &save) : NULL;

	if (parse_num(size, DLMLIB_MB_MAX, &mb))
		return dlmlib_error(EINVAL,
			"%s:%u: '%s' is not a size in MB (a whole number from 1 up); the format is: first line the local MB, then one line 'MB [HOST:PORT]' per memory server",
			name, lineno, size);
	if (first) {
		if (addr)
			return dlmlib_error(EINVAL,
				"%s:%u: the first line is the local size in MB alone ('%s' is extra); memory servers go on the following lines as 'MB [HOST:PORT]'",
				name, lineno, addr);
		c->local_mb = mb;
		return 1;
	}
	if (extra)
		return dlmlib_error(EINVAL,
			"%s:%u: extra text '%s': a memory server line is 'MB [HOST:PORT]'",
			name, lineno, extra);
	if (addr && check_addr(addr))
		return dlmlib_error(EINVAL,
			"%s:%u: '%s' is not HOST:PORT (e.g. node2:7100 or [fe80::1]:7100)",
			name, lineno, addr);
	c->servers++;
	c->servers_mb += mb;
	if (c->servers_mb > DLMLIB_MB_MAX)
		return dlmlib_error(EFBIG, "%s:%u: the servers add up to more than %llu MB",
				    name, lineno, (unsigned long long)DLMLIB_MB_MAX);
	return 1;
}

int dlmlib_parse_memfile(struct dlmlib_config *c, FILE *f, const char *name)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned int lineno = 0;
	int first = 1, ret = 0;

	c->servers = 0;
	c->servers_mb = 0;
	while (getline(&line, &cap, f) >= 0) {
		ret = memfile_line(c, line, name, ++lineno, first);
		if (ret < 0)
			break;
		if (ret > 0)
			first = 0;
		ret = 0;
	}
	if (!ret && ferror(f))
		ret = dlmlib_error(EIO, "%s: read error", name);
	else if (!ret && first)
		ret = dlmlib_error(EINVAL,
			"%s: no size in it: the first non-comment line must be the local size in MB (e.g. 1024), then one line 'MB [HOST:PORT]' per memory server",
			name);
	free(line);
	return ret;
}

int dlmlib_read_memfile(struct dlmlib_config *c)
{
	FILE *f;
	int ret, err;

	if (!c->memfile)
		return 0;
	f = fopen(c->memfile, "re");
	if (!f) {
		err = errno;
		return dlmlib_error(err, "cannot read memfile '%s' (from %s): %s",
				    c->memfile, c->memfile_src, strerror(err));
	}
	ret = dlmlib_parse_memfile(c, f, c->memfile);
	fclose(f);
	return ret;
}

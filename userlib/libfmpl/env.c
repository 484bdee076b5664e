// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * env.c - rank, size, key and the tuning knobs from the environment.
 *
 * Rank and size: FMPL_RANK/FMPL_SIZE (fmplrun), else OMPI_COMM_WORLD_RANK/
 * _SIZE (Open MPI's mpirun), else PMI_RANK/PMI_SIZE (MPICH's hydra).  Key:
 * FMPL_KEY, else derived from the parent process (the launcher, which all
 * ranks of one node share): its pid and start time, hashed, never 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "internal.h"

#define FIX_LAUNCH "start the program with fmplrun -np N, or with mpirun"

/* Parse a whole unsigned decimal or 0x number: 0, or -1 if not one. */
static int parse_u64(const char *s, uint64_t *v)
{
	unsigned long long x;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

static int parse_uint(const char *s, uint64_t max, unsigned int *v)
{
	uint64_t x;

	if (parse_u64(s, &x) || x > max)
		return -1;
	*v = (unsigned int)x;
	return 0;
}

static const struct {
	const char *rank, *size;
	enum fmpllib_src src;
} launchers[] = {
	{ "FMPL_RANK", "FMPL_SIZE", FMPLLIB_SRC_FMPL },
	{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", FMPLLIB_SRC_OMPI },
	{ "PMI_RANK", "PMI_SIZE", FMPLLIB_SRC_PMI },
};

/* splitmix64's finaliser: a good 64-bit mix. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

uint64_t fmpllib_derive_key(long ppid, uint64_t starttime)
{
	uint64_t k = mix64(0x464d504c00000000ULL ^ (uint64_t)ppid);

	k = mix64(k ^ starttime);
	return k ? k : 1;
}

uint64_t fmpllib_proc_starttime(long pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	FILE *f;
	size_t n;
	int field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* Field 2 is "(comm)" and may hold anything: start after its ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* p + 2 is field 3 (state); starttime is field 22. */
	p += 2;
	for (field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || sscanf(p, "%llu", &start) != 1)
		return 0;
	return start;
}

static int env_error(char *msg, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int env_error(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return FMPL_ERR_INIT;
}

static int parse_ranks(struct fmpllib_env *e, char *msg, size_t len)
{
	const char *r = NULL, *s = NULL;
	unsigned int rank, size;
	size_t i;

	for (i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++) {
		r = getenv(launchers[i].rank);
		s = getenv(launchers[i].size);
		if (r || s)
			break;
	}
	if (i == sizeof(launchers) / sizeof(launchers[0]))
		return env_error(msg, len,
			"libfmpl: no rank and size in the environment (FMPL_RANK/FMPL_SIZE, OMPI_COMM_WORLD_RANK/_SIZE or PMI_RANK/PMI_SIZE): "
			FIX_LAUNCH);
	if (!r || !s)
		return env_error(msg, len,
			"libfmpl: %s is set but not %s: set both, or " FIX_LAUNCH,
			r ? launchers[i].rank : launchers[i].size,
			r ? launchers[i].size : launchers[i].rank);
	if (parse_uint(s, 1U << 20, &size) || size < 1)
		return env_error(msg, len,
			"libfmpl: %s=%s is not a number of ranks >= 1: " FIX_LAUNCH,
			launchers[i].size, s);
	if (parse_uint(r, 1U << 20, &rank) || rank >= size)
		return env_error(msg, len,
			"libfmpl: %s=%s is not a rank in 0..%u (%s=%u): " FIX_LAUNCH,
			launchers[i].rank, r, size - 1, launchers[i].size, size);
	e->rank = (int)rank;
	e->size = (int)size;
	e->src = launchers[i].src;
	return 0;
}

int fmpllib_parse_env(struct fmpllib_env *e, char *msg, size_t len)
{
	const char *v;
	int ret;

	memset(e, 0, sizeof(*e));
	e->coll = -1;
	e->spin_us = FMPLLIB_SPIN_US;
	e->mode = FMPL_MODE_USER;
	msg[0] = '\0';

	ret = parse_ranks(e, msg, len);
	if (ret)
		return ret;

	v = getenv("FMPL_KEY");
	if (v) {
		if (parse_u64(v, &e->key) || !e->key)
			return env_error(msg, len,
				"libfmpl: FMPL_KEY=%s is not a non-zero number (decimal or 0x hex): unset it, or %s",
				v, FIX_LAUNCH);
	} else {
		long ppid = (long)getppid();

		e->key = fmpllib_derive_key(ppid, fmpllib_proc_starttime(ppid));
		e->key_derived = 1;
	}

	v = getenv("FMPL_MODE");
	if (v) {
		if (!strcasecmp(v, "user") || !strcmp(v, "0"))
			e->mode = FMPL_MODE_USER;
		else if (!strcasecmp(v, "group") || !strcmp(v, "1"))
			e->mode = FMPL_MODE_GROUP;
		else if (!strcasecmp(v, "any") || !strcmp(v, "2"))
			e->mode = FMPL_MODE_ANY;
		else
			return env_error(msg, len,
				"libfmpl: FMPL_MODE=%s: use user, group or any", v);
	}

	v = getenv("FMPL_JOIN_TIMEOUT_MS");
	if (v && parse_uint(v, 0xffffffffU, &e->join_timeout_ms))
		return env_error(msg, len,
			"libfmpl: FMPL_JOIN_TIMEOUT_MS=%s is not a number of milliseconds (0: the kernel's 30000)",
			v);

	v = getenv("FMPL_SPIN_US");
	if (v && parse_uint(v, FMPLLIB_SPIN_US_MAX, &e->spin_us))
		return env_error(msg, len,
			"libfmpl: FMPL_SPIN_US=%s is not a number of microseconds (0..10000000; 0: never spin)",
			v);

	v = getenv("FMPL_FAST");
	if (v && parse_uint(v, FMPL_FAST_COUNT_MAX, &e->fast))
		return env_error(msg, len,
			"libfmpl: FMPL_FAST=%s: give the number of fast matching indices, 0..%u (0: none)",
			v, FMPL_FAST_COUNT_MAX);

	v = getenv("FMPL_COLL");
	if (v) {
		if (!strcasecmp(v, "auto"))
			e->coll = FMPL_COLL_AUTO;
		else if (!strcasecmp(v, "native"))
			e->coll = FMPL_COLL_NATIVE;
		else if (!strcasecmp(v, "tree"))
			e->coll = FMPL_COLL_TREE;
		else
			return env_error(msg, len,
				"libfmpl: FMPL_COLL=%s: use auto, native or tree", v);
	}

	v = getenv("FMPL_DEV");
	e->dev = v && *v ? v : FMPLLIB_DEV;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * log.c - structured key=value logging (see log.h).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define LOG_LINE_MAX 1024

static const char *log_prog = "dlm";
static atomic_int log_level = DLOG_INFO;
static atomic_int log_fd = 2;

static const char *const level_names[] = {
	[DLOG_DEBUG] = "debug",
	[DLOG_INFO] = "info",
	[DLOG_WARN] = "warn",
	[DLOG_ERROR] = "error",
};

void log_init(const char *prog, enum dlog_level level)
{
	log_prog = prog;
	log_level = level;
}

void log_set_level(enum dlog_level level)
{
	log_level = level;
}

void log_set_prog(const char *prog)
{
	log_prog = prog;
}

void log_set_fd(int fd)
{
	log_fd = fd;
}

int log_enabled(enum dlog_level level)
{
	return (int)level >= log_level;
}

int log_parse_level(const char *s)
{
	unsigned int i;

	for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (!strcasecmp(s, level_names[i]))
			return (int)i;
	if (!strcasecmp(s, "warning"))
		return DLOG_WARN;
	return -1;
}

const char *log_level_name(enum dlog_level level)
{
	if ((unsigned int)level > DLOG_ERROR)
		return "?";
	return level_names[level];
}

void dlog(enum dlog_level level, const char *msg, const char *kvfmt, ...)
{
	char line[LOG_LINE_MAX];
	struct timespec ts;
	struct tm tm;
	size_t n = 0, room;
	va_list ap;
	int r;

	if (!log_enabled(level))
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(line, sizeof(line), "ts=%Y-%m-%dT%H:%M:%S", &tm);
	r = snprintf(line + n, sizeof(line) - n,
		     ".%06ldZ level=%s prog=%s msg=\"%s\"",
		     ts.tv_nsec / 1000, log_level_name(level), log_prog, msg);
	n += r > 0 ? (size_t)r : 0;
	if (n < sizeof(line) - 2 && kvfmt && *kvfmt) {
		line[n++] = ' ';
		room = sizeof(line) - n - 1;	/* keep one byte for '\n' */
		va_start(ap, kvfmt);
		r = vsnprintf(line + n, room, kvfmt, ap);
		va_end(ap);
		if (r > 0)
			n += (size_t)r < room ? (size_t)r : room - 1;
	}
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* Best effort: a log line that cannot be written is dropped. */
	if (write(log_fd, line, n) < 0)
		return;
}

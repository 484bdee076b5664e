/* SPDX-License-Identifier: GPL-2.0 */
/*
 * log.h - structured key=value logging on stderr.
 *
 * One line per event, written with a single write(2) so that lines of
 * different threads never interleave:
 *
 *   ts=2025-01-31T12:00:00.123456Z level=info prog=dlmd msg="server dead" rank=2
 *
 * MSG is a fixed text (no variables); the variables go in the key=value
 * part, formatted printf-style by the caller.  String values that may hold
 * spaces are quoted by the caller: err="%s".
 */
#ifndef DLM_LOG_H
#define DLM_LOG_H

#include <stdarg.h>

enum dlog_level {
	DLOG_DEBUG,
	DLOG_INFO,
	DLOG_WARN,
	DLOG_ERROR,
};

/* PROG names the program in every line; LEVEL is the least level shown. */
void log_init(const char *prog, enum dlog_level level);
void log_set_level(enum dlog_level level);
/* PROG must stay valid: it is not copied. */
void log_set_prog(const char *prog);
/* Log to FD instead of stderr (tests). */
void log_set_fd(int fd);
int log_enabled(enum dlog_level level);
/* "debug", "info", "warn" (or "warning"), "error": the level, or -1. */
int log_parse_level(const char *s);
const char *log_level_name(enum dlog_level level);

void dlog(enum dlog_level level, const char *msg, const char *kvfmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_debug(msg, ...) \
	do { if (log_enabled(DLOG_DEBUG)) dlog(DLOG_DEBUG, msg, __VA_ARGS__); } while (0)
#define log_info(msg, ...)  dlog(DLOG_INFO, msg, __VA_ARGS__)
#define log_warn(msg, ...)  dlog(DLOG_WARN, msg, __VA_ARGS__)
#define log_error(msg, ...) dlog(DLOG_ERROR, msg, __VA_ARGS__)

#endif /* DLM_LOG_H */

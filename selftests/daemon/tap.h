/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap.h - minimal TAP 13 output for the daemon's native tests.
 *
 *   tap_plan(3);
 *   tap_ok(x == 1, "x is one (got %d)", x);
 *   return tap_done();
 *
 * tap_done() reports a count that does not match the plan as a failure.
 */
#ifndef DLM_TAP_H
#define DLM_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_planned, tap_n, tap_failed;

static inline void tap_plan(int n)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	tap_planned = n;
	printf("TAP version 13\n1..%d\n", n);
}

static inline int tap_ok(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		tap_failed = 1;
	return cond;
}

static inline void tap_diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static inline int tap_done(void)
{
	if (tap_n != tap_planned) {
		printf("# planned %d tests, ran %d\n", tap_planned, tap_n);
		return 1;
	}
	return tap_failed;
}

#endif /* DLM_TAP_H */

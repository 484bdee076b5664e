// SPDX-License-Identifier: GPL-2.0
/*
 * sleeper.c - a thread that only wakes up: sleep US microseconds in
 * nanosleep(), again and again, until killed.  wakeup.sh runs it beside a
 * program on the program's CPU to measure what each wake-up costs the
 * program there (an interrupt, two context switches, the scheduler).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: sleeper [-h] US\n"
		"  sleep US microseconds (1 to 10000000) in a loop until killed\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct timespec ts;
	char *end;
	long us;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	errno = 0;
	us = strtol(argv[optind], &end, 10);
	if (errno || *end || us < 1 || us > 10000000) {
		fprintf(stderr, "sleeper: US '%s': give microseconds from 1 to 10000000\n",
			argv[optind]);
		return 2;
	}
	ts.tv_sec = us / 1000000;
	ts.tv_nsec = us % 1000000 * 1000;
	for (;;)
		nanosleep(&ts, NULL);
}

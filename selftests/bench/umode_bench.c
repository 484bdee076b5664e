// SPDX-License-Identifier: GPL-2.0
/*
 * umode_bench - one libdlm program for the three paging modes (DLM_MODE
 * or --mode=kernel|sigsegv|uffd after "--"), run by umode.sh:
 *
 *   umode_bench fault [-n PASSES] -- DLM-OPTIONS
 *	the space is dlm_alloc()ed whole (the memfile makes it several
 *	times the local budget); pass 1 writes one word per DLM page
 *	(zero-fill faults plus write-backs once the budget is full), passes
 *	2..PASSES (default 3) read and write one word of every DLM page
 *	again in the same order, so that under ARR every touch is one fault
 *	with one fetch and the write-back of a dirty victim, in every mode
 *	(the kernel cannot drop a clean copy instead).  us_per_fault = time
 *	of passes 2.. / DLM pages touched there.
 *
 *   umode_bench triad -s MB -i ITERS -- DLM-OPTIONS
 *	STREAM triad a[j] = b[j] + 3.0 * c[j] over three arrays of MB each
 *	in the DLM space; b and c filled with pseudo-random doubles first.
 *	triad_mbs is STREAM's 24 bytes per element over the mean time of
 *	iterations 2..ITERS (1 if ITERS is 1).  Every element of a is
 *	checked at the end (bad = wrong ones).
 *
 * Prints one line of key=value (with the mode's counters); progress on
 * stderr.  Exit 0, 1 on a wrong value, 2 on a setup error.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dlm.h>

#define MB (1024ULL * 1024)

typedef unsigned long long ull;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static double gen(uint64_t j, uint64_t seed)
{
	uint64_t x = (j + 1) * 0x9E3779B97F4A7C15ULL ^ seed;

	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ULL;
	x ^= x >> 27;
	return (double)(x >> 11) / 9007199254740992.0;
}

static const char *mode(void)
{
	const char *m = getenv("DLM_MODE");

	return m && *m ? m : "kernel";
}

static void counters(const struct dlm_lib_stats *a,
		     const struct dlm_lib_stats *b)
{
	printf("faults=%llu swapins=%llu swapouts=%llu ",
	       (ull)(b->faults - a->faults), (ull)(b->swapins - a->swapins),
	       (ull)(b->swapouts - a->swapouts));
}

static int fault_bench(int passes)
{
	struct dlm_lib_stats s0, s1, s2;
	uint64_t n, i, page, bad = 0;
	double t0, t1, t2;
	char *p;
	int k;

	dlm_stats(&s0);
	page = s0.page_size;
	n = s0.total_size / page;
	p = dlm_alloc(n * page);
	if (!p) {
		fprintf(stderr, "umode_bench: dlm_alloc: %s\n", dlm_last_error());
		return 2;
	}
	t0 = now();
	for (i = 0; i < n; i++)
		*(volatile uint64_t *)(p + i * page) = i + 1;
	t1 = now();
	dlm_stats(&s1);
	for (k = 2; k <= passes; k++) {
		for (i = 0; i < n; i++) {
			volatile uint64_t *w = (uint64_t *)(p + i * page);

			if (*w != i + k - 1)
				bad++;
			*w = i + k;
		}
		fprintf(stderr, "umode_bench: %s: pass %d/%d done\n", mode(),
			k, passes);
	}
	t2 = now();
	dlm_stats(&s2);
	printf("test=fault mode=%s page_kb=%llu dpages=%llu budget_dpages=%llu first_us=%.1f us_per_fault=%.1f ",
	       mode(), (ull)page >> 10, (ull)n, (ull)(s0.local_budget / page),
	       (t1 - t0) * 1e6 / n,
	       passes > 1 ? (t2 - t1) * 1e6 / (n * (passes - 1)) : 0.0);
	counters(&s1, &s2);
	printf("bad=%llu\n", (ull)bad);
	return bad ? 1 : 0;
}

static int triad_bench(uint64_t mb, int iters)
{
	struct dlm_lib_stats s0, s1;
	uint64_t n = mb * MB / sizeof(double), j, bad = 0;
	double *a, *b, *c, t0, t, sum = 0, init;
	int it;

	a = dlm_alloc(n * sizeof(double));
	b = dlm_alloc(n * sizeof(double));
	c = dlm_alloc(n * sizeof(double));
	if (!a || !b || !c) {
		fprintf(stderr, "umode_bench: dlm_alloc: %s\n", dlm_last_error());
		return 2;
	}
	t0 = now();
	for (j = 0; j < n; j++) {
		b[j] = gen(j, 1);
		c[j] = gen(j, 2);
	}
	init = now() - t0;
	dlm_stats(&s0);
	for (it = 1; it <= iters; it++) {
		t0 = now();
		for (j = 0; j < n; j++)
			a[j] = b[j] + 3.0 * c[j];
		t = now() - t0;
		if (it > 1 || iters == 1)
			sum += t;
		fprintf(stderr, "umode_bench: %s: triad iteration %d/%d: %.1f MB/s\n",
			mode(), it, iters, 3.0 * n * sizeof(double) / 1e6 / t);
	}
	dlm_stats(&s1);
	for (j = 0; j < n; j++)
		if (a[j] != gen(j, 1) + 3.0 * gen(j, 2))
			bad++;
	t = sum / (iters > 1 ? iters - 1 : 1);
	printf("test=triad mode=%s array_mb=%llu page_kb=%llu budget_mb=%.1f init_s=%.3f triad_mbs=%.1f triad_s=%.3f ",
	       mode(), (ull)mb, (ull)s1.page_size >> 10,
	       s1.local_budget / (double)MB, init,
	       3.0 * n * sizeof(double) / 1e6 / t, t);
	counters(&s0, &s1);
	printf("bad=%llu\n", (ull)bad);
	return bad ? 1 : 0;
}

static __attribute__((noreturn)) void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: umode_bench fault [-n PASSES] -- DLM-OPTIONS\n"
		"       umode_bench triad [-s MB] [-i ITERS] -- DLM-OPTIONS\n");
	exit(status);
}

int main(int argc, char *argv[])
{
	uint64_t mb = 32;
	int passes = 3, iters = 3, i, ret;
	const char *what;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		usage(0);
	if (dlm_startup(&argc, &argv))
		return 2;
	if (argc < 2)
		usage(2);
	what = argv[1];
	for (i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-n"))
			passes = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-s"))
			mb = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "-i"))
			iters = atoi(argv[i + 1]);
		else
			usage(2);
	}
	if (i != argc || passes < 1 || iters < 1 || !mb)
		usage(2);
	if (!strcmp(what, "fault"))
		ret = fault_bench(passes);
	else if (!strcmp(what, "triad"))
		ret = triad_bench(mb, iters);
	else
		usage(2);
	fflush(stdout);
	dlm_shutdown();
	return ret;
}

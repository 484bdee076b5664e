// SPDX-License-Identifier: GPL-2.0
/*
 * stream - STREAM-style copy and triad over three arrays, in ordinary
 * memory or in a remote-backed /dev/dlm space with a local budget.
 *
 *   stream [-m malloc|dlm] [-s MB_PER_ARRAY] [-l LOCAL_PERCENT]
 *          [-p PAGE_KB] [-i ITERATIONS] [-x serial|cross|async|inline]
 *          [-P arr|clock] [-q]
 *
 * -m malloc (default) uses anonymous memory: alone it is the all-local
 * reference, under a cgroup memory.max it is "the same arrays on swap".
 * -m dlm puts the three arrays in one /dev/dlm space (dlmd must run) whose
 * local budget is LOCAL_PERCENT of the three arrays, rounded down to whole
 * DLM pages; under three pages (one per array) it refuses with status 2
 * and names the -p that fits.
 *
 * b and c are filled with pseudo-random doubles (so that a compressing swap
 * such as zram gets no free lunch), then each iteration runs
 *   copy:  a[j] = b[j]               (16 bytes counted per element)
 *   triad: a[j] = b[j] + 3.0 * c[j]  (24 bytes counted per element)
 * as STREAM counts them.  The rates reported are the mean over iterations
 * 2..N (the first one warms up; with -i 1, over that one).  At the end a
 * sample of every array is checked against what it must hold.
 *
 * Prints one line of key=value; progress goes to stderr unless -q.  Exit
 * 0, 1 on a wrong value, 2 on a setup error (errno named).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/dlmem.h>

#include "../dlm/dlm_util.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* A pseudo-random double in [0, 1) determined by @j and @seed. */
static double gen(uint64_t j, uint64_t seed)
{
	uint64_t x = (j + 1) * 0x9E3779B97F4A7C15ULL ^ seed;

	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ULL;
	x ^= x >> 27;
	return (double)(x >> 11) / 9007199254740992.0;
}

static int dlm_fd = -1;

static void *dlm_space(uint64_t bytes, unsigned int pct, uint64_t page,
		       uint32_t protocol, uint32_t policy, uint64_t *budget_out)
{
	struct dlm_api api = { .api = DLM_API_VERSION };
	struct dlm_setup s = { .backing = DLM_BACKING_REMOTE };
	void *p;
	int fd;

	s.page_size = page;
	s.total_size = (bytes + page - 1) / page * page;
	s.local_budget = s.total_size * pct / 100 / page * page;
	/*
	 * The triad touches a, b and c at once: with fewer than three
	 * resident pages each element evicts the page the next one needs,
	 * and a run takes hours instead of seconds.
	 */
	if (s.local_budget < 3 * page && s.local_budget < s.total_size) {
		uint64_t kb = bytes * pct / 100 / 3 / 4096 * 4;

		fprintf(stderr, "stream: %u%% of 3 x %llu MB is %llu DLM page%s of %llu KB, and the triad needs one per array: raise -l or -s",
			pct, (unsigned long long)(bytes / 3 / MB),
			(unsigned long long)(s.local_budget / page),
			s.local_budget == page ? "" : "s",
			(unsigned long long)(page / 1024));
		if (kb)
			fprintf(stderr, ", or give -p %llu or less",
				(unsigned long long)kb);
		fprintf(stderr, "\n");
		return NULL;
	}
	s.protocol = protocol;
	s.policy = policy;
	fd = open("/dev/dlm", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "stream: /dev/dlm: %s (load dlmem.ko)\n",
			strerror(errno));
		return NULL;
	}
	if (ioctl(fd, DLM_IOC_API, &api) || ioctl(fd, DLM_IOC_SETUP, &s)) {
		fprintf(stderr, "stream: DLM_IOC_SETUP: %s%s\n", strerror(errno),
			errno == ENOTCONN ? " (start dlmd)" : "");
		return NULL;
	}
	p = mmap(NULL, s.total_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 s.mmap_offset);
	if (p == MAP_FAILED) {
		fprintf(stderr, "stream: mmap: %s\n", strerror(errno));
		return NULL;
	}
	*budget_out = s.local_budget;
	dlm_fd = fd;	/* stays open: the space lives until exit */
	return p;
}

static const struct option help_opt[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static void usage(FILE *f)
{
	fprintf(f, "usage: stream [-m malloc|dlm] [-s MB_PER_ARRAY] [-l LOCAL_PERCENT]\n"
		   "              [-p PAGE_KB] [-i ITERATIONS] [-x serial|cross|async|inline]\n"
		   "              [-P arr|clock] [-q]\n");
}

int main(int argc, char **argv)
{
	uint64_t mb = 32, page = MB, budget = 0, n, j, bad = 0;
	unsigned int pct = 10, iters = 4, it, quiet = 0;
	uint32_t policy = 0;
	unsigned int protocol = 0;
	double t, tcopy = 0, ttriad = 0, tinit;
	const char *mode = "malloc";
	double *a, *b, *c;
	int opt, counted = 0;

	while ((opt = getopt_long(argc, argv, "m:s:l:p:i:x:P:qh", help_opt,
				  NULL)) != -1) {
		switch (opt) {
		case 'm': mode = optarg; break;
		case 's': mb = strtoull(optarg, NULL, 0); break;
		case 'l': pct = (unsigned int)atoi(optarg); break;
		case 'p': page = strtoull(optarg, NULL, 0) * 1024; break;
		case 'i': iters = (unsigned int)atoi(optarg); break;
		case 'x':
			if (dlm_proto_opt(optarg, &protocol))
				return 2;
			break;
		case 'P': policy = optarg[0] == 'a' ? DLM_POLICY_ARR :
				   DLM_POLICY_CLOCK; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!mb || !iters || !pct || pct > 100 || !page || page % 4096) {
		usage(stderr);
		return 2;
	}
	n = mb * MB / sizeof(double);
	if (!strcmp(mode, "dlm")) {
		a = dlm_space(3 * mb * MB, pct, page, protocol, policy,
			      &budget);
		if (!a)
			return 2;
	} else if (!strcmp(mode, "malloc")) {
		a = mmap(NULL, 3 * mb * MB, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a == MAP_FAILED) {
			fprintf(stderr, "stream: mmap: %s\n", strerror(errno));
			return 2;
		}
	} else {
		usage(stderr);
		return 2;
	}
	b = a + n;
	c = b + n;

	t = now();
	for (j = 0; j < n; j++) {
		b[j] = gen(j, 1);
		c[j] = gen(j, 2);
	}
	tinit = now() - t;
	for (it = 0; it < iters; it++) {
		double t1, t2;

		t = now();
		for (j = 0; j < n; j++)
			a[j] = b[j];
		t1 = now() - t;
		t = now();
		for (j = 0; j < n; j++)
			a[j] = b[j] + 3.0 * c[j];
		t2 = now() - t;
		if (it > 0 || iters == 1) {
			tcopy += t1;
			ttriad += t2;
			counted++;
		}
		if (!quiet)
			fprintf(stderr, "stream: %s %u%%: iteration %u/%u: copy %.0f MB/s, triad %.0f MB/s\n",
				mode, pct, it + 1, iters, 16.0 * n / t1 / 1e6,
				24.0 * n / t2 / 1e6);
	}
	for (j = 0; j < n; j += 509) {
		bad += b[j] != gen(j, 1) || c[j] != gen(j, 2);
		bad += a[j] != b[j] + 3.0 * c[j];
	}
	if (dlm_fd >= 0) {
		struct dlm_stats st;

		if (!ioctl(dlm_fd, DLM_IOC_STATS, &st))
			printf("swapins=%llu swapouts=%llu drops=%llu readaheads=%llu store_waits=%llu ",
			       (unsigned long long)st.swapins,
			       (unsigned long long)st.swapouts,
			       (unsigned long long)st.drops,
			       (unsigned long long)st.readaheads,
			       (unsigned long long)st.store_waits);
	}
	printf("mode=%s local_pct=%u array_mb=%llu page_kb=%llu budget_kb=%llu iterations=%u init_s=%.3f copy_mbs=%.1f triad_mbs=%.1f triad_s=%.3f bad=%llu\n",
	       mode, pct, (unsigned long long)mb,
	       (unsigned long long)(page / 1024),
	       (unsigned long long)(budget / 1024), iters, tinit,
	       16.0 * n * counted / tcopy / 1e6,
	       24.0 * n * counted / ttriad / 1e6, ttriad / counted,
	       (unsigned long long)bad);
	return bad ? 1 : 0;
}

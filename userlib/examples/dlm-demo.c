// SPDX-License-Identifier: GPL-2.0
/*
 * dlm-demo - a tour of /dev/dlm: handshake, a DLM space, one fault per DLM
 * page, data checked, and the defined outcome of running out of budget.
 *
 * It times filling the DLM space against filling the same amount of
 * ordinary anonymous memory, in the same run, and reports the ratio.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/dlmem.h>

#define MiB (1024ULL * 1024)

static void usage(FILE *f)
{
	fprintf(f,
"Usage: dlm-demo [--size MB] [--page KB] [--budget MB]\n"
"\n"
"Maps a DLM space from /dev/dlm, fills and checks it, prints the kernel's\n"
"counters, compares with anonymous memory, and shows that touching more\n"
"than the local budget (with no daemon) ends in SIGBUS, not a hang.\n"
"\n"
"  -s, --size MB     DLM space size (default 256)\n"
"  -p, --page KB     DLM page size, a multiple of 4 (default 1024)\n"
"  -b, --budget MB   local budget for the SIGBUS part (default 2)\n"
"  -h, --help        this text\n");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int die(const char *what)
{
	fprintf(stderr, "dlm-demo: %s: %s\n", what, strerror(errno));
	if (errno == ENOENT)
		fprintf(stderr, "dlm-demo: load the module first: modprobe dlmem (or insmod kmod/dlmem.ko)\n");
	exit(1);
}

static int open_space(uint64_t size, uint64_t page, uint64_t budget,
		      uint64_t *offset)
{
	struct dlm_api api = { .api = DLM_API_VERSION,
			       .features = DLM_FEATURE_LOCAL |
					   DLM_FEATURE_STATS };
	struct dlm_setup s = { .backing = DLM_BACKING_LOCAL,
			       .page_size = page, .total_size = size,
			       .local_budget = budget };
	int fd = open("/dev/dlm", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("open /dev/dlm");
	if (ioctl(fd, DLM_IOC_API, &api))
		die("DLM_IOC_API (kernel and demo disagree on the API version?)");
	if (ioctl(fd, DLM_IOC_SETUP, &s))
		die("DLM_IOC_SETUP");
	*offset = s.mmap_offset;
	return fd;
}

static void fill(uint64_t *w, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		w[i] = i * 2654435761u;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "page", required_argument, NULL, 'p' },
		{ "budget", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t size = 256 * MiB, page = 1024 * 1024, budget = 2 * MiB;
	uint64_t off, i, bad = 0, *w;
	struct dlm_stats st;
	double t0, t_dlm, t_anon;
	int fd, c, status;
	pid_t pid;

	while ((c = getopt_long(argc, argv, "s:p:b:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': size = strtoull(optarg, NULL, 0) * MiB; break;
		case 'p': page = strtoull(optarg, NULL, 0) * 1024; break;
		case 'b': budget = strtoull(optarg, NULL, 0) * MiB; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!size || !page || size % page || !budget || budget % page) {
		fprintf(stderr, "dlm-demo: size and budget must be non-zero multiples of the page size\n");
		return 2;
	}

	/* 1. A DLM space holding everything locally. */
	fd = open_space(size, page, 0, &off);
	w = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	if (w == MAP_FAILED)
		die("mmap");
	printf("DLM space: %llu MiB in DLM pages of %llu KiB\n",
	       (unsigned long long)(size / MiB),
	       (unsigned long long)(page / 1024));

	t0 = now();
	fill(w, size / 8);
	t_dlm = now() - t0;
	for (i = 0; i < size / 8; i++)
		bad += w[i] != i * 2654435761u;
	if (ioctl(fd, DLM_IOC_STATS, &st))
		die("DLM_IOC_STATS");
	printf("  filled and checked: %llu bad words\n", (unsigned long long)bad);
	printf("  faults %llu for %llu CPU pages (one per DLM page), %llu MiB resident\n",
	       (unsigned long long)st.faults,
	       (unsigned long long)(size / getpagesize()),
	       (unsigned long long)(st.bytes_resident / MiB));
	munmap(w, size);
	close(fd);

	/* Same work on anonymous memory, same run: the comparison point. */
	w = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED)
		die("mmap anonymous");
	t0 = now();
	fill(w, size / 8);
	t_anon = now() - t0;
	munmap(w, size);
	printf("  first-touch fill: /dev/dlm %.3f s, anonymous memory %.3f s, ratio %.2f\n",
	       t_dlm, t_anon, t_dlm / t_anon);

	/* 2. The budget: with no daemon, the page after it is SIGBUS. */
	fd = open_space(budget + page, page, budget, &off);
	w = mmap(NULL, budget + page, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 off);
	if (w == MAP_FAILED)
		die("mmap");
	printf("Budget: %llu MiB space, %llu MiB local budget, no remote backing\n",
	       (unsigned long long)((budget + page) / MiB),
	       (unsigned long long)(budget / MiB));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		memset(w, 1, budget);			/* fits */
		((volatile char *)w)[budget] = 1;	/* does not */
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (ioctl(fd, DLM_IOC_STATS, &st))
		die("DLM_IOC_STATS");
	printf("  child touching past the budget: %s; kernel counted %llu SIGBUS\n",
	       WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "no signal",
	       (unsigned long long)st.sigbus);
	munmap(w, budget + page);
	close(fd);

	if (bad || st.sigbus != 1 || !WIFSIGNALED(status) ||
	    WTERMSIG(status) != SIGBUS) {
		printf("dlm-demo: FAILED\n");
		return 1;
	}
	printf("dlm-demo: OK\n");
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * xfer_bench - the raw rate of dlmd's transport: 1 MB (or -b KB) transfers
 * to and from dlm-memservers through the same transport code dlmd uses,
 * with no kernel, no faults and no page tables in the way.
 *
 *   xfer_bench [-t tcp|verbs] [-b KB] [-n COUNT] [-d DEPTH] HOST:PORT...
 *
 * Writes COUNT blocks spread over the servers (DEPTH in flight per
 * server) twice, then reads them all back and checks them.  The first
 * write pass also pays the servers' first touch of their memory (page
 * faults and zeroing on the server, twice the time of the second pass
 * under TCG), which a paging run pays once at its start, so the write
 * rate reported is the second pass's; the first is reported beside it.
 * Prints "cold_write_mbs=... write_mbs=... read_mbs=..." (one direction
 * each, MB = 10^6 bytes, as stream reports).  With -t verbs
 * (dlm-memserver --transport verbs) the buffer is registered as dlmd
 * registers its frame pool.  Exit 0, 1 on a mismatch, 2 on a setup
 * error.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "netaddr.h"
#include "transport.h"

#define MAXSRV 8

static const struct transport_ops *tops = &transport_tcp;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static unsigned int inflight[MAXSRV], failed;

struct job {
	struct dlm_xfer x;
	unsigned int srv;
};

static void done(struct dlm_xfer *x, int status)
{
	struct job *j = (struct job *)x;

	pthread_mutex_lock(&lock);
	inflight[j->srv]--;
	failed += status != 0;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&lock);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Run COUNT transfers of OP; block i goes to server i % NSRV. */
static double pass(struct tconn **c, unsigned int nsrv, enum xfer_op op,
		   struct job *jobs, uint8_t *buf, size_t bs, unsigned int count,
		   unsigned int depth)
{
	double t = now();
	unsigned int i, s;

	for (i = 0; i < count; i++) {
		s = i % nsrv;
		pthread_mutex_lock(&lock);
		while (inflight[s] >= depth)
			pthread_cond_wait(&cv, &lock);
		inflight[s]++;
		pthread_mutex_unlock(&lock);
		jobs[i] = (struct job){ .srv = s };
		jobs[i].x.op = op;
		jobs[i].x.len = (uint32_t)bs;
		jobs[i].x.remote_off = (uint64_t)(i / nsrv) * bs;
		jobs[i].x.buf = buf + (size_t)i * bs;
		jobs[i].x.done = done;
		tops->submit(c[s], &jobs[i].x);
	}
	pthread_mutex_lock(&lock);
	for (s = 0; s < nsrv; s++)
		while (inflight[s])
			pthread_cond_wait(&cv, &lock);
	pthread_mutex_unlock(&lock);
	return now() - t;
}

static const struct option help_opt[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

int main(int argc, char **argv)
{
	unsigned int count = 256, depth = 2, nsrv, i;
	size_t bs = 1 << 20, k;
	struct tconn *c[MAXSRV];
	double tc, tw, tr;
	struct job *jobs;
	uint8_t *buf;
	char err[256];
	int opt;

	while ((opt = getopt_long(argc, argv, "t:b:n:d:h", help_opt,
				  NULL)) != -1) {
		switch (opt) {
		case 't':
#ifdef DLM_WITH_VERBS
			if (!strcmp(optarg, "verbs")) {
				tops = &transport_verbs;
				break;
			}
#endif
			if (strcmp(optarg, "tcp")) {
				fprintf(stderr, "xfer_bench: -t %s: tcp%s\n", optarg,
#ifdef DLM_WITH_VERBS
					" or verbs"
#else
					" only (built without rdma-core)"
#endif
					);
				return 2;
			}
			break;
		case 'b': bs = strtoul(optarg, NULL, 0) * 1024; break;
		case 'n': count = (unsigned int)atoi(optarg); break;
		case 'd': depth = (unsigned int)atoi(optarg); break;
		default:
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: xfer_bench [-t tcp|verbs] [-b KB] [-n COUNT] [-d DEPTH] HOST:PORT...\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	nsrv = (unsigned int)(argc - optind);
	if (!nsrv || nsrv > MAXSRV || !bs || !count || !depth) {
		fprintf(stderr, "xfer_bench: give 1 to %d servers, non-zero -b -n -d\n",
			MAXSRV);
		return 2;
	}
	log_init("xfer_bench", DLOG_WARN);
	buf = malloc((size_t)count * bs);
	jobs = calloc(count, sizeof(*jobs));
	if (!buf || !jobs) {
		fprintf(stderr, "xfer_bench: out of memory\n");
		return 2;
	}
	for (i = 0; i < nsrv; i++) {
		struct transport_opts o = { .connect_timeout_ms = 5000,
					    .io_timeout_ms = 30000, .index = i };
		struct netaddr a;
		const char *why = netaddr_parse(argv[optind + i], &a, 0);
		uint64_t size;

		if (why) {
			fprintf(stderr, "xfer_bench: %s: %s\n", argv[optind + i], why);
			return 2;
		}
		if (tops->open(&c[i], &a, &o, &size, err, sizeof(err))) {
			fprintf(stderr, "xfer_bench: %s: %s\n", argv[optind + i], err);
			return 2;
		}
		if (size < (uint64_t)((count + nsrv - 1) / nsrv) * bs) {
			fprintf(stderr, "xfer_bench: %s holds %llu bytes, need %llu: lower -n\n",
				argv[optind + i], (unsigned long long)size,
				(unsigned long long)((count + nsrv - 1) / nsrv) * bs);
			return 2;
		}
	}
	for (i = 0; tops->set_pool && i < nsrv; i++) {
		if (tops->set_pool(c[i], buf, (uint64_t)count * bs, err,
				   sizeof(err))) {
			fprintf(stderr, "xfer_bench: %s\n", err);
			return 2;
		}
	}
	for (k = 0; k < (size_t)count * bs; k++)
		buf[k] = (uint8_t)(k * 7 + k / 4096);
	tc = pass(c, nsrv, XFER_WRITE, jobs, buf, bs, count, depth);
	tw = pass(c, nsrv, XFER_WRITE, jobs, buf, bs, count, depth);
	memset(buf, 0, (size_t)count * bs);
	tr = pass(c, nsrv, XFER_READ, jobs, buf, bs, count, depth);
	for (k = 0; k < (size_t)count * bs; k++)
		if (buf[k] != (uint8_t)(k * 7 + k / 4096))
			break;
	for (i = 0; i < nsrv; i++)
		tops->close(c[i]);
	printf("transport=%s servers=%u block_kb=%zu count=%u depth=%u cold_write_mbs=%.1f write_mbs=%.1f read_mbs=%.1f failed=%u intact=%d\n",
	       tops->name, nsrv, bs / 1024, count, depth,
	       (double)count * bs / tc / 1e6, (double)count * bs / tw / 1e6,
	       (double)count * bs / tr / 1e6, failed,
	       k == (size_t)count * bs);
	return failed || k != (size_t)count * bs;
}

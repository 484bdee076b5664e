// SPDX-License-Identifier: GPL-2.0
/*
 * test-mirror - dlmd's mirrored pairs (transport_mirror.c, --replicas 2)
 * over the tcp transport against two real dlm-memservers on loopback: a
 * server killed and restarted on its address rejoins, resynchronised while
 * a thread keeps writing, and then holds every page alone; a restarted
 * server smaller than the pair is refused.  Pages 6 and 7 are never
 * written, so the rejoin copies 6 MiB of the 8 (test-mirror.sh checks the
 * log); dlmd never reads what it has not written, and neither does this.
 *
 * Usage: test-mirror MEMSERVER PORT_A PID_A PORT_B PID_B
 * (two 8 MiB servers on 127.0.0.1; MEMSERVER restarts them).  TAP.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "netaddr.h"
#include "tap.h"
#include "transport.h"

#define MiB (1024ULL * 1024)
#define SIZE (8 * MiB)
#define PAGE MiB
#define NPAGES (SIZE / PAGE)
#define WRITTEN 6		/* pages 0..5 are written, 6 and 7 never */

static const char *memserver;
static struct tconn *m;
static atomic_int dead_calls;
static atomic_int stop_writer;
static uint64_t done_gen[NPAGES];	/* last generation stored, by page */
static pthread_mutex_t gen_lock = PTHREAD_MUTEX_INITIALIZER;

static void dead(void *ctx, unsigned int index, const char *why)
{
	(void)ctx;
	(void)index;
	(void)why;
	atomic_fetch_add(&dead_calls, 1);
}

static int io(enum xfer_op op, uint64_t page, void *buf)
{
	return transport_io(&transport_mirror, m, op, page * PAGE, PAGE, buf);
}

static void fill(uint64_t *buf, uint64_t page, uint64_t gen)
{
	size_t i;

	for (i = 0; i < PAGE / 8; i++)
		buf[i] = page << 48 ^ gen << 24 ^ i;
}

static int write_page(uint64_t *buf, uint64_t page, uint64_t gen)
{
	int r;

	fill(buf, page, gen);
	r = io(XFER_WRITE, page, buf);
	if (!r) {
		pthread_mutex_lock(&gen_lock);
		done_gen[page] = gen;
		pthread_mutex_unlock(&gen_lock);
	}
	return r;
}

/* Written pages whose content is not their last stored generation. */
static int wrong_pages(uint64_t *buf, uint64_t *want)
{
	int wrong = 0;
	uint64_t p;

	for (p = 0; p < WRITTEN; p++) {
		if (io(XFER_READ, p, buf)) {
			wrong++;
			continue;
		}
		fill(want, p, done_gen[p]);
		wrong += memcmp(buf, want, PAGE) != 0;
	}
	return wrong;
}

/* Pages 4..5 rewritten in turn until told to stop; counts the writes. */
static void *writer(void *arg)
{
	uint64_t *buf = malloc(PAGE), gen = 100, p;
	long *writes = arg;

	while (buf && !atomic_load(&stop_writer)) {
		for (p = 4; p < WRITTEN; p++) {
			if (write_page(buf, p, ++gen))
				goto out;
			(*writes)++;
		}
	}
out:
	free(buf);
	return NULL;
}

static pid_t start_server(const char *port, const char *mb)
{
	char listen[64];
	pid_t pid;

	snprintf(listen, sizeof(listen), "127.0.0.1:%s", port);
	pid = fork();
	if (!pid) {
		execl(memserver, memserver, "--listen", listen, "--size", mb,
		      "--log-level", "warn", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Wait up to SECS for mirror_replicas() to become WANT. */
static int wait_replicas(int want, int secs)
{
	int i;

	for (i = 0; i < secs * 20; i++) {
		if (mirror_replicas(m) == want)
			return 1;
		usleep(50000);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct transport_opts o = {
		.connect_timeout_ms = 2000, .io_timeout_ms = 3000,
		.dead = dead, .want_size = SIZE,
	};
	struct netaddr a[2];
	const struct netaddr *addr[2] = { &a[0], &a[1] };
	uint64_t *buf = malloc(PAGE), *want = malloc(PAGE), size = 0, p;
	pid_t pid_a, pid_b, new_a, small_b;
	char err[256], s[64];
	pthread_t th;
	long writes = 0;
	int r, wrong;

	if (argc != 6 || !buf || !want) {
		fprintf(stderr, "usage: test-mirror MEMSERVER PORT_A PID_A PORT_B PID_B\n");
		return 2;
	}
	memserver = argv[1];
	pid_a = atoi(argv[3]);
	pid_b = atoi(argv[5]);
	log_init("test-mirror", DLOG_INFO);
	snprintf(s, sizeof(s), "127.0.0.1:%s", argv[2]);
	netaddr_parse(s, &a[0], 0);
	snprintf(s, sizeof(s), "127.0.0.1:%s", argv[4]);
	netaddr_parse(s, &a[1], 0);
	tap_plan(8);

	r = mirror_open(&m, &transport_tcp, addr, &o, &size, err, sizeof(err));
	if (!tap_ok(!r && size == SIZE && mirror_replicas(m) == 2,
		    "a pair of 8 MiB servers opens as one of 8 MiB, both sides up (%s)",
		    r ? err : "ok"))
		return tap_done();
	for (r = 0, p = 0; p < WRITTEN; p++)
		r |= write_page(buf, p, 1);
	tap_ok(!r, "6 pages of 1 MiB written to both");

	/* A dies; pages 0-3 are rewritten on B alone. */
	kill(pid_a, SIGKILL);
	waitpid(pid_a, NULL, 0);
	for (r = 0, p = 0; p < 4; p++)
		r |= write_page(buf, p, 2);
	tap_ok(!r && wait_replicas(1, 10),
	       "server A killed: pages 0-3 rewritten on B alone, one side up (status %d, %d up)",
	       r, mirror_replicas(m));

	/* A restarts on its address while pages 4-5 keep being rewritten. */
	pthread_create(&th, NULL, writer, &writes);
	usleep(300000);
	new_a = start_server(argv[2], "8");
	r = wait_replicas(2, 60);
	usleep(300000);		/* writes to both after the rejoin, too */
	atomic_store(&stop_writer, 1);
	pthread_join(th, NULL);
	tap_ok(r, "server A restarted on its port rejoined, resynchronised during %ld writes",
	       writes);

	/* B dies: everything must come from the new A. */
	kill(pid_b, SIGKILL);
	waitpid(pid_b, NULL, 0);
	tap_ok(wait_replicas(1, 10), "server B killed: one side up");
	wrong = wrong_pages(buf, want);
	tap_ok(!wrong, "every page read back from the restarted A holds its last write (%d wrong)",
	       wrong);

	/* B comes back smaller than the pair: not taken back. */
	small_b = start_server(argv[4], "4");
	sleep(4);
	tap_ok(mirror_replicas(m) == 1 && !wrong_pages(buf, want),
	       "a restarted B of 4 MiB is not rejoined (the pair needs 8); data intact");
	tap_ok(!atomic_load(&dead_calls),
	       "the mirror was never reported dead (one side was always up)");

	transport_mirror.close(m);
	kill(new_a, SIGKILL);
	kill(small_b, SIGKILL);
	waitpid(new_a, NULL, 0);
	waitpid(small_b, NULL, 0);
	free(buf);
	free(want);
	return tap_done();
}

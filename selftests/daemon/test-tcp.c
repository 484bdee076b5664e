// SPDX-License-Identifier: GPL-2.0
/*
 * test-tcp - the tcp transport's lanes against a real dlm-memserver
 * on loopback.
 *
 * Usage: test-tcp PORT PID
 *
 * Checks that a READ submitted right behind a WRITE to the same bytes,
 * without waiting, sees the WRITE (it must go behind it on the write
 * lane), also when it only partly overlaps; that a READ of other bytes
 * does not wait for the 1 MB WRITEs queued before it (the lanes work),
 * nor for a large READ before it (it takes the other read lane), most
 * of 8 times each;
 * that WRITEs more than the write lane's bounce ring holds, of a size
 * that makes it wrap, and one larger than it, are stored byte for byte;
 * that stop() completes everything pending exactly once, with no dead()
 * call; and that a server killed (SIGKILL, PID) with transfers on both
 * lanes is dead() once, every transfer completes once, and later ones
 * fail at once.  TAP.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "netaddr.h"
#include "tap.h"
#include "transport.h"

#define KiB (1024ULL)
#define MiB (1024ULL * 1024)
#define NX 64				/* transfers tracked at once */

static struct tconn *c;
static atomic_int dead_calls;

struct tx {
	struct dlm_xfer x;
	atomic_int calls;		/* done() calls */
	int status;
	int order;			/* completion rank, from 1 */
};

static struct tx txs[NX];
static atomic_int completions;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void dead(void *ctx, unsigned int index, const char *why)
{
	(void)ctx;
	(void)index;
	tap_diag("dead: %s", why);
	atomic_fetch_add(&dead_calls, 1);
}

static void done(struct dlm_xfer *x, int status)
{
	struct tx *t = (struct tx *)x;

	pthread_mutex_lock(&lock);
	t->status = status;
	t->order = atomic_fetch_add(&completions, 1) + 1;
	atomic_fetch_add(&t->calls, 1);
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&lock);
}

static struct tx *submit(int i, enum xfer_op op, uint64_t off, uint32_t len,
			 void *buf)
{
	struct tx *t = &txs[i];

	memset(t, 0, sizeof(*t));
	t->x = (struct dlm_xfer){ .op = op, .len = len, .remote_off = off,
				  .buf = buf, .done = done };
	transport_tcp.submit(c, &t->x);
	return t;
}

/* Wait until txs[0..N) have all completed (at most 20 s); 0 or -ETIMEDOUT. */
static int wait_all(int n)
{
	struct timespec ts;
	int i, r = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 20;
	pthread_mutex_lock(&lock);
	for (i = 0; i < n && !r; i++)
		while (!atomic_load(&txs[i].calls) && !r)
			r = pthread_cond_timedwait(&cv, &lock, &ts) ? -ETIMEDOUT : 0;
	pthread_mutex_unlock(&lock);
	return r;
}

static void fill(uint8_t *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 131 + seed * 7 + (i >> 12));
}

static int open_conn(const char *port)
{
	struct transport_opts o = {
		.connect_timeout_ms = 2000, .io_timeout_ms = 2000, .dead = dead,
	};
	struct netaddr a = { .host = "127.0.0.1" };
	uint64_t size = 0;
	char err[256];
	int r;

	memcpy(a.port, port, strlen(port) + 1);
	r = transport_tcp.open(&c, &a, &o, &size, err, sizeof(err));
	if (r)
		tap_diag("%s", err);
	return r ? r : size == 16 * MiB ? 0 : -EPROTO;
}

int main(int argc, char **argv)
{
	uint8_t *w = malloc(8 * MiB), *rd = malloc(8 * MiB), *want = malloc(MiB);
	uint8_t *big = malloc(12 * MiB), *back = malloc(12 * MiB);
	int i, k, ok, bad;
	pid_t pid;

	if (argc != 3 || strlen(argv[1]) >= sizeof(((struct netaddr *)0)->port)) {
		fprintf(stderr, "usage: test-tcp PORT PID\n");
		return 2;
	}
	pid = (pid_t)atoi(argv[2]);
	log_init("test-tcp", DLOG_WARN);
	if (!w || !rd || !want || !big || !back) {
		fprintf(stderr, "test-tcp: out of memory\n");
		return 2;
	}
	tap_plan(10);

	tap_ok(open_conn(argv[1]) == 0, "connected, the server says 16 MiB");

	/*
	 * Read-after-write: a 1 MB WRITE, then at once a 4 KB READ of a piece
	 * of it.  On the read lane the READ would be answered long before
	 * the WRITE's payload is in.
	 */
	bad = 0;
	for (k = 0; k < 64; k++) {
		uint64_t piece = (uint64_t)(k * 37 % 256) * 4 * KiB;

		fill(w, MiB, (unsigned int)k);
		memset(rd, 0, 4 * KiB);
		submit(0, XFER_WRITE, MiB, MiB, w);
		submit(1, XFER_READ, MiB + piece, 4 * KiB, rd);
		if (wait_all(2) || txs[0].status || txs[1].status ||
		    memcmp(rd, w + piece, 4 * KiB))
			bad++;
	}
	tap_ok(!bad, "a READ right behind a WRITE of the same bytes sees it (%d of 64 wrong)",
	       bad);

	/* A READ straddling the end of the WRITE: old bytes, then new. */
	fill(w, 2 * MiB, 1000);
	submit(0, XFER_WRITE, 4 * MiB, 2 * MiB, w);
	ok = !wait_all(1) && !txs[0].status;
	memcpy(want, w + MiB - 64 * KiB, 64 * KiB);	/* 5 MiB - 64 KiB.. */
	fill(w + 2 * MiB, MiB, 2000);
	submit(0, XFER_WRITE, 5 * MiB, MiB, w + 2 * MiB);
	submit(1, XFER_READ, 5 * MiB - 64 * KiB, 128 * KiB, rd);
	ok &= !wait_all(2) && !txs[0].status && !txs[1].status;
	memcpy(want + 64 * KiB, w + 2 * MiB, 64 * KiB);
	tap_ok(ok && !memcmp(rd, want, 128 * KiB),
	       "a READ overlapping the start of a WRITE in flight sees the old bytes before it and the new ones in it");

	/*
	 * Lanes: a small READ does not wait for the big WRITEs before it.
	 * On one connection it would be answered after the last of them,
	 * every time; on its own lane it is answered before unless its
	 * threads are not scheduled while the 8 MB go out, which a loaded
	 * machine with two CPUs does now and then: most of 8 must be.
	 */
	for (i = 0; i < 8; i++)
		fill(w + (uint64_t)i * MiB, MiB, (unsigned int)i + 3000);
	bad = 0;
	ok = 1;
	for (k = 0; k < 8 && ok; k++) {
		atomic_store(&completions, 0);
		for (i = 0; i < 8; i++)
			submit(i, XFER_WRITE, 8 * MiB + (uint64_t)i * MiB,
			       MiB, w + (uint64_t)i * MiB);
		submit(8, XFER_READ, 0, 4 * KiB, rd);
		ok &= !wait_all(9);
		for (i = 0; i < 9; i++)
			ok &= !txs[i].status;
		if (txs[8].order == 9)
			bad++;
	}
	tap_ok(ok && bad <= 3,
	       "a 4 KB READ of other bytes completes before the last of eight 1 MB WRITEs queued before it, most times (%d of 8 not; one lane: 8)",
	       bad);
	ok = 1;
	for (i = 0; i < 8 && ok; i++)
		ok = transport_io(&transport_tcp, c, XFER_READ,
				  8 * MiB + (uint64_t)i * MiB, MiB, rd) == 0 &&
		     !memcmp(rd, w + (uint64_t)i * MiB, MiB);
	tap_ok(ok, "the eight WRITEs are stored, byte for byte");

	/*
	 * Read lanes: a small READ right behind an 8 MB one goes on the
	 * other read lane.  On one connection it would be answered after it,
	 * every time; on two it is answered first unless the threads that
	 * serve it are not scheduled while the 8 MB copy runs, which a loaded
	 * machine with two CPUs does now and then: most of 8 must be first.
	 */
	bad = 0;
	for (k = 0; k < 8; k++) {
		atomic_store(&completions, 0);
		submit(0, XFER_READ, 8 * MiB, 8 * MiB, w);
		submit(1, XFER_READ, 0, 4 * KiB, rd);
		if (wait_all(2) || txs[0].status || txs[1].status ||
		    txs[1].order != 1)
			bad++;
	}
	ok = 1;
	for (i = 0; i < 8 && ok; i++) {
		fill(want, MiB, (unsigned int)i + 3000);
		ok = !memcmp(w + (uint64_t)i * MiB, want, MiB);
	}
	tap_ok(bad <= 3 && ok,
	       "a 4 KB READ behind an 8 MB READ completes first, most times (%d of 8 not; one lane: 8), the 8 MB intact",
	       bad);

	/*
	 * The write lane's bounce ring (8 MiB, transport_tcp.c): 40 WRITEs
	 * of 300 KiB submitted at once, 12 MiB, so that the ring wraps
	 * (skipping its end) and fills (the rest go by copy), twice with
	 * other bytes in the same places (the ring reused), then one WRITE
	 * larger than the ring.  A part of the ring reused before the server
	 * had all of its WRITE would store another WRITE's bytes.
	 */
	ok = 1;
	for (k = 0; k < 2 && ok; k++) {
		fill(big, 12000 * KiB, 4000 + (unsigned int)k);
		for (i = 0; i < 40; i++)
			submit(i, XFER_WRITE, (uint64_t)i * 300 * KiB, 300 * KiB,
			       big + (uint64_t)i * 300 * KiB);
		ok = !wait_all(40);
		for (i = 0; i < 40; i++)
			ok &= !txs[i].status;
		memset(back, 0, 12000 * KiB);
		ok = ok && transport_io(&transport_tcp, c, XFER_READ, 0,
					12000 * KiB, back) == 0 &&
		     !memcmp(back, big, 12000 * KiB);
	}
	if (ok) {	/* txs[] may still be in flight otherwise */
		fill(big, 9 * MiB, 4100);
		submit(0, XFER_WRITE, MiB, 9 * MiB, big);
		ok = !wait_all(1) && !txs[0].status &&
		     transport_io(&transport_tcp, c, XFER_READ, MiB, 9 * MiB,
				  back) == 0 && !memcmp(back, big, 9 * MiB);
	}
	tap_ok(ok, "40 WRITEs of 300 KiB at once (more than the bounce ring, which wraps), twice, and one of 9 MiB are stored, byte for byte");

	/* stop() with transfers queued on both lanes. */
	for (i = 0; i < 16; i++)
		submit(i, i % 2 ? XFER_READ : XFER_WRITE, (uint64_t)i * 512 * KiB,
		       512 * KiB, (i % 2 ? rd : w) + (uint64_t)i * 512 * KiB);
	transport_tcp.close(c);
	ok = 1;
	for (i = 0; i < 16; i++)
		ok &= atomic_load(&txs[i].calls) == 1 &&
		      (txs[i].status == 0 || txs[i].status == -EIO);
	tap_ok(ok && !atomic_load(&dead_calls),
	       "close() with 16 transfers pending: each completed once (0 or EIO), no dead() call");

	/* The server killed with transfers on both lanes. */
	ok = open_conn(argv[1]) == 0;
	for (i = 0; i < 32; i++)
		submit(i, i % 2 ? XFER_READ : XFER_WRITE,
		       (uint64_t)(i % 16) * 512 * KiB, 512 * KiB,
		       (i % 2 ? rd : w) + (uint64_t)(i % 16) * 512 * KiB);
	kill(pid, SIGKILL);
	ok &= !wait_all(32);
	bad = 0;
	for (i = 0; i < 32; i++)
		bad += atomic_load(&txs[i].calls) != 1 ||
		       (txs[i].status && txs[i].status != -EIO);
	for (i = 0; i < 100 && !atomic_load(&dead_calls); i++)
		usleep(50 * 1000);	/* all may have completed before it */
	tap_ok(ok && !bad && atomic_load(&dead_calls) == 1 &&
	       !transport_tcp.alive(c),
	       "server killed with 32 transfers on both lanes: each completed once, dead() once, not alive");
	submit(0, XFER_READ, 0, 4 * KiB, rd);
	submit(1, XFER_WRITE, 0, 4 * KiB, w);
	tap_ok(!wait_all(2) && txs[0].status == -EIO && txs[1].status == -EIO &&
	       atomic_load(&dead_calls) == 1,
	       "later READs and WRITEs fail with EIO at once, no second dead()");
	transport_tcp.close(c);
	free(w);
	free(rd);
	free(want);
	free(big);
	free(back);
	return tap_done();
}

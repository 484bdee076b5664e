// SPDX-License-Identifier: GPL-2.0
/*
 * test-dispatch - dlmd's request engine against real dlm-memservers on
 * loopback, with an ordinary buffer as the frame pool: what the kernel
 * would ask, minus netlink.
 *
 * Usage: test-dispatch PORT1 PID1 PORT2 PID2 PORT3 PID3
 *
 * Three servers of 8 MiB each on 127.0.0.1 (the memfile claims 16 MiB for
 * the second, which must be corrected by its HELLO).  Checks reservations
 * and ENOSPC, data through STORE/FETCH compared byte for byte, rank order
 * on the servers themselves, validation of bad requests, many requests in
 * flight on several servers, a server killed (SIGKILL) with STOREs in
 * flight (re-placed) and its pages failing with EIO, and a frozen server
 * (SIGSTOP) declared dead after the I/O timeout; block READ, WRITE and
 * DISCARD (zeroes where never written, page N in slot N).  TAP.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/dlmem_nl.h>

#include "dispatch.h"
#include "log.h"
#include "netaddr.h"
#include "tap.h"
#include "wire.h"

#define KiB (1024ULL)
#define MiB (1024ULL * 1024)
#define PS (256 * KiB)			/* DLM page size of the tests */
#define POOL (32 * MiB)
#define NREQ 4096

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	int done[NREQ];
	int status[NREQ];
	uint32_t flags[NREQ];
	int dup;
} res = { .lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static struct dispatch *d;
static struct stats st;
static uint8_t *pool;
static uint8_t *orig;			/* what each (space, dpn) should hold */
static uint64_t next_id = 1;
static pid_t pids[3];
static char ports[3][8];

static void complete(void *ctx, uint64_t id, int32_t status, uint32_t flags)
{
	(void)ctx;
	pthread_mutex_lock(&res.lock);
	if (id < NREQ) {
		res.dup += res.done[id];
		res.done[id] = 1;
		res.status[id] = status;
		res.flags[id] = flags;
	}
	pthread_cond_broadcast(&res.cv);
	pthread_mutex_unlock(&res.lock);
}

/* Status of request ID, or 1 if it did not complete within 10 s. */
static int wait_id(uint64_t id)
{
	struct timespec t;
	int s = 1;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += 10;
	pthread_mutex_lock(&res.lock);
	while (!res.done[id] &&
	       pthread_cond_timedwait(&res.cv, &res.lock, &t) == 0)
		;
	if (res.done[id])
		s = res.status[id];
	pthread_mutex_unlock(&res.lock);
	return s;
}

#define ALL_IO	((1u << DLM_NL_A_REQ_ID) | (1u << DLM_NL_A_OP) | \
		 (1u << DLM_NL_A_SPACE) | (1u << DLM_NL_A_DPN) | \
		 (1u << DLM_NL_A_POOL_OFF) | (1u << DLM_NL_A_LEN))

static uint64_t submit_io(uint32_t op, uint32_t space, uint64_t dpn,
			  uint64_t pool_off, uint32_t len, uint32_t have)
{
	struct dlm_request r = {
		.have = have, .op = op, .req_id = next_id++, .space = space,
		.dpn = dpn, .pool_off = pool_off, .len = len,
	};

	dispatch_request(d, &r);
	return r.req_id;
}

static int io(uint32_t op, uint32_t space, uint64_t dpn, uint64_t pool_off)
{
	return wait_id(submit_io(op, space, dpn, pool_off, PS, ALL_IO));
}

static int space_new(uint32_t space, uint64_t ps, uint64_t total,
		     uint64_t budget)
{
	struct dlm_request r = {
		.have = (1u << DLM_NL_A_REQ_ID) | (1u << DLM_NL_A_OP) |
			(1u << DLM_NL_A_SPACE) | (1u << DLM_NL_A_PAGE_SIZE) |
			(1u << DLM_NL_A_TOTAL_SIZE) | (1u << DLM_NL_A_BUDGET),
		.op = DLM_NL_OP_SPACE_NEW, .req_id = next_id++, .space = space,
		.page_size = ps, .total_size = total, .budget = budget,
	};

	dispatch_request(d, &r);
	return wait_id(r.req_id);
}

static int space_del(uint32_t space)
{
	struct dlm_request r = {
		.have = (1u << DLM_NL_A_REQ_ID) | (1u << DLM_NL_A_OP) |
			(1u << DLM_NL_A_SPACE),
		.op = DLM_NL_OP_SPACE_DEL, .req_id = next_id++, .space = space,
	};

	dispatch_request(d, &r);
	return wait_id(r.req_id);
}

/* The expected contents of (space, dpn): a slice of ORIG. */
static uint8_t *page_of(uint32_t space, uint64_t dpn)
{
	return orig + ((space * 64 + dpn) % 512) * PS;
}

/* Put (space, dpn)'s contents in pool slot SLOT and STORE it from there. */
static uint64_t store_async(uint32_t space, uint64_t dpn, unsigned int slot)
{
	memcpy(pool + slot * PS, page_of(space, dpn), PS);
	return submit_io(DLM_NL_OP_STORE, space, dpn, slot * PS, PS, ALL_IO);
}

/* Read server RANK's memory at OFF directly, over its own connection. */
static int server_read(unsigned int rank, uint64_t off, uint8_t *buf)
{
	struct netaddr a = { .host = "127.0.0.1" };
	uint8_t hdr[WIRE_HDR_SIZE];
	struct wire_hdr h = wire_req(WIRE_OP_READ, PS, off, 1);
	struct iovec iov = { .iov_base = hdr, .iov_len = sizeof(hdr) };
	char err[256];
	int fd, r;

	memcpy(a.port, ports[rank - 1], sizeof(a.port));
	fd = net_connect(&a, 2000, err, sizeof(err));
	if (fd < 0)
		return -1;
	wire_hdr_encode(hdr, &h);
	r = wire_sendv(fd, &iov, 1);
	if (!r)
		r = wire_recv(fd, hdr, sizeof(hdr), NULL);
	if (!r) {
		wire_hdr_decode(&h, hdr);
		r = h.status || h.len != PS ? -1 : wire_recv(fd, buf, PS, NULL);
	}
	close(fd);
	return r;
}

/* SIGSTOP takes effect asynchronously: wait until every thread of PID is
 * stopped (state T in /proc), at most 2 s. */
static void stop_and_wait(pid_t pid)
{
	char path[64], buf[512], *p;
	int i, stopped;
	DIR *dir;
	struct dirent *de;
	FILE *f;

	kill(pid, SIGSTOP);
	for (i = 0; i < 200; i++) {
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		dir = opendir(path);
		if (!dir)
			return;
		stopped = 1;
		while ((de = readdir(dir))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(buf, sizeof(buf), "%s/%s/stat", path, de->d_name);
			f = fopen(buf, "r");
			if (!f)
				continue;
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = '\0';
			fclose(f);
			p = strrchr(buf, ')');
			if (p && p[1] == ' ' && p[2] != 'T' && p[2] != 't')
				stopped = 0;
		}
		closedir(dir);
		if (stopped)
			return;
		usleep(10000);
	}
	tap_diag("pid %d did not stop within 2 s", (int)pid);
}

static int json_has(const char *what)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r;

	dispatch_json(d, f);
	fclose(f);
	r = strstr(buf, what) != NULL;
	if (!r)
		tap_diag("no '%s' in %s", what, buf);
	free(buf);
	return r;
}

static void fill(uint8_t *p, size_t n)
{
	unsigned int seed = 99;
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)rand_r(&seed);
}

int main(int argc, char **argv)
{
	static const char *names[3] = { "rank1", "rank2", "rank3" };
	uint64_t cap[3] = { 8 * MiB, 16 * MiB, 8 * MiB };
	uint64_t ids[64];
	struct dispatch_cfg cfg = {
		.tops = &transport_tcp, .complete = complete, .st = &st,
	};
	uint8_t *buf;
	int i, ok, r;

	if (argc != 7) {
		fprintf(stderr, "usage: test-dispatch PORT1 PID1 PORT2 PID2 PORT3 PID3\n");
		return 2;
	}
	log_init("test-dispatch", DLOG_WARN);
	if (getenv("DLM_TEST_LOG"))
		log_set_level(DLOG_DEBUG);
	for (i = 0; i < 3; i++) {
		if (strlen(argv[1 + 2 * i]) >= sizeof(ports[i]))
			return 2;
		strcpy(ports[i], argv[1 + 2 * i]);
		pids[i] = (pid_t)atoi(argv[2 + 2 * i]);
	}
	stats_init(&st);
	pool = aligned_alloc(4096, POOL);
	orig = malloc(512 * PS);
	buf = malloc(PS);
	fill(orig, 512 * PS);
	tap_plan(42);

	d = dispatch_create(&cfg, 3, names, cap);
	ok = 1;
	for (i = 0; i < 3; i++) {
		struct transport_opts o = {
			.connect_timeout_ms = 2000, .io_timeout_ms = 1000,
			.dead = dispatch_server_dead, .ctx = d, .index = (unsigned int)i,
		};
		struct netaddr a = { .host = "127.0.0.1" };
		struct tconn *c;
		uint64_t size = 0;
		char err[256];

		memcpy(a.port, ports[i], sizeof(a.port));
		r = transport_tcp.open(&c, &a, &o, &size, err, sizeof(err));
		if (r) {
			tap_diag("%s", err);
			ok = 0;
			continue;
		}
		ok &= size == 8 * MiB;
		dispatch_attach(d, (unsigned int)i, c, size);
	}
	dispatch_set_pool(d, pool, POOL, 4096, NULL, 0);
	ok &= dispatch_start(d) == 0;
	tap_ok(ok && dispatch_alive_servers(d) == 3,
	       "three memory servers connected, each says 8 MiB");
	if (!ok)
		return tap_done() | 1;

	/* Block requests (/dev/dlmbN): a space of 4 KiB pages, all reserved. */
	{
		uint8_t *bp = pool + POOL - MiB, *pat = orig + 7 * PS;

		r = space_new(900, 4 * KiB, MiB, 0);
		tap_ok(r == 0, "block space of 1 MiB in 4 KiB pages, all reserved");
		memset(bp, 0xaa, 64 * KiB);
		r = wait_id(submit_io(DLM_NL_OP_READ, 900, 0, POOL - MiB,
				      64 * KiB, ALL_IO));
		ok = r == 0;
		for (i = 0; i < (int)(64 * KiB); i++)
			ok &= bp[i] == 0;
		tap_ok(ok, "READ of 16 pages never written: zeroes, no server");
		memcpy(bp, pat, 128 * KiB);
		r = wait_id(submit_io(DLM_NL_OP_WRITE, 900, 10, POOL - MiB,
				      128 * KiB, ALL_IO));
		memset(bp, 0, 128 * KiB);
		ok = r == 0 && wait_id(submit_io(DLM_NL_OP_READ, 900, 10,
						 POOL - MiB, 128 * KiB,
						 ALL_IO)) == 0;
		tap_ok(ok && !memcmp(bp, pat, 128 * KiB),
		       "WRITE of 32 pages, READ back equal");
		tap_ok(server_read(1, 10 * 4 * KiB, buf) == 0 &&
		       !memcmp(buf, pat, 128 * KiB),
		       "page N is in slot N: rank 1 holds them in order from 40 KiB");
		r = wait_id(submit_io(DLM_NL_OP_DISCARD, 900, 12, 0, 8 * KiB,
				      ALL_IO));
		memset(bp, 0xaa, 128 * KiB);
		ok = r == 0 && wait_id(submit_io(DLM_NL_OP_READ, 900, 10,
						 POOL - MiB, 128 * KiB,
						 ALL_IO)) == 0;
		for (i = 0; i < (int)(8 * KiB); i++)
			ok &= bp[8 * KiB + i] == 0;
		tap_ok(ok && !memcmp(bp, pat, 8 * KiB) &&
		       !memcmp(bp + 16 * KiB, pat + 16 * KiB, 112 * KiB),
		       "DISCARD of pages 12-13: zeroes there, the rest intact");
		tap_ok(wait_id(submit_io(DLM_NL_OP_READ, 900, 0, POOL - MiB,
					 6 * KiB, ALL_IO)) == -EINVAL &&
		       wait_id(submit_io(DLM_NL_OP_WRITE, 900, 250, POOL - MiB,
					 32 * KiB, ALL_IO)) == -EINVAL &&
		       wait_id(submit_io(DLM_NL_OP_DISCARD, 901, 0, 0, 4 * KiB,
					 ALL_IO)) == -EINVAL &&
		       wait_id(submit_io(DLM_NL_OP_READ, 900, 0, POOL - 4 * KiB,
					 8 * KiB, ALL_IO)) == -EINVAL,
		       "LEN not whole pages, DPN + LEN beyond the space, unknown space, beyond the pool: EINVAL");
		tap_ok(space_del(900) == 0, "block space deleted");
	}

	/* Reservations: 24 MiB in all. */
	/* Each space also reserves 4 pages (1 MiB) of slack if it can. */
	tap_ok(space_new(1, PS, 64 * MiB, 56 * MiB) == 0,
	       "SPACE_NEW 1: 64 MiB, budget 56 MiB: 8 MiB (+1 MiB slack) reserved");
	tap_ok(space_new(2, PS, 64 * MiB, 40 * MiB) == -ENOSPC,
	       "SPACE_NEW 2 needing 24 MiB: ENOSPC (server 2 is 8 MiB, not the memfile's 16)");
	tap_ok(space_new(2, PS, 8 * MiB, 4 * MiB) == 0,
	       "SPACE_NEW 2 needing 4 MiB (+1 MiB slack): ok");
	tap_ok(space_new(1, PS, 8 * MiB, 0) == -EEXIST, "SPACE_NEW of an id in use: EEXIST");
	tap_ok(space_new(3, 1000, 8 * MiB, 0) == -EINVAL &&
	       space_new(3, 512 * MiB, 1024 * MiB, 0) == -EINVAL &&
	       space_new(3, PS, PS * 3 + 1, 0) == -EINVAL &&
	       space_new(3, PS, 8 * MiB, 9 * MiB) == -EINVAL &&
	       space_new(3, PS, 8 * MiB, PS / 2) == -EINVAL &&
	       space_new(3, 0, 8 * MiB, 0) == -EINVAL,
	       "SPACE_NEW with bad page size, total or budget: EINVAL");

	/* Data through the servers. */
	ok = 1;
	for (i = 0; i < 32; i++)
		ids[i] = store_async(1, (uint64_t)i, (unsigned int)i);
	for (i = 0; i < 32; i++)
		ok &= wait_id(ids[i]) == 0;
	tap_ok(ok, "32 STOREs of space 1 in flight at once: all 0");
	ok = 1;
	for (i = 0; i < 32; i++)
		ok &= server_read(1, (uint64_t)i * PS, buf) == 0 &&
		      !memcmp(buf, page_of(1, (uint64_t)i), PS);
	tap_ok(ok, "server 1 holds them, page n at offset n * page size (rank order)");
	tap_ok(server_read(2, 0, buf) == 0 && !memcmp(buf, orig, 0) &&
	       json_has("\"rank\": 2, \"addr\": \"rank2\", \"alive\": true, \"capacity\": 8388608, \"free\": 2097152, \"stored\": 0"),
	       "server 2 holds none of them yet (stats agree)");
	memset(pool, 0, POOL);
	ok = 1;
	for (i = 31; i >= 0; i--)
		ids[i] = submit_io(DLM_NL_OP_FETCH, 1, (uint64_t)i,
				   (uint64_t)(63 - i) * PS, PS, ALL_IO);
	for (i = 0; i < 32; i++)
		ok &= wait_id(ids[i]) == 0 &&
		      !memcmp(pool + (63 - i) * PS, page_of(1, (uint64_t)i), PS);
	tap_ok(ok, "FETCHed back into other pool frames: byte for byte equal");
	ok = 1;
	for (i = 0; i < 32; i++)
		ok &= res.flags[ids[i]] == DLM_NL_F_KEPT;
	tap_ok(ok, "every FETCH completed with DLM_NL_F_KEPT (copies kept)");
	tap_ok(io(DLM_NL_OP_DROP, 1, 5, 0) == 0 && io(DLM_NL_OP_DROP, 1, 5, 0) == -ESTALE,
	       "DROP of a kept page: 0; DROP again (no longer kept): ESTALE");
	memset(pool, 0, PS);
	tap_ok(io(DLM_NL_OP_FETCH, 1, 5, 0) == 0 && !memcmp(pool, page_of(1, 5), PS),
	       "a DROPped page FETCHes back intact");
	tap_ok(io(DLM_NL_OP_FETCH, 1, 40, 0) == -EIO,
	       "FETCH of a page never stored: EIO");
	tap_ok(io(DLM_NL_OP_DROP, 1, 40, 0) == -ESTALE &&
	       io(DLM_NL_OP_DROP, 1, 64 * MiB / PS, 0) == -EINVAL &&
	       io(DLM_NL_OP_DROP, 9, 1, 0) == -EINVAL,
	       "DROP of a page never fetched: ESTALE; beyond the space or unknown space: EINVAL");
	tap_ok(store_async(1, 7, 3) && wait_id(next_id - 1) == 0 &&
	       server_read(1, 7 * PS, buf) == 0 && !memcmp(buf, page_of(1, 7), PS) &&
	       io(DLM_NL_OP_DROP, 1, 7, 0) == -ESTALE,
	       "a STORE of a kept page overwrites its slot; it is no longer kept");

	tap_ok(wait_id(submit_io(DLM_NL_OP_STORE, 1, 1, POOL - PS + 4096, PS, ALL_IO)) == -EINVAL &&
	       wait_id(submit_io(DLM_NL_OP_STORE, 1, 1, UINT64_MAX - 4095, PS, ALL_IO)) == -EINVAL &&
	       wait_id(submit_io(DLM_NL_OP_FETCH, 1, 1, POOL, PS, ALL_IO)) == -EINVAL,
	       "POOL_OFF + LEN outside the pool (or overflowing): EINVAL");
	tap_ok(wait_id(submit_io(DLM_NL_OP_STORE, 1, 1, 100, PS, ALL_IO)) == -EINVAL,
	       "POOL_OFF not page aligned: EINVAL");
	tap_ok(wait_id(submit_io(DLM_NL_OP_STORE, 1, 1, 0, PS / 2, ALL_IO)) == -EINVAL &&
	       wait_id(submit_io(DLM_NL_OP_STORE, 1, 1, 0, 0, ALL_IO)) == -EINVAL,
	       "LEN other than the page size: EINVAL");
	tap_ok(wait_id(submit_io(DLM_NL_OP_STORE, 9, 1, 0, PS, ALL_IO)) == -EINVAL &&
	       wait_id(submit_io(DLM_NL_OP_FETCH, 9, 1, 0, PS, ALL_IO)) == -EINVAL,
	       "unknown space: EINVAL");
	tap_ok(wait_id(submit_io(DLM_NL_OP_STORE, 1, 64 * MiB / PS, 0, PS, ALL_IO)) == -EINVAL,
	       "DPN beyond the space: EINVAL");
	tap_ok(wait_id(submit_io(DLM_NL_OP_STORE, 1, 1, 0, PS,
				 ALL_IO & ~(1u << DLM_NL_A_POOL_OFF))) == -EINVAL &&
	       wait_id(submit_io(DLM_NL_OP_FETCH, 1, 1, 0, PS,
				 ALL_IO & ~(1u << DLM_NL_A_OP))) == -EINVAL,
	       "missing POOL_OFF or OP: EINVAL");
	tap_ok(wait_id(submit_io(99, 1, 1, 0, PS, ALL_IO)) == -EOPNOTSUPP,
	       "unknown op: EOPNOTSUPP");
	{
		uint64_t before = st.bad_requests, id;

		id = submit_io(DLM_NL_OP_STORE, 1, 1, 0, PS,
			       ALL_IO & ~(1u << DLM_NL_A_REQ_ID));
		tap_ok(st.bad_requests == before + 1 && !res.done[id],
		       "no REQ_ID: not answerable, counted");
	}

	/* Space 2 lives on server 2; server 2 dies with STOREs in flight. */
	ok = 1;
	for (i = 0; i < 16; i++)
		ids[i] = store_async(2, (uint64_t)i, (unsigned int)(64 + i));
	for (i = 0; i < 16; i++)
		ok &= wait_id(ids[i]) == 0;
	/* Space 2's slots start after space 1's slack on server 2. */
	ok &= server_read(2, MiB + 15 * PS, buf) == 0 && !memcmp(buf, page_of(2, 15), PS);
	tap_ok(ok, "16 STOREs of space 2: on server 2");
	stop_and_wait(pids[1]);
	for (i = 0; i < 8; i++)		/* slack, then growth, on server 2 */
		ids[i] = store_async(2, (uint64_t)(20 + i), (unsigned int)(80 + i));
	usleep(100000);
	kill(pids[1], SIGKILL);
	kill(pids[1], SIGCONT);
	ok = 1;
	for (i = 0; i < 8; i++)
		ok &= wait_id(ids[i]) == 0;
	tap_ok(ok && st.store_retries >= 1,
	       "server 2 killed under 8 STOREs: all completed 0, re-placed (%" PRIu64 " retries)",
	       (uint64_t)st.store_retries);
	memset(pool, 0, POOL);
	ok = 1;
	for (i = 0; i < 8; i++)
		ok &= io(DLM_NL_OP_FETCH, 2, (uint64_t)(20 + i), (uint64_t)i * PS) == 0 &&
		      !memcmp(pool + i * PS, page_of(2, (uint64_t)(20 + i)), PS);
	tap_ok(ok, "the re-placed pages FETCH back intact from server 3");
	ok = 1;
	for (i = 0; i < 16; i++)
		ok &= io(DLM_NL_OP_FETCH, 2, (uint64_t)i, 0) == -EIO;
	tap_ok(ok, "FETCH of the 16 pages lost with server 2: EIO");
	tap_ok(json_has("\"rank\": 2, \"addr\": \"rank2\", \"alive\": false"),
	       "server 2 reported dead");
	ok = store_async(2, 3, 1) && wait_id(next_id - 1) == 0 &&
	     io(DLM_NL_OP_FETCH, 2, 3, 10 * PS) == 0 &&
	     !memcmp(pool + 10 * PS, page_of(2, 3), PS);
	tap_ok(ok, "a lost page stored again goes to a live server and comes back");
	ok = store_async(1, 20, 2) && wait_id(next_id - 1) == 0 &&
	     io(DLM_NL_OP_FETCH, 1, 20, 11 * PS) == 0 &&
	     !memcmp(pool + 11 * PS, page_of(1, 20), PS);
	tap_ok(ok, "space 1 on server 1 unaffected");

	/* A frozen server is dead after the I/O timeout (1 s here). */
	ok = store_async(2, 4, 1) && wait_id(next_id - 1) == 0;
	stop_and_wait(pids[2]);
	{
		uint64_t t0 = now_ns();

		r = io(DLM_NL_OP_FETCH, 2, 4, 0);
		t0 = now_ns() - t0;
		if (!tap_ok(ok && r == -EIO && t0 < 5000000000ULL && t0 > 500000000ULL,
			    "server 3 frozen: FETCH fails with EIO after %.1f s",
			    (double)t0 / 1e9))
			tap_diag("store ok=%d fetch status=%d", ok, r);
	}
	kill(pids[2], SIGCONT);

	tap_ok(space_del(1) == 0 && space_del(1) == -ENOENT,
	       "SPACE_DEL releases; twice: ENOENT");
	tap_ok(space_new(5, PS, 8 * MiB, 0) == 0,
	       "server 1's 8 MiB reserved again by a new space");

	dispatch_destroy(d);
	tap_ok(res.dup == 0 && st.inflight == 0,
	       "every request completed exactly once, none left in flight");
	free(pool);
	free(orig);
	free(buf);
	return tap_done();
}

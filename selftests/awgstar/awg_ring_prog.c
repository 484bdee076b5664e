// SPDX-License-Identifier: GPL-2.0
/*
 * awg_ring_prog - one node's part in the ring tests (awg_ring_test.sh),
 * through raw ioctls on one board:
 *
 *   mix DEV SEED OPS OFF LEN PRIV   OPS random writes into [OFF, OFF+LEN)
 *        (8-byte DMA pokes, pointer stores, DMA writes of up to 3 KiB,
 *        overlapping other nodes'), and the pattern of SEED into the
 *        64 KiB at PRIV (half by stores, half by DMA); then a flush
 *   check DEV SEED PRIV             the pattern of SEED is at PRIV
 *   sum DEV OFF LEN                 print a 64-bit hash of the range
 *   order DEV writer|reader N OFF   the writer pokes 1 .. N at OFF; the
 *        reader watches OFF and fails if a value ever goes backwards
 *   barrier DEV ROUNDS              every node: poke its round number into
 *        its slot, barrier, check every live node's slot shows the round
 *   libbarrier DEV ROUNDS           the same through libawgstar's
 *        awg_barrier(), called again after each ETIMEDOUT (a stalled
 *        ring); prints the number of such retries
 *   event DEV send NODE ID DATA | event DEV wait ID TIMEOUT_MS
 *   stats DEV                       print rot_busy measured/model ratio
 * Exit status 0 when what was checked holds, 1 with a message otherwise.
 * Every mode but libbarrier uses raw ioctls.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <awgstar.h>
#include <linux/awgstar.h>

#define PRIV_LEN	(64 << 10)
#define SLOTS_OFF	(60ULL << 20)

static int fd;
static uint8_t *map;
static struct awg_info info;

static void die(const char *what)
{
	fprintf(stderr, "awg_ring_prog: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void open_board(const char *dev)
{
	struct awg_api a = { .api = AWG_API_VERSION };

	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, AWG_IOC_API, &a) || ioctl(fd, AWG_IOC_GET_INFO, &info))
		die(dev);
	map = mmap(NULL, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		die("mmap");
}

static void dma(uint64_t off, const void *buf, uint64_t len)
{
	struct awg_xfer x = { .offset = off, .buf = (uintptr_t)buf, .len = len };

	if (ioctl(fd, AWG_IOC_WRITE, &x))
		die("AWG_IOC_WRITE");
}

static void flush(void)
{
	struct awg_flush f = { .timeout_ms = 30000 };

	if (ioctl(fd, AWG_IOC_FLUSH, &f))
		die("AWG_IOC_FLUSH");
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint8_t pattern(uint64_t seed, uint64_t i)
{
	return (uint8_t)((seed * 0x9e3779b97f4a7c15ULL + i * 2654435761ULL) >> 24);
}

static int do_mix(uint64_t seed, long ops, uint64_t off, uint64_t len,
		  uint64_t priv)
{
	uint64_t s = seed * 0x2545f4914f6cdd1dULL + 1, i;
	static uint8_t buf[3072];
	long n;

	for (n = 0; n < ops; n++) {
		uint64_t r = rnd(&s), a = off + (rnd(&s) % (len / 8)) * 8;
		uint64_t v = rnd(&s);

		switch (r % 8) {
		case 0: case 1: case 2:
			dma(a, &v, 8);
			break;
		case 3: {
			uint64_t l = 8 + rnd(&s) % (sizeof(buf) - 8);

			if (a + l > off + len)
				l = off + len - a;
			for (i = 0; i < l; i++)
				buf[i] = (uint8_t)rnd(&s);
			dma(a, buf, l);
			break;
		}
		default:
			memcpy(map + a, &v, 8);
			break;
		}
	}
	for (i = 0; i < PRIV_LEN / 2; i++)
		map[priv + i] = pattern(seed, i);
	for (i = PRIV_LEN / 2; i < PRIV_LEN; i += sizeof(buf)) {
		uint64_t j, l = PRIV_LEN - i < sizeof(buf) ? PRIV_LEN - i : sizeof(buf);

		for (j = 0; j < l; j++)
			buf[j] = pattern(seed, i + j);
		dma(priv + i, buf, l);
	}
	flush();
	return 0;
}

static int do_check(uint64_t seed, uint64_t priv)
{
	uint64_t i;

	for (i = 0; i < PRIV_LEN; i++) {
		if (map[priv + i] != pattern(seed, i)) {
			fprintf(stderr, "awg_ring_prog: node %u: byte %" PRIu64
				" of the pattern of seed %" PRIu64 " at %#" PRIx64
				" is %#x, want %#x\n", info.node_id, i, seed, priv,
				map[priv + i], pattern(seed, i));
			return 1;
		}
	}
	return 0;
}

static int do_sum(uint64_t off, uint64_t len)
{
	uint64_t h = 1469598103934665603ULL, i;

	for (i = 0; i < len; i++)
		h = (h ^ map[off + i]) * 1099511628211ULL;
	printf("%016" PRIx64 "\n", h);
	return 0;
}

static int do_order(int writer, uint64_t n, uint64_t off)
{
	volatile uint64_t *p = (volatile uint64_t *)(map + off);
	uint64_t last = 0, v, i;
	time_t end = time(NULL) + 120;

	if (writer) {
		for (i = 1; i <= n; i++)
			dma(off, &i, 8);
		flush();
		return 0;
	}
	while (last < n) {
		v = *p;
		if (v < last) {
			fprintf(stderr, "awg_ring_prog: node %u saw %" PRIu64
				" after %" PRIu64 " at %#" PRIx64 "\n",
				info.node_id, v, last, off);
			return 1;
		}
		last = v;
		if (time(NULL) > end) {
			fprintf(stderr, "awg_ring_prog: node %u: %" PRIu64
				" of %" PRIu64 " writes arrived in 120 s\n",
				info.node_id, last, n);
			return 1;
		}
	}
	return 0;
}

/*
 * A barrier through raw events, as libawgstar's awg_barrier() does it:
 * each event carries the sender's barrier number, so that the event of a
 * node already in the next barrier (at most one ahead) is kept for it
 * instead of standing in for a node still missing from this one.
 */
static void barrier(void)
{
	static uint32_t seq, early;
	struct awg_event ev = { .node = AWG_NODE_ALL, .id = AWG_EVENTS - 1 };
	uint32_t need;

	flush();
	if (ioctl(fd, AWG_IOC_GET_INFO, &info))
		die("AWG_IOC_GET_INFO");
	ev.data = ++seq;
	if (ioctl(fd, AWG_IOC_EVENT_SEND, &ev))
		die("AWG_IOC_EVENT_SEND");
	need = info.live_mask & ~(1U << info.node_id) & ~early;
	early = 0;
	while (need) {
		memset(&ev, 0, sizeof(ev));
		ev.id = AWG_EVENTS - 1;
		ev.timeout_ms = 60000;
		if (ioctl(fd, AWG_IOC_EVENT_WAIT, &ev))
			die("barrier: AWG_IOC_EVENT_WAIT");
		if (ev.node >= 32 || !(info.live_mask & (1U << ev.node))) {
			fprintf(stderr, "awg_ring_prog: barrier %u: event from node %u, not a live node\n",
				seq, ev.node);
			exit(1);
		}
		if (ev.data == seq) {
			need &= ~(1U << ev.node);
		} else if (ev.data == seq + 1) {
			early |= 1U << ev.node;
		} else {
			fprintf(stderr, "awg_ring_prog: barrier %u: node %u sent barrier %u\n",
				seq, ev.node, ev.data);
			exit(1);
		}
	}
}

/*
 * The barrier modes' rounds: write the round number into this node's slot
 * of the 8-byte slots at @slots, barrier, check every live node's slot
 * shows exactly the round, barrier again.  @sync is the barrier; it
 * leaves info current.
 */
struct barrier_mode {
	void (*write)(uint64_t off, uint64_t v);
	void (*sync)(void);
	const uint8_t *map;
	uint64_t slots;
};

static int barrier_rounds(const struct barrier_mode *b, long rounds)
{
	long r;
	uint32_t i;

	b->sync();	/* everyone started */
	for (r = 1; r <= rounds; r++) {
		uint64_t v = (uint64_t)r;

		b->write(b->slots + 8 * info.node_id, v);
		b->sync();
		for (i = 0; i < info.nodes; i++) {
			uint64_t got;

			if (!(info.live_mask & (1U << i)))
				continue;
			memcpy(&got, b->map + b->slots + 8 * i, 8);
			if (got != v) {
				fprintf(stderr, "awg_ring_prog: node %u round %ld: node %u's slot shows %" PRIu64 " after the barrier\n",
					info.node_id, r, i, got);
				return 1;
			}
		}
		b->sync();	/* nobody writes round r+1 before all checked r */
	}
	return 0;
}

static void raw_write(uint64_t off, uint64_t v)
{
	dma(off, &v, 8);
}

static int do_barrier(long rounds)
{
	const struct barrier_mode b = {
		.write = raw_write, .sync = barrier, .map = map,
		.slots = SLOTS_OFF,
	};

	return barrier_rounds(&b, rounds);
}

#define LIBBAR_SLOTS_OFF	(62ULL << 20)
#define LIBBAR_RETRIES_MAX	1000

static struct awg_handle *lib_h;
static long lib_retries;

/* awg_barrier(), again after each ETIMEDOUT (counted in lib_retries). */
static void lib_barrier(void)
{
	while (awg_barrier(lib_h)) {
		if (errno != ETIMEDOUT || ++lib_retries > LIBBAR_RETRIES_MAX)
			die("awg_barrier");
	}
	if (awg_get_info(lib_h, &info))
		die("awg_get_info");
}

static void lib_write(uint64_t off, uint64_t v)
{
	if (awg_write(lib_h, off, &v, 8))
		die("awg_write");
}

static int do_libbarrier(const char *dev, long rounds)
{
	struct barrier_mode b = {
		.write = lib_write, .sync = lib_barrier,
		.slots = LIBBAR_SLOTS_OFF,
	};
	int ret;

	if (awg_open(dev, &lib_h))
		die("awg_open");
	b.map = awg_map(lib_h);
	if (!b.map)
		die("awg_map");
	ret = barrier_rounds(&b, rounds);
	if (!ret)
		printf("retries %ld\n", lib_retries);
	awg_close(&lib_h);
	return ret;
}

static int do_event(char **argv)
{
	struct awg_event ev = { 0 };

	if (!strcmp(argv[0], "send")) {
		ev.node = strtoul(argv[1], NULL, 0);
		ev.id = strtoul(argv[2], NULL, 0);
		ev.data = strtoul(argv[3], NULL, 0);
		if (ioctl(fd, AWG_IOC_EVENT_SEND, &ev))
			die("AWG_IOC_EVENT_SEND");
		return 0;
	}
	ev.id = strtoul(argv[1], NULL, 0);
	ev.timeout_ms = strtoul(argv[2], NULL, 0);
	if (ioctl(fd, AWG_IOC_EVENT_WAIT, &ev)) {
		printf("none %s\n", strerror(errno));
		return 0;
	}
	printf("from %u data %u\n", ev.node, ev.data);
	return 0;
}

static int do_stats(void)
{
	struct awg_stats s;

	if (ioctl(fd, AWG_IOC_GET_STATS, &s))
		die("AWG_IOC_GET_STATS");
	printf("busy %" PRIu64 " measured %.0f model %.0f ratio %.4f\n",
	       (uint64_t)s.rot_busy_count,
	       s.rot_busy_count ? (double)s.rot_busy_ns / s.rot_busy_count : 0,
	       s.rot_busy_count ? (double)s.rot_busy_model_ns / s.rot_busy_count : 0,
	       s.rot_busy_model_ns ? (double)s.rot_busy_ns / s.rot_busy_model_ns : 0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: see the top of selftests/awgstar/awg_ring_prog.c\n");
		return 2;
	}
	open_board(argv[2]);
	if (!strcmp(argv[1], "mix") && argc == 8)
		return do_mix(strtoull(argv[3], NULL, 0), atol(argv[4]),
			      strtoull(argv[5], NULL, 0), strtoull(argv[6], NULL, 0),
			      strtoull(argv[7], NULL, 0));
	if (!strcmp(argv[1], "check") && argc == 5)
		return do_check(strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 0));
	if (!strcmp(argv[1], "sum") && argc == 5)
		return do_sum(strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 0));
	if (!strcmp(argv[1], "order") && argc == 6)
		return do_order(!strcmp(argv[3], "writer"), strtoull(argv[4], NULL, 0),
				strtoull(argv[5], NULL, 0));
	if (!strcmp(argv[1], "barrier") && argc == 4)
		return do_barrier(atol(argv[3]));
	if (!strcmp(argv[1], "libbarrier") && argc == 4)
		return do_libbarrier(argv[2], atol(argv[3]));
	if (!strcmp(argv[1], "event") && argc >= 6)
		return do_event(argv + 3);
	if (!strcmp(argv[1], "stats"))
		return do_stats();
	fprintf(stderr, "awg_ring_prog: bad arguments\n");
	return 2;
}

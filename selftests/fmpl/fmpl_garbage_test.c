// SPDX-License-Identifier: GPL-2.0
/*
 * fmpl_garbage_test - raw ioctls on /dev/fmpl (no libfmpl): every ioctl
 * and every field fed garbage, with the errno of uapi/linux/fmpl.h (EINVAL
 * where it is silent): calls before the handshake (EPERM) and before
 * FMPL_IOC_INIT (ENOTCONN), API versions and feature bits, every reserved
 * field of every structure, every FMPL_IOC_INIT field at and past its
 * edges, unmapped and read-only areas and buffers (EFAULT), xfer flags,
 * ranks, indices, communicators and sizes, wait flags, spool alignment,
 * collective roots, COMM_INFO's ENOSPC, COMM_FREE (the world, freed and
 * unknown ids, EBUSY, a full world's slots), every unknown request number and
 * every wrong structure size (ENOTTY), a second INIT (EBUSY), long-term
 * pins past RLIMIT_MEMLOCK without CAP_IPC_LOCK (ENOMEM).  After all
 * that the same file still works: a message to itself in a 1-rank world,
 * data checked.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <linux/capability.h>

#include "kselftest_harness.h"
#include "fmpl_util.h"

#define COUNT	4

/* Every feature of this uapi; bits above it are unknown. */
#define ALL_FEATURES	(FMPL_FEATURE_P2P | FMPL_FEATURE_SPOOL | \
			 FMPL_FEATURE_ANY_SOURCE | FMPL_FEATURE_COLL | \
			 FMPL_FEATURE_FAST | FMPL_FEATURE_COMM_FREE)
#define FIRST_UNKNOWN_FEATURE	6

/* ioctl() as 0 or -errno. */
static int io(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static int open_dev(void)
{
	return open(FMPL_DEV, O_RDWR | O_CLOEXEC);
}

static int open_api(void)
{
	struct fmpl_api api = { .api = FMPL_API_VERSION,
				.features = FMPL_FEATURE_P2P };
	int fd = open_dev();

	if (fd >= 0 && io(fd, FMPL_IOC_API, &api)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void *map(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * An address range with nothing mapped there: low in the address space,
 * where mmap() without a hint never places anything, or else (under
 * AddressSanitizer, whose shadow covers that) at 80 TiB, above the
 * shadow and below where mmap() starts placing things.
 */
static void *unmapped(size_t len)
{
	static const uintptr_t from[] = { 0x200000000UL, 0x500000000000UL };
	uintptr_t a;
	size_t i;

	for (i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
		for (a = from[i]; a < 2 * from[i]; a += from[i] / 32) {
			void *p = mmap((void *)a, len, PROT_NONE, MAP_PRIVATE |
				       MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

			if (p == (void *)a) {
				munmap(p, len);
				return p;
			}
			if (p != MAP_FAILED)
				munmap(p, len);
		}
	}
	return NULL;
}

struct world {
	int fd;
	struct fmpl_header *ma;
	struct fmpl_flag *fa;
};

static struct fmpl_init good_init(struct world *w)
{
	struct fmpl_init in = {
		.key = fresh_key(), .size = 1, .rank = 0, .count = COUNT,
		.ma = (uintptr_t)w->ma, .fa = (uintptr_t)w->fa,
	};

	return in;
}

/* Rank @rank of a @size-rank world of @key, COUNT indices, a fresh file. */
static int join_world(struct world *w, uint64_t key, int rank, int size)
{
	struct fmpl_init in;

	w->fd = open_api();
	w->ma = map(4096, PROT_READ | PROT_WRITE);
	w->fa = map(4096, PROT_READ | PROT_WRITE);
	if (w->fd < 0 || !w->ma || !w->fa)
		return -1;
	in = good_init(w);
	in.key = key;
	in.size = size;
	in.rank = rank;
	return io(w->fd, FMPL_IOC_INIT, &in);
}

/* A 1-rank world. */
static int open_world(struct world *w)
{
	return join_world(w, fresh_key(), 0, 1);
}

static const unsigned long after_init[] = {
	FMPL_IOC_SEND, FMPL_IOC_RECV, FMPL_IOC_WAIT, FMPL_IOC_SENDBUF_SET,
	FMPL_IOC_SENDBUF_CHECK, FMPL_IOC_BARRIER, FMPL_IOC_BCAST,
	FMPL_IOC_COMM_CREATE, FMPL_IOC_COMM_INFO, FMPL_IOC_COMM_FREE,
	FMPL_IOC_FAST_WAIT, FMPL_IOC_FAST_WAKE,
};

static const unsigned long all_cmds[] = {
	FMPL_IOC_API, FMPL_IOC_GET_INFO, FMPL_IOC_INIT, FMPL_IOC_SEND,
	FMPL_IOC_RECV, FMPL_IOC_WAIT, FMPL_IOC_SENDBUF_SET,
	FMPL_IOC_SENDBUF_CHECK, FMPL_IOC_BARRIER, FMPL_IOC_BCAST,
	FMPL_IOC_COMM_CREATE, FMPL_IOC_COMM_INFO, FMPL_IOC_COMM_FREE,
	FMPL_IOC_FAST_WAIT, FMPL_IOC_FAST_WAKE,
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

TEST(get_info_any_time)
{
	struct fmpl_info info;
	int fd = open_dev();

	ASSERT_LE(0, fd);
	memset(&info, 0xff, sizeof(info));
	ASSERT_EQ(0, io(fd, FMPL_IOC_GET_INFO, &info));
	ASSERT_EQ(FMPL_API_VERSION, info.api);
	ASSERT_LE(2, info.ranks_max);
	ASSERT_NE(0, info.features & FMPL_FEATURE_P2P);
	ASSERT_EQ(0, info.features & ~ALL_FEATURES);
	ASSERT_LE(600 + 4, info.count_max);
	ASSERT_LE(16 * MB, info.msg_max);
	ASSERT_EQ(-1, check_byte(info.reserved, sizeof(info.reserved), 0));
	ASSERT_EQ(-EFAULT, io(fd, FMPL_IOC_GET_INFO, NULL));
	ASSERT_EQ(-EFAULT, io(fd, FMPL_IOC_GET_INFO, unmapped(4096)));
	close(fd);
}

TEST(calls_before_the_handshake_are_eperm)
{
	uint8_t junk[256];
	size_t i;
	int fd = open_dev();

	ASSERT_LE(0, fd);
	memset(junk, 0, sizeof(junk));
	ASSERT_EQ(-EPERM, io(fd, FMPL_IOC_INIT, junk));
	for (i = 0; i < N(after_init); i++) {
		memset(junk, 0, sizeof(junk));
		ASSERT_EQ(-EPERM, io(fd, after_init[i], junk));
	}
	/* Unknown requests are ENOTTY, handshake or not. */
	ASSERT_EQ(-ENOTTY, io(fd, _IOWR(FMPL_IOC_MAGIC, 0x7f, struct fmpl_api), junk));
	close(fd);
}

TEST(api_version_features_reserved)
{
	static const uint32_t bad[] = { 0, 2, 100, 0xffffffffU };
	struct fmpl_api api;
	int fd = open_dev(), r;
	uint8_t junk[256];

	ASSERT_LE(0, fd);
	/* Versions other than 1: EPROTONOSUPPORT, the kernel's in api. */
	for (size_t i = 0; i < N(bad); i++) {
		api = (struct fmpl_api){ .api = bad[i] };
		ASSERT_EQ(-EPROTONOSUPPORT, io(fd, FMPL_IOC_API, &api));
		ASSERT_EQ(FMPL_API_VERSION, api.api);
		ASSERT_NE(0, api.features & FMPL_FEATURE_P2P);
	}
	/* Unknown feature bits: EINVAL. */
	ASSERT_EQ(1ULL << FIRST_UNKNOWN_FEATURE, ALL_FEATURES + 1);
	for (int b = FIRST_UNKNOWN_FEATURE; b < 64; b += 7) {
		api = (struct fmpl_api){ .api = FMPL_API_VERSION,
					 .features = FMPL_FEATURE_P2P | (1ULL << b) };
		ASSERT_EQ(-EINVAL, io(fd, FMPL_IOC_API, &api));
	}
	api = (struct fmpl_api){ .api = 1, .features = 1ULL << 63 };
	ASSERT_EQ(-EINVAL, io(fd, FMPL_IOC_API, &api));
	/* Reserved field. */
	api = (struct fmpl_api){ .api = 1, .reserved = 1 };
	ASSERT_EQ(-EINVAL, io(fd, FMPL_IOC_API, &api));
	api = (struct fmpl_api){ .api = 1, .reserved = 0x80000000U };
	ASSERT_EQ(-EINVAL, io(fd, FMPL_IOC_API, &api));
	ASSERT_EQ(-EFAULT, io(fd, FMPL_IOC_API, NULL));
	/* Still no handshake after all the failures. */
	memset(junk, 0, sizeof(junk));
	ASSERT_EQ(-EPERM, io(fd, FMPL_IOC_SENDBUF_CHECK, junk));
	/* Every known feature at once is fine; then a second API is an error. */
	api = (struct fmpl_api){ .api = 1, .features = ALL_FEATURES };
	ASSERT_EQ(0, io(fd, FMPL_IOC_API, &api));
	ASSERT_EQ(FMPL_API_VERSION, api.api);
	ASSERT_EQ(ALL_FEATURES, api.features);
	ASSERT_EQ(0, api.reserved);
	api = (struct fmpl_api){ .api = 1 };
	r = io(fd, FMPL_IOC_API, &api);
	if (r != -EBUSY && r != -EINVAL)
		TH_LOG("second FMPL_IOC_API: %d", r);
	ASSERT_TRUE(r == -EBUSY || r == -EINVAL);
	/* After the handshake, before INIT: ENOTCONN. */
	for (size_t i = 0; i < N(after_init); i++) {
		memset(junk, 0, sizeof(junk));
		ASSERT_EQ(-ENOTCONN, io(fd, after_init[i], junk));
	}
	close(fd);
}

TEST(init_every_field)
{
	struct world w = { 0 };
	struct fmpl_info info;
	struct fmpl_init in;
	void *ro = map(4096, PROT_READ), *gone = unmapped(8192);
	uint8_t *edge = map(8192, PROT_READ | PROT_WRITE);
	size_t i;

	w.fd = open_api();
	w.ma = map(256 * KB, PROT_READ | PROT_WRITE);
	w.fa = map(256 * KB, PROT_READ | PROT_WRITE);
	ASSERT_LE(0, w.fd);
	ASSERT_NE(NULL, w.ma);
	ASSERT_NE(NULL, ro);
	ASSERT_NE(NULL, gone);
	ASSERT_NE(NULL, edge);
	ASSERT_EQ(0, munmap(edge + 4096, 4096));	/* edge: 1 page, then a hole */
	ASSERT_EQ(0, io(w.fd, FMPL_IOC_GET_INFO, &info));

#define BAD_INIT(errno_, field_expr) do {				\
	in = good_init(&w);						\
	field_expr;							\
	ASSERT_EQ(errno_, io(w.fd, FMPL_IOC_INIT, &in));		\
} while (0)

	BAD_INIT(-EINVAL, in.fast_count = FMPL_FAST_COUNT_MAX + 1);
	BAD_INIT(-EINVAL, in.fast_count = 0xffffffffU);
	for (i = 0; i < N(in.reserved); i++)
		BAD_INIT(-EINVAL, in.reserved[i] = 1ULL << (i * 16));
	BAD_INIT(-EINVAL, in.key = 0);
	BAD_INIT(-EINVAL, in.size = 0);
	BAD_INIT(-EINVAL, in.size = info.ranks_max + 1);
	BAD_INIT(-EINVAL, in.size = 0xffffffffU);
	BAD_INIT(-EINVAL, in.rank = 1);
	BAD_INIT(-EINVAL, (in.size = 3, in.rank = 3));
	BAD_INIT(-EINVAL, in.rank = 0xffffffffU);
	BAD_INIT(-EINVAL, in.mode = FMPL_MODE_ANY + 1);
	BAD_INIT(-EINVAL, in.mode = 0xffffffffU);
	BAD_INIT(-EINVAL, in.count = 0);
	BAD_INIT(-EINVAL, in.count = info.count_max + 1);
	BAD_INIT(-EINVAL, in.count = 0xffffffffU);
	BAD_INIT(-EINVAL, in.ma = 0);
	BAD_INIT(-EINVAL, in.fa = 0);
	BAD_INIT(-EINVAL, in.ma += 4);
	BAD_INIT(-EINVAL, in.fa += 1);
	/* Areas the kernel cannot pin for writing. */
	BAD_INIT(-EFAULT, in.ma = (uintptr_t)gone);
	BAD_INIT(-EFAULT, in.fa = (uintptr_t)gone);
	BAD_INIT(-EFAULT, in.ma = (uintptr_t)ro);
	BAD_INIT(-EFAULT, in.fa = (uintptr_t)ro);
	/* An area whose end runs into a hole: 1 rank x 200 indices > 1 page. */
	BAD_INIT(-EFAULT, (in.count = 200, in.ma = (uintptr_t)edge));
	BAD_INIT(-EFAULT, in.ma = 0xfffffffffffff000ULL);
	BAD_INIT(-EFAULT, in.ma = 0x8000000000000000ULL);
	ASSERT_EQ(-EFAULT, io(w.fd, FMPL_IOC_INIT, NULL));
	/* The edges that are fine: the largest count, every mode. */
	in = good_init(&w);
	in.count = info.count_max;
	in.mode = FMPL_MODE_ANY;
	in.join_timeout_ms = 0xffffffffU;
	ASSERT_GE(256 * KB, FMPL_AREA_BYTES(1, info.count_max, struct fmpl_flag));
	ASSERT_EQ(0, io(w.fd, FMPL_IOC_INIT, &in));
	/* A second INIT on the file: EBUSY. */
	in = good_init(&w);
	ASSERT_EQ(-EBUSY, io(w.fd, FMPL_IOC_INIT, &in));
	close(w.fd);
}

/* A good xfer to self on index 0 of a 1-rank world. */
static struct fmpl_xfer xfer(void *buf, uint64_t size)
{
	struct fmpl_xfer x = { .buf = (uintptr_t)buf, .size = size };

	return x;
}

TEST(xfer_every_field)
{
	static const unsigned long cmds[] = { FMPL_IOC_SEND, FMPL_IOC_RECV };
	struct world w;
	struct fmpl_info info;
	struct fmpl_xfer x, r;
	struct fmpl_wait wt = { .flags = FMPL_WAIT_SEND };
	uint8_t *buf = map(2 * MB, PROT_READ | PROT_WRITE);
	void *ro = map(64 * KB, PROT_READ), *gone = unmapped(64 * KB);
	size_t i, c;

	ASSERT_EQ(0, open_world(&w));
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, gone);
	ASSERT_EQ(0, io(w.fd, FMPL_IOC_GET_INFO, &info));

#define BAD_XFER(cmd_, errno_, field_expr) do {				\
	x = xfer(buf, 100);						\
	field_expr;							\
	if ((errno_) != io(w.fd, (cmd_), &x))				\
		TH_LOG("%s: %s", (cmd_) == FMPL_IOC_SEND ? "SEND" : "RECV", #field_expr); \
	x = xfer(buf, 100);						\
	field_expr;							\
	ASSERT_EQ(errno_, io(w.fd, (cmd_), &x));			\
} while (0)

	for (c = 0; c < 2; c++) {
		unsigned long cmd = cmds[c];

		BAD_XFER(cmd, -EINVAL, x.reserved0 = 1);
		BAD_XFER(cmd, -EINVAL, x.reserved1 = 1);
		for (i = 0; i < N(x.reserved); i++)
			BAD_XFER(cmd, -EINVAL, x.reserved[i] = 1);
		BAD_XFER(cmd, -EINVAL, x.flags = 1ULL << 2);
		BAD_XFER(cmd, -EINVAL, x.flags = 1ULL << 63);
		BAD_XFER(cmd, -EINVAL, x.flags = ~0ULL);
		BAD_XFER(cmd, -EINVAL, x.flags = FMPL_XFER_NONBLOCK | FMPL_XFER_ANY_SOURCE);
		BAD_XFER(cmd, -EINVAL, x.peer = 1);
		BAD_XFER(cmd, -EINVAL, x.peer = 0xffffffffU);
		BAD_XFER(cmd, -EINVAL, x.mai = COUNT);
		BAD_XFER(cmd, -EINVAL, x.mai = COUNT + 1);
		BAD_XFER(cmd, -EINVAL, x.mai = 0xfffffffeU);
		BAD_XFER(cmd, -EINVAL, x.comm = 1);
		BAD_XFER(cmd, -EINVAL, x.comm = 63);
		BAD_XFER(cmd, -EINVAL, x.comm = 64);
		BAD_XFER(cmd, -EINVAL, x.comm = FMPL_COMM_NULL);
		BAD_XFER(cmd, -EINVAL, x.size = info.msg_max + 1);
		BAD_XFER(cmd, -EINVAL, x.size = ~0ULL);
		BAD_XFER(cmd, -EINVAL, x.buf = 0);
		/* Buffers that cannot be read (send) or written (receive). */
		BAD_XFER(cmd, -EFAULT, x.buf = (uintptr_t)gone);
		BAD_XFER(cmd, -EFAULT, (x.buf = (uintptr_t)gone, x.size = 64 * KB));
		BAD_XFER(cmd, -EFAULT, (x.buf = (uintptr_t)gone, x.flags = FMPL_XFER_NONBLOCK));
		BAD_XFER(cmd, -EFAULT, (x.buf = 0xffffffffffff0000ULL, x.size = 4096));
		ASSERT_EQ(-EFAULT, io(w.fd, cmd, NULL));
		ASSERT_EQ(-EFAULT, io(w.fd, cmd, gone));
	}
	/* A send cannot use TAG_ANY, nor an any-source one. */
	BAD_XFER(FMPL_IOC_SEND, -EINVAL, x.mai = FMPL_TAG_ANY);
	BAD_XFER(FMPL_IOC_SEND, -EINVAL, (x.mai = FMPL_TAG_ANY, x.flags = FMPL_XFER_ANY_SOURCE));
	/* A receive cannot go into read-only memory. */
	BAD_XFER(FMPL_IOC_RECV, -EFAULT, (x.buf = (uintptr_t)ro, x.size = 64 * KB));
	BAD_XFER(FMPL_IOC_RECV, -EFAULT, (x.buf = (uintptr_t)ro, x.size = 10,
					  x.flags = FMPL_XFER_NONBLOCK));
	/* An any-source receive names no peer. */
	BAD_XFER(FMPL_IOC_RECV, -EINVAL, (x.flags = FMPL_XFER_ANY_SOURCE, x.peer = 1));
	BAD_XFER(FMPL_IOC_RECV, -EINVAL, (x.flags = FMPL_XFER_ANY_SOURCE, x.mai = COUNT));
	/* A send may read read-only memory: to self, non-blocking, then waited. */
	x = xfer(ro, 1000);
	x.flags = FMPL_XFER_NONBLOCK;
	ASSERT_EQ(0, io(w.fd, FMPL_IOC_SEND, &x));
	ASSERT_EQ(FMPL_STATUS_PENDING, x.status);
	r = xfer(buf, 2000);
	memset(buf, 0x11, 2000);
	ASSERT_EQ(0, io(w.fd, FMPL_IOC_RECV, &r));
	ASSERT_EQ(FMPL_STATUS_DONE, r.status);
	ASSERT_EQ(1000, r.out_size);
	ASSERT_EQ(-1, check_byte(buf, 1000, 0));
	ASSERT_EQ(-1, check_byte(buf + 1000, 1000, 0x11));
	ASSERT_EQ(0, io(w.fd, FMPL_IOC_WAIT, &wt));
	ASSERT_EQ(FMPL_STATUS_DONE, wt.status);
	close(w.fd);
}

TEST(wait_every_field)
{
	struct world w;
	struct fmpl_wait wt;
	size_t i;

	ASSERT_EQ(0, open_world(&w));
#define BAD_WAIT(errno_, field_expr) do {				\
	wt = (struct fmpl_wait){ .flags = FMPL_WAIT_RECV };		\
	field_expr;							\
	ASSERT_EQ(errno_, io(w.fd, FMPL_IOC_WAIT, &wt));		\
} while (0)
	BAD_WAIT(-EINVAL, wt.flags = 0);
	BAD_WAIT(-EINVAL, wt.flags = FMPL_WAIT_SEND | FMPL_WAIT_RECV);
	BAD_WAIT(-EINVAL, wt.flags = 1ULL << 2);
	BAD_WAIT(-EINVAL, wt.flags = ~0ULL);
	BAD_WAIT(-EINVAL, wt.reserved0 = 1);
	for (i = 0; i < N(wt.reserved); i++)
		BAD_WAIT(-EINVAL, wt.reserved[i] = 1);
	BAD_WAIT(-EINVAL, wt.peer = 1);
	BAD_WAIT(-EINVAL, wt.mai = COUNT);
	BAD_WAIT(-EINVAL, wt.comm = 5);
	BAD_WAIT(-EINVAL, (wt.flags = FMPL_WAIT_SEND, wt.mai = FMPL_TAG_ANY));
	/* Nothing posted: ENOENT. */
	BAD_WAIT(-ENOENT, wt.mai = 0);
	BAD_WAIT(-ENOENT, wt.mai = FMPL_TAG_ANY);
	BAD_WAIT(-ENOENT, wt.flags = FMPL_WAIT_SEND);
	ASSERT_EQ(-EFAULT, io(w.fd, FMPL_IOC_WAIT, NULL));
	close(w.fd);
}

TEST(sendbuf_every_field)
{
	struct world w;
	struct fmpl_sendbuf sb;
	struct fmpl_sendbuf_stat st;
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *spool = map(64 * KB, PROT_READ | PROT_WRITE);
	void *ro = map(64 * KB, PROT_READ), *gone = unmapped(64 * KB);
	size_t i;

	ASSERT_EQ(0, open_world(&w));
	ASSERT_NE(NULL, spool);
	ASSERT_NE(NULL, gone);
#define BAD_SB(errno_, field_expr) do {					\
	sb = (struct fmpl_sendbuf){ .buf = (uintptr_t)spool, .size = 64 * KB }; \
	field_expr;							\
	ASSERT_EQ(errno_, io(w.fd, FMPL_IOC_SENDBUF_SET, &sb));	\
} while (0)
	BAD_SB(-EINVAL, sb.buf += 8);
	BAD_SB(-EINVAL, sb.buf += (uint64_t)page / 2);
	BAD_SB(-EINVAL, sb.size = 100);
	BAD_SB(-EINVAL, sb.size += 1);
	BAD_SB(-EINVAL, sb.buf = 0);
	BAD_SB(-EINVAL, sb.size = 0);
	BAD_SB(-EINVAL, sb.size = 1ULL << 62);
	BAD_SB(-EINVAL, sb.reserved0 = 1);
	for (i = 0; i < N(sb.reserved); i++)
		BAD_SB(-EINVAL, sb.reserved[i] = 1);
	BAD_SB(-EFAULT, sb.buf = (uintptr_t)gone);
	BAD_SB(-EFAULT, sb.buf = (uintptr_t)ro);
	ASSERT_EQ(-EFAULT, io(w.fd, FMPL_IOC_SENDBUF_SET, NULL));
	ASSERT_EQ(-EFAULT, io(w.fd, FMPL_IOC_SENDBUF_CHECK, NULL));
	/* Good: set, any timeout, remove. */
	BAD_SB(0, sb.timeout_ms = 0);
	BAD_SB(0, sb.timeout_ms = FMPL_TIMEOUT_NONE);
	BAD_SB(0, (sb.buf = 0, sb.size = 0));
	memset(&st, 0xff, sizeof(st));
	ASSERT_EQ(0, io(w.fd, FMPL_IOC_SENDBUF_CHECK, &st));
	ASSERT_EQ(0, st.nsend);
	ASSERT_EQ(0, st.nspool);
	ASSERT_EQ(0, st.spool_used);
	ASSERT_EQ(-1, check_byte(st.reserved, sizeof(st.reserved), 0));
	close(w.fd);
}

/* VmPin of /proc/self/status in KB, or -1. */
static long vm_pin_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* Take CAP_IPC_LOCK out of this process's effective set: 0 or -1. */
static int drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_IPC_LOCK / 32].effective &= ~(1U << (CAP_IPC_LOCK % 32));
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

/*
 * The areas pinned for good (matching and flag areas, spool) count against
 * RLIMIT_MEMLOCK in VmPin, as RDMA registrations do; CAP_IPC_LOCK lifts the
 * limit; closing the file gives the pages back.
 */
TEST(long_term_pins_count_against_memlock)
{
	struct rlimit rl = { 64 * KB, 64 * KB };
	uint8_t *spool = map(64 * KB, PROT_READ | PROT_WRITE);
	struct fmpl_sendbuf sb = { .buf = (uintptr_t)spool, .size = 64 * KB };
	struct world w;
	long base = vm_pin_kb(), kb = -1;
	int i;

	if (base < 0)
		SKIP(return, "no VmPin in /proc/self/status");
	ASSERT_NE(NULL, spool);
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	ASSERT_EQ(0, open_world(&w));
	/* Matching and flag areas: a page each. */
	ASSERT_EQ(base + 8, vm_pin_kb());
	if (geteuid() == 0) {	/* CAP_IPC_LOCK: past the limit is fine */
		ASSERT_EQ(0, io(w.fd, FMPL_IOC_SENDBUF_SET, &sb));
		ASSERT_EQ(base + 72, vm_pin_kb());
		sb.buf = 0;
		sb.size = 0;
		ASSERT_EQ(0, io(w.fd, FMPL_IOC_SENDBUF_SET, &sb));
		ASSERT_EQ(base + 8, vm_pin_kb());
		ASSERT_EQ(0, drop_ipc_lock());
	}
	sb.buf = (uintptr_t)spool;
	sb.size = 64 * KB;
	ASSERT_EQ(-ENOMEM, io(w.fd, FMPL_IOC_SENDBUF_SET, &sb));
	ASSERT_EQ(base + 8, vm_pin_kb());
	sb.size = 32 * KB;
	ASSERT_EQ(0, io(w.fd, FMPL_IOC_SENDBUF_SET, &sb));
	ASSERT_EQ(base + 40, vm_pin_kb());
	close(w.fd);
	/* The endpoint may be torn down after the close returns. */
	for (i = 0; i < 200 && (kb = vm_pin_kb()) != base; i++)
		sleep_ms(10);
	ASSERT_EQ(base, kb);
}

TEST(collectives_every_field)
{
	struct world w;
	struct fmpl_coll cl;
	struct fmpl_info info;
	uint8_t *buf = map(64 * KB, PROT_READ | PROT_WRITE);
	void *gone = unmapped(64 * KB);
	size_t i;

	ASSERT_EQ(0, open_world(&w));
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, gone);
	ASSERT_EQ(0, io(w.fd, FMPL_IOC_GET_INFO, &info));
#define BAD_COLL(cmd_, errno_, field_expr) do {				\
	cl = (struct fmpl_coll){ 0 };					\
	if ((cmd_) == FMPL_IOC_BCAST) {					\
		cl.buf = (uintptr_t)buf;				\
		cl.size = 1000;						\
	}								\
	field_expr;							\
	ASSERT_EQ(errno_, io(w.fd, (cmd_), &cl));			\
} while (0)
	BAD_COLL(FMPL_IOC_BARRIER, -EINVAL, cl.buf = (uintptr_t)buf);
	BAD_COLL(FMPL_IOC_BARRIER, -EINVAL, cl.size = 1);
	BAD_COLL(FMPL_IOC_BARRIER, -EINVAL, cl.root = 1);
	BAD_COLL(FMPL_IOC_BARRIER, -EINVAL, cl.comm = 1);
	BAD_COLL(FMPL_IOC_BARRIER, -EINVAL, cl.comm = 0xffffffffU);
	for (i = 0; i < N(cl.reserved); i++) {
		BAD_COLL(FMPL_IOC_BARRIER, -EINVAL, cl.reserved[i] = 1);
		BAD_COLL(FMPL_IOC_BCAST, -EINVAL, cl.reserved[i] = 1);
	}
	BAD_COLL(FMPL_IOC_BCAST, -EINVAL, cl.root = 1);
	BAD_COLL(FMPL_IOC_BCAST, -EINVAL, cl.root = 0xffffffffU);
	BAD_COLL(FMPL_IOC_BCAST, -EINVAL, cl.comm = 2);
	BAD_COLL(FMPL_IOC_BCAST, -EINVAL, cl.buf = 0);
	BAD_COLL(FMPL_IOC_BCAST, -EINVAL, cl.size = info.msg_max + 1);
	BAD_COLL(FMPL_IOC_BCAST, -EFAULT, (cl.buf = (uintptr_t)gone, cl.size = 64 * KB));
	BAD_COLL(FMPL_IOC_BCAST, -EFAULT, (cl.buf = (uintptr_t)gone, cl.size = 10));
	ASSERT_EQ(-EFAULT, io(w.fd, FMPL_IOC_BARRIER, NULL));
	ASSERT_EQ(-EFAULT, io(w.fd, FMPL_IOC_BCAST, NULL));
	/* Good ones in a 1-rank world complete at once. */
	BAD_COLL(FMPL_IOC_BARRIER, 0, (void)0);
	BAD_COLL(FMPL_IOC_BCAST, 0, (void)0);
	BAD_COLL(FMPL_IOC_BCAST, 0, (cl.buf = 0, cl.size = 0));
	close(w.fd);
}

TEST(comm_create_and_info_every_field)
{
	struct world w;
	struct fmpl_comm_create cc;
	struct fmpl_comm_info ci;
	uint32_t members[4];
	size_t i;

	ASSERT_EQ(0, open_world(&w));
#define BAD_CC(errno_, field_expr) do {					\
	cc = (struct fmpl_comm_create){ 0 };				\
	field_expr;							\
	ASSERT_EQ(errno_, io(w.fd, FMPL_IOC_COMM_CREATE, &cc));	\
} while (0)
	BAD_CC(-EINVAL, cc.reserved0 = 1);
	for (i = 0; i < N(cc.reserved); i++)
		BAD_CC(-EINVAL, cc.reserved[i] = 1);
	BAD_CC(-EINVAL, cc.parent = 1);
	BAD_CC(-EINVAL, cc.parent = 0xffffffffU);
	ASSERT_EQ(-EFAULT, io(w.fd, FMPL_IOC_COMM_CREATE, NULL));
	/* Join no group: FMPL_COMM_NULL. */
	BAD_CC(0, cc.key = FMPL_KEY_UNDEFINED);
	ASSERT_EQ(FMPL_COMM_NULL, cc.comm);
	/* The largest key makes a 1-rank communicator. */
	BAD_CC(0, cc.key = FMPL_KEY_UNDEFINED - 1);
	ASSERT_NE(FMPL_COMM_NULL, cc.comm);
	ASSERT_NE(FMPL_COMM_WORLD, cc.comm);
	ASSERT_EQ(1, cc.size);
	ASSERT_EQ(0, cc.rank);

#define BAD_CI(errno_, field_expr) do {					\
	ci = (struct fmpl_comm_info){ .members = (uintptr_t)members,	\
				      .members_len = 4 };		\
	field_expr;							\
	ASSERT_EQ(errno_, io(w.fd, FMPL_IOC_COMM_INFO, &ci));		\
} while (0)
	BAD_CI(-EINVAL, ci.reserved0 = 1);
	BAD_CI(-EINVAL, ci.reserved1 = 1);
	for (i = 0; i < N(ci.reserved); i++)
		BAD_CI(-EINVAL, ci.reserved[i] = 1);
	BAD_CI(-EINVAL, ci.comm = 40);
	BAD_CI(-EINVAL, ci.comm = FMPL_COMM_NULL);
	BAD_CI(-EFAULT, ci.members = (uintptr_t)unmapped(4096));
	ASSERT_EQ(-EFAULT, io(w.fd, FMPL_IOC_COMM_INFO, NULL));
	/* Too small an array: ENOSPC, and the size it needs. */
	BAD_CI(-ENOSPC, ci.members_len = 0);
	ASSERT_EQ(1, ci.size);
	/* Without an array: the size only. */
	BAD_CI(0, (ci.members = 0, ci.members_len = 0));
	ASSERT_EQ(1, ci.size);
	ASSERT_EQ(0, ci.rank);
	members[0] = 77;
	BAD_CI(0, ci.comm = cc.comm);
	ASSERT_EQ(0, members[0]);
	close(w.fd);
}

static int create_1(struct world *w, uint32_t *comm)
{
	struct fmpl_comm_create cc = { .key = 0 };
	int ret = io(w->fd, FMPL_IOC_COMM_CREATE, &cc);

	*comm = cc.comm;
	return ret;
}

/*
 * COMM_FREE: every field; the world, unknown and freed ids; a full world
 * (63 communicators besides the world: ENOSPC) gets a slot back by a free,
 * under a new id; a pending receive on the communicator makes it EBUSY
 * (not counted) until it completes; a freed id names nothing any more.
 */
TEST(comm_free_every_field_and_slot_reuse)
{
	struct fmpl_comm_free cf;
	struct fmpl_comm_info ci;
	struct fmpl_coll cl;
	struct fmpl_xfer x;
	struct world w;
	uint32_t ids[63], id, j;
	uint8_t in[100], out[100];
	size_t i, n;

	ASSERT_EQ(0, open_world(&w));
#define BAD_CF(errno_, field_expr) do {					\
	cf = (struct fmpl_comm_free){ .comm = ids[0] };			\
	field_expr;							\
	ASSERT_EQ(errno_, io(w.fd, FMPL_IOC_COMM_FREE, &cf));		\
} while (0)
	ASSERT_EQ(0, create_1(&w, &ids[0]));
	BAD_CF(-EINVAL, cf.reserved0 = 1);
	for (i = 0; i < N(cf.reserved); i++)
		BAD_CF(-EINVAL, cf.reserved[i] = 1);
	BAD_CF(-EINVAL, cf.comm = FMPL_COMM_WORLD);
	BAD_CF(-EINVAL, cf.comm = FMPL_COMM_NULL);
	BAD_CF(-EINVAL, cf.comm = 40);
	BAD_CF(-EINVAL, cf.comm = ids[0] + 64 * 4096);	/* its slot, not its id */
	ASSERT_EQ(-EFAULT, io(w.fd, FMPL_IOC_COMM_FREE, NULL));
	ASSERT_EQ(-EFAULT, io(w.fd, FMPL_IOC_COMM_FREE, unmapped(4096)));

	/* Fill the world: 63 besides FMPL_COMM_WORLD, all different. */
	for (n = 1; n < N(ids); n++) {
		ASSERT_EQ(0, create_1(&w, &ids[n]));
		for (j = 0; j < n; j++)
			ASSERT_NE(ids[j], ids[n]);
	}
	ASSERT_EQ(-ENOSPC, create_1(&w, &id));
	ASSERT_EQ(FMPL_COMM_NULL, id);

	/* A receive posted on ids[5] and not complete: EBUSY, not counted. */
	x = xfer(in, sizeof(in));
	x.comm = ids[5];
	x.mai = 1;
	x.flags = FMPL_XFER_NONBLOCK;
	ASSERT_EQ(0, io(w.fd, FMPL_IOC_RECV, &x));
	ASSERT_EQ(FMPL_STATUS_PENDING, x.status);
	BAD_CF(-EBUSY, cf.comm = ids[5]);
	fill(out, sizeof(out), seed_of(0, 1, 5, 60));
	x = xfer(out, sizeof(out));
	x.comm = ids[5];
	x.mai = 1;
	ASSERT_EQ(0, io(w.fd, FMPL_IOC_SEND, &x));
	ASSERT_EQ(-1, check(in, sizeof(in), seed_of(0, 1, 5, 60)));
	/* Complete (seen in the flag area, not waited for): it may go. */
	BAD_CF(0, cf.comm = ids[5]);

	/* Gone: every call naming it fails, a second free too. */
	BAD_CF(-EINVAL, cf.comm = ids[5]);
	ci = (struct fmpl_comm_info){ .comm = ids[5] };
	ASSERT_EQ(-EINVAL, io(w.fd, FMPL_IOC_COMM_INFO, &ci));
	cl = (struct fmpl_coll){ .comm = ids[5] };
	ASSERT_EQ(-EINVAL, io(w.fd, FMPL_IOC_BARRIER, &cl));
	x = xfer(out, 1);
	x.comm = ids[5];
	ASSERT_EQ(-EINVAL, io(w.fd, FMPL_IOC_SEND, &x));

	/* Its slot is free again, under a new id that works. */
	ASSERT_EQ(0, create_1(&w, &id));
	for (j = 0; j < N(ids); j++)
		ASSERT_NE(ids[j], id);
	ASSERT_EQ(id % 64, ids[5] % 64);
	ci = (struct fmpl_comm_info){ .comm = id };
	ASSERT_EQ(0, io(w.fd, FMPL_IOC_COMM_INFO, &ci));
	ASSERT_EQ(1, ci.size);
	cl = (struct fmpl_coll){ .comm = id };
	ASSERT_EQ(0, io(w.fd, FMPL_IOC_BARRIER, &cl));
	ids[5] = id;
	ASSERT_EQ(-ENOSPC, create_1(&w, &id));

	/* Free them all; the world is still there. */
	for (j = 0; j < N(ids); j++)
		BAD_CF(0, cf.comm = ids[j]);
	cl = (struct fmpl_coll){ .comm = FMPL_COMM_WORLD };
	ASSERT_EQ(0, io(w.fd, FMPL_IOC_BARRIER, &cl));
	ASSERT_EQ(0, create_1(&w, &id));
	close(w.fd);
}

struct lookup_race {
	int fd;
	uint32_t cur, prev;	/* the live id, the one freed before it */
	int stop, started;
	long ok, einval, bad;
};

/* Point-to-point lookups and COMM_INFO on ids being freed meanwhile. */
static void *lookup_thread(void *arg)
{
	struct lookup_race *lr = arg;
	uint32_t member;
	uint8_t byte = 0;

	while (!__atomic_load_n(&lr->stop, __ATOMIC_ACQUIRE)) {
		uint32_t ids[2] = { __atomic_load_n(&lr->cur, __ATOMIC_ACQUIRE),
				    __atomic_load_n(&lr->prev, __ATOMIC_ACQUIRE) };

		for (int k = 0; k < 2; k++) {
			struct fmpl_comm_info ci = {
				.comm = ids[k], .members = (uintptr_t)&member,
				.members_len = 1,
			};
			struct fmpl_xfer x = { .buf = (uintptr_t)&byte, .size = 1,
					       .peer = 1, .comm = ids[k] };
			int r;

			member = 77;
			r = io(lr->fd, FMPL_IOC_COMM_INFO, &ci);
			if (!r && ci.size == 1 && ci.rank == 0 && member == 0)
				lr->ok++;
			else if (r == -EINVAL)
				lr->einval++;
			else
				lr->bad++;
			/* Rank 1 is past the size of any of them: EINVAL. */
			if (io(lr->fd, FMPL_IOC_SEND, &x) != -EINVAL)
				lr->bad++;
		}
		__atomic_store_n(&lr->started, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * 2000 create/free cycles in a 1-rank world while another thread looks
 * the live and the last freed id up (COMM_INFO, which holds a reference
 * while it copies; SEND, which reads the members under RCU): every lookup
 * gives the right communicator or EINVAL, the freed ids always EINVAL; on
 * the debug kernel KASAN checks that nothing is used after its free.
 */
TEST(comm_lookups_race_with_free)
{
	struct lookup_race lr = { 0 };
	struct fmpl_comm_free cf;
	struct world w;
	pthread_t t;
	uint32_t id;
	int k;

	ASSERT_EQ(0, open_world(&w));
	ASSERT_EQ(0, create_1(&w, &id));
	lr.fd = w.fd;
	lr.cur = id;
	lr.prev = id;
	ASSERT_EQ(0, pthread_create(&t, NULL, lookup_thread, &lr));
	for (k = 0; k < 5000 && !__atomic_load_n(&lr.started, __ATOMIC_ACQUIRE); k++)
		sleep_ms(1);
	for (k = 0; k < 2000; k++) {
		cf = (struct fmpl_comm_free){ .comm = id };
		ASSERT_EQ(0, io(w.fd, FMPL_IOC_COMM_FREE, &cf));
		__atomic_store_n(&lr.prev, id, __ATOMIC_RELEASE);
		ASSERT_EQ(0, create_1(&w, &id));
		__atomic_store_n(&lr.cur, id, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&lr.stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(t, NULL));
	TH_LOG("lookups: %ld found, %ld EINVAL", lr.ok, lr.einval);
	ASSERT_EQ(0, lr.bad);
	ASSERT_LT(0, lr.ok);
	ASSERT_LT(0, lr.einval);
	close(w.fd);
}

struct free_race {
	int fd;
	uint32_t comm;
	int ret;
};

static void *free_thread(void *arg)
{
	struct free_race *fr = arg;
	struct fmpl_comm_free cf = { .comm = fr->comm };

	fr->ret = io(fr->fd, FMPL_IOC_COMM_FREE, &cf);
	return NULL;
}

/*
 * An erroneous program: rank 0 frees C in one thread and, while that free
 * waits for rank 1, enters a barrier on C in another thread (the next
 * collective on C, which rank 1 never joins).  When rank 1 frees C, the
 * free completes on both and the stray barrier fails with EINVAL instead
 * of waiting for ever (it also fails so when it comes after the free);
 * the world is not broken.
 */
static void stray_rank(struct __test_metadata *_metadata, int rank, int size,
		       void *arg)
{
	struct fmpl_comm_create cc = { .key = 0 };
	struct fmpl_coll cl = { .comm = FMPL_COMM_WORLD };
	struct fmpl_comm_free cf;
	struct free_race fr;
	struct world w;
	pthread_t t;
	double t0;

	(void)arg;
	ASSERT_EQ(0, join_world(&w, strtoull(getenv("FMPL_KEY"), NULL, 0),
				rank, size));
	ASSERT_EQ(0, io(w.fd, FMPL_IOC_COMM_CREATE, &cc));
	ASSERT_EQ(2, cc.size);
	if (rank == 1) {
		sleep_ms(400);
		cf = (struct fmpl_comm_free){ .comm = cc.comm };
		ASSERT_EQ(0, io(w.fd, FMPL_IOC_COMM_FREE, &cf));
	} else {
		fr = (struct free_race){ .fd = w.fd, .comm = cc.comm };
		ASSERT_EQ(0, pthread_create(&t, NULL, free_thread, &fr));
		sleep_ms(100);
		t0 = now_s();
		cl.comm = cc.comm;
		ASSERT_EQ(-EINVAL, io(w.fd, FMPL_IOC_BARRIER, &cl));
		ASSERT_GT(5.0, now_s() - t0);
		ASSERT_EQ(0, pthread_join(t, NULL));
		ASSERT_EQ(0, fr.ret);
		cl.comm = FMPL_COMM_WORLD;
	}
	ASSERT_EQ(0, io(w.fd, FMPL_IOC_BARRIER, &cl));
	close(w.fd);
}

TEST(collective_on_a_communicator_freed_under_it_fails)
{
	RUN_RANKS(2, stray_rank, NULL);
}

/* Every request number of the magic that is not defined, every size. */
TEST(unknown_requests_and_wrong_sizes_are_enotty)
{
	static const unsigned int sizes[] = { 0, 4, 8, 16, 24, 32, 40, 48, 56,
					      64, 72, 80, 128, 4096 };
	static uint8_t junk[8192];
	unsigned int nr, d, s;
	size_t i;
	int fd, bad = 0;
	struct world w;

	ASSERT_EQ(0, open_world(&w));
	fd = w.fd;
	for (nr = 0; nr < 256; nr++) {
		for (d = 0; d < 4; d++) {
			for (s = 0; s < N(sizes); s++) {
				unsigned long cmd = _IOC(d, FMPL_IOC_MAGIC, nr, sizes[s]);
				int known = 0;

				for (i = 0; i < N(all_cmds); i++)
					known |= cmd == all_cmds[i];
				if (known)
					continue;
				memset(junk, 0, sizeof(junk));
				if (io(fd, cmd, junk) != -ENOTTY) {
					if (bad++ < 5)
						TH_LOG("request %#lx: not ENOTTY", cmd);
				}
			}
		}
	}
	ASSERT_EQ(0, bad);
	/* Each defined request with a size 8 bytes off either way. */
	for (i = 0; i < N(all_cmds); i++) {
		unsigned long c = all_cmds[i];
		unsigned int size = _IOC_SIZE(c);

		ASSERT_EQ(-ENOTTY, io(fd, _IOC(_IOC_DIR(c), FMPL_IOC_MAGIC, _IOC_NR(c), size + 8), junk));
		ASSERT_EQ(-ENOTTY, io(fd, _IOC(_IOC_DIR(c), FMPL_IOC_MAGIC, _IOC_NR(c), size - 8), junk));
		/* ... and with another direction. */
		ASSERT_EQ(-ENOTTY, io(fd, _IOC(_IOC_NONE, FMPL_IOC_MAGIC, _IOC_NR(c), size), junk));
		/* ... and another magic. */
		ASSERT_EQ(-ENOTTY, io(fd, _IOC(_IOC_DIR(c), 0xDC, _IOC_NR(c), size), junk));
	}
	close(fd);
}

/*
 * All of the above on one file, then it still works: rank 0 of a 1-rank
 * world posts a receive from itself, sends to itself, and the flag and
 * the data are right; then the same with FMPL_TAG_ANY and a truncation.
 */
TEST(the_same_file_still_works_after_garbage)
{
	struct world w = { 0 };
	struct fmpl_init in;
	struct fmpl_api api = { .api = 7 };
	uint8_t *out = map(64 * KB, PROT_READ | PROT_WRITE);
	uint8_t *inb = map(64 * KB + 64, PROT_READ | PROT_WRITE);
	uint8_t junk[256];
	struct fmpl_xfer x;
	struct fmpl_wait wt;
	struct fmpl_flag *f;
	size_t i;
	int fd = open_dev();

	ASSERT_LE(0, fd);
	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, inb);
	/* Garbage before and during the handshake. */
	for (i = 0; i < N(after_init); i++) {
		memset(junk, 0xff, sizeof(junk));
		ASSERT_EQ(-EPERM, io(fd, after_init[i], junk));
	}
	ASSERT_EQ(-EPROTONOSUPPORT, io(fd, FMPL_IOC_API, &api));
	api = (struct fmpl_api){ .api = 1, .features = 1ULL << 40 };
	ASSERT_EQ(-EINVAL, io(fd, FMPL_IOC_API, &api));
	api = (struct fmpl_api){ .api = 1, .features = FMPL_FEATURE_P2P };
	ASSERT_EQ(0, io(fd, FMPL_IOC_API, &api));
	/* Garbage before INIT. */
	for (i = 0; i < N(after_init); i++) {
		memset(junk, 0xff, sizeof(junk));
		ASSERT_EQ(-ENOTCONN, io(fd, after_init[i], junk));
	}
	w.fd = fd;
	w.ma = map(4096, PROT_READ | PROT_WRITE);
	w.fa = map(4096, PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, w.fa);
	in = good_init(&w);
	in.count = 0;
	ASSERT_EQ(-EINVAL, io(fd, FMPL_IOC_INIT, &in));
	in = good_init(&w);
	in.ma = (uintptr_t)unmapped(4096);
	ASSERT_EQ(-EFAULT, io(fd, FMPL_IOC_INIT, &in));
	in = good_init(&w);
	ASSERT_EQ(0, io(fd, FMPL_IOC_INIT, &in));
	ASSERT_EQ(-EBUSY, io(fd, FMPL_IOC_INIT, &in));
	/* Garbage after INIT: every request with 0xff in every input field. */
	for (i = 0; i < N(after_init); i++) {
		if (after_init[i] == FMPL_IOC_SENDBUF_CHECK)
			continue;	/* output only */
		memset(junk, 0xff, sizeof(junk));
		ASSERT_NE(0, io(fd, after_init[i], junk));
	}

	for (i = 0; i < 3; i++) {
		uint32_t mai = i == 1 ? FMPL_TAG_ANY : 2;
		size_t room = i == 2 ? 1000 : 64 * KB;
		size_t slot = mai == FMPL_TAG_ANY ? COUNT : mai;

		fill(out, 64 * KB, seed_of(0, 1, (int)i, 50));
		memset(inb, 0x5a, 64 * KB + 64);
		x = xfer(inb, room);
		x.mai = mai;
		x.flags = FMPL_XFER_NONBLOCK;
		ASSERT_EQ(0, io(fd, FMPL_IOC_RECV, &x));
		ASSERT_EQ(FMPL_STATUS_PENDING, x.status);
		f = &w.fa[slot];	/* [source 0][slot] */
		ASSERT_EQ(FMPL_FLAG_POSTED, __atomic_load_n(&f->state, __ATOMIC_ACQUIRE));
		/* Our matching area shows our own receive, as its sender. */
		ASSERT_EQ(FMPL_HDR_POSTED, w.ma[slot].state);
		ASSERT_EQ((uintptr_t)inb, w.ma[slot].buf);
		ASSERT_EQ(room, w.ma[slot].size);

		x = xfer(out, 64 * KB);
		x.mai = 2;
		ASSERT_EQ(0, io(fd, FMPL_IOC_SEND, &x));	/* truncation is the receiver's */
		ASSERT_EQ(FMPL_STATUS_DONE, x.status);
		ASSERT_EQ(FMPL_HDR_EMPTY, w.ma[slot].state);
		ASSERT_EQ(i == 2 ? FMPL_FLAG_ERROR : FMPL_FLAG_DONE,
			  __atomic_load_n(&f->state, __ATOMIC_ACQUIRE));
		ASSERT_EQ(i == 2 ? EMSGSIZE : 0, f->error);
		ASSERT_EQ(2, f->mai);
		ASSERT_EQ(i == 2 ? room : 64 * KB, f->size);
		ASSERT_EQ(-1, check(inb, i == 2 ? room : 64 * KB, seed_of(0, 1, (int)i, 50)));
		ASSERT_EQ(-1, check_byte(inb + room, 64, 0x5a));

		/* The kernel's view agrees; a second wait finds nothing. */
		wt = (struct fmpl_wait){ .mai = mai, .flags = FMPL_WAIT_RECV };
		ASSERT_EQ(i == 2 ? -EMSGSIZE : 0, io(fd, FMPL_IOC_WAIT, &wt));
		if (i != 2) {
			ASSERT_EQ(64 * KB, wt.out_size);
			ASSERT_EQ(2, wt.out_mai);
		}
		ASSERT_EQ(-ENOENT, io(fd, FMPL_IOC_WAIT, &wt));
	}
	close(fd);
}

#include "fmpl_main.h"

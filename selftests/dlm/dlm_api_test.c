// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/dlm uapi: the handshake, every DLM_IOC_SETUP field, ordering rules,
 * mmap argument checks and garbage ioctls.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "dlm_util.h"

static struct dlm_info get_info(struct __test_metadata *_metadata)
{
	struct dlm_info info;
	int fd = open(DLM_DEV, O_RDWR);

	ASSERT_LE(0, fd);
	memset(&info, 0xa5, sizeof(info));
	ASSERT_EQ(0, dlm_ioctl(fd, DLM_IOC_GET_INFO, &info));
	close(fd);
	return info;
}

TEST(info_before_handshake)
{
	struct dlm_info info = get_info(_metadata);
	unsigned int i;

	EXPECT_EQ(DLM_API_VERSION, info.api);
	EXPECT_EQ(getpagesize(), info.page_size_min);
	EXPECT_EQ(1 * MB, info.page_size_default);
	EXPECT_LE(info.page_size_default, info.page_size_max);
	EXPECT_EQ(0, info.page_size_max % info.page_size_min);
	EXPECT_LT(0, info.local_budget_max);
	EXPECT_LE(info.local_budget_max, info.total_size_max);
	EXPECT_TRUE(info.features & DLM_FEATURE_LOCAL);
	EXPECT_TRUE(info.features & DLM_FEATURE_STATS);
	EXPECT_TRUE(info.features & DLM_FEATURE_PROTO_INLINE);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, info.reserved[i]);
}

TEST(handshake)
{
	struct dlm_api api = { .api = DLM_API_VERSION,
			       .features = DLM_FEATURE_LOCAL | DLM_FEATURE_STATS };
	int fd = open(DLM_DEV, O_RDWR);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dlm_ioctl(fd, DLM_IOC_API, &api));
	EXPECT_EQ(DLM_API_VERSION, api.api);
	EXPECT_EQ(get_info(_metadata).features, api.features);
	EXPECT_EQ(0, api.reserved);
	/* The handshake is done once per file. */
	api.features = 0;
	EXPECT_EQ(-EBUSY, dlm_ioctl(fd, DLM_IOC_API, &api));
	close(fd);
}

/* Every feature the kernel offers can be asked for, alone or all at once. */
TEST(handshake_requests_each_feature)
{
	__u64 offered = get_info(_metadata).features;
	unsigned int bit, asked = 0;

	ASSERT_TRUE(offered & DLM_FEATURE_PROTO_INLINE);
	for (bit = 0; bit <= 64; bit++) {
		__u64 want = bit < 64 ? 1ULL << bit : offered;
		struct dlm_api api = { .api = DLM_API_VERSION,
				       .features = want };
		int fd;

		if (!(offered & want))
			continue;
		fd = open(DLM_DEV, O_RDWR);
		ASSERT_LE(0, fd);
		EXPECT_EQ(0, dlm_ioctl(fd, DLM_IOC_API, &api));
		EXPECT_EQ(offered, api.features);
		close(fd);
		asked++;
	}
	/* Each bit offered, plus the whole set. */
	EXPECT_EQ(__builtin_popcountll(offered) + 1, asked);
}

TEST(handshake_version_mismatch)
{
	static const __u32 bad[] = { 0, DLM_API_VERSION + 1, 0xffffffff };
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dlm_api api = { .api = bad[i] };
		struct dlm_setup s = { .total_size = MB };
		int fd = open(DLM_DEV, O_RDWR);

		ASSERT_LE(0, fd);
		EXPECT_EQ(-EPROTONOSUPPORT, dlm_ioctl(fd, DLM_IOC_API, &api));
		/* The kernel says which version it speaks. */
		EXPECT_EQ(DLM_API_VERSION, api.api);
		/* A failed handshake leaves the file unusable... */
		EXPECT_EQ(-EPROTO, dlm_ioctl(fd, DLM_IOC_SETUP, &s));
		/* ...until a good one. */
		api.api = DLM_API_VERSION;
		api.features = 0;
		EXPECT_EQ(0, dlm_ioctl(fd, DLM_IOC_API, &api));
		close(fd);
	}
}

TEST(handshake_bad_fields)
{
	struct dlm_api api = { .api = DLM_API_VERSION, .reserved = 1 };
	int fd = open(DLM_DEV, O_RDWR);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, dlm_ioctl(fd, DLM_IOC_API, &api));

	api = (struct dlm_api){ .api = DLM_API_VERSION, .features = 1ULL << 63 };
	EXPECT_EQ(-EINVAL, dlm_ioctl(fd, DLM_IOC_API, &api));
	EXPECT_EQ(get_info(_metadata).features, api.features);

	api = (struct dlm_api){ .api = DLM_API_VERSION, .features = ~0ULL };
	EXPECT_EQ(-EINVAL, dlm_ioctl(fd, DLM_IOC_API, &api));

	/* Known but not offered by this kernel. */
	if (!(get_info(_metadata).features & DLM_FEATURE_REMOTE)) {
		api = (struct dlm_api){ .api = DLM_API_VERSION,
					.features = DLM_FEATURE_REMOTE };
		EXPECT_EQ(-EOPNOTSUPP, dlm_ioctl(fd, DLM_IOC_API, &api));
	}

	EXPECT_EQ(-EFAULT, dlm_ioctl(fd, DLM_IOC_API, NULL));
	EXPECT_EQ(-EFAULT, dlm_ioctl(fd, DLM_IOC_API, (void *)8));
	close(fd);
}

TEST(order_enforced)
{
	struct dlm_setup s = { .total_size = MB };
	struct dlm_stats st;
	int fd = open(DLM_DEV, O_RDWR);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EPROTO, dlm_ioctl(fd, DLM_IOC_SETUP, &s));
	EXPECT_EQ(-EPROTO, dlm_ioctl(fd, DLM_IOC_STATS, &st));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, MB, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, 0));
	EXPECT_EQ(EINVAL, errno);
	close(fd);

	fd = dlm_open_api();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EPROTO, dlm_ioctl(fd, DLM_IOC_STATS, &st));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, MB, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, 0));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, dlm_ioctl(fd, DLM_IOC_SETUP, &s));
	EXPECT_EQ(0, dlm_ioctl(fd, DLM_IOC_STATS, &st));
	/* One space per file. */
	s = (struct dlm_setup){ .total_size = MB };
	EXPECT_EQ(-EBUSY, dlm_ioctl(fd, DLM_IOC_SETUP, &s));
	close(fd);
}

/* SETUP with @s on a fresh, handshaken file; returns 0 or -errno. */
static int try_setup(struct dlm_setup *s)
{
	int fd = dlm_open_api();
	int ret;

	if (fd < 0)
		return fd;
	ret = dlm_ioctl(fd, DLM_IOC_SETUP, s);
	close(fd);
	return ret;
}

#define GOOD_SETUP ((struct dlm_setup){ .page_size = 64 * KB, \
					.total_size = 4 * MB, \
					.local_budget = 1 * MB })

TEST(setup_defaults)
{
	struct dlm_info info = get_info(_metadata);
	struct dlm_setup s = { .total_size = 8 * MB };

	ASSERT_EQ(0, try_setup(&s));
	EXPECT_EQ(info.page_size_default, s.page_size);
	EXPECT_EQ(8 * MB < info.local_budget_max ? 8 * MB :
		  info.local_budget_max - info.local_budget_max % s.page_size,
		  s.local_budget);
	EXPECT_NE(0, s.mmap_offset);
	EXPECT_EQ(0, s.mmap_offset % getpagesize());

	s = GOOD_SETUP;
	ASSERT_EQ(0, try_setup(&s));
	EXPECT_EQ(64 * KB, s.page_size);
	EXPECT_EQ(1 * MB, s.local_budget);
}

TEST(setup_rejects_each_bad_field)
{
	struct dlm_info info = get_info(_metadata);
	struct dlm_setup s;
	unsigned int i;

	s = GOOD_SETUP; s.flags = 1;
	EXPECT_EQ(-EINVAL, try_setup(&s));
	s = GOOD_SETUP; s.flags = 0x80000000;
	EXPECT_EQ(-EINVAL, try_setup(&s));
	for (i = 0; i < 2; i++) {
		s = GOOD_SETUP; s.reserved[i] = 1ULL << (i * 20);
		EXPECT_EQ(-EINVAL, try_setup(&s));
	}
	/* No eviction policy or protocol for a space that never evicts. */
	s = GOOD_SETUP; s.policy = DLM_POLICY_ARR;
	EXPECT_EQ(-EINVAL, try_setup(&s));
	s = GOOD_SETUP; s.protocol = DLM_PROTO_SERIAL;
	EXPECT_EQ(-EINVAL, try_setup(&s));
	s = GOOD_SETUP; s.mmap_offset = 4096;
	EXPECT_EQ(-EINVAL, try_setup(&s));

	s = GOOD_SETUP; s.backing = 2;
	EXPECT_EQ(-EINVAL, try_setup(&s));
	s = GOOD_SETUP; s.backing = 0xffffffff;
	EXPECT_EQ(-EINVAL, try_setup(&s));
	if (!(info.features & DLM_FEATURE_REMOTE)) {
		s = GOOD_SETUP; s.backing = DLM_BACKING_REMOTE;
		EXPECT_EQ(-EOPNOTSUPP, try_setup(&s));
	}
	s = GOOD_SETUP; s.backing = DLM_BACKING_REMOTE;
	s.policy = DLM_POLICY_CLOCK + 1;
	EXPECT_EQ(-EINVAL, try_setup(&s));
	s.policy = 0xffffffff;
	EXPECT_EQ(-EINVAL, try_setup(&s));
	s.policy = 0;
	s.protocol = DLM_PROTO_INLINE + 1;
	EXPECT_EQ(-EINVAL, try_setup(&s));

	s = GOOD_SETUP; s.page_size = info.page_size_min - 1;
	EXPECT_EQ(-EINVAL, try_setup(&s));
	s = GOOD_SETUP; s.page_size = info.page_size_min + 1;
	EXPECT_EQ(-EINVAL, try_setup(&s));
	s = GOOD_SETUP; s.page_size = info.page_size_max + info.page_size_min;
	s.total_size = s.page_size; s.local_budget = 0;
	EXPECT_EQ(-EINVAL, try_setup(&s));
	s = GOOD_SETUP; s.page_size = ~0ULL;
	EXPECT_EQ(-EINVAL, try_setup(&s));

	s = GOOD_SETUP; s.total_size = 0;
	EXPECT_EQ(-EINVAL, try_setup(&s));
	s = GOOD_SETUP; s.total_size = 4 * MB + 4 * KB;
	EXPECT_EQ(-EINVAL, try_setup(&s));
	s = GOOD_SETUP; s.total_size = info.total_size_max + 64 * KB;
	EXPECT_EQ(-EFBIG, try_setup(&s));
	s = GOOD_SETUP; s.total_size = ~0ULL - (~0ULL % (64 * KB));
	EXPECT_EQ(-EFBIG, try_setup(&s));

	s = GOOD_SETUP; s.local_budget = 1 * MB + 4 * KB;
	EXPECT_EQ(-EINVAL, try_setup(&s));
	s = GOOD_SETUP; s.total_size = info.total_size_max;
	s.local_budget = info.local_budget_max + 64 * KB;
	s.local_budget -= s.local_budget % (64 * KB);
	EXPECT_EQ(-ENOMEM, try_setup(&s));
}

TEST(setup_accepts_edges)
{
	struct dlm_info info = get_info(_metadata);
	struct dlm_setup s;

	/* Any multiple of the CPU page size, not only powers of two. */
	s = (struct dlm_setup){ .page_size = 3 * info.page_size_min,
				.total_size = 30 * info.page_size_min,
				.local_budget = 3 * info.page_size_min };
	EXPECT_EQ(0, try_setup(&s));
	s = (struct dlm_setup){ .page_size = info.page_size_max,
				.total_size = info.page_size_max };
	EXPECT_EQ(info.page_size_max <= info.local_budget_max ? 0 : -ENOMEM,
		  try_setup(&s));
	/* A space far larger than RAM is fine: only the budget is local. */
	s = (struct dlm_setup){ .total_size = info.total_size_max,
				.local_budget = 1 * MB };
	EXPECT_EQ(0, try_setup(&s));
}

/* Remote backing needs a registered dlmd; these tests run without one. */
TEST(setup_remote_needs_daemon)
{
	struct dlm_setup s = GOOD_SETUP;

	if (!(get_info(_metadata).features & DLM_FEATURE_REMOTE))
		SKIP(return, "kernel without DLM_FEATURE_REMOTE");
	s.backing = DLM_BACKING_REMOTE;
	EXPECT_EQ(-ENOTCONN, try_setup(&s));
	s.policy = DLM_POLICY_ARR;
	EXPECT_EQ(-ENOTCONN, try_setup(&s));
}

TEST(mmap_checks)
{
	struct dlm_setup s = GOOD_SETUP;
	int fd = dlm_open_api();
	char *p;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dlm_ioctl(fd, DLM_IOC_SETUP, &s));

	/* MAP_PRIVATE would turn DLM pages into private copies: refused. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, MB, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE, fd, s.mmap_offset));
	EXPECT_EQ(EINVAL, errno);
	/* Offsets outside the space's window. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, MB, PROT_READ, MAP_SHARED, fd, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, MB, PROT_READ, MAP_SHARED, fd,
				   s.mmap_offset - getpagesize()));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, MB, PROT_READ, MAP_SHARED, fd,
				   s.mmap_offset + s.total_size));
	EXPECT_EQ(EINVAL, errno);
	/* Longer than the space. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, s.total_size + getpagesize(),
				   PROT_READ, MAP_SHARED, fd, s.mmap_offset));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 2 * MB, PROT_READ, MAP_SHARED, fd,
				   s.mmap_offset + 3 * MB));
	EXPECT_EQ(EINVAL, errno);

	/* The tail of the space, exactly. */
	p = mmap(NULL, MB, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 s.mmap_offset + 3 * MB);
	ASSERT_NE(MAP_FAILED, p);
	p[MB - 1] = 1;
	EXPECT_EQ(0, munmap(p, MB));

	/* mremap() may move but not grow a mapping. */
	p = mmap(NULL, MB, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 s.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(MAP_FAILED, mremap(p, MB, 2 * MB, MREMAP_MAYMOVE));
	EXPECT_EQ(0, munmap(p, MB));
	close(fd);
}

TEST(read_only_open_cannot_map_writable)
{
	struct dlm_api api = { .api = DLM_API_VERSION };
	struct dlm_setup s = GOOD_SETUP;
	int fd = open(DLM_DEV, O_RDONLY);
	char *p;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dlm_ioctl(fd, DLM_IOC_API, &api));
	ASSERT_EQ(0, dlm_ioctl(fd, DLM_IOC_SETUP, &s));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, MB, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, s.mmap_offset));
	EXPECT_EQ(EACCES, errno);
	p = mmap(NULL, MB, PROT_READ, MAP_SHARED, fd, s.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, p[12345]);
	munmap(p, MB);
	close(fd);
}

TEST(garbage_ioctl_numbers)
{
	static const int dirs[] = { _IOC_NONE, _IOC_READ, _IOC_WRITE,
				    _IOC_READ | _IOC_WRITE };
	char buf[4096];
	unsigned int nr, d, sz;
	int fd = dlm_open_api();

	ASSERT_LE(0, fd);
	memset(buf, 0, sizeof(buf));
	for (d = 0; d < 4; d++)
		for (nr = 0; nr < 256; nr++)
			for (sz = 0; sz < 160; sz += 8) {
				unsigned long cmd = _IOC(dirs[d], DLM_IOC_MAGIC,
							 nr, sz);

				if (cmd == DLM_IOC_API || cmd == DLM_IOC_SETUP ||
				    cmd == DLM_IOC_STATS ||
				    cmd == DLM_IOC_GET_INFO ||
				    cmd == DLM_IOC_BLK_ADD ||
				    cmd == DLM_IOC_BLK_DEL)
					continue;	/* blk_garbage.py */
				ASSERT_EQ(-ENOTTY, dlm_ioctl(fd, cmd, buf))
					TH_LOG("cmd %#lx", cmd);
			}
	/* Other drivers' numbers and plain garbage. */
	EXPECT_EQ(-ENOTTY, dlm_ioctl(fd, 0, buf));
	EXPECT_EQ(-ENOTTY, dlm_ioctl(fd, 0xffffffff, buf));
	EXPECT_EQ(-ENOTTY, dlm_ioctl(fd, _IOWR('f', 1, long), buf));
	close(fd);
}

TEST(garbage_ioctl_arguments)
{
	static const int allowed[] = { 0, -EINVAL, -EFBIG, -ENOMEM,
				       -EOPNOTSUPP, -EBUSY, -ENOTCONN };
	unsigned int i, j, accepted = 0;
	struct dlm_setup s;
	struct dlm_stats st;

	srandom(12345);
	for (i = 0; i < 2000; i++) {
		int fd = dlm_open_api();
		int ret, ok = 0;

		ASSERT_LE(0, fd);
		for (j = 0; j < sizeof(s); j++)
			((unsigned char *)&s)[j] = random();
		/* Often make the fields plausible so deeper checks run. */
		if (i & 1) {
			s.flags = (i & 2) ? 0 : s.flags;
			s.backing = (i & 4) ? 0 : s.backing % 3;
			s.policy = (i & 32) ? 0 : s.policy % 4;
			s.protocol = (i & 64) ? 0 : s.protocol % 6;
			s.page_size = (s.page_size % 16 + 1) * 4 * KB;
			s.total_size = s.page_size * (s.total_size % 8 + 1);
			s.local_budget = s.page_size * (s.local_budget % 3);
			s.mmap_offset = (i & 8) ? 0 : s.mmap_offset;
			memset(s.reserved, 0, (i & 16) ? sizeof(s.reserved) : 0);
		}
		ret = dlm_ioctl(fd, DLM_IOC_SETUP, &s);
		for (j = 0; j < sizeof(allowed) / sizeof(allowed[0]); j++)
			ok |= ret == allowed[j];
		ASSERT_TRUE(ok) TH_LOG("iteration %u: ret %d", i, ret);
		if (!ret) {
			accepted++;
			ASSERT_EQ(0, dlm_ioctl(fd, DLM_IOC_STATS, &st));
			ASSERT_EQ(0, st.faults);
		}
		close(fd);
	}
	/* The generator must reach the success path, or it tests little. */
	EXPECT_LT(10, accepted);
}

TEST(bad_user_pointers)
{
	struct dlm_setup s = GOOD_SETUP;
	int fd = dlm_open_api();
	void *ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_LE(0, fd);
	ASSERT_NE(MAP_FAILED, ro);
	memcpy(ro, &s, sizeof(s));
	ASSERT_EQ(0, mprotect(ro, 4096, PROT_READ));
	EXPECT_EQ(-EFAULT, dlm_ioctl(fd, DLM_IOC_SETUP, NULL));
	EXPECT_EQ(-EFAULT, dlm_ioctl(fd, DLM_IOC_GET_INFO, ro));
	EXPECT_EQ(-EFAULT, dlm_ioctl(fd, DLM_IOC_GET_INFO, (void *)-4096L));
	/* A valid SETUP in read-only memory cannot have its result written. */
	EXPECT_EQ(-EFAULT, dlm_ioctl(fd, DLM_IOC_SETUP, ro));
	/* ...and a failed SETUP leaves the file free for a good one. */
	EXPECT_EQ(0, dlm_ioctl(fd, DLM_IOC_SETUP, &s));
	EXPECT_EQ(-EFAULT, dlm_ioctl(fd, DLM_IOC_STATS, ro));
	munmap(ro, 4096);
	close(fd);
}

#include "dlm_main.h"

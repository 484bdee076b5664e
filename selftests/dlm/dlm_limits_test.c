// SPDX-License-Identifier: GPL-2.0
/*
 * Per-user limits (module parameters max_user_spaces, max_user_mb,
 * max_user_local_mb) and isolation between users: a space is charged to
 * the effective uid that sets it up until its last mapping and file are
 * gone; exceeding a limit is EDQUOT; one user's spaces do not count
 * against another's; nobody can map another file's space or, without
 * CAP_SYS_ADMIN, the daemon's frame pool.  Needs root (it sets the
 * parameters and switches euid); the parameters are reset to 0 after each
 * test.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/types.h>

#include "kselftest_harness.h"
#include "dlm_util.h"

#define PARAMS		"/sys/module/dlmem/parameters/"
#define USER_A		65534	/* nobody */
#define USER_B		65533

static int set_param(const char *name, unsigned long v)
{
	char path[128], buf[32];
	int fd, n, ret = 0;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%lu", v);
	if (write(fd, buf, n) != n)
		ret = -errno;
	close(fd);
	return ret;
}

static void reset_params(void)
{
	set_param("max_user_spaces", 0);
	set_param("max_user_mb", 0);
	set_param("max_user_local_mb", 0);
}

/* Open and set up a local space of @mb as effective uid @uid: the fd, or
 * -errno of the setup. */
static int space_as(uid_t uid, unsigned int mb)
{
	struct dlm_setup s = {
		.backing = DLM_BACKING_LOCAL,
		.page_size = MB,
		.total_size = mb * MB,
		.local_budget = mb * MB,
	};
	int fd, err;

	if (seteuid(uid))
		return -errno;
	fd = dlm_open_api();
	if (fd >= 0) {
		err = dlm_ioctl(fd, DLM_IOC_SETUP, &s);
		if (err) {
			close(fd);
			fd = err;
		}
	}
	if (seteuid(0))
		return -EPERM;
	return fd;
}

FIXTURE(limits) {
	int fds[16];
	int n;
};

FIXTURE_SETUP(limits)
{
	if (geteuid() || access(PARAMS "max_user_spaces", W_OK))
		SKIP(return, "needs root and a dlmem.ko with per-user limits");
	reset_params();
	self->n = 0;
}

FIXTURE_TEARDOWN(limits)
{
	int i;

	for (i = 0; i < self->n; i++)
		if (self->fds[i] >= 0)
			close(self->fds[i]);
	reset_params();
}

static int keep(struct _test_data_limits *self, int fd)
{
	if (fd >= 0 && self->n < 16)
		self->fds[self->n++] = fd;
	return fd;
}

TEST_F(limits, spaces_limit_is_per_user)
{
	ASSERT_EQ(0, set_param("max_user_spaces", 2));
	ASSERT_LE(0, keep(self, space_as(USER_A, 2)));
	ASSERT_LE(0, keep(self, space_as(USER_A, 2)));
	ASSERT_EQ(-EDQUOT, space_as(USER_A, 2));
	/* Another user has a count of their own. */
	ASSERT_LE(0, keep(self, space_as(USER_B, 2)));
	ASSERT_LE(0, keep(self, space_as(USER_B, 2)));
	ASSERT_EQ(-EDQUOT, space_as(USER_B, 2));
	/* Closing one gives it back. */
	close(self->fds[0]);
	self->fds[0] = -1;
	ASSERT_LE(0, keep(self, space_as(USER_A, 2)));
	ASSERT_EQ(-EDQUOT, space_as(USER_A, 2));
}

TEST_F(limits, memory_limit_counts_total_size)
{
	ASSERT_EQ(0, set_param("max_user_mb", 16));
	ASSERT_LE(0, keep(self, space_as(USER_A, 8)));
	ASSERT_LE(0, keep(self, space_as(USER_A, 8)));
	ASSERT_EQ(-EDQUOT, space_as(USER_A, 1));
	ASSERT_EQ(-EDQUOT, space_as(USER_A, 17 - 16));
	close(self->fds[1]);
	self->fds[1] = -1;
	ASSERT_EQ(-EDQUOT, space_as(USER_A, 9));
	ASSERT_LE(0, keep(self, space_as(USER_A, 8)));
}

TEST_F(limits, local_limit_counts_local_budget)
{
	ASSERT_EQ(0, set_param("max_user_local_mb", 8));
	ASSERT_LE(0, keep(self, space_as(USER_A, 4)));
	ASSERT_LE(0, keep(self, space_as(USER_A, 4)));
	ASSERT_EQ(-EDQUOT, space_as(USER_A, 4));
	ASSERT_LE(0, keep(self, space_as(USER_B, 8)));
}

TEST_F(limits, root_is_limited_too_and_zero_means_none)
{
	int i;

	ASSERT_EQ(0, set_param("max_user_spaces", 1));
	ASSERT_LE(0, keep(self, space_as(0, 1)));
	ASSERT_EQ(-EDQUOT, space_as(0, 1));
	ASSERT_EQ(0, set_param("max_user_spaces", 0));
	for (i = 0; i < 12; i++)
		ASSERT_LE(0, keep(self, space_as(USER_A, 1)));
}

TEST_F(limits, refused_setup_charges_nothing)
{
	struct dlm_setup bad = {
		.backing = DLM_BACKING_LOCAL, .page_size = MB,
		.total_size = MB + 1, .local_budget = MB,
	};
	int fd;

	ASSERT_EQ(0, set_param("max_user_spaces", 1));
	fd = dlm_open_api();
	ASSERT_LE(0, fd);
	ASSERT_EQ(-EINVAL, dlm_ioctl(fd, DLM_IOC_SETUP, &bad));
	close(fd);
	ASSERT_LE(0, keep(self, space_as(0, 1)));
}

TEST_F(limits, a_mapping_keeps_the_charge_until_unmapped)
{
	struct dlm_setup s = {
		.backing = DLM_BACKING_LOCAL, .page_size = MB,
		.total_size = 4 * MB, .local_budget = 4 * MB,
	};
	char *p;
	int fd;

	ASSERT_EQ(0, set_param("max_user_spaces", 1));
	fd = dlm_open_api();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dlm_ioctl(fd, DLM_IOC_SETUP, &s));
	p = mmap(NULL, s.total_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 s.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	p[0] = 1;
	close(fd);
	/* The mapping still holds the space, so it is still charged. */
	ASSERT_EQ(-EDQUOT, space_as(0, 1));
	ASSERT_EQ(1, p[0]);
	ASSERT_EQ(0, munmap(p, s.total_size));
	ASSERT_LE(0, keep(self, space_as(0, 1)));
}

/* A file maps only its own space: not another file's, whatever the user. */
TEST(no_mapping_of_another_files_space)
{
	struct dlm_setup sa = {
		.backing = DLM_BACKING_LOCAL, .page_size = MB,
		.total_size = 4 * MB, .local_budget = 4 * MB,
	}, sc = sa;
	int fd_a, fd_b, fd_c;
	char *a;

	fd_a = dlm_open_api();
	ASSERT_LE(0, fd_a);
	ASSERT_EQ(0, dlm_ioctl(fd_a, DLM_IOC_SETUP, &sa));
	a = mmap(NULL, 4 * MB, PROT_READ | PROT_WRITE, MAP_SHARED, fd_a,
		 sa.mmap_offset);
	ASSERT_NE(MAP_FAILED, a);
	a[0] = 42;
	/* A file with no space of its own. */
	fd_b = dlm_open_api();
	ASSERT_LE(0, fd_b);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 4 * MB, PROT_READ, MAP_SHARED, fd_b,
				   sa.mmap_offset));
	ASSERT_EQ(EINVAL, errno);
	/* A file with a space of its own, at a's offset. */
	fd_c = dlm_open_api();
	ASSERT_LE(0, fd_c);
	ASSERT_EQ(0, dlm_ioctl(fd_c, DLM_IOC_SETUP, &sc));
	ASSERT_NE(sa.mmap_offset, sc.mmap_offset);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 4 * MB, PROT_READ, MAP_SHARED, fd_c,
				   sa.mmap_offset));
	ASSERT_EQ(EINVAL, errno);
	close(fd_b);
	close(fd_c);
	ASSERT_EQ(42, a[0]);
	munmap(a, 4 * MB);
	close(fd_a);
}

/* Window 0 is the daemon's frame pool: never for a user without
 * CAP_SYS_ADMIN, daemon or not. */
TEST(frame_pool_needs_cap_sys_admin)
{
	void *p;
	int fd;

	if (geteuid())
		SKIP(return, "needs root to drop to another user");
	ASSERT_EQ(0, seteuid(USER_A));
	fd = open(DLM_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	p = mmap(NULL, 1 * MB, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_EQ(MAP_FAILED, p);
	ASSERT_EQ(EPERM, errno);
	close(fd);
	ASSERT_EQ(0, seteuid(0));
}

#include "dlm_main.h"

// SPDX-License-Identifier: GPL-2.0
/*
 * fmpl_init_test - libfmpl without /dev/fmpl (through libfmpl.a): every
 * call before fmpl_init fails with FMPL_ERR_INIT; fmpl_init without a
 * launcher's environment fails with FMPL_ERR_INIT, and without the device
 * (FMPL_DEV pointing nowhere, or /dev/fmpl when it is absent) or with a
 * file that is not /dev/fmpl with FMPL_ERR_NODEV, each with a message on
 * stderr that names the fix; argument checks of fmpl_init; area sizes;
 * fmpl_coll_mode; fmpl_wtime.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include <fmpl.h>

static char err_text[4096];

/* fmpl_init(ma, fa, count) with stderr captured into err_text. */
static int init_captured(void *ma, void *fa, int count, int *ier)
{
	char path[] = "/tmp/fmpl-init-test-XXXXXX";
	int fd = mkstemp(path), saved = dup(2), ret, err;
	ssize_t n;

	fflush(stderr);
	dup2(fd, 2);
	ret = fmpl_init(ma, fa, count, ier);
	err = errno;
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, err_text, sizeof(err_text) - 1, 0);
	err_text[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
	errno = err;
	return ret;
}

#define HAS(s) do {							\
	if (!strstr(err_text, s))					\
		TH_LOG("stderr \"%s\" lacks \"%s\"", err_text, s);	\
	ASSERT_NE(NULL, strstr(err_text, s));				\
} while (0)

static void launcher_env(void)
{
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("PMI_RANK");
	setenv("FMPL_RANK", "0", 1);
	setenv("FMPL_SIZE", "2", 1);
	setenv("FMPL_KEY", "0x77", 1);
	unsetenv("FMPL_DEV");
}

TEST(calls_before_init_fail)
{
	char b[8];
	int ier = -1, x = 5, comm;

	ASSERT_EQ(FMPL_ERR_INIT, fmpl_send(b, 8, 0, 0, FMPL_COMM_WORLD, &ier));
	ASSERT_EQ(FMPL_ERR_INIT, ier);
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_recv(b, 8, 0, 0, FMPL_COMM_WORLD, NULL));
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_isend(b, 8, 0, 0, FMPL_COMM_WORLD, NULL));
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_irecv(b, 8, 0, 0, FMPL_COMM_WORLD, NULL));
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_isend_wait(0, 0, FMPL_COMM_WORLD, NULL));
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_irecv_wait(0, 0, FMPL_COMM_WORLD, NULL));
	ASSERT_EQ(-1, fmpl_irecv_test(0, 0, FMPL_COMM_WORLD));
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_send_any(b, 8, 0, 0, FMPL_COMM_WORLD, NULL));
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_recv_any(b, 8, 0, FMPL_COMM_WORLD, NULL));
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_sendbuf_set(NULL, 0, 0, NULL));
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_sendbuf_check(NULL, NULL, NULL));
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_barrier(FMPL_COMM_WORLD, NULL));
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_bcast(b, 8, 0, FMPL_COMM_WORLD, NULL));
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_reduce(&x, 1, &fmpl_isum, 0, FMPL_COMM_WORLD, b, NULL));
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_allreduce(&x, 1, &fmpl_isum, FMPL_COMM_WORLD, b, NULL));
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_comm_create(&comm, 0, NULL));
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_comm_rank(FMPL_COMM_WORLD, &x, NULL));
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_comm_size(FMPL_COMM_WORLD, &x, NULL));
	ASSERT_EQ(FMPL_ERR_INIT, fmpl_finalize(&ier));
	ASSERT_EQ(FMPL_ERR_INIT, ier);
	ASSERT_EQ(5, x);
}

TEST(no_launcher_environment)
{
	int ier = -1;

	unsetenv("FMPL_RANK");
	unsetenv("FMPL_SIZE");
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("OMPI_COMM_WORLD_SIZE");
	unsetenv("PMI_RANK");
	unsetenv("PMI_SIZE");
	ASSERT_EQ(FMPL_ERR_INIT, init_captured(NULL, NULL, 4, &ier));
	ASSERT_EQ(FMPL_ERR_INIT, ier);
	HAS("libfmpl: ");
	HAS("fmplrun -np N");
	HAS("mpirun");
}

TEST(no_device_is_nodev_with_the_fix)
{
	int ier = -1;

	launcher_env();
	setenv("FMPL_DEV", "/nonexistent/fmpl", 1);
	ASSERT_EQ(FMPL_ERR_NODEV, init_captured(NULL, NULL, 4, &ier));
	ASSERT_EQ(FMPL_ERR_NODEV, ier);
	ASSERT_EQ(ENOENT, errno);
	HAS("cannot open /nonexistent/fmpl");
	HAS("CONFIG_DLMEM_FMPL");
	HAS("modprobe dlmem");
	/* Nothing stuck: the same failure again, not "initialised twice". */
	ASSERT_EQ(FMPL_ERR_NODEV, init_captured(NULL, NULL, 4, &ier));
	ASSERT_NE(NULL, strstr(fmpl_strerror(ier), "dlmem"));
}

TEST(default_device_absent)
{
	int ier = -1;

	if (!access("/dev/fmpl", F_OK))
		SKIP(return, "/dev/fmpl exists here");
	launcher_env();
	ASSERT_EQ(FMPL_ERR_NODEV, init_captured(NULL, NULL, 1, &ier));
	HAS("cannot open /dev/fmpl");
	HAS("modprobe dlmem");
}

TEST(not_an_fmpl_device)
{
	int ier = -1;

	launcher_env();
	setenv("FMPL_DEV", "/dev/null", 1);
	ASSERT_EQ(FMPL_ERR_NODEV, init_captured(NULL, NULL, 4, &ier));
	HAS("/dev/null");
	HAS("not /dev/fmpl");
}

TEST(init_arguments)
{
	static long ma[64], fa[64];
	int ier = -1;

	launcher_env();
	setenv("FMPL_DEV", "/nonexistent/fmpl", 1);
	ASSERT_EQ(FMPL_ERR_ARG, init_captured(NULL, NULL, 0, &ier));
	HAS("count 0");
	ASSERT_EQ(FMPL_ERR_ARG, init_captured(NULL, NULL, -3, &ier));
	ASSERT_EQ(FMPL_ERR_ARG, init_captured(ma, NULL, 1, &ier));
	HAS("both areas or neither");
	ASSERT_EQ(FMPL_ERR_ARG, init_captured(NULL, fa, 1, &ier));
	ASSERT_EQ(FMPL_ERR_ARG, init_captured((char *)ma + 4, fa, 1, &ier));
	HAS("8-byte aligned");
	/* Good arguments get as far as the device. */
	ASSERT_EQ(FMPL_ERR_NODEV, init_captured(ma, fa, 1, &ier));
}

TEST(area_sizes_include_the_reserved_indices)
{
	ASSERT_EQ(4, FMPL_LIB_RESERVED_MAI);
	ASSERT_EQ(32, sizeof(struct fmpl_header));
	ASSERT_EQ(32, sizeof(struct fmpl_flag));
	ASSERT_EQ(2 * (3 + 4 + 1) * sizeof(struct fmpl_header), fmpl_ma_bytes(2, 3));
	ASSERT_EQ(64 * (600 + 4 + 1) * sizeof(struct fmpl_flag), fmpl_fa_bytes(64, 600));
	ASSERT_EQ(0, fmpl_ma_bytes(0, 3));
	ASSERT_EQ(0, fmpl_fa_bytes(2, 0));
}

TEST(coll_mode)
{
	ASSERT_EQ(FMPL_COLL_AUTO, fmpl_coll_mode(FMPL_COLL_TREE));
	ASSERT_EQ(FMPL_COLL_TREE, fmpl_coll_mode(FMPL_COLL_NATIVE));
	ASSERT_EQ(-1, fmpl_coll_mode(7));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, fmpl_coll_mode(-1));
	ASSERT_EQ(FMPL_COLL_NATIVE, fmpl_coll_mode(FMPL_COLL_AUTO));
}

TEST(wtime_is_monotonic_seconds)
{
	struct timespec ms20 = { 0, 20000000 };
	double t0 = fmpl_wtime(), t1;

	nanosleep(&ms20, NULL);
	t1 = fmpl_wtime();
	ASSERT_GT(t0, 0);
	ASSERT_GE(t1 - t0, 0.019);
	ASSERT_LT(t1 - t0, 2.0);
}

TEST_HARNESS_MAIN

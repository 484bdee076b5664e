// SPDX-License-Identifier: GPL-2.0
/*
 * awgstar_nodev_test - libawgstar without a board (through libawgstar.a):
 * awg_open fails with ENOENT for a missing device ($AWG_DEVICE, the
 * argument, /dev/awgstar when it is absent) and with EPROTONOSUPPORT for
 * a file that does not speak AWG_IOC_API (/dev/null, a regular file),
 * leaving *handle NULL and no file descriptor behind; every call checks
 * its handle and arguments (EINVAL).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include <awgstar.h>

/* The lowest free file descriptor (to see that none leaked). */
static int next_fd(void)
{
	int fd = open("/dev/null", O_RDONLY);

	close(fd);
	return fd;
}

TEST(open_missing_device)
{
	struct awg_handle *h = (struct awg_handle *)1;
	int fd0 = next_fd();

	errno = 0;
	ASSERT_EQ(-1, awg_open("/nonexistent/awgstar", &h));
	ASSERT_EQ(ENOENT, errno);
	ASSERT_EQ(NULL, h);

	setenv("AWG_DEVICE", "/nonexistent/awgstar7", 1);
	h = (struct awg_handle *)1;
	ASSERT_EQ(-1, awg_open(NULL, &h));
	ASSERT_EQ(ENOENT, errno);
	ASSERT_EQ(NULL, h);
	/* The argument wins over the environment. */
	ASSERT_EQ(-1, awg_open("/dev/null", &h));
	ASSERT_EQ(EPROTONOSUPPORT, errno);
	unsetenv("AWG_DEVICE");

	if (access("/dev/awgstar", F_OK) != 0) {
		ASSERT_EQ(-1, awg_open(NULL, &h));
		ASSERT_EQ(ENOENT, errno);
	}
	ASSERT_EQ(fd0, next_fd());
}

TEST(open_not_a_board)
{
	char path[] = "/tmp/awgstar-nodev-XXXXXX";
	struct awg_handle *h = (struct awg_handle *)1;
	int fd0 = next_fd(), fd = mkstemp(path);

	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(-1, awg_open("/dev/null", &h));
	ASSERT_EQ(EPROTONOSUPPORT, errno);
	ASSERT_EQ(NULL, h);
	ASSERT_EQ(-1, awg_open(path, &h));
	ASSERT_EQ(EPROTONOSUPPORT, errno);
	unlink(path);
	ASSERT_EQ(-1, awg_open("/dev/null", NULL));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(fd0, next_fd());
}

TEST(null_handle)
{
	struct awg_handle *h = NULL;
	struct awg_stats st;
	struct awg_info info;
	struct awg_config cfg = { 0 };
	uint64_t u64;
	uint32_t u32;
	uint16_t u16;
	uint8_t u8, buf[8];
	size_t sz;

#define EINVAL_(call) do { errno = 0; ASSERT_EQ(-1, call); ASSERT_EQ(EINVAL, errno); } while (0)
	EINVAL_(awg_close(NULL));
	EINVAL_(awg_close(&h));
	EINVAL_(awg_node_id(h, &u32));
	EINVAL_(awg_nodes(h, &u32));
	EINVAL_(awg_size(h, &u64));
	errno = 0;
	ASSERT_EQ(NULL, awg_map(h));
	ASSERT_EQ(EINVAL, errno);
	EINVAL_(awg_read(h, 0, buf, 8));
	EINVAL_(awg_write(h, 0, buf, 8));
	EINVAL_(awg_peek8(h, 0, &u8));
	EINVAL_(awg_peek16(h, 0, &u16));
	EINVAL_(awg_peek32(h, 0, &u32));
	EINVAL_(awg_peek64(h, 0, &u64));
	EINVAL_(awg_poke8(h, 0, 1));
	EINVAL_(awg_poke16(h, 0, 1));
	EINVAL_(awg_poke32(h, 0, 1));
	EINVAL_(awg_poke64(h, 0, 1));
	EINVAL_(awg_set_dma_threshold(h, 64));
	EINVAL_(awg_get_dma_threshold(h, &sz));
	EINVAL_(awg_flush(h));
	EINVAL_(awg_send_event(h, AWG_NODE_ALL, 0, 0));
	EINVAL_(awg_wait_event(h, 0, NULL, NULL, 0));
	EINVAL_(awg_barrier(h));
	EINVAL_(awg_get_stats(h, &st));
	EINVAL_(awg_get_info(h, &info));
	EINVAL_(awg_set_config(h, &cfg));
#undef EINVAL_
}

TEST_HARNESS_MAIN

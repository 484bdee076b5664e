/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the /dev/dlm selftests.
 */
#ifndef DLM_SELFTEST_UTIL_H
#define DLM_SELFTEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dlmem.h>

#define DLM_DEV		"/dev/dlm"
#define KB		1024ULL
#define MB		(1024ULL * KB)

/* ioctl() as 0 or -errno, so ASSERT_EQ(-EINVAL, ...) reads naturally. */
static inline int dlm_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/*
 * Option -x NAME: the protocol's DLM_PROTO_* in *@protocol, or -1 after
 * saying which names there are.
 */
static inline int dlm_proto_opt(const char *name, unsigned int *protocol)
{
	static const char *const names[] = {
		[DLM_PROTO_SERIAL] = "serial", [DLM_PROTO_CROSS] = "cross",
		[DLM_PROTO_ASYNC] = "async", [DLM_PROTO_INLINE] = "inline",
	};
	unsigned int i;

	for (i = DLM_PROTO_SERIAL; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(name, names[i])) {
			*protocol = i;
			return 0;
		}
	}
	fprintf(stderr, "-x %s: serial, cross, async or inline\n", name);
	return -1;
}

static inline int dlm_open_api(void)
{
	struct dlm_api api = { .api = DLM_API_VERSION };
	int fd = open(DLM_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (dlm_ioctl(fd, DLM_IOC_API, &api)) {
		int err = -errno;

		close(fd);
		return err ? err : -EIO;
	}
	return fd;
}

/*
 * Open, handshake, set up a local-backed space and map it whole.
 * Returns the mapping or MAP_FAILED with errno set; *fdp gets the file.
 */
static inline void *dlm_map(int *fdp, uint64_t page_size, uint64_t total,
			    uint64_t budget)
{
	struct dlm_setup s = {
		.backing = DLM_BACKING_LOCAL,
		.page_size = page_size,
		.total_size = total,
		.local_budget = budget,
	};
	void *p;
	int fd, err;

	fd = dlm_open_api();
	if (fd < 0) {
		errno = -fd;
		return MAP_FAILED;
	}
	err = dlm_ioctl(fd, DLM_IOC_SETUP, &s);
	if (err) {
		close(fd);
		errno = -err;
		return MAP_FAILED;
	}
	p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 s.mmap_offset);
	if (p == MAP_FAILED) {
		err = errno;
		close(fd);
		errno = err;
		return MAP_FAILED;
	}
	*fdp = fd;
	return p;
}

static inline struct dlm_stats dlm_get_stats(int fd)
{
	struct dlm_stats st;

	memset(&st, 0xff, sizeof(st));
	if (dlm_ioctl(fd, DLM_IOC_STATS, &st))
		memset(&st, 0xff, sizeof(st));
	return st;
}

/* A word that depends on where it is and on a seed: detects misplaced data. */
static inline uint64_t dlm_pattern(uint64_t off, uint64_t seed)
{
	uint64_t x = off * 0x9E3779B97F4A7C15ULL ^ seed;

	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ULL;
	return x ^ (x >> 29);
}

#endif /* DLM_SELFTEST_UTIL_H */

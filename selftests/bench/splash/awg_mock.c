// SPDX-License-Identifier: GPL-2.0
/*
 * awg_mock.c - the part of libawgstar's API the SPLASH-2-style kernels
 * use, over a shared file instead of /dev/awgstar, to check the kernels'
 * parallel logic natively (several processes, no module, no ring):
 * native_test.sh links the *_awg programs with it.  Not a model of the
 * board: writes land at once, the barrier is a counter in the file.
 *
 * The "device" is the path of the shared file (created, AWG_MOCK_SIZE_MB
 * of region, default 64, after a 4 KB header); AWG_MOCK_NODE and
 * AWG_MOCK_NODES (default 0 and 1) give each process its place.  stats:
 * writes (pokes and awg_write calls) and frames (1 KiB pieces) only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <awgstar.h>

#define MOCK_HDR	4096

struct mock_hdr {
	unsigned int count, gen;
};

struct awg_handle {
	int fd;
	uint8_t *base, *map;
	uint64_t size;
	uint32_t node, nodes;
	struct awg_stats st;
};

static unsigned int env_num(const char *name, unsigned int def)
{
	const char *s = getenv(name);

	return s && *s ? (unsigned int)strtoul(s, NULL, 0) : def;
}

int awg_open(const char *device, struct awg_handle **handle)
{
	struct awg_handle *h = calloc(1, sizeof(*h));

	if (!h)
		return -1;
	h->size = (uint64_t)env_num("AWG_MOCK_SIZE_MB", 64) << 20;
	h->node = env_num("AWG_MOCK_NODE", 0);
	h->nodes = env_num("AWG_MOCK_NODES", 1);
	h->fd = open(device ? device : getenv("AWG_DEVICE"), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (h->fd < 0 || ftruncate(h->fd, MOCK_HDR + h->size) < 0) {
		free(h);
		return -1;
	}
	h->base = mmap(NULL, MOCK_HDR + h->size, PROT_READ | PROT_WRITE, MAP_SHARED, h->fd, 0);
	if (h->base == MAP_FAILED) {
		close(h->fd);
		free(h);
		return -1;
	}
	h->map = h->base + MOCK_HDR;
	*handle = h;
	return 0;
}

int awg_close(struct awg_handle **handle)
{
	struct awg_handle *h = *handle;

	munmap(h->base, MOCK_HDR + h->size);
	close(h->fd);
	free(h);
	*handle = NULL;
	return 0;
}

void *awg_map(struct awg_handle *h)
{
	return h->map;
}

int awg_get_info(struct awg_handle *h, struct awg_info *info)
{
	memset(info, 0, sizeof(*info));
	info->api = AWG_API_VERSION;
	info->node_id = h->node;
	info->size = h->size;
	info->nodes = h->nodes;
	info->live_mask = h->nodes >= 32 ? ~0U : (1U << h->nodes) - 1;
	info->mode = AWG_MODE_FAST;
	return 0;
}

int awg_set_config(struct awg_handle *h, const struct awg_config *config)
{
	(void)h;
	(void)config;
	return 0;
}

int awg_get_stats(struct awg_handle *h, struct awg_stats *stats)
{
	*stats = h->st;
	return 0;
}

int awg_write(struct awg_handle *h, uint64_t offset, const void *buf, size_t len)
{
	if (offset > h->size || len > h->size - offset) {
		errno = EINVAL;
		return -1;
	}
	memcpy(h->map + offset, buf, len);
	__sync_synchronize();
	h->st.writes++;
	h->st.frames_sent += (len + AWG_FRAME_DATA_MAX - 1) / AWG_FRAME_DATA_MAX;
	return 0;
}

int awg_poke32(struct awg_handle *h, uint64_t offset, uint32_t value)
{
	return awg_write(h, offset, &value, sizeof(value));
}

int awg_poke64(struct awg_handle *h, uint64_t offset, uint64_t value)
{
	return awg_write(h, offset, &value, sizeof(value));
}

int awg_barrier(struct awg_handle *h)
{
	struct mock_hdr *m = (struct mock_hdr *)h->base;
	unsigned int gen = __atomic_load_n(&m->gen, __ATOMIC_ACQUIRE);
	time_t end = time(NULL) + 60;

	if (__atomic_add_fetch(&m->count, 1, __ATOMIC_ACQ_REL) == h->nodes) {
		__atomic_store_n(&m->count, 0, __ATOMIC_RELAXED);
		__atomic_add_fetch(&m->gen, 1, __ATOMIC_RELEASE);
		return 0;
	}
	while (__atomic_load_n(&m->gen, __ATOMIC_ACQUIRE) == gen) {
		if (time(NULL) > end) {
			errno = ETIMEDOUT;
			return -1;
		}
		sched_yield();
	}
	return 0;
}

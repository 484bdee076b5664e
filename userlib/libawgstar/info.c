// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * info.c - what the board is: node id, live nodes, size, mapping,
 * counters and its configuration.
 */
#include <errno.h>

#include "internal.h"

AWGLIB_PUBLIC int awg_node_id(struct awg_handle *h, uint32_t *node_id)
{
	struct awg_info info;

	if (!node_id) {
		errno = EINVAL;
		return -1;
	}
	if (awglib_info(h, &info) < 0)
		return -1;
	*node_id = info.node_id;
	return 0;
}

AWGLIB_PUBLIC int awg_nodes(struct awg_handle *h, uint32_t *nodes)
{
	struct awg_info info;

	if (!nodes) {
		errno = EINVAL;
		return -1;
	}
	if (awglib_info(h, &info) < 0)
		return -1;
	*nodes = (uint32_t)__builtin_popcount(info.live_mask);
	return 0;
}

AWGLIB_PUBLIC int awg_size(struct awg_handle *h, uint64_t *size)
{
	if (!h || !size) {
		errno = EINVAL;
		return -1;
	}
	*size = h->size;
	return 0;
}

AWGLIB_PUBLIC void *awg_map(struct awg_handle *h)
{
	if (!h) {
		errno = EINVAL;
		return NULL;
	}
	return h->map;
}

AWGLIB_PUBLIC int awg_get_info(struct awg_handle *h, struct awg_info *info)
{
	return awglib_info(h, info);
}

AWGLIB_PUBLIC int awg_get_stats(struct awg_handle *h, struct awg_stats *stats)
{
	if (!h || !stats) {
		errno = EINVAL;
		return -1;
	}
	return awglib_ioctl(h, AWG_IOC_GET_STATS, stats);
}

AWGLIB_PUBLIC int awg_set_config(struct awg_handle *h,
				 const struct awg_config *config)
{
	struct awg_config c;

	if (!h || !config) {
		errno = EINVAL;
		return -1;
	}
	c = *config;	/* the ioctl's argument is not const */
	return awglib_ioctl(h, AWG_IOC_SET_CONFIG, &c);
}

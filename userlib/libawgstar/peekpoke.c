// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * peekpoke.c - awg_peek8..64, a load from the local replica through the
 * mapping (one access when the offset is aligned), and awg_poke8..64, one
 * board write each: AWG_IOC_WRITE of the value, one frame, returning when
 * it is on the token.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#define AWGLIB_PEEK(bits)							\
AWGLIB_PUBLIC int awg_peek##bits(struct awg_handle *h, uint64_t offset,	\
				 uint##bits##_t *value)			\
{									\
	const uint##bits##_t *p;					\
									\
	if (awglib_range(h, offset, sizeof(*value)) < 0)		\
		return -1;						\
	if (!value) {							\
		errno = EINVAL;						\
		return -1;						\
	}								\
	p = (const uint##bits##_t *)((const char *)h->map + offset);	\
	if (offset % sizeof(*value) == 0)				\
		*value = __atomic_load_n(p, __ATOMIC_RELAXED);		\
	else								\
		memcpy(value, p, sizeof(*value));			\
	return 0;							\
}

#define AWGLIB_POKE(bits)							\
AWGLIB_PUBLIC int awg_poke##bits(struct awg_handle *h, uint64_t offset,	\
				 uint##bits##_t value)			\
{									\
	struct awg_xfer x;						\
									\
	if (awglib_range(h, offset, sizeof(value)) < 0)			\
		return -1;						\
	memset(&x, 0, sizeof(x));					\
	x.offset = offset;						\
	x.buf = (uintptr_t)&value;					\
	x.len = sizeof(value);						\
	return awglib_ioctl(h, AWG_IOC_WRITE, &x);			\
}

AWGLIB_PEEK(8)
AWGLIB_PEEK(16)
AWGLIB_PEEK(32)
AWGLIB_PEEK(64)
AWGLIB_POKE(8)
AWGLIB_POKE(16)
AWGLIB_POKE(32)
AWGLIB_POKE(64)

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dispatch.h - dlmd's request engine: validates each request of the
 * kernel, places pages on memory servers and drives the transfers.
 *
 * It knows nothing of netlink: requests come in as struct dlm_request
 * and leave through the complete() callback, so it can be tested with an
 * ordinary buffer standing in for the frame pool.
 */
#ifndef DLM_DISPATCH_H
#define DLM_DISPATCH_H

#include <stdint.h>
#include <stdio.h>

#include "stats.h"
#include "transport.h"

/* A DLM_NL_CMD_REQUEST, decoded.  HAVE has bit (1 << DLM_NL_A_x) set for
 * each attribute present. */
struct dlm_request {
	uint32_t have;
	uint32_t op;
	uint64_t req_id;
	uint32_t space;
	uint32_t len;
	uint64_t dpn;
	uint64_t pool_off;
	uint64_t page_size;
	uint64_t total_size;
	uint64_t budget;
};
#define REQ_HAS(r, attr)	(((r)->have >> (attr)) & 1u)

/* Largest DLM page dlmd moves in one transfer. */
#define DISPATCH_PAGE_MAX	(256ULL << 20)

/* Called once per answerable request, from any thread; FLAGS DLM_NL_F_*. */
typedef void (*complete_fn)(void *ctx, uint64_t req_id, int32_t status,
			    uint32_t flags);

struct dispatch_cfg {
	uint8_t *pool;			/* the frame pool (or dispatch_set_pool) */
	uint64_t pool_size;
	uint32_t cpu_page_size;		/* POOL_OFF alignment */
	const struct transport_ops *tops;
	complete_fn complete;
	void *ctx;
	int no_keep;			/* never keep a fetched page's copy */
	struct stats *st;
};

struct dispatch;

/*
 * NSERVERS memory servers in rank order, named NAMES[i] in logs (copied:
 * the caller may free NAMES then), with CAPACITY[i] bytes each as
 * configured.  Then, for each server, either
 * dispatch_attach() a connection or dispatch_server_dead(); then
 * dispatch_start().
 */
struct dispatch *dispatch_create(const struct dispatch_cfg *cfg,
				 unsigned int nservers,
				 const char *const *names,
				 const uint64_t *capacity);
/* Server I answers on C and said it holds SIZE bytes. */
void dispatch_attach(struct dispatch *d, unsigned int i, struct tconn *c,
		     uint64_t size);
/* Server I is dead (a tconn_dead_fn): logged once, its pages fail. */
void dispatch_server_dead(void *d, unsigned int i, const char *why);
/*
 * The frame pool, once mapped (before dispatch_start); handed to the
 * transport's set_pool for each connection (verbs registers it).  0, or
 * -errno with ERR saying what to do about it.
 */
int dispatch_set_pool(struct dispatch *d, uint8_t *pool, uint64_t size,
		      uint32_t cpu_page_size, char *err, size_t errlen);
int dispatch_start(struct dispatch *d);
/* Handle one request; its completion may come before this returns. */
void dispatch_request(struct dispatch *d, const struct dlm_request *r);
/* Servers and spaces as JSON object members (like stats_json). */
void dispatch_json(struct dispatch *d, FILE *f);
unsigned int dispatch_alive_servers(struct dispatch *d);
/* Close the connections (pending requests complete with -EIO), free. */
void dispatch_destroy(struct dispatch *d);

#endif /* DLM_DISPATCH_H */

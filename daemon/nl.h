/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nl.h - dlmd's side of the generic netlink channel of dlmem_nl.h.
 *
 * One libnl socket carries everything: the kernel sends REQUESTs to the
 * socket that registered and accepts COMPLETEs only from it.  One thread
 * receives (dlm_nl_run); any thread may send a completion
 * (dlm_nl_complete), sends being serialised by a mutex.
 */
#ifndef DLM_NL_H
#define DLM_NL_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch.h"
#include "stats.h"

struct dlm_nl;
struct nlmsghdr;

struct dlm_nl_reg {
	uint32_t version;
	uint64_t pool_size;		/* granted, bytes */
	uint32_t cpu_page_size;		/* 0 if the kernel did not say */
};

typedef void (*dlm_nl_request_fn)(void *ctx, const struct dlm_request *r);

/*
 * Open the socket and resolve family "dlm".  0; -ENOENT when the family
 * does not exist (module not loaded); other -errno with ERR set.
 */
int dlm_nl_open(struct dlm_nl **out, struct stats *st, char *err,
		size_t errlen);
/*
 * DLM_NL_CMD_REGISTER asking for POOL_WANT bytes; the reply in *REG.
 * 0, or -errno with ERR saying what to do (EPERM, EBUSY, ...).
 * REQUESTs that arrive meanwhile are kept for dlm_nl_run.
 */
int dlm_nl_register(struct dlm_nl *nl, uint64_t pool_want,
		    struct dlm_nl_reg *reg, char *err, size_t errlen);
/*
 * Receive REQUESTs and hand each to FN until STOP_FD is readable (0) or
 * the socket fails (-errno).
 */
int dlm_nl_run(struct dlm_nl *nl, dlm_nl_request_fn fn, void *ctx,
	       int stop_fd);
/* DLM_NL_CMD_COMPLETE {REQ_ID, STATUS}; thread-safe; 0 or -errno. */
int dlm_nl_complete(struct dlm_nl *nl, uint64_t req_id, int32_t status,
		    uint32_t flags);
/* DLM_NL_CMD_UNREGISTER, waiting (bounded) for the kernel's ack. */
int dlm_nl_unregister(struct dlm_nl *nl);
void dlm_nl_close(struct dlm_nl *nl);

/*
 * Decode a REQUEST message into R.  Returns 0, or the attribute number of
 * the first attribute with a wrong size (which is then left out of
 * R->have), or -1 when the message is not a generic netlink message.
 */
int dlm_nl_parse_request(struct nlmsghdr *nlh, struct dlm_request *r);
const char *dlm_nl_attr_name(int attr);

#endif /* DLM_NL_H */

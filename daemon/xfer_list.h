/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xfer_list.h - FIFO lists of struct dlm_xfer (through their next field),
 * for the transports' queues.  No locking: the caller holds its own.
 */
#ifndef DLM_XFER_LIST_H
#define DLM_XFER_LIST_H

#include <errno.h>
#include <stddef.h>

#include "transport.h"

static inline void xfer_list_append(struct dlm_xfer **head,
				    struct dlm_xfer **tail, struct dlm_xfer *x)
{
	x->next = NULL;
	if (*tail)
		(*tail)->next = x;
	else
		*head = x;
	*tail = x;
}

static inline struct dlm_xfer *xfer_list_pop(struct dlm_xfer **head,
					     struct dlm_xfer **tail)
{
	struct dlm_xfer *x = *head;

	if (x) {
		*head = x->next;
		if (!*head)
			*tail = NULL;
		x->next = NULL;
	}
	return x;
}

/* Complete every transfer of the list X with -EIO. */
static inline void xfer_fail_all(struct dlm_xfer *x)
{
	struct dlm_xfer *next;

	for (; x; x = next) {
		next = x->next;
		x->done(x, -EIO);
	}
}

#endif /* DLM_XFER_LIST_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * cpusched.c - the CPU scheduling policy of dlmd and dlm-memserver.
 *
 * The daemons move pages while the program they serve computes: read-ahead,
 * write-back, a memory server's replies.  Under SCHED_OTHER each wake-up of
 * one of their threads may preempt the program on its CPU (the wakee has
 * slept, so it is owed CPU time), and the program then waits in the run
 * queue even while another CPU goes idle.  Only SCHED_NORMAL wakees preempt
 * (kernel/sched/fair.c); SCHED_BATCH threads are placed the same way, on an
 * idle CPU when there is one, and otherwise wait for the next tick.  A
 * program waiting for a page sleeps, so the thread bringing it finds that
 * CPU free anyway.  Switching between SCHED_OTHER and SCHED_BATCH needs no
 * privilege.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "cpusched.h"
#include "log.h"

int dlm_sched_parse(const char *s)
{
	if (!strcmp(s, "batch"))
		return DLM_SCHED_BATCH;
	if (!strcmp(s, "normal"))
		return DLM_SCHED_NORMAL;
	return -1;
}

const char *dlm_sched_name(enum dlm_sched s)
{
	return s == DLM_SCHED_BATCH ? "batch" : "normal";
}

void dlm_sched_apply(enum dlm_sched s)
{
	struct sched_param sp = { .sched_priority = 0 };

	if (sched_setscheduler(0, s == DLM_SCHED_BATCH ? SCHED_BATCH :
			       SCHED_OTHER, &sp))
		log_warn("cannot set the CPU policy (--sched): running under the one inherited",
			 "sched=%s err=\"%s\"", dlm_sched_name(s),
			 strerror(errno));
}

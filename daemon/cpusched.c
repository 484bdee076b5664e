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
 *
 * SCHED_IDLE goes further: its threads get CPU time only when no other
 * task wants it (their weight is 3 against a nice-0 task's 1024), so they
 * never take the program's CPU at a tick either.  That suits the MPI
 * ranks, which poll: where they share the program's CPUs, the policy
 * mostly shortened Himeno at 7% local by 5-18% over Open MPI and MPICH,
 * and slowed the triad, which only moves pages, by up to 17%
 * (Documentation/benchmarks.rst).  On a machine with other CPU-bound work
 * the daemons then crawl, and a request the kernel waits on longer than
 * its request_timeout_ms would fail (SIGBUS).  So SCHED_IDLE comes with a
 * guard (schedguard.c) that lifts the threads to SCHED_BATCH while other
 * work starves them.  Any thread may switch to SCHED_IDLE; switching back
 * needs privilege (or RLIMIT_NICE), which dlmd, as root, has: without it
 * the policy runs unguarded, and says so.
 *
 * The guard's lift is prompt only from Linux 6.6 on: EEVDF scales a
 * thread's lag by its weight when the weight changes, while CFS (6.1)
 * keeps the virtual runtime it ran up under SCHED_IDLE, 341 times its CPU
 * time, so a lifted thread that ran a few ms beside other work may wait
 * seconds more for its first slice.  Beside busy loops 7 of 36 runs of
 * dlmd_idle_test on 6.1 failed (0 to 3 in a boot of 6; six times a
 * request outlived request_timeout_ms, once a space was not created),
 * none of 7 on 6.12.  On such a kernel the daemons say so.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "cpusched.h"
#include "log.h"
#include "schedguard.h"

int dlm_sched_parse(const char *s)
{
	if (!strcmp(s, "batch"))
		return DLM_SCHED_BATCH;
	if (!strcmp(s, "normal"))
		return DLM_SCHED_NORMAL;
	if (!strcmp(s, "idle"))
		return DLM_SCHED_IDLE;
	return -1;
}

const char *dlm_sched_name(enum dlm_sched s)
{
	switch (s) {
	case DLM_SCHED_BATCH:
		return "batch";
	case DLM_SCHED_IDLE:
		return "idle";
	default:
		return "normal";
	}
}

/* On a kernel before 6.6 (CFS), say what a lift cannot do there. */
static void warn_if_cfs(void)
{
	struct utsname u;
	int major, minor;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2 ||
	    major > 6 || (major == 6 && minor >= 6))
		return;
	log_warn("--sched idle on a kernel before 6.6 (CFS): a thread the starvation guard lifts keeps the virtual runtime it ran up under SCHED_IDLE and may wait seconds more, so beside other CPU-bound work a page request can still fail after request_timeout_ms (SIGBUS); prefer --sched batch on this kernel",
		 "kernel=%s", u.release);
}

/*
 * SCHED_IDLE with its starvation guard (schedguard.c), when this process
 * may leave SCHED_IDLE again: tried on the calling thread, which then
 * starts the guard under SCHED_BATCH before it goes back.
 */
static void apply_idle(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	if (sched_setscheduler(0, SCHED_IDLE, &sp)) {
		log_warn("cannot set the CPU policy (--sched): running under the one inherited",
			 "sched=idle err=\"%s\"", strerror(errno));
		return;
	}
	if (sched_setscheduler(0, SCHED_BATCH, &sp)) {
		log_warn("--sched idle runs without its starvation guard: leaving SCHED_IDLE needs CAP_SYS_NICE or RLIMIT_NICE (ulimit -e 20); on a node with other CPU-bound work a page request may fail after request_timeout_ms (SIGBUS)",
			 "err=\"%s\"", strerror(errno));
		return;
	}
	if (!sched_guard_start())
		warn_if_cfs();
	if (sched_setscheduler(0, SCHED_IDLE, &sp))
		log_warn("cannot set the CPU policy (--sched): running under SCHED_BATCH",
			 "sched=idle err=\"%s\"", strerror(errno));
}

void dlm_sched_apply(enum dlm_sched s)
{
	struct sched_param sp = { .sched_priority = 0 };
	int policy = s == DLM_SCHED_BATCH ? SCHED_BATCH : SCHED_OTHER;

	if (s == DLM_SCHED_IDLE) {
		apply_idle();
		return;
	}
	if (sched_setscheduler(0, policy, &sp))
		log_warn("cannot set the CPU policy (--sched): running under the one inherited",
			 "sched=%s err=\"%s\"", dlm_sched_name(s),
			 strerror(errno));
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cpusched.h - the CPU scheduling policy of dlmd and dlm-memserver (--sched).
 */
#ifndef DLM_CPUSCHED_H
#define DLM_CPUSCHED_H

/*
 * batch (the default): SCHED_BATCH, so that a daemon thread woken while
 * the program it serves computes does not preempt the program; it runs on
 * an idle CPU, or on the program's at the next tick.  normal: SCHED_OTHER.
 * idle: SCHED_IDLE, which runs only on CPU time other tasks leave (a
 * minimal share beside them), with a guard (schedguard.h) that lifts the
 * threads to SCHED_BATCH while other work starves them.
 */
enum dlm_sched { DLM_SCHED_BATCH, DLM_SCHED_NORMAL, DLM_SCHED_IDLE };

/* "batch", "normal" or "idle" into its value; -1 for anything else. */
int dlm_sched_parse(const char *s);
const char *dlm_sched_name(enum dlm_sched s);
/*
 * Give the calling thread, and so every thread it creates afterwards (and
 * programs it execs), policy S; its nice value is kept.  Call before
 * creating threads.  A failure is logged (the program goes on under the
 * policy it inherited).
 */
void dlm_sched_apply(enum dlm_sched s);

#endif

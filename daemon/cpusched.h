/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cpusched.h - the CPU scheduling policy of dlmd and dlm-memserver (--sched).
 */
#ifndef DLM_CPUSCHED_H
#define DLM_CPUSCHED_H

#include <stddef.h>
#include <sys/types.h>

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

/*
 * --cpu: the CPU dlmd's threads run on.  auto (the default) confines rank 0
 * of an MPI job under --sched batch or normal, when it may run on two CPUs
 * or more, to the last of them; none leaves the affinity as inherited.
 * Under mpirun, rank 0's threads placed beside the program by the
 * scheduler take its CPU (a sync netlink wake-up puts dlmd's netlink
 * thread on the CPU of the program that sent the request while the polling
 * ranks keep the other CPUs busy); confined to one CPU, they leave the
 * others to the program.
 */
#define DLM_CPU_AUTO	(-1)
#define DLM_CPU_NONE	(-2)
#define DLM_CPU_BAD	(-3)

/* "auto", "none" or a CPU number below CPU_SETSIZE; DLM_CPU_BAD otherwise. */
int dlm_cpu_parse(const char *s);
/*
 * Confine every thread of this process, and so the threads they create
 * later, to CPU (a number, or DLM_CPU_AUTO with AUTO_OK: the last allowed
 * CPU, if two or more are allowed).  Returns the CPU, -1 if the affinity
 * was left alone, or -EINVAL (message in ERR) if CPU is not one this
 * process may use.  A thread that cannot be moved is logged.
 */
int dlm_cpu_apply(int cpu, int auto_ok, char *err, size_t errlen);

/*
 * FN(TID, ARG) for every thread of this process (/proc/self/task), the
 * caller included; the number of calls that returned nonzero, or -1 if
 * the list cannot be read.  A thread created meanwhile may be missed.
 */
int dlm_each_thread(int (*fn)(pid_t tid, void *arg), void *arg);

#endif

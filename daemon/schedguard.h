/* SPDX-License-Identifier: GPL-2.0 */
/*
 * schedguard.h - the starvation guard of --sched idle.
 */
#ifndef DLM_SCHEDGUARD_H
#define DLM_SCHEDGUARD_H

/* The guard thread's name (/proc/PID/task/TID/comm); tests look for it. */
#define SCHED_GUARD_COMM	"sched-guard"

/*
 * Start the guard: a thread, under the caller's policy at the time of the
 * call (SCHED_BATCH), that every GUARD_PERIOD_MS looks at the process's
 * other threads and, when a SCHED_IDLE one is starved (runnable all along
 * yet hardly run), lifts all the SCHED_IDLE ones to SCHED_BATCH until the
 * CPUs it may run on have idle time again.  The caller must be able to leave
 * SCHED_IDLE (privilege or RLIMIT_NICE) and should switch to it
 * afterwards.  The thread blocks every signal.  0, or -1 (logged).
 */
int sched_guard_start(void);

#endif

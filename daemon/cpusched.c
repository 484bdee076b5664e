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
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
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

int dlm_cpu_parse(const char *s)
{
	char *end;
	long v;

	if (!strcmp(s, "auto"))
		return DLM_CPU_AUTO;
	if (!strcmp(s, "none"))
		return DLM_CPU_NONE;
	if (*s < '0' || *s > '9')
		return DLM_CPU_BAD;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v >= CPU_SETSIZE)
		return DLM_CPU_BAD;
	return (int)v;
}

/* The kernel's list of the CPUs this process may use ("0-3,6"), or "?". */
static void cpu_list(char *buf, size_t len)
{
	static const char key[] = "Cpus_allowed_list:";
	char line[256], list[256];
	FILE *f = fopen("/proc/self/status", "r");

	snprintf(buf, len, "?");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, sizeof(key) - 1))
			continue;
		if (sscanf(line + sizeof(key) - 1, "%255s", list) == 1)
			snprintf(buf, len, "%s", list);
		break;
	}
	if (f)
		fclose(f);
}

int dlm_each_thread(int (*fn)(pid_t tid, void *arg), void *arg)
{
	struct dirent *e;
	int n = 0;
	pid_t tid;
	DIR *d;

	d = opendir("/proc/self/task");
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		tid = (pid_t)atoi(e->d_name);
		if (tid > 0 && fn(tid, arg))
			n++;
	}
	closedir(d);
	return n;
}

/* Thread TID onto the one CPU of ONE (a cpu_set_t); 1 if it moved now. */
static int move_thread(pid_t tid, void *one)
{
	const cpu_set_t *set = one;
	cpu_set_t now;

	if (!sched_getaffinity(tid, sizeof(now), &now) && CPU_EQUAL(&now, set))
		return 0;
	if (!sched_setaffinity(tid, sizeof(*set), set))
		return 1;
	log_warn("cannot confine a thread to dlmd's CPU (--cpu)",
		 "tid=%d err=\"%s\"", (int)tid, strerror(errno));
	return 0;
}

int dlm_cpu_apply(int cpu, int auto_ok, char *err, size_t errlen)
{
	cpu_set_t allowed, one;
	char list[256];
	int c, pass;

	if (cpu == DLM_CPU_NONE || (cpu == DLM_CPU_AUTO && !auto_ok))
		return -1;
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		log_warn("cannot read dlmd's CPU affinity (--cpu): left as inherited",
			 "err=\"%s\"", strerror(errno));
		return -1;
	}
	if (cpu == DLM_CPU_AUTO) {
		if (CPU_COUNT(&allowed) < 2)
			return -1;
		for (c = CPU_SETSIZE - 1; !CPU_ISSET(c, &allowed); c--)
			;
		cpu = c;
	} else if (!CPU_ISSET(cpu, &allowed)) {
		cpu_list(list, sizeof(list));
		snprintf(err, errlen, "--cpu %d: not a CPU dlmd may run on (%s): pick one of those, or --cpu none",
			 cpu, list);
		return -EINVAL;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	/* The calling thread first: the threads it creates later inherit. */
	if (sched_setaffinity(0, sizeof(one), &one)) {
		log_warn("cannot confine dlmd to one CPU (--cpu): left as inherited",
			 "cpu=%d err=\"%s\"", cpu, strerror(errno));
		return -1;
	}
	/*
	 * Then every other (the MPI library's); again until none moves, for a
	 * thread created by one not yet moved while the list was read.
	 */
	for (pass = 0; pass < 8; pass++)
		if (dlm_each_thread(move_thread, &one) <= 0)
			break;
	return cpu;
}

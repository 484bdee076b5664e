// SPDX-License-Identifier: GPL-2.0
/*
 * schedguard.c - the starvation guard of --sched idle (schedguard.h).
 *
 * A SCHED_IDLE thread runs on the CPU time no other task wants.  Where the
 * program it serves waits for a page, that is the program's own CPU, and
 * the policy keeps the daemons (the MPI ranks above all, which test for
 * messages in a loop) off the program's CPUs while it computes.  On a node
 * whose other CPU-bound work keeps every CPU busy, though, the thread gets
 * almost nothing (a weight of 3 against a nice-0 task's 1024), and a page
 * request it should answer would outlive the module's request_timeout_ms.
 *
 * The guard is one thread under SCHED_BATCH that sleeps GUARD_PERIOD_MS
 * between looks at /proc/self/task.  A SCHED_IDLE thread seen runnable
 * (state R) at every look for GUARD_WINDOW_MS that ran less than
 * 1/GUARD_SHARE of that time (schedstat) is being starved: beside two busy
 * loops per CPU the daemons' threads ran 0.2-0.6% of the time, while MPI
 * ranks that only take what Himeno leaves them ran 3-9% (a tenth, as first
 * tried, lifted them).  Starvation is the CPUs', not the thread's: a
 * request passes through several threads, each of which would starve in
 * turn.  So the guard lifts every SCHED_IDLE thread of the process to
 * SCHED_BATCH, where each gets its fair share, and keeps them there while
 * the load lasts: at least GUARD_LIFT_MS, and then for as long as the
 * CPUs it may run on (its affinity: all of a node's, or a job's share)
 * were less than GUARD_IDLE_PCT idle over the last GUARD_LIFT_MS
 * (/proc/stat).  Then it puts every SCHED_BATCH one back
 * (threads created meanwhile included).  Going back and forth while the
 * load stays would not do: on CFS (6.1) a thread's virtual runtime grows
 * 341 times faster under SCHED_IDLE than under SCHED_BATCH, so the few ms
 * it runs once put back leave it, lifted again, seconds behind the busy
 * loops in the run queue (an MPI read then outlived dlmd's 2.5 s I/O
 * timeout in 3 of 4 MPICH runs of mpi_test's check).  A thread that
 * sleeps while it has nothing to do, or that polls on a CPU no one else
 * wants, is never taken for starved; one under another policy (a library's
 * SCHED_FIFO thread, say) is left alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpusched.h"
#include "log.h"
#include "schedguard.h"

#define GUARD_PERIOD_MS		50
#define GUARD_WINDOW_MS		250
#define GUARD_SHARE		50
#define GUARD_LIFT_MS		1000
#define GUARD_IDLE_PCT		10
#define GUARD_LOG_EVERY_MS	60000
#define GUARD_THREADS		256

struct watched {
	pid_t tid;
	int seen;		/* in this look's listing */
	int runnable;		/* R at every look since SINCE */
	uint64_t since;		/* ms */
	uint64_t ran0;		/* its CPU time at SINCE, ns */
};

static struct watched watched[GUARD_THREADS];

/* The lifts: only the guard thread touches these. */
static uint64_t lifted_until;	/* ms; 0: not lifted */
static uint64_t cpu_idle0, cpu_total0;	/* cpus_busy()'s last sums */
static uint64_t logged;		/* ms: the last lift logged */
static unsigned long lifts;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The first line of /proc/self/task/TID/NAME into BUF; 0, or -1. */
static int read_task(pid_t tid, const char *name, char *buf, size_t len)
{
	char path[64];
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	got = read(fd, buf, len - 1);
	close(fd);
	if (got <= 0)
		return -1;
	buf[got] = '\0';
	return 0;
}

/* State (field 3) and policy (field 41) of thread TID; 0, or -1. */
static int task_state(pid_t tid, char *state, int *policy)
{
	char buf[1024], *p;
	int field;

	if (read_task(tid, "stat", buf, sizeof(buf)))
		return -1;
	p = strrchr(buf, ')');	/* the name may hold anything */
	if (!p || p[1] != ' ')
		return -1;
	p += 2;
	*state = *p;
	for (field = 3; field < 41 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p)
		return -1;
	*policy = atoi(p);
	return 0;
}

/* CPU time thread TID has run, ns (the first field of schedstat). */
static uint64_t task_ran(pid_t tid)
{
	char buf[128];

	if (read_task(tid, "schedstat", buf, sizeof(buf)))
		return 0;
	return strtoull(buf, NULL, 10);
}

/*
 * Were the CPUs this process may run on busy (less than GUARD_IDLE_PCT
 * idle, iowait counted as idle) since the last call?  Their "cpuN" lines
 * of /proc/stat, the guard's own affinity standing for the process's: a
 * job confined to some of a node's CPUs (taskset, a batch system's cpuset)
 * is starved by the load on those, while the others may idle.  Without
 * its affinity (more CPUs than a cpu_set_t holds), every CPU counts.  A
 * sum that went back (a CPU gone offline, the affinity changed) counts as
 * busy: the next call has a new baseline.
 */
static int cpus_busy(void)
{
	unsigned long long v[8];
	uint64_t idle = 0, total = 0;
	int all, busy, cpu, i;
	char line[512];
	cpu_set_t mine;
	FILE *f;

	all = sched_getaffinity(0, sizeof(mine), &mine) != 0;
	f = fopen("/proc/stat", "re");
	if (!f)
		return 1;
	/* "cpu " (the sum), then one line per online CPU, then the rest. */
	while (fgets(line, sizeof(line), f) && !strncmp(line, "cpu", 3)) {
		if (line[3] < '0' || line[3] > '9')
			continue;	/* the sum */
		memset(v, 0, sizeof(v));
		if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu",
			   &cpu, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
			   &v[6], &v[7]) < 5 || cpu < 0)
			continue;
		if (!all && (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &mine)))
			continue;
		for (i = 0; i < 8; i++)
			total += v[i];
		idle += v[3] + v[4];
	}
	fclose(f);
	busy = total <= cpu_total0 || idle < cpu_idle0 ||
	       (idle - cpu_idle0) * 100 < (total - cpu_total0) * GUARD_IDLE_PCT;
	cpu_idle0 = idle;
	cpu_total0 = total;
	return busy;
}

static int set_policy(pid_t tid, int policy)
{
	struct sched_param sp = { .sched_priority = 0 };

	return sched_setscheduler(tid, policy, &sp);
}

static struct watched *find(pid_t tid)
{
	struct watched *w, *free_slot = NULL;

	for (w = watched; w < watched + GUARD_THREADS; w++) {
		if (w->tid == tid)
			return w;
		if (!w->tid && !free_slot)
			free_slot = w;
	}
	if (free_slot) {
		memset(free_slot, 0, sizeof(*free_slot));
		free_slot->tid = tid;
	}
	return free_slot;
}

/* Every thread seen in this look (not the guard) under FROM, under TO. */
static void set_all(int from, int to)
{
	struct watched *w;
	char state;
	int policy;

	for (w = watched; w < watched + GUARD_THREADS; w++) {
		if (!w->tid || !w->seen)
			continue;
		w->runnable = 0;
		/* A thread gone: no state, or ESRCH. */
		if (!task_state(w->tid, &state, &policy) && policy == from)
			set_policy(w->tid, to);
	}
}

/* STARVED (its tid, what it ran in the window) was: lift them all. */
static void lift(const struct watched *starved, uint64_t now, uint64_t ran)
{
	enum dlog_level level = DLOG_DEBUG;	/* but the first a minute */
	char comm[32];

	lifts++;
	if (read_task(starved->tid, "comm", comm, sizeof(comm)))
		strcpy(comm, "?");
	comm[strcspn(comm, "\n")] = '\0';
	if (!logged || now - logged >= GUARD_LOG_EVERY_MS) {
		level = DLOG_WARN;
		logged = now;
	}
	dlog(level, "threads under SCHED_IDLE starved by other CPU-bound work: all lifted to SCHED_BATCH while it lasts (--sched batch keeps the daemon there)",
	     "tid=%d comm=\"%s\" ran_ms=%llu window_ms=%llu lifts=%lu",
	     (int)starved->tid, comm, (unsigned long long)(ran / 1000000),
	     (unsigned long long)(now - starved->since), lifts);
	set_all(SCHED_IDLE, SCHED_BATCH);
	cpus_busy();	/* the baseline of the first check */
	lifted_until = now + GUARD_LIFT_MS;
}

/* One look at thread W while none is lifted. */
static void look(struct watched *w, uint64_t now)
{
	uint64_t ran;
	char state;
	int policy;

	if (task_state(w->tid, &state, &policy))
		return;
	/*
	 * Created by a lifted thread while the others were put back; before
	 * the first lift a thread under SCHED_BATCH was not the guard's doing
	 * (dlm_sched_apply() could not go back to SCHED_IDLE, say): leave it.
	 */
	if (policy == SCHED_BATCH && lifts)
		set_policy(w->tid, SCHED_IDLE);
	if (policy != SCHED_IDLE || state != 'R') {
		w->runnable = 0;
		return;
	}
	ran = task_ran(w->tid);
	if (!w->runnable) {
		w->runnable = 1;
		w->since = now;
		w->ran0 = ran;
		return;
	}
	if (now - w->since < GUARD_WINDOW_MS)
		return;
	if ((ran - w->ran0) * GUARD_SHARE < (now - w->since) * 1000000) {
		lift(w, now, ran - w->ran0);
		return;
	}
	w->runnable = 0;	/* it runs: a new window */
}

/* Thread TID seen in this look: watched from now (the guard, SELF, not). */
static int mark_seen(pid_t tid, void *self)
{
	struct watched *w;

	if (tid == *(pid_t *)self)
		return 0;
	w = find(tid);
	if (w)
		w->seen = 1;	/* else more than GUARD_THREADS */
	return 0;
}

static void *guard(void *arg)
{
	struct timespec period = { 0, GUARD_PERIOD_MS * 1000000L };
	pid_t self = gettid();
	struct watched *w;
	uint64_t now;

	(void)arg;
	pthread_setname_np(pthread_self(), SCHED_GUARD_COMM);
	for (;;) {
		nanosleep(&period, NULL);
		for (w = watched; w < watched + GUARD_THREADS; w++)
			w->seen = 0;
		if (dlm_each_thread(mark_seen, &self) < 0)
			continue;
		now = now_ms();
		for (w = watched; w < watched + GUARD_THREADS; w++)
			if (!w->seen)
				w->tid = 0;
		if (lifted_until && now >= lifted_until) {
			if (cpus_busy()) {
				lifted_until = now + GUARD_LIFT_MS;
			} else {
				log_debug("the CPUs it may run on have idle time again: threads back under SCHED_IDLE",
					  "lifts=%lu", lifts);
				set_all(SCHED_BATCH, SCHED_IDLE);
				lifted_until = 0;
			}
		}
		for (w = watched; w < watched + GUARD_THREADS && !lifted_until;
		     w++)
			if (w->tid)
				look(w, now);
	}
	return NULL;
}

int sched_guard_start(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;
	int r;

	/* The thread starts with every signal blocked: none is for it. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&t, &attr, guard, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		log_warn("cannot start the starvation guard of --sched idle: a request starved by other CPU-bound work fails after request_timeout_ms (SIGBUS)",
			 "err=\"%s\"", strerror(r));
		return -1;
	}
	return 0;
}

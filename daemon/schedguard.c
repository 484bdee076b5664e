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
 * tried, lifted them).  Starvation is the node's, not the thread's: a
 * request passes through several threads, each of which would starve in
 * turn.  So the guard lifts every SCHED_IDLE thread of the process to
 * SCHED_BATCH, where each gets its fair share, for GUARD_LIFT_MS, and then
 * puts every SCHED_BATCH one back (threads created meanwhile included).
 * Starved again within a lift's length of the end of the last one, they
 * are lifted for twice as long, up to GUARD_LIFT_MAX_MS: a load that stays
 * keeps the daemon under SCHED_BATCH most of the time.  A thread that
 * sleeps while it has nothing to do, or that polls on a CPU no one else
 * wants, is never taken for starved; one under another policy (a library's
 * SCHED_FIFO thread, say) is left alone.
 */
#include <dirent.h>
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

#include "log.h"
#include "schedguard.h"

#define GUARD_PERIOD_MS		50
#define GUARD_WINDOW_MS		250
#define GUARD_SHARE		50
#define GUARD_LIFT_MS		1000
#define GUARD_LIFT_MAX_MS	8000
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
static uint64_t lift_ended;	/* ms: the end of the last lift */
static uint64_t lift_ms = GUARD_LIFT_MS;
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

	/* Starved again soon after the last lift: the load stays. */
	if (lift_ended && now - lift_ended < lift_ms)
		lift_ms = lift_ms * 2 > GUARD_LIFT_MAX_MS ? GUARD_LIFT_MAX_MS :
			  lift_ms * 2;
	else
		lift_ms = GUARD_LIFT_MS;
	lifts++;
	if (read_task(starved->tid, "comm", comm, sizeof(comm)))
		strcpy(comm, "?");
	comm[strcspn(comm, "\n")] = '\0';
	if (!logged || now - logged >= GUARD_LOG_EVERY_MS) {
		level = DLOG_WARN;
		logged = now;
	}
	dlog(level, "threads under SCHED_IDLE starved by other CPU-bound work: all lifted to SCHED_BATCH for a while (--sched batch keeps the daemon there)",
	     "tid=%d comm=\"%s\" ran_ms=%llu window_ms=%llu lift_ms=%llu lifts=%lu",
	     (int)starved->tid, comm, (unsigned long long)(ran / 1000000),
	     (unsigned long long)(now - starved->since),
	     (unsigned long long)lift_ms, lifts);
	set_all(SCHED_IDLE, SCHED_BATCH);
	lifted_until = now + lift_ms;
}

/* One look at thread W while none is lifted. */
static void look(struct watched *w, uint64_t now)
{
	uint64_t ran;
	char state;
	int policy;

	if (task_state(w->tid, &state, &policy))
		return;
	if (policy == SCHED_BATCH)	/* created by a lifted thread */
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

static void *guard(void *arg)
{
	struct timespec period = { 0, GUARD_PERIOD_MS * 1000000L };
	pid_t self = gettid();
	struct watched *w;
	struct dirent *de;
	uint64_t now;
	DIR *dir;
	pid_t tid;

	(void)arg;
	pthread_setname_np(pthread_self(), SCHED_GUARD_COMM);
	for (;;) {
		nanosleep(&period, NULL);
		dir = opendir("/proc/self/task");
		if (!dir)
			continue;
		now = now_ms();
		for (w = watched; w < watched + GUARD_THREADS; w++)
			w->seen = 0;
		while ((de = readdir(dir))) {
			tid = (pid_t)atoi(de->d_name);
			if (tid <= 0 || tid == self)
				continue;
			w = find(tid);
			if (w)
				w->seen = 1;	/* else more than GUARD_THREADS */
		}
		closedir(dir);
		for (w = watched; w < watched + GUARD_THREADS; w++)
			if (!w->seen)
				w->tid = 0;
		if (lifted_until && now >= lifted_until) {
			set_all(SCHED_BATCH, SCHED_IDLE);
			lifted_until = 0;
			lift_ended = now;
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

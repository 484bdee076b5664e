// SPDX-License-Identifier: GPL-2.0
/*
 * fmplrun - start an FMPL program as N processes of one world.
 *
 *   fmplrun -np N [--key K] [--timeout S] PROGRAM [ARGS...]
 *
 * Each rank gets FMPL_RANK, FMPL_SIZE and FMPL_KEY (a random non-zero key,
 * or K) in its environment; libfmpl's fmpl_init() reads them.  fmplrun
 * waits for every rank.  When one fails (non-zero exit or a signal), it
 * says which, sends SIGTERM to the others and SIGKILL 5 s later, and exits
 * with the first failure's status (128 + signal number for a signal).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/fmpl.h>

#define FMPLRUN_VERSION	"0.1.0"
#define NP_MAX		4096
#define KILL_GRACE_S	5.0
#define EXIT_USAGE	2
#define EXIT_TIMEOUT	124

static const char usage_text[] =
"Usage: fmplrun -np N [--key K] [--timeout S] PROGRAM [ARGS...]\n"
"\n"
"Start PROGRAM as N processes (ranks 0..N-1) of one FMPL world on this\n"
"machine.  Each rank gets in its environment:\n"
"  FMPL_RANK   its rank, 0..N-1\n"
"  FMPL_SIZE   N\n"
"  FMPL_KEY    the world's key: random and non-zero, or K\n"
"which fmpl_init() of libfmpl reads.  fmplrun waits for all ranks.  If a\n"
"rank fails (exits with a non-zero status or is killed by a signal),\n"
"fmplrun names it, sends SIGTERM to the others, SIGKILL 5 s later, and\n"
"exits with that rank's status (128 + N for signal N).  SIGINT, SIGTERM\n"
"and SIGHUP sent to fmplrun are passed on to the ranks.\n"
"\n"
"Options:\n"
"  -np N, -n N, --np=N   number of ranks, 1..4096 (the kernel's limit,\n"
"                        fmpl_info.ranks_max, is usually lower: 64)\n"
"  --key K               the world's key (decimal or 0x hex, non-zero)\n"
"                        instead of a random one\n"
"  --timeout S           end all ranks after S seconds (SIGTERM, then\n"
"                        SIGKILL 5 s later); fmplrun then exits with 124\n"
"  -h, --help            show this text\n"
"  -V, --version         fmplrun's version and the FMPL uapi version\n"
"\n"
"Other variables libfmpl reads (passed on unchanged): FMPL_SPIN_US,\n"
"FMPL_FAST, FMPL_COLL, FMPL_MODE, FMPL_JOIN_TIMEOUT_MS, FMPL_DEV (libfmpl(3)).\n"
"\n"
"Exit status: 0 if every rank exited 0; the first failed rank's status;\n"
"124 after --timeout; 2 for a usage error; 1 if fmplrun itself failed;\n"
"127 (126) from a rank that could not run PROGRAM (not executable).\n";

static void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "fmplrun: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nUsage: fmplrun -np N [--key K] [--timeout S] PROGRAM [ARGS...] (fmplrun --help)\n");
	exit(EXIT_USAGE);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int parse_np(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > NP_MAX)
		usage_error("-np %s: give a number of ranks, 1..4096", s);
	return (int)v;
}

static uint64_t parse_key(const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || !v)
		usage_error("--key %s: give a non-zero number (decimal or 0x hex)", s);
	return v;
}

static double parse_timeout(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 1e9)
		usage_error("--timeout %s: give a number of seconds > 0", s);
	return v;
}

/* The value of option @name at argv[*i]: "--name=V" or "--name V". */
static const char *opt_value(int argc, char **argv, int *i, const char *arg)
{
	const char *eq = strchr(arg, '=');

	if (eq)
		return eq + 1;
	if (*i + 1 >= argc)
		usage_error("%s needs a value", arg);
	return argv[++*i];
}

static int opt_is(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(arg, name, n) && (arg[n] == '\0' || arg[n] == '=');
}

struct rank {
	pid_t pid;
	int alive;
};

static struct rank *ranks;
static int np;

static void signal_all(int sig)
{
	int r;

	for (r = 0; r < np; r++)
		if (ranks[r].alive)
			kill(ranks[r].pid, sig);
}

static int alive_count(void)
{
	int r, n = 0;

	for (r = 0; r < np; r++)
		n += ranks[r].alive;
	return n;
}

static void describe(char *buf, size_t len, int status)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "was killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "exited with status %d",
			 WEXITSTATUS(status));
}

static void on_sigchld(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	double timeout = 0, deadline = 0, kill_at = 0;
	int i, r, prog = 0, exit_code = 0, failed = 0;
	int stopping = 0;
	uint64_t key = 0;
	sigset_t set, old;
	char what[128];

	np = 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			printf("fmplrun %s (fmpl uapi %u)\n", FMPLRUN_VERSION,
			       FMPL_API_VERSION);
			return 0;
		} else if (!strcmp(a, "-np") || !strcmp(a, "-n") ||
			   opt_is(a, "--np") || opt_is(a, "-np")) {
			np = parse_np(opt_value(argc, argv, &i, a));
		} else if (opt_is(a, "--key")) {
			key = parse_key(opt_value(argc, argv, &i, a));
		} else if (opt_is(a, "--timeout")) {
			timeout = parse_timeout(opt_value(argc, argv, &i, a));
		} else if (!strcmp(a, "--")) {
			prog = i + 1;
			break;
		} else if (a[0] == '-') {
			usage_error("unknown option %s", a);
		} else {
			prog = i;
			break;
		}
	}
	if (!np)
		usage_error("the number of ranks is missing: -np N");
	if (!prog || prog >= argc)
		usage_error("no PROGRAM to run");

	while (!key) {
		if (getrandom(&key, sizeof(key), 0) != sizeof(key)) {
			fprintf(stderr, "fmplrun: getrandom: %s\n", strerror(errno));
			return 1;
		}
	}
	ranks = calloc((size_t)np, sizeof(*ranks));
	if (!ranks) {
		fprintf(stderr, "fmplrun: out of memory\n");
		return 1;
	}

	signal(SIGCHLD, on_sigchld);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, &old);

	fflush(NULL);
	for (r = 0; r < np; r++) {
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "fmplrun: fork for rank %d: %s\n", r,
				strerror(errno));
			exit_code = 1;
			failed = 1;
			stopping = 1;
			signal_all(SIGTERM);
			kill_at = now_s() + KILL_GRACE_S;
			break;
		}
		if (!pid) {
			char v[32];
			int err;

			sigprocmask(SIG_SETMASK, &old, NULL);
			signal(SIGCHLD, SIG_DFL);
			snprintf(v, sizeof(v), "%d", r);
			setenv("FMPL_RANK", v, 1);
			snprintf(v, sizeof(v), "%d", np);
			setenv("FMPL_SIZE", v, 1);
			snprintf(v, sizeof(v), "%#llx", (unsigned long long)key);
			setenv("FMPL_KEY", v, 1);
			execvp(argv[prog], argv + prog);
			err = errno;
			fprintf(stderr, "fmplrun: rank %d: cannot run %s: %s\n",
				r, argv[prog], strerror(err));
			_exit(err == ENOENT ? 127 : 126);
		}
		ranks[r].pid = pid;
		ranks[r].alive = 1;
	}
	if (timeout > 0)
		deadline = now_s() + timeout;

	while (alive_count()) {
		struct timespec ts, *tsp = NULL;
		double next = 0, t;
		siginfo_t info;
		int sig, status;
		pid_t pid;

		if (deadline > 0)
			next = deadline;
		if (kill_at > 0 && (!next || kill_at < next))
			next = kill_at;
		if (next) {
			t = next - now_s();
			if (t < 0)
				t = 0;
			ts.tv_sec = (time_t)t;
			ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
			tsp = &ts;
		}
		sig = sigtimedwait(&set, &info, tsp);

		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
			signal_all(sig);
			if (!stopping) {
				stopping = 1;
				if (!failed)
					exit_code = 128 + sig;
				failed = 1;
				kill_at = now_s() + KILL_GRACE_S;
			}
		}
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (r = 0; r < np && ranks[r].pid != pid; r++)
				;
			if (r == np)
				continue;
			ranks[r].alive = 0;
			if (stopping || (WIFEXITED(status) && !WEXITSTATUS(status)))
				continue;
			describe(what, sizeof(what), status);
			failed = 1;
			stopping = 1;
			exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
				    WEXITSTATUS(status);
			fprintf(stderr, "fmplrun: rank %d (pid %d) %s", r,
				(int)pid, what);
			if (alive_count())
				fprintf(stderr, ": terminating the other %d rank%s",
					alive_count(), alive_count() > 1 ? "s" : "");
			fputc('\n', stderr);
			signal_all(SIGTERM);
			kill_at = now_s() + KILL_GRACE_S;
		}
		t = now_s();
		if (deadline > 0 && t >= deadline && alive_count()) {
			deadline = 0;
			if (!failed) {
				failed = 1;
				exit_code = EXIT_TIMEOUT;
			}
			fprintf(stderr, "fmplrun: timeout after %g s: terminating %d rank%s\n",
				timeout, alive_count(), alive_count() > 1 ? "s" : "");
			if (!stopping) {
				stopping = 1;
				kill_at = t + KILL_GRACE_S;
			}
			signal_all(SIGTERM);
		}
		if (kill_at > 0 && t >= kill_at && alive_count()) {
			for (r = 0; r < np; r++)
				if (ranks[r].alive)
					fprintf(stderr, "fmplrun: rank %d (pid %d) still runs %g s after SIGTERM: SIGKILL\n",
						r, (int)ranks[r].pid, KILL_GRACE_S);
			signal_all(SIGKILL);
			kill_at = 0;
		}
	}
	return exit_code;
}

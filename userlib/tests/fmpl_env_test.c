// SPDX-License-Identifier: GPL-2.0
/*
 * fmpl_env_test - what fmpl_init reads from the environment, without
 * /dev/fmpl (env.c and errors.c compiled in): rank and size from fmplrun's,
 * Open MPI's and MPICH's variables and their precedence; bad or missing
 * values refused with a message naming the fix; FMPL_KEY and the key
 * derived from the parent process (same for siblings, never 0); FMPL_MODE,
 * FMPL_SPIN_US, FMPL_COLL, FMPL_JOIN_TIMEOUT_MS, FMPL_DEV; the errno to
 * ier mapping of fmpl.h and fmpl_strerror for every code.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "internal.h"

static const char *const vars[] = {
	"FMPL_RANK", "FMPL_SIZE", "FMPL_KEY", "OMPI_COMM_WORLD_RANK",
	"OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "FMPL_MODE",
	"FMPL_SPIN_US", "FMPL_COLL", "FMPL_JOIN_TIMEOUT_MS", "FMPL_DEV",
};

static void clear_env(void)
{
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

/* Set NAME=VALUE pairs given as "NAME=VALUE NAME=VALUE ..." */
static void env(const char *pairs)
{
	char buf[512], *t, *save = NULL;

	clear_env();
	snprintf(buf, sizeof(buf), "%s", pairs);
	for (t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(t, '=');

		*eq = '\0';
		setenv(t, eq + 1, 1);
	}
}

static char msg[512];

static int parse(const char *pairs, struct fmpllib_env *e)
{
	env(pairs);
	return fmpllib_parse_env(e, msg, sizeof(msg));
}

#define HAS(s) do {							\
	if (!strstr(msg, s))						\
		TH_LOG("message \"%s\" lacks \"%s\"", msg, s);		\
	ASSERT_NE(NULL, strstr(msg, s));				\
} while (0)

TEST(fmplrun_variables)
{
	struct fmpllib_env e;

	ASSERT_EQ(0, parse("FMPL_RANK=2 FMPL_SIZE=4 FMPL_KEY=0x1234", &e));
	ASSERT_EQ(2, e.rank);
	ASSERT_EQ(4, e.size);
	ASSERT_EQ(0x1234, e.key);
	ASSERT_EQ(0, e.key_derived);
	ASSERT_EQ(FMPLLIB_SRC_FMPL, e.src);
	/* Defaults. */
	ASSERT_EQ(FMPL_MODE_USER, e.mode);
	ASSERT_EQ(100, e.spin_us);
	ASSERT_EQ(-1, e.coll);
	ASSERT_EQ(0, e.join_timeout_ms);
	ASSERT_STREQ("/dev/fmpl", e.dev);
	ASSERT_EQ(0, parse("FMPL_RANK=0 FMPL_SIZE=1 FMPL_KEY=18446744073709551615", &e));
	ASSERT_EQ(~0ULL, e.key);
}

TEST(open_mpi_and_mpich_variables)
{
	struct fmpllib_env e;

	ASSERT_EQ(0, parse("OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=3", &e));
	ASSERT_EQ(1, e.rank);
	ASSERT_EQ(3, e.size);
	ASSERT_EQ(FMPLLIB_SRC_OMPI, e.src);
	ASSERT_EQ(1, e.key_derived);
	ASSERT_EQ(0, parse("PMI_RANK=5 PMI_SIZE=6", &e));
	ASSERT_EQ(5, e.rank);
	ASSERT_EQ(6, e.size);
	ASSERT_EQ(FMPLLIB_SRC_PMI, e.src);
	/* FMPL_* first, then Open MPI, then PMI. */
	ASSERT_EQ(0, parse("PMI_RANK=5 PMI_SIZE=6 OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=3 FMPL_RANK=0 FMPL_SIZE=2", &e));
	ASSERT_EQ(0, e.rank);
	ASSERT_EQ(2, e.size);
	ASSERT_EQ(0, parse("PMI_RANK=5 PMI_SIZE=6 OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=3", &e));
	ASSERT_EQ(FMPLLIB_SRC_OMPI, e.src);
}

TEST(missing_rank_or_size_names_the_launcher)
{
	struct fmpllib_env e;

	ASSERT_EQ(FMPL_ERR_INIT, parse("", &e));
	HAS("fmplrun -np N");
	HAS("mpirun");
	ASSERT_EQ(FMPL_ERR_INIT, parse("FMPL_RANK=0", &e));
	HAS("FMPL_SIZE");
	HAS("fmplrun -np N");
	ASSERT_EQ(FMPL_ERR_INIT, parse("OMPI_COMM_WORLD_SIZE=2", &e));
	HAS("OMPI_COMM_WORLD_RANK");
}

TEST(bad_rank_or_size)
{
	static const char *const bad[] = {
		"FMPL_RANK=0 FMPL_SIZE=0", "FMPL_RANK=0 FMPL_SIZE=-1",
		"FMPL_RANK=0 FMPL_SIZE=x", "FMPL_RANK=0 FMPL_SIZE=2x",
		"FMPL_RANK=0 FMPL_SIZE=", "FMPL_RANK=2 FMPL_SIZE=2",
		"FMPL_RANK=-1 FMPL_SIZE=2", "FMPL_RANK=one FMPL_SIZE=2",
		"FMPL_RANK=0 FMPL_SIZE=99999999999999999999",
		"PMI_RANK=3 PMI_SIZE=3",
	};
	struct fmpllib_env e;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &e) != FMPL_ERR_INIT)
			TH_LOG("accepted: %s", bad[i]);
		ASSERT_EQ(FMPL_ERR_INIT, parse(bad[i], &e));
		HAS("fmplrun -np N");
	}
	ASSERT_EQ(FMPL_ERR_INIT, parse("FMPL_RANK=2 FMPL_SIZE=2", &e));
	HAS("0..1");
}

TEST(bad_key)
{
	static const char *const bad[] = { "0", "", "x", "-1", "0x", "12 3",
					   "99999999999999999999999" };
	struct fmpllib_env e;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		env("FMPL_RANK=0 FMPL_SIZE=1");
		setenv("FMPL_KEY", bad[i], 1);
		ASSERT_EQ(FMPL_ERR_INIT, fmpllib_parse_env(&e, msg, sizeof(msg)));
		HAS("FMPL_KEY");
	}
}

TEST(derived_key_never_zero_and_spread)
{
	uint64_t k[4096];
	long p;
	int i, j;

	for (p = 0; p < 4096; p++) {
		k[p] = fmpllib_derive_key(p, (uint64_t)p * 1000);
		ASSERT_NE(0, k[p]);
	}
	for (i = 0; i < 4096; i++)
		for (j = i + 1; j < 4096; j++)
			ASSERT_NE(k[i], k[j]);
	/* The same launcher started at another time: another key. */
	ASSERT_NE(fmpllib_derive_key(1234, 1), fmpllib_derive_key(1234, 2));
	ASSERT_EQ(fmpllib_derive_key(1234, 5), fmpllib_derive_key(1234, 5));
}

TEST(proc_starttime)
{
	ASSERT_NE(0, fmpllib_proc_starttime((long)getpid()));
	ASSERT_EQ(0, fmpllib_proc_starttime(-5));
}

/* Two children of one parent derive the same key; the parent another. */
TEST(siblings_share_the_derived_key)
{
	struct fmpllib_env e;
	uint64_t mine, theirs[2];
	int fds[2], i, status;

	env("FMPL_RANK=0 FMPL_SIZE=2");
	ASSERT_EQ(0, fmpllib_parse_env(&e, msg, sizeof(msg)));
	mine = e.key;
	ASSERT_NE(0, mine);
	ASSERT_EQ(1, e.key_derived);
	ASSERT_EQ(fmpllib_derive_key((long)getppid(),
				     fmpllib_proc_starttime((long)getppid())), mine);
	ASSERT_EQ(0, pipe(fds));
	for (i = 0; i < 2; i++) {
		if (!fork()) {
			struct fmpllib_env c;

			if (fmpllib_parse_env(&c, msg, sizeof(msg)) ||
			    write(fds[1], &c.key, sizeof(c.key)) != sizeof(c.key))
				_exit(1);
			_exit(0);
		}
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(sizeof(theirs[i]), read(fds[0], &theirs[i], sizeof(theirs[i])));
		wait(&status);
		ASSERT_EQ(0, status);
	}
	ASSERT_EQ(theirs[0], theirs[1]);
	ASSERT_NE(mine, theirs[0]);
}

TEST(mode_spin_coll_timeout_dev)
{
	struct fmpllib_env e;

	ASSERT_EQ(0, parse("FMPL_RANK=0 FMPL_SIZE=1 FMPL_MODE=any FMPL_SPIN_US=0 FMPL_COLL=tree FMPL_JOIN_TIMEOUT_MS=2500 FMPL_DEV=/tmp/x", &e));
	ASSERT_EQ(FMPL_MODE_ANY, e.mode);
	ASSERT_EQ(0, e.spin_us);
	ASSERT_EQ(FMPL_COLL_TREE, e.coll);
	ASSERT_EQ(2500, e.join_timeout_ms);
	ASSERT_STREQ("/tmp/x", e.dev);
	ASSERT_EQ(0, parse("FMPL_RANK=0 FMPL_SIZE=1 FMPL_MODE=group FMPL_COLL=native FMPL_SPIN_US=5000", &e));
	ASSERT_EQ(FMPL_MODE_GROUP, e.mode);
	ASSERT_EQ(FMPL_COLL_NATIVE, e.coll);
	ASSERT_EQ(5000, e.spin_us);
	ASSERT_EQ(0, parse("FMPL_RANK=0 FMPL_SIZE=1 FMPL_MODE=USER FMPL_COLL=Auto", &e));
	ASSERT_EQ(FMPL_MODE_USER, e.mode);
	ASSERT_EQ(FMPL_COLL_AUTO, e.coll);
	ASSERT_EQ(0, parse("FMPL_RANK=0 FMPL_SIZE=1 FMPL_MODE=2", &e));
	ASSERT_EQ(FMPL_MODE_ANY, e.mode);

	ASSERT_EQ(FMPL_ERR_INIT, parse("FMPL_RANK=0 FMPL_SIZE=1 FMPL_MODE=world", &e));
	HAS("user, group or any");
	ASSERT_EQ(FMPL_ERR_INIT, parse("FMPL_RANK=0 FMPL_SIZE=1 FMPL_MODE=3", &e));
	ASSERT_EQ(FMPL_ERR_INIT, parse("FMPL_RANK=0 FMPL_SIZE=1 FMPL_COLL=fast", &e));
	HAS("auto, native or tree");
	ASSERT_EQ(FMPL_ERR_INIT, parse("FMPL_RANK=0 FMPL_SIZE=1 FMPL_SPIN_US=-3", &e));
	HAS("FMPL_SPIN_US");
	ASSERT_EQ(FMPL_ERR_INIT, parse("FMPL_RANK=0 FMPL_SIZE=1 FMPL_SPIN_US=10000001", &e));
	ASSERT_EQ(FMPL_ERR_INIT, parse("FMPL_RANK=0 FMPL_SIZE=1 FMPL_JOIN_TIMEOUT_MS=1s", &e));
	HAS("FMPL_JOIN_TIMEOUT_MS");
	ASSERT_EQ(FMPL_ERR_INIT, parse("FMPL_RANK=0 FMPL_SIZE=1 FMPL_JOIN_TIMEOUT_MS=4294967296", &e));
}

TEST(errno_to_ier)
{
	static const struct { int err, ier, ier_init; } map[] = {
		{ 0, FMPL_SUCCESS, FMPL_SUCCESS },
		{ EINVAL, FMPL_ERR_ARG, FMPL_ERR_ARG },
		{ EFAULT, FMPL_ERR_ARG, FMPL_ERR_ARG },
		{ EBUSY, FMPL_ERR_BUSY, FMPL_ERR_INIT },
		{ ECONNRESET, FMPL_ERR_PEER, FMPL_ERR_PEER },
		{ EMSGSIZE, FMPL_ERR_TRUNCATE, FMPL_ERR_TRUNCATE },
		{ ENOENT, FMPL_ERR_NOENT, FMPL_ERR_NODEV },
		{ EPROTONOSUPPORT, FMPL_ERR_NODEV, FMPL_ERR_NODEV },
		{ ENODEV, FMPL_ERR_NODEV, FMPL_ERR_NODEV },
		{ EOPNOTSUPP, FMPL_ERR_NODEV, FMPL_ERR_NODEV },
		{ EACCES, FMPL_ERR_PERM, FMPL_ERR_PERM },
		{ EPERM, FMPL_ERR_PERM, FMPL_ERR_PERM },
		{ ETIMEDOUT, FMPL_ERR_TIMEOUT, FMPL_ERR_TIMEOUT },
		{ ENOMEM, FMPL_ERR_NOMEM, FMPL_ERR_NOMEM },
		{ EADDRINUSE, FMPL_ERR_OTHER, FMPL_ERR_INIT },
		{ EEXIST, FMPL_ERR_OTHER, FMPL_ERR_INIT },
		{ ENOTCONN, FMPL_ERR_INIT, FMPL_ERR_INIT },
		{ EPROTO, FMPL_ERR_OTHER, FMPL_ERR_OTHER },
		{ EINTR, FMPL_ERR_OTHER, FMPL_ERR_OTHER },
		{ EIO, FMPL_ERR_OTHER, FMPL_ERR_OTHER },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (fmpllib_ier(map[i].err) != map[i].ier ||
		    fmpllib_ier_init(map[i].err) != map[i].ier_init)
			TH_LOG("errno %d (%s)", map[i].err, strerror(map[i].err));
		ASSERT_EQ(map[i].ier, fmpllib_ier(map[i].err));
		ASSERT_EQ(map[i].ier_init, fmpllib_ier_init(map[i].err));
	}
}

TEST(ret_sets_ier_and_errno)
{
	int ier = -1;

	errno = 0;
	ASSERT_EQ(FMPL_ERR_PEER, fmpllib_fail(&ier, ECONNRESET));
	ASSERT_EQ(FMPL_ERR_PEER, ier);
	ASSERT_EQ(ECONNRESET, errno);
	ASSERT_EQ(FMPL_SUCCESS, fmpllib_ret(&ier, FMPL_SUCCESS, 0));
	ASSERT_EQ(FMPL_SUCCESS, ier);
	ASSERT_EQ(ECONNRESET, errno);	/* untouched on success */
	ASSERT_EQ(FMPL_ERR_ARG, fmpllib_ret(NULL, FMPL_ERR_ARG, EINVAL));
}

TEST(strerror_every_code)
{
	int c;

	ASSERT_STREQ("success", fmpl_strerror(FMPL_SUCCESS));
	for (c = FMPL_ERR_ARG; c <= FMPL_ERR_OTHER; c++) {
		ASSERT_NE(NULL, fmpl_strerror(c));
		ASSERT_NE(NULL, strstr(fmpl_strerror(c), " "));
		ASSERT_EQ(NULL, strstr(fmpl_strerror(c), "unknown FMPL"));
	}
	ASSERT_NE(NULL, strstr(fmpl_strerror(FMPL_ERR_NODEV), "dlmem"));
	ASSERT_NE(NULL, strstr(fmpl_strerror(FMPL_ERR_INIT), "fmplrun"));
	ASSERT_NE(NULL, strstr(fmpl_strerror(-1), "unknown"));
	ASSERT_NE(NULL, strstr(fmpl_strerror(99), "unknown"));
}

TEST_HARNESS_MAIN

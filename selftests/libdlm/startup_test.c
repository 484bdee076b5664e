// SPDX-License-Identifier: GPL-2.0
/*
 * libdlm dlm_startup()/dlm_shutdown(): memfile, no memfile, environment,
 * DLM page size, the DLM part of argv, errors that name their fix, and a
 * remote memfile with no daemon (refused, no fallback to local).
 */
#include "kselftest_harness.h"
#include "libdlm_util.h"

static struct dlm_lib_stats stats(void)
{
	struct dlm_lib_stats st;

	memset(&st, 0xaa, sizeof(st));
	if (dlm_stats(&st))
		memset(&st, 0xaa, sizeof(st));
	return st;
}

TEST(no_memfile_gives_default_local_space)
{
	struct dlm_lib_stats st;
	struct cmdline c;

	clear_dlm_env();
	ASSERT_EQ(0, startup_cmd(&c, "prog x"));
	ASSERT_EQ(2, c.argc);
	st = stats();
	/* 256 MB unless the kernel's local_budget_max is lower. */
	ASSERT_GE(DLM_DEFAULT_LOCAL_MB * MB, st.total_size);
	ASSERT_LT(0, st.total_size);
	ASSERT_EQ(st.total_size, st.local_budget);
	ASSERT_EQ(0, st.remote_size);
	ASSERT_EQ(0, st.servers);
	ASSERT_EQ(1 * MB, st.page_size);
	ASSERT_EQ(0, st.bytes_allocated);
	ASSERT_EQ(st.total_size, st.largest_free);
	ASSERT_EQ(0, st.faults);
	ASSERT_EQ(0, dlm_shutdown());
	ASSERT_EQ(0, dlm_shutdown());	/* twice is fine */
}

TEST(null_argc_argv_and_local_mb_env)
{
	clear_dlm_env();
	setenv("DLM_LOCAL_MB", "24", 1);
	ASSERT_EQ(0, dlm_startup(NULL, NULL));
	ASSERT_EQ(24 * MB, stats().total_size);
	ASSERT_EQ(0, dlm_shutdown());
}

TEST(local_memfile_and_argv)
{
	const char *mf = memfile("# DLM memfile: local only\n\n  48   # MB\n");
	struct dlm_lib_stats st;
	struct cmdline c;
	char line[128];

	clear_dlm_env();
	snprintf(line, sizeof(line), "prog a b -- -f %s", mf);
	ASSERT_EQ(0, startup_cmd(&c, line));
	unlink(mf);
	ASSERT_EQ(3, c.argc);
	ASSERT_STREQ("prog", c.argv[0]);
	ASSERT_STREQ("a", c.argv[1]);
	ASSERT_STREQ("b", c.argv[2]);
	ASSERT_EQ(NULL, c.argv[3]);
	st = stats();
	ASSERT_EQ(48 * MB, st.total_size);
	ASSERT_EQ(48 * MB, st.local_budget);
	ASSERT_EQ(0, dlm_shutdown());
}

TEST(memfile_from_env_and_page_kb)
{
	const char *mf = memfile("1\n");
	struct dlm_lib_stats st;
	struct cmdline c;

	clear_dlm_env();
	setenv("DLM_MEMFILE", mf, 1);
	ASSERT_EQ(0, startup_cmd(&c, "prog -- --page-kb 12"));
	unlink(mf);
	ASSERT_EQ(1, c.argc);
	st = stats();
	ASSERT_EQ(12 * KB, st.page_size);
	ASSERT_EQ(86 * 12 * KB, st.total_size);	/* 1 MB rounded up */
	ASSERT_EQ(st.total_size, st.local_budget);
	ASSERT_EQ(0, dlm_shutdown());
}

TEST(argv_without_dlm_part_is_untouched)
{
	struct cmdline c;

	clear_dlm_env();
	setenv("DLM_LOCAL_MB", "8", 1);
	ASSERT_EQ(0, startup_cmd(&c, "prog -f x --page-kb 3"));
	ASSERT_EQ(5, c.argc);
	ASSERT_STREQ("3", c.argv[4]);
	ASSERT_EQ(8 * MB, stats().total_size);
	ASSERT_EQ(0, dlm_shutdown());
	ASSERT_EQ(0, startup_cmd(&c, "prog -- y -- -v"));
	ASSERT_EQ(3, c.argc);			/* the last "--" counts */
	ASSERT_STREQ("y", c.argv[2]);
	ASSERT_EQ(0, dlm_shutdown());
}

static int start_arg(void *line)
{
	static struct cmdline c;

	return startup_cmd(&c, line);
}

/* dlm_startup() must fail with @err and print a message containing @msg. */
#define EXPECT_FAIL(line, err, msg) do {				\
	char out[2048];							\
									\
	errno = 0;							\
	ASSERT_EQ(-1, with_stderr(start_arg, (void *)(line), out,	\
				  sizeof(out)));			\
	ASSERT_EQ(err, errno);						\
	TH_LOG("%s", out);						\
	ASSERT_NE(NULL, strstr(out, "libdlm: dlm_startup: "));		\
	ASSERT_NE(NULL, strstr(out, msg));				\
	ASSERT_NE(NULL, strstr(dlm_last_error(), msg));			\
	ASSERT_EQ(NULL, dlm_alloc(1));					\
	ASSERT_EQ(ENXIO, errno);					\
} while (0)

TEST(bad_options_and_memfiles)
{
	char line[256];

	clear_dlm_env();
	EXPECT_FAIL("prog -- --bogus", EINVAL, "unknown DLM option '--bogus'");
	EXPECT_FAIL("prog -- -f", EINVAL, "needs a value");
	EXPECT_FAIL("prog -- -f /nonexistent/memfile", ENOENT,
		    "cannot read memfile '/nonexistent/memfile'");
	snprintf(line, sizeof(line), "prog -- -f %s", memfile("lots\n"));
	EXPECT_FAIL(line, EINVAL, ":1: 'lots' is not a size in MB");
	snprintf(line, sizeof(line), "prog -- -f %s --page-kb 6",
		 memfile("4\n"));
	EXPECT_FAIL(line, EINVAL, "--page-kb 6: the DLM page size must be a multiple of 4 KB");
	/* About 1 TB local: more than the kernel's local_budget_max. */
	snprintf(line, sizeof(line), "prog -- -f %s", memfile("1000000\n"));
	EXPECT_FAIL(line, ENOMEM, "max_local_mb");
	/* About 95 TB: more than any space may hold. */
	snprintf(line, sizeof(line), "prog -- -f %s", memfile("100000000\n"));
	EXPECT_FAIL(line, EFBIG, "larger than this kernel allows");
}

/*
 * Memory servers named, no dlmd: refused with a message naming the fix
 * (ENOTCONN: start dlmd; EOPNOTSUPP on a kernel without remote backing),
 * and no silent local space instead.
 */
TEST(remote_memfile_without_daemon_is_refused)
{
	const char *mf = memfile("64\n128 node2:7100\n128 node3:7100\n");
	char line[256], out[2048], want[128];
	struct dlm_lib_stats st;
	int err;

	clear_dlm_env();
	snprintf(line, sizeof(line), "prog a -- -f %s", mf);
	errno = 0;
	ASSERT_EQ(-1, with_stderr(start_arg, line, out, sizeof(out)));
	err = errno;
	TH_LOG("errno %d: %s", err, out);
	ASSERT_TRUE(err == ENOTCONN || err == EOPNOTSUPP);
	snprintf(want, sizeof(want), "dlmd -f %s", mf);
	ASSERT_NE(NULL, strstr(out, want));
	if (err == ENOTCONN)
		ASSERT_NE(NULL, strstr(out, "start dlmd -f"));
	ASSERT_EQ(NULL, dlm_alloc(1));
	ASSERT_EQ(ENXIO, errno);
	ASSERT_EQ(-1, dlm_stats(&st));
	ASSERT_EQ(0, dlm_shutdown());
	/* The process can still start a local space. */
	setenv("DLM_LOCAL_MB", "8", 1);
	ASSERT_EQ(0, dlm_startup(NULL, NULL));
	ASSERT_EQ(0, dlm_shutdown());
	unlink(mf);
}

TEST(startup_twice_shutdown_restart)
{
	struct dlm_lib_stats st;
	char *p;

	clear_dlm_env();
	setenv("DLM_LOCAL_MB", "8", 1);
	ASSERT_EQ(0, dlm_startup(NULL, NULL));
	p = dlm_alloc(100);
	ASSERT_NE(NULL, p);
	p[0] = 1;
	errno = 0;
	ASSERT_EQ(-1, dlm_startup(NULL, NULL));
	ASSERT_EQ(EBUSY, errno);
	ASSERT_EQ(0, dlm_shutdown());
	ASSERT_EQ(0, dlm_shutdown());
	ASSERT_EQ(NULL, dlm_alloc(1));
	ASSERT_EQ(ENXIO, errno);
	setenv("DLM_LOCAL_MB", "16", 1);
	ASSERT_EQ(0, dlm_startup(NULL, NULL));
	ASSERT_EQ(0, dlm_stats(&st));
	ASSERT_EQ(16 * MB, st.total_size);
	ASSERT_EQ(0, st.allocations);
	ASSERT_EQ(0, st.populates);		/* a new, empty space */
	ASSERT_EQ(0, dlm_shutdown());
}

TEST(verbose_describes_the_space)
{
	char out[2048];

	clear_dlm_env();
	setenv("DLM_LOCAL_MB", "8", 1);
	setenv("DLM_VERBOSE", "1", 1);
	ASSERT_EQ(0, with_stderr(start_arg, "prog", out, sizeof(out)));
	ASSERT_NE(NULL, strstr(out, "libdlm: DLM space of 8 MB in 1024 KB DLM pages"));
	ASSERT_NE(NULL, strstr(out, "local only"));
	ASSERT_EQ(0, dlm_shutdown());
}

#include "../dlm/dlm_main.h"

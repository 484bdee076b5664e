// SPDX-License-Identifier: GPL-2.0
/*
 * config_test - what dlm_startup() reads, without /dev/dlm: the DLM part
 * of the command line, the DLM_* environment, the memfile format, and the
 * error messages that name the fix.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "internal.h"

static void clear_env(void)
{
	unsetenv("DLM_MEMFILE");
	unsetenv("DLM_PAGE_KB");
	unsetenv("DLM_LOCAL_MB");
	unsetenv("DLM_VERBOSE");
	unsetenv("DLM_POLICY");
	unsetenv("DLM_PROTOCOL");
}

/* Parse a space-separated command line; cut it on success. */
static int args(struct dlmlib_config *c, char *line, int *argc, char ***argv)
{
	static char *v[32];
	int n = 0;

	clear_env();
	memset(c, 0, sizeof(*c));
	for (char *t = strtok(line, " "); t && n < 31; t = strtok(NULL, " "))
		v[n++] = t;
	v[n] = NULL;
	*argc = n;
	*argv = v;
	if (dlmlib_parse_args(c, n, v))
		return -1;
	dlmlib_cut_args(c, argc, argv);
	return 0;
}

static int memfile(struct dlmlib_config *c, const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	memset(c, 0, sizeof(*c));
	if (!f)
		return -2;
	ret = dlmlib_parse_memfile(c, f, "mf");
	fclose(f);
	return ret;
}

#define HAS(msg) ASSERT_NE(NULL, strstr(dlm_last_error(), msg))

TEST(dlm_part_is_cut)
{
	char line[] = "prog a b -- -f memfile";
	struct dlmlib_config c;
	char **argv;
	int argc;

	ASSERT_EQ(0, args(&c, line, &argc, &argv));
	ASSERT_EQ(3, argc);
	ASSERT_STREQ("prog", argv[0]);
	ASSERT_STREQ("a", argv[1]);
	ASSERT_STREQ("b", argv[2]);
	ASSERT_EQ(NULL, argv[3]);
	ASSERT_STREQ("memfile", c.memfile);
}

TEST(no_dlm_part)
{
	char line[] = "prog a -f b";
	struct dlmlib_config c;
	char **argv;
	int argc;

	ASSERT_EQ(0, args(&c, line, &argc, &argv));
	ASSERT_EQ(4, argc);
	ASSERT_EQ(NULL, c.memfile);
	ASSERT_EQ(0, c.cut);
}

TEST(last_dashdash_wins_and_may_be_empty)
{
	char l1[] = "prog -- x -- -v", l2[] = "prog x --";
	struct dlmlib_config c;
	char **argv;
	int argc;

	ASSERT_EQ(0, args(&c, l1, &argc, &argv));
	ASSERT_EQ(3, argc);
	ASSERT_STREQ("--", argv[1]);
	ASSERT_EQ(1, c.verbose);
	ASSERT_EQ(0, args(&c, l2, &argc, &argv));
	ASSERT_EQ(2, argc);
	ASSERT_EQ(NULL, argv[2]);
}

TEST(option_spellings)
{
	char l1[] = "p -- -fA --page-kb 64 --policy arr --protocol serial",
	     l2[] = "p -- --memfile=B --page-kb=12 --policy=clock --protocol=cross",
	     l3[] = "p -- --memfile C --verbose",
	     l4[] = "p -- --mode sigsegv -v", l5[] = "p -- --mode=uffd";
	struct dlmlib_config c;
	char **argv;
	int argc;

	ASSERT_EQ(0, args(&c, l1, &argc, &argv));
	ASSERT_STREQ("A", c.memfile);
	ASSERT_EQ(64, c.page_kb);
	ASSERT_EQ(DLM_POLICY_ARR, c.policy);
	ASSERT_EQ(DLM_PROTO_SERIAL, c.protocol);
	ASSERT_EQ(0, args(&c, l2, &argc, &argv));
	ASSERT_STREQ("B", c.memfile);
	ASSERT_EQ(12, c.page_kb);
	ASSERT_EQ(DLM_POLICY_CLOCK, c.policy);
	ASSERT_EQ(DLM_PROTO_CROSS, c.protocol);
	ASSERT_EQ(0, args(&c, l3, &argc, &argv));
	ASSERT_STREQ("C", c.memfile);
	ASSERT_EQ(1, c.verbose);
	ASSERT_EQ(1, argc);
	ASSERT_EQ(0, args(&c, l4, &argc, &argv));
	ASSERT_EQ(DLMLIB_MODE_SIGSEGV, c.mode);
	ASSERT_EQ(1, c.verbose);
	ASSERT_EQ(0, args(&c, l5, &argc, &argv));
	ASSERT_EQ(DLMLIB_MODE_UFFD, c.mode);
}

TEST(bad_options_leave_argv_alone)
{
	char l1[] = "p a -- -f", l2[] = "p a -- --bogus", l3[] = "p a -- --page-kb 1x",
	     l4[] = "p a -- --page-kb=0", l5[] = "p a -- --memfile=",
	     l6[] = "p a -- --policy lru", l7[] = "p a -- --protocol fast",
	     l8[] = "p a -- --protocol", l9[] = "p a -- --protocol=",
	     l10[] = "p a -- --policyarr", l11[] = "p a -- -f-x";
	struct dlmlib_config c;
	char **argv;
	int argc;

	errno = 0;
	ASSERT_EQ(-1, args(&c, l1, &argc, &argv));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(4, argc);
	HAS("-f needs a value");
	ASSERT_EQ(-1, args(&c, l2, &argc, &argv));
	HAS("unknown DLM option '--bogus'");
	HAS("-f MEMFILE");
	ASSERT_EQ(4, argc);
	ASSERT_STREQ("--", argv[2]);
	ASSERT_EQ(-1, args(&c, l3, &argc, &argv));
	HAS("--page-kb '1x'");
	ASSERT_EQ(-1, args(&c, l4, &argc, &argv));
	ASSERT_EQ(-1, args(&c, l5, &argc, &argv));
	HAS("empty memfile name");
	ASSERT_EQ(-1, args(&c, l6, &argc, &argv));
	HAS("--policy 'lru': want arr");
	ASSERT_EQ(-1, args(&c, l7, &argc, &argv));
	HAS("--protocol 'fast': want serial, cross, async or inline");
	ASSERT_EQ(-1, args(&c, l8, &argc, &argv));
	HAS("--protocol needs a value");
	ASSERT_EQ(-1, args(&c, l9, &argc, &argv));
	HAS("--protocol '': want serial");
	ASSERT_EQ(-1, args(&c, l10, &argc, &argv));
	HAS("unknown DLM option '--policyarr'");
	ASSERT_EQ(-1, args(&c, l11, &argc, &argv));
	HAS("unknown DLM option '-f-x'");
	ASSERT_EQ(4, argc);
}

TEST(environment)
{
	char l1[] = "p", l2[] = "p -- -f cmd --page-kb 8 --protocol inline";
	struct dlmlib_config c;
	char **argv;
	int argc;

	ASSERT_EQ(0, args(&c, l1, &argc, &argv));
	setenv("DLM_MEMFILE", "envfile", 1);
	setenv("DLM_PAGE_KB", "128", 1);
	setenv("DLM_LOCAL_MB", "64", 1);	/* ignored: there is a memfile */
	setenv("DLM_VERBOSE", "0", 1);
	setenv("DLM_POLICY", "arr", 1);
	setenv("DLM_PROTOCOL", "async", 1);
	ASSERT_EQ(0, dlmlib_parse_env(&c));
	ASSERT_EQ(DLM_POLICY_ARR, c.policy);
	ASSERT_EQ(DLM_PROTO_ASYNC, c.protocol);
	ASSERT_STREQ("envfile", c.memfile);
	ASSERT_STREQ("DLM_MEMFILE", c.memfile_src);
	ASSERT_EQ(128, c.page_kb);
	ASSERT_EQ(0, c.local_mb);
	ASSERT_EQ(0, c.verbose);

	/* The command line wins. */
	ASSERT_EQ(0, args(&c, l2, &argc, &argv));
	setenv("DLM_MEMFILE", "envfile", 1);
	setenv("DLM_PAGE_KB", "128", 1);
	setenv("DLM_VERBOSE", "1", 1);
	ASSERT_EQ(0, dlmlib_parse_env(&c));
	ASSERT_STREQ("cmd", c.memfile);
	ASSERT_EQ(8, c.page_kb);
	ASSERT_EQ(1, c.verbose);
	ASSERT_EQ(DLM_PROTO_INLINE, c.protocol);

	/* A protocol the kernel does not have. */
	ASSERT_EQ(0, args(&c, l1, &argc, &argv));
	setenv("DLM_PROTOCOL", "lazy", 1);
	ASSERT_EQ(-1, dlmlib_parse_env(&c));
	HAS("DLM_PROTOCOL 'lazy': want serial");

	/* No memfile: DLM_LOCAL_MB sizes the local space. */
	ASSERT_EQ(0, args(&c, l1, &argc, &argv));
	setenv("DLM_LOCAL_MB", "64", 1);
	setenv("DLM_MEMFILE", "", 1);		/* empty = unset */
	ASSERT_EQ(0, dlmlib_parse_env(&c));
	ASSERT_EQ(NULL, c.memfile);
	ASSERT_EQ(64, c.local_mb);
	setenv("DLM_LOCAL_MB", "-5", 1);
	ASSERT_EQ(-1, dlmlib_parse_env(&c));
	HAS("DLM_LOCAL_MB '-5'");
	setenv("DLM_LOCAL_MB", "64", 1);
	setenv("DLM_PAGE_KB", "lots", 1);
	ASSERT_EQ(-1, dlmlib_parse_env(&c));
	HAS("DLM_PAGE_KB 'lots'");
}

TEST(memfile_local_only)
{
	struct dlmlib_config c;

	ASSERT_EQ(0, memfile(&c, "# DLM memfile\n\n   512   # local MB\r\n# end\n"));
	ASSERT_EQ(512, c.local_mb);
	ASSERT_EQ(0, c.servers);
	ASSERT_EQ(0, memfile(&c, "1024"));	/* no final newline */
	ASSERT_EQ(1024, c.local_mb);
}

TEST(memfile_servers)
{
	struct dlmlib_config c;

	ASSERT_EQ(0, memfile(&c,
		"256\n1024 node1:7100\n\t2048\tnode2.example.org:7100 # big\n"
		"512 10.0.0.3:1\n100 [fe80::1]:65535\n7\n"));
	ASSERT_EQ(256, c.local_mb);
	ASSERT_EQ(5, c.servers);
	ASSERT_EQ(1024 + 2048 + 512 + 100 + 7, c.servers_mb);
}

TEST(memfile_errors_name_the_line)
{
	struct dlmlib_config c;

	errno = 0;
	ASSERT_EQ(-1, memfile(&c, "# nothing\n\n"));
	ASSERT_EQ(EINVAL, errno);
	HAS("first non-comment line must be the local size");
	ASSERT_EQ(-1, memfile(&c, "512 node1:7100\n"));
	HAS("mf:1: the first line is the local size in MB alone");
	ASSERT_EQ(-1, memfile(&c, "512\n\n1G node1:7100\n"));
	HAS("mf:3: '1G' is not a size in MB");
	ASSERT_EQ(-1, memfile(&c, "512\n-1\n"));
	HAS("mf:2:");
	ASSERT_EQ(-1, memfile(&c, "0\n"));
	ASSERT_EQ(-1, memfile(&c, "512\n10 node1:7100 extra\n"));
	HAS("mf:2: extra text 'extra'");
	ASSERT_EQ(-1, memfile(&c, "512\n10 node1\n"));
	HAS("'node1' is not HOST:PORT");
	ASSERT_EQ(-1, memfile(&c, "512\n10 node1:0\n"));
	ASSERT_EQ(-1, memfile(&c, "512\n10 node1:65536\n"));
	ASSERT_EQ(-1, memfile(&c, "512\n10 :7100\n"));
	ASSERT_EQ(-1, memfile(&c, "512\n10 fe80::1:7100\n"));
	ASSERT_EQ(-1, memfile(&c, "512\n10 []:7100\n"));
	ASSERT_EQ(-1, memfile(&c, "99999999999999999999\n"));
	ASSERT_EQ(-1, memfile(&c, "1073741825\n"));	/* above 1 PiB */
	ASSERT_EQ(0, memfile(&c, "1073741824\n"));
}

TEST(memfile_file)
{
	struct dlmlib_config c = { .memfile = "/nonexistent/mf", .memfile_src = "-f" };
	char path[] = "/tmp/dlm-config-test-XXXXXX";
	FILE *f;
	int fd;

	errno = 0;
	ASSERT_EQ(-1, dlmlib_read_memfile(&c));
	ASSERT_EQ(ENOENT, errno);
	HAS("cannot read memfile '/nonexistent/mf' (from -f)");

	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	f = fdopen(fd, "w");
	fprintf(f, "64\n128 host:7100\n");
	fclose(f);
	c.memfile = path;
	ASSERT_EQ(0, dlmlib_read_memfile(&c));
	unlink(path);
	ASSERT_EQ(64, c.local_mb);
	ASSERT_EQ(1, c.servers);
	ASSERT_EQ(128, c.servers_mb);
}

TEST(strerror_names_the_fix)
{
	ASSERT_NE(NULL, strstr(dlm_strerror(ENOTCONN), "start dlmd -f MEMFILE"));
	ASSERT_NE(NULL, strstr(dlm_strerror(EOPNOTSUPP), "remote"));
	ASSERT_NE(NULL, strstr(dlm_strerror(ENOENT), "modprobe dlmem"));
	ASSERT_NE(NULL, strstr(dlm_strerror(ENOSPC), "memory servers"));
	ASSERT_NE(NULL, dlm_strerror(12345));
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * The DLM-MPI paper's Fig. 3 program, userlib/examples/matvec.c, built as
 * build/bin/matvec against libdlm.so: run with a local memfile, without
 * one, with odd DLM pages and too small a space; its checksum must equal
 * the same computation over malloc() memory.
 */
#include <libgen.h>
#include <limits.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "libdlm_util.h"

/* build/bin/matvec: $DLM_BIN/bin, else relative to this program. */
static const char *matvec_path(void)
{
	static char path[PATH_MAX + 32];
	char exe[PATH_MAX];
	const char *bin = getenv("DLM_BIN");
	ssize_t n;

	if (bin) {
		snprintf(path, sizeof(path), "%s/bin/matvec", bin);
		return path;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	/* build/selftests/libdlm/matvec_test -> build */
	snprintf(path, sizeof(path), "%s/../../bin/matvec", dirname(exe));
	return path;
}

/* The same program over malloc() memory, printed the same way. */
static void reference(long n, char *out, size_t len)
{
	double (*a)[n] = malloc((size_t)n * n * sizeof(double));
	double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
	double temp, checksum = 0;
	int i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			a[i][j] = i;
	for (i = 0; i < n; i++)
		x[i] = i;
	for (i = 0; i < n; i++) {
		temp = 0;
		for (j = 0; j < n; j++)
			temp += a[i][j] * x[j];
		y[i] = temp;
	}
	for (i = 0; i < n; i++)
		checksum += y[i];
	snprintf(out, len, "matvec: N=%ld checksum=%.17g\n", n, checksum);
	free(a);
	free(x);
	free(y);
}

/* Run matvec with @args; its stdout and stderr in @out; exit status. */
static int run(const char *args, char *out, size_t len)
{
	char cmd[PATH_MAX + 1024];
	FILE *f;
	size_t n;
	int status;

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", matvec_path(), args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	status = pclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

#define MATCHES(n, args) do {						\
	char got[4096], want[128];					\
									\
	reference(n, want, sizeof(want));				\
	ASSERT_EQ(0, run(args, got, sizeof(got))) TH_LOG("%s", got);	\
	TH_LOG("%s", got);						\
	ASSERT_NE(NULL, strstr(got, want)) TH_LOG("want %s", want);	\
} while (0)

FIXTURE(matvec) {
	char args[256];
};

FIXTURE_SETUP(matvec)
{
	clear_dlm_env();
	ASSERT_EQ(0, access(matvec_path(), X_OK)) TH_LOG("%s: build it with make user",
							  matvec_path());
}

FIXTURE_TEARDOWN(matvec)
{
}

TEST_F_TIMEOUT(matvec, local_memfile, 300)
{
	snprintf(self->args, sizeof(self->args), "1000 -- -f %s",
		 memfile("# 8 MB matrix\n16\n"));
	MATCHES(1000, self->args);
}

TEST_F_TIMEOUT(matvec, no_memfile, 300)
{
	MATCHES(512, "512");
	MATCHES(1024, "");			/* the default N */
}

TEST_F_TIMEOUT(matvec, odd_dlm_pages_and_verbose, 300)
{
	snprintf(self->args, sizeof(self->args), "777 -- -f %s --page-kb 12 -v",
		 memfile("8\n"));
	MATCHES(777, self->args);
}

TEST_F_TIMEOUT(matvec, space_too_small, 300)
{
	char out[4096];

	snprintf(self->args, sizeof(self->args), "2000 -- -f %s",
		 memfile("16\n"));		/* 32 MB matrix */
	ASSERT_EQ(1, run(self->args, out, sizeof(out)));
	TH_LOG("%s", out);
	ASSERT_NE(NULL, strstr(out, "matvec: dlm_alloc("));
	ASSERT_NE(NULL, strstr(out, "memfile"));
}

#include "../dlm/dlm_main.h"

// SPDX-License-Identifier: GPL-2.0
/*
 * The `dlm` declaration specifier: arrays declared with it live in the DLM
 * space from before main() (the process's default local space here: no
 * DLM_* environment), hold their data, leave the rest of the space to
 * dlm_alloc(), and dlm_startup()/dlm_shutdown() keep them valid.
 */
#include <inttypes.h>
#include <sys/param.h>

#include "kselftest_harness.h"
#include "libdlm_util.h"

#define BIG_WORDS	(3 * MB)	/* 24 MB of uint64_t */

dlm uint64_t big[BIG_WORDS];
dlm char odd[5000];			/* not a multiple of a page */
static dlm int counter;

/* The /proc/self/maps line holding @p: its range and whether it maps
 * /dev/dlm.  0, or -1 if there is none. */
static int mapping_of(const void *p, uintptr_t *lo, uintptr_t *hi, int *is_dlm)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int ret = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t a, b;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &a, &b) != 2)
			continue;
		if ((uintptr_t)p >= a && (uintptr_t)p < b) {
			*lo = a;
			*hi = b;
			*is_dlm = strstr(line, DLM_DEV) != NULL;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

static struct dlm_lib_stats stats(void)
{
	struct dlm_lib_stats st;

	memset(&st, 0xaa, sizeof(st));
	if (dlm_stats(&st))
		memset(&st, 0xaa, sizeof(st));
	return st;
}

TEST(arrays_are_mapped_from_dev_dlm)
{
	uintptr_t lo, hi;
	int is_dlm;

	ASSERT_EQ(0, mapping_of(big, &lo, &hi, &is_dlm));
	ASSERT_TRUE(is_dlm);
	ASSERT_GE((uintptr_t)big, lo);
	ASSERT_LE((uintptr_t)(big + BIG_WORDS), hi);
	ASSERT_EQ(0, mapping_of(&odd[4999], &lo, &hi, &is_dlm));
	ASSERT_TRUE(is_dlm);
	ASSERT_EQ(0, mapping_of(&counter, &lo, &hi, &is_dlm));
	ASSERT_TRUE(is_dlm);
	ASSERT_EQ(0, (uintptr_t)big % 4096);
	ASSERT_EQ(0, (uintptr_t)&counter % 4096);
	/* Ordinary static data is not. */
	ASSERT_EQ(0, mapping_of(&optind, &lo, &hi, &is_dlm));
	ASSERT_FALSE(is_dlm);
}

TEST(arrays_start_zero_and_hold_data)
{
	struct dlm_lib_stats before = stats(), after;
	uint64_t i, bad = 0;

	ASSERT_EQ(0, counter);
	for (i = 0; i < sizeof(odd); i++)
		bad += odd[i] != 0;
	for (i = 0; i < BIG_WORDS; i += 4096)
		bad += big[i] != 0;
	ASSERT_EQ(0, bad);

	for (i = 0; i < BIG_WORDS; i++)
		big[i] = dlm_pattern(i, 7);
	for (i = 0; i < sizeof(odd); i++)
		odd[i] = (char)(i * 13);
	counter = 42;
	for (i = 0; i < BIG_WORDS; i++)
		bad += big[i] != dlm_pattern(i, 7);
	for (i = 0; i < sizeof(odd); i++)
		bad += odd[i] != (char)(i * 13);
	ASSERT_EQ(0, bad);
	ASSERT_EQ(42, counter);

	after = stats();
	ASSERT_LT(before.faults, after.faults);
	ASSERT_LE(BIG_WORDS * sizeof(uint64_t), after.bytes_mapped);
}

TEST(dlm_alloc_gets_the_rest_of_the_space)
{
	struct dlm_lib_stats st = stats();
	uintptr_t first = (uintptr_t)big, end = (uintptr_t)(big + BIG_WORDS);
	uint64_t span;
	uintptr_t lo, hi;
	uint64_t *p;
	int is_dlm;

	/* The section: the three arrays, in whatever order the linker put
	 * them; it takes whole DLM pages of the space. */
	first = MIN(first, MIN((uintptr_t)odd, (uintptr_t)&counter));
	end = MAX(end, MAX((uintptr_t)(odd + sizeof(odd)),
			   (uintptr_t)(&counter + 1)));
	span = (end - first + st.page_size - 1) / st.page_size * st.page_size;
	ASSERT_GE(span, sizeof(big) + 2 * 4096);
	ASSERT_EQ(st.total_size - span, st.bytes_free);
	ASSERT_EQ(0, st.bytes_allocated);
	p = dlm_alloc(2 * MB);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, mapping_of(p, &lo, &hi, &is_dlm));
	ASSERT_TRUE(is_dlm);
	ASSERT_TRUE((uintptr_t)(p + 2 * MB / 8) <= first ||
		    (uintptr_t)p >= end);
	p[0] = 1;
	p[2 * MB / 8 - 1] = 2;
	big[0] = 3;
	ASSERT_EQ(1, p[0]);
	ASSERT_EQ(2, p[2 * MB / 8 - 1]);
	dlm_free(p);
	/* More than the free part fails cleanly. */
	ASSERT_EQ(NULL, dlm_alloc(st.total_size - span + 1));
	ASSERT_EQ(ENOMEM, errno);
}

TEST(startup_only_cuts_its_separator)
{
	struct cmdline c;

	ASSERT_EQ(0, startup_cmd(&c, "prog a b --"));
	ASSERT_EQ(3, c.argc);
	ASSERT_STREQ("b", c.argv[2]);
	ASSERT_EQ(NULL, c.argv[3]);

	ASSERT_EQ(-1, startup_cmd(&c, "prog a -- -f /nonexistent"));
	ASSERT_EQ(EBUSY, errno);
	ASSERT_NE(NULL, strstr(dlm_last_error(), "environment"));
	ASSERT_EQ(5, c.argc);		/* unchanged on failure */
}

TEST(shutdown_keeps_the_arrays)
{
	big[BIG_WORDS - 1] = 99;
	ASSERT_EQ(0, dlm_shutdown());
	ASSERT_EQ(99, big[BIG_WORDS - 1]);
	ASSERT_EQ(0, dlm_stats(&(struct dlm_lib_stats){ 0 }));
	ASSERT_NE(NULL, dlm_alloc(64));
}

TEST_HARNESS_MAIN

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * main() for the /dev/fmpl selftests: skip the whole program (kselftest
 * exit code 4) when the device is not there, as the uffd selftests do,
 * else run the harness.
 */
#ifndef FMPL_SELFTEST_MAIN_H
#define FMPL_SELFTEST_MAIN_H

#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (access(FMPL_DEV, R_OK | W_OK)) {
		printf("TAP version 13\n1..0 # SKIP %s not present (CONFIG_DLMEM_FMPL): load dlmem.ko built with it\n",
		       FMPL_DEV);
		return KSFT_SKIP;
	}
	return test_harness_run(argc, argv);
}

#endif /* FMPL_SELFTEST_MAIN_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * main() for the /dev/dlm selftests: skip the whole program (kselftest exit
 * code 4) when the device is not there, else run the harness.
 */
#ifndef DLM_SELFTEST_MAIN_H
#define DLM_SELFTEST_MAIN_H

#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (access(DLM_DEV, R_OK | W_OK)) {
		printf("TAP version 13\n1..0 # SKIP %s not accessible (load dlmem.ko: insmod kmod/dlmem.ko)\n",
		       DLM_DEV);
		return KSFT_SKIP;
	}
	return test_harness_run(argc, argv);
}

#endif /* DLM_SELFTEST_MAIN_H */

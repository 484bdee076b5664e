// SPDX-License-Identifier: GPL-2.0
/*
 * dlm_hold - helper of dlm_module_test.sh: map and fill a DLM space, say
 * "ready", wait for a line (or EOF) on stdin, check the data, exit 0 if it
 * is intact.
 */
#include <stdio.h>

#include "dlm_util.h"

int main(void)
{
	uint64_t size = 8 * MB, i, *w;
	char line[16];
	int fd;

	w = dlm_map(&fd, 1 * MB, size, size);
	if (w == MAP_FAILED) {
		perror("dlm_hold: dlm_map");
		return 2;
	}
	for (i = 0; i < size / 8; i++)
		w[i] = dlm_pattern(i, 42);
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	for (i = 0; i < size / 8; i++)
		if (w[i] != dlm_pattern(i, 42)) {
			fprintf(stderr, "dlm_hold: word %llu changed\n",
				(unsigned long long)i);
			return 1;
		}
	return 0;
}

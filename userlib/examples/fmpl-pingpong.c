// SPDX-License-Identifier: GPL-2.0
/*
 * fmpl-pingpong - a first FMPL program: ranks 0 and 1 bounce a message,
 * every rank adds up its rank number with an allreduce, and all meet in a
 * barrier.
 *
 *   cc fmpl-pingpong.c $(pkg-config --cflags --libs fmpl) -o fmpl-pingpong
 *   fmplrun -np 2 ./fmpl-pingpong [BYTES [ROUNDS]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fmpl.h>

#define PING	0		/* matching indices: 0 and 1 ... */
#define PONG	1
#define COUNT	2		/* ... so fmpl_init gets count 2 */

/* Stop the program if an FMPL call failed. */
static void check(int ier, const char *what)
{
	if (ier != FMPL_SUCCESS) {
		fprintf(stderr, "fmpl-pingpong: %s: %s\n", what,
			fmpl_strerror(ier));
		exit(1);
	}
}

/* The byte at @i of round @round's message (different every round). */
static unsigned char pattern(size_t i, int round)
{
	return (unsigned char)(i * 7 + round * 13 + 1);
}

int main(int argc, char **argv)
{
	size_t bytes = argc > 1 ? strtoul(argv[1], NULL, 0) : 4096;
	int rounds = argc > 2 ? atoi(argv[2]) : 1000;
	int rank, size, ier, r;
	unsigned char *buf;
	double t0, t1;
	int sum, work;

	/* NULL, NULL: libfmpl allocates the matching and flag areas. */
	fmpl_init(NULL, NULL, COUNT, &ier);
	check(ier, "fmpl_init");
	fmpl_comm_rank(FMPL_COMM_WORLD, &rank, &ier);
	fmpl_comm_size(FMPL_COMM_WORLD, &size, &ier);
	check(ier, "fmpl_comm_size");

	buf = malloc(bytes ? bytes : 1);
	if (!buf || rounds < 1) {
		fprintf(stderr, "fmpl-pingpong: usage: fmpl-pingpong [BYTES [ROUNDS >= 1]]\n");
		return 1;
	}

	/* 1. Ping-pong between ranks 0 and 1, every message checked. */
	if (size >= 2 && rank < 2) {
		t0 = fmpl_wtime();
		for (r = 0; r < rounds; r++) {
			size_t i;

			if (rank == 0) {
				for (i = 0; i < bytes; i++)
					buf[i] = pattern(i, r);
				fmpl_send(buf, bytes, 1, PING, FMPL_COMM_WORLD, &ier);
				check(ier, "fmpl_send");
				memset(buf, 0, bytes);
				fmpl_recv(buf, bytes, 1, PONG, FMPL_COMM_WORLD, &ier);
				check(ier, "fmpl_recv");
			} else {
				fmpl_recv(buf, bytes, 0, PING, FMPL_COMM_WORLD, &ier);
				check(ier, "fmpl_recv");
				fmpl_send(buf, bytes, 0, PONG, FMPL_COMM_WORLD, &ier);
				check(ier, "fmpl_send");
			}
			/* Rank 0 got back what it sent; rank 1 what rank 0 sent. */
			for (i = 0; i < bytes; i++) {
				if (buf[i] != pattern(i, r)) {
					fprintf(stderr, "rank %d: round %d: byte %zu is %u, not %u\n",
						rank, r, i, buf[i], pattern(i, r));
					return 1;
				}
			}
		}
		t1 = fmpl_wtime();
		if (rank == 0)
			printf("ping-pong: %d rounds of %zu bytes, data checked: %.2f us one way, %.1f MB/s\n",
			       rounds, bytes, (t1 - t0) * 1e6 / rounds / 2,
			       bytes * 2.0 * rounds / (t1 - t0) / 1e6);
	} else if (size < 2 && rank == 0) {
		printf("ping-pong: needs 2 ranks (fmplrun -np 2), skipped\n");
	}

	/*
	 * 2. Every rank contributes its rank: the sum is 0 + 1 + ... + size-1.
	 * work receives the partners' values (as many elements as sum).
	 */
	sum = rank;
	fmpl_allreduce(&sum, 1, &fmpl_isum, FMPL_COMM_WORLD, &work, &ier);
	check(ier, "fmpl_allreduce");
	if (sum != size * (size - 1) / 2) {
		fprintf(stderr, "rank %d: allreduce gave %d, not %d\n", rank,
			sum, size * (size - 1) / 2);
		return 1;
	}
	if (rank == 0)
		printf("allreduce: sum of the ranks 0..%d is %d, right\n",
		       size - 1, sum);

	/* 3. Everybody waits for everybody. */
	fmpl_barrier(FMPL_COMM_WORLD, &ier);
	check(ier, "fmpl_barrier");
	if (rank == 0)
		printf("barrier: all %d ranks passed\n", size);

	free(buf);
	fmpl_finalize(&ier);
	check(ier, "fmpl_finalize");
	return 0;
}

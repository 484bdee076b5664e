// SPDX-License-Identifier: GPL-2.0
/*
 * radix_mpi - SPLASH-2-style RADIX with MPI: the same LSD radix sort as
 * radix_awg, the keys partitioned over the ranks.  Per pass each rank
 * counts the digits of its part, the histograms are exchanged
 * (MPI_Allgather), each rank computes where each of its keys goes (the
 * same global prefix as radix_awg) and sends the keys to the ranks whose
 * part holds those places (MPI_Alltoall of the counts, MPI_Alltoallv of
 * (place, key) pairs).  At the end rank 0 gathers the sorted keys
 * (MPI_Gatherv, timed: the result is then on one node, as in the AWG
 * version where node 0 reads it from its replica) and checks them.
 */
#include "mpi_common.h"

static const char *prog = "radix_mpi";

/* The rank whose part of the n places holds place @to. */
static int owner_of(uint64_t to, uint64_t n, int size)
{
	int q = (int)(to * (uint64_t)size / n);
	uint64_t lo, hi;

	for (;;) {
		splash_part(n, (unsigned int)size, (unsigned int)q, &lo, &hi);
		if (to < lo)
			q--;
		else if (to >= hi)
			q++;
		else
			return q;
	}
}

static const char *usage_text =
"Usage: %s [OPTIONS]   (under mpirun -np N)\n"
"SPLASH-2-style radix sort with MPI (one rank per node).\n"
"  -n, --keys N        keys (default 4096)\n"
"  -r, --radix R       radix, a power of two 2..65536 (default 256)\n"
"  -m, --max-key M     keys are in [0, M) (default 65536)\n"
"  -h, --help          this text\n";

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "keys", required_argument, NULL, 'n' },
		{ "radix", required_argument, NULL, 'r' },
		{ "max-key", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	uint64_t n = 4096, radix = 256, max_key = 1 << 16, lo, hi, i, sum, *off;
	uint64_t *hist_all, *cnt, *out, *in;
	int *scnt, *sdsp, *rcnt, *rdsp, *pos, *dest, *gcnt = NULL, *gdsp = NULL;
	uint64_t *tmp;
	unsigned int bits, passes, pass, shift, d;
	uint32_t *keys, *all = NULL;
	int c, q, bad = 0;
	char why[200];

	while ((c = getopt_long(argc, argv, "n:r:m:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			n = (uint64_t)splash_num(prog, "--keys", optarg, 1, 1L << 28);
			break;
		case 'r':
			radix = (uint64_t)splash_num(prog, "--radix", optarg, 2, 65536);
			break;
		case 'm':
			max_key = (uint64_t)splash_num(prog, "--max-key", optarg, 2, 1L << 31);
			break;
		case 'h':
			mpib_usage(usage_text, prog, 0);
		default:
			mpib_usage(usage_text, prog, 2);
		}
	}
	if (optind < argc || (radix & (radix - 1)))
		mpib_usage(usage_text, prog, 2);
	bits = (unsigned int)__builtin_ctzll(radix);
	for (passes = 0; passes * bits < 64 && (max_key - 1) >> (passes * bits); passes++)
		;
	if (!passes)
		passes = 1;

	mpib_init(&argc, &argv);
	splash_part(n, (unsigned int)mb.size, (unsigned int)mb.rank, &lo, &hi);
	keys = malloc((hi - lo + 1) * sizeof(*keys));
	cnt = calloc(radix, sizeof(*cnt));
	off = calloc(radix, sizeof(*off));
	hist_all = malloc((uint64_t)mb.size * radix * sizeof(*hist_all));
	out = malloc((hi - lo + 1) * sizeof(*out));
	in = malloc((n / mb.size + 2) * sizeof(*in));
	scnt = calloc(mb.size, sizeof(int));
	sdsp = calloc(mb.size, sizeof(int));
	rcnt = calloc(mb.size, sizeof(int));
	rdsp = calloc(mb.size, sizeof(int));
	pos = calloc(mb.size, sizeof(int));
	dest = malloc((hi - lo + 1) * sizeof(int));
	tmp = malloc((hi - lo + 1) * sizeof(*tmp));
	if (!keys || !cnt || !off || !hist_all || !out || !in || !scnt || !sdsp ||
	    !rcnt || !rdsp || !pos || !dest || !tmp)
		splash_die(prog, "out of memory");
	for (i = lo; i < hi; i++)
		keys[i - lo] = splash_radix_key(i, (uint32_t)max_key);

	mpib_start();
	for (pass = 0; pass < passes; pass++) {
		shift = pass * bits;
		memset(cnt, 0, radix * sizeof(*cnt));
		for (i = lo; i < hi; i++)
			cnt[(keys[i - lo] >> shift) & (radix - 1)]++;
		MPI_Allgather(cnt, (int)radix, MPI_UINT64_T, hist_all, (int)radix,
			      MPI_UINT64_T, MPI_COMM_WORLD);
		mpib_count(radix * 8 * (mb.size - 1));
		for (d = 0, sum = 0; d < radix; d++) {
			off[d] = sum;
			for (q = 0; q < mb.size; q++) {
				if (q < mb.rank)
					off[d] += hist_all[(uint64_t)q * radix + d];
				sum += hist_all[(uint64_t)q * radix + d];
			}
		}
		/*
		 * Each key's place, as (place << 32 | key), bucketed (stably)
		 * by the rank whose part holds the place.
		 */
		memset(scnt, 0, mb.size * sizeof(int));
		for (i = lo; i < hi; i++) {
			uint64_t to = off[(keys[i - lo] >> shift) & (radix - 1)]++;

			dest[i - lo] = owner_of(to, n, mb.size);
			tmp[i - lo] = to << 32 | keys[i - lo];
			scnt[dest[i - lo]]++;
		}
		for (q = 0, sdsp[0] = 0; q + 1 < mb.size; q++)
			sdsp[q + 1] = sdsp[q] + scnt[q];
		memcpy(pos, sdsp, mb.size * sizeof(int));
		for (i = 0; i < hi - lo; i++)
			out[pos[dest[i]]++] = tmp[i];
		MPI_Alltoall(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, MPI_COMM_WORLD);
		mpib_count(sizeof(int) * (mb.size - 1));
		for (q = 0, rdsp[0] = 0; q + 1 < mb.size; q++)
			rdsp[q + 1] = rdsp[q] + rcnt[q];
		MPI_Alltoallv(out, scnt, sdsp, MPI_UINT64_T, in, rcnt, rdsp, MPI_UINT64_T,
			      MPI_COMM_WORLD);
		mpib_count(8ULL * (hi - lo - scnt[mb.rank]));
		for (i = 0; i < hi - lo; i++)
			keys[(in[i] >> 32) - lo] = (uint32_t)in[i];
	}
	/* The result on rank 0. */
	if (mb.rank == 0) {
		all = malloc(n * sizeof(*all));
		gcnt = malloc(mb.size * sizeof(int));
		gdsp = malloc(mb.size * sizeof(int));
		if (!all || !gcnt || !gdsp)
			splash_die(prog, "out of memory");
		for (q = 0; q < mb.size; q++) {
			uint64_t plo, phi;

			splash_part(n, (unsigned int)mb.size, (unsigned int)q, &plo, &phi);
			gcnt[q] = (int)(phi - plo);
			gdsp[q] = (int)plo;
		}
	}
	MPI_Gatherv(keys, (int)(hi - lo), MPI_UINT32_T, all, gcnt, gdsp, MPI_UINT32_T, 0,
		    MPI_COMM_WORLD);
	if (mb.rank)
		mpib_count(4 * (hi - lo));
	mpib_stop();

	if (mb.rank == 0) {
		if (splash_corrupt())
			all[0]++;
		bad = splash_radix_check(all, n, (uint32_t)max_key, &sum, why, sizeof(why));
		printf("RESULT kernel=radix version=mpi tuned=0 nodes=%d n=%llu radix=%llu "
		       "max_key=%llu passes=%u ", mb.size, (unsigned long long)n,
		       (unsigned long long)radix, (unsigned long long)max_key, passes);
	}
	mpib_print();
	if (mb.rank == 0) {
		printf("checksum=%016llx verify=%s\n", (unsigned long long)sum,
		       bad ? "FAIL" : "ok");
		if (bad)
			fprintf(stderr, "%s: FAIL: %s\n", prog, why);
	}
	MPI_Finalize();
	return bad;
}

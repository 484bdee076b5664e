// SPDX-License-Identifier: GPL-2.0
/*
 * radix_awg - SPLASH-2-style RADIX on the AWG-STAR board: an LSD radix
 * sort of n integer keys in [0, max_key), one pass per digit of
 * log2(radix) bits, the keys partitioned over the nodes.
 *
 * Shared (in the region): the keys, twice (source and destination of a
 * pass), and every node's histogram of the current digit.  Per pass, each
 * node counts the digits of its part of the source, writes its histogram
 * (radix board writes), waits at a barrier, computes from all the
 * histograms where each of its keys goes (global prefix: keys of smaller
 * digits, then keys of the same digit on lower nodes) and writes each key
 * there (one board write per key), then a barrier.  --tuned writes the
 * histogram with one awg_write and each node's run of keys of one digit
 * with one awg_write (at most 1 + radix writes per pass).
 *
 * Node 0 checks that the result is sorted and a permutation of the input
 * (a checksum of the keys as a multiset).
 */
#include "awg_common.h"

static const char *prog = "radix_awg";

static void __attribute__((noreturn)) usage(int status)
{
	fprintf(status ? stderr : stdout,
"Usage: %s [OPTIONS]\n"
"SPLASH-2-style radix sort on the AWG-STAR board (one process per node).\n"
"  -n, --keys N        keys (default 4096)\n"
"  -r, --radix R       radix, a power of two 2..65536 (default 256)\n"
"  -m, --max-key M     keys are in [0, M) (default 65536)\n"
"  -t, --tuned         one awg_write for the histogram and for each run of keys\n"
"                      of one digit, instead of one write per count and key\n"
"  -h, --help          this text\n"
AWGB_HELP, prog);
	exit(status);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "keys", required_argument, NULL, 'n' },
		{ "radix", required_argument, NULL, 'r' },
		{ "max-key", required_argument, NULL, 'm' },
		{ "tuned", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		AWGB_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 }
	};
	uint64_t n = 4096, radix = 256, max_key = 1 << 16, lo, hi, i, keys_off[2];
	uint64_t hist_off, sum, *off, *cnt, *run_start;
	unsigned int bits, passes, pass, q, d, shift;
	struct awgb_opts o = { 0 };
	uint32_t *buf, *src, *cnt32, key;
	int c, tuned = 0, bad;
	struct awgb b;
	char why[200];

	while ((c = getopt_long(argc, argv, "n:r:m:th", lopts, NULL)) != -1) {
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
		case 't':
			tuned = 1;
			break;
		case 'h':
			usage(0);
		default:
			if (!awgb_option(prog, c, optarg, &o))
				usage(2);
		}
	}
	if (optind < argc || (radix & (radix - 1)))
		usage(2);
	bits = (unsigned int)__builtin_ctzll(radix);
	for (passes = 0; passes * bits < 64 && (max_key - 1) >> (passes * bits); passes++)
		;
	if (!passes)
		passes = 1;

	awgb_open(&b, prog, &o);
	keys_off[0] = 0;
	keys_off[1] = (n * 4 + 63) & ~63ULL;
	hist_off = 2 * keys_off[1];
	awgb_need(&b, hist_off + (uint64_t)b.nodes * radix * 4);
	splash_part(n, b.nodes, b.node, &lo, &hi);
	buf = malloc((hi - lo + 1) * 4);
	cnt = calloc(radix, sizeof(*cnt));
	off = calloc(radix, sizeof(*off));
	run_start = calloc(radix, sizeof(*run_start));
	cnt32 = calloc(radix, sizeof(*cnt32));
	if (!buf || !cnt || !off || !run_start || !cnt32)
		splash_die(prog, "out of memory");

	/* This node's part of the input (not timed). */
	for (i = lo; i < hi; i++)
		buf[i - lo] = splash_radix_key(i, (uint32_t)max_key);
	if (hi > lo)
		awgb_write(&b, keys_off[0] + lo * 4, buf, (hi - lo) * 4);

	awgb_start(&b);
	for (pass = 0; pass < passes; pass++) {
		const uint32_t *hist = (const uint32_t *)(b.map + hist_off);
		uint64_t to = keys_off[(pass + 1) % 2];

		shift = pass * bits;
		src = (uint32_t *)(b.map + keys_off[pass % 2]);
		memset(cnt, 0, radix * sizeof(*cnt));
		for (i = lo; i < hi; i++)
			cnt[(src[i] >> shift) & (radix - 1)]++;
		if (!tuned) {
			for (d = 0; d < radix; d++)
				awgb_poke32(&b, hist_off + ((uint64_t)b.node * radix + d) * 4,
					    (uint32_t)cnt[d]);
		} else {
			for (d = 0; d < radix; d++)
				cnt32[d] = (uint32_t)cnt[d];
			awgb_write(&b, hist_off + (uint64_t)b.node * radix * 4, cnt32, radix * 4);
		}
		awgb_barrier(&b);
		/* Global prefix from every node's histogram (local reads). */
		for (d = 0, sum = 0; d < radix; d++) {
			off[d] = sum;
			for (q = 0; q < b.nodes; q++) {
				if (q < b.node)
					off[d] += hist[(uint64_t)q * radix + d];
				sum += hist[(uint64_t)q * radix + d];
			}
		}
		if (!tuned) {
			for (i = lo; i < hi; i++) {
				key = src[i];
				d = (key >> shift) & (radix - 1);
				awgb_poke32(&b, to + off[d]++ * 4, key);
			}
		} else {
			/* Runs of one digit, built locally, one write each. */
			for (d = 0, sum = 0; d < radix; d++) {
				run_start[d] = sum;
				sum += cnt[d];
			}
			for (i = lo; i < hi; i++) {
				key = src[i];
				d = (key >> shift) & (radix - 1);
				buf[run_start[d]++] = key;
			}
			for (d = 0, sum = 0; d < radix; d++) {
				if (cnt[d])
					awgb_write(&b, to + off[d] * 4, buf + sum, cnt[d] * 4);
				sum += cnt[d];
			}
		}
		awgb_barrier(&b);
	}
	awgb_stop(&b);

	bad = 0;
	if (b.node == 0) {
		src = (uint32_t *)(b.map + keys_off[passes % 2]);
		if (splash_corrupt())
			src[0]++;	/* a pointer store into the replica */
		bad = splash_radix_check(src, n, (uint32_t)max_key, &sum, why, sizeof(why));
		printf("RESULT kernel=radix version=awg tuned=%d nodes=%u n=%llu radix=%llu "
		       "max_key=%llu passes=%u ", tuned, b.nodes, (unsigned long long)n,
		       (unsigned long long)radix, (unsigned long long)max_key, passes);
		awgb_print(&b);
		printf("checksum=%016llx verify=%s\n", (unsigned long long)sum,
		       bad ? "FAIL" : "ok");
		if (bad)
			fprintf(stderr, "%s: FAIL: %s\n", prog, why);
	}
	/* Nobody leaves (and may start overwriting) before node 0 has checked. */
	awgb_barrier(&b);
	awgb_close(&b);
	free(buf);
	free(cnt);
	free(off);
	free(run_start);
	free(cnt32);
	return bad;
}

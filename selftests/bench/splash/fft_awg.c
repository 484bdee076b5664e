// SPDX-License-Identifier: GPL-2.0
/*
 * fft_awg - SPLASH-2-style FFT on the AWG-STAR board: the complex 1-D FFT
 * of N = 2^m points (m even) by the six-step method, the points as a
 * sqrt(N) x sqrt(N) matrix whose rows are split over the nodes:
 *
 *   transpose X -> T;  FFT of each row of T, times the twiddles w_N^(r c);
 *   transpose T -> X;  FFT of each row of X;  transpose X -> T = result,
 *
 * a barrier after each step.  Each node writes only its own rows; a
 * transpose reads everybody's (locally, from the replica).  Untuned, as
 * the seed report's programs: the row FFTs run in place in the region and
 * every store of a complex element (16 bytes) is one board write
 * (awg_write), as is every element of a transpose; --tuned computes each
 * row in local memory and writes it with one awg_write.
 *
 * Node 0 compares the result with a sequential radix-2 FFT of the input
 * (itself checked against the naive DFT for N <= 4096).
 */
#include "awg_common.h"

static const char *prog = "fft_awg";

static struct awgb b;
static uint64_t rows;		/* sqrt(N): the order of the matrix */
static int tuned;
static splash_cplx *row;	/* one row, local (tuned) */
static splash_cplx *tw;		/* w_rows^k, k < rows / 2 */

static inline splash_cplx *cat(uint64_t off)
{
	return (splash_cplx *)(b.map + off);
}

static inline void put(splash_cplx *x, uint64_t off, uint64_t k, splash_cplx v)
{
	if (tuned)
		x[k] = v;
	else
		awgb_write(&b, off + k * sizeof(v), &v, sizeof(v));
}

/* In-place radix-2 FFT of the row at @off (length rows). */
static void fft_row(uint64_t off, const splash_cplx *twiddle_row)
{
	splash_cplx *x = tuned ? row : cat(off);
	uint64_t i, j, k, len, step;

	if (tuned)
		memcpy(row, cat(off), rows * sizeof(*row));
	for (i = 1, j = 0; i < rows; i++) {
		uint64_t bit = rows >> 1;

		for (; j & bit; bit >>= 1)
			j ^= bit;
		j ^= bit;
		if (i < j) {
			splash_cplx t = x[i], u = x[j];

			put(x, off, i, u);
			put(x, off, j, t);
		}
	}
	for (len = 2; len <= rows; len <<= 1) {
		step = rows / len;
		for (i = 0; i < rows; i += len) {
			for (k = 0; k < len / 2; k++) {
				splash_cplx u = x[i + k];
				splash_cplx v = splash_cmul(x[i + k + len / 2], tw[k * step]);
				splash_cplx s = { u.re + v.re, u.im + v.im };
				splash_cplx d = { u.re - v.re, u.im - v.im };

				put(x, off, i + k, s);
				put(x, off, i + k + len / 2, d);
			}
		}
	}
	/* The six-step method's twiddles: element c times w_N^(r c). */
	if (twiddle_row)
		for (k = 0; k < rows; k++)
			put(x, off, k, splash_cmul(x[k], twiddle_row[k]));
	if (tuned)
		awgb_write(&b, off, row, rows * sizeof(*row));
}

/* Rows [lo, hi) of @to = the transpose of @from. */
static void transpose(uint64_t to, uint64_t from, uint64_t lo, uint64_t hi)
{
	const splash_cplx *src = cat(from);
	uint64_t r, c;

	for (r = lo; r < hi; r++) {
		for (c = 0; c < rows; c++)
			put(row, to + r * rows * sizeof(*row), c, src[c * rows + r]);
		if (tuned)
			awgb_write(&b, to + r * rows * sizeof(*row), row, rows * sizeof(*row));
	}
}

static void __attribute__((noreturn)) usage(int status)
{
	fprintf(status ? stderr : stdout,
"Usage: %s [OPTIONS]\n"
"SPLASH-2-style six-step FFT on the AWG-STAR board (one process per node).\n"
"  -m, --log2 M        2^M complex points, M even, 2..24 (default 8)\n"
"  -t, --tuned         compute each row in local memory, one awg_write back\n"
"  -h, --help          this text\n"
AWGB_HELP, prog);
	exit(status);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "log2", required_argument, NULL, 'm' },
		{ "tuned", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		AWGB_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 }
	};
	uint64_t npts, xoff, toff, lo, hi, r, c, bytes;
	splash_cplx *twr = NULL;
	struct awgb_opts o = { 0 };
	int opt, bad = 0, m = 8;
	double err;

	while ((opt = getopt_long(argc, argv, "m:th", lopts, NULL)) != -1) {
		switch (opt) {
		case 'm':
			m = (int)splash_num(prog, "--log2", optarg, 2, 24);
			break;
		case 't':
			tuned = 1;
			break;
		case 'h':
			usage(0);
		default:
			if (!awgb_option(prog, opt, optarg, &o))
				usage(2);
		}
	}
	if (optind < argc)
		usage(2);
	if (m % 2)
		splash_die(prog, "--log2 %d: the six-step method wants it even", m);
	npts = 1ULL << m;
	rows = 1ULL << (m / 2);
	bytes = npts * sizeof(splash_cplx);

	awgb_open(&b, prog, &o);
	xoff = 0;
	toff = bytes;
	awgb_need(&b, 2 * bytes);
	splash_part(rows, b.nodes, b.node, &lo, &hi);
	row = malloc(rows * sizeof(*row));
	tw = malloc(rows / 2 * sizeof(*tw));
	twr = malloc(rows * sizeof(*twr));
	if (!row || !tw || !twr)
		splash_die(prog, "out of memory");
	for (c = 0; c < rows / 2; c++)
		tw[c] = splash_root(c, rows);

	/* This node's rows of the input (not timed). */
	for (r = lo; r < hi; r++) {
		for (c = 0; c < rows; c++)
			row[c] = splash_fft_input(r * rows + c);
		awgb_write(&b, xoff + r * rows * sizeof(*row), row, rows * sizeof(*row));
	}

	awgb_start(&b);
	transpose(toff, xoff, lo, hi);
	awgb_barrier(&b);
	for (r = lo; r < hi; r++) {
		for (c = 0; c < rows; c++)
			twr[c] = splash_root(r * c, npts);
		fft_row(toff + r * rows * sizeof(*row), twr);
	}
	awgb_barrier(&b);
	transpose(xoff, toff, lo, hi);
	awgb_barrier(&b);
	for (r = lo; r < hi; r++)
		fft_row(xoff + r * rows * sizeof(*row), NULL);
	awgb_barrier(&b);
	transpose(toff, xoff, lo, hi);
	awgb_stop(&b);

	if (b.node == 0) {
		if (splash_corrupt())
			cat(toff)[0].re += 1.0;	/* a pointer store */
		err = splash_fft_check(cat(toff), npts);
		bad = !(err < 1e-10);
		printf("RESULT kernel=fft version=awg tuned=%d nodes=%u n=%llu m=%d ",
		       tuned, b.nodes, (unsigned long long)npts, m);
		awgb_print(&b);
		printf("error=%.3e verify=%s\n", err, bad ? "FAIL" : "ok");
		if (bad)
			fprintf(stderr, "%s: FAIL: max |X - ref| / max |ref| = %g\n", prog, err);
	}
	awgb_barrier(&b);
	awgb_close(&b);
	free(row);
	free(tw);
	free(twr);
	return bad;
}

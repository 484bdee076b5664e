// SPDX-License-Identifier: GPL-2.0
/*
 * fft_mpi - SPLASH-2-style FFT with MPI: the same six-step FFT of 2^m
 * points as fft_awg, the rows of the sqrt(N) x sqrt(N) matrix split over
 * the ranks and held locally.  The row FFTs and twiddles are local; each
 * of the three transposes is one MPI_Alltoallv (rank p sends rank q the
 * block of its rows and q's columns, packed transposed).  At the end rank
 * 0 gathers the result (MPI_Gatherv, timed) and compares it with the
 * sequential FFT.
 */
#include "mpi_common.h"

static const char *prog = "fft_mpi";

static uint64_t rows, lo, hi;
static splash_cplx *tw;
static int *scnt, *sdsp, *rcnt, *rdsp;
static uint64_t *plo, *phi;	/* every rank's rows */

static void fft_row(splash_cplx *x, const splash_cplx *twiddle_row)
{
	uint64_t i, k, len, step;

	splash_bitrev(x, rows);
	for (len = 2; len <= rows; len <<= 1) {
		step = rows / len;
		for (i = 0; i < rows; i += len) {
			for (k = 0; k < len / 2; k++) {
				splash_cplx u = x[i + k];
				splash_cplx v = splash_cmul(x[i + k + len / 2], tw[k * step]);

				x[i + k].re = u.re + v.re;
				x[i + k].im = u.im + v.im;
				x[i + k + len / 2].re = u.re - v.re;
				x[i + k + len / 2].im = u.im - v.im;
			}
		}
	}
	if (twiddle_row)
		for (k = 0; k < rows; k++)
			x[k] = splash_cmul(x[k], twiddle_row[k]);
}

/*
 * @to (my rows of the transpose) from @from (my rows): rank q gets the
 * block rows [lo, hi) x columns [plo[q], phi[q]), column by column.
 */
static void transpose(splash_cplx *to, const splash_cplx *from, splash_cplx *sbuf,
		      splash_cplx *rbuf)
{
	uint64_t r, c, k = 0;
	int q;

	for (q = 0; q < mb.size; q++)
		for (c = plo[q]; c < phi[q]; c++)
			for (r = lo; r < hi; r++)
				sbuf[k++] = from[(r - lo) * rows + c];
	MPI_Alltoallv(sbuf, scnt, sdsp, MPI_DOUBLE, rbuf, rcnt, rdsp, MPI_DOUBLE,
		      MPI_COMM_WORLD);
	mpib_count(16ULL * (hi - lo) * (rows - (hi - lo)));
	/* from q: my rows c, its rows r, in that order */
	for (q = 0, k = 0; q < mb.size; q++)
		for (c = lo; c < hi; c++)
			for (r = plo[q]; r < phi[q]; r++)
				to[(c - lo) * rows + r] = rbuf[k++];
}

static const char *usage_text =
"Usage: %s [OPTIONS]   (under mpirun -np N)\n"
"SPLASH-2-style six-step FFT with MPI (one rank per node).\n"
"  -m, --log2 M        2^M complex points, M even, 2..24 (default 8)\n"
"  -h, --help          this text\n";

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "log2", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	splash_cplx *x, *t, *sbuf, *rbuf, *twr, *all = NULL;
	int opt, q, bad = 0, m = 8, *gcnt = NULL, *gdsp = NULL;
	uint64_t npts, r, c, mine;
	double err = 0;

	while ((opt = getopt_long(argc, argv, "m:h", lopts, NULL)) != -1) {
		switch (opt) {
		case 'm':
			m = (int)splash_num(prog, "--log2", optarg, 2, 24);
			break;
		case 'h':
			mpib_usage(usage_text, prog, 0);
		default:
			mpib_usage(usage_text, prog, 2);
		}
	}
	if (optind < argc)
		mpib_usage(usage_text, prog, 2);
	if (m % 2)
		splash_die(prog, "--log2 %d: the six-step method wants it even", m);
	npts = 1ULL << m;
	rows = 1ULL << (m / 2);

	mpib_init(&argc, &argv);
	plo = calloc(mb.size, sizeof(*plo));
	phi = calloc(mb.size, sizeof(*phi));
	scnt = calloc(mb.size, sizeof(int));
	sdsp = calloc(mb.size, sizeof(int));
	rcnt = calloc(mb.size, sizeof(int));
	rdsp = calloc(mb.size, sizeof(int));
	if (!plo || !phi || !scnt || !sdsp || !rcnt || !rdsp)
		splash_die(prog, "out of memory");
	for (q = 0; q < mb.size; q++)
		splash_part(rows, (unsigned int)mb.size, (unsigned int)q, &plo[q], &phi[q]);
	lo = plo[mb.rank];
	hi = phi[mb.rank];
	mine = (hi - lo) * rows;
	/* counts in doubles: two per point */
	for (q = 0; q < mb.size; q++) {
		scnt[q] = (int)(2 * (hi - lo) * (phi[q] - plo[q]));
		rcnt[q] = scnt[q];
		if (q) {
			sdsp[q] = sdsp[q - 1] + scnt[q - 1];
			rdsp[q] = rdsp[q - 1] + rcnt[q - 1];
		}
	}
	x = malloc((mine + 1) * sizeof(*x));
	t = malloc((mine + 1) * sizeof(*t));
	sbuf = malloc((mine + 1) * sizeof(*sbuf));
	rbuf = malloc((mine + 1) * sizeof(*rbuf));
	tw = malloc(rows / 2 * sizeof(*tw));
	twr = malloc(rows * sizeof(*twr));
	if (!x || !t || !sbuf || !rbuf || !tw || !twr)
		splash_die(prog, "out of memory");
	for (c = 0; c < rows / 2; c++)
		tw[c] = splash_root(c, rows);
	for (r = lo; r < hi; r++)
		for (c = 0; c < rows; c++)
			x[(r - lo) * rows + c] = splash_fft_input(r * rows + c);

	mpib_start();
	transpose(t, x, sbuf, rbuf);
	for (r = lo; r < hi; r++) {
		for (c = 0; c < rows; c++)
			twr[c] = splash_root(r * c, npts);
		fft_row(t + (r - lo) * rows, twr);
	}
	transpose(x, t, sbuf, rbuf);
	for (r = lo; r < hi; r++)
		fft_row(x + (r - lo) * rows, NULL);
	transpose(t, x, sbuf, rbuf);
	if (mb.rank == 0) {
		all = malloc(npts * sizeof(*all));
		gcnt = calloc(mb.size, sizeof(int));
		gdsp = calloc(mb.size, sizeof(int));
		if (!all || !gcnt || !gdsp)
			splash_die(prog, "out of memory");
		for (q = 0; q < mb.size; q++) {
			gcnt[q] = (int)(2 * (phi[q] - plo[q]) * rows);
			gdsp[q] = (int)(2 * plo[q] * rows);
		}
	}
	MPI_Gatherv(t, (int)(2 * mine), MPI_DOUBLE, all, gcnt, gdsp, MPI_DOUBLE, 0,
		    MPI_COMM_WORLD);
	if (mb.rank)
		mpib_count(16 * mine);
	mpib_stop();

	if (mb.rank == 0) {
		if (splash_corrupt())
			all[0].re += 1.0;
		err = splash_fft_check(all, npts);
		bad = !(err < 1e-10);
		printf("RESULT kernel=fft version=mpi tuned=0 nodes=%d n=%llu m=%d ",
		       mb.size, (unsigned long long)npts, m);
	}
	mpib_print();
	if (mb.rank == 0) {
		printf("error=%.3e verify=%s\n", err, bad ? "FAIL" : "ok");
		if (bad)
			fprintf(stderr, "%s: FAIL: max |X - ref| / max |ref| = %g\n", prog, err);
	}
	MPI_Finalize();
	return bad;
}

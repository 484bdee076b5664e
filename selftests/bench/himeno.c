// SPDX-License-Identifier: GPL-2.0
/*
 * himeno - a Himeno-style benchmark: the Jacobi iteration of RIKEN's
 * Himeno benchmark (a 19-point Poisson solver on float arrays, 34 flops
 * per grid point), written here after its published C version, with its
 * data either in ordinary memory or in DLM memory through libdlm.
 *
 *   himeno [-s xs|s|m|l] [-g IxJxK] [-n ITERATIONS] [-m malloc|dlm]
 *          [-c GOSA] [-q] [-- DLM-OPTIONS]
 *
 * -s picks the grid as Himeno does (xs 33x33x65, s 65x65x129,
 * m 129x129x257, l 257x257x513; 14 float arrays: 4.3, 30, 242 and
 * 1910 MB); -g gives any grid of at least 3 points per axis.
 * -m malloc (default) puts the 14 arrays in one anonymous mapping: alone it
 * is the all-local reference, under a cgroup memory.max it is "the same
 * program on swap".  -m dlm puts them in one dlm_alloc() block:
 * dlm_startup() takes the DLM options after "--" (-f MEMFILE,
 * --page-kb=N, ...; see dlm.h), so the memfile's first line is the local
 * budget.
 *
 * The arrays are initialised as Himeno does (a = 1 except a[3] = 1/6,
 * b = 0, c = 1, bnd = 1, p = (i/(I-1))^2), then ITERATIONS Jacobi sweeps
 * run, each over the whole grid and then copying wrk2 back into p.  The
 * time of all sweeps gives MFLOPS as Himeno counts them.  The residual
 * gosa of the last sweep depends only on the grid and the iteration count
 * - the arithmetic is the same in every memory - so -c GOSA (as printed
 * by an earlier run, in C's %a notation) checks it bit for bit; without
 * -c only its being finite is checked.  A sample of p is also checked to
 * lie in [0, 1], where the solver keeps it.
 *
 * Prints one line of key=value; progress to stderr unless -q.  Exit 0,
 * 1 on a wrong value, 2 on a setup error (errno named).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <dlm.h>

#define NARRAYS 14	/* p, a[4], b[3], c[3], bnd, wrk1, wrk2 */

struct grid {
	size_t mi, mj, mk;	/* points per axis */
	float *p, *a[4], *b[3], *c[3], *bnd, *wrk1, *wrk2;
};

#define AT(g, x, i, j, k) ((x)[((i) * (g)->mj + (j)) * (g)->mk + (k)])

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void init(struct grid *g)
{
	size_t i, j, k, n;

	for (i = 0; i < g->mi; i++) {
		float v = (float)(i * i) / (float)((g->mi - 1) * (g->mi - 1));

		for (j = 0; j < g->mj; j++)
			for (k = 0; k < g->mk; k++) {
				AT(g, g->p, i, j, k) = v;
				for (n = 0; n < 3; n++) {
					AT(g, g->a[n], i, j, k) = 1.0f;
					AT(g, g->b[n], i, j, k) = 0.0f;
					AT(g, g->c[n], i, j, k) = 1.0f;
				}
				AT(g, g->a[3], i, j, k) = 1.0f / 6.0f;
				AT(g, g->bnd, i, j, k) = 1.0f;
				AT(g, g->wrk1, i, j, k) = 0.0f;
				AT(g, g->wrk2, i, j, k) = 0.0f;
			}
	}
}

/* One Jacobi sweep, as Himeno's jacobi(); returns gosa. */
static float sweep(struct grid *g)
{
	const float omega = 0.8f;
	float gosa = 0.0f;
	size_t i, j, k;

#define P(di, dj, dk) AT(g, g->p, i + (di), j + (dj), k + (dk))
	for (i = 1; i < g->mi - 1; i++)
		for (j = 1; j < g->mj - 1; j++)
			for (k = 1; k < g->mk - 1; k++) {
				float s0, ss;

				s0 = AT(g, g->a[0], i, j, k) * P(1, 0, 0)
				   + AT(g, g->a[1], i, j, k) * P(0, 1, 0)
				   + AT(g, g->a[2], i, j, k) * P(0, 0, 1)
				   + AT(g, g->b[0], i, j, k) *
				     (P(1, 1, 0) - P(1, -1, 0) - P(-1, 1, 0) + P(-1, -1, 0))
				   + AT(g, g->b[1], i, j, k) *
				     (P(0, 1, 1) - P(0, -1, 1) - P(0, 1, -1) + P(0, -1, -1))
				   + AT(g, g->b[2], i, j, k) *
				     (P(1, 0, 1) - P(-1, 0, 1) - P(1, 0, -1) + P(-1, 0, -1))
				   + AT(g, g->c[0], i, j, k) * P(-1, 0, 0)
				   + AT(g, g->c[1], i, j, k) * P(0, -1, 0)
				   + AT(g, g->c[2], i, j, k) * P(0, 0, -1)
				   + AT(g, g->wrk1, i, j, k);
				ss = (s0 * AT(g, g->a[3], i, j, k) - P(0, 0, 0)) *
				     AT(g, g->bnd, i, j, k);
				gosa += ss * ss;
				AT(g, g->wrk2, i, j, k) = P(0, 0, 0) + omega * ss;
			}
#undef P
	for (i = 1; i < g->mi - 1; i++)
		for (j = 1; j < g->mj - 1; j++)
			for (k = 1; k < g->mk - 1; k++)
				AT(g, g->p, i, j, k) = AT(g, g->wrk2, i, j, k);
	return gosa;
}

static int parse_size(const char *s, size_t *mi, size_t *mj, size_t *mk)
{
	static const struct { const char *name; size_t i, j, k; } sizes[] = {
		{ "xs", 33, 33, 65 }, { "s", 65, 65, 129 },
		{ "m", 129, 129, 257 }, { "l", 257, 257, 513 },
	};
	unsigned long long i, j, k;
	size_t n;
	char end;

	for (n = 0; n < sizeof(sizes) / sizeof(sizes[0]); n++)
		if (!strcasecmp(s, sizes[n].name)) {
			*mi = sizes[n].i;
			*mj = sizes[n].j;
			*mk = sizes[n].k;
			return 0;
		}
	if (sscanf(s, "%llux%llux%llu%c", &i, &j, &k, &end) != 3 ||
	    i < 3 || j < 3 || k < 3 || i > 1 << 16 || j > 1 << 16 || k > 1 << 16)
		return -1;
	*mi = i;
	*mj = j;
	*mk = k;
	return 0;
}

static const struct option help_opt[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static void usage(FILE *f)
{
	fprintf(f, "usage: himeno [-s xs|s|m|l] [-g IxJxK] [-n ITERATIONS] [-m malloc|dlm]\n"
		   "              [-c GOSA] [-q] [-- DLM-OPTIONS]\n"
		   "DLM-OPTIONS (with -m dlm) as for dlm_startup(): -f MEMFILE, --page-kb=N, ...\n");
}

int main(int argc, char **argv)
{
	struct grid g = { 0 };
	const char *mode = "malloc", *check = NULL;
	unsigned int iters = 3, it, quiet = 0, bad = 0;
	size_t n, npts, bytes;
	double t, tinit, trun = 0, flops;
	float gosa = 0.0f, *base;
	int opt;

	parse_size("s", &g.mi, &g.mj, &g.mk);
	/* "+": stop at the first non-option, so "--" and the DLM options stay. */
	while ((opt = getopt_long(argc, argv, "+s:g:n:m:c:qh", help_opt,
				  NULL)) != -1) {
		switch (opt) {
		case 's':
		case 'g':
			if (parse_size(optarg, &g.mi, &g.mj, &g.mk)) {
				fprintf(stderr, "himeno: bad size '%s' (xs, s, m, l or IxJxK, each >= 3)\n",
					optarg);
				return 2;
			}
			break;
		case 'n': iters = (unsigned int)atoi(optarg); break;
		case 'm': mode = optarg; break;
		case 'c': check = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!iters || (strcmp(mode, "malloc") && strcmp(mode, "dlm"))) {
		usage(stderr);
		return 2;
	}
	npts = g.mi * g.mj * g.mk;
	bytes = NARRAYS * npts * sizeof(float);
	if (!strcmp(mode, "dlm")) {
		if (dlm_startup(&argc, &argv))
			return 2;	/* libdlm said why */
		base = dlm_alloc(bytes);
		if (!base) {
			fprintf(stderr, "himeno: dlm_alloc(%zu): %s\n", bytes,
				dlm_last_error());
			return 2;
		}
	} else {
		base = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (base == MAP_FAILED) {
			fprintf(stderr, "himeno: mmap %zu bytes: %s\n", bytes,
				strerror(errno));
			return 2;
		}
	}
	g.p = base;
	for (n = 0; n < 4; n++)
		g.a[n] = base + (1 + n) * npts;
	for (n = 0; n < 3; n++) {
		g.b[n] = base + (5 + n) * npts;
		g.c[n] = base + (8 + n) * npts;
	}
	g.bnd = base + 11 * npts;
	g.wrk1 = base + 12 * npts;
	g.wrk2 = base + 13 * npts;

	t = now();
	init(&g);
	tinit = now() - t;
	for (it = 0; it < iters; it++) {
		double ts = now();

		gosa = sweep(&g);
		ts = now() - ts;
		trun += ts;
		if (!quiet)
			fprintf(stderr, "himeno: %s: sweep %u/%u: %.2f s, gosa %g\n",
				mode, it + 1, iters, ts, gosa);
	}
	flops = 34.0 * (double)(g.mi - 2) * (double)(g.mj - 2) *
		(double)(g.mk - 2) * iters;

	if (!isfinite(gosa))
		bad++;
	if (check && strtof(check, NULL) != gosa)
		bad++;
	for (n = 0; n < npts; n += 4099)
		bad += !(g.p[n] >= 0.0f && g.p[n] <= 1.0f);

	printf("mode=%s grid=%zux%zux%zu data_mb=%.3f iterations=%u init_s=%.3f run_s=%.3f mflops=%.1f gosa=%a bad=%u\n",
	       mode, g.mi, g.mj, g.mk, bytes / 1048576.0, iters, tinit, trun,
	       flops / trun / 1e6, gosa, bad);
	if (!strcmp(mode, "dlm"))
		dlm_shutdown();
	return bad ? 1 : 0;
}

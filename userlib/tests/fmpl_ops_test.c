// SPDX-License-Identifier: GPL-2.0
/*
 * fmpl_ops_test - libfmpl's predefined reductions (through libfmpl.a, no
 * kernel needed): for every type (i, s, d, c, z) and every op (sum, max,
 * min), inout[k] = inout[k] op in[k] against values worked out by hand;
 * element sizes; complex max/min by modulus with ties keeping inout;
 * integer sums wrapping; n = 0 touching nothing; and the reduction of 7
 * "ranks" in tree order equal to the sequential one.
 */
#include <complex.h>
#include <limits.h>
#include <string.h>

#include "kselftest_harness.h"
#include <fmpl.h>

TEST(element_sizes)
{
	ASSERT_EQ(sizeof(int), fmpl_isum.elem_size);
	ASSERT_EQ(sizeof(int), fmpl_imax.elem_size);
	ASSERT_EQ(sizeof(int), fmpl_imin.elem_size);
	ASSERT_EQ(sizeof(float), fmpl_ssum.elem_size);
	ASSERT_EQ(sizeof(float), fmpl_smax.elem_size);
	ASSERT_EQ(sizeof(float), fmpl_smin.elem_size);
	ASSERT_EQ(sizeof(double), fmpl_dsum.elem_size);
	ASSERT_EQ(sizeof(double), fmpl_dmax.elem_size);
	ASSERT_EQ(sizeof(double), fmpl_dmin.elem_size);
	ASSERT_EQ(sizeof(float complex), fmpl_csum.elem_size);
	ASSERT_EQ(sizeof(float complex), fmpl_cmax.elem_size);
	ASSERT_EQ(sizeof(float complex), fmpl_cmin.elem_size);
	ASSERT_EQ(sizeof(double complex), fmpl_zsum.elem_size);
	ASSERT_EQ(sizeof(double complex), fmpl_zmax.elem_size);
	ASSERT_EQ(sizeof(double complex), fmpl_zmin.elem_size);
}

TEST(int_sum_max_min)
{
	const int in[6] = { 1, -5, 7, INT_MAX, INT_MIN, 0 };
	const int start[6] = { 2, 3, -7, 1, -1, 0 };
	const int sum[6] = { 3, -2, 0, INT_MIN, INT_MAX, 0 };	/* wraps */
	const int max[6] = { 2, 3, 7, INT_MAX, -1, 0 };
	const int min[6] = { 1, -5, -7, 1, INT_MIN, 0 };
	int a[6];

	memcpy(a, start, sizeof(a));
	fmpl_isum.fn(a, in, 6);
	ASSERT_EQ(0, memcmp(a, sum, sizeof(a)));
	memcpy(a, start, sizeof(a));
	fmpl_imax.fn(a, in, 6);
	ASSERT_EQ(0, memcmp(a, max, sizeof(a)));
	memcpy(a, start, sizeof(a));
	fmpl_imin.fn(a, in, 6);
	ASSERT_EQ(0, memcmp(a, min, sizeof(a)));
}

TEST(float_sum_max_min)
{
	const float in[4] = { 0.5f, -2.25f, 1e30f, -0.0f };
	const float start[4] = { 0.25f, 4.0f, 1e30f, 3.0f };
	const float sum[4] = { 0.75f, 1.75f, 2e30f, 3.0f };
	const float max[4] = { 0.5f, 4.0f, 1e30f, 3.0f };
	const float min[4] = { 0.25f, -2.25f, 1e30f, -0.0f };
	float a[4];
	int i;

	memcpy(a, start, sizeof(a));
	fmpl_ssum.fn(a, in, 4);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(sum[i], a[i]);
	memcpy(a, start, sizeof(a));
	fmpl_smax.fn(a, in, 4);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(max[i], a[i]);
	memcpy(a, start, sizeof(a));
	fmpl_smin.fn(a, in, 4);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(min[i], a[i]);
}

TEST(double_sum_max_min)
{
	const double in[4] = { 0.125, -1e300, 3.5, -7.0 };
	const double start[4] = { 0.375, 1e300, -3.5, -8.0 };
	const double sum[4] = { 0.5, 0.0, 0.0, -15.0 };
	const double max[4] = { 0.375, 1e300, 3.5, -7.0 };
	const double min[4] = { 0.125, -1e300, -3.5, -8.0 };
	double a[4];
	int i;

	memcpy(a, start, sizeof(a));
	fmpl_dsum.fn(a, in, 4);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(sum[i], a[i]);
	memcpy(a, start, sizeof(a));
	fmpl_dmax.fn(a, in, 4);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(max[i], a[i]);
	memcpy(a, start, sizeof(a));
	fmpl_dmin.fn(a, in, 4);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(min[i], a[i]);
}

/*
 * Complex: sums add both parts; max/min compare moduli:
 * |3+4i| = 5 < |-6| = 6; |0.5i| = 0.5 > |0.25| ; ties (|5| = |3+4i|,
 * |-1| = |i|) keep inout.
 */
#define CPLX_CASES(T, I)						\
	const T in[4] = { -6.0 + 0 * I, 0.25 + 0 * I, 5.0 + 0 * I, 1.0 * I }; \
	const T start[4] = { 3.0 + 4.0 * I, 0.5 * I, 3.0 + 4.0 * I, -1.0 + 0 * I }; \
	const T sum[4] = { -3.0 + 4.0 * I, 0.25 + 0.5 * I, 8.0 + 4.0 * I, -1.0 + 1.0 * I }; \
	const T max[4] = { -6.0 + 0 * I, 0.5 * I, 3.0 + 4.0 * I, -1.0 + 0 * I }; \
	const T min[4] = { 3.0 + 4.0 * I, 0.25 + 0 * I, 3.0 + 4.0 * I, -1.0 + 0 * I }; \
	T a[4];								\
	int i

#define CPLX_CHECK(T, SUM, MAX, MIN) do {				\
	memcpy(a, start, sizeof(a));					\
	SUM.fn(a, in, 4);						\
	for (i = 0; i < 4; i++) {					\
		ASSERT_EQ(creal(sum[i]), creal(a[i]));			\
		ASSERT_EQ(cimag(sum[i]), cimag(a[i]));			\
	}								\
	memcpy(a, start, sizeof(a));					\
	MAX.fn(a, in, 4);						\
	for (i = 0; i < 4; i++) {					\
		ASSERT_EQ(creal(max[i]), creal(a[i]));			\
		ASSERT_EQ(cimag(max[i]), cimag(a[i]));			\
	}								\
	memcpy(a, start, sizeof(a));					\
	MIN.fn(a, in, 4);						\
	for (i = 0; i < 4; i++) {					\
		ASSERT_EQ(creal(min[i]), creal(a[i]));			\
		ASSERT_EQ(cimag(min[i]), cimag(a[i]));			\
	}								\
} while (0)

TEST(float_complex_sum_max_min_by_modulus)
{
	CPLX_CASES(float complex, _Complex_I);

	CPLX_CHECK(float complex, fmpl_csum, fmpl_cmax, fmpl_cmin);
}

TEST(double_complex_sum_max_min_by_modulus)
{
	CPLX_CASES(double complex, _Complex_I);

	CPLX_CHECK(double complex, fmpl_zsum, fmpl_zmax, fmpl_zmin);
}

TEST(zero_elements_touch_nothing)
{
	const fmpl_op *ops[] = {
		&fmpl_isum, &fmpl_ssum, &fmpl_dsum, &fmpl_csum, &fmpl_zsum,
		&fmpl_imax, &fmpl_smax, &fmpl_dmax, &fmpl_cmax, &fmpl_zmax,
		&fmpl_imin, &fmpl_smin, &fmpl_dmin, &fmpl_cmin, &fmpl_zmin,
	};
	unsigned char a[32], b[32], ref[32];
	size_t k;

	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		memset(a, 0x5a, sizeof(a));
		memset(b, 0x11, sizeof(b));
		memcpy(ref, a, sizeof(a));
		ops[k]->fn(a, b, 0);
		ASSERT_EQ(0, memcmp(a, ref, sizeof(a)));
	}
}

/*
 * The tree of libfmpl's reduce over 7 ranks (relative rank v combines its
 * children 2v+1 and 2v+2 into its own value, then sends up) gives the same
 * sums, maxima and minima as a sequential loop (integers: exactly).
 */
static void tree(const fmpl_op *op, int *v, int n, int node)
{
	int ch;

	for (ch = 2 * node + 1; ch <= 2 * node + 2 && ch < n; ch++) {
		tree(op, v, n, ch);
		op->fn(&v[node * 3], &v[ch * 3], 3);
	}
}

TEST(tree_order_equals_sequential)
{
	int v[7 * 3], ref_sum[3] = { 0 }, ref_max[3], ref_min[3];
	int r, k;

	for (k = 0; k < 3; k++) {
		ref_max[k] = INT_MIN;
		ref_min[k] = INT_MAX;
	}
	for (r = 0; r < 7; r++) {
		for (k = 0; k < 3; k++) {
			int x = (r * 37 + k * 11) % 23 - 9;

			ref_sum[k] += x;
			ref_max[k] = x > ref_max[k] ? x : ref_max[k];
			ref_min[k] = x < ref_min[k] ? x : ref_min[k];
		}
	}
#define RUN(OP, REF) do {						\
	for (r = 0; r < 7; r++)						\
		for (k = 0; k < 3; k++)					\
			v[r * 3 + k] = (r * 37 + k * 11) % 23 - 9;	\
	tree(&OP, v, 7, 0);						\
	ASSERT_EQ(0, memcmp(v, REF, sizeof(REF)));			\
} while (0)
	RUN(fmpl_isum, ref_sum);
	RUN(fmpl_imax, ref_max);
	RUN(fmpl_imin, ref_min);
}

TEST_HARNESS_MAIN
